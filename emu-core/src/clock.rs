//! The device clock ([`DeviceClock`]): the shader-cycle count the waves of a GPU's successive dispatches read.
//! Each GPU's memory owns one ([`DeviceMemory::clock`]), which a [`Dispatch`](crate::engine::Dispatch) is given;
//! GPUs share none, and the process keeps none of its own.

use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(doc)]
use crate::memory::DeviceMemory;

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
