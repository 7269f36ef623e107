//! What the memory pipeline is asked ([`Kind`], [`LineRequest`]) and what it reports: one access's result
//! ([`AccessResult`]) and each level's counts ([`LevelStats`], [`MemoryStats`]).

use crate::timing::cache::CacheStats;

/// What a line request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Atomic,
}

/// One cache line of a memory instruction (see [`crate::timing::cache::coalesce`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRequest {
    /// Any address inside the line.
    pub addr: u64,
    /// Bytes of the line the instruction reads or writes.
    pub bytes: u32,
    pub kind: Kind,
}

/// What one instruction's requests cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccessResult {
    /// Cycle the last line was accepted (got the L1 port and, for a miss, an in-flight slot); the CU can
    /// start its next memory instruction from here.
    pub accepted_at: u64,
    /// Cycle the last line's data is back (reads, atomics) or its write is acknowledged.
    pub complete_at: u64,
    pub l1_hits: u32,
    pub l1_misses: u32,
    pub l2_hits: u32,
    pub l2_misses: u32,
    pub mall_hits: u32,
    pub mall_misses: u32,
}

/// Counters of one level, summed over its instances (the profiler derives TCP_*, TCC_HIT, TCC_MISS,
/// TCC_EA_RDREQ = `fill_bytes / 64`, TCC_EA_WRREQ = `writeback_bytes / 64` ... from these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelStats {
    /// Line requests looked up.
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub atomics: u64,
    pub hits: u64,
    pub misses: u64,
    /// Valid lines replaced.
    pub evictions: u64,
    /// Dirty lines replaced.
    pub writebacks: u64,
    /// Bytes delivered upward for reads and atomics.
    pub bytes_read: u64,
    /// Bytes received from above for writes.
    pub bytes_written: u64,
    /// Bytes fetched from the next level (line fills).
    pub fill_bytes: u64,
    /// Bytes written to the next level (write-through and write-backs).
    pub writeback_bytes: u64,
    /// Cycles the level's channels (ports) were busy, summed over channels.
    pub busy_cycles: u64,
}

impl LevelStats {
    /// Hits per lookup (0 when nothing was looked up).
    pub fn hit_rate(&self) -> f64 {
        if self.hits + self.misses == 0 {
            0.0
        } else {
            self.hits as f64 / (self.hits + self.misses) as f64
        }
    }

    pub(super) fn absorb(&mut self, c: &CacheStats) {
        self.evictions += c.evictions;
        self.writebacks += c.writebacks;
    }
}

/// Counters of every level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemoryStats {
    /// Vector L1 (TCP).
    pub l1: LevelStats,
    /// Scalar data cache (sL1D).
    pub scalar: LevelStats,
    /// Instruction cache (L1I).
    pub icache: LevelStats,
    /// L2 (TCC).
    pub l2: LevelStats,
    /// Infinity Cache; all zero where there is none.
    pub mall: LevelStats,
    /// Device memory: `bytes_read` / `bytes_written` are DRAM traffic.
    pub hbm: LevelStats,
}
