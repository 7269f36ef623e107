//! The release tarball (`scripts/package.sh`): unpacked into a directory of its own, its `bin/wavejit` runs a HIP
//! program on both routes with only the system's directories on PATH and no variable pointing into the checkout,
//! and names its version and commit. So does the release `wavejit` alone in a directory, as `cargo install` puts
//! it: it carries the runtime shim and the driver.

use std::path::Path;
use std::process::Command;

mod support;
use support::{text, wavejit, workspace};

#[test]
fn the_release_tarball_unpacked_anywhere_and_the_binary_alone_run_a_hip_program_on_both_routes() {
    let release = wavejit(); // the release builds the tarball packs
    let scratch = std::env::temp_dir().join(format!("wavejit-package-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();

    let o = Command::new("bash")
        .arg(workspace().join("scripts/package.sh"))
        .args(["--no-build", "--out"])
        .arg(&scratch)
        .current_dir(workspace())
        .output()
        .expect("running scripts/package.sh");
    assert!(o.status.success(), "package.sh: {}{}", text(&o.stdout), text(&o.stderr));
    let tarball = text(&o.stdout)
        .lines()
        .last()
        .expect("package.sh prints the tarball's path")
        .to_string();
    let name = Path::new(&tarball).file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(name, format!("wavejit-{version}-x86_64-linux-gnu.tar.gz"));

    let unpacked = scratch.join("somewhere else");
    std::fs::create_dir_all(&unpacked).unwrap();
    let o = Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(&unpacked)
        .output()
        .unwrap();
    assert!(o.status.success(), "tar: {}", text(&o.stderr));
    let root = unpacked.join(format!("wavejit-{version}-x86_64-linux-gnu"));
    for f in [
        "bin/wavejit",
        "lib/wavejit/libhsa_runtime64.so",
        "lib/wavejit/libwavejit_driver.so",
        "share/doc/wavejit/README.md",
    ] {
        assert!(root.join(f).is_file(), "{f} is not in the tarball");
    }
    let bin = root.join("bin/wavejit");

    // the commit the checkout's HEAD names
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(head.status.success(), "git rev-parse: {}", text(&head.stderr));
    let head = text(&head.stdout).trim().to_string();
    let o = Command::new(&bin).arg("--version").env_clear().output().unwrap();
    let said = text(&o.stdout);
    assert!(
        said.starts_with(&format!("wavejit {version} (commit {head}")),
        "--version says {said:?}, HEAD is {head}"
    );

    // a HIP program in a directory of its own, run from there with a minimal environment
    let program = scratch.join("vadd");
    let o = Command::new("hipcc")
        .arg("--offload-arch=gfx90a")
        .arg(workspace().join("runtime-shim/tests/hip/vadd.hip"))
        .arg("-o")
        .arg(&program)
        .output()
        .expect("running hipcc (scripts/setup.sh installs it)");
    assert!(o.status.success(), "hipcc: {}", text(&o.stderr));
    // the binary alone, where `cargo install` puts it: nothing beside it, no lib/wavejit above it
    let alone = scratch.join("cargo-home/bin/wavejit");
    std::fs::create_dir_all(alone.parent().unwrap()).unwrap();
    std::fs::copy(release, &alone).unwrap();
    for bin in [&bin, &alone] {
        for driver in ["hsa", "kfd"] {
            let o = Command::new(bin)
                .args(["exec", "--driver", driver, "--", "./vadd"])
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", &scratch)
                .current_dir(&scratch)
                .output()
                .unwrap();
            let out = text(&o.stdout);
            assert!(
                o.status.success() && out.contains("gfx90a") && out.contains(": 0 of "),
                "{} --driver {driver}: {out}{}",
                bin.display(),
                text(&o.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&scratch).unwrap();
}
