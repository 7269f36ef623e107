//! The step debugger and the wavefront explorer inside a program (`wavejit exec --debug KERNEL`,
//! `wavejit exec --trace-html PATH --kernel KERNEL`), on either route: the first dispatch of the kernel named by
//! `WAVEJIT_DEBUG` runs under the debugger (commands on the program's stdin, answers on its stdout, or the
//! terminal view on a terminal; `WAVEJIT_DEBUG_WAVE` chooses the wave, `WAVEJIT_DEBUG_JSON=1` answers in JSON),
//! and the first dispatch of the kernel named by `WAVEJIT_TRACE_KERNEL` is recorded into the page
//! `WAVEJIT_TRACE_HTML` (at most `WAVEJIT_TRACE_MAX` instructions; in timing mode with the timing model's cycle
//! timeline, from a second run of the dispatch from the same memory). A kernel is named by its symbol, its
//! demangled name or the plain name in it (`isa_amdgpu::codeobj::names::matches`). Either way the dispatch runs
//! to its end with the results a plain dispatch has.

use std::sync::atomic::{AtomicBool, Ordering};

use emu_core::engine::{EngineError, Launch, RunStats, WaveRunner};
use inspect::explorer::{self, Options};
use inspect::{DebugInfo, Debugger, Session, WaveKey};

use crate::dispatch::Engine;

static DEBUGGED: AtomicBool = AtomicBool::new(false);
static TRACED: AtomicBool = AtomicBool::new(false);

fn env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// Runs the dispatch under the debugger or the recorder when the environment asks for this kernel; `None`
/// otherwise (the dispatch then runs as usual).
pub fn dispatch(
    engine: &Engine<'_>,
    launch: &Launch<'_>,
    info: impl FnOnce() -> DebugInfo,
) -> Option<Result<RunStats, EngineError>> {
    let name = launch.name;
    let debug = env("WAVEJIT_DEBUG").is_some_and(|w| isa_amdgpu::codeobj::names::matches(name, &w))
        && !DEBUGGED.swap(true, Ordering::SeqCst);
    let trace = !debug
        && env("WAVEJIT_TRACE_KERNEL").is_some_and(|w| isa_amdgpu::codeobj::names::matches(name, &w))
        && env("WAVEJIT_TRACE_HTML").is_some()
        && !TRACED.swap(true, Ordering::SeqCst);
    if !debug && !trace {
        return None;
    }
    let info = info();
    Some(match engine.jit {
        Some(j) => run(engine, launch, &info, j, "jit", debug),
        None => run(engine, launch, &info, &emu_core::engine::Interpreter, "interp", debug),
    })
}

fn run<R: WaveRunner>(
    engine: &Engine<'_>,
    launch: &Launch<'_>,
    info: &DebugInfo,
    runner: &R,
    engine_name: &str,
    debug: bool,
) -> Result<RunStats, EngineError> {
    let fail = |what: String| EngineError::Inspect {
        kernel: launch.name.to_string(),
        what,
    };
    if debug {
        let max = engine.limits.max_wave_instructions;
        let session = Session::new(engine.mem, engine.device, launch, runner, max)?;
        let wave: WaveKey = env("WAVEJIT_DEBUG_WAVE")
            .unwrap_or_else(|| "0".into())
            .parse()
            .map_err(fail)?;
        let json = env("WAVEJIT_DEBUG_JSON").is_some_and(|v| v == "1");
        let (mut dbg, first) = Debugger::start(session, info.clone(), wave)?;
        let talk = inspect::protocol::talk(&mut dbg, &first, json);
        if let Err(e) = talk {
            eprintln!("wavejit: debugger: {e}");
        }
        dbg.finish_dispatch()?;
        Ok(stats(&dbg.session))
    } else {
        let path = env("WAVEJIT_TRACE_HTML").unwrap_or_default();
        let max_recorded = env("WAVEJIT_TRACE_MAX").and_then(|m| m.parse().ok()).unwrap_or(50_000);
        let opts = Options {
            max_recorded,
            workgroups: None,
        };
        let (trace, stats) = crate::explore::record_launch(
            engine.mem,
            engine.device,
            launch,
            engine.limits,
            runner,
            engine_name,
            &opts,
            &info.functions,
        )?;
        let page = explorer::html(&trace).map_err(|e| fail(e.to_string()))?;
        std::fs::write(&path, page).map_err(|e| fail(format!("{path}: {e}")))?;
        eprintln!(
            "wavejit: {}: {} of {} instructions recorded, {} waves{}; wrote {path}",
            launch.name,
            trace.recorded,
            trace.total,
            trace.waves.len(),
            if engine.limits.timing {
                ", the cycle timeline"
            } else {
                ""
            }
        );
        Ok(stats)
    }
}

/// What a session's dispatch ran: its workgroups, waves and their instructions.
pub(crate) fn stats<R: WaveRunner>(s: &Session<'_, R>) -> RunStats {
    let waves = s.waves();
    RunStats {
        workgroups: s.launch().shape.workgroup_count(),
        waves: waves.len() as u64,
        wave_instructions: waves.iter().map(|w| w.2).sum(),
        ..RunStats::default()
    }
}
