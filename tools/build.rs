//! Compiles the small LD_PRELOAD helper `wavejit exec` writes next to the runtime shim (see
//! src/exec/kfd_preload.c) with the system C compiler; the binary embeds it. Also names the commit the binary is
//! built from for `wavejit --version`: `WAVEJIT_COMMIT` when set (a build from a source tarball), else git's.
//! A release build also embeds the runtime shim and the emulated driver ([`embedded_libraries`]).
use std::path::Path;
use std::process::Command;

fn main() {
    commit();
    embedded_libraries();
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

/// Sets `WAVEJIT_COMMIT` for the crate: the environment's, else git's abbreviated HEAD commit, else `unknown` (no
/// git, no checkout). Changes in the work tree after that commit are not marked.
fn commit() {
    println!("cargo:rerun-if-env-changed=WAVEJIT_COMMIT");
    let commit = std::env::var("WAVEJIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| {
            let git = |args: &[&str]| {
                Command::new("git")
                    .args(args)
                    .output()
                    .ok()
                    .filter(|o| o.status.success())
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            };
            // rebuilt when HEAD moves: a checkout changes HEAD, a commit the branch's ref (a loose file, or a line
            // of packed-refs); only files that exist, since cargo reruns a script watching a missing file every time
            let branch = git(&["symbolic-ref", "-q", "HEAD"]);
            for name in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
                if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", name]) {
                    if std::path::Path::new(&path).exists() {
                        println!("cargo:rerun-if-changed={path}");
                    }
                }
            }
            match git(&["rev-parse", "--short=12", "HEAD"]) {
                Some(c) if !c.is_empty() => c,
                _ => "unknown".to_string(),
            }
        });
    println!("cargo:rustc-env=WAVEJIT_COMMIT={commit}");
}

/// In a release build, the runtime shim's and the emulated driver's shared libraries, which cargo builds before
/// this crate (they are its dependencies) into the profile's `deps` directory: the binary embeds them
/// (`cfg(wavejit_embedded)`, paths in `WAVEJIT_EMBEDDED_SHIM` and `WAVEJIT_EMBEDDED_DRIVER`), so that a `wavejit`
/// with nothing beside it — `cargo install --path tools` installs the command alone — still runs `exec`. Other
/// profiles find the libraries beside the binary (their test binaries would otherwise each carry ~100 MB).
fn embedded_libraries() {
    println!("cargo:rustc-check-cfg=cfg(wavejit_embedded)");
    println!("cargo:rerun-if-env-changed=PROFILE");
    if std::env::var("PROFILE").as_deref() != Ok("release") {
        return;
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    // OUT_DIR is <target>/[<triple>/]<profile>/build/<package>-<hash>/out
    let deps = Path::new(&out)
        .ancestors()
        .nth(3)
        .expect("OUT_DIR is inside the profile's directory")
        .join("deps");
    println!("cargo:rustc-cfg=wavejit_embedded");
    for (var, file) in [
        ("WAVEJIT_EMBEDDED_SHIM", "libhsa_runtime64.so"),
        ("WAVEJIT_EMBEDDED_DRIVER", "libwavejit_driver.so"),
    ] {
        println!("cargo:rustc-env={var}={}", deps.join(file).display());
    }
}
