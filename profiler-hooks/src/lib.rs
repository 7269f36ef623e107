//! Profiling on top of the engine's observation seam (`emu_core::observe`): observers that turn the
//! instructions a dispatch executes into counters.
//!
//! - [`ClassCounter`]: instructions per functional unit (the instruction table's `unit` column,
//!   `isa_amdgpu::table::Unit`) and active lanes of vector instructions; `wavejit run --stats-json` and
//!   `wavejit bench` report them.
//!
//! The crate depends only on plain data: the instruction table's columns and the events the engine hands its
//! observers. Observing never changes what a dispatch computes.

mod counters;

pub use counters::ClassCounter;
