//! Per-lane helper functions: the operations too intricate to spell out in backend primitives (IEEE division
//! steps, 16-bit float and integer arithmetic, f64 rounding and classification, the 2/pi table of
//! `v_trig_preop_f64`). Each is a pure function of a lane's 32-bit inputs; the interpreter calls it for every
//! lane, and the JIT calls the same function, so there is one definition of each.
//!
//! Inputs and outputs are 32-bit register values: a 64-bit operand is two inputs (low, high), a 16-bit
//! operand is the low half of one input, a flag (VCC bit) is 0 or 1.

use crate::rules::{max_num64 as max_num, min_num64 as min_num, Lane, LaneAlgebra};

/// A per-lane helper function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneFn {
    /// (value, denominator, numerator) -> (scaled value, VCC bit): the pre-scaling step of IEEE division.
    DivScaleF32,
    /// (a, b, c, VCC bit) -> fma(a, b, c), scaled back by 2^±64 when VCC is set.
    DivFmasF32,
    /// (quotient, denominator, numerator) -> the quotient with special cases (0, inf, NaN) fixed up.
    DivFixupF32,
    /// 64-bit forms of the three above; each f64 operand is two inputs, the f64 result two outputs.
    DivScaleF64,
    DivFmasF64,
    DivFixupF64,
    /// (x lo, x hi, segment) -> 53 bits of 2/pi for Payne-Hanek reduction of x.
    TrigPreopF64,
    /// Unary f64 operations: x -> f(x).
    F64Un(Unary64),
    /// f64 min/max (IEEE minNum/maxNum: a NaN operand yields the other).
    MinF64,
    MaxF64,
    /// f16 operations on the low halves of the inputs; results are zero-extended to 32 bits.
    F16(F16Op),
    /// f16 -> f32 (exact).
    F16ToF32,
    /// (a, b, c) f32 -> fma rounded once to f16 (v_fma_mixlo/hi_f16).
    FmaF32ToF16,
    /// 32-bit operations of up to three sources.
    Word(WordOp),
    /// Bit counting and field extraction (scalar and vector).
    Bits(BitOp),
    /// 16-bit integer operations, results zero-extended.
    I16(I16Op),
    /// Scalar ALU bit and integer operations (bit counts, bit sets, masks, packs, sign extensions).
    Salu(SaluOp),
    /// Vector ALU operations of up to three 32-bit sources: sums of absolute differences, dot products,
    /// packing conversions, cube map coordinates, legacy multiplies.
    Valu(ValuOp),
    /// Four sums of absolute differences of the reference S1 against the byte windows of the 64-bit S0 that
    /// start at bytes 0..3, each plus its accumulator of S2 (v_qsad_pk_u16_u8, v_mqsad_pk_u16_u8,
    /// v_mqsad_u32_u8): inputs S0 (lo, hi), S1, then S2 (two registers of four 16-bit accumulators, or with
    /// `wide` four 32-bit ones); outputs the four results packed the same way. `masked` skips the bytes whose
    /// reference byte is 0 (v_msad_u8). 16-bit results keep their low 16 bits.
    QuadSad {
        masked: bool,
        wide: bool,
    },
}

/// 32-bit lane operations (three-source min/max/median, byte permute, 24-bit high products, byte to float).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordOp {
    /// Bytes of {a, b} (a the high dword) chosen by the selector bytes of c (v_perm_b32).
    Perm,
    Min3F32,
    Max3F32,
    Med3F32,
    Min3I32,
    Max3I32,
    Med3I32,
    Min3U32,
    Max3U32,
    Med3U32,
    /// High 32 bits of the 48-bit product of the low 24 bits, unsigned or signed.
    MulHiU32U24,
    MulHiI32I24,
    /// Byte n of a as an f32.
    CvtF32Ubyte(u8),
}

impl WordOp {
    fn arity(self) -> usize {
        use WordOp::*;
        match self {
            CvtF32Ubyte(_) => 1,
            MulHiU32U24 | MulHiI32I24 => 2,
            _ => 3,
        }
    }
    fn eval(self, x: &[u32]) -> u32 {
        use WordOp::*;
        let fl = |i: usize| f32::from_bits(x[i]) as f64;
        let med = |a: i64, b: i64, c: i64| a.max(b).min(a.min(b).max(c));
        match self {
            Perm => {
                let v = (x[0] as u64) << 32 | x[1] as u64;
                let byte = |sel: u32| -> u32 {
                    let sign = |bit: u32| if v >> bit & 1 == 1 { 0xff } else { 0 };
                    match sel {
                        0..=7 => (v >> (8 * sel) & 0xff) as u32,
                        8 => sign(15),
                        9 => sign(31),
                        10 => sign(47),
                        11 => sign(63),
                        12 => 0,
                        _ => 0xff,
                    }
                };
                (0..4)
                    .map(|i| byte(x[2] >> (8 * i) & 0xff) << (8 * i))
                    .fold(0, |a, b| a | b)
            }
            Min3F32 => (min_num(min_num(fl(0), fl(1)), fl(2)) as f32).to_bits(),
            Max3F32 => (max_num(max_num(fl(0), fl(1)), fl(2)) as f32).to_bits(),
            Med3F32 => {
                let (a, b, c) = (fl(0), fl(1), fl(2));
                let m = if a.is_nan() || b.is_nan() || c.is_nan() {
                    min_num(min_num(a, b), c)
                } else {
                    max_num(min_num(a, b), min_num(max_num(a, b), c))
                };
                (m as f32).to_bits()
            }
            Min3I32 => (x[0] as i32).min(x[1] as i32).min(x[2] as i32) as u32,
            Max3I32 => (x[0] as i32).max(x[1] as i32).max(x[2] as i32) as u32,
            Med3I32 => med(x[0] as i32 as i64, x[1] as i32 as i64, x[2] as i32 as i64) as u32,
            Min3U32 => x[0].min(x[1]).min(x[2]),
            Max3U32 => x[0].max(x[1]).max(x[2]),
            Med3U32 => med(x[0] as i64, x[1] as i64, x[2] as i64) as u32,
            MulHiU32U24 => (((x[0] as u64 & 0xff_ffff) * (x[1] as u64 & 0xff_ffff)) >> 32) as u32,
            MulHiI32I24 => {
                let s = |v: u32| ((v << 8) as i32 >> 8) as i64;
                ((s(x[0]) * s(x[1])) >> 32) as u32
            }
            CvtF32Ubyte(n) => ((x[0] >> (8 * n as u32) & 0xff) as f32).to_bits(),
        }
    }
}

/// Bit counting and field extraction; 64-bit operands are (lo, hi) inputs/outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    /// Leading zeros of a u32, -1 for 0 (s_flbit_i32_b32, v_ffbh_u32).
    Clz32,
    /// Leading bits equal to the sign bit, -1 for 0 and -1 (s_flbit_i32, v_ffbh_i32).
    Cls32,
    Clz64,
    Cls64,
    /// Trailing zeros of a u64, -1 for 0 (s_ff1_i32_b64).
    Ctz64,
    /// Field of a u64 (lo, hi, control: offset bits 5:0, width bits 22:16), zero- or sign-extended.
    Bfe64 {
        signed: bool,
    },
    /// Field of a u32 (value, control), sign-extended (s_bfe_i32).
    BfeI32,
}

impl BitOp {
    fn arity(self) -> usize {
        match self {
            BitOp::Clz32 | BitOp::Cls32 => 1,
            BitOp::Clz64 | BitOp::Cls64 | BitOp::Ctz64 | BitOp::BfeI32 => 2,
            BitOp::Bfe64 { .. } => 3,
        }
    }
    fn eval(self, x: &[u32], out: &mut [u32]) {
        let w = |lo: u32, hi: u32| (hi as u64) << 32 | lo as u64;
        let count = |n: u32, bits: u32| if n >= bits { u32::MAX } else { n };
        match self {
            BitOp::Clz32 => out[0] = count(x[0].leading_zeros(), 32),
            BitOp::Cls32 => {
                let v = x[0] as i32;
                out[0] = if v == 0 || v == -1 {
                    u32::MAX
                } else {
                    (if v < 0 { !v } else { v }).leading_zeros()
                }
            }
            BitOp::Clz64 => out[0] = count(w(x[0], x[1]).leading_zeros(), 64),
            BitOp::Cls64 => {
                let v = w(x[0], x[1]) as i64;
                out[0] = if v == 0 || v == -1 {
                    u32::MAX
                } else {
                    (if v < 0 { !v } else { v }).leading_zeros()
                }
            }
            BitOp::Ctz64 => out[0] = count(w(x[0], x[1]).trailing_zeros(), 64),
            BitOp::Bfe64 { signed } => {
                let (v, ctl) = (w(x[0], x[1]), x[2]);
                let (off, width) = (ctl & 63, (ctl >> 16 & 0x7f).min(64));
                let r = if width == 0 {
                    0
                } else {
                    let field = v >> off;
                    let sh = 64 - width;
                    if signed {
                        (((field << sh) as i64) >> sh) as u64
                    } else {
                        (field << sh) >> sh
                    }
                };
                out[0] = r as u32;
                out[1] = (r >> 32) as u32;
            }
            BitOp::BfeI32 => {
                let (off, width) = (x[1] & 31, (x[1] >> 16 & 0x7f).min(32));
                out[0] = if width == 0 {
                    0
                } else {
                    (((x[0] >> off) << (32 - width)) as i32 >> (32 - width)) as u32
                };
            }
        }
    }
}

/// Unary f64 operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary64 {
    Rsq,
    Rndne,
    Ceil,
    Fract,
    FrexpMant,
    /// The frexp exponent, a 32-bit integer (one output).
    FrexpExp,
}

/// f16 operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F16Op {
    Add,
    Sub,
    Mul,
    Min,
    Max,
    /// a * 2^b, b a signed 16-bit integer.
    Ldexp,
    /// fused a * b + c
    Fma,
    /// a * b + c rounded twice (v_mad_f16)
    Mad,
    /// f32 bits -> f16
    FromF32,
    FromU16,
    FromI16,
    ToU16,
    ToI16,
    Rcp,
    Sqrt,
    Rsq,
    Exp,
    Log,
    Floor,
    Ceil,
    Trunc,
    Rndne,
    Fract,
    FrexpMant,
    FrexpExp,
    Sin,
    Cos,
    /// Division fix-up (quotient, denominator, numerator), like the f32 form.
    DivFixup,
    /// Three-source minimum, maximum and median, as the f32 forms (IEEE minNum/maxNum; the median of sources
    /// one of which is NaN is their minimum).
    Min3,
    Max3,
    Med3,
    /// The f16 as a signed (`NormI16`) or unsigned normalized 16-bit integer: x * 32767 (or 65535) rounded to
    /// nearest even, saturated to [-32767, 32767] (or [0, 65535]), NaN to 0.
    NormI16,
    NormU16,
}

/// 16-bit integer operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum I16Op {
    Add,
    Sub,
    MulLo,
    /// b << (a & 15): the "rev" shifts take the shift amount first, as the instruction does.
    Lshlrev,
    Lshrrev,
    Ashrrev,
    MaxU,
    MaxI,
    MinU,
    MinI,
    /// a * b + c (low 16 bits)
    Mad,
    /// The signed sum, difference and a * b + c, saturated to [-32768, 32767] (the clamp modifier).
    AddSatI,
    SubSatI,
    MadSatI,
    /// The unsigned sum, difference and a * b + c, saturated to [0, 65535] (the clamp modifier).
    AddSatU,
    SubSatU,
    MadSatU,
}

impl LaneFn {
    /// Number of 32-bit inputs.
    pub fn inputs(self) -> usize {
        use LaneFn::*;
        match self {
            DivScaleF32 | DivFixupF32 => 3,
            DivFmasF32 => 4,
            DivScaleF64 | DivFixupF64 => 6,
            DivFmasF64 => 7,
            TrigPreopF64 => 3,
            F64Un(_) => 2,
            MinF64 | MaxF64 => 4,
            F16(op) => match op {
                F16Op::Fma | F16Op::Mad | F16Op::DivFixup | F16Op::Min3 | F16Op::Max3 | F16Op::Med3 => 3,
                F16Op::Add | F16Op::Sub | F16Op::Mul | F16Op::Min | F16Op::Max | F16Op::Ldexp => 2,
                _ => 1,
            },
            FmaF32ToF16 => 3,
            Word(op) => op.arity(),
            Bits(op) => op.arity(),
            Salu(op) => op.arity(),
            Valu(op) => op.arity(),
            F16ToF32 => 1,
            I16(op) => match op {
                I16Op::Mad | I16Op::MadSatI | I16Op::MadSatU => 3,
                _ => 2,
            },
            QuadSad { wide, .. } => {
                if wide {
                    7
                } else {
                    5
                }
            }
        }
    }

    /// Number of 32-bit outputs.
    pub fn outputs(self) -> usize {
        use LaneFn::*;
        match self {
            DivScaleF32 => 2,
            DivScaleF64 => 3,
            DivFmasF64 | DivFixupF64 | TrigPreopF64 | MinF64 | MaxF64 | Bits(BitOp::Bfe64 { .. }) => 2,
            F64Un(Unary64::FrexpExp) => 1,
            Salu(op) => op.outputs(),
            F64Un(_) => 2,
            QuadSad { wide, .. } => {
                if wide {
                    4
                } else {
                    2
                }
            }
            _ => 1,
        }
    }

    /// Evaluates the function on one lane.
    pub fn eval(self, x: &[u32], out: &mut [u32]) {
        use LaneFn::*;
        let f = f32::from_bits;
        let d = |lo: u32, hi: u32| f64::from_bits((hi as u64) << 32 | lo as u64);
        let put64 = |out: &mut [u32], v: f64| {
            out[0] = v.to_bits() as u32;
            out[1] = (v.to_bits() >> 32) as u32;
        };
        match self {
            DivScaleF32 => {
                let (v, vcc) = div_scale_f32(f(x[0]), f(x[1]), f(x[2]));
                out[0] = v.to_bits();
                out[1] = vcc as u32;
            }
            DivFmasF32 => out[0] = div_fmas_f32(f(x[0]), f(x[1]), f(x[2]), x[3] & 1 == 1).to_bits(),
            DivFixupF32 => out[0] = div_fixup_f32(f(x[0]), f(x[1]), f(x[2])).to_bits(),
            DivScaleF64 => {
                let (v, vcc) = div_scale_f64(d(x[0], x[1]), d(x[2], x[3]), d(x[4], x[5]));
                put64(out, v);
                out[2] = vcc as u32;
            }
            DivFmasF64 => put64(
                out,
                div_fmas_f64(d(x[0], x[1]), d(x[2], x[3]), d(x[4], x[5]), x[6] & 1 == 1),
            ),
            DivFixupF64 => put64(out, div_fixup_f64(d(x[0], x[1]), d(x[2], x[3]), d(x[4], x[5]))),
            TrigPreopF64 => put64(out, trig_preop(d(x[0], x[1]), x[2])),
            F64Un(op) => {
                let v = d(x[0], x[1]);
                match op {
                    Unary64::Rsq => put64(out, 1.0 / v.sqrt()),
                    Unary64::Rndne => put64(out, v.round_ties_even()),
                    Unary64::Ceil => put64(out, v.ceil()),
                    Unary64::Fract => put64(out, fract_f64(v)),
                    Unary64::FrexpMant => put64(out, frexp_f64(v).0),
                    Unary64::FrexpExp => out[0] = frexp_f64(v).1 as u32,
                }
            }
            MinF64 => put64(out, min_num(d(x[0], x[1]), d(x[2], x[3]))),
            MaxF64 => put64(out, max_num(d(x[0], x[1]), d(x[2], x[3]))),
            Word(op) => out[0] = op.eval(x),
            Bits(op) => op.eval(x, out),
            FmaF32ToF16 => {
                // the product is exact in f64; rounding the sum to odd keeps the rounding to f16 single
                let (p, c) = (f(x[0]) as f64 * f(x[1]) as f64, f(x[2]) as f64);
                out[0] = f64_to_f16(round_to_odd_sum(p, c)) as u32;
            }
            F16(op) => out[0] = f16_op(op, x) as u32,
            F16ToF32 => out[0] = (f16_to_f64(x[0] as u16) as f32).to_bits(),
            I16(op) => out[0] = i16_op(op, x) as u32,
            Salu(op) => op.eval(x, out),
            Valu(op) => out[0] = op.eval(x),
            QuadSad { masked, wide } => {
                let src = (x[1] as u64) << 32 | x[0] as u64;
                let sad = if masked { ValuOp::MsadU8 } else { ValuOp::SadU8 };
                let r: [u32; 4] = std::array::from_fn(|n| {
                    let window = (src >> (8 * n)) as u32;
                    let acc = if wide {
                        x[3 + n]
                    } else {
                        x[3 + n / 2] >> (16 * (n % 2)) & 0xffff
                    };
                    sad.eval(&[window, x[2], acc])
                });
                if wide {
                    out.copy_from_slice(&r);
                } else {
                    out[0] = r[0] & 0xffff | r[1] << 16;
                    out[1] = r[2] & 0xffff | r[3] << 16;
                }
            }
        }
    }
}

// ---- 16-bit floats ----------------------------------------------------------------------------------------

/// The value of an f16 bit pattern (exact).
pub fn f16_to_f64(h: u16) -> f64 {
    let (sign, exp, man) = ((h as u32 & 0x8000) << 16, (h >> 10 & 31) as u32, h as u32 & 0x3ff);
    let bits = match exp {
        // subnormal: man * 2^-24, exact in f32
        0 => return f32::from_bits(sign | (man as f32 * f32::from_bits(0x3380_0000)).to_bits()) as f64,
        31 => sign | 0x7f80_0000 | man << 13,
        _ => sign | (exp + 112) << 23 | man << 13,
    };
    f32::from_bits(bits) as f64
}

/// `x` rounded to the nearest f16 (ties to even), with f16 subnormals, overflow to infinity and NaN payloads
/// kept in their top bits (quieted).
pub fn f64_to_f16(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = (bits >> 52 & 0x7ff) as i32;
    let man = bits & ((1 << 52) - 1);
    if exp == 0x7ff {
        return if man == 0 {
            sign | 0x7c00
        } else {
            sign | 0x7e00 | (man >> 42) as u16 & 0x3ff
        };
    }
    if exp == 0 {
        return sign; // f64 subnormals are far below the smallest f16
    }
    let e = exp - 1023;
    let full = man | 1 << 52; // value = full * 2^(e - 52)
    let ulp_exp = e.max(-14) - 10;
    let shift = (ulp_exp - (e - 52)) as u32; // at least 42
    if shift >= 64 {
        return sign;
    }
    let (q, rem, half) = (full >> shift, full & ((1u64 << shift) - 1), 1u64 << (shift - 1));
    let q = if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    };
    let mag = if e >= -14 { (((e + 14) as u64) << 10) + q } else { q };
    if mag >= 0x7c00 {
        sign | 0x7c00
    } else {
        sign | mag as u16
    }
}

fn f16_op(op: F16Op, x: &[u32]) -> u16 {
    let h = |i: usize| f16_to_f64(x[i] as u16);
    let r = f64_to_f16;
    match op {
        // the exact sum, product and fused sum of f16 values fit in an f64, so one rounding is exact
        F16Op::Add => r(h(0) + h(1)),
        F16Op::Sub => r(h(0) - h(1)),
        F16Op::Mul => r(h(0) * h(1)),
        F16Op::Min => r(min_num(h(0), h(1))),
        F16Op::Max => r(max_num(h(0), h(1))),
        F16Op::Ldexp => r(ldexp(h(0), x[1] as u16 as i16 as i32)),
        F16Op::Fma => r(h(0).mul_add(h(1), h(2))),
        F16Op::Mad => r(f16_to_f64(r(h(0) * h(1))) + h(2)),
        F16Op::FromF32 => r(f32::from_bits(x[0]) as f64),
        F16Op::FromU16 => r(x[0] as u16 as f64),
        F16Op::FromI16 => r(x[0] as u16 as i16 as f64),
        F16Op::ToU16 => {
            let v = h(0);
            if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 65535.0) as u16
            }
        }
        F16Op::ToI16 => {
            let v = h(0);
            if v.is_nan() {
                0
            } else {
                v.trunc().clamp(-32768.0, 32767.0) as i16 as u16
            }
        }
        F16Op::Rcp => r(1.0 / h(0)),
        F16Op::Sqrt => r(h(0).sqrt()),
        F16Op::Rsq => r(1.0 / h(0).sqrt()),
        F16Op::Exp => r(h(0).exp2()),
        F16Op::Log => r(h(0).log2()),
        F16Op::Floor => r(h(0).floor()),
        F16Op::Ceil => r(h(0).ceil()),
        F16Op::Trunc => r(h(0).trunc()),
        F16Op::Rndne => r(h(0).round_ties_even()),
        F16Op::Fract => match r(fract_f64(h(0))) {
            0x3c00 => 0x3bff, // stays below 1
            v => v,
        },
        F16Op::FrexpMant => r(frexp_f64(h(0)).0),
        F16Op::FrexpExp => frexp_f64(h(0)).1 as i16 as u16,
        F16Op::Sin => r((h(0) * std::f64::consts::TAU).sin()),
        F16Op::Cos => r((h(0) * std::f64::consts::TAU).cos()),
        F16Op::DivFixup => {
            let (q, den, num) = (h(0), h(1), h(2));
            r(div_fixup(q, den, num, -25, f64::NAN))
        }
        F16Op::Min3 => r(min_num(min_num(h(0), h(1)), h(2))),
        F16Op::Max3 => r(max_num(max_num(h(0), h(1)), h(2))),
        F16Op::Med3 => {
            let (a, b, c) = (h(0), h(1), h(2));
            r(if a.is_nan() || b.is_nan() || c.is_nan() {
                min_num(min_num(a, b), c)
            } else {
                max_num(min_num(a, b), min_num(max_num(a, b), c))
            })
        }
        F16Op::NormI16 => norm16(h(0), true) as u16,
        F16Op::NormU16 => norm16(h(0), false) as u16,
    }
}

fn i16_op(op: I16Op, x: &[u32]) -> u16 {
    let (a, b) = (x[0] as u16, x[1] as u16);
    match op {
        I16Op::Add => a.wrapping_add(b),
        I16Op::Sub => a.wrapping_sub(b),
        I16Op::MulLo => a.wrapping_mul(b),
        I16Op::Lshlrev => b.wrapping_shl((a & 15) as u32),
        I16Op::Lshrrev => b.wrapping_shr((a & 15) as u32),
        I16Op::Ashrrev => ((b as i16) >> (a & 15)) as u16,
        I16Op::MaxU => a.max(b),
        I16Op::MaxI => (a as i16).max(b as i16) as u16,
        I16Op::MinU => a.min(b),
        I16Op::MinI => (a as i16).min(b as i16) as u16,
        I16Op::Mad => a.wrapping_mul(b).wrapping_add(x[2] as u16),
        I16Op::AddSatI => (a as i16).saturating_add(b as i16) as u16,
        I16Op::SubSatI => (a as i16).saturating_sub(b as i16) as u16,
        I16Op::MadSatI => (a as i16 as i32 * b as i16 as i32 + x[2] as u16 as i16 as i32).clamp(-32768, 32767) as u16,
        I16Op::AddSatU => a.saturating_add(b),
        I16Op::SubSatU => a.saturating_sub(b),
        I16Op::MadSatU => (a as u32 * b as u32 + x[2] as u16 as u32).min(0xffff) as u16,
    }
}

/// A float as a signed or unsigned normalized 16-bit integer (the low 16 bits of the result): x * 32767 (signed)
/// or x * 65535 rounded to nearest even and saturated to [-32767, 32767] or [0, 65535]; NaN gives 0.
pub fn norm16(x: f64, signed: bool) -> u32 {
    if x.is_nan() {
        return 0;
    }
    // x is an f16 or f32 value: the product is exact in f64
    if signed {
        (x * 32767.0).round_ties_even().clamp(-32767.0, 32767.0) as i32 as u32 & 0xffff
    } else {
        (x * 65535.0).round_ties_even().clamp(0.0, 65535.0) as u32
    }
}

// ---- shared float helpers ---------------------------------------------------------------------------------

fn ldexp(x: f64, e: i32) -> f64 {
    // two steps keep intermediate powers of two representable
    let e = e.clamp(-2200, 2200);
    let half = e / 2;
    x * (2f64).powi(half) * (2f64).powi(e - half)
}

/// x - floor(x), below 1; NaN and infinities give NaN (the hardware's v_fract).
fn fract_f64(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// (mantissa in [0.5, 1) with x's sign, exponent); infinities and NaN give (x, 0).
fn frexp_f64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (scaled, bias) = if x.abs() < f64::MIN_POSITIVE {
        (x * (2f64).powi(64), 64)
    } else {
        (x, 0)
    };
    let e = (scaled.to_bits() >> 52 & 0x7ff) as i32 - 1022;
    let m = f64::from_bits(scaled.to_bits() & !(0x7ff << 52) | (1022u64 << 52));
    (m, e - bias)
}

// ---- IEEE division steps ----------------------------------------------------------------------------------

fn exp_f32(x: f32) -> i32 {
    (x.to_bits() >> 23 & 0xff) as i32
}

fn exp_f64(x: f64) -> i32 {
    (x.to_bits() >> 52 & 0x7ff) as i32
}

/// The biased exponent field of an f32 (bits 23..30).
fn exp_field<A: LaneAlgebra>(a: &mut A, x: A::W) -> A::W {
    let (e, m) = (a.shr(x, 23), a.constant(0xff));
    a.and(e, m)
}

/// lo <= x <= hi, in wrapping 32-bit arithmetic (so `lo` may be a negative number's two's complement).
fn within<A: LaneAlgebra>(a: &mut A, x: A::W, lo: u32, hi: u32) -> A::C {
    let (l, n) = (a.constant(lo), a.constant(hi.wrapping_sub(lo).wrapping_add(1)));
    let d = a.sub(x, l);
    a.gt_u(n, d)
}

/// Where v_div_scale_f32 returns its operand unchanged and clears VCC for either operand, by the exponent
/// fields alone: both operands normal (so neither zero, infinite nor NaN), the denominator's field at most 252
/// (its reciprocal is then at least 2^-126, not subnormal), the numerator's at least 24, and the difference of
/// the fields from -125 (the quotient is then above 2^-126) to 95 (below the guide's 96). Every other case
/// takes [`div_scale_f32`]'s full definition.
pub fn div_scale_f32_unscaled<A: LaneAlgebra>(a: &mut A, den: A::W, num: A::W) -> A::C {
    let (ed, en) = (exp_field(a, den), exp_field(a, num));
    let d_ok = within(a, ed, 1, 252);
    let n_ok = within(a, en, 24, 254);
    let diff = a.sub(en, ed);
    let diff_ok = within(a, diff, (-125i32) as u32, 95);
    let both = a.both(d_ok, n_ok);
    a.both(both, diff_ok)
}

/// v_div_scale_f32: scales the numerator or denominator (whichever `x` is) by 2^±64 where the quotient, the
/// reciprocal of the denominator or the operands themselves would otherwise be subnormal or overflow, and
/// sets VCC when the final v_div_fmas must scale the quotient back.
fn div_scale_f32(x: f32, den: f32, num: f32) -> (f32, bool) {
    if div_scale_f32_unscaled(&mut Lane, den.to_bits(), num.to_bits()) {
        return (x, false);
    }
    div_scale_f32_cases(x, den, num)
}

/// The guide's definition of v_div_scale_f32, case by case. Where both the reciprocal and the quotient
/// are subnormal the guide's pseudocode writes ldexp(S0, 64) for the denominator; the compiler's division
/// sequence returns the correctly rounded quotient (1 / FLT_MAX, for one) only with 2^-64, the scale of the
/// case after it, which is what this implements (`the_division_sequence_rounds_like_ieee_division_...`).
fn div_scale_f32_cases(x: f32, den: f32, num: f32) -> (f32, bool) {
    let two = |e: i32| (2f32).powi(e);
    let subnormal32 = |v: f64| v != 0.0 && v.abs() < f32::MIN_POSITIVE as f64;
    let quot_sub = subnormal32(num as f64 / den as f64);
    let rcp_sub = subnormal32(1.0 / den as f64);
    if num == 0.0 || den == 0.0 {
        (f32::NAN, false)
    } else if exp_f32(num) - exp_f32(den) >= 96 {
        (if x == den { x * two(64) } else { x }, true)
    } else if den.is_subnormal() {
        (x * two(64), false)
    } else if rcp_sub && quot_sub {
        (if x == den { x * two(-64) } else { x }, true)
    } else if rcp_sub {
        (x * two(-64), false)
    } else if quot_sub {
        (if x == num { x * two(64) } else { x }, true)
    } else if exp_f32(num) <= 23 {
        (x * two(64), false)
    } else {
        (x, false)
    }
}

fn div_scale_f64(x: f64, den: f64, num: f64) -> (f64, bool) {
    let two = |e: i32| (2f64).powi(e);
    let quot_sub = (num / den).is_subnormal();
    let rcp_sub = (1.0 / den).is_subnormal();
    if num == 0.0 || den == 0.0 {
        (f64::NAN, false)
    } else if exp_f64(num) - exp_f64(den) >= 768 {
        (if x == den { x * two(128) } else { x }, true)
    } else if den.is_subnormal() {
        (x * two(128), false)
    } else if rcp_sub && quot_sub {
        (if x == den { x * two(-128) } else { x }, true)
    } else if rcp_sub {
        (x * two(-128), false)
    } else if quot_sub {
        (if x == num { x * two(128) } else { x }, true)
    } else if exp_f64(num) <= 53 {
        (x * two(128), false)
    } else {
        (x, false)
    }
}

/// v_div_fmas_f32: fma(a, b, c), times 2^64 (c large) or 2^-64 (c small) when VCC is set — rounded once.
fn div_fmas_f32(a: f32, b: f32, c: f32, vcc: bool) -> f32 {
    if !vcc {
        return a.mul_add(b, c);
    }
    let scale = if exp_f32(c) > 127 { 64 } else { -64 };
    // a*b is exact in f64; round the sum to odd so that the final rounding to f32 is the only one
    (round_to_odd_sum(a as f64 * b as f64, c as f64) * (2f64).powi(scale)) as f32
}

/// a + b rounded to odd: exact if representable, else the neighbour with an odd last bit. Rounding that to
/// a format at least two bits narrower gives the correctly rounded sum.
fn round_to_odd_sum(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return s;
    }
    let err = two_sum_err(a, b, s);
    if err == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    // step one ulp toward the exact sum (away from zero when err has s's sign)
    if (err > 0.0) == (s > 0.0) {
        f64::from_bits(s.to_bits() + 1)
    } else {
        f64::from_bits(s.to_bits() - 1)
    }
}

/// The rounding error of s = fl(a + b), exactly (Knuth's TwoSum).
fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    (a - (s - bb)) + (b - bb)
}

/// v_div_fmas_f64: as the f32 form with 2^±128. The scaled product is rounded twice when the result is
/// subnormal (the hardware rounds once); nothing else is affected.
fn div_fmas_f64(a: f64, b: f64, c: f64, vcc: bool) -> f64 {
    let r = a.mul_add(b, c);
    if !vcc {
        return r;
    }
    r * (2f64).powi(if exp_f64(c) > 1023 { 128 } else { -128 })
}

/// The special cases of a division num/den, shared by the f16/f32/f64 fix-ups; `min_exp_diff` is the
/// exponent difference below which the quotient rounds to zero.
fn div_fixup(q: f64, den: f64, num: f64, min_exp_diff: i32, default_nan: f64) -> f64 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    let signed = |v: f64| if neg { -v } else { v };
    if num.is_nan() {
        num
    } else if den.is_nan() {
        den
    } else if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        default_nan
    } else if den == 0.0 || num.is_infinite() {
        signed(f64::INFINITY)
    } else if den.is_infinite() || num == 0.0 || ilogb(num) - ilogb(den) < min_exp_diff {
        // x / inf, 0 / y, and quotients below half the smallest subnormal
        signed(0.0)
    } else if q.is_nan() {
        signed(f64::INFINITY)
    } else {
        signed(q.abs())
    }
}

/// floor(log2 |x|) for finite nonzero x.
fn ilogb(x: f64) -> i32 {
    frexp_f64(x).1 - 1
}

/// Where v_div_fixup_f32 is the quotient's magnitude with the division's sign (neither operand zero,
/// infinite, NaN or subnormal, their exponent fields at most 151 apart downwards, the quotient not NaN): the
/// plain case of [`div_fixup`], by bits alone.
pub fn div_fixup_f32_plain<A: LaneAlgebra>(a: &mut A, q: A::W, den: A::W, num: A::W) -> A::C {
    let (ed, en) = (exp_field(a, den), exp_field(a, num));
    let d_ok = within(a, ed, 1, 254);
    let n_ok = within(a, en, 1, 254);
    let diff = a.sub(en, ed);
    let diff_ok = within(a, diff, (-151i32) as u32, 253);
    let (abs, nan) = (a.constant(0x7fff_ffff), a.constant(0x7f80_0001));
    let qa = a.and(q, abs);
    let q_ok = a.gt_u(nan, qa);
    let ops = a.both(d_ok, n_ok);
    let ops = a.both(ops, diff_ok);
    a.both(ops, q_ok)
}

/// |q| with the sign of den ^ num: v_div_fixup_f32 in its plain case.
pub fn div_fixup_f32_signed<A: LaneAlgebra>(a: &mut A, q: A::W, den: A::W, num: A::W) -> A::W {
    let (abs, sign) = (a.constant(0x7fff_ffff), a.constant(0x8000_0000));
    let s = a.xor(den, num);
    let s = a.and(s, sign);
    let m = a.and(q, abs);
    a.or(m, s)
}

fn div_fixup_f32(q: f32, den: f32, num: f32) -> f32 {
    let (qb, db, nb) = (q.to_bits(), den.to_bits(), num.to_bits());
    if div_fixup_f32_plain(&mut Lane, qb, db, nb) {
        return f32::from_bits(div_fixup_f32_signed(&mut Lane, qb, db, nb));
    }
    div_fixup_f32_cases(q, den, num)
}

fn div_fixup_f32_cases(q: f32, den: f32, num: f32) -> f32 {
    if num.is_nan() || den.is_nan() {
        // quiet the NaN operand, keeping its payload
        let src = if num.is_nan() { num } else { den };
        return f32::from_bits(src.to_bits() | 0x0040_0000);
    }
    let r = div_fixup(q as f64, den as f64, num as f64, -151, f64::NAN);
    // The default NaN by its bits: a cast of a NaN between widths may give either sign.
    if r.is_nan() {
        f32::from_bits(0xffc0_0000)
    } else {
        r as f32
    }
}

fn div_fixup_f64(q: f64, den: f64, num: f64) -> f64 {
    if num.is_nan() || den.is_nan() {
        let src = if num.is_nan() { num } else { den };
        return f64::from_bits(src.to_bits() | 1 << 51);
    }
    div_fixup(q, den, num, -1076, f64::from_bits(0xfff8_0000_0000_0000))
}

// ---- v_trig_preop_f64 -------------------------------------------------------------------------------------

/// The first 1280 fractional bits of 2/pi, most significant first (computed with integer arithmetic from
/// Machin's formula; the first word is 2/pi's 0xa2f9836e4e441529...).
const TWO_OVER_PI: [u64; 20] = [
    0xa2f9836e4e441529,
    0xfc2757d1f534ddc0,
    0xdb6295993c439041,
    0xfe5163abdebbc561,
    0xb7246e3a424dd2e0,
    0x06492eea09d1921c,
    0xfe1deb1cb129a73e,
    0xe88235f52ebb4484,
    0xe99c7026b45f7e41,
    0x3991d639835339f4,
    0x9c845f8bbdf9283b,
    0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f,
    0x6d367ecf27cb09b7,
    0x4f463f669e5fea2d,
    0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea,
    0x6bfb5fb11f8d5d08,
    0x56033046fc7b6bab,
    0xf0cfbc209af4361d,
];

/// 53 bits of 2/pi starting at fractional bit `start` (0 = the 2^-1 place), as an integer.
fn two_over_pi_bits(start: u32) -> u64 {
    let mut v = 0u64;
    for i in start..start + 53 {
        let bit = TWO_OVER_PI.get((i / 64) as usize).map_or(0, |w| w >> (63 - i % 64) & 1);
        v = v << 1 | bit;
    }
    v
}

/// v_trig_preop_f64: segment `seg` (0..31) of 2/pi, 53 bits, shifted past x's large exponents, as a double.
fn trig_preop(x: f64, seg: u32) -> f64 {
    let e = exp_f64(x);
    let shift = (e - 1077).max(0) as u32;
    let start = (seg & 31) * 53 + shift;
    let mut scale = -53 - start as i32;
    if e >= 1968 {
        scale += 128;
    }
    ldexp(two_over_pi_bits(start) as f64, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marsaglia's xorshift32 from `seed`: reproducible bits for the sampled tests.
    fn xorshift(mut seed: u32) -> impl FnMut() -> u32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        }
    }

    #[test]
    fn the_division_shortcuts_agree_with_the_case_by_case_definitions() {
        let mut next = xorshift(0x9e37_79b9);
        // random bits, and values at every exponent field, so the edges of each range are met
        let mut vals: Vec<u32> = (0..1500).map(|_| next()).collect();
        for e in 0..=255u32 {
            for m in [0, 1, 0x40_0000, 0x7f_ffff] {
                for s in [0, 0x8000_0000] {
                    vals.push(s | e << 23 | m);
                }
            }
        }
        let mut taken = [0usize; 2];
        for &den in &vals {
            for (k, &num) in vals.iter().enumerate() {
                let (df, nf) = (f32::from_bits(den), f32::from_bits(num));
                if div_scale_f32_unscaled(&mut Lane, den, num) {
                    taken[0] += 1;
                    for x in [df, nf] {
                        let (r, vcc) = div_scale_f32_cases(x, df, nf);
                        assert!(
                            r.to_bits() == x.to_bits() && !vcc,
                            "div_scale of {:#x}, den {den:#x}, num {num:#x}",
                            x.to_bits()
                        );
                    }
                }
                let x = vals[(k * 7 + 3) % vals.len()];
                if div_fixup_f32_plain(&mut Lane, x, den, num) {
                    taken[1] += 1;
                    let full = div_fixup_f32_cases(f32::from_bits(x), df, nf);
                    assert_eq!(
                        full.to_bits(),
                        div_fixup_f32_signed(&mut Lane, x, den, num),
                        "div_fixup of q {x:#x}, den {den:#x}, num {num:#x}"
                    );
                }
            }
        }
        // both shortcuts are taken often, and not always
        let pairs = vals.len() * vals.len();
        assert!(
            taken.iter().all(|&t| t > pairs / 10 && t < pairs),
            "{taken:?} of {pairs}"
        );
    }

    fn div32(a: f32, b: f32) -> f32 {
        // the compiler's sequence for a / b with f32 denormals enabled
        let (den, _) = div_scale_f32(b, b, a);
        let (numr, vcc) = div_scale_f32(a, b, a);
        let rcp = 1.0 / den;
        let fma0 = (-den).mul_add(rcp, 1.0);
        let fma1 = fma0.mul_add(rcp, rcp);
        let mul = numr * fma1;
        let fma2 = (-den).mul_add(mul, numr);
        let fma3 = fma2.mul_add(fma1, mul);
        let fma4 = (-den).mul_add(fma3, numr);
        div_fixup_f32(div_fmas_f32(fma4, fma1, fma3, vcc), b, a)
    }

    #[test]
    fn the_division_sequence_rounds_like_ieee_division_across_the_exponent_range() {
        let mut next = xorshift(0x1234_5678);
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -3.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            1e-45,
            f32::MAX,
            3e38,
        ];
        let mut cases: Vec<(f32, f32)> = specials
            .iter()
            .flat_map(|&a| specials.iter().map(move |&b| (a, b)))
            .collect();
        for _ in 0..200_000 {
            cases.push((f32::from_bits(next()), f32::from_bits(next())));
        }
        for (a, b) in cases {
            let (got, want) = (div32(a, b), a / b);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{a:e} / {b:e}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn f16_rounding_matches_the_half_crate_on_every_f32_neighbourhood() {
        for bits in (0..=u32::MAX).step_by(9973) {
            let x = f32::from_bits(bits);
            let want = half::f16::from_f32(x);
            let got = f64_to_f16(x as f64);
            if x.is_nan() {
                assert!(want.is_nan() && got & 0x7c00 == 0x7c00 && got & 0x3ff != 0);
            } else {
                assert_eq!(got, want.to_bits(), "{x:e}");
            }
        }
        for h in 0..=u16::MAX {
            let v = f16_to_f64(h);
            let want = half::f16::from_bits(h).to_f64();
            assert!(v.to_bits() == want.to_bits() || (v.is_nan() && want.is_nan()), "{h:#x}");
        }
    }

    #[test]
    fn trig_preop_segments_add_up_to_two_over_pi() {
        // segment 0 is 2/pi truncated to 53 bits: FRAC_2_PI (rounded to nearest) or one ulp below it
        let (s0, s1) = (trig_preop(1.0, 0), trig_preop(1.0, 1));
        let ulp = f64::EPSILON / 2.0;
        assert!(
            s0 <= std::f64::consts::FRAC_2_PI && std::f64::consts::FRAC_2_PI - s0 <= ulp,
            "{s0:e}"
        );
        // segment 1 continues exactly where segment 0 stops: below one ulp of segment 0 and rounding it to FRAC_2_PI
        assert!(s1 > 0.0 && s1 < ulp && s0 + s1 == std::f64::consts::FRAC_2_PI, "{s1:e}");
        // large arguments skip the leading bits: the segment starts (exponent - 1077) bits later
        assert_eq!(trig_preop(2f64.powi(60), 0), ldexp(two_over_pi_bits(6) as f64, -59));
    }

    #[test]
    fn min_max_order_signed_zeros_and_ignore_one_nan() {
        assert!(min_num(0.0, -0.0).is_sign_negative() && min_num(-0.0, 0.0).is_sign_negative());
        assert!(max_num(-0.0, 0.0).is_sign_positive() && max_num(0.0, -0.0).is_sign_positive());
        assert_eq!(min_num(f64::NAN, 2.0), 2.0);
        assert_eq!(max_num(3.0, f64::NAN), 3.0);
    }
}

// ---- scalar ALU operations ------------------------------------------------------------------------------------

/// Scalar ALU operations as the CDNA ISA guides define them; 64-bit operands are (lo, hi) inputs/outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SaluOp {
    /// Count of zero (`ones: false`) or one bits of a u32 or (`wide`) u64 (s_bcnt0/s_bcnt1).
    Bcnt { ones: bool, wide: bool },
    /// Index of the lowest zero bit of a u32 or u64, -1 if none (s_ff0).
    Ff0 { wide: bool },
    /// The bits of a u64 reversed (s_brev_b64).
    Brev64,
    /// (old value, bit index) -> the value with that bit cleared or set, of a u32 or u64 (s_bitset0/1).
    Bitset { set: bool, wide: bool },
    /// Each nibble of the source (four lanes of a quad) to one bit: set if any bit of the nibble is (s_quadmask).
    Quadmask { wide: bool },
    /// Each nibble set to all ones if any bit of it is (s_wqm: whole quad mode).
    Wqm { wide: bool },
    /// Sign extension of the low 8 or 16 bits.
    Sext(u8),
    /// |S0| (s_abs_i32), two's complement (|i32::MIN| = i32::MIN).
    Abs,
    /// |S0 - S1| (s_absdiff_i32), of the wrapped difference.
    Absdiff,
    /// (S0 << n) + S1 and the carry out of the 64-bit sum (s_lshlN_add_u32).
    LshlAdd(u8),
    /// Two 16-bit halves: low halves of S0 and S1 (`hi0`/`hi1` pick the high halves) as D's low and high halves.
    Pack { hi0: bool, hi1: bool },
    /// Every bit of a u32 twice, as a u64 (s_bitreplicate_b64_b32).
    Bitreplicate,
    /// SCC = bit S1[5:0] of a u64 is 0 (`one: false`) or 1 (s_bitcmp0/1_b64).
    Bitcmp64 { one: bool },
}

impl SaluOp {
    fn wide_in(self) -> bool {
        use SaluOp::*;
        matches!(
            self,
            Bcnt { wide: true, .. }
                | Ff0 { wide: true }
                | Brev64
                | Bitset { wide: true, .. }
                | Quadmask { wide: true }
                | Wqm { wide: true }
                | Bitcmp64 { .. }
        )
    }
    fn arity(self) -> usize {
        use SaluOp::*;
        let first = if self.wide_in() { 2 } else { 1 };
        match self {
            Bitset { .. } | Absdiff | LshlAdd(_) | Pack { .. } | Bitcmp64 { .. } => first + 1,
            _ => first,
        }
    }
    /// Number of 32-bit outputs.
    pub fn outputs(self) -> usize {
        use SaluOp::*;
        match self {
            Brev64
            | Bitset { wide: true, .. }
            | Quadmask { wide: true }
            | Wqm { wide: true }
            | Bitreplicate
            | LshlAdd(_) => 2,
            _ => 1,
        }
    }
    fn eval(self, x: &[u32], out: &mut [u32]) {
        use SaluOp::*;
        let v = if self.wide_in() {
            (x[1] as u64) << 32 | x[0] as u64
        } else {
            x[0] as u64
        };
        let arg = |i: usize| x[i + if self.wide_in() { 2 } else { 1 }];
        let bits = if self.wide_in() { 64 } else { 32 };
        let mut put = |r: u64| {
            out[0] = r as u32;
            if out.len() > 1 {
                out[1] = (r >> 32) as u32;
            }
        };
        let nibbles = |v: u64, n: u32| {
            (0..n)
                .map(|i| ((v >> (4 * i) & 0xf != 0) as u64) << i)
                .fold(0, |a, b| a | b)
        };
        match self {
            Bcnt { ones, .. } => put(if ones { v.count_ones() } else { bits - v.count_ones() } as u64),
            Ff0 { .. } => put(if (!v).trailing_zeros() >= bits {
                u32::MAX as u64
            } else {
                (!v).trailing_zeros() as u64
            }),
            Brev64 => put(v.reverse_bits()),
            Bitset { set, .. } => {
                let bit = 1u64 << (arg(0) & (bits - 1));
                put(if set { v | bit } else { v & !bit })
            }
            Quadmask { wide } => put(nibbles(v, if wide { 16 } else { 8 })),
            Wqm { wide } => {
                let q = nibbles(v, if wide { 16 } else { 8 });
                put((0..16)
                    .map(|i| if q >> i & 1 == 1 { 0xfu64 << (4 * i) } else { 0 })
                    .fold(0, |a, b| a | b))
            }
            Sext(8) => put(v as u8 as i8 as i32 as u32 as u64),
            Sext(_) => put(v as u16 as i16 as i32 as u32 as u64),
            Abs => put((v as u32 as i32).wrapping_abs() as u32 as u64),
            Absdiff => put((v as u32 as i32).wrapping_sub(arg(0) as i32).wrapping_abs() as u32 as u64),
            LshlAdd(n) => {
                // the sum and its carry out as the second output
                let sum = ((v as u32 as u64) << n) + arg(0) as u64;
                put(sum & 0xffff_ffff | ((sum >> 32 != 0) as u64) << 32)
            }
            Pack { hi0, hi1 } => {
                let half = |w: u32, hi: bool| if hi { w >> 16 } else { w & 0xffff };
                put((half(arg(0), hi1) << 16 | half(v as u32, hi0)) as u64)
            }
            Bitreplicate => put((0..32).map(|i| (v >> i & 1) * (3u64 << (2 * i))).fold(0, |a, b| a | b)),
            Bitcmp64 { one } => put(((v >> (arg(0) & 63) & 1 == 1) == one) as u64),
        }
    }
}

// ---- vector ALU operations ------------------------------------------------------------------------------------

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
    fn arity(self) -> usize {
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
    fn eval(self, x: &[u32]) -> u32 {
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

/// An f32 as gfx942's 8-bit float, E4M3 with bias 8 or (`bf8`) E5M2 with bias 16: 0x80 is the only NaN, there
/// are no infinities or negative zero. Rounds to nearest even, or with `random` stochastically: the random bits
/// are added below the kept mantissa bits, which are then truncated. NaN, infinities and magnitudes above the
/// largest finite value (240, 57344) give 0x80. This is AMD's reference conversion for these types
/// (`cast_to_f8` of HIP's `amd_hip_fp8.h`, from rocBLAS), which the HIP headers use on the host where gfx942
/// devices use `v_cvt_pk_fp8_f32` and `v_cvt_sr_fp8_f32`.
pub fn f32_to_f8(x: f32, bf8: bool, random: Option<u32>) -> u8 {
    let (mant_bits, bias, max) = if bf8 { (2u32, 16i32, 57344.0f32) } else { (3, 8, 240.0) };
    let bits = x.to_bits();
    let sign = (bits >> 31) as u8;
    if !x.is_finite() || x.abs() > max {
        return 0x80;
    }
    if x == 0.0 {
        return 0;
    }
    // the magnitude as mantissa * 2^(exp - 23) with the implicit bit, aligned to the 8-bit float's exponent
    // (its subnormals have the exponent 1 - bias)
    let (e, mut man) = match bits >> 23 & 0xff {
        0 => (-126, (bits & 0x7f_ffff) as u64),
        e => (e as i32 - 127, (bits & 0x7f_ffff | 0x80_0000) as u64),
    };
    let min_exp = 1 - bias;
    let shift = (min_exp - e).max(0) as u32; // further right shift into the subnormal range
    let drop = 23 - mant_bits; // bits below the kept mantissa
    let e8 = e.max(min_exp);
    let total = drop + shift;
    if total >= 64 {
        return 0;
    }
    let (kept, rest) = (man >> total, man & ((1u64 << total) - 1));
    man = match random {
        // the random bits in the dropped positions of the aligned value: a carry into the kept bits
        // rounds up with probability proportional to what is dropped
        Some(r) => {
            let aligned = man >> shift;
            let dropped = aligned & ((1u64 << drop) - 1);
            (aligned >> drop) + ((dropped + (r as u64 & ((1u64 << drop) - 1))) >> drop)
        }
        None => {
            let half = 1u64 << (total - 1);
            kept + (rest > half || (rest == half && kept & 1 == 1)) as u64
        }
    };
    // man now counts units of 2^(e8 - mant_bits); normalize the carry out of the mantissa
    let (mut e8, mut man) = (e8, man);
    if man >= 2 << mant_bits {
        man >>= 1;
        e8 += 1;
    }
    let field = if man >> mant_bits == 0 { 0 } else { e8 + bias };
    if man == 0 {
        return 0;
    }
    if field > (1 << (7 - mant_bits)) - 1 {
        return 0x80;
    }
    sign << 7 | (field as u8) << mant_bits | (man as u8 & ((1 << mant_bits) - 1))
}

/// An f32 rounded toward zero to f16: subnormals kept, overflow to the largest finite value, infinities kept,
/// NaNs quieted with their top payload bits.
pub fn f32_to_f16_rtz(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = (bits >> 16 & 0x8000) as u16;
    let a = x.abs();
    if a.is_nan() {
        return sign | 0x7e00 | (bits >> 13 & 0x1ff) as u16;
    }
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a >= 65536.0 {
        return sign | 0x7bff;
    }
    // a multiple of 2^-24 below 2^16: scale into f16 units of the value's own exponent and truncate
    let e = (bits >> 23 & 0xff) as i32 - 127;
    if e < -14 {
        // subnormal (or zero): units of 2^-24
        return sign | (a as f64 * 16_777_216.0).trunc() as u16;
    }
    let man = (bits & 0x7f_ffff) >> 13;
    sign | ((e + 15) as u16) << 10 | man as u16
}
