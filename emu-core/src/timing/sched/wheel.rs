//! The timing wheel: the turns to come, by cycle.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The turns to come, by cycle: a ring of buckets for the next [`Wheel::SPAN`] cycles and a heap beyond.
/// Entries of one cycle come out in the order they went in. A bucket is a plain vector read from a cursor
/// (only the current cycle's is being read) and emptied, keeping its room, once its cycle has passed.
pub(super) struct Wheel {
    pub(super) buckets: Vec<Vec<u32>>,
    /// The cycle of the bucket at the front; every entry is at this cycle or later.
    pub(super) now: u64,
    /// How many of the front bucket's entries were taken.
    pub(super) cursor: usize,
    /// Entries in the buckets not taken yet.
    pub(super) near: usize,
    pub(super) far: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Orders far entries of one cycle by arrival.
    pub(super) seq: u64,
}

impl Wheel {
    pub(super) const SPAN: u64 = 4096;

    pub(super) fn new() -> Wheel {
        Wheel {
            buckets: (0..Self::SPAN).map(|_| Vec::new()).collect(),
            now: 0,
            cursor: 0,
            near: 0,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, at: u64, x: u32) {
        debug_assert!(at >= self.now, "turns are never scheduled in the past");
        if at < self.now + Self::SPAN {
            self.buckets[(at % Self::SPAN) as usize].push(x);
            self.near += 1;
        } else {
            self.seq += 1;
            self.far.push(Reverse((at, self.seq, x)));
        }
    }

    /// The first entry (its cycle and value), without taking it.
    #[inline(always)]
    pub(super) fn peek(&mut self) -> Option<(u64, u32)> {
        loop {
            let front = &mut self.buckets[(self.now % Self::SPAN) as usize];
            if let Some(&x) = front.get(self.cursor) {
                return Some((self.now, x));
            }
            // the front cycle is done: on to the next one with entries
            front.clear();
            self.cursor = 0;
            if self.near == 0 {
                let Reverse((at, _, _)) = *self.far.peek()?;
                self.now = at;
            } else {
                self.now += 1;
            }
            // far entries now within the ring go in before any entry pushed from here on
            while let Some(&Reverse((at, _, x))) = self.far.peek() {
                if at >= self.now + Self::SPAN {
                    break;
                }
                self.far.pop();
                self.buckets[(at % Self::SPAN) as usize].push(x);
                self.near += 1;
            }
        }
    }

    /// The entry `d` places after the one [`Wheel::pop`] took last, when it is in the same cycle.
    #[inline]
    pub(super) fn ahead(&self, d: usize) -> Option<u32> {
        self.buckets[(self.now % Self::SPAN) as usize]
            .get(self.cursor + d - 1)
            .copied()
    }

    /// Takes the entry [`Wheel::peek`] showed.
    #[inline]
    pub(super) fn pop(&mut self) {
        self.cursor += 1;
        self.near -= 1;
    }
}
