//! The timing model's dispatch loop: one host thread that owns the model and decides, cycle by modeled
//! cycle, which wave issues what; the engines execute what it picks.
//!
//! **Placement.** A dispatcher places workgroups in order, XCD by XCD round-robin (workgroup `i` goes to XCD
//! `i mod xcds`, as the command processor deals them on MI300X), on a shader engine of that XCD chosen
//! round-robin and a CU of that engine with room (fewest resident waves first): wave slots, the unified
//! VGPR/AGPR file and the SGPR file of each SIMD, the CU's LDS, and its barrier resources. A workgroup that
//! does not fit waits for one of its XCD to retire. Each engine places one workgroup per
//! `overheads.workgroup_dispatch` cycles; waves start `overheads.wave_launch` cycles after placement, the first
//! workgroup `overheads.kernel_launch` cycles after the dispatch began.
//!
//! **Issue.** Each CU has 4 SIMDs; SIMD `k` gets an issue turn every `core.issue_cadence` cycles (on cycles
//! ≡ k mod 4). In its turn a SIMD issues at most one instruction per [`Category`] (VALU/matrix, SALU/SMEM,
//! VMEM, LDS, branch/message), each from a different wave, oldest wave first; a wave issues in order, at most
//! one instruction per turn. An instruction issues when its wave is not held (barrier, `s_nop`/`s_sleep`,
//! instruction-buffer refill after a taken branch or an instruction-cache miss), its `s_waitcnt` counts
//! allow (completion cycles of the wave's vector memory and LDS/scalar operations), its source registers are
//! computed (latencies of the timing table) and its unit is free (VALU and matrix core per SIMD, the texture
//! address unit and the LDS per CU). Memory instructions take their lanes' addresses to the memory pipeline
//! ([`super::memory`]) or the LDS bank model ([`super::lds`]) at issue, which gives their completion cycles.
//!
//! **Functional execution.** Each wave has a queue of instructions the engine has executed but the model
//! has not issued yet, with what their lanes ask of the memory pipeline and the LDS (line requests and bank
//! cycles, worked out from their accesses when the block runs; the cycles they cost are decided at issue).
//! When the model issues the head of a wave whose queue is empty (known beforehand from the decoded
//! instruction at the wave's PC), it runs the wave on the [`WaveRunner`] for [`RUN_AHEAD`] instructions
//! (whole blocks of compiled code on the JIT), which fills the queue; the run stops early at a barrier, at
//! the wave's end, before an instruction that reads a clock, and after the memory instruction that takes its
//! lane accesses past [`MAX_QUEUED_LANES`]. So a wave's effects on memory happen when the
//! run's first instruction issues: functional execution runs ahead of modeled time by at most one run. A
//! clock-reading instruction starts a run, and the wave's clock is set to its modeled issue cycle before it
//! executes.
//!
//! **Time.** Events are processed in cycle order (a SIMD's next turn is the earliest cycle one of its waves
//! can issue, so idle cycles are skipped), on one thread, in a fixed order: the cycles do not depend on the
//! host's thread count or on the engine, and results are those of a functional dispatch of a race-free
//! kernel (one that does not store what HW_ID and XCC_ID say of the model's placement).
//!
//! The model reaches the engine only through the [`Dispatch`] it is given as a [`Scheduler`]. Its parts, by
//! job: `placement` (workgroups onto CUs, their waves onto SIMDs, resources back, occupancy), [`arbitration`]
//! (each SIMD's turn, which head issues, its units and stall reasons), `bridge` (a wave's block run on the
//! engine into its queue), `barrier` (arrivals, releases, wave ends), `work` (what memory instructions ask of
//! the memory pipeline and the LDS, and what it costs at issue), `wheel` (the turns to come, by cycle) and
//! `prefetch` (asking the host for the model's state ahead of use); this module holds the model's state, its
//! construction and the dispatch loop.

use std::borrow::Cow;
use std::cell::RefCell;

use isa_amdgpu::Inst;

use super::cache::LineUse;
use super::inst::{Pipe, TimingTable};
use super::issue::{InstInfo, Sequencer, WaveWaits};
use super::machine::Machine;
use super::memory::{Kind, LineRequest, MemorySystem};
use super::rounds::Rounds;
use super::stats::{Occupancy, PerUnit, TimingStats};
use crate::device::DevicePreset;
use crate::dispatch::{DispatchContext, WaveTemplate};
use crate::engine::{
    self, Dispatch, EngineError, Group, KernelDispatch, Launch, Limits, RunStats, Scheduler, WaveRun, WaveRunner,
};
use crate::memory::DeviceMemory;
use crate::observe::{
    classify, next_dispatch_id, Accesses, Dir, Event, InstBatch, InstEvent, InstructionEvent, Issue, LaneAccess,
    LaneRange, Observer, Placement, Space, Stalls,
};
use crate::wave::{WaveClock, WaveStatus};

mod arbitration;
mod barrier;
mod bridge;
mod placement;
mod prefetch;
mod wheel;
mod work;

use bridge::{Entry, Observed, RUN_AHEAD};
use prefetch::STATE_COLD_AFTER;
use wheel::Wheel;
use work::{Places, Work};

/// The timing model as a [`Scheduler`]: the results of a functional dispatch, its modeled cycles and the
/// model's statistics.
pub struct TimingModel;

impl Scheduler for TimingModel {
    type Report = TimingStats;

    fn run<R: WaveRunner, O: Observer>(&self, d: &Dispatch<'_, R, O>) -> Result<(RunStats, TimingStats), EngineError> {
        let launch = d.launch;
        let fail = |what: String| EngineError::Timing {
            kernel: launch.name.to_string(),
            what,
        };
        if launch.cooperative && launch.code.grid_sync {
            return Err(fail("grid-wide sync (ds_gws_barrier, the ds_gws_sema_* semaphores) is not modeled; run this dispatch without timing".into()));
        }
        let machine = Machine::by_preset(d.device.id)
            .ok_or_else(|| fail(format!("no machine description for device {}", d.device.id)))?;
        let mut model = Model::new(d, machine)?;
        let result = match model.run() {
            // a wave's runner saw the timeout first
            Err(EngineError::Stopped { .. }) => Err(model.timed_out()),
            r => r,
        };
        model.release_all();
        result
    }
}

/// Runs `launch` in the timing model on the device's clock ([`TimingModel`]).
pub fn run_timed<'a, R: WaveRunner, O: Observer>(
    mem: &'a DeviceMemory,
    device: &'a DevicePreset,
    launch: &'a Launch<'a>,
    limits: Limits,
    runner: &'a R,
    observer: &'a O,
) -> Result<(RunStats, TimingStats), EngineError> {
    Dispatch::new(mem, device, launch, limits, runner, observer).run(&TimingModel)
}

impl KernelDispatch<'_> {
    /// Runs the dispatch in the timing model on `runner`: the results of [`KernelDispatch::run_with`], the
    /// modeled cycles and the model's statistics.
    pub fn run_timed<R: WaveRunner, O: Observer>(
        &self,
        runner: &R,
        observer: &O,
    ) -> Result<(RunStats, TimingStats), EngineError> {
        self.launch(|mem, device, launch, limits| {
            run_timed(mem, device, launch, Limits { timing: true, ..limits }, runner, observer)
        })
    }
}

/// Why a wave's issue is held back, besides its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    None,
    Barrier,
    Fetch,
    Sleep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Active,
    AtBarrier,
    Done,
}

/// An instruction the engine executed and the model has not issued yet (8 bytes: a block's queue takes few
/// host cache lines).
#[derive(Debug, Clone, Copy)]
struct Executed {
    /// The PC the wave went on at, from the start of the code ([`Places::code_bytes`] fits 32 bits).
    next_pc: u32,
    /// Its index into [`Model::infos`] ([`INFO`]), and [`FETCH`], [`TAKEN`] and [`WORK`] (all set: [`Executed::UNKNOWN`]).
    bits: u32,
}

impl Executed {
    /// A wave's head not looked up yet.
    const UNKNOWN: Executed = Executed {
        next_pc: 0,
        bits: u32::MAX,
    };

    #[inline(always)]
    fn info(self) -> u32 {
        self.bits & INFO
    }

    #[inline(always)]
    fn known(self) -> bool {
        self.bits != u32::MAX
    }
}

/// The instruction's issue fetches the next instruction's line: a taken branch, or a new line.
const FETCH: u32 = 1 << 31;
/// The instruction is a taken branch (the instruction buffer refills).
const TAKEN: u32 = 1 << 30;
/// The instruction has memory work: the wave's `work` entry after those of the queue's earlier instructions.
const WORK: u32 = 1 << 29;
/// The bits of [`Executed::bits`] that index [`Model::infos`] (the model refuses code with more instructions).
const INFO: u32 = WORK - 1;

/// A resident wave's timing state. What issuing its head reads sits in the first 192 bytes ([`WAVE_PREFETCH`]):
/// the head and its memory work, the turn and holds, where the queue and its memory work are, and the start
/// of `waits` (earliest and latest completions); looking up a head reads the rest of `waits` (outstanding
/// operations, results in flight) and the queue; the rest is read when a block runs, a memory instruction that
/// is not one contiguous range issues, or the wave starts and ends.
#[repr(C, align(128))]
struct Wave {
    /// The next instruction to issue, copied from the queue when it is looked up so that its issue reads the
    /// queue no more: the queue's head, or (only its info, the queue being empty) the instruction at
    /// `peek_pc`; [`Executed::UNKNOWN`]: not looked up yet.
    head: Executed,
    /// The head's memory work, copied with it (meaningful when the head has some).
    head_work: Work,
    state: State,
    hold_why: Hold,
    /// The queue is `queue[pos..len]`.
    pos: u32,
    len: u32,
    /// The next memory instruction's entry in `work`.
    next_work: u32,
    slot: u32,
    /// The wave's next issue turn.
    next_turn: u64,
    hold: u64,
    /// Instructions executed and not issued yet.
    queue: Vec<Executed>,
    /// The memory work of the queue's memory instructions.
    work: Vec<Work>,
    waits: WaveWaits,
    index: u32,
    /// The PC the engine continues at (where the queue ends).
    peek_pc: u64,
    /// The cycle the queue's block ran.
    ran_at: u64,
    /// The line requests of the queue's memory instructions that are not one contiguous range.
    reqs: Vec<LineRequest>,
    /// Per queued instruction, what the observer is told (an active observer only), and the lane accesses
    /// it names (an observer that wants them).
    observed: Vec<Observed>,
    acc: Vec<LaneAccess>,
    ranges: Vec<LaneRange>,
    simd: u32,
    vgprs: u32,
    sgprs: u32,
    start: u64,
    placement: Placement,
    /// The wave slot of its SIMD that HW_ID names (the lowest no other resident wave held when it started).
    hw_slot: u32,
}

/// A resident workgroup.
struct Slot {
    group: Group,
    /// The workgroup's linear index in the grid.
    linear: u64,
    waves: Vec<u32>,
    lds: u32,
    live: u32,
    at_barrier: u32,
    last_arrival: u64,
    end: u64,
    multi: bool,
}

struct Cu {
    xcd: u32,
    se: u32,
    waves: u32,
    multi_groups: u32,
    lds: u32,
    /// The texture address unit (vector memory) and the LDS are free from these cycles.
    vmem_free: u64,
    lds_free: u64,
}

/// A resident wave as its SIMD's turn sees it (with its bound, [`Simd::lbs`]): whether it can issue is decided
/// from here and the units' state, without reading the wave, until it issues (16 bytes: a SIMD's eight take
/// two host cache lines).
#[derive(Debug, Clone, Copy)]
struct Resident {
    /// The cycle the head's `s_waitcnt` counts and source registers allow it ([`Model::waits`]; meaningful while
    /// `head` is set: they change only when the wave issues).
    waits_ready: u64,
    wave: u32,
    /// The info of the wave's head ([`UNKNOWN`]: not looked up since the wave last issued).
    head: u32,
}

/// A [`Resident`] whose head is to be looked up.
const UNKNOWN: u32 = u32::MAX;

impl Resident {
    fn new(wave: u32) -> Resident {
        Resident {
            waits_ready: 0,
            wave,
            head: UNKNOWN,
        }
    }
}

/// A SIMD: what its turn reads first (its units, its live turn, its resident waves' bounds: together in one
/// 128-byte block), then its resident waves (another).
#[repr(C, align(128))]
struct Simd {
    len: usize,
    /// The cycle of this SIMD's live entry in the turn heap (`u64::MAX`: none).
    scheduled: u64,
    valu_free: u64,
    mfma_free: u64,
    /// Turns come on cycles ≡ phase (mod cadence).
    phase: u64,
    cu: u32,
    vgprs: u32,
    sgprs: u32,
    /// Per resident wave: no earlier than this cycle can it issue ([`NEVER`] while it waits at a barrier or
    /// has ended, and past the first `len`). A lower bound: the times it comes from only move later, except
    /// when a barrier releases, which sets it anew.
    lbs: [u64; MAX_WAVES],
    /// Resident waves, oldest first (the first `len`).
    resident: [Resident; MAX_WAVES],
}

struct Model<'a, R: WaveRunner, O: Observer> {
    /// The dispatch being run: the model's only way into the engine.
    d: &'a Dispatch<'a, R, O>,
    cx: DispatchContext<'a>,
    /// The dispatch's progress when it is watched ([`crate::watch`]).
    progress: Option<std::sync::Arc<crate::watch::Progress>>,
    /// The waves' initial state.
    template: WaveTemplate,
    block_limits: Limits,
    m: &'static Machine,
    table: &'static TimingTable,
    memsys: MemorySystem,
    /// Where the memory pipeline sees addresses ([`Places`]).
    places: Places,
    dispatch: u64,
    clock: WaveClock,
    /// Cycles between a SIMD's issue turns (a power of two).
    cadence: u64,
    icache_line_shift: u32,
    /// log2 of the vector L1's line bytes.
    l1_line_shift: u32,
    infos: Vec<InstInfo>,
    /// Per dword of the code: index into `infos` + 1 (0: not seen yet).
    info_at: Vec<u32>,
    cus: Vec<Cu>,
    simds: Vec<Simd>,
    slots: Vec<Option<Slot>>,
    free_slots: Vec<u32>,
    waves: Vec<Wave>,
    free_waves: Vec<u32>,
    /// SIMD turns (SIMD index) and wave ends ([`RETIRE`] | wave index) to come.
    turns: Wheel,
    /// Per SIMD, the wave its next turn most likely issues first (the oldest whose bound allows it at that
    /// turn, as its last turn ended): the dispatch loop asks the host to fetch it a few turns ahead
    /// ([`Model::prefetch_turn`]).
    likely: Vec<u32>,
    /// Per XCD: the next workgroup (linear index) it places, and its next shader engine.
    xcd_next: Vec<u64>,
    se_next: Vec<u32>,
    /// Per shader engine (XCD-major): when its dispatcher can place the next workgroup.
    se_free: Vec<u64>,
    workgroups: u64,
    groups_done: u64,
    /// The block just run, taken from [`LOG`]: its instructions, those new to the model, their lane accesses.
    entries: Vec<Entry>,
    new_insts: Vec<(u32, Inst)>,
    block_acc: Vec<LaneAccess>,
    block_ranges: Vec<LaneRange>,
    /// Lane scratch: the records of a range.
    lanes_buf: Vec<LaneAccess>,
    /// Lane scratch of memory instructions.
    rounds: Rounds,
    /// Scratch of placement: the SIMD of each wave of a workgroup.
    plan: Vec<u32>,
    lines: Vec<LineUse>,
    /// Scratch of issue: the line requests of a [`Lines::Range`].
    range_reqs: Vec<LineRequest>,
    // what the dispatch needs per workgroup and wave
    wave_vgprs: u32,
    wave_sgprs: u32,
    group_lds: u32,
    // statistics
    end: u64,
    wave_cycles: u128,
    waves_run: u64,
    instructions: u64,
    /// Slack accesses ([`Dispatch::slack`]), and the first with its workgroup's linear index.
    slack: u64,
    first_slack: Option<(u64, Box<engine::SlackReport>)>,
    issued: PerUnit,
    busy: PerUnit,
    stalls: Stalls,
    lds_conflicts: u64,
}

/// Wave slots a SIMD can have (8 on CDNA2 and CDNA3: every machine description's `waves_per_simd` is at most
/// this, which a test checks).
pub(super) const MAX_WAVES: usize = 8;

/// The bound ([`Simd::lbs`]) of a slot no cycle reaches: its wave waits at a barrier or has ended, or the slot
/// is empty. Below 2^63, as every cycle is, so that [`due`] tells the bounds a cycle has reached by the sign of
/// a difference.
const NEVER: u64 = i64::MAX as u64;

/// Marks a wave's end among the turns.
const RETIRE: u32 = 1 << 31;

/// The first cycle from `t` that is ≡ `phase` modulo `cadence` (a power of two).
fn align_up(t: u64, phase: u64, cadence: u64) -> u64 {
    t + (phase.wrapping_sub(t) & (cadence - 1))
}

fn round_up(x: u32, granule: u32) -> u32 {
    x.div_ceil(granule.max(1)) * granule.max(1)
}

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    fn new(d: &'a Dispatch<'a, R, O>, m: &'static Machine) -> Result<Self, EngineError> {
        let (mem, device, launch, limits) = (d.mem, d.device, d.launch, d.limits);
        if launch.code.size > u32::MAX as u64 {
            return Err(EngineError::Timing {
                kernel: launch.name.to_string(),
                what: format!("the model takes code of up to 4 GiB, not {} bytes", launch.code.size),
            });
        }
        let topo = &m.topology;
        let cus: Vec<Cu> = (0..topo.cus())
            .map(|cu| Cu {
                xcd: topo.xcd_of(cu),
                se: topo.se_of(cu),
                waves: 0,
                multi_groups: 0,
                lds: 0,
                vmem_free: 0,
                lds_free: 0,
            })
            .collect();
        let per = m.core.simds_per_cu;
        let grid_waves = launch
            .shape
            .workgroup_count()
            .saturating_mul(launch.shape.waves_in([0; 3], device.wave_size) as u64);
        let resident_waves = grid_waves.min((topo.cus() * per) as u64 * MAX_WAVES as u64) as usize;
        let resident_groups = resident_waves.min(launch.shape.workgroup_count() as usize);
        let simds: Vec<Simd> = (0..topo.cus() * per)
            .map(|s| Simd {
                len: 0,
                scheduled: u64::MAX,
                valu_free: 0,
                mfma_free: 0,
                phase: (s % per) as u64,
                cu: s / per,
                vgprs: 0,
                sgprs: 0,
                lbs: [NEVER; MAX_WAVES],
                resident: [Resident::new(0); MAX_WAVES],
            })
            .collect();
        let kd = launch.descriptor;
        let cx = d.context();
        let template = WaveTemplate::new(&cx).map_err(EngineError::from)?;
        let dispatch = next_dispatch_id();
        let code_words = launch.code.size.div_ceil(4) as usize;
        let progress = d.watch();
        Ok(Model {
            d,
            cx,
            progress,
            template,
            block_limits: Limits {
                slice: Some(RUN_AHEAD),
                clock_ends_turn: true,
                threads: Some(1),
                timing: false,
                ..limits
            },
            m,
            table: TimingTable::of(device.target),
            memsys: MemorySystem::new(m),
            places: Places {
                arena: mem.base(),
                moving: [
                    (launch.code.base, launch.code.size),
                    (launch.kernarg_addr, launch.kernarg.len() as u64),
                    (
                        launch.dispatch_packet,
                        if launch.dispatch_packet == 0 {
                            0
                        } else {
                            engine::DISPATCH_PACKET_BYTES as u64
                        },
                    ),
                ],
                scratch_group: launch.private_segment_size.div_ceil(16) as u64
                    * 16
                    * device.wave_size as u64
                    * launch.shape.waves_in([0; 3], device.wave_size) as u64,
            },
            dispatch,
            clock: WaveClock {
                base: d.clock.base(),
                per_instruction: 0,
                shader_mhz: m.clocks.shader_mhz,
            },
            cadence: m.core.issue_cadence.max(1).next_power_of_two() as u64,
            icache_line_shift: m.icache.line_bytes.trailing_zeros(),
            l1_line_shift: m.l1.line_bytes.trailing_zeros(),
            infos: Vec::new(),
            info_at: vec![0; code_words],
            cus,
            likely: vec![0; simds.len()],
            simds,
            // room for as many as can be resident at once (a workgroup or wave that ends leaves its record to
            // a later one), so the records are not moved as the first workgroups are placed
            slots: Vec::with_capacity(resident_groups),
            free_slots: Vec::new(),
            waves: Vec::with_capacity(resident_waves),
            free_waves: Vec::new(),
            turns: Wheel::new(),
            xcd_next: (0..topo.xcds as u64).collect(),
            se_next: vec![0; topo.xcds as usize],
            se_free: vec![0; (topo.xcds * topo.ses_per_xcd) as usize],
            workgroups: launch.shape.workgroup_count(),
            groups_done: 0,
            entries: Vec::new(),
            new_insts: Vec::new(),
            block_acc: Vec::new(),
            block_ranges: Vec::new(),
            lanes_buf: Vec::new(),
            rounds: Rounds::new(),
            plan: Vec::new(),
            lines: Vec::with_capacity(128),
            range_reqs: Vec::with_capacity(128),
            wave_vgprs: round_up(kd.vgpr_alloc_count(), m.core.vgpr_granule),
            wave_sgprs: round_up(kd.sgpr_alloc_count().unwrap_or(0), m.core.sgpr_granule),
            group_lds: round_up(launch.group_segment_size, m.core.lds_granule),
            end: 0,
            wave_cycles: 0,
            waves_run: 0,
            slack: 0,
            first_slack: None,
            instructions: 0,
            issued: PerUnit::default(),
            busy: PerUnit::default(),
            stalls: Stalls::default(),
            lds_conflicts: 0,
        })
    }

    fn fail(&self, what: String) -> EngineError {
        EngineError::Timing {
            kernel: self.d.launch.name.to_string(),
            what,
        }
    }

    fn run(&mut self) -> Result<(RunStats, TimingStats), EngineError> {
        if O::ACTIVE {
            self.d.observer.event(&self.d.begin_event(self.dispatch, true));
        }
        // the largest workgroup must fit on an empty CU
        let full = self.d.launch.shape.waves_in([0; 3], self.d.device.wave_size);
        if !self.fit(0, full, true, &mut Vec::new()) {
            return Err(self.fail(format!(
                "a workgroup of {full} waves ({} VGPRs, {} SGPRs per wave, {} bytes of LDS) does not fit on a CU",
                self.wave_vgprs, self.wave_sgprs, self.group_lds
            )));
        }
        let t0 = self.m.overheads.kernel_launch;
        for x in 0..self.m.topology.xcds {
            self.place(t0, x)?;
        }
        // turns and wave ends in cycle order
        while let Some((t, x)) = self.turns.peek() {
            if self.progress.as_ref().is_some_and(|p| p.stopped()) {
                return Err(self.timed_out());
            }
            self.turns.pop();
            self.prefetch_turn();
            if x & RETIRE != 0 {
                self.end_wave(t, (x & !RETIRE) as usize)?;
                continue;
            }
            let s = x as usize;
            if self.simds[s].scheduled != t {
                continue;
            }
            self.simds[s].scheduled = u64::MAX;
            self.turn(t, s)?;
        }
        if self.groups_done < self.workgroups {
            let waiting = self.waves.iter().filter(|w| w.state == State::AtBarrier).count();
            return Err(self.fail(format!(
                "{} of {} workgroups never finished: {waiting} wave(s) wait at s_barrier for waves that cannot arrive",
                self.workgroups - self.groups_done,
                self.workgroups
            )));
        }
        let cycles = self.end;
        self.d.clock.advance_to(self.clock.base + cycles);
        let first_slack = self.first_slack.take().map(|(_, f)| f);
        let stats = RunStats {
            workgroups: self.workgroups,
            waves: self.waves_run,
            wave_instructions: self.instructions,
            cycles: Some(cycles),
            slack: self.slack,
            first_slack,
        };
        if O::ACTIVE {
            let RunStats {
                workgroups,
                waves,
                wave_instructions,
                ..
            } = stats;
            self.d.observer.event(&Event::DispatchEnd {
                dispatch: self.dispatch,
                workgroups,
                waves,
                wave_instructions,
                cycles: Some(cycles),
            });
        }
        let timing = TimingStats {
            device: self.d.device.id.to_string(),
            shader_mhz: self.m.clocks.shader_mhz,
            cycles,
            ns: cycles as f64 * 1000.0 / self.m.clocks.shader_mhz as f64,
            workgroups: self.workgroups,
            waves: self.waves_run,
            wave_instructions: self.instructions,
            occupancy: self.occupancy(cycles),
            issued: self.issued,
            busy: self.busy,
            stalls: self.stalls,
            memory: self.memsys.stats(),
            lds_bank_conflict_cycles: self.lds_conflicts,
        };
        Ok((stats, timing))
    }

    /// The [`EngineError::Timeout`] of a dispatch its timeout stopped, naming where each resident wave was.
    fn timed_out(&self) -> EngineError {
        let p = self.progress.as_deref().expect("only a watched dispatch stops");
        for sl in self.slots.iter().flatten() {
            for (w, wave) in sl.group.waves.iter().enumerate() {
                if wave.status != crate::wave::WaveStatus::Done {
                    p.stopped_wave(sl.group.wg, w as u32, wave.pc);
                }
            }
        }
        self.d.timeout_error(p)
    }

    /// Frees the private memory of workgroups still resident (after a fault).
    fn release_all(&mut self) {
        for s in self.slots.iter_mut().filter_map(Option::take) {
            if let Some(a) = s.group.scratch {
                let _ = self.d.mem.free(a);
            }
        }
    }
}
