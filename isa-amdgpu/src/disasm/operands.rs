//! One operand of an instruction's operand list: its text, the note LLVM prints for a value the operand
//! cannot take, and the neg/abs input modifiers wrapped around a source.

use std::fmt::Write as _;

use crate::encoding::{Encoding, Field};
use crate::table::{OpFlags, OperandKind, RegFile, SrcType};

use super::values::{bit, immediate, is_constant, scalar_reg, source, vector_reg};
use super::Printer;

impl Printer<'_> {
    pub(super) fn operand(&mut self, field: Field, kind: OperandKind, mai: bool) {
        self.operand_text(field, kind, mai);
        if let Some(note) = self.invalid_note(field, kind, mai) {
            self.out.push_str(&note);
        }
    }

    /// LLVM's annotation for an operand whose register does not belong to the operand's register class.
    fn invalid_note(&self, field: Field, kind: OperandKind, mai: bool) -> Option<String> {
        let inst = self.inst;
        let enc = inst.info.encoding;
        let v = inst.field(field);
        let special = |x: u32| matches!(x, 102..=107 | 124..=127);
        let class = |c: String| Some(format!("/*Invalid register, operand has '{c}' register class*/"));
        if v == 125 {
            return None; // null goes anywhere
        }
        match (enc, field, kind) {
            (
                Encoding::Vop3 | Encoding::Vop1,
                Field::Vdst,
                OperandKind::Reg {
                    file: RegFile::S,
                    count,
                },
            ) if v >= 128 => {
                if is_constant(v) {
                    Some("/*Invalid immediate*/".into())
                } else {
                    class(format!("SReg_{}", 32 * count as u32))
                }
            }
            (Encoding::Vop3p, Field::Src2, OperandKind::Src { .. })
                if mai && is_constant(v) && inst.info.name.starts_with("v_smfmac") =>
            {
                Some("/*Invalid immediate*/".into())
            }
            (Encoding::Vop3, Field::Src2, OperandKind::Src { count, .. }) if count >= 4 && v <= 127 => {
                class(format!("VReg_{}", 32 * count as u32))
            }
            (Encoding::Vop3, Field::Src2, OperandKind::Reg { file: RegFile::S, .. }) if is_constant(v) => {
                Some("/*Invalid immediate*/".into())
            }
            (Encoding::Smem, Field::Sdata, OperandKind::Reg { count, .. }) => match count {
                1 if matches!(v, 124 | 126 | 127) => class("SReg_32_XM0_XEXEC".into()),
                2 if v & !1 == 126 => class("SReg_64_XEXEC".into()),
                n if n >= 4 && special(v) => class(format!("SReg_{}", 32 * n as u32)),
                _ => None,
            },
            (Encoding::Smem, Field::Sbase, OperandKind::Reg { count, .. }) if count >= 4 && special(v * 2) => {
                class(format!("SReg_{}", 32 * count as u32))
            }
            // (v_accvgpr_write's source is an ordinary 32-bit one: SGPRs and inline constants are fine)
            (Encoding::Vop3p, Field::Src0 | Field::Src1, OperandKind::Src { count, .. })
                if mai && v < 256 && inst.info.opcode != crate::Opcode::VAccvgprWriteB32 =>
            {
                if v <= 127 {
                    class(format!("AV_{}", 32 * count as u32))
                } else {
                    Some("/*Invalid immediate*/".into())
                }
            }
            (Encoding::Vop3p, Field::Src2, OperandKind::Src { count, .. }) if mai && v <= 127 => {
                if inst.info.name.starts_with("v_smfmac") {
                    class("VGPR_32".into())
                } else {
                    class(format!(
                        "{}_{}",
                        if self.vfile(Field::Src2, mai) == 'a' {
                            "AReg"
                        } else {
                            "VReg"
                        },
                        32 * count as u32
                    ))
                }
            }
            (
                Encoding::Vop3,
                Field::Src2,
                OperandKind::Src {
                    ty: SrcType::RegOnly,
                    count: 2,
                },
            ) if v >= 256 || v == 126 => class("SReg_1_XEXEC".into()),
            (Encoding::Vop3, Field::Src2, OperandKind::Reg { file: RegFile::S, .. }) if v >= 256 || v == 126 => {
                class("SReg_1_XEXEC".into())
            }
            (
                Encoding::Vop1 | Encoding::Vop3,
                Field::Src0,
                OperandKind::Src {
                    ty: SrcType::RegOnly, ..
                },
            ) if v <= 127 => {
                let c = if inst.info.name.starts_with("v_readfirstlane") {
                    "VRegOrLds_32"
                } else if inst.info.name.starts_with("v_accvgpr_mov") {
                    "AGPR_32"
                } else {
                    "VGPR_32"
                };
                class(c.into())
            }
            (Encoding::Mubuf | Encoding::Mtbuf, Field::Srsrc, _) if special(v * 4) => class("SReg_128".into()),
            (
                _,
                _,
                OperandKind::Src {
                    ty: SrcType::RegOnly, ..
                },
            ) if is_constant(v) && !mai => Some("/*Invalid immediate*/".into()),
            (Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc, _, OperandKind::Src { count, .. }) if v == 254 => {
                class(format!("SReg_{}", 32 * count as u32))
            }
            _ => None,
        }
    }

    fn operand_text(&mut self, field: Field, kind: OperandKind, mai: bool) {
        let inst = self.inst;
        let enc = inst.info.encoding;
        let v = inst.field(field);
        if matches!(field, Field::Src0 | Field::Src1 | Field::Src2) {
            if let OperandKind::Reg {
                file: RegFile::S,
                count,
            } = kind
            {
                // a lane-mask source (v_cndmask_b32_e64 src2): printed like any source
                return source(&mut self.out, v, SrcType::B32, count as u32, None, 'v');
            }
        }
        if matches!(enc, Encoding::Vop3 | Encoding::Vop1) && field == Field::Vdst && v >= 128 {
            if let OperandKind::Reg {
                file: RegFile::S,
                count,
            } = kind
            {
                // an SGPR destination field holding a constant: LLVM prints the constant (and flags it)
                return source(&mut self.out, v, SrcType::B32, count as u32, None, 'v');
            }
        }
        if mai && field == Field::Src2 && v <= 127 {
            if let OperandKind::Src { count: 32, .. } = kind {
                // no 1024-bit SGPR tuples exist: LLVM names the single register
                return scalar_reg(&mut self.out, v, 1);
            }
        }
        if enc == Encoding::Smem && field == Field::Soffset {
            return self.smem_offset();
        }
        if field == Field::Literal {
            let lit = inst.literal().unwrap_or(0);
            return match kind {
                OperandKind::Src { ty, .. } => immediate(&mut self.out, lit as u64, ty),
                _ => {
                    let _ = write!(self.out, "0x{lit:x}");
                }
            };
        }
        match kind {
            OperandKind::Reg { file, count } => {
                let mut count = count as u32;
                match file {
                    RegFile::S => {
                        if matches!(enc, Encoding::Mubuf | Encoding::Mtbuf) && field == Field::Soffset {
                            return source(&mut self.out, v, SrcType::B32, 1, None, 'v');
                        }
                        let base = match field {
                            Field::Sbase if enc == Encoding::Smem => v * 2,
                            Field::Srsrc | Field::Ssamp => v * 4,
                            _ => v,
                        };
                        scalar_reg(&mut self.out, base, count)
                    }
                    RegFile::V | RegFile::A => {
                        match (enc, field) {
                            (Encoding::Scratch, Field::Addr)
                                if inst.field(Field::Saddr) != 0x7f && !self.scratch_sve() =>
                            {
                                return self.out.push_str("off");
                            }
                            (Encoding::Mubuf | Encoding::Mtbuf, Field::Vaddr)
                                if self.m(Field::Offen) + self.m(Field::Idxen) == 0 =>
                            {
                                return self.out.push_str("off");
                            }
                            _ => count = inst.vector_regs(field, count),
                        }
                        if enc == Encoding::Mimg && field == Field::Vdata {
                            count = self.mimg_data_regs();
                        }
                        let f = if file == RegFile::A {
                            'a'
                        } else {
                            self.vfile(field, mai)
                        };
                        vector_reg(&mut self.out, f, v, count)
                    }
                }
            }
            OperandKind::Src { ty, count } => {
                if matches!(enc, Encoding::Mubuf | Encoding::Mtbuf) {
                    return source(&mut self.out, v, SrcType::B32, 1, None, 'v');
                }
                let mut out = std::mem::take(&mut self.out);
                let (mut neg, abs) = self.neg_abs(field);
                let sext = neg && self.int_source(field);
                neg &= !sext;
                // LLVM spells negation of a constant `neg(c)` (unless |abs| is there too), of a register `-r`
                let neg_call = neg && !abs && is_constant(v);
                if sext {
                    out.push_str("sext(");
                } else if neg_call {
                    out.push_str("neg(");
                } else if neg {
                    out.push('-');
                }
                if abs {
                    out.push('|');
                }
                let vfile = self.vfile(field, mai);
                let at = out.len();
                source(&mut out, v, ty, count as u32, inst.literal(), vfile);
                // LLVM 22 (gfx950) prints a 32-bit literal that would read as an inline constant as lit(0x...),
                // the whole dword in hex (an f64 operand's literal, the high half, prints as before)
                if v == 255 && inst.target.llvm_version() >= 22 && ty != SrcType::F64 && !out[at..].starts_with("0x") {
                    out.truncate(at);
                    let _ = write!(out, "lit(0x{:x})", inst.literal().unwrap_or(0));
                }
                if abs {
                    out.push('|');
                }
                if neg_call || sext {
                    out.push(')');
                }
                self.out = out;
            }
            OperandKind::Fixed(name) => {
                if name == "off" && matches!(enc, Encoding::Global | Encoding::Scratch) {
                    let s = inst.field(Field::Saddr);
                    if s == 0x7f {
                        self.out.push_str("off");
                    } else {
                        scalar_reg(&mut self.out, s, if enc == Encoding::Global { 2 } else { 1 });
                    }
                } else {
                    self.out.push_str(name);
                }
            }
            OperandKind::Label => {
                let _ = write!(self.out, "{}", v & 0xffff);
            }
            OperandKind::Imm if inst.info.name == "s_endpgm" => {
                let _ = write!(self.out, "{v}");
            }
            OperandKind::Imm => immediate(&mut self.out, (v & 0xffff) as u64, SrcType::F16),
            OperandKind::Hex => {
                let _ = write!(self.out, "0x{v:x}");
            }
            OperandKind::Waitcnt => self.waitcnt(v),
            OperandKind::Sendmsg => self.sendmsg(v),
            OperandKind::GprIdx => self.gpr_idx(v),
            OperandKind::Hwreg => self.hwreg(v),
        }
    }

    /// Does source `field` take integer input modifiers (neg bit = sign extension)?
    pub(super) fn int_source(&self, field: Field) -> bool {
        let i = match field {
            Field::Src0 => 0,
            Field::Src1 | Field::Vsrc1 => 1,
            Field::Src2 => 2,
            _ => return false,
        };
        self.inst.info.flags.contains(OpFlags::int_src(i))
    }

    /// (neg, abs) of a VOP3/VOP3P source.
    fn neg_abs(&self, field: Field) -> (bool, bool) {
        let inst = self.inst;
        let i = match field {
            Field::Src0 => 0,
            Field::Src1 => 1,
            Field::Src2 => 2,
            _ => return (false, false),
        };
        match inst.info.encoding {
            // (gfx950's v_bitop3 holds its truth table in the neg, abs and omod bits)
            Encoding::Vop3 if self.is_bitop3() => (false, false),
            Encoding::Vop3 => (bit(self.m(Field::Neg), i) == 1, bit(self.m(Field::Abs), i) == 1),
            Encoding::Vop3p if self.is_mix() => (bit(self.m(Field::Neg), i) == 1, bit(self.m(Field::NegHi), i) == 1),
            _ => (false, false),
        }
    }
}
