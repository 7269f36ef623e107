//! The AMDGPU instruction set as data, and what reads it.
//!
//! - [`table`]: one instruction table per ISA family (gfx9: gfx90a and gfx942), generated from probes of LLVM's
//!   disassembler into `data/gfx9.tsv` and checked in; every other part (decoder, encoder, disassembler, the
//!   engine's semantics, the JIT's block splitter, the timing components and the profiler's counters) reads it.
//! - [`encoding`]: the bit layout of every encoding, so that decoding and encoding are field extraction and
//!   packing driven by data.
//! - [`inst`]: bytes → [`Inst`] ([`decode`]); [`InstBuilder`] → bytes (the encoder; round trip exact).
//! - [`disasm`]: [`Inst`] → text identical to `llvm-objdump-19`.
//! - [`constants`]: the inline constants (operand values 128..=208, 240..=248), for the disassembler and the
//!   engines.
//! - [`codeobj`]: AMDGPU ELF code objects (v4/v5), kernel descriptors, the MessagePack metadata note, and clang
//!   offload bundles inside host binaries.
//!
//! Invariant: no input, however malformed, makes this crate panic; errors name what is wrong and where.

pub mod codeobj;
pub mod constants;
pub mod disasm;
pub mod encoding;
pub mod inst;
pub mod listing;
pub mod table;

pub use encoding::{Encoding, Field};
pub use inst::{decode, decode_all, DecodeError, EncodeError, Form, Inst, InstBuilder};
pub use table::{Lookup, OpInfo, Opcode, Target, GFX9};
