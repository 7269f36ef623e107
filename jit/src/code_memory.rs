//! Memory for translated blocks: a few large reservations filled from the bottom, so that a process keeps a
//! handful of memory mappings however many blocks it translates.
//!
//! The JIT finalizes every block as soon as it is translated, and finalizing turns the pages written so far
//! read-only and executable. Cranelift's default provider takes each block's pages from the heap, so every
//! block split the heap's mapping in two (code pages between data pages): after about 32,000 blocks a process
//! reached Linux's limit of 65,530 mappings (`vm.max_map_count`), `mprotect` failed and the next block could
//! not be translated. rocPRIM's block-sort test does that in one process.
//!
//! Here each kind of memory (code, read-only data, writable data) has reservations of
//! [`RESERVATION`] bytes of address space, mapped inaccessible and without swap reserved. A reservation is
//! used from its start: the pages a block is written into are made writable, and finalizing gives every
//! written page of code or read-only data its final protection and starts the next block on a fresh page
//! (writable data keeps sharing its pages). A reservation is therefore
//! at most three mappings — final pages, writable pages, untouched rest — and the kernel merges neighbouring
//! final pages into one. Finalized pages are never written again, so code stays W^X. Nothing is freed before
//! [`JITMemoryProvider::free_memory`] (the JIT keeps its blocks for its whole life).

use std::io;

use cranelift_jit::{BranchProtection, JITMemoryProvider};
use cranelift_module::{ModuleError, ModuleResult};

/// The address space one reservation takes (1 GiB; a block larger than this gets a reservation of its own).
pub const RESERVATION: usize = 1 << 30;

/// One reservation: `[0, sealed)` has its final protection, `[sealed, writable)` is read-write, the rest is
/// inaccessible. `used` (between `sealed` and `writable`) is where the next allocation may start.
struct Reservation {
    base: *mut u8,
    len: usize,
    sealed: usize,
    writable: usize,
    used: usize,
}

/// The reservations of one kind of memory and the protection its finalized pages get.
struct Pool {
    prot: libc::c_int,
    reservations: Vec<Reservation>,
}

/// A [`JITMemoryProvider`] with code, read-only and writable pools (see the module documentation).
pub struct CodeMemory {
    page: usize,
    code: Pool,
    readonly: Pool,
    readwrite: Pool,
}

// SAFETY: the raw pointers are the bases of mappings owned by this value alone; it is used by one thread at a
// time (the JIT keeps its module behind a mutex).
unsafe impl Send for CodeMemory {}

impl Default for CodeMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl CodeMemory {
    pub fn new() -> CodeMemory {
        // SAFETY: sysconf only reads a system setting.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|p| p.is_power_of_two())
            .unwrap_or(4096);
        let pool = |prot| Pool {
            prot,
            reservations: Vec::new(),
        };
        CodeMemory {
            page,
            code: pool(libc::PROT_READ | libc::PROT_EXEC),
            readonly: pool(libc::PROT_READ),
            readwrite: pool(libc::PROT_READ | libc::PROT_WRITE),
        }
    }

    /// How many reservations the pools hold (each at most three memory mappings).
    pub fn reservations(&self) -> usize {
        [&self.code, &self.readonly, &self.readwrite]
            .iter()
            .map(|p| p.reservations.len())
            .sum()
    }

    fn allocate(&mut self, kind: Kind, size: usize, align: u64) -> io::Result<*mut u8> {
        let page = self.page;
        let align = usize::try_from(align)
            .ok()
            .filter(|a| a.is_power_of_two() && *a <= page)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("JIT memory: alignment {align} is not a power of two up to the page size {page}"),
                )
            })?;
        let pool = match kind {
            Kind::Code => &mut self.code,
            Kind::ReadOnly => &mut self.readonly,
            Kind::ReadWrite => &mut self.readwrite,
        };
        let fits = |r: &Reservation| {
            align_up(r.used, align)
                .checked_add(size)
                .is_some_and(|end| end <= r.len)
        };
        if !pool.reservations.last().is_some_and(fits) {
            let len = size
                .checked_next_multiple_of(page)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("JIT memory: {size} bytes")))?
                .max(RESERVATION);
            pool.reservations.push(reserve(len)?);
        }
        let r = pool
            .reservations
            .last_mut()
            .expect("a reservation that fits was just made");
        let start = align_up(r.used, align);
        let end = start + size;
        if end > r.writable {
            let to = end.next_multiple_of(page);
            // SAFETY: [writable, to) lies inside the reservation (`to` ≤ len, which is a multiple of the page
            // size); its pages are not finalized and hold nothing yet.
            let from = unsafe { r.base.add(r.writable) };
            protect(from, to - r.writable, libc::PROT_READ | libc::PROT_WRITE)?;
            r.writable = to;
        }
        r.used = end;
        // SAFETY: start ≤ len, inside the reservation.
        Ok(unsafe { r.base.add(start) })
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Code,
    ReadOnly,
    ReadWrite,
}

fn align_up(x: usize, align: usize) -> usize {
    x.next_multiple_of(align)
}

/// Maps `len` bytes of inaccessible address space with no swap reserved.
fn reserve(len: usize) -> io::Result<Reservation> {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("JIT memory: cannot reserve {len} bytes of address space: {e}"),
        ));
    }
    Ok(Reservation {
        base: p.cast(),
        len,
        sealed: 0,
        writable: 0,
        used: 0,
    })
}

fn protect(p: *mut u8, len: usize, prot: libc::c_int) -> io::Result<()> {
    // SAFETY: callers pass page-aligned ranges inside one of this provider's reservations.
    if unsafe { libc::mprotect(p.cast(), len, prot) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("JIT memory: mprotect of {len} bytes at {p:p} to {prot:#x}: {e}"),
        ));
    }
    Ok(())
}

impl JITMemoryProvider for CodeMemory {
    fn allocate_readexec(&mut self, size: usize, align: u64) -> io::Result<*mut u8> {
        self.allocate(Kind::Code, size, align)
    }

    fn allocate_readwrite(&mut self, size: usize, align: u64) -> io::Result<*mut u8> {
        self.allocate(Kind::ReadWrite, size, align)
    }

    fn allocate_readonly(&mut self, size: usize, align: u64) -> io::Result<*mut u8> {
        self.allocate(Kind::ReadOnly, size, align)
    }

    unsafe fn free_memory(&mut self) {
        for pool in [&mut self.code, &mut self.readonly, &mut self.readwrite] {
            for r in pool.reservations.drain(..) {
                // SAFETY: the caller promises nothing uses the memory any more; the range is one whole mapping
                // made by `reserve`.
                unsafe { libc::munmap(r.base.cast(), r.len) };
            }
        }
    }

    fn finalize(&mut self, branch_protection: BranchProtection) -> ModuleResult<()> {
        // branch target identification is an AArch64 feature this provider does not set
        let _ = branch_protection;
        let backend = |e: io::Error| ModuleError::Backend(e.into());
        let mut new_code = false;
        // writable data keeps its protection, so its pages need no sealing and are shared by later allocations
        for pool in [&mut self.code, &mut self.readonly] {
            let is_code = pool.prot & libc::PROT_EXEC != 0;
            for r in pool.reservations.iter_mut().filter(|r| r.sealed < r.writable) {
                // SAFETY: [sealed, writable) is inside the reservation.
                let p = unsafe { r.base.add(r.sealed) };
                let len = r.writable - r.sealed;
                if is_code {
                    // SAFETY: the range is mapped and was written through ordinary stores.
                    unsafe { wasmtime_jit_icache_coherence::clear_cache(p.cast(), len) }.map_err(backend)?;
                    new_code = true;
                }
                protect(p, len, pool.prot).map_err(backend)?;
                r.sealed = r.writable;
                r.used = r.writable;
            }
        }
        if new_code {
            wasmtime_jit_icache_coherence::pipeline_flush_mt().map_err(backend)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_writable_and_sealed_code_starts_on_a_fresh_page() {
        let mut m = CodeMemory::new();
        let a = m.allocate_readexec(10, 16).unwrap();
        let b = m.allocate_readexec(10, 16).unwrap();
        assert_eq!(a as usize % 16, 0);
        assert_eq!(b as usize - a as usize, 16, "unsealed code shares its page");
        m.finalize(BranchProtection::None).unwrap();
        let c = m.allocate_readexec(10, 16).unwrap();
        assert_eq!(c as usize % m.page, 0, "after finalizing, code starts on the next page");
        assert_eq!(c as usize - a as usize, m.page);
        let d = m.allocate_readwrite(8, 8).unwrap();
        m.finalize(BranchProtection::None).unwrap();
        let e = m.allocate_readwrite(8, 8).unwrap();
        assert_eq!(e as usize - d as usize, 8, "writable data keeps sharing its page");
        assert!(m.allocate_readexec(8, 3).is_err());
        assert!(m.allocate_readexec(8, 2 * m.page as u64).is_err());
        assert_eq!(m.reservations(), 2);
        // an allocation larger than a reservation gets one of its own
        m.allocate_readonly(RESERVATION + 1, 8).unwrap();
        assert_eq!(m.reservations(), 3);
        // SAFETY: nothing allocated above is used any more.
        unsafe { m.free_memory() };
        assert_eq!(m.reservations(), 0);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn code_finalized_one_function_at_a_time_runs() {
        let mut m = CodeMemory::new();
        let mut funcs = Vec::new();
        for i in 0..2000u32 {
            // mov eax, i; ret
            let code = [0xb8, i as u8, (i >> 8) as u8, (i >> 16) as u8, (i >> 24) as u8, 0xc3];
            let p = m.allocate_readexec(code.len(), 16).unwrap();
            // SAFETY: `p` is a fresh writable allocation of code.len() bytes.
            unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), p, code.len()) };
            m.finalize(BranchProtection::None).unwrap();
            funcs.push(p);
        }
        for (i, p) in funcs.iter().enumerate() {
            // SAFETY: `p` holds a finalized x86-64 function taking nothing and returning eax.
            let f = unsafe { std::mem::transmute::<*mut u8, extern "C" fn() -> u32>(*p) };
            assert_eq!(f(), i as u32);
        }
        assert_eq!(m.reservations(), 1);
    }
}
