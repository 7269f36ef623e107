//! Decode (and disassembly) throughput on real compiler output: the bundled test kernels' code, and
//! librocrand's gfx90a kernels when installed. Reports instructions per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use isa_amdgpu::codeobj::{self, CodeObject};
use isa_amdgpu::{decode_all, disasm, Target};

fn corpus() -> Vec<(Vec<u8>, Target)> {
    let mut v = Vec::new();
    let lib = std::path::Path::new("/usr/lib/x86_64-linux-gnu/librocrand.so.1");
    if lib.exists() {
        if let Ok(objs) = codeobj::open_any(lib, Some("gfx90a")) {
            for l in objs.iter().take(40) {
                for f in &l.code_object.functions {
                    v.push((f.code().to_vec(), Target::Gfx90a));
                }
            }
        }
    }
    if v.is_empty() {
        for (name, bytes) in test_kernels_corpus() {
            let co = CodeObject::parse(bytes, name).unwrap();
            let t = Target::from_name(&co.target.processor).unwrap();
            for f in &co.functions {
                v.push((f.code().to_vec(), t));
            }
        }
    }
    v
}

fn test_kernels_corpus() -> Vec<(&'static str, &'static [u8])> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../test-kernels/prebuilt");
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| {
                    let name: &'static str = Box::leak(e.file_name().to_string_lossy().into_owned().into_boxed_str());
                    let bytes: &'static [u8] = Box::leak(std::fs::read(e.path()).unwrap().into_boxed_slice());
                    (name, bytes)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let corpus = corpus();
    let count: usize = corpus.iter().map(|(b, t)| decode_all(b, 0, *t).len()).sum();
    let mut g = c.benchmark_group("gfx9");
    g.throughput(Throughput::Elements(count as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for (bytes, t) in &corpus {
                n += decode_all(bytes, 0, *t).iter().filter(|(_, r)| r.is_ok()).count();
            }
            n
        })
    });
    g.bench_function("decode+disassemble", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for (bytes, t) in &corpus {
                for (_, r) in decode_all(bytes, 0, *t) {
                    if let Ok(i) = r {
                        n += disasm::text(&i).len();
                    }
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
