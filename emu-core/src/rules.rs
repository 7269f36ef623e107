//! Rules both engines follow, each defined once: which orderings satisfy a compare predicate, the class test
//! of v_cmp_class on the bits of each float type, and the float results of the VALU (NaN propagation, IEEE
//! minNum/maxNum). The interpreter evaluates them on lane values; the JIT lowers the same descriptions to
//! Cranelift IR ([`Truth`] to a float or integer condition code, [`LaneAlgebra`] rules by instantiating them
//! over IR values), so neither engine states a rule of its own.

use std::cmp::Ordering;

use isa_amdgpu::table::{AtomicOp, CmpPred, Compare, DataType};

use crate::device::FineGrainedFloatAtomics;

/// The orderings for which a compare predicate holds: less, equal, greater, unordered (a NaN operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truth {
    pub lt: bool,
    pub eq: bool,
    pub gt: bool,
    pub unordered: bool,
}

/// A predicate's truth table. `Class` is not a comparison of two values: see [`class_of`].
pub const fn truth(pred: CmpPred) -> Truth {
    const fn t(lt: bool, eq: bool, gt: bool, unordered: bool) -> Truth {
        Truth { lt, eq, gt, unordered }
    }
    match pred {
        CmpPred::F | CmpPred::Class => t(false, false, false, false),
        CmpPred::Lt => t(true, false, false, false),
        CmpPred::Eq => t(false, true, false, false),
        CmpPred::Le => t(true, true, false, false),
        CmpPred::Gt => t(false, false, true, false),
        CmpPred::Lg => t(true, false, true, false),
        // integers are never unordered; ne of floats is not a gfx9 float predicate (neq is)
        CmpPred::Ne => t(true, false, true, true),
        CmpPred::Ge => t(false, true, true, false),
        CmpPred::O => t(true, true, true, false),
        CmpPred::U => t(false, false, false, true),
        CmpPred::Nge => t(true, false, false, true),
        CmpPred::Nlg => t(false, true, false, true),
        CmpPred::Ngt => t(true, true, false, true),
        CmpPred::Nle => t(false, false, true, true),
        CmpPred::Neq => t(true, false, true, true),
        CmpPred::Nlt => t(false, true, true, true),
        CmpPred::Tru => t(true, true, true, true),
    }
}

impl Truth {
    /// Whether the predicate holds for `ord` (`None`: unordered).
    pub const fn holds(self, ord: Option<Ordering>) -> bool {
        match ord {
            Some(Ordering::Less) => self.lt,
            Some(Ordering::Equal) => self.eq,
            Some(Ordering::Greater) => self.gt,
            None => self.unordered,
        }
    }
}

/// The classes of the class test, as bit numbers of its mask operand.
pub mod class {
    pub const SIGNALING_NAN: u32 = 0;
    pub const QUIET_NAN: u32 = 1;
    pub const NEG_INF: u32 = 2;
    pub const NEG_NORMAL: u32 = 3;
    pub const NEG_SUBNORMAL: u32 = 4;
    pub const NEG_ZERO: u32 = 5;
    pub const POS_ZERO: u32 = 6;
    pub const POS_SUBNORMAL: u32 = 7;
    pub const POS_NORMAL: u32 = 8;
    pub const POS_INF: u32 = 9;
}

/// (exponent bits, mantissa bits) of a float type.
const fn float_format(ty: DataType) -> (u32, u32) {
    match ty {
        DataType::F16 => (5, 10),
        DataType::Bf16 => (8, 7),
        DataType::F64 => (11, 52),
        _ => (8, 23),
    }
}

/// The class (a bit number of [`class`]) of a float of type `ty` given as its bits, decided on the bits of that
/// type: no conversion that could quiet a signalling NaN or make a subnormal normal.
pub const fn class_of(bits: u64, ty: DataType) -> u32 {
    let (e, m) = float_format(ty);
    let man = bits & ((1u64 << m) - 1);
    let exp = (bits >> m) & ((1u64 << e) - 1);
    let neg = (bits >> (e + m)) & 1 == 1;
    let all_ones = (1u64 << e) - 1;
    if exp == all_ones {
        if man == 0 {
            if neg {
                class::NEG_INF
            } else {
                class::POS_INF
            }
        } else if man >> (m - 1) & 1 == 1 {
            class::QUIET_NAN
        } else {
            class::SIGNALING_NAN
        }
    } else if exp == 0 {
        if man == 0 {
            if neg {
                class::NEG_ZERO
            } else {
                class::POS_ZERO
            }
        } else {
            if neg {
                class::NEG_SUBNORMAL
            } else {
                class::POS_SUBNORMAL
            }
        }
    } else {
        if neg {
            class::NEG_NORMAL
        } else {
            class::POS_NORMAL
        }
    }
}

/// `1 << class_of(x, ty)` for a float type of at most 32 bits (f16 and bf16 in the low bits of the word), over
/// [`LaneAlgebra`] so that compiled code decides the class test as [`class_of`] does: each class's condition
/// implies the one before it (nonzero, normal, infinite, NaN), so later selects override earlier ones.
pub fn class_bit<A: LaneAlgebra>(a: &mut A, x: A::W, ty: DataType) -> A::W {
    let (e, m) = float_format(ty);
    assert!(e + m < 32, "class_bit is for floats of at most 32 bits");
    let abs_mask = (1u32 << (e + m)) - 1;
    let inf = ((1u32 << e) - 1) << m;
    let word = if e + m == 31 {
        u32::MAX
    } else {
        (1u32 << (e + m + 1)) - 1
    };
    let (abs_c, word_c) = (a.constant(abs_mask), a.constant(word));
    let abs = a.and(x, abs_c);
    let low = a.and(x, word_c);
    let (t_zero, t_normal, t_inf) = (a.constant(0), a.constant((1 << m) - 1), a.constant(inf - 1));
    let (t_nan, t_quiet) = (a.constant(inf), a.constant(inf | ((1 << (m - 1)) - 1)));
    let neg = a.gt_u(low, abs_c);
    let nonzero = a.gt_u(abs, t_zero);
    let normal = a.gt_u(abs, t_normal);
    let infinite = a.gt_u(abs, t_inf);
    let nan = a.gt_u(abs, t_nan);
    let quiet = a.gt_u(abs, t_quiet);
    let pick = |a: &mut A, c: A::C, neg_class: u32, pos_class: u32| {
        let (n, p) = (a.constant(1 << neg_class), a.constant(1 << pos_class));
        a.select(c, n, p)
    };
    let zero = pick(a, neg, class::NEG_ZERO, class::POS_ZERO);
    let sub = pick(a, neg, class::NEG_SUBNORMAL, class::POS_SUBNORMAL);
    let norm = pick(a, neg, class::NEG_NORMAL, class::POS_NORMAL);
    let inf_bit = pick(a, neg, class::NEG_INF, class::POS_INF);
    let nan_bit = pick(a, quiet, class::QUIET_NAN, class::SIGNALING_NAN);
    let r = a.select(nonzero, sub, zero);
    let r = a.select(normal, norm, r);
    let r = a.select(infinite, inf_bit, r);
    a.select(nan, nan_bit, r)
}

/// The ordering of two lane values of type `ty` (raw bits in the low bits of each u64): integers by their
/// signedness, floats by value (`None` when either is NaN).
pub fn ordering(ty: DataType, a: u64, b: u64) -> Option<Ordering> {
    let bits = ty.bits();
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let (a, b) = (a & mask, b & mask);
    if ty.is_float() {
        let (x, y) = match ty {
            DataType::F16 => (crate::lanefn::f16_to_f64(a as u16), crate::lanefn::f16_to_f64(b as u16)),
            DataType::Bf16 => (
                f32::from_bits((a as u32) << 16) as f64,
                f32::from_bits((b as u32) << 16) as f64,
            ),
            DataType::F64 => (f64::from_bits(a), f64::from_bits(b)),
            _ => (f32::from_bits(a as u32) as f64, f32::from_bits(b as u32) as f64),
        };
        x.partial_cmp(&y)
    } else if ty.is_signed_int() {
        let sh = 64 - bits;
        Some(((a << sh) as i64 >> sh).cmp(&((b << sh) as i64 >> sh)))
    } else {
        Some(a.cmp(&b))
    }
}

/// One lane of a compare: `a` and `b` hold values of `c.ty` in their low bits (for the class test, `b` is the
/// mask of classes).
#[inline]
pub fn compare(c: Compare, a: u64, b: u64) -> bool {
    if c.pred == CmpPred::Class {
        return b >> class_of(a, c.ty) & 1 == 1;
    }
    truth(c.pred).holds(ordering(c.ty, a, b))
}

/// [`compare`] of `n` lanes at once, as a lane mask (bit i: lane i): `lane(i)` gives lane i's operands. The
/// type and predicate are resolved once, not per lane (the interpreter compares whole waves this way, also
/// for the address checks of the accesses the JIT hands it); every lane's bit is [`compare`]'s.
#[inline]
pub fn compare_lanes(c: Compare, n: usize, lane: impl Fn(usize) -> (u64, u64)) -> u64 {
    // branch-free per lane: (less, equal, greater) of the pair; none of them is unordered
    #[inline(always)]
    fn mask(
        n: usize,
        t: Truth,
        lane: impl Fn(usize) -> (u64, u64),
        ord: impl Fn(u64, u64) -> (bool, bool, bool),
    ) -> u64 {
        let mut m = 0u64;
        for i in 0..n {
            let (a, b) = lane(i);
            let (lt, eq, gt) = ord(a, b);
            let holds = (lt & t.lt) | (eq & t.eq) | (gt & t.gt) | (!(lt | eq | gt) & t.unordered);
            m |= (holds as u64) << i;
        }
        m
    }
    // (less, equal, greater): all false for an unordered (NaN) pair
    fn ord<T: PartialOrd>(a: T, b: T) -> (bool, bool, bool) {
        (a < b, a == b, a > b)
    }
    if c.pred == CmpPred::Class {
        let t = Truth {
            lt: true,
            eq: false,
            gt: false,
            unordered: false,
        };
        return mask(n, t, lane, |a, b| (b >> class_of(a, c.ty) & 1 == 1, false, true));
    }
    let t = truth(c.pred);
    match c.ty {
        DataType::U32 | DataType::B32 => mask(n, t, lane, |a, b| ord(a as u32, b as u32)),
        DataType::I32 => mask(n, t, lane, |a, b| ord(a as u32 as i32, b as u32 as i32)),
        DataType::U16 | DataType::B16 => mask(n, t, lane, |a, b| ord(a as u16, b as u16)),
        DataType::I16 => mask(n, t, lane, |a, b| ord(a as u16 as i16, b as u16 as i16)),
        DataType::U64 | DataType::B64 => mask(n, t, lane, ord),
        DataType::I64 => mask(n, t, lane, |a, b| ord(a as i64, b as i64)),
        DataType::F32 => mask(n, t, lane, |a, b| {
            ord(f32::from_bits(a as u32), f32::from_bits(b as u32))
        }),
        DataType::F64 => mask(n, t, lane, |a, b| ord(f64::from_bits(a), f64::from_bits(b))),
        ty => mask(n, t, lane, |a, b| match ordering(ty, a, b) {
            Some(o) => (o == Ordering::Less, o == Ordering::Equal, o == Ordering::Greater),
            None => (false, false, false),
        }),
    }
}

/// Operations on 32-bit lane words that the float rules below are written over. The interpreter provides them
/// on one lane's `u32` ([`Lane`]), the JIT on vectors of lanes as Cranelift values, so each rule has one
/// definition that both engines run.
pub trait LaneAlgebra {
    /// A 32-bit word of every lane.
    type W: Copy;
    /// A condition of every lane.
    type C: Copy;
    fn constant(&mut self, x: u32) -> Self::W;
    fn and(&mut self, a: Self::W, b: Self::W) -> Self::W;
    fn or(&mut self, a: Self::W, b: Self::W) -> Self::W;
    fn xor(&mut self, a: Self::W, b: Self::W) -> Self::W;
    /// a - b, wrapping.
    fn sub(&mut self, a: Self::W, b: Self::W) -> Self::W;
    /// a shifted right by `n` bits, zeros coming in.
    fn shr(&mut self, a: Self::W, n: u32) -> Self::W;
    /// a > b as unsigned integers.
    fn gt_u(&mut self, a: Self::W, b: Self::W) -> Self::C;
    /// Both conditions.
    fn both(&mut self, a: Self::C, b: Self::C) -> Self::C;
    /// c ? a : b.
    fn select(&mut self, c: Self::C, a: Self::W, b: Self::W) -> Self::W;
    /// The smaller of two f32 that are not NaN, -0 below +0 (IEEE 754-2019 minimum on ordered operands).
    fn fmin_ordered(&mut self, a: Self::W, b: Self::W) -> Self::W;
    /// The larger, +0 above -0.
    fn fmax_ordered(&mut self, a: Self::W, b: Self::W) -> Self::W;
}

/// The quiet bit of an f32 NaN.
pub const QUIET32: u32 = 0x0040_0000;
/// The quiet bit of an f64 NaN.
pub const QUIET64: u64 = 1 << 51;

/// Whether f32 `x` is a NaN.
#[inline(always)]
pub fn is_nan32<A: LaneAlgebra>(a: &mut A, x: A::W) -> A::C {
    let (abs, inf) = (a.constant(0x7fff_ffff), a.constant(0x7f80_0000));
    let m = a.and(x, abs);
    a.gt_u(m, inf)
}

/// NaN propagation of the VALU's f32 operations: the first NaN among `srcs` (in operand order) is the result,
/// quieted; otherwise `r`. Operations compute `r` on the host and apply this rule, so the result does not depend
/// on which NaN a host unit picks.
#[inline(always)]
pub fn propagate_nan32<A: LaneAlgebra>(a: &mut A, srcs: &[A::W], r: A::W) -> A::W {
    let quiet = a.constant(QUIET32);
    let mut out = r;
    for &s in srcs.iter().rev() {
        let n = is_nan32(a, s);
        let q = a.or(s, quiet);
        out = a.select(n, q, out);
    }
    out
}

/// v_min_f32 in IEEE mode (minNum): a NaN operand yields the other; two NaNs yield the second, quieted; -0 is
/// below +0.
#[inline(always)]
pub fn min_num32<A: LaneAlgebra>(a: &mut A, p: A::W, q: A::W) -> A::W {
    let m = a.fmin_ordered(p, q);
    min_max_nan(a, p, q, m)
}

/// v_max_f32 in IEEE mode (maxNum): as [`min_num32`], +0 above -0.
#[inline(always)]
pub fn max_num32<A: LaneAlgebra>(a: &mut A, p: A::W, q: A::W) -> A::W {
    let m = a.fmax_ordered(p, q);
    min_max_nan(a, p, q, m)
}

#[inline(always)]
fn min_max_nan<A: LaneAlgebra>(a: &mut A, p: A::W, q: A::W, m: A::W) -> A::W {
    let (pn, qn) = (is_nan32(a, p), is_nan32(a, q));
    let quiet = a.constant(QUIET32);
    let qq = a.or(q, quiet);
    let q_or_quiet = a.select(qn, qq, q);
    let r = a.select(qn, p, m);
    a.select(pn, q_or_quiet, r)
}

/// One lane's words as the interpreter computes them.
pub struct Lane;

impl LaneAlgebra for Lane {
    type W = u32;
    type C = bool;
    #[inline(always)]
    fn constant(&mut self, x: u32) -> u32 {
        x
    }
    #[inline(always)]
    fn and(&mut self, a: u32, b: u32) -> u32 {
        a & b
    }
    #[inline(always)]
    fn or(&mut self, a: u32, b: u32) -> u32 {
        a | b
    }
    #[inline(always)]
    fn xor(&mut self, a: u32, b: u32) -> u32 {
        a ^ b
    }
    #[inline(always)]
    fn sub(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    fn shr(&mut self, a: u32, n: u32) -> u32 {
        a >> n
    }
    #[inline(always)]
    fn gt_u(&mut self, a: u32, b: u32) -> bool {
        a > b
    }
    #[inline(always)]
    fn both(&mut self, a: bool, b: bool) -> bool {
        a && b
    }
    #[inline(always)]
    fn select(&mut self, c: bool, a: u32, b: u32) -> u32 {
        if c {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn fmin_ordered(&mut self, a: u32, b: u32) -> u32 {
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        if x < y || (x == y && a >> 31 == 1) {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn fmax_ordered(&mut self, a: u32, b: u32) -> u32 {
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        if x > y || (x == y && a >> 31 == 0) {
            a
        } else {
            b
        }
    }
}

/// [`propagate_nan32`] on one lane.
#[inline(always)]
pub fn nan32(srcs: &[u32], r: u32) -> u32 {
    propagate_nan32(&mut Lane, srcs, r)
}

/// NaN propagation of f64 operations: the first NaN among `srcs` is the result, quieted; otherwise `r`.
#[inline(always)]
pub fn nan64(srcs: &[u64], r: u64) -> u64 {
    const ABS: u64 = 0x7fff_ffff_ffff_ffff;
    match srcs.iter().find(|s| *s & ABS > 0x7ff0_0000_0000_0000) {
        Some(s) => s | QUIET64,
        None => r,
    }
}

/// IEEE minNum of f64 values (v_min_f64, the f64 atomic min): a NaN operand yields the other; -0 below +0.
pub fn min_num64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// IEEE maxNum of f64 values: +0 above -0.
pub fn max_num64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

/// The new value of a read-modify-write atomic of `bits` (32 or 64) from the old value and the operand, for the
/// operations with one operand (`None` for compare-and-swap, masked or, wrap and conditional exchange, whose
/// instructions take two). 32-bit operands arrive zero-extended and the result is truncated.
pub fn atomic(op: AtomicOp, old: u64, data: u64, bits: u32) -> Option<u64> {
    let wide = bits == 64;
    let mask = if wide { u64::MAX } else { u32::MAX as u64 };
    let (old, data) = (old & mask, data & mask);
    let signed = |v: u64| if wide { v as i64 } else { v as u32 as i32 as i64 };
    let f = |v: u64| {
        if wide {
            f64::from_bits(v)
        } else {
            f32::from_bits(v as u32) as f64
        }
    };
    let back = |x: f64| if wide { x.to_bits() } else { (x as f32).to_bits() as u64 };
    let halves = |g: fn(u16, u16) -> u16| {
        let lo = g(old as u16, data as u16) as u64;
        let hi = g((old >> 16) as u16, (data >> 16) as u16) as u64;
        hi << 16 | lo
    };
    let r = match op {
        AtomicOp::Add => old.wrapping_add(data),
        AtomicOp::Sub => old.wrapping_sub(data),
        AtomicOp::Rsub => data.wrapping_sub(old),
        AtomicOp::And => old & data,
        AtomicOp::Or => old | data,
        AtomicOp::Xor => old ^ data,
        AtomicOp::SMin => signed(old).min(signed(data)) as u64,
        AtomicOp::SMax => signed(old).max(signed(data)) as u64,
        AtomicOp::UMin => old.min(data),
        AtomicOp::UMax => old.max(data),
        AtomicOp::Swap => data,
        AtomicOp::Inc => {
            if old >= data {
                0
            } else {
                old + 1
            }
        }
        AtomicOp::Dec => {
            if old == 0 || old > data {
                data
            } else {
                old - 1
            }
        }
        // the float operations of the access's width (f32 sums are exact in f64, then rounded once)
        AtomicOp::AddF32 | AtomicOp::AddF64 => back(f(old) + f(data)),
        AtomicOp::MinF32 | AtomicOp::MinF64 => back(min_num64(f(old), f(data))),
        AtomicOp::MaxF32 | AtomicOp::MaxF64 => back(max_num64(f(old), f(data))),
        AtomicOp::PkAddF16 => {
            halves(|a, b| crate::lanefn::f64_to_f16(crate::lanefn::f16_to_f64(a) + crate::lanefn::f16_to_f64(b)))
        }
        AtomicOp::PkAddBf16 => {
            halves(|a, b| bf16_round(f32::from_bits((a as u32) << 16) + f32::from_bits((b as u32) << 16)))
        }
        // two conditional 32-bit writes: each half of data whose top bit is set replaces that half of memory,
        // without the top bit (64-bit only)
        AtomicOp::CondXchg if wide => {
            let half = |shift: u32| {
                let d = data >> shift & 0xffff_ffff;
                (if d >> 31 == 1 {
                    d & 0x7fff_ffff
                } else {
                    old >> shift & 0xffff_ffff
                }) << shift
            };
            half(0) | half(32)
        }
        AtomicOp::CmpSwap | AtomicOp::MskOr | AtomicOp::Wrap | AtomicOp::CondXchg => return None,
    };
    Some(r & mask)
}

/// Whether an atomic of `op` at `address` is a NOP that returns 0: a floating-point atomic on fine-grained
/// memory of a device that drops those ([`FineGrainedFloatAtomics`]).
pub fn atomic_dropped(
    op: AtomicOp,
    policy: FineGrainedFloatAtomics,
    mem: &crate::memory::DeviceMemory,
    address: u64,
) -> bool {
    let float = matches!(
        op,
        AtomicOp::AddF32
            | AtomicOp::AddF64
            | AtomicOp::MinF32
            | AtomicOp::MaxF32
            | AtomicOp::MinF64
            | AtomicOp::MaxF64
            | AtomicOp::PkAddF16
            | AtomicOp::PkAddBf16
    );
    float && policy == FineGrainedFloatAtomics::Dropped && mem.fine_grained(address)
}

/// The new value of an atomic with two operands `a` and `b` on `bits`-bit values (the ISA guides' DS
/// definitions): compare-and-swap, memory equal to `a` becomes `b`; masked or, (old & !a) | b; wrap,
/// old >= a ? old - a : old + b. None for the one-operand operations ([`atomic`]).
pub fn atomic2(op: AtomicOp, old: u64, a: u64, b: u64, bits: u32) -> Option<u64> {
    let mask = if bits == 64 { u64::MAX } else { u32::MAX as u64 };
    let (old, a, b) = (old & mask, a & mask, b & mask);
    let r = match op {
        AtomicOp::CmpSwap => {
            if old == a {
                b
            } else {
                old
            }
        }
        AtomicOp::MskOr => (old & !a) | b,
        AtomicOp::Wrap => {
            if old >= a {
                old - a
            } else {
                old.wrapping_add(b)
            }
        }
        _ => return None,
    };
    Some(r & mask)
}

/// An f32 rounded to bf16 (nearest even; NaN stays NaN).
fn bf16_round(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return (b >> 16) as u16 | 0x40;
    }
    let round = 0x7fff + (b >> 16 & 1);
    ((b + round) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_bit_over_lane_algebra_is_class_of() {
        for ty in [DataType::F32, DataType::F16, DataType::Bf16] {
            let check = |x: u32| {
                let narrow = match ty {
                    DataType::F32 => x as u64,
                    _ => (x & 0xffff) as u64,
                };
                assert_eq!(class_bit(&mut Lane, x, ty), 1 << class_of(narrow, ty), "{ty:?} {x:#x}");
            };
            for x in (0..=u32::MAX).step_by(65_537) {
                check(x);
            }
            for edge in [
                0u32,
                1,
                0x7f_ffff,
                0x80_0000,
                0x7f7f_ffff,
                0x7f80_0000,
                0x7f80_0001,
                0x7fbf_ffff,
                0x7fc0_0000,
                0x7fff_ffff,
                0x3ff,
                0x400,
                0x7bff,
                0x7c00,
                0x7c01,
                0x7dff,
                0x7e00,
                0x7fff,
                0x7f,
                0x80,
                0x7f7f,
                0x7f80,
                0x7f81,
                0x7fbf,
                0x7fc0,
            ] {
                for sign in [0, 0x8000, 0x8000_0000, 0xffff_0000] {
                    check(edge | sign);
                }
            }
        }
    }

    #[test]
    fn the_class_of_every_f16_f32_f64_kind_is_decided_on_its_own_bits() {
        use class::*;
        // (f16, f32, f64) bit patterns of each class
        let cases: [(u64, u64, u64, u32); 10] = [
            (0x7d00, 0x7fa0_0000, 0x7ff4_0000_0000_0000, SIGNALING_NAN),
            (0x7e00, 0x7fc0_0000, 0x7ff8_0000_0000_0000, QUIET_NAN),
            (0xfc00, 0xff80_0000, 0xfff0_0000_0000_0000, NEG_INF),
            (0xbc00, 0xbf80_0000, 0xbff0_0000_0000_0000, NEG_NORMAL),
            (0x8001, 0x8000_0003, 0x8000_0000_0000_0003, NEG_SUBNORMAL),
            (0x8000, 0x8000_0000, 0x8000_0000_0000_0000, NEG_ZERO),
            (0x0000, 0x0000_0000, 0x0000_0000_0000_0000, POS_ZERO),
            (0x03ff, 0x007f_ffff, 0x000f_ffff_ffff_ffff, POS_SUBNORMAL),
            (0x7bff, 0x7f7f_ffff, 0x7fef_ffff_ffff_ffff, POS_NORMAL),
            (0x7c00, 0x7f80_0000, 0x7ff0_0000_0000_0000, POS_INF),
        ];
        for (h, s, d, want) in cases {
            assert_eq!(class_of(h, DataType::F16), want, "f16 {h:#x}");
            assert_eq!(class_of(s, DataType::F32), want, "f32 {s:#x}");
            assert_eq!(class_of(d, DataType::F64), want, "f64 {d:#x}");
        }
    }

    #[test]
    fn unordered_predicates_hold_for_nan_and_ordered_ones_do_not() {
        let nan = 0x7fc0_0000u64;
        let one = 0x3f80_0000u64;
        for (pred, want) in [
            (CmpPred::Lt, false),
            (CmpPred::Nge, true),
            (CmpPred::Neq, true),
            (CmpPred::Lg, false),
            (CmpPred::U, true),
            (CmpPred::O, false),
        ] {
            assert_eq!(
                compare(
                    Compare {
                        pred,
                        ty: DataType::F32
                    },
                    nan,
                    one
                ),
                want,
                "{pred:?}"
            );
        }
        assert!(compare(
            Compare {
                pred: CmpPred::Lt,
                ty: DataType::I16
            },
            0xffff,
            1
        ));
        assert!(!compare(
            Compare {
                pred: CmpPred::Lt,
                ty: DataType::U16
            },
            0xffff,
            1
        ));
        assert!(compare(
            Compare {
                pred: CmpPred::Gt,
                ty: DataType::I64
            },
            1,
            u64::MAX
        ));
    }

    #[test]
    fn whole_wave_compares_give_every_lane_the_bit_of_the_one_lane_compare() {
        use CmpPred::*;
        let preds = [
            F, Lt, Eq, Le, Gt, Lg, Ne, Ge, O, U, Nge, Nlg, Ngt, Nle, Neq, Nlt, Tru, Class,
        ];
        let types = [
            DataType::F16,
            DataType::Bf16,
            DataType::F32,
            DataType::F64,
            DataType::I16,
            DataType::U16,
            DataType::I32,
            DataType::U32,
            DataType::B32,
            DataType::I64,
            DataType::U64,
            DataType::B64,
        ];
        // specials of each width (zeros, ones, sign bits, infinities, NaNs, denormals) and bits above a type's width
        let values: Vec<u64> = [
            0u64,
            1,
            2,
            0x8000,
            0x7c00,
            0x7e00,
            0xfc00,
            0x3c00,
            0xffff,
            0x8000_0000,
            0x7f80_0000,
            0x7fc0_0000,
            0xff80_0000,
            0x3f80_0000,
            0xffff_ffff,
            0x1_0000_0001,
            0x3ff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff0_0000_0000_0000,
            0x8000_0000_0000_0000,
            u64::MAX,
            0x3ff,
        ]
        .into_iter()
        .collect();
        let pairs: Vec<(u64, u64)> = values
            .iter()
            .flat_map(|&a| values.iter().map(move |&b| (a, b)))
            .collect();
        for ty in types {
            for pred in preds {
                let c = Compare { pred, ty };
                for chunk in pairs.chunks(64) {
                    let m = compare_lanes(c, chunk.len(), |i| chunk[i]);
                    for (i, &(a, b)) in chunk.iter().enumerate() {
                        assert_eq!(m >> i & 1 == 1, compare(c, a, b), "{pred:?} {ty:?} {a:#x} {b:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn float_atomics_on_fine_grained_memory_are_dropped_only_where_the_device_drops_them() {
        let mem = crate::memory::DeviceMemory::new(1 << 20).unwrap();
        let coarse = mem.allocate(64, crate::memory::AllocKind::Buffer, "coarse").unwrap();
        let fine = mem.allocate(64, crate::memory::AllocKind::Buffer, "fine").unwrap();
        mem.set_fine_grained(fine).unwrap();
        let policy = |id| crate::DevicePreset::by_name(id).unwrap().fine_grained_float_atomics;
        let (mi210, mi300x) = (policy("mi210"), policy("mi300x"));
        for op in [
            AtomicOp::AddF32,
            AtomicOp::AddF64,
            AtomicOp::MinF64,
            AtomicOp::MaxF64,
            AtomicOp::PkAddF16,
        ] {
            assert!(
                atomic_dropped(op, mi210, &mem, fine + 8),
                "{op:?} on MI210 fine-grained memory"
            );
            assert!(
                !atomic_dropped(op, mi210, &mem, coarse + 8),
                "{op:?} on coarse-grained memory"
            );
            assert!(!atomic_dropped(op, mi300x, &mem, fine + 8), "{op:?} on MI300X");
        }
        for op in [AtomicOp::Add, AtomicOp::CmpSwap, AtomicOp::Swap, AtomicOp::UMax] {
            assert!(
                !atomic_dropped(op, mi210, &mem, fine),
                "integer {op:?} reaches fine-grained memory"
            );
        }
        // the mark goes with the allocation
        mem.free(fine).unwrap();
        assert!(!mem.fine_grained(fine));
    }
}
