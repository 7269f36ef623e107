//! Timing components: the machine description and the parts a timing model is built from.
//!
//! - [`machine`]: one table per device preset (clocks, topology, caches, LDS, L2, MALL, HBM, limits,
//!   overheads), each number with its public source or marked assumed/calibrated;
//! - [`cache`]: a set-associative LRU tag cache with write policies, and the lane-address coalescer;
//! - [`memory`]: the memory pipeline (L1 → L2 → MALL → HBM, scalar and instruction caches) with latency,
//!   per-channel bandwidth and misses in flight;
//! - [`lds`]: LDS bank-conflict cycles of one wave instruction;
//! - [`inst`]: issue cycles, latency and pipeline per opcode and target (`data/gfx9_timing.tsv`);
//! - [`issue`]: what the scheduler knows about an instruction before it issues (category, registers,
//!   sequencer meaning) and what a wave waits on (results in flight, `vmcnt`/`lgkmcnt`);
//! - [`sched`]: the timing mode of a dispatch: workgroup placement, per-CU issue, the engines executing
//!   what the model picks ([`sched::run_timed`]);
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
pub mod sched;
pub mod stats;

pub use stats::TimingStats;
