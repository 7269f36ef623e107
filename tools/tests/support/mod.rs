//! What the end-to-end tests share: the workspace and the release `wavejit` with the runtime shim beside it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tools/ is inside the workspace")
        .to_path_buf()
}

/// A program's output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `cmd` to its end; a command that cannot start fails the test, naming it.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Where a compiler writes `out` before it is put in place: a name of this call's own beside it. Tests running at
/// once may build the same program into the same path; each renames its finished file over `out` ([`put`]), so a
/// test never runs a file another compiler is still writing.
fn part(out: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = out.file_name().expect("a file name").to_string_lossy();
    out.with_file_name(format!(".{name}.{}.{n}.part", std::process::id()))
}

/// Puts the finished file `part` at `out`.
fn put(part: &Path, out: &Path) {
    std::fs::rename(part, out).unwrap_or_else(|e| panic!("rename {} to {}: {e}", part.display(), out.display()));
}

/// The runtime shim's test programs (runtime-shim/tests: hip/, hsa/).
pub fn sources() -> PathBuf {
    workspace().join("runtime-shim/tests")
}

/// Compiles runtime-shim/tests/hip/NAME.hip for gfx90a with Debian's hipcc into `dir`.
pub fn hipcc(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let src = sources().join("hip").join(format!("{name}.hip"));
    let tmp = part(&out);
    let o = run(Command::new("hipcc")
        .arg("--offload-arch=gfx90a")
        .arg("-I")
        .arg(sources().join("hip"))
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .args(extra));
    assert!(o.status.success(), "hipcc {}: {}", src.display(), text(&o.stderr));
    put(&tmp, &out);
    out
}

/// runtime-shim/tests/hsa/NAME.cl compiled for gfx90a by clang-19 into the code object `out` (`extra`: more
/// arguments for clang).
pub fn hsa_cl(name: &str, out: &Path, extra: &[&str]) -> PathBuf {
    let tmp = part(out);
    let o = run(Command::new("clang-19")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx90a",
            "-nogpulib",
            "-O2",
        ])
        .args(extra)
        .arg(sources().join(format!("hsa/{name}.cl")))
        .arg("-o")
        .arg(&tmp));
    assert!(o.status.success(), "clang-19 {name}.cl: {}", text(&o.stderr));
    put(&tmp, out);
    out.to_path_buf()
}

/// runtime-shim/tests/hip/module_kernel.hip as a code object file (`hipcc --genco`) in `dir`, for module.hip.
pub fn module_kernel_co(dir: &Path) -> PathBuf {
    let co = dir.join("module_kernel.co");
    let tmp = part(&co);
    let o = run(Command::new("hipcc")
        .args(["--offload-arch=gfx90a", "--genco"])
        .arg(sources().join("hip/module_kernel.hip"))
        .arg("-o")
        .arg(&tmp));
    assert!(o.status.success(), "hipcc --genco: {}", text(&o.stderr));
    put(&tmp, &co);
    co
}

/// The release `wavejit` with the runtime shim and the emulated driver beside it, built on first use.
pub fn wavejit() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--release",
                "--locked",
                "-p",
                "wavejit-tools",
                "-p",
                "runtime-shim",
                "-p",
                "wavejit-driver",
            ])
            .current_dir(workspace())
            // cargo runs the tests with the commit the test build was stamped with; the release build finds its own
            .env_remove("WAVEJIT_COMMIT")
            .status()
            .expect("running cargo");
        assert!(
            status.success(),
            "building wavejit, the runtime shim and the driver failed"
        );
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join("target"));
        let bin = target.join("release").join("wavejit");
        assert!(
            bin.exists()
                && target.join("release/libhsa_runtime64.so").exists()
                && target.join("release/libwavejit_driver.so").exists(),
            "{} or the shim or the driver beside it is missing",
            bin.display()
        );
        bin
    })
}

/// The fields of one CSV line (RFC 4180: a field in double quotes may hold commas and doubled quotes).
pub fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

/// Rows of a CSV file as maps from the header's names.
pub fn csv(path: &Path) -> (Vec<String>, Vec<std::collections::BTreeMap<String, String>>) {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = t.lines();
    let header = csv_fields(lines.next().expect("a header"));
    let rows = lines
        .map(|l| {
            let fields = csv_fields(l);
            assert_eq!(fields.len(), header.len(), "a field per column: {l}");
            header.iter().cloned().zip(fields).collect()
        })
        .collect();
    (header, rows)
}
