//! Device memory: a large, sparse emulated address space where every guest access is checked.
//!
//! The arena is one anonymous host mapping reserved without backing (`MAP_NORESERVE`): an emulated 192 GiB
//! card costs only the pages a program touches. Allocations are handed out from a bump pointer with a guard
//! gap between them, and their addresses are not reused until the space runs out, so an access through a
//! dangling pointer is reported as "inside an allocation freed earlier" rather than silently hitting new data.
//!
//! Every access goes through [`DeviceMemory::read`]/[`DeviceMemory::write`] (or [`DeviceMemory::check`]): an
//! address outside the live allocations becomes a [`MemoryFault`] that says where the address lies: in which
//! allocation, or relative to the nearest allocation on each side. No guest address can reach host memory
//! outside the arena.
//!
//! In memcheck mode ([`DeviceMemory::set_memcheck`]) allocations get redzones, as AddressSanitizer gives them:
//! the gap below and above each allocation is the larger of the two neighbours' redzones (each as large as its
//! allocation, from [`REDZONE_MIN`] to [`REDZONE_MAX`]) instead of one guard page, so an overrun into what would
//! otherwise be the next allocation lands in unowned address space and faults. Redzones beyond the guard page
//! come out of address space reserved for them on top of the rest (half the capacity); once that is spent,
//! later allocations get the guard page only, so memcheck never runs a program out of address space sooner.
//! Addresses reused after the space runs out also get the guard page only.
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

mod arena;
mod fault;
mod snapshot;
mod table;
mod window;

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;

use crate::clock::DeviceClock;

use arena::Arena;
use table::State;
pub use window::Window;
use window::{copy_from_guest, copy_to_guest};

/// Allocation granularity and the guard gap left between allocations (memcheck widens it to redzones).
pub const PAGE: u64 = 4096;

/// The smallest redzone under memcheck: unowned address space on each side of an allocation.
pub const REDZONE_MIN: u64 = 1 << 20;

/// The largest redzone under memcheck.
pub const REDZONE_MAX: u64 = 1 << 30;

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
    /// The GPU's clock, which its dispatches continue ([`DeviceMemory::clock`]).
    clock: DeviceClock,
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

/// The redzone an allocation of `span` bytes (its page-rounded size) asks for on each side under memcheck: as
/// large as the allocation, at least [`REDZONE_MIN`] and at most [`REDZONE_MAX`], so an overrun by up to its own
/// size (and any by up to 1 MiB) lands in unowned address space rather than in a neighbouring allocation.
fn redzone(span: u64) -> u64 {
    span.clamp(REDZONE_MIN, REDZONE_MAX)
}

/// The address space set aside for redzones beyond the guard page: half the capacity (page-rounded down),
/// reserved on top of the twice the capacity that allocations and their guard pages have.
fn redzone_budget(capacity: u64) -> u64 {
    capacity / 2 / PAGE * PAGE
}

impl DeviceMemory {
    /// A device memory of `capacity` bytes. Twice that much address space is reserved, so freed addresses stay
    /// recognisable for a long time, and half as much again for memcheck's redzones.
    pub fn new(capacity: u64) -> Result<DeviceMemory, AllocError> {
        let redzones = redzone_budget(capacity);
        let arena = Arena::reserve(capacity.saturating_mul(2).saturating_add(redzones).max(PAGE))?;
        Ok(DeviceMemory {
            base: arena.ptr as u64,
            arena,
            capacity,
            state: RwLock::new(State {
                redzones,
                ..State::default()
            }),
            id: NEXT_MEMORY_ID.fetch_add(1, Ordering::Relaxed),
            generation: AtomicU64::new(0),
            memcheck: AtomicBool::new(false),
            clock: DeviceClock::new(),
        })
    }

    /// The host pointer of offset `off` from the base (offsets of mapped host memory wrap around).
    fn ptr(&self, off: u64) -> *mut u8 {
        self.base.wrapping_add(off) as *mut u8
    }

    /// What tells this memory's allocations apart from another's, and from themselves earlier: its number and
    /// how many times allocations were made, freed, mapped or unmapped. While both stay the same, every
    /// allocation and mapping is as it was.
    pub fn version(&self) -> (u64, u64) {
        (self.id, self.generation.load(Ordering::Acquire))
    }

    /// The clock of the GPU this memory is: the shader cycle its dispatches' clocks (`s_memtime`,
    /// `s_memrealtime`) continue from, which each dispatch moves on, so they never go back on one GPU.
    pub fn clock(&self) -> &DeviceClock {
        &self.clock
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

    /// Guest accesses get no slack: in memcheck mode any byte outside its allocation is a fault, and allocations
    /// made while it is on get redzones (see the module documentation), so turn it on before allocating. Off by
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
            if let Some((&start, h)) = st.host.range(..=address).next_back() {
                if address.checked_add(len).is_some_and(|end| end <= start + h.len) {
                    return Ok((h.host + (address - start)).wrapping_sub(self.base));
                }
            }
            return Err(fault(self.describe_host_gap(&st, address)));
        };
        if let Some((&start, a)) = st.allocs.range(..=off).next_back() {
            let end = start + a.size;
            if a.live && off + len <= end {
                let rel = off - start;
                let in_data = a.writable.iter().any(|&(s, n)| rel >= s && rel + len <= s + n);
                if access == Access::Write && a.kind == AllocKind::Code && !in_data {
                    // compiled and decoded code is cached: kernels may not rewrite their own code
                    return Err(fault(format!(
                        "inside the {}: kernels may not write code memory",
                        self.name(start, a)
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
                return Err(fault(if !a.live {
                    format!("inside the {} freed earlier", self.name(start, a))
                } else {
                    format!(
                        "runs {} past the end of the {}",
                        fault::bytes(off + len - end),
                        self.name(start, a)
                    )
                }));
            }
        }
        Err(fault(self.describe_gap(&st, off)))
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
mod tests;
