//! The allocation table: placing, freeing and finding allocations, and host memory kernels may reach.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use super::{redzone, round_up, Access, AllocError, AllocKind, DeviceMemory, CLEAR_BY_PAGES, PAGE};

#[derive(Debug, Clone)]
pub(super) struct Allocation {
    pub(super) size: u64,
    pub(super) kind: AllocKind,
    pub(super) label: String,
    pub(super) live: bool,
    /// For code: the (offset, length) ranges kernels may write — the code object's data sections (`__device__`
    /// variables live there, at fixed distances from the code that addresses them PC-relatively).
    pub(super) writable: Vec<(u64, u64)>,
    /// For pinned host memory: the host address the range stands for.
    pub(super) alias: Option<u64>,
    /// For memory shared with other processes ([`DeviceMemory::share`]): the memfd now backing its pages.
    pub(super) shared: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
    /// Fine-grained (coherent with the host during a kernel): see [`DeviceMemory::set_fine_grained`].
    pub(super) fine_grained: bool,
}

/// Host memory outside the arena that kernels may access: pinned with `hsa_amd_memory_lock`, or mapped by an
/// emulated driver (whose device address, where the program sees the buffer, may differ from the host address
/// where the driver keeps its bytes).
#[derive(Debug, Clone)]
pub(super) struct HostRange {
    pub(super) len: u64,
    pub(super) label: String,
    /// The host address of the range's first byte.
    pub(super) host: u64,
    /// Fine-grained: see [`DeviceMemory::set_fine_grained`].
    pub(super) fine_grained: bool,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) allocs: BTreeMap<u64, Allocation>,
    /// Mapped host memory by device start address.
    pub(super) host: BTreeMap<u64, HostRange>,
    /// End of the last allocation placed at the top of the used address space (0 before the first): above it
    /// (and its gap) no address was ever allocated.
    pub(super) bump: u64,
    /// The gap that allocation asks for above it: the guard page, or its redzone under memcheck.
    pub(super) gap_after: u64,
    /// Address space left for redzones beyond the guard page ([`super::redzone_budget`]).
    pub(super) redzones: u64,
    /// Bytes held by live allocations.
    pub(super) used: u64,
}

impl DeviceMemory {
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
            .is_some_and(|(&s, h)| s + h.len > address);
        if overlaps {
            return Err(AllocError::NotAllocated { address });
        }
        st.host.insert(
            address,
            HostRange {
                len,
                label: label.to_string(),
                host,
                fine_grained: false,
            },
        );
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
        // the gap below it: the guard page (none below the first allocation: below the arena nothing is device
        // memory), widened under memcheck to the larger of its redzone and that of the allocation below, as far
        // as the address space set aside for redzones lasts
        let guard = if st.bump == 0 { 0 } else { PAGE };
        let memcheck = self.memcheck();
        let wanted = st.gap_after.max(if memcheck { redzone(span) } else { guard });
        let extra = (wanted - guard).min(st.redzones);
        let below = guard + extra;
        let offset = if st.bump + below + span + PAGE <= arena_len {
            let o = st.bump + below;
            st.bump = o + span;
            st.gap_after = if memcheck { redzone(span) } else { PAGE };
            st.redzones -= extra;
            o
        } else {
            // address space exhausted: reuse the first freed range that fits (its record goes away), with the
            // guard page above it, under memcheck too
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
            h.fine_grained = true;
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
                .is_some_and(|(&s, h)| h.fine_grained && address < s + h.len);
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
        let (&start, h) = st.host.range(..=address).next_back()?;
        (address < start + h.len).then_some((start, h.len, h.host as *mut u8))
    }

    /// The live allocation holding `address` that compiled scalar loads may read directly: (start address,
    /// length, host pointer to its first byte). Any kind but pinned host memory (whose bytes are elsewhere);
    /// allocations are only freed between dispatches.
    pub fn readable_at(&self, address: u64) -> Option<(u64, u64, *mut u8)> {
        self.holding(address, |start, a| {
            a.alias.is_none().then(|| (self.base + start, a.size, self.ptr(start)))
        })
    }
}
