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
//! `scc`, `m0`, `pc` (an output only: where the wave goes next; the case's instruction is at 0x1000), `mode` (the
//! MODE hardware register; waves start with clang's default, 0x3f0), `hwid` (HW_ID, an input only); memory: `lds[OFF]` (the 32-bit word at that byte offset of a 64 KiB LDS), `mem[OFF]` (the
//! 32-bit word at that byte offset of a 4 KiB device buffer) and `priv[OFF]` (the word at that byte offset of
//! every lane's 256-byte private segment, FLAT_SCRATCH at its base). Values: hex, decimal (negative allowed), an f32
//! written with a decimal point and `f` (`1.5f`), the buffer's address `@buf+OFF` (its low and high halves
//! `@buflo+OFF`, `@bufhi`; shifted right by N bits `@buf>>N+OFF`, as an image resource holds it), the high
//! dwords of the private and shared (LDS) apertures `@privap`, `@ldsap`, or `{EXPR}`: an OpenCL C expression that LLVM's constant folding evaluates — each
//! one is compiled by clang-19 at test time (`ulong f(void) { return (ulong)(EXPR); }` at -O2 for gfx90a)
//! and must fold to a constant, so the expected value comes from LLVM, not from wavejit.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::execute;
use emu_core::wave::WaveState;
use isa_amdgpu::{decode, Inst, Target};

mod common;
use common::assemble;

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
    Pc,
    /// The wave's MODE register.
    Mode,
    /// The wave's HW_ID register (an input only).
    HwId,
    Lds(u32),
    Mem(u32),
    /// The 32-bit word at a byte offset of every lane's private segment.
    Priv(u32),
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
        let (a, b): (u32, u32) = (
            a.parse().map_err(|_| format!("bad {t}"))?,
            b.parse().map_err(|_| format!("bad {t}"))?,
        );
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
        "pc" => Reg::Pc,
        "mode" => Reg::Mode,
        "hwid" => Reg::HwId,
        _ if t.starts_with("lds[") => Reg::Lds(parse_value(t[4..].trim_end_matches(']'))? as u32),
        _ if t.starts_with("mem[") => Reg::Mem(parse_value(t[4..].trim_end_matches(']'))? as u32),
        _ if t.starts_with("priv[") => Reg::Priv(parse_value(t[5..].trim_end_matches(']'))? as u32),
        _ if t.starts_with("s[") => Reg::SPair(pair(&t[2..])?),
        _ if t.starts_with("v[") => Reg::VPair(pair(&t[2..])?),
        _ if t.starts_with('s') => Reg::S(t[1..].parse().map_err(|_| format!("bad register {t}"))?),
        _ if t.starts_with('v') => Reg::V(t[1..].parse().map_err(|_| format!("bad register {t}"))?),
        _ => return Err(format!("unknown register {t}")),
    })
}

/// The device memory every case runs with, and its 4 KiB test buffer (cleared before each run).
fn memory() -> &'static (DeviceMemory, u64, u64) {
    static MEM: OnceLock<(DeviceMemory, u64, u64)> = OnceLock::new();
    MEM.get_or_init(|| {
        let mem = DeviceMemory::new(1 << 20).expect("device memory");
        let at = mem
            .allocate(4096, emu_core::memory::AllocKind::Buffer, "known")
            .expect("the test buffer");
        let private = mem
            .allocate(
                PRIVATE_LANE_BYTES * 64,
                emu_core::memory::AllocKind::Scratch,
                "known private",
            )
            .expect("the private segment");
        (mem, at, private)
    })
}

fn buffer_address() -> u64 {
    memory().1
}

/// Bytes of each lane's private segment (the wave's scratch, FLAT_SCRATCH its base).
const PRIVATE_LANE_BYTES: u64 = 256;

/// Where the word at byte `off` of lane `l`'s private segment lies ([`common::swizzled`]).
fn private_word(l: u64, off: u32) -> u64 {
    memory().2 + common::swizzled(l as usize, off as usize) as u64
}

fn parse_value(t: &str) -> Result<u64, String> {
    let apertures = [
        ("@privap", emu_core::sem::PRIVATE_APERTURE_HI as u64),
        ("@ldsap", emu_core::sem::SHARED_APERTURE_HI as u64),
    ];
    for (name, value) in [
        ("@buflo", buffer_address() & 0xffff_ffff),
        ("@bufhi", buffer_address() >> 32),
        ("@buf", buffer_address()),
    ]
    .into_iter()
    .chain(apertures)
    {
        if let Some(rest) = t.strip_prefix(name) {
            let (value, rest) = match rest.strip_prefix(">>") {
                Some(r) => {
                    let end = r.find('+').unwrap_or(r.len());
                    (
                        value >> r[..end].parse::<u32>().map_err(|_| format!("bad shift in {t}"))?,
                        &r[end..],
                    )
                }
                None => (value, rest),
            };
            let off = if rest.is_empty() {
                0
            } else {
                parse_value(rest.strip_prefix('+').ok_or(format!("bad {t}"))?)?
            };
            return Ok(value + off);
        }
    }
    if let Some(f) = t.strip_suffix('f').filter(|f| f.contains('.')) {
        return f
            .parse::<f32>()
            .map(|x| x.to_bits() as u64)
            .map_err(|_| format!("bad float {t}"));
    }
    if let Some(h) = t.strip_prefix("0x") {
        return u64::from_str_radix(&h.replace('_', ""), 16).map_err(|_| format!("bad hex {t}"));
    }
    if let Some(n) = t.strip_prefix('-') {
        return n
            .parse::<u64>()
            .map(|v| v.wrapping_neg())
            .map_err(|_| format!("bad number {t}"));
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

/// The `{EXPR}` texts of `text`.
fn expressions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut rest = line;
        while let Some(i) = rest.find('{') {
            let j = rest[i..]
                .find('}')
                .map(|j| i + j)
                .unwrap_or_else(|| panic!("unclosed {{ in `{line}`"));
            out.push(rest[i + 1..j].to_string());
            rest = &rest[j + 1..];
        }
    }
    out
}

/// Every expression's value, as LLVM 19's constant folding computes it: one OpenCL C function per expression,
/// compiled at -O2 for gfx90a, each of which must become `ret i64 CONSTANT`.
fn fold(exprs: &[String]) -> std::collections::HashMap<String, u64> {
    if exprs.is_empty() {
        return Default::default();
    }
    let dir = std::env::temp_dir().join(format!("wavejit-known-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src: String = exprs
        .iter()
        .enumerate()
        .map(|(i, e)| format!("ulong f{i}(void) {{ return (ulong)({e}); }}\n"))
        .collect();
    let cl = dir.join("fold.cl");
    std::fs::write(&cl, src).unwrap();
    let out = Command::new("clang-19")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx90a",
            "-nogpulib",
            "-O2",
            "-emit-llvm",
            "-S",
            "-o",
            "-",
        ])
        .arg(&cl)
        .output()
        .unwrap_or_else(|e| {
            panic!("clang-19 is needed for the known-answer tests (scripts/setup.sh installs clang-19): {e}")
        });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "clang-19 rejected the expressions:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ir = String::from_utf8_lossy(&out.stdout);
    let mut values = std::collections::HashMap::new();
    for (i, e) in exprs.iter().enumerate() {
        let start = ir
            .find(&format!("@f{i}()"))
            .unwrap_or_else(|| panic!("f{i} missing from clang's output"));
        let body = &ir[start..start + ir[start..].find("\n}").expect("a function end")];
        let v = body
            .lines()
            .find_map(|l| l.trim().strip_prefix("ret i64 "))
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or_else(|| panic!("LLVM did not fold `{e}` to a constant:\n{body}"));
        values.insert(e.clone(), v as u64);
    }
    values
}

fn parse_file(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let folded = fold(&expressions(&text));
    let mut text = text;
    for (e, v) in &folded {
        text = text.replace(&format!("{{{e}}}"), &format!("{v:#x}"));
    }
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut targets = Target::EXECUTED.to_vec();
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(t) = line.strip_prefix("target ") {
            targets = t
                .split_whitespace()
                .map(|n| Target::from_name(n).unwrap_or_else(|| panic!("{file}:{}: unknown target {n}", i + 1)))
                .collect();
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

/// A wave's registers and the memory a case can name.
struct State {
    w: WaveState,
    /// Where the wave goes after the instruction.
    next_pc: u64,
    lds: Vec<u8>,
    mem: &'static DeviceMemory,
}

fn set(st: &mut State, r: Reg, v: u64) {
    let w = &mut st.w;
    match r {
        Reg::Lds(off) => st.lds[off as usize..off as usize + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        Reg::Mem(off) => st
            .mem
            .write(buffer_address() + off as u64, &(v as u32).to_le_bytes())
            .expect("inside the test buffer"),
        Reg::Priv(off) => {
            for l in 0..64 {
                st.mem
                    .write(private_word(l, off), &(v as u32).to_le_bytes())
                    .expect("inside the private segment");
            }
        }
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
        Reg::Vcc => set(st, Reg::SPair(106), v),
        Reg::Exec => w.set_exec(v),
        Reg::Scc => w.scc = v != 0,
        Reg::M0 => w.sgprs[124] = v as u32,
        Reg::Pc => panic!("pc is an output only"),
        Reg::Mode => w.hw.mode = v as u32,
        Reg::HwId => w.hw.hw_id = v as u32,
    }
}

/// The value of `r`: vector registers must hold the same value in every lane the case enabled.
fn get(st: &State, r: Reg, lanes: u64) -> Result<u64, String> {
    let w = &st.w;
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
        Reg::Vcc => get(st, Reg::SPair(106), lanes)?,
        Reg::Lds(off) => u32::from_le_bytes(st.lds[off as usize..off as usize + 4].try_into().unwrap()) as u64,
        Reg::Mem(off) => {
            let mut b = [0u8; 4];
            st.mem
                .read(buffer_address() + off as u64, &mut b)
                .map_err(|e| e.to_string())?;
            u32::from_le_bytes(b) as u64
        }
        Reg::Priv(off) => {
            let word = |l: u64| -> Result<u32, String> {
                let mut b = [0u8; 4];
                st.mem.read(private_word(l, off), &mut b).map_err(|e| e.to_string())?;
                Ok(u32::from_le_bytes(b))
            };
            let first = (0..64).find(|l| lanes >> l & 1 == 1).unwrap_or(0);
            let want = word(first)?;
            for l in (0..64).filter(|l| lanes >> l & 1 == 1) {
                if word(l)? != want {
                    return Err(format!("priv[{off}] differs between lanes {first} and {l}"));
                }
            }
            want as u64
        }
        Reg::Exec => w.exec(),
        Reg::Scc => w.scc as u64,
        Reg::M0 => w.sgprs[124] as u64,
        Reg::Pc => st.next_pc,
        Reg::Mode => w.hw.mode as u64,
        Reg::HwId => return Err("hwid is an input only".into()),
    })
}

fn fresh(c: &Case) -> State {
    let mut w = WaveState::new(0x1000, 32, 0);
    w.set_exec(u64::MAX);
    let mem = &memory().0;
    mem.write(buffer_address(), &[0; 4096]).expect("the test buffer");
    mem.write(memory().2, &[0; PRIVATE_LANE_BYTES as usize * 64])
        .expect("the private segment");
    // the private segment: FLAT_SCRATCH (s[102:103]) at its base, as a dispatch sets it up
    (w.scratch_base, w.scratch_lane_bytes) = (memory().2, PRIVATE_LANE_BYTES as u32);
    (w.sgprs[102], w.sgprs[103]) = (memory().2 as u32, (memory().2 >> 32) as u32);
    let mut st = State {
        w,
        next_pc: 0,
        lds: vec![0; 65536],
        mem,
    };
    for &(r, v) in &c.inputs {
        set(&mut st, r, v);
    }
    st
}

fn check(c: &Case, t: Target, engine: &str, st: &State, lanes: u64) -> Result<(), String> {
    for &(r, want) in &c.outputs {
        let got = get(st, r, lanes)
            .map_err(|e| format!("{}:{} [{}] {engine}: `{}`: {e}", c.file, c.line, t.name(), c.asm))?;
        // a negative number for a 32-bit register means its 32-bit two's complement
        let narrow = !matches!(r, Reg::SPair(_) | Reg::VPair(_) | Reg::Vcc | Reg::Exec);
        let want = if narrow && want >> 32 == 0xffff_ffff {
            want & 0xffff_ffff
        } else {
            want
        };
        if got != want {
            return Err(format!(
                "{}:{} [{}] {engine}: `{}`: {r:?} = {got:#x}, expected {want:#x}",
                c.file,
                c.line,
                t.name(),
                c.asm
            ));
        }
    }
    Ok(())
}

fn run_case(c: &Case, t: Target, inst: &Inst) -> Result<(), String> {
    // the interpreter
    let mut a = fresh(c);
    let lanes = a.w.exec();
    let mut interp = Interp {
        wave: &mut a.w,
        mem: a.mem,
        lds: &mut a.lds,
        mnemonic: "known",
        accesses: None,
    };
    let flow = execute(&mut interp, inst, 0x1000)
        .map_err(|e| format!("{}:{} [{}] interpreter: `{}`: {e}", c.file, c.line, t.name(), c.asm))?;
    a.next_pc = flow.next_pc(0x1000, inst.size() as u64).0;
    check(c, t, "interpreter", &a, lanes)?;
    // the JIT, as a one-instruction block, from the same starting memory
    let mut j = fresh(c);
    let exit = jit()
        .run_block_once(vec![*inst], 0x1000, &mut j.w, j.mem, &mut j.lds)
        .map_err(|e| format!("{}:{} [{}] JIT: `{}`: {e}", c.file, c.line, t.name(), c.asm))?;
    let jit::BlockExit::Continue { next_pc, .. } = exit else {
        return Err(format!(
            "{}:{} [{}] JIT: `{}`: {exit:?}",
            c.file,
            c.line,
            t.name(),
            c.asm
        ));
    };
    j.next_pc = next_pc;
    check(c, t, "JIT", &j, lanes)
}

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/known");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/known")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_known_answer_holds_on_both_engines_and_targets() {
    let mut failures = Vec::new();
    let mut count = 0;
    for path in files() {
        let cases = parse_file(&path);
        for t in Target::EXECUTED {
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
    assert!(
        failures.is_empty(),
        "{} of {count} known-answer cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{count} known-answer cases passed on both engines");
}
