//! [`Jit`] as an `emu_core` [`WaveRunner`]: a wave's run from block to block, following each block's status,
//! interpreting where the tiers say so, crosschecking when asked, and handing the wave to the interpreter
//! near its instruction limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use emu_core::engine::{EngineError, Limits, WaveRun, WaveRunner};
use emu_core::observe::{InstEvent, Observer};
use emu_core::sem::ExecError;
use emu_core::wave::{WaveState, WaveStatus};

use crate::compile::{self, Observed, BARRIER, CONTINUE, END, FAULT};
use crate::ctx::{Ctx, Env};
use crate::JitError;

use super::crosscheck::{lockstep, lockstep_with_memory, CHECKED};
use super::tiers::Step;
use super::windows::{bequeath_windows, start_windows};
use super::{Jit, Slot};

thread_local! {
    /// The lane-access buffer of this thread's last observed wave run, kept for the next one (an observed run
    /// of one block at a time, as in timing mode, would otherwise grow a new one each time).
    static ACCESSES: std::cell::Cell<Vec<emu_core::observe::LaneAccess>> = const { std::cell::Cell::new(Vec::new()) };
}

/// An observer passed on unchanged that notes whether it asked for another wave (the interpreted tier runs a
/// block's worth of instructions, and a switch asked after the last of them must still end the wave's turn).
struct Noting<'o, O: Observer> {
    inner: &'o O,
    switched: AtomicBool,
}

impl<O: Observer> Observer for Noting<'_, O> {
    const ACTIVE: bool = O::ACTIVE;
    const WANTS_ACCESSES: bool = O::WANTS_ACCESSES;
    const BATCHES: bool = O::BATCHES;

    fn batch(&self, b: &emu_core::observe::InstBatch<'_>) {
        self.inner.batch(b);
    }

    fn event(&self, ev: &emu_core::observe::Event<'_>) {
        self.inner.event(ev);
    }

    fn instruction(&self, ev: &InstEvent<'_>) {
        self.inner.instruction(ev);
    }

    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool {
        let s = self.inner.switch_wave(ev);
        if s {
            self.switched.store(true, Ordering::Relaxed);
        }
        s
    }

    fn wave_end(&self, workgroup: [u32; 3], wave: u32, instructions: u64) {
        self.inner.wave_end(workgroup, wave, instructions);
    }
}

impl WaveRunner for Jit {
    fn run_wave<O: Observer>(&self, run: WaveRun<'_>, observer: &O) -> Result<(), EngineError> {
        let kernel = || run.cx.kernel.to_string();
        // a turn (cooperative launches): the wave returns, still running, once it has used it
        let turn_starts = run.wave.executed;
        let turn_ends = run
            .limits
            .slice
            .map_or(u64::MAX, |s| run.wave.executed.saturating_add(s));
        let wave_ptr: *mut WaveState = &mut *run.wave;
        let lds_ptr: *mut [u8] = &mut *run.lds;
        // an observed dispatch runs blocks that report every instruction (translated separately)
        let observed: Option<&dyn crate::ctx::DynObserver> = if O::ACTIVE { Some(observer) } else { None };
        let mode = match (O::ACTIVE, O::BATCHES) {
            (false, _) => Observed::No,
            (true, false) => Observed::Each,
            (true, true) => Observed::Batched,
        };
        let mut env = Env {
            mem: run.mem,
            wave: wave_ptr,
            lds: lds_ptr,
            error: None,
            fallbacks: 0,
            checked_accesses: 0,
            observer: observed,
            wants_accesses: O::ACTIVE && O::WANTS_ACCESSES,
            workgroup: run.workgroup,
            wave_index: run.wave_index,
            accesses: if O::WANTS_ACCESSES { ACCESSES.take() } else { Vec::new() },
        };
        let env_ptr: *mut Env<'_> = &mut env;
        // SAFETY: reached only through `wave_ptr` here and in the helpers the blocks call.
        let mut ctx = Ctx::reused(unsafe { &mut *wave_ptr }, env_ptr.cast(), 0);
        {
            // SAFETY: as above; no block is running yet.
            let wave = unsafe { &mut *wave_ptr };
            if wave.executed == 0 {
                start_windows(run.mem, wave);
                ctx.windows = wave.windows_mut();
            }
        }
        let mut near_limit = false;
        // the block being interpreted while it warms up: its slot, the PC it started at, the last piece's PC
        let mut warming: Option<(Arc<Slot>, u64, u64)> = None;
        let result = loop {
            // SAFETY: the wave is only reached through `wave_ptr` in this loop and in helper calls it makes.
            let wave = unsafe { &mut *wave_ptr };
            if wave.status != WaveStatus::Running || wave.executed >= turn_ends {
                break Ok(());
            }
            // blocks start at clock-reading instructions, so a turn that ends before one ends between blocks
            if run.limits.clock_ends_turn
                && wave.executed > turn_starts
                && run
                    .cache
                    .get(run.mem, run.code, wave.pc)
                    .is_ok_and(|i| emu_core::sem::reads_clock(&i))
            {
                break Ok(());
            }
            // a watched dispatch: what the wave did shows in its progress, and a stopped dispatch stops here
            if let Some(p) = run.cx.progress {
                if wave.executed - wave.reported >= emu_core::watch::CHUNK {
                    p.note(wave);
                }
                if p.stopped() {
                    break Err(EngineError::Stopped { kernel: kernel() });
                }
            }
            if wave.executed >= run.limits.max_wave_instructions {
                break Err(EngineError::Runaway {
                    kernel: kernel(),
                    workgroup: run.workgroup,
                    wave: run.wave_index,
                    limit: run.limits.max_wave_instructions,
                });
            }
            let block_pc = wave.pc;
            // a block still interpreted goes on piece by piece while the wave goes on forward inside it
            let going_on = warming.as_ref().and_then(|(s, start, last)| {
                let piece = if wave.pc > *last {
                    s.piece(wave.pc - start)
                } else {
                    None
                };
                piece.map(|n| Step::Interpret(n, Some(s.clone())))
            });
            // in VGPR index mode the interpreter runs the wave, one instruction at a time
            let (step, start) = match going_on {
                _ if wave.gpr_idx => (Ok(Step::Interpret(1, None)), wave.pc),
                Some(piece) => (Ok(piece), warming.as_ref().map_or(wave.pc, |w| w.1)),
                // a block met here starts here
                None => (self.step(&run, wave.pc, mode), wave.pc),
            };
            warming = match &step {
                Ok(Step::Interpret(_, Some(s))) => Some((s.clone(), start, wave.pc)),
                _ => None,
            };
            let block = match step {
                Ok(Step::Run(b)) => b,
                Ok(Step::Interpret(n, _)) => {
                    // not hot yet: the interpreter runs the block's instructions (fewer when the wave's turn
                    // ends first), stopping early at a barrier, the end, or when the observer switches waves
                    let n = n.min(turn_ends - wave.executed);
                    let before = wave.executed;
                    let interp = WaveRun {
                        mem: run.mem,
                        code: run.code,
                        cx: run.cx,
                        workgroup: run.workgroup,
                        wave_index: run.wave_index,
                        wave,
                        // SAFETY: no block is running; the LDS is reached only through this borrow meanwhile.
                        lds: unsafe { &mut *lds_ptr },
                        cache: run.cache,
                        limits: Limits {
                            slice: Some(n),
                            ..run.limits
                        },
                    };
                    let noting = Noting {
                        inner: observer,
                        switched: AtomicBool::new(false),
                    };
                    if let Err(e) = emu_core::engine::Interpreter.run_wave(interp, &noting) {
                        break Err(e);
                    }
                    // SAFETY: the interpreter has returned the wave.
                    let wave = unsafe { &*wave_ptr };
                    if wave.status == WaveStatus::Running
                        && (noting.switched.into_inner() || wave.polled || wave.executed - before < n)
                    {
                        // the observer asked for another wave (also after the last instruction of the run), or
                        // the wave went back round a polling loop (also at the last)
                        break Ok(());
                    }
                    continue;
                }
                Err(e) => break Err(e),
            };
            if run.limits.max_wave_instructions - wave.executed < block.len {
                // closer to the instruction limit than a block is long: the interpreter finishes the wave and
                // stops it exactly at the limit
                near_limit = true;
                break Ok(());
            }
            if wave.vgprs.len() < block.vgprs as usize {
                wave.vgprs.resize(block.vgprs as usize, [0; 64]);
            }
            if wave.agprs.len() < block.agprs as usize {
                wave.agprs.resize(block.agprs as usize, [0; 64]);
            }
            // crosscheck: the wave (and for a block that writes memory, device memory and LDS) as they were
            let checked = self.crosscheck && !O::ACTIVE && (block.write_free || run.limits.threads == Some(1));
            let before = if checked {
                let memory = if block.write_free {
                    None
                } else {
                    // SAFETY: nothing else touches the LDS between blocks.
                    let lds = unsafe { &*lds_ptr };
                    match run.mem.snapshot(CHECKED) {
                        Ok(b) => Some((b, lds.to_vec())),
                        Err(error) => {
                            let diff = JitError::Snapshot { error }.to_string();
                            break Err(EngineError::Crosscheck {
                                kernel: kernel(),
                                workgroup: run.workgroup,
                                wave: run.wave_index,
                                pc: block_pc,
                                diff,
                            });
                        }
                    }
                };
                Some((wave.clone(), memory))
            } else {
                None
            };
            let mut budget = run
                .limits
                .max_wave_instructions
                .min(turn_ends)
                .saturating_sub(wave.executed);
            if run.cx.progress.is_some() {
                // compiled loops come back to look at the dispatch's progress now and then
                budget = budget.min(emu_core::watch::CHUNK);
            }
            ctx.sgprs = wave.sgprs.as_mut_ptr();
            ctx.vgprs = wave.vgprs.as_mut_ptr();
            ctx.agprs = wave.agprs.as_mut_ptr();
            ctx.windows = wave.windows_mut();
            ctx.scc = wave.scc as u32;
            ctx.next_pc = wave.pc;
            ctx.executed = 0;
            (ctx.clock_now, ctx.clock_step) = crate::ctx::clock_of(wave);
            ctx.switch = 0;
            ctx.poll_ends = run.limits.poll_ends_turn as u32;
            ctx.pass = wave.pass;
            ctx.budget = budget;
            ctx.code_base = run.code.base;
            // SAFETY: the LDS outlives the wave's run; blocks access it only within lds_len.
            let lds = unsafe { &mut *lds_ptr };
            (ctx.lds_ptr, ctx.lds_len) = (lds.as_mut_ptr(), lds.len() as u64);
            let status = (block.func)(&mut *ctx);
            if let (Some(o), true) = (observed, ctx.batch_n != 0 || ctx.held.n != 0) {
                // the batches the block ended with, before what the status brings (the wave's end)
                ctx.report_batches(o, run.workgroup, run.wave_index);
            }
            // SAFETY: the block has returned; the wave is ours again.
            let wave = unsafe { &mut *wave_ptr };
            wave.scc = ctx.scc != 0;
            wave.pass = ctx.pass;
            wave.executed += ctx.executed;
            wave.pc = ctx.next_pc;
            if let Some((mut other, memory)) = before {
                // SAFETY: the block has returned; the LDS is ours again.
                let lds = unsafe { &mut *lds_ptr };
                let checked = match memory {
                    None => lockstep(&mut other, wave, &run, lds, ctx.executed, status),
                    Some((buffers, lds_before)) => {
                        lockstep_with_memory(&mut other, wave, &run, lds, ctx.executed, status, &buffers, &lds_before)
                    }
                };
                if let Err(e) = checked {
                    break Err(EngineError::Crosscheck {
                        kernel: kernel(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc: block_pc,
                        diff: e.to_string(),
                    });
                }
            }
            match status {
                CONTINUE if ctx.switch != 0 => break Ok(()),
                CONTINUE => {}
                compile::POLL => {
                    wave.polled = true;
                    break Ok(());
                }
                BARRIER => {
                    wave.status = WaveStatus::AtBarrier;
                    break Ok(());
                }
                END => {
                    wave.status = WaveStatus::Done;
                    observer.wave_end(run.workgroup, run.wave_index, wave.executed);
                    break Ok(());
                }
                compile::SWITCH => break Ok(()),
                FAULT => {
                    // SAFETY: the block has returned; nothing else holds the Env.
                    let env = unsafe { &mut *env_ptr };
                    let (pc, text, error) = env.error.take().unwrap_or((wave.pc, String::new(), ExecError::Trap(0)));
                    break Err(EngineError::Fault {
                        kernel: kernel(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc,
                        text,
                        error: Box::new(error),
                    });
                }
                _ => {
                    break Err(EngineError::Fault {
                        kernel: kernel(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc: wave.pc,
                        text: String::new(),
                        error: Box::new(ExecError::Unsupported {
                            mnemonic: "the interpreter panicked inside a JIT helper",
                        }),
                    })
                }
            }
        };
        // SAFETY: no block is running; the wave is ours again.
        let wave = unsafe { &*wave_ptr };
        if wave.status == WaveStatus::Done {
            bequeath_windows(run.mem, wave);
        }
        Ctx::give_back(ctx);
        if O::WANTS_ACCESSES {
            env.accesses.clear();
            ACCESSES.set(std::mem::take(&mut env.accesses));
        }
        if env.fallbacks > 0 {
            self.shared.fallbacks.fetch_add(env.fallbacks, Ordering::Relaxed);
        }
        if env.checked_accesses > 0 {
            self.shared
                .checked_accesses
                .fetch_add(env.checked_accesses, Ordering::Relaxed);
        }
        if near_limit && result.is_ok() {
            return emu_core::engine::Interpreter.run_wave(run, observer);
        }
        result
    }
}
