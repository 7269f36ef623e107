//! The vector ALU on 64-bit lanes (register pairs): f64 arithmetic, fma, conversions, rounding, min/max,
//! frexp, the IEEE f64 division steps and v_trig_preop, 64-bit shifts and the 64-bit multiply-add.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{unsupported, ExecError, Flow};
use crate::lanefn::{LaneFn, Unary64};

/// Executes a 64-bit VALU instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::VLshlrevB64 => {
            no_modifiers(inst)?;
            let amount = vec_src(b, inst, Field::Src0)?;
            let (lo, hi) = vec_src64(b, inst, Field::Src1)?;
            let (rl, rh) = b.v_shl64(lo, hi, amount);
            let m = b.exec();
            b.v_set(vdst(inst), rl, m);
            b.v_set(vdst(inst) + 1, rh, m);
            Ok(Flow::Next)
        }
        O::VLshlAddU64 => {
            // gfx940: d = (src0 << src1[2:0]) + src2, 64-bit
            no_modifiers(inst)?;
            let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
            let amount = vec_src(b, inst, Field::Src1)?;
            let (al, ah) = vec_src64(b, inst, Field::Src2)?;
            let seven = b.s_const(7);
            let seven = b.v_splat(seven);
            let amount = b.v_op(VOp::And, amount, seven);
            let shifted = b.v_shl64(lo, hi, amount);
            let (rl, rh) = b.v_op64(VOp64::AddU64, shifted, (al, ah));
            let m = b.exec();
            b.v_set(vdst(inst), rl, m);
            b.v_set(vdst(inst) + 1, rh, m);
            Ok(Flow::Next)
        }

        O::VMadU64U32 | O::VMadI64I32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let acc = vec_src64(b, inst, Field::Src2)?;
            let ((lo, hi), carry) = b.v_mad_u64_u32(a, c, acc, inst.info.opcode == O::VMadI64I32);
            let exec = b.exec();
            b.v_set(vdst(inst), lo, exec);
            b.v_set(vdst(inst) + 1, hi, exec);
            let out = b.mask_op(MaskOp::And, carry, exec);
            let (cl, ch) = b.mask_parts(out);
            let d = inst.field(Field::Sdst);
            b.s_set(d, cl);
            b.s_set(d + 1, ch);
            Ok(Flow::Next)
        }
        O::VCvtF64U32 | O::VCvtF64I32 | O::VCvtF64F32 | O::VCvtU32F64 | O::VCvtI32F64 | O::VCvtF32F64 => {
            no_modifiers(inst)?;
            let to64 = matches!(inst.info.opcode, O::VCvtF64U32 | O::VCvtF64I32 | O::VCvtF64F32);
            let a = if to64 {
                let v = vec_src(b, inst, Field::Src0)?;
                (v, v)
            } else {
                vec_src64(b, inst, Field::Src0)?
            };
            let op = match inst.info.opcode {
                O::VCvtF64U32 => VCvt::F64FromU32,
                O::VCvtF64I32 => VCvt::F64FromI32,
                O::VCvtF64F32 => VCvt::F64FromF32,
                O::VCvtU32F64 => VCvt::U32FromF64,
                O::VCvtI32F64 => VCvt::I32FromF64,
                _ => VCvt::F32FromF64,
            };
            let (lo, hi) = b.v_cvt(op, a);
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            if to64 {
                b.v_set(vdst(inst) + 1, hi, m);
            }
            Ok(Flow::Next)
        }
        O::VTruncF64 | O::VFloorF64 | O::VRcpF64 | O::VSqrtF64 | O::VMovB64 => {
            no_modifiers(inst)?;
            let a = vec_src64(b, inst, Field::Src0)?;
            let (lo, hi) = match inst.info.opcode {
                O::VMovB64 => a,
                O::VTruncF64 => b.v_un64(VUn64::TruncF64, a),
                O::VFloorF64 => b.v_un64(VUn64::FloorF64, a),
                O::VRcpF64 => b.v_un64(VUn64::RcpF64, a),
                _ => b.v_un64(VUn64::SqrtF64, a),
            };
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            b.v_set(vdst(inst) + 1, hi, m);
            Ok(Flow::Next)
        }
        O::VAddF64 | O::VMulF64 | O::VLdexpF64 | O::VLshrrevB64 | O::VAshrrevI64 | O::VFmaF64 | O::VFmacF64 => {
            no_modifiers(inst)?;
            let (lo, hi) = match inst.info.opcode {
                O::VLshrrevB64 | O::VAshrrevI64 => {
                    let amount = vec_src(b, inst, Field::Src0)?;
                    let v = vec_src64(b, inst, Field::Src1)?;
                    let op = if inst.info.opcode == O::VLshrrevB64 {
                        VOp64::Lshr
                    } else {
                        VOp64::Ashr
                    };
                    b.v_op64(op, v, (amount, amount))
                }
                O::VLdexpF64 => {
                    let v = vec_src64(b, inst, Field::Src0)?;
                    let e = vec_src(b, inst, Field::Src1)?;
                    b.v_op64(VOp64::LdexpF64, v, (e, e))
                }
                O::VFmaF64 => {
                    let (x, y, z) = (
                        vec_src64(b, inst, Field::Src0)?,
                        vec_src64(b, inst, Field::Src1)?,
                        vec_src64(b, inst, Field::Src2)?,
                    );
                    b.v_fma_f64(x, y, z)
                }
                O::VFmacF64 => {
                    let x = vec_src64(b, inst, Field::Src0)?;
                    let y = if inst.encoding() == Encoding::Vop3 {
                        vec_src64(b, inst, Field::Src1)?
                    } else {
                        let r = inst.field(Field::Vsrc1);
                        (b.v_get(r), b.v_get(r + 1))
                    };
                    let d = (b.v_get(vdst(inst)), b.v_get(vdst(inst) + 1));
                    b.v_fma_f64(x, y, d)
                }
                _ => {
                    let x = vec_src64(b, inst, Field::Src0)?;
                    let y = vec_src64(b, inst, Field::Src1)?;
                    b.v_op64(
                        if inst.info.opcode == O::VAddF64 {
                            VOp64::AddF64
                        } else {
                            VOp64::MulF64
                        },
                        x,
                        y,
                    )
                }
            };
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            b.v_set(vdst(inst) + 1, hi, m);
            Ok(Flow::Next)
        }
        O::VRsqF64 => unary(b, inst, LaneFn::F64Un(Unary64::Rsq)),
        O::VRndneF64 => unary(b, inst, LaneFn::F64Un(Unary64::Rndne)),
        O::VCeilF64 => unary(b, inst, LaneFn::F64Un(Unary64::Ceil)),
        O::VFractF64 => unary(b, inst, LaneFn::F64Un(Unary64::Fract)),
        O::VFrexpMantF64 => unary(b, inst, LaneFn::F64Un(Unary64::FrexpMant)),
        O::VFrexpExpI32F64 => unary(b, inst, LaneFn::F64Un(Unary64::FrexpExp)),
        O::VMinF64 => binary(b, inst, LaneFn::MinF64),
        O::VMaxF64 => binary(b, inst, LaneFn::MaxF64),
        O::VDivScaleF64 => super::valu32::div_step(b, inst, LaneFn::DivScaleF64, true),
        O::VDivFmasF64 => super::valu32::div_step(b, inst, LaneFn::DivFmasF64, true),
        O::VDivFixupF64 => super::valu32::div_step(b, inst, LaneFn::DivFixupF64, true),
        O::VTrigPreopF64 => {
            no_output_mods(inst)?;
            let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
            let seg = vec_src(b, inst, Field::Src1)?;
            let r = b.v_lanefn(LaneFn::TrigPreopF64, &[lo, hi, seg]);
            set64(b, vdst(inst), &r);
            Ok(Flow::Next)
        }
        _ => Err(unsupported(inst)),
    }
}

/// An f64 source -> an f64 (or, for frexp's exponent, i32) result by a lane helper.
fn unary<B: Backend>(b: &mut B, inst: &Inst, f: LaneFn) -> Result<Flow<B::S>, ExecError> {
    no_output_mods(inst)?;
    let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
    let r = b.v_lanefn(f, &[lo, hi]);
    if r.len() == 2 {
        set64(b, vdst(inst), &r);
    } else {
        let m = b.exec();
        b.v_set(vdst(inst), r[0], m);
    }
    Ok(Flow::Next)
}

/// Two f64 sources -> an f64 result by a lane helper.
fn binary<B: Backend>(b: &mut B, inst: &Inst, f: LaneFn) -> Result<Flow<B::S>, ExecError> {
    no_output_mods(inst)?;
    let (a, c) = (vec_src64(b, inst, Field::Src0)?, vec_src64(b, inst, Field::Src1)?);
    let r = b.v_lanefn(f, &[a.0, a.1, c.0, c.1]);
    set64(b, vdst(inst), &r);
    Ok(Flow::Next)
}
