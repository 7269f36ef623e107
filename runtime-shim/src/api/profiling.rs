//! Profiling: every dispatch, barrier and copy is timestamped (it costs two clock reads), so enabling profiling
//! is only checked; the start and end times are read back from the completion signal. Ticks are already
//! system-domain nanoseconds.

use std::sync::atomic::Ordering;

use super::{out, with};
use crate::ffi::{self, Status};
use crate::queue;
use crate::runtime::Runtime;
use crate::signal;

export! {
    fn hsa_amd_profiling_set_profiler_enabled(q: *mut ffi::HsaQueue, _enable: i32) -> Status = ffi::ERROR; {
        with(|r| queue::find(r, q as u64).map(drop))
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
            // SAFETY: `system` is null or points to storage for the result, as the API requires.
            unsafe { out(system, tick) }
        })
    }
}

/// The start and end timestamps a dispatch, barrier or copy left in its completion signal.
fn times(r: &Runtime, s: u64, time: *mut ffi::ProfilingTime) -> Result<(), Status> {
    let (a, b) = signal::timestamps(r, s)?;
    // SAFETY: `time` is null or points to storage for the result, as the API requires.
    unsafe {
        out(
            time,
            ffi::ProfilingTime {
                start: a.load(Ordering::Relaxed),
                end: b.load(Ordering::Relaxed),
            },
        )
    }
}
