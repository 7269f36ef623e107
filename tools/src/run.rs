//! `wavejit run`: one kernel dispatch on an emulated GPU, arguments from the command line and files.

use std::path::{Path, PathBuf};
use std::time::Instant;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};

use crate::engine::{dispatch_timed, Dispatch, EngineKind, JitDelta};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj;
use isa_amdgpu::codeobj::names::pick_kernel;
use profiler_hooks::record::{AgentInfo, DispatchRecord, ProcessInfo, Session};
use profiler_hooks::{ClassCounter, HwCounters};

/// Options of `wavejit run`.
pub struct RunArgs {
    pub file: PathBuf,
    pub kernel: Option<String>,
    pub grid: String,
    pub block: String,
    pub device: Option<String>,
    pub args: Vec<String>,
    /// Dynamic LDS bytes per workgroup.
    pub lds: u32,
    pub stats_json: Option<PathBuf>,
    pub max_instructions: u64,
    /// `--timeout SECS`: stop the dispatch after so long (else `WAVEJIT_TIMEOUT`).
    pub timeout: Option<String>,
    /// Every byte outside an allocation is a fault ([`DeviceMemory::set_memcheck`]).
    pub memcheck: bool,
    pub threads: Option<usize>,
    pub engine: EngineKind,
    /// Run in the timing model.
    pub timing: bool,
    /// Block entries interpreted before the JIT translates a block (`None`: the default engine's).
    pub hot_after: Option<u32>,
    /// Profile the dispatch into this directory.
    pub profile: Option<PathBuf>,
    /// Waves whose instructions are traced (with `profile` and `timing`).
    pub wave_trace: usize,
}

pub fn dims(what: &str, s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{what} takes X[,Y[,Z]], got `{s}`"));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .trim()
            .parse()
            .map_err(|_| format!("--{what}: `{p}` is not a positive integer"))?;
    }
    Ok(d)
}

/// A buffer argument to copy back after the run.
struct Output {
    path: PathBuf,
    addr: u64,
    len: usize,
}

fn parse_arg(mem: &DeviceMemory, spec: &str, outputs: &mut Vec<Output>) -> Result<ArgValue, String> {
    let (kind, val) = spec.split_once('=').ok_or_else(|| {
        format!("--arg `{spec}`: expected KIND=VALUE (u32=1, f32=2.5, in=PATH, out=PATH:BYTES, inout=PATH)")
    })?;
    let bad = |e: &dyn std::fmt::Display| format!("--arg `{spec}`: {e}");
    Ok(match kind {
        "u32" => ArgValue::U32(val.parse().map_err(|e| bad(&e))?),
        "i32" => ArgValue::I32(val.parse().map_err(|e| bad(&e))?),
        "u64" => ArgValue::U64(val.parse().map_err(|e| bad(&e))?),
        "i64" => ArgValue::I64(val.parse().map_err(|e| bad(&e))?),
        "f32" => ArgValue::F32(val.parse().map_err(|e| bad(&e))?),
        "f64" => ArgValue::F64(val.parse().map_err(|e| bad(&e))?),
        "in" | "inout" => {
            let data = std::fs::read(val).map_err(|e| bad(&format!("{val}: {e}")))?;
            let addr = mem
                .allocate(data.len() as u64, AllocKind::Buffer, val)
                .map_err(|e| bad(&e))?;
            mem.write(addr, &data).map_err(|e| bad(&e))?;
            if kind == "inout" {
                outputs.push(Output {
                    path: val.into(),
                    addr,
                    len: data.len(),
                });
            }
            ArgValue::Pointer(addr)
        }
        "out" => {
            let (path, bytes) = val.rsplit_once(':').ok_or_else(|| bad(&"out= takes PATH:BYTES"))?;
            let len: usize = bytes.parse().map_err(|e| bad(&e))?;
            let addr = mem.allocate(len as u64, AllocKind::Buffer, path).map_err(|e| bad(&e))?;
            outputs.push(Output {
                path: path.into(),
                addr,
                len,
            });
            ArgValue::Pointer(addr)
        }
        other => {
            return Err(format!(
                "--arg `{spec}`: unknown kind `{other}` (u32 i32 u64 i64 f32 f64 in out inout)"
            ))
        }
    })
}

/// A kernel, its device and its arguments, ready to dispatch: what `run`, `debug` and `trace` share.
pub struct Prepared {
    pub co: codeobj::CodeObject,
    pub kernel_index: usize,
    pub device: &'static DevicePreset,
    pub shape: DispatchShape,
    pub mem: DeviceMemory,
    pub args: Vec<ArgValue>,
    /// LDS bytes per workgroup asked for at launch, beyond the kernel's static LDS.
    pub dynamic_lds: u32,
    outputs: Vec<Output>,
}

impl Prepared {
    /// Loads `file`, chooses the kernel and device, checks that the kernel's LDS and `lds` bytes of dynamic
    /// LDS fit the device, allocates the buffer arguments and fills them; in memcheck mode when `memcheck`
    /// ([`DeviceMemory::set_memcheck`], set before the buffers are allocated so that they get redzones).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        file: &Path,
        kernel: Option<&str>,
        device: Option<&str>,
        grid: &str,
        block: &str,
        args: &[String],
        lds: u32,
        memcheck: bool,
    ) -> Result<Prepared, Box<dyn std::error::Error>> {
        let wanted = device.map(DevicePreset::by_name).transpose()?;
        let objects = codeobj::open_any(file, wanted.map(|d| d.gfx))?;
        let loaded = objects
            .into_iter()
            .find(|l| isa_amdgpu::Target::from_name(&l.code_object.target.processor).is_some_and(|t| t.is_executed()))
            .ok_or_else(|| {
                format!(
                    "{}: no gfx90a/gfx942 code object{}",
                    file.display(),
                    wanted.map(|d| format!(" for {}", d.gfx)).unwrap_or_default()
                )
            })?;
        let co = loaded.code_object;
        let device = match wanted {
            Some(d) => d,
            None => emu_core::PRESETS
                .iter()
                .find(|p| p.gfx == co.target.processor)
                .ok_or_else(|| format!("no preset runs {}", co.target.processor))?,
        };
        let kernel_index = match kernel {
            Some(k) => pick_kernel(&co, k).map_err(|e| format!("{}: {e}", file.display()))?,
            None if co.kernels.len() == 1 => 0,
            None => {
                return Err(format!(
                    "{} has {} kernels; choose one with --kernel",
                    file.display(),
                    co.kernels.len()
                )
                .into())
            }
        };
        crate::engine::group_segment(device, &co.kernels[kernel_index], lds)?;
        let shape = DispatchShape::new(dims("grid", grid)?, dims("block", block)?, device)?;
        let mem = DeviceMemory::new(device.memory_bytes)?;
        mem.set_memcheck(memcheck);
        let mut outputs = Vec::new();
        let args = args
            .iter()
            .map(|s| parse_arg(&mem, s, &mut outputs))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Prepared {
            co,
            kernel_index,
            device,
            shape,
            mem,
            args,
            dynamic_lds: lds,
            outputs,
        })
    }

    pub fn kernel(&self) -> &codeobj::Kernel {
        &self.co.kernels[self.kernel_index]
    }

    /// The dispatch with `limits`.
    pub fn dispatch(&self, limits: Limits) -> Result<Dispatch<'_>, String> {
        let kernel = KernelDispatch {
            mem: &self.mem,
            device: self.device,
            co: &self.co,
            kernel: self.kernel(),
            shape: self.shape,
            args: &self.args,
            limits,
        };
        Dispatch::new(kernel, self.dynamic_lds)
    }

    /// Writes the `out=` and `inout=` buffers to their files, telling on stderr what went where.
    pub fn write_outputs(&self) -> Result<(), Box<dyn std::error::Error>> {
        for o in &self.outputs {
            let mut buf = vec![0u8; o.len];
            self.mem.read(o.addr, &mut buf)?;
            std::fs::write(&o.path, &buf).map_err(|e| format!("{}: {e}", o.path.display()))?;
            eprintln!("wrote {} bytes to {}", o.len, o.path.display());
        }
        Ok(())
    }
}

/// Runs the dispatch and reports.
pub fn run(a: RunArgs) -> Result<(), Box<dyn std::error::Error>> {
    let p = Prepared::new(
        &a.file,
        a.kernel.as_deref(),
        a.device.as_deref(),
        &a.grid,
        &a.block,
        &a.args,
        a.lds,
        a.memcheck,
    )?;
    let (device, kernel) = (p.device, p.kernel());
    let t0 = Instant::now();
    let counter = ClassCounter::default();
    let limits = Limits {
        max_wave_instructions: emu_core::engine::instruction_limit(a.max_instructions),
        threads: a.threads,
        timing: a.timing,
        watch: Some(watch(a.timeout.as_deref())?),
        ..Limits::default()
    };
    let mut options = jit::JitOptions::from_env();
    if let Some(n) = a.hot_after {
        options.hot_after = n;
        options.hot_after_cached = options.hot_after_cached.min(n);
    }
    let jit = jit::Jit::with_options(options)?;
    // the interpreter also counts instructions per unit (an observer); the JIT runs unobserved
    let d = p.dispatch(limits)?;
    if a.wave_trace > 0 && !(a.timing && a.profile.is_some()) {
        return Err(
            "--wave-trace traces instruction issue of a profiled timed dispatch: add --profile DIR and --timing".into(),
        );
    }
    let profiled = a.profile.as_ref().map(|_| HwCounters::new(device, a.wave_trace));
    let host_start = profiler_hooks::record::now_ns();
    let (stats, jd, timing) = if let Some(counters) = &profiled {
        if a.engine == EngineKind::Crosscheck {
            return Err(
                "--profile runs on one engine: --engine jit or --engine interp (both give the same counts)".into(),
            );
        }
        let before = jit.stats();
        let on = (a.engine == EngineKind::Jit).then_some(&jit);
        let (s, t) = d.run_on(on, counters)?;
        (s, on.map(|j| JitDelta::since(&before, j)).unwrap_or_default(), t)
    } else if a.engine == EngineKind::Interp && !a.timing {
        (d.run_observed(&counter)?, Default::default(), None)
    } else {
        dispatch_timed(a.engine, &jit, d)?
    };
    let seconds = t0.elapsed().as_secs_f64();
    p.write_outputs()?;
    println!(
        "{} on {}: {} workgroups, {} waves, {} wave instructions in {:.3} s ({})",
        kernel.name,
        device.name,
        stats.workgroups,
        stats.waves,
        stats.wave_instructions,
        seconds,
        match a.engine {
            EngineKind::Interp => "interpreter".to_string(),
            e => format!(
                "{}: {} blocks translated, {} loaded from the disk cache, {} block runs interpreted before their blocks were hot, {} instructions executed by the interpreter for compiled blocks, {} memory accesses through its checked path",
                e.name(),
                jd.blocks,
                jd.loaded,
                jd.interpreted,
                jd.fallbacks,
                jd.checked_accesses
            ),
        }
    );
    if let Some(w) = stats.slack_warning() {
        println!("warning: {w}");
    }
    if let Some(t) = &timing {
        println!("{}", crate::timing::summary(t));
    }
    if let (Some(dir), Some(counters)) = (&a.profile, &profiled) {
        let session = one_dispatch_session(
            &a,
            device,
            kernel,
            &p.co,
            p.shape,
            host_start,
            counters,
            timing.as_ref(),
        );
        let written = crate::profile::write_outputs(&session, dir, crate::profile::Formats::ALL)?;
        println!(
            "profile: {}",
            written
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(p) = &a.stats_json {
        let by_unit = (a.engine == EngineKind::Interp && timing.is_none()).then_some(&counter);
        let j = gpu::stats::Report {
            kernel: &kernel.name,
            device: device.id,
            engine: a.engine.name(),
            stats: &stats,
            memcheck: a.memcheck,
            seconds,
            jit: jd,
            timing: timing.as_ref(),
            by_unit,
        }
        .json()?;
        write_json(p, &j)?;
    }
    Ok(())
}

fn write_json(p: &Path, j: &serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::write(p, serde_json::to_string_pretty(j)? + "\n").map_err(|e| format!("{}: {e}", p.display()).into())
}

/// The profile of `wavejit run --profile`: this process, its one device and the one dispatch.
#[allow(clippy::too_many_arguments)]
fn one_dispatch_session(
    a: &RunArgs,
    device: &emu_core::DevicePreset,
    kernel: &codeobj::Kernel,
    co: &codeobj::CodeObject,
    shape: DispatchShape,
    host_start: u64,
    counters: &HwCounters,
    timing: Option<&emu_core::timing::TimingStats>,
) -> Session {
    let pid = std::process::id();
    let kd = &kernel.descriptor;
    let (vgprs, agprs) = (kd.vgpr_alloc_count(), kd.agpr_alloc_count().unwrap_or(0));
    let selected = profiler_hooks::catalog::select(None, timing.is_some()).unwrap_or_default();
    let values = counters
        .values(timing)
        .into_iter()
        .filter(|(n, _)| selected.iter().any(|c| c.name == *n))
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    let end = profiler_hooks::record::now_ns();
    let dispatch = DispatchRecord {
        id: 1,
        pid,
        tid: 0,
        agent: 1,
        queue: 0,
        kernel: kernel.name.clone(),
        kernel_object: 0,
        grid: shape.grid,
        workgroup: shape.block,
        lds_bytes: kd.group_segment_fixed_size + a.lds,
        scratch_bytes: kd.private_segment_fixed_size,
        arch_vgprs: vgprs - agprs,
        accum_vgprs: profiler_hooks::record::accum_vgpr_count(
            co.kernel_metadata(kernel).and_then(|m| m.agpr_count),
            kd,
        ),
        sgprs: kd.sgpr_alloc_count().unwrap_or(0),
        wave_size: device.wave_size,
        start_ns: host_start,
        end_ns: end,
        modeled: timing.map(|t| (0, t.ns.round() as u64)),
        counters: values,
        error: None,
    };
    let agents = vec![
        AgentInfo {
            index: 0,
            kind: "cpu".into(),
            name: "host".into(),
            gfx: String::new(),
            compute_units: 0,
        },
        AgentInfo {
            index: 1,
            kind: device.id.into(),
            name: device.name.into(),
            gfx: co.target.processor.clone(),
            compute_units: device.compute_units,
        },
    ];
    let command = format!("wavejit run {}", a.file.display());
    let waves = counters.take_trace();
    Session {
        processes: vec![ProcessInfo {
            pid,
            ppid: 0,
            command,
            start_ns: host_start,
            timing: timing.is_some(),
            agents,
        }],
        dispatches: vec![dispatch],
        waves: if waves.is_empty() {
            Vec::new()
        } else {
            vec![(pid, 1, waves)]
        },
        ..Session::default()
    }
}

/// The watch of a dispatch: `--timeout SECS` when given, else `WAVEJIT_TIMEOUT`'s.
pub fn watch(timeout: Option<&str>) -> Result<emu_core::watch::Watch, String> {
    let w = emu_core::watch::Watch::from_env()?;
    Ok(match timeout {
        Some(t) => emu_core::watch::Watch {
            timeout: emu_core::watch::parse_timeout(t).map_err(|e| format!("--timeout {t}: {e}"))?,
            ..w
        },
        None => w,
    })
}
