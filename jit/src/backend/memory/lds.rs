//! LDS accesses inline: whole chunks where a wave's addresses are regular, lane by lane otherwise, the
//! interpreter's checked access where a lane is out of range; read2/write2 pairs as one access where they are
//! adjacent; atomics through the interpreter.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, MemFlags, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::sem::{AtomicOp, Backend, ExecError};

use crate::backend::f64::{f64x2_joins, f64x2_splits};
use crate::backend::ir::{dummy, join_vectors, jump_with, little, trusted, vflags};
use crate::backend::memory::{lane_accesses, transpose4, transposes};
use crate::backend::regcache::PatternKey;
use crate::backend::types::{JitBackend, Lazy, ReadAt, Vv, CHUNKS, I32X4};
use crate::call::Op;
use crate::ctx::{AccessRecord, Ctx, REC_LDS, TMP};

/// How the lanes of an LDS address vector lie, worked out once per vector: whether every chunk of four lanes
/// addresses four consecutive dwords (`seq`; for 8-byte accesses, four consecutive 8-byte slots) or one dword
/// (`same`), each chunk's first address, and the
/// highest address of any lane. With EXEC all ones, an access through it then needs one range check and one
/// load or store per chunk.
#[derive(Clone, Copy)]
pub(in crate::backend) struct LdsPattern {
    pub(in crate::backend) seq: Value,
    pub(in crate::backend) same: Value,
    pub(in crate::backend) firsts: [Value; CHUNKS],
    pub(in crate::backend) max: Value,
    pub(in crate::backend) min: Value,
}

/// Whether an LDS access of `bytes` a lane at `offset` through `pattern` may take a whole-chunk path: EXEC
/// (`m`) all ones and the highest lane's bytes inside the LDS of `len` bytes.
fn lds_chunks_fit(
    b: &mut FunctionBuilder<'_>,
    len: Value,
    pattern: &LdsPattern,
    offset: u32,
    bytes: u32,
    m: Value,
) -> Value {
    let max = b.ins().uextend(types::I64, pattern.max);
    let end = b.ins().iadd_imm(max, offset as i64 + bytes as i64);
    let inside = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len);
    let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
    b.ins().band(inside, full)
}

/// The room an LDS of `len` bytes leaves a lane's access of `need` bytes (its offset included): lane address
/// a fits when a + need <= len, i.e. a <= len - need, which is `room` splat over a chunk; `negative` when no
/// address fits.
fn lds_room(b: &mut FunctionBuilder<'_>, len: Value, need: i64) -> (Value, Value) {
    let room = b.ins().iadd_imm(len, -need);
    let negative = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
    let room32 = b.ins().ireduce(types::I32, room);
    (negative, b.ins().splat(I32X4, room32))
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// The interpreter's checked LDS access through a call: `dwords` per lane read (`data` None, the loaded
    /// vectors returned) or `data` written.
    fn lds_call(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        match data {
            None => {
                self.call_mem(Op::LdsRead { offset, dwords }, &[addr], &[], &[m], dwords as usize, 0)
                    .0
            }
            Some(d) => {
                let ins: Vec<Vv> = std::iter::once(addr).chain(d.iter().copied()).collect();
                self.call_mem(
                    Op::LdsWrite {
                        offset,
                        n: d.len() as u32,
                    },
                    &ins,
                    &[],
                    &[m],
                    0,
                    0,
                );
                Vec::new()
            }
        }
    }

    /// LDS reads (`data` None) and writes of 1-4 dwords per lane, inline: when every active lane's access lies
    /// inside the LDS, each lane is loaded or stored directly (inactive lanes read 0 and store to a sink);
    /// otherwise the interpreter's checked access runs and reports the fault. Returns the loaded vectors.
    pub(in crate::backend) fn lds_inline(
        &mut self,
        addr: Vv,
        offset: u32,
        dwords: u32,
        m: Value,
        data: Option<&[Vv]>,
    ) -> Vec<Vv> {
        if !self.may_record() {
            return self.lds_call(addr, offset, dwords, m, data);
        }
        if dwords == 2 {
            return self.lds_pairs(addr, offset, m, data);
        }
        if dwords != 1 {
            return self.lds_lanes(addr, offset, dwords, m, data);
        }
        if data.is_none() && self.tmps < TMP && !self.observed {
            return vec![self.lds_read_lazy(addr, offset, m)];
        }
        // an observed access records its lanes' addresses on the quick path: they are worked out first
        let addr = if self.observed { self.mat(addr) } else { addr };
        // dword accesses through a regular address vector with EXEC all ones: whole chunks at once
        let pattern = self.lds_pattern(addr);
        let ctx = self.ctx;
        let outs = if data.is_some() { 0 } else { 1 };
        let (quick, general, join) = {
            let b = &mut *self.b;
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let fits = lds_chunks_fit(b, len, &pattern, offset, 4, m);
            let regular = b.ins().bor(pattern.seq, pattern.same);
            let ok = b.ins().band(fits, regular);
            let (quick, general, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(ok, quick, &[], general, &[]);
            (quick, general, join)
        };
        // anything else (lanes off, irregular addresses, out of range): the interpreter, out of line
        let general_out = {
            let b = &mut *self.b;
            b.switch_to_block(general);
            b.seal_block(general);
            self.lds_call(addr, offset, dwords, m, data)
        };
        let b = &mut *self.b;
        jump_with(b, join, &general_out);
        b.switch_to_block(quick);
        b.seal_block(quick);
        // the data to store, loaded here (inside the quick path) if it is a register read
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        self.record(
            AccessRecord::desc(REC_LDS, data.is_some(), 4),
            &addr.c,
            None,
            offset as i64,
            m,
        );
        let b = &mut *self.b;
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let ptrs: Vec<Value> = pattern
            .firsts
            .iter()
            .map(|f| {
                let f = b.ins().uextend(types::I64, *f);
                b.ins().iadd(lds, f)
            })
            .collect();
        let (seq_blk, same_blk) = (b.create_block(), b.create_block());
        b.ins().brif(pattern.seq, seq_blk, &[], same_blk, &[]);
        for seq in [true, false] {
            let blk = if seq { seq_blk } else { same_blk };
            b.switch_to_block(blk);
            b.seal_block(blk);
            let mut out = [dummy(); CHUNKS];
            for i in 0..CHUNKS {
                match (data, seq) {
                    (None, true) => out[i] = b.ins().load(I32X4, MemFlags::new(), ptrs[i], offset as i32),
                    (None, false) => {
                        let x = b.ins().load(types::I32, MemFlags::new(), ptrs[i], offset as i32);
                        out[i] = b.ins().splat(I32X4, x);
                    }
                    (Some(d), true) => {
                        b.ins().store(MemFlags::new(), d[0].c[i], ptrs[i], offset as i32);
                    }
                    // four lanes writing one dword: the last lane's value stays, as lanes write in order
                    (Some(d), false) => {
                        let x = b.ins().extractlane(d[0].c[i], 3);
                        b.ins().store(MemFlags::new(), x, ptrs[i], offset as i32);
                    }
                }
            }
            let vals: Vec<Vv> = if data.is_some() {
                Vec::new()
            } else {
                vec![Vv {
                    c: out,
                    uniform: None,
                    lazy: None,
                }]
            };
            jump_with(b, join, &vals);
        }
        join_vectors(b, join)
    }

    /// LDS accesses of two dwords a lane (ds_read_b64 and ds_write_b64, and each half of their read2/write2
    /// forms): with EXEC all ones and every chunk's four lanes at consecutive 8-byte addresses inside the LDS —
    /// a wave's run of 64-bit items, as rocPRIM's block loads and stores pass through the LDS — a chunk is two
    /// 16-byte accesses of the lanes' low and high dwords interleaved; otherwise lane by lane
    /// ([`Self::lds_lanes`]). The LDS is the workgroup's alone, so no other thread sees a lane's 8 bytes split.
    fn lds_pairs(&mut self, addr: Vv, offset: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        let addr = self.mat(addr);
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        let ctx = self.ctx;
        let outs = if data.is_some() { 0 } else { 2 * CHUNKS };
        let pattern = self.lds_pattern_of(addr, None, 8);
        let (quick, join) = {
            let b = &mut *self.b;
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let fits = lds_chunks_fit(b, len, &pattern, offset, 8, m);
            let ok = b.ins().band(fits, pattern.seq);
            let (quick, general, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(ok, quick, &[], general, &[]);
            // anything else: lane by lane, or the interpreter (out of line)
            b.switch_to_block(general);
            b.seal_block(general);
            (quick, join)
        };
        let general_out = self.lds_lanes(addr, offset, 2, m, data);
        let b = &mut *self.b;
        jump_with(b, join, &general_out);
        b.switch_to_block(quick);
        b.seal_block(quick);
        self.record(
            AccessRecord::desc(REC_LDS, data.is_some(), 8),
            &addr.c,
            None,
            offset as i64,
            m,
        );
        let b = &mut *self.b;
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let (joins, splits) = (f64x2_joins(b), f64x2_splits(b));
        let (mut lo, mut hi) = ([dummy(); CHUNKS], [dummy(); CHUNKS]);
        let at = offset as i32;
        for i in 0..CHUNKS {
            let first = b.ins().uextend(types::I64, pattern.firsts[i]);
            let p = b.ins().iadd(lds, first);
            match data {
                Some([l, h]) => {
                    let (l8, h8) = (
                        b.ins().bitcast(types::I8X16, little(), l.c[i]),
                        b.ins().bitcast(types::I8X16, little(), h.c[i]),
                    );
                    for (k, join) in joins.into_iter().enumerate() {
                        let pair = b.ins().shuffle(l8, h8, join);
                        b.ins().store(MemFlags::new(), pair, p, at + 16 * k as i32);
                    }
                }
                Some(_) => unreachable!("two dwords a lane"),
                None => {
                    let (x, y) = (
                        b.ins().load(types::I8X16, MemFlags::new(), p, at),
                        b.ins().load(types::I8X16, MemFlags::new(), p, at + 16),
                    );
                    let [l, h] = splits.map(|split| {
                        let v = b.ins().shuffle(x, y, split);
                        b.ins().bitcast(I32X4, little(), v)
                    });
                    (lo[i], hi[i]) = (l, h);
                }
            }
        }
        let vals = if data.is_some() {
            Vec::new()
        } else {
            vec![
                Vv {
                    c: lo,
                    uniform: None,
                    lazy: None,
                },
                Vv {
                    c: hi,
                    uniform: None,
                    lazy: None,
                },
            ]
        };
        jump_with(b, join, &vals);
        join_vectors(b, join)
    }

    /// Whether a read2 or write2 of `dwords` a lane at `offsets` is of two dwords at adjacent offsets, compiled
    /// (not observed: an observer counts the two accesses), so that each lane's two pairs are 16 bytes in a row.
    fn adjacent_pairs(&mut self, offsets: [u32; 2], dwords: u32) -> bool {
        dwords == 2 && offsets[1] == offsets[0] + 8 && !self.observed
    }

    /// A write2 of two dwords a lane at adjacent offsets as one 16-byte store a lane (the registers' chunks
    /// transposed into the lanes' rows), when EXEC is all ones, every lane's 16 bytes lie inside the LDS and
    /// each lane's address is at least 16 above the one before: no two lanes' bytes then overlap, so the two
    /// writes' order does not show. Otherwise the two writes as apart.
    fn lds_write_quads(&mut self, addr: Vv, offsets: [u32; 2], m: Value, data: [&[Vv]; 2]) {
        let addr = self.mat(addr);
        let data: Vec<Vv> = data.iter().flat_map(|d| d.iter()).map(|v| self.mat(*v)).collect();
        let ctx = self.ctx;
        let offset = offsets[0];
        let (fast, join) = {
            let b = &mut *self.b;
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let (negative, room_v) = lds_room(b, len, offset as i64 + 16);
            // each lane's next lane: this chunk's lanes 1-3, then the next chunk's lane 0
            let next = b
                .func
                .dfg
                .immediates
                .push(ConstantData::from((4u8..20).collect::<Vec<u8>>()));
            let but_last = b.func.dfg.constants.insert(ConstantData::from(
                [u32::MAX, u32::MAX, u32::MAX, 0]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect::<Vec<u8>>(),
            ));
            let but_last = b.ins().vconst(I32X4, but_last);
            let sixteen = b.ins().iconst(types::I32, 16);
            let sixteen = b.ins().splat(I32X4, sixteen);
            let mut any = None;
            for i in 0..CHUNKS {
                let over = b.ins().icmp(IntCC::UnsignedGreaterThan, addr.c[i], room_v);
                let this = b.ins().bitcast(types::I8X16, little(), addr.c[i]);
                let after = b.ins().bitcast(types::I8X16, little(), addr.c[(i + 1).min(CHUNKS - 1)]);
                let following = b.ins().shuffle(this, after, next);
                let following = b.ins().bitcast(I32X4, little(), following);
                let gap = b.ins().isub(following, addr.c[i]);
                let mut close = b.ins().icmp(IntCC::SignedLessThan, gap, sixteen);
                if i == CHUNKS - 1 {
                    close = b.ins().band(close, but_last);
                }
                let bad = b.ins().bor(over, close);
                any = Some(any.map_or(bad, |a| b.ins().bor(a, bad)));
            }
            let any = b.ins().vany_true(any.expect("chunks"));
            let part = b.ins().icmp_imm(IntCC::NotEqual, m, -1);
            let bad = b.ins().bor(any, negative);
            let bad = b.ins().bor(bad, part);
            let (fast, slow, join) = (b.create_block(), b.create_block(), b.create_block());
            b.ins().brif(bad, slow, &[], fast, &[]);
            b.switch_to_block(slow);
            b.seal_block(slow);
            (fast, join)
        };
        // slow: the two writes as apart (lane by lane, or the interpreter for faults)
        self.lds_inline(addr, offsets[0], 2, m, Some(&data[..2]));
        self.lds_inline(addr, offsets[1], 2, m, Some(&data[2..]));
        let b = &mut *self.b;
        b.ins().jump(join, &[]);
        b.switch_to_block(fast);
        b.seal_block(fast);
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let shuffles = transposes(b);
        for i in 0..CHUNKS {
            let cols: [Value; 4] = std::array::from_fn(|d| b.ins().bitcast(types::I8X16, little(), data[d].c[i]));
            for (j, row) in transpose4(b, shuffles, cols).into_iter().enumerate() {
                let r = b.ins().extractlane(addr.c[i], j as u8);
                let r = b.ins().uextend(types::I64, r);
                let p = b.ins().iadd(lds, r);
                b.ins().store(MemFlags::new(), row, p, offset as i32);
            }
        }
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        b.seal_block(join);
    }

    /// An LDS dword read as a lazy vector ([`Lazy::Read`]): the quick conditions (EXEC all ones, every chunk
    /// four consecutive dwords or one, all in range, an LDS of 16 bytes or more) are decided here; where they
    /// fail, the interpreter reads (out of line) into a tmp slot. Each chunk is then loaded where it is used.
    pub(in crate::backend) fn lds_read_lazy(&mut self, addr: Vv, offset: u32, m: Value) -> Vv {
        let pattern = self.lds_pattern(addr);
        let ctx = self.ctx;
        let slot = self.tmps;
        self.tmps += 1;
        let (quick, general, join, lds, lim) = {
            let b = &mut *self.b;
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
            let fits = lds_chunks_fit(b, len, &pattern, offset, 4, m);
            let big = b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, 16);
            let regular = b.ins().bor(pattern.seq, pattern.same);
            let ok = b.ins().band(fits, regular);
            let ok = b.ins().band(ok, big);
            let lim = b.ins().iadd_imm(len, -16);
            let (general, join) = (b.create_block(), b.create_block());
            b.ins().brif(ok, join, &[], general, &[]);
            (ok, general, join, lds, lim)
        };
        {
            let b = &mut *self.b;
            b.switch_to_block(general);
            b.seal_block(general);
        }
        // the interpreter's checked read (a fault ends the block there); its result kept in the tmp slot
        self.call(Op::LdsRead { offset, dwords: 1 }, &[addr], &[], &[m], 0, 0, 0, true);
        let b = &mut *self.b;
        for i in 0..CHUNKS {
            let x = b.ins().load(I32X4, vflags(), ctx, Ctx::V + 16 * i as i32);
            b.ins().store(vflags(), x, ctx, Ctx::TMP + (256 * slot + 16 * i) as i32);
        }
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        b.seal_block(join);
        let r = ReadAt {
            addr,
            offset: offset as i64,
            base: lds,
            lim,
            seq: pattern.seq,
            same: pattern.same,
            quick,
            slot,
            bytes: 4,
            signed: false,
            gather: false,
        };
        self.lazies.push(Lazy::Read(r));
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// The [`LdsPattern`] of `addr`, worked out where it is first needed (which dominates its later uses in the
    /// block) and kept in the block's cache.
    pub(in crate::backend) fn lds_pattern(&mut self, addr: Vv) -> LdsPattern {
        let key = match addr.lazy.map(|k| &self.lazies[k as usize]) {
            Some(Lazy::Reg {
                field,
                reg,
                kept: None,
                loaded: None,
            }) => PatternKey::Reg(*field, *reg),
            _ => {
                let addr_m = self.mat(addr);
                return self.lds_pattern_of(addr_m, None, 4);
            }
        };
        if let Some(p) = self.cache.lds.get(&key) {
            return *p;
        }
        self.lds_pattern_of(addr, Some(key), 4)
    }

    /// Works out the pattern of `addr` for accesses of `step` bytes a lane (`seq`: each chunk's lanes `step`
    /// bytes apart), remembered under `key`.
    fn lds_pattern_of(&mut self, addr: Vv, key: Option<PatternKey>, step: u32) -> LdsPattern {
        let steps = {
            let b = &mut *self.b;
            let steps = b.func.dfg.constants.insert(ConstantData::from(
                (0..4).flat_map(|k| (k * step).to_le_bytes()).collect::<Vec<u8>>(),
            ));
            b.ins().vconst(I32X4, steps)
        };
        let mut firsts = [dummy(); CHUNKS];
        let (mut seq, mut same, mut max, mut min) = (None, None, None, None);
        for i in 0..CHUNKS {
            let c = self.ch(&addr, i);
            let b = &mut *self.b;
            firsts[i] = b.ins().extractlane(c, 0);
            let first = b.ins().splat(I32X4, firsts[i]);
            let next = b.ins().iadd(first, steps);
            let s = b.ins().icmp(IntCC::Equal, c, next);
            let e = b.ins().icmp(IntCC::Equal, c, first);
            seq = Some(seq.map_or(s, |a| b.ins().band(a, s)));
            same = Some(same.map_or(e, |a| b.ins().band(a, e)));
            max = Some(max.map_or(c, |a| b.ins().umax(a, c)));
            min = Some(min.map_or(c, |a| b.ins().umin(a, c)));
        }
        let b = &mut *self.b;
        let seq = b.ins().vall_true(seq.expect("chunks"));
        let same = b.ins().vall_true(same.expect("chunks"));
        let (vmax, vmin) = (max.expect("chunks"), min.expect("chunks"));
        let (mut m, mut n) = (b.ins().extractlane(vmax, 0), b.ins().extractlane(vmin, 0));
        for j in 1..4u8 {
            let x = b.ins().extractlane(vmax, j);
            m = b.ins().umax(m, x);
            let y = b.ins().extractlane(vmin, j);
            n = b.ins().umin(n, y);
        }
        let p = LdsPattern {
            seq,
            same,
            firsts,
            max: m,
            min: n,
        };
        if let Some(key) = key {
            self.cache.lds.insert(key, p);
        }
        p
    }

    /// LDS accesses of 1-4 dwords lane by lane, for any EXEC.
    fn lds_lanes(&mut self, addr: Vv, offset: u32, dwords: u32, m: Value, data: Option<&[Vv]>) -> Vec<Vv> {
        self.lds_lanes_of(addr, offset, 4 * dwords, false, m, data, |jb, addr, data| {
            jb.lds_call(addr, offset, dwords, m, data)
        })
    }

    /// LDS reads (`data` None, 1 or 2 bytes zero- or sign-extended when `signed`) and writes of `bytes` per lane,
    /// inline: when every active lane's access lies inside the LDS, each lane is loaded or stored directly
    /// ([`lane_accesses`]); otherwise `slow` (the interpreter, whose faults end the block there).
    #[allow(clippy::too_many_arguments)]
    fn lds_lanes_of(
        &mut self,
        addr: Vv,
        offset: u32,
        bytes: u32,
        signed: bool,
        m: Value,
        data: Option<&[Vv]>,
        slow: impl FnOnce(&mut Self, Vv, Option<&[Vv]>) -> Vec<Vv>,
    ) -> Vec<Vv> {
        let addr = self.mat(addr);
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        let ctx = self.ctx;
        let masks = self.expand(m);
        let (fast, slow_blk, join) = {
            let b = &mut *self.b;
            let len = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_LEN);
            let (negative, room_v) = lds_room(b, len, offset as i64 + bytes as i64);
            let mut bad = [dummy(); CHUNKS];
            for i in 0..CHUNKS {
                let over = b.ins().icmp(IntCC::UnsignedGreaterThan, addr.c[i], room_v);
                bad[i] = b.ins().band(over, masks[i]);
            }
            let mut any = bad[0];
            for x in &bad[1..] {
                any = b.ins().bor(any, *x);
            }
            let any = b.ins().vany_true(any);
            // no room at all (an LDS smaller than one access, or none): the slow path, even with no lane
            // active — the fast path would still touch the LDS's first bytes for inactive lanes
            let bad = b.ins().bor(any, negative);
            let (fast, slow_blk, join) = (b.create_block(), b.create_block(), b.create_block());
            let outs = if data.is_some() {
                0
            } else {
                bytes.div_ceil(4) as usize * CHUNKS
            };
            for _ in 0..outs {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(bad, slow_blk, &[], fast, &[]);
            (fast, slow_blk, join)
        };
        // slow: the interpreter (faults end the block there)
        {
            let b = &mut *self.b;
            b.switch_to_block(slow_blk);
            b.seal_block(slow_blk);
        }
        let slow_out = slow(self, addr, data);
        let b = &mut *self.b;
        jump_with(b, join, &slow_out);
        // fast: lane by lane
        b.switch_to_block(fast);
        b.seal_block(fast);
        self.record(
            AccessRecord::desc(REC_LDS, data.is_some(), bytes),
            &addr.c,
            None,
            offset as i64,
            m,
        );
        let b = &mut *self.b;
        let lds = b.ins().load(types::I64, trusted(), ctx, Ctx::LDS_PTR);
        let loaded = lane_accesses(b, ctx, lds, &addr.c, offset as i32, bytes, signed, &masks, data);
        jump_with(b, join, &loaded);
        join_vectors(b, join)
    }

    /// [`Backend::lds_atomic`].
    pub(in crate::backend) fn emit_lds_atomic(
        &mut self,
        op: AtomicOp,
        addr: Vv,
        offset: u32,
        data: Vv,
        m: Value,
    ) -> Result<Vv, ExecError> {
        Ok(self
            .call_mem(Op::LdsAtomic { op, offset }, &[addr, data], &[], &[m], 1, 0)
            .0[0])
    }

    /// [`Backend::lds_read_narrow`].
    pub(in crate::backend) fn emit_lds_read_narrow(
        &mut self,
        addr: Vv,
        offset: u32,
        bytes: u32,
        signed: bool,
        m: Value,
    ) -> Result<Vv, ExecError> {
        let slow = |jb: &mut Self, addr: Vv, _: Option<&[Vv]>| {
            jb.call_mem(Op::LdsReadNarrow { offset, bytes, signed }, &[addr], &[], &[m], 1, 0)
                .0
        };
        if !self.may_record() {
            return Ok(slow(self, addr, None)[0]);
        }
        Ok(self.lds_lanes_of(addr, offset, bytes, signed, m, None, slow)[0])
    }

    /// [`Backend::lds_write_narrow`].
    pub(in crate::backend) fn emit_lds_write_narrow(
        &mut self,
        addr: Vv,
        offset: u32,
        bytes: u32,
        data: Vv,
        m: Value,
    ) -> Result<(), ExecError> {
        let slow = |jb: &mut Self, addr: Vv, data: Option<&[Vv]>| {
            let data = data.expect("a write's data")[0];
            jb.call_mem(Op::LdsWriteNarrow { offset, bytes }, &[addr, data], &[], &[m], 0, 0)
                .0
        };
        if !self.may_record() {
            slow(self, addr, Some(&[data]));
            return Ok(());
        }
        self.lds_lanes_of(addr, offset, bytes, false, m, Some(&[data]), slow);
        Ok(())
    }

    /// [`Backend::lds_atomic64`].
    pub(in crate::backend) fn emit_lds_atomic64(
        &mut self,
        op: AtomicOp,
        addr: Vv,
        offset: u32,
        data: (Vv, Vv),
        m: Value,
    ) -> Result<(Vv, Vv), ExecError> {
        let v = self
            .call_mem(Op::LdsAtomic64 { op, offset }, &[addr, data.0, data.1], &[], &[m], 2, 0)
            .0;
        Ok((v[0], v[1]))
    }

    /// [`Backend::lds_atomic2`].
    pub(in crate::backend) fn emit_lds_atomic2(
        &mut self,
        op: AtomicOp,
        addr: Vv,
        offset: u32,
        a: &[Vv],
        b: &[Vv],
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        let ins: Vec<Vv> = std::iter::once(addr)
            .chain(a.iter().copied())
            .chain(b.iter().copied())
            .collect();
        Ok(self
            .call_mem(
                Op::LdsAtomic2 {
                    op,
                    offset,
                    n: a.len() as u32,
                },
                &ins,
                &[],
                &[m],
                a.len(),
                0,
            )
            .0)
    }

    /// [`Backend::lds_write`].
    pub(in crate::backend) fn emit_lds_write(
        &mut self,
        addr: Vv,
        offset: u32,
        data: &[Vv],
        m: Value,
    ) -> Result<(), ExecError> {
        self.lds_inline(addr, offset, data.len() as u32, m, Some(data));
        Ok(())
    }

    /// [`Backend::lds_read2`].
    pub(in crate::backend) fn emit_lds_read2(
        &mut self,
        addr: Vv,
        offsets: [u32; 2],
        dwords: u32,
        m: Value,
    ) -> Result<[Vec<Vv>; 2], ExecError> {
        let [o0, o1] = offsets;
        if !self.adjacent_pairs(offsets, dwords) {
            let first = self.lds_read(addr, o0, dwords, m)?;
            return Ok([first, self.lds_read(addr, o1, dwords, m)?]);
        }
        // each lane's 16 bytes in one load; any lane out of range: the two reads as apart
        let mut v = self.lds_lanes_of(addr, o0, 16, false, m, None, |jb, addr, _| {
            let mut v = jb.lds_inline(addr, o0, 2, m, None);
            v.extend(jb.lds_inline(addr, o1, 2, m, None));
            v
        });
        let second = v.split_off(2);
        Ok([v, second])
    }

    /// [`Backend::lds_write2`].
    pub(in crate::backend) fn emit_lds_write2(
        &mut self,
        addr: Vv,
        offsets: [u32; 2],
        data: [&[Vv]; 2],
        m: Value,
    ) -> Result<(), ExecError> {
        if !self.adjacent_pairs(offsets, data[0].len() as u32) {
            self.lds_write(addr, offsets[0], data[0], m)?;
            return self.lds_write(addr, offsets[1], data[1], m);
        }
        self.lds_write_quads(addr, offsets, m, data);
        Ok(())
    }
}
