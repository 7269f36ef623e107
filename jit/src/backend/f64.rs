//! f64 arithmetic and compares on (lo, hi) register pairs: lanes regrouped into f64x2 vectors, in a loop over
//! the chunks where the operands allow, with the interpreter's NaN rule on a side path.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, ConstantData, Immediate, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::rules;
use emu_core::sem::Compare;

use crate::backend::compare::{float_cond, float_mask};
use crate::backend::ir::{dummy, little, vflags};
use crate::backend::types::{JitBackend, Vv, CHUNKS, I32X4};
use crate::call::Op;
use crate::ctx::{Ctx, TMP};

/// The byte shuffles [`f64x2_pair`] takes, made once per function use.
pub(super) fn f64x2_joins(b: &mut FunctionBuilder<'_>) -> [Immediate; 2] {
    [
        [0u8, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23],
        [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31],
    ]
    .map(|m| b.func.dfg.immediates.push(ConstantData::from(m.to_vec())))
}

/// A chunk of four lanes' f64 values, given as their low and high dwords, as two f64x2 vectors: lanes 0 and 1,
/// then lanes 2 and 3 (`joins` from [`f64x2_joins`]).
pub(super) fn f64x2_pair(b: &mut FunctionBuilder<'_>, joins: [Immediate; 2], lo: Value, hi: Value) -> [Value; 2] {
    let (l8, h8) = (
        b.ins().bitcast(types::I8X16, little(), lo),
        b.ins().bitcast(types::I8X16, little(), hi),
    );
    joins.map(|mask| {
        let s = b.ins().shuffle(l8, h8, mask);
        b.ins().bitcast(types::F64X2, little(), s)
    })
}

/// The shuffles that split two f64x2 vectors (lanes 0 and 1, lanes 2 and 3) back into a chunk's low and high
/// dwords: [`f64x2_pair`] undone.
pub(super) fn f64x2_splits(b: &mut FunctionBuilder<'_>) -> [Immediate; 2] {
    [
        [0u8, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27],
        [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31],
    ]
    .map(|m| b.func.dfg.immediates.push(ConstantData::from(m.to_vec())))
}

/// One chunk of an f64 operation on (lo, hi) dword chunks of its sources: `op` on the two f64x2 halves, the
/// result's NaN lanes (an `i64x2` mask, either half), and its low and high dwords (`shuffles` from
/// [`f64x2_joins`] and [`f64x2_splits`]).
fn f64_chunk<'f>(
    b: &mut FunctionBuilder<'f>,
    (joins, splits): ([Immediate; 2], [Immediate; 2]),
    op: &impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value,
    chunks: &[(Value, Value)],
) -> (Value, [Value; 2]) {
    let mut halves = [[dummy(); 3]; 2];
    for (k, &(l, h)) in chunks.iter().enumerate() {
        [halves[0][k], halves[1][k]] = f64x2_pair(b, joins, l, h);
    }
    let r: [Value; 2] = std::array::from_fn(|h| op(b, &halves[h][..chunks.len()]));
    let nan = r.map(|v| b.ins().fcmp(FloatCC::Unordered, v, v));
    let nan = b.ins().bor(nan[0], nan[1]);
    let bytes = r.map(|v| b.ins().bitcast(types::I8X16, little(), v));
    let dwords = splits.map(|m| {
        let x = b.ins().shuffle(bytes[0], bytes[1], m);
        b.ins().bitcast(I32X4, little(), x)
    });
    (nan, dwords)
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// An f64 compare of (lo, hi) register pairs, lowered from the predicate's truth table (rules::truth) as
    /// the f32 compares are: lanes regrouped into f64x2 vectors as in [`Self::f64_op`], two mask bits from each.
    pub(super) fn v_cmp_f64(&mut self, c: Compare, a: (Vv, Vv), x: (Vv, Vv)) -> Value {
        let cond = float_cond(rules::truth(c.pred));
        let (cc, and, not) = match cond {
            Ok(p) => p,
            Err(k) => return self.b.ins().iconst(types::I64, if k { -1 } else { 0 }),
        };
        let srcs = [a, x].map(|(l, h)| (self.mat(l), self.mat(h)));
        let b = &mut *self.b;
        let joins = f64x2_joins(b);
        let mut m = b.ins().iconst(types::I64, 0);
        for i in 0..CHUNKS {
            let [fs, gs] = srcs.map(|(l, h)| f64x2_pair(b, joins, l.c[i], h.c[i]));
            for (half, (f, g)) in fs.into_iter().zip(gs).enumerate() {
                let r = float_mask(b, (cc, and, not), f, g);
                let bits = b.ins().vhigh_bits(types::I64, r);
                let shift = 4 * i + 2 * half;
                let bits = if shift == 0 {
                    bits
                } else {
                    b.ins().ishl_imm(bits, shift as i64)
                };
                m = b.ins().bor(m, bits);
            }
        }
        m
    }

    /// An f64 operation on (lo, hi) register pairs: lanes regrouped into f64x2 vectors, `op` applied, results
    /// split back; a lane whose result is NaN gets the interpreter's NaN (first NaN source quieted) on a side
    /// path.
    pub(super) fn f64_op(
        &mut self,
        srcs: &[(Vv, Vv)],
        op: impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value,
    ) -> (Vv, Vv) {
        if let Some(r) = self.f64_loop(srcs, &op) {
            return r;
        }
        let srcs: Vec<(Vv, Vv)> = srcs.iter().map(|(l, h)| (self.mat(*l), self.mat(*h))).collect();
        let srcs = &srcs[..];
        let b = &mut *self.b;
        let shuffles = (f64x2_joins(b), f64x2_splits(b));
        let (mut lo, mut hi) = ([dummy(); CHUNKS], [dummy(); CHUNKS]);
        let mut any_nan = None;
        for i in 0..CHUNKS {
            let chunks: Vec<(Value, Value)> = srcs.iter().map(|(l, h)| (l.c[i], h.c[i])).collect();
            let (n, [l, h]) = f64_chunk(b, shuffles, &op, &chunks);
            any_nan = Some(match any_nan {
                None => n,
                Some(a) => b.ins().bor(a, n),
            });
            (lo[i], hi[i]) = (l, h);
        }
        let result = (
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
        );
        // NaN results: redo the lanes on the interpreter's rule through a call (rare)
        let any = b.ins().vany_true(any_nan.expect("chunks"));
        let (slow, done) = (b.create_block(), b.create_block());
        for _ in 0..2 * CHUNKS {
            b.append_block_param(done, I32X4);
        }
        let args: Vec<_> = result
            .0
            .c
            .iter()
            .chain(result.1.c.iter())
            .map(|x| (*x).into())
            .collect();
        b.ins().brif(any, slow, &[], done, &args);
        b.switch_to_block(slow);
        b.seal_block(slow);
        let ins: Vec<Vv> = srcs
            .iter()
            .flat_map(|(l, h)| [*l, *h])
            .chain([result.0, result.1])
            .collect();
        let fixed = self.call_v(
            Op::Nan64 {
                sources: srcs.len() as u8,
            },
            &ins,
            &[],
            2,
        );
        let b = &mut *self.b;
        let args: Vec<_> = fixed[0]
            .c
            .iter()
            .chain(fixed[1].c.iter())
            .map(|x| (*x).into())
            .collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        b.seal_block(done);
        let p = b.block_params(done).to_vec();
        (
            Vv {
                c: p[..CHUNKS].try_into().expect("16"),
                uniform: None,
                lazy: None,
            },
            Vv {
                c: p[CHUNKS..].try_into().expect("16"),
                uniform: None,
                lazy: None,
            },
        )
    }

    /// [`JitBackend::f64_op`] as a loop over the chunks into two of the context's tmp slots (the result's low and
    /// high dwords, returned as lazy vectors that read them): each pass computes one chunk of the sources and
    /// the result, so no chunk waits in a host register for the others. A NaN in any lane redoes the whole
    /// result on the interpreter's rule after the loop. `None` (nothing emitted that matters) when the sources
    /// cannot be read in a loop or the tmp slots run out.
    fn f64_loop(
        &mut self,
        srcs: &[(Vv, Vv)],
        op: &impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value,
    ) -> Option<(Vv, Vv)> {
        let tmps = self.tmps;
        let mut spill = Vec::new();
        for v in srcs.iter().flat_map(|(l, h)| [l, h]) {
            match self.loop_operands(v) {
                Some(s) => spill.extend(s),
                None => {
                    self.tmps = tmps;
                    return None;
                }
            }
        }
        if self.tmps + 2 > TMP {
            self.tmps = tmps;
            return None;
        }
        let out = self.tmps;
        self.tmps += 2;
        let ctx = self.ctx;
        let (head, off, flag) = {
            let b = &mut *self.b;
            let head = b.create_block();
            let off = b.append_block_param(head, types::I64);
            let flag = b.append_block_param(head, types::I8);
            let (zero, none) = (b.ins().iconst(types::I64, 0), b.ins().iconst(types::I8, 0));
            b.ins().jump(head, &[zero.into(), none.into()]);
            b.switch_to_block(head);
            (head, off, flag)
        };
        let chunks: Vec<(Value, Value)> = srcs
            .iter()
            .map(|(l, h)| (self.ch_at(l, off, &spill, true), self.ch_at(h, off, &spill, true)))
            .collect();
        let b = &mut *self.b;
        let shuffles = (f64x2_joins(b), f64x2_splits(b));
        let (n, result) = f64_chunk(b, shuffles, op, &chunks);
        let any = b.ins().vany_true(n);
        let flag = b.ins().bor(flag, any);
        let p = b.ins().iadd(ctx, off);
        for (d, x) in result.into_iter().enumerate() {
            b.ins().store(vflags(), x, p, Ctx::TMP + 256 * (out + d) as i32);
        }
        let next = b.ins().iadd_imm(off, 16);
        let more = b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 16 * CHUNKS as i64);
        let (after, slow, done) = (b.create_block(), b.create_block(), b.create_block());
        b.ins().brif(more, head, &[next.into(), flag.into()], after, &[]);
        b.seal_block(head);
        b.switch_to_block(after);
        b.seal_block(after);
        b.ins().brif(flag, slow, &[], done, &[]);
        b.switch_to_block(slow);
        b.seal_block(slow);
        // NaN results: the whole result again on the interpreter's rule (first NaN source quieted), through a call
        let mut slot_vv = |s: usize| {
            let at = Ctx::TMP + 256 * s as i32;
            let c: [Value; CHUNKS] = std::array::from_fn(|i| b.ins().load(I32X4, vflags(), ctx, at + 16 * i as i32));
            Vv {
                c,
                uniform: None,
                lazy: None,
            }
        };
        let result = [slot_vv(out), slot_vv(out + 1)];
        let mut ins: Vec<Vv> = srcs.iter().flat_map(|(l, h)| [self.mat(*l), self.mat(*h)]).collect();
        ins.extend(result);
        let fixed = self.call_v(
            Op::Nan64 {
                sources: srcs.len() as u8,
            },
            &ins,
            &[],
            2,
        );
        let b = &mut *self.b;
        for (d, v) in fixed.iter().enumerate() {
            for i in 0..CHUNKS {
                b.ins()
                    .store(vflags(), v.c[i], ctx, Ctx::TMP + (256 * (out + d) + 16 * i) as i32);
            }
        }
        b.ins().jump(done, &[]);
        b.switch_to_block(done);
        b.seal_block(done);
        Some((
            self.slot_vv(Ctx::TMP + 256 * out as i32),
            self.slot_vv(Ctx::TMP + 256 * (out + 1) as i32),
        ))
    }
}
