//! Memory accesses: LDS ([`lds`]), global memory ([`global`]), private memory ([`private`]) and scalar memory
//! ([`scalar`]), and what they share: access records for an observer, lane-by-lane loads and stores, and 4x4
//! dword transposes.

pub(super) mod global;
pub(super) mod lds;
pub(super) mod private;
pub(super) mod scalar;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, Immediate, InstBuilder, MemFlags, Value};
use cranelift_frontend::FunctionBuilder;

use crate::backend::f64::f64x2_joins;
use crate::backend::ir::{dummy, little, trusted, vflags};
use crate::backend::types::{JitBackend, Vv, CHUNKS, I32X4};
use crate::ctx::{AccessRecord, Ctx};

/// Four lanes read one by one: lane address chunk `a`, each lane's bytes at host `base` + its address +
/// `offset`, `bytes` (1, 2 or 4) zero- or sign-extended. With `quick`, lanes read from `base` alone (offset 0)
/// where it is false (for a `base` then pointing at the context's sink).
pub(super) fn gather_chunk(
    b: &mut FunctionBuilder<'_>,
    a: Value,
    base: Value,
    offset: i64,
    bytes: u32,
    signed: bool,
    quick: Option<Value>,
) -> Value {
    let zero = b.ins().iconst(types::I32, 0);
    let mut acc = b.ins().splat(I32X4, zero);
    let zero64 = b.ins().iconst(types::I64, 0);
    for j in 0..4u8 {
        let x = b.ins().extractlane(a, j);
        let x = b.ins().uextend(types::I64, x);
        let (p, imm) = match quick {
            Some(q) => {
                let at = b.ins().iadd_imm(x, offset);
                let at = b.ins().select(q, at, zero64);
                (b.ins().iadd(base, at), 0)
            }
            None => (b.ins().iadd(base, x), offset as i32),
        };
        let v = match (bytes, signed) {
            (1, true) => b.ins().sload8(types::I32, MemFlags::new(), p, imm),
            (1, false) => b.ins().uload8(types::I32, MemFlags::new(), p, imm),
            (2, true) => b.ins().sload16(types::I32, MemFlags::new(), p, imm),
            (2, false) => b.ins().uload16(types::I32, MemFlags::new(), p, imm),
            _ => b.ins().load(types::I32, MemFlags::new(), p, imm),
        };
        acc = b.ins().insertlane(acc, v, j);
    }
    acc
}

/// The address of the context's next access record (see [`JitBackend::record`]).
pub(super) fn record_slot(b: &mut FunctionBuilder<'_>, ctx: Value) -> Value {
    let n = b.ins().load(types::I64, trusted(), ctx, Ctx::REC_COUNT);
    let at = b.ins().imul_imm(n, AccessRecord::SIZE);
    b.ins().iadd(ctx, at)
}

/// Completes the access record at `at`: its lane mask, offset and descriptor; counts it.
pub(super) fn record_fields(b: &mut FunctionBuilder<'_>, ctx: Value, at: Value, m: Value, offset: i64, desc: u64) {
    b.ins().store(trusted(), m, at, Ctx::RECS + AccessRecord::MASK);
    let off = b.ins().iconst(types::I64, offset);
    b.ins().store(trusted(), off, at, Ctx::RECS + AccessRecord::OFFSET);
    let d = b.ins().iconst(types::I64, desc as i64);
    b.ins().store(trusted(), d, at, Ctx::RECS + AccessRecord::DESC);
    let n = b.ins().load(types::I64, trusted(), ctx, Ctx::REC_COUNT);
    let n = b.ins().iadd_imm(n, 1);
    b.ins().store(trusted(), n, ctx, Ctx::REC_COUNT);
}

/// The fast path of an inline LDS or global access: for every lane, `bytes` at `base + rel + imm` (`rels` one
/// i32x4 per chunk; 1 or 2 bytes zero- or sign-extended when `signed`, 8 in one host access, else 4 per
/// dword), loaded — inactive lanes read the first bytes and yield 0 — or, with `data`, stored — inactive lanes
/// store to the context's sink. Returns the loaded dword vectors (none for a store).
#[allow(clippy::too_many_arguments)]
pub(super) fn lane_accesses(
    b: &mut FunctionBuilder<'_>,
    ctx: Value,
    base: Value,
    rels: &[Value; CHUNKS],
    imm: i32,
    bytes: u32,
    signed: bool,
    masks: &[Value; CHUNKS],
    data: Option<&[Vv]>,
) -> Vec<Vv> {
    let zero = b.ins().iconst(types::I32, 0);
    let zero_v = b.ins().splat(I32X4, zero);
    let sink = b.ins().iadd_imm(ctx, Ctx::SINK as i64);
    let outs = if data.is_some() {
        0
    } else {
        (bytes as usize).div_ceil(4)
    };
    let mut loaded = vec![
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: None
        };
        outs
    ];
    // four dwords a lane: a load of each lane's 16 bytes, the 4x4 block then transposed into the four
    // registers' chunks (32-bit interleaves of lanes 0 and 1 and of lanes 2 and 3, then 64-bit ones of those)
    let quads = (data.is_none() && bytes == 16).then(|| transposes(b));
    for i in 0..CHUNKS {
        let safe = b.ins().bitselect(masks[i], rels[i], zero_v);
        if data.is_none() && bytes == 4 {
            let v = load_chunk_dword(b, base, safe, imm);
            loaded[0].c[i] = b.ins().bitselect(masks[i], v, zero_v);
            continue;
        }
        if let Some(shuffles) = quads {
            let rows: [Value; 4] = std::array::from_fn(|j| {
                let r = b.ins().extractlane(safe, j as u8);
                let r = b.ins().uextend(types::I64, r);
                let p = b.ins().iadd(base, r);
                let row = b.ins().load(I32X4, MemFlags::new(), p, imm);
                b.ins().bitcast(types::I8X16, little(), row)
            });
            for (d, col) in transpose4(b, shuffles, rows).into_iter().enumerate() {
                let v = b.ins().bitcast(I32X4, little(), col);
                loaded[d].c[i] = b.ins().bitselect(masks[i], v, zero_v);
            }
            continue;
        }
        let mut acc = vec![zero_v; outs];
        for j in 0..4u8 {
            let r = b.ins().extractlane(safe, j);
            let r = b.ins().uextend(types::I64, r);
            let p = b.ins().iadd(base, r);
            match data {
                // eight bytes a lane in one host access (stored so too, below), as the GPU makes a naturally
                // aligned 64-bit access (single-copy atomic: a lane never sees half of another thread's store)
                None if bytes == 8 => {
                    let x = b.ins().load(types::I64, MemFlags::new(), p, imm);
                    let low = b.ins().ireduce(types::I32, x);
                    let high = b.ins().ushr_imm(x, 32);
                    let high = b.ins().ireduce(types::I32, high);
                    acc[0] = b.ins().insertlane(acc[0], low, j);
                    acc[1] = b.ins().insertlane(acc[1], high, j);
                }
                None => {
                    for (d, v) in acc.iter_mut().enumerate() {
                        let x = match bytes {
                            1 if signed => b.ins().sload8(types::I32, MemFlags::new(), p, imm),
                            1 => b.ins().uload8(types::I32, MemFlags::new(), p, imm),
                            2 if signed => b.ins().sload16(types::I32, MemFlags::new(), p, imm),
                            2 => b.ins().uload16(types::I32, MemFlags::new(), p, imm),
                            _ => b.ins().load(types::I32, MemFlags::new(), p, imm + 4 * d as i32),
                        };
                        *v = b.ins().insertlane(*v, x, j);
                    }
                }
                Some(vals) => {
                    let lane_mask = b.ins().extractlane(masks[i], j);
                    let on = b.ins().icmp_imm(IntCC::NotEqual, lane_mask, 0);
                    let at = b.ins().iadd_imm(p, imm as i64);
                    let dst = b.ins().select(on, at, sink);
                    if let (8, [low, high]) = (bytes, vals) {
                        let low = b.ins().extractlane(low.c[i], j);
                        let high = b.ins().extractlane(high.c[i], j);
                        let low = b.ins().uextend(types::I64, low);
                        let high = b.ins().uextend(types::I64, high);
                        let high = b.ins().ishl_imm(high, 32);
                        let x = b.ins().bor(low, high);
                        b.ins().store(MemFlags::new(), x, dst, 0);
                    } else {
                        for (d, v) in vals.iter().enumerate() {
                            let x = b.ins().extractlane(v.c[i], j);
                            match bytes {
                                1 => b.ins().istore8(MemFlags::new(), x, dst, 0),
                                2 => b.ins().istore16(MemFlags::new(), x, dst, 0),
                                _ => b.ins().store(MemFlags::new(), x, dst, 4 * d as i32),
                            };
                        }
                    }
                }
            }
        }
        for (d, v) in acc.into_iter().enumerate() {
            loaded[d].c[i] = b.ins().bitselect(masks[i], v, zero_v);
        }
    }
    loaded
}

/// The shuffles of [`transpose4`]: 32-bit interleaves of two vectors' low and high halves, then 64-bit ones.
pub(super) fn transposes(b: &mut FunctionBuilder<'_>) -> [Immediate; 4] {
    let [lo32, hi32] = f64x2_joins(b);
    let [lo64, hi64] = [
        [0u8, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23],
        [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31],
    ]
    .map(|m| b.func.dfg.immediates.push(ConstantData::from(m.to_vec())));
    [lo32, hi32, lo64, hi64]
}

/// A 4x4 block of dwords (four `i8x16` rows) transposed: four lanes' 16 bytes each into the chunks of four
/// registers, or the chunks of four registers into four lanes' 16 bytes (`shuffles` from [`transposes`]).
pub(super) fn transpose4(b: &mut FunctionBuilder<'_>, shuffles: [Immediate; 4], rows: [Value; 4]) -> [Value; 4] {
    let [lo32, hi32, lo64, hi64] = shuffles;
    let t = [(0, lo32), (0, hi32), (2, lo32), (2, hi32)].map(|(j, m)| b.ins().shuffle(rows[j], rows[j + 1], m));
    [(0, lo64), (0, hi64), (1, lo64), (1, hi64)].map(|(k, m)| b.ins().shuffle(t[k], t[k + 2], m))
}

/// Loads one dword per lane of a chunk from `base + lane offset + offset`, where `safe` holds the four lanes'
/// offsets (inactive lanes already replaced by a harmless one): one vector load when the four are consecutive
/// dwords, one scalar load splat when they are equal, four scalar loads otherwise.
fn load_chunk_dword(b: &mut FunctionBuilder<'_>, base: Value, safe: Value, offset: i32) -> Value {
    let first = b.ins().extractlane(safe, 0);
    let first_v = b.ins().splat(I32X4, first);
    let steps = b.func.dfg.constants.insert(ConstantData::from(
        [0u32, 4, 8, 12]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    ));
    let steps = b.ins().vconst(I32X4, steps);
    let seq = b.ins().iadd(first_v, steps);
    let is_seq = b.ins().icmp(IntCC::Equal, safe, seq);
    let is_seq = b.ins().vall_true(is_seq);
    let is_same = b.ins().icmp(IntCC::Equal, safe, first_v);
    let is_same = b.ins().vall_true(is_same);
    let (vec_blk, other, same_blk, gather, join) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
    b.append_block_param(join, I32X4);
    let p0 = b.ins().uextend(types::I64, first);
    let p0 = b.ins().iadd(base, p0);
    b.ins().brif(is_seq, vec_blk, &[], other, &[]);
    b.switch_to_block(vec_blk);
    b.seal_block(vec_blk);
    let v = b.ins().load(I32X4, MemFlags::new(), p0, offset);
    b.ins().jump(join, &[v.into()]);
    b.switch_to_block(other);
    b.seal_block(other);
    b.ins().brif(is_same, same_blk, &[], gather, &[]);
    b.switch_to_block(same_blk);
    b.seal_block(same_blk);
    let x = b.ins().load(types::I32, MemFlags::new(), p0, offset);
    let v = b.ins().splat(I32X4, x);
    b.ins().jump(join, &[v.into()]);
    b.switch_to_block(gather);
    b.seal_block(gather);
    let zero = b.ins().iconst(types::I32, 0);
    let mut v = b.ins().splat(I32X4, zero);
    for j in 0..4u8 {
        let a = b.ins().extractlane(safe, j);
        let a = b.ins().uextend(types::I64, a);
        let p = b.ins().iadd(base, a);
        let x = b.ins().load(types::I32, MemFlags::new(), p, offset);
        v = b.ins().insertlane(v, x, j);
    }
    b.ins().jump(join, &[v.into()]);
    b.switch_to_block(join);
    b.seal_block(join);
    b.block_params(join)[0]
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// In an observed block, whether one more compiled access site may record its lanes (else it takes the
    /// interpreter call, which records them itself); claims the record.
    pub(super) fn may_record(&mut self) -> bool {
        if !self.observed {
            return true;
        }
        self.records += 1;
        self.records <= crate::ctx::RECORDS
    }

    /// In an observed block, leaves a record of an access made here (lanes in `m` at `hi:lo + offset`, or the
    /// low half only without `hi`) in the context's next record slot.
    pub(super) fn record(
        &mut self,
        desc: u64,
        lo: &[Value; CHUNKS],
        hi: Option<&[Value; CHUNKS]>,
        offset: i64,
        m: Value,
    ) {
        if !self.observed {
            return;
        }
        let ctx = self.ctx;
        let b = &mut *self.b;
        let at = record_slot(b, ctx);
        for i in 0..CHUNKS {
            b.ins()
                .store(vflags(), lo[i], at, Ctx::RECS + AccessRecord::LO + 16 * i as i32);
            if let Some(hi) = hi {
                b.ins()
                    .store(vflags(), hi[i], at, Ctx::RECS + AccessRecord::HI + 16 * i as i32);
            }
        }
        record_fields(b, ctx, at, m, offset, desc);
    }
}
