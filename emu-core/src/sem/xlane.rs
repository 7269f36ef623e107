//! Cross-lane operations: reading a lane into an SGPR (v_readlane, v_readfirstlane), writing one lane
//! (v_writelane), and the DS lane permutes (ds_swizzle, ds_bpermute, ds_permute) that move data between lanes
//! without touching LDS.

use isa_amdgpu::encoding::Field;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};

/// Executes a cross-lane instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::VReadfirstlaneB32 => {
            let src = inst.field(Field::Src0);
            let v = if src >= 256 { b.v_get(src - 256) } else { vec_src(b, inst, Field::Src0)? };
            let exec = b.exec();
            let r = b.v_first_lane(v, exec);
            b.s_set(inst.field(Field::Vdst), r);
            Ok(Flow::Next)
        }
        O::VWritelaneB32 => {
            // lane (S1 & 63) of VDST = the scalar S0, whatever EXEC says
            no_modifiers(inst)?;
            let v = scalar_src(b, inst, inst.field(Field::Src0))?;
            let lane = scalar_src(b, inst, inst.field(Field::Src1))?;
            let (k63, k32, k31, one, zero) = (b.s_const(63), b.s_const(32), b.s_const(31), b.s_const(1), b.s_const(0));
            let lane = b.s_op(SOp::And, lane, k63);
            let low = b.s_op(SOp::LtU, lane, k32);
            let bit = b.s_op(SOp::And, lane, k31);
            let bit = b.s_op(SOp::Shl, one, bit);
            let (lo, hi) = (b.s_select(low, bit, zero), b.s_select(low, zero, bit));
            let m = b.mask_from(lo, hi);
            let v = b.v_splat(v);
            b.v_set(vdst(inst), v, m);
            Ok(Flow::Next)
        }
        O::VReadlaneB32 => {
            no_modifiers(inst)?;
            let v = vec_src(b, inst, Field::Src0)?;
            let lane = scalar_src(b, inst, inst.field(Field::Src1))?;
            let r = b.v_lane_read(v, lane);
            b.s_set(inst.field(Field::Vdst), r);
            Ok(Flow::Next)
        }
        O::DsBpermuteB32 | O::DsPermuteB32 | O::DsSwizzleB32 => {
            if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
                return Err(form(inst, "GDS or AGPR data"));
            }
            let m = b.exec();
            let offset = inst.field(Field::Offset0) | inst.field(Field::Offset1) << 8;
            let (data, index) = match inst.info.opcode {
                O::DsSwizzleB32 => {
                    let data = b.v_get(inst.field(Field::Addr));
                    let ids = b.v_lane_ids();
                    (data, swizzle_sources(b, ids, offset))
                }
                _ => {
                    // the lane = (addr + offset) / 4 (mod 64): bpermute reads from it, permute writes to it
                    let addr = b.v_get(inst.field(Field::Addr));
                    let off = b.s_const(offset);
                    let off = b.v_splat(off);
                    let byte = b.v_op(VOp::AddU32, addr, off);
                    let two = b.s_const(2);
                    let two = b.v_splat(two);
                    (b.v_get(inst.field(Field::Data0)), b.v_op(VOp::Lshr, byte, two))
                }
            };
            let r = if inst.info.opcode == O::DsPermuteB32 { b.v_permute_forward(data, index, m) } else { b.v_permute(data, index, m) };
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        _ => Err(unsupported(inst)),
    }
}

/// Source lane of every lane for a ds_swizzle pattern: QUAD_PERM (bit 15: lanes within a quad), or BITMASK
/// (((lane & and) | or) ^ xor within groups of 32).
fn swizzle_sources<B: Backend>(b: &mut B, ids: B::V, pattern: u32) -> B::V {
    let splat = |b: &mut B, x: u32| {
        let s = b.s_const(x);
        b.v_splat(s)
    };
    if pattern & 0x8000 != 0 {
        // quad base + the 2-bit selector for (lane & 3)
        let three = splat(b, 3);
        let pos = b.v_op(VOp::And, ids, three);
        let two = splat(b, 2);
        let shift = b.v_op(VOp::Shl, pos, two);
        let sel = splat(b, pattern & 0xff);
        let sel = b.v_op(VOp::Lshr, sel, shift);
        let sel = b.v_op(VOp::And, sel, three);
        let not3 = splat(b, !3);
        let base = b.v_op(VOp::And, ids, not3);
        b.v_op(VOp::Or, base, sel)
    } else {
        let (and, or, xor) = (pattern & 0x1f, (pattern >> 5) & 0x1f, (pattern >> 10) & 0x1f);
        let group = splat(b, !0x1f);
        let base = b.v_op(VOp::And, ids, group);
        let m_and = splat(b, and);
        let m_or = splat(b, or);
        let m_xor = splat(b, xor);
        let low = b.v_op(VOp::And, ids, m_and);
        let low = b.v_op(VOp::Or, low, m_or);
        let low = b.v_op(VOp::Xor, low, m_xor);
        b.v_op(VOp::Or, base, low)
    }
}
