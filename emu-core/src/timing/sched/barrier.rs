//! Barriers and wave ends: a wave arriving at `s_barrier` or `s_endpgm`, and a workgroup's release.

use super::*;

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    /// Wave `w` issued `s_barrier` or `s_endpgm` (`sequencer`) at `t`: it waits for its workgroup, or it has
    /// ended and retires once its memory operations complete; a barrier the others wait at may release.
    #[cold]
    #[inline(never)]
    pub(super) fn arrive(&mut self, t: u64, w: usize, sequencer: Sequencer) {
        let slot = self.waves[w].slot as usize;
        if sequencer == Sequencer::End {
            let wave = &mut self.waves[w];
            wave.state = State::Done;
            let end = (t + 1).max(wave.waits.all_done());
            self.turns.push(end, RETIRE | w as u32);
        } else {
            self.waves[w].state = State::AtBarrier;
            let sl = self.slots[slot].as_mut().expect("resident");
            sl.at_barrier += 1;
            sl.last_arrival = sl.last_arrival.max(t);
        }
        self.release_barrier(slot, t);
    }
    /// Releases the workgroup in `slot` from `s_barrier` when every wave that has not ended waits there (checked
    /// at cycle `t`, when a wave arrives or ends).
    pub(super) fn release_barrier(&mut self, slot: usize, t: u64) {
        let sl = self.slots[slot].as_mut().expect("resident");
        let not_done = sl
            .waves
            .iter()
            .filter(|&&x| self.waves[x as usize].state != State::Done)
            .count() as u32;
        if sl.at_barrier == 0 || sl.at_barrier < not_done {
            return;
        }
        // the last wave arrived (or the last one that had not ended ended) at `t`
        let release = sl.last_arrival.max(t) + self.m.overheads.barrier_release;
        // a turn decides which of its waves are due once, at its start: a release must come after it
        debug_assert!(
            release > t,
            "a barrier releases after the turn in which its last wave arrives"
        );
        sl.at_barrier = 0;
        let wg = sl.group.wg;
        let ids = sl.waves.clone();
        for id in ids {
            let wave = &mut self.waves[id as usize];
            if wave.state != State::AtBarrier {
                continue;
            }
            wave.state = State::Active;
            if release > wave.hold {
                wave.hold = release;
                wave.hold_why = Hold::Barrier;
            }
            let lb = wave.next_turn.max(wave.hold);
            let (simd, index) = (wave.simd as usize, wave.index as usize);
            let sd = &mut self.simds[simd];
            let k = sd.resident[..sd.len]
                .iter()
                .position(|r| r.wave == id)
                .expect("resident on its SIMD");
            sd.lbs[k] = lb;
            let functional = &mut self.slots[slot].as_mut().expect("resident").group.waves[index];
            if functional.status == WaveStatus::AtBarrier {
                functional.status = WaveStatus::Running;
            }
            let at = align_up(release, self.simds[simd].phase, self.cadence);
            self.schedule(simd, at);
        }
        if O::ACTIVE {
            self.d.observer.event(&Event::BarrierRelease {
                dispatch: self.dispatch,
                workgroup: wg,
                cycle: Some(release),
            });
        }
    }
}
