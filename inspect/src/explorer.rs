//! The wavefront explorer: records a dispatch through a [`Session`] (every instruction of the recorded waves
//! with EXEC, the registers it changed, every lane's memory access, LDS bank conflicts, barrier arrivals and
//! releases) and writes it as ONE self-contained HTML page (inline script and style, no network access) that
//! draws it: the instruction stream per wave with EXEC as a 64-lane grid per step, the waves of a workgroup
//! side by side, and — from a timing-model run — the cycle timeline of the waves of a CU.
//!
//! The page's data is one JSON object ([`Trace`]) embedded in the page; the page renders only the rows in view,
//! so traces of hundreds of thousands of instructions stay responsive.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::{json, Value};

use emu_core::engine::{EngineError, WaveRunner};
use emu_core::observe::{Dir, Event, LaneAccess, Observer, Space};
use emu_core::timing::cache::{coalesce, LineUse};
use emu_core::timing::lds::bank_cycles;
use emu_core::wave::{WaveState, LANES};
use isa_amdgpu::disasm;
use isa_amdgpu::table::FlowControl;

use crate::regs::sgpr_name;
use crate::session::{Seen, Session, Until, WaveKey};

/// Bytes of a vector L1 cache line on gfx90a and gfx942 (`emu_core::timing::machine`).
pub const LINE_BYTES: u32 = 64;

/// What to record.
#[derive(Debug, Clone)]
pub struct Options {
    /// Instructions to record in all; the dispatch runs on unrecorded past it.
    pub max_recorded: u64,
    /// Only these workgroups (linear indices); `None`: every workgroup, while the budget lasts.
    pub workgroups: Option<Vec<u64>>,
}

/// One recorded instruction of a wave.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The dispatch's instruction count after it (its position in the dispatch's order).
    pub t: u64,
    /// Offset of the instruction in the code object.
    pub pc: u64,
    /// EXEC as 16 hex digits.
    pub x: String,
    /// Registers it changed: name and value, or the 64 lanes of a vector register.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub c: Vec<(String, Value)>,
    /// Lane accesses: [lane, address, bytes, 0 read / 1 write / 2 atomic].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub a: Vec<(u8, u64, u32, u8)>,
    /// Memory space of the accesses (`global`, `lds`, `scalar`, `scratch`, `flat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub s: Option<&'static str>,
    /// Distinct cache lines the lanes touched (global, flat and scratch accesses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
    /// LDS bank cycles and conflict cycles beyond one per phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lds: Option<(u32, u32)>,
    /// Dispatch time the barrier this `s_barrier` waited at released (the wave waited from `t` to it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel: Option<u64>,
}

/// One recorded wave.
#[derive(Debug, Clone, Serialize)]
pub struct WaveTrace {
    pub id: String,
    pub wg: [u32; 3],
    pub wave: u32,
    /// SGPR slots 0..127 and SCC at the start.
    pub s0: Vec<u32>,
    pub scc0: bool,
    /// Each VGPR's 64 lanes at the start.
    pub v0: Vec<Vec<u32>>,
    pub steps: Vec<Step>,
    /// The wave ended within the recording.
    pub ended: bool,
}

/// An instruction of the code, by offset.
#[derive(Debug, Clone, Serialize)]
pub struct InstInfo {
    pub text: String,
    /// Encoding dwords in hex.
    pub enc: String,
    /// Functional unit (the table's name).
    pub unit: &'static str,
    /// `function+0xOFF`.
    #[serde(rename = "where")]
    pub at: String,
    /// Kind for coloring: salu, valu, vmem, smem, lds, branch, barrier, wait, end, other.
    pub kind: &'static str,
}

/// One issued instruction of the timing model's run.
#[derive(Debug, Clone, Serialize)]
pub struct Issued {
    /// Index into [`Trace::timeline_waves`].
    pub w: u32,
    pub pc: u64,
    pub cycle: u64,
    /// Stall cycles before it by reason: vmcnt, lgkmcnt, barrier, dependency, unit_busy, fetch, sleep,
    /// arbitration.
    pub st: [u64; 8],
}

/// The recording: what the page draws.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    /// The kernel's demangled name, as the page's title shows it.
    pub kernel: String,
    /// Its symbol (the mangled name of a C++ kernel).
    pub symbol: String,
    pub device: String,
    pub engine: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub workgroups: u64,
    pub waves_per_workgroup: u32,
    pub code_base: u64,
    pub line_bytes: u32,
    pub waves: Vec<WaveTrace>,
    pub insts: BTreeMap<u64, InstInfo>,
    /// Instructions the whole dispatch executed, and how many the recording holds.
    pub total: u64,
    pub recorded: u64,
    /// Every wave of the timing model's run: (id, CU, SIMD), and its issued instructions.
    pub timeline_waves: Vec<(String, u32, u32)>,
    pub timeline: Vec<Issued>,
    pub cycles: Option<u64>,
}

fn kind_of(inst: &isa_amdgpu::Inst) -> &'static str {
    use isa_amdgpu::table::Unit;
    let info = inst.info;
    match info.flow {
        FlowControl::Barrier => return "barrier",
        FlowControl::End => return "end",
        FlowControl::Branch | FlowControl::CondBranch | FlowControl::Jump | FlowControl::Call => return "branch",
        _ => {}
    }
    if info.opcode == isa_amdgpu::Opcode::SWaitcnt {
        return "wait";
    }
    match info.unit {
        Unit::Salu => "salu",
        Unit::Smem => "smem",
        Unit::Lds => "lds",
        Unit::Valu | Unit::Trans | Unit::F64 | Unit::Mfma => "valu",
        Unit::Vmem | Unit::Flat => "vmem",
        _ => "other",
    }
}

fn space_name(s: Space) -> &'static str {
    match s {
        Space::Global => "global",
        Space::Scalar => "scalar",
        Space::Lds => "lds",
        Space::Scratch => "scratch",
        Space::Flat => "flat",
    }
}

/// Registers that differ between `a` (before) and `b` (after).
fn changes(a: &WaveState, b: &WaveState) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for i in 0..128 {
        if a.sgprs[i] != b.sgprs[i] {
            out.push((sgpr_name(i as u32), json!(b.sgprs[i])));
        }
    }
    if a.scc != b.scc {
        out.push(("scc".into(), json!(b.scc as u32)));
    }
    for (file, x, y) in [("v", &a.vgprs, &b.vgprs), ("a", &a.agprs, &b.agprs)] {
        for (r, now) in y.iter().enumerate() {
            if x.get(r).copied().unwrap_or([0; LANES]) != *now {
                out.push((format!("{file}{r}"), json!(now.to_vec())));
            }
        }
    }
    out
}

/// Records the dispatch of `session` from its start (see the module documentation); `functions` (name,
/// address in the code object, size) name the instructions.
pub fn record<R: WaveRunner>(
    session: &mut Session<'_, R>,
    engine: &str,
    opts: &Options,
    functions: &[(String, u64, u64)],
) -> Result<Trace, EngineError> {
    let launch = session.launch();
    let shape = launch.shape;
    let code_base = launch.code.base;
    let device = session.device();
    let wpw = shape.block.iter().product::<u32>().div_ceil(device.wave_size);
    let mut trace = Trace {
        kernel: isa_amdgpu::codeobj::names::demangle(launch.name),
        symbol: launch.name.to_string(),
        device: device.id.to_string(),
        engine: engine.to_string(),
        grid: shape.grid,
        block: shape.block,
        workgroups: shape.workgroup_count(),
        waves_per_workgroup: wpw,
        code_base,
        line_bytes: LINE_BYTES,
        waves: Vec::new(),
        insts: BTreeMap::new(),
        total: 0,
        recorded: 0,
        timeline_waves: Vec::new(),
        timeline: Vec::new(),
        cycles: None,
    };
    let wanted = |wg: [u32; 3]| -> bool {
        match &opts.workgroups {
            None => true,
            Some(list) => {
                let n = shape.workgroups();
                let linear = wg[0] as u64 + wg[1] as u64 * n[0] as u64 + wg[2] as u64 * n[0] as u64 * n[1] as u64;
                list.contains(&linear)
            }
        }
    };
    let mut index: HashMap<WaveKey, usize> = HashMap::new();
    let mut shadow: HashMap<WaveKey, WaveState> = HashMap::new();
    // waves at a barrier: (wave index, step index) until the release
    let mut waiting: Vec<(usize, usize)> = Vec::new();
    let mut budget = opts.max_recorded;
    let mut addrs = [0u64; LANES];
    let mut lines: Vec<LineUse> = Vec::new();
    let functions = FunctionNames(functions.to_vec());
    {
        let mut hook = |seen: Seen<'_>| -> bool {
            match seen {
                Seen::WaveStart { wave, state } => {
                    if budget == 0 || !wanted(wave.workgroup) {
                        return true;
                    }
                    index.insert(wave, trace.waves.len());
                    shadow.insert(wave, state.clone());
                    trace.waves.push(WaveTrace {
                        id: wave.to_string(),
                        wg: wave.workgroup,
                        wave: wave.wave,
                        s0: state.sgprs.to_vec(),
                        scc0: state.scc,
                        v0: state.vgprs.iter().map(|v| v.to_vec()).collect(),
                        steps: Vec::new(),
                        ended: false,
                    });
                }
                Seen::Instruction {
                    executed: ex,
                    state,
                    lds: _,
                } => {
                    trace.total = ex.time;
                    let Some(&wi) = index.get(&ex.wave) else {
                        return budget > 0;
                    };
                    if budget == 0 {
                        return false;
                    }
                    budget -= 1;
                    trace.recorded += 1;
                    let rel = ex.pc - code_base;
                    trace.insts.entry(rel).or_insert_with(|| InstInfo {
                        text: disasm::text(&ex.inst),
                        enc: ex
                            .inst
                            .words()
                            .iter()
                            .map(|w| format!("{w:08X}"))
                            .collect::<Vec<_>>()
                            .join(" "),
                        unit: ex.inst.info.unit.name(),
                        at: functions.name(rel),
                        kind: kind_of(&ex.inst),
                    });
                    let before = shadow.get_mut(&ex.wave).expect("a recorded wave has a shadow");
                    let c = changes(before, state);
                    *before = state.clone();
                    let mut step = Step {
                        t: ex.time,
                        pc: rel,
                        x: format!("{:016x}", ex.exec),
                        c,
                        a: Vec::new(),
                        s: None,
                        lines: None,
                        lds: None,
                        rel: None,
                    };
                    if let Some(first) = ex.accesses.first() {
                        step.s = Some(space_name(first.space));
                        step.a = ex
                            .accesses
                            .iter()
                            .map(|a: &LaneAccess| (a.lane, a.address, a.bytes, a.dir as u8))
                            .collect();
                        let mut mask = 0u64;
                        addrs.fill(0);
                        let mut bytes = 4;
                        // the first access of each lane (multi-dword accesses are recorded once per lane here)
                        for a in ex.accesses.iter() {
                            if mask >> a.lane & 1 == 0 {
                                mask |= 1 << a.lane;
                                addrs[a.lane as usize] = a.address;
                                bytes = a.bytes;
                            }
                        }
                        match first.space {
                            Space::Lds => {
                                let a32: Vec<u32> = addrs.iter().map(|&a| a as u32).collect();
                                let c = bank_cycles(&a32, mask, bytes.min(16), first.dir == Dir::Read);
                                step.lds = Some((c.cycles, c.conflict_cycles));
                            }
                            Space::Scalar => {}
                            _ => {
                                coalesce(&addrs, mask, bytes.clamp(1, LINE_BYTES), LINE_BYTES, &mut lines);
                                step.lines = Some(lines.len() as u32);
                            }
                        }
                    }
                    if ex.inst.info.flow == FlowControl::Barrier {
                        waiting.push((wi, trace.waves[wi].steps.len()));
                    }
                    if ex.inst.info.flow == FlowControl::End {
                        trace.waves[wi].ended = true;
                    }
                    trace.waves[wi].steps.push(step);
                }
                Seen::BarrierRelease { workgroup, time } => {
                    waiting.retain(|&(wi, si)| {
                        if trace.waves[wi].wg == workgroup {
                            trace.waves[wi].steps[si].rel = Some(time);
                            false
                        } else {
                            true
                        }
                    });
                }
                Seen::WorkgroupEnd { .. } => {}
            }
            true
        };
        session.rewind()?;
        // recorded, then (the budget used up) the rest of the dispatch at the engine's pace
        session.run_hooked(&Until::default(), Some(&mut hook))?;
    }
    while session.run(&Until::default())? != crate::session::Reason::DispatchEnded {}
    trace.total = session.time();
    Ok(trace)
}

/// `function+0xOFF` names of code offsets.
struct FunctionNames(Vec<(String, u64, u64)>);

impl FunctionNames {
    fn name(&self, rel: u64) -> String {
        match self.0.iter().find(|(_, a, n)| rel >= *a && rel < a + n) {
            Some((f, a, _)) => format!("{f}+{:#x}", rel - a),
            None => format!("{rel:#x}"),
        }
    }
}

/// What a [`TimelineRecorder`] has seen: the waves (id, CU, SIMD), their indices, the issued instructions and
/// the code's base address.
type Timeline = (Vec<(String, u32, u32)>, HashMap<WaveKey, u32>, Vec<Issued>, u64);

/// Collects the timing model's issued instructions (an observer for `KernelDispatch::run_timed`).
#[derive(Default)]
pub struct TimelineRecorder {
    inner: std::sync::Mutex<Timeline>,
    /// Issued instructions to keep.
    pub max: u64,
}

impl TimelineRecorder {
    pub fn new(max: u64) -> TimelineRecorder {
        TimelineRecorder {
            max,
            ..TimelineRecorder::default()
        }
    }

    /// Moves what was recorded into `trace`.
    pub fn into_trace(self, trace: &mut Trace, cycles: u64) {
        let (waves, _, issued, _) = self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        trace.timeline_waves = waves;
        trace.timeline = issued;
        trace.cycles = Some(cycles);
    }
}

impl Observer for TimelineRecorder {
    fn event(&self, ev: &Event<'_>) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (waves, index, issued, base) = &mut *g;
        match ev {
            Event::DispatchBegin { code_base, .. } => *base = *code_base,
            Event::WaveStart {
                workgroup,
                wave,
                placement,
                ..
            } => {
                let key = WaveKey {
                    workgroup: *workgroup,
                    wave: *wave,
                };
                let (cu, simd) = placement.map_or((0, 0), |p| (p.cu, p.simd));
                index.insert(key, waves.len() as u32);
                waves.push((key.to_string(), cu, simd));
            }
            Event::Instruction(i) => {
                if issued.len() as u64 >= self.max {
                    return;
                }
                let (Some(issue), Some(&w)) = (
                    i.issue,
                    index.get(&WaveKey {
                        workgroup: i.workgroup,
                        wave: i.wave,
                    }),
                ) else {
                    return;
                };
                let s = issue.stalls;
                issued.push(Issued {
                    w,
                    pc: i.pc - *base,
                    cycle: issue.cycle,
                    st: [
                        s.vmcnt,
                        s.lgkmcnt,
                        s.barrier,
                        s.dependency,
                        s.unit_busy,
                        s.fetch,
                        s.sleep,
                        s.arbitration,
                    ],
                });
            }
            _ => {}
        }
    }
}

/// The explorer page's template: `/*TRACE*/null` stands for the trace's JSON.
const TEMPLATE: &str = include_str!("explorer.html");

/// The page for `trace`: one HTML document with everything inline.
pub fn html(trace: &Trace) -> Result<String, serde_json::Error> {
    let data = serde_json::to_string(trace)?;
    // inside a <script> element the JSON must not close it
    let data = data.replace("</", "<\\/");
    Ok(TEMPLATE.replacen("/*TRACE*/null", &data, 1))
}
