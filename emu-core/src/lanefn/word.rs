//! 32-bit word operations ([`WordOp`]: three-source min/max/median, byte permute, 24-bit high products, byte to
//! float) and bit counting and field extraction ([`BitOp`]).

use crate::rules::{max_num64 as max_num, min_num64 as min_num};

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
    pub(super) fn arity(self) -> usize {
        use WordOp::*;
        match self {
            CvtF32Ubyte(_) => 1,
            MulHiU32U24 | MulHiI32I24 => 2,
            _ => 3,
        }
    }
    pub(super) fn eval(self, x: &[u32]) -> u32 {
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
    pub(super) fn arity(self) -> usize {
        match self {
            BitOp::Clz32 | BitOp::Cls32 => 1,
            BitOp::Clz64 | BitOp::Cls64 | BitOp::Ctz64 | BitOp::BfeI32 => 2,
            BitOp::Bfe64 { .. } => 3,
        }
    }
    pub(super) fn eval(self, x: &[u32], out: &mut [u32]) {
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
