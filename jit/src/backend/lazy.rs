//! Lazy vectors: chunks computed where they are used ([`JitBackend::ch`]), in straight-line code or in a loop
//! over the chunks ([`JitBackend::ch_at`]), lazy chunk-wise operations, and the lanes known while translating.

use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::rules;
use emu_core::sem::Backend;

use crate::backend::ir::{dummy, mask_chunk, mask_chunk_at, scalar_const, vflags, Chunks};
use crate::backend::memory::gather_chunk;
use crate::backend::types::{ChunkFn, JitBackend, Lazy, ReadAt, Vv, CHUNKS, I32X4};
use crate::ctx::{Ctx, TMP};

/// Whether every one of `vs` is one scalar in all lanes, computed (not lazy).
pub(super) fn all_uniform<'v>(mut vs: impl Iterator<Item = &'v Vv>) -> bool {
    vs.all(|v| v.lazy.is_none() && v.uniform.is_some())
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// A vector read lazily, chunk by chunk where it is used, from the context's 256 bytes at `at`.
    pub(super) fn slot_vv(&mut self, at: i32) -> Vv {
        self.lazies.push(Lazy::Slot { at });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// Chunk `i` of `v`, emitted here when `v` is lazy (a register chunk loaded, an operation's chunk computed,
    /// with the NaN rule where it applies).
    pub(super) fn ch(&mut self, v: &Vv, i: usize) -> Value {
        self.chunk(v, i, true)
    }

    /// Chunk `i` of `v` without the NaN rule of its outermost operation (for a write that checks for NaN
    /// itself).
    pub(super) fn ch_raw(&mut self, v: &Vv, i: usize) -> Value {
        self.chunk(v, i, false)
    }

    pub(super) fn chunk(&mut self, v: &Vv, i: usize, nan_rule: bool) -> Value {
        let Some(k) = v.lazy else { return v.c[i] };
        // one memo per top-level chunk computation: its code is straight-line, so what it computed first
        // dominates every later use within it
        let top = self.chunk_memo.is_none();
        if top {
            self.chunk_memo = Some(std::collections::HashMap::new());
        } else if let Some(x) = self.chunk_memo.as_ref().and_then(|m| m.get(&(k, nan_rule))) {
            return *x;
        }
        let x = self.chunk_lazy(k, i, nan_rule);
        if top {
            self.chunk_memo = None;
        } else if let Some(m) = self.chunk_memo.as_mut() {
            m.insert((k, nan_rule), x);
        }
        x
    }

    /// [`Self::chunk`] of lazy vector `k`.
    fn chunk_lazy(&mut self, k: u32, i: usize, nan_rule: bool) -> Value {
        match &self.lazies[k as usize] {
            Lazy::Slot { at } => {
                let (ctx, at) = (self.ctx, *at);
                let b = &mut *self.b;
                b.ins().load(I32X4, vflags(), ctx, at + 16 * i as i32)
            }
            Lazy::Spent => unreachable!("a register read a call consumed is not read again"),
            Lazy::Reg {
                field,
                reg,
                kept,
                loaded,
            } => {
                let (field, reg, kept, loaded) = (*field, *reg, *kept, *loaded);
                if let Some(vals) = loaded {
                    return vals[i];
                }
                let (base, off) = match kept {
                    Some(slot) => (self.ctx, Ctx::KEEP + (256 * slot + 16 * i) as i32),
                    None => (self.reg_base(field, reg), 16 * i as i32),
                };
                let b = &mut *self.b;
                b.ins().load(I32X4, vflags(), base, off)
            }
            Lazy::Expr { args, f, nan } => {
                let (args, f, nan) = (args.clone(), f.clone(), if nan_rule { nan.clone() } else { Vec::new() });
                let vals: Vec<Value> = args.iter().map(|a| self.ch(a, i)).collect();
                let r = f(&mut *self.b, &vals);
                if nan.is_empty() {
                    return r;
                }
                let srcs: Vec<Value> = nan.iter().map(|a| self.ch(a, i)).collect();
                rules::propagate_nan32(&mut Chunks(&mut *self.b), &srcs, r)
            }
            Lazy::Read(r) => {
                let r = *r;
                let a = self.ch(&r.addr, i);
                let ctx = self.ctx;
                let b = &mut *self.b;
                let off = b.ins().iconst(types::I64, 16 * i as i64);
                Self::read_chunk(b, ctx, a, off, &r)
            }
            Lazy::Mask { m } => {
                let m = *m;
                let b = &mut *self.b;
                let bits = if i == 0 { m } else { b.ins().ushr_imm(m, 4 * i as i64) };
                mask_chunk(b, bits)
            }
            Lazy::Blend { m, new, old } => {
                let (m, new, old) = (*m, *new, *old);
                let (x, y) = (self.chunk(&new, i, nan_rule), self.chunk(&old, i, nan_rule));
                let b = &mut *self.b;
                let bits = if i == 0 { m } else { b.ins().ushr_imm(m, 4 * i as i64) };
                let lanes = mask_chunk(b, bits);
                b.ins().bitselect(lanes, x, y)
            }
            Lazy::Parked { at } => {
                let (ctx, at) = (self.ctx, *at);
                let b = &mut *self.b;
                b.ins().load(I32X4, vflags(), ctx, at + 16 * i as i32)
            }
        }
    }

    /// Chunk (at byte offset `off` of a vector) of a read ([`ReadAt`]) whose address chunk is `a`: on the quick
    /// path four consecutive dwords or one dword splat at the first lane's address (LDS reads), or lane by lane
    /// (global reads); otherwise the interpreter's result from the tmp slot (the loads then go to the context's
    /// sink, harmlessly).
    fn read_chunk(b: &mut FunctionBuilder<'f>, ctx: Value, a: Value, off: Value, r: &ReadAt) -> Value {
        let sink = b.ins().iadd_imm(ctx, Ctx::SINK as i64);
        let base = b.ins().select(r.quick, r.base, sink);
        let zero = b.ins().iconst(types::I64, 0);
        let q = if r.gather {
            gather_chunk(b, a, base, r.offset, r.bytes, r.signed, Some(r.quick))
        } else {
            let first = b.ins().extractlane(a, 0);
            let first = b.ins().uextend(types::I64, first);
            let at = b.ins().iadd_imm(first, r.offset);
            // a four-dword load for a chunk that is one dword must stay inside the LDS: from at most len - 16 (the
            // quick path needs an LDS of 16 bytes or more; the load is not used then)
            let vat = b.ins().umin(at, r.lim);
            let (vat, at) = (b.ins().select(r.quick, vat, zero), b.ins().select(r.quick, at, zero));
            let (vp, sp) = (b.ins().iadd(base, vat), b.ins().iadd(base, at));
            let v = b.ins().load(I32X4, MemFlags::new(), vp, 0);
            let x = b.ins().load(types::I32, MemFlags::new(), sp, 0);
            let x = b.ins().splat(I32X4, x);
            b.ins().select(r.seq, v, x)
        };
        let t = b.ins().iadd(ctx, off);
        let g = b.ins().load(I32X4, vflags(), t, Ctx::TMP + 256 * r.slot as i32);
        b.ins().select(r.quick, q, g)
    }

    /// A lazy operation over `args`; over wave-uniform operands alone, one chunk computed here and the result
    /// uniform (a chunk operation works lane by lane: equal lanes in, equal lanes out).
    pub(super) fn lazy_op(&mut self, args: Vec<Vv>, f: ChunkFn<'f>, nan: Vec<Vv>) -> Vv {
        if all_uniform(args.iter().chain(nan.iter())) {
            let vals: Vec<Value> = args.iter().map(|a| a.c[0]).collect();
            let b = &mut *self.b;
            let r = f(b, &vals);
            return self.uniform_result(r, &nan);
        }
        self.lazies.push(Lazy::Expr { args, f, nan });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// The uniform vector of chunk `r` (every lane the same), with the NaN rule over the uniform `nan` sources.
    pub(super) fn uniform_result(&mut self, r: Value, nan: &[Vv]) -> Vv {
        let b = &mut *self.b;
        let r = if nan.is_empty() {
            r
        } else {
            let srcs: Vec<Value> = nan.iter().map(|a| a.c[0]).collect();
            rules::propagate_nan32(&mut Chunks(b), &srcs, r)
        };
        let s = b.ins().extractlane(r, 0);
        Vv {
            c: [r; CHUNKS],
            uniform: Some(s),
            lazy: None,
        }
    }

    /// `v` with all its chunks emitted here (for code that works on the whole vector at once).
    pub(super) fn mat(&mut self, v: Vv) -> Vv {
        if v.lazy.is_none() {
            return v;
        }
        let mut c = [dummy(); CHUNKS];
        for (i, x) in c.iter_mut().enumerate() {
            *x = self.ch(&v, i);
        }
        Vv {
            c,
            uniform: v.uniform,
            lazy: None,
        }
    }

    /// The lazy vectors `v` is computed from (itself included).
    pub(super) fn tree(&self, v: &Vv) -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo: Vec<Vv> = vec![*v];
        while let Some(x) = todo.pop() {
            if let Some(k) = x.lazy {
                if !out.contains(&(k as usize)) {
                    out.push(k as usize);
                    match &self.lazies[k as usize] {
                        Lazy::Expr { args, nan, .. } => todo.extend(args.iter().chain(nan.iter()).copied()),
                        Lazy::Read(r) => todo.push(r.addr),
                        Lazy::Blend { new, old, .. } => todo.extend([*new, *old]),
                        Lazy::Reg { .. }
                        | Lazy::Slot { .. }
                        | Lazy::Spent
                        | Lazy::Mask { .. }
                        | Lazy::Parked { .. } => {}
                    }
                }
            }
        }
        out
    }

    /// The 64 lanes of `v` where they are known while translating: a vector made by `v_const`, or a splat of a
    /// scalar constant.
    pub(super) fn known(&self, v: &Vv) -> Option<[u32; 64]> {
        if v.lazy.is_some() {
            return None;
        }
        if let Some(s) = v.uniform {
            return scalar_const(&*self.b, s).map(|x| [x; 64]);
        }
        self.consts.iter().find(|(c, _)| *c == v.c).map(|(_, lanes)| *lanes)
    }

    /// Lanes computed while translating, as a vector: a splat where they are all equal (it stays uniform).
    pub(super) fn folded(&mut self, lanes: &[u32; 64]) -> Vv {
        if lanes.iter().all(|&x| x == lanes[0]) {
            let b = &mut *self.b;
            let s = b.ins().iconst(types::I32, lanes[0] as i64);
            return self.v_splat(s);
        }
        self.v_const(lanes)
    }

    pub(super) fn map_chunks(&mut self, a: Vv, f: impl Fn(&mut FunctionBuilder<'f>, Value) -> Value + 'static) -> Vv {
        self.lazy_op(
            vec![a],
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| f(b, v[0])),
            Vec::new(),
        )
    }

    pub(super) fn zip_chunks(
        &mut self,
        a: Vv,
        x: Vv,
        f: impl Fn(&mut FunctionBuilder<'f>, Value, Value) -> Value + 'static,
    ) -> Vv {
        self.lazy_op(
            vec![a, x],
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| f(b, v[0], v[1])),
            Vec::new(),
        )
    }

    /// The sixteen `i32x4` lane masks (all ones where the mask bit is set) of a lane mask.
    pub(super) fn expand(&mut self, m: Value) -> [Value; CHUNKS] {
        let b = &mut *self.b;
        let mut out = [dummy(); CHUNKS];
        for (i, o) in out.iter_mut().enumerate() {
            let bits = if i == 0 { m } else { b.ins().ushr_imm(m, 4 * i as i64) };
            *o = mask_chunk(b, bits);
        }
        out
    }

    /// The lanes of lane mask `m` as a lazy vector ([`Lazy::Mask`]): each chunk made where it is used.
    fn mask_lanes(&mut self, m: Value) -> Vv {
        self.lazies.push(Lazy::Mask { m });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// The lanes of lane mask `m` as this instruction reads them: a uniform vector (all ones or zeros) where `m`
    /// is the same in every lane, or is such a mask ANDed with today's EXEC and the instruction reads only
    /// EXEC's lanes ([`RegCache::exec_lanes`](super::RegCache::exec_lanes)) — as a carry written by one add and read by the next is;
    /// otherwise made from the mask's bits where used.
    pub(super) fn lanes_of_mask(&mut self, m: Value) -> Vv {
        let c = &*self.cache;
        let uniform = if c.uniform_masks.contains(&m) {
            Some(m)
        } else {
            c.exec.filter(|_| c.exec_lanes).and_then(|e| {
                c.exec_masked
                    .iter()
                    .find(|&&(r, _, x)| r == m && x == e)
                    .map(|&(_, u, _)| u)
            })
        };
        match uniform {
            Some(u) => {
                let lane = self.b.ins().ireduce(types::I32, u);
                self.v_splat(lane)
            }
            None => self.mask_lanes(m),
        }
    }

    /// Whether `v` can be written in a loop over chunks: its concrete operands that are not uniform are put in
    /// the context's tmp slots here (their slot by first chunk value); `None` when there are too many, or an
    /// operand was loaded into SSA values.
    pub(super) fn loop_operands(&mut self, v: &Vv) -> Option<Vec<(Value, usize)>> {
        let mut spill: Vec<(Value, usize)> = Vec::new();
        let mut concrete: Vec<Vv> = Vec::new();
        let mut todo = vec![*v];
        while let Some(x) = todo.pop() {
            match x.lazy.map(|k| &self.lazies[k as usize]) {
                None => {
                    let uniform = x.uniform.is_some() || x.c.iter().all(|c| *c == x.c[0]);
                    if !uniform && !spill.iter().any(|(f, _)| *f == x.c[0]) {
                        if self.tmps + spill.len() == TMP {
                            return None;
                        }
                        spill.push((x.c[0], self.tmps + spill.len()));
                        concrete.push(x);
                    }
                }
                Some(Lazy::Reg { loaded: Some(_), .. }) => return None,
                Some(Lazy::Reg { .. } | Lazy::Slot { .. } | Lazy::Spent | Lazy::Mask { .. } | Lazy::Parked { .. }) => {}
                Some(Lazy::Blend { new, old, .. }) => todo.extend([*new, *old]),
                Some(Lazy::Expr { args, nan, .. }) => todo.extend(args.iter().chain(nan.iter()).copied()),
                Some(Lazy::Read(r)) => todo.push(r.addr),
            }
        }
        self.tmps += spill.len();
        let ctx = self.ctx;
        let b = &mut *self.b;
        for (x, (_, slot)) in concrete.iter().zip(&spill) {
            for i in 0..CHUNKS {
                b.ins()
                    .store(vflags(), x.c[i], ctx, Ctx::TMP + (256 * slot + 16 * i) as i32);
            }
        }
        Some(spill)
    }

    /// Chunk `off / 16` of `v` in a loop over chunks (`off` the chunk's byte offset, an i64).
    pub(super) fn ch_at(&mut self, v: &Vv, off: Value, spill: &[(Value, usize)], nan_rule: bool) -> Value {
        let ctx = self.ctx;
        let Some(k) = v.lazy else {
            let b = &mut *self.b;
            return match spill.iter().find(|(f, _)| *f == v.c[0]) {
                Some((_, slot)) => {
                    let p = b.ins().iadd(ctx, off);
                    b.ins().load(I32X4, vflags(), p, Ctx::TMP + 256 * *slot as i32)
                }
                None => v.c[0],
            };
        };
        match &self.lazies[k as usize] {
            Lazy::Slot { at } => {
                let at = *at;
                let b = &mut *self.b;
                let p = b.ins().iadd(ctx, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Spent => unreachable!("a register read a call consumed is not read again"),
            Lazy::Reg { field, reg, kept, .. } => {
                let (field, reg, kept) = (*field, *reg, *kept);
                let (base, at) = match kept {
                    Some(slot) => (ctx, Ctx::KEEP + 256 * slot as i32),
                    None => (self.reg_base(field, reg), 0),
                };
                let b = &mut *self.b;
                let p = b.ins().iadd(base, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Read(r) => {
                let r = *r;
                let a = self.ch_at(&r.addr, off, spill, true);
                let b = &mut *self.b;
                Self::read_chunk(b, ctx, a, off, &r)
            }
            Lazy::Mask { m } => {
                let m = *m;
                let b = &mut *self.b;
                mask_chunk_at(b, m, off)
            }
            Lazy::Blend { m, new, old } => {
                let (m, new, old) = (*m, *new, *old);
                let (x, y) = (
                    self.ch_at(&new, off, spill, nan_rule),
                    self.ch_at(&old, off, spill, nan_rule),
                );
                let b = &mut *self.b;
                let lanes = mask_chunk_at(b, m, off);
                b.ins().bitselect(lanes, x, y)
            }
            Lazy::Parked { at } => {
                let at = *at;
                let b = &mut *self.b;
                let p = b.ins().iadd(ctx, off);
                b.ins().load(I32X4, vflags(), p, at)
            }
            Lazy::Expr { args, f, nan } => {
                let (args, f, nan) = (args.clone(), f.clone(), if nan_rule { nan.clone() } else { Vec::new() });
                let vals: Vec<Value> = args.iter().map(|a| self.ch_at(a, off, spill, true)).collect();
                let r = f(&mut *self.b, &vals);
                if nan.is_empty() {
                    return r;
                }
                let srcs: Vec<Value> = nan.iter().map(|a| self.ch_at(a, off, spill, true)).collect();
                rules::propagate_nan32(&mut Chunks(&mut *self.b), &srcs, r)
            }
        }
    }
}
