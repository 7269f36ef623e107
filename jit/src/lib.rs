//! Cranelift translation of AMDGPU wavefront code to host code.
//!
//! The JIT implements `emu_core::sem::Backend` by emitting Cranelift IR ([`backend`]), so the instruction
//! semantics are the interpreter's, written once. Blocks of straight-line code are translated on first use
//! ([`compile`]) and cached per loaded code object and PC; whatever the JIT does not emit runs on the
//! interpreter, called from the compiled block, so every kernel runs and results are the interpreter's.
//! [`Jit`] is an `emu_core::engine::WaveRunner`: `KernelDispatch::run_with(&jit, observer)` runs a dispatch on
//! it (and `run_launch(..., &jit, observer)` one whose code is already loaded). What can go wrong is a
//! [`JitError`]; during a dispatch it reaches the caller inside an `EngineError`.

pub mod backend;
pub mod call;
pub mod code_memory;
pub mod compile;
pub mod ctx;
pub mod disk;
pub mod error;
pub mod reloc;
pub mod runner;

pub use error::JitError;
pub use runner::{BlockExit, Jit, JitOptions, JitStats};
