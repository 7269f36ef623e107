//! Operands and modifiers shared by every instruction family: scalar and vector sources (SGPRs, special
//! registers, inline constants, literals, VGPRs), VOP3 neg/abs, SDWA selects, DPP lane permutes, 16-bit halves,
//! and the writes of lane masks, register pairs and AGPR-or-VGPR data.

use isa_amdgpu::constants::{inline_float, inline_value, FloatWidth};
use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{DataType, MemFlags, OperandKind, SrcType};
use isa_amdgpu::Inst;

use super::backend::*;
use super::{form, ExecError};

/// The value of inline constant `v` (128..=208, 240..=248) as a 32-bit operand ([`isa_amdgpu::constants`]).
pub(super) fn inline_const32(v: u32) -> Option<u32> {
    inline_value(v, FloatWidth::F32).map(|x| x as u32)
}

/// A 32-bit scalar source (SOP ssrc, or a uniform VOP source).
pub(super) fn scalar_src<B: Backend>(b: &mut B, inst: &Inst, v: u32) -> Result<B::S, ExecError> {
    match v {
        0..=127 => Ok(b.s_get(v)),
        255 => Ok(b.s_const(inst.literal().unwrap_or(0))),
        // src_shared_base/limit and src_private_base/limit: the high halves of the flat apertures
        235 | 236 => Ok(b.s_const(super::SHARED_APERTURE_HI)),
        237 | 238 => Ok(b.s_const(super::PRIVATE_APERTURE_HI)),
        _ => inline_const32(v)
            .map(|c| b.s_const(c))
            .ok_or_else(|| form(inst, "this source operand")),
    }
}

/// A 64-bit scalar source as (lo, hi). Integer constants sign-extend; float constants are doubles; a literal
/// is the high half of an f64 operand and the zero-extended value of an integer one.
pub(super) fn scalar_src64<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<(B::S, B::S), ExecError> {
    let v = inst.field(field);
    let is_f64 = matches!(
        inst.info.operand(field).map(|o| o.kind),
        Some(OperandKind::Src { ty: SrcType::F64, .. })
    );
    let pair = |b: &mut B, x: u64| (b.s_const(x as u32), b.s_const((x >> 32) as u32));
    match v {
        0..=127 => {
            let r = if v <= 101 { v & !1 } else { v };
            Ok((b.s_get(r), b.s_get(r + 1)))
        }
        128..=208 | 240..=248 => Ok(pair(b, inline_value(v, FloatWidth::F64).unwrap_or(0))),
        // the 4 GiB flat apertures as 64-bit addresses: base (src_shared_base, src_private_base) and last byte
        // (src_shared_limit, src_private_limit)
        235..=238 => {
            let hi = if v <= 236 {
                super::SHARED_APERTURE_HI
            } else {
                super::PRIVATE_APERTURE_HI
            };
            let lo = if v.is_multiple_of(2) { u32::MAX } else { 0 };
            Ok((b.s_const(lo), b.s_const(hi)))
        }
        255 => {
            let lit = inst.literal().unwrap_or(0) as u64;
            Ok(pair(b, if is_f64 { lit << 32 } else { lit }))
        }
        _ => Err(form(inst, "this 64-bit source operand")),
    }
}

/// (neg, abs) input modifier bits of a VOP3 source (VOP3b forms have none).
pub(super) fn input_mods(inst: &Inst, field: Field) -> (bool, bool) {
    let i = match field {
        Field::Src0 => 0,
        Field::Src1 => 1,
        Field::Src2 => 2,
        _ => return (false, false),
    };
    if inst.encoding() != Encoding::Vop3 {
        return (false, false);
    }
    let abs = if inst.info.operand(Field::Sdst).is_some() {
        0
    } else {
        inst.field(Field::Abs)
    };
    (inst.field(Field::Neg) >> i & 1 == 1, abs >> i & 1 == 1)
}

/// The sign bit of the instruction's float sources (f16, or f32 and the high half of f64), by the source type
/// the table names.
pub(super) fn float_sign(inst: &Inst) -> u32 {
    if inst.info.src_type == Some(DataType::F16) {
        0x8000
    } else {
        0x8000_0000
    }
}

/// The carry (borrow) input of v_addc/v_subb: VCC, or in VOP3 an SGPR pair named by src2.
pub(super) fn carry_input<B: Backend>(b: &mut B, inst: &Inst) -> Result<B::M, ExecError> {
    let src = if inst.encoding() == Encoding::Vop3 {
        inst.field(Field::Src2)
    } else {
        106
    };
    if src > 127 {
        return Err(form(inst, "a carry or borrow input that is not an SGPR pair"));
    }
    let (lo, hi) = (b.s_get(src), b.s_get(src + 1));
    Ok(b.mask_from(lo, hi))
}

/// Applies float neg/abs to a value whose sign bit is `sign`.
pub(super) fn apply_mods<B: Backend>(
    b: &mut B,
    inst: &Inst,
    v: B::V,
    neg: bool,
    abs: bool,
    sign: u32,
    field: Field,
) -> Result<B::V, ExecError> {
    if !(neg || abs) {
        return Ok(v);
    }
    use isa_amdgpu::table::OpFlags;
    let int_flag = match field {
        Field::Src0 => OpFlags::INT_SRC0,
        Field::Src1 | Field::Vsrc1 => OpFlags::INT_SRC1,
        _ => OpFlags::INT_SRC2,
    };
    if inst.info.flags.contains(int_flag) {
        return Err(form(inst, "integer input modifiers (sext)"));
    }
    let mut v = v;
    if abs {
        let m = b.s_const(!sign);
        let m = b.v_splat(m);
        v = b.v_op(VOp::And, v, m);
    }
    if neg {
        let m = b.s_const(sign);
        let m = b.v_splat(m);
        v = b.v_op(VOp::Xor, v, m);
    }
    Ok(v)
}

/// A 32-bit vector source, with VOP3 neg/abs applied; DPP's src0 comes permuted across lanes.
pub(super) fn vec_src<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<B::V, ExecError> {
    if inst.form == isa_amdgpu::Form::Dpp && field == Field::Src0 {
        let e = inst.ext().unwrap_or(0);
        let data = b.v_get(e & 0xff);
        let (src, valid) = dpp_sources(inst, (e >> 8) & 0x1ff)?;
        let idx = b.v_const(&src.map(|x| x as u32));
        // the source lane's register whether or not that lane is in EXEC (lanes whose source is outside EXEC
        // are written only with bound_ctrl, which then reads the inactive lane's register rather than 0: see
        // `dpp_write_lanes`); EXEC here is already narrowed to the lanes written
        let all = b.s_const(u32::MAX);
        let all = b.mask_from(all, all);
        let permuted = b.v_permute(data, idx, all);
        let (vl, vh) = (b.s_const(valid as u32), b.s_const((valid >> 32) as u32));
        let vm = b.mask_from(vl, vh);
        let zero = b_zero(b);
        let v = b.v_select(vm, zero, permuted);
        let sign = float_sign(inst);
        return apply_mods(b, inst, v, e >> 20 & 1 == 1, e >> 21 & 1 == 1, sign, Field::Src0);
    }
    if let Some((reg, scalar)) = inst.sdwa_source(field).filter(|_| field == Field::Src0) {
        return sdwa_src(b, inst, reg, scalar, inst.ext().unwrap_or(0) >> 16 & 0xff, field);
    }
    let v = inst.field(field);
    let raw = if v >= 256 {
        b.v_get(v - 256)
    } else if (240..=248).contains(&v) && is_f16_operand(inst, field) {
        let c = b.s_const(inline_float(v, FloatWidth::F16).unwrap_or(0) as u32);
        b.v_splat(c)
    } else {
        let s = scalar_src(b, inst, v)?;
        b.v_splat(s)
    };
    let (neg, abs) = input_mods(inst, field);
    let sign = float_sign(inst);
    apply_mods(b, inst, raw, neg, abs, sign, field)
}

/// Whether an operand takes 16-bit float inline constants: 16-bit operands by the operand's type, and the
/// sources of instructions whose source type is f16 (the operand types cannot tell those from f32, since LLVM
/// prints their inline constants alike).
pub(super) fn is_f16_operand(inst: &Inst, field: Field) -> bool {
    let ty = inst.info.operand(field).map(|o| o.kind);
    matches!(
        ty,
        Some(OperandKind::Src {
            ty: SrcType::F16 | SrcType::V216 | SrcType::I16,
            ..
        })
    ) || inst.info.src_type == Some(DataType::F16)
}

/// An SDWA source: register `reg` (a VGPR, or with `scalar` an SGPR/constant), its byte or word `sel`
/// (bits 0-2 of `ctl`: BYTE_0..3, WORD_0/1, DWORD) zero- or (bit 3) sign-extended, then neg (bit 4) and abs
/// (bit 5).
pub(super) fn sdwa_src<B: Backend>(
    b: &mut B,
    inst: &Inst,
    reg: u32,
    scalar: bool,
    ctl: u32,
    field: Field,
) -> Result<B::V, ExecError> {
    let raw = if scalar {
        let s = scalar_src(b, inst, reg)?;
        b.v_splat(s)
    } else {
        b.v_get(reg)
    };
    let (sel, sext) = (ctl & 7, ctl >> 3 & 1 == 1);
    let (shift, width) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        6 => (0, 32),
        _ => return Err(form(inst, "this SDWA operand select")),
    };
    let v = if width == 32 {
        raw
    } else {
        // move the field to the top, then shift it down arithmetically (sext) or logically
        let up = b.s_const(32 - shift - width);
        let up = b.v_splat(up);
        let top = b.v_op(VOp::Shl, raw, up);
        let down = b.s_const(32 - width);
        let down = b.v_splat(down);
        b.v_op(if sext { VOp::Ashr } else { VOp::Lshr }, top, down)
    };
    let sign = float_sign(inst);
    apply_mods(b, inst, v, ctl >> 4 & 1 == 1, ctl >> 5 & 1 == 1, sign, field)
}

/// A 64-bit vector source as (lo, hi), with VOP3 neg/abs applied to the sign in the high half.
pub(super) fn vec_src64<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<(B::V, B::V), ExecError> {
    let v = inst.field(field);
    let (lo, hi) = if v >= 256 {
        (b.v_get(v - 256), b.v_get(v - 255))
    } else {
        let (lo, hi) = scalar_src64(b, inst, field)?;
        (b.v_splat(lo), b.v_splat(hi))
    };
    let (neg, abs) = input_mods(inst, field);
    let hi = apply_mods(b, inst, hi, neg, abs, 0x8000_0000, field)?;
    Ok((lo, hi))
}

/// Modifiers this engine does not implement (clamp of an integer result, op_sel) fail loudly instead of being
/// ignored; input neg/abs are applied when sources are read, omod is ignored and the clamp of a float result
/// is applied by `execute` afterwards ([`float_clamp`]).
pub(super) fn no_modifiers(inst: &Inst) -> Result<(), ExecError> {
    if inst.encoding() == Encoding::Vop3 {
        let has_sdst = inst.info.operand(Field::Sdst).is_some();
        let opsel = if has_sdst { 0 } else { inst.field(Field::OpSel) };
        let clamp = if float_clamp(inst).is_some() {
            0
        } else {
            inst.field(Field::Clamp)
        };
        if opsel | clamp != 0 {
            return Err(form(inst, "clamp of an integer result (saturation) or op_sel"));
        }
    }
    Ok(())
}

/// The float type of `inst`'s result when its clamp bit clamps that result to [0, 1] after it executes
/// ([`clamp_unit`]): a VOP3 (VOP3a) or SDWA VALU instruction, not a compare, with clamp set and an f16, f32 or
/// f64 result (the mnemonic's first type; gfx942's fp8/bf8 to f32 conversions, whose table rows name no types,
/// have f32 results: one, or two for the packed forms, each clamped).
///
/// Output modifiers (VOP3 and SDWA omod: the result times 2, 4 or 0.5) change nothing. The ISA guides' VALU
/// chapter: output modifiers are ignored when output denormals are enabled (and when the IEEE mode bit is
/// set); every float mode the engines run keeps denormals for f16, f32 and f64 alike (a descriptor that flushes
/// them is refused at dispatch, and s_setreg cannot change them), as clang's kernels do with IEEE mode on.
pub(super) fn float_clamp(inst: &Inst) -> Option<DataType> {
    let clamp = match inst.form {
        isa_amdgpu::Form::Sdwa => inst.encoding() != Encoding::Vopc && inst.ext().is_some_and(|e| e >> 13 & 1 == 1),
        isa_amdgpu::Form::Plain => {
            inst.encoding() == Encoding::Vop3
                && inst.info.operand(Field::Sdst).is_none()
                && inst.field(Field::Clamp) == 1
        }
        _ => false,
    };
    if !clamp || inst.info.compare.is_some() || inst.info.operand(Field::Vdst).is_none() {
        return None;
    }
    if f8_to_f32(inst) {
        return Some(DataType::F32);
    }
    inst.info
        .dst_type
        .filter(|t| matches!(t, DataType::F16 | DataType::F32 | DataType::F64))
}

/// gfx942's conversions of 8-bit floats to f32 (one, or two for the packed forms).
fn f8_to_f32(inst: &Inst) -> bool {
    use isa_amdgpu::Opcode as O;
    matches!(
        inst.info.opcode,
        O::VCvtF32Fp8 | O::VCvtF32Bf8 | O::VCvtPkF32Fp8 | O::VCvtPkF32Bf8
    )
}

/// Float lanes clamped to [0, 1]: f32 lanes, f16 values in the low halves (the high halves cleared) or f64
/// lanes as (lo, hi). The maxNum of the value and +0, then the minNum with 1: a NaN becomes 0 (as DX10_CLAMP,
/// on in every mode the engines run, has it) and -0 becomes +0.
pub(super) fn clamp_unit<B: Backend>(b: &mut B, ty: DataType, v: &[B::V]) -> Vec<B::V> {
    use crate::lanefn::{F16Op, LaneFn};
    match ty {
        DataType::F16 => {
            let (zero, one) = (splat(b, 0), splat(b, 0x3c00));
            let low = splat(b, 0xffff);
            let x = b.v_op(VOp::And, v[0], low);
            let x = b.v_lanefn(LaneFn::F16(F16Op::Max), &[x, zero])[0];
            vec![b.v_lanefn(LaneFn::F16(F16Op::Min), &[x, one])[0]]
        }
        DataType::F64 => {
            let (zero, one_hi) = (splat(b, 0), splat(b, 0x3ff0_0000));
            let x = b.v_lanefn(LaneFn::MaxF64, &[v[0], v[1], zero, zero]);
            b.v_lanefn(LaneFn::MinF64, &[x[0], x[1], zero, one_hi])
        }
        _ => {
            let (zero, one) = (splat(b, 0), splat(b, 0x3f80_0000));
            let x = b.v_op(VOp::MaxF32, v[0], zero);
            vec![b.v_op(VOp::MinF32, x, one)]
        }
    }
}

/// The VGPR a VOP writes.
pub(super) fn vdst(inst: &Inst) -> u32 {
    inst.field(Field::Vdst)
}

/// A zero vector.
pub(super) fn b_zero<B: Backend>(b: &mut B) -> B::V {
    let z = b.s_const(0);
    b.v_splat(z)
}

/// Writes a 64-bit value to an SGPR pair.
pub(super) fn s_set64<B: Backend>(b: &mut B, d: u32, lo: B::S, hi: B::S) {
    b.s_set(d, lo);
    b.s_set(d + 1, hi);
}

/// 1 when hi:lo != 0, else 0.
pub(super) fn nonzero64<B: Backend>(b: &mut B, lo: B::S, hi: B::S) -> B::S {
    let any = b.s_op(SOp::Or, lo, hi);
    b.s_nonzero(any)
}

/// SCC = (hi:lo != 0).
pub(super) fn scc_nonzero64<B: Backend>(b: &mut B, lo: B::S, hi: B::S) {
    let nz = nonzero64(b, lo, hi);
    b.set_scc(nz);
}

/// Writes a per-lane result mask (inactive lanes cleared) to VCC or, in VOP3 forms, to `dst_field`.
pub(super) fn write_lane_mask<B: Backend>(b: &mut B, inst: &Inst, dst_field: Field, m: B::M) {
    let exec = b.exec();
    let m = b.mask_op(MaskOp::And, m, exec);
    let (lo, hi) = b.mask_parts(m);
    let dst = if inst.encoding() == Encoding::Vop3 {
        inst.field(dst_field)
    } else {
        // SDWA VOPC may name its destination, otherwise VCC
        inst.sdwa_sdst().unwrap_or(106)
    };
    s_set64(b, dst, lo, hi);
}

/// The second source of a VOP2 (a VGPR, with DPP's neg/abs) or VOP3 (any source).
pub(super) fn second_src<B: Backend>(b: &mut B, inst: &Inst) -> Result<B::V, ExecError> {
    match inst.encoding() {
        Encoding::Vop3 => vec_src(b, inst, Field::Src1),
        _ => {
            let r = inst.field(Field::Vsrc1);
            if let Some((reg, scalar)) = inst.sdwa_source(Field::Vsrc1) {
                return sdwa_src(b, inst, reg, scalar, inst.ext().unwrap_or(0) >> 24 & 0x3f, Field::Vsrc1);
            }
            let v = b.v_get(r);
            if inst.form == isa_amdgpu::Form::Dpp {
                let e = inst.ext().unwrap_or(0);
                let sign = float_sign(inst);
                return apply_mods(b, inst, v, e >> 22 & 1 == 1, e >> 23 & 1 == 1, sign, Field::Vsrc1);
            }
            Ok(v)
        }
    }
}

/// Source lane of every lane for a DPP control, and the mask of lanes whose source is in range. A source lane
/// that is in range but disabled in EXEC is read as it stands (hardware counts it invalid); wavejit does not model that.
pub(super) fn dpp_sources(inst: &Inst, ctrl: u32) -> Result<([i32; 64], u64), ExecError> {
    let mut src = [0i32; 64];
    let mut valid = 0u64;
    for (l, s) in src.iter_mut().enumerate() {
        let l = l as i32;
        let (row, pos) = (l & !15, l & 15);
        let c = ctrl as i32;
        let v = match ctrl {
            0x000..=0x0ff => Some((l & !3) | ((c >> (2 * (l & 3))) & 3)),
            0x101..=0x10f => Some(pos + (c & 15)).filter(|p| *p < 16).map(|p| row + p),
            0x111..=0x11f => Some(pos - (c & 15)).filter(|p| *p >= 0).map(|p| row + p),
            0x121..=0x12f => Some(row + (pos - (c & 15)).rem_euclid(16)),
            0x130 => Some(l + 1).filter(|x| *x < 64),
            0x134 => Some((l + 1) % 64),
            0x138 => Some(l - 1).filter(|x| *x >= 0),
            0x13c => Some((l + 63) % 64),
            0x140 => Some(row + 15 - pos),
            0x141 => Some((l & !7) + 7 - (l & 7)),
            0x142 => Some(row - 1).filter(|x| *x >= 0),
            0x143 => Some(31).filter(|_| l >= 32),
            0x150..=0x15f => Some(row + (c & 15)),
            _ => return Err(form(inst, "this dpp_ctrl")),
        };
        if let Some(x) = v {
            *s = x;
            valid |= 1 << l;
        }
    }
    Ok((src, valid))
}

/// Lanes a DPP instruction may write, given the EXEC it runs with: row_mask and bank_mask, and without
/// bound_ctrl only lanes whose source lane is valid — inside the row or wave and itself in EXEC (the wave
/// reductions of ROCm's device libraries rely on lanes whose source is inactive keeping their value).
pub(super) fn dpp_write_lanes<B: Backend>(b: &mut B, inst: &Inst, exec: B::M) -> Result<B::M, ExecError> {
    let e = inst.ext().unwrap_or(0);
    let (src, valid) = dpp_sources(inst, (e >> 8) & 0x1ff)?;
    let (row_mask, bank_mask, bound_ctrl) = ((e >> 28) & 0xf, (e >> 24) & 0xf, (e >> 19) & 1);
    let mut m = 0u64;
    for l in 0..64u32 {
        if row_mask >> (l / 16) & 1 == 1 && bank_mask >> ((l >> 2) & 3) & 1 == 1 {
            m |= 1 << l;
        }
    }
    let fixed = if bound_ctrl == 1 { m } else { m & valid };
    let (fl, fh) = (b.s_const(fixed as u32), b.s_const((fixed >> 32) as u32));
    let fixed = b.mask_from(fl, fh);
    let allowed = b.mask_op(MaskOp::And, exec, fixed);
    if bound_ctrl == 1 {
        return Ok(allowed);
    }
    // the source lane's EXEC bit, moved to the lane that reads it
    let idx = b.v_const(&src.map(|x| x as u32));
    let one = b.s_const(1);
    let ones = b.v_splat(one);
    let active = b.v_permute(ones, idx, exec);
    let zero = b_zero(b);
    let active = b.v_cmp(cmp::NE_U32, active, zero);
    Ok(b.mask_op(MaskOp::And, allowed, active))
}

/// Reads VGPR `reg`, or AGPR `reg` when `acc`.
pub(super) fn data_get<B: Backend>(b: &mut B, acc: bool, reg: u32) -> B::V {
    if acc {
        b.a_get(reg)
    } else {
        b.v_get(reg)
    }
}

/// Writes VGPR `reg`, or AGPR `reg` when `acc`, in the lanes of `m`.
pub(super) fn data_set<B: Backend>(b: &mut B, acc: bool, reg: u32, v: B::V, m: B::M) {
    if acc {
        b.a_set(reg, v, m)
    } else {
        b.v_set(reg, v, m)
    }
}

pub(super) fn splat<B: Backend>(b: &mut B, x: u32) -> B::V {
    let s = b.s_const(x);
    b.v_splat(s)
}

/// Clamp where the instruction's own semantics do not take it: refused, unless it clamps a float result
/// ([`float_clamp`]); omod is ignored (the same).
pub(super) fn no_output_mods(inst: &Inst) -> Result<(), ExecError> {
    let vop3 = inst.encoding() == Encoding::Vop3 && float_clamp(inst).is_none();
    if vop3 && inst.field(Field::Clamp) != 0 {
        return Err(form(
            inst,
            match inst.info.operand(Field::Sdst) {
                Some(_) => "clamp on an instruction that also writes a lane mask",
                None => "clamp of an integer result (saturation)",
            },
        ));
    }
    if inst.encoding() == Encoding::Vop3p && inst.field(Field::Clamp) != 0 {
        return Err(form(inst, "clamp"));
    }
    Ok(())
}

/// Source `k` (0, 1, 2) of a VOP1/VOP2/VOPC/VOP3/SDWA instruction as 32 bits (VOP2's second source is vsrc1).
pub(super) fn src<B: Backend>(b: &mut B, inst: &Inst, k: usize) -> Result<B::V, ExecError> {
    match k {
        0 => vec_src(b, inst, Field::Src0),
        1 => second_src(b, inst),
        _ => vec_src(b, inst, Field::Src2),
    }
}

/// Source `k` as a 16-bit value in the low half: VOP3's op_sel[k] picks the high half.
pub(super) fn src16<B: Backend>(b: &mut B, inst: &Inst, k: usize) -> Result<B::V, ExecError> {
    let v = src(b, inst, k)?;
    let vop3 = inst.encoding() == Encoding::Vop3 && inst.info.operand(Field::Sdst).is_none();
    if vop3 && inst.field(Field::OpSel) >> k & 1 == 1 {
        if (inst.field(Field::Neg) | inst.field(Field::Abs)) >> k & 1 == 1 {
            return Err(form(inst, "neg/abs on a high-half (op_sel) source"));
        }
        let sh = splat(b, 16);
        return Ok(b.v_op(VOp::Lshr, v, sh));
    }
    Ok(v)
}

/// Writes a 16-bit result: the low half with the high half zeroed (GFX9), or with VOP3 op_sel[3] the high
/// half, the low half kept.
pub(super) fn write16<B: Backend>(b: &mut B, inst: &Inst, r: B::V) {
    let d = vdst(inst);
    let m = b.exec();
    let lo16 = splat(b, 0xffff);
    let r = b.v_op(VOp::And, r, lo16);
    let vop3 = inst.encoding() == Encoding::Vop3;
    if vop3 && inst.field(Field::OpSel) >> 3 & 1 == 1 {
        let old = b.v_get(d);
        let old = b.v_op(VOp::And, old, lo16);
        let sh = splat(b, 16);
        let hi = b.v_op(VOp::Shl, r, sh);
        let v = b.v_op(VOp::Or, old, hi);
        b.v_set(d, v, m);
    } else {
        b.v_set(d, r, m);
    }
}

pub(super) fn set64<B: Backend>(b: &mut B, d: u32, v: &[B::V]) {
    let m = b.exec();
    b.v_set(d, v[0], m);
    b.v_set(d + 1, v[1], m);
}

/// A VOP3P source register (or constant) without modifiers.
pub(super) fn raw_src<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<B::V, ExecError> {
    let v = inst.field(field);
    if v >= 256 {
        return Ok(b.v_get(v - 256));
    }
    let s = super::scalar_src(b, inst, v)?;
    Ok(b.v_splat(s))
}

/// A packed 16-bit source (VOP3P v2f16/v2i16): a register's 32 bits, or an inline constant as its 16-bit value
/// (the f16 encoding of a float constant, an integer's low 16 bits) in the low half with the high half zero.
/// LLVM relies on the zero high half: SIFoldOperands folds a packed immediate whose high half is zero keeping
/// op_sel_hi, and one with both halves set only by clearing op_sel_hi so that the high element reads the low
/// half.
pub(super) fn packed_src<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<B::V, ExecError> {
    match inline_value(inst.field(field), FloatWidth::F16) {
        Some(c) => {
            let c = b.s_const(c as u32 & 0xffff);
            Ok(b.v_splat(c))
        }
        None => raw_src(b, inst, field),
    }
}

/// For match arms that the enclosing pattern already excludes.
pub(super) fn unreachable_arm<T>(inst: &Inst) -> Result<T, ExecError> {
    Err(super::unsupported(inst))
}

/// Which half of a register a d16 access uses: `None` the whole register, `Some(false)` the low half (the
/// high half kept), `Some(true)` the high half.
pub(super) fn d16_half(flags: MemFlags) -> Option<bool> {
    if flags.contains(MemFlags::D16_HI) {
        Some(true)
    } else if flags.contains(MemFlags::D16_LO) {
        Some(false)
    } else {
        None
    }
}

/// Writes a narrow load's value (already sign- or zero-extended to 32 bits) to VGPR or AGPR `dst`: the whole
/// register, or (d16) its low 16 bits into one half with the other half kept.
pub(super) fn write_narrow<B: Backend>(b: &mut B, acc: bool, dst: u32, v: B::V, half: Option<bool>, m: B::M) {
    let v = match half {
        None => v,
        Some(hi) => {
            let old = data_get(b, acc, dst);
            let (keep, lo16) = (splat(b, if hi { 0xffff } else { 0xffff_0000 }), splat(b, 0xffff));
            let kept = b.v_op(VOp::And, old, keep);
            let v = b.v_op(VOp::And, v, lo16);
            let v = if hi {
                let sh = splat(b, 16);
                b.v_op(VOp::Shl, v, sh)
            } else {
                v
            };
            b.v_op(VOp::Or, kept, v)
        }
    };
    data_set(b, acc, dst, v, m);
}

/// The data of a narrow store from VGPR or AGPR `reg`: its low bits, or (`_d16_hi`) its high half.
pub(super) fn store_data<B: Backend>(b: &mut B, acc: bool, reg: u32, hi: bool) -> B::V {
    let v = data_get(b, acc, reg);
    if hi {
        let sh = splat(b, 16);
        b.v_op(VOp::Lshr, v, sh)
    } else {
        v
    }
}
