//! `wavejit analyze DB_OR_DIR [--json]`: the metrics rocprofiler-compute defines, computed from a profile's
//! counters — a speed-of-light table, the instruction mix, the kernels by time — and a roofline chart
//! (`roofline.svg`, `roofline.png`) placing every kernel at its measured arithmetic intensity and throughput
//! against the device's memory and compute roofs.
//!
//! Metrics from exact counters hold in any profile; those that need time, cycles or cache behaviour (rates,
//! utilizations, bandwidths, hit rates, the roofline) need a profile made with `--timing`, and are reported
//! as unavailable otherwise: wall-clock time of an emulator says nothing about a GPU.
//!
//! Kernels are ranked by modeled time in a timed profile; in a functional one by the instructions they executed
//! (`SQ_INSTS`; by dispatches when it was not collected), the table saying which: the emulator's host time is
//! not GPU time.
//!
//! Formulas (rocprofiler-compute's, over wavejit's counters): FLOPs = 64 × (ADD + MUL + TRANS) + 128 × FMA
//! per precision + 512 × MFMA_MOPS; L1 bytes = TCP_TOTAL_CACHE_ACCESSES × L1 line; L2 bytes =
//! (TCP_TCC_READ_REQ + TCP_TCC_WRITE_REQ + TCP_TCC_ATOMIC_REQ) × L1 line (the vector L1's traffic with the L2,
//! counted in the same L1 lines as the L1's own, as rocprofiler-compute's roofline counts it);
//! HBM bytes = HBM_READ_BYTES + HBM_WRITE_BYTES; vL1D hit rate = 1 − (TCP_TCC_READ_REQ +
//! TCP_TCC_WRITE_REQ + TCP_TCC_ATOMIC_REQ) / TCP_TOTAL_CACHE_ACCESSES; utilizations = busy cycles over
//! (units × GRBM_GUI_ACTIVE); IPC = SQ_INSTS / (CUs × GRBM_GUI_ACTIVE); occupancy = SQ_WAVE_CYCLES /
//! (GRBM_GUI_ACTIVE × CUs × wave slots per CU).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use emu_core::timing::machine::Machine;
use emu_core::DevicePreset;
use profiler_hooks::catalog;
use profiler_hooks::record::{DispatchRecord, Session};

/// Peak throughputs of a device: the published arithmetic peaks ([`DevicePreset::peak_tflops`]), FLOP/s, and
/// bandwidths from the preset and its timing machine.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Peaks {
    pub fp64_vector: f64,
    pub fp32_vector: f64,
    pub fp64_matrix: f64,
    pub fp32_matrix: f64,
    pub fp16_matrix: f64,
    /// Bytes per second: HBM, L2, vector L1 (all CUs), LDS (all CUs).
    pub hbm: f64,
    pub l2: f64,
    pub l1: f64,
    pub lds: f64,
}

impl Peaks {
    pub fn of(device: &DevicePreset) -> Peaks {
        let t = 1e12;
        let f = device.peak_tflops;
        let hz = device.engine_clock_mhz as f64 * 1e6;
        let m = Machine::of(device);
        let l2 = m.l2.channels as f64 * m.l2.bytes_per_clock as f64 * m.topology.xcds as f64 * hz;
        let l1 = m.l1.bytes_per_clock as f64 * device.compute_units as f64 * hz;
        let lds = m.lds.bytes_per_clock as f64 * device.compute_units as f64 * hz;
        Peaks {
            fp64_vector: f.fp64_vector * t,
            fp32_vector: f.fp32_vector * t,
            fp64_matrix: f.fp64_matrix * t,
            fp32_matrix: f.fp32_matrix * t,
            fp16_matrix: f.fp16_matrix * t,
            hbm: device.memory_bandwidth_gbs as f64 * 1e9,
            l2,
            l1,
            lds,
        }
    }
}

/// Counters of one kernel (summed over its dispatches) and the metrics derived from them.
#[derive(Debug, Clone, Serialize)]
pub struct KernelMetrics {
    /// The demangled name (`vadd(float*, float*, float*, int)`).
    pub name: String,
    /// The kernel's symbol (`_Z4vaddPfS_S_i`).
    pub symbol: String,
    pub device: String,
    pub dispatches: u64,
    /// Total duration, ns (modeled under `--timing`).
    pub duration_ns: u64,
    pub modeled: bool,
    pub counters: BTreeMap<String, u64>,
    /// FLOPs by precision: f16 (with bf16), f32, f64.
    pub flops: BTreeMap<&'static str, u64>,
    /// Bytes by level (l1 exact; l2, hbm modeled); l1 and l2 both in L1 lines.
    pub bytes: BTreeMap<&'static str, u64>,
    /// Speed-of-light metrics by name; `None` where the profile lacks what they need.
    pub metrics: BTreeMap<&'static str, Option<f64>>,
}

/// The analysis of a session.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    pub device: String,
    pub peaks: Peaks,
    pub modeled: bool,
    pub kernels: Vec<KernelMetrics>,
    /// What `kernels` are ranked by: `modeled_time` (timed profiles), `instructions` (`SQ_INSTS`, functional
    /// profiles) or `dispatches` (functional profiles without `SQ_INSTS`).
    pub ranked_by: &'static str,
    /// Instruction mix over all kernels: (class, instructions).
    pub mix: Vec<(&'static str, u64)>,
    pub roofline: Option<[PathBuf; 2]>,
    /// Kernels the roofline leaves off: (tag `K<rank>`, name, why).
    pub roofline_left_off: Vec<(String, String, &'static str)>,
}

impl KernelMetrics {
    /// The figure kernels are ranked by (see [`Analysis::ranked_by`]).
    fn rank_value(&self, ranked_by: &str) -> u64 {
        match ranked_by {
            "modeled_time" => self.duration_ns,
            "instructions" => self.counters.get("SQ_INSTS").copied().unwrap_or(0),
            _ => self.dispatches,
        }
    }
}

/// The counters of `ds` summed, by the catalogue's names (a counter recorded as rocprofv3's `X_sum`, or as both
/// `X` and `X_sum`, counts once, as `X`).
fn sum_counters(ds: &[&DispatchRecord]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for d in ds {
        let own: BTreeMap<&str, u64> = d
            .counters
            .iter()
            .map(|(n, v)| (catalog::lookup(n).map_or(n.as_str(), |c| c.name), *v))
            .collect();
        for (n, v) in own {
            *m.entry(n.to_string()).or_default() += v;
        }
    }
    m
}

fn metrics_of(name: &str, ds: &[&DispatchRecord], device: &DevicePreset) -> KernelMetrics {
    let counters = sum_counters(ds);
    let modeled = ds.iter().all(|d| d.modeled.is_some());
    let duration_ns: u64 = ds
        .iter()
        .map(|d| d.modeled.map_or(d.end_ns - d.start_ns, |(a, b)| b - a))
        .sum();
    let c = |n: &str| counters.get(n).copied().unwrap_or(0);
    let valu = |p: &str| {
        64 * (c(&format!("SQ_INSTS_VALU_ADD_{p}"))
            + c(&format!("SQ_INSTS_VALU_MUL_{p}"))
            + c(&format!("SQ_INSTS_VALU_TRANS_{p}")))
            + 128 * c(&format!("SQ_INSTS_VALU_FMA_{p}"))
    };
    let f16 = valu("F16") + 512 * (c("SQ_INSTS_VALU_MFMA_MOPS_F16") + c("SQ_INSTS_VALU_MFMA_MOPS_BF16"));
    let f32 = valu("F32") + 512 * c("SQ_INSTS_VALU_MFMA_MOPS_F32");
    let f64 = valu("F64") + 512 * c("SQ_INSTS_VALU_MFMA_MOPS_F64");
    let flops: BTreeMap<&'static str, u64> = [("f16", f16), ("f32", f32), ("f64", f64)].into_iter().collect();
    let mut bytes = BTreeMap::new();
    let l1_line = Machine::of(device).l1.line_bytes as u64;
    bytes.insert("l1", c("TCP_TOTAL_CACHE_ACCESSES") * l1_line);
    let has = |n: &str| counters.contains_key(n);
    if has("TCP_TCC_READ_REQ") {
        bytes.insert(
            "l2",
            (c("TCP_TCC_READ_REQ") + c("TCP_TCC_WRITE_REQ") + c("TCP_TCC_ATOMIC_REQ")) * l1_line,
        );
    }
    if has("HBM_READ_BYTES") {
        bytes.insert("hbm", c("HBM_READ_BYTES") + c("HBM_WRITE_BYTES"));
    }
    let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    let total = flops.values().sum::<u64>() as f64;
    let mut x: BTreeMap<&'static str, Option<f64>> = BTreeMap::new();
    let cycles = has("GRBM_GUI_ACTIVE").then(|| c("GRBM_GUI_ACTIVE") as f64);
    let cus = device.compute_units as f64;
    let simds = cus * device.simds_per_cu as f64;
    let with = |f: &dyn Fn(f64) -> Option<f64>| cycles.and_then(f);
    x.insert(
        "valu_utilization",
        with(&|g| ratio(c("SQ_ACTIVE_INST_VALU") as f64, simds * g)),
    );
    x.insert(
        "mfma_utilization",
        with(&|g| ratio(c("SQ_VALU_MFMA_BUSY_CYCLES") as f64, simds * g)),
    );
    x.insert(
        "salu_utilization",
        with(&|g| ratio(c("SQ_ACTIVE_INST_SALU") as f64, cus * g)),
    );
    x.insert("ipc", with(&|g| ratio(c("SQ_INSTS") as f64, cus * g)));
    x.insert(
        "occupancy",
        with(&|g| {
            ratio(
                c("SQ_WAVE_CYCLES") as f64,
                g * cus * (device.max_waves_per_simd * device.simds_per_cu) as f64,
            )
        }),
    );
    let l1_miss = (c("TCP_TCC_READ_REQ") + c("TCP_TCC_WRITE_REQ") + c("TCP_TCC_ATOMIC_REQ")) as f64;
    x.insert(
        "l1_hit_rate",
        has("TCP_TCC_READ_REQ")
            .then(|| {
                ratio(
                    c("TCP_TOTAL_CACHE_ACCESSES") as f64 - l1_miss,
                    c("TCP_TOTAL_CACHE_ACCESSES") as f64,
                )
            })
            .flatten(),
    );
    x.insert(
        "l2_hit_rate",
        has("TCC_HIT")
            .then(|| ratio(c("TCC_HIT") as f64, (c("TCC_HIT") + c("TCC_MISS")) as f64))
            .flatten(),
    );
    x.insert(
        "mall_hit_rate",
        (has("MALL_HIT") && c("MALL_HIT") + c("MALL_MISS") > 0)
            .then(|| ratio(c("MALL_HIT") as f64, (c("MALL_HIT") + c("MALL_MISS")) as f64))
            .flatten(),
    );
    x.insert(
        "lds_bank_conflicts_per_access",
        ratio(c("SQ_LDS_BANK_CONFLICT") as f64, c("SQ_INSTS_LDS") as f64),
    );
    x.insert(
        "lds_bank_conflict_rate",
        ratio(c("SQ_LDS_BANK_CONFLICT") as f64, c("SQ_LDS_IDX_ACTIVE") as f64),
    );
    x.insert(
        "valu_active_lanes",
        ratio(c("SQ_THREAD_INSTS_VALU") as f64, c("SQ_INSTS_VALU") as f64),
    );
    let secs = (modeled && duration_ns > 0).then_some(duration_ns as f64 * 1e-9);
    for (level, name_bw, name_ai) in [
        ("l1", "l1_bandwidth", "ai_l1"),
        ("l2", "l2_bandwidth", "ai_l2"),
        ("hbm", "hbm_bandwidth", "ai_hbm"),
    ] {
        let b = bytes.get(level).map(|&b| b as f64);
        x.insert(name_bw, b.zip(secs).map(|(b, s)| b / s));
        x.insert(name_ai, b.and_then(|b| ratio(total, b)));
    }
    x.insert("flops_per_second", secs.map(|s| total / s));
    KernelMetrics {
        name: isa_amdgpu::codeobj::names::demangle(name),
        symbol: name.to_string(),
        device: device.id.to_string(),
        dispatches: ds.len() as u64,
        duration_ns,
        modeled,
        counters,
        flops,
        bytes,
        metrics: x,
    }
}

/// Analyzes `session` (kernels on the first GPU preset that ran them).
pub fn analyze(session: &Session, chart_dir: Option<&Path>) -> Result<Analysis, Box<dyn std::error::Error>> {
    if session.dispatches.is_empty() {
        return Err("the profile holds no kernel dispatch".into());
    }
    let device_of = |d: &DispatchRecord| {
        session
            .process(d.pid)
            .and_then(|p| p.agents.iter().find(|a| a.index == d.agent))
            .and_then(|a| DevicePreset::by_name(&a.kind).ok())
            .unwrap_or_else(DevicePreset::default_device)
    };
    let device = device_of(&session.dispatches[0]);
    let mut by_name: BTreeMap<(&str, &str), Vec<&DispatchRecord>> = BTreeMap::new();
    for d in &session.dispatches {
        by_name.entry((d.kernel.as_str(), device_of(d).id)).or_default().push(d);
    }
    let mut kernels: Vec<KernelMetrics> = by_name
        .iter()
        .map(|((name, dev), ds)| metrics_of(name, ds, DevicePreset::by_name(dev).unwrap_or(device)))
        .collect();
    let modeled = kernels.iter().all(|k| k.modeled);
    let ranked_by = if modeled {
        "modeled_time"
    } else if kernels.iter().any(|k| k.counters.contains_key("SQ_INSTS")) {
        "instructions"
    } else {
        "dispatches"
    };
    kernels.sort_by(|a, b| {
        b.rank_value(ranked_by)
            .cmp(&a.rank_value(ranked_by))
            .then(a.name.cmp(&b.name))
    });
    // the roofline places a kernel at its FLOP rate: one without FLOPs (or without time) has no place on it
    let roofline_left_off = kernels
        .iter()
        .enumerate()
        .filter(|(_, k)| {
            !k.metrics
                .get("flops_per_second")
                .copied()
                .flatten()
                .is_some_and(|r| r > 0.0)
        })
        .map(|(rank, k)| {
            let why = if k.flops.values().sum::<u64>() == 0 {
                "no floating-point operations counted"
            } else {
                "no modeled time"
            };
            (format!("K{}", rank + 1), k.name.clone(), why)
        })
        .collect();
    let all = sum_counters(&session.dispatches.iter().collect::<Vec<_>>());
    let g = |n: &str| all.get(n).copied().unwrap_or(0);
    let mix = vec![
        ("VALU", g("SQ_INSTS_VALU") - g("SQ_INSTS_MFMA")),
        ("MFMA", g("SQ_INSTS_MFMA")),
        ("SALU", g("SQ_INSTS_SALU")),
        ("SMEM", g("SQ_INSTS_SMEM")),
        ("VMEM read", g("SQ_INSTS_VMEM_RD")),
        ("VMEM write", g("SQ_INSTS_VMEM_WR")),
        ("LDS", g("SQ_INSTS_LDS")),
        ("branch", g("SQ_INSTS_BRANCH")),
        (
            "other (sequencer)",
            g("SQ_INSTS").saturating_sub(
                g("SQ_INSTS_VALU")
                    + g("SQ_INSTS_SALU")
                    + g("SQ_INSTS_SMEM")
                    + g("SQ_INSTS_VMEM_RD")
                    + g("SQ_INSTS_VMEM_WR")
                    + g("SQ_INSTS_LDS")
                    + g("SQ_INSTS_BRANCH"),
            ),
        ),
    ];
    let peaks = Peaks::of(device);
    let mut a = Analysis {
        device: device.id.to_string(),
        peaks,
        modeled,
        kernels,
        ranked_by,
        mix,
        roofline: None,
        roofline_left_off,
    };
    if let (Some(dir), true) = (chart_dir, modeled) {
        a.roofline = Some(crate::roofline::draw(&a, dir)?);
    }
    Ok(a)
}

/// Loads a profile: a `profile.db`, or an output directory holding one (or the staging files of a run).
pub fn load(path: &Path) -> Result<Session, Box<dyn std::error::Error>> {
    if path.is_dir() {
        let db = path.join("profile.db");
        if db.exists() {
            return crate::profile::db::load(&db);
        }
        let s = Session::load(path)?;
        if s.processes.is_empty() && s.dispatches.is_empty() {
            return Err(format!("{}: no profile.db and no wavejit-<pid>.jsonl records (make one with `wavejit profile -o DIR -- PROGRAM`)", path.display()).into());
        }
        return Ok(s);
    }
    crate::profile::db::load(path)
}

fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{:.1}%", v * 100.0))
}

fn num(v: Option<f64>, unit: &str) -> String {
    match v {
        None => "n/a".into(),
        Some(v) if v >= 1e12 => format!("{:.2} T{unit}", v / 1e12),
        Some(v) if v >= 1e9 => format!("{:.2} G{unit}", v / 1e9),
        Some(v) if v >= 1e6 => format!("{:.2} M{unit}", v / 1e6),
        Some(v) if v >= 1e3 => format!("{:.2} k{unit}", v / 1e3),
        Some(v) => format!("{v:.3} {unit}"),
    }
}

/// The text report.
pub fn report(a: &Analysis) -> String {
    let mut s = format!(
        "wavejit analyze: {} kernel(s) on {} ({})\n",
        a.kernels.len(),
        a.device,
        if a.modeled {
            "modeled time: timing model"
        } else {
            "functional profile: rates, hit rates and the roofline need --timing"
        }
    );
    let total: u64 = a.kernels.iter().map(|k| k.rank_value(a.ranked_by)).sum();
    let (title, column) = match a.ranked_by {
        "modeled_time" => ("Top kernels by modeled time", "modeled ns"),
        "instructions" => (
            "Top kernels by instructions executed (functional profile: the emulator's host time is not GPU time)",
            "instructions",
        ),
        _ => (
            "Top kernels by dispatches (functional profile without SQ_INSTS: the emulator's host time is not GPU time)",
            "dispatches",
        ),
    };
    s += &format!("\n{title}\n");
    s += &format!(
        "  {:>5}  {:>14}  {:>10}  {:>6}  kernel\n",
        "#", column, "calls", "share"
    );
    for (i, k) in a.kernels.iter().take(10).enumerate() {
        s += &format!(
            "  {:>5}  {:>14}  {:>10}  {:>5.1}%  {}\n",
            i + 1,
            k.rank_value(a.ranked_by),
            k.dispatches,
            100.0 * k.rank_value(a.ranked_by) as f64 / total.max(1) as f64,
            k.name
        );
    }
    let insts: u64 = a.mix.iter().map(|(_, n)| n).sum();
    s += "\nInstruction mix (all kernels)\n";
    for (class, n) in &a.mix {
        s += &format!(
            "  {:18} {:>14}  {:>5.1}%\n",
            class,
            n,
            100.0 * *n as f64 / insts.max(1) as f64
        );
    }
    let p = &a.peaks;
    for k in a.kernels.iter().take(10) {
        let m = |n: &str| k.metrics.get(n).copied().flatten();
        let size = if a.modeled {
            format!("{} ns modeled", k.duration_ns)
        } else {
            format!("{} instructions", k.counters.get("SQ_INSTS").copied().unwrap_or(0))
        };
        s += &format!("\nSpeed of light: {} ({} dispatches, {size})\n", k.name, k.dispatches);
        let peak_flops = p.fp32_vector.max(p.fp64_vector);
        let rows: Vec<(&str, String, String)> = vec![
            ("VALU utilization", pct(m("valu_utilization")), String::new()),
            ("MFMA utilization", pct(m("mfma_utilization")), String::new()),
            ("SALU utilization", pct(m("salu_utilization")), String::new()),
            (
                "IPC (per CU per cycle)",
                m("ipc").map_or("n/a".into(), |v| format!("{v:.3}")),
                String::new(),
            ),
            ("Occupancy (of wave slots)", pct(m("occupancy")), String::new()),
            (
                "VALU active lanes",
                m("valu_active_lanes").map_or("n/a".into(), |v| format!("{v:.1} / 64")),
                String::new(),
            ),
            ("vL1D hit rate", pct(m("l1_hit_rate")), String::new()),
            ("L2 hit rate", pct(m("l2_hit_rate")), String::new()),
            ("MALL hit rate", pct(m("mall_hit_rate")), String::new()),
            (
                "vL1D bandwidth",
                num(m("l1_bandwidth"), "B/s"),
                format!("peak {}", num(Some(p.l1), "B/s")),
            ),
            (
                "L2 bandwidth",
                num(m("l2_bandwidth"), "B/s"),
                format!("peak {}", num(Some(p.l2), "B/s")),
            ),
            (
                "HBM bandwidth",
                num(m("hbm_bandwidth"), "B/s"),
                format!("peak {}", num(Some(p.hbm), "B/s")),
            ),
            (
                "LDS bank conflicts / access",
                m("lds_bank_conflicts_per_access").map_or("n/a".into(), |v| format!("{v:.2} cycles")),
                m("lds_bank_conflict_rate").map_or(String::new(), |v| format!("{:.1}% of LDS cycles", v * 100.0)),
            ),
            (
                "FLOPs f16 / f32 / f64",
                format!("{} / {} / {}", k.flops["f16"], k.flops["f32"], k.flops["f64"]),
                String::new(),
            ),
            (
                "FLOP rate",
                num(m("flops_per_second"), "FLOP/s"),
                format!("vector peak {}", num(Some(peak_flops), "FLOP/s")),
            ),
            (
                "Arithmetic intensity L1 / L2 / HBM",
                format!(
                    "{} / {} / {}",
                    num(m("ai_l1"), "F/B"),
                    num(m("ai_l2"), "F/B"),
                    num(m("ai_hbm"), "F/B")
                ),
                String::new(),
            ),
        ];
        for (what, v, peak) in rows {
            s += &format!("  {what:36} {v:>22}  {peak}\n");
        }
    }
    match &a.roofline {
        Some([svg, png]) => {
            s += &format!("\nRoofline: {} and {}\n", svg.display(), png.display());
            for (tag, name, why) in &a.roofline_left_off {
                s += &format!("  left off: {tag} {name} ({why})\n");
            }
        }
        None if !a.modeled => {
            s += "\nRoofline: needs a profile made with --timing (kernels are placed by modeled time)\n"
        }
        None => {}
    }
    s
}

/// `wavejit analyze`.
pub fn run(path: &Path, json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let session = load(path)?;
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let a = analyze(&session, Some(&dir))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&a)?);
    } else {
        print!("{}", report(&a));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_hooks::record::{AgentInfo, ProcessInfo};

    /// A kernel of a test session: symbol, host ns, modeled ns, counters.
    type Kernel<'a> = (&'a str, u64, Option<u64>, &'a [(&'a str, u64)]);

    fn session(kernels: &[Kernel]) -> Session {
        let dispatches = kernels
            .iter()
            .enumerate()
            .map(|(i, (name, host_ns, modeled_ns, counters))| DispatchRecord {
                id: i as u64 + 1,
                pid: 7,
                tid: 1,
                agent: 1,
                queue: 0x1000,
                kernel: name.to_string(),
                kernel_object: 0,
                grid: [64, 1, 1],
                workgroup: [64, 1, 1],
                lds_bytes: 0,
                scratch_bytes: 0,
                arch_vgprs: 8,
                accum_vgprs: 0,
                sgprs: 16,
                wave_size: 64,
                start_ns: 1000,
                end_ns: 1000 + host_ns,
                modeled: modeled_ns.map(|n| (0, n)),
                counters: counters.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
                error: None,
            })
            .collect();
        Session {
            processes: vec![ProcessInfo {
                pid: 7,
                ppid: 1,
                command: "t".into(),
                start_ns: 0,
                timing: kernels.iter().all(|k| k.2.is_some()),
                agents: vec![AgentInfo {
                    index: 1,
                    kind: "mi210".into(),
                    name: "AMD Instinct MI210".into(),
                    gfx: "gfx90a".into(),
                    compute_units: 104,
                }],
            }],
            dispatches,
            ..Session::default()
        }
    }

    #[test]
    fn a_functional_profile_ranks_kernels_by_instructions_not_by_the_emulators_host_time() {
        let s = session(&[
            ("_Z4slowv", 1_000_000_000, None, &[("SQ_INSTS", 10)]),
            ("_Z4busyv", 10, None, &[("SQ_INSTS", 1000)]),
        ]);
        let a = analyze(&s, None).unwrap();
        assert_eq!(a.ranked_by, "instructions");
        assert_eq!(
            a.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            ["busy()", "slow()"]
        );
        let r = report(&a);
        assert!(r.contains("Top kernels by instructions executed"), "{r}");
        assert!(r.contains("(1 dispatches, 1000 instructions)"), "{r}");
        assert!(!r.contains(" ns)"), "no host time passed off as a duration: {r}");
    }

    #[test]
    fn l2_bytes_count_the_l1s_traffic_with_the_l2_in_l1_lines() {
        // a streaming kernel: 12 L1 lines touched, 8 read misses and 4 writes go to the L2 (every TCC_REQ too,
        // and the instruction cache's)
        let s = session(&[(
            "stream",
            10,
            Some(1000),
            &[
                ("TCP_TOTAL_CACHE_ACCESSES", 12),
                ("TCP_TCC_READ_REQ", 8),
                ("TCP_TCC_WRITE_REQ", 4),
                ("TCP_TCC_ATOMIC_REQ", 0),
                ("TCC_REQ", 14),
            ],
        )]);
        let a = analyze(&s, None).unwrap();
        let b = &a.kernels[0].bytes;
        assert_eq!((b["l1"], b["l2"]), (12 * 64, 12 * 64), "MI210's L1 line is 64 bytes");
    }

    #[test]
    fn a_kernel_without_flops_is_named_as_left_off_the_roofline() {
        let dir = std::env::temp_dir().join(format!("wavejit-analyze-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = session(&[
            (
                "_Z4saxpyPfi",
                10,
                Some(2000),
                &[("SQ_INSTS_VALU_FMA_F32", 100), ("TCP_TOTAL_CACHE_ACCESSES", 10)],
            ),
            ("_Z4copyPfi", 10, Some(1000), &[("TCP_TOTAL_CACHE_ACCESSES", 10)]),
        ]);
        let a = analyze(&s, Some(&dir)).unwrap();
        assert_eq!(
            a.roofline_left_off,
            [(
                "K2".to_string(),
                "copy(float*, int)".to_string(),
                "no floating-point operations counted"
            )]
        );
        let r = report(&a);
        assert!(
            r.contains("left off: K2 copy(float*, int) (no floating-point operations counted)"),
            "{r}"
        );
        let svg = std::fs::read_to_string(dir.join("roofline.svg")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(svg.contains("Left off: K2 copy(float*, int)"), "the chart names it");
    }
}
