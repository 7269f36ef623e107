//! Vector memory: GLOBAL, FLAT, SCRATCH and MUBUF/MTBUF loads, stores and atomics, with their address
//! forms (VGPR pairs, SGPR base plus VGPR offset, the private segment, buffer resources), and vector cache
//! control.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::OperandKind;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};

/// Executes a vector memory instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::GlobalAtomicAdd | O::GlobalAtomicSub | O::GlobalAtomicAnd | O::GlobalAtomicOr | O::GlobalAtomicXor
        | O::GlobalAtomicSmin | O::GlobalAtomicSmax | O::GlobalAtomicUmin | O::GlobalAtomicUmax | O::GlobalAtomicSwap
        | O::GlobalAtomicInc | O::GlobalAtomicDec | O::GlobalAtomicAddF32 => {
            if inst.field(Field::Acc) == 1 {
                return Err(form(inst, "AGPR data"));
            }
            let op = atomic_op(inst.info.name).ok_or_else(|| unsupported(inst))?;
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let data = b.v_get(inst.field(Field::Data));
            let m = b.exec();
            let old = b.v_atomic(op, lo, hi, offset, data, m)?;
            // glc (sc0 on gfx940) asks for the old value
            if inst.field(Field::Glc) == 1 {
                b.v_set(vdst(inst), old, m);
            }
            Ok(Flow::Next)
        }
        O::GlobalAtomicCmpswap | O::GlobalAtomicCmpswapX2 => {
            if inst.field(Field::Acc) == 1 {
                return Err(form(inst, "AGPR data"));
            }
            // data holds the new value, then the value to compare with
            let n = if inst.info.opcode == O::GlobalAtomicCmpswapX2 { 2 } else { 1 };
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let base = inst.field(Field::Data);
            let src: Vec<B::V> = (0..n).map(|i| b.v_get(base + i)).collect();
            let cmp: Vec<B::V> = (0..n).map(|i| b.v_get(base + n + i)).collect();
            let m = b.exec();
            let old = b.v_atomic_cmpswap(lo, hi, offset, &src, &cmp, m)?;
            if inst.field(Field::Glc) == 1 {
                for (i, v) in old.into_iter().enumerate() {
                    b.v_set(vdst(inst) + i as u32, v, m);
                }
            }
            Ok(Flow::Next)
        }
        O::GlobalLoadUbyte | O::GlobalLoadSbyte | O::GlobalLoadUshort | O::GlobalLoadSshort | O::GlobalStoreByte
        | O::GlobalStoreShort => {
            if inst.field(Field::Acc) == 1 || inst.field(Field::Lds) == 1 {
                return Err(form(inst, "AGPR data or LDS DMA"));
            }
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let m = b.exec();
            let (bytes, signed) = match inst.info.opcode {
                O::GlobalLoadUbyte | O::GlobalStoreByte => (1, false),
                O::GlobalLoadSbyte => (1, true),
                O::GlobalLoadUshort | O::GlobalStoreShort => (2, false),
                _ => (2, true),
            };
            if inst.info.name.starts_with("global_load") {
                let v = b.v_load_narrow(lo, hi, offset, bytes, signed, m)?;
                b.v_set(vdst(inst), v, m);
            } else {
                let data = b.v_get(inst.field(Field::Data));
                b.v_store_narrow(lo, hi, offset, bytes, data, m)?;
            }
            Ok(Flow::Next)
        }

        // ---- private (scratch) memory ------------------------------------------------------------------
        O::ScratchLoadDword | O::ScratchLoadDwordx2 | O::ScratchLoadDwordx3 | O::ScratchLoadDwordx4 | O::ScratchStoreDword
        | O::ScratchStoreDwordx2 | O::ScratchStoreDwordx3 | O::ScratchStoreDwordx4 | O::BufferLoadDword
        | O::BufferLoadDwordx2 | O::BufferLoadDwordx3 | O::BufferLoadDwordx4 | O::BufferStoreDword | O::BufferStoreDwordx2
        | O::BufferStoreDwordx3 | O::BufferStoreDwordx4 => {
            if inst.encoding() == Encoding::Mubuf && !super::memory::is_private_resource(b, inst)? {
                return super::memory::buffer(b, inst).map(|()| Flow::Next);
            }
            let dwords = match inst.info.name.trim_start_matches("scratch_").trim_start_matches("buffer_") {
                "load_dword" | "store_dword" => 1,
                "load_dwordx2" | "store_dwordx2" => 2,
                "load_dwordx3" | "store_dwordx3" => 3,
                _ => 4,
            };
            if inst.field(Field::Lds) == 1 && inst.encoding() == Encoding::Mubuf {
                return Err(form(inst, "LDS DMA"));
            }
            let acc = inst.field(Field::Acc) == 1;
            let private = private_offsets(b, inst)?;
            let (lo, hi) = private_addresses(b, inst, private, dwords)?;
            let m = b.exec();
            let load = inst.info.name.contains("_load_");
            let data_field = if inst.encoding() == Encoding::Mubuf { Field::Vdata } else { Field::Data };
            if load {
                let dst = if inst.encoding() == Encoding::Mubuf { inst.field(Field::Vdata) } else { vdst(inst) };
                let data = b.v_load(lo, hi, 0, dwords, m)?;
                for (i, d) in data.into_iter().enumerate() {
                    data_set(b, acc, dst + i as u32, d, m);
                }
            } else {
                let base = inst.field(data_field);
                let data: Vec<B::V> = (0..dwords).map(|i| data_get(b, acc, base + i)).collect();
                b.v_store(lo, hi, 0, &data, m)?;
            }
            Ok(Flow::Next)
        }

        // ---- vector memory ----------------------------------------------------------------------------
        O::GlobalLoadDword | O::GlobalLoadDwordx2 | O::GlobalLoadDwordx3 | O::GlobalLoadDwordx4 | O::GlobalStoreDword
        | O::GlobalStoreDwordx2 | O::GlobalStoreDwordx3 | O::GlobalStoreDwordx4 => {
            let dwords = match inst.info.opcode {
                O::GlobalLoadDword | O::GlobalStoreDword => 1,
                O::GlobalLoadDwordx2 | O::GlobalStoreDwordx2 => 2,
                O::GlobalLoadDwordx3 | O::GlobalStoreDwordx3 => 3,
                _ => 4,
            };
            if inst.field(Field::Lds) == 1 {
                return Err(form(inst, "LDS DMA"));
            }
            let acc = inst.field(Field::Acc) == 1;
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let m = b.exec();
            if inst.info.name.starts_with("global_load") {
                let data = b.v_load(lo, hi, offset, dwords, m)?;
                for (i, d) in data.into_iter().enumerate() {
                    data_set(b, acc, vdst(inst) + i as u32, d, m);
                }
            } else {
                let base = inst.field(Field::Data);
                let data: Vec<B::V> = (0..dwords).map(|i| data_get(b, acc, base + i)).collect();
                b.v_store(lo, hi, offset, &data, m)?;
            }
            Ok(Flow::Next)
        }
        // ---- more scalar: calls, selects, 64-bit masks -----------------------------------------------
        O::BufferWbinvl1Vol | O::BufferWbinvl1 | O::BufferWbl2 | O::BufferInvl2 => {
            // caches are not modelled functionally: memory is always coherent
            Ok(Flow::Next)
        }
        _ => super::memory::execute(b, inst).unwrap_or_else(|| Err(unsupported(inst))),
    }
}

/// The read-modify-write operation of a DS or GLOBAL atomic, from its mnemonic.
pub(super) fn atomic_op(name: &str) -> Option<AtomicOp> {
    let base = name.trim_start_matches("ds_").trim_start_matches("global_atomic_").trim_start_matches("flat_atomic_");
    let base = base.replace("_rtn", "").replace("_x2", "").replace("_u64", "_u32").replace("_i64", "_i32").replace("_b64", "_b32");
    Some(match base.as_str() {
        "add_u32" | "add" => AtomicOp::Add,
        "sub_u32" | "sub" => AtomicOp::Sub,
        "and_b32" | "and" => AtomicOp::And,
        "or_b32" | "or" => AtomicOp::Or,
        "xor_b32" | "xor" => AtomicOp::Xor,
        "min_i32" | "smin" => AtomicOp::SMin,
        "max_i32" | "smax" => AtomicOp::SMax,
        "min_u32" | "umin" => AtomicOp::UMin,
        "max_u32" | "umax" => AtomicOp::UMax,
        "wrxchg_b32" | "swap" => AtomicOp::Swap,
        "inc_u32" | "inc" => AtomicOp::Inc,
        "dec_u32" | "dec" => AtomicOp::Dec,
        "add_f32" => AtomicOp::AddF32,
        "add_f64" => AtomicOp::AddF64,
        _ => return None,
    })
}


/// Per-lane offsets into the private segment of a SCRATCH instruction, or of a MUBUF instruction through the
/// private segment buffer resource (ADD_TID set); other buffer resources are not supported yet.
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
fn private_addresses<B: Backend>(b: &mut B, inst: &Inst, p: B::V, dwords: u32) -> Result<(B::V, B::V), ExecError> {
    let (base_lo, base_hi, lane_bytes) = b.scratch();
    let lane_bytes_v = b.v_splat(lane_bytes);
    let end = b.s_const(dwords * 4);
    let end = b.v_splat(end);
    let last = b.v_op(VOp::AddU32, p, end);
    let too_far = b.v_cmp(cmp::GT_U32, last, lane_bytes_v);
    let wrapped = b.v_cmp(cmp::LT_U32, last, p);
    let exec = b.exec();
    let bad = b.mask_op(MaskOp::Or, too_far, wrapped);
    let bad = b.mask_op(MaskOp::And, bad, exec);
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
