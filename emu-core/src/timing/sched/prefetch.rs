//! Host prefetching: asking the host for the model's state a few turns before a decision reads it.

use super::*;

/// Cycles after which a wave's functional state, last touched when its block ran, is taken to have left the
/// host's caches (the block waited for memory meanwhile): the model then asks for it ahead of the next block.
pub(super) const STATE_COLD_AFTER: u64 = 256;

/// How many turns ahead [`Model::prefetch_turn`] fetches a SIMD and its likely wave.
pub(super) const PREFETCH_AHEAD: usize = 4;

/// How many turns ahead [`Model::prefetch_turn`] fetches the likely wave's head entry from its queue (reading
/// where it is from the wave, which the fetch [`PREFETCH_AHEAD`] turns ahead most likely brought in).
pub(super) const QUEUE_PREFETCH_AHEAD: usize = 2;

/// The bytes of a wave's timing state [`Model::prefetch_turn`] fetches: its head, holds and the completions
/// an issue reads.
pub(super) const WAVE_PREFETCH: usize = 192;

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    /// Asks the host to fetch what the turn a few entries ahead will read: [`PREFETCH_AHEAD`] entries ahead,
    /// the SIMD's bounds and residents and the start of the wave it most likely issues ([`Model::likely`]):
    /// [`WAVE_PREFETCH`] bytes; [`QUEUE_PREFETCH_AHEAD`] entries ahead, that wave's head entry in its queue
    /// when the head is still to be looked up. A turn takes about as long as a host cache miss.
    #[inline]
    pub(super) fn prefetch_turn(&self) {
        if let Some(x) = self.turns.ahead(PREFETCH_AHEAD).filter(|x| x & RETIRE == 0) {
            let simd = &self.simds[x as usize];
            crate::timing::prefetch_bytes(simd, 256);
            crate::timing::prefetch_bytes(&self.waves[self.likely[x as usize] as usize], WAVE_PREFETCH);
        }
        // nearer, that wave's head entry, from the queue position the fetch above brought in
        if let Some(x) = self.turns.ahead(QUEUE_PREFETCH_AHEAD).filter(|x| x & RETIRE == 0) {
            let wave = &self.waves[self.likely[x as usize] as usize];
            if !wave.head.known() && wave.pos < wave.len {
                crate::timing::prefetch(wave.queue.as_ptr().wrapping_add(wave.pos as usize));
            }
        }
    }
    /// Asks the host to bring wave `w`'s functional state (registers, PC, status) into its caches: the wave's
    /// next issue runs its next block on the engine, a few turns from now ([`STATE_COLD_AFTER`]).
    pub(super) fn prefetch_state(&self, w: usize) {
        let wave = &self.waves[w];
        let Some(sl) = self.slots[wave.slot as usize].as_ref() else {
            return;
        };
        let Some(state) = sl.group.waves.get(wave.index as usize) else {
            return;
        };
        crate::timing::prefetch_bytes(state, std::mem::offset_of!(crate::wave::WaveState, windows));
        crate::timing::prefetch_bytes(state.vgprs.as_ptr(), std::mem::size_of_val(state.vgprs.as_slice()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_turn_reads_lies_where_the_prefetches_reach() {
        // a SIMD in 256 bytes; a wave's head and its work in one host cache line, then its holds and where its
        // queue and work are, then the completions every issue reads, in the first 192 bytes
        assert_eq!(std::mem::size_of::<Resident>(), 16);
        assert_eq!(std::mem::size_of::<Simd>(), 256);
        assert!(std::mem::offset_of!(Wave, head_work) + std::mem::size_of::<Work>() <= 64);
        assert!(std::mem::offset_of!(Wave, waits) + WaveWaits::FIRST_BYTES <= WAVE_PREFETCH);
        assert_eq!(std::mem::size_of::<Executed>(), 8);
    }
}
