//! The vector ALU on 16-bit values: f16 and 16-bit integer arithmetic (with VOP3 op_sel and SDWA operand
//! selects), conversions between f16 and f32 or 16-bit integers, packed f16 (VOP3P), the mixed-precision fmas
//! and v_pack_b32_f16, packed 16-bit integers (VOP3P). The per-lane work is a lane helper ([`crate::lanefn`]); [`shape_of`] says, per opcode,
//! which helper and how the operands feed it.

use isa_amdgpu::encoding::Field;
use isa_amdgpu::table::DataType;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};
use crate::lanefn::{F16Op, I16Op, LaneFn, ValuOp};

/// Executes a 16-bit VALU instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    match shape_of(inst.info.opcode) {
        Some(shape) => run(b, inst, shape),
        None => Err(unsupported(inst)),
    }
}

/// How an instruction's operands map onto a lane helper.
#[derive(Clone, Copy)]
enum Shape {
    /// 16-bit sources (1, 2 or 3) -> 16-bit result; `mac` reads the destination as the third source.
    Half { f: LaneFn, n: usize, mac: bool, swap: bool },
    /// f32 source -> f16 result (v_cvt_f16_f32).
    HalfFromF32,
    /// f16 source -> f32 result (v_cvt_f32_f16).
    F32FromHalf,
    /// Two f16 halves -> one register (v_pack_b32_f16).
    Pack,
    /// Mixed-precision fma (VOP3P): f32 result, or f16 into the low/high half.
    FmaMix { out: MixOut },
    /// Packed 16-bit (VOP3P): two halves per register, each through the lane helper `f` of `n` sources.
    Pk { f: LaneFn, n: usize },
    /// The minimum or maximum of three 16-bit integers (`lo`/`hi`: the two-source min and max of the type),
    /// or with `med` their median.
    Three { lo: I16Op, hi: I16Op, med: bool, max: bool },
    /// 16-bit integer sources (2 or 3; `swap`: the first two exchanged) -> `f`, or with VOP3 clamp `sat` (the
    /// saturating form).
    HalfSat { f: I16Op, sat: I16Op, swap: bool },
    /// f16 multiply-add (rounded twice, as v_mad_f16) with the instruction's 16-bit literal K: src0 * K + vsrc1
    /// (`k_mul`, v_madmk_f16) or src0 * vsrc1 + K (v_madak_f16).
    MadK { k_mul: bool },
    /// Packed f16 fused multiply-add into the destination (VOP2 v_pk_fmac_f16): both halves of src0 and vsrc1.
    PkMac,
    /// v_dot2_f32_f16 (VOP3P): two f16 products summed into the f32 src2.
    Dot2,
    /// v_dot2c_f32_f16 (VOP2/VOP3): the same into the destination.
    Dot2c,
    /// Two sources (f32, or with `half` f16 halves) as normalized 16-bit integers packed into one register.
    PkNorm { signed: bool, half: bool },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MixOut {
    F32,
    Lo,
    Hi,
}

/// How a 16-bit instruction's operands map onto its lane helper, by opcode.
fn shape_of(op: Opcode) -> Option<Shape> {
    use F16Op as H;
    use I16Op as I;
    use Opcode as O;
    let half = |f: LaneFn, n: usize| Shape::Half {
        f,
        n,
        mac: false,
        swap: false,
    };
    let f16 = |op: F16Op, n: usize| half(LaneFn::F16(op), n);
    let i16 = |op: I16Op| half(LaneFn::I16(op), if op == I::Mad { 3 } else { 2 });
    let pk = |f: LaneFn, n: usize| Shape::Pk { f, n };
    Some(match op {
        O::VAddF16 => f16(H::Add, 2),
        O::VSubF16 => f16(H::Sub, 2),
        O::VSubrevF16 => Shape::Half {
            f: LaneFn::F16(H::Sub),
            n: 2,
            mac: false,
            swap: true,
        },
        O::VMulF16 => f16(H::Mul, 2),
        O::VMinF16 => f16(H::Min, 2),
        O::VMaxF16 => f16(H::Max, 2),
        O::VLdexpF16 => f16(H::Ldexp, 2),
        O::VFmaF16 => f16(H::Fma, 3),
        O::VMadF16 | O::VMadLegacyF16 => f16(H::Mad, 3),
        O::VDivFixupF16 | O::VDivFixupLegacyF16 => f16(H::DivFixup, 3),
        O::VMacF16 => Shape::Half {
            f: LaneFn::F16(H::Mad),
            n: 3,
            mac: true,
            swap: false,
        },
        O::VCvtF16U16 => f16(H::FromU16, 1),
        O::VCvtF16I16 => f16(H::FromI16, 1),
        O::VCvtU16F16 => f16(H::ToU16, 1),
        O::VCvtI16F16 => f16(H::ToI16, 1),
        O::VRcpF16 => f16(H::Rcp, 1),
        O::VSqrtF16 => f16(H::Sqrt, 1),
        O::VRsqF16 => f16(H::Rsq, 1),
        O::VExpF16 => f16(H::Exp, 1),
        O::VLogF16 => f16(H::Log, 1),
        O::VFloorF16 => f16(H::Floor, 1),
        O::VCeilF16 => f16(H::Ceil, 1),
        O::VTruncF16 => f16(H::Trunc, 1),
        O::VRndneF16 => f16(H::Rndne, 1),
        O::VFractF16 => f16(H::Fract, 1),
        O::VFrexpMantF16 => f16(H::FrexpMant, 1),
        O::VFrexpExpI16F16 => f16(H::FrexpExp, 1),
        O::VSinF16 => f16(H::Sin, 1),
        O::VCosF16 => f16(H::Cos, 1),
        O::VAddU16 => Shape::HalfSat {
            f: I::Add,
            sat: I::AddSatU,
            swap: false,
        },
        O::VSubU16 => Shape::HalfSat {
            f: I::Sub,
            sat: I::SubSatU,
            swap: false,
        },
        O::VSubrevU16 => Shape::HalfSat {
            f: I::Sub,
            sat: I::SubSatU,
            swap: true,
        },
        O::VMulLoU16 => i16(I::MulLo),
        O::VLshlrevB16 => i16(I::Lshlrev),
        O::VLshrrevB16 => i16(I::Lshrrev),
        O::VAshrrevI16 => i16(I::Ashrrev),
        O::VMaxU16 => i16(I::MaxU),
        O::VMaxI16 => i16(I::MaxI),
        O::VMinU16 => i16(I::MinU),
        O::VMinI16 => i16(I::MinI),
        O::VMadU16 | O::VMadLegacyU16 => Shape::HalfSat {
            f: I::Mad,
            sat: I::MadSatU,
            swap: false,
        },
        O::VMin3U16 => Shape::Three {
            lo: I::MinU,
            hi: I::MaxU,
            med: false,
            max: false,
        },
        O::VMax3U16 => Shape::Three {
            lo: I::MinU,
            hi: I::MaxU,
            med: false,
            max: true,
        },
        O::VMed3U16 => Shape::Three {
            lo: I::MinU,
            hi: I::MaxU,
            med: true,
            max: false,
        },
        O::VMin3I16 => Shape::Three {
            lo: I::MinI,
            hi: I::MaxI,
            med: false,
            max: false,
        },
        O::VMax3I16 => Shape::Three {
            lo: I::MinI,
            hi: I::MaxI,
            med: false,
            max: true,
        },
        O::VMed3I16 => Shape::Three {
            lo: I::MinI,
            hi: I::MaxI,
            med: true,
            max: false,
        },
        O::VCvtF16F32 => Shape::HalfFromF32,
        O::VCvtF32F16 => Shape::F32FromHalf,
        O::VPackB32F16 => Shape::Pack,
        O::VFmaMixF32 => Shape::FmaMix { out: MixOut::F32 },
        O::VFmaMixloF16 => Shape::FmaMix { out: MixOut::Lo },
        O::VFmaMixhiF16 => Shape::FmaMix { out: MixOut::Hi },
        O::VPkFmaF16 => pk(LaneFn::F16(H::Fma), 3),
        O::VPkAddF16 => pk(LaneFn::F16(H::Add), 2),
        O::VPkMulF16 => pk(LaneFn::F16(H::Mul), 2),
        O::VPkMinF16 => pk(LaneFn::F16(H::Min), 2),
        O::VPkMaxF16 => pk(LaneFn::F16(H::Max), 2),
        // packed 16-bit integers: modular per half (the signed and unsigned sums and differences agree
        // without clamp)
        O::VPkAddU16 | O::VPkAddI16 => pk(LaneFn::I16(I::Add), 2),
        O::VPkSubU16 | O::VPkSubI16 => pk(LaneFn::I16(I::Sub), 2),
        O::VPkMulLoU16 => pk(LaneFn::I16(I::MulLo), 2),
        O::VPkLshlrevB16 => pk(LaneFn::I16(I::Lshlrev), 2),
        O::VPkLshrrevB16 => pk(LaneFn::I16(I::Lshrrev), 2),
        O::VPkAshrrevI16 => pk(LaneFn::I16(I::Ashrrev), 2),
        O::VPkMaxU16 => pk(LaneFn::I16(I::MaxU), 2),
        O::VPkMaxI16 => pk(LaneFn::I16(I::MaxI), 2),
        O::VPkMinU16 => pk(LaneFn::I16(I::MinU), 2),
        O::VPkMinI16 => pk(LaneFn::I16(I::MinI), 2),
        O::VPkMadU16 | O::VPkMadI16 => pk(LaneFn::I16(I::Mad), 3),
        O::VAddI16 => Shape::HalfSat {
            f: I::Add,
            sat: I::AddSatI,
            swap: false,
        },
        O::VSubI16 => Shape::HalfSat {
            f: I::Sub,
            sat: I::SubSatI,
            swap: false,
        },
        O::VMadI16 | O::VMadLegacyI16 => Shape::HalfSat {
            f: I::Mad,
            sat: I::MadSatI,
            swap: false,
        },
        O::VMin3F16 => f16(H::Min3, 3),
        O::VMax3F16 => f16(H::Max3, 3),
        O::VMed3F16 => f16(H::Med3, 3),
        O::VFmaLegacyF16 => f16(H::Fma, 3),
        O::VCvtNormI16F16 => f16(H::NormI16, 1),
        O::VCvtNormU16F16 => f16(H::NormU16, 1),
        O::VMadmkF16 => Shape::MadK { k_mul: true },
        O::VMadakF16 => Shape::MadK { k_mul: false },
        O::VPkFmacF16 => Shape::PkMac,
        O::VDot2F32F16 => Shape::Dot2,
        O::VDot2cF32F16 => Shape::Dot2c,
        O::VCvtPknormI16F32 => Shape::PkNorm {
            signed: true,
            half: false,
        },
        O::VCvtPknormU16F32 => Shape::PkNorm {
            signed: false,
            half: false,
        },
        O::VCvtPknormI16F16 => Shape::PkNorm {
            signed: true,
            half: true,
        },
        O::VCvtPknormU16F16 => Shape::PkNorm {
            signed: false,
            half: true,
        },
        _ => return None,
    })
}

fn run<B: Backend>(b: &mut B, inst: &Inst, shape: Shape) -> Result<Flow<B::S>, ExecError> {
    match shape {
        // clamp is the instruction's own: saturation, the f32 clamp of the dot product, or VOP3P's clamp of
        // each packed or mixed-precision result (`packed`, `fma_mix`)
        Shape::HalfSat { .. } | Shape::Dot2 | Shape::Pk { .. } | Shape::FmaMix { .. } => {}
        _ => no_output_mods(inst)?,
    }
    match shape {
        Shape::Half { f, n, mac, swap } => {
            let mut args = Vec::with_capacity(3);
            for k in 0..n {
                let v = if mac && k == 2 {
                    b.v_get(vdst(inst))
                } else {
                    src16(b, inst, k)?
                };
                args.push(v);
            }
            if swap {
                args.swap(0, 1);
            }
            let r = b.v_lanefn(f, &args);
            write16(b, inst, r[0]);
        }
        Shape::HalfFromF32 => {
            let a = src(b, inst, 0)?;
            let r = b.v_lanefn(LaneFn::F16(F16Op::FromF32), &[a]);
            write16(b, inst, r[0]);
        }
        Shape::F32FromHalf => {
            let a = src16(b, inst, 0)?;
            let r = b.v_lanefn(LaneFn::F16ToF32, &[a]);
            let m = b.exec();
            b.v_set(vdst(inst), r[0], m);
        }
        Shape::Pack => {
            let (x, y) = (src16(b, inst, 0)?, src16(b, inst, 1)?);
            let (lo16, sh) = (splat(b, 0xffff), splat(b, 16));
            let x = b.v_op(VOp::And, x, lo16);
            let y = b.v_op(VOp::Shl, y, sh);
            let v = b.v_op(VOp::Or, x, y);
            let m = b.exec();
            b.v_set(vdst(inst), v, m);
        }
        Shape::FmaMix { out } => fma_mix(b, inst, out)?,
        Shape::Pk { f, n } => packed(b, inst, f, n)?,
        Shape::Three { lo, hi, med, max } => {
            let (x, y, z) = (src16(b, inst, 0)?, src16(b, inst, 1)?, src16(b, inst, 2)?);
            let mut two = |op: I16Op, a: B::V, c: B::V| b.v_lanefn(LaneFn::I16(op), &[a, c])[0];
            let r = if med {
                // max(min(x, y), min(max(x, y), z))
                let (small, big) = (two(lo, x, y), two(hi, x, y));
                let m = two(lo, big, z);
                two(hi, small, m)
            } else {
                let op = if max { hi } else { lo };
                let xy = two(op, x, y);
                two(op, xy, z)
            };
            write16(b, inst, r);
        }
        Shape::HalfSat { f, sat, swap } => {
            let op = if inst.field(Field::Clamp) == 1 { sat } else { f };
            let f = LaneFn::I16(op);
            let mut args = Vec::with_capacity(3);
            for k in 0..f.inputs() {
                args.push(src16(b, inst, k)?);
            }
            if swap {
                args.swap(0, 1);
            }
            let r = b.v_lanefn(f, &args);
            write16(b, inst, r[0]);
        }
        Shape::MadK { k_mul } => {
            let a = src16(b, inst, 0)?;
            let c = b.v_get(inst.field(Field::Vsrc1));
            // the literal's low 16 bits are the f16 constant
            let k = splat(b, inst.literal().unwrap_or(0) & 0xffff);
            let args = if k_mul { [a, k, c] } else { [a, c, k] };
            let r = b.v_lanefn(LaneFn::F16(F16Op::Mad), &args);
            write16(b, inst, r[0]);
        }
        Shape::PkMac => {
            // an inline constant is its f16 value in both halves: LLVM folds a constant into a packed operand
            // only where both halves are equal
            let a = match inst.field(Field::Src0) {
                v @ 240..=248 => {
                    let h = isa_amdgpu::constants::inline_float(v, isa_amdgpu::constants::FloatWidth::F16).unwrap_or(0)
                        as u32;
                    splat(b, h & 0xffff | h << 16)
                }
                _ => vec_src(b, inst, Field::Src0)?,
            };
            let (c, d) = (b.v_get(inst.field(Field::Vsrc1)), b.v_get(vdst(inst)));
            let sh = splat(b, 16);
            let mut halves = Vec::with_capacity(2);
            for j in 0..2 {
                let [x, y, z] = [a, c, d].map(|v| if j == 1 { b.v_op(VOp::Lshr, v, sh) } else { v });
                halves.push(b.v_lanefn(LaneFn::F16(F16Op::Fma), &[x, y, z])[0]);
            }
            let hi = b.v_op(VOp::Shl, halves[1], sh);
            let v = b.v_op(VOp::Or, halves[0], hi);
            let m = b.exec();
            b.v_set(vdst(inst), v, m);
        }
        Shape::Dot2 => dot2(b, inst)?,
        Shape::Dot2c => {
            let (x, y) = (src(b, inst, 0)?, src(b, inst, 1)?);
            let acc = b.v_get(vdst(inst));
            let r = b.v_lanefn(LaneFn::Valu(ValuOp::Dot2F32F16), &[x, y, acc]);
            let m = b.exec();
            b.v_set(vdst(inst), r[0], m);
        }
        Shape::PkNorm { signed, half } => {
            if inst.encoding() == isa_amdgpu::Encoding::Vop3 && inst.field(Field::OpSel) >> 3 & 1 == 1 {
                return Err(form(inst, "op_sel on the destination of a 32-bit result"));
            }
            let (x, y) = if half {
                (src16(b, inst, 0)?, src16(b, inst, 1)?)
            } else {
                (src(b, inst, 0)?, src(b, inst, 1)?)
            };
            let r = b.v_lanefn(LaneFn::Valu(ValuOp::CvtPkNorm { signed, half }), &[x, y]);
            let m = b.exec();
            b.v_set(vdst(inst), r[0], m);
        }
    }
    Ok(Flow::Next)
}

/// v_dot2_f32_f16: element j (0 low, 1 high) of src0 and src1 is the half op_sel[k] (j = 0) or op_sel_hi[k]
/// (j = 1) selects, negated by neg_lo[k] / neg_hi[k]; src2 is an f32, which neg_lo[2] negates (neg_hi[2], which
/// has no element to negate, is refused); clamp clamps the f32 result to [0, 1].
fn dot2<B: Backend>(b: &mut B, inst: &Inst) -> Result<(), ExecError> {
    let opsel = inst.field(Field::OpSel);
    let opsel_hi = inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2;
    let (neg_lo, neg_hi) = (inst.field(Field::Neg), inst.field(Field::NegHi));
    let (sh, lo16, sign) = (splat(b, 16), splat(b, 0xffff), splat(b, 0x8000));
    let mut packed = Vec::with_capacity(2);
    for (k, field) in [Field::Src0, Field::Src1].into_iter().enumerate() {
        let s = packed_src(b, inst, field)?;
        let mut e = Vec::with_capacity(2);
        for (sel, neg) in [(opsel, neg_lo), (opsel_hi, neg_hi)] {
            let v = if sel >> k & 1 == 1 { b.v_op(VOp::Lshr, s, sh) } else { s };
            let v = b.v_op(VOp::And, v, lo16);
            e.push(if neg >> k & 1 == 1 {
                b.v_op(VOp::Xor, v, sign)
            } else {
                v
            });
        }
        let hi = b.v_op(VOp::Shl, e[1], sh);
        packed.push(b.v_op(VOp::Or, e[0], hi));
    }
    if neg_hi >> 2 & 1 == 1 {
        return Err(form(inst, "neg_hi on the f32 accumulator"));
    }
    let mut c = raw_src(b, inst, Field::Src2)?;
    if neg_lo >> 2 & 1 == 1 {
        let m = splat(b, 0x8000_0000);
        c = b.v_op(VOp::Xor, c, m);
    }
    let mut r = b.v_lanefn(LaneFn::Valu(ValuOp::Dot2F32F16), &[packed[0], packed[1], c])[0];
    if inst.field(Field::Clamp) == 1 {
        let (zero, one) = (splat(b, 0), splat(b, 0x3f80_0000));
        r = b.v_op(VOp::MaxF32, r, zero);
        r = b.v_op(VOp::MinF32, r, one);
    }
    let m = b.exec();
    b.v_set(vdst(inst), r, m);
    Ok(())
}

/// v_fma_mix*: op_sel_hi[k] says source k is f16 (its half chosen by op_sel[k]) rather than f32; neg_lo
/// negates and neg_hi takes the absolute value of source k. The f32 fma is rounded once to f32 or to f16.
fn fma_mix<B: Backend>(b: &mut B, inst: &Inst, out: MixOut) -> Result<(), ExecError> {
    let opsel = inst.field(Field::OpSel);
    let opsel_hi = inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2;
    let (neg, abs) = (inst.field(Field::Neg), inst.field(Field::NegHi));
    let mut args = Vec::with_capacity(3);
    for (k, field) in [Field::Src0, Field::Src1, Field::Src2].into_iter().enumerate() {
        let mut v = raw_src(b, inst, field)?;
        if opsel_hi >> k & 1 == 1 {
            if opsel >> k & 1 == 1 {
                let sh = splat(b, 16);
                v = b.v_op(VOp::Lshr, v, sh);
            }
            v = b.v_lanefn(LaneFn::F16ToF32, &[v])[0];
        }
        if abs >> k & 1 == 1 {
            let m = splat(b, 0x7fff_ffff);
            v = b.v_op(VOp::And, v, m);
        }
        if neg >> k & 1 == 1 {
            let m = splat(b, 0x8000_0000);
            v = b.v_op(VOp::Xor, v, m);
        }
        args.push(v);
    }
    let d = vdst(inst);
    let m = b.exec();
    // clamp: the f32 or f16 result to [0, 1]
    let clamp = inst.field(Field::Clamp) == 1;
    if out == MixOut::F32 {
        let r = b.v_fma_f32(args[0], args[1], args[2]);
        let r = if clamp {
            clamp_unit(b, DataType::F32, &[r])[0]
        } else {
            r
        };
        b.v_set(d, r, m);
        return Ok(());
    }
    let r = b.v_lanefn(LaneFn::FmaF32ToF16, &args)[0];
    let r = if clamp {
        clamp_unit(b, DataType::F16, &[r])[0]
    } else {
        r
    };
    let old = b.v_get(d);
    let (keep, sh) = if out == MixOut::Lo {
        (0xffff_0000, 0)
    } else {
        (0xffff, 16)
    };
    let keep = splat(b, keep);
    let old = b.v_op(VOp::And, old, keep);
    let sh = splat(b, sh);
    let r = b.v_op(VOp::Shl, r, sh);
    let v = b.v_op(VOp::Or, old, r);
    b.v_set(d, v, m);
    Ok(())
}

/// Packed 16-bit: element j (0 = low half, 1 = high half) of source k is the half op_sel[k] (j = 0) or
/// op_sel_hi[k] (j = 1) selects; for f16, neg_lo / neg_hi negate per element (integer forms have no neg).
fn packed<B: Backend>(b: &mut B, inst: &Inst, f: LaneFn, n: usize) -> Result<(), ExecError> {
    let opsel = inst.field(Field::OpSel);
    let opsel_hi = inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2;
    let (neg_lo, neg_hi) = (inst.field(Field::Neg), inst.field(Field::NegHi));
    if !matches!(f, LaneFn::F16(_)) && (neg_lo | neg_hi) != 0 {
        return Err(form(inst, "neg modifiers on packed integers"));
    }
    // clamp: each f16 element to [0, 1]; the integer sums, differences and multiply-adds saturate
    let clamp = inst.field(Field::Clamp) == 1;
    let f = match (clamp, f, inst.info.opcode) {
        (false, ..) | (true, LaneFn::F16(_), _) => f,
        (true, _, Opcode::VPkAddU16) => LaneFn::I16(I16Op::AddSatU),
        (true, _, Opcode::VPkAddI16) => LaneFn::I16(I16Op::AddSatI),
        (true, _, Opcode::VPkSubU16) => LaneFn::I16(I16Op::SubSatU),
        (true, _, Opcode::VPkSubI16) => LaneFn::I16(I16Op::SubSatI),
        (true, _, Opcode::VPkMadU16) => LaneFn::I16(I16Op::MadSatU),
        (true, _, Opcode::VPkMadI16) => LaneFn::I16(I16Op::MadSatI),
        (true, ..) => {
            return Err(form(
                inst,
                "clamp on a packed operation that neither saturates nor gives floats",
            ))
        }
    };
    let mut srcs = Vec::with_capacity(3);
    for field in [Field::Src0, Field::Src1, Field::Src2].into_iter().take(n) {
        srcs.push(packed_src(b, inst, field)?);
    }
    let (sh, sign) = (splat(b, 16), splat(b, 0x8000));
    let mut halves = Vec::with_capacity(2);
    for j in 0..2 {
        let (sel, neg) = if j == 0 { (opsel, neg_lo) } else { (opsel_hi, neg_hi) };
        let mut e = Vec::with_capacity(3);
        for (k, s) in srcs.iter().enumerate() {
            let v = if sel >> k & 1 == 1 {
                b.v_op(VOp::Lshr, *s, sh)
            } else {
                *s
            };
            e.push(if neg >> k & 1 == 1 {
                b.v_op(VOp::Xor, v, sign)
            } else {
                v
            });
        }
        let h = b.v_lanefn(f, &e)[0];
        halves.push(if clamp && matches!(f, LaneFn::F16(_)) {
            clamp_unit(b, DataType::F16, &[h])[0]
        } else {
            h
        });
    }
    let hi = b.v_op(VOp::Shl, halves[1], sh);
    let v = b.v_op(VOp::Or, halves[0], hi);
    let m = b.exec();
    b.v_set(vdst(inst), v, m);
    Ok(())
}

/// Whether `op` is a packed 16-bit integer operation (the table names its operands b32).
pub(super) fn packed_integer(op: Opcode) -> bool {
    matches!(shape_of(op), Some(Shape::Pk { f: LaneFn::I16(_), .. }))
}
