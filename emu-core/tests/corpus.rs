//! How much of real compiled code the engine can execute: every distinct instruction form of librocrand's
//! gfx90a kernels and librocsparse's — a form being the llvm-objdump mnemonic with the kind of each
//! operand (VGPR, SGPR, AGPR, constant, with neg/abs) and its modifiers (clamp, SDWA selects, DPP controls,
//! cache bits...) — is executed once on a sandbox wave, and must not be refused as unsupported, except the
//! forms listed in `KNOWN_GAPS`, each with its reason, nor panic. What it checks is that each form has
//! semantics, not their results (those are the known-answer, kernel and differential tests' job): a memory
//! instruction may fault (at an address the sandbox cannot map, or past the LDS or the private segment), but
//! any other form must run to the end without an error of any kind (s_trap excepted, which reports itself);
//! the counts of forms that ran and that faulted on memory are printed.

use std::collections::BTreeMap;
use std::path::Path;

use emu_core::interp::Interp;
use emu_core::sem::{execute, ExecError};
use isa_amdgpu::codeobj::open_any;
use isa_amdgpu::table::Unit;
use isa_amdgpu::{decode, Inst, Target};

/// Forms the engine refuses on purpose, with why; the test fails if one of them starts working (so the list
/// stays true) or if anything else is refused.
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// The kind of one operand or modifier token of llvm-objdump's text.
fn token_kind(t: &str) -> String {
    let mut mods = String::new();
    let mut t = t;
    for (prefix, tag) in [
        ("-", "neg "),
        ("|", "abs "),
        ("neg(", "neg "),
        ("abs(", "abs "),
        ("sext(", "sext "),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            mods.push_str(tag);
            t = rest;
        }
    }
    let t = t.trim_end_matches([')', '|']);
    let reg = |p: &str| {
        t.strip_prefix(p)
            .is_some_and(|r| r.starts_with('[') || r.starts_with(|c: char| c.is_ascii_digit()))
    };
    let kind = if reg("v") {
        "v".to_string()
    } else if reg("a") {
        "a".to_string()
    } else if reg("s")
        || reg("ttmp")
        || ["vcc", "exec", "m0", "flat_scratch", "xnack_mask", "src_", "scc"]
            .iter()
            .any(|p| t.starts_with(p))
    {
        "s".to_string()
    } else if t.starts_with(|c: char| c.is_ascii_digit()) || t.starts_with("0x") {
        "c".to_string()
    } else if let Some((name, _)) = t
        .split_once(':')
        .filter(|(n, _)| n.starts_with("offset") || *n == "row_mask" || *n == "bank_mask")
    {
        name.to_string()
    } else {
        t.to_string()
    };
    mods + &kind
}

/// The first instance of every instruction form in the gfx90a code objects of `lib` (every `every`th object).
fn first_instances(lib: &str, every: usize, into: &mut BTreeMap<String, Inst>) -> usize {
    let objects = open_any(Path::new(lib), Some("gfx90a")).unwrap();
    let mut count = 0;
    for l in objects.iter().step_by(every) {
        for f in &l.code_object.functions {
            let code = f.code();
            let mut at = 0;
            while at + 4 <= code.len() {
                let Ok(inst) = decode(&code[at..], f.address + at as u64, Target::Gfx90a) else {
                    break;
                };
                at += inst.size();
                count += 1;
                let text = isa_amdgpu::disasm::text(&inst);
                let mut tokens = text.split([' ', ',']).filter(|t| !t.is_empty());
                let mut key = tokens.next().unwrap_or("").to_string();
                for t in tokens {
                    key.push(' ');
                    key.push_str(&token_kind(t));
                }
                into.entry(key).or_insert(inst);
            }
        }
    }
    count
}

include!("shared/sandbox.rs");

/// How a form ran.
enum Ran {
    ToTheEnd,
    MemoryFault(#[allow(dead_code)] String),
}

/// Runs `inst` on a wave with pseudo-random registers, all lanes on, a 64 KiB LDS and the sandbox's device
/// memory (which maps the pages the instruction touches).
fn try_execute(inst: &Inst, sandbox: &Sandbox) -> Result<Ran, String> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sandbox.run(|| {
            let mut w = sandbox_wave(inst);
            let mut lds = vec![0u8; 65536];
            let mut interp = Interp {
                wave: &mut w,
                mem: &sandbox.mem,
                lds: &mut lds,
                mnemonic: inst.info.name,
                accesses: None,
            };
            execute(&mut interp, inst, 0x1000)
        })
    }));
    match r {
        Err(_) => Err("panicked".into()),
        Ok(Err(
            e @ (ExecError::Unsupported { .. } | ExecError::UnsupportedForm { .. } | ExecError::Refused { .. }),
        )) => Err(e.to_string()),
        Ok(Err(ExecError::Trap(_))) if inst.info.opcode == isa_amdgpu::Opcode::STrap => Ok(Ran::ToTheEnd),
        Ok(Err(e)) if matches!(inst.info.unit, Unit::Smem | Unit::Lds | Unit::Vmem | Unit::Flat) => {
            Ok(Ran::MemoryFault(e.to_string()))
        }
        Ok(Err(e)) => Err(format!("not a memory instruction, yet it stopped: {e}")),
        Ok(Ok(_)) => Ok(Ran::ToTheEnd),
    }
}

#[test]
fn every_instruction_form_of_rocrand_and_rocsparse_executes() {
    let libs = [
        "/usr/lib/x86_64-linux-gnu/librocrand.so.1",
        "/usr/lib/x86_64-linux-gnu/librocsparse.so.0",
    ];
    for (l, package) in libs.iter().zip(["librocrand1", "librocsparse0"]) {
        assert!(
            Path::new(l).exists(),
            "{l} is missing: this test needs the Debian package {package} (scripts/setup.sh installs it)"
        );
    }
    // the whole corpus (13 M instructions) takes ~10 s in release mode; WAVEJIT_ROCSPARSE_EVERY=n samples it
    let every: usize = std::env::var("WAVEJIT_ROCSPARSE_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut forms = BTreeMap::new();
    let n = first_instances(libs[0], 1, &mut forms) + first_instances(libs[1], every, &mut forms);
    let sandbox = Sandbox::new();
    let mut refused = Vec::new();
    let mnemonics: std::collections::BTreeSet<&str> = forms.keys().map(|k| k.split(' ').next().unwrap_or("")).collect();
    let (mut ran, mut faulted) = (0, 0);
    for (mnemonic, inst) in &forms {
        let known = KNOWN_GAPS.iter().any(|(m, _)| m == mnemonic);
        let r = try_execute(inst, &sandbox);
        match &r {
            Ok(Ran::ToTheEnd) => ran += 1,
            Ok(Ran::MemoryFault(_)) => faulted += 1,
            Err(_) => {}
        }
        match (r, known) {
            (Ok(_), true) => refused.push(format!("{mnemonic}: works now, remove it from KNOWN_GAPS")),
            (Err(e), false) => refused.push(format!("{mnemonic} (`{}`): {e}", isa_amdgpu::disasm::text(inst))),
            _ => {}
        }
    }
    println!("{n} instructions, {} mnemonics in {} forms, {} known gaps; {ran} forms ran to the end, {faulted} memory forms faulted", mnemonics.len(), forms.len(), KNOWN_GAPS.len());
    // the README's figures for Debian 12's librocrand1 and librocsparse0 (the whole corpus, not a sample)
    if every == 1 {
        assert_eq!(
            (mnemonics.len(), forms.len()),
            (376, 1141),
            "the README says the corpus has 376 mnemonics in 1,141 forms: update it if the packages changed"
        );
    }
    assert!(
        refused.is_empty(),
        "{} forms refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}
