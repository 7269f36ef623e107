//! 32-bit vector operations (the semantics' `valu32`): integer and f32 arithmetic as lazy chunk-wise
//! operations, adds and subtracts with carries, selects, constants, and the NaN rule on f32 results.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::rules;
use emu_core::sem::{Backend, VOp, VUn};

use crate::backend::ir::{dummy, little, zero_vec, Chunks};
use crate::backend::lazy::all_uniform;
use crate::backend::types::{ChunkFn, JitBackend, Lazy, Vv, CHUNKS, F32X4, I32X4};
use crate::call::Op;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// An add or subtract of `a` and `x` with a carry (borrow) lane mask in and out: the mask out chunk by chunk
    /// (`carries` of a chunk of each, and of the mask in's lanes, all ones where set), the result lazy, computed
    /// again where it is written (`result` of the chunks of a, x and, with a mask in, its lanes).
    fn carry_op(
        &mut self,
        a: Vv,
        x: Vv,
        carry_in: Option<Value>,
        carries: impl Fn(&mut FunctionBuilder<'f>, Value, Value, Option<Value>) -> Value,
        result: impl Fn(&mut FunctionBuilder<'f>, &[Value]) -> Value + 'static,
    ) -> (Vv, Value) {
        self.park_in_place(&a);
        self.park_in_place(&x);
        let cin = carry_in.map(|m| self.lanes_of_mask(m));
        let uniform = all_uniform([&a, &x].into_iter().chain(cin.as_ref()));
        let mut out = None;
        if self.carry_dead {
            let b = &mut *self.b;
            out = Some(b.ins().iconst(types::I64, 0));
        }
        for i in (0..CHUNKS).take(if self.carry_dead { 0 } else { CHUNKS }) {
            let (ai, xi) = (self.ch(&a, i), self.ch(&x, i));
            let mi = cin.map(|m| self.ch(&m, i));
            let c = carries(&mut *self.b, ai, xi, mi);
            if uniform {
                out = Some(self.uniform_mask(c));
                break;
            }
            out = Some(self.collapse_step(out, c, i));
        }
        let args = std::iter::once(a).chain([x]).chain(cin).collect();
        (
            self.lazy_op(args, std::rc::Rc::new(result), Vec::new()),
            out.expect("chunks"),
        )
    }

    pub(super) fn to_f(b: &mut FunctionBuilder<'f>, v: Value) -> Value {
        b.ins().bitcast(F32X4, little(), v)
    }

    pub(super) fn to_i(b: &mut FunctionBuilder<'f>, v: Value) -> Value {
        b.ins().bitcast(I32X4, little(), v)
    }

    fn fbin(&mut self, a: Vv, x: Vv, op: impl Fn(&mut FunctionBuilder<'f>, Value, Value) -> Value + 'static) -> Vv {
        let r = self.zip_chunks(a, x, move |b, p, q| {
            let (fp, fq) = (Self::to_f(b, p), Self::to_f(b, q));
            let r = op(b, fp, fq);
            Self::to_i(b, r)
        });
        self.nan_fixup(r, &[a, x])
    }

    /// Applies the NaN propagation rule ([`rules::propagate_nan32`] over `srcs` in order) to the lanes of `r` —
    /// on a side path taken only when some lane of `r` is NaN, so ordinary arithmetic pays one compare.
    fn nan_fixup(&mut self, r: Vv, srcs: &[Vv]) -> Vv {
        if r.lazy.is_none() && all_uniform(std::iter::once(&r).chain(srcs)) {
            return self.uniform_result(r.c[0], srcs);
        }
        // a lazy result carries the rule with it: a write checks its chunks, other consumers apply it per chunk
        if let Some(Lazy::Expr { args, f, nan }) = r.lazy.map(|k| &self.lazies[k as usize]) {
            if nan.is_empty() {
                let (args, f) = (args.clone(), f.clone());
                return self.lazy_op(args, f, srcs.to_vec());
            }
        }
        let r = self.mat(r);
        let b = &mut *self.b;
        let mut any = None;
        for c in r.c {
            let f = Self::to_f(b, c);
            let m = b.ins().fcmp(FloatCC::Unordered, f, f);
            any = Some(match any {
                None => m,
                Some(a) => b.ins().bor(a, m),
            });
        }
        let any = b.ins().vany_true(any.expect("16 chunks"));
        let (slow, done) = (b.create_block(), b.create_block());
        for _ in 0..CHUNKS {
            b.append_block_param(done, I32X4);
        }
        let args: Vec<_> = r.c.iter().map(|x| (*x).into()).collect();
        b.ins().brif(any, slow, &[], done, &args);
        b.switch_to_block(slow);
        b.seal_block(slow);
        let mut fixed = [dummy(); CHUNKS];
        for i in 0..CHUNKS {
            let chunk: Vec<Value> = srcs.iter().map(|s| self.ch(s, i)).collect();
            let b = &mut *self.b;
            fixed[i] = rules::propagate_nan32(&mut Chunks(b), &chunk, r.c[i]);
        }
        let b = &mut *self.b;
        let args: Vec<_> = fixed.iter().map(|x| (*x).into()).collect();
        b.ins().jump(done, &args);
        b.switch_to_block(done);
        b.seal_block(done);
        let mut c = [dummy(); CHUNKS];
        c.copy_from_slice(b.block_params(done));
        Vv {
            c,
            uniform: None,
            lazy: None,
        }
    }

    /// [`Backend::v_splat`].
    pub(super) fn emit_v_splat(&mut self, s: Value) -> Vv {
        let b = &mut *self.b;
        let v = b.ins().splat(I32X4, s);
        Vv {
            c: [v; CHUNKS],
            uniform: Some(s),
            lazy: None,
        }
    }

    /// [`Backend::v_op`].
    pub(super) fn emit_v_op(&mut self, op: VOp, a: Vv, x: Vv) -> Vv {
        // lanes known while translating (the lane constants of v_mbcnt, and what is computed from them) give
        // known lanes, computed here by the interpreter's rule
        if let (Some(p), Some(q)) = (self.known(&a), self.known(&x)) {
            return self.folded(&emu_core::interp::v_op_lanes(op, &p, &q));
        }
        // integer operations of two wave-uniform values are one scalar operation, and stay uniform (so a shift
        // by a computed amount, as in v_bfe, keeps its scalar amount)
        if let (Some(p), Some(q)) = (a.uniform, x.uniform) {
            let scalar = |b: &mut FunctionBuilder<'_>| -> Option<Value> {
                Some(match op {
                    VOp::AddU32 => b.ins().iadd(p, q),
                    VOp::SubU32 => b.ins().isub(p, q),
                    VOp::MulLoU32 => b.ins().imul(p, q),
                    VOp::MulHiU32 => b.ins().umulhi(p, q),
                    VOp::MulHiI32 => b.ins().smulhi(p, q),
                    VOp::MinU32 => b.ins().umin(p, q),
                    VOp::MaxU32 => b.ins().umax(p, q),
                    VOp::MinI32 => b.ins().smin(p, q),
                    VOp::MaxI32 => b.ins().smax(p, q),
                    VOp::And => b.ins().band(p, q),
                    VOp::Or => b.ins().bor(p, q),
                    VOp::Xor => b.ins().bxor(p, q),
                    // scalar shifts take the amount modulo 32, as the instruction does
                    VOp::Shl => b.ins().ishl(p, q),
                    VOp::Lshr => b.ins().ushr(p, q),
                    VOp::Ashr => b.ins().sshr(p, q),
                    _ => return None,
                })
            };
            if let Some(r) = scalar(&mut *self.b) {
                return self.v_splat(r);
            }
        }
        match op {
            VOp::AddU32 => self.zip_chunks(a, x, |b, p, q| b.ins().iadd(p, q)),
            VOp::SubU32 => self.zip_chunks(a, x, |b, p, q| b.ins().isub(p, q)),
            VOp::MulLoU32 => self.zip_chunks(a, x, |b, p, q| b.ins().imul(p, q)),
            VOp::MinU32 => self.zip_chunks(a, x, |b, p, q| b.ins().umin(p, q)),
            VOp::MaxU32 => self.zip_chunks(a, x, |b, p, q| b.ins().umax(p, q)),
            VOp::MinI32 => self.zip_chunks(a, x, |b, p, q| b.ins().smin(p, q)),
            VOp::MaxI32 => self.zip_chunks(a, x, |b, p, q| b.ins().smax(p, q)),
            VOp::And => self.zip_chunks(a, x, |b, p, q| b.ins().band(p, q)),
            VOp::Or => self.zip_chunks(a, x, |b, p, q| b.ins().bor(p, q)),
            VOp::Xor => self.zip_chunks(a, x, |b, p, q| b.ins().bxor(p, q)),
            VOp::Shl | VOp::Lshr | VOp::Ashr => match x.uniform {
                // vector shifts take one scalar amount (masked to 0..31 like the instruction)
                Some(amount) => self.map_chunks(a, move |b, p| match op {
                    VOp::Shl => b.ins().ishl(p, amount),
                    VOp::Lshr => b.ins().ushr(p, amount),
                    _ => b.ins().sshr(p, amount),
                }),
                None => self.call_v(Op::VOp { op }, &[a, x], &[], 1)[0],
            },
            VOp::AddF32 => self.fbin(a, x, |b, p, q| b.ins().fadd(p, q)),
            VOp::SubF32 => self.fbin(a, x, |b, p, q| b.ins().fsub(p, q)),
            VOp::MulF32 => self.fbin(a, x, |b, p, q| b.ins().fmul(p, q)),
            VOp::MinF32 => self.zip_chunks(a, x, |b, p, q| rules::min_num32(&mut Chunks(b), p, q)),
            VOp::MaxF32 => self.zip_chunks(a, x, |b, p, q| rules::max_num32(&mut Chunks(b), p, q)),
            VOp::MulHiU32 | VOp::MulHiI32 => {
                self.park_in_place(&a);
                self.park_in_place(&x);
                let (a, x) = (self.mat(a), self.mat(x));
                let b = &mut *self.b;
                // lanes widened to 64 bits in two i64x2 halves, multiplied, and the high words gathered
                let odd_words = b.func.dfg.immediates.push(ConstantData::from(vec![
                    4u8, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31,
                ]));
                let signed = op == VOp::MulHiI32;
                let mut c = [dummy(); CHUNKS];
                for i in 0..CHUNKS {
                    let (p, q) = (a.c[i], x.c[i]);
                    let widen = |b: &mut FunctionBuilder<'_>, v: Value, high: bool| match (signed, high) {
                        (false, false) => b.ins().uwiden_low(v),
                        (false, true) => b.ins().uwiden_high(v),
                        (true, false) => b.ins().swiden_low(v),
                        (true, true) => b.ins().swiden_high(v),
                    };
                    let (pl, ql, ph, qh) = (
                        widen(b, p, false),
                        widen(b, q, false),
                        widen(b, p, true),
                        widen(b, q, true),
                    );
                    let lo = b.ins().imul(pl, ql);
                    let hi = b.ins().imul(ph, qh);
                    let (lo8, hi8) = (
                        b.ins().bitcast(types::I8X16, little(), lo),
                        b.ins().bitcast(types::I8X16, little(), hi),
                    );
                    let words = b.ins().shuffle(lo8, hi8, odd_words);
                    c[i] = b.ins().bitcast(I32X4, little(), words);
                }
                Vv {
                    c,
                    uniform: None,
                    lazy: None,
                }
            }
            VOp::MulU32U24 => self.zip_chunks(a, x, |b, p, q| {
                let m = b.ins().iconst(types::I32, 0xff_ffff);
                let m = b.ins().splat(I32X4, m);
                let (p, q) = (b.ins().band(p, m), b.ins().band(q, m));
                b.ins().imul(p, q)
            }),
            VOp::MulI32I24 => self.zip_chunks(a, x, |b, p, q| {
                // sign-extend the low 24 bits; the low word of the product is the same at any width
                let eight = b.ins().iconst(types::I32, 8);
                let (p, q) = (b.ins().ishl(p, eight), b.ins().ishl(q, eight));
                let (p, q) = (b.ins().sshr(p, eight), b.ins().sshr(q, eight));
                b.ins().imul(p, q)
            }),
            VOp::LdexpF32 => self.call_v(Op::VOp { op }, &[a, x], &[], 1)[0],
        }
    }

    /// [`Backend::v_fma_f32`].
    pub(super) fn emit_v_fma_f32(&mut self, a: Vv, x: Vv, c: Vv) -> Vv {
        let f: ChunkFn<'f> = std::rc::Rc::new(|b: &mut FunctionBuilder<'f>, v: &[Value]| {
            let (p, q, r) = (Self::to_f(b, v[0]), Self::to_f(b, v[1]), Self::to_f(b, v[2]));
            let f = b.ins().fma(p, q, r);
            Self::to_i(b, f)
        });
        self.lazy_op(vec![a, x, c], f, vec![a, x, c])
    }

    /// [`Backend::v_add_carry`].
    pub(super) fn emit_v_add_carry(&mut self, a: Vv, x: Vv, carry_in: Option<Value>) -> (Vv, Value) {
        // the carry-in lane mask is all ones (-1) where set: subtracting it adds 1
        self.carry_op(
            a,
            x,
            carry_in,
            |b, p, q, m| {
                let s = b.ins().iadd(p, q);
                let c = b.ins().icmp(IntCC::UnsignedLessThan, s, p);
                let Some(m) = m else { return c };
                let s2 = b.ins().isub(s, m);
                let c2 = b.ins().icmp(IntCC::UnsignedLessThan, s2, s);
                b.ins().bor(c, c2)
            },
            |b, v| {
                let s = b.ins().iadd(v[0], v[1]);
                if v.len() == 2 {
                    s
                } else {
                    b.ins().isub(s, v[2])
                }
            },
        )
    }

    /// [`Backend::v_sub_borrow`].
    pub(super) fn emit_v_sub_borrow(&mut self, a: Vv, x: Vv, borrow_in: Option<Value>) -> (Vv, Value) {
        // d + m subtracts 1 where the borrow-in mask is set; it borrows when d was 0 there
        self.carry_op(
            a,
            x,
            borrow_in,
            |b, p, q, m| {
                let w = b.ins().icmp(IntCC::UnsignedLessThan, p, q);
                let Some(m) = m else { return w };
                let d = b.ins().isub(p, q);
                let zero = zero_vec(b);
                let d_zero = b.ins().icmp(IntCC::Equal, d, zero);
                let w2 = b.ins().band(d_zero, m);
                b.ins().bor(w, w2)
            },
            |b, v| {
                let d = b.ins().isub(v[0], v[1]);
                if v.len() == 2 {
                    d
                } else {
                    b.ins().iadd(d, v[2])
                }
            },
        )
    }

    /// [`Backend::v_un`].
    pub(super) fn emit_v_un(&mut self, op: VUn, a: Vv) -> Vv {
        if let Some(p) = self.known(&a) {
            return self.folded(&emu_core::interp::v_un_lanes(op, &p));
        }
        match op {
            VUn::Not => self.map_chunks(a, |b, p| b.ins().bnot(p)),
            // the bytes' counts, then each lane's four summed (at most 32: the low byte holds it)
            VUn::Bcnt => self.map_chunks(a, |b, p| {
                let bytes = b.ins().bitcast(types::I8X16, little(), p);
                let counts = b.ins().popcnt(bytes);
                let q = b.ins().bitcast(I32X4, little(), counts);
                let by8 = b.ins().ushr_imm(q, 8);
                let q = b.ins().iadd(q, by8);
                let by16 = b.ins().ushr_imm(q, 16);
                let q = b.ins().iadd(q, by16);
                let low = b.ins().iconst(types::I32, 0x3f);
                let low = b.ins().splat(I32X4, low);
                b.ins().band(q, low)
            }),
            VUn::CvtF32U32 => self.map_chunks(a, |b, p| {
                let f = b.ins().fcvt_from_uint(F32X4, p);
                Self::to_i(b, f)
            }),
            VUn::CvtF32I32 => self.map_chunks(a, |b, p| {
                let f = b.ins().fcvt_from_sint(F32X4, p);
                Self::to_i(b, f)
            }),
            VUn::CvtU32F32 => self.map_chunks(a, |b, p| {
                let f = Self::to_f(b, p);
                b.ins().fcvt_to_uint_sat(I32X4, f)
            }),
            VUn::CvtI32F32 => self.map_chunks(a, |b, p| {
                let f = Self::to_f(b, p);
                b.ins().fcvt_to_sint_sat(I32X4, f)
            }),
            VUn::TruncF32 | VUn::FloorF32 | VUn::CeilF32 | VUn::RndneF32 | VUn::SqrtF32 | VUn::RcpF32 => {
                let r = self.map_chunks(a, move |b, p| {
                    let f = Self::to_f(b, p);
                    let r = match op {
                        VUn::TruncF32 => b.ins().trunc(f),
                        VUn::FloorF32 => b.ins().floor(f),
                        VUn::CeilF32 => b.ins().ceil(f),
                        VUn::RndneF32 => b.ins().nearest(f),
                        VUn::SqrtF32 => b.ins().sqrt(f),
                        _ => {
                            let one = b.ins().f32const(1.0);
                            let one = b.ins().splat(F32X4, one);
                            b.ins().fdiv(one, f)
                        }
                    };
                    Self::to_i(b, r)
                });
                // a NaN input gives itself quieted, whatever the host's SIMD unit returns
                self.nan_fixup(r, &[a])
            }
            _ => self.call_v(Op::VUn { op }, &[a], &[], 1)[0],
        }
    }

    /// [`Backend::v_select`].
    pub(super) fn emit_v_select(&mut self, m: Value, a: Vv, x: Vv) -> Vv {
        let lanes = self.lanes_of_mask(m);
        self.lazy_op(
            vec![lanes, a, x],
            std::rc::Rc::new(|b, v| b.ins().bitselect(v[0], v[2], v[1])),
            Vec::new(),
        )
    }

    /// [`Backend::v_const`].
    pub(super) fn emit_v_const(&mut self, values: &[u32; 64]) -> Vv {
        let b = &mut *self.b;
        let mut c = [dummy(); CHUNKS];
        for (i, x) in c.iter_mut().enumerate() {
            let bytes: Vec<u8> = values[4 * i..4 * i + 4].iter().flat_map(|v| v.to_le_bytes()).collect();
            let k = b.func.dfg.constants.insert(ConstantData::from(bytes));
            *x = b.ins().vconst(I32X4, k);
        }
        self.consts.push((c, *values));
        Vv {
            c,
            uniform: None,
            lazy: None,
        }
    }
}
