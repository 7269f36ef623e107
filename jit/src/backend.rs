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
use cranelift_codegen::ir::{
    types, ConstantData, Immediate, InstBuilder, InstructionData, MemFlags, Opcode, Type, Value, ValueDef,
};
use cranelift_frontend::FunctionBuilder;

use emu_core::image::{FormatAccess, ImageInst};
use emu_core::lanefn::LaneFn;
use emu_core::rules;
use emu_core::sem::{
    AtomicOp, Backend, CmpPred, Compare, DataType, ExecError, MaskOp, Mfma, SOp, VCvt, VOp, VOp64, VUn, VUn64,
};
use emu_core::wave::{sgpr_slot, sreg};

use crate::call::{Call, Op};
use crate::ctx::{scalar_window_field, scalar_window_slot, window_field, window_slot};
use crate::ctx::{AccessRecord, Ctx, KEEP, MASK_TABLE, PARKED, REC_GLOBAL, REC_LDS, REC_SCALAR, SLOTS, TMP};

const CHUNKS: usize = 16;
const I32X4: Type = types::I32X4;
const F32X4: Type = types::F32X4;

/// A whole-wave vector: sixteen `i32x4` chunks, and the scalar it was splat from (lets shifts by a uniform
/// amount use a scalar shift). Register reads and chunk-wise operations are *lazy* (`lazy` names them in
/// `JitBackend::lazies`): nothing is emitted until a consumer asks for chunk i ([`JitBackend::ch`]), which
/// then loads and computes just that chunk — so a register write computes and stores chunk by chunk, and no
/// value stays live (and spilled) across the instruction: x86 has sixteen vector registers, and one wave
/// vector would take all of them.
#[derive(Clone, Copy)]
pub struct Vv {
    c: [Value; CHUNKS],
    uniform: Option<Value>,
    lazy: Option<u32>,
}

/// Where a loop over the chunks writes a value: a register of the file at a field of the context, or a parked
/// slot at a byte offset of it.
#[derive(Clone, Copy)]
enum Dest {
    Reg(i32, u32),
    Parked(i32),
}

/// How a flush loop computes a chunk of the pending writes ([`JitBackend::fuse_at`]): each lazy vector once
/// (`memo`, by index), blends as their new value alone when every lane is on (`full`), and without the NaN rule
/// (`raw`: each such result's NaN lanes gathered in `nan`) or with it.
struct Fuse {
    memo: std::collections::HashMap<u32, Value>,
    full: bool,
    raw: bool,
    nan: Option<Value>,
}

/// A chunk-wise operation: chunk i of the result from chunk i of each argument.
type ChunkFn<'f> = std::rc::Rc<dyn Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value>;

/// A lazy vector.
enum Lazy<'f> {
    /// A register read: loaded where used, from the register file or — once a write to the same register in
    /// this instruction made the instruction keep a copy — from the copy (`kept`, a slot of `Ctx::keep`), or
    /// from SSA values when all keep slots are taken (`loaded`).
    Reg {
        field: i32,
        reg: u32,
        kept: Option<usize>,
        loaded: Option<[Value; CHUNKS]>,
    },
    /// `f` over the chunks of `args`; with `nan` sources, the NaN rule ([`rules::propagate_nan32`]) applies to
    /// the result.
    Expr {
        args: Vec<Vv>,
        f: ChunkFn<'f>,
        nan: Vec<Vv>,
    },
    /// A read of LDS or global memory: see [`ReadAt`].
    Read(ReadAt),
    /// A vector a call left in the context at byte offset `at` (valid until the next call).
    Slot { at: i32 },
    /// A register read a call took straight from the register file: read, so writes need not keep it.
    Spent,
    /// The lanes of lane mask `m` (an `i64`), all ones where its bit is set: chunk i from bits 4i..4i+4 through
    /// [`MASK_TABLE`].
    Mask { m: Value },
    /// A deferred register write: `new` in the lanes of mask `m`, `old` (the register before it) elsewhere.
    Blend { m: Value, new: Vv, old: Vv },
    /// A deferred write's value kept in the context's parked slot at byte offset `at` (see
    /// [`JitBackend::defer_write`]).
    Parked { at: i32 },
}

/// A read of one register's worth from LDS or global memory (see `JitBackend::lds_read_lazy`,
/// `global_read_lazy`): lane address `addr` + `offset` (32 bits; a global buffer is inside one 4 GiB half), host
/// byte `base` + that, `bytes` (1, 2 or 4) read and zero- or sign-extended. Where `quick` holds every lane is
/// inside the memory: a dword read whose chunks are each four consecutive dwords (`seq`) or one dword (`same`)
/// loads four dwords (reaching at most `lim` + 16) or one dword splat; any other (`gather` reads) loads lane by
/// lane. Where `quick` does not hold, the interpreter's result is in tmp slot `slot`.
#[derive(Clone, Copy)]
struct ReadAt {
    addr: Vv,
    offset: i64,
    base: Value,
    lim: Value,
    seq: Value,
    same: Value,
    quick: Value,
    slot: usize,
    bytes: u32,
    signed: bool,
    /// Whether the quick path takes lanes in any order (global reads); LDS reads are quick only when every
    /// chunk is consecutive or one dword.
    gather: bool,
}

/// Key of an LDS address pattern in the block's cache: a register (until it is written).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum PatternKey {
    Reg(i32, u32),
}

/// What the block being compiled knows across instructions: the lane patterns of LDS address vectors. Vector
/// register values are not kept (every read loads where it is used: see [`Vv`]); the block compiler clears the
/// cache where code it does not see runs (interpreter fallbacks) and at a loop's head.
///
/// It also holds the block's *deferred register writes*: consecutive instructions that only compute on
/// registers ([`crate::compile::defers`]) leave their vector register writes pending, as lazy expressions over
/// the registers as they were before the first of them (a later read of a pending register gets its
/// expression), and the block writes them all at once, in one loop over the chunks ([`JitBackend::flush`]):
/// chunk i of every pending register is computed from chunk i of the registers, and each value that feeds
/// several is computed once, so a chain of instructions keeps its values in host registers instead of storing
/// and reloading each one.
#[derive(Default)]
pub struct RegCache<'f> {
    /// The lane pattern of LDS address vectors already classified, so each read or write through the same
    /// address register reuses it (dropped when the register is written).
    lds: std::collections::HashMap<PatternKey, LdsPattern>,
    /// Registers (file field, number) written with lanes known while translating, and the lane mask of the
    /// write: they hold those lanes there until written again.
    known: Vec<((i32, u32), Value, [u32; 64])>,
    /// The lazy vectors of the instructions since the last flush (the pending writes' expressions point here).
    lazies: Vec<Lazy<'f>>,
    /// The constant vectors made so far in the block ([`Backend::v_const`], and lanes folded while translating):
    /// their chunks and lanes.
    consts: Vec<([Value; CHUNKS], [u32; 64])>,
    /// Pending writes: (register file field, register) and the register's value, in the order first written.
    pending: Vec<((i32, u32), Vv)>,
    /// The instruction being emitted defers its register writes.
    pub defer: bool,
    /// Parked slots taken by pending writes.
    parked: usize,
    /// EXEC as loaded (or set) by an earlier instruction of the block and unchanged since: later instructions
    /// use the same value, so a pending write's lane mask can be recognised as today's EXEC.
    exec: Option<Value>,
    /// The instruction being emitted is *lane-local*: each lane's results depend only on that lane's operands,
    /// and it writes nothing outside EXEC's lanes (its lane masks are ANDed with EXEC). Its reads of a register
    /// whose pending write covers EXEC's lanes take the written value alone ([`JitBackend::read_file`]).
    pub lane_local: bool,
    /// The instruction being emitted reads only EXEC's lanes of its vector registers and writes none outside
    /// them: lane-local ones, and the lane permutes that read their index and data in EXEC's lanes alone. Its
    /// reads of a register known in EXEC's lanes ([`RegCache::known`]) take the known lanes.
    pub exec_lanes: bool,
    /// Lane masks the same in every lane (all lanes or none): compares and carries of wave-uniform operands.
    uniform_masks: Vec<Value>,
    /// Lane masks ANDed from such a mask and EXEC, as a carry or compare result is written: (the AND, the
    /// uniform mask, EXEC).
    exec_masked: Vec<(Value, Value, Value)>,
    /// Lane masks split into their low and high halves (to be written to an SGPR pair): (low, high, the mask).
    halves: Vec<(Value, Value, Value)>,
    /// SGPRs (slots) an earlier instruction set to one of those halves on the block's main path, unchanged since:
    /// a read takes the value written, so that the mask read back from the pair is the mask written.
    sgpr_halves: Vec<(usize, Value)>,
}

impl RegCache<'_> {
    /// Forgets what the block knows about registers, as where code it does not see runs.
    pub fn clear(&mut self) {
        self.lds.clear();
        self.known.clear();
        self.exec = None;
        self.sgpr_halves.clear();
    }

    /// A register is written: what was known of it no longer holds.
    fn written(&mut self, field: i32, reg: u32) {
        self.lds.remove(&PatternKey::Reg(field, reg));
        self.known.retain(|(k, _, _)| *k != (field, reg));
    }

    /// Whether there are pending writes.
    pub fn pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Parked slots still free: an instruction that defers its writes needs up to four.
    pub fn parked_free(&self) -> usize {
        PARKED - self.parked
    }
}

/// Most lazy vectors a pending write's expression may have: beyond it the value is parked, so that code
/// computing it outside the block's flush loop (a compare, an operand handed to the interpreter) stays short.
const PENDING_TREE: usize = 128;

/// How the lanes of an LDS address vector lie, worked out once per vector: whether every chunk of four lanes
/// addresses four consecutive dwords (`seq`; for 8-byte accesses, four consecutive 8-byte slots) or one dword
/// (`same`), each chunk's first address, and the
/// highest address of any lane. With EXEC all ones, an access through it then needs one range check and one
/// load or store per chunk.
#[derive(Clone, Copy)]
struct LdsPattern {
    seq: Value,
    same: Value,
    firsts: [Value; CHUNKS],
    max: Value,
    min: Value,
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
    cache: Option<&'a mut RegCache<'f>>,
    site: Option<CallSite<'a>>,
    ctx: Value,
    /// The first operation this backend cannot emit, if any.
    pub unsupported: Option<&'static str>,
    /// The block reports its instructions to an observer: compiled memory accesses leave records of their
    /// lanes' addresses in the context ([`crate::ctx::AccessRecord`]; interpreter calls record their own), and
    /// reads are not deferred past the instruction.
    pub observed: bool,
    /// The lane mask this instruction's add or subtract with carry writes is dead ([`crate::compile::carry_out_dead`]):
    /// it is written as 0, its carries not worked out.
    pub carry_dead: bool,
    /// Access records this instruction's code may leave (one per compiled access site).
    records: usize,
    /// Highest VGPR / AGPR index touched (+1), so the caller can size the register files.
    pub vgprs_used: u32,
    pub agprs_used: u32,
    /// The lazy vectors of this instruction ([`Vv::lazy`]).
    lazies: Vec<Lazy<'f>>,
    /// Keep slots of the context this instruction has used.
    kept: usize,
    /// Tmp slots of the context this instruction has used.
    tmps: usize,
    /// Vector register writes this instruction has emitted.
    stores: u32,
    /// The VGPR and AGPR file bases, loaded once at the start of the instruction (they dominate every use in
    /// it; a block's register files do not move while it runs).
    file_base: Option<(Value, Value)>,
    /// Where a guard's interpreter path rejoins ([`Backend::uniform_bit`]): the end of the instruction, which
    /// [`JitBackend::finish`] places.
    guard_end: Option<cranelift_codegen::ir::Block>,
    /// The chunks already computed in the chunk computation under way ([`JitBackend::chunk`]), by lazy vector
    /// and NaN rule: a value that feeds several others (as an operand and as a NaN source, or through several
    /// pending writes) is computed once.
    chunk_memo: Option<std::collections::HashMap<(u32, bool), Value>>,
    /// The interpreter runs this whole instruction on some path (a guard's, a NaN redo's): it may have written
    /// any register, EXEC too.
    interpreted: bool,
    /// The lanes of the constant vectors made in the block so far (the block's cache keeps them between
    /// instructions): a lane permute through one is resolved at compile time, and ops on them are folded.
    consts: Vec<([Value; CHUNKS], [u32; 64])>,
}

/// Chunks a register-write loop computes and stores per pass (a divisor of [`CHUNKS`]): fewer loop branches and
/// NaN checks per chunk, and independent chunks for the host's pipelines.
const STORE_UNROLL: usize = 4;

/// The address of SGPR slot `index & 127` (as [`sgpr_slot`] wraps it) in the file at `sg`, and whether it is the
/// null register.
fn sgpr_at(b: &mut FunctionBuilder<'_>, sg: Value, index: Value) -> (Value, Value) {
    let slot = b.ins().band_imm(index, 127);
    let null = b.ins().icmp_imm(IntCC::Equal, slot, sreg::NULL as i64);
    let off = b.ins().uextend(types::I64, slot);
    let off = b.ins().ishl_imm(off, 2);
    (b.ins().iadd(sg, off), null)
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
        JitBackend {
            b: None,
            cache: None,
            site: None,
            ctx: dummy(),
            unsupported: None,
            observed: false,
            carry_dead: false,
            records: 0,
            vgprs_used: 0,
            agprs_used: 0,
            lazies: Vec::new(),
            kept: 0,
            tmps: 0,
            stores: 0,
            file_base: None,
            guard_end: None,
            chunk_memo: None,
            interpreted: false,
            consts: Vec::new(),
        }
    }

    /// A backend emitting into `b`, with `ctx` the `*mut Ctx` parameter, the block's register cache, and where
    /// interpreter calls of this instruction are recorded.
    pub fn emit(
        b: &'a mut FunctionBuilder<'f>,
        cache: &'a mut RegCache<'f>,
        site: CallSite<'a>,
        ctx: Value,
    ) -> JitBackend<'a, 'f> {
        let v = b.ins().load(types::I64, trusted(), ctx, Ctx::VGPRS);
        let a = b.ins().load(types::I64, trusted(), ctx, Ctx::AGPRS);
        // the lazy vectors live on while writes are pending (their expressions point into them)
        let mut lazies = std::mem::take(&mut cache.lazies);
        if cache.pending.is_empty() {
            lazies.clear();
        }
        let consts = std::mem::take(&mut cache.consts);
        JitBackend {
            b: Some(b),
            cache: Some(cache),
            site: Some(site),
            ctx,
            unsupported: None,
            observed: false,
            carry_dead: false,
            records: 0,
            vgprs_used: 0,
            agprs_used: 0,
            lazies,
            kept: 0,
            tmps: 0,
            stores: 0,
            file_base: Some((v, a)),
            guard_end: None,
            chunk_memo: None,
            interpreted: false,
            consts,
        }
    }

    /// Ends the instruction's code: where a guard sent the instruction to the interpreter, both paths meet here.
    /// The lazy vectors go back to the block's cache.
    pub fn finish(&mut self) {
        if self.guard_end.is_some() || self.interpreted {
            self.forget_exec();
            if let Some(c) = self.cache.as_deref_mut() {
                c.sgpr_halves.clear();
            }
        }
        if let (Some(end), Some(b)) = (self.guard_end.take(), self.b.as_deref_mut()) {
            b.ins().jump(end, &[]);
            b.switch_to_block(end);
            b.seal_block(end);
        }
        if let Some(c) = self.cache.as_deref_mut() {
            c.lazies = std::mem::take(&mut self.lazies);
            c.consts = std::mem::take(&mut self.consts);
        }
    }

    /// EXEC may change here: later instructions load it again.
    fn forget_exec(&mut self) {
        if let Some(c) = self.cache.as_deref_mut() {
            c.exec = None;
        }
    }

    /// In an observed block, whether one more compiled access site may record its lanes (else it takes the
    /// interpreter call, which records them itself); claims the record.
    fn may_record(&mut self) -> bool {
        if !self.observed {
            return true;
        }
        self.records += 1;
        self.records <= crate::ctx::RECORDS
    }

    /// In an observed block, leaves a record of an access made here (lanes in `m` at `hi:lo + offset`, or the
    /// low half only without `hi`) in the context's next record slot.
    fn record(&mut self, desc: u64, lo: &[Value; CHUNKS], hi: Option<&[Value; CHUNKS]>, offset: i64, m: Value) {
        if !self.observed {
            return;
        }
        let ctx = self.ctx;
        let b = self.b.as_deref_mut().expect("emitting");
        let at = record_slot(b, ctx);
        for i in 0..CHUNKS {
            b.ins()
                .store(vflags(), lo[i], at, Ctx::RECS + AccessRecord::LO + 16 * i as i32);
            if let Some(hi) = hi {
                b.ins()
                    .store(vflags(), hi[i], at, Ctx::RECS + AccessRecord::HI + 16 * i as i32);
            }
        }
        record_fields(b, ctx, at, m, offset, desc);
    }

    /// Calls the interpreter's implementation of `op` on spilled operands: vectors `vin`, scalars `sin`, masks
    /// `min`; returns `vout` vectors, `sout` scalars and `mout` masks. With `faults`, a failing call ends the
    /// block with the interpreter's fault report.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        op: Op,
        vin: &[Vv],
        sin: &[Value],
        min: &[Value],
        vout: usize,
        sout: usize,
        mout: usize,
        faults: bool,
    ) -> (Vec<Vv>, Vec<Value>, Vec<Value>) {
        let dummies = (vec![self.dv(); vout], vec![dummy(); sout], vec![dummy(); mout]);
        if vin.len() > SLOTS || vout > SLOTS || sin.len() > 16 || sout > 16 || min.len() > 8 || mout > 8 {
            self.no("an interpreter call with too many operands");
            return dummies;
        }
        if self.fb().is_none() {
            return dummies;
        }
        let ctx = self.ctx;
        self.interpreted |= matches!(op, Op::Instruction {});
        let site = self.site.as_mut().expect("emitting");
        site.calls.push(Box::new(Call {
            op,
            inst: site.inst,
            offset: site.offset,
            vectors_in: vin.len(),
        }));
        let call_ptr = &**site.calls.last().expect("just pushed") as *const Call;
        let executed = site.executed;
        for (k, v) in vin.iter().enumerate() {
            for i in 0..CHUNKS {
                let c = self.ch(v, i);
                let b = self.b.as_deref_mut().expect("emitting");
                b.ins().store(vflags(), c, ctx, Ctx::V + (256 * k + 16 * i) as i32);
            }
        }
        let b = self.b.as_deref_mut().expect("emitting");
        for (k, x) in sin.iter().enumerate() {
            b.ins().store(trusted(), *x, ctx, Ctx::S + 4 * k as i32);
        }
        for (k, x) in min.iter().enumerate() {
            b.ins().store(trusted(), *x, ctx, Ctx::M + 8 * k as i32);
        }
        let mut sig = cranelift_codegen::ir::Signature::new(cranelift_codegen::isa::CallConv::SystemV);
        sig.params.extend([
            cranelift_codegen::ir::AbiParam::new(types::I64),
            cranelift_codegen::ir::AbiParam::new(types::I64),
        ]);
        sig.returns.push(cranelift_codegen::ir::AbiParam::new(types::I32));
        let sig = b.import_signature(sig);
        let f = b.ins().iconst(types::I64, crate::call::wave_call as *const () as i64);
        let cp = b.ins().iconst(types::I64, call_ptr as i64);
        let inst = b.ins().call_indirect(sig, f, &[ctx, cp]);
        let status = b.inst_results(inst)[0];
        // a fault (or a panic caught in the helper) ends the block with the helper's status
        let _ = faults;
        let go_on = {
            let (stop, go_on) = (b.create_block(), b.create_block());
            b.ins().brif(status, stop, &[], go_on, &[]);
            b.switch_to_block(stop);
            b.seal_block(stop);
            go_on
        };
        // the block ends here: pending register writes are made first
        self.emit_flush();
        let b = self.b.as_deref_mut().expect("emitting");
        let e = b.ins().load(types::I64, trusted(), ctx, Ctx::EXECUTED);
        let e = b.ins().iadd_imm(e, executed);
        b.ins().store(trusted(), e, ctx, Ctx::EXECUTED);
        b.ins().return_(&[status]);
        b.switch_to_block(go_on);
        b.seal_block(go_on);
        let vo = (0..vout)
            .map(|k| {
                let mut c = [dummy(); CHUNKS];
                for (i, x) in c.iter_mut().enumerate() {
                    *x = b.ins().load(I32X4, vflags(), ctx, Ctx::V + (256 * k + 16 * i) as i32);
                }
                Vv {
                    c,
                    uniform: None,
                    lazy: None,
                }
            })
            .collect();
        let so = (0..sout)
            .map(|k| b.ins().load(types::I32, trusted(), ctx, Ctx::S + 4 * k as i32))
            .collect();
        let mo = (0..mout)
            .map(|k| b.ins().load(types::I64, trusted(), ctx, Ctx::M + 8 * k as i32))
            .collect();
        (vo, so, mo)
    }

    /// The interpreter's checked LDS access through a call: `dwords` per lane read (`data` None, the loaded
    /// vectors returned) or `data` written.
    fn lds_call(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        match data {
            None => {
                self.call_mem(Op::LdsRead { offset, dwords }, &[addr], &[], &[m], dwords as usize, 0)
                    .0
            }
            Some(d) => {
                let ins: Vec<Vv> = std::iter::once(addr).chain(d.iter().copied()).collect();
                self.call_mem(
                    Op::LdsWrite {
                        offset,
                        n: d.len() as u32,
                    },
                    &ins,
                    &[],
                    &[m],
                    0,
                    0,
                );
                Vec::new()
            }
        }
    }

    /// LDS reads (`data` None) and writes of 1-4 dwords per lane, inline: when every active lane's access lies
    /// inside the LDS, each lane is loaded or stored directly (inactive lanes read 0 and store to a sink);
    /// otherwise the interpreter's checked access runs and reports the fault. Returns the loaded vectors.
    fn lds_inline(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        if self.fb().is_none() {
            return vec![self.dv(); if data.is_some() { 0 } else { dwords as usize }];
        }
        if !self.may_record() {
            return self.lds_call(addr, offset, dwords, m, data);
        }
        if dwords == 2 {
            return self.lds_pairs(addr, offset, m, data);
        }
        if dwords != 1 {
            return self.lds_lanes(addr, offset, dwords, m, data);
        }
        if data.is_none() && self.tmps < TMP && !self.observed {
            return vec![self.lds_read_lazy(addr, offset, m)];
        }
        // an observed access records its lanes' addresses on the quick path: they are worked out first
        let addr = if self.observed { self.mat(addr) } else { addr };
        // dword accesses through a regular address vector with EXEC all ones: whole chunks at once
        let pattern = self.lds_pattern(addr);
        let ctx = self.ctx;
        let outs = if data.is_some() { 0 } else { 1 };
        let (quick, general, join) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let fits = lds_chunks_fit(b, len, &pattern, offset, 4, m);
            let regular = b.ins().bor(pattern.seq, pattern.same);
            let ok = b.ins().band(fits, regular);
            let (quick, general, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(ok, quick, &[], general, &[]);
            (quick, general, join)
        };
        // anything else (lanes off, irregular addresses, out of range): the interpreter, out of line
        let general_out = {
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(general);
            b.seal_block(general);
            self.lds_call(addr, offset, dwords, m, data)
        };
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &general_out);
        b.switch_to_block(quick);
        b.seal_block(quick);
        // the data to store, loaded here (inside the quick path) if it is a register read
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        self.record(
            AccessRecord::desc(REC_LDS, data.is_some(), 4),
            &addr.c,
            None,
            offset as i64,
            m,
        );
        let b = self.b.as_deref_mut().expect("emitting");
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let ptrs: Vec<Value> = pattern
            .firsts
            .iter()
            .map(|f| {
                let f = b.ins().uextend(types::I64, *f);
                b.ins().iadd(lds, f)
            })
            .collect();
        let (seq_blk, same_blk) = (b.create_block(), b.create_block());
        b.ins().brif(pattern.seq, seq_blk, &[], same_blk, &[]);
        for seq in [true, false] {
            let blk = if seq { seq_blk } else { same_blk };
            b.switch_to_block(blk);
            b.seal_block(blk);
            let mut out = [dummy(); CHUNKS];
            for i in 0..CHUNKS {
                match (data, seq) {
                    (None, true) => out[i] = b.ins().load(I32X4, MemFlags::new(), ptrs[i], offset as i32),
                    (None, false) => {
                        let x = b.ins().load(types::I32, MemFlags::new(), ptrs[i], offset as i32);
                        out[i] = b.ins().splat(I32X4, x);
                    }
                    (Some(d), true) => {
                        b.ins().store(MemFlags::new(), d[0].c[i], ptrs[i], offset as i32);
                    }
                    // four lanes writing one dword: the last lane's value stays, as lanes write in order
                    (Some(d), false) => {
                        let x = b.ins().extractlane(d[0].c[i], 3);
                        b.ins().store(MemFlags::new(), x, ptrs[i], offset as i32);
                    }
                }
            }
            let vals: Vec<Vv> = if data.is_some() {
                Vec::new()
            } else {
                vec![Vv {
                    c: out,
                    uniform: None,
                    lazy: None,
                }]
            };
            jump_with(b, join, &vals);
        }
        join_vectors(b, join)
    }

    /// LDS accesses of two dwords a lane (ds_read_b64 and ds_write_b64, and each half of their read2/write2
    /// forms): with EXEC all ones and every chunk's four lanes at consecutive 8-byte addresses inside the LDS —
    /// a wave's run of 64-bit items, as rocPRIM's block loads and stores pass through the LDS — a chunk is two
    /// 16-byte accesses of the lanes' low and high dwords interleaved; otherwise lane by lane
    /// ([`Self::lds_lanes`]). The LDS is the workgroup's alone, so no other thread sees a lane's 8 bytes split.
    fn lds_pairs(&mut self, addr: Vv, offset: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        let addr = self.mat(addr);
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        let ctx = self.ctx;
        let outs = if data.is_some() { 0 } else { 2 * CHUNKS };
        let pattern = self.lds_pattern_of(addr, None, 8);
        let (quick, join) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let fits = lds_chunks_fit(b, len, &pattern, offset, 8, m);
            let ok = b.ins().band(fits, pattern.seq);
            let (quick, general, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(ok, quick, &[], general, &[]);
            // anything else: lane by lane, or the interpreter (out of line)
            b.switch_to_block(general);
            b.seal_block(general);
            (quick, join)
        };
        let general_out = self.lds_lanes(addr, offset, 2, m, data);
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &general_out);
        b.switch_to_block(quick);
        b.seal_block(quick);
        self.record(
            AccessRecord::desc(REC_LDS, data.is_some(), 8),
            &addr.c,
            None,
            offset as i64,
            m,
        );
        let b = self.b.as_deref_mut().expect("emitting");
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let (joins, splits) = (f64x2_joins(b), f64x2_splits(b));
        let (mut lo, mut hi) = ([dummy(); CHUNKS], [dummy(); CHUNKS]);
        let at = offset as i32;
        for i in 0..CHUNKS {
            let first = b.ins().uextend(types::I64, pattern.firsts[i]);
            let p = b.ins().iadd(lds, first);
            match data {
                Some([l, h]) => {
                    let (l8, h8) = (
                        b.ins().bitcast(types::I8X16, little(), l.c[i]),
                        b.ins().bitcast(types::I8X16, little(), h.c[i]),
                    );
                    for (k, join) in joins.into_iter().enumerate() {
                        let pair = b.ins().shuffle(l8, h8, join);
                        b.ins().store(MemFlags::new(), pair, p, at + 16 * k as i32);
                    }
                }
                Some(_) => unreachable!("two dwords a lane"),
                None => {
                    let (x, y) = (
                        b.ins().load(types::I8X16, MemFlags::new(), p, at),
                        b.ins().load(types::I8X16, MemFlags::new(), p, at + 16),
                    );
                    let [l, h] = splits.map(|split| {
                        let v = b.ins().shuffle(x, y, split);
                        b.ins().bitcast(I32X4, little(), v)
                    });
                    (lo[i], hi[i]) = (l, h);
                }
            }
        }
        let vals = if data.is_some() {
            Vec::new()
        } else {
            vec![
                Vv {
                    c: lo,
                    uniform: None,
                    lazy: None,
                },
                Vv {
                    c: hi,
                    uniform: None,
                    lazy: None,
                },
            ]
        };
        jump_with(b, join, &vals);
        join_vectors(b, join)
    }

    /// Whether a read2 or write2 of `dwords` a lane at `offsets` is of two dwords at adjacent offsets, compiled
    /// (not observed: an observer counts the two accesses), so that each lane's two pairs are 16 bytes in a row.
    fn adjacent_pairs(&mut self, offsets: [u32; 2], dwords: u32) -> bool {
        dwords == 2 && offsets[1] == offsets[0] + 8 && !self.observed && self.fb().is_some()
    }

    /// A write2 of two dwords a lane at adjacent offsets as one 16-byte store a lane (the registers' chunks
    /// transposed into the lanes' rows), when EXEC is all ones, every lane's 16 bytes lie inside the LDS and
    /// each lane's address is at least 16 above the one before: no two lanes' bytes then overlap, so the two
    /// writes' order does not show. Otherwise the two writes as apart.
    fn lds_write_quads(&mut self, addr: Vv, offsets: [u32; 2], m: Value, data: [&[Vv]; 2]) {
        let addr = self.mat(addr);
        let data: Vec<Vv> = data.iter().flat_map(|d| d.iter()).map(|v| self.mat(*v)).collect();
        let ctx = self.ctx;
        let offset = offsets[0];
        let (fast, join) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let (negative, room_v) = lds_room(b, len, offset as i64 + 16);
            // each lane's next lane: this chunk's lanes 1-3, then the next chunk's lane 0
            let next = b
                .func
                .dfg
                .immediates
                .push(ConstantData::from((4u8..20).collect::<Vec<u8>>()));
            let but_last = b.func.dfg.constants.insert(ConstantData::from(
                [u32::MAX, u32::MAX, u32::MAX, 0]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect::<Vec<u8>>(),
            ));
            let but_last = b.ins().vconst(I32X4, but_last);
            let sixteen = b.ins().iconst(types::I32, 16);
            let sixteen = b.ins().splat(I32X4, sixteen);
            let mut any = None;
            for i in 0..CHUNKS {
                let over = b.ins().icmp(IntCC::UnsignedGreaterThan, addr.c[i], room_v);
                let this = b.ins().bitcast(types::I8X16, little(), addr.c[i]);
                let after = b.ins().bitcast(types::I8X16, little(), addr.c[(i + 1).min(CHUNKS - 1)]);
                let following = b.ins().shuffle(this, after, next);
                let following = b.ins().bitcast(I32X4, little(), following);
                let gap = b.ins().isub(following, addr.c[i]);
                let mut close = b.ins().icmp(IntCC::SignedLessThan, gap, sixteen);
                if i == CHUNKS - 1 {
                    close = b.ins().band(close, but_last);
                }
                let bad = b.ins().bor(over, close);
                any = Some(any.map_or(bad, |a| b.ins().bor(a, bad)));
            }
            let any = b.ins().vany_true(any.expect("chunks"));
            let part = b.ins().icmp_imm(IntCC::NotEqual, m, -1);
            let bad = b.ins().bor(any, negative);
            let bad = b.ins().bor(bad, part);
            let (fast, slow, join) = (b.create_block(), b.create_block(), b.create_block());
            b.ins().brif(bad, slow, &[], fast, &[]);
            b.switch_to_block(slow);
            b.seal_block(slow);
            (fast, join)
        };
        // slow: the two writes as apart (lane by lane, or the interpreter for faults)
        self.lds_inline(addr, offsets[0], 2, m, Some(&data[..2]));
        self.lds_inline(addr, offsets[1], 2, m, Some(&data[2..]));
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().jump(join, &[]);
        b.switch_to_block(fast);
        b.seal_block(fast);
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let shuffles = transposes(b);
        for i in 0..CHUNKS {
            let cols: [Value; 4] = std::array::from_fn(|d| b.ins().bitcast(types::I8X16, little(), data[d].c[i]));
            for (j, row) in transpose4(b, shuffles, cols).into_iter().enumerate() {
                let r = b.ins().extractlane(addr.c[i], j as u8);
                let r = b.ins().uextend(types::I64, r);
                let p = b.ins().iadd(lds, r);
                b.ins().store(MemFlags::new(), row, p, offset as i32);
            }
        }
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        b.seal_block(join);
    }

    /// An LDS dword read as a lazy vector ([`Lazy::Read`]): the quick conditions (EXEC all ones, every chunk
    /// four consecutive dwords or one, all in range, an LDS of 16 bytes or more) are decided here; where they
    /// fail, the interpreter reads (out of line) into a tmp slot. Each chunk is then loaded where it is used.
    fn lds_read_lazy(&mut self, addr: Vv, offset: u32, m: Value) -> Vv {
        let pattern = self.lds_pattern(addr);
        let ctx = self.ctx;
        let slot = self.tmps;
        self.tmps += 1;
        let (quick, general, join, lds, lim) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
            let fits = lds_chunks_fit(b, len, &pattern, offset, 4, m);
            let big = b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, 16);
            let regular = b.ins().bor(pattern.seq, pattern.same);
            let ok = b.ins().band(fits, regular);
            let ok = b.ins().band(ok, big);
            let lim = b.ins().iadd_imm(len, -16);
            let (general, join) = (b.create_block(), b.create_block());
            b.ins().brif(ok, join, &[], general, &[]);
            (ok, general, join, lds, lim)
        };
        {
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(general);
            b.seal_block(general);
        }
        // the interpreter's checked read (a fault ends the block there); its result kept in the tmp slot
        self.call(Op::LdsRead { offset, dwords: 1 }, &[addr], &[], &[m], 0, 0, 0, true);
        let b = self.b.as_deref_mut().expect("emitting");
        for i in 0..CHUNKS {
            let x = b.ins().load(I32X4, vflags(), ctx, Ctx::V + 16 * i as i32);
            b.ins().store(vflags(), x, ctx, Ctx::TMP + (256 * slot + 16 * i) as i32);
        }
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        b.seal_block(join);
        let r = ReadAt {
            addr,
            offset: offset as i64,
            base: lds,
            lim,
            seq: pattern.seq,
            same: pattern.same,
            quick,
            slot,
            bytes: 4,
            signed: false,
            gather: false,
        };
        self.lazies.push(Lazy::Read(r));
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// A global read as lazy vectors ([`Lazy::Read`]), one per destination register: `bytes` per lane (1 or 2,
    /// extended per `signed`, or whole dwords). Quick when EXEC is all ones and every lane's bytes lie in this
    /// access site's buffer window (same high half, low half inside); the lanes may then be in any order.
    /// Otherwise the interpreter reads (out of line, filling the window) into tmp slots.
    #[allow(clippy::too_many_arguments)]
    fn global_read_lazy(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: Value,
        slow: Op,
    ) -> Vec<Vv> {
        let outs = (bytes as usize).div_ceil(4);
        let pl = self.lds_pattern(lo);
        let ph = self.lds_pattern(hi);
        let ctx = self.ctx;
        let slot = self.tmps;
        self.tmps += outs;
        let w = window_slot(self.site.as_ref().expect("emitting").offset);
        let (quick, general, join, base, lim) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, window_field(w, 0));
            let len = b.ins().load(types::I64, trusted(), wins, window_field(w, 1));
            let host = b.ins().load(types::I64, trusted(), wins, window_field(w, 2));
            let start_lo = b.ins().band_imm(start, 0xffff_ffff);
            let start_hi = b.ins().ushr_imm(start, 32);
            let start_hi = b.ins().ireduce(types::I32, start_hi);
            let hi_lo = b.ins().icmp(IntCC::Equal, ph.min, start_hi);
            let hi_hi = b.ins().icmp(IntCC::Equal, ph.max, start_hi);
            let (min, max) = (b.ins().uextend(types::I64, pl.min), b.ins().uextend(types::I64, pl.max));
            let first = b.ins().iadd_imm(min, offset);
            let last = b.ins().iadd_imm(max, offset + bytes as i64);
            let end = b.ins().iadd(start_lo, len);
            let above = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, first, start_lo);
            let below = b.ins().icmp(IntCC::SignedLessThanOrEqual, last, end);
            let big = b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, 16);
            let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
            let mut ok = b.ins().band(hi_lo, hi_hi);
            for c in [above, below, big, full] {
                ok = b.ins().band(ok, c);
            }
            let base = b.ins().isub(host, start_lo);
            let lim = b.ins().iadd_imm(end, -16);
            let (general, join) = (b.create_block(), b.create_block());
            b.ins().brif(ok, join, &[], general, &[]);
            (ok, general, join, base, lim)
        };
        {
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(general);
            b.seal_block(general);
        }
        self.call(slow, &[lo, hi], &[], &[m], 0, 0, 0, true);
        let b = self.b.as_deref_mut().expect("emitting");
        for d in 0..outs {
            for i in 0..CHUNKS {
                let x = b.ins().load(I32X4, vflags(), ctx, Ctx::V + (256 * d + 16 * i) as i32);
                b.ins()
                    .store(vflags(), x, ctx, Ctx::TMP + (256 * (slot + d) + 16 * i) as i32);
            }
        }
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        b.seal_block(join);
        (0..outs)
            .map(|d| {
                let width = bytes.min(4);
                let r = ReadAt {
                    addr: lo,
                    offset: offset + 4 * d as i64,
                    base,
                    lim,
                    seq: pl.seq,
                    same: pl.same,
                    quick,
                    slot: slot + d,
                    bytes: width,
                    signed,
                    gather: true,
                };
                self.lazies.push(Lazy::Read(r));
                Vv {
                    c: [dummy(); CHUNKS],
                    uniform: None,
                    lazy: Some(self.lazies.len() as u32 - 1),
                }
            })
            .collect()
    }

    /// The [`LdsPattern`] of `addr`, worked out where it is first needed (which dominates its later uses in the
    /// block) and kept in the block's cache.
    fn lds_pattern(&mut self, addr: Vv) -> LdsPattern {
        let key = match addr.lazy.map(|k| &self.lazies[k as usize]) {
            Some(Lazy::Reg {
                field,
                reg,
                kept: None,
                loaded: None,
            }) => PatternKey::Reg(*field, *reg),
            _ => {
                let addr_m = self.mat(addr);
                return self.lds_pattern_of(addr_m, None, 4);
            }
        };
        if let Some(p) = self.cache.as_ref().and_then(|c| c.lds.get(&key)) {
            return *p;
        }
        self.lds_pattern_of(addr, Some(key), 4)
    }

    /// Works out the pattern of `addr` for accesses of `step` bytes a lane (`seq`: each chunk's lanes `step`
    /// bytes apart), remembered under `key`.
    fn lds_pattern_of(&mut self, addr: Vv, key: Option<PatternKey>, step: u32) -> LdsPattern {
        let steps = {
            let b = self.b.as_deref_mut().expect("emitting");
            let steps = b.func.dfg.constants.insert(ConstantData::from(
                (0..4).flat_map(|k| (k * step).to_le_bytes()).collect::<Vec<u8>>(),
            ));
            b.ins().vconst(I32X4, steps)
        };
        let mut firsts = [dummy(); CHUNKS];
        let (mut seq, mut same, mut max, mut min) = (None, None, None, None);
        for i in 0..CHUNKS {
            let c = self.ch(&addr, i);
            let b = self.b.as_deref_mut().expect("emitting");
            firsts[i] = b.ins().extractlane(c, 0);
            let first = b.ins().splat(I32X4, firsts[i]);
            let next = b.ins().iadd(first, steps);
            let s = b.ins().icmp(IntCC::Equal, c, next);
            let e = b.ins().icmp(IntCC::Equal, c, first);
            seq = Some(seq.map_or(s, |a| b.ins().band(a, s)));
            same = Some(same.map_or(e, |a| b.ins().band(a, e)));
            max = Some(max.map_or(c, |a| b.ins().umax(a, c)));
            min = Some(min.map_or(c, |a| b.ins().umin(a, c)));
        }
        let b = self.b.as_deref_mut().expect("emitting");
        let seq = b.ins().vall_true(seq.expect("chunks"));
        let same = b.ins().vall_true(same.expect("chunks"));
        let (vmax, vmin) = (max.expect("chunks"), min.expect("chunks"));
        let (mut m, mut n) = (b.ins().extractlane(vmax, 0), b.ins().extractlane(vmin, 0));
        for j in 1..4u8 {
            let x = b.ins().extractlane(vmax, j);
            m = b.ins().umax(m, x);
            let y = b.ins().extractlane(vmin, j);
            n = b.ins().umin(n, y);
        }
        let p = LdsPattern {
            seq,
            same,
            firsts,
            max: m,
            min: n,
        };
        if let (Some(c), Some(key)) = (self.cache.as_mut(), key) {
            c.lds.insert(key, p);
        }
        p
    }

    /// LDS accesses of 1-4 dwords lane by lane, for any EXEC.
    fn lds_lanes(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        self.lds_lanes_of(addr, offset, 4 * dwords, false, m, data, |jb, addr, data| {
            jb.lds_call(addr, offset, dwords, m, data)
        })
    }

    /// LDS reads (`data` None, 1 or 2 bytes zero- or sign-extended when `signed`) and writes of `bytes` per lane,
    /// inline: when every active lane's access lies inside the LDS, each lane is loaded or stored directly
    /// ([`lane_accesses`]); otherwise `slow` (the interpreter, whose faults end the block there).
    #[allow(clippy::too_many_arguments)]
    fn lds_lanes_of(
        &mut self,
        addr: Vv,
        offset: u32,
        bytes: u32,
        signed: bool,
        m: Value,
        data: Option<&[Vv]>,
        slow: impl FnOnce(&mut Self, Vv, Option<&[Vv]>) -> Vec<Vv>,
    ) -> Vec<Vv> {
        let addr = self.mat(addr);
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        let ctx = self.ctx;
        let masks = self.expand(m);
        let (fast, slow_blk, join) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let (negative, room_v) = lds_room(b, len, offset as i64 + bytes as i64);
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
            let (fast, slow_blk, join) = (b.create_block(), b.create_block(), b.create_block());
            let outs = if data.is_some() {
                0
            } else {
                bytes.div_ceil(4) as usize * CHUNKS
            };
            for _ in 0..outs {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(bad, slow_blk, &[], fast, &[]);
            (fast, slow_blk, join)
        };
        // slow: the interpreter (faults end the block there)
        {
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(slow_blk);
            b.seal_block(slow_blk);
        }
        let slow_out = slow(self, addr, data);
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &slow_out);
        // fast: lane by lane
        b.switch_to_block(fast);
        b.seal_block(fast);
        self.record(
            AccessRecord::desc(REC_LDS, data.is_some(), bytes),
            &addr.c,
            None,
            offset as i64,
            m,
        );
        let b = self.b.as_deref_mut().expect("emitting");
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let loaded = lane_accesses(b, ctx, lds, &addr.c, offset as i32, bytes, signed, &masks, data);
        jump_with(b, join, &loaded);
        join_vectors(b, join)
    }

    /// Global loads (`data` None) and stores of `bytes` per lane (1, 2 or a multiple of 4; narrow loads
    /// zero- or sign-extended), inline when every active lane's access lies in the buffer window of this access
    /// site ([`window_slot`]); otherwise the interpreter's checked access (`slow`), which also fills the window.
    #[allow(clippy::too_many_arguments)]
    fn global_inline(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: Value,
        data: Option<&[Vv]>,
        slow: Op,
    ) -> Vec<Vv> {
        let outs = if data.is_some() {
            0
        } else {
            (bytes as usize).div_ceil(4)
        };
        if self.fb().is_none() {
            return vec![self.dv(); outs];
        }
        if !(i32::MIN as i64..=i32::MAX as i64).contains(&offset) || !self.may_record() {
            let mut ins = vec![lo, hi];
            ins.extend(data.unwrap_or(&[]).iter().copied());
            return self.call_mem(slow, &ins, &[], &[m], outs, 0).0;
        }
        // an 8-byte read stays one host access per lane (below): split into dwords read when each is used, a
        // lane's two halves could come from different moments of another thread's writes
        if data.is_none() && bytes != 8 && self.tmps + outs <= TMP && !self.observed {
            return self.global_read_lazy(lo, hi, offset, bytes, signed, m, slow);
        }
        let (lo, hi) = (self.mat(lo), self.mat(hi));
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        let ctx = self.ctx;
        let masks = self.expand(m);
        let slot = window_slot(self.site.as_ref().expect("emitting").offset);
        let (fast, slow_blk, join, rels, wins, seq) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, window_field(slot, 0));
            let len = b.ins().load(types::I64, trusted(), wins, window_field(slot, 1));
            let room = b.ins().iadd_imm(len, -(bytes as i64));
            let negative = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let room32 = b.ins().ireduce(types::I32, room);
            let start_lo = b.ins().ireduce(types::I32, start);
            let start_hi = b.ins().ushr_imm(start, 32);
            let start_hi = b.ins().ireduce(types::I32, start_hi);
            let (room_v, lo_v, hi_v) = (
                b.ins().splat(I32X4, room32),
                b.ins().splat(I32X4, start_lo),
                b.ins().splat(I32X4, start_hi),
            );
            let off = b.ins().iconst(types::I32, offset);
            let off_v = b.ins().splat(I32X4, off);
            let mut any = None;
            let mut rels = [dummy(); CHUNKS];
            // a one-dword store whose every chunk is four consecutive dwords (checked below) stores chunk by chunk
            let chunked = matches!(data, Some([_])) && bytes == 4;
            let steps = chunked.then(|| {
                let c = b.func.dfg.constants.insert(ConstantData::from(
                    [0u32, 4, 8, 12]
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect::<Vec<u8>>(),
                ));
                b.ins().vconst(I32X4, c)
            });
            let mut seq = None;
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
                if let Some(steps) = steps {
                    let first = b.ins().extractlane(rel, 0);
                    let first = b.ins().splat(I32X4, first);
                    let want = b.ins().iadd(first, steps);
                    let s = b.ins().icmp(IntCC::Equal, rel, want);
                    seq = Some(match seq {
                        None => s,
                        Some(q) => b.ins().band(q, s),
                    });
                }
            }
            let seq = seq.map(|q| {
                let q = b.ins().vall_true(q);
                let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
                b.ins().band(q, full)
            });
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
            (fast, slow_blk, join, rels, wins, seq)
        };
        let _ = slow_blk;
        let mut ins = vec![lo, hi];
        ins.extend(data.unwrap_or(&[]).iter().copied());
        let slow_out = self.call_mem(slow, &ins, &[], &[m], outs, 0).0;
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &slow_out);
        b.switch_to_block(fast);
        b.seal_block(fast);
        self.record(
            AccessRecord::desc(REC_GLOBAL, data.is_some(), bytes),
            &lo.c,
            Some(&hi.c),
            offset,
            m,
        );
        let b = self.b.as_deref_mut().expect("emitting");
        let host = b.ins().load(types::I64, trusted(), wins, window_field(slot, 2));
        if let (Some(seq), Some([d])) = (seq, data) {
            let (chunked, lanes) = (b.create_block(), b.create_block());
            b.ins().brif(seq, chunked, &[], lanes, &[]);
            b.switch_to_block(chunked);
            b.seal_block(chunked);
            for i in 0..CHUNKS {
                let first = b.ins().extractlane(rels[i], 0);
                let first = b.ins().uextend(types::I64, first);
                let p = b.ins().iadd(host, first);
                b.ins().store(MemFlags::new(), d.c[i], p, 0);
            }
            b.ins().jump(join, &[]);
            b.switch_to_block(lanes);
            b.seal_block(lanes);
        }
        let loaded = lane_accesses(b, ctx, host, &rels, 0, bytes, signed, &masks, data);
        jump_with(b, join, &loaded);
        join_vectors(b, join)
    }

    /// A private access of `bytes` (whole dwords) by the lanes of `m`: where every lane is active at one
    /// private offset (`uniform` tells whether the lanes share one and gives it) that is dword-aligned and
    /// inside the lane's segment, the whole wave reads or writes one row of 64 dwords per dword of the access
    /// ([`emu_core::sem::SWIZZLE_ROW`]) straight from host memory when the site's window holds the rows (a stack
    /// slot, an unrolled private array, in a loop's later passes); with no lane active, nothing; any other
    /// access (and a fault) through `generic`, the semantics' way.
    fn private_rows(
        &mut self,
        bytes: u32,
        data: Option<&[Vv]>,
        m: Value,
        uniform: impl FnOnce(&mut FunctionBuilder<'f>) -> (Value, Value),
        generic: impl FnOnce(&mut Self, Option<&[Vv]>) -> Result<Vec<Vv>, ExecError>,
    ) -> Result<Vec<Vv>, ExecError> {
        let rows = (bytes / 4) as i64;
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let outs = if data.is_some() { 0 } else { rows as usize };
        let ctx = self.ctx;
        let slot = window_slot(self.site.as_ref().expect("emitting").offset);
        let (fast, join, rel, wins) = {
            let b = self.b.as_deref_mut().expect("emitting");
            // no lane (FLAT's private lanes, mostly): nothing to access
            let join = b.create_block();
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            let (none, some) = (b.create_block(), b.create_block());
            let empty = b.ins().icmp_imm(IntCC::Equal, m, 0);
            b.ins().brif(empty, none, &[], some, &[]);
            b.switch_to_block(none);
            b.seal_block(none);
            let zero = b.ins().iconst(types::I32, 0);
            let zero = b.ins().splat(I32X4, zero);
            let zeros: Vec<_> = (0..outs * CHUNKS).map(|_| zero.into()).collect();
            b.ins().jump(join, &zeros);
            b.switch_to_block(some);
            b.seal_block(some);
            let (same, first) = uniform(b);
            let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
            let low = b.ins().band_imm(first, 3);
            let aligned = b.ins().icmp_imm(IntCC::Equal, low, 0);
            let ok = b.ins().band(same, full);
            let ok = b.ins().band(ok, aligned);
            // inside the lane's segment (the window, the wave's own segment, refuses a row past it as well)
            let lane_bytes = b.ins().load(types::I64, trusted(), ctx, Ctx::SCRATCH_LANE_BYTES);
            let first64 = b.ins().uextend(types::I64, first);
            let end = b.ins().iadd_imm(first64, bytes as i64);
            let inside = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, lane_bytes);
            let ok = b.ins().band(ok, inside);
            let base = b.ins().load(types::I64, trusted(), ctx, Ctx::SCRATCH_BASE);
            let dword = b.ins().ushr_imm(first, 2);
            let dword = b.ins().uextend(types::I64, dword);
            let row = b.ins().imul_imm(dword, emu_core::sem::SWIZZLE_ROW);
            let addr = b.ins().iadd(base, row);
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, window_field(slot, 0));
            let len = b.ins().load(types::I64, trusted(), wins, window_field(slot, 1));
            let rel = b.ins().isub(addr, start);
            let room = b.ins().iadd_imm(len, -rows * emu_core::sem::SWIZZLE_ROW);
            let short = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let outside = b.ins().icmp(IntCC::UnsignedGreaterThan, rel, room);
            let bad = b.ins().bor(short, outside);
            let ok = b.ins().band_not(ok, bad);
            let (fast, slow) = (b.create_block(), b.create_block());
            b.ins().brif(ok, fast, &[], slow, &[]);
            b.switch_to_block(slow);
            b.seal_block(slow);
            (fast, join, rel, wins)
        };
        let slow_out = generic(self, data.as_deref())?;
        let slow_out: Vec<Vv> = slow_out.into_iter().map(|v| self.mat(v)).collect();
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &slow_out);
        b.switch_to_block(fast);
        b.seal_block(fast);
        let host = b.ins().load(types::I64, trusted(), wins, window_field(slot, 2));
        let at = b.ins().iadd(host, rel);
        let mut loaded = Vec::with_capacity(outs);
        for j in 0..rows as usize {
            let mut c = [dummy(); CHUNKS];
            for (i, x) in c.iter_mut().enumerate() {
                let off = (j as i64 * emu_core::sem::SWIZZLE_ROW) as i32 + 16 * i as i32;
                match &data {
                    Some(d) => {
                        b.ins().store(MemFlags::new(), d[j].c[i], at, off);
                    }
                    None => *x = b.ins().load(I32X4, MemFlags::new(), at, off),
                }
            }
            if data.is_none() {
                loaded.push(Vv {
                    c,
                    uniform: None,
                    lazy: None,
                });
            }
        }
        jump_with(b, join, &loaded);
        Ok(join_vectors(b, join))
    }

    /// An f64 compare of (lo, hi) register pairs, lowered from the predicate's truth table (rules::truth) as
    /// the f32 compares are: lanes regrouped into f64x2 vectors as in [`Self::f64_op`], two mask bits from each.
    fn v_cmp_f64(&mut self, c: Compare, a: (Vv, Vv), x: (Vv, Vv)) -> Value {
        let cond = float_cond(rules::truth(c.pred));
        if self.fb().is_none() {
            return dummy();
        }
        let (cc, and, not) = match cond {
            Ok(p) => p,
            Err(k) => {
                return self
                    .fb()
                    .expect("emitting")
                    .ins()
                    .iconst(types::I64, if k { -1 } else { 0 })
            }
        };
        let srcs = [a, x].map(|(l, h)| (self.mat(l), self.mat(h)));
        let b = self.b.as_deref_mut().expect("emitting");
        let joins = f64x2_joins(b);
        let mut m = b.ins().iconst(types::I64, 0);
        for i in 0..CHUNKS {
            let [fs, gs] = srcs.map(|(l, h)| f64x2_pair(b, joins, l.c[i], h.c[i]));
            for (half, (f, g)) in fs.into_iter().zip(gs).enumerate() {
                let r = float_mask(b, (cc, and, not), f, g);
                let bits = b.ins().vhigh_bits(types::I64, r);
                let shift = 4 * i + 2 * half;
                let bits = if shift == 0 {
                    bits
                } else {
                    b.ins().ishl_imm(bits, shift as i64)
                };
                m = b.ins().bor(m, bits);
            }
        }
        m
    }

    /// An f64 operation on (lo, hi) register pairs: lanes regrouped into f64x2 vectors, `op` applied, results
    /// split back; a lane whose result is NaN gets the interpreter's NaN (first NaN source quieted) on a side
    /// path.
    fn f64_op(&mut self, srcs: &[(Vv, Vv)], op: impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value) -> (Vv, Vv) {
        if self.fb().is_none() {
            return (self.dv(), self.dv());
        }
        if let Some(r) = self.f64_loop(srcs, &op) {
            return r;
        }
        let srcs: Vec<(Vv, Vv)> = srcs.iter().map(|(l, h)| (self.mat(*l), self.mat(*h))).collect();
        let srcs = &srcs[..];
        let b = self.b.as_deref_mut().expect("emitting");
        let shuffles = (f64x2_joins(b), f64x2_splits(b));
        let (mut lo, mut hi) = ([dummy(); CHUNKS], [dummy(); CHUNKS]);
        let mut any_nan = None;
        for i in 0..CHUNKS {
            let chunks: Vec<(Value, Value)> = srcs.iter().map(|(l, h)| (l.c[i], h.c[i])).collect();
            let (n, [l, h]) = f64_chunk(b, shuffles, &op, &chunks);
            any_nan = Some(match any_nan {
                None => n,
                Some(a) => b.ins().bor(a, n),
            });
            (lo[i], hi[i]) = (l, h);
        }
        let result = (
            Vv {
                c: lo,
                uniform: None,
                lazy: None,
            },
            Vv {
                c: hi,
                uniform: None,
                lazy: None,
            },
        );
        // NaN results: redo the lanes on the interpreter's rule through a call (rare)
        let any = b.ins().vany_true(any_nan.expect("chunks"));
        let (slow, done) = (b.create_block(), b.create_block());
        for _ in 0..2 * CHUNKS {
            b.append_block_param(done, I32X4);
        }
        let args: Vec<_> = result
            .0
            .c
            .iter()
            .chain(result.1.c.iter())
            .map(|x| (*x).into())
            .collect();
        b.ins().brif(any, slow, &[], done, &args);
        b.switch_to_block(slow);
        b.seal_block(slow);
        let ins: Vec<Vv> = srcs
            .iter()
            .flat_map(|(l, h)| [*l, *h])
            .chain([result.0, result.1])
            .collect();
        let fixed = self.call_v(
            Op::Nan64 {
                sources: srcs.len() as u8,
            },
            &ins,
            &[],
            2,
        );
        let b = self.b.as_deref_mut().expect("emitting");
        let args: Vec<_> = fixed[0]
            .c
            .iter()
            .chain(fixed[1].c.iter())
            .map(|x| (*x).into())
            .collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        b.seal_block(done);
        let p = b.block_params(done).to_vec();
        (
            Vv {
                c: p[..CHUNKS].try_into().expect("16"),
                uniform: None,
                lazy: None,
            },
            Vv {
                c: p[CHUNKS..].try_into().expect("16"),
                uniform: None,
                lazy: None,
            },
        )
    }

    /// [`JitBackend::f64_op`] as a loop over the chunks into two of the context's tmp slots (the result's low and
    /// high dwords, returned as lazy vectors that read them): each pass computes one chunk of the sources and
    /// the result, so no chunk waits in a host register for the others. A NaN in any lane redoes the whole
    /// result on the interpreter's rule after the loop. `None` (nothing emitted that matters) when the sources
    /// cannot be read in a loop or the tmp slots run out.
    fn f64_loop(
        &mut self,
        srcs: &[(Vv, Vv)],
        op: &impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value,
    ) -> Option<(Vv, Vv)> {
        let tmps = self.tmps;
        let mut spill = Vec::new();
        for v in srcs.iter().flat_map(|(l, h)| [l, h]) {
            match self.loop_operands(v) {
                Some(s) => spill.extend(s),
                None => {
                    self.tmps = tmps;
                    return None;
                }
            }
        }
        if self.tmps + 2 > TMP {
            self.tmps = tmps;
            return None;
        }
        let out = self.tmps;
        self.tmps += 2;
        let ctx = self.ctx;
        let (head, off, flag) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let head = b.create_block();
            let off = b.append_block_param(head, types::I64);
            let flag = b.append_block_param(head, types::I8);
            let (zero, none) = (b.ins().iconst(types::I64, 0), b.ins().iconst(types::I8, 0));
            b.ins().jump(head, &[zero.into(), none.into()]);
            b.switch_to_block(head);
            (head, off, flag)
        };
        let chunks: Vec<(Value, Value)> = srcs
            .iter()
            .map(|(l, h)| (self.ch_at(l, off, &spill, true), self.ch_at(h, off, &spill, true)))
            .collect();
        let b = self.b.as_deref_mut().expect("emitting");
        let shuffles = (f64x2_joins(b), f64x2_splits(b));
        let (n, result) = f64_chunk(b, shuffles, op, &chunks);
        let any = b.ins().vany_true(n);
        let flag = b.ins().bor(flag, any);
        let p = b.ins().iadd(ctx, off);
        for (d, x) in result.into_iter().enumerate() {
            b.ins().store(vflags(), x, p, Ctx::TMP + 256 * (out + d) as i32);
        }
        let next = b.ins().iadd_imm(off, 16);
        let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
        let (after, slow, done) = (b.create_block(), b.create_block(), b.create_block());
        b.ins().brif(more, head, &[next.into(), flag.into()], after, &[]);
        b.seal_block(head);
        b.switch_to_block(after);
        b.seal_block(after);
        b.ins().brif(flag, slow, &[], done, &[]);
        b.switch_to_block(slow);
        b.seal_block(slow);
        // NaN results: the whole result again on the interpreter's rule (first NaN source quieted), through a call
        let mut slot_vv = |s: usize| {
            let at = Ctx::TMP + 256 * s as i32;
            let c: [Value; CHUNKS] = std::array::from_fn(|i| b.ins().load(I32X4, vflags(), ctx, at + 16 * i as i32));
            Vv {
                c,
                uniform: None,
                lazy: None,
            }
        };
        let result = [slot_vv(out), slot_vv(out + 1)];
        let mut ins: Vec<Vv> = srcs.iter().flat_map(|(l, h)| [self.mat(*l), self.mat(*h)]).collect();
        ins.extend(result);
        let fixed = self.call_v(
            Op::Nan64 {
                sources: srcs.len() as u8,
            },
            &ins,
            &[],
            2,
        );
        let b = self.b.as_deref_mut().expect("emitting");
        for (d, v) in fixed.iter().enumerate() {
            for i in 0..CHUNKS {
                b.ins()
                    .store(vflags(), v.c[i], ctx, Ctx::TMP + (256 * (out + d) + 16 * i) as i32);
            }
        }
        b.ins().jump(done, &[]);
        b.switch_to_block(done);
        b.seal_block(done);
        Some((
            self.slot_vv(Ctx::TMP + 256 * out as i32),
            self.slot_vv(Ctx::TMP + 256 * (out + 1) as i32),
        ))
    }

    /// A vector read lazily, chunk by chunk where it is used, from the context's 256 bytes at `at`.
    fn slot_vv(&mut self, at: i32) -> Vv {
        self.lazies.push(Lazy::Slot { at });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    fn call_v(&mut self, op: Op, vin: &[Vv], min: &[Value], vout: usize) -> Vec<Vv> {
        self.call(op, vin, &[], min, vout, 0, 0, false).0
    }

    fn call_mem(
        &mut self,
        op: Op,
        vin: &[Vv],
        sin: &[Value],
        min: &[Value],
        vout: usize,
        sout: usize,
    ) -> (Vec<Vv>, Vec<Value>) {
        let (v, s, _) = self.call(op, vin, sin, min, vout, sout, 0, true);
        (v, s)
    }

    /// Chunk `i` of `v`, emitted here when `v` is lazy (a register chunk loaded, an operation's chunk computed,
    /// with the NaN rule where it applies).
    fn ch(&mut self, v: &Vv, i: usize) -> Value {
        self.chunk(v, i, true)
    }

    /// Chunk `i` of `v` without the NaN rule of its outermost operation (for a write that checks for NaN
    /// itself).
    fn ch_raw(&mut self, v: &Vv, i: usize) -> Value {
        self.chunk(v, i, false)
    }

    fn chunk(&mut self, v: &Vv, i: usize, nan_rule: bool) -> Value {
        let Some(k) = v.lazy else { return v.c[i] };
        // one memo per top-level chunk computation: its code is straight-line, so what it computed first
        // dominates every later use within it
        let top = self.chunk_memo.is_none();
        if top {
            self.chunk_memo = Some(std::collections::HashMap::new());
        } else if let Some(x) = self.chunk_memo.as_ref().and_then(|m| m.get(&(k, nan_rule))) {
            return *x;
        }
        let x = self.chunk_lazy(k, i, nan_rule);
        if top {
            self.chunk_memo = None;
        } else if let Some(m) = self.chunk_memo.as_mut() {
            m.insert((k, nan_rule), x);
        }
        x
    }

    /// [`Self::chunk`] of lazy vector `k`.
    fn chunk_lazy(&mut self, k: u32, i: usize, nan_rule: bool) -> Value {
        match &self.lazies[k as usize] {
            Lazy::Slot { at } => {
                let (ctx, at) = (self.ctx, *at);
                let b = self.b.as_deref_mut().expect("emitting");
                b.ins().load(I32X4, vflags(), ctx, at + 16 * i as i32)
            }
            Lazy::Spent => unreachable!("a register read a call consumed is not read again"),
            Lazy::Reg {
                field,
                reg,
                kept,
                loaded,
            } => {
                let (field, reg, kept, loaded) = (*field, *reg, *kept, *loaded);
                if let Some(vals) = loaded {
                    return vals[i];
                }
                let (base, off) = match kept {
                    Some(slot) => (self.ctx, Ctx::KEEP + (256 * slot + 16 * i) as i32),
                    None => (self.reg_base(field, reg), 16 * i as i32),
                };
                let b = self.b.as_deref_mut().expect("emitting");
                b.ins().load(I32X4, vflags(), base, off)
            }
            Lazy::Expr { args, f, nan } => {
                let (args, f, nan) = (args.clone(), f.clone(), if nan_rule { nan.clone() } else { Vec::new() });
                let vals: Vec<Value> = args.iter().map(|a| self.ch(a, i)).collect();
                let r = f(self.b.as_deref_mut().expect("emitting"), &vals);
                if nan.is_empty() {
                    return r;
                }
                let srcs: Vec<Value> = nan.iter().map(|a| self.ch(a, i)).collect();
                rules::propagate_nan32(&mut Chunks(self.b.as_deref_mut().expect("emitting")), &srcs, r)
            }
            Lazy::Read(r) => {
                let r = *r;
                let a = self.ch(&r.addr, i);
                let ctx = self.ctx;
                let b = self.b.as_deref_mut().expect("emitting");
                let off = b.ins().iconst(types::I64, 16 * i as i64);
                Self::read_chunk(b, ctx, a, off, &r)
            }
            Lazy::Mask { m } => {
                let m = *m;
                let b = self.b.as_deref_mut().expect("emitting");
                let bits = if i == 0 { m } else { b.ins().ushr_imm(m, 4 * i as i64) };
                mask_chunk(b, bits)
            }
            Lazy::Blend { m, new, old } => {
                let (m, new, old) = (*m, *new, *old);
                let (x, y) = (self.chunk(&new, i, nan_rule), self.chunk(&old, i, nan_rule));
                let b = self.b.as_deref_mut().expect("emitting");
                let bits = if i == 0 { m } else { b.ins().ushr_imm(m, 4 * i as i64) };
                let lanes = mask_chunk(b, bits);
                b.ins().bitselect(lanes, x, y)
            }
            Lazy::Parked { at } => {
                let (ctx, at) = (self.ctx, *at);
                let b = self.b.as_deref_mut().expect("emitting");
                b.ins().load(I32X4, vflags(), ctx, at + 16 * i as i32)
            }
        }
    }

    /// Chunk (at byte offset `off` of a vector) of a read ([`ReadAt`]) whose address chunk is `a`: on the quick
    /// path four consecutive dwords or one dword splat at the first lane's address (LDS reads), or lane by lane
    /// (global reads); otherwise the interpreter's result from the tmp slot (the loads then go to the context's
    /// sink, harmlessly).
    fn read_chunk(b: &mut FunctionBuilder<'f>, ctx: Value, a: Value, off: Value, r: &ReadAt) -> Value {
        let sink = b.ins().iadd_imm(ctx, Ctx::SINK as i64);
        let base = b.ins().select(r.quick, r.base, sink);
        let zero = b.ins().iconst(types::I64, 0);
        let q = if r.gather {
            gather_chunk(b, a, base, r.offset, r.bytes, r.signed, Some(r.quick))
        } else {
            let first = b.ins().extractlane(a, 0);
            let first = b.ins().uextend(types::I64, first);
            let at = b.ins().iadd_imm(first, r.offset);
            // a four-dword load for a chunk that is one dword must stay inside the LDS: from at most len - 16 (the
            // quick path needs an LDS of 16 bytes or more; the load is not used then)
            let vat = b.ins().umin(at, r.lim);
            let (vat, at) = (b.ins().select(r.quick, vat, zero), b.ins().select(r.quick, at, zero));
            let (vp, sp) = (b.ins().iadd(base, vat), b.ins().iadd(base, at));
            let v = b.ins().load(I32X4, MemFlags::new(), vp, 0);
            let x = b.ins().load(types::I32, MemFlags::new(), sp, 0);
            let x = b.ins().splat(I32X4, x);
            b.ins().select(r.seq, v, x)
        };
        let t = b.ins().iadd(ctx, off);
        let g = b.ins().load(I32X4, vflags(), t, Ctx::TMP + 256 * r.slot as i32);
        b.ins().select(r.quick, q, g)
    }

    /// A lazy operation over `args`; over wave-uniform operands alone, one chunk computed here and the result
    /// uniform (a chunk operation works lane by lane: equal lanes in, equal lanes out).
    fn lazy_op(&mut self, args: Vec<Vv>, f: ChunkFn<'f>, nan: Vec<Vv>) -> Vv {
        if self.b.is_some() && all_uniform(args.iter().chain(nan.iter())) {
            let vals: Vec<Value> = args.iter().map(|a| a.c[0]).collect();
            let b = self.b.as_deref_mut().expect("emitting");
            let r = f(b, &vals);
            return self.uniform_result(r, &nan);
        }
        self.lazies.push(Lazy::Expr { args, f, nan });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// The uniform vector of chunk `r` (every lane the same), with the NaN rule over the uniform `nan` sources.
    fn uniform_result(&mut self, r: Value, nan: &[Vv]) -> Vv {
        let b = self.b.as_deref_mut().expect("emitting");
        let r = if nan.is_empty() {
            r
        } else {
            let srcs: Vec<Value> = nan.iter().map(|a| a.c[0]).collect();
            rules::propagate_nan32(&mut Chunks(b), &srcs, r)
        };
        let s = b.ins().extractlane(r, 0);
        Vv {
            c: [r; CHUNKS],
            uniform: Some(s),
            lazy: None,
        }
    }

    /// `v` with all its chunks emitted here (for code that works on the whole vector at once).
    fn mat(&mut self, v: Vv) -> Vv {
        if v.lazy.is_none() || self.fb().is_none() {
            return v;
        }
        let mut c = [dummy(); CHUNKS];
        for (i, x) in c.iter_mut().enumerate() {
            *x = self.ch(&v, i);
        }
        Vv {
            c,
            uniform: v.uniform,
            lazy: None,
        }
    }

    /// Before register `reg` of the file at `field` is written: reads of it handed out earlier in this
    /// instruction keep the value they read — copied to a keep slot of the context (or, with none left, loaded
    /// into SSA values).
    fn settle(&mut self, field: i32, reg: u32) {
        self.settle_except(field, reg, &[]);
    }

    /// The lazy vectors `v` is computed from (itself included).
    fn tree(&self, v: &Vv) -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo: Vec<Vv> = vec![*v];
        while let Some(x) = todo.pop() {
            if let Some(k) = x.lazy {
                if !out.contains(&(k as usize)) {
                    out.push(k as usize);
                    match &self.lazies[k as usize] {
                        Lazy::Expr { args, nan, .. } => todo.extend(args.iter().chain(nan.iter()).copied()),
                        Lazy::Read(r) => todo.push(r.addr),
                        Lazy::Blend { new, old, .. } => todo.extend([*new, *old]),
                        Lazy::Reg { .. }
                        | Lazy::Slot { .. }
                        | Lazy::Spent
                        | Lazy::Mask { .. }
                        | Lazy::Parked { .. } => {}
                    }
                }
            }
        }
        out
    }

    /// [`Self::settle`], but for the lazy vectors in `except` (read in place by the write itself).
    fn settle_except(&mut self, field: i32, reg: u32, except: &[usize]) {
        let pending: Vec<usize> = self
            .lazies
            .iter()
            .enumerate()
            .filter(|(k, l)| {
                !except.contains(k)
                    && matches!(l, Lazy::Reg { field: f, reg: r, kept: None, loaded: None } if *f == field && *r == reg)
            })
            .map(|(k, _)| k)
            .collect();
        for k in pending {
            let base = self.reg_base(field, reg);
            let ctx = self.ctx;
            let slot = (self.kept < KEEP).then_some(self.kept);
            let b = self.b.as_deref_mut().expect("emitting");
            let mut vals = [dummy(); CHUNKS];
            for (i, x) in vals.iter_mut().enumerate() {
                *x = b.ins().load(I32X4, vflags(), base, 16 * i as i32);
                if let Some(slot) = slot {
                    b.ins()
                        .store(vflags(), *x, ctx, Ctx::KEEP + (256 * slot + 16 * i) as i32);
                }
            }
            if let Lazy::Reg { kept, loaded, .. } = &mut self.lazies[k] {
                match slot {
                    Some(slot) => *kept = Some(slot),
                    None => *loaded = Some(vals),
                }
            }
            if slot.is_some() {
                self.kept += 1;
            }
        }
        if let Some(c) = self.cache.as_deref_mut() {
            c.written(field, reg);
        }
    }

    /// The address of register `reg` in the file at `field`, from the base loaded at the instruction's start.
    fn reg_base(&mut self, field: i32, reg: u32) -> Value {
        let (v, a) = self.file_base.expect("emitting");
        let base = if field == Ctx::AGPRS { a } else { v };
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().iadd_imm(base, reg as i64 * 256)
    }

    /// Register `reg` of the VGPR or AGPR file (`base_field`): range-checked and counted for sizing the file,
    /// then read (or, probing, a placeholder).
    fn read_file(&mut self, base_field: i32, reg: u32) -> Vv {
        if !self.note_reg(base_field, reg) || self.fb().is_none() {
            return self.dv();
        }
        if let Some(lanes) = self.known_on_exec(base_field, reg) {
            return self.v_const(&lanes);
        }
        if let Some(v) = self.written_on_exec(base_field, reg) {
            return v;
        }
        self.load_reg(base_field, reg)
    }

    /// In a lane-local instruction ([`RegCache::lane_local`]), the value of a register's pending write made
    /// under today's EXEC: the register holds it in every lane the instruction computes, so the blend with what
    /// the register held before is left out (a value written from scalars stays one scalar).
    fn written_on_exec(&self, field: i32, reg: u32) -> Option<Vv> {
        let c = self.cache.as_deref()?;
        if !(c.defer && c.lane_local) {
            return None;
        }
        self.pending_under(field, reg, c.exec?).map(|(new, _)| new)
    }

    /// In an instruction that reads only EXEC's lanes ([`RegCache::exec_lanes`]), the lanes of a register an
    /// earlier instruction of the block wrote with known lanes under today's EXEC (see [`RegCache::known`]).
    fn known_on_exec(&self, field: i32, reg: u32) -> Option<[u32; 64]> {
        let c = self.cache.as_deref()?;
        if !c.exec_lanes {
            return None;
        }
        self.known_under(field, reg, c.exec?)
    }

    /// The lanes register `reg` of the file at `field` holds in the lanes of mask `m`, where an earlier write
    /// gave it known lanes under a mask that holds `m`'s lanes.
    fn known_under(&self, field: i32, reg: u32, m: Value) -> Option<[u32; 64]> {
        let c = self.cache.as_deref()?;
        let b = self.b.as_deref()?;
        c.known
            .iter()
            .find(|(k, w, _)| *k == (field, reg) && within(b, m, *w, 4))
            .map(|(_, _, lanes)| *lanes)
    }

    /// The pending write of register `reg` of the file at `field` when it was made under lane mask `m`: its
    /// value in those lanes and the register's value before it.
    fn pending_under(&self, field: i32, reg: u32, m: Value) -> Option<(Vv, Vv)> {
        let c = self.cache.as_deref()?;
        let (_, v) = c.pending.iter().find(|(k, _)| *k == (field, reg))?;
        match &self.lazies[v.lazy? as usize] {
            Lazy::Blend { m: pm, new, old } if *pm == m => Some((*new, *old)),
            _ => None,
        }
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
        let used = if base_field == Ctx::AGPRS {
            &mut self.agprs_used
        } else {
            &mut self.vgprs_used
        };
        *used = (*used).max(reg + 1);
        true
    }

    fn load_reg(&mut self, base_field: i32, reg: u32) -> Vv {
        if let Some(c) = self.cache.as_deref() {
            if let Some((_, v)) = c.pending.iter().find(|(k, _)| *k == (base_field, reg)) {
                return *v;
            }
        }
        self.lazies.push(Lazy::Reg {
            field: base_field,
            reg,
            kept: None,
            loaded: None,
        });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
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

    /// The class test of f32 or f16 values `a` against the class masks `x`, inline: the class's bit
    /// ([`rules::class_bit`], the rule the interpreter's [`rules::class_of`] is checked against) and the mask.
    fn v_cmp_class(&mut self, ty: DataType, a: Vv, x: Vv) -> Value {
        if self.fb().is_none() {
            return dummy();
        }
        let mut mask = None;
        for i in 0..CHUNKS {
            let (ai, xi) = (self.ch(&a, i), self.ch(&x, i));
            let b = self.b.as_deref_mut().expect("emitting");
            let mut al = Chunks(b);
            let bit = rules::class_bit(&mut al, ai, ty);
            let zero = rules::LaneAlgebra::constant(&mut al, 0);
            let hit = al.0.ins().band(bit, xi);
            let lanes = al.0.ins().icmp(IntCC::NotEqual, hit, zero);
            mask = Some(self.collapse_step(mask, lanes, i));
        }
        mask.expect("chunks")
    }

    /// An f32 division step (v_div_scale, v_div_fmas, v_div_fixup: [`LaneFn`]) inline where every lane is a
    /// plain case, else the interpreter's implementation through a call. Plain: for div_scale and div_fixup the
    /// cases [`emu_core::lanefn::div_scale_f32_unscaled`] and [`emu_core::lanefn::div_fixup_f32_plain`] define
    /// (the operand unchanged, VCC clear; the quotient with the division's sign); for div_fmas VCC clear and no
    /// NaN among the operands and the result, where it is the fused multiply-add, rounded once.
    fn div_step_f32(&mut self, f: LaneFn, args: &[Vv]) -> Vec<Vv> {
        let outs = f.outputs();
        let args: Vec<Vv> = args.iter().map(|a| self.mat(*a)).collect();
        let mut fast = vec![[dummy(); CHUNKS]; outs];
        let mut all: Option<Value> = None;
        for i in 0..CHUNKS {
            let x: Vec<Value> = args.iter().map(|a| self.ch(a, i)).collect();
            let b = self.b.as_deref_mut().expect("emitting");
            let mut al = Chunks(b);
            let ok = match f {
                LaneFn::DivScaleF32 => {
                    fast[0][i] = x[0];
                    fast[1][i] = rules::LaneAlgebra::constant(&mut al, 0);
                    emu_core::lanefn::div_scale_f32_unscaled(&mut al, x[1], x[2])
                }
                LaneFn::DivFixupF32 => {
                    fast[0][i] = emu_core::lanefn::div_fixup_f32_signed(&mut al, x[0], x[1], x[2]);
                    emu_core::lanefn::div_fixup_f32_plain(&mut al, x[0], x[1], x[2])
                }
                _ => {
                    let fl: Vec<Value> = x[..3].iter().map(|&v| al.0.ins().bitcast(F32X4, little(), v)).collect();
                    let r = al.0.ins().fma(fl[0], fl[1], fl[2]);
                    let r = al.0.ins().bitcast(I32X4, little(), r);
                    fast[0][i] = r;
                    // VCC (bit 0 of the fourth operand) clear, and nothing NaN
                    let one = rules::LaneAlgebra::constant(&mut al, 1);
                    let vcc = al.0.ins().band(x[3], one);
                    let zero = rules::LaneAlgebra::constant(&mut al, 0);
                    let mut ok = al.0.ins().icmp(IntCC::Equal, vcc, zero);
                    for v in [x[0], x[1], x[2], r] {
                        let n = rules::is_nan32(&mut al, v);
                        ok = al.0.ins().band_not(ok, n);
                    }
                    ok
                }
            };
            all = Some(match all {
                Some(a) => b.ins().band(a, ok),
                None => ok,
            });
        }
        let fast: Vec<Vv> = fast
            .into_iter()
            .map(|c| Vv {
                c,
                uniform: None,
                lazy: None,
            })
            .collect();
        let join = {
            let b = self.b.as_deref_mut().expect("emitting");
            let all = b.ins().vall_true(all.expect("chunks"));
            let (fast_blk, slow, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(all, fast_blk, &[], slow, &[]);
            b.switch_to_block(fast_blk);
            b.seal_block(fast_blk);
            jump_with(b, join, &fast);
            b.switch_to_block(slow);
            b.seal_block(slow);
            join
        };
        let r = self.call_v(Op::LaneFn { f }, &args, &[], outs);
        let b = self.b.as_deref_mut().expect("emitting");
        jump_with(b, join, &r);
        join_vectors(b, join)
    }

    fn dv(&self) -> Vv {
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: None,
        }
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

    /// The file and first register when `regs` are reads of consecutive registers of one file, straight from it.
    fn reg_run(&self, regs: &[Vv]) -> Option<(i32, u32)> {
        let mut first = None;
        for (i, v) in regs.iter().enumerate() {
            let Some(Lazy::Reg {
                field,
                reg,
                kept: None,
                loaded: None,
            }) = v.lazy.map(|k| &self.lazies[k as usize])
            else {
                return None;
            };
            let (f0, r0) = *first.get_or_insert((*field, *reg));
            if *field != f0 || *reg != r0 + i as u32 {
                return None;
            }
        }
        first
    }

    /// An MFMA whose operands are each a run of registers: [`crate::call::mfma_registers`] reads them where
    /// they are and leaves D in the first call slots, returned as lazy vectors (so each register of D is
    /// written in a loop). The operand reads are spent: writing D over them keeps no copies.
    fn mfma_direct(&mut self, shape: Mfma, runs: [(i32, u32); 3], reads: Vec<Vv>) -> Vec<Vv> {
        let ctx = self.ctx;
        let site = self.site.as_mut().expect("emitting");
        site.calls.push(Box::new(Call {
            op: Op::Mfma { shape },
            inst: site.inst,
            offset: site.offset,
            vectors_in: 0,
        }));
        let call_ptr = &**site.calls.last().expect("just pushed") as *const Call;
        let ptrs: Vec<Value> = runs.iter().map(|&(field, reg)| self.reg_base(field, reg)).collect();
        let b = self.b.as_deref_mut().expect("emitting");
        let mut sig = cranelift_codegen::ir::Signature::new(cranelift_codegen::isa::CallConv::SystemV);
        sig.params.extend([cranelift_codegen::ir::AbiParam::new(types::I64); 5]);
        let sig = b.import_signature(sig);
        let f = b
            .ins()
            .iconst(types::I64, crate::call::mfma_registers as *const () as i64);
        let cp = b.ins().iconst(types::I64, call_ptr as i64);
        b.ins().call_indirect(sig, f, &[ctx, cp, ptrs[0], ptrs[1], ptrs[2]]);
        for v in reads {
            if let Some(k) = v.lazy {
                self.lazies[k as usize] = Lazy::Spent;
            }
        }
        (0..shape.acc_regs())
            .map(|k| self.slot_vv(Ctx::V + 256 * k as i32))
            .collect()
    }

    /// v_perm_b32 with one selector `sel` for every lane, lazily: byte shuffles of each chunk of `a` (the high
    /// dword), `b` and their bytes' sign masks, the shuffle indices worked out once from `sel`'s bytes (0-7 a byte
    /// of {a, b}, 8-11 the sign of byte 1 or 3 of b or a, 12 zero, 13 and up 0xff); an index of 16 or more
    /// shuffles in zero.
    fn perm_uniform(&mut self, a: Vv, x: Vv, sel: Value) -> Vv {
        let [idx_b, idx_a, idx_sb, idx_sa, ones] = {
            let b = self.b.as_deref_mut().expect("emitting");
            let splat8 = |b: &mut FunctionBuilder<'f>, v: i64| {
                let c = b.ins().iconst(types::I8, v);
                b.ins().splat(types::I8X16, c)
            };
            let lanes = b
                .func
                .dfg
                .constants
                .insert(ConstantData::from((0..16u8).map(|i| i & !3).collect::<Vec<u8>>()));
            let base = b.ins().vconst(types::I8X16, lanes);
            let s = b.ins().splat(I32X4, sel);
            let s = b.ins().bitcast(types::I8X16, little(), s);
            let none = splat8(b, 0x80);
            // a byte index into the chunk where `cond` holds: `base` (the lane's first byte) + `at`
            let pick = |b: &mut FunctionBuilder<'f>, cond: Value, at: Value, other: Value| {
                let i = b.ins().iadd(base, at);
                b.ins().bitselect(cond, i, other)
            };
            let four = splat8(b, 4);
            let low = b.ins().icmp(IntCC::UnsignedLessThan, s, four);
            let idx_b = pick(b, low, s, none);
            let s4 = b.ins().isub(s, four);
            let high = b.ins().icmp(IntCC::UnsignedLessThan, s4, four);
            let idx_a = pick(b, high, s4, none);
            let sign = |b: &mut FunctionBuilder<'f>, first: i64| {
                let (one, three) = (splat8(b, 1), splat8(b, 3));
                let (e1, e3) = (splat8(b, first), splat8(b, first + 1));
                let is1 = b.ins().icmp(IntCC::Equal, s, e1);
                let is3 = b.ins().icmp(IntCC::Equal, s, e3);
                let other = pick(b, is3, three, none);
                pick(b, is1, one, other)
            };
            let idx_sb = sign(b, 8);
            let idx_sa = sign(b, 10);
            let thirteen = splat8(b, 13);
            let ones = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, s, thirteen);
            [idx_b, idx_a, idx_sb, idx_sa, ones]
        };
        self.lazy_op(
            vec![a, x],
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| {
                let hi = b.ins().bitcast(types::I8X16, little(), v[0]);
                let lo = b.ins().bitcast(types::I8X16, little(), v[1]);
                let z = b.ins().iconst(types::I8, 0);
                let z = b.ins().splat(types::I8X16, z);
                let sign_lo = b.ins().icmp(IntCC::SignedLessThan, lo, z);
                let sign_hi = b.ins().icmp(IntCC::SignedLessThan, hi, z);
                let mut r = b.ins().swizzle(lo, idx_b);
                for (src, idx) in [(hi, idx_a), (sign_lo, idx_sb), (sign_hi, idx_sa)] {
                    let part = b.ins().swizzle(src, idx);
                    r = b.ins().bor(r, part);
                }
                let r = b.ins().bor(r, ones);
                b.ins().bitcast(I32X4, little(), r)
            }),
            Vec::new(),
        )
    }

    /// A 64-bit right shift (arithmetic with `arith`) of every lane by the same amount `s` (taken modulo 64), as
    /// 32-bit shifts of the halves, lazily.
    fn shr64_uniform(&mut self, (lo, hi): (Vv, Vv), s: Value, arith: bool) -> (Vv, Vv) {
        let (k, down, wide, none) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let t = b.ins().band_imm(s, 63);
            let k = b.ins().band_imm(t, 31);
            let down = b.ins().irsub_imm(k, 32);
            (
                k,
                down,
                b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, t, 32),
                b.ins().icmp_imm(IntCC::Equal, k, 0),
            )
        };
        let high = move |b: &mut FunctionBuilder<'f>, q: Value, by: Value| {
            if arith {
                b.ins().sshr(q, by)
            } else {
                b.ins().ushr(q, by)
            }
        };
        // t < 32: (lo >> k | hi << (32 - k), hi >> k); t >= 32: (hi >> k, the sign or zero)
        let rl = self.zip_chunks(lo, hi, move |b, p, q| {
            let low = b.ins().ushr(p, k);
            let zero = zero_vec(b);
            let carry = b.ins().ishl(q, down);
            let carry = b.ins().select(none, zero, carry);
            let low = b.ins().bor(low, carry);
            let h = high(b, q, k);
            b.ins().select(wide, h, low)
        });
        let rh = self.map_chunks(hi, move |b, q| {
            let h = high(b, q, k);
            let fill = if arith { b.ins().sshr_imm(q, 31) } else { zero_vec(b) };
            b.ins().select(wide, fill, h)
        });
        (rl, rh)
    }

    /// The 64 lanes of `v` where they are known while translating: a vector made by `v_const`, or a splat of a
    /// scalar constant.
    fn known(&self, v: &Vv) -> Option<[u32; 64]> {
        if v.lazy.is_some() {
            return None;
        }
        if let Some(s) = v.uniform {
            return scalar_const(self.b.as_deref()?, s).map(|x| [x; 64]);
        }
        self.consts.iter().find(|(c, _)| *c == v.c).map(|(_, lanes)| *lanes)
    }

    /// Lanes computed while translating, as a vector: a splat where they are all equal (it stays uniform).
    fn folded(&mut self, lanes: &[u32; 64]) -> Vv {
        if lanes.iter().all(|&x| x == lanes[0]) {
            let Some(b) = self.fb() else { return self.dv() };
            let s = b.ins().iconst(types::I32, lanes[0] as i64);
            return self.v_splat(s);
        }
        self.v_const(lanes)
    }

    fn map_chunks(&mut self, a: Vv, f: impl Fn(&mut FunctionBuilder<'f>, Value) -> Value + 'static) -> Vv {
        if self.fb().is_none() {
            return self.dv();
        }
        self.lazy_op(
            vec![a],
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| f(b, v[0])),
            Vec::new(),
        )
    }

    fn zip_chunks(
        &mut self,
        a: Vv,
        x: Vv,
        f: impl Fn(&mut FunctionBuilder<'f>, Value, Value) -> Value + 'static,
    ) -> Vv {
        if self.fb().is_none() {
            return self.dv();
        }
        self.lazy_op(
            vec![a, x],
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| f(b, v[0], v[1])),
            Vec::new(),
        )
    }

    /// The sixteen `i32x4` lane masks (all ones where the mask bit is set) of a lane mask.
    fn expand(&mut self, m: Value) -> [Value; CHUNKS] {
        let Some(b) = self.fb() else { return [dummy(); CHUNKS] };
        let mut out = [dummy(); CHUNKS];
        for (i, o) in out.iter_mut().enumerate() {
            let bits = if i == 0 { m } else { b.ins().ushr_imm(m, 4 * i as i64) };
            *o = mask_chunk(b, bits);
        }
        out
    }

    /// The lanes of lane mask `m` as a lazy vector ([`Lazy::Mask`]): each chunk made where it is used.
    fn mask_lanes(&mut self, m: Value) -> Vv {
        self.lazies.push(Lazy::Mask { m });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// An add or subtract of `a` and `x` with a carry (borrow) lane mask in and out: the mask out chunk by chunk
    /// (`carries` of a chunk of each, and of the mask in's lanes, all ones where set), the result lazy, computed
    /// again where it is written (`result` of the chunks of a, x and, with a mask in, its lanes).
    fn carry_op(
        &mut self,
        a: Vv,
        x: Vv,
        carry_in: Option<Value>,
        carries: impl Fn(&mut FunctionBuilder<'f>, Value, Value, Option<Value>) -> Value,
        result: impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value + 'static,
    ) -> (Vv, Value) {
        if self.fb().is_none() {
            return (self.dv(), dummy());
        }
        self.park_in_place(&a);
        self.park_in_place(&x);
        let cin = carry_in.map(|m| self.lanes_of_mask(m));
        let uniform = all_uniform([&a, &x].into_iter().chain(cin.as_ref()));
        let mut out = None;
        if self.carry_dead {
            let b = self.b.as_deref_mut().expect("emitting");
            out = Some(b.ins().iconst(types::I64, 0));
        }
        for i in (0..CHUNKS).take(if self.carry_dead { 0 } else { CHUNKS }) {
            let (ai, xi) = (self.ch(&a, i), self.ch(&x, i));
            let mi = cin.map(|m| self.ch(&m, i));
            let c = carries(self.b.as_deref_mut().expect("emitting"), ai, xi, mi);
            if uniform {
                out = Some(self.uniform_mask(c));
                break;
            }
            out = Some(self.collapse_step(out, c, i));
        }
        let args = std::iter::once(a).chain([x]).chain(cin).collect();
        (
            self.lazy_op(args, std::rc::Rc::new(result), Vec::new()),
            out.expect("chunks"),
        )
    }

    /// Lane mask `m` (none yet: 0) with chunk `i`'s lanes from `i32x4` lane mask `c`, computed here: the partial
    /// mask is stored (to the context's sink), which makes Cranelift compute each chunk's part between its loads
    /// and the next chunk's instead of after all of them, with sixteen vectors of loads live (and spilled).
    fn collapse_step(&mut self, m: Option<Value>, c: Value, i: usize) -> Value {
        let ctx = self.ctx;
        let b = self.b.as_deref_mut().expect("emitting");
        let m = collapse_into(b, m, c, i);
        b.ins().store(trusted(), m, ctx, Ctx::SINK);
        m
    }

    /// The lane mask of `i32x4` lane mask `lanes` (all ones where set) computed from uniform operands: all lanes
    /// or none, as its first lane says.
    fn uniform_mask(&mut self, lanes: Value) -> Value {
        let b = self.b.as_deref_mut().expect("emitting");
        let x = b.ins().extractlane(lanes, 0);
        let m = b.ins().sextend(types::I64, x);
        if let Some(c) = self.cache.as_deref_mut() {
            c.uniform_masks.push(m);
        }
        m
    }

    /// The lanes of lane mask `m` as this instruction reads them: a uniform vector (all ones or zeros) where `m`
    /// is the same in every lane, or is such a mask ANDed with today's EXEC and the instruction reads only
    /// EXEC's lanes ([`RegCache::exec_lanes`]) — as a carry written by one add and read by the next is;
    /// otherwise made from the mask's bits where used.
    fn lanes_of_mask(&mut self, m: Value) -> Vv {
        let uniform = self.cache.as_deref().and_then(|c| {
            if c.uniform_masks.contains(&m) {
                return Some(m);
            }
            let e = c.exec.filter(|_| c.exec_lanes)?;
            c.exec_masked
                .iter()
                .find(|&&(r, _, x)| r == m && x == e)
                .map(|&(_, u, _)| u)
        });
        match (uniform, self.fb()) {
            (Some(u), Some(b)) => {
                let lane = b.ins().ireduce(types::I32, u);
                self.v_splat(lane)
            }
            _ => self.mask_lanes(m),
        }
    }

    fn to_f(b: &mut FunctionBuilder<'f>, v: Value) -> Value {
        b.ins().bitcast(F32X4, little(), v)
    }

    fn to_i(b: &mut FunctionBuilder<'f>, v: Value) -> Value {
        b.ins().bitcast(I32X4, little(), v)
    }

    fn fbin(&mut self, a: Vv, x: Vv, op: impl Fn(&mut FunctionBuilder<'f>, Value, Value) -> Value + 'static) -> Vv {
        let r = self.zip_chunks(a, x, move |b, p, q| {
            let (fp, fq) = (Self::to_f(b, p), Self::to_f(b, q));
            let r = op(b, fp, fq);
            Self::to_i(b, r)
        });
        self.nan_fixup(r, &[a, x])
    }

    /// Applies the NaN propagation rule ([`rules::propagate_nan32`] over `srcs` in order) to the lanes of `r` —
    /// on a side path taken only when some lane of `r` is NaN, so ordinary arithmetic pays one compare.
    fn nan_fixup(&mut self, r: Vv, srcs: &[Vv]) -> Vv {
        if self.fb().is_none() {
            return r;
        }
        if r.lazy.is_none() && all_uniform(std::iter::once(&r).chain(srcs)) {
            return self.uniform_result(r.c[0], srcs);
        }
        // a lazy result carries the rule with it: a write checks its chunks, other consumers apply it per chunk
        if let Some(Lazy::Expr { args, f, nan }) = r.lazy.map(|k| &self.lazies[k as usize]) {
            if nan.is_empty() {
                let (args, f) = (args.clone(), f.clone());
                return self.lazy_op(args, f, srcs.to_vec());
            }
        }
        let r = self.mat(r);
        let b = self.b.as_deref_mut().expect("emitting");
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
            let chunk: Vec<Value> = srcs.iter().map(|s| self.ch(s, i)).collect();
            let b = self.b.as_deref_mut().expect("emitting");
            fixed[i] = rules::propagate_nan32(&mut Chunks(b), &chunk, r.c[i]);
        }
        let b = self.b.as_deref_mut().expect("emitting");
        let args: Vec<_> = fixed.iter().map(|x| (*x).into()).collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        b.seal_block(done);
        let mut c = [dummy(); CHUNKS];
        c.copy_from_slice(b.block_params(done));
        Vv {
            c,
            uniform: None,
            lazy: None,
        }
    }

    /// Writes the lanes of `v` that `m` selects to register `reg` of the file at `base_field`; with every lane
    /// selected (the common case) a plain store, otherwise a blend with the old value.
    /// Whether `v` can be written in a loop over chunks: its concrete operands that are not uniform are put in
    /// the context's tmp slots here (their slot by first chunk value); `None` when there are too many, or an
    /// operand was loaded into SSA values.
    fn loop_operands(&mut self, v: &Vv) -> Option<Vec<(Value, usize)>> {
        let mut spill: Vec<(Value, usize)> = Vec::new();
        let mut concrete: Vec<Vv> = Vec::new();
        let mut todo = vec![*v];
        while let Some(x) = todo.pop() {
            match x.lazy.map(|k| &self.lazies[k as usize]) {
                None => {
                    let uniform = x.uniform.is_some() || x.c.iter().all(|c| *c == x.c[0]);
                    if !uniform && !spill.iter().any(|(f, _)| *f == x.c[0]) {
                        if self.tmps + spill.len() == TMP {
                            return None;
                        }
                        spill.push((x.c[0], self.tmps + spill.len()));
                        concrete.push(x);
                    }
                }
                Some(Lazy::Reg { loaded: Some(_), .. }) => return None,
                Some(Lazy::Reg { .. } | Lazy::Slot { .. } | Lazy::Spent | Lazy::Mask { .. } | Lazy::Parked { .. }) => {}
                Some(Lazy::Blend { new, old, .. }) => todo.extend([*new, *old]),
                Some(Lazy::Expr { args, nan, .. }) => todo.extend(args.iter().chain(nan.iter()).copied()),
                Some(Lazy::Read(r)) => todo.push(r.addr),
            }
        }
        self.tmps += spill.len();
        let ctx = self.ctx;
        let b = self.b.as_deref_mut().expect("emitting");
        for (x, (_, slot)) in concrete.iter().zip(&spill) {
            for i in 0..CHUNKS {
                b.ins()
                    .store(vflags(), x.c[i], ctx, Ctx::TMP + (256 * slot + 16 * i) as i32);
            }
        }
        Some(spill)
    }

    /// Chunk `off / 16` of `v` in a loop over chunks (`off` the chunk's byte offset, an i64).
    fn ch_at(&mut self, v: &Vv, off: Value, spill: &[(Value, usize)], nan_rule: bool) -> Value {
        let ctx = self.ctx;
        let Some(k) = v.lazy else {
            let b = self.b.as_deref_mut().expect("emitting");
            return match spill.iter().find(|(f, _)| *f == v.c[0]) {
                Some((_, slot)) => {
                    let p = b.ins().iadd(ctx, off);
                    b.ins().load(I32X4, vflags(), p, Ctx::TMP + 256 * *slot as i32)
                }
                None => v.c[0],
            };
        };
        match &self.lazies[k as usize] {
            Lazy::Slot { at } => {
                let at = *at;
                let b = self.b.as_deref_mut().expect("emitting");
                let p = b.ins().iadd(ctx, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Spent => unreachable!("a register read a call consumed is not read again"),
            Lazy::Reg { field, reg, kept, .. } => {
                let (field, reg, kept) = (*field, *reg, *kept);
                let (base, at) = match kept {
                    Some(slot) => (ctx, Ctx::KEEP + 256 * slot as i32),
                    None => (self.reg_base(field, reg), 0),
                };
                let b = self.b.as_deref_mut().expect("emitting");
                let p = b.ins().iadd(base, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Read(r) => {
                let r = *r;
                let a = self.ch_at(&r.addr, off, spill, true);
                let b = self.b.as_deref_mut().expect("emitting");
                Self::read_chunk(b, ctx, a, off, &r)
            }
            Lazy::Mask { m } => {
                let m = *m;
                let b = self.b.as_deref_mut().expect("emitting");
                mask_chunk_at(b, m, off)
            }
            Lazy::Blend { m, new, old } => {
                let (m, new, old) = (*m, *new, *old);
                let (x, y) = (
                    self.ch_at(&new, off, spill, nan_rule),
                    self.ch_at(&old, off, spill, nan_rule),
                );
                let b = self.b.as_deref_mut().expect("emitting");
                let lanes = mask_chunk_at(b, m, off);
                b.ins().bitselect(lanes, x, y)
            }
            Lazy::Parked { at } => {
                let at = *at;
                let b = self.b.as_deref_mut().expect("emitting");
                let p = b.ins().iadd(ctx, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Expr { args, f, nan } => {
                let (args, f, nan) = (args.clone(), f.clone(), if nan_rule { nan.clone() } else { Vec::new() });
                let vals: Vec<Value> = args.iter().map(|a| self.ch_at(a, off, spill, true)).collect();
                let r = f(self.b.as_deref_mut().expect("emitting"), &vals);
                if nan.is_empty() {
                    return r;
                }
                let srcs: Vec<Value> = nan.iter().map(|a| self.ch_at(a, off, spill, true)).collect();
                rules::propagate_nan32(&mut Chunks(self.b.as_deref_mut().expect("emitting")), &srcs, r)
            }
        }
    }

    /// The lane permute of [`Backend::v_permute`] through source lanes known at compile time (`lanes`, taken
    /// modulo 64, as the DPP controls and the swizzles give them): each lane of `data` outside `m` made 0, then
    /// each chunk of the result gathered from the chunks its four lanes come from — one byte shuffle of two
    /// chunks, or lane by lane when they come from more.
    fn permute_known(&mut self, data: Vv, lanes: &[u32; 64], m: Value) -> Vv {
        self.park_in_place(&data);
        let data = self.mat(data);
        let on = self.expand(m);
        let b = self.b.as_deref_mut().expect("emitting");
        let src: [Value; CHUNKS] = std::array::from_fn(|k| b.ins().band(data.c[k], on[k]));
        let mut c = [dummy(); CHUNKS];
        for (i, out) in c.iter_mut().enumerate() {
            let from: Vec<usize> = (0..4).map(|j| (lanes[4 * i + j] & 63) as usize).collect();
            let mut chunks: Vec<usize> = from.iter().map(|l| l / 4).collect();
            chunks.sort_unstable();
            chunks.dedup();
            if chunks.len() <= 2 {
                let (p, q) = (chunks[0], *chunks.last().expect("a chunk"));
                let bytes: Vec<u8> = from
                    .iter()
                    .flat_map(|l| {
                        let at = if l / 4 == p { 4 * (l % 4) } else { 16 + 4 * (l % 4) };
                        (0..4).map(move |k| (at + k) as u8)
                    })
                    .collect();
                let mask = b.func.dfg.immediates.push(ConstantData::from(bytes));
                let (x, y) = (
                    b.ins().bitcast(types::I8X16, little(), src[p]),
                    b.ins().bitcast(types::I8X16, little(), src[q]),
                );
                let r = b.ins().shuffle(x, y, mask);
                *out = b.ins().bitcast(I32X4, little(), r);
            } else {
                let first = b.ins().extractlane(src[from[0] / 4], (from[0] % 4) as u8);
                let mut r = b.ins().splat(I32X4, first);
                for (j, l) in from.iter().enumerate().skip(1) {
                    let x = b.ins().extractlane(src[l / 4], (l % 4) as u8);
                    r = b.ins().insertlane(r, x, j as u8);
                }
                *out = r;
            }
        }
        Vv {
            c,
            uniform: None,
            lazy: None,
        }
    }

    /// Lane `lane` (an `i64`, 0 to 63) of `v`, computing only the chunk that holds it; `None` where a loop over
    /// chunks could not compute `v` ([`Self::loop_operands`]).
    fn lane_at(&mut self, v: &Vv, lane: Value) -> Option<Value> {
        if let (None, Some(s)) = (v.lazy, v.uniform) {
            return Some(s);
        }
        let spill = self.loop_operands(v)?;
        let b = self.b.as_deref_mut().expect("emitting");
        let chunk = b.ins().ushr_imm(lane, 2);
        let off = b.ins().ishl_imm(chunk, 4);
        let c = self.ch_at(v, off, &spill, true);
        let b = self.b.as_deref_mut().expect("emitting");
        let j = b.ins().band_imm(lane, 3);
        let mut x = b.ins().extractlane(c, 0);
        for k in 1..4u8 {
            let y = b.ins().extractlane(c, k);
            let here = b.ins().icmp_imm(IntCC::Equal, j, k as i64);
            x = b.ins().select(here, y, x);
        }
        Some(x)
    }

    /// The first lane of chunk `off / 16` of `v`: loaded alone when `v` is a register, else from the chunk.
    fn first_lane_at(&mut self, v: &Vv, off: Value, spill: &[(Value, usize)]) -> Value {
        if let Some(Lazy::Reg {
            field,
            reg,
            kept: None,
            loaded: None,
        }) = v.lazy.map(|k| &self.lazies[k as usize])
        {
            let base = self.reg_base(*field, *reg);
            let b = self.b.as_deref_mut().expect("emitting");
            let p = b.ins().iadd(base, off);
            return b.ins().load(types::I32, vflags(), p, 0);
        }
        let a = self.ch_at(v, off, spill, true);
        self.b.as_deref_mut().expect("emitting").ins().extractlane(a, 0)
    }

    /// The write of a read ([`ReadAt`]) to the register at `base`: decided once, a loop of four-dword loads
    /// (every chunk consecutive dwords), of one-dword loads splat (every chunk one address), of lane-by-lane
    /// loads (a global read otherwise), or of the interpreter's result from the tmp slot under EXEC.
    fn store_read(&mut self, base: Value, r: &ReadAt, m: Value, spill: &[(Value, usize)]) {
        let ctx = self.ctx;
        #[derive(Clone, Copy, PartialEq)]
        enum Kind {
            Seq,
            Same,
            Lanes,
        }
        let dwords = r.bytes == 4;
        let kinds: &[Kind] = match (r.gather, dwords) {
            (false, _) => &[Kind::Seq, Kind::Same],
            (true, true) => &[Kind::Seq, Kind::Same, Kind::Lanes],
            (true, false) => &[Kind::Lanes],
        };
        let (starts, general, done) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let (q, general, done) = (b.create_block(), b.create_block(), b.create_block());
            let starts: Vec<_> = kinds.iter().map(|_| b.create_block()).collect();
            b.ins().brif(r.quick, q, &[], general, &[]);
            b.switch_to_block(q);
            b.seal_block(q);
            match kinds.len() {
                1 => {
                    b.ins().jump(starts[0], &[]);
                }
                2 => {
                    b.ins().brif(r.seq, starts[0], &[], starts[1], &[]);
                }
                _ => {
                    let other = b.create_block();
                    b.ins().brif(r.seq, starts[0], &[], other, &[]);
                    b.switch_to_block(other);
                    b.seal_block(other);
                    b.ins().brif(r.same, starts[1], &[], starts[2], &[]);
                }
            }
            (starts, general, done)
        };
        for (&kind, &start) in kinds.iter().zip(&starts) {
            let head = {
                let b = self.b.as_deref_mut().expect("emitting");
                b.switch_to_block(start);
                b.seal_block(start);
                let head = b.create_block();
                b.append_block_param(head, types::I64);
                let zero = b.ins().iconst(types::I64, 0);
                b.ins().jump(head, &[zero.into()]);
                b.switch_to_block(head);
                head
            };
            let off = self.b.as_deref_mut().expect("emitting").block_params(head)[0];
            // STORE_UNROLL chunks per pass, every address read and every load made before the first store
            // (the destination may be the address register)
            let mut loaded = Vec::with_capacity(STORE_UNROLL);
            for k in 0..STORE_UNROLL {
                let at = if k == 0 {
                    off
                } else {
                    self.b
                        .as_deref_mut()
                        .expect("emitting")
                        .ins()
                        .iadd_imm(off, 16 * k as i64)
                };
                let x = match kind {
                    Kind::Lanes => {
                        let a = self.ch_at(&r.addr, at, spill, true);
                        let b = self.b.as_deref_mut().expect("emitting");
                        gather_chunk(b, a, r.base, r.offset, r.bytes, r.signed, None)
                    }
                    _ => {
                        let first = self.first_lane_at(&r.addr, at, spill);
                        let b = self.b.as_deref_mut().expect("emitting");
                        let first = b.ins().uextend(types::I64, first);
                        let p = b.ins().iadd(r.base, first);
                        if kind == Kind::Seq {
                            b.ins().load(I32X4, MemFlags::new(), p, r.offset as i32)
                        } else {
                            let x = b.ins().load(types::I32, MemFlags::new(), p, r.offset as i32);
                            b.ins().splat(I32X4, x)
                        }
                    }
                };
                loaded.push((at, x));
            }
            let b = self.b.as_deref_mut().expect("emitting");
            for (at, x) in loaded {
                let d = b.ins().iadd(base, at);
                b.ins().store(vflags(), x, d, 0);
            }
            let next = b.ins().iadd_imm(off, 16 * STORE_UNROLL as i64);
            let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
            b.ins().brif(more, head, &[next.into()], done, &[]);
            b.seal_block(head);
        }
        // the interpreter's result, under EXEC
        let b = self.b.as_deref_mut().expect("emitting");
        b.switch_to_block(general);
        b.seal_block(general);
        let table = b.ins().iconst(types::I64, MASK_TABLE.as_ptr() as i64);
        for i in 0..CHUNKS {
            let x = b
                .ins()
                .load(I32X4, vflags(), ctx, Ctx::TMP + (256 * r.slot + 16 * i) as i32);
            let bits = b.ins().ushr_imm(m, 4 * i as i64);
            let idx = b.ins().band_imm(bits, 15);
            let idx = b.ins().imul_imm(idx, 16);
            let at = b.ins().iadd(table, idx);
            let lanes = b.ins().load(I32X4, vflags(), at, 0);
            let old = b.ins().load(I32X4, vflags(), base, 16 * i as i32);
            let x = b.ins().bitselect(lanes, x, old);
            b.ins().store(vflags(), x, base, 16 * i as i32);
        }
        b.ins().jump(done, &[]);
        b.switch_to_block(done);
        b.seal_block(done);
    }

    /// The write of `v` to the register at `base` as a loop over its chunks, [`STORE_UNROLL`] per pass, from
    /// block `start` to `done`: from chunk 0, or (when `start` has a parameter) from the chunk offset it is given
    /// (a pass's first). With `redo`, each stored
    /// chunk is checked for NaN (`checked`: `v` computed without its NaN rule) and a NaN chunk continues at
    /// `redo` with its offset; with `mask`, only the lanes it selects are written.
    #[allow(clippy::too_many_arguments)]
    fn store_loop(
        &mut self,
        start: cranelift_codegen::ir::Block,
        done: cranelift_codegen::ir::Block,
        redo: Option<cranelift_codegen::ir::Block>,
        base: Value,
        v: &Vv,
        spill: &[(Value, usize)],
        checked: bool,
        mask: Option<Value>,
    ) {
        let head = {
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(start);
            b.seal_block(start);
            let head = b.create_block();
            b.append_block_param(head, types::I64);
            let from = match b.block_params(start).first() {
                Some(p) => *p,
                None => b.ins().iconst(types::I64, 0),
            };
            b.ins().jump(head, &[from.into()]);
            b.switch_to_block(head);
            head
        };
        let off = self.b.as_deref_mut().expect("emitting").block_params(head)[0];
        // STORE_UNROLL chunks per pass: all computed (and checked) before any is stored, so a NaN sends the
        // pass's first chunk to `redo` with its sources untouched
        let mut stores = Vec::with_capacity(STORE_UNROLL);
        for k in 0..STORE_UNROLL {
            let at = if k == 0 {
                off
            } else {
                self.b
                    .as_deref_mut()
                    .expect("emitting")
                    .ins()
                    .iadd_imm(off, 16 * k as i64)
            };
            let x = self.ch_at(v, at, spill, !checked);
            let b = self.b.as_deref_mut().expect("emitting");
            let p = b.ins().iadd(base, at);
            let x = match mask {
                None => x,
                Some(m) => {
                    // the four mask bits of this chunk pick its lane mask from the table
                    let shift = b.ins().ushr_imm(at, 2);
                    let bits = b.ins().ushr(m, shift);
                    let idx = b.ins().band_imm(bits, 15);
                    let idx = b.ins().imul_imm(idx, 16);
                    let table = b.ins().iconst(types::I64, MASK_TABLE.as_ptr() as i64);
                    let t = b.ins().iadd(table, idx);
                    let lanes = b.ins().load(I32X4, vflags(), t, 0);
                    let old = b.ins().load(I32X4, vflags(), p, 0);
                    b.ins().bitselect(lanes, x, old)
                }
            };
            stores.push((p, x));
        }
        let b = self.b.as_deref_mut().expect("emitting");
        if let Some(redo) = redo {
            // checked before they are stored, so the pass is redone from its sources as they are
            let mut any = None;
            for &(_, x) in &stores {
                let f = Self::to_f(b, x);
                let nan = b.ins().fcmp(FloatCC::Unordered, f, f);
                any = Some(match any {
                    None => nan,
                    Some(a) => b.ins().bor(a, nan),
                });
            }
            let any = b.ins().vany_true(any.expect("a pass has chunks"));
            let next = b.create_block();
            b.ins().brif(any, redo, &[off.into()], next, &[]);
            b.switch_to_block(next);
            b.seal_block(next);
        }
        for (p, x) in stores {
            b.ins().store(vflags(), x, p, 0);
        }
        let next = b.ins().iadd_imm(off, 16 * STORE_UNROLL as i64);
        let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
        b.ins().brif(more, head, &[next.into()], done, &[]);
        b.seal_block(head);
    }

    /// Leaves the write of `v` (the lanes of `m`) to register `reg` of the file at `field` pending (see
    /// [`RegCache`]): the register's pending value becomes a blend of `v` over its value so far. `v` stays a
    /// lazy expression when it is one of registers (and of values that stay valid: uniform ones, lane masks,
    /// parked values) no larger than [`PENDING_TREE`]; any other value is computed now into a parked slot.
    fn defer_write(&mut self, field: i32, reg: u32, v: Vv, m: Value) {
        let mut seen = std::collections::HashSet::new();
        let v = if self.stays_lazy(&v, &mut seen) {
            v
        } else {
            self.park(v)
        };
        // a write over a pending one of the same lanes replaces it: the lanes outside keep what was there before
        let old = match self.pending_under(field, reg, m) {
            Some((_, old)) => old,
            None => self.load_reg(field, reg),
        };
        self.lazies.push(Lazy::Blend { m, new: v, old });
        let w = Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        };
        let c = self.cache.as_deref_mut().expect("emitting");
        match c.pending.iter_mut().find(|(k, _)| *k == (field, reg)) {
            Some(p) => p.1 = w,
            None => c.pending.push(((field, reg), w)),
        }
        c.written(field, reg);
    }

    /// Whether `v` may stay a lazy expression in a pending write (`seen`: the lazy vectors counted so far, at
    /// most [`PENDING_TREE`]).
    fn stays_lazy(&self, v: &Vv, seen: &mut std::collections::HashSet<u32>) -> bool {
        let Some(k) = v.lazy else {
            return v.uniform.is_some() || v.c.iter().all(|c| *c == v.c[0]);
        };
        if !seen.insert(k) {
            return true;
        }
        if seen.len() > PENDING_TREE {
            return false;
        }
        match &self.lazies[k as usize] {
            Lazy::Reg {
                kept: None,
                loaded: None,
                ..
            }
            | Lazy::Mask { .. }
            | Lazy::Parked { .. } => true,
            Lazy::Expr { args, nan, .. } => args.iter().chain(nan.iter()).all(|a| self.stays_lazy(a, seen)),
            Lazy::Blend { new, old, .. } => self.stays_lazy(new, seen) && self.stays_lazy(old, seen),
            Lazy::Reg { .. } | Lazy::Slot { .. } | Lazy::Spent | Lazy::Read(_) => false,
        }
    }

    /// `v` computed now into the next parked slot of the context, as a lazy vector: a lazy expression in a loop
    /// over the chunks (as the block's pending writes are: [`Self::emit_writes`]), anything else chunk by chunk.
    fn park(&mut self, v: Vv) -> Vv {
        let c = self.cache.as_deref_mut().expect("emitting");
        assert!(
            c.parked < PARKED,
            "an instruction that defers its writes starts with parked slots free"
        );
        let at = Ctx::PARKED + 256 * c.parked as i32;
        c.parked += 1;
        let ctx = self.ctx;
        let mut seen = std::collections::HashSet::new();
        if v.lazy.is_some() && self.loops_over(&v, &mut seen) {
            self.emit_writes(&[(Dest::Parked(at), v)]);
        } else {
            for i in 0..CHUNKS {
                let x = self.ch(&v, i);
                let b = self.b.as_deref_mut().expect("emitting");
                b.ins().store(vflags(), x, ctx, at + 16 * i as i32);
            }
        }
        self.lazies.push(Lazy::Parked { at });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// Before code that computes every chunk of `v` where it stands (a carry or compare mask, an interpreter
    /// call's operand, a whole-vector operation): a lazy operation of four or more lazy vectors is computed once
    /// into a parked slot, and the lazy vector becomes that slot, so the pending writes and later reads that
    /// share it load it instead of computing the whole chain of operations again (a chain of adds with carries
    /// and lane moves, as a wave reduction is, would otherwise cost the square of its length). Only in an
    /// instruction that defers its writes, on its main path (called only from operations the semantics call,
    /// never from code on a side path), with more parked slots free than its writes need.
    fn park_in_place(&mut self, v: &Vv) {
        let Some(k) = v.lazy else { return };
        if !matches!(self.lazies[k as usize], Lazy::Expr { .. } | Lazy::Blend { .. }) || self.guard_end.is_some() {
            return;
        }
        if !self.cache.as_deref().is_some_and(|c| c.defer && PARKED - c.parked > 4) || self.tree(v).len() < 4 {
            return;
        }
        let p = self.park(*v);
        let at = match p.lazy.map(|q| &self.lazies[q as usize]) {
            Some(Lazy::Parked { at }) => *at,
            _ => unreachable!("park leaves a parked vector"),
        };
        self.lazies[k as usize] = Lazy::Parked { at };
    }

    /// Whether a loop over the chunks can compute `v` ([`Self::fuse_at`]): as [`Self::stays_lazy`], whatever
    /// its size.
    fn loops_over(&self, v: &Vv, seen: &mut std::collections::HashSet<u32>) -> bool {
        let Some(k) = v.lazy else {
            return v.uniform.is_some() || v.c.iter().all(|c| *c == v.c[0]);
        };
        if !seen.insert(k) {
            return true;
        }
        match &self.lazies[k as usize] {
            Lazy::Reg {
                kept: None,
                loaded: None,
                ..
            }
            | Lazy::Mask { .. }
            | Lazy::Parked { .. } => true,
            Lazy::Expr { args, nan, .. } => args.iter().chain(nan.iter()).all(|a| self.loops_over(a, seen)),
            Lazy::Blend { new, old, .. } => self.loops_over(new, seen) && self.loops_over(old, seen),
            Lazy::Reg { .. } | Lazy::Slot { .. } | Lazy::Spent | Lazy::Read(_) => false,
        }
    }

    /// Writes the pending registers (see [`RegCache`]) and forgets them.
    pub fn flush(&mut self) {
        if self.fb().is_none() {
            return;
        }
        self.emit_flush();
        let c = self.cache.as_deref_mut().expect("emitting");
        c.pending.clear();
        c.parked = 0;
    }

    /// The code writing the pending registers, which stay pending at compile time (a side exit writes them too):
    /// one loop over the chunks when every pending write's lanes are all on, another that blends them in when
    /// some are off.
    fn emit_flush(&mut self) {
        let pending: Vec<(Dest, Vv)> = match self.cache.as_deref() {
            Some(c) if !c.pending.is_empty() => c
                .pending
                .iter()
                .map(|&((field, reg), v)| (Dest::Reg(field, reg), v))
                .collect(),
            _ => return,
        };
        self.emit_writes(&pending);
    }

    /// The code writing `writes` (values of lazy vectors that [`Self::loops_over`] accepts): a loop over the
    /// chunks when every blend's lanes are all on, another that blends them in when some are off.
    fn emit_writes(&mut self, pending: &[(Dest, Vv)]) {
        // the masks of the blends
        let mut masks: Vec<Value> = Vec::new();
        let mut todo: Vec<Vv> = pending.iter().map(|(_, v)| *v).collect();
        let mut seen = std::collections::HashSet::new();
        while let Some(v) = todo.pop() {
            let Some(k) = v.lazy else { continue };
            if !seen.insert(k) {
                continue;
            }
            match &self.lazies[k as usize] {
                Lazy::Blend { m, new, old } => {
                    if !masks.contains(m) {
                        masks.push(*m);
                    }
                    todo.extend([*new, *old]);
                }
                Lazy::Expr { args, nan, .. } => todo.extend(args.iter().chain(nan.iter()).copied()),
                _ => {}
            }
        }
        let (full, masked, done) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let mut all = None;
            for m in &masks {
                let on = b.ins().icmp_imm(IntCC::Equal, *m, -1);
                all = Some(match all {
                    None => on,
                    Some(a) => b.ins().band(a, on),
                });
            }
            let (full, masked, done) = (b.create_block(), b.create_block(), b.create_block());
            match all {
                Some(all) => b.ins().brif(all, full, &[], masked, &[]),
                None => b.ins().jump(full, &[]),
            };
            (full, masked, done)
        };
        self.fused_loop(full, done, pending, true);
        self.fused_loop(masked, done, pending, false);
        let b = self.b.as_deref_mut().expect("emitting");
        b.switch_to_block(done);
        b.seal_block(done);
    }

    /// The loop over the chunks writing `pending`, from block `start` to `done` (`full`: every blend's lanes
    /// all on). Each chunk's values are computed without their NaN rules and checked: a NaN among them computes
    /// the chunk again with the rules (exact), before any of it is stored.
    fn fused_loop(
        &mut self,
        start: cranelift_codegen::ir::Block,
        done: cranelift_codegen::ir::Block,
        pending: &[(Dest, Vv)],
        full: bool,
    ) {
        let (head, off) = {
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(start);
            b.seal_block(start);
            let head = b.create_block();
            let off = b.append_block_param(head, types::I64);
            let zero = b.ins().iconst(types::I64, 0);
            b.ins().jump(head, &[zero.into()]);
            b.switch_to_block(head);
            (head, off)
        };
        let mut redo = None;
        for raw in [true, false] {
            if !raw {
                let Some(r) = redo else { break };
                let b = self.b.as_deref_mut().expect("emitting");
                b.switch_to_block(r);
                b.seal_block(r);
            }
            let mut f = Fuse {
                memo: std::collections::HashMap::new(),
                full,
                raw,
                nan: None,
            };
            let vals: Vec<Value> = pending.iter().map(|(_, v)| self.fuse_at(v, off, &mut f)).collect();
            if let Some(nan) = f.nan {
                let b = self.b.as_deref_mut().expect("emitting");
                let any = b.ins().vany_true(nan);
                let (again, store) = (b.create_block(), b.create_block());
                b.ins().brif(any, again, &[], store, &[]);
                b.switch_to_block(store);
                b.seal_block(store);
                redo = Some(again);
            }
            let ctx = self.ctx;
            for (&(dest, _), x) in pending.iter().zip(vals) {
                let (base, at) = match dest {
                    Dest::Reg(field, reg) => (self.reg_base(field, reg), 0),
                    Dest::Parked(at) => (ctx, at),
                };
                let b = self.b.as_deref_mut().expect("emitting");
                let p = b.ins().iadd(base, off);
                b.ins().store(vflags(), x, p, at);
            }
            let b = self.b.as_deref_mut().expect("emitting");
            let next = b.ins().iadd_imm(off, 16);
            let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
            b.ins().brif(more, head, &[next.into()], done, &[]);
        }
        self.b.as_deref_mut().expect("emitting").seal_block(head);
    }

    /// Whether `v` is computed without operands of its own (a register, a parked value, a mask, a uniform value).
    fn is_leaf(&self, v: &Vv) -> bool {
        !matches!(
            v.lazy.map(|k| &self.lazies[k as usize]),
            Some(Lazy::Expr { .. } | Lazy::Blend { .. })
        )
    }

    /// Chunk `off / 16` of a pending write's value `v` in the flush loop (see [`Fuse`]).
    fn fuse_at(&mut self, v: &Vv, off: Value, f: &mut Fuse) -> Value {
        let Some(k) = v.lazy else {
            // a uniform value (the only concrete ones that stay lazy)
            return v.c[0];
        };
        if let Some(x) = f.memo.get(&k) {
            return *x;
        }
        let ctx = self.ctx;
        let x = match &self.lazies[k as usize] {
            Lazy::Reg { field, reg, .. } => {
                let base = self.reg_base(*field, *reg);
                let b = self.b.as_deref_mut().expect("emitting");
                let p = b.ins().iadd(base, off);
                b.ins().load(I32X4, vflags(), p, 0)
            }
            Lazy::Parked { at } => {
                let at = *at;
                let b = self.b.as_deref_mut().expect("emitting");
                let p = b.ins().iadd(ctx, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Mask { m } => {
                let m = *m;
                mask_chunk_at(self.b.as_deref_mut().expect("emitting"), m, off)
            }
            Lazy::Blend { m, new, old } => {
                let (m, new, old) = (*m, *new, *old);
                let x = self.fuse_at(&new, off, f);
                if f.full {
                    x
                } else {
                    let y = self.fuse_at(&old, off, f);
                    let b = self.b.as_deref_mut().expect("emitting");
                    let lanes = mask_chunk_at(b, m, off);
                    b.ins().bitselect(lanes, x, y)
                }
            }
            Lazy::Expr { args, f: op, nan } => {
                let (args, op, nan) = (args.clone(), op.clone(), nan.clone());
                // operands that are expressions first, then loads: a chain's loads come just before the
                // operation that uses them instead of all at its start, where they would stay live
                let mut vals = vec![dummy(); args.len()];
                for leaves in [false, true] {
                    for (a, val) in args.iter().zip(vals.iter_mut()) {
                        if self.is_leaf(a) == leaves {
                            *val = self.fuse_at(a, off, f);
                        }
                    }
                }
                let r = op(self.b.as_deref_mut().expect("emitting"), &vals);
                // an operation over operations (a link of a chain) is stored to the context's sink (or the NaN
                // flags so far, which it goes into), so that Cranelift computes it here, after the loads of
                // its own operands, instead of after the loads of the whole chain, which would all be live at
                // once (and spilled)
                let anchor = !args.iter().all(|a| self.is_leaf(a));
                let ctx = self.ctx;
                if nan.is_empty() {
                    if anchor {
                        self.b
                            .as_deref_mut()
                            .expect("emitting")
                            .ins()
                            .store(vflags(), r, ctx, Ctx::SINK);
                    }
                    r
                } else if f.raw {
                    let b = self.b.as_deref_mut().expect("emitting");
                    let x = Self::to_f(b, r);
                    let is = b.ins().fcmp(FloatCC::Unordered, x, x);
                    let flags = match f.nan {
                        None => is,
                        Some(a) => b.ins().bor(a, is),
                    };
                    if anchor {
                        b.ins().store(vflags(), flags, ctx, Ctx::SINK);
                    }
                    f.nan = Some(flags);
                    r
                } else {
                    let srcs: Vec<Value> = nan.iter().map(|a| self.fuse_at(a, off, f)).collect();
                    rules::propagate_nan32(&mut Chunks(self.b.as_deref_mut().expect("emitting")), &srcs, r)
                }
            }
            Lazy::Slot { .. } | Lazy::Spent | Lazy::Read(_) => unreachable!("pending writes hold none"),
        };
        f.memo.insert(k, x);
        x
    }

    fn store_reg(&mut self, base_field: i32, reg: u32, v: Vv, m: Value) {
        if self.fb().is_none() {
            return;
        }
        // known lanes written where the code dominates the rest of the block are known there
        let lanes = if self.guard_end.is_none() { self.known(&v) } else { None };
        // the write forgets what was known of the register (`RegCache::written`, on every path of it)
        self.write_reg(base_field, reg, v, m);
        if let (Some(lanes), Some(c)) = (lanes, self.cache.as_deref_mut()) {
            c.known.push(((base_field, reg), m, lanes));
        }
    }

    /// [`Self::store_reg`]'s write.
    fn write_reg(&mut self, base_field: i32, reg: u32, v: Vv, m: Value) {
        if self.cache.as_deref().is_some_and(|c| c.defer) {
            self.defer_write(base_field, reg, v, m);
            return;
        }
        let (sdwa, one_dst) = self.site.as_ref().map_or((true, false), |s| {
            // SAFETY: the instruction lives in the block's slice while the block is compiled.
            let inst = unsafe { &*s.inst };
            let one = matches!(
                inst.info.operand(isa_amdgpu::Field::Vdst).map(|o| o.kind),
                Some(isa_amdgpu::table::OperandKind::Reg { count: 1, .. })
            );
            (inst.form == isa_amdgpu::Form::Sdwa, one)
        });
        // the instruction's only write (one destination register, no SDWA wrapper going on after it): nothing
        // reads the destination afterwards but the value being stored
        let only = self.stores == 0 && one_dst && !sdwa;
        self.stores += 1;
        let nan_rule =
            matches!(v.lazy.map(|k| &self.lazies[k as usize]), Some(Lazy::Expr { nan, .. }) if !nan.is_empty());
        // a lazy value whose operands are registers, keep slots, uniform values or up to TMP other vectors is
        // written in a loop over the chunks: a few dozen bytes of code instead of sixteen copies. Written in
        // place — chunk i reads only chunk i of its registers — so the destination needs no copy when this is
        // the instruction's only write; an f32 result is stored as the host computes it and each chunk checked,
        // and a NaN chunk continues in a second loop that applies the rule from that chunk on (the chunks still
        // to come are untouched).
        let spill = if v.lazy.is_some() { self.loop_operands(&v) } else { None };
        if let Some(spill) = spill {
            let except = if only { self.tree(&v) } else { Vec::new() };
            self.settle_except(base_field, reg, &except);
            let base = self.reg_base(base_field, reg);
            if let Some(Lazy::Read(r)) = v.lazy.map(|k| &self.lazies[k as usize]) {
                let r = *r;
                self.store_read(base, &r, m, &spill);
                return;
            }
            let (full, masked, done) = {
                let b = self.b.as_deref_mut().expect("emitting");
                let all = b.ins().icmp_imm(IntCC::Equal, m, -1);
                let (full, masked, done) = (b.create_block(), b.create_block(), b.create_block());
                b.ins().brif(all, full, &[], masked, &[]);
                (full, masked, done)
            };
            for mask in [None, Some(m)] {
                let start = if mask.is_none() { full } else { masked };
                let slow = if nan_rule {
                    Some(self.b.as_deref_mut().expect("emitting").create_block())
                } else {
                    None
                };
                if let Some(slow) = slow {
                    self.b
                        .as_deref_mut()
                        .expect("emitting")
                        .append_block_param(slow, types::I64);
                }
                self.store_loop(start, done, slow, base, &v, &spill, nan_rule, mask);
                if let Some(slow) = slow {
                    self.store_loop(slow, done, None, base, &v, &spill, false, mask);
                }
            }
            let b = self.b.as_deref_mut().expect("emitting");
            b.switch_to_block(done);
            b.seal_block(done);
            return;
        }
        // otherwise sixteen copies: reads of this register handed out earlier keep the value they read (a copy in
        // a keep slot); an f32 result under the NaN rule is stored as the host computes it, each chunk checked: a
        // NaN anywhere puts the register back as it was and runs the whole instruction on the interpreter, which
        // applies the rule (exact for the instruction's only write); otherwise the rule is applied inline.
        self.settle(base_field, reg);
        let base = self.reg_base(base_field, reg);
        let in_ssa = self.lazies.iter().any(
            |l| matches!(l, Lazy::Reg { field, reg: r, loaded: Some(_), .. } if *field == base_field && *r == reg),
        );
        let checked = nan_rule && only && !in_ssa;
        let kept: Vec<usize> = self
            .lazies
            .iter()
            .filter_map(|l| match l {
                Lazy::Reg {
                    field,
                    reg: r,
                    kept: Some(slot),
                    ..
                } if *field == base_field && *r == reg => Some(*slot),
                _ => None,
            })
            .collect();
        let (full, masked, done, redo) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let all = b.ins().icmp_imm(IntCC::Equal, m, -1);
            let (full, masked, done) = (b.create_block(), b.create_block(), b.create_block());
            let redo = if checked { Some(b.create_block()) } else { None };
            b.ins().brif(all, full, &[], masked, &[]);
            (full, masked, done, redo)
        };
        for exec_all in [true, false] {
            {
                let b = self.b.as_deref_mut().expect("emitting");
                let start = if exec_all { full } else { masked };
                b.switch_to_block(start);
                b.seal_block(start);
            }
            let masks = if exec_all { None } else { Some(self.expand(m)) };
            for i in 0..CHUNKS {
                let x = if checked { self.ch_raw(&v, i) } else { self.ch(&v, i) };
                let b = self.b.as_deref_mut().expect("emitting");
                let x = match &masks {
                    None => x,
                    Some(ms) => {
                        let old = b.ins().load(I32X4, vflags(), base, 16 * i as i32);
                        b.ins().bitselect(ms[i], x, old)
                    }
                };
                b.ins().store(vflags(), x, base, 16 * i as i32);
                if let Some(redo) = redo {
                    // the chunk is checked where it is stored, so it does not stay live
                    let f = Self::to_f(b, x);
                    let nan = b.ins().fcmp(FloatCC::Unordered, f, f);
                    let any = b.ins().vany_true(nan);
                    let next = b.create_block();
                    b.ins().brif(any, redo, &[], next, &[]);
                    b.switch_to_block(next);
                    b.seal_block(next);
                }
            }
            let b = self.b.as_deref_mut().expect("emitting");
            b.ins().jump(done, &[]);
        }
        if let Some(redo) = redo {
            let ctx = self.ctx;
            {
                let b = self.b.as_deref_mut().expect("emitting");
                b.switch_to_block(redo);
                b.seal_block(redo);
                for slot in kept.iter().take(1) {
                    for i in 0..CHUNKS {
                        let x = b
                            .ins()
                            .load(I32X4, vflags(), ctx, Ctx::KEEP + (256 * slot + 16 * i) as i32);
                        b.ins().store(vflags(), x, base, 16 * i as i32);
                    }
                }
            }
            self.call(Op::Instruction {}, &[], &[], &[], 0, 0, 0, true);
            let b = self.b.as_deref_mut().expect("emitting");
            b.ins().jump(done, &[]);
        }
        let b = self.b.as_deref_mut().expect("emitting");
        b.switch_to_block(done);
        b.seal_block(done);
    }
}

/// Whether every one of `vs` is one scalar in all lanes, computed (not lazy).
fn all_uniform<'v>(mut vs: impl Iterator<Item = &'v Vv>) -> bool {
    vs.all(|v| v.lazy.is_none() && v.uniform.is_some())
}

/// An `i32x4` of zeros.
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

/// Whether lane mask `m` has no lanes outside mask `w`, as far as their definitions show (`depth` ANDs deep):
/// `w` itself, or an AND (an AND NOT's first operand) of such a mask, as EXEC narrowed by s_and_saveexec is.
fn within(b: &FunctionBuilder<'_>, m: Value, w: Value, depth: u32) -> bool {
    if m == w {
        return true;
    }
    let dfg = &b.func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(dfg.resolve_aliases(m)) else {
        return false;
    };
    match dfg.insts[inst] {
        InstructionData::Binary {
            opcode: Opcode::Band,
            args,
        } if depth > 0 => args.iter().any(|&a| within(b, a, w, depth - 1)),
        InstructionData::Binary {
            opcode: Opcode::BandNot,
            args,
        } if depth > 0 => within(b, args[0], w, depth - 1),
        _ => false,
    }
}

/// The value of `v` where an `iconst` defines it.
fn scalar_const(b: &FunctionBuilder<'_>, v: Value) -> Option<u32> {
    let dfg = &b.func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(dfg.resolve_aliases(v)) else {
        return None;
    };
    match dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => Some(imm.bits() as u32),
        _ => None,
    }
}

/// The `i32x4` lane mask (all ones where set) of the low 4 bits of `bits` (an `i64`), from [`MASK_TABLE`].
fn mask_chunk(b: &mut FunctionBuilder<'_>, bits: Value) -> Value {
    let table = b.ins().iconst(types::I64, MASK_TABLE.as_ptr() as i64);
    let idx = b.ins().band_imm(bits, 15);
    let off = b.ins().imul_imm(idx, 16);
    let addr = b.ins().iadd(table, off);
    b.ins().load(I32X4, vflags(), addr, 0)
}

/// The `i32x4` lane mask of the chunk at byte offset `off` (an `i64`) of lane mask `m`: its bits 4 (off / 16)
/// and up, a shift by off / 4.
fn mask_chunk_at(b: &mut FunctionBuilder<'_>, m: Value, off: Value) -> Value {
    let by = b.ins().ushr_imm(off, 2);
    let bits = b.ins().ushr(m, by);
    mask_chunk(b, bits)
}

fn zero_vec(b: &mut FunctionBuilder<'_>) -> Value {
    let z = b.ins().iconst(types::I32, 0);
    b.ins().splat(I32X4, z)
}

/// Four lanes read one by one: lane address chunk `a`, each lane's bytes at host `base` + its address +
/// `offset`, `bytes` (1, 2 or 4) zero- or sign-extended. With `quick`, lanes read from `base` alone (offset 0)
/// where it is false (for a `base` then pointing at the context's sink).
fn gather_chunk(
    b: &mut FunctionBuilder<'_>,
    a: Value,
    base: Value,
    offset: i64,
    bytes: u32,
    signed: bool,
    quick: Option<Value>,
) -> Value {
    let zero = b.ins().iconst(types::I32, 0);
    let mut acc = b.ins().splat(I32X4, zero);
    let zero64 = b.ins().iconst(types::I64, 0);
    for j in 0..4u8 {
        let x = b.ins().extractlane(a, j);
        let x = b.ins().uextend(types::I64, x);
        let (p, imm) = match quick {
            Some(q) => {
                let at = b.ins().iadd_imm(x, offset);
                let at = b.ins().select(q, at, zero64);
                (b.ins().iadd(base, at), 0)
            }
            None => (b.ins().iadd(base, x), offset as i32),
        };
        let v = match (bytes, signed) {
            (1, true) => b.ins().sload8(types::I32, MemFlags::new(), p, imm),
            (1, false) => b.ins().uload8(types::I32, MemFlags::new(), p, imm),
            (2, true) => b.ins().sload16(types::I32, MemFlags::new(), p, imm),
            (2, false) => b.ins().uload16(types::I32, MemFlags::new(), p, imm),
            _ => b.ins().load(types::I32, MemFlags::new(), p, imm),
        };
        acc = b.ins().insertlane(acc, v, j);
    }
    acc
}

/// The address of the context's next access record (see [`JitBackend::record`]).
fn record_slot(b: &mut FunctionBuilder<'_>, ctx: Value) -> Value {
    let n = b.ins().load(types::I64, trusted(), ctx, Ctx::REC_COUNT);
    let at = b.ins().imul_imm(n, AccessRecord::SIZE);
    b.ins().iadd(ctx, at)
}

/// Completes the access record at `at`: its lane mask, offset and descriptor; counts it.
fn record_fields(b: &mut FunctionBuilder<'_>, ctx: Value, at: Value, m: Value, offset: i64, desc: u64) {
    b.ins().store(trusted(), m, at, Ctx::RECS + AccessRecord::MASK);
    let off = b.ins().iconst(types::I64, offset);
    b.ins().store(trusted(), off, at, Ctx::RECS + AccessRecord::OFFSET);
    let d = b.ins().iconst(types::I64, desc as i64);
    b.ins().store(trusted(), d, at, Ctx::RECS + AccessRecord::DESC);
    let n = b.ins().load(types::I64, trusted(), ctx, Ctx::REC_COUNT);
    let n = b.ins().iadd_imm(n, 1);
    b.ins().store(trusted(), n, ctx, Ctx::REC_COUNT);
}

/// The fast path of an inline LDS or global access: for every lane, `bytes` at `base + rel + imm` (`rels` one
/// i32x4 per chunk; 1 or 2 bytes zero- or sign-extended when `signed`, 8 in one host access, else 4 per
/// dword), loaded — inactive lanes read the first bytes and yield 0 — or, with `data`, stored — inactive lanes
/// store to the context's sink. Returns the loaded dword vectors (none for a store).
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
    let outs = if data.is_some() {
        0
    } else {
        (bytes as usize).div_ceil(4)
    };
    let mut loaded = vec![
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: None
        };
        outs
    ];
    // four dwords a lane: a load of each lane's 16 bytes, the 4x4 block then transposed into the four
    // registers' chunks (32-bit interleaves of lanes 0 and 1 and of lanes 2 and 3, then 64-bit ones of those)
    let quads = (data.is_none() && bytes == 16).then(|| transposes(b));
    for i in 0..CHUNKS {
        let safe = b.ins().bitselect(masks[i], rels[i], zero_v);
        if data.is_none() && bytes == 4 {
            let v = load_chunk_dword(b, base, safe, imm);
            loaded[0].c[i] = b.ins().bitselect(masks[i], v, zero_v);
            continue;
        }
        if let Some(shuffles) = quads {
            let rows: [Value; 4] = std::array::from_fn(|j| {
                let r = b.ins().extractlane(safe, j as u8);
                let r = b.ins().uextend(types::I64, r);
                let p = b.ins().iadd(base, r);
                let row = b.ins().load(I32X4, MemFlags::new(), p, imm);
                b.ins().bitcast(types::I8X16, little(), row)
            });
            for (d, col) in transpose4(b, shuffles, rows).into_iter().enumerate() {
                let v = b.ins().bitcast(I32X4, little(), col);
                loaded[d].c[i] = b.ins().bitselect(masks[i], v, zero_v);
            }
            continue;
        }
        let mut acc = vec![zero_v; outs];
        for j in 0..4u8 {
            let r = b.ins().extractlane(safe, j);
            let r = b.ins().uextend(types::I64, r);
            let p = b.ins().iadd(base, r);
            match data {
                // eight bytes a lane in one host access (stored so too, below), as the GPU makes a naturally
                // aligned 64-bit access (single-copy atomic: a lane never sees half of another thread's store)
                None if bytes == 8 => {
                    let x = b.ins().load(types::I64, MemFlags::new(), p, imm);
                    let low = b.ins().ireduce(types::I32, x);
                    let high = b.ins().ushr_imm(x, 32);
                    let high = b.ins().ireduce(types::I32, high);
                    acc[0] = b.ins().insertlane(acc[0], low, j);
                    acc[1] = b.ins().insertlane(acc[1], high, j);
                }
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
                    if let (8, [low, high]) = (bytes, vals) {
                        let low = b.ins().extractlane(low.c[i], j);
                        let high = b.ins().extractlane(high.c[i], j);
                        let low = b.ins().uextend(types::I64, low);
                        let high = b.ins().uextend(types::I64, high);
                        let high = b.ins().ishl_imm(high, 32);
                        let x = b.ins().bor(low, high);
                        b.ins().store(MemFlags::new(), x, dst, 0);
                    } else {
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
    fn xor(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().bxor(a, b)
    }
    fn sub(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().isub(a, b)
    }
    fn shr(&mut self, a: Value, n: u32) -> Value {
        self.0.ins().ushr_imm(a, n as i64)
    }
    fn gt_u(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().icmp(IntCC::UnsignedGreaterThan, a, b)
    }
    fn both(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().band(a, b)
    }
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.0.ins().bitselect(c, a, b)
    }
    fn fmin_ordered(&mut self, a: Value, b: Value) -> Value {
        // Cranelift's fmin is IEEE 754-2019 minimum: -0 below +0
        let (x, y) = (
            self.0.ins().bitcast(F32X4, little(), a),
            self.0.ins().bitcast(F32X4, little(), b),
        );
        let m = self.0.ins().fmin(x, y);
        self.0.ins().bitcast(I32X4, little(), m)
    }
    fn fmax_ordered(&mut self, a: Value, b: Value) -> Value {
        let (x, y) = (
            self.0.ins().bitcast(F32X4, little(), a),
            self.0.ins().bitcast(F32X4, little(), b),
        );
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
fn float_mask(
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

/// Whether an LDS access of `bytes` a lane at `offset` through `pattern` may take a whole-chunk path: EXEC
/// (`m`) all ones and the highest lane's bytes inside the LDS of `len` bytes.
fn lds_chunks_fit(
    b: &mut FunctionBuilder<'_>,
    len: Value,
    pattern: &LdsPattern,
    offset: u32,
    bytes: u32,
    m: Value,
) -> Value {
    let max = b.ins().uextend(types::I64, pattern.max);
    let end = b.ins().iadd_imm(max, offset as i64 + bytes as i64);
    let inside = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len);
    let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
    b.ins().band(inside, full)
}

/// The room an LDS of `len` bytes leaves a lane's access of `need` bytes (its offset included): lane address
/// a fits when a + need <= len, i.e. a <= len - need, which is `room` splat over a chunk; `negative` when no
/// address fits.
fn lds_room(b: &mut FunctionBuilder<'_>, len: Value, need: i64) -> (Value, Value) {
    let room = b.ins().iadd_imm(len, -need);
    let negative = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
    let room32 = b.ins().ireduce(types::I32, room);
    (negative, b.ins().splat(I32X4, room32))
}

/// The shuffles of [`transpose4`]: 32-bit interleaves of two vectors' low and high halves, then 64-bit ones.
fn transposes(b: &mut FunctionBuilder<'_>) -> [Immediate; 4] {
    let [lo32, hi32] = f64x2_joins(b);
    let [lo64, hi64] = [
        [0u8, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23],
        [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31],
    ]
    .map(|m| b.func.dfg.immediates.push(ConstantData::from(m.to_vec())));
    [lo32, hi32, lo64, hi64]
}

/// A 4x4 block of dwords (four `i8x16` rows) transposed: four lanes' 16 bytes each into the chunks of four
/// registers, or the chunks of four registers into four lanes' 16 bytes (`shuffles` from [`transposes`]).
fn transpose4(b: &mut FunctionBuilder<'_>, shuffles: [Immediate; 4], rows: [Value; 4]) -> [Value; 4] {
    let [lo32, hi32, lo64, hi64] = shuffles;
    let t = [(0, lo32), (0, hi32), (2, lo32), (2, hi32)].map(|(j, m)| b.ins().shuffle(rows[j], rows[j + 1], m));
    [(0, lo64), (0, hi64), (1, lo64), (1, hi64)].map(|(k, m)| b.ins().shuffle(t[k], t[k + 2], m))
}

/// The byte shuffles [`f64x2_pair`] takes, made once per function use.
fn f64x2_joins(b: &mut FunctionBuilder<'_>) -> [Immediate; 2] {
    [
        [0u8, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23],
        [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31],
    ]
    .map(|m| b.func.dfg.immediates.push(ConstantData::from(m.to_vec())))
}

/// A chunk of four lanes' f64 values, given as their low and high dwords, as two f64x2 vectors: lanes 0 and 1,
/// then lanes 2 and 3 (`joins` from [`f64x2_joins`]).
fn f64x2_pair(b: &mut FunctionBuilder<'_>, joins: [Immediate; 2], lo: Value, hi: Value) -> [Value; 2] {
    let (l8, h8) = (
        b.ins().bitcast(types::I8X16, little(), lo),
        b.ins().bitcast(types::I8X16, little(), hi),
    );
    joins.map(|mask| {
        let s = b.ins().shuffle(l8, h8, mask);
        b.ins().bitcast(types::F64X2, little(), s)
    })
}

/// The shuffles that split two f64x2 vectors (lanes 0 and 1, lanes 2 and 3) back into a chunk's low and high
/// dwords: [`f64x2_pair`] undone.
fn f64x2_splits(b: &mut FunctionBuilder<'_>) -> [Immediate; 2] {
    [
        [0u8, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27],
        [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31],
    ]
    .map(|m| b.func.dfg.immediates.push(ConstantData::from(m.to_vec())))
}

/// One chunk of an f64 operation on (lo, hi) dword chunks of its sources: `op` on the two f64x2 halves, the
/// result's NaN lanes (an `i64x2` mask, either half), and its low and high dwords (`shuffles` from
/// [`f64x2_joins`] and [`f64x2_splits`]).
fn f64_chunk<'f>(
    b: &mut FunctionBuilder<'f>,
    (joins, splits): ([Immediate; 2], [Immediate; 2]),
    op: &impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value,
    chunks: &[(Value, Value)],
) -> (Value, [Value; 2]) {
    let mut halves = [[dummy(); 3]; 2];
    for (k, &(l, h)) in chunks.iter().enumerate() {
        [halves[0][k], halves[1][k]] = f64x2_pair(b, joins, l, h);
    }
    let r: [Value; 2] = std::array::from_fn(|h| op(b, &halves[h][..chunks.len()]));
    let nan = r.map(|v| b.ins().fcmp(FloatCC::Unordered, v, v));
    let nan = b.ins().bor(nan[0], nan[1]);
    let bytes = r.map(|v| b.ins().bitcast(types::I8X16, little(), v));
    let dwords = splits.map(|m| {
        let x = b.ins().shuffle(bytes[0], bytes[1], m);
        b.ins().bitcast(I32X4, little(), x)
    });
    (nan, dwords)
}

fn jump_with(b: &mut FunctionBuilder<'_>, join: cranelift_codegen::ir::Block, values: &[Vv]) {
    let args: Vec<_> = values.iter().flat_map(|v| v.c).map(|x| x.into()).collect();
    b.ins().jump(join, &args);
}

/// Whether every lane of `v` (materialized) equals the scalar `x`, as an i8.
fn all_lanes_equal(b: &mut FunctionBuilder<'_>, v: &Vv, x: Value) -> Value {
    let x = b.ins().splat(I32X4, x);
    let mut same = b.ins().icmp(IntCC::Equal, v.c[0], x);
    for c in &v.c[1..] {
        let e = b.ins().icmp(IntCC::Equal, *c, x);
        same = b.ins().band(same, e);
    }
    b.ins().vall_true(same)
}

/// Continues at `join` and returns its parameters as vectors (16 chunks each).
fn join_vectors(b: &mut FunctionBuilder<'_>, join: cranelift_codegen::ir::Block) -> Vec<Vv> {
    b.switch_to_block(join);
    b.seal_block(join);
    let params = b.block_params(join).to_vec();
    params
        .chunks(CHUNKS)
        .map(|c| Vv {
            c: c.try_into().expect("16 chunks"),
            uniform: None,
            lazy: None,
        })
        .collect()
}

/// Loads one dword per lane of a chunk from `base + lane offset + offset`, where `safe` holds the four lanes'
/// offsets (inactive lanes already replaced by a harmless one): one vector load when the four are consecutive
/// dwords, one scalar load splat when they are equal, four scalar loads otherwise.
fn load_chunk_dword(b: &mut FunctionBuilder<'_>, base: Value, safe: Value, offset: i32) -> Value {
    let first = b.ins().extractlane(safe, 0);
    let first_v = b.ins().splat(I32X4, first);
    let steps = b.func.dfg.constants.insert(ConstantData::from(
        [0u32, 4, 8, 12]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    ));
    let steps = b.ins().vconst(I32X4, steps);
    let seq = b.ins().iadd(first_v, steps);
    let is_seq = b.ins().icmp(IntCC::Equal, safe, seq);
    let is_seq = b.ins().vall_true(is_seq);
    let is_same = b.ins().icmp(IntCC::Equal, safe, first_v);
    let is_same = b.ins().vall_true(is_same);
    let (vec_blk, other, same_blk, gather, join) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
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

impl<'a, 'f> Backend for JitBackend<'a, 'f> {
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
        let Some(slot) = sgpr_slot(reg) else {
            return self.s_const(0);
        };
        if self.fb().is_none() {
            return dummy();
        }
        if let Some(v) = self
            .cache
            .as_deref()
            .and_then(|c| c.sgpr_halves.iter().find(|(k, _)| *k == slot))
            .map(|(_, v)| *v)
        {
            return v;
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
        if reg == sreg::EXEC_LO as usize || reg == sreg::EXEC_LO as usize + 1 {
            self.forget_exec();
        }
        let main = self.guard_end.is_none();
        if let Some(c) = self.cache.as_deref_mut() {
            c.sgpr_halves.retain(|(k, _)| *k != reg);
            if main && c.halves.iter().any(|&(lo, hi, _)| v == lo || v == hi) {
                c.sgpr_halves.push((reg, v));
            }
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().store(trusted(), v, sg, reg as i32 * 4);
    }
    fn s_get_at(&mut self, index: Value) -> Value {
        if self.fb().is_none() {
            return dummy();
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        let (at, null) = sgpr_at(b, sg, index);
        let v = b.ins().load(types::I32, trusted(), at, 0);
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().select(null, zero, v)
    }
    fn s_set_at(&mut self, index: Value, v: Value) {
        if self.fb().is_none() {
            return;
        }
        // any register, EXEC among them
        self.forget_exec();
        if let Some(c) = self.cache.as_deref_mut() {
            c.sgpr_halves.clear();
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        let (at, null) = sgpr_at(b, sg, index);
        // the null register keeps what it holds
        let old = b.ins().load(types::I32, trusted(), at, 0);
        let v = b.ins().select(null, old, v);
        b.ins().store(trusted(), v, at, 0);
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
        if let Some(&(.., m)) = self
            .cache
            .as_deref()
            .and_then(|c| c.halves.iter().find(|h| (h.0, h.1) == (lo, hi)))
        {
            return m;
        }
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
        let hi = b.ins().ireduce(types::I32, hi);
        if let Some(c) = self.cache.as_deref_mut() {
            c.halves.push((lo, hi, m));
        }
        (lo, hi)
    }
    fn exec(&mut self) -> Value {
        if self.fb().is_none() {
            return dummy();
        }
        // outside a guard's compiled path, code here dominates the rest of the block: EXEC loaded (or set) by an
        // earlier instruction is reused, and a load here is kept for later ones
        let main = self.guard_end.is_none();
        if let Some(e) = self.cache.as_deref().and_then(|c| c.exec).filter(|_| main) {
            return e;
        }
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        let e = b.ins().load(types::I64, vflags(), sg, sreg::EXEC_LO as i32 * 4);
        if let Some(c) = self.cache.as_deref_mut().filter(|_| main) {
            c.exec = Some(e);
        }
        e
    }
    fn set_exec(&mut self, m: Value) {
        if self.fb().is_none() {
            return;
        }
        let main = self.guard_end.is_none();
        let sg = self.ptr_field(Ctx::SGPRS);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().store(vflags(), m, sg, sreg::EXEC_LO as i32 * 4);
        if let Some(c) = self.cache.as_deref_mut() {
            c.exec = main.then_some(m);
            c.sgpr_halves
                .retain(|(k, _)| *k != sreg::EXEC_LO as usize && *k != sreg::EXEC_LO as usize + 1);
        }
    }
    fn mask_op(&mut self, op: MaskOp, a: Value, x: Value) -> Value {
        let Some(b) = self.fb() else { return dummy() };
        let r = match op {
            MaskOp::And => b.ins().band(a, x),
            MaskOp::Or => b.ins().bor(a, x),
            MaskOp::Xor => b.ins().bxor(a, x),
            MaskOp::AndNot => b.ins().band_not(a, x),
        };
        if let Some(c) = self.cache.as_deref_mut().filter(|_| op == MaskOp::And) {
            for (u, e) in [(a, x), (x, a)] {
                if c.exec == Some(e) && c.uniform_masks.contains(&u) {
                    c.exec_masked.push((r, u, e));
                    break;
                }
            }
        }
        r
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
        let Some(b) = self.fb() else {
            return Vv {
                c: [dummy(); CHUNKS],
                uniform: None,
                lazy: None,
            };
        };
        let v = b.ins().splat(I32X4, s);
        Vv {
            c: [v; CHUNKS],
            uniform: Some(s),
            lazy: None,
        }
    }
    fn v_op(&mut self, op: VOp, a: Vv, x: Vv) -> Vv {
        // lanes known while translating (the lane constants of v_mbcnt, and what is computed from them) give
        // known lanes, computed here by the interpreter's rule
        if let (Some(p), Some(q)) = (self.known(&a), self.known(&x)) {
            return self.folded(&emu_core::interp::v_op_lanes(op, &p, &q));
        }
        // integer operations of two wave-uniform values are one scalar operation, and stay uniform (so a shift
        // by a computed amount, as in v_bfe, keeps its scalar amount)
        if let (Some(p), Some(q)) = (a.uniform, x.uniform) {
            let scalar = |b: &mut FunctionBuilder<'_>| -> Option<Value> {
                Some(match op {
                    VOp::AddU32 => b.ins().iadd(p, q),
                    VOp::SubU32 => b.ins().isub(p, q),
                    VOp::MulLoU32 => b.ins().imul(p, q),
                    VOp::MulHiU32 => b.ins().umulhi(p, q),
                    VOp::MulHiI32 => b.ins().smulhi(p, q),
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
                Some(amount) => self.map_chunks(a, move |b, p| match op {
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
                if self.fb().is_none() {
                    return self.dv();
                }
                self.park_in_place(&a);
                self.park_in_place(&x);
                let (a, x) = (self.mat(a), self.mat(x));
                let b = self.b.as_deref_mut().expect("emitting");
                // lanes widened to 64 bits in two i64x2 halves, multiplied, and the high words gathered
                let odd_words = b.func.dfg.immediates.push(ConstantData::from(vec![
                    4u8, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31,
                ]));
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
                    let (pl, ql, ph, qh) = (
                        widen(b, p, false),
                        widen(b, q, false),
                        widen(b, p, true),
                        widen(b, q, true),
                    );
                    let lo = b.ins().imul(pl, ql);
                    let hi = b.ins().imul(ph, qh);
                    let (lo8, hi8) = (
                        b.ins().bitcast(types::I8X16, little(), lo),
                        b.ins().bitcast(types::I8X16, little(), hi),
                    );
                    let words = b.ins().shuffle(lo8, hi8, odd_words);
                    c[i] = b.ins().bitcast(I32X4, little(), words);
                }
                Vv {
                    c,
                    uniform: None,
                    lazy: None,
                }
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
        if self.fb().is_none() {
            return self.dv();
        }
        let f: ChunkFn<'f> = std::rc::Rc::new(|b: &mut FunctionBuilder<'f>, v: &[Value]| {
            let (p, q, r) = (Self::to_f(b, v[0]), Self::to_f(b, v[1]), Self::to_f(b, v[2]));
            let f = b.ins().fma(p, q, r);
            Self::to_i(b, f)
        });
        self.lazy_op(vec![a, x, c], f, vec![a, x, c])
    }

    fn v_cmp(&mut self, c: Compare, a: Vv, x: Vv) -> Value {
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
        let Some(b) = self.fb() else { return dummy() };
        if let P::Const(k) = p {
            return b.ins().iconst(types::I64, if k { -1 } else { 0 });
        }
        self.park_in_place(&a);
        self.park_in_place(&x);
        let uniform = all_uniform([&a, &x].into_iter());
        let mut mask = None;
        for i in 0..CHUNKS {
            let (ai, xi) = (self.ch(&a, i), self.ch(&x, i));
            let b = self.b.as_deref_mut().expect("emitting");
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
    fn v_add_carry(&mut self, a: Vv, x: Vv, carry_in: Option<Value>) -> (Vv, Value) {
        // the carry-in lane mask is all ones (-1) where set: subtracting it adds 1
        self.carry_op(
            a,
            x,
            carry_in,
            |b, p, q, m| {
                let s = b.ins().iadd(p, q);
                let c = b.ins().icmp(IntCC::UnsignedLessThan, s, p);
                let Some(m) = m else { return c };
                let s2 = b.ins().isub(s, m);
                let c2 = b.ins().icmp(IntCC::UnsignedLessThan, s2, s);
                b.ins().bor(c, c2)
            },
            |b, v| {
                let s = b.ins().iadd(v[0], v[1]);
                if v.len() == 2 {
                    s
                } else {
                    b.ins().isub(s, v[2])
                }
            },
        )
    }
    fn v_sub_borrow(&mut self, a: Vv, x: Vv, borrow_in: Option<Value>) -> (Vv, Value) {
        // d + m subtracts 1 where the borrow-in mask is set; it borrows when d was 0 there
        self.carry_op(
            a,
            x,
            borrow_in,
            |b, p, q, m| {
                let w = b.ins().icmp(IntCC::UnsignedLessThan, p, q);
                let Some(m) = m else { return w };
                let d = b.ins().isub(p, q);
                let zero = zero_vec(b);
                let d_zero = b.ins().icmp(IntCC::Equal, d, zero);
                let w2 = b.ins().band(d_zero, m);
                b.ins().bor(w, w2)
            },
            |b, v| {
                let d = b.ins().isub(v[0], v[1]);
                if v.len() == 2 {
                    d
                } else {
                    b.ins().iadd(d, v[2])
                }
            },
        )
    }
    fn v_un(&mut self, op: VUn, a: Vv) -> Vv {
        if let Some(p) = self.known(&a) {
            return self.folded(&emu_core::interp::v_un_lanes(op, &p));
        }
        match op {
            VUn::Not => self.map_chunks(a, |b, p| b.ins().bnot(p)),
            // the bytes' counts, then each lane's four summed (at most 32: the low byte holds it)
            VUn::Bcnt => self.map_chunks(a, |b, p| {
                let bytes = b.ins().bitcast(types::I8X16, little(), p);
                let counts = b.ins().popcnt(bytes);
                let q = b.ins().bitcast(I32X4, little(), counts);
                let by8 = b.ins().ushr_imm(q, 8);
                let q = b.ins().iadd(q, by8);
                let by16 = b.ins().ushr_imm(q, 16);
                let q = b.ins().iadd(q, by16);
                let low = b.ins().iconst(types::I32, 0x3f);
                let low = b.ins().splat(I32X4, low);
                b.ins().band(q, low)
            }),
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
                let r = self.map_chunks(a, move |b, p| {
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
            return self.f64_op(&[a, x], |b, v| {
                if op == VOp64::AddF64 {
                    b.ins().fadd(v[0], v[1])
                } else {
                    b.ins().fmul(v[0], v[1])
                }
            });
        }
        if self.fb().is_none() {
            return (self.dv(), self.dv());
        }
        if op == VOp64::AddU64 {
            // the high half adds the low half's carry (an all-ones lane where the low sum wrapped: subtracted)
            let lo = self.zip_chunks(a.0, x.0, |b, p, q| b.ins().iadd(p, q));
            let hi = self.lazy_op(
                vec![a.0, x.0, a.1, x.1],
                std::rc::Rc::new(|b: &mut FunctionBuilder<'f>, v: &[Value]| {
                    let low = b.ins().iadd(v[0], v[1]);
                    let carry = b.ins().icmp(IntCC::UnsignedLessThan, low, v[0]);
                    let high = b.ins().iadd(v[2], v[3]);
                    b.ins().isub(high, carry)
                }),
                Vec::new(),
            );
            return (lo, hi);
        }
        if let (VOp64::Lshr | VOp64::Ashr, Some(s)) = (op, x.0.uniform) {
            return self.shr64_uniform(a, s, op == VOp64::Ashr);
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
        // between f32 and f64 inline, with the host's conversions (those the interpreter's `as` makes: round to
        // nearest even, a NaN quieted with its payload); the others on the interpreter
        if !matches!(op, VCvt::F64FromF32 | VCvt::F32FromF64) {
            let r = self.call_v(Op::Cvt { op }, &[a.0, a.1], &[], 2);
            return (r[0], r[1]);
        }
        if self.fb().is_none() {
            return (self.dv(), self.dv());
        }
        let imm = |b: &mut FunctionBuilder<'f>, m: [u8; 16]| b.func.dfg.immediates.push(ConstantData::from(m.to_vec()));
        let b = self.b.as_deref_mut().expect("emitting");
        if op == VCvt::F32FromF64 {
            // each f64x2 pair demoted into the low half of an f32x4; the two low halves joined
            let joins = f64x2_joins(b);
            let low_halves = imm(b, [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);
            let f: ChunkFn<'f> = std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| {
                let [p0, p1] = f64x2_pair(b, joins, v[0], v[1]);
                let (d0, d1) = (b.ins().fvdemote(p0), b.ins().fvdemote(p1));
                let (d0, d1) = (
                    b.ins().bitcast(types::I8X16, little(), d0),
                    b.ins().bitcast(types::I8X16, little(), d1),
                );
                let r = b.ins().shuffle(d0, d1, low_halves);
                b.ins().bitcast(I32X4, little(), r)
            });
            let r = self.lazy_op(vec![a.0, a.1], f, Vec::new());
            return (r, r);
        }
        // to f64: lanes 0 and 1, then lanes 2 and 3 moved down, promoted; the dwords split into low and high
        let upper = imm(b, [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]);
        let split_lo = imm(b, [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]);
        let split_hi = imm(b, [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]);
        let half = move |split: Immediate| -> ChunkFn<'f> {
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| {
                let x8 = b.ins().bitcast(types::I8X16, little(), v[0]);
                let up = b.ins().shuffle(x8, x8, upper);
                let wide = |b: &mut FunctionBuilder<'f>, x: Value| {
                    let x = b.ins().bitcast(F32X4, little(), x);
                    b.ins().fvpromote_low(x)
                };
                let (r0, r1) = (wide(b, x8), wide(b, up));
                let (r0, r1) = (
                    b.ins().bitcast(types::I8X16, little(), r0),
                    b.ins().bitcast(types::I8X16, little(), r1),
                );
                let r = b.ins().shuffle(r0, r1, split);
                b.ins().bitcast(I32X4, little(), r)
            })
        };
        let lo = self.lazy_op(vec![a.0], half(split_lo), Vec::new());
        let hi = self.lazy_op(vec![a.0], half(split_hi), Vec::new());
        (lo, hi)
    }
    fn v_cmp64(&mut self, c: Compare, a: (Vv, Vv), x: (Vv, Vv)) -> Value {
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
        let Some(b) = self.fb() else { return dummy() };
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
            let b = self.b.as_deref_mut().expect("emitting");
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
    fn v_select(&mut self, m: Value, a: Vv, x: Vv) -> Vv {
        if self.fb().is_none() {
            return self.dv();
        }
        let lanes = self.lanes_of_mask(m);
        self.lazy_op(
            vec![lanes, a, x],
            std::rc::Rc::new(|b, v| b.ins().bitselect(v[0], v[2], v[1])),
            Vec::new(),
        )
    }
    fn v_mad_u64_u32(&mut self, a: Vv, x: Vv, c: (Vv, Vv), signed: bool) -> ((Vv, Vv), Value) {
        // chunk by chunk, as two i64x2 halves: the 32-bit operands widened and multiplied (the product is exact
        // in 64 bits), the addend joined from its dwords and added; the carry (unsigned: out of bit 63) or the
        // overflow (signed: an i64 result with the wrong sign) is the sign bit of a bitwise expression
        if self.fb().is_none() {
            return ((self.dv(), self.dv()), dummy());
        }
        // an addend of 0 (as LLVM writes a plain 32 x 32 -> 64 multiply) neither carries nor overflows
        let no_addend = [&c.0, &c.1]
            .into_iter()
            .all(|h| self.known(h).is_some_and(|l| l == [0; 64]));
        for v in [&a, &x, &c.0, &c.1] {
            self.park_in_place(v);
        }
        let (joins, splits) = {
            let b = self.b.as_deref_mut().expect("emitting");
            (f64x2_joins(b), f64x2_splits(b))
        };
        let (mut lo, mut hi) = ([dummy(); CHUNKS], [dummy(); CHUNKS]);
        let mut mask = None;
        for i in 0..CHUNKS {
            let (ai, xi, cl, chi) = (self.ch(&a, i), self.ch(&x, i), self.ch(&c.0, i), self.ch(&c.1, i));
            let b = self.b.as_deref_mut().expect("emitting");
            let (c8, h8) = (
                b.ins().bitcast(types::I8X16, little(), cl),
                b.ins().bitcast(types::I8X16, little(), chi),
            );
            let halves = [false, true].map(|high| {
                let widen = |b: &mut FunctionBuilder<'f>, v: Value| match (signed, high) {
                    (false, false) => b.ins().uwiden_low(v),
                    (false, true) => b.ins().uwiden_high(v),
                    (true, false) => b.ins().swiden_low(v),
                    (true, true) => b.ins().swiden_high(v),
                };
                let (p, q) = (widen(b, ai), widen(b, xi));
                let p = b.ins().imul(p, q);
                if no_addend {
                    return [p, p].map(|v| b.ins().bitcast(types::I8X16, little(), v));
                }
                let addend = b.ins().shuffle(c8, h8, joins[high as usize]);
                let addend = b.ins().bitcast(types::I64X2, little(), addend);
                let s = b.ins().iadd(p, addend);
                let flag = if signed {
                    // both terms of one sign, the sum of the other
                    let (ps, cs) = (b.ins().bxor(p, s), b.ins().bxor(addend, s));
                    b.ins().band(ps, cs)
                } else {
                    // a carry out of the top bit: both top bits set, or either set and the sum's clear
                    let both = b.ins().band(p, addend);
                    let either = b.ins().bor(p, addend);
                    let either = b.ins().band_not(either, s);
                    b.ins().bor(both, either)
                };
                [s, flag].map(|v| b.ins().bitcast(types::I8X16, little(), v))
            });
            let dwords = |b: &mut FunctionBuilder<'f>, k: usize, m: Immediate| {
                let v = b.ins().shuffle(halves[0][k], halves[1][k], m);
                b.ins().bitcast(I32X4, little(), v)
            };
            (lo[i], hi[i]) = (dwords(b, 0, splits[0]), dwords(b, 0, splits[1]));
            if no_addend {
                continue;
            }
            let flags = dwords(b, 1, splits[1]);
            let lanes = b.ins().sshr_imm(flags, 31);
            mask = Some(self.collapse_step(mask, lanes, i));
        }
        let mask = match mask {
            Some(m) => m,
            None => self.fb().expect("emitting").ins().iconst(types::I64, 0),
        };
        (
            (
                Vv {
                    c: lo,
                    uniform: None,
                    lazy: None,
                },
                Vv {
                    c: hi,
                    uniform: None,
                    lazy: None,
                },
            ),
            mask,
        )
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
        // a shift amount the same in every lane (the common case: an address scaled by a constant) inline,
        // as 32-bit shifts of the halves; per-lane amounts on the interpreter
        let Some(s) = amount.uniform else {
            let r = self.call_v(Op::Shl64 {}, &[lo, hi, amount], &[], 2);
            return (r[0], r[1]);
        };
        if self.fb().is_none() {
            return (self.dv(), self.dv());
        }
        let (k, up, wide, none) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let t = b.ins().band_imm(s, 63);
            let k = b.ins().band_imm(t, 31);
            let up = b.ins().irsub_imm(k, 32);
            (
                k,
                up,
                b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, t, 32),
                b.ins().icmp_imm(IntCC::Equal, k, 0),
            )
        };
        // t < 32: (lo << k, hi << k | lo >> (32 - k)); t >= 32: (0, lo << k); lo >> 32 is nothing
        let rl = self.map_chunks(lo, move |b, p| {
            let a = b.ins().ishl(p, k);
            let zero = zero_vec(b);
            b.ins().select(wide, zero, a)
        });
        let rh = self.zip_chunks(lo, hi, move |b, p, q| {
            let a = b.ins().ishl(p, k);
            let h = b.ins().ishl(q, k);
            let zero = zero_vec(b);
            let carry = b.ins().ushr(p, up);
            let carry = b.ins().select(none, zero, carry);
            let h = b.ins().bor(h, carry);
            b.ins().select(wide, a, h)
        });
        (rl, rh)
    }
    fn scratch(&mut self) -> (Value, Value, Value) {
        // the wave's, in its context (set from the wave for every block)
        let ctx = self.ctx;
        let Some(b) = self.fb() else {
            return (dummy(), dummy(), dummy());
        };
        let base = b.ins().load(types::I64, trusted(), ctx, Ctx::SCRATCH_BASE);
        let lo = b.ins().ireduce(types::I32, base);
        let hi = b.ins().ushr_imm(base, 32);
        let hi = b.ins().ireduce(types::I32, hi);
        let lane_bytes = b.ins().load(types::I32, trusted(), ctx, Ctx::SCRATCH_LANE_BYTES);
        (lo, hi, lane_bytes)
    }
    fn uniform_bit(&mut self, s: Value, bit: u32, likely: bool) -> bool {
        // compiled the likely way; the other runs on the interpreter
        if self.fb().is_none() {
            return likely;
        }
        let (slow, fast) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let shifted = b.ins().ushr_imm(s, bit as i64);
            let set = b.ins().band_imm(shifted, 1);
            let (slow, fast) = (b.create_block(), b.create_block());
            if likely {
                b.ins().brif(set, fast, &[], slow, &[]);
            } else {
                b.ins().brif(set, slow, &[], fast, &[]);
            }
            b.switch_to_block(slow);
            b.seal_block(slow);
            (slow, fast)
        };
        let _ = slow;
        // the whole instruction on the interpreter, then on past the compiled form
        self.call(Op::Instruction {}, &[], &[], &[], 0, 0, 0, true);
        let b = self.b.as_deref_mut().expect("emitting");
        let end = *self.guard_end.get_or_insert_with(|| b.create_block());
        b.ins().jump(end, &[]);
        b.switch_to_block(fast);
        b.seal_block(fast);
        likely
    }
    fn s_clock(&mut self, clock: emu_core::sem::Clock) -> (Value, Value) {
        // the shader clock from the run's start value and the instructions executed since (earlier passes of
        // the block, then those of this pass before this one); the real-time clock on the interpreter
        if clock != emu_core::sem::Clock::Shader {
            self.no("reading the real-time clock");
            return (dummy(), dummy());
        }
        let before = self.site.as_ref().map_or(0, |s| s.executed - 1);
        let ctx = self.ctx;
        let Some(b) = self.fb() else { return (dummy(), dummy()) };
        let now = b.ins().load(types::I64, trusted(), ctx, Ctx::CLOCK_NOW);
        let step = b.ins().load(types::I64, trusted(), ctx, Ctx::CLOCK_STEP);
        let e = b.ins().load(types::I64, trusted(), ctx, Ctx::EXECUTED);
        let n = b.ins().iadd_imm(e, before);
        let t = b.ins().imul(step, n);
        let v = b.ins().iadd(now, t);
        let lo = b.ins().ireduce(types::I32, v);
        let hi = b.ins().ushr_imm(v, 32);
        let hi = b.ins().ireduce(types::I32, hi);
        (lo, hi)
    }
    fn index_mode(&mut self) -> bool {
        // compiled code never runs in index mode (see the trait)
        false
    }
    fn set_index_mode(&mut self, _on: bool) {
        // the mode lives outside the registers the JIT keeps; the interpreter switches it, and the runner
        // interprets while it is on
        self.no("switching VGPR index mode");
    }
    fn v_get_at(&mut self, _reg: Value) -> Vv {
        self.no("a VGPR chosen at run time (index mode)");
        self.dv()
    }
    fn v_set_at(&mut self, _reg: Value, _v: Vv, _m: Value) {
        self.no("a VGPR chosen at run time (index mode)");
    }
    fn s_hwreg(&mut self, reg: emu_core::hwreg::Held) -> Value {
        // the hardware registers live in the wave state, outside the registers the JIT keeps
        self.call(Op::HwReg { reg }, &[], &[], &[], 0, 1, 0, false).1[0]
    }
    fn s_interrupt(&mut self, ctxid: Value) {
        self.call(Op::Interrupt {}, &[], &[ctxid], &[], 0, 0, 0, false);
    }
    fn s_set_mode(&mut self, value: Value, mask: u32) -> Result<(), ExecError> {
        // checked when the code runs: a refused change faults (and ends the block)
        self.call(Op::SetMode { mask }, &[], &[value], &[], 0, 0, 0, true);
        Ok(())
    }
    fn fail_if_any(&mut self, bad: Value, err: ExecError) -> Result<(), ExecError> {
        // checked when the code runs: with any lane set, the call faults (and ends the block)
        let Some(b) = self.fb() else { return Ok(()) };
        let (fail, go_on) = (b.create_block(), b.create_block());
        b.ins().brif(bad, fail, &[], go_on, &[]);
        b.switch_to_block(fail);
        b.seal_block(fail);
        self.call(Op::FailIfAny { err }, &[], &[], &[bad], 0, 0, 0, true);
        let b = self.b.as_deref_mut().expect("emitting");
        b.ins().jump(go_on, &[]);
        b.switch_to_block(go_on);
        b.seal_block(go_on);
        Ok(())
    }
    fn v_lane_read(&mut self, v: Vv, lane: Value) -> Value {
        if let Some(b) = self.fb() {
            let at = b.ins().uextend(types::I64, lane);
            let at = b.ins().band_imm(at, 63);
            if let Some(x) = self.lane_at(&v, at) {
                return x;
            }
        }
        self.call(Op::LaneRead {}, &[v], &[lane], &[], 0, 1, 0, false).1[0]
    }
    fn v_first_lane(&mut self, v: Vv, m: Value) -> Value {
        if let Some(b) = self.fb() {
            // the first lane of the mask, lane 0 when it is empty
            let first = b.ins().ctz(m);
            let none = b.ins().icmp_imm(IntCC::Equal, m, 0);
            let zero = b.ins().iconst(types::I64, 0);
            let at = b.ins().select(none, zero, first);
            if let Some(x) = self.lane_at(&v, at) {
                return x;
            }
        }
        self.call(Op::FirstLane {}, &[v], &[], &[m], 0, 1, 0, false).1[0]
    }
    fn v_permute(&mut self, data: Vv, index: Vv, m: Value) -> Vv {
        let known = self.known(&index);
        match (known, self.fb().is_some()) {
            (Some(lanes), true) => self.permute_known(data, &lanes, m),
            _ => {
                self.park_in_place(&data);
                self.call_v(Op::Permute {}, &[data, index], &[m], 1)[0]
            }
        }
    }
    fn v_permute_forward(&mut self, data: Vv, index: Vv, m: Value) -> Vv {
        self.call_v(Op::PermuteForward {}, &[data, index], &[m], 1)[0]
    }
    fn v_lane_ids(&mut self) -> Vv {
        let ids: [u32; 64] = std::array::from_fn(|i| i as u32);
        self.v_const(&ids)
    }
    fn v_const(&mut self, values: &[u32; 64]) -> Vv {
        let Some(b) = self.fb() else {
            return Vv {
                c: [dummy(); CHUNKS],
                uniform: None,
                lazy: None,
            };
        };
        let mut c = [dummy(); CHUNKS];
        for (i, x) in c.iter_mut().enumerate() {
            let bytes: Vec<u8> = values[4 * i..4 * i + 4].iter().flat_map(|v| v.to_le_bytes()).collect();
            let k = b.func.dfg.constants.insert(ConstantData::from(bytes));
            *x = b.ins().vconst(I32X4, k);
        }
        self.consts.push((c, *values));
        Vv {
            c,
            uniform: None,
            lazy: None,
        }
    }
    fn v_mfma(&mut self, shape: Mfma, a: &[Vv], x: &[Vv], c: &[Vv]) -> Vec<Vv> {
        if let (Some(ra), Some(rx), Some(rc)) = (self.reg_run(a), self.reg_run(x), self.reg_run(c)) {
            if self.fb().is_some() {
                return self.mfma_direct(shape, [ra, rx, rc], [a, x, c].concat());
            }
        }
        let ins: Vec<Vv> = a.iter().chain(x).chain(c).copied().collect();
        self.call_v(Op::Mfma { shape }, &ins, &[], shape.acc_regs())
    }
    fn gws_barrier(&mut self, _count: Value) {
        // the wave's barrier state lives outside the registers the JIT keeps
        self.no("global wave sync");
    }
    fn gws_sema(&mut self, _op: emu_core::gws::SemaOp, _m0: Value, _offset0: u32, _value: Value) {
        // as the barrier: the request goes to the dispatch through the interpreter's wave state
        self.no("global wave sync");
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
        // format conversion stays with the interpreter
        self.no("typed buffer access");
        Ok(vec![self.dv(); if op.load { op.data_regs() } else { 0 }])
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
        // texel formats and filtering stay with the interpreter
        self.no("image access");
        // (the count is the interpreter's to decide: the instruction is never compiled)
        Ok(vec![self.dv(); op.data_regs()])
    }
    fn v_lanefn(&mut self, f: LaneFn, args: &[Vv]) -> Vec<Vv> {
        if let (LaneFn::Word(emu_core::lanefn::WordOp::Perm), [a, x, sel]) = (f, args) {
            if let (Some(sel), true) = (sel.uniform, self.fb().is_some()) {
                return vec![self.perm_uniform(*a, *x, sel)];
            }
        }
        if matches!(f, LaneFn::DivScaleF32 | LaneFn::DivFmasF32 | LaneFn::DivFixupF32) && self.fb().is_some() {
            return self.div_step_f32(f, args);
        }
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
        Ok(self
            .call_mem(Op::LdsAtomic { op, offset }, &[addr, data], &[], &[m], 1, 0)
            .0[0])
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
        let ins: Vec<Vv> = [lo, hi].iter().chain(src).chain(cmp).copied().collect();
        Ok(self
            .call_mem(
                Op::CmpSwap {
                    offset,
                    n: src.len() as u32,
                },
                &ins,
                &[],
                &[m],
                src.len(),
                0,
            )
            .0)
    }
    fn v_atomic(&mut self, op: AtomicOp, lo: Vv, hi: Vv, offset: i64, data: Vv, m: Value) -> Result<Vv, ExecError> {
        Ok(self
            .call_mem(Op::VAtomic { op, offset }, &[lo, hi, data], &[], &[m], 1, 0)
            .0[0])
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
        Ok(self.global_inline(
            lo,
            hi,
            offset,
            bytes,
            signed,
            m,
            None,
            Op::VLoadNarrow { offset, bytes, signed },
        )[0])
    }
    fn v_store_narrow(&mut self, lo: Vv, hi: Vv, offset: i64, bytes: u32, data: Vv, m: Value) -> Result<(), ExecError> {
        self.global_inline(
            lo,
            hi,
            offset,
            bytes,
            false,
            m,
            Some(&[data]),
            Op::VStoreNarrow { offset, bytes },
        );
        Ok(())
    }
    fn lds_read(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value) -> Result<Vec<Vv>, ExecError> {
        Ok(self.lds_inline(addr, offset, dwords, m, None))
    }
    fn lds_read_narrow(&mut self, addr: Vv, offset: u32, bytes: u32, signed: bool, m: Value) -> Result<Vv, ExecError> {
        let slow = |jb: &mut Self, addr: Vv, _: Option<&[Vv]>| {
            jb.call_mem(Op::LdsReadNarrow { offset, bytes, signed }, &[addr], &[], &[m], 1, 0)
                .0
        };
        if self.fb().is_none() || !self.may_record() {
            return Ok(slow(self, addr, None)[0]);
        }
        Ok(self.lds_lanes_of(addr, offset, bytes, signed, m, None, slow)[0])
    }
    fn lds_write_narrow(&mut self, addr: Vv, offset: u32, bytes: u32, data: Vv, m: Value) -> Result<(), ExecError> {
        let slow = |jb: &mut Self, addr: Vv, data: Option<&[Vv]>| {
            let data = data.expect("a write's data")[0];
            jb.call_mem(Op::LdsWriteNarrow { offset, bytes }, &[addr, data], &[], &[m], 0, 0)
                .0
        };
        if self.fb().is_none() || !self.may_record() {
            slow(self, addr, Some(&[data]));
            return Ok(());
        }
        self.lds_lanes_of(addr, offset, bytes, false, m, Some(&[data]), slow);
        Ok(())
    }
    fn lds_atomic64(
        &mut self,
        op: AtomicOp,
        addr: Vv,
        offset: u32,
        data: (Vv, Vv),
        m: Value,
    ) -> Result<(Vv, Vv), ExecError> {
        let v = self
            .call_mem(Op::LdsAtomic64 { op, offset }, &[addr, data.0, data.1], &[], &[m], 2, 0)
            .0;
        Ok((v[0], v[1]))
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
        let ins: Vec<Vv> = std::iter::once(addr)
            .chain(a.iter().copied())
            .chain(b.iter().copied())
            .collect();
        Ok(self
            .call_mem(
                Op::LdsAtomic2 {
                    op,
                    offset,
                    n: a.len() as u32,
                },
                &ins,
                &[],
                &[m],
                a.len(),
                0,
            )
            .0)
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
        let v = self
            .call_mem(Op::VAtomic64 { op, offset }, &[lo, hi, data.0, data.1], &[], &[m], 2, 0)
            .0;
        Ok((v[0], v[1]))
    }
    fn lds_write(&mut self, addr: Vv, offset: u32, data: &[Vv], m: Value) -> Result<(), ExecError> {
        self.lds_inline(addr, offset, data.len() as u32, m, Some(data));
        Ok(())
    }
    fn lds_read2(&mut self, addr: Vv, offsets: [u32; 2], dwords: u32, m: Value) -> Result<[Vec<Vv>; 2], ExecError> {
        let [o0, o1] = offsets;
        if !self.adjacent_pairs(offsets, dwords) {
            let first = self.lds_read(addr, o0, dwords, m)?;
            return Ok([first, self.lds_read(addr, o1, dwords, m)?]);
        }
        // each lane's 16 bytes in one load; any lane out of range: the two reads as apart
        let mut v = self.lds_lanes_of(addr, o0, 16, false, m, None, |jb, addr, _| {
            let mut v = jb.lds_inline(addr, o0, 2, m, None);
            v.extend(jb.lds_inline(addr, o1, 2, m, None));
            v
        });
        let second = v.split_off(2);
        Ok([v, second])
    }
    fn lds_write2(&mut self, addr: Vv, offsets: [u32; 2], data: [&[Vv]; 2], m: Value) -> Result<(), ExecError> {
        if !self.adjacent_pairs(offsets, data[0].len() as u32) {
            self.lds_write(addr, offsets[0], data[0], m)?;
            return self.lds_write(addr, offsets[1], data[1], m);
        }
        self.lds_write_quads(addr, offsets, m, data);
        Ok(())
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
        if bytes < 4 || self.observed || self.fb().is_none() {
            return emu_core::sem::private_access(self, name, p, bytes, signed, data, m);
        }
        let p = self.mat(p);
        // the lanes' one offset, when they have one
        let uniform = |b: &mut FunctionBuilder<'_>| {
            let first = b.ins().extractlane(p.c[0], 0);
            (all_lanes_equal(b, &p, first), first)
        };
        self.private_rows(bytes, data, m, uniform, |s, data| {
            emu_core::sem::private_access(s, name, p, bytes, signed, data, m)
        })
    }
    fn flat_access(
        &mut self,
        inst: &isa_amdgpu::Inst,
        lo: Vv,
        hi: Vv,
        data: Option<&[Vv]>,
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        let bytes = inst.info.mem.bytes as u32;
        if bytes < 4 || self.observed || self.fb().is_none() {
            return emu_core::sem::flat_access(self, inst, lo, hi, data, m);
        }
        let (lo, hi) = (self.mat(lo), self.mat(hi));
        // FLAT_SCRATCH's offset into the wave's segment
        let fs = self.s_get(102);
        let (base, _, _) = self.scratch();
        let offset = inst.field(isa_amdgpu::encoding::Field::Offset) & 0xfff;
        // every lane in the private aperture at one address: that private offset
        let uniform = |b: &mut FunctionBuilder<'_>| {
            let first = b.ins().extractlane(lo.c[0], 0);
            let same = all_lanes_equal(b, &lo, first);
            let aperture = b.ins().iconst(types::I32, emu_core::sem::PRIVATE_APERTURE_HI as i64);
            let private = all_lanes_equal(b, &hi, aperture);
            let rel = b.ins().isub(fs, base);
            let p = b.ins().iadd(rel, first);
            let p = b.ins().iadd_imm(p, offset as i64);
            (b.ins().band(same, private), p)
        };
        self.private_rows(bytes, data, m, uniform, |s, data| {
            emu_core::sem::flat_access(s, inst, lo, hi, data, m)
        })
    }
    fn s_load(&mut self, lo: Value, hi: Value, dwords: u32) -> Result<Vec<Value>, ExecError> {
        if self.fb().is_none() || !self.may_record() {
            return Ok(self
                .call_mem(Op::SLoad { dwords }, &[], &[lo, hi], &[], 0, dwords as usize)
                .1);
        }
        // inside the allocation this site's last interpreted scalar load read: straight from host memory
        let ctx = self.ctx;
        let observed = self.observed;
        let slot = scalar_window_slot(self.site.as_ref().expect("emitting").offset);
        let (fast, join, rel, addr, wins) = {
            let b = self.b.as_deref_mut().expect("emitting");
            let (lo64, hi64) = (b.ins().uextend(types::I64, lo), b.ins().uextend(types::I64, hi));
            let hi64 = b.ins().ishl_imm(hi64, 32);
            let addr = b.ins().bor(hi64, lo64);
            let addr = b.ins().band_imm(addr, !3);
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, scalar_window_field(slot, 0));
            let len = b.ins().load(types::I64, trusted(), wins, scalar_window_field(slot, 1));
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
            (fast, join, rel, addr, wins)
        };
        let slow_out = self
            .call_mem(Op::SLoad { dwords }, &[], &[lo, hi], &[], 0, dwords as usize)
            .1;
        let b = self.b.as_deref_mut().expect("emitting");
        let args: Vec<_> = slow_out.iter().map(|x| (*x).into()).collect();
        b.ins().jump(join, &args);
        b.switch_to_block(fast);
        b.seal_block(fast);
        if observed {
            // the wave's one scalar access, as lane 0 of a record
            let at = record_slot(b, ctx);
            let a_lo = b.ins().ireduce(types::I32, addr);
            let a_hi = b.ins().ushr_imm(addr, 32);
            let a_hi = b.ins().ireduce(types::I32, a_hi);
            b.ins().store(trusted(), a_lo, at, Ctx::RECS + AccessRecord::LO);
            b.ins().store(trusted(), a_hi, at, Ctx::RECS + AccessRecord::HI);
            let one = b.ins().iconst(types::I64, 1);
            record_fields(b, ctx, at, one, 0, AccessRecord::desc(REC_SCALAR, false, 4 * dwords));
        }
        let host = b.ins().load(types::I64, trusted(), wins, scalar_window_field(slot, 2));
        let p = b.ins().iadd(host, rel);
        let words: Vec<_> = (0..dwords)
            .map(|d| b.ins().load(types::I32, MemFlags::new(), p, 4 * d as i32).into())
            .collect();
        b.ins().jump(join, &words);
        b.switch_to_block(join);
        b.seal_block(join);
        Ok(b.block_params(join).to_vec())
    }
    fn s_load_part(&mut self, lo: Value, hi: Value, dwords: u32, valid: Value) -> Result<Vec<Value>, ExecError> {
        Ok(self
            .call_mem(Op::SLoadPart { dwords }, &[], &[lo, hi, valid], &[], 0, dwords as usize)
            .1)
    }
    fn s_store(&mut self, lo: Value, hi: Value, data: &[Value], valid: Value) -> Result<(), ExecError> {
        let ins: Vec<Value> = [lo, hi]
            .into_iter()
            .chain(data.iter().copied())
            .chain([valid])
            .collect();
        self.call_mem(Op::SStore { n: data.len() as u32 }, &[], &ins, &[], 0, 0);
        Ok(())
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
        // compare-and-swap passes its compare values, the others as many copies of the data (unused)
        let cmp = if cmp.len() == data.len() { cmp } else { data };
        let ins: Vec<Value> = [lo, hi]
            .into_iter()
            .chain(data.iter().copied())
            .chain(cmp.iter().copied())
            .chain([valid])
            .collect();
        Ok(self
            .call_mem(
                Op::SAtomic {
                    op,
                    n: data.len() as u32,
                },
                &[],
                &ins,
                &[],
                0,
                data.len(),
            )
            .1)
    }
    fn v_load(&mut self, lo: Vv, hi: Vv, offset: i64, dwords: u32, m: Value) -> Result<Vec<Vv>, ExecError> {
        Ok(self.global_inline(lo, hi, offset, 4 * dwords, false, m, None, Op::VLoad { offset, dwords }))
    }
    fn v_store(&mut self, lo: Vv, hi: Vv, offset: i64, data: &[Vv], m: Value) -> Result<(), ExecError> {
        self.global_inline(
            lo,
            hi,
            offset,
            4 * data.len() as u32,
            false,
            m,
            Some(data),
            Op::VStore {
                offset,
                n: data.len() as u32,
            },
        );
        Ok(())
    }
}
