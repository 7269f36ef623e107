//! `wavejit bench`: engine throughput on the bundled ALU-loop and SGEMM kernels, as VALU lane-operations per
//! second and emulated GFLOP/s, for the interpreter and the JIT in the same run, with their ratio (one run
//! each; use the criterion benches for statistics).

use std::time::Instant;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::observe::NoObserver;
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use isa_amdgpu::table::Unit;
use profiler_hooks::ClassCounter;

/// The shortest of `runs` timings of `f`, in seconds (the machine is shared: the minimum is the least disturbed).
fn best_of(runs: u32, mut f: impl FnMut() -> Result<(), Box<dyn std::error::Error>>) -> Result<f64, Box<dyn std::error::Error>> {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// One line on how the JIT scales: `dispatch` on one host thread and on `threads`, alternately, best of three.
fn print_scaling(threads: usize, mut dispatch: impl FnMut(Limits) -> Result<(), Box<dyn std::error::Error>>) -> Result<(), Box<dyn std::error::Error>> {
    if threads < 2 {
        return Ok(());
    }
    let (mut one, mut all) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        one = one.min(best_of(1, || dispatch(Limits { threads: Some(1), ..Limits::default() }))?);
        all = all.min(best_of(1, || dispatch(Limits { threads: Some(threads), ..Limits::default() }))?);
    }
    println!("  jit scaling  {one:.3} s on 1 host thread, {all:.3} s on {threads}: {:.2}x (best of 3 each, alternating)", one / all);
    Ok(())
}

/// Runs the benchmarks on `device` with `threads` host threads (default: all).
pub fn run(device: Option<&str>, threads: Option<usize>, sgemm_n: u32, iterations: u32) -> Result<(), Box<dyn std::error::Error>> {
    let dev = match device {
        Some(d) => DevicePreset::by_name(d)?,
        None => DevicePreset::default_device(),
    };
    if sgemm_n == 0 || !sgemm_n.is_multiple_of(16) {
        return Err(format!("--sgemm-n must be a positive multiple of 16, got {sgemm_n}").into());
    }
    let limits = Limits { threads, ..Limits::default() };
    let host_threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("wavejit bench on an emulated {dev}, {host_threads} host thread(s)");
    let jit = jit::Jit::new()?;
    let mem = DeviceMemory::new(dev.memory_bytes)?;
    let load = |name: &str| -> Result<CodeObject, Box<dyn std::error::Error>> {
        let file = format!("{name}-{}.co", dev.gfx);
        Ok(CodeObject::parse(test_kernels::by_name(&file).ok_or(format!("no bundled {file}"))?, &file)?)
    };

    let co = load("alu_loop")?;
    let n = 64 * 1024u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out")?;
    let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev)?;
    let args = [ArgValue::Pointer(out), ArgValue::U32(iterations)];
    // the VALU instruction count, from an observed (interpreted) run
    let d = KernelDispatch { mem: &mem, device: dev, co: &co, kernel: &co.kernels[0], shape, args: &args, limits };
    let counter = ClassCounter::default();
    let s = d.run_observed(&counter)?;
    let valu = counter.count(Unit::Valu) * 64;
    let t = Instant::now();
    d.run()?;
    let interp = t.elapsed().as_secs_f64();
    let t = Instant::now();
    d.run_with(&jit, &NoObserver)?;
    let first = t.elapsed().as_secs_f64();
    let t = Instant::now();
    d.run_with(&jit, &NoObserver)?;
    let warm = t.elapsed().as_secs_f64();
    let rate = |secs: f64| valu as f64 / secs / 1e6;
    println!("alu_loop ({iterations} iterations)  {} waves, {} wave instructions, {} VALU lane-ops", s.waves, s.wave_instructions, valu);
    println!("  interpreter  {interp:.3} s: {:>6.0} M VALU lane-ops/s ({:.0} M per host thread)", rate(interp), rate(interp) / host_threads as f64);
    println!(
        "  jit          {warm:.3} s: {:>6.0} M VALU lane-ops/s ({:.0} M per host thread), {:.1}x the interpreter (first run with translation {first:.3} s)",
        rate(warm),
        rate(warm) / host_threads as f64,
        interp / warm
    );
    print_scaling(host_threads, |l| Ok(KernelDispatch { limits: l, ..d }.run_with(&jit, &NoObserver).map(drop)?))?;

    let co = load("sgemm")?;
    let bytes = (sgemm_n as u64).pow(2) * 4;
    let (a, b, c) = (
        mem.allocate(bytes, AllocKind::Buffer, "A")?,
        mem.allocate(bytes, AllocKind::Buffer, "B")?,
        mem.allocate(bytes, AllocKind::Buffer, "C")?,
    );
    let shape = DispatchShape::new([sgemm_n, sgemm_n, 1], [16, 16, 1], dev)?;
    let args = [ArgValue::Pointer(a), ArgValue::Pointer(b), ArgValue::Pointer(c), ArgValue::U32(sgemm_n)];
    let d = KernelDispatch { mem: &mem, device: dev, co: &co, kernel: &co.kernels[0], shape, args: &args, limits };
    let flop = 2.0 * (sgemm_n as f64).powi(3);
    let t = Instant::now();
    d.run()?;
    let interp = t.elapsed().as_secs_f64();
    d.run_with(&jit, &NoObserver)?;
    let t = Instant::now();
    d.run_with(&jit, &NoObserver)?;
    let warm = t.elapsed().as_secs_f64();
    println!("sgemm {sgemm_n}^3");
    println!("  interpreter  {interp:.3} s: {:.3} emulated GFLOP/s", flop / interp / 1e9);
    println!("  jit          {warm:.3} s: {:.3} emulated GFLOP/s, {:.1}x the interpreter", flop / warm / 1e9, interp / warm);
    print_scaling(host_threads, |l| Ok(KernelDispatch { limits: l, ..d }.run_with(&jit, &NoObserver).map(drop)?))?;
    // MFMA GEMM: f16 inputs, f32 accumulation, 32x32 tiles per wave (the hgemm HIP kernel)
    if sgemm_n.is_multiple_of(32) {
        let co = load("mfma_gemm")?;
        let k = co.kernel("hgemm").ok_or("hgemm kernel")?;
        let bytes = (sgemm_n as u64).pow(2) * 2;
        let (a, b) = (mem.allocate(bytes, AllocKind::Buffer, "A16")?, mem.allocate(bytes, AllocKind::Buffer, "B16")?);
        let c = mem.allocate(bytes * 2, AllocKind::Buffer, "C32")?;
        let tiles = (sgemm_n / 32) * (sgemm_n / 32);
        let shape = DispatchShape::new([64 * tiles, 1, 1], [64, 1, 1], dev)?;
        let args = [ArgValue::Pointer(a), ArgValue::Pointer(b), ArgValue::Pointer(c), ArgValue::U32(sgemm_n), ArgValue::U32(sgemm_n)];
        let d = KernelDispatch { mem: &mem, device: dev, co: &co, kernel: k, shape, args: &args, limits };
        let t = Instant::now();
        d.run()?;
        let interp = t.elapsed().as_secs_f64();
        d.run_with(&jit, &NoObserver)?;
        let t = Instant::now();
        d.run_with(&jit, &NoObserver)?;
        let warm = t.elapsed().as_secs_f64();
        println!("mfma f16 gemm {sgemm_n}^3 (v_mfma_f32_32x32x8f16)");
        println!("  interpreter  {interp:.3} s: {:.3} emulated GFLOP/s", flop / interp / 1e9);
        println!("  jit          {warm:.3} s: {:.3} emulated GFLOP/s, {:.1}x the interpreter", flop / warm / 1e9, interp / warm);
        print_scaling(host_threads, |l| Ok(KernelDispatch { limits: l, ..d }.run_with(&jit, &NoObserver).map(drop)?))?;
    }
    let st = jit.stats();
    println!(
        "jit: {} blocks, {} instructions compiled, {} left to the interpreter ({} interpreted executions), {:.1} us translation per instruction",
        st.blocks,
        st.compiled,
        st.not_compiled,
        st.fallbacks,
        st.translate_ns as f64 / 1e3 / (st.compiled + st.not_compiled).max(1) as f64
    );
    Ok(())
}

/// `wavejit bench --timing`: the timing model's speed in wave-instructions per second per host core (it runs
/// on one), on the ALU loop and on a streaming kernel, against functional mode on one host thread; each run
/// after a first one that translates the code (best of three).
pub fn run_timing(device: Option<&str>, iterations: u32) -> Result<(), Box<dyn std::error::Error>> {
    let dev = match device {
        Some(d) => DevicePreset::by_name(d)?,
        None => DevicePreset::default_device(),
    };
    println!("wavejit bench --timing on an emulated {dev}: wave-instructions per second on one host core");
    let jit = jit::Jit::new()?;
    let mem = DeviceMemory::new(dev.memory_bytes)?;
    let load = |name: &str| -> Result<CodeObject, Box<dyn std::error::Error>> {
        let file = format!("{name}-{}.co", dev.gfx);
        Ok(CodeObject::parse(test_kernels::by_name(&file).ok_or(format!("no bundled {file}"))?, &file)?)
    };
    let limits = Limits { threads: Some(1), ..Limits::default() };
    let measure = |label: &str, d: KernelDispatch<'_>| -> Result<(), Box<dyn std::error::Error>> {
        let mut instructions = 0;
        d.run_with(&jit, &NoObserver)?;
        let functional = best_of(3, || {
            instructions = d.run_with(&jit, &NoObserver)?.wave_instructions;
            Ok(())
        })?;
        let mut cycles = 0;
        d.run_timed(&jit, &NoObserver)?;
        let timed = best_of(3, || {
            cycles = d.run_timed(&jit, &NoObserver)?.1.cycles;
            Ok(())
        })?;
        let rate = |s: f64| instructions as f64 / s / 1e6;
        println!("{label}: {instructions} wave instructions, {cycles} modeled cycles");
        println!("  functional  {functional:.3} s: {:>7.2} M wave-instructions/s", rate(functional));
        println!("  timing      {timed:.3} s: {:>7.2} M wave-instructions/s, {:.1}x the functional time", rate(timed), timed / functional);
        Ok(())
    };

    let co = load("alu_loop")?;
    let n = 64 * 1024u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out")?;
    let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev)?;
    let args = [ArgValue::Pointer(out), ArgValue::U32(iterations / 5)];
    measure(&format!("alu_loop ({} iterations)", iterations / 5), KernelDispatch { mem: &mem, device: dev, co: &co, kernel: &co.kernels[0], shape, args: &args, limits })?;

    let co = load("stream")?;
    let k = co.kernel("stream_read").ok_or("stream_read kernel")?;
    let bytes = 64u64 << 20;
    let threads = dev.compute_units * 4 * 8 * 64;
    let input = mem.allocate(bytes, AllocKind::Buffer, "in")?;
    let sums = mem.allocate(threads as u64 * 4, AllocKind::Buffer, "sums")?;
    let shape = DispatchShape::new([threads, 1, 1], [256, 1, 1], dev)?;
    let args = [ArgValue::Pointer(input), ArgValue::U32((bytes / 16) as u32), ArgValue::U32(1), ArgValue::U32(threads), ArgValue::Pointer(sums)];
    measure("stream_read (64 MiB)", KernelDispatch { mem: &mem, device: dev, co: &co, kernel: k, shape, args: &args, limits })?;
    Ok(())
}
