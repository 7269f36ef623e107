//! Float helpers the other helper functions share: scaling by a power of two, fractional part, frexp.

pub(super) fn ldexp(x: f64, e: i32) -> f64 {
    // two steps keep intermediate powers of two representable
    let e = e.clamp(-2200, 2200);
    let half = e / 2;
    x * (2f64).powi(half) * (2f64).powi(e - half)
}

/// x - floor(x), below 1; NaN and infinities give NaN (the hardware's v_fract).
pub(super) fn fract_f64(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// (mantissa in [0.5, 1) with x's sign, exponent); infinities and NaN give (x, 0).
pub(super) fn frexp_f64(x: f64) -> (f64, i32) {
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
