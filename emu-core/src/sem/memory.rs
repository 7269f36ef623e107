//! Memory instruction families selected by mnemonic: narrow and d16 LDS/global accesses, 64-bit and
//! compare-and-store LDS atomics, 64-bit global atomics, FLAT accesses (global memory, or the workgroup's LDS
//! through the shared aperture), MUBUF through ordinary buffer resources (with the hardware's out-of-range
//! rules), and the cache-control instructions (no-ops for the functional model).

use isa_amdgpu::encoding::Field;
use isa_amdgpu::Inst;

use super::backend::*;
use super::operand::{b_zero, data_get, data_set, vdst};
use super::vmem::{atomic_op, global_address};
use super::{form, ExecError, Flow};

/// High 32 bits of flat addresses that reach the workgroup's LDS (`src_shared_base`); the low 32 bits are the
/// LDS offset.
pub const SHARED_APERTURE_HI: u32 = 0x0001_0000;
/// High 32 bits of flat addresses in the private (scratch) aperture (`src_private_base`).
pub const PRIVATE_APERTURE_HI: u32 = 0x0002_0000;

pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Option<Result<Flow<B::S>, ExecError>> {
    let name = inst.info.name;
    if name.starts_with("ds_gws_") {
        return Some(gws(b, inst));
    }
    let r = if let Some(op) = name.strip_prefix("ds_") {
        ds(b, inst, op)?
    } else if let Some(op) = name.strip_prefix("global_") {
        global(b, inst, op)?
    } else if let Some(op) = name.strip_prefix("flat_") {
        flat(b, inst, op)
    } else if name.starts_with("image_") {
        image(b, inst)
    } else if name.starts_with("buffer_") && !name.starts_with("buffer_wb") && !name.starts_with("buffer_inv") {
        match is_private_resource(b, inst) {
            Ok(false) => buffer(b, inst),
            Ok(true) => Err(form(inst, "this access through the private segment buffer")),
            Err(e) => Err(e),
        }
    } else if matches!(name, "buffer_wbinvl1_vol" | "buffer_wbinvl1" | "buffer_wbl2" | "buffer_inv" | "s_dcache_wb" | "s_dcache_inv") {
        // caches are the timing model's business: functionally every access sees memory as it is
        Ok(())
    } else {
        return None;
    };
    Some(r.map(|()| Flow::Next))
}

/// MIMG: the descriptors and registers around [`Backend::v_image`], which does the per-lane work.
fn image<B: Backend>(b: &mut B, inst: &Inst) -> Result<(), ExecError> {
    use crate::image::{ImageInst, ImageKind, MAX_ADDRESS};
    if inst.field(Field::Lwe) == 1 {
        return Err(form(inst, "texture fail results (LWE)"));
    }
    if inst.field(Field::A16) == 1 {
        return Err(form(inst, "16-bit image addresses (A16)"));
    }
    let op = ImageInst::parse(inst.info.name, inst.field(Field::Dmask), inst.field(Field::D16) == 1, inst.field(Field::Unorm) == 1)
        .map_err(|what| form(inst, what))?;
    let acc = inst.field(Field::Acc) == 1;
    let (r, sr) = (inst.field(Field::Srsrc) * 4, inst.field(Field::Ssamp) * 4);
    let t = std::array::from_fn(|i| b.s_get(r + i as u32));
    let sampling = matches!(op.kind, ImageKind::Sample | ImageKind::Gather);
    let s = std::array::from_fn(|i| if sampling { b.s_get(sr + i as u32) } else { b.s_const(0) });
    let va = inst.field(Field::Vaddr);
    let addr: Vec<B::V> = (0..MAX_ADDRESS as u32).map(|i| b.v_get((va + i).min(255))).collect();
    let d = inst.field(Field::Vdata);
    let exec = b.exec();
    if op.kind == ImageKind::Store {
        let data: Vec<B::V> = (0..op.data_regs() as u32).map(|i| data_get(b, acc, d + i)).collect();
        b.v_image(&op, t, s, &addr, &data, exec)?;
    } else {
        let out = b.v_image(&op, t, s, &addr, &[], exec)?;
        for (i, v) in out.into_iter().enumerate() {
            data_set(b, acc, d + i as u32, v, exec);
        }
    }
    Ok(())
}

/// Global wave sync: `ds_gws_barrier` waits for (value + 1) waves of the grid, the value from the first active
/// lane of its VGPR; `ds_gws_init` sets up the resource the barrier counts in (the barrier carries its count,
/// so nothing is kept). The semaphores are not emulated.
fn gws<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    let v = b.v_get(inst.field(Field::Addr));
    let exec = b.exec();
    match inst.info.name {
        "ds_gws_init" => Ok(Flow::Next),
        "ds_gws_barrier" => {
            let n = b.v_first_lane(v, exec);
            let one = b.s_const(1);
            let count = b.s_op(SOp::Add, n, one);
            b.gws_barrier(count);
            Ok(Flow::Barrier)
        }
        _ => Err(form(inst, "global wave sync semaphores")),
    }
}

fn splat<B: Backend>(b: &mut B, x: u32) -> B::V {
    let s = b.s_const(x);
    b.v_splat(s)
}

/// A narrow access: (bytes, signed, d16 half: None = whole register, Some(false) = low half kept high,
/// Some(true) = high half).
type Narrow = (u32, bool, Option<bool>);

fn narrow_kind(op: &str) -> Option<Narrow> {
    Some(match op {
        "u8" | "ubyte" => (1, false, None),
        "i8" | "sbyte" => (1, true, None),
        "u16" | "ushort" => (2, false, None),
        "i16" | "sshort" => (2, true, None),
        "u8_d16" | "ubyte_d16" => (1, false, Some(false)),
        "i8_d16" | "sbyte_d16" => (1, true, Some(false)),
        "u16_d16" | "short_d16" => (2, false, Some(false)),
        "u8_d16_hi" | "ubyte_d16_hi" => (1, false, Some(true)),
        "i8_d16_hi" | "sbyte_d16_hi" => (1, true, Some(true)),
        "u16_d16_hi" | "short_d16_hi" => (2, false, Some(true)),
        _ => return None,
    })
}

/// Splits a `load_<kind>`/`store_<kind>` mnemonic (prefix already removed) into (is a load, kind).
fn load_or_store(op: &str) -> Option<(bool, &str)> {
    op.strip_prefix("load_").map(|k| (true, k)).or_else(|| op.strip_prefix("store_").map(|k| (false, k)))
}

/// The size of a load's or store's `kind` (the mnemonic after `load_`/`store_`): whole dwords, or one narrow
/// value as [`narrow_kind`] describes it (stores of `byte`/`short`, `_d16_hi` storing the high half).
fn access_kind(kind: &str) -> Option<(u32, Option<Narrow>)> {
    Some(match kind {
        "dword" => (1, None),
        "dwordx2" => (2, None),
        "dwordx3" => (3, None),
        "dwordx4" => (4, None),
        "byte" => (1, Some((1, false, None))),
        "short" => (1, Some((2, false, None))),
        "byte_d16_hi" => (1, Some((1, false, Some(true)))),
        "short_d16_hi" => (1, Some((2, false, Some(true)))),
        k => (1, Some(narrow_kind(k)?)),
    })
}

/// Writes a narrow load's value: the whole register, or (d16) one half with the other kept.
fn write_narrow<B: Backend>(b: &mut B, dst: u32, v: B::V, d16: Option<bool>, m: B::M) {
    let v = match d16 {
        None => v,
        Some(hi) => {
            let old = b.v_get(dst);
            let (keep, lo16) = (splat(b, if hi { 0xffff } else { 0xffff_0000 }), splat(b, 0xffff));
            let kept = b.v_op(VOp::And, old, keep);
            let v = b.v_op(VOp::And, v, lo16);
            let v = if hi {
                let sh = splat(b, 16);
                b.v_op(VOp::Shl, v, sh)
            } else {
                v
            };
            b.v_op(VOp::Or, kept, v)
        }
    };
    b.v_set(dst, v, m);
}

/// The data of a narrow store: `_d16_hi` stores the high half.
fn store_data<B: Backend>(b: &mut B, reg: u32, hi: bool) -> B::V {
    let v = b.v_get(reg);
    if hi {
        let sh = splat(b, 16);
        b.v_op(VOp::Lshr, v, sh)
    } else {
        v
    }
}

/// The body of a DS instruction, given the per-lane addresses and EXEC.
type DsBody<'a, B> = &'a dyn Fn(&mut B, <B as Backend>::V, <B as Backend>::M) -> Result<(), ExecError>;

fn ds<B: Backend>(b: &mut B, inst: &Inst, op: &str) -> Option<Result<(), ExecError>> {
    let offset = inst.field(Field::Offset0) | inst.field(Field::Offset1) << 8;
    let run = |b: &mut B, f: DsBody<B>| -> Result<(), ExecError> {
        if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
            return Err(form(inst, "GDS or AGPR data"));
        }
        let addr = b.v_get(inst.field(Field::Addr));
        let m = b.exec();
        f(b, addr, m)
    };
    if let Some(kind) = op.strip_prefix("read_").and_then(narrow_kind) {
        let (bytes, signed, d16) = kind;
        return Some(run(b, &|b, addr, m| {
            let v = b.lds_read_narrow(addr, offset, bytes, signed, m)?;
            write_narrow(b, vdst(inst), v, d16, m);
            Ok(())
        }));
    }
    let store = match op {
        "write_b8" => Some((1, false)),
        "write_b16" => Some((2, false)),
        "write_b8_d16_hi" => Some((1, true)),
        "write_b16_d16_hi" => Some((2, true)),
        _ => None,
    };
    if let Some((bytes, hi)) = store {
        return Some(run(b, &|b, addr, m| {
            let data = store_data(b, inst.field(Field::Data0), hi);
            b.lds_write_narrow(addr, offset, bytes, data, m)
        }));
    }
    if let Some(width) = op.strip_prefix("cmpst_").map(|w| w.trim_start_matches("rtn_")) {
        let n = if width == "b64" || width == "f64" { 2 } else { 1 };
        return Some(run(b, &|b, addr, m| {
            // data0 is the value compared with, data1 the value stored
            let (d0, d1) = (inst.field(Field::Data0), inst.field(Field::Data1));
            let cmp: Vec<B::V> = (0..n).map(|i| b.v_get(d0 + i)).collect();
            let src: Vec<B::V> = (0..n).map(|i| b.v_get(d1 + i)).collect();
            let old = b.lds_cmpst(addr, offset, &cmp, &src, m)?;
            if inst.info.operand(Field::Vdst).is_some() {
                for (i, v) in old.into_iter().enumerate() {
                    b.v_set(vdst(inst) + i as u32, v, m);
                }
            }
            Ok(())
        }));
    }
    if op.ends_with("64") && !op.starts_with("read") && !op.starts_with("write_b") && !op.starts_with("write2") {
        let aop = atomic_op(inst.info.name)?;
        return Some(run(b, &|b, addr, m| {
            let d = inst.field(Field::Data0);
            let data = (b.v_get(d), b.v_get(d + 1));
            let old = b.lds_atomic64(aop, addr, offset, data, m)?;
            if inst.info.operand(Field::Vdst).is_some() {
                b.v_set(vdst(inst), old.0, m);
                b.v_set(vdst(inst) + 1, old.1, m);
            }
            Ok(())
        }));
    }
    None
}

fn global<B: Backend>(b: &mut B, inst: &Inst, op: &str) -> Option<Result<(), ExecError>> {
    let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
    if let Some(kind) = op.strip_prefix("load_").and_then(narrow_kind).filter(|k| k.2.is_some()) {
        let (bytes, signed, d16) = kind;
        return Some((|| {
            let (lo, hi) = global_address(b, inst)?;
            let m = b.exec();
            let v = b.v_load_narrow(lo, hi, offset, bytes, signed, m)?;
            write_narrow(b, vdst(inst), v, d16, m);
            Ok(())
        })());
    }
    let store = match op {
        "store_byte_d16_hi" => Some(1),
        "store_short_d16_hi" => Some(2),
        _ => None,
    };
    if let Some(bytes) = store {
        return Some((|| {
            let (lo, hi) = global_address(b, inst)?;
            let m = b.exec();
            let data = store_data(b, inst.field(Field::Data), true);
            b.v_store_narrow(lo, hi, offset, bytes, data, m)
        })());
    }
    let atomic64 = op.starts_with("atomic_") && (op.ends_with("_x2") || op == "atomic_add_f64") && op != "atomic_cmpswap_x2";
    if atomic64 {
        let aop = atomic_op(inst.info.name)?;
        return Some((|| {
            if inst.field(Field::Acc) == 1 {
                return Err(form(inst, "AGPR data"));
            }
            let (lo, hi) = global_address(b, inst)?;
            let m = b.exec();
            let d = inst.field(Field::Data);
            let data = (b.v_get(d), b.v_get(d + 1));
            let old = b.v_atomic64(aop, lo, hi, offset, data, m)?;
            if inst.field(Field::Glc) == 1 {
                b.v_set(vdst(inst), old.0, m);
                b.v_set(vdst(inst) + 1, old.1, m);
            }
            Ok(())
        })());
    }
    None
}

/// FLAT loads and stores: per lane, an address in the shared aperture goes to LDS (its low 32 bits are the LDS
/// offset), one in the private aperture is refused (not modelled yet), anything else is global memory.
fn flat<B: Backend>(b: &mut B, inst: &Inst, op: &str) -> Result<(), ExecError> {
    let (load, kind) = load_or_store(op).ok_or_else(|| form(inst, "FLAT atomics"))?;
    let (dwords, narrow) = access_kind(kind).ok_or_else(|| form(inst, "this FLAT access"))?;
    if inst.field(Field::Lds) == 1 {
        return Err(form(inst, "LDS DMA"));
    }
    let acc = inst.field(Field::Acc) == 1;
    let addr = inst.field(Field::Addr);
    let (lo, hi) = (b.v_get(addr), b.v_get(addr + 1));
    let offset = inst.field(Field::Offset) & 0xfff;
    let exec = b.exec();
    let (shared_hi, private_hi) = (splat(b, SHARED_APERTURE_HI), splat(b, PRIVATE_APERTURE_HI));
    let in_lds = b.v_cmp(cmp::EQ_U32, hi, shared_hi);
    let in_lds = b.mask_op(MaskOp::And, in_lds, exec);
    let private = b.v_cmp(cmp::EQ_U32, hi, private_hi);
    let private = b.mask_op(MaskOp::And, private, exec);
    b.fail_if_any(private, form(inst, "FLAT accesses to the private aperture"))?;
    let global = b.mask_op(MaskOp::AndNot, exec, in_lds);
    let d = if load { vdst(inst) } else { inst.field(Field::Data) };
    match (load, narrow) {
        (true, None) => {
            let g = b.v_load(lo, hi, offset as i64, dwords, global)?;
            let l = b.lds_read(lo, offset, dwords, in_lds)?;
            for (i, (gv, lv)) in g.into_iter().zip(l).enumerate() {
                let v = b.v_select(in_lds, gv, lv);
                data_set(b, acc, d + i as u32, v, exec);
            }
        }
        (false, None) => {
            let data: Vec<B::V> = (0..dwords).map(|i| data_get(b, acc, d + i)).collect();
            b.v_store(lo, hi, offset as i64, &data, global)?;
            b.lds_write(lo, offset, &data, in_lds)?;
        }
        (true, Some((bytes, signed, d16))) => {
            let g = b.v_load_narrow(lo, hi, offset as i64, bytes, signed, global)?;
            let l = b.lds_read_narrow(lo, offset, bytes, signed, in_lds)?;
            let v = b.v_select(in_lds, g, l);
            write_narrow(b, d, v, d16, exec);
        }
        (false, Some((bytes, _, d16))) => {
            let data = store_data(b, d, d16 == Some(true));
            b.v_store_narrow(lo, hi, offset as i64, bytes, data, global)?;
            b.lds_write_narrow(lo, offset, bytes, data, in_lds)?;
        }
    }
    Ok(())
}

/// Whether a MUBUF instruction's resource is the private segment buffer (ADD_TID_ENABLE, bit 23 of dword 3),
/// which addresses each lane's scratch; anything else is an ordinary buffer.
pub(super) fn is_private_resource<B: Backend>(b: &mut B, inst: &Inst) -> Result<bool, ExecError> {
    let d3 = b.s_get(inst.field(Field::Srsrc) * 4 + 3);
    let d3 = b.uniform_value(d3).ok_or_else(|| form(inst, "a buffer resource known only at run time"))?;
    Ok(d3 >> 23 & 1 == 1)
}

/// MUBUF through an ordinary buffer resource: base (dword 0, bits 15:0 of dword 1), stride (dword 1 bits
/// 29:16), num_records (dword 2). Lane address = base + index * stride + offset, with index from vaddr (idxen)
/// and offset = vaddr (offen) + soffset + the instruction's offset. Out of range (raw: offset + size past
/// num_records bytes; structured: index >= num_records) loads give 0 and stores and atomics do nothing, as on
/// the hardware; in range, device memory is checked as everywhere.
pub(super) fn buffer<B: Backend>(b: &mut B, inst: &Inst) -> Result<(), ExecError> {
    if inst.info.name.contains("_format_") {
        return buffer_format(b, inst);
    }
    let name = inst.info.name.trim_start_matches("buffer_");
    let (load, kind) = load_or_store(name).ok_or_else(|| form(inst, "this buffer instruction"))?;
    let (dwords, narrow) = access_kind(kind).ok_or_else(|| form(inst, "this buffer access"))?;
    if inst.field(Field::Lds) == 1 {
        return Err(form(inst, "LDS DMA"));
    }
    let bytes = narrow.map_or(4 * dwords, |n| n.0);
    let (lo, hi, ok) = buffer_lanes(b, inst, bytes)?;
    let acc = inst.field(Field::Acc) == 1;
    let exec = b.exec();
    let m = b.mask_op(MaskOp::And, exec, ok);
    let d = inst.field(Field::Vdata);
    let zero = b_zero(b);
    match (load, narrow) {
        (true, None) => {
            let data = b.v_load(lo, hi, 0, dwords, m)?;
            for (i, v) in data.into_iter().enumerate() {
                let v = b.v_select(ok, zero, v);
                data_set(b, acc, d + i as u32, v, exec);
            }
        }
        (false, None) => {
            let data: Vec<B::V> = (0..dwords).map(|i| data_get(b, acc, d + i)).collect();
            b.v_store(lo, hi, 0, &data, m)?;
        }
        (true, Some((bytes, signed, d16))) => {
            let v = b.v_load_narrow(lo, hi, 0, bytes, signed, m)?;
            let v = b.v_select(ok, zero, v);
            write_narrow(b, d, v, d16, exec);
        }
        (false, Some((bytes, _, d16))) => {
            let data = store_data(b, d, d16 == Some(true));
            b.v_store_narrow(lo, hi, 0, bytes, data, m)?;
        }
    }
    Ok(())
}

/// A typed buffer access: elements in the format of the resource's word 3 (1-D buffer images); indexed
/// (structured) accesses only, where the index decides what is in range.
fn buffer_format<B: Backend>(b: &mut B, inst: &Inst) -> Result<(), ExecError> {
    let op = crate::image::FormatAccess::parse(inst.info.name).map_err(|what| form(inst, what))?;
    if inst.field(Field::Idxen) == 0 {
        return Err(form(inst, "a typed buffer access without an index"));
    }
    if inst.field(Field::Lds) == 1 {
        return Err(form(inst, "LDS DMA"));
    }
    let (lo, hi, ok) = buffer_lanes(b, inst, 1)?;
    let word3 = b.s_get(inst.field(Field::Srsrc) * 4 + 3);
    let acc = inst.field(Field::Acc) == 1;
    let exec = b.exec();
    let m = b.mask_op(MaskOp::And, exec, ok);
    let d = inst.field(Field::Vdata);
    if op.load {
        let out = b.v_buffer_format(&op, word3, lo, hi, &[], m)?;
        let zero = b_zero(b);
        for (i, v) in out.into_iter().enumerate() {
            let v = b.v_select(ok, zero, v);
            data_set(b, acc, d + i as u32, v, exec);
        }
    } else {
        let data: Vec<B::V> = (0..op.data_regs() as u32).map(|i| data_get(b, acc, d + i)).collect();
        b.v_buffer_format(&op, word3, lo, hi, &data, m)?;
    }
    Ok(())
}

/// Per-lane addresses (lo, hi) of a buffer access and the mask of lanes in range.
type BufferLanes<B> = (<B as Backend>::V, <B as Backend>::V, <B as Backend>::M);

/// Per-lane addresses of a buffer access of `bytes` and the mask of lanes in range.
fn buffer_lanes<B: Backend>(b: &mut B, inst: &Inst, bytes: u32) -> Result<BufferLanes<B>, ExecError> {
    let r = inst.field(Field::Srsrc) * 4;
    let (d0, d1, d2) = (b.s_get(r), b.s_get(r + 1), b.s_get(r + 2));
    let base_hi = {
        let m = b.s_const(0xffff);
        b.s_op(SOp::And, d1, m)
    };
    let stride = {
        let (sh, m) = (b.s_const(16), b.s_const(0x3fff));
        let s = b.s_op(SOp::Lshr, d1, sh);
        b.s_op(SOp::And, s, m)
    };
    let so = inst.field(Field::Soffset);
    let soffset = match so {
        0..=127 => b.s_get(so),
        _ => b.s_const(super::operand::inline_const32(so).ok_or_else(|| form(inst, "this buffer offset"))?),
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
