//! The disassembler against LLVM on forms LLVM's own MC tests contain and random encodings rarely hit
//! (`tests/data/disasm-forms-*.s`): each line is assembled by the target's llvm-mc (llvm-mc-19 for gfx90a and
//! gfx942, llvm-mc-22 for gfx950), the bytes are disassembled again by it (the printer llvm-objdump uses), and
//! wavejit's text for the same bytes must be identical. Fields with named forms are swept whole: every 16-bit
//! offset of ds_swizzle_b32, every hwreg of s_getreg_b32 and every message of s_sendmsg, on every target, in
//! one llvm-mc run each. llvm-mc-19 and llvm-mc-22 are test dependencies (scripts/setup.sh installs llvm-19
//! and llvm-22); a missing one fails the test.

use std::io::Write;
use std::process::{Command, Stdio};

use isa_amdgpu::{decode, disasm, Target};

/// Runs the llvm-mc that is `target`'s oracle (llvm-mc-19, or llvm-mc-22 for gfx950) on `input`.
fn llvm_mc(target: Target, args: &[&str], input: &str) -> String {
    let tool = format!("llvm-mc-{}", target.llvm_version());
    let mut child = Command::new(&tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{tool} is needed (scripts/setup.sh installs llvm-{}): {e}",
                target.llvm_version()
            )
        });
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{tool} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn check(target: Target, file: &str) -> usize {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<&str> = src
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    let mcpu = format!("-mcpu={}", target.name());
    let triple = ["-triple", "amdgcn-amd-amdhsa", mcpu.as_str()];
    let asm = llvm_mc(target, &[&triple[..], &["-show-encoding"]].concat(), &lines.join("\n"));
    let encodings: Vec<Vec<u8>> = asm
        .lines()
        .filter_map(|l| {
            l.split_once("encoding: [").map(|(_, e)| {
                e.trim_end_matches(']')
                    .split(',')
                    .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
                    .collect()
            })
        })
        .collect();
    assert_eq!(encodings.len(), lines.len(), "{file}: one encoding per line");
    let mut failures = Vec::new();
    for (line, bytes) in lines.iter().zip(&encodings) {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:#04x}")).collect();
        let theirs = llvm_mc(target, &[&triple[..], &["--disassemble"]].concat(), &hex.join(" "));
        let theirs = theirs
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('.'))
            .unwrap_or("")
            .to_string();
        let ours = decode(bytes, 0, target)
            .map(|i| disasm::text(&i))
            .unwrap_or_else(|e| format!("<{e}>"));
        if ours != theirs {
            failures.push(format!("{line}\n    llvm    `{theirs}`\n    wavejit `{ours}`"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} forms differ from LLVM on {}:\n{}",
        failures.len(),
        lines.len(),
        target.name(),
        failures.join("\n")
    );
    lines.len()
}

#[test]
fn gfx90a_forms_disassemble_like_llvm() {
    assert!(check(Target::Gfx90a, "disasm-forms-gfx90a.s") > 40);
}

#[test]
fn gfx942_forms_disassemble_like_llvm() {
    assert!(check(Target::Gfx942, "disasm-forms-gfx942.s") > 20);
}

#[test]
fn gfx950_forms_disassemble_like_llvm_22() {
    assert!(check(Target::Gfx950, "disasm-forms-gfx950.s") > 100);
}

/// Every value 0..=0xffff of the 16-bit field at byte `at` of `template`, disassembled by LLVM and by wavejit.
fn sweep(target: Target, template: &[u8], at: usize) -> usize {
    let mcpu = format!("-mcpu={}", target.name());
    let words: Vec<Vec<u8>> = (0..=0xffffu32)
        .map(|v| {
            let mut w = template.to_vec();
            w[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes());
            w
        })
        .collect();
    let input: String = words
        .iter()
        .map(|w| w.iter().map(|b| format!("{b:#04x} ")).collect::<String>() + "\n")
        .collect();
    let out = llvm_mc(
        target,
        &["-triple", "amdgcn-amd-amdhsa", mcpu.as_str(), "--disassemble"],
        &input,
    );
    let theirs: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('.'))
        .collect();
    assert_eq!(theirs.len(), words.len(), "one line per encoding from llvm-mc");
    let mut failures = Vec::new();
    for (w, t) in words.iter().zip(&theirs) {
        let ours = decode(w, 0, target)
            .map(|i| disasm::text(&i))
            .unwrap_or_else(|e| format!("<{e}>"));
        if ours != *t && failures.len() < 20 {
            failures.push(format!("{:02x?}\n    llvm    `{t}`\n    wavejit `{ours}`", w));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ on {} (first 20):\n{}",
        failures.len(),
        target.name(),
        failures.join("\n")
    );
    words.len()
}

#[test]
fn every_swizzle_offset_disassembles_like_llvm() {
    for t in Target::ALL {
        sweep(t, &[0x34, 0x12, 0x7a, 0xd8, 0x02, 0x00, 0x00, 0x08], 0);
    }
}

#[test]
fn every_hwreg_disassembles_like_llvm() {
    for t in Target::ALL {
        sweep(t, &[0x01, 0xf8, 0x81, 0xb8], 0);
    }
}

#[test]
fn every_sendmsg_disassembles_like_llvm() {
    for t in Target::ALL {
        sweep(t, &[0x01, 0x00, 0x90, 0xbf], 0);
    }
}
