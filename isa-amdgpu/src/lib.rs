//! The AMDGPU instruction set as data, and what reads it.
//!
//! - [`table`]: one instruction table per ISA family (gfx9: gfx90a and gfx942), generated from probes of LLVM's
//!   disassembler and checked in; every other part (decoder, encoder, disassembler, later the JIT's block
//!   splitter, the timing model and the profiler) reads it.
//! - [`decode`]: bytes → [`Inst`]; [`encode`]: [`Inst`] → bytes (round trip exact); [`disasm`]: [`Inst`] → text
//!   identical to `llvm-objdump-19`.
//! - [`codeobj`]: AMDGPU ELF code objects (v4/v5), kernel descriptors, the MessagePack metadata note, and clang
//!   offload bundles inside host binaries.
//!
//! Invariant: no input, however malformed, makes this crate panic; errors name what is wrong and where.

pub mod codeobj;
