//! What a profiled process records, and how a profiling session is put together from its processes.
//!
//! Each profiled process (every process on the runtime shim while `WAVEJIT_PROFILE_DIR` is set, so child
//! processes too) appends [`Record`]s as JSON lines to its own file `wavejit-<pid>.jsonl` in that directory;
//! [`Session::load`] reads every such file of a directory and merges them into one session, which the output
//! writers (CSV, trace JSON, database) and `wavejit analyze` read.
//!
//! Times are nanoseconds on the host's real-time clock (`CLOCK_REALTIME`, so processes line up). With the
//! timing model a dispatch also carries its modeled start and end (nanoseconds of the process's modeled device
//! clock, which starts when the runtime does).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::hw::TracedWave;

/// The environment `wavejit profile` hands the shim (child processes inherit it).
pub mod env {
    /// The output directory: set means "profile this process".
    pub const DIR: &str = "WAVEJIT_PROFILE_DIR";
    /// Comma-separated counter names to record (unset: every counter the mode has).
    pub const COUNTERS: &str = "WAVEJIT_PROFILE_COUNTERS";
    /// Waves per dispatch whose instructions are traced in timing mode (unset or 0: none).
    pub const WAVE_TRACE: &str = "WAVEJIT_PROFILE_WAVE_TRACE";
}

/// A kernel's `Accum_VGPR_Count`: the AGPRs its code uses, the code object metadata's `.agpr_count`; when the
/// metadata has none, the room the descriptor leaves for AGPRs (gfx90a/gfx94x: the VGPR allocation above the
/// accumulation offset; 0 on other targets). rocprofv3 reports the descriptor's room, which counts the
/// allocation's rounding up to 8 registers as AGPRs.
pub fn accum_vgpr_count(metadata_agprs: Option<u64>, kd: &isa_amdgpu::codeobj::kd::KernelDescriptor) -> u32 {
    metadata_agprs.map_or_else(
        || kd.agpr_alloc_count().unwrap_or(0),
        |n| u32::try_from(n).unwrap_or(u32::MAX),
    )
}

/// The API domain of a recorded call, by its name: the HSA runtime's core and AMD extension calls (the drop-in
/// route records them), or the kernel driver's ioctls (the emulated driver records them, named as kfd_ioctl.h
/// and amdgpu_drm.h name them: `AMDKFD_IOC_…`, `DRM_IOCTL_…`).
pub fn api_domain(name: &str) -> &'static str {
    if name.starts_with("AMDKFD_IOC_") {
        "KFD_IOCTL"
    } else if name.starts_with("DRM_IOCTL_") {
        "DRM_IOCTL"
    } else if name.starts_with("hsa_amd_") || name.starts_with("hsa_ven_amd") {
        "HSA_AMD_EXT_API"
    } else {
        "HSA_CORE_API"
    }
}

/// Nanoseconds on the real-time clock.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A device of a process: an HSA agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// The agent's index in the process's agent list (0 is the CPU).
    pub index: u32,
    /// `cpu` or the GPU preset id (`mi210`).
    pub kind: String,
    pub name: String,
    /// `gfx90a`, or empty for the CPU.
    pub gfx: String,
    pub compute_units: u32,
}

/// One kernel dispatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchRecord {
    /// The dispatch's number within its process, from 1.
    pub id: u64,
    pub pid: u32,
    /// Thread of the packet processor that ran it.
    pub tid: u64,
    pub agent: u32,
    /// The queue's address (its `hsa_queue_t*`).
    pub queue: u64,
    pub kernel: String,
    /// The kernel object (descriptor address) it ran.
    pub kernel_object: u64,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    /// LDS bytes per workgroup and private bytes per lane.
    pub lds_bytes: u32,
    pub scratch_bytes: u32,
    pub arch_vgprs: u32,
    pub accum_vgprs: u32,
    pub sgprs: u32,
    pub wave_size: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Modeled start and end (timing mode).
    pub modeled: Option<(u64, u64)>,
    /// Counter name and value, in catalog order.
    pub counters: Vec<(String, u64)>,
    /// Did it fail (a GPU fault)?
    pub error: Option<String>,
}

/// One asynchronous copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyRecord {
    pub id: u64,
    pub pid: u32,
    pub bytes: u64,
    pub src: u64,
    pub dst: u64,
    /// `HOST_TO_DEVICE`, `DEVICE_TO_HOST`, `DEVICE_TO_DEVICE`, `HOST_TO_HOST`.
    pub direction: String,
    /// Agents (0 is the CPU).
    pub src_agent: u32,
    pub dst_agent: u32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A barrier-AND/OR packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BarrierRecord {
    pub id: u64,
    pub pid: u32,
    pub agent: u32,
    pub queue: u64,
    /// `and` or `or`.
    pub kind: String,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One HSA API call the program made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiRecord {
    pub pid: u32,
    pub tid: u64,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A line of a process's file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    Process {
        pid: u32,
        ppid: u32,
        command: String,
        /// When its runtime started.
        start_ns: u64,
        timing: bool,
        agents: Vec<AgentInfo>,
    },
    Dispatch(DispatchRecord),
    Copy(CopyRecord),
    Barrier(BarrierRecord),
    Api(ApiRecord),
    /// The traced waves of a dispatch (timing mode, `--wave-trace`).
    Waves {
        pid: u32,
        dispatch: u64,
        waves: Vec<TracedWave>,
    },
}

/// The file a process with `pid` writes in `dir`.
pub fn process_file(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("wavejit-{pid}.jsonl"))
}

/// A process's record file, appended line by line.
pub struct Writer {
    out: std::io::BufWriter<std::fs::File>,
}

impl Writer {
    /// Creates (truncates) this process's file in `dir`.
    pub fn create(dir: &Path, pid: u32) -> std::io::Result<Writer> {
        std::fs::create_dir_all(dir)?;
        Ok(Writer {
            out: std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(process_file(dir, pid))?),
        })
    }

    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, r)?;
        self.out.write_all(b"\n")
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A process of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: u32,
    pub ppid: u32,
    pub command: String,
    pub start_ns: u64,
    pub timing: bool,
    pub agents: Vec<AgentInfo>,
}

/// Every record of every process of a profiling session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub processes: Vec<ProcessInfo>,
    pub dispatches: Vec<DispatchRecord>,
    pub copies: Vec<CopyRecord>,
    pub barriers: Vec<BarrierRecord>,
    pub api: Vec<ApiRecord>,
    /// (pid, dispatch id, traced waves).
    pub waves: Vec<(u32, u64, Vec<TracedWave>)>,
}

/// A session directory that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}, line {line}: {source}")]
    Parse {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
}

impl Session {
    /// The process files (`wavejit-<pid>.jsonl`) in `dir`, sorted.
    pub fn files(dir: &Path) -> Result<Vec<PathBuf>, SessionError> {
        let io = |source| SessionError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("wavejit-") && n.ends_with(".jsonl"))
            })
            .collect();
        files.sort();
        Ok(files)
    }

    /// Reads and merges every process file of `dir`; records come in time order per kind. A process killed
    /// while writing leaves a partial last line, which is skipped.
    pub fn load(dir: &Path) -> Result<Session, SessionError> {
        let mut s = Session::default();
        for path in Session::files(dir)? {
            let f = std::fs::File::open(&path).map_err(|source| SessionError::Io {
                path: path.clone(),
                source,
            })?;
            let lines: Vec<String> =
                std::io::BufReader::new(f)
                    .lines()
                    .collect::<Result<_, _>>()
                    .map_err(|source| SessionError::Io {
                        path: path.clone(),
                        source,
                    })?;
            let last = lines.len();
            for (i, line) in lines.iter().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let r: Record = match serde_json::from_str(line) {
                    Ok(r) => r,
                    Err(_) if i + 1 == last => continue,
                    Err(source) => {
                        return Err(SessionError::Parse {
                            path: path.clone(),
                            line: i + 1,
                            source,
                        })
                    }
                };
                s.add(r);
            }
        }
        s.processes.sort_by_key(|p| (p.start_ns, p.pid));
        s.dispatches.sort_by_key(|d| (d.start_ns, d.pid, d.id));
        s.copies.sort_by_key(|c| (c.start_ns, c.pid, c.id));
        s.barriers.sort_by_key(|b| (b.start_ns, b.pid, b.id));
        s.api.sort_by_key(|a| (a.start_ns, a.pid, a.tid));
        Ok(s)
    }

    fn add(&mut self, r: Record) {
        match r {
            Record::Process {
                pid,
                ppid,
                command,
                start_ns,
                timing,
                agents,
            } => self.processes.push(ProcessInfo {
                pid,
                ppid,
                command,
                start_ns,
                timing,
                agents,
            }),
            Record::Dispatch(d) => self.dispatches.push(d),
            Record::Copy(c) => self.copies.push(c),
            Record::Barrier(b) => self.barriers.push(b),
            Record::Api(a) => self.api.push(a),
            Record::Waves { pid, dispatch, waves } => self.waves.push((pid, dispatch, waves)),
        }
    }

    /// The process `pid`.
    pub fn process(&self, pid: u32) -> Option<&ProcessInfo> {
        self.processes.iter().find(|p| p.pid == pid)
    }

    /// A dispatch's start and end as the device tracks show them: modeled (placed on the real-time clock from
    /// its process's start) in timing mode, else host time.
    pub fn device_span(&self, d: &DispatchRecord) -> (u64, u64) {
        match (d.modeled, self.process(d.pid)) {
            (Some((s, e)), Some(p)) => (p.start_ns + s, p.start_ns + e),
            _ => (d.start_ns, d.end_ns),
        }
    }

    /// The API call that launched `d`: the last doorbell store (`hsa_signal_store_*`) of its process that
    /// began before the dispatch started, as an index into `api`.
    pub fn launch_of(&self, d: &DispatchRecord) -> Option<usize> {
        self.api
            .iter()
            .enumerate()
            .filter(|(_, a)| a.pid == d.pid && a.start_ns <= d.start_ns && a.name.starts_with("hsa_signal_store"))
            .max_by_key(|(_, a)| a.start_ns)
            .map(|(i, _)| i)
    }

    /// The value of counter `name` of `d`.
    pub fn counter(d: &DispatchRecord, name: &str) -> Option<u64> {
        d.counters.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_write_their_own_files_and_the_session_merges_them() {
        let dir = std::env::temp_dir().join(format!("wavejit-record-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let dispatch = |pid, id, start| DispatchRecord {
            id,
            pid,
            tid: 1,
            agent: 1,
            queue: 0x1000,
            kernel: format!("k{pid}"),
            kernel_object: 0,
            grid: [64, 1, 1],
            workgroup: [64, 1, 1],
            lds_bytes: 0,
            scratch_bytes: 0,
            arch_vgprs: 8,
            accum_vgprs: 0,
            sgprs: 16,
            wave_size: 64,
            start_ns: start,
            end_ns: start + 10,
            modeled: None,
            counters: vec![("SQ_WAVES".into(), 1)],
            error: None,
        };
        for (pid, start) in [(10u32, 500u64), (11, 100)] {
            let mut w = Writer::create(&dir, pid).unwrap();
            w.write(&Record::Process {
                pid,
                ppid: 1,
                command: "x".into(),
                start_ns: start - 50,
                timing: false,
                agents: vec![],
            })
            .unwrap();
            w.write(&Record::Api(ApiRecord {
                pid,
                tid: 2,
                name: "hsa_signal_store_screlease".into(),
                start_ns: start - 5,
                end_ns: start - 4,
            }))
            .unwrap();
            w.write(&Record::Dispatch(dispatch(pid, 1, start))).unwrap();
            w.flush().unwrap();
        }
        // a process killed mid-line leaves a partial last line
        std::fs::write(process_file(&dir, 12), "{\"record\":\"dispa").unwrap();
        let s = Session::load(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(s.processes.iter().map(|p| p.pid).collect::<Vec<_>>(), [11, 10]);
        assert_eq!(
            s.dispatches.iter().map(|d| d.kernel.as_str()).collect::<Vec<_>>(),
            ["k11", "k10"]
        );
        let launch = s.launch_of(&s.dispatches[1]).map(|i| (s.api[i].pid, s.api[i].start_ns));
        assert_eq!(launch, Some((10, 495)));
        assert_eq!(Session::counter(&s.dispatches[0], "SQ_WAVES"), Some(1));
    }
}
