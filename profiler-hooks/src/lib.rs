//! Hardware-named counters, dispatch traces and metrics.
//!
//! This crate depends only on plain data: it will receive events from the engine's observation seam and turn
//! them into counters, traces and the SMI view. Nothing is implemented yet.
