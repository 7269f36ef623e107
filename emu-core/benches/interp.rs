//! Interpreter throughput on one host thread: the ALU-bound loop kernel (VALU lane-operations per second) and
//! a tiled SGEMM 128^3 (flop/s).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

include!("shared/cases.rs");

fn bench(c: &mut Criterion) {
    let dev = DevicePreset::by_name("mi300x").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let limits = Limits {
        threads: Some(1),
        ..Limits::default()
    };
    let mut g = c.benchmark_group("interp");
    g.sample_size(10);
    for (name, (case, work)) in [
        (
            "alu_loop valu lane-ops (1 thread)",
            alu_loop_case(&mem, dev, 200, limits),
        ),
        ("sgemm 128^3 flop (1 thread)", sgemm_case(&mem, dev, 128)),
    ] {
        g.throughput(Throughput::Elements(work));
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &case.co,
            kernel: case.kernel(),
            shape: case.shape,
            args: &case.args,
            limits,
        };
        g.bench_function(name, |b| b.iter(|| d.run().unwrap()));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
