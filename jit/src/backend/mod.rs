//! The JIT's [`Backend`]: the same semantics (`emu_core::sem`) that the interpreter executes, lowered to
//! Cranelift IR. A uniform value is an `i32`, a lane mask an `i64`, a whole-wave vector sixteen `i32x4`s.
//! Registers live in the wave's memory (read and written by every instruction), so compiled instructions and
//! interpreted ones (the fallback) can follow each other freely.
//!
//! Whether every operation an instruction needs is one the JIT can emit is the [`Probe`]'s to find out, first: a
//! second backend that runs the same semantics and emits nothing. Instructions it refuses are left to the
//! interpreter; [`JitBackend`] emits the others, always into a function builder.
//!
//! The backend is split by job, one module per instruction family as in `emu_core::sem` where the job is
//! one: `types` (the vector type and the backend itself), `lazy` (lazy vectors), `regcache` (what a
//! block knows; register reads), `writes` and `fusion` (register writes, made at once or deferred and
//! fused), `calls` (interpreter calls), `memory` (LDS, global, private and scalar memory), `salu`,
//! `valu32`, `valu64`, `f64`, `compare`, `xlane`, `mfma`, `lanefn`, `control`, `refused` (what is not
//! emitted, and why), `probe` (the [`Probe`]) and `ir` (IR helpers). The [`Backend`] implementation below
//! hands each operation to its family's module.

// chunk loops index several 16-element arrays in step; an index reads better than zipped iterators
#![allow(clippy::needless_range_loop)]

mod calls;
mod compare;
mod control;
mod f64;
mod fusion;
mod ir;
mod lanefn;
mod lazy;
mod memory;
mod mfma;
mod probe;
mod refused;
mod regcache;
mod salu;
mod types;
mod valu32;
mod valu64;
mod writes;
mod xlane;

pub use calls::CallSite;
pub use probe::Probe;
pub use regcache::RegCache;
pub use types::{JitBackend, Vv};

use cranelift_codegen::ir::Value;

use emu_core::image::{FormatAccess, ImageInst};
use emu_core::lanefn::LaneFn;
use emu_core::sem::{AtomicOp, Backend, Compare, ExecError, MaskOp, Mfma, SOp, VCvt, VOp, VOp64, VUn, VUn64};

use crate::call::Op;
use crate::ctx::Ctx;

impl<'a, 'f> Backend for JitBackend<'a, 'f> {
    type S = Value;
    type V = Vv;
    type M = Value;

    fn s_const(&mut self, x: u32) -> Value {
        self.emit_s_const(x)
    }
    fn s_get(&mut self, reg: u32) -> Value {
        self.emit_s_get(reg)
    }
    fn s_set(&mut self, reg: u32, v: Value) {
        self.emit_s_set(reg, v)
    }
    fn s_get_at(&mut self, index: Value) -> Value {
        self.emit_s_get_at(index)
    }
    fn s_set_at(&mut self, index: Value, v: Value) {
        self.emit_s_set_at(index, v)
    }
    fn s_op(&mut self, op: SOp, a: Value, x: Value) -> Value {
        self.emit_s_op(op, a, x)
    }
    fn s_add_carry(&mut self, a: Value, x: Value, carry_in: Value) -> (Value, Value) {
        self.emit_s_add_carry(a, x, carry_in)
    }
    fn scc(&mut self) -> Value {
        self.emit_scc()
    }
    fn s_select(&mut self, cond: Value, x: Value, a: Value) -> Value {
        self.emit_s_select(cond, x, a)
    }
    fn set_scc(&mut self, v: Value) {
        self.emit_set_scc(v)
    }
    fn s_nonzero(&mut self, v: Value) -> Value {
        self.emit_s_nonzero(v)
    }
    fn mask_from(&mut self, lo: Value, hi: Value) -> Value {
        self.emit_mask_from(lo, hi)
    }
    fn mask_parts(&mut self, m: Value) -> (Value, Value) {
        self.emit_mask_parts(m)
    }
    fn exec(&mut self) -> Value {
        self.emit_exec()
    }
    fn set_exec(&mut self, m: Value) {
        self.emit_set_exec(m)
    }
    fn mask_op(&mut self, op: MaskOp, a: Value, x: Value) -> Value {
        self.emit_mask_op(op, a, x)
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
        self.emit_v_splat(s)
    }
    fn v_op(&mut self, op: VOp, a: Vv, x: Vv) -> Vv {
        self.emit_v_op(op, a, x)
    }
    fn v_fma_f32(&mut self, a: Vv, x: Vv, c: Vv) -> Vv {
        self.emit_v_fma_f32(a, x, c)
    }
    fn v_cmp(&mut self, c: Compare, a: Vv, x: Vv) -> Value {
        self.emit_v_cmp(c, a, x)
    }
    fn v_add_carry(&mut self, a: Vv, x: Vv, carry_in: Option<Value>) -> (Vv, Value) {
        self.emit_v_add_carry(a, x, carry_in)
    }
    fn v_sub_borrow(&mut self, a: Vv, x: Vv, borrow_in: Option<Value>) -> (Vv, Value) {
        self.emit_v_sub_borrow(a, x, borrow_in)
    }
    fn v_un(&mut self, op: VUn, a: Vv) -> Vv {
        self.emit_v_un(op, a)
    }
    fn v_op64(&mut self, op: VOp64, a: (Vv, Vv), x: (Vv, Vv)) -> (Vv, Vv) {
        self.emit_v_op64(op, a, x)
    }
    fn v_un64(&mut self, op: VUn64, a: (Vv, Vv)) -> (Vv, Vv) {
        self.emit_v_un64(op, a)
    }
    fn v_fma_f64(&mut self, a: (Vv, Vv), x: (Vv, Vv), c: (Vv, Vv)) -> (Vv, Vv) {
        self.emit_v_fma_f64(a, x, c)
    }
    fn v_cvt(&mut self, op: VCvt, a: (Vv, Vv)) -> (Vv, Vv) {
        self.emit_v_cvt(op, a)
    }
    fn v_cmp64(&mut self, c: Compare, a: (Vv, Vv), x: (Vv, Vv)) -> Value {
        self.emit_v_cmp64(c, a, x)
    }
    fn v_select(&mut self, m: Value, a: Vv, x: Vv) -> Vv {
        self.emit_v_select(m, a, x)
    }
    fn v_mad_u64_u32(&mut self, a: Vv, x: Vv, c: (Vv, Vv), signed: bool) -> ((Vv, Vv), Value) {
        self.emit_v_mad_u64_u32(a, x, c, signed)
    }
    fn s_shl64(&mut self, lo: Value, hi: Value, amount: Value) -> (Value, Value) {
        self.emit_s_shl64(lo, hi, amount)
    }
    fn s_shr64(&mut self, lo: Value, hi: Value, amount: Value, signed: bool) -> (Value, Value) {
        self.emit_s_shr64(lo, hi, amount, signed)
    }
    fn v_shl64(&mut self, lo: Vv, hi: Vv, amount: Vv) -> (Vv, Vv) {
        self.emit_v_shl64(lo, hi, amount)
    }
    fn scratch(&mut self) -> (Value, Value, Value) {
        self.emit_scratch()
    }
    fn uniform_bit(&mut self, s: Value, bit: u32, likely: bool) -> bool {
        self.emit_uniform_bit(s, bit, likely)
    }
    fn s_clock(&mut self, clock: emu_core::sem::Clock) -> (Value, Value) {
        self.emit_s_clock(clock)
    }
    fn index_mode(&mut self) -> bool {
        self.emit_index_mode()
    }
    fn set_index_mode(&mut self, _on: bool) {
        self.emit_set_index_mode()
    }
    fn v_get_at(&mut self, _reg: Value) -> Vv {
        self.emit_v_get_at()
    }
    fn v_set_at(&mut self, _reg: Value, _v: Vv, _m: Value) {
        self.emit_v_set_at()
    }
    fn s_hwreg(&mut self, reg: emu_core::hwreg::Held) -> Value {
        self.emit_s_hwreg(reg)
    }
    fn s_interrupt(&mut self, ctxid: Value) {
        self.emit_s_interrupt(ctxid)
    }
    fn s_set_mode(&mut self, value: Value, mask: u32) -> Result<(), ExecError> {
        self.emit_s_set_mode(value, mask)
    }
    fn fail_if_any(&mut self, bad: Value, err: ExecError) -> Result<(), ExecError> {
        self.emit_fail_if_any(bad, err)
    }
    fn v_lane_read(&mut self, v: Vv, lane: Value) -> Value {
        self.emit_v_lane_read(v, lane)
    }
    fn v_first_lane(&mut self, v: Vv, m: Value) -> Value {
        self.emit_v_first_lane(v, m)
    }
    fn v_permute(&mut self, data: Vv, index: Vv, m: Value) -> Vv {
        self.emit_v_permute(data, index, m)
    }
    fn v_permute_forward(&mut self, data: Vv, index: Vv, m: Value) -> Vv {
        self.emit_v_permute_forward(data, index, m)
    }
    fn v_lane_ids(&mut self) -> Vv {
        self.emit_v_lane_ids()
    }
    fn v_const(&mut self, values: &[u32; 64]) -> Vv {
        self.emit_v_const(values)
    }
    fn v_mfma(&mut self, shape: Mfma, a: &[Vv], x: &[Vv], c: &[Vv]) -> Vec<Vv> {
        self.emit_v_mfma(shape, a, x, c)
    }
    fn gws_barrier(&mut self, _count: Value) {
        self.emit_gws()
    }
    fn gws_sema(&mut self, _op: emu_core::gws::SemaOp, _m0: Value, _offset0: u32, _value: Value) {
        self.emit_gws()
    }
    fn v_buffer_format(
        &mut self,
        op: &FormatAccess,
        _word3: Value,
        _lo: Vv,
        _hi: Vv,
        _data: &[Vv],
        _m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        self.emit_v_buffer_format(op)
    }
    fn v_image(
        &mut self,
        op: &ImageInst,
        _t: [Value; 8],
        _s: [Value; 4],
        _addr: &[Vv],
        _data: &[Vv],
        _m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        self.emit_v_image(op)
    }
    fn v_lanefn(&mut self, f: LaneFn, args: &[Vv]) -> Vec<Vv> {
        self.emit_v_lanefn(f, args)
    }
    fn s_lanefn(&mut self, f: LaneFn, args: &[Value]) -> Vec<Value> {
        self.emit_s_lanefn(f, args)
    }
    fn s_popcount64(&mut self, lo: Value, hi: Value) -> Value {
        self.emit_s_popcount64(lo, hi)
    }
    fn lds_atomic(&mut self, op: AtomicOp, addr: Vv, offset: u32, data: Vv, m: Value) -> Result<Vv, ExecError> {
        self.emit_lds_atomic(op, addr, offset, data, m)
    }
    fn v_atomic_cmpswap(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        src: &[Vv],
        cmp: &[Vv],
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        self.emit_v_atomic_cmpswap(lo, hi, offset, src, cmp, m)
    }
    fn v_atomic(&mut self, op: AtomicOp, lo: Vv, hi: Vv, offset: i64, data: Vv, m: Value) -> Result<Vv, ExecError> {
        self.emit_v_atomic(op, lo, hi, offset, data, m)
    }
    fn v_load_narrow(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: Value,
    ) -> Result<Vv, ExecError> {
        self.emit_v_load_narrow(lo, hi, offset, bytes, signed, m)
    }
    fn v_store_narrow(&mut self, lo: Vv, hi: Vv, offset: i64, bytes: u32, data: Vv, m: Value) -> Result<(), ExecError> {
        self.emit_v_store_narrow(lo, hi, offset, bytes, data, m)
    }
    fn lds_read(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value) -> Result<Vec<Vv>, ExecError> {
        Ok(self.lds_inline(addr, offset, dwords, m, None))
    }
    fn lds_read_narrow(&mut self, addr: Vv, offset: u32, bytes: u32, signed: bool, m: Value) -> Result<Vv, ExecError> {
        self.emit_lds_read_narrow(addr, offset, bytes, signed, m)
    }
    fn lds_write_narrow(&mut self, addr: Vv, offset: u32, bytes: u32, data: Vv, m: Value) -> Result<(), ExecError> {
        self.emit_lds_write_narrow(addr, offset, bytes, data, m)
    }
    fn lds_atomic64(
        &mut self,
        op: AtomicOp,
        addr: Vv,
        offset: u32,
        data: (Vv, Vv),
        m: Value,
    ) -> Result<(Vv, Vv), ExecError> {
        self.emit_lds_atomic64(op, addr, offset, data, m)
    }
    fn lds_atomic2(
        &mut self,
        op: AtomicOp,
        addr: Vv,
        offset: u32,
        a: &[Vv],
        b: &[Vv],
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        self.emit_lds_atomic2(op, addr, offset, a, b, m)
    }
    fn v_atomic64(
        &mut self,
        op: AtomicOp,
        lo: Vv,
        hi: Vv,
        offset: i64,
        data: (Vv, Vv),
        m: Value,
    ) -> Result<(Vv, Vv), ExecError> {
        self.emit_v_atomic64(op, lo, hi, offset, data, m)
    }
    fn lds_write(&mut self, addr: Vv, offset: u32, data: &[Vv], m: Value) -> Result<(), ExecError> {
        self.emit_lds_write(addr, offset, data, m)
    }
    fn lds_read2(&mut self, addr: Vv, offsets: [u32; 2], dwords: u32, m: Value) -> Result<[Vec<Vv>; 2], ExecError> {
        self.emit_lds_read2(addr, offsets, dwords, m)
    }
    fn lds_write2(&mut self, addr: Vv, offsets: [u32; 2], data: [&[Vv]; 2], m: Value) -> Result<(), ExecError> {
        self.emit_lds_write2(addr, offsets, data, m)
    }
    fn private_access(
        &mut self,
        name: &'static str,
        p: Vv,
        bytes: u32,
        signed: bool,
        data: Option<&[Vv]>,
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        self.emit_private_access(name, p, bytes, signed, data, m)
    }
    fn flat_access(
        &mut self,
        inst: &isa_amdgpu::Inst,
        lo: Vv,
        hi: Vv,
        data: Option<&[Vv]>,
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        self.emit_flat_access(inst, lo, hi, data, m)
    }
    fn s_load(&mut self, lo: Value, hi: Value, dwords: u32) -> Result<Vec<Value>, ExecError> {
        self.emit_s_load(lo, hi, dwords)
    }
    fn s_load_part(&mut self, lo: Value, hi: Value, dwords: u32, valid: Value) -> Result<Vec<Value>, ExecError> {
        self.emit_s_load_part(lo, hi, dwords, valid)
    }
    fn s_store(&mut self, lo: Value, hi: Value, data: &[Value], valid: Value) -> Result<(), ExecError> {
        self.emit_s_store(lo, hi, data, valid)
    }
    fn s_atomic(
        &mut self,
        op: AtomicOp,
        lo: Value,
        hi: Value,
        data: &[Value],
        cmp: &[Value],
        valid: Value,
    ) -> Result<Vec<Value>, ExecError> {
        self.emit_s_atomic(op, lo, hi, data, cmp, valid)
    }
    fn v_load(&mut self, lo: Vv, hi: Vv, offset: i64, dwords: u32, m: Value) -> Result<Vec<Vv>, ExecError> {
        Ok(self.global_inline(lo, hi, offset, 4 * dwords, false, m, None, Op::VLoad { offset, dwords }))
    }
    fn v_store(&mut self, lo: Vv, hi: Vv, offset: i64, data: &[Vv], m: Value) -> Result<(), ExecError> {
        self.emit_v_store(lo, hi, offset, data, m)
    }
}
