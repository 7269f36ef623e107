//! The backend's types: the whole-wave vector [`Vv`] and the lazy vectors it may name ([`Lazy`]), reads of
//! memory left lazy ([`ReadAt`]), and [`JitBackend`] itself — how it is made for an instruction, and how the
//! instruction's code ends.

use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

use crate::backend::calls::CallSite;
use crate::backend::ir::{dummy, trusted};
use crate::backend::regcache::RegCache;
use crate::ctx::Ctx;

pub(super) const CHUNKS: usize = 16;

pub(super) const I32X4: Type = types::I32X4;

pub(super) const F32X4: Type = types::F32X4;

/// A whole-wave vector: sixteen `i32x4` chunks, and the scalar it was splat from (lets shifts by a uniform
/// amount use a scalar shift). Register reads and chunk-wise operations are *lazy* (`lazy` names them in
/// `JitBackend::lazies`): nothing is emitted until a consumer asks for chunk i ([`JitBackend::ch`]), which
/// then loads and computes just that chunk — so a register write computes and stores chunk by chunk, and no
/// value stays live (and spilled) across the instruction: x86 has sixteen vector registers, and one wave
/// vector would take all of them.
#[derive(Clone, Copy)]
pub struct Vv {
    pub(super) c: [Value; CHUNKS],
    pub(super) uniform: Option<Value>,
    pub(super) lazy: Option<u32>,
}

/// A chunk-wise operation: chunk i of the result from chunk i of each argument.
pub(super) type ChunkFn<'f> = std::rc::Rc<dyn Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value>;

/// A lazy vector.
pub(super) enum Lazy<'f> {
    /// A register read: loaded where used, from the register file or — once a write to the same register in
    /// this instruction made the instruction keep a copy — from the copy (`kept`, a slot of `Ctx::keep`), or
    /// from SSA values when all keep slots are taken (`loaded`).
    Reg {
        field: i32,
        reg: u32,
        kept: Option<usize>,
        loaded: Option<[Value; CHUNKS]>,
    },
    /// `f` over the chunks of `args`; with `nan` sources, the NaN rule ([`emu_core::rules::propagate_nan32`]) applies to
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
    /// [`crate::ctx::MASK_TABLE`].
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
pub(super) struct ReadAt {
    pub(super) addr: Vv,
    pub(super) offset: i64,
    pub(super) base: Value,
    pub(super) lim: Value,
    pub(super) seq: Value,
    pub(super) same: Value,
    pub(super) quick: Value,
    pub(super) slot: usize,
    pub(super) bytes: u32,
    pub(super) signed: bool,
    /// Whether the quick path takes lanes in any order (global reads); LDS reads are quick only when every
    /// chunk is consecutive or one dword.
    pub(super) gather: bool,
}

/// Emits one instruction at a time into the block's function (whether it can is the [`super::Probe`]'s to say,
/// first).
pub struct JitBackend<'a, 'f> {
    pub(super) b: &'a mut FunctionBuilder<'f>,
    pub(super) cache: &'a mut RegCache<'f>,
    pub(super) site: CallSite<'a>,
    pub(super) ctx: Value,
    /// The first operation this backend met that it cannot emit, if any: one the probe refuses, so never in an
    /// instruction the probe accepted. The block's function is then dropped (its code goes on with placeholder
    /// values from there).
    pub unsupported: Option<&'static str>,
    /// The block reports its instructions to an observer: compiled memory accesses leave records of their
    /// lanes' addresses in the context ([`crate::ctx::AccessRecord`]; interpreter calls record their own), and
    /// reads are not deferred past the instruction.
    pub observed: bool,
    /// The lane mask this instruction's add or subtract with carry writes is dead ([`crate::compile::carry_out_dead`]):
    /// it is written as 0, its carries not worked out.
    pub carry_dead: bool,
    /// Access records this instruction's code may leave (one per compiled access site).
    pub(super) records: usize,
    /// Highest VGPR / AGPR index touched (+1), so the caller can size the register files.
    pub vgprs_used: u32,
    pub agprs_used: u32,
    /// The lazy vectors of this instruction ([`Vv::lazy`]).
    pub(super) lazies: Vec<Lazy<'f>>,
    /// Keep slots of the context this instruction has used.
    pub(super) kept: usize,
    /// Tmp slots of the context this instruction has used.
    pub(super) tmps: usize,
    /// Vector register writes this instruction has emitted.
    pub(super) stores: u32,
    /// The VGPR and AGPR file bases, loaded once at the start of the instruction (they dominate every use in
    /// it; a block's register files do not move while it runs).
    pub(super) file_base: (Value, Value),
    /// Where a guard's interpreter path rejoins ([`emu_core::sem::Backend::uniform_bit`]): the end of the instruction, which
    /// [`JitBackend::finish`] places.
    pub(super) guard_end: Option<cranelift_codegen::ir::Block>,
    /// The chunks already computed in the chunk computation under way ([`JitBackend::chunk`]), by lazy vector
    /// and NaN rule: a value that feeds several others (as an operand and as a NaN source, or through several
    /// pending writes) is computed once.
    pub(super) chunk_memo: Option<std::collections::HashMap<(u32, bool), Value>>,
    /// The interpreter runs this whole instruction on some path (a guard's, a NaN redo's): it may have written
    /// any register, EXEC too.
    pub(super) interpreted: bool,
    /// The lanes of the constant vectors made in the block so far (the block's cache keeps them between
    /// instructions): a lane permute through one is resolved at compile time, and ops on them are folded.
    pub(super) consts: Vec<([Value; CHUNKS], [u32; 64])>,
}

impl<'a, 'f> JitBackend<'a, 'f> {
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
            b,
            cache,
            site,
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
            file_base: (v, a),
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
            self.cache.sgpr_halves.clear();
        }
        if let Some(end) = self.guard_end.take() {
            let b = &mut *self.b;
            b.ins().jump(end, &[]);
            b.switch_to_block(end);
            b.seal_block(end);
        }
        self.cache.lazies = std::mem::take(&mut self.lazies);
        self.cache.consts = std::mem::take(&mut self.consts);
    }

    /// EXEC may change here: later instructions load it again.
    pub(super) fn forget_exec(&mut self) {
        self.cache.exec = None;
    }

    /// Records that `what` cannot be emitted (the probe refuses it: the instruction goes to the interpreter).
    pub(super) fn no(&mut self, what: &'static str) {
        if self.unsupported.is_none() {
            self.unsupported = Some(what);
        }
    }

    /// A placeholder vector (no code), for what is not emitted.
    pub(super) fn dv(&self) -> Vv {
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: None,
        }
    }
}
