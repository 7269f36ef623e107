//! Inline constants: the source-operand values that stand for a constant instead of a register — 128..=208
//! the integers 0..=64 and -1..=-16, 240..=248 nine float constants whose bits depend on the operand's width.
//! One definition, read by the disassembler and by both engines.

/// The width an inline float constant takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatWidth {
    F16,
    F32,
    F64,
}

/// One inline float constant: its bits in each width and the text LLVM prints for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatConst {
    pub f16: u16,
    pub f32: u32,
    pub f64: u64,
    /// As printed for 16- and 32-bit operands.
    pub text: &'static str,
    /// As printed for 64-bit operands.
    pub text64: &'static str,
}

/// Operand values 240..=248: ±0.5, ±1.0, ±2.0, ±4.0 and 1/(2π).
pub const FLOATS: [FloatConst; 9] = [
    FloatConst {
        f16: 0x3800,
        f32: 0x3f00_0000,
        f64: 0x3fe0_0000_0000_0000,
        text: "0.5",
        text64: "0.5",
    },
    FloatConst {
        f16: 0xb800,
        f32: 0xbf00_0000,
        f64: 0xbfe0_0000_0000_0000,
        text: "-0.5",
        text64: "-0.5",
    },
    FloatConst {
        f16: 0x3c00,
        f32: 0x3f80_0000,
        f64: 0x3ff0_0000_0000_0000,
        text: "1.0",
        text64: "1.0",
    },
    FloatConst {
        f16: 0xbc00,
        f32: 0xbf80_0000,
        f64: 0xbff0_0000_0000_0000,
        text: "-1.0",
        text64: "-1.0",
    },
    FloatConst {
        f16: 0x4000,
        f32: 0x4000_0000,
        f64: 0x4000_0000_0000_0000,
        text: "2.0",
        text64: "2.0",
    },
    FloatConst {
        f16: 0xc000,
        f32: 0xc000_0000,
        f64: 0xc000_0000_0000_0000,
        text: "-2.0",
        text64: "-2.0",
    },
    FloatConst {
        f16: 0x4400,
        f32: 0x4080_0000,
        f64: 0x4010_0000_0000_0000,
        text: "4.0",
        text64: "4.0",
    },
    FloatConst {
        f16: 0xc400,
        f32: 0xc080_0000,
        f64: 0xc010_0000_0000_0000,
        text: "-4.0",
        text64: "-4.0",
    },
    FloatConst {
        f16: 0x3118,
        f32: 0x3e22_f983,
        f64: 0x3fc4_5f30_6dc9_c882,
        text: "0.15915494",
        text64: "0.15915494309189532",
    },
];

/// The integer of inline constant `v` (128..=192: 0..=64, 193..=208: -1..=-16).
pub const fn inline_int(v: u32) -> Option<i32> {
    match v {
        128..=192 => Some((v - 128) as i32),
        193..=208 => Some(-((v - 192) as i32)),
        _ => None,
    }
}

/// The bits of inline float constant `v` (240..=248) in `width`.
pub const fn inline_float(v: u32, width: FloatWidth) -> Option<u64> {
    if v < 240 || v > 248 {
        return None;
    }
    let c = &FLOATS[(v - 240) as usize];
    Some(match width {
        FloatWidth::F16 => c.f16 as u64,
        FloatWidth::F32 => c.f32 as u64,
        FloatWidth::F64 => c.f64,
    })
}

/// Inline constant `v` as an operand value: an integer sign-extended to 64 bits, or a float in `width`.
pub const fn inline_value(v: u32, width: FloatWidth) -> Option<u64> {
    match inline_int(v) {
        Some(i) => Some(i as i64 as u64),
        None => inline_float(v, width),
    }
}
