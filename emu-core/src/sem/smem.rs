//! Scalar memory: loads through the scalar cache into SGPRs, scalar cache control, and the clocks a wave reads
//! through the scalar unit (`s_memtime`, `s_memrealtime`).

use isa_amdgpu::encoding::Field;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::{form, unsupported, ExecError, Flow};

/// Executes an SMEM instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::SLoadDword | O::SLoadDwordx2 | O::SLoadDwordx4 | O::SLoadDwordx8 | O::SLoadDwordx16 => {
            let dwords = match inst.info.opcode {
                O::SLoadDword => 1,
                O::SLoadDwordx2 => 2,
                O::SLoadDwordx4 => 4,
                O::SLoadDwordx8 => 8,
                _ => 16,
            };
            let base = inst.field(Field::Sbase) * 2;
            let (lo, hi) = (b.s_get(base), b.s_get(base + 1));
            // an immediate offset is a signed 21-bit byte count, an SGPR offset an unsigned 32-bit one
            let (offset, high) = match (inst.field(Field::Imm), inst.field(Field::Soe)) {
                (1, 0) => {
                    let o = ((inst.field(Field::Offset) << 11) as i32) >> 11;
                    (b.s_const(o as u32), b.s_const(if o < 0 { u32::MAX } else { 0 }))
                }
                (0, 0) => (b.s_get(inst.field(Field::Offset) & 0x7f), b.s_const(0)),
                _ => return Err(form(inst, "SGPR offset plus immediate")),
            };
            let zero = b.s_const(0);
            let (lo, carry) = b.s_add_carry(lo, offset, zero);
            let (hi, _) = b.s_add_carry(hi, high, carry);
            let data = b.s_load(lo, hi, dwords)?;
            let dst = inst.field(Field::Sdata);
            for (i, d) in data.into_iter().enumerate() {
                b.s_set(dst + i as u32, d);
            }
            Ok(Flow::Next)
        }

        O::SMemtime | O::SMemrealtime => {
            let clock = if inst.info.opcode == O::SMemtime { Clock::Shader } else { Clock::Real };
            let (lo, hi) = b.s_clock(clock);
            let dst = inst.field(Field::Sdata);
            b.s_set(dst, lo);
            b.s_set(dst + 1, hi);
            Ok(Flow::Next)
        }
        O::SDcacheWb | O::SDcacheInv => {
            // caches are not modelled functionally: memory is always coherent
            Ok(Flow::Next)
        }
        // the same for the volatile forms; discarding finds nothing dirty (no scalar store runs), and a probe of
        // the address translation returns nothing
        O::SDcacheWbVol | O::SDcacheInvVol | O::SDcacheDiscard | O::SDcacheDiscardX2 | O::SAtcProbe | O::SAtcProbeBuffer => Ok(Flow::Next),
        _ => Err(unsupported(inst)),
    }
}
