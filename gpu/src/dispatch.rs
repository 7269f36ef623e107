//! A kernel dispatch of a process's GPU, run the way the environment asks, on either route: under the debugger
//! or the explorer's recorder when asked for ([`crate::inspect`]), observed by the hardware counters when the
//! process is profiled ([`crate::profile`]), else plainly; and counted for `wavejit exec`'s report
//! ([`crate::report`]). The drop-in runtime's queues and the emulated driver's command processors both
//! run their dispatches here, so a feature of one route is a feature of the other.

use emu_core::engine::{run_launch, EngineError, Interpreter, Launch, Limits, RunStats, WaveRunner};
use emu_core::memory::DeviceMemory;
use emu_core::observe::{NoObserver, Observer};
use emu_core::timing::sched::run_timed;
use emu_core::timing::TimingStats;
use emu_core::DevicePreset;
use inspect::DebugInfo;
use isa_amdgpu::codeobj::KernelDescriptor;
use profiler_hooks::record::{DispatchRecord, Record};
use profiler_hooks::HwCounters;

use crate::profile::Profile;

/// Where dispatches run: the GPU's memory and preset, the engine and the limits of every dispatch.
pub struct Engine<'a> {
    pub mem: &'a DeviceMemory,
    pub device: &'static DevicePreset,
    /// The JIT, or `None` for the interpreter.
    pub jit: Option<&'a jit::Jit>,
    pub limits: Limits,
}

/// What a profiled dispatch observed: its counters, and the timing model's statistics in timing mode.
pub struct Observed {
    pub counters: HwCounters,
    pub timing: Option<TimingStats>,
}

/// The result of a dispatch.
pub type Outcome = Result<RunStats, EngineError>;

impl Engine<'_> {
    /// Runs `launch` to its end: under the debugger or the recorder when the environment asks for this kernel
    /// (`info` describes it to them), else observed by the hardware counters when `profile` is given.
    pub fn run(
        &self,
        launch: &Launch<'_>,
        info: impl FnOnce() -> DebugInfo,
        profile: Option<&Profile>,
    ) -> (Outcome, Option<Observed>) {
        if let Some(r) = crate::inspect::dispatch(self, launch, info) {
            return (r, None);
        }
        match profile {
            None => (self.with_runner(launch, &NoObserver), None),
            Some(prof) => {
                let counters = HwCounters::new(self.device, prof.wave_trace);
                let (result, timing) = match run_on(self.mem, self.device, launch, self.limits, self.jit, &counters) {
                    Ok((s, t)) => (Ok(s), t),
                    Err(e) => (Err(e), None),
                };
                (result, Some(Observed { counters, timing }))
            }
        }
    }

    fn with_runner<O: Observer>(&self, launch: &Launch<'_>, observer: &O) -> Outcome {
        match self.jit {
            Some(j) => run_launch(self.mem, self.device, launch, self.limits, j, observer),
            None => run_launch(self.mem, self.device, launch, self.limits, &Interpreter, observer),
        }
    }
}

/// Runs `launch` to its end on `jit` (`None`: the interpreter), seen by `observer`; in the timing model when
/// `limits.timing`, then with the model's statistics.
pub fn run_on<O: Observer>(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    limits: Limits,
    jit: Option<&jit::Jit>,
    observer: &O,
) -> Result<(RunStats, Option<TimingStats>), EngineError> {
    match jit {
        Some(j) => on_runner(mem, device, launch, limits, j, observer),
        None => on_runner(mem, device, launch, limits, &Interpreter, observer),
    }
}

fn on_runner<R: WaveRunner, O: Observer>(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    limits: Limits,
    runner: &R,
    observer: &O,
) -> Result<(RunStats, Option<TimingStats>), EngineError> {
    if limits.timing {
        return run_timed(mem, device, launch, limits, runner, observer).map(|(s, t)| (s, Some(t)));
    }
    run_launch(mem, device, launch, limits, runner, observer).map(|s| (s, None))
}

/// Where a dispatch came from, as its profile record names it.
pub struct Origin<'a> {
    /// The agent's number among the process's agents (the process record lists them).
    pub agent: u32,
    /// The queue's address.
    pub queue: u64,
    /// The kernel object (the descriptor's address).
    pub kernel_object: u64,
    pub descriptor: &'a KernelDescriptor,
    /// `.agpr_count` of the kernel's metadata, when the code object's metadata is at hand.
    pub agpr_count: Option<u64>,
}

/// Writes a profiled dispatch's record, and its traced waves, to the profile. `host` is its start and end on
/// the real-time clock, `modeled` its start and end on the modeled clock (ns from the process's start) in
/// timing mode.
#[allow(clippy::too_many_arguments)]
pub fn record(
    prof: &Profile,
    device: &DevicePreset,
    origin: &Origin<'_>,
    launch: &Launch<'_>,
    host: (u64, u64),
    modeled: Option<(u64, u64)>,
    observed: &Observed,
    error: Option<&EngineError>,
) {
    let res = emu_core::engine::resources(device, launch);
    let id = prof.next_dispatch();
    let d = DispatchRecord {
        id,
        pid: prof.pid,
        tid: crate::profile::tid(),
        agent: origin.agent,
        queue: origin.queue,
        kernel: launch.name.to_string(),
        kernel_object: origin.kernel_object,
        grid: launch.shape.grid,
        workgroup: launch.shape.block,
        lds_bytes: launch.group_segment_size,
        scratch_bytes: launch.private_segment_size,
        arch_vgprs: res.vgprs - res.agprs,
        accum_vgprs: profiler_hooks::record::accum_vgpr_count(origin.agpr_count, origin.descriptor),
        sgprs: res.sgprs,
        wave_size: device.wave_size,
        start_ns: host.0,
        end_ns: host.1,
        modeled,
        counters: prof.select(observed.counters.values(observed.timing.as_ref())),
        error: error.map(|e| e.to_string()),
    };
    prof.write(&Record::Dispatch(d));
    let waves = observed.counters.take_trace();
    if !waves.is_empty() {
        prof.write(&Record::Waves {
            pid: prof.pid,
            dispatch: id,
            waves,
        });
    }
}

/// The hint a failed dispatch's report ends with, where a setting decides the failure.
pub fn hint(e: &EngineError) -> Option<&'static str> {
    match e {
        EngineError::Runaway { .. } => Some(
            "WAVEJIT_MAX_INSTRUCTIONS=N (or `wavejit exec --max-instructions N`) sets the limit per wave; 0 removes it",
        ),
        EngineError::Timeout { .. } => Some(
            "WAVEJIT_TIMEOUT=SECS (or `wavejit exec --timeout SECS`) sets the time a dispatch may run; 0 removes it",
        ),
        _ => None,
    }
}
