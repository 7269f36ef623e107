//! Operations on the wave's state outside the registers the JIT keeps: guards on a uniform bit, the shader
//! clock, hardware registers, interrupts, MODE writes and fault checks.

use cranelift_codegen::ir::{types, InstBuilder, Value};

use emu_core::sem::ExecError;

use crate::backend::ir::{dummy, trusted};
use crate::backend::refused::REAL_CLOCK;
use crate::backend::types::JitBackend;
use crate::call::Op;
use crate::ctx::Ctx;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// [`Backend::uniform_bit`](emu_core::sem::Backend::uniform_bit).
    pub(super) fn emit_uniform_bit(&mut self, s: Value, bit: u32, likely: bool) -> bool {
        // compiled the likely way; the other runs on the interpreter
        let (slow, fast) = {
            let b = &mut *self.b;
            let shifted = b.ins().ushr_imm(s, bit as i64);
            let set = b.ins().band_imm(shifted, 1);
            let (slow, fast) = (b.create_block(), b.create_block());
            if likely {
                b.ins().brif(set, fast, &[], slow, &[]);
            } else {
                b.ins().brif(set, slow, &[], fast, &[]);
            }
            b.switch_to_block(slow);
            b.seal_block(slow);
            (slow, fast)
        };
        let _ = slow;
        // the whole instruction on the interpreter, then on past the compiled form
        self.call(Op::Instruction {}, &[], &[], &[], 0, 0, 0, true);
        let b = &mut *self.b;
        let end = *self.guard_end.get_or_insert_with(|| b.create_block());
        b.ins().jump(end, &[]);
        b.switch_to_block(fast);
        b.seal_block(fast);
        likely
    }

    /// [`Backend::s_clock`](emu_core::sem::Backend::s_clock).
    pub(super) fn emit_s_clock(&mut self, clock: emu_core::sem::Clock) -> (Value, Value) {
        // the shader clock from the run's start value and the instructions executed since (earlier passes of
        // the block, then those of this pass before this one); the real-time clock on the interpreter
        if clock != emu_core::sem::Clock::Shader {
            self.no(REAL_CLOCK);
            return (dummy(), dummy());
        }
        let before = self.site.executed - 1;
        let ctx = self.ctx;
        let b = &mut *self.b;
        let now = b.ins().load(types::I64, trusted(), ctx, Ctx::CLOCK_NOW);
        let step = b.ins().load(types::I64, trusted(), ctx, Ctx::CLOCK_STEP);
        let e = b.ins().load(types::I64, trusted(), ctx, Ctx::EXECUTED);
        let n = b.ins().iadd_imm(e, before);
        let t = b.ins().imul(step, n);
        let v = b.ins().iadd(now, t);
        let lo = b.ins().ireduce(types::I32, v);
        let hi = b.ins().ushr_imm(v, 32);
        let hi = b.ins().ireduce(types::I32, hi);
        (lo, hi)
    }

    /// [`Backend::s_hwreg`](emu_core::sem::Backend::s_hwreg).
    pub(super) fn emit_s_hwreg(&mut self, reg: emu_core::hwreg::Held) -> Value {
        // the hardware registers live in the wave state, outside the registers the JIT keeps
        self.call(Op::HwReg { reg }, &[], &[], &[], 0, 1, 0, false).1[0]
    }

    /// [`Backend::s_interrupt`](emu_core::sem::Backend::s_interrupt).
    pub(super) fn emit_s_interrupt(&mut self, ctxid: Value) {
        self.call(Op::Interrupt {}, &[], &[ctxid], &[], 0, 0, 0, false);
    }

    /// [`Backend::s_set_mode`](emu_core::sem::Backend::s_set_mode).
    pub(super) fn emit_s_set_mode(&mut self, value: Value, mask: u32) -> Result<(), ExecError> {
        // checked when the code runs: a refused change faults (and ends the block)
        self.call(Op::SetMode { mask }, &[], &[value], &[], 0, 0, 0, true);
        Ok(())
    }

    /// [`Backend::fail_if_any`](emu_core::sem::Backend::fail_if_any).
    pub(super) fn emit_fail_if_any(&mut self, bad: Value, err: ExecError) -> Result<(), ExecError> {
        // checked when the code runs: with any lane set, the call faults (and ends the block)
        let b = &mut *self.b;
        let (fail, go_on) = (b.create_block(), b.create_block());
        b.ins().brif(bad, fail, &[], go_on, &[]);
        b.switch_to_block(fail);
        b.seal_block(fail);
        self.call(Op::FailIfAny { err }, &[], &[], &[bad], 0, 0, 0, true);
        let b = &mut *self.b;
        b.ins().jump(go_on, &[]);
        b.switch_to_block(go_on);
        b.seal_block(go_on);
        Ok(())
    }
}
