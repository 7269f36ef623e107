//! Criterion statistics for both engines on one host thread: the ALU-loop kernel (VALU lane-operations per
//! second; every active lane of every vector ALU instruction counts once) and a tiled SGEMM 128^3 (flop/s).
//! `wavejit bench` prints the same measures, with their ratios, from one run.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::NoObserver;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

include!("../../emu-core/benches/shared/cases.rs");

fn bench(c: &mut Criterion) {
    let jit = jit::Jit::new().unwrap();
    let dev = DevicePreset::by_name("mi300x").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let limits = Limits {
        threads: Some(1),
        ..Limits::default()
    };
    let mut g = c.benchmark_group("engines");
    g.sample_size(10);
    for (name, (case, work)) in [
        ("alu_loop valu lane-ops", alu_loop_case(&mem, dev, 1000, limits)),
        ("sgemm 128^3 flop", sgemm_case(&mem, dev, 128)),
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
        g.bench_function(format!("{name}, interpreter"), |b| b.iter(|| d.run().unwrap()));
        g.bench_function(format!("{name}, jit"), |b| {
            b.iter(|| d.run_with(&jit, &NoObserver).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
