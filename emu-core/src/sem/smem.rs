//! Scalar memory: loads, stores and atomics between SGPRs and memory through the scalar data cache, scalar
//! cache control, and the clocks a wave reads through the scalar unit (`s_memtime`, `s_memrealtime`).
//!
//! Addresses follow the CDNA3 ISA guide's scalar memory chapter: an SGPR pair's 64-bit address plus the
//! instruction's offset (IMM: a signed 21-bit byte count) and an SGPR or M0 offset (named by SOFFSET with SOE,
//! by OFFSET without IMM), the two low bits ignored. `s_scratch_*` count the SGPR offset in 64-byte units.
//! `s_buffer_*` address through a buffer resource in four SGPRs: base + offset, bounds-checked dword by dword
//! against num_records × stride bytes (num_records bytes when the stride is 0); dwords out of range are neither
//! read (they load 0) nor written, and an atomic out of range does nothing and returns 0. Atomics return the
//! old value to SDATA when GLC is set.

use isa_amdgpu::encoding::Field;
use isa_amdgpu::table::{MemDir, MemFlags};
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::vmem::{buffer_resource, BufferResource};
use super::{unsupported, ExecError, Flow};

/// Executes an SMEM instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::SMemtime | O::SMemrealtime => {
            let clock = if inst.info.opcode == O::SMemtime {
                Clock::Shader
            } else {
                Clock::Real
            };
            let (lo, hi) = b.s_clock(clock);
            let dst = inst.field(Field::Sdata);
            b.s_set(dst, lo);
            b.s_set(dst + 1, hi);
            return Ok(Flow::Next);
        }
        // caches are not modelled functionally: memory is always coherent
        O::SDcacheWb | O::SDcacheInv => return Ok(Flow::Next),
        // the same for the volatile forms; discarding drops nothing a later access could miss (every scalar
        // store went to memory), and a probe of the address translation returns nothing
        O::SDcacheWbVol
        | O::SDcacheInvVol
        | O::SDcacheDiscard
        | O::SDcacheDiscardX2
        | O::SAtcProbe
        | O::SAtcProbeBuffer => return Ok(Flow::Next),
        _ => {}
    }
    let mem = inst.info.mem;
    let n = mem.bytes as u32 / 4;
    let sdata = inst.field(Field::Sdata);
    let buffer = mem.flags.contains(MemFlags::BUFFER);
    let Place { lo, hi, valid } = address(b, inst, n);
    match mem.dir {
        MemDir::Load => {
            let data = if buffer {
                b.s_load_part(lo, hi, n, valid)?
            } else {
                b.s_load(lo, hi, n)?
            };
            for (i, d) in data.into_iter().enumerate() {
                b.s_set(sdata + i as u32, d);
            }
        }
        MemDir::Store => {
            let data: Vec<B::S> = (0..n).map(|i| b.s_get(sdata + i)).collect();
            b.s_store(lo, hi, &data, valid)?;
        }
        MemDir::Atomic => {
            let op = inst.info.atomic.ok_or_else(|| unsupported(inst))?;
            // compare-and-swap: SDATA holds the value to store, then the value compared with
            let data: Vec<B::S> = (0..n).map(|i| b.s_get(sdata + i)).collect();
            let cmp: Vec<B::S> = if op == AtomicOp::CmpSwap {
                (0..n).map(|i| b.s_get(sdata + n + i)).collect()
            } else {
                Vec::new()
            };
            // an atomic is done whole or not at all
            let all = b.s_const(n);
            let whole = b.s_op(SOp::Eq, valid, all);
            let old = b.s_atomic(op, lo, hi, &data, &cmp, whole)?;
            if inst.field(Field::Glc) == 1 {
                for (i, d) in old.into_iter().enumerate() {
                    b.s_set(sdata + i as u32, d);
                }
            }
        }
        MemDir::None => return Err(unsupported(inst)),
    }
    Ok(Flow::Next)
}

/// The offset an SMEM instruction adds to its base as a 64-bit (lo, hi) pair: the immediate (a signed 21-bit
/// byte count) plus the SGPR or M0 offset (unsigned, times 64 for `s_scratch_*`).
fn offset<B: Backend>(b: &mut B, inst: &Inst) -> (B::S, B::S) {
    let (imm, soe) = (inst.field(Field::Imm) == 1, inst.field(Field::Soe) == 1);
    let sgpr = match (imm, soe) {
        (_, true) => Some(inst.field(Field::Soffset)),
        (false, false) => Some(inst.field(Field::Offset) & 0x7f),
        (true, false) => None,
    };
    let k = if imm {
        ((inst.field(Field::Offset) << 11) as i32) >> 11
    } else {
        0
    };
    let (mut lo, mut hi) = (b.s_const(k as u32), b.s_const(if k < 0 { u32::MAX } else { 0 }));
    if let Some(r) = sgpr {
        let v = b.s_get(r);
        let zero = b.s_const(0);
        let (vl, vh) = if inst.info.mem.flags.contains(MemFlags::SCRATCH) {
            let six = b.s_const(6);
            b.s_shl64(v, zero, six)
        } else {
            (v, zero)
        };
        let (l, carry) = b.s_add_carry(lo, vl, zero);
        let (h, _) = b.s_add_carry(hi, vh, carry);
        (lo, hi) = (l, h);
    }
    (lo, hi)
}

/// Where an SMEM access goes: its address and how many of its dwords lie in range (all but for buffers).
struct Place<S> {
    lo: S,
    hi: S,
    valid: S,
}

/// The [`Place`] of an SMEM access of `n` dwords.
fn address<B: Backend>(b: &mut B, inst: &Inst, n: u32) -> Place<B::S> {
    let first = inst.field(Field::Sbase) * 2;
    let (off_lo, off_hi) = offset(b, inst);
    let zero = b.s_const(0);
    if !inst.info.mem.flags.contains(MemFlags::BUFFER) {
        let (base_lo, base_hi) = (b.s_get(first), b.s_get(first + 1));
        let (lo, carry) = b.s_add_carry(base_lo, off_lo, zero);
        let (hi, _) = b.s_add_carry(base_hi, off_hi, carry);
        let valid = b.s_const(n);
        return Place { lo, hi, valid };
    }
    // a buffer: base + the 32-bit offset, dwords in range while their last byte lies below the size
    let BufferResource {
        base_lo,
        base_hi,
        stride,
        num_records,
    } = buffer_resource(b, first);
    let (lo, carry) = b.s_add_carry(base_lo, off_lo, zero);
    let (hi, _) = b.s_add_carry(base_hi, zero, carry);
    let one = b.s_const(1);
    let no_stride = b.s_op(SOp::Eq, stride, zero);
    let unit = b.s_select(no_stride, one, stride);
    let size = b.s_op(SOp::Mul, num_records, unit);
    let over = b.s_op(SOp::MulHiU32, num_records, unit);
    let over = b.s_nonzero(over);
    let all = b.s_const(u32::MAX);
    let size = b.s_select(over, all, size);
    let not3 = b.s_const(!3);
    let start = b.s_op(SOp::And, off_lo, not3);
    let past = b.s_op(SOp::LtU, size, start);
    let room = b.s_op(SOp::Sub, size, start);
    let two = b.s_const(2);
    let room = b.s_op(SOp::Lshr, room, two);
    let k = b.s_const(n);
    let short = b.s_op(SOp::LtU, room, k);
    let fit = b.s_select(short, room, k);
    let valid = b.s_select(past, zero, fit);
    Place { lo, hi, valid }
}
