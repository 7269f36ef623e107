//! The emulated GPU.
//!
//! This crate owns device presets ([`device`]), the sparse device memory with checked guest accesses
//! ([`memory`]), dispatch geometry and the initial wave state from the kernel descriptor ([`dispatch`]), the
//! kernarg segment with hidden arguments ([`kernarg`]), the state of a wave ([`wave`]), the instruction
//! semantics written once ([`sem`], with the rules both engines follow in [`rules`], per-lane helpers in
//! [`lanefn`] and images in [`image`]), the interpreter ([`interp`]), the engine that runs dispatches on the
//! interpreter or another wave runner such as the JIT ([`engine`]), the observation seam ([`observe`]) and the
//! timing components with the memory pipeline (L1, L2, MALL, HBM, LDS) they model ([`timing`]).
//!
//! Invariants: instruction semantics live in one place shared with the JIT; the functional model never
//! depends on the timing model; every guest memory access is checked, and a bad kernel yields a fault report,
//! never a host crash.

pub mod device;
pub mod dispatch;
pub mod engine;
pub mod image;
pub mod interp;
pub mod kernarg;
pub mod lanefn;
pub mod memory;
pub mod observe;
pub mod rules;
pub mod sem;
pub mod timing;
pub mod wave;

pub use device::{DevicePreset, PRESETS};
pub use memory::{Access, AllocError, AllocKind, DeviceMemory, MemoryFault};
