//! A drop-in `libhsa-runtime64.so.1` over `emu-core`.
//!
//! This crate will export the HSA API (agents, memory pools, AQL queues, signals, executables, the AMD loader
//! extension) so unmodified ROCm user space runs on emulated GPUs. Nothing is implemented yet: see issue 5.
