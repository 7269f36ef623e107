//! The images extension: image and sampler handles whose memory holds the descriptors kernels read (the T# and
//! S# of [`emu_core::image`], plus the three words the device library reads after the T#: channel type,
//! channel order and width), image data sizes, making image objects, and the host side's regions of texels:
//! their import and export here, their copy and clear in the API (api/image.rs).
//!
//! Image data is linear; a row is `row_pitch` bytes and a slice (or layer) `row_pitch * height` bytes.

use std::collections::HashMap;

use emu_core::image::{
    Border, Dim, Format, Num, Resource, Sampler, Texels, Wrap, SEL_0, SEL_1, SEL_W, SEL_X, SEL_Y, SEL_Z,
};
use emu_core::DevicePreset;

use crate::ffi::{self, Status};
use crate::memory;
use crate::runtime::Runtime;

/// Bytes of an image object: T# (8 words), channel type, channel order, width, and padding. HIP copies the
/// first 48 into its texture objects.
pub const IMAGE_OBJECT_BYTES: u64 = 64;
/// Bytes of a sampler object: the S# and padding (HIP copies 32).
pub const SAMPLER_OBJECT_BYTES: u64 = 32;
/// Row pitches of linear images are multiples of this many bytes.
pub const ROW_PITCH_ALIGNMENT: u64 = 256;

/// Largest image extents, as `HSA_EXT_AGENT_INFO_IMAGE_*` report them.
pub const MAX_1D: u32 = 16384;
pub const MAX_2D: u32 = 16384;
pub const MAX_3D: u32 = 2048;
pub const MAX_LAYERS: u32 = 2048;
pub const MAX_1DB: u32 = 1 << 27;

/// `hsa_ext_image_descriptor_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ImageDescriptor {
    pub geometry: u32,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub array_size: usize,
    pub channel_type: u32,
    pub channel_order: u32,
}

/// `hsa_ext_image_data_info_t`.
#[repr(C)]
pub struct DataInfo {
    pub size: usize,
    pub alignment: usize,
}

/// `hsa_ext_image_region_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Region {
    pub offset: [u32; 3],
    pub range: [u32; 3],
}

/// `hsa_ext_sampler_descriptor_t`.
#[repr(C)]
pub struct SamplerDescriptor {
    pub coordinate_mode: u32,
    pub filter_mode: u32,
    pub address_mode: u32,
}

/// The image support of an agent: GPUs whose ISA has image instructions (gfx90a; gfx94x has none).
pub fn supported(dev: &DevicePreset) -> bool {
    dev.gfx == "gfx90a"
}

/// The texel format and channel selects of an HSA channel type and order; `None` if not emulated.
pub fn format_of(channel_type: u32, channel_order: u32) -> Option<(Format, [u8; 4])> {
    let (bits, num) = match channel_type {
        0 => (8, Num::Snorm),
        1 => (16, Num::Snorm),
        2 => (8, Num::Unorm),
        3 => (16, Num::Unorm),
        8 => (8, Num::Sint),
        9 => (16, Num::Sint),
        10 => (32, Num::Sint),
        11 => (8, Num::Uint),
        12 => (16, Num::Uint),
        13 => (32, Num::Uint),
        14 => (16, Num::Float),
        15 => (32, Num::Float),
        _ => return None,
    };
    let (x, y, z, w) = (SEL_X, SEL_Y, SEL_Z, SEL_W);
    let (channels, sel, num) = match channel_order {
        0 => (1, [SEL_0, SEL_0, SEL_0, x], num),
        1 | 2 => (1, [x, SEL_0, SEL_0, SEL_1], num),
        3 | 4 => (2, [x, y, SEL_0, SEL_1], num),
        5 => (2, [x, SEL_0, SEL_0, y], num),
        7 => (4, [x, y, z, SEL_1], num),
        8 => (4, [x, y, z, w], num),
        9 => (4, [z, y, x, w], num),
        10 => (4, [y, z, w, x], num),
        11 => (4, [w, z, y, x], num),
        13 if num == Num::Unorm && bits == 8 => (4, [x, y, z, SEL_1], Num::Srgb),
        14 if num == Num::Unorm && bits == 8 => (4, [x, y, z, w], Num::Srgb),
        15 if num == Num::Unorm && bits == 8 => (4, [z, y, x, w], Num::Srgb),
        16 => (1, [x, x, x, x], num),
        17 => (1, [x, x, x, SEL_1], num),
        18 if matches!(channel_type, 3 | 15) => (1, [x, SEL_0, SEL_0, SEL_1], num),
        _ => return None,
    };
    Some((Format::of(channels, bits, num)?, sel))
}

/// `hsa_ext_image_get_capability`'s mask for a geometry and format on `dev`.
pub fn capability(dev: &DevicePreset, geometry: u32, channel_type: u32, channel_order: u32) -> u32 {
    let depth_geometry = matches!(geometry, 6 | 7);
    let ok = supported(dev)
        && geometry <= 7
        && format_of(channel_type, channel_order).is_some_and(|(f, _)| geometry != 5 || f.num != Num::Srgb)
        && depth_geometry == (channel_order == 18);
    if ok {
        // read-only, write-only, read-write, read-modify-write
        0xf
    } else {
        0
    }
}

/// An image's geometry in the emulator's terms: dimension, extents, layers or depth.
fn shape(d: &ImageDescriptor) -> Result<(Dim, u32, u32, u32), String> {
    let n = |v: usize, what: &str, max: u32| -> Result<u32, String> {
        if v == 0 || v > max as usize {
            Err(format!("image {what} {v} is outside 1..={max}"))
        } else {
            Ok(v as u32)
        }
    };
    Ok(match d.geometry {
        0 => (Dim::D1, n(d.width, "width", MAX_1D)?, 1, 1),
        1 | 6 => (Dim::D2, n(d.width, "width", MAX_2D)?, n(d.height, "height", MAX_2D)?, 1),
        2 => (
            Dim::D3,
            n(d.width, "width", MAX_3D)?,
            n(d.height, "height", MAX_3D)?,
            n(d.depth, "depth", MAX_3D)?,
        ),
        3 => (
            Dim::D1Array,
            n(d.width, "width", MAX_1D)?,
            1,
            n(d.array_size, "array size", MAX_LAYERS)?,
        ),
        4 | 7 => (
            Dim::D2Array,
            n(d.width, "width", MAX_2D)?,
            n(d.height, "height", MAX_2D)?,
            n(d.array_size, "array size", MAX_LAYERS)?,
        ),
        // a 1-D buffer image is read by typed buffer accesses; its texels are addressed like a 1-D image's
        5 => (Dim::D1, n(d.width, "width", MAX_1DB)?, 1, 1),
        g => return Err(format!("image geometry {g} is not valid")),
    })
}

/// The resource an image of `d` at `base` is, with row pitch `row_pitch` bytes (0: the default) and slice
/// pitch `slice_pitch` bytes (0: rows times height); and its size in bytes.
pub fn layout(d: &ImageDescriptor, base: u64, row_pitch: u64, slice_pitch: u64) -> Result<(Resource, u64), String> {
    let (format, swizzle) = format_of(d.channel_type, d.channel_order).ok_or_else(|| {
        format!(
            "image format (channel type {}, channel order {}) is not emulated",
            d.channel_type, d.channel_order
        )
    })?;
    if d.geometry == 5 && format.num == Num::Srgb {
        // a buffer resource's number format has no sRGB
        return Err("1-D buffer images in sRGB formats are not emulated".into());
    }
    let (dim, width, height, depth) = shape(d)?;
    let bpp = format.bytes() as u64;
    let tight = width as u64 * bpp;
    let row_pitch = match (row_pitch, d.geometry) {
        (0, 5) => tight,
        (0, _) => tight.next_multiple_of(ROW_PITCH_ALIGNMENT),
        (p, _) => p,
    };
    let max_pitch = if d.geometry == 5 { MAX_1DB as u64 } else { 65536 };
    if row_pitch % bpp != 0 || row_pitch < tight || row_pitch / bpp > max_pitch {
        return Err(format!(
            "row pitch {row_pitch} does not hold {width} texels of {bpp} bytes in whole texels"
        ));
    }
    let slice = row_pitch * height as u64;
    if slice_pitch != 0 && slice_pitch != slice && !matches!(dim, Dim::D1 | Dim::D2) {
        return Err(format!("slice pitch {slice_pitch} differs from row pitch times height ({slice}); wavejit's images have no separate slice pitch"));
    }
    let r = Resource {
        base,
        dim,
        format,
        width,
        height,
        depth,
        pitch: (row_pitch / bpp) as u32,
        swizzle,
        sw_mode: 0,
    };
    Ok((r, slice * depth as u64))
}

/// The words of an image object: T# (for a 1-D buffer image, a buffer resource whose word 3 holds the format),
/// then channel type, channel order and width for the device library.
pub fn object_words(r: &Resource, d: &ImageDescriptor) -> [u32; 16] {
    let mut w = [0u32; 16];
    if d.geometry == 5 {
        let bpp = r.bytes_per_texel() as u32;
        w[0] = r.base as u32;
        w[1] = (r.base >> 32) as u32 & 0xffff | bpp << 16;
        w[2] = r.width;
        w[3] = emu_core::image::select_bits(r.swizzle) | (r.format.num as u32) << 12 | r.format.data << 15;
    } else {
        w[..8].copy_from_slice(&r.encode());
    }
    w[8] = d.channel_type;
    w[9] = d.channel_order;
    w[10] = r.width;
    w
}

/// The sampler of an HSA sampler descriptor.
pub fn sampler_of(d: &SamplerDescriptor) -> Result<Sampler, String> {
    let wrap = match d.address_mode {
        0 | 1 => Wrap::ClampLast,
        2 => Wrap::ClampBorder,
        3 => Wrap::Repeat,
        4 => Wrap::Mirror,
        m => return Err(format!("sampler addressing mode {m} is not valid")),
    };
    let linear = match d.filter_mode {
        0 => false,
        1 => true,
        f => return Err(format!("sampler filter mode {f} is not valid")),
    };
    let unnormalized = match d.coordinate_mode {
        0 => true,
        1 => false,
        c => return Err(format!("sampler coordinate mode {c} is not valid")),
    };
    Ok(Sampler {
        wrap: [wrap; 3],
        unnormalized,
        linear,
        border: Border::TransparentBlack,
    })
}

/// Live image and sampler objects: address of the object, and for images their resource.
#[derive(Default)]
pub struct Objects {
    pub images: HashMap<u64, Resource>,
    pub samplers: HashMap<u64, Sampler>,
}

/// Texel access from the host: checked reads and writes of device memory.
pub struct HostTexels<'a>(pub &'a Runtime);

impl Texels for HostTexels<'_> {
    type Error = Status;
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), Status> {
        self.0.mem.read(address, buf).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), Status> {
        self.0.mem.write(address, data).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)
    }
}

/// The texel coordinates of a region, each checked against the image; `Err` if the region leaves it.
pub fn region_texels(r: &Resource, g: &Region) -> Result<impl Iterator<Item = [u32; 3]> + Clone, Status> {
    let unused = |i: usize| i >= r.dim.coords();
    for i in 0..3 {
        let fits = g.offset[i] as u64 + g.range[i] as u64 <= u32::MAX as u64;
        let ok = if unused(i) {
            g.offset[i] == 0 && g.range[i] <= 1
        } else {
            fits && g.range[i] > 0 && r.contains(last(g, i, r))
        };
        if !ok {
            eprintln!(
                "wavejit: image region {:?}+{:?} leaves the {}x{}x{} image",
                g.offset, g.range, r.width, r.height, r.depth
            );
            return Err(ffi::ERROR_INVALID_ARGUMENT);
        }
    }
    let span = |i: usize| {
        if unused(i) {
            0..1
        } else {
            g.offset[i]..g.offset[i] + g.range[i]
        }
    };
    let (xs, ys, zs) = (span(0), span(1), span(2));
    // z outermost, x innermost: linear memory order
    Ok(zs.flat_map(move |z| {
        let xs = xs.clone();
        ys.clone().flat_map(move |y| xs.clone().map(move |x| [x, y, z]))
    }))
}

/// The region's last texel along axis `i`, other axes at their offsets (which must not overflow: checked by
/// the caller).
fn last(g: &Region, i: usize, r: &Resource) -> [u32; 3] {
    let mut c = [0u32; 3];
    for (k, v) in c.iter_mut().enumerate().take(r.dim.coords()) {
        *v = g.offset[k] + if k == i { g.range[k].saturating_sub(1) } else { 0 };
    }
    c
}

/// Offset of texel `c` of a region in linear host memory with the given pitches (rows of `range[0]` texels
/// when `row_pitch` is 0).
pub fn linear_offset(r: &Resource, g: &Region, c: [u32; 3], row_pitch: u64, slice_pitch: u64) -> u64 {
    let bpp = r.bytes_per_texel();
    let row = if row_pitch == 0 {
        g.range[0] as u64 * bpp
    } else {
        row_pitch
    };
    let (rows, slices) = match r.dim {
        Dim::D1Array => (0, c[1] - g.offset[1]),
        _ => (c[1].saturating_sub(g.offset[1]), c[2].saturating_sub(g.offset[2])),
    };
    let rows_per_slice = if r.dim == Dim::D1Array {
        1
    } else {
        g.range[1].max(1) as u64
    };
    let slice = if slice_pitch == 0 {
        row * rows_per_slice
    } else {
        slice_pitch
    };
    slices as u64 * slice + rows as u64 * row + (c[0] - g.offset[0]) as u64 * bpp
}

/// Makes an image object of `d` over the texels at `data` (checked to be aligned and to lie inside one
/// allocation of the runtime), rows `row_pitch` and slices `slice_pitch` bytes apart (0: the defaults); returns
/// its handle, the object's address.
pub fn create(rt: &Runtime, d: &ImageDescriptor, data: u64, row_pitch: u64, slice_pitch: u64) -> Result<u64, Status> {
    let align = if d.geometry == 5 { 4 } else { 256 };
    if !data.is_multiple_of(align) {
        eprintln!("wavejit: image data at {data:#x} is not {align}-byte aligned");
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let (res, _) = layout(d, data, row_pitch, slice_pitch).map_err(refuse)?;
    // the bytes texels occupy: a pitch may reach past the last row's texels
    let last = [res.width - 1, res.height - 1, res.depth - 1];
    let last = if res.dim == Dim::D1Array {
        [last[0], last[2], 0]
    } else {
        last
    };
    let extent = res.texel_address(last) + res.bytes_per_texel() - data;
    if !rt.mem.host_accessible(data, extent) {
        eprintln!(
            "wavejit: image data at {data:#x} ({extent} bytes) does not lie inside one allocation of this runtime"
        );
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let at = rt.allocate(0, IMAGE_OBJECT_BYTES)?;
    let words: Vec<u8> = object_words(&res, d).iter().flat_map(|w| w.to_le_bytes()).collect();
    rt.mem.write(at, &words).map_err(|_| ffi::ERROR)?;
    rt.images
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .images
        .insert(at, res);
    Ok(at)
}

/// The resource of a live image object.
pub fn resource(rt: &Runtime, handle: u64) -> Result<Resource, Status> {
    rt.images
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .images
        .get(&handle)
        .copied()
        .ok_or(ffi::ERROR_INVALID_ARGUMENT)
}

/// `hsa_ext_image_import` (`into_image`) and `_export`: texels between linear memory at `linear` and region `g`
/// of image `handle`.
pub fn transfer(
    rt: &Runtime,
    handle: u64,
    linear: u64,
    row_pitch: u64,
    slice_pitch: u64,
    g: &Region,
    into_image: bool,
) -> Result<(), Status> {
    let res = resource(rt, handle)?;
    let texels = region_texels(&res, g)?;
    let bpp = res.bytes_per_texel();
    // the last texel lies furthest into linear memory
    let extent = texels
        .clone()
        .last()
        .map_or(0, |c| linear_offset(&res, g, c, row_pitch, slice_pitch) + bpp);
    let host = memory::host_range(rt, linear, extent)?;
    let mut texel = vec![0u8; bpp as usize];
    for c in texels {
        let p = (host + linear_offset(&res, g, c, row_pitch, slice_pitch)) as *mut u8;
        let at = res.texel_address(c);
        // SAFETY: `host .. host + extent` was checked (device memory) or is the caller's buffer, which the API
        // requires to hold the region with these pitches; every texel lies below `extent`.
        unsafe {
            if into_image {
                std::ptr::copy_nonoverlapping(p, texel.as_mut_ptr(), texel.len());
                rt.mem.write(at, &texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
            } else {
                rt.mem.read(at, &mut texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
                std::ptr::copy_nonoverlapping(texel.as_ptr(), p, texel.len());
            }
        }
    }
    Ok(())
}

/// A status for a descriptor the emulator cannot make an image of, with the reason on stderr.
pub fn refuse(what: String) -> Status {
    eprintln!("wavejit: {what}");
    ffi::ERROR_IMAGE_FORMAT_UNSUPPORTED
}
