//! What a timed dispatch reports: cycles and time, occupancy, work and busy cycles per unit, stalls by
//! reason, the memory pipeline's counters per level, LDS bank conflicts. Plain data (serde), for the command
//! line's `--stats-json` and for the profiler.

use serde::{Deserialize, Serialize};

use super::memory::{LevelStats, MemoryStats};
use crate::observe::Stalls;

/// Instructions (or cycles) per issue unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerUnit {
    pub valu: u64,
    /// Matrix core.
    pub mfma: u64,
    pub salu: u64,
    /// Scalar memory.
    pub smem: u64,
    /// Vector memory (the texture address unit).
    pub vmem: u64,
    pub lds: u64,
    /// Branches and messages.
    pub branch: u64,
    /// Sequencer-only instructions (`s_waitcnt`, `s_nop`, `s_barrier`, ...).
    pub internal: u64,
}

impl PerUnit {
    pub fn total(&self) -> u64 {
        self.valu + self.mfma + self.salu + self.smem + self.vmem + self.lds + self.branch + self.internal
    }
}

/// How many waves the CUs held.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Wave slots per SIMD of the hardware.
    pub max_waves_per_simd: u32,
    /// Waves per SIMD this kernel's resources allow (the theoretical occupancy).
    pub limit_waves_per_simd: u32,
    /// What sets that limit: `waves` (slots), `vgprs`, `sgprs`, `lds` or `workgroups` (barrier resources).
    pub limited_by: String,
    /// Waves resident per CU, averaged over the CUs and the dispatch's duration.
    pub mean_waves_per_cu: f64,
    /// `mean_waves_per_cu` over the CU's wave slots (0..1).
    pub achieved: f64,
}

/// The statistics of one timed dispatch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingStats {
    /// The device preset id.
    pub device: String,
    pub shader_mhz: u32,
    /// Modeled shader-clock cycles from the dispatch packet to the last wave's end (its memory writes
    /// acknowledged).
    pub cycles: u64,
    /// The same in nanoseconds at the shader clock.
    pub ns: f64,
    pub workgroups: u64,
    pub waves: u64,
    pub wave_instructions: u64,
    pub occupancy: Occupancy,
    /// Instructions issued per unit.
    pub issued: PerUnit,
    /// Cycles each unit was busy, summed over its instances (VALU and matrix core per SIMD, the others per CU).
    pub busy: PerUnit,
    /// Cycles instructions waited before issuing, by reason, summed over waves.
    pub stalls: Stalls,
    /// Counters of the L1, scalar cache, instruction cache, L2, MALL and HBM.
    pub memory: MemoryStats,
    /// Cycles the LDS banks spent beyond one per access phase (SQ_LDS_BANK_CONFLICT).
    pub lds_bank_conflict_cycles: u64,
}

impl TimingStats {
    /// The memory levels by name, in order from the CU outward.
    pub fn levels(&self) -> [(&'static str, &LevelStats); 6] {
        let m = &self.memory;
        [
            ("l1", &m.l1),
            ("scalar", &m.scalar),
            ("icache", &m.icache),
            ("l2", &m.l2),
            ("mall", &m.mall),
            ("hbm", &m.hbm),
        ]
    }

    /// Bytes per second at the modeled time.
    pub fn bytes_per_second(&self, bytes: u64) -> f64 {
        if self.ns <= 0.0 {
            0.0
        } else {
            bytes as f64 / (self.ns * 1e-9)
        }
    }
}
