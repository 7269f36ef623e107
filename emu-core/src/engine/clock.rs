//! The device clock ([`DeviceClock`]) the waves of successive dispatches read, and the process's.

use std::sync::atomic::{AtomicU64, Ordering};

/// The clock a device's dispatches read ([`WaveClock`](crate::wave::WaveClock): `s_memtime`, `s_memrealtime`): the
/// shader-cycle count their clocks continue from. It only grows, so clocks never go back from one dispatch to the next.
#[derive(Debug, Default)]
pub struct DeviceClock(AtomicU64);

impl DeviceClock {
    /// A clock at cycle 0.
    pub const fn new() -> DeviceClock {
        DeviceClock(AtomicU64::new(0))
    }

    /// The cycle the clocks of the next dispatch start from.
    pub fn base(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Moves the clock to at least `cycles` (what a dispatch's clocks have counted to).
    pub fn advance_to(&self, cycles: u64) {
        self.0.fetch_max(cycles, Ordering::Relaxed);
    }
}

/// The clock of the dispatches that are not given one ([`Dispatch::new`](super::Dispatch::new), and so
/// [`run_launch`](super::run_launch) and [`KernelDispatch`](super::KernelDispatch)): one for the process.
pub static PROCESS_CLOCK: DeviceClock = DeviceClock::new();

/// Where the clocks of a dispatch on [`PROCESS_CLOCK`] start.
pub fn clock_base() -> u64 {
    PROCESS_CLOCK.base()
}
