//! The image resource (T#): its resource types ([`Dim`]), its channel selects, and the decoded
//! [`Resource`] with the texel addressing of a linear image.

use isa_amdgpu::table::AtomicOp;

use super::format::Format;
use super::Texels;

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
    pub(super) fn filtered(self) -> usize {
        match self {
            Dim::D1 | Dim::D1Array => 1,
            Dim::D2 | Dim::D2Array => 2,
            Dim::D3 => 3,
        }
    }
    pub(super) fn arrayed(self) -> bool {
        matches!(self, Dim::D1Array | Dim::D2Array)
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
pub(super) fn selects(word: u32) -> Result<[u8; 4], String> {
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
    /// The gfx9 swizzle mode (`SW_MODE`): 0 is linear; the tiled modes are addressed in linear order too (see
    /// the module docs of [`crate::image`]).
    pub sw_mode: u8,
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
        let sw_mode = (t[3] >> 20 & 0x1f) as u8;
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
            sw_mode,
        })
    }

    /// The T# describing this resource (the inverse of [`Resource::decode`]).
    pub fn encode(&self) -> [u32; 8] {
        let mut t = [0u32; 8];
        t[0] = (self.base >> 8) as u32;
        t[1] = (self.base >> 40) as u32 & 0xff | self.format.data << 20 | (self.format.num as u32) << 26;
        t[2] = (self.width - 1) | (self.height - 1) << 14;
        t[3] = select_bits(self.swizzle) | (self.sw_mode as u32) << 20 | (self.dim as u32) << 28;
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
    pub(super) fn extent(&self) -> [u32; 3] {
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
    pub(super) fn fetch<M: Texels>(&self, mem: &mut M, c: Option<[u32; 3]>) -> Result<Option<[u32; 4]>, M::Error> {
        let Some(c) = c else { return Ok(None) };
        let mut raw = [0u8; 16];
        let raw = &mut raw[..self.format.bytes() as usize];
        mem.read(self.texel_address(c), raw)?;
        Ok(Some(self.select(self.format.decode(raw))))
    }

    pub(super) fn select(&self, v: [u32; 4]) -> [u32; 4] {
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
    /// zero ([`ImageInst::result_regs`](super::ImageInst::result_regs) counts the dwords). Zeros outside the image.
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
    /// width of the texel, checked by [`ImageInst::check`](super::ImageInst::check)), its operands from `data`
    /// (compare-and-swap: the new value, then the value to compare with, each of the texel's width; 64-bit values low
    /// dword first), by the one definition of atomic arithmetic ([`crate::rules::atomic`], [`crate::rules::atomic2`]).
    /// Returns the texel's old value as dwords. Outside the image nothing changes and it returns 0, as a load reads
    /// there (the guides leave this case open).
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
