//! IPC handles of memory and signals. Memory: the allocation's pages move onto a memfd that another process maps
//! (through /proc/PID/fd) into an allocation of its own; within the process a handle opens the allocation
//! itself. Signals travel the same way, with the page that holds them.
//!
//! A handle's eight words: magic, process, kind, address (two words), length (48 bits: word 5 and the low half
//! of word 6); then the memfd's descriptor number (word 6, high half) and the low 32 bits of its inode
//! (word 7). A signal's handle has no length: word 5 holds the signal's offset in the shared memory and the low
//! half of word 6 the number of shared pages.

use std::ffi::c_void;

use super::{nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::memory;
use crate::signal;

export! {
    fn hsa_amd_ipc_memory_create(ptr: *mut c_void, len: usize, handle: *mut [u32; 8]) -> Status = ffi::ERROR; {
        with(|r| {
            let (start, a) = r.allocation_of(ptr as u64).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            if start != ptr as u64 || len == 0 || len as u64 > a.size.next_multiple_of(4096) {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            nonnull(handle)?;
            if len as u64 >= 1 << 48 {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let (fd, ino, _) = memory::share(r, start)?;
            let mut h = ipc_handle(IPC_MEMORY, start, len as u64);
            h[6] |= fd << 16;
            h[7] = ino;
            // SAFETY: `handle` is null or points to storage for the result, as the API requires.
            unsafe { out(handle, h) }
        })
    }
    fn hsa_amd_ipc_memory_attach(handle: *const [u32; 8], len: usize, n: u32, agents: *const u64, mapped: *mut *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            // SAFETY: `agents` points to `n` elements that stay valid for the call, as the API requires.
            for &a in unsafe { slice(agents, n as usize) }? {
                r.agent(a)?;
            }
            nonnull(mapped)?;
            let (h, address, shared) = ipc_open(handle, IPC_MEMORY)?;
            if len == 0 || len as u64 > shared {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            if h[1] != std::process::id() {
                // SAFETY: `mapped` is null or points to storage for the result, as the API requires.
                return unsafe { out(mapped, memory::ipc_attach(r, h[1], (h[6] >> 16) as i32, h[7], len as u64)? as *mut c_void) };
            }
            let (start, a) = r.allocation_of(address).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            if start != address || len as u64 > a.size.next_multiple_of(4096) {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: `mapped` is null or points to storage for the result, as the API requires.
            unsafe { out(mapped, address as *mut c_void) }
        })
    }
    fn hsa_amd_ipc_memory_detach(mapped: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            if memory::unmap_foreign(r, mapped as u64) {
                return Ok(());
            }
            r.allocation_of(mapped as u64).filter(|(s, _)| *s == mapped as u64).map(drop).ok_or(ffi::ERROR_INVALID_ARGUMENT)
        })
    }
    // a signal made for IPC has a page of its own: the handle names its memfd and the signal's offset in it
    fn hsa_amd_ipc_signal_create(s: u64, handle: *mut [u32; 8]) -> Status = ffi::ERROR; {
        with(|r| {
            signal::value(r, s)?;
            nonnull(handle)?;
            if !r.signals.is_ipc(s) {
                eprintln!("wavejit: hsa_amd_ipc_signal_create: the signal was not created with HSA_AMD_SIGNAL_IPC");
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let (slab, ..) = r.mem.readable_at(s).ok_or(ffi::ERROR_INVALID_SIGNAL)?;
            let (fd, ino, span) = memory::share(r, slab)?;
            let pages = span / 4096;
            if pages >= 1 << 16 {
                return Err(ffi::ERROR_OUT_OF_RESOURCES);
            }
            let mut h = ipc_handle(IPC_SIGNAL, s, 0);
            h[5] = (s - slab) as u32;
            h[6] = pages as u32 | fd << 16;
            h[7] = ino;
            // SAFETY: `handle` is null or points to storage for the result, as the API requires.
            unsafe { out(handle, h) }
        })
    }
    fn hsa_amd_ipc_signal_attach(handle: *const [u32; 8], s: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            let (h, address, _) = ipc_open(handle, IPC_SIGNAL)?;
            nonnull(s)?;
            if h[1] == std::process::id() {
                signal::value(r, address)?;
                // SAFETY: `s` is null or points to storage for the result, as the API requires.
                return unsafe { out(s, address) };
            }
            let (offset, span) = (h[5] as u64, (h[6] & 0xffff) as u64 * 4096);
            if offset + ffi::AMD_SIGNAL_SIZE as u64 > span {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            // the mapping belongs to the signal (freed when it is destroyed)
            let mapping = memory::map_shared(r, h[1], (h[6] >> 16) as i32, h[7], span)?;
            r.signals.adopt(mapping + offset, mapping);
            // SAFETY: `s` is null or points to storage for the result, as the API requires.
            unsafe { out(s, mapping + offset) }
        })
    }
}

/// Word 0 of every handle this runtime makes.
const IPC_MAGIC: u32 = 0x5741_5645; // "WAVE"
/// Word 2: what the handle names.
const IPC_MEMORY: u32 = 0;
const IPC_SIGNAL: u32 = 1;

/// An IPC handle: magic, process, kind, address and length (48 bits); the caller fills in the rest.
fn ipc_handle(kind: u32, address: u64, len: u64) -> [u32; 8] {
    [
        IPC_MAGIC,
        std::process::id(),
        kind,
        address as u32,
        (address >> 32) as u32,
        len as u32,
        (len >> 32) as u32,
        0,
    ]
}

/// An IPC handle of `kind`: its words, and the address (in the creating process) and length it names (a
/// signal's handle names no length).
fn ipc_open(handle: *const [u32; 8], kind: u32) -> Result<([u32; 8], u64, u64), Status> {
    nonnull(handle)?;
    // SAFETY: checked non-null; the API requires a valid handle struct.
    let h = unsafe { *handle };
    if h[0] != IPC_MAGIC || h[2] != kind {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    Ok((
        h,
        (h[4] as u64) << 32 | h[3] as u64,
        (h[6] as u64 & 0xffff) << 32 | h[5] as u64,
    ))
}
