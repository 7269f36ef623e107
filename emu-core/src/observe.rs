//! The observation seam: a timing model or a profiler sees every executed instruction of every wave,
//! without touching results. The engine is generic over the observer, so with [`NoObserver`] the calls
//! compile to nothing. Observers that count (instructions per functional unit, vector lanes) are in
//! `profiler-hooks`.

use isa_amdgpu::Inst;

/// Which memory a lane access went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// Device memory (global, FLAT, scratch, scalar loads), by device address.
    Global,
    /// The workgroup's LDS, by byte offset.
    Lds,
}

/// One lane's access to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneAccess {
    /// 0..63, or 64 for the wave's scalar loads.
    pub lane: u8,
    pub space: Space,
    pub address: u64,
    pub bytes: u32,
    pub write: bool,
}

/// One executed instruction.
#[derive(Debug, Clone, Copy)]
pub struct InstEvent<'a> {
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub pc: u64,
    /// The instruction: its unit, wait-counter class and (for s_waitcnt) counts are in `inst.info` and its fields.
    pub inst: &'a Inst,
    /// EXEC when the instruction issued.
    pub exec: u64,
    /// Every lane's memory accesses, in lane order, when the observer asks for them
    /// ([`Observer::WANTS_ACCESSES`]); empty otherwise.
    pub accesses: &'a [LaneAccess],
}

/// Something that watches a dispatch execute. Called from the host threads that run workgroups.
pub trait Observer: Sync {
    /// False only for [`NoObserver`]: engines may skip producing events altogether.
    const ACTIVE: bool = true;
    /// Whether events carry per-lane memory accesses (recording them costs a little).
    const WANTS_ACCESSES: bool = false;
    /// After each instruction of each wave.
    fn instruction(&self, _ev: &InstEvent<'_>) {}
    /// After each instruction: true to let the workgroup's other waves issue before this one continues (a
    /// timing model interleaves waves this way; results do not depend on it, barriers keep their meaning).
    fn switch_wave(&self, _ev: &InstEvent<'_>) -> bool {
        false
    }
    /// When a wave executes `s_endpgm`.
    fn wave_end(&self, _workgroup: [u32; 3], _wave: u32, _instructions: u64) {}
}

/// Observes nothing, at no cost.
pub struct NoObserver;

impl Observer for NoObserver {
    const ACTIVE: bool = false;
}
