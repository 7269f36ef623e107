//! Images: the gfx9 image resource (T#, eight dwords) and sampler (S#, four dwords) as the hardware reads
//! them, texel formats, and the per-lane work of the MIMG instructions (load, store, their packed `_pck`
//! forms, atomics, sample, gather, size query). The functions here take a resource and coordinates and reach
//! memory through [`Texels`], so the engine (which checks every access) and the runtime's host-side image
//! copies share one texel layout.
//!
//! Texel (x, y, z) of a level-0 image lives at `base + ((z * height + y) * pitch + x) * bytes_per_texel`,
//! where array layers take the place of z (of y for 1-D arrays). That is the hardware's layout for linear
//! images (swizzle mode 0). The tiled modes (ROCr's image manager lays out opaque images so on a dGPU:
//! `SW_4KB_S_X` and the like, with a pitch and size addrlib padded to whole tiles) are addressed the same
//! way: the texels an image instruction reads and writes, and so the runtime's image copies (blit kernels
//! made of image instructions), agree with each other and stay inside the surface, but their order in
//! memory is not the hardware's, so bytes of a tiled image read other than through an image (a buffer copy
//! of the surface) are in linear order. Mipmaps, cube maps and depth compares are refused with a message
//! naming them.
//!
//! The parts: texel formats ([`format`]); the image resource and its channel selects ([`resource`]); the
//! sampler and sampling ([`sampler`]); the MIMG instructions' per-lane work ([`inst`]); typed buffer accesses
//! ([`buffer`]).

mod buffer;
mod format;
mod inst;
mod resource;
mod sampler;
#[cfg(test)]
mod tests;

pub use buffer::FormatAccess;
pub use format::{Format, Num};
pub use inst::{ImageInst, ImageKind, MAX_ADDRESS};
pub use resource::{select_bits, Dim, Resource, SEL_0, SEL_1, SEL_W, SEL_X, SEL_Y, SEL_Z};
pub use sampler::{Border, Sample, Sampler, Wrap};

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
