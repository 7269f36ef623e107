//! Vector compares (the semantics' `compare`): 32-bit, 16-bit, f32 and 64-bit integer predicates lowered
//! from their truth tables, the f32/f16 class test, and lane masks collapsed chunk by chunk.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::rules;
use emu_core::sem::{CmpPred, Compare, DataType};

use crate::backend::ir::{trusted, Chunks};
use crate::backend::lazy::all_uniform;
use crate::backend::types::{JitBackend, Vv, CHUNKS};
use crate::call::Op;
use crate::ctx::Ctx;

/// Lane mask `m` (none yet: 0) with the lanes of chunk `i` from `i32x4` lane mask `c` (all ones where set).
fn collapse_into(b: &mut FunctionBuilder<'_>, m: Option<Value>, c: Value, i: usize) -> Value {
    let bits = b.ins().vhigh_bits(types::I64, c);
    let bits = if i == 0 {
        bits
    } else {
        b.ins().ishl_imm(bits, 4 * i as i64)
    };
    match m {
        Some(m) => b.ins().bor(m, bits),
        None => bits,
    }
}

/// An integer predicate as a condition code, from its truth table; `Err` for the constant predicates.
fn int_cond(t: rules::Truth, signed: bool) -> Result<IntCC, bool> {
    use IntCC::*;
    Ok(match (t.lt, t.eq, t.gt, signed) {
        (false, false, false, _) => return Err(false),
        (true, true, true, _) => return Err(true),
        (false, true, false, _) => Equal,
        (true, false, true, _) => NotEqual,
        (true, false, false, false) => UnsignedLessThan,
        (true, true, false, false) => UnsignedLessThanOrEqual,
        (false, false, true, false) => UnsignedGreaterThan,
        (false, true, true, false) => UnsignedGreaterThanOrEqual,
        (true, false, false, true) => SignedLessThan,
        (true, true, false, true) => SignedLessThanOrEqual,
        (false, false, true, true) => SignedGreaterThan,
        (false, true, true, true) => SignedGreaterThanOrEqual,
    })
}

/// A float predicate as the compares every SIMD unit has — (compare, and-compare, negate) — from its truth
/// table: a predicate true when unordered is the negation of its ordered complement. `Err` for constants.
pub(super) fn float_cond(t: rules::Truth) -> Result<(FloatCC, Option<FloatCC>, bool), bool> {
    use FloatCC::*;
    let (lt, eq, gt, not) = if t.unordered {
        (!t.lt, !t.eq, !t.gt, true)
    } else {
        (t.lt, t.eq, t.gt, false)
    };
    let (cc, and) = match (lt, eq, gt) {
        (false, false, false) => return Err(not),
        (true, false, false) => (LessThan, None),
        (false, true, false) => (Equal, None),
        (true, true, false) => (LessThanOrEqual, None),
        (false, false, true) => (GreaterThan, None),
        (false, true, true) => (GreaterThanOrEqual, None),
        (true, false, true) => (Ordered, Some(NotEqual)),
        (true, true, true) => (Ordered, None),
    };
    Ok((cc, and, not))
}

/// A float predicate's mask over two float vectors, from [`float_cond`]'s (compare, and-compare, negate).
pub(super) fn float_mask(
    b: &mut FunctionBuilder<'_>,
    (cc, and, not): (FloatCC, Option<FloatCC>, bool),
    f: Value,
    g: Value,
) -> Value {
    let mut m = b.ins().fcmp(cc, f, g);
    if let Some(cc2) = and {
        let m2 = b.ins().fcmp(cc2, f, g);
        m = b.ins().band(m, m2);
    }
    if not {
        m = b.ins().bnot(m);
    }
    m
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// The class test of f32 or f16 values `a` against the class masks `x`, inline: the class's bit
    /// ([`rules::class_bit`], the rule the interpreter's [`rules::class_of`] is checked against) and the mask.
    fn v_cmp_class(&mut self, ty: DataType, a: Vv, x: Vv) -> Value {
        let mut mask = None;
        for i in 0..CHUNKS {
            let (ai, xi) = (self.ch(&a, i), self.ch(&x, i));
            let b = &mut *self.b;
            let mut al = Chunks(b);
            let bit = rules::class_bit(&mut al, ai, ty);
            let zero = rules::LaneAlgebra::constant(&mut al, 0);
            let hit = al.0.ins().band(bit, xi);
            let lanes = al.0.ins().icmp(IntCC::NotEqual, hit, zero);
            mask = Some(self.collapse_step(mask, lanes, i));
        }
        mask.expect("chunks")
    }

    /// Lane mask `m` (none yet: 0) with chunk `i`'s lanes from `i32x4` lane mask `c`, computed here: the partial
    /// mask is stored (to the context's sink), which makes Cranelift compute each chunk's part between its loads
    /// and the next chunk's instead of after all of them, with sixteen vectors of loads live (and spilled).
    pub(super) fn collapse_step(&mut self, m: Option<Value>, c: Value, i: usize) -> Value {
        let ctx = self.ctx;
        let b = &mut *self.b;
        let m = collapse_into(b, m, c, i);
        b.ins().store(trusted(), m, ctx, Ctx::SINK);
        m
    }

    /// The lane mask of `i32x4` lane mask `lanes` (all ones where set) computed from uniform operands: all lanes
    /// or none, as its first lane says.
    pub(super) fn uniform_mask(&mut self, lanes: Value) -> Value {
        let b = &mut *self.b;
        let x = b.ins().extractlane(lanes, 0);
        let m = b.ins().sextend(types::I64, x);
        self.cache.uniform_masks.push(m);
        m
    }

    /// [`Backend::v_cmp`](emu_core::sem::Backend::v_cmp).
    pub(super) fn emit_v_cmp(&mut self, c: Compare, a: Vv, x: Vv) -> Value {
        // 32-bit integer and f32 compares inline, lowered from the predicate's truth table (rules::truth); other
        // types and the class test on the interpreter
        enum P {
            I(IntCC),
            /// 16-bit integers in the low halves, compared as 32-bit ones after sign or zero extension
            I16(IntCC, bool),
            F(FloatCC, Option<FloatCC>, bool),
            Const(bool),
        }
        if c.pred == CmpPred::Class && matches!(c.ty, DataType::F32 | DataType::F16) {
            return self.v_cmp_class(c.ty, a, x);
        }
        let t = rules::truth(c.pred);
        let p = match c.ty {
            _ if c.pred == CmpPred::Class => None,
            DataType::U32 | DataType::I32 | DataType::B32 => Some(match int_cond(t, c.ty.is_signed_int()) {
                Ok(cc) => P::I(cc),
                Err(k) => P::Const(k),
            }),
            DataType::U16 | DataType::I16 | DataType::B16 => Some(match int_cond(t, c.ty.is_signed_int()) {
                Ok(cc) => P::I16(cc, c.ty.is_signed_int()),
                Err(k) => P::Const(k),
            }),
            DataType::F32 => Some(match float_cond(t) {
                Ok((cc, and, not)) => P::F(cc, and, not),
                Err(k) => P::Const(k),
            }),
            _ => None,
        };
        let Some(p) = p else {
            return self.call(Op::VCmp { c }, &[a, x], &[], &[], 0, 0, 1, false).2[0];
        };
        let b = &mut *self.b;
        if let P::Const(k) = p {
            return b.ins().iconst(types::I64, if k { -1 } else { 0 });
        }
        self.park_in_place(&a);
        self.park_in_place(&x);
        let uniform = all_uniform([&a, &x].into_iter());
        let mut mask = None;
        for i in 0..CHUNKS {
            let (ai, xi) = (self.ch(&a, i), self.ch(&x, i));
            let b = &mut *self.b;
            let lanes = match p {
                P::I(cc) => b.ins().icmp(cc, ai, xi),
                P::I16(cc, signed) => {
                    let [ai, xi] = [ai, xi].map(|v| {
                        let up = b.ins().ishl_imm(v, 16);
                        if signed {
                            b.ins().sshr_imm(up, 16)
                        } else {
                            b.ins().ushr_imm(up, 16)
                        }
                    });
                    b.ins().icmp(cc, ai, xi)
                }
                P::F(cc, and, not) => {
                    let (f, g) = (Self::to_f(b, ai), Self::to_f(b, xi));
                    let m = float_mask(b, (cc, and, not), f, g);
                    Self::to_i(b, m)
                }
                P::Const(_) => unreachable!("constants return above"),
            };
            if uniform {
                return self.uniform_mask(lanes);
            }
            mask = Some(self.collapse_step(mask, lanes, i));
        }
        mask.expect("chunks")
    }

    /// [`Backend::v_cmp64`](emu_core::sem::Backend::v_cmp64).
    pub(super) fn emit_v_cmp64(&mut self, c: Compare, a: (Vv, Vv), x: (Vv, Vv)) -> Value {
        // 64-bit integer compares inline from the predicate's truth table (rules::truth): the high halves decide
        // (signed or not), equal high halves leave it to the low halves (unsigned); f64 and the class test on
        // the interpreter
        if c.ty == DataType::F64 && c.pred != CmpPred::Class {
            return self.v_cmp_f64(c, a, x);
        }
        let signed = match c.ty {
            _ if c.pred == CmpPred::Class => None,
            DataType::I64 => Some(true),
            DataType::U64 | DataType::B64 => Some(false),
            _ => None,
        };
        let Some(signed) = signed else {
            return self
                .call(Op::Cmp64 { c }, &[a.0, a.1, x.0, x.1], &[], &[], 0, 0, 1, false)
                .2[0];
        };
        let t = rules::truth(c.pred);
        let b = &mut *self.b;
        if !(t.lt || t.eq || t.gt) || (t.lt && t.eq && t.gt) {
            return b.ins().iconst(types::I64, if t.lt { -1 } else { 0 });
        }
        let (hlt, hgt) = if signed {
            (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
        } else {
            (IntCC::UnsignedLessThan, IntCC::UnsignedGreaterThan)
        };
        for v in [&a.0, &a.1, &x.0, &x.1] {
            self.park_in_place(v);
        }
        let uniform = all_uniform([&a.0, &a.1, &x.0, &x.1].into_iter());
        let mut mask = None;
        for i in 0..CHUNKS {
            let (alo, ahi, xlo, xhi) = (self.ch(&a.0, i), self.ch(&a.1, i), self.ch(&x.0, i), self.ch(&x.1, i));
            let b = &mut *self.b;
            let hi_eq = b.ins().icmp(IntCC::Equal, ahi, xhi);
            let mut m = None;
            let mut or = |b: &mut FunctionBuilder, v: Value| {
                m = Some(match m {
                    None => v,
                    Some(p) => b.ins().bor(p, v),
                })
            };
            if t.eq {
                let lo_eq = b.ins().icmp(IntCC::Equal, alo, xlo);
                let e = b.ins().band(hi_eq, lo_eq);
                or(b, e);
            }
            for (want, hcc, lcc) in [
                (t.lt, hlt, IntCC::UnsignedLessThan),
                (t.gt, hgt, IntCC::UnsignedGreaterThan),
            ] {
                if want {
                    let h = b.ins().icmp(hcc, ahi, xhi);
                    let l = b.ins().icmp(lcc, alo, xlo);
                    let l = b.ins().band(hi_eq, l);
                    let v = b.ins().bor(h, l);
                    or(b, v);
                }
            }
            let lanes = m.expect("a predicate that is not constant");
            if uniform {
                return self.uniform_mask(lanes);
            }
            mask = Some(self.collapse_step(mask, lanes, i));
        }
        mask.expect("chunks")
    }
}
