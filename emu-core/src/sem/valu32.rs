//! The vector ALU on 32-bit lanes: integer and f32 arithmetic, logic, shifts, bit-field operations, 24-bit
//! multiplies, conversions between f32 and 32-bit integers, f32 transcendentals, carries and borrows, selects,
//! packed f32 (VOP3P) and the IEEE f32 division steps.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::DataType;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};
use crate::lanefn::{BitOp, LaneFn, ValuOp, WordOp};

/// Executes a 32-bit VALU instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::VLdexpF32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let e = second_src(b, inst)?;
            let r = b.v_op(VOp::LdexpF32, a, e);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VAlignbitB32 => {
            // the low dword of ({src0, src1} >> (src2 & 31))
            no_modifiers(inst)?;
            let hi = vec_src(b, inst, Field::Src0)?;
            let lo = vec_src(b, inst, Field::Src1)?;
            let sh = vec_src(b, inst, Field::Src2)?;
            let k31 = b.s_const(31);
            let k31 = b.v_splat(k31);
            let sh = b.v_op(VOp::And, sh, k31);
            let k32 = b.s_const(32);
            let k32 = b.v_splat(k32);
            let up = b.v_op(VOp::SubU32, k32, sh);
            let (l, h) = (b.v_op(VOp::Lshr, lo, sh), b.v_op(VOp::Shl, hi, up));
            let joined = b.v_op(VOp::Or, l, h);
            let zero = b_zero(b);
            let none = b.v_cmp(cmp::EQ_U32, sh, zero);
            let r = b.v_select(none, joined, lo);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VMovB32 => {
            no_modifiers(inst)?;
            let v = vec_src(b, inst, Field::Src0)?;
            let m = b.exec();
            b.v_set(vdst(inst), v, m);
            Ok(Flow::Next)
        }
        O::VAddU32 | O::VSubU32 | O::VSubrevU32 if saturates(inst) => {
            // clamp: unsigned saturation instead of wrapping
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let (a, c) = if inst.info.opcode == O::VSubrevU32 {
                (c, a)
            } else {
                (a, c)
            };
            let add = inst.info.opcode == O::VAddU32;
            let (r, out) = if add {
                b.v_add_carry(a, c, None)
            } else {
                b.v_sub_borrow(a, c, None)
            };
            let r = saturated(b, r, out, add);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VAddU32
        | O::VSubU32
        | O::VMulLoU32
        | O::VAndB32
        | O::VOrB32
        | O::VXorB32
        | O::VAddF32
        | O::VSubF32
        | O::VMulF32
        | O::VMinF32
        | O::VMaxF32
        | O::VLshlrevB32
        | O::VLshrrevB32
        | O::VAshrrevI32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let (op, swap) = match inst.info.opcode {
                O::VAddU32 => (VOp::AddU32, false),
                O::VSubU32 => (VOp::SubU32, false),
                O::VMulLoU32 => (VOp::MulLoU32, false),
                O::VAndB32 => (VOp::And, false),
                O::VOrB32 => (VOp::Or, false),
                O::VXorB32 => (VOp::Xor, false),
                O::VAddF32 => (VOp::AddF32, false),
                O::VSubF32 => (VOp::SubF32, false),
                O::VMulF32 => (VOp::MulF32, false),
                O::VMinF32 => (VOp::MinF32, false),
                O::VMaxF32 => (VOp::MaxF32, false),
                O::VLshlrevB32 => (VOp::Shl, true),
                O::VLshrrevB32 => (VOp::Lshr, true),
                _ => (VOp::Ashr, true),
            };
            let r = if swap { b.v_op(op, c, a) } else { b.v_op(op, a, c) };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VFmacF32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let d = b.v_get(vdst(inst));
            let r = b.v_fma_f32(a, c, d);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VAddCoU32 | O::VAddcCoU32 => {
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let carry_in = if inst.info.opcode == O::VAddcCoU32 {
                Some(carry_input(b, inst)?)
            } else {
                None
            };
            let (r, carry) = b.v_add_carry(a, c, carry_in);
            // VOP3 clamp: unsigned saturation (the carry out is still the overflow)
            let r = if saturates(inst) {
                saturated(b, r, carry, true)
            } else {
                r
            };
            let exec = b.exec();
            b.v_set(vdst(inst), r, exec);
            write_lane_mask(b, inst, Field::Sdst, carry);
            Ok(Flow::Next)
        }
        O::VLshlOrB32 | O::VLshlAddU32 | O::VAddLshlU32 | O::VAdd3U32 | O::VAndOrB32 | O::VOr3B32 | O::VXadU32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let d = vec_src(b, inst, Field::Src2)?;
            // (a op1 b) op2 c
            let (op1, op2) = match inst.info.opcode {
                O::VLshlOrB32 => (VOp::Shl, VOp::Or),
                O::VLshlAddU32 => (VOp::Shl, VOp::AddU32),
                O::VAddLshlU32 => (VOp::AddU32, VOp::Shl),
                O::VAdd3U32 => (VOp::AddU32, VOp::AddU32),
                O::VAndOrB32 => (VOp::And, VOp::Or),
                O::VXadU32 => (VOp::Xor, VOp::AddU32),
                _ => (VOp::Or, VOp::Or),
            };
            let t = b.v_op(op1, a, c);
            let r = b.v_op(op2, t, d);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBfeU32 | O::VBfeI32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let off = vec_src(b, inst, Field::Src1)?;
            let width = vec_src(b, inst, Field::Src2)?;
            let k31 = b.s_const(31);
            let k31 = b.v_splat(k31);
            let (off, width) = (b.v_op(VOp::And, off, k31), b.v_op(VOp::And, width, k31));
            // the signed form shifts arithmetically: bits above 31 are copies of the sign
            let signed = inst.info.opcode == O::VBfeI32;
            let shifted = b.v_op(if signed { VOp::Ashr } else { VOp::Lshr }, a, off);
            let k32 = b.s_const(32);
            let k32 = b.v_splat(k32);
            let up = b.v_op(VOp::SubU32, k32, width);
            let left = b.v_op(VOp::Shl, shifted, up);
            let field = if inst.info.opcode == O::VBfeI32 {
                b.v_op(VOp::Ashr, left, up)
            } else {
                b.v_op(VOp::Lshr, left, up)
            };
            // a zero width extracts nothing (the shifts above would be by 32 & 31 = 0)
            let zero = b.s_const(0);
            let zero = b.v_splat(zero);
            let empty = b.v_cmp(cmp::EQ_U32, width, zero);
            let r = b.v_select(empty, field, zero);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBfiB32 | O::VMadU32U24 | O::VMadI32I24 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let d = vec_src(b, inst, Field::Src2)?;
            let r = match inst.info.opcode {
                // (a & c) | (!a & d)
                O::VBfiB32 => {
                    let x = b.v_op(VOp::And, a, c);
                    let na = b.v_un(VUn::Not, a);
                    let y = b.v_op(VOp::And, na, d);
                    b.v_op(VOp::Or, x, y)
                }
                O::VMadU32U24 => {
                    let p = b.v_op(VOp::MulU32U24, a, c);
                    b.v_op(VOp::AddU32, p, d)
                }
                _ => {
                    let p = b.v_op(VOp::MulI32I24, a, c);
                    b.v_op(VOp::AddU32, p, d)
                }
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VSwapB32 => {
            no_modifiers(inst)?;
            let src = inst.field(Field::Src0);
            if src < 256 {
                return Err(form(inst, "a non-VGPR operand"));
            }
            let (x, y) = (b.v_get(vdst(inst)), b.v_get(src - 256));
            let m = b.exec();
            b.v_set(vdst(inst), y, m);
            b.v_set(src - 256, x, m);
            Ok(Flow::Next)
        }
        O::VCndmaskB32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let sel = if inst.encoding() == Encoding::Vop3 {
                inst.field(Field::Src2)
            } else {
                106
            };
            if sel > 127 {
                return Err(form(inst, "a non-SGPR lane select"));
            }
            let (lo, hi) = (b.s_get(sel), b.s_get(sel + 1));
            let m = b.mask_from(lo, hi);
            let r = b.v_select(m, a, c);
            let exec = b.exec();
            b.v_set(vdst(inst), r, exec);
            Ok(Flow::Next)
        }
        O::VMbcntLoU32B32 | O::VMbcntHiU32B32 => {
            // count of set bits of src0 in the lanes below this one (low or high half of the wave) + src1: each
            // lane's bits below it are a constant of the lane (lo: lanes 32..63 see all 32; hi: lanes 0..31 none)
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let hi = inst.info.opcode == O::VMbcntHiU32B32;
            let below: [u32; 64] = std::array::from_fn(|lane| {
                let pos = if hi { lane as i64 - 32 } else { lane as i64 };
                match pos {
                    p if p < 0 => 0,
                    p if p >= 32 => u32::MAX,
                    p => (1u32 << p) - 1,
                }
            });
            let below = b.v_const(&below);
            let masked = b.v_op(VOp::And, a, below);
            let n = b.v_un(VUn::Bcnt, masked);
            let r = b.v_op(VOp::AddU32, n, c);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBcntU32B32 | O::VMinU32 | O::VMaxU32 | O::VMinI32 | O::VMaxI32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let r = match inst.info.opcode {
                O::VBcntU32B32 => {
                    let n = b.v_un(VUn::Bcnt, a);
                    b.v_op(VOp::AddU32, n, c)
                }
                O::VMinU32 => b.v_op(VOp::MinU32, a, c),
                O::VMaxU32 => b.v_op(VOp::MaxU32, a, c),
                O::VMinI32 => b.v_op(VOp::MinI32, a, c),
                _ => b.v_op(VOp::MaxI32, a, c),
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBfrevB32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let r = b.v_un(VUn::Brev, a);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VSubrevU32 | O::VMulHiU32 | O::VMulHiI32 | O::VMulU32U24 | O::VMulI32I24 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let r = match inst.info.opcode {
                O::VSubrevU32 => b.v_op(VOp::SubU32, c, a),
                O::VMulHiU32 => b.v_op(VOp::MulHiU32, a, c),
                O::VMulHiI32 => b.v_op(VOp::MulHiI32, a, c),
                O::VMulU32U24 => b.v_op(VOp::MulU32U24, a, c),
                _ => b.v_op(VOp::MulI32I24, a, c),
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VSubCoU32 | O::VSubrevCoU32 | O::VSubbCoU32 | O::VSubbrevCoU32 => {
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let (a, c) = if matches!(inst.info.opcode, O::VSubrevCoU32 | O::VSubbrevCoU32) {
                (c, a)
            } else {
                (a, c)
            };
            let borrow_in = if matches!(inst.info.opcode, O::VSubbCoU32 | O::VSubbrevCoU32) {
                Some(carry_input(b, inst)?)
            } else {
                None
            };
            let (r, borrow) = b.v_sub_borrow(a, c, borrow_in);
            // VOP3 clamp: unsigned saturation at 0 (the borrow out is still written)
            let r = if saturates(inst) {
                saturated(b, r, borrow, false)
            } else {
                r
            };
            let exec = b.exec();
            b.v_set(vdst(inst), r, exec);
            write_lane_mask(b, inst, Field::Sdst, borrow);
            Ok(Flow::Next)
        }
        O::VCvtF32U32
        | O::VCvtF32I32
        | O::VCvtU32F32
        | O::VCvtI32F32
        | O::VTruncF32
        | O::VFloorF32
        | O::VRcpF32
        | O::VRcpIflagF32
        | O::VSqrtF32
        | O::VNotB32
        | O::VExpF32
        | O::VLogF32
        | O::VRndneF32
        | O::VCeilF32
        | O::VFractF32
        | O::VRsqF32
        | O::VSinF32
        | O::VCosF32
        | O::VFrexpMantF32
        | O::VFrexpExpI32F32
        | O::VFfbhU32
        | O::VFfblB32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let op = match inst.info.opcode {
                O::VCvtF32U32 => VUn::CvtF32U32,
                O::VCvtF32I32 => VUn::CvtF32I32,
                O::VCvtU32F32 => VUn::CvtU32F32,
                O::VCvtI32F32 => VUn::CvtI32F32,
                O::VTruncF32 => VUn::TruncF32,
                O::VFloorF32 => VUn::FloorF32,
                O::VSqrtF32 => VUn::SqrtF32,
                O::VNotB32 => VUn::Not,
                O::VExpF32 => VUn::ExpF32,
                O::VLogF32 => VUn::LogF32,
                O::VRndneF32 => VUn::RndneF32,
                O::VCeilF32 => VUn::CeilF32,
                O::VFractF32 => VUn::FractF32,
                O::VRsqF32 => VUn::RsqF32,
                O::VSinF32 => VUn::SinF32,
                O::VCosF32 => VUn::CosF32,
                O::VFrexpMantF32 => VUn::FrexpMantF32,
                O::VFrexpExpI32F32 => VUn::FrexpExpF32,
                O::VFfbhU32 => VUn::Ffbh,
                O::VFfblB32 => VUn::Ffbl,
                _ => VUn::RcpF32,
            };
            let r = b.v_un(op, a);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VMacF32 | O::VMadmkF32 | O::VMadakF32 | O::VFmamkF32 | O::VFmaakF32 | O::VMadF32 | O::VFmaF32 => {
            no_modifiers(inst)?;
            let k = || inst.literal().unwrap_or(0);
            let a = vec_src(b, inst, Field::Src0)?;
            let (x, y, z) = match inst.info.opcode {
                O::VMacF32 => {
                    let c = second_src(b, inst)?;
                    let d = b.v_get(vdst(inst));
                    (a, c, d)
                }
                O::VMadmkF32 | O::VFmamkF32 => {
                    let kk = b.s_const(k());
                    let kv = b.v_splat(kk);
                    let c = b.v_get(inst.field(Field::Vsrc1));
                    (a, kv, c)
                }
                O::VMadakF32 | O::VFmaakF32 => {
                    let c = b.v_get(inst.field(Field::Vsrc1));
                    let kk = b.s_const(k());
                    let kv = b.v_splat(kk);
                    (a, c, kv)
                }
                _ => (a, vec_src(b, inst, Field::Src1)?, vec_src(b, inst, Field::Src2)?),
            };
            let fused = matches!(inst.info.opcode, O::VFmamkF32 | O::VFmaakF32 | O::VFmaF32);
            let r = if fused {
                b.v_fma_f32(x, y, z)
            } else {
                // the legacy multiply-add rounds the product first
                let p = b.v_op(VOp::MulF32, x, y);
                b.v_op(VOp::AddF32, p, z)
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VPkFmaF32 | O::VPkAddF32 | O::VPkMulF32 => {
            // two f32 lanes per register pair: element j of source k is its low or high dword as op_sel[k]
            // (j = 0) / op_sel_hi[k] (j = 1) say; neg_lo/neg_hi negate per element
            let nsrc = if inst.info.opcode == O::VPkFmaF32 { 3 } else { 2 };
            let opsel = inst.field(Field::OpSel);
            let opsel_hi = inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2;
            let (neg_lo, neg_hi) = (inst.field(Field::Neg), inst.field(Field::NegHi));
            let fields = [Field::Src0, Field::Src1, Field::Src2];
            let mut srcs = Vec::with_capacity(3);
            for f in fields.iter().take(nsrc) {
                // an inline constant is its 32-bit value in the low dword (compilers select it for both elements
                // with op_sel_hi), not a 64-bit constant
                let src = match inline_const32(inst.field(*f)) {
                    Some(c) if (128..=248).contains(&inst.field(*f)) => {
                        let (c, z) = (b.s_const(c), b.s_const(0));
                        (b.v_splat(c), b.v_splat(z))
                    }
                    _ => vec_src64(b, inst, *f)?,
                };
                srcs.push(src);
            }
            let sign = b.s_const(0x8000_0000);
            let sign = b.v_splat(sign);
            let mut out = Vec::with_capacity(2);
            for j in 0..2 {
                let (sel, neg) = if j == 0 { (opsel, neg_lo) } else { (opsel_hi, neg_hi) };
                let mut e = Vec::with_capacity(3);
                for (k, src) in srcs.iter().enumerate() {
                    let v = if sel >> k & 1 == 1 { src.1 } else { src.0 };
                    e.push(if neg >> k & 1 == 1 {
                        b.v_op(VOp::Xor, v, sign)
                    } else {
                        v
                    });
                }
                let r = match inst.info.opcode {
                    O::VPkFmaF32 => b.v_fma_f32(e[0], e[1], e[2]),
                    O::VPkAddF32 => b.v_op(VOp::AddF32, e[0], e[1]),
                    _ => b.v_op(VOp::MulF32, e[0], e[1]),
                };
                // clamp: each element to [0, 1]
                out.push(if inst.field(Field::Clamp) == 1 {
                    clamp_unit(b, DataType::F32, &[r])[0]
                } else {
                    r
                });
            }
            let m = b.exec();
            b.v_set(vdst(inst), out[0], m);
            b.v_set(vdst(inst) + 1, out[1], m);
            Ok(Flow::Next)
        }
        O::VPkMovB32 => {
            if inst.field(Field::Neg) | inst.field(Field::NegHi) | inst.field(Field::Clamp) != 0 {
                return Err(form(inst, "modifiers"));
            }
            let opsel = inst.field(Field::OpSel);
            let s0 = vec_src64(b, inst, Field::Src0)?;
            let s1 = vec_src64(b, inst, Field::Src1)?;
            let lo = if opsel & 1 == 0 { s0.0 } else { s0.1 };
            let hi = if opsel & 2 == 0 { s1.0 } else { s1.1 };
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            b.v_set(vdst(inst) + 1, hi, m);
            Ok(Flow::Next)
        }
        O::VReadfirstlaneB32 | O::VWritelaneB32 | O::VReadlaneB32 => super::xlane::execute(b, inst),
        O::VPermB32 => word(b, inst, WordOp::Perm),
        O::VMin3F32 => word(b, inst, WordOp::Min3F32),
        O::VMax3F32 => word(b, inst, WordOp::Max3F32),
        O::VMed3F32 => word(b, inst, WordOp::Med3F32),
        O::VMin3I32 => word(b, inst, WordOp::Min3I32),
        O::VMax3I32 => word(b, inst, WordOp::Max3I32),
        O::VMed3I32 => word(b, inst, WordOp::Med3I32),
        O::VMin3U32 => word(b, inst, WordOp::Min3U32),
        O::VMax3U32 => word(b, inst, WordOp::Max3U32),
        O::VMed3U32 => word(b, inst, WordOp::Med3U32),
        O::VMulHiU32U24 => word(b, inst, WordOp::MulHiU32U24),
        O::VMulHiI32I24 => word(b, inst, WordOp::MulHiI32I24),
        O::VCvtF32Ubyte0 => word(b, inst, WordOp::CvtF32Ubyte(0)),
        O::VCvtF32Ubyte1 => word(b, inst, WordOp::CvtF32Ubyte(1)),
        O::VCvtF32Ubyte2 => word(b, inst, WordOp::CvtF32Ubyte(2)),
        O::VCvtF32Ubyte3 => word(b, inst, WordOp::CvtF32Ubyte(3)),
        O::VDivScaleF32 => div_step(b, inst, LaneFn::DivScaleF32, false),
        O::VDivFmasF32 => div_step(b, inst, LaneFn::DivFmasF32, false),
        O::VDivFixupF32 => div_step(b, inst, LaneFn::DivFixupF32, false),
        _ => more(b, inst),
    }
}

/// 32-bit sources (as many as the helper takes) -> a 32-bit result by a word helper.
fn word<B: Backend>(b: &mut B, inst: &Inst, op: WordOp) -> Result<Flow<B::S>, ExecError> {
    no_output_mods(inst)?;
    let mut args = Vec::with_capacity(3);
    for k in 0..LaneFn::Word(op).inputs() {
        args.push(src(b, inst, k)?);
    }
    let r = b.v_lanefn(LaneFn::Word(op), &args);
    let m = b.exec();
    b.v_set(vdst(inst), r[0], m);
    Ok(Flow::Next)
}

/// The IEEE division steps (v_div_scale, v_div_fmas, v_div_fixup) of f32 or (`wide`) f64: three sources of that
/// width; div_fmas also reads VCC, div_scale also writes a lane mask (VCC or sdst).
pub(super) fn div_step<B: Backend>(b: &mut B, inst: &Inst, f: LaneFn, wide: bool) -> Result<Flow<B::S>, ExecError> {
    no_output_mods(inst)?;
    let mut args = Vec::with_capacity(7);
    for field in [Field::Src0, Field::Src1, Field::Src2] {
        if wide {
            let (lo, hi) = vec_src64(b, inst, field)?;
            args.extend([lo, hi]);
        } else {
            args.push(vec_src(b, inst, field)?);
        }
    }
    if matches!(f, LaneFn::DivFmasF32 | LaneFn::DivFmasF64) {
        let (lo, hi) = (b.s_get(106), b.s_get(107));
        let vcc = b.mask_from(lo, hi);
        let (one, zero) = (splat(b, 1), b_zero(b));
        args.push(b.v_select(vcc, zero, one));
    }
    let r = b.v_lanefn(f, &args);
    let d = vdst(inst);
    if wide {
        set64(b, d, &r[..2]);
    } else {
        let m = b.exec();
        b.v_set(d, r[0], m);
    }
    if matches!(f, LaneFn::DivScaleF32 | LaneFn::DivScaleF64) {
        let zero = b_zero(b);
        let flag = b.v_cmp(cmp::NE_U32, r[r.len() - 1], zero);
        write_lane_mask(b, inst, Field::Sdst, flag);
    }
    Ok(Flow::Next)
}

/// The VALU operations written as lane functions ([`ValuOp`]), v_subrev_f32 and v_ffbh_i32 (some of them
/// name 16-bit types but work on whole 32-bit lanes: [`super::valu`] sends them here by [`lane_op`]).
pub(super) fn more<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    use ValuOp as V;
    // VOP3P's clamp saturates the integer dot products; no other instruction here is VOP3P
    let vop3p_clamp = inst.encoding() == Encoding::Vop3p && inst.field(Field::Clamp) == 1;
    let op = match inst.info.opcode {
        O::VSubrevF32 => {
            no_modifiers(inst)?;
            let a = src(b, inst, 0)?;
            let c = src(b, inst, 1)?;
            let r = b.v_op(VOp::SubF32, c, a);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            return Ok(Flow::Next);
        }
        O::VQsadPkU16U8 | O::VMqsadPkU16U8 | O::VMqsadU32U8 => {
            no_modifiers(inst)?;
            let wide = inst.info.opcode == O::VMqsadU32U8;
            let f = LaneFn::QuadSad {
                masked: inst.info.opcode != O::VQsadPkU16U8,
                wide,
            };
            let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
            let mut args = vec![lo, hi, vec_src(b, inst, Field::Src1)?];
            let c = inst.field(Field::Src2);
            if wide && c < 256 {
                // a constant or SGPR accumulator: its value in each of the four dwords
                let v = vec_src(b, inst, Field::Src2)?;
                args.extend([v; 4]);
            } else if wide {
                args.extend((0..4).map(|i| b.v_get(c - 256 + i)));
            } else {
                let (lo, hi) = vec_src64(b, inst, Field::Src2)?;
                args.extend([lo, hi]);
            }
            let r = b.v_lanefn(f, &args);
            let m = b.exec();
            for (i, v) in r.into_iter().enumerate() {
                b.v_set(vdst(inst) + i as u32, v, m);
            }
            return Ok(Flow::Next);
        }
        O::VCvtPkF32Fp8 | O::VCvtPkF32Bf8 => {
            // the two 8-bit floats of src0's low word (SDWA's src0_sel picks the word), to two f32s
            no_modifiers(inst)?;
            let bf8 = inst.info.opcode == O::VCvtPkF32Bf8;
            let a = src(b, inst, 0)?;
            let hi = {
                let sh = splat(b, 8);
                b.v_op(VOp::Lshr, a, sh)
            };
            let m = b.exec();
            for (i, v) in [a, hi].into_iter().enumerate() {
                let r = b.v_lanefn(LaneFn::Valu(V::CvtF32F8 { bf8 }), &[v]);
                b.v_set(vdst(inst) + i as u32, r[0], m);
            }
            return Ok(Flow::Next);
        }
        O::VCvtPkFp8F32 | O::VCvtPkBf8F32 | O::VCvtSrFp8F32 | O::VCvtSrBf8F32 => return f8_convert(b, inst),
        O::VFfbhI32 => {
            no_modifiers(inst)?;
            let a = src(b, inst, 0)?;
            let r = b.v_lanefn(LaneFn::Bits(BitOp::Cls32), &[a]);
            let m = b.exec();
            b.v_set(vdst(inst), r[0], m);
            return Ok(Flow::Next);
        }
        O::VXnorB32 => V::Xnor,
        O::VSadU8 => V::SadU8,
        O::VSadHiU8 => V::SadHiU8,
        O::VSadU16 => V::SadU16,
        O::VSadU32 => V::SadU32,
        O::VMsadU8 => V::MsadU8,
        O::VLerpU8 => V::LerpU8,
        O::VMadU32U16 => V::Mad32x16 { signed: false },
        O::VMadI32I16 => V::Mad32x16 { signed: true },
        O::VAlignbyteB32 => V::Alignbyte,
        O::VCvtFlrI32F32 => V::CvtFlrI32F32,
        O::VCvtRpiI32F32 => V::CvtRpiI32F32,
        O::VCvtOffF32I4 => V::CvtOffF32I4,
        O::VCvtPkU8F32 => V::CvtPkU8F32,
        O::VCvtPkI16I32 => V::CvtPk16 { signed: true },
        O::VCvtPkU16U32 => V::CvtPk16 { signed: false },
        O::VCvtPkrtzF16F32 => V::CvtPkrtzF16F32,
        O::VCubeidF32 => V::Cubeid,
        O::VCubemaF32 => V::Cubema,
        O::VCubescF32 => V::Cubesc,
        O::VCubetcF32 => V::Cubetc,
        O::VMulLegacyF32 => V::MulLegacyF32,
        O::VMadLegacyF32 => V::MadLegacyF32,
        O::VDot2I32I16 | O::VDot2cI32I16 => V::Dot {
            bits: 16,
            signed: true,
            clamp: vop3p_clamp,
        },
        O::VDot2U32U16 => V::Dot {
            bits: 16,
            signed: false,
            clamp: vop3p_clamp,
        },
        O::VDot4I32I8 | O::VDot4cI32I8 => V::Dot {
            bits: 8,
            signed: true,
            clamp: vop3p_clamp,
        },
        O::VDot4U32U8 => V::Dot {
            bits: 8,
            signed: false,
            clamp: vop3p_clamp,
        },
        O::VDot8I32I4 | O::VDot8cI32I4 => V::Dot {
            bits: 4,
            signed: true,
            clamp: vop3p_clamp,
        },
        O::VDot8U32U4 => V::Dot {
            bits: 4,
            signed: false,
            clamp: vop3p_clamp,
        },
        O::VSatPkU8I16 => V::SatPkU8I16,
        O::VBfmB32 => V::Bfm,
        O::VAddI32 => V::AddI32,
        O::VSubI32 => V::SubI32,
        O::VMin3I16 => V::Min3_16 { signed: true },
        O::VMin3U16 => V::Min3_16 { signed: false },
        O::VMax3I16 => V::Max3_16 { signed: true },
        O::VMax3U16 => V::Max3_16 { signed: false },
        O::VMed3I16 => V::Med3_16 { signed: true },
        O::VMed3U16 => V::Med3_16 { signed: false },
        O::VCvtF32Fp8 => V::CvtF32F8 { bf8: false },
        O::VCvtF32Bf8 => V::CvtF32F8 { bf8: true },
        O::VExpLegacyF32 => V::ExpLegacyF32,
        O::VLogLegacyF32 => V::LogLegacyF32,
        // v_cvt_pk_u8_f32 into the destination's byte
        O::VCvtPkaccumU8F32 => V::CvtPkU8F32,
        // no exceptions are recorded, so there are none to clear
        O::VNop | O::VClrexcp => return Ok(Flow::Next),
        _ => return Err(unsupported(inst)),
    };
    no_modifiers(inst)?;
    if vop3p_clamp && !matches!(op, V::Dot { .. }) {
        return Err(form(inst, "clamp"));
    }
    if inst.encoding() == Encoding::Vop3p
        && (inst.field(Field::OpSel) != 0
            || inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2 != 7
            || inst.field(Field::Neg) | inst.field(Field::NegHi) != 0)
    {
        return Err(form(inst, "op_sel, op_sel_hi or neg on a dot product"));
    }
    let f = LaneFn::Valu(op);
    // the dot products of VOP2 ("c" forms) accumulate into the destination
    let accumulate = matches!(
        inst.info.opcode,
        O::VDot2cI32I16 | O::VDot4cI32I8 | O::VDot8cI32I4 | O::VCvtPkaccumU8F32
    );
    let mut args = Vec::with_capacity(3);
    for k in 0..f.inputs() {
        args.push(match k {
            2 if accumulate => b.v_get(vdst(inst)),
            // VOP3P has no vsrc1: its sources are src0..src2
            _ if inst.encoding() == Encoding::Vop3p => vec_src(b, inst, [Field::Src0, Field::Src1, Field::Src2][k])?,
            _ => src(b, inst, k)?,
        });
    }
    let r = b.v_lanefn(f, &args);
    let m = b.exec();
    b.v_set(vdst(inst), r[0], m);
    Ok(Flow::Next)
}

/// gfx942's conversions to 8-bit floats ([`crate::lanefn::f32_to_f8`]), into part of the destination, the rest
/// kept: v_cvt_pk_fp8_f32 / _bf8_f32 round src0 and src1 to nearest even into the word op_sel[3] selects;
/// v_cvt_sr_fp8_f32 / _bf8_f32 round src0 stochastically with the random bits of src1 into the byte
/// op_sel[3:2] selects.
fn f8_convert<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    // omod is ignored ([`float_clamp`])
    if inst.field(Field::Clamp) | inst.field(Field::OpSel) & 3 != 0 {
        return Err(form(inst, "clamp, or op_sel on a source"));
    }
    let op = inst.info.opcode;
    let bf8 = matches!(op, O::VCvtPkBf8F32 | O::VCvtSrBf8F32);
    let sr = matches!(op, O::VCvtSrFp8F32 | O::VCvtSrBf8F32);
    let (x, y) = (src(b, inst, 0)?, src(b, inst, 1)?);
    let f = if sr {
        ValuOp::CvtSrF8 { bf8 }
    } else {
        ValuOp::CvtPkF8 { bf8 }
    };
    let r = b.v_lanefn(LaneFn::Valu(f), &[x, y])[0];
    let opsel = inst.field(Field::OpSel);
    let (shift, width) = if sr {
        (8 * (opsel >> 2), 8)
    } else {
        (16 * (opsel >> 3), 16)
    };
    let d = vdst(inst);
    let old = b.v_get(d);
    let keep = splat(b, !(((1u32 << width) - 1) << shift));
    let old = b.v_op(VOp::And, old, keep);
    let sh = splat(b, shift);
    let r = b.v_op(VOp::Shl, r, sh);
    let v = b.v_op(VOp::Or, old, r);
    let m = b.exec();
    b.v_set(d, v, m);
    Ok(Flow::Next)
}

/// Whether [`more`] executes `op` whatever the types its mnemonic names.
pub(super) fn lane_op(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::VSadU16
            | O::VMadU32U16
            | O::VMadI32I16
            | O::VCvtPkrtzF16F32
            | O::VDot2I32I16
            | O::VDot2cI32I16
            | O::VDot2U32U16
            | O::VSatPkU8I16
            | O::VCvtPkI16I32
            | O::VCvtPkU16U32
            | O::VMin3I16
            | O::VMin3U16
            | O::VMax3I16
            | O::VMax3U16
            | O::VMed3I16
            | O::VMed3U16
            | O::VQsadPkU16U8
            | O::VMqsadPkU16U8
    )
}

/// Whether a VOP3 32-bit integer add or subtract saturates (its clamp bit; the ISA guides: "supports
/// saturation (unsigned 32-bit integer domain)"). It has no op_sel, and omod is ignored ([`float_clamp`]).
fn saturates(inst: &Inst) -> bool {
    inst.encoding() == Encoding::Vop3 && inst.field(Field::Clamp) == 1
}

/// The unsigned saturation of sum (`add`) or difference `r` whose carry or borrow is `out`: all ones past the
/// top, 0 below the bottom.
fn saturated<B: Backend>(b: &mut B, r: B::V, out: B::M, add: bool) -> B::V {
    let bound = splat(b, if add { u32::MAX } else { 0 });
    b.v_select(out, r, bound)
}
