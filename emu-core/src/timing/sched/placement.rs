//! Placement and occupancy: workgroups onto XCDs, shader engines and CUs with room, their waves onto SIMDs, the
//! resources going back when waves end, and the occupancy a dispatch reached.

use super::*;

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    pub(super) fn occupancy(&self, cycles: u64) -> Occupancy {
        let c = &self.m.core;
        let per_wg = self.d.launch.shape.waves_in([0; 3], self.d.device.wave_size).max(1);
        let mut limits = vec![("waves", c.waves_per_simd)];
        if let Some(n) = c.vgprs_per_lane.checked_div(self.wave_vgprs) {
            limits.push(("vgprs", n));
        }
        if let Some(n) = c.sgprs_per_simd.checked_div(self.wave_sgprs) {
            limits.push(("sgprs", n));
        }
        let simds = c.simds_per_cu;
        if let Some(groups) = (self.m.lds.bytes as u32).checked_div(self.group_lds) {
            limits.push(("lds", (groups * per_wg).div_ceil(simds)));
        }
        if per_wg > 1 {
            limits.push(("workgroups", (c.workgroups_per_cu * per_wg).div_ceil(simds)));
        }
        let (by, limit) = limits.iter().copied().min_by_key(|l| l.1).expect("slots");
        let slots = (c.waves_per_simd * simds) as f64;
        let mean = if cycles == 0 {
            0.0
        } else {
            self.wave_cycles as f64 / cycles as f64 / self.cus.len() as f64
        };
        Occupancy {
            max_waves_per_simd: c.waves_per_simd,
            limit_waves_per_simd: limit.min(c.waves_per_simd),
            limited_by: by.to_string(),
            mean_waves_per_cu: mean,
            achieved: mean / slots,
        }
    }
    // ---- placement --------------------------------------------------------------------------------------

    /// The SIMD of each of `n` waves (into `plan`) if a workgroup of them fits on CU `cu` (assumed empty when
    /// `empty`): each wave goes to the SIMD with the fewest waves that has room for it.
    pub(super) fn fit(&self, cu: usize, n: u32, empty: bool, plan: &mut Vec<u32>) -> bool {
        let c = &self.m.core;
        let per = (c.simds_per_cu as usize).min(8);
        let unit = &self.cus[cu];
        let (lds, multi) = if empty { (0, 0) } else { (unit.lds, unit.multi_groups) };
        if lds + self.group_lds > self.m.lds.bytes as u32 || (n > 1 && multi >= c.workgroups_per_cu) {
            return false;
        }
        let mut have = [(0u32, 0u32, 0u32); 8];
        if !empty {
            for (k, h) in have.iter_mut().enumerate().take(per) {
                let s = &self.simds[cu * per + k];
                *h = (s.len as u32, s.vgprs, s.sgprs);
            }
        }
        let slots = c.waves_per_simd.min(MAX_WAVES as u32);
        plan.clear();
        for _ in 0..n {
            let Some(k) = (0..per)
                .filter(|&k| {
                    let (w, v, s) = have[k];
                    w < slots && v + self.wave_vgprs <= c.vgprs_per_lane && s + self.wave_sgprs <= c.sgprs_per_simd
                })
                .min_by_key(|&k| (have[k].0, k))
            else {
                return false;
            };
            have[k].0 += 1;
            have[k].1 += self.wave_vgprs;
            have[k].2 += self.wave_sgprs;
            plan.push((cu * per + k) as u32);
        }
        true
    }

    /// Places the workgroups of XCD `xcd` that fit, in order, from cycle `t`.
    pub(super) fn place(&mut self, t: u64, xcd: u32) -> Result<(), EngineError> {
        let topo = &self.m.topology;
        let (ses, per_xcd) = (topo.ses_per_xcd, topo.cus_per_xcd);
        loop {
            let linear = self.xcd_next[xcd as usize];
            if linear >= self.workgroups {
                return Ok(());
            }
            let wg = self.d.launch.shape.workgroup_id(linear);
            let n = self.d.launch.shape.waves_in(wg, self.d.device.wave_size);
            let mut found = None;
            let mut plan = std::mem::take(&mut self.plan);
            'search: for k in 0..ses {
                let se = (self.se_next[xcd as usize] + k) % ses;
                let mut best: Option<(u32, usize)> = None;
                for i in (se..per_xcd).step_by(ses as usize) {
                    let cu = (xcd * per_xcd + i) as usize;
                    if best.is_some_and(|b| b.0 <= self.cus[cu].waves) {
                        continue;
                    }
                    if self.fit(cu, n, false, &mut plan) {
                        best = Some((self.cus[cu].waves, cu));
                    }
                }
                if let Some((_, cu)) = best {
                    self.fit(cu, n, false, &mut plan);
                    found = Some((se, cu));
                    break 'search;
                }
            }
            let Some((se, cu)) = found else {
                self.plan = plan;
                return Ok(());
            };
            self.se_next[xcd as usize] = (se + 1) % ses;
            let e = (xcd * ses + se) as usize;
            let at = t.max(self.se_free[e]);
            self.se_free[e] = at + self.m.overheads.workgroup_dispatch;
            self.xcd_next[xcd as usize] += topo.xcds as u64;
            let started = self.start_group(at, linear, cu, &plan);
            self.plan = plan;
            started?;
        }
    }
    /// Builds workgroup `linear` and starts its waves on `plan`'s SIMDs of `cu`, placed at cycle `at`.
    pub(super) fn start_group(&mut self, at: u64, linear: u64, cu: usize, plan: &[u32]) -> Result<(), EngineError> {
        let mut group = self.d.group_registers_later(&self.template, linear, self.clock)?;
        let wg = group.wg;
        if let Some(p) = &self.progress {
            p.resident(group.waves.len() as u64);
        }
        let multi = plan.len() > 1;
        let slot_index = match self.free_slots.pop() {
            Some(i) => i,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let start = at + self.m.overheads.wave_launch;
        let unit = &mut self.cus[cu];
        unit.lds += self.group_lds;
        unit.waves += plan.len() as u32;
        unit.multi_groups += multi as u32;
        let (xcd, se) = (unit.xcd, unit.se);
        let mut ids = Vec::with_capacity(plan.len());
        for (index, &simd) in plan.iter().enumerate() {
            let placement = Placement {
                xcd,
                se,
                cu: cu as u32,
                simd: simd % self.m.core.simds_per_cu,
            };
            // HW_ID names where the model put the wave: its CU within the SE and the lowest free wave slot
            let taken = {
                let s = &self.simds[simd as usize];
                s.resident[..s.len]
                    .iter()
                    .fold(0u32, |m, r| m | 1 << self.waves[r.wave as usize].hw_slot)
            };
            let hw_slot = (!taken).trailing_zeros();
            let at = crate::hwreg::Place {
                xcd,
                se,
                cu: self.m.topology.cu_in_se(cu as u32),
                simd: placement.simd,
                slot: hw_slot,
            };
            self.d.place_wave(&mut group.waves[index], at);
            // the wave's first instructions come through the instruction cache
            let entry = self.d.launch.entry;
            let fetched = self
                .memsys
                .fetch_instruction(start, cu as u32, self.places.of(entry, None));
            let penalty = fetched.saturating_sub(start + self.m.icache.hit_latency);
            let hold_why = if penalty > 0 { Hold::Fetch } else { Hold::None };
            let id = match self.free_waves.pop() {
                Some(i) => {
                    // keep the old wave's buffers
                    let w = &mut self.waves[i as usize];
                    (
                        w.head,
                        w.state,
                        w.hold_why,
                        w.pos,
                        w.len,
                        w.next_work,
                        w.next_turn,
                        w.hold,
                    ) = (
                        Executed::UNKNOWN,
                        State::Active,
                        hold_why,
                        0,
                        0,
                        0,
                        start,
                        start + penalty,
                    );
                    w.waits.clear();
                    w.queue.clear();
                    w.work.clear();
                    w.reqs.clear();
                    w.observed.clear();
                    w.acc.clear();
                    (w.slot, w.index, w.simd, w.vgprs, w.sgprs) =
                        (slot_index, index as u32, simd, self.wave_vgprs, self.wave_sgprs);
                    (w.peek_pc, w.ran_at, w.start, w.placement, w.hw_slot) = (entry, start, start, placement, hw_slot);
                    i
                }
                None => {
                    self.waves.push(Wave {
                        head: Executed::UNKNOWN,
                        head_work: Work::NONE,
                        next_work: 0,
                        state: State::Active,
                        hold_why,
                        pos: 0,
                        len: 0,
                        next_turn: start,
                        hold: start + penalty,
                        waits: WaveWaits::default(),
                        queue: Vec::new(),
                        work: Vec::new(),
                        reqs: Vec::new(),
                        observed: Vec::new(),
                        acc: Vec::new(),
                        ranges: Vec::new(),
                        slot: slot_index,
                        index: index as u32,
                        simd,
                        vgprs: self.wave_vgprs,
                        sgprs: self.wave_sgprs,
                        peek_pc: entry,
                        ran_at: start,
                        start,
                        placement,
                        hw_slot,
                    });
                    (self.waves.len() - 1) as u32
                }
            };
            let s = &mut self.simds[simd as usize];
            s.lbs[s.len] = start + penalty;
            s.resident[s.len] = Resident::new(id);
            s.len += 1;
            s.vgprs += self.wave_vgprs;
            s.sgprs += self.wave_sgprs;
            ids.push(id);
            let first = align_up(start + penalty, s.phase, self.cadence);
            self.schedule(simd as usize, first);
        }
        if O::ACTIVE {
            let p = self.waves[ids[0] as usize].placement;
            self.d.observer.event(&Event::WorkgroupStart {
                dispatch: self.dispatch,
                workgroup: wg,
                waves: plan.len() as u32,
                placement: Some(p),
                cycle: Some(at),
            });
            for (i, id) in ids.iter().enumerate() {
                let placement = Some(self.waves[*id as usize].placement);
                self.d.observer.event(&Event::WaveStart {
                    dispatch: self.dispatch,
                    workgroup: wg,
                    wave: i as u32,
                    placement,
                    cycle: Some(start),
                });
            }
        }
        let live = ids.len() as u32;
        self.slots[slot_index as usize] = Some(Slot {
            group,
            linear,
            waves: ids,
            lds: self.group_lds,
            live,
            at_barrier: 0,
            last_arrival: 0,
            end: 0,
            multi,
        });
        Ok(())
    }
    #[inline(always)]
    pub(super) fn schedule(&mut self, simd: usize, at: u64) {
        let s = &mut self.simds[simd];
        if at < s.scheduled {
            s.scheduled = at;
            self.turns.push(at, simd as u32);
        }
    }
    /// A wave's resources go back at `t` (its `s_endpgm` issued and its memory operations completed); the
    /// workgroup's too once it was the last.
    #[cold]
    #[inline(never)]
    pub(super) fn end_wave(&mut self, t: u64, w: usize) -> Result<(), EngineError> {
        let (slot, simd, start) = (
            self.waves[w].slot as usize,
            self.waves[w].simd as usize,
            self.waves[w].start,
        );
        let s = &mut self.simds[simd];
        let k = s.resident[..s.len]
            .iter()
            .position(|r| r.wave as usize == w)
            .expect("resident on its SIMD");
        s.lbs.copy_within(k + 1..s.len, k);
        s.resident.copy_within(k + 1..s.len, k);
        s.len -= 1;
        s.lbs[s.len] = NEVER;
        s.vgprs -= self.waves[w].vgprs;
        s.sgprs -= self.waves[w].sgprs;
        let cu = s.cu as usize;
        self.cus[cu].waves -= 1;
        self.wave_cycles += (t - start) as u128;
        self.end = self.end.max(t);
        self.free_waves.push(w as u32);
        let sl = self.slots[slot].as_mut().expect("a resident wave's workgroup");
        sl.live -= 1;
        sl.end = sl.end.max(t);
        let (wg, index) = (sl.group.wg, self.waves[w].index);
        let executed = sl.group.waves[index as usize].executed;
        if O::ACTIVE {
            self.d.observer.event(&Event::WaveEnd {
                dispatch: self.dispatch,
                workgroup: wg,
                wave: index,
                instructions: executed,
                cycle: Some(t),
            });
        }
        if sl.live > 0 {
            return Ok(());
        }
        let sl = self.slots[slot].take().expect("checked");
        self.free_slots.push(slot as u32);
        let unit = &mut self.cus[cu];
        unit.lds -= sl.lds;
        unit.multi_groups -= sl.multi as u32;
        let xcd = unit.xcd;
        if let Some(a) = sl.group.scratch {
            let _ = self.d.mem.free(a);
        }
        self.waves_run += sl.group.waves.len() as u64;
        self.instructions += sl.group.waves.iter().map(|w| w.executed).sum::<u64>();
        let (slack, first) = self.d.slack(&sl.group);
        self.slack += slack;
        if let Some(f) = first.filter(|_| self.first_slack.as_ref().is_none_or(|(l, _)| sl.linear < *l)) {
            self.first_slack = Some((sl.linear, f));
        }
        self.groups_done += 1;
        if let Some(p) = &self.progress {
            p.done(sl.group.waves.len() as u64);
        }
        if O::ACTIVE {
            self.d.observer.event(&Event::WorkgroupEnd {
                dispatch: self.dispatch,
                workgroup: wg,
                cycle: Some(t),
            });
        }
        self.place(t, xcd)
    }
}
