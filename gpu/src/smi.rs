//! This process in the per-user SMI registry (`profiler_hooks::smi`), whichever route it reaches its GPUs by:
//! the drop-in runtime or the emulated driver publishes the emulated GPUs when it starts, counts their memory
//! (allocations from a GPU's memory pool, VRAM buffer objects), their queues and the time a dispatch runs on them,
//! and the record goes when the runtime shuts down or the process exits. `WAVEJIT_SMI=off` keeps the process out
//! of the registry.

use std::path::PathBuf;
use std::sync::{Mutex, Once};

use emu_core::DevicePreset;
use profiler_hooks::smi::{self, DeviceInfo, Publisher};

/// The record to remove at exit: (pid that made it, path).
static PUBLISHED: Mutex<Option<(u32, PathBuf)>> = Mutex::new(None);
static AT_EXIT: Once = Once::new();

extern "C" fn remove_at_exit() {
    let published = PUBLISHED.lock().unwrap_or_else(|e| e.into_inner()).take();
    // a forked child exits with its parent's path recorded: the record is the parent's
    if let Some((_, path)) = published.filter(|(pid, _)| *pid == std::process::id()) {
        let _ = std::fs::remove_file(path);
    }
}

/// The base name of `argv[0]`, as `ps` and SMI tools name a process.
fn program_name() -> String {
    let argv0 = std::fs::read("/proc/self/cmdline").ok().and_then(|c| {
        c.split(|&b| b == 0)
            .next()
            .map(|a| String::from_utf8_lossy(a).into_owned())
    });
    match argv0.filter(|a| !a.is_empty()) {
        Some(a) => a.rsplit('/').next().unwrap_or(&a).to_string(),
        None => std::fs::read_to_string("/proc/self/comm")
            .map(|c| c.trim().to_string())
            .unwrap_or_default(),
    }
}

/// Publishes this process with its GPUs `gpus` (in agent order); `None` when switched off or the registry
/// cannot be used (said once on stderr: the program runs on regardless).
pub fn publish(gpus: &[&'static DevicePreset]) -> Option<Publisher> {
    if std::env::var("WAVEJIT_SMI").is_ok_and(|v| v == "off" || v == "0") {
        return None;
    }
    let devices: Vec<DeviceInfo> = gpus
        .iter()
        .map(|g| DeviceInfo {
            preset: g.id,
            gfx: g.gfx,
            name: g.name,
            compute_units: g.compute_units,
            vram_total: g.memory_bytes,
            engine_clock_mhz: g.engine_clock_mhz,
            memory_clock_mhz: g.memory_clock_mhz,
            pci_device_id: g.pci_device_id,
        })
        .collect();
    match Publisher::create(&smi::registry_dir(), &program_name(), &devices) {
        Ok(p) => {
            *PUBLISHED.lock().unwrap_or_else(|e| e.into_inner()) = Some((std::process::id(), p.path().to_path_buf()));
            AT_EXIT.call_once(|| {
                // SAFETY: registers a plain function; it only touches a mutex-guarded path and the file system.
                unsafe { libc::atexit(remove_at_exit) };
            });
            Some(p)
        }
        Err(e) => {
            eprintln!("wavejit: {e}; this process will not show in `wavejit smi` or rocm-smi");
            None
        }
    }
}

/// The runtime shuts down: its record goes (the publisher itself lives until the runtime is dropped).
pub fn retire(p: &Publisher) {
    p.retire();
    let mut published = PUBLISHED.lock().unwrap_or_else(|e| e.into_inner());
    if published.as_ref().is_some_and(|(_, path)| path == p.path()) {
        *published = None;
    }
}
