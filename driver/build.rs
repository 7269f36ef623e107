//! Compiles the libc entry points the driver interposes (src/hooks.c: C, for the variadic `open` and `ioctl`)
//! and links the shared object with a version script that exports only them.
fn main() {
    cc::Build::new()
        .file("src/hooks.c")
        .warnings(true)
        .compile("wavejit_driver_hooks");
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/exports.map");
    println!("cargo:rerun-if-changed=src/hooks.c");
    println!("cargo:rerun-if-changed=exports.map");
}
