//! Issue arbitration and stalls: each SIMD's turn, which wave's head issues, what it costs its units, and the
//! stall cycles of each reason that held it.

use super::*;

/// The constraints on a wave's head instruction at one cycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Constraints {
    pub(super) vm: u64,
    pub(super) lgkm: u64,
    pub(super) dependency: u64,
    pub(super) unit: u64,
}

impl Constraints {
    #[inline(always)]
    pub(super) fn ready(&self) -> u64 {
        self.vm.max(self.lgkm).max(self.dependency).max(self.unit)
    }
}

/// The slots of `lbs` whose bound cycle `t` has reached (bit `j`: `lbs[j] <= t`), worked out as the sign bits
/// of `lbs[j] - (t + 1)`: both are below 2^63, so the difference is negative exactly when the bound is at most
/// `t`.
#[inline(always)]
pub(super) fn due(lbs: &[u64; MAX_WAVES], t: u64) -> u32 {
    const { assert!(MAX_WAVES == 8, "four pairs of bounds") };
    debug_assert!(t < NEVER && lbs.iter().all(|&b| b <= NEVER));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of every x86_64 target; the four unaligned 16-byte loads read the eight bounds.
    unsafe {
        use std::arch::x86_64::{
            __m128i, _mm_castsi128_pd, _mm_loadu_si128, _mm_movemask_pd, _mm_set1_epi64x, _mm_sub_epi64,
        };
        let next = _mm_set1_epi64x((t + 1) as i64);
        let p = lbs.as_ptr().cast::<__m128i>();
        let signs = |k: usize| _mm_movemask_pd(_mm_castsi128_pd(_mm_sub_epi64(_mm_loadu_si128(p.add(k)), next))) as u32;
        signs(0) | signs(1) << 2 | signs(2) << 4 | signs(3) << 6
    }
    #[cfg(not(target_arch = "x86_64"))]
    (0..MAX_WAVES).fold(0u32, |m, j| m | ((lbs[j].wrapping_sub(t + 1) >> 63) as u32) << j)
}

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    // ---- issue ------------------------------------------------------------------------------------------

    /// The info of the instruction at `pc`, decoded through the dispatch's decode cache on first sight.
    pub(super) fn info_at_pc(
        &mut self,
        pc: u64,
        decoded: Option<&Inst>,
        who: ([u32; 3], u32),
    ) -> Result<u32, EngineError> {
        let word = (pc.wrapping_sub(self.d.launch.code.base) / 4) as usize;
        if let Some(&i) = self.info_at.get(word) {
            if i != 0 {
                return Ok(i - 1);
            }
        }
        let inst = match decoded {
            Some(i) => *i,
            None => self
                .d
                .launch
                .cache
                .get(self.d.mem, self.d.launch.code, pc)
                .map_err(|error| EngineError::IllegalInstruction {
                    kernel: self.d.launch.name.to_string(),
                    workgroup: who.0,
                    wave: who.1,
                    pc,
                    error,
                })?,
        };
        let info = InstInfo::new(&inst, self.table, self.l1_line_shift).ok_or_else(|| {
            self.fail(format!(
                "{} at {pc:#x} has no timing on {}",
                inst.info.name, self.d.device.gfx
            ))
        })?;
        if self.infos.len() >= INFO as usize {
            return Err(self.fail(format!("more than {INFO} distinct instructions ran")));
        }
        self.infos.push(info);
        let i = (self.infos.len() - 1) as u32;
        if let Some(slot) = self.info_at.get_mut(word) {
            *slot = i + 1;
        }
        Ok(i)
    }

    /// The wave's next instruction to issue (its info): the head of its queue, or the instruction at its PC.
    #[inline(always)]
    pub(super) fn head(&mut self, w: usize) -> Result<u32, EngineError> {
        let wave = &mut self.waves[w];
        if wave.head.known() {
            return Ok(wave.head.info());
        }
        if wave.pos < wave.len {
            let e = wave.queue[wave.pos as usize];
            wave.head = e;
            if e.bits & WORK != 0 {
                wave.head_work = wave.work[wave.next_work as usize];
            }
            return Ok(e.info());
        }
        self.head_at_pc(w)
    }

    /// [`Model::head`] of a wave whose queue is empty: the instruction at its PC.
    #[cold]
    #[inline(never)]
    pub(super) fn head_at_pc(&mut self, w: usize) -> Result<u32, EngineError> {
        let wave = &self.waves[w];
        let (slot, pc, index) = (wave.slot as usize, wave.peek_pc, wave.index);
        let wg = self.slots[slot].as_ref().expect("resident").group.wg;
        let info = self.info_at_pc(pc, None, (wg, index))?;
        self.waves[w].head = Executed {
            bits: info,
            ..Executed::UNKNOWN
        };
        Ok(info)
    }

    /// Whether [`Model::head`] finds wave `w`'s head at once: known already, or (its queue empty) at a PC the
    /// model has seen. A head in the queue is left to be looked up at a later turn, once the host has fetched
    /// the queue entry that [`Model::issue`] asked for.
    pub(super) fn head_at_hand(&self, w: usize) -> bool {
        let wave = &self.waves[w];
        wave.head.known()
            || (wave.pos == wave.len
                && self
                    .info_at
                    .get((wave.peek_pc.wrapping_sub(self.d.launch.code.base) / 4) as usize)
                    .is_some_and(|&i| i != 0))
    }

    /// The constraints on wave `w`'s head (instruction info `info`) that only the wave's own issues move: its
    /// `s_waitcnt` counts and its source registers (`unit` left at 0).
    #[inline(always)]
    pub(super) fn waits(&self, w: usize, info: u32) -> Constraints {
        let wave = &self.waves[w];
        let i = &self.infos[info as usize];
        let mut c = Constraints::default();
        if let Sequencer::Waitcnt(n) = i.sequencer {
            c.vm = wave.waits.vm_ready(n.vmcnt);
            c.lgkm = wave.waits.lgkm_ready(n.lgkmcnt);
        }
        c.dependency = wave.waits.operands_ready(&i.reads);
        c
    }

    /// When the unit of instruction info `info` on SIMD `s` is free for it: the part of its constraints that
    /// other waves' issues move.
    #[inline]
    pub(super) fn unit_ready(&self, s: usize, info: u32) -> u64 {
        let simd = &self.simds[s];
        let i = &self.infos[info as usize];
        let unit = match i.timing.pipe {
            Pipe::Valu | Pipe::Mfma => simd.valu_free,
            Pipe::MfmaExclusive => simd.valu_free.max(simd.mfma_free),
            // the texture address unit, and room for the instruction's lines among the CU's misses in flight
            // (a wave64 access of `bytes` per lane at unit stride: the lines are known only once it executes)
            Pipe::Vmem | Pipe::Flat => self.cus[simd.cu as usize]
                .vmem_free
                .max(self.memsys.l1_room_at(0, simd.cu, i.l1_lines)),
            Pipe::Lds => self.cus[simd.cu as usize].lds_free,
            _ => 0,
        };
        if i.timing.pipe == Pipe::Mfma {
            unit.max(simd.mfma_free)
        } else {
            unit
        }
    }

    /// Looks up the head of the wave on slot `k` of SIMD `s` and the cycle its [`Model::waits`] allow it.
    #[inline(always)]
    pub(super) fn look_up_head(&mut self, s: usize, k: usize) -> Result<(u32, u64), EngineError> {
        let w = self.simds[s].resident[k].wave as usize;
        let info = self.head(w)?;
        let ready = self.waits(w, info).ready();
        let r = &mut self.simds[s].resident[k];
        (r.head, r.waits_ready) = (info, ready);
        Ok((info, ready))
    }

    /// SIMD `s`'s issue turn at cycle `t`; schedules its next turn worth taking (the earliest cycle one of its
    /// waves might issue).
    pub(super) fn turn(&mut self, t: u64, s: usize) -> Result<(), EngineError> {
        let mut used = 0u8;
        // the waves whose bounds allow them this turn, oldest first: an issue moves only its own wave's bound
        // (a barrier it releases sets the others' bounds past `t`), so the set is known from the start
        let mut pending = due(&self.simds[s].lbs, t);
        // the instruction whose unit was looked up last in this turn, and when that unit is free for it
        let mut known_unit = (UNKNOWN, 0);
        while pending != 0 {
            let i = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            let r = self.simds[s].resident[i];
            // the bound covers the wave's turn and holds (it is never below them), so only the head's
            // constraints remain to check: its waits, known since it last issued, and its unit's state
            let w = r.wave as usize;
            debug_assert!(
                self.waves[w].next_turn.max(self.waves[w].hold) <= self.simds[s].lbs[i],
                "the bound covers the turn and holds"
            );
            let (info, waits_ready) = if r.head == UNKNOWN {
                self.look_up_head(s, i)?
            } else {
                (r.head, r.waits_ready)
            };
            // waves at the same instruction (a vector load many wait to issue) find its unit as the last one did
            let unit = if known_unit.0 == info {
                known_unit.1
            } else {
                let unit = self.unit_ready(s, info);
                known_unit = (info, unit);
                unit
            };
            let ready = waits_ready.max(unit);
            if ready > t {
                self.simds[s].lbs[i] = ready;
                continue;
            }
            let cat = self.infos[info as usize].category;
            if used & cat.bit() != 0 {
                // its bound stays at or before `t`: the next turn comes at `t + 1` or the next on the cadence
                continue;
            }
            self.issue(t, s, w, info, ready, unit)?;
            // the issue may have taken a unit
            known_unit.0 = UNKNOWN;
            used |= cat.bit();
            let wave = &self.waves[w];
            let lb = if wave.state == State::Active {
                wave.next_turn.max(wave.hold)
            } else {
                NEVER
            };
            self.simds[s].lbs[i] = lb;
            self.simds[s].resident[i].head = UNKNOWN;
            // the next head's waits while the wave is at hand, when they need no queue entry or decoding
            if lb != NEVER && self.head_at_hand(w) {
                self.look_up_head(s, i)?;
            }
        }
        // the next turn worth taking: at the earliest bound (slots past the resident waves hold NEVER); the
        // oldest wave whose bound allows it then is the one the SIMD most likely issues first (which is not
        // always the one with the earliest bound: an older wave due by then goes first)
        let lbs = &self.simds[s].lbs;
        let next = lbs.iter().fold(NEVER, |m, &b| m.min(b));
        if next != NEVER {
            let phase = self.simds[s].phase;
            let at = align_up(next.max(t + 1), phase, self.cadence);
            let first = lbs.iter().position(|&b| b <= at).unwrap_or(0);
            self.likely[s] = self.simds[s].resident[first].wave;
            self.schedule(s, at);
        }
        Ok(())
    }
    /// Issues wave `w`'s head (instruction info `info`) at cycle `t` on SIMD `s`, which its constraints allow
    /// from `ready` on (its unit from `unit`).
    pub(super) fn issue(
        &mut self,
        t: u64,
        s: usize,
        w: usize,
        info: u32,
        ready: u64,
        unit: u64,
    ) -> Result<(), EngineError> {
        if self.infos[info as usize].sequencer == Sequencer::GridSync {
            return Err(self.grid_sync_refused());
        }
        if self.waves[w].pos == self.waves[w].len {
            self.run_block(t, w)?;
        }
        let wave = &mut self.waves[w];
        let at = wave.pos as usize;
        debug_assert_eq!(wave.head.bits, wave.queue[at].bits, "the head was looked up");
        let e = wave.head;
        wave.pos += 1;
        wave.head = Executed::UNKNOWN;
        let work = (e.bits & WORK != 0).then_some(wave.head_work);
        if work.is_some() {
            wave.next_work += 1;
        }
        if wave.pos < wave.len {
            // for the head's look-up at a later turn: its entry, and the next memory instruction's work
            crate::timing::prefetch(wave.queue.as_ptr().wrapping_add(at + 1));
            if (wave.next_work as usize) < wave.work.len() {
                crate::timing::prefetch(wave.work.as_ptr().wrapping_add(wave.next_work as usize));
            }
        }
        if wave.pos == wave.len && t.saturating_sub(wave.ran_at) > STATE_COLD_AFTER {
            self.prefetch_state(w);
        }
        debug_assert_eq!(e.info(), info, "the engine executed the instruction the model peeked");
        let (pipe, issue, latency, wait, sequencer) = {
            let i = &self.infos[e.info() as usize];
            (i.timing.pipe, i.issue, i.latency, i.wait, i.sequencer)
        };
        let cu_index = self.simds[s].cu as usize;
        // stalls: each cycle from the wave's turn to issue, for the first reason holding it then
        let (base, hold) = (self.waves[w].next_turn, self.waves[w].hold);
        // (`wave.hold` bounds the hold of each reason)
        let stalls = if ready.max(hold) <= base {
            // nothing held it past its turn (most issues): any cycles since are the arbitration's
            let arbitration = t.saturating_sub(base);
            self.stalls.arbitration += arbitration;
            Stalls {
                arbitration,
                ..Stalls::default()
            }
        } else {
            // which constraint held it: its waits as they were while it waited
            let c = Constraints {
                unit,
                ..self.waits(w, info)
            };
            debug_assert_eq!(c.ready(), ready, "the waits stay as they are until the wave issues");
            let wave = &self.waves[w];
            let held = |why| if wave.hold_why == why { wave.hold } else { 0 };
            let reasons = [
                c.vm,
                c.lgkm,
                held(Hold::Barrier),
                c.dependency,
                c.unit,
                held(Hold::Fetch),
                held(Hold::Sleep),
            ];
            let mut stall = [0u64; 8];
            let mut covered = base;
            for (k, &until) in reasons.iter().enumerate() {
                // the cycles from what is covered to `until` (none when it is covered already), without a branch
                let u = until.min(t);
                stall[k] = u.saturating_sub(covered);
                covered = covered.max(u);
            }
            stall[7] = t.saturating_sub(covered);
            let stalls = Stalls {
                vmcnt: stall[0],
                lgkmcnt: stall[1],
                barrier: stall[2],
                dependency: stall[3],
                unit_busy: stall[4],
                fetch: stall[5],
                sleep: stall[6],
                arbitration: stall[7],
            };
            self.stalls.add(&stalls);
            stalls
        };
        let wave = &mut self.waves[w];
        wave.waits.retire(t);
        wave.next_turn = t + self.cadence;
        wave.hold = 0;
        wave.hold_why = Hold::None;
        // the unit
        let mut done = t + issue;
        match pipe {
            Pipe::Valu => {
                self.simds[s].valu_free = t + issue;
                self.issued.valu += 1;
                self.busy.valu += issue;
            }
            Pipe::Mfma | Pipe::MfmaExclusive => {
                let simd = &mut self.simds[s];
                simd.mfma_free = t + issue;
                simd.valu_free = if pipe == Pipe::Mfma {
                    t + self.cadence
                } else {
                    t + issue
                };
                self.issued.mfma += 1;
                self.busy.mfma += issue;
            }
            Pipe::Salu => {
                self.issued.salu += 1;
                self.busy.salu += issue;
            }
            Pipe::Smem => {
                done = self.scalar_memory(t, cu_index, w, work.expect("a memory instruction's work"));
                self.issued.smem += 1;
                self.busy.smem += issue;
            }
            Pipe::Vmem | Pipe::Flat => {
                done = self.vector_memory(t, cu_index, w, work.expect("a memory instruction's work"), issue);
                self.issued.vmem += 1;
            }
            Pipe::Lds => {
                done = self.lds(t, cu_index, work.expect("a memory instruction's work"));
                self.issued.lds += 1;
            }
            Pipe::Branch | Pipe::Msg => {
                self.issued.branch += 1;
                self.busy.branch += issue;
            }
            Pipe::Internal => self.issued.internal += 1,
        }
        let wave = &mut self.waves[w];
        if let Some(l) = latency.filter(|&l| l > self.cadence) {
            let writes = &self.infos[e.info() as usize].writes;
            if !writes.is_empty() {
                wave.waits.write(t, writes, t + l);
            }
        }
        match wait {
            isa_amdgpu::table::WaitClass::Vm => wave.waits.push_vm(done),
            isa_amdgpu::table::WaitClass::Lgkm => wave.waits.push_lgkm(done),
            isa_amdgpu::table::WaitClass::VmLgkm => {
                wave.waits.push_vm(done);
                wave.waits.push_lgkm(done);
            }
            _ => {}
        }
        // the sequencer
        if let Sequencer::Hold(cycles) = sequencer {
            wave.hold = t + cycles;
            wave.hold_why = Hold::Sleep;
        }
        // the next instruction's fetch: a taken branch refills the instruction buffer; a new line may miss
        if !matches!(sequencer, Sequencer::End) && e.bits & FETCH != 0 {
            let taken = e.bits & TAKEN != 0;
            let next_pc = self.d.launch.code.base + e.next_pc as u64;
            let fetched = self
                .memsys
                .fetch_instruction(t, cu_index as u32, self.places.of(next_pc, None));
            let penalty = fetched.saturating_sub(t + self.m.icache.hit_latency);
            let extra = if taken { self.m.overheads.taken_branch } else { 0 } + penalty;
            if extra > 0 && t + self.cadence + extra > wave.hold {
                wave.hold = t + self.cadence + extra;
                wave.hold_why = Hold::Fetch;
            }
        }
        self.report(t, w, at, e.info(), stalls);
        if matches!(sequencer, Sequencer::Barrier | Sequencer::End) {
            self.arrive(t, w, sequencer);
        }
        Ok(())
    }
    /// The error of a dispatch whose wave reaches grid-wide sync.
    #[cold]
    #[inline(never)]
    pub(super) fn grid_sync_refused(&self) -> EngineError {
        self.fail("ds_gws_* (grid-wide sync) is not modeled; run this dispatch without timing".into())
    }
    /// Reports an issued instruction (the wave's queue entry `at`) to the observer.
    pub(super) fn report(&self, t: u64, w: usize, at: usize, info: u32, stalls: Stalls) {
        if !O::ACTIVE {
            return;
        }
        let i = &self.infos[info as usize];
        let wave = &self.waves[w];
        let e = wave.observed[at];
        let wg = self.slots[wave.slot as usize].as_ref().expect("resident").group.wg;
        let accesses = if O::WANTS_ACCESSES {
            e.acc.get(&wave.acc, &wave.ranges)
        } else {
            Accesses::NONE
        };
        let (dispatch, index) = (self.dispatch, wave.index);
        self.d.observer.event(&Event::Instruction(InstructionEvent {
            dispatch,
            workgroup: wg,
            wave: index,
            pc: e.pc,
            opcode: i.inst.info.opcode,
            unit: i.inst.info.unit,
            exec: e.exec,
            issue: Some(Issue { cycle: t, stalls }),
            memory: i.memory,
            accesses,
        }));
        match i.sequencer {
            Sequencer::Waitcnt(n) => self.d.observer.event(&Event::Waitcnt {
                dispatch,
                workgroup: wg,
                wave: index,
                pc: e.pc,
                vmcnt: n.vmcnt,
                lgkmcnt: n.lgkmcnt,
                expcnt: n.expcnt,
                waited: Some(stalls.vmcnt + stalls.lgkmcnt),
            }),
            Sequencer::Barrier => self.d.observer.event(&Event::BarrierArrive {
                dispatch,
                workgroup: wg,
                wave: index,
                cycle: Some(t),
            }),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `due` gives exactly the bounds at or before the cycle, however the slots hold them.
    #[test]
    fn due_bounds_are_those_at_or_before_the_cycle() {
        // around the cycle, far from it, and empty slots, in every slot position
        let values = [0, 1, 99, 100, 101, 1 << 40, NEVER - 1, NEVER];
        for t in [0, 1, 100, (1 << 40) - 1, 1 << 40, NEVER - 2] {
            for shift in 0..MAX_WAVES {
                let lbs: [u64; MAX_WAVES] = std::array::from_fn(|j| values[(j + shift) % values.len()]);
                let want = (0..MAX_WAVES).fold(0u32, |m, j| m | ((lbs[j] <= t) as u32) << j);
                assert_eq!(due(&lbs, t), want, "bounds {lbs:?} at cycle {t}");
            }
        }
    }
}
