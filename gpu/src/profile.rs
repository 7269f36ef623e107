//! Profiling under `wavejit profile`: when `WAVEJIT_PROFILE_DIR` is set, this process writes its own record
//! file (`wavejit-<pid>.jsonl`, `profiler_hooks::record`) into that directory — the process and its agents,
//! every kernel dispatch with its hardware counters (`profiler_hooks::HwCounters`, per dispatch, recorded by
//! [`crate::dispatch`]), every barrier packet and asynchronous copy, and the program's calls into the GPU's
//! interface (name, thread, start, end): its `hsa_*` calls on the drop-in route, its driver ioctls on the other.
//! Child processes inherit the environment and write files of their own; `wavejit profile` merges them.
//!
//! Without `WAVEJIT_PROFILE_DIR` nothing here runs: dispatches keep `NoObserver`, and an API call pays one
//! load of an initialized flag.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use profiler_hooks::catalog::{self, Selected};
use profiler_hooks::record::{self, AgentInfo, ApiRecord, Record, Writer};

/// This process's profiling session.
pub struct Profile {
    writer: Mutex<Writer>,
    /// The counters to record, under the names asked for (validated by `wavejit profile`; an unknown name
    /// makes this process record every counter of its mode, with a warning).
    counters: Vec<Selected>,
    pub wave_trace: usize,
    pub pid: u32,
    next_dispatch: AtomicU64,
    next_copy: AtomicU64,
    next_barrier: AtomicU64,
}

static PROFILE: OnceLock<Option<Profile>> = OnceLock::new();

/// The session, when this process is profiled.
pub fn get() -> Option<&'static Profile> {
    PROFILE.get_or_init(open).as_ref()
}

fn open() -> Option<Profile> {
    let dir = std::env::var_os(record::env::DIR)?;
    let pid = std::process::id();
    let writer = match Writer::create(std::path::Path::new(&dir), pid) {
        Ok(w) => w,
        Err(e) => {
            eprintln!(
                "wavejit: profiling is off: cannot write {}: {e}",
                record::process_file(std::path::Path::new(&dir), pid).display()
            );
            return None;
        }
    };
    let timing = matches!(std::env::var("WAVEJIT_TIMING").as_deref(), Ok("1"));
    let list = std::env::var(record::env::COUNTERS)
        .ok()
        .filter(|s| !s.trim().is_empty());
    let counters = match catalog::select(list.as_deref(), timing) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("wavejit: {e}; recording the counters this mode has");
            catalog::select(None, timing).unwrap_or_default()
        }
    };
    let wave_trace = std::env::var(record::env::WAVE_TRACE)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // SAFETY: registers a plain function that flushes the record file; it takes the writer's lock like any
    // other writer and ignores errors.
    unsafe {
        libc::atexit(flush_at_exit);
    }
    Some(Profile {
        writer: Mutex::new(writer),
        counters,
        wave_trace,
        pid,
        next_dispatch: AtomicU64::new(1),
        next_copy: AtomicU64::new(1),
        next_barrier: AtomicU64::new(1),
    })
}

extern "C" fn flush_at_exit() {
    if let Some(p) = PROFILE.get().and_then(|p| p.as_ref()) {
        let _ = p.writer.lock().unwrap_or_else(|e| e.into_inner()).flush();
    }
}

/// The calling thread's id (as `gettid` reports it).
pub fn tid() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

impl Profile {
    /// Appends `r`; device-side records (dispatches, copies, barriers) are flushed at once so a process that
    /// dies keeps them.
    pub fn write(&self, r: &Record) {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let flush = !matches!(r, Record::Api(_));
        if w.write(r)
            .and_then(|()| if flush { w.flush() } else { Ok(()) })
            .is_err()
        {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| eprintln!("wavejit: cannot write the profile records of process {}", self.pid));
        }
    }

    pub fn next_dispatch(&self) -> u64 {
        self.next_dispatch.fetch_add(1, Ordering::Relaxed)
    }
    pub fn next_copy(&self) -> u64 {
        self.next_copy.fetch_add(1, Ordering::Relaxed)
    }
    pub fn next_barrier(&self) -> u64 {
        self.next_barrier.fetch_add(1, Ordering::Relaxed)
    }

    /// `values` restricted to the selected counters, in catalog order, each under the name it was asked for
    /// (a counter asked for as `X` and as `X_sum` is recorded under both).
    pub fn select(&self, values: Vec<(&'static str, u64)>) -> Vec<(String, u64)> {
        values
            .into_iter()
            .flat_map(|(n, v)| {
                self.counters
                    .iter()
                    .filter(move |c| c.def.name == n)
                    .map(move |c| (c.name.clone(), v))
            })
            .collect()
    }

    /// The process record, written when the runtime or the driver starts: `agents` in the order dispatch
    /// records number them, `start_ns` on the real-time clock ([`record::now_ns`]).
    pub fn process(&self, agents: Vec<AgentInfo>, start_ns: u64, timing: bool) {
        let command = std::fs::read("/proc/self/cmdline")
            .map(|b| {
                b.split(|&c| c == 0)
                    .filter(|s| !s.is_empty())
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        // SAFETY: getppid has no preconditions.
        let ppid = unsafe { libc::getppid() } as u32;
        self.write(&Record::Process {
            pid: self.pid,
            ppid,
            command,
            start_ns,
            timing,
            agents,
        });
    }
}

/// The record of a GPU agent numbered `index`.
pub fn gpu_agent(index: u32, g: &emu_core::DevicePreset) -> AgentInfo {
    AgentInfo {
        index,
        kind: g.id.to_string(),
        name: g.name.to_string(),
        gfx: g.gfx.to_string(),
        compute_units: g.compute_units,
    }
}

/// The record of a CPU agent numbered `index`.
pub fn cpu_agent(index: u32, name: &str) -> AgentInfo {
    AgentInfo {
        index,
        kind: "cpu".into(),
        name: name.to_string(),
        gfx: String::new(),
        compute_units: 0,
    }
}

/// The start of an API call when this process is profiled.
#[inline]
pub fn api_begin() -> Option<u64> {
    get().map(|_| record::now_ns())
}

/// Records the call named `name()` that began at `start`.
#[inline]
pub fn api_end<S: Into<String>>(name: impl FnOnce() -> S, start: Option<u64>) {
    if let (Some(start), Some(p)) = (start, get()) {
        p.write(&Record::Api(ApiRecord {
            pid: p.pid,
            tid: tid(),
            name: name().into(),
            start_ns: start,
            end_ns: record::now_ns(),
        }));
    }
}
