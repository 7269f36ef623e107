//! A dispatch run under control: one workgroup at a time in linear order, the waves of a workgroup taking
//! turns as the engine's dispatch loop gives them (each runs until it waits at `s_barrier` or ends, then the
//! barrier releases), on one host thread — so every run of the same dispatch executes the same instructions
//! in the same order, whichever engine runs them.
//!
//! A point of the run is a [`Position`]: how many instructions the dispatch has executed (its *time*) and the
//! wave at hand. Reverse execution is replay: [`Session::rewind`] puts device memory back as it was when the
//! session started and the run starts again; running forward to a recorded position gives the state a forward
//! run stopped there had, bit for bit.
//!
//! The engines report every instruction to the session's observer ([`Probe`]), which asks them to hand the
//! wave back (the observation seam's `switch_wave`) only where a stop condition could hold: at the requested
//! time, after an instruction whose next PC may be a breakpoint, after every instruction of a watched wave,
//! after a write into a watched memory range. Between those points the engine runs at its own pace (compiled
//! blocks for the JIT).

use std::collections::HashMap;
use std::sync::Mutex;

use emu_core::dispatch::DispatchContext;
use emu_core::engine::{self, EngineError, Group, Launch, Limits, WaveRun, WaveRunner};
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::{Dir, InstEvent, LaneAccess, Observer};
use emu_core::wave::{WaveClock, WaveState, WaveStatus};
use emu_core::DevicePreset;
use isa_amdgpu::table::FlowControl;
use isa_amdgpu::{Inst, Opcode};

/// A wave of the dispatch: its workgroup's id and its index within the workgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WaveKey {
    pub workgroup: [u32; 3],
    pub wave: u32,
}

impl std::fmt::Display for WaveKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.workgroup;
        write!(f, "{x},{y},{z}:{}", self.wave)
    }
}

impl std::str::FromStr for WaveKey {
    type Err = String;
    /// `X,Y,Z:W`, `X:W` (Y and Z 0) or `W` (workgroup 0).
    fn from_str(s: &str) -> Result<WaveKey, String> {
        let bad = || format!("`{s}`: a wave is WG_X[,WG_Y,WG_Z]:WAVE (e.g. 0,0,0:1) or WAVE");
        let (wg, w) = s.split_once(':').unwrap_or(("0", s));
        let wave = w.trim().parse().map_err(|_| bad())?;
        let mut workgroup = [0u32; 3];
        for (i, p) in wg.split(',').enumerate() {
            *workgroup.get_mut(i).ok_or_else(bad)? = p.trim().parse().map_err(|_| bad())?;
        }
        Ok(WaveKey { workgroup, wave })
    }
}

/// A point of a run: `time` instructions executed by the dispatch, at `wave`, either about to run its next
/// instruction (`before`) or just after the one that made the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub time: u64,
    pub wave: WaveKey,
    pub before: bool,
}

impl Position {
    /// Where the position falls in a run, to compare positions by: the time, and at one time the point just
    /// after the instruction that made it comes before the point where a wave is about to run the next one.
    pub fn order(&self) -> (u64, bool) {
        (self.time, self.before)
    }
}

/// One executed instruction, as the session's observer saw it.
#[derive(Debug, Clone)]
pub struct Executed {
    pub wave: WaveKey,
    pub pc: u64,
    pub inst: Inst,
    /// EXEC when it issued.
    pub exec: u64,
    /// Every active lane's memory accesses (FLAT lanes as global accesses, as the engines record them).
    pub accesses: Vec<LaneAccess>,
    /// The dispatch's instruction count after it.
    pub time: u64,
}

/// Where to stop. Conditions are checked before each instruction of a wave (breakpoints, counts, PCs) and
/// after each (watches, the end of a wave). Where a breakpoint and a count or PC hold at once, the run stops
/// for the breakpoint.
#[derive(Debug, Clone, Default)]
pub struct Until {
    /// A recorded position.
    pub position: Option<Position>,
    /// Before the first instruction this wave runs from here on.
    pub turn_of: Option<WaveKey>,
    /// When the wave has executed this many instructions (before its next one, or when it ends).
    pub count: Option<(WaveKey, u64)>,
    /// When the wave is at this PC with this many calls open (`next` over a call, `finish`).
    pub pc: Option<(WaveKey, u64, usize)>,
    /// Before any wave executes an instruction at one of these addresses.
    pub breakpoints: Vec<u64>,
    /// Registers of one wave that stop the run when they change.
    pub registers: Vec<RegWatch>,
    /// Device memory ranges that stop the run when their bytes change.
    pub memory: Vec<MemWatch>,
}

/// A register (one lane of a vector register) whose value is watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegWatch {
    pub wave: WaveKey,
    pub reg: crate::regs::Reg,
    pub lane: usize,
    /// The value when last seen.
    pub value: u32,
}

/// A range of device memory whose bytes are watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemWatch {
    pub address: u64,
    pub bytes: Vec<u8>,
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// At the recorded position asked for.
    Position,
    /// The wave's turn came ([`Until::turn_of`]).
    Turn,
    /// The wave executed the instructions asked for.
    Count,
    /// The wave reached the PC asked for.
    Pc,
    Breakpoint {
        pc: u64,
    },
    /// A watched register changed; `pc` is the instruction that changed it.
    Register {
        watch: usize,
        old: u32,
        new: u32,
        pc: u64,
    },
    /// A watched memory range changed; `by` is the wave and PC of the instruction that wrote it.
    Memory {
        watch: usize,
        old: Vec<u8>,
        new: Vec<u8>,
        by: WaveKey,
        pc: u64,
    },
    /// The wave a count or PC was asked of ended first.
    WaveEnded {
        wave: WaveKey,
    },
    /// Every wave of the dispatch ended.
    DispatchEnded,
    /// The hook of [`Session::run_hooked`] asked to stop after an instruction.
    Hook,
}

/// What the session reports to a hook while it runs with [`Session::run_hooked`].
pub enum Seen<'x> {
    /// A wave is created with its initial state.
    WaveStart { wave: WaveKey, state: &'x WaveState },
    /// An instruction executed; `state` is the wave after it, `lds` its workgroup's LDS.
    Instruction {
        executed: &'x Executed,
        state: &'x WaveState,
        lds: &'x [u8],
    },
    /// Every wave of the workgroup waiting at `s_barrier` goes on, at the dispatch time given.
    BarrierRelease { workgroup: [u32; 3], time: u64 },
    /// The workgroup's waves all ended.
    WorkgroupEnd { workgroup: [u32; 3], time: u64 },
}

/// A wave's status as the debugger lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Its workgroup has not started.
    NotStarted,
    Running,
    AtBarrier,
    Ended,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::NotStarted => "not started",
            Status::Running => "running",
            Status::AtBarrier => "at barrier",
            Status::Ended => "ended",
        }
    }
}

/// A workgroup that ended: its id, its waves' final states (for the last [`KEEP_ENDED`] workgroups) and their
/// instruction counts.
type Ended = ([u32; 3], Option<Vec<WaveState>>, Vec<u64>);

/// Final states of workgroups that ended, kept for `print` (only this many; older ones keep their statuses).
const KEEP_ENDED: usize = 64;

/// The observer the session runs the engines with: counts the dispatch's instructions, keeps each wave's call
/// stack and asks the engine to hand the wave back where a stop condition may hold.
#[derive(Default)]
pub struct Probe {
    st: Mutex<ProbeState>,
}

#[derive(Default)]
struct ProbeState {
    time: u64,
    /// Hand back when the time reaches this.
    until_time: Option<u64>,
    /// Hand back after this wave's `remaining` more instructions.
    count: Option<(WaveKey, u64)>,
    /// Hand back after every instruction of these waves.
    watched: Vec<WaveKey>,
    /// Hand back after a control-flow instruction or one whose next instruction is at one of these.
    stops: Vec<u64>,
    /// Hand back after a write into one of these ranges.
    ranges: Vec<(u64, u64)>,
    /// Hand back after every instruction.
    every: bool,
    /// Return addresses of each wave's open calls.
    stacks: HashMap<WaveKey, Vec<u64>>,
    /// The last instruction executed, when the session asked for it (`every`) or it wrote a watched range.
    last: Option<Executed>,
    /// Who last wrote a watched range.
    writer: Option<(WaveKey, u64)>,
    /// The PC of the last instruction executed.
    last_pc: u64,
}

impl Observer for Probe {
    const WANTS_ACCESSES: bool = true;

    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool {
        let mut st = self.st.lock().unwrap_or_else(|e| e.into_inner());
        let key = WaveKey {
            workgroup: ev.workgroup,
            wave: ev.wave,
        };
        st.time += 1;
        let inst = ev.inst;
        let size = inst.size() as u64;
        let flow = inst.info.flow;
        st.last_pc = ev.pc;
        if flow == FlowControl::Call {
            st.stacks.entry(key).or_default().push(ev.pc + size);
        } else if inst.info.opcode == Opcode::SSetpcB64 {
            if let Some(s) = st.stacks.get_mut(&key) {
                s.pop();
            }
        }
        let mut stop = st.every || st.until_time == Some(st.time) || st.watched.contains(&key);
        if let Some((w, n)) = &mut st.count {
            if *w == key {
                *n = n.saturating_sub(1);
                stop |= *n == 0;
            }
        }
        if !st.stops.is_empty() && (flow != FlowControl::Next || st.stops.contains(&(ev.pc + size))) {
            stop = true;
        }
        let wrote = !st.ranges.is_empty()
            && ev.accesses.iter().any(|a| {
                a.dir != Dir::Read
                    && st
                        .ranges
                        .iter()
                        .any(|&(lo, len)| a.address < lo + len && lo < a.address + a.bytes as u64)
            });
        if wrote {
            st.writer = Some((key, ev.pc));
            stop = true;
        }
        if st.every || wrote {
            let time = st.time;
            st.last = Some(Executed {
                wave: key,
                pc: ev.pc,
                inst: *inst,
                exec: ev.exec,
                accesses: ev.accesses.to_vec(),
                time,
            });
        }
        stop
    }
}

/// A dispatch under the debugger's control (see the module documentation).
pub struct Session<'a, R: WaveRunner> {
    mem: &'a DeviceMemory,
    device: &'a DevicePreset,
    launch: &'a Launch<'a>,
    cx: DispatchContext<'a>,
    /// The waves' initial state.
    template: emu_core::dispatch::WaveTemplate,
    runner: &'a R,
    limits: Limits,
    clock: WaveClock,
    /// Device buffers as they were when the session started.
    start: Vec<(u64, Vec<u8>)>,
    /// Private memory of each workgroup, allocated once and reused by every replay.
    private: HashMap<u64, u64>,
    next_group: u64,
    group: Option<Group>,
    /// The wave whose turn it is in the current workgroup.
    cursor: usize,
    /// Whether some wave executed an instruction in this pass over the workgroup.
    progress: bool,
    /// Workgroups that ended.
    ended: Vec<Ended>,
    probe: Probe,
    /// Do not stop at a breakpoint at this position (the run resumes from it).
    resume: Option<Position>,
    /// Where the last run stopped.
    pub at: Position,
    done: bool,
    /// The watches of the run going on, with the values last seen.
    registers: Vec<RegWatch>,
    memory: Vec<MemWatch>,
}

impl<'a, R: WaveRunner> Session<'a, R> {
    /// A session over `launch`, before its first instruction; device memory as it is now is what every replay
    /// starts from.
    pub fn new(
        mem: &'a DeviceMemory,
        device: &'a DevicePreset,
        launch: &'a Launch<'a>,
        runner: &'a R,
        max_wave_instructions: u64,
    ) -> Result<Self, EngineError> {
        engine::check_launch(device, launch)?;
        if launch.cooperative && launch.code.grid_sync {
            return Err(EngineError::GridSync {
                kernel: launch.name.to_string(),
                what: "a cooperative launch that syncs the grid (ds_gws_barrier, GWS semaphores) runs its workgroups interleaved; the debugger runs one workgroup at a time".into(),
            });
        }
        let start = mem.snapshot_buffers().map_err(|e| EngineError::Inspect {
            kernel: launch.name.to_string(),
            what: format!("cannot copy device memory for replay: {e}"),
        })?;
        let limits = Limits {
            max_wave_instructions,
            threads: Some(1),
            slice: None,
            clock_ends_turn: false,
            poll_ends_turn: false,
            timing: false,
            // a person steps this dispatch: no progress reports or timeout
            watch: None,
        };
        let clock = WaveClock {
            base: mem.clock().base(),
            per_instruction: 4,
            shader_mhz: device.engine_clock_mhz,
        };
        let first = WaveKey {
            workgroup: [0; 3],
            wave: 0,
        };
        let cx = engine::dispatch_context(device, launch);
        let template = emu_core::dispatch::WaveTemplate::new(&cx).map_err(EngineError::from)?;
        Ok(Session {
            mem,
            device,
            launch,
            cx,
            template,
            runner,
            limits,
            clock,
            start,
            private: HashMap::new(),
            next_group: 0,
            group: None,
            cursor: 0,
            progress: false,
            ended: Vec::new(),
            probe: Probe::default(),
            resume: None,
            at: Position {
                time: 0,
                wave: first,
                before: true,
            },
            done: false,
            registers: Vec::new(),
            memory: Vec::new(),
        })
    }

    pub fn launch(&self) -> &Launch<'a> {
        self.launch
    }

    pub fn device(&self) -> &DevicePreset {
        self.device
    }

    pub fn memory(&self) -> &DeviceMemory {
        self.mem
    }

    /// Instructions the dispatch has executed.
    pub fn time(&self) -> u64 {
        self.probe.st.lock().unwrap_or_else(|e| e.into_inner()).time
    }

    /// Whether every wave has ended.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// Return addresses of the wave's open calls, innermost last.
    pub fn call_stack(&self, wave: WaveKey) -> Vec<u64> {
        self.probe
            .st
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stacks
            .get(&wave)
            .cloned()
            .unwrap_or_default()
    }

    /// The wave's state: live, or final for a wave of a recently ended workgroup.
    pub fn wave(&self, key: WaveKey) -> Option<&WaveState> {
        if let Some(g) = &self.group {
            if g.wg == key.workgroup {
                return g.waves.get(key.wave as usize);
            }
        }
        self.ended
            .iter()
            .find(|e| e.0 == key.workgroup)
            .and_then(|e| e.1.as_ref())
            .and_then(|w| w.get(key.wave as usize))
    }

    /// The LDS of the running workgroup (empty when none runs).
    pub fn lds(&self) -> &[u8] {
        self.group.as_ref().map_or(&[], |g| &g.lds)
    }

    /// The workgroup running now.
    pub fn current_workgroup(&self) -> Option<[u32; 3]> {
        self.group.as_ref().map(|g| g.wg)
    }

    /// Every wave of the dispatch with its status and instructions executed.
    pub fn waves(&self) -> Vec<(WaveKey, Status, u64)> {
        let shape = self.launch.shape;
        let mut out = Vec::new();
        for i in 0..shape.workgroup_count() {
            let wg = shape.workgroup_id(i);
            let n = shape.waves_in(wg, self.device.wave_size);
            for w in 0..n {
                let key = WaveKey { workgroup: wg, wave: w };
                let (status, executed) = match (&self.group, self.ended.iter().find(|e| e.0 == wg)) {
                    (_, Some(e)) => (Status::Ended, e.2[w as usize]),
                    (Some(g), _) if g.wg == wg => {
                        let s = &g.waves[w as usize];
                        let st = match s.status {
                            WaveStatus::Running => Status::Running,
                            WaveStatus::AtBarrier => Status::AtBarrier,
                            WaveStatus::Done => Status::Ended,
                        };
                        (st, s.executed)
                    }
                    _ => (Status::NotStarted, 0),
                };
                out.push((key, status, executed));
            }
        }
        out
    }

    /// Whether `key` names a wave of the dispatch.
    pub fn has_wave(&self, key: WaveKey) -> bool {
        let shape = self.launch.shape;
        let n = shape.workgroups();
        (0..3).all(|d| key.workgroup[d] < n[d]) && key.wave < shape.waves_in(key.workgroup, self.device.wave_size)
    }

    /// Back to the dispatch's start: device memory as it was when the session began, no workgroup started.
    pub fn rewind(&mut self) -> Result<(), EngineError> {
        self.mem
            .restore_buffers(&self.start)
            .map_err(|e| self.error(format!("cannot restore device memory: {e}")))?;
        self.drop_group();
        self.next_group = 0;
        self.cursor = 0;
        self.progress = false;
        self.ended.clear();
        self.probe = Probe::default();
        self.resume = None;
        self.at = Position {
            time: 0,
            wave: WaveKey {
                workgroup: [0; 3],
                wave: 0,
            },
            before: true,
        };
        self.done = false;
        Ok(())
    }

    fn error(&self, what: String) -> EngineError {
        EngineError::Inspect {
            kernel: self.launch.name.to_string(),
            what,
        }
    }

    fn drop_group(&mut self) {
        if let Some(g) = self.group.take() {
            if let Some(s) = g.scratch {
                let _ = self.mem.free(s);
            }
        }
    }

    /// Runs until a condition of `until` holds or the dispatch ends.
    pub fn run(&mut self, until: &Until) -> Result<Reason, EngineError> {
        self.run_hooked(until, None)
    }

    /// [`Session::run`], reporting every instruction, wave start and barrier release to `hook`, which returns
    /// false after an instruction to stop there ([`Reason::Hook`]).
    pub fn run_hooked(
        &mut self,
        until: &Until,
        mut hook: Option<&mut dyn FnMut(Seen<'_>) -> bool>,
    ) -> Result<Reason, EngineError> {
        if self.done {
            return Ok(Reason::DispatchEnded);
        }
        self.registers = until.registers.clone();
        self.memory = until.memory.clone();
        {
            let mut st = self.probe.st.lock().unwrap_or_else(|e| e.into_inner());
            st.until_time = until.position.map(|p| p.time);
            st.count = until.count.and_then(|(w, n)| {
                let have = self.wave(w).map_or(0, |s| s.executed);
                (n > have).then_some((w, n - have))
            });
            st.watched = self.registers.iter().map(|r| r.wave).collect();
            if let Some((w, _, _)) = until.pc {
                st.watched.push(w);
            }
            st.stops = until.breakpoints.clone();
            st.ranges = self.memory.iter().map(|m| (m.address, m.bytes.len() as u64)).collect();
            st.every = hook.is_some();
            st.writer = None;
        }
        let resume = self.resume.take();
        loop {
            if self.group.is_none() {
                if self.next_group == self.launch.shape.workgroup_count() {
                    self.done = true;
                    return Ok(Reason::DispatchEnded);
                }
                self.start_group(&mut hook)?;
            }
            let time = self.time();
            let g = self.group.as_ref().expect("a workgroup runs");
            if self.cursor < g.waves.len() {
                let key = WaveKey {
                    workgroup: g.wg,
                    wave: self.cursor as u32,
                };
                let wave = &g.waves[self.cursor];
                if wave.status != WaveStatus::Running {
                    self.cursor += 1;
                    continue;
                }
                let (executed, pc) = (wave.executed, wave.pc);
                // before the wave's next instruction
                let here = Position {
                    time,
                    wave: key,
                    before: true,
                };
                let reason = if until.position == Some(here) {
                    Some(Reason::Position)
                } else if until.turn_of == Some(key) {
                    Some(Reason::Turn)
                } else if until.breakpoints.contains(&pc) && resume != Some(here) {
                    Some(Reason::Breakpoint { pc })
                } else if until.count.is_some_and(|(w, n)| w == key && executed >= n) {
                    Some(Reason::Count)
                } else if until
                    .pc
                    .is_some_and(|(w, at, depth)| w == key && pc == at && self.call_depth(key) == depth)
                {
                    Some(Reason::Pc)
                } else {
                    None
                };
                if let Some(r) = reason {
                    return Ok(self.stop(here, r));
                }
                let g = self.group.as_mut().expect("a workgroup runs");
                let wave = &mut g.waves[self.cursor];
                let before = wave.executed;
                let run = WaveRun {
                    mem: self.mem,
                    code: self.launch.code,
                    cx: &self.cx,
                    workgroup: g.wg,
                    wave_index: self.cursor as u32,
                    wave,
                    lds: &mut g.lds,
                    cache: self.launch.cache,
                    limits: self.limits,
                };
                self.runner.run_wave(run, &self.probe)?;
                let wave = &g.waves[self.cursor];
                self.progress |= wave.executed > before;
                let (time, last, writer, last_pc) = {
                    let mut st = self.probe.st.lock().unwrap_or_else(|e| e.into_inner());
                    (st.time, st.last.take(), st.writer.take(), st.last_pc)
                };
                let go_on = match (hook.as_mut(), &last) {
                    (Some(h), Some(ex)) => h(Seen::Instruction {
                        executed: ex,
                        state: wave,
                        lds: &g.lds,
                    }),
                    _ => true,
                };
                // after the instruction
                let here = Position {
                    time,
                    wave: key,
                    before: false,
                };
                if !go_on {
                    return Ok(self.stop(here, Reason::Hook));
                }
                let ended = wave.status == WaveStatus::Done;
                let mut reason = None;
                if until.position == Some(here) {
                    reason = Some(Reason::Position);
                }
                for (i, w) in self.registers.iter_mut().enumerate().filter(|(_, w)| w.wave == key) {
                    let new = w.reg.read(wave, w.lane);
                    if new != w.value && reason.is_none() {
                        reason = Some(Reason::Register {
                            watch: i,
                            old: w.value,
                            new,
                            pc: last_pc,
                        });
                    }
                    w.value = new;
                }
                if let Some((by, pc)) = writer {
                    for (i, m) in self.memory.iter_mut().enumerate() {
                        let mut now = vec![0u8; m.bytes.len()];
                        if self.mem.read(m.address, &mut now).is_ok() && now != m.bytes && reason.is_none() {
                            reason = Some(Reason::Memory {
                                watch: i,
                                old: std::mem::replace(&mut m.bytes, now.clone()),
                                new: now,
                                by,
                                pc,
                            });
                        }
                    }
                }
                if reason.is_none()
                    && ended
                    && (until.count.is_some_and(|c| c.0 == key) || until.pc.is_some_and(|p| p.0 == key))
                {
                    reason = Some(Reason::WaveEnded { wave: key });
                }
                if let Some(r) = reason {
                    return Ok(self.stop(here, r));
                }
            } else {
                self.end_pass(&mut hook)?;
            }
        }
    }

    /// The watches of the last run with the values last seen.
    pub fn watches(&self) -> (&[RegWatch], &[MemWatch]) {
        (&self.registers, &self.memory)
    }

    fn stop(&mut self, at: Position, reason: Reason) -> Reason {
        self.at = at;
        self.resume = Some(at);
        reason
    }

    fn call_depth(&self, key: WaveKey) -> usize {
        self.probe
            .st
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stacks
            .get(&key)
            .map_or(0, |s| s.len())
    }

    fn start_group(&mut self, hook: &mut Option<&mut dyn FnMut(Seen<'_>) -> bool>) -> Result<(), EngineError> {
        let i = self.next_group;
        let bytes = engine::group_private_bytes(self.device, self.launch, i);
        let private = if bytes > 0 {
            let a = match self.private.get(&i) {
                Some(&a) => a,
                None => {
                    let label = format!(
                        "{} workgroup {:?} (debugger)",
                        self.launch.name,
                        self.launch.shape.workgroup_id(i)
                    );
                    let a = self
                        .mem
                        .allocate(bytes, AllocKind::Scratch, &label)
                        .map_err(EngineError::from)?;
                    self.private.insert(i, a);
                    a
                }
            };
            // every replay starts from the same (zeroed) private memory
            self.mem
                .write(a, &vec![0u8; bytes as usize])
                .map_err(|e| self.error(format!("private memory: {e}")))?;
            Some(a)
        } else {
            None
        };
        let g = engine::build_group_in(
            self.mem,
            self.device,
            self.launch,
            &self.template,
            i,
            self.clock,
            private,
            true,
        )?;
        // a watched register of a wave that starts now changes from its initial value
        for r in self.registers.iter_mut().filter(|r| r.wave.workgroup == g.wg) {
            if let Some(s) = g.waves.get(r.wave.wave as usize) {
                r.value = r.reg.read(s, r.lane);
            }
        }
        if let Some(h) = hook.as_mut() {
            for (w, s) in g.waves.iter().enumerate() {
                h(Seen::WaveStart {
                    wave: WaveKey {
                        workgroup: g.wg,
                        wave: w as u32,
                    },
                    state: s,
                });
            }
        }
        self.group = Some(g);
        self.next_group += 1;
        self.cursor = 0;
        self.progress = false;
        Ok(())
    }

    /// After every wave had its turn: releases the barrier, or ends the workgroup.
    fn end_pass(&mut self, hook: &mut Option<&mut dyn FnMut(Seen<'_>) -> bool>) -> Result<(), EngineError> {
        let time = self.time();
        let g = self.group.as_mut().expect("a workgroup runs");
        self.cursor = 0;
        if g.waves.iter().all(|w| w.status == WaveStatus::Done) {
            if let Some(h) = hook.as_mut() {
                h(Seen::WorkgroupEnd { workgroup: g.wg, time });
            }
            let counts = g.waves.iter().map(|w| w.executed).collect();
            let g = self.group.take().expect("a workgroup runs");
            if let Some(s) = g.scratch {
                let _ = self.mem.free(s);
            }
            self.ended.push((g.wg, Some(g.waves), counts));
            let n = self.ended.len();
            if n > KEEP_ENDED {
                self.ended[n - KEEP_ENDED - 1].1 = None;
            }
            return Ok(());
        }
        if g.waves.iter().any(|w| w.gws.is_some()) {
            return Err(EngineError::GridSync {
                kernel: self.launch.name.to_string(),
                what: format!(
                    "workgroup {:?} reached ds_gws_barrier (grid-wide sync) outside a cooperative launch",
                    g.wg
                ),
            });
        }
        if let Err(what) = emu_core::gws::outside_cooperative(g.wg, &mut g.waves) {
            return Err(EngineError::GridSync {
                kernel: self.launch.name.to_string(),
                what,
            });
        }
        let waiting = |w: &WaveState| w.status == WaveStatus::AtBarrier;
        if g.waves.iter().all(|w| waiting(w) || w.status == WaveStatus::Done) {
            for w in g.waves.iter_mut().filter(|w| waiting(w)) {
                w.status = WaveStatus::Running;
            }
            if let Some(h) = hook.as_mut() {
                h(Seen::BarrierRelease { workgroup: g.wg, time });
            }
        } else if !self.progress {
            let what = format!("workgroup {:?}: no wave can run", g.wg);
            return Err(self.error(what));
        }
        self.progress = false;
        Ok(())
    }
}

impl<R: WaveRunner> Drop for Session<'_, R> {
    fn drop(&mut self) {
        self.drop_group();
        for (_, a) in self.private.drain() {
            let _ = self.mem.free(a);
        }
    }
}
