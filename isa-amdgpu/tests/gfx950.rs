//! gfx950 code objects compiled by clang-22 at test time, read by the code-object reader and listed by the
//! disassembler: every instruction line of every function must be identical to what `llvm-objdump-22 -d`
//! prints (text, padding, address, encoding, branch-target comment). The kernels are test-kernels' OpenCL
//! sources that need no device libraries, and a few kernels written here around gfx950's own instructions
//! (the new MFMAs, the scaled f8f6f4 MFMA, v_prng_b32, v_permlane16/32_swap, v_cvt_scalef32_*, bf16
//! conversions, loads of three and four dwords to LDS). clang-22 and llvm-objdump-22 are test dependencies
//! (scripts/setup.sh installs clang-22 llvm-22 lld-22); a missing one fails the test.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{require_tools, run, Scratch};
use isa_amdgpu::codeobj::CodeObject;
use isa_amdgpu::{listing, Target};

/// Kernels around gfx950's own instructions, through clang's builtins.
const GFX950_CL: &str = r#"
typedef half v8h __attribute__((ext_vector_type(8)));
typedef __bf16 v8bf __attribute__((ext_vector_type(8)));
typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef float v2f __attribute__((ext_vector_type(2)));

__kernel void mfma_f16(__global v4f *c, __global const v8h *a, __global const v8h *b) {
  int i = __builtin_amdgcn_workitem_id_x();
  c[i] = __builtin_amdgcn_mfma_f32_16x16x32_f16(a[i], b[i], c[i], 0, 0, 0);
}

__kernel void mfma_bf16(__global v16f *c, __global const v8bf *a, __global const v8bf *b) {
  int i = __builtin_amdgcn_workitem_id_x();
  c[i] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(a[i], b[i], c[i], 0, 0, 0);
}

__kernel void mfma_i8(__global v4i *c, __global const v4i *a, __global const v4i *b) {
  int i = __builtin_amdgcn_workitem_id_x();
  c[i] = __builtin_amdgcn_mfma_i32_16x16x64_i8(a[i], b[i], c[i], 0, 0, 0);
}

__kernel void mfma_f8f6f4(__global v4f *c, __global const v8i *a, __global const v8i *b) {
  int i = __builtin_amdgcn_workitem_id_x();
  // scales of zero: the unscaled v_mfma_f32_16x16x128_f8f6f4
  c[i] = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a[i], b[i], c[i], 0, 0, 0, 0, 0, 0);
}

__kernel void mfma_scaled(__global v4f *c, __global const v8i *a, __global const v8i *b, __global const int *s) {
  int i = __builtin_amdgcn_workitem_id_x();
  c[i] = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a[i], b[i], c[i], 0, 0, 0, s[i], 1, s[i + 64]);
}

__kernel void lanes(__global unsigned *x, __global unsigned *y) {
  int i = __builtin_amdgcn_workitem_id_x();
  unsigned r = __builtin_amdgcn_prng_b32(x[i]);
  __attribute__((ext_vector_type(2))) unsigned p = __builtin_amdgcn_permlane16_swap(r, y[i], false, false);
  __attribute__((ext_vector_type(2))) unsigned q = __builtin_amdgcn_permlane32_swap(p.x, p.y, false, true);
  x[i] = q.x;
  y[i] = q.y;
}

__kernel void convert(__global v2f *out, __global const unsigned *in, __global const float *scale) {
  int i = __builtin_amdgcn_workitem_id_x();
  out[i] = __builtin_amdgcn_cvt_scalef32_pk_f32_fp8(in[i], scale[i], false);
}

__kernel void lds_dma(__global int *src, __global int *out) {
  __local int buf[1024];
  int i = __builtin_amdgcn_workitem_id_x();
  __builtin_amdgcn_global_load_lds(src + 4 * i, buf, 16, 0, 0);
  __builtin_amdgcn_global_load_lds(src + 3 * i, buf + 512, 12, 0, 0);
  __builtin_amdgcn_s_waitcnt(0);
  __builtin_amdgcn_s_barrier();
  out[i] = buf[1023 - i] + buf[i];
}
"#;

/// Instruction lines per function of `llvm-objdump-22 -d`: the lines under each function's header (the padding
/// after it up to the next symbol included).
fn objdump_lines(co: &CodeObject, path: &Path) -> BTreeMap<String, Vec<String>> {
    let text = run(Command::new("llvm-objdump-22").args(["-d", "--mcpu=gfx950"]).arg(path));
    let mut by_fn: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")).map(|(_, n)| n) {
            current = co.functions.iter().any(|f| f.name == name).then(|| name.to_string());
            continue;
        }
        let Some(name) = &current else { continue };
        if line.starts_with('\t') && (line.contains("// ") || line.trim() == "...") {
            by_fn.entry(name.clone()).or_default().push(line.to_string());
        }
    }
    by_fn
}

/// Compiles `source` for gfx950 into `out`.
fn compile(source: &Path, out: &Path) {
    run(Command::new("clang-22")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx950",
            "-nogpulib",
            "-O3",
        ])
        .arg(source)
        .arg("-o")
        .arg(out));
}

/// Compares the listing of every function of the code object at `path` with llvm-objdump-22's; returns
/// (lines compared, lines differing, first differences).
fn compare(path: &Path) -> (usize, usize, Vec<String>) {
    let bytes = std::fs::read(path).unwrap();
    let co = CodeObject::parse(&bytes, &path.display().to_string()).unwrap();
    assert_eq!(co.target.processor, "gfx950", "{}", path.display());
    assert_eq!(co.target.mach, Some(0x4f));
    let target = Target::from_name(&co.target.processor).expect("gfx950 has a table");
    assert_eq!(target, Target::Gfx950);
    assert!(!co.functions.is_empty(), "{}: no functions", path.display());
    let theirs = objdump_lines(&co, path);
    let (mut compared, mut differ, mut first) = (0, 0, Vec::new());
    for f in &co.functions {
        let ours = listing::function(&co, f, target);
        let want = theirs.get(&f.name).cloned().unwrap_or_default();
        assert_eq!(ours.len(), want.len(), "{}: {}: line count", path.display(), f.name);
        for (o, w) in ours.iter().zip(&want) {
            compared += 1;
            if o != w {
                differ += 1;
                if first.len() < 20 {
                    first.push(format!("{}:\n    llvm    {w}\n    wavejit {o}", f.name));
                }
            }
        }
    }
    (compared, differ, first)
}

#[test]
fn gfx950_kernels_compiled_by_clang_22_list_exactly_like_llvm_objdump_22() {
    require_tools(&["clang-22", "llvm-objdump-22"]);
    let scratch = Scratch::new("gfx950");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../test-kernels/src/kernels");
    let mut sources: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cl"))
        // kernels that link the ROCm device libraries are left out (their 5.2 release predates gfx950)
        .filter(|p| !std::fs::read_to_string(p).unwrap().starts_with("// needs: device-libs"))
        .collect();
    sources.sort();
    let own = scratch.path("gfx950_own.cl");
    std::fs::write(&own, GFX950_CL).unwrap();
    sources.push(own);
    let (mut compared, mut differ, mut failures) = (0, 0, Vec::new());
    for src in &sources {
        let out = scratch.path(&format!("{}.co", src.file_stem().unwrap().to_string_lossy()));
        compile(src, &out);
        let (c, d, f) = compare(&out);
        compared += c;
        differ += d;
        failures.extend(f.into_iter().map(|f| format!("{}: {f}", src.display())));
    }
    eprintln!(
        "gfx950: {} code objects, {compared} listing lines, {} identical to llvm-objdump-22",
        sources.len(),
        compared - differ
    );
    assert!(
        sources.len() > 20 && compared > 1000,
        "{} sources, {compared} lines",
        sources.len()
    );
    assert!(
        differ == 0,
        "{differ} of {compared} lines differ:\n{}",
        failures.join("\n")
    );
}
