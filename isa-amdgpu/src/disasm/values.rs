//! Spelling of operand values: scalar and vector register names, inline constants, literals and the sources
//! that may be any of them, as LLVM prints them.

use std::fmt::Write as _;

use crate::constants::{inline_float, inline_int, FloatWidth, FLOATS};
use crate::table::SrcType;

/// Name of a scalar register or special operand 0..=127 taken `count` at a time. Like LLVM's decoder, tuples
/// of SGPRs and TTMPs are aligned down (64-bit to even, wider to a multiple of 4).
pub(super) fn scalar_reg(out: &mut String, v: u32, count: u32) {
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

pub(super) fn vector_reg(out: &mut String, file: char, v: u32, count: u32) {
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
pub(super) fn immediate(out: &mut String, value: u64, ty: SrcType) {
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
pub(super) fn source(out: &mut String, v: u32, ty: SrcType, count: u32, literal: Option<u32>, vfile: char) {
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
pub(super) fn is_constant(v: u32) -> bool {
    matches!(v, 128..=208 | 240..=248 | 255)
}

pub(super) fn sel_name(sel: u32) -> &'static str {
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

pub(super) fn bit(x: u32, n: u32) -> u32 {
    (x >> n) & 1
}
