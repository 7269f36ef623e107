//! `wavejit trace --html`: records a dispatch described as for `run` and writes the wavefront explorer page
//! (`inspect::explorer`).

use std::path::PathBuf;

use emu_core::engine::{Interpreter, Limits, WaveRunner};
use inspect::explorer::{self, Options, TimelineRecorder, Trace};
use inspect::{DebugInfo, Session};

use crate::engine::{Dispatch, OneEngine};
use crate::run::Prepared;

/// Options of `wavejit trace`.
pub struct TraceArgs {
    pub prepared: Prepared,
    pub html: PathBuf,
    pub workgroups: Option<String>,
    pub max_recorded: u64,
    pub timing: bool,
    pub engine: OneEngine,
    pub max_instructions: u64,
}

pub fn run(a: TraceArgs) -> Result<(), Box<dyn std::error::Error>> {
    let workgroups = match &a.workgroups {
        Some(list) => Some(
            list.split(',')
                .map(|w| {
                    w.trim()
                        .parse::<u64>()
                        .map_err(|_| format!("--workgroups: `{w}` is not a workgroup index"))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    let p = &a.prepared;
    let opts = Options {
        max_recorded: a.max_recorded,
        workgroups,
    };
    let info = DebugInfo::of(&p.co, p.kernel());
    let d = p.dispatch(Limits {
        max_wave_instructions: emu_core::engine::instruction_limit(a.max_instructions),
        threads: Some(1),
        ..Limits::default()
    })?;
    let trace = match a.engine {
        OneEngine::Interp => record(&d, &Interpreter, "interp", &opts, &info, a.timing, a.max_recorded)?,
        OneEngine::Jit => record(
            &d,
            &jit::Jit::with_options(jit::JitOptions::from_env())?,
            "jit",
            &opts,
            &info,
            a.timing,
            a.max_recorded,
        )?,
    };
    let page = explorer::html(&trace)?;
    std::fs::write(&a.html, page).map_err(|e| format!("{}: {e}", a.html.display()))?;
    println!(
        "{}: {} of {} instructions recorded, {} waves; wrote {}",
        trace.kernel,
        trace.recorded,
        trace.total,
        trace.waves.len(),
        a.html.display()
    );
    p.write_outputs()
}

/// Records `d` on `runner` (and, with `timing`, runs it again in the timing model for the cycle timeline).
pub fn record<R: WaveRunner>(
    d: &Dispatch<'_>,
    runner: &R,
    engine: &str,
    opts: &Options,
    info: &DebugInfo,
    timing: bool,
    max: u64,
) -> Result<Trace, Box<dyn std::error::Error>> {
    let mut trace = d.launch(|mem, device, launch, limits| {
        let mut session = Session::new(mem, device, launch, runner, limits.max_wave_instructions)?;
        let t = explorer::record(&mut session, engine, opts, &info.functions)?;
        if timing {
            // the timing run starts from the memory the recording started from
            session.rewind()?;
        }
        Ok(t)
    })?;
    if timing {
        let rec = TimelineRecorder::new(max);
        let (stats, _) = d.run_timed(runner, &rec)?;
        rec.into_trace(&mut trace, stats.cycles.unwrap_or(0));
    }
    Ok(trace)
}
