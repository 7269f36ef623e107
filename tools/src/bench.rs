//! `wavejit bench`: engine throughput on the bundled ALU-loop and SGEMM kernels, as VALU lane-operations per
//! second and emulated GFLOP/s (one run each; use the criterion benches for statistics).

use std::time::Instant;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{run_kernel_observed, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::ClassCounter;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

/// Runs the benchmarks on `device` with `threads` host threads (default: all).
pub fn run(device: Option<&str>, threads: Option<usize>, sgemm_n: u32) -> Result<(), Box<dyn std::error::Error>> {
    let dev = match device {
        Some(d) => DevicePreset::by_name(d)?,
        None => DevicePreset::default_device(),
    };
    if sgemm_n == 0 || !sgemm_n.is_multiple_of(16) {
        return Err(format!("--sgemm-n must be a positive multiple of 16, got {sgemm_n}").into());
    }
    let limits = Limits { threads, ..Limits::default() };
    let host_threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("wavejit bench on an emulated {dev}, interpreter, {host_threads} host thread(s)");
    let mem = DeviceMemory::new(dev.memory_bytes)?;
    let load = |name: &str| -> Result<CodeObject, Box<dyn std::error::Error>> {
        let file = format!("{name}-{}.co", dev.gfx);
        Ok(CodeObject::parse(test_kernels::by_name(&file).ok_or(format!("no bundled {file}"))?, &file)?)
    };

    let co = load("alu_loop")?;
    let n = 64 * 1024u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out")?;
    let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev)?;
    let counter = ClassCounter::default();
    let t = Instant::now();
    let s = run_kernel_observed(&mem, dev, &co, &co.kernels[0], shape, &[ArgValue::Pointer(out), ArgValue::U32(200)], limits, &counter)?;
    let secs = t.elapsed().as_secs_f64();
    let valu: u64 = counter.counts().iter().filter(|(u, _)| *u == "valu").map(|(_, c)| c * 64).sum();
    println!(
        "alu_loop   {} waves, {} wave instructions in {:.3} s: {:.0} M VALU lane-ops/s ({:.0} M per host thread)",
        s.waves,
        s.wave_instructions,
        secs,
        valu as f64 / secs / 1e6,
        valu as f64 / secs / 1e6 / host_threads as f64
    );

    let co = load("sgemm")?;
    let bytes = (sgemm_n as u64).pow(2) * 4;
    let (a, b, c) = (
        mem.allocate(bytes, AllocKind::Buffer, "A")?,
        mem.allocate(bytes, AllocKind::Buffer, "B")?,
        mem.allocate(bytes, AllocKind::Buffer, "C")?,
    );
    let shape = DispatchShape::new([sgemm_n, sgemm_n, 1], [16, 16, 1], dev)?;
    let args = [ArgValue::Pointer(a), ArgValue::Pointer(b), ArgValue::Pointer(c), ArgValue::U32(sgemm_n)];
    let counter = ClassCounter::default();
    let t = Instant::now();
    run_kernel_observed(&mem, dev, &co, &co.kernels[0], shape, &args, limits, &counter)?;
    let secs = t.elapsed().as_secs_f64();
    let flop = 2.0 * (sgemm_n as f64).powi(3);
    println!(
        "sgemm {sgemm_n}^3  {:.3} s: {:.3} emulated GFLOP/s, {:.0} M vector lane-ops/s",
        secs,
        flop / secs / 1e9,
        counter.vector_lanes() as f64 / secs / 1e6
    );
    Ok(())
}
