//! ROCm's own user space on the emulated kernel driver (`wavejit exec --driver kfd`): Debian's ROCr 5.2 and its
//! thunk run rocminfo, the HSA test programs, HIP programs and rocRAND's and rocSPARSE's kernels; tinygrad's own
//! KFD runtime runs tensor programs on the emulated MI300X on both its queue paths. Without the driver none of
//! these programs finds a GPU (there is no /dev/kfd here).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod support;
use support::{hsa_cl, run, sources, text, wavejit, workspace};

fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("wavejit-driver-tests-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch directory");
        d
    })
}

/// Compiles runtime-shim/tests/hip/NAME.hip for gfx90a with Debian's hipcc into this run's directory.
fn hipcc(name: &str, extra: &[&str]) -> PathBuf {
    support::hipcc(scratch(), name, extra)
}

/// Runs `program args` under `wavejit exec --driver kfd` with `flags` and `env`: (output, stdout, stderr).
fn kfd(flags: &[&str], env: &[(&str, &str)], program: &Path, args: &[&str]) -> (Output, String, String) {
    let o = run(Command::new(wavejit())
        .env("WAVEJIT_CACHE", scratch().join("translation-cache"))
        // programs that know they run on ROCm's own runtime leave out what only wavejit's runtime does
        .env("HSA_TEST_ROCR", "1")
        .envs(env.iter().copied())
        .args(["exec", "--driver", "kfd"])
        .args(flags)
        .arg("--")
        .arg(program)
        .args(args));
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    (o, so, se)
}

fn kfd_ok(flags: &[&str], program: &Path, args: &[&str]) -> String {
    let (o, so, se) = kfd(flags, &[], program, args);
    assert!(
        o.status.success(),
        "{} failed ({:?})\nstdout:\n{so}\nstderr:\n{se}",
        program.display(),
        o.status
    );
    so
}

#[test]
fn rocminfo_on_debians_rocr_lists_the_emulated_gpus_the_driver_serves() {
    let so = kfd_ok(&[], Path::new("rocminfo"), &[]);
    assert!(so.contains("Marketing Name:          AMD Instinct MI210"), "{so}");
    assert!(so.contains("Compute Unit:            104"), "{so}");
    assert!(so.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"), "{so}");
    let so = kfd_ok(&["--device", "mi210,mi250x"], Path::new("rocminfo"), &[]);
    let gpus: Vec<&str> = so
        .lines()
        .filter(|l| l.contains("Marketing Name:          AMD"))
        .collect();
    assert_eq!(gpus.len(), 2, "{so}");
    assert!(gpus[1].contains("MI250X"), "{gpus:?}");
    // the drop-in route needs no driver; this one fails without it: a program opening /dev/kfd gets ours only
    // under exec --driver kfd
    let o = run(&mut Command::new("rocminfo"));
    assert!(
        !o.status.success() || !text(&o.stdout).contains("AMD Instinct"),
        "no GPU without the emulated driver"
    );
}

#[test]
fn hsa_programs_run_on_debians_own_rocr_and_a_memory_fault_ends_as_rocr_ends_it() {
    let cl = |name: &str, extra: &[&str]| hsa_cl(name, &scratch().join(format!("{name}.co")), extra);
    let kernels = cl("kernels", &[]);
    let external = cl("external", &["-fvisibility=default", "-Wl,-z,undefs"]);
    let faults = cl("fault", &[]);
    let cc = |name: &str| {
        let bin = scratch().join(name);
        let o = run(Command::new("cc")
            .args(["-O1", "-Wall", "-o"])
            .arg(&bin)
            .arg(sources().join(format!("hsa/{name}.c")))
            .args(["-lhsa-runtime64", "-lpthread", "-lm"]));
        assert!(o.status.success(), "cc {name}.c: {}", text(&o.stderr));
        bin
    };
    let test = cc("hsa_test");
    let so = kfd_ok(&[], &test, &[kernels.to_str().unwrap(), external.to_str().unwrap()]);
    assert!(so.contains("hsa_test: all checks passed"), "{so}");
    // Debian's runtime served the program, not wavejit's
    let runtime = so.lines().find_map(|l| l.strip_prefix("runtime: ")).unwrap_or_default();
    assert!(
        runtime.ends_with("/x86_64-linux-gnu/libhsa-runtime64.so.1") && !runtime.contains("wavejit"),
        "{runtime}"
    );
    for line in [
        "dispatch: 32000 work-items correct",
        "barriers: AND waited for both dependencies, OR for one",
        "async copy: waited for its dependency, 128000 bytes correct; a 12x5 rectangle correct",
        "threads: 6 threads x 40 dispatches on 6 queues, every completion seen",
        "ipc: a signal set to 0 by another process woke this one",
        "fault: the system event handler got address 0x1000; host data intact",
        "faults: illegal instruction 0x2a, trap 0x1016",
        "svm: attributes per range, host memory reached by a kernel, prefetch after its dependency",
    ] {
        assert!(so.contains(line), "{line}:\n{so}");
    }
    // a memory fault with no handler: wavejit's report, then ROCr's own line and its abort (a write past a small
    // buffer stays in the block of device memory ROCr carved it from, and faults as little as on a GPU: the
    // kernel writes through a wild pointer instead)
    let fault = cc("fault");
    let co = faults.to_str().unwrap();
    for engine in ["jit", "interp"] {
        let (o, so, se) = kfd(&["--engine", engine], &[], &fault, &[co, "plain"]);
        assert!(
            o.status.success() && so.contains("fault: waited past the faulting dispatch"),
            "{engine}: {so}\n{se}"
        );
        let (o, _, se) = kfd(&["--engine", engine], &[], &fault, &[co, "wild"]);
        assert!(o.status.code() == Some(134), "{engine}: {:?}\n{se}", o.status);
        let ours = se.find("wavejit: GPU fault on GPU 0 (AMD Instinct MI210): kernel past_end");
        let rocr = se.find("Memory access fault by GPU node-1 (Agent handle: 0x");
        assert!(ours.is_some() && rocr.is_some() && ours < rocr, "{engine}:\n{se}");
        assert!(
            se.contains("Reason: Page not present or supervisor privilege."),
            "{engine}: {se}"
        );
        let (o, so, se) = kfd(&["--engine", engine], &[], &fault, &[co, "handled"]);
        assert!(
            o.status.success() && so.contains("fault: handler saw address == target+4096, agent ==, queue status 0x0"),
            "{engine}: {so}\n{se}"
        );
    }
}

#[test]
fn hip_programs_run_on_debians_own_hip_and_rocr_over_the_emulated_driver() {
    for (name, libs, flags, expected) in [
        ("vadd", &[][..], &[][..], "0 of 100000 wrong"),
        (
            "memcpy",
            &[],
            &[],
            "memcpy: all directions, 2-D, async and pinned copies correct",
        ),
        (
            "streams",
            &[],
            &[],
            "streams: host register, stream callback, graphs, 2-D memset",
        ),
        ("events", &[], &[], "cross-stream wait respected"),
        ("reduce", &[], &[], "all equal to the CPU's"),
        // ROCr's image manager lays HIP's arrays out tiled; ROCclr's blit kernels copy them
        ("texture", &[], &[], "texture test passed"),
        (
            "misc",
            &[],
            &[],
            "dynamic shared memory, constant and device symbols, shuffles and ballots",
        ),
        (
            "device_ops",
            &[],
            &[],
            "__syncthreads_and/or/count correct in blocks of 10 to 723 threads",
        ),
        ("printf", &[], &[], "hello from thread 32 of block 1: 1032"),
        (
            "scratch",
            &[],
            &[],
            "scratch: private arrays and a recursive device function correct",
        ),
        (
            "coop",
            &[],
            &[],
            "coop: 25 grid-wide syncs across 12 blocks match the CPU",
        ),
        (
            "devices",
            &[],
            &["--device", "mi210,mi210"],
            "devices: 2 GPUs, kernels on each, peer copy correct",
        ),
        (
            "ipc",
            &[],
            &[],
            "ipc: another process's kernel changed all 65536 elements of this process's buffer",
        ),
        (
            "managed",
            &[],
            &[],
            "managed: host and kernels share 65536 floats without copies, advice, prefetches and __managed__ correct",
        ),
        ("rocrand", &["-lrocrand"], &[], "rocrand philox"),
        (
            "rocsparse",
            &["-lrocsparse"],
            &[],
            "rocsparse csrsv: 187 rows, a structural zero pivot at row 49",
        ),
    ] {
        let bin = hipcc(name, libs);
        let so = kfd_ok(flags, &bin, &[]);
        assert!(so.contains(expected), "{name}: {so}");
    }
    // a kernel's memory fault: ROCr's own line and abort
    let (o, _, se) = kfd(&[], &[], &hipcc("fault", &[]), &[]);
    assert!(o.status.code() == Some(134), "{:?}\n{se}", o.status);
    assert!(
        se.contains("Memory access fault by GPU node-1") && se.contains("on address 0x1000"),
        "{se}"
    );
}

#[test]
fn more_of_the_drop_in_routes_hip_programs_run_on_rocr_over_the_emulated_driver() {
    // a code object file loaded and launched through hipModule*
    let co = support::module_kernel_co(scratch());
    let so = kfd_ok(&[], &hipcc("module", &[]), &[co.to_str().expect("UTF-8 path")]);
    assert!(
        so.contains("module: loaded, global updated, kernel launched: 3000 results correct"),
        "{so}"
    );
    // launches synchronized one by one, back to back, and 1000 that must run in order
    let so = kfd_ok(&[], &hipcc("launch", &[]), &["50", "500"]);
    assert!(so.contains("launch: 1000 dependent launches ran in order"), "{so}");
    // a read and a write past the end of a buffer, inside its last page, as a GPU lets them through
    let so = kfd_ok(&[], &hipcc("overread", &[]), &[]);
    assert!(
        so.contains("overread: 35 doubles scaled from 18 pairs; the double written past the end reads back 42"),
        "{so}"
    );
    let so = kfd_ok(&[], &hipcc("page_bounds", &[]), &["near"]);
    assert!(
        so.contains("page bounds: near stores ran, the two wanted entries are 0 and 1024"),
        "{so}"
    );
    // HIP's device queries and hipSetDevice on the agents ROCr enumerates
    let so = kfd_ok(&[], &hipcc("visible", &[]), &[]);
    assert!(
        so.contains("device 0: AMD Instinct MI210, gfx90a") && so.contains("hipSetDevice(0): hipSuccess"),
        "{so}"
    );
}

/// The GB/s bandwidth.hip prints.
fn bandwidth(so: &str) -> f64 {
    so.split_once("MiB in ")
        .and_then(|(_, r)| r.split_once(" ms: "))
        .and_then(|(_, r)| r.split_once(" GB/s"))
        .and_then(|(x, _)| x.trim().parse().ok())
        .unwrap_or_else(|| panic!("no bandwidth in {so:?}"))
}

#[test]
fn under_the_timing_model_rocrs_hip_events_time_kernels_in_modeled_time_as_the_drop_in_route_does() {
    let prog = hipcc("bandwidth", &[]);
    // the GPU clock is the modeled clock: ROCr translates its ticks with the host clocks GET_CLOCK_COUNTERS pairs
    // with it, and hipEventElapsedTime reads the dispatch's modeled time
    let (o, so, se) = kfd(&["--timing"], &[], &prog, &[]);
    assert!(o.status.success(), "stdout:\n{so}\nstderr:\n{se}");
    let kfd_gbs = bandwidth(&so);
    // the measured MI210 HBM read band, 1.17-1.40 TB/s, widened by 10%
    assert!((1170.0 * 0.9..=1400.0 * 1.1).contains(&kfd_gbs), "{kfd_gbs} GB/s: {so}");
    let drop_in = run(Command::new(wavejit())
        .args(["exec", "--driver", "hsa", "--timing", "--"])
        .arg(&prog));
    let hsa_gbs = bandwidth(&text(&drop_in.stdout));
    assert!(
        (kfd_gbs / hsa_gbs - 1.0).abs() < 0.05,
        "the same kernel in the same model: {kfd_gbs} vs {hsa_gbs} GB/s"
    );
    // exec's table of modeled time per kernel, from the driver's dispatches
    let row = se
        .lines()
        .skip_while(|l| !l.starts_with("wavejit: modeled time per kernel"))
        .find(|l| l.trim_start().starts_with("read_sum("))
        .unwrap_or_else(|| panic!("no modeled time of read_sum in {se}"));
    let dispatches: u32 = row.split_whitespace().rev().nth(5).unwrap().parse().unwrap();
    assert_eq!(dispatches, 3, "{row}");
    // without the timing model the events carry host time: the emulator is far slower than the device
    let (o, so, se) = kfd(&[], &[], &prog, &[]);
    assert!(o.status.success(), "{se}");
    assert!(bandwidth(&so) < 200.0, "{so}");
    assert!(!se.contains("modeled time per kernel"), "{se}");
}

/// The rows of a profile's CSV `name` in `dir` as maps from column to value.
fn csv_rows(dir: &Path, name: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    support::csv(&dir.join(name)).1
}

#[test]
fn a_profile_of_rocrs_program_has_its_kernels_with_the_drop_in_routes_counters_its_copies_and_ioctls() {
    let prog = hipcc("vadd", &[]);
    let counters = |route: &str| {
        let out = scratch().join(format!("profile-{route}"));
        let _ = std::fs::remove_dir_all(&out);
        let o = run(Command::new(wavejit())
            .env("WAVEJIT_CACHE", scratch().join("translation-cache"))
            .args(["profile", "--driver", route, "-o"])
            .arg(&out)
            .arg("--")
            .arg(&prog));
        assert!(o.status.success(), "{route}: {}", text(&o.stderr));
        let mut c: Vec<(String, String)> = csv_rows(&out, "counter_collection.csv")
            .into_iter()
            .filter(|r| r["Kernel_Name"].starts_with("vadd("))
            .map(|r| (r["Counter_Name"].clone(), r["Counter_Value"].clone()))
            .collect();
        c.sort();
        (out, c)
    };
    let (out, kfd) = counters("kfd");
    let (_, hsa) = counters("hsa");
    assert!(kfd.len() > 10, "{kfd:?}");
    assert_eq!(kfd, hsa, "the same kernel counted the same way on both routes");
    let kernels = csv_rows(&out, "kernel_trace.csv");
    let vadd = kernels
        .iter()
        .find(|r| r["Kernel_Name"].starts_with("vadd("))
        .expect("vadd in the kernel trace");
    assert_eq!(
        vadd["Mangled_Kernel_Name"], "_Z4vaddPKfS0_Pfi",
        "named from the code object ROCr loaded"
    );
    // ROCr's SDMA copies: vadd's two inputs in, its output out
    let copies = csv_rows(&out, "memory_copy_trace.csv");
    let dir = |d: &str| copies.iter().filter(|r| r["Direction"] == d).count();
    assert!(
        dir("MEMORY_COPY_HOST_TO_DEVICE") >= 2 && dir("MEMORY_COPY_DEVICE_TO_HOST") >= 1,
        "{copies:?}"
    );
    let calls = csv_rows(&out, "hsa_api_trace.csv");
    let ioctl = |name: &str| calls.iter().filter(|r| r["Function"] == name).count();
    assert!(
        ioctl("AMDKFD_IOC_CREATE_QUEUE") >= 1 && ioctl("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU") >= 3,
        "{calls:?}"
    );
    assert!(calls
        .iter()
        .all(|r| r["Domain"] == "KFD_IOCTL" || r["Domain"] == "DRM_IOCTL"));
}

/// The Python of the test environment (scripts/setup.sh makes it: tinygrad and numpy from PyPI).
fn venv_python() -> PathBuf {
    let p = workspace().join("target/venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: scripts/setup.sh makes it (tinygrad and numpy)",
        p.display()
    );
    p
}

#[test]
fn tinygrad_runs_tensor_programs_on_the_emulated_mi300x_on_both_its_queue_paths() {
    let script = scratch().join("tinygrad_programs.py");
    std::fs::write(&script, TINYGRAD_PROGRAMS).unwrap();
    let python = venv_python();
    // AQL queues (tinygrad's choice on a GPU of several XCDs) and its PM4 compute queue
    for aql in ["1", "0"] {
        let env = [
            ("DEV", "KFD+AMD:LLVM"),
            ("AMD_AQL", aql),
            ("HCQDEV_WAIT_TIMEOUT_MS", "600000"),
        ];
        let (o, so, se) = kfd(&["--device", "mi300x"], &env, &python, &[script.to_str().unwrap()]);
        assert!(o.status.success() && so.contains("all ok"), "AMD_AQL={aql}: {so}\n{se}");
        for name in [
            "matmul",
            "sum",
            "max",
            "softmax",
            "conv2d",
            "strided conv2d",
            "fp16",
            "elementwise",
        ] {
            assert!(
                so.contains(&format!("{name}: ")) && !so.contains("WRONG"),
                "AMD_AQL={aql} {name}: {so}"
            );
        }
    }
}

/// Tensor programs against numpy: matrix product, reductions, softmax, a convolution, fp16.
const TINYGRAD_PROGRAMS: &str = r#"
import numpy as np
from tinygrad import Tensor, dtypes, Device
assert Device.DEFAULT == "AMD", Device.DEFAULT
rng = np.random.default_rng(0)
a = rng.standard_normal((64, 48)).astype(np.float32)
b = rng.standard_normal((48, 32)).astype(np.float32)
ok = []
def check(name, got, want, tol=1e-4):
    err = float(np.max(np.abs(got - want) / (np.abs(want) + 1)))
    ok.append(err < tol)
    print(f"{name}: max relative error {err:.2e} {'ok' if err < tol else 'WRONG'}")
check("elementwise", (Tensor([1, 2, 3]) + 1).numpy(), np.array([2, 3, 4]))
check("matmul", (Tensor(a) @ Tensor(b)).numpy(), a @ b)
check("sum", Tensor(a).sum(axis=1).numpy(), a.sum(axis=1))
check("max", Tensor(a).max().numpy(), a.max())
e = np.exp(a - a.max(axis=1, keepdims=True))
check("softmax", Tensor(a).softmax(axis=1).numpy(), e / e.sum(axis=1, keepdims=True))
img = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
want = np.zeros((1, 4, 14, 14), np.float32)
for o in range(4):
    for i in range(14):
        for j in range(14):
            want[0, o, i, j] = (img[0, :, i:i + 3, j:j + 3] * w[o]).sum()
check("conv2d", Tensor(img).conv2d(Tensor(w)).numpy(), want)
# one kernel draws the normals and convolves them, with 1.5 KB of scratch a lane: tinygrad grows its scratch
# by rewriting the whole amd_queue_t of its running AQL queue, read_dispatch_id included
Tensor.manual_seed(0)
x, k = Tensor.randn(1, 12, 16, 32), Tensor.randn(32, 12, 3, 3)
got = x.conv2d(k, stride=2, padding=1).numpy()
xp, k = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1))), k.numpy()
want = np.zeros((1, 32, 8, 16), np.float32)
for i in range(8):
    for j in range(16):
        want[0, :, i, j] = np.tensordot(k, xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3], axes=3)
check("strided conv2d", got, want)
h = (Tensor(a).cast(dtypes.half) * 2 + 1).numpy().astype(np.float32)
check("fp16", h, (a.astype(np.float16) * 2 + 1).astype(np.float32), 2e-3)
print("all ok" if all(ok) else "FAILED")
"#;

/// Compiles tools/tests/driver-programs/NAME.c with the system's cc, with `libs`, into the program `out` in this
/// run's directory.
fn driver_program(name: &str, out: &str, libs: &[&str]) -> PathBuf {
    let bin = scratch().join(out);
    let src = workspace().join(format!("tools/tests/driver-programs/{name}.c"));
    let o = run(Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(libs));
    assert!(o.status.success(), "cc {}: {}", src.display(), text(&o.stderr));
    bin
}

#[test]
fn the_device_files_are_character_devices_with_drms_and_kfds_numbers_and_refuse_foreign_ioctls() {
    let (o, so, se) = kfd(&[], &[], &driver_program("devices", "devices", &[]), &[]);
    assert!(o.status.success(), "{:?}\nstdout:\n{so}\nstderr:\n{se}", o.status);
    // before the program opens a device (the driver has not started): the device's type and number already
    for line in [
        "stat before open /dev/kfd: chr 235:0 size 0",
        "access before open /dev/kfd: rw 0",
    ] {
        assert!(so.contains(line), "{line}:\n{so}");
    }
    for (path, number) in [("/dev/dri/renderD128", "226:128"), ("/dev/kfd", "235:0")] {
        for how in ["fstat", "fstatat", "stat", "lstat"] {
            let line = format!("{how} {path}: chr {number} size 0");
            assert!(so.contains(&line), "{line}:\n{so}");
        }
        let line = format!("statx {path}: chr {number}");
        assert!(so.contains(&line), "{line}:\n{so}");
        let line = format!("access {path}: rw 0, x -1");
        assert!(so.contains(&line), "{line}:\n{so}");
        // a terminal's ioctl on a device file: ENOTTY, as from the kernel's, and one line naming it
        let line = format!("ioctl TCGETS on {path}: -1 (Inappropriate ioctl for device)");
        assert!(so.contains(&line), "{line}:\n{so}");
    }
    assert_eq!(so.matches("stat and fstat name one file: yes").count(), 2, "{so}");
    assert!(
        so.contains("stat /dev/dri/renderD129: -1 (No such file or directory)"),
        "one GPU, one render node:\n{so}"
    );
    for device in ["/dev/kfd", "the render node"] {
        let line =
            format!("wavejit: {device} of the emulated driver does not take ioctl 0x5401 (of type 'T', not its own)");
        assert_eq!(se.matches(&line).count(), 1, "{line}:\n{se}");
    }
}

#[test]
fn hsa_programs_that_fork_before_hsa_init_run_kernels_in_both_processes() {
    let co = hsa_cl("kernels", &scratch().join("fork-kernels.co"), &[]);
    let fork = driver_program("fork", "fork", &["-lhsa-runtime64", "-l:libhsakmt.so.1"]);
    let co = co.to_str().expect("UTF-8 path");
    // forked before hsa_init: each process has a runtime of its own, over a driver of its own
    let so = kfd_ok(&[], &fork, &[co, "before"]);
    for line in [
        "parent: add_one correct",
        "child: add_one correct",
        "parent: child exited 0",
    ] {
        assert!(so.contains(line), "{line}:\n{so}");
    }
}

#[test]
fn hsa_programs_that_fork_after_hsa_init_exec_or_reconnect_through_the_thunk() {
    let co = hsa_cl("kernels", &scratch().join("fork-after-kernels.co"), &[]);
    let fork = driver_program("fork", "fork-after", &["-lhsa-runtime64", "-l:libhsakmt.so.1"]);
    let co = co.to_str().expect("UTF-8 path");
    // forked after hsa_init: the child execs a program that initialises HSA afresh, while the parent goes on
    let so = kfd_ok(&[], &fork, &[co, "after"]);
    assert_eq!(so.matches("parent: add_one correct").count(), 2, "{so}");
    for line in ["exec'd child: add_one correct", "parent: child exited 0"] {
        assert!(so.contains(line), "{line}:\n{so}");
    }
    // forked after hsa_init without exec: ROCr's runtime stays the parent's, but the thunk reconnects the child
    // to a driver of its own (the CPU's node and the GPU's)
    let so = kfd_ok(&[], &fork, &[co, "thunk"]);
    assert_eq!(so.matches("parent: add_one correct").count(), 2, "{so}");
    for line in ["child: KFD 1.14, 2 nodes", "parent: child exited 0"] {
        assert!(so.contains(line), "{line}:\n{so}");
    }
}
