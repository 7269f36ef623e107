//! The emulated GPU.
//!
//! This crate will own device presets (MI210/gfx90a, MI300X/gfx942, …), the sparse device memory with checked
//! guest accesses, the dispatcher, waves/workgroups/CUs, the interpreter, and the timing model with its memory
//! pipeline (L1, L2, MALL, HBM, LDS).
//!
//! Invariants it will keep: instruction semantics live in one place shared with the JIT; the functional model
//! never depends on the timing model; every guest memory access is checked and a bad kernel yields a fault
//! report, never a host crash. Nothing is implemented yet: see issue 3.
