//! The SDWA and DPP forms of VOP1/VOP2/VOPC: their operands with sub-dword selects and modifiers, and the DPP
//! control spelled as LLVM does.

use std::fmt::Write as _;

use crate::encoding::{Encoding, Field};
use crate::table::{OperandKind, SrcType};

use super::values::{bit, is_constant, scalar_reg, sel_name, source, vector_reg};
use super::Printer;

impl Printer<'_> {
    pub(super) fn sdwa(&mut self) {
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
        // gfx942's fp8/bf8 to f32 conversions have clamp and omod but no destination select
        let f8_to_f32 = matches!(
            base,
            "v_cvt_f32_fp8" | "v_cvt_f32_bf8" | "v_cvt_pk_f32_fp8" | "v_cvt_pk_f32_bf8"
        );
        if enc != Encoding::Vopc {
            if self.e(13) == 1 {
                self.out.push_str(" clamp");
            }
            self.omod(self.e(14) | self.e(15) << 1);
        }
        if enc != Encoding::Vopc && !f8_to_f32 {
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

    pub(super) fn dpp(&mut self) {
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
