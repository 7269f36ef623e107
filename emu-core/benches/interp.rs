//! Interpreter throughput on the ALU-bound loop kernel, one host thread: VALU lane-operations per second
//! (every active lane of every vector ALU instruction counts once).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emu_core::dispatch::DispatchShape;
use emu_core::engine::{run_kernel, run_kernel_observed, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::ClassCounter;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

fn bench(c: &mut Criterion) {
    let dev = DevicePreset::by_name("mi300x").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("alu_loop-gfx942.co").unwrap(), "alu_loop").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 64 * 64u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out").unwrap();
    let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(out), ArgValue::U32(200)];
    let limits = Limits { threads: Some(1), ..Limits::default() };
    // count the VALU lane operations of one run
    let counter = ClassCounter::default();
    run_kernel_observed(&mem, dev, &co, &co.kernels[0], shape, &args, limits, &counter).unwrap();
    let valu: u64 = counter.counts().iter().filter(|(u, _)| *u == "valu").map(|(_, n)| n).sum::<u64>() * 64;
    let mut g = c.benchmark_group("interp");
    g.throughput(Throughput::Elements(valu));
    g.sample_size(10);
    g.bench_function("alu_loop valu lane-ops (1 thread)", |b| {
        b.iter(|| run_kernel(&mem, dev, &co, &co.kernels[0], shape, &args, limits).unwrap())
    });

    // tiled SGEMM 128^3: 2 n^3 floating-point operations per run
    let co = CodeObject::parse(test_kernels::by_name("sgemm-gfx942.co").unwrap(), "sgemm").unwrap();
    let n = 128u32;
    let a = mem.allocate((n * n * 4) as u64, AllocKind::Buffer, "A").unwrap();
    let bm = mem.allocate((n * n * 4) as u64, AllocKind::Buffer, "B").unwrap();
    let cm = mem.allocate((n * n * 4) as u64, AllocKind::Buffer, "C").unwrap();
    let shape = DispatchShape::new([n, n, 1], [16, 16, 1], dev).unwrap();
    let args = [ArgValue::Pointer(a), ArgValue::Pointer(bm), ArgValue::Pointer(cm), ArgValue::U32(n)];
    g.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
    g.bench_function("sgemm 128^3 flop (1 thread)", |b| {
        b.iter(|| run_kernel(&mem, dev, &co, &co.kernels[0], shape, &args, limits).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
