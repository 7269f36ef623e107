//! Instruction text, identical to what `llvm-objdump-19 -d` prints for gfx90a/gfx942.
//!
//! The operand list of each instruction comes from the table; what is written here is how each kind of operand
//! and each encoding's modifiers are spelled.

use std::fmt::Write as _;

use crate::constants::{inline_float, inline_int, FloatWidth, FLOATS};
use crate::encoding::{Encoding, Field};
use crate::inst::{Form, Inst};
use crate::table::{OpFlags, OperandKind, RegFile, SrcType, Target};

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

/// Name of a scalar register or special operand 0..=127 taken `count` at a time. Like LLVM's decoder, tuples
/// of SGPRs and TTMPs are aligned down (64-bit to even, wider to a multiple of 4).
fn scalar_reg(out: &mut String, v: u32, count: u32) {
    let align = |x: u32| match count {
        1 => x,
        2 => x & !1,
        _ => x & !3,
    };
    let v = match v {
        0..=101 => align(v),
        108..=123 => 108 + align(v - 108),
        _ => v,
    };
    let pair = |out: &mut String, name: &str, lo: u32| {
        if count == 1 {
            out.push_str(name);
            out.push_str(if v == lo { "_lo" } else { "_hi" });
        } else {
            out.push_str(name);
        }
    };
    match v {
        0..=101 => {
            if count == 1 {
                let _ = write!(out, "s{v}");
            } else {
                let _ = write!(out, "s[{}:{}]", v, v + count - 1);
            }
        }
        102 | 103 => pair(out, "flat_scratch", 102),
        104 | 105 => pair(out, "xnack_mask", 104),
        106 | 107 => pair(out, "vcc", 106),
        108..=123 => {
            let t = v - 108;
            if count == 1 {
                let _ = write!(out, "ttmp{t}");
            } else {
                let _ = write!(out, "ttmp[{}:{}]", t, t + count - 1);
            }
        }
        124 => out.push_str("m0"),
        125 => out.push_str("null"),
        126 | 127 => pair(out, "exec", 126),
        _ => {
            let _ = write!(out, "{v}");
        }
    }
}

fn vector_reg(out: &mut String, file: char, v: u32, count: u32) {
    if count == 1 {
        let _ = write!(out, "{file}{v}");
    } else {
        let _ = write!(out, "{file}[{}:{}]", v, v + count - 1);
    }
}

/// Value of inline float constant 240..=248 for an operand of type `ty`.
fn inline_float_bits(v: u32, ty: SrcType) -> u64 {
    let width = match ty {
        SrcType::B64 | SrcType::F64 => FloatWidth::F64,
        SrcType::I16 | SrcType::F16 | SrcType::V216 => FloatWidth::F16,
        _ => FloatWidth::F32,
    };
    inline_float(v, width).unwrap_or(0)
}

/// Prints an immediate the way LLVM's printer does for the operand type: by value, so a literal that equals an
/// inline constant prints like one.
fn immediate(out: &mut String, value: u64, ty: SrcType) {
    match ty {
        SrcType::B64 | SrcType::F64 => {
            let s = value as i64;
            if (-16..=64).contains(&s) {
                let _ = write!(out, "{s}");
            } else if let Some(c) = FLOATS.iter().find(|c| c.f64 == value) {
                out.push_str(c.text64);
            } else if ty == SrcType::F64 {
                let _ = write!(out, "0x{:x}", value >> 32);
            } else {
                let _ = write!(out, "0x{value:x}");
            }
        }
        // LLVM keeps the whole literal dword for 16-bit integer operands: small integers and f32 constants print
        // by the full value, anything else as the low half in hex
        SrcType::I16 => named_or_hex(
            out,
            value as u32 as i32,
            value as u32,
            FloatWidth::F32,
            value as u32 & 0xffff,
        ),
        SrcType::F16 => {
            let h = value as u32 & 0xffff;
            named_or_hex(out, h as u16 as i16 as i32, h, FloatWidth::F16, h)
        }
        SrcType::V216 => named_or_hex(out, value as u32 as i32, value as u32, FloatWidth::F16, value as u32),
        SrcType::B32 | SrcType::RegOnly => {
            named_or_hex(out, value as u32 as i32, value as u32, FloatWidth::F32, value as u32)
        }
    }
}

/// A 16/32-bit immediate the LLVM way: an inline integer in decimal, a float constant of `width` by name, else
/// `hex`.
fn named_or_hex(out: &mut String, int_value: i32, bits: u32, width: FloatWidth, hex: u32) {
    if (-16..=64).contains(&int_value) {
        let _ = write!(out, "{int_value}");
    } else if let Some(c) = FLOATS.iter().find(|c| {
        if width == FloatWidth::F16 {
            c.f16 as u32 == bits
        } else {
            c.f32 == bits
        }
    }) {
        out.push_str(c.text);
    } else {
        let _ = write!(out, "0x{hex:x}");
    }
}

/// A 9-bit (or 8-bit scalar) source operand.
fn source(out: &mut String, v: u32, ty: SrcType, count: u32, literal: Option<u32>, vfile: char) {
    match v {
        0..=127 => scalar_reg(out, v, count),
        128..=208 => {
            let _ = write!(out, "{}", inline_int(v).unwrap_or(0));
        }
        235 => out.push_str("src_shared_base"),
        236 => out.push_str("src_shared_limit"),
        237 => out.push_str("src_private_base"),
        238 => out.push_str("src_private_limit"),
        239 => out.push_str("src_pops_exiting_wave_id"),
        240..=248 => immediate(out, inline_float_bits(v, ty), ty),
        251 => out.push_str("src_vccz"),
        252 => out.push_str("src_execz"),
        253 => out.push_str("src_scc"),
        254 => out.push_str("src_lds_direct"),
        255 => {
            let l = literal.unwrap_or(0) as u64;
            let value = if ty == SrcType::F64 { l << 32 } else { l };
            immediate(out, value, ty);
        }
        256..=511 => vector_reg(out, vfile, v - 256, count),
        _ => {
            let _ = write!(out, "{v}");
        }
    }
}

/// Is source value `v` an inline constant or literal (as opposed to a register-like operand)?
fn is_constant(v: u32) -> bool {
    matches!(v, 128..=208 | 240..=248 | 255)
}

fn sel_name(sel: u32) -> &'static str {
    match sel {
        0 => "BYTE_0",
        1 => "BYTE_1",
        2 => "BYTE_2",
        3 => "BYTE_3",
        4 => "WORD_0",
        5 => "WORD_1",
        _ => "DWORD",
    }
}

fn bit(x: u32, n: u32) -> u32 {
    (x >> n) & 1
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
        (inst.words()[d.dword as usize] & live & d.mask()) >> d.lo
    }

    /// A bit of the SDWA/DPP dword, if it is live for this instruction.
    fn e(&self, n: u32) -> u32 {
        let inst = self.inst;
        let live = match inst.form {
            Form::Sdwa => inst.info.ext_live[0],
            Form::Dpp => inst.info.ext_live[1],
            Form::Plain => 0,
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
        self.inst.info.encoding == Encoding::Vop3p
            && (n.contains("mfma") || n.contains("smfmac") || n.starts_with("v_accvgpr"))
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
            self.operand(o.field, o.kind, mai);
        }
        self.modifiers(mai);
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

    fn operand(&mut self, field: Field, kind: OperandKind, mai: bool) {
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
                source(&mut out, v, ty, count as u32, inst.literal(), vfile);
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
    fn int_source(&self, field: Field) -> bool {
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
            Encoding::Vop3 => (bit(self.m(Field::Neg), i) == 1, bit(self.m(Field::Abs), i) == 1),
            Encoding::Vop3p if self.is_mix() => (bit(self.m(Field::Neg), i) == 1, bit(self.m(Field::NegHi), i) == 1),
            _ => (false, false),
        }
    }

    fn modifiers(&mut self, mai: bool) {
        let inst = self.inst;
        let enc = inst.info.encoding;
        let gfx940 = inst.target.is_gfx940();
        let nsrc = [Field::Src0, Field::Src1, Field::Src2]
            .iter()
            .filter(|f| inst.info.operand(**f).is_some())
            .count() as u32;
        match enc {
            Encoding::Smem if self.m(Field::Glc) == 1 => {
                self.out.push_str(" glc");
            }
            Encoding::Vop3 => {
                let opsel = self.m(Field::OpSel);
                if opsel != 0 {
                    let mut bits: Vec<String> = (0..nsrc).map(|i| bit(opsel, i).to_string()).collect();
                    // gfx942's stochastic-rounding fp8/bf8 conversions use bit 2 too (with bit 3, the byte
                    // written): LLVM prints all four
                    if inst.info.name.starts_with("v_cvt_sr_") {
                        bits.push(bit(opsel, 2).to_string());
                    }
                    bits.push(bit(opsel, 3).to_string());
                    let _ = write!(self.out, " op_sel:[{}]", bits.join(","));
                }
                if self.m(Field::Clamp) == 1 {
                    self.out.push_str(" clamp");
                }
                self.omod(self.m(Field::Omod));
            }
            Encoding::Vop3p if mai => {
                let cbsz = self.m(Field::NegHi);
                let abid = self.m(Field::OpSel) | self.m(Field::OpSelHi2) << 3;
                let blgp = self.m(Field::Neg);
                if cbsz != 0 {
                    let _ = write!(self.out, " cbsz:{cbsz}");
                }
                if abid != 0 {
                    let _ = write!(self.out, " abid:{abid}");
                }
                // gfx942's f64 MFMAs read these bits as neg for A, B and C
                let f64_neg = gfx940 && inst.info.mfma.is_some_and(|m| m.input == crate::table::DataType::F64);
                if blgp != 0 && f64_neg {
                    let _ = write!(self.out, " neg:[{},{},{}]", bit(blgp, 0), bit(blgp, 1), bit(blgp, 2));
                } else if blgp != 0 {
                    let _ = write!(self.out, " blgp:{blgp}");
                }
            }
            Encoding::Vop3p => {
                let mix = self.is_mix();
                let all = (1u32 << nsrc) - 1;
                let list = |x: u32| (0..nsrc).map(|i| bit(x, i).to_string()).collect::<Vec<_>>().join(",");
                let opsel = self.m(Field::OpSel) & all;
                // op_sel_hi: bits LLVM does not read keep their default (all ones, or zeros for the mix ops)
                let default_hi = if mix { 0 } else { all };
                let hi_field = inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2;
                let hi_live = {
                    let l0 = inst.info.live[0];
                    let l1 = inst.info.live[1];
                    ((l1 >> 27) & 3) | ((l0 >> 14) & 1) << 2
                };
                let opsel_hi = ((hi_field & hi_live) | (default_hi & !hi_live)) & all;
                if opsel != 0 {
                    let _ = write!(self.out, " op_sel:[{}]", list(opsel));
                }
                if opsel_hi != default_hi {
                    let _ = write!(self.out, " op_sel_hi:[{}]", list(opsel_hi));
                }
                if !mix {
                    let neg = self.m(Field::Neg) & all;
                    let neg_hi = self.m(Field::NegHi) & all;
                    if neg != 0 {
                        let _ = write!(self.out, " neg_lo:[{}]", list(neg));
                    }
                    if neg_hi != 0 {
                        let _ = write!(self.out, " neg_hi:[{}]", list(neg_hi));
                    }
                }
                if self.m(Field::Clamp) == 1 {
                    self.out.push_str(" clamp");
                }
            }
            Encoding::Ds => {
                let o0 = self.m(Field::Offset0);
                let o1 = self.m(Field::Offset1);
                if inst.info.has_mod("offset0") || inst.info.has_mod("offset1") {
                    if o0 != 0 {
                        let _ = write!(self.out, " offset0:{o0}");
                    }
                    if o1 != 0 {
                        let _ = write!(self.out, " offset1:{o1}");
                    }
                } else {
                    let off = o0 | o1 << 8;
                    if inst.info.name == "ds_swizzle_b32" {
                        if off != 0 {
                            self.out.push_str(" offset:");
                            swizzle(&mut self.out, off);
                        }
                    } else if off != 0 {
                        let _ = write!(self.out, " offset:{off}");
                    }
                }
                // (the GWS instructions' gds bit is fixed to 1, so it is no modifier of theirs, but LLVM prints it)
                if self.m(Field::Gds) == 1 || inst.info.name.starts_with("ds_gws") {
                    self.out.push_str(" gds");
                }
            }
            Encoding::Flat | Encoding::Global | Encoding::Scratch => {
                let raw = self.m(Field::Offset);
                let off = if enc == Encoding::Flat {
                    raw as i32
                } else {
                    ((raw << 19) as i32) >> 19
                };
                if off != 0 {
                    let _ = write!(self.out, " offset:{off}");
                }
                self.cache_bits(gfx940);
                if self.lds() {
                    self.out.push_str(" lds");
                }
            }
            Encoding::Mubuf | Encoding::Mtbuf => {
                let (dfmt, nfmt) = (inst.field(Field::Dfmt), inst.field(Field::Nfmt));
                if enc == Encoding::Mtbuf && !(dfmt == 1 && nfmt == 0) {
                    let _ = write!(self.out, " format:[{}]", mtbuf_format(dfmt, nfmt));
                }
                if self.m(Field::Idxen) == 1 {
                    self.out.push_str(" idxen");
                }
                if self.m(Field::Offen) == 1 {
                    self.out.push_str(" offen");
                }
                let off = self.m(Field::Offset);
                if off != 0 {
                    let _ = write!(self.out, " offset:{off}");
                }
                self.cache_bits(gfx940);
                if enc == Encoding::Mubuf && self.m(Field::Lds) == 1 {
                    self.out.push_str(" lds");
                }
            }
            Encoding::Mimg => {
                let dmask = inst.field(Field::Dmask);
                if dmask != 0 {
                    let _ = write!(self.out, " dmask:0x{dmask:x}");
                }
                for (f, name) in [
                    (Field::Unorm, "unorm"),
                    (Field::Glc, "glc"),
                    (Field::Slc, "slc"),
                    (Field::Sc1, "scc"),
                    (Field::A16, "a16"),
                    (Field::Lwe, "lwe"),
                    (Field::Da, "da"),
                    (Field::D16, "d16"),
                ] {
                    if self.m(f) == 1 {
                        let _ = write!(self.out, " {name}");
                    }
                }
            }
            _ => {}
        }
    }

    /// Data registers of an image instruction: one per enabled channel (twice that for cmpswap), halved by
    /// d16, plus one for tfe.
    fn mimg_data_regs(&self) -> u32 {
        let inst = self.inst;
        let mut n = inst.field(Field::Dmask).count_ones().max(1);
        if inst.info.name.contains("atomic") {
            // atomics come in 1/2-dword (cmpswap: 2/4) variants; other sizes keep the smaller one
            let sizes = if inst.info.name.contains("cmpswap") {
                [2, 4]
            } else {
                [1, 2]
            };
            if !sizes.contains(&n) {
                n = sizes[0];
            }
        }
        if self.m(Field::D16) == 1 {
            n = n.div_ceil(2);
        }
        n
    }

    fn omod(&mut self, omod: u32) {
        match omod {
            1 => self.out.push_str(" mul:2"),
            2 => self.out.push_str(" mul:4"),
            3 => self.out.push_str(" div:2"),
            _ => {}
        }
    }

    fn cache_bits(&mut self, gfx940: bool) {
        let (glc, slc, sc1) = (self.m(Field::Glc), self.m(Field::Slc), self.m(Field::Sc1));
        if gfx940 {
            if glc == 1 {
                self.out.push_str(" sc0");
            }
            if slc == 1 {
                self.out.push_str(" nt");
            }
            if sc1 == 1 {
                self.out.push_str(" sc1");
            }
        } else {
            if glc == 1 {
                self.out.push_str(" glc");
            }
            if slc == 1 {
                self.out.push_str(" slc");
            }
            if sc1 == 1 {
                self.out.push_str(" scc");
            }
        }
    }

    /// The offset operand of SMEM (listed in the table as `soffset`): immediate, SGPR, or SGPR plus immediate.
    fn smem_offset(&mut self) {
        let inst = self.inst;
        let imm = inst.field(Field::Imm);
        let soe = inst.field(Field::Soe);
        let offset = inst.field(Field::Offset);
        let signed = ((offset << 11) as i32) >> 11;
        let hex = |out: &mut String, x: i32| {
            let _ = if x < 0 {
                write!(out, "-0x{:x}", -(x as i64))
            } else {
                write!(out, "0x{x:x}")
            };
        };
        match (imm, soe) {
            (1, 0) => hex(&mut self.out, signed),
            (0, 0) => scalar_reg(&mut self.out, offset & 0x7f, 1),
            (1, _) => {
                scalar_reg(&mut self.out, inst.field(Field::Soffset), 1);
                self.out.push_str(" offset:");
                hex(&mut self.out, signed);
            }
            _ => scalar_reg(&mut self.out, inst.field(Field::Soffset), 1),
        }
    }

    fn waitcnt(&mut self, v: u32) {
        let vm = (v & 0xf) | ((v >> 14) & 3) << 4;
        let exp = (v >> 4) & 7;
        let lgkm = (v >> 8) & 0xf;
        let all = vm == 63 && exp == 7 && lgkm == 15;
        let mut parts = Vec::new();
        if vm != 63 || all {
            parts.push(format!("vmcnt({vm})"));
        }
        if exp != 7 || all {
            parts.push(format!("expcnt({exp})"));
        }
        if lgkm != 15 || all {
            parts.push(format!("lgkmcnt({lgkm})"));
        }
        self.out.push_str(&parts.join(" "));
    }

    fn sendmsg(&mut self, v: u32) {
        let id = v & 0xf;
        let op = (v >> 4) & 7;
        let stream = (v >> 8) & 3;
        let name = match id {
            1 => Some("MSG_INTERRUPT"),
            2 => Some("MSG_GS"),
            3 => Some("MSG_GS_DONE"),
            4 => Some("MSG_SAVEWAVE"),
            5 => Some("MSG_STALL_WAVE_GEN"),
            6 => Some("MSG_HALT_WAVES"),
            7 => Some("MSG_ORDERED_PS_DONE"),
            8 => Some("MSG_EARLY_PRIM_DEALLOC"),
            9 => Some("MSG_GS_ALLOC_REQ"),
            10 => Some("MSG_GET_DOORBELL"),
            15 => Some("MSG_SYSMSG"),
            _ => None,
        };
        let gs_ops = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
        let sys_ops = [
            "",
            "SYSMSG_OP_ECC_ERR_INTERRUPT",
            "SYSMSG_OP_REG_RD",
            "SYSMSG_OP_HOST_TRAP_ACK",
            "SYSMSG_OP_TTRACE_PC",
        ];
        let symbolic = match name {
            Some(_) if id == 2 || id == 3 => matches!((op, stream), (1..=3, _)) || (id == 3 && op == 0 && stream == 0),
            // LLVM 19 names no SYSMSG_OP_HOST_TRAP_ACK (3) on gfx9
            Some(_) if id == 15 => matches!((op, stream), (1 | 2 | 4, 0)),
            Some(_) => op == 0 && stream == 0,
            None => false,
        };
        let text = match name {
            _ if !symbolic && v & !0x37f != 0 => None,
            Some(n) if id == 2 || id == 3 => match (op, stream) {
                (0, 0) if id == 3 => Some(format!("sendmsg({n}, {})", gs_ops[0])),
                (1..=3, s) => Some(format!("sendmsg({n}, {}, {s})", gs_ops[op as usize])),
                _ => Some(format!("sendmsg({id}, {op}, {stream})")),
            },
            Some(n) if id == 15 => match (op, stream) {
                (1 | 2 | 4, 0) => Some(format!("sendmsg({n}, {})", sys_ops[op as usize])),
                _ => Some(format!("sendmsg({id}, {op}, {stream})")),
            },
            Some(n) if op == 0 && stream == 0 => Some(format!("sendmsg({n})")),
            _ => Some(format!("sendmsg({id}, {op}, {stream})")),
        };
        match text {
            Some(t) => self.out.push_str(&t),
            None => {
                let _ = write!(self.out, "{v}");
            }
        }
    }

    fn gpr_idx(&mut self, v: u32) {
        if v > 15 {
            let _ = write!(self.out, "0x{v:x}");
            return;
        }
        let names = ["SRC0", "SRC1", "SRC2", "DST"];
        let on: Vec<&str> = (0..4).filter(|i| bit(v, *i) == 1).map(|i| names[i as usize]).collect();
        let _ = write!(self.out, "gpr_idx({})", on.join(","));
    }

    fn hwreg(&mut self, v: u32) {
        let id = v & 0x3f;
        let offset = (v >> 6) & 0x1f;
        let size = ((v >> 11) & 0x1f) + 1;
        let name = match id {
            1 => Some("HW_REG_MODE"),
            2 => Some("HW_REG_STATUS"),
            3 => Some("HW_REG_TRAPSTS"),
            4 => Some("HW_REG_HW_ID"),
            5 => Some("HW_REG_GPR_ALLOC"),
            6 => Some("HW_REG_LDS_ALLOC"),
            7 => Some("HW_REG_IB_STS"),
            15 => Some("HW_REG_SH_MEM_BASES"),
            16 => Some("HW_REG_TBA_LO"),
            17 => Some("HW_REG_TBA_HI"),
            18 => Some("HW_REG_TMA_LO"),
            19 => Some("HW_REG_TMA_HI"),
            20 if self.inst.target.is_gfx940() => Some("HW_REG_XCC_ID"),
            21 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA"),
            22 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA1"),
            23 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_LO"),
            24 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_HI"),
            _ => None,
        };
        let idtext = name.map_or_else(|| id.to_string(), str::to_string);
        if offset == 0 && size == 32 {
            let _ = write!(self.out, "hwreg({idtext})");
        } else {
            let _ = write!(self.out, "hwreg({idtext}, {offset}, {size})");
        }
    }

    fn sdwa(&mut self) {
        let inst = self.inst;
        let info = inst.info;
        let e = inst.ext().unwrap_or(0);
        let base = info.name.strip_suffix("_e32").unwrap_or(info.name);
        let _ = write!(self.out, "{base}_sdwa");
        let enc = info.encoding;
        let mut first = true;
        for o in info.operands {
            match o.field {
                Field::Vdst if enc == Encoding::Vopc => {}
                Field::Vdst => {
                    self.sep(&mut first);
                    let count = match o.kind {
                        OperandKind::Reg { count, .. } => count as u32,
                        _ => 1,
                    };
                    vector_reg(&mut self.out, 'v', inst.field(Field::Vdst), count);
                }
                Field::Src0 => {
                    self.sep(&mut first);
                    let ty = match o.kind {
                        OperandKind::Src { ty, .. } => ty,
                        _ => SrcType::B32,
                    };
                    let (neg, abs, sext) = (self.e(20), self.e(21), self.e(19));
                    let (reg, scalar) = inst.sdwa_source(Field::Src0).unwrap_or_default();
                    self.sdwa_src(reg, scalar as u32, neg, abs, sext, ty);
                }
                Field::Vsrc1 => {
                    self.sep(&mut first);
                    let (neg, abs, sext) = (self.e(28), self.e(29), self.e(27));
                    let (reg, scalar) = inst.sdwa_source(Field::Vsrc1).unwrap_or_default();
                    self.sdwa_src(reg, scalar as u32, neg, abs, sext, SrcType::B32);
                }
                _ => {
                    self.sep(&mut first);
                    if let OperandKind::Fixed(name) = o.kind {
                        match (name, inst.sdwa_sdst()) {
                            ("vcc", Some(sdst)) => scalar_reg(&mut self.out, sdst, 2),
                            _ => self.out.push_str(name),
                        }
                    }
                }
            }
        }
        // gfx942's fp8/bf8 to f32 conversions have no destination select (nor clamp and omod)
        let f8_to_f32 = matches!(
            base,
            "v_cvt_f32_fp8" | "v_cvt_f32_bf8" | "v_cvt_pk_f32_fp8" | "v_cvt_pk_f32_bf8"
        );
        if enc != Encoding::Vopc && !f8_to_f32 {
            if self.e(13) == 1 {
                self.out.push_str(" clamp");
            }
            self.omod(self.e(14) | self.e(15) << 1);
            let unused = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "3"][((e >> 11) & 3) as usize];
            let _ = write!(self.out, " dst_sel:{} dst_unused:{}", sel_name((e >> 8) & 7), unused);
        }
        let _ = write!(self.out, " src0_sel:{}", sel_name((e >> 16) & 7));
        if enc != Encoding::Vop1 {
            let _ = write!(self.out, " src1_sel:{}", sel_name((e >> 24) & 7));
        }
    }

    fn sdwa_src(&mut self, v: u32, s_bit: u32, neg: u32, abs: u32, sext: u32, ty: SrcType) {
        let out = &mut self.out;
        let neg_call = neg == 1 && abs == 0 && s_bit == 1 && is_constant(v);
        if neg_call {
            out.push_str("neg(");
        } else if neg == 1 {
            out.push('-');
        }
        if abs == 1 {
            out.push('|');
        }
        if sext == 1 {
            out.push_str("sext(");
        }
        if s_bit == 1 {
            source(out, v, ty, 1, None, 'v');
        } else {
            vector_reg(out, 'v', v, 1);
        }
        if sext == 1 {
            out.push(')');
        }
        if abs == 1 {
            out.push('|');
        }
        if neg_call {
            out.push(')');
        }
    }

    fn dpp(&mut self) {
        let inst = self.inst;
        let info = inst.info;
        let e = inst.ext().unwrap_or(0);
        let base = info.name.strip_suffix("_e32").unwrap_or(info.name);
        // an instruction without operands (v_nop) keeps its name
        if info.operands.is_empty() {
            self.out.push_str(base);
        } else {
            let _ = write!(self.out, "{base}_dpp");
        }
        let mut first = true;
        let mut wide = false;
        for o in info.operands {
            self.sep(&mut first);
            let (neg, abs, v, count) = match (o.field, o.kind) {
                (Field::Src0, OperandKind::Src { count, .. }) => (self.e(20), self.e(21), e & 0xff, count as u32),
                (Field::Vsrc1, OperandKind::Reg { count, .. }) => {
                    (self.e(22), self.e(23), inst.field(Field::Vsrc1), count as u32)
                }
                (f, k) => {
                    if let OperandKind::Reg { count: 2, .. } = k {
                        wide = true;
                    }
                    self.operand(f, k, false);
                    continue;
                }
            };
            wide |= count == 2;
            let sext = neg == 1 && self.int_source(o.field);
            if sext {
                self.out.push_str("sext(");
            } else if neg == 1 {
                self.out.push('-');
            }
            if abs == 1 {
                self.out.push('|');
            }
            vector_reg(&mut self.out, 'v', v, count);
            if abs == 1 {
                self.out.push('|');
            }
            if sext {
                self.out.push(')');
            }
        }
        let ctrl = (e >> 8) & 0x1ff;
        self.out.push(' ');
        if wide && !(0x150..=0x15f).contains(&ctrl) {
            self.out.push_str(" /* DP ALU dpp only supports row_newbcast */");
        } else {
            dpp_ctrl(&mut self.out, ctrl);
        }
        let _ = write!(
            self.out,
            " row_mask:0x{:x} bank_mask:0x{:x}",
            (e >> 28) & 0xf,
            (e >> 24) & 0xf
        );
        if bit(e, 19) == 1 {
            self.out.push_str(" bound_ctrl:1");
        }
    }
}

fn dpp_ctrl(out: &mut String, c: u32) {
    let _ = match c {
        0x000..=0x0ff => write!(
            out,
            "quad_perm:[{},{},{},{}]",
            c & 3,
            (c >> 2) & 3,
            (c >> 4) & 3,
            (c >> 6) & 3
        ),
        0x101..=0x10f => write!(out, "row_shl:{}", c & 0xf),
        0x111..=0x11f => write!(out, "row_shr:{}", c & 0xf),
        0x121..=0x12f => write!(out, "row_ror:{}", c & 0xf),
        0x130 => write!(out, "wave_shl:1"),
        0x134 => write!(out, "wave_rol:1"),
        0x138 => write!(out, "wave_shr:1"),
        0x13c => write!(out, "wave_ror:1"),
        0x140 => write!(out, "row_mirror"),
        0x141 => write!(out, "row_half_mirror"),
        0x142 => write!(out, "row_bcast:15"),
        0x143 => write!(out, "row_bcast:31"),
        0x150..=0x15f => write!(out, "row_newbcast:{}", c & 0xf),
        0x160..=0x16f => write!(out, "/* row_xmask is not supported on ASICs earlier than GFX10 */"),
        _ => write!(out, "/* Invalid dpp_ctrl value */"),
    };
}

/// A ds_swizzle_b32 offset as LLVM prints it: quad permutes (bit 15, bits 8..14 clear), or the bitmask mode's
/// SWAP, REVERSE and BROADCAST forms, else its five lane-id bits as each comes out of `((id & and) | or) ^ xor`
/// for id bit 0 and 1 (`0`, `1`, `p` kept, `i` inverted); any other value as a number.
fn swizzle(out: &mut String, off: u32) {
    if off & 0x8000 != 0 {
        if off & 0x7f00 != 0 {
            let _ = write!(out, "{off}");
        } else {
            let _ = write!(
                out,
                "swizzle(QUAD_PERM,{},{},{},{})",
                off & 3,
                (off >> 2) & 3,
                (off >> 4) & 3,
                (off >> 6) & 3
            );
        }
        return;
    }
    let and = off & 0x1f;
    let or = (off >> 5) & 0x1f;
    let xor = (off >> 10) & 0x1f;
    if and == 0x1f && or == 0 && xor.count_ones() == 1 {
        let _ = write!(out, "swizzle(SWAP,{xor})");
    } else if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
        let _ = write!(out, "swizzle(REVERSE,{})", xor + 1);
    } else {
        let group = 0x1f - and + 1;
        if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
            let _ = write!(out, "swizzle(BROADCAST,{group},{or})");
        } else {
            let (probe0, probe1) = (or ^ xor, (and | or) ^ xor);
            out.push_str("swizzle(BITMASK_PERM,\"");
            for i in (0..5).rev() {
                out.push(match (bit(probe0, i), bit(probe1, i)) {
                    (0, 0) => '0',
                    (1, 1) => '1',
                    (0, _) => 'p',
                    _ => 'i',
                });
            }
            out.push_str("\")");
        }
    }
}

fn mtbuf_format(dfmt: u32, nfmt: u32) -> String {
    const D: [&str; 16] = [
        "BUF_DATA_FORMAT_INVALID",
        "BUF_DATA_FORMAT_8",
        "BUF_DATA_FORMAT_16",
        "BUF_DATA_FORMAT_8_8",
        "BUF_DATA_FORMAT_32",
        "BUF_DATA_FORMAT_16_16",
        "BUF_DATA_FORMAT_10_11_11",
        "BUF_DATA_FORMAT_11_11_10",
        "BUF_DATA_FORMAT_10_10_10_2",
        "BUF_DATA_FORMAT_2_10_10_10",
        "BUF_DATA_FORMAT_8_8_8_8",
        "BUF_DATA_FORMAT_32_32",
        "BUF_DATA_FORMAT_16_16_16_16",
        "BUF_DATA_FORMAT_32_32_32",
        "BUF_DATA_FORMAT_32_32_32_32",
        "BUF_DATA_FORMAT_RESERVED_15",
    ];
    const N: [&str; 8] = [
        "BUF_NUM_FORMAT_UNORM",
        "BUF_NUM_FORMAT_SNORM",
        "BUF_NUM_FORMAT_USCALED",
        "BUF_NUM_FORMAT_SSCALED",
        "BUF_NUM_FORMAT_UINT",
        "BUF_NUM_FORMAT_SINT",
        "BUF_NUM_FORMAT_RESERVED_6",
        "BUF_NUM_FORMAT_FLOAT",
    ];
    if nfmt == 0 {
        D[dfmt as usize].to_string()
    } else if dfmt == 1 {
        N[nfmt as usize].to_string()
    } else {
        format!("{},{}", D[dfmt as usize], N[nfmt as usize])
    }
}

/// Is this target's table known? (re-exported for callers that only have a name)
pub fn target_supported(name: &str) -> bool {
    Target::from_name(name).is_some()
}
