//! Which registers an instruction reads and writes, worked out from the instruction table: operands by field,
//! SDWA's scalar sources and the pair an SDWA compare names, the GLOBAL/SCRATCH SGPR base, the table's implicit
//! SCC/VCC/EXEC/M0, EXEC for every vector instruction, and as a read too the destination of instructions that
//! keep or compute from its old value. The SGPRs M0 places for s_movrels/s_movreld are not known
//! ([`known_registers`] says so).
//!
//! The users: the timing model's scoreboard (which results an instruction waits for) and the JIT's dead-carry
//! elimination (whether a lane mask an instruction writes is overwritten before anything reads it).

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{Implicit, MemDir, OperandKind, RegFile};
use isa_amdgpu::{Form, Inst, Opcode};

/// Register numbers of the scoreboard: SGPR slots 0..127 (VCC at 106, M0 at 124, EXEC at 126), SCC 128,
/// VGPRs from 256, AGPRs from 512.
pub const SCC: u16 = 128;
pub const VGPR: u16 = 256;
pub const AGPR: u16 = 512;

/// Up to eight register ranges `[start, end)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Regs {
    ranges: [(u16, u16); 8],
    len: u8,
}

impl Regs {
    /// Adds the `count` registers from `start` (nothing once all eight ranges are taken).
    pub fn add(&mut self, start: u16, count: u16) {
        if count == 0 || self.len as usize == self.ranges.len() {
            return;
        }
        self.ranges[self.len as usize] = (start, start + count);
        self.len += 1;
    }

    pub fn iter(&self) -> impl Iterator<Item = (u16, u16)> + '_ {
        self.ranges[..self.len as usize].iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a range overlaps `[start, end)`.
    pub fn overlaps(&self, start: u16, end: u16) -> bool {
        self.iter().any(|(s, e)| s < end && start < e)
    }

    /// Whether register `r` (a scoreboard number) is in one of the ranges.
    pub fn contains(&self, r: u16) -> bool {
        self.overlaps(r, r + 1)
    }

    /// Whether all eight ranges are taken (a further one would be lost).
    pub fn full(&self) -> bool {
        self.len as usize == self.ranges.len()
    }
}

/// The registers `inst` reads and writes (register numbers as above), when every one is
/// named: `None` when an operand reads VCC or EXEC through `vccz` or `execz`, for s_movrels and s_movreld
/// (which read or write the SGPRs M0 places, not the ones their operands name), or when the ranges fill a
/// [`Regs`].
pub fn known_registers(inst: &Inst) -> Option<(Regs, Regs)> {
    use isa_amdgpu::Opcode as O;
    let (reads, writes) = registers(inst);
    let flags = inst
        .info
        .operands
        .iter()
        .any(|o| matches!(o.kind, OperandKind::Src { .. }) && matches!(inst.field(o.field), 251 | 252));
    let relative = matches!(
        inst.info.opcode,
        O::SMovrelsB32 | O::SMovrelsB64 | O::SMovreldB32 | O::SMovreldB64
    );
    (!flags && !relative && !reads.full() && !writes.full()).then_some((reads, writes))
}

/// The registers `inst` reads and writes, by what its operands, its encoding's fields and the table's implicit
/// operands name (see the module's description).
pub fn registers(inst: &Inst) -> (Regs, Regs) {
    let (mut reads, mut writes) = (Regs::default(), Regs::default());
    let info = inst.info;
    let enc = info.encoding;
    let acc = inst.field(Field::Acc) == 1
        && matches!(
            enc,
            Encoding::Ds
                | Encoding::Flat
                | Encoding::Global
                | Encoding::Scratch
                | Encoding::Mubuf
                | Encoding::Mtbuf
                | Encoding::Mimg
        );
    let mfma = info.mfma.is_some();
    let (acc_a, acc_b, acc_cd) = if mfma {
        let ab = inst.field(Field::OpSelHi);
        (ab & 1 == 1, ab & 2 == 2, inst.field(Field::Clamp) == 1)
    } else {
        (false, false, false)
    };
    let loads = matches!(info.mem.dir, MemDir::Load);
    let returns = info.mem.flags.contains(isa_amdgpu::table::MemFlags::RETURNS)
        || (info.mem.dir == MemDir::Atomic && inst.field(Field::Glc) == 1);
    // SOPK forms whose SDST field is a source: the compares, s_setreg, s_cbranch_i_fork
    let sdst_read = enc == Encoding::Sopk
        && (info.name.starts_with("s_cmpk_") || matches!(info.name, "s_setreg_b32" | "s_cbranch_i_fork"));
    for o in info.operands {
        let v = inst.field(o.field);
        // destination fields; VDATA is a destination of loads and of atomics that return
        let dst = match o.field {
            Field::Sdst => !sdst_read,
            Field::Vdst => true,
            Field::Sdata => enc == Encoding::Smem && info.mem.dir != MemDir::Store,
            Field::Vdata => loads || (info.mem.dir == MemDir::Atomic && returns),
            _ => false,
        };
        let agpr = match o.field {
            Field::Vdst | Field::Vdata | Field::Data | Field::Data0 | Field::Data1 => {
                acc || (mfma && acc_cd && o.field == Field::Vdst)
            }
            Field::Src0 => acc_a || info.opcode == Opcode::VAccvgprReadB32 || info.opcode == Opcode::VAccvgprMovB32,
            Field::Src1 => acc_b,
            Field::Src2 => acc_cd,
            _ => false,
        } || (o.field == Field::Vdst
            && matches!(info.opcode, Opcode::VAccvgprWriteB32 | Opcode::VAccvgprMovB32));
        // an SDWA source may be scalar (an SGPR or constant), which src0's operand kind cannot say
        let sdwa = inst.sdwa_source(o.field);
        let kind = match (sdwa, o.kind) {
            (Some((_, true)), OperandKind::Reg { count, .. } | OperandKind::Src { count, .. }) => OperandKind::Reg {
                file: RegFile::S,
                count,
            },
            (Some((_, false)), OperandKind::Src { count, .. }) => OperandKind::Reg {
                file: RegFile::V,
                count,
            },
            (_, kind) => kind,
        };
        let v = sdwa.map_or(v, |(r, _)| r);
        let (start, count) = match kind {
            OperandKind::Reg {
                file: RegFile::S,
                count,
            } if sdwa.is_some() => match v {
                0..=127 => match crate::wave::sgpr_slot(v) {
                    Some(s) => (s as u16, count as u16),
                    None => continue,
                },
                // inline constants, literals, execz/vccz
                _ => continue,
            },
            OperandKind::Reg {
                file: RegFile::S,
                count,
            } => {
                let base = match (enc, o.field) {
                    (Encoding::Smem, Field::Sbase) => v * 2,
                    (_, Field::Srsrc | Field::Ssamp) => v * 4,
                    _ => v,
                };
                match crate::wave::sgpr_slot(base) {
                    Some(s) if base < 128 => (s as u16, count as u16),
                    _ => continue,
                }
            }
            OperandKind::Reg { file, count } => {
                let count = inst.vector_regs(o.field, count as u32) as u16;
                let base = if file == RegFile::A || agpr { AGPR } else { VGPR };
                (base + v as u16, count)
            }
            OperandKind::Src { count, .. } => {
                // DPP keeps src0's register in its extra dword
                let v = if o.field == Field::Src0 && inst.form == Form::Dpp {
                    256 + (inst.ext().unwrap_or(0) & 0xff)
                } else {
                    v
                };
                match v {
                    0..=127 => match crate::wave::sgpr_slot(v) {
                        Some(s) => (s as u16, count as u16),
                        None => continue,
                    },
                    253 => (SCC, 1),
                    256..=511 => ((if agpr { AGPR } else { VGPR }) + (v - 256) as u16, count as u16),
                    // inline constants, literals, execz/vccz
                    _ => continue,
                }
            }
            _ => continue,
        };
        if dst {
            writes.add(start, count);
        } else {
            reads.add(start, count);
        }
    }
    // destinations also read: those an instruction computes from (the accumulating VALU forms, s_addk, s_mulk,
    // s_bitset, and SDWA's UNUSED_PRESERVE, which keeps the other bits), and s_cmov/s_cmovk's, which may be
    // left as they were (a conditional write, so read: nothing may take it as written over). Lanes a write
    // leaves (EXEC, DPP's masks, v_writelane's other lanes) are not reads.
    let keeps_old = matches!(
        info.opcode,
        Opcode::SCmovB32
            | Opcode::SCmovB64
            | Opcode::SCmovkI32
            | Opcode::SBitset0B32
            | Opcode::SBitset0B64
            | Opcode::SBitset1B32
            | Opcode::SBitset1B64
            | Opcode::SAddkI32
            | Opcode::SMulkI32
    ) || info.name.starts_with("v_mac_")
        || info.name.starts_with("v_fmac_")
        || info.name.starts_with("v_pk_fmac_")
        || ["v_dot2c_", "v_dot4c_", "v_dot8c_"]
            .iter()
            .any(|p| info.name.starts_with(p))
        || (inst.form == Form::Sdwa && enc != Encoding::Vopc && inst.ext().is_some_and(|e| e >> 11 & 3 == 2));
    if keeps_old {
        let dsts = writes;
        for (start, end) in dsts.iter() {
            reads.add(start, end - start);
        }
    }
    // the GLOBAL/SCRATCH SGPR base is a field without an operand of its own
    if matches!(enc, Encoding::Global | Encoding::Scratch) {
        let saddr = inst.field(Field::Saddr);
        if saddr < 0x7d {
            reads.add(saddr as u16, if enc == Encoding::Global { 2 } else { 1 });
        }
    }
    // an SDWA compare may write another pair than VCC
    let vcc_written = inst.sdwa_sdst().unwrap_or(106) as u16;
    for (set, implicit, vcc) in [(&mut reads, info.reads, 106), (&mut writes, info.writes, vcc_written)] {
        if implicit.contains(Implicit::SCC) {
            set.add(SCC, 1);
        }
        if implicit.contains(Implicit::VCC) {
            set.add(vcc, 2);
        }
        if implicit.contains(Implicit::EXEC) {
            set.add(126, 2);
        }
        if implicit.contains(Implicit::M0) {
            set.add(124, 1);
        }
    }
    // vector instructions read EXEC
    if !matches!(
        enc,
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc | Encoding::Sopk | Encoding::Sopp | Encoding::Smem
    ) && !info.reads.contains(Implicit::EXEC)
    {
        reads.add(126, 2);
    }
    (reads, writes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use isa_amdgpu::Target;

    #[test]
    fn sdwa_forms_name_the_sgprs_they_read_and_the_pair_a_compare_writes() {
        // (llvm-mc-19 -mcpu=gfx90a -show-encoding; scoreboard numbers: SGPRs as themselves, VGPRs from 256)
        type Ranges = &'static [(u16, u16)];
        let cases: &[(&str, [u8; 8], Ranges, Ranges)] = &[
            (
                "v_cmp_eq_u32_sdwa s[6:7], v0, v1",
                [0xf9, 0x02, 0x94, 0x7d, 0x00, 0x86, 0x06, 0x06],
                &[(256, 257), (257, 258)],
                &[(6, 8)],
            ),
            (
                "v_cmp_eq_u32_sdwa vcc, v0, v1",
                [0xf9, 0x02, 0x94, 0x7d, 0x00, 0x00, 0x06, 0x06],
                &[(256, 257), (257, 258)],
                &[(106, 108)],
            ),
            (
                "v_add_f32_sdwa v2, s4, v1",
                [0xf9, 0x02, 0x04, 0x02, 0x04, 0x06, 0x86, 0x06],
                &[(4, 5), (257, 258)],
                &[(258, 259)],
            ),
            (
                "v_add_f32_sdwa v2, v0, s5",
                [0xf9, 0x0a, 0x04, 0x02, 0x00, 0x06, 0x06, 0x86],
                &[(256, 257), (5, 6)],
                &[(258, 259)],
            ),
            (
                "v_add_f32_sdwa v2, 1.0, v1",
                [0xf9, 0x02, 0x04, 0x02, 0xf2, 0x06, 0x86, 0x06],
                &[(257, 258)],
                &[(258, 259)],
            ),
            (
                "v_cmp_lt_f16_sdwa s[8:9], s4, v3",
                [0xf9, 0x06, 0x42, 0x7c, 0x04, 0x88, 0x85, 0x06],
                &[(4, 5), (259, 260)],
                &[(8, 10)],
            ),
            (
                "v_add_f32_dpp v2, v4, v1",
                [0xfa, 0x02, 0x04, 0x02, 0x04, 0xb1, 0x00, 0xff],
                &[(260, 261), (257, 258)],
                &[(258, 259)],
            ),
        ];
        for (text, bytes, reads, writes) in cases {
            let inst = isa_amdgpu::decode(bytes, 0, Target::Gfx90a).unwrap();
            let (r, w) = known_registers(&inst).unwrap();
            let (r, w): (Vec<_>, Vec<_>) = (r.iter().collect(), w.iter().collect());
            // and EXEC, which every vector instruction reads
            assert_eq!(
                r.iter().filter(|&&x| x != (126, 128)).copied().collect::<Vec<_>>(),
                *reads,
                "{text}: reads"
            );
            assert!(r.contains(&(126, 128)), "{text}: reads EXEC");
            assert_eq!(w, *writes, "{text}: writes");
        }
    }

    #[test]
    fn moves_relative_to_m0_have_no_known_registers() {
        // s_movreld_b64 vcc, s[10:11]; s_movrels_b64 s[20:21], s[0:1]; s_mov_b64 vcc, s[10:11] (llvm-mc-19)
        let [reld, rels, mov] = [
            [0x0a, 0x2d, 0xea, 0xbe],
            [0x00, 0x2b, 0x94, 0xbe],
            [0x0a, 0x01, 0xea, 0xbe],
        ]
        .map(|b: [u8; 4]| isa_amdgpu::decode(&b, 0, Target::Gfx90a).unwrap());
        assert_eq!(
            (reld.info.name, rels.info.name, mov.info.name),
            ("s_movreld_b64", "s_movrels_b64", "s_mov_b64")
        );
        assert!(known_registers(&reld).is_none() && known_registers(&rels).is_none());
        let (r, w) = known_registers(&mov).unwrap();
        assert_eq!(
            (r.iter().collect::<Vec<_>>(), w.iter().collect::<Vec<_>>()),
            (vec![(10, 12)], vec![(106, 108)])
        );
    }

    #[test]
    fn destinations_that_keep_or_compute_from_their_old_value_and_implicit_operands_are_read() {
        // (llvm-mc-19 -mcpu=gfx90a -show-encoding; SCC 128, VCC 106-107, EXEC 126-127, VGPRs from 256)
        type Ranges = &'static [(u16, u16)];
        let cases: &[(&str, &[u8], Ranges, Ranges)] = &[
            (
                "s_cmov_b64 vcc, s[10:11]",
                &[0x0a, 0x03, 0xea, 0xbe],
                &[(10, 12), (106, 108), (128, 129)],
                &[(106, 108)],
            ),
            (
                "s_cmpk_eq_u32 s5, 0x10",
                &[0x10, 0x00, 0x05, 0xb4],
                &[(5, 6)],
                &[(128, 129)],
            ),
            (
                "s_andn2_wrexec_b64 s[2:3], s[4:5]",
                &[0x04, 0x36, 0x82, 0xbe],
                &[(4, 6), (126, 128)],
                &[(2, 4), (126, 128), (128, 129)],
            ),
            (
                "v_div_fmas_f32 v0, v1, v2, v3",
                &[0x00, 0x00, 0xe2, 0xd1, 0x01, 0x05, 0x0e, 0x04],
                &[(106, 108), (126, 128), (257, 258), (258, 259), (259, 260)],
                &[(256, 257)],
            ),
            (
                "v_fmac_f32_e32 v2, v0, v1",
                &[0x00, 0x03, 0x04, 0x76],
                &[(126, 128), (256, 257), (257, 258), (258, 259)],
                &[(258, 259)],
            ),
            (
                "s_setreg_b32 hwreg(HW_REG_MODE), s4",
                &[0x01, 0xf8, 0x04, 0xb9],
                &[(4, 5)],
                &[],
            ),
            (
                "s_bitset1_b32 vcc_lo, 3",
                &[0x83, 0x1a, 0xea, 0xbe],
                &[(106, 107)],
                &[(106, 107)],
            ),
            (
                "v_mov_b32_sdwa v1, v0 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE",
                &[0xf9, 0x02, 0x02, 0x7e, 0x00, 0x15, 0x06, 0x00],
                &[(126, 128), (256, 257), (257, 258)],
                &[(257, 258)],
            ),
        ];
        let sorted = |r: Regs| {
            let mut v: Vec<_> = r.iter().collect();
            v.sort();
            v.dedup();
            v
        };
        for (text, bytes, reads, writes) in cases {
            let inst = isa_amdgpu::decode(bytes, 0, Target::Gfx90a).unwrap();
            let (r, w) = registers(&inst);
            assert_eq!(
                (sorted(r), sorted(w)),
                (reads.to_vec(), writes.to_vec()),
                "{text}: reads, writes"
            );
        }
    }
}
