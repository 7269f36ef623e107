//! Backend operations the JIT does not emit inline are *calls into the interpreter's implementation of the same
//! `Backend` method*: compiled code spills the operands into slots of the [`Ctx`], calls [`wave_call`] with a
//! description of the operation, and reloads the results. So memory accesses, 64-bit lanes, per-lane helper
//! functions, cross-lane moves and MFMA compute exactly what the interpreter computes — memory through the same
//! checked path, with identical fault reports — while the rest of the instruction is compiled.

use emu_core::interp::Interp;
use emu_core::lanefn::LaneFn;
use emu_core::sem::{AtomicOp, Backend, Compare, ExecError, Mfma, VCvt, VOp, VOp64, VUn, VUn64};
use emu_core::wave::Lanes;
use isa_amdgpu::{disasm, Inst};

use crate::ctx::{Ctx, Env, SLOTS};

/// One interpreter operation, with its static arguments. Vector operands arrive in `ctx.v[..]` in order,
/// scalars in `ctx.s[..]`, masks in `ctx.m[..]`; results leave the same way (from slot 0).
#[derive(Debug, Clone)]
pub enum Op {
    VOp(VOp),
    VUn(VUn),
    VCmp(Compare),
    VOp64(VOp64),
    VUn64(VUn64),
    FmaF64,
    /// The interpreter's NaN rule applied to f64 results (inputs: the `sources` operand pairs, then the
    /// result pair): a NaN source (first first) wins, quieted.
    Nan64 { sources: u8 },
    Cvt(VCvt),
    Cmp64(Compare),
    Mad64 { signed: bool },
    Shl64,
    LaneFn(LaneFn),
    SLaneFn(LaneFn),
    Permute,
    LaneRead,
    FirstLane,
    Mfma(Mfma),
    Scratch,
    FailIfAny(ExecError),
    VLoad { offset: i64, dwords: u32 },
    VStore { offset: i64, n: u32 },
    VLoadNarrow { offset: i64, bytes: u32, signed: bool },
    VStoreNarrow { offset: i64, bytes: u32 },
    VAtomic { op: AtomicOp, offset: i64 },
    VAtomic64 { op: AtomicOp, offset: i64 },
    CmpSwap { offset: i64, n: u32 },
    LdsRead { offset: u32, dwords: u32 },
    LdsWrite { offset: u32, n: u32 },
    LdsReadNarrow { offset: u32, bytes: u32, signed: bool },
    LdsWriteNarrow { offset: u32, bytes: u32 },
    LdsAtomic { op: AtomicOp, offset: u32 },
    LdsAtomic64 { op: AtomicOp, offset: u32 },
    LdsCmpst { offset: u32, n: u32 },
    SLoad { dwords: u32 },
}

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
pub type WaveCall = extern "C" fn(ctx: *mut Ctx, call: *const Call) -> u32;

thread_local! {
    /// [`wave_call`]'s operand buffer, taken and given back by each call.
    static OPERANDS: std::cell::Cell<Vec<Lanes>> = const { std::cell::Cell::new(Vec::new()) };
}

fn pair(v: &[Lanes], i: usize) -> (Lanes, Lanes) {
    (v[i], v[i + 1])
}

/// Runs `call` on the interpreter's backend over the context's slots.
pub(crate) extern "C" fn wave_call(ctx: *mut Ctx, call: *const Call) -> u32 {
    let run = || -> u32 {
        // SAFETY: compiled code passes the runner's live Ctx and a Call owned by its Block.
        let (ctx, call) = unsafe { (&mut *ctx, &*call) };
        // SAFETY: the Env behind the Ctx is the runner's, which waits for the block to return.
        let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
        // SAFETY: the wave and the LDS are the runner's, untouched by it while the block runs.
        let (wave, lds) = unsafe { (&mut *env.wave, &mut *env.lds) };
        // SAFETY: the instruction lives in the block's own slice.
        let inst = unsafe { &*call.inst };
        let mem = env.mem;
        let log = env.access_log().map(|v| v as *mut Vec<emu_core::observe::LaneAccess>);
        // SAFETY: the log is the Env's own vector, not otherwise touched until this call returns.
        let mut b = Interp { wave, mem, lds, mnemonic: inst.info.name, accesses: log.map(|p| unsafe { &mut *p }) };
        let b = &mut b;
        // the operands, copied out of the slots the results go to, into this thread's reused buffer (this runs
        // for every interpreter call of compiled code: a fresh heap copy cost more than most operations)
        let mut buffer = OPERANDS.with(|b| b.take());
        buffer.clear();
        buffer.extend_from_slice(&ctx.v[..call.vectors_in]);
        let v: &[Lanes] = &buffer;
        let (s, m) = (ctx.s, ctx.m);
        let r: Result<(), ExecError> = (|| {
            match &call.op {
                Op::VOp(op) => ctx.v[0] = b.v_op(*op, v[0], v[1]),
                Op::VUn(op) => ctx.v[0] = b.v_un(*op, v[0]),
                Op::VCmp(op) => ctx.m[0] = b.v_cmp(*op, v[0], v[1]),
                Op::VOp64(op) => (ctx.v[0], ctx.v[1]) = b.v_op64(*op, pair(v, 0), pair(v, 2)),
                Op::VUn64(op) => (ctx.v[0], ctx.v[1]) = b.v_un64(*op, pair(v, 0)),
                Op::FmaF64 => (ctx.v[0], ctx.v[1]) = b.v_fma_f64(pair(v, 0), pair(v, 2), pair(v, 4)),
                Op::Cvt(op) => (ctx.v[0], ctx.v[1]) = b.v_cvt(*op, pair(v, 0)),
                Op::Nan64 { sources } => {
                    let n = *sources as usize;
                    let (mut lo, mut hi) = pair(v, 2 * n);
                    for l in 0..64 {
                        let w = |k: usize| (v[2 * k + 1][l] as u64) << 32 | v[2 * k][l] as u64;
                        let nan = |x: u64| x & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000;
                        // fma checks c first, then a, b; so the first of a, b, c that is NaN wins
                        if let Some(k) = (0..n).find(|&k| nan(w(k))) {
                            let q = w(k) | 1 << 51;
                            (lo[l], hi[l]) = (q as u32, (q >> 32) as u32);
                        }
                    }
                    (ctx.v[0], ctx.v[1]) = (lo, hi);
                }
                Op::Cmp64(op) => ctx.m[0] = b.v_cmp64(*op, pair(v, 0), pair(v, 2)),
                Op::Mad64 { signed } => {
                    let ((lo, hi), c) = b.v_mad_u64_u32(v[0], v[1], pair(v, 2), *signed);
                    (ctx.v[0], ctx.v[1], ctx.m[0]) = (lo, hi, c);
                }
                Op::Shl64 => (ctx.v[0], ctx.v[1]) = b.v_shl64(v[0], v[1], v[2]),
                Op::LaneFn(f) => {
                    let out = b.v_lanefn(*f, v);
                    ctx.v[..out.len()].copy_from_slice(&out);
                }
                Op::SLaneFn(f) => {
                    let out = b.s_lanefn(*f, &s[..f.inputs()]);
                    ctx.s[..out.len()].copy_from_slice(&out);
                }
                Op::Permute => ctx.v[0] = b.v_permute(v[0], v[1], m[0]),
                Op::LaneRead => ctx.s[0] = b.v_lane_read(v[0], s[0]),
                Op::FirstLane => ctx.s[0] = b.v_first_lane(v[0], m[0]),
                Op::Mfma(shape) => {
                    let (na, nc) = (shape.src_regs(), shape.acc_regs());
                    let out = b.v_mfma(*shape, &v[..na], &v[na..2 * na], &v[2 * na..2 * na + nc]);
                    ctx.v[..out.len()].copy_from_slice(&out);
                }
                Op::Scratch => (ctx.s[0], ctx.s[1], ctx.s[2]) = b.scratch(),
                Op::FailIfAny(e) => b.fail_if_any(m[0], e.clone())?,
                Op::VLoad { offset, dwords } => {
                    let out = b.v_load(v[0], v[1], *offset, *dwords, m[0])?;
                    ctx.v[..out.len()].copy_from_slice(&out);
                }
                Op::VStore { offset, n } => b.v_store(v[0], v[1], *offset, &v[2..2 + *n as usize], m[0])?,
                Op::VLoadNarrow { offset, bytes, signed } => ctx.v[0] = b.v_load_narrow(v[0], v[1], *offset, *bytes, *signed, m[0])?,
                Op::VStoreNarrow { offset, bytes } => b.v_store_narrow(v[0], v[1], *offset, *bytes, v[2], m[0])?,
                Op::VAtomic { op, offset } => ctx.v[0] = b.v_atomic(*op, v[0], v[1], *offset, v[2], m[0])?,
                Op::VAtomic64 { op, offset } => (ctx.v[0], ctx.v[1]) = b.v_atomic64(*op, v[0], v[1], *offset, pair(v, 2), m[0])?,
                Op::CmpSwap { offset, n } => {
                    let n = *n as usize;
                    let out = b.v_atomic_cmpswap(v[0], v[1], *offset, &v[2..2 + n], &v[2 + n..2 + 2 * n], m[0])?;
                    ctx.v[..out.len()].copy_from_slice(&out);
                }
                Op::LdsRead { offset, dwords } => {
                    let out = b.lds_read(v[0], *offset, *dwords, m[0])?;
                    ctx.v[..out.len()].copy_from_slice(&out);
                }
                Op::LdsWrite { offset, n } => b.lds_write(v[0], *offset, &v[1..1 + *n as usize], m[0])?,
                Op::LdsReadNarrow { offset, bytes, signed } => ctx.v[0] = b.lds_read_narrow(v[0], *offset, *bytes, *signed, m[0])?,
                Op::LdsWriteNarrow { offset, bytes } => b.lds_write_narrow(v[0], *offset, *bytes, v[1], m[0])?,
                Op::LdsAtomic { op, offset } => ctx.v[0] = b.lds_atomic(*op, v[0], *offset, v[1], m[0])?,
                Op::LdsAtomic64 { op, offset } => (ctx.v[0], ctx.v[1]) = b.lds_atomic64(*op, v[0], *offset, pair(v, 1), m[0])?,
                Op::LdsCmpst { offset, n } => {
                    let n = *n as usize;
                    let out = b.lds_cmpst(v[0], *offset, &v[1..1 + n], &v[1 + n..1 + 2 * n], m[0])?;
                    ctx.v[..out.len()].copy_from_slice(&out);
                }
                Op::SLoad { dwords } => {
                    let out = b.s_load(s[0], s[1], *dwords)?;
                    ctx.s[..out.len()].copy_from_slice(&out);
                }
            }
            Ok(())
        })();
        // hand back pointers derived from the wave and LDS as borrowed here (they stay where they are)
        // SAFETY: as above; nothing else holds the wave or the LDS while the block runs.
        let (wave, lds) = unsafe { (&mut *env.wave, &mut *env.lds) };
        ctx.sgprs = wave.sgprs.as_mut_ptr();
        ctx.vgprs = wave.vgprs.as_mut_ptr();
        ctx.agprs = wave.agprs.as_mut_ptr();
        ctx.lds_ptr = lds.as_mut_ptr();
        if r.is_ok() {
            if let Op::SLoad { .. } = call.op {
                // remember the allocation for compiled scalar loads
                let addr = ((s[1] as u64) << 32 | s[0] as u64) & !3;
                if let Some((start, len, host)) = env.mem.readable_at(addr) {
                    (ctx.swin_start, ctx.swin_len, ctx.swin_host) = (start, len, host);
                }
            }
            if let Op::VLoad { .. } | Op::VStore { .. } | Op::VLoadNarrow { .. } | Op::VStoreNarrow { .. } = call.op {
                // remember the buffer of the first active lane for the compiled fast path
                if m[0] != 0 {
                    let l = m[0].trailing_zeros() as usize;
                    let addr = (v[1][l] as u64) << 32 | v[0][l] as u64;
                    if let Some((start, len, host)) = env.mem.buffer_at(addr) {
                        // the fast path compares high halves: the buffer must not cross a 4 GiB boundary
                        if start >> 32 == (start + len - 1) >> 32 {
                            (ctx.win_start, ctx.win_len, ctx.win_host) = (start, len, host);
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

/// Whether an operation's operands fit the context's slots.
pub fn fits(vectors_in: usize, vectors_out: usize) -> bool {
    vectors_in <= SLOTS && vectors_out <= SLOTS
}
