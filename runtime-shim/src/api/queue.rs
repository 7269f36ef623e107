//! Queues: creating AQL queues on GPU agents and soft queues, destroying and inactivating them, their read and
//! write indices (every memory-order variant does the same), CU masks and priority. The queues themselves and
//! their packet processors are in the crate's queue.rs.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use super::{nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::queue;
use crate::runtime::{rt, REGION_TAG};

export! {
    fn hsa_queue_create(agent: u64, size: u32, kind: u32, callback: Option<queue::ErrorCallback>, data: *mut c_void, _private: u32, _group: u32, q: *mut *mut ffi::HsaQueue) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(q)?;
            let (i, dev) = r.gpu(agent)?;
            let created = queue::create(r, i, dev, size, kind, callback, data)?;
            // SAFETY: `q` is null or points to storage for the result, as the API requires.
            unsafe { out(q, created.address as *mut ffi::HsaQueue) }
        })
    }
    fn hsa_queue_destroy(q: *mut ffi::HsaQueue) -> Status = ffi::ERROR; {
        with(|r| {
            let removed = r.queues.lock().unwrap_or_else(|e| e.into_inner()).remove(&(q as u64));
            let qq = removed.ok_or(ffi::ERROR_INVALID_QUEUE)?;
            qq.stop(r);
            Ok(())
        })
    }
    fn hsa_queue_inactivate(q: *mut ffi::HsaQueue) -> Status = ffi::ERROR; {
        with(|r| queue::find(r, q as u64).map(drop))
    }
    fn hsa_queue_load_read_index_relaxed(q: *const ffi::HsaQueue) -> u64 = 0; { idx(q, ffi::AMD_QUEUE_READ_DISPATCH_ID) }
    fn hsa_queue_load_read_index_acquire(q: *const ffi::HsaQueue) -> u64 = 0; { idx(q, ffi::AMD_QUEUE_READ_DISPATCH_ID) }
    fn hsa_queue_load_read_index_scacquire(q: *const ffi::HsaQueue) -> u64 = 0; { idx(q, ffi::AMD_QUEUE_READ_DISPATCH_ID) }
    fn hsa_queue_load_write_index_relaxed(q: *const ffi::HsaQueue) -> u64 = 0; { idx(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID) }
    fn hsa_queue_load_write_index_acquire(q: *const ffi::HsaQueue) -> u64 = 0; { idx(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID) }
    fn hsa_queue_load_write_index_scacquire(q: *const ffi::HsaQueue) -> u64 = 0; { idx(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID) }
    fn hsa_queue_store_write_index_relaxed(q: *const ffi::HsaQueue, v: u64) -> () = (); { set_idx(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID, v) }
    fn hsa_queue_store_write_index_release(q: *const ffi::HsaQueue, v: u64) -> () = (); { set_idx(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID, v) }
    fn hsa_queue_store_write_index_screlease(q: *const ffi::HsaQueue, v: u64) -> () = (); { set_idx(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID, v) }
    fn hsa_queue_store_read_index_relaxed(q: *const ffi::HsaQueue, v: u64) -> () = (); { set_idx(q, ffi::AMD_QUEUE_READ_DISPATCH_ID, v) }
    fn hsa_queue_store_read_index_release(q: *const ffi::HsaQueue, v: u64) -> () = (); { set_idx(q, ffi::AMD_QUEUE_READ_DISPATCH_ID, v) }
    fn hsa_queue_store_read_index_screlease(q: *const ffi::HsaQueue, v: u64) -> () = (); { set_idx(q, ffi::AMD_QUEUE_READ_DISPATCH_ID, v) }
    fn hsa_queue_add_write_index_relaxed(q: *const ffi::HsaQueue, v: u64) -> u64 = 0; { add_idx(q, v) }
    fn hsa_queue_add_write_index_acquire(q: *const ffi::HsaQueue, v: u64) -> u64 = 0; { add_idx(q, v) }
    fn hsa_queue_add_write_index_release(q: *const ffi::HsaQueue, v: u64) -> u64 = 0; { add_idx(q, v) }
    fn hsa_queue_add_write_index_scacquire(q: *const ffi::HsaQueue, v: u64) -> u64 = 0; { add_idx(q, v) }
    fn hsa_queue_add_write_index_screlease(q: *const ffi::HsaQueue, v: u64) -> u64 = 0; { add_idx(q, v) }
    fn hsa_queue_add_write_index_acq_rel(q: *const ffi::HsaQueue, v: u64) -> u64 = 0; { add_idx(q, v) }
    fn hsa_queue_add_write_index_scacq_screl(q: *const ffi::HsaQueue, v: u64) -> u64 = 0; { add_idx(q, v) }
    fn hsa_queue_cas_write_index_relaxed(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 = 0; { cas_idx(q, e, v) }
    fn hsa_queue_cas_write_index_acquire(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 = 0; { cas_idx(q, e, v) }
    fn hsa_queue_cas_write_index_release(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 = 0; { cas_idx(q, e, v) }
    fn hsa_queue_cas_write_index_scacquire(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 = 0; { cas_idx(q, e, v) }
    fn hsa_queue_cas_write_index_screlease(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 = 0; { cas_idx(q, e, v) }
    fn hsa_queue_cas_write_index_acq_rel(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 = 0; { cas_idx(q, e, v) }
    fn hsa_queue_cas_write_index_scacq_screl(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 = 0; { cas_idx(q, e, v) }
    fn hsa_amd_queue_cu_set_mask(q: *const ffi::HsaQueue, count: u32, mask: *const u32) -> Status = ffi::ERROR; {
        with(|r| {
            queue::find(r, q as u64)?;
            // SAFETY: `mask` points to a word per 32 CUs that stay valid for the call, as the API requires.
            unsafe { slice(mask, count.div_ceil(32) as usize) }.map(drop)
        })
    }
    fn hsa_amd_queue_cu_get_mask(q: *const ffi::HsaQueue, count: u32, mask: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            let qq = queue::find(r, q as u64)?;
            nonnull(mask)?;
            for w in 0..count.div_ceil(32) {
                let bits = qq.device.compute_units.saturating_sub(w * 32).min(32);
                // SAFETY: `mask` has room for a word per 32 CUs, as the API requires.
                unsafe { out(mask.wrapping_add(w as usize), if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 }) }?;
            }
            Ok(())
        })
    }
    fn hsa_amd_queue_set_priority(q: *mut ffi::HsaQueue, priority: u32) -> Status = ffi::ERROR; {
        with(|r| {
            queue::find(r, q as u64)?;
            if priority > 2 { Err(ffi::ERROR_INVALID_ARGUMENT) } else { Ok(()) }
        })
    }
    fn hsa_soft_queue_create(region: u64, size: u32, _kind: u32, features: u32, doorbell: u64, q: *mut *mut ffi::HsaQueue) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(q)?;
            r.pool(region, REGION_TAG)?;
            let created = queue::create_soft(r, size, features, doorbell)?;
            // SAFETY: `q` is null or points to storage for the result, as the API requires.
            unsafe { out(q, created.address as *mut ffi::HsaQueue) }
        })
    }
}

/// A queue's dispatch-index field (for soft queues too: both are laid out as `amd_queue_t`).
fn index_field<'a>(q: *const ffi::HsaQueue, offset: usize) -> Option<&'a std::sync::atomic::AtomicU64> {
    if !rt().is_ok_and(|r| queue::is_live(&r, q as u64)) {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            eprintln!(
                "wavejit: a queue index function was given {q:p}, which is not a queue of this runtime (0 returned)"
            )
        });
        return None;
    }
    // SAFETY: `q` is a live queue of this runtime (checked above): a 256-byte amd_queue_t record; the index is an
    // aligned u64.
    Some(unsafe { std::sync::atomic::AtomicU64::from_ptr((q as usize + offset) as *mut u64) })
}

/// The index at `offset` of queue `q`; 0 if `q` is not a queue of this runtime.
fn idx(q: *const ffi::HsaQueue, offset: usize) -> u64 {
    index_field(q, offset).map_or(0, |f| f.load(Ordering::Acquire))
}
/// Sets the index at `offset` of queue `q`.
fn set_idx(q: *const ffi::HsaQueue, offset: usize, v: u64) {
    if let Some(f) = index_field(q, offset) {
        f.store(v, Ordering::Release);
    }
}
/// Adds `v` to queue `q`'s write index; returns the index before.
fn add_idx(q: *const ffi::HsaQueue, v: u64) -> u64 {
    index_field(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID).map_or(0, |f| f.fetch_add(v, Ordering::AcqRel))
}
/// Sets queue `q`'s write index to `v` if it is `e`; returns the index before.
fn cas_idx(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 {
    index_field(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID).map_or(0, |f| {
        match f.compare_exchange(e, v, Ordering::AcqRel, Ordering::Acquire) {
            Ok(o) | Err(o) => o,
        }
    })
}
