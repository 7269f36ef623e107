//! Known-answer tests in plain text, run on both engines and both targets, like Cranelift's filetests: each
//! line of `tests/known/*.txt` is an instruction in LLVM assembly, the registers it starts with and the
//! registers it must leave:
//!
//! ```text
//! v_cmp_class_f32 vcc, v1, v2 ; v1=0x80000003 v2=0x10 => vcc=0xffffffffffffffff
//! ```
//!
//! The expected values come from the AMD ISA guides and IEEE 754, not from our own output. The instruction is
//! assembled by llvm-mc-19 (a test dependency, installed by scripts/setup.sh); a case runs on a wave whose 64
//! lanes all start with the given values (EXEC all ones unless set), once on the interpreter and once as a
//! JIT block, and both must leave every named register as expected. Lines `target gfx90a` (or `gfx942`, or
//! both) choose the targets of the cases after them; `#` starts a comment.
//!
//! Register syntax: `sN`, `vN` (every lane), `s[N:M]`/`v[N:M]` (a 64-bit value over a pair), `vcc`, `exec`,
//! `scc`, `m0`. Values: hex, decimal (negative allowed), or an f32 written with a decimal point and `f`
//! (`1.5f`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::execute;
use emu_core::wave::WaveState;
use isa_amdgpu::{decode, Inst, Target};

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reg {
    S(u32),
    V(u32),
    SPair(u32),
    VPair(u32),
    Vcc,
    Exec,
    Scc,
    M0,
}

#[derive(Debug)]
struct Case {
    file: String,
    line: usize,
    asm: String,
    targets: Vec<Target>,
    inputs: Vec<(Reg, u64)>,
    outputs: Vec<(Reg, u64)>,
}

fn parse_reg(t: &str) -> Result<Reg, String> {
    let pair = |s: &str| -> Result<u32, String> {
        let (a, b) = s.trim_end_matches(']').split_once(':').ok_or(format!("bad pair {t}"))?;
        let (a, b): (u32, u32) = (a.parse().map_err(|_| format!("bad {t}"))?, b.parse().map_err(|_| format!("bad {t}"))?);
        if b != a + 1 {
            return Err(format!("{t}: only register pairs are supported"));
        }
        Ok(a)
    };
    Ok(match t {
        "vcc" => Reg::Vcc,
        "exec" => Reg::Exec,
        "scc" => Reg::Scc,
        "m0" => Reg::M0,
        _ if t.starts_with("s[") => Reg::SPair(pair(&t[2..])?),
        _ if t.starts_with("v[") => Reg::VPair(pair(&t[2..])?),
        _ if t.starts_with('s') => Reg::S(t[1..].parse().map_err(|_| format!("bad register {t}"))?),
        _ if t.starts_with('v') => Reg::V(t[1..].parse().map_err(|_| format!("bad register {t}"))?),
        _ => return Err(format!("unknown register {t}")),
    })
}

fn parse_value(t: &str) -> Result<u64, String> {
    if let Some(f) = t.strip_suffix('f').filter(|f| f.contains('.')) {
        return f.parse::<f32>().map(|x| x.to_bits() as u64).map_err(|_| format!("bad float {t}"));
    }
    if let Some(h) = t.strip_prefix("0x") {
        return u64::from_str_radix(&h.replace('_', ""), 16).map_err(|_| format!("bad hex {t}"));
    }
    if let Some(n) = t.strip_prefix('-') {
        return n.parse::<u64>().map(|v| v.wrapping_neg()).map_err(|_| format!("bad number {t}"));
    }
    t.parse::<u64>().map_err(|_| format!("bad number {t}"))
}

fn parse_assignments(s: &str) -> Result<Vec<(Reg, u64)>, String> {
    s.split_whitespace()
        .map(|a| {
            let (r, v) = a.split_once('=').ok_or(format!("expected REG=VALUE, got {a}"))?;
            Ok((parse_reg(r)?, parse_value(v)?))
        })
        .collect()
}

fn parse_file(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut targets = Target::ALL.to_vec();
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(t) = line.strip_prefix("target ") {
            targets = t.split_whitespace().map(|n| Target::from_name(n).unwrap_or_else(|| panic!("{file}:{}: unknown target {n}", i + 1))).collect();
            continue;
        }
        let parsed = (|| -> Result<Case, String> {
            let (asm, rest) = line.split_once(';').ok_or("expected `ASM ; INPUTS => OUTPUTS`")?;
            let (ins, outs) = rest.split_once("=>").ok_or("expected `=>`")?;
            Ok(Case {
                file: file.clone(),
                line: i + 1,
                asm: asm.trim().to_string(),
                targets: targets.clone(),
                inputs: parse_assignments(ins)?,
                outputs: parse_assignments(outs)?,
            })
        })();
        cases.push(parsed.unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1)));
    }
    cases
}

/// Assembles every line of `asm` for `target` with llvm-mc-19, one encoding per line.
fn assemble(asm: &[&str], target: Target) -> Vec<Vec<u8>> {
    let out = Command::new("llvm-mc-19")
        .args(["-triple", "amdgcn-amd-amdhsa", &format!("-mcpu={}", target.name()), "-show-encoding"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(asm.join("\n").as_bytes())?;
            c.wait_with_output()
        })
        .unwrap_or_else(|e| panic!("llvm-mc-19 is needed for the known-answer tests (scripts/setup.sh installs llvm-19): {e}"));
    assert!(out.status.success(), "llvm-mc-19 rejected the cases for {}:\n{}", target.name(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let enc: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|l| l.split_once("encoding: [").map(|(_, e)| e.trim_end_matches(']').split(',').map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).expect("a byte")).collect()))
        .collect();
    assert_eq!(enc.len(), asm.len(), "llvm-mc-19 gave {} encodings for {} lines", enc.len(), asm.len());
    enc
}

fn set(w: &mut WaveState, r: Reg, v: u64) {
    match r {
        Reg::S(n) => w.sgprs[n as usize] = v as u32,
        Reg::SPair(n) => {
            w.sgprs[n as usize] = v as u32;
            w.sgprs[n as usize + 1] = (v >> 32) as u32;
        }
        Reg::V(n) => w.vgprs[n as usize] = [v as u32; 64],
        Reg::VPair(n) => {
            w.vgprs[n as usize] = [v as u32; 64];
            w.vgprs[n as usize + 1] = [(v >> 32) as u32; 64];
        }
        Reg::Vcc => set(w, Reg::SPair(106), v),
        Reg::Exec => w.set_exec(v),
        Reg::Scc => w.scc = v != 0,
        Reg::M0 => w.sgprs[124] = v as u32,
    }
}

/// The value of `r`: vector registers must hold the same value in every lane the case enabled.
fn get(w: &WaveState, r: Reg, lanes: u64) -> Result<u64, String> {
    let lane_value = |n: u32| -> Result<u32, String> {
        let regs = &w.vgprs[n as usize];
        let first = (0..64).find(|l| lanes >> l & 1 == 1).unwrap_or(0);
        match (0..64).find(|&l| lanes >> l & 1 == 1 && regs[l] != regs[first]) {
            Some(l) => Err(format!("v{n} differs between lanes {first} and {l}")),
            None => Ok(regs[first]),
        }
    };
    Ok(match r {
        Reg::S(n) => w.sgprs[n as usize] as u64,
        Reg::SPair(n) => (w.sgprs[n as usize + 1] as u64) << 32 | w.sgprs[n as usize] as u64,
        Reg::V(n) => lane_value(n)? as u64,
        Reg::VPair(n) => (lane_value(n + 1)? as u64) << 32 | lane_value(n)? as u64,
        Reg::Vcc => get(w, Reg::SPair(106), lanes)?,
        Reg::Exec => w.exec(),
        Reg::Scc => w.scc as u64,
        Reg::M0 => w.sgprs[124] as u64,
    })
}

fn fresh(c: &Case) -> WaveState {
    let mut w = WaveState::new(0x1000, 32, 0);
    w.set_exec(u64::MAX);
    for &(r, v) in &c.inputs {
        set(&mut w, r, v);
    }
    w
}

fn check(c: &Case, t: Target, engine: &str, w: &WaveState, lanes: u64) -> Result<(), String> {
    for &(r, want) in &c.outputs {
        let got = get(w, r, lanes).map_err(|e| format!("{}:{} [{}] {engine}: `{}`: {e}", c.file, c.line, t.name(), c.asm))?;
        if got != want {
            return Err(format!("{}:{} [{}] {engine}: `{}`: {r:?} = {got:#x}, expected {want:#x}", c.file, c.line, t.name(), c.asm));
        }
    }
    Ok(())
}

fn run_case(c: &Case, t: Target, inst: &Inst) -> Result<(), String> {
    let mem = DeviceMemory::new(1 << 20).expect("device memory");
    let lanes = fresh(c).exec();
    // the interpreter
    let mut a = fresh(c);
    let mut lds = [0u8; 0];
    let mut interp = Interp { wave: &mut a, mem: &mem, lds: &mut lds, mnemonic: "known", accesses: None };
    execute(&mut interp, inst, 0x1000).map_err(|e| format!("{}:{} [{}] interpreter: `{}`: {e}", c.file, c.line, t.name(), c.asm))?;
    check(c, t, "interpreter", &a, lanes)?;
    // the JIT, as a one-instruction block
    let mut j = fresh(c);
    let mut lds = [0u8; 0];
    let exit = jit().run_block_once(vec![*inst], 0x1000, &mut j, &mem, &mut lds).map_err(|e| format!("{}:{} [{}] JIT: `{}`: {e}", c.file, c.line, t.name(), c.asm))?;
    if !matches!(exit, jit::BlockExit::Continue { .. }) {
        return Err(format!("{}:{} [{}] JIT: `{}`: {exit:?}", c.file, c.line, t.name(), c.asm));
    }
    check(c, t, "JIT", &j, lanes)
}

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/known");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir).expect("tests/known").map(|e| e.expect("entry").path()).filter(|p| p.extension().is_some_and(|e| e == "txt")).collect();
    v.sort();
    v
}

#[test]
fn every_known_answer_holds_on_both_engines_and_targets() {
    let mut failures = Vec::new();
    let mut count = 0;
    for path in files() {
        let cases = parse_file(&path);
        for t in Target::ALL {
            let mine: Vec<&Case> = cases.iter().filter(|c| c.targets.contains(&t)).collect();
            if mine.is_empty() {
                continue;
            }
            let encodings = assemble(&mine.iter().map(|c| c.asm.as_str()).collect::<Vec<_>>(), t);
            for (c, bytes) in mine.iter().zip(encodings) {
                let inst = decode(&bytes, 0x1000, t).unwrap_or_else(|e| panic!("{}:{}: {e}", c.file, c.line));
                count += 1;
                if let Err(e) = run_case(c, t, &inst) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(count > 0, "no known-answer cases found");
    assert!(failures.is_empty(), "{} of {count} known-answer cases failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{count} known-answer cases passed on both engines");
}
