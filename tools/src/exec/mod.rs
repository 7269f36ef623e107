//! `wavejit exec -- PROGRAM ARGS…`: runs an unmodified ROCm program against the runtime shim.
//!
//! A private directory holds `libhsa-runtime64.so.1` (a link to the shim built next to this binary), an
//! `lsmod` that lists `amdgpu` (found first on PATH), a `target.lst` naming the emulated targets (ROCm's
//! `rocm_agent_enumerator` reads it through `ROCM_TARGET_LST`, so `hipcc` without `--offload-arch` compiles
//! for them), a preload library that lets the program open `/dev/kfd` (it gets `/dev/null`), and the kernel's
//! view of the emulated GPUs (amdgpu sysfs and KFD topology, `sysfs.rs`), to which the preload sends the
//! program's reads of those paths, so `rocm-smi` runs unmodified. Nothing outside that directory and the
//! child's environment is touched.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use emu_core::DevicePreset;

mod sysfs;

const KFD_PRELOAD: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libwavejit-kfd.so"));

/// The runtime shim: `WAVEJIT_SHIM`, or `libhsa_runtime64.so` beside this executable (where cargo builds it).
fn shim() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("WAVEJIT_SHIM") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let beside = exe.with_file_name("libhsa_runtime64.so");
    if beside.exists() {
        return Ok(beside);
    }
    Err(format!("the runtime shim {} is missing: build it with `cargo build -p runtime-shim` (same profile as wavejit), or set WAVEJIT_SHIM", beside.display()))
}

/// `program` as the shell would find it.
fn resolve(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The presets matching the GPU targets the program's fat binary carries (e.g. gfx942 → mi300x).
fn devices_for(program: &Path) -> Vec<&'static str> {
    let Ok(bundles) = isa_amdgpu::codeobj::list_bundles(program) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in bundles.iter().flat_map(|b| &b.entries) {
        for p in emu_core::device::PRESETS {
            let gfx = format!("--{}", p.gfx);
            if (e.id.ends_with(&gfx) || e.id.contains(&format!("{gfx}:")))
                && !found.iter().any(|f: &&DevicePreset| f.gfx == p.gfx)
            {
                found.push(p);
            }
        }
    }
    // prefer the newest model of a target (mi210 for gfx90a is listed before mi250x)
    found.iter().map(|p| p.id).collect()
}

/// `--debug KERNEL` and `--trace-html PATH`: what the shim runs its dispatches of a kernel under, as the
/// environment variables it reads (`runtime_shim::inspect`).
#[derive(Debug, Default, Clone)]
pub struct Inspect {
    pub debug: Option<String>,
    pub wave: Option<String>,
    pub json: bool,
    pub trace_html: Option<PathBuf>,
    pub kernel: Option<String>,
    pub max_recorded: Option<u64>,
}

impl Inspect {
    fn env(&self) -> Result<Vec<(&'static str, std::ffi::OsString)>, String> {
        let mut v = Vec::new();
        if let Some(k) = &self.debug {
            v.push(("WAVEJIT_DEBUG", k.into()));
            if let Some(w) = &self.wave {
                v.push(("WAVEJIT_DEBUG_WAVE", w.into()));
            }
            if self.json {
                v.push(("WAVEJIT_DEBUG_JSON", "1".into()));
            }
        }
        if let Some(p) = &self.trace_html {
            let k = self
                .kernel
                .as_ref()
                .ok_or("--trace-html needs --kernel NAME (the kernel whose first dispatch is recorded)")?;
            let p = if p.is_absolute() {
                p.clone()
            } else {
                std::env::current_dir().map_err(|e| e.to_string())?.join(p)
            };
            v.push(("WAVEJIT_TRACE_HTML", p.into_os_string()));
            v.push(("WAVEJIT_TRACE_KERNEL", k.into()));
            if let Some(m) = self.max_recorded {
                v.push(("WAVEJIT_TRACE_MAX", m.to_string().into()));
            }
        }
        Ok(v)
    }
}

/// Runs `command` on emulated GPUs; `memcheck` sets `WAVEJIT_MEMCHECK=1` for it (every byte outside an
/// allocation faults).
#[allow(clippy::too_many_arguments)]
pub fn run(
    devices: Option<&str>,
    engine: Option<&str>,
    timing: bool,
    memcheck: bool,
    max_instructions: Option<u64>,
    inspect: &Inspect,
    command: &[String],
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let env = if memcheck {
        vec![("WAVEJIT_MEMCHECK".to_string(), "1".to_string())]
    } else {
        Vec::new()
    };
    run_with_env(devices, engine, timing, max_instructions, inspect, command, &env)
}

/// [`run`] with extra environment variables for the program (and so its child processes).
#[allow(clippy::too_many_arguments)]
pub fn run_with_env(
    devices: Option<&str>,
    engine: Option<&str>,
    timing: bool,
    max_instructions: Option<u64>,
    inspect: &Inspect,
    command: &[String],
    env: &[(String, String)],
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let inspect_env = inspect.env()?;
    let (program, args) = command
        .split_first()
        .ok_or("wavejit exec needs a program to run: wavejit exec -- PROGRAM [ARGS…]")?;
    let devices = match devices {
        Some(d) => d.to_string(),
        None => {
            let found = resolve(program).map(|p| devices_for(&p)).unwrap_or_default();
            if found.is_empty() {
                "mi210".to_string()
            } else {
                found.join(",")
            }
        }
    };
    for d in devices.split(',') {
        DevicePreset::by_name(d.trim())?;
    }
    if let Some(e) = engine.filter(|e| !matches!(*e, "jit" | "interp" | "crosscheck")) {
        return Err(format!("--engine {e}: expected jit, interp or crosscheck").into());
    }
    let shim = shim()?;
    let dir = std::env::temp_dir().join(format!("wavejit-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> Result<ExitCode, Box<dyn std::error::Error>> {
        let link = dir.join("libhsa-runtime64.so.1");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&shim, &link)?;
        let preload = dir.join("libwavejit-kfd.so");
        std::fs::write(&preload, KFD_PRELOAD)?;
        let presets: Vec<&'static DevicePreset> = devices
            .split(',')
            .filter_map(|d| DevicePreset::by_name(d.trim()).ok())
            .collect();
        let gfx: Vec<&str> = presets.iter().map(|p| p.gfx).collect();
        // the driver's view for rocm-smi and anything else reading sysfs; the program runs without it if it fails
        let sysfs_root = dir.join("sysfs");
        let tree = sysfs::Tree::build(&sysfs_root, &presets)
            .map_err(|e| {
                eprintln!(
                    "wavejit: no sysfs view of the emulated GPUs for rocm-smi ({}: {e})",
                    sysfs_root.display()
                )
            })
            .ok();
        script(
            &dir.join("lsmod"),
            "echo 'Module                  Size  Used by'\necho 'amdgpu              16777216  0'\n",
        )?;
        // ROCm's own rocm_agent_enumerator (and so hipcc without --offload-arch) reads targets from this list
        let targets = dir.join("target.lst");
        std::fs::write(&targets, gfx.iter().map(|g| format!("{g}\n")).collect::<String>())?;
        let join = |var: &str, first: &Path| -> std::ffi::OsString {
            let mut v = first.as_os_str().to_owned();
            if let Some(old) = std::env::var_os(var).filter(|o| !o.is_empty()) {
                v.push(":");
                v.push(old);
            }
            v
        };
        let mut preloads = preload.as_os_str().to_owned();
        if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
            preloads.push(":");
            preloads.push(old);
        }
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("LD_LIBRARY_PATH", join("LD_LIBRARY_PATH", &dir))
            .env("PATH", join("PATH", &dir))
            .env("LD_PRELOAD", preloads)
            .env("ROCM_TARGET_LST", &targets)
            .env("WAVEJIT_DEVICES", &devices);
        if tree.is_some() {
            cmd.env("WAVEJIT_SYSFS", &sysfs_root);
        }
        if let Some(e) = engine {
            cmd.env("WAVEJIT_ENGINE", e);
        }
        if timing {
            cmd.env("WAVEJIT_TIMING", "1");
        }
        if let Some(n) = max_instructions {
            cmd.env("WAVEJIT_MAX_INSTRUCTIONS", n.to_string());
        }
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        cmd.envs(inspect_env.iter().map(|(k, v)| (*k, v)));
        let mut child = cmd.spawn().map_err(|e| format!("cannot run {program}: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let refresher = tree.map(|t| t.refresh_until(stop.clone()));
        let status = child.wait();
        stop.store(true, Ordering::Release);
        if let Some(r) = refresher {
            let _ = r.join();
        }
        let status = status.map_err(|e| format!("waiting for {program}: {e}"))?;
        Ok(match (status.code(), status.signal()) {
            (Some(c), _) => ExitCode::from(c as u8),
            (None, Some(s)) => {
                eprintln!("wavejit: {program} was killed by signal {s}");
                ExitCode::from(128 + s as u8)
            }
            _ => ExitCode::FAILURE,
        })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn script(path: &Path, body: &str) -> std::io::Result<()> {
    std::fs::write(path, format!("#!/bin/sh\n{body}"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}
