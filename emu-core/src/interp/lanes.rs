//! The interpreter's whole-wave arithmetic: VALU operations over every lane, with the NaN propagation they
//! share.

use crate::lanefn::float::{fract_f32, frexp_f32, ldexp_f32};
use crate::sem::{VOp, VUn};
use crate::wave::{Lanes, LANES};

fn zip(a: &Lanes, b: &Lanes, f: impl Fn(u32, u32) -> u32) -> Lanes {
    let mut r = [0u32; LANES];
    for i in 0..LANES {
        r[i] = f(a[i], b[i]);
    }
    r
}

pub(super) fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

/// NaN propagation of two-source f64 operations ([`crate::rules::nan64`]).
#[inline(always)]
pub(super) fn nan2_64(x: u64, y: u64, r: u64) -> u64 {
    crate::rules::nan64(&[x, y], r)
}

/// NaN propagation of two-source f32 operations ([`crate::rules::propagate_nan32`]): a NaN `x` gives `x`
/// quieted, else a NaN `y` gives `y` quieted, else the result `r`.
#[inline(always)]
pub(super) fn nan2(x: u32, y: u32, r: u32) -> u32 {
    crate::rules::nan32(&[x, y], r)
}

/// A 32-bit two-operand VALU op on every lane: the interpreter's, and the JIT's for operands it knows while
/// translating.
pub fn v_op_lanes(op: VOp, a: &Lanes, b: &Lanes) -> Lanes {
    match op {
        VOp::AddU32 => zip(a, b, u32::wrapping_add),
        VOp::SubU32 => zip(a, b, u32::wrapping_sub),
        VOp::MulLoU32 => zip(a, b, u32::wrapping_mul),
        VOp::MulHiU32 => zip(a, b, |x, y| ((x as u64 * y as u64) >> 32) as u32),
        VOp::MulHiI32 => zip(a, b, |x, y| ((x as i32 as i64 * y as i32 as i64) >> 32) as u32),
        VOp::MulU32U24 => zip(a, b, |x, y| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff)),
        VOp::MulI32I24 => zip(a, b, |x, y| {
            (((x << 8) as i32 >> 8) as i64 * ((y << 8) as i32 >> 8) as i64) as u32
        }),
        VOp::MinU32 => zip(a, b, u32::min),
        VOp::MaxU32 => zip(a, b, u32::max),
        VOp::MinI32 => zip(a, b, |x, y| (x as i32).min(y as i32) as u32),
        VOp::MaxI32 => zip(a, b, |x, y| (x as i32).max(y as i32) as u32),
        VOp::And => zip(a, b, |x, y| x & y),
        VOp::Or => zip(a, b, |x, y| x | y),
        VOp::Xor => zip(a, b, |x, y| x ^ y),
        VOp::Shl => zip(a, b, |x, s| x.wrapping_shl(s & 31)),
        VOp::Lshr => zip(a, b, |x, s| x.wrapping_shr(s & 31)),
        VOp::Ashr => zip(a, b, |x, s| ((x as i32) >> (s & 31)) as u32),
        VOp::AddF32 => zip(a, b, |x, y| nan2(x, y, (f(x) + f(y)).to_bits())),
        VOp::SubF32 => zip(a, b, |x, y| nan2(x, y, (f(x) - f(y)).to_bits())),
        VOp::MulF32 => zip(a, b, |x, y| nan2(x, y, (f(x) * f(y)).to_bits())),
        VOp::MinF32 => zip(a, b, |x, y| crate::rules::min_num32(&mut crate::rules::Lane, x, y)),
        VOp::MaxF32 => zip(a, b, |x, y| crate::rules::max_num32(&mut crate::rules::Lane, x, y)),
        VOp::LdexpF32 => zip(a, b, |x, y| ldexp_f32(f(x), y as i32).to_bits()),
    }
}

/// A 32-bit one-operand VALU op on every lane: the interpreter's, and the JIT's for an operand it knows while
/// translating.
pub fn v_un_lanes(op: VUn, a: &Lanes) -> Lanes {
    let g = |x: u32| -> u32 {
        match op {
            VUn::CvtF32U32 => (x as f32).to_bits(),
            VUn::CvtF32I32 => (x as i32 as f32).to_bits(),
            // float → int conversions saturate and send NaN to 0, like the hardware (and Rust's `as`)
            VUn::CvtU32F32 => f(x) as u32,
            VUn::CvtI32F32 => f(x) as i32 as u32,
            VUn::TruncF32 => f(x).trunc().to_bits(),
            VUn::FloorF32 => f(x).floor().to_bits(),
            VUn::RcpF32 => (1.0 / f(x)).to_bits(),
            VUn::SqrtF32 => f(x).sqrt().to_bits(),
            VUn::Not => !x,
            VUn::Bcnt => x.count_ones(),
            VUn::Brev => x.reverse_bits(),
            VUn::ExpF32 => f(x).exp2().to_bits(),
            VUn::LogF32 => f(x).log2().to_bits(),
            VUn::RndneF32 => f(x).round_ties_even().to_bits(),
            VUn::CeilF32 => f(x).ceil().to_bits(),
            VUn::FractF32 => fract_f32(f(x)).to_bits(),
            // computed in f64, rounded once
            VUn::RsqF32 => ((1.0 / (f(x) as f64).sqrt()) as f32).to_bits(),
            VUn::SinF32 => (((f(x) as f64) * std::f64::consts::TAU).sin() as f32).to_bits(),
            VUn::CosF32 => (((f(x) as f64) * std::f64::consts::TAU).cos() as f32).to_bits(),
            VUn::FrexpMantF32 => frexp_f32(f(x)).0.to_bits(),
            VUn::FrexpExpF32 => frexp_f32(f(x)).1 as u32,
            VUn::Ffbh => {
                if x == 0 {
                    u32::MAX
                } else {
                    x.leading_zeros()
                }
            }
            VUn::Ffbl => {
                if x == 0 {
                    u32::MAX
                } else {
                    x.trailing_zeros()
                }
            }
        }
    };
    // float results of a NaN input are that NaN, quieted (host libm may keep a signalling NaN as it is)
    let float_result = !matches!(
        op,
        VUn::CvtU32F32
            | VUn::CvtI32F32
            | VUn::CvtF32U32
            | VUn::CvtF32I32
            | VUn::Not
            | VUn::Bcnt
            | VUn::Brev
            | VUn::FrexpExpF32
            | VUn::Ffbh
            | VUn::Ffbl
    );
    let mut r = [0u32; LANES];
    for i in 0..LANES {
        r[i] = if float_result {
            nan2(a[i], a[i], g(a[i]))
        } else {
            g(a[i])
        };
    }
    r
}
