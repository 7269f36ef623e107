//! Criterion statistics for both engines on one host thread: the ALU-loop kernel (VALU lane-operations per
//! second; every active lane of every vector ALU instruction counts once) and a tiled SGEMM 128^3 (flop/s).
//! `wavejit bench` prints the same measures, with their ratios, from one run.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emu_core::dispatch::DispatchShape;
use emu_core::engine::{run_kernel, run_kernel_observed, run_kernel_with, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::{ClassCounter, NoObserver};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

fn bench(c: &mut Criterion) {
    let jit = jit::Jit::new().unwrap();
    let dev = DevicePreset::by_name("mi300x").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let limits = Limits { threads: Some(1), ..Limits::default() };
    let mut g = c.benchmark_group("engines");
    g.sample_size(10);

    let co = CodeObject::parse(test_kernels::by_name("alu_loop-gfx942.co").unwrap(), "alu_loop").unwrap();
    let n = 64 * 64u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out").unwrap();
    let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(out), ArgValue::U32(1000)];
    let counter = ClassCounter::default();
    run_kernel_observed(&mem, dev, &co, &co.kernels[0], shape, &args, limits, &counter).unwrap();
    let valu: u64 = counter.counts().iter().filter(|(u, _)| *u == "valu").map(|(_, n)| n).sum::<u64>() * 64;
    g.throughput(Throughput::Elements(valu));
    g.bench_function("alu_loop valu lane-ops, interpreter", |b| b.iter(|| run_kernel(&mem, dev, &co, &co.kernels[0], shape, &args, limits).unwrap()));
    g.bench_function("alu_loop valu lane-ops, jit", |b| {
        b.iter(|| run_kernel_with(&mem, dev, &co, &co.kernels[0], shape, &args, limits, &jit, &NoObserver).unwrap())
    });

    let co = CodeObject::parse(test_kernels::by_name("sgemm-gfx942.co").unwrap(), "sgemm").unwrap();
    let n = 128u32;
    let a = mem.allocate((n * n * 4) as u64, AllocKind::Buffer, "A").unwrap();
    let bm = mem.allocate((n * n * 4) as u64, AllocKind::Buffer, "B").unwrap();
    let cm = mem.allocate((n * n * 4) as u64, AllocKind::Buffer, "C").unwrap();
    let shape = DispatchShape::new([n, n, 1], [16, 16, 1], dev).unwrap();
    let args = [ArgValue::Pointer(a), ArgValue::Pointer(bm), ArgValue::Pointer(cm), ArgValue::U32(n)];
    g.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
    g.bench_function("sgemm 128^3 flop, interpreter", |b| b.iter(|| run_kernel(&mem, dev, &co, &co.kernels[0], shape, &args, limits).unwrap()));
    g.bench_function("sgemm 128^3 flop, jit", |b| {
        b.iter(|| run_kernel_with(&mem, dev, &co, &co.kernels[0], shape, &args, limits, &jit, &NoObserver).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
