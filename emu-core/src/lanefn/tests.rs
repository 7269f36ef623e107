//! Tests of the per-lane helper functions against their case-by-case definitions and known values.

use crate::rules::Lane;

use super::division::{
    div_fixup_f32, div_fixup_f32_cases, div_fixup_f32_plain, div_fixup_f32_signed, div_fmas_f32, div_scale_f32,
    div_scale_f32_cases, div_scale_f32_unscaled,
};
use super::f16::{f16_to_f64, f64_to_f16};
use super::float::ldexp;
use super::trig::{trig_preop, two_over_pi_bits};

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
fn ldexp_rounds_once_into_the_subnormals_and_keeps_zeros_and_infinities() {
    let b = f64::from_bits;
    // (x, e, x * 2^e correctly rounded)
    let cases = [
        // one step below the normal range and one rounding into the subnormals: 0x41b2.8... rounds up
        (0x3c40_6ca9_7114_cf80, -1001, 0x41b3),
        (0x7e38_e034_3a23_82be, -2048, 0x0063_80d1),
        // exactly half the smallest subnormal rounds to even (zero); one and a half of it rounds up
        (0x7fe0_0000_0000_0000, -2098, 0),
        (0x7fe8_0000_0000_0000, -2098, 1),
        (0x7fef_ffff_ffff_ffff, -2099, 0),
        // the smallest subnormal up to the largest power of two, and past it
        (1, 2097, 0x7fe0_0000_0000_0000),
        (1, 2098, 0x7ff0_0000_0000_0000),
        (0x3ff0_0000_0000_0000, i32::MAX, 0x7ff0_0000_0000_0000),
        (0x3ff0_0000_0000_0000, i32::MIN, 0),
        // zeros and infinities stay as they are for any exponent
        (0, 3000, 0),
        (0x8000_0000_0000_0000, i32::MAX, 0x8000_0000_0000_0000),
        (0x7ff0_0000_0000_0000, -3000, 0x7ff0_0000_0000_0000),
        (0xfff0_0000_0000_0000, i32::MIN, 0xfff0_0000_0000_0000),
    ];
    for (x, e, want) in cases {
        assert_eq!(ldexp(b(x), e).to_bits(), want, "ldexp({x:#x}, {e})");
    }
    assert!(ldexp(f64::NAN, 5000).is_nan() && ldexp(f64::NAN, -5000).is_nan());
    // within the normal range of 2^e it is one multiplication
    let mut next = xorshift(0x2545_f491);
    for _ in 0..20_000 {
        let x = b((next() as u64) << 32 | next() as u64);
        let e = (next() % 2046) as i32 - 1022;
        let want = x * 2f64.powi(e);
        assert!(
            ldexp(x, e).to_bits() == want.to_bits() || x.is_nan(),
            "ldexp({x:e}, {e})"
        );
    }
}

#[test]
fn min_max_order_signed_zeros_and_ignore_one_nan() {
    assert!(min_num(0.0, -0.0).is_sign_negative() && min_num(-0.0, 0.0).is_sign_negative());
    assert!(max_num(-0.0, 0.0).is_sign_positive() && max_num(0.0, -0.0).is_sign_positive());
    assert_eq!(min_num(f64::NAN, 2.0), 2.0);
    assert_eq!(max_num(3.0, f64::NAN), 3.0);
}
