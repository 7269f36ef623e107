//! A kernel launch from Python and what it leaves behind: its statistics (`wavejit run --stats-json`'s), its
//! hardware-named counters, and, when asked for, its recording for the wavefront explorer. Faults become
//! `GpuFault` with the engine's report.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{EngineError, Interpreter, KernelDispatch, Limits, RunStats};
use emu_core::kernarg::ArgValue;
use emu_core::observe::{NoObserver, Observer};
use emu_core::sem::ExecError;
use emu_core::timing::TimingStats;
use gpu::launch::Dispatch;
use gpu::stats::{JitDelta, Report};
use inspect::explorer::{Options, Trace};
use inspect::DebugInfo;
use profiler_hooks::{ClassCounter, HwCounters};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::device::Core;
use crate::module::Kernel;
use crate::{guarded, json_to_py, Failure, GpuFault, WavejitError};

/// What a launch is asked to do.
pub(crate) struct Request {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub lds: u32,
    pub args: Vec<ArgValue>,
    pub trace: bool,
}

/// What a launch did.
pub(crate) struct LaunchData {
    kernel: String,
    device: &'static str,
    engine: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    lds: u32,
    /// `wavejit run --stats-json`'s object.
    stats: String,
    counters: Option<Vec<(&'static str, u64)>>,
    modeled_ns: Option<f64>,
    cycles: Option<u64>,
    slack_warning: Option<String>,
    trace: Option<Trace>,
    page: OnceLock<Result<String, String>>,
}

/// The [`Failure`] of a dispatch that could not be set up (`what` is wrong with the request).
fn bad_request(e: impl std::fmt::Display) -> Failure {
    Failure::Value(e.to_string())
}

/// Runs `d` on the device's engine, observed by `observer`; the JIT's work meanwhile.
fn run<O: Observer>(
    core: &Core,
    d: &Dispatch<'_>,
    observer: &O,
) -> Result<(RunStats, Option<TimingStats>, JitDelta), EngineError> {
    let before = core.jit.as_ref().map(|j| j.stats());
    let (stats, timing) = d.run_on(core.jit.as_ref(), observer)?;
    let delta = match (&core.jit, before) {
        (Some(j), Some(b)) => {
            // what the background translator was handed during the launch is counted too
            j.settle();
            JitDelta::since(&b, j)
        }
        _ => JitDelta::default(),
    };
    Ok((stats, timing, delta))
}

/// Launches `kernel` as `req` asks, with the GIL released while it runs; the launch becomes the device's
/// `last`.
pub(crate) fn launch(py: Python<'_>, kernel: &Kernel, req: Request) -> PyResult<Launch> {
    let core: &Core = &kernel.core;
    let k = kernel.kernel();
    let data = py
        .allow_threads(|| {
            guarded("running the kernel", || {
                let _queue = core.queue.lock().unwrap_or_else(|e| e.into_inner());
                let o = &core.options;
                let shape = DispatchShape::new(req.grid, req.block, core.preset).map_err(bad_request)?;
                let limits = Limits {
                    max_wave_instructions: o.max_wave_instructions,
                    threads: o.threads,
                    timing: o.timing,
                    watch: Some(o.watch),
                    ..Limits::default()
                };
                let kd = KernelDispatch {
                    mem: &core.mem,
                    device: core.preset,
                    co: &kernel.co,
                    kernel: k,
                    shape,
                    args: &req.args,
                    limits,
                };
                let d = Dispatch::new(kd, req.lds).map_err(Failure::Value)?;
                let before = if req.trace {
                    Some(core.mem.snapshot_buffers().map_err(|e| Failure::Other(e.to_string()))?)
                } else {
                    None
                };
                let t0 = Instant::now();
                let (hw, by_unit) = (
                    o.counters.then(|| HwCounters::new(core.preset, 0)),
                    ClassCounter::default(),
                );
                let (stats, timing, jd) = match &hw {
                    Some(c) => run(core, &d, c)?,
                    None if core.jit.is_none() && !o.timing => run(core, &d, &by_unit)?,
                    None => run(core, &d, &NoObserver)?,
                };
                let seconds = t0.elapsed().as_secs_f64();
                let report = Report {
                    kernel: &k.name,
                    device: core.preset.id,
                    engine: core.engine(),
                    stats: &stats,
                    memcheck: o.memcheck,
                    seconds,
                    jit: jd,
                    timing: timing.as_ref(),
                    by_unit: (hw.is_none() && core.jit.is_none() && !o.timing).then_some(&by_unit),
                }
                .json()
                .map_err(|e| Failure::Other(e.to_string()))?;
                let trace = match before {
                    Some(start) => {
                        // the recording runs the launch again from the memory it started from, on one thread
                        // (with timing, once more in the timing model for the cycle timeline)
                        core.mem
                            .restore_buffers(&start)
                            .map_err(|e| Failure::Other(format!("cannot restore device memory: {e}")))?;
                        drop(start);
                        let one = Dispatch {
                            kernel: KernelDispatch {
                                limits: Limits {
                                    threads: Some(1),
                                    ..limits
                                },
                                ..d.kernel
                            },
                            ..d
                        };
                        let info = DebugInfo::of(&kernel.co, k);
                        let opts = Options {
                            max_recorded: o.trace_max,
                            workgroups: None,
                        };
                        let engine = core.engine();
                        Some(match &core.jit {
                            Some(j) => gpu::explore::record(&one, j, engine, &opts, &info)?,
                            None => gpu::explore::record(&one, &Interpreter, engine, &opts, &info)?,
                        })
                    }
                    None => None,
                };
                if let Some(t) = &timing {
                    let mut m = core.modeled.lock().unwrap_or_else(|e| e.into_inner());
                    // every launch on a device runs at its preset's shader clock
                    m.cycles += t.cycles;
                    m.shader_mhz = t.shader_mhz;
                }
                Ok(Arc::new(LaunchData {
                    kernel: k.name.clone(),
                    device: core.preset.id,
                    engine: core.engine(),
                    grid: req.grid,
                    block: req.block,
                    lds: req.lds,
                    stats: report.to_string(),
                    counters: hw.map(|c| c.values(timing.as_ref())),
                    modeled_ns: timing.as_ref().map(|t| t.ns),
                    cycles: timing.as_ref().map(|t| t.cycles),
                    slack_warning: stats.slack_warning(),
                    trace,
                    page: OnceLock::new(),
                }))
            })
        })
        .map_err(|f| f.into_py(py))?;
    if let Some(w) = &data.slack_warning {
        let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        PyErr::warn(py, &category, &std::ffi::CString::new(w.replace('\0', " "))?, 1)?;
    }
    *core.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(data.clone());
    Ok(Launch { data })
}

/// The Python exception of an engine error: `GpuFault` for what a kernel did (a fault, an instruction that does
/// not decode, a runaway wave, a timeout), `ValueError` for a launch that cannot be set up, `WavejitError` for
/// the rest. The message is the engine's report, as `wavejit run` prints it.
pub(crate) fn engine_error(py: Python<'_>, e: EngineError) -> PyErr {
    let text = e.to_string();
    let fault = |kernel: &str, workgroup: Option<[u32; 3]>, wave: Option<u32>, pc: Option<u64>| {
        let err = GpuFault::new_err(text.clone());
        let v = err.value(py);
        // (setting attributes on a fresh exception object does not fail)
        let _ = v.setattr("kernel", kernel);
        let _ = v.setattr("workgroup", workgroup.map(|w| (w[0], w[1], w[2])));
        let _ = v.setattr("wave", wave);
        let _ = v.setattr("pc", pc);
        let _ = v.setattr("report", text.as_str());
        for k in ["instruction", "lane", "address"] {
            let _ = v.setattr(k, py.None());
        }
        err
    };
    match &e {
        EngineError::Fault {
            kernel,
            workgroup,
            wave,
            pc,
            text: inst,
            error,
        } => {
            let err = fault(kernel, Some(*workgroup), Some(*wave), Some(*pc));
            let v = err.value(py);
            let _ = v.setattr("instruction", inst.as_str());
            let (lane, address) = match error.as_ref() {
                ExecError::Memory { lane, fault, .. } => (*lane, Some(fault.address)),
                ExecError::Lds { lane, address, .. } => (Some(*lane), Some(*address)),
                _ => (None, None),
            };
            let _ = v.setattr("lane", lane);
            let _ = v.setattr("address", address);
            err
        }
        EngineError::IllegalInstruction {
            kernel,
            workgroup,
            wave,
            pc,
            ..
        } => fault(kernel, Some(*workgroup), Some(*wave), Some(*pc)),
        EngineError::Runaway {
            kernel,
            workgroup,
            wave,
            ..
        } => fault(kernel, Some(*workgroup), Some(*wave), None),
        EngineError::Timeout { kernel, .. } | EngineError::Stopped { kernel } => fault(kernel, None, None, None),
        EngineError::Dispatch(_)
        | EngineError::Kernarg(_)
        | EngineError::WrongTarget { .. }
        | EngineError::NoMetadata { .. } => pyo3::exceptions::PyValueError::new_err(text),
        EngineError::Alloc(emu_core::memory::AllocError::OutOfMemory { .. }) => {
            pyo3::exceptions::PyMemoryError::new_err(text)
        }
        _ => WavejitError::new_err(text),
    }
}

/// One launch: what it ran, its statistics and counters, and its explorer page when it was recorded.
#[pyclass(module = "wavejit._wavejit", frozen)]
pub struct Launch {
    pub(crate) data: Arc<LaunchData>,
}

#[pymethods]
impl Launch {
    #[getter]
    fn kernel(&self) -> &str {
        &self.data.kernel
    }

    #[getter]
    fn device(&self) -> &'static str {
        self.data.device
    }

    #[getter]
    fn engine(&self) -> &'static str {
        self.data.engine
    }

    /// The grid in work-items.
    #[getter]
    fn grid(&self) -> (u32, u32, u32) {
        let g = self.data.grid;
        (g[0], g[1], g[2])
    }

    #[getter]
    fn block(&self) -> (u32, u32, u32) {
        let b = self.data.block;
        (b[0], b[1], b[2])
    }

    /// LDS bytes per workgroup asked for at launch.
    #[getter]
    fn lds(&self) -> u32 {
        self.data.lds
    }

    /// The statistics, as `wavejit run --stats-json` writes them: workgroups, waves, wave instructions, host
    /// seconds and the JIT's work; with timing the modeled `cycles`, `ns` and `timing` (occupancy, issued and
    /// busy per unit, stalls, every memory level with its hit rate, LDS bank conflicts).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.data.stats)
    }

    /// The hardware-named counters (`SQ_WAVES`, `SQ_INSTS_VALU`, ... and with timing the modeled `GRBM_GUI_ACTIVE`,
    /// `TCC_HIT`, ...), or `None` on a device made with `counters=False`.
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(c) = &self.data.counters else {
            return Ok(None);
        };
        crate::dict(py, c.iter().map(|(k, v)| (*k, *v))).map(Some)
    }

    /// Modeled nanoseconds (`None` without timing).
    #[getter]
    fn modeled_ns(&self) -> Option<f64> {
        self.data.modeled_ns
    }

    /// Modeled cycles (`None` without timing).
    #[getter]
    fn cycles(&self) -> Option<u64> {
        self.data.cycles
    }

    /// Whether the launch was recorded for the explorer.
    #[getter]
    fn recorded(&self) -> bool {
        self.data.trace.is_some()
    }

    /// The wavefront explorer's page of the launch (a self-contained HTML document, as `wavejit trace --html`
    /// writes it).
    fn trace_html(&self, py: Python<'_>) -> PyResult<String> {
        let Some(trace) = &self.data.trace else {
            return Err(WavejitError::new_err(format!(
                "the launch of {} was not recorded: launch with trace=True (kernel(..., trace=True)) to see it in \
                 the explorer",
                self.data.kernel
            )));
        };
        let page = py.allow_threads(|| {
            self.data
                .page
                .get_or_init(|| {
                    guarded("drawing the explorer page", || {
                        inspect::explorer::html(trace).map_err(|e| Failure::Other(e.to_string()))
                    })
                    .map_err(|f| format!("{f:?}"))
                })
                .clone()
        });
        page.map_err(WavejitError::new_err)
    }

    /// Recorded instructions, and instructions the whole launch ran (`None` when not recorded).
    #[getter]
    fn recorded_instructions(&self) -> Option<(u64, u64)> {
        self.data.trace.as_ref().map(|t| (t.recorded, t.total))
    }

    fn __repr__(&self) -> String {
        let d = &self.data;
        format!(
            "<wavejit.Launch {} on {} ({}): grid {:?} block {:?}{}>",
            isa_amdgpu::codeobj::names::demangle(&d.kernel),
            d.device,
            d.engine,
            d.grid,
            d.block,
            d.modeled_ns
                .map(|ns| format!(", {ns:.0} ns modeled"))
                .unwrap_or_default()
        )
    }

    /// A notebook's view: the explorer page when the launch was recorded, else a table of its statistics.
    fn _repr_html_(&self, py: Python<'_>) -> PyResult<String> {
        if self.data.trace.is_some() {
            let page = self.trace_html(py)?;
            return Ok(format!(
                "<iframe srcdoc=\"{}\" style=\"width:100%;height:760px;border:1px solid #ccc\"></iframe>",
                escape(&page)
            ));
        }
        let d = &self.data;
        let stats: serde_json::Value = serde_json::from_str(&d.stats).unwrap_or_default();
        let mut rows = vec![
            ("kernel", isa_amdgpu::codeobj::names::demangle(&d.kernel)),
            ("device", d.device.to_string()),
            ("engine", d.engine.to_string()),
            ("grid (work-items)", format!("{:?}", d.grid)),
            ("block", format!("{:?}", d.block)),
        ];
        for k in ["workgroups", "waves", "wave_instructions"] {
            rows.push((k, stats[k].to_string()));
        }
        if let (Some(c), Some(ns)) = (d.cycles, d.modeled_ns) {
            rows.push(("modeled cycles", c.to_string()));
            rows.push(("modeled time", format!("{:.2} us", ns / 1e3)));
            let occ = &stats["timing"]["occupancy"]["achieved"];
            if let Some(o) = occ.as_f64() {
                rows.push(("occupancy", format!("{:.0}%", o * 100.0)));
            }
        }
        let mut html = String::from("<table>");
        for (k, v) in rows {
            html += &format!(
                "<tr><th style=\"text-align:left\">{}</th><td>{}</td></tr>",
                escape(k),
                escape(&v)
            );
        }
        html += "</table><p>launch with <code>trace=True</code> to see it in the wavefront explorer</p>";
        Ok(html)
    }
}

/// `text` safe inside HTML text and double-quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}
