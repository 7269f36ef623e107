//! Vector memory, from the table's `mem` and `atomic` columns: GLOBAL, FLAT, SCRATCH and MUBUF loads, stores
//! and atomics of 1 to 16 bytes (sign- or zero-extended, or into one half of a register: d16) into VGPRs or
//! AGPRs, with their address forms — a VGPR pair or an SGPR base plus a VGPR offset (GLOBAL), per-lane
//! apertures (FLAT: the workgroup's LDS or global memory), each lane's private segment (SCRATCH, and MUBUF
//! through the private segment buffer resource), buffer resources with the hardware's out-of-range rules
//! (MUBUF and MTBUF, typed accesses included) — LDS DMA (loads into the workgroup's LDS instead of VGPRs) and
//! vector cache control.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{MemDir, MemFlags, OperandKind};
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};

/// Where a vector memory instruction's lanes access: 64-bit addresses plus a constant offset, the lanes that
/// access (EXEC, narrowed to those in range for buffers), and for buffers the lanes in range (the others read
/// 0).
struct Lanes<B: Backend> {
    lo: B::V,
    hi: B::V,
    offset: i64,
    m: B::M,
    in_range: Option<B::M>,
}

/// Executes a vector memory instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    let mem = inst.info.mem;
    if mem.dir == MemDir::None {
        return match inst.info.opcode {
            // caches are not modelled functionally: memory is always coherent
            O::BufferWbinvl1Vol | O::BufferWbinvl1 | O::BufferWbl2 | O::BufferInvl2 | O::BufferInv => Ok(Flow::Next),
            _ => Err(unsupported(inst)),
        };
    }
    let mubuf = matches!(inst.encoding(), Encoding::Mubuf | Encoding::Mtbuf);
    let to_lds = mem.flags.contains(MemFlags::TO_LDS) || (mubuf && inst.field(Field::Lds) == 1);
    if to_lds && (mem.dir != MemDir::Load || mem.bytes > 4 || mem.flags.contains(MemFlags::FORMAT)) {
        return Err(form(inst, "LDS DMA of anything but an untyped load of up to a dword"));
    }
    let acc = inst.field(Field::Acc) == 1;
    let exec = b.exec();
    let lanes = match inst.encoding() {
        Encoding::Flat => return flat(b, inst, acc).map(|()| Flow::Next),
        Encoding::Global => {
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            Lanes { lo, hi, offset, m: exec, in_range: None }
        }
        Encoding::Scratch => {
            let p = private_offsets(b, inst)?;
            let (lo, hi) = private_addresses(b, inst, p, mem.bytes as u32, exec)?;
            Lanes { lo, hi, offset: 0, m: exec, in_range: None }
        }
        _ if is_private_resource(b, inst)? => {
            if mem.flags.contains(MemFlags::FORMAT) {
                return Err(form(inst, "a typed access through the private segment buffer"));
            }
            let p = private_offsets(b, inst)?;
            let (lo, hi) = private_addresses(b, inst, p, mem.bytes as u32, exec)?;
            Lanes { lo, hi, offset: 0, m: exec, in_range: None }
        }
        _ if mem.flags.contains(MemFlags::FORMAT) => return buffer_format(b, inst).map(|()| Flow::Next),
        _ => {
            let (lo, hi, ok) = buffer_lanes(b, inst, mem.bytes as u32)?;
            let m = b.mask_op(MaskOp::And, exec, ok);
            Lanes { lo, hi, offset: 0, m, in_range: Some(ok) }
        }
    };
    if to_lds {
        lds_dma(b, inst, lanes)?;
    } else {
        access(b, inst, lanes, acc)?;
    }
    Ok(Flow::Next)
}

/// LDS DMA (GLOBAL/SCRATCH `*_load_lds_*`, MUBUF loads with the `lds` bit): each active lane's value, loaded
/// as the load without the bit would load it (sign- or zero-extended to a dword; 0 for a buffer lane out of
/// range), is written to the LDS dword at M0 + the instruction's offset + 4 × the lane's id, not to a VGPR.
///
/// The rule is LLVM's ("AMDGPU DMA Operations", llvm.amdgcn.global.load.lds and the buffer forms: M0 holds the
/// wave-uniform LDS base, the immediate offset applies to both addresses, "the LDS address is implicitly
/// offset by 4 * lane_id bytes for sizes up to 4 bytes") and the GCN guides' MUBUF rule (LDS_ADDR = LDS base +
/// LDS offset + instruction offset + TID × 4). That a byte or short lands as its extended dword is not stated
/// there; the guides' separate signed and unsigned forms differ only in that, so wavejit writes the dword.
/// A lane whose dword lies outside the workgroup's LDS faults as a DS access would.
fn lds_dma<B: Backend>(b: &mut B, inst: &Inst, t: Lanes<B>) -> Result<(), ExecError> {
    let mem = inst.info.mem;
    let bytes = mem.bytes as u32;
    let v = if bytes < 4 {
        b.v_load_narrow(t.lo, t.hi, t.offset, bytes, mem.flags.contains(MemFlags::SIGNED), t.m)?
    } else {
        b.v_load(t.lo, t.hi, t.offset, 1, t.m)?.remove(0)
    };
    let v = in_range(b, t.in_range, v);
    let offset = match inst.encoding() {
        Encoding::Global | Encoding::Scratch => (((inst.field(Field::Offset) << 19) as i32) >> 19) as u32,
        _ => inst.field(Field::Offset),
    };
    let m0 = b.s_get(crate::wave::sreg::M0);
    let k = b.s_const(offset);
    let base = b.s_op(SOp::Add, m0, k);
    let base = b.v_splat(base);
    let ids = b.v_lane_ids();
    let four = splat(b, 4);
    let slots = b.v_op(VOp::MulLoU32, ids, four);
    let addr = b.v_op(VOp::AddU32, base, slots);
    let exec = b.exec();
    b.lds_write(addr, 0, &[v], exec)
}

/// The registers of a vector memory instruction: (loaded into / old value to, data from).
fn data_fields(inst: &Inst) -> (Field, Field) {
    match inst.encoding() {
        Encoding::Mubuf | Encoding::Mtbuf => (Field::Vdata, Field::Vdata),
        _ => (Field::Vdst, Field::Data),
    }
}

/// Out-of-range buffer lanes read 0.
fn in_range<B: Backend>(b: &mut B, ok: Option<B::M>, v: B::V) -> B::V {
    match ok {
        Some(ok) => {
            let zero = b_zero(b);
            b.v_select(ok, zero, v)
        }
        None => v,
    }
}

/// A load, store or atomic of the table's size at `t`'s lanes.
fn access<B: Backend>(b: &mut B, inst: &Inst, t: Lanes<B>, acc: bool) -> Result<(), ExecError> {
    let mem = inst.info.mem;
    let bytes = mem.bytes as u32;
    let (dst_field, data_field) = data_fields(inst);
    let (dst, data) = (inst.field(dst_field), inst.field(data_field));
    let exec = b.exec();
    match mem.dir {
        MemDir::Load if bytes < 4 => {
            let v = b.v_load_narrow(t.lo, t.hi, t.offset, bytes, mem.flags.contains(MemFlags::SIGNED), t.m)?;
            let v = in_range(b, t.in_range, v);
            write_narrow(b, acc, dst, v, d16_half(mem.flags), exec);
        }
        MemDir::Load => {
            let r = b.v_load(t.lo, t.hi, t.offset, bytes / 4, t.m)?;
            for (i, v) in r.into_iter().enumerate() {
                let v = in_range(b, t.in_range, v);
                data_set(b, acc, dst + i as u32, v, exec);
            }
        }
        MemDir::Store if bytes < 4 => {
            let v = store_data(b, acc, data, mem.flags.contains(MemFlags::D16_HI));
            b.v_store_narrow(t.lo, t.hi, t.offset, bytes, v, t.m)?;
        }
        MemDir::Store => {
            let v: Vec<B::V> = (0..bytes / 4).map(|i| data_get(b, acc, data + i)).collect();
            b.v_store(t.lo, t.hi, t.offset, &v, t.m)?;
        }
        MemDir::Atomic => {
            let old = global_atomic(b, inst, &t, acc, data)?;
            // glc (sc0 on gfx940) asks for the old value
            if inst.field(Field::Glc) == 1 {
                for (i, v) in old.into_iter().enumerate() {
                    let v = in_range(b, t.in_range, v);
                    data_set(b, acc, dst + i as u32, v, exec);
                }
            }
        }
        MemDir::None => return Err(unsupported(inst)),
    }
    Ok(())
}

/// A compare-and-swap's data operands of `n` dwords each: the value to store, then the value to compare with.
fn cmpswap_data<B: Backend>(b: &mut B, acc: bool, data: u32, n: u32) -> (Vec<B::V>, Vec<B::V>) {
    let src = (0..n).map(|i| data_get(b, acc, data + i)).collect();
    let cmp = (0..n).map(|i| data_get(b, acc, data + n + i)).collect();
    (src, cmp)
}

/// A vector-memory atomic at `t`'s lanes with data from register `data`: compare-and-swap (data holds the new
/// value, then the value to compare with) or a read-modify-write of 32 or 64 bits. Returns the old values.
fn global_atomic<B: Backend>(b: &mut B, inst: &Inst, t: &Lanes<B>, acc: bool, data: u32) -> Result<Vec<B::V>, ExecError> {
    let op = inst.info.atomic.ok_or_else(|| unsupported(inst))?;
    let n = inst.info.mem.bytes as u32 / 4;
    Ok(match op {
        AtomicOp::CmpSwap => {
            let (src, cmp) = cmpswap_data(b, acc, data, n);
            b.v_atomic_cmpswap(t.lo, t.hi, t.offset, &src, &cmp, t.m)?
        }
        _ if n == 2 => {
            let d = (data_get(b, acc, data), data_get(b, acc, data + 1));
            let (lo, hi) = b.v_atomic64(op, t.lo, t.hi, t.offset, d, t.m)?;
            vec![lo, hi]
        }
        _ => {
            let d = data_get(b, acc, data);
            vec![b.v_atomic(op, t.lo, t.hi, t.offset, d, t.m)?]
        }
    })
}

/// FLAT: per lane, an address in the shared aperture goes to the workgroup's LDS (its low 32 bits are the LDS
/// offset), one in the private aperture to the lane's private segment (its low 32 bits are the private address
/// a SCRATCH instruction would compute, relative to FLAT_SCRATCH), anything else is global memory.
fn flat<B: Backend>(b: &mut B, inst: &Inst, acc: bool) -> Result<(), ExecError> {
    let mem = inst.info.mem;
    let bytes = mem.bytes as u32;
    let addr = inst.field(Field::Addr);
    let (lo, hi) = (b.v_get(addr), b.v_get(addr + 1));
    let offset = inst.field(Field::Offset) & 0xfff;
    let exec = b.exec();
    let (shared_hi, private_hi) = (splat(b, SHARED_APERTURE_HI), splat(b, PRIVATE_APERTURE_HI));
    let in_lds = b.v_cmp(cmp::EQ_U32, hi, shared_hi);
    let in_lds = b.mask_op(MaskOp::And, in_lds, exec);
    let private = b.v_cmp(cmp::EQ_U32, hi, private_hi);
    let private = b.mask_op(MaskOp::And, private, exec);
    // private lanes become global accesses at their scratch address (the instruction's offset added later)
    let (lo, hi) = {
        let (base_lo, _, _) = b.scratch();
        let fs = b.s_get(102);
        let rel = b.s_op(SOp::Sub, fs, base_lo);
        let rel = b.v_splat(rel);
        let p = b.v_op(VOp::AddU32, rel, lo);
        let (plo, phi) = private_addresses(b, inst, p, bytes + offset, private)?;
        (b.v_select(private, lo, plo), b.v_select(private, hi, phi))
    };
    let global = b.mask_op(MaskOp::AndNot, exec, in_lds);
    let (dst, data) = (inst.field(Field::Vdst), inst.field(Field::Data));
    let signed = mem.flags.contains(MemFlags::SIGNED);
    match mem.dir {
        MemDir::Load if bytes < 4 => {
            let g = b.v_load_narrow(lo, hi, offset as i64, bytes, signed, global)?;
            let l = b.lds_read_narrow(lo, offset, bytes, signed, in_lds)?;
            let v = b.v_select(in_lds, g, l);
            write_narrow(b, acc, dst, v, d16_half(mem.flags), exec);
        }
        MemDir::Load => {
            let g = b.v_load(lo, hi, offset as i64, bytes / 4, global)?;
            let l = b.lds_read(lo, offset, bytes / 4, in_lds)?;
            for (i, (gv, lv)) in g.into_iter().zip(l).enumerate() {
                let v = b.v_select(in_lds, gv, lv);
                data_set(b, acc, dst + i as u32, v, exec);
            }
        }
        MemDir::Store if bytes < 4 => {
            let v = store_data(b, acc, data, mem.flags.contains(MemFlags::D16_HI));
            b.v_store_narrow(lo, hi, offset as i64, bytes, v, global)?;
            b.lds_write_narrow(lo, offset, bytes, v, in_lds)?;
        }
        MemDir::Store => {
            let v: Vec<B::V> = (0..bytes / 4).map(|i| data_get(b, acc, data + i)).collect();
            b.v_store(lo, hi, offset as i64, &v, global)?;
            b.lds_write(lo, offset, &v, in_lds)?;
        }
        MemDir::Atomic => {
            let t = Lanes { lo, hi, offset: offset as i64, m: global, in_range: None };
            let g = global_atomic(b, inst, &t, acc, data)?;
            let l = flat_lds_atomic(b, inst, lo, offset, acc, data, in_lds)?;
            if inst.field(Field::Glc) == 1 {
                for (i, (gv, lv)) in g.into_iter().zip(l).enumerate() {
                    let v = b.v_select(in_lds, gv, lv);
                    data_set(b, acc, dst + i as u32, v, exec);
                }
            }
        }
        MemDir::None => return Err(unsupported(inst)),
    }
    Ok(())
}

/// The LDS lanes of a FLAT atomic (data as a global atomic's: for compare-and-swap the new value, then the
/// value compared with).
fn flat_lds_atomic<B: Backend>(b: &mut B, inst: &Inst, addr: B::V, offset: u32, acc: bool, data: u32, m: B::M) -> Result<Vec<B::V>, ExecError> {
    let op = inst.info.atomic.ok_or_else(|| unsupported(inst))?;
    let n = inst.info.mem.bytes as u32 / 4;
    Ok(match op {
        AtomicOp::CmpSwap => {
            let (src, cmp) = cmpswap_data(b, acc, data, n);
            b.lds_atomic2(AtomicOp::CmpSwap, addr, offset, &cmp, &src, m)?
        }
        _ if n == 2 => {
            let d = (data_get(b, acc, data), data_get(b, acc, data + 1));
            let (lo, hi) = b.lds_atomic64(op, addr, offset, d, m)?;
            vec![lo, hi]
        }
        _ => {
            let d = data_get(b, acc, data);
            vec![b.lds_atomic(op, addr, offset, d, m)?]
        }
    })
}

/// Whether a MUBUF instruction's resource is the private segment buffer (ADD_TID_ENABLE, bit 23 of dword 3),
/// which addresses each lane's scratch; anything else is an ordinary buffer. Likely when the resource is
/// s[0:3], where the kernel's private segment buffer arrives (LLVM addresses scratch through it: on gfx90a every
/// spill and private array), so the JIT compiles that case and leaves the other to the interpreter.
fn is_private_resource<B: Backend>(b: &mut B, inst: &Inst) -> Result<bool, ExecError> {
    let d3 = b.s_get(inst.field(Field::Srsrc) * 4 + 3);
    Ok(b.uniform_bit(d3, 23, inst.field(Field::Srsrc) == 0))
}

/// A typed buffer access: elements in the format of the resource's word 3 (MUBUF) or of the instruction's
/// DFMT/NFMT fields (MTBUF, the channel selects still the resource's), converted as for 1-D buffer images.
/// An indexed (structured) access is in range where the index is below num_records, one without an index where
/// its offset is (the check is all or nothing for the element).
fn buffer_format<B: Backend>(b: &mut B, inst: &Inst) -> Result<(), ExecError> {
    let op = crate::image::FormatAccess::of(inst.info.mem).map_err(|what| form(inst, what))?;
    let (lo, hi, ok) = buffer_lanes(b, inst, 1)?;
    let word3 = b.s_get(inst.field(Field::Srsrc) * 4 + 3);
    let word3 = if inst.encoding() == Encoding::Mtbuf {
        // the format fields of word 3 (NFMT bits 14:12, DFMT bits 18:15) from the instruction
        let keep = b.s_const(!(0x7f << 12));
        let kept = b.s_op(SOp::And, word3, keep);
        let format = b.s_const(inst.field(Field::Dfmt) << 15 | inst.field(Field::Nfmt) << 12);
        b.s_op(SOp::Or, kept, format)
    } else {
        word3
    };
    let acc = inst.field(Field::Acc) == 1;
    let exec = b.exec();
    let m = b.mask_op(MaskOp::And, exec, ok);
    let d = inst.field(Field::Vdata);
    // d16_hi: the one 16-bit component goes to (comes from) the high half of the register, the low half kept
    let high = inst.info.mem.flags.contains(MemFlags::D16_HI);
    if op.load {
        let out = b.v_buffer_format(&op, word3, lo, hi, &[], m)?;
        for (i, v) in out.into_iter().enumerate() {
            let v = in_range(b, Some(ok), v);
            if high {
                write_narrow(b, acc, d, v, Some(true), exec);
            } else {
                data_set(b, acc, d + i as u32, v, exec);
            }
        }
    } else {
        let data: Vec<B::V> = (0..op.data_regs() as u32).map(|i| store_data(b, acc, d + i, high)).collect();
        b.v_buffer_format(&op, word3, lo, hi, &data, m)?;
    }
    Ok(())
}

type BufferLanes<B> = (<B as Backend>::V, <B as Backend>::V, <B as Backend>::M);

/// The fields of a buffer resource (V#) that address memory, read from the four SGPRs from `first`: the 48-bit
/// base (dword 0, and bits 15:0 of dword 1), the stride (bits 29:16 of dword 1) and num_records (dword 2).
pub(super) struct BufferResource<S> {
    pub base_lo: S,
    pub base_hi: S,
    pub stride: S,
    pub num_records: S,
}

pub(super) fn buffer_resource<B: Backend>(b: &mut B, first: u32) -> BufferResource<B::S> {
    let (d0, d1, d2) = (b.s_get(first), b.s_get(first + 1), b.s_get(first + 2));
    let base_hi = {
        let m = b.s_const(0xffff);
        b.s_op(SOp::And, d1, m)
    };
    let stride = {
        let (sh, m) = (b.s_const(16), b.s_const(0x3fff));
        let s = b.s_op(SOp::Lshr, d1, sh);
        b.s_op(SOp::And, s, m)
    };
    BufferResource { base_lo: d0, base_hi, stride, num_records: d2 }
}

/// Per-lane addresses of a buffer access of `bytes` and the mask of lanes in range.
fn buffer_lanes<B: Backend>(b: &mut B, inst: &Inst, bytes: u32) -> Result<BufferLanes<B>, ExecError> {
    let BufferResource { base_lo: d0, base_hi, stride, num_records: d2 } = buffer_resource(b, inst.field(Field::Srsrc) * 4);
    let so = inst.field(Field::Soffset);
    let soffset = match so {
        0..=127 => b.s_get(so),
        _ => b.s_const(inline_const32(so).ok_or_else(|| form(inst, "this buffer offset"))?),
    };
    let (idxen, offen) = (inst.field(Field::Idxen) == 1, inst.field(Field::Offen) == 1);
    let va = inst.field(Field::Vaddr);
    let mut offset = b.v_splat(soffset);
    let imm = splat(b, inst.field(Field::Offset));
    offset = b.v_op(VOp::AddU32, offset, imm);
    if offen {
        let v = b.v_get(if idxen { va + 1 } else { va });
        offset = b.v_op(VOp::AddU32, offset, v);
    }
    let nrec = b.v_splat(d2);
    let ok = if idxen {
        let index = b.v_get(va);
        let within = b.v_cmp(cmp::LT_U32, index, nrec);
        let stride_v = b.v_splat(stride);
        let scaled = b.v_op(VOp::MulLoU32, index, stride_v);
        offset = b.v_op(VOp::AddU32, offset, scaled);
        within
    } else {
        // the access's last byte must lie below num_records
        let size = splat(b, bytes);
        let end = b.v_op(VOp::AddU32, offset, size);
        let no_wrap = b.v_cmp(cmp::GE_U32, end, offset);
        let fits = b.v_cmp(cmp::LE_U32, end, nrec);
        b.mask_op(MaskOp::And, no_wrap, fits)
    };
    let base_lo = b.v_splat(d0);
    let (lo, carry) = b.v_add_carry(base_lo, offset, None);
    let base_hi = b.v_splat(base_hi);
    let zero = b_zero(b);
    let (hi, _) = b.v_add_carry(base_hi, zero, Some(carry));
    Ok((lo, hi, ok))
}

/// Per-lane offsets into the private segment of a SCRATCH instruction, or of a MUBUF instruction through the
/// private segment buffer resource (ADD_TID set); other buffer resources take the global path.
fn private_offsets<B: Backend>(b: &mut B, inst: &Inst) -> Result<B::V, ExecError> {
    let splat = |b: &mut B, s: B::S| b.v_splat(s);
    let (base_lo, _, _) = b.scratch();
    let mut p;
    if inst.encoding() == Encoding::Scratch {
        // address = FLAT_SCRATCH (+ SGPR offset) (+ VGPR offset) + offset; the private offset is that minus base
        let fs = b.s_get(102);
        let rel = b.s_op(SOp::Sub, fs, base_lo);
        p = splat(b, rel);
        let saddr = inst.field(Field::Saddr);
        if saddr != 0x7f {
            let so = b.s_get(saddr);
            let so = splat(b, so);
            p = b.v_op(VOp::AddU32, p, so);
        }
        let vaddr_used = if inst.target.is_gfx940() { inst.field(Field::Lds) == 1 } else { saddr == 0x7f };
        if vaddr_used {
            let va = b.v_get(inst.field(Field::Addr));
            p = b.v_op(VOp::AddU32, p, va);
        }
        let off = b.s_const((((inst.field(Field::Offset) << 19) as i32) >> 19) as u32);
        let off = splat(b, off);
        p = b.v_op(VOp::AddU32, p, off);
    } else {
        let r = inst.field(Field::Srsrc) * 4;
        let d0 = b.s_get(r);
        if inst.field(Field::Idxen) == 1 {
            return Err(form(inst, "indexed buffer addressing"));
        }
        // only the private segment buffer (ADD_TID) is supported: its base is this wave's scratch. The resource
        // base and the SGPR offset are wave-level offsets into the swizzled segment (a stack frame of n bytes per
        // lane moves the stack pointer by n * 64): one lane's share of them is a 64th
        let rel = b.s_op(SOp::Sub, d0, base_lo);
        let so = inst.field(Field::Soffset);
        let so = match so {
            0..=127 => b.s_get(so),
            _ => b.s_const(inline_const32(so).ok_or_else(|| form(inst, "this buffer offset"))?),
        };
        let wave = b.s_op(SOp::Add, rel, so);
        let six = b.s_const(6);
        let lane = b.s_op(SOp::Lshr, wave, six);
        p = splat(b, lane);
        if inst.field(Field::Offen) == 1 {
            let va = b.v_get(inst.field(Field::Vaddr));
            p = b.v_op(VOp::AddU32, p, va);
        }
        let off = b.s_const(inst.field(Field::Offset));
        let off = splat(b, off);
        p = b.v_op(VOp::AddU32, p, off);
    }
    Ok(p)
}

/// Device addresses of private offsets: lane l's segment starts at base + l * bytes-per-lane. An access past
/// the end of a lane's segment faults.
fn private_addresses<B: Backend>(b: &mut B, inst: &Inst, p: B::V, bytes: u32, m: B::M) -> Result<(B::V, B::V), ExecError> {
    let (base_lo, base_hi, lane_bytes) = b.scratch();
    let lane_bytes_v = b.v_splat(lane_bytes);
    let end = b.s_const(bytes);
    let end = b.v_splat(end);
    let last = b.v_op(VOp::AddU32, p, end);
    let too_far = b.v_cmp(cmp::GT_U32, last, lane_bytes_v);
    let wrapped = b.v_cmp(cmp::LT_U32, last, p);
    let bad = b.mask_op(MaskOp::Or, too_far, wrapped);
    let bad = b.mask_op(MaskOp::And, bad, m);
    b.fail_if_any(bad, ExecError::Private { mnemonic: inst.info.name, lane_bytes: 0 })?;
    let ids = b.v_lane_ids();
    let lane_off = b.v_op(VOp::MulLoU32, ids, lane_bytes_v);
    let within = b.v_op(VOp::AddU32, lane_off, p);
    let (bl, bh) = (b.v_splat(base_lo), b.v_splat(base_hi));
    let (lo, carry) = b.v_add_carry(bl, within, None);
    let zero = b.s_const(0);
    let zero = b.v_splat(zero);
    let (hi, _) = b.v_add_carry(bh, zero, Some(carry));
    Ok((lo, hi))
}

/// Per-lane 64-bit address of a GLOBAL instruction: a VGPR pair, or an SGPR pair plus a 32-bit VGPR offset.
pub(super) fn global_address<B: Backend>(b: &mut B, inst: &Inst) -> Result<(B::V, B::V), ExecError> {
    let saddr = inst.field(Field::Saddr);
    let addr = inst.field(Field::Addr);
    if saddr == 0x7f {
        return Ok((b.v_get(addr), b.v_get(addr + 1)));
    }
    match inst.info.operand(Field::Addr).map(|o| o.kind) {
        Some(OperandKind::Reg { .. }) => {}
        _ => return Err(form(inst, "address operands")),
    }
    let (sl, sh) = (b.s_get(saddr & !1), b.s_get((saddr & !1) + 1));
    let (bl, bh) = (b.v_splat(sl), b.v_splat(sh));
    let off = b.v_get(addr);
    let (lo, carry) = b.v_add_carry(bl, off, None);
    let zero = b.s_const(0);
    let zero = b.v_splat(zero);
    let (hi, _) = b.v_add_carry(bh, zero, Some(carry));
    Ok((lo, hi))
}
