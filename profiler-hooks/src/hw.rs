//! Hardware-named counters over the observation seam ([`HwCounters`]), and the per-wave instruction trace of
//! timing mode ([`WaveTrace`]).
//!
//! The exact counters ([`crate::catalog::EXACT`]) come from the instruction table's columns (unit, encoding,
//! memory access, arithmetic kind and type, MFMA shape), EXEC and every lane's access: the same events on the
//! interpreter and the JIT, so the same counts. Coalescing (`TCP_TOTAL_CACHE_ACCESSES`) and LDS bank cycles
//! use the timing model's own definitions (an instruction's accesses as `emu_core::timing::rounds::Rounds`,
//! coalesced into lines and served bank by bank), so in timing mode the exact L1 line count equals the
//! model's L1 lookups for device-memory lanes and the bank-conflict count its conflict cycles. The modeled counters
//! ([`crate::catalog::MODELED`]) are read from a dispatch's `TimingStats` and the waves' modeled start and end
//! cycles.
//!
//! Counting is sharded per host thread (workgroups run on a pool): each thread adds to counts only it writes,
//! with plain loads and stores rather than locked read-modify-writes, and reading sums the shards. Runs of
//! instructions without memory accesses arrive from the JIT as batches ([`Observer::batch_event`]), counted
//! in one go.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use emu_core::observe::{
    Dir, Event, InstBatch, InstructionEvent, LaneAccess, LaneRange, Observer, Placement, Space, Stalls,
};
use emu_core::timing::cache::LineUse;
use emu_core::timing::inst::{Pipe, TimingTable};
use emu_core::timing::rounds::Rounds;
use emu_core::timing::TimingStats;
use isa_amdgpu::encoding::Encoding;
use isa_amdgpu::table::{ArithKind, DataType, Unit};
use isa_amdgpu::{Opcode, Target};

use crate::catalog::{Modeled, EXACT, MODELED};

/// Indices of the exact counters (the order of [`EXACT`]).
pub use crate::catalog::idx;

/// The VALU arithmetic counters: `VALU_ARITH + 4 * precision + kind`, precision f16, f32, f64; kind add, mul,
/// fma, trans.
const VALU_ARITH: usize = idx::VALU_ADD_F16;
/// The MOPS counters: `MFMA_MOPS + input type`, f16, bf16, f32, f64.
const MFMA_MOPS: usize = idx::MFMA_MOPS_F16;
// the catalogue lists each group's rows in those orders
const _: () = assert!(
    idx::VALU_MUL_F16 == VALU_ARITH + 1
        && idx::VALU_FMA_F16 == VALU_ARITH + 2
        && idx::VALU_TRANS_F16 == VALU_ARITH + 3
        && idx::VALU_ADD_F32 == VALU_ARITH + 4
        && idx::VALU_MUL_F32 == VALU_ARITH + 5
        && idx::VALU_FMA_F32 == VALU_ARITH + 6
        && idx::VALU_TRANS_F32 == VALU_ARITH + 7
        && idx::VALU_ADD_F64 == VALU_ARITH + 8
        && idx::VALU_MUL_F64 == VALU_ARITH + 9
        && idx::VALU_FMA_F64 == VALU_ARITH + 10
        && idx::VALU_TRANS_F64 == VALU_ARITH + 11
        && idx::MFMA_MOPS_BF16 == MFMA_MOPS + 1
        && idx::MFMA_MOPS_F32 == MFMA_MOPS + 2
        && idx::MFMA_MOPS_F64 == MFMA_MOPS + 3
);

/// One host thread's counts for one [`HwCounters`]: that thread is the only writer.
#[repr(align(128))]
struct Shard([AtomicU64; idx::COUNT]);

impl Default for Shard {
    fn default() -> Shard {
        Shard(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl Shard {
    /// Adds `n` to counter `i` (a load and a store: only the owning thread writes).
    fn add(&self, i: usize, n: u64) {
        let c = &self.0[i];
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }
}

/// The shards a thread writes, by the number of their [`HwCounters`], most recently created first.
const MINE: usize = 4;

/// What the counters need to know of an opcode, from its table row.
#[derive(Clone, Copy, Default)]
struct Class {
    /// Counters one instruction adds 1 to (SQ_INSTS and its classes), the first `n` of them.
    incs: [u8; 6],
    n: u8,
    /// A VALU instruction: its active lanes go to SQ_THREAD_INSTS_VALU.
    valu: bool,
    /// FLAT, GLOBAL or SCRATCH encoding (the texture address unit's "flat" instructions).
    flat_family: bool,
    /// (MOPS counter, math operations per instruction).
    mops: Option<(usize, u64)>,
}

impl Class {
    fn push(&mut self, counter: usize) {
        self.incs[self.n as usize] = counter as u8;
        self.n += 1;
    }
}

fn classes() -> &'static [Class] {
    static CLASSES: OnceLock<Vec<Class>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let timing = TimingTable::of(Target::Gfx90a);
        Opcode::ALL
            .iter()
            .map(|&op| {
                let Some(row) = isa_amdgpu::table::rows_of(op, Target::Gfx90a)
                    .next()
                    .or_else(|| isa_amdgpu::table::rows_of(op, Target::Gfx942).next())
                else {
                    return Class::default();
                };
                let precision = |t: DataType| match t {
                    DataType::F16 => Some(0),
                    DataType::F32 => Some(1),
                    DataType::F64 => Some(2),
                    _ => None,
                };
                let arith = row.arith.filter(|a| a.kind != ArithKind::Mfma).and_then(|a| {
                    let kind = match a.kind {
                        ArithKind::Add => 0,
                        ArithKind::Mul => 1,
                        ArithKind::Fma => 2,
                        _ => 3,
                    };
                    precision(a.ty).map(|p| VALU_ARITH + 4 * p + kind)
                });
                let mops = row.mfma.and_then(|m| {
                    let t = match m.input {
                        DataType::F16 => 0,
                        DataType::Bf16 => 1,
                        DataType::F32 | DataType::Xf32 => 2,
                        DataType::F64 => 3,
                        _ => return None,
                    };
                    Some((MFMA_MOPS + t, 2 * m.macs()))
                });
                let enc = row.encoding;
                let valu = matches!(row.unit, Unit::Valu | Unit::Trans | Unit::F64 | Unit::Mfma);
                let mut c = Class {
                    valu,
                    flat_family: matches!(enc, Encoding::Flat | Encoding::Global | Encoding::Scratch),
                    mops,
                    ..Class::default()
                };
                c.push(idx::INSTS);
                // the sequencer's own instructions (s_nop, s_waitcnt, s_barrier, s_endpgm) are not SALU work,
                // as in the timing model
                let salu = row.unit == Unit::Salu && timing.get(op).is_none_or(|t| t.pipe != Pipe::Internal);
                for (is, counter) in [
                    (valu, idx::VALU),
                    (salu, idx::SALU),
                    (row.unit == Unit::Smem, idx::SMEM),
                    (row.unit == Unit::Branch, idx::BRANCH),
                    (enc == Encoding::Ds, idx::LDS),
                    (enc == Encoding::Flat, idx::FLAT),
                    (row.mfma.is_some(), idx::MFMA),
                ] {
                    if is {
                        c.push(counter);
                    }
                }
                if let Some(a) = arith {
                    c.push(a);
                }
                c
            })
            .collect()
    })
}

/// What a run of instructions without memory accesses adds whatever EXEC is (summed over its instructions'
/// classes), and which of them add their active lanes (bit k: instruction k): runs recur (a block's, a loop's),
/// so each is summed once per thread.
struct RunClass {
    /// The run's instructions, by address and opcode (an address alone could be another block's later).
    first: usize,
    ops: Vec<Opcode>,
    adds: Vec<(u8, u64)>,
    valu: u64,
}

impl RunClass {
    /// The class of the run `insts` (at most 64 instructions: a block's), from `runs` or made there.
    fn of<'r>(runs: &'r mut [Option<RunClass>; RUN_SLOTS], insts: &[isa_amdgpu::Inst]) -> &'r RunClass {
        let first = insts.as_ptr() as usize;
        let slot = (first >> 4 ^ insts.len()) % RUN_SLOTS;
        let hit = runs[slot].as_ref().is_some_and(|r| {
            r.first == first && r.ops.len() == insts.len() && r.ops.iter().zip(insts).all(|(&o, i)| o == i.info.opcode)
        });
        if !hit {
            let mut sums = [0u64; idx::COUNT];
            let mut valu = 0u64;
            for (k, inst) in insts.iter().enumerate().take(64) {
                let c = classes()[inst.info.opcode as usize];
                for &i in &c.incs[..c.n as usize] {
                    sums[i as usize] += 1;
                }
                if let Some((i, ops)) = c.mops {
                    sums[i] += ops;
                }
                if c.valu {
                    valu |= 1 << k;
                }
            }
            let adds = sums
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| (i as u8, n))
                .collect();
            runs[slot] = Some(RunClass {
                first,
                ops: insts.iter().map(|i| i.info.opcode).collect(),
                adds,
                valu,
            });
        }
        runs[slot].as_ref().expect("found or made")
    }
}

/// Slots of a thread's cache of run classes.
const RUN_SLOTS: usize = 256;

thread_local! {
    static SCRATCH: RefCell<(Rounds, Vec<LineUse>, Vec<LaneAccess>)> = RefCell::new((Rounds::new(), Vec::new(), Vec::new()));
    static RUNS: RefCell<Box<[Option<RunClass>; RUN_SLOTS]>> = RefCell::new(Box::new(std::array::from_fn(|_| None)));
    static SHARDS_OF_THREAD: RefCell<[(u64, Option<Arc<Shard>>); MINE]> = const { RefCell::new([(0, None), (0, None), (0, None), (0, None)]) };
}

/// One traced instruction of a wave (timing mode).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TracedInst {
    pub pc: u64,
    pub mnemonic: String,
    /// Issue cycle from the dispatch's start.
    pub cycle: u64,
    pub stalls: Stalls,
}

/// One traced wave: where it ran, when, and each instruction's issue and stalls.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TracedWave {
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub placement: Option<Placement>,
    pub start: u64,
    pub end: Option<u64>,
    pub instructions: Vec<TracedInst>,
}

/// The first `limit` waves of a timed dispatch, instruction by instruction (`--wave-trace N`). A wave keeps
/// at most [`WaveTrace::MAX_INSTRUCTIONS`] instructions.
#[derive(Debug, Default)]
pub struct WaveTrace {
    pub limit: usize,
    pub waves: Vec<TracedWave>,
    index: HashMap<([u32; 3], u32), usize>,
}

impl WaveTrace {
    pub const MAX_INSTRUCTIONS: usize = 100_000;
}

/// Modeled lifetimes of the waves (timing mode).
#[derive(Debug, Default)]
struct WaveSpans {
    started: HashMap<([u32; 3], u32), u64>,
    wave_cycles: u64,
    first_start: Option<u64>,
    last_end: u64,
}

/// The hardware-named counters of one dispatch (or of several, summed): an [`Observer`] that wants every
/// lane's access. Make one per dispatch to get per-dispatch counts.
pub struct HwCounters {
    line_bytes: u32,
    /// Tells this one's shards from other counters' in a thread's [`SHARDS_OF_THREAD`].
    id: u64,
    shards: Mutex<Vec<Arc<Shard>>>,
    spans: Mutex<WaveSpans>,
    trace: Option<Mutex<WaveTrace>>,
}

impl HwCounters {
    /// Counters for dispatches on `device` (its L1 line size defines `TCP_TOTAL_CACHE_ACCESSES`), tracing the
    /// first `wave_trace` waves' instructions in timing mode (0: none).
    pub fn new(device: &emu_core::DevicePreset, wave_trace: usize) -> HwCounters {
        let line_bytes = emu_core::timing::machine::Machine::of(device).l1.line_bytes;
        HwCounters {
            line_bytes,
            id: {
                static NEXT: AtomicU64 = AtomicU64::new(1);
                NEXT.fetch_add(1, Ordering::Relaxed)
            },
            shards: Mutex::default(),
            spans: Mutex::default(),
            trace: (wave_trace > 0).then(|| {
                Mutex::new(WaveTrace {
                    limit: wave_trace,
                    ..WaveTrace::default()
                })
            }),
        }
    }

    /// `f` on this thread's shard (made and registered on first use; a thread that has since written to
    /// [`MINE`] newer counters gets another, which is as good).
    fn with_shard<R>(&self, f: impl FnOnce(&Shard) -> R) -> R {
        SHARDS_OF_THREAD.with_borrow_mut(|mine| {
            let k = match mine.iter().position(|(id, s)| *id == self.id && s.is_some()) {
                Some(k) => k,
                None => {
                    let s = Arc::new(Shard::default());
                    self.shards.lock().unwrap_or_else(|e| e.into_inner()).push(s.clone());
                    mine.rotate_right(1);
                    mine[0] = (self.id, Some(s));
                    0
                }
            };
            f(mine[k].1.as_deref().expect("found or made"))
        })
    }

    /// The exact counts, in the order of [`EXACT`] (MOPS counters in units of 512 operations).
    pub fn exact(&self) -> [u64; idx::COUNT] {
        let mut v = [0u64; idx::COUNT];
        for s in self.shards.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            for (i, c) in s.0.iter().enumerate() {
                v[i] += c.load(Ordering::Relaxed);
            }
        }
        for m in &mut v[MFMA_MOPS..=idx::MFMA_MOPS_F64] {
            *m /= 512;
        }
        v
    }

    /// Every exact counter by name; with the timing model's statistics of the dispatch, every modeled one too.
    pub fn values(&self, timing: Option<&TimingStats>) -> Vec<(&'static str, u64)> {
        let exact = self.exact();
        let mut out: Vec<(&'static str, u64)> = EXACT.iter().zip(exact).map(|(c, v)| (c.name, v)).collect();
        if let Some(t) = timing {
            let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
            let busy = spans.first_start.map_or(0, |s| spans.last_end.saturating_sub(s));
            let m = &t.memory;
            let l1_line = emu_core::timing::machine::Machine::by_preset(&t.device)
                .map_or(self.line_bytes, |m| m.l1.line_bytes) as u64;
            let value = |c: Modeled| match c {
                Modeled::GrbmCount => t.cycles,
                Modeled::GrbmGuiActive => t.cycles,
                Modeled::SqWaveCycles => spans.wave_cycles,
                Modeled::SqBusyCycles => busy,
                Modeled::SqWaitInstAny => t.stalls.total(),
                Modeled::SqActiveInstValu => t.busy.valu + t.busy.mfma,
                Modeled::SqActiveInstSalu => t.busy.salu,
                Modeled::SqActiveInstLds => t.busy.lds,
                Modeled::SqActiveInstVmem => t.busy.vmem,
                Modeled::TcpTccReadReq => m.l1.fill_bytes / l1_line,
                Modeled::TcpTccWriteReq => m.l1.writes,
                Modeled::TcpTccAtomicReq => m.l1.atomics,
                Modeled::TccReq => m.l2.requests,
                Modeled::TccHit => m.l2.hits,
                Modeled::TccMiss => m.l2.misses,
                Modeled::TccEaRdreq => m.l2.fill_bytes / 64,
                Modeled::TccEaWrreq => m.l2.writeback_bytes / 64,
                Modeled::MallHit => m.mall.hits,
                Modeled::MallMiss => m.mall.misses,
                Modeled::HbmReadBytes => m.hbm.bytes_read,
                Modeled::HbmWriteBytes => m.hbm.bytes_written,
                Modeled::SqValuMfmaBusyCycles => t.busy.mfma,
                Modeled::SqActiveInstAny => spans.wave_cycles.saturating_sub(t.stalls.total()),
            };
            out.extend(MODELED.iter().zip(Modeled::ALL).map(|(c, id)| (c.name, value(id))));
        }
        out
    }

    /// The traced waves (empty without `wave_trace` or outside timing mode).
    pub fn take_trace(&self) -> Vec<TracedWave> {
        self.trace
            .as_ref()
            .map(|t| std::mem::take(&mut t.lock().unwrap_or_else(|e| e.into_inner()).waves))
            .unwrap_or_default()
    }

    /// What an instruction without memory accesses adds: its classes, active VALU lanes, math operations.
    fn count_class(s: &Shard, c: &Class, exec: u64) {
        for &i in &c.incs[..c.n as usize] {
            s.add(i as usize, 1);
        }
        if c.valu {
            s.add(idx::THREAD_INSTS_VALU, exec.count_ones() as u64);
        }
        if let Some((i, ops)) = c.mops {
            s.add(i, ops);
        }
    }

    fn instruction(&self, ev: &InstructionEvent<'_>) {
        self.with_shard(|s| self.count_instruction(s, ev))
    }

    fn count_instruction(&self, s: &Shard, ev: &InstructionEvent<'_>) {
        let c = classes()[ev.opcode as usize];
        let add = |i: usize, n: u64| s.add(i, n);
        Self::count_class(s, &c, ev.exec);
        let Some(mem) = ev.memory else { return };
        let write = mem.dir != Dir::Read;
        if matches!(mem.space, Space::Global | Space::Scratch | Space::Flat) {
            add(if write { idx::VMEM_WR } else { idx::VMEM_RD }, 1);
        }
        if ev.accesses.is_empty() {
            return;
        }
        if let Some(n) = ev.accesses.range().and_then(|r| self.contiguous_lines(r)) {
            // the common case of a whole wave moving one range of device memory, counted without rounds
            if c.flat_family {
                add(if write { idx::TA_FLAT_WRITE } else { idx::TA_FLAT_READ }, 1);
            }
            add(idx::TCP_ACCESSES, n);
            return;
        }
        SCRATCH.with_borrow_mut(|(rounds, lines, buf)| {
            let accesses = ev.accesses.lanes_in(buf);
            // lanes of a DS instruction are all LDS, of a scalar load all scalar; FLAT lanes may be either
            if !matches!(mem.space, Space::Lds | Space::Scalar) {
                let device = |a: &LaneAccess| !matches!(a.space, Space::Lds | Space::Scalar);
                rounds.fill(accesses, |a| a.address, device);
                if !rounds.is_empty() {
                    if c.flat_family {
                        add(if write { idx::TA_FLAT_WRITE } else { idx::TA_FLAT_READ }, 1);
                    }
                    add(idx::TCP_ACCESSES, rounds.line_count(self.line_bytes, lines));
                }
            }
            if !matches!(mem.space, Space::Lds | Space::Flat) {
                return;
            }
            rounds.fill(accesses, |a| a.address, |a| a.space == Space::Lds);
            if !rounds.is_empty() {
                let (cycles, conflicts) = rounds.bank_cycles();
                add(idx::LDS_IDX_ACTIVE, cycles);
                add(idx::LDS_BANK_CONFLICT, conflicts);
            }
        });
    }

    /// When `r` is all 64 lanes' elements, each at most a line, in one range that does not wrap: the lines
    /// they touch (what [`Rounds::line_count`] finds for its lanes).
    fn contiguous_lines(&self, r: &LaneRange) -> Option<u64> {
        let last = r.base.wrapping_add(64 * r.bytes as u64).wrapping_sub(1);
        if r.lanes != u64::MAX || r.bytes > self.line_bytes || last <= r.base {
            return None;
        }
        let shift = self.line_bytes.trailing_zeros();
        Some((last >> shift) - (r.base >> shift) + 1)
    }

    fn trace_instruction(&self, ev: &InstructionEvent<'_>) {
        let (Some(trace), Some(issue)) = (&self.trace, ev.issue) else {
            return;
        };
        let mut t = trace.lock().unwrap_or_else(|e| e.into_inner());
        let Some(&i) = t.index.get(&(ev.workgroup, ev.wave)) else {
            return;
        };
        let w = &mut t.waves[i];
        if w.instructions.len() < WaveTrace::MAX_INSTRUCTIONS {
            w.instructions.push(TracedInst {
                pc: ev.pc,
                mnemonic: ev.opcode.mnemonic().to_string(),
                cycle: issue.cycle,
                stalls: issue.stalls,
            });
        }
    }
}

impl Observer for HwCounters {
    const WANTS_ACCESSES: bool = true;
    const BATCHES: bool = true;
    /// The counters take neither `s_waitcnt` counts nor barrier arrivals (they count those instructions).
    const SIDE_EVENTS: bool = false;

    /// Counted from [`Observer::batch_event`] alone.
    fn batch(&self, _b: &InstBatch<'_>) {}

    fn batch_event(&self, b: &InstBatch<'_>) {
        RUNS.with_borrow_mut(|runs| {
            let run = RunClass::of(runs, b.insts);
            self.with_shard(|s| {
                for &(i, n) in &run.adds {
                    s.add(i as usize, n * b.times);
                }
                // EXEC seldom changes within a run: count its lanes again only when it does (without the
                // host's popcnt instruction in the baseline target, counting costs a dozen instructions)
                let (mut valu, mut lanes, mut last, mut active) = (run.valu, 0u64, 0u64, 0u64);
                while valu != 0 {
                    let exec = b.execs[valu.trailing_zeros() as usize];
                    if exec != last {
                        (last, active) = (exec, exec.count_ones() as u64);
                    }
                    lanes += active;
                    valu &= valu - 1;
                }
                s.add(idx::THREAD_INSTS_VALU, lanes * b.times);
            })
        });
    }

    fn event(&self, ev: &Event<'_>) {
        match ev {
            Event::Instruction(i) => {
                self.instruction(i);
                if i.issue.is_some() {
                    self.trace_instruction(i);
                }
            }
            Event::WaveStart {
                workgroup,
                wave,
                placement,
                cycle,
                ..
            } => {
                self.with_shard(|s| s.add(idx::WAVES, 1));
                let Some(cycle) = *cycle else { return };
                let mut s = self.spans.lock().unwrap_or_else(|e| e.into_inner());
                s.started.insert((*workgroup, *wave), cycle);
                s.first_start = Some(s.first_start.map_or(cycle, |f| f.min(cycle)));
                drop(s);
                if let Some(trace) = &self.trace {
                    let mut t = trace.lock().unwrap_or_else(|e| e.into_inner());
                    if t.waves.len() < t.limit {
                        let i = t.waves.len();
                        t.index.insert((*workgroup, *wave), i);
                        t.waves.push(TracedWave {
                            workgroup: *workgroup,
                            wave: *wave,
                            placement: *placement,
                            start: cycle,
                            end: None,
                            instructions: Vec::new(),
                        });
                    }
                }
            }
            Event::WaveEnd {
                workgroup,
                wave,
                cycle: Some(cycle),
                ..
            } => {
                let mut s = self.spans.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(start) = s.started.remove(&(*workgroup, *wave)) {
                    s.wave_cycles += cycle.saturating_sub(start);
                }
                s.last_end = s.last_end.max(*cycle);
                drop(s);
                if let Some(trace) = &self.trace {
                    let mut t = trace.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(&i) = t.index.get(&(*workgroup, *wave)) {
                        t.waves[i].end = Some(*cycle);
                    }
                }
            }
            _ => {}
        }
    }
}
