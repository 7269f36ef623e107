//! `wavejit profile`, `wavejit run --profile` and `wavejit analyze` end to end: a HIP program built by
//! Debian's hipcc, profiled in two child processes of a shell; the rocprofv3-layout CSV, the trace-event
//! JSON (checked for the format's rules) and the SQLite database (queried with the `sqlite3` CLI); the modeled
//! counters under `--timing` with a wave trace; the roofline PNG; counters asked for without `--timing`.
//! Expected counts follow from the programs: vadd over 100,000 floats in blocks of 256, and an SGEMM's
//! 2·n³ FLOPs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod support;
use support::{csv, run, text, wavejit, workspace};

fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("wavejit-profile-tests-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch directory");
        d
    })
}

/// runtime-shim/tests/hip/vadd.hip built for gfx90a by Debian's hipcc (once).
fn vadd() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = workspace().join("runtime-shim/tests/hip/vadd.hip");
        let out = scratch().join("vadd");
        let o = run(Command::new("hipcc")
            .arg("--offload-arch=gfx90a")
            .arg(&src)
            .arg("-o")
            .arg(&out));
        assert!(o.status.success(), "hipcc {}: {}", src.display(), text(&o.stderr));
        out
    })
}

/// vadd.hip's kernel, demangled and as its symbol.
const VADD: &str = "vadd(float const*, float const*, float*, int)";
const VADD_SYMBOL: &str = "_Z4vaddPKfS0_Pfi";

fn profile(dir: &Path, extra: &[&str], command: &[&str]) -> Output {
    let o = run(Command::new(wavejit())
        .env("WAVEJIT_CACHE", scratch().join("cache"))
        .arg("profile")
        .arg("-o")
        .arg(dir)
        .args(extra)
        .arg("--")
        .args(command));
    assert!(
        o.status.success(),
        "wavejit profile failed: {}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    o
}

fn sqlite(db: &Path, query: &str) -> String {
    let o = run(Command::new("sqlite3").arg(db).arg(query));
    assert!(o.status.success(), "sqlite3 {query}: {}", text(&o.stderr));
    text(&o.stdout).trim().to_string()
}

/// Checks the trace-event format's rules: an object with `traceEvents`; every event a phase, pid and (but
/// process metadata) tid; complete events with non-negative numeric ts and dur; metadata naming processes
/// and threads; every flow start matched by a flow end with the same id. Returns the events.
fn valid_trace(path: &Path) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).expect("trace.json is JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents array").clone();
    let (mut starts, mut ends) = (BTreeSet::new(), BTreeSet::new());
    for e in &events {
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("event without ph: {e}"));
        assert!(e["pid"].is_u64(), "event without a numeric pid: {e}");
        match ph {
            "X" => {
                assert!(e["tid"].is_u64() && e["name"].is_string(), "{e}");
                assert!(
                    e["ts"].as_f64().is_some_and(|t| t >= 0.0) && e["dur"].as_f64().is_some_and(|d| d >= 0.0),
                    "complete event without ts/dur: {e}"
                );
            }
            "M" => assert!(
                ["process_name", "thread_name", "process_sort_index"].contains(&e["name"].as_str().unwrap()),
                "{e}"
            ),
            "s" => assert!(starts.insert(e["id"].as_u64().unwrap()), "{e}"),
            "f" => assert!(ends.insert(e["id"].as_u64().unwrap()) && e["bp"] == "e", "{e}"),
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    assert_eq!(starts, ends, "every flow arrow starts and ends");
    events
}

#[test]
fn list_counters_names_every_counter_exact_or_modeled() {
    let o = run(Command::new(wavejit()).args(["profile", "--list-counters"]));
    let t = text(&o.stdout);
    assert!(o.status.success());
    for (name, source) in [
        ("SQ_WAVES", "exact"),
        ("SQ_LDS_BANK_CONFLICT", "exact"),
        ("TCP_TOTAL_CACHE_ACCESSES", "exact"),
        ("TCC_HIT", "modeled"),
        ("GRBM_GUI_ACTIVE", "modeled"),
    ] {
        let line = t
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{t}"));
        assert_eq!(line.split_whitespace().nth(1), Some(source), "{line}");
    }
}

#[test]
fn modeled_counters_without_timing_are_refused_naming_the_flag() {
    let dir = scratch().join("refused");
    let o = run(Command::new(wavejit()).arg("profile").arg("-o").arg(&dir).args([
        "--counters",
        "SQ_WAVES,TCC_HIT",
        "--",
        "true",
    ]));
    assert!(!o.status.success());
    let e = text(&o.stderr);
    assert!(e.contains("TCC_HIT") && e.contains("--timing"), "{e}");
    assert!(!dir.join("profile.db").exists(), "nothing is written");
    let o = run(Command::new(wavejit())
        .arg("profile")
        .args(["--counters", "SQ_NOSUCH", "--", "true"]));
    assert!(
        !o.status.success() && text(&o.stderr).contains("unknown counter `SQ_NOSUCH`"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_hip_program_in_two_child_processes_is_profiled_into_csv_trace_and_database() {
    let dir = scratch().join("functional");
    let prog = vadd().display().to_string();
    let o = profile(&dir, &[], &["sh", "-c", &format!("{prog} && {prog}")]);
    assert!(
        text(&o.stdout).matches("0 of 100000 wrong").count() == 2,
        "{}",
        text(&o.stdout)
    );

    // kernel_trace.csv: rocprofv3's columns; one vadd dispatch in each of the two processes
    let (header, rows) = csv(&dir.join("kernel_trace.csv"));
    assert_eq!(
        header.join(","),
        "Kind,Agent_Id,Queue_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z,Mangled_Kernel_Name"
    );
    // the kernel by its demangled name, as rocprofv3 writes it; the symbol in a column of its own
    let vadds: Vec<_> = rows.iter().filter(|r| r["Kernel_Name"] == VADD).collect();
    assert_eq!(vadds.len(), 2, "{rows:?}");
    assert!(
        vadds.iter().all(|r| r["Mangled_Kernel_Name"] == VADD_SYMBOL),
        "{vadds:?}"
    );
    for r in &vadds {
        assert_eq!(
            (
                r["Grid_Size_X"].as_str(),
                r["Workgroup_Size_X"].as_str(),
                r["Agent_Id"].as_str()
            ),
            ("100096", "256", "1")
        );
        assert!(r["End_Timestamp"].parse::<u64>().unwrap() > r["Start_Timestamp"].parse::<u64>().unwrap());
    }

    // counter_collection.csv: counts that follow from the program
    let (_, rows) = csv(&dir.join("counter_collection.csv"));
    let counter = |name: &str| -> Vec<u64> {
        rows.iter()
            .filter(|r| r["Kernel_Name"].contains("vadd") && r["Counter_Name"] == name)
            .map(|r| r["Counter_Value"].parse().unwrap())
            .collect()
    };
    let pids: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r["Kernel_Name"].contains("vadd"))
        .map(|r| r["Process_Id"].as_str())
        .collect();
    assert_eq!(pids.len(), 2, "two processes");
    // 100,096 work-items: 1,564 waves; 1,563 hold an i < n, the last none (its branch skips the body)
    assert_eq!(counter("SQ_WAVES"), [1564, 1564]);
    assert_eq!(counter("SQ_INSTS_VMEM_WR"), [1563, 1563]);
    assert_eq!(counter("SQ_INSTS_VMEM_RD"), [2 * 1563, 2 * 1563]);
    // two loads and a store per wave: 1,562 full waves touch 4 lines of 64 bytes each, the one with 32 lanes 2
    assert_eq!(counter("TCP_TOTAL_CACHE_ACCESSES"), [3 * (1562 * 4 + 2); 2]);
    assert!(counter("TCC_HIT").is_empty(), "modeled counters only with --timing");

    // the copies and the HSA calls
    let (_, copies) = csv(&dir.join("memory_copy_trace.csv"));
    assert!(
        copies.iter().any(|r| r["Direction"] == "MEMORY_COPY_HOST_TO_DEVICE")
            && copies.iter().any(|r| r["Direction"] == "MEMORY_COPY_DEVICE_TO_HOST"),
        "{copies:?}"
    );
    let (_, api) = csv(&dir.join("hsa_api_trace.csv"));
    for f in ["hsa_init", "hsa_queue_create", "hsa_signal_store_screlease"] {
        assert!(api.iter().any(|r| r["Function"] == f), "{f} missing from the API trace");
    }
    // every HSA call, dispatch and copy has a correlation id of its own
    let (_, kernels) = csv(&dir.join("kernel_trace.csv"));
    let corr = |rows: &[BTreeMap<String, String>]| -> Vec<u64> {
        rows.iter().map(|r| r["Correlation_Id"].parse().unwrap()).collect()
    };
    let all: Vec<u64> = [corr(&copies), corr(&kernels), corr(&api)].concat();
    assert!(!all.contains(&0), "no record goes without a correlation id");
    assert_eq!(
        all.iter().collect::<BTreeSet<_>>().len(),
        all.len(),
        "copies, dispatches and calls never share an id"
    );

    // trace.json: valid trace-event format; kernels on GPU tracks, HSA calls on the processes' threads, an
    // arrow from a doorbell store to each kernel
    let events = valid_trace(&dir.join("trace.json"));
    let kernels: Vec<_> = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["name"] == VADD)
        .collect();
    assert_eq!(kernels.len(), 2);
    assert!(
        kernels.iter().all(|k| k["args"]["symbol"] == VADD_SYMBOL),
        "{kernels:?}"
    );
    assert!(events.iter().filter(|e| e["ph"] == "f").count() >= 2);
    assert!(
        events.iter().any(|e| e["ph"] == "M"
            && e["args"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("GPU 1 (AMD Instinct MI210"))),
        "a GPU track"
    );
    assert!(events
        .iter()
        .any(|e| e["cat"] == "hsa_api" && e["name"] == "hsa_queue_create"));

    // profile.db: opens with the sqlite3 CLI and answers queries
    let db = dir.join("profile.db");
    assert_eq!(
        sqlite(
            &db,
            "SELECT COUNT(*), COUNT(DISTINCT pid) FROM kernels WHERE name LIKE '%vadd%'"
        ),
        "2|2"
    );
    assert_eq!(
        sqlite(
            &db,
            "SELECT name, mangled_name FROM kernel_symbols WHERE name LIKE 'vadd%'"
        ),
        format!("{VADD}|{VADD_SYMBOL}")
    );
    assert_eq!(
        sqlite(
            &db,
            "SELECT group_concat(value) FROM counters WHERE kernel LIKE '%vadd%' AND counter = 'SQ_WAVES'"
        ),
        "1564,1564"
    );
    assert_eq!(
        sqlite(&db, "SELECT source FROM pmc_info WHERE name = 'TCC_MISS'"),
        "modeled"
    );
    assert!(
        sqlite(&db, "SELECT COUNT(*) FROM api_calls WHERE name = 'hsa_init'")
            .parse::<u64>()
            .unwrap()
            >= 2
    );
    assert!(
        sqlite(&db, "SELECT COUNT(*) FROM memory_copies")
            .parse::<u64>()
            .unwrap()
            >= 4
    );

    // analyze on a functional profile: the exact metrics, and the roofline refused for want of modeled time
    let o = run(Command::new(wavejit()).arg("analyze").arg(&dir));
    let t = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        t.contains("Instruction mix") && t.contains("needs a profile made with --timing"),
        "{t}"
    );
    assert!(
        t.contains(VADD) && !t.contains(VADD_SYMBOL),
        "analyze names kernels demangled: {t}"
    );
    assert!(
        t.contains("Top kernels by instructions executed") && !t.contains("Top kernels by time"),
        "a functional profile ranks by what was counted: {t}"
    );
    assert!(!dir.join("roofline.png").exists());
}

#[test]
fn a_timed_profile_has_consistent_modeled_counters_a_wave_trace_and_a_roofline() {
    let dir = scratch().join("timed");
    let prog = vadd().display().to_string();
    profile(&dir, &["--timing", "--wave-trace", "2"], &[&prog]);
    let (_, rows) = csv(&dir.join("counter_collection.csv"));
    let vadd = |name: &str| -> u64 {
        rows.iter()
            .find(|r| r["Kernel_Name"].contains("vadd") && r["Counter_Name"] == name)
            .unwrap_or_else(|| panic!("{name}"))["Counter_Value"]
            .parse()
            .unwrap()
    };
    assert_eq!(vadd("TCC_HIT") + vadd("TCC_MISS"), vadd("TCC_REQ"));
    assert!(
        vadd("TCC_REQ") >= vadd("TCP_TCC_READ_REQ") + vadd("TCP_TCC_WRITE_REQ"),
        "every L1 miss and write reaches the L2"
    );
    // 800,000 bytes of input: the L2 fetches at least that from memory (mi210: no MALL, HBM delivers it)
    assert!(vadd("TCC_EA_RDREQ") * 64 >= 800_000, "{}", vadd("TCC_EA_RDREQ"));
    assert_eq!(vadd("TCC_EA_RDREQ") * 64, vadd("HBM_READ_BYTES"));
    assert!(vadd("GRBM_GUI_ACTIVE") > 0 && vadd("SQ_BUSY_CYCLES") <= vadd("GRBM_GUI_ACTIVE"));
    // the kernel's duration is its modeled time: cycles at the MI210's 1,700 MHz
    let (_, k) = csv(&dir.join("kernel_trace.csv"));
    let k = k.iter().find(|r| r["Kernel_Name"].contains("vadd")).unwrap();
    let ns = k["End_Timestamp"].parse::<u64>().unwrap() - k["Start_Timestamp"].parse::<u64>().unwrap();
    assert_eq!(ns, vadd("GRBM_COUNT") * 1000 / 1700);

    let events = valid_trace(&dir.join("trace.json"));
    let issues = events.iter().filter(|e| e["cat"] == "issue").count();
    assert!(
        issues > 0 && events.iter().any(|e| e["cat"] == "stall"),
        "per-wave instruction tracks with stalls"
    );
    let db = dir.join("profile.db");
    let waves = sqlite(
        &db,
        "SELECT COUNT(*) FROM waves w JOIN kernels k ON k.id = w.dispatch_id WHERE k.name LIKE '%vadd%'",
    );
    assert_eq!(waves, "2", "--wave-trace 2");
    let traced: usize = sqlite(&db, "SELECT COUNT(*) FROM wave_instructions").parse().unwrap();
    assert!(traced >= issues.min(1), "{traced}");

    let o = run(Command::new(wavejit())
        .arg("analyze")
        .arg(dir.join("profile.db"))
        .arg("--json"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).expect("analyze --json");
    assert_eq!(a["modeled"], true);
    assert_eq!(a["ranked_by"], "modeled_time");
    // a streaming kernel: every L1 line it touches goes to the L2 (reads miss, writes go through), and both
    // figures count in L1 lines
    let k = &a["kernels"][0];
    assert!(k["bytes"]["l1"].as_u64().unwrap() > 800_000, "{k}");
    assert_eq!(k["bytes"]["l2"], k["bytes"]["l1"], "{k}");
    let png = std::fs::read(dir.join("roofline.png")).expect("roofline.png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(
        (
            u32::from_be_bytes(png[16..20].try_into().unwrap()),
            u32::from_be_bytes(png[20..24].try_into().unwrap())
        ),
        (1200, 800)
    );
    let svg = std::fs::read_to_string(dir.join("roofline.svg")).expect("roofline.svg");
    assert!(svg.contains("<svg") && svg.contains("Arithmetic intensity"));
    assert!(
        svg.contains("K1 vadd(float const*") && !svg.contains(VADD_SYMBOL),
        "the legend names the kernel demangled"
    );
}

#[test]
fn pmc_is_rocprofv3s_spelling_of_counters_and_a_sum_name_is_the_device_wide_counter() {
    let dir = scratch().join("pmc");
    profile(
        &dir,
        &["--pmc", "SQ_WAVES_sum", "SQ_INSTS_VMEM_WR"],
        &[&vadd().display().to_string()],
    );
    let (_, rows) = csv(&dir.join("counter_collection.csv"));
    let got: BTreeMap<&str, &str> = rows
        .iter()
        .filter(|r| r["Kernel_Name"] == VADD)
        .map(|r| (r["Counter_Name"].as_str(), r["Counter_Value"].as_str()))
        .collect();
    assert_eq!(
        got,
        BTreeMap::from([("SQ_INSTS_VMEM_WR", "1563"), ("SQ_WAVES_sum", "1564")]),
        "the counters asked for, under the names asked for"
    );
    let db = dir.join("profile.db");
    assert_eq!(
        sqlite(&db, "SELECT value FROM counters WHERE counter = 'SQ_WAVES_sum'"),
        "1564"
    );
    let o = run(Command::new(wavejit()).arg("analyze").arg(&dir).arg("--json"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        a["kernels"][0]["counters"]["SQ_WAVES"], 1564,
        "analyze reads X_sum as X"
    );
}

#[test]
fn accum_vgpr_count_is_the_agprs_the_kernel_metadata_gives() {
    // alu_loop uses no AGPRs (.agpr_count 0); its descriptor's VGPR allocation leaves room for 4 above the
    // accumulation offset
    let dir = scratch().join("agprs");
    let co = scratch().join("alu_loop-gfx90a.co");
    std::fs::write(&co, test_kernels::by_name("alu_loop-gfx90a.co").unwrap()).unwrap();
    let o = run(Command::new(wavejit())
        .arg("run")
        .arg(&co)
        .args(["--grid", "256", "--block", "256", "--profile"])
        .arg(&dir)
        .arg(format!("--arg=out={}:1024", scratch().join("alu.bin").display()))
        .arg("--arg=u32=4"));
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    let (_, rows) = csv(&dir.join("kernel_trace.csv"));
    assert_eq!(
        (rows[0]["VGPR_Count"].as_str(), rows[0]["Accum_VGPR_Count"].as_str()),
        ("4", "0"),
        "{rows:?}"
    );
}

#[test]
fn a_program_that_used_no_gpu_is_said_to_and_its_status_kept() {
    let dir = scratch().join("no-gpu");
    let o =
        run(Command::new(wavejit())
            .arg("profile")
            .arg("-o")
            .arg(&dir)
            .args(["--", "sh", "-c", "echo hello; exit 3"]));
    assert_eq!(o.status.code(), Some(3), "the program's status: {}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "hello\n");
    let e = text(&o.stderr);
    assert!(e.contains("used no GPU") && e.contains("no file was written"), "{e}");
    assert!(!dir.exists(), "no empty profile left behind");
}

#[test]
fn run_profile_counts_an_sgemms_two_n_cubed_flops() {
    let dir = scratch().join("sgemm");
    let n = 64usize;
    let co = scratch().join("sgemm-gfx90a.co");
    std::fs::write(&co, test_kernels::by_name("sgemm-gfx90a.co").unwrap()).unwrap();
    let a = scratch().join("a.bin");
    std::fs::write(&a, vec![0u8; 4 * n * n]).unwrap();
    let o = run(Command::new(wavejit())
        .arg("run")
        .arg(&co)
        .args(["--grid", "64,64", "--block", "16,16", "--timing", "--profile"])
        .arg(&dir)
        .arg(format!("--arg=in={}", a.display()))
        .arg(format!("--arg=in={}", a.display()))
        .arg(format!("--arg=out={}:{}", scratch().join("c.bin").display(), 4 * n * n))
        .arg(format!("--arg=u32={n}")));
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    let o = run(Command::new(wavejit()).arg("analyze").arg(&dir).arg("--json"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &a["kernels"][0];
    assert_eq!(k["flops"]["f32"], 2 * n * n * n, "{k}");
    assert_eq!(k["counters"]["SQ_WAVES"], (n * n / 64) as u64);
    assert!(k["metrics"]["flops_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_long_profile_reports_progress_in_whole_lines_that_stay_readable_in_a_log() {
    let dir = scratch().join("progress");
    // a shell that sleeps before running the program: the profile session lasts a few seconds
    let script = format!("sleep 3; {}", vadd().display());
    let o = Command::new(wavejit())
        .env("WAVEJIT_CACHE", scratch().join("cache"))
        .env("WAVEJIT_PROGRESS", "1")
        .arg("profile")
        .arg("-o")
        .arg(&dir)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("wavejit profile: ")).collect();
    assert!(lines.len() >= 3, "a line a second, and the summary:\n{err}");
    assert!(lines[0].contains(" s, ") && lines[0].contains("recording"), "{err}");
    assert!(
        !err.contains('\r') && !err.contains("\x1b["),
        "no line redrawn in place: {err:?}"
    );
}
