//! The JIT's [`Backend`]: the same semantics (`emu_core::sem`) that the interpreter executes, lowered to
//! Cranelift IR. A uniform value is an `i32`, a lane mask an `i64`, a whole-wave vector sixteen `i32x4`s.
//! Registers live in the wave's memory (read and written by every instruction), so compiled instructions and
//! interpreted ones (the fallback) can follow each other freely.
//!
//! The backend also runs in *probe* mode, without a function builder, to find out whether every operation an
//! instruction needs is one it can emit; instructions that are not are left to the interpreter.

// chunk loops index several 16-element arrays in step; an index reads better than zipped iterators
#![allow(clippy::needless_range_loop)]

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, MemFlags, Type, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::lanefn::LaneFn;
use emu_core::sem::{AtomicOp, Backend, ExecError, MaskOp, Mfma, SOp, VCmp, VCmp64, VCvt, VOp, VOp64, VUn, VUn64};

use crate::ctx::{Ctx, MASK_TABLE};

const CHUNKS: usize = 16;
const I32X4: Type = types::I32X4;
const F32X4: Type = types::F32X4;

/// A whole-wave vector: sixteen `i32x4` chunks, and the scalar it was splat from (lets shifts by a uniform
/// amount use a scalar shift).
#[derive(Clone, Copy)]
pub struct Vv {
    c: [Value; CHUNKS],
    uniform: Option<Value>,
}

/// Vector register values already in SSA form in the block being compiled (read or written by an earlier
/// instruction on every path to here): reading one again needs no load. Registers are still stored on every
/// write, so memory is always current; the block compiler clears the cache where code it does not see runs
/// (interpreter fallbacks) and at a loop's head.
#[derive(Default)]
pub struct RegCache {
    vgprs: std::collections::HashMap<u32, Vv>,
    agprs: std::collections::HashMap<u32, Vv>,
}

impl RegCache {
    pub fn clear(&mut self) {
        self.vgprs.clear();
        self.agprs.clear();
    }
}

/// Emits (or, with no builder, probes) one instruction at a time.
pub struct JitBackend<'a, 'f> {
    b: Option<&'a mut FunctionBuilder<'f>>,
    cache: Option<&'a mut RegCache>,
    ctx: Value,
    /// The first operation this backend cannot emit, if any.
    pub unsupported: Option<&'static str>,
    /// Highest VGPR / AGPR index touched (+1), so the caller can size the register files.
    pub vgprs_used: u32,
    pub agprs_used: u32,
}

fn dummy() -> Value {
    Value::new(0)
}

fn little() -> MemFlags {
    MemFlags::new().with_endianness(cranelift_codegen::ir::Endianness::Little)
}

fn trusted() -> MemFlags {
    MemFlags::trusted()
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// A backend that only checks what it could emit.
    pub fn probe() -> JitBackend<'static, 'static> {
        JitBackend { b: None, cache: None, ctx: dummy(), unsupported: None, vgprs_used: 0, agprs_used: 0 }
    }

    /// A backend emitting into `b`, with `ctx` the `*mut Ctx` parameter and the block's register cache.
    pub fn emit(b: &'a mut FunctionBuilder<'f>, cache: &'a mut RegCache, ctx: Value) -> JitBackend<'a, 'f> {
        JitBackend { b: Some(b), cache: Some(cache), ctx, unsupported: None, vgprs_used: 0, agprs_used: 0 }
    }

    fn cached(&mut self, agpr: bool, reg: u32) -> Option<Vv> {
        let c = self.cache.as_deref()?;
        if agpr { c.agprs.get(&reg) } else { c.vgprs.get(&reg) }.copied()
    }

    fn remember(&mut self, agpr: bool, reg: u32, v: Vv) {
        if let Some(c) = self.cache.as_deref_mut() {
            if agpr { &mut c.agprs } else { &mut c.vgprs }.insert(reg, Vv { uniform: None, ..v });
        }
    }

    fn load_reg(&mut self, base_field: i32, reg: u32) -> Vv {
        let agpr = base_field == Ctx::AGPRS;
        if let Some(v) = self.cached(agpr, reg) {
            return v;
        }
        let base = self.vreg_addr(base_field, reg);
        let b = self.b.as_deref_mut().expect("emitting");
        let mut c = [dummy(); CHUNKS];
        for (i, x) in c.iter_mut().enumerate() {
            *x = b.ins().load(I32X4, trusted(), base, 16 * i as i32);
        }
        let v = Vv { c, uniform: None };
        self.remember(agpr, reg, v);
        v
    }

    /// Register numbers past the architectural files (256 + a few for multi-dword operands) come only from
    /// invalid encodings: those instructions are left to the interpreter.
    fn reg_ok(&mut self, reg: u32) -> bool {
        if reg >= 272 {
            self.no("a register number outside the register file");
            return false;
        }
        true
    }

    /// Records that `what` cannot be emitted (the instruction goes to the interpreter).
    fn no(&mut self, what: &'static str) {
        if self.unsupported.is_none() {
            self.unsupported = Some(what);
        }
    }

    fn dv(&self) -> Vv {
        Vv { c: [dummy(); CHUNKS], uniform: None }
    }

    /// The builder, or None when probing (or when the instruction is already known unsupported).
    fn fb(&mut self) -> Option<&mut FunctionBuilder<'f>> {
        if self.unsupported.is_some() {
            return None;
        }
        self.b.as_deref_mut()
    }

    fn ptr_field(&mut self, offset: i32) -> Value {
        let ctx = self.ctx;
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().load(types::I64, trusted(), ctx, offset)
    }

    fn map_chunks(&mut self, a: Vv, f: impl Fn(&mut FunctionBuilder<'f>, Value) -> Value) -> Vv {
        let Some(b) = self.fb() else { return Vv { c: [dummy(); CHUNKS], uniform: None } };
        let mut c = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            c[i] = f(b, a.c[i]);
        }
        Vv { c, uniform: None }
    }

    fn zip_chunks(&mut self, a: Vv, x: Vv, f: impl Fn(&mut FunctionBuilder<'f>, Value, Value) -> Value) -> Vv {
        let Some(b) = self.fb() else { return Vv { c: [dummy(); CHUNKS], uniform: None } };
        let mut c = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            c[i] = f(b, a.c[i], x.c[i]);
        }
        Vv { c, uniform: None }
    }

    /// The sixteen `i32x4` lane masks (all ones where the mask bit is set) of a lane mask.
    fn expand(&mut self, m: Value) -> [Value; CHUNKS] {
        let Some(b) = self.fb() else { return [dummy(); CHUNKS] };
        let table = b.ins().iconst(types::I64, MASK_TABLE.as_ptr() as i64);
        let mut out = [dummy(); CHUNKS];
        for (i, o) in out.iter_mut().enumerate() {
            let bits = if i == 0 { m } else { b.ins().ushr_imm(m, 4 * i as i64) };
            let idx = b.ins().band_imm(bits, 15);
            let off = b.ins().imul_imm(idx, 16);
            let addr = b.ins().iadd(table, off);
            *o = b.ins().load(I32X4, trusted(), addr, 0);
        }
        out
    }

    /// The lane mask of sixteen `i32x4` lane masks.
    fn collapse(&mut self, v: [Value; CHUNKS]) -> Value {
        let Some(b) = self.fb() else { return dummy() };
        let mut m = b.ins().iconst(types::I64, 0);
        for (i, c) in v.iter().enumerate() {
            let bits = b.ins().vhigh_bits(types::I64, *c);
            let bits = if i == 0 { bits } else { b.ins().ishl_imm(bits, 4 * i as i64) };
            m = b.ins().bor(m, bits);
        }
        m
    }

    fn to_f(b: &mut FunctionBuilder<'f>, v: Value) -> Value {
        b.ins().bitcast(F32X4, little(), v)
    }

    fn to_i(b: &mut FunctionBuilder<'f>, v: Value) -> Value {
        b.ins().bitcast(I32X4, little(), v)
    }

    fn fbin(&mut self, a: Vv, x: Vv, op: impl Fn(&mut FunctionBuilder<'f>, Value, Value) -> Value) -> Vv {
        self.zip_chunks(a, x, |b, p, q| {
            let (fp, fq) = (Self::to_f(b, p), Self::to_f(b, q));
            let r = op(b, fp, fq);
            let r = Self::to_i(b, r);
            Self::nan2(b, p, q, r)
        })
    }

    /// The interpreter's explicit NaN propagation: a NaN `p` gives `p` quieted, else a NaN `q` gives `q`
    /// quieted, else `r` (all as i32x4 bit patterns).
    fn nan2(b: &mut FunctionBuilder<'f>, p: Value, q: Value, r: Value) -> Value {
        let k = |b: &mut FunctionBuilder<'f>, x: i64| {
            let c = b.ins().iconst(types::I32, x);
            b.ins().splat(I32X4, c)
        };
        let (abs, inf, quiet) = (k(b, 0x7fff_ffff), k(b, 0x7f80_0000), k(b, 0x0040_0000));
        let is_nan = |b: &mut FunctionBuilder<'f>, x: Value| {
            let m = b.ins().band(x, abs);
            b.ins().icmp(IntCC::UnsignedGreaterThan, m, inf)
        };
        let (pn, qn) = (is_nan(b, p), is_nan(b, q));
        let (pq, qq) = (b.ins().bor(p, quiet), b.ins().bor(q, quiet));
        let r = b.ins().bitselect(qn, qq, r);
        b.ins().bitselect(pn, pq, r)
    }

    /// IEEE minNum/maxNum (a NaN operand yields the other; both NaN: the second, quieted) as the interpreter
    /// computes v_min/max_f32.
    fn min_max(b: &mut FunctionBuilder<'f>, p: Value, q: Value, max: bool) -> Value {
        let (fp, fq) = (Self::to_f(b, p), Self::to_f(b, q));
        let m = if max { b.ins().fmax(fp, fq) } else { b.ins().fmin(fp, fq) };
        let m = Self::to_i(b, m);
        let p_nan = b.ins().fcmp(FloatCC::Unordered, fp, fp);
        let q_nan = b.ins().fcmp(FloatCC::Unordered, fq, fq);
        let quiet = b.ins().iconst(types::I32, 0x0040_0000);
        let quiet = b.ins().splat(I32X4, quiet);
        let q_quieted = b.ins().bor(q, quiet);
        let q_or_quiet = b.ins().bitselect(q_nan, q_quieted, q);
        let r = b.ins().bitselect(q_nan, p, m);
        b.ins().bitselect(p_nan, q_or_quiet, r)
    }

    /// Writes the lanes of `v` that `m` selects to register `reg` of the file at `base_field`; with every lane
    /// selected (the common case) a plain store, otherwise a blend with the old value.
    fn store_reg(&mut self, base_field: i32, reg: u32, v: Vv, m: Value) {
        if self.fb().is_none() {
            return;
        }
        let agpr = base_field == Ctx::AGPRS;
        // the old value (for the blend) comes from the cache when an earlier instruction had it
        let cached_old = self.cached(agpr, reg);
        let base = self.vreg_addr(base_field, reg);
        let done = {
            let b = self.b.as_deref_mut().expect("emitting");
            let all = b.ins().icmp_imm(IntCC::Equal, m, -1);
            let (full, masked, done) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..CHUNKS {
                b.append_block_param(done, I32X4);
            }
            b.ins().brif(all, full, &[], masked, &[]);
            b.switch_to_block(full);
            b.seal_block(full);
            for i in 0..CHUNKS {
                b.ins().store(trusted(), v.c[i], base, 16 * i as i32);
            }
            let args: Vec<_> = v.c.iter().map(|x| (*x).into()).collect();
            b.ins().jump(done, &args);
            b.switch_to_block(masked);
            b.seal_block(masked);
            done
        };
        let masks = self.expand(m);
        let b = self.b.as_deref_mut().expect("emitting");
        let mut blended = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            let old = match cached_old {
                Some(o) => o.c[i],
                None => b.ins().load(I32X4, trusted(), base, 16 * i as i32),
            };
            blended[i] = b.ins().bitselect(masks[i], v.c[i], old);
            b.ins().store(trusted(), blended[i], base, 16 * i as i32);
        }
        let args: Vec<_> = blended.iter().map(|x| (*x).into()).collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        b.seal_block(done);
        let mut c = [dummy(); CHUNKS];
        c.copy_from_slice(b.block_params(done));
        self.remember(agpr, reg, Vv { c, uniform: None });
    }

    fn vreg_addr(&mut self, base_field: i32, reg: u32) -> Value {
        let base = self.ptr_field(base_field);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().iadd_imm(base, reg as i64 * 256)
    }
}

impl Backend for JitBackend<'_, '_> {
    type S = Value;
    type V = Vv;
    type M = Value;

    fn s_const(&mut self, x: u32) -> Value {
        match self.fb() {
            Some(b) => b.ins().iconst(types::I32, x as i32 as i64),
            None => dummy(),
        }
    }
    fn s_get(&mut self, reg: u32) -> Value {
        if reg == 125 || reg > 127 {
            return self.s_const(0);
        }
        if self.fb().is_none() {
            return dummy();
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().load(types::I32, trusted(), sg, reg as i32 * 4)
    }
    fn s_set(&mut self, reg: u32, v: Value) {
        if reg == 125 || reg > 127 || self.fb().is_none() {
            return;
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().store(trusted(), v, sg, reg as i32 * 4);
    }
    fn s_op(&mut self, op: SOp, a: Value, x: Value) -> Value {
        let Some(b) = self.fb() else { return dummy() };
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
    fn s_add_carry(&mut self, a: Value, x: Value, carry_in: Value) -> (Value, Value) {
        let Some(b) = self.fb() else { return (dummy(), dummy()) };
        let (a, x) = (b.ins().uextend(types::I64, a), b.ins().uextend(types::I64, x));
        let c = b.ins().band_imm(carry_in, 1);
        let c = b.ins().uextend(types::I64, c);
        let s = b.ins().iadd(a, x);
        let s = b.ins().iadd(s, c);
        let lo = b.ins().ireduce(types::I32, s);
        let hi = b.ins().ushr_imm(s, 32);
        (lo, b.ins().ireduce(types::I32, hi))
    }
    fn scc(&mut self) -> Value {
        let ctx = self.ctx;
        match self.fb() {
            Some(b) => b.ins().load(types::I32, trusted(), ctx, Ctx::SCC),
            None => dummy(),
        }
    }
    fn s_select(&mut self, cond: Value, x: Value, a: Value) -> Value {
        let Some(b) = self.fb() else { return dummy() };
        let c = b.ins().band_imm(cond, 1);
        b.ins().select(c, x, a)
    }
    fn set_scc(&mut self, v: Value) {
        let ctx = self.ctx;
        let Some(b) = self.fb() else { return };
        let v = b.ins().band_imm(v, 1);
        b.ins().store(trusted(), v, ctx, Ctx::SCC);
    }
    fn s_nonzero(&mut self, v: Value) -> Value {
        let Some(b) = self.fb() else { return dummy() };
        let c = b.ins().icmp_imm(IntCC::NotEqual, v, 0);
        b.ins().uextend(types::I32, c)
    }
    fn mask_from(&mut self, lo: Value, hi: Value) -> Value {
        let Some(b) = self.fb() else { return dummy() };
        let lo = b.ins().uextend(types::I64, lo);
        let hi = b.ins().uextend(types::I64, hi);
        let hi = b.ins().ishl_imm(hi, 32);
        b.ins().bor(lo, hi)
    }
    fn mask_parts(&mut self, m: Value) -> (Value, Value) {
        let Some(b) = self.fb() else { return (dummy(), dummy()) };
        let lo = b.ins().ireduce(types::I32, m);
        let hi = b.ins().ushr_imm(m, 32);
        (lo, b.ins().ireduce(types::I32, hi))
    }
    fn exec(&mut self) -> Value {
        if self.fb().is_none() {
            return dummy();
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().load(types::I64, trusted(), sg, 126 * 4)
    }
    fn set_exec(&mut self, m: Value) {
        if self.fb().is_none() {
            return;
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().store(trusted(), m, sg, 126 * 4);
    }
    fn mask_op(&mut self, op: MaskOp, a: Value, x: Value) -> Value {
        let Some(b) = self.fb() else { return dummy() };
        match op {
            MaskOp::And => b.ins().band(a, x),
            MaskOp::Or => b.ins().bor(a, x),
            MaskOp::Xor => b.ins().bxor(a, x),
            MaskOp::AndNot => b.ins().band_not(a, x),
        }
    }

    fn v_get(&mut self, reg: u32) -> Vv {
        if !self.reg_ok(reg) {
            return self.dv();
        }
        self.vgprs_used = self.vgprs_used.max(reg + 1);
        if self.fb().is_none() {
            return self.dv();
        }
        self.load_reg(Ctx::VGPRS, reg)
    }
    fn v_set(&mut self, reg: u32, v: Vv, m: Value) {
        if !self.reg_ok(reg) {
            return;
        }
        self.vgprs_used = self.vgprs_used.max(reg + 1);
        self.store_reg(Ctx::VGPRS, reg, v, m);
    }
    fn a_get(&mut self, reg: u32) -> Vv {
        if !self.reg_ok(reg) {
            return self.dv();
        }
        self.agprs_used = self.agprs_used.max(reg + 1);
        if self.fb().is_none() {
            return self.dv();
        }
        self.load_reg(Ctx::AGPRS, reg)
    }
    fn a_set(&mut self, reg: u32, v: Vv, m: Value) {
        if !self.reg_ok(reg) {
            return;
        }
        self.agprs_used = self.agprs_used.max(reg + 1);
        self.store_reg(Ctx::AGPRS, reg, v, m);
    }
    fn v_splat(&mut self, s: Value) -> Vv {
        let Some(b) = self.fb() else { return Vv { c: [dummy(); CHUNKS], uniform: None } };
        let v = b.ins().splat(I32X4, s);
        Vv { c: [v; CHUNKS], uniform: Some(s) }
    }
    fn v_op(&mut self, op: VOp, a: Vv, x: Vv) -> Vv {
        match op {
            VOp::AddU32 => self.zip_chunks(a, x, |b, p, q| b.ins().iadd(p, q)),
            VOp::SubU32 => self.zip_chunks(a, x, |b, p, q| b.ins().isub(p, q)),
            VOp::MulLoU32 => self.zip_chunks(a, x, |b, p, q| b.ins().imul(p, q)),
            VOp::MinU32 => self.zip_chunks(a, x, |b, p, q| b.ins().umin(p, q)),
            VOp::MaxU32 => self.zip_chunks(a, x, |b, p, q| b.ins().umax(p, q)),
            VOp::MinI32 => self.zip_chunks(a, x, |b, p, q| b.ins().smin(p, q)),
            VOp::MaxI32 => self.zip_chunks(a, x, |b, p, q| b.ins().smax(p, q)),
            VOp::And => self.zip_chunks(a, x, |b, p, q| b.ins().band(p, q)),
            VOp::Or => self.zip_chunks(a, x, |b, p, q| b.ins().bor(p, q)),
            VOp::Xor => self.zip_chunks(a, x, |b, p, q| b.ins().bxor(p, q)),
            VOp::Shl | VOp::Lshr | VOp::Ashr => match x.uniform {
                // vector shifts take one scalar amount (masked to 0..31 like the instruction)
                Some(amount) => self.map_chunks(a, |b, p| match op {
                    VOp::Shl => b.ins().ishl(p, amount),
                    VOp::Lshr => b.ins().ushr(p, amount),
                    _ => b.ins().sshr(p, amount),
                }),
                None => {
                    self.no("per-lane shift amounts");
                    self.dv()
                }
            },
            VOp::AddF32 => self.fbin(a, x, |b, p, q| b.ins().fadd(p, q)),
            VOp::SubF32 => self.fbin(a, x, |b, p, q| b.ins().fsub(p, q)),
            VOp::MulF32 => self.fbin(a, x, |b, p, q| b.ins().fmul(p, q)),
            VOp::MinF32 => self.zip_chunks(a, x, |b, p, q| Self::min_max(b, p, q, false)),
            VOp::MaxF32 => self.zip_chunks(a, x, |b, p, q| Self::min_max(b, p, q, true)),
            VOp::MulHiU32 | VOp::MulHiI32 | VOp::MulU32U24 | VOp::MulI32I24 | VOp::LdexpF32 => {
                self.no("this vector operation");
                self.dv()
            }
        }
    }
    fn v_fma_f32(&mut self, a: Vv, x: Vv, c: Vv) -> Vv {
        let Some(b) = self.fb() else { return Vv { c: [dummy(); CHUNKS], uniform: None } };
        let mut out = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            let (p, q, r) = (Self::to_f(b, a.c[i]), Self::to_f(b, x.c[i]), Self::to_f(b, c.c[i]));
            let f = b.ins().fma(p, q, r);
            let f = Self::to_i(b, f);
            let f = Self::nan2(b, c.c[i], c.c[i], f);
            out[i] = Self::nan2(b, a.c[i], x.c[i], f);
        }
        Vv { c: out, uniform: None }
    }
    fn v_cmp(&mut self, op: VCmp, a: Vv, x: Vv) -> Value {
        // float predicates are built from the ones every SIMD unit has: (first, and-second, negate)
        enum P {
            I(IntCC),
            F(FloatCC, Option<FloatCC>, bool),
        }
        use FloatCC as F;
        let p = match op {
            VCmp::LtU32 => P::I(IntCC::UnsignedLessThan),
            VCmp::EqU32 | VCmp::EqI32 => P::I(IntCC::Equal),
            VCmp::LeU32 => P::I(IntCC::UnsignedLessThanOrEqual),
            VCmp::GtU32 => P::I(IntCC::UnsignedGreaterThan),
            VCmp::NeU32 | VCmp::NeI32 => P::I(IntCC::NotEqual),
            VCmp::GeU32 => P::I(IntCC::UnsignedGreaterThanOrEqual),
            VCmp::LtI32 => P::I(IntCC::SignedLessThan),
            VCmp::LeI32 => P::I(IntCC::SignedLessThanOrEqual),
            VCmp::GtI32 => P::I(IntCC::SignedGreaterThan),
            VCmp::GeI32 => P::I(IntCC::SignedGreaterThanOrEqual),
            VCmp::LtF32 => P::F(F::LessThan, None, false),
            VCmp::EqF32 => P::F(F::Equal, None, false),
            VCmp::LeF32 => P::F(F::LessThanOrEqual, None, false),
            VCmp::GtF32 => P::F(F::GreaterThan, None, false),
            VCmp::GeF32 => P::F(F::GreaterThanOrEqual, None, false),
            VCmp::NeqF32 => P::F(F::NotEqual, None, false),
            VCmp::LgF32 => P::F(F::Ordered, Some(F::NotEqual), false),
            VCmp::OF32 => P::F(F::Ordered, None, false),
            VCmp::UF32 => P::F(F::Unordered, None, false),
            VCmp::NlgF32 => P::F(F::Ordered, Some(F::NotEqual), true),
            VCmp::NltF32 => P::F(F::LessThan, None, true),
            VCmp::NgtF32 => P::F(F::GreaterThan, None, true),
            VCmp::NleF32 => P::F(F::LessThanOrEqual, None, true),
            VCmp::NgeF32 => P::F(F::GreaterThanOrEqual, None, true),
            VCmp::ClassF32 => {
                self.no("v_cmp_class");
                return dummy();
            }
        };
        let Some(b) = self.fb() else { return dummy() };
        let mut masks = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            masks[i] = match p {
                P::I(cc) => b.ins().icmp(cc, a.c[i], x.c[i]),
                P::F(cc, and, not) => {
                    let (f, g) = (Self::to_f(b, a.c[i]), Self::to_f(b, x.c[i]));
                    let mut m = b.ins().fcmp(cc, f, g);
                    if let Some(cc2) = and {
                        let m2 = b.ins().fcmp(cc2, f, g);
                        m = b.ins().band(m, m2);
                    }
                    if not {
                        m = b.ins().bnot(m);
                    }
                    Self::to_i(b, m)
                }
            };
        }
        self.collapse(masks)
    }
    fn v_add_carry(&mut self, a: Vv, x: Vv, carry_in: Option<Value>) -> (Vv, Value) {
        if self.fb().is_none() {
            return (self.dv(), dummy());
        }
        let cin = carry_in.map(|m| self.expand(m));
        let b = self.b.as_deref_mut().expect("emitting");
        let mut sum = [dummy(); CHUNKS];
        let mut carry = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            let s = b.ins().iadd(a.c[i], x.c[i]);
            let c = b.ins().icmp(IntCC::UnsignedLessThan, s, a.c[i]);
            (sum[i], carry[i]) = match cin {
                None => (s, c),
                Some(m) => {
                    // the carry-in lane mask is all ones (-1) where set: subtracting it adds 1
                    let s2 = b.ins().isub(s, m[i]);
                    let c2 = b.ins().icmp(IntCC::UnsignedLessThan, s2, s);
                    (s2, b.ins().bor(c, c2))
                }
            };
        }
        let m = self.collapse(carry);
        (Vv { c: sum, uniform: None }, m)
    }
    fn v_sub_borrow(&mut self, a: Vv, x: Vv, borrow_in: Option<Value>) -> (Vv, Value) {
        if self.fb().is_none() {
            return (self.dv(), dummy());
        }
        let bin = borrow_in.map(|m| self.expand(m));
        let b = self.b.as_deref_mut().expect("emitting");
        let mut diff = [dummy(); CHUNKS];
        let mut borrow = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            let d = b.ins().isub(a.c[i], x.c[i]);
            let w = b.ins().icmp(IntCC::UnsignedLessThan, a.c[i], x.c[i]);
            (diff[i], borrow[i]) = match bin {
                None => (d, w),
                Some(m) => {
                    // d + m subtracts 1 where the borrow-in mask is set; it borrows when d was 0 there
                    let d2 = b.ins().iadd(d, m[i]);
                    let zero = b.ins().iconst(types::I32, 0);
                    let zero = b.ins().splat(I32X4, zero);
                    let d_zero = b.ins().icmp(IntCC::Equal, d, zero);
                    let w2 = b.ins().band(d_zero, m[i]);
                    (d2, b.ins().bor(w, w2))
                }
            };
        }
        let m = self.collapse(borrow);
        (Vv { c: diff, uniform: None }, m)
    }
    fn v_un(&mut self, op: VUn, a: Vv) -> Vv {
        match op {
            VUn::Not => self.map_chunks(a, |b, p| b.ins().bnot(p)),
            VUn::CvtF32U32 => self.map_chunks(a, |b, p| {
                let f = b.ins().fcvt_from_uint(F32X4, p);
                Self::to_i(b, f)
            }),
            VUn::CvtF32I32 => self.map_chunks(a, |b, p| {
                let f = b.ins().fcvt_from_sint(F32X4, p);
                Self::to_i(b, f)
            }),
            VUn::CvtU32F32 => self.map_chunks(a, |b, p| {
                let f = Self::to_f(b, p);
                b.ins().fcvt_to_uint_sat(I32X4, f)
            }),
            VUn::CvtI32F32 => self.map_chunks(a, |b, p| {
                let f = Self::to_f(b, p);
                b.ins().fcvt_to_sint_sat(I32X4, f)
            }),
            VUn::TruncF32 | VUn::FloorF32 | VUn::CeilF32 | VUn::RndneF32 | VUn::SqrtF32 | VUn::RcpF32 => self.map_chunks(a, |b, p| {
                let f = Self::to_f(b, p);
                let r = match op {
                    VUn::TruncF32 => b.ins().trunc(f),
                    VUn::FloorF32 => b.ins().floor(f),
                    VUn::CeilF32 => b.ins().ceil(f),
                    VUn::RndneF32 => b.ins().nearest(f),
                    VUn::SqrtF32 => b.ins().sqrt(f),
                    _ => {
                        let one = b.ins().f32const(1.0);
                        let one = b.ins().splat(F32X4, one);
                        b.ins().fdiv(one, f)
                    }
                };
                Self::to_i(b, r)
            }),
            _ => {
                self.no("this unary vector operation");
                self.dv()
            }
        }
    }
    fn v_op64(&mut self, _: VOp64, _: (Vv, Vv), _: (Vv, Vv)) -> (Vv, Vv) {
        self.no("64-bit vector operations");
        (self.dv(), self.dv())
    }
    fn v_un64(&mut self, _: VUn64, _: (Vv, Vv)) -> (Vv, Vv) {
        self.no("64-bit vector operations");
        (self.dv(), self.dv())
    }
    fn v_fma_f64(&mut self, _: (Vv, Vv), _: (Vv, Vv), _: (Vv, Vv)) -> (Vv, Vv) {
        self.no("f64 fma");
        (self.dv(), self.dv())
    }
    fn v_cvt(&mut self, _: VCvt, _: (Vv, Vv)) -> (Vv, Vv) {
        self.no("f64 conversions");
        (self.dv(), self.dv())
    }
    fn v_cmp64(&mut self, _: VCmp64, _: (Vv, Vv), _: (Vv, Vv)) -> Value {
        self.no("64-bit compares");
        dummy()
    }
    fn v_select(&mut self, m: Value, a: Vv, x: Vv) -> Vv {
        if self.fb().is_none() {
            return self.dv();
        }
        let masks = self.expand(m);
        let b = self.b.as_deref_mut().expect("emitting");
        let mut c = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            c[i] = b.ins().bitselect(masks[i], x.c[i], a.c[i]);
        }
        Vv { c, uniform: None }
    }
    fn v_mad_u64_u32(&mut self, _: Vv, _: Vv, _: (Vv, Vv), _: bool) -> ((Vv, Vv), Value) {
        self.no("v_mad_u64_u32");
        ((self.dv(), self.dv()), dummy())
    }
    fn s_shl64(&mut self, lo: Value, hi: Value, amount: Value) -> (Value, Value) {
        let m = self.mask_from(lo, hi);
        let Some(b) = self.fb() else { return (dummy(), dummy()) };
        let a = b.ins().band_imm(amount, 63);
        let a = b.ins().uextend(types::I64, a);
        let r = b.ins().ishl(m, a);
        self.mask_parts(r)
    }
    fn s_shr64(&mut self, lo: Value, hi: Value, amount: Value, signed: bool) -> (Value, Value) {
        let m = self.mask_from(lo, hi);
        let Some(b) = self.fb() else { return (dummy(), dummy()) };
        let a = b.ins().band_imm(amount, 63);
        let a = b.ins().uextend(types::I64, a);
        let r = if signed { b.ins().sshr(m, a) } else { b.ins().ushr(m, a) };
        self.mask_parts(r)
    }
    fn v_shl64(&mut self, _: Vv, _: Vv, _: Vv) -> (Vv, Vv) {
        self.no("64-bit vector shifts");
        (self.dv(), self.dv())
    }
    fn scratch(&mut self) -> (Value, Value, Value) {
        self.no("private memory");
        (dummy(), dummy(), dummy())
    }
    fn uniform_value(&mut self, _: Value) -> Option<u32> {
        self.no("decisions on run-time values");
        None
    }
    fn fail_if_any(&mut self, _: Value, err: ExecError) -> Result<(), ExecError> {
        self.no("checks that can fault");
        Err(err)
    }
    fn v_lane_read(&mut self, _: Vv, _: Value) -> Value {
        self.no("cross-lane reads");
        dummy()
    }
    fn v_first_lane(&mut self, _: Vv, _: Value) -> Value {
        self.no("cross-lane reads");
        dummy()
    }
    fn v_permute(&mut self, _: Vv, _: Vv, _: Value) -> Vv {
        self.no("lane permutes");
        self.dv()
    }
    fn v_lane_ids(&mut self) -> Vv {
        let ids: [u32; 64] = std::array::from_fn(|i| i as u32);
        self.v_const(&ids)
    }
    fn v_const(&mut self, values: &[u32; 64]) -> Vv {
        let Some(b) = self.fb() else { return Vv { c: [dummy(); CHUNKS], uniform: None } };
        let mut c = [dummy(); CHUNKS];
        for (i, x) in c.iter_mut().enumerate() {
            let bytes: Vec<u8> = values[4 * i..4 * i + 4].iter().flat_map(|v| v.to_le_bytes()).collect();
            let k = b.func.dfg.constants.insert(ConstantData::from(bytes));
            *x = b.ins().vconst(I32X4, k);
        }
        Vv { c, uniform: None }
    }
    fn v_mfma(&mut self, _: Mfma, _: &[Vv], _: &[Vv], _: &[Vv]) -> Vec<Vv> {
        self.no("MFMA");
        vec![self.dv(); 64]
    }
    fn v_lanefn(&mut self, f: LaneFn, _: &[Vv]) -> Vec<Vv> {
        self.no("per-lane helper functions");
        vec![self.dv(); f.outputs()]
    }
    fn s_lanefn(&mut self, f: LaneFn, _: &[Value]) -> Vec<Value> {
        self.no("scalar helper functions");
        vec![dummy(); f.outputs()]
    }
    fn s_popcount64(&mut self, lo: Value, hi: Value) -> Value {
        let m = self.mask_from(lo, hi);
        let Some(b) = self.fb() else { return dummy() };
        let c = b.ins().popcnt(m);
        b.ins().ireduce(types::I32, c)
    }
    fn lds_atomic(&mut self, _: AtomicOp, _: Vv, _: u32, _: Vv, _: Value) -> Result<Vv, ExecError> {
        Err(self.memory())
    }
    fn v_atomic_cmpswap(&mut self, _: Vv, _: Vv, _: i64, _: &[Vv], _: &[Vv], _: Value) -> Result<Vec<Vv>, ExecError> {
        Err(self.memory())
    }
    fn v_atomic(&mut self, _: AtomicOp, _: Vv, _: Vv, _: i64, _: Vv, _: Value) -> Result<Vv, ExecError> {
        Err(self.memory())
    }
    fn v_load_narrow(&mut self, _: Vv, _: Vv, _: i64, _: u32, _: bool, _: Value) -> Result<Vv, ExecError> {
        Err(self.memory())
    }
    fn v_store_narrow(&mut self, _: Vv, _: Vv, _: i64, _: u32, _: Vv, _: Value) -> Result<(), ExecError> {
        Err(self.memory())
    }
    fn lds_read(&mut self, _: Vv, _: u32, _: u32, _: Value) -> Result<Vec<Vv>, ExecError> {
        Err(self.memory())
    }
    fn lds_read_narrow(&mut self, _: Vv, _: u32, _: u32, _: bool, _: Value) -> Result<Vv, ExecError> {
        Err(self.memory())
    }
    fn lds_write_narrow(&mut self, _: Vv, _: u32, _: u32, _: Vv, _: Value) -> Result<(), ExecError> {
        Err(self.memory())
    }
    fn lds_atomic64(&mut self, _: AtomicOp, _: Vv, _: u32, _: (Vv, Vv), _: Value) -> Result<(Vv, Vv), ExecError> {
        Err(self.memory())
    }
    fn lds_cmpst(&mut self, _: Vv, _: u32, _: &[Vv], _: &[Vv], _: Value) -> Result<Vec<Vv>, ExecError> {
        Err(self.memory())
    }
    fn v_atomic64(&mut self, _: AtomicOp, _: Vv, _: Vv, _: i64, _: (Vv, Vv), _: Value) -> Result<(Vv, Vv), ExecError> {
        Err(self.memory())
    }
    fn lds_write(&mut self, _: Vv, _: u32, _: &[Vv], _: Value) -> Result<(), ExecError> {
        Err(self.memory())
    }
    fn s_load(&mut self, _: Value, _: Value, _: u32) -> Result<Vec<Value>, ExecError> {
        Err(self.memory())
    }
    fn v_load(&mut self, _: Vv, _: Vv, _: i64, _: u32, _: Value) -> Result<Vec<Vv>, ExecError> {
        Err(self.memory())
    }
    fn v_store(&mut self, _: Vv, _: Vv, _: i64, _: &[Vv], _: Value) -> Result<(), ExecError> {
        Err(self.memory())
    }
}

impl JitBackend<'_, '_> {
    /// Memory accesses are left to the interpreter's checked path for now.
    fn memory(&mut self) -> ExecError {
        self.no("memory access");
        ExecError::Unsupported { mnemonic: "memory access (interpreted)" }
    }
}
