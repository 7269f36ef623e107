//! Timing components: the machine description and the parts a timing model is built from.
//!
//! - [`machine`]: one table per device preset (clocks, topology, caches, LDS, L2, MALL, HBM, limits,
//!   overheads), each number with its public source or marked assumed/calibrated;
//! - [`cache`]: a set-associative LRU tag cache with write policies, and the lane-address coalescer;
//! - [`memory`]: the memory pipeline (L1 → L2 → MALL → HBM, scalar and instruction caches) with latency,
//!   per-channel bandwidth and misses in flight;
//! - [`lds`]: LDS bank-conflict cycles of one wave instruction;
//! - [`rounds`]: a memory instruction's lane accesses as rounds of one access per lane, which the model and the
//!   hardware counters coalesce into lines and serve bank by bank;
//! - [`inst`]: issue cycles, latency and pipeline per opcode and target (`data/gfx9_timing.tsv`);
//! - [`issue`]: what the scheduler knows about an instruction before it issues (category, registers,
//!   sequencer meaning) and what a wave waits on (results in flight, `vmcnt`/`lgkmcnt`);
//! - [`sched`]: the timing mode of a dispatch, a [`crate::engine::Scheduler`] ([`TimingModel`]): workgroup
//!   placement, per-CU issue, the engines executing what the model picks through the dispatch the engine
//!   hands it;
//! - [`stats`]: what a timed dispatch reports ([`TimingStats`]).
//!
//! Invariants: these components only schedule and count; results of a kernel never depend on them. They
//! are deterministic (no host time, no hash-map iteration order, one host thread), so a dispatch's cycles
//! are the same on every run, host thread count and engine.

pub mod cache;
pub mod inst;
pub mod issue;
pub mod lds;
pub mod machine;
pub mod memory;
pub mod rounds;
pub mod sched;
pub mod stats;

pub use sched::TimingModel;
pub use stats::TimingStats;

/// A hint to the host to bring the cache line holding `p` into its caches, for the model's data it is about to
/// read (a cache set, a wave's state). Changes nothing the program sees.
#[inline]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch`] of the `bytes` from `p`.
#[inline]
fn prefetch_bytes<T>(p: *const T, bytes: usize) {
    for offset in (0..bytes).step_by(64) {
        prefetch(p.cast::<u8>().wrapping_add(offset));
    }
}
