//! Cross-lane operations (the semantics' `xlane`): lane reads, permutes through lanes known while
//! translating, and the lane ids.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, Value};

use emu_core::sem::Backend;

use crate::backend::ir::{dummy, little, vflags};
use crate::backend::types::{JitBackend, Lazy, Vv, CHUNKS, I32X4};
use crate::call::Op;

impl<'a, 'f> JitBackend<'a, 'f> {
    /// The lane permute of [`Backend::v_permute`] through source lanes known at compile time (`lanes`, taken
    /// modulo 64, as the DPP controls and the swizzles give them): each lane of `data` outside `m` made 0, then
    /// each chunk of the result gathered from the chunks its four lanes come from — one byte shuffle of two
    /// chunks, or lane by lane when they come from more.
    fn permute_known(&mut self, data: Vv, lanes: &[u32; 64], m: Value) -> Vv {
        self.park_in_place(&data);
        let data = self.mat(data);
        let on = self.expand(m);
        let b = &mut *self.b;
        let src: [Value; CHUNKS] = std::array::from_fn(|k| b.ins().band(data.c[k], on[k]));
        let mut c = [dummy(); CHUNKS];
        for (i, out) in c.iter_mut().enumerate() {
            let from: Vec<usize> = (0..4).map(|j| (lanes[4 * i + j] & 63) as usize).collect();
            let mut chunks: Vec<usize> = from.iter().map(|l| l / 4).collect();
            chunks.sort_unstable();
            chunks.dedup();
            if chunks.len() <= 2 {
                let (p, q) = (chunks[0], *chunks.last().expect("a chunk"));
                let bytes: Vec<u8> = from
                    .iter()
                    .flat_map(|l| {
                        let at = if l / 4 == p { 4 * (l % 4) } else { 16 + 4 * (l % 4) };
                        (0..4).map(move |k| (at + k) as u8)
                    })
                    .collect();
                let mask = b.func.dfg.immediates.push(ConstantData::from(bytes));
                let (x, y) = (
                    b.ins().bitcast(types::I8X16, little(), src[p]),
                    b.ins().bitcast(types::I8X16, little(), src[q]),
                );
                let r = b.ins().shuffle(x, y, mask);
                *out = b.ins().bitcast(I32X4, little(), r);
            } else {
                let first = b.ins().extractlane(src[from[0] / 4], (from[0] % 4) as u8);
                let mut r = b.ins().splat(I32X4, first);
                for (j, l) in from.iter().enumerate().skip(1) {
                    let x = b.ins().extractlane(src[l / 4], (l % 4) as u8);
                    r = b.ins().insertlane(r, x, j as u8);
                }
                *out = r;
            }
        }
        Vv {
            c,
            uniform: None,
            lazy: None,
        }
    }

    /// Lane `lane` (an `i64`, 0 to 63) of `v`, computing only the chunk that holds it; `None` where a loop over
    /// chunks could not compute `v` ([`Self::loop_operands`]).
    fn lane_at(&mut self, v: &Vv, lane: Value) -> Option<Value> {
        if let (None, Some(s)) = (v.lazy, v.uniform) {
            return Some(s);
        }
        let spill = self.loop_operands(v)?;
        let b = &mut *self.b;
        let chunk = b.ins().ushr_imm(lane, 2);
        let off = b.ins().ishl_imm(chunk, 4);
        let c = self.ch_at(v, off, &spill, true);
        let b = &mut *self.b;
        let j = b.ins().band_imm(lane, 3);
        let mut x = b.ins().extractlane(c, 0);
        for k in 1..4u8 {
            let y = b.ins().extractlane(c, k);
            let here = b.ins().icmp_imm(IntCC::Equal, j, k as i64);
            x = b.ins().select(here, y, x);
        }
        Some(x)
    }

    /// The first lane of chunk `off / 16` of `v`: loaded alone when `v` is a register, else from the chunk.
    pub(super) fn first_lane_at(&mut self, v: &Vv, off: Value, spill: &[(Value, usize)]) -> Value {
        if let Some(Lazy::Reg {
            field,
            reg,
            kept: None,
            loaded: None,
        }) = v.lazy.map(|k| &self.lazies[k as usize])
        {
            let base = self.reg_base(*field, *reg);
            let b = &mut *self.b;
            let p = b.ins().iadd(base, off);
            return b.ins().load(types::I32, vflags(), p, 0);
        }
        let a = self.ch_at(v, off, spill, true);
        self.b.ins().extractlane(a, 0)
    }

    /// [`Backend::v_lane_read`].
    pub(super) fn emit_v_lane_read(&mut self, v: Vv, lane: Value) -> Value {
        let b = &mut *self.b;
        let at = b.ins().uextend(types::I64, lane);
        let at = b.ins().band_imm(at, 63);
        if let Some(x) = self.lane_at(&v, at) {
            return x;
        }
        self.call(Op::LaneRead {}, &[v], &[lane], &[], 0, 1, 0, false).1[0]
    }

    /// [`Backend::v_first_lane`].
    pub(super) fn emit_v_first_lane(&mut self, v: Vv, m: Value) -> Value {
        // the first lane of the mask, lane 0 when it is empty
        let b = &mut *self.b;
        let first = b.ins().ctz(m);
        let none = b.ins().icmp_imm(IntCC::Equal, m, 0);
        let zero = b.ins().iconst(types::I64, 0);
        let at = b.ins().select(none, zero, first);
        if let Some(x) = self.lane_at(&v, at) {
            return x;
        }
        self.call(Op::FirstLane {}, &[v], &[], &[m], 0, 1, 0, false).1[0]
    }

    /// [`Backend::v_permute`].
    pub(super) fn emit_v_permute(&mut self, data: Vv, index: Vv, m: Value) -> Vv {
        let known = self.known(&index);
        match known {
            Some(lanes) => self.permute_known(data, &lanes, m),
            None => {
                self.park_in_place(&data);
                self.call_v(Op::Permute {}, &[data, index], &[m], 1)[0]
            }
        }
    }

    /// [`Backend::v_permute_forward`].
    pub(super) fn emit_v_permute_forward(&mut self, data: Vv, index: Vv, m: Value) -> Vv {
        self.call_v(Op::PermuteForward {}, &[data, index], &[m], 1)[0]
    }

    /// [`Backend::v_lane_ids`].
    pub(super) fn emit_v_lane_ids(&mut self) -> Vv {
        let ids: [u32; 64] = std::array::from_fn(|i| i as u32);
        self.v_const(&ids)
    }
}
