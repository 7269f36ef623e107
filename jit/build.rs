//! Fingerprints the code generator for the disk cache of translations (`src/disk.rs`): a hash of the sources
//! that decide what a block compiles to — this crate, the semantics and the instruction table (emu-core,
//! isa-amdgpu), the locked dependency versions (Cranelift's among them) and the compiler — as
//! `WAVEJIT_CODEGEN_HASH`. Any change to them makes every cached block a miss, so a cache never serves code
//! from another build.

use std::path::{Path, PathBuf};

/// Every file under `dir`, sorted, recursively.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.parent().expect("jit/ lies in the workspace").to_path_buf();
    let inputs = [
        "jit/src",
        "jit/build.rs",
        "emu-core/src",
        "emu-core/build.rs",
        "isa-amdgpu/src",
        "isa-amdgpu/data",
        "isa-amdgpu/build.rs",
        "Cargo.lock",
    ];
    // FNV-1a over each file's workspace path and contents
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    for input in inputs {
        let path = root.join(input);
        println!("cargo:rerun-if-changed={}", path.display());
        let mut list = Vec::new();
        if path.is_dir() {
            files(&path, &mut list);
        } else if path.exists() {
            list.push(path);
        }
        for f in list {
            eat(f.strip_prefix(&root).unwrap_or(&f).to_string_lossy().as_bytes());
            eat(&std::fs::read(&f).unwrap_or_default());
        }
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("-V")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    eat(&version);
    eat(std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default().as_bytes());
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rustc-env=WAVEJIT_CODEGEN_HASH={h:016x}");
}
