//! Running a launch on the scheduler it asks for: the functional rounds ([`crate::engine::Functional`]), or the
//! timing model when its limits ask for timing. The one place outside the timing model that names it: the
//! engine only knows schedulers through [`crate::engine::Scheduler`].

use crate::device::DevicePreset;
use crate::engine::{Dispatch, EngineError, Functional, Launch, Limits, RunStats, WaveRunner};
use crate::memory::DeviceMemory;
use crate::observe::Observer;

/// Runs a [`Launch`] on `device` with `runner`, every workgroup to its end, on the device's clock
/// ([`DeviceMemory::clock`]). With `limits.timing` the timing model schedules it and the statistics
/// carry its cycles; otherwise the functional rounds ([`Functional`]) do.
pub fn run_launch<R: WaveRunner, O: Observer>(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    limits: Limits,
    runner: &R,
    observer: &O,
) -> Result<RunStats, EngineError> {
    let d = Dispatch::new(mem, device, launch, limits, runner, observer);
    if limits.timing {
        // the scheduler a timed dispatch asks for
        return d.run(&crate::timing::TimingModel).map(|(s, _)| s);
    }
    d.run(&Functional).map(|(s, ())| s)
}
