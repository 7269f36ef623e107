//! Register writes made where the instruction stands: a loop over the chunks when the value allows it (with a
//! NaN check and redo), a read from memory written straight into the register, or sixteen chunk stores.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Value};

use crate::backend::ir::vflags;
use crate::backend::memory::gather_chunk;
use crate::backend::types::{JitBackend, Lazy, ReadAt, Vv, CHUNKS, I32X4};
use crate::call::Op;
use crate::ctx::{Ctx, MASK_TABLE};

/// Chunks a register-write loop computes and stores per pass (a divisor of [`CHUNKS`]): fewer loop branches and
/// NaN checks per chunk, and independent chunks for the host's pipelines.
const STORE_UNROLL: usize = 4;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// The write of a read ([`ReadAt`]) to the register at `base`: decided once, a loop of four-dword loads
    /// (every chunk consecutive dwords), of one-dword loads splat (every chunk one address), of lane-by-lane
    /// loads (a global read otherwise), or of the interpreter's result from the tmp slot under EXEC.
    fn store_read(&mut self, base: Value, r: &ReadAt, m: Value, spill: &[(Value, usize)]) {
        let ctx = self.ctx;
        #[derive(Clone, Copy, PartialEq)]
        enum Kind {
            Seq,
            Same,
            Lanes,
        }
        let dwords = r.bytes == 4;
        let kinds: &[Kind] = match (r.gather, dwords) {
            (false, _) => &[Kind::Seq, Kind::Same],
            (true, true) => &[Kind::Seq, Kind::Same, Kind::Lanes],
            (true, false) => &[Kind::Lanes],
        };
        let (starts, general, done) = {
            let b = &mut *self.b;
            let (q, general, done) = (b.create_block(), b.create_block(), b.create_block());
            let starts: Vec<_> = kinds.iter().map(|_| b.create_block()).collect();
            b.ins().brif(r.quick, q, &[], general, &[]);
            b.switch_to_block(q);
            b.seal_block(q);
            match kinds.len() {
                1 => {
                    b.ins().jump(starts[0], &[]);
                }
                2 => {
                    b.ins().brif(r.seq, starts[0], &[], starts[1], &[]);
                }
                _ => {
                    let other = b.create_block();
                    b.ins().brif(r.seq, starts[0], &[], other, &[]);
                    b.switch_to_block(other);
                    b.seal_block(other);
                    b.ins().brif(r.same, starts[1], &[], starts[2], &[]);
                }
            }
            (starts, general, done)
        };
        for (&kind, &start) in kinds.iter().zip(&starts) {
            let head = {
                let b = &mut *self.b;
                b.switch_to_block(start);
                b.seal_block(start);
                let head = b.create_block();
                b.append_block_param(head, types::I64);
                let zero = b.ins().iconst(types::I64, 0);
                b.ins().jump(head, &[zero.into()]);
                b.switch_to_block(head);
                head
            };
            let off = self.b.block_params(head)[0];
            // STORE_UNROLL chunks per pass, every address read and every load made before the first store
            // (the destination may be the address register)
            let mut loaded = Vec::with_capacity(STORE_UNROLL);
            for k in 0..STORE_UNROLL {
                let at = if k == 0 {
                    off
                } else {
                    self.b.ins().iadd_imm(off, 16 * k as i64)
                };
                let x = match kind {
                    Kind::Lanes => {
                        let a = self.ch_at(&r.addr, at, spill, true);
                        let b = &mut *self.b;
                        gather_chunk(b, a, r.base, r.offset, r.bytes, r.signed, None)
                    }
                    _ => {
                        let first = self.first_lane_at(&r.addr, at, spill);
                        let b = &mut *self.b;
                        let first = b.ins().uextend(types::I64, first);
                        let p = b.ins().iadd(r.base, first);
                        if kind == Kind::Seq {
                            b.ins().load(I32X4, MemFlags::new(), p, r.offset as i32)
                        } else {
                            let x = b.ins().load(types::I32, MemFlags::new(), p, r.offset as i32);
                            b.ins().splat(I32X4, x)
                        }
                    }
                };
                loaded.push((at, x));
            }
            let b = &mut *self.b;
            for (at, x) in loaded {
                let d = b.ins().iadd(base, at);
                b.ins().store(vflags(), x, d, 0);
            }
            let next = b.ins().iadd_imm(off, 16 * STORE_UNROLL as i64);
            let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
            b.ins().brif(more, head, &[next.into()], done, &[]);
            b.seal_block(head);
        }
        // the interpreter's result, under EXEC
        let b = &mut *self.b;
        b.switch_to_block(general);
        b.seal_block(general);
        let table = b.ins().iconst(types::I64, MASK_TABLE.as_ptr() as i64);
        for i in 0..CHUNKS {
            let x = b
                .ins()
                .load(I32X4, vflags(), ctx, Ctx::TMP + (256 * r.slot + 16 * i) as i32);
            let bits = b.ins().ushr_imm(m, 4 * i as i64);
            let idx = b.ins().band_imm(bits, 15);
            let idx = b.ins().imul_imm(idx, 16);
            let at = b.ins().iadd(table, idx);
            let lanes = b.ins().load(I32X4, vflags(), at, 0);
            let old = b.ins().load(I32X4, vflags(), base, 16 * i as i32);
            let x = b.ins().bitselect(lanes, x, old);
            b.ins().store(vflags(), x, base, 16 * i as i32);
        }
        b.ins().jump(done, &[]);
        b.switch_to_block(done);
        b.seal_block(done);
    }

    /// The write of `v` to the register at `base` as a loop over its chunks, [`STORE_UNROLL`] per pass, from
    /// block `start` to `done`: from chunk 0, or (when `start` has a parameter) from the chunk offset it is given
    /// (a pass's first). With `redo`, each stored
    /// chunk is checked for NaN (`checked`: `v` computed without its NaN rule) and a NaN chunk continues at
    /// `redo` with its offset; with `mask`, only the lanes it selects are written.
    #[allow(clippy::too_many_arguments)]
    fn store_loop(
        &mut self,
        start: cranelift_codegen::ir::Block,
        done: cranelift_codegen::ir::Block,
        redo: Option<cranelift_codegen::ir::Block>,
        base: Value,
        v: &Vv,
        spill: &[(Value, usize)],
        checked: bool,
        mask: Option<Value>,
    ) {
        let head = {
            let b = &mut *self.b;
            b.switch_to_block(start);
            b.seal_block(start);
            let head = b.create_block();
            b.append_block_param(head, types::I64);
            let from = match b.block_params(start).first() {
                Some(p) => *p,
                None => b.ins().iconst(types::I64, 0),
            };
            b.ins().jump(head, &[from.into()]);
            b.switch_to_block(head);
            head
        };
        let off = self.b.block_params(head)[0];
        // STORE_UNROLL chunks per pass: all computed (and checked) before any is stored, so a NaN sends the
        // pass's first chunk to `redo` with its sources untouched
        let mut stores = Vec::with_capacity(STORE_UNROLL);
        for k in 0..STORE_UNROLL {
            let at = if k == 0 {
                off
            } else {
                self.b.ins().iadd_imm(off, 16 * k as i64)
            };
            let x = self.ch_at(v, at, spill, !checked);
            let b = &mut *self.b;
            let p = b.ins().iadd(base, at);
            let x = match mask {
                None => x,
                Some(m) => {
                    // the four mask bits of this chunk pick its lane mask from the table
                    let shift = b.ins().ushr_imm(at, 2);
                    let bits = b.ins().ushr(m, shift);
                    let idx = b.ins().band_imm(bits, 15);
                    let idx = b.ins().imul_imm(idx, 16);
                    let table = b.ins().iconst(types::I64, MASK_TABLE.as_ptr() as i64);
                    let t = b.ins().iadd(table, idx);
                    let lanes = b.ins().load(I32X4, vflags(), t, 0);
                    let old = b.ins().load(I32X4, vflags(), p, 0);
                    b.ins().bitselect(lanes, x, old)
                }
            };
            stores.push((p, x));
        }
        let b = &mut *self.b;
        if let Some(redo) = redo {
            // checked before they are stored, so the pass is redone from its sources as they are
            let mut any = None;
            for &(_, x) in &stores {
                let f = Self::to_f(b, x);
                let nan = b.ins().fcmp(FloatCC::Unordered, f, f);
                any = Some(match any {
                    None => nan,
                    Some(a) => b.ins().bor(a, nan),
                });
            }
            let any = b.ins().vany_true(any.expect("a pass has chunks"));
            let next = b.create_block();
            b.ins().brif(any, redo, &[off.into()], next, &[]);
            b.switch_to_block(next);
            b.seal_block(next);
        }
        for (p, x) in stores {
            b.ins().store(vflags(), x, p, 0);
        }
        let next = b.ins().iadd_imm(off, 16 * STORE_UNROLL as i64);
        let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
        b.ins().brif(more, head, &[next.into()], done, &[]);
        b.seal_block(head);
    }

    /// Writes the lanes of `v` that `m` selects to register `reg` of the file at `base_field`; with every lane
    /// selected (the common case) a plain store, otherwise a blend with the old value.
    pub(super) fn store_reg(&mut self, base_field: i32, reg: u32, v: Vv, m: Value) {
        // known lanes written where the code dominates the rest of the block are known there
        let lanes = if self.guard_end.is_none() { self.known(&v) } else { None };
        // the write forgets what was known of the register (`RegCache::written`, on every path of it)
        self.write_reg(base_field, reg, v, m);
        if let Some(lanes) = lanes {
            self.cache.known.push(((base_field, reg), m, lanes));
        }
    }

    /// [`Self::store_reg`]'s write.
    fn write_reg(&mut self, base_field: i32, reg: u32, v: Vv, m: Value) {
        if self.cache.defer {
            self.defer_write(base_field, reg, v, m);
            return;
        }
        // SAFETY: the instruction lives in the block's slice while the block is compiled.
        let inst = unsafe { &*self.site.inst };
        let one_dst = matches!(
            inst.info.operand(isa_amdgpu::Field::Vdst).map(|o| o.kind),
            Some(isa_amdgpu::table::OperandKind::Reg { count: 1, .. })
        );
        let sdwa = inst.form == isa_amdgpu::Form::Sdwa;
        // the instruction's only write (one destination register, no SDWA wrapper going on after it): nothing
        // reads the destination afterwards but the value being stored
        let only = self.stores == 0 && one_dst && !sdwa;
        self.stores += 1;
        let nan_rule =
            matches!(v.lazy.map(|k| &self.lazies[k as usize]), Some(Lazy::Expr { nan, .. }) if !nan.is_empty());
        // a lazy value whose operands are registers, keep slots, uniform values or up to TMP other vectors is
        // written in a loop over the chunks: a few dozen bytes of code instead of sixteen copies. Written in
        // place — chunk i reads only chunk i of its registers — so the destination needs no copy when this is
        // the instruction's only write; an f32 result is stored as the host computes it and each chunk checked,
        // and a NaN chunk continues in a second loop that applies the rule from that chunk on (the chunks still
        // to come are untouched).
        let spill = if v.lazy.is_some() { self.loop_operands(&v) } else { None };
        if let Some(spill) = spill {
            let except = if only { self.tree(&v) } else { Vec::new() };
            self.settle_except(base_field, reg, &except);
            let base = self.reg_base(base_field, reg);
            if let Some(Lazy::Read(r)) = v.lazy.map(|k| &self.lazies[k as usize]) {
                let r = *r;
                self.store_read(base, &r, m, &spill);
                return;
            }
            let (full, masked, done) = {
                let b = &mut *self.b;
                let all = b.ins().icmp_imm(IntCC::Equal, m, -1);
                let (full, masked, done) = (b.create_block(), b.create_block(), b.create_block());
                b.ins().brif(all, full, &[], masked, &[]);
                (full, masked, done)
            };
            for mask in [None, Some(m)] {
                let start = if mask.is_none() { full } else { masked };
                let slow = if nan_rule { Some(self.b.create_block()) } else { None };
                if let Some(slow) = slow {
                    self.b.append_block_param(slow, types::I64);
                }
                self.store_loop(start, done, slow, base, &v, &spill, nan_rule, mask);
                if let Some(slow) = slow {
                    self.store_loop(slow, done, None, base, &v, &spill, false, mask);
                }
            }
            let b = &mut *self.b;
            b.switch_to_block(done);
            b.seal_block(done);
            return;
        }
        // otherwise sixteen copies: reads of this register handed out earlier keep the value they read (a copy in
        // a keep slot); an f32 result under the NaN rule is stored as the host computes it, each chunk checked: a
        // NaN anywhere puts the register back as it was and runs the whole instruction on the interpreter, which
        // applies the rule (exact for the instruction's only write); otherwise the rule is applied inline.
        self.settle(base_field, reg);
        let base = self.reg_base(base_field, reg);
        let in_ssa = self.lazies.iter().any(
            |l| matches!(l, Lazy::Reg { field, reg: r, loaded: Some(_), .. } if *field == base_field && *r == reg),
        );
        let checked = nan_rule && only && !in_ssa;
        let kept: Vec<usize> = self
            .lazies
            .iter()
            .filter_map(|l| match l {
                Lazy::Reg {
                    field,
                    reg: r,
                    kept: Some(slot),
                    ..
                } if *field == base_field && *r == reg => Some(*slot),
                _ => None,
            })
            .collect();
        let (full, masked, done, redo) = {
            let b = &mut *self.b;
            let all = b.ins().icmp_imm(IntCC::Equal, m, -1);
            let (full, masked, done) = (b.create_block(), b.create_block(), b.create_block());
            let redo = if checked { Some(b.create_block()) } else { None };
            b.ins().brif(all, full, &[], masked, &[]);
            (full, masked, done, redo)
        };
        for exec_all in [true, false] {
            {
                let b = &mut *self.b;
                let start = if exec_all { full } else { masked };
                b.switch_to_block(start);
                b.seal_block(start);
            }
            let masks = if exec_all { None } else { Some(self.expand(m)) };
            for i in 0..CHUNKS {
                let x = if checked { self.ch_raw(&v, i) } else { self.ch(&v, i) };
                let b = &mut *self.b;
                let x = match &masks {
                    None => x,
                    Some(ms) => {
                        let old = b.ins().load(I32X4, vflags(), base, 16 * i as i32);
                        b.ins().bitselect(ms[i], x, old)
                    }
                };
                b.ins().store(vflags(), x, base, 16 * i as i32);
                if let Some(redo) = redo {
                    // the chunk is checked where it is stored, so it does not stay live
                    let f = Self::to_f(b, x);
                    let nan = b.ins().fcmp(FloatCC::Unordered, f, f);
                    let any = b.ins().vany_true(nan);
                    let next = b.create_block();
                    b.ins().brif(any, redo, &[], next, &[]);
                    b.switch_to_block(next);
                    b.seal_block(next);
                }
            }
            let b = &mut *self.b;
            b.ins().jump(done, &[]);
        }
        if let Some(redo) = redo {
            let ctx = self.ctx;
            {
                let b = &mut *self.b;
                b.switch_to_block(redo);
                b.seal_block(redo);
                for slot in kept.iter().take(1) {
                    for i in 0..CHUNKS {
                        let x = b
                            .ins()
                            .load(I32X4, vflags(), ctx, Ctx::KEEP + (256 * slot + 16 * i) as i32);
                        b.ins().store(vflags(), x, base, 16 * i as i32);
                    }
                }
            }
            self.call(Op::Instruction {}, &[], &[], &[], 0, 0, 0, true);
            let b = &mut *self.b;
            b.ins().jump(done, &[]);
        }
        let b = &mut *self.b;
        b.switch_to_block(done);
        b.seal_block(done);
    }
}
