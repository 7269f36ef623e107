//! VGPR index mode (the CDNA3 ISA guide's "VGPR Indexing"): `s_set_gpr_idx_on` turns it on (MODE.gpr_idx_en)
//! and sets M0[7:0] (the index) and M0[15:12] (the mode: bit 12 src0, 13 src1, 14 src2, 15 the destination),
//! `s_set_gpr_idx_idx` and `s_set_gpr_idx_mode` change those fields, `s_set_gpr_idx_off` turns it off. While it
//! is on, a VALU instruction adds the index to the VGPR operands the mode selects (not to SGPRs or constants);
//! addressing a VGPR past v255 that way is illegal.
//!
//! Compilers use the mode around one `v_mov_b32` (a dynamic extract or insert of a vector element): that is
//! what wavejit executes in index mode, with `v_nop`. Any other VALU instruction while it is on stops with a
//! message naming it. Compiled code never runs in the mode (see [`Backend::index_mode`]).

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::{Form, Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};
use crate::wave::sreg::M0;

/// Executes one of the index mode's state instructions.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::SSetGprIdxOn => {
            let s0 = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            set_m0_bits(b, s0, 0xff);
            let mode = b.s_const((inst.field(Field::Ssrc1) & 0xf) << 12);
            set_m0_bits(b, mode, 0xf000);
            b.set_index_mode(true);
        }
        O::SSetGprIdxIdx => {
            let s0 = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            set_m0_bits(b, s0, 0xff);
        }
        O::SSetGprIdxMode => {
            let mode = b.s_const((inst.field(Field::Simm16) & 0xf) << 12);
            set_m0_bits(b, mode, 0xf000);
        }
        O::SSetGprIdxOff => b.set_index_mode(false),
        _ => return Err(unsupported(inst)),
    }
    Ok(Flow::Next)
}

/// M0 with the bits of `mask` taken from `v`, the others kept.
fn set_m0_bits<B: Backend>(b: &mut B, v: B::S, mask: u32) {
    let m0 = b.s_get(M0);
    let (keep, take) = (b.s_const(!mask), b.s_const(mask));
    let kept = b.s_op(SOp::And, m0, keep);
    let taken = b.s_op(SOp::And, v, take);
    let m0 = b.s_op(SOp::Or, kept, taken);
    b.s_set(M0, m0);
}

/// Whether index mode changes what `inst` does: it is a VALU instruction.
pub(super) fn applies(inst: &Inst) -> bool {
    matches!(
        inst.encoding(),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p
    )
}

/// A VALU instruction in index mode: `v_mov_b32` (plain VOP1 or VOP3 without modifiers) with its VGPR source
/// and destination indexed as the mode says, or `v_nop`.
pub(super) fn valu<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    match inst.info.opcode {
        Opcode::VNop => return Ok(Flow::Next),
        Opcode::VMovB32 if inst.form == Form::Plain => {}
        _ => {
            return Err(form(
                inst,
                "VGPR index mode (s_set_gpr_idx_on) on an instruction other than v_mov_b32",
            ))
        }
    }
    if inst.encoding() == Encoding::Vop3
        && (inst.field(Field::Neg) | inst.field(Field::Abs) | inst.field(Field::Clamp) | inst.field(Field::Omod)) != 0
    {
        return Err(form(
            inst,
            "VGPR index mode (s_set_gpr_idx_on) on a v_mov_b32 with input or output modifiers",
        ));
    }
    let m0 = b.s_get(M0);
    let k = b.s_const(0xff);
    let index = b.s_op(SOp::And, m0, k);
    // an indexed operand: register + index where the mode bit is set, checked against v255
    let indexed = |b: &mut B, reg: u32, bit: u32| -> Result<B::S, ExecError> {
        let (sh, one) = (b.s_const(bit), b.s_const(1));
        let on = b.s_op(SOp::Lshr, m0, sh);
        let on = b.s_op(SOp::And, on, one);
        let zero = b.s_const(0);
        let add = b.s_select(on, index, zero);
        let r = b.s_const(reg);
        let r = b.s_op(SOp::Add, r, add);
        let last = b.s_const(255);
        let past = b.s_op(SOp::LtU, last, r);
        let bad = b.mask_from(past, zero);
        b.fail_if_any(
            bad,
            ExecError::Illegal {
                mnemonic: inst.info.name,
                what: "VGPR index mode reaches past v255",
            },
        )?;
        Ok(r)
    };
    let src = inst.field(Field::Src0);
    let v = if src >= 256 {
        let r = indexed(b, src - 256, 12)?;
        b.v_get_at(r)
    } else {
        vec_src(b, inst, Field::Src0)?
    };
    let d = indexed(b, vdst(inst), 15)?;
    let m = b.exec();
    b.v_set_at(d, v, m);
    Ok(Flow::Next)
}
