//! Scalar operations (the semantics' `salu`): SGPRs, SCC, EXEC and lane masks as values of the block.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::sem::{Backend, MaskOp, SOp};
use emu_core::wave::{sgpr_slot, sreg};

use crate::backend::ir::{trusted, vflags};
use crate::backend::types::JitBackend;
use crate::ctx::Ctx;

/// The address of SGPR slot `index & 127` (as [`sgpr_slot`] wraps it) in the file at `sg`, and whether it is the
/// null register.
fn sgpr_at(b: &mut FunctionBuilder<'_>, sg: Value, index: Value) -> (Value, Value) {
    let slot = b.ins().band_imm(index, 127);
    let null = b.ins().icmp_imm(IntCC::Equal, slot, sreg::NULL as i64);
    let off = b.ins().uextend(types::I64, slot);
    let off = b.ins().ishl_imm(off, 2);
    (b.ins().iadd(sg, off), null)
}

impl<'a, 'f> JitBackend<'a, 'f> {
    fn ptr_field(&mut self, offset: i32) -> Value {
        let ctx = self.ctx;
        let b = &mut *self.b;
        b.ins().load(types::I64, trusted(), ctx, offset)
    }

    /// [`Backend::s_const`].
    pub(super) fn emit_s_const(&mut self, x: u32) -> Value {
        self.b.ins().iconst(types::I32, x as i32 as i64)
    }

    /// [`Backend::s_get`].
    pub(super) fn emit_s_get(&mut self, reg: u32) -> Value {
        let Some(slot) = sgpr_slot(reg) else {
            return self.s_const(0);
        };
        if let Some(&(_, v)) = self.cache.sgpr_halves.iter().find(|(k, _)| *k == slot) {
            return v;
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = &mut *self.b;
        b.ins().load(types::I32, trusted(), sg, slot as i32 * 4)
    }

    /// [`Backend::s_set`].
    pub(super) fn emit_s_set(&mut self, reg: u32, v: Value) {
        let Some(slot) = sgpr_slot(reg) else { return };
        let reg = slot;
        if reg == sreg::EXEC_LO as usize || reg == sreg::EXEC_LO as usize + 1 {
            self.forget_exec();
        }
        let main = self.guard_end.is_none();
        let c = &mut *self.cache;
        c.sgpr_halves.retain(|(k, _)| *k != reg);
        if main && c.halves.iter().any(|&(lo, hi, _)| v == lo || v == hi) {
            c.sgpr_halves.push((reg, v));
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = &mut *self.b;
        b.ins().store(trusted(), v, sg, reg as i32 * 4);
    }

    /// [`Backend::s_get_at`].
    pub(super) fn emit_s_get_at(&mut self, index: Value) -> Value {
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = &mut *self.b;
        let (at, null) = sgpr_at(b, sg, index);
        let v = b.ins().load(types::I32, trusted(), at, 0);
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().select(null, zero, v)
    }

    /// [`Backend::s_set_at`].
    pub(super) fn emit_s_set_at(&mut self, index: Value, v: Value) {
        // any register, EXEC among them
        self.forget_exec();
        self.cache.sgpr_halves.clear();
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = &mut *self.b;
        let (at, null) = sgpr_at(b, sg, index);
        // the null register keeps what it holds
        let old = b.ins().load(types::I32, trusted(), at, 0);
        let v = b.ins().select(null, old, v);
        b.ins().store(trusted(), v, at, 0);
    }

    /// [`Backend::s_op`].
    pub(super) fn emit_s_op(&mut self, op: SOp, a: Value, x: Value) -> Value {
        let b = &mut *self.b;
        match op {
            SOp::Add => b.ins().iadd(a, x),
            SOp::Sub => b.ins().isub(a, x),
            SOp::Mul => b.ins().imul(a, x),
            SOp::MulHiU32 => b.ins().umulhi(a, x),
            SOp::MulHiI32 => b.ins().smulhi(a, x),
            SOp::And => b.ins().band(a, x),
            SOp::Or => b.ins().bor(a, x),
            SOp::Xor => b.ins().bxor(a, x),
            SOp::Shl => b.ins().ishl(a, x),
            SOp::Lshr => b.ins().ushr(a, x),
            SOp::Ashr => b.ins().sshr(a, x),
            SOp::LtU | SOp::LtI | SOp::Eq => {
                let cc = match op {
                    SOp::LtU => IntCC::UnsignedLessThan,
                    SOp::LtI => IntCC::SignedLessThan,
                    _ => IntCC::Equal,
                };
                let c = b.ins().icmp(cc, a, x);
                b.ins().uextend(types::I32, c)
            }
            SOp::Brev => b.ins().bitrev(a),
            SOp::Ff1 => {
                let t = b.ins().ctz(a);
                let zero = b.ins().icmp_imm(IntCC::Equal, a, 0);
                let ones = b.ins().iconst(types::I32, -1);
                b.ins().select(zero, ones, t)
            }
        }
    }

    /// [`Backend::s_add_carry`].
    pub(super) fn emit_s_add_carry(&mut self, a: Value, x: Value, carry_in: Value) -> (Value, Value) {
        let b = &mut *self.b;
        let (a, x) = (b.ins().uextend(types::I64, a), b.ins().uextend(types::I64, x));
        let c = b.ins().band_imm(carry_in, 1);
        let c = b.ins().uextend(types::I64, c);
        let s = b.ins().iadd(a, x);
        let s = b.ins().iadd(s, c);
        let lo = b.ins().ireduce(types::I32, s);
        let hi = b.ins().ushr_imm(s, 32);
        (lo, b.ins().ireduce(types::I32, hi))
    }

    /// [`Backend::scc`].
    pub(super) fn emit_scc(&mut self) -> Value {
        let ctx = self.ctx;
        self.b.ins().load(types::I32, trusted(), ctx, Ctx::SCC)
    }

    /// [`Backend::s_select`].
    pub(super) fn emit_s_select(&mut self, cond: Value, x: Value, a: Value) -> Value {
        let b = &mut *self.b;
        let c = b.ins().band_imm(cond, 1);
        b.ins().select(c, x, a)
    }

    /// [`Backend::set_scc`].
    pub(super) fn emit_set_scc(&mut self, v: Value) {
        let ctx = self.ctx;
        let b = &mut *self.b;
        let v = b.ins().band_imm(v, 1);
        b.ins().store(trusted(), v, ctx, Ctx::SCC);
    }

    /// [`Backend::s_nonzero`].
    pub(super) fn emit_s_nonzero(&mut self, v: Value) -> Value {
        let b = &mut *self.b;
        let c = b.ins().icmp_imm(IntCC::NotEqual, v, 0);
        b.ins().uextend(types::I32, c)
    }

    /// [`Backend::mask_from`].
    pub(super) fn emit_mask_from(&mut self, lo: Value, hi: Value) -> Value {
        if let Some(&(.., m)) = self.cache.halves.iter().find(|h| (h.0, h.1) == (lo, hi)) {
            return m;
        }
        let b = &mut *self.b;
        let lo = b.ins().uextend(types::I64, lo);
        let hi = b.ins().uextend(types::I64, hi);
        let hi = b.ins().ishl_imm(hi, 32);
        b.ins().bor(lo, hi)
    }

    /// [`Backend::mask_parts`].
    pub(super) fn emit_mask_parts(&mut self, m: Value) -> (Value, Value) {
        let b = &mut *self.b;
        let lo = b.ins().ireduce(types::I32, m);
        let hi = b.ins().ushr_imm(m, 32);
        let hi = b.ins().ireduce(types::I32, hi);
        self.cache.halves.push((lo, hi, m));
        (lo, hi)
    }

    /// [`Backend::exec`].
    pub(super) fn emit_exec(&mut self) -> Value {
        // outside a guard's compiled path, code here dominates the rest of the block: EXEC loaded (or set) by an
        // earlier instruction is reused, and a load here is kept for later ones
        let main = self.guard_end.is_none();
        if let Some(e) = self.cache.exec.filter(|_| main) {
            return e;
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = &mut *self.b;
        let e = b.ins().load(types::I64, vflags(), sg, sreg::EXEC_LO as i32 * 4);
        if main {
            self.cache.exec = Some(e);
        }
        e
    }

    /// [`Backend::set_exec`].
    pub(super) fn emit_set_exec(&mut self, m: Value) {
        let main = self.guard_end.is_none();
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = &mut *self.b;
        b.ins().store(vflags(), m, sg, sreg::EXEC_LO as i32 * 4);
        let c = &mut *self.cache;
        c.exec = main.then_some(m);
        c.sgpr_halves
            .retain(|(k, _)| *k != sreg::EXEC_LO as usize && *k != sreg::EXEC_LO as usize + 1);
    }

    /// [`Backend::mask_op`].
    pub(super) fn emit_mask_op(&mut self, op: MaskOp, a: Value, x: Value) -> Value {
        let b = &mut *self.b;
        let r = match op {
            MaskOp::And => b.ins().band(a, x),
            MaskOp::Or => b.ins().bor(a, x),
            MaskOp::Xor => b.ins().bxor(a, x),
            MaskOp::AndNot => b.ins().band_not(a, x),
        };
        if op == MaskOp::And {
            let c = &mut *self.cache;
            for (u, e) in [(a, x), (x, a)] {
                if c.exec == Some(e) && c.uniform_masks.contains(&u) {
                    c.exec_masked.push((r, u, e));
                    break;
                }
            }
        }
        r
    }

    /// [`Backend::s_shl64`].
    pub(super) fn emit_s_shl64(&mut self, lo: Value, hi: Value, amount: Value) -> (Value, Value) {
        let m = self.mask_from(lo, hi);
        let b = &mut *self.b;
        let a = b.ins().band_imm(amount, 63);
        let a = b.ins().uextend(types::I64, a);
        let r = b.ins().ishl(m, a);
        self.mask_parts(r)
    }

    /// [`Backend::s_shr64`].
    pub(super) fn emit_s_shr64(&mut self, lo: Value, hi: Value, amount: Value, signed: bool) -> (Value, Value) {
        let m = self.mask_from(lo, hi);
        let b = &mut *self.b;
        let a = b.ins().band_imm(amount, 63);
        let a = b.ins().uextend(types::I64, a);
        let r = if signed { b.ins().sshr(m, a) } else { b.ins().ushr(m, a) };
        self.mask_parts(r)
    }

    /// [`Backend::s_popcount64`].
    pub(super) fn emit_s_popcount64(&mut self, lo: Value, hi: Value) -> Value {
        let m = self.mask_from(lo, hi);
        let b = &mut *self.b;
        let c = b.ins().popcnt(m);
        b.ins().ireduce(types::I32, c)
    }
}
