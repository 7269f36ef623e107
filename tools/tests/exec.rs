//! Unmodified ROCm user space on emulated GPUs through `wavejit exec`: rocminfo, our HSA C tests against
//! Debian's hsa.h, and HIP programs built by Debian's hipcc running over Debian's libamdhip64 (the packages
//! come from scripts/setup.sh). The shim and wavejit are built in release mode once for these tests (the
//! programs run real library kernels such as rocrand's, which a debug build would run slowly).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod support;
use support::{hsa_cl, run, sources, text, wavejit};

/// A directory for this run's compiled programs.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("wavejit-exec-tests-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch directory");
        d
    })
}

/// Compiles runtime-shim/tests/hip/NAME.hip for gfx90a with Debian's hipcc into this run's directory.
fn hipcc(name: &str, extra: &[&str]) -> PathBuf {
    support::hipcc(scratch(), name, extra)
}

/// Runs `program args` under `wavejit exec` with `devices`; returns (success, stdout, stderr).
fn exec(devices: Option<&str>, program: &Path, args: &[&str]) -> (Output, String, String) {
    let mut cmd = Command::new(wavejit());
    // translations kept for this test run only, not in the user's cache
    cmd.env("WAVEJIT_CACHE", scratch().join("translation-cache"));
    cmd.arg("exec");
    if let Some(d) = devices {
        cmd.args(["--device", d]);
    }
    cmd.arg("--").arg(program).args(args);
    let o = run(&mut cmd);
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    (o, so, se)
}

fn exec_ok(devices: Option<&str>, program: &Path, args: &[&str]) -> String {
    let (o, so, se) = exec(devices, program, args);
    assert!(
        o.status.success(),
        "{} failed ({:?})\nstdout:\n{so}\nstderr:\n{se}",
        program.display(),
        o.status
    );
    so
}

/// Runs `program` under `wavejit exec --engine interp` (its kernels on the interpreter); its stdout must
/// contain `expected`.
fn interp_ok(program: &Path, expected: &str) {
    let o = run(Command::new(wavejit())
        .args(["exec", "--engine", "interp", "--"])
        .arg(program));
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    assert!(
        o.status.success() && so.contains(expected),
        "{} on the interpreter ({:?})\nstdout:\n{so}\nstderr:\n{se}",
        program.display(),
        o.status
    );
}

#[test]
fn rocminfo_lists_each_emulated_agent_with_its_real_name_and_properties() {
    let so = exec_ok(None, Path::new("rocminfo"), &[]);
    assert!(so.contains("Name:                    gfx90a"), "{so}");
    assert!(so.contains("Marketing Name:          AMD Instinct MI210"), "{so}");
    assert!(so.contains("Compute Unit:            104"), "{so}");
    assert!(so.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"), "{so}");
    assert!(so.contains("Device Type:             CPU"), "{so}");
    let so = exec_ok(Some("mi300x,mi210"), Path::new("rocminfo"), &[]);
    let gpus: Vec<&str> = so
        .lines()
        .filter(|l| l.trim_start().starts_with("Marketing Name:") && l.contains("AMD Instinct"))
        .collect();
    assert_eq!(gpus.len(), 2, "{so}");
    assert!(gpus[0].contains("MI300X") && gpus[1].contains("MI210"), "{gpus:?}");
    assert!(so.contains("Compute Unit:            304"), "{so}");
    assert!(so.contains("Wavefront Size:          64(0x40)"), "{so}");
}

#[test]
fn hsa_c_tests_of_agents_signals_queues_barriers_copies_faults_and_threads_pass() {
    let co = hsa_cl("kernels", &scratch().join("hsa_kernels.co"), &[]);
    let ext = hsa_cl(
        "external",
        &scratch().join("hsa_external.co"),
        &["-fvisibility=default", "-Wl,-z,undefs"],
    );
    let bin = scratch().join("hsa_test");
    let o = run(Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&bin)
        .arg(sources().join("hsa/hsa_test.c"))
        .args(["-lhsa-runtime64", "-lpthread", "-lm"]));
    assert!(o.status.success(), "cc hsa_test.c: {}", text(&o.stderr));
    let so = exec_ok(
        None,
        &bin,
        &[co.to_str().expect("UTF-8 path"), ext.to_str().expect("UTF-8 path")],
    );
    assert!(so.contains("hsa_test: all checks passed"), "{so}");
    // wavejit's runtime served the program, through the link exec puts where the program looks
    let runtime = so.lines().find_map(|l| l.strip_prefix("runtime: ")).unwrap_or_default();
    assert!(
        runtime.contains("/wavejit-exec-") && runtime.ends_with("/libhsa-runtime64.so.1"),
        "{runtime}"
    );
    assert!(
        so.contains("fault: the system event handler got address 0x1000; host data intact"),
        "{so}"
    );
    assert!(so.contains("faults: illegal instruction 0x2a, trap 0x1016"), "{so}");
    assert!(
        so.contains("external variable: defined by the application, read by the kernel"),
        "{so}"
    );
    assert!(
        so.contains("images: import, clear, copy, export, load, store and a filtered sample correct"),
        "{so}"
    );
    assert!(
        so.contains("svm: attributes per range, host memory reached by a kernel, prefetch after its dependency"),
        "{so}"
    );
    assert!(
        so.contains("interop: a mapped buffer changed in place by a kernel, then unmapped"),
        "{so}"
    );
    assert!(
        so.contains("code objects (pre-1.1): deserialized, queried, serialized back, loaded and run"),
        "{so}"
    );
    assert!(
        so.contains("ipc: a signal set to 0 by another process woke this one"),
        "{so}"
    );
    // the benchmark line, for the record
    if let Some(l) = so.lines().find(|l| l.starts_with("latency:")) {
        eprintln!("{l}");
    }
}

#[test]
fn hsa_async_handlers_survive_signals_destroyed_while_they_run() {
    // HIP's streams on two devices register handlers while destroying signals that carry some: the handler
    // thread once lost its place in the list (an index past its end) or deadlocked against a destroy
    let bin = scratch().join("async_stress");
    let o = run(Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&bin)
        .arg(sources().join("hsa/async_stress.c"))
        .args(["-lhsa-runtime64", "-lpthread"]));
    assert!(o.status.success(), "cc async_stress.c: {}", text(&o.stderr));
    for _ in 0..3 {
        let o = run(Command::new("timeout")
            .arg("120")
            .arg(wavejit())
            .args(["exec", "--"])
            .arg(&bin));
        let (so, se) = (text(&o.stdout), text(&o.stderr));
        assert!(
            o.status.success() && so.contains("async handlers: 6000 ran once each"),
            "({:?}, 124 = hung)\nstdout:\n{so}\nstderr:\n{se}",
            o.status
        );
    }
}

#[test]
fn hip_float_atomics_packed_integers_bit_masks_apertures_and_block_votes() {
    let bin = hipcc("device_ops", &[]);
    let so = exec_ok(None, &bin, &[]);
    assert!(
        so.contains("device ops: float atomics (global, flat on global and LDS, ds, buffer) correct"),
        "{so}"
    );
    assert!(so.contains("device ops: v_pk_sub, s_bfm, s_sext, SH_MEM_BASES apertures, generic LDS pointers, wrapped LDS addresses, clock64"), "{so}");
    assert!(
        so.contains("device ops: private arrays through generic pointers and 16-bit min3/max3/med3 correct"),
        "{so}"
    );
    assert!(
        so.contains("device ops: __syncthreads_and/or/count correct in blocks of 10 to 723 threads"),
        "{so}"
    );
    assert!(
        so.contains("device ops: float atomics on coherent host memory dropped as on MI200, performed on non-coherent"),
        "{so}"
    );
    interp_ok(&bin, "float atomics on coherent host memory dropped as on MI200");
}

#[test]
fn hip_managed_memory_is_shared_by_host_and_kernels() {
    let bin = hipcc("managed", &[]);
    let so = exec_ok(None, &bin, &[]);
    assert!(
        so.contains(
            "managed: host and kernels share 65536 floats without copies, advice, prefetches and __managed__ correct"
        ),
        "{so}"
    );
    interp_ok(&bin, "managed: host and kernels share");
}

#[test]
fn programs_run_with_a_huge_page_heap_unless_the_user_says_otherwise() {
    // `wavejit` starts itself again with glibc's huge-page heap tunable; the programs it runs inherit it
    let env_of = |extra: &[(&str, &str)]| {
        let mut cmd = Command::new(wavejit());
        cmd.arg("exec")
            .arg("env")
            .env_remove("GLIBC_TUNABLES")
            .env_remove("WAVEJIT_HUGE_PAGES")
            .envs(extra.iter().copied());
        let o = run(&mut cmd);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let tunables = |env: &str| {
        env.lines()
            .find_map(|l| l.strip_prefix("GLIBC_TUNABLES="))
            .map(str::to_string)
    };
    assert_eq!(tunables(&env_of(&[])).as_deref(), Some("glibc.malloc.hugetlb=1"));
    let added = env_of(&[("GLIBC_TUNABLES", "glibc.malloc.arena_max=4")]);
    assert_eq!(
        tunables(&added).as_deref(),
        Some("glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1")
    );
    let theirs = env_of(&[("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0")]);
    assert_eq!(
        tunables(&theirs).as_deref(),
        Some("glibc.malloc.hugetlb=0"),
        "the user's own setting stands"
    );
    let off = env_of(&[("WAVEJIT_HUGE_PAGES", "0")]);
    assert_eq!(tunables(&off), None, "{off}");
}

#[test]
fn a_long_kernel_runs_under_exec_and_the_instruction_limit_is_set_by_the_environment() {
    let bin = hipcc("long_kernel", &[]);
    // 30 million steps of 5 instructions, 150 million per wave
    let so = exec_ok(None, &bin, &["30000000"]);
    assert!(
        so.contains("long kernel: 30000000 steps in each of 64 lanes correct"),
        "{so}"
    );
    // a lower limit stops it, and the report says how to change the limit
    let o = run(Command::new(wavejit())
        .env("WAVEJIT_MAX_INSTRUCTIONS", "1000000")
        .args(["exec", "--"])
        .arg(&bin)
        .arg("30000000"));
    let se = text(&o.stderr);
    assert!(!o.status.success(), "{se}");
    assert!(se.contains("ran 1000000 instructions without ending"), "{se}");
    assert!(
        se.contains("WAVEJIT_MAX_INSTRUCTIONS=N (or `wavejit exec --max-instructions N`)"),
        "{se}"
    );
    let o = run(Command::new(wavejit())
        .args(["exec", "--max-instructions", "2000000", "--"])
        .arg(&bin)
        .arg("30000000"));
    assert!(
        !o.status.success() && text(&o.stderr).contains("ran 2000000 instructions without ending"),
        "{}",
        text(&o.stderr)
    );
    let o = run(Command::new(wavejit())
        .env("WAVEJIT_MAX_INSTRUCTIONS", "many")
        .args(["exec", "--"])
        .arg(&bin));
    assert!(
        !o.status.success() && text(&o.stderr).contains("WAVEJIT_MAX_INSTRUCTIONS=many: expected a number"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn hip_vector_add_compiled_without_an_offload_arch_targets_the_emulated_gpu() {
    // under exec, rocm_agent_enumerator reports the emulated target, so hipcc picks gfx90a by itself
    let out = scratch().join("vadd_auto");
    let o = run(Command::new(wavejit())
        .args(["exec", "--", "hipcc", "-I"])
        .arg(sources().join("hip"))
        .arg(sources().join("hip/vadd.hip"))
        .arg("-o")
        .arg(&out));
    assert!(
        o.status.success(),
        "hipcc under exec: {}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let so = exec_ok(None, &out, &[]);
    assert!(so.contains("0 of 100000 wrong"), "{so}");
    assert!(so.contains("AMD Instinct MI210"), "{so}");
    // the same program with its kernels on the interpreter
    interp_ok(&out, "0 of 100000 wrong");
}

#[test]
fn hip_memset_and_memcpy_in_every_direction_2d_async_and_pinned() {
    let so = exec_ok(None, &hipcc("memcpy", &[]), &[]);
    assert!(
        so.contains("memcpy: all directions, 2-D, async and pinned copies correct"),
        "{so}"
    );
}

#[test]
fn hip_dynamic_shared_memory_symbols_shuffles_and_occupancy_queries() {
    let so = exec_ok(None, &hipcc("misc", &[]), &[]);
    assert!(
        so.contains("misc: dynamic shared memory, constant and device symbols, shuffles and ballots"),
        "{so}"
    );
}

#[test]
fn hip_host_register_stream_callbacks_graphs_and_2d_memset() {
    let bin = hipcc("streams", &[]);
    let so = exec_ok(None, &bin, &[]);
    assert!(
        so.contains("streams: host register, stream callback, graphs, 2-D memset"),
        "{so}"
    );
    interp_ok(&bin, "streams: host register, stream callback, graphs, 2-D memset");
}

#[test]
fn hip_private_arrays_and_recursive_device_functions_use_scratch_correctly() {
    let bin = hipcc("scratch", &[]);
    let so = exec_ok(None, &bin, &[]);
    assert!(
        so.contains("scratch: private arrays and a recursive device function correct"),
        "{so}"
    );
    // the private-segment addressing is shared semantics: the interpreter agrees
    interp_ok(&bin, "scratch: private arrays");
}

#[test]
fn hip_textures_arrays_and_pitched_memory_sample_like_the_cpu_reference() {
    let bin = hipcc("texture", &[]);
    let so = exec_ok(None, &bin, &[]);
    for line in [
        "array copies: 851 texels round trip",
        "array, mirror, linear, normalized: 400 samples match",
        "pitched memory, clamp, nearest: 400 samples match",
        "linear memory: 1000 fetches match, 24 past the end read 0",
        "rgba8 normalized: 128 texels match",
        "3-D array: 315 texels match",
        "texture test passed",
    ] {
        assert!(so.contains(line), "missing {line:?} in {so}");
    }
    // image instructions run on the interpreter under the JIT too; the interpreter alone agrees
    interp_ok(&bin, "texture test passed");
}

#[test]
fn hip_ipc_memory_handles_share_device_memory_between_processes() {
    let so = exec_ok(None, &hipcc("ipc", &[]), &[]);
    assert!(
        so.contains("ipc child: opened the parent's buffer, read it and added 1000 to 65536 elements"),
        "{so}"
    );
    assert!(
        so.contains("ipc: another process's kernel changed all 65536 elements of this process's buffer"),
        "{so}"
    );
}

#[test]
fn hip_cooperative_launches_sync_the_grid_and_plain_launches_of_grid_sync_fault() {
    let bin = hipcc("coop", &[]);
    let so = exec_ok(None, &bin, &[]);
    assert!(
        so.contains("coop: 25 grid-wide syncs across 12 blocks match the CPU"),
        "{so}"
    );
    assert!(
        so.contains("coop: a flag hand-off through 16 spinning blocks matches the CPU"),
        "{so}"
    );
    interp_ok(&bin, "coop: 25 grid-wide syncs");
    // without a cooperative launch the workgroups are not all resident: the emulator says so, HIP aborts
    let (o, so, se) = exec(None, &bin, &["plain"]);
    assert!(!o.status.success() && !so.contains("completed"), "{so}{se}");
    assert!(
        se.contains("reached ds_gws_barrier (grid-wide sync) outside a cooperative launch"),
        "{se}"
    );
}

#[test]
fn hip_shared_memory_reduction_and_atomics_match_the_cpu() {
    let so = exec_ok(None, &hipcc("reduce", &[]), &[]);
    assert!(so.contains("all equal to the CPU's"), "{so}");
}

#[test]
fn hip_streams_and_events_order_work_and_time_it() {
    let so = exec_ok(None, &hipcc("events", &[]), &[]);
    assert!(so.contains("cross-stream wait respected"), "{so}");
}

#[test]
fn hip_events_time_a_bandwidth_test_in_modeled_time_under_the_timing_model() {
    // WAVEJIT_TIMING=1 (what `wavejit exec --timing` sets): dispatches run in the timing model and their
    // timestamps, which hipEventElapsedTime reads, are modeled time on the emulated MI210
    let prog = hipcc("bandwidth", &[]);
    let o = run(Command::new(wavejit())
        .env("WAVEJIT_TIMING", "1")
        .args(["exec", "--device", "mi210", "--"])
        .arg(&prog));
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "stdout:\n{so}\nstderr:\n{se}");
    let gbs: f64 = so
        .split_once("MiB in ")
        .and_then(|(_, r)| r.split_once(" ms: "))
        .and_then(|(_, r)| r.split_once(" GB/s"))
        .and_then(|(x, _)| x.trim().parse().ok())
        .unwrap_or_else(|| panic!("no bandwidth in {so:?}"));
    // the measured MI210 HBM read band, 1.17-1.40 TB/s, widened by 10%
    assert!((1170.0 * 0.9..=1400.0 * 1.1).contains(&gbs), "{gbs} GB/s: {so}");
    // the same dispatch again, from another queue slot and with its arguments elsewhere: the same modeled time
    let (again, first) = so
        .split_once("again: ")
        .and_then(|(_, r)| r.split_once(" ms, first "))
        .and_then(|(a, r)| Some((a.to_string(), r.split_once(" ms")?.0.to_string())))
        .unwrap_or_else(|| panic!("no second dispatch in {so:?}"));
    assert_eq!(again, first, "{so}");
    // clock64() counts modeled shader cycles: at least one 4-cycle VALU issue per loop instruction; the
    // 100 MHz wall clock advances by cycles x 100 / 1700
    let clocks = |so: &str| -> (u64, u64) {
        let (_, r) = so
            .split_once("clock64: ")
            .unwrap_or_else(|| panic!("no clock64 in {so:?}"));
        let c = r.split_whitespace().next().and_then(|x| x.parse().ok()).unwrap();
        let (_, r) = r.split_once("wall_clock64: ").unwrap();
        (c, r.split_whitespace().next().and_then(|x| x.parse().ok()).unwrap())
    };
    let (cycles, ticks) = clocks(&so);
    assert!(
        cycles >= 4000 && ticks.abs_diff(cycles * 100 / 1700) <= 1,
        "{cycles} cycles, {ticks} ticks"
    );
    // without the timing model the same events carry host time: the emulator is far slower than the device
    let so = exec_ok(Some("mi210"), &prog, &[]);
    // and clock64() still counts (4 per instruction the wave executes)
    let (cycles, _) = clocks(&so);
    assert!(cycles >= 4000, "{so}");
    let host: f64 = so
        .split_once(" ms: ")
        .and_then(|(_, r)| r.split_once(" GB/s"))
        .and_then(|(x, _)| x.trim().parse().ok())
        .unwrap();
    assert!(
        host < gbs / 10.0,
        "host-time bandwidth {host} GB/s against modeled {gbs}"
    );
}

#[test]
fn hip_module_load_and_launch_of_a_code_object_file() {
    let co = support::module_kernel_co(scratch());
    let so = exec_ok(None, &hipcc("module", &[]), &[co.to_str().expect("UTF-8 path")]);
    assert!(
        so.contains("module: loaded, global updated, kernel launched: 3000 results correct"),
        "{so}"
    );
}

#[test]
fn hip_sees_two_devices_and_copies_between_them() {
    let so = exec_ok(Some("mi210,mi210"), &hipcc("devices", &[]), &[]);
    assert!(so.contains("device 1: AMD Instinct MI210, gfx90a"), "{so}");
    assert!(so.contains("peer copy correct"), "{so}");
}

#[test]
fn rocr_visible_devices_chooses_and_orders_the_gpu_agents_as_rocms_runtime_does() {
    // the HSA agents rocminfo lists: GPUs by index or UUID prefix, in the order given; an index naming no GPU
    // ends the list; set but empty, no GPU (ROCR-Runtime's RvdFilter)
    let names = |env: Option<&str>| -> Vec<String> {
        let vars: Vec<(&str, &str)> = env.map(|v| ("ROCR_VISIBLE_DEVICES", v)).into_iter().collect();
        let (o, so, se) = exec_with(&["--device", "mi210,mi300x,mi250x"], &vars, Path::new("rocminfo"), &[]);
        assert!(
            o.status.success(),
            "rocminfo with ROCR_VISIBLE_DEVICES={env:?}: {so}\n{se}"
        );
        so.lines()
            .filter_map(|l| l.trim().strip_prefix("Marketing Name:"))
            .map(|n| n.trim().to_string())
            .filter(|n| n.starts_with("AMD"))
            .collect()
    };
    let (mi210, mi300x, mi250x) = (
        "AMD Instinct MI210",
        "AMD Instinct MI300X",
        "AMD Instinct MI250X (one GCD)",
    );
    assert_eq!(names(None), [mi210, mi300x, mi250x]);
    assert_eq!(names(Some("2,0")), [mi250x, mi210]);
    assert_eq!(names(Some("1, 5, 0")), [mi300x]);
    assert_eq!(names(Some("-1")), [] as [&str; 0]);
    assert_eq!(names(Some("")), [] as [&str; 0]);
    let (_, all, _) = exec_with(&["--device", "mi210,mi300x,mi250x"], &[], Path::new("rocminfo"), &[]);
    let uuids: Vec<&str> = all
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Uuid:"))
        .map(str::trim)
        .filter(|u| u.starts_with("GPU-"))
        .collect();
    assert_eq!(uuids.len(), 3, "{all}");
    assert_eq!(
        names(Some(&format!("{},{}", &uuids[1][..10], uuids[0].to_uppercase()))),
        [mi300x, mi210]
    );
    // HIP over it: no GPU left is HIP's "no device", as AMD's hipSetDevice tests expect
    let bin = hipcc("visible", &[]);
    let hip = |env: &[(&str, &str)]| {
        let (o, so, se) = exec_with(&["--device", "mi210,mi250x"], env, &bin, &[]);
        assert!(o.status.success(), "{env:?}: {so}\n{se}");
        so
    };
    let so = hip(&[("ROCR_VISIBLE_DEVICES", "1,0")]);
    assert!(
        so.contains("count: hipSuccess 2\ndevice 0: AMD Instinct MI250X (one GCD), gfx90a")
            && so.contains("device 1: AMD Instinct MI210, gfx90a"),
        "{so}"
    );
    for bad in ["-1", "2"] {
        let so = hip(&[("ROCR_VISIBLE_DEVICES", bad)]);
        assert!(
            so.contains(
                "count: hipErrorNoDevice 0\nhipSetDevice(0): hipErrorInvalidDevice\nhipGetDevice: hipErrorNoDevice"
            ),
            "ROCR_VISIBLE_DEVICES={bad}: {so}"
        );
    }
    // HIP_VISIBLE_DEVICES indexes what ROCR_VISIBLE_DEVICES left
    let so = hip(&[("ROCR_VISIBLE_DEVICES", "1,0"), ("HIP_VISIBLE_DEVICES", "1")]);
    assert!(
        so.contains("count: hipSuccess 1\ndevice 0: AMD Instinct MI210, gfx90a"),
        "{so}"
    );
}

#[test]
fn hip_device_printf_reaches_stdout_through_hostcall() {
    let so = exec_ok(None, &hipcc("printf", &[]), &[]);
    for (t, b) in [(0, 0), (32, 0), (0, 1), (32, 1)] {
        assert!(
            so.contains(&format!("hello from thread {t} of block {b}: {}", 1000 + t)),
            "{so}"
        );
    }
}

#[test]
fn hip_rocsparse_csrmv_csr2coo_and_csrsv_match_the_cpu() {
    let so = exec_ok(None, &hipcc("rocsparse", &["-lrocsparse"]), &[]);
    assert!(
        so.contains("rocsparse csrmv (analysed): 1000 rows, 11228 nonzeros"),
        "{so}"
    );
    assert!(so.contains("rocsparse csr2coo: 11228 row indices, 0 wrong"), "{so}");
    assert!(
        so.contains("rocsparse csrsv: 1000 rows solved, 8796 nonzeros")
            && so.contains("rocsparse csrsv: 187 rows, a structural zero pivot at row 49"),
        "{so}"
    );
}

#[test]
fn hip_rocrand_generators_produce_reproducible_numbers_with_the_right_moments() {
    let so = exec_ok(None, &hipcc("rocrand", &["-lrocrand"]), &[]);
    assert!(so.contains("rocrand xorwow") && so.contains("rocrand philox"), "{so}");
}

#[test]
fn hip_launch_benchmark_runs_every_launch_in_order_on_both_engines() {
    // the dispatch-overhead benchmark (its timings go to the README, not into assertions): empty kernels
    // launched and synchronized, launched back to back, then 1000 dependent launches that must run in order
    let bin = hipcc("launch", &[]);
    let so = exec_ok(None, &bin, &["200", "2000"]);
    assert!(
        so.contains("launch: 200 round trips") && so.contains("launch: 2000 asynchronous launches"),
        "{so}"
    );
    assert!(so.contains("launch: 1000 dependent launches ran in order"), "{so}");
    interp_ok(&bin, "launch: 1000 dependent launches ran in order");
}

/// What ROCm's runtime prints for a GPU memory fault on the first GPU before it aborts the process.
const ROCM_FAULT: &str = "Memory access fault by GPU node-1 (Agent handle: 0x";
const ROCM_FAULT_REASON: &str = ". Reason: Page not present or supervisor privilege.";

/// Whether `o` is a program that `wavejit exec` saw end by SIGABRT (128 + 6), after saying so.
fn aborted(o: &Output, stderr: &str) -> bool {
    o.status.code() == Some(134) && stderr.contains("was killed by signal 6")
}

#[test]
fn a_kernel_fault_is_reported_with_its_address_and_the_program_aborts_as_on_rocm() {
    let (o, so, se) = exec(None, &hipcc("fault", &[]), &[]);
    assert!(aborted(&o, &se), "{:?}\n{se}", o.status);
    assert!(
        se.contains("global_store_dword: lane 0: write of 4 bytes at 0x1000: outside device memory"),
        "{se}"
    );
    assert!(
        se.contains(&format!("on address 0x1000{ROCM_FAULT_REASON}")) && se.contains(ROCM_FAULT),
        "{se}"
    );
    assert!(!so.contains("after the fault"), "the program does not go on: {so}");
}

#[test]
fn an_hsa_program_that_faults_aborts_unless_a_system_event_handler_takes_the_fault_and_never_hangs() {
    let co = scratch().join("fault.co");
    let o = run(Command::new("clang-19")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx90a",
            "-nogpulib",
            "-O2",
        ])
        .arg(sources().join("hsa/fault.cl"))
        .arg("-o")
        .arg(&co));
    assert!(o.status.success(), "clang-19 fault.cl: {}", text(&o.stderr));
    let bin = scratch().join("hsa_fault");
    let o = run(Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&bin)
        .arg(sources().join("hsa/fault.c"))
        .arg("-lhsa-runtime64"));
    assert!(o.status.success(), "cc fault.c: {}", text(&o.stderr));
    let co = co.to_str().expect("UTF-8 path");
    for engine in ["jit", "interp"] {
        // no callback, no handler, a wait without a timeout: the fault ends the program, as on ROCm
        let (o, so, se) = exec_with(&["--engine", engine], &[], &bin, &[co, "plain"]);
        assert!(aborted(&o, &se), "{engine}: {:?}\n{so}\n{se}", o.status);
        let report = se.find("wavejit: GPU fault on agent 1 (AMD Instinct MI210): kernel past_end");
        let rocm = se.find(ROCM_FAULT);
        assert!(
            report.is_some() && rocm.is_some() && report < rocm,
            "{engine}: both reports, wavejit's first:\n{se}"
        );
        assert!(
            se.contains(": 4092 bytes past the end of the 4-byte allocation at ") && se.contains(ROCM_FAULT_REASON),
            "{engine}: {se}"
        );
        assert!(!so.contains("waited past"), "{engine}: {so}");
        // ROCm's switch for its line
        let (o, _, se) = exec_with(
            &["--engine", engine],
            &[("HSA_ENABLE_VM_FAULT_MESSAGE", "0")],
            &bin,
            &[co, "plain"],
        );
        assert!(aborted(&o, &se) && !se.contains(ROCM_FAULT), "{engine}: {se}");
        // a system event handler that takes the fault: the program goes on, its queue's callback told
        let (o, so, se) = exec_with(&["--engine", engine], &[], &bin, &[co, "handled"]);
        assert!(
            o.status.success()
                && so.contains("fault: handler saw address == target+4096, agent ==, queue status 0x0, signal 1"),
            "{engine}: {so}\n{se}"
        );
        assert!(!se.contains(ROCM_FAULT), "{engine}: {se}");
        // a trap on a queue without a callback: no memory fault, and still no hang and no exit 0
        let (o, so, se) = exec_with(&["--engine", engine], &[], &bin, &[co, "trap"]);
        assert!(
            aborted(&o, &se) && se.contains("has no error callback: aborting"),
            "{engine}: {so}\n{se}"
        );
        assert!(
            !se.contains(ROCM_FAULT) && !so.contains("waited past"),
            "{engine}: {se}"
        );
    }
}

/// Runs `program args` under `wavejit exec` with `flags` and `env`; returns (output, stdout, stderr).
fn exec_with(flags: &[&str], env: &[(&str, &str)], program: &Path, args: &[&str]) -> (Output, String, String) {
    let mut cmd = Command::new(wavejit());
    cmd.env("WAVEJIT_CACHE", scratch().join("translation-cache"))
        .envs(env.iter().copied())
        .arg("exec")
        .args(flags)
        .arg("--")
        .arg(program)
        .args(args);
    let o = run(&mut cmd);
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    (o, so, se)
}

#[test]
fn reads_and_writes_past_the_end_inside_the_last_page_pass_with_a_warning_and_fault_under_memcheck() {
    let bin = hipcc("overread", &[]);
    let mut warnings = Vec::new();
    for engine in ["jit", "interp", "crosscheck"] {
        let (o, so, se) = exec_with(&["--engine", engine], &[], &bin, &[]);
        assert!(
            o.status.success()
                && so.contains(
                    "overread: 35 doubles scaled from 18 pairs; the double written past the end reads back 42"
                ),
            "{engine}: {so}\n{se}"
        );
        let lines: Vec<&str> = se.lines().filter(|l| l.starts_with("wavejit: warning on agent 1 (AMD Instinct MI210): 1 access past the end of an allocation, inside its last page; the first: kernel ")).collect();
        assert_eq!(
            lines.len(),
            3,
            "{engine}: one warning per dispatch with such an access:\n{se}"
        );
        for (line, (kernel, what)) in lines.iter().zip([
            ("scale_pairs", "global_load_dwordx4: lane 17: read of 16 bytes at 0x_: 8 bytes past the end of the 280-byte allocation at 0x_ (device memory); the GPU reads"),
            ("write_last_pair", "global_store_dwordx4: lane 0: write of 16 bytes at 0x_: 8 bytes past the end of the 280-byte allocation at 0x_ (device memory); the GPU writes"),
            ("read_past_end", "s_load_dwordx2: read of 8 bytes at 0x_: 8 bytes past the end of the 280-byte allocation at 0x_ (device memory); the GPU reads"),
        ]) {
            let line = without_hex(line);
            assert!(line.contains(kernel) && line.contains("workgroup [0, 0, 0], wave 0, pc 0x_ (`"), "{engine}: {line}");
            assert!(line.ends_with(&format!("{what} the allocation's last page, so the dispatch went on; --memcheck stops at such accesses")), "{engine}: {line}");
        }
        warnings.push(lines.iter().map(|l| without_hex(l)).collect::<Vec<_>>());
    }
    assert!(
        warnings.windows(2).all(|w| w[0] == w[1]),
        "the engines warn alike: {warnings:?}"
    );
    // memcheck: the first of them is a fault, with the report of any access outside an allocation
    for (flags, env) in [
        (&["--memcheck"][..], &[][..]),
        (&["--engine", "interp"][..], &[("WAVEJIT_MEMCHECK", "1")][..]),
    ] {
        let (o, so, se) = exec_with(flags, env, &bin, &[]);
        assert!(
            !o.status.success() && !so.contains("overread:") && !se.contains("warning"),
            "{flags:?} {env:?}: {so}\n{se}"
        );
        let fault = "global_load_dwordx4: lane 17: read of 16 bytes at 0x_: runs 8 bytes past the end of the 280-byte allocation at 0x_ (device memory)";
        assert!(without_hex(&se).contains(&format!("wavejit: GPU fault on agent 1 (AMD Instinct MI210): kernel _Z11scale_pairsPKdPdi, workgroup [0, 0, 0], wave 0, pc 0x_ (`global_load_dwordx4 v[2:5], v1, s[0:1]`): {fault}")), "{se}");
        assert!(aborted(&o, &se) && se.contains(ROCM_FAULT), "{se}");
    }
    let (o, _, se) = exec_with(&[], &[("WAVEJIT_MEMCHECK", "yes")], &bin, &[]);
    assert!(
        !o.status.success() && se.contains("WAVEJIT_MEMCHECK=yes: expected 1"),
        "{se}"
    );
}

/// `text` with every hexadecimal number replaced by `0x_` (addresses differ from run to run).
fn without_hex(text: &str) -> String {
    let parts = text.split("0x").enumerate().map(|(i, p)| {
        if i == 0 {
            p
        } else {
            p.trim_start_matches(|c: char| c.is_ascii_hexdigit())
        }
    });
    parts.collect::<Vec<_>>().join("0x_")
}

#[test]
fn stores_past_the_end_of_a_buffer_run_within_its_last_page_and_fault_past_it_or_under_memcheck() {
    // rocPRIM 5.3's merge writes one index per thread past its temporary storage: a GPU maps the rest of the page
    let bin = hipcc("page_bounds", &[]);
    for engine in ["jit", "interp"] {
        let (o, so, se) = exec_with(&["--engine", engine], &[], &bin, &["near"]);
        assert!(
            o.status.success() && so.contains("page bounds: near stores ran, the two wanted entries are 0 and 1024"),
            "{engine}: {so}\n{se}"
        );
        // lanes 2 to 63 store past the end of the 8-byte array
        let warning = "wavejit: warning on agent 1 (AMD Instinct MI210): 62 accesses past the end of allocations, inside their last pages; the first: kernel _Z9partitionPjjj";
        assert!(
            se.contains(warning)
                && se.contains("lane 2: write of 4 bytes at")
                && se.contains(": 4 bytes past the end of the 8-byte allocation at"),
            "{engine}: {se}"
        );
        // past the last page it is a fault as before
        let (o, _, se) = exec_with(&["--engine", engine], &[], &bin, &["far"]);
        assert!(
            aborted(&o, &se) && se.contains("past the end of the 8-byte allocation") && se.contains(ROCM_FAULT),
            "{engine}: {se}"
        );
    }
    let (o, _, se) = exec_with(&["--memcheck"], &[], &bin, &["near"]);
    assert!(!o.status.success());
    assert!(
        se.contains("lane 2: write of 4 bytes at") && se.contains("just past the end of the 8-byte allocation"),
        "{se}"
    );
    // a store far past one buffer, towards the next: under --memcheck the redzones between allocations make it a
    // fault that names the buffer it overflowed, on both engines
    for engine in ["jit", "interp"] {
        let (o, _, se) = exec_with(&["--memcheck", "--engine", engine], &[], &bin, &["neighbour"]);
        assert!(
            aborted(&o, &se)
                && se.contains("lane 0: write of 4 bytes at")
                && se.contains("past the end of the 400-byte allocation")
                && se.contains(ROCM_FAULT),
            "{engine}: {se}"
        );
    }
}

#[test]
fn exec_says_clearly_what_it_cannot_run() {
    let (o, _, se) = exec(None, Path::new("/nonexistent/program"), &[]);
    assert!(!o.status.success());
    assert!(se.contains("cannot run /nonexistent/program"), "{se}");
    let (o, _, se) = exec(Some("mi999"), Path::new("true"), &[]);
    assert!(!o.status.success());
    assert!(se.contains("unknown device `mi999`"), "{se}");
    let o = run(Command::new(wavejit()).args(["exec", "--engine", "fast", "--", "true"]));
    assert!(
        !o.status.success() && text(&o.stderr).contains("--engine fast: expected jit, interp or crosscheck"),
        "{}",
        text(&o.stderr)
    );
    // the program's own exit status comes back
    let (o, _, _) = exec(None, Path::new("false"), &[]);
    assert_eq!(o.status.code(), Some(1));
}

/// `wavejit exec ARGS -- program` with `input` on stdin.
fn exec_with_input(args: &[&str], program: &Path, input: &str) -> (Output, String, String) {
    use std::io::Write;
    let mut child = Command::new(wavejit())
        .env("WAVEJIT_CACHE", scratch().join("translation-cache"))
        .arg("exec")
        .args(args)
        .arg("--")
        .arg(program)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    (o, so, se)
}

#[test]
fn hip_vector_add_runs_under_the_debugger_and_the_explorer_inside_the_program_on_both_routes() {
    let prog = hipcc("vadd", &[]);
    // where the kernel stores c[i], from wavejit's own disassembly of the program
    let d = run(Command::new(wavejit())
        .arg("disasm")
        .arg(&prog)
        .args(["--target", "gfx90a"]));
    let listing = text(&d.stdout);
    let store = listing
        .lines()
        .find(|l| l.trim_start().starts_with("global_store_dword "))
        .expect("vadd stores c[i]");
    let addr = store.split("// ").nth(1).unwrap().split(':').next().unwrap().trim();
    let data = store.trim().split(", ").nth(1).unwrap().to_string();
    // on the drop-in runtime and on Debian's ROCr over the emulated driver (which names kernels and their
    // arguments from the code object ROCr loaded)
    for route in ["hsa", "kfd"] {
        let script = format!("break 0x{addr}\ncontinue\nprint {data}\ninfo kernel\nquit\n");
        let (o, so, se) = exec_with_input(
            &["--driver", route, "--debug", "vadd", "--json", "--wave", "1,0,0:2"],
            &prog,
            &script,
        );
        assert!(o.status.success(), "{route}: stdout:\n{so}\nstderr:\n{se}");
        let answers: Vec<serde_json::Value> = so
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 6, "{route}: {so}");
        assert_eq!(answers[2]["stop"]["reason"], "breakpoint", "{route}: {so}");
        assert_eq!(answers[2]["stop"]["wave"], "1,0,0:2");
        // c[i] = a[i] + b[i] with a[i] = i * 0.5 and b[i] = 1000 - i, for i = 256 + 128 + lane
        let lanes = answers[3]["values"][0]["lanes"].as_array().unwrap();
        for (lane, v) in lanes.iter().enumerate() {
            let i = (384 + lane) as f32;
            assert_eq!(
                v.as_u64().unwrap() as u32,
                (i * 0.5 + (1000.0 - i)).to_bits(),
                "{route}: lane {lane}"
            );
        }
        // the kernel's arguments, from the metadata
        let info = answers[4].to_string();
        assert!(
            info.contains("global_buffer") && info.contains("by_value"),
            "{route}: {info}"
        );
        assert!(
            so.contains("0 of 100000 wrong"),
            "{route}: the program goes on after the debugger: {so}"
        );
        let page = scratch().join(format!("vadd-{route}.html"));
        let (o, so, se) = exec_with_input(
            &[
                "--driver",
                route,
                "--timing",
                "--trace-html",
                page.to_str().unwrap(),
                "--kernel",
                "vadd",
                "--max-recorded",
                "3000",
            ],
            &prog,
            "",
        );
        assert!(
            o.status.success() && so.contains("0 of 100000 wrong"),
            "{route}: stdout:\n{so}\nstderr:\n{se}"
        );
        assert!(
            se.contains("3000 of ") && se.contains("the cycle timeline; wrote"),
            "{route}: {se}"
        );
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(
            html.contains("\"recorded\":3000"),
            "{route}: the page holds the recorded instructions"
        );
        assert!(
            html.contains("\"timeline\":[{"),
            "{route}: the cycle timeline is on the page"
        );
        let cycles = html
            .rsplit_once("\"cycles\":")
            .and_then(|(_, r)| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<u64>().ok());
        assert!(
            cycles.is_some_and(|c| c > 1000),
            "{route}: the timing model's cycles are on the page: {cycles:?}"
        );
    }
}

/// Debian's device libraries with the ISA-version file they lack for gfx942 (as test-kernels/build.sh makes it).
fn gfx942_device_libs() -> PathBuf {
    let dl = Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
    let dir = scratch().join("device-libs-942");
    std::fs::create_dir_all(&dir).expect("a directory");
    for e in std::fs::read_dir(dl)
        .expect("rocm-device-libs (scripts/setup.sh installs it)")
        .flatten()
    {
        let _ = std::os::unix::fs::symlink(e.path(), dir.join(e.file_name()));
    }
    let isa = dir.join("isa.cl");
    std::fs::write(
        &isa,
        "__attribute__((visibility(\"protected\"))) const __constant int __oclc_ISA_version = 9402;\n",
    )
    .unwrap();
    let o = run(Command::new("clang-19")
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            "-nogpulib",
            "-cl-std=CL2.0",
            "-Xclang",
            "-mcode-object-version=none",
        ])
        .args(["-emit-llvm", "-c"])
        .arg(&isa)
        .arg("-o")
        .arg(dir.join("oclc_isa_version_942.bc")));
    assert!(o.status.success(), "clang-19 isa.cl: {}", text(&o.stderr));
    dir
}

#[test]
fn exec_refuses_devices_the_programs_gpu_code_cannot_run_on_before_it_starts() {
    let bin = hipcc("vadd", &[]);
    // gfx90a code only, on an MI300X alone: refused with the devices that would run it
    let (o, so, se) = exec(Some("mi300x"), &bin, &[]);
    assert!(
        o.status.code() == Some(1)
            && se.contains("carries GPU code for gfx90a only; mi300x (gfx942) cannot run it: use --device mi210")
            && so.is_empty()
            && !se.contains("signal"),
        "{:?}\n{so}\n{se}",
        o.status
    );
    // beside a device that runs it, HIP uses that one
    let so = exec_ok(Some("mi300x,mi210"), &bin, &[]);
    assert!(so.contains("0 of 100000 wrong"), "{so}");
    // HIP 5.2 on gfx942 alone, whatever the code: a clang-19 build with gfx942 code against Debian's HIP 5.2
    let out = scratch().join("vadd942");
    let o = run(Command::new("clang++-19")
        .args(["-O2", "-x", "hip", "--offload-arch=gfx942", "--rocm-path=/usr"])
        .arg(format!("--rocm-device-lib-path={}", gfx942_device_libs().display()))
        .arg("-I")
        .arg(sources().join("hip"))
        .arg(sources().join("hip/vadd.hip"))
        .arg("-o")
        .arg(&out)
        .args(["-L/usr/lib/x86_64-linux-gnu", "-lamdhip64"]));
    assert!(o.status.success(), "clang++-19: {}", text(&o.stderr));
    let (o, _, se) = exec(Some("mi300x"), &out, &[]);
    assert!(
        o.status.code() == Some(1)
            && se.contains("runs on HIP 5 (libamdhip64.so.5), which predates mi300x (gfx942): use --device mi210"),
        "{se}"
    );
}

#[test]
fn exec_options_that_cannot_apply_are_errors_and_a_kernel_never_dispatched_is_named() {
    let bin = hipcc("vadd", &[]);
    let flags = |f: &[&str]| exec_with(f, &[], &bin, &[]);
    let (o, so, se) = flags(&["--kernel", "vadd"]);
    assert!(
        o.status.code() == Some(1)
            && so.is_empty()
            && se.contains("--kernel and --max-recorded choose what --trace-html records"),
        "{se}"
    );
    let (o, _, se) = flags(&["--wave", "0,0,0:1"]);
    assert!(o.status.code() == Some(1) && se.contains("add --debug KERNEL"), "{se}");
    // the program runs; at its end exec says the kernel never ran, with those that did, and fails
    let (o, so, se) = exec_with_input(&["--debug", "vsub"], &bin, "quit\n");
    assert!(so.contains("0 of 100000 wrong"), "{so}");
    assert!(
        o.status.code() == Some(1)
            && se.contains("wavejit: --debug vsub: no kernel of that name was dispatched; it dispatched: vadd(float const*, float const*, float*, int)"),
        "{se}"
    );
    let page = scratch().join("never.html");
    let (o, _, se) = flags(&["--trace-html", page.to_str().unwrap(), "--kernel", "vsub"]);
    assert!(
        o.status.code() == Some(1) && se.contains("--trace-html --kernel vsub: no kernel of that name"),
        "{se}"
    );
    assert!(!page.exists());
    // named by its plain, demangled or mangled name, it runs
    let (o, _, se) = flags(&[
        "--trace-html",
        page.to_str().unwrap(),
        "--kernel",
        "vadd(float const*, float const*, float*, int)",
    ]);
    assert!(o.status.success() && page.exists(), "{se}");
}

#[test]
fn exec_timing_ends_with_the_modeled_time_of_every_kernel() {
    let bin = hipcc("vadd", &[]);
    let (o, _, se) = exec_with(&["--timing"], &[], &bin, &[]);
    assert!(o.status.success(), "{se}");
    let table: Vec<&str> = se
        .lines()
        .skip_while(|l| !l.starts_with("wavejit: modeled time per kernel"))
        .collect();
    assert!(table.len() >= 4, "{se}");
    assert!(
        table[1].contains("dispatches") && table[1].contains("total") && table[1].contains("cycles"),
        "{se}"
    );
    let row: Vec<&str> = table[2].split_whitespace().collect();
    assert!(
        table[2].contains("vadd(float const*, float const*, float*, int)"),
        "{se}"
    );
    let cycles: u64 = row.last().unwrap().parse().unwrap();
    assert!(cycles > 1000, "100,000 adds take thousands of cycles: {se}");
    // without --timing, no table
    let (_, _, se) = exec(None, &bin, &[]);
    assert!(!se.contains("modeled time per kernel"), "{se}");
}

#[test]
fn a_runaway_kernel_under_exec_reports_progress_and_its_timeout_ends_the_program() {
    let bin = hipcc("long_kernel", &[]);
    // four billion steps: twenty billion instructions, past any limit
    let (o, so, se) = exec_with(&["--timeout", "3"], &[("WAVEJIT_PROGRESS", "1")], &bin, &["4000000000"]);
    assert!(!o.status.success() && !so.contains("correct"), "{so}\n{se}");
    assert!(
        se.contains("wavejit: kernel lcg(unsigned int*, unsigned int) running for 1 s: 0 of 1 waves done, 1 resident"),
        "{se}"
    );
    assert!(
        se.contains("kernel _Z3lcgPjj: stopped after 3.")
            && se.contains("waves still running: workgroup [0, 0, 0] wave 0 at pc"),
        "{se}"
    );
    assert!(
        se.contains("WAVEJIT_TIMEOUT=SECS (or `wavejit exec --timeout SECS`)"),
        "{se}"
    );
    let (o, _, se) = exec_with(&["--timeout", "-2"], &[], &bin, &["1"]);
    assert!(
        o.status.code() == Some(1) && se.contains("--timeout -2: expected a number of seconds"),
        "{se}"
    );
}
