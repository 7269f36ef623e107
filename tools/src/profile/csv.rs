//! CSV files in rocprofv3's layout (the column names of its `kernel_trace.csv`, `counter_collection.csv`,
//! `memory_copy_trace.csv` and `hsa_api_trace.csv`), so scripts written for rocprofv3 read them. Agents are
//! the HSA agent indices of their process (0 is the CPU); queues are numbered per process from 0 in order of
//! first use; kernel ids number distinct kernel names of the session from 1; correlation ids are dispatch ids
//! (unique per session: process order, then the process's own order).
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
}

impl Ids {
    pub fn of(s: &Session) -> Ids {
        let mut ids = Ids {
            dispatch: BTreeMap::new(),
            kernel: BTreeMap::new(),
            queue: BTreeMap::new(),
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
        let (corr, kid, q) = (
            ids.dispatch[&(d.pid, d.id)],
            ids.kernel[&d.kernel],
            ids.queue[&(d.pid, d.queue)],
        );
        let (name, symbol) = (field(&demangle(&d.kernel)), field(&d.kernel));
        let _ = writeln!(
            kernels,
            "KERNEL_DISPATCH,{},{q},{},{corr},{kid},{name},{corr},{start},{end},{},{},{},{},{},{},{},{},{},{},{},{symbol}",
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
                "{corr},{corr},{},{q},{},{},{grid},{kid},{name},{wg},{},{},{},{},{},{c},{v},{start},{end},{symbol}",
                d.agent, d.pid, d.tid, d.lds_bytes, d.scratch_bytes, d.arch_vgprs, d.accum_vgprs, d.sgprs
            );
        }
    }
    let mut copies = format!("{MEMORY_COPY}\n");
    for c in &s.copies {
        let _ = writeln!(
            copies,
            "MEMORY_COPY,MEMORY_COPY_{},{},{},0,{},{}",
            c.direction, c.src_agent, c.dst_agent, c.start_ns, c.end_ns
        );
    }
    let mut api = format!("{HSA_API}\n");
    for (i, a) in s.api.iter().enumerate() {
        let domain = if a.name.starts_with("hsa_amd_") || a.name.starts_with("hsa_ven_amd") {
            "HSA_AMD_EXT_API"
        } else {
            "HSA_CORE_API"
        };
        let _ = writeln!(
            api,
            "{domain},{},{},{},{},{},{}",
            a.name,
            a.pid,
            a.tid,
            i + 1,
            a.start_ns,
            a.end_ns
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
