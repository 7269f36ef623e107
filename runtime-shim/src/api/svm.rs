//! Shared virtual memory: attributes per page range (kept by the crate's svm.rs), prefetches and migrations.
//! Every agent shares one memory, so prefetches and migrations move no data.

use std::ffi::c_void;

use super::{nonnull, slice, with};
use crate::ffi::{self, Status};
use crate::memory::{self, CopyJob};
use crate::runtime::POOL_TAG;
use crate::svm;

export! {
    fn hsa_amd_svm_attributes_set(ptr: *mut c_void, size: usize, list: *mut svm::Pair, count: usize) -> Status = ffi::ERROR; {
        with(|r| {
            // SAFETY: `list` points to `count` elements that stay valid for the call, as the API requires.
            let pairs = unsafe { slice(list as *const svm::Pair, count) }?;
            r.svm.lock().unwrap_or_else(|e| e.into_inner()).set(r, ptr as u64, size as u64, pairs)
        })
    }
    fn hsa_amd_svm_attributes_get(ptr: *mut c_void, size: usize, list: *mut svm::Pair, count: usize) -> Status = ffi::ERROR; {
        with(|r| {
            if count == 0 {
                return Ok(());
            }
            nonnull(list)?;
            // memory from the runtime's pools is not shared virtual memory, and an SVM query of it fails as it
            // does on AMD's driver (HIP's own tests expect hipMemRangeGetAttribute of hipHostMalloc memory to);
            // managed memory and plain host memory are SVM
            if r.allocation_of(ptr as u64).is_some() {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: checked non-null; the API requires `count` pairs the call may rewrite.
            let pairs = unsafe { std::slice::from_raw_parts_mut(list, count) };
            r.svm.lock().unwrap_or_else(|e| e.into_inner()).get(r, ptr as u64, size as u64, pairs)
        })
    }
    fn hsa_amd_svm_prefetch_async(ptr: *mut c_void, size: usize, agent: u64, n: u32, deps: *const u64, completion: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            // SAFETY: `deps` points to `n` elements that stay valid for the call, as the API requires.
            let deps = unsafe { slice(deps, n as usize) }?.to_vec();
            r.svm.lock().unwrap_or_else(|e| e.into_inner()).prefetched(r, ptr as u64, size as u64, agent)?;
            // an empty copy: it waits for the dependencies, then decrements the completion signal
            memory::submit(r, CopyJob::linear(ptr as u64, ptr as u64, 0, deps, completion))
        })
    }
    fn hsa_amd_memory_migrate(ptr: *const c_void, pool: u64, _flags: u32) -> Status = ffi::ERROR; {
        with(|r| {
            r.pool(pool, POOL_TAG)?;
            r.allocation_of(ptr as u64).filter(|(s, _)| *s == ptr as u64).map(drop).ok_or(ffi::ERROR_INVALID_ALLOCATION)
        })
    }
}
