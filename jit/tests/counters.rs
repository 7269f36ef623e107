//! Hardware-named counters (`profiler_hooks::HwCounters`) asserted to the unit on the interpreter and the JIT,
//! functional and timed, for bundled kernels whose counts follow from their disassembly and trip counts.
//!
//! The expected counts come from llvm-objdump-19's listing of the prebuilt code object (the oracle; the test
//! fails when it is missing): the instructions of each straight-line segment times how often the kernel's
//! arguments make it run, each classed by its LLVM mnemonic (`v_` VALU, `s_load` SMEM, `ds_` LDS, ...),
//! independently of wavejit's instruction table. Coalescing and bank conflicts follow from the kernels'
//! access patterns: consecutive floats per lane, and `lds_banks`' stride.

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::timing::TimingStats;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use profiler_hooks::HwCounters;

/// The listing of `file` (a prebuilt code object), one mnemonic-and-operands line per instruction, for the
/// function `kernel`, up to and including its `s_endpgm`.
fn listing(file: &str, kernel: &str) -> Vec<String> {
    let path = test_kernels::source_dir().join("../../prebuilt").join(file);
    let out = std::process::Command::new("llvm-objdump-19")
        .args(["-d", "--no-show-raw-insn", "--no-leading-addr"])
        .arg(&path)
        .output()
        .expect("llvm-objdump-19 (the oracle) must be installed: scripts/setup.sh installs llvm-19");
    assert!(out.status.success(), "llvm-objdump-19 failed on {}", path.display());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if l.starts_with('<') {
            inside = l == format!("<{kernel}>:");
            continue;
        }
        let l = l.split("//").next().unwrap().trim();
        if inside && !l.is_empty() {
            lines.push(l.to_string());
            if l == "s_endpgm" {
                break;
            }
        }
    }
    assert!(
        lines.last().is_some_and(|l| l == "s_endpgm"),
        "no {kernel} ending in s_endpgm in {file}"
    );
    lines
}

/// Index of the first line at or after `from` starting with `prefix`.
fn find(lines: &[String], from: usize, prefix: &str) -> usize {
    from + lines[from..]
        .iter()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` after line {from}"))
}

/// Expected exact counters of one wave that runs `lines[a..=b]` `n` times for each `(a, b, n)`, all lanes
/// active (`lanes` of them), in the catalog's names.
fn expected(lines: &[String], segments: &[(usize, usize, u64)], lanes: u64) -> Vec<(&'static str, u64)> {
    let mut c = std::collections::BTreeMap::<&'static str, u64>::new();
    for &(a, b, n) in segments {
        for l in &lines[a..=b] {
            let m = l.split_whitespace().next().unwrap();
            let mut add = |k: &'static str, v: u64| *c.entry(k).or_default() += v * n;
            add("SQ_INSTS", 1);
            let smem = [
                "s_load",
                "s_buffer_load",
                "s_store",
                "s_memtime",
                "s_memrealtime",
                "s_dcache",
            ]
            .iter()
            .any(|p| m.starts_with(p));
            let branch = ["s_branch", "s_cbranch", "s_setpc", "s_swappc", "s_call"]
                .iter()
                .any(|p| m.starts_with(p));
            let sequencer = [
                "s_waitcnt",
                "s_endpgm",
                "s_nop",
                "s_barrier",
                "s_sendmsg",
                "s_sleep",
                "s_setprio",
                "s_trap",
            ]
            .iter()
            .any(|p| m.starts_with(p));
            if m.starts_with("v_") {
                add("SQ_INSTS_VALU", 1);
                add("SQ_THREAD_INSTS_VALU", lanes);
                let f32 = m.contains("_f32");
                if f32
                    && ["v_add_f32", "v_sub_f32", "v_subrev_f32"]
                        .iter()
                        .any(|p| m.starts_with(p))
                {
                    add("SQ_INSTS_VALU_ADD_F32", 1);
                }
                if f32 && m.starts_with("v_mul_f32") {
                    add("SQ_INSTS_VALU_MUL_F32", 1);
                }
                if f32
                    && ["v_fma_", "v_fmac_", "v_mac_", "v_mad_", "v_fmaak_", "v_fmamk_"]
                        .iter()
                        .any(|p| m.starts_with(p))
                {
                    add("SQ_INSTS_VALU_FMA_F32", 1);
                }
                if m.starts_with("v_mfma") {
                    add("SQ_INSTS_MFMA", 1);
                }
            } else if smem {
                add("SQ_INSTS_SMEM", 1);
            } else if branch {
                add("SQ_INSTS_BRANCH", 1);
            } else if m.starts_with("s_") && !sequencer {
                add("SQ_INSTS_SALU", 1);
            } else if m.starts_with("ds_") {
                add("SQ_INSTS_LDS", 1);
            } else if ["global_load", "buffer_load", "flat_load", "scratch_load"]
                .iter()
                .any(|p| m.starts_with(p))
            {
                add("SQ_INSTS_VMEM_RD", 1);
            } else if [
                "global_store",
                "buffer_store",
                "flat_store",
                "scratch_store",
                "global_atomic",
                "buffer_atomic",
                "flat_atomic",
            ]
            .iter()
            .any(|p| m.starts_with(p))
            {
                add("SQ_INSTS_VMEM_WR", 1);
            }
        }
    }
    c.into_iter().collect()
}

/// Runs one dispatch on the interpreter and on the JIT (functional, and timed with `timing`), returning each
/// run's counters; asserts the engines agree to the unit.
fn counted(
    co: &CodeObject,
    kernel: &str,
    device: &'static DevicePreset,
    grid: u32,
    block: u32,
    args: impl Fn(&DeviceMemory) -> Vec<ArgValue>,
    timing: bool,
) -> (Vec<(&'static str, u64)>, Option<TimingStats>) {
    let k = co.kernel(kernel).unwrap_or_else(|| panic!("no {kernel}"));
    let shape = DispatchShape::new([grid, 1, 1], [block, 1, 1], device).unwrap();
    let jit = jit::Jit::with_options(jit::JitOptions::eager()).unwrap();
    let mut runs = Vec::new();
    for (engine, timed) in [("interp", false), ("jit", false), ("interp", true), ("jit", true)] {
        if timed && !timing {
            continue;
        }
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let args = args(&mem);
        let d = KernelDispatch {
            mem: &mem,
            device,
            co,
            kernel: k,
            shape,
            args: &args,
            limits: Limits::default(),
        };
        let c = HwCounters::new(device, 0);
        let stats = match (engine, timed) {
            ("interp", false) => {
                d.run_observed(&c).unwrap();
                None
            }
            ("jit", false) => {
                d.run_with(&jit, &c).unwrap();
                None
            }
            ("interp", true) => Some(d.run_timed(&emu_core::engine::Interpreter, &c).unwrap().1),
            _ => Some(d.run_timed(&jit, &c).unwrap().1),
        };
        runs.push((
            format!("{engine}{}", if timed { " timed" } else { "" }),
            c.values(stats.as_ref()),
            stats,
        ));
    }
    let exact = |v: &[(&'static str, u64)]| {
        v.iter()
            .copied()
            .filter(|(n, _)| {
                profiler_hooks::catalog::lookup(n).unwrap().source == profiler_hooks::catalog::Source::Exact
            })
            .collect::<Vec<_>>()
    };
    let first = exact(&runs[0].1);
    for (name, values, _) in &runs[1..] {
        assert_eq!(
            exact(values),
            first,
            "{kernel}: {name} counts differ from the interpreter's"
        );
    }
    if timing {
        let (_, a, sa) = &runs[2];
        let (_, b, sb) = &runs[3];
        assert_eq!(a, b, "{kernel}: modeled counters differ between the engines");
        assert_eq!(sa, sb);
    }
    let (_, values, stats) = runs.pop().unwrap();
    (values, stats)
}

fn value(v: &[(&'static str, u64)], name: &str) -> u64 {
    v.iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .1
}

fn assert_counts(v: &[(&'static str, u64)], want: &[(&'static str, u64)], waves: u64, what: &str) {
    for &(name, per_wave) in want {
        assert_eq!(value(v, name), per_wave * waves, "{what}: {name}");
    }
}

fn buffer(mem: &DeviceMemory, bytes: Vec<u8>) -> ArgValue {
    let a = mem.allocate(bytes.len() as u64, AllocKind::Buffer, "buf").unwrap();
    mem.write(a, &bytes).unwrap();
    ArgValue::Pointer(a)
}

fn floats(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect()
}

#[test]
fn vadd_counts_follow_its_listing_and_full_waves_coalesce_into_whole_lines() {
    for (file, device, line) in [("vadd-gfx942.co", "mi300x", 128u64), ("vadd-gfx90a.co", "mi210", 64)] {
        let dev = DevicePreset::by_name(device).unwrap();
        let co = CodeObject::parse(test_kernels::by_name(file).unwrap(), file).unwrap();
        let lines = listing(file, "vadd");
        let n = 1024u32;
        let (v, stats) = counted(
            &co,
            "vadd",
            dev,
            n,
            256,
            |m| {
                vec![
                    buffer(m, floats(n as usize)),
                    buffer(m, floats(n as usize)),
                    buffer(m, vec![0; 4 * n as usize]),
                    ArgValue::U32(n),
                ]
            },
            true,
        );
        let waves = n as u64 / 64;
        // every lane passes `i < n`: the branch around the body is not taken, each wave runs every line once
        assert_counts(&v, &expected(&lines, &[(0, lines.len() - 1, 1)], 64), waves, file);
        assert_eq!(value(&v, "SQ_WAVES"), waves);
        // two loads and a store of 64 consecutive floats: 256 bytes, 256 / line lines each
        assert_eq!(
            value(&v, "TCP_TOTAL_CACHE_ACCESSES"),
            waves * 3 * (256 / line),
            "{file}"
        );
        assert_eq!(
            (
                value(&v, "TA_FLAT_READ_WAVEFRONTS"),
                value(&v, "TA_FLAT_WRITE_WAVEFRONTS")
            ),
            (2 * waves, waves)
        );
        assert_eq!(
            (
                value(&v, "SQ_LDS_IDX_ACTIVE"),
                value(&v, "SQ_LDS_BANK_CONFLICT"),
                value(&v, "SQ_INSTS_FLAT")
            ),
            (0, 0, 0)
        );
        // the timing model looks up exactly the lines the exact counter counts, and its L2 adds up
        let t = stats.unwrap();
        assert_eq!(t.memory.l1.requests, value(&v, "TCP_TOTAL_CACHE_ACCESSES"));
        assert_eq!(value(&v, "TCC_HIT") + value(&v, "TCC_MISS"), value(&v, "TCC_REQ"));
        assert_eq!(value(&v, "TCC_REQ"), t.memory.l2.requests);
        assert_eq!(
            value(&v, "TCP_TCC_WRITE_REQ"),
            waves * 256 / line,
            "write-through: every written line goes to L2"
        );
        // 8 KiB read and 4 KiB written, all cold: the L2 fills and writes back what the kernel moves
        assert_eq!(value(&v, "TCC_EA_RDREQ") * 64, t.memory.l2.fill_bytes);
        assert!(
            value(&v, "TCC_EA_RDREQ") * 64 >= 2 * 4 * n as u64,
            "{file}: the L2 must fetch both inputs"
        );
        if device == "mi210" {
            // no MALL: what the L2 fetched is what HBM delivered
            assert_eq!(value(&v, "TCC_EA_RDREQ") * 64, value(&v, "HBM_READ_BYTES"));
            assert_eq!((value(&v, "MALL_HIT"), value(&v, "MALL_MISS")), (0, 0));
        }
        assert_eq!(value(&v, "GRBM_COUNT"), t.cycles);
        assert!(value(&v, "SQ_WAVE_CYCLES") > 0 && value(&v, "SQ_BUSY_CYCLES") <= t.cycles);
        assert_eq!(value(&v, "SQ_WAIT_INST_ANY"), t.stalls.total());
    }
}

#[test]
fn a_partial_last_wave_touches_only_the_lines_of_its_active_lanes() {
    let file = "vadd-gfx90a.co";
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = CodeObject::parse(test_kernels::by_name(file).unwrap(), file).unwrap();
    let n = 1000u32; // 15 full waves and one with 40 active lanes: 160 bytes = 2.5 lines of 64 bytes
    let (v, _) = counted(
        &co,
        "vadd",
        dev,
        n,
        256,
        |m| {
            vec![
                buffer(m, floats(n as usize)),
                buffer(m, floats(n as usize)),
                buffer(m, vec![0; 4 * n as usize]),
                ArgValue::U32(n),
            ]
        },
        false,
    );
    assert_eq!(value(&v, "TCP_TOTAL_CACHE_ACCESSES"), 15 * 3 * 4 + 3 * 3);
    // 1024 work-items launched: 16 waves
    assert_eq!(value(&v, "SQ_WAVES"), 16);
}

#[test]
fn alu_loop_counts_are_its_listing_times_the_trip_count() {
    let file = "alu_loop-gfx90a.co";
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = CodeObject::parse(test_kernels::by_name(file).unwrap(), file).unwrap();
    let lines = listing(file, "alu_loop");
    let iters = 37u64;
    let (n, block) = (512u32, 128u32);
    let (v, _) = counted(
        &co,
        "alu_loop",
        dev,
        n,
        block,
        |m| vec![buffer(m, vec![0; 4 * n as usize]), ArgValue::U32(iters as u32)],
        true,
    );
    // prologue to the guard branch (not taken: iters > 0), the loop body iters times, then the epilogue
    let guard = find(&lines, 0, "s_cbranch_scc1");
    let back = find(&lines, guard + 1, "s_cbranch_scc0");
    let segments = [(0, guard, 1), (guard + 1, back, iters), (back + 1, lines.len() - 1, 1)];
    let want = expected(&lines, &segments, 64);
    assert!(
        want.iter()
            .any(|&(k, v)| k == "SQ_INSTS_VALU_FMA_F32" && v == 2 * iters),
        "the listing's loop holds two FMAs: {want:?}"
    );
    assert_counts(&v, &want, n as u64 / 64, file);
    assert_eq!(
        value(&v, "TCP_TOTAL_CACHE_ACCESSES"),
        (n as u64 / 64) * 4,
        "one store of 64 floats: 4 lines of 64 bytes per wave"
    );
}

#[test]
fn lds_bank_conflicts_follow_the_stride() {
    let file = "lds_banks-gfx90a.co";
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = CodeObject::parse(test_kernels::by_name(file).unwrap(), file).unwrap();
    let lines = listing(file, "lds_banks");
    // steps = 32: the 16-way unrolled loop runs twice, the remainder loop not at all
    let steps = 32u64;
    let first_loop = find(&lines, find(&lines, 0, "s_and_b32") + 1, "s_cbranch_scc0");
    let loop_start = find(&lines, 0, "s_and_b32") + 1;
    let reads_in_loop = lines[loop_start..=first_loop]
        .iter()
        .filter(|l| l.starts_with("ds_read"))
        .count() as u64;
    assert_eq!(reads_in_loop, 16);
    let before = lines[..loop_start].iter().filter(|l| l.starts_with("ds_")).count() as u64;
    let ds = before + reads_in_loop * steps / 16;
    assert_eq!(ds, 34, "a write, the first read, 32 chained reads");
    for (stride, ways) in [(0u32, 1u64), (1, 1), (2, 2), (4, 4), (8, 8), (32, 32), (64, 32)] {
        let (v, stats) = counted(
            &co,
            "lds_banks",
            dev,
            64,
            64,
            |m| {
                vec![
                    buffer(m, vec![0; 16]),
                    ArgValue::U32(stride),
                    ArgValue::U32(steps as u32),
                ]
            },
            stride == 8,
        );
        assert_eq!(value(&v, "SQ_INSTS_LDS"), ds, "stride {stride}");
        // every DS instruction: two half-wave phases, each as many cycles as the busiest bank's distinct dwords
        assert_eq!(value(&v, "SQ_LDS_IDX_ACTIVE"), ds * 2 * ways, "stride {stride}");
        assert_eq!(
            value(&v, "SQ_LDS_BANK_CONFLICT"),
            ds * 2 * (ways - 1),
            "stride {stride}"
        );
        if let Some(t) = stats {
            assert_eq!(
                t.lds_bank_conflict_cycles,
                value(&v, "SQ_LDS_BANK_CONFLICT"),
                "the timing model's conflict cycles"
            );
        }
    }
}

#[test]
fn mfma_math_operations_follow_the_shape() {
    let file = "mfma-gfx90a.co";
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = CodeObject::parse(test_kernels::by_name(file).unwrap(), file).unwrap();
    for (kernel, counter, mnemonic) in [
        ("mfma_f32", "SQ_INSTS_VALU_MFMA_MOPS_F32", "v_mfma_f32_32x32x2f32"),
        ("mfma_f16", "SQ_INSTS_VALU_MFMA_MOPS_F16", "v_mfma_f32_32x32x8f16"),
    ] {
        let lines = listing(file, kernel);
        let n = lines.iter().filter(|l| l.starts_with(mnemonic)).count() as u64;
        assert_eq!(n, 1, "{kernel}: one {mnemonic} in the listing");
        // MxNxK from the mnemonic; one block (the kernel's single-block shapes): 2 operations per multiply-add
        let shape: Vec<u64> = mnemonic
            .rsplit('_')
            .next()
            .unwrap()
            .split('x')
            .map(|s| {
                s.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .unwrap()
            })
            .collect();
        let ops = 2 * shape.iter().product::<u64>();
        let waves = 4u64;
        let (v, _) = counted(
            &co,
            kernel,
            dev,
            64 * waves as u32,
            64,
            |m| {
                vec![
                    buffer(m, vec![0; 1 << 16]),
                    buffer(m, vec![0; 1 << 16]),
                    buffer(m, vec![0; 1 << 16]),
                ]
            },
            false,
        );
        assert_eq!(value(&v, "SQ_INSTS_MFMA"), waves * n, "{kernel}");
        assert_eq!(value(&v, counter), waves * n * ops / 512, "{kernel}: {shape:?}");
    }
}
