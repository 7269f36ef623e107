//! Backend operations the JIT does not emit inline are *calls into the interpreter's implementation of the same
//! `Backend` method*: compiled code spills the operands into slots of the [`Ctx`], calls [`wave_call`] with a
//! description of the operation, and reloads the results. So memory accesses, 64-bit lanes, per-lane helper
//! functions, cross-lane moves and MFMA compute exactly what the interpreter computes — memory through the same
//! checked path, with identical fault reports — while the rest of the instruction is compiled.

use emu_core::interp::Interp;
use emu_core::sem::calls::{run_call, Inputs, Outputs};
use emu_core::sem::ExecError;
use emu_core::wave::{BufferWindow, Lanes};
use isa_amdgpu::{disasm, Inst};

use crate::ctx::{Ctx, Env, SLOTS};

/// One interpreter operation, with its static arguments: the list in [`emu_core::sem::calls`]. Vector operands
/// arrive in `ctx.v[..]` in order, scalars in `ctx.s[..]`, masks in `ctx.m[..]`; results leave the same way
/// (from slot 0).
pub use emu_core::sem::calls::CallOp as Op;

/// A call site: the operation and the instruction it belongs to (for fault reports).
pub struct Call {
    pub op: Op,
    pub inst: *const Inst,
    /// The instruction's offset from the code base (its PC is `ctx.code_base + offset`).
    pub offset: u64,
    /// Vector operands in the slots (only these are copied out).
    pub vectors_in: usize,
}

// SAFETY: `inst` points into the owning Block's immutable instruction slice, which lives (unmoved) as long as
// the Call; sharing a read-only pointer to it across threads is sound.
unsafe impl Send for Call {}
// SAFETY: as above; nothing mutates through it.
unsafe impl Sync for Call {}

/// Status of [`wave_call`]: 0 done, otherwise the block stops with this status (fault).
pub type WaveCall = unsafe extern "C" fn(ctx: *mut Ctx, call: *const Call) -> u32;

thread_local! {
    /// [`wave_call`]'s operand buffer, taken and given back by each call.
    static OPERANDS: std::cell::Cell<Vec<Lanes>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Runs `call` on the interpreter's backend over the context's slots. Compiled blocks call it; nothing else does.
///
/// # Safety
///
/// `ctx` is the running block's context, exclusively the callee's until it returns, whose `env` points to the
/// runner's live [`Env`] (with its wave and LDS, which nothing else touches meanwhile) and whose register and
/// window pointers are that wave's. `call` points to a [`Call`] the block owns, whose `inst` points into the
/// block's instructions.
pub(crate) unsafe extern "C" fn wave_call(ctx: *mut Ctx, call: *const Call) -> u32 {
    let run = || -> u32 {
        // SAFETY: the caller passes the runner's live Ctx and a Call owned by its Block.
        let (ctx, call) = unsafe { (&mut *ctx, &*call) };
        // SAFETY: the Env behind the Ctx is the runner's, which waits for the block to return.
        let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
        // SAFETY: the wave and the LDS are the runner's, untouched by it while the block runs.
        let (wave, lds) = unsafe { (&mut *env.wave, &mut *env.lds) };
        // SAFETY: the instruction lives in the block's own slice.
        let inst = unsafe { &*call.inst };
        if is_memory(&call.op) {
            env.checked_accesses += 1;
        }
        let mem = env.mem;
        // accesses compiled code made earlier in the instruction come first
        ctx.take_records(wave, env.access_log());
        let log = env.access_log().map(|v| v as *mut Vec<emu_core::observe::LaneAccess>);
        // SAFETY: the log is the Env's own vector, not otherwise touched until this call returns.
        let accesses = log.map(|p| unsafe { &mut *p });
        let mut b = Interp {
            wave,
            mem,
            lds,
            mnemonic: inst.info.name,
            accesses,
        };
        let b = &mut b;
        // the operands, copied out of the slots the results go to, into this thread's reused buffer (this runs
        // for every interpreter call of compiled code: a fresh heap copy cost more than most operations)
        let mut buffer = OPERANDS.with(|b| b.take());
        buffer.clear();
        buffer.extend_from_slice(&ctx.v[..call.vectors_in]);
        let v: &[Lanes] = &buffer;
        let (s, m) = (ctx.s, ctx.m);
        let inputs = Inputs::new(v, &s, &m, inst, ctx.code_base + call.offset);
        let mut outputs = Outputs {
            v: &mut ctx.v,
            s: &mut ctx.s,
            m: &mut ctx.m,
        };
        let r: Result<(), ExecError> = run_call(b, &call.op, &inputs, &mut outputs);
        // hand back pointers derived from the wave and LDS as borrowed here (they stay where they are)
        // SAFETY: as above; nothing else holds the wave or the LDS while the block runs.
        let (wave, lds) = unsafe { (&mut *env.wave, &mut *env.lds) };
        wave.slack.locate(ctx.code_base + call.offset, || disasm::text(inst));
        ctx.sgprs = wave.sgprs.as_mut_ptr();
        ctx.vgprs = wave.vgprs.as_mut_ptr();
        ctx.agprs = wave.agprs.as_mut_ptr();
        ctx.windows = wave.windows_mut();
        ctx.lds_ptr = lds.as_mut_ptr();
        if r.is_ok() {
            if let Op::SLoad { .. } = call.op {
                // remember the allocation for this site's compiled scalar loads
                let addr = ((s[1] as u64) << 32 | s[0] as u64) & !3;
                // (pinned host memory, which readable_at leaves out, has its bytes where direct_at says)
                if let Some((start, len, host)) = env.mem.readable_at(addr).or_else(|| env.mem.direct_at(addr)) {
                    // SAFETY: `windows` points at the running wave's window tables, which the block call leaves
                    // to compiled code and this helper
                    let table = unsafe { &mut (*ctx.windows).scalar };
                    let found = BufferWindow {
                        start,
                        len,
                        host: host as usize,
                    };
                    table[crate::ctx::scalar_window_slot(call.offset)] = found;
                    wave.windows_found = true;
                    // slots no site has filled yet take it too (see the vector windows below)
                    for w in table.iter_mut().filter(|w| w.len == 0) {
                        *w = found;
                    }
                }
            }
            if let Op::VLoad { .. } | Op::VStore { .. } | Op::VLoadNarrow { .. } | Op::VStoreNarrow { .. } = call.op {
                // remember the buffer of the first active lane for this site's compiled fast path
                if m[0] != 0 {
                    let l = m[0].trailing_zeros() as usize;
                    let addr = (v[1][l] as u64) << 32 | v[0][l] as u64;
                    if let Some((start, len, host)) =
                        env.mem.direct_at(addr).or_else(|| own_private(env.mem, wave, addr))
                    {
                        // the fast path compares high halves: the window is the part of the buffer in the lane's
                        // 4 GiB half (a buffer crossing a boundary gets the half its lanes are in now)
                        let half = addr & !0xffff_ffff;
                        let (from, to) = (start.max(half), (start + len).min(half.saturating_add(1 << 32)));
                        let host = host as usize + (from - start) as usize;
                        // SAFETY: `windows` points at the running wave's window table, which the block call
                        // leaves to compiled code and this helper
                        let table = unsafe { &mut (*ctx.windows).vector };
                        let found = BufferWindow {
                            start: from,
                            len: to - from,
                            host,
                        };
                        table[crate::ctx::window_slot(call.offset)] = found;
                        wave.windows_found = true;
                        // slots no site has filled yet take it too: straight-line code (each site reached once by
                        // a wave) mostly goes on in the memory it is in
                        for w in table.iter_mut().filter(|w| w.len == 0) {
                            *w = found;
                        }
                    }
                }
            }
        }
        OPERANDS.with(|b| b.set(buffer));
        match r {
            Ok(()) => 0,
            Err(e) => {
                // SAFETY: as above; the interpreter backend is done with the wave and the log.
                let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
                env.error = Some((ctx.code_base + call.offset, disasm::text(inst), e));
                crate::compile::FAULT
            }
        }
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(crate::compile::INTERNAL)
}

/// Whether `op` is a memory access (what [`crate::JitStats::checked_accesses`] counts).
fn is_memory(op: &Op) -> bool {
    use Op::*;
    matches!(
        op,
        VLoad { .. }
            | VStore { .. }
            | VLoadNarrow { .. }
            | VStoreNarrow { .. }
            | VAtomic { .. }
            | VAtomic64 { .. }
            | CmpSwap { .. }
            | LdsRead { .. }
            | LdsWrite { .. }
            | LdsReadNarrow { .. }
            | LdsWriteNarrow { .. }
            | LdsAtomic { .. }
            | LdsAtomic64 { .. }
            | LdsAtomic2 { .. }
            | SLoad { .. }
            | SLoadPart { .. }
            | SStore { .. }
            | SAtomic { .. }
    )
}

/// The wave's own private segment (its 64 lanes' scratch, which lives as long as the wave) as a window, when
/// `addr` lies in it: (start address, length, host pointer to its first byte). The semantics check each lane's
/// private access against its own part before it reaches memory, so compiled code may read and write the
/// segment directly; another workgroup's scratch stays on the checked path.
fn own_private(
    mem: &emu_core::memory::DeviceMemory,
    wave: &emu_core::wave::WaveState,
    addr: u64,
) -> Option<(u64, u64, *mut u8)> {
    let bytes = wave.private_bytes();
    if bytes == 0 || addr.wrapping_sub(wave.scratch_base) >= bytes {
        return None;
    }
    let (start, len, host) = mem.kind_at(addr, emu_core::memory::AllocKind::Scratch)?;
    let from = wave.scratch_base.max(start);
    let to = (wave.scratch_base + bytes).min(start + len);
    // SAFETY: `from` lies inside the allocation that starts at `start`, whose bytes begin at `host`.
    (from < to).then(|| (from, to - from, unsafe { host.add((from - start) as usize) }))
}

/// An MFMA ([`Op::Mfma`] in `call`) over operands read straight from the register files: A at `a`, B at `b`, C
/// at `c` (each the first of a run of registers as long as the shape needs); D goes to the first vector slots.
/// The arithmetic is [`emu_core::sem::mfma_lanes`], the interpreter's. Compiled blocks call it; nothing else does.
///
/// # Safety
///
/// `ctx` is the running block's context, exclusively the callee's until it returns; `call` points to a
/// [`Call`] the block owns, an [`Op::Mfma`]; `a`, `b` and `c` point to runs of as many readable registers as
/// the shape's A, B and C operands take (`a_regs`, `b_regs`, `c_regs`), none of them in the context.
pub(crate) unsafe extern "C" fn mfma_registers(
    ctx: *mut Ctx,
    call: *const Call,
    a: *const Lanes,
    b: *const Lanes,
    c: *const Lanes,
) {
    // SAFETY: the caller passes its context, a call record its block keeps alive, and the addresses of
    // register runs it checked against the register files (sized for every register the block names).
    let (ctx, call) = unsafe { (&mut *ctx, &*call) };
    let Op::Mfma { shape } = call.op else {
        unreachable!("an MFMA call record")
    };
    let (na, nb, nc) = (shape.a_regs(), shape.b_regs(), shape.c_regs());
    // SAFETY: as above: runs of na, nb and nc registers.
    let (a, b, c) = unsafe {
        (
            std::slice::from_raw_parts(a, na),
            std::slice::from_raw_parts(b, nb),
            std::slice::from_raw_parts(c, nc),
        )
    };
    let d = emu_core::sem::mfma_lanes(shape, a, b, c);
    ctx.v[..d.len()].copy_from_slice(&d);
}

/// Whether an operation's operands fit the context's slots.
pub fn fits(vectors_in: usize, vectors_out: usize) -> bool {
    vectors_in <= SLOTS && vectors_out <= SLOTS
}
