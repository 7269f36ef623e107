//! The observation seam: a profiler, a debugger or a test sees what a dispatch does as plain-data
//! [`Event`]s — dispatch begin and end, workgroups and waves starting and ending (with their CU and SIMD in
//! timing mode), every instruction with its unit, EXEC, every lane's memory access and (in timing mode) its
//! issue cycle and stalls, barriers and `s_waitcnt` waits — without touching results.
//!
//! Events hold no references into the engine: numbers, names, and the lane accesses of one instruction
//! ([`Accesses`]): a borrowed slice of plain records, or — the common case of a vector memory instruction
//! whose lanes access consecutive elements — one [`LaneRange`] (base, element size, lanes), which both engines
//! deliver by the same rule ([`LaneRange::of`]) and which reads lane by lane like the records it stands for
//! ([`Accesses::iter`]). [`Event::into_owned`] keeps an event. They serialize with serde, the opcode as its
//! mnemonic, the unit as its table name and the accesses lane by lane, so a trace written as JSON reads on its
//! own.
//!
//! The engines are generic over the [`Observer`]: with [`NoObserver`] every call compiles to nothing and no
//! event is built. Engines report executed instructions through [`Observer::instruction`] (an [`InstEvent`]
//! that points at the decoded instruction); the dispatch loop turns those into [`Event::Instruction`]s for the
//! observer's [`Observer::event`] ([`Dispatched`]). Observers implement `event`; `instruction`, `switch_wave`
//! and `wave_end` are the engines' side of the seam (an observer may still watch them, e.g. to interleave the
//! waves of a workgroup in a functional dispatch). In timing mode the engines report to the timing model, which
//! reports each instruction to the observer as an event when it issues.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{FlowControl, MemDir, Unit};
use isa_amdgpu::{Inst, Opcode};

/// Which memory a lane access went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    /// Device memory through GLOBAL or buffer (MUBUF/MTBUF) instructions, by device address.
    Global,
    /// Device memory through the scalar data cache (`s_load`, `s_buffer_load`), by device address.
    Scalar,
    /// The workgroup's LDS, by byte offset (DS instructions, and FLAT lanes in the shared aperture).
    Lds,
    /// The lane's private memory (SCRATCH instructions, buffer accesses through the private segment), by
    /// device address.
    Scratch,
    /// Device memory through FLAT instructions, by device address.
    Flat,
}

/// What a lane access does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    Read,
    Write,
    /// Read-modify-write.
    Atomic,
}

/// One lane's access to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneAccess {
    /// 0..63; 0 for the wave's scalar accesses ([`Space::Scalar`]).
    pub lane: u8,
    pub space: Space,
    pub dir: Dir,
    pub bytes: u32,
    pub address: u64,
}

/// Accesses of one instruction to consecutive elements of device memory: each lane `l` of `lanes` (lowest first)
/// accesses the `bytes` at `base + l × bytes` (wrapping), in `space` ([`Space::Global`] or [`Space::Flat`]) and
/// direction `dir`. A whole wave reading or writing a contiguous range is one `LaneRange` instead of 64 records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaneRange {
    pub space: Space,
    pub dir: Dir,
    /// Bytes per lane (the element size), at least 1.
    pub bytes: u32,
    /// The address lane 0's element would have.
    pub base: u64,
    /// The lanes that access memory (not 0).
    pub lanes: u64,
}

impl LaneRange {
    /// The address of lane `lane`'s element.
    pub fn address(&self, lane: u32) -> u64 {
        self.base.wrapping_add(lane as u64 * self.bytes as u64)
    }

    /// The accesses `accesses` stand for when they are one range: one access per lane, lanes ascending, all to
    /// [`Space::Global`] or all to [`Space::Flat`], alike in direction and size (at least 1 byte), each lane at
    /// its element. The engines deliver an instruction's accesses as a range exactly when this holds (compiled
    /// code checks the same in [`LaneRange::of_lanes`]).
    pub fn of(accesses: &[LaneAccess]) -> Option<LaneRange> {
        let first = accesses.first()?;
        let (space, dir, bytes) = (first.space, first.dir, first.bytes);
        if accesses.len() > 64 || !matches!(space, Space::Global | Space::Flat) || bytes == 0 {
            return None;
        }
        let base = first.address.wrapping_sub(first.lane as u64 * bytes as u64);
        let r = LaneRange {
            space,
            dir,
            bytes,
            base,
            lanes: 0,
        };
        let mut lanes = 0u64;
        let mut next = 0u32;
        for a in accesses {
            let lane = a.lane as u32;
            if lane < next
                || lane > 63
                || a.space != space
                || a.dir != dir
                || a.bytes != bytes
                || a.address != r.address(lane)
            {
                return None;
            }
            lanes |= 1 << lane;
            next = lane + 1;
        }
        Some(LaneRange { lanes, ..r })
    }

    /// [`LaneRange::of`] for accesses given lane by lane: `lanes` (not 0) each accessing `bytes` at `address(l)`
    /// in device memory, none in private memory (`private(address)` false) — the range those accesses are, or
    /// `None`. Equal to [`LaneRange::of`] of the records they make.
    pub fn of_lanes(
        dir: Dir,
        bytes: u32,
        lanes: u64,
        address: impl Fn(usize) -> u64,
        private: impl Fn(u64) -> bool,
    ) -> Option<LaneRange> {
        if lanes == 0 || bytes == 0 {
            return None;
        }
        let first = lanes.trailing_zeros();
        let base = address(first as usize).wrapping_sub(first as u64 * bytes as u64);
        // every lane checked without an early exit: a loop the compiler turns into vector compares
        let mut off = false;
        for l in 0..64 {
            let a = address(l);
            let want = base.wrapping_add(l as u64 * bytes as u64);
            off |= (lanes >> l & 1 == 1) & ((a != want) | private(a));
        }
        (!off).then_some(LaneRange {
            space: Space::Global,
            dir,
            bytes,
            base,
            lanes,
        })
    }

    /// `n` when the lanes are lanes 0..n.
    pub fn leading(&self) -> Option<u32> {
        (self.lanes & self.lanes.wrapping_add(1) == 0).then(|| self.lanes.count_ones())
    }

    /// Each lane's access, lowest lane first.
    pub fn iter(&self) -> AccessIter<'static> {
        AccessIter::Range(*self, self.lanes)
    }
}

/// The lane accesses of one instruction, in the order it made them: records, or one [`LaneRange`] when they
/// form one ([`LaneRange::of`]). Either form reads as records ([`Accesses::iter`]); equality compares what
/// they stand for, and they serialize as records.
#[derive(Debug, Clone)]
pub enum Accesses<'a> {
    Lanes(Cow<'a, [LaneAccess]>),
    Range(LaneRange),
}

impl Default for Accesses<'_> {
    fn default() -> Self {
        Accesses::NONE
    }
}

impl<'a> Accesses<'a> {
    /// No access.
    pub const NONE: Accesses<'static> = Accesses::Lanes(Cow::Borrowed(&[]));

    /// `accesses` in their compact form: one range when they are one ([`LaneRange::of`]), else borrowed.
    pub fn of(accesses: &'a [LaneAccess]) -> Accesses<'a> {
        match LaneRange::of(accesses) {
            Some(r) => Accesses::Range(r),
            None => Accesses::Lanes(Cow::Borrowed(accesses)),
        }
    }

    /// The range, when the accesses are one.
    pub fn range(&self) -> Option<&LaneRange> {
        match self {
            Accesses::Range(r) => Some(r),
            Accesses::Lanes(_) => None,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Accesses::Lanes(l) => l.len(),
            Accesses::Range(r) => r.lanes.count_ones() as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each access as a record, in order.
    pub fn iter(&self) -> AccessIter<'_> {
        match self {
            Accesses::Lanes(l) => AccessIter::Lanes(l.iter()),
            Accesses::Range(r) => r.iter(),
        }
    }

    pub fn first(&self) -> Option<LaneAccess> {
        self.iter().next()
    }

    pub fn to_vec(&self) -> Vec<LaneAccess> {
        self.iter().collect()
    }

    /// The accesses as records: borrowed, or a range's written into `buf`.
    pub fn lanes_in<'b>(&'b self, buf: &'b mut Vec<LaneAccess>) -> &'b [LaneAccess] {
        match self {
            Accesses::Lanes(l) => l,
            Accesses::Range(r) => {
                buf.clear();
                buf.extend(r.iter());
                buf
            }
        }
    }

    /// The same accesses borrowed (a range copied).
    pub fn borrowed(&self) -> Accesses<'_> {
        match self {
            Accesses::Lanes(l) => Accesses::Lanes(Cow::Borrowed(l)),
            Accesses::Range(r) => Accesses::Range(*r),
        }
    }

    pub fn into_owned(self) -> Accesses<'static> {
        match self {
            Accesses::Lanes(l) => Accesses::Lanes(Cow::Owned(l.into_owned())),
            Accesses::Range(r) => Accesses::Range(r),
        }
    }
}

/// The records of [`Accesses::iter`].
#[derive(Debug, Clone)]
pub enum AccessIter<'b> {
    Lanes(std::slice::Iter<'b, LaneAccess>),
    /// The range and its lanes still to come.
    Range(LaneRange, u64),
}

impl Iterator for AccessIter<'_> {
    type Item = LaneAccess;
    fn next(&mut self) -> Option<LaneAccess> {
        match self {
            AccessIter::Lanes(i) => i.next().copied(),
            AccessIter::Range(r, m) => {
                if *m == 0 {
                    return None;
                }
                let lane = m.trailing_zeros();
                *m &= *m - 1;
                Some(LaneAccess {
                    lane: lane as u8,
                    space: r.space,
                    dir: r.dir,
                    bytes: r.bytes,
                    address: r.address(lane),
                })
            }
        }
    }
}

impl PartialEq for Accesses<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Accesses::Lanes(a), Accesses::Lanes(b)) => a == b,
            (Accesses::Range(a), Accesses::Range(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl Serialize for Accesses<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Accesses<'_> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Accesses::Lanes(Cow::Owned(Vec::<LaneAccess>::deserialize(d)?)))
    }
}

/// The cache-policy bits of a memory instruction, by their CDNA3 names: on gfx90a `sc0` is `glc`, `nt` is `slc`
/// and `sc1` is `scc`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachePolicy {
    pub sc0: bool,
    pub sc1: bool,
    pub nt: bool,
}

impl CachePolicy {
    /// The policy bits of `inst` (all clear for instructions without them).
    pub fn of(inst: &Inst) -> CachePolicy {
        // a field the encoding does not have reads as 0
        let bit = |f: Field| inst.field(f) != 0;
        CachePolicy {
            sc0: bit(Field::Glc),
            sc1: bit(Field::Sc1),
            nt: bit(Field::Slc),
        }
    }
}

/// The memory side of an instruction: the space its encoding addresses, direction, bytes per lane (per wave
/// for scalar loads) and cache policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryOp {
    pub space: Space,
    pub dir: Dir,
    pub bytes: u32,
    pub policy: CachePolicy,
}

impl MemoryOp {
    /// The memory operation of `inst`, from the table's `mem` column and its encoding; `None` for instructions
    /// that access no memory.
    pub fn of(inst: &Inst) -> Option<MemoryOp> {
        let mem = inst.info.mem;
        let dir = match mem.dir {
            MemDir::None => return None,
            MemDir::Load => Dir::Read,
            MemDir::Store => Dir::Write,
            MemDir::Atomic => Dir::Atomic,
        };
        let space = match inst.info.encoding {
            Encoding::Smem => Space::Scalar,
            Encoding::Ds => Space::Lds,
            Encoding::Flat => Space::Flat,
            Encoding::Scratch => Space::Scratch,
            _ => Space::Global,
        };
        Some(MemoryOp {
            space,
            dir,
            bytes: mem.bytes as u32,
            policy: CachePolicy::of(inst),
        })
    }
}

/// Cycles an instruction waited, by reason, before it issued (timing mode). The reasons are checked in this
/// order and each cycle counts once, for the first reason that held it back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stalls {
    /// `s_waitcnt` waiting for vector memory (`vmcnt`).
    pub vmcnt: u64,
    /// `s_waitcnt` waiting for LDS, scalar memory or messages (`lgkmcnt`).
    pub lgkmcnt: u64,
    /// `s_barrier` waiting for the rest of the workgroup.
    pub barrier: u64,
    /// A source register an earlier instruction is still computing.
    pub dependency: u64,
    /// The unit (VALU, matrix core, texture address unit, LDS) busy with earlier instructions.
    pub unit_busy: u64,
    /// Instruction fetch: taken-branch refill of the instruction buffer, instruction cache misses.
    pub fetch: u64,
    /// `s_nop` and `s_sleep`.
    pub sleep: u64,
    /// Ready, but the SIMD's issue turn went to another wave or another SIMD.
    pub arbitration: u64,
}

impl Stalls {
    pub fn total(&self) -> u64 {
        self.vmcnt
            + self.lgkmcnt
            + self.barrier
            + self.dependency
            + self.unit_busy
            + self.fetch
            + self.sleep
            + self.arbitration
    }

    pub fn add(&mut self, o: &Stalls) {
        self.vmcnt += o.vmcnt;
        self.lgkmcnt += o.lgkmcnt;
        self.barrier += o.barrier;
        self.dependency += o.dependency;
        self.unit_busy += o.unit_busy;
        self.fetch += o.fetch;
        self.sleep += o.sleep;
        self.arbitration += o.arbitration;
    }
}

/// When an instruction issued (timing mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    /// Shader-clock cycle, counted from the start of the dispatch.
    pub cycle: u64,
    pub stalls: Stalls,
}

/// Where a wave runs (timing mode). CUs are numbered across the device, XCD by XCD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub xcd: u32,
    /// Shader engine within the XCD.
    pub se: u32,
    pub cu: u32,
    pub simd: u32,
}

/// What one workgroup and its waves need, from the kernel descriptor and the dispatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// VGPRs per lane (on gfx90a/gfx942 the unified VGPR and AGPR allocation).
    pub vgprs: u32,
    /// AGPRs per lane within that allocation.
    pub agprs: u32,
    /// SGPRs per wave.
    pub sgprs: u32,
    /// LDS bytes per workgroup.
    pub lds_bytes: u32,
    /// Private (scratch) bytes per lane.
    pub private_bytes: u32,
    /// Waves of a full workgroup.
    pub waves_per_workgroup: u32,
}

/// One executed (and, in timing mode, issued) instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstructionEvent<'a> {
    pub dispatch: u64,
    pub workgroup: [u32; 3],
    pub wave: u32,
    /// Device address of the instruction.
    pub pc: u64,
    #[serde(with = "opcode_name")]
    pub opcode: Opcode,
    /// The table's functional unit.
    #[serde(with = "unit_name_serde")]
    pub unit: Unit,
    /// EXEC when the instruction issued.
    pub exec: u64,
    /// Issue cycle and stalls (timing mode).
    pub issue: Option<Issue>,
    pub memory: Option<MemoryOp>,
    /// Every active lane's accesses, in the order the instruction made them (none unless the observer asks,
    /// [`Observer::WANTS_ACCESSES`]).
    pub accesses: Accesses<'a>,
}

/// Something that happened in a dispatch. `cycle` fields are shader-clock cycles from the dispatch's start in
/// timing mode and `None` in a functional dispatch, as is `placement`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    DispatchBegin {
        dispatch: u64,
        kernel: Cow<'a, str>,
        /// The device preset id (`mi300x`, `mi210`, `mi250x-gcd`).
        device: Cow<'a, str>,
        grid: [u32; 3],
        block: [u32; 3],
        workgroups: u64,
        resources: Resources,
        /// Where the code object is loaded and where the kernel starts.
        code_base: u64,
        entry: u64,
        timing: bool,
    },
    DispatchEnd {
        dispatch: u64,
        workgroups: u64,
        waves: u64,
        wave_instructions: u64,
        cycles: Option<u64>,
    },
    WorkgroupStart {
        dispatch: u64,
        workgroup: [u32; 3],
        waves: u32,
        placement: Option<Placement>,
        cycle: Option<u64>,
    },
    WorkgroupEnd {
        dispatch: u64,
        workgroup: [u32; 3],
        cycle: Option<u64>,
    },
    WaveStart {
        dispatch: u64,
        workgroup: [u32; 3],
        wave: u32,
        placement: Option<Placement>,
        cycle: Option<u64>,
    },
    WaveEnd {
        dispatch: u64,
        workgroup: [u32; 3],
        wave: u32,
        instructions: u64,
        cycle: Option<u64>,
    },
    Instruction(InstructionEvent<'a>),
    /// A wave reached `s_barrier`.
    BarrierArrive {
        dispatch: u64,
        workgroup: [u32; 3],
        wave: u32,
        cycle: Option<u64>,
    },
    /// Every wave of the workgroup arrived: they go on.
    BarrierRelease {
        dispatch: u64,
        workgroup: [u32; 3],
        cycle: Option<u64>,
    },
    /// `s_waitcnt` with the counts it waits for (the field's maximum means "not waited for"); `waited` is the
    /// cycles it held the wave in timing mode.
    Waitcnt {
        dispatch: u64,
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        vmcnt: u8,
        lgkmcnt: u8,
        expcnt: u8,
        waited: Option<u64>,
    },
}

impl Event<'_> {
    /// The same event owning its data.
    pub fn into_owned(self) -> Event<'static> {
        match self {
            Event::DispatchBegin {
                dispatch,
                kernel,
                device,
                grid,
                block,
                workgroups,
                resources,
                code_base,
                entry,
                timing,
            } => Event::DispatchBegin {
                dispatch,
                kernel: Cow::Owned(kernel.into_owned()),
                device: Cow::Owned(device.into_owned()),
                grid,
                block,
                workgroups,
                resources,
                code_base,
                entry,
                timing,
            },
            Event::DispatchEnd {
                dispatch,
                workgroups,
                waves,
                wave_instructions,
                cycles,
            } => Event::DispatchEnd {
                dispatch,
                workgroups,
                waves,
                wave_instructions,
                cycles,
            },
            Event::WorkgroupStart {
                dispatch,
                workgroup,
                waves,
                placement,
                cycle,
            } => Event::WorkgroupStart {
                dispatch,
                workgroup,
                waves,
                placement,
                cycle,
            },
            Event::WorkgroupEnd {
                dispatch,
                workgroup,
                cycle,
            } => Event::WorkgroupEnd {
                dispatch,
                workgroup,
                cycle,
            },
            Event::WaveStart {
                dispatch,
                workgroup,
                wave,
                placement,
                cycle,
            } => Event::WaveStart {
                dispatch,
                workgroup,
                wave,
                placement,
                cycle,
            },
            Event::WaveEnd {
                dispatch,
                workgroup,
                wave,
                instructions,
                cycle,
            } => Event::WaveEnd {
                dispatch,
                workgroup,
                wave,
                instructions,
                cycle,
            },
            Event::Instruction(i) => Event::Instruction(InstructionEvent {
                accesses: i.accesses.into_owned(),
                ..i
            }),
            Event::BarrierArrive {
                dispatch,
                workgroup,
                wave,
                cycle,
            } => Event::BarrierArrive {
                dispatch,
                workgroup,
                wave,
                cycle,
            },
            Event::BarrierRelease {
                dispatch,
                workgroup,
                cycle,
            } => Event::BarrierRelease {
                dispatch,
                workgroup,
                cycle,
            },
            Event::Waitcnt {
                dispatch,
                workgroup,
                wave,
                pc,
                vmcnt,
                lgkmcnt,
                expcnt,
                waited,
            } => Event::Waitcnt {
                dispatch,
                workgroup,
                wave,
                pc,
                vmcnt,
                lgkmcnt,
                expcnt,
                waited,
            },
        }
    }

    /// The dispatch the event belongs to.
    pub fn dispatch(&self) -> u64 {
        match self {
            Event::DispatchBegin { dispatch, .. }
            | Event::DispatchEnd { dispatch, .. }
            | Event::WorkgroupStart { dispatch, .. }
            | Event::WorkgroupEnd { dispatch, .. }
            | Event::WaveStart { dispatch, .. }
            | Event::WaveEnd { dispatch, .. }
            | Event::BarrierArrive { dispatch, .. }
            | Event::BarrierRelease { dispatch, .. }
            | Event::Waitcnt { dispatch, .. } => *dispatch,
            Event::Instruction(i) => i.dispatch,
        }
    }
}

/// The counts of an `s_waitcnt` (gfx9 layout of SIMM16: vmcnt in bits 3:0 and 15:14, expcnt 6:4, lgkmcnt 11:8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitCounts {
    pub vmcnt: u8,
    pub expcnt: u8,
    pub lgkmcnt: u8,
}

impl WaitCounts {
    pub fn of(inst: &Inst) -> WaitCounts {
        let s = inst.field(Field::Simm16);
        WaitCounts {
            vmcnt: ((s & 0xf) | (s >> 14 & 3) << 4) as u8,
            expcnt: (s >> 4 & 7) as u8,
            lgkmcnt: (s >> 8 & 0xf) as u8,
        }
    }
}

/// One executed instruction as an engine reports it (the engines' side of the seam; observers receive it as
/// an [`Event::Instruction`]).
#[derive(Debug, Clone)]
pub struct InstEvent<'a> {
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub pc: u64,
    /// The instruction: its unit, wait-counter class and (for s_waitcnt) counts are in `inst.info` and its fields.
    pub inst: &'a Inst,
    /// EXEC when the instruction issued.
    pub exec: u64,
    /// Every lane's memory accesses, in lane order, when the observer asks for them
    /// ([`Observer::WANTS_ACCESSES`]); none otherwise. FLAT lanes to device memory and atomics are recorded
    /// as [`Space::Global`] reads or writes; [`classify`] gives them their space and direction.
    pub accesses: Accesses<'a>,
}

/// Instructions a wave ran one after another that access no memory, reported together to an observer that
/// takes batches ([`Observer::BATCHES`]): each one's EXEC at issue, at consecutive PCs from `pc` — `times`
/// times in a row (the passes of a loop with the same EXECs come as one batch).
#[derive(Debug, Clone, Copy)]
pub struct InstBatch<'a> {
    /// The dispatch's number ([`Dispatched`] sets it; 0 as an engine reports the batch).
    pub dispatch: u64,
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub pc: u64,
    pub insts: &'a [Inst],
    pub execs: &'a [u64],
    /// Passes, at least 1.
    pub times: u64,
}

impl<'a> InstBatch<'a> {
    /// Each instruction of one pass with its PC and EXEC at issue, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &'a Inst, u64)> + 'a {
        let mut pc = self.pc;
        self.insts
            .iter()
            .zip(self.execs.iter().copied())
            .map(move |(inst, exec)| {
                let at = pc;
                pc += inst.size() as u64;
                (at, inst, exec)
            })
    }

    /// One instruction of the batch as the engine-side report it stands for.
    fn inst_event(&self, pc: u64, inst: &'a Inst, exec: u64) -> InstEvent<'a> {
        InstEvent {
            workgroup: self.workgroup,
            wave: self.wave,
            pc,
            inst,
            exec,
            accesses: Accesses::NONE,
        }
    }
}

/// The space an engine records a lane access of `wave` in: a device-memory access inside the wave's private
/// segment is a scratch access (whichever instruction made it).
#[inline]
pub fn space_of(space: Space, address: u64, wave: &crate::wave::WaveState) -> Space {
    let private = wave.private_bytes();
    match space {
        Space::Global if address.wrapping_sub(wave.scratch_base) < private => Space::Scratch,
        s => s,
    }
}

/// `accesses` of `inst` with FLAT device-memory lanes in [`Space::Flat`] and an atomic's lanes as
/// [`Dir::Atomic`]: a range as such, records borrowed when nothing changes, else rewritten into `buf`.
pub fn classify<'b>(inst: &Inst, accesses: &'b Accesses<'_>, buf: &'b mut Vec<LaneAccess>) -> Accesses<'b> {
    match accesses {
        Accesses::Lanes(l) => Accesses::Lanes(Cow::Borrowed(classify_lanes(inst, l, buf))),
        Accesses::Range(r) => {
            let mut r = *r;
            if inst.info.encoding == Encoding::Flat && r.space == Space::Global {
                r.space = Space::Flat;
            }
            if inst.info.mem.dir == MemDir::Atomic {
                r.dir = Dir::Atomic;
            }
            Accesses::Range(r)
        }
    }
}

/// [`classify`] of records.
fn classify_lanes<'b>(inst: &Inst, accesses: &'b [LaneAccess], buf: &'b mut Vec<LaneAccess>) -> &'b [LaneAccess] {
    let flat = inst.info.encoding == Encoding::Flat;
    let atomic = inst.info.mem.dir == MemDir::Atomic;
    if !(flat || atomic) || accesses.is_empty() {
        return accesses;
    }
    buf.clear();
    buf.extend(accesses.iter().map(|a| {
        let mut a = *a;
        if flat && a.space == Space::Global {
            a.space = Space::Flat;
        }
        if atomic {
            a.dir = Dir::Atomic;
        }
        a
    }));
    buf
}

/// Something that watches dispatches. Called from the host threads that run workgroups (in timing mode, from
/// the one thread that runs the model).
pub trait Observer: Sync {
    /// False only for [`NoObserver`]: engines skip producing events altogether.
    const ACTIVE: bool = true;
    /// Whether instruction events carry per-lane memory accesses (recording them costs a little).
    const WANTS_ACCESSES: bool = false;
    /// Every event of every dispatch, in order per wave.
    fn event(&self, _ev: &Event<'_>) {}
    /// Engines' side: after each instruction of each wave.
    fn instruction(&self, _ev: &InstEvent<'_>) {}
    /// Engines' side: after each instruction, true to let the workgroup's other waves issue before this one
    /// continues (results do not depend on it, barriers keep their meaning).
    fn switch_wave(&self, _ev: &InstEvent<'_>) -> bool {
        false
    }
    /// Engines' side: when a wave executes `s_endpgm`.
    fn wave_end(&self, _workgroup: [u32; 3], _wave: u32, _instructions: u64) {}
    /// Whether engines may report a run of instructions that access no memory as one [`InstBatch`]
    /// ([`Observer::batch`]) rather than one by one, at the end of the run: for observers that ask to switch
    /// waves only after an instruction that accesses memory (never within a run) and need no instruction
    /// before its run ends (counters, the timing model's recorder). The JIT then keeps such runs, and
    /// loops made of them, in compiled code. Each batched instruction is reported once, in the wave's order
    /// among its other reports; a batch's `s_waitcnt` and `s_barrier` events follow its instructions.
    const BATCHES: bool = false;
    /// Whether a functional dispatch (through [`Dispatched`]) tells the observer of each `s_waitcnt`'s counts
    /// ([`Event::Waitcnt`]) and each wave's arrival at `s_barrier` ([`Event::BarrierArrive`]). False for
    /// observers that ignore both: the dispatch then skips looking for them.
    const SIDE_EVENTS: bool = true;
    /// Engines' side, for observers with [`Observer::BATCHES`]: a run of instructions. By default each goes to
    /// [`Observer::instruction`].
    fn batch(&self, b: &InstBatch<'_>) {
        for _ in 0..b.times {
            for (pc, inst, exec) in b.iter() {
                self.instruction(&b.inst_event(pc, inst, exec));
            }
        }
    }
    /// The observer's side of [`Observer::batch`] (through [`Dispatched`], with the dispatch's number): by
    /// default each instruction as an [`Event::Instruction`].
    fn batch_event(&self, b: &InstBatch<'_>) {
        for (pc, inst, exec) in (0..b.times).flat_map(|_| b.iter()) {
            self.event(&Event::Instruction(InstructionEvent {
                dispatch: b.dispatch,
                workgroup: b.workgroup,
                wave: b.wave,
                pc,
                opcode: inst.info.opcode,
                unit: inst.info.unit,
                exec,
                issue: None,
                memory: None,
                accesses: Accesses::NONE,
            }));
        }
    }
}

/// Observes nothing, at no cost.
pub struct NoObserver;

impl Observer for NoObserver {
    const ACTIVE: bool = false;
}

/// A process-wide number for each dispatch, named in its events.
pub fn next_dispatch_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// An observer seen through one functional dispatch: the engines' reports become [`Event`]s carrying the
/// dispatch's number, and are passed on to the observer's own seam methods as well.
pub struct Dispatched<'o, O: Observer> {
    pub dispatch: u64,
    pub inner: &'o O,
}

thread_local! {
    static CLASSIFIED: std::cell::RefCell<Vec<LaneAccess>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<O: Observer> Observer for Dispatched<'_, O> {
    const ACTIVE: bool = O::ACTIVE;
    const WANTS_ACCESSES: bool = O::WANTS_ACCESSES;
    const BATCHES: bool = O::BATCHES;

    fn batch(&self, b: &InstBatch<'_>) {
        let b = InstBatch {
            dispatch: self.dispatch,
            ..*b
        };
        self.inner.batch(&b);
        self.inner.batch_event(&b);
        if O::SIDE_EVENTS
            && b.insts
                .iter()
                .any(|i| matches!(i.info.opcode, Opcode::SWaitcnt | Opcode::SBarrier))
        {
            for (pc, inst, _) in (0..b.times).flat_map(|_| b.iter()) {
                self.side_events(&b.inst_event(pc, inst, 0));
            }
        }
    }

    fn event(&self, ev: &Event<'_>) {
        self.inner.event(ev);
    }

    fn instruction(&self, ev: &InstEvent<'_>) {
        self.inner.instruction(ev);
        let inst = ev.inst;
        CLASSIFIED.with_borrow_mut(|buf| {
            let accesses = classify(inst, &ev.accesses, buf);
            self.inner.event(&Event::Instruction(InstructionEvent {
                dispatch: self.dispatch,
                workgroup: ev.workgroup,
                wave: ev.wave,
                pc: ev.pc,
                opcode: inst.info.opcode,
                unit: inst.info.unit,
                exec: ev.exec,
                issue: None,
                memory: MemoryOp::of(inst),
                accesses,
            }));
        });
        if O::SIDE_EVENTS {
            self.side_events(ev);
        }
    }

    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool {
        self.inner.switch_wave(ev)
    }

    fn wave_end(&self, workgroup: [u32; 3], wave: u32, instructions: u64) {
        self.inner.wave_end(workgroup, wave, instructions);
        self.inner.event(&Event::WaveEnd {
            dispatch: self.dispatch,
            workgroup,
            wave,
            instructions,
            cycle: None,
        });
    }
}

impl<O: Observer> Dispatched<'_, O> {
    /// The events an instruction brings besides its own: an `s_waitcnt`'s counts, a wave arriving at a barrier.
    fn side_events(&self, ev: &InstEvent<'_>) {
        let inst = ev.inst;
        if inst.info.opcode == Opcode::SWaitcnt {
            let c = WaitCounts::of(inst);
            let (dispatch, workgroup, wave, pc) = (self.dispatch, ev.workgroup, ev.wave, ev.pc);
            self.inner.event(&Event::Waitcnt {
                dispatch,
                workgroup,
                wave,
                pc,
                vmcnt: c.vmcnt,
                lgkmcnt: c.lgkmcnt,
                expcnt: c.expcnt,
                waited: None,
            });
        }
        if inst.info.flow == FlowControl::Barrier && inst.info.opcode == Opcode::SBarrier {
            self.inner.event(&Event::BarrierArrive {
                dispatch: self.dispatch,
                workgroup: ev.workgroup,
                wave: ev.wave,
                cycle: None,
            });
        }
    }
}

/// Serializes an [`Opcode`] as its mnemonic.
mod opcode_name {
    use isa_amdgpu::Opcode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(op: &Opcode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(op.mnemonic())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Opcode, D::Error> {
        let name = String::deserialize(d)?;
        Opcode::ALL
            .iter()
            .copied()
            .find(|o| o.mnemonic() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown mnemonic {name}")))
    }
}

/// Serializes a [`Unit`] as its table name.
mod unit_name_serde {
    use isa_amdgpu::table::Unit;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(u: &Unit, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(u.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Unit, D::Error> {
        let name = String::deserialize(d)?;
        Unit::ALL
            .iter()
            .copied()
            .find(|u| u.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown unit {name}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_as_self_describing_json_and_read_back() {
        let acc = [LaneAccess {
            lane: 3,
            space: Space::Flat,
            dir: Dir::Atomic,
            bytes: 4,
            address: 0x1000,
        }];
        let ev = Event::Instruction(InstructionEvent {
            dispatch: 7,
            workgroup: [1, 2, 3],
            wave: 4,
            pc: 0x7000,
            opcode: Opcode::ALL
                .iter()
                .copied()
                .find(|o| o.mnemonic() == "flat_atomic_add")
                .unwrap(),
            unit: Unit::Flat,
            exec: u64::MAX,
            issue: Some(Issue {
                cycle: 99,
                stalls: Stalls {
                    vmcnt: 5,
                    ..Stalls::default()
                },
            }),
            memory: Some(MemoryOp {
                space: Space::Flat,
                dir: Dir::Atomic,
                bytes: 4,
                policy: CachePolicy {
                    sc0: true,
                    ..CachePolicy::default()
                },
            }),
            accesses: Accesses::Lanes(Cow::Borrowed(&acc)),
        });
        let json = serde_json::to_string(&ev).unwrap();
        assert!(json.contains(r#""event":"instruction""#), "{json}");
        assert!(
            json.contains(r#""opcode":"flat_atomic_add""#) && json.contains(r#""unit":"flat""#),
            "{json}"
        );
        assert!(
            json.contains(r#""space":"flat""#) && json.contains(r#""dir":"atomic""#),
            "{json}"
        );
        let back: Event<'static> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ev.clone().into_owned());
        assert_eq!(back.dispatch(), 7);
    }

    #[test]
    fn lanes_at_consecutive_elements_come_as_one_range_that_reads_as_them() {
        let lane = |l: u8, address: u64| LaneAccess {
            lane: l,
            space: Space::Global,
            dir: Dir::Read,
            bytes: 4,
            address,
        };
        let mut ranges = 0;
        for bytes in [1u32, 4, 12, 16] {
            for lanes in [u64::MAX, u64::MAX >> 1, 1 << 63, 1, 0b1011_0000, !(1u64 << 17)] {
                for base in [0x1000u64, 0, u64::MAX - 100] {
                    for (space, dir) in [
                        (Space::Global, Dir::Read),
                        (Space::Global, Dir::Write),
                        (Space::Flat, Dir::Atomic),
                    ] {
                        let r = LaneRange {
                            space,
                            dir,
                            bytes,
                            base,
                            lanes,
                        };
                        let records: Vec<LaneAccess> = r.iter().collect();
                        assert_eq!(records.len(), lanes.count_ones() as usize);
                        assert!(records
                            .iter()
                            .all(|a| a.address == base.wrapping_add(a.lane as u64 * bytes as u64)));
                        assert_eq!(LaneRange::of(&records), Some(r), "{r:?}");
                        let at = |l: usize| base.wrapping_add(l as u64 * bytes as u64);
                        let global = LaneRange {
                            space: Space::Global,
                            ..r
                        };
                        assert_eq!(
                            LaneRange::of_lanes(dir, bytes, lanes, at, |_| false),
                            Some(global),
                            "{r:?}"
                        );
                        assert_eq!(
                            LaneRange::of_lanes(dir, bytes, lanes, at, |a| a == r.address(63 - lanes.leading_zeros())),
                            None,
                            "a lane in private memory"
                        );
                        let moved = |l: usize| at(l) + (l == (lanes.trailing_zeros() as usize + 1) % 64) as u64;
                        assert_eq!(
                            LaneRange::of_lanes(
                                dir,
                                bytes,
                                lanes | 1 << ((lanes.trailing_zeros() + 1) % 64),
                                moved,
                                |_| false
                            ),
                            None,
                            "{r:?}: a lane off its element"
                        );
                        let a = Accesses::Range(r);
                        assert_eq!(a.to_vec(), records);
                        assert_eq!(
                            a,
                            Accesses::Lanes(Cow::Borrowed(&records)),
                            "equal to the records it stands for"
                        );
                        assert_eq!(Accesses::of(&records), a);
                        ranges += 1;
                    }
                }
            }
        }
        assert_eq!(ranges, 4 * 6 * 3 * 3);
        // what is not one range stays as records
        for records in [
            vec![lane(0, 0x100), lane(1, 0x108)],
            vec![lane(1, 0x104), lane(0, 0x100)],
            vec![lane(0, 0x100), lane(0, 0x100)],
            vec![
                lane(0, 0x100),
                LaneAccess {
                    dir: Dir::Write,
                    ..lane(1, 0x104)
                },
            ],
            vec![
                lane(0, 0x100),
                LaneAccess {
                    bytes: 8,
                    ..lane(1, 0x104)
                },
            ],
            vec![LaneAccess {
                space: Space::Lds,
                ..lane(0, 0x100)
            }],
            vec![LaneAccess {
                space: Space::Scalar,
                ..lane(0, 0x100)
            }],
            vec![LaneAccess {
                space: Space::Scratch,
                ..lane(0, 0x100)
            }],
            vec![LaneAccess {
                bytes: 0,
                ..lane(0, 0x100)
            }],
            vec![],
        ] {
            assert_eq!(LaneRange::of(&records), None, "{records:?}");
            assert!(matches!(Accesses::of(&records), Accesses::Lanes(_)));
        }
    }

    #[test]
    fn a_range_serializes_as_its_lanes() {
        let r = LaneRange {
            space: Space::Global,
            dir: Dir::Write,
            bytes: 8,
            base: 0x2000,
            lanes: 0b101,
        };
        let json = serde_json::to_string(&Accesses::Range(r)).unwrap();
        assert_eq!(
            json,
            r#"[{"lane":0,"space":"global","dir":"write","bytes":8,"address":8192},{"lane":2,"space":"global","dir":"write","bytes":8,"address":8208}]"#
        );
        let back: Accesses<'static> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Accesses::Range(r));
    }

    #[test]
    fn waitcnt_counts_follow_the_gfx9_field_layout() {
        let op = Opcode::ALL
            .iter()
            .copied()
            .find(|o| o.mnemonic() == "s_waitcnt")
            .unwrap();
        let row = isa_amdgpu::table::rows_of(op, isa_amdgpu::Target::Gfx90a)
            .next()
            .unwrap();
        // vmcnt(0x23) expcnt(5) lgkmcnt(9): bits 3:0 = 3, 15:14 = 2, 6:4 = 5, 11:8 = 9
        let simm = 0x3 | 5 << 4 | 9 << 8 | 2 << 14;
        let inst = Inst::build(row, isa_amdgpu::Target::Gfx90a)
            .unwrap()
            .set(Field::Simm16, simm)
            .unwrap()
            .encode()
            .unwrap();
        let inst = isa_amdgpu::decode(&inst, 0, isa_amdgpu::Target::Gfx90a).unwrap();
        assert_eq!(
            WaitCounts::of(&inst),
            WaitCounts {
                vmcnt: 0x23,
                expcnt: 5,
                lgkmcnt: 9
            }
        );
    }
}
