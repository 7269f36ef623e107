//! Float helpers the lane functions and the interpreter share: scaling by a power of two, fractional part and
//! frexp, for f64 and f32.

/// 2^e as an f64, for `e` in the normal range -1022..=1023.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((0x3ff + e) as u64) << 52)
}

/// x * 2^e with one rounding, subnormal results included (v_ldexp_f64).
///
/// Large exponents are applied in steps that cannot round: upwards by 2^1023, which is exact until the
/// result overflows; downwards by 2^-969, which either stays in the normal range or leaves a remaining factor
/// below 2^-53 that takes the result under half the smallest subnormal, so only the last multiplication
/// rounds.
pub(crate) fn ldexp(x: f64, e: i32) -> f64 {
    let (mut x, mut e) = (x, e);
    if e > 1023 {
        x *= pow2(1023);
        e -= 1023;
        if e > 1023 {
            x *= pow2(1023);
            e = (e - 1023).min(1023);
        }
    } else if e < -1022 {
        x *= pow2(-969);
        e += 969;
        if e < -1022 {
            x *= pow2(-969);
            e = (e + 969).max(-1022);
        }
    }
    x * pow2(e)
}

/// x * 2^e with one rounding (v_ldexp_f32); exponents beyond any f32 result's reach are clamped first.
pub(crate) fn ldexp_f32(x: f32, e: i32) -> f32 {
    ((x as f64) * 2f64.powi(e.clamp(-400, 400))) as f32
}

/// x - floor(x), below 1; NaN and infinities give NaN (the hardware's v_fract).
pub(crate) fn fract_f64(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// x - floor(x), kept below 1 (v_fract_f32); NaN and infinities give NaN.
pub(crate) fn fract_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    (x - x.floor()).min(f32::from_bits(0x3f7f_ffff))
}

/// (mantissa in [0.5, 1) with x's sign, exponent); infinities and NaN give (x, 0).
pub(crate) fn frexp_f64(x: f64) -> (f64, i32) {
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

/// frexp: (mantissa in [0.5, 1) with x's sign, exponent); infinities and NaN give (x, 0), zero gives (x, 0).
pub(crate) fn frexp_f32(x: f32) -> (f32, i32) {
    if !x.is_finite() || x == 0.0 {
        return (x, 0);
    }
    let (scaled, bias) = if x.abs() < f32::MIN_POSITIVE {
        (x * 2f32.powi(32), 32)
    } else {
        (x, 0)
    };
    let bits = scaled.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 126;
    (f32::from_bits(bits & 0x807f_ffff | 126 << 23), exp - bias)
}
