//! What the JIT does not emit (the semantics' `refused` and `index`): VGPR index mode, global wave sync,
//! typed buffer and image accesses. An instruction that needs them runs on the interpreter.

use cranelift_codegen::ir::Value;

use emu_core::image::{FormatAccess, ImageInst};
use emu_core::sem::ExecError;

use crate::backend::types::{JitBackend, Vv};

impl<'a, 'f> JitBackend<'a, 'f> {
    /// [`Backend::index_mode`](emu_core::sem::Backend::index_mode).
    pub(super) fn emit_index_mode(&mut self) -> bool {
        // compiled code never runs in index mode (see the trait)
        false
    }

    /// [`Backend::set_index_mode`](emu_core::sem::Backend::set_index_mode).
    pub(super) fn emit_set_index_mode(&mut self, _on: bool) {
        // the mode lives outside the registers the JIT keeps; the interpreter switches it, and the runner
        // interprets while it is on
        self.no("switching VGPR index mode");
    }

    /// [`Backend::v_get_at`](emu_core::sem::Backend::v_get_at).
    pub(super) fn emit_v_get_at(&mut self, _reg: Value) -> Vv {
        self.no("a VGPR chosen at run time (index mode)");
        self.dv()
    }

    /// [`Backend::v_set_at`](emu_core::sem::Backend::v_set_at).
    pub(super) fn emit_v_set_at(&mut self, _reg: Value, _v: Vv, _m: Value) {
        self.no("a VGPR chosen at run time (index mode)");
    }

    /// [`Backend::gws_barrier`](emu_core::sem::Backend::gws_barrier).
    pub(super) fn emit_gws_barrier(&mut self, _count: Value) {
        // the wave's barrier state lives outside the registers the JIT keeps
        self.no("global wave sync");
    }

    /// [`Backend::gws_sema`](emu_core::sem::Backend::gws_sema).
    pub(super) fn emit_gws_sema(&mut self, _op: emu_core::gws::SemaOp, _m0: Value, _offset0: u32, _value: Value) {
        // as the barrier: the request goes to the dispatch through the interpreter's wave state
        self.no("global wave sync");
    }

    /// [`Backend::v_buffer_format`](emu_core::sem::Backend::v_buffer_format).
    pub(super) fn emit_v_buffer_format(
        &mut self,
        op: &FormatAccess,
        _word3: Value,
        _lo: Vv,
        _hi: Vv,
        _data: &[Vv],
        _m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        // format conversion stays with the interpreter
        self.no("typed buffer access");
        Ok(vec![self.dv(); if op.load { op.data_regs() } else { 0 }])
    }

    /// [`Backend::v_image`](emu_core::sem::Backend::v_image).
    pub(super) fn emit_v_image(
        &mut self,
        op: &ImageInst,
        _t: [Value; 8],
        _s: [Value; 4],
        _addr: &[Vv],
        _data: &[Vv],
        _m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        // texel formats and filtering stay with the interpreter
        self.no("image access");
        // (the count is the interpreter's to decide: the instruction is never compiled)
        Ok(vec![self.dv(); op.data_regs()])
    }
}
