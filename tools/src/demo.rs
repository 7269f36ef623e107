//! `wavejit demo`: runs the bundled kernels on an emulated GPU, checks them against their CPU references and
//! prints what they computed — a first look at wavejit that needs nothing installed.

use std::time::Instant;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits, RunStats};

use crate::engine::{dispatch, EngineKind};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::{CodeObject, Kernel};
use test_kernels::reference;

fn upload<T: Copy>(
    mem: &DeviceMemory,
    data: &[T],
    to_bytes: impl Fn(T) -> Vec<u8>,
    label: &str,
) -> Result<u64, Box<dyn std::error::Error>> {
    let bytes: Vec<u8> = data.iter().flat_map(|x| to_bytes(*x)).collect();
    let a = mem.allocate(bytes.len().max(1) as u64, AllocKind::Buffer, label)?;
    mem.write(a, &bytes)?;
    Ok(a)
}

fn download_f32(mem: &DeviceMemory, addr: u64, n: usize) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let mut b = vec![0u8; n * 4];
    mem.read(addr, &mut b)?;
    Ok(b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn f32_bytes(x: f32) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

/// Runs the demo on `device` (default: MI300X), in the timing model when `timing`, with every byte outside an
/// allocation a fault when `memcheck`.
pub fn run(
    device: Option<&str>,
    engine: EngineKind,
    timing: bool,
    memcheck: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let jit = jit::Jit::new()?;
    let dev = match device {
        Some(d) => DevicePreset::by_name(d)?,
        None => DevicePreset::default_device(),
    };
    println!(
        "wavejit demo on an emulated {dev}, engine: {}{}",
        engine.name(),
        if timing { ", timing model" } else { "" }
    );
    let modeled = if timing {
        format!(" {:>11}", "modeled us")
    } else {
        String::new()
    };
    println!(
        "{:<12} {:>10} {:>7} {:>12} {:>9}{modeled}  result",
        "kernel", "work-items", "waves", "wave instr", "ms"
    );
    let mem = DeviceMemory::new(dev.memory_bytes)?;
    mem.set_memcheck(memcheck);
    let run_kernel = |co: &CodeObject, kernel: &Kernel, shape: DispatchShape, args: &[ArgValue]| {
        dispatch(
            engine,
            &jit,
            &KernelDispatch {
                mem: &mem,
                device: dev,
                co,
                kernel,
                shape,
                args,
                limits: Limits {
                    timing,
                    ..Limits::default()
                },
            },
        )
        .map(|(s, _)| s)
    };
    let load = |name: &str| -> Result<CodeObject, Box<dyn std::error::Error>> {
        let file = format!("{name}-{}.co", dev.gfx);
        Ok(CodeObject::parse(
            test_kernels::by_name(&file).ok_or(format!("no bundled {file}"))?,
            &file,
        )?)
    };
    let report = |name: &str, items: u32, stats: &RunStats, ms: f64, ok: bool, sample: String| {
        let verdict = if ok {
            "matches the CPU reference"
        } else {
            "DIFFERS from the CPU reference"
        };
        let modeled = stats
            .cycles
            .map(|c| format!(" {:>11.2}", c as f64 / dev.engine_clock_mhz as f64))
            .unwrap_or_default();
        println!(
            "{name:<12} {items:>10} {:>7} {:>12} {ms:>9.2}{modeled}  {verdict}; {sample}",
            stats.waves, stats.wave_instructions
        );
        if let Some(w) = stats.slack_warning() {
            println!("{:<12} warning: {w}", "");
        }
    };
    let mut all_ok = true;

    let n = 100_000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 / 8.0).collect();

    // vadd
    let co = load("vadd")?;
    let (da, db, dc) = (
        upload(&mem, &a, f32_bytes, "a")?,
        upload(&mem, &b, f32_bytes, "b")?,
        upload(&mem, &vec![0f32; n], f32_bytes, "c")?,
    );
    let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev)?;
    let t = Instant::now();
    let s = run_kernel(
        &co,
        &co.kernels[0],
        shape,
        &[
            ArgValue::Pointer(da),
            ArgValue::Pointer(db),
            ArgValue::Pointer(dc),
            ArgValue::U32(n as u32),
        ],
    )?;
    let c = download_f32(&mem, dc, n)?;
    let ok = c == reference::vadd(&a, &b);
    all_ok &= ok;
    report(
        "vadd",
        n as u32,
        &s,
        t.elapsed().as_secs_f64() * 1e3,
        ok,
        format!("c[99999] = {} + {} = {}", a[n - 1], b[n - 1], c[n - 1]),
    );

    // saxpy
    let co = load("saxpy")?;
    let dy = upload(&mem, &b, f32_bytes, "y")?;
    let t = Instant::now();
    let s = run_kernel(
        &co,
        &co.kernels[0],
        shape,
        &[
            ArgValue::F32(2.5),
            ArgValue::Pointer(da),
            ArgValue::Pointer(dy),
            ArgValue::U32(n as u32),
        ],
    )?;
    let y = download_f32(&mem, dy, n)?;
    let ok = y == reference::saxpy(2.5, &a, &b);
    all_ok &= ok;
    report(
        "saxpy",
        n as u32,
        &s,
        t.elapsed().as_secs_f64() * 1e3,
        ok,
        format!("y[7] = 2.5 * {} + {} = {}", a[7], b[7], y[7]),
    );

    // reduce_sum
    let co = load("reduce")?;
    let groups = n.div_ceil(256);
    let dsum = upload(&mem, &vec![0f32; groups], f32_bytes, "sums")?;
    let shape_r = DispatchShape::new([(groups * 256) as u32, 1, 1], [256, 1, 1], dev)?;
    let t = Instant::now();
    let s = run_kernel(
        &co,
        &co.kernels[0],
        shape_r,
        &[ArgValue::Pointer(da), ArgValue::Pointer(dsum), ArgValue::U32(n as u32)],
    )?;
    let sums = download_f32(&mem, dsum, groups)?;
    let ok = sums == reference::reduce_sum(&a);
    all_ok &= ok;
    report(
        "reduce_sum",
        (groups * 256) as u32,
        &s,
        t.elapsed().as_secs_f64() * 1e3,
        ok,
        format!("block 0 sums to {}", sums[0]),
    );

    // divergence
    let co = load("divergence")?;
    let m = 20_000usize;
    let seeds: Vec<u32> = (0..m as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> (i % 23))
        .collect();
    let dseed = upload(&mem, &seeds, |x: u32| x.to_le_bytes().to_vec(), "seeds")?;
    let dout = mem.allocate(m as u64 * 8, AllocKind::Buffer, "out")?;
    let shape_d = DispatchShape::new([m as u32, 1, 1], [128, 1, 1], dev)?;
    let t = Instant::now();
    let k = co.kernel("divergence").ok_or("divergence kernel")?;
    let s = run_kernel(
        &co,
        k,
        shape_d,
        &[
            ArgValue::Pointer(dout),
            ArgValue::Pointer(dseed),
            ArgValue::U32(m as u32),
        ],
    )?;
    let mut raw = vec![0u8; m * 8];
    mem.read(dout, &mut raw)?;
    let out: Vec<u64> = raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let ok = out == reference::divergence(&seeds);
    all_ok &= ok;
    report(
        "divergence",
        m as u32,
        &s,
        t.elapsed().as_secs_f64() * 1e3,
        ok,
        format!("seed {} -> {}", seeds[2], out[2]),
    );

    // alu_loop
    let co = load("alu_loop")?;
    let (items, iters) = (16_384usize, 100u32);
    let dl = upload(&mem, &vec![0f32; items], f32_bytes, "out")?;
    let shape_l = DispatchShape::new([items as u32, 1, 1], [256, 1, 1], dev)?;
    let t = Instant::now();
    let s = run_kernel(
        &co,
        &co.kernels[0],
        shape_l,
        &[ArgValue::Pointer(dl), ArgValue::U32(iters)],
    )?;
    let secs = t.elapsed().as_secs_f64();
    let l = download_f32(&mem, dl, items)?;
    let ok = l == reference::alu_loop(items, iters);
    all_ok &= ok;
    report(
        "alu_loop",
        items as u32,
        &s,
        secs * 1e3,
        ok,
        format!("{:.0} M wave instructions/s", s.wave_instructions as f64 / secs / 1e6),
    );

    // IEEE division compiled from HIP (v_div_scale / v_rcp / v_div_fmas / v_div_fixup), f32 and f64
    let co = load("divide")?;
    let k = co.kernel("divide").ok_or("divide kernel")?;
    let q: Vec<f32> = (0..n).map(|i| (i as f32 + 1.0) * 0.37).collect();
    let qd: Vec<f64> = a.iter().map(|x| *x as f64 + 0.1).collect();
    let rd: Vec<f64> = q.iter().map(|x| *x as f64).collect();
    let dq = upload(&mem, &q, f32_bytes, "divisors")?;
    let dquot = upload(&mem, &vec![0f32; n], f32_bytes, "quotients")?;
    let f64_bytes = |x: f64| x.to_le_bytes().to_vec();
    let (dn64, dd64, dr64) = (
        upload(&mem, &qd, f64_bytes, "n64")?,
        upload(&mem, &rd, f64_bytes, "d64")?,
        upload(&mem, &vec![0f64; n], f64_bytes, "r64")?,
    );
    let t = Instant::now();
    let args = [da, dq, dquot, dn64, dd64, dr64].map(ArgValue::Pointer);
    let s = run_kernel(&co, k, shape, &[&args[..], &[ArgValue::U32(n as u32)]].concat())?;
    let quot = download_f32(&mem, dquot, n)?;
    let mut raw = vec![0u8; n * 8];
    mem.read(dr64, &mut raw)?;
    let r64: Vec<f64> = raw
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let (wq, wr) = reference::divide(&a, &q, &qd, &rd);
    let ok = quot == wq && r64 == wr;
    all_ok &= ok;
    report(
        "divide (HIP)",
        n as u32,
        &s,
        t.elapsed().as_secs_f64() * 1e3,
        ok,
        format!("{} / {} = {}", a[n - 1], q[n - 1], quot[n - 1]),
    );

    // one 32x32x2 f32 matrix-core step (MFMA, accumulating in AGPRs)
    let co = load("mfma")?;
    let k = co.kernel("mfma_f32").ok_or("mfma_f32 kernel")?;
    let ma: Vec<f32> = (0..64).map(|i| (i % 7) as f32 - 3.0).collect();
    let mb: Vec<f32> = (0..64).map(|i| (i % 5) as f32 * 0.5).collect();
    let mc: Vec<f32> = (0..64 * 16).map(|i| (i % 11) as f32).collect();
    let (da, db, dc) = (
        upload(&mem, &ma, f32_bytes, "a")?,
        upload(&mem, &mb, f32_bytes, "b")?,
        upload(&mem, &mc, f32_bytes, "c")?,
    );
    let shape_m = DispatchShape::new([64, 1, 1], [64, 1, 1], dev)?;
    let t = Instant::now();
    let s = run_kernel(
        &co,
        k,
        shape_m,
        &[ArgValue::Pointer(da), ArgValue::Pointer(db), ArgValue::Pointer(dc)],
    )?;
    let d = download_f32(&mem, dc, 64 * 16)?;
    let ok = d == reference::mfma(32, 32, 2, &ma, &mb, &mc);
    all_ok &= ok;
    report(
        "mfma_f32",
        64,
        &s,
        t.elapsed().as_secs_f64() * 1e3,
        ok,
        format!("D[0][0] = {}", d[0]),
    );

    if !all_ok {
        return Err("a kernel differed from its CPU reference".into());
    }
    println!(
        "all kernels match their CPU references ({}; `wavejit disasm` shows their code)",
        engine.name()
    );
    Ok(())
}
