//! Helpers shared by the code-object tests: compiling OpenCL kernels with clang-19 into a scratch directory,
//! running the LLVM tools that serve as oracles, and parsing their text output.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// OpenCL kernels exercising the descriptor fields: system SGPRs/VGPRs, LDS, scratch, calls, attributes.
pub const KERNELS_CL: &str = r#"
__attribute__((noinline)) float helper(float x, float y) { return x * y + 1.0f; }

__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int i = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 256;
  if (i < n) c[i] = a[i] + b[i];
}

__kernel void calls(__global float *x, float s, __local float *tmp) {
  int i = __builtin_amdgcn_workitem_id_x();
  tmp[i] = x[i] * s;
  __builtin_amdgcn_s_barrier();
  x[i] = helper(tmp[255 - i], s);
}

__kernel void lds_static(__global float *x) {
  __local float buf[512];
  int i = __builtin_amdgcn_workitem_id_x();
  buf[i] = x[i];
  __builtin_amdgcn_s_barrier();
  x[i] = buf[511 - i];
}

__kernel void scratch(__global int *out, int n) {
  volatile int a[64];
  int i = __builtin_amdgcn_workitem_id_x();
  for (int j = 0; j < 64; j++) a[j] = j * n + i;
  out[i] = a[(i * 7 + n) & 63];
}

__kernel void loop(__global float *x, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  float acc = 0.0f;
  for (int j = 0; j < n; j++) {
    acc += x[j * 64 + i];
    if (acc > 100.0f) break;
    if (x[j] < 0.0f) acc = -acc;
  }
  x[i] = acc;
}

__attribute__((reqd_work_group_size(16, 4, 2)))
__kernel void ids3d(__global int *restrict out, __global volatile int *v) {
  int x = __builtin_amdgcn_workitem_id_x();
  int y = __builtin_amdgcn_workitem_id_y();
  int z = __builtin_amdgcn_workitem_id_z();
  int g = __builtin_amdgcn_workgroup_id_y() * 3 + __builtin_amdgcn_workgroup_id_z();
  out[x + 16 * y + 64 * z] = g + *v;
}
"#;

/// A kernel using MFMA (AccVGPRs) for gfx908/gfx90a/gfx94x.
pub const MFMA_CL: &str = r#"
typedef float v4f __attribute__((ext_vector_type(4)));
__kernel void mfma(__global v4f *c, __global const float *a, __global const float *b) {
  int i = __builtin_amdgcn_workitem_id_x();
  v4f acc = c[i];
  for (int k = 0; k < 4; k++) acc = __builtin_amdgcn_mfma_f32_4x4x1f32(a[i + k], b[i + k], acc, 0, 0, 0);
  c[i] = acc;
}
"#;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh scratch directory under the system temp dir, removed on drop.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("wavejit-codeobj-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch { dir }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// True if `tool --version` runs.
pub fn have_tool(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Panics, naming the package, unless every tool runs: a missing test dependency fails the test
/// (scripts/setup.sh installs them all).
pub fn require_tools(tools: &[&str]) {
    for t in tools {
        assert!(
            have_tool(t),
            "{t} is not installed: this test needs it (scripts/setup.sh installs clang-19 llvm-19 lld-19 and clang-22 llvm-22 lld-22)"
        );
    }
}

/// Panics unless clang-19, llvm-readelf-19 and llvm-objdump-19 are all present.
pub fn require_llvm() {
    require_tools(&["clang-19", "llvm-readelf-19", "llvm-objdump-19"]);
}

/// Panics, naming the package, unless `path` exists.
pub fn require_file(path: &std::path::Path, package: &str) {
    assert!(
        path.exists(),
        "{} is missing: this test needs the Debian package {package} (scripts/setup.sh installs it)",
        path.display()
    );
}

/// Runs a command, panicking with its stderr if it fails; returns stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a command and returns its stdout even if it fails (LLVM 19's objdump crashes on some real code
/// objects after printing what we need).
pub fn run_lenient(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Arguments selecting the code object version: `-mcode-object-version=N`, or nothing for the default.
fn cov_args(version: Option<u32>) -> Vec<String> {
    version
        .map(|v| vec![format!("-mcode-object-version={v}")])
        .unwrap_or_default()
}

/// Compiles OpenCL `source` for `mcpu` (e.g. `gfx90a:xnack-`) into a linked code object at `out`.
pub fn compile_cl(scratch: &Scratch, source: &str, mcpu: &str, version: Option<u32>, out: &Path) {
    let src = scratch.path(&format!("src-{}.cl", COUNTER.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&src, source).unwrap();
    run(Command::new("clang-19")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-nogpulib",
            "-O3",
        ])
        .arg(format!("-mcpu={mcpu}"))
        .args(cov_args(version))
        .arg("-Wno-unused-command-line-argument")
        .arg(&src)
        .arg("-o")
        .arg(out));
}

/// Like [`compile_cl`] but stops after assembly generation (`-S`), returning the assembly text.
pub fn compile_cl_asm(scratch: &Scratch, source: &str, mcpu: &str, version: Option<u32>) -> String {
    let src = scratch.path(&format!("src-{}.cl", COUNTER.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&src, source).unwrap();
    run(Command::new("clang-19")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-nogpulib",
            "-O3",
            "-S",
        ])
        .arg(format!("-mcpu={mcpu}"))
        .args(cov_args(version))
        .arg(&src)
        .arg("-o")
        .arg("-"))
}

/// `.amdhsa_*` directives per kernel from assembler text (clang -S) or from `llvm-objdump -D` of the
/// descriptors: kernel name → directive name (without `.amdhsa_`) → value.
pub fn amdhsa_directives(text: &str) -> BTreeMap<String, BTreeMap<String, i64>> {
    let mut all = BTreeMap::new();
    let mut current: Option<(String, BTreeMap<String, i64>)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix(".amdhsa_kernel ") {
            current = Some((name.trim().to_string(), BTreeMap::new()));
        } else if t.starts_with(".end_amdhsa_kernel") {
            if let Some((n, m)) = current.take() {
                all.insert(n, m);
            }
        } else if let (Some((_, m)), Some(rest)) = (current.as_mut(), t.strip_prefix(".amdhsa_")) {
            let mut it = rest.split_whitespace();
            if let (Some(k), Some(v)) = (it.next(), it.next()) {
                if let Ok(v) = v.parse::<i64>() {
                    m.insert(k.to_string(), v);
                }
            }
        }
    }
    all
}

/// One symbol line of `llvm-readelf --symbols`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadelfSym {
    pub table: String,
    pub value: u64,
    pub size: u64,
    pub kind: String,
    pub bind: String,
    pub ndx: String,
    pub name: String,
}

/// Parses `llvm-readelf-19 --symbols` (tables `.symtab` and `.dynsym`).
pub fn readelf_symbols(path: &Path) -> Vec<ReadelfSym> {
    let text = run(Command::new("llvm-readelf-19").arg("--symbols").arg("-W").arg(path));
    let mut table = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Symbol table '") {
            table = rest.split('\'').next().unwrap_or("").to_string();
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 8 && f[0].ends_with(':') && f[0].trim_end_matches(':').parse::<u64>().is_ok() {
            out.push(ReadelfSym {
                table: table.clone(),
                value: u64::from_str_radix(f[1], 16).unwrap(),
                size: f[2]
                    .parse()
                    .unwrap_or_else(|_| u64::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap()),
                kind: f[3].to_string(),
                bind: f[4].to_string(),
                ndx: f[6].to_string(),
                name: f[7].to_string(),
            });
        }
    }
    out
}

/// `llvm-readelf -h` fields: (ABI version, e_flags).
pub fn readelf_header(path: &Path) -> (u32, u32) {
    let text = run(Command::new("llvm-readelf-19").arg("-h").arg(path));
    let mut abi = None;
    let mut flags = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("ABI Version:") {
            abi = v.trim().parse().ok();
        }
        if let Some(v) = t.strip_prefix("Flags:") {
            let hex = v.trim().split(',').next().unwrap().trim().trim_start_matches("0x");
            flags = u32::from_str_radix(hex, 16).ok();
        }
    }
    (abi.expect("ABI Version line"), flags.expect("Flags line"))
}

/// What `llvm-readelf --notes` shows of the metadata, parsed from its YAML.
#[derive(Debug, Default, Clone)]
pub struct NotesKernel {
    pub fields: BTreeMap<String, String>,
    pub args: Vec<BTreeMap<String, String>>,
}

/// Parsed `llvm-readelf-19 --notes`: `amdhsa.target`, `amdhsa.version`, kernels with their scalar fields and args.
#[derive(Debug, Default, Clone)]
pub struct Notes {
    pub target: Option<String>,
    pub version: Vec<u64>,
    pub kernels: Vec<NotesKernel>,
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches('\'').trim_matches('"').to_string()
}

pub fn readelf_notes(path: &Path) -> Notes {
    let text = run(Command::new("llvm-readelf-19").arg("--notes").arg(path));
    let mut notes = Notes::default();
    let mut kernel_key = String::new();
    let mut top_key = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let (is_item, body, col) = match trimmed.strip_prefix("- ") {
            Some(b) => (true, b, indent + 2),
            None => (false, trimmed, indent),
        };
        let (key, value) = match body.split_once(':') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (String::new(), body.trim().to_string()),
        };
        if col == 0 && !key.is_empty() {
            top_key = key.clone();
            if key == "amdhsa.target" {
                notes.target = Some(unquote(&value));
            }
            continue;
        }
        if top_key == "amdhsa.version" && is_item {
            notes.version.push(value.parse().unwrap());
            continue;
        }
        if top_key != "amdhsa.kernels" {
            continue;
        }
        if col == 4 && !key.is_empty() {
            if is_item {
                notes.kernels.push(NotesKernel::default());
            }
            kernel_key = key.clone();
            if !value.is_empty() {
                notes.kernels.last_mut().unwrap().fields.insert(key, unquote(&value));
            }
        } else if col == 8 && kernel_key == ".args" && !key.is_empty() {
            let k = notes.kernels.last_mut().unwrap();
            if is_item {
                k.args.push(BTreeMap::new());
            }
            k.args.last_mut().unwrap().insert(key, unquote(&value));
        }
    }
    notes
}

/// Branch instructions in `llvm-objdump -d` output with their target label: (target address, label text).
/// The target is computed from the SOPP encoding: `pc + 4 + simm16 * 4`.
pub fn objdump_branch_labels(path: &Path) -> Vec<(u64, String)> {
    let text = run(Command::new("llvm-objdump-19").arg("-d").arg(path));
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((insn, comment)) = line.split_once("//") else {
            continue;
        };
        let mnemonic = insn.split_whitespace().next().unwrap_or("");
        if !(mnemonic == "s_branch" || mnemonic.starts_with("s_cbranch_")) {
            continue;
        }
        let (Some(open), Some(close)) = (comment.find('<'), comment.rfind('>')) else {
            continue;
        };
        let label = comment[open + 1..close].to_string();
        let mut parts = comment.split_whitespace();
        let addr = parts.next().unwrap().trim_end_matches(':');
        let word = parts.next().unwrap();
        let pc = u64::from_str_radix(addr, 16).unwrap();
        let w = u32::from_str_radix(word, 16).unwrap();
        let simm = i64::from((w & 0xffff) as u16 as i16);
        let target = (pc as i64 + 4 + simm * 4) as u64;
        out.push((target, label));
    }
    out
}

/// Counts non-overlapping occurrences of `needle` in `hay` (naive, independent of the crate's search).
pub fn count_occurrences(hay: &[u8], needle: &[u8]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if &hay[i..i + needle.len()] == needle {
            n += 1;
            i += needle.len();
        } else {
            i += 1;
        }
    }
    n
}
