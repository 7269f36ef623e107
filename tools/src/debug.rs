//! `wavejit debug`: the step debugger (with reverse execution) over one dispatch described as for `run`.
//! It talks through `inspect::protocol::talk`: on a terminal the full-screen view; otherwise one command per line
//! from stdin, answered on stdout (as JSON objects with `--json`). See `inspect::debugger` for the commands.

use emu_core::engine::{Interpreter, Limits, WaveRunner};
use inspect::{DebugInfo, Debugger, Session, WaveKey};

use crate::engine::{Dispatch, OneEngine};
use crate::run::Prepared;

/// Options of `wavejit debug`.
pub struct DebugArgs {
    pub prepared: Prepared,
    pub max_instructions: u64,
    pub engine: OneEngine,
    pub wave: Option<String>,
    pub json: bool,
}

pub fn run(a: DebugArgs) -> Result<(), Box<dyn std::error::Error>> {
    let wave: WaveKey = a.wave.as_deref().unwrap_or("0").parse()?;
    let p = &a.prepared;
    let info = DebugInfo::of(&p.co, p.kernel());
    let d = p.dispatch(Limits {
        max_wave_instructions: emu_core::engine::instruction_limit(a.max_instructions),
        threads: Some(1),
        ..Limits::default()
    })?;
    match a.engine {
        OneEngine::Interp => interact(
            &d,
            &Interpreter,
            info,
            wave,
            a.json,
            emu_core::engine::instruction_limit(a.max_instructions),
        )?,
        OneEngine::Jit => interact(
            &d,
            &jit::Jit::with_options(jit::JitOptions::from_env())?,
            info,
            wave,
            a.json,
            emu_core::engine::instruction_limit(a.max_instructions),
        )?,
    }
    p.write_outputs()
}

/// Runs a debugger session over the dispatch `d` on `runner` until the input ends or `quit`, then the rest of
/// the dispatch.
pub fn interact<R: WaveRunner>(
    d: &Dispatch<'_>,
    runner: &R,
    info: DebugInfo,
    wave: WaveKey,
    json: bool,
    max: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let r = d.launch(|mem, device, launch, _| {
        let session = Session::new(mem, device, launch, runner, max)?;
        let (mut dbg, first) = Debugger::start(session, info, wave)?;
        let talk = inspect::protocol::talk(&mut dbg, &first, json);
        dbg.finish_dispatch()?;
        Ok(talk)
    })?;
    r.map_err(|e| e.into())
}
