//! The images extension: image and sampler objects on GPU agents with image instructions, their capabilities
//! and data sizes, and the host-side import, export, copy and clear; also `hsa_amd_image_create` and the image
//! size limits. The objects and their texels are handled by the crate's image.rs. Image data is linear, the one
//! layout an application may ask for explicitly.

use std::ffi::c_void;

use super::{nonnull, out, with};
use crate::ffi::{self, Status};
use crate::image;
use crate::info;
use crate::runtime::Runtime;

export! {
    fn hsa_ext_image_get_capability(agent: u64, geometry: u32, format: *const [u32; 2], mask: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, g) = r.gpu(agent)?;
            nonnull(format)?;
            // SAFETY: checked non-null; the API requires a valid hsa_ext_image_format_t.
            let [ty, order] = unsafe { *format };
            // SAFETY: `mask` is null or points to storage for the result, as the API requires.
            unsafe { out(mask, image::capability(g, geometry, ty, order)) }
        })
    }
    fn hsa_ext_image_get_capability_with_layout(agent: u64, geometry: u32, format: *const [u32; 2], layout: u32, mask: *mut u32) -> Status = ffi::ERROR; {
        if layout != IMAGE_LAYOUT_LINEAR {
            return ffi::ERROR_INVALID_ARGUMENT;
        }
        hsa_ext_image_get_capability(agent, geometry, format, mask)
    }
    fn hsa_ext_image_data_get_info(agent: u64, desc: *const image::ImageDescriptor, access: u32, info: *mut image::DataInfo) -> Status = ffi::ERROR; {
        with(|r| image_data_info(r, agent, desc, access, 0, 0, info))
    }
    fn hsa_ext_image_data_get_info_with_layout(agent: u64, desc: *const image::ImageDescriptor, access: u32, layout: u32, row_pitch: usize, slice_pitch: usize, info: *mut image::DataInfo) -> Status = ffi::ERROR; {
        if layout != IMAGE_LAYOUT_LINEAR {
            return ffi::ERROR_INVALID_ARGUMENT;
        }
        with(|r| image_data_info(r, agent, desc, access, row_pitch as u64, slice_pitch as u64, info))
    }
    fn hsa_ext_image_create(agent: u64, desc: *const image::ImageDescriptor, data: *const c_void, access: u32, handle: *mut u64) -> Status = ffi::ERROR; {
        with(|r| create_image(r, agent, desc, data as u64, access, 0, 0, handle))
    }
    fn hsa_ext_image_create_with_layout(agent: u64, desc: *const image::ImageDescriptor, data: *const c_void, access: u32, layout: u32, row_pitch: usize, slice_pitch: usize, handle: *mut u64) -> Status = ffi::ERROR; {
        if layout != IMAGE_LAYOUT_LINEAR {
            return ffi::ERROR_INVALID_ARGUMENT;
        }
        with(|r| create_image(r, agent, desc, data as u64, access, row_pitch as u64, slice_pitch as u64, handle))
    }
    fn hsa_amd_image_create(agent: u64, desc: *const image::ImageDescriptor, _layout: *const c_void, data: *const c_void, access: u32, handle: *mut u64) -> Status = ffi::ERROR; {
        // the vendor layout describes interop images; wavejit's images are always its own linear layout
        with(|r| create_image(r, agent, desc, data as u64, access, 0, 0, handle))
    }
    fn hsa_ext_image_destroy(agent: u64, handle: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            let gone = r.images.lock().unwrap_or_else(|e| e.into_inner()).images.remove(&handle);
            gone.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.free(handle)
        })
    }
    fn hsa_ext_image_import(agent: u64, src: *const c_void, row_pitch: usize, slice_pitch: usize, handle: u64, region: *const image::Region) -> Status = ffi::ERROR; {
        with(|r| image_transfer(r, agent, handle, src as u64, row_pitch as u64, slice_pitch as u64, region, true))
    }
    fn hsa_ext_image_export(agent: u64, handle: u64, dst: *mut c_void, row_pitch: usize, slice_pitch: usize, region: *const image::Region) -> Status = ffi::ERROR; {
        with(|r| image_transfer(r, agent, handle, dst as u64, row_pitch as u64, slice_pitch as u64, region, false))
    }
    fn hsa_ext_image_copy(agent: u64, src: u64, src_offset: *const [u32; 3], dst: u64, dst_offset: *const [u32; 3], range: *const [u32; 3]) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            nonnull(src_offset)?;
            nonnull(dst_offset)?;
            nonnull(range)?;
            let (s, d) = (image::resource(r, src)?, image::resource(r, dst)?);
            if s.bytes_per_texel() != d.bytes_per_texel() || s.dim != d.dim {
                eprintln!("wavejit: hsa_ext_image_copy between images of different geometry or texel size");
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: checked non-null; the API requires valid hsa_dim3_t values.
            let (so, dof, range) = unsafe { (*src_offset, *dst_offset, *range) };
            let from = image::region_texels(&s, &image::Region { offset: so, range })?;
            let to = image::region_texels(&d, &image::Region { offset: dof, range })?;
            let mut texel = vec![0u8; s.bytes_per_texel() as usize];
            for (a, b) in from.into_iter().zip(to) {
                r.mem.read(s.texel_address(a), &mut texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
                r.mem.write(d.texel_address(b), &texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
            }
            Ok(())
        })
    }
    fn hsa_ext_image_clear(agent: u64, handle: u64, data: *const [u32; 4], region: *const image::Region) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            nonnull(data)?;
            nonnull(region)?;
            let res = image::resource(r, handle)?;
            // SAFETY: checked non-null; the API requires four 32-bit components and a valid region.
            let (v, g) = unsafe { (*data, *region) };
            let mut mem = image::HostTexels(r);
            for c in image::region_texels(&res, &g)? {
                res.store(&mut mem, c, v)?;
            }
            Ok(())
        })
    }
    fn hsa_ext_sampler_create(agent: u64, desc: *const image::SamplerDescriptor, handle: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, g) = r.gpu(agent)?;
            nonnull(desc)?;
            nonnull(handle)?;
            if !image::supported(g) {
                return Err(image::refuse(format!("{} has no image instructions, so no samplers", g.name)));
            }
            // SAFETY: checked non-null; the API requires a valid descriptor.
            let s = image::sampler_of(unsafe { &*desc }).map_err(|e| {
                eprintln!("wavejit: {e}");
                ffi::ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED
            })?;
            let at = r.allocate(0, image::SAMPLER_OBJECT_BYTES)?;
            let words: Vec<u8> = s.encode().iter().flat_map(|w| w.to_le_bytes()).collect();
            r.mem.write(at, &words).map_err(|_| ffi::ERROR)?;
            r.images.lock().unwrap_or_else(|e| e.into_inner()).samplers.insert(at, s);
            // SAFETY: `handle` is null or points to storage for the result, as the API requires.
            unsafe { out(handle, at) }
        })
    }
    fn hsa_ext_sampler_destroy(agent: u64, handle: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            let gone = r.images.lock().unwrap_or_else(|e| e.into_inner()).samplers.remove(&handle);
            gone.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.free(handle)
        })
    }
    fn hsa_amd_image_get_info_max_dim(agent: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, g) = r.gpu(agent)?;
            // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
            unsafe { info::image_limit(g, attribute, value) }
        })
    }
}

/// `HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR`, the one explicit image layout.
const IMAGE_LAYOUT_LINEAR: u32 = 1;

/// The descriptor behind a caller's pointer, for agent `agent`, checked for a GPU with images and a valid
/// access permission.
fn image_descriptor(
    r: &Runtime,
    agent: u64,
    desc: *const image::ImageDescriptor,
    access: u32,
) -> Result<image::ImageDescriptor, Status> {
    let (_, g) = r.gpu(agent)?;
    nonnull(desc)?;
    if !(1..=3).contains(&access) {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    if !image::supported(g) {
        return Err(image::refuse(format!(
            "{} ({}) has no image instructions",
            g.name, g.gfx
        )));
    }
    // SAFETY: checked non-null; the API requires a valid hsa_ext_image_descriptor_t.
    Ok(unsafe { *desc })
}

/// `hsa_ext_image_data_get_info[_with_layout]`: the size and alignment of an image's data.
fn image_data_info(
    r: &Runtime,
    agent: u64,
    desc: *const image::ImageDescriptor,
    access: u32,
    row_pitch: u64,
    slice_pitch: u64,
    info: *mut image::DataInfo,
) -> Result<(), Status> {
    let d = image_descriptor(r, agent, desc, access)?;
    nonnull(info)?;
    let (_, size) = image::layout(&d, 0, row_pitch, slice_pitch).map_err(image::refuse)?;
    // SAFETY: `info` is null or points to storage for the result, as the API requires.
    unsafe {
        out(
            info,
            image::DataInfo {
                size: size as usize,
                alignment: image::ROW_PITCH_ALIGNMENT as usize,
            },
        )
    }
}

/// `hsa_ext_image_create[_with_layout]` and `hsa_amd_image_create`: checks the descriptor, makes the image
/// object, and hands back its handle.
#[allow(clippy::too_many_arguments)]
fn create_image(
    r: &Runtime,
    agent: u64,
    desc: *const image::ImageDescriptor,
    data: u64,
    access: u32,
    row_pitch: u64,
    slice_pitch: u64,
    handle: *mut u64,
) -> Result<(), Status> {
    let d = image_descriptor(r, agent, desc, access)?;
    nonnull(handle)?;
    // SAFETY: `handle` is null or points to storage for the result, as the API requires.
    unsafe { out(handle, image::create(r, &d, data, row_pitch, slice_pitch)?) }
}

/// `hsa_ext_image_import` (`into_image`) and `_export`: checks the agent and the region, then moves the texels.
#[allow(clippy::too_many_arguments)]
fn image_transfer(
    r: &Runtime,
    agent: u64,
    handle: u64,
    linear: u64,
    row_pitch: u64,
    slice_pitch: u64,
    region: *const image::Region,
    into_image: bool,
) -> Result<(), Status> {
    r.gpu(agent)?;
    nonnull(region)?;
    // SAFETY: checked non-null; the API requires a valid region.
    let g = unsafe { *region };
    image::transfer(r, handle, linear, row_pitch, slice_pitch, &g, into_image)
}
