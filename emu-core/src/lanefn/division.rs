//! The IEEE division steps: v_div_scale, v_div_fmas and v_div_fixup in their f32 and f64 forms, with the
//! bit-level shortcuts the backends test before taking the full definitions.

use super::float::frexp_f64;
use crate::rules::{Lane, LaneAlgebra};

fn exp_f32(x: f32) -> i32 {
    (x.to_bits() >> 23 & 0xff) as i32
}

pub(super) fn exp_f64(x: f64) -> i32 {
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
pub(super) fn div_scale_f32(x: f32, den: f32, num: f32) -> (f32, bool) {
    if div_scale_f32_unscaled(&mut Lane, den.to_bits(), num.to_bits()) {
        return (x, false);
    }
    div_scale_f32_cases(x, den, num)
}

/// The guide's definition of v_div_scale_f32, case by case. Where both the reciprocal and the quotient
/// are subnormal the guide's pseudocode writes ldexp(S0, 64) for the denominator; the compiler's division
/// sequence returns the correctly rounded quotient (1 / FLT_MAX, for one) only with 2^-64, the scale of the
/// case after it, which is what this implements (`the_division_sequence_rounds_like_ieee_division_...`).
pub(super) fn div_scale_f32_cases(x: f32, den: f32, num: f32) -> (f32, bool) {
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

pub(super) fn div_scale_f64(x: f64, den: f64, num: f64) -> (f64, bool) {
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
pub(super) fn div_fmas_f32(a: f32, b: f32, c: f32, vcc: bool) -> f32 {
    if !vcc {
        return a.mul_add(b, c);
    }
    let scale = if exp_f32(c) > 127 { 64 } else { -64 };
    // a*b is exact in f64; round the sum to odd so that the final rounding to f32 is the only one
    (round_to_odd_sum(a as f64 * b as f64, c as f64) * (2f64).powi(scale)) as f32
}

/// a + b rounded to odd: exact if representable, else the neighbour with an odd last bit. Rounding that to
/// a format at least two bits narrower gives the correctly rounded sum.
pub(super) fn round_to_odd_sum(a: f64, b: f64) -> f64 {
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
pub(super) fn div_fmas_f64(a: f64, b: f64, c: f64, vcc: bool) -> f64 {
    let r = a.mul_add(b, c);
    if !vcc {
        return r;
    }
    r * (2f64).powi(if exp_f64(c) > 1023 { 128 } else { -128 })
}

/// The special cases of a division num/den, shared by the f16/f32/f64 fix-ups; `min_exp_diff` is the
/// exponent difference below which the quotient rounds to zero.
pub(super) fn div_fixup(q: f64, den: f64, num: f64, min_exp_diff: i32, default_nan: f64) -> f64 {
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

pub(super) fn div_fixup_f32(q: f32, den: f32, num: f32) -> f32 {
    let (qb, db, nb) = (q.to_bits(), den.to_bits(), num.to_bits());
    if div_fixup_f32_plain(&mut Lane, qb, db, nb) {
        return f32::from_bits(div_fixup_f32_signed(&mut Lane, qb, db, nb));
    }
    div_fixup_f32_cases(q, den, num)
}

pub(super) fn div_fixup_f32_cases(q: f32, den: f32, num: f32) -> f32 {
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

pub(super) fn div_fixup_f64(q: f64, den: f64, num: f64) -> f64 {
    if num.is_nan() || den.is_nan() {
        let src = if num.is_nan() { num } else { den };
        return f64::from_bits(src.to_bits() | 1 << 51);
    }
    div_fixup(q, den, num, -1076, f64::from_bits(0xfff8_0000_0000_0000))
}
