//! What the JIT does not emit (the semantics' `refused` and `index`): VGPR index mode, global wave sync,
//! typed buffer and image accesses, the real-time clock, interpreter calls with more operands than the
//! context's call slots hold, register numbers outside the files. The reasons are named here once: the
//! [`super::Probe`] refuses an instruction that needs any of them (it then runs on the interpreter), and the
//! emitter names the same reason should it meet one.

use emu_core::image::{FormatAccess, ImageInst};
use emu_core::sem::ExecError;

use crate::backend::types::{JitBackend, Vv};

/// Switching VGPR index mode: the mode lives outside the registers the JIT keeps; the interpreter switches it,
/// and the runner interprets while it is on.
pub(super) const INDEX_MODE: &str = "switching VGPR index mode";
/// A VGPR chosen at run time: only in index mode, where compiled code never runs.
pub(super) const VGPR_AT: &str = "a VGPR chosen at run time (index mode)";
/// Global wave sync: the wave's barrier state lives outside the registers the JIT keeps, and a semaphore's
/// request goes to the dispatch through the interpreter's wave state.
pub(super) const GWS: &str = "global wave sync";
/// Typed buffer accesses: format conversion stays with the interpreter.
pub(super) const TYPED_BUFFER: &str = "typed buffer access";
/// Image accesses: texel formats and filtering stay with the interpreter.
pub(super) const IMAGE: &str = "image access";
/// The real-time clock: read on the interpreter (the shader clock is compiled).
pub(super) const REAL_CLOCK: &str = "reading the real-time clock";
/// An interpreter call whose operands do not fit the context's call slots ([`super::calls::call_fits`]).
pub(super) const CALL_OPERANDS: &str = "an interpreter call with too many operands";
/// A register number past the architectural files ([`super::regcache::FILE_REGS`]).
pub(super) const OUTSIDE_FILE: &str = "a register number outside the register file";

impl<'a, 'f> JitBackend<'a, 'f> {
    /// [`Backend::index_mode`](emu_core::sem::Backend::index_mode).
    pub(super) fn emit_index_mode(&mut self) -> bool {
        // compiled code never runs in index mode (see the trait)
        false
    }

    /// [`Backend::set_index_mode`](emu_core::sem::Backend::set_index_mode).
    pub(super) fn emit_set_index_mode(&mut self) {
        self.no(INDEX_MODE);
    }

    /// [`Backend::v_get_at`](emu_core::sem::Backend::v_get_at).
    pub(super) fn emit_v_get_at(&mut self) -> Vv {
        self.no(VGPR_AT);
        self.dv()
    }

    /// [`Backend::v_set_at`](emu_core::sem::Backend::v_set_at).
    pub(super) fn emit_v_set_at(&mut self) {
        self.no(VGPR_AT);
    }

    /// [`Backend::gws_barrier`](emu_core::sem::Backend::gws_barrier) and
    /// [`Backend::gws_sema`](emu_core::sem::Backend::gws_sema).
    pub(super) fn emit_gws(&mut self) {
        self.no(GWS);
    }

    /// [`Backend::v_buffer_format`](emu_core::sem::Backend::v_buffer_format).
    pub(super) fn emit_v_buffer_format(&mut self, op: &FormatAccess) -> Result<Vec<Vv>, ExecError> {
        self.no(TYPED_BUFFER);
        Ok(vec![self.dv(); if op.load { op.data_regs() } else { 0 }])
    }

    /// [`Backend::v_image`](emu_core::sem::Backend::v_image).
    pub(super) fn emit_v_image(&mut self, op: &ImageInst) -> Result<Vec<Vv>, ExecError> {
        self.no(IMAGE);
        // (the count is the interpreter's to decide: the instruction is never compiled)
        Ok(vec![self.dv(); op.data_regs()])
    }
}
