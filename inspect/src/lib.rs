//! Inspecting wavefront execution: a step debugger that also steps backwards ([`debugger`]) and a
//! self-contained HTML wavefront explorer ([`explorer`]), both over a [`session::Session`] — a dispatch run
//! one workgroup at a time in a fixed order on either engine, observed through the engines' observation seam
//! (`emu_core::observe`).
//!
//! Invariants: every run of a session executes the same instructions in the same order, so replaying from the
//! dispatch's start reaches any earlier point with the state a forward run had there; the engines run
//! unchanged (the session is an observer that asks them to hand a wave back, never a second implementation).

pub mod debugger;
pub mod explorer;
pub mod help;
pub mod protocol;
pub mod regs;
pub mod session;

pub use debugger::{Answer, DebugInfo, Debugger};
pub use session::{Session, WaveKey};
