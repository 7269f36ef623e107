//! Hardware-named counters over the observation seam ([`HwCounters`]), and the per-wave instruction trace of
//! timing mode ([`WaveTrace`]).
//!
//! The exact counters ([`crate::catalog::EXACT`]) come from the instruction table's columns (unit, encoding,
//! memory access, arithmetic kind and type, MFMA shape), EXEC and every lane's access: the same events on the
//! interpreter and the JIT, so the same counts. Coalescing (`TCP_TOTAL_CACHE_ACCESSES`) and LDS bank cycles
//! use the timing model's own definitions (`emu_core::timing::cache::coalesce`,
//! `emu_core::timing::lds::bank_cycles`), so in timing mode the exact L1 line count equals the model's L1
//! lookups for device-memory lanes and the bank-conflict count its conflict cycles. The modeled counters
//! ([`crate::catalog::MODELED`]) are read from a dispatch's `TimingStats` and the waves' modeled start and end
//! cycles.
//!
//! Counting is sharded per host thread (workgroups run on a pool), so threads do not fight over one cache
//! line; reading sums the shards.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use emu_core::observe::{Dir, Event, InstructionEvent, LaneAccess, Observer, Placement, Space, Stalls};
use emu_core::timing::cache::{coalesce, LineUse};
use emu_core::timing::inst::{Pipe, TimingTable};
use emu_core::timing::lds::bank_cycles;
use emu_core::timing::TimingStats;
use isa_amdgpu::encoding::Encoding;
use isa_amdgpu::table::{ArithKind, DataType, Unit};
use isa_amdgpu::{Opcode, Target};

use crate::catalog::{EXACT, MODELED};

/// Indices of the exact counters (the order of [`EXACT`]).
#[allow(missing_docs)]
pub mod idx {
    pub const WAVES: usize = 0;
    pub const INSTS: usize = 1;
    pub const VALU: usize = 2;
    pub const SALU: usize = 3;
    pub const SMEM: usize = 4;
    pub const VMEM_RD: usize = 5;
    pub const VMEM_WR: usize = 6;
    pub const LDS: usize = 7;
    pub const FLAT: usize = 8;
    pub const BRANCH: usize = 9;
    pub const MFMA: usize = 10;
    /// `VALU_ARITH + 4 * precision + kind`: precision f16, f32, f64; kind add, mul, fma, trans.
    pub const VALU_ARITH: usize = 11;
    /// `MFMA_MOPS + input type`: f16, bf16, f32, f64.
    pub const MFMA_MOPS: usize = 23;
    pub const THREAD_INSTS_VALU: usize = 27;
    pub const TCP_ACCESSES: usize = 28;
    pub const TA_FLAT_READ: usize = 29;
    pub const TA_FLAT_WRITE: usize = 30;
    pub const LDS_IDX_ACTIVE: usize = 31;
    pub const LDS_BANK_CONFLICT: usize = 32;
    pub const COUNT: usize = 33;
}

const SHARDS: usize = 8;

#[repr(align(128))]
struct Shard([AtomicU64; idx::COUNT]);

impl Default for Shard {
    fn default() -> Shard {
        Shard(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

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
                let Some(row) = isa_amdgpu::table::rows_of(op, Target::Gfx90a).next().or_else(|| isa_amdgpu::table::rows_of(op, Target::Gfx942).next()) else {
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
                    precision(a.ty).map(|p| idx::VALU_ARITH + 4 * p + kind)
                });
                let mops = row.mfma.and_then(|m| {
                    let t = match m.input {
                        DataType::F16 => 0,
                        DataType::Bf16 => 1,
                        DataType::F32 | DataType::Xf32 => 2,
                        DataType::F64 => 3,
                        _ => return None,
                    };
                    Some((idx::MFMA_MOPS + t, 2 * m.macs()))
                });
                let enc = row.encoding;
                let valu = matches!(row.unit, Unit::Valu | Unit::Trans | Unit::F64 | Unit::Mfma);
                let mut c = Class { valu, flat_family: matches!(enc, Encoding::Flat | Encoding::Global | Encoding::Scratch), mops, ..Class::default() };
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

/// A memory instruction's lane accesses as rounds of at most one access per lane (two-address DS forms make
/// two).
struct Rounds {
    n: usize,
    addrs: [[u64; 64]; 4],
    exec: [u64; 4],
    bytes: [u32; 4],
    read: [bool; 4],
}

impl Rounds {
    fn fill(&mut self, lanes: &[LaneAccess], want: impl Fn(&LaneAccess) -> bool) {
        self.n = 0;
        self.exec = [0; 4];
        for a in lanes.iter().filter(|a| want(a)) {
            let l = (a.lane & 63) as usize;
            let Some(r) = (0..4).find(|&r| self.exec[r] >> l & 1 == 0) else { continue };
            if self.exec[r] == 0 {
                self.bytes[r] = a.bytes.max(1);
                self.read[r] = a.dir == Dir::Read;
            }
            self.addrs[r][l] = a.address;
            self.exec[r] |= 1 << l;
            self.n = self.n.max(r + 1);
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<(Box<Rounds>, Vec<LineUse>)> =
        RefCell::new((Box::new(Rounds { n: 0, addrs: [[0; 64]; 4], exec: [0; 4], bytes: [0; 4], read: [false; 4] }), Vec::new()));
    static SHARD_OF_THREAD: usize = {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS
    };
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
    shards: Box<[Shard]>,
    spans: Mutex<WaveSpans>,
    trace: Option<Mutex<WaveTrace>>,
}

impl HwCounters {
    /// Counters for dispatches on `device` (a preset id: its L1 line size defines `TCP_TOTAL_CACHE_ACCESSES`),
    /// tracing the first `wave_trace` waves' instructions in timing mode (0: none).
    pub fn new(device: &str, wave_trace: usize) -> HwCounters {
        let line_bytes = emu_core::timing::machine::Machine::by_preset(device).map_or(128, |m| m.l1.line_bytes);
        HwCounters {
            line_bytes,
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            spans: Mutex::default(),
            trace: (wave_trace > 0).then(|| Mutex::new(WaveTrace { limit: wave_trace, ..WaveTrace::default() })),
        }
    }

    fn shard(&self) -> &[AtomicU64; idx::COUNT] {
        &self.shards[SHARD_OF_THREAD.with(|s| *s)].0
    }

    /// The exact counts, in the order of [`EXACT`] (MOPS counters in units of 512 operations).
    pub fn exact(&self) -> [u64; idx::COUNT] {
        let mut v = [0u64; idx::COUNT];
        for s in self.shards.iter() {
            for (i, c) in s.0.iter().enumerate() {
                v[i] += c.load(Ordering::Relaxed);
            }
        }
        for m in &mut v[idx::MFMA_MOPS..idx::MFMA_MOPS + 4] {
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
            let l1_line = emu_core::timing::machine::Machine::by_preset(&t.device).map_or(self.line_bytes, |m| m.l1.line_bytes) as u64;
            let modeled = [
                t.cycles,
                t.cycles,
                spans.wave_cycles,
                busy,
                t.stalls.total(),
                t.busy.valu + t.busy.mfma,
                t.busy.salu,
                t.busy.lds,
                t.busy.vmem,
                m.l1.fill_bytes / l1_line,
                m.l1.writes,
                m.l1.atomics,
                m.l2.requests,
                m.l2.hits,
                m.l2.misses,
                m.l2.fill_bytes / 64,
                m.l2.writeback_bytes / 64,
                m.mall.hits,
                m.mall.misses,
                m.hbm.bytes_read,
                m.hbm.bytes_written,
                t.busy.mfma,
                spans.wave_cycles.saturating_sub(t.stalls.total()),
            ];
            debug_assert_eq!(modeled.len(), MODELED.len());
            out.extend(MODELED.iter().zip(modeled).map(|(c, v)| (c.name, v)));
        }
        out
    }

    /// The traced waves (empty without `wave_trace` or outside timing mode).
    pub fn take_trace(&self) -> Vec<TracedWave> {
        self.trace.as_ref().map(|t| std::mem::take(&mut t.lock().unwrap_or_else(|e| e.into_inner()).waves)).unwrap_or_default()
    }

    fn instruction(&self, ev: &InstructionEvent<'_>) {
        let c = classes()[ev.opcode as usize];
        let s = self.shard();
        let add = |i: usize, n: u64| {
            s[i].fetch_add(n, Ordering::Relaxed);
        };
        for &i in &c.incs[..c.n as usize] {
            add(i as usize, 1);
        }
        if c.valu {
            add(idx::THREAD_INSTS_VALU, ev.exec.count_ones() as u64);
        }
        if let Some((i, ops)) = c.mops {
            add(i, ops);
        }
        let Some(mem) = ev.memory else { return };
        let write = mem.dir != Dir::Read;
        if matches!(mem.space, Space::Global | Space::Scratch | Space::Flat) {
            add(if write { idx::VMEM_WR } else { idx::VMEM_RD }, 1);
        }
        if ev.accesses.is_empty() {
            return;
        }
        SCRATCH.with_borrow_mut(|(rounds, lines)| {
            let device = |a: &LaneAccess| !matches!(a.space, Space::Lds | Space::Scalar);
            rounds.fill(&ev.accesses, device);
            if rounds.n > 0 {
                if c.flat_family {
                    add(if write { idx::TA_FLAT_WRITE } else { idx::TA_FLAT_READ }, 1);
                }
                let mut n = 0u64;
                for r in 0..rounds.n {
                    coalesce(&rounds.addrs[r], rounds.exec[r], rounds.bytes[r].clamp(1, self.line_bytes), self.line_bytes, lines);
                    n += lines.len() as u64;
                }
                add(idx::TCP_ACCESSES, n);
            }
            rounds.fill(&ev.accesses, |a| a.space == Space::Lds);
            let (mut cycles, mut conflicts) = (0u64, 0u64);
            for r in 0..rounds.n {
                let addrs: [u32; 64] = std::array::from_fn(|l| rounds.addrs[r][l] as u32);
                let b = bank_cycles(&addrs, rounds.exec[r], rounds.bytes[r], rounds.read[r]);
                cycles += b.cycles as u64;
                conflicts += b.conflict_cycles as u64;
            }
            if rounds.n > 0 {
                add(idx::LDS_IDX_ACTIVE, cycles);
                add(idx::LDS_BANK_CONFLICT, conflicts);
            }
        });
    }

    fn trace_instruction(&self, ev: &InstructionEvent<'_>) {
        let (Some(trace), Some(issue)) = (&self.trace, ev.issue) else { return };
        let mut t = trace.lock().unwrap_or_else(|e| e.into_inner());
        let Some(&i) = t.index.get(&(ev.workgroup, ev.wave)) else { return };
        let w = &mut t.waves[i];
        if w.instructions.len() < WaveTrace::MAX_INSTRUCTIONS {
            w.instructions.push(TracedInst { pc: ev.pc, mnemonic: ev.opcode.mnemonic().to_string(), cycle: issue.cycle, stalls: issue.stalls });
        }
    }
}

impl Observer for HwCounters {
    const WANTS_ACCESSES: bool = true;

    fn event(&self, ev: &Event<'_>) {
        match ev {
            Event::Instruction(i) => {
                self.instruction(i);
                if i.issue.is_some() {
                    self.trace_instruction(i);
                }
            }
            Event::WaveStart { workgroup, wave, placement, cycle, .. } => {
                self.shard()[idx::WAVES].fetch_add(1, Ordering::Relaxed);
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
                        t.waves.push(TracedWave { workgroup: *workgroup, wave: *wave, placement: *placement, start: cycle, end: None, instructions: Vec::new() });
                    }
                }
            }
            Event::WaveEnd { workgroup, wave, cycle: Some(cycle), .. } => {
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
