//! Windows: ranges of one live allocation checked once, and the copies guest accesses make.

use super::{Access, DeviceMemory};

/// A range of one live allocation, checked once ([`DeviceMemory::window`]).
pub struct Window<'a> {
    mem: &'a DeviceMemory,
    start: u64,
    len: u64,
    /// Arena offset of `start`.
    off: u64,
}

impl Window<'_> {
    /// Arena offset of `[address, address + n)`, if inside the window.
    fn inside(&self, address: u64, n: usize) -> Option<usize> {
        let rel = address.checked_sub(self.start)?;
        (rel + n as u64 <= self.len).then(|| self.off.wrapping_add(rel) as usize)
    }

    /// Reads `buf.len()` bytes at `address`; false (nothing read) if they are not all inside the window.
    pub fn read(&self, address: u64, buf: &mut [u8]) -> bool {
        let Some(off) = self.inside(address, buf.len()) else {
            return false;
        };
        // SAFETY: the window was checked to lie inside a live allocation in the arena, and [off, off+len) is
        // inside the window.
        unsafe { copy_from_guest(self.mem.ptr(off as u64), buf) };
        true
    }

    /// Writes `data` at `address`; false (nothing written) if it is not all inside the window.
    pub fn write(&self, address: u64, data: &[u8]) -> bool {
        let Some(off) = self.inside(address, data.len()) else {
            return false;
        };
        // SAFETY: as in `read`.
        unsafe { copy_to_guest(data, self.mem.ptr(off as u64)) };
        true
    }
}

/// A guest read's copy out of device memory into `dst`: a naturally aligned 8-byte one is one 64-bit load, as
/// a GPU's 64-bit access is single-copy atomic (another wave's 64-bit store, on another host thread, is seen
/// whole or not at all; a decoupled look-back publishes its flag and value so).
///
/// # Safety
/// `src` points to `dst.len()` readable bytes.
pub(super) unsafe fn copy_from_guest(src: *const u8, dst: &mut [u8]) {
    if dst.len() == 8 && (src as usize).is_multiple_of(8) {
        // SAFETY: 8 readable bytes at an 8-byte aligned address; AtomicU64 has u64's size and alignment.
        let v = unsafe { (*src.cast::<std::sync::atomic::AtomicU64>()).load(std::sync::atomic::Ordering::Relaxed) };
        dst.copy_from_slice(&v.to_ne_bytes());
    } else {
        // SAFETY: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
    }
}

/// A guest write's copy of `src` into device memory, as [`copy_from_guest`]: an aligned 8-byte one is one
/// 64-bit store.
///
/// # Safety
/// `dst` points to `src.len()` writable bytes.
pub(super) unsafe fn copy_to_guest(src: &[u8], dst: *mut u8) {
    if src.len() == 8 && (dst as usize).is_multiple_of(8) {
        let v = u64::from_ne_bytes(src.try_into().expect("8 bytes"));
        // SAFETY: as in `copy_from_guest`, writable.
        unsafe { (*dst.cast::<std::sync::atomic::AtomicU64>()).store(v, std::sync::atomic::Ordering::Relaxed) };
    } else {
        // SAFETY: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
    }
}

impl DeviceMemory {
    /// A view of `[address, address + len)` when that range lies inside one live allocation: accesses within it
    /// need no further lookup (a whole wave's accesses checked at once).
    pub fn window(&self, address: u64, len: u64, access: Access) -> Option<Window<'_>> {
        let off = self.check(address, len, access).ok()?;
        Some(Window {
            mem: self,
            start: address,
            len,
            off,
        })
    }
}
