//! `wavejit trace --html`: records a dispatch described as for `run` and writes the wavefront explorer page
//! (`inspect::explorer`).

use std::path::PathBuf;

use emu_core::engine::{Interpreter, Limits};
use gpu::explore::record;
use inspect::explorer::{self, Options};
use inspect::DebugInfo;

use crate::engine::OneEngine;
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
        // with the cycle timeline from a second run in the timing model
        timing: a.timing,
        ..Limits::default()
    })?;
    let trace = match a.engine {
        OneEngine::Interp => record(&d, &Interpreter, "interp", &opts, &info)?,
        OneEngine::Jit => record(
            &d,
            &jit::Jit::with_options(jit::JitOptions::from_env())?,
            "jit",
            &opts,
            &info,
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
