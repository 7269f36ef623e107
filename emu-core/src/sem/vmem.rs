//! Vector memory, from the table's `mem` and `atomic` columns: GLOBAL, FLAT, SCRATCH and MUBUF loads, stores
//! and atomics of 1 to 16 bytes (sign- or zero-extended, or into one half of a register: d16) into VGPRs or
//! AGPRs, with their address forms — a VGPR pair or an SGPR base plus a VGPR offset (GLOBAL), per-lane
//! apertures (FLAT: the workgroup's LDS, the lane's private segment or global memory), each lane's private
//! segment (SCRATCH, and MUBUF through the private segment buffer resource; in device memory interleaved by
//! dword as the hardware's swizzled private memory, [`private_address`]), buffer resources with the hardware's
//! out-of-range rules (MUBUF and MTBUF, typed accesses included) — LDS DMA (loads into the workgroup's LDS instead of VGPRs) and
//! vector cache control.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{MemDir, MemFlags, OperandKind};
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};

/// Where a vector memory instruction's lanes access: 64-bit addresses plus a constant offset, the lanes that
/// access (EXEC, narrowed to those in range for buffers), for buffers the lanes in range (the others read 0),
/// and how each lane's bytes lie from its address.
struct Lanes<B: Backend> {
    lo: B::V,
    hi: B::V,
    offset: i64,
    m: B::M,
    in_range: Option<B::M>,
    layout: Layout<B>,
}

/// Where the bytes of one lane's access lie.
enum Layout<B: Backend> {
    /// In device memory, in one run from the lane's address.
    Whole,
    /// In the lane's private memory from the private offset held here (the constant offset is in it):
    /// [`Backend::private_access`], which checks it.
    Private(B::V),
}

/// How the bytes of one lane's private access lie in device memory ([`private_address`]).
enum Swizzle {
    /// Every access inside one dword or starting one: dword `j` of the access at the lane's address + 256 × `j`.
    Dwords,
    /// Some lane's access crosses into a dword it does not start: byte `k` of the access at the address of the
    /// lane's private offset + `k`.
    Bytes,
}

/// Executes a vector memory instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    let mem = inst.info.mem;
    if inst.info.opcode == O::BufferStoreLdsDword {
        return Err(form(
            inst,
            "the store of dwords from LDS to a buffer (the reverse of an LDS DMA load)",
        ));
    }
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
            Lanes {
                lo,
                hi,
                offset,
                m: exec,
                in_range: None,
                layout: Layout::Whole,
            }
        }
        Encoding::Scratch => {
            let p = private_offsets(b, inst)?;
            private_only(p, exec)
        }
        _ if is_private_resource(b, inst)? => {
            if mem.flags.contains(MemFlags::FORMAT) {
                return Err(form(inst, "a typed access through the private segment buffer"));
            }
            let p = private_offsets(b, inst)?;
            private_only(p, exec)
        }
        _ if mem.flags.contains(MemFlags::FORMAT) => return buffer_format(b, inst).map(|()| Flow::Next),
        _ => {
            let (lo, hi, ok) = buffer_lanes(b, inst, mem.bytes as u32)?;
            let m = b.mask_op(MaskOp::And, exec, ok);
            Lanes {
                lo,
                hi,
                offset: 0,
                m,
                in_range: Some(ok),
                layout: Layout::Whole,
            }
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
    let v = load(b, inst, &t, mem.bytes as u32, mem.flags.contains(MemFlags::SIGNED))?.remove(0);
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
            let v = load(b, inst, &t, bytes, mem.flags.contains(MemFlags::SIGNED))?.remove(0);
            let v = in_range(b, t.in_range, v);
            write_narrow(b, acc, dst, v, d16_half(mem.flags), exec);
        }
        MemDir::Load => {
            let r = load(b, inst, &t, bytes, false)?;
            for (i, v) in r.into_iter().enumerate() {
                let v = in_range(b, t.in_range, v);
                data_set(b, acc, dst + i as u32, v, exec);
            }
        }
        MemDir::Store => {
            let v = store_values(b, acc, data, bytes, mem.flags);
            store(b, inst, &t, bytes, &v)?;
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
fn global_atomic<B: Backend>(
    b: &mut B,
    inst: &Inst,
    t: &Lanes<B>,
    acc: bool,
    data: u32,
) -> Result<Vec<B::V>, ExecError> {
    let op = inst.info.atomic.ok_or_else(|| unsupported(inst))?;
    let n = inst.info.mem.bytes as u32 / 4;
    let private;
    let t = match t.layout {
        Layout::Whole => t,
        Layout::Private(p) => {
            check_private(b, inst.info.name, p, 4 * n, t.m)?;
            if n > 1 || matches!(private_layout(b, p, 4, t.m), Swizzle::Bytes) {
                return Err(form(inst, PRIVATE_ATOMIC));
            }
            let (lo, hi) = private_address(b, p);
            private = Lanes {
                lo,
                hi,
                offset: 0,
                m: t.m,
                in_range: None,
                layout: Layout::Whole,
            };
            &private
        }
    };
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
///
/// Private lanes whose access lies inside one dword go with the global lanes, at their swizzled address
/// ([`private_address`]); wider accesses and those crossing a dword boundary are made on their own
/// ([`Backend::private_access`], which costs little where no lane is private).
fn flat<B: Backend>(b: &mut B, inst: &Inst, acc: bool) -> Result<(), ExecError> {
    let mem = inst.info.mem;
    let bytes = mem.bytes as u32;
    let addr = inst.field(Field::Addr);
    let (lo, hi) = (b.v_get(addr), b.v_get(addr + 1));
    let exec = b.exec();
    let (dst, data) = (inst.field(Field::Vdst), inst.field(Field::Data));
    match mem.dir {
        MemDir::Load => {
            for (i, v) in b.flat_access(inst, lo, hi, None, exec)?.into_iter().enumerate() {
                if bytes < 4 {
                    write_narrow(b, acc, dst, v, d16_half(mem.flags), exec);
                } else {
                    data_set(b, acc, dst + i as u32, v, exec);
                }
            }
        }
        MemDir::Store => {
            let v = store_values(b, acc, data, bytes, mem.flags);
            b.flat_access(inst, lo, hi, Some(&v), exec)?;
        }
        MemDir::Atomic => {
            let f = flat_lanes(b, inst, lo, hi, exec)?;
            // private lanes apart are those of a 64-bit atomic or one crossing dwords
            if f.own.is_some() && any_lane(b, f.private, false) {
                return Err(form(inst, PRIVATE_ATOMIC));
            }
            let t = Lanes {
                lo: f.lo,
                hi: f.hi,
                offset: f.offset as i64,
                m: f.global,
                in_range: None,
                layout: Layout::Whole,
            };
            let g = global_atomic(b, inst, &t, acc, data)?;
            let l = flat_lds_atomic(b, inst, f.lo, f.offset, acc, data, f.in_lds)?;
            if inst.field(Field::Glc) == 1 {
                for (i, (gv, lv)) in g.into_iter().zip(l).enumerate() {
                    let v = b.v_select(f.in_lds, gv, lv);
                    data_set(b, acc, dst + i as u32, v, exec);
                }
            }
        }
        MemDir::None => return Err(unsupported(inst)),
    }
    Ok(())
}

/// Where a FLAT instruction's lanes of `m` at addresses (lo, hi) go: `in_lds` to the workgroup's LDS at `lo`,
/// `global` to device memory at (lo, hi) (private lanes accessing inside one dword among them, at their
/// swizzled address less the offset), `own` the other private lanes, each access `offset` further.
struct FlatLanes<B: Backend> {
    lo: B::V,
    hi: B::V,
    offset: u32,
    in_lds: B::M,
    private: B::M,
    global: B::M,
    own: Option<Lanes<B>>,
}

/// The [`FlatLanes`] of `inst`, its private lanes checked inside their segments.
fn flat_lanes<B: Backend>(b: &mut B, inst: &Inst, lo: B::V, hi: B::V, m: B::M) -> Result<FlatLanes<B>, ExecError> {
    let bytes = inst.info.mem.bytes as u32;
    let offset = inst.field(Field::Offset) & 0xfff;
    let (shared_hi, private_hi) = (splat(b, SHARED_APERTURE_HI), splat(b, PRIVATE_APERTURE_HI));
    let in_lds = b.v_cmp(cmp::EQ_U32, hi, shared_hi);
    let in_lds = b.mask_op(MaskOp::And, in_lds, m);
    let private = b.v_cmp(cmp::EQ_U32, hi, private_hi);
    let private = b.mask_op(MaskOp::And, private, m);
    // each private lane's offset in its segment, the instruction's offset included
    let p = {
        let (base_lo, _, _) = b.scratch();
        let fs = b.s_get(102);
        let rel = b.s_op(SOp::Sub, fs, base_lo);
        let rel = b.v_splat(rel);
        let p = b.v_op(VOp::AddU32, rel, lo);
        let off = splat(b, offset);
        b.v_op(VOp::AddU32, p, off)
    };
    check_private(b, inst.info.name, p, bytes, private)?;
    let apart = bytes > 4 || matches!(private_layout(b, p, bytes, private), Swizzle::Bytes);
    let (lo, hi) = if !apart {
        // the swizzled address less the offset the access adds
        let (plo, phi) = private_address(b, p);
        let off = splat(b, offset);
        let (plo, borrow) = b.v_sub_borrow(plo, off, None);
        let zero = b_zero(b);
        let (phi, _) = b.v_sub_borrow(phi, zero, Some(borrow));
        (b.v_select(private, lo, plo), b.v_select(private, hi, phi))
    } else {
        (lo, hi)
    };
    let mut global = b.mask_op(MaskOp::AndNot, m, in_lds);
    let own = apart.then(|| {
        global = b.mask_op(MaskOp::AndNot, global, private);
        private_only(p, private)
    });
    Ok(FlatLanes {
        lo,
        hi,
        offset,
        in_lds,
        private,
        global,
        own,
    })
}

/// A FLAT load or store as the semantics define it ([`Backend::flat_access`]'s default): the lanes of `m` at
/// addresses (lo, hi) as [`FlatLanes`] sends them, loaded (a narrow load's one value, else `bytes / 4` dwords)
/// or, with `data`, stored.
pub fn flat_access<B: Backend>(
    b: &mut B,
    inst: &Inst,
    lo: B::V,
    hi: B::V,
    data: Option<&[B::V]>,
    m: B::M,
) -> Result<Vec<B::V>, ExecError> {
    let mem = inst.info.mem;
    let (bytes, signed) = (mem.bytes as u32, mem.flags.contains(MemFlags::SIGNED));
    let f = flat_lanes(b, inst, lo, hi, m)?;
    let (lo, offset, in_lds) = (f.lo, f.offset, f.in_lds);
    let whole = Lanes {
        lo,
        hi: f.hi,
        offset: offset as i64,
        m: f.global,
        in_range: None,
        layout: Layout::Whole,
    };
    match data {
        None => {
            let g = load(b, inst, &whole, bytes, signed)?;
            let l = if bytes < 4 {
                vec![b.lds_read_narrow(lo, offset, bytes, signed, in_lds)?]
            } else {
                b.lds_read(lo, offset, bytes / 4, in_lds)?
            };
            let mine = match &f.own {
                Some(t) => Some(load(b, inst, t, bytes, signed)?),
                None => None,
            };
            let mut out = Vec::with_capacity(g.len());
            for (i, (gv, lv)) in g.into_iter().zip(l).enumerate() {
                let v = b.v_select(in_lds, gv, lv);
                out.push(match &mine {
                    Some(mine) => b.v_select(f.private, v, mine[i]),
                    None => v,
                });
            }
            Ok(out)
        }
        Some(v) => {
            store(b, inst, &whole, bytes, v)?;
            if bytes < 4 {
                b.lds_write_narrow(lo, offset, bytes, v[0], in_lds)?;
            } else {
                b.lds_write(lo, offset, v, in_lds)?;
            }
            if let Some(t) = &f.own {
                store(b, inst, t, bytes, v)?;
            }
            Ok(vec![])
        }
    }
}

/// What an atomic on private memory that is not one aligned dword is refused as.
const PRIVATE_ATOMIC: &str = "an atomic on private memory wider than a dword or not aligned to one";

/// The data a store of `bytes` writes: a narrow store's one register (its high half for the d16_hi forms),
/// else `bytes / 4` registers from `data`.
fn store_values<B: Backend>(b: &mut B, acc: bool, data: u32, bytes: u32, flags: MemFlags) -> Vec<B::V> {
    if bytes < 4 {
        vec![store_data(b, acc, data, flags.contains(MemFlags::D16_HI))]
    } else {
        (0..bytes / 4).map(|i| data_get(b, acc, data + i)).collect()
    }
}

/// Loads `bytes` at `t`'s lanes: a narrow load's one value (zero- or sign-extended), else `bytes / 4` dwords.
fn load<B: Backend>(b: &mut B, inst: &Inst, t: &Lanes<B>, bytes: u32, signed: bool) -> Result<Vec<B::V>, ExecError> {
    match t.layout {
        Layout::Private(p) => b.private_access(inst.info.name, p, bytes, signed, None, t.m),
        Layout::Whole if bytes < 4 => Ok(vec![b.v_load_narrow(t.lo, t.hi, t.offset, bytes, signed, t.m)?]),
        Layout::Whole => b.v_load(t.lo, t.hi, t.offset, bytes / 4, t.m),
    }
}

/// Stores `data` ([`store_values`]) of `bytes` at `t`'s lanes.
fn store<B: Backend>(b: &mut B, inst: &Inst, t: &Lanes<B>, bytes: u32, data: &[B::V]) -> Result<(), ExecError> {
    match t.layout {
        Layout::Private(p) => b
            .private_access(inst.info.name, p, bytes, false, Some(data), t.m)
            .map(|_| ()),
        Layout::Whole if bytes < 4 => b.v_store_narrow(t.lo, t.hi, t.offset, bytes, data[0], t.m),
        Layout::Whole => b.v_store(t.lo, t.hi, t.offset, data, t.m),
    }
}

/// A private access as the semantics define it ([`Backend::private_access`]'s default): `bytes` at each lane
/// of `m`'s private offset `p`, checked inside the lane's segment (else a fault of the instruction `name`),
/// laid out as [`private_address`] says, loaded (a narrow load's one value, else `bytes / 4` dwords) or, with
/// `data`, stored.
pub fn private_access<B: Backend>(
    b: &mut B,
    name: &'static str,
    p: B::V,
    bytes: u32,
    signed: bool,
    data: Option<&[B::V]>,
    m: B::M,
) -> Result<Vec<B::V>, ExecError> {
    check_private(b, name, p, bytes, m)?;
    let dwords = bytes.div_ceil(4);
    match private_layout(b, p, bytes, m) {
        Swizzle::Bytes => match data {
            Some(data) => {
                for (j, &v) in data.iter().enumerate() {
                    private_bytes_store(b, p, 4 * j as u32, bytes.min(4), v, m)?;
                }
                Ok(vec![])
            }
            None => (0..dwords)
                .map(|j| private_bytes_load(b, p, 4 * j, bytes.min(4), signed, m))
                .collect(),
        },
        Swizzle::Dwords => {
            let (lo, hi) = private_address(b, p);
            match data {
                Some(&[v]) if bytes < 4 => b.v_store_narrow(lo, hi, 0, bytes, v, m).map(|()| vec![]),
                Some(data) => {
                    for (j, &v) in data.iter().enumerate() {
                        b.v_store(lo, hi, SWIZZLE_ROW * j as i64, &[v], m)?;
                    }
                    Ok(vec![])
                }
                None if bytes < 4 => Ok(vec![b.v_load_narrow(lo, hi, 0, bytes, signed, m)?]),
                None => (0..dwords)
                    .map(|j| Ok(b.v_load(lo, hi, SWIZZLE_ROW * j as i64, 1, m)?.remove(0)))
                    .collect(),
            }
        }
    }
}

/// The LDS lanes of a FLAT atomic (data as a global atomic's: for compare-and-swap the new value, then the
/// value compared with).
fn flat_lds_atomic<B: Backend>(
    b: &mut B,
    inst: &Inst,
    addr: B::V,
    offset: u32,
    acc: bool,
    data: u32,
    m: B::M,
) -> Result<Vec<B::V>, ExecError> {
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
        let data: Vec<B::V> = (0..op.data_regs() as u32)
            .map(|i| store_data(b, acc, d + i, high))
            .collect();
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
    BufferResource {
        base_lo: d0,
        base_hi,
        stride,
        num_records: d2,
    }
}

/// Per-lane addresses of a buffer access of `bytes` and the mask of lanes in range.
fn buffer_lanes<B: Backend>(b: &mut B, inst: &Inst, bytes: u32) -> Result<BufferLanes<B>, ExecError> {
    let BufferResource {
        base_lo: d0,
        base_hi,
        stride,
        num_records: d2,
    } = buffer_resource(b, inst.field(Field::Srsrc) * 4);
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
        let vaddr_used = if inst.target.is_gfx940() {
            inst.field(Field::Lds) == 1
        } else {
            saddr == 0x7f
        };
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

/// Bytes between one dword of a lane's private segment and its next, in device memory: a row of the wave's
/// 64 lanes' dwords.
pub const SWIZZLE_ROW: i64 = 4 * crate::wave::LANES as i64;

/// The lanes `m` of a private access at private offsets `p` (checked by the access).
fn private_only<B: Backend>(p: B::V, m: B::M) -> Lanes<B> {
    // addresses are worked out by the access (Backend::private_access); these are never read
    Lanes {
        lo: p,
        hi: p,
        offset: 0,
        m,
        in_range: None,
        layout: Layout::Private(p),
    }
}

/// Faults when a lane of `m` would access past the end of its private segment with `bytes` at offset `p`
/// (`name`: the instruction's mnemonic).
fn check_private<B: Backend>(b: &mut B, name: &'static str, p: B::V, bytes: u32, m: B::M) -> Result<(), ExecError> {
    let (_, _, lane_bytes) = b.scratch();
    let lane_bytes = b.v_splat(lane_bytes);
    let end = splat(b, bytes);
    let last = b.v_op(VOp::AddU32, p, end);
    let too_far = b.v_cmp(cmp::GT_U32, last, lane_bytes);
    let wrapped = b.v_cmp(cmp::LT_U32, last, p);
    let bad = b.mask_op(MaskOp::Or, too_far, wrapped);
    let bad = b.mask_op(MaskOp::And, bad, m);
    b.fail_if_any(
        bad,
        ExecError::Private {
            mnemonic: name,
            lane_bytes: 0,
        },
    )
}

/// How a private access of `bytes` at offsets `p` lies: by dwords when every lane of `m` accesses inside one
/// dword or from the start of one (likely: compilers align private data), else byte by byte.
fn private_layout<B: Backend>(b: &mut B, p: B::V, bytes: u32, m: B::M) -> Swizzle {
    let three = splat(b, 3);
    let first = b.v_op(VOp::And, p, three);
    let span = splat(b, bytes.min(4));
    let end = b.v_op(VOp::AddU32, first, span);
    let four = splat(b, 4);
    let crossing = b.v_cmp(cmp::GT_U32, end, four);
    let crossing = b.mask_op(MaskOp::And, crossing, m);
    if any_lane(b, crossing, false) {
        Swizzle::Bytes
    } else {
        Swizzle::Dwords
    }
}

/// Whether any lane of `m` is set, decided once for a choice between two ways of executing the instruction
/// ([`Backend::uniform_bit`]; the JIT compiles the `likely` one).
fn any_lane<B: Backend>(b: &mut B, m: B::M, likely: bool) -> bool {
    let (lo, hi) = b.mask_parts(m);
    let any = nonzero64(b, lo, hi);
    b.uniform_bit(any, 0, likely)
}

/// The device address of private offset `p` of each lane. Private memory is laid out as the hardware's
/// swizzled private segment buffer lays it out (ROCr gives it ELEMENT_SIZE 4 bytes, INDEX_STRIDE 64 and
/// ADD_TID_ENABLE on gfx9): byte `p` of lane `l` at base + (`p` / 4) × 256 + 4 × `l` + `p` % 4, so that the
/// wave's dwords at one private offset are one 256-byte row.
fn private_address<B: Backend>(b: &mut B, p: B::V) -> (B::V, B::V) {
    let (base_lo, base_hi, _) = b.scratch();
    let two = splat(b, 2);
    let dword = b.v_op(VOp::Lshr, p, two);
    let eight = splat(b, 8);
    let row = b.v_op(VOp::Shl, dword, eight);
    let ids = b.v_lane_ids();
    let column = b.v_op(VOp::Shl, ids, two);
    let three = splat(b, 3);
    let byte = b.v_op(VOp::And, p, three);
    let within = b.v_op(VOp::AddU32, row, column);
    let within = b.v_op(VOp::AddU32, within, byte);
    let (bl, bh) = (b.v_splat(base_lo), b.v_splat(base_hi));
    let (lo, carry) = b.v_add_carry(bl, within, None);
    let zero = b_zero(b);
    let (hi, _) = b.v_add_carry(bh, zero, Some(carry));
    (lo, hi)
}

/// `n` (at most 4) bytes of each lane's private memory from offset `p` + `from`, loaded byte by byte into one
/// value, zero- or sign-extended.
fn private_bytes_load<B: Backend>(
    b: &mut B,
    p: B::V,
    from: u32,
    n: u32,
    signed: bool,
    m: B::M,
) -> Result<B::V, ExecError> {
    let mut v = b_zero(b);
    for k in 0..n {
        let at = splat(b, from + k);
        let q = b.v_op(VOp::AddU32, p, at);
        let (lo, hi) = private_address(b, q);
        let byte = b.v_load_narrow(lo, hi, 0, 1, false, m)?;
        let shift = splat(b, 8 * k);
        let byte = b.v_op(VOp::Shl, byte, shift);
        v = b.v_op(VOp::Or, v, byte);
    }
    if signed && n < 4 {
        let shift = splat(b, 32 - 8 * n);
        let up = b.v_op(VOp::Shl, v, shift);
        v = b.v_op(VOp::Ashr, up, shift);
    }
    Ok(v)
}

/// The low `n` (at most 4) bytes of `v` stored byte by byte at each lane's private offset `p` + `from`.
fn private_bytes_store<B: Backend>(b: &mut B, p: B::V, from: u32, n: u32, v: B::V, m: B::M) -> Result<(), ExecError> {
    for k in 0..n {
        let at = splat(b, from + k);
        let q = b.v_op(VOp::AddU32, p, at);
        let (lo, hi) = private_address(b, q);
        let shift = splat(b, 8 * k);
        let byte = b.v_op(VOp::Lshr, v, shift);
        b.v_store_narrow(lo, hi, 0, 1, byte, m)?;
    }
    Ok(())
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
