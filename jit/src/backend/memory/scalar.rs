//! Scalar memory: loads inline through the site's scalar window, the other scalar accesses through the
//! interpreter.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Value};

use emu_core::sem::{AtomicOp, ExecError};

use crate::backend::ir::trusted;
use crate::backend::memory::{record_fields, record_slot};
use crate::backend::types::JitBackend;
use crate::call::Op;
use crate::ctx::{scalar_window_field, scalar_window_slot};
use crate::ctx::{AccessRecord, Ctx, REC_SCALAR};

impl<'a, 'f> JitBackend<'a, 'f> {
    /// [`Backend::s_load`](emu_core::sem::Backend::s_load).
    pub(in crate::backend) fn emit_s_load(
        &mut self,
        lo: Value,
        hi: Value,
        dwords: u32,
    ) -> Result<Vec<Value>, ExecError> {
        if !self.may_record() {
            return Ok(self
                .call_mem(Op::SLoad { dwords }, &[], &[lo, hi], &[], 0, dwords as usize)
                .1);
        }
        // inside the allocation this site's last interpreted scalar load read: straight from host memory
        let ctx = self.ctx;
        let observed = self.observed;
        let slot = scalar_window_slot(self.site.offset);
        let (fast, join, rel, addr, wins) = {
            let b = &mut *self.b;
            let (lo64, hi64) = (b.ins().uextend(types::I64, lo), b.ins().uextend(types::I64, hi));
            let hi64 = b.ins().ishl_imm(hi64, 32);
            let addr = b.ins().bor(hi64, lo64);
            let addr = b.ins().band_imm(addr, !3);
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, scalar_window_field(slot, 0));
            let len = b.ins().load(types::I64, trusted(), wins, scalar_window_field(slot, 1));
            let rel = b.ins().isub(addr, start);
            let room = b.ins().iadd_imm(len, -(4 * dwords as i64));
            let short = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let outside = b.ins().icmp(IntCC::UnsignedGreaterThan, rel, room);
            let bad = b.ins().bor(short, outside);
            let (fast, slow, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..dwords {
                b.append_block_param(join, types::I32);
            }
            b.ins().brif(bad, slow, &[], fast, &[]);
            b.switch_to_block(slow);
            b.seal_block(slow);
            (fast, join, rel, addr, wins)
        };
        let slow_out = self
            .call_mem(Op::SLoad { dwords }, &[], &[lo, hi], &[], 0, dwords as usize)
            .1;
        let b = &mut *self.b;
        let args: Vec<_> = slow_out.iter().map(|x| (*x).into()).collect();
        b.ins().jump(join, &args);
        b.switch_to_block(fast);
        b.seal_block(fast);
        if observed {
            // the wave's one scalar access, as lane 0 of a record
            let at = record_slot(b, ctx);
            let a_lo = b.ins().ireduce(types::I32, addr);
            let a_hi = b.ins().ushr_imm(addr, 32);
            let a_hi = b.ins().ireduce(types::I32, a_hi);
            b.ins().store(trusted(), a_lo, at, Ctx::RECS + AccessRecord::LO);
            b.ins().store(trusted(), a_hi, at, Ctx::RECS + AccessRecord::HI);
            let one = b.ins().iconst(types::I64, 1);
            record_fields(b, ctx, at, one, 0, AccessRecord::desc(REC_SCALAR, false, 4 * dwords));
        }
        let host = b.ins().load(types::I64, trusted(), wins, scalar_window_field(slot, 2));
        let p = b.ins().iadd(host, rel);
        let words: Vec<_> = (0..dwords)
            .map(|d| b.ins().load(types::I32, MemFlags::new(), p, 4 * d as i32).into())
            .collect();
        b.ins().jump(join, &words);
        b.switch_to_block(join);
        b.seal_block(join);
        Ok(b.block_params(join).to_vec())
    }

    /// [`Backend::s_load_part`](emu_core::sem::Backend::s_load_part).
    pub(in crate::backend) fn emit_s_load_part(
        &mut self,
        lo: Value,
        hi: Value,
        dwords: u32,
        valid: Value,
    ) -> Result<Vec<Value>, ExecError> {
        Ok(self
            .call_mem(Op::SLoadPart { dwords }, &[], &[lo, hi, valid], &[], 0, dwords as usize)
            .1)
    }

    /// [`Backend::s_store`](emu_core::sem::Backend::s_store).
    pub(in crate::backend) fn emit_s_store(
        &mut self,
        lo: Value,
        hi: Value,
        data: &[Value],
        valid: Value,
    ) -> Result<(), ExecError> {
        let ins: Vec<Value> = [lo, hi]
            .into_iter()
            .chain(data.iter().copied())
            .chain([valid])
            .collect();
        self.call_mem(Op::SStore { n: data.len() as u32 }, &[], &ins, &[], 0, 0);
        Ok(())
    }

    /// [`Backend::s_atomic`](emu_core::sem::Backend::s_atomic).
    pub(in crate::backend) fn emit_s_atomic(
        &mut self,
        op: AtomicOp,
        lo: Value,
        hi: Value,
        data: &[Value],
        cmp: &[Value],
        valid: Value,
    ) -> Result<Vec<Value>, ExecError> {
        // compare-and-swap passes its compare values, the others as many copies of the data (unused)
        let cmp = if cmp.len() == data.len() { cmp } else { data };
        let ins: Vec<Value> = [lo, hi]
            .into_iter()
            .chain(data.iter().copied())
            .chain(cmp.iter().copied())
            .chain([valid])
            .collect();
        Ok(self
            .call_mem(
                Op::SAtomic {
                    op,
                    n: data.len() as u32,
                },
                &[],
                &ins,
                &[],
                0,
                data.len(),
            )
            .1)
    }
}
