//! The exported `hsa_*` functions (all 224 of ROCm 5.2's runtime, each with symbol version `ROCR_1`), one file
//! per area of the API. Every body runs behind `catch_unwind`: a bug here returns an error status instead of
//! unwinding into C.
//!
//! This file holds what every area uses: the `export!` and `unsupported!` macros, which bind each function to
//! `ROCR_1` with `.symver` (the version node itself comes from `rocr.map`, see build.rs), and the helpers for the
//! C side of a call: running with the runtime, writing results through the caller's pointers, checking pointers
//! and slices, calling iteration callbacks.
//!
//! The areas:
//! - `system.rs`: init and shutdown, status strings, system attributes, extensions and their function tables,
//!   system events;
//! - `agent.rs`: agents, their caches, ISAs and wavefronts, and the regions and memory pools each agent lists;
//! - `memory.rs`: region and pool attributes, allocation, copies and fills, registering and locking host memory,
//!   pointer information, coherency, deallocation callbacks;
//! - `signal.rs`: signals, signal groups, asynchronous handlers and functions;
//! - `queue.rs`: AQL and soft queues, their indices, CU masks and priority;
//! - `ipc.rs`: IPC handles of memory and signals;
//! - `profiling.rs`: profiling switches and the timestamps of dispatches and copies;
//! - `executable.rs`: code object readers, executables and their symbols, the AMD loader extension;
//! - `code_object.rs`: the pre-1.1 `hsa_code_object_*` API, and the HSAIL finalizer (not provided);
//! - `image.rs`: the images extension (images and samplers) and its AMD additions;
//! - `interop.rs`: interop buffers;
//! - `svm.rs`: shared virtual memory attributes, prefetch and migration.

use std::sync::Arc;

use crate::ffi::{self, Status};
use crate::info::put;
use crate::runtime::{rt, Runtime};

/// Exports C functions with version `ROCR_1`; `= FAIL` is what a panic returns. Under `wavejit profile` each
/// call is recorded (`crate::profile`).
macro_rules! export {
    ($(fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty = $fail:expr; $body:block)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name($($a: $t),*) -> $r {
            let start = gpu::profile::api_begin();
            let r = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || -> $r { $body })) {
                Ok(v) => v,
                Err(_) => {
                    eprintln!(concat!("wavejit: internal error in ", stringify!($name), " (reported as an error status)"));
                    $fail
                }
            };
            gpu::profile::api_end(|| stringify!($name), start);
            r
        }
        std::arch::global_asm!(concat!(".symver ", stringify!($name), ",", stringify!($name), "@@ROCR_1"));
    )*};
}

/// Exports functions this runtime does not provide: each says so once on stderr and returns `status`.
macro_rules! unsupported {
    ($status:expr, $why:literal: $($name:ident),* $(,)?) => {$(
        #[no_mangle]
        pub extern "C" fn $name() -> Status {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| eprintln!(concat!("wavejit: ", stringify!($name), " is not supported: ", $why)));
            $status
        }
        std::arch::global_asm!(concat!(".symver ", stringify!($name), ",", stringify!($name), "@@ROCR_1"));
    )*};
}

mod agent;
mod code_object;
mod executable;
mod image;
mod interop;
mod ipc;
mod memory;
mod profiling;
mod queue;
mod signal;
mod svm;
mod system;

/// SUCCESS, or the error.
fn status(r: Result<(), Status>) -> Status {
    match r {
        Ok(()) => ffi::SUCCESS,
        Err(s) => s,
    }
}

/// Runs `f` with the runtime; NOT_INITIALIZED when there is none.
fn with(f: impl FnOnce(&Arc<Runtime>) -> Result<(), Status>) -> Status {
    status(rt().and_then(|r| f(&r)))
}

/// Writes `v` to the caller's `p`; INVALID_ARGUMENT when it is null.
///
/// # Safety
///
/// `p` is null or valid for writing a `T` (at any alignment).
unsafe fn out<T>(p: *mut T, v: T) -> Result<(), Status> {
    // SAFETY: as the caller guarantees; the storage is a `T`.
    unsafe { put(p.cast(), v) }
}

/// INVALID_ARGUMENT when `p` is null.
fn nonnull<T>(p: *const T) -> Result<(), Status> {
    if p.is_null() {
        Err(ffi::ERROR_INVALID_ARGUMENT)
    } else {
        Ok(())
    }
}

/// Calls an iteration callback over `items`; stops at the first status other than SUCCESS and returns it.
fn iterate(items: impl IntoIterator<Item = u64>, mut f: impl FnMut(u64) -> Status) -> Result<(), Status> {
    for i in items {
        match f(i) {
            ffi::SUCCESS => {}
            s => return Err(s),
        }
    }
    Ok(())
}

/// The caller's `n` elements at `p` (`p` may be null when `n` is 0); INVALID_ARGUMENT when `p` is null.
///
/// # Safety
///
/// A non-null `p` points to `n` initialized elements, which nothing writes for as long as the returned
/// slice (of a lifetime the caller picks) is used.
unsafe fn slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T], Status> {
    if n == 0 {
        return Ok(&[]);
    }
    nonnull(p)?;
    // SAFETY: as the caller guarantees.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}
