//! `wavejit disasm` against `llvm-objdump-19 -d`: every instruction line of every function must be identical
//! (text, padding, address, encoding, branch-target comment). Corpora: the bundled test kernels (gfx90a and
//! gfx942), the gfx90a code objects of librocrand1 and a sample of librocsparse0 (installed by scripts/setup.sh).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use isa_amdgpu::codeobj::{self, CodeObject};

fn wavejit() -> &'static str {
    env!("CARGO_BIN_EXE_wavejit")
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wavejit-objdump-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Instruction lines per function: objdump's output under each function's header, the padding after the
/// function up to the next symbol included; code before the code section's first symbol under the section's
/// name (`<.text>:`).
fn objdump_lines(co: &CodeObject, path: &Path) -> BTreeMap<String, Vec<String>> {
    let out = Command::new("llvm-objdump-19")
        .args(["-d", &format!("--mcpu={}", co.target.processor)])
        .arg(path)
        .output()
        .expect("llvm-objdump-19 runs (scripts/setup.sh installs llvm-19)");
    assert!(out.status.success(), "llvm-objdump-19 failed on {}", path.display());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut by_fn: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        // `0000000000002500 <stream_read>:` starts a symbol's listing
        if let Some(name) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")).map(|(_, n)| n) {
            let section = co.text.map(|t| co.sections[t.section_index].name.as_str());
            current = (co.functions.iter().any(|f| f.name == name) || section == Some(name)).then(|| name.to_string());
            continue;
        }
        let Some(name) = &current else { continue };
        // instructions, and `...` for a skipped run of zero bytes
        if line.starts_with('\t') && (line.contains("// ") || line.trim() == "...") {
            by_fn.entry(name.clone()).or_default().push(line.to_string());
        }
    }
    by_fn
}

/// Our listing of the same file, per function.
fn wavejit_lines(path: &Path, target: &str) -> BTreeMap<String, Vec<String>> {
    let out = Command::new(wavejit())
        .args(["disasm"])
        .arg(path)
        .args(["--target", target])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wavejit disasm failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut by_fn: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur = String::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_suffix(':').filter(|_| !line.starts_with('\t')) {
            cur = name.to_string();
        } else if line.starts_with('\t') {
            by_fn.entry(cur.clone()).or_default().push(line.to_string());
        }
    }
    by_fn
}

#[derive(Default)]
struct Tally {
    objects: usize,
    functions: usize,
    instructions: usize,
    mismatches: Vec<String>,
    mnemonics: std::collections::BTreeSet<String>,
}

fn compare(tally: &mut Tally, co: &CodeObject, co_path: &Path, listing: &BTreeMap<String, Vec<String>>) {
    let want = objdump_lines(co, co_path);
    tally.objects += 1;
    for (name, lines) in &want {
        tally.functions += 1;
        let ours = listing.get(name).cloned().unwrap_or_default();
        for (i, w) in lines.iter().enumerate() {
            tally.instructions += 1;
            if let Some(m) = w.split_whitespace().next() {
                tally.mnemonics.insert(m.to_string());
            }
            let o = ours.get(i).map(String::as_str).unwrap_or("<missing>");
            if o != w && tally.mismatches.len() < 50 {
                tally
                    .mismatches
                    .push(format!("{name}:\n  objdump `{w}`\n  wavejit `{o}`"));
            }
        }
        if ours.len() != lines.len() && tally.mismatches.len() < 50 {
            tally.mismatches.push(format!(
                "{name}: {} lines from objdump, {} from wavejit",
                lines.len(),
                ours.len()
            ));
        }
    }
}

fn report(what: &str, t: &Tally) {
    eprintln!(
        "{what}: {} code objects, {} functions, {} instructions, {} distinct mnemonics, {} mismatches",
        t.objects,
        t.functions,
        t.instructions,
        t.mnemonics.len(),
        t.mismatches.len()
    );
    for m in &t.mismatches {
        eprintln!("{m}");
    }
}

#[test]
fn bundled_test_kernels_disassemble_exactly_like_llvm_objdump() {
    let dir = tmpdir("kernels");
    let mut tally = Tally::default();
    for (name, bytes) in test_kernels::ALL {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let co = CodeObject::parse(bytes, name).unwrap();
        let ours = wavejit_lines(&path, &co.target.processor);
        compare(&mut tally, &co, &path, &ours);
    }
    report("test kernels", &tally);
    assert_eq!(tally.objects, test_kernels::ALL.len());
    assert!(
        tally.instructions > 500,
        "suspiciously few instructions: {}",
        tally.instructions
    );
    assert!(
        tally.mismatches.is_empty(),
        "wavejit disasm differs from llvm-objdump-19"
    );
}

/// Code before the first symbol of `.text` (objdump's `<.text>:`), padding after the last function up to the
/// section's end, and runs of zero bytes in both, in a relocatable object (llvm-mc-19) and a linked one
/// (ld.lld-19), on both targets.
#[test]
fn code_around_the_functions_lists_like_llvm_objdump() {
    let src = "\
.text
s_nop 0
s_nop 0
.long 0, 0, 0
s_nop 0
.globl f
.p2align 8
.type f,@function
f:
  s_mov_b32 s0, 1
  s_endpgm
.Lf_end:
.size f, .Lf_end-f
s_nop 0
.long 0, 0, 0, 0
s_nop 1
s_nop 0
";
    let dir = tmpdir("around");
    let s = dir.join("around.s");
    std::fs::write(&s, src).unwrap();
    for target in ["gfx90a", "gfx942"] {
        let obj = dir.join(format!("around-{target}.o"));
        let so = dir.join(format!("around-{target}.so"));
        let st = Command::new("llvm-mc-19")
            .args([
                "-triple",
                "amdgcn-amd-amdhsa",
                &format!("-mcpu={target}"),
                "-filetype=obj",
            ])
            .arg(&s)
            .arg("-o")
            .arg(&obj)
            .status()
            .expect("llvm-mc-19 runs (scripts/setup.sh installs llvm-19)");
        assert!(st.success(), "llvm-mc-19 failed");
        let st = Command::new("ld.lld-19")
            .arg("-shared")
            .arg(&obj)
            .arg("-o")
            .arg(&so)
            .status()
            .expect("ld.lld-19 runs (scripts/setup.sh installs lld-19)");
        assert!(st.success(), "ld.lld-19 failed");
        for path in [&obj, &so] {
            let bytes = std::fs::read(path).unwrap();
            let co = CodeObject::parse(&bytes, "around").unwrap();
            let want = objdump_lines(&co, path);
            assert_eq!(
                want.get(".text").map(Vec::len),
                Some(62), // two s_nop, `...`, then s_nop from 0x14 to the alignment at 0x100
                "{}: objdump lists the code before `f` under <.text>",
                path.display()
            );
            assert_eq!(
                want.get("f").map(Vec::len),
                Some(6),
                "{}: f and its padding",
                path.display()
            );
            let ours = wavejit_lines(path, target);
            assert_eq!(
                ours,
                want,
                "{}: wavejit disasm differs from llvm-objdump-19",
                path.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Splits the gfx90a code objects out of a library and compares each against objdump. `keep(i)` samples.
fn library(path: &str, package: &str, keep: impl Fn(usize) -> bool) -> Tally {
    let lib = Path::new(path);
    assert!(
        lib.exists(),
        "{path} is missing: this test needs the Debian package {package} (scripts/setup.sh installs it)"
    );
    let dir = tmpdir(lib.file_name().unwrap().to_str().unwrap());
    let objects = codeobj::open_any(lib, Some("gfx90a")).unwrap();
    assert!(!objects.is_empty(), "{path}: no gfx90a code objects");
    let mut tally = Tally::default();
    for (i, l) in objects.iter().enumerate().filter(|(i, _)| keep(*i)) {
        let p = dir.join(format!("co{i}.co"));
        std::fs::write(&p, l.code_object.bytes()).unwrap();
        let ours = wavejit_lines(&p, "gfx90a");
        compare(&mut tally, &l.code_object, &p, &ours);
    }
    let _ = std::fs::remove_dir_all(&dir);
    tally
}

#[test]
fn librocrand_gfx90a_kernels_disassemble_exactly_like_llvm_objdump() {
    let t = library("/usr/lib/x86_64-linux-gnu/librocrand.so.1", "librocrand1", |_| true);
    report("librocrand gfx90a", &t);
    assert!(t.instructions > 10_000);
    assert!(
        t.mismatches.is_empty(),
        "wavejit disasm differs from llvm-objdump-19 on librocrand"
    );
}

#[test]
fn librocsparse_gfx90a_sample_disassembles_exactly_like_llvm_objdump() {
    let every: usize = std::env::var("WAVEJIT_ROCSPARSE_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let t = library("/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0", |i| {
        i % every == 0
    });
    report(&format!("librocsparse gfx90a (every {every}th code object)"), &t);
    assert!(t.instructions > 10_000);
    assert!(
        t.mismatches.is_empty(),
        "wavejit disasm differs from llvm-objdump-19 on librocsparse"
    );
}
