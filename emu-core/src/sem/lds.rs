//! LDS (DS) instructions: loads and stores of 1 to 16 bytes, two-address forms, d16 halves, atomics of 32 and
//! 64 bits, compare-and-store, and the global wave sync barrier. The cross-lane DS instructions are in
//! [`super::xlane`].

use isa_amdgpu::encoding::Field;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};
use super::vmem::atomic_op;

/// Executes a DS instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::DsWriteB32 | O::DsWriteB64 | O::DsWriteB96 | O::DsWriteB128 | O::DsWrite2B32 | O::DsWrite2st64B32
        | O::DsWrite2B64 | O::DsWrite2st64B64 | O::DsReadB32 | O::DsReadB64 | O::DsReadB96 | O::DsReadB128
        | O::DsRead2B32 | O::DsRead2st64B32 | O::DsRead2B64 | O::DsRead2st64B64 => {
            if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
                return Err(form(inst, "GDS or AGPR data"));
            }
            let addr = b.v_get(inst.field(Field::Addr));
            let m = b.exec();
            let (o0, o1) = (inst.field(Field::Offset0), inst.field(Field::Offset1));
            let single = o0 | o1 << 8;
            // (bytes per element offset unit, two addresses?, dwords per element)
            let (stride, two, dwords) = match inst.info.opcode {
                O::DsWrite2B32 | O::DsRead2B32 => (4, true, 1),
                O::DsWrite2st64B32 | O::DsRead2st64B32 => (256, true, 1),
                O::DsWrite2B64 | O::DsRead2B64 => (8, true, 2),
                O::DsWrite2st64B64 | O::DsRead2st64B64 => (512, true, 2),
                O::DsWriteB64 | O::DsReadB64 => (0, false, 2),
                O::DsWriteB96 | O::DsReadB96 => (0, false, 3),
                O::DsWriteB128 | O::DsReadB128 => (0, false, 4),
                _ => (0, false, 1),
            };
            if inst.info.name.starts_with("ds_write") {
                let d0 = inst.field(Field::Data0);
                if two {
                    let d1 = inst.field(Field::Data1);
                    let v0: Vec<B::V> = (0..dwords).map(|i| b.v_get(d0 + i)).collect();
                    let v1: Vec<B::V> = (0..dwords).map(|i| b.v_get(d1 + i)).collect();
                    b.lds_write(addr, o0 * stride, &v0, m)?;
                    b.lds_write(addr, o1 * stride, &v1, m)?;
                } else {
                    let data: Vec<B::V> = (0..dwords).map(|i| b.v_get(d0 + i)).collect();
                    b.lds_write(addr, single, &data, m)?;
                }
            } else {
                let dst = vdst(inst);
                if two {
                    let r0 = b.lds_read(addr, o0 * stride, dwords, m)?;
                    let r1 = b.lds_read(addr, o1 * stride, dwords, m)?;
                    for (i, v) in r0.into_iter().chain(r1).enumerate() {
                        b.v_set(dst + i as u32, v, m);
                    }
                } else {
                    let r = b.lds_read(addr, single, dwords, m)?;
                    for (i, v) in r.into_iter().enumerate() {
                        b.v_set(dst + i as u32, v, m);
                    }
                }
            }
            Ok(Flow::Next)
        }

        O::DsAddU32 | O::DsSubU32 | O::DsAndB32 | O::DsOrB32 | O::DsXorB32 | O::DsMinI32 | O::DsMaxI32 | O::DsMinU32
        | O::DsMaxU32 | O::DsIncU32 | O::DsDecU32 | O::DsAddF32 | O::DsAddRtnU32 | O::DsSubRtnU32 | O::DsAndRtnB32
        | O::DsOrRtnB32 | O::DsXorRtnB32 | O::DsMinRtnI32 | O::DsMaxRtnI32 | O::DsMinRtnU32 | O::DsMaxRtnU32
        | O::DsWrxchgRtnB32 | O::DsAddRtnF32 => {
            if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
                return Err(form(inst, "GDS or AGPR data"));
            }
            let op = atomic_op(inst.info.name).ok_or_else(|| unsupported(inst))?;
            let addr = b.v_get(inst.field(Field::Addr));
            let data = b.v_get(inst.field(Field::Data0));
            let m = b.exec();
            let offset = inst.field(Field::Offset0) | inst.field(Field::Offset1) << 8;
            let old = b.lds_atomic(op, addr, offset, data, m)?;
            if inst.info.operand(Field::Vdst).is_some() {
                b.v_set(vdst(inst), old, m);
            }
            Ok(Flow::Next)
        }
        O::DsBpermuteB32 | O::DsPermuteB32 | O::DsSwizzleB32 => super::xlane::execute(b, inst),
        _ => super::memory::execute(b, inst).unwrap_or_else(|| Err(unsupported(inst))),
    }
}
