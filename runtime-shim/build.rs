//! Links the shared object as ROCm's runtime is linked: soname `libhsa-runtime64.so.1` and a `ROCR_1` version
//! node (the exported functions bind to it with `.symver`, see src/api/mod.rs).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/rocr.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
    println!("cargo:rerun-if-changed=rocr.map");
}
