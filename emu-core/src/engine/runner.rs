//! Running a wave: the [`WaveRunner`] seam (the interpreter here, compiled code in the `jit` crate), what a
//! runner is given ([`WaveRun`]), and the interpreter's loop over a wave's instructions.

use isa_amdgpu::disasm;

use super::{DecodeCache, EngineError, Limits, LoadedCode};
use crate::dispatch::DispatchContext;
use crate::interp::Interp;
use crate::memory::DeviceMemory;
use crate::observe::{Accesses, InstEvent, Observer};
use crate::sem::{execute, Stop};
use crate::wave::{WaveState, WaveStatus};

/// Executes waves: the interpreter here, compiled code in the `jit` crate. A runner takes a wave from where it
/// stands until it ends or reaches a barrier (or an observer asks to switch waves), with the interpreter's
/// meaning of every instruction, fault and limit.
pub trait WaveRunner: Sync {
    fn run_wave<O: Observer>(&self, run: WaveRun<'_>, observer: &O) -> Result<(), EngineError>;
}

/// Everything a [`WaveRunner`] needs to run one wave of a workgroup.
pub struct WaveRun<'a> {
    pub mem: &'a DeviceMemory,
    pub code: &'a LoadedCode,
    pub cx: &'a DispatchContext<'a>,
    pub workgroup: [u32; 3],
    pub wave_index: u32,
    pub wave: &'a mut WaveState,
    pub lds: &'a mut [u8],
    pub cache: &'a DecodeCache,
    pub limits: Limits,
}

/// The interpreter as a [`WaveRunner`].
pub struct Interpreter;

impl WaveRunner for Interpreter {
    fn run_wave<O: Observer>(&self, run: WaveRun<'_>, observer: &O) -> Result<(), EngineError> {
        run_wave(run, observer)
    }
}

/// How many instructions a wave of a watched dispatch runs on the interpreter between notes of its progress.
const STOP_LOOK: u64 = 1 << 16;

/// The interpreter's [`WaveRunner::run_wave`].
fn run_wave<O: Observer>(run: WaveRun<'_>, observer: &O) -> Result<(), EngineError> {
    let WaveRun {
        mem,
        code,
        cx,
        workgroup: wg,
        wave_index: wi,
        wave,
        lds,
        cache,
        limits,
    } = run;
    let kernel = || cx.kernel.to_string();
    let mut accesses = Vec::new();
    let turn_starts = wave.executed;
    let turn_ends = limits.slice.map_or(u64::MAX, |s| wave.executed.saturating_add(s));
    while wave.status == WaveStatus::Running && wave.executed < turn_ends {
        // a watched dispatch: what the wave did shows in its progress, and a stopped dispatch stops here
        if let Some(p) = cx.progress.filter(|_| wave.executed - wave.reported >= STOP_LOOK) {
            p.note(wave);
        }
        if cx.progress.is_some_and(|p| p.stopped()) {
            return Err(EngineError::Stopped { kernel: kernel() });
        }
        if wave.executed >= limits.max_wave_instructions {
            return Err(EngineError::Runaway {
                kernel: kernel(),
                workgroup: wg,
                wave: wi,
                limit: limits.max_wave_instructions,
            });
        }
        let pc = wave.pc;
        let inst = cache
            .get(mem, code, pc)
            .map_err(|error| EngineError::IllegalInstruction {
                kernel: kernel(),
                workgroup: wg,
                wave: wi,
                pc,
                error,
            })?;
        if limits.clock_ends_turn && wave.executed > turn_starts && crate::sem::reads_clock(&inst) {
            break;
        }
        let exec = wave.exec();
        accesses.clear();
        let record = if O::WANTS_ACCESSES { Some(&mut accesses) } else { None };
        let mut b = Interp {
            wave,
            mem,
            lds: &mut *lds,
            mnemonic: inst.info.name,
            accesses: record,
        };
        let flow = execute(&mut b, &inst, pc).map_err(|error| EngineError::Fault {
            kernel: kernel(),
            workgroup: wg,
            wave: wi,
            pc,
            text: disasm::text(&inst),
            error: Box::new(error),
        })?;
        wave.slack.locate(pc, || disasm::text(&inst));
        // counted once executed: a clock reads the instructions before it
        wave.executed += 1;
        let ev = InstEvent {
            workgroup: wg,
            wave: wi,
            pc,
            inst: &inst,
            exec,
            accesses: Accesses::of(&accesses),
        };
        observer.instruction(&ev);
        let switch = observer.switch_wave(&ev);
        let (next, stop) = flow.next_pc(pc, inst.size() as u64);
        wave.pc = next;
        wave.pass |= crate::sem::pass_bits(&inst);
        if next <= pc && stop == Stop::Running && crate::sem::goes_back(&mut wave.pass) && limits.poll_ends_turn {
            wave.polled = true;
            break;
        }
        match stop {
            Stop::Running => {}
            Stop::Barrier => wave.status = WaveStatus::AtBarrier,
            Stop::End => {
                wave.status = WaveStatus::Done;
                observer.wave_end(wg, wi, wave.executed);
            }
        }
        if switch {
            break;
        }
    }
    Ok(())
}
