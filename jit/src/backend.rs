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

use emu_core::image::{FormatAccess, ImageInst};
use emu_core::lanefn::LaneFn;
use emu_core::rules;
use emu_core::wave::{sgpr_slot, sreg};
use emu_core::sem::{AtomicOp, Backend, CmpPred, Compare, DataType, ExecError, MaskOp, Mfma, SOp, VCvt, VOp, VOp64, VUn, VUn64};

use crate::call::{Call, Op};
use crate::ctx::{Ctx, MASK_TABLE, SLOTS};

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

/// Where calls into the interpreter go and what they report on a fault.
pub struct CallSite<'a> {
    /// Call records of the block (their addresses are baked into the code; the block keeps them).
    pub calls: &'a mut Vec<Box<Call>>,
    pub inst: *const isa_amdgpu::Inst,
    /// The instruction's offset from the code base.
    pub offset: u64,
    /// Instructions executed when this one faults (its index in the block + 1).
    pub executed: i64,
}

/// Emits (or, with no builder, probes) one instruction at a time.
pub struct JitBackend<'a, 'f> {
    b: Option<&'a mut FunctionBuilder<'f>>,
    cache: Option<&'a mut RegCache>,
    site: Option<CallSite<'a>>,
    ctx: Value,
    /// The first operation this backend cannot emit, if any.
    pub unsupported: Option<&'static str>,
    /// Memory goes through interpreter calls only (which record lane accesses for an observer).
    pub calls_only: bool,
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

/// Vector loads and stores: register files, context slots and memory are not promised 16-byte alignment.
fn vflags() -> MemFlags {
    MemFlags::new().with_notrap()
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// A backend that only checks what it could emit.
    pub fn probe() -> JitBackend<'static, 'static> {
        JitBackend { b: None, cache: None, site: None, ctx: dummy(), unsupported: None, calls_only: false, vgprs_used: 0, agprs_used: 0 }
    }

    /// A backend emitting into `b`, with `ctx` the `*mut Ctx` parameter, the block's register cache, and where
    /// interpreter calls of this instruction are recorded.
    pub fn emit(b: &'a mut FunctionBuilder<'f>, cache: &'a mut RegCache, site: CallSite<'a>, ctx: Value) -> JitBackend<'a, 'f> {
        JitBackend { b: Some(b), cache: Some(cache), site: Some(site), ctx, unsupported: None, calls_only: false, vgprs_used: 0, agprs_used: 0 }
    }

    /// Calls the interpreter's implementation of `op` on spilled operands: vectors `vin`, scalars `sin`, masks
    /// `min`; returns `vout` vectors, `sout` scalars and `mout` masks. With `faults`, a failing call ends the
    /// block with the interpreter's fault report.
    #[allow(clippy::too_many_arguments)]
    fn call(&mut self, op: Op, vin: &[Vv], sin: &[Value], min: &[Value], vout: usize, sout: usize, mout: usize, faults: bool) -> (Vec<Vv>, Vec<Value>, Vec<Value>) {
        let dummies = (vec![self.dv(); vout], vec![dummy(); sout], vec![dummy(); mout]);
        if vin.len() > SLOTS || vout > SLOTS || sin.len() > 16 || sout > 16 || min.len() > 8 || mout > 8 {
            self.no("an interpreter call with too many operands");
            return dummies;
        }
        if self.fb().is_none() {
            return dummies;
        }
        let ctx = self.ctx;
        let site = self.site.as_mut().expect("emitting");
        site.calls.push(Box::new(Call { op, inst: site.inst, offset: site.offset, vectors_in: vin.len() }));
        let call_ptr = &**site.calls.last().expect("just pushed") as *const Call;
        let executed = site.executed;
        let b = self.b.as_deref_mut().expect("emitting");
        for (k, v) in vin.iter().enumerate() {
            for (i, c) in v.c.iter().enumerate() {
                b.ins().store(vflags(), *c, ctx, Ctx::V + (256 * k + 16 * i) as i32);
            }
        }
        for (k, x) in sin.iter().enumerate() {
            b.ins().store(trusted(), *x, ctx, Ctx::S + 4 * k as i32);
        }
        for (k, x) in min.iter().enumerate() {
            b.ins().store(trusted(), *x, ctx, Ctx::M + 8 * k as i32);
        }
        let mut sig = cranelift_codegen::ir::Signature::new(cranelift_codegen::isa::CallConv::SystemV);
        sig.params.extend([cranelift_codegen::ir::AbiParam::new(types::I64), cranelift_codegen::ir::AbiParam::new(types::I64)]);
        sig.returns.push(cranelift_codegen::ir::AbiParam::new(types::I32));
        let sig = b.import_signature(sig);
        let f = b.ins().iconst(types::I64, crate::call::wave_call as *const () as i64);
        let cp = b.ins().iconst(types::I64, call_ptr as i64);
        let inst = b.ins().call_indirect(sig, f, &[ctx, cp]);
        let status = b.inst_results(inst)[0];
        // a fault (or a panic caught in the helper) ends the block with the helper's status
        let _ = faults;
        {
            let (stop, go_on) = (b.create_block(), b.create_block());
            b.ins().brif(status, stop, &[], go_on, &[]);
            b.switch_to_block(stop);
            b.seal_block(stop);
            let e = b.ins().load(types::I64, trusted(), ctx, Ctx::EXECUTED);
            let e = b.ins().iadd_imm(e, executed);
            b.ins().store(trusted(), e, ctx, Ctx::EXECUTED);
            b.ins().return_(&[status]);
            b.switch_to_block(go_on);
            b.seal_block(go_on);
        }
        let vo = (0..vout)
            .map(|k| {
                let mut c = [dummy(); CHUNKS];
                for (i, x) in c.iter_mut().enumerate() {
                    *x = b.ins().load(I32X4, vflags(), ctx, Ctx::V + (256 * k + 16 * i) as i32);
                }
                Vv { c, uniform: None }
            })
            .collect();
        let so = (0..sout).map(|k| b.ins().load(types::I32, trusted(), ctx, Ctx::S + 4 * k as i32)).collect();
        let mo = (0..mout).map(|k| b.ins().load(types::I64, trusted(), ctx, Ctx::M + 8 * k as i32)).collect();
        (vo, so, mo)
    }

    /// LDS reads (`data` None) and writes of 1-4 dwords per lane, inline: when every active lane's access lies
    /// inside the LDS, each lane is loaded or stored directly (inactive lanes read 0 and store to a sink);
    /// otherwise the interpreter's checked access runs and reports the fault. Returns the loaded vectors.
    fn lds_inline(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        if self.fb().is_none() {
            return vec![self.dv(); if data.is_some() { 0 } else { dwords as usize }];
        }
        let ctx = self.ctx;
        let masks = self.expand(m);
        let (fast, slow, join) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            // lane address a is fine when a + offset + 4 dwords <= len, i.e. a <= len - (offset + 4 dwords)
            let need = b.ins().iconst(types::I64, offset as i64 + 4 * dwords as i64);
            let room = b.ins().isub(len, need);
            let negative = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let room32 = b.ins().ireduce(types::I32, room);
            let room_v = b.ins().splat(I32X4, room32);
            let mut bad = [dummy(); CHUNKS];
            for i in 0..CHUNKS {
                let over = b.ins().icmp(IntCC::UnsignedGreaterThan, addr.c[i], room_v);
                bad[i] = b.ins().band(over, masks[i]);
            }
            let mut any = bad[0];
            for x in &bad[1..] {
                any = b.ins().bor(any, *x);
            }
            let any = b.ins().vany_true(any);
            // no room at all (an LDS smaller than one access, or none): the slow path, even with no lane
            // active — the fast path would still touch the LDS's first bytes for inactive lanes
            let bad = b.ins().bor(any, negative);
            let (fast, slow, join) = (b.create_block(), b.create_block(), b.create_block());
            let outs = if data.is_some() { 0 } else { dwords as usize * CHUNKS };
            for _ in 0..outs {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(bad, slow, &[], fast, &[]);
            (fast, slow, join)
        };
        // slow: the interpreter (faults end the block there)
        {
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(slow);
            b.seal_block(slow);
        }
        let slow_out = match data {
            None => self.call_mem(Op::LdsRead { offset, dwords }, &[addr], &[], &[m], dwords as usize, 0).0,
            Some(d) => {
                let ins: Vec<Vv> = std::iter::once(addr).chain(d.iter().copied()).collect();
                self.call_mem(Op::LdsWrite { offset, n: d.len() as u32 }, &ins, &[], &[m], 0, 0);
                Vec::new()
            }
        };
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &slow_out);
        // fast: lane by lane
        b.switch_to_block(fast);
        b.seal_block(fast);
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let loaded = lane_accesses(b, ctx, lds, &addr.c, offset as i32, 4 * dwords, false, &masks, data);
        jump_with(b, join, &loaded);
        join_vectors(b, join)
    }

    /// Global loads (`data` None) and stores of `bytes` per lane (1, 2 or a multiple of 4; narrow loads
    /// zero- or sign-extended), inline when every active lane's access lies in the wave's current buffer window
    /// (`ctx.win_*`); otherwise the interpreter's checked access (`slow`), which also moves the window.
    #[allow(clippy::too_many_arguments)]
    fn global_inline(&mut self, lo: Vv, hi: Vv, offset: i64, bytes: u32, signed: bool, m: Value, data: Option<&[Vv]>, slow: Op) -> Vec<Vv> {
        let outs = if data.is_some() { 0 } else { (bytes as usize).div_ceil(4) };
        if self.fb().is_none() {
            return vec![self.dv(); outs];
        }
        if self.calls_only || !(i32::MIN as i64..=i32::MAX as i64).contains(&offset) {
            let mut ins = vec![lo, hi];
            ins.extend(data.unwrap_or(&[]).iter().copied());
            return self.call_mem(slow, &ins, &[], &[m], outs, 0).0;
        }
        let ctx = self.ctx;
        let masks = self.expand(m);
        let (fast, slow_blk, join, rels) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let start = b.ins().load(types::I64, trusted(), ctx, Ctx::WIN_START);
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::WIN_LEN);
            let room = b.ins().iadd_imm(len, -(bytes as i64));
            let negative = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let room32 = b.ins().ireduce(types::I32, room);
            let start_lo = b.ins().ireduce(types::I32, start);
            let start_hi = b.ins().ushr_imm(start, 32);
            let start_hi = b.ins().ireduce(types::I32, start_hi);
            let (room_v, lo_v, hi_v) = (b.ins().splat(I32X4, room32), b.ins().splat(I32X4, start_lo), b.ins().splat(I32X4, start_hi));
            let off = b.ins().iconst(types::I32, offset);
            let off_v = b.ins().splat(I32X4, off);
            let mut any = None;
            let mut rels = [dummy(); CHUNKS];
            for i in 0..CHUNKS {
                // lane address (hi:lo) + offset must stay in the window's 4 GiB half and inside it
                let lo2 = b.ins().iadd(lo.c[i], off_v);
                let carried = match offset {
                    0 => None,
                    o if o > 0 => Some(b.ins().icmp(IntCC::UnsignedLessThan, lo2, lo.c[i])),
                    _ => Some(b.ins().icmp(IntCC::UnsignedGreaterThan, lo2, lo.c[i])),
                };
                let rel = b.ins().isub(lo2, lo_v);
                let inside = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, rel, room_v);
                let same_hi = b.ins().icmp(IntCC::Equal, hi.c[i], hi_v);
                let mut ok = b.ins().band(inside, same_hi);
                if let Some(c) = carried {
                    ok = b.ins().band_not(ok, c);
                }
                let bad = b.ins().band_not(masks[i], ok);
                any = Some(match any {
                    None => bad,
                    Some(a) => b.ins().bor(a, bad),
                });
                rels[i] = rel;
            }
            let any = b.ins().vany_true(any.expect("chunks"));
            // no window yet (or one smaller than the access): the slow path, even with no lane active — the
            // fast path would still touch the window's first bytes for inactive lanes
            let bad = b.ins().bor(any, negative);
            let (fast, slow_blk, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(bad, slow_blk, &[], fast, &[]);
            b.switch_to_block(slow_blk);
            b.seal_block(slow_blk);
            (fast, slow_blk, join, rels)
        };
        let _ = slow_blk;
        let mut ins = vec![lo, hi];
        ins.extend(data.unwrap_or(&[]).iter().copied());
        let slow_out = self.call_mem(slow, &ins, &[], &[m], outs, 0).0;
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &slow_out);
        b.switch_to_block(fast);
        b.seal_block(fast);
        let host = b.ins().load(types::I64, trusted(), ctx, Ctx::WIN_HOST);
        let loaded = lane_accesses(b, ctx, host, &rels, 0, bytes, signed, &masks, data);
        jump_with(b, join, &loaded);
        join_vectors(b, join)
    }

    /// An f64 operation on (lo, hi) register pairs: lanes regrouped into f64x2 vectors, `op` applied, results
    /// split back; a lane whose result is NaN gets the interpreter's NaN (first NaN source quieted) on a side
    /// path.
    fn f64_op(&mut self, srcs: &[(Vv, Vv)], op: impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value) -> (Vv, Vv) {
        let Some(b) = self.fb() else { return (self.dv(), self.dv()) };
        let imm = |b: &mut FunctionBuilder<'f>, m: [u8; 16]| b.func.dfg.immediates.push(ConstantData::from(m.to_vec()));
        // (lo, hi) chunk -> two f64x2: lanes 0,1 and lanes 2,3
        let join0 = imm(b, [0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23]);
        let join1 = imm(b, [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31]);
        let split_lo = imm(b, [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]);
        let split_hi = imm(b, [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]);
        let bytes = |b: &mut FunctionBuilder<'f>, v: Value| b.ins().bitcast(types::I8X16, little(), v);
        let (mut lo, mut hi) = ([dummy(); CHUNKS], [dummy(); CHUNKS]);
        let mut any_nan = None;
        for i in 0..CHUNKS {
            let mut halves = [[dummy(); 3]; 2];
            for (k, (l, h)) in srcs.iter().enumerate() {
                let (l8, h8) = (bytes(b, l.c[i]), bytes(b, h.c[i]));
                for (half, mask) in [join0, join1].into_iter().enumerate() {
                    let s = b.ins().shuffle(l8, h8, mask);
                    halves[half][k] = b.ins().bitcast(types::F64X2, little(), s);
                }
            }
            let r: Vec<Value> = (0..2).map(|h| op(b, &halves[h][..srcs.len()])).collect();
            for v in &r {
                let n = b.ins().fcmp(FloatCC::Unordered, *v, *v);
                any_nan = Some(match any_nan {
                    None => n,
                    Some(a) => b.ins().bor(a, n),
                });
            }
            let (r0, r1) = (bytes(b, r[0]), bytes(b, r[1]));
            let l = b.ins().shuffle(r0, r1, split_lo);
            let h = b.ins().shuffle(r0, r1, split_hi);
            lo[i] = b.ins().bitcast(I32X4, little(), l);
            hi[i] = b.ins().bitcast(I32X4, little(), h);
        }
        let result = (Vv { c: lo, uniform: None }, Vv { c: hi, uniform: None });
        // NaN results: redo the lanes on the interpreter's rule through a call (rare)
        let any = b.ins().vany_true(any_nan.expect("chunks"));
        let (slow, done) = (b.create_block(), b.create_block());
        for _ in 0..2 * CHUNKS {
            b.append_block_param(done, I32X4);
        }
        let args: Vec<_> = result.0.c.iter().chain(result.1.c.iter()).map(|x| (*x).into()).collect();
        b.ins().brif(any, slow, &[], done, &args);
        b.switch_to_block(slow);
        b.seal_block(slow);
        let ins: Vec<Vv> = srcs.iter().flat_map(|(l, h)| [*l, *h]).chain([result.0, result.1]).collect();
        let fixed = self.call_v(Op::Nan64 { sources: srcs.len() as u8 }, &ins, &[], 2);
        let b = self.b.as_deref_mut().expect("emitting");
        let args: Vec<_> = fixed[0].c.iter().chain(fixed[1].c.iter()).map(|x| (*x).into()).collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        b.seal_block(done);
        let p = b.block_params(done).to_vec();
        (Vv { c: p[..CHUNKS].try_into().expect("16"), uniform: None }, Vv { c: p[CHUNKS..].try_into().expect("16"), uniform: None })
    }

    fn call_v(&mut self, op: Op, vin: &[Vv], min: &[Value], vout: usize) -> Vec<Vv> {
        self.call(op, vin, &[], min, vout, 0, 0, false).0
    }

    fn call_mem(&mut self, op: Op, vin: &[Vv], sin: &[Value], min: &[Value], vout: usize, sout: usize) -> (Vec<Vv>, Vec<Value>) {
        let (v, s, _) = self.call(op, vin, sin, min, vout, sout, 0, true);
        (v, s)
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

    /// Register `reg` of the VGPR or AGPR file (`base_field`): range-checked and counted for sizing the file,
    /// then read (or, probing, a placeholder).
    fn read_file(&mut self, base_field: i32, reg: u32) -> Vv {
        if !self.note_reg(base_field, reg) || self.fb().is_none() {
            return self.dv();
        }
        self.load_reg(base_field, reg)
    }

    /// Writes register `reg` of the VGPR or AGPR file, as [`Self::read_file`] reads it.
    fn write_file(&mut self, base_field: i32, reg: u32, v: Vv, m: Value) {
        if self.note_reg(base_field, reg) {
            self.store_reg(base_field, reg, v, m);
        }
    }

    /// Checks `reg` against the file and records it for sizing the file; false for numbers outside it.
    fn note_reg(&mut self, base_field: i32, reg: u32) -> bool {
        if !self.reg_ok(reg) {
            return false;
        }
        let used = if base_field == Ctx::AGPRS { &mut self.agprs_used } else { &mut self.vgprs_used };
        *used = (*used).max(reg + 1);
        true
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
            *x = b.ins().load(I32X4, vflags(), base, 16 * i as i32);
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
            *o = b.ins().load(I32X4, vflags(), addr, 0);
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
        let r = self.zip_chunks(a, x, |b, p, q| {
            let (fp, fq) = (Self::to_f(b, p), Self::to_f(b, q));
            let r = op(b, fp, fq);
            Self::to_i(b, r)
        });
        self.nan_fixup(r, &[a, x])
    }

    /// Applies the NaN propagation rule ([`rules::propagate_nan32`] over `srcs` in order) to the lanes of `r` —
    /// on a side path taken only when some lane of `r` is NaN, so ordinary arithmetic pays one compare.
    fn nan_fixup(&mut self, r: Vv, srcs: &[Vv]) -> Vv {
        let Some(b) = self.fb() else { return r };
        let mut any = None;
        for c in r.c {
            let f = Self::to_f(b, c);
            let m = b.ins().fcmp(FloatCC::Unordered, f, f);
            any = Some(match any {
                None => m,
                Some(a) => b.ins().bor(a, m),
            });
        }
        let any = b.ins().vany_true(any.expect("16 chunks"));
        let (slow, done) = (b.create_block(), b.create_block());
        for _ in 0..CHUNKS {
            b.append_block_param(done, I32X4);
        }
        let args: Vec<_> = r.c.iter().map(|x| (*x).into()).collect();
        b.ins().brif(any, slow, &[], done, &args);
        b.switch_to_block(slow);
        b.seal_block(slow);
        let mut fixed = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            let chunk: Vec<Value> = srcs.iter().map(|s| s.c[i]).collect();
            fixed[i] = rules::propagate_nan32(&mut Chunks(b), &chunk, r.c[i]);
        }
        let args: Vec<_> = fixed.iter().map(|x| (*x).into()).collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        b.seal_block(done);
        let mut c = [dummy(); CHUNKS];
        c.copy_from_slice(b.block_params(done));
        Vv { c, uniform: None }
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
                b.ins().store(vflags(), v.c[i], base, 16 * i as i32);
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
                None => b.ins().load(I32X4, vflags(), base, 16 * i as i32),
            };
            blended[i] = b.ins().bitselect(masks[i], v.c[i], old);
            b.ins().store(vflags(), blended[i], base, 16 * i as i32);
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

/// The fast path of an inline LDS or global access: for every lane, `bytes` at `base + rel + imm` (`rels` one
/// i32x4 per chunk; 1 or 2 bytes zero- or sign-extended when `signed`, else 4 per dword), loaded — inactive
/// lanes read the first bytes and yield 0 — or, with `data`, stored — inactive lanes store to the context's
/// sink. Returns the loaded dword vectors (none for a store).
#[allow(clippy::too_many_arguments)]
fn lane_accesses(
    b: &mut FunctionBuilder<'_>,
    ctx: Value,
    base: Value,
    rels: &[Value; CHUNKS],
    imm: i32,
    bytes: u32,
    signed: bool,
    masks: &[Value; CHUNKS],
    data: Option<&[Vv]>,
) -> Vec<Vv> {
    let zero = b.ins().iconst(types::I32, 0);
    let zero_v = b.ins().splat(I32X4, zero);
    let sink = b.ins().iadd_imm(ctx, Ctx::SINK as i64);
    let outs = if data.is_some() { 0 } else { (bytes as usize).div_ceil(4) };
    let mut loaded = vec![Vv { c: [dummy(); CHUNKS], uniform: None }; outs];
    for i in 0..CHUNKS {
        let safe = b.ins().bitselect(masks[i], rels[i], zero_v);
        if data.is_none() && bytes == 4 {
            let v = load_chunk_dword(b, base, safe, imm);
            loaded[0].c[i] = b.ins().bitselect(masks[i], v, zero_v);
            continue;
        }
        let mut acc = vec![zero_v; outs];
        for j in 0..4u8 {
            let r = b.ins().extractlane(safe, j);
            let r = b.ins().uextend(types::I64, r);
            let p = b.ins().iadd(base, r);
            match data {
                None => {
                    for (d, v) in acc.iter_mut().enumerate() {
                        let x = match bytes {
                            1 if signed => b.ins().sload8(types::I32, MemFlags::new(), p, imm),
                            1 => b.ins().uload8(types::I32, MemFlags::new(), p, imm),
                            2 if signed => b.ins().sload16(types::I32, MemFlags::new(), p, imm),
                            2 => b.ins().uload16(types::I32, MemFlags::new(), p, imm),
                            _ => b.ins().load(types::I32, MemFlags::new(), p, imm + 4 * d as i32),
                        };
                        *v = b.ins().insertlane(*v, x, j);
                    }
                }
                Some(vals) => {
                    let lane_mask = b.ins().extractlane(masks[i], j);
                    let on = b.ins().icmp_imm(IntCC::NotEqual, lane_mask, 0);
                    let at = b.ins().iadd_imm(p, imm as i64);
                    let dst = b.ins().select(on, at, sink);
                    for (d, v) in vals.iter().enumerate() {
                        let x = b.ins().extractlane(v.c[i], j);
                        match bytes {
                            1 => b.ins().istore8(MemFlags::new(), x, dst, 0),
                            2 => b.ins().istore16(MemFlags::new(), x, dst, 0),
                            _ => b.ins().store(MemFlags::new(), x, dst, 4 * d as i32),
                        };
                    }
                }
            }
        }
        for (d, v) in acc.into_iter().enumerate() {
            loaded[d].c[i] = b.ins().bitselect(masks[i], v, zero_v);
        }
    }
    loaded
}

/// Jumps to `join` passing `values`' chunks as its block parameters.
/// Sixteen-byte chunks of lanes (four i32 lanes) as the [`rules::LaneAlgebra`] the float rules are written
/// over: the rules' single definitions lowered to IR.
struct Chunks<'b, 'f>(&'b mut FunctionBuilder<'f>);

impl rules::LaneAlgebra for Chunks<'_, '_> {
    type W = Value;
    type C = Value;
    fn constant(&mut self, x: u32) -> Value {
        let c = self.0.ins().iconst(types::I32, x as i32 as i64);
        self.0.ins().splat(I32X4, c)
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().band(a, b)
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().bor(a, b)
    }
    fn gt_u(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().icmp(IntCC::UnsignedGreaterThan, a, b)
    }
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.0.ins().bitselect(c, a, b)
    }
    fn fmin_ordered(&mut self, a: Value, b: Value) -> Value {
        // Cranelift's fmin is IEEE 754-2019 minimum: -0 below +0
        let (x, y) = (self.0.ins().bitcast(F32X4, little(), a), self.0.ins().bitcast(F32X4, little(), b));
        let m = self.0.ins().fmin(x, y);
        self.0.ins().bitcast(I32X4, little(), m)
    }
    fn fmax_ordered(&mut self, a: Value, b: Value) -> Value {
        let (x, y) = (self.0.ins().bitcast(F32X4, little(), a), self.0.ins().bitcast(F32X4, little(), b));
        let m = self.0.ins().fmax(x, y);
        self.0.ins().bitcast(I32X4, little(), m)
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
fn float_cond(t: rules::Truth) -> Result<(FloatCC, Option<FloatCC>, bool), bool> {
    use FloatCC::*;
    let (lt, eq, gt, not) = if t.unordered { (!t.lt, !t.eq, !t.gt, true) } else { (t.lt, t.eq, t.gt, false) };
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

fn jump_with(b: &mut FunctionBuilder<'_>, join: cranelift_codegen::ir::Block, values: &[Vv]) {
    let args: Vec<_> = values.iter().flat_map(|v| v.c).map(|x| x.into()).collect();
    b.ins().jump(join, &args);
}

/// Continues at `join` and returns its parameters as vectors (16 chunks each).
fn join_vectors(b: &mut FunctionBuilder<'_>, join: cranelift_codegen::ir::Block) -> Vec<Vv> {
    b.switch_to_block(join);
    b.seal_block(join);
    let params = b.block_params(join).to_vec();
    params.chunks(CHUNKS).map(|c| Vv { c: c.try_into().expect("16 chunks"), uniform: None }).collect()
}

/// Loads one dword per lane of a chunk from `base + lane offset + offset`, where `safe` holds the four lanes'
/// offsets (inactive lanes already replaced by a harmless one): one vector load when the four are consecutive
/// dwords, one scalar load splat when they are equal, four scalar loads otherwise.
fn load_chunk_dword(b: &mut FunctionBuilder<'_>, base: Value, safe: Value, offset: i32) -> Value {
    let first = b.ins().extractlane(safe, 0);
    let first_v = b.ins().splat(I32X4, first);
    let steps = b.func.dfg.constants.insert(ConstantData::from([0u32, 4, 8, 12].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()));
    let steps = b.ins().vconst(I32X4, steps);
    let seq = b.ins().iadd(first_v, steps);
    let is_seq = b.ins().icmp(IntCC::Equal, safe, seq);
    let is_seq = b.ins().vall_true(is_seq);
    let is_same = b.ins().icmp(IntCC::Equal, safe, first_v);
    let is_same = b.ins().vall_true(is_same);
    let (vec_blk, other, same_blk, gather, join) = (b.create_block(), b.create_block(), b.create_block(), b.create_block(), b.create_block());
    b.append_block_param(join, I32X4);
    let p0 = b.ins().uextend(types::I64, first);
    let p0 = b.ins().iadd(base, p0);
    b.ins().brif(is_seq, vec_blk, &[], other, &[]);
    b.switch_to_block(vec_blk);
    b.seal_block(vec_blk);
    let v = b.ins().load(I32X4, MemFlags::new(), p0, offset);
    b.ins().jump(join, &[v.into()]);
    b.switch_to_block(other);
    b.seal_block(other);
    b.ins().brif(is_same, same_blk, &[], gather, &[]);
    b.switch_to_block(same_blk);
    b.seal_block(same_blk);
    let x = b.ins().load(types::I32, MemFlags::new(), p0, offset);
    let v = b.ins().splat(I32X4, x);
    b.ins().jump(join, &[v.into()]);
    b.switch_to_block(gather);
    b.seal_block(gather);
    let zero = b.ins().iconst(types::I32, 0);
    let mut v = b.ins().splat(I32X4, zero);
    for j in 0..4u8 {
        let a = b.ins().extractlane(safe, j);
        let a = b.ins().uextend(types::I64, a);
        let p = b.ins().iadd(base, a);
        let x = b.ins().load(types::I32, MemFlags::new(), p, offset);
        v = b.ins().insertlane(v, x, j);
    }
    b.ins().jump(join, &[v.into()]);
    b.switch_to_block(join);
    b.seal_block(join);
    b.block_params(join)[0]
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
        let Some(slot) = sgpr_slot(reg) else { return self.s_const(0) };
        if self.fb().is_none() {
            return dummy();
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().load(types::I32, trusted(), sg, slot as i32 * 4)
    }
    fn s_set(&mut self, reg: u32, v: Value) {
        let Some(slot) = sgpr_slot(reg) else { return };
        if self.fb().is_none() {
            return;
        }
        let reg = slot;
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
        b.ins().load(types::I64, vflags(), sg, sreg::EXEC_LO as i32 * 4)
    }
    fn set_exec(&mut self, m: Value) {
        if self.fb().is_none() {
            return;
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().store(vflags(), m, sg, sreg::EXEC_LO as i32 * 4);
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
        self.read_file(Ctx::VGPRS, reg)
    }
    fn v_set(&mut self, reg: u32, v: Vv, m: Value) {
        self.write_file(Ctx::VGPRS, reg, v, m);
    }
    fn a_get(&mut self, reg: u32) -> Vv {
        self.read_file(Ctx::AGPRS, reg)
    }
    fn a_set(&mut self, reg: u32, v: Vv, m: Value) {
        self.write_file(Ctx::AGPRS, reg, v, m);
    }
    fn v_splat(&mut self, s: Value) -> Vv {
        let Some(b) = self.fb() else { return Vv { c: [dummy(); CHUNKS], uniform: None } };
        let v = b.ins().splat(I32X4, s);
        Vv { c: [v; CHUNKS], uniform: Some(s) }
    }
    fn v_op(&mut self, op: VOp, a: Vv, x: Vv) -> Vv {
        // integer operations of two wave-uniform values are one scalar operation, and stay uniform (so a shift
        // by a computed amount, as in v_bfe, keeps its scalar amount)
        if let (Some(p), Some(q)) = (a.uniform, x.uniform) {
            let scalar = |b: &mut FunctionBuilder<'_>| -> Option<Value> {
                Some(match op {
                    VOp::AddU32 => b.ins().iadd(p, q),
                    VOp::SubU32 => b.ins().isub(p, q),
                    VOp::MulLoU32 => b.ins().imul(p, q),
                    VOp::MinU32 => b.ins().umin(p, q),
                    VOp::MaxU32 => b.ins().umax(p, q),
                    VOp::MinI32 => b.ins().smin(p, q),
                    VOp::MaxI32 => b.ins().smax(p, q),
                    VOp::And => b.ins().band(p, q),
                    VOp::Or => b.ins().bor(p, q),
                    VOp::Xor => b.ins().bxor(p, q),
                    // scalar shifts take the amount modulo 32, as the instruction does
                    VOp::Shl => b.ins().ishl(p, q),
                    VOp::Lshr => b.ins().ushr(p, q),
                    VOp::Ashr => b.ins().sshr(p, q),
                    _ => return None,
                })
            };
            if let Some(b) = self.fb() {
                if let Some(r) = scalar(b) {
                    return self.v_splat(r);
                }
            }
        }
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
                None => self.call_v(Op::VOp { op }, &[a, x], &[], 1)[0],
            },
            VOp::AddF32 => self.fbin(a, x, |b, p, q| b.ins().fadd(p, q)),
            VOp::SubF32 => self.fbin(a, x, |b, p, q| b.ins().fsub(p, q)),
            VOp::MulF32 => self.fbin(a, x, |b, p, q| b.ins().fmul(p, q)),
            VOp::MinF32 => self.zip_chunks(a, x, |b, p, q| rules::min_num32(&mut Chunks(b), p, q)),
            VOp::MaxF32 => self.zip_chunks(a, x, |b, p, q| rules::max_num32(&mut Chunks(b), p, q)),
            VOp::MulHiU32 | VOp::MulHiI32 => {
                let Some(b) = self.fb() else { return self.dv() };
                // lanes widened to 64 bits in two i64x2 halves, multiplied, and the high words gathered
                let odd_words = b.func.dfg.immediates.push(ConstantData::from(vec![4u8, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]));
                let signed = op == VOp::MulHiI32;
                let mut c = [dummy(); CHUNKS];
                for i in 0..CHUNKS {
                    let (p, q) = (a.c[i], x.c[i]);
                    let widen = |b: &mut FunctionBuilder<'_>, v: Value, high: bool| match (signed, high) {
                        (false, false) => b.ins().uwiden_low(v),
                        (false, true) => b.ins().uwiden_high(v),
                        (true, false) => b.ins().swiden_low(v),
                        (true, true) => b.ins().swiden_high(v),
                    };
                    let (pl, ql, ph, qh) = (widen(b, p, false), widen(b, q, false), widen(b, p, true), widen(b, q, true));
                    let lo = b.ins().imul(pl, ql);
                    let hi = b.ins().imul(ph, qh);
                    let (lo8, hi8) = (b.ins().bitcast(types::I8X16, little(), lo), b.ins().bitcast(types::I8X16, little(), hi));
                    let words = b.ins().shuffle(lo8, hi8, odd_words);
                    c[i] = b.ins().bitcast(I32X4, little(), words);
                }
                Vv { c, uniform: None }
            }
            VOp::MulU32U24 => self.zip_chunks(a, x, |b, p, q| {
                let m = b.ins().iconst(types::I32, 0xff_ffff);
                let m = b.ins().splat(I32X4, m);
                let (p, q) = (b.ins().band(p, m), b.ins().band(q, m));
                b.ins().imul(p, q)
            }),
            VOp::MulI32I24 => self.zip_chunks(a, x, |b, p, q| {
                // sign-extend the low 24 bits; the low word of the product is the same at any width
                let eight = b.ins().iconst(types::I32, 8);
                let (p, q) = (b.ins().ishl(p, eight), b.ins().ishl(q, eight));
                let (p, q) = (b.ins().sshr(p, eight), b.ins().sshr(q, eight));
                b.ins().imul(p, q)
            }),
            VOp::LdexpF32 => self.call_v(Op::VOp { op }, &[a, x], &[], 1)[0],
        }
    }
    fn v_fma_f32(&mut self, a: Vv, x: Vv, c: Vv) -> Vv {
        let Some(b) = self.fb() else { return Vv { c: [dummy(); CHUNKS], uniform: None } };
        let mut out = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            let (p, q, r) = (Self::to_f(b, a.c[i]), Self::to_f(b, x.c[i]), Self::to_f(b, c.c[i]));
            let f = b.ins().fma(p, q, r);
            out[i] = Self::to_i(b, f);
        }
        self.nan_fixup(Vv { c: out, uniform: None }, &[a, x, c])
    }
    fn v_cmp(&mut self, c: Compare, a: Vv, x: Vv) -> Value {
        // 32-bit integer and f32 compares inline, lowered from the predicate's truth table (rules::truth); other
        // types and the class test on the interpreter
        enum P {
            I(IntCC),
            F(FloatCC, Option<FloatCC>, bool),
            Const(bool),
        }
        let t = rules::truth(c.pred);
        let p = match c.ty {
            _ if c.pred == CmpPred::Class => None,
            DataType::U32 | DataType::I32 | DataType::B32 => Some(match int_cond(t, c.ty.is_signed_int()) {
                Ok(cc) => P::I(cc),
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
        let Some(b) = self.fb() else { return dummy() };
        if let P::Const(k) = p {
            return b.ins().iconst(types::I64, if k { -1 } else { 0 });
        }
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
                P::Const(_) => unreachable!("constants return above"),
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
            VUn::TruncF32 | VUn::FloorF32 | VUn::CeilF32 | VUn::RndneF32 | VUn::SqrtF32 | VUn::RcpF32 => {
                let r = self.map_chunks(a, |b, p| {
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
                });
                // a NaN input gives itself quieted, whatever the host's SIMD unit returns
                self.nan_fixup(r, &[a])
            }
            _ => self.call_v(Op::VUn { op }, &[a], &[], 1)[0],
        }
    }
    fn v_op64(&mut self, op: VOp64, a: (Vv, Vv), x: (Vv, Vv)) -> (Vv, Vv) {
        if matches!(op, VOp64::AddF64 | VOp64::MulF64) {
            return self.f64_op(&[a, x], |b, v| if op == VOp64::AddF64 { b.ins().fadd(v[0], v[1]) } else { b.ins().fmul(v[0], v[1]) });
        }
        let r = self.call_v(Op::VOp64 { op }, &[a.0, a.1, x.0, x.1], &[], 2);
        (r[0], r[1])
    }
    fn v_un64(&mut self, op: VUn64, a: (Vv, Vv)) -> (Vv, Vv) {
        let r = self.call_v(Op::VUn64 { op }, &[a.0, a.1], &[], 2);
        (r[0], r[1])
    }
    fn v_fma_f64(&mut self, a: (Vv, Vv), x: (Vv, Vv), c: (Vv, Vv)) -> (Vv, Vv) {
        self.f64_op(&[a, x, c], |b, v| b.ins().fma(v[0], v[1], v[2]))
    }
    fn v_cvt(&mut self, op: VCvt, a: (Vv, Vv)) -> (Vv, Vv) {
        let r = self.call_v(Op::Cvt { op }, &[a.0, a.1], &[], 2);
        (r[0], r[1])
    }
    fn v_cmp64(&mut self, c: Compare, a: (Vv, Vv), x: (Vv, Vv)) -> Value {
        self.call(Op::Cmp64 { c }, &[a.0, a.1, x.0, x.1], &[], &[], 0, 0, 1, false).2[0]
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
    fn v_mad_u64_u32(&mut self, a: Vv, x: Vv, c: (Vv, Vv), signed: bool) -> ((Vv, Vv), Value) {
        let (v, _, m) = self.call(Op::Mad64 { signed }, &[a, x, c.0, c.1], &[], &[], 2, 0, 1, false);
        ((v[0], v[1]), m[0])
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
    fn v_shl64(&mut self, lo: Vv, hi: Vv, amount: Vv) -> (Vv, Vv) {
        let r = self.call_v(Op::Shl64 {}, &[lo, hi, amount], &[], 2);
        (r[0], r[1])
    }
    fn scratch(&mut self) -> (Value, Value, Value) {
        let s = self.call(Op::Scratch {}, &[], &[], &[], 0, 3, 0, false).1;
        (s[0], s[1], s[2])
    }
    fn s_clock(&mut self, _clock: emu_core::sem::Clock) -> (Value, Value) {
        // the wave's clock lives outside the registers the JIT keeps
        self.no("reading a clock");
        (dummy(), dummy())
    }
    fn uniform_value(&mut self, _: Value) -> Option<u32> {
        self.no("decisions on run-time values");
        None
    }
    fn fail_if_any(&mut self, bad: Value, err: ExecError) -> Result<(), ExecError> {
        // checked when the code runs: the call faults (and ends the block) if any lane is set
        self.call(Op::FailIfAny { err }, &[], &[], &[bad], 0, 0, 0, true);
        Ok(())
    }
    fn v_lane_read(&mut self, v: Vv, lane: Value) -> Value {
        self.call(Op::LaneRead {}, &[v], &[lane], &[], 0, 1, 0, false).1[0]
    }
    fn v_first_lane(&mut self, v: Vv, m: Value) -> Value {
        self.call(Op::FirstLane {}, &[v], &[], &[m], 0, 1, 0, false).1[0]
    }
    fn v_permute(&mut self, data: Vv, index: Vv, m: Value) -> Vv {
        self.call_v(Op::Permute {}, &[data, index], &[m], 1)[0]
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
    fn v_mfma(&mut self, shape: Mfma, a: &[Vv], x: &[Vv], c: &[Vv]) -> Vec<Vv> {
        let ins: Vec<Vv> = a.iter().chain(x).chain(c).copied().collect();
        self.call_v(Op::Mfma { shape }, &ins, &[], shape.acc_regs())
    }
    fn gws_barrier(&mut self, _count: Value) {
        // the wave's barrier state lives outside the registers the JIT keeps
        self.no("global wave sync");
    }
    fn v_buffer_format(&mut self, op: &FormatAccess, _word3: Value, _lo: Vv, _hi: Vv, _data: &[Vv], _m: Value) -> Result<Vec<Vv>, ExecError> {
        // format conversion stays with the interpreter
        self.no("typed buffer access");
        Ok(vec![self.dv(); if op.load { op.data_regs() } else { 0 }])
    }
    fn v_image(&mut self, op: &ImageInst, _t: [Value; 8], _s: [Value; 4], _addr: &[Vv], _data: &[Vv], _m: Value) -> Result<Vec<Vv>, ExecError> {
        // texel formats and filtering stay with the interpreter
        self.no("image access");
        Ok(vec![self.dv(); op.data_regs()])
    }
    fn v_lanefn(&mut self, f: LaneFn, args: &[Vv]) -> Vec<Vv> {
        self.call_v(Op::LaneFn { f }, args, &[], f.outputs())
    }
    fn s_lanefn(&mut self, f: LaneFn, args: &[Value]) -> Vec<Value> {
        self.call(Op::SLaneFn { f }, &[], args, &[], 0, f.outputs(), 0, false).1
    }
    fn s_popcount64(&mut self, lo: Value, hi: Value) -> Value {
        let m = self.mask_from(lo, hi);
        let Some(b) = self.fb() else { return dummy() };
        let c = b.ins().popcnt(m);
        b.ins().ireduce(types::I32, c)
    }
    fn lds_atomic(&mut self, op: AtomicOp, addr: Vv, offset: u32, data: Vv, m: Value) -> Result<Vv, ExecError> {
        Ok(self.call_mem(Op::LdsAtomic { op, offset }, &[addr, data], &[], &[m], 1, 0).0[0])
    }
    fn v_atomic_cmpswap(&mut self, lo: Vv, hi: Vv, offset: i64, src: &[Vv], cmp: &[Vv], m: Value) -> Result<Vec<Vv>, ExecError> {
        let ins: Vec<Vv> = [lo, hi].iter().chain(src).chain(cmp).copied().collect();
        Ok(self.call_mem(Op::CmpSwap { offset, n: src.len() as u32 }, &ins, &[], &[m], src.len(), 0).0)
    }
    fn v_atomic(&mut self, op: AtomicOp, lo: Vv, hi: Vv, offset: i64, data: Vv, m: Value) -> Result<Vv, ExecError> {
        Ok(self.call_mem(Op::VAtomic { op, offset }, &[lo, hi, data], &[], &[m], 1, 0).0[0])
    }
    fn v_load_narrow(&mut self, lo: Vv, hi: Vv, offset: i64, bytes: u32, signed: bool, m: Value) -> Result<Vv, ExecError> {
        Ok(self.global_inline(lo, hi, offset, bytes, signed, m, None, Op::VLoadNarrow { offset, bytes, signed })[0])
    }
    fn v_store_narrow(&mut self, lo: Vv, hi: Vv, offset: i64, bytes: u32, data: Vv, m: Value) -> Result<(), ExecError> {
        self.global_inline(lo, hi, offset, bytes, false, m, Some(&[data]), Op::VStoreNarrow { offset, bytes });
        Ok(())
    }
    fn lds_read(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value) -> Result<Vec<Vv>, ExecError> {
        if self.calls_only {
            return Ok(self.call_mem(Op::LdsRead { offset, dwords }, &[addr], &[], &[m], dwords as usize, 0).0);
        }
        Ok(self.lds_inline(addr, offset, dwords, m, None))
    }
    fn lds_read_narrow(&mut self, addr: Vv, offset: u32, bytes: u32, signed: bool, m: Value) -> Result<Vv, ExecError> {
        Ok(self.call_mem(Op::LdsReadNarrow { offset, bytes, signed }, &[addr], &[], &[m], 1, 0).0[0])
    }
    fn lds_write_narrow(&mut self, addr: Vv, offset: u32, bytes: u32, data: Vv, m: Value) -> Result<(), ExecError> {
        self.call_mem(Op::LdsWriteNarrow { offset, bytes }, &[addr, data], &[], &[m], 0, 0);
        Ok(())
    }
    fn lds_atomic64(&mut self, op: AtomicOp, addr: Vv, offset: u32, data: (Vv, Vv), m: Value) -> Result<(Vv, Vv), ExecError> {
        let v = self.call_mem(Op::LdsAtomic64 { op, offset }, &[addr, data.0, data.1], &[], &[m], 2, 0).0;
        Ok((v[0], v[1]))
    }
    fn lds_cmpst(&mut self, addr: Vv, offset: u32, cmp: &[Vv], src: &[Vv], m: Value) -> Result<Vec<Vv>, ExecError> {
        let ins: Vec<Vv> = std::iter::once(addr).chain(cmp.iter().copied()).chain(src.iter().copied()).collect();
        Ok(self.call_mem(Op::LdsCmpst { offset, n: cmp.len() as u32 }, &ins, &[], &[m], cmp.len(), 0).0)
    }
    fn v_atomic64(&mut self, op: AtomicOp, lo: Vv, hi: Vv, offset: i64, data: (Vv, Vv), m: Value) -> Result<(Vv, Vv), ExecError> {
        let v = self.call_mem(Op::VAtomic64 { op, offset }, &[lo, hi, data.0, data.1], &[], &[m], 2, 0).0;
        Ok((v[0], v[1]))
    }
    fn lds_write(&mut self, addr: Vv, offset: u32, data: &[Vv], m: Value) -> Result<(), ExecError> {
        if self.calls_only {
            let ins: Vec<Vv> = std::iter::once(addr).chain(data.iter().copied()).collect();
            self.call_mem(Op::LdsWrite { offset, n: data.len() as u32 }, &ins, &[], &[m], 0, 0);
            return Ok(());
        }
        self.lds_inline(addr, offset, data.len() as u32, m, Some(data));
        Ok(())
    }
    fn s_load(&mut self, lo: Value, hi: Value, dwords: u32) -> Result<Vec<Value>, ExecError> {
        if self.calls_only || self.fb().is_none() {
            return Ok(self.call_mem(Op::SLoad { dwords }, &[], &[lo, hi], &[], 0, dwords as usize).1);
        }
        // inside the allocation the wave's last interpreted scalar load read: straight from host memory
        let ctx = self.ctx;
        let (fast, join, rel) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let (lo64, hi64) = (b.ins().uextend(types::I64, lo), b.ins().uextend(types::I64, hi));
            let hi64 = b.ins().ishl_imm(hi64, 32);
            let addr = b.ins().bor(hi64, lo64);
            let addr = b.ins().band_imm(addr, !3);
            let start = b.ins().load(types::I64, trusted(), ctx, Ctx::SWIN_START);
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::SWIN_LEN);
            let rel = b.ins().isub(addr, start);
            let room = b.ins().iadd_imm(len, -(4 * dwords as i64));
            let short = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let outside = b.ins().icmp(IntCC::UnsignedGreaterThan, rel, room);
            let bad = b.ins().bor(short, outside);
            let (fast, slow, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..dwords {
                b.append_block_param(join, types::I32);
            }
            b.ins().brif(bad, slow, &[], fast, &[]);
            b.switch_to_block(slow);
            b.seal_block(slow);
            (fast, join, rel)
        };
        let slow_out = self.call_mem(Op::SLoad { dwords }, &[], &[lo, hi], &[], 0, dwords as usize).1;
        let b = self.b.as_deref_mut().expect("emitting");
        let args: Vec<_> = slow_out.iter().map(|x| (*x).into()).collect();
        b.ins().jump(join, &args);
        b.switch_to_block(fast);
        b.seal_block(fast);
        let host = b.ins().load(types::I64, trusted(), ctx, Ctx::SWIN_HOST);
        let p = b.ins().iadd(host, rel);
        let words: Vec<_> = (0..dwords).map(|d| b.ins().load(types::I32, MemFlags::new(), p, 4 * d as i32).into()).collect();
        b.ins().jump(join, &words);
        b.switch_to_block(join);
        b.seal_block(join);
        Ok(b.block_params(join).to_vec())
    }
    fn v_load(&mut self, lo: Vv, hi: Vv, offset: i64, dwords: u32, m: Value) -> Result<Vec<Vv>, ExecError> {
        Ok(self.global_inline(lo, hi, offset, 4 * dwords, false, m, None, Op::VLoad { offset, dwords }))
    }
    fn v_store(&mut self, lo: Vv, hi: Vv, offset: i64, data: &[Vv], m: Value) -> Result<(), ExecError> {
        self.global_inline(lo, hi, offset, 4 * data.len() as u32, false, m, Some(data), Op::VStore { offset, n: data.len() as u32 });
        Ok(())
    }
}
