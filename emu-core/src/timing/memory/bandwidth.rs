//! Bandwidth and misses in flight: a channel's occupancy per request ([`Rate`]), the channel of an address,
//! and a CU's limit on L1 misses in flight ([`InFlight`]).

/// Occupancy of a request on a channel, in 1/256 cycles, as `bytes * per_byte >> 16`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rate {
    per_byte_q16: u64,
}

impl Rate {
    pub(super) fn new(bytes_per_clock: f64) -> Rate {
        assert!(bytes_per_clock > 0.0);
        Rate {
            per_byte_q16: (256.0 * 65536.0 / bytes_per_clock).round() as u64,
        }
    }
    #[inline]
    pub(super) fn cost(self, bytes: u32) -> u64 {
        (bytes as u64 * self.per_byte_q16) >> 16
    }
}

/// Takes channel `free` (next free time, 1/256 cycles) from `now` for `cost`; returns the start cycle.
#[inline]
pub(super) fn occupy(free: &mut u64, now: u64, cost: u64, busy: &mut u64) -> u64 {
    let start = (now << 8).max(*free);
    *free = start + cost;
    *busy += cost;
    start.div_ceil(256)
}

/// The channel of `addr` among `channels` (a power of two): an XOR fold of the interleave-block number, so
/// consecutive blocks go to consecutive channels and power-of-two strides still spread.
#[inline]
pub(super) fn channel(addr: u64, interleave_bits: u32, channels: u32) -> usize {
    let x = addr >> interleave_bits;
    let h = x ^ (x >> 7) ^ (x >> 13) ^ (x >> 19);
    (h & (channels as u64 - 1)) as usize
}

/// Requests in flight, retired by completion time: `done[start..]`, sorted (at most a few hundred). Retired
/// ones stay before `start` until they are as many as the limit, then leave in one move.
pub(super) struct InFlight {
    limit: usize,
    start: usize,
    done: Vec<u64>,
}

impl InFlight {
    pub(super) fn new(limit: u32) -> InFlight {
        let limit = limit.max(1) as usize;
        InFlight {
            limit,
            start: 0,
            done: Vec::with_capacity(2 * limit + 1),
        }
    }
    /// The completion cycles of the requests in flight, earliest first.
    #[inline]
    fn live(&self) -> &[u64] {
        &self.done[self.start..]
    }
    /// The cycle a request arriving at `t` gets a slot.
    #[inline(always)]
    pub(super) fn acquire(&mut self, t: u64) -> u64 {
        let retired = self.live().iter().take_while(|&&d| d <= t).count();
        self.start += retired;
        let slot = if self.live().len() >= self.limit {
            self.start += 1;
            t.max(self.done[self.start - 1])
        } else {
            t
        };
        if self.start >= self.limit {
            self.done.drain(..self.start);
            self.start = 0;
        }
        slot
    }
    #[inline(always)]
    pub(super) fn release_at(&mut self, t: u64) {
        // after the last one due no later than `t`: requests mostly complete in the order they go out, so
        // the place is found from the back
        let later = self.live().iter().rev().take_while(|&&d| d > t).count();
        self.done.insert(self.done.len() - later, t);
    }
    /// The first cycle from `t` at which `n` more requests get slots without waiting.
    #[inline(always)]
    pub(super) fn room_at(&self, t: u64, n: usize) -> u64 {
        let live = self.live();
        let done = if live.first().is_some_and(|&d| d <= t) {
            live.partition_point(|&d| d <= t)
        } else {
            0
        };
        let busy = live.len() - done;
        let excess = (busy + n.min(self.limit)).saturating_sub(self.limit);
        if excess == 0 {
            return t;
        }
        live[done + excess - 1]
    }
}
