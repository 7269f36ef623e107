//! Device memory: a large, sparse emulated address space where every guest access is checked.
//!
//! The arena is one anonymous host mapping reserved without backing (`MAP_NORESERVE`): an emulated 192 GiB
//! card costs only the pages a program touches. Allocations are handed out from a bump pointer with a guard
//! gap between them, and their addresses are not reused until the space runs out, so an access through a
//! dangling pointer is reported as "inside an allocation freed earlier" rather than silently hitting new data.
//!
//! Every access goes through [`DeviceMemory::read`]/[`DeviceMemory::write`] (or [`DeviceMemory::check`]): an
//! address outside the live allocations becomes a [`MemoryFault`] that says where the address lies relative to
//! the nearest allocation. No guest address can reach host memory outside the arena.
//!
//! Kernels' accesses are checked by the device's rule, [`DeviceMemory::check_guest`]: a GPU maps memory by the
//! page, so an access outside its allocation's bytes but inside the allocation's pages (its *slack*: the rest of
//! its last page) does not fault; it reads and writes those bytes, and the result says so ([`Within::Pages`]),
//! for the engine to count. In memcheck mode ([`DeviceMemory::set_memcheck`]) every byte outside the allocation
//! faults, as host-side accesses always do. Slack stays inside the allocation's own span, so the invariant holds.
//!
//! A device address is the host address of the same byte in the arena (one unified virtual address space, as
//! ROCm gives a process): host code handed a device pointer — a HIP program through the HSA runtime shim —
//! reads and writes it directly, and kernels reach host-visible memory (kernel arguments, signals, pinned host
//! buffers) that was allocated in the arena.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;

/// Allocation granularity and the guard gap left after every allocation.
pub const PAGE: u64 = 4096;

/// Spans from which [`DeviceMemory::clear`] zeroes by giving the pages back to the host rather than by storing
/// zeros: below it, the stores cost less than the page faults (and the host's zeroing) that touching the
/// pages again would.
pub const CLEAR_BY_PAGES: u64 = 256 << 10;

/// What an allocation holds (for fault reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    /// A device buffer (hipMalloc, hsa_amd_memory_pool_allocate, `--arg in=...`).
    Buffer,
    /// A kernel argument segment.
    Kernarg,
    /// Loaded code.
    Code,
    /// Scratch (private) memory backing.
    Scratch,
    /// Device addresses of pinned host memory ([`DeviceMemory::alias_host`]): accesses reach the host bytes.
    Pinned,
}

impl fmt::Display for AllocKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AllocKind::Buffer => "allocation",
            AllocKind::Kernarg => "kernarg segment",
            AllocKind::Code => "code object",
            AllocKind::Scratch => "scratch area",
            AllocKind::Pinned => "pinned host memory",
        })
    }
}

#[derive(Debug, Clone)]
struct Allocation {
    size: u64,
    kind: AllocKind,
    label: String,
    live: bool,
    /// For code: the (offset, length) ranges kernels may write — the code object's data sections (`__device__`
    /// variables live there, at fixed distances from the code that addresses them PC-relatively).
    writable: Vec<(u64, u64)>,
    /// For pinned host memory: the host address the range stands for.
    alias: Option<u64>,
    /// For memory shared with other processes ([`DeviceMemory::share`]): the memfd now backing its pages.
    shared: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
    /// Fine-grained (coherent with the host during a kernel): see [`DeviceMemory::set_fine_grained`].
    fine_grained: bool,
}

/// A read or a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
        })
    }
}

/// A guest access that hit no live allocation: what a GPU page fault would be, with the context to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{access} of {len} bytes at {address:#x}: {location}")]
pub struct MemoryFault {
    pub access: Access,
    pub address: u64,
    pub len: u64,
    /// Where the address lies: "12 bytes past the end of the 4096-byte allocation at 0x… (x)", ...
    pub location: String,
}

/// Where a guest access that did not fault lies ([`DeviceMemory::check_guest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Within {
    /// Inside its allocation's bytes.
    Allocation,
    /// Partly or wholly outside its allocation's bytes, inside the allocation's pages (its slack).
    Pages,
}

/// A guest access in an allocation's slack ([`Within::Pages`]), described as a [`MemoryFault`] would be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{access} of {len} bytes at {address:#x}: {location}")]
pub struct Slack {
    pub access: Access,
    pub address: u64,
    pub len: u64,
    /// How far past the end the access reaches: "8 bytes past the end of the 288-byte allocation at 0x… (x)".
    pub location: String,
}

/// Why memory could not be allocated or freed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error("out of device memory: {requested} bytes requested, {available} of {capacity} bytes free")]
    OutOfMemory {
        requested: u64,
        available: u64,
        capacity: u64,
    },
    #[error("{address:#x} is not the start of a live allocation")]
    NotAllocated { address: u64 },
    #[error("could not reserve {bytes} bytes of host address space: {reason}")]
    Reserve { bytes: u64, reason: String },
}

/// The host mapping behind the device address space.
struct Arena {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the arena is plain memory; all access goes through bounds-checked methods of DeviceMemory. Guest
// code races on it the way kernels race on real device memory (see `DeviceMemory::write`).
unsafe impl Send for Arena {}
// SAFETY: as above.
unsafe impl Sync for Arena {}

impl Arena {
    fn reserve(len: u64) -> Result<Arena, AllocError> {
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
    fn map_fd(&self, off: u64, len: u64, fd: &std::os::fd::OwnedFd) -> std::io::Result<()> {
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
    fn share(&self, off: u64, len: u64) -> std::io::Result<std::os::fd::OwnedFd> {
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
    fn unshare(&self, off: u64, len: u64) {
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
    fn discard(&self, off: u64, len: u64) {
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

struct State {
    allocs: BTreeMap<u64, Allocation>,
    /// Host memory outside the arena that kernels may access (pinned with `hsa_amd_memory_lock`, or mapped by
    /// an emulated driver): device start address → (length, label, host address of the first byte,
    /// fine-grained).
    host: BTreeMap<u64, (u64, String, u64, bool)>,
    /// Next never-used address.
    bump: u64,
    /// Bytes held by live allocations.
    used: u64,
}

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
unsafe fn copy_from_guest(src: *const u8, dst: &mut [u8]) {
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
unsafe fn copy_to_guest(src: &[u8], dst: *mut u8) {
    if src.len() == 8 && (dst as usize).is_multiple_of(8) {
        let v = u64::from_ne_bytes(src.try_into().expect("8 bytes"));
        // SAFETY: as in `copy_from_guest`, writable.
        unsafe { (*dst.cast::<std::sync::atomic::AtomicU64>()).store(v, std::sync::atomic::Ordering::Relaxed) };
    } else {
        // SAFETY: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
    }
}

/// The emulated device memory of one GPU.
pub struct DeviceMemory {
    arena: Arena,
    capacity: u64,
    state: RwLock<State>,
    /// Distinguishes this memory from every other in the process (for [`LAST_HIT`]).
    id: u64,
    /// Device address of the arena's first byte (its host address).
    base: u64,
    /// Bumped whenever an allocation is made or freed: a [`LAST_HIT`] of an older generation is stale.
    generation: AtomicU64,
    /// Guest accesses get no slack ([`DeviceMemory::set_memcheck`]).
    memcheck: AtomicBool,
}

/// The allocation a host thread's last successful check landed in: (memory id, generation, arena start, arena
/// end, kind). Waves access the same few buffers over and over; checking against this first keeps host threads
/// off the shared lock (whose reader count every check would otherwise bounce between cores).
#[derive(Clone, Copy)]
struct LastHit {
    id: u64,
    generation: u64,
    start: u64,
    end: u64,
    kind: AllocKind,
}

thread_local! {
    static LAST_HIT: Cell<Option<LastHit>> = const { Cell::new(None) };
}

static NEXT_MEMORY_ID: AtomicU64 = AtomicU64::new(1);

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

impl DeviceMemory {
    /// A device memory of `capacity` bytes. Twice that much address space is reserved, so freed addresses stay
    /// recognisable for a long time.
    pub fn new(capacity: u64) -> Result<DeviceMemory, AllocError> {
        let arena = Arena::reserve(capacity.saturating_mul(2).max(PAGE))?;
        Ok(DeviceMemory {
            base: arena.ptr as u64,
            arena,
            capacity,
            state: RwLock::new(State {
                allocs: BTreeMap::new(),
                host: BTreeMap::new(),
                bump: 0,
                used: 0,
            }),
            id: NEXT_MEMORY_ID.fetch_add(1, Ordering::Relaxed),
            generation: AtomicU64::new(0),
            memcheck: AtomicBool::new(false),
        })
    }

    /// The host pointer of offset `off` from the base (offsets of mapped host memory wrap around).
    fn ptr(&self, off: u64) -> *mut u8 {
        self.base.wrapping_add(off) as *mut u8
    }

    /// Lets kernels access `len` bytes of host memory at `address` (outside the arena), as ROCm lets GPUs
    /// access pinned host memory. The caller keeps the memory valid until [`DeviceMemory::unmap_host`].
    pub fn map_host(&self, address: u64, len: u64, label: &str) -> Result<(), AllocError> {
        self.map_host_at(address, len, address, label)
    }

    /// Lets kernels access `len` bytes at device address `address` (outside the arena) whose bytes are the host
    /// memory at `host`: a GPU page-table mapping, as an emulated driver makes them (the device address being
    /// where the program sees the buffer, `host` where the driver keeps it). The caller keeps the host memory
    /// valid until [`DeviceMemory::unmap_host`].
    pub fn map_host_at(&self, address: u64, len: u64, host: u64, label: &str) -> Result<(), AllocError> {
        let end = address.checked_add(len).ok_or(AllocError::NotAllocated { address })?;
        let arena_end = self.base + self.arena.len as u64;
        if len == 0 || (address < arena_end && end > self.base) || host.checked_add(len).is_none() {
            return Err(AllocError::NotAllocated { address });
        }
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        let overlaps = st
            .host
            .range(..end)
            .next_back()
            .is_some_and(|(&s, (n, _, _, _))| s + n > address);
        if overlaps {
            return Err(AllocError::NotAllocated { address });
        }
        st.host.insert(address, (len, label.to_string(), host, false));
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Gives `len` bytes of host memory at `host` a device address range of their own (a [`AllocKind::Pinned`]
    /// allocation that reaches the host bytes): what locking host memory for a GPU returns. The caller keeps
    /// the host memory valid until the range is freed.
    pub fn alias_host(&self, host: u64, len: u64, label: &str) -> Result<u64, AllocError> {
        let address = self.allocate(len, AllocKind::Pinned, label)?;
        let off = address - self.base;
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = st.allocs.get_mut(&off) {
            a.alias = Some(host);
        }
        self.generation.fetch_add(1, Ordering::Release);
        Ok(address)
    }

    /// The host address of device address `address`: itself, unless it lies in pinned host memory's device range.
    pub fn host_address(&self, address: u64) -> u64 {
        self.holding(address, |start, a| a.alias.map(|h| h + (address - self.base - start)))
            .unwrap_or(address)
    }

    /// Ends a [`DeviceMemory::map_host`].
    pub fn unmap_host(&self, address: u64) -> Result<(), AllocError> {
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        st.host.remove(&address).ok_or(AllocError::NotAllocated { address })?;
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// What tells this memory's allocations apart from another's, and from themselves earlier: its number and
    /// how many times allocations were made, freed, mapped or unmapped. While both stay the same, every
    /// allocation and mapping is as it was.
    pub fn version(&self) -> (u64, u64) {
        (self.id, self.generation.load(Ordering::Acquire))
    }

    /// Device address of the first byte of the arena (also its host address: see the module documentation).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Whether `[address, address + len)` lies in a live allocation that host code may read and write
    /// directly (any kind but code).
    pub fn host_accessible(&self, address: u64, len: u64) -> bool {
        self.check(address, len, Access::Write).is_ok()
    }

    /// Whether `[address, address + len)` touches the address range this memory reserves.
    pub fn overlaps(&self, address: u64, len: u64) -> bool {
        address < self.base + self.arena.len as u64 && address.saturating_add(len) > self.base
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes held by live allocations.
    pub fn used(&self) -> u64 {
        self.state.read().unwrap_or_else(|e| e.into_inner()).used
    }

    /// Allocates `size` bytes (page-granular, zero-filled) and returns the device address.
    pub fn allocate(&self, size: u64, kind: AllocKind, label: &str) -> Result<u64, AllocError> {
        let size = size.max(1);
        let span = round_up(size, PAGE);
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        if st.used + span > self.capacity {
            return Err(AllocError::OutOfMemory {
                requested: size,
                available: self.capacity - st.used,
                capacity: self.capacity,
            });
        }
        let arena_len = self.arena.len as u64;
        let offset = if st.bump + span + PAGE <= arena_len {
            let o = st.bump;
            st.bump += span + PAGE; // guard gap
            o
        } else {
            // address space exhausted: reuse the first freed range that fits (its record goes away)
            let reuse = st
                .allocs
                .iter()
                .filter(|(_, a)| !a.live)
                .map(|(&off, a)| (off, round_up(a.size, PAGE)))
                .find(|&(off, _)| {
                    let end = off + span;
                    end <= arena_len && st.allocs.range(off + 1..end + PAGE).next().is_none()
                })
                .map(|(off, _)| off)
                .ok_or(AllocError::OutOfMemory {
                    requested: size,
                    available: self.capacity - st.used,
                    capacity: self.capacity,
                })?;
            st.allocs.remove(&reuse);
            reuse
        };
        st.allocs.insert(
            offset,
            Allocation {
                size,
                kind,
                label: label.to_string(),
                live: true,
                writable: Vec::new(),
                alias: None,
                shared: None,
                fine_grained: false,
            },
        );
        st.used += span;
        self.generation.fetch_add(1, Ordering::Release);
        Ok(self.base + offset)
    }

    /// (address, size) of every live allocation of `kind`, in address order.
    pub fn allocations(&self, kind: AllocKind) -> Vec<(u64, u64)> {
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        st.allocs
            .iter()
            .filter(|(_, a)| a.live && a.kind == kind)
            .map(|(o, a)| (self.base + o, a.size))
            .collect()
    }

    /// A copy of every live device buffer: (address, contents of its pages, slack included) — to run a dispatch
    /// twice from the same state.
    pub fn snapshot_buffers(&self) -> Result<Vec<(u64, Vec<u8>)>, MemoryFault> {
        self.snapshot(&[AllocKind::Buffer])
    }

    /// [`DeviceMemory::snapshot_buffers`] of every live allocation of `kinds`, kind by kind (buffers with their
    /// pages' slack, the others their bytes).
    pub fn snapshot(&self, kinds: &[AllocKind]) -> Result<Vec<(u64, Vec<u8>)>, MemoryFault> {
        kinds
            .iter()
            .flat_map(|&kind| {
                self.allocations(kind).into_iter().map(move |(a, n)| {
                    (
                        a,
                        if kind == AllocKind::Buffer {
                            round_up(n.max(1), PAGE)
                        } else {
                            n
                        },
                    )
                })
            })
            .map(|(a, n)| {
                let mut b = vec![0u8; n as usize];
                let off = self.check_span(a, b.len() as u64, Access::Read)?;
                // SAFETY: `check_span` proved [off, off+len) lies in a live allocation's page span inside the arena.
                unsafe { std::ptr::copy_nonoverlapping(self.ptr(off), b.as_mut_ptr(), b.len()) };
                Ok((a, b))
            })
            .collect()
    }

    /// Writes the buffers of a [`DeviceMemory::snapshot_buffers`] back.
    pub fn restore_buffers(&self, snapshot: &[(u64, Vec<u8>)]) -> Result<(), MemoryFault> {
        snapshot.iter().try_for_each(|(a, b)| {
            let off = self.check_span(*a, b.len() as u64, Access::Write)?;
            // SAFETY: as in `snapshot_buffers`.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), self.ptr(off), b.len()) };
            Ok(())
        })
    }

    /// Arena offset of `[address, address + len)` when it lies inside the pages of one live buffer.
    fn check_span(&self, address: u64, len: u64, access: Access) -> Result<u64, MemoryFault> {
        match self.check(address, len, access) {
            Ok(off) => Ok(off),
            Err(fault) => self.in_pages(address, len, access).ok_or(fault),
        }
    }

    /// Lets kernels write the (offset, length) `ranges` of the code allocation at `address` (its data sections).
    pub fn set_code_writable(&self, address: u64, ranges: &[(u64, u64)]) -> Result<(), AllocError> {
        let off = address
            .checked_sub(self.base)
            .ok_or(AllocError::NotAllocated { address })?;
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        let a = st
            .allocs
            .get_mut(&off)
            .filter(|a| a.live && a.kind == AllocKind::Code)
            .ok_or(AllocError::NotAllocated { address })?;
        a.writable = ranges.to_vec();
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Marks the allocation starting at `address` fine-grained: memory the host and the device share coherently
    /// while a kernel runs (HSA's fine-grained pools), which the device does not cache for writes.
    pub fn set_fine_grained(&self, address: u64) -> Result<(), AllocError> {
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = st.host.get_mut(&address) {
            h.3 = true;
            return Ok(());
        }
        let off = address
            .checked_sub(self.base)
            .ok_or(AllocError::NotAllocated { address })?;
        let a = st
            .allocs
            .get_mut(&off)
            .filter(|a| a.live)
            .ok_or(AllocError::NotAllocated { address })?;
        a.fine_grained = true;
        Ok(())
    }

    /// Whether `address` lies in a live fine-grained allocation (or mapped host memory marked so).
    pub fn fine_grained(&self, address: u64) -> bool {
        if !self.overlaps(address, 1) {
            let st = self.state.read().unwrap_or_else(|e| e.into_inner());
            return st
                .host
                .range(..=address)
                .next_back()
                .is_some_and(|(&s, &(n, _, _, fine))| fine && address < s + n);
        }
        self.holding(address, |_, a| Some(a.fine_grained)).unwrap_or(false)
    }

    /// Sets `[address, address + len)`, inside one live allocation of the arena, to zero: a span of
    /// [`CLEAR_BY_PAGES`] bytes or more by giving its whole pages back to the host (they read as zero and cost
    /// only when touched again), the rest with stores.
    pub fn clear(&self, address: u64, len: u64) -> Result<(), AllocError> {
        let off = self
            .check(address, len, Access::Write)
            .map_err(|_| AllocError::NotAllocated { address })?;
        if !self.overlaps(address, len) {
            return Err(AllocError::NotAllocated { address });
        }
        let pages = if len >= CLEAR_BY_PAGES && off % PAGE == 0 {
            len / PAGE * PAGE
        } else {
            0
        };
        self.arena.discard(off, pages);
        // SAFETY: `check` proved [off, off+len) lies inside a live allocation inside the arena.
        unsafe { std::ptr::write_bytes(self.ptr(off + pages), 0, (len - pages) as usize) };
        Ok(())
    }

    /// Frees the allocation starting at `address`; its pages go back to the host.
    pub fn free(&self, address: u64) -> Result<(), AllocError> {
        let off = address
            .checked_sub(self.base)
            .ok_or(AllocError::NotAllocated { address })?;
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        let a = st
            .allocs
            .get_mut(&off)
            .filter(|a| a.live)
            .ok_or(AllocError::NotAllocated { address })?;
        a.live = false;
        self.generation.fetch_add(1, Ordering::Release);
        let span = round_up(a.size, PAGE);
        let shared = a.shared.take();
        st.used -= span;
        if shared.is_some() {
            // other processes keep their own mappings of the memfd; this range gets fresh private pages
            self.arena.unshare(off, span);
        } else {
            self.arena.discard(off, span);
        }
        Ok(())
    }

    /// A new allocation of `len` bytes whose pages are those of `fd` (memory another process shared with
    /// [`DeviceMemory::share`]), mapped shared; freeing it unmaps them.
    pub fn allocate_shared(&self, fd: std::os::fd::OwnedFd, len: u64, label: &str) -> Result<u64, AllocError> {
        let address = self.allocate(len, AllocKind::Buffer, label)?;
        let off = address - self.base;
        if let Err(e) = self.arena.map_fd(off, round_up(len, PAGE), &fd) {
            let _ = self.free(address);
            return Err(AllocError::Reserve {
                bytes: len,
                reason: format!("mapping shared memory: {e}"),
            });
        }
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = st.allocs.get_mut(&off) {
            a.shared = Some(std::sync::Arc::new(fd));
        }
        Ok(address)
    }

    /// Makes the allocation starting at `address` shareable with other processes: its pages are moved, contents
    /// kept, onto a memfd. Returns the memfd's descriptor (owned by this memory until the allocation is freed)
    /// and the allocation's page-rounded length. Sharing an already shared allocation returns the same memfd.
    pub fn share(&self, address: u64) -> Result<(i32, u64), AllocError> {
        use std::os::fd::AsRawFd;
        let off = address
            .checked_sub(self.base)
            .ok_or(AllocError::NotAllocated { address })?;
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        let a = st
            .allocs
            .get_mut(&off)
            .filter(|a| a.live && a.alias.is_none())
            .ok_or(AllocError::NotAllocated { address })?;
        let span = round_up(a.size, PAGE);
        if let Some(fd) = &a.shared {
            return Ok((fd.as_raw_fd(), span));
        }
        let fd = self.arena.share(off, span).map_err(|e| AllocError::Reserve {
            bytes: span,
            reason: format!("sharing the allocation: {e}"),
        })?;
        let raw = fd.as_raw_fd();
        a.shared = Some(std::sync::Arc::new(fd));
        Ok((raw, span))
    }

    /// Guest accesses get no slack: in memcheck mode any byte outside its allocation is a fault. Off by
    /// default: a GPU faults only outside the allocation's pages.
    pub fn set_memcheck(&self, on: bool) {
        self.memcheck.store(on, Ordering::Relaxed);
    }

    /// Whether memcheck mode is on ([`DeviceMemory::set_memcheck`]).
    pub fn memcheck(&self) -> bool {
        self.memcheck.load(Ordering::Relaxed)
    }

    /// Checks a kernel's access by the device's rule; returns its arena offset and where it lies. Outside
    /// memcheck mode an access outside its allocation's bytes but inside the allocation's pages — the slack
    /// after the end of a device buffer or kernarg segment, or of code for reads — is let through as
    /// [`Within::Pages`]. Pinned host memory (its bytes are the host's), scratch (its bound is the lane's
    /// segment) and writes into code get no slack. Anything else is [`DeviceMemory::check`]'s answer, fault
    /// report included.
    pub fn check_guest(&self, address: u64, len: u64, access: Access) -> Result<(u64, Within), MemoryFault> {
        match self.check(address, len, access) {
            Ok(off) => Ok((off, Within::Allocation)),
            Err(fault) if self.memcheck() => Err(fault),
            Err(fault) => self
                .in_pages(address, len, access)
                .map(|off| (off, Within::Pages))
                .ok_or(fault),
        }
    }

    /// Arena offset of `[address, address + len)` when it lies inside the pages of one live allocation that has
    /// slack for `access` (see [`DeviceMemory::check_guest`]).
    fn in_pages(&self, address: u64, len: u64, access: Access) -> Option<u64> {
        let off = address.checked_sub(self.base).filter(|o| *o < self.arena.len as u64)?;
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let (&start, a) = st.allocs.range(..=off).next_back()?;
        let slack = match a.kind {
            AllocKind::Buffer | AllocKind::Kernarg => true,
            AllocKind::Code => access == Access::Read,
            AllocKind::Scratch | AllocKind::Pinned => false,
        };
        let inside = off
            .checked_add(len)
            .is_some_and(|end| end <= start + round_up(a.size.max(1), PAGE));
        (a.live && a.alias.is_none() && slack && inside).then_some(off)
    }

    /// What a [`Within::Pages`] access did: how far past its allocation's end it reaches.
    pub fn slack(&self, access: Access, address: u64, len: u64) -> Slack {
        let off = address.wrapping_sub(self.base);
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let location = match st.allocs.range(..=off).next_back() {
            Some((&start, a)) => {
                let past = (off + len).saturating_sub(start + a.size);
                format!(
                    "{} past the end of the {}-byte {} at {:#x} ({})",
                    if past == 1 {
                        "1 byte".to_string()
                    } else {
                        format!("{past} bytes")
                    },
                    a.size,
                    a.kind,
                    self.base + start,
                    a.label
                )
            }
            None => "outside every allocation".to_string(),
        };
        Slack {
            access,
            address,
            len,
            location,
        }
    }

    /// Checks that `[address, address+len)` lies inside one live allocation; returns its arena offset.
    pub fn check(&self, address: u64, len: u64, access: Access) -> Result<u64, MemoryFault> {
        let generation = self.generation.load(Ordering::Acquire);
        if let Some(h) = LAST_HIT.get() {
            let off = address.wrapping_sub(self.base);
            let inside = off >= h.start && off.checked_add(len).is_some_and(|e| e <= h.end);
            if h.id == self.id
                && h.generation == generation
                && inside
                && !(access == Access::Write && h.kind == AllocKind::Code)
            {
                return Ok(off);
            }
        }
        let fault = |location: String| MemoryFault {
            access,
            address,
            len,
            location,
        };
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let Some(off) = address.checked_sub(self.base).filter(|o| *o < self.arena.len as u64) else {
            // mapped host memory: addressed like the arena, by its (wrapping) distance from the base
            if let Some((&start, &(n, _, host, _))) = st.host.range(..=address).next_back() {
                if address.checked_add(len).is_some_and(|end| end <= start + n) {
                    return Ok((host + (address - start)).wrapping_sub(self.base));
                }
            }
            return Err(fault("outside device memory".to_string()));
        };
        if let Some((&start, a)) = st.allocs.range(..=off).next_back() {
            let end = start + a.size;
            if a.live && off + len <= end {
                let rel = off - start;
                let in_data = a.writable.iter().any(|&(s, n)| rel >= s && rel + len <= s + n);
                if access == Access::Write && a.kind == AllocKind::Code && !in_data {
                    // compiled and decoded code is cached: kernels may not rewrite their own code
                    return Err(fault(format!(
                        "inside the {}-byte {} at {:#x} ({}): kernels may not write code memory",
                        a.size,
                        a.kind,
                        self.base + start,
                        a.label
                    )));
                }
                if let Some(host) = a.alias {
                    // addressed by its (wrapping) distance from the base, like mapped host memory
                    return Ok((host + rel).wrapping_sub(self.base));
                }
                LAST_HIT.set(Some(LastHit {
                    id: self.id,
                    generation,
                    start,
                    end,
                    kind: a.kind,
                }));
                return Ok(off);
            }
            if off < end {
                let at = self.base + start;
                return Err(fault(if !a.live {
                    format!(
                        "inside the {}-byte {} at {at:#x} ({}) freed earlier",
                        a.size, a.kind, a.label
                    )
                } else {
                    format!(
                        "runs {} bytes past the end of the {}-byte {} at {at:#x} ({})",
                        off + len - end,
                        a.size,
                        a.kind,
                        a.label
                    )
                }));
            }
        }
        Err(fault(self.describe_gap(&st, off)))
    }

    /// Where an offset outside every allocation lies: relative to the nearest allocation on either side.
    fn describe_gap(&self, st: &State, off: u64) -> String {
        let before = st.allocs.range(..=off).next_back();
        let after = st.allocs.range(off + 1..).next();
        let dist_before = before.map(|(&s, a)| off - (s + a.size));
        let dist_after = after.map(|(&s, _)| s - off);
        let state = |a: &Allocation| if a.live { "" } else { " (freed)" };
        match (before, after) {
            (Some((&s, a)), _) if dist_after.is_none_or(|d| dist_before.unwrap_or(u64::MAX) < d) => format!(
                "{} past the end of the {}-byte {} at {:#x} ({}){}",
                match dist_before.unwrap_or(0) {
                    0 => "just".to_string(),
                    1 => "1 byte".to_string(),
                    d => format!("{d} bytes"),
                },
                a.size,
                a.kind,
                self.base + s,
                a.label,
                state(a)
            ),
            (_, Some((&s, a))) => format!(
                "{} bytes before the {}-byte {} at {:#x} ({}){}",
                dist_after.unwrap_or(0),
                a.size,
                a.kind,
                self.base + s,
                a.label,
                state(a)
            ),
            _ => "not inside any allocation (nothing is allocated)".to_string(),
        }
    }

    /// `f` of the live allocation holding `address` (its arena offset and record), if there is one.
    fn holding<R>(&self, address: u64, f: impl FnOnce(u64, &Allocation) -> Option<R>) -> Option<R> {
        let off = address.checked_sub(self.base).filter(|o| *o < self.arena.len as u64)?;
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let (&start, a) = st.allocs.range(..=off).next_back()?;
        (a.live && off < start + a.size).then(|| f(start, a)).flatten()
    }

    /// The live allocation of kind `kind` holding `address` (a device buffer, a scratch area, ...): (start
    /// address, length, host pointer to its first byte). Not for pinned host memory, whose bytes are elsewhere
    /// ([`DeviceMemory::direct_at`] answers for it).
    pub fn kind_at(&self, address: u64, kind: AllocKind) -> Option<(u64, u64, *mut u8)> {
        self.holding(address, |start, a| {
            (a.kind == kind && a.alias.is_none()).then(|| (self.base + start, a.size, self.ptr(start)))
        })
    }

    /// The memory holding `address` that compiled vector accesses may read and write directly after checking
    /// their lanes against it: a device buffer, pinned host memory's device range, or mapped host memory (as
    /// HIP's managed memory is). (start address, length, host pointer to its first byte). Buffers are only
    /// freed between dispatches; the other two stay valid while their owner keeps them (see
    /// [`DeviceMemory::map_host`], [`DeviceMemory::alias_host`]), as for any access.
    pub fn direct_at(&self, address: u64) -> Option<(u64, u64, *mut u8)> {
        if address
            .checked_sub(self.base)
            .is_some_and(|o| o < self.arena.len as u64)
        {
            return self.holding(address, |start, a| match (a.kind, a.alias) {
                (AllocKind::Buffer, None) => Some((self.base + start, a.size, self.ptr(start))),
                (AllocKind::Pinned, Some(host)) => Some((self.base + start, a.size, host as *mut u8)),
                _ => None,
            });
        }
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let (&start, &(n, _, host, _)) = st.host.range(..=address).next_back()?;
        (address < start + n).then_some((start, n, host as *mut u8))
    }

    /// The live allocation holding `address` that compiled scalar loads may read directly: (start address,
    /// length, host pointer to its first byte). Any kind but pinned host memory (whose bytes are elsewhere);
    /// allocations are only freed between dispatches.
    pub fn readable_at(&self, address: u64) -> Option<(u64, u64, *mut u8)> {
        self.holding(address, |start, a| {
            a.alias.is_none().then(|| (self.base + start, a.size, self.ptr(start)))
        })
    }

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

    /// Reads `buf.len()` bytes at `address`.
    pub fn read(&self, address: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        let off = self.check(address, buf.len() as u64, Access::Read)?;
        // SAFETY: `check` proved [off, off+len) lies inside a live allocation inside the arena, or inside host
        // memory mapped with `map_host` (whose caller keeps it valid while mapped). Other
        // waves may write the same bytes concurrently, as on a GPU; the copy reads whatever bytes are there.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr(off), buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    /// Places code: like [`DeviceMemory::write`], but into a code allocation (which guest writes may not touch).
    pub fn load_code_bytes(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let off = self.check(address, data.len() as u64, Access::Read)?;
        // SAFETY: as in `write`: the range lies inside a live allocation inside the arena.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr(off), data.len()) };
        Ok(())
    }

    /// Writes `data` at `address`.
    pub fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let off = self.check(address, data.len() as u64, Access::Write)?;
        // SAFETY: as in `read`: the range is inside a live allocation inside the arena. Concurrent guest writes
        // to the same bytes are data races of the emulated program, which hardware allows; they cannot reach
        // host memory outside the arena.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr(off), data.len()) };
        Ok(())
    }

    /// A kernel's read of `buf.len()` bytes at `address`, checked by [`DeviceMemory::check_guest`].
    pub fn read_guest(&self, address: u64, buf: &mut [u8]) -> Result<Within, MemoryFault> {
        let (off, within) = self.check_guest(address, buf.len() as u64, Access::Read)?;
        // SAFETY: `check_guest` proved [off, off+len) lies inside a live allocation's pages inside the arena, or
        // inside host memory as in `read`; concurrent writes as in `read`.
        unsafe { copy_from_guest(self.ptr(off), buf) };
        Ok(within)
    }

    /// A kernel's write of `data` at `address`, checked by [`DeviceMemory::check_guest`].
    pub fn write_guest(&self, address: u64, data: &[u8]) -> Result<Within, MemoryFault> {
        let (off, within) = self.check_guest(address, data.len() as u64, Access::Write)?;
        // SAFETY: as in `read_guest`; concurrent writes as in `write`.
        unsafe { copy_to_guest(data, self.ptr(off)) };
        Ok(within)
    }

    /// Arena offset of a kernel's naturally aligned `len`-byte atomic at `address`, checked like its writes.
    fn atomic_offset(&self, address: u64, len: u64) -> Result<(u64, Within), MemoryFault> {
        if !address.is_multiple_of(len) {
            return Err(MemoryFault {
                access: Access::Write,
                address,
                len,
                location: format!("misaligned atomic ({}-bit atomics need {len}-byte alignment)", len * 8),
            });
        }
        self.check_guest(address, len, Access::Write)
    }

    /// A kernel's atomic: replaces the u32 at `address` (4-byte aligned) with `f(old)` and returns the old value
    /// (and where the access lies, [`DeviceMemory::check_guest`]). Atomic with respect to every other atomic of
    /// every host thread, as device atomics are.
    pub fn atomic_u32(&self, address: u64, f: impl Fn(u32) -> u32) -> Result<(u32, Within), MemoryFault> {
        let (off, within) = self.atomic_offset(address, 4)?;
        // SAFETY: `atomic_offset` proved the 4 bytes lie in a live allocation's pages inside the arena; the arena is
        // page aligned and `address` is 4-aligned, so the pointer is valid and aligned for AtomicU32 for as long as
        // `self` lives. All atomic accesses to these bytes go through AtomicU32.
        let cell = unsafe { std::sync::atomic::AtomicU32::from_ptr(self.ptr(off).cast::<u32>()) };
        let mut old = cell.load(std::sync::atomic::Ordering::Relaxed);
        loop {
            match cell.compare_exchange_weak(
                old,
                f(old),
                std::sync::atomic::Ordering::AcqRel,
                std::sync::atomic::Ordering::Relaxed,
            ) {
                Ok(v) => return Ok((v, within)),
                Err(v) => old = v,
            }
        }
    }

    /// A kernel's atomic on the u64 at `address` (8-aligned): replaces it by `f(old)`; returns the old value.
    pub fn atomic_u64(&self, address: u64, f: impl Fn(u64) -> u64) -> Result<(u64, Within), MemoryFault> {
        let (off, within) = self.atomic_offset(address, 8)?;
        // SAFETY: as in `atomic_u32`, for 8 bytes at an 8-aligned address.
        let cell = unsafe { std::sync::atomic::AtomicU64::from_ptr(self.ptr(off).cast::<u64>()) };
        let mut old = cell.load(std::sync::atomic::Ordering::Relaxed);
        loop {
            match cell.compare_exchange_weak(
                old,
                f(old),
                std::sync::atomic::Ordering::AcqRel,
                std::sync::atomic::Ordering::Relaxed,
            ) {
                Ok(v) => return Ok((v, within)),
                Err(v) => old = v,
            }
        }
    }

    /// Reads a little-endian u32.
    pub fn read_u32(&self, address: u64) -> Result<u32, MemoryFault> {
        let mut b = [0u8; 4];
        self.read(address, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Writes a little-endian u32.
    pub fn write_u32(&self, address: u64, value: u32) -> Result<(), MemoryFault> {
        self.write(address, &value.to_le_bytes())
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_guest_64_bit_read_sees_another_threads_64_bit_write_whole() {
        // a writer stores values whose halves are equal, a reader on another thread checks every value it sees,
        // through the checked path and through a window (a copy in two halves, or byte by byte, would be seen
        // torn)
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let at = mem.allocate(64, AllocKind::Buffer, "flag").unwrap() + 8;
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..2_000_000u64 {
                    let x = (i & 0xffff_ffff) * 0x1_0000_0001;
                    mem.write_guest(at, &x.to_le_bytes()).unwrap();
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let w = mem.window(at, 8, Access::Read).unwrap();
            let mut torn = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
                mem.read_guest(at, &mut a).unwrap();
                assert!(w.read(at, &mut b));
                for v in [a, b].map(u64::from_le_bytes) {
                    torn += usize::from(v >> 32 != v & 0xffff_ffff);
                }
            }
            assert_eq!(torn, 0, "torn 64-bit reads");
        });
    }

    #[test]
    fn guest_writes_into_code_fault_and_loading_code_does_not() {
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let code = mem.allocate(256, AllocKind::Code, "kernel.co").unwrap();
        mem.load_code_bytes(code, &[1, 2, 3, 4]).unwrap();
        let mut b = [0u8; 4];
        mem.read(code, &mut b).unwrap();
        assert_eq!(b, [1, 2, 3, 4]);
        let e = mem.write(code + 8, &[0; 4]).unwrap_err().to_string();
        assert!(
            e.contains("kernels may not write code memory") && e.contains("kernel.co"),
            "{e}"
        );
        assert!(mem.atomic_u32(code, |x| x + 1).is_err());
        assert!(mem.window(code, 16, Access::Write).is_none() && mem.window(code, 16, Access::Read).is_some());
    }

    use super::*;

    fn resident_bytes() -> u64 {
        let s = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: u64 = s.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * 4096
    }

    #[test]
    fn a_192_gib_device_costs_only_what_is_touched() {
        let before = resident_bytes();
        let mem = DeviceMemory::new(192 << 30).unwrap();
        let a = mem.allocate(100 << 30, AllocKind::Buffer, "huge").unwrap();
        mem.write_u32(a + (99 << 30), 0xdead_beef).unwrap();
        assert_eq!(mem.read_u32(a + (99 << 30)).unwrap(), 0xdead_beef);
        assert_eq!(
            mem.read_u32(a + (50 << 30)).unwrap(),
            0,
            "untouched memory reads as zero"
        );
        let grew = resident_bytes().saturating_sub(before);
        assert!(grew < 64 << 20, "resident set grew by {grew} bytes");
        assert_eq!(mem.used(), 100 << 30);
    }

    #[test]
    fn overruns_name_the_allocation_and_the_distance() {
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let a = mem.allocate(4096, AllocKind::Buffer, "out").unwrap();
        let e = mem.read_u32(a + 4096 + 12).unwrap_err();
        assert_eq!(
            e.location,
            format!("12 bytes past the end of the 4096-byte allocation at {a:#x} (out)")
        );
        let e = mem.write(a + 4094, &[0; 4]).unwrap_err();
        assert_eq!(e.access, Access::Write);
        assert!(
            e.location
                .starts_with("runs 2 bytes past the end of the 4096-byte allocation"),
            "{}",
            e.location
        );
        let b = mem.allocate(100, AllocKind::Kernarg, "kernarg").unwrap();
        let e = mem.read_u32(b - 8).unwrap_err();
        assert_eq!(
            e.location,
            format!("8 bytes before the 100-byte kernarg segment at {b:#x} (kernarg)")
        );
        let e = mem.read_u32(0x1000).unwrap_err();
        assert_eq!(e.location, "outside device memory");
        assert!(e.to_string().starts_with("read of 4 bytes at 0x1000"), "{e}");
    }

    #[test]
    fn guest_accesses_run_into_the_rest_of_their_allocations_last_page_unless_memcheck_is_on() {
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let a = mem.allocate(8, AllocKind::Buffer, "tmp").unwrap();
        assert!(mem.write_u32(a + 8, 1).is_err(), "the host's accesses are exact");
        assert_eq!(mem.write_guest(a + 8, &7u32.to_le_bytes()).unwrap(), Within::Pages);
        assert_eq!(mem.write_guest(a + 6, &[1, 2, 3, 4]).unwrap(), Within::Pages);
        let mut b = [0u8; 4];
        assert_eq!(mem.read_guest(a + 8, &mut b).unwrap(), Within::Pages);
        assert_eq!(u32::from_le_bytes(b), 0x0403, "the bytes past the end are kept");
        assert_eq!(mem.read_guest(a + 4092, &mut b).unwrap(), Within::Pages);
        let e = mem.read_guest(a + 4094, &mut b).unwrap_err();
        assert!(
            e.location.contains("past the end of the 8-byte allocation"),
            "past the page: {}",
            e.location
        );
        assert_eq!(mem.read_guest(a, &mut b).unwrap(), Within::Allocation);
        mem.set_memcheck(true);
        assert!(mem.memcheck());
        assert_eq!(
            mem.read_guest(a + 8, &mut b).unwrap_err().location,
            format!("just past the end of the 8-byte allocation at {a:#x} (tmp)")
        );
        assert!(mem
            .write_guest(a + 6, &[0; 4])
            .unwrap_err()
            .location
            .starts_with("runs 2 bytes past the end of the 8-byte allocation"));
        assert_eq!(mem.read_guest(a, &mut b).unwrap(), Within::Allocation);
    }

    #[test]
    fn use_after_free_is_reported_as_such_and_addresses_are_not_reused() {
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let a = mem.allocate(8192, AllocKind::Buffer, "tmp").unwrap();
        mem.write_u32(a, 7).unwrap();
        mem.free(a).unwrap();
        let e = mem.read_u32(a + 16).unwrap_err();
        assert_eq!(
            e.location,
            format!("inside the 8192-byte allocation at {a:#x} (tmp) freed earlier")
        );
        let b = mem.allocate(8192, AllocKind::Buffer, "next").unwrap();
        assert_ne!(a, b);
        assert_eq!(mem.read_u32(b).unwrap(), 0);
        assert_eq!(mem.free(a), Err(AllocError::NotAllocated { address: a }));
        assert_eq!(mem.used(), 8192);
    }

    #[test]
    fn a_threads_last_checked_allocation_never_answers_for_another_memory_kind_or_generation() {
        let (one, two) = (DeviceMemory::new(1 << 20).unwrap(), DeviceMemory::new(1 << 20).unwrap());
        let a = one.allocate(8192, AllocKind::Buffer, "a").unwrap();
        let b = two.allocate(4096, AllocKind::Buffer, "b").unwrap();
        one.write_u32(a, 1).unwrap();
        // the same offset in the other memory lies past the end of its (smaller) allocation there
        assert_eq!(b - two.base(), a - one.base());
        assert!(two.read_u32(b + 4100).unwrap_err().location.contains("past the end"));
        // code was read last: writing it still faults
        let c = one.allocate(4096, AllocKind::Code, "code").unwrap();
        one.read_u32(c).unwrap();
        assert!(one
            .write_u32(c, 0)
            .unwrap_err()
            .location
            .contains("may not write code memory"));
        // an allocation elsewhere does not make the last hit wrong, only stale
        one.read_u32(a).unwrap();
        one.allocate(4096, AllocKind::Buffer, "b").unwrap();
        assert_eq!(one.read_u32(a).unwrap(), 1);
        assert!(one.read_u32(a + 8192).is_err());
    }

    #[test]
    fn kernels_write_the_data_ranges_of_code_and_nothing_else_of_it() {
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let c = mem.allocate(8192, AllocKind::Code, "co").unwrap();
        mem.set_code_writable(c, &[(4096, 100)]).unwrap();
        mem.write_u32(c + 4096, 5).unwrap();
        mem.write_u32(c + 4096 + 96, 6).unwrap();
        assert!(mem
            .write_u32(c + 4096 + 98, 7)
            .unwrap_err()
            .location
            .contains("may not write code memory"));
        assert!(mem
            .write_u32(c, 7)
            .unwrap_err()
            .location
            .contains("may not write code memory"));
        assert_eq!(mem.read_u32(c + 4096).unwrap(), 5);
        let b = mem.allocate(4096, AllocKind::Buffer, "b").unwrap();
        assert!(mem.set_code_writable(b, &[(0, 4)]).is_err());
    }

    #[test]
    fn pinned_host_memory_is_reached_through_its_own_device_range() {
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let mut host = vec![0u32; 256];
        let h = host.as_mut_ptr() as u64;
        let d = mem.alias_host(h, 1024, "pinned").unwrap();
        assert_ne!(d, h);
        mem.write_u32(d + 8, 0xabcd).unwrap();
        assert_eq!(mem.atomic_u32(d + 12, |x| x + 5).unwrap(), (0, Within::Allocation));
        assert!(
            mem.atomic_u32(d + 1024, |x| x).is_err(),
            "pinned host memory has no slack"
        );
        assert_eq!(mem.host_address(d + 8), h + 8);
        assert_eq!(mem.host_address(h), h);
        assert!(mem.read_u32(d + 1024).is_err());
        mem.free(d).unwrap();
        assert!(mem.read_u32(d + 8).unwrap_err().location.contains("freed earlier"));
        assert_eq!((host[2], host[3]), (0xabcd, 5));
    }

    #[test]
    fn atomics_from_many_threads_lose_nothing_and_misalignment_faults() {
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let a = mem.allocate(64, AllocKind::Buffer, "counter").unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        mem.atomic_u32(a, |x| x + 1).unwrap();
                    }
                });
            }
        });
        assert_eq!(mem.read_u32(a).unwrap(), 40_000);
        assert!(mem
            .atomic_u32(a + 2, |x| x)
            .unwrap_err()
            .location
            .contains("misaligned"));
        assert_eq!(mem.atomic_u32(a + 64, |x| x).unwrap(), (0, Within::Pages));
        assert!(mem
            .atomic_u32(a + 4096, |x| x)
            .unwrap_err()
            .location
            .contains("past the end"));
        mem.set_memcheck(true);
        assert!(mem
            .atomic_u32(a + 64, |x| x)
            .unwrap_err()
            .location
            .contains("past the end"));
    }

    #[test]
    fn capacity_is_enforced_and_concurrent_writers_stay_inside_their_buffers() {
        let mem = DeviceMemory::new(1 << 20).unwrap();
        assert!(matches!(
            mem.allocate(2 << 20, AllocKind::Buffer, "big"),
            Err(AllocError::OutOfMemory { .. })
        ));
        let bufs: Vec<u64> = (0..4)
            .map(|i| mem.allocate(4096, AllocKind::Buffer, &format!("b{i}")).unwrap())
            .collect();
        std::thread::scope(|s| {
            for (i, &b) in bufs.iter().enumerate() {
                let mem = &mem;
                s.spawn(move || {
                    for k in 0..1024u64 {
                        mem.write_u32(b + 4 * k, (i as u32) << 16 | k as u32).unwrap();
                    }
                });
            }
        });
        for (i, &b) in bufs.iter().enumerate() {
            for k in [0u64, 511, 1023] {
                assert_eq!(mem.read_u32(b + 4 * k).unwrap(), (i as u32) << 16 | k as u32);
            }
        }
    }

    #[test]
    fn slack_accesses_say_how_far_past_the_end_they_reach_and_faults_outside_the_pages_stay_as_they_were() {
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let a = mem.allocate(288, AllocKind::Buffer, "tiles").unwrap();
        // the bsrilu0 pattern: a full tile read whose last 8 bytes lie past the end
        assert_eq!(mem.read_guest(a + 280, &mut [0u8; 16]).unwrap(), Within::Pages);
        assert_eq!(
            mem.slack(Access::Read, a + 288, 8).to_string(),
            format!(
                "read of 8 bytes at {:#x}: 8 bytes past the end of the 288-byte allocation at {a:#x} (tiles)",
                a + 288
            )
        );
        assert_eq!(
            mem.slack(Access::Write, a + 286, 4).location,
            format!("2 bytes past the end of the 288-byte allocation at {a:#x} (tiles)")
        );
        assert_eq!(
            mem.slack(Access::Read, a + 300, 1).location,
            format!("13 bytes past the end of the 288-byte allocation at {a:#x} (tiles)")
        );
        // outside the pages: the host's report, word for word
        let e = mem.read_guest(a + 4094, &mut [0u8; 4]).unwrap_err();
        assert_eq!(e, mem.read(a + 4094, &mut [0u8; 4]).unwrap_err());
        assert_eq!(
            e.location,
            format!("3806 bytes past the end of the 288-byte allocation at {a:#x} (tiles)")
        );
    }

    #[test]
    fn slack_is_for_buffers_kernargs_and_code_reads_of_live_allocations_only() {
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let k = mem.allocate(100, AllocKind::Kernarg, "kernarg").unwrap();
        assert_eq!(mem.read_guest(k + 96, &mut [0u8; 32]).unwrap(), Within::Pages);
        let c = mem.allocate(256, AllocKind::Code, "co").unwrap();
        assert_eq!(mem.read_guest(c + 256, &mut [0u8; 12]).unwrap(), Within::Pages);
        assert!(mem
            .write_guest(c + 256, &[0; 4])
            .unwrap_err()
            .location
            .starts_with("just past the end of the 256-byte code object"));
        let s = mem.allocate(64, AllocKind::Scratch, "scratch").unwrap();
        assert!(mem.read_guest(s + 64, &mut [0u8; 4]).is_err());
        let f = mem.allocate(100, AllocKind::Buffer, "freed").unwrap();
        mem.free(f).unwrap();
        assert!(mem.read_guest(f + 100, &mut [0u8; 4]).is_err());
        // a snapshot holds the slack too, so runs compared byte for byte compare it
        let b = mem.allocate(10, AllocKind::Buffer, "b").unwrap();
        mem.write_guest(b + 100, &[9]).unwrap();
        let snap = mem.snapshot_buffers().unwrap();
        let (_, bytes) = snap.iter().find(|(a, _)| *a == b).unwrap();
        assert_eq!((bytes.len(), bytes[100]), (4096, 9));
        mem.write_guest(b + 100, &[1]).unwrap();
        mem.restore_buffers(&snap).unwrap();
        let mut x = [0u8];
        mem.read_guest(b + 100, &mut x).unwrap();
        assert_eq!(x, [9]);
    }
}
