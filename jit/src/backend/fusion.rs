//! Deferred register writes: instructions that only compute on registers leave their writes pending as lazy
//! expressions, and the block writes them all in one loop over the chunks (fused), parking values that would
//! otherwise be computed again.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};

use emu_core::rules;

use crate::backend::ir::{dummy, mask_chunk_at, vflags, Chunks};
use crate::backend::types::{JitBackend, Lazy, Vv, CHUNKS, I32X4};
use crate::ctx::{Ctx, PARKED};

/// Where a loop over the chunks writes a value: a register of the file at a field of the context, or a parked
/// slot at a byte offset of it.
#[derive(Clone, Copy)]
enum Dest {
    Reg(i32, u32),
    Parked(i32),
}

/// How a flush loop computes a chunk of the pending writes ([`JitBackend::fuse_at`]): each lazy vector once
/// (`memo`, by index), blends as their new value alone when every lane is on (`full`), and without the NaN rule
/// (`raw`: each such result's NaN lanes gathered in `nan`) or with it.
struct Fuse {
    memo: std::collections::HashMap<u32, Value>,
    full: bool,
    raw: bool,
    nan: Option<Value>,
}

/// Most lazy vectors a pending write's expression may have: beyond it the value is parked, so that code
/// computing it outside the block's flush loop (a compare, an operand handed to the interpreter) stays short.
const PENDING_TREE: usize = 128;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// Leaves the write of `v` (the lanes of `m`) to register `reg` of the file at `field` pending (see
    /// [`RegCache`](super::RegCache)): the register's pending value becomes a blend of `v` over its value so far. `v` stays a
    /// lazy expression when it is one of registers (and of values that stay valid: uniform ones, lane masks,
    /// parked values) no larger than [`PENDING_TREE`]; any other value is computed now into a parked slot.
    pub(super) fn defer_write(&mut self, field: i32, reg: u32, v: Vv, m: Value) {
        let mut seen = std::collections::HashSet::new();
        let v = if self.stays_lazy(&v, &mut seen) {
            v
        } else {
            self.park(v)
        };
        // a write over a pending one of the same lanes replaces it: the lanes outside keep what was there before
        let old = match self.pending_under(field, reg, m) {
            Some((_, old)) => old,
            None => self.load_reg(field, reg),
        };
        self.lazies.push(Lazy::Blend { m, new: v, old });
        let w = Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        };
        let c = &mut *self.cache;
        match c.pending.iter_mut().find(|(k, _)| *k == (field, reg)) {
            Some(p) => p.1 = w,
            None => c.pending.push(((field, reg), w)),
        }
        c.written(field, reg);
    }

    /// Whether `v` may stay a lazy expression in a pending write (`seen`: the lazy vectors counted so far, at
    /// most [`PENDING_TREE`]).
    fn stays_lazy(&self, v: &Vv, seen: &mut std::collections::HashSet<u32>) -> bool {
        let Some(k) = v.lazy else {
            return v.uniform.is_some() || v.c.iter().all(|c| *c == v.c[0]);
        };
        if !seen.insert(k) {
            return true;
        }
        if seen.len() > PENDING_TREE {
            return false;
        }
        match &self.lazies[k as usize] {
            Lazy::Reg {
                kept: None,
                loaded: None,
                ..
            }
            | Lazy::Mask { .. }
            | Lazy::Parked { .. } => true,
            Lazy::Expr { args, nan, .. } => args.iter().chain(nan.iter()).all(|a| self.stays_lazy(a, seen)),
            Lazy::Blend { new, old, .. } => self.stays_lazy(new, seen) && self.stays_lazy(old, seen),
            Lazy::Reg { .. } | Lazy::Slot { .. } | Lazy::Spent | Lazy::Read(_) => false,
        }
    }

    /// `v` computed now into the next parked slot of the context, as a lazy vector: a lazy expression in a loop
    /// over the chunks (as the block's pending writes are: [`Self::emit_writes`]), anything else chunk by chunk.
    fn park(&mut self, v: Vv) -> Vv {
        let c = &mut *self.cache;
        assert!(
            c.parked < PARKED,
            "an instruction that defers its writes starts with parked slots free"
        );
        let at = Ctx::PARKED + 256 * c.parked as i32;
        c.parked += 1;
        let ctx = self.ctx;
        let mut seen = std::collections::HashSet::new();
        if v.lazy.is_some() && self.loops_over(&v, &mut seen) {
            self.emit_writes(&[(Dest::Parked(at), v)]);
        } else {
            for i in 0..CHUNKS {
                let x = self.ch(&v, i);
                let b = &mut *self.b;
                b.ins().store(vflags(), x, ctx, at + 16 * i as i32);
            }
        }
        self.lazies.push(Lazy::Parked { at });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// Before code that computes every chunk of `v` where it stands (a carry or compare mask, an interpreter
    /// call's operand, a whole-vector operation): a lazy operation of four or more lazy vectors is computed once
    /// into a parked slot, and the lazy vector becomes that slot, so the pending writes and later reads that
    /// share it load it instead of computing the whole chain of operations again (a chain of adds with carries
    /// and lane moves, as a wave reduction is, would otherwise cost the square of its length). Only in an
    /// instruction that defers its writes, on its main path (called only from operations the semantics call,
    /// never from code on a side path), with more parked slots free than its writes need.
    pub(super) fn park_in_place(&mut self, v: &Vv) {
        let Some(k) = v.lazy else { return };
        if !matches!(self.lazies[k as usize], Lazy::Expr { .. } | Lazy::Blend { .. }) || self.guard_end.is_some() {
            return;
        }
        if !(self.cache.defer && PARKED - self.cache.parked > 4) || self.tree(v).len() < 4 {
            return;
        }
        let p = self.park(*v);
        let at = match p.lazy.map(|q| &self.lazies[q as usize]) {
            Some(Lazy::Parked { at }) => *at,
            _ => unreachable!("park leaves a parked vector"),
        };
        self.lazies[k as usize] = Lazy::Parked { at };
    }

    /// Whether a loop over the chunks can compute `v` ([`Self::fuse_at`]): as [`Self::stays_lazy`], whatever
    /// its size.
    fn loops_over(&self, v: &Vv, seen: &mut std::collections::HashSet<u32>) -> bool {
        let Some(k) = v.lazy else {
            return v.uniform.is_some() || v.c.iter().all(|c| *c == v.c[0]);
        };
        if !seen.insert(k) {
            return true;
        }
        match &self.lazies[k as usize] {
            Lazy::Reg {
                kept: None,
                loaded: None,
                ..
            }
            | Lazy::Mask { .. }
            | Lazy::Parked { .. } => true,
            Lazy::Expr { args, nan, .. } => args.iter().chain(nan.iter()).all(|a| self.loops_over(a, seen)),
            Lazy::Blend { new, old, .. } => self.loops_over(new, seen) && self.loops_over(old, seen),
            Lazy::Reg { .. } | Lazy::Slot { .. } | Lazy::Spent | Lazy::Read(_) => false,
        }
    }

    /// Writes the pending registers (see [`RegCache`](super::RegCache)) and forgets them.
    pub fn flush(&mut self) {
        self.emit_flush();
        let c = &mut *self.cache;
        c.pending.clear();
        c.parked = 0;
    }

    /// The code writing the pending registers, which stay pending at compile time (a side exit writes them too):
    /// one loop over the chunks when every pending write's lanes are all on, another that blends them in when
    /// some are off.
    pub(super) fn emit_flush(&mut self) {
        if self.cache.pending.is_empty() {
            return;
        }
        let pending: Vec<(Dest, Vv)> = self
            .cache
            .pending
            .iter()
            .map(|&((field, reg), v)| (Dest::Reg(field, reg), v))
            .collect();
        self.emit_writes(&pending);
    }

    /// The code writing `writes` (values of lazy vectors that [`Self::loops_over`] accepts): a loop over the
    /// chunks when every blend's lanes are all on, another that blends them in when some are off.
    fn emit_writes(&mut self, pending: &[(Dest, Vv)]) {
        // the masks of the blends
        let mut masks: Vec<Value> = Vec::new();
        let mut todo: Vec<Vv> = pending.iter().map(|(_, v)| *v).collect();
        let mut seen = std::collections::HashSet::new();
        while let Some(v) = todo.pop() {
            let Some(k) = v.lazy else { continue };
            if !seen.insert(k) {
                continue;
            }
            match &self.lazies[k as usize] {
                Lazy::Blend { m, new, old } => {
                    if !masks.contains(m) {
                        masks.push(*m);
                    }
                    todo.extend([*new, *old]);
                }
                Lazy::Expr { args, nan, .. } => todo.extend(args.iter().chain(nan.iter()).copied()),
                _ => {}
            }
        }
        let (full, masked, done) = {
            let b = &mut *self.b;
            let mut all = None;
            for m in &masks {
                let on = b.ins().icmp_imm(IntCC::Equal, *m, -1);
                all = Some(match all {
                    None => on,
                    Some(a) => b.ins().band(a, on),
                });
            }
            let (full, masked, done) = (b.create_block(), b.create_block(), b.create_block());
            match all {
                Some(all) => b.ins().brif(all, full, &[], masked, &[]),
                None => b.ins().jump(full, &[]),
            };
            (full, masked, done)
        };
        self.fused_loop(full, done, pending, true);
        self.fused_loop(masked, done, pending, false);
        let b = &mut *self.b;
        b.switch_to_block(done);
        b.seal_block(done);
    }

    /// The loop over the chunks writing `pending`, from block `start` to `done` (`full`: every blend's lanes
    /// all on). Each chunk's values are computed without their NaN rules and checked: a NaN among them computes
    /// the chunk again with the rules (exact), before any of it is stored.
    fn fused_loop(
        &mut self,
        start: cranelift_codegen::ir::Block,
        done: cranelift_codegen::ir::Block,
        pending: &[(Dest, Vv)],
        full: bool,
    ) {
        let (head, off) = {
            let b = &mut *self.b;
            b.switch_to_block(start);
            b.seal_block(start);
            let head = b.create_block();
            let off = b.append_block_param(head, types::I64);
            let zero = b.ins().iconst(types::I64, 0);
            b.ins().jump(head, &[zero.into()]);
            b.switch_to_block(head);
            (head, off)
        };
        let mut redo = None;
        for raw in [true, false] {
            if !raw {
                let Some(r) = redo else { break };
                let b = &mut *self.b;
                b.switch_to_block(r);
                b.seal_block(r);
            }
            let mut f = Fuse {
                memo: std::collections::HashMap::new(),
                full,
                raw,
                nan: None,
            };
            let vals: Vec<Value> = pending.iter().map(|(_, v)| self.fuse_at(v, off, &mut f)).collect();
            if let Some(nan) = f.nan {
                let b = &mut *self.b;
                let any = b.ins().vany_true(nan);
                let (again, store) = (b.create_block(), b.create_block());
                b.ins().brif(any, again, &[], store, &[]);
                b.switch_to_block(store);
                b.seal_block(store);
                redo = Some(again);
            }
            let ctx = self.ctx;
            for (&(dest, _), x) in pending.iter().zip(vals) {
                let (base, at) = match dest {
                    Dest::Reg(field, reg) => (self.reg_base(field, reg), 0),
                    Dest::Parked(at) => (ctx, at),
                };
                let b = &mut *self.b;
                let p = b.ins().iadd(base, off);
                b.ins().store(vflags(), x, p, at);
            }
            let b = &mut *self.b;
            let next = b.ins().iadd_imm(off, 16);
            let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
            b.ins().brif(more, head, &[next.into()], done, &[]);
        }
        self.b.seal_block(head);
    }

    /// Whether `v` is computed without operands of its own (a register, a parked value, a mask, a uniform value).
    fn is_leaf(&self, v: &Vv) -> bool {
        !matches!(
            v.lazy.map(|k| &self.lazies[k as usize]),
            Some(Lazy::Expr { .. } | Lazy::Blend { .. })
        )
    }

    /// Chunk `off / 16` of a pending write's value `v` in the flush loop (see [`Fuse`]).
    fn fuse_at(&mut self, v: &Vv, off: Value, f: &mut Fuse) -> Value {
        let Some(k) = v.lazy else {
            // a uniform value (the only concrete ones that stay lazy)
            return v.c[0];
        };
        if let Some(x) = f.memo.get(&k) {
            return *x;
        }
        let ctx = self.ctx;
        let x = match &self.lazies[k as usize] {
            Lazy::Reg { field, reg, .. } => {
                let base = self.reg_base(*field, *reg);
                let b = &mut *self.b;
                let p = b.ins().iadd(base, off);
                b.ins().load(I32X4, vflags(), p, 0)
            }
            Lazy::Parked { at } => {
                let at = *at;
                let b = &mut *self.b;
                let p = b.ins().iadd(ctx, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Mask { m } => {
                let m = *m;
                mask_chunk_at(&mut *self.b, m, off)
            }
            Lazy::Blend { m, new, old } => {
                let (m, new, old) = (*m, *new, *old);
                let x = self.fuse_at(&new, off, f);
                if f.full {
                    x
                } else {
                    let y = self.fuse_at(&old, off, f);
                    let b = &mut *self.b;
                    let lanes = mask_chunk_at(b, m, off);
                    b.ins().bitselect(lanes, x, y)
                }
            }
            Lazy::Expr { args, f: op, nan } => {
                let (args, op, nan) = (args.clone(), op.clone(), nan.clone());
                // operands that are expressions first, then loads: a chain's loads come just before the
                // operation that uses them instead of all at its start, where they would stay live
                let mut vals = vec![dummy(); args.len()];
                for leaves in [false, true] {
                    for (a, val) in args.iter().zip(vals.iter_mut()) {
                        if self.is_leaf(a) == leaves {
                            *val = self.fuse_at(a, off, f);
                        }
                    }
                }
                let r = op(&mut *self.b, &vals);
                // an operation over operations (a link of a chain) is stored to the context's sink (or the NaN
                // flags so far, which it goes into), so that Cranelift computes it here, after the loads of
                // its own operands, instead of after the loads of the whole chain, which would all be live at
                // once (and spilled)
                let anchor = !args.iter().all(|a| self.is_leaf(a));
                let ctx = self.ctx;
                if nan.is_empty() {
                    if anchor {
                        self.b.ins().store(vflags(), r, ctx, Ctx::SINK);
                    }
                    r
                } else if f.raw {
                    let b = &mut *self.b;
                    let x = Self::to_f(b, r);
                    let is = b.ins().fcmp(FloatCC::Unordered, x, x);
                    let flags = match f.nan {
                        None => is,
                        Some(a) => b.ins().bor(a, is),
                    };
                    if anchor {
                        b.ins().store(vflags(), flags, ctx, Ctx::SINK);
                    }
                    f.nan = Some(flags);
                    r
                } else {
                    let srcs: Vec<Value> = nan.iter().map(|a| self.fuse_at(a, off, f)).collect();
                    rules::propagate_nan32(&mut Chunks(&mut *self.b), &srcs, r)
                }
            }
            Lazy::Slot { .. } | Lazy::Spent | Lazy::Read(_) => unreachable!("pending writes hold none"),
        };
        f.memo.insert(k, x);
        x
    }
}
