//! Signals: creating and destroying them, the `hsa_signal_*` loads, stores, read-modify-writes and waits (each
//! memory-order variant does the same: loads acquire, stores release, read-modify-writes both), waits on any of
//! several signals and on signal groups, asynchronous handlers, and `hsa_amd_async_function`. The signals
//! themselves are in the crate's signal.rs.
//!
//! The loads, exchanges, compare-and-swaps and waits return a value and no status: 0 for a signal that is not
//! live (or with no runtime).

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use super::{nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::runtime::{rt, Runtime};
use crate::signal::{self, Rmw};

export! {
    fn hsa_signal_create(initial: i64, _n: u32, _consumers: *const u64, signal: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(signal)?;
            // SAFETY: `signal` is null or points to storage for the result, as the API requires.
            unsafe { out(signal, r.signals.create(r, initial, false)?) }
        })
    }
    fn hsa_amd_signal_create(initial: i64, _n: u32, _consumers: *const u64, attributes: u64, signal: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(signal)?;
            // SAFETY: `signal` is null or points to storage for the result, as the API requires.
            unsafe { out(signal, r.signals.create(r, initial, attributes & ffi::AMD_SIGNAL_IPC != 0)?) }
        })
    }
    fn hsa_signal_destroy(signal: u64) -> Status = ffi::ERROR; { with(|r| r.signals.destroy(r, signal)) }
    fn hsa_signal_load_relaxed(s: u64) -> i64 = 0; { load(s) }
    fn hsa_signal_load_acquire(s: u64) -> i64 = 0; { load(s) }
    fn hsa_signal_load_scacquire(s: u64) -> i64 = 0; { load(s) }
    fn hsa_signal_store_relaxed(s: u64, v: i64) -> () = (); { store(s, v) }
    fn hsa_signal_store_release(s: u64, v: i64) -> () = (); { store(s, v) }
    fn hsa_signal_store_screlease(s: u64, v: i64) -> () = (); { store(s, v) }
    fn hsa_signal_silent_store_relaxed(s: u64, v: i64) -> () = (); { store(s, v) }
    fn hsa_signal_silent_store_screlease(s: u64, v: i64) -> () = (); { store(s, v) }
    fn hsa_signal_exchange_relaxed(s: u64, v: i64) -> i64 = 0; { rmw(s, Rmw::Exchange, v) }
    fn hsa_signal_exchange_acquire(s: u64, v: i64) -> i64 = 0; { rmw(s, Rmw::Exchange, v) }
    fn hsa_signal_exchange_release(s: u64, v: i64) -> i64 = 0; { rmw(s, Rmw::Exchange, v) }
    fn hsa_signal_exchange_scacquire(s: u64, v: i64) -> i64 = 0; { rmw(s, Rmw::Exchange, v) }
    fn hsa_signal_exchange_screlease(s: u64, v: i64) -> i64 = 0; { rmw(s, Rmw::Exchange, v) }
    fn hsa_signal_exchange_acq_rel(s: u64, v: i64) -> i64 = 0; { rmw(s, Rmw::Exchange, v) }
    fn hsa_signal_exchange_scacq_screl(s: u64, v: i64) -> i64 = 0; { rmw(s, Rmw::Exchange, v) }
    fn hsa_signal_cas_relaxed(s: u64, e: i64, v: i64) -> i64 = 0; { cas(s, e, v) }
    fn hsa_signal_cas_acquire(s: u64, e: i64, v: i64) -> i64 = 0; { cas(s, e, v) }
    fn hsa_signal_cas_release(s: u64, e: i64, v: i64) -> i64 = 0; { cas(s, e, v) }
    fn hsa_signal_cas_scacquire(s: u64, e: i64, v: i64) -> i64 = 0; { cas(s, e, v) }
    fn hsa_signal_cas_screlease(s: u64, e: i64, v: i64) -> i64 = 0; { cas(s, e, v) }
    fn hsa_signal_cas_acq_rel(s: u64, e: i64, v: i64) -> i64 = 0; { cas(s, e, v) }
    fn hsa_signal_cas_scacq_screl(s: u64, e: i64, v: i64) -> i64 = 0; { cas(s, e, v) }
    fn hsa_signal_add_relaxed(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Add, v); }
    fn hsa_signal_add_acquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Add, v); }
    fn hsa_signal_add_release(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Add, v); }
    fn hsa_signal_add_scacquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Add, v); }
    fn hsa_signal_add_screlease(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Add, v); }
    fn hsa_signal_add_acq_rel(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Add, v); }
    fn hsa_signal_add_scacq_screl(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Add, v); }
    fn hsa_signal_subtract_relaxed(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Sub, v); }
    fn hsa_signal_subtract_acquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Sub, v); }
    fn hsa_signal_subtract_release(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Sub, v); }
    fn hsa_signal_subtract_scacquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Sub, v); }
    fn hsa_signal_subtract_screlease(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Sub, v); }
    fn hsa_signal_subtract_acq_rel(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Sub, v); }
    fn hsa_signal_subtract_scacq_screl(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Sub, v); }
    fn hsa_signal_and_relaxed(s: u64, v: i64) -> () = (); { rmw(s, Rmw::And, v); }
    fn hsa_signal_and_acquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::And, v); }
    fn hsa_signal_and_release(s: u64, v: i64) -> () = (); { rmw(s, Rmw::And, v); }
    fn hsa_signal_and_scacquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::And, v); }
    fn hsa_signal_and_screlease(s: u64, v: i64) -> () = (); { rmw(s, Rmw::And, v); }
    fn hsa_signal_and_acq_rel(s: u64, v: i64) -> () = (); { rmw(s, Rmw::And, v); }
    fn hsa_signal_and_scacq_screl(s: u64, v: i64) -> () = (); { rmw(s, Rmw::And, v); }
    fn hsa_signal_or_relaxed(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Or, v); }
    fn hsa_signal_or_acquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Or, v); }
    fn hsa_signal_or_release(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Or, v); }
    fn hsa_signal_or_scacquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Or, v); }
    fn hsa_signal_or_screlease(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Or, v); }
    fn hsa_signal_or_acq_rel(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Or, v); }
    fn hsa_signal_or_scacq_screl(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Or, v); }
    fn hsa_signal_xor_relaxed(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Xor, v); }
    fn hsa_signal_xor_acquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Xor, v); }
    fn hsa_signal_xor_release(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Xor, v); }
    fn hsa_signal_xor_scacquire(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Xor, v); }
    fn hsa_signal_xor_screlease(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Xor, v); }
    fn hsa_signal_xor_acq_rel(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Xor, v); }
    fn hsa_signal_xor_scacq_screl(s: u64, v: i64) -> () = (); { rmw(s, Rmw::Xor, v); }
    fn hsa_signal_wait_relaxed(s: u64, c: u32, v: i64, timeout: u64, _hint: u32) -> i64 = 0; { wait(s, c, v, timeout) }
    fn hsa_signal_wait_acquire(s: u64, c: u32, v: i64, timeout: u64, _hint: u32) -> i64 = 0; { wait(s, c, v, timeout) }
    fn hsa_signal_wait_scacquire(s: u64, c: u32, v: i64, timeout: u64, _hint: u32) -> i64 = 0; { wait(s, c, v, timeout) }
    fn hsa_amd_signal_wait_any(n: u32, signals: *mut u64, conds: *mut u32, values: *mut i64, timeout: u64, _hint: u32, value: *mut i64) -> u32 = u32::MAX; {
        let run = || -> Result<u32, Status> {
            let r = rt()?;
            let n = n as usize;
            // SAFETY: `signals`, `conds` and `values` point to `n` elements each that stay valid for the call, as the
            // API requires.
            let (s, c, v) = (unsafe { slice(signals, n) }?, unsafe { slice(conds, n) }?, unsafe { slice(values, n) }?);
            let (i, got) = signal::wait_any(&r, s, c, v, timeout)?;
            if !value.is_null() && i != u32::MAX {
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                unsafe { out(value, got) }?;
            }
            Ok(i)
        };
        run().unwrap_or(u32::MAX)
    }
    fn hsa_signal_group_create(n: u32, signals: *const u64, _nc: u32, _consumers: *const u64, group: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            // SAFETY: `signals` points to `n` elements that stay valid for the call, as the API requires.
            let s = unsafe { slice(signals, n as usize) }?;
            if s.is_empty() || s.iter().any(|&x| !r.signals.is_live(x)) {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let id = crate::runtime::GROUP_TAG + r.next_id();
            r.groups.lock().unwrap_or_else(|e| e.into_inner()).insert(id, s.to_vec());
            // SAFETY: `group` is null or points to storage for the result, as the API requires.
            unsafe { out(group, id) }
        })
    }
    fn hsa_signal_group_destroy(group: u64) -> Status = ffi::ERROR; {
        with(|r| r.groups.lock().unwrap_or_else(|e| e.into_inner()).remove(&group).map(drop).ok_or(ffi::ERROR_INVALID_SIGNAL_GROUP))
    }
    fn hsa_signal_group_wait_any_relaxed(group: u64, conds: *const u32, values: *const i64, _hint: u32, signal: *mut u64, value: *mut i64) -> Status = ffi::ERROR; {
        with(|r| group_wait(r, group, conds, values, signal, value))
    }
    fn hsa_signal_group_wait_any_scacquire(group: u64, conds: *const u32, values: *const i64, _hint: u32, signal: *mut u64, value: *mut i64) -> Status = ffi::ERROR; {
        with(|r| group_wait(r, group, conds, values, signal, value))
    }
    fn hsa_amd_signal_async_handler(s: u64, cond: u32, value: i64, handler: Option<extern "C" fn(i64, *mut c_void) -> bool>, arg: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let handler = handler.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            if cond > ffi::CONDITION_GTE {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            if !r.signals.is_live(s) {
                return Err(ffi::ERROR_INVALID_SIGNAL);
            }
            signal::add_async_handler(signal::AsyncHandler { signal: s, condition: cond, value, handler, arg: arg as usize });
            Ok(())
        })
    }
    fn hsa_amd_signal_value_pointer(s: u64, ptr: *mut *mut i64) -> Status = ffi::ERROR; {
        // SAFETY: `ptr` is null or points to storage for the result, as the API requires.
        with(|r| unsafe { out(ptr, signal::value(r, s)?.as_ptr()) })
    }
    fn hsa_amd_async_function(callback: Option<extern "C" fn(*mut c_void)>, arg: *mut c_void) -> Status = ffi::ERROR; {
        with(|_| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let arg = arg as usize;
            std::thread::Builder::new().name("wavejit-async".into()).spawn(move || cb(arg as *mut c_void)).map(drop).map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)
        })
    }
}

fn load(s: u64) -> i64 {
    rt().ok()
        .and_then(|r| signal::value(&r, s).ok().map(|v| v.load(Ordering::Acquire)))
        .unwrap_or(0)
}
fn store(s: u64, v: i64) {
    if let Ok(r) = rt() {
        let _ = signal::store(&r, s, v);
    }
}
fn rmw(s: u64, op: Rmw, v: i64) -> i64 {
    rt().ok().and_then(|r| signal::rmw(&r, s, op, v).ok()).unwrap_or(0)
}
fn cas(s: u64, e: i64, v: i64) -> i64 {
    rt().ok().and_then(|r| signal::cas(&r, s, e, v).ok()).unwrap_or(0)
}
fn wait(s: u64, c: u32, v: i64, timeout: u64) -> i64 {
    rt().ok()
        .and_then(|r| signal::wait(&r, s, c, v, timeout).ok())
        .unwrap_or(0)
}

/// `hsa_signal_group_wait_any_*`: waits (with no timeout) until a member's condition holds; hands back that
/// signal and its value.
fn group_wait(
    r: &Runtime,
    group: u64,
    conds: *const u32,
    values: *const i64,
    signal_out: *mut u64,
    value: *mut i64,
) -> Result<(), Status> {
    let signals = r
        .groups
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&group)
        .cloned()
        .ok_or(ffi::ERROR_INVALID_SIGNAL_GROUP)?;
    let n = signals.len();
    // SAFETY: `conds` and `values` point to `n` elements each that stay valid for the call, as the API requires.
    let (i, v) = signal::wait_any(
        r,
        &signals,
        unsafe { slice(conds, n) }?,
        unsafe { slice(values, n) }?,
        u64::MAX,
    )?;
    // SAFETY: `signal_out` is null or points to storage for the result, as the API requires.
    unsafe { out(signal_out, signals[i as usize]) }?;
    // SAFETY: `value` is null or points to storage for the result, as the API requires.
    unsafe { out(value, v) }
}
