//! The exported `hsa_*` functions (all 224 of ROCm 5.2's runtime, each with symbol version `ROCR_1`). Every
//! body runs behind `catch_unwind`: a bug here returns an error status instead of unwinding into C.

#![allow(clippy::missing_safety_doc, clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::ffi::{self, Status};
use crate::image;
use crate::info::{self, put};
use crate::loader;
use crate::memory::{self, CopyJob};
use crate::queue;
use crate::runtime::{self, rt, Runtime, AGENT_TAG, CACHE_TAG, ISA_TAG, POOL_TAG, REGION_TAG};
use crate::signal::{self, Rmw};
use crate::svm;

/// Exports C functions with version `ROCR_1`; `= FAIL` is what a panic returns.
macro_rules! export {
    ($(fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty = $fail:expr; $body:block)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name($($a: $t),*) -> $r {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || -> $r { $body })) {
                Ok(v) => v,
                Err(_) => {
                    eprintln!(concat!("wavejit: internal error in ", stringify!($name), " (reported as an error status)"));
                    $fail
                }
            }
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

fn out<T>(p: *mut T, v: T) -> Result<(), Status> {
    put(p.cast(), v)
}

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

fn slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T], Status> {
    if n == 0 {
        return Ok(&[]);
    }
    nonnull(p)?;
    // SAFETY: the API requires `p` to point to `n` elements that stay valid for the call.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

fn queue_of(q: *const ffi::HsaQueue) -> Result<Arc<queue::Queue>, Status> {
    let r = rt()?;
    let q = r.queues.lock().unwrap_or_else(|e| e.into_inner()).get(&(q as u64)).cloned();
    q.ok_or(ffi::ERROR_INVALID_QUEUE)
}

/// A queue's dispatch-index field (for soft queues too: both are laid out as `amd_queue_t`).
fn index_field<'a>(q: *const ffi::HsaQueue, offset: usize) -> Option<&'a std::sync::atomic::AtomicU64> {
    if queue_of(q).is_err() {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| eprintln!("wavejit: a queue index function was given {q:p}, which is not a queue of this runtime (0 returned)"));
        return None;
    }
    // SAFETY: `q` is a live queue of this runtime (checked above): a 256-byte amd_queue_t record; the index is an
    // aligned u64.
    Some(unsafe { std::sync::atomic::AtomicU64::from_ptr((q as usize + offset) as *mut u64) })
}

type AgentCallback = extern "C" fn(u64, *mut c_void) -> Status;

export! {
    fn hsa_init() -> Status = ffi::ERROR; { status(runtime::init()) }
    fn hsa_shut_down() -> Status = ffi::ERROR; { status(runtime::shut_down()) }

    fn hsa_status_string(s: Status, text: *mut *const c_char) -> Status = ffi::ERROR; {
        match ffi::status_text(s) {
            Some(t) => status(out(text, t.as_ptr())),
            None => ffi::ERROR_INVALID_ARGUMENT,
        }
    }

    fn hsa_system_get_info(attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| info::system(r, attribute, value))
    }
    fn hsa_system_extension_supported(ext: u16, major: u16, minor: u16, result: *mut bool) -> Status = ffi::ERROR; {
        with(|_| out(result, extension(ext, major) && minor == 0))
    }
    fn hsa_system_major_extension_supported(ext: u16, major: u16, minor: *mut u16, result: *mut bool) -> Status = ffi::ERROR; {
        with(|_| major_extension(ext, major, minor, result))
    }
    fn hsa_system_get_extension_table(ext: u16, major: u16, minor: u16, table: *mut c_void) -> Status = ffi::ERROR; {
        // version 1.00 of a table: the loader's three functions, the images' ten
        let length = if ext == ffi::EXTENSION_IMAGES { 80 } else { 24 };
        with(|_| if minor == 0 { extension_table(ext, major, length, table) } else { Err(ffi::ERROR_INVALID_ARGUMENT) })
    }
    fn hsa_system_get_major_extension_table(ext: u16, major: u16, length: usize, table: *mut c_void) -> Status = ffi::ERROR; {
        with(|_| extension_table(ext, major, length, table))
    }
    fn hsa_extension_get_name(ext: u16, name: *mut *const c_char) -> Status = ffi::ERROR; {
        let n: &'static CStr = match ext {
            0 => c"HSA_EXTENSION_FINALIZER",
            1 => c"HSA_EXTENSION_IMAGES",
            2 => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
            3 => c"HSA_EXTENSION_PROFILING_EVENTS",
            0x200 => c"HSA_EXTENSION_AMD_PROFILER",
            0x201 => c"HSA_EXTENSION_AMD_LOADER",
            0x202 => c"HSA_EXTENSION_AMD_AQLPROFILE",
            _ => return ffi::ERROR_INVALID_ARGUMENT,
        };
        with(|_| out(name, n.as_ptr()))
    }

    fn hsa_iterate_agents(callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            iterate((0..r.agents.len() as u64).map(|i| AGENT_TAG + i), |a| cb(a, data))
        })
    }
    fn hsa_agent_get_info(agent: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.agent(agent)?;
            info::agent(r, i, attribute, value)
        })
    }
    fn hsa_agent_extension_supported(ext: u16, agent: u64, major: u16, minor: u16, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            out(result, extension(ext, major) && minor == 0)
        })
    }
    fn hsa_agent_major_extension_supported(ext: u16, agent: u64, major: u16, minor: *mut u16, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            major_extension(ext, major, minor, result)
        })
    }
    fn hsa_agent_get_exception_policies(agent: u64, _profile: u32, mask: *mut u16) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            out(mask, 0)
        })
    }
    fn hsa_agent_iterate_isas(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let isa = r.agents[i].gpu.and_then(|g| r.isas.iter().position(|(d, _)| d.target == g.target));
            iterate(isa.map(|x| ISA_TAG + x as u64), |h| cb(h, data))
        })
    }
    fn hsa_agent_iterate_caches(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let n = info::caches(r, i).len() as u64;
            iterate((0..n).map(|c| CACHE_TAG + ((i as u64) << 4) + c), |h| cb(h, data))
        })
    }
    fn hsa_agent_iterate_regions(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let mine: Vec<u64> = r.pools.iter().enumerate().filter(|(_, p)| p.agent == i).map(|(k, _)| REGION_TAG + k as u64).collect();
            iterate(mine, |h| cb(h, data))
        })
    }
    fn hsa_cache_get_info(cache: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| info::cache(r, cache, attribute, value))
    }

    fn hsa_isa_from_name(name: *const c_char, isa: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(name)?;
            // SAFETY: a NUL-terminated string, as the API requires.
            let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            let found = r.isas.iter().position(|(d, full)| *full == n || n == format!("amdgcn-amd-amdhsa--{}", d.gfx) || n.starts_with(&format!("amdgcn-amd-amdhsa--{}:", d.gfx)));
            match found {
                Some(i) => out(isa, ISA_TAG + i as u64),
                None => Err(ffi::ERROR_INVALID_ISA_NAME),
            }
        })
    }
    fn hsa_isa_get_info(isa: u64, attribute: u32, _index: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| info::isa(r, isa, attribute, value))
    }
    fn hsa_isa_get_info_alt(isa: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        hsa_isa_get_info(isa, attribute, 0, value)
    }
    fn hsa_isa_compatible(code: u64, agent_isa: u64, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            let n = r.isas.len() as u64;
            if code.wrapping_sub(ISA_TAG) >= n || agent_isa.wrapping_sub(ISA_TAG) >= n {
                return Err(ffi::ERROR_INVALID_ISA);
            }
            out(result, code == agent_isa)
        })
    }
    fn hsa_isa_get_exception_policies(isa: u64, _profile: u32, mask: *mut u16) -> Status = ffi::ERROR; {
        with(|r| {
            if isa.wrapping_sub(ISA_TAG) >= r.isas.len() as u64 {
                return Err(ffi::ERROR_INVALID_ISA);
            }
            out(mask, 0)
        })
    }
    fn hsa_isa_get_round_method(isa: u64, _fp: u32, _flush: u32, method: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            if isa.wrapping_sub(ISA_TAG) >= r.isas.len() as u64 {
                return Err(ffi::ERROR_INVALID_ISA);
            }
            out(method, 1)
        })
    }
    fn hsa_isa_iterate_wavefronts(isa: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let (d, _) = r.isas.get(isa.wrapping_sub(ISA_TAG) as usize).ok_or(ffi::ERROR_INVALID_ISA)?;
            iterate([d.wave_size as u64], |w| cb(w, data))
        })
    }
    fn hsa_wavefront_get_info(wavefront: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|_| match (wavefront, attribute) {
            (32 | 64, 0) => out(value.cast::<u32>(), wavefront as u32),
            (32 | 64, _) => Err(ffi::ERROR_INVALID_ARGUMENT),
            _ => Err(ffi::ERROR_INVALID_WAVEFRONT),
        })
    }

    fn hsa_region_get_info(region: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.pool(region, REGION_TAG)?;
            info::region(r, i, attribute, value)
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

    // ---- signals
    fn hsa_signal_create(initial: i64, _n: u32, _consumers: *const u64, signal: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(signal)?;
            out(signal, r.signals.create(r, initial, false)?)
        })
    }
    fn hsa_amd_signal_create(initial: i64, _n: u32, _consumers: *const u64, attributes: u64, signal: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(signal)?;
            out(signal, r.signals.create(r, initial, attributes & ffi::AMD_SIGNAL_IPC != 0)?)
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
            let (s, c, v) = (slice(signals, n)?, slice(conds, n)?, slice(values, n)?);
            let (i, got) = signal::wait_any(&r, s, c, v, timeout)?;
            if !value.is_null() && i != u32::MAX {
                out(value, got)?;
            }
            Ok(i)
        };
        run().unwrap_or(u32::MAX)
    }
    fn hsa_signal_group_create(n: u32, signals: *const u64, _nc: u32, _consumers: *const u64, group: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            let s = slice(signals, n as usize)?;
            if s.is_empty() || s.iter().any(|&x| !r.signals.is_live(x)) {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let id = crate::runtime::GROUP_TAG + r.next_id();
            r.groups.lock().unwrap_or_else(|e| e.into_inner()).insert(id, s.to_vec());
            out(group, id)
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
        with(|r| out(ptr, signal::value(r, s)?.as_ptr()))
    }
    fn hsa_amd_async_function(callback: Option<extern "C" fn(*mut c_void)>, arg: *mut c_void) -> Status = ffi::ERROR; {
        with(|_| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let arg = arg as usize;
            std::thread::Builder::new().name("wavejit-async".into()).spawn(move || cb(arg as *mut c_void)).map(drop).map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)
        })
    }

    // ---- queues
    fn hsa_queue_create(agent: u64, size: u32, kind: u32, callback: Option<queue::ErrorCallback>, data: *mut c_void, _private: u32, _group: u32, q: *mut *mut ffi::HsaQueue) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(q)?;
            let (i, dev) = r.gpu(agent)?;
            let created = queue::create(r, i, dev, size, kind, callback, data)?;
            out(q, created.address as *mut ffi::HsaQueue)
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
        with(|_| queue_of(q).map(drop))
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
        with(|_| {
            queue_of(q)?;
            slice(mask, count.div_ceil(32) as usize).map(drop)
        })
    }
    fn hsa_amd_queue_cu_get_mask(q: *const ffi::HsaQueue, count: u32, mask: *mut u32) -> Status = ffi::ERROR; {
        with(|_| {
            let qq = queue_of(q)?;
            nonnull(mask)?;
            for w in 0..count.div_ceil(32) {
                let bits = qq.device.compute_units.saturating_sub(w * 32).min(32);
                out(mask.wrapping_add(w as usize), if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 })?;
            }
            Ok(())
        })
    }
    fn hsa_amd_queue_set_priority(q: *mut ffi::HsaQueue, priority: u32) -> Status = ffi::ERROR; {
        with(|_| {
            queue_of(q)?;
            if priority > 2 { Err(ffi::ERROR_INVALID_ARGUMENT) } else { Ok(()) }
        })
    }

    // ---- AMD memory pools
    fn hsa_amd_agent_iterate_memory_pools(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let mine: Vec<u64> = r.pools.iter().enumerate().filter(|(_, p)| p.agent == i).map(|(k, _)| POOL_TAG + k as u64).collect();
            iterate(mine, |h| cb(h, data))
        })
    }
    fn hsa_amd_memory_pool_get_info(pool: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.pool(pool, POOL_TAG)?;
            info::pool(r, i, attribute, value)
        })
    }
    fn hsa_amd_agent_memory_pool_get_info(agent: u64, pool: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let a = r.agent(agent)?;
            let p = r.pool(pool, POOL_TAG)?;
            info::agent_pool(r, a, p, attribute, value)
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
            for &a in slice(agents, n as usize)? {
                r.agent(a)?;
            }
            nonnull(ptr)
        })
    }
    fn hsa_amd_memory_pool_can_migrate(src: u64, dst: u64, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            r.pool(src, POOL_TAG)?;
            r.pool(dst, POOL_TAG)?;
            out(result, false)
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
        with(|r| {
            let removed = r.locked.lock().unwrap_or_else(|e| e.into_inner()).remove(&(host as u64));
            let (_, agent) = removed.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            // nothing to undo for memory that was already device memory
            if agent != host as u64 {
                let _ = r.mem.free(agent);
            }
            Ok(())
        })
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
            let deps = slice(deps, n as usize)?.to_vec();
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
                deps: slice(deps, n as usize)?.to_vec(),
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
            out(kind, 0)
        })
    }
    fn hsa_amd_coherency_set_type(agent: u64, kind: u32) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            if kind > 1 { Err(ffi::ERROR_INVALID_ARGUMENT) } else { Ok(()) }
        })
    }
    fn hsa_amd_register_system_event_handler(_callback: *const c_void, _data: *mut c_void) -> Status = ffi::ERROR; {
        // kernel faults reach the faulting queue's error callback; no other system events are raised
        with(|_| Ok(()))
    }

    fn hsa_soft_queue_create(region: u64, size: u32, _kind: u32, features: u32, doorbell: u64, q: *mut *mut ffi::HsaQueue) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(q)?;
            r.pool(region, REGION_TAG)?;
            let created = queue::create_soft(r, size, features, doorbell)?;
            out(q, created.address as *mut ffi::HsaQueue)
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

    // ---- IPC handles. Memory: the allocation's pages move onto a memfd that another process maps (through
    // /proc/PID/fd) into an allocation of its own; within the process a handle opens the allocation itself.
    // Signals travel the same way, with the slab that holds them.
    fn hsa_amd_ipc_memory_create(ptr: *mut c_void, len: usize, handle: *mut [u32; 8]) -> Status = ffi::ERROR; {
        with(|r| {
            let (start, a) = r.allocation_of(ptr as u64).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            if start != ptr as u64 || len == 0 || len as u64 > a.size.next_multiple_of(4096) {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            nonnull(handle)?;
            if len as u64 >= 1 << 48 {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let (fd, ino, _) = ipc_share(r, start)?;
            let mut h = ipc_handle(IPC_MEMORY, start, len as u64);
            h[6] |= fd << 16;
            h[7] = ino;
            out(handle, h)
        })
    }
    fn hsa_amd_ipc_memory_attach(handle: *const [u32; 8], len: usize, n: u32, agents: *const u64, mapped: *mut *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            for &a in slice(agents, n as usize)? {
                r.agent(a)?;
            }
            nonnull(mapped)?;
            let (h, address, shared) = ipc_open(handle, IPC_MEMORY)?;
            if len == 0 || len as u64 > shared {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            if h[1] != std::process::id() {
                return out(mapped, memory::ipc_attach(r, h[1], (h[6] >> 16) as i32, h[7], len as u64)? as *mut c_void);
            }
            let (start, a) = r.allocation_of(address).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            if start != address || len as u64 > a.size.next_multiple_of(4096) {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            out(mapped, address as *mut c_void)
        })
    }
    fn hsa_amd_ipc_memory_detach(mapped: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            if memory::unmap_foreign(r, mapped as u64) {
                return Ok(());
            }
            r.allocation_of(mapped as u64).filter(|(s, _)| *s == mapped as u64).map(drop).ok_or(ffi::ERROR_INVALID_ARGUMENT)
        })
    }
    // a signal made for IPC has a page of its own: the handle names its memfd and the signal's offset in it
    fn hsa_amd_ipc_signal_create(s: u64, handle: *mut [u32; 8]) -> Status = ffi::ERROR; {
        with(|r| {
            signal::value(r, s)?;
            nonnull(handle)?;
            if !r.signals.is_ipc(s) {
                eprintln!("wavejit: hsa_amd_ipc_signal_create: the signal was not created with HSA_AMD_SIGNAL_IPC");
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let (slab, ..) = r.mem.readable_at(s).ok_or(ffi::ERROR_INVALID_SIGNAL)?;
            let (fd, ino, span) = ipc_share(r, slab)?;
            let pages = span / 4096;
            if pages >= 1 << 16 {
                return Err(ffi::ERROR_OUT_OF_RESOURCES);
            }
            let mut h = ipc_handle(IPC_SIGNAL, s, 0);
            h[5] = (s - slab) as u32;
            h[6] = pages as u32 | fd << 16;
            h[7] = ino;
            out(handle, h)
        })
    }
    fn hsa_amd_ipc_signal_attach(handle: *const [u32; 8], s: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            let (h, address, _) = ipc_open(handle, IPC_SIGNAL)?;
            nonnull(s)?;
            if h[1] == std::process::id() {
                signal::value(r, address)?;
                return out(s, address);
            }
            let (offset, span) = (h[5] as u64, (h[6] & 0xffff) as u64 * 4096);
            if offset + ffi::AMD_SIGNAL_SIZE as u64 > span {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            // the mapping belongs to the signal (freed when it is destroyed)
            let mapping = memory::map_shared(r, h[1], (h[6] >> 16) as i32, h[7], span)?;
            r.signals.adopt(mapping + offset, mapping);
            out(s, mapping + offset)
        })
    }

    // ---- profiling
    // every dispatch, barrier and copy is timestamped (it costs two clock reads), so enabling is only checked
    fn hsa_amd_profiling_set_profiler_enabled(q: *mut ffi::HsaQueue, _enable: i32) -> Status = ffi::ERROR; {
        with(|_| queue_of(q).map(drop))
    }
    fn hsa_amd_profiling_async_copy_enable(_enable: bool) -> Status = ffi::ERROR; { with(|_| Ok(())) }
    fn hsa_amd_profiling_get_dispatch_time(agent: u64, s: u64, time: *mut ffi::ProfilingTime) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            times(r, s, time)
        })
    }
    fn hsa_amd_profiling_get_async_copy_time(s: u64, time: *mut ffi::ProfilingTime) -> Status = ffi::ERROR; {
        with(|r| times(r, s, time))
    }
    fn hsa_amd_profiling_convert_tick_to_system_domain(agent: u64, tick: u64, system: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            out(system, tick)
        })
    }

    // ---- code objects and executables
    fn hsa_code_object_reader_create_from_memory(data: *const c_void, size: usize, reader: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(reader)?;
            let bytes = slice(data.cast::<u8>(), size)?;
            if bytes.is_empty() {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let id = crate::runtime::READER_TAG + r.next_id();
            r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Arc::new(bytes.to_vec()));
            out(reader, id)
        })
    }
    fn hsa_code_object_reader_create_from_file(fd: i32, reader: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(reader)?;
            let bytes = read_fd(fd).ok_or(ffi::ERROR_INVALID_FILE)?;
            let id = crate::runtime::READER_TAG + r.next_id();
            r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Arc::new(bytes));
            out(reader, id)
        })
    }
    fn hsa_code_object_reader_destroy(reader: u64) -> Status = ffi::ERROR; {
        with(|r| {
            let removed = r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).remove(&reader);
            removed.map(drop).ok_or(ffi::ERROR_INVALID_CODE_OBJECT_READER)
        })
    }
    fn hsa_executable_create(_profile: u32, _state: u32, _options: *const c_char, exe: *mut u64) -> Status = ffi::ERROR; {
        with(|r| new_executable(r, exe))
    }
    fn hsa_executable_create_alt(_profile: u32, _rounding: u32, _options: *const c_char, exe: *mut u64) -> Status = ffi::ERROR; {
        with(|r| new_executable(r, exe))
    }
    fn hsa_executable_destroy(exe: u64) -> Status = ffi::ERROR; { with(|r| r.loader.destroy(r, exe)) }
    fn hsa_executable_load_agent_code_object(exe: u64, agent: u64, reader: u64, _options: *const c_char, loaded: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, dev) = r.gpu(agent)?;
            let id = r.loader.load(r, exe, agent, dev, reader)?;
            if !loaded.is_null() {
                out(loaded, id)?;
            }
            Ok(())
        })
    }
    fn hsa_executable_load_program_code_object(exe: u64, reader: u64, _options: *const c_char, loaded: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            // a program code object serves every agent: load it for the first GPU whose target it names
            let bytes = r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).get(&reader).cloned().ok_or(ffi::ERROR_INVALID_CODE_OBJECT_READER)?;
            let co = isa_amdgpu::codeobj::CodeObject::parse(&bytes, "code object").map_err(|_| ffi::ERROR_INVALID_CODE_OBJECT)?;
            let (i, dev) = r.agents.iter().enumerate().find_map(|(i, a)| a.gpu.filter(|g| g.gfx == co.target.processor).map(|g| (i, g))).ok_or(ffi::ERROR_INVALID_ISA)?;
            let id = r.loader.load(r, exe, AGENT_TAG + i as u64, dev, reader)?;
            if !loaded.is_null() {
                out(loaded, id)?;
            }
            Ok(())
        })
    }
    fn hsa_executable_freeze(exe: u64, _options: *const c_char) -> Status = ffi::ERROR; {
        with(|r| {
            let mut exes = r.loader.executables.lock().unwrap_or_else(|e| e.into_inner());
            let e = exes.get_mut(&exe).ok_or(ffi::ERROR_INVALID_EXECUTABLE)?;
            if e.frozen {
                return Err(ffi::ERROR_FROZEN_EXECUTABLE);
            }
            e.frozen = true;
            Ok(())
        })
    }
    fn hsa_executable_get_info(exe: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let frozen = r.loader.executables.lock().unwrap_or_else(|e| e.into_inner()).get(&exe).map(|e| e.frozen).ok_or(ffi::ERROR_INVALID_EXECUTABLE)?;
            match attribute {
                ffi::EXECUTABLE_INFO_PROFILE => out(value.cast::<u32>(), ffi::PROFILE_BASE),
                ffi::EXECUTABLE_INFO_STATE => out(value.cast::<u32>(), if frozen { ffi::EXECUTABLE_STATE_FROZEN } else { ffi::EXECUTABLE_STATE_UNFROZEN }),
                ffi::EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE => out(value.cast::<u32>(), ffi::ROUNDING_MODE_NEAR),
                _ => Err(ffi::ERROR_INVALID_ARGUMENT),
            }
        })
    }
    fn hsa_executable_validate(exe: u64, result: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            symbols_of(r, exe)?;
            out(result, 0)
        })
    }
    fn hsa_executable_validate_alt(exe: u64, _options: *const c_char, result: *mut u32) -> Status = ffi::ERROR; {
        hsa_executable_validate(exe, result)
    }
    fn hsa_executable_get_symbol_by_name(exe: u64, name: *const c_char, agent: *const u64, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(name)?;
            // SAFETY: a NUL-terminated name, as the API requires.
            let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            // SAFETY: a non-null agent pointer points to a handle.
            let a = if agent.is_null() { None } else { Some(unsafe { *agent }) };
            match r.loader.find(exe, &n, a) {
                Some(s) => out(symbol, s),
                // a known executable without the symbol, or no such executable
                None => symbols_of(r, exe).and(Err(ffi::ERROR_INVALID_SYMBOL_NAME)),
            }
        })
    }
    fn hsa_executable_get_symbol(exe: u64, _module: *const c_char, name: *const c_char, agent: u64, _cc: i32, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(name)?;
            // SAFETY: a NUL-terminated name, as the API requires.
            let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            r.loader.find(exe, &n, Some(agent)).map_or(Err(ffi::ERROR_INVALID_SYMBOL_NAME), |s| out(symbol, s))
        })
    }
    fn hsa_executable_symbol_get_info(symbol: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| symbol_info(r, symbol, attribute, value))
    }
    fn hsa_executable_iterate_symbols(exe: u64, callback: Option<extern "C" fn(u64, u64, *mut c_void) -> Status>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            iterate(symbols_of(r, exe)?, |s| cb(exe, s, data))
        })
    }
    fn hsa_executable_iterate_program_symbols(exe: u64, callback: Option<extern "C" fn(u64, u64, *mut c_void) -> Status>, _data: *mut c_void) -> Status = ffi::ERROR; {
        // program-allocated variables are not made by this loader: there are none to visit
        with(|r| {
            callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            symbols_of(r, exe).map(drop)
        })
    }
    fn hsa_executable_iterate_agent_symbols(exe: u64, agent: u64, callback: Option<extern "C" fn(u64, u64, u64, *mut c_void) -> Status>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.agent(agent)?;
            let syms = symbols_of(r, exe)?;
            let mine: Vec<u64> = {
                let table = r.loader.symbols.read().unwrap_or_else(|e| e.into_inner());
                syms.into_iter().filter(|s| table.get(s).is_some_and(|x| x.agent == agent)).collect()
            };
            iterate(mine, |s| cb(exe, agent, s, data))
        })
    }
    fn hsa_executable_global_variable_define(exe: u64, name: *const c_char, address: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| define_variable(r, exe, name, address))
    }
    fn hsa_executable_agent_global_variable_define(exe: u64, agent: u64, name: *const c_char, address: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            define_variable(r, exe, name, address)
        })
    }
    fn hsa_executable_readonly_variable_define(exe: u64, agent: u64, name: *const c_char, address: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            define_variable(r, exe, name, address)
        })
    }
}

type AllocCallback = extern "C" fn(usize, u64, *mut *mut c_void) -> Status;
type CodeSymbolCallback = extern "C" fn(u64, u64, *mut c_void) -> Status;

export! {
    // ---- the pre-1.1 code object API: a code object is its bytes (an AMDGPU ELF), its symbols named as its
    // executable symbols are; loading one is loading those bytes
    fn hsa_code_object_deserialize(data: *mut c_void, size: usize, _options: *const c_char, handle: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(handle)?;
            let bytes = slice(data.cast::<u8>(), size)?;
            let co = isa_amdgpu::codeobj::CodeObject::parse(bytes, "code object").map_err(|e| {
                eprintln!("wavejit: hsa_code_object_deserialize: {e}");
                ffi::ERROR_INVALID_CODE_OBJECT
            })?;
            let id = crate::runtime::CODE_OBJECT_TAG + r.next_id();
            let symbols: Vec<(u64, loader::CodeSymbol)> = loader::code_symbols(&co).into_iter().map(|s| (crate::runtime::CODE_SYMBOL_TAG + r.next_id(), s)).collect();
            {
                let mut map = r.loader.code_symbols.lock().unwrap_or_else(|e| e.into_inner());
                for (i, (h, _)) in symbols.iter().enumerate() {
                    map.insert(*h, (id, i));
                }
            }
            let old = loader::OldCodeObject { bytes: Arc::new(bytes.to_vec()), processor: co.target.processor.clone(), symbols };
            r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner()).insert(id, old);
            out(handle, id)
        })
    }
    fn hsa_code_object_serialize(handle: u64, alloc: Option<AllocCallback>, data: u64, _options: *const c_char, serialized: *mut *mut c_void, size: *mut usize) -> Status = ffi::ERROR; {
        with(|r| {
            let alloc = alloc.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            nonnull(serialized)?;
            nonnull(size)?;
            let bytes = code_object(r, handle)?.0;
            let mut at: *mut c_void = std::ptr::null_mut();
            match alloc(bytes.len(), data, &mut at) {
                ffi::SUCCESS if !at.is_null() => {}
                ffi::SUCCESS => return Err(ffi::ERROR_OUT_OF_RESOURCES),
                s => return Err(s),
            }
            // SAFETY: the application's callback gave `at` room for `bytes.len()` bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.cast::<u8>(), bytes.len()) };
            out(size, bytes.len())?;
            out(serialized, at)
        })
    }
    fn hsa_code_object_destroy(handle: u64) -> Status = ffi::ERROR; {
        with(|r| {
            let gone = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner()).remove(&handle).ok_or(ffi::ERROR_INVALID_CODE_OBJECT)?;
            let mut map = r.loader.code_symbols.lock().unwrap_or_else(|e| e.into_inner());
            for (h, _) in gone.symbols {
                map.remove(&h);
            }
            Ok(())
        })
    }
    fn hsa_code_object_get_info(handle: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, processor) = code_object(r, handle)?;
            match attribute {
                // version, type (program), ISA, machine model (large), profile (base), rounding mode (near)
                0 => info::put_str::<64>(value, "2.1"),
                1 => put(value, 0u32),
                2 => {
                    let isa = r.isas.iter().position(|(d, _)| d.gfx == processor).ok_or_else(|| {
                        eprintln!("wavejit: the code object is for {processor}, which no emulated agent runs");
                        ffi::ERROR_INVALID_ISA
                    })?;
                    put(value, ISA_TAG + isa as u64)
                }
                3 => put(value, ffi::MACHINE_MODEL_LARGE),
                4 => put(value, ffi::PROFILE_BASE),
                5 => put(value, ffi::ROUNDING_MODE_NEAR),
                _ => Err(ffi::ERROR_INVALID_ARGUMENT),
            }
        })
    }
    fn hsa_code_object_get_symbol(handle: u64, name: *const c_char, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| code_symbol_named(r, handle, name, symbol))
    }
    fn hsa_code_object_get_symbol_from_name(handle: u64, _module: *const c_char, name: *const c_char, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| code_symbol_named(r, handle, name, symbol))
    }
    fn hsa_code_object_iterate_symbols(handle: u64, callback: Option<CodeSymbolCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let handles: Vec<u64> = {
                let cos = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner());
                cos.get(&handle).ok_or(ffi::ERROR_INVALID_CODE_OBJECT)?.symbols.iter().map(|(h, _)| *h).collect()
            };
            iterate(handles, |s| cb(handle, s, data))
        })
    }
    fn hsa_code_symbol_get_info(symbol: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let (co, i) = r.loader.code_symbols.lock().unwrap_or_else(|e| e.into_inner()).get(&symbol).copied().ok_or(ffi::ERROR_INVALID_CODE_SYMBOL)?;
            let s = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner()).get(&co).map(|c| c.symbols[i].1.clone()).ok_or(ffi::ERROR_INVALID_CODE_SYMBOL)?;
            symbol_attribute(&s.name, s.kernel.is_some(), s.kernel, s.size, attribute, value)
        })
    }
    fn hsa_executable_load_code_object(exe: u64, agent: u64, handle: u64, _options: *const c_char) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, dev) = r.gpu(agent)?;
            let bytes = code_object(r, handle)?.0;
            r.loader.load_bytes(r, exe, agent, dev, &bytes).map(drop)
        })
    }
}
export! {
    fn hsa_ext_image_get_capability(agent: u64, geometry: u32, format: *const [u32; 2], mask: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, g) = r.gpu(agent)?;
            nonnull(format)?;
            // SAFETY: checked non-null; the API requires a valid hsa_ext_image_format_t.
            let [ty, order] = unsafe { *format };
            out(mask, image::capability(g, geometry, ty, order))
        })
    }
    fn hsa_ext_image_get_capability_with_layout(agent: u64, geometry: u32, format: *const [u32; 2], layout: u32, mask: *mut u32) -> Status = ffi::ERROR; {
        if layout != IMAGE_LAYOUT_LINEAR {
            return ffi::ERROR_INVALID_ARGUMENT;
        }
        hsa_ext_image_get_capability(agent, geometry, format, mask)
    }
    fn hsa_ext_image_data_get_info(agent: u64, desc: *const image::ImageDescriptor, access: u32, info: *mut image::DataInfo) -> Status = ffi::ERROR; {
        with(|r| image_data_info(r, agent, desc, access, 0, 0, info))
    }
    fn hsa_ext_image_data_get_info_with_layout(agent: u64, desc: *const image::ImageDescriptor, access: u32, layout: u32, row_pitch: usize, slice_pitch: usize, info: *mut image::DataInfo) -> Status = ffi::ERROR; {
        if layout != IMAGE_LAYOUT_LINEAR {
            return ffi::ERROR_INVALID_ARGUMENT;
        }
        with(|r| image_data_info(r, agent, desc, access, row_pitch as u64, slice_pitch as u64, info))
    }
    fn hsa_ext_image_create(agent: u64, desc: *const image::ImageDescriptor, data: *const c_void, access: u32, handle: *mut u64) -> Status = ffi::ERROR; {
        with(|r| create_image(r, agent, desc, data as u64, access, 0, 0, handle))
    }
    fn hsa_ext_image_create_with_layout(agent: u64, desc: *const image::ImageDescriptor, data: *const c_void, access: u32, layout: u32, row_pitch: usize, slice_pitch: usize, handle: *mut u64) -> Status = ffi::ERROR; {
        if layout != IMAGE_LAYOUT_LINEAR {
            return ffi::ERROR_INVALID_ARGUMENT;
        }
        with(|r| create_image(r, agent, desc, data as u64, access, row_pitch as u64, slice_pitch as u64, handle))
    }
    fn hsa_amd_image_create(agent: u64, desc: *const image::ImageDescriptor, _layout: *const c_void, data: *const c_void, access: u32, handle: *mut u64) -> Status = ffi::ERROR; {
        // the vendor layout describes interop images; wavejit's images are always its own linear layout
        with(|r| create_image(r, agent, desc, data as u64, access, 0, 0, handle))
    }
    fn hsa_ext_image_destroy(agent: u64, handle: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            let gone = r.images.lock().unwrap_or_else(|e| e.into_inner()).images.remove(&handle);
            gone.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.free(handle)
        })
    }
    fn hsa_ext_image_import(agent: u64, src: *const c_void, row_pitch: usize, slice_pitch: usize, handle: u64, region: *const image::Region) -> Status = ffi::ERROR; {
        with(|r| image_transfer(r, agent, handle, src as u64, row_pitch as u64, slice_pitch as u64, region, true))
    }
    fn hsa_ext_image_export(agent: u64, handle: u64, dst: *mut c_void, row_pitch: usize, slice_pitch: usize, region: *const image::Region) -> Status = ffi::ERROR; {
        with(|r| image_transfer(r, agent, handle, dst as u64, row_pitch as u64, slice_pitch as u64, region, false))
    }
    fn hsa_ext_image_copy(agent: u64, src: u64, src_offset: *const [u32; 3], dst: u64, dst_offset: *const [u32; 3], range: *const [u32; 3]) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            nonnull(src_offset)?;
            nonnull(dst_offset)?;
            nonnull(range)?;
            let (s, d) = (image_of(r, src)?, image_of(r, dst)?);
            if s.bytes_per_texel() != d.bytes_per_texel() || s.dim != d.dim {
                eprintln!("wavejit: hsa_ext_image_copy between images of different geometry or texel size");
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: checked non-null; the API requires valid hsa_dim3_t values.
            let (so, dof, range) = unsafe { (*src_offset, *dst_offset, *range) };
            let from = image::region_texels(&s, &image::Region { offset: so, range })?;
            let to = image::region_texels(&d, &image::Region { offset: dof, range })?;
            let mut texel = vec![0u8; s.bytes_per_texel() as usize];
            for (a, b) in from.into_iter().zip(to) {
                r.mem.read(s.texel_address(a), &mut texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
                r.mem.write(d.texel_address(b), &texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
            }
            Ok(())
        })
    }
    fn hsa_ext_image_clear(agent: u64, handle: u64, data: *const [u32; 4], region: *const image::Region) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            nonnull(data)?;
            nonnull(region)?;
            let res = image_of(r, handle)?;
            // SAFETY: checked non-null; the API requires four 32-bit components and a valid region.
            let (v, g) = unsafe { (*data, *region) };
            let mut mem = image::HostTexels(r);
            for c in image::region_texels(&res, &g)? {
                res.store(&mut mem, c, v)?;
            }
            Ok(())
        })
    }
    fn hsa_ext_sampler_create(agent: u64, desc: *const image::SamplerDescriptor, handle: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, g) = r.gpu(agent)?;
            nonnull(desc)?;
            nonnull(handle)?;
            if !image::supported(g) {
                return Err(image::refuse(format!("{} has no image instructions, so no samplers", g.name)));
            }
            // SAFETY: checked non-null; the API requires a valid descriptor.
            let s = image::sampler_of(unsafe { &*desc }).map_err(|e| {
                eprintln!("wavejit: {e}");
                ffi::ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED
            })?;
            let at = r.allocate(0, image::SAMPLER_OBJECT_BYTES)?;
            let words: Vec<u8> = s.encode().iter().flat_map(|w| w.to_le_bytes()).collect();
            r.mem.write(at, &words).map_err(|_| ffi::ERROR)?;
            r.images.lock().unwrap_or_else(|e| e.into_inner()).samplers.insert(at, s);
            out(handle, at)
        })
    }
    fn hsa_ext_sampler_destroy(agent: u64, handle: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.gpu(agent)?;
            let gone = r.images.lock().unwrap_or_else(|e| e.into_inner()).samplers.remove(&handle);
            gone.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.free(handle)
        })
    }
    fn hsa_amd_image_get_info_max_dim(agent: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, g) = r.gpu(agent)?;
            info::image_limit(g, attribute, value)
        })
    }
}
unsupported!(ffi::ERROR, "the HSAIL finalizer is not provided (load AMDGPU code objects instead)":
    hsa_ext_program_add_module, hsa_ext_program_create, hsa_ext_program_destroy, hsa_ext_program_finalize,
    hsa_ext_program_get_info, hsa_ext_program_iterate_modules);
export! {
    // ---- interop: a buffer is any mappable file descriptor (a DMA-BUF a graphics driver exported, a memfd);
    // its pages are mapped into device memory
    fn hsa_amd_interop_map_buffer(n: u32, agents: *const u64, handle: i32, flags: u32, size: *mut usize, ptr: *mut *mut c_void, metadata_size: *mut usize, metadata: *mut *const c_void) -> Status = ffi::ERROR; {
        with(|r| {
            for &a in slice(agents, n as usize)? {
                r.gpu(a)?;
            }
            if n == 0 || flags != 0 {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            nonnull(size)?;
            nonnull(ptr)?;
            let (address, len) = memory::interop_map(r, handle)?;
            out(size, len as usize)?;
            if !metadata_size.is_null() {
                out(metadata_size, 0)?;
            }
            if !metadata.is_null() {
                out(metadata, std::ptr::null())?;
            }
            out(ptr, address as *mut c_void)
        })
    }
    fn hsa_amd_interop_unmap_buffer(ptr: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| if memory::unmap_foreign(r, ptr as u64) { Ok(()) } else { Err(ffi::ERROR_INVALID_ARGUMENT) })
    }

    // ---- shared virtual memory: attributes per page range; every agent shares one memory, so prefetches and
    // migrations move no data
    fn hsa_amd_svm_attributes_set(ptr: *mut c_void, size: usize, list: *mut svm::Pair, count: usize) -> Status = ffi::ERROR; {
        with(|r| {
            let pairs = slice(list as *const svm::Pair, count)?;
            r.svm.lock().unwrap_or_else(|e| e.into_inner()).set(r, ptr as u64, size as u64, pairs)
        })
    }
    fn hsa_amd_svm_attributes_get(ptr: *mut c_void, size: usize, list: *mut svm::Pair, count: usize) -> Status = ffi::ERROR; {
        with(|r| {
            if count == 0 {
                return Ok(());
            }
            nonnull(list)?;
            // SAFETY: checked non-null; the API requires `count` pairs the call may rewrite.
            let pairs = unsafe { std::slice::from_raw_parts_mut(list, count) };
            r.svm.lock().unwrap_or_else(|e| e.into_inner()).get(r, ptr as u64, size as u64, pairs)
        })
    }
    fn hsa_amd_svm_prefetch_async(ptr: *mut c_void, size: usize, agent: u64, n: u32, deps: *const u64, completion: u64) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            let deps = slice(deps, n as usize)?.to_vec();
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

const IPC_MAGIC: u32 = 0x5741_5645; // "WAVE"
const IPC_MEMORY: u32 = 0;
const IPC_SIGNAL: u32 = 1;

/// An IPC handle: magic, process, kind, address and length (48 bits).
fn ipc_handle(kind: u32, address: u64, len: u64) -> [u32; 8] {
    [IPC_MAGIC, std::process::id(), kind, address as u32, (address >> 32) as u32, len as u32, (len >> 32) as u32, 0]
}

/// Shares the allocation starting at `start` with other processes: (memfd descriptor, low 32 bits of its inode,
/// the allocation's page-rounded length). The inode tells an attaching process it found this memory, not a
/// later file that got the same descriptor number.
fn ipc_share(r: &Runtime, start: u64) -> Result<(u32, u32, u64), Status> {
    use std::os::unix::fs::MetadataExt;
    let (fd, span) = r.mem.share(start).map_err(|e| {
        eprintln!("wavejit: sharing memory for IPC: {e}");
        ffi::ERROR_OUT_OF_RESOURCES
    })?;
    if !(0..1 << 16).contains(&fd) {
        return Err(ffi::ERROR_OUT_OF_RESOURCES);
    }
    let ino = std::fs::metadata(format!("/proc/self/fd/{fd}")).map(|m| m.ino()).map_err(|_| ffi::ERROR)?;
    Ok((fd as u32, ino as u32, span))
}

/// An IPC handle of `kind`: its words, and the address (in the creating process) and length it names. Memory
/// handles also carry the memfd's descriptor number (word 6, high half) and inode (word 7).
fn ipc_open(handle: *const [u32; 8], kind: u32) -> Result<([u32; 8], u64, u64), Status> {
    nonnull(handle)?;
    // SAFETY: checked non-null; the API requires a valid handle struct.
    let h = unsafe { *handle };
    if h[0] != IPC_MAGIC || h[2] != kind {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    Ok((h, (h[4] as u64) << 32 | h[3] as u64, (h[6] as u64 & 0xffff) << 32 | h[5] as u64))
}

/// Whether the extension `ext` is provided at major version `major` (the AMD loader, 1.00).
fn extension(ext: u16, major: u16) -> bool {
    (ext == ffi::EXTENSION_AMD_LOADER || ext == ffi::EXTENSION_IMAGES) && major == 1
}

/// A pre-1.1 code object's bytes and target processor.
fn code_object(r: &Runtime, handle: u64) -> Result<(Arc<Vec<u8>>, String), Status> {
    let cos = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner());
    cos.get(&handle).map(|c| (c.bytes.clone(), c.processor.clone())).ok_or(ffi::ERROR_INVALID_CODE_OBJECT)
}

/// The symbol named `name` of pre-1.1 code object `handle` (a kernel also by its name without `.kd`).
fn code_symbol_named(r: &Runtime, handle: u64, name: *const c_char, symbol: *mut u64) -> Result<(), Status> {
    nonnull(name)?;
    nonnull(symbol)?;
    // SAFETY: a NUL-terminated name, as the API requires.
    let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    let cos = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner());
    let c = cos.get(&handle).ok_or(ffi::ERROR_INVALID_CODE_OBJECT)?;
    let found = c.symbols.iter().find(|(_, s)| s.name == n || (s.kernel.is_some() && s.name.strip_suffix(".kd") == Some(&*n)));
    out(symbol, found.ok_or(ffi::ERROR_INVALID_SYMBOL_NAME)?.0)
}

/// `HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR`, the one explicit image layout.
const IMAGE_LAYOUT_LINEAR: u32 = 1;

/// The descriptor behind a caller's pointer, for agent `agent`, checked for a GPU with images and a valid
/// access permission.
fn image_descriptor(r: &Runtime, agent: u64, desc: *const image::ImageDescriptor, access: u32) -> Result<image::ImageDescriptor, Status> {
    let (_, g) = r.gpu(agent)?;
    nonnull(desc)?;
    if !(1..=3).contains(&access) {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    if !image::supported(g) {
        return Err(image::refuse(format!("{} ({}) has no image instructions", g.name, g.gfx)));
    }
    // SAFETY: checked non-null; the API requires a valid hsa_ext_image_descriptor_t.
    Ok(unsafe { *desc })
}

fn image_data_info(r: &Runtime, agent: u64, desc: *const image::ImageDescriptor, access: u32, row_pitch: u64, slice_pitch: u64, info: *mut image::DataInfo) -> Result<(), Status> {
    let d = image_descriptor(r, agent, desc, access)?;
    nonnull(info)?;
    let (_, size) = image::layout(&d, 0, row_pitch, slice_pitch).map_err(image::refuse)?;
    out(info, image::DataInfo { size: size as usize, alignment: image::ROW_PITCH_ALIGNMENT as usize })
}

#[allow(clippy::too_many_arguments)]
fn create_image(r: &Runtime, agent: u64, desc: *const image::ImageDescriptor, data: u64, access: u32, row_pitch: u64, slice_pitch: u64, handle: *mut u64) -> Result<(), Status> {
    let d = image_descriptor(r, agent, desc, access)?;
    nonnull(handle)?;
    let align = if d.geometry == 5 { 4 } else { 256 };
    if !data.is_multiple_of(align) {
        eprintln!("wavejit: image data at {data:#x} is not {align}-byte aligned");
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let (res, _) = image::layout(&d, data, row_pitch, slice_pitch).map_err(image::refuse)?;
    // the bytes texels occupy: a pitch may reach past the last row's texels
    let last = [res.width - 1, res.height - 1, res.depth - 1];
    let last = if res.dim == emu_core::image::Dim::D1Array { [last[0], last[2], 0] } else { last };
    let extent = res.texel_address(last) + res.bytes_per_texel() - data;
    if !r.mem.host_accessible(data, extent) {
        eprintln!("wavejit: image data at {data:#x} ({extent} bytes) does not lie inside one allocation of this runtime");
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let at = r.allocate(0, image::IMAGE_OBJECT_BYTES)?;
    let words: Vec<u8> = image::object_words(&res, &d).iter().flat_map(|w| w.to_le_bytes()).collect();
    r.mem.write(at, &words).map_err(|_| ffi::ERROR)?;
    r.images.lock().unwrap_or_else(|e| e.into_inner()).images.insert(at, res);
    out(handle, at)
}

/// The resource of a live image object.
fn image_of(r: &Runtime, handle: u64) -> Result<emu_core::image::Resource, Status> {
    r.images.lock().unwrap_or_else(|e| e.into_inner()).images.get(&handle).copied().ok_or(ffi::ERROR_INVALID_ARGUMENT)
}

/// `hsa_ext_image_import` (`into_image`) and `_export`: texels between linear memory at `linear` and a region.
#[allow(clippy::too_many_arguments)]
fn image_transfer(r: &Runtime, agent: u64, handle: u64, linear: u64, row_pitch: u64, slice_pitch: u64, region: *const image::Region, into_image: bool) -> Result<(), Status> {
    r.gpu(agent)?;
    nonnull(region)?;
    let res = image_of(r, handle)?;
    // SAFETY: checked non-null; the API requires a valid region.
    let g = unsafe { *region };
    let texels = image::region_texels(&res, &g)?;
    let bpp = res.bytes_per_texel();
    // the last texel lies furthest into linear memory
    let extent = texels.clone().last().map_or(0, |c| image::linear_offset(&res, &g, c, row_pitch, slice_pitch) + bpp);
    let host = memory::host_range(r, linear, extent)?;
    let mut texel = vec![0u8; bpp as usize];
    for c in texels {
        let p = (host + image::linear_offset(&res, &g, c, row_pitch, slice_pitch)) as *mut u8;
        let at = res.texel_address(c);
        // SAFETY: `host .. host + extent` was checked (device memory) or is the caller's buffer, which the API
        // requires to hold the region with these pitches; every texel lies below `extent`.
        unsafe {
            if into_image {
                std::ptr::copy_nonoverlapping(p, texel.as_mut_ptr(), texel.len());
                r.mem.write(at, &texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
            } else {
                r.mem.read(at, &mut texel).map_err(|_| ffi::ERROR_INVALID_ARGUMENT)?;
                std::ptr::copy_nonoverlapping(texel.as_ptr(), p, texel.len());
            }
        }
    }
    Ok(())
}

/// `hsa_*_major_extension_supported`'s answer: whether, and the highest minor version (0).
fn major_extension(ext: u16, major: u16, minor: *mut u16, result: *mut bool) -> Result<(), Status> {
    let yes = extension(ext, major);
    if yes {
        out(minor, 0)?;
    }
    out(result, yes)
}

/// Allocates `size` bytes from pool `pool` into `*ptr`.
fn allocate_into(r: &Runtime, pool: usize, size: usize, ptr: *mut *mut c_void) -> Result<(), Status> {
    nonnull(ptr)?;
    out(ptr, r.allocate(pool, size as u64)? as *mut c_void)
}

/// The start and end timestamps a dispatch, barrier or copy left in its completion signal.
fn times(r: &Runtime, s: u64, time: *mut ffi::ProfilingTime) -> Result<(), Status> {
    let (a, b) = signal::timestamps(r, s)?;
    out(time, ffi::ProfilingTime { start: a.load(Ordering::Relaxed), end: b.load(Ordering::Relaxed) })
}

fn load(s: u64) -> i64 {
    rt().ok().and_then(|r| signal::value(&r, s).ok().map(|v| v.load(Ordering::Acquire))).unwrap_or(0)
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
    rt().ok().and_then(|r| signal::wait(&r, s, c, v, timeout).ok()).unwrap_or(0)
}
fn idx(q: *const ffi::HsaQueue, offset: usize) -> u64 {
    index_field(q, offset).map_or(0, |f| f.load(Ordering::Acquire))
}
fn set_idx(q: *const ffi::HsaQueue, offset: usize, v: u64) {
    if let Some(f) = index_field(q, offset) {
        f.store(v, Ordering::Release);
    }
}
fn add_idx(q: *const ffi::HsaQueue, v: u64) -> u64 {
    index_field(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID).map_or(0, |f| f.fetch_add(v, Ordering::AcqRel))
}
fn cas_idx(q: *const ffi::HsaQueue, e: u64, v: u64) -> u64 {
    index_field(q, ffi::AMD_QUEUE_WRITE_DISPATCH_ID).map_or(0, |f| match f.compare_exchange(e, v, Ordering::AcqRel, Ordering::Acquire) {
        Ok(o) | Err(o) => o,
    })
}

fn group_wait(r: &Runtime, group: u64, conds: *const u32, values: *const i64, signal_out: *mut u64, value: *mut i64) -> Result<(), Status> {
    let signals = r.groups.lock().unwrap_or_else(|e| e.into_inner()).get(&group).cloned().ok_or(ffi::ERROR_INVALID_SIGNAL_GROUP)?;
    let n = signals.len();
    let (i, v) = signal::wait_any(r, &signals, slice(conds, n)?, slice(values, n)?, u64::MAX)?;
    out(signal_out, signals[i as usize])?;
    out(value, v)
}

fn lock(r: &Runtime, host: *mut c_void, size: usize, agents: *const u64, n: i32, agent_ptr: *mut *mut c_void) -> Result<(), Status> {
    if host.is_null() || size == 0 {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    for &a in slice(agents, n.max(0) as usize)? {
        r.agent(a)?;
    }
    // memory already in device memory (hipHostMalloc's) is its own agent address; other host memory gets a
    // device address range of its own that reaches it, as locking gives on hardware (HIP relies on the two
    // addresses differing)
    let address = host as u64;
    let agent = if r.mem.host_accessible(address, size as u64) {
        address
    } else {
        r.mem.alias_host(address, size as u64, "locked host memory").map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?
    };
    let previous = r.locked.lock().unwrap_or_else(|e| e.into_inner()).insert(address, (size as u64, agent));
    if let Some((_, old)) = previous.filter(|(_, old)| *old != address) {
        let _ = r.mem.free(old);
    }
    out(agent_ptr, agent as *mut c_void)
}

fn pointer_info(r: &Runtime, ptr: u64, info: *mut ffi::PointerInfo, alloc: Option<extern "C" fn(usize) -> *mut c_void>, n: *mut u32, accessible: *mut *mut u64) -> Result<(), Status> {
    nonnull(info)?;
    // SAFETY: the caller provides an hsa_amd_pointer_info_t whose `size` field says how much of it we may fill.
    let size = unsafe { (*info).size } as usize;
    let found = r.allocation_of(ptr).map(|(s, a)| (s, a.size, r.pools[a.pool].agent as u64, r.pools[a.pool].flags, ffi::POINTER_TYPE_HSA)).or_else(|| {
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
        let (agent_base, owner) = if kind == ffi::POINTER_TYPE_LOCKED { (extra, 0) } else { (start, extra) };
        record.kind = kind;
        record.agent_base_address = agent_base as *mut c_void;
        record.host_base_address = start as *mut c_void;
        record.size_in_bytes = len as usize;
        record.agent_owner = AGENT_TAG + owner;
        record.global_flags = flags;
    }
    // SAFETY: `info` has room for `size` bytes (the caller said so); we copy no more than that.
    unsafe { std::ptr::copy_nonoverlapping((&record as *const ffi::PointerInfo).cast::<u8>(), info.cast::<u8>(), size.min(full)) };
    if !n.is_null() && !accessible.is_null() {
        let all: Vec<u64> = if found.is_some() { (0..r.agents.len() as u64).map(|i| AGENT_TAG + i).collect() } else { Vec::new() };
        let alloc = alloc.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
        out(n, all.len() as u32)?;
        if !all.is_empty() {
            let p = alloc(all.len() * 8).cast::<u64>();
            nonnull(p)?;
            // SAFETY: the caller's allocator returned room for `all.len()` handles.
            unsafe { std::ptr::copy_nonoverlapping(all.as_ptr(), p, all.len()) };
            out(accessible, p)?;
        }
    }
    Ok(())
}

fn new_executable(r: &Runtime, exe: *mut u64) -> Result<(), Status> {
    nonnull(exe)?;
    let id = crate::runtime::EXECUTABLE_TAG + r.next_id();
    r.loader.executables.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Default::default());
    out(exe, id)
}

/// Defines an external variable of executable `exe` (for relocations of code objects loaded afterwards).
fn define_variable(r: &Runtime, exe: u64, name: *const c_char, address: *mut c_void) -> Result<(), Status> {
    nonnull(name)?;
    nonnull(address)?;
    // SAFETY: a NUL-terminated name, as the API requires.
    let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    r.loader.define(exe, &n, address as u64)
}

fn symbols_of(r: &Runtime, exe: u64) -> Result<Vec<u64>, Status> {
    r.loader.executables.lock().unwrap_or_else(|e| e.into_inner()).get(&exe).map(|e| e.symbols.clone()).ok_or(ffi::ERROR_INVALID_EXECUTABLE)
}

fn symbol_info(r: &Runtime, symbol: u64, attribute: u32, value: *mut c_void) -> Result<(), Status> {
    let s = r.loader.symbols.read().unwrap_or_else(|e| e.into_inner()).get(&symbol).cloned().ok_or(ffi::ERROR_INVALID_EXECUTABLE_SYMBOL)?;
    match attribute {
        ffi::SYMBOL_INFO_AGENT => out(value.cast::<u64>(), s.agent),
        ffi::SYMBOL_INFO_VARIABLE_ADDRESS => out(value.cast::<u64>(), s.address),
        ffi::SYMBOL_INFO_KERNEL_OBJECT => out(value.cast::<u64>(), s.kernel.ok_or(ffi::ERROR_INVALID_ARGUMENT)?),
        _ => {
            let props = s.kernel.and_then(|k| r.loader.kernel(k)).map(|k| k.props);
            symbol_attribute(&s.name, s.kernel.is_some(), props, s.size, attribute, value)
        }
    }
}

/// The attributes executable symbols and (pre-1.1) code symbols share, whose numbers are the same in both
/// enumerations: of a symbol named `name`, a kernel (`props` when known) or a variable of `size` bytes.
fn symbol_attribute(name: &str, is_kernel: bool, props: Option<loader::KernelProps>, size: u64, attribute: u32, value: *mut c_void) -> Result<(), Status> {
    let v32 = value.cast::<u32>();
    let kernel = || props.ok_or(ffi::ERROR_INVALID_ARGUMENT);
    match attribute {
        ffi::SYMBOL_INFO_TYPE => out(v32, if is_kernel { ffi::SYMBOL_KIND_KERNEL } else { ffi::SYMBOL_KIND_VARIABLE }),
        ffi::SYMBOL_INFO_NAME_LENGTH => out(v32, name.len() as u32),
        ffi::SYMBOL_INFO_NAME => {
            nonnull(value)?;
            // SAFETY: the caller provides NAME_LENGTH bytes for the (unterminated) name.
            unsafe { std::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len()) };
            Ok(())
        }
        ffi::SYMBOL_INFO_MODULE_NAME_LENGTH => out(v32, 0),
        ffi::SYMBOL_INFO_MODULE_NAME => Ok(()),
        ffi::SYMBOL_INFO_LINKAGE => out(v32, 1),
        ffi::SYMBOL_INFO_IS_DEFINITION => out(value.cast::<bool>(), true),
        ffi::SYMBOL_INFO_VARIABLE_ALLOCATION | ffi::SYMBOL_INFO_VARIABLE_SEGMENT => out(v32, 0),
        ffi::SYMBOL_INFO_VARIABLE_ALIGNMENT => out(v32, 8),
        ffi::SYMBOL_INFO_VARIABLE_SIZE => out(v32, size as u32),
        ffi::SYMBOL_INFO_VARIABLE_IS_CONST => out(value.cast::<bool>(), false),
        ffi::SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE => out(v32, kernel()?.kernarg_size),
        ffi::SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT => out(v32, kernel()?.kernarg_align),
        ffi::SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE => out(v32, kernel()?.group_size),
        ffi::SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE => out(v32, kernel()?.private_size),
        ffi::SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK => out(value.cast::<bool>(), kernel()?.dynamic_callstack),
        // the call convention, and (code symbols) the indirect-function call convention
        ffi::SYMBOL_INFO_KERNEL_CALL_CONVENTION | 16 => out(v32, 0),
        _ => Err(ffi::ERROR_INVALID_ARGUMENT),
    }
}

/// The whole contents of file descriptor `fd`, read from its start (the descriptor's offset is left alone).
fn read_fd(fd: i32) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        // SAFETY: pread into our own buffer of the given length; an invalid fd only makes it fail.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), out.len() as libc::off_t) };
        match n {
            0 => return (!out.is_empty()).then_some(out),
            n if n > 0 => out.extend_from_slice(&buf[..n as usize]),
            _ => return None,
        }
    }
}

/// Extension function table `ext` (its first `length` bytes).
fn extension_table(ext: u16, major: u16, length: usize, table: *mut c_void) -> Result<(), Status> {
    if major != 1 {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let fns: Vec<usize> = match ext {
        ffi::EXTENSION_AMD_LOADER => vec![
            loader_query_host_address as *const () as usize,
            loader_query_segment_descriptors as *const () as usize,
            loader_query_executable as *const () as usize,
        ],
        // hsa_ext_images_1_pfn_t: the 1.00 functions, then the three with layouts
        ffi::EXTENSION_IMAGES => vec![
            hsa_ext_image_get_capability as *const () as usize,
            hsa_ext_image_data_get_info as *const () as usize,
            hsa_ext_image_create as *const () as usize,
            hsa_ext_image_destroy as *const () as usize,
            hsa_ext_image_copy as *const () as usize,
            hsa_ext_image_import as *const () as usize,
            hsa_ext_image_export as *const () as usize,
            hsa_ext_image_clear as *const () as usize,
            hsa_ext_sampler_create as *const () as usize,
            hsa_ext_sampler_destroy as *const () as usize,
            hsa_ext_image_get_capability_with_layout as *const () as usize,
            hsa_ext_image_data_get_info_with_layout as *const () as usize,
            hsa_ext_image_create_with_layout as *const () as usize,
        ],
        _ => return Err(ffi::ERROR_INVALID_ARGUMENT),
    };
    let bytes = fns.len() * 8;
    if length == 0 || length > bytes || !length.is_multiple_of(8) {
        eprintln!("wavejit: extension {ext:#x}'s table has {} functions; {length} bytes were asked for", fns.len());
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    nonnull(table)?;
    // SAFETY: checked non-null; the caller provides `length` bytes for the table, a prefix of the functions.
    unsafe { std::ptr::copy_nonoverlapping(fns.as_ptr().cast::<u8>(), table.cast::<u8>(), length) };
    Ok(())
}

extern "C" fn loader_query_host_address(device: *const c_void, host: *mut *const c_void) -> Status {
    std::panic::catch_unwind(|| {
        with(|r| {
            nonnull(host)?;
            r.loader.code_at(device as u64).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            out(host, device)
        })
    })
    .unwrap_or(ffi::ERROR)
}

/// `hsa_ven_amd_loader_segment_descriptor_t`.
#[repr(C)]
struct SegmentDescriptor {
    agent: u64,
    executable: u64,
    storage_type: u32,
    storage_base: *const c_void,
    storage_size: usize,
    storage_offset: usize,
    segment_base: *const c_void,
    segment_size: usize,
}

extern "C" fn loader_query_segment_descriptors(descriptors: *mut SegmentDescriptor, count: *mut usize) -> Status {
    std::panic::catch_unwind(|| {
        with(|r| {
            nonnull(count)?;
            let segments: Vec<SegmentDescriptor> = {
                let exes = r.loader.executables.lock().unwrap_or_else(|e| e.into_inner());
                let syms = r.loader.symbols.read().unwrap_or_else(|e| e.into_inner());
                exes.iter()
                    .flat_map(|(id, e)| {
                        let agent = e.symbols.first().and_then(|s| syms.get(s)).map_or(AGENT_TAG + 1, |s| s.agent);
                        e.code.iter().map(move |(_, c)| SegmentDescriptor {
                            agent,
                            executable: *id,
                            storage_type: 2,
                            storage_base: c.base as *const c_void,
                            storage_size: c.size as usize,
                            storage_offset: 0,
                            segment_base: c.base as *const c_void,
                            segment_size: c.size as usize,
                        })
                    })
                    .collect()
            };
            // SAFETY: checked non-null above.
            let room = unsafe { *count };
            if descriptors.is_null() {
                return out(count, segments.len());
            }
            if room < segments.len() {
                out(count, segments.len())?;
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            for (i, s) in segments.into_iter().enumerate() {
                out(descriptors.wrapping_add(i), s)?;
            }
            Ok(())
        })
    })
    .unwrap_or(ffi::ERROR)
}

extern "C" fn loader_query_executable(device: *const c_void, exe: *mut u64) -> Status {
    std::panic::catch_unwind(|| {
        with(|r| {
            let (id, _) = r.loader.code_at(device as u64).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            out(exe, id)
        })
    })
    .unwrap_or(ffi::ERROR)
}
