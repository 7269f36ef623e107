//! The `wavejit` command line as a user meets it: defaults, filters, JSON, and clear errors on bad input.

use std::process::{Command, Output};

/// `wavejit ARGS` without the disk cache of translations (the tests that want it name a directory).
fn wavejit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(args)
        .env("WAVEJIT_CACHE", "off")
        .output()
        .unwrap()
}

fn tmp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wavejit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn disasm_without_a_file_lists_the_bundled_sample() {
    let out = wavejit(&["disasm"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("reduce_sum:"), "{text}");
    assert!(text.contains("s_barrier"), "the LDS reduction synchronises its waves");
    assert!(
        text.lines()
            .filter(|l| l.starts_with('\t'))
            .all(|l| l.contains("// 0000")),
        "every line carries its address"
    );
}

#[test]
fn kernel_filter_selects_one_function_and_unknown_names_fail() {
    let p = tmp("divergence.co", test_kernels::by_name("divergence-gfx90a.co").unwrap());
    let out = wavejit(&["disasm", p.to_str().unwrap(), "--kernel", "collatz_steps"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("collatz_steps:") && !text.contains("\ndivergence:"),
        "{text}"
    );
    assert!(
        text.contains("s_setpc_b64"),
        "a device function returns with s_setpc_b64"
    );
    let out = wavejit(&["disasm", p.to_str().unwrap(), "--kernel", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no function named nope"));
}

#[test]
fn info_json_describes_kernels_and_arguments() {
    let p = tmp("saxpy.co", test_kernels::by_name("saxpy-gfx942.co").unwrap());
    let out = wavejit(&["info", p.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains("\"saxpy\""), "{text}");
    assert!(text.contains("gfx942"), "{text}");
}

#[test]
fn bad_files_fail_with_a_message_that_names_the_file() {
    let missing = wavejit(&["disasm", "/nonexistent/kernel.co"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/kernel.co"));

    let co = test_kernels::by_name("vadd-gfx90a.co").unwrap();
    let p = tmp("truncated.co", &co[..co.len() / 3]);
    let out = wavejit(&["disasm", p.to_str().unwrap()]);
    assert!(!out.status.success(), "a truncated code object must be refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("truncated.co"), "{err}");

    let p = tmp("random.bin", &[0x5a; 4096]);
    let out = wavejit(&["info", p.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("random.bin"));
}

#[test]
fn a_directory_given_for_a_file_is_named_as_one() {
    let dir = std::env::temp_dir();
    let d = dir.to_str().unwrap();
    for args in [
        vec!["disasm", d],
        vec!["info", d],
        vec!["run", d, "--grid", "64", "--block", "64"],
        vec!["trace", d, "--grid", "64", "--block", "64", "--html", "/dev/null"],
        vec!["debug", d, "--grid", "64", "--block", "64"],
    ] {
        let out = wavejit(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            err.contains(&format!(
                "{d} is a directory; give a code object, HIP executable or shared library"
            )) && !err.contains("os error"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn help_and_errors_list_the_engines_and_devices_each_command_takes() {
    let ids: Vec<&str> = emu_core::PRESETS.iter().map(|p| p.id).collect();
    let co = tmp("vadd-names.co", test_kernels::by_name("vadd-gfx90a.co").unwrap());
    let co = co.to_str().unwrap();
    let prof = co.replace("vadd-names.co", "names-profile");
    let kernel = |command: &'static str| vec![command, co, "--grid", "64", "--block", "64"];
    let all = ["jit", "interp", "crosscheck"];
    // each command, what its --engine takes, and what follows the option under test (exec and profile check
    // their names once they have a program)
    let commands: [(Vec<&str>, &[&str], Vec<&str>); 6] = [
        (kernel("run"), &all, vec![]),
        (vec!["demo"], &all, vec![]),
        (vec!["exec"], &all, vec!["--", "true"]),
        (vec!["profile", "-o", &prof], &all, vec!["--", "true"]),
        (kernel("debug"), &all[..2], vec![]),
        (kernel("trace"), &all[..2], vec![]),
    ];
    // the device names a text gives: every preset's id, and no other spelling of them
    let names_the_devices =
        |text: &str| ids.iter().all(|id| text.contains(id)) && !text.replace("mi250x-gcd", "").contains("mi250x");
    for (args, engines, tail) in &commands {
        let out = wavejit(&[&args[..], &["--engine", "bogus"], tail].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        let listed: Vec<&str> = all.iter().copied().filter(|e| err.contains(e)).collect();
        assert_eq!(&listed, engines, "{}: {err}", args[0]);
        let help = String::from_utf8_lossy(&wavejit(&[args[0], "--help"]).stdout).into_owned();
        assert_eq!(
            help.contains("crosscheck"),
            engines.contains(&"crosscheck"),
            "{}: {help}",
            args[0]
        );
        assert!(names_the_devices(&help), "{}: {help}", args[0]);
        let out = wavejit(&[&args[..], &["--device", "h100"], tail].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("h100") && names_the_devices(&err),
            "{}: {err}",
            args[0]
        );
    }
    let _ = std::fs::remove_dir_all(&prof);
    let trace = ["trace", co, "--grid", "64", "--block", "64", "--html", "/dev/null"];
    let out = wavejit(&[&trace[..], &["--engine", "crosscheck"]].concat());
    assert!(!out.status.success(), "the explorer records one engine");
    // bench measures every engine and takes no --engine; its --device is as everywhere
    let out = wavejit(&["bench", "--engine", "jit"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--engine'"));
    let bench = String::from_utf8_lossy(&wavejit(&["bench", "--help"]).stdout).into_owned();
    assert!(names_the_devices(&bench) && !bench.contains("--engine"), "{bench}");
    let err = String::from_utf8_lossy(&wavejit(&["bench", "--device", "h100"]).stderr).into_owned();
    assert!(names_the_devices(&err), "{err}");
    // an alias and any case still name a preset
    let out = wavejit(&[&kernel("run")[..], &["--device", "MI250X", "--arg", "u32=1"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("invalid value") && !err.contains("unknown device") && err.contains("kernel vadd"),
        "the device is taken; the arguments are what is wrong: {err}"
    );
}

#[test]
fn invalid_words_inside_code_print_as_data_like_objdump() {
    // vadd with one instruction word overwritten by 0xFFFFFFFF: the listing goes on
    let mut co = test_kernels::by_name("vadd-gfx90a.co").unwrap().to_vec();
    let parsed = isa_amdgpu::codeobj::CodeObject::parse(&co, "vadd").unwrap();
    let f = &parsed.functions[0];
    let off = f.file_offset as usize + 0x10; // the s_waitcnt after two 8-byte loads
    co[off..off + 4].copy_from_slice(&[0xff; 4]);
    let p = tmp("poked.co", &co);
    let out = wavejit(&["disasm", p.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(".long 0xffffffff"), "{text}");
    assert!(text.contains("s_endpgm"), "decoding resumes after the bad word");
}

#[test]
fn run_executes_vadd_from_files_and_writes_stats() {
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let pa = tmp("a.bin", &bytes(&a));
    let pb = tmp("b.bin", &bytes(&b));
    let pc = pa.with_file_name("c.bin");
    let ps = pa.with_file_name("stats.json");
    let co = tmp("vadd-gfx90a.co", test_kernels::by_name("vadd-gfx90a.co").unwrap());
    for (device, engine) in [("mi210", "jit"), ("mi250x", "interp"), ("mi210", "crosscheck")] {
        // every block translated on first use (vadd is too short for any block to become hot in the tiers)
        let out = wavejit(&[
            "run",
            co.to_str().unwrap(),
            "--kernel",
            "vadd",
            "--grid",
            "1000",
            "--block",
            "256",
            "--device",
            device,
            "--arg",
            &format!("in={}", pa.display()),
            "--arg",
            &format!("in={}", pb.display()),
            "--arg",
            &format!("out={}:{}", pc.display(), n * 4),
            "--arg",
            "u32=1000",
            "--stats-json",
            ps.to_str().unwrap(),
            "--engine",
            engine,
            "--hot-after",
            "0",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let c = std::fs::read(&pc).unwrap();
        for i in 0..n {
            let got = f32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
            assert_eq!(got, a[i] + b[i], "c[{i}]");
        }
        let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&ps).unwrap()).unwrap();
        assert_eq!(stats["kernel"], "vadd");
        assert_eq!(stats["waves"], 16);
        assert!(stats["wave_instructions"].as_u64().unwrap() > 100);
        assert!(stats["seconds"].as_f64().is_some());
        assert_eq!(stats["engine"], engine);
        // the JIT translated blocks and compiled vadd's instructions; the interpreter translated nothing
        let (blocks, compiled) = (
            stats["jit_blocks"].as_u64().unwrap(),
            stats["jit_compiled_instructions"].as_u64().unwrap(),
        );
        assert_eq!(
            blocks > 0 && compiled > 0,
            engine != "interp",
            "{engine}: {blocks} blocks, {compiled} compiled"
        );
        assert!(stats["jit_fallbacks"].as_u64().is_some());
        if engine == "interp" {
            // instructions per functional unit, named as the table's unit column names them, each counted once
            let units = stats["instructions_by_unit"].as_object().unwrap();
            assert!(
                units["valu"].as_u64().unwrap() > 0 && units["smem"].as_u64().unwrap() > 0,
                "{units:?}"
            );
            assert_eq!(
                units.values().map(|n| n.as_u64().unwrap()).sum::<u64>(),
                stats["wave_instructions"].as_u64().unwrap()
            );
        }
    }
}

#[test]
fn run_memcheck_puts_redzones_between_the_argument_buffers_so_a_read_far_past_one_faults_on_every_engine() {
    // chase_vector follows next[p] from p = 0: next[0] = 100,100 sends it 400,000 bytes past the end of the
    // 400-byte `next`, which without redzones lies inside the 1 MiB `out` allocated after it
    let co = tmp("chase-gfx90a.co", test_kernels::by_name("chase-gfx90a.co").unwrap());
    let mut next = vec![0u8; 400];
    next[..4].copy_from_slice(&100_100u32.to_le_bytes());
    let next = tmp("redzone-next.bin", &next);
    let arg_next = format!("in={}", next.display());
    let out = next.with_file_name("redzone-out.bin");
    let arg_out = format!("out={}:1048576", out.display());
    for engine in ["jit", "interp"] {
        let run = wavejit(&[
            "run",
            co.to_str().unwrap(),
            "--kernel",
            "chase_vector",
            "--grid",
            "1",
            "--block",
            "1",
            "--engine",
            engine,
            "--memcheck",
            "--arg",
            &arg_next,
            "--arg",
            "u32=1",
            "--arg",
            &arg_out,
        ]);
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{engine}: {err}");
        let (next, out) = (next.display().to_string(), out.display().to_string());
        assert!(
            err.contains("global_load_dword")
                && err.contains(": 400000 bytes past the end of the 400-byte allocation at 0x")
                && err.contains(&format!(" ({next}) and "))
                && err.contains(" bytes before the 1048576-byte allocation at 0x")
                && err.contains(&format!(" ({out})")),
            "{engine}: {err}"
        );
    }
}

#[test]
fn run_reports_faults_and_bad_arguments_with_a_non_zero_exit() {
    let co = tmp("vadd-gfx942.co", test_kernels::by_name("vadd-gfx942.co").unwrap());
    let small = tmp("small.bin", &[0u8; 64]);
    let arg_in = format!("in={}", small.display());
    let arg_out = format!("out={}:64", small.with_file_name("o.bin").display());
    let base = ["run", co.to_str().unwrap(), "--grid", "256", "--block", "64"];
    let mut args: Vec<&str> = base.to_vec();
    args.extend([
        "--arg",
        &arg_in,
        "--arg",
        &arg_in,
        "--arg",
        &arg_out,
        "--arg",
        "u32=256",
        "--memcheck",
    ]);
    let out = wavejit(&args);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kernel vadd")
            && err.contains("global_load_dword")
            && err.contains("just past the end of the 64-byte allocation"),
        "{err}"
    );
    // 4160 work-items: from element 1024 on, the reads lie past the inputs' pages, a fault in any mode
    let mut args: Vec<&str> = base.to_vec();
    args[3] = "4160";
    args.extend([
        "--arg", &arg_in, "--arg", &arg_in, "--arg", &arg_out, "--arg", "u32=4160",
    ]);
    let err = String::from_utf8_lossy(&wavejit(&args).stderr).into_owned();
    assert!(
        err.contains("global_load_dword") && err.contains("4032 bytes past the end of the 64-byte allocation"),
        "{err}"
    );

    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--arg", "float=1"]);
    let out = wavejit(&args);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown kind `float`"));

    let out = wavejit(&["run", co.to_str().unwrap(), "--grid", "256", "--block", "2048"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("allows at most 1024"));
}

#[test]
fn run_lets_accesses_past_the_end_inside_the_last_page_through_counts_them_and_warns_on_every_engine() {
    let co = tmp("vadd-gfx90a.co", test_kernels::by_name("vadd-gfx90a.co").unwrap());
    // 64-byte inputs, 300 elements: lanes 16..299 read the rest of the inputs' pages (zeros) and write the rest of c's
    let small = tmp("small-in.bin", &[1u8; 64]);
    let arg_in = format!("in={}", small.display());
    let arg_out = format!("out={}:64", co.with_file_name("small-out.bin").display());
    let mut warnings = Vec::new();
    for engine in ["jit", "interp", "crosscheck"] {
        let json = co.with_file_name(format!("slack-{engine}.json"));
        let (json_s, arg_out) = (json.to_str().unwrap(), arg_out.as_str());
        let args = [
            "run",
            co.to_str().unwrap(),
            "--grid",
            "300",
            "--block",
            "64",
            "--engine",
            engine,
            "--stats-json",
            json_s,
        ];
        let out = wavejit(
            &args
                .into_iter()
                .chain(["--arg", &arg_in, "--arg", &arg_in, "--arg", arg_out, "--arg", "u32=300"])
                .collect::<Vec<_>>(),
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{engine}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let warning = text
            .lines()
            .find(|l| l.starts_with("warning: "))
            .unwrap_or_else(|| panic!("{engine}: no warning in {text}"))
            .to_string();
        assert!(warning.starts_with("warning: 852 accesses past the end of allocations, inside their last pages; the first: kernel vadd, workgroup [0, 0, 0], wave 0, pc 0x"), "{warning}");
        assert!(
            warning.contains("global_load_dword: lane 16: read of 4 bytes at 0x")
                && warning.contains(": 4 bytes past the end of the 64-byte allocation at 0x"),
            "{warning}"
        );
        assert!(warning.ends_with("; the GPU reads the allocation's last page, so the dispatch went on; --memcheck stops at such accesses"), "{warning}");
        let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(
            (stats["slack_accesses"].as_u64(), stats["memcheck"].as_bool()),
            (Some(852), Some(false)),
            "{engine}: {stats}"
        );
        // the output file holds the allocation's 64 bytes: 16 sums of two 0x01010101 words
        let sums = std::fs::read(co.with_file_name("small-out.bin")).unwrap();
        assert!(
            sums.chunks(4)
                .all(|w| f32::from_le_bytes(w.try_into().unwrap()) == 2.0 * f32::from_le_bytes([1; 4])),
            "{engine}"
        );
        warnings.push(warning.split(" pc ").next().unwrap().to_string());
    }
    assert!(warnings.windows(2).all(|w| w[0] == w[1]), "{warnings:?}");
}

#[test]
fn demo_runs_every_bundled_kernel_and_checks_it() {
    let out = wavejit(&["demo", "--device", "mi210", "--engine", "crosscheck"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for k in ["vadd", "saxpy", "reduce_sum", "divergence", "alu_loop"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(k) && l.contains("matches the CPU reference")),
            "{k}: {text}"
        );
    }
    assert!(text.contains("MI210") && text.contains("engine: crosscheck"));
}

#[test]
fn a_second_run_with_the_same_cache_directory_translates_nothing() {
    let co = tmp("sgemm-gfx90a.co", test_kernels::by_name("sgemm-gfx90a.co").unwrap());
    let cache = co.with_file_name("translation-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let run = || {
        // every block translated on first use; A, B and C are 64x64 floats, zeroed
        let matrix = |name: &str| format!("out={}:16384", co.with_file_name(name).display());
        let (a, b, c) = (matrix("a.bin"), matrix("b.bin"), matrix("c.bin"));
        let args = [
            "run",
            co.to_str().unwrap(),
            "--grid",
            "64,64",
            "--block",
            "16,16",
            "--device",
            "mi210",
            "--hot-after",
            "0",
        ];
        let args = args
            .into_iter()
            .chain(["--arg", &a, "--arg", &b, "--arg", &c, "--arg", "u32=64"]);
        let out = Command::new(env!("CARGO_BIN_EXE_wavejit"))
            .args(args)
            .env("WAVEJIT_CACHE", &cache)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = run();
    assert!(
        first.contains(" 0 loaded from the disk cache") && !first.contains(" 0 blocks translated"),
        "{first}"
    );
    let second = run();
    assert!(
        second.contains(" 0 blocks translated") && !second.contains(" 0 loaded"),
        "{second}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_cache_directory_others_may_write_is_refused_with_one_warning_and_left_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let co = tmp("vadd-open-cache.co", test_kernels::by_name("vadd-gfx90a.co").unwrap());
    let cache = co.with_file_name("open-cache");
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let buffer = |name: &str| format!("out={}:256", co.with_file_name(name).display());
    let (a, b, c) = (buffer("oa.bin"), buffer("ob.bin"), buffer("oc.bin"));
    let out = Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args([
            "run",
            co.to_str().unwrap(),
            "--grid",
            "64",
            "--block",
            "64",
            "--hot-after",
            "0",
        ])
        .args(["--arg", &a, "--arg", &b, "--arg", &c, "--arg", "u32=64"])
        .env("WAVEJIT_CACHE", &cache)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains(&cache.display().to_string())
            && warnings[0].contains("not private to this user (mode 777")
            && warnings[0].ends_with("not using the disk cache"),
        "{stderr}"
    );
    assert!(stdout.contains(" 0 loaded from the disk cache"), "{stdout}");
    assert_eq!(
        std::fs::read_dir(&cache).unwrap().count(),
        0,
        "nothing was written into it"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn bench_reports_lane_ops_and_gflops_and_rejects_bad_sizes() {
    let json = tmp("bench.json", b"");
    let out = wavejit(&[
        "bench",
        "--device",
        "mi210",
        "--threads",
        "1",
        "--sgemm-n",
        "32",
        "--iterations",
        "20",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("M VALU lane-ops/s") && text.contains("emulated GFLOP/s"),
        "{text}"
    );
    assert!(
        text.contains("interpreter")
            && text.contains("x the interpreter")
            && text.contains("translation per instruction"),
        "{text}"
    );
    assert!(
        text.contains("disk cache:") && text.contains("0 translated again"),
        "{text}"
    );
    // every figure of the text, as JSON
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for (section, key) in [
        ("alu_loop", "jit_mlane_ops_per_s"),
        ("alu_loop", "interpreter_s"),
        ("sgemm", "jit_gflops"),
        ("mfma_gemm", "jit_vs_interpreter"),
        ("jit", "translation_us_per_instruction"),
        ("jit", "load_us_per_instruction"),
    ] {
        assert!(
            j[section][key].as_f64().is_some_and(|x| x > 0.0),
            "{section}.{key} in {j}"
        );
    }
    assert_eq!(j["jit"]["translated_again"], 0, "{j}");
    // `--json -`: the JSON alone on stdout
    let out = wavejit(&[
        "bench",
        "--device",
        "mi210",
        "--threads",
        "1",
        "--sgemm-n",
        "32",
        "--iterations",
        "2",
        "--json",
        "-",
    ]);
    assert!(out.status.success());
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["device"], "mi210");
    assert_eq!(j["repeat"], 3, "each engine's fastest of three runs by default");
    let out = wavejit(&["bench", "--sgemm-n", "32", "--repeat", "0"]);
    assert!(!out.status.success(), "at least one run");
    let out = wavejit(&["bench", "--sgemm-n", "20"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("multiple of 16"));
}

#[test]
fn bench_timing_takes_repeat_and_writes_its_figures_as_json() {
    let out = wavejit(&[
        "bench",
        "--timing",
        "--device",
        "mi210",
        "--iterations",
        "5",
        "--repeat",
        "1",
        "--json",
        "-",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("wave-instructions per second on one host core") && text.contains("x the functional time"),
        "{text}"
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (j["device"].as_str(), j["repeat"].as_u64()),
        (Some("mi210"), Some(1)),
        "{j}"
    );
    let kernels = j["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 2, "the ALU loop and the streaming kernel: {j}");
    for k in kernels {
        let n = k["wave_instructions"].as_u64().unwrap();
        // the text shows the same counts as the JSON
        assert!(
            text.contains(&format!(
                "{}: {n} wave instructions, {} modeled cycles",
                k["kernel"].as_str().unwrap(),
                k["modeled_cycles"]
            )),
            "{k} in {text}"
        );
        for key in ["functional_s", "timing_s", "functional_m_per_s", "timing_m_per_s"] {
            assert!(k[key].as_f64().is_some_and(|x| x > 0.0), "{key} in {k}");
        }
        let ratio = k["timing_s"].as_f64().unwrap() / k["functional_s"].as_f64().unwrap();
        assert!(
            (k["timing_over_functional"].as_f64().unwrap() - ratio).abs() < 1e-9,
            "{k}"
        );
        assert!(
            (k["timing_m_per_s"].as_f64().unwrap() * k["timing_s"].as_f64().unwrap() * 1e6 - n as f64).abs() < 1.0,
            "{k}"
        );
    }
    // more runs of each kernel model the same cycles: the same dispatches over the same buffers
    let again = wavejit(&[
        "bench",
        "--timing",
        "--device",
        "mi210",
        "--iterations",
        "5",
        "--repeat",
        "2",
        "--json",
        "-",
    ]);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    for (k, a) in kernels.iter().zip(again["kernels"].as_array().unwrap()) {
        assert_eq!(
            (&k["kernel"], &k["modeled_cycles"]),
            (&a["kernel"], &a["modeled_cycles"]),
            "--repeat 1 against 2"
        );
    }
    // the counter benchmark writes no JSON, so it refuses the option rather than ignore it
    let out = wavejit(&["bench", "--counters", "--json", "-"]);
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--json"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// reduce_sum as Triton would have it: the same code, asking for its 1024 bytes of LDS at launch (its
/// descriptor's static LDS zeroed).
fn reduce_with_dynamic_lds() -> std::path::PathBuf {
    let bytes = test_kernels::by_name("reduce-gfx90a.co").unwrap();
    let co = isa_amdgpu::codeobj::CodeObject::parse(bytes, "reduce").unwrap();
    let k = &co.kernels[0];
    assert_eq!(k.descriptor.group_segment_fixed_size, 1024);
    let section = co.sections.iter().find(|s| s.index == k.descriptor_section).unwrap();
    let at = (section.file_offset + k.descriptor_address - section.address) as usize;
    let mut bytes = bytes.to_vec();
    assert_eq!(
        bytes[at..at + 4],
        1024u32.to_le_bytes(),
        "group_segment_fixed_size opens the descriptor"
    );
    bytes[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
    tmp("reduce-dynamic-lds.co", &bytes)
}

#[test]
fn run_trace_and_debug_take_launch_time_lds_and_run_tells_where_its_outputs_went() {
    let co = reduce_with_dynamic_lds();
    let input: Vec<f32> = (0..512).map(|i| (i % 13) as f32).collect();
    let inp = tmp(
        "reduce-lds-in.bin",
        &input.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
    );
    let out = inp.with_file_name("reduce-lds-out.bin");
    let want: Vec<u8> = test_kernels::reference::reduce_sum(&input)
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let args = |command: &str, lds: Option<&str>| {
        let mut a: Vec<String> = [command, co.to_str().unwrap(), "--grid", "512", "--block", "256"]
            .map(String::from)
            .to_vec();
        a.extend(["--arg".into(), format!("in={}", inp.display())]);
        a.extend(["--arg".into(), format!("out={}:8", out.display())]);
        a.extend(["--arg".into(), "u32=512".into()]);
        if let Some(l) = lds {
            a.extend(["--lds".into(), l.into()]);
        }
        a
    };
    let run = |a: Vec<String>| wavejit(&a.iter().map(String::as_str).collect::<Vec<_>>());
    // without its LDS the kernel's first LDS store faults, as on a GPU
    let o = run(args("run", None));
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("outside the workgroup's 0-byte LDS allocation"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // with it, the sums, and one line on stderr for the file written
    for engine in ["jit", "interp", "crosscheck"] {
        let _ = std::fs::remove_file(&out);
        let mut a = args("run", Some("1024"));
        a.extend(["--engine".into(), engine.into()]);
        let o = run(a);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{engine}: {stderr}");
        assert_eq!(std::fs::read(&out).unwrap(), want, "{engine}");
        assert_eq!(
            stderr.trim_end(),
            format!("wrote 8 bytes to {}", out.display()),
            "{engine}"
        );
    }
    let mut a = args("run", Some("1024"));
    a.extend(["--timing".into()]);
    assert!(run(a).status.success());
    // trace and debug take it too
    let html = inp.with_file_name("reduce-lds.html");
    let mut a = args("trace", Some("1024"));
    a.extend(["--html".into(), html.display().to_string()]);
    let _ = std::fs::remove_file(&out);
    let o = run(a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), want);
    let _ = std::fs::remove_file(&out);
    let debug = args("debug", Some("1024"));
    let o = wavejit_with_input(&debug.iter().map(String::as_str).collect::<Vec<_>>(), "quit\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), want);
    // all of the device's LDS, and more than it has: a clear error before anything runs
    let o = run(args("run", Some("65536")));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let original = tmp(
        "reduce-static-lds.co",
        test_kernels::by_name("reduce-gfx90a.co").unwrap(),
    );
    let mut a = args("run", Some("65536"));
    a[1] = original.display().to_string();
    let o = run(a);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains(
            "kernel reduce_sum: 1024 bytes of static LDS and 65536 of dynamic LDS (--lds) make 66560 bytes per \
             workgroup, more than the 65536 bytes of LDS of an mi210"
        ),
        "{stderr}"
    );
    let o = run(args("run", Some("lots")));
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--lds"));
}

/// `wavejit ARGS` with `input` on stdin.
fn wavejit_with_input(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(args)
        .env("WAVEJIT_CACHE", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_debugger_answers_a_script_on_stdin_as_text_and_as_json_and_finishes_the_dispatch() {
    let co = tmp("reduce-dbg.co", test_kernels::by_name("reduce-gfx90a.co").unwrap());
    let input: Vec<u8> = (0..512).flat_map(|i| ((i % 13) as f32).to_le_bytes()).collect();
    let inp = tmp("reduce-dbg-in.bin", &input);
    let out = std::env::temp_dir().join(format!("wavejit-cli-{}/reduce-dbg-out.bin", std::process::id()));
    let args = |json: bool| {
        let mut a = vec![
            "debug".to_string(),
            co.to_str().unwrap().into(),
            "--grid".into(),
            "512".into(),
            "--block".into(),
            "256".into(),
        ];
        a.extend([
            "--arg".into(),
            format!("in={}", inp.display()),
            "--arg".into(),
            format!("out={}:8", out.display()),
            "--arg".into(),
            "u32=512".into(),
        ]);
        a.extend(["--wave".into(), "1,0,0:3".into(), "--engine".into(), "interp".into()]);
        if json {
            a.push("--json".into());
        }
        a
    };
    let script = "info kernel\nbreak reduce_sum+0x0\nwaves\nstep 5\nprint exec\nprint/f v3[2]\nreverse-step 5\nhistory\nbogus\nprint $exec\nprint v8\nquit\n";
    let o = wavejit_with_input(&args(false).iter().map(String::as_str).collect::<Vec<_>>(), script);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.starts_with("wave 1,0,0:3 is about to run its first instruction"),
        "{text}"
    );
    assert!(
        text.contains("arguments:") && text.contains("+16  (by_value)") && text.contains("= 512"),
        "info kernel names the arguments: {text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("  0,0,0:0 ") && l.contains(" ended ")),
        "workgroup 0 ran to its end before wave 1,0,0:3 started: {text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("  1,0,0:0 ") && l.contains(" at barrier ")),
        "its other waves wait at the first barrier: {text}"
    );
    assert!(text.contains("lanes  0-31 ################################"), "{text}");
    assert!(text.contains("error: unknown command `bogus`"), "{text}");
    assert!(
        text.contains("breakpoint 1 at reduce_sum+0x0 (0x1600): "),
        "the breakpoint as a kernel offset: {text}"
    );
    assert_eq!(
        text.matches("exec = 0x").count(),
        2,
        "rocgdb's $exec prints as exec does: {text}"
    );
    assert!(
        text.contains("error: `v8`: the wave has 8 VGPRs (v0-v7"),
        "a register past the allocation: {text}"
    );
    // the dispatch ran to its end after quit: both block sums are written
    let sums = std::fs::read(&out).unwrap();
    let want: Vec<f32> = test_kernels::reference::reduce_sum(&(0..512).map(|i| (i % 13) as f32).collect::<Vec<_>>());
    assert_eq!(sums, want.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
    let o = wavejit_with_input(&args(true).iter().map(String::as_str).collect::<Vec<_>>(), script);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 13, "one JSON answer per command and the start");
    assert_eq!(lines[0]["stop"]["wave"], "1,0,0:3");
    assert_eq!(lines[4]["stop"]["executed"], 5);
    assert_eq!(
        lines[7]["stop"]["executed"], 0,
        "reverse-step 5 goes back to the first instruction"
    );
    assert_eq!(lines[9]["ok"], false);
    assert_eq!(lines[10]["register"], "exec");
    assert_eq!(lines[11]["ok"], false);
    assert_eq!(lines[12]["quit"], true);
}

#[test]
fn trace_writes_one_self_contained_page() {
    let co = tmp("vadd-trace.co", test_kernels::by_name("vadd-gfx942.co").unwrap());
    let a = tmp("vadd-trace-a.bin", &[0u8; 400]);
    let page = std::env::temp_dir().join(format!("wavejit-cli-{}/vadd.html", std::process::id()));
    let av = format!("in={}", a.display());
    let o = wavejit(&[
        "trace",
        co.to_str().unwrap(),
        "--grid",
        "100",
        "--block",
        "64",
        "--arg",
        &av,
        "--arg",
        &av,
        "--arg",
        "out=/dev/null:400",
        "--arg",
        "u32=100",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let msg = String::from_utf8_lossy(&o.stdout);
    assert!(msg.starts_with("vadd: ") && msg.contains(" waves; wrote "), "{msg}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!doctype html>") && html.contains("\"kernel\":\"vadd\""));
    assert!(
        !html.contains("<script src") && !html.contains("<link"),
        "nothing is loaded from elsewhere"
    );
    let o = wavejit(&[
        "trace",
        co.to_str().unwrap(),
        "--grid",
        "100",
        "--block",
        "64",
        "--html",
        page.to_str().unwrap(),
        "--engine",
        "crosscheck",
    ]);
    assert!(!o.status.success());
}

/// A HIP kernel compiled here with its C++ (mangled) symbol, `_Z10reduce_sumPfPKfj`.
fn mangled_kernel() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wavejit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("reduce_sum.hip");
    std::fs::write(
        &src,
        "#include <hip/hip_runtime.h>\n__global__ void reduce_sum(float* out, const float* in, unsigned n) {\n  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) atomicAdd(out, in[i]);\n}\n",
    )
    .unwrap();
    let co = dir.join("reduce_sum.co");
    let o = Command::new("clang++-19")
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx90a",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
        ])
        .args([
            "--rocm-path=/usr",
            "--rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
            "-O2",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&co)
        .output()
        .expect("clang++-19 (scripts/setup.sh installs it)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    co
}

#[test]
fn every_command_takes_a_kernel_by_its_mangled_demangled_or_plain_name() {
    let co = mangled_kernel();
    let co = co.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("wavejit-cli-{}", std::process::id()));
    let input = dir.join("ones.bin");
    std::fs::write(
        &input,
        [1.0f32; 64].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    let out_arg = format!("out={}:4", dir.join("sum.bin").display());
    let in_arg = format!("in={}", input.display());
    let html = dir.join("names.html");
    for name in [
        "_Z10reduce_sumPfPKfj",
        "reduce_sum",
        "reduce_sum(float*, float const*, unsigned int)",
    ] {
        let o = wavejit(&["disasm", co, "--kernel", name]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && text.starts_with("_Z10reduce_sumPfPKfj:"),
            "disasm {name}: {text}"
        );
        let run = [
            "--kernel", name, "--grid", "64", "--block", "64", "--arg", &out_arg, "--arg", &in_arg,
        ];
        let o = wavejit(&[&["run", co][..], &run[..], &["--arg", "u32=64"]].concat());
        assert!(o.status.success(), "run {name}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            std::fs::read(dir.join("sum.bin")).unwrap(),
            64.0f32.to_le_bytes(),
            "run {name}"
        );
        let o = wavejit(
            &[
                &["trace", co][..],
                &run[..],
                &["--arg", "u32=64", "--html", html.to_str().unwrap()],
            ]
            .concat(),
        );
        assert!(
            o.status.success(),
            "trace {name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::remove_file(dir.join("sum.bin")).unwrap();
        let o = wavejit_with_input(
            &[&["debug", co][..], &run[..], &["--arg", "u32=64"]].concat(),
            "info kernel\nquit\n",
        );
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && text.contains("_Z10reduce_sumPfPKfj"),
            "debug {name}: {text}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // quit lets the dispatch run to its end
        assert_eq!(
            std::fs::read(dir.join("sum.bin")).unwrap(),
            64.0f32.to_le_bytes(),
            "debug {name}"
        );
    }
    let o = wavejit(&["run", co, "--kernel", "reduce", "--grid", "64", "--block", "64"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no kernel `reduce`") && err.contains("reduce_sum(float*"),
        "{err}"
    );
}

/// A kernel whose waves spin until a flag nobody sets is set, built for gfx90a, and its `--arg` (a zeroed buffer).
fn spin_kernel() -> (std::path::PathBuf, String) {
    static BUILT: std::sync::OnceLock<(std::path::PathBuf, String)> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_spin_kernel).clone()
}

fn build_spin_kernel() -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("wavejit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("spin.cl");
    std::fs::write(
        &src,
        "kernel void spin(global volatile int* p) { while (p[0] == 0) { p[1] += 1; } }\n",
    )
    .unwrap();
    let co = dir.join("spin.co");
    let o = Command::new("clang-19")
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
        .arg(&src)
        .arg("-o")
        .arg(&co)
        .output()
        .expect("clang-19 (scripts/setup.sh installs it)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let zeros = dir.join("zeros.bin");
    std::fs::write(&zeros, [0u8; 64]).unwrap();
    (co, format!("inout={}", zeros.display()))
}

#[test]
fn on_a_terminal_the_progress_report_is_one_row_redrawn_in_place_and_cleared_at_the_end() {
    let (co, arg) = spin_kernel();
    // `script` gives the command a terminal of its own (80 columns: it has none to copy the size from)
    let command = format!(
        "{} run {} --grid 128 --block 64 --arg {arg} --timeout 7",
        env!("CARGO_BIN_EXE_wavejit"),
        co.display()
    );
    let o = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("WAVEJIT_CACHE", "off")
        .env_remove("WAVEJIT_PROGRESS")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script (util-linux)");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    let rows: Vec<&str> = out.split("\r\x1b[K").filter(|r| !r.is_empty()).collect();
    let progress: Vec<&&str> = rows.iter().filter(|r| r.contains("waves done")).collect();
    assert!(!progress.is_empty(), "no progress row in {out:?}");
    for row in &progress {
        assert!(
            row.starts_with("wavejit: ") && row.contains(" s: 0 of 2 waves done, ") && row.chars().count() < 80,
            "{row:?}"
        );
    }
    // the row is cleared before the report that ends the dispatch, which starts a row of its own
    assert!(
        rows.last().unwrap().starts_with("wavejit: kernel spin: stopped after "),
        "{out:?}"
    );
}

#[test]
fn a_dispatch_that_runs_long_reports_progress_and_its_timeout_names_where_each_wave_is() {
    let (co, arg) = spin_kernel();
    // both engines, and the timing model (which runs the waves itself, cycle by cycle)
    for (engine, timing) in [("jit", false), ("interp", false), ("jit", true)] {
        let started = std::time::Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_wavejit"))
            .args([
                "run",
                co.to_str().unwrap(),
                "--grid",
                "128",
                "--block",
                "64",
                "--arg",
                &arg,
            ])
            .args(["--engine", engine, "--timeout", "3"])
            .args(timing.then_some("--timing"))
            .env("WAVEJIT_CACHE", "off")
            .env("WAVEJIT_PROGRESS", "1")
            .output()
            .unwrap();
        let engine = if timing { "timing" } else { engine };
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{engine}: {err}");
        let reports: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("wavejit: kernel spin running for "))
            .collect();
        assert!(reports.len() >= 2, "{engine}: a report every second:\n{err}");
        assert!(
            reports[0].contains(" of 2 waves done") && reports[0].contains("instructions so far"),
            "{engine}: {err}"
        );
        assert!(reports[0].contains("stopped at 3 s"), "{engine}: {err}");
        // the timeout is checked between runs of the waves' blocks: it stops at 3 s, or a little later on a
        // loaded machine
        let after: f64 = err
            .split("kernel spin: stopped after ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|secs| secs.parse().ok())
            .unwrap_or_else(|| panic!("{engine}: no stop report in\n{err}"));
        assert!(
            (3.0..10.0).contains(&after),
            "{engine}: stopped after {after} s:\n{err}"
        );
        assert!(
            err.contains("waves still running: workgroup [0, 0, 0] wave 0 at pc 0x") && err.contains("(code offset 0x"),
            "{engine}: {err}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{engine}: stopped soon after the timeout"
        );
    }
    // the same limits everywhere, and a bad timeout is an error
    let o = wavejit(&[
        "run",
        co.to_str().unwrap(),
        "--grid",
        "64",
        "--block",
        "64",
        "--arg",
        &arg,
        "--timeout",
        "soon",
    ]);
    assert!(
        !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("--timeout soon: expected a number of seconds"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for command in ["run", "debug", "trace", "exec"] {
        let o = wavejit(&[command, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains("--max-instructions"), "{command}: {help}");
        if command == "run" || command == "exec" {
            assert!(help.contains("--timeout"), "{command}: {help}");
        }
        if command != "exec" {
            assert!(
                help.contains("[default: 10000000000]"),
                "{command}: the default limit of every command:\n{help}"
            );
        }
    }
}
