//! Hardware-named counters, dispatch traces, metrics and the SMI view of emulated GPUs.
//!
//! This crate depends only on plain data (no engine crate): the runtime shim feeds it what it knows, and the
//! tools read it back. Today it holds the SMI registry ([`smi`]): every process running on the runtime shim
//! publishes its emulated devices, their memory use and busy time in a small per-process file, and
//! `wavejit smi` and the sysfs view `wavejit exec` builds for `rocm-smi` read those files. Counters and traces
//! from the engine's observation seam come later.

pub mod smi;
