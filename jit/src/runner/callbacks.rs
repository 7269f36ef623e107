//! What compiled blocks call back into the runner for: an instruction they leave to the interpreter, and the
//! report of an instruction to the observer.

use emu_core::interp::Interp;
use emu_core::observe::{Accesses, InstEvent};
use emu_core::sem::{execute, Flow, Stop};
use isa_amdgpu::{disasm, Inst};

use crate::compile::{self, BARRIER, CONTINUE, END, FAULT};
use crate::ctx::{Ctx, Env};

/// Executes one instruction on the interpreter for a compiled block (see [`compile::InterpretOne`]).
pub(super) extern "C" fn interpret_one(ctx: *mut Ctx, inst: *const Inst, offset: u64) -> u32 {
    let run = || {
        // SAFETY: compiled blocks pass the Ctx the runner gave them, whose env is the runner's live Env, and
        // a pointer into the block's own instruction slice; the runner does not touch the wave meanwhile.
        let (ctx, inst) = unsafe { (&mut *ctx, &*inst) };
        let pc = ctx.code_base + offset;
        // SAFETY: as above: `env` outlives the call and nothing else accesses it meanwhile.
        let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
        if let Some(o) = env.observer {
            // the batches before it first
            ctx.report_batches(o, env.workgroup, env.wave_index);
        }
        // SAFETY: the wave and the LDS behind `env` are the runner's, untouched by it during the block.
        let (wave, lds) = unsafe { (&mut *env.wave, &mut *env.lds) };
        wave.scc = ctx.scc != 0;
        let issue_exec = wave.exec();
        let mem = env.mem;
        ctx.take_records(wave, env.access_log());
        let log = env.access_log().map(|v| v as *mut Vec<emu_core::observe::LaneAccess>);
        // the log is the Env's own vector, untouched elsewhere while the interpreter runs
        let r = {
            // SAFETY: as above.
            let accesses = log.map(|p| unsafe { &mut *p });
            let mut b = Interp {
                wave,
                mem,
                lds,
                mnemonic: inst.info.name,
                accesses,
            };
            execute(&mut b, inst, pc)
        };
        env.fallbacks += 1;
        let switch = match (&r, env.observer) {
            (Ok(_), Some(o)) => {
                let ev = InstEvent {
                    workgroup: env.workgroup,
                    wave: env.wave_index,
                    pc,
                    inst,
                    exec: issue_exec,
                    accesses: Accesses::of(&env.accesses),
                };
                o.instruction(&ev);
                let s = o.switch_wave(&ev);
                env.accesses.clear();
                s
            }
            _ => false,
        };
        if switch {
            ctx.switch = 1;
        }
        // the interpreter may have grown the register files: hand back fresh pointers
        // SAFETY: the interpreter backend is gone; the wave is reached only through the Env until we return.
        let wave = unsafe { &mut *env.wave };
        wave.slack.locate(pc, || disasm::text(inst));
        ctx.sgprs = wave.sgprs.as_mut_ptr();
        ctx.vgprs = wave.vgprs.as_mut_ptr();
        ctx.agprs = wave.agprs.as_mut_ptr();
        ctx.windows = wave.windows_mut();
        ctx.scc = wave.scc as u32;
        if r.is_ok() {
            ctx.pass |= emu_core::sem::pass_bits(inst);
        }
        match r {
            Ok(Flow::Next) if !switch => 0,
            Ok(flow) => {
                let (next, stop) = flow.next_pc(pc, inst.size() as u64);
                ctx.next_pc = next;
                match (stop, flow) {
                    (Stop::Barrier, _) => BARRIER,
                    (Stop::End, _) => END,
                    (Stop::Running, Flow::Next) => compile::SWITCH,
                    // as the interpreter's turn ends going back round a polling loop
                    (Stop::Running, _)
                        if next <= pc && emu_core::sem::goes_back(&mut ctx.pass) && ctx.poll_ends != 0 =>
                    {
                        compile::POLL
                    }
                    (Stop::Running, _) => CONTINUE,
                }
            }
            Err(e) => {
                env.error = Some((pc, disasm::text(inst), e));
                FAULT
            }
        }
    };
    // a panic must not unwind into generated code
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(compile::INTERNAL)
}

/// Reports a compiled instruction, or without one the pending batch, to the observer of an observed block (see
/// [`compile::Observe`]).
pub(super) extern "C" fn observe(ctx: *mut Ctx, inst: *const Inst, offset: u64) -> u32 {
    let run = || {
        // SAFETY: called by an observed block with the runner's Ctx.
        let ctx = unsafe { &mut *ctx };
        // SAFETY: the Env outlives the block call and nothing else touches it meanwhile.
        let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
        let Some(o) = env.observer else { return 0 };
        if inst.is_null() {
            ctx.take_batch(o, env.workgroup, env.wave_index);
            return 0;
        }
        ctx.report_batches(o, env.workgroup, env.wave_index);
        // SAFETY: not null: an instruction of the block.
        let inst = unsafe { &*inst };
        let (workgroup, wave) = (env.workgroup, env.wave_index);
        // SAFETY: the wave behind the Env is the runner's, untouched by it while the block runs.
        let accesses = ctx.take_accesses(unsafe { &*env.wave }, env.access_log());
        let ev = InstEvent {
            workgroup,
            wave,
            pc: ctx.code_base + offset,
            inst,
            exec: ctx.issue_exec,
            accesses,
        };
        if o.instruction_then_switch(&ev) {
            ctx.switch = 1;
        }
        drop(ev);
        env.accesses.clear();
        0
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(compile::INTERNAL)
}
