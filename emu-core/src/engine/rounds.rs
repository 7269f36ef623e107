//! The functional rounds ([`Functional`]): host threads take workgroups in dispatch order and run their waves
//! in turns, workgroup barriers and (in a cooperative launch) the grid's barrier and semaphores releasing them.

use std::sync::atomic::{AtomicU64, Ordering};

use super::stats::group_stats;
use super::{
    build_group_in, group_private_bytes, recycle, DecodeCache, Dispatch, EngineError, Group, Launch, Limits,
    LoadedCode, RunStats, Scheduler, WaveRun, WaveRunner,
};
use crate::device::DevicePreset;
use crate::dispatch::{DispatchContext, WaveTemplate};
use crate::memory::{AllocKind, DeviceMemory};
use crate::observe::{next_dispatch_id, Dispatched, Event, Observer};
use crate::wave::{WaveClock, WaveState, WaveStatus};

/// The turn of a wave in a cooperative launch, in instructions.
const COOPERATIVE_SLICE: u64 = 20_000;

/// The functional rounds: host threads take workgroups in dispatch order and run each wave until it waits or
/// ends (a cooperative launch that syncs the grid: every workgroup resident, waves taking turns of a slice);
/// the waves' clocks count 4 cycles an instruction.
pub struct Functional;

impl Scheduler for Functional {
    type Report = ();

    fn run<R: WaveRunner, O: Observer>(&self, d: &Dispatch<'_, R, O>) -> Result<(RunStats, ()), EngineError> {
        run_rounds(d).map(|s| (s, ()))
    }
}

/// [`Functional`]'s run of `d`.
fn run_rounds<R: WaveRunner, O: Observer>(d: &Dispatch<'_, R, O>) -> Result<RunStats, EngineError> {
    let (mem, device, launch, limits, runner, observer) = (d.mem, d.device, d.launch, d.limits, d.runner, d.observer);
    let (code, shape) = (launch.code, launch.shape);
    let dispatch = next_dispatch_id();
    let observer = &Dispatched {
        dispatch,
        inner: observer,
    };
    let progress = d.watch();
    let mut cx = d.context();
    cx.progress = progress.as_deref();
    let stopped = || progress.as_ref().is_some_and(|p| p.stopped());
    // a dispatch its timeout stopped: where every wave of `groups` still running was
    let note_stopped = |groups: &[Group]| {
        if let Some(p) = progress.as_deref() {
            for g in groups {
                for (w, wave) in g.waves.iter().enumerate() {
                    if wave.status != WaveStatus::Done {
                        p.stopped_wave(g.wg, w as u32, wave.pc);
                    }
                }
            }
        }
    };
    let timed_out = || {
        let p = progress.as_deref().expect("only a watched dispatch stops");
        d.timeout_error(p)
    };
    let cache = launch.cache;
    let clock = WaveClock {
        base: d.clock.base(),
        per_instruction: 4,
        shader_mhz: device.engine_clock_mhz,
    };
    let longest = AtomicU64::new(0);
    if O::ACTIVE {
        observer.event(&d.begin_event(dispatch, false));
    }
    let template = WaveTemplate::new(&cx)?;
    let build = |i: u64, private: Option<u64>| -> Result<Group, EngineError> {
        let g = build_group_in(mem, device, launch, &template, i, clock, private, true)?;
        if let Some(p) = &progress {
            p.resident(g.waves.len() as u64);
        }
        if O::ACTIVE {
            observer.event(&Event::WorkgroupStart {
                dispatch,
                workgroup: g.wg,
                waves: g.waves.len() as u32,
                placement: None,
                cycle: None,
            });
            for w in 0..g.waves.len() as u32 {
                observer.event(&Event::WaveStart {
                    dispatch,
                    workgroup: g.wg,
                    wave: w,
                    placement: None,
                    cycle: None,
                });
            }
        }
        Ok(g)
    };
    let done = |g: &Group| {
        longest.fetch_max(g.waves.iter().map(|w| w.executed).max().unwrap_or(0), Ordering::Relaxed);
        if let Some(p) = &progress {
            p.done(g.waves.len() as u64);
        }
        if O::ACTIVE {
            observer.event(&Event::WorkgroupEnd {
                dispatch,
                workgroup: g.wg,
                cycle: None,
            });
        }
    };
    let limits = Limits {
        poll_ends_turn: true,
        ..limits
    };
    // a workgroup that ended or failed: its statistics (its private memory is its host thread's, `PrivateAreas`)
    let retire = |g: Group, result: Result<(), EngineError>| -> Result<RunStats, EngineError> {
        result?;
        done(&g);
        let stats = group_stats(launch.name, &g);
        recycle(g);
        Ok(stats)
    };
    let finish = |stats: RunStats| {
        // the clocks of later dispatches go on from where this one's longest wave left them
        d.clock.advance_to(clock.base + 4 * longest.load(Ordering::Relaxed));
        if O::ACTIVE {
            let RunStats {
                workgroups,
                waves,
                wave_instructions,
                ..
            } = stats;
            observer.event(&Event::DispatchEnd {
                dispatch,
                workgroups,
                waves,
                wave_instructions,
                cycles: None,
            });
        }
        stats
    };
    if launch.cooperative && code.grid_sync {
        let mut groups = Vec::new();
        let mut result = Ok(());
        for i in 0..shape.workgroup_count() {
            match build(i, None) {
                Ok(g) => groups.push(g),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_ok() {
            // every workgroup resident, waves taking turns of a slice until all have ended
            let limits = Limits {
                slice: Some(limits.slice.unwrap_or(COOPERATIVE_SLICE)),
                ..limits
            };
            // the semaphores (64 resources) only where waves can use them
            let mut semaphores = Some(crate::gws::Semaphores::default());
            result = loop {
                match round(
                    mem,
                    code,
                    &cx,
                    &mut groups,
                    true,
                    cache,
                    limits,
                    runner,
                    observer,
                    dispatch,
                    &mut semaphores,
                ) {
                    Ok(false) => {}
                    Err(_) if stopped() => {
                        note_stopped(&groups);
                        break Err(timed_out());
                    }
                    done => break done.map(|_| ()),
                }
            };
        }
        for g in &groups {
            if let Some(s) = g.scratch {
                let _ = mem.free(s);
            }
        }
        result?;
        groups.iter().for_each(done);
        let mut stats = RunStats::default();
        for g in &groups {
            stats.add(group_stats(launch.name, g));
        }
        return Ok(finish(stats));
    }
    // workgroups are independent: host threads take them in dispatch order, each holding one at a time but while
    // those it holds wait on spin-waits; the first failing workgroup in dispatch order is reported
    let count = shape.workgroup_count();
    let next = AtomicU64::new(0);
    let work = || -> Vec<(u64, Result<RunStats, EngineError>)> {
        let mut out = Vec::new();
        let mut held: Vec<(u64, Group, Option<u64>)> = Vec::new();
        let mut private = PrivateAreas::new(mem, device, launch);
        loop {
            if held.len() < HELD && held.iter().all(|(_, g, _)| stalled(g)) && !stopped() {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i < count {
                    let built = private.take(i).and_then(|area| match build(i, area) {
                        Ok(g) => Ok((g, area)),
                        Err(e) => {
                            private.give(area);
                            Err(e)
                        }
                    });
                    match built {
                        Ok((g, area)) => held.push((i, g, area)),
                        Err(e) => out.push((i, Err(e))),
                    }
                    continue;
                }
            }
            if held.is_empty() {
                return out;
            }
            let mut k = 0;
            while k < held.len() {
                match round(
                    mem,
                    code,
                    &cx,
                    std::slice::from_mut(&mut held[k].1),
                    false,
                    cache,
                    limits,
                    runner,
                    observer,
                    dispatch,
                    &mut None,
                ) {
                    Ok(false) => k += 1,
                    Err(_) if stopped() => {
                        let (i, g, area) = held.remove(k);
                        note_stopped(std::slice::from_ref(&g));
                        private.give(area);
                        out.push((
                            i,
                            Err(EngineError::Stopped {
                                kernel: launch.name.to_string(),
                            }),
                        ));
                        recycle(g);
                    }
                    result => {
                        let (i, g, area) = held.remove(k);
                        private.give(area);
                        out.push((i, retire(g, result.map(|_| ()))));
                    }
                }
            }
        }
    };
    let mut results: Vec<(u64, Result<RunStats, EngineError>)> = match limits.threads {
        // one host thread, or one workgroup (no point handing it to the pool and back)
        _ if limits.threads == Some(1) || count == 1 => work(),
        threads => match pool(threads.unwrap_or(0)) {
            Some(pool) => pool.broadcast(|_| work()).into_iter().flatten().collect(),
            // no threads to be had: the dispatch still runs, on this one
            None => work(),
        },
    };
    if stopped() {
        return Err(timed_out());
    }
    results.sort_by_key(|(i, _)| *i);
    let results = results.into_iter().map(|(_, r)| r);
    let mut stats = RunStats::default();
    for r in results {
        stats.add(r?);
    }
    Ok(finish(stats))
}

/// The private memory of the workgroups one host thread runs in a dispatch: an area of a whole workgroup's
/// size ([`group_private_bytes`] of the first, which is never smaller than another) for each workgroup it
/// holds at once, made when none is spare and handed, cleared, to the next workgroup once one ends, so that a
/// dispatch makes a few allocations rather than one a workgroup (whose making and freeing, a page fault per
/// page touched and a flush of every host thread's TLB, had cost more than a kernel's private accesses). The
/// areas are freed with the dispatch. Every workgroup starts from zeroed private memory, as from a fresh
/// allocation, so what a kernel reads of memory it did not write does not depend on which host thread ran
/// which workgroup.
struct PrivateAreas<'a, 'l> {
    mem: &'a DeviceMemory,
    device: &'a DevicePreset,
    launch: &'a Launch<'l>,
    bytes: u64,
    spare: Vec<u64>,
    made: Vec<u64>,
}

impl<'a, 'l> PrivateAreas<'a, 'l> {
    fn new(mem: &'a DeviceMemory, device: &'a DevicePreset, launch: &'a Launch<'l>) -> Self {
        PrivateAreas {
            mem,
            device,
            launch,
            bytes: group_private_bytes(device, launch, 0),
            spare: Vec::new(),
            made: Vec::new(),
        }
    }

    /// The private memory for workgroup `i`, zeroed where it uses it (`None`: the kernel has none).
    fn take(&mut self, i: u64) -> Result<Option<u64>, EngineError> {
        if self.bytes == 0 {
            return Ok(None);
        }
        if let Some(area) = self.spare.pop() {
            self.mem.clear(area, group_private_bytes(self.device, self.launch, i))?;
            return Ok(Some(area));
        }
        let area = self.mem.allocate(
            self.bytes,
            AllocKind::Scratch,
            &format!("{} private memory", self.launch.name),
        )?;
        self.made.push(area);
        Ok(Some(area))
    }

    /// Hands back what [`PrivateAreas::take`] gave, for the next workgroup.
    fn give(&mut self, area: Option<u64>) {
        self.spare.extend(area);
    }
}

impl Drop for PrivateAreas<'_, '_> {
    fn drop(&mut self) {
        for &area in &self.made {
            let _ = self.mem.free(area);
        }
    }
}

/// The process's pool of `threads` host threads (0: one per core), made on first use and kept: dispatches are
/// often short, and a fresh pool per dispatch would spend its start-up (and the threads' warmed caches) on
/// every one.
fn pool(threads: usize) -> Option<std::sync::Arc<rayon::ThreadPool>> {
    static POOLS: std::sync::Mutex<Vec<(usize, std::sync::Arc<rayon::ThreadPool>)>> = std::sync::Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Some(p.clone());
    }
    let p = std::sync::Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("wavejit-{i}"))
            .build()
            .ok()?,
    );
    pools.push((threads, p.clone()));
    Some(p)
}

/// Workgroups a host thread holds at most in a dispatch that is not cooperative: it takes another only while
/// every one it holds waits on a spin-wait ([`stalled`]), as a compute unit holds several, so that a workgroup
/// polling for a flag that a workgroup not yet started is to set (or one another host thread runs) leaves the
/// thread to the next workgroup meanwhile.
const HELD: usize = 8;

/// Whether every wave of `g` still running went back round a polling loop in its last turn (and some did).
fn stalled(g: &Group) -> bool {
    let running = || g.waves.iter().filter(|w| w.status == WaveStatus::Running);
    running().any(|w| w.polled) && running().all(|w| w.polled)
}

/// One round over `groups`: each running wave has a turn — it runs until it waits or ends, or (in a
/// cooperative launch) has used its slice, or (with [`Limits::poll_ends_turn`]) goes back round a polling loop;
/// `s_barrier` releases within a workgroup once every wave not ended waits at it. In a cooperative launch,
/// where every workgroup is resident, `ds_gws_barrier` releases once its count of waves of the grid have
/// arrived, the global wave sync semaphores ([`crate::gws`]: the dispatch's 64 resources live here) are
/// carried out as each wave reaches one, a wave waiting at `ds_gws_sema_p` is left out of the turns until its
/// resource lets it go, and waves that can no longer all be released are a deadlock, reported; elsewhere the
/// barrier and the semaphores (but `ds_gws_init`) are a fault. Whether every wave has ended.
#[allow(clippy::too_many_arguments)]
fn round<R: WaveRunner, O: Observer>(
    mem: &DeviceMemory,
    code: &LoadedCode,
    cx: &DispatchContext<'_>,
    groups: &mut [Group],
    cooperative: bool,
    cache: &DecodeCache,
    limits: Limits,
    runner: &R,
    observer: &O,
    dispatch: u64,
    semaphores: &mut Option<crate::gws::Semaphores>,
) -> Result<bool, EngineError> {
    let mut turned = false;
    for gi in 0..groups.len() {
        for wi in 0..groups[gi].waves.len() {
            let g = &mut groups[gi];
            let wave = &mut g.waves[wi];
            if wave.status == WaveStatus::Running {
                let before = wave.executed;
                wave.polled = false;
                let run = WaveRun {
                    mem,
                    code,
                    cx,
                    workgroup: g.wg,
                    wave_index: wi as u32,
                    wave,
                    lds: &mut g.lds,
                    cache,
                    limits,
                };
                let ran = runner.run_wave(run, observer);
                if let Some(p) = cx.progress {
                    p.note(&mut g.waves[wi]);
                }
                ran?;
                turned |= g.waves[wi].executed > before;
                if let Some(s) = semaphores.as_mut() {
                    s.serve(groups, (gi, wi));
                }
            }
        }
        let g = &mut groups[gi];
        if !cooperative && g.waves.iter().any(|w| w.gws.is_some()) {
            return Err(EngineError::GridSync {
                kernel: cx.kernel.to_string(),
                what: format!(
                    "workgroup {:?} reached ds_gws_barrier (grid-wide sync) outside a cooperative launch",
                    g.wg
                ),
            });
        }
        if !cooperative {
            let resumed =
                crate::gws::outside_cooperative(g.wg, &mut g.waves).map_err(|what| EngineError::GridSync {
                    kernel: cx.kernel.to_string(),
                    what,
                })?;
            turned |= resumed;
        }
    }
    let mut released = false;
    // workgroup barriers: every wave of the workgroup not ended waits at s_barrier
    for g in groups.iter_mut() {
        let waiting = |w: &WaveState| w.status == WaveStatus::AtBarrier && !w.at_grid_sync();
        let all = g.waves.iter().all(|w| waiting(w) || w.status == WaveStatus::Done);
        if all && g.waves.iter().any(waiting) {
            for w in g.waves.iter_mut().filter(|w| waiting(w)) {
                w.status = WaveStatus::Running;
            }
            released = true;
            if O::ACTIVE {
                observer.event(&Event::BarrierRelease {
                    dispatch,
                    workgroup: g.wg,
                    cycle: None,
                });
            }
        }
    }
    // the global wave sync barrier
    let at_gws: Vec<u32> = groups
        .iter()
        .flat_map(|g| g.waves.iter())
        .filter_map(|w| w.gws)
        .collect();
    if let Some(&want) = at_gws.first() {
        if at_gws.iter().any(|&c| c != want) {
            return Err(EngineError::GridSync {
                kernel: cx.kernel.to_string(),
                what: format!("waves wait at ds_gws_barrier for different counts ({at_gws:?})"),
            });
        }
        if at_gws.len() as u32 >= want {
            for w in groups
                .iter_mut()
                .flat_map(|g| g.waves.iter_mut())
                .filter(|w| w.gws.is_some())
            {
                w.gws = None;
                w.status = WaveStatus::Running;
            }
            released = true;
        }
    }
    let all = || groups.iter().flat_map(|g| g.waves.iter());
    if all().all(|w| w.status == WaveStatus::Done) {
        return Ok(true);
    }
    if !released && !turned && !all().any(|w| w.status == WaveStatus::Running) {
        let waiting = at_gws.len();
        let want = at_gws.first().copied().unwrap_or(0);
        let at_barrier = all()
            .filter(|w| w.status == WaveStatus::AtBarrier && !w.at_grid_sync())
            .count();
        let ended = all().filter(|w| w.status == WaveStatus::Done).count();
        let mut what = String::from("grid-wide sync never completes: ");
        if let Some(s) = semaphores.as_ref().filter(|s| s.waiting() > 0) {
            what += &format!("{}; ", s.deadlock(groups));
        }
        if waiting > 0 {
            what += &format!("{waiting} wave(s) wait at ds_gws_barrier for {want}; ");
        }
        what += &format!("of the rest, {ended} wave(s) have ended and {at_barrier} wait at s_barrier");
        return Err(EngineError::GridSync {
            kernel: cx.kernel.to_string(),
            what,
        });
    }
    Ok(false)
}
