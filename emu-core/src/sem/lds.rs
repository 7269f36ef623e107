//! LDS (DS) instructions, from the table's `mem` and `atomic` columns: loads and stores of 1 to 16 bytes
//! (sign- or zero-extended, or into one half of a register: d16), the two-address forms (offsets in elements,
//! or in 64-element strides), the lane-id forms (addtid: M0[15:0] + lane × 4), atomics of 32 and 64 bits with
//! or without the old value, the two-operand ones (compare-and-store, masked or, wrap), the conditional
//! exchange, and global wave sync (barrier and semaphores). Data may be VGPRs or (gfx90a, gfx942) AGPRs. The cross-lane DS instructions
//! are in [`super::xlane`].

use isa_amdgpu::encoding::Field;
use isa_amdgpu::table::{MemDir, MemFlags};
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};

/// Executes a DS instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::DsBpermuteB32 | O::DsPermuteB32 | O::DsSwizzleB32 => return super::xlane::execute(b, inst),
        O::DsGwsInit | O::DsGwsBarrier | O::DsGwsSemaV | O::DsGwsSemaBr | O::DsGwsSemaP | O::DsGwsSemaReleaseAll => {
            return gws(b, inst)
        }
        O::DsNop => return Ok(Flow::Next),
        _ => {}
    }
    let mem = inst.info.mem;
    if inst.field(Field::Gds) == 1 {
        return Err(form(inst, "GDS"));
    }
    let acc = inst.field(Field::Acc) == 1;
    let addr = if mem.flags.contains(MemFlags::LANE_ID) {
        // addtid: M0[15:0] + lane id * 4 (then the offset as for any DS address)
        let m0 = b.s_get(crate::wave::sreg::M0);
        let k = b.s_const(0xffff);
        let base = b.s_op(SOp::And, m0, k);
        let base = b.v_splat(base);
        let ids = b.v_lane_ids();
        let four = splat(b, 4);
        let at = b.v_op(VOp::MulLoU32, ids, four);
        b.v_op(VOp::AddU32, base, at)
    } else {
        b.v_get(inst.field(Field::Addr))
    };
    let m = b.exec();
    let bytes = mem.bytes as u32;
    let (o0, o1) = (inst.field(Field::Offset0), inst.field(Field::Offset1));
    // one offset of 16 bits, or two of 8 bits counted in elements (or in 64-element strides)
    let offsets: Vec<u32> = if mem.flags.contains(MemFlags::TWO_ADDR) {
        let unit = bytes * if mem.flags.contains(MemFlags::STRIDE64) { 64 } else { 1 };
        vec![o0 * unit, o1 * unit]
    } else {
        vec![o0 | o1 << 8]
    };
    let data_regs = [inst.field(Field::Data0), inst.field(Field::Data1)];
    match mem.dir {
        MemDir::Load => {
            let d = vdst(inst);
            if bytes < 4 {
                let v = b.lds_read_narrow(addr, offsets[0], bytes, mem.flags.contains(MemFlags::SIGNED), m)?;
                write_narrow(b, acc, d, v, d16_half(mem.flags), m);
                return Ok(Flow::Next);
            }
            let dwords = bytes / 4;
            let reads = match offsets[..] {
                [o0, o1] => b.lds_read2(addr, [o0, o1], dwords, m)?.to_vec(),
                _ => vec![b.lds_read(addr, offsets[0], dwords, m)?],
            };
            for (k, r) in reads.into_iter().enumerate() {
                for (i, v) in r.into_iter().enumerate() {
                    data_set(b, acc, d + k as u32 * dwords + i as u32, v, m);
                }
            }
            Ok(Flow::Next)
        }
        MemDir::Store => {
            if bytes < 4 {
                let v = store_data(b, acc, data_regs[0], mem.flags.contains(MemFlags::D16_HI));
                b.lds_write_narrow(addr, offsets[0], bytes, v, m)?;
                return Ok(Flow::Next);
            }
            let dwords = bytes / 4;
            let data: Vec<Vec<B::V>> = (0..offsets.len())
                .map(|k| (0..dwords).map(|i| data_get(b, acc, data_regs[k] + i)).collect())
                .collect();
            match offsets[..] {
                [o0, o1] => b.lds_write2(addr, [o0, o1], [&data[0], &data[1]], m)?,
                _ => b.lds_write(addr, offsets[0], &data[0], m)?,
            }
            Ok(Flow::Next)
        }
        MemDir::Atomic => atomic(b, inst, addr, &offsets, acc, m),
        MemDir::None => Err(unsupported(inst)),
    }
}

/// A DS atomic: one with two operands (compare-and-store, masked or, wrap: [`crate::rules::atomic2`]), the
/// conditional exchange of two dwords, a two-address exchange, or a read-modify-write of 32 or 64 bits; the old
/// value goes to vdst when the table says it returns.
fn atomic<B: Backend>(
    b: &mut B,
    inst: &Inst,
    addr: B::V,
    offsets: &[u32],
    acc: bool,
    m: B::M,
) -> Result<Flow<B::S>, ExecError> {
    let mem = inst.info.mem;
    let op = inst.info.atomic.ok_or_else(|| unsupported(inst))?;
    let returns = mem.flags.contains(MemFlags::RETURNS);
    let n = mem.bytes as u32 / 4;
    let (d0, d1) = (inst.field(Field::Data0), inst.field(Field::Data1));
    let dst = vdst(inst);
    match op {
        AtomicOp::CmpSwap | AtomicOp::MskOr | AtomicOp::Wrap => {
            // data0 is the first operand (the value compared with, the mask, the amount subtracted), data1 the
            // second (the value stored, the bits or-ed in, the amount added)
            let first: Vec<B::V> = (0..n).map(|i| data_get(b, acc, d0 + i)).collect();
            let second: Vec<B::V> = (0..n).map(|i| data_get(b, acc, d1 + i)).collect();
            let old = b.lds_atomic2(op, addr, offsets[0], &first, &second, m)?;
            if returns {
                for (i, v) in old.into_iter().enumerate() {
                    data_set(b, acc, dst + i as u32, v, m);
                }
            }
        }
        AtomicOp::CondXchg => {
            // the two dwords at (ADDR + offset) & 0xfff8, each written from its half of data0 when that half's top
            // bit is set
            let off = splat(b, offsets[0]);
            let at = b.v_op(VOp::AddU32, addr, off);
            let align = splat(b, 0xfff8);
            let at = b.v_op(VOp::And, at, align);
            let data = (data_get(b, acc, d0), data_get(b, acc, d0 + 1));
            let (lo, hi) = b.lds_atomic64(op, at, 0, data, m)?;
            if returns {
                data_set(b, acc, dst, lo, m);
                data_set(b, acc, dst + 1, hi, m);
            }
        }
        _ => {
            // two-address exchanges swap data0 at the first address and data1 at the second
            for (k, &off) in offsets.iter().enumerate() {
                let d = if k == 0 { d0 } else { d1 };
                let old = if n == 2 {
                    let data = (data_get(b, acc, d), data_get(b, acc, d + 1));
                    let (lo, hi) = b.lds_atomic64(op, addr, off, data, m)?;
                    vec![lo, hi]
                } else {
                    let data = data_get(b, acc, d);
                    vec![b.lds_atomic(op, addr, off, data, m)?]
                };
                if returns {
                    for (i, v) in old.into_iter().enumerate() {
                        data_set(b, acc, dst + k as u32 * n + i as u32, v, m);
                    }
                }
            }
        }
    }
    Ok(Flow::Next)
}

/// Global wave sync: `ds_gws_barrier` waits for (value + 1) waves of the grid, the value from the first active
/// lane of its data register (the instruction's ADDR field, a VGPR or with ACC an AGPR); the semaphore
/// instructions and `ds_gws_init` hand their resource (M0 and offset0: [`crate::gws::resource_id`]) and value to
/// the dispatch, which carries them out ([`crate::gws`]). Both stop the wave's turn.
fn gws<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use crate::gws::SemaOp;
    let reg = inst.field(Field::Addr);
    let data = |b: &mut B| {
        let v = if inst.field(Field::Acc) == 1 {
            b.a_get(reg)
        } else {
            b.v_get(reg)
        };
        let exec = b.exec();
        b.v_first_lane(v, exec)
    };
    let op = match inst.info.opcode {
        Opcode::DsGwsBarrier => {
            let n = data(b);
            let one = b.s_const(1);
            let count = b.s_op(SOp::Add, n, one);
            b.gws_barrier(count);
            return Ok(Flow::Barrier);
        }
        Opcode::DsGwsInit => SemaOp::Init(0),
        Opcode::DsGwsSemaV => SemaOp::V,
        Opcode::DsGwsSemaBr => SemaOp::Br(0),
        Opcode::DsGwsSemaP => SemaOp::P,
        Opcode::DsGwsSemaReleaseAll => SemaOp::ReleaseAll,
        _ => return Err(form(inst, "global wave sync")),
    };
    let value = match op {
        SemaOp::Init(_) | SemaOp::Br(_) => data(b),
        _ => b.s_const(0),
    };
    let m0 = b.s_get(crate::wave::sreg::M0);
    b.gws_sema(op, m0, inst.field(Field::Offset0), value);
    Ok(Flow::Barrier)
}
