//! `wavejit profile`: profiles every dispatch of an unmodified ROCm program (and of its child processes) on
//! emulated GPUs, and writes what users of rocprofv3 already read: CSV in rocprofv3's layout (`csv.rs`), a
//! Chrome/Perfetto trace (`trace.rs`) and a SQLite database modelled on rocpd's (`db.rs`, schema in
//! `docs/profiling.md`). `wavejit run --profile DIR` writes the same files for one dispatch.
//!
//! The program runs under `wavejit exec` with `WAVEJIT_PROFILE_*` set (`profiler_hooks::record::env`): every
//! process on the runtime shim writes its own `wavejit-<pid>.jsonl` into a staging directory inside the
//! output directory; when the program has ended they are merged into one [`Session`] and the staging files
//! removed. A program none of whose processes started the HSA runtime used no GPU: `wavejit profile` says so,
//! writes nothing and exits with the program's status.

pub mod csv;
pub mod db;
pub mod trace;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use profiler_hooks::catalog;
use profiler_hooks::record::{self, Session};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Formats {
    pub csv: bool,
    pub json: bool,
    pub db: bool,
}

impl Formats {
    pub const ALL: Formats = Formats {
        csv: true,
        json: true,
        db: true,
    };

    /// `csv,json,db` (any subset).
    pub fn parse(s: &str) -> Result<Formats, String> {
        let mut f = Formats {
            csv: false,
            json: false,
            db: false,
        };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "csv" => f.csv = true,
                "json" => f.json = true,
                "db" => f.db = true,
                other => return Err(format!("--format {other}: expected csv, json or db (comma-separated)")),
            }
        }
        if f == (Formats {
            csv: false,
            json: false,
            db: false,
        }) {
            return Err("--format names no format (csv, json, db)".into());
        }
        Ok(f)
    }
}

/// Options of `wavejit profile`.
pub struct ProfileArgs {
    pub counters: Option<String>,
    pub timing: bool,
    pub output: PathBuf,
    pub formats: Formats,
    pub wave_trace: usize,
    pub device: Option<String>,
    pub route: crate::exec::Route,
    pub engine: Option<String>,
    pub timeout: Option<String>,
    pub command: Vec<String>,
}

/// `wavejit profile --list-counters`: every counter, what it counts, exact or modeled.
pub fn list_counters() -> String {
    let mut s = String::from("Counters (exact: counted from every executed instruction and lane address, the same on every engine;\nmodeled: the timing model's figure, collected with --timing).\nEvery counter is a whole-device total: rocprofv3's X_sum (X summed over every instance of its block) is X,\nand --counters/--pmc accept that name too.\n\n");
    let width = catalog::all().map(|c| c.name.len()).max().unwrap_or(0);
    for c in catalog::all() {
        s += &format!("  {:width$}  {:7}  {}\n", c.name, c.source.name(), c.description);
    }
    s
}

/// Runs the program profiled and writes the outputs.
pub fn run(a: ProfileArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if a.wave_trace > 0 && !a.timing {
        return Err("--wave-trace traces instruction issue in the timing model: add --timing".into());
    }
    catalog::select(a.counters.as_deref(), a.timing)?;
    let had_output = a.output.exists();
    let staging = a.output.join(format!(".wavejit-staging-{}", std::process::id()));
    std::fs::create_dir_all(&staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    let mut env = vec![(record::env::DIR.to_string(), staging.display().to_string())];
    if let Some(c) = &a.counters {
        env.push((record::env::COUNTERS.to_string(), c.clone()));
    }
    if a.wave_trace > 0 {
        env.push((record::env::WAVE_TRACE.to_string(), a.wave_trace.to_string()));
    }
    let progress = Progress::start(&staging);
    let options = crate::exec::Options {
        devices: a.device.clone(),
        route: a.route,
        engine: a.engine.clone(),
        timing: a.timing,
        timeout: a.timeout.clone(),
        env,
        ..Default::default()
    };
    let code = crate::exec::run(&options, &a.command);
    progress.finish();
    let code = code?;
    let session = Session::load(&staging)?;
    if session.processes.is_empty() && session.dispatches.is_empty() && session.api.is_empty() {
        // no process of the program started the runtime: there is nothing to write
        let _ = std::fs::remove_dir_all(&staging);
        if !had_output {
            let _ = std::fs::remove_dir(&a.output);
        }
        eprintln!(
            "wavejit profile: `{}` used no GPU: none of its processes started the HSA runtime, so there is nothing to profile and no file was written",
            a.command.join(" ")
        );
        return Ok(code);
    }
    let written = write_outputs(&session, &a.output, a.formats)?;
    let _ = std::fs::remove_dir_all(&staging);
    eprintln!(
        "wavejit profile: {} dispatches, {} copies, {} barriers, {} API calls in {} process{}; wrote {}",
        session.dispatches.len(),
        session.copies.len(),
        session.barriers.len(),
        session.api.len(),
        session.processes.len(),
        if session.processes.len() == 1 { "" } else { "es" },
        written
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(code)
}

/// Writes `session` in `formats` into `dir`; the files written.
pub fn write_outputs(
    session: &Session,
    dir: &Path,
    formats: Formats,
) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    if formats.csv {
        written.extend(csv::write(session, dir)?);
    }
    if formats.json {
        let p = dir.join("trace.json");
        std::fs::write(&p, serde_json::to_vec(&trace::trace(session))?).map_err(|e| format!("{}: {e}", p.display()))?;
        written.push(p);
    }
    if formats.db {
        let p = dir.join("profile.db");
        db::write(session, &p)?;
        written.push(p);
    }
    Ok(written)
}

/// Progress while the program runs: after 10 seconds (`WAVEJIT_PROGRESS=SECS`; 0: never), and as often after
/// that, one line on stderr with the processes recording and how much they recorded. Whole lines, never redrawn in place: the program's own
/// output goes to the same terminal, and a line rewritten under it would be left behind in the scrollback. (A
/// dispatch that runs long says so itself, `emu_core::watch`.)
struct Progress {
    stop: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How often the progress line comes: `WAVEJIT_PROGRESS` (as for long dispatches), else every 10 seconds;
/// `None`: never.
fn progress_every() -> Option<std::time::Duration> {
    match std::env::var(emu_core::watch::PROGRESS_VAR) {
        Err(_) => Some(std::time::Duration::from_secs(10)),
        Ok(v) => emu_core::watch::parse_timeout(&v).ok().flatten(),
    }
}

impl Progress {
    fn start(staging: &Path) -> Progress {
        let stop = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let (dir, flag) = (staging.to_path_buf(), stop.clone());
        let Some(every) = progress_every() else {
            return Progress { stop, thread: None };
        };
        let thread = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let (lock, woken) = &*flag;
            let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                done = woken.wait_timeout(done, every).unwrap_or_else(|e| e.into_inner()).0;
                if *done {
                    return;
                }
                let files = Session::files(&dir).unwrap_or_default();
                let bytes: u64 = files
                    .iter()
                    .filter_map(|f| std::fs::metadata(f).ok())
                    .map(|m| m.len())
                    .sum();
                eprintln!(
                    "wavejit profile: {} s, {} process(es) recording, {} KiB of records",
                    started.elapsed().as_secs(),
                    files.len(),
                    bytes / 1024
                );
            }
        });
        Progress {
            stop,
            thread: Some(thread),
        }
    }

    fn finish(mut self) {
        let (lock, woken) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        woken.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
