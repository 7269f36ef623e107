//! Typed buffer accesses ([`FormatAccess`]: `buffer_load_format_*`, `buffer_store_format_*`), their format and
//! channel selects from the buffer resource (V#).

use super::format::Format;
use super::inst::{ImageInst, ImageKind};
use super::resource::{selects, Dim, Resource};
use super::Texels;

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
            sw_mode: 0,
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
