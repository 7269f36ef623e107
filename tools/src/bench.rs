//! `wavejit bench`: engine throughput on the bundled ALU-loop and SGEMM kernels, as VALU lane-operations per
//! second and emulated GFLOP/s, for the interpreter and the JIT in the same run, with their ratio (the fastest
//! of `--repeat` runs of each engine, alike for both; use the criterion benches for statistics), and what
//! translation costs: per instruction translated,
//! and per instruction loaded from the disk cache instead. `--json PATH` writes every figure (`-`: to stdout,
//! the text going to stderr).

use std::io::Write;
use std::time::Instant;

use serde_json::{json, Value};

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::NoObserver;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use isa_amdgpu::table::Unit;
use jit::disk::DiskConfig;
use jit::{Jit, JitOptions};
use profiler_hooks::ClassCounter;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The shortest of `runs` timings of `f`, in seconds (the machine is shared: the minimum is the least disturbed).
fn best_of(runs: u32, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Where the text goes: stdout, or stderr when the JSON takes stdout.
struct Out {
    to_stderr: bool,
}

impl Out {
    fn line(&self, text: String) {
        if self.to_stderr {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
    }
}

/// Seconds of one-thread runs a scaling figure takes at least: a dispatch of a few milliseconds is measured over
/// many rounds, so that the best of them is not one a neighbour on a shared machine happened to slow down.
const SCALING_SECONDS: f64 = 1.0;

/// One line on how the JIT scales: `dispatch` on one host thread and on `threads`, alternately, the best of
/// `rounds` (at least three, and as many as [`SCALING_SECONDS`] of one-thread runs take) each.
fn scaling(out: &Out, threads: usize, rounds: u32, mut dispatch: impl FnMut(Limits) -> Res<()>) -> Res<Value> {
    if threads < 2 {
        return Ok(Value::Null);
    }
    let (mut one, mut all) = (f64::INFINITY, f64::INFINITY);
    let (mut done, mut spent) = (0u32, 0.0);
    while done < rounds.max(3) || spent < SCALING_SECONDS {
        let t = best_of(1, || {
            dispatch(Limits {
                threads: Some(1),
                ..Limits::default()
            })
        })?;
        (one, spent, done) = (one.min(t), spent + t, done + 1);
        all = all.min(best_of(1, || {
            dispatch(Limits {
                threads: Some(threads),
                ..Limits::default()
            })
        })?);
    }
    let rounds = done;
    out.line(format!("  jit scaling  {one:.3} s on 1 host thread, {all:.3} s on {threads}: {:.2}x (best of {rounds} each, alternating)", one / all));
    Ok(json!({ "one_thread_s": one, "threads": threads, "all_threads_s": all, "speedup": one / all, "rounds": rounds }))
}

/// What `wavejit bench` measures.
pub struct BenchArgs<'a> {
    pub device: Option<&'a str>,
    pub threads: Option<usize>,
    pub sgemm_n: u32,
    pub iterations: u32,
    /// Runs of each kernel on each engine; the fastest counts.
    pub repeat: u32,
    /// Write every figure as JSON here (`-`: stdout).
    pub json: Option<&'a str>,
}

/// Runs the benchmarks on `device` with `threads` host threads (default: all).
pub fn run(a: BenchArgs<'_>) -> Res<()> {
    let dev = match a.device {
        Some(d) => DevicePreset::by_name(d)?,
        None => DevicePreset::default_device(),
    };
    let (threads, sgemm_n, iterations, repeat) = (a.threads, a.sgemm_n, a.iterations, a.repeat.max(1));
    if sgemm_n == 0 || !sgemm_n.is_multiple_of(16) {
        return Err(format!("--sgemm-n must be a positive multiple of 16, got {sgemm_n}").into());
    }
    let out = Out {
        to_stderr: a.json == Some("-"),
    };
    let limits = Limits {
        threads,
        ..Limits::default()
    };
    let host_threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    out.line(format!(
        "wavejit bench on an emulated {dev}, {host_threads} host thread(s)"
    ));
    let mut report = json!({ "device": dev.id, "host_threads": host_threads, "sgemm_n": sgemm_n, "iterations": iterations, "repeat": repeat });
    // every block translated on first use (the bench measures compiled code), and kept in a cache directory of
    // its own, from which a second JIT loads them at the end
    let cache = std::env::temp_dir().join(format!("wavejit-bench-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let disk = DiskConfig {
        dir: cache.clone(),
        max_bytes: 1 << 30,
    };
    let jit = Jit::with_options(JitOptions {
        disk: Some(disk.clone()),
        ..JitOptions::eager()
    })?;
    let mem = DeviceMemory::new(dev.memory_bytes)?;

    // the FMA loop, and the same loop with a 32-bit integer multiply-add beside its FMAs
    let n = 64 * 1024u32;
    let alus = ["alu_loop", "alu_mixed"].map(|name| -> Res<(&str, CodeObject, u64)> {
        Ok((
            name,
            bundled(dev, name)?,
            mem.allocate(n as u64 * 4, AllocKind::Buffer, name)?,
        ))
    });
    let alus = alus.into_iter().collect::<Res<Vec<_>>>()?;
    let alu_dispatch = |jit: &Jit, k: usize, n: u32, iterations: u32, limits: Limits| -> Res<()> {
        let (_, alu, alu_out) = &alus[k];
        let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev)?;
        let args = [ArgValue::Pointer(*alu_out), ArgValue::U32(iterations)];
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: alu,
            kernel: &alu.kernels[0],
            shape,
            args: &args,
            limits,
        }
        .run_with(jit, &NoObserver)?;
        Ok(())
    };
    for (k, (name, alu, alu_out)) in alus.iter().enumerate() {
        let (name, alu_out) = (*name, *alu_out);
        let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev)?;
        let args = [ArgValue::Pointer(alu_out), ArgValue::U32(iterations)];
        // the VALU instruction count, from an observed (interpreted) run
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: alu,
            kernel: &alu.kernels[0],
            shape,
            args: &args,
            limits,
        };
        let counter = ClassCounter::default();
        let s = d.run_observed(&counter)?;
        let valu = counter.count(Unit::Valu) * 64;
        let interp = best_of(repeat, || Ok(d.run().map(drop)?))?;
        let first = best_of(1, || Ok(d.run_with(&jit, &NoObserver).map(drop)?))?;
        let warm = best_of(repeat, || Ok(d.run_with(&jit, &NoObserver).map(drop)?))?;
        let rate = |secs: f64| valu as f64 / secs / 1e6;
        out.line(format!(
            "{name} ({iterations} iterations)  {} waves, {} wave instructions, {} VALU lane-ops",
            s.waves, s.wave_instructions, valu
        ));
        out.line(format!(
            "  interpreter  {interp:.3} s: {:>6.0} M VALU lane-ops/s ({:.0} M per host thread)",
            rate(interp),
            rate(interp) / host_threads as f64
        ));
        out.line(format!(
            "  jit          {warm:.3} s: {:>6.0} M VALU lane-ops/s ({:.0} M per host thread), {:.1}x the interpreter (first run with translation {first:.3} s)",
            rate(warm),
            rate(warm) / host_threads as f64,
            interp / warm
        ));
        let scale = scaling(&out, host_threads, repeat, |l| alu_dispatch(&jit, k, n, iterations, l))?;
        report[name] = json!({
            "waves": s.waves, "wave_instructions": s.wave_instructions, "valu_lane_ops": valu,
            "interpreter_s": interp, "interpreter_mlane_ops_per_s": rate(interp),
            "jit_s": warm, "jit_mlane_ops_per_s": rate(warm), "jit_first_run_s": first,
            "jit_vs_interpreter": interp / warm, "scaling": scale,
        });
    }

    let sgemm = bundled(dev, "sgemm")?;
    let bytes = (sgemm_n as u64).pow(2) * 4;
    let (a32, b32, c32) = (
        mem.allocate(bytes, AllocKind::Buffer, "A")?,
        mem.allocate(bytes, AllocKind::Buffer, "B")?,
        mem.allocate(bytes, AllocKind::Buffer, "C")?,
    );
    fill(&mem, a32, bytes, 1, f32_word)?;
    fill(&mem, b32, bytes, 2, f32_word)?;
    let sgemm_dispatch = |jit: Option<&Jit>, n: u32, limits: Limits| -> Res<()> {
        let shape = DispatchShape::new([n, n, 1], [16, 16, 1], dev)?;
        let args = [
            ArgValue::Pointer(a32),
            ArgValue::Pointer(b32),
            ArgValue::Pointer(c32),
            ArgValue::U32(n),
        ];
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &sgemm,
            kernel: &sgemm.kernels[0],
            shape,
            args: &args,
            limits,
        };
        match jit {
            Some(j) => d.run_with(j, &NoObserver)?,
            None => d.run()?,
        };
        Ok(())
    };
    let flop = 2.0 * (sgemm_n as f64).powi(3);
    let interp = best_of(repeat, || sgemm_dispatch(None, sgemm_n, limits))?;
    let first = best_of(1, || sgemm_dispatch(Some(&jit), sgemm_n, limits))?;
    let warm = best_of(repeat, || sgemm_dispatch(Some(&jit), sgemm_n, limits))?;
    out.line(format!("sgemm {sgemm_n}^3"));
    out.line(format!(
        "  interpreter  {interp:.3} s: {:.3} emulated GFLOP/s",
        flop / interp / 1e9
    ));
    out.line(format!(
        "  jit          {warm:.3} s: {:.3} emulated GFLOP/s, {:.1}x the interpreter",
        flop / warm / 1e9,
        interp / warm
    ));
    let scale = scaling(&out, host_threads, repeat, |l| sgemm_dispatch(Some(&jit), sgemm_n, l))?;
    report["sgemm"] = json!({
        "interpreter_s": interp, "interpreter_gflops": flop / interp / 1e9,
        "jit_s": warm, "jit_gflops": flop / warm / 1e9, "jit_first_run_s": first,
        "jit_vs_interpreter": interp / warm, "scaling": scale,
    });

    // MFMA GEMM: f16 inputs, f32 accumulation, 32x32 tiles per wave (the hgemm HIP kernel)
    let mfma = bundled(dev, "mfma_gemm")?;
    let hgemm = mfma.kernel("hgemm").ok_or("hgemm kernel")?;
    let bytes16 = (sgemm_n as u64).pow(2) * 2;
    let (a16, b16, c16) = (
        mem.allocate(bytes16, AllocKind::Buffer, "A16")?,
        mem.allocate(bytes16, AllocKind::Buffer, "B16")?,
        mem.allocate(bytes16 * 2, AllocKind::Buffer, "C32")?,
    );
    fill(&mem, a16, bytes16, 3, f16_pair)?;
    fill(&mem, b16, bytes16, 4, f16_pair)?;
    let mfma_dispatch = |jit: Option<&Jit>, n: u32, limits: Limits| -> Res<()> {
        let tiles = (n / 32) * (n / 32);
        let shape = DispatchShape::new([64 * tiles, 1, 1], [64, 1, 1], dev)?;
        let args = [
            ArgValue::Pointer(a16),
            ArgValue::Pointer(b16),
            ArgValue::Pointer(c16),
            ArgValue::U32(n),
            ArgValue::U32(n),
        ];
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &mfma,
            kernel: hgemm,
            shape,
            args: &args,
            limits,
        };
        match jit {
            Some(j) => d.run_with(j, &NoObserver)?,
            None => d.run()?,
        };
        Ok(())
    };
    if sgemm_n.is_multiple_of(32) {
        let interp = best_of(repeat, || mfma_dispatch(None, sgemm_n, limits))?;
        let first = best_of(1, || mfma_dispatch(Some(&jit), sgemm_n, limits))?;
        let warm = best_of(repeat, || mfma_dispatch(Some(&jit), sgemm_n, limits))?;
        out.line(format!("mfma f16 gemm {sgemm_n}^3 (v_mfma_f32_32x32x8f16)"));
        out.line(format!(
            "  interpreter  {interp:.3} s: {:.3} emulated GFLOP/s",
            flop / interp / 1e9
        ));
        out.line(format!(
            "  jit          {warm:.3} s: {:.3} emulated GFLOP/s, {:.1}x the interpreter",
            flop / warm / 1e9,
            interp / warm
        ));
        let scale = scaling(&out, host_threads, repeat, |l| mfma_dispatch(Some(&jit), sgemm_n, l))?;
        report["mfma_gemm"] = json!({
            "interpreter_s": interp, "interpreter_gflops": flop / interp / 1e9,
            "jit_s": warm, "jit_gflops": flop / warm / 1e9, "jit_first_run_s": first,
            "jit_vs_interpreter": interp / warm, "scaling": scale,
        });
    }
    let st = jit.stats();
    let insts = st.compiled + st.not_compiled;
    let translate_us = st.translate_ns as f64 / 1e3 / insts.max(1) as f64;
    out.line(format!(
        "jit: {} blocks, {} instructions compiled, {} left to the interpreter ({} interpreted executions), {:.1} us translation per instruction",
        st.blocks, st.compiled, st.not_compiled, st.fallbacks, translate_us
    ));
    // the same kernels (small shapes run the same blocks) on a fresh JIT that finds them in the disk cache
    let loader = Jit::with_options(JitOptions {
        disk: Some(disk),
        ..JitOptions::eager()
    })?;
    for k in 0..alus.len() {
        alu_dispatch(&loader, k, 256, 2, limits)?;
    }
    sgemm_dispatch(Some(&loader), 32, limits)?;
    mfma_dispatch(Some(&loader), 32, limits)?;
    let ld = loader.stats();
    let load_us = ld.load_ns as f64 / 1e3 / ld.loaded_insts.max(1) as f64;
    out.line(format!(
        "disk cache: {} blocks stored; a second JIT loaded {} ({} instructions, {} translated again) at {load_us:.1} us per instruction, {:.0}x cheaper than translating",
        st.stored,
        ld.loaded,
        ld.loaded_insts,
        ld.blocks,
        translate_us / load_us.max(1e-9)
    ));
    report["jit"] = json!({
        "blocks": st.blocks, "compiled_instructions": st.compiled, "instructions_left_to_interpreter": st.not_compiled,
        "interpreted_executions": st.fallbacks, "translation_us_per_instruction": translate_us, "translation_s": st.translate_ns as f64 / 1e9,
        "stored_blocks": st.stored, "loaded_blocks": ld.loaded, "loaded_instructions": ld.loaded_insts,
        "load_us_per_instruction": load_us, "translated_again": ld.blocks,
    });
    let _ = std::fs::remove_dir_all(&cache);
    write_json(a.json, &report)
}

/// Writes `report` where `--json` says: a file, stdout (`-`), or nowhere.
fn write_json(to: Option<&str>, report: &Value) -> Res<()> {
    match to {
        Some("-") => {
            let mut o = std::io::stdout().lock();
            writeln!(o, "{}", serde_json::to_string_pretty(report)?)?;
        }
        Some(path) => {
            std::fs::write(path, serde_json::to_string_pretty(report)? + "\n").map_err(|e| format!("{path}: {e}"))?
        }
        None => {}
    }
    Ok(())
}

/// `wavejit bench --timing`: the timing model's speed in wave-instructions per second per host core (it runs
/// on one), on the ALU loop and on a streaming kernel, against functional mode on one host thread; each the
/// fastest of `repeat` runs after a first one that translates the code. `json` as `--json` says.
pub fn run_timing(device: Option<&str>, iterations: u32, repeat: u32, json: Option<&str>) -> Res<()> {
    let dev = match device {
        Some(d) => DevicePreset::by_name(d)?,
        None => DevicePreset::default_device(),
    };
    let out = Out {
        to_stderr: json == Some("-"),
    };
    out.line(format!(
        "wavejit bench --timing on an emulated {dev}: wave-instructions per second on one host core"
    ));
    let jit = jit::Jit::new()?;
    let mem = DeviceMemory::new(dev.memory_bytes)?;
    let limits = Limits {
        threads: Some(1),
        ..Limits::default()
    };
    let repeat = repeat.max(1);
    let kernels = std::cell::RefCell::new(Vec::new());
    let measure = |label: &str, d: KernelDispatch<'_>| -> Res<()> {
        let mut instructions = 0;
        d.run_with(&jit, &NoObserver)?;
        let functional = best_of(repeat, || {
            instructions = d.run_with(&jit, &NoObserver)?.wave_instructions;
            Ok(())
        })?;
        let mut cycles = 0;
        d.run_timed(&jit, &NoObserver)?;
        let timed = best_of(repeat, || {
            cycles = d.run_timed(&jit, &NoObserver)?.1.cycles;
            Ok(())
        })?;
        let rate = |s: f64| instructions as f64 / s / 1e6;
        out.line(format!(
            "{label}: {instructions} wave instructions, {cycles} modeled cycles"
        ));
        out.line(format!(
            "  functional  {functional:.3} s: {:>7.2} M wave-instructions/s",
            rate(functional)
        ));
        out.line(format!(
            "  timing      {timed:.3} s: {:>7.2} M wave-instructions/s, {:.1}x the functional time",
            rate(timed),
            timed / functional
        ));
        kernels.borrow_mut().push(json!({
            "kernel": label, "wave_instructions": instructions, "modeled_cycles": cycles,
            "functional_s": functional, "functional_m_per_s": rate(functional),
            "timing_s": timed, "timing_m_per_s": rate(timed), "timing_over_functional": timed / functional,
        }));
        Ok(())
    };
    alu_and_stream(&mem, dev, iterations, limits, measure)?;
    write_json(
        json,
        &json!({ "device": dev.id, "iterations": iterations, "repeat": repeat, "kernels": kernels.into_inner() }),
    )
}

/// `wavejit bench --counters`: what collecting the exact hardware counters (`profiler_hooks::HwCounters`, every
/// lane's access observed) costs against the same dispatch unobserved, on the interpreter and on the JIT, for
/// the ALU loop and a streaming kernel (the fastest of `repeat` runs each, after a first run that translates
/// the code).
pub fn run_counters(device: Option<&str>, iterations: u32, repeat: u32) -> Res<()> {
    let dev = match device {
        Some(d) => DevicePreset::by_name(d)?,
        None => DevicePreset::default_device(),
    };
    let repeat = repeat.max(1);
    println!("wavejit bench --counters on an emulated {dev}: exact counters on, against functional mode");
    let jit = Jit::new()?;
    let mem = DeviceMemory::new(dev.memory_bytes)?;
    let measure = |label: &str, d: KernelDispatch<'_>| -> Res<()> {
        println!("{label}:");
        for engine in ["interp", "jit"] {
            let plain = |d: &KernelDispatch<'_>| -> Res<()> {
                match engine {
                    "interp" => d.run_with(&emu_core::engine::Interpreter, &NoObserver)?,
                    _ => d.run_with(&jit, &NoObserver)?,
                };
                Ok(())
            };
            let counted = |d: &KernelDispatch<'_>| -> Res<()> {
                let c = profiler_hooks::HwCounters::new(dev, 0);
                match engine {
                    "interp" => d.run_with(&emu_core::engine::Interpreter, &c)?,
                    _ => d.run_with(&jit, &c)?,
                };
                std::hint::black_box(c.exact());
                Ok(())
            };
            plain(&d)?;
            counted(&d)?;
            jit.settle();
            let off = best_of(repeat, || plain(&d))?;
            let on = best_of(repeat, || counted(&d))?;
            println!("  {engine:6}  counters off {off:.3} s, on {on:.3} s: {:.2}x", on / off);
        }
        Ok(())
    };
    alu_and_stream(&mem, dev, iterations, Limits::default(), measure)
}

/// Fills `bytes` at `address` with 32-bit words made by `word` from a xorshift sequence seeded by `seed`: inputs
/// live in host memory of their own, as a program's data does (device memory never written reads as the host's
/// shared zero page, which stays in the host's caches however large the buffer).
fn fill(mem: &DeviceMemory, address: u64, bytes: u64, seed: u64, word: fn(u64) -> u32) -> Res<()> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ seed;
    let mut data = Vec::with_capacity(bytes as usize);
    for _ in 0..bytes / 4 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        data.extend_from_slice(&word(x).to_le_bytes());
    }
    mem.write(address, &data)
        .map_err(|e| format!("filling a benchmark input: {e}"))?;
    Ok(())
}

/// An f32 in [-1, 1) from random bits.
fn f32_word(r: u64) -> u32 {
    ((r >> 40) as f32 / (1u64 << 23) as f32 - 1.0).to_bits()
}

/// Two f16s of magnitude in [1/8, 2) with random signs and mantissas.
fn f16_pair(r: u64) -> u32 {
    let half = |r: u64| ((r & 1) << 15 | (12 + (r >> 1) % 4) << 10 | (r >> 3) & 0x3ff) as u32;
    half(r >> 8) | half(r >> 32) << 16
}

/// The bundled code object of kernel file `name` for `dev`'s target.
fn bundled(dev: &DevicePreset, name: &str) -> Res<CodeObject> {
    let file = format!("{name}-{}.co", dev.gfx);
    Ok(CodeObject::parse(
        test_kernels::by_name(&file).ok_or(format!("no bundled {file}"))?,
        &file,
    )?)
}

/// Runs `measure` on the ALU loop (`iterations / 5` rounds) and on `stream_read`, the kernels of the timing and
/// counter benchmarks, bundled for `dev`'s target. Both kernels' buffers are allocated before either runs, so
/// where they lie (and so the modeled cycles, which count addresses from the start of device memory) does not
/// depend on how many times the first one ran.
fn alu_and_stream(
    mem: &DeviceMemory,
    dev: &DevicePreset,
    iterations: u32,
    limits: Limits,
    measure: impl Fn(&str, KernelDispatch<'_>) -> Res<()>,
) -> Res<()> {
    let alu = bundled(dev, "alu_loop")?;
    let (alu_shape, alu_args) = alu_loop_args(mem, dev, iterations / 5)?;
    let stream = bundled(dev, "stream")?;
    let k = stream.kernel("stream_read").ok_or("stream_read kernel")?;
    let (shape, args) = stream_read_args(mem, dev)?;
    measure(
        &format!("alu_loop ({} iterations)", iterations / 5),
        KernelDispatch {
            mem,
            device: dev,
            co: &alu,
            kernel: &alu.kernels[0],
            shape: alu_shape,
            args: &alu_args,
            limits,
        },
    )?;
    measure(
        "stream_read (64 MiB)",
        KernelDispatch {
            mem,
            device: dev,
            co: &stream,
            kernel: k,
            shape,
            args: &args,
            limits,
        },
    )
}

/// The ALU loop of the timing and counter benchmarks: 64 Ki work-items, `iterations` rounds each.
fn alu_loop_args(mem: &DeviceMemory, dev: &DevicePreset, iterations: u32) -> Res<(DispatchShape, [ArgValue; 2])> {
    let n = 64 * 1024u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out")?;
    Ok((
        DispatchShape::new([n, 1, 1], [256, 1, 1], dev)?,
        [ArgValue::Pointer(out), ArgValue::U32(iterations)],
    ))
}

/// The streaming kernel of the timing and counter benchmarks: `stream_read` over 64 MiB, 8 waves per SIMD.
fn stream_read_args(mem: &DeviceMemory, dev: &DevicePreset) -> Res<(DispatchShape, [ArgValue; 5])> {
    let bytes = 64u64 << 20;
    let threads = dev.compute_units * 4 * 8 * 64;
    let input = mem.allocate(bytes, AllocKind::Buffer, "in")?;
    fill(mem, input, bytes, 5, f32_word)?;
    let sums = mem.allocate(threads as u64 * 4, AllocKind::Buffer, "sums")?;
    let shape = DispatchShape::new([threads, 1, 1], [256, 1, 1], dev)?;
    Ok((
        shape,
        [
            ArgValue::Pointer(input),
            ArgValue::U32((bytes / 16) as u32),
            ArgValue::U32(1),
            ArgValue::U32(threads),
            ArgValue::Pointer(sums),
        ],
    ))
}
