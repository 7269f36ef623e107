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

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use isa_amdgpu::Inst;

use super::cache::{coalesce, LineUse};
use super::inst::{Pipe, TimingTable};
use super::issue::{InstInfo, Sequencer, WaveWaits};
use super::lds::bank_cycles;
use super::machine::Machine;
use super::memory::{Kind, LineRequest, MemorySystem};
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

/// Runs `launch` in the timing model on the process's clock ([`TimingModel`]).
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

/// What a memory instruction's lanes ask of the memory pipeline and the LDS, worked out from its lane
/// accesses when its block ran (while they are fresh in the host's caches): its line requests and the LDS bank
/// cycles of its LDS lanes. The cycles they cost are decided at issue.
#[derive(Debug, Clone, Copy)]
struct Work {
    lines: Lines,
    /// Its LDS lanes' bank cycles and conflict cycles (summed over rounds), when it has LDS lanes.
    banks: Option<(u64, u64)>,
}

/// A memory instruction's line requests.
#[derive(Debug, Clone, Copy)]
enum Lines {
    /// `reqs[start..start + len]` of the wave.
    Listed { start: u32, len: u32 },
    /// The L1 lines of the range `[start, end)`, all of one kind: the lanes of a vector memory instruction
    /// access one contiguous range ([`contiguous_range`]). [`range_lines`] makes them at issue.
    Range { start: u64, end: u64, kind: Kind },
}

impl Work {
    const NONE: Work = Work {
        lines: Lines::Listed { start: 0, len: 0 },
        banks: None,
    };

    fn listed(start: usize, end: usize, banks: Option<(u64, u64)>) -> Work {
        Work {
            lines: Lines::Listed {
                start: start as u32,
                len: (end - start) as u32,
            },
            banks,
        }
    }
}

/// Where an instruction's lane accesses are kept beside it: records `acc[start..start + len]`, or (`len` is
/// [`AccAt::RANGE`]) the range `ranges[start]`.
#[derive(Debug, Clone, Copy)]
struct AccAt {
    start: u32,
    len: u32,
}

impl AccAt {
    const RANGE: u32 = u32::MAX;
    const NONE: AccAt = AccAt { start: 0, len: 0 };

    /// `a` appended to `acc` or `ranges`.
    fn push(a: &Accesses<'_>, acc: &mut Vec<LaneAccess>, ranges: &mut Vec<LaneRange>) -> AccAt {
        match a {
            Accesses::Range(r) => {
                ranges.push(*r);
                AccAt {
                    start: ranges.len() as u32 - 1,
                    len: AccAt::RANGE,
                }
            }
            Accesses::Lanes(l) => {
                acc.extend_from_slice(l);
                AccAt {
                    start: (acc.len() - l.len()) as u32,
                    len: l.len() as u32,
                }
            }
        }
    }

    /// The accesses kept at `self`.
    fn get<'b>(self, acc: &'b [LaneAccess], ranges: &[LaneRange]) -> Accesses<'b> {
        match self.len {
            AccAt::RANGE => Accesses::Range(ranges[self.start as usize]),
            len => Accesses::Lanes(Cow::Borrowed(&acc[self.start as usize..(self.start + len) as usize])),
        }
    }
}

/// What an observer is told about a queued instruction (kept only for an active observer).
#[derive(Debug, Clone, Copy)]
struct Observed {
    pc: u64,
    exec: u64,
    /// Its lane accesses, in the wave's `acc` and `ranges`.
    acc: AccAt,
}

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

/// An instruction the engine executed in the block being run.
#[derive(Debug, Clone, Copy)]
struct Entry {
    pc: u64,
    exec: u64,
    /// Its index into [`Model::infos`] + 1, or 0 when the model had none for it yet (the instruction is then
    /// in [`Log::new`]).
    info: u32,
    /// Its accesses, in the log's `acc` and `ranges`.
    acc: AccAt,
}

/// What the engine reports while running a block: each executed instruction, the instructions the model has
/// not seen yet (by entry), their lane accesses.
struct Log {
    entries: Vec<Entry>,
    new: Vec<(u32, Inst)>,
    acc: Vec<LaneAccess>,
    ranges: Vec<LaneRange>,
    buf: Vec<LaneAccess>,
    /// The model's [`Model::info_at`], lent for the block's run, and the code's base: an instruction the
    /// model knows is logged by its info alone.
    known: Vec<u32>,
    base: u64,
    /// How many of `entries` have accesses: at least the memory instructions among them that had active
    /// lanes, and so what the wave's memory work takes room for at once.
    accessing: u32,
}

thread_local! {
    /// The log of the block being run: engines run a wave's block on the thread that asks them to, so the
    /// model finds the block's instructions here when `run_wave` returns.
    static LOG: RefCell<Log> = const {
        RefCell::new(Log { entries: Vec::new(), new: Vec::new(), acc: Vec::new(), ranges: Vec::new(), buf: Vec::new(), known: Vec::new(), base: 0, accessing: 0 })
    };
}

/// The observer the model runs blocks with: it records each executed instruction and its lane accesses. It
/// reads the log only once the run has ended, so it takes runs of instructions without memory accesses as
/// batches; it ends the run (asks to switch waves) once the run has recorded more than [`MAX_QUEUED_LANES`]
/// lane accesses, which only a memory instruction's report can bring about.
struct Recorder;

impl Log {
    fn record(&mut self, pc: u64, inst: &Inst, exec: u64, accesses: &Accesses<'_>) {
        let at = AccAt::push(
            &classify(inst, accesses, &mut self.buf),
            &mut self.acc,
            &mut self.ranges,
        );
        self.accessing += (at.len != 0) as u32;
        self.entry(pc, inst, exec, at);
    }

    /// [`Log::record`] of an instruction without accesses (one of a batch).
    #[inline]
    fn record_plain(&mut self, pc: u64, inst: &Inst, exec: u64) {
        self.entry(pc, inst, exec, AccAt::NONE);
    }

    /// The entry of an instruction whose accesses are at `at`, by its info when the model knows it.
    #[inline(always)]
    fn entry(&mut self, pc: u64, inst: &Inst, exec: u64, at: AccAt) {
        let info = self
            .known
            .get((pc.wrapping_sub(self.base) / 4) as usize)
            .copied()
            .unwrap_or(0);
        if info == 0 {
            self.new.push((self.entries.len() as u32, *inst));
        }
        self.entries.push(Entry {
            pc,
            exec,
            info,
            acc: at,
        });
    }
}

impl Observer for Recorder {
    const WANTS_ACCESSES: bool = true;
    const BATCHES: bool = true;
    fn instruction(&self, ev: &InstEvent<'_>) {
        LOG.with_borrow_mut(|log| log.record(ev.pc, ev.inst, ev.exec, &ev.accesses));
    }
    fn switch_wave(&self, _ev: &InstEvent<'_>) -> bool {
        LOG.with_borrow(|log| log.acc.len() > MAX_QUEUED_LANES)
    }
    fn batch(&self, b: &InstBatch<'_>) {
        LOG.with_borrow_mut(|log| {
            for _ in 0..b.times {
                for (pc, inst, exec) in b.iter() {
                    log.record_plain(pc, inst, exec);
                }
            }
        });
    }
}

/// The constraints on a wave's head instruction at one cycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Constraints {
    vm: u64,
    lgkm: u64,
    dependency: u64,
    unit: u64,
}

impl Constraints {
    #[inline(always)]
    fn ready(&self) -> u64 {
        self.vm.max(self.lgkm).max(self.dependency).max(self.unit)
    }
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
    rounds: Option<Box<Rounds>>,
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

/// Where the memory pipeline sees a dispatch's addresses: the code object, the kernel arguments and the
/// dispatch packet, which move from one dispatch to the next, at fixed places; a workgroup's private memory at
/// a place of its own by its index in the grid; everything else counted from the start of device memory (so
/// the cycles depend neither on where the host mapped it nor on where earlier dispatches left their code,
/// arguments and packets).
struct Places {
    arena: u64,
    /// The code, the kernel arguments and the dispatch packet (address, bytes): each at its place in
    /// [`Places::FIXED`].
    moving: [(u64, u64); 3],
    /// Private bytes of a full workgroup.
    scratch_group: u64,
}

impl Places {
    const FIXED: [u64; 3] = [1 << 46, 1 << 46 | 1 << 40, 1 << 46 | 2 << 40];
    const SCRATCH: u64 = 1 << 47;

    /// The place of `addr`; `scratch` is (base, linear index) of the workgroup's private memory when the
    /// access is a private one.
    #[inline]
    fn of(&self, addr: u64, scratch: Option<(u64, u64)>) -> u64 {
        if let Some((base, linear)) = scratch {
            return Self::SCRATCH + linear * self.scratch_group + addr.wrapping_sub(base);
        }
        for (k, &(base, bytes)) in self.moving.iter().enumerate() {
            if addr.wrapping_sub(base) < bytes {
                return Self::FIXED[k] + (addr - base);
            }
        }
        addr.wrapping_sub(self.arena)
    }

    /// Whether [`Places::of`] maps the `len` bytes from `addr` (outside private memory) as one piece: each at
    /// the place of `addr` plus its offset from it.
    fn one_piece(&self, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else { return false };
        let within = |&(base, bytes): &(u64, u64)| {
            addr.wrapping_sub(base) < bytes && end - addr <= bytes - addr.wrapping_sub(base)
        };
        let overlaps = |&(base, bytes): &(u64, u64)| end > base && addr < base.saturating_add(bytes);
        match self.moving.iter().filter(|r| overlaps(r)).count() {
            0 => true,
            1 => self.moving.iter().any(within),
            _ => false,
        }
    }
}

/// Wave slots a SIMD can have (8 on CDNA2 and CDNA3: every machine description's `waves_per_simd` is at most
/// this, which a test checks).
pub(super) const MAX_WAVES: usize = 8;

/// The bound ([`Simd::lbs`]) of a slot no cycle reaches: its wave waits at a barrier or has ended, or the slot
/// is empty. Below 2^63, as every cycle is, so that [`due`] tells the bounds a cycle has reached by the sign of
/// a difference.
const NEVER: u64 = i64::MAX as u64;

/// The slots of `lbs` whose bound cycle `t` has reached (bit `j`: `lbs[j] <= t`), worked out as the sign bits
/// of `lbs[j] - (t + 1)`: both are below 2^63, so the difference is negative exactly when the bound is at most
/// `t`.
#[inline(always)]
fn due(lbs: &[u64; MAX_WAVES], t: u64) -> u32 {
    const { assert!(MAX_WAVES == 8, "four pairs of bounds") };
    debug_assert!(t < NEVER && lbs.iter().all(|&b| b <= NEVER));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of every x86_64 target; the four unaligned 16-byte loads read the eight bounds.
    unsafe {
        use std::arch::x86_64::{
            __m128i, _mm_castsi128_pd, _mm_loadu_si128, _mm_movemask_pd, _mm_set1_epi64x, _mm_sub_epi64,
        };
        let next = _mm_set1_epi64x((t + 1) as i64);
        let p = lbs.as_ptr().cast::<__m128i>();
        let signs = |k: usize| _mm_movemask_pd(_mm_castsi128_pd(_mm_sub_epi64(_mm_loadu_si128(p.add(k)), next))) as u32;
        signs(0) | signs(1) << 2 | signs(2) << 4 | signs(3) << 6
    }
    #[cfg(not(target_arch = "x86_64"))]
    (0..MAX_WAVES).fold(0u32, |m, j| m | ((lbs[j].wrapping_sub(t + 1) >> 63) as u32) << j)
}

/// Cycles after which a wave's functional state, last touched when its block ran, is taken to have left the
/// host's caches (the block waited for memory meanwhile): the model then asks for it ahead of the next block.
const STATE_COLD_AFTER: u64 = 256;

/// Instructions a wave runs on the engine each time its queue is empty (blocks on the JIT, so a few more;
/// fewer when it reaches a barrier, its end or a clock-reading instruction): the wave's state is in the host's
/// caches while it runs, and one run serves many issues. With 64, `stream_read` over every wave slot of an
/// MI210 (about 340 instructions a wave) took 1.1x the time it takes with 512 (`wavejit bench --timing`,
/// alternating runs). The queue it fills takes 8 bytes an instruction (and its memory instructions' work
/// 48 bytes each): at most about 4 KiB a resident wave and its work, 40 MiB and the work over the 9,728 wave
/// slots of an MI300X.
const RUN_AHEAD: u64 = 512;

/// Lane accesses (records, not ranges) after which a wave's run ends ([`Recorder`]): gathers of thousands of
/// resident waves keep little queued.
const MAX_QUEUED_LANES: usize = 512;

/// How many turns ahead [`Model::prefetch_turn`] fetches a SIMD and its likely wave.
const PREFETCH_AHEAD: usize = 4;

/// How many turns ahead [`Model::prefetch_turn`] fetches the likely wave's head entry from its queue (reading
/// where it is from the wave, which the fetch [`PREFETCH_AHEAD`] turns ahead most likely brought in).
const QUEUE_PREFETCH_AHEAD: usize = 2;

/// The bytes of a wave's timing state [`Model::prefetch_turn`] fetches: its head, holds and the completions
/// an issue reads.
const WAVE_PREFETCH: usize = 192;

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
            rounds: Some(Rounds::new()),
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

    /// Frees the private memory of workgroups still resident (after a fault).
    fn release_all(&mut self) {
        for s in self.slots.iter_mut().filter_map(Option::take) {
            if let Some(a) = s.group.scratch {
                let _ = self.d.mem.free(a);
            }
        }
    }

    fn occupancy(&self, cycles: u64) -> Occupancy {
        let c = &self.m.core;
        let per_wg = self.d.launch.shape.waves_in([0; 3], self.d.device.wave_size).max(1);
        let mut limits = vec![("waves", c.waves_per_simd)];
        if let Some(n) = c.vgprs_per_lane.checked_div(self.wave_vgprs) {
            limits.push(("vgprs", n));
        }
        if let Some(n) = c.sgprs_per_simd.checked_div(self.wave_sgprs) {
            limits.push(("sgprs", n));
        }
        let simds = c.simds_per_cu;
        if let Some(groups) = (self.m.lds.bytes as u32).checked_div(self.group_lds) {
            limits.push(("lds", (groups * per_wg).div_ceil(simds)));
        }
        if per_wg > 1 {
            limits.push(("workgroups", (c.workgroups_per_cu * per_wg).div_ceil(simds)));
        }
        let (by, limit) = limits.iter().copied().min_by_key(|l| l.1).expect("slots");
        let slots = (c.waves_per_simd * simds) as f64;
        let mean = if cycles == 0 {
            0.0
        } else {
            self.wave_cycles as f64 / cycles as f64 / self.cus.len() as f64
        };
        Occupancy {
            max_waves_per_simd: c.waves_per_simd,
            limit_waves_per_simd: limit.min(c.waves_per_simd),
            limited_by: by.to_string(),
            mean_waves_per_cu: mean,
            achieved: mean / slots,
        }
    }

    // ---- placement --------------------------------------------------------------------------------------

    /// The SIMD of each of `n` waves (into `plan`) if a workgroup of them fits on CU `cu` (assumed empty when
    /// `empty`): each wave goes to the SIMD with the fewest waves that has room for it.
    fn fit(&self, cu: usize, n: u32, empty: bool, plan: &mut Vec<u32>) -> bool {
        let c = &self.m.core;
        let per = (c.simds_per_cu as usize).min(8);
        let unit = &self.cus[cu];
        let (lds, multi) = if empty { (0, 0) } else { (unit.lds, unit.multi_groups) };
        if lds + self.group_lds > self.m.lds.bytes as u32 || (n > 1 && multi >= c.workgroups_per_cu) {
            return false;
        }
        let mut have = [(0u32, 0u32, 0u32); 8];
        if !empty {
            for (k, h) in have.iter_mut().enumerate().take(per) {
                let s = &self.simds[cu * per + k];
                *h = (s.len as u32, s.vgprs, s.sgprs);
            }
        }
        let slots = c.waves_per_simd.min(MAX_WAVES as u32);
        plan.clear();
        for _ in 0..n {
            let Some(k) = (0..per)
                .filter(|&k| {
                    let (w, v, s) = have[k];
                    w < slots && v + self.wave_vgprs <= c.vgprs_per_lane && s + self.wave_sgprs <= c.sgprs_per_simd
                })
                .min_by_key(|&k| (have[k].0, k))
            else {
                return false;
            };
            have[k].0 += 1;
            have[k].1 += self.wave_vgprs;
            have[k].2 += self.wave_sgprs;
            plan.push((cu * per + k) as u32);
        }
        true
    }

    /// Places the workgroups of XCD `xcd` that fit, in order, from cycle `t`.
    fn place(&mut self, t: u64, xcd: u32) -> Result<(), EngineError> {
        let topo = &self.m.topology;
        let (ses, per_xcd) = (topo.ses_per_xcd, topo.cus_per_xcd);
        loop {
            let linear = self.xcd_next[xcd as usize];
            if linear >= self.workgroups {
                return Ok(());
            }
            let wg = self.d.launch.shape.workgroup_id(linear);
            let n = self.d.launch.shape.waves_in(wg, self.d.device.wave_size);
            let mut found = None;
            let mut plan = std::mem::take(&mut self.plan);
            'search: for k in 0..ses {
                let se = (self.se_next[xcd as usize] + k) % ses;
                let mut best: Option<(u32, usize)> = None;
                for i in (se..per_xcd).step_by(ses as usize) {
                    let cu = (xcd * per_xcd + i) as usize;
                    if best.is_some_and(|b| b.0 <= self.cus[cu].waves) {
                        continue;
                    }
                    if self.fit(cu, n, false, &mut plan) {
                        best = Some((self.cus[cu].waves, cu));
                    }
                }
                if let Some((_, cu)) = best {
                    self.fit(cu, n, false, &mut plan);
                    found = Some((se, cu));
                    break 'search;
                }
            }
            let Some((se, cu)) = found else {
                self.plan = plan;
                return Ok(());
            };
            self.se_next[xcd as usize] = (se + 1) % ses;
            let e = (xcd * ses + se) as usize;
            let at = t.max(self.se_free[e]);
            self.se_free[e] = at + self.m.overheads.workgroup_dispatch;
            self.xcd_next[xcd as usize] += topo.xcds as u64;
            let started = self.start_group(at, linear, cu, &plan);
            self.plan = plan;
            started?;
        }
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

    /// Builds workgroup `linear` and starts its waves on `plan`'s SIMDs of `cu`, placed at cycle `at`.
    fn start_group(&mut self, at: u64, linear: u64, cu: usize, plan: &[u32]) -> Result<(), EngineError> {
        let mut group = self.d.group_registers_later(&self.template, linear, self.clock)?;
        let wg = group.wg;
        if let Some(p) = &self.progress {
            p.resident(group.waves.len() as u64);
        }
        let multi = plan.len() > 1;
        let slot_index = match self.free_slots.pop() {
            Some(i) => i,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let start = at + self.m.overheads.wave_launch;
        let unit = &mut self.cus[cu];
        unit.lds += self.group_lds;
        unit.waves += plan.len() as u32;
        unit.multi_groups += multi as u32;
        let (xcd, se) = (unit.xcd, unit.se);
        let mut ids = Vec::with_capacity(plan.len());
        for (index, &simd) in plan.iter().enumerate() {
            let placement = Placement {
                xcd,
                se,
                cu: cu as u32,
                simd: simd % self.m.core.simds_per_cu,
            };
            // HW_ID names where the model put the wave: its CU within the SE and the lowest free wave slot
            let taken = {
                let s = &self.simds[simd as usize];
                s.resident[..s.len]
                    .iter()
                    .fold(0u32, |m, r| m | 1 << self.waves[r.wave as usize].hw_slot)
            };
            let hw_slot = (!taken).trailing_zeros();
            let at = crate::hwreg::Place {
                xcd,
                se,
                cu: self.m.topology.cu_in_se(cu as u32),
                simd: placement.simd,
                slot: hw_slot,
            };
            self.d.place_wave(&mut group.waves[index], at);
            // the wave's first instructions come through the instruction cache
            let entry = self.d.launch.entry;
            let fetched = self
                .memsys
                .fetch_instruction(start, cu as u32, self.places.of(entry, None));
            let penalty = fetched.saturating_sub(start + self.m.icache.hit_latency);
            let hold_why = if penalty > 0 { Hold::Fetch } else { Hold::None };
            let id = match self.free_waves.pop() {
                Some(i) => {
                    // keep the old wave's buffers
                    let w = &mut self.waves[i as usize];
                    (
                        w.head,
                        w.state,
                        w.hold_why,
                        w.pos,
                        w.len,
                        w.next_work,
                        w.next_turn,
                        w.hold,
                    ) = (
                        Executed::UNKNOWN,
                        State::Active,
                        hold_why,
                        0,
                        0,
                        0,
                        start,
                        start + penalty,
                    );
                    w.waits.clear();
                    w.queue.clear();
                    w.work.clear();
                    w.reqs.clear();
                    w.observed.clear();
                    w.acc.clear();
                    (w.slot, w.index, w.simd, w.vgprs, w.sgprs) =
                        (slot_index, index as u32, simd, self.wave_vgprs, self.wave_sgprs);
                    (w.peek_pc, w.ran_at, w.start, w.placement, w.hw_slot) = (entry, start, start, placement, hw_slot);
                    i
                }
                None => {
                    self.waves.push(Wave {
                        head: Executed::UNKNOWN,
                        head_work: Work::NONE,
                        next_work: 0,
                        state: State::Active,
                        hold_why,
                        pos: 0,
                        len: 0,
                        next_turn: start,
                        hold: start + penalty,
                        waits: WaveWaits::default(),
                        queue: Vec::new(),
                        work: Vec::new(),
                        reqs: Vec::new(),
                        observed: Vec::new(),
                        acc: Vec::new(),
                        ranges: Vec::new(),
                        slot: slot_index,
                        index: index as u32,
                        simd,
                        vgprs: self.wave_vgprs,
                        sgprs: self.wave_sgprs,
                        peek_pc: entry,
                        ran_at: start,
                        start,
                        placement,
                        hw_slot,
                    });
                    (self.waves.len() - 1) as u32
                }
            };
            let s = &mut self.simds[simd as usize];
            s.lbs[s.len] = start + penalty;
            s.resident[s.len] = Resident::new(id);
            s.len += 1;
            s.vgprs += self.wave_vgprs;
            s.sgprs += self.wave_sgprs;
            ids.push(id);
            let first = align_up(start + penalty, s.phase, self.cadence);
            self.schedule(simd as usize, first);
        }
        if O::ACTIVE {
            let p = self.waves[ids[0] as usize].placement;
            self.d.observer.event(&Event::WorkgroupStart {
                dispatch: self.dispatch,
                workgroup: wg,
                waves: plan.len() as u32,
                placement: Some(p),
                cycle: Some(at),
            });
            for (i, id) in ids.iter().enumerate() {
                let placement = Some(self.waves[*id as usize].placement);
                self.d.observer.event(&Event::WaveStart {
                    dispatch: self.dispatch,
                    workgroup: wg,
                    wave: i as u32,
                    placement,
                    cycle: Some(start),
                });
            }
        }
        let live = ids.len() as u32;
        self.slots[slot_index as usize] = Some(Slot {
            group,
            linear,
            waves: ids,
            lds: self.group_lds,
            live,
            at_barrier: 0,
            last_arrival: 0,
            end: 0,
            multi,
        });
        Ok(())
    }

    #[inline(always)]
    fn schedule(&mut self, simd: usize, at: u64) {
        let s = &mut self.simds[simd];
        if at < s.scheduled {
            s.scheduled = at;
            self.turns.push(at, simd as u32);
        }
    }

    /// A wave's resources go back at `t` (its `s_endpgm` issued and its memory operations completed); the
    /// workgroup's too once it was the last.
    #[cold]
    #[inline(never)]
    fn end_wave(&mut self, t: u64, w: usize) -> Result<(), EngineError> {
        let (slot, simd, start) = (
            self.waves[w].slot as usize,
            self.waves[w].simd as usize,
            self.waves[w].start,
        );
        let s = &mut self.simds[simd];
        let k = s.resident[..s.len]
            .iter()
            .position(|r| r.wave as usize == w)
            .expect("resident on its SIMD");
        s.lbs.copy_within(k + 1..s.len, k);
        s.resident.copy_within(k + 1..s.len, k);
        s.len -= 1;
        s.lbs[s.len] = NEVER;
        s.vgprs -= self.waves[w].vgprs;
        s.sgprs -= self.waves[w].sgprs;
        let cu = s.cu as usize;
        self.cus[cu].waves -= 1;
        self.wave_cycles += (t - start) as u128;
        self.end = self.end.max(t);
        self.free_waves.push(w as u32);
        let sl = self.slots[slot].as_mut().expect("a resident wave's workgroup");
        sl.live -= 1;
        sl.end = sl.end.max(t);
        let (wg, index) = (sl.group.wg, self.waves[w].index);
        let executed = sl.group.waves[index as usize].executed;
        if O::ACTIVE {
            self.d.observer.event(&Event::WaveEnd {
                dispatch: self.dispatch,
                workgroup: wg,
                wave: index,
                instructions: executed,
                cycle: Some(t),
            });
        }
        if sl.live > 0 {
            return Ok(());
        }
        let sl = self.slots[slot].take().expect("checked");
        self.free_slots.push(slot as u32);
        let unit = &mut self.cus[cu];
        unit.lds -= sl.lds;
        unit.multi_groups -= sl.multi as u32;
        let xcd = unit.xcd;
        if let Some(a) = sl.group.scratch {
            let _ = self.d.mem.free(a);
        }
        self.waves_run += sl.group.waves.len() as u64;
        self.instructions += sl.group.waves.iter().map(|w| w.executed).sum::<u64>();
        let (slack, first) = self.d.slack(&sl.group);
        self.slack += slack;
        if let Some(f) = first.filter(|_| self.first_slack.as_ref().is_none_or(|(l, _)| sl.linear < *l)) {
            self.first_slack = Some((sl.linear, f));
        }
        self.groups_done += 1;
        if let Some(p) = &self.progress {
            p.done(sl.group.waves.len() as u64);
        }
        if O::ACTIVE {
            self.d.observer.event(&Event::WorkgroupEnd {
                dispatch: self.dispatch,
                workgroup: wg,
                cycle: Some(t),
            });
        }
        self.place(t, xcd)
    }

    // ---- issue ------------------------------------------------------------------------------------------

    /// The info of the instruction at `pc`, decoded through the dispatch's decode cache on first sight.
    fn info_at_pc(&mut self, pc: u64, decoded: Option<&Inst>, who: ([u32; 3], u32)) -> Result<u32, EngineError> {
        let word = (pc.wrapping_sub(self.d.launch.code.base) / 4) as usize;
        if let Some(&i) = self.info_at.get(word) {
            if i != 0 {
                return Ok(i - 1);
            }
        }
        let inst = match decoded {
            Some(i) => *i,
            None => self
                .d
                .launch
                .cache
                .get(self.d.mem, self.d.launch.code, pc)
                .map_err(|error| EngineError::IllegalInstruction {
                    kernel: self.d.launch.name.to_string(),
                    workgroup: who.0,
                    wave: who.1,
                    pc,
                    error,
                })?,
        };
        let info = InstInfo::new(&inst, self.table, self.l1_line_shift).ok_or_else(|| {
            self.fail(format!(
                "{} at {pc:#x} has no timing on {}",
                inst.info.name, self.d.device.gfx
            ))
        })?;
        if self.infos.len() >= INFO as usize {
            return Err(self.fail(format!("more than {INFO} distinct instructions ran")));
        }
        self.infos.push(info);
        let i = (self.infos.len() - 1) as u32;
        if let Some(slot) = self.info_at.get_mut(word) {
            *slot = i + 1;
        }
        Ok(i)
    }

    /// The wave's next instruction to issue (its info): the head of its queue, or the instruction at its PC.
    #[inline(always)]
    fn head(&mut self, w: usize) -> Result<u32, EngineError> {
        let wave = &mut self.waves[w];
        if wave.head.known() {
            return Ok(wave.head.info());
        }
        if wave.pos < wave.len {
            let e = wave.queue[wave.pos as usize];
            wave.head = e;
            if e.bits & WORK != 0 {
                wave.head_work = wave.work[wave.next_work as usize];
            }
            return Ok(e.info());
        }
        self.head_at_pc(w)
    }

    /// [`Model::head`] of a wave whose queue is empty: the instruction at its PC.
    #[cold]
    #[inline(never)]
    fn head_at_pc(&mut self, w: usize) -> Result<u32, EngineError> {
        let wave = &self.waves[w];
        let (slot, pc, index) = (wave.slot as usize, wave.peek_pc, wave.index);
        let wg = self.slots[slot].as_ref().expect("resident").group.wg;
        let info = self.info_at_pc(pc, None, (wg, index))?;
        self.waves[w].head = Executed {
            bits: info,
            ..Executed::UNKNOWN
        };
        Ok(info)
    }

    /// Whether [`Model::head`] finds wave `w`'s head at once: known already, or (its queue empty) at a PC the
    /// model has seen. A head in the queue is left to be looked up at a later turn, once the host has fetched
    /// the queue entry that [`Model::issue`] asked for.
    fn head_at_hand(&self, w: usize) -> bool {
        let wave = &self.waves[w];
        wave.head.known()
            || (wave.pos == wave.len
                && self
                    .info_at
                    .get((wave.peek_pc.wrapping_sub(self.d.launch.code.base) / 4) as usize)
                    .is_some_and(|&i| i != 0))
    }

    /// The constraints on wave `w`'s head (instruction info `info`) that only the wave's own issues move: its
    /// `s_waitcnt` counts and its source registers (`unit` left at 0).
    #[inline(always)]
    fn waits(&self, w: usize, info: u32) -> Constraints {
        let wave = &self.waves[w];
        let i = &self.infos[info as usize];
        let mut c = Constraints::default();
        if let Sequencer::Waitcnt(n) = i.sequencer {
            c.vm = wave.waits.vm_ready(n.vmcnt);
            c.lgkm = wave.waits.lgkm_ready(n.lgkmcnt);
        }
        c.dependency = wave.waits.operands_ready(&i.reads);
        c
    }

    /// When the unit of instruction info `info` on SIMD `s` is free for it: the part of its constraints that
    /// other waves' issues move.
    #[inline]
    fn unit_ready(&self, s: usize, info: u32) -> u64 {
        let simd = &self.simds[s];
        let i = &self.infos[info as usize];
        let unit = match i.timing.pipe {
            Pipe::Valu | Pipe::Mfma => simd.valu_free,
            Pipe::MfmaExclusive => simd.valu_free.max(simd.mfma_free),
            // the texture address unit, and room for the instruction's lines among the CU's misses in flight
            // (a wave64 access of `bytes` per lane at unit stride: the lines are known only once it executes)
            Pipe::Vmem | Pipe::Flat => self.cus[simd.cu as usize]
                .vmem_free
                .max(self.memsys.l1_room_at(0, simd.cu, i.l1_lines)),
            Pipe::Lds => self.cus[simd.cu as usize].lds_free,
            _ => 0,
        };
        if i.timing.pipe == Pipe::Mfma {
            unit.max(simd.mfma_free)
        } else {
            unit
        }
    }

    /// Looks up the head of the wave on slot `k` of SIMD `s` and the cycle its [`Model::waits`] allow it.
    #[inline(always)]
    fn look_up_head(&mut self, s: usize, k: usize) -> Result<(u32, u64), EngineError> {
        let w = self.simds[s].resident[k].wave as usize;
        let info = self.head(w)?;
        let ready = self.waits(w, info).ready();
        let r = &mut self.simds[s].resident[k];
        (r.head, r.waits_ready) = (info, ready);
        Ok((info, ready))
    }

    /// SIMD `s`'s issue turn at cycle `t`; schedules its next turn worth taking (the earliest cycle one of its
    /// waves might issue).
    fn turn(&mut self, t: u64, s: usize) -> Result<(), EngineError> {
        let mut used = 0u8;
        // the waves whose bounds allow them this turn, oldest first: an issue moves only its own wave's bound
        // (a barrier it releases sets the others' bounds past `t`), so the set is known from the start
        let mut pending = due(&self.simds[s].lbs, t);
        // the instruction whose unit was looked up last in this turn, and when that unit is free for it
        let mut known_unit = (UNKNOWN, 0);
        while pending != 0 {
            let i = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            let r = self.simds[s].resident[i];
            // the bound covers the wave's turn and holds (it is never below them), so only the head's
            // constraints remain to check: its waits, known since it last issued, and its unit's state
            let w = r.wave as usize;
            debug_assert!(
                self.waves[w].next_turn.max(self.waves[w].hold) <= self.simds[s].lbs[i],
                "the bound covers the turn and holds"
            );
            let (info, waits_ready) = if r.head == UNKNOWN {
                self.look_up_head(s, i)?
            } else {
                (r.head, r.waits_ready)
            };
            // waves at the same instruction (a vector load many wait to issue) find its unit as the last one did
            let unit = if known_unit.0 == info {
                known_unit.1
            } else {
                let unit = self.unit_ready(s, info);
                known_unit = (info, unit);
                unit
            };
            let ready = waits_ready.max(unit);
            if ready > t {
                self.simds[s].lbs[i] = ready;
                continue;
            }
            let cat = self.infos[info as usize].category;
            if used & cat.bit() != 0 {
                // its bound stays at or before `t`: the next turn comes at `t + 1` or the next on the cadence
                continue;
            }
            self.issue(t, s, w, info, ready, unit)?;
            // the issue may have taken a unit
            known_unit.0 = UNKNOWN;
            used |= cat.bit();
            let wave = &self.waves[w];
            let lb = if wave.state == State::Active {
                wave.next_turn.max(wave.hold)
            } else {
                NEVER
            };
            self.simds[s].lbs[i] = lb;
            self.simds[s].resident[i].head = UNKNOWN;
            // the next head's waits while the wave is at hand, when they need no queue entry or decoding
            if lb != NEVER && self.head_at_hand(w) {
                self.look_up_head(s, i)?;
            }
        }
        // the next turn worth taking: at the earliest bound (slots past the resident waves hold NEVER); the
        // oldest wave whose bound allows it then is the one the SIMD most likely issues first (which is not
        // always the one with the earliest bound: an older wave due by then goes first)
        let lbs = &self.simds[s].lbs;
        let next = lbs.iter().fold(NEVER, |m, &b| m.min(b));
        if next != NEVER {
            let phase = self.simds[s].phase;
            let at = align_up(next.max(t + 1), phase, self.cadence);
            let first = lbs.iter().position(|&b| b <= at).unwrap_or(0);
            self.likely[s] = self.simds[s].resident[first].wave;
            self.schedule(s, at);
        }
        Ok(())
    }

    /// Asks the host to fetch what the turn a few entries ahead will read: [`PREFETCH_AHEAD`] entries ahead,
    /// the SIMD's bounds and residents and the start of the wave it most likely issues ([`Model::likely`]):
    /// [`WAVE_PREFETCH`] bytes; [`QUEUE_PREFETCH_AHEAD`] entries ahead, that wave's head entry in its queue
    /// when the head is still to be looked up. A turn takes about as long as a host cache miss.
    #[inline]
    fn prefetch_turn(&self) {
        if let Some(x) = self.turns.ahead(PREFETCH_AHEAD).filter(|x| x & RETIRE == 0) {
            let simd = &self.simds[x as usize];
            super::prefetch_bytes(simd, 256);
            super::prefetch_bytes(&self.waves[self.likely[x as usize] as usize], WAVE_PREFETCH);
        }
        // nearer, that wave's head entry, from the queue position the fetch above brought in
        if let Some(x) = self.turns.ahead(QUEUE_PREFETCH_AHEAD).filter(|x| x & RETIRE == 0) {
            let wave = &self.waves[self.likely[x as usize] as usize];
            if !wave.head.known() && wave.pos < wave.len {
                super::prefetch(wave.queue.as_ptr().wrapping_add(wave.pos as usize));
            }
        }
    }

    /// Runs the wave on the engine at cycle `t` for up to [`RUN_AHEAD`] instructions, filling its queue
    /// (which is empty): each instruction with its next-line fetch and, for a memory instruction, its line
    /// requests and LDS bank cycles worked out from its lane accesses.
    fn run_block(&mut self, t: u64, w: usize) -> Result<(), EngineError> {
        let cx = DispatchContext {
            progress: self.progress.as_deref(),
            ..self.cx
        };
        let (slot, index) = (self.waves[w].slot as usize, self.waves[w].index);
        let sl = self.slots[slot].as_mut().expect("resident");
        let (linear, scratch) = (sl.linear, sl.group.scratch);
        let Group { wg, waves, lds, .. } = &mut sl.group;
        let wave = &mut waves[index as usize];
        if wave.vgprs.is_empty() {
            // its first block: the group was built without register files ([`Dispatch::group_registers_later`])
            self.d.give_registers(&self.template, *wg, index, wave);
        }
        wave.clock = WaveClock {
            base: self.clock.base + t,
            ..self.clock
        };
        let run = WaveRun {
            mem: self.d.mem,
            code: self.d.launch.code,
            cx: &cx,
            workgroup: *wg,
            wave_index: index,
            wave,
            lds,
            cache: self.d.launch.cache,
            limits: self.block_limits,
        };
        let known = std::mem::take(&mut self.info_at);
        LOG.with_borrow_mut(|log| {
            log.entries.clear();
            log.new.clear();
            log.acc.clear();
            log.ranges.clear();
            log.known = known;
            log.base = self.d.launch.code.base;
            log.accessing = 0;
        });
        let ran = self.d.runner.run_wave(run, &Recorder);
        if let Some(p) = cx.progress {
            p.note(&mut waves[index as usize]);
        }
        // the block's instructions and their accesses (the buffers swap places with the log's)
        let accessing = LOG.with_borrow_mut(|log| {
            self.info_at = std::mem::take(&mut log.known);
            std::mem::swap(&mut self.entries, &mut log.entries);
            std::mem::swap(&mut self.new_insts, &mut log.new);
            std::mem::swap(&mut self.block_acc, &mut log.acc);
            std::mem::swap(&mut self.block_ranges, &mut log.ranges);
            log.accessing
        });
        ran?;
        let wg = *wg;
        let (next_pc, gws) = (waves[index as usize].pc, waves[index as usize].at_grid_sync());
        if gws {
            return Err(self.fail(format!(
                "workgroup {wg:?} reached ds_gws_barrier or a GWS semaphore: grid-wide sync is not modeled"
            )));
        }
        if self.entries.is_empty() {
            return Err(self.fail(format!(
                "workgroup {wg:?} wave {index}: the engine ran no instruction at {next_pc:#x}"
            )));
        }
        if waves[index as usize].status == WaveStatus::Done {
            // the wave ran to its end: its registers are read no more, and a wave placed soon can use their memory
            self.d.keep_parts(&mut waves[index as usize]);
        }
        let entries = std::mem::take(&mut self.entries);
        let acc = std::mem::take(&mut self.block_acc);
        let ranges = std::mem::take(&mut self.block_ranges);
        let scratch = scratch.map(|base| (base, linear));
        let (line_shift, code_base) = (self.icache_line_shift, self.d.launch.code.base);
        let wave = &mut self.waves[w];
        // the queue is filled here and goes back to the wave at the end (so the loop reaches it without the wave)
        let mut queue = std::mem::take(&mut wave.queue);
        queue.clear();
        queue.reserve(entries.len());
        wave.work.clear();
        wave.work.reserve(accessing as usize);
        wave.reqs.clear();
        wave.observed.clear();
        wave.acc.clear();
        wave.ranges.clear();
        let mut new = 0;
        for (
            k,
            &Entry {
                pc,
                exec,
                info,
                acc: at,
            },
        ) in entries.iter().enumerate()
        {
            let info = if info != 0 {
                info - 1
            } else {
                let (at, inst) = self.new_insts[new];
                debug_assert_eq!(at as usize, k);
                new += 1;
                self.info_at_pc(pc, Some(&inst), (wg, index))?
            };
            let next = entries.get(k + 1).map_or(next_pc, |e| e.pc);
            let i = &self.infos[info as usize];
            let (flows, size, pipe) = (i.flows, i.size, i.timing.pipe);
            // the wave's instruction buffer holds the line of `pc`: a taken branch refetches, and so does going on
            // into another line
            let taken = flows && next != pc + size as u64;
            let mut bits = info | if taken { TAKEN | FETCH } else { 0 };
            if next >> line_shift != pc >> line_shift {
                bits |= FETCH;
            }
            // the instruction's lane accesses, looked up only where they are used
            let lanes = || at.get(&acc, &ranges);
            let work = match pipe {
                Pipe::Smem => Some(self.scalar_work(w, &lanes())),
                Pipe::Vmem | Pipe::Flat => Some(self.vector_work(w, &lanes(), scratch)),
                Pipe::Lds => Some(self.lds_work(&lanes())),
                _ => None,
            };
            if let Some(work) = work {
                self.waves[w].work.push(work);
                bits |= WORK;
            }
            // a PC below the code or 4 GiB past its start wraps here: the dispatch fails at it (the engine's fault or
            // the next head's decode) before any result depends on this entry's fetch
            queue.push(Executed {
                next_pc: next.wrapping_sub(code_base) as u32,
                bits,
            });
            if O::ACTIVE {
                let wave = &mut self.waves[w];
                let acc = if O::WANTS_ACCESSES {
                    AccAt::push(&lanes(), &mut wave.acc, &mut wave.ranges)
                } else {
                    AccAt::NONE
                };
                wave.observed.push(Observed { pc, exec, acc });
            }
        }
        self.waves[w].queue = queue;
        let wave = &mut self.waves[w];
        wave.pos = 0;
        wave.len = wave.queue.len() as u32;
        wave.peek_pc = next_pc;
        wave.ran_at = t;
        wave.head = wave.queue[0];
        wave.next_work = 0;
        if let Some(&work) = wave.work.first().filter(|_| wave.head.bits & WORK != 0) {
            wave.head_work = work;
        }
        self.entries = entries;
        self.block_acc = acc;
        self.block_ranges = ranges;
        Ok(())
    }

    /// Asks the host to bring wave `w`'s functional state (registers, PC, status) into its caches: the wave's
    /// next issue runs its next block on the engine, a few turns from now ([`STATE_COLD_AFTER`]).
    fn prefetch_state(&self, w: usize) {
        let wave = &self.waves[w];
        let Some(sl) = self.slots[wave.slot as usize].as_ref() else {
            return;
        };
        let Some(state) = sl.group.waves.get(wave.index as usize) else {
            return;
        };
        super::prefetch_bytes(state, std::mem::offset_of!(crate::wave::WaveState, windows));
        super::prefetch_bytes(state.vgprs.as_ptr(), std::mem::size_of_val(state.vgprs.as_slice()));
    }

    /// Issues wave `w`'s head (instruction info `info`) at cycle `t` on SIMD `s`, which its constraints allow
    /// from `ready` on (its unit from `unit`).
    fn issue(&mut self, t: u64, s: usize, w: usize, info: u32, ready: u64, unit: u64) -> Result<(), EngineError> {
        if self.infos[info as usize].sequencer == Sequencer::GridSync {
            return Err(self.grid_sync_refused());
        }
        if self.waves[w].pos == self.waves[w].len {
            self.run_block(t, w)?;
        }
        let wave = &mut self.waves[w];
        let at = wave.pos as usize;
        debug_assert_eq!(wave.head.bits, wave.queue[at].bits, "the head was looked up");
        let e = wave.head;
        wave.pos += 1;
        wave.head = Executed::UNKNOWN;
        let work = (e.bits & WORK != 0).then_some(wave.head_work);
        if work.is_some() {
            wave.next_work += 1;
        }
        if wave.pos < wave.len {
            // for the head's look-up at a later turn: its entry, and the next memory instruction's work
            super::prefetch(wave.queue.as_ptr().wrapping_add(at + 1));
            if (wave.next_work as usize) < wave.work.len() {
                super::prefetch(wave.work.as_ptr().wrapping_add(wave.next_work as usize));
            }
        }
        if wave.pos == wave.len && t.saturating_sub(wave.ran_at) > STATE_COLD_AFTER {
            self.prefetch_state(w);
        }
        debug_assert_eq!(e.info(), info, "the engine executed the instruction the model peeked");
        let (pipe, issue, latency, wait, sequencer) = {
            let i = &self.infos[e.info() as usize];
            (i.timing.pipe, i.issue, i.latency, i.wait, i.sequencer)
        };
        let cu_index = self.simds[s].cu as usize;
        // stalls: each cycle from the wave's turn to issue, for the first reason holding it then
        let (base, hold) = (self.waves[w].next_turn, self.waves[w].hold);
        // (`wave.hold` bounds the hold of each reason)
        let stalls = if ready.max(hold) <= base {
            // nothing held it past its turn (most issues): any cycles since are the arbitration's
            let arbitration = t.saturating_sub(base);
            self.stalls.arbitration += arbitration;
            Stalls {
                arbitration,
                ..Stalls::default()
            }
        } else {
            // which constraint held it: its waits as they were while it waited
            let c = Constraints {
                unit,
                ..self.waits(w, info)
            };
            debug_assert_eq!(c.ready(), ready, "the waits stay as they are until the wave issues");
            let wave = &self.waves[w];
            let held = |why| if wave.hold_why == why { wave.hold } else { 0 };
            let reasons = [
                c.vm,
                c.lgkm,
                held(Hold::Barrier),
                c.dependency,
                c.unit,
                held(Hold::Fetch),
                held(Hold::Sleep),
            ];
            let mut stall = [0u64; 8];
            let mut covered = base;
            for (k, &until) in reasons.iter().enumerate() {
                // the cycles from what is covered to `until` (none when it is covered already), without a branch
                let u = until.min(t);
                stall[k] = u.saturating_sub(covered);
                covered = covered.max(u);
            }
            stall[7] = t.saturating_sub(covered);
            let stalls = Stalls {
                vmcnt: stall[0],
                lgkmcnt: stall[1],
                barrier: stall[2],
                dependency: stall[3],
                unit_busy: stall[4],
                fetch: stall[5],
                sleep: stall[6],
                arbitration: stall[7],
            };
            self.stalls.add(&stalls);
            stalls
        };
        let wave = &mut self.waves[w];
        wave.waits.retire(t);
        wave.next_turn = t + self.cadence;
        wave.hold = 0;
        wave.hold_why = Hold::None;
        // the unit
        let mut done = t + issue;
        match pipe {
            Pipe::Valu => {
                self.simds[s].valu_free = t + issue;
                self.issued.valu += 1;
                self.busy.valu += issue;
            }
            Pipe::Mfma | Pipe::MfmaExclusive => {
                let simd = &mut self.simds[s];
                simd.mfma_free = t + issue;
                simd.valu_free = if pipe == Pipe::Mfma {
                    t + self.cadence
                } else {
                    t + issue
                };
                self.issued.mfma += 1;
                self.busy.mfma += issue;
            }
            Pipe::Salu => {
                self.issued.salu += 1;
                self.busy.salu += issue;
            }
            Pipe::Smem => {
                done = self.scalar_memory(t, cu_index, w, work.expect("a memory instruction's work"));
                self.issued.smem += 1;
                self.busy.smem += issue;
            }
            Pipe::Vmem | Pipe::Flat => {
                done = self.vector_memory(t, cu_index, w, work.expect("a memory instruction's work"), issue);
                self.issued.vmem += 1;
            }
            Pipe::Lds => {
                done = self.lds(t, cu_index, work.expect("a memory instruction's work"));
                self.issued.lds += 1;
            }
            Pipe::Branch | Pipe::Msg => {
                self.issued.branch += 1;
                self.busy.branch += issue;
            }
            Pipe::Internal => self.issued.internal += 1,
        }
        let wave = &mut self.waves[w];
        if let Some(l) = latency.filter(|&l| l > self.cadence) {
            let writes = &self.infos[e.info() as usize].writes;
            if !writes.is_empty() {
                wave.waits.write(t, writes, t + l);
            }
        }
        match wait {
            isa_amdgpu::table::WaitClass::Vm => wave.waits.push_vm(done),
            isa_amdgpu::table::WaitClass::Lgkm => wave.waits.push_lgkm(done),
            isa_amdgpu::table::WaitClass::VmLgkm => {
                wave.waits.push_vm(done);
                wave.waits.push_lgkm(done);
            }
            _ => {}
        }
        // the sequencer
        if let Sequencer::Hold(cycles) = sequencer {
            wave.hold = t + cycles;
            wave.hold_why = Hold::Sleep;
        }
        // the next instruction's fetch: a taken branch refills the instruction buffer; a new line may miss
        if !matches!(sequencer, Sequencer::End) && e.bits & FETCH != 0 {
            let taken = e.bits & TAKEN != 0;
            let next_pc = self.d.launch.code.base + e.next_pc as u64;
            let fetched = self
                .memsys
                .fetch_instruction(t, cu_index as u32, self.places.of(next_pc, None));
            let penalty = fetched.saturating_sub(t + self.m.icache.hit_latency);
            let extra = if taken { self.m.overheads.taken_branch } else { 0 } + penalty;
            if extra > 0 && t + self.cadence + extra > wave.hold {
                wave.hold = t + self.cadence + extra;
                wave.hold_why = Hold::Fetch;
            }
        }
        self.report(t, w, at, e.info(), stalls);
        if matches!(sequencer, Sequencer::Barrier | Sequencer::End) {
            self.arrive(t, w, sequencer);
        }
        Ok(())
    }

    /// The error of a dispatch whose wave reaches grid-wide sync.
    #[cold]
    #[inline(never)]
    fn grid_sync_refused(&self) -> EngineError {
        self.fail("ds_gws_* (grid-wide sync) is not modeled; run this dispatch without timing".into())
    }

    /// Wave `w` issued `s_barrier` or `s_endpgm` (`sequencer`) at `t`: it waits for its workgroup, or it has
    /// ended and retires once its memory operations complete; a barrier the others wait at may release.
    #[cold]
    #[inline(never)]
    fn arrive(&mut self, t: u64, w: usize, sequencer: Sequencer) {
        let slot = self.waves[w].slot as usize;
        if sequencer == Sequencer::End {
            let wave = &mut self.waves[w];
            wave.state = State::Done;
            let end = (t + 1).max(wave.waits.all_done());
            self.turns.push(end, RETIRE | w as u32);
        } else {
            self.waves[w].state = State::AtBarrier;
            let sl = self.slots[slot].as_mut().expect("resident");
            sl.at_barrier += 1;
            sl.last_arrival = sl.last_arrival.max(t);
        }
        self.release_barrier(slot, t);
    }

    /// Reports an issued instruction (the wave's queue entry `at`) to the observer.
    fn report(&self, t: u64, w: usize, at: usize, info: u32, stalls: Stalls) {
        if !O::ACTIVE {
            return;
        }
        let i = &self.infos[info as usize];
        let wave = &self.waves[w];
        let e = wave.observed[at];
        let wg = self.slots[wave.slot as usize].as_ref().expect("resident").group.wg;
        let accesses = if O::WANTS_ACCESSES {
            e.acc.get(&wave.acc, &wave.ranges)
        } else {
            Accesses::NONE
        };
        let (dispatch, index) = (self.dispatch, wave.index);
        self.d.observer.event(&Event::Instruction(InstructionEvent {
            dispatch,
            workgroup: wg,
            wave: index,
            pc: e.pc,
            opcode: i.inst.info.opcode,
            unit: i.inst.info.unit,
            exec: e.exec,
            issue: Some(Issue { cycle: t, stalls }),
            memory: i.memory,
            accesses,
        }));
        match i.sequencer {
            Sequencer::Waitcnt(n) => self.d.observer.event(&Event::Waitcnt {
                dispatch,
                workgroup: wg,
                wave: index,
                pc: e.pc,
                vmcnt: n.vmcnt,
                lgkmcnt: n.lgkmcnt,
                expcnt: n.expcnt,
                waited: Some(stalls.vmcnt + stalls.lgkmcnt),
            }),
            Sequencer::Barrier => self.d.observer.event(&Event::BarrierArrive {
                dispatch,
                workgroup: wg,
                wave: index,
                cycle: Some(t),
            }),
            _ => {}
        }
    }

    /// Releases the workgroup in `slot` from `s_barrier` when every wave that has not ended waits there (checked
    /// at cycle `t`, when a wave arrives or ends).
    fn release_barrier(&mut self, slot: usize, t: u64) {
        let sl = self.slots[slot].as_mut().expect("resident");
        let not_done = sl
            .waves
            .iter()
            .filter(|&&x| self.waves[x as usize].state != State::Done)
            .count() as u32;
        if sl.at_barrier == 0 || sl.at_barrier < not_done {
            return;
        }
        // the last wave arrived (or the last one that had not ended ended) at `t`
        let release = sl.last_arrival.max(t) + self.m.overheads.barrier_release;
        // a turn decides which of its waves are due once, at its start: a release must come after it
        debug_assert!(
            release > t,
            "a barrier releases after the turn in which its last wave arrives"
        );
        sl.at_barrier = 0;
        let wg = sl.group.wg;
        let ids = sl.waves.clone();
        for id in ids {
            let wave = &mut self.waves[id as usize];
            if wave.state != State::AtBarrier {
                continue;
            }
            wave.state = State::Active;
            if release > wave.hold {
                wave.hold = release;
                wave.hold_why = Hold::Barrier;
            }
            let lb = wave.next_turn.max(wave.hold);
            let (simd, index) = (wave.simd as usize, wave.index as usize);
            let sd = &mut self.simds[simd];
            let k = sd.resident[..sd.len]
                .iter()
                .position(|r| r.wave == id)
                .expect("resident on its SIMD");
            sd.lbs[k] = lb;
            let functional = &mut self.slots[slot].as_mut().expect("resident").group.waves[index];
            if functional.status == WaveStatus::AtBarrier {
                functional.status = WaveStatus::Running;
            }
            let at = align_up(release, self.simds[simd].phase, self.cadence);
            self.schedule(simd, at);
        }
        if O::ACTIVE {
            self.d.observer.event(&Event::BarrierRelease {
                dispatch: self.dispatch,
                workgroup: wg,
                cycle: Some(release),
            });
        }
    }

    /// A scalar memory instruction's lines for the scalar cache, from its lane accesses.
    fn scalar_work(&mut self, w: usize, acc: &Accesses<'_>) -> Work {
        let line = self.m.scalar.line_bytes as u64;
        let reqs = &mut self.waves[w].reqs;
        let start = reqs.len();
        for a in acc.iter() {
            let first = self.places.of(a.address, None);
            let end = first + a.bytes as u64;
            let mut l = first & !(line - 1);
            while l < end {
                let bytes = (end.min(l + line) - first.max(l)) as u32;
                let kind = if a.dir == Dir::Read { Kind::Read } else { Kind::Write };
                reqs.push(LineRequest { addr: l, bytes, kind });
                l += line;
            }
        }
        Work::listed(start, reqs.len(), None)
    }

    /// A vector memory instruction's device-memory lanes coalesced into L1 lines (private lanes at their
    /// workgroup's place: `scratch` is its private memory's base and linear index), and the LDS bank cycles
    /// of its FLAT lanes in the shared aperture.
    fn vector_work(&mut self, w: usize, accesses: &Accesses<'_>, scratch: Option<(u64, u64)>) -> Work {
        let line = self.m.l1.line_bytes;
        let places = &self.places;
        let (place, one_piece) = (|a| places.of(a, None), |a, n| places.one_piece(a, n));
        let range = match accesses {
            Accesses::Range(r) => contiguous_places(r, place, one_piece, line as u64),
            Accesses::Lanes(l) => contiguous_range(l, place, one_piece, line as u64),
        };
        if let Some((start, end, kind)) = range {
            return Work {
                lines: Lines::Range { start, end, kind },
                banks: None,
            };
        }
        let mut buf = std::mem::take(&mut self.lanes_buf);
        let lanes = accesses.lanes_in(&mut buf);
        let mut rounds = self.rounds.take().expect("the lane scratch");
        let places = &self.places;
        rounds.fill(
            lanes,
            |a| places.of(a.address, scratch.filter(|_| a.space == Space::Scratch)),
            |a| a.space != Space::Lds,
        );
        let reqs = &mut self.waves[w].reqs;
        let start = reqs.len();
        for r in 0..rounds.n {
            let bytes = rounds.bytes[r].clamp(1, line);
            coalesce(&rounds.addrs[r], rounds.exec[r], bytes, line, &mut self.lines);
            let kind = kind_of(rounds.dir[r]);
            reqs.extend(self.lines.iter().map(|l| LineRequest {
                addr: l.line,
                bytes: l.bytes,
                kind,
            }));
        }
        let end = reqs.len();
        rounds.fill(lanes, |a| a.address, |a| a.space == Space::Lds);
        let banks = (rounds.n > 0).then(|| bank_sums(&rounds));
        self.rounds = Some(rounds);
        self.lanes_buf = buf;
        Work::listed(start, end, banks)
    }

    /// A DS instruction's bank cycles (none for lane permutes and swizzles, which touch no bank).
    fn lds_work(&mut self, accesses: &Accesses<'_>) -> Work {
        let mut buf = std::mem::take(&mut self.lanes_buf);
        let mut rounds = self.rounds.take().expect("the lane scratch");
        rounds.fill(accesses.lanes_in(&mut buf), |a| a.address, |_| true);
        self.lanes_buf = buf;
        let banks = (rounds.n > 0).then(|| bank_sums(&rounds));
        self.rounds = Some(rounds);
        Work { banks, ..Work::NONE }
    }

    /// A scalar memory instruction's trip through the scalar cache (its work: `work`, its lines listed in wave
    /// `w`'s requests); its completion cycle.
    fn scalar_memory(&mut self, t: u64, cu: usize, w: usize, work: Work) -> u64 {
        let lines = work.lines;
        let reqs = requests(
            lines,
            &self.waves[w].reqs,
            &mut self.range_reqs,
            self.m.scalar.line_bytes as u64,
        );
        if reqs.is_empty() {
            // s_memtime, s_memrealtime, cache control: the scalar unit answers like a cache hit
            return t + self.m.scalar.hit_latency;
        }
        self.memsys.access_scalar(t, cu as u32, reqs).complete_at
    }

    /// A vector memory instruction: addresses through the texture address unit, its lines to the memory
    /// pipeline, its FLAT lanes in the shared aperture to the LDS; its completion cycle.
    fn vector_memory(&mut self, t: u64, cu: usize, w: usize, work: Work, issue: u64) -> u64 {
        let sent = t + issue;
        self.busy.vmem += issue;
        let mut done = sent;
        let mut accepted = sent;
        let Work { lines, banks } = work;
        let reqs = requests(
            lines,
            &self.waves[w].reqs,
            &mut self.range_reqs,
            self.m.l1.line_bytes as u64,
        );
        if !reqs.is_empty() {
            let r = self.memsys.access(sent, cu as u32, reqs);
            done = done.max(r.complete_at);
            accepted = accepted.max(r.accepted_at);
        }
        if let Some(banks) = banks {
            done = done.max(self.lds_banks(t, cu, banks));
        }
        let unit = &mut self.cus[cu];
        unit.vmem_free = unit.vmem_free.max(accepted).max(t + issue);
        done
    }

    /// A DS instruction: its lanes' bank conflicts on the CU's LDS; its completion cycle.
    fn lds(&mut self, t: u64, cu: usize, work: Work) -> u64 {
        match work.banks {
            Some(banks) => self.lds_banks(t, cu, banks),
            None => {
                // lane permutes and swizzles pass through the LDS crossbar without touching banks
                let unit = &mut self.cus[cu];
                let cycles = 2;
                unit.lds_free = unit.lds_free.max(t + cycles);
                self.busy.lds += cycles;
                t + self.m.lds.latency + cycles
            }
        }
    }

    /// The LDS busy for `banks` (bank cycles, conflict cycles) from cycle `t`; the completion cycle.
    fn lds_banks(&mut self, t: u64, cu: usize, (cycles, conflicts): (u64, u64)) -> u64 {
        self.lds_conflicts += conflicts;
        let cycles = cycles.max(1);
        let unit = &mut self.cus[cu];
        let start = t.max(unit.lds_free);
        unit.lds_free = start + cycles;
        self.busy.lds += cycles;
        start + self.m.lds.latency + cycles
    }
}

/// The range `[start, end)` (at the places `place` gives addresses) and the kind of access of a vector memory
/// instruction whose lanes 0..n each access the `bytes` after the previous one's, outside private memory and
/// the LDS, one access each, alike in size and direction, at most a `line` each; `None` for any other pattern.
/// [`range_lines`] gives its line requests as coalescing lane by lane would. `one_piece(addr, len)` says
/// whether `place` maps the `len` bytes from `addr` as one piece; lanes contiguous in such a piece are
/// contiguous places without each lane's place worked out.
fn contiguous_range(
    lanes: &[LaneAccess],
    place: impl Fn(u64) -> u64,
    one_piece: impl Fn(u64, u64) -> bool,
    line: u64,
) -> Option<(u64, u64, Kind)> {
    let first = lanes.first()?;
    let (space, dir, bytes) = (first.space, first.dir, first.bytes as u64);
    if lanes.len() > 64 || matches!(space, Space::Lds | Space::Scratch) || bytes == 0 || bytes > line {
        return None;
    }
    let alike =
        |i: usize, a: &LaneAccess| a.lane as usize == i && a.space == space && a.dir == dir && a.bytes as u64 == bytes;
    let (raw, len) = (first.address, lanes.len() as u64 * bytes);
    let raw_contiguous = || {
        lanes
            .iter()
            .enumerate()
            .all(|(i, a)| alike(i, a) && a.address == raw.wrapping_add(i as u64 * bytes))
    };
    let start = place(raw);
    if !(one_piece(raw, len) && raw_contiguous()) {
        for (i, a) in lanes.iter().enumerate() {
            if !alike(i, a) || place(a.address) != start.wrapping_add(i as u64 * bytes) {
                return None;
            }
        }
    }
    let end = start.checked_add(len)?;
    Some((start, end, kind_of(dir)))
}

/// [`contiguous_range`] of the lanes of `r` (whose device addresses are contiguous already): lanes 0..n at
/// most a `line` each, contiguous at their places too.
fn contiguous_places(
    r: &LaneRange,
    place: impl Fn(u64) -> u64,
    one_piece: impl Fn(u64, u64) -> bool,
    line: u64,
) -> Option<(u64, u64, Kind)> {
    let n = r.leading()?;
    let bytes = r.bytes as u64;
    if bytes > line {
        return None;
    }
    let len = n as u64 * bytes;
    let start = place(r.base);
    if !one_piece(r.base, len) && (0..n).any(|i| place(r.address(i)) != start.wrapping_add(i as u64 * bytes)) {
        return None;
    }
    let end = start.checked_add(len)?;
    Some((start, end, kind_of(r.dir)))
}

/// The line requests' kind of an access's direction.
fn kind_of(dir: Dir) -> Kind {
    match dir {
        Dir::Read => Kind::Read,
        Dir::Write => Kind::Write,
        Dir::Atomic => Kind::Atomic,
    }
}

/// The line requests of the range `[start, end)` of `kind`, appended to `out`: the `line`-byte lines it
/// covers, as [`coalesce`] finds them for lanes that cover it one after the other (each line once, in address
/// order, with the bytes of the range inside it).
fn range_lines(start: u64, end: u64, kind: Kind, line: u64, out: &mut Vec<LineRequest>) {
    let mut l = start & !(line - 1);
    while l < end {
        let next = l.saturating_add(line);
        out.push(LineRequest {
            addr: l,
            bytes: (next.min(end) - l.max(start)) as u32,
            kind,
        });
        l = next;
    }
}

/// The line requests `lines` stands for: listed in `reqs` (a wave's), or made into `scratch` (`line`-byte lines).
#[inline(always)]
fn requests<'a>(
    lines: Lines,
    reqs: &'a [LineRequest],
    scratch: &'a mut Vec<LineRequest>,
    line: u64,
) -> &'a [LineRequest] {
    match lines {
        Lines::Listed { start, len } => &reqs[start as usize..(start + len) as usize],
        Lines::Range { start, end, kind } => {
            scratch.clear();
            range_lines(start, end, kind, line, scratch);
            scratch
        }
    }
}

/// The bank cycles and conflict cycles of `rounds`' lanes, summed over rounds.
fn bank_sums(rounds: &Rounds) -> (u64, u64) {
    let (mut cycles, mut conflicts) = (0u64, 0u64);
    for r in 0..rounds.n {
        let addrs: [u32; 64] = std::array::from_fn(|l| rounds.addrs[r][l] as u32);
        let b = bank_cycles(
            &addrs,
            rounds.exec[r],
            rounds.bytes[r].max(1),
            rounds.dir[r] == Dir::Read,
        );
        cycles += b.cycles as u64;
        conflicts += b.conflict_cycles as u64;
    }
    (cycles, conflicts)
}

/// A memory instruction's lane accesses split into rounds of at most one access per lane (two-address DS
/// forms make two rounds). Reused from instruction to instruction: only the active lanes' addresses of a
/// round mean anything.
struct Rounds {
    n: usize,
    addrs: [[u64; 64]; 4],
    exec: [u64; 4],
    bytes: [u32; 4],
    dir: [Dir; 4],
}

impl Rounds {
    fn new() -> Box<Rounds> {
        Box::new(Rounds {
            n: 0,
            addrs: [[0; 64]; 4],
            exec: [0; 4],
            bytes: [0; 4],
            dir: [Dir::Read; 4],
        })
    }

    /// The accesses of `lanes` that `want` keeps, at the addresses `place` gives them.
    fn fill(&mut self, lanes: &[LaneAccess], place: impl Fn(&LaneAccess) -> u64, want: impl Fn(&LaneAccess) -> bool) {
        self.n = 0;
        self.exec = [0; 4];
        self.bytes = [0; 4];
        for a in lanes.iter().filter(|a| want(a)) {
            let l = (a.lane & 63) as usize;
            let mut r = 0;
            while r < 3 && self.exec[r] >> l & 1 == 1 {
                r += 1;
            }
            self.addrs[r][l] = place(a);
            self.exec[r] |= 1 << l;
            self.bytes[r] = self.bytes[r].max(a.bytes);
            self.dir[r] = a.dir;
            self.n = self.n.max(r + 1);
        }
    }
}

/// The turns to come, by cycle: a ring of buckets for the next [`Wheel::SPAN`] cycles and a heap beyond.
/// Entries of one cycle come out in the order they went in. A bucket is a plain vector read from a cursor
/// (only the current cycle's is being read) and emptied, keeping its room, once its cycle has passed.
struct Wheel {
    buckets: Vec<Vec<u32>>,
    /// The cycle of the bucket at the front; every entry is at this cycle or later.
    now: u64,
    /// How many of the front bucket's entries were taken.
    cursor: usize,
    /// Entries in the buckets not taken yet.
    near: usize,
    far: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Orders far entries of one cycle by arrival.
    seq: u64,
}

impl Wheel {
    const SPAN: u64 = 4096;

    fn new() -> Wheel {
        Wheel {
            buckets: (0..Self::SPAN).map(|_| Vec::new()).collect(),
            now: 0,
            cursor: 0,
            near: 0,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }

    #[inline(always)]
    fn push(&mut self, at: u64, x: u32) {
        debug_assert!(at >= self.now, "turns are never scheduled in the past");
        if at < self.now + Self::SPAN {
            self.buckets[(at % Self::SPAN) as usize].push(x);
            self.near += 1;
        } else {
            self.seq += 1;
            self.far.push(Reverse((at, self.seq, x)));
        }
    }

    /// The first entry (its cycle and value), without taking it.
    #[inline(always)]
    fn peek(&mut self) -> Option<(u64, u32)> {
        loop {
            let front = &mut self.buckets[(self.now % Self::SPAN) as usize];
            if let Some(&x) = front.get(self.cursor) {
                return Some((self.now, x));
            }
            // the front cycle is done: on to the next one with entries
            front.clear();
            self.cursor = 0;
            if self.near == 0 {
                let Reverse((at, _, _)) = *self.far.peek()?;
                self.now = at;
            } else {
                self.now += 1;
            }
            // far entries now within the ring go in before any entry pushed from here on
            while let Some(&Reverse((at, _, x))) = self.far.peek() {
                if at >= self.now + Self::SPAN {
                    break;
                }
                self.far.pop();
                self.buckets[(at % Self::SPAN) as usize].push(x);
                self.near += 1;
            }
        }
    }

    /// The entry `d` places after the one [`Wheel::pop`] took last, when it is in the same cycle.
    #[inline]
    fn ahead(&self, d: usize) -> Option<u32> {
        self.buckets[(self.now % Self::SPAN) as usize]
            .get(self.cursor + d - 1)
            .copied()
    }

    /// Takes the entry [`Wheel::peek`] showed.
    #[inline]
    fn pop(&mut self) {
        self.cursor += 1;
        self.near -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorder_ends_a_run_after_the_memory_instruction_that_passes_the_lane_bound() {
        // ds_read_b32 v1, v2 (gfx90a): 64 lane records per wave-wide access
        let inst = isa_amdgpu::decode(
            &[0x00, 0x00, 0x6c, 0xd8, 0x02, 0x00, 0x00, 0x01],
            0,
            isa_amdgpu::Target::Gfx90a,
        )
        .expect("ds_read_b32");
        let lanes: Vec<LaneAccess> = (0..64)
            .map(|l| LaneAccess {
                lane: l as u8,
                space: Space::Lds,
                dir: Dir::Read,
                bytes: 4,
                address: 4 * l * 7,
            })
            .collect();
        let range = Accesses::Range(LaneRange {
            space: Space::Global,
            dir: Dir::Read,
            bytes: 4,
            base: 0x1000,
            lanes: u64::MAX,
        });
        LOG.with_borrow_mut(|log| log.acc.clear());
        let mut ended_at = None;
        for k in 1..=20 {
            // a range between the records: it counts no lane records
            for accesses in [Accesses::Lanes(Cow::Borrowed(&lanes)), range.clone()] {
                let ev = InstEvent {
                    workgroup: [0; 3],
                    wave: 0,
                    pc: 0,
                    inst: &inst,
                    exec: u64::MAX,
                    accesses,
                };
                Recorder.instruction(&ev);
                if Recorder.switch_wave(&ev) && ended_at.is_none() {
                    ended_at = Some(k);
                }
            }
        }
        LOG.with_borrow_mut(|log| {
            log.entries.clear();
            log.new.clear();
            log.acc.clear();
            log.ranges.clear();
        });
        assert_eq!(
            ended_at,
            Some(MAX_QUEUED_LANES / 64 + 1),
            "the run ends after the access that passes {MAX_QUEUED_LANES} lanes"
        );
    }

    /// `due` gives exactly the bounds at or before the cycle, however the slots hold them.
    #[test]
    fn due_bounds_are_those_at_or_before_the_cycle() {
        // around the cycle, far from it, and empty slots, in every slot position
        let values = [0, 1, 99, 100, 101, 1 << 40, NEVER - 1, NEVER];
        for t in [0, 1, 100, (1 << 40) - 1, 1 << 40, NEVER - 2] {
            for shift in 0..MAX_WAVES {
                let lbs: [u64; MAX_WAVES] = std::array::from_fn(|j| values[(j + shift) % values.len()]);
                let want = (0..MAX_WAVES).fold(0u32, |m, j| m | ((lbs[j] <= t) as u32) << j);
                assert_eq!(due(&lbs, t), want, "bounds {lbs:?} at cycle {t}");
            }
        }
    }

    #[test]
    fn what_a_turn_reads_lies_where_the_prefetches_reach() {
        // a SIMD in 256 bytes; a wave's head and its work in one host cache line, then its holds and where its
        // queue and work are, then the completions every issue reads, in the first 192 bytes
        assert_eq!(std::mem::size_of::<Resident>(), 16);
        assert_eq!(std::mem::size_of::<Simd>(), 256);
        assert!(std::mem::offset_of!(Wave, head_work) + std::mem::size_of::<Work>() <= 64);
        assert!(std::mem::offset_of!(Wave, waits) + WaveWaits::FIRST_BYTES <= WAVE_PREFETCH);
        assert_eq!(std::mem::size_of::<Executed>(), 8);
    }

    fn coalesced(lanes: &[LaneAccess], line: u32) -> Vec<LineRequest> {
        let mut rounds = Rounds::new();
        rounds.fill(lanes, |a| a.address, |a| a.space != Space::Lds);
        let (mut lines, mut out) = (Vec::new(), Vec::new());
        for r in 0..rounds.n {
            coalesce(
                &rounds.addrs[r],
                rounds.exec[r],
                rounds.bytes[r].clamp(1, line),
                line,
                &mut lines,
            );
            let kind = kind_of(rounds.dir[r]);
            out.extend(lines.iter().map(|l| LineRequest {
                addr: l.line,
                bytes: l.bytes,
                kind,
            }));
        }
        out
    }

    #[test]
    fn places_map_a_range_as_one_piece_only_inside_one_region() {
        let places = Places {
            arena: 0x1000,
            moving: [(0x5000, 0x100), (0x6000, 0x40), (0x7000, 0x40)],
            scratch_group: 0,
        };
        let cases = [
            ((0x5000, 0x100), true),
            ((0x5010, 0x10), true),
            ((0x4ff0, 0x20), false),
            ((0x50f0, 0x20), false),
            ((0x2000, 0x100), true),
            ((0x6000, 0x40), true),
            ((0x5f00, 0x200), false),
            ((0x7000, 0x40), true),
            ((0x7020, 0x40), false),
            ((0x6fc0, 0x40), true),
            ((u64::MAX - 4, 8), false),
        ];
        for ((addr, len), one) in cases {
            assert_eq!(places.one_piece(addr, len), one, "{len:#x} bytes from {addr:#x}");
            if one {
                let first = places.of(addr, None);
                assert!(
                    (0..len).all(|k| places.of(addr + k, None) == first + k),
                    "{len:#x} bytes from {addr:#x}"
                );
            }
        }
    }

    #[test]
    fn contiguous_lanes_give_the_lines_coalescing_gives() {
        let mut seen = 0;
        for line in [64u32, 128] {
            for bytes in [1u32, 2, 4, 8, 12, 16] {
                for n in [1usize, 2, 7, 31, 32, 63, 64] {
                    for offset in [0u64, 1, 4, 12, 60, 62, 124] {
                        for dir in [Dir::Read, Dir::Write, Dir::Atomic] {
                            let base = 0x10_0000 + offset;
                            let lanes: Vec<LaneAccess> = (0..n)
                                .map(|i| LaneAccess {
                                    lane: i as u8,
                                    space: Space::Global,
                                    dir,
                                    bytes,
                                    address: base + i as u64 * bytes as u64,
                                })
                                .collect();
                            let range = LaneRange::of(&lanes).expect("one range");
                            for one_piece in [true, false] {
                                let mut fast = Vec::new();
                                let (start, end, kind) =
                                    contiguous_range(&lanes, |a| a, |_, _| one_piece, line as u64).expect("contiguous");
                                range_lines(start, end, kind, line as u64, &mut fast);
                                assert_eq!(
                                    fast,
                                    coalesced(&lanes, line),
                                    "line {line}, {bytes} bytes x {n} lanes from {base:#x}"
                                );
                                // the range the engines deliver for these lanes finds the same
                                assert_eq!(
                                    contiguous_places(&range, |a| a, |_, _| one_piece, line as u64),
                                    Some((start, end, kind))
                                );
                            }
                            // a lane missing, or lanes that are contiguous only in device memory, not at their places
                            if n > 1 {
                                let without_lane_0 = LaneRange {
                                    lanes: range.lanes & !1,
                                    ..range
                                };
                                assert_eq!(
                                    contiguous_places(&without_lane_0, |a| a, |_, _| true, line as u64),
                                    None
                                );
                            }
                            let place = |a: u64| if a >= base + bytes as u64 { a + 4096 } else { a };
                            assert_eq!(
                                contiguous_places(&range, place, |_, _| false, line as u64).is_some(),
                                n == 1
                            );
                            seen += 1;
                        }
                    }
                }
            }
        }
        assert!(seen > 1000);
        // anything else takes the general path
        let lane = |i: u8, address: u64| LaneAccess {
            lane: i,
            space: Space::Global,
            dir: Dir::Read,
            bytes: 4,
            address,
        };
        assert!(
            contiguous_range(&[lane(0, 0x100), lane(1, 0x108)], |a| a, |_, _| true, 64).is_none(),
            "a gap"
        );
        assert!(
            contiguous_range(&[lane(1, 0x100), lane(2, 0x104)], |a| a, |_, _| true, 64).is_none(),
            "lane 0 inactive"
        );
        assert!(
            contiguous_range(&[lane(0, 0x104), lane(1, 0x100)], |a| a, |_, _| true, 64).is_none(),
            "descending"
        );
        let scratch = LaneAccess {
            space: Space::Scratch,
            ..lane(0, 0x100)
        };
        assert!(
            contiguous_range(&[scratch], |a| a, |_, _| true, 64).is_none(),
            "private memory has places of its own"
        );
        assert!(
            contiguous_range(
                &[
                    lane(0, 0x100),
                    LaneAccess {
                        dir: Dir::Write,
                        ..lane(1, 0x104)
                    }
                ],
                |a| a,
                |_, _| true,
                64
            )
            .is_none(),
            "mixed directions"
        );
        // lanes that are contiguous only at their places, across two pieces of the map
        let place = |a: u64| if a >= 0x1000 { a - 0x1000 + 0x104 } else { a };
        let across = [lane(0, 0x100), lane(1, 0x1000)];
        assert_eq!(
            contiguous_range(&across, place, |a, n| a + n <= 0x1000, 64),
            Some((0x100, 0x108, Kind::Read))
        );
        assert!(contiguous_range(&[lane(0, 0x100), lane(1, 0x104)], |a| a, |_, _| true, 64).is_some());
    }
}
