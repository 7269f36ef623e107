//! Images: the gfx9 image resource (T#, eight dwords) and sampler (S#, four dwords) as the hardware reads
//! them, texel formats, and the per-lane work of the MIMG instructions (load, store, their packed `_pck`
//! forms, atomics, sample, gather, size query). The functions here take a resource and coordinates and reach memory through [`Texels`], so the
//! engine (which checks every access) and the runtime's host-side image copies share one texel layout.
//!
//! Images are linear (swizzle mode 0): texel (x, y, z) of a level-0 image lives at
//! `base + ((z * height + y) * pitch + x) * bytes_per_texel`, where array layers take the place of z (of y
//! for 1-D arrays). Tiled swizzle modes, mipmaps, cube maps and depth compares are refused with a message
//! naming them.

use isa_amdgpu::table::AtomicOp;

use crate::lanefn::{f16_to_f64, f64_to_f16};

/// Memory as the image code sees it: checked reads and writes at device addresses.
pub trait Texels {
    type Error;
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), Self::Error>;
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), Self::Error>;
    /// Replaces the little-endian value of `bytes` (4 or 8) bytes at `address` with `f(old)` in one step and
    /// returns the old value. The default reads and writes, for memory no other agent touches meanwhile; the
    /// engine's memory does it as one host atomic.
    fn atomic(&mut self, address: u64, bytes: u32, f: &dyn Fn(u64) -> u64) -> Result<u64, Self::Error> {
        let mut b = [0u8; 8];
        let b = &mut b[..bytes as usize];
        self.read(address, b)?;
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        let old = u64::from_le_bytes(v);
        self.write(address, &f(old).to_le_bytes()[..bytes as usize])?;
        Ok(old)
    }
}

/// Resource types of the T# (`TYPE`, dword 3 bits 28-31).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    D1 = 8,
    D2 = 9,
    D3 = 10,
    D1Array = 12,
    D2Array = 13,
}

impl Dim {
    /// Coordinates that address a texel (array layer included).
    pub fn coords(self) -> usize {
        match self {
            Dim::D1 => 1,
            Dim::D2 | Dim::D1Array => 2,
            Dim::D3 | Dim::D2Array => 3,
        }
    }
    /// Coordinates that are filtered (the layer is not).
    fn filtered(self) -> usize {
        match self {
            Dim::D1 | Dim::D1Array => 1,
            Dim::D2 | Dim::D2Array => 2,
            Dim::D3 => 3,
        }
    }
    fn arrayed(self) -> bool {
        matches!(self, Dim::D1Array | Dim::D2Array)
    }
}

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
fn data_format_name(d: u32) -> &'static str {
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

/// `DST_SEL` values: which decoded channel (or constant) each returned component is.
pub const SEL_0: u8 = 0;
pub const SEL_1: u8 = 1;
pub const SEL_X: u8 = 4;
pub const SEL_Y: u8 = 5;
pub const SEL_Z: u8 = 6;
pub const SEL_W: u8 = 7;

/// The four channel selects in the low 12 bits of `word` (an image resource's word 3, a buffer resource's
/// word 3); 2 and 3 name nothing.
fn selects(word: u32) -> Result<[u8; 4], String> {
    let sel = [0, 1, 2, 3].map(|i| (word >> (3 * i) & 7) as u8);
    if sel.iter().any(|&s| s == 2 || s == 3) {
        return Err(format!("channel selects {sel:?} are not valid"));
    }
    Ok(sel)
}

/// The low 12 bits of a resource word holding channel selects `sel`.
pub fn select_bits(sel: [u8; 4]) -> u32 {
    sel.iter().enumerate().fold(0, |a, (i, &s)| a | (s as u32) << (3 * i))
}

/// A decoded image resource (T#).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resource {
    pub base: u64,
    pub dim: Dim,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    /// Depth of a 3-D image, layers of an array (1 otherwise).
    pub depth: u32,
    /// Row pitch in texels.
    pub pitch: u32,
    pub swizzle: [u8; 4],
}

impl Resource {
    /// Reads a T#; refuses what wavejit does not emulate.
    pub fn decode(t: [u32; 8]) -> Result<Resource, String> {
        let base = ((t[0] as u64) | ((t[1] as u64 & 0xff) << 32)) << 8;
        let format = Format::new(t[1] >> 20 & 0x3f, t[1] >> 26 & 0xf)?;
        let ty = t[3] >> 28;
        let dim = match ty {
            8 => Dim::D1,
            9 => Dim::D2,
            10 => Dim::D3,
            12 => Dim::D1Array,
            13 => Dim::D2Array,
            11 => return Err("cube images are not emulated".into()),
            14 | 15 => return Err("multisampled images are not emulated".into()),
            _ => return Err(format!("image resource type {ty} is not an image (is the T# valid?)")),
        };
        let (base_level, last_level) = (t[3] >> 12 & 0xf, t[3] >> 16 & 0xf);
        if base_level != 0 || last_level != 0 {
            return Err(format!(
                "mipmapped images (levels {base_level}..={last_level}) are not emulated"
            ));
        }
        let sw_mode = t[3] >> 20 & 0x1f;
        if sw_mode != 0 {
            return Err(format!(
                "tiled images (swizzle mode {sw_mode}) are not emulated; images are linear"
            ));
        }
        let width = (t[2] & 0x3fff) + 1;
        let height = if matches!(dim, Dim::D1 | Dim::D1Array) {
            1
        } else {
            (t[2] >> 14 & 0x3fff) + 1
        };
        let depth = if matches!(dim, Dim::D3) || dim.arrayed() {
            (t[4] & 0x1fff) + 1
        } else {
            1
        };
        let pitch = (t[4] >> 13 & 0xffff) + 1;
        if pitch < width {
            return Err(format!("image pitch {pitch} is below its width {width}"));
        }
        let swizzle = selects(t[3])?;
        Ok(Resource {
            base,
            dim,
            format,
            width,
            height,
            depth,
            pitch,
            swizzle,
        })
    }

    /// The T# describing this resource (the inverse of [`Resource::decode`]).
    pub fn encode(&self) -> [u32; 8] {
        let mut t = [0u32; 8];
        t[0] = (self.base >> 8) as u32;
        t[1] = (self.base >> 40) as u32 & 0xff | self.format.data << 20 | (self.format.num as u32) << 26;
        t[2] = (self.width - 1) | (self.height - 1) << 14;
        t[3] = select_bits(self.swizzle) | (self.dim as u32) << 28;
        t[4] = (self.depth - 1) | (self.pitch - 1) << 13;
        t
    }

    pub fn bytes_per_texel(&self) -> u64 {
        self.format.bytes() as u64
    }

    /// Address of texel `c` (x, y or layer, z or layer), which must be in range.
    pub fn texel_address(&self, c: [u32; 3]) -> u64 {
        let (x, y, z) = match self.dim {
            Dim::D1Array => (c[0], 0, c[1]),
            _ => (c[0], c[1], c[2]),
        };
        let row = (z as u64 * self.height as u64 + y as u64) * self.pitch as u64;
        self.base + (row + x as u64) * self.bytes_per_texel()
    }

    /// Extent of each addressing coordinate (x, y, z/layer).
    fn extent(&self) -> [u32; 3] {
        match self.dim {
            Dim::D1Array => [self.width, self.depth, 1],
            _ => [self.width, self.height, self.depth],
        }
    }

    /// Whether integer texel coordinates are inside the image.
    pub fn contains(&self, c: [u32; 3]) -> bool {
        let e = self.extent();
        (0..self.dim.coords()).all(|i| c[i] < e[i])
    }

    /// The texel at `c` as the shader sees it (channel selects applied); `None` for the border.
    fn fetch<M: Texels>(&self, mem: &mut M, c: Option<[u32; 3]>) -> Result<Option<[u32; 4]>, M::Error> {
        let Some(c) = c else { return Ok(None) };
        let mut raw = [0u8; 16];
        let raw = &mut raw[..self.format.bytes() as usize];
        mem.read(self.texel_address(c), raw)?;
        Ok(Some(self.select(self.format.decode(raw))))
    }

    fn select(&self, v: [u32; 4]) -> [u32; 4] {
        self.swizzle.map(|s| match s {
            SEL_0 => 0,
            SEL_1 => self.format.one(),
            s => v[(s - SEL_X) as usize],
        })
    }

    /// Inverse of the channel selects for stores: the decoded channels that returned components came from.
    fn unselect(&self, v: [u32; 4]) -> [u32; 4] {
        let mut out = [0u32; 4];
        for (i, &s) in self.swizzle.iter().enumerate() {
            if s >= SEL_X {
                out[(s - SEL_X) as usize] = v[i];
            }
        }
        out
    }

    /// `image_load`: the texel at integer coordinates, zero outside the image.
    pub fn load<M: Texels>(&self, mem: &mut M, c: [u32; 3]) -> Result<[u32; 4], M::Error> {
        if !self.contains(c) {
            return Ok([0; 4]);
        }
        Ok(self.fetch(mem, Some(c))?.unwrap_or([0; 4]))
    }

    /// `image_store`: writes the texel at integer coordinates; stores outside the image are dropped.
    pub fn store<M: Texels>(&self, mem: &mut M, c: [u32; 3], v: [u32; 4]) -> Result<(), M::Error> {
        if !self.contains(c) {
            return Ok(());
        }
        let mut raw = [0u8; 16];
        let raw = &mut raw[..self.format.bytes() as usize];
        self.format.encode(self.unselect(v), raw);
        mem.write(self.texel_address(c), raw)
    }

    /// `image_load_pck` (`_sgn`): the raw bits of the channels `dmask` enables at integer coordinates `c`, with
    /// no format conversion and no channel selects, packed low channel first into dwords (channels of 8, 16 or
    /// 32 bits never straddle one); `sign` fills the bits above the last channel with its sign bit, else they are
    /// zero ([`ImageInst::result_regs`] counts the dwords). Zeros outside the image.
    pub fn load_packed<M: Texels>(
        &self,
        mem: &mut M,
        c: [u32; 3],
        dmask: u32,
        sign: bool,
    ) -> Result<[u32; 4], M::Error> {
        let bits = self.format.bits;
        let mut out = [0u32; 4];
        if !self.contains(c) {
            return Ok(out);
        }
        let mut raw = [0u8; 16];
        let raw = &mut raw[..self.format.bytes() as usize];
        mem.read(self.texel_address(c), raw)?;
        let bytes = (bits / 8) as usize;
        let mut top = 0;
        for (k, ch) in (0..self.format.channels).filter(|ch| dmask >> ch & 1 == 1).enumerate() {
            let mut b = [0u8; 4];
            b[..bytes].copy_from_slice(&raw[ch as usize * bytes..(ch as usize + 1) * bytes]);
            let at = k as u32 * bits;
            out[(at / 32) as usize] |= u32::from_le_bytes(b) << (at % 32);
            top = at + bits;
        }
        if sign && top % 32 != 0 && out[(top / 32) as usize] >> (top % 32 - 1) & 1 == 1 {
            out[(top / 32) as usize] |= u32::MAX << (top % 32);
        }
        Ok(out)
    }

    /// `image_store_pck`: writes the texel at integer coordinates `c` from dwords packed as
    /// [`Resource::load_packed`] reads them, with no format conversion; channels `dmask` does not enable are
    /// written 0 (as `image_store` writes the components it is not given); stores outside the image are dropped.
    pub fn store_packed<M: Texels>(&self, mem: &mut M, c: [u32; 3], dmask: u32, data: &[u32]) -> Result<(), M::Error> {
        if !self.contains(c) {
            return Ok(());
        }
        let bits = self.format.bits;
        let bytes = (bits / 8) as usize;
        let mut raw = [0u8; 16];
        let raw = &mut raw[..self.format.bytes() as usize];
        for (k, ch) in (0..self.format.channels).filter(|ch| dmask >> ch & 1 == 1).enumerate() {
            let at = k as u32 * bits;
            let v = data.get((at / 32) as usize).copied().unwrap_or(0) >> (at % 32);
            raw[ch as usize * bytes..(ch as usize + 1) * bytes].copy_from_slice(&v.to_le_bytes()[..bytes]);
        }
        mem.write(self.texel_address(c), raw)
    }

    /// `image_atomic_*`: the atomic `op` on the texel at integer coordinates `c` as one 32- or 64-bit integer (the
    /// width of the texel, checked by [`ImageInst::check`]), its operands from `data` (compare-and-swap: the new
    /// value, then the value to compare with, each of the texel's width; 64-bit values low dword first), by the
    /// one definition of atomic arithmetic ([`crate::rules::atomic`], [`crate::rules::atomic2`]). Returns the
    /// texel's old value as dwords. Outside the image nothing changes and it returns 0, as a load reads there
    /// (the guides leave this case open).
    pub fn atomic<M: Texels>(
        &self,
        mem: &mut M,
        c: [u32; 3],
        op: AtomicOp,
        data: &[u32],
    ) -> Result<[u32; 4], M::Error> {
        if !self.contains(c) {
            return Ok([0; 4]);
        }
        let bytes = self.format.bytes();
        let d = |i: usize| data.get(i).copied().unwrap_or(0) as u64;
        let (x, y) = if bytes == 8 {
            (d(1) << 32 | d(0), d(3) << 32 | d(2))
        } else {
            (d(0), d(1))
        };
        let bits = bytes * 8;
        let f = |old: u64| {
            match op {
                AtomicOp::CmpSwap => crate::rules::atomic2(op, old, y, x, bits),
                _ => crate::rules::atomic(op, old, x, bits),
            }
            .expect("an image atomic the table names")
        };
        let old = mem.atomic(self.texel_address(c), bytes, &f)?;
        Ok([old as u32, (old >> 32) as u32, 0, 0])
    }

    /// `image_get_resinfo` at mip level `mip`: width, height, depth or layers, level count.
    pub fn size_info(&self, mip: u32) -> [u32; 4] {
        let e = self.extent();
        if mip != 0 {
            return [0, 0, 0, 1];
        }
        match self.dim {
            Dim::D1 => [e[0], 0, 0, 1],
            Dim::D1Array => [e[0], e[1], 0, 1],
            Dim::D2 => [e[0], e[1], 0, 1],
            Dim::D2Array | Dim::D3 => [e[0], e[1], e[2], 1],
        }
    }
}

/// Texture addressing modes (`CLAMP_X/Y/Z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    Repeat = 0,
    Mirror = 1,
    ClampLast = 2,
    MirrorOnceLast = 3,
    ClampHalfBorder = 4,
    MirrorOnceHalfBorder = 5,
    ClampBorder = 6,
    MirrorOnceBorder = 7,
}

impl Wrap {
    fn from_bits(b: u32) -> Wrap {
        [
            Wrap::Repeat,
            Wrap::Mirror,
            Wrap::ClampLast,
            Wrap::MirrorOnceLast,
            Wrap::ClampHalfBorder,
            Wrap::MirrorOnceHalfBorder,
            Wrap::ClampBorder,
            Wrap::MirrorOnceBorder,
        ][(b & 7) as usize]
    }

    /// Integer texel index `i` of a coordinate with `n` texels; `None` reads the border.
    fn apply(self, i: i64, n: u32) -> Option<u32> {
        let n = n as i64;
        let r = match self {
            Wrap::Repeat => i.rem_euclid(n),
            Wrap::Mirror => {
                let m = i.rem_euclid(2 * n);
                if m >= n {
                    2 * n - 1 - m
                } else {
                    m
                }
            }
            Wrap::ClampLast => i.clamp(0, n - 1),
            Wrap::MirrorOnceLast => (if i < 0 { -1 - i } else { i }).min(n - 1),
            Wrap::ClampHalfBorder | Wrap::ClampBorder => return (0..n).contains(&i).then_some(i as u32),
            Wrap::MirrorOnceHalfBorder | Wrap::MirrorOnceBorder => {
                let m = if i < 0 { -1 - i } else { i };
                return (m < n).then_some(m as u32);
            }
        };
        Some(r as u32)
    }
}

/// Border colours (`BORDER_COLOR_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Border {
    TransparentBlack = 0,
    OpaqueBlack = 1,
    OpaqueWhite = 2,
}

/// A decoded sampler (S#).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    pub wrap: [Wrap; 3],
    /// Coordinates are texel positions, not 0..1.
    pub unnormalized: bool,
    /// Bilinear (else nearest) filtering.
    pub linear: bool,
    pub border: Border,
}

impl Sampler {
    pub fn decode(s: [u32; 4]) -> Result<Sampler, String> {
        let w = |i: u32| Wrap::from_bits(s[0] >> (3 * i));
        if s[0] >> 12 & 7 != 0 {
            return Err("depth-compare samplers are not emulated".into());
        }
        let (mag, min) = (s[2] >> 20 & 3, s[2] >> 22 & 3);
        if mag > 1 || min > 1 {
            return Err(format!("anisotropic filtering (filters {mag}, {min}) is not emulated"));
        }
        if mag != min {
            return Err("different magnification and minification filters are not emulated".into());
        }
        let border = match s[3] >> 30 {
            0 => Border::TransparentBlack,
            1 => Border::OpaqueBlack,
            2 => Border::OpaqueWhite,
            _ => return Err("border colours from the border colour table are not emulated".into()),
        };
        Ok(Sampler {
            wrap: [w(0), w(1), w(2)],
            unnormalized: s[0] >> 15 & 1 == 1,
            linear: mag == 1,
            border,
        })
    }

    /// The S# describing this sampler.
    pub fn encode(&self) -> [u32; 4] {
        let wrap = self
            .wrap
            .iter()
            .enumerate()
            .fold(0, |a, (i, &w)| a | (w as u32) << (3 * i));
        let f = self.linear as u32;
        [
            wrap | (self.unnormalized as u32) << 15,
            0xfff << 12,
            f << 20 | f << 22,
            (self.border as u32) << 30,
        ]
    }

    fn border_value(&self, format: &Format) -> [u32; 4] {
        let one = format.one();
        match self.border {
            Border::TransparentBlack => [0; 4],
            Border::OpaqueBlack => [0, 0, 0, one],
            Border::OpaqueWhite => [one; 4],
        }
    }
}

/// Sub-texel steps of sampling positions.
const SUBTEXELS: f32 = 256.0;

/// Which texels `image_sample` / `image_gather4` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// Filtered colour.
    Color,
    /// Channel `n` of the four texels of the bilinear footprint.
    Gather(usize),
}

impl Resource {
    /// `image_sample` (or `image_gather4`) at float coordinates `c` (layer last for arrays), with texel
    /// `offsets` added (the `_o` forms).
    pub fn sample<M: Texels>(
        &self,
        mem: &mut M,
        s: &Sampler,
        unnormalized: bool,
        c: [f32; 3],
        offsets: [i32; 3],
        kind: Sample,
    ) -> Result<[u32; 4], M::Error> {
        let e = self.extent();
        let nf = self.dim.filtered();
        let layer = self.dim.arrayed().then(|| {
            let l = c[nf].round_ties_even();
            if l.is_nan() {
                0
            } else {
                l.clamp(0.0, (e[nf] - 1) as f32) as u32
            }
        });
        let unnorm = unnormalized || s.unnormalized;
        // texel-space position of each filtered coordinate, in the sampler's fixed point (8 fractional bits, so
        // a coordinate a rounding error off a texel edge lands on it, and filter weights are multiples of 1/256)
        let pos: Vec<f32> = (0..nf)
            .map(|i| {
                let p = if unnorm { c[i] } else { c[i] * e[i] as f32 };
                (p * SUBTEXELS).round_ties_even() / SUBTEXELS
            })
            .collect();
        let linear = s.linear || matches!(kind, Sample::Gather(_));
        // (first texel, weight of the second) along each axis
        let axes: Vec<(i64, f32)> = pos
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                // far outside any image: keep the arithmetic finite (every addressing mode gives the same texel)
                let p = if p.is_nan() {
                    0.0
                } else {
                    p.clamp(-16_777_216.0, 16_777_216.0)
                };
                if linear {
                    let q = p - 0.5;
                    (q.floor() as i64 + offsets[i] as i64, q - q.floor())
                } else {
                    (p.floor() as i64 + offsets[i] as i64, 0.0)
                }
            })
            .collect();
        let corners = if linear { 1 << nf } else { 1 };
        let mut texels = [[0u32; 4]; 8];
        let mut weights = [0f32; 8];
        for (k, (t, w)) in texels.iter_mut().zip(weights.iter_mut()).enumerate().take(corners) {
            let mut at = [0u32; 3];
            let mut weight = 1.0f32;
            let mut inside = true;
            for (i, &(first, frac)) in axes.iter().enumerate() {
                let second = k >> i & 1 == 1;
                weight *= if second { frac } else { 1.0 - frac };
                match s.wrap[i].apply(first + second as i64, e[i]) {
                    Some(v) => at[i] = v,
                    None => inside = false,
                }
            }
            if let Some(l) = layer {
                at[nf] = l;
            }
            *t = match self.fetch(mem, inside.then_some(at))? {
                Some(v) => v,
                None => self.select(s.border_value(&self.format)),
            };
            *w = weight;
        }
        Ok(match kind {
            // gather order: (i0, j1), (i1, j1), (i1, j0), (i0, j0)
            Sample::Gather(ch) if nf == 2 => [texels[2][ch], texels[3][ch], texels[1][ch], texels[0][ch]],
            Sample::Gather(ch) => [texels[0][ch], texels[1][ch], texels[0][ch], texels[1][ch]],
            Sample::Color if !linear || self.format.num.integer() => texels[0],
            Sample::Color => {
                let mut out = [0f32; 4];
                for (t, &w) in texels.iter().zip(weights.iter()).take(corners) {
                    for (o, &v) in out.iter_mut().zip(t.iter()) {
                        *o += w * f32::from_bits(v);
                    }
                }
                out.map(f32::to_bits)
            }
        })
    }
}

/// What an MIMG instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    Load,
    Store,
    Sample,
    Gather,
    ResInfo,
    /// `image_atomic_*`, the operation from the table's `atomic` column.
    Atomic(AtomicOp),
}

/// An MIMG instruction as the per-lane work needs it: its kind, which address registers it reads around the
/// coordinates, and its data fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageInst {
    pub kind: ImageKind,
    /// `_mip` loads and stores: a mip level after the coordinates.
    pub mip: bool,
    /// `_o`: packed texel offsets first.
    pub offsets: bool,
    /// `_b`: an LOD bias before the coordinates.
    pub bias: bool,
    /// `_d`, `_cd`: derivatives before the coordinates.
    pub derivatives: bool,
    /// `_l`, `_cl`: an LOD or LOD clamp after the coordinates.
    pub lod: bool,
    pub dmask: u32,
    /// Data are 16-bit halves, two to a register.
    pub d16: bool,
    /// The `unorm` bit: coordinates are texel positions.
    pub unorm: bool,
    /// `_pck` loads and stores: channels move as raw bits packed into dwords ([`Resource::load_packed`]).
    pub packed: bool,
    /// `_pck_sgn` loads: the bits above the last packed channel copy its sign.
    pub sign: bool,
    /// The `glc` bit: an atomic returns the texel's old value.
    pub glc: bool,
}

/// The most address registers an emulated MIMG form reads (offsets, bias, 3-D derivatives, three coordinates
/// and an LOD).
pub const MAX_ADDRESS: usize = 12;

impl ImageInst {
    /// The instruction `op` (its table row's `atomic` column for an image atomic) with its DMASK, D16, UNORM and
    /// GLC fields; `Err` names what is not emulated. The form each opcode names is worked out once, the first
    /// time any image instruction runs.
    pub fn of(
        op: isa_amdgpu::Opcode,
        atomic: Option<AtomicOp>,
        dmask: u32,
        d16: bool,
        unorm: bool,
        glc: bool,
    ) -> Result<ImageInst, &'static str> {
        static FORMS: std::sync::OnceLock<Vec<Result<ImageInst, &'static str>>> = std::sync::OnceLock::new();
        let forms = FORMS.get_or_init(|| {
            isa_amdgpu::Opcode::ALL
                .iter()
                .map(|o| Self::parse(o.mnemonic()))
                .collect()
        });
        let mut inst = forms
            .get(op as usize)
            .copied()
            .unwrap_or(Err("this image instruction"))?;
        if let ImageKind::Atomic(_) = inst.kind {
            inst.kind = ImageKind::Atomic(atomic.ok_or("an image atomic without its operation in the table")?);
        }
        (inst.dmask, inst.d16, inst.unorm, inst.glc) = (dmask, d16, unorm, glc);
        if inst.kind == ImageKind::Gather && dmask.count_ones() != 1 {
            return Err("image_gather4 with a DMASK of other than one channel");
        }
        // the ISA guides allow D16 only with sampling, gathers and the converting loads and stores
        if d16 && (inst.packed || matches!(inst.kind, ImageKind::Atomic(_))) {
            return Err("D16 with an image atomic or a packed (_pck) load or store");
        }
        Ok(inst)
    }

    /// The form a mnemonic names (fields zero); `Err` names what is not emulated.
    fn parse(name: &str) -> Result<ImageInst, &'static str> {
        let (dmask, d16, unorm) = (0, false, false);
        let plain = |kind, mip| ImageInst {
            kind,
            mip,
            offsets: false,
            bias: false,
            derivatives: false,
            lod: false,
            dmask,
            d16,
            unorm,
            packed: false,
            sign: false,
            glc: false,
        };
        let packed = |kind, mip, sign| ImageInst {
            packed: true,
            sign,
            ..plain(kind, mip)
        };
        let (kind, rest) = match name {
            "image_load" => return Ok(plain(ImageKind::Load, false)),
            "image_load_mip" => return Ok(plain(ImageKind::Load, true)),
            "image_store" => return Ok(plain(ImageKind::Store, false)),
            "image_store_mip" => return Ok(plain(ImageKind::Store, true)),
            "image_get_resinfo" => return Ok(plain(ImageKind::ResInfo, true)),
            "image_load_pck" => return Ok(packed(ImageKind::Load, false, false)),
            "image_load_pck_sgn" => return Ok(packed(ImageKind::Load, false, true)),
            "image_load_mip_pck" => return Ok(packed(ImageKind::Load, true, false)),
            "image_load_mip_pck_sgn" => return Ok(packed(ImageKind::Load, true, true)),
            "image_store_pck" => return Ok(packed(ImageKind::Store, false, false)),
            "image_store_mip_pck" => return Ok(packed(ImageKind::Store, true, false)),
            // the operation comes from the table row ([`ImageInst::of`]); swap stands for it here
            _ if name.starts_with("image_atomic") => return Ok(plain(ImageKind::Atomic(AtomicOp::Swap), false)),
            _ if name.starts_with("image_get_lod") => return Err("image_get_lod"),
            _ => match (name.strip_prefix("image_sample"), name.strip_prefix("image_gather4")) {
                (Some(rest), _) => (ImageKind::Sample, rest),
                (_, Some(rest)) => (ImageKind::Gather, rest),
                _ => return Err("this image instruction"),
            },
        };
        let mut op = plain(kind, false);
        for part in rest.split('_').filter(|p| !p.is_empty()) {
            match part {
                "o" => op.offsets = true,
                "b" => op.bias = true,
                "d" | "cd" => op.derivatives = true,
                "l" | "cl" => op.lod = true,
                "lz" => {}
                "c" => return Err("depth-compare sampling (_c)"),
                _ => return Err("this sampling form"),
            }
        }
        Ok(op)
    }

    /// Components the instruction moves: one per DMASK bit, or the four texels of a gather.
    fn components(&self) -> usize {
        if self.kind == ImageKind::Gather {
            4
        } else {
            (self.dmask & 0xf).count_ones() as usize
        }
    }

    /// Data registers a store reads or another form writes.
    pub fn data_regs(&self) -> usize {
        let n = self.components();
        if self.d16 {
            n.div_ceil(2)
        } else {
            n
        }
    }

    /// Data registers written for a lane of `r`: none by stores, nor by atomics without GLC; an atomic's old value
    /// (one dword, two for a 64-bit texel); the dwords a packed load's channels fill (VDATA registers past them
    /// keep their values: the guides say nothing of them); otherwise [`ImageInst::data_regs`].
    pub fn result_regs(&self, r: &Resource) -> usize {
        match self.kind {
            ImageKind::Store => 0,
            ImageKind::Atomic(_) if !self.glc => 0,
            ImageKind::Atomic(_) => r.format.bytes() as usize / 4,
            ImageKind::Load if self.packed => {
                let n = (0..r.format.channels).filter(|c| self.dmask >> c & 1 == 1).count() as u32;
                (n * r.format.bits).div_ceil(32) as usize
            }
            _ => self.data_regs(),
        }
    }

    /// Whether the instruction may run on resource `r`, as the ISA guides' image chapter states: atomics work on
    /// one 32- or 64-bit integer per texel (wavejit: formats 32 and 32_32, UINT or SINT), with the DMASK that
    /// counts their data dwords (32-bit: 0x1, compare-and-swap 0x3; 64-bit: 0x3, compare-and-swap 0xf) and
    /// UNORM set. `Err` says what is wrong.
    pub fn check(&self, r: &Resource) -> Result<(), String> {
        let ImageKind::Atomic(op) = self.kind else {
            return Ok(());
        };
        let f = &r.format;
        if !(f.num.integer() && (f.data == 4 || f.data == 11)) {
            return Err(format!(
                "image atomics work on 32- or 64-bit integer texels (data format 32 or 32_32, UINT or SINT); this image is {} {:?}",
                data_format_name(f.data),
                f.num
            ));
        }
        let legal = match (f.bytes(), op == AtomicOp::CmpSwap) {
            (4, false) => 0x1,
            (4, true) | (8, false) => 0x3,
            _ => 0xf,
        };
        if self.dmask != legal {
            return Err(format!(
                "DMASK {:#x} is not valid for this atomic on a {}-bit texel: the ISA guide allows {legal:#x}",
                self.dmask,
                f.bytes() * 8
            ));
        }
        if !self.unorm {
            return Err("image atomics need UNORM set (the ISA guide requires it for image stores and atomics)".into());
        }
        Ok(())
    }

    /// Components moved to or from registers `regs` (d16 halves unpacked).
    fn unpack(&self, regs: &[u32], format: &Format) -> [u32; 4] {
        let mut out = [0u32; 4];
        let mut k = 0;
        for (c, o) in out.iter_mut().enumerate() {
            if self.dmask >> c & 1 == 0 {
                continue;
            }
            *o = if self.d16 {
                let h = (regs.get(k / 2).copied().unwrap_or(0) >> (16 * (k % 2))) & 0xffff;
                if format.num == Num::Sint {
                    h as u16 as i16 as i32 as u32
                } else if format.num.integer() {
                    h
                } else {
                    (f16_to_f64(h as u16) as f32).to_bits()
                }
            } else {
                regs.get(k).copied().unwrap_or(0)
            };
            k += 1;
        }
        out
    }

    /// Registers holding `values` (already in component order), d16 halves packed.
    fn pack(&self, values: &[u32], format: &Format) -> [u32; 4] {
        let mut out = [0u32; 4];
        for (k, &v) in values.iter().enumerate() {
            if self.d16 {
                let h = if format.num.integer() {
                    v & 0xffff
                } else {
                    f64_to_f16(f32::from_bits(v) as f64) as u32
                };
                out[k / 2] |= h << (16 * (k % 2));
            } else {
                out[k] = v;
            }
        }
        out
    }

    /// One lane: `addr` are its address registers from VADDR on, `data` its store data; returns its result
    /// registers (meaningless for stores).
    pub fn lane<M: Texels>(
        &self,
        mem: &mut M,
        r: &Resource,
        s: Option<&Sampler>,
        addr: &[u32],
        data: &[u32],
    ) -> Result<[u32; 4], M::Error> {
        let nc = r.dim.coords();
        let nf = r.dim.filtered();
        let mut at = 0;
        let offsets = if self.offsets {
            at += 1;
            // six bits per coordinate, signed
            let o = addr[0];
            [0, 1, 2].map(|i| ((o >> (8 * i) & 0x3f) << 26) as i32 >> 26)
        } else {
            [0; 3]
        };
        at += self.bias as usize + if self.derivatives { 2 * nf } else { 0 };
        let coords = &addr[at..at + nc];
        let mip = if self.mip { addr[at + nc] } else { 0 };
        let values: [u32; 4] = match self.kind {
            ImageKind::ResInfo => r.size_info(addr[0]),
            ImageKind::Atomic(op) => {
                let mut c = [0u32; 3];
                c[..nc].copy_from_slice(coords);
                return r.atomic(mem, c, op, data);
            }
            ImageKind::Load | ImageKind::Store if self.packed => {
                let mut c = [0u32; 3];
                c[..nc].copy_from_slice(coords);
                // one level: other levels read zeros and drop stores, as the converting forms do
                if self.kind == ImageKind::Store {
                    if mip == 0 {
                        r.store_packed(mem, c, self.dmask, data)?;
                    }
                    return Ok([0; 4]);
                }
                return Ok(if mip == 0 {
                    r.load_packed(mem, c, self.dmask, self.sign)?
                } else {
                    [0; 4]
                });
            }
            ImageKind::Load | ImageKind::Store => {
                let mut c = [0u32; 3];
                c[..nc].copy_from_slice(coords);
                if self.kind == ImageKind::Store {
                    if mip == 0 {
                        r.store(mem, c, self.unpack(data, &r.format))?;
                    }
                    return Ok([0; 4]);
                }
                if mip != 0 {
                    [0; 4]
                } else {
                    r.load(mem, c)?
                }
            }
            ImageKind::Sample | ImageKind::Gather => {
                let s = s.expect("sampling forms have a sampler");
                let mut c = [0f32; 3];
                for (o, &v) in c.iter_mut().zip(coords) {
                    *o = f32::from_bits(v);
                }
                let kind = if self.kind == ImageKind::Gather {
                    Sample::Gather(self.dmask.trailing_zeros() as usize)
                } else {
                    Sample::Color
                };
                r.sample(mem, s, self.unorm, c, offsets, kind)?
            }
        };
        let picked: Vec<u32> = if self.kind == ImageKind::Gather {
            values.to_vec()
        } else {
            (0..4).filter(|c| self.dmask >> c & 1 == 1).map(|c| values[c]).collect()
        };
        let format = if self.kind == ImageKind::ResInfo {
            Format::of(1, 32, Num::Uint).expect("r32 uint")
        } else {
            r.format
        };
        Ok(self.pack(&picked, &format))
    }
}

/// A typed buffer access (`buffer_load_format_*`, `buffer_store_format_*`): the format and channel selects come
/// from word 3 of the buffer resource (V#).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatAccess {
    pub load: bool,
    /// Components moved (x, xy, xyz, xyzw).
    pub components: u32,
    /// Data are 16-bit halves, two to a register.
    pub d16: bool,
}

impl FormatAccess {
    /// The typed access the table's `mem` column describes (a `buffer_{load,store}_format_*` row); `Err` names
    /// what is not emulated.
    pub fn of(mem: isa_amdgpu::table::MemAccess) -> Result<FormatAccess, &'static str> {
        use isa_amdgpu::table::{MemDir, MemFlags};
        if !mem.flags.contains(MemFlags::FORMAT) || !matches!(mem.dir, MemDir::Load | MemDir::Store) {
            return Err("this buffer instruction");
        }
        // d16_hi forms move one 16-bit component as d16 forms do; the caller puts it in the high half
        let d16 = mem.flags.contains(MemFlags::D16_LO) || mem.flags.contains(MemFlags::D16_HI);
        let components = mem.bytes as u32 / if d16 { 2 } else { 4 };
        Ok(FormatAccess {
            load: mem.dir == MemDir::Load,
            components,
            d16,
        })
    }

    /// Registers of data moved.
    pub fn data_regs(&self) -> usize {
        let n = self.components as usize;
        if self.d16 {
            n.div_ceil(2)
        } else {
            n
        }
    }

    /// The format and channel selects of buffer resource word 3.
    pub fn format(word3: u32) -> Result<(Format, [u8; 4]), String> {
        let format = Format::new(word3 >> 15 & 0xf, word3 >> 12 & 7)?;
        Ok((format, selects(word3)?))
    }

    fn as_image(&self) -> ImageInst {
        let dmask = (1 << self.components) - 1;
        ImageInst {
            kind: if self.load { ImageKind::Load } else { ImageKind::Store },
            mip: false,
            offsets: false,
            bias: false,
            derivatives: false,
            lod: false,
            dmask,
            d16: self.d16,
            unorm: true,
            packed: false,
            sign: false,
            glc: false,
        }
    }

    /// One lane: the element at `address`; returns its result registers (meaningless for stores).
    pub fn lane<M: Texels>(
        &self,
        mem: &mut M,
        format: &Format,
        swizzle: [u8; 4],
        address: u64,
        data: &[u32],
    ) -> Result<[u32; 4], M::Error> {
        let r = Resource {
            base: address,
            dim: Dim::D1,
            format: *format,
            width: 1,
            height: 1,
            depth: 1,
            pitch: 1,
            swizzle,
        };
        let op = self.as_image();
        if self.load {
            let v = r.load(mem, [0; 3])?;
            Ok(op.pack(&v[..self.components as usize], format))
        } else {
            r.store(mem, [0; 3], op.unpack(data, format))?;
            Ok([0; 4])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Host(Vec<u8>);
    impl Texels for Host {
        type Error = String;
        fn read(&mut self, a: u64, buf: &mut [u8]) -> Result<(), String> {
            let a = a as usize;
            let s = self.0.get(a..a + buf.len()).ok_or(format!("read at {a}"))?;
            buf.copy_from_slice(s);
            Ok(())
        }
        fn write(&mut self, a: u64, data: &[u8]) -> Result<(), String> {
            let a = a as usize;
            self.0
                .get_mut(a..a + data.len())
                .ok_or(format!("write at {a}"))?
                .copy_from_slice(data);
            Ok(())
        }
    }

    fn rgba8(w: u32, h: u32) -> Resource {
        Resource {
            base: 0,
            dim: Dim::D2,
            format: Format::of(4, 8, Num::Unorm).unwrap(),
            width: w,
            height: h,
            depth: 1,
            pitch: w + 3,
            swizzle: [SEL_X, SEL_Y, SEL_Z, SEL_W],
        }
    }

    #[test]
    fn descriptors_round_trip() {
        let r = Resource {
            base: 0x7f12_3456_7800,
            ..rgba8(640, 480)
        };
        assert_eq!(Resource::decode(r.encode()), Ok(r));
        let s = Sampler {
            wrap: [Wrap::Mirror, Wrap::ClampBorder, Wrap::Repeat],
            unnormalized: true,
            linear: true,
            border: Border::OpaqueWhite,
        };
        assert_eq!(Sampler::decode(s.encode()), Ok(s));
        // the fields device code reads directly (the device library's image queries)
        let t = r.encode();
        assert_eq!((t[2] >> 14 & 0x3fff) + 1, 480);
        assert_eq!(s.encode()[0] & 0x8000, 0x8000);
        assert_eq!(s.encode()[2] & 0x10_0000, 0x10_0000);
    }

    #[test]
    fn unsupported_descriptors_are_named() {
        let mut t = rgba8(4, 4).encode();
        t[3] |= 3 << 16;
        assert!(Resource::decode(t).unwrap_err().contains("mipmapped"));
        let mut t = rgba8(4, 4).encode();
        t[1] = t[1] & !(0x3f << 20) | 6 << 20;
        assert!(Resource::decode(t).unwrap_err().contains("10_11_11"));
        assert!(Resource::decode([0; 8]).is_err());
    }

    #[test]
    fn formats_round_trip_with_saturation_and_rounding() {
        let f = Format::of(1, 8, Num::Unorm).unwrap();
        let mut b = [0u8; 1];
        for (x, want) in [(0.5f32, 128u8), (1.7, 255), (-3.0, 0), (f32::NAN, 0), (0.2, 51)] {
            f.encode([x.to_bits(), 0, 0, 0], &mut b);
            assert_eq!(b[0], want, "{x}");
        }
        assert_eq!(f32::from_bits(f.decode(&[51])[0]), 0.2);
        let f = Format::of(2, 16, Num::Sint).unwrap();
        let mut b = [0u8; 4];
        f.encode([(-70000i32) as u32, 123, 0, 0], &mut b);
        assert_eq!(f.decode(&b), [(-32768i32) as u32, 123, 0, 1]);
        let f = Format::of(4, 16, Num::Float).unwrap();
        let mut b = [0u8; 8];
        f.encode([1.5f32.to_bits(), (-2.25f32).to_bits(), 65504f32.to_bits(), 0], &mut b);
        assert_eq!(
            f.decode(&b),
            [1.5f32.to_bits(), (-2.25f32).to_bits(), 65504f32.to_bits(), 0]
        );
        let f = Format::of(1, 8, Num::Snorm).unwrap();
        assert_eq!(f32::from_bits(f.decode(&[0x80])[0]), -1.0);
    }

    #[test]
    fn loads_and_stores_address_the_pitch_and_drop_outside() {
        let r = rgba8(5, 3);
        let mut m = Host(vec![0; 8 * 3 * 4]);
        let v = [0.0f32, 1.0, 0.5, 1.0].map(f32::to_bits);
        r.store(&mut m, [4, 2, 0], v).unwrap();
        r.store(&mut m, [5, 0, 0], v).unwrap(); // outside: dropped
        assert_eq!(&m.0[(2 * 8 + 4) * 4..(2 * 8 + 5) * 4], &[0, 255, 128, 255]);
        assert_eq!(m.0.iter().filter(|&&b| b != 0).count(), 3);
        assert_eq!(r.load(&mut m, [4, 2, 0]).unwrap()[1], 1f32.to_bits());
        assert_eq!(r.load(&mut m, [4, 3, 0]).unwrap(), [0; 4]);
        // a red-only view reads constants for the missing channels
        let red = Resource {
            swizzle: [SEL_X, SEL_0, SEL_0, SEL_1],
            format: Format::of(1, 32, Num::Float).unwrap(),
            ..r
        };
        let mut m = Host(7.5f32.to_bits().to_le_bytes().to_vec());
        assert_eq!(
            red.load(&mut m, [0, 0, 0]).unwrap(),
            [7.5f32.to_bits(), 0, 0, 1f32.to_bits()]
        );
    }

    /// The typed access of the buffer row named `name`, from its `mem` column.
    fn format_access(name: &str) -> Result<FormatAccess, &'static str> {
        let row = isa_amdgpu::GFX9.iter().find(|r| r.name == name).expect("a buffer row");
        FormatAccess::of(row.mem)
    }

    #[test]
    fn typed_buffer_accesses_convert_and_select_like_images() {
        let op = format_access("buffer_load_format_xy").unwrap();
        assert_eq!((op.load, op.components, op.d16), (true, 2, false));
        let hi = format_access("buffer_load_format_d16_hi_x").unwrap();
        assert_eq!((hi.load, hi.components, hi.d16), (true, 1, true));
        // BGRA unorm8: word 3 selects z, y, x, w of 8_8_8_8 unorm
        let word3 = SEL_Z as u32 | (SEL_Y as u32) << 3 | (SEL_X as u32) << 6 | (SEL_W as u32) << 9 | 10 << 15;
        let (f, sel) = FormatAccess::format(word3).unwrap();
        let mut m = Host(vec![0, 51, 255, 128]);
        let v = op.lane(&mut m, &f, sel, 0, &[]).unwrap();
        assert_eq!((f32::from_bits(v[0]), f32::from_bits(v[1])), (1.0, 0.2));
        let st = format_access("buffer_store_format_xyzw").unwrap();
        st.lane(
            &mut m,
            &f,
            sel,
            0,
            &[0.0f32.to_bits(), 1.0f32.to_bits(), 0.5f32.to_bits(), 1.0f32.to_bits()],
        )
        .unwrap();
        assert_eq!(m.0, vec![128, 255, 0, 255]);
        // selects 2 and 3 name nothing
        assert!(FormatAccess::format(2 | 10 << 15).is_err());
        // a d16 store of -1 to a signed 16-bit element stays -1 (not saturated from 65535)
        let (f, sel) = FormatAccess::format(SEL_X as u32 | 5 << 12 | 2 << 15).unwrap();
        let st = format_access("buffer_store_format_d16_x").unwrap();
        let mut m = Host(vec![0, 0]);
        st.lane(&mut m, &f, sel, 0, &[0xffff]).unwrap();
        assert_eq!(m.0, vec![0xff, 0xff]);
    }

    /// A 2x2 image of `format` at 0 (pitch 2), its texels' bytes `bytes`.
    fn tiny(format: Format, bytes: &[u8]) -> (Resource, Host) {
        let r = Resource {
            format,
            width: 2,
            height: 2,
            pitch: 2,
            ..rgba8(2, 2)
        };
        (r, Host(bytes.to_vec()))
    }

    #[test]
    fn packed_loads_move_raw_channel_bits_and_stores_take_them_back() {
        let f = Format::of(4, 8, Num::Unorm).unwrap();
        let (r, mut m) = tiny(f, &[0; 16]);
        // texel (1, 1): bytes 12..16
        m.0[12..16].copy_from_slice(&[0x01, 0x7f, 0xff, 0x80]);
        assert_eq!(r.load_packed(&mut m, [1, 1, 0], 0xf, false).unwrap()[0], 0x80ff_7f01);
        assert_eq!(r.load_packed(&mut m, [1, 1, 0], 0xa, false).unwrap()[0], 0x807f);
        assert_eq!(r.load_packed(&mut m, [1, 1, 0], 0xa, true).unwrap()[0], 0xffff_807f);
        assert_eq!(r.load_packed(&mut m, [2, 1, 0], 0xf, true).unwrap(), [0; 4]);
        let op = ImageInst::of(isa_amdgpu::Opcode::ImageLoadPck, None, 0xa, false, true, false).unwrap();
        assert_eq!(op.result_regs(&r), 1);
        r.store_packed(&mut m, [0, 1, 0], 0x6, &[0x2211]).unwrap();
        assert_eq!(&m.0[8..12], &[0, 0x11, 0x22, 0]);
        // 32-bit channels fill a dword each
        let f = Format::of(4, 32, Num::Float).unwrap();
        let (r, mut m) = tiny(f, &[0; 64]);
        r.store_packed(&mut m, [1, 0, 0], 0xf, &[1, 2, 3, 4]).unwrap();
        assert_eq!(r.load_packed(&mut m, [1, 0, 0], 0xc, true).unwrap(), [3, 4, 0, 0]);
        let op = ImageInst::of(isa_amdgpu::Opcode::ImageLoadPck, None, 0xc, false, true, false).unwrap();
        assert_eq!(op.result_regs(&r), 2);
    }

    #[test]
    fn image_atomics_combine_one_integer_per_texel_by_the_shared_rules() {
        use isa_amdgpu::Opcode as O;
        let u32f = Format::new(4, Num::Uint as u32).unwrap();
        let (r, mut m) = tiny(u32f, &[0; 16]);
        m.0[4..8].copy_from_slice(&10u32.to_le_bytes());
        assert_eq!(r.atomic(&mut m, [1, 0, 0], AtomicOp::Add, &[5]).unwrap()[0], 10);
        assert_eq!(&m.0[4..8], &15u32.to_le_bytes());
        // compare-and-swap: the new value first, then the one to compare with
        assert_eq!(
            r.atomic(&mut m, [1, 0, 0], AtomicOp::CmpSwap, &[99, 15]).unwrap()[0],
            15
        );
        assert_eq!(&m.0[4..8], &99u32.to_le_bytes());
        assert_eq!(r.atomic(&mut m, [1, 0, 0], AtomicOp::CmpSwap, &[7, 15]).unwrap()[0], 99);
        assert_eq!(&m.0[4..8], &99u32.to_le_bytes());
        // outside the image: nothing changes, 0 returns
        assert_eq!(r.atomic(&mut m, [0, 2, 0], AtomicOp::Swap, &[1]).unwrap(), [0; 4]);
        // 64-bit texels: one integer, low dword first
        let u64f = Format::new(11, Num::Uint as u32).unwrap();
        let (r, mut m) = tiny(u64f, &[0; 32]);
        m.0[8..16].copy_from_slice(&0xffff_ffffu64.to_le_bytes());
        assert_eq!(
            r.atomic(&mut m, [1, 0, 0], AtomicOp::Add, &[1, 1]).unwrap(),
            [0xffff_ffff, 0, 0, 0]
        );
        assert_eq!(&m.0[8..16], &0x2_0000_0000u64.to_le_bytes());
        // what the ISA guide allows: integer 32/64-bit texels, the DMASK counting the data dwords, UNORM
        let atomic = |op, a, dmask, unorm, glc| ImageInst::of(op, Some(a), dmask, false, unorm, glc).unwrap();
        let (r32, _) = tiny(u32f, &[]);
        assert_eq!(
            atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true).check(&r32),
            Ok(())
        );
        assert_eq!(
            atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true).result_regs(&r32),
            1
        );
        assert_eq!(
            atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, false).result_regs(&r32),
            0
        );
        assert_eq!(
            atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 3, true, true).check(&r32),
            Ok(())
        );
        assert_eq!(
            atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 3, true, true).result_regs(&r32),
            1
        );
        assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 3, true, true)
            .check(&r32)
            .unwrap_err()
            .contains("allows 0x1"));
        assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, false, true)
            .check(&r32)
            .unwrap_err()
            .contains("UNORM"));
        assert_eq!(
            atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 0xf, true, true).check(&r),
            Ok(())
        );
        assert_eq!(
            atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 0xf, true, true).result_regs(&r),
            2
        );
        let (float, _) = tiny(Format::of(1, 32, Num::Float).unwrap(), &[]);
        assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true)
            .check(&float)
            .unwrap_err()
            .contains("integer texels"));
        let (rgba, _) = tiny(Format::of(4, 8, Num::Uint).unwrap(), &[]);
        assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true)
            .check(&rgba)
            .is_err());
        assert!(
            ImageInst::of(O::ImageAtomicAdd, Some(AtomicOp::Add), 1, true, true, true).is_err(),
            "no D16 atomics"
        );
    }

    /// A 4x2 single-channel float image holding x + 10 y.
    fn ramp() -> (Resource, Host) {
        let r = Resource {
            swizzle: [SEL_X, SEL_0, SEL_0, SEL_1],
            format: Format::of(1, 32, Num::Float).unwrap(),
            ..rgba8(4, 2)
        };
        let mut m = Host(vec![0; 7 * 2 * 4]);
        for y in 0..2 {
            for x in 0..4 {
                r.store(&mut m, [x, y, 0], [(x as f32 + 10.0 * y as f32).to_bits(), 0, 0, 0])
                    .unwrap();
            }
        }
        (r, m)
    }

    #[test]
    fn sampling_filters_and_wraps_like_the_reference_formulas() {
        let (r, mut m) = ramp();
        let nearest = Sampler {
            wrap: [Wrap::Repeat; 3],
            unnormalized: false,
            linear: false,
            border: Border::TransparentBlack,
        };
        let at = |m: &mut Host, s: &Sampler, x: f32, y: f32| {
            f32::from_bits(r.sample(m, s, false, [x, y, 0.0], [0; 3], Sample::Color).unwrap()[0])
        };
        assert_eq!(at(&mut m, &nearest, 0.6, 0.9), 2.0 + 10.0);
        assert_eq!(at(&mut m, &nearest, 1.1, 0.1), 0.0); // wraps to x = 0
                                                         // a position a rounding error below a texel edge is on the edge
        assert_eq!(at(&mut m, &nearest, 0.5 - 1e-7, 0.0), 2.0);
        let linear = Sampler {
            linear: true,
            wrap: [Wrap::ClampLast; 3],
            ..nearest
        };
        // texel centres at (i + 0.5) / n: halfway between x = 1 and x = 2 on row 0
        assert_eq!(at(&mut m, &linear, 2.0 / 4.0, 0.25), 1.5);
        // halfway between the rows
        assert_eq!(at(&mut m, &linear, 1.5 / 4.0, 0.5), 1.0 + 5.0);
        let border = Sampler {
            wrap: [Wrap::ClampBorder; 3],
            border: Border::OpaqueWhite,
            unnormalized: true,
            ..nearest
        };
        assert_eq!(at(&mut m, &border, -0.5, 0.5), 1.0);
        let mirror = Sampler {
            wrap: [Wrap::Mirror; 3],
            unnormalized: true,
            ..nearest
        };
        assert_eq!(at(&mut m, &mirror, 4.5, 0.5), 3.0);
        assert_eq!(at(&mut m, &mirror, -1.5, 0.5), 1.0);
        let g = r
            .sample(&mut m, &linear, true, [1.5, 1.0, 0.0], [0; 3], Sample::Gather(0))
            .unwrap()
            .map(f32::from_bits);
        assert_eq!(g, [11.0, 12.0, 2.0, 1.0]);
    }
}
