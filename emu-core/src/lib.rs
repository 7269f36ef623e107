//! The emulated GPU.
//!
//! This crate owns device presets ([`device`]), the sparse device memory with checked guest accesses
//! ([`memory`]), dispatch geometry and the initial wave state from the kernel descriptor ([`dispatch`]), the
//! kernarg segment with hidden arguments ([`kernarg`]), the hardware registers of s_getreg/s_setreg ([`hwreg`]), the instruction semantics ([`sem`]) and the
//! interpreter ([`interp`]), the dispatch loop over workgroups and waves ([`engine`]), the observation seam
//! with its plain-data events ([`observe`]), and the timing model with its memory pipeline (L1, L2, MALL, HBM,
//! LDS) ([`timing`]). The engine runs every dispatch through a scheduler ([`engine::Scheduler`]), which
//! [`launch`] picks: the engine's own functional rounds, or the timing model, which sees the engine only
//! through the [`engine::Dispatch`] it is given and the observation events.
//!
//! Invariants: instruction semantics live in one place shared with the JIT; the functional model never
//! depends on the timing model (a timed dispatch computes what a functional one does, except what a kernel reads
//! of its placement in HW_ID and XCC_ID); every guest memory access is checked, and a bad kernel yields a fault report,
//! never a host crash.

pub mod clock;
pub mod device;
pub mod dispatch;
pub mod engine;
pub mod gws;
pub mod hash;
pub mod hwreg;
pub mod image;
pub mod interp;
pub mod interrupt;
pub mod kernarg;
pub mod lanefn;
pub mod launch;
pub mod memory;
pub mod observe;
pub mod rules;
pub mod sem;
pub mod timing;
pub mod watch;
pub mod wave;

pub use device::{DevicePreset, PRESETS};
pub use memory::{Access, AllocError, AllocKind, DeviceMemory, MemoryFault};
