//! The GPU's clock counter: what `GET_CLOCK_COUNTERS` reports beside the host's clocks, what the command
//! processor stamps dispatches with and what SDMA's TIMESTAMP and PM4's RELEASE_MEM write.
//!
//! It counts at 100 MHz (the MI200/MI300 reference clock, which tinygrad assumes) from `CLOCK_MONOTONIC`, and
//! never reads the same twice: ROCm's runtime divides by the difference of two readings.
//!
//! In timing mode it is the modeled clock instead, as every timestamp is on the drop-in route: it moves on by
//! each dispatch's modeled time ([`Clock::advance`]) and by one tick per reading, and the host clocks
//! `GET_CLOCK_COUNTERS` pairs with it move with it ([`Clock::counters`]), so that ROCr's translation of GPU
//! ticks to host nanoseconds (the ratio of the two clocks' progress) gives modeled nanoseconds.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counter ticks per second.
pub const GPU_CLOCK_HZ: u64 = 100_000_000;
/// Nanoseconds per tick.
const NS_PER_TICK: u64 = 1_000_000_000 / GPU_CLOCK_HZ;

/// The GPU clock of the process's emulated GPUs.
#[derive(Debug, Default)]
pub struct Clock {
    last: AtomicU64,
    /// Timing mode: (ticks, CLOCK_MONOTONIC_RAW ns, CLOCK_BOOTTIME ns) when the driver started.
    modeled: Option<(u64, u64, u64)>,
}

/// What `GET_CLOCK_COUNTERS` reports: the GPU counter and the host's raw monotonic and boot-time clocks (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub gpu: u64,
    pub cpu_ns: u64,
    pub system_ns: u64,
}

/// A host clock in nanoseconds.
pub fn host_ns(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into `t`, which lives for the call.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Clock {
    /// The GPU clock: real time, or with `modeled` the modeled clock.
    pub fn new(modeled: bool) -> Clock {
        let start = host_ns(libc::CLOCK_MONOTONIC) / NS_PER_TICK;
        Clock {
            last: AtomicU64::new(start),
            modeled: modeled.then(|| (start, host_ns(libc::CLOCK_MONOTONIC_RAW), host_ns(libc::CLOCK_BOOTTIME))),
        }
    }

    /// The counter now: later than every earlier reading.
    pub fn now(&self) -> u64 {
        if self.modeled.is_some() {
            return self.last.fetch_add(1, Ordering::AcqRel) + 1;
        }
        let t = host_ns(libc::CLOCK_MONOTONIC) / (1_000_000_000 / GPU_CLOCK_HZ);
        let prev = self.last.fetch_max(t, Ordering::AcqRel);
        if prev >= t {
            // the same tick again: one past the last reading
            self.last.fetch_add(1, Ordering::AcqRel) + 1
        } else {
            t
        }
    }

    /// Timing mode: a dispatch of `ns` modeled nanoseconds ran; the clock moves on by its ticks. Nothing in
    /// real time (the clock is the host's).
    pub fn advance(&self, ns: u64) {
        if self.modeled.is_some() {
            self.last.fetch_add(ns / NS_PER_TICK, Ordering::AcqRel);
        }
    }

    /// Timing mode: the modeled nanoseconds from the driver's start to the reading `ticks`.
    pub fn modeled_ns(&self, ticks: u64) -> Option<u64> {
        self.modeled
            .map(|(start, _, _)| ticks.saturating_sub(start) * NS_PER_TICK)
    }

    /// The counter now with the host clocks beside it; in timing mode the host clocks as far from their values
    /// at the start as the modeled clock is from its own.
    pub fn counters(&self) -> Counters {
        let gpu = self.now();
        match self.modeled {
            Some((start, raw, boot)) => {
                let since = (gpu - start) * NS_PER_TICK;
                Counters {
                    gpu,
                    cpu_ns: raw + since,
                    system_ns: boot + since,
                }
            }
            None => Counters {
                gpu,
                cpu_ns: host_ns(libc::CLOCK_MONOTONIC_RAW),
                system_ns: host_ns(libc::CLOCK_BOOTTIME),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_strictly_increase_at_100_mhz() {
        let c = Clock::new(false);
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

    #[test]
    fn the_modeled_clock_moves_by_modeled_time_and_the_host_clocks_move_with_it() {
        let c = Clock::new(true);
        let a = c.counters();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = c.counters();
        assert_eq!(b.gpu - a.gpu, 1, "20 ms of real time are not GPU time in timing mode");
        c.advance(5_000_000);
        let d = c.counters();
        assert_eq!(
            d.gpu - b.gpu,
            500_001,
            "5 ms modeled: 500,000 ticks, and one for the reading"
        );
        // ROCr's translation: host ns per tick from two pairs of readings
        let ratio = (d.system_ns - a.system_ns) as f64 / (d.gpu - a.gpu) as f64;
        assert_eq!(ratio, 10.0);
        assert_eq!(d.cpu_ns - a.cpu_ns, d.system_ns - a.system_ns);
    }
}
