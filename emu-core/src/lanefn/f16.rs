//! 16-bit floats and integers: conversions between f16 and wider floats, the f16 operations ([`F16Op`]), the
//! 16-bit integer operations ([`I16Op`]) and normalized 16-bit integers.

use super::division::div_fixup;
use super::float::{fract_f64, frexp_f64, ldexp};
use crate::rules::{max_num64 as max_num, min_num64 as min_num};

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

pub(super) fn f16_op(op: F16Op, x: &[u32]) -> u16 {
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

pub(super) fn i16_op(op: I16Op, x: &[u32]) -> u16 {
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
