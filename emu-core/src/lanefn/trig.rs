//! v_trig_preop_f64: 53-bit segments of 2/pi for Payne-Hanek reduction.

use super::division::exp_f64;
use super::float::ldexp;

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
pub(super) fn two_over_pi_bits(start: u32) -> u64 {
    let mut v = 0u64;
    for i in start..start + 53 {
        let bit = TWO_OVER_PI.get((i / 64) as usize).map_or(0, |w| w >> (63 - i % 64) & 1);
        v = v << 1 | bit;
    }
    v
}

/// v_trig_preop_f64: segment `seg` (0..31) of 2/pi, 53 bits, shifted past x's large exponents, as a double.
pub(super) fn trig_preop(x: f64, seg: u32) -> f64 {
    let e = exp_f64(x);
    let shift = (e - 1077).max(0) as u32;
    let start = (seg & 31) * 53 + shift;
    let mut scale = -53 - start as i32;
    if e >= 1968 {
        scale += 128;
    }
    ldexp(two_over_pi_bits(start) as f64, scale)
}
