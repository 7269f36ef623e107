//! Calls into the interpreter's implementation of an operation ([`crate::call`]): operands spilled to the
//! context, a failing call ending the block with its status, results loaded back.

use cranelift_codegen::ir::{types, InstBuilder, Value};

use crate::backend::ir::{dummy, trusted, vflags};
use crate::backend::refused::CALL_OPERANDS;
use crate::backend::types::{JitBackend, Vv, CHUNKS, I32X4};
use crate::call::{Call, Op};
use crate::ctx::{Ctx, SLOTS};

/// Where calls into the interpreter go and what they report on a fault.
pub struct CallSite<'a> {
    /// Call records of the block (their addresses are baked into the code; the block keeps them).
    pub calls: &'a mut Vec<Box<Call>>,
    pub inst: *const isa_amdgpu::Inst,
    /// The instruction's offset from the code base.
    pub offset: u64,
    /// Instructions executed when this one faults (its index in the block + 1).
    pub executed: i64,
}

/// Whether an interpreter call with `vin` vectors, `sin` scalars and `min` masks in and `vout`, `sout` and
/// `mout` out fits the context's call slots ([`Ctx`]'s `v`, `s` and `m`); one that does not is not emitted
/// ([`CALL_OPERANDS`]).
pub(super) fn call_fits(vin: usize, sin: usize, min: usize, vout: usize, sout: usize, mout: usize) -> bool {
    vin <= SLOTS && vout <= SLOTS && sin <= 16 && sout <= 16 && min <= 8 && mout <= 8
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// Calls the interpreter's implementation of `op` on spilled operands: vectors `vin`, scalars `sin`, masks
    /// `min`; returns `vout` vectors, `sout` scalars and `mout` masks. With `faults`, a failing call ends the
    /// block with the interpreter's fault report.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call(
        &mut self,
        op: Op,
        vin: &[Vv],
        sin: &[Value],
        min: &[Value],
        vout: usize,
        sout: usize,
        mout: usize,
        faults: bool,
    ) -> (Vec<Vv>, Vec<Value>, Vec<Value>) {
        if !call_fits(vin.len(), sin.len(), min.len(), vout, sout, mout) {
            self.no(CALL_OPERANDS);
            return (vec![self.dv(); vout], vec![dummy(); sout], vec![dummy(); mout]);
        }
        let ctx = self.ctx;
        self.interpreted |= matches!(op, Op::Instruction {});
        let site = &mut self.site;
        site.calls.push(Box::new(Call {
            op,
            inst: site.inst,
            offset: site.offset,
            vectors_in: vin.len(),
        }));
        let call_ptr = &**site.calls.last().expect("just pushed") as *const Call;
        let executed = site.executed;
        for (k, v) in vin.iter().enumerate() {
            for i in 0..CHUNKS {
                let c = self.ch(v, i);
                let b = &mut *self.b;
                b.ins().store(vflags(), c, ctx, Ctx::V + (256 * k + 16 * i) as i32);
            }
        }
        let b = &mut *self.b;
        for (k, x) in sin.iter().enumerate() {
            b.ins().store(trusted(), *x, ctx, Ctx::S + 4 * k as i32);
        }
        for (k, x) in min.iter().enumerate() {
            b.ins().store(trusted(), *x, ctx, Ctx::M + 8 * k as i32);
        }
        let mut sig = cranelift_codegen::ir::Signature::new(cranelift_codegen::isa::CallConv::SystemV);
        sig.params.extend([
            cranelift_codegen::ir::AbiParam::new(types::I64),
            cranelift_codegen::ir::AbiParam::new(types::I64),
        ]);
        sig.returns.push(cranelift_codegen::ir::AbiParam::new(types::I32));
        let sig = b.import_signature(sig);
        // wave_call's obligations: the call passes the block's own context (the runner's, whose env, wave and
        // LDS the block holds while it runs) and a Call the block owns (kept in `site.calls`)
        let f = b.ins().iconst(types::I64, crate::call::wave_call as *const () as i64);
        let cp = b.ins().iconst(types::I64, call_ptr as i64);
        let inst = b.ins().call_indirect(sig, f, &[ctx, cp]);
        let status = b.inst_results(inst)[0];
        // a fault (or a panic caught in the helper) ends the block with the helper's status
        let _ = faults;
        let go_on = {
            let (stop, go_on) = (b.create_block(), b.create_block());
            b.ins().brif(status, stop, &[], go_on, &[]);
            b.switch_to_block(stop);
            b.seal_block(stop);
            go_on
        };
        // the block ends here: pending register writes are made first
        self.emit_flush();
        let b = &mut *self.b;
        let e = b.ins().load(types::I64, trusted(), ctx, Ctx::EXECUTED);
        let e = b.ins().iadd_imm(e, executed);
        b.ins().store(trusted(), e, ctx, Ctx::EXECUTED);
        b.ins().return_(&[status]);
        b.switch_to_block(go_on);
        b.seal_block(go_on);
        let vo = (0..vout)
            .map(|k| {
                let mut c = [dummy(); CHUNKS];
                for (i, x) in c.iter_mut().enumerate() {
                    *x = b.ins().load(I32X4, vflags(), ctx, Ctx::V + (256 * k + 16 * i) as i32);
                }
                Vv {
                    c,
                    uniform: None,
                    lazy: None,
                }
            })
            .collect();
        let so = (0..sout)
            .map(|k| b.ins().load(types::I32, trusted(), ctx, Ctx::S + 4 * k as i32))
            .collect();
        let mo = (0..mout)
            .map(|k| b.ins().load(types::I64, trusted(), ctx, Ctx::M + 8 * k as i32))
            .collect();
        (vo, so, mo)
    }

    pub(super) fn call_v(&mut self, op: Op, vin: &[Vv], min: &[Value], vout: usize) -> Vec<Vv> {
        self.call(op, vin, &[], min, vout, 0, 0, false).0
    }

    pub(super) fn call_mem(
        &mut self,
        op: Op,
        vin: &[Vv],
        sin: &[Value],
        min: &[Value],
        vout: usize,
        sout: usize,
    ) -> (Vec<Vv>, Vec<Value>) {
        let (v, s, _) = self.call(op, vin, sin, min, vout, sout, 0, true);
        (v, s)
    }
}
