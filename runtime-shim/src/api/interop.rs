//! Interop buffers: a buffer is any mappable file descriptor (a DMA-BUF a graphics driver exported, a memfd);
//! its pages are mapped into device memory (see the crate's memory.rs), and unmapping gives them back.

use std::ffi::c_void;

use super::{nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::memory;

export! {
    fn hsa_amd_interop_map_buffer(n: u32, agents: *const u64, handle: i32, flags: u32, size: *mut usize, ptr: *mut *mut c_void, metadata_size: *mut usize, metadata: *mut *const c_void) -> Status = ffi::ERROR; {
        with(|r| {
            for &a in slice(agents, n as usize)? {
                r.gpu(a)?;
            }
            if n == 0 || flags != 0 {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            nonnull(size)?;
            nonnull(ptr)?;
            let (address, len) = memory::interop_map(r, handle)?;
            out(size, len as usize)?;
            if !metadata_size.is_null() {
                out(metadata_size, 0)?;
            }
            if !metadata.is_null() {
                out(metadata, std::ptr::null())?;
            }
            out(ptr, address as *mut c_void)
        })
    }
    fn hsa_amd_interop_unmap_buffer(ptr: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| if memory::unmap_foreign(r, ptr as u64) { Ok(()) } else { Err(ffi::ERROR_INVALID_ARGUMENT) })
    }
}
