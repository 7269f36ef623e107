//! The driver's device files: real memory files (memfd) the kernel maps like any file.
//!
//! A program maps device memory by `mmap` of a device file at the offset an ioctl returned — ROCm's thunk
//! through libc, tinygrad through its own ctypes handle on libc, which no preload library sees. So `/dev/kfd` and
//! each `/dev/dri/renderD<N>` open a memory file, and every offset the driver hands out is a real offset into it:
//!
//! - a GPU's render node file holds its memory (VRAM and GTT buffer objects, at offsets the driver allocates);
//! - the kfd file holds each GPU's doorbell page and MMIO page ([`kfd_page`]).
//!
//! The driver keeps its own shared mapping of every file (its *view*): what the emulated GPU reads and writes.
//! The program's mappings and the view are the same pages, so neither needs the other's addresses, and the GPU
//! keeps its memory while the program unmaps or remaps its own.
//!
//! Opening a device file again returns another descriptor of the same file. Which descriptors are the driver's is
//! told by the inode ([`DeviceFile::owns`]), so `dup`, `fcntl(F_DUPFD_CLOEXEC)` and `close` need no tracking.
//!
//! Each file has the device number of the device it stands for ([`Number`]): the `stat` family, interposed in
//! src/hooks.c, reports a file of the driver as that character device, the type and number libdrm checks first
//! (`drmGetNodeTypeFromFd`, `drmGetDevice2`; both then look for `/sys/dev/char/226:N`, which exec's sysfs view
//! has not, so they fail with EINVAL; libdrm's `amdgpu_device_initialize` does without them). The numbers are
//! found by the file's identity (`st_dev`, `st_ino`) in a table read without a lock ([`number_of`]): a `stat`
//! comes from any thread, also while the driver is being made (which stats files of its own) and in a forked
//! child, whose inherited descriptors stay the devices they were.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// A character device's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Number {
    pub major: u32,
    pub minor: u32,
}

/// DRM's major number: render node `renderD<N>` is (226, N).
pub const DRM_MAJOR: u32 = 226;

/// `/dev/kfd`'s number. The kernel gives it a dynamic major (whatever `register_chrdev` finds free, often in the
/// 230s); this is one such, fixed.
pub const KFD_NUMBER: Number = Number { major: 235, minor: 0 };

/// A memory file and the driver's view of (a part of) it.
pub struct DeviceFile {
    fd: OwnedFd,
    inode: u64,
    /// Its place in the table of device numbers.
    slot: Option<usize>,
    view: *mut u8,
    /// The file offset the view starts at, and its length.
    view_offset: u64,
    len: u64,
}

// SAFETY: the view is shared memory the driver reads and writes through checked offsets; concurrent access by
// GPU threads and the program is what device memory is.
unsafe impl Send for DeviceFile {}
// SAFETY: as above.
unsafe impl Sync for DeviceFile {}

impl DeviceFile {
    /// A memory file of `len` bytes (sparse: pages exist once touched) standing for device `number`, mapped whole
    /// as the driver's view.
    pub fn new(name: &str, len: u64, number: Number) -> std::io::Result<DeviceFile> {
        let err = std::io::Error::last_os_error;
        let cname = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
        // SAFETY: memfd_create with a NUL-terminated name; the descriptor is owned from here on.
        let raw = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(err());
        }
        // SAFETY: a fresh descriptor this function owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: plain syscalls on the descriptor this function owns.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(err());
        }
        // SAFETY: a shared mapping of the whole file at an address the kernel picks; NORESERVE keeps untouched
        // pages free.
        let view = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_NORESERVE,
                fd.as_raw_fd(),
                0,
            )
        };
        if view == libc::MAP_FAILED {
            return Err(err());
        }
        let (dev, inode) = identity(fd.as_raw_fd()).ok_or_else(err)?;
        Ok(DeviceFile {
            fd,
            inode,
            slot: register(dev, inode, number),
            view: view.cast(),
            view_offset: 0,
            len,
        })
    }

    /// The part `[offset, offset + len)` of the memory file `fd` (which this takes over), as this process's
    /// view: a GPU's memory shared by the processes of one `wavejit exec`, each allocating in a part of its own.
    pub fn part_of(fd: OwnedFd, offset: u64, len: u64, number: Number) -> std::io::Result<DeviceFile> {
        let err = std::io::Error::last_os_error;
        let (dev, inode) = identity(fd.as_raw_fd()).ok_or_else(err)?;
        let view = map_shared(&fd, offset, len)?;
        Ok(DeviceFile {
            fd,
            inode,
            slot: register(dev, inode, number),
            view,
            view_offset: offset,
            len,
        })
    }

    /// A mapping of `[offset, offset + len)` of the file beside the view (memory another process allocated in the
    /// shared file, imported): the pointer to its first byte. The caller unmaps it ([`unmap`]).
    pub fn map_range(&self, offset: u64, len: u64) -> std::io::Result<*mut u8> {
        map_shared(&self.fd, offset, len)
    }

    /// A new descriptor of this file, as `open` of the device returns one (close-on-exec when `cloexec`).
    pub fn open(&self, cloexec: bool) -> std::io::Result<RawFd> {
        let cmd = if cloexec { libc::F_DUPFD_CLOEXEC } else { libc::F_DUPFD };
        // SAFETY: duplicating a descriptor this file owns.
        let fd = unsafe { libc::fcntl(self.fd.as_raw_fd(), cmd, 0) };
        if fd < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(fd)
        }
    }

    /// Whether `fd` (a descriptor of the program) is this file.
    pub fn owns(&self, fd: RawFd) -> bool {
        identity(fd).map(|(_, ino)| ino) == Some(self.inode)
    }

    /// The driver's pointer to byte `offset` of the file, for `len` bytes inside its view.
    pub fn at(&self, offset: u64, len: u64) -> Option<*mut u8> {
        let rel = offset.checked_sub(self.view_offset)?;
        let end = rel.checked_add(len)?;
        // SAFETY: rel lies inside the view (checked just above).
        (end <= self.len).then(|| unsafe { self.view.add(rel as usize) })
    }

    /// The file offsets of the view: `[start, end)`.
    pub fn view_range(&self) -> (u64, u64) {
        (self.view_offset, self.view_offset + self.len)
    }

    /// The file's descriptor.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Gives the pages of `[offset, offset + len)` back (they read as zero afterwards), as freeing a buffer
    /// object does.
    pub fn discard(&self, offset: u64, len: u64) {
        if self.at(offset, len).is_none() || len == 0 {
            return;
        }
        // SAFETY: punching a hole inside the file this struct owns.
        unsafe {
            libc::fallocate(
                self.fd.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            );
        }
    }
}

impl Drop for DeviceFile {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            NUMBERS[slot].ino.store(FREE, Ordering::Release);
        }
        // SAFETY: unmapping the view this struct made; nothing refers into it once the file is dropped.
        unsafe {
            libc::munmap(self.view.cast(), self.len as usize);
        }
    }
}

/// A shared mapping of `[offset, offset + len)` of `fd` at an address the kernel picks.
fn map_shared(fd: &OwnedFd, offset: u64, len: u64) -> std::io::Result<*mut u8> {
    // SAFETY: a shared mapping of the file at an address the kernel picks; NORESERVE keeps untouched pages free.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE,
            fd.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(p.cast())
    }
}

/// Unmaps what [`DeviceFile::map_range`] mapped.
pub fn unmap(p: *mut u8, len: u64) {
    // SAFETY: the caller passes a mapping map_range made, which nothing refers to any more.
    unsafe {
        libc::munmap(p.cast(), len as usize);
    }
}

/// The identity of the file `fd`: (`st_dev`, `st_ino`).
fn identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: fstat writes one stat into the zeroed buffer; an invalid descriptor only returns -1.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

/// One device file in the table of numbers: its identity and number. `ino` is written last (and [`FREE`] when
/// the slot is free, [`BUSY`] while it is being filled), so a reader that sees an inode sees the rest.
struct Slot {
    ino: AtomicU64,
    dev: AtomicU64,
    /// `major << 32 | minor`.
    number: AtomicU64,
}

const FREE: u64 = 0;
const BUSY: u64 = u64::MAX;
/// Device files alive at once: a kfd file and a render node file per GPU, and the tests' own.
const SLOTS: usize = 128;

#[allow(clippy::declare_interior_mutable_const)] // the initializer of each slot of the static table
const EMPTY: Slot = Slot {
    ino: AtomicU64::new(FREE),
    dev: AtomicU64::new(0),
    number: AtomicU64::new(0),
};
static NUMBERS: [Slot; SLOTS] = [EMPTY; SLOTS];

/// Enters the file (`dev`, `ino`) into the table as device `number`; `None` when the table is full (its `stat`
/// then says it is a memory file).
fn register(dev: u64, ino: u64, number: Number) -> Option<usize> {
    let slot = NUMBERS.iter().position(|s| {
        s.ino
            .compare_exchange(FREE, BUSY, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })?;
    let s = &NUMBERS[slot];
    s.dev.store(dev, Ordering::Relaxed);
    s.number
        .store((number.major as u64) << 32 | number.minor as u64, Ordering::Relaxed);
    s.ino.store(ino, Ordering::Release);
    Some(slot)
}

/// The device number of the file (`dev`, `ino`) when it is one of the driver's device files.
pub fn number_of(dev: u64, ino: u64) -> Option<Number> {
    if ino == FREE || ino == BUSY {
        return None;
    }
    let s = NUMBERS
        .iter()
        .find(|s| s.ino.load(Ordering::Acquire) == ino && s.dev.load(Ordering::Relaxed) == dev)?;
    let n = s.number.load(Ordering::Relaxed);
    Some(Number {
        major: (n >> 32) as u32,
        minor: n as u32,
    })
}

/// This process's part of the shared memory file `fd` of GPU `preset` (`gpu::vram`): the next part free.
pub fn shared_part(fd: RawFd, preset: &emu_core::DevicePreset, number: Number) -> std::io::Result<DeviceFile> {
    // SAFETY: duplicating the inherited descriptor; the duplicate is owned from here on (the original stays the
    // program's, for its children).
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor this function owns.
    let fd = unsafe { OwnedFd::from_raw_fd(dup) };
    let header = map_shared(&fd, 0, 4096)?;
    // SAFETY: the header page is mapped; its first u64 is the counter, changed only atomically.
    let n = unsafe { std::sync::atomic::AtomicU64::from_ptr(header.cast::<u64>()) }
        .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    unmap(header, 4096);
    if n >= gpu::vram::PARTS {
        return Err(std::io::Error::other(format!(
            "more than {} processes of one wavejit exec opened this GPU",
            gpu::vram::PARTS
        )));
    }
    DeviceFile::part_of(
        fd,
        gpu::vram::part_offset(preset, n),
        gpu::vram::part_len(preset),
        number,
    )
}

/// Bytes of the kfd file given to each GPU (the file is sparse): its doorbell page (8 KiB: 1024 doorbells of 8
/// bytes, as gfx9 has) and its MMIO page after it. A GPU's part starts at a multiple of 2^32, as the kernel's
/// doorbell offsets keep the page's token in their high half: ROCm 5.2's thunk takes the mmap offset of a GPU's
/// first queue's doorbell page as the offset's high 32 bits (before it knows the page's size).
pub const KFD_PER_GPU: u64 = 1 << 32;
/// The doorbell page's size.
pub const DOORBELL_PAGE: u64 = 8 << 10;
/// Where a GPU's MMIO page (the HDP flush registers) lies in its part of the kfd file.
pub const MMIO_OFFSET: u64 = DOORBELL_PAGE;

/// Offset of GPU `gpu`'s part of the kfd file.
pub fn kfd_page(gpu: usize) -> u64 {
    gpu as u64 * KFD_PER_GPU
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_file_is_shared_memory_its_descriptors_map() {
        let f = DeviceFile::new("test", 1 << 30, KFD_NUMBER).unwrap();
        let fd = f.open(true).unwrap();
        assert!(f.owns(fd));
        assert!(!f.owns(0) || identity(0).map(|i| i.1) == Some(f.inode));
        // the program's mapping and the driver's view are the same pages
        // SAFETY: mapping one page of the file the test owns.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0x10000,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: both pointers cover the mapped page.
        unsafe {
            *(p as *mut u32) = 0xdead_beef;
            assert_eq!(*(f.at(0x10000, 4).unwrap() as *const u32), 0xdead_beef);
        }
        f.discard(0x10000, 4096);
        // SAFETY: as above.
        unsafe {
            assert_eq!(*(p as *const u32), 0, "a discarded page reads as zero");
            libc::munmap(p, 4096);
            libc::close(fd);
        }
        assert!(f.at(1 << 30, 1).is_none());
    }

    #[test]
    fn a_device_files_identity_gives_its_device_number_while_it_lives() {
        let number = Number {
            major: DRM_MAJOR,
            minor: 200,
        };
        let f = DeviceFile::new("test-number", 4096, number).unwrap();
        let fd = f.open(true).unwrap();
        let (dev, ino) = identity(fd).unwrap();
        assert_eq!(number_of(dev, ino), Some(number));
        assert_eq!(
            number_of(dev ^ 1, ino),
            None,
            "the inode of another file system is another file"
        );
        drop(f);
        assert_eq!(number_of(dev, ino), None, "a dropped device file is no device");
        // SAFETY: closing the descriptor the test opened.
        unsafe { libc::close(fd) };
    }
}
