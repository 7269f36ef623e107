//! Criterion statistics for the timing model on one host thread (it always runs on one), in
//! wave-instructions per second, against the same dispatch in functional mode: the ALU-loop kernel and a
//! streaming read (test-kernels' stream_read over 16 MiB on every wave slot of an MI210). `wavejit bench
//! --timing` prints the same measures from one run.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::NoObserver;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

fn bench(c: &mut Criterion) {
    let jit = jit::Jit::new().unwrap();
    let dev = DevicePreset::by_name("mi210").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let limits = Limits {
        threads: Some(1),
        ..Limits::default()
    };
    let load = |name: &str| CodeObject::parse(test_kernels::by_name(name).unwrap(), name).unwrap();

    let alu = load("alu_loop-gfx90a.co");
    let n = 64 * 1024u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out").unwrap();
    let alu_args = [ArgValue::Pointer(out), ArgValue::U32(100)];
    let alu_shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev).unwrap();

    let stream = load("stream-gfx90a.co");
    let bytes = 16u64 << 20;
    let threads = dev.compute_units * 4 * 8 * 64;
    let input = mem.allocate(bytes, AllocKind::Buffer, "in").unwrap();
    // written, as a program's data is (unwritten device memory reads as the host's zero page, always cached)
    mem.write(
        input,
        &(0..bytes / 4)
            .flat_map(|i| ((i % 251) as f32).to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let sums = mem.allocate(threads as u64 * 4, AllocKind::Buffer, "sums").unwrap();
    let stream_args = [
        ArgValue::Pointer(input),
        ArgValue::U32((bytes / 16) as u32),
        ArgValue::U32(1),
        ArgValue::U32(threads),
        ArgValue::Pointer(sums),
    ];
    let stream_shape = DispatchShape::new([threads, 1, 1], [256, 1, 1], dev).unwrap();

    let mut g = c.benchmark_group("timing");
    g.sample_size(10);
    for (name, co, kernel, shape, args) in [
        ("alu_loop wave-instructions", &alu, "alu_loop", alu_shape, &alu_args[..]),
        (
            "stream_read 16 MiB wave-instructions",
            &stream,
            "stream_read",
            stream_shape,
            &stream_args[..],
        ),
    ] {
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co,
            kernel: co.kernel(kernel).unwrap(),
            shape,
            args,
            limits,
        };
        let instructions = d.run_with(&jit, &NoObserver).unwrap().wave_instructions;
        d.run_timed(&jit, &NoObserver).unwrap();
        g.throughput(Throughput::Elements(instructions));
        g.bench_function(format!("{name}, functional"), |b| {
            b.iter(|| d.run_with(&jit, &NoObserver).unwrap())
        });
        g.bench_function(format!("{name}, timing"), |b| {
            b.iter(|| d.run_timed(&jit, &NoObserver).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
