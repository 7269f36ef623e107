//! The host mapping behind the device address space, and the page operations on it.

use super::AllocError;

/// The host mapping behind the device address space.
pub(super) struct Arena {
    pub(super) ptr: *mut u8,
    pub(super) len: usize,
}

// SAFETY: the arena is plain memory; all access goes through bounds-checked methods of DeviceMemory. Guest
// code races on it the way kernels race on real device memory (see `DeviceMemory::write`).
unsafe impl Send for Arena {}
// SAFETY: as above.
unsafe impl Sync for Arena {}

impl Arena {
    pub(super) fn reserve(len: u64) -> Result<Arena, AllocError> {
        let bytes = usize::try_from(len).map_err(|_| AllocError::Reserve {
            bytes: len,
            reason: "too large".into(),
        })?;
        // SAFETY: an anonymous private mapping with no fixed address; the kernel picks the range. NORESERVE
        // keeps untouched pages free of cost.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(AllocError::Reserve {
                bytes: len,
                reason: std::io::Error::last_os_error().to_string(),
            });
        }
        Ok(Arena {
            ptr: p.cast(),
            len: bytes,
        })
    }

    /// Maps `fd` (from its start) shared over `[off, off+len)`.
    pub(super) fn map_fd(&self, off: u64, len: u64, fd: &std::os::fd::OwnedFd) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: the range is inside the arena (an allocation's span); MAP_FIXED replaces exactly it.
        let p = unsafe {
            libc::mmap(
                self.ptr.add(off as usize).cast(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Backs the pages of `[off, off+len)` with a new memfd of the same contents, mapped shared in place, so
    /// another process can map the same bytes.
    pub(super) fn share(&self, off: u64, len: u64) -> std::io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::{FromRawFd, OwnedFd};
        let err = std::io::Error::last_os_error;
        // SAFETY: memfd_create with a NUL-terminated name; the fd is owned from here on.
        let fd = unsafe { libc::memfd_create(c"wavejit-ipc".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(err());
        }
        // SAFETY: a fresh fd this function owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        use std::os::fd::AsRawFd;
        // SAFETY: plain syscalls on the memfd; the copy reads `len` bytes of the arena at `off`, which callers
        // pass inside a live allocation, and writes them to the memfd mapped for that purpose.
        unsafe {
            if libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) != 0 {
                return Err(err());
            }
            let tmp = libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            );
            if tmp == libc::MAP_FAILED {
                return Err(err());
            }
            std::ptr::copy_nonoverlapping(self.ptr.add(off as usize), tmp.cast::<u8>(), len as usize);
            libc::munmap(tmp, len as usize);
        }
        self.map_fd(off, len, &fd)?;
        Ok(fd)
    }

    /// Puts private anonymous pages back over `[off, off+len)` (after [`Arena::share`]).
    pub(super) fn unshare(&self, off: u64, len: u64) {
        // SAFETY: the range is inside the arena (a shared allocation's span); MAP_FIXED replaces exactly it.
        unsafe {
            libc::mmap(
                self.ptr.add(off as usize).cast(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            );
        }
    }

    /// Gives the pages of `[off, off+len)` back to the host (they read as zero afterwards).
    pub(super) fn discard(&self, off: u64, len: u64) {
        if len == 0 {
            return;
        }
        // SAFETY: callers pass page-aligned ranges inside the arena (allocation starts and sizes are
        // page-aligned); MADV_DONTNEED on private anonymous memory only drops contents.
        unsafe {
            libc::madvise(self.ptr.add(off as usize).cast(), len as usize, libc::MADV_DONTNEED);
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: unmapping the exact range mmap returned; no references into it outlive DeviceMemory.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}
