//! Memory: the attributes of regions and memory pools, allocating from them and freeing, synchronous and
//! asynchronous copies and fills, registering and locking host memory (kernels reach it), pointer information,
//! which agents may use memory, coherency types, and deallocation callbacks. The work behind copies and locking
//! is in the crate's memory.rs.

use std::ffi::c_void;

use super::{nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::info;
use crate::memory::{self, CopyJob};
use crate::runtime::{Runtime, AGENT_TAG, POOL_TAG, REGION_TAG};

export! {
    fn hsa_region_get_info(region: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.pool(region, REGION_TAG)?;
            // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
            unsafe { info::region(r, i, attribute, value) }
        })
    }
    fn hsa_memory_allocate(region: u64, size: usize, ptr: *mut *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.pool(region, REGION_TAG)?;
            allocate_into(r, i, size, ptr)
        })
    }
    fn hsa_memory_free(ptr: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| if ptr.is_null() { Ok(()) } else { r.free(ptr as u64) })
    }
    fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> Status = ffi::ERROR; {
        with(|r| memory::copy(r, dst as u64, src as u64, size as u64))
    }
    fn hsa_memory_register(ptr: *mut c_void, size: usize) -> Status = ffi::ERROR; {
        // registered host memory becomes reachable by kernels, like locked memory
        with(|r| {
            if ptr.is_null() || size == 0 {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            if !r.mem.host_accessible(ptr as u64, size as u64) {
                r.mem.map_host(ptr as u64, size as u64, "registered host memory").map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
            }
            Ok(())
        })
    }
    fn hsa_memory_deregister(ptr: *mut c_void, _size: usize) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(ptr)?;
            // memory that was device memory already had nothing to undo
            let _ = r.mem.unmap_host(ptr as u64);
            Ok(())
        })
    }
    fn hsa_memory_assign_agent(ptr: *mut c_void, agent: u64, _access: u32) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(ptr)?;
            r.agent(agent).map(drop)
        })
    }
    fn hsa_amd_memory_pool_get_info(pool: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.pool(pool, POOL_TAG)?;
            // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
            unsafe { info::pool(r, i, attribute, value) }
        })
    }
    fn hsa_amd_memory_pool_allocate(pool: u64, size: usize, _flags: u32, ptr: *mut *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.pool(pool, POOL_TAG)?;
            allocate_into(r, i, size, ptr)
        })
    }
    fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> Status = ffi::ERROR; {
        hsa_memory_free(ptr)
    }
    fn hsa_amd_agents_allow_access(n: u32, agents: *const u64, _flags: *const u32, ptr: *const c_void) -> Status = ffi::ERROR; {
        with(|r| {
            // SAFETY: `agents` points to `n` elements that stay valid for the call, as the API requires.
            for &a in unsafe { slice(agents, n as usize) }? {
                r.agent(a)?;
            }
            nonnull(ptr)
        })
    }
    fn hsa_amd_memory_pool_can_migrate(src: u64, dst: u64, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            r.pool(src, POOL_TAG)?;
            r.pool(dst, POOL_TAG)?;
            // SAFETY: `result` is null or points to storage for the result, as the API requires.
            unsafe { out(result, false) }
        })
    }
    fn hsa_amd_memory_lock(host: *mut c_void, size: usize, agents: *const u64, n: i32, agent_ptr: *mut *mut c_void) -> Status = ffi::ERROR; {
        with(|r| lock(r, host, size, agents, n, agent_ptr))
    }
    fn hsa_amd_memory_lock_to_pool(host: *mut c_void, size: usize, agents: *const u64, n: i32, pool: u64, _flags: u32, agent_ptr: *mut *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            r.pool(pool, POOL_TAG)?;
            lock(r, host, size, agents, n, agent_ptr)
        })
    }
    fn hsa_amd_memory_unlock(host: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| memory::unlock(r, host as u64))
    }
    fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> Status = ffi::ERROR; {
        with(|r| {
            if ptr.is_null() || !(ptr as u64).is_multiple_of(4) {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            if count == 0 {
                return Ok(());
            }
            let bytes = (count as u64).checked_mul(4).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let ptr = memory::host_range(r, ptr as u64, bytes)? as *mut c_void;
            // SAFETY: the range was checked (a live allocation, or the caller's own memory).
            let words = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u32>(), count) };
            words.fill(value);
            Ok(())
        })
    }
    fn hsa_amd_memory_async_copy(dst: *mut c_void, dst_agent: u64, src: *const c_void, src_agent: u64, size: usize, n: u32, deps: *const u64, completion: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(dst_agent)?;
            r.agent(src_agent)?;
            // SAFETY: `deps` points to `n` elements that stay valid for the call, as the API requires.
            let deps = unsafe { slice(deps, n as usize) }?.to_vec();
            memory::submit(r, CopyJob::linear(dst as u64, src as u64, size as u64, deps, completion))
        })
    }
    fn hsa_amd_memory_async_copy_rect(dst: *const ffi::PitchedPtr, dst_offset: *const ffi::Dim3, src: *const ffi::PitchedPtr, src_offset: *const ffi::Dim3, range: *const ffi::Dim3, agent: u64, _dir: u32, n: u32, deps: *const u64, completion: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            for p in [dst_offset, src_offset, range] {
                nonnull(p)?;
            }
            nonnull(dst)?;
            nonnull(src)?;
            // SAFETY: checked non-null; the API requires valid structs.
            let (d, doff, s, soff, rg) = unsafe { (*dst, *dst_offset, *src, *src_offset, *range) };
            let at = |p: &ffi::PitchedPtr, o: &ffi::Dim3| p.base as u64 + o.z as u64 * p.slice as u64 + o.y as u64 * p.pitch as u64 + o.x as u64;
            let job = CopyJob {
                dst: at(&d, &doff),
                src: at(&s, &soff),
                row: rg.x as u64,
                rows: rg.y.max(1) as u64,
                slices: rg.z.max(1) as u64,
                dst_pitch: d.pitch as u64,
                dst_slice: d.slice as u64,
                src_pitch: s.pitch as u64,
                src_slice: s.slice as u64,
                // SAFETY: `deps` points to `n` elements that stay valid for the call, as the API requires.
                deps: unsafe { slice(deps, n as usize) }?.to_vec(),
                completion,
            };
            memory::submit(r, job)
        })
    }
    fn hsa_amd_pointer_info(ptr: *const c_void, info: *mut ffi::PointerInfo, alloc: Option<extern "C" fn(usize) -> *mut c_void>, n: *mut u32, accessible: *mut *mut u64) -> Status = ffi::ERROR; {
        with(|r| pointer_info(r, ptr as u64, info, alloc, n, accessible))
    }
    fn hsa_amd_pointer_info_set_userdata(ptr: *const c_void, _data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| r.allocation_of(ptr as u64).map(drop).ok_or(ffi::ERROR_INVALID_ARGUMENT))
    }
    fn hsa_amd_coherency_get_type(agent: u64, kind: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            // SAFETY: `kind` is null or points to storage for the result, as the API requires.
            unsafe { out(kind, 0) }
        })
    }
    fn hsa_amd_coherency_set_type(agent: u64, kind: u32) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            if kind > 1 { Err(ffi::ERROR_INVALID_ARGUMENT) } else { Ok(()) }
        })
    }
    fn hsa_amd_register_deallocation_callback(ptr: *mut c_void, callback: Option<crate::runtime::DeallocCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let f = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            nonnull(ptr)?;
            let (start, _) = r.allocation_of(ptr as u64).ok_or(ffi::ERROR_INVALID_ALLOCATION)?;
            r.dealloc.lock().unwrap_or_else(|e| e.into_inner()).push((start, ptr as u64, f, data as usize));
            Ok(())
        })
    }
    fn hsa_amd_deregister_deallocation_callback(ptr: *mut c_void, callback: Option<crate::runtime::DeallocCallback>) -> Status = ffi::ERROR; {
        with(|r| {
            let f = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let mut d = r.dealloc.lock().unwrap_or_else(|e| e.into_inner());
            let i = d.iter().position(|e| e.1 == ptr as u64 && std::ptr::fn_addr_eq(e.2, f)).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            d.remove(i);
            Ok(())
        })
    }
}

/// Allocates `size` bytes from pool `pool` into `*ptr`.
fn allocate_into(r: &Runtime, pool: usize, size: usize, ptr: *mut *mut c_void) -> Result<(), Status> {
    nonnull(ptr)?;
    // SAFETY: `ptr` is null or points to storage for the result, as the API requires.
    unsafe { out(ptr, r.allocate(pool, size as u64)? as *mut c_void) }
}

/// `hsa_amd_memory_lock[_to_pool]`: checks the range and the agents, locks the range, and hands back the
/// address agents reach it at.
fn lock(
    r: &Runtime,
    host: *mut c_void,
    size: usize,
    agents: *const u64,
    n: i32,
    agent_ptr: *mut *mut c_void,
) -> Result<(), Status> {
    if host.is_null() || size == 0 {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: `agents` points to `n.max(0) as usize` elements that stay valid for the call, as the API requires.
    for &a in unsafe { slice(agents, n.max(0) as usize) }? {
        r.agent(a)?;
    }
    // SAFETY: `agent_ptr` is null or points to storage for the result, as the API requires.
    unsafe { out(agent_ptr, memory::lock(r, host as u64, size as u64)? as *mut c_void) }
}

/// `hsa_amd_pointer_info`: what `ptr` lies in (an API allocation, or locked host memory found by its host or
/// its agent address), written into as much of the caller's record as its `size` field allows; and, when asked
/// for, the agents that can reach it, in an array from the caller's allocator.
fn pointer_info(
    r: &Runtime,
    ptr: u64,
    info: *mut ffi::PointerInfo,
    alloc: Option<extern "C" fn(usize) -> *mut c_void>,
    n: *mut u32,
    accessible: *mut *mut u64,
) -> Result<(), Status> {
    nonnull(info)?;
    // SAFETY: the caller provides an hsa_amd_pointer_info_t whose `size` field says how much of it we may fill.
    let size = unsafe { (*info).size } as usize;
    let found = r
        .allocation_of(ptr)
        .map(|(s, a)| {
            (
                s,
                a.size,
                r.pools[a.pool].agent as u64,
                r.pools[a.pool].flags,
                ffi::POINTER_TYPE_HSA,
            )
        })
        .or_else(|| {
            // locked host memory, found by its host or its agent address
            let locked = r.locked.lock().unwrap_or_else(|e| e.into_inner());
            locked
                .iter()
                .find(|(h, (l, a))| (ptr >= **h && ptr < *h + l) || (ptr >= *a && ptr < a + l))
                .map(|(h, (l, a))| (*h, *l, *a, ffi::GLOBAL_FLAG_COARSE_GRAINED, ffi::POINTER_TYPE_LOCKED))
        });
    let full = std::mem::size_of::<ffi::PointerInfo>();
    let mut record = ffi::PointerInfo {
        size: size.min(full) as u32,
        kind: ffi::POINTER_TYPE_UNKNOWN,
        agent_base_address: std::ptr::null_mut(),
        host_base_address: std::ptr::null_mut(),
        size_in_bytes: 0,
        user_data: std::ptr::null_mut(),
        agent_owner: 0,
        global_flags: 0,
    };
    if let Some((start, len, extra, flags, kind)) = found {
        // for API allocations `extra` is the owning agent; for locked memory, the agent address
        let (agent_base, owner) = if kind == ffi::POINTER_TYPE_LOCKED {
            (extra, 0)
        } else {
            (start, extra)
        };
        record.kind = kind;
        record.agent_base_address = agent_base as *mut c_void;
        record.host_base_address = start as *mut c_void;
        record.size_in_bytes = len as usize;
        record.agent_owner = AGENT_TAG + owner;
        record.global_flags = flags;
    }
    // SAFETY: `info` has room for `size` bytes (the caller said so); we copy no more than that.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&record as *const ffi::PointerInfo).cast::<u8>(),
            info.cast::<u8>(),
            size.min(full),
        )
    };
    if !n.is_null() && !accessible.is_null() {
        let all: Vec<u64> = if found.is_some() {
            (0..r.agents.len() as u64).map(|i| AGENT_TAG + i).collect()
        } else {
            Vec::new()
        };
        let alloc = alloc.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
        // SAFETY: `n` is null or points to storage for the result, as the API requires.
        unsafe { out(n, all.len() as u32) }?;
        if !all.is_empty() {
            let p = alloc(all.len() * 8).cast::<u64>();
            nonnull(p)?;
            // SAFETY: the caller's allocator returned room for `all.len()` handles.
            unsafe { std::ptr::copy_nonoverlapping(all.as_ptr(), p, all.len()) };
            // SAFETY: `accessible` is null or points to storage for the result, as the API requires.
            unsafe { out(accessible, p) }?;
        }
    }
    Ok(())
}
