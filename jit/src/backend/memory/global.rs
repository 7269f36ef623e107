//! Global memory accesses inline through the access site's buffer window (lazy reads, chunked and lane-by-lane
//! stores), the interpreter's checked access otherwise; atomics through the interpreter.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, MemFlags, Value};

use emu_core::sem::{AtomicOp, ExecError};

use crate::backend::ir::{dummy, join_vectors, jump_with, trusted, vflags};
use crate::backend::memory::lane_accesses;
use crate::backend::types::{JitBackend, Lazy, ReadAt, Vv, CHUNKS, I32X4};
use crate::call::Op;
use crate::ctx::{window_field, window_slot};
use crate::ctx::{AccessRecord, Ctx, REC_GLOBAL, TMP};

impl<'a, 'f> JitBackend<'a, 'f> {
    /// A global read as lazy vectors ([`Lazy::Read`]), one per destination register: `bytes` per lane (1 or 2,
    /// extended per `signed`, or whole dwords). Quick when EXEC is all ones and every lane's bytes lie in this
    /// access site's buffer window (same high half, low half inside); the lanes may then be in any order.
    /// Otherwise the interpreter reads (out of line, filling the window) into tmp slots.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::backend) fn global_read_lazy(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: Value,
        slow: Op,
    ) -> Vec<Vv> {
        let outs = (bytes as usize).div_ceil(4);
        let pl = self.lds_pattern(lo);
        let ph = self.lds_pattern(hi);
        let ctx = self.ctx;
        let slot = self.tmps;
        self.tmps += outs;
        let w = window_slot(self.site.offset);
        let (quick, general, join, base, lim) = {
            let b = &mut *self.b;
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, window_field(w, 0));
            let len = b.ins().load(types::I64, trusted(), wins, window_field(w, 1));
            let host = b.ins().load(types::I64, trusted(), wins, window_field(w, 2));
            let start_lo = b.ins().band_imm(start, 0xffff_ffff);
            let start_hi = b.ins().ushr_imm(start, 32);
            let start_hi = b.ins().ireduce(types::I32, start_hi);
            let hi_lo = b.ins().icmp(IntCC::Equal, ph.min, start_hi);
            let hi_hi = b.ins().icmp(IntCC::Equal, ph.max, start_hi);
            let (min, max) = (b.ins().uextend(types::I64, pl.min), b.ins().uextend(types::I64, pl.max));
            let first = b.ins().iadd_imm(min, offset);
            let last = b.ins().iadd_imm(max, offset + bytes as i64);
            let end = b.ins().iadd(start_lo, len);
            let above = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, first, start_lo);
            let below = b.ins().icmp(IntCC::SignedLessThanOrEqual, last, end);
            let big = b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, 16);
            let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
            let mut ok = b.ins().band(hi_lo, hi_hi);
            for c in [above, below, big, full] {
                ok = b.ins().band(ok, c);
            }
            let base = b.ins().isub(host, start_lo);
            let lim = b.ins().iadd_imm(end, -16);
            let (general, join) = (b.create_block(), b.create_block());
            b.ins().brif(ok, join, &[], general, &[]);
            (ok, general, join, base, lim)
        };
        {
            let b = &mut *self.b;
            b.switch_to_block(general);
            b.seal_block(general);
        }
        self.call(slow, &[lo, hi], &[], &[m], 0, 0, 0, true);
        let b = &mut *self.b;
        for d in 0..outs {
            for i in 0..CHUNKS {
                let x = b.ins().load(I32X4, vflags(), ctx, Ctx::V + (256 * d + 16 * i) as i32);
                b.ins()
                    .store(vflags(), x, ctx, Ctx::TMP + (256 * (slot + d) + 16 * i) as i32);
            }
        }
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        b.seal_block(join);
        (0..outs)
            .map(|d| {
                let width = bytes.min(4);
                let r = ReadAt {
                    addr: lo,
                    offset: offset + 4 * d as i64,
                    base,
                    lim,
                    seq: pl.seq,
                    same: pl.same,
                    quick,
                    slot: slot + d,
                    bytes: width,
                    signed,
                    gather: true,
                };
                self.lazies.push(Lazy::Read(r));
                Vv {
                    c: [dummy(); CHUNKS],
                    uniform: None,
                    lazy: Some(self.lazies.len() as u32 - 1),
                }
            })
            .collect()
    }

    /// Global loads (`data` None) and stores of `bytes` per lane (1, 2 or a multiple of 4; narrow loads
    /// zero- or sign-extended), inline when every active lane's access lies in the buffer window of this access
    /// site ([`window_slot`]); otherwise the interpreter's checked access (`slow`), which also fills the window.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::backend) fn global_inline(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: Value,
        data: Option<&[Vv]>,
        slow: Op,
    ) -> Vec<Vv> {
        let outs = if data.is_some() {
            0
        } else {
            (bytes as usize).div_ceil(4)
        };
        if !(i32::MIN as i64..=i32::MAX as i64).contains(&offset) || !self.may_record() {
            let mut ins = vec![lo, hi];
            ins.extend(data.unwrap_or(&[]).iter().copied());
            return self.call_mem(slow, &ins, &[], &[m], outs, 0).0;
        }
        // an 8-byte read stays one host access per lane (below): split into dwords read when each is used, a
        // lane's two halves could come from different moments of another thread's writes
        if data.is_none() && bytes != 8 && self.tmps + outs <= TMP && !self.observed {
            return self.global_read_lazy(lo, hi, offset, bytes, signed, m, slow);
        }
        let (lo, hi) = (self.mat(lo), self.mat(hi));
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let data = data.as_deref();
        let ctx = self.ctx;
        let masks = self.expand(m);
        let slot = window_slot(self.site.offset);
        let (fast, slow_blk, join, rels, wins, seq) = {
            let b = &mut *self.b;
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, window_field(slot, 0));
            let len = b.ins().load(types::I64, trusted(), wins, window_field(slot, 1));
            let room = b.ins().iadd_imm(len, -(bytes as i64));
            let negative = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let room32 = b.ins().ireduce(types::I32, room);
            let start_lo = b.ins().ireduce(types::I32, start);
            let start_hi = b.ins().ushr_imm(start, 32);
            let start_hi = b.ins().ireduce(types::I32, start_hi);
            let (room_v, lo_v, hi_v) = (
                b.ins().splat(I32X4, room32),
                b.ins().splat(I32X4, start_lo),
                b.ins().splat(I32X4, start_hi),
            );
            let off = b.ins().iconst(types::I32, offset);
            let off_v = b.ins().splat(I32X4, off);
            let mut any = None;
            let mut rels = [dummy(); CHUNKS];
            // a one-dword store whose every chunk is four consecutive dwords (checked below) stores chunk by chunk
            let chunked = matches!(data, Some([_])) && bytes == 4;
            let steps = chunked.then(|| {
                let c = b.func.dfg.constants.insert(ConstantData::from(
                    [0u32, 4, 8, 12]
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect::<Vec<u8>>(),
                ));
                b.ins().vconst(I32X4, c)
            });
            let mut seq = None;
            for i in 0..CHUNKS {
                // lane address (hi:lo) + offset must stay in the window's 4 GiB half and inside it
                let lo2 = b.ins().iadd(lo.c[i], off_v);
                let carried = match offset {
                    0 => None,
                    o if o > 0 => Some(b.ins().icmp(IntCC::UnsignedLessThan, lo2, lo.c[i])),
                    _ => Some(b.ins().icmp(IntCC::UnsignedGreaterThan, lo2, lo.c[i])),
                };
                let rel = b.ins().isub(lo2, lo_v);
                let inside = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, rel, room_v);
                let same_hi = b.ins().icmp(IntCC::Equal, hi.c[i], hi_v);
                let mut ok = b.ins().band(inside, same_hi);
                if let Some(c) = carried {
                    ok = b.ins().band_not(ok, c);
                }
                let bad = b.ins().band_not(masks[i], ok);
                any = Some(match any {
                    None => bad,
                    Some(a) => b.ins().bor(a, bad),
                });
                rels[i] = rel;
                if let Some(steps) = steps {
                    let first = b.ins().extractlane(rel, 0);
                    let first = b.ins().splat(I32X4, first);
                    let want = b.ins().iadd(first, steps);
                    let s = b.ins().icmp(IntCC::Equal, rel, want);
                    seq = Some(match seq {
                        None => s,
                        Some(q) => b.ins().band(q, s),
                    });
                }
            }
            let seq = seq.map(|q| {
                let q = b.ins().vall_true(q);
                let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
                b.ins().band(q, full)
            });
            let any = b.ins().vany_true(any.expect("chunks"));
            // no window yet (or one smaller than the access): the slow path, even with no lane active — the
            // fast path would still touch the window's first bytes for inactive lanes
            let bad = b.ins().bor(any, negative);
            let (fast, slow_blk, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(bad, slow_blk, &[], fast, &[]);
            b.switch_to_block(slow_blk);
            b.seal_block(slow_blk);
            (fast, slow_blk, join, rels, wins, seq)
        };
        let _ = slow_blk;
        let mut ins = vec![lo, hi];
        ins.extend(data.unwrap_or(&[]).iter().copied());
        let slow_out = self.call_mem(slow, &ins, &[], &[m], outs, 0).0;
        let b = &mut *self.b;
        jump_with(b, join, &slow_out);
        b.switch_to_block(fast);
        b.seal_block(fast);
        self.record(
            AccessRecord::desc(REC_GLOBAL, data.is_some(), bytes),
            &lo.c,
            Some(&hi.c),
            offset,
            m,
        );
        let b = &mut *self.b;
        let host = b.ins().load(types::I64, trusted(), wins, window_field(slot, 2));
        if let (Some(seq), Some([d])) = (seq, data) {
            let (chunked, lanes) = (b.create_block(), b.create_block());
            b.ins().brif(seq, chunked, &[], lanes, &[]);
            b.switch_to_block(chunked);
            b.seal_block(chunked);
            for i in 0..CHUNKS {
                let first = b.ins().extractlane(rels[i], 0);
                let first = b.ins().uextend(types::I64, first);
                let p = b.ins().iadd(host, first);
                b.ins().store(MemFlags::new(), d.c[i], p, 0);
            }
            b.ins().jump(join, &[]);
            b.switch_to_block(lanes);
            b.seal_block(lanes);
        }
        let loaded = lane_accesses(b, ctx, host, &rels, 0, bytes, signed, &masks, data);
        jump_with(b, join, &loaded);
        join_vectors(b, join)
    }

    /// [`Backend::v_atomic_cmpswap`](emu_core::sem::Backend::v_atomic_cmpswap).
    pub(in crate::backend) fn emit_v_atomic_cmpswap(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        src: &[Vv],
        cmp: &[Vv],
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        let ins: Vec<Vv> = [lo, hi].iter().chain(src).chain(cmp).copied().collect();
        Ok(self
            .call_mem(
                Op::CmpSwap {
                    offset,
                    n: src.len() as u32,
                },
                &ins,
                &[],
                &[m],
                src.len(),
                0,
            )
            .0)
    }

    /// [`Backend::v_atomic`](emu_core::sem::Backend::v_atomic).
    pub(in crate::backend) fn emit_v_atomic(
        &mut self,
        op: AtomicOp,
        lo: Vv,
        hi: Vv,
        offset: i64,
        data: Vv,
        m: Value,
    ) -> Result<Vv, ExecError> {
        Ok(self
            .call_mem(Op::VAtomic { op, offset }, &[lo, hi, data], &[], &[m], 1, 0)
            .0[0])
    }

    /// [`Backend::v_load_narrow`](emu_core::sem::Backend::v_load_narrow).
    pub(in crate::backend) fn emit_v_load_narrow(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: Value,
    ) -> Result<Vv, ExecError> {
        Ok(self.global_inline(
            lo,
            hi,
            offset,
            bytes,
            signed,
            m,
            None,
            Op::VLoadNarrow { offset, bytes, signed },
        )[0])
    }

    /// [`Backend::v_store_narrow`](emu_core::sem::Backend::v_store_narrow).
    pub(in crate::backend) fn emit_v_store_narrow(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        bytes: u32,
        data: Vv,
        m: Value,
    ) -> Result<(), ExecError> {
        self.global_inline(
            lo,
            hi,
            offset,
            bytes,
            false,
            m,
            Some(&[data]),
            Op::VStoreNarrow { offset, bytes },
        );
        Ok(())
    }

    /// [`Backend::v_atomic64`](emu_core::sem::Backend::v_atomic64).
    pub(in crate::backend) fn emit_v_atomic64(
        &mut self,
        op: AtomicOp,
        lo: Vv,
        hi: Vv,
        offset: i64,
        data: (Vv, Vv),
        m: Value,
    ) -> Result<(Vv, Vv), ExecError> {
        let v = self
            .call_mem(Op::VAtomic64 { op, offset }, &[lo, hi, data.0, data.1], &[], &[m], 2, 0)
            .0;
        Ok((v[0], v[1]))
    }

    /// [`Backend::v_store`](emu_core::sem::Backend::v_store).
    pub(in crate::backend) fn emit_v_store(
        &mut self,
        lo: Vv,
        hi: Vv,
        offset: i64,
        data: &[Vv],
        m: Value,
    ) -> Result<(), ExecError> {
        self.global_inline(
            lo,
            hi,
            offset,
            4 * data.len() as u32,
            false,
            m,
            Some(data),
            Op::VStore {
                offset,
                n: data.len() as u32,
            },
        );
        Ok(())
    }
}
