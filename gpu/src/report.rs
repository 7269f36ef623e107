//! The report `wavejit exec` reads after the program ends (`profiler_hooks::exec_report`): every dispatch this
//! process ran, by kernel, written when the process exits. Nothing is kept unless exec asked for it.

use std::sync::{Mutex, OnceLock};

use profiler_hooks::exec_report::{ExecReport, KernelReport, VAR};

/// The report directory, if exec named one.
fn dir() -> Option<&'static std::path::PathBuf> {
    static DIR: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| std::env::var_os(VAR).filter(|d| !d.is_empty()).map(Into::into))
        .as_ref()
}

static REPORT: Mutex<Option<ExecReport>> = Mutex::new(None);

/// Counts a dispatch of `kernel`: its wave instructions, and in timing mode its modeled time and cycles.
pub fn dispatched(kernel: &str, wave_instructions: u64, modeled: Option<(u64, u64)>, failed: bool) {
    if dir().is_none() {
        return;
    }
    let mut r = REPORT.lock().unwrap_or_else(|e| e.into_inner());
    let report = r.get_or_insert_with(|| {
        // SAFETY: registers plain functions: one that only reads the report and writes a file at exit, one that
        // empties it in a forked child (which reports its own dispatches, not its parent's again).
        unsafe {
            libc::atexit(write_at_exit);
            libc::pthread_atfork(None, None, Some(forget_in_child));
        }
        ExecReport::default()
    });
    let k: &mut KernelReport = report.kernels.entry(kernel.to_string()).or_default();
    k.dispatches += 1;
    k.failed += failed as u64;
    k.wave_instructions += wave_instructions;
    if let Some((ns, cycles)) = modeled {
        report.timing = true;
        let k = report.kernels.get_mut(kernel).expect("just added");
        k.modeled_ns += ns;
        k.cycles += cycles;
    }
}

extern "C" fn forget_in_child() {
    if let Ok(mut r) = REPORT.try_lock() {
        *r = Some(ExecReport::default());
    }
}

extern "C" fn write_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let r = REPORT.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(r), Some(d)) = (r.as_ref(), dir()) {
            if let Err(e) = r.write(d, std::process::id()) {
                eprintln!(
                    "wavejit: cannot write the dispatch report for wavejit exec into {}: {e}",
                    d.display()
                );
            }
        }
    });
}
