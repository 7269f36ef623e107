//! Cranelift translation of AMDGPU instruction blocks to host code.
//!
//! This crate will lower the same instruction semantics that `emu-core`'s interpreter executes into Cranelift
//! IR, keep a translation cache keyed by code object and PC, and fall back to the interpreter for anything it
//! does not translate. Nothing is implemented yet: see issue 4.
