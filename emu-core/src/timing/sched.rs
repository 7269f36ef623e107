//! The timing model's dispatch loop: one host thread that owns the model and decides, cycle by modeled
//! cycle, which wave issues what; the engines execute what it picks.
//!
//! **Placement.** A dispatcher places workgroups in order, XCD by XCD round-robin (workgroup `i` goes to XCD
//! `i mod xcds`, as the command processor deals them on MI300X), on a shader engine of that XCD chosen
//! round-robin and a CU of that engine with room (fewest resident waves first): wave slots, the unified
//! VGPR/AGPR file and the SGPR file of each SIMD, the CU's LDS, and its barrier resources. A workgroup that
//! does not fit waits for one of its XCD to retire. Each engine places one workgroup per
//! `overheads.workgroup_dispatch` cycles; waves start `overheads.wave_launch` cycles after placement, the first
//! workgroup `overheads.kernel_launch` cycles after the dispatch began.
//!
//! **Issue.** Each CU has 4 SIMDs; SIMD `k` gets an issue turn every `core.issue_cadence` cycles (on cycles
//! ≡ k mod 4). In its turn a SIMD issues at most one instruction per [`Category`] (VALU/matrix, SALU/SMEM,
//! VMEM, LDS, branch/message), each from a different wave, oldest wave first; a wave issues in order, at most
//! one instruction per turn. An instruction issues when its wave is not held (barrier, `s_nop`/`s_sleep`,
//! instruction-buffer refill after a taken branch or an instruction-cache miss), its `s_waitcnt` counts
//! allow (completion cycles of the wave's vector memory and LDS/scalar operations), its source registers are
//! computed (latencies of the timing table) and its unit is free (VALU and matrix core per SIMD, the texture
//! address unit and the LDS per CU). Memory instructions take their lanes' addresses to the memory pipeline
//! ([`super::memory`]) or the LDS bank model ([`super::lds`]) at issue, which gives their completion cycles.
//!
//! **Functional execution.** Each wave has a queue of instructions the engine has executed but the model
//! has not issued yet (with their lanes' accesses). When the model issues the head of a wave whose queue is
//! empty (known beforehand from the decoded instruction at the wave's PC), it runs the wave's next block on
//! the [`WaveRunner`] (one block of compiled code on the JIT, one instruction on the interpreter), which
//! fills the queue. So a wave's effects on memory happen when its block starts issuing: functional
//! execution runs ahead of modeled time by at most one block. Instructions that read a clock start a block,
//! and the wave's clock is set to the modeled issue cycle before it runs.
//!
//! **Time.** Events are processed in cycle order (a SIMD's next turn is the earliest cycle one of its waves
//! can issue, so idle cycles are skipped), on one thread, in a fixed order: the cycles do not depend on the
//! host's thread count or on the engine, and results are those of a functional dispatch of a race-free
//! kernel.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Mutex;

use isa_amdgpu::table::FlowControl;
use isa_amdgpu::Inst;

use super::cache::{coalesce, LineUse};
use super::inst::{Pipe, TimingTable};
use super::issue::{InstInfo, Sequencer, WaveWaits};
use super::lds::bank_cycles;
use super::machine::Machine;
use super::memory::{Kind, LineRequest, MemorySystem};
use super::stats::{Occupancy, PerUnit, TimingStats};
use crate::device::DevicePreset;
use crate::dispatch::DispatchContext;
use crate::engine::{self, EngineError, Group, Launch, Limits, RunStats, WaveRun, WaveRunner};
use crate::memory::DeviceMemory;
use crate::observe::{classify, next_dispatch_id, Dir, Event, InstEvent, InstructionEvent, Issue, LaneAccess, Observer, Placement, Space, Stalls};
use crate::wave::{WaveClock, WaveStatus};

/// Runs `launch` in the timing model: the results of a functional dispatch, its modeled cycles and the model's
/// statistics.
pub fn run_timed<'a, R: WaveRunner, O: Observer>(
    mem: &'a DeviceMemory,
    device: &'a DevicePreset,
    launch: &'a Launch<'a>,
    limits: Limits,
    runner: &'a R,
    observer: &'a O,
) -> Result<(RunStats, TimingStats), EngineError> {
    engine::check_launch(device, launch)?;
    let fail = |what: String| EngineError::Timing { kernel: launch.name.to_string(), what };
    if launch.cooperative && launch.code.grid_sync {
        return Err(fail("grid-wide sync (ds_gws_barrier) is not modeled; run this dispatch without timing".into()));
    }
    let machine = Machine::by_preset(device.id).ok_or_else(|| fail(format!("no machine description for device {}", device.id)))?;
    let mut model = Model::new(mem, device, launch, limits, runner, observer, machine)?;
    let result = model.run();
    model.release_all();
    result
}

/// Why a wave's issue is held back, besides its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    None,
    Barrier,
    Fetch,
    Sleep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Active,
    AtBarrier,
    Done,
}

/// An instruction the engine executed and the model has not issued yet.
#[derive(Debug, Clone, Copy)]
struct Executed {
    pc: u64,
    exec: u64,
    /// Index into [`Model::infos`].
    info: u32,
    /// Its lane accesses: `acc[start..start + len]` of the wave.
    acc_start: u32,
    acc_len: u32,
    /// The PC the wave went on at.
    next_pc: u64,
}

/// A resident wave's timing state.
struct Wave {
    slot: u32,
    index: u32,
    simd: u32,
    vgprs: u32,
    sgprs: u32,
    state: State,
    queue: VecDeque<Executed>,
    acc: Vec<LaneAccess>,
    waits: WaveWaits,
    /// The wave's next issue turn.
    next_turn: u64,
    hold: u64,
    hold_why: Hold,
    /// Instruction-cache line of the wave's next instruction.
    line: u64,
    /// The PC the engine continues at (where the queue ends), and the info of its instruction once known
    /// (`u32::MAX`: not looked up yet).
    peek_pc: u64,
    peek: u32,
    start: u64,
    placement: Placement,
}

/// A resident workgroup.
struct Slot {
    group: Group,
    waves: Vec<u32>,
    lds: u32,
    live: u32,
    at_barrier: u32,
    last_arrival: u64,
    end: u64,
    multi: bool,
}

struct Cu {
    xcd: u32,
    se: u32,
    waves: u32,
    multi_groups: u32,
    lds: u32,
    /// The texture address unit (vector memory) and the LDS are free from these cycles.
    vmem_free: u64,
    lds_free: u64,
}

struct Simd {
    cu: u32,
    /// Turns come on cycles ≡ phase (mod cadence).
    phase: u64,
    /// Resident waves, oldest first.
    waves: Vec<u32>,
    vgprs: u32,
    sgprs: u32,
    valu_free: u64,
    mfma_free: u64,
    /// The cycle of this SIMD's live entry in the turn heap (`u64::MAX`: none).
    scheduled: u64,
}

/// What the engine reports while running a block, kept for the model.
#[derive(Default)]
struct Log {
    entries: Vec<(u64, u64, Inst, u32, u32)>,
    acc: Vec<LaneAccess>,
    buf: Vec<LaneAccess>,
}

/// The observer the model runs blocks with: it records each executed instruction and its lane accesses.
struct Recorder(Mutex<Log>);

impl Observer for Recorder {
    const WANTS_ACCESSES: bool = true;
    fn instruction(&self, ev: &InstEvent<'_>) {
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Log { entries, acc, buf } = &mut *log;
        let a = classify(ev.inst, ev.accesses, buf);
        let start = acc.len() as u32;
        acc.extend_from_slice(a);
        entries.push((ev.pc, ev.exec, *ev.inst, start, a.len() as u32));
    }
}

/// The constraints on a wave's head instruction at one cycle.
#[derive(Debug, Clone, Copy, Default)]
struct Constraints {
    vm: u64,
    lgkm: u64,
    dependency: u64,
    unit: u64,
}

impl Constraints {
    fn ready(&self) -> u64 {
        self.vm.max(self.lgkm).max(self.dependency).max(self.unit)
    }
}

struct Model<'a, R: WaveRunner, O: Observer> {
    mem: &'a DeviceMemory,
    device: &'a DevicePreset,
    launch: &'a Launch<'a>,
    cx: DispatchContext<'a>,
    runner: &'a R,
    observer: &'a O,
    block_limits: Limits,
    m: &'static Machine,
    table: &'static TimingTable,
    memsys: MemorySystem,
    /// Addresses go to the memory pipeline counted from the start of device memory, so the cycles do not
    /// depend on where the host mapped it.
    origin: u64,
    dispatch: u64,
    clock: WaveClock,
    cadence: u64,
    infos: Vec<InstInfo>,
    /// Per dword of the code: index into `infos` + 1 (0: not seen yet).
    info_at: Vec<u32>,
    cus: Vec<Cu>,
    simds: Vec<Simd>,
    slots: Vec<Option<Slot>>,
    free_slots: Vec<u32>,
    waves: Vec<Wave>,
    free_waves: Vec<u32>,
    turns: BinaryHeap<Reverse<(u64, u32)>>,
    retire: BinaryHeap<Reverse<(u64, u32)>>,
    /// Per XCD: the next workgroup (linear index) it places, and its next shader engine.
    xcd_next: Vec<u64>,
    se_next: Vec<u32>,
    /// Per shader engine (XCD-major): when its dispatcher can place the next workgroup.
    se_free: Vec<u64>,
    workgroups: u64,
    groups_done: u64,
    recorder: Recorder,
    lines: Vec<LineUse>,
    reqs: Vec<LineRequest>,
    // what the dispatch needs per workgroup and wave
    wave_vgprs: u32,
    wave_sgprs: u32,
    group_lds: u32,
    // statistics
    end: u64,
    wave_cycles: u128,
    waves_run: u64,
    instructions: u64,
    issued: PerUnit,
    busy: PerUnit,
    stalls: Stalls,
    lds_conflicts: u64,
}

fn align_up(t: u64, phase: u64, cadence: u64) -> u64 {
    t + (phase + cadence - t % cadence) % cadence
}

fn round_up(x: u32, granule: u32) -> u32 {
    x.div_ceil(granule.max(1)) * granule.max(1)
}

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    fn new(mem: &'a DeviceMemory, device: &'a DevicePreset, launch: &'a Launch<'a>, limits: Limits, runner: &'a R, observer: &'a O, m: &'static Machine) -> Result<Self, EngineError> {
        let topo = &m.topology;
        let cus: Vec<Cu> = (0..topo.cus())
            .map(|cu| Cu { xcd: topo.xcd_of(cu), se: topo.se_of(cu), waves: 0, multi_groups: 0, lds: 0, vmem_free: 0, lds_free: 0 })
            .collect();
        let per = m.core.simds_per_cu;
        let simds = (0..topo.cus() * per)
            .map(|s| Simd { cu: s / per, phase: (s % per) as u64, waves: Vec::new(), vgprs: 0, sgprs: 0, valu_free: 0, mfma_free: 0, scheduled: u64::MAX })
            .collect();
        let kd = launch.descriptor;
        let dispatch = next_dispatch_id();
        let code_words = launch.code.size.div_ceil(4) as usize;
        Ok(Model {
            mem,
            device,
            launch,
            cx: engine::dispatch_context(device, launch),
            runner,
            observer,
            block_limits: Limits { slice: Some(1), threads: Some(1), timing: false, ..limits },
            m,
            table: TimingTable::of(device.target),
            memsys: MemorySystem::new(m),
            origin: mem.base(),
            dispatch,
            clock: WaveClock { base: engine::clock_base(), per_instruction: 0, shader_mhz: m.clocks.shader_mhz },
            cadence: m.core.issue_cadence.max(1) as u64,
            infos: Vec::new(),
            info_at: vec![0; code_words],
            cus,
            simds,
            slots: Vec::new(),
            free_slots: Vec::new(),
            waves: Vec::new(),
            free_waves: Vec::new(),
            turns: BinaryHeap::new(),
            retire: BinaryHeap::new(),
            xcd_next: (0..topo.xcds as u64).collect(),
            se_next: vec![0; topo.xcds as usize],
            se_free: vec![0; (topo.xcds * topo.ses_per_xcd) as usize],
            workgroups: launch.shape.workgroup_count(),
            groups_done: 0,
            recorder: Recorder(Mutex::new(Log::default())),
            lines: Vec::with_capacity(128),
            reqs: Vec::with_capacity(128),
            wave_vgprs: round_up(kd.vgpr_alloc_count(), m.core.vgpr_granule),
            wave_sgprs: round_up(kd.sgpr_alloc_count().unwrap_or(0), m.core.sgpr_granule),
            group_lds: round_up(launch.group_segment_size, m.core.lds_granule),
            end: 0,
            wave_cycles: 0,
            waves_run: 0,
            instructions: 0,
            issued: PerUnit::default(),
            busy: PerUnit::default(),
            stalls: Stalls::default(),
            lds_conflicts: 0,
        })
    }

    fn fail(&self, what: String) -> EngineError {
        EngineError::Timing { kernel: self.launch.name.to_string(), what }
    }

    fn run(&mut self) -> Result<(RunStats, TimingStats), EngineError> {
        if O::ACTIVE {
            self.observer.event(&engine::dispatch_begin(self.dispatch, self.device, self.launch, true));
        }
        // the largest workgroup must fit on an empty CU
        let full = self.launch.shape.waves_in([0; 3], self.device.wave_size);
        if self.fit(0, full, true).is_none() {
            return Err(self.fail(format!(
                "a workgroup of {full} waves ({} VGPRs, {} SGPRs per wave, {} bytes of LDS) does not fit on a CU",
                self.wave_vgprs, self.wave_sgprs, self.group_lds
            )));
        }
        let t0 = self.m.overheads.kernel_launch;
        for x in 0..self.m.topology.xcds {
            self.place(t0, x)?;
        }
        loop {
            let turn = self.turns.peek().map(|r| r.0);
            let ret = self.retire.peek().map(|r| r.0);
            match (ret, turn) {
                (Some((tr, w)), t) if t.is_none_or(|(ts, _)| tr <= ts) => {
                    self.retire.pop();
                    self.end_wave(tr, w as usize)?;
                }
                (_, Some((ts, s))) => {
                    self.turns.pop();
                    if self.simds[s as usize].scheduled != ts {
                        continue;
                    }
                    self.simds[s as usize].scheduled = u64::MAX;
                    self.turn(ts, s as usize)?;
                }
                _ => break,
            }
        }
        if self.groups_done < self.workgroups {
            let waiting = self.waves.iter().filter(|w| w.state == State::AtBarrier).count();
            return Err(self.fail(format!("{} of {} workgroups never finished: {waiting} wave(s) wait at s_barrier for waves that cannot arrive", self.workgroups - self.groups_done, self.workgroups)));
        }
        let cycles = self.end;
        engine::advance_clock(self.clock.base + cycles);
        let stats = RunStats { workgroups: self.workgroups, waves: self.waves_run, wave_instructions: self.instructions, cycles: Some(cycles) };
        if O::ACTIVE {
            let RunStats { workgroups, waves, wave_instructions, .. } = stats;
            self.observer.event(&Event::DispatchEnd { dispatch: self.dispatch, workgroups, waves, wave_instructions, cycles: Some(cycles) });
        }
        let timing = TimingStats {
            device: self.device.id.to_string(),
            shader_mhz: self.m.clocks.shader_mhz,
            cycles,
            ns: cycles as f64 * 1000.0 / self.m.clocks.shader_mhz as f64,
            workgroups: self.workgroups,
            waves: self.waves_run,
            wave_instructions: self.instructions,
            occupancy: self.occupancy(cycles),
            issued: self.issued,
            busy: self.busy,
            stalls: self.stalls,
            memory: self.memsys.stats(),
            lds_bank_conflict_cycles: self.lds_conflicts,
        };
        Ok((stats, timing))
    }

    /// Frees the private memory of workgroups still resident (after a fault).
    fn release_all(&mut self) {
        for s in self.slots.iter_mut().filter_map(Option::take) {
            if let Some(a) = s.group.scratch {
                let _ = self.mem.free(a);
            }
        }
    }

    fn occupancy(&self, cycles: u64) -> Occupancy {
        let c = &self.m.core;
        let per_wg = self.launch.shape.waves_in([0; 3], self.device.wave_size).max(1);
        let mut limits = vec![("waves", c.waves_per_simd)];
        if self.wave_vgprs > 0 {
            limits.push(("vgprs", c.vgprs_per_lane / self.wave_vgprs));
        }
        if self.wave_sgprs > 0 {
            limits.push(("sgprs", c.sgprs_per_simd / self.wave_sgprs));
        }
        let simds = c.simds_per_cu;
        if self.group_lds > 0 {
            let groups = (self.m.lds.bytes as u32) / self.group_lds;
            limits.push(("lds", (groups * per_wg).div_ceil(simds)));
        }
        if per_wg > 1 {
            limits.push(("workgroups", (c.workgroups_per_cu * per_wg).div_ceil(simds)));
        }
        let (by, limit) = limits.iter().copied().min_by_key(|l| l.1).expect("slots");
        let slots = (c.waves_per_simd * simds) as f64;
        let mean = if cycles == 0 { 0.0 } else { self.wave_cycles as f64 / cycles as f64 / self.cus.len() as f64 };
        Occupancy {
            max_waves_per_simd: c.waves_per_simd,
            limit_waves_per_simd: limit.min(c.waves_per_simd),
            limited_by: by.to_string(),
            mean_waves_per_cu: mean,
            achieved: mean / slots,
        }
    }

    // ---- placement --------------------------------------------------------------------------------------

    /// The SIMD of each of `n` waves if a workgroup of them fits on CU `cu` (assumed empty when `empty`).
    fn fit(&self, cu: usize, n: u32, empty: bool) -> Option<Vec<u32>> {
        let c = &self.m.core;
        let per = c.simds_per_cu as usize;
        let unit = &self.cus[cu];
        let (lds, multi) = if empty { (0, 0) } else { (unit.lds, unit.multi_groups) };
        if lds + self.group_lds > self.m.lds.bytes as u32 || (n > 1 && multi >= c.workgroups_per_cu) {
            return None;
        }
        let mut have: Vec<(u32, u32, u32)> = (0..per)
            .map(|k| {
                let s = &self.simds[cu * per + k];
                if empty {
                    (0, 0, 0)
                } else {
                    (s.waves.len() as u32, s.vgprs, s.sgprs)
                }
            })
            .collect();
        let mut plan = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let k = (0..per)
                .filter(|&k| {
                    let (w, v, s) = have[k];
                    w < c.waves_per_simd && v + self.wave_vgprs <= c.vgprs_per_lane && s + self.wave_sgprs <= c.sgprs_per_simd
                })
                .min_by_key(|&k| (have[k].0, k))?;
            have[k].0 += 1;
            have[k].1 += self.wave_vgprs;
            have[k].2 += self.wave_sgprs;
            plan.push((cu * per + k) as u32);
        }
        Some(plan)
    }

    /// Places the workgroups of XCD `xcd` that fit, in order, from cycle `t`.
    fn place(&mut self, t: u64, xcd: u32) -> Result<(), EngineError> {
        let topo = &self.m.topology;
        let (ses, per_xcd) = (topo.ses_per_xcd, topo.cus_per_xcd);
        loop {
            let linear = self.xcd_next[xcd as usize];
            if linear >= self.workgroups {
                return Ok(());
            }
            let wg = self.launch.shape.workgroup_id(linear);
            let n = self.launch.shape.waves_in(wg, self.device.wave_size);
            let mut found = None;
            'search: for k in 0..ses {
                let se = (self.se_next[xcd as usize] + k) % ses;
                let mut best: Option<(u32, usize, Vec<u32>)> = None;
                for i in (se..per_xcd).step_by(ses as usize) {
                    let cu = (xcd * per_xcd + i) as usize;
                    if best.as_ref().is_some_and(|b| b.0 <= self.cus[cu].waves) {
                        continue;
                    }
                    if let Some(plan) = self.fit(cu, n, false) {
                        best = Some((self.cus[cu].waves, cu, plan));
                    }
                }
                if let Some((_, cu, plan)) = best {
                    found = Some((se, cu, plan));
                    break 'search;
                }
            }
            let Some((se, cu, plan)) = found else { return Ok(()) };
            self.se_next[xcd as usize] = (se + 1) % ses;
            let e = (xcd * ses + se) as usize;
            let at = t.max(self.se_free[e]);
            self.se_free[e] = at + self.m.overheads.workgroup_dispatch;
            self.xcd_next[xcd as usize] += topo.xcds as u64;
            self.start_group(at, linear, cu, &plan)?;
        }
    }

    /// Builds workgroup `linear` and starts its waves on `plan`'s SIMDs of `cu`, placed at cycle `at`.
    fn start_group(&mut self, at: u64, linear: u64, cu: usize, plan: &[u32]) -> Result<(), EngineError> {
        let group = engine::build_group(self.mem, self.device, self.launch, &self.cx, linear, self.clock)?;
        let wg = group.wg;
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
            let placement = Placement { xcd, se, cu: cu as u32, simd: simd % self.m.core.simds_per_cu };
            // the wave's first instructions come through the instruction cache
            let entry = self.launch.entry;
            let fetched = self.memsys.fetch_instruction(start, cu as u32, entry.wrapping_sub(self.origin));
            let penalty = fetched.saturating_sub(start + self.m.icache.hit_latency);
            let w = Wave {
                slot: slot_index,
                index: index as u32,
                simd,
                vgprs: self.wave_vgprs,
                sgprs: self.wave_sgprs,
                state: State::Active,
                queue: VecDeque::new(),
                acc: Vec::new(),
                waits: WaveWaits::default(),
                next_turn: start,
                hold: start + penalty,
                hold_why: if penalty > 0 { Hold::Fetch } else { Hold::None },
                line: entry / self.m.icache.line_bytes as u64,
                peek_pc: entry,
                peek: u32::MAX,
                start,
                placement,
            };
            let id = match self.free_waves.pop() {
                Some(i) => {
                    let mut w = w;
                    // keep the old wave's buffers
                    let old = &mut self.waves[i as usize];
                    std::mem::swap(&mut w.queue, &mut old.queue);
                    std::mem::swap(&mut w.acc, &mut old.acc);
                    w.queue.clear();
                    w.acc.clear();
                    *old = w;
                    i
                }
                None => {
                    self.waves.push(w);
                    (self.waves.len() - 1) as u32
                }
            };
            let s = &mut self.simds[simd as usize];
            s.waves.push(id);
            s.vgprs += self.wave_vgprs;
            s.sgprs += self.wave_sgprs;
            ids.push(id);
            let first = align_up(start + penalty, s.phase, self.cadence);
            self.schedule(simd as usize, first);
        }
        if O::ACTIVE {
            let p = self.waves[ids[0] as usize].placement;
            self.observer.event(&Event::WorkgroupStart { dispatch: self.dispatch, workgroup: wg, waves: plan.len() as u32, placement: Some(p), cycle: Some(at) });
            for (i, id) in ids.iter().enumerate() {
                let placement = Some(self.waves[*id as usize].placement);
                self.observer.event(&Event::WaveStart { dispatch: self.dispatch, workgroup: wg, wave: i as u32, placement, cycle: Some(start) });
            }
        }
        let live = ids.len() as u32;
        self.slots[slot_index as usize] = Some(Slot { group, waves: ids, lds: self.group_lds, live, at_barrier: 0, last_arrival: 0, end: 0, multi });
        Ok(())
    }

    fn schedule(&mut self, simd: usize, at: u64) {
        let s = &mut self.simds[simd];
        if at < s.scheduled {
            s.scheduled = at;
            self.turns.push(Reverse((at, simd as u32)));
        }
    }

    /// A wave's resources go back at `t` (its `s_endpgm` issued and its memory operations completed); the
    /// workgroup's too once it was the last.
    fn end_wave(&mut self, t: u64, w: usize) -> Result<(), EngineError> {
        let (slot, simd, start) = (self.waves[w].slot as usize, self.waves[w].simd as usize, self.waves[w].start);
        let s = &mut self.simds[simd];
        s.waves.retain(|&x| x as usize != w);
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
            self.observer.event(&Event::WaveEnd { dispatch: self.dispatch, workgroup: wg, wave: index, instructions: executed, cycle: Some(t) });
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
            let _ = self.mem.free(a);
        }
        self.waves_run += sl.group.waves.len() as u64;
        self.instructions += sl.group.waves.iter().map(|w| w.executed).sum::<u64>();
        self.groups_done += 1;
        if O::ACTIVE {
            self.observer.event(&Event::WorkgroupEnd { dispatch: self.dispatch, workgroup: wg, cycle: Some(t) });
        }
        self.place(t, xcd)
    }

    // ---- issue ------------------------------------------------------------------------------------------

    /// The info of the instruction at `pc`, decoded through the dispatch's decode cache on first sight.
    fn info_at_pc(&mut self, pc: u64, decoded: Option<&Inst>) -> Result<u32, EngineError> {
        let word = (pc.wrapping_sub(self.launch.code.base) / 4) as usize;
        if let Some(&i) = self.info_at.get(word) {
            if i != 0 {
                return Ok(i - 1);
            }
        }
        let inst = match decoded {
            Some(i) => *i,
            None => self.launch.cache.get(self.mem, self.launch.code, pc).map_err(|error| EngineError::IllegalInstruction {
                kernel: self.launch.name.to_string(),
                workgroup: [0; 3],
                wave: 0,
                pc,
                error,
            })?,
        };
        let info = InstInfo::new(&inst, self.table).ok_or_else(|| self.fail(format!("{} at {pc:#x} has no timing on {}", inst.info.name, self.device.gfx)))?;
        self.infos.push(info);
        let i = (self.infos.len() - 1) as u32;
        if let Some(slot) = self.info_at.get_mut(word) {
            *slot = i + 1;
        }
        Ok(i)
    }

    /// The wave's next instruction to issue: the head of its queue, or the instruction at its PC.
    fn head(&mut self, w: usize) -> Result<u32, EngineError> {
        let wave = &self.waves[w];
        if let Some(e) = wave.queue.front() {
            return Ok(e.info);
        }
        if wave.peek != u32::MAX {
            return Ok(wave.peek);
        }
        let info = self.info_at_pc(wave.peek_pc, None)?;
        self.waves[w].peek = info;
        Ok(info)
    }

    fn constraints(&self, w: usize, info: u32) -> Constraints {
        let wave = &self.waves[w];
        let simd = &self.simds[wave.simd as usize];
        let cu = &self.cus[simd.cu as usize];
        let i = &self.infos[info as usize];
        let mut c = Constraints::default();
        if let Sequencer::Waitcnt(n) = i.sequencer {
            c.vm = wave.waits.vm_ready(n.vmcnt);
            c.lgkm = wave.waits.lgkm_ready(n.lgkmcnt);
        }
        c.dependency = wave.waits.operands_ready(&i.reads);
        c.unit = match i.timing.pipe {
            Pipe::Valu | Pipe::Mfma => simd.valu_free,
            Pipe::MfmaExclusive => simd.valu_free.max(simd.mfma_free),
            // the texture address unit, and room for the instruction's lines among the CU's misses in flight
            // (a wave64 access of `bytes` per lane at unit stride: the lines are known only once it executes)
            Pipe::Vmem | Pipe::Flat => {
                let lines = (64 * i.inst.info.mem.bytes as u32).div_ceil(self.m.l1.line_bytes).max(1);
                cu.vmem_free.max(self.memsys.l1_room_at(0, simd.cu, lines))
            }
            Pipe::Lds => cu.lds_free,
            _ => 0,
        };
        if i.timing.pipe == Pipe::Mfma {
            c.unit = c.unit.max(simd.mfma_free);
        }
        c
    }

    /// SIMD `s`'s issue turn at cycle `t`; schedules its next turn worth taking (the earliest cycle one of its
    /// waves might issue).
    fn turn(&mut self, t: u64, s: usize) -> Result<(), EngineError> {
        let mut used = 0u8;
        let mut next = u64::MAX;
        let mut k = 0;
        while k < self.simds[s].waves.len() {
            let w = self.simds[s].waves[k] as usize;
            k += 1;
            let wave = &self.waves[w];
            if wave.state != State::Active {
                continue;
            }
            let base = wave.next_turn.max(wave.hold);
            let info = self.head(w)?;
            let ready = base.max(self.constraints(w, info).ready());
            if ready > t {
                next = next.min(ready);
                continue;
            }
            let cat = self.infos[info as usize].category;
            if used & cat.bit() != 0 {
                next = next.min(t + 1);
                continue;
            }
            let c = self.constraints(w, info);
            self.issue(t, w, info, c)?;
            used |= cat.bit();
            let wave = &self.waves[w];
            if wave.state == State::Active {
                next = next.min(wave.next_turn.max(wave.hold));
            }
        }
        if next != u64::MAX {
            let phase = self.simds[s].phase;
            self.schedule(s, align_up(next.max(t + 1), phase, self.cadence));
        }
        Ok(())
    }

    /// Runs the wave's next block on the engine at cycle `t`, filling its queue.
    fn run_block(&mut self, t: u64, w: usize) -> Result<(), EngineError> {
        let (slot, index) = (self.waves[w].slot as usize, self.waves[w].index);
        let sl = self.slots[slot].as_mut().expect("resident");
        let Group { wg, waves, lds, .. } = &mut sl.group;
        let wave = &mut waves[index as usize];
        wave.clock = WaveClock { base: self.clock.base + t, ..self.clock };
        let run = WaveRun {
            mem: self.mem,
            code: self.launch.code,
            cx: &self.cx,
            workgroup: *wg,
            wave_index: index,
            wave,
            lds,
            cache: self.launch.cache,
            limits: self.block_limits,
        };
        self.runner.run_wave(run, &self.recorder)?;
        let wg = *wg;
        let (next_pc, gws) = (waves[index as usize].pc, waves[index as usize].gws);
        if gws.is_some() {
            return Err(self.fail(format!("workgroup {wg:?} reached ds_gws_barrier: grid-wide sync is not modeled")));
        }
        let log = std::mem::take(&mut *self.recorder.0.lock().unwrap_or_else(|e| e.into_inner()));
        if log.entries.is_empty() {
            return Err(self.fail(format!("workgroup {wg:?} wave {index}: the engine ran no instruction at {next_pc:#x}")));
        }
        let mut queued = Vec::with_capacity(log.entries.len());
        for (k, (pc, exec, inst, acc_start, acc_len)) in log.entries.iter().enumerate() {
            let info = self.info_at_pc(*pc, Some(inst))?;
            let next = log.entries.get(k + 1).map_or(next_pc, |e| e.0);
            queued.push(Executed { pc: *pc, exec: *exec, info, acc_start: *acc_start, acc_len: *acc_len, next_pc: next });
        }
        let wave = &mut self.waves[w];
        wave.queue.extend(queued);
        (wave.peek_pc, wave.peek) = (next_pc, u32::MAX);
        wave.acc.clear();
        wave.acc.extend_from_slice(&log.acc);
        // hand the log's buffers back for the next block
        let mut back = self.recorder.0.lock().unwrap_or_else(|e| e.into_inner());
        let Log { mut entries, mut acc, buf } = log;
        entries.clear();
        acc.clear();
        *back = Log { entries, acc, buf };
        Ok(())
    }

    /// Issues wave `w`'s head (instruction info `info`) at cycle `t`.
    fn issue(&mut self, t: u64, w: usize, info: u32, c: Constraints) -> Result<(), EngineError> {
        if self.infos[info as usize].sequencer == Sequencer::GridSync {
            return Err(self.fail("ds_gws_* (grid-wide sync) is not modeled; run this dispatch without timing".into()));
        }
        if self.waves[w].queue.is_empty() {
            self.run_block(t, w)?;
        }
        let e = self.waves[w].queue.pop_front().expect("the block filled the queue");
        debug_assert_eq!(e.info, info, "the engine executed the instruction the model peeked");
        let i = self.infos[e.info as usize];
        let wave = &mut self.waves[w];
        let simd_index = wave.simd as usize;
        let cu_index = self.simds[simd_index].cu as usize;
        wave.waits.retire(t);
        // stalls: each cycle from the wave's turn to issue, for the first reason holding it then
        let base = wave.next_turn;
        let held = |why| if wave.hold_why == why { wave.hold } else { 0 };
        let reasons = [c.vm, c.lgkm, held(Hold::Barrier), c.dependency, c.unit, held(Hold::Fetch), held(Hold::Sleep)];
        let mut stall = [0u64; 8];
        let mut covered = base;
        for (k, &until) in reasons.iter().enumerate() {
            let u = until.min(t);
            if u > covered {
                stall[k] = u - covered;
                covered = u;
            }
        }
        stall[7] = t.saturating_sub(covered);
        let stalls = Stalls { vmcnt: stall[0], lgkmcnt: stall[1], barrier: stall[2], dependency: stall[3], unit_busy: stall[4], fetch: stall[5], sleep: stall[6], arbitration: stall[7] };
        self.stalls.add(&stalls);
        wave.next_turn = t + self.cadence;
        wave.hold = 0;
        wave.hold_why = Hold::None;
        // the unit
        let pipe = i.timing.pipe;
        let mut done = t + i.issue;
        match pipe {
            Pipe::Valu => {
                self.simds[simd_index].valu_free = t + i.issue;
                self.issued.valu += 1;
                self.busy.valu += i.issue;
            }
            Pipe::Mfma | Pipe::MfmaExclusive => {
                let simd = &mut self.simds[simd_index];
                simd.mfma_free = t + i.issue;
                simd.valu_free = if pipe == Pipe::Mfma { t + self.cadence } else { t + i.issue };
                self.issued.mfma += 1;
                self.busy.mfma += i.issue;
            }
            Pipe::Salu => {
                self.issued.salu += 1;
                self.busy.salu += i.issue;
            }
            Pipe::Smem => {
                done = self.scalar_memory(t, cu_index, w, &e);
                self.issued.smem += 1;
                self.busy.smem += i.issue;
            }
            Pipe::Vmem | Pipe::Flat => {
                done = self.vector_memory(t, cu_index, w, &e, &i);
                self.issued.vmem += 1;
            }
            Pipe::Lds => {
                done = self.lds(t, cu_index, w, &e, &i);
                self.issued.lds += 1;
            }
            Pipe::Branch | Pipe::Msg => {
                self.issued.branch += 1;
                self.busy.branch += i.issue;
            }
            Pipe::Internal => self.issued.internal += 1,
        }
        let wave = &mut self.waves[w];
        match i.latency {
            Some(l) if l > self.cadence && !i.writes.is_empty() => wave.waits.write(t, &i.writes, t + l),
            _ => {}
        }
        match i.wait {
            isa_amdgpu::table::WaitClass::Vm => wave.waits.push_vm(done),
            isa_amdgpu::table::WaitClass::Lgkm => wave.waits.push_lgkm(done),
            isa_amdgpu::table::WaitClass::VmLgkm => {
                wave.waits.push_vm(done);
                wave.waits.push_lgkm(done);
            }
            _ => {}
        }
        // the sequencer
        match i.sequencer {
            Sequencer::Hold(cycles) => {
                wave.hold = t + cycles;
                wave.hold_why = Hold::Sleep;
            }
            _ => {}
        }
        // the next instruction's fetch: a taken branch refills the instruction buffer; a new line may miss
        let size = i.inst.size() as u64;
        if !matches!(i.sequencer, Sequencer::End) {
            let taken = i.inst.info.flow != FlowControl::Next && e.next_pc != e.pc + size;
            let line = e.next_pc / self.m.icache.line_bytes as u64;
            if taken || line != wave.line {
                wave.line = line;
                let fetched = self.memsys.fetch_instruction(t, cu_index as u32, e.next_pc.wrapping_sub(self.origin));
                let penalty = fetched.saturating_sub(t + self.m.icache.hit_latency);
                let extra = if taken { self.m.overheads.taken_branch } else { 0 } + penalty;
                let wave = &mut self.waves[w];
                if extra > 0 && t + self.cadence + extra > wave.hold {
                    wave.hold = t + self.cadence + extra;
                    wave.hold_why = Hold::Fetch;
                }
            }
        }
        self.report(t, w, &e, &i, stalls);
        match i.sequencer {
            Sequencer::Barrier => {
                self.waves[w].state = State::AtBarrier;
                let slot = self.waves[w].slot as usize;
                let sl = self.slots[slot].as_mut().expect("resident");
                sl.at_barrier += 1;
                sl.last_arrival = sl.last_arrival.max(t);
                self.release_barrier(slot);
            }
            Sequencer::End => {
                let wave = &mut self.waves[w];
                wave.state = State::Done;
                let end = (t + 1).max(wave.waits.all_done());
                let slot = wave.slot as usize;
                self.retire.push(Reverse((end, w as u32)));
                self.release_barrier(slot);
            }
            _ => {}
        }
        Ok(())
    }

    /// Reports an issued instruction to the observer.
    fn report(&self, t: u64, w: usize, e: &Executed, i: &InstInfo, stalls: Stalls) {
        if !O::ACTIVE {
            return;
        }
        let wave = &self.waves[w];
        let wg = self.slots[wave.slot as usize].as_ref().expect("resident").group.wg;
        let accesses: &[LaneAccess] = if O::WANTS_ACCESSES { &wave.acc[e.acc_start as usize..(e.acc_start + e.acc_len) as usize] } else { &[] };
        let (dispatch, index) = (self.dispatch, wave.index);
        self.observer.event(&Event::Instruction(InstructionEvent {
            dispatch,
            workgroup: wg,
            wave: index,
            pc: e.pc,
            opcode: i.inst.info.opcode,
            unit: i.inst.info.unit,
            exec: e.exec,
            issue: Some(Issue { cycle: t, stalls }),
            memory: i.memory,
            accesses: Cow::Borrowed(accesses),
        }));
        match i.sequencer {
            Sequencer::Waitcnt(n) => self.observer.event(&Event::Waitcnt {
                dispatch,
                workgroup: wg,
                wave: index,
                pc: e.pc,
                vmcnt: n.vmcnt,
                lgkmcnt: n.lgkmcnt,
                expcnt: n.expcnt,
                waited: Some(stalls.vmcnt + stalls.lgkmcnt),
            }),
            Sequencer::Barrier => self.observer.event(&Event::BarrierArrive { dispatch, workgroup: wg, wave: index, cycle: Some(t) }),
            _ => {}
        }
    }

    /// Releases the workgroup in `slot` from `s_barrier` when every wave that has not ended waits there.
    fn release_barrier(&mut self, slot: usize) {
        let sl = self.slots[slot].as_mut().expect("resident");
        let not_done = sl.waves.iter().filter(|&&x| self.waves[x as usize].state != State::Done).count() as u32;
        if sl.at_barrier == 0 || sl.at_barrier < not_done {
            return;
        }
        let release = sl.last_arrival + self.m.overheads.barrier_release;
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
            let (simd, index) = (wave.simd as usize, wave.index as usize);
            let functional = &mut self.slots[slot].as_mut().expect("resident").group.waves[index];
            if functional.status == WaveStatus::AtBarrier {
                functional.status = WaveStatus::Running;
            }
            let at = align_up(release, self.simds[simd].phase, self.cadence);
            self.schedule(simd, at);
        }
        if O::ACTIVE {
            self.observer.event(&Event::BarrierRelease { dispatch: self.dispatch, workgroup: wg, cycle: Some(release) });
        }
    }

    /// A scalar memory instruction's trip through the scalar cache; its completion cycle.
    fn scalar_memory(&mut self, t: u64, cu: usize, w: usize, e: &Executed) -> u64 {
        let acc = &self.waves[w].acc[e.acc_start as usize..(e.acc_start + e.acc_len) as usize];
        let line = self.m.scalar.line_bytes as u64;
        self.reqs.clear();
        for a in acc {
            let start = a.address.wrapping_sub(self.origin);
            let end = start + a.bytes as u64;
            let mut l = start & !(line - 1);
            while l < end {
                let bytes = (end.min(l + line) - start.max(l)) as u32;
                let kind = if a.dir == Dir::Read { Kind::Read } else { Kind::Write };
                self.reqs.push(LineRequest { addr: l, bytes, kind });
                l += line;
            }
        }
        if self.reqs.is_empty() {
            // s_memtime, s_memrealtime, cache control: the scalar unit answers like a cache hit
            return t + self.m.scalar.hit_latency;
        }
        self.memsys.access_scalar(t, cu as u32, &self.reqs).complete_at
    }

    /// A vector memory instruction: addresses through the texture address unit, device-memory lanes
    /// coalesced into L1 lines for the memory pipeline, FLAT lanes in the shared aperture to the LDS; its
    /// completion cycle.
    fn vector_memory(&mut self, t: u64, cu: usize, w: usize, e: &Executed, i: &InstInfo) -> u64 {
        let sent = t + i.issue;
        self.busy.vmem += i.issue;
        let mut done = sent;
        let mut accepted = sent;
        let line = self.m.l1.line_bytes;
        let acc = std::mem::take(&mut self.waves[w].acc);
        let lanes = &acc[e.acc_start as usize..(e.acc_start + e.acc_len) as usize];
        let mut rounds = Rounds::default();
        rounds.fill(lanes, self.origin, |a| a.space != Space::Lds);
        self.reqs.clear();
        for r in 0..rounds.n {
            let bytes = rounds.bytes[r].clamp(1, line);
            coalesce(&rounds.addrs[r], rounds.exec[r], bytes, line, &mut self.lines);
            let kind = match rounds.dir[r] {
                Dir::Read => Kind::Read,
                Dir::Write => Kind::Write,
                Dir::Atomic => Kind::Atomic,
            };
            self.reqs.extend(self.lines.iter().map(|l| LineRequest { addr: l.line, bytes: l.bytes, kind }));
        }
        if !self.reqs.is_empty() {
            let r = self.memsys.access(sent, cu as u32, &self.reqs);
            done = done.max(r.complete_at);
            accepted = accepted.max(r.accepted_at);
        }
        let mut shared = Rounds::default();
        shared.fill(lanes, 0, |a| a.space == Space::Lds);
        self.waves[w].acc = acc;
        if shared.n > 0 {
            done = done.max(self.lds_banks(t, cu, &shared));
        }
        let unit = &mut self.cus[cu];
        unit.vmem_free = unit.vmem_free.max(accepted).max(t + i.issue);
        done
    }

    /// A DS instruction: its lanes' bank conflicts on the CU's LDS; its completion cycle.
    fn lds(&mut self, t: u64, cu: usize, w: usize, e: &Executed, _i: &InstInfo) -> u64 {
        let acc = std::mem::take(&mut self.waves[w].acc);
        let lanes = &acc[e.acc_start as usize..(e.acc_start + e.acc_len) as usize];
        let mut rounds = Rounds::default();
        rounds.fill(lanes, 0, |_| true);
        self.waves[w].acc = acc;
        if rounds.n > 0 {
            return self.lds_banks(t, cu, &rounds);
        }
        {
            // lane permutes and swizzles pass through the LDS crossbar without touching banks
            let unit = &mut self.cus[cu];
            let cycles = 2;
            unit.lds_free = unit.lds_free.max(t + cycles);
            self.busy.lds += cycles;
            t + self.m.lds.latency + cycles
        }
    }

    /// LDS bank cycles of the lanes' accesses from cycle `t`; the completion cycle.
    fn lds_banks(&mut self, t: u64, cu: usize, rounds: &Rounds) -> u64 {
        let mut cycles = 0u64;
        for r in 0..rounds.n {
            let addrs: [u32; 64] = std::array::from_fn(|l| rounds.addrs[r][l] as u32);
            let b = bank_cycles(&addrs, rounds.exec[r], rounds.bytes[r].max(1), rounds.dir[r] == Dir::Read);
            cycles += b.cycles as u64;
            self.lds_conflicts += b.conflict_cycles as u64;
        }
        let cycles = cycles.max(1);
        let unit = &mut self.cus[cu];
        let start = t.max(unit.lds_free);
        unit.lds_free = start + cycles;
        self.busy.lds += cycles;
        start + self.m.lds.latency + cycles
    }
}

/// A memory instruction's lane accesses split into rounds of at most one access per lane (two-address DS
/// forms make two rounds).
struct Rounds {
    n: usize,
    addrs: [[u64; 64]; 4],
    exec: [u64; 4],
    bytes: [u32; 4],
    dir: [Dir; 4],
}

impl Default for Rounds {
    fn default() -> Self {
        Rounds { n: 0, addrs: [[0; 64]; 4], exec: [0; 4], bytes: [0; 4], dir: [Dir::Read; 4] }
    }
}

impl Rounds {
    /// The accesses of `lanes` that `want` keeps, addresses counted from `origin`.
    fn fill(&mut self, lanes: &[LaneAccess], origin: u64, want: impl Fn(&LaneAccess) -> bool) {
        let mut seen = [0u8; 64];
        for a in lanes.iter().filter(|a| want(a)) {
            let l = (a.lane & 63) as usize;
            let r = (seen[l] as usize).min(3);
            seen[l] += 1;
            self.addrs[r][l] = a.address.wrapping_sub(origin);
            self.exec[r] |= 1 << l;
            self.bytes[r] = self.bytes[r].max(a.bytes);
            self.dir[r] = a.dir;
            self.n = self.n.max(r + 1);
        }
    }
}
