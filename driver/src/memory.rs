//! Buffer objects and the GPUs' page tables.
//!
//! `ALLOC_MEMORY_OF_GPU` makes a buffer object at a virtual address the program chose (ROCm's thunk and tinygrad
//! both reserve the range themselves): VRAM and GTT objects are ranges of the GPU's render node file, which the
//! program then maps at that address; userptr objects are the program's own pages (`mmap_offset` is their
//! address); the doorbell and MMIO objects are the GPU's pages of the kfd file. `MAP_MEMORY_TO_GPU` puts the
//! object's range into the GPUs' address space (the emulator's [`emu_core::memory::DeviceMemory`], at the
//! program's address, reaching the object's bytes through the driver's view): only then may kernels and the
//! command processor touch it, and an access anywhere else is a GPU memory fault.
//!
//! The page tables are one for all GPUs of the process (ROCm maps its buffers to every GPU alike; a buffer mapped
//! to one GPU is reachable from the others too).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::args::{self, Args, Errno};
use crate::{files, Driver};

/// `ALLOC_MEMORY_OF_GPU` flags.
pub mod flags {
    pub const VRAM: u32 = 1 << 0;
    pub const GTT: u32 = 1 << 1;
    pub const USERPTR: u32 = 1 << 2;
    pub const DOORBELL: u32 = 1 << 3;
    pub const MMIO_REMAP: u32 = 1 << 4;
    pub const COHERENT: u32 = 1 << 26;
}

const PAGE: u64 = 4096;

fn page_up(n: u64) -> u64 {
    n.div_ceil(PAGE) * PAGE
}

/// Free ranges of a render node file (first fit; freed ranges merge with their neighbours).
#[derive(Debug)]
pub struct Space {
    free: BTreeMap<u64, u64>,
    len: u64,
}

impl Space {
    /// The range `[start, start + len)` of a file, all free.
    pub fn new(start: u64, len: u64) -> Space {
        Space {
            free: BTreeMap::from([(start, len)]),
            len,
        }
    }

    /// `n` bytes (a multiple of the page size), at the lowest offset where they fit.
    pub fn take(&mut self, n: u64) -> Option<u64> {
        let (&at, &len) = self.free.iter().find(|(_, &len)| len >= n)?;
        self.free.remove(&at);
        if len > n {
            self.free.insert(at + n, len - n);
        }
        Some(at)
    }

    /// Gives `[at, at + n)` back.
    pub fn give(&mut self, at: u64, n: u64) {
        let (mut start, mut len) = (at, n);
        if let Some((&s, &l)) = self.free.range(..at).next_back().filter(|(&s, &l)| s + l == at) {
            self.free.remove(&s);
            (start, len) = (s, l + len);
        }
        if let Some(&l) = self.free.get(&(at + n)) {
            self.free.remove(&(at + n));
            len += l;
        }
        self.free.insert(start, len);
    }

    /// Bytes in use.
    pub fn used(&self) -> u64 {
        self.len - self.free.values().sum::<u64>()
    }
}

/// Where a buffer object's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// A range of GPU `gpu`'s render node file in this process's part of it.
    Render { gpu: usize, offset: u64 },
    /// A range another process allocated in GPU `gpu`'s shared file, imported: the driver's own mapping of it.
    Imported { gpu: usize, offset: u64, view: u64 },
    /// The program's own pages at this address.
    User { address: u64 },
    /// GPU `gpu`'s doorbell page in the kfd file.
    Doorbell { gpu: usize },
    /// GPU `gpu`'s MMIO page in the kfd file.
    Mmio { gpu: usize },
}

#[derive(Debug, Clone)]
pub struct Bo {
    pub va: u64,
    /// The size the program asked for (echoed back; tinygrad's are not page multiples).
    pub size: u64,
    /// Its pages' bytes.
    pub len: u64,
    pub flags: u32,
    pub backing: Backing,
    /// Mapped into the GPUs' address space.
    pub mapped: bool,
}

/// The process's buffer objects, by handle.
#[derive(Default)]
pub struct Bos {
    inner: Mutex<(u64, HashMap<u64, Bo>)>,
}

impl Bos {
    /// The object `handle` names.
    pub fn get(&self, handle: u64) -> Option<Bo> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .get(&handle)
            .cloned()
    }

    /// Whether an object mapped to the GPUs lies (in part) in `[start, end)`.
    pub fn mapped_within(&self, start: u64, end: u64) -> bool {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1.values()
            .any(|b| b.mapped && b.va < end && start < b.va.saturating_add(b.len))
    }
}

impl Driver {
    /// The driver's pointer to the first byte of `b`.
    pub fn host_of(&self, b: &Bo) -> Option<*mut u8> {
        match b.backing {
            Backing::Render { gpu, offset } => self.gpus.get(gpu)?.render.at(offset, b.len),
            Backing::Imported { view, .. } => Some(view as *mut u8),
            Backing::User { address } => Some(address as *mut u8),
            Backing::Doorbell { gpu } => self.kfd.at(files::kfd_page(gpu), files::DOORBELL_PAGE),
            Backing::Mmio { gpu } => self.kfd.at(files::kfd_page(gpu) + files::MMIO_OFFSET, PAGE),
        }
    }

    /// The agent (as the profile numbers them: [`Driver::agent`], 0 for the host) whose memory holds `address`:
    /// a GPU's for buffer objects in its memory file mapped to the GPUs, the host's for anything else.
    pub fn agent_holding(&self, address: u64) -> u32 {
        let g = self.bos.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1.values()
            .filter(|b| b.mapped && address >= b.va && address - b.va < b.len)
            .find_map(|b| match b.backing {
                Backing::Render { gpu, .. } | Backing::Imported { gpu, .. } if b.flags & flags::VRAM != 0 => {
                    Some(self.agent(gpu))
                }
                _ => None,
            })
            .unwrap_or(0)
    }

    /// `ALLOC_MEMORY_OF_GPU`: va @0, size @8, handle @16 (out), mmap_offset @24 (in for userptr, else out),
    /// gpu_id @32, flags @36. A range that SVM attributes were set on is EADDRINUSE.
    pub fn alloc(&self, a: &mut Args) -> Result<(), Errno> {
        let (va, size, gpu_id, f) = (a.u64(0), a.u64(8), a.u32(32), a.u32(36));
        let gpu = self.gpu_index(gpu_id).ok_or(libc::EINVAL)?;
        if size == 0 || va.checked_add(size).is_none() {
            return Err(libc::EINVAL);
        }
        let len = page_up(size);
        // the GPU address range must not hold shared virtual memory (crate::svm): the kernel refuses it too
        if self.svm_overlaps(va, va.saturating_add(len)) {
            return Err(libc::EADDRINUSE);
        }
        let (backing, mmap_offset) = if f & (flags::VRAM | flags::GTT) != 0 {
            let offset = self.gpus[gpu]
                .space
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(len)
                .ok_or(libc::ENOMEM)?;
            (Backing::Render { gpu, offset }, offset)
        } else if f & flags::USERPTR != 0 {
            let address = a.u64(24);
            if address == 0 || !address.is_multiple_of(PAGE) {
                return Err(libc::EINVAL);
            }
            (Backing::User { address }, address)
        } else if f & flags::DOORBELL != 0 {
            (Backing::Doorbell { gpu }, files::kfd_page(gpu))
        } else if f & flags::MMIO_REMAP != 0 {
            (Backing::Mmio { gpu }, files::kfd_page(gpu) + files::MMIO_OFFSET)
        } else {
            return Err(libc::EINVAL);
        };
        let bo = Bo {
            va,
            size,
            len: match backing {
                Backing::Doorbell { .. } => files::DOORBELL_PAGE.min(len),
                Backing::Mmio { .. } => PAGE,
                _ => len,
            },
            flags: f,
            backing,
            mapped: false,
        };
        if f & flags::VRAM != 0 {
            if let Some(smi) = &self.smi {
                smi.vram_allocated(gpu, len);
            }
        }
        let mut g = self.bos.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        // the kernel's form: the GPU in the high half, a number in the low one
        let handle = (gpu_id as u64) << 32 | g.0;
        g.1.insert(handle, bo);
        a.set_u64(16, handle);
        a.set_u64(24, mmap_offset);
        Ok(())
    }

    /// `FREE_MEMORY_OF_GPU`: handle @0. A mapped object leaves the GPUs' address space first; its pages are given
    /// back.
    pub fn free(&self, handle: u64) -> Result<(), Errno> {
        let bo = {
            let mut g = self.bos.inner.lock().unwrap_or_else(|e| e.into_inner());
            g.1.remove(&handle).ok_or(libc::EINVAL)?
        };
        if bo.mapped {
            let _ = self.mem.unmap_host(bo.va);
        }
        match bo.backing {
            Backing::Render { gpu, offset } => {
                if let Some(smi) = self.smi.as_ref().filter(|_| bo.flags & flags::VRAM != 0) {
                    smi.vram_freed(gpu, bo.len);
                }
                let g = &self.gpus[gpu];
                g.render.discard(offset, bo.len);
                g.space.lock().unwrap_or_else(|e| e.into_inner()).give(offset, bo.len);
            }
            Backing::Imported { view, .. } => files::unmap(view as *mut u8, bo.len),
            _ => {}
        }
        Ok(())
    }

    /// `IPC_EXPORT_HANDLE`: handle @0, share_handle[4] @8 (out), gpu_id @24, flags @28 (the runtime's memory
    /// flags, handed to the importer). The share handle names the object's pages in the GPU's memory file, which
    /// every process of the program shares (`wavejit exec` hands it down): their first page, their count, the
    /// GPU, the flags.
    pub fn ipc_export(&self, a: &mut Args) -> Result<(), Errno> {
        let bo = self.bos.get(a.u64(0)).ok_or(libc::EINVAL)?;
        let (gpu, offset) = match bo.backing {
            Backing::Render { gpu, offset } | Backing::Imported { gpu, offset, .. } => (gpu, offset),
            _ => return Err(libc::EINVAL), // the program's own pages have no place in a GPU's memory file
        };
        let first = u32::try_from(offset / PAGE).map_err(|_| libc::EINVAL)?;
        let pages = u32::try_from(bo.len / PAGE).map_err(|_| libc::EINVAL)?;
        for (i, w) in [first, pages, gpu as u32, a.u32(28)].into_iter().enumerate() {
            a.set_u32(8 + 4 * i, w);
        }
        Ok(())
    }

    /// `IPC_IMPORT_HANDLE`: handle @0 (out), va_addr @8, mmap_offset @16 (out), share_handle[4] @24, gpu_id @40,
    /// flags @44 (out). The program maps the render node at `mmap_offset`: the exporter's pages.
    pub fn ipc_import(&self, a: &mut Args) -> Result<(), Errno> {
        let (va, gpu_id) = (a.u64(8), a.u32(40));
        let gpu = self.gpu_index(gpu_id).ok_or(libc::EINVAL)?;
        let (first, pages, from_gpu, flags) = (a.u32(24), a.u32(28), a.u32(32) as usize, a.u32(36));
        if from_gpu != gpu || pages == 0 {
            return Err(libc::EINVAL);
        }
        let (offset, len) = (first as u64 * PAGE, pages as u64 * PAGE);
        // a mapping of its own, also for this process's own pages: freeing the import leaves the pages to
        // their owner
        let view = self.gpus[gpu].render.map_range(offset, len).map_err(|_| libc::EINVAL)?;
        let backing = Backing::Imported {
            gpu,
            offset,
            view: view as u64,
        };
        let bo = Bo {
            va,
            size: len,
            len,
            flags: flags::VRAM,
            backing,
            mapped: false,
        };
        let mut g = self.bos.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        let handle = (gpu_id as u64) << 32 | g.0;
        g.1.insert(handle, bo);
        a.set_u64(0, handle);
        a.set_u64(16, offset);
        a.set_u32(44, flags);
        Ok(())
    }

    /// `MAP_MEMORY_TO_GPU` / `UNMAP_MEMORY_FROM_GPU`: handle @0, device_ids_array_ptr @8, n_devices @16,
    /// n_success @20 (out: every device).
    pub fn map(&self, a: &mut Args, map: bool) -> Result<(), Errno> {
        let (handle, ids_ptr, n) = (a.u64(0), a.u64(8), a.u32(16));
        if n == 0 || n > 64 {
            return Err(libc::EINVAL);
        }
        let mut ids = vec![0u8; n as usize * 4];
        args::read_user(ids_ptr, &mut ids)?;
        for id in ids.chunks_exact(4) {
            let id = u32::from_le_bytes(id.try_into().expect("4 bytes"));
            self.gpu_index(id).ok_or(libc::EINVAL)?;
        }
        let mut g = self.bos.inner.lock().unwrap_or_else(|e| e.into_inner());
        let bo = g.1.get_mut(&handle).ok_or(libc::EINVAL)?;
        if map && !bo.mapped {
            let host = self.host_of(bo).ok_or(libc::EINVAL)?;
            self.mem
                .map_host_at(bo.va, bo.len, host as u64, label(bo.flags))
                .map_err(|_| libc::EINVAL)?;
            // coherent memory is fine-grained: what a float atomic does there depends on the device
            if bo.flags & flags::COHERENT != 0 {
                let _ = self.mem.set_fine_grained(bo.va);
            }
            bo.mapped = true;
        } else if !map && bo.mapped {
            let _ = self.mem.unmap_host(bo.va);
            bo.mapped = false;
        }
        a.set_u32(20, n);
        Ok(())
    }
}

/// What a fault report calls memory of this kind.
fn label(f: u32) -> &'static str {
    if f & flags::VRAM != 0 {
        "VRAM"
    } else if f & flags::GTT != 0 {
        "GTT memory"
    } else if f & flags::USERPTR != 0 {
        "host memory"
    } else if f & flags::DOORBELL != 0 {
        "doorbells"
    } else {
        "MMIO"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_hands_out_first_fit_and_merges_what_is_given_back() {
        let mut s = Space::new(0, 16 * PAGE);
        let a = s.take(4 * PAGE).unwrap();
        let b = s.take(4 * PAGE).unwrap();
        let c = s.take(4 * PAGE).unwrap();
        assert_eq!((a, b, c), (0, 4 * PAGE, 8 * PAGE));
        assert_eq!(s.used(), 12 * PAGE);
        assert!(s.take(8 * PAGE).is_none());
        s.give(a, 4 * PAGE);
        s.give(b, 4 * PAGE);
        assert_eq!(s.take(8 * PAGE), Some(0), "two neighbours merged");
        s.give(0, 8 * PAGE);
        s.give(c, 4 * PAGE);
        assert_eq!(s.take(16 * PAGE), Some(0), "all of it again");
    }
}
