//! A drop-in `libhsa-runtime64.so.1` over `emu-core`: unmodified ROCm user space (`libamdhip64`, `rocminfo`)
//! runs on emulated GPUs.
//!
//! The library exports the 224 `hsa_*` functions of ROCm 5.2's runtime with symbol version `ROCR_1`. Behind them:
//! a CPU agent and the emulated GPU agents named by `WAVEJIT_DEVICES` (default `mi210`; `ROCR_VISIBLE_DEVICES`
//! chooses and orders them as ROCm's runtime does), their memory pools over
//! one device memory whose addresses are host addresses, signals in device memory laid out as `amd_signal_t`,
//! AQL queues processed by one thread each (kernels run on the JIT, or the interpreter with
//! `WAVEJIT_ENGINE=interp`; in the timing model with `WAVEJIT_TIMING=1`, which makes every timestamp modeled
//! time), an SDMA-like copy engine, and a loader for code objects. What is not provided returns an error status
//! and says why on stderr; nothing unwinds into the caller. The process publishes its devices, memory use and
//! busy time in the per-user SMI registry (`gpu::smi`) for `wavejit smi` and rocm-smi. Under `wavejit profile`
//! (`WAVEJIT_PROFILE_DIR`) it records its dispatches with hardware counters, copies, barriers and API calls
//! (`gpu::profile`, `gpu::dispatch`).

pub mod api;
pub mod ffi;
pub mod image;
pub mod info;
pub mod loader;
pub mod memory;
pub mod queue;
pub mod runtime;
pub mod signal;
pub mod svm;
