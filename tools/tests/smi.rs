//! SMI on emulated GPUs, as a user meets it: `wavejit smi` and Debian's unmodified rocm-smi (under `wavejit
//! exec`) watching a HIP program that holds device memory (runtime-shim/tests/hip/smi_hold.hip, built with
//! Debian's hipcc). Each test has a registry directory of its own (`WAVEJIT_SMI_DIR`), so programs of other
//! tests running at the same time do not show in it. Needs hipcc and rocm-smi (scripts/setup.sh installs them);
//! the release build of wavejit and the shim is made on first use, as in exec.rs.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

mod support;
use support::{run, text, wavejit, workspace};

fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("wavejit-smi-tests-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch directory");
        d
    })
}

/// The HIP program that holds memory, compiled once for gfx90a with Debian's hipcc.
fn smi_hold() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let hip = workspace().join("runtime-shim/tests/hip");
        let out = scratch().join("smi_hold");
        let o = run(Command::new("hipcc")
            .arg("--offload-arch=gfx90a")
            .arg("-I")
            .arg(&hip)
            .arg(hip.join("smi_hold.hip"))
            .arg("-o")
            .arg(&out));
        assert!(o.status.success(), "hipcc smi_hold.hip: {}", text(&o.stderr));
        out
    })
}

/// A registry directory of this test's own (created by the first publisher, mode 0700).
fn registry(name: &str) -> PathBuf {
    let d = scratch().join(format!("registry-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `wavejit exec [--device D] -- rocm-smi ARGS` against `registry`: (exit code, stdout + stderr).
fn rocm_smi(registry: &Path, device: Option<&str>, args: &[&str]) -> (Option<i32>, String) {
    let found =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).any(|d| d.join("rocm-smi").is_file());
    assert!(
        found,
        "rocm-smi is not installed: run scripts/setup.sh (Debian packages rocm-smi librocm-smi-dev)"
    );
    let mut cmd = Command::new(wavejit());
    cmd.arg("exec");
    if let Some(d) = device {
        cmd.args(["--device", d]);
    }
    let o = run(cmd
        .arg("--")
        .arg("rocm-smi")
        .args(args)
        .env("WAVEJIT_SMI_DIR", registry));
    (o.status.code(), text(&o.stdout) + &text(&o.stderr))
}

/// `wavejit smi ARGS` against `registry`: (exit code, stdout, stderr).
fn smi(registry: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = run(Command::new(wavejit())
        .arg("smi")
        .args(args)
        .env("WAVEJIT_SMI_DIR", registry));
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

fn smi_json(registry: &Path, args: &[&str]) -> Value {
    let (code, so, se) = smi(registry, args);
    assert_eq!(code, Some(0), "wavejit smi {args:?}: {so}{se}");
    serde_json::from_str(&so).unwrap_or_else(|e| panic!("wavejit smi {args:?} is not JSON ({e}): {so}"))
}

/// "GPU[0] : VRAM Total Used Memory (B): N" of rocm-smi's output.
fn vram_used(out: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with("GPU[0]") && l.contains("VRAM Total Used Memory (B):"))
        .unwrap_or_else(|| panic!("no VRAM use in {out}"));
    line.rsplit(':')
        .next()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("bad VRAM line {line:?}"))
}

/// smi_hold running under `wavejit exec`: it has allocated and filled its memory when `start` returns.
struct Held {
    exec: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The HIP program's pid (the child of `wavejit exec`).
    pid: u32,
}

impl Held {
    fn start(registry: &Path, mib: u32) -> Held {
        Held::start_on(registry, mib, "hsa")
    }

    /// As [`Held::start`], the program reaching its GPU by `route` (`wavejit exec --driver`).
    fn start_on(registry: &Path, mib: u32, route: &str) -> Held {
        let mut exec = Command::new(wavejit())
            .args(["exec", "--driver", route, "--"])
            .arg(smi_hold())
            .arg(mib.to_string())
            .env("WAVEJIT_SMI_DIR", registry)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("running smi_hold under wavejit exec");
        let stdout = exec.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        let stdin = exec.stdin.take();
        let mut held = Held {
            exec,
            stdin,
            lines,
            pid: 0,
        };
        let ready = held.line();
        held.pid = ready
            .strip_prefix("ready ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("smi_hold said {ready:?}, not `ready PID`"));
        held
    }

    /// The program's next line of output.
    fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(180))
            .unwrap_or_else(|e| panic!("smi_hold said nothing more ({e})"))
    }

    /// Lets the program go on to its next step.
    fn step(&mut self) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(b"go\n")
            .and_then(|()| stdin.flush())
            .expect("writing to smi_hold");
    }

    fn wait(mut self) -> std::process::ExitStatus {
        self.stdin.take();
        self.exec.wait().expect("waiting for wavejit exec")
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.exec.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill").args(["-9", &self.pid.to_string()]).status();
            let _ = self.exec.kill();
            let _ = self.exec.wait();
        }
    }
}

const MIB: u64 = 1 << 20;

#[test]
fn rocm_smi_sees_the_vram_a_hip_program_holds_come_and_go() {
    let reg = registry("vram");
    let (code, before) = rocm_smi(&reg, None, &["--showmeminfo", "vram"]);
    assert_eq!(code, Some(0), "{before}");
    assert!(
        before.contains("VRAM Total Memory (B): 68719476736"),
        "the MI210's 64 GiB: {before}"
    );
    assert_eq!(vram_used(&before), 0, "nothing runs yet: {before}");
    let mut held = Held::start(&reg, 256);
    let (code, during) = rocm_smi(&reg, None, &["--showmeminfo", "vram"]);
    assert_eq!(code, Some(0), "{during}");
    let during = vram_used(&during);
    assert!(
        (256 * MIB..300 * MIB).contains(&during),
        "256 MiB held (and HIP's own few MiB): {during}"
    );
    held.step();
    assert_eq!(held.line(), "freed");
    let (_, after_free) = rocm_smi(&reg, None, &["--showmeminfo", "vram"]);
    let after_free = vram_used(&after_free);
    assert_eq!(
        during - after_free,
        256 * MIB,
        "exactly the freed 256 MiB went (before {during}, after {after_free})"
    );
    held.step();
    assert!(held.wait().success());
    let (_, after_exit) = rocm_smi(&reg, None, &["--showmeminfo", "vram"]);
    assert_eq!(vram_used(&after_exit), 0, "{after_exit}");
}

/// The `process` view's entry for `pid`, if listed.
fn process_entry(doc: &Value, pid: u32) -> Option<Value> {
    doc.as_array()?
        .iter()
        .flat_map(|g| g["process_list"].as_array().cloned().unwrap_or_default())
        .map(|p| p["process_info"].clone())
        .find(|p| p["pid"] == pid)
}

#[test]
fn wavejit_smi_lists_a_running_program_with_its_memory_and_forgets_it_after_exit_and_after_sigkill() {
    let reg = registry("json");
    // nothing running: an empty list, a clear message, success
    assert_eq!(smi_json(&reg, &["--json"]), Value::Array(vec![]));
    assert_eq!(smi_json(&reg, &["process", "--json"]), Value::Array(vec![]));
    let (code, so, _) = smi(&reg, &[]);
    assert_eq!(code, Some(0));
    assert!(so.contains("No wavejit process is running"), "{so}");

    let mut held = Held::start(&reg, 64);
    let procs = smi_json(&reg, &["process", "--json"]);
    let p = process_entry(&procs, held.pid).unwrap_or_else(|| panic!("pid {} not in {procs}", held.pid));
    assert_eq!(p["name"], "smi_hold", "{p}");
    let vram = p["emulated"]["vram_used"]["value"].as_u64().expect("bytes");
    assert!((64 * MIB..100 * MIB).contains(&vram), "{p}");
    // VRAM in whole MiB, rounded down, in every view
    for field in [&p["mem_usage"], &p["memory_usage"]["vram_mem"]] {
        assert_eq!(
            (field["value"].as_u64(), field["unit"].as_str()),
            (Some(vram / MIB), Some("MB")),
            "{p}"
        );
    }
    assert!(
        p["usage"]["gfx"]["value"].as_u64().unwrap_or(0) > 0 && p["dispatches"].as_u64().unwrap_or(0) >= 1,
        "it ran its fill kernel: {p}"
    );
    assert!(p["queues"].as_u64().unwrap_or(0) >= 1, "{p}");
    let cards = smi_json(&reg, &["metric", "--json"]);
    let card = &cards[0];
    assert_eq!(
        (card["gpu"].as_u64(), card["emulated"]["preset"].as_str()),
        (Some(0), Some("mi210")),
        "{cards}"
    );
    assert_eq!(card["emulated"]["vram_used"]["value"].as_u64(), Some(vram), "{cards}");
    assert_eq!(
        card["mem_usage"]["used_vram"]["value"].as_u64(),
        Some(vram / MIB),
        "the same rounding as the process view: {cards}"
    );
    let (_, summary, _) = smi(&reg, &[]);
    assert!(
        summary.contains(&format!("{} / 65536 MB", vram / MIB)),
        "and as the summary: {summary}"
    );
    assert_eq!(
        card["mem_usage"]["total_vram"]["value"].as_u64(),
        Some(65536),
        "{cards}"
    );
    assert_eq!(card["usage"]["basis"], "since start", "{cards}");
    let util = card["usage"]["gfx_activity"]["value"].as_f64().expect("a percentage");
    assert!((0.0..=100.0).contains(&util) && util > 0.0, "{cards}");
    assert!(
        card.get("power").is_none() && card.get("temperature").is_none(),
        "not modeled, not shown: {card}"
    );
    let list = smi_json(&reg, &["list", "--json"]);
    assert_eq!(list[0]["market_name"], "AMD Instinct MI210", "{list}");
    assert_eq!(list[0]["target_graphics_version"], "gfx90a", "{list}");
    let (code, so, _) = smi(&reg, &["process"]);
    assert!(
        code == Some(0) && so.contains(&format!("PID: {}", held.pid)) && so.contains("NAME: smi_hold"),
        "{so}"
    );
    // --watch: the second print measures the last interval
    let (code, so, se) = smi(&reg, &["metric", "--json", "--watch", "0.2", "--iterations", "2"]);
    assert_eq!(code, Some(0), "{se}");
    let docs: Vec<Value> = so
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON document per line"))
        .collect();
    assert_eq!(docs.len(), 2, "{so}");
    assert_eq!(
        (
            docs[0][0]["usage"]["basis"].as_str(),
            docs[1][0]["usage"]["basis"].as_str()
        ),
        (Some("since start"), Some("last interval"))
    );

    // a normal exit removes the record
    held.step();
    assert_eq!(held.line(), "freed");
    held.step();
    assert!(held.wait().success());
    assert_eq!(smi_json(&reg, &["process", "--json"]), Value::Array(vec![]));
    let left: Vec<_> = std::fs::read_dir(&reg)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "the record went with the process: {left:?}");

    // a killed process cannot clean up: readers notice its pid is gone and delete the record
    let held = Held::start(&reg, 64);
    let pid = held.pid;
    assert!(process_entry(&smi_json(&reg, &["process", "--json"]), pid).is_some());
    assert!(reg.join(format!("{pid}.smi")).exists());
    assert!(Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill")
        .success());
    let status = held.wait();
    assert_eq!(
        status.code(),
        Some(128 + 9),
        "wavejit exec reports the signal: {status:?}"
    );
    assert!(
        reg.join(format!("{pid}.smi")).exists(),
        "a SIGKILLed process leaves its record"
    );
    assert_eq!(smi_json(&reg, &["--json"]), Value::Array(vec![]));
    assert!(
        !reg.join(format!("{pid}.smi")).exists(),
        "the reader deleted the dead process's record"
    );
}

#[test]
fn rocm_smi_names_the_emulated_product_its_clocks_use_and_the_running_program() {
    let reg = registry("rocm");
    let held = Held::start(&reg, 32);
    let pid = held.pid.to_string();
    let checks: [(&str, &[&str]); 6] = [
        // the DPM level (one level, the peak clock): a reading rocm-smi's default view makes
        ("--showperflevel", &["Performance Level: high"]),
        ("--showid", &["GPU ID: 0x740f"]),
        (
            "--showproductname",
            &[
                "Card series: \t\tAMD Instinct MI210",
                "Card vendor: \t\tAdvanced Micro Devices, Inc. [AMD/ATI]",
                "Card SKU: \t\tMI210",
            ],
        ),
        ("--showuse", &["GPU use (%): ", "GFX Activity: "]),
        (
            "--showclocks",
            &["sclk clock level: 0: (1700Mhz)", "mclk clock level: 0: (1600Mhz)"],
        ),
        ("--showpids", &[pid.as_str(), "smi_hold"]),
    ];
    for (flag, wanted) in checks {
        let (code, out) = rocm_smi(&reg, None, &[flag]);
        assert_eq!(code, Some(0), "rocm-smi {flag}: {out}");
        for w in wanted {
            assert!(out.contains(w), "rocm-smi {flag}: no {w:?} in\n{out}");
        }
        assert!(!out.contains("Traceback"), "{out}");
    }
    // the process line: pid, name, one GPU, its VRAM (32 MiB and HIP's own)
    let (_, out) = rocm_smi(&reg, None, &["--showpids"]);
    let line = out
        .lines()
        .find(|l| l.starts_with(&pid))
        .unwrap_or_else(|| panic!("{out}"));
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((cols[1], cols[2]), ("smi_hold", "1"), "{line}");
    assert!(
        cols[3].parse::<u64>().is_ok_and(|v| (32 * MIB..64 * MIB).contains(&v)),
        "{line}"
    );
    // everything at once: what the emulator does not model (power, voltage, fan, firmware, RAS, memory
    // vendor) is reported as not supported (status 2) — nothing else fails, and nothing is made up
    let (code, out) = rocm_smi(&reg, None, &["--showallinfo"]);
    assert!(
        matches!(code, Some(0) | Some(2)),
        "rocm-smi --showallinfo: {code:?}\n{out}"
    );
    assert!(!out.contains("Traceback"), "{out}");
    for l in out
        .lines()
        .filter(|l| l.starts_with("ERROR: ") && l.contains("RSMI_STATUS"))
    {
        assert!(l.contains("RSMI_STATUS_NOT_SUPPORTED"), "{l}");
    }
    for w in [
        "AMD Instinct MI210",
        "GPU ID: 0x740f",
        "Driver version: wavejit",
        "sclk clock level: 0: (1700Mhz)",
        "Temperature (Sensor edge) (C): N/A",
        "Average Graphics Package Power (W): N/A",
        "smi_hold",
        "PCI Bus: 0000:",
    ] {
        assert!(out.contains(w), "rocm-smi --showallinfo: no {w:?} in\n{out}");
    }
    drop(held);
    // another product: the MI300X's id and name
    let (code, out) = rocm_smi(&reg, Some("mi300x"), &["--showid", "--showproductname"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("GPU ID: 0x74a1") && out.contains("AMD Instinct MI300X"),
        "{out}"
    );
}

#[test]
fn wavejit_smi_sees_programs_on_debians_rocr_over_the_emulated_driver_with_their_vram_queues_and_busy_time() {
    let reg = registry("kfd");
    let mut held = Held::start_on(&reg, 64, "kfd");
    let procs = smi_json(&reg, &["process", "--json"]);
    let p = process_entry(&procs, held.pid).unwrap_or_else(|| panic!("pid {} not in {procs}", held.pid));
    assert_eq!(p["name"], "smi_hold", "{p}");
    // its 64 MiB buffer object and what ROCr keeps in VRAM for itself
    let vram = p["emulated"]["vram_used"]["value"].as_u64().expect("bytes");
    assert!((64 * MIB..200 * MIB).contains(&vram), "{p}");
    assert!(
        p["dispatches"].as_u64().unwrap_or(0) >= 1 && p["usage"]["gfx"]["value"].as_u64().unwrap_or(0) > 0,
        "it ran its fill kernel: {p}"
    );
    assert!(p["queues"].as_u64().unwrap_or(0) >= 1, "{p}");
    // a second process on the emulated driver at the same time: each its own GPUs, both in the view
    let mut other = Held::start_on(&reg, 16, "kfd");
    let procs = smi_json(&reg, &["process", "--json"]);
    let first = process_entry(&procs, held.pid).unwrap_or_else(|| panic!("pid {} not in {procs}", held.pid));
    let second = process_entry(&procs, other.pid).unwrap_or_else(|| panic!("pid {} not in {procs}", other.pid));
    assert_eq!(
        first["emulated"]["vram_used"]["value"].as_u64(),
        Some(vram),
        "the first process's VRAM is its own: {procs}"
    );
    let vram_other = second["emulated"]["vram_used"]["value"].as_u64().expect("bytes");
    assert_eq!(
        vram - vram_other,
        48 * MIB,
        "64 MiB against 16, beside the same runtime's own: {procs}"
    );
    other.step();
    assert_eq!(other.line(), "freed");
    other.step();
    assert!(other.wait().success());
    held.step();
    assert_eq!(held.line(), "freed");
    let after = process_entry(&smi_json(&reg, &["process", "--json"]), held.pid).expect("still running");
    let left = after["emulated"]["vram_used"]["value"].as_u64().expect("bytes");
    assert_eq!(vram - left, 64 * MIB, "hipFree gave its buffer object back: {after}");
    held.step();
    assert!(held.wait().success());
    assert_eq!(smi_json(&reg, &["process", "--json"]), Value::Array(vec![]));
}
