//! The events an observer sees ([`Event`]) and what they carry: an instruction's memory operation, cache
//! policy, stalls and issue, a wave's placement, a workgroup's resources; serialized with serde.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::access::{Accesses, Dir, Space};
use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{MemDir, Unit};
use isa_amdgpu::{Inst, Opcode};

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
    /// [`Observer::WANTS_ACCESSES`](super::Observer::WANTS_ACCESSES)).
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
