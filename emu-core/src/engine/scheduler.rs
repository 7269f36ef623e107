//! The scheduler seam: a [`Scheduler`] decides which workgroups run where and when; the [`Dispatch`] it is
//! given carries the launch, its runner and observer, and the engine's operations on workgroups and waves.

use super::group::{load_ids, register_counts};
use super::launch::dispatch_begin;
use super::stats::group_slack;
use super::{
    build_group_in, check_launch, dispatch_context, timeout_error, DeviceClock, EngineError, Group, Launch, Limits,
    RunStats, SlackReport, WaveRunner,
};
use crate::device::DevicePreset;
use crate::dispatch::{DispatchContext, WaveTemplate};
use crate::memory::DeviceMemory;
use crate::observe::{Event, Observer};
use crate::wave::{WaveClock, WaveState};

/// How a dispatch's workgroups are placed and its waves take turns: the functional rounds
/// ([`Functional`](super::Functional)) or the timing model. A scheduler decides what runs when; the engine builds the
/// workgroups and runs the waves for it through the [`Dispatch`] it is given (its runner, its observer, the operations
/// on groups and waves) — the only part of the engine a scheduler uses.
pub trait Scheduler {
    /// What the scheduler reports beside the dispatch's statistics (the timing model's cycles and counters).
    type Report;

    /// Runs `dispatch` (its launch already checked) until every workgroup has ended.
    fn run<R: WaveRunner, O: Observer>(
        &self,
        dispatch: &Dispatch<'_, R, O>,
    ) -> Result<(RunStats, Self::Report), EngineError>;
}

/// A dispatch as the engine hands it to a [`Scheduler`]: the launch on its device, its limits, the runner and
/// the observer of its waves, the clock its waves read, and the engine's operations on its workgroups and
/// waves.
pub struct Dispatch<'a, R, O> {
    pub mem: &'a DeviceMemory,
    pub device: &'a DevicePreset,
    pub launch: &'a Launch<'a>,
    pub limits: Limits,
    pub runner: &'a R,
    pub observer: &'a O,
    /// The clock this dispatch's waves continue from, and move on.
    pub clock: &'a DeviceClock,
    /// The memory of up to [`ENDED_KEPT`] waves that ended while their workgroup went on
    /// ([`Dispatch::keep_parts`]), for [`Dispatch::give_registers`]; dropped with the dispatch.
    ended: std::sync::Mutex<Vec<crate::wave::Parts>>,
}

/// How many ended waves' parts [`Dispatch::keep_parts`] keeps.
const ENDED_KEPT: usize = 64;

impl<'a, R: WaveRunner, O: Observer> Dispatch<'a, R, O> {
    /// `launch` on `device`, its waves run by `runner` and seen by `observer`, on the device's clock (its memory's,
    /// [`DeviceMemory::clock`]).
    pub fn new(
        mem: &'a DeviceMemory,
        device: &'a DevicePreset,
        launch: &'a Launch<'a>,
        limits: Limits,
        runner: &'a R,
        observer: &'a O,
    ) -> Self {
        Dispatch {
            mem,
            device,
            launch,
            limits,
            runner,
            observer,
            clock: mem.clock(),
            ended: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The dispatch on `clock` instead.
    pub fn on_clock(self, clock: &'a DeviceClock) -> Self {
        Dispatch { clock, ..self }
    }

    /// Checks the launch ([`check_launch`]) and has `scheduler` run it.
    pub fn run<S: Scheduler>(&self, scheduler: &S) -> Result<(RunStats, S::Report), EngineError> {
        check_launch(self.device, self.launch)?;
        scheduler.run(self)
    }

    /// What every wave of the dispatch shares.
    pub fn context(&self) -> DispatchContext<'a> {
        dispatch_context(self.device, self.launch)
    }

    /// The event that opens the dispatch (numbered `id`; `timing`: in the timing model).
    pub fn begin_event(&self, id: u64, timing: bool) -> Event<'a> {
        dispatch_begin(id, self.device, self.launch, timing)
    }

    /// The dispatch's progress, when its limits watch it ([`crate::watch`]).
    pub fn watch(&self) -> Option<std::sync::Arc<crate::watch::Progress>> {
        self.limits.watch.map(|w| {
            crate::watch::Progress::start(
                self.launch.name,
                self.launch.shape.total_waves(self.device.wave_size),
                w,
                self.limits.max_wave_instructions,
            )
        })
    }

    /// The [`EngineError::Timeout`] of the dispatch once `progress` has stopped it.
    pub fn timeout_error(&self, progress: &crate::watch::Progress) -> EngineError {
        timeout_error(
            self.launch.name,
            progress,
            self.mem,
            self.launch.code,
            self.launch.cache,
        )
    }

    /// Workgroup `i` (linear index) with its waves' register files left empty, for [`Dispatch::give_registers`]
    /// to make when each wave first runs: a scheduler that places many workgroups long before their waves run
    /// (the timing model) then makes each wave's registers in memory the host has just used
    /// ([`Dispatch::keep_parts`]), not all at once. Its private memory is its own (`Group::scratch`).
    pub fn group_registers_later(
        &self,
        template: &WaveTemplate,
        i: u64,
        clock: WaveClock,
    ) -> Result<Group, EngineError> {
        build_group_in(self.mem, self.device, self.launch, template, i, clock, None, false)
    }

    /// Gives wave `w` of workgroup `wg` (made by [`Dispatch::group_registers_later`]) its register files, with the
    /// work-item ids the hardware loads, in the memory of a wave that ended ([`Dispatch::keep_parts`]) where there
    /// is some.
    pub fn give_registers(&self, template: &WaveTemplate, wg: [u32; 3], w: u32, wave: &mut WaveState) {
        let (vgprs, agprs) = register_counts(self.launch);
        let parts = self
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        wave.registers_from(parts, vgprs, agprs);
        load_ids(wave, &template.lanes(self.launch.shape.workgroup_size(wg), w).0);
    }

    /// Keeps the memory of a wave that has ended ([`WaveState::take_parts`]: its registers read as empty
    /// afterwards) for the next wave the dispatch gives registers ([`Dispatch::give_registers`]): that wave's
    /// registers are then made in memory the host has just used, not in pages fetched and zeroed afresh.
    pub fn keep_parts(&self, wave: &mut WaveState) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        if ended.len() < ENDED_KEPT {
            ended.push(wave.take_parts());
        }
    }

    /// The slack accesses of workgroup `g`'s waves (once they have ended): how many, and the first in wave
    /// order.
    pub fn slack(&self, g: &Group) -> (u64, Option<Box<SlackReport>>) {
        group_slack(self.launch.name, g)
    }

    /// Places `wave` at `at` on the device: what its HW_ID and XCC_ID read (a scheduler that places waves
    /// itself; otherwise a wave reads the functional dispatch's fixed placement, [`crate::hwreg::placement`]).
    pub fn place_wave(&self, wave: &mut WaveState, at: crate::hwreg::Place) {
        (wave.hw.hw_id, wave.hw.xcc_id) = (crate::hwreg::hw_id(self.device.target, at), at.xcd);
    }
}
