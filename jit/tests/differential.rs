//! Differential property tests: random sequences of scalar and vector ALU instructions — drawn from the ISA
//! table (every SOP1/SOP2/SOPC/SOPK/VOP1/VOP2/VOPC/VOP3 row of gfx90a and gfx942 outside control flow, memory
//! and wave-level side effects, s_cselect, s_cmpk, readlane, writelane and readfirstlane among them), with
//! random operands and modifiers (VOP3 neg, abs, clamp, omod and op_sel; VOP1/VOP2/VOPC as SDWA with random
//! selects, sign extension, neg/abs, clamp and scalar sources, and as DPP with random controls, masks and
//! bound_ctrl), ending half the time in a random branch (s_branch, s_cbranch on SCC, VCC or EXEC) — run on
//! random wave state (registers, AGPRs, EXEC, VCC, SCC, M0) once on the interpreter, instruction by
//! instruction, and once as one JIT block; another test mixes in global and LDS loads, stores and atomics
//! (some of them out of range), and one puts the sequence between two carries into one SGPR pair (the JIT
//! leaves the first out when nothing between reads it). The two engines must leave bit-identical SGPRs, VGPRs, AGPRs, SCC, buffer and LDS, and continue at the same PC,
//! or stop on the same instruction with the same error (an interpreter refusal never matches a JIT fault).

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::{execute, Flow};
use emu_core::wave::WaveState;
use isa_amdgpu::table::{OperandKind, RegFile, Unit};
use isa_amdgpu::{decode, Encoding, Field, Inst, OpInfo, Target, GFX9};
use proptest::prelude::*;
use std::sync::OnceLock;

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

/// Rows the generator draws from.
fn pool(target: Target) -> Vec<&'static OpInfo> {
    let excluded = [
        "s_cbranch",
        "s_branch",
        "s_setpc",
        "s_swappc",
        "s_getpc",
        "s_endpgm",
        "s_barrier",
        "s_trap",
        "s_sendmsg",
        "s_sleep",
        "s_waitcnt",
        "s_nop",
        "s_set_gpr_idx",
        "v_movrel",
        "s_getreg",
        "s_setreg",
        "s_rfe",
        "s_call",
        "s_memtime",
        "s_memrealtime",
        "s_dcache",
        "s_icache",
        "s_setprio",
        "s_setkill",
        "s_wakeup",
        "s_ttrace",
        "s_incperflevel",
        "s_decperflevel",
        "s_cbranch_join",
        "s_set_mode",
        "s_denorm",
        "s_round",
        "v_nop",
        "s_version",
        "s_code_end",
        "s_endpgm_saved",
        "s_endpgm_ordered",
        "v_clrexcp",
        "s_bitset",
        "s_setvskip",
        "s_mov_fed",
        "v_mov_fed",
        "s_andn1_wrexec",
        "s_andn2_wrexec",
        "s_wqm",
        "s_quadmask",
        "v_swap",
    ];
    let encodings = [
        Encoding::Sop1,
        Encoding::Sop2,
        Encoding::Sopc,
        Encoding::Sopk,
        Encoding::Vop1,
        Encoding::Vop2,
        Encoding::Vopc,
        Encoding::Vop3,
    ];
    GFX9.iter()
        .filter(|r| r.on(target) && encodings.contains(&r.encoding))
        .filter(|r| matches!(r.unit, Unit::Salu | Unit::Valu | Unit::Trans | Unit::F64))
        .filter(|r| !excluded.iter().any(|e| r.name.starts_with(e)))
        .collect()
}

/// A random value for one operand field.
fn operand_value(kind: OperandKind, field: Field, pick: u32, literal: &mut Option<u32>, lit: u32) -> u32 {
    match kind {
        OperandKind::Reg {
            file: RegFile::V,
            count,
        } => (pick % (12 - count as u32 + 1)) & if count > 1 { !1 } else { !0 },
        OperandKind::Reg { file: RegFile::A, .. } => pick % 4,
        OperandKind::Reg {
            file: RegFile::S,
            count,
        } => {
            let choices = [0u32, 2, 4, 6, 8, 10, 106, 124];
            let v = choices[(pick % choices.len() as u32) as usize];
            if count > 1 && v == 124 {
                2
            } else {
                v
            }
        }
        OperandKind::Src { count, .. } => {
            let vsrc = matches!(field, Field::Src0 | Field::Src1 | Field::Src2);
            match pick % 10 {
                0..=3 if vsrc => 256 + (((pick / 10) % 12) & if count > 1 { !1 } else { !0 }),
                4 | 5 => ((pick / 10) % 12) & !1,
                6 => 128 + (pick / 10) % 81,
                7 => 240 + (pick / 10) % 9,
                8 if count == 1 => {
                    *literal = Some(lit);
                    255
                }
                _ => 106,
            }
        }
        OperandKind::Imm | OperandKind::Hex => pick & 0xffff,
        _ => 0,
    }
}

/// Builds an instruction of `row` from random numbers; `None` if the combination does not encode.
fn build(row: &'static OpInfo, target: Target, picks: &[u32], lit: u32) -> Option<Inst> {
    let mut b = Inst::build(row, target).ok()?;
    let mut literal = None;
    for (i, op) in row.operands.iter().enumerate() {
        if !matches!(
            op.kind,
            OperandKind::Reg { .. } | OperandKind::Src { .. } | OperandKind::Imm | OperandKind::Hex
        ) {
            continue; // implicit operands (vcc...) have no field to set
        }
        let v = operand_value(op.kind, op.field, picks[i % picks.len()], &mut literal, lit);
        b = b.set(op.field, v).ok()?;
    }
    let (m, form, ext) = (picks[5 % picks.len()], picks[6 % picks.len()], picks[7 % picks.len()]);
    if row.encoding == Encoding::Vop3 {
        // neg/abs on sources now and then; clamp, omod or op_sel now and then
        if m.is_multiple_of(4) {
            b = b
                .set(Field::Neg, (m >> 4) & 7)
                .ok()
                .unwrap_or_else(|| Inst::build(row, target).expect("row"));
        }
        if row.operand(Field::Sdst).is_none() && m % 8 == 1 {
            b = b.set(Field::Abs, (m >> 8) & 7).ok()?;
        }
        match form % 12 {
            0 | 1 => b = b.clone().set(Field::Clamp, 1).unwrap_or(b),
            2 | 3 => b = b.clone().set(Field::Omod, 1 + (form >> 4) % 3).unwrap_or(b),
            4 | 5 => b = b.clone().set(Field::OpSel, (form >> 4) & 0xf).unwrap_or(b),
            _ => {}
        }
    } else if matches!(row.encoding, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc) && literal.is_none() {
        // src0 from the SDWA/DPP dword: a VGPR among v0..v11
        let vgpr = ext % 12;
        match form % 8 {
            0 | 1 => {
                let sels = |x: u32| x % 7;
                let mut e = vgpr
                    | sels(ext >> 4) << 16
                    | (ext >> 8 & 1) << 19
                    | (ext >> 9 & 3) << 20
                    | sels(ext >> 12) << 24
                    | (ext >> 15 & 1) << 27
                    | (ext >> 16 & 3) << 28;
                if row.encoding == Encoding::Vopc {
                    // sdst: VCC (SD clear) or an SGPR pair
                    if ext >> 18 & 1 == 1 {
                        e |= 1 << 15 | ((ext >> 19) % 5 * 2) << 8;
                    }
                } else {
                    e |= sels(ext >> 19) << 8 | ((ext >> 22) % 3) << 11 | (ext >> 24 & 1) << 13;
                }
                // now and then a scalar source (the S0/S1 bits): an SGPR, a half of VCC or an inline constant
                let scalar = |x: u32| [x % 12, 106 + x % 2, 128 + x % 81, 240 + x % 9][(x >> 8) as usize % 4];
                if ext >> 25 & 3 == 0 {
                    e = e & !0xff | scalar(m) | 1 << 23;
                }
                if ext >> 26 & 3 == 1 && row.operand(Field::Vsrc1).is_some() {
                    b = b.set(Field::Vsrc1, scalar(m >> 12)).ok()?;
                    e |= 1 << 31;
                }
                b = b.set(Field::Src0, 0xf9).ok()?.ext(isa_amdgpu::Form::Sdwa, e);
            }
            2 | 3 => {
                const CTRLS: [u32; 16] = [
                    0x000, 0x01b, 0x0e4, 0x0b1, 0x101, 0x10f, 0x111, 0x118, 0x121, 0x12f, 0x130, 0x134, 0x138, 0x13c,
                    0x140, 0x141,
                ];
                let ctrl = if ext >> 30 == 0 {
                    [0x142, 0x143][(ext >> 4) as usize & 1]
                } else {
                    CTRLS[(ext >> 4) as usize % 16]
                };
                let masks = if ext >> 20 & 1 == 1 { 0xff } else { ext >> 24 };
                let e = vgpr | ctrl << 8 | (ext >> 21 & 1) << 19 | (ext >> 22 & 0xf) << 20 | masks << 24;
                b = b.set(Field::Src0, 0xfa).ok()?.ext(isa_amdgpu::Form::Dpp, e);
            }
            _ => {}
        }
    }
    if let Some(l) = literal {
        b = b.literal(l);
    }
    let bytes = b.encode().ok()?;
    decode(&bytes, 0x1000, target).ok()
}

/// Float-heavy random words: special values mixed with arbitrary bits.
fn word(x: u64) -> u32 {
    let specials = [
        0u32,
        0x8000_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        1,
        0x0080_0000,
        0xffff_ffff,
        0x4049_0fdb,
    ];
    if x.is_multiple_of(5) {
        specials[(x / 5 % specials.len() as u64) as usize]
    } else {
        (x >> 11) as u32
    }
}

/// Registers the ALU generator never writes (it uses v0..v11): addresses for memory instructions.
const ADDR: u32 = 12; // v[12:13] = buffer + 4 * lane
const LDS_ADDR: u32 = 14; // v14 = 4 * lane
/// Lanes in no order: v[16:17] = buffer + 8 * (7 * lane % 61), neither consecutive nor equal.
const GATHER: u32 = 16;
/// Buffer resources the ALU generator never writes: s[96:99] the test buffer (400 bytes in range), s[92:95]
/// the private segment buffer (ADD_TID_ENABLE set).
const BUFFER_RSRC: u32 = 96;
const PRIVATE_RSRC: u32 = 92;

/// A memory instruction from a template: global/LDS loads, stores and atomics (LDS ones also of bytes and
/// halves) through v[12:13] or v14, and loads of every width through v[16:17]; data registers among v0..v11, an
/// offset that now and then leaves the buffer or the LDS.
fn memory_inst(kind: u8, reg: u8, off: u8, pc: u64, target: Target) -> Option<Inst> {
    use isa_amdgpu::Opcode as O;
    let r = (reg % 11) as u32;
    let offset = if off > 240 { 4000 } else { (off as u32 % 16) * 4 };
    let global = |op: O, vdst: u32, addr: u32, offset: u32| {
        (
            op,
            Encoding::Global,
            vec![
                (Field::Vdst, vdst),
                (Field::Addr, addr),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset),
            ],
        )
    };
    // through s[96:99] with the offset in v14 (4 * lane), offsets past num_records now and then
    let mubuf = |op: O, vdata: u32, rsrc: u32, offset: u32| {
        (
            op,
            Encoding::Mubuf,
            vec![
                (Field::Vdata, vdata),
                (Field::Vaddr, LDS_ADDR),
                (Field::Srsrc, rsrc / 4),
                (Field::Soffset, 128),
                (Field::Offset, offset),
                (Field::Offen, 1),
            ],
        )
    };
    let ds = |op: O, field: Field, r: u32, offset: u32| {
        (
            op,
            Encoding::Ds,
            vec![(field, r), (Field::Addr, LDS_ADDR), (Field::Offset0, offset & 0xff)],
        )
    };
    let (op, enc, fields): (O, Encoding, Vec<(Field, u32)>) = match kind % 23 {
        19 => ds(O::DsWriteB8, Field::Data0, r, offset + 1),
        20 => ds(O::DsWriteB16, Field::Data0, r, offset + 2),
        21 => ds(O::DsReadU16, Field::Vdst, r, offset + 2),
        22 => ds(O::DsReadI8, Field::Vdst, r, offset + 3),
        14 => mubuf(O::BufferLoadDword, r, BUFFER_RSRC, offset),
        15 => mubuf(O::BufferStoreDword, r, BUFFER_RSRC, offset),
        16 => mubuf(O::BufferLoadDwordx2, r & !1, BUFFER_RSRC, offset),
        17 => mubuf(O::BufferLoadUshort, r, BUFFER_RSRC, offset + 2),
        18 => mubuf(O::BufferLoadDword, r, PRIVATE_RSRC, offset),
        9 => global(O::GlobalLoadDword, r, GATHER, offset),
        10 => global(O::GlobalLoadDwordx2, r & !1, GATHER, offset),
        11 => global(O::GlobalLoadDwordx4, (r & !3).min(8), GATHER, offset),
        12 => global(O::GlobalLoadUshort, r, GATHER, offset + 2),
        13 => global(O::GlobalLoadSbyte, r, GATHER, offset + 3),
        0 => (
            O::GlobalLoadDword,
            Encoding::Global,
            vec![
                (Field::Vdst, r),
                (Field::Addr, ADDR),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset),
            ],
        ),
        1 => (
            O::GlobalLoadDwordx2,
            Encoding::Global,
            vec![
                (Field::Vdst, r & !1),
                (Field::Addr, ADDR),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset),
            ],
        ),
        2 => (
            O::GlobalStoreDword,
            Encoding::Global,
            vec![
                (Field::Data, r),
                (Field::Addr, ADDR),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset),
            ],
        ),
        3 => (
            O::GlobalLoadUshort,
            Encoding::Global,
            vec![
                (Field::Vdst, r),
                (Field::Addr, ADDR),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset + 2),
            ],
        ),
        4 => (
            O::GlobalStoreByte,
            Encoding::Global,
            vec![
                (Field::Data, r),
                (Field::Addr, ADDR),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset + 1),
            ],
        ),
        5 => (
            O::GlobalAtomicAdd,
            Encoding::Global,
            vec![
                (Field::Vdst, r),
                (Field::Data, r),
                (Field::Addr, ADDR),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset),
                (Field::Glc, 1),
            ],
        ),
        6 => (
            O::DsReadB32,
            Encoding::Ds,
            vec![
                (Field::Vdst, r),
                (Field::Addr, LDS_ADDR),
                (Field::Offset0, offset & 0xff),
            ],
        ),
        7 => (
            O::DsWriteB32,
            Encoding::Ds,
            vec![
                (Field::Data0, r),
                (Field::Addr, LDS_ADDR),
                (Field::Offset0, offset & 0xff),
            ],
        ),
        _ => (
            O::DsAddRtnU32,
            Encoding::Ds,
            vec![
                (Field::Vdst, r),
                (Field::Data0, r),
                (Field::Addr, LDS_ADDR),
                (Field::Offset0, offset & 0xff),
            ],
        ),
    };
    let row = isa_amdgpu::table::rows_of(op, target).find(|x| x.encoding == enc)?;
    let mut b = Inst::build(row, target).ok()?;
    for (f, v) in fields {
        b = b.set(f, v).ok()?;
    }
    decode(&b.encode().ok()?, pc, target).ok()
}

fn wave_state(seed: u64, exec: u64, buffer: u64) -> WaveState {
    let mut w = WaveState::new(0x1000, 18, 4);
    let mut s = seed | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for r in w.sgprs.iter_mut().take(102) {
        *r = word(next());
    }
    w.sgprs[124] = word(next());
    w.sgprs[106] = next() as u32;
    w.sgprs[107] = next() as u32;
    for v in w.vgprs.iter_mut().chain(w.agprs.iter_mut()) {
        for x in v.iter_mut() {
            *x = word(next());
        }
    }
    w.set_exec(exec);
    w.scc = next() & 1 == 1;
    // V#: base, stride 0, num_records, dword 3 (ADD_TID_ENABLE is bit 23)
    w.sgprs[BUFFER_RSRC as usize..BUFFER_RSRC as usize + 4].copy_from_slice(&[
        buffer as u32,
        (buffer >> 32) as u32 & 0xffff,
        400,
        0x0002_7000,
    ]);
    w.sgprs[PRIVATE_RSRC as usize..PRIVATE_RSRC as usize + 4].copy_from_slice(&[
        buffer as u32,
        (buffer >> 32) as u32 & 0xffff,
        400,
        0x0082_7000,
    ]);
    for l in 0..64 {
        let a = buffer + 4 * l as u64;
        (
            w.vgprs[ADDR as usize][l],
            w.vgprs[ADDR as usize + 1][l],
            w.vgprs[LDS_ADDR as usize][l],
        ) = (a as u32, (a >> 32) as u32, 4 * l as u32);
        let g = buffer + 8 * (7 * l as u64 % 61);
        (w.vgprs[GATHER as usize][l], w.vgprs[GATHER as usize + 1][l]) = (g as u32, (g >> 32) as u32);
    }
    w
}

/// A device memory with a 512-byte buffer (its address is returned too), filled by [`fill`].
fn memory() -> (DeviceMemory, u64) {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let b = mem.allocate(512, emu_core::memory::AllocKind::Buffer, "buf").unwrap();
    fill(&mem, b);
    (mem, b)
}

/// The test buffer's known starting contents.
fn fill(mem: &DeviceMemory, buffer: u64) {
    mem.write(
        buffer,
        &(0..128u32)
            .flat_map(|i| (i.wrapping_mul(0x9e37_79b9)).to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
}

fn lds_image() -> Vec<u8> {
    (0..512u32).map(|i| (i * 7) as u8).collect()
}

/// A branch at `pc` (kind 0..6: s_branch, s_cbranch_scc0/scc1/vccz/vccnz/execz/execnz) by `simm` dwords,
/// never back to the block's start (a loop the test would not leave).
fn branch(kind: u8, simm: i16, pc: u64, target: Target) -> Inst {
    let op = [
        isa_amdgpu::Opcode::SBranch,
        isa_amdgpu::Opcode::SCbranchScc0,
        isa_amdgpu::Opcode::SCbranchScc1,
        isa_amdgpu::Opcode::SCbranchVccz,
        isa_amdgpu::Opcode::SCbranchVccnz,
        isa_amdgpu::Opcode::SCbranchExecz,
        isa_amdgpu::Opcode::SCbranchExecnz,
    ][kind as usize % 7];
    let row = isa_amdgpu::table::rows_of(op, target).next().expect("a SOPP row");
    let back_to_start = (0x1000 - (pc as i64 + 4)) / 4;
    let simm = if simm as i64 == back_to_start {
        simm.wrapping_add(1)
    } else {
        simm
    };
    let b = Inst::build(row, target)
        .unwrap()
        .set(Field::Simm16, simm as u16 as u32)
        .unwrap();
    decode(&b.encode().unwrap(), pc, target).unwrap()
}

fn run_case(
    target: Target,
    rows: &[&'static OpInfo],
    choice: &[(usize, Vec<u32>, u32)],
    seed: u64,
    exec: u64,
) -> Result<(), TestCaseError> {
    run_case_branching(target, rows, choice, None, &[], seed, exec, None)
}

/// `v_add_co_u32 v<d>, s[p:p+1], v0, v1` (VOP2 for VCC, 106; VOP3 otherwise), at `pc`. (The carries write
/// v20 and v21, past the registers the random instructions use; both engines grow the wave's file for them.)
fn carry_into(pair: u32, d: u32, pc: u64, target: Target) -> Inst {
    let enc = if pair == 106 { Encoding::Vop2 } else { Encoding::Vop3 };
    let row = isa_amdgpu::table::rows_of(isa_amdgpu::Opcode::VAddCoU32, target)
        .find(|r| r.encoding == enc)
        .expect("v_add_co_u32");
    let b = Inst::build(row, target).unwrap().set(Field::Vdst, d).unwrap();
    let b = if pair == 106 {
        b.set(Field::Src0, 256).unwrap().set(Field::Vsrc1, 1).unwrap()
    } else {
        b.set(Field::Sdst, pair)
            .unwrap()
            .set(Field::Src0, 256)
            .unwrap()
            .set(Field::Src1, 257)
            .unwrap()
    };
    decode(&b.encode().unwrap(), pc, target).unwrap()
}

/// The case's instructions, with `br` a branch after them, `mem_ops` memory instructions among them, and with
/// `carry` a carry into that SGPR pair before them and one into it after them, which writes it over (so the
/// first carry is left out exactly when nothing between reads it).
#[allow(clippy::too_many_arguments)]
fn run_case_branching(
    target: Target,
    rows: &[&'static OpInfo],
    choice: &[(usize, Vec<u32>, u32)],
    br: Option<(u8, i16)>,
    mem_ops: &[(usize, u8, u8, u8)],
    seed: u64,
    exec: u64,
    carry: Option<u32>,
) -> Result<(), TestCaseError> {
    let mut insts = Vec::new();
    let mut pc = 0x1000u64;
    if let Some(pair) = carry {
        insts.push(carry_into(pair, 20, pc, target));
        pc += insts[0].size() as u64;
    }
    for (i, (r, picks, lit)) in choice.iter().enumerate() {
        for &(_, kind, reg, off) in mem_ops.iter().filter(|m| m.0 % choice.len().max(1) == i) {
            if let Some(inst) = memory_inst(kind, reg, off, pc, target) {
                pc += inst.size() as u64;
                insts.push(inst);
            }
        }
        let row = rows[r % rows.len()];
        let Some(mut inst) = build(row, target, picks, *lit) else {
            continue;
        };
        // re-decode at its place in the sequence
        let bytes = inst.to_bytes();
        inst = decode(&bytes, pc, target).map_err(|e| TestCaseError::reject(e.to_string()))?;
        pc += inst.size() as u64;
        insts.push(inst);
    }
    if let Some(pair) = carry {
        let over = carry_into(pair, 21, pc, target);
        pc += over.size() as u64;
        insts.push(over);
    }
    if let Some((kind, simm)) = br {
        insts.push(branch(kind, simm, pc, target));
    }
    prop_assume!(!insts.is_empty());
    let (mem, buffer) = memory();
    let read = |m: &DeviceMemory| {
        let mut b = vec![0u8; 512];
        m.read(buffer, &mut b).unwrap();
        b
    };
    // the interpreter, one instruction at a time
    let mut a = wave_state(seed, exec, buffer);
    let mut lds_a = lds_image();
    let mut fault_a = None;
    let mut at = 0x1000u64;
    for inst in &insts {
        let mut b = Interp {
            wave: &mut a,
            mem: &mem,
            lds: &mut lds_a,
            mnemonic: inst.info.name,
            accesses: None,
        };
        let next = at + inst.size() as u64;
        match execute(&mut b, inst, at) {
            Ok(Flow::Next) => {}
            Ok(Flow::Jump(t)) => a.pc = t,
            Ok(Flow::Branch { cond, target }) => a.pc = if cond & 1 == 1 { target } else { next },
            Ok(other) => {
                return Err(TestCaseError::fail(format!(
                    "{}: unexpected flow {other:?}",
                    inst.info.name
                )))
            }
            Err(e) => {
                fault_a = Some((at, format!("{}: {e}", isa_amdgpu::disasm::text(inst))));
                break;
            }
        }
        at += inst.size() as u64;
    }
    // the JIT, one block
    let mut j = wave_state(seed, exec, buffer);
    if seed.is_multiple_of(2) {
        // the buffer already in every access site's window, as after the block's first run: compiled code
        // takes its own paths (otherwise the first access at each site fills the window through the interpreter)
        let (start, len, host) = mem
            .kind_at(buffer, emu_core::memory::AllocKind::Buffer)
            .expect("the test buffer");
        j.windows_mut().vector = [emu_core::wave::BufferWindow {
            start,
            len,
            host: host as usize,
        }; emu_core::wave::BUFFER_WINDOWS];
    }
    let mut lds_j = lds_image();
    // the same memory (addresses are the same), set back to the starting contents
    let by_interp = read(&mem);
    fill(&mem, buffer);
    let texts: Vec<String> = insts.iter().map(isa_amdgpu::disasm::text).collect();
    let exit = jit()
        .run_block_once(insts.clone(), 0x1000, &mut j, &mem, &mut lds_j)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(by_interp == read(&mem), "buffer after {:?}", texts);
    prop_assert!(lds_a == lds_j, "LDS after {:?}", texts);
    // where the interpreter continues: after the last instruction, or where the branch went
    let interp_next = if br.is_some() { a.pc } else { at };
    match (&fault_a, &exit) {
        (None, jit::BlockExit::Continue { next_pc, .. }) => {
            prop_assert_eq!(*next_pc, interp_next, "next pc after {:?}", texts);
        }
        // the same instruction stops both, with the same error (kind, instruction, lane, address)
        (Some((pa, ea)), jit::BlockExit::Fault { pc, error }) if pa == pc && ea == error => {}
        _ => {
            return Err(TestCaseError::fail(format!(
                "{texts:?}: interpreter fault at {fault_a:?}, JIT {exit:?}"
            )))
        }
    }
    prop_assert_eq!(a.scc, j.scc, "SCC after {:?}", texts);
    for r in 0..128 {
        prop_assert_eq!(a.sgprs[r], j.sgprs[r], "s{} after {:?}", r, texts);
    }
    for r in 0..a.vgprs.len().max(j.vgprs.len()) {
        let (x, y) = (
            a.vgprs.get(r).copied().unwrap_or([0; 64]),
            j.vgprs.get(r).copied().unwrap_or([0; 64]),
        );
        if let Some(l) = (0..64).find(|&l| x[l] != y[l]) {
            return Err(TestCaseError::fail(format!(
                "v{r} lane {l}: interpreter {:#x}, JIT {:#x} after {texts:?}",
                x[l], y[l]
            )));
        }
    }
    for r in 0..a.agprs.len().max(j.agprs.len()) {
        let (x, y) = (
            a.agprs.get(r).copied().unwrap_or([0; 64]),
            j.agprs.get(r).copied().unwrap_or([0; 64]),
        );
        if let Some(l) = (0..64).find(|&l| x[l] != y[l]) {
            return Err(TestCaseError::fail(format!(
                "a{r} lane {l}: interpreter {:#x}, JIT {:#x} after {texts:?}",
                x[l], y[l]
            )));
        }
    }
    Ok(())
}

fn exec_mask() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(u64::MAX),
        Just(0u64),
        any::<u64>(),
        Just(0x0000_0000_ffff_ffffu64),
        Just(1u64 << 63)
    ]
}

fn sequence() -> impl Strategy<Value = Vec<(usize, Vec<u32>, u32)>> {
    prop::collection::vec(
        (any::<usize>(), prop::collection::vec(any::<u32>(), 8), any::<u32>()),
        1..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, .. ProptestConfig::default() })]

    #[test]
    fn random_alu_sequences_leave_identical_state_on_both_engines_gfx942(choice in sequence(), seed in any::<u64>(), exec in exec_mask()) {
        static ROWS: OnceLock<Vec<&'static OpInfo>> = OnceLock::new();
        let rows = ROWS.get_or_init(|| pool(Target::Gfx942));
        run_case(Target::Gfx942, rows, &choice, seed, exec)?;
    }

    #[test]
    fn random_alu_sequences_ending_in_a_branch_continue_at_the_same_pc_gfx942(
        choice in sequence(), kind in 0u8..7, simm in -200i16..200, seed in any::<u64>(), exec in exec_mask()
    ) {
        static ROWS: OnceLock<Vec<&'static OpInfo>> = OnceLock::new();
        let rows = ROWS.get_or_init(|| pool(Target::Gfx942));
        run_case_branching(Target::Gfx942, rows, &choice, Some((kind, simm)), &[], seed, exec, None)?;
    }


    #[test]
    fn random_alu_sequences_leave_identical_state_on_both_engines_gfx90a(choice in sequence(), seed in any::<u64>(), exec in exec_mask()) {
        static ROWS: OnceLock<Vec<&'static OpInfo>> = OnceLock::new();
        let rows = ROWS.get_or_init(|| pool(Target::Gfx90a));
        run_case(Target::Gfx90a, rows, &choice, seed, exec)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 800, .. ProptestConfig::default() })]

    /// Between a carry and the add that writes its pair over, whatever the instructions read of the pair (as
    /// operands, implicitly, as a destination they keep or through M0) must see the carry: the JIT leaves a
    /// carry out only when they do not read it.
    #[test]
    fn random_alu_sequences_between_two_carries_into_one_pair_leave_identical_state_gfx942(
        choice in sequence(), pair in prop_oneof![Just(106u32), Just(2u32), Just(10u32)], seed in any::<u64>(), exec in exec_mask()
    ) {
        static ROWS: OnceLock<Vec<&'static OpInfo>> = OnceLock::new();
        let rows = ROWS.get_or_init(|| pool(Target::Gfx942));
        run_case_branching(Target::Gfx942, rows, &choice, None, &[], seed, exec, Some(pair))?;
    }

    #[test]
    fn random_sequences_with_global_and_lds_accesses_leave_identical_memory_gfx942(
        choice in sequence(),
        mem_ops in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>(), any::<u8>()), 1..5),
        seed in any::<u64>(),
        exec in exec_mask()
    ) {
        static ROWS: OnceLock<Vec<&'static OpInfo>> = OnceLock::new();
        let rows = ROWS.get_or_init(|| pool(Target::Gfx942));
        run_case_branching(Target::Gfx942, rows, &choice, None, &mem_ops, seed, exec, None)?;
    }
}

#[test]
fn the_generator_draws_from_hundreds_of_opcodes_and_the_jit_compiles_many() {
    let rows = pool(Target::Gfx942);
    assert!(rows.len() > 400, "{} rows", rows.len());
    // how many of them the JIT translates rather than interprets (reported, and must not shrink to nothing)
    let mut compiled = 0;
    let mut built = 0;
    let mut unbuilt = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        // a few attempts with different numbers: some operand combinations do not encode
        let inst = (0..8u32).find_map(|t| {
            build(
                row,
                Target::Gfx942,
                &[i as u32 * 7919 + t * 104_729, 3 + t, 5, 7 * t, 11, 13],
                0x3f80_0000,
            )
        });
        match inst {
            Some(inst) => {
                built += 1;
                compiled += jit::compile::translatable(&inst, 0x1000) as usize;
            }
            None => unbuilt.push(row.name),
        }
    }
    // the modifier forms the generator draws: SDWA (with scalar sources) and DPP forms, and VOP3 clamp, omod
    // and op_sel
    let (mut sdwa, mut scalar, mut dpp, mut clamp, mut omod, mut op_sel) = (0, 0, 0, 0, 0, 0);
    for (i, row) in rows.iter().enumerate() {
        for form in 0..12u32 {
            // (bits 25-26: a scalar src0, none, a scalar src1)
            let picks = [
                i as u32 * 7919,
                3,
                5,
                7,
                11,
                13,
                form | (i as u32 % 3) << 4,
                0x4000_0000 | (i as u32 * 16) | (i as u32 % 3) << 25,
            ];
            let Some(inst) = build(row, Target::Gfx942, &picks, 0x3f80_0000) else {
                continue;
            };
            match inst.form {
                isa_amdgpu::Form::Sdwa => {
                    sdwa += 1;
                    scalar += [Field::Src0, Field::Vsrc1]
                        .iter()
                        .any(|&f| inst.sdwa_source(f).is_some_and(|(_, s)| s)) as usize;
                }
                isa_amdgpu::Form::Dpp => dpp += 1,
                _ if row.encoding == Encoding::Vop3 => {
                    clamp += (inst.field(Field::Clamp) != 0) as usize;
                    omod += (inst.field(Field::Omod) != 0) as usize;
                    op_sel += (inst.field(Field::OpSel) != 0) as usize;
                }
                _ => {}
            }
        }
    }
    println!("SDWA {sdwa} ({scalar} with a scalar source), DPP {dpp}, clamp {clamp}, omod {omod}, op_sel {op_sel} instructions from the pool");
    assert!(
        sdwa > 100 && scalar > 50 && sdwa - scalar > 50 && dpp > 100 && clamp > 100 && omod > 100 && op_sel > 20,
        "the modifier forms are drawn"
    );
    for name in ["s_cselect_b32", "s_cmpk_eq_u32", "v_readlane_b32", "v_writelane_b32"] {
        assert!(rows.iter().any(|r| r.name == name), "{name} is in the pool");
    }
    println!("not built: {unbuilt:?}");
    println!("{} rows, {built} built, {compiled} compiled by the JIT", rows.len());
    assert!(built * 10 > rows.len() * 9, "{built} of {} rows build", rows.len());
    assert!(compiled > 150, "{compiled} compiled");
}

/// v_perm_b32 with its selector in an SGPR (one selector for all lanes, which the JIT shuffles inline): every
/// selector byte value 0..=255 in every byte position, on lanes that all differ.
#[test]
fn perm_with_every_selector_byte_matches_the_interpreter() {
    use isa_amdgpu::Opcode as O;
    let target = Target::Gfx942;
    let row = isa_amdgpu::table::rows_of(O::VPermB32, target)
        .next()
        .expect("v_perm_b32");
    let fields = [
        (Field::Vdst, 0),
        (Field::Src0, 257),
        (Field::Src1, 258),
        (Field::Src2, 2),
    ];
    let inst = fields
        .iter()
        .fold(Inst::build(row, target).unwrap(), |b, &(f, v)| b.set(f, v).unwrap());
    let inst = decode(&inst.encode().unwrap(), 0x1000, target).unwrap();
    let (mem, buffer) = memory();
    for first in (0..=255u32).step_by(4) {
        for rotate in 0..4 {
            let sel = u32::from_le_bytes([first as u8, first as u8 + 1, first as u8 + 2, first as u8 + 3])
                .rotate_left(8 * rotate);
            let mut a = wave_state(u64::from(sel) * 31 + 7, u64::MAX, buffer);
            a.sgprs[2] = sel;
            let mut j = a.clone();
            let (mut lds_a, mut lds_j) = (lds_image(), lds_image());
            let mut b = Interp {
                wave: &mut a,
                mem: &mem,
                lds: &mut lds_a,
                mnemonic: inst.info.name,
                accesses: None,
            };
            execute(&mut b, &inst, 0x1000).unwrap();
            jit()
                .run_block_once(vec![inst], 0x1000, &mut j, &mem, &mut lds_j)
                .unwrap();
            assert_eq!(a.vgprs[0], j.vgprs[0], "selector {sel:#010x}");
            if sel.to_le_bytes().iter().any(|&b| b < 8) {
                assert_ne!(
                    a.vgprs[0].iter().min(),
                    a.vgprs[0].iter().max(),
                    "selector {sel:#010x}: lanes differ"
                );
            }
        }
    }
}

/// Every MFMA the engines model, on both targets, with random A, B and C (f16, bf16, f32 and f64 specials
/// among them): D separate from C, D over C (accumulating in place), and A, B, C, D in AGPRs under a partial
/// EXEC. Both engines must leave the same registers.
#[test]
fn every_mfma_leaves_the_same_registers_on_both_engines() {
    let (mem, buffer) = memory();
    let mut checked = 0;
    for target in [Target::Gfx90a, Target::Gfx942] {
        for row in GFX9
            .iter()
            .filter(|r| r.on(target) && r.mfma.is_some_and(|s| emu_core::sem::Mfma::of(s).is_some()))
        {
            let shape = emu_core::sem::Mfma::of(row.mfma.unwrap()).unwrap();
            // (vdst, src2, acc_ab, acc_cd): separate, in place, in AGPRs
            for (case, (vdst, src2, acc_ab, acc_cd)) in [(32u32, 0u32, 0u32, 0u32), (0, 0, 0, 0), (0, 0, 3, 1)]
                .into_iter()
                .enumerate()
            {
                let fields = [
                    (Field::Vdst, vdst),
                    (Field::Src0, 256 + 48),
                    (Field::Src1, 256 + 52),
                    (Field::Src2, 256 + src2),
                    (Field::OpSelHi, acc_ab),
                    (Field::Clamp, acc_cd),
                ];
                let Ok(b) = fields
                    .iter()
                    .try_fold(Inst::build(row, target).unwrap(), |b, &(f, v)| b.set(f, v))
                else {
                    continue;
                };
                let Ok(inst) = b
                    .encode()
                    .map_err(|e| e.to_string())
                    .and_then(|w| decode(&w, 0x1000, target).map_err(|e| e.to_string()))
                else {
                    continue;
                };
                assert!(
                    jit::compile::translatable(&inst, 0x1000),
                    "{} compiles",
                    isa_amdgpu::disasm::text(&inst)
                );
                let mut a = WaveState::new(0x1000, 64, 64);
                let mut s = 0x2545_f491_4f6c_dd1du64 ^ (checked as u64) << 20;
                for v in a.vgprs.iter_mut().chain(a.agprs.iter_mut()) {
                    for x in v.iter_mut() {
                        s ^= s << 13;
                        s ^= s >> 7;
                        s ^= s << 17;
                        // mostly small normal values of every width, now and then arbitrary bits
                        *x = if s.is_multiple_of(9) {
                            word(s)
                        } else {
                            (s as u32 & 0x3fff_3fff) | 0x3c00_3c00
                        };
                    }
                }
                a.set_exec(if case == 2 { 0xffff_0fff_ffff_fff0 } else { u64::MAX });
                let before = a.clone();
                let mut j = a.clone();
                let (mut lds_a, mut lds_j) = (lds_image(), lds_image());
                let mut b = Interp {
                    wave: &mut a,
                    mem: &mem,
                    lds: &mut lds_a,
                    mnemonic: inst.info.name,
                    accesses: None,
                };
                let text = isa_amdgpu::disasm::text(&inst);
                execute(&mut b, &inst, 0x1000).unwrap_or_else(|e| panic!("{text}: {e}"));
                jit()
                    .run_block_once(vec![inst], 0x1000, &mut j, &mem, &mut lds_j)
                    .unwrap();
                assert!(
                    a.vgprs == j.vgprs && a.agprs == j.agprs,
                    "{text} (case {case}, {shape:?})"
                );
                assert!(
                    a.vgprs != before.vgprs || a.agprs != before.agprs,
                    "{text} wrote its result"
                );
                checked += 1;
            }
        }
    }
    let _ = buffer;
    assert!(checked >= 30, "{checked} MFMA cases");
    println!("{checked} MFMA cases");
}
