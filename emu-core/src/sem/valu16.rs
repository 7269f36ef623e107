//! The vector ALU on 16-bit values: f16 and 16-bit integer arithmetic (with VOP3 op_sel and SDWA operand
//! selects), conversions between f16 and f32 or 16-bit integers, packed f16 (VOP3P), the mixed-precision fmas
//! and v_pack_b32_f16, packed 16-bit integers (VOP3P). The per-lane work is a lane helper ([`crate::lanefn`]); [`shape_of`] says, per opcode,
//! which helper and how the operands feed it.

use isa_amdgpu::encoding::Field;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};
use crate::lanefn::{F16Op, I16Op, LaneFn};

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
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MixOut {
    F32,
    Lo,
    Hi,
}

/// How a 16-bit instruction's operands map onto its lane helper, by opcode.
fn shape_of(op: Opcode) -> Option<Shape> {
    use Opcode as O;
    use F16Op as H;
    use I16Op as I;
    let half = |f: LaneFn, n: usize| Shape::Half { f, n, mac: false, swap: false };
    let f16 = |op: F16Op, n: usize| half(LaneFn::F16(op), n);
    let i16 = |op: I16Op| half(LaneFn::I16(op), if op == I::Mad { 3 } else { 2 });
    let pk = |f: LaneFn, n: usize| Shape::Pk { f, n };
    Some(match op {
        O::VAddF16 => f16(H::Add, 2),
        O::VSubF16 => f16(H::Sub, 2),
        O::VSubrevF16 => Shape::Half { f: LaneFn::F16(H::Sub), n: 2, mac: false, swap: true },
        O::VMulF16 => f16(H::Mul, 2),
        O::VMinF16 => f16(H::Min, 2),
        O::VMaxF16 => f16(H::Max, 2),
        O::VLdexpF16 => f16(H::Ldexp, 2),
        O::VFmaF16 => f16(H::Fma, 3),
        O::VMadF16 | O::VMadLegacyF16 => f16(H::Mad, 3),
        O::VDivFixupF16 | O::VDivFixupLegacyF16 => f16(H::DivFixup, 3),
        O::VMacF16 => Shape::Half { f: LaneFn::F16(H::Mad), n: 3, mac: true, swap: false },
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
        O::VAddU16 => i16(I::Add),
        O::VSubU16 => i16(I::Sub),
        O::VSubrevU16 => Shape::Half { f: LaneFn::I16(I::Sub), n: 2, mac: false, swap: true },
        O::VMulLoU16 => i16(I::MulLo),
        O::VLshlrevB16 => i16(I::Lshlrev),
        O::VLshrrevB16 => i16(I::Lshrrev),
        O::VAshrrevI16 => i16(I::Ashrrev),
        O::VMaxU16 => i16(I::MaxU),
        O::VMaxI16 => i16(I::MaxI),
        O::VMinU16 => i16(I::MinU),
        O::VMinI16 => i16(I::MinI),
        O::VMadU16 | O::VMadLegacyU16 => i16(I::Mad),
        O::VMin3U16 => Shape::Three { lo: I::MinU, hi: I::MaxU, med: false, max: false },
        O::VMax3U16 => Shape::Three { lo: I::MinU, hi: I::MaxU, med: false, max: true },
        O::VMed3U16 => Shape::Three { lo: I::MinU, hi: I::MaxU, med: true, max: false },
        O::VMin3I16 => Shape::Three { lo: I::MinI, hi: I::MaxI, med: false, max: false },
        O::VMax3I16 => Shape::Three { lo: I::MinI, hi: I::MaxI, med: false, max: true },
        O::VMed3I16 => Shape::Three { lo: I::MinI, hi: I::MaxI, med: true, max: false },
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
        _ => return None,
    })
}

fn run<B: Backend>(b: &mut B, inst: &Inst, shape: Shape) -> Result<Flow<B::S>, ExecError> {
    no_output_mods(inst)?;
    match shape {
        Shape::Half { f, n, mac, swap } => {
            let mut args = Vec::with_capacity(3);
            for k in 0..n {
                let v = if mac && k == 2 { b.v_get(vdst(inst)) } else { src16(b, inst, k)? };
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
    }
    Ok(Flow::Next)
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
    if out == MixOut::F32 {
        let r = b.v_fma_f32(args[0], args[1], args[2]);
        b.v_set(d, r, m);
        return Ok(());
    }
    let r = b.v_lanefn(LaneFn::FmaF32ToF16, &args)[0];
    let old = b.v_get(d);
    let (keep, sh) = if out == MixOut::Lo { (0xffff_0000, 0) } else { (0xffff, 16) };
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
    let mut srcs = Vec::with_capacity(3);
    for field in [Field::Src0, Field::Src1, Field::Src2].into_iter().take(n) {
        srcs.push(raw_src(b, inst, field)?);
    }
    let (sh, sign) = (splat(b, 16), splat(b, 0x8000));
    let mut halves = Vec::with_capacity(2);
    for j in 0..2 {
        let (sel, neg) = if j == 0 { (opsel, neg_lo) } else { (opsel_hi, neg_hi) };
        let mut e = Vec::with_capacity(3);
        for (k, s) in srcs.iter().enumerate() {
            let v = if sel >> k & 1 == 1 { b.v_op(VOp::Lshr, *s, sh) } else { *s };
            e.push(if neg >> k & 1 == 1 { b.v_op(VOp::Xor, v, sign) } else { v });
        }
        halves.push(b.v_lanefn(f, &e)[0]);
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
