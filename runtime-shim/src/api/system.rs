//! The system: `hsa_init` and `hsa_shut_down`, status strings, system attributes, which extensions are provided
//! (the AMD loader and images, version 1.00) and their function tables, and system events.

use std::ffi::{c_char, c_void, CStr};

use super::{executable, image, nonnull, out, status, with};
use crate::ffi::{self, Status};
use crate::info;
use crate::runtime;

export! {
    fn hsa_init() -> Status = ffi::ERROR; { status(runtime::init()) }
    fn hsa_shut_down() -> Status = ffi::ERROR; { status(runtime::shut_down()) }

    fn hsa_status_string(s: Status, text: *mut *const c_char) -> Status = ffi::ERROR; {
        match ffi::status_text(s) {
            // SAFETY: `text` is null or points to storage for the result, as the API requires.
            Some(t) => status(unsafe { out(text, t.as_ptr()) }),
            None => ffi::ERROR_INVALID_ARGUMENT,
        }
    }

    fn hsa_system_get_info(attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
        with(|r| unsafe { info::system(r, attribute, value) })
    }
    fn hsa_system_extension_supported(ext: u16, major: u16, minor: u16, result: *mut bool) -> Status = ffi::ERROR; {
        // SAFETY: `result` is null or points to storage for the result, as the API requires.
        with(|_| unsafe { out(result, extension(ext, major) && minor == 0) })
    }
    fn hsa_system_major_extension_supported(ext: u16, major: u16, minor: *mut u16, result: *mut bool) -> Status = ffi::ERROR; {
        with(|_| major_extension(ext, major, minor, result))
    }
    fn hsa_system_get_extension_table(ext: u16, major: u16, minor: u16, table: *mut c_void) -> Status = ffi::ERROR; {
        // version 1.00 of a table: the loader's three functions, the images' ten
        let length = if ext == ffi::EXTENSION_IMAGES { 80 } else { 24 };
        with(|_| if minor == 0 { extension_table(ext, major, length, table) } else { Err(ffi::ERROR_INVALID_ARGUMENT) })
    }
    fn hsa_system_get_major_extension_table(ext: u16, major: u16, length: usize, table: *mut c_void) -> Status = ffi::ERROR; {
        with(|_| extension_table(ext, major, length, table))
    }
    fn hsa_extension_get_name(ext: u16, name: *mut *const c_char) -> Status = ffi::ERROR; {
        let n: &'static CStr = match ext {
            0 => c"HSA_EXTENSION_FINALIZER",
            1 => c"HSA_EXTENSION_IMAGES",
            2 => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
            3 => c"HSA_EXTENSION_PROFILING_EVENTS",
            0x200 => c"HSA_EXTENSION_AMD_PROFILER",
            0x201 => c"HSA_EXTENSION_AMD_LOADER",
            0x202 => c"HSA_EXTENSION_AMD_AQLPROFILE",
            _ => return ffi::ERROR_INVALID_ARGUMENT,
        };
        // SAFETY: `name` is null or points to storage for the result, as the API requires.
        with(|_| unsafe { out(name, n.as_ptr()) })
    }
    fn hsa_amd_register_system_event_handler(callback: Option<crate::runtime::SystemEventCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        // GPU memory faults are the one system event raised (crate::queue::memory_fault)
        with(|r| {
            let f = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.system_events.lock().unwrap_or_else(|e| e.into_inner()).push((f, data as usize));
            Ok(())
        })
    }
}

/// Whether the extension `ext` is provided at major version `major` (the AMD loader and images, 1.00).
pub(super) fn extension(ext: u16, major: u16) -> bool {
    (ext == ffi::EXTENSION_AMD_LOADER || ext == ffi::EXTENSION_IMAGES) && major == 1
}

/// `hsa_*_major_extension_supported`'s answer: whether, and the highest minor version (0).
pub(super) fn major_extension(ext: u16, major: u16, minor: *mut u16, result: *mut bool) -> Result<(), Status> {
    let yes = extension(ext, major);
    if yes {
        // SAFETY: `minor` is null or points to storage for the result, as the API requires.
        unsafe { out(minor, 0) }?;
    }
    // SAFETY: `result` is null or points to storage for the result, as the API requires.
    unsafe { out(result, yes) }
}

/// Extension function table `ext` (its first `length` bytes).
fn extension_table(ext: u16, major: u16, length: usize, table: *mut c_void) -> Result<(), Status> {
    if major != 1 {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let fns: Vec<usize> = match ext {
        ffi::EXTENSION_AMD_LOADER => vec![
            executable::loader_query_host_address as *const () as usize,
            executable::loader_query_segment_descriptors as *const () as usize,
            executable::loader_query_executable as *const () as usize,
        ],
        // hsa_ext_images_1_pfn_t: the 1.00 functions, then the three with layouts
        ffi::EXTENSION_IMAGES => vec![
            image::hsa_ext_image_get_capability as *const () as usize,
            image::hsa_ext_image_data_get_info as *const () as usize,
            image::hsa_ext_image_create as *const () as usize,
            image::hsa_ext_image_destroy as *const () as usize,
            image::hsa_ext_image_copy as *const () as usize,
            image::hsa_ext_image_import as *const () as usize,
            image::hsa_ext_image_export as *const () as usize,
            image::hsa_ext_image_clear as *const () as usize,
            image::hsa_ext_sampler_create as *const () as usize,
            image::hsa_ext_sampler_destroy as *const () as usize,
            image::hsa_ext_image_get_capability_with_layout as *const () as usize,
            image::hsa_ext_image_data_get_info_with_layout as *const () as usize,
            image::hsa_ext_image_create_with_layout as *const () as usize,
        ],
        _ => return Err(ffi::ERROR_INVALID_ARGUMENT),
    };
    let bytes = fns.len() * 8;
    if length == 0 || length > bytes || !length.is_multiple_of(8) {
        eprintln!(
            "wavejit: extension {ext:#x}'s table has {} functions; {length} bytes were asked for",
            fns.len()
        );
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    nonnull(table)?;
    // SAFETY: checked non-null; the caller provides `length` bytes for the table, a prefix of the functions.
    unsafe { std::ptr::copy_nonoverlapping(fns.as_ptr().cast::<u8>(), table.cast::<u8>(), length) };
    Ok(())
}
