//! Vector compares (v_cmp, v_cmpx) of every type and predicate, from the table's `compare` column: a lane mask
//! to VCC or an SGPR pair, and for v_cmpx to EXEC as well. What each predicate means, and the class test, are
//! [`crate::rules`]' definitions, which both engines follow.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::Implicit;
use isa_amdgpu::Inst;

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};

/// Executes a vector compare.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    let c = inst.info.compare.ok_or_else(|| unsupported(inst))?;
    // omod is ignored ([`float_clamp`])
    if inst.encoding() == Encoding::Vop3 && inst.field(Field::Clamp) != 0 {
        return Err(form(inst, "clamp on a compare"));
    }
    let class = c.pred == CmpPred::Class;
    let m = match c.ty.bits() {
        64 => {
            let a = vec_src64(b, inst, Field::Src0)?;
            let y = if class {
                let mask = second_src(b, inst)?;
                (mask, b_zero(b))
            } else if inst.encoding() == Encoding::Vop3 {
                vec_src64(b, inst, Field::Src1)?
            } else {
                let r = inst.field(Field::Vsrc1);
                (b.v_get(r), b.v_get(r + 1))
            };
            b.v_cmp64(c, a, y)
        }
        16 => {
            let a = src16(b, inst, 0)?;
            let y = if class { src(b, inst, 1)? } else { src16(b, inst, 1)? };
            b.v_cmp(c, a, y)
        }
        _ => {
            let a = src(b, inst, 0)?;
            let y = src(b, inst, 1)?;
            b.v_cmp(c, a, y)
        }
    };
    write_lane_mask(b, inst, Field::Vdst, m);
    if inst.info.writes.contains(Implicit::EXEC) {
        let exec = b.exec();
        let m = b.mask_op(MaskOp::And, m, exec);
        b.set_exec(m);
    }
    Ok(Flow::Next)
}
