//! 64-bit vector operations (the semantics' `valu64`): integer adds and shifts, conversions between f32 and
//! f64, multiply-add of 32-bit operands into 64 bits, and the f64 operations through [`super::f64`].

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, Immediate, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::sem::{VCvt, VOp64, VUn64};

use crate::backend::f64::{f64x2_joins, f64x2_pair, f64x2_splits};
use crate::backend::ir::{dummy, little, zero_vec};
use crate::backend::types::{ChunkFn, JitBackend, Vv, CHUNKS, F32X4, I32X4};
use crate::call::Op;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// A 64-bit right shift (arithmetic with `arith`) of every lane by the same amount `s` (taken modulo 64), as
    /// 32-bit shifts of the halves, lazily.
    fn shr64_uniform(&mut self, (lo, hi): (Vv, Vv), s: Value, arith: bool) -> (Vv, Vv) {
        let (k, down, wide, none) = {
            let b = &mut *self.b;
            let t = b.ins().band_imm(s, 63);
            let k = b.ins().band_imm(t, 31);
            let down = b.ins().irsub_imm(k, 32);
            (
                k,
                down,
                b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, t, 32),
                b.ins().icmp_imm(IntCC::Equal, k, 0),
            )
        };
        let high = move |b: &mut FunctionBuilder<'f>, q: Value, by: Value| {
            if arith {
                b.ins().sshr(q, by)
            } else {
                b.ins().ushr(q, by)
            }
        };
        // t < 32: (lo >> k | hi << (32 - k), hi >> k); t >= 32: (hi >> k, the sign or zero)
        let rl = self.zip_chunks(lo, hi, move |b, p, q| {
            let low = b.ins().ushr(p, k);
            let zero = zero_vec(b);
            let carry = b.ins().ishl(q, down);
            let carry = b.ins().select(none, zero, carry);
            let low = b.ins().bor(low, carry);
            let h = high(b, q, k);
            b.ins().select(wide, h, low)
        });
        let rh = self.map_chunks(hi, move |b, q| {
            let h = high(b, q, k);
            let fill = if arith { b.ins().sshr_imm(q, 31) } else { zero_vec(b) };
            b.ins().select(wide, fill, h)
        });
        (rl, rh)
    }

    /// [`Backend::v_op64`](emu_core::sem::Backend::v_op64).
    pub(super) fn emit_v_op64(&mut self, op: VOp64, a: (Vv, Vv), x: (Vv, Vv)) -> (Vv, Vv) {
        if matches!(op, VOp64::AddF64 | VOp64::MulF64) {
            return self.f64_op(&[a, x], |b, v| {
                if op == VOp64::AddF64 {
                    b.ins().fadd(v[0], v[1])
                } else {
                    b.ins().fmul(v[0], v[1])
                }
            });
        }
        if op == VOp64::AddU64 {
            // the high half adds the low half's carry (an all-ones lane where the low sum wrapped: subtracted)
            let lo = self.zip_chunks(a.0, x.0, |b, p, q| b.ins().iadd(p, q));
            let hi = self.lazy_op(
                vec![a.0, x.0, a.1, x.1],
                std::rc::Rc::new(|b: &mut FunctionBuilder<'f>, v: &[Value]| {
                    let low = b.ins().iadd(v[0], v[1]);
                    let carry = b.ins().icmp(IntCC::UnsignedLessThan, low, v[0]);
                    let high = b.ins().iadd(v[2], v[3]);
                    b.ins().isub(high, carry)
                }),
                Vec::new(),
            );
            return (lo, hi);
        }
        if let (VOp64::Lshr | VOp64::Ashr, Some(s)) = (op, x.0.uniform) {
            return self.shr64_uniform(a, s, op == VOp64::Ashr);
        }
        let r = self.call_v(Op::VOp64 { op }, &[a.0, a.1, x.0, x.1], &[], 2);
        (r[0], r[1])
    }

    /// [`Backend::v_un64`](emu_core::sem::Backend::v_un64).
    pub(super) fn emit_v_un64(&mut self, op: VUn64, a: (Vv, Vv)) -> (Vv, Vv) {
        let r = self.call_v(Op::VUn64 { op }, &[a.0, a.1], &[], 2);
        (r[0], r[1])
    }

    /// [`Backend::v_fma_f64`](emu_core::sem::Backend::v_fma_f64).
    pub(super) fn emit_v_fma_f64(&mut self, a: (Vv, Vv), x: (Vv, Vv), c: (Vv, Vv)) -> (Vv, Vv) {
        self.f64_op(&[a, x, c], |b, v| b.ins().fma(v[0], v[1], v[2]))
    }

    /// [`Backend::v_cvt`](emu_core::sem::Backend::v_cvt).
    pub(super) fn emit_v_cvt(&mut self, op: VCvt, a: (Vv, Vv)) -> (Vv, Vv) {
        // between f32 and f64 inline, with the host's conversions (those the interpreter's `as` makes: round to
        // nearest even, a NaN quieted with its payload); the others on the interpreter
        if !matches!(op, VCvt::F64FromF32 | VCvt::F32FromF64) {
            let r = self.call_v(Op::Cvt { op }, &[a.0, a.1], &[], 2);
            return (r[0], r[1]);
        }
        let imm = |b: &mut FunctionBuilder<'f>, m: [u8; 16]| b.func.dfg.immediates.push(ConstantData::from(m.to_vec()));
        let b = &mut *self.b;
        if op == VCvt::F32FromF64 {
            // each f64x2 pair demoted into the low half of an f32x4; the two low halves joined
            let joins = f64x2_joins(b);
            let low_halves = imm(b, [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);
            let f: ChunkFn<'f> = std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| {
                let [p0, p1] = f64x2_pair(b, joins, v[0], v[1]);
                let (d0, d1) = (b.ins().fvdemote(p0), b.ins().fvdemote(p1));
                let (d0, d1) = (
                    b.ins().bitcast(types::I8X16, little(), d0),
                    b.ins().bitcast(types::I8X16, little(), d1),
                );
                let r = b.ins().shuffle(d0, d1, low_halves);
                b.ins().bitcast(I32X4, little(), r)
            });
            let r = self.lazy_op(vec![a.0, a.1], f, Vec::new());
            return (r, r);
        }
        // to f64: lanes 0 and 1, then lanes 2 and 3 moved down, promoted; the dwords split into low and high
        let upper = imm(b, [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]);
        let split_lo = imm(b, [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]);
        let split_hi = imm(b, [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]);
        let half = move |split: Immediate| -> ChunkFn<'f> {
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| {
                let x8 = b.ins().bitcast(types::I8X16, little(), v[0]);
                let up = b.ins().shuffle(x8, x8, upper);
                let wide = |b: &mut FunctionBuilder<'f>, x: Value| {
                    let x = b.ins().bitcast(F32X4, little(), x);
                    b.ins().fvpromote_low(x)
                };
                let (r0, r1) = (wide(b, x8), wide(b, up));
                let (r0, r1) = (
                    b.ins().bitcast(types::I8X16, little(), r0),
                    b.ins().bitcast(types::I8X16, little(), r1),
                );
                let r = b.ins().shuffle(r0, r1, split);
                b.ins().bitcast(I32X4, little(), r)
            })
        };
        let lo = self.lazy_op(vec![a.0], half(split_lo), Vec::new());
        let hi = self.lazy_op(vec![a.0], half(split_hi), Vec::new());
        (lo, hi)
    }

    /// [`Backend::v_mad_u64_u32`](emu_core::sem::Backend::v_mad_u64_u32).
    pub(super) fn emit_v_mad_u64_u32(&mut self, a: Vv, x: Vv, c: (Vv, Vv), signed: bool) -> ((Vv, Vv), Value) {
        // chunk by chunk, as two i64x2 halves: the 32-bit operands widened and multiplied (the product is exact
        // in 64 bits), the addend joined from its dwords and added; the carry (unsigned: out of bit 63) or the
        // overflow (signed: an i64 result with the wrong sign) is the sign bit of a bitwise expression
        // an addend of 0 (as LLVM writes a plain 32 x 32 -> 64 multiply) neither carries nor overflows
        let no_addend = [&c.0, &c.1]
            .into_iter()
            .all(|h| self.known(h).is_some_and(|l| l == [0; 64]));
        for v in [&a, &x, &c.0, &c.1] {
            self.park_in_place(v);
        }
        let (joins, splits) = {
            let b = &mut *self.b;
            (f64x2_joins(b), f64x2_splits(b))
        };
        let (mut lo, mut hi) = ([dummy(); CHUNKS], [dummy(); CHUNKS]);
        let mut mask = None;
        for i in 0..CHUNKS {
            let (ai, xi, cl, chi) = (self.ch(&a, i), self.ch(&x, i), self.ch(&c.0, i), self.ch(&c.1, i));
            let b = &mut *self.b;
            let (c8, h8) = (
                b.ins().bitcast(types::I8X16, little(), cl),
                b.ins().bitcast(types::I8X16, little(), chi),
            );
            let halves = [false, true].map(|high| {
                let widen = |b: &mut FunctionBuilder<'f>, v: Value| match (signed, high) {
                    (false, false) => b.ins().uwiden_low(v),
                    (false, true) => b.ins().uwiden_high(v),
                    (true, false) => b.ins().swiden_low(v),
                    (true, true) => b.ins().swiden_high(v),
                };
                let (p, q) = (widen(b, ai), widen(b, xi));
                let p = b.ins().imul(p, q);
                if no_addend {
                    return [p, p].map(|v| b.ins().bitcast(types::I8X16, little(), v));
                }
                let addend = b.ins().shuffle(c8, h8, joins[high as usize]);
                let addend = b.ins().bitcast(types::I64X2, little(), addend);
                let s = b.ins().iadd(p, addend);
                let flag = if signed {
                    // both terms of one sign, the sum of the other
                    let (ps, cs) = (b.ins().bxor(p, s), b.ins().bxor(addend, s));
                    b.ins().band(ps, cs)
                } else {
                    // a carry out of the top bit: both top bits set, or either set and the sum's clear
                    let both = b.ins().band(p, addend);
                    let either = b.ins().bor(p, addend);
                    let either = b.ins().band_not(either, s);
                    b.ins().bor(both, either)
                };
                [s, flag].map(|v| b.ins().bitcast(types::I8X16, little(), v))
            });
            let dwords = |b: &mut FunctionBuilder<'f>, k: usize, m: Immediate| {
                let v = b.ins().shuffle(halves[0][k], halves[1][k], m);
                b.ins().bitcast(I32X4, little(), v)
            };
            (lo[i], hi[i]) = (dwords(b, 0, splits[0]), dwords(b, 0, splits[1]));
            if no_addend {
                continue;
            }
            let flags = dwords(b, 1, splits[1]);
            let lanes = b.ins().sshr_imm(flags, 31);
            mask = Some(self.collapse_step(mask, lanes, i));
        }
        let mask = match mask {
            Some(m) => m,
            None => self.b.ins().iconst(types::I64, 0),
        };
        (
            (
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
            ),
            mask,
        )
    }

    /// [`Backend::v_shl64`](emu_core::sem::Backend::v_shl64).
    pub(super) fn emit_v_shl64(&mut self, lo: Vv, hi: Vv, amount: Vv) -> (Vv, Vv) {
        // a shift amount the same in every lane (the common case: an address scaled by a constant) inline,
        // as 32-bit shifts of the halves; per-lane amounts on the interpreter
        let Some(s) = amount.uniform else {
            let r = self.call_v(Op::Shl64 {}, &[lo, hi, amount], &[], 2);
            return (r[0], r[1]);
        };
        let (k, up, wide, none) = {
            let b = &mut *self.b;
            let t = b.ins().band_imm(s, 63);
            let k = b.ins().band_imm(t, 31);
            let up = b.ins().irsub_imm(k, 32);
            (
                k,
                up,
                b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, t, 32),
                b.ins().icmp_imm(IntCC::Equal, k, 0),
            )
        };
        // t < 32: (lo << k, hi << k | lo >> (32 - k)); t >= 32: (0, lo << k); lo >> 32 is nothing
        let rl = self.map_chunks(lo, move |b, p| {
            let a = b.ins().ishl(p, k);
            let zero = zero_vec(b);
            b.ins().select(wide, zero, a)
        });
        let rh = self.zip_chunks(lo, hi, move |b, p, q| {
            let a = b.ins().ishl(p, k);
            let h = b.ins().ishl(q, k);
            let zero = zero_vec(b);
            let carry = b.ins().ushr(p, up);
            let carry = b.ins().select(none, zero, carry);
            let h = b.ins().bor(h, carry);
            b.ins().select(wide, a, h)
        });
        (rl, rh)
    }
}
