//! The emulated GPUs of a process, whichever way a program reaches them: through the drop-in HSA runtime
//! (`runtime-shim`, which replaces ROCm's runtime) or through the emulated kernel driver (`wavejit-driver`, under
//! ROCm's own runtime or tinygrad's). Both routes take their settings from the same environment variables, which
//! `wavejit exec` sets ([`settings`]), and run dispatches on the same engines.

pub mod dispatch;
pub mod explore;
pub mod inspect;
pub mod launch;
pub mod profile;
pub mod report;
pub mod settings;
pub mod smi;
pub mod stats;
pub mod vram;

pub use settings::{EngineChoice, Settings};
