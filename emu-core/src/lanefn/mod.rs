//! Per-lane helper functions: the operations too intricate to spell out in backend primitives (IEEE division
//! steps, 16-bit float and integer arithmetic, f64 rounding and classification, the 2/pi table of
//! `v_trig_preop_f64`). Each is a pure function of a lane's 32-bit inputs; the interpreter calls it for every
//! lane, and the JIT calls the same function, so there is one definition of each.
//!
//! Inputs and outputs are 32-bit register values: a 64-bit operand is two inputs (low, high), a 16-bit
//! operand is the low half of one input, a flag (VCC bit) is 0 or 1.
//!
//! [`LaneFn`] names each function and evaluates it (here); the functions themselves are grouped by kind:
//! 32-bit word and bit operations ([`word`]), 16-bit floats and integers ([`f16`](mod@f16)), float helpers the
//! others and the interpreter share ([`float`]), the IEEE division steps ([`division`]), `v_trig_preop_f64`
//! ([`trig`]), the scalar and vector ALU operation tables ([`salu`], [`valu`]) and gfx942's 8-bit floats
//! ([`fp8`]).

mod division;
mod f16;
pub(crate) mod float;
mod fp8;
mod salu;
#[cfg(test)]
mod tests;
mod trig;
mod valu;
mod word;

use crate::rules::{max_num64 as max_num, min_num64 as min_num};
use division::{
    div_fixup_f32, div_fixup_f64, div_fmas_f32, div_fmas_f64, div_scale_f32, div_scale_f64, round_to_odd_sum,
};
pub use division::{div_fixup_f32_plain, div_fixup_f32_signed, div_scale_f32_unscaled};
use f16::{f16_op, i16_op};
pub use f16::{f16_to_f64, f32_to_f16_rtz, f64_to_f16, norm16, F16Op, I16Op};
use float::{fract_f64, frexp_f64};
pub use fp8::f32_to_f8;
pub use salu::SaluOp;
use trig::trig_preop;
pub use valu::ValuOp;
pub use word::{BitOp, WordOp};

/// A per-lane helper function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneFn {
    /// (value, denominator, numerator) -> (scaled value, VCC bit): the pre-scaling step of IEEE division.
    DivScaleF32,
    /// (a, b, c, VCC bit) -> fma(a, b, c), scaled back by 2^±64 when VCC is set.
    DivFmasF32,
    /// (quotient, denominator, numerator) -> the quotient with special cases (0, inf, NaN) fixed up.
    DivFixupF32,
    /// 64-bit forms of the three above; each f64 operand is two inputs, the f64 result two outputs.
    DivScaleF64,
    DivFmasF64,
    DivFixupF64,
    /// (x lo, x hi, segment) -> 53 bits of 2/pi for Payne-Hanek reduction of x.
    TrigPreopF64,
    /// Unary f64 operations: x -> f(x).
    F64Un(Unary64),
    /// f64 min/max (IEEE minNum/maxNum: a NaN operand yields the other).
    MinF64,
    MaxF64,
    /// f16 operations on the low halves of the inputs; results are zero-extended to 32 bits.
    F16(F16Op),
    /// f16 -> f32 (exact).
    F16ToF32,
    /// (a, b, c) f32 -> fma rounded once to f16 (v_fma_mixlo/hi_f16).
    FmaF32ToF16,
    /// 32-bit operations of up to three sources.
    Word(WordOp),
    /// Bit counting and field extraction (scalar and vector).
    Bits(BitOp),
    /// 16-bit integer operations, results zero-extended.
    I16(I16Op),
    /// Scalar ALU bit and integer operations (bit counts, bit sets, masks, packs, sign extensions).
    Salu(SaluOp),
    /// Vector ALU operations of up to three 32-bit sources: sums of absolute differences, dot products,
    /// packing conversions, cube map coordinates, legacy multiplies.
    Valu(ValuOp),
    /// Four sums of absolute differences of the reference S1 against the byte windows of the 64-bit S0 that
    /// start at bytes 0..3, each plus its accumulator of S2 (v_qsad_pk_u16_u8, v_mqsad_pk_u16_u8,
    /// v_mqsad_u32_u8): inputs S0 (lo, hi), S1, then S2 (two registers of four 16-bit accumulators, or with
    /// `wide` four 32-bit ones); outputs the four results packed the same way. `masked` skips the bytes whose
    /// reference byte is 0 (v_msad_u8). 16-bit results keep their low 16 bits.
    QuadSad {
        masked: bool,
        wide: bool,
    },
}

/// Unary f64 operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary64 {
    Rsq,
    Rndne,
    Ceil,
    Fract,
    FrexpMant,
    /// The frexp exponent, a 32-bit integer (one output).
    FrexpExp,
}

impl LaneFn {
    /// Number of 32-bit inputs.
    pub fn inputs(self) -> usize {
        use LaneFn::*;
        match self {
            DivScaleF32 | DivFixupF32 => 3,
            DivFmasF32 => 4,
            DivScaleF64 | DivFixupF64 => 6,
            DivFmasF64 => 7,
            TrigPreopF64 => 3,
            F64Un(_) => 2,
            MinF64 | MaxF64 => 4,
            F16(op) => match op {
                F16Op::Fma | F16Op::Mad | F16Op::DivFixup | F16Op::Min3 | F16Op::Max3 | F16Op::Med3 => 3,
                F16Op::Add | F16Op::Sub | F16Op::Mul | F16Op::Min | F16Op::Max | F16Op::Ldexp => 2,
                _ => 1,
            },
            FmaF32ToF16 => 3,
            Word(op) => op.arity(),
            Bits(op) => op.arity(),
            Salu(op) => op.arity(),
            Valu(op) => op.arity(),
            F16ToF32 => 1,
            I16(op) => match op {
                I16Op::Mad | I16Op::MadSatI | I16Op::MadSatU => 3,
                _ => 2,
            },
            QuadSad { wide, .. } => {
                if wide {
                    7
                } else {
                    5
                }
            }
        }
    }

    /// Number of 32-bit outputs.
    pub fn outputs(self) -> usize {
        use LaneFn::*;
        match self {
            DivScaleF32 => 2,
            DivScaleF64 => 3,
            DivFmasF64 | DivFixupF64 | TrigPreopF64 | MinF64 | MaxF64 | Bits(BitOp::Bfe64 { .. }) => 2,
            F64Un(Unary64::FrexpExp) => 1,
            Salu(op) => op.outputs(),
            F64Un(_) => 2,
            QuadSad { wide, .. } => {
                if wide {
                    4
                } else {
                    2
                }
            }
            _ => 1,
        }
    }

    /// Evaluates the function on one lane.
    pub fn eval(self, x: &[u32], out: &mut [u32]) {
        use LaneFn::*;
        let f = f32::from_bits;
        let d = |lo: u32, hi: u32| f64::from_bits((hi as u64) << 32 | lo as u64);
        let put64 = |out: &mut [u32], v: f64| {
            out[0] = v.to_bits() as u32;
            out[1] = (v.to_bits() >> 32) as u32;
        };
        match self {
            DivScaleF32 => {
                let (v, vcc) = div_scale_f32(f(x[0]), f(x[1]), f(x[2]));
                out[0] = v.to_bits();
                out[1] = vcc as u32;
            }
            DivFmasF32 => out[0] = div_fmas_f32(f(x[0]), f(x[1]), f(x[2]), x[3] & 1 == 1).to_bits(),
            DivFixupF32 => out[0] = div_fixup_f32(f(x[0]), f(x[1]), f(x[2])).to_bits(),
            DivScaleF64 => {
                let (v, vcc) = div_scale_f64(d(x[0], x[1]), d(x[2], x[3]), d(x[4], x[5]));
                put64(out, v);
                out[2] = vcc as u32;
            }
            DivFmasF64 => put64(
                out,
                div_fmas_f64(d(x[0], x[1]), d(x[2], x[3]), d(x[4], x[5]), x[6] & 1 == 1),
            ),
            DivFixupF64 => put64(out, div_fixup_f64(d(x[0], x[1]), d(x[2], x[3]), d(x[4], x[5]))),
            TrigPreopF64 => put64(out, trig_preop(d(x[0], x[1]), x[2])),
            F64Un(op) => {
                let v = d(x[0], x[1]);
                match op {
                    Unary64::Rsq => put64(out, 1.0 / v.sqrt()),
                    Unary64::Rndne => put64(out, v.round_ties_even()),
                    Unary64::Ceil => put64(out, v.ceil()),
                    Unary64::Fract => put64(out, fract_f64(v)),
                    Unary64::FrexpMant => put64(out, frexp_f64(v).0),
                    Unary64::FrexpExp => out[0] = frexp_f64(v).1 as u32,
                }
            }
            MinF64 => put64(out, min_num(d(x[0], x[1]), d(x[2], x[3]))),
            MaxF64 => put64(out, max_num(d(x[0], x[1]), d(x[2], x[3]))),
            Word(op) => out[0] = op.eval(x),
            Bits(op) => op.eval(x, out),
            FmaF32ToF16 => {
                // the product is exact in f64; rounding the sum to odd keeps the rounding to f16 single
                let (p, c) = (f(x[0]) as f64 * f(x[1]) as f64, f(x[2]) as f64);
                out[0] = f64_to_f16(round_to_odd_sum(p, c)) as u32;
            }
            F16(op) => out[0] = f16_op(op, x) as u32,
            F16ToF32 => out[0] = (f16_to_f64(x[0] as u16) as f32).to_bits(),
            I16(op) => out[0] = i16_op(op, x) as u32,
            Salu(op) => op.eval(x, out),
            Valu(op) => out[0] = op.eval(x),
            QuadSad { masked, wide } => {
                let src = (x[1] as u64) << 32 | x[0] as u64;
                let sad = if masked { ValuOp::MsadU8 } else { ValuOp::SadU8 };
                let r: [u32; 4] = std::array::from_fn(|n| {
                    let window = (src >> (8 * n)) as u32;
                    let acc = if wide {
                        x[3 + n]
                    } else {
                        x[3 + n / 2] >> (16 * (n % 2)) & 0xffff
                    };
                    sad.eval(&[window, x[2], acc])
                });
                if wide {
                    out.copy_from_slice(&r);
                } else {
                    out[0] = r[0] & 0xffff | r[1] << 16;
                    out[1] = r[2] & 0xffff | r[3] << 16;
                }
            }
        }
    }
}
