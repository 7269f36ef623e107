//! The modifiers each encoding prints after its operands (clamp, omod, op_sel, cbsz/abid/blgp, offsets,
//! cache bits, buffer formats, swizzles, image flags), and the data register count of image instructions.

use std::fmt::Write as _;

use crate::encoding::{Encoding, Field};

use super::values::bit;
use super::Printer;

impl Printer<'_> {
    pub(super) fn modifiers(&mut self, mai: bool) {
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
            // gfx950's v_permlane16/32_swap: the op_sel bits are DPP's fi (bit 0) and bound_ctrl (bit 1)
            Encoding::Vop3 if inst.info.name.starts_with("v_permlane") => {
                let opsel = self.m(Field::OpSel);
                if bit(opsel, 1) == 1 {
                    self.out.push_str(" bound_ctrl:1");
                }
                if bit(opsel, 0) == 1 {
                    self.out.push_str(" fi:1");
                }
            }
            Encoding::Vop3 => {
                if self.is_bitop3() {
                    let b = self.m(Field::Neg) | self.m(Field::Abs) << 3 | self.m(Field::Omod) << 6;
                    match b {
                        0 => {}
                        1..=10 => {
                            let _ = write!(self.out, " bitop3:{b}");
                        }
                        _ => {
                            let _ = write!(self.out, " bitop3:0x{b:x}");
                        }
                    }
                }
                let opsel = self.m(Field::OpSel);
                if opsel != 0 {
                    let mut bits: Vec<String> = (0..nsrc).map(|i| bit(opsel, i).to_string()).collect();
                    // a two-source conversion that also reads bit 2 (with bit 3, the byte or nibble written:
                    // gfx942's stochastic-rounding fp8/bf8 ones, gfx950's f16/bf16 to fp4): LLVM prints all four
                    if nsrc == 2 && inst.info.live[0] >> 13 & 1 == 1 {
                        bits.push(bit(opsel, 2).to_string());
                    }
                    bits.push(bit(opsel, 3).to_string());
                    let _ = write!(self.out, " op_sel:[{}]", bits.join(","));
                }
                if self.m(Field::Clamp) == 1 {
                    self.out.push_str(" clamp");
                }
                if !self.is_bitop3() {
                    self.omod(self.m(Field::Omod));
                }
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
                            swizzle(&mut self.out, off, inst.target);
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
                // buffer_store_lds_dword has its lds bit fixed (set), not a live modifier
                let lds_fixed = enc
                    .field_def(Field::Lds)
                    .is_some_and(|d| inst.info.fixed[d.dword as usize].1 & d.mask() != 0);
                if enc == Encoding::Mubuf && (self.m(Field::Lds) == 1 || lds_fixed) {
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
    pub(super) fn mimg_data_regs(&self) -> u32 {
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

    pub(super) fn omod(&mut self, omod: u32) {
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
}

/// A ds_swizzle_b32 offset as LLVM prints it: quad permutes (bit 15, bits 8..14 clear), or the bitmask mode's
/// SWAP, REVERSE and BROADCAST forms, else its five lane-id bits as each comes out of `((id & and) | or) ^ xor`
/// for id bit 0 and 1 (`0`, `1`, `p` kept, `i` inverted); any other value as a number.
fn swizzle(out: &mut String, off: u32, target: crate::table::Target) {
    // gfx950 (LLVM 22) names two more modes: FFT (bits 15:13 = 7) and ROTATE (6; direction bit 10, count 9:5)
    if target == crate::table::Target::Gfx950 && off >> 13 == 7 {
        let _ = write!(out, "swizzle(FFT,{})", off & 0x1f);
        return;
    }
    if target == crate::table::Target::Gfx950 && off >> 13 == 6 {
        let _ = write!(out, "swizzle(ROTATE,{},{})", off >> 10 & 1, off >> 5 & 0x1f);
        return;
    }
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
