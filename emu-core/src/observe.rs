//! The observation seam: a timing model or a profiler sees every executed instruction of every wave,
//! without touching results. The engine is generic over the observer, so with [`NoObserver`] the calls
//! compile to nothing.

use std::sync::atomic::{AtomicU64, Ordering};

use isa_amdgpu::table::Unit;
use isa_amdgpu::Inst;

/// One executed instruction.
#[derive(Debug, Clone, Copy)]
pub struct InstEvent<'a> {
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub pc: u64,
    pub inst: &'a Inst,
    /// EXEC when the instruction issued.
    pub exec: u64,
}

/// Something that watches a dispatch execute. Called from the host threads that run workgroups.
pub trait Observer: Sync {
    /// After each instruction of each wave.
    fn instruction(&self, _ev: &InstEvent<'_>) {}
    /// When a wave executes `s_endpgm`.
    fn wave_end(&self, _workgroup: [u32; 3], _wave: u32, _instructions: u64) {}
}

/// Observes nothing, at no cost.
pub struct NoObserver;

impl Observer for NoObserver {}

const UNITS: [Unit; 12] = [
    Unit::Salu,
    Unit::Smem,
    Unit::Branch,
    Unit::Msg,
    Unit::Valu,
    Unit::Trans,
    Unit::F64,
    Unit::Mfma,
    Unit::Lds,
    Unit::Vmem,
    Unit::Flat,
    Unit::Misc,
];

/// Counts executed instructions per functional unit, and active lanes of vector instructions.
#[derive(Default)]
pub struct ClassCounter {
    counts: [AtomicU64; 12],
    vector_lanes: AtomicU64,
}

impl ClassCounter {
    /// (unit name, instructions) for every unit that executed something.
    pub fn counts(&self) -> Vec<(&'static str, u64)> {
        UNITS
            .iter()
            .zip(&self.counts)
            .map(|(u, c)| (unit_name(*u), c.load(Ordering::Relaxed)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Sum over vector instructions of their active lanes (VALU lane operations and memory lanes).
    pub fn vector_lanes(&self) -> u64 {
        self.vector_lanes.load(Ordering::Relaxed)
    }
}

/// Lower-case name of a unit, as in the instruction table.
pub fn unit_name(u: Unit) -> &'static str {
    match u {
        Unit::Salu => "salu",
        Unit::Smem => "smem",
        Unit::Branch => "branch",
        Unit::Msg => "msg",
        Unit::Valu => "valu",
        Unit::Trans => "trans",
        Unit::F64 => "f64",
        Unit::Mfma => "mfma",
        Unit::Lds => "lds",
        Unit::Vmem => "vmem",
        Unit::Flat => "flat",
        Unit::Misc => "misc",
    }
}

impl Observer for ClassCounter {
    fn instruction(&self, ev: &InstEvent<'_>) {
        let unit = ev.inst.info.unit;
        let i = UNITS.iter().position(|u| *u == unit).unwrap_or(UNITS.len() - 1);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        if matches!(unit, Unit::Valu | Unit::Trans | Unit::F64 | Unit::Mfma | Unit::Lds | Unit::Vmem | Unit::Flat) {
            self.vector_lanes.fetch_add(ev.exec.count_ones() as u64, Ordering::Relaxed);
        }
    }
}
