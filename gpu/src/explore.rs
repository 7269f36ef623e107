//! The wavefront explorer's recording of a dispatch (`inspect::explorer`): what `wavejit trace --html` writes,
//! `wavejit exec --trace-html` records inside a program ([`crate::inspect`]) and the Python package's
//! `Device.last.trace_html()` shows.

use emu_core::engine::{EngineError, Launch, Limits, RunStats, WaveRunner};
use emu_core::memory::DeviceMemory;
use emu_core::timing::sched::run_timed;
use emu_core::DevicePreset;
use inspect::explorer::{self, Options, TimelineRecorder, Trace};
use inspect::{DebugInfo, Session};

use crate::launch::Dispatch;

/// Records `launch` on `runner` from its start (`functions`: name, address in the code object and size of each
/// function, to name the instructions). With `limits.timing` the launch runs again in the timing model, from the
/// memory the recording started from, for the cycle timeline. The statistics are the timing run's when timed,
/// else the recording's counts of workgroups, waves and instructions.
#[allow(clippy::too_many_arguments)]
pub fn record_launch<R: WaveRunner>(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    limits: Limits,
    runner: &R,
    engine: &str,
    opts: &Options,
    functions: &[(String, u64, u64)],
) -> Result<(Trace, RunStats), EngineError> {
    let mut session = Session::new(mem, device, launch, runner, limits.max_wave_instructions)?;
    let mut trace = explorer::record(&mut session, engine, opts, functions)?;
    if !limits.timing {
        let stats = crate::inspect::stats(&session);
        return Ok((trace, stats));
    }
    session.rewind()?;
    let rec = TimelineRecorder::new(opts.max_recorded);
    let (timed, _) = run_timed(mem, device, launch, limits, runner, &rec)?;
    rec.into_trace(&mut trace, timed.cycles.unwrap_or(0));
    Ok((trace, timed))
}

/// [`record_launch`] of `d`, its dynamic LDS included (with the cycle timeline when its limits say timing).
pub fn record<R: WaveRunner>(
    d: &Dispatch<'_>,
    runner: &R,
    engine: &str,
    opts: &Options,
    info: &DebugInfo,
) -> Result<Trace, EngineError> {
    d.launch(|mem, device, launch, limits| {
        record_launch(mem, device, launch, limits, runner, engine, opts, &info.functions).map(|(t, _)| t)
    })
}
