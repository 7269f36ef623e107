//! What an engine reports of the instructions it executes: one ([`InstEvent`]) or a batch ([`InstBatch`]),
//! and the counts of an `s_waitcnt` ([`WaitCounts`]).

use super::access::Accesses;
use isa_amdgpu::encoding::Field;
use isa_amdgpu::Inst;

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
/// an [`Event::Instruction`](super::Event::Instruction)).
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
    /// ([`Observer::WANTS_ACCESSES`](super::Observer::WANTS_ACCESSES)); none otherwise. FLAT lanes to device memory and
    /// atomics are recorded as [`Space::Global`](super::Space::Global) reads or writes; [`classify`](super::classify)
    /// gives them their space and direction.
    pub accesses: Accesses<'a>,
}

/// Instructions a wave ran one after another that access no memory, reported together to an observer that takes batches
/// ([`Observer::BATCHES`](super::Observer::BATCHES)): each one's EXEC at issue, at consecutive PCs from `pc` — `times`
/// times in a row (the passes of a loop with the same EXECs come as one batch).
#[derive(Debug, Clone, Copy)]
pub struct InstBatch<'a> {
    /// The dispatch's number ([`Dispatched`](super::Dispatched) sets it; 0 as an engine reports the batch).
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
    pub(super) fn inst_event(&self, pc: u64, inst: &'a Inst, exec: u64) -> InstEvent<'a> {
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
