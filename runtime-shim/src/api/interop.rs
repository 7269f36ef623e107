//! Interop buffers: a buffer is any mappable file descriptor (a DMA-BUF a graphics driver exported, a memfd);
//! its pages are mapped into device memory (see the crate's memory.rs), and unmapping gives them back.

use std::ffi::c_void;

use super::{nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::memory;

export! {
    fn hsa_amd_interop_map_buffer(n: u32, agents: *const u64, handle: i32, flags: u32, size: *mut usize, ptr: *mut *mut c_void, metadata_size: *mut usize, metadata: *mut *const c_void) -> Status = ffi::ERROR; {
        with(|r| {
            // SAFETY: `agents` points to `n` elements that stay valid for the call, as the API requires.
            for &a in unsafe { slice(agents, n as usize) }? {
                r.gpu(a)?;
            }
            if n == 0 || flags != 0 {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            nonnull(size)?;
            nonnull(ptr)?;
            let (address, len) = memory::interop_map(r, handle)?;
            // SAFETY: `size` is null or points to storage for the result, as the API requires.
            unsafe { out(size, len as usize) }?;
            if !metadata_size.is_null() {
                // SAFETY: `metadata_size` is null or points to storage for the result, as the API requires.
                unsafe { out(metadata_size, 0) }?;
            }
            if !metadata.is_null() {
                // SAFETY: `metadata` is null or points to storage for the result, as the API requires.
                unsafe { out(metadata, std::ptr::null()) }?;
            }
            // SAFETY: `ptr` is null or points to storage for the result, as the API requires.
            unsafe { out(ptr, address as *mut c_void) }
        })
    }
    fn hsa_amd_interop_unmap_buffer(ptr: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| if memory::unmap_foreign(r, ptr as u64) { Ok(()) } else { Err(ffi::ERROR_INVALID_ARGUMENT) })
    }
}
