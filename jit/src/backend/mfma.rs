//! Matrix fused multiply-adds (the semantics' `mfma`): through the interpreter's lane arithmetic, reading
//! runs of registers where they are.

use cranelift_codegen::ir::{types, InstBuilder, Value};

use emu_core::sem::Mfma;

use crate::backend::types::{JitBackend, Lazy, Vv};
use crate::call::{Call, Op};
use crate::ctx::Ctx;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// The file and first register when `regs` are reads of consecutive registers of one file, straight from it.
    fn reg_run(&self, regs: &[Vv]) -> Option<(i32, u32)> {
        let mut first = None;
        for (i, v) in regs.iter().enumerate() {
            let Some(Lazy::Reg {
                field,
                reg,
                kept: None,
                loaded: None,
            }) = v.lazy.map(|k| &self.lazies[k as usize])
            else {
                return None;
            };
            let (f0, r0) = *first.get_or_insert((*field, *reg));
            if *field != f0 || *reg != r0 + i as u32 {
                return None;
            }
        }
        first
    }

    /// An MFMA whose operands are each a run of registers: [`crate::call::mfma_registers`] reads them where
    /// they are and leaves D in the first call slots, returned as lazy vectors (so each register of D is
    /// written in a loop). The operand reads are spent: writing D over them keeps no copies.
    fn mfma_direct(&mut self, shape: Mfma, runs: [(i32, u32); 3], reads: Vec<Vv>) -> Vec<Vv> {
        let ctx = self.ctx;
        let site = &mut self.site;
        site.calls.push(Box::new(Call {
            op: Op::Mfma { shape },
            inst: site.inst,
            offset: site.offset,
            vectors_in: 0,
        }));
        let call_ptr = &**site.calls.last().expect("just pushed") as *const Call;
        let ptrs: Vec<Value> = runs.iter().map(|&(field, reg)| self.reg_base(field, reg)).collect();
        let b = &mut *self.b;
        let mut sig = cranelift_codegen::ir::Signature::new(cranelift_codegen::isa::CallConv::SystemV);
        sig.params.extend([cranelift_codegen::ir::AbiParam::new(types::I64); 5]);
        let sig = b.import_signature(sig);
        // mfma_registers' obligations: the call passes the block's own context, a Call the block owns (kept in
        // `site.calls`), and the bases of register runs (`reg_run`) each of whose registers was range-checked when read
        let f = b
            .ins()
            .iconst(types::I64, crate::call::mfma_registers as *const () as i64);
        let cp = b.ins().iconst(types::I64, call_ptr as i64);
        b.ins().call_indirect(sig, f, &[ctx, cp, ptrs[0], ptrs[1], ptrs[2]]);
        for v in reads {
            if let Some(k) = v.lazy {
                self.lazies[k as usize] = Lazy::Spent;
            }
        }
        (0..shape.acc_regs())
            .map(|k| self.slot_vv(Ctx::V + 256 * k as i32))
            .collect()
    }

    /// [`Backend::v_mfma`](emu_core::sem::Backend::v_mfma).
    pub(super) fn emit_v_mfma(&mut self, shape: Mfma, a: &[Vv], x: &[Vv], c: &[Vv]) -> Vec<Vv> {
        if let (Some(ra), Some(rx), Some(rc)) = (self.reg_run(a), self.reg_run(x), self.reg_run(c)) {
            return self.mfma_direct(shape, [ra, rx, rc], [a, x, c].concat());
        }
        let ins: Vec<Vv> = a.iter().chain(x).chain(c).copied().collect();
        self.call_v(Op::Mfma { shape }, &ins, &[], shape.acc_regs())
    }
}
