//! Profiling and monitoring of emulated GPUs, on plain data: the instruction table's columns, the events the
//! engine hands its observers (`emu_core::observe`), and what the runtime shim publishes.
//!
//! - [`ClassCounter`]: instructions per functional unit (the instruction table's `unit` column,
//!   `isa_amdgpu::table::Unit`) and active lanes of vector instructions; `wavejit run --stats-json` and
//!   `wavejit bench` report them.
//! - [`smi`]: the SMI registry: every process running on the runtime shim publishes its emulated devices, their
//!   memory use and busy time in a small per-process file, and `wavejit smi` and the sysfs view `wavejit exec`
//!   builds for `rocm-smi` read those files.
//!
//! Observing never changes what a dispatch computes.

pub mod catalog;
mod counters;
pub mod exec_report;
pub mod hw;
pub mod record;
pub mod smi;

pub use counters::ClassCounter;
pub use hw::HwCounters;
