//! Instruction text, identical to what `llvm-objdump-19 -d` prints for gfx90a/gfx942.
//!
//! The operand list of each instruction comes from the table; what is written here is how each kind of operand
//! and each encoding's modifiers are spelled. This module walks the operand list; `values` spells registers and
//! constants, `operands` one operand, `modifiers` what follows the operands, `special` the operands with a syntax
//! of their own, `sdwa_dpp` the SDWA and DPP forms.

use std::fmt::Write as _;

use crate::encoding::{Encoding, Field};
use crate::inst::{Form, Inst};
use crate::table::{OpFlags, OperandKind, Target};

mod modifiers;
mod operands;
mod sdwa_dpp;
mod special;
mod values;

use values::{bit, vector_reg};

/// The text of one instruction (without address or encoding comment).
pub fn text(inst: &Inst) -> String {
    let mut p = Printer {
        inst,
        out: String::with_capacity(48),
    };
    p.print();
    p.out
}

struct Printer<'a> {
    inst: &'a Inst,
    out: String,
}

impl Printer<'_> {
    fn sep(&mut self, first: &mut bool) {
        if *first {
            self.out.push(' ');
            *first = false;
        } else {
            self.out.push_str(", ");
        }
    }

    /// A modifier field as LLVM sees it: bits that do not change this instruction (not live) read as zero.
    fn m(&self, field: Field) -> u32 {
        let inst = self.inst;
        let enc = inst.info.encoding;
        let Some(d) = enc.layout().iter().find(|d| d.field == field) else {
            return 0;
        };
        // bits of this row's operands (VOP3b's sdst overlays abs/op_sel) are never modifiers
        let operand_bits: u32 = inst
            .info
            .operands
            .iter()
            .filter_map(|o| enc.field_def(o.field))
            .filter(|x| x.dword == d.dword)
            .fold(0, |m, x| m | x.mask());
        let live = inst.info.live[d.dword as usize] & !operand_bits;
        (inst.base_words()[d.dword as usize] & live & d.mask()) >> d.lo
    }

    /// A bit of the SDWA/DPP dword, if it is live for this instruction.
    fn e(&self, n: u32) -> u32 {
        let inst = self.inst;
        let live = match inst.form {
            Form::Sdwa => inst.info.ext_live[0],
            Form::Dpp => inst.info.ext_live[1],
            Form::Plain | Form::Scaled => 0,
        };
        let e = inst.ext().unwrap_or(0);
        if live >> n & 1 == 1 {
            (e >> n) & 1
        } else {
            0
        }
    }

    fn is_mai(&self) -> bool {
        let n = self.inst.info.name;
        // (gfx950's v_mfma_ld_scale_b32, which hands the next MFMA its scales, is an ordinary VOP3P)
        self.inst.info.encoding == Encoding::Vop3p
            && (n.contains("mfma") || n.contains("smfmac") || n.starts_with("v_accvgpr"))
            && n != "v_mfma_ld_scale_b32"
    }

    /// gfx950's v_bitop3_b16/b32: the truth table `bitop3` sits in the neg (bits 2:0), abs (5:3) and omod
    /// (7:6) fields.
    fn is_bitop3(&self) -> bool {
        self.inst.info.name.starts_with("v_bitop3_")
    }

    fn is_mix(&self) -> bool {
        let n = self.inst.info.name;
        n.starts_with("v_fma_mix") || n.starts_with("v_mad_mix")
    }

    /// Atomics of the FLAT family return the old value (and print a destination) when glc/sc0 is set.
    fn flat_returns(&self) -> bool {
        let inst = self.inst;
        matches!(
            inst.info.encoding,
            Encoding::Flat | Encoding::Global | Encoding::Scratch
        ) && inst.info.name.contains("atomic")
            && inst.field(Field::Glc) == 1
    }

    /// gfx940 scratch: bit 13 says the VGPR address is used alongside the SGPR one.
    fn scratch_sve(&self) -> bool {
        let inst = self.inst;
        inst.target.is_gfx940() && inst.info.encoding == Encoding::Scratch && inst.field(Field::Lds) == 1
    }

    /// Loads to LDS (no data register printed).
    fn lds(&self) -> bool {
        matches!(
            self.inst.info.encoding,
            Encoding::Global | Encoding::Scratch | Encoding::Mubuf
        ) && !self.scratch_sve()
            && self.m(Field::Lds) == 1
    }

    fn print(&mut self) {
        let inst = self.inst;
        let info = inst.info;
        let enc = info.encoding;
        match (enc, inst.form) {
            (Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc, Form::Sdwa) => return self.sdwa(),
            (Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc, Form::Dpp) => return self.dpp(),
            _ => {}
        }
        if inst.form == Form::Scaled {
            return self.scaled_mfma();
        }
        self.out.push_str(info.name);
        if info.flags.contains(OpFlags::OPTIONAL_OPERANDS) && inst.field(Field::Simm16) == 0 {
            return;
        }
        let mai = self.is_mai();
        let mut first = true;
        let lds = self.lds();
        if self.flat_returns() {
            if let Some(OperandKind::Reg { count, .. }) = info.operand(Field::Data).map(|o| o.kind) {
                let n = if info.name.contains("cmpswap") {
                    (count / 2).max(1)
                } else {
                    count
                };
                self.sep(&mut first);
                let f = self.vfile(Field::Vdst, false);
                vector_reg(&mut self.out, f, inst.field(Field::Vdst), n as u32);
            }
        }
        let last = info.operands.len().saturating_sub(1);
        for (i, o) in info.operands.iter().enumerate() {
            if lds && matches!(o.field, Field::Vdst | Field::Vdata) {
                continue;
            }
            self.sep(&mut first);
            if o.kind == OperandKind::Fixed("off") && i != last {
                // the vaddr slot: unused, except with gfx940's SVE bit (scratch with both VGPR and SGPR address)
                if self.scratch_sve() {
                    vector_reg(&mut self.out, 'v', inst.field(Field::Addr), 1);
                } else {
                    self.out.push_str("off");
                }
                continue;
            }
            let kind = self.f8f6f4_kind(o.field, o.kind);
            self.operand(o.field, kind, mai);
        }
        self.modifiers(mai);
    }

    /// gfx950's scaled MFMA: `v_mfma_scale_` and the MFMA's name after `v_mfma_`, its operands, the scales
    /// (the prefix's src0 and src1), then op_sel (prefix bits 11, 12; printed when set) and op_sel_hi (prefix
    /// dword 1 bits 27, 28; always printed, third element 0) before the MFMA's cbsz/abid/blgp. The prefix's
    /// other bits do not change the text.
    fn scaled_mfma(&mut self) {
        let inst = self.inst;
        let [p0, p1] = inst.scale_prefix().expect("a scaled MFMA");
        self.out.push_str("v_mfma_scale_");
        self.out.push_str(inst.info.name.trim_start_matches("v_mfma_"));
        let mut first = true;
        for o in inst.info.operands {
            self.sep(&mut first);
            let kind = self.f8f6f4_kind(o.field, o.kind);
            self.operand(o.field, kind, true);
        }
        for src in [p1 & 0x1ff, p1 >> 9 & 0x1ff] {
            self.sep(&mut first);
            values::source(&mut self.out, src, crate::table::SrcType::B32, 1, None, 'v');
        }
        let (op_sel, op_sel_hi) = (p0 >> 11 & 3, p1 >> 27 & 3);
        if op_sel != 0 {
            let _ = write!(self.out, " op_sel:[{},{},0]", bit(op_sel, 0), bit(op_sel, 1));
        }
        let _ = write!(self.out, " op_sel_hi:[{},{},0]", bit(op_sel_hi, 0), bit(op_sel_hi, 1));
        self.modifiers(true);
    }

    /// gfx950's f8f6f4 MFMAs read A and B in the formats CBSZ and BLGP select: fp8 and bf8 (0, 1, and the
    /// unused 5..7) in 8 registers, fp6 and bf6 (2, 3) in 6, fp4 (4) in 4. The table's row has the fp8 width.
    fn f8f6f4_kind(&self, field: Field, kind: OperandKind) -> OperandKind {
        let inst = self.inst;
        let fmt = match field {
            Field::Src0 => inst.field(Field::NegHi),
            Field::Src1 => inst.field(Field::Neg),
            _ => return kind,
        };
        match kind {
            OperandKind::Src { ty, .. } if inst.info.name.contains("f8f6f4") => OperandKind::Src {
                ty,
                count: match fmt {
                    2 | 3 => 6,
                    4 => 4,
                    _ => 8,
                },
            },
            _ => kind,
        }
    }

    /// Register file for a vector field, switched to AGPRs by the encoding's acc bits.
    fn vfile(&self, field: Field, mai: bool) -> char {
        let inst = self.inst;
        let enc = inst.info.encoding;
        let acc = match enc {
            Encoding::Ds
            | Encoding::Flat
            | Encoding::Global
            | Encoding::Scratch
            | Encoding::Mubuf
            | Encoding::Mtbuf
            | Encoding::Mimg => {
                (matches!(
                    field,
                    Field::Vdst | Field::Data | Field::Data0 | Field::Data1 | Field::Vdata
                ) || field == Field::Addr && inst.info.name.starts_with("ds_gws"))
                    && inst.field(Field::Acc) == 1
            }
            Encoding::Vop3p if inst.info.name.starts_with("v_accvgpr") => {
                // AGPR<->VGPR moves: the register files are fixed by the opcode, not by acc bits
                field == Field::Src0 && !inst.info.name.starts_with("v_accvgpr_write")
            }
            Encoding::Vop3p if mai => match field {
                Field::Src0 => bit(inst.field(Field::OpSelHi), 0) == 1,
                Field::Src1 => bit(inst.field(Field::OpSelHi), 1) == 1,
                Field::Src2 if inst.info.name.starts_with("v_smfmac") => false,
                Field::Vdst | Field::Src2 => inst.field(Field::Clamp) == 1,
                _ => false,
            },
            Encoding::Vop1 | Encoding::Vop3 => inst.info.name.starts_with("v_accvgpr_mov") && field == Field::Src0,
            _ => false,
        };
        if acc {
            'a'
        } else {
            'v'
        }
    }
}

/// Is this target's table known? (re-exported for callers that only have a name)
pub fn target_supported(name: &str) -> bool {
    Target::from_name(name).is_some()
}
