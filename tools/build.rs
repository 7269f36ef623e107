//! Compiles the small LD_PRELOAD helper `wavejit exec` writes next to the runtime shim (see
//! src/exec/kfd_preload.c) with the system C compiler; the binary embeds it.
use std::process::Command;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let so = format!("{out}/libwavejit-kfd.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args([
            "-shared",
            "-fPIC",
            "-O2",
            "-Wall",
            "-o",
            &so,
            "src/exec/kfd_preload.c",
            "-ldl",
        ])
        .status()
        .unwrap_or_else(|e| panic!("running the C compiler `{cc}` for src/exec/kfd_preload.c: {e} (install gcc)"));
    assert!(status.success(), "`{cc}` failed to compile src/exec/kfd_preload.c");
    println!("cargo:rerun-if-changed=src/exec/kfd_preload.c");
    println!("cargo:rerun-if-env-changed=CC");
}
