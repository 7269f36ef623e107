//! CSV files in rocprofv3's layout (the column names of its `kernel_trace.csv`, `counter_collection.csv`,
//! `memory_copy_trace.csv` and `hsa_api_trace.csv`), so scripts written for rocprofv3 read them. Agents are
//! the HSA agent indices of their process (0 is the CPU); queues are numbered per process from 0 in order of
//! first use; kernel ids number distinct kernel names of the session from 1; dispatch ids number the session's
//! dispatches (process order, then the process's own order). Correlation ids name every record of the session
//! once: each HSA call, dispatch and copy has its own, numbered process by process in order of start.
//!
//! `Kernel_Name` is the demangled name, as rocprofv3 writes it (`vadd(float*, float*, float*, int)`); the
//! symbol it demangles (`_Z4vaddPfS_S_i`) is in a column of wavejit's own, `Mangled_Kernel_Name`, after
//! rocprofv3's columns.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use isa_amdgpu::codeobj::names::demangle;
use profiler_hooks::record::{DispatchRecord, Session};

/// Quotes a field when it needs it (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Ids the CSV and the database share: per-dispatch correlation ids, kernel ids, queue indices.
pub struct Ids {
    /// (pid, dispatch id) → session-wide dispatch id.
    pub dispatch: BTreeMap<(u32, u64), u64>,
    /// kernel name → id from 1.
    pub kernel: BTreeMap<String, u64>,
    /// (pid, queue address) → index within the process.
    pub queue: BTreeMap<(u32, u64), u64>,
    /// Correlation ids: (pid, dispatch id) → id, (pid, copy id) → id, and the API calls' by index.
    pub dispatch_corr: BTreeMap<(u32, u64), u64>,
    pub copy_corr: BTreeMap<(u32, u64), u64>,
    pub api_corr: Vec<u64>,
}

impl Ids {
    pub fn of(s: &Session) -> Ids {
        let mut ids = Ids {
            dispatch: BTreeMap::new(),
            kernel: BTreeMap::new(),
            queue: BTreeMap::new(),
            dispatch_corr: BTreeMap::new(),
            copy_corr: BTreeMap::new(),
            api_corr: vec![0; s.api.len()],
        };
        let mut ordered: Vec<&DispatchRecord> = s.dispatches.iter().collect();
        ordered.sort_by_key(|d| (s.processes.iter().position(|p| p.pid == d.pid), d.id));
        for d in ordered {
            let n = ids.dispatch.len() as u64 + 1;
            ids.dispatch.insert((d.pid, d.id), n);
            let k = ids.kernel.len() as u64 + 1;
            ids.kernel.entry(d.kernel.clone()).or_insert(k);
            let q = ids.queue.keys().filter(|(pid, _)| *pid == d.pid).count() as u64;
            ids.queue.entry((d.pid, d.queue)).or_insert(q);
        }
        for b in &s.barriers {
            let q = ids.queue.keys().filter(|(pid, _)| *pid == b.pid).count() as u64;
            ids.queue.entry((b.pid, b.queue)).or_insert(q);
        }
        // every HSA call, dispatch and copy: by process (in session order; processes without a process record
        // last), then start time, a call before the dispatch or copy it starts
        enum Of {
            Api(usize),
            Dispatch(u32, u64),
            Copy(u32, u64),
        }
        let rank = |pid: u32| s.processes.iter().position(|p| p.pid == pid).unwrap_or(usize::MAX);
        let mut all: Vec<((usize, u32, u64, u8), Of)> = Vec::new();
        all.extend(
            s.api
                .iter()
                .enumerate()
                .map(|(i, a)| ((rank(a.pid), a.pid, a.start_ns, 0), Of::Api(i))),
        );
        all.extend(
            s.dispatches
                .iter()
                .map(|d| ((rank(d.pid), d.pid, d.start_ns, 1), Of::Dispatch(d.pid, d.id))),
        );
        all.extend(
            s.copies
                .iter()
                .map(|c| ((rank(c.pid), c.pid, c.start_ns, 2), Of::Copy(c.pid, c.id))),
        );
        all.sort_by_key(|(k, _)| *k);
        for (n, (_, of)) in all.into_iter().enumerate() {
            let n = n as u64 + 1;
            match of {
                Of::Api(i) => ids.api_corr[i] = n,
                Of::Dispatch(pid, id) => {
                    ids.dispatch_corr.insert((pid, id), n);
                }
                Of::Copy(pid, id) => {
                    ids.copy_corr.insert((pid, id), n);
                }
            }
        }
        ids
    }
}

const KERNEL_TRACE: &str = "Kind,Agent_Id,Queue_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z,Mangled_Kernel_Name";
const COUNTER_COLLECTION: &str = "Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,Kernel_Id,Kernel_Name,Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,Counter_Name,Counter_Value,Start_Timestamp,End_Timestamp,Mangled_Kernel_Name";
const MEMORY_COPY: &str =
    "Kind,Direction,Source_Agent_Id,Destination_Agent_Id,Correlation_Id,Start_Timestamp,End_Timestamp";
const HSA_API: &str = "Domain,Function,Process_Id,Thread_Id,Correlation_Id,Start_Timestamp,End_Timestamp";

/// Writes the four files into `dir`; their paths.
pub fn write(s: &Session, dir: &Path) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    let ids = Ids::of(s);
    let mut kernels = format!("{KERNEL_TRACE}\n");
    let mut counters = format!("{COUNTER_COLLECTION}\n");
    for d in &s.dispatches {
        let (start, end) = s.device_span(d);
        let (did, corr, kid, q) = (
            ids.dispatch[&(d.pid, d.id)],
            ids.dispatch_corr[&(d.pid, d.id)],
            ids.kernel[&d.kernel],
            ids.queue[&(d.pid, d.queue)],
        );
        let (name, symbol) = (field(&demangle(&d.kernel)), field(&d.kernel));
        let _ = writeln!(
            kernels,
            "KERNEL_DISPATCH,{},{q},{},{did},{kid},{name},{corr},{start},{end},{},{},{},{},{},{},{},{},{},{},{},{symbol}",
            d.agent,
            d.tid,
            d.lds_bytes,
            d.scratch_bytes,
            d.arch_vgprs,
            d.accum_vgprs,
            d.sgprs,
            d.workgroup[0],
            d.workgroup[1],
            d.workgroup[2],
            d.grid[0],
            d.grid[1],
            d.grid[2]
        );
        let grid: u64 = d.grid.iter().map(|&g| g as u64).product();
        let wg: u64 = d.workgroup.iter().map(|&g| g as u64).product();
        for (c, v) in &d.counters {
            let _ = writeln!(
                counters,
                "{corr},{did},{},{q},{},{},{grid},{kid},{name},{wg},{},{},{},{},{},{c},{v},{start},{end},{symbol}",
                d.agent, d.pid, d.tid, d.lds_bytes, d.scratch_bytes, d.arch_vgprs, d.accum_vgprs, d.sgprs
            );
        }
    }
    let mut copies = format!("{MEMORY_COPY}\n");
    for c in &s.copies {
        let _ = writeln!(
            copies,
            "MEMORY_COPY,MEMORY_COPY_{},{},{},{},{},{}",
            c.direction,
            c.src_agent,
            c.dst_agent,
            ids.copy_corr[&(c.pid, c.id)],
            c.start_ns,
            c.end_ns
        );
    }
    let mut api = format!("{HSA_API}\n");
    for (i, a) in s.api.iter().enumerate() {
        let domain = profiler_hooks::record::api_domain(&a.name);
        let _ = writeln!(
            api,
            "{domain},{},{},{},{},{},{}",
            a.name, a.pid, a.tid, ids.api_corr[i], a.start_ns, a.end_ns
        );
    }
    let mut out = Vec::new();
    for (name, text) in [
        ("kernel_trace.csv", kernels),
        ("counter_collection.csv", counters),
        ("memory_copy_trace.csv", copies),
        ("hsa_api_trace.csv", api),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        out.push(p);
    }
    Ok(out)
}
