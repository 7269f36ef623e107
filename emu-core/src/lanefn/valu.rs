//! Vector ALU operations ([`ValuOp`]) of up to three 32-bit sources as the CDNA ISA guides define them.

use super::division::round_to_odd_sum;
use super::f16::{f16_to_f64, f32_to_f16_rtz, norm16};
use super::fp8::f32_to_f8;

/// Vector ALU operations as the CDNA ISA guides define them, each of up to three 32-bit sources (S0, S1, S2)
/// to one 32-bit result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValuOp {
    /// !(S0 ^ S1).
    Xnor,
    /// S2 + the sum over the four bytes of |S0 byte - S1 byte|.
    SadU8,
    /// S2 + (SadU8 of S0 and S1) << 16.
    SadHiU8,
    /// S2 + the sum over the two halves of |S0 half - S1 half|.
    SadU16,
    /// S2 + |S0 - S1| (unsigned).
    SadU32,
    /// SadU8 over the bytes whose S1 byte (the reference) is not 0.
    MsadU8,
    /// Per byte: (S0 byte + S1 byte + bit 0 of the S2 byte) >> 1.
    LerpU8,
    /// S0[15:0] * S1[15:0] + S2, unsigned or (`signed`) signed.
    Mad32x16 {
        signed: bool,
    },
    /// The low dword of {S0, S1} >> (8 * S2[1:0]).
    Alignbyte,
    /// (int) floor(S0) and (int) floor(S0 + 0.5), saturated, NaN to 0.
    CvtFlrI32F32,
    CvtRpiI32F32,
    /// The signed 4-bit S0[3:0] / 16 as an f32 (v_cvt_off_f32_i4).
    CvtOffF32I4,
    /// S2 with byte S1[1:0] replaced by S0 converted to u8 (rounded to nearest even, saturated, NaN to 0).
    CvtPkU8F32,
    /// {S1, S0} each saturated to 16 bits, signed or unsigned.
    CvtPk16 {
        signed: bool,
    },
    /// {S1, S0} each rounded toward zero to f16.
    CvtPkrtzF16F32,
    /// Cube map face id, major axis * 2, s and t coordinates of the direction (S0, S1, S2) = (x, y, z).
    Cubeid,
    Cubema,
    Cubesc,
    Cubetc,
    /// S0 * S1 with 0 * anything = +0 (DX9 rules).
    MulLegacyF32,
    /// The legacy product rounded to f32, then + S2 rounded (not fused).
    MadLegacyF32,
    /// S2 + the dot product of S0 and S1 as 16-, 8- or 4-bit elements (`bits`), signed or unsigned (S2 too),
    /// wrapping, or with `clamp` (VOP3P's clamp bit) saturated to the 32-bit range of that signedness.
    Dot {
        bits: u8,
        signed: bool,
        clamp: bool,
    },
    /// The two signed halves of S0, each saturated to u8, in the low two bytes.
    SatPkU8I16,
    /// A mask of S0[4:0] ones shifted left by S1[4:0] (v_bfm_b32).
    Bfm,
    /// S0 + S1 and S0 - S1, wrapping (v_add_i32, v_sub_i32 without clamp).
    AddI32,
    SubI32,
    /// Three-source min, max and median of the low 16 bits, signed or unsigned, zero-extended.
    Min3_16 {
        signed: bool,
    },
    Max3_16 {
        signed: bool,
    },
    Med3_16 {
        signed: bool,
    },
    /// Byte 0 of S0 as a gfx942 8-bit float (E4M3, bias 8) or (`bf8`) "brain" float (E5M2, bias 16), to f32
    /// (exact; 0x80 is NaN).
    CvtF32F8 {
        bf8: bool,
    },
    /// {S1, S0} as normalized 16-bit integers ([`norm16`]) of two f32s (v_cvt_pknorm_i16_f32, _u16_f32) or
    /// (`half`) of the f16s in their low halves.
    CvtPkNorm {
        signed: bool,
        half: bool,
    },
    /// 2^S0 of an f32, 0 below -126 and for NaN (v_exp_legacy_f32).
    ExpLegacyF32,
    /// log2 S0 of an f32 with subnormal inputs taken as 0 (so -inf), a negative input giving -NaN
    /// (v_log_legacy_f32).
    LogLegacyF32,
    /// S2 (f32) + S0.f16[0] * S1.f16[0] + S0.f16[1] * S1.f16[1], rounded once to f32 (v_dot2_f32_f16).
    Dot2F32F16,
    /// {S1, S0} each rounded to nearest even to gfx942's 8-bit float (E4M3, bias 8) or (`bf8`) E5M2 (bias 16),
    /// in the low 16 bits ([`f32_to_f8`]).
    CvtPkF8 {
        bf8: bool,
    },
    /// S0 rounded stochastically to an 8-bit float with the random bits S1 ([`f32_to_f8`]), in the low byte.
    CvtSrF8 {
        bf8: bool,
    },
}

impl ValuOp {
    pub(super) fn arity(self) -> usize {
        use ValuOp::*;
        match self {
            CvtFlrI32F32 | CvtRpiI32F32 | CvtOffF32I4 | SatPkU8I16 | CvtF32F8 { .. } | ExpLegacyF32 | LogLegacyF32 => 1,
            Xnor
            | CvtPk16 { .. }
            | CvtPkrtzF16F32
            | MulLegacyF32
            | Bfm
            | AddI32
            | SubI32
            | CvtPkNorm { .. }
            | CvtPkF8 { .. }
            | CvtSrF8 { .. } => 2,
            _ => 3,
        }
    }
    pub(super) fn eval(self, x: &[u32]) -> u32 {
        use ValuOp::*;
        let f = |i: usize| f32::from_bits(x[i]);
        let byte = |v: u32, i: u32| v >> (8 * i) & 0xff;
        let sad8 = |a: u32, b: u32, masked: bool| {
            (0..4)
                .filter(|&i| !masked || byte(b, i) != 0)
                .map(|i| byte(a, i).abs_diff(byte(b, i)))
                .sum::<u32>()
        };
        // cube map: the major axis is z if |z| >= |x|, |y|; else y if |y| >= |x|; else x
        let major = || {
            let (ax, ay, az) = (f(0).abs(), f(1).abs(), f(2).abs());
            if az >= ax && az >= ay {
                2
            } else if ay >= ax {
                1
            } else {
                0
            }
        };
        let legacy_mul = |a: f32, b: f32| if a == 0.0 || b == 0.0 { 0.0 } else { a * b };
        match self {
            Xnor => !(x[0] ^ x[1]),
            SadU8 => sad8(x[0], x[1], false).wrapping_add(x[2]),
            SadHiU8 => (sad8(x[0], x[1], false) << 16).wrapping_add(x[2]),
            SadU16 => ((x[0] & 0xffff).abs_diff(x[1] & 0xffff) + (x[0] >> 16).abs_diff(x[1] >> 16)).wrapping_add(x[2]),
            SadU32 => x[0].abs_diff(x[1]).wrapping_add(x[2]),
            MsadU8 => sad8(x[0], x[1], true).wrapping_add(x[2]),
            LerpU8 => (0..4)
                .map(|i| ((byte(x[0], i) + byte(x[1], i) + (byte(x[2], i) & 1)) >> 1) << (8 * i))
                .fold(0, |a, b| a | b),
            Mad32x16 { signed: false } => (x[0] & 0xffff).wrapping_mul(x[1] & 0xffff).wrapping_add(x[2]),
            Mad32x16 { signed: true } => {
                ((x[0] as i16 as i32).wrapping_mul(x[1] as i16 as i32) as u32).wrapping_add(x[2])
            }
            Alignbyte => (((x[0] as u64) << 32 | x[1] as u64) >> (8 * (x[2] & 3))) as u32,
            CvtFlrI32F32 => f(0).floor() as i32 as u32,
            CvtRpiI32F32 => (f(0) + 0.5).floor() as i32 as u32,
            CvtOffF32I4 => (((x[0] << 28) as i32 >> 28) as f32 / 16.0).to_bits(),
            CvtPkU8F32 => {
                let sh = 8 * (x[1] & 3);
                let v = f(0).round_ties_even().clamp(0.0, 255.0) as u32; // NaN casts to 0
                x[2] & !(0xff << sh) | v << sh
            }
            CvtPk16 { signed: true } => {
                (x[0] as i32).clamp(-32768, 32767) as u32 & 0xffff | ((x[1] as i32).clamp(-32768, 32767) as u32) << 16
            }
            CvtPk16 { signed: false } => x[0].min(0xffff) | x[1].min(0xffff) << 16,
            CvtPkrtzF16F32 => f32_to_f16_rtz(f(0)) as u32 | (f32_to_f16_rtz(f(1)) as u32) << 16,
            Cubeid => (match major() {
                2 => {
                    if f(2) < 0.0 {
                        5.0f32
                    } else {
                        4.0
                    }
                }
                1 => {
                    if f(1) < 0.0 {
                        3.0
                    } else {
                        2.0
                    }
                }
                _ => {
                    if f(0) < 0.0 {
                        1.0
                    } else {
                        0.0
                    }
                }
            })
            .to_bits(),
            Cubema => (2.0 * [f(0), f(1), f(2)][major()]).to_bits(),
            Cubesc => (match major() {
                2 => {
                    if f(2) < 0.0 {
                        -f(0)
                    } else {
                        f(0)
                    }
                }
                1 => f(0),
                _ => {
                    if f(0) < 0.0 {
                        f(2)
                    } else {
                        -f(2)
                    }
                }
            })
            .to_bits(),
            Cubetc => (match major() {
                1 => {
                    if f(1) < 0.0 {
                        -f(2)
                    } else {
                        f(2)
                    }
                }
                _ => -f(1),
            })
            .to_bits(),
            MulLegacyF32 => legacy_mul(f(0), f(1)).to_bits(),
            MadLegacyF32 => (legacy_mul(f(0), f(1)) + f(2)).to_bits(),
            Dot { bits, signed, clamp } => {
                let n = 32 / bits as u32;
                let elem = |v: u32, i: u32| -> i64 {
                    let e = (v >> (bits as u32 * i)) & ((1u64 << bits) - 1) as u32;
                    if signed {
                        ((e << (32 - bits as u32)) as i32 >> (32 - bits as u32)) as i64
                    } else {
                        e as i64
                    }
                };
                let sum: i64 = (0..n).map(|i| elem(x[0], i) * elem(x[1], i)).sum();
                match (clamp, signed) {
                    (false, _) => (sum as u32).wrapping_add(x[2]),
                    (true, true) => (sum + x[2] as i32 as i64).clamp(i32::MIN as i64, i32::MAX as i64) as u32,
                    (true, false) => (sum + x[2] as i64).clamp(0, u32::MAX as i64) as u32,
                }
            }
            SatPkU8I16 => {
                let sat = |h: u32| (h as u16 as i16).clamp(0, 255) as u32;
                sat(x[0] & 0xffff) | sat(x[0] >> 16) << 8
            }
            Bfm => (((1u64 << (x[0] & 31)) - 1) as u32) << (x[1] & 31),
            AddI32 => x[0].wrapping_add(x[1]),
            SubI32 => x[0].wrapping_sub(x[1]),
            Min3_16 { signed } | Max3_16 { signed } | Med3_16 { signed } => {
                let v = |i: usize| {
                    if signed {
                        x[i] as u16 as i16 as i64
                    } else {
                        x[i] as u16 as i64
                    }
                };
                let (a, b, c) = (v(0), v(1), v(2));
                let r = match self {
                    Min3_16 { .. } => a.min(b).min(c),
                    Max3_16 { .. } => a.max(b).max(c),
                    _ => a.max(b).min(a.min(b).max(c)),
                };
                r as u32 & 0xffff
            }
            CvtF32F8 { bf8 } => {
                (crate::sem::mfma::f8_to_f64(x[0] as u8, if bf8 { 2 } else { 3 }, if bf8 { 16 } else { 8 }) as f32)
                    .to_bits()
            }
            CvtPkNorm { signed, half } => {
                let v = |w: u32| {
                    if half {
                        f16_to_f64(w as u16)
                    } else {
                        f32::from_bits(w) as f64
                    }
                };
                norm16(v(x[0]), signed) | norm16(v(x[1]), signed) << 16
            }
            // CLRX's description of the GCN instruction (the ISA guides give no special cases): 2^x for
            // x >= -126, else 0
            ExpLegacyF32 => {
                if f(0) >= -126.0 {
                    f(0).exp2().to_bits()
                } else {
                    0
                }
            }
            // CLRX's description: log2 without subnormal inputs; 1 gives +0, a negative input -NaN
            LogLegacyF32 => {
                let v = if f(0).is_subnormal() {
                    0.0f32.copysign(f(0))
                } else {
                    f(0)
                };
                if v < 0.0 {
                    0xffc0_0000
                } else {
                    v.log2().to_bits()
                }
            }
            Dot2F32F16 => {
                let h = |w: u32, i: u32| f16_to_f64((w >> (16 * i)) as u16);
                // each product of two f16s is exact in f64; their sum rounds in f64 only when the products lie
                // more than 31 bits apart; the sum with S2 rounds to odd in f64, then once to f32 (the hardware's
                // internal rounding is not modelled bit for bit beyond that)
                let p = h(x[0], 0) * h(x[1], 0) + h(x[0], 1) * h(x[1], 1);
                (round_to_odd_sum(p, f(2) as f64) as f32).to_bits()
            }
            CvtPkF8 { bf8 } => f32_to_f8(f(0), bf8, None) as u32 | (f32_to_f8(f(1), bf8, None) as u32) << 8,
            CvtSrF8 { bf8 } => f32_to_f8(f(0), bf8, Some(x[1])) as u32,
        }
    }
}
