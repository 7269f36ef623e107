//! The GPU's clock counter: what `GET_CLOCK_COUNTERS` reports beside the host's clocks, what the command
//! processor stamps dispatches with and what SDMA's TIMESTAMP and PM4's RELEASE_MEM write.
//!
//! It counts at 100 MHz (the MI200/MI300 reference clock, which tinygrad assumes) from `CLOCK_MONOTONIC`, and
//! never reads the same twice: ROCm's runtime divides by the difference of two readings.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counter ticks per second.
pub const GPU_CLOCK_HZ: u64 = 100_000_000;

/// The GPU clock of the process's emulated GPUs.
#[derive(Debug, Default)]
pub struct Clock {
    last: AtomicU64,
}

/// A host clock in nanoseconds.
pub fn host_ns(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into `t`, which lives for the call.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Clock {
    pub fn new() -> Clock {
        Clock::default()
    }

    /// The counter now: later than every earlier reading.
    pub fn now(&self) -> u64 {
        let t = host_ns(libc::CLOCK_MONOTONIC) / (1_000_000_000 / GPU_CLOCK_HZ);
        let prev = self.last.fetch_max(t, Ordering::AcqRel);
        if prev >= t {
            // the same tick again: one past the last reading
            self.last.fetch_add(1, Ordering::AcqRel) + 1
        } else {
            t
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_strictly_increase_at_100_mhz() {
        let c = Clock::new();
        let a = c.now();
        let b = c.now();
        assert!(b > a);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let d = c.now() - b;
        assert!(
            (1_500_000..10_000_000).contains(&d),
            "20 ms is about 2,000,000 ticks: {d}"
        );
    }
}
