//! Copies between host and device memory: synchronous (`hsa_memory_copy`) and on an SDMA-like copy engine
//! (`hsa_amd_memory_async_copy[_rect]`) that waits for dependency signals, copies, stamps the completion
//! signal's timestamps and decrements it. Also host memory locked for agents, and memory from outside: shared
//! with and attached from other processes (IPC), and interop buffers.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;

use crate::ffi::{self, Status};
use crate::runtime::{rt, Runtime};
use crate::signal;

/// Checks a host-side range and returns the host address its bytes are at. Inside device memory it must lie in
/// one live allocation (locked host memory's device range stands for the host bytes); outside, it is the
/// caller's own host memory (as with the real runtime, which copies whatever the caller points at).
pub fn host_range(rt: &Runtime, address: u64, len: u64) -> Result<u64, Status> {
    if address == 0 && len > 0 {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    if rt.mem.overlaps(address, len) {
        if !rt.mem.host_accessible(address, len.max(1)) {
            eprintln!("wavejit: a copy of {len} bytes at {address:#x} does not lie inside one live allocation");
            return Err(ffi::ERROR_INVALID_ALLOCATION);
        }
        return Ok(rt.mem.host_address(address));
    }
    Ok(address)
}

/// Copies `len` bytes after checking both ranges.
pub fn copy(rt: &Runtime, dst: u64, src: u64, len: u64) -> Result<(), Status> {
    if len == 0 {
        return Ok(());
    }
    let (dst, src) = (host_range(rt, dst, len)?, host_range(rt, src, len)?);
    // SAFETY: both ranges were checked: inside device memory they are live allocations (mapped host memory);
    // outside it they are the caller's host buffers, which the API requires to be valid for `len` bytes.
    // `copy` (memmove) tolerates overlap.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len as usize) };
    Ok(())
}

/// One asynchronous copy: rows of `row` bytes, `rows` per slice, `slices` slices, with pitches.
pub struct CopyJob {
    pub dst: u64,
    pub src: u64,
    pub row: u64,
    pub rows: u64,
    pub slices: u64,
    pub dst_pitch: u64,
    pub dst_slice: u64,
    pub src_pitch: u64,
    pub src_slice: u64,
    pub deps: Vec<u64>,
    pub completion: u64,
}

impl CopyJob {
    pub fn linear(dst: u64, src: u64, len: u64, deps: Vec<u64>, completion: u64) -> CopyJob {
        CopyJob {
            dst,
            src,
            row: len,
            rows: 1,
            slices: 1,
            dst_pitch: len,
            dst_slice: len,
            src_pitch: len,
            src_slice: len,
            deps,
            completion,
        }
    }

    /// Checks every row before anything is copied.
    pub fn check(&self, rt: &Runtime) -> Result<(), Status> {
        // a rectangle's rows are checked one by one: refuse absurd shapes rather than loop for ever
        if self.rows.checked_mul(self.slices).is_none_or(|n| n > 1 << 24) {
            return Err(ffi::ERROR_INVALID_ARGUMENT);
        }
        for z in 0..self.slices {
            for y in 0..self.rows {
                host_range(rt, self.dst + z * self.dst_slice + y * self.dst_pitch, self.row)?;
                host_range(rt, self.src + z * self.src_slice + y * self.src_pitch, self.row)?;
            }
        }
        Ok(())
    }

    /// Whether every dependency signal has reached 0.
    fn ready(&self, rt: &Runtime) -> bool {
        self.deps
            .iter()
            .all(|&d| signal::value(rt, d).map_or(true, |v| v.load(Ordering::Acquire) == 0))
    }

    /// The profile record of this copy, which ran from `start` (host time) until now.
    fn record(&self, rt: &Runtime, prof: &gpu::profile::Profile, start: u64) -> profiler_hooks::record::CopyRecord {
        // the agent owning the pool an address was allocated from (host memory and system pools: the CPU)
        let agent = |a: u64| {
            let allocs = rt.allocs.lock().unwrap_or_else(|e| e.into_inner());
            let owner = allocs
                .range(..=a)
                .next_back()
                .filter(|(&base, al)| a < base + al.size)
                .map(|(_, al)| rt.pools[al.pool].agent);
            owner.unwrap_or(0) as u32
        };
        let (src_agent, dst_agent) = (agent(self.src), agent(self.dst));
        let side = |a: u32| if a == 0 { "HOST" } else { "DEVICE" };
        profiler_hooks::record::CopyRecord {
            id: prof.next_copy(),
            pid: prof.pid,
            bytes: self.row * self.rows * self.slices,
            src: self.src,
            dst: self.dst,
            direction: format!("{}_TO_{}", side(src_agent), side(dst_agent)),
            src_agent,
            dst_agent,
            start_ns: start,
            end_ns: profiler_hooks::record::now_ns(),
        }
    }

    fn run(&self, rt: &Runtime) {
        for &d in &self.deps {
            let _ = signal::wait(rt, d, ffi::CONDITION_EQ, 0, u64::MAX);
        }
        let start = rt.stamp_time();
        let host_start = profiler_hooks::record::now_ns();
        // the ranges were checked at submission; a range freed since then fails the copy, and the completion
        // signal then goes negative, as the API prescribes for a failed copy
        let mut ok = true;
        for z in 0..self.slices {
            for y in 0..self.rows {
                ok &= copy(
                    rt,
                    self.dst + z * self.dst_slice + y * self.dst_pitch,
                    self.src + z * self.src_slice + y * self.src_pitch,
                    self.row,
                )
                .is_ok();
            }
        }
        let end = rt.stamp_time();
        if let Some(prof) = gpu::profile::get() {
            prof.write(&profiler_hooks::record::Record::Copy(self.record(rt, prof, host_start)));
        }
        if self.completion != 0 {
            if let Ok((s, e)) = signal::timestamps(rt, self.completion) {
                s.store(start, Ordering::Relaxed);
                e.store(end, Ordering::Relaxed);
            }
            let _ = if ok {
                signal::rmw(rt, self.completion, signal::Rmw::Sub, 1).map(drop)
            } else {
                signal::store(rt, self.completion, -1)
            };
        }
    }
}

/// Queues a checked job on the copy engine (started on first use).
pub fn submit(rt: &Arc<Runtime>, job: CopyJob) -> Result<(), Status> {
    job.check(rt)?;
    if job.completion != 0 && !rt.signals.is_live(job.completion) || job.deps.iter().any(|&d| !rt.signals.is_live(d)) {
        return Err(ffi::ERROR_INVALID_SIGNAL);
    }
    let mut engine = rt.copies.lock().unwrap_or_else(|e| e.into_inner());
    if engine.is_none() {
        let (tx, rx) = mpsc::channel::<CopyJob>();
        std::thread::Builder::new()
            .name("wavejit-copy".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    let Some(rt) = rt_for_engine() else { return };
                    if job.ready(&rt) {
                        job.run(&rt);
                    } else {
                        // copies are ordered only through their signals: one still waiting for its
                        // dependencies waits on a thread of its own, and the copies behind it go ahead
                        let _ = std::thread::Builder::new()
                            .name("wavejit-copy-wait".into())
                            .spawn(move || job.run(&rt));
                    }
                }
            })
            .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
        *engine = Some(tx);
    }
    engine.as_ref().and_then(|tx| tx.send(job).ok()).ok_or(ffi::ERROR)
}

fn rt_for_engine() -> Option<Arc<Runtime>> {
    rt().ok()
}

/// Closes the copy engine's queue (its thread ends after the jobs already queued).
pub fn stop_copy_engine(rt: &Runtime) {
    rt.copies.lock().unwrap_or_else(|e| e.into_inner()).take();
}

/// Locks `len` bytes of host memory at `address` (`hsa_amd_memory_lock`) and returns the address agents reach
/// them at. Memory already in device memory (hipHostMalloc's) is its own agent address; other host memory gets
/// a device address range of its own that reaches it, as locking gives on hardware (HIP relies on the two
/// addresses differing). Locking the same start again replaces the earlier lock.
pub fn lock(rt: &Runtime, address: u64, len: u64) -> Result<u64, Status> {
    let agent = if rt.mem.host_accessible(address, len) {
        address
    } else {
        rt.mem
            .alias_host(address, len, "locked host memory")
            .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?
    };
    let previous = rt
        .locked
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(address, (len, agent));
    if let Some((_, old)) = previous.filter(|(_, old)| *old != address) {
        let _ = rt.mem.free(old);
    }
    Ok(agent)
}

/// Ends the lock of the host memory locked at `address` (`hsa_amd_memory_unlock`).
pub fn unlock(rt: &Runtime, address: u64) -> Result<(), Status> {
    let removed = rt.locked.lock().unwrap_or_else(|e| e.into_inner()).remove(&address);
    let (_, agent) = removed.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
    // nothing to undo for memory that was already device memory
    if agent != address {
        let _ = rt.mem.free(agent);
    }
    Ok(())
}

/// Shares the allocation starting at `start` with other processes, for an IPC handle: (memfd descriptor, low
/// 32 bits of its inode, the allocation's page-rounded length). The inode tells an attaching process
/// ([`map_shared`]) it found this memory, not a later file that got the same descriptor number.
pub fn share(rt: &Runtime, start: u64) -> Result<(u32, u32, u64), Status> {
    use std::os::unix::fs::MetadataExt;
    let (fd, span) = rt.mem.share(start).map_err(|e| {
        eprintln!("wavejit: sharing memory for IPC: {e}");
        ffi::ERROR_OUT_OF_RESOURCES
    })?;
    if !(0..1 << 16).contains(&fd) {
        return Err(ffi::ERROR_OUT_OF_RESOURCES);
    }
    let ino = std::fs::metadata(format!("/proc/self/fd/{fd}"))
        .map(|m| m.ino())
        .map_err(|_| ffi::ERROR)?;
    Ok((fd as u32, ino as u32, span))
}

/// Maps `len` bytes of memory another process shared (an IPC handle made there: memfd `fd` of process `pid`,
/// whose inode's low 32 bits are `ino`) into an allocation of this process's device memory; returns its device
/// address (also its host address). Freeing the allocation unmaps it.
pub fn map_shared(rt: &Runtime, pid: u32, fd: i32, ino: u32, len: u64) -> Result<u64, Status> {
    use std::os::unix::fs::MetadataExt;
    let path = format!("/proc/{pid}/fd/{fd}");
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&path).map_err(|e| {
        eprintln!("wavejit: cannot open the IPC memory of process {pid} ({path}: {e}); has that process freed the memory or ended (or does it belong to another user)?");
        ffi::ERROR_INVALID_ARGUMENT
    })?;
    let meta = file.metadata().map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
    if meta.ino() as u32 != ino {
        eprintln!(
            "wavejit: the IPC memory of process {pid} is gone (descriptor {fd} is another file now): was it freed?"
        );
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let size = meta.len();
    if size < len {
        eprintln!("wavejit: the IPC memory of process {pid} holds {size} bytes, not the {len} asked for");
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    rt.mem
        .allocate_shared(file.into(), len, &format!("IPC memory of process {pid}"))
        .map_err(|e| {
            eprintln!("wavejit: attaching IPC memory: {e}");
            ffi::ERROR_OUT_OF_RESOURCES
        })
}

/// [`map_shared`] for `hsa_amd_ipc_memory_attach`: the mapping lasts until [`unmap_foreign`].
pub fn ipc_attach(rt: &Runtime, pid: u32, fd: i32, ino: u32, len: u64) -> Result<u64, Status> {
    let address = map_shared(rt, pid, fd, ino, len)?;
    rt.foreign.lock().unwrap_or_else(|e| e.into_inner()).insert(address);
    Ok(address)
}

/// Maps the buffer behind file descriptor `fd` (a DMA-BUF, a memfd: anything the host can map shared) into
/// device memory; returns its device address and size. The caller keeps its descriptor.
pub fn interop_map(rt: &Runtime, fd: i32) -> Result<(u64, u64), Status> {
    use std::os::fd::BorrowedFd;
    if fd < 0 {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller passes an open descriptor and keeps it open for the call; it is only duplicated.
    let own = unsafe { BorrowedFd::borrow_raw(fd) }
        .try_clone_to_owned()
        .map_err(|e| {
            eprintln!("wavejit: interop handle {fd}: {e}");
            ffi::ERROR_INVALID_ARGUMENT
        })?;
    let file = std::fs::File::from(own);
    use std::io::Seek;
    let len = (&file).seek(std::io::SeekFrom::End(0)).unwrap_or(0);
    if len == 0 {
        eprintln!("wavejit: interop handle {fd} is not a buffer that can be mapped (no size)");
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let address = rt
        .mem
        .allocate_shared(file.into(), len, "interop buffer")
        .map_err(|e| {
            eprintln!("wavejit: mapping interop buffer {fd}: {e}");
            ffi::ERROR_OUT_OF_RESOURCES
        })?;
    rt.foreign.lock().unwrap_or_else(|e| e.into_inner()).insert(address);
    Ok((address, len))
}

/// Ends an [`ipc_attach`] or [`interop_map`] at device address `address`; false if there is none.
pub fn unmap_foreign(rt: &Runtime, address: u64) -> bool {
    if !rt.foreign.lock().unwrap_or_else(|e| e.into_inner()).remove(&address) {
        return false;
    }
    // the shared pages go from this process; their owner keeps them
    let _ = rt.mem.free(address);
    true
}
