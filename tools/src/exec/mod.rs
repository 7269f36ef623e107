//! `wavejit exec -- PROGRAM ARGS…`: runs an unmodified ROCm program against the runtime shim.
//!
//! A private directory holds `libhsa-runtime64.so.1` (a link to the shim built next to this binary, or the copy
//! a release binary carries), an `lsmod` that lists `amdgpu` (found first on PATH), a `target.lst` naming the
//! emulated targets (ROCm's `rocm_agent_enumerator` reads it through `ROCM_TARGET_LST`, so `hipcc` without
//! `--offload-arch` compiles for them), a preload library that lets the program open `/dev/kfd` (it gets
//! `/dev/null`), and the kernel's view of the emulated GPUs (amdgpu sysfs and KFD topology, `sysfs.rs`), to which
//! the preload sends the program's reads of those paths, so `rocm-smi` runs unmodified. Nothing outside that
//! directory and the child's environment is touched.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use emu_core::DevicePreset;

mod check;
mod report;
mod sysfs;

const KFD_PRELOAD: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libwavejit-kfd.so"));

/// Which way a program reaches the emulated GPUs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// wavejit's own HSA runtime replaces ROCm's (`libhsa-runtime64.so.1`).
    #[default]
    Hsa,
    /// The program's own ROCm (or tinygrad's runtime) runs over the emulated kernel driver.
    Kfd,
}

impl std::str::FromStr for Route {
    type Err = String;
    fn from_str(s: &str) -> Result<Route, String> {
        match s {
            "hsa" => Ok(Route::Hsa),
            "kfd" => Ok(Route::Kfd),
            other => Err(format!(
                "--driver {other}: expected hsa (wavejit's HSA runtime, the default) or kfd (the emulated kernel driver under the program's own ROCm)"
            )),
        }
    }
}

/// A shared library `exec` loads into the program: a file, or the bytes a release binary carries.
enum Library {
    File(PathBuf),
    Embedded(&'static [u8]),
}

impl Library {
    /// Puts the library at `at` (in `exec`'s private directory): a link to the file, or the embedded bytes.
    fn place(&self, at: &Path) -> std::io::Result<()> {
        let _ = std::fs::remove_file(at);
        match self {
            Library::File(path) => std::os::unix::fs::symlink(path, at),
            Library::Embedded(bytes) => {
                std::fs::write(at, bytes)?;
                std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755))
            }
        }
    }
}

#[cfg(wavejit_embedded)]
const EMBEDDED_SHIM: Option<&[u8]> = Some(include_bytes!(env!("WAVEJIT_EMBEDDED_SHIM")));
#[cfg(not(wavejit_embedded))]
const EMBEDDED_SHIM: Option<&[u8]> = None;
#[cfg(wavejit_embedded)]
const EMBEDDED_DRIVER: Option<&[u8]> = Some(include_bytes!(env!("WAVEJIT_EMBEDDED_DRIVER")));
#[cfg(not(wavejit_embedded))]
const EMBEDDED_DRIVER: Option<&[u8]> = None;

/// The emulated driver: `WAVEJIT_DRIVER`, or `libwavejit_driver.so` where [`library`] finds it.
fn driver_library() -> Result<Library, String> {
    library(
        "WAVEJIT_DRIVER",
        "libwavejit_driver.so",
        EMBEDDED_DRIVER,
        "wavejit-driver",
        "emulated driver",
    )
}

/// The runtime shim: `WAVEJIT_SHIM`, or `libhsa_runtime64.so` where [`library`] finds it.
fn shim() -> Result<Library, String> {
    library(
        "WAVEJIT_SHIM",
        "libhsa_runtime64.so",
        EMBEDDED_SHIM,
        "runtime-shim",
        "runtime shim",
    )
}

/// A library `exec` loads into the program: the path in the environment variable `var`, else `file` beside this
/// executable (where cargo builds it) or in `../lib/wavejit/` from it (a release tarball's layout), so an
/// unpacked release works from wherever it is put, else the copy a release build embeds (a `wavejit` installed
/// alone, by `cargo install`).
fn library(
    var: &str,
    file: &str,
    embedded: Option<&'static [u8]>,
    package: &str,
    what: &str,
) -> Result<Library, String> {
    if let Some(p) = std::env::var_os(var) {
        return Ok(Library::File(PathBuf::from(p)));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let beside = exe.with_file_name(file);
    let released = exe
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join("lib/wavejit").join(file));
    if let Some(found) = std::iter::once(beside.clone())
        .chain(released.clone())
        .find(|p| p.exists())
    {
        return Ok(Library::File(found));
    }
    if let Some(bytes) = embedded {
        return Ok(Library::Embedded(bytes));
    }
    let looked = match &released {
        Some(r) => format!("{} or {}", beside.display(), r.display()),
        None => beside.display().to_string(),
    };
    Err(format!(
        "the {what} is missing (looked for {looked}): build it with `cargo build -p {package}` (same profile as \
         wavejit), set {var}, or use a release build, which carries it"
    ))
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

/// The presets matching the GPU targets the program's fat binary carries ([`preset_for_target`]).
fn devices_for(program: &Path) -> Vec<&'static str> {
    check::fat_binary_targets(program)
        .iter()
        .filter_map(|t| preset_for_target(t))
        .map(|p| p.id)
        .collect()
}

/// The preset `exec` emulates for a program built for GPU target `gfx` (e.g. gfx942 → mi300x): the first of
/// [`emu_core::PRESETS`] with that target (mi210 for gfx90a, listed before mi250x-gcd).
pub fn preset_for_target(gfx: &str) -> Option<&'static DevicePreset> {
    emu_core::PRESETS.iter().find(|p| p.gfx == gfx)
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
        // options that only mean something beside another are usage errors without it, not silent no-ops
        if self.debug.is_none() && (self.wave.is_some() || self.json) {
            return Err("--wave and --json choose how --debug KERNEL runs: add --debug KERNEL".into());
        }
        if self.trace_html.is_none() && (self.kernel.is_some() || self.max_recorded.is_some()) {
            return Err(
                "--kernel and --max-recorded choose what --trace-html records: add --trace-html OUT.html (the debugger takes its kernel as --debug KERNEL)"
                    .into(),
            );
        }
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

/// How `wavejit exec` (and `profile`, which runs the program the same way) runs a program.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Emulated GPUs, comma-separated (default: from the program's fat binary).
    pub devices: Option<String>,
    pub engine: Option<String>,
    pub timing: bool,
    /// Every byte outside an allocation faults (`WAVEJIT_MEMCHECK=1`).
    pub memcheck: bool,
    /// Per-wave instruction limit (`WAVEJIT_MAX_INSTRUCTIONS`; 0: none).
    pub max_instructions: Option<u64>,
    /// Seconds a dispatch may run (`WAVEJIT_TIMEOUT`).
    pub timeout: Option<String>,
    pub inspect: Inspect,
    /// Extra environment variables for the program (and so its child processes).
    pub env: Vec<(String, String)>,
    pub route: Route,
}

/// Runs `command` on emulated GPUs as `o` says.
pub fn run(o: &Options, command: &[String]) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let Options {
        devices,
        engine,
        timing,
        memcheck,
        max_instructions,
        timeout,
        inspect,
        env,
        route,
    } = o;
    let (devices, engine, timing, max_instructions) =
        (devices.as_deref(), engine.as_deref(), *timing, *max_instructions);
    if let Some(t) = timeout {
        emu_core::watch::parse_timeout(t).map_err(|e| format!("--timeout {t}: {e}"))?;
    }
    let inspect_env = inspect.env()?;
    let (program, args) = command
        .split_first()
        .ok_or("wavejit exec needs a program to run: wavejit exec -- PROGRAM [ARGS…]")?;
    let devices = match devices {
        Some(d) => d.to_string(),
        None => {
            let found = resolve(program).map(|p| devices_for(&p)).unwrap_or_default();
            if found.is_empty() {
                DevicePreset::program_default().id.to_string()
            } else {
                found.join(",")
            }
        }
    };
    let chosen = devices
        .split(',')
        .map(|d| DevicePreset::by_name(d.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(path) = resolve(program) {
        check::devices_fit(&path, &chosen)?;
    }
    if let Some(e) = engine.filter(|e| !matches!(*e, "jit" | "interp" | "crosscheck")) {
        return Err(format!("--engine {e}: expected jit, interp or crosscheck").into());
    }
    // the drop-in route puts wavejit's runtime where the program looks for ROCm's; the driver route leaves the
    // program its own and loads the emulated driver into it
    let (shim, driver) = match route {
        Route::Hsa => (Some(shim()?), None),
        Route::Kfd => (None, Some(driver_library()?)),
    };
    let dir = std::env::temp_dir().join(format!("wavejit-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> Result<ExitCode, Box<dyn std::error::Error>> {
        if let Some(shim) = &shim {
            shim.place(&dir.join("libhsa-runtime64.so.1"))?;
        }
        let preload = dir.join("libwavejit-kfd.so");
        std::fs::write(&preload, KFD_PRELOAD)?;
        // LD_PRELOAD splits at spaces as well as colons, so the driver is preloaded from this directory, whose
        // path is checked below, not from wherever wavejit was unpacked
        let driver = match &driver {
            Some(lib) => {
                let at = dir.join("libwavejit_driver.so");
                lib.place(&at)?;
                Some(at)
            }
            None => None,
        };
        if dir.to_string_lossy().contains([' ', ':']) {
            return Err(format!(
                "the temporary directory {} has a space or a colon in its path, which LD_PRELOAD cannot name: set \
                 TMPDIR to another directory",
                dir.display()
            )
            .into());
        }
        let presets: Vec<&'static DevicePreset> = devices
            .split(',')
            .filter_map(|d| DevicePreset::by_name(d.trim()).ok())
            .collect();
        let gfx: Vec<&str> = presets.iter().map(|p| p.gfx).collect();
        // the driver's view for rocm-smi and anything else reading sysfs; the program runs without it if it fails
        let sysfs_root = dir.join("sysfs");
        let tree = sysfs::Tree::build(&sysfs_root, &presets, *route == Route::Kfd)
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
        // the driver first: it answers /dev/kfd and the render nodes; the sysfs redirection after it
        let mut preloads = std::ffi::OsString::new();
        if let Some(d) = &driver {
            preloads.push(d.as_os_str());
            preloads.push(":");
        }
        preloads.push(preload.as_os_str());
        if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
            preloads.push(":");
            preloads.push(old);
        }
        let reports = dir.join("reports");
        std::fs::create_dir_all(&reports)?;
        // under the emulated driver, each GPU's memory is one file all processes of the program share
        let vram = match route {
            Route::Kfd => presets.iter().map(|p| shared_vram(p)).collect::<Result<Vec<_>, _>>()?,
            Route::Hsa => Vec::new(),
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("LD_LIBRARY_PATH", join("LD_LIBRARY_PATH", &dir))
            .env("PATH", join("PATH", &dir))
            .env("LD_PRELOAD", preloads)
            .env("ROCM_TARGET_LST", &targets)
            .env("WAVEJIT_DEVICES", &devices)
            .env(profiler_hooks::exec_report::VAR, &reports);
        if !vram.is_empty() {
            let fds: Vec<String> = vram
                .iter()
                .map(|f| std::os::fd::AsRawFd::as_raw_fd(f).to_string())
                .collect();
            cmd.env(gpu::vram::VRAM_FDS, fds.join(","));
        }
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
        if let Some(t) = timeout {
            cmd.env(emu_core::watch::TIMEOUT_VAR, t);
        }
        if *memcheck {
            cmd.env("WAVEJIT_MEMCHECK", "1");
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
        let mut code = match (status.code(), status.signal()) {
            (Some(c), _) => c as u8,
            (None, Some(s)) => {
                eprintln!("wavejit: {program} was killed by signal {s}");
                128 + s as u8
            }
            _ => 1,
        };
        let (report, processes) = profiler_hooks::exec_report::read_dir(&reports);
        if let Some(s) = report::timing_summary(&report) {
            eprint!("{s}");
        }
        let asked = [("--debug", &inspect.debug), ("--trace-html --kernel", &inspect.kernel)];
        for (option, kernel) in asked {
            if let Some(e) = kernel
                .as_deref()
                .and_then(|k| report::never_dispatched(&report, processes, option, k))
            {
                eprintln!("wavejit: {e}");
                if code == 0 {
                    code = 1;
                }
            }
        }
        Ok(ExitCode::from(code))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A GPU's memory file for the processes of a program (`gpu::vram`): a sparse memory file they inherit.
fn shared_vram(preset: &DevicePreset) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let name = std::ffi::CString::new(format!("wavejit-vram-{}", preset.id)).map_err(std::io::Error::other)?;
    // SAFETY: memfd_create with a NUL-terminated name; without MFD_CLOEXEC the program inherits it.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor, owned from here on.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    // SAFETY: sizing the file this function made.
    if unsafe {
        libc::ftruncate(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            gpu::vram::file_len(preset) as libc::off_t,
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

fn script(path: &Path, body: &str) -> std::io::Result<()> {
    std::fs::write(path, format!("#!/bin/sh\n{body}"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}
