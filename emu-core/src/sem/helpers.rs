//! VALU instructions computed by per-lane helper functions ([`crate::lanefn`]): 16-bit float and integer
//! arithmetic (with VOP3 op_sel and SDWA operand selects), compares of every type and predicate (v_cmp and
//! v_cmpx), the IEEE division steps, f64 rounding/classification and v_trig_preop, mixed-precision FMA and
//! packed f16. Selected by mnemonic, so each family is one table here rather than one arm per opcode.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::Inst;

use super::{b_zero, scalar_src, scalar_src64, s_set64, SOp, form, vdst, vec_src, vec_src64, second_src, write_lane_mask, Backend, ExecError, Flow, MaskOp, VCmp, VOp};
use crate::lanefn::{BitOp, F16Op, FCmp, I16Op, ICmp, LaneFn, Unary64, WordOp};

/// Executes `inst` if it belongs to one of the helper families; `None` if not.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Option<Result<Flow<B::S>, ExecError>> {
    let full = inst.info.name;
    let name = super::base_name(inst);
    if let Some(rest) = name.strip_prefix("v_cmpx_").or_else(|| name.strip_prefix("v_cmp_")) {
        return compare(b, inst, rest, full.starts_with("v_cmpx_"));
    }
    if let Some(op) = scalar_bits(name) {
        return Some(scalar(b, inst, op));
    }
    let shape = shape_of(name)?;
    Some(run(b, inst, shape))
}

/// How an instruction's operands map onto a helper.
#[derive(Clone, Copy)]
enum Shape {
    /// 16-bit sources (1, 2 or 3) -> 16-bit result; `mac` reads the destination as the third source.
    Half { f: LaneFn, n: usize, mac: bool, swap: bool },
    /// f32 source -> f16 result (v_cvt_f16_f32).
    HalfFromF32,
    /// f16 source -> f32 result (v_cvt_f32_f16).
    F32FromHalf,
    /// f64 source -> f64 or i32 result.
    Double(LaneFn),
    /// Two f64 sources -> f64.
    Double2(LaneFn),
    /// Three sources of `bits` each -> result (+ VCC-like mask for div_scale); div_fmas reads VCC.
    Div { f: LaneFn, wide: bool },
    /// f64 and a 32-bit segment -> f64.
    TrigPreop,
    /// Two f16 halves -> one register (v_pack_b32_f16).
    Pack,
    /// Mixed-precision fma (VOP3P): f32 result, or f16 into the low/high half.
    FmaMix { out: MixOut },
    /// Packed f16 (VOP3P): two halves per register.
    PkHalf { op: F16Op, n: usize },
    /// 32-bit sources -> 32-bit result.
    Word(WordOp),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MixOut {
    F32,
    Lo,
    Hi,
}

fn shape_of(name: &str) -> Option<Shape> {
    use F16Op as H;
    use I16Op as I;
    let half = |f: LaneFn, n: usize| Shape::Half { f, n, mac: false, swap: false };
    let f16 = |op: F16Op, n: usize| half(LaneFn::F16(op), n);
    let i16 = |op: I16Op| half(LaneFn::I16(op), if op == I::Mad { 3 } else { 2 });
    Some(match name {
        "v_add_f16" => f16(H::Add, 2),
        "v_sub_f16" => f16(H::Sub, 2),
        "v_subrev_f16" => Shape::Half { f: LaneFn::F16(H::Sub), n: 2, mac: false, swap: true },
        "v_mul_f16" => f16(H::Mul, 2),
        "v_min_f16" => f16(H::Min, 2),
        "v_max_f16" => f16(H::Max, 2),
        "v_ldexp_f16" => f16(H::Ldexp, 2),
        "v_fma_f16" => f16(H::Fma, 3),
        "v_mad_f16" | "v_mad_legacy_f16" => f16(H::Mad, 3),
        "v_div_fixup_f16" | "v_div_fixup_legacy_f16" => f16(H::DivFixup, 3),
        "v_mac_f16" => Shape::Half { f: LaneFn::F16(H::Mad), n: 3, mac: true, swap: false },
        "v_fmac_f16" => Shape::Half { f: LaneFn::F16(H::Fma), n: 3, mac: true, swap: false },
        "v_cvt_f16_u16" => f16(H::FromU16, 1),
        "v_cvt_f16_i16" => f16(H::FromI16, 1),
        "v_cvt_u16_f16" => f16(H::ToU16, 1),
        "v_cvt_i16_f16" => f16(H::ToI16, 1),
        "v_rcp_f16" => f16(H::Rcp, 1),
        "v_sqrt_f16" => f16(H::Sqrt, 1),
        "v_rsq_f16" => f16(H::Rsq, 1),
        "v_exp_f16" => f16(H::Exp, 1),
        "v_log_f16" => f16(H::Log, 1),
        "v_floor_f16" => f16(H::Floor, 1),
        "v_ceil_f16" => f16(H::Ceil, 1),
        "v_trunc_f16" => f16(H::Trunc, 1),
        "v_rndne_f16" => f16(H::Rndne, 1),
        "v_fract_f16" => f16(H::Fract, 1),
        "v_frexp_mant_f16" => f16(H::FrexpMant, 1),
        "v_frexp_exp_i16_f16" => f16(H::FrexpExp, 1),
        "v_sin_f16" => f16(H::Sin, 1),
        "v_cos_f16" => f16(H::Cos, 1),
        "v_add_u16" => i16(I::Add),
        "v_sub_u16" => i16(I::Sub),
        "v_subrev_u16" => Shape::Half { f: LaneFn::I16(I::Sub), n: 2, mac: false, swap: true },
        "v_mul_lo_u16" => i16(I::MulLo),
        "v_lshlrev_b16" => i16(I::Lshlrev),
        "v_lshrrev_b16" => i16(I::Lshrrev),
        "v_ashrrev_i16" => i16(I::Ashrrev),
        "v_max_u16" => i16(I::MaxU),
        "v_max_i16" => i16(I::MaxI),
        "v_min_u16" => i16(I::MinU),
        "v_min_i16" => i16(I::MinI),
        "v_mad_u16" | "v_mad_legacy_u16" => i16(I::Mad),
        "v_cvt_f16_f32" => Shape::HalfFromF32,
        "v_cvt_f32_f16" => Shape::F32FromHalf,
        "v_rsq_f64" => Shape::Double(LaneFn::F64Un(Unary64::Rsq)),
        "v_rndne_f64" => Shape::Double(LaneFn::F64Un(Unary64::Rndne)),
        "v_ceil_f64" => Shape::Double(LaneFn::F64Un(Unary64::Ceil)),
        "v_fract_f64" => Shape::Double(LaneFn::F64Un(Unary64::Fract)),
        "v_frexp_mant_f64" => Shape::Double(LaneFn::F64Un(Unary64::FrexpMant)),
        "v_frexp_exp_i32_f64" => Shape::Double(LaneFn::F64Un(Unary64::FrexpExp)),
        "v_min_f64" => Shape::Double2(LaneFn::MinF64),
        "v_max_f64" => Shape::Double2(LaneFn::MaxF64),
        "v_div_scale_f32" => Shape::Div { f: LaneFn::DivScaleF32, wide: false },
        "v_div_fmas_f32" => Shape::Div { f: LaneFn::DivFmasF32, wide: false },
        "v_div_fixup_f32" => Shape::Div { f: LaneFn::DivFixupF32, wide: false },
        "v_div_scale_f64" => Shape::Div { f: LaneFn::DivScaleF64, wide: true },
        "v_div_fmas_f64" => Shape::Div { f: LaneFn::DivFmasF64, wide: true },
        "v_div_fixup_f64" => Shape::Div { f: LaneFn::DivFixupF64, wide: true },
        "v_trig_preop_f64" => Shape::TrigPreop,
        "v_pack_b32_f16" => Shape::Pack,
        "v_fma_mix_f32" | "v_mad_mix_f32" => Shape::FmaMix { out: MixOut::F32 },
        "v_fma_mixlo_f16" | "v_mad_mixlo_f16" => Shape::FmaMix { out: MixOut::Lo },
        "v_fma_mixhi_f16" | "v_mad_mixhi_f16" => Shape::FmaMix { out: MixOut::Hi },
        "v_pk_fma_f16" => Shape::PkHalf { op: F16Op::Fma, n: 3 },
        "v_pk_add_f16" => Shape::PkHalf { op: F16Op::Add, n: 2 },
        "v_pk_mul_f16" => Shape::PkHalf { op: F16Op::Mul, n: 2 },
        "v_pk_min_f16" => Shape::PkHalf { op: F16Op::Min, n: 2 },
        "v_pk_max_f16" => Shape::PkHalf { op: F16Op::Max, n: 2 },
        "v_perm_b32" => Shape::Word(WordOp::Perm),
        "v_min3_f32" => Shape::Word(WordOp::Min3F32),
        "v_max3_f32" => Shape::Word(WordOp::Max3F32),
        "v_med3_f32" => Shape::Word(WordOp::Med3F32),
        "v_min3_i32" => Shape::Word(WordOp::Min3I32),
        "v_max3_i32" => Shape::Word(WordOp::Max3I32),
        "v_med3_i32" => Shape::Word(WordOp::Med3I32),
        "v_min3_u32" => Shape::Word(WordOp::Min3U32),
        "v_max3_u32" => Shape::Word(WordOp::Max3U32),
        "v_med3_u32" => Shape::Word(WordOp::Med3U32),
        "v_mul_hi_u32_u24" => Shape::Word(WordOp::MulHiU32U24),
        "v_mul_hi_i32_i24" => Shape::Word(WordOp::MulHiI32I24),
        "v_cvt_f32_ubyte0" => Shape::Word(WordOp::CvtF32Ubyte(0)),
        "v_cvt_f32_ubyte1" => Shape::Word(WordOp::CvtF32Ubyte(1)),
        "v_cvt_f32_ubyte2" => Shape::Word(WordOp::CvtF32Ubyte(2)),
        "v_cvt_f32_ubyte3" => Shape::Word(WordOp::CvtF32Ubyte(3)),
        _ => return None,
    })
}

fn splat<B: Backend>(b: &mut B, x: u32) -> B::V {
    let s = b.s_const(x);
    b.v_splat(s)
}

/// Clamp and output modifiers are not modelled: refuse them.
fn no_output_mods(inst: &Inst) -> Result<(), ExecError> {
    let vop3 = inst.encoding() == Encoding::Vop3 && inst.info.operand(Field::Sdst).is_none();
    if vop3 && (inst.field(Field::Clamp) | inst.field(Field::Omod)) != 0 {
        return Err(form(inst, "output modifiers (clamp/omod)"));
    }
    if inst.encoding() == Encoding::Vop3p && inst.field(Field::Clamp) != 0 {
        return Err(form(inst, "clamp"));
    }
    Ok(())
}

/// Source `k` (0, 1, 2) of a VOP1/VOP2/VOPC/VOP3/SDWA instruction as 32 bits (VOP2's second source is vsrc1).
fn src<B: Backend>(b: &mut B, inst: &Inst, k: usize) -> Result<B::V, ExecError> {
    match k {
        0 => vec_src(b, inst, Field::Src0),
        1 => second_src(b, inst),
        _ => vec_src(b, inst, Field::Src2),
    }
}

/// Source `k` as a 16-bit value in the low half: VOP3's op_sel[k] picks the high half.
fn src16<B: Backend>(b: &mut B, inst: &Inst, k: usize) -> Result<B::V, ExecError> {
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
fn write16<B: Backend>(b: &mut B, inst: &Inst, r: B::V) {
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

fn set64<B: Backend>(b: &mut B, d: u32, v: &[B::V]) {
    let m = b.exec();
    b.v_set(d, v[0], m);
    b.v_set(d + 1, v[1], m);
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
        Shape::Double(f) => {
            let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
            let r = b.v_lanefn(f, &[lo, hi]);
            if r.len() == 2 {
                set64(b, vdst(inst), &r);
            } else {
                let m = b.exec();
                b.v_set(vdst(inst), r[0], m);
            }
        }
        Shape::Double2(f) => {
            let (a, c) = (vec_src64(b, inst, Field::Src0)?, vec_src64(b, inst, Field::Src1)?);
            let r = b.v_lanefn(f, &[a.0, a.1, c.0, c.1]);
            set64(b, vdst(inst), &r);
        }
        Shape::Div { f, wide } => {
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
                let flag = b.v_cmp(VCmp::NeU32, r[r.len() - 1], zero);
                write_lane_mask(b, inst, Field::Sdst, flag);
            }
        }
        Shape::TrigPreop => {
            let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
            let seg = vec_src(b, inst, Field::Src1)?;
            let r = b.v_lanefn(LaneFn::TrigPreopF64, &[lo, hi, seg]);
            set64(b, vdst(inst), &r);
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
        Shape::Word(op) => {
            let mut args = Vec::with_capacity(3);
            for k in 0..LaneFn::Word(op).inputs() {
                args.push(src(b, inst, k)?);
            }
            let r = b.v_lanefn(LaneFn::Word(op), &args);
            let m = b.exec();
            b.v_set(vdst(inst), r[0], m);
        }
        Shape::FmaMix { out } => fma_mix(b, inst, out)?,
        Shape::PkHalf { op, n } => pk_half(b, inst, op, n)?,
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

/// A VOP3P source register (or constant) without modifiers.
fn raw_src<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<B::V, ExecError> {
    let v = inst.field(field);
    if v >= 256 {
        return Ok(b.v_get(v - 256));
    }
    let s = super::scalar_src(b, inst, v)?;
    Ok(b.v_splat(s))
}

/// Packed f16: element j (0 = low half, 1 = high half) of source k is the half op_sel[k] (j = 0) or
/// op_sel_hi[k] (j = 1) selects; neg_lo / neg_hi negate per element.
fn pk_half<B: Backend>(b: &mut B, inst: &Inst, op: F16Op, n: usize) -> Result<(), ExecError> {
    let opsel = inst.field(Field::OpSel);
    let opsel_hi = inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2;
    let (neg_lo, neg_hi) = (inst.field(Field::Neg), inst.field(Field::NegHi));
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
        halves.push(b.v_lanefn(LaneFn::F16(op), &e)[0]);
    }
    let hi = b.v_op(VOp::Shl, halves[1], sh);
    let v = b.v_op(VOp::Or, halves[0], hi);
    let m = b.exec();
    b.v_set(vdst(inst), v, m);
    Ok(())
}

/// v_cmp[x]_<pred>_<type> for the types and predicates the primitive compares leave out (f16, 16-bit
/// integers, every f64 predicate, f32 'f'/'tru'), and every v_cmpx (which writes EXEC as well as VCC/sdst).
fn compare<B: Backend>(b: &mut B, inst: &Inst, rest: &str, cmpx: bool) -> Option<Result<Flow<B::S>, ExecError>> {
    let (pred, ty) = rest.rsplit_once('_')?;
    let f = match ty {
        "f16" => LaneFn::CmpF16(FCmp::from_name(pred)?),
        "f32" => LaneFn::CmpF32(FCmp::from_name(pred)?),
        "f64" => LaneFn::CmpF64(FCmp::from_name(pred)?),
        "u16" | "i16" | "u32" | "i32" | "u64" | "i64" => {
            let bits = ty[1..].parse().ok()?;
            LaneFn::CmpInt(ICmp::from_name(pred)?, bits, ty.starts_with('i'))
        }
        _ => return None,
    };
    Some(compare_with(b, inst, f, cmpx))
}

fn compare_with<B: Backend>(b: &mut B, inst: &Inst, f: LaneFn, cmpx: bool) -> Result<Flow<B::S>, ExecError> {
    if inst.encoding() == Encoding::Vop3 && (inst.field(Field::Clamp) | inst.field(Field::Omod)) != 0 {
        return Err(form(inst, "clamp"));
    }
    let class = matches!(f, LaneFn::CmpF16(FCmp::Class) | LaneFn::CmpF32(FCmp::Class) | LaneFn::CmpF64(FCmp::Class));
    let wide = matches!(f, LaneFn::CmpF64(_) | LaneFn::CmpInt(_, 64, _));
    let narrow = matches!(f, LaneFn::CmpF16(_) | LaneFn::CmpInt(_, 16, _));
    let mut args = Vec::with_capacity(4);
    if wide {
        let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
        args.extend([lo, hi]);
    } else if narrow {
        args.push(src16(b, inst, 0)?);
    } else {
        args.push(src(b, inst, 0)?);
    }
    if wide && !class {
        let (lo, hi) = if inst.encoding() == Encoding::Vop3 {
            vec_src64(b, inst, Field::Src1)?
        } else {
            let r = inst.field(Field::Vsrc1);
            (b.v_get(r), b.v_get(r + 1))
        };
        args.extend([lo, hi]);
    } else if narrow && !class {
        args.push(src16(b, inst, 1)?);
    } else {
        args.push(src(b, inst, 1)?);
    }
    let r = b.v_lanefn(f, &args);
    let zero = b_zero(b);
    let m = b.v_cmp(VCmp::NeU32, r[0], zero);
    write_lane_mask(b, inst, Field::Vdst, m);
    if cmpx {
        let exec = b.exec();
        let m = b.mask_op(MaskOp::And, m, exec);
        b.set_exec(m);
    }
    Ok(Flow::Next)
}

/// Scalar bit counts and field extractions.
fn scalar_bits(name: &str) -> Option<BitOp> {
    Some(match name {
        "s_flbit_i32_b32" => BitOp::Clz32,
        "s_flbit_i32" | "s_flbit_i32_i32" => BitOp::Cls32,
        "s_flbit_i32_b64" => BitOp::Clz64,
        "s_flbit_i32_i64" => BitOp::Cls64,
        "s_ff1_i32_b64" => BitOp::Ctz64,
        "s_bfe_u64" => BitOp::Bfe64 { signed: false },
        "s_bfe_i64" => BitOp::Bfe64 { signed: true },
        "s_bfe_i32" => BitOp::BfeI32,
        _ => return None,
    })
}

/// SOP1/SOP2 bit operations: 64-bit sources where the operation is 64-bit; the field extractions set SCC to
/// result != 0.
fn scalar<B: Backend>(b: &mut B, inst: &Inst, op: BitOp) -> Result<Flow<B::S>, ExecError> {
    let mut args = Vec::with_capacity(3);
    match op {
        BitOp::Clz64 | BitOp::Cls64 | BitOp::Ctz64 | BitOp::Bfe64 { .. } => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            args.extend([lo, hi]);
        }
        _ => args.push(scalar_src(b, inst, inst.field(Field::Ssrc0))?),
    }
    if matches!(op, BitOp::Bfe64 { .. } | BitOp::BfeI32) {
        args.push(scalar_src(b, inst, inst.field(Field::Ssrc1))?);
    }
    let r = b.s_lanefn(LaneFn::Bits(op), &args);
    let d = inst.field(Field::Sdst);
    if r.len() == 2 {
        s_set64(b, d, r[0], r[1]);
        let any = b.s_op(SOp::Or, r[0], r[1]);
        let nz = b.s_nonzero(any);
        b.set_scc(nz);
    } else {
        b.s_set(d, r[0]);
        if op == BitOp::BfeI32 {
            let nz = b.s_nonzero(r[0]);
            b.set_scc(nz);
        }
    }
    Ok(Flow::Next)
}
