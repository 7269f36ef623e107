//! Per-lane helper functions ([`emu_core::lanefn`]): v_perm_b32 with a uniform selector and the f32 division
//! steps inline, the others through the interpreter.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::lanefn::LaneFn;
use emu_core::rules;

use crate::backend::ir::{dummy, join_vectors, jump_with, little, Chunks};
use crate::backend::types::{JitBackend, Vv, CHUNKS, F32X4, I32X4};
use crate::call::Op;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// An f32 division step (v_div_scale, v_div_fmas, v_div_fixup: [`LaneFn`]) inline where every lane is a
    /// plain case, else the interpreter's implementation through a call. Plain: for div_scale and div_fixup the
    /// cases [`emu_core::lanefn::div_scale_f32_unscaled`] and [`emu_core::lanefn::div_fixup_f32_plain`] define
    /// (the operand unchanged, VCC clear; the quotient with the division's sign); for div_fmas VCC clear and no
    /// NaN among the operands and the result, where it is the fused multiply-add, rounded once.
    fn div_step_f32(&mut self, f: LaneFn, args: &[Vv]) -> Vec<Vv> {
        let outs = f.outputs();
        let args: Vec<Vv> = args.iter().map(|a| self.mat(*a)).collect();
        let mut fast = vec![[dummy(); CHUNKS]; outs];
        let mut all: Option<Value> = None;
        for i in 0..CHUNKS {
            let x: Vec<Value> = args.iter().map(|a| self.ch(a, i)).collect();
            let b = &mut *self.b;
            let mut al = Chunks(b);
            let ok = match f {
                LaneFn::DivScaleF32 => {
                    fast[0][i] = x[0];
                    fast[1][i] = rules::LaneAlgebra::constant(&mut al, 0);
                    emu_core::lanefn::div_scale_f32_unscaled(&mut al, x[1], x[2])
                }
                LaneFn::DivFixupF32 => {
                    fast[0][i] = emu_core::lanefn::div_fixup_f32_signed(&mut al, x[0], x[1], x[2]);
                    emu_core::lanefn::div_fixup_f32_plain(&mut al, x[0], x[1], x[2])
                }
                _ => {
                    let fl: Vec<Value> = x[..3].iter().map(|&v| al.0.ins().bitcast(F32X4, little(), v)).collect();
                    let r = al.0.ins().fma(fl[0], fl[1], fl[2]);
                    let r = al.0.ins().bitcast(I32X4, little(), r);
                    fast[0][i] = r;
                    // VCC (bit 0 of the fourth operand) clear, and nothing NaN
                    let one = rules::LaneAlgebra::constant(&mut al, 1);
                    let vcc = al.0.ins().band(x[3], one);
                    let zero = rules::LaneAlgebra::constant(&mut al, 0);
                    let mut ok = al.0.ins().icmp(IntCC::Equal, vcc, zero);
                    for v in [x[0], x[1], x[2], r] {
                        let n = rules::is_nan32(&mut al, v);
                        ok = al.0.ins().band_not(ok, n);
                    }
                    ok
                }
            };
            all = Some(match all {
                Some(a) => b.ins().band(a, ok),
                None => ok,
            });
        }
        let fast: Vec<Vv> = fast
            .into_iter()
            .map(|c| Vv {
                c,
                uniform: None,
                lazy: None,
            })
            .collect();
        let join = {
            let b = &mut *self.b;
            let all = b.ins().vall_true(all.expect("chunks"));
            let (fast_blk, slow, join) = (b.create_block(), b.create_block(), b.create_block());
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            b.ins().brif(all, fast_blk, &[], slow, &[]);
            b.switch_to_block(fast_blk);
            b.seal_block(fast_blk);
            jump_with(b, join, &fast);
            b.switch_to_block(slow);
            b.seal_block(slow);
            join
        };
        let r = self.call_v(Op::LaneFn { f }, &args, &[], outs);
        let b = &mut *self.b;
        jump_with(b, join, &r);
        join_vectors(b, join)
    }

    /// v_perm_b32 with one selector `sel` for every lane, lazily: byte shuffles of each chunk of `a` (the high
    /// dword), `b` and their bytes' sign masks, the shuffle indices worked out once from `sel`'s bytes (0-7 a byte
    /// of {a, b}, 8-11 the sign of byte 1 or 3 of b or a, 12 zero, 13 and up 0xff); an index of 16 or more
    /// shuffles in zero.
    fn perm_uniform(&mut self, a: Vv, x: Vv, sel: Value) -> Vv {
        let [idx_b, idx_a, idx_sb, idx_sa, ones] = {
            let b = &mut *self.b;
            let splat8 = |b: &mut FunctionBuilder<'f>, v: i64| {
                let c = b.ins().iconst(types::I8, v);
                b.ins().splat(types::I8X16, c)
            };
            let lanes = b
                .func
                .dfg
                .constants
                .insert(ConstantData::from((0..16u8).map(|i| i & !3).collect::<Vec<u8>>()));
            let base = b.ins().vconst(types::I8X16, lanes);
            let s = b.ins().splat(I32X4, sel);
            let s = b.ins().bitcast(types::I8X16, little(), s);
            let none = splat8(b, 0x80);
            // a byte index into the chunk where `cond` holds: `base` (the lane's first byte) + `at`
            let pick = |b: &mut FunctionBuilder<'f>, cond: Value, at: Value, other: Value| {
                let i = b.ins().iadd(base, at);
                b.ins().bitselect(cond, i, other)
            };
            let four = splat8(b, 4);
            let low = b.ins().icmp(IntCC::UnsignedLessThan, s, four);
            let idx_b = pick(b, low, s, none);
            let s4 = b.ins().isub(s, four);
            let high = b.ins().icmp(IntCC::UnsignedLessThan, s4, four);
            let idx_a = pick(b, high, s4, none);
            let sign = |b: &mut FunctionBuilder<'f>, first: i64| {
                let (one, three) = (splat8(b, 1), splat8(b, 3));
                let (e1, e3) = (splat8(b, first), splat8(b, first + 1));
                let is1 = b.ins().icmp(IntCC::Equal, s, e1);
                let is3 = b.ins().icmp(IntCC::Equal, s, e3);
                let other = pick(b, is3, three, none);
                pick(b, is1, one, other)
            };
            let idx_sb = sign(b, 8);
            let idx_sa = sign(b, 10);
            let thirteen = splat8(b, 13);
            let ones = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, s, thirteen);
            [idx_b, idx_a, idx_sb, idx_sa, ones]
        };
        self.lazy_op(
            vec![a, x],
            std::rc::Rc::new(move |b: &mut FunctionBuilder<'f>, v: &[Value]| {
                let hi = b.ins().bitcast(types::I8X16, little(), v[0]);
                let lo = b.ins().bitcast(types::I8X16, little(), v[1]);
                let z = b.ins().iconst(types::I8, 0);
                let z = b.ins().splat(types::I8X16, z);
                let sign_lo = b.ins().icmp(IntCC::SignedLessThan, lo, z);
                let sign_hi = b.ins().icmp(IntCC::SignedLessThan, hi, z);
                let mut r = b.ins().swizzle(lo, idx_b);
                for (src, idx) in [(hi, idx_a), (sign_lo, idx_sb), (sign_hi, idx_sa)] {
                    let part = b.ins().swizzle(src, idx);
                    r = b.ins().bor(r, part);
                }
                let r = b.ins().bor(r, ones);
                b.ins().bitcast(I32X4, little(), r)
            }),
            Vec::new(),
        )
    }

    /// [`Backend::v_lanefn`](emu_core::sem::Backend::v_lanefn).
    pub(super) fn emit_v_lanefn(&mut self, f: LaneFn, args: &[Vv]) -> Vec<Vv> {
        if let (LaneFn::Word(emu_core::lanefn::WordOp::Perm), [a, x, sel]) = (f, args) {
            if let Some(sel) = sel.uniform {
                return vec![self.perm_uniform(*a, *x, sel)];
            }
        }
        if matches!(f, LaneFn::DivScaleF32 | LaneFn::DivFmasF32 | LaneFn::DivFixupF32) {
            return self.div_step_f32(f, args);
        }
        self.call_v(Op::LaneFn { f }, args, &[], f.outputs())
    }

    /// [`Backend::s_lanefn`](emu_core::sem::Backend::s_lanefn).
    pub(super) fn emit_s_lanefn(&mut self, f: LaneFn, args: &[Value]) -> Vec<Value> {
        self.call(Op::SLaneFn { f }, &[], args, &[], 0, f.outputs(), 0, false).1
    }
}
