//! Texel formats ([`Format`]): channel widths and number formats as the resource words give them, and the
//! conversion of texels to and from the values shaders see (sRGB included).

use crate::lanefn::{f16_to_f64, f64_to_f16};

/// How a channel's bits are read (`NUM_FORMAT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Num {
    Unorm = 0,
    Snorm = 1,
    Uscaled = 2,
    Sscaled = 3,
    Uint = 4,
    Sint = 5,
    Float = 7,
    Srgb = 9,
}

impl Num {
    fn from_bits(n: u32) -> Option<Num> {
        Some(match n {
            0 => Num::Unorm,
            1 => Num::Snorm,
            2 => Num::Uscaled,
            3 => Num::Sscaled,
            4 => Num::Uint,
            5 => Num::Sint,
            7 => Num::Float,
            9 => Num::Srgb,
            _ => return None,
        })
    }
    /// Whether the shader sees integers (not floats).
    pub fn integer(self) -> bool {
        matches!(self, Num::Uint | Num::Sint)
    }
}

/// A texel format: channels of equal width, little-endian, first channel lowest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// `DATA_FORMAT` of the descriptor.
    pub data: u32,
    pub num: Num,
    pub channels: u32,
    pub bits: u32,
}

/// Channel count and width of the `DATA_FORMAT`s wavejit emulates.
const DATA_FORMATS: [(u32, u32, u32); 9] = [
    (1, 1, 8),
    (2, 1, 16),
    (3, 2, 8),
    (4, 1, 32),
    (5, 2, 16),
    (10, 4, 8),
    (11, 2, 32),
    (12, 4, 16),
    (14, 4, 32),
];

/// Names of the `DATA_FORMAT`s, for messages.
pub(super) fn data_format_name(d: u32) -> &'static str {
    const NAMES: [&str; 22] = [
        "invalid",
        "8",
        "16",
        "8_8",
        "32",
        "16_16",
        "10_11_11",
        "11_11_10",
        "10_10_10_2",
        "2_10_10_10",
        "8_8_8_8",
        "32_32",
        "16_16_16_16",
        "32_32_32",
        "32_32_32_32",
        "reserved",
        "5_6_5",
        "1_5_5_5",
        "5_5_5_1",
        "4_4_4_4",
        "8_24",
        "24_8",
    ];
    NAMES.get(d as usize).copied().unwrap_or("unknown")
}

impl Format {
    /// The format of `DATA_FORMAT` `data` read as `NUM_FORMAT` `num`.
    pub fn new(data: u32, num: u32) -> Result<Format, String> {
        let &(_, channels, bits) = DATA_FORMATS
            .iter()
            .find(|f| f.0 == data)
            .ok_or_else(|| format!("image data format {data} ({}) is not emulated", data_format_name(data)))?;
        let num = Num::from_bits(num).ok_or_else(|| format!("image number format {num} is not emulated"))?;
        let ok = match num {
            Num::Float => bits >= 16,
            Num::Srgb => bits == 8,
            _ => true,
        };
        if !ok {
            return Err(format!(
                "image data format {} read as number format {num:?} is not emulated",
                data_format_name(data)
            ));
        }
        Ok(Format {
            data,
            num,
            channels,
            bits,
        })
    }
    /// The format with `channels` channels of `bits` each, if the hardware has one.
    pub fn of(channels: u32, bits: u32, num: Num) -> Option<Format> {
        let &(data, ..) = DATA_FORMATS.iter().find(|f| f.1 == channels && f.2 == bits)?;
        Format::new(data, num as u32).ok()
    }
    pub fn bytes(&self) -> u32 {
        self.channels * self.bits / 8
    }

    /// The texel in `raw` as four channel values (f32 bits, or integers for integer formats); channels the
    /// format lacks read 0, and the fourth reads one.
    pub fn decode(&self, raw: &[u8]) -> [u32; 4] {
        let one = self.one();
        let mut out = [0, 0, 0, one];
        let bytes = (self.bits / 8) as usize;
        for (c, o) in out.iter_mut().enumerate().take(self.channels as usize) {
            let mut b = [0u8; 4];
            b[..bytes].copy_from_slice(&raw[c * bytes..(c + 1) * bytes]);
            let r = u32::from_le_bytes(b);
            *o = self.decode_channel(r, c == 3);
        }
        out
    }

    fn decode_channel(&self, r: u32, alpha: bool) -> u32 {
        let w = self.bits;
        let max = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
        let signed = |r: u32| ((r << (32 - w)) as i32) >> (32 - w);
        match self.num {
            Num::Unorm => (r as f64 / max as f64) as f32,
            Num::Srgb if alpha => (r as f64 / max as f64) as f32,
            Num::Srgb => srgb_to_linear((r as f64 / max as f64) as f32),
            Num::Snorm => ((signed(r) as f64 / (max >> 1) as f64).max(-1.0)) as f32,
            Num::Uscaled => r as f32,
            Num::Sscaled => signed(r) as f32,
            Num::Uint => return r,
            Num::Sint => return signed(r) as u32,
            Num::Float if w == 16 => f16_to_f64(r as u16) as f32,
            Num::Float => return r,
        }
        .to_bits()
    }

    /// Channel value 1 as the shader sees it.
    pub fn one(&self) -> u32 {
        if self.num.integer() {
            1
        } else {
            1f32.to_bits()
        }
    }

    /// The bytes of a texel holding `v` (channel values as the shader gives them); values outside the format's
    /// range saturate, floats round to nearest even.
    pub fn encode(&self, v: [u32; 4], out: &mut [u8]) {
        let bytes = (self.bits / 8) as usize;
        for c in 0..self.channels as usize {
            let r = self.encode_channel(v[c], c == 3);
            out[c * bytes..(c + 1) * bytes].copy_from_slice(&r.to_le_bytes()[..bytes]);
        }
    }

    fn encode_channel(&self, v: u32, alpha: bool) -> u32 {
        let w = self.bits;
        let umax = if w == 32 {
            u32::MAX as f64
        } else {
            ((1u64 << w) - 1) as f64
        };
        let (smin, smax) = (-((1i64 << (w - 1)) as f64), ((1i64 << (w - 1)) - 1) as f64);
        let mask = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
        let f = f32::from_bits(v) as f64;
        // NaN converts to 0
        let sat = |x: f64, lo: f64, hi: f64| if x.is_nan() { 0.0 } else { x.clamp(lo, hi) };
        match self.num {
            Num::Unorm => (sat(f, 0.0, 1.0) * umax).round_ties_even() as u32,
            Num::Srgb => {
                let c = if alpha { f as f32 } else { linear_to_srgb(f as f32) };
                (sat(c as f64, 0.0, 1.0) * umax).round_ties_even() as u32
            }
            Num::Snorm => ((sat(f, -1.0, 1.0) * smax).round_ties_even() as i64 as u32) & mask,
            Num::Uscaled => sat(f.round_ties_even(), 0.0, umax) as u32,
            Num::Sscaled => (sat(f.round_ties_even(), smin, smax) as i64 as u32) & mask,
            Num::Uint => (v as u64).min(umax as u64) as u32,
            Num::Sint => ((v as i32 as i64).clamp(smin as i64, smax as i64) as u32) & mask,
            Num::Float if w == 16 => f64_to_f16(f32::from_bits(v) as f64) as u32,
            Num::Float => v,
        }
    }
}

fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(c: f32) -> f32 {
    if c.is_nan() {
        0.0
    } else if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}
