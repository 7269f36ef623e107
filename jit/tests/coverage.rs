//! Which rows of the gfx90a and gfx942 instruction tables execute, on both engines. Every row is tried on
//! encodings LLVM 19 decodes to it (the random vectors of `isa-amdgpu/tests/data/vectors-*.txt`, plain forms
//! first; for rows they miss, an encoding built from the row's operand fields, checked by decoding): once on
//! the interpreter and once as a JIT block, from the same sandbox (pseudo-random registers, and device memory
//! that maps the pages the interpreter's accesses touch, zeroed before each engine runs). Both engines must end
//! the same way: the same registers, LDS and memory, or the same error. A row runs if some encoding runs to its
//! end; a row none of whose encodings runs but some stops on a memory access (an address the sandbox cannot
//! map, a misaligned atomic, an offset outside the LDS or the private segment) only faults, which the test
//! fails (every row runs in the sandbox); a row neither runs nor faults on is refused with the engines' message.
//!
//! `tests/data/refused.txt` lists every refused row with the engines' message (which says why); the test fails
//! if a row is refused that the list does not name or with another message, or a listed row executes (so the
//! list stays the exact coverage report), and prints per encoding the rows that run, only fault and are
//! refused.
//!
//! gfx950 is not covered: wavejit decodes and disassembles gfx950 code, but no device runs it (a gfx950 code
//! object does not load), so its rows are not tried for execution. Its own rows (on neither gfx90a nor gfx942)
//! are checked to be refused by both engines with `emu_core::sem::NOT_EXECUTED_TARGET`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use emu_core::interp::Interp;
use emu_core::sem::{execute, ExecError};
use isa_amdgpu::{decode, Form, Inst, Target, GFX9};

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

include!("../../emu-core/tests/shared/sandbox.rs");

/// How one encoding ended on both engines.
enum Outcome {
    /// To its end (or to the trap `s_trap` raises, or an illegal state it meets).
    Runs,
    /// On a memory access neither engine could make, with the message.
    Faults(String),
    Refused(String),
}

fn run(inst: &Inst, sandbox: &Sandbox) -> Outcome {
    let text = isa_amdgpu::disasm::text(inst);
    let mut a = sandbox_wave(inst);
    let mut lds_a = vec![0u8; 65536];
    let interp = sandbox.run(|| {
        a = sandbox_wave(inst);
        lds_a.fill(0);
        let mut b = Interp {
            wave: &mut a,
            mem: &sandbox.mem,
            lds: &mut lds_a,
            mnemonic: inst.info.name,
            accesses: None,
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| execute(&mut b, inst, 0x1000))) {
            Err(_) => panic!("{text}: the interpreter panicked"),
            Ok(r) => r.map(|_| ()),
        }
    });
    let memory_a = sandbox.contents();
    sandbox.zero();
    let mut j = sandbox_wave(inst);
    let mut lds_j = vec![0u8; 65536];
    let refused = matches!(
        interp,
        Err(ExecError::Unsupported { .. } | ExecError::UnsupportedForm { .. } | ExecError::Refused { .. })
    );
    let interp_text = interp.as_ref().err().map(|e| format!("{text}: {e}"));
    let exit = jit()
        .run_block_once(vec![*inst], 0x1000, &mut j, &sandbox.mem, &mut lds_j)
        .unwrap_or_else(|e| panic!("{text}: the JIT failed: {e}"));
    match (&interp_text, &exit) {
        (None, jit::BlockExit::Fault { error, .. }) => {
            panic!("{text}: the interpreter runs it, the JIT stops: {error}")
        }
        (Some(i), jit::BlockExit::Fault { error, .. }) => assert_eq!(i, error, "{text}: the engines stop differently"),
        (Some(i), other) => panic!("{text}: the interpreter stops ({i}), the JIT ends {other:?}"),
        (None, _) => {
            assert!(
                a.vgprs == j.vgprs && a.agprs == j.agprs && a.sgprs == j.sgprs && a.scc == j.scc,
                "{text}: the engines leave different registers"
            );
            assert!(lds_a == lds_j, "{text}: the engines leave different LDS");
            assert!(
                memory_a == sandbox.contents(),
                "{text}: the engines leave different memory"
            );
        }
    }
    match interp {
        Err(e) if refused => Outcome::Refused(e.to_string()),
        Err(e @ (ExecError::Memory { .. } | ExecError::Private { .. } | ExecError::Lds { .. })) => {
            Outcome::Faults(e.to_string())
        }
        _ => Outcome::Runs,
    }
}

/// Encodings per (target, row index), plain forms first, at most `per_row`.
fn instances(target: Target, file: &str, per_row: usize) -> BTreeMap<usize, Vec<Inst>> {
    let path = format!("{}/../isa-amdgpu/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut by_row: BTreeMap<usize, Vec<Inst>> = BTreeMap::new();
    for line in text.lines() {
        let mut cols = line.split('\t');
        let (Some(hex), Some(want)) = (cols.next(), cols.next()) else {
            continue;
        };
        if want == "<invalid>" {
            continue;
        }
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let Ok(inst) = decode(&bytes, 0x1000, target) else {
            continue;
        };
        let row = GFX9
            .iter()
            .position(|r| std::ptr::eq(r, inst.info))
            .expect("a table row");
        by_row.entry(row).or_default().push(inst);
    }
    for v in by_row.values_mut() {
        v.sort_by_key(|i| (i.form != Form::Plain, i.literal().is_some()));
        v.truncate(per_row);
    }
    by_row
}

/// An encoding of `row` built from its operand fields (registers 4.., VGPR sources, `hwreg(HW_REG_MODE, 29, 3)`), for rows the LLVM vectors
/// do not cover (most VOP3 forms of VOP1/VOP2/VOPC opcodes): checked by decoding it again.
fn built(row: &'static isa_amdgpu::OpInfo, target: Target) -> Option<Inst> {
    use isa_amdgpu::table::OperandKind;
    use isa_amdgpu::Field;
    let mut b = Inst::build(row, target).ok()?;
    for op in row.operands {
        let v = match op.kind {
            OperandKind::Reg { .. } => 4,
            OperandKind::Src { .. } if matches!(op.field, Field::Src0 | Field::Src1 | Field::Src2) => 256 + 4,
            OperandKind::Src { .. } => 4,
            // s_getreg/s_setreg: MODE.CSP (bits 31:29), which a kernel may read and write
            OperandKind::Hwreg => 1 | 29 << 6 | 2 << 11,
            _ => continue,
        };
        b = b.clone().set(op.field, v).unwrap_or(b);
    }
    // VOP3P: op_sel_hi as LLVM encodes it by default (every source's high element from its high half)
    if row.encoding == isa_amdgpu::Encoding::Vop3p && row.mfma.is_none() {
        b = b
            .clone()
            .set(Field::OpSelHi, 3)
            .and_then(|b| b.set(Field::OpSelHi2, 1))
            .unwrap_or(b);
    }
    // GWS forms need their gds bit, buffer_store_lds_dword its lds bit, v_madmk/v_madak their literal
    let tries = [
        b.clone(),
        b.clone().set(Field::Gds, 1).unwrap_or(b.clone()),
        b.clone().set(Field::Lds, 1).unwrap_or(b.clone()),
        b.clone().literal(0x3c00_3c00),
    ];
    tries.into_iter().find_map(|b| {
        decode(&b.encode().ok()?, 0x1000, target)
            .ok()
            .filter(|i| std::ptr::eq(i.info, row))
    })
}

#[test]
fn every_table_row_executes_on_both_engines_or_is_listed_as_refused_with_its_reason() {
    let listed: BTreeMap<(String, String), String> = include_str!("data/refused.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut w = l.splitn(3, char::is_whitespace);
            let (t, m, why) = (w.next().unwrap(), w.next().unwrap(), w.next().unwrap_or("").trim());
            ((t.to_string(), m.to_string()), why.to_string())
        })
        .collect();
    let sandbox = Sandbox::new();
    let mut problems = Vec::new();
    for (target, file) in [
        (Target::Gfx90a, "vectors-gfx90a.txt"),
        (Target::Gfx942, "vectors-gfx942.txt"),
    ] {
        let inst = instances(target, file, 4);
        // per encoding: rows, rows that ran, rows that only faulted, rows refused
        let mut by_encoding: BTreeMap<String, [usize; 4]> = BTreeMap::new();
        for (i, row) in GFX9.iter().enumerate().filter(|(_, r)| r.on(target)) {
            let tally = by_encoding.entry(row.encoding.to_string()).or_default();
            tally[0] += 1;
            // the LLVM vectors (random modifiers), then the plain encoding built from the row
            let list: Vec<Inst> = inst
                .get(&i)
                .into_iter()
                .flatten()
                .copied()
                .chain(built(row, target))
                .collect();
            if list.is_empty() {
                problems.push(format!(
                    "{} {}: no LLVM vector decodes to it and it does not build",
                    target.name(),
                    row.name
                ));
                continue;
            }
            let mut why = None;
            let mut fault = None;
            let mut runs = false;
            for inst in &list {
                match run(inst, &sandbox) {
                    Outcome::Runs => runs = true,
                    Outcome::Faults(e) => {
                        fault.get_or_insert(e);
                    }
                    Outcome::Refused(e) => {
                        why.get_or_insert(e);
                    }
                }
            }
            let key = (target.name().to_string(), row.name.to_string());
            if runs || fault.is_some() {
                if runs {
                    tally[1] += 1;
                } else {
                    tally[2] += 1;
                    problems.push(format!(
                        "{} {}: only faults ({})",
                        key.0,
                        key.1,
                        fault.unwrap_or_default()
                    ));
                }
                if listed.contains_key(&key) {
                    problems.push(format!(
                        "{} {}: executes now; remove it from tests/data/refused.txt",
                        key.0, key.1
                    ));
                }
            } else {
                tally[3] += 1;
                let why = why.unwrap_or_default();
                match listed.get(&key) {
                    None => problems.push(format!("not listed: {}\t{}\t{why}", key.0, key.1)),
                    Some(l) if *l != why => {
                        problems.push(format!("listed as `{l}`, refused with `{why}`: {} {}", key.0, key.1))
                    }
                    _ => {}
                }
            }
        }
        let total = by_encoding
            .values()
            .fold([0; 4], |a, v| std::array::from_fn(|k| a[k] + v[k]));
        let [rows, ran, faulted, refused] = total;
        println!(
            "{}: of {rows} rows, {ran} run on both engines, {faulted} only fault on both, {refused} refused",
            target.name()
        );
        for (enc, [n, r, f, x]) in &by_encoding {
            println!("  {enc:8} {n:4} rows: {r:4} run, {f:3} only fault, {x:2} refused");
        }
    }
    for (t, m) in listed.keys() {
        let target = if t == "gfx942" { Target::Gfx942 } else { Target::Gfx90a };
        if !GFX9.iter().any(|r| r.on(target) && r.name == m) {
            problems.push(format!(
                "{t} {m}: listed in tests/data/refused.txt but not a row of the table"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn gfx950_only_rows_are_refused_by_both_engines_as_not_executed() {
    let sandbox = Sandbox::new();
    let mut problems = Vec::new();
    let mut refused = 0;
    let own = GFX9
        .iter()
        .filter(|r| r.on(Target::Gfx950) && !Target::EXECUTED.iter().any(|t| r.on(*t)));
    for row in own {
        let Some(inst) = built(row, Target::Gfx950) else {
            problems.push(format!("{}: does not build", row.name));
            continue;
        };
        let want = format!("{}: {}", row.name, emu_core::sem::NOT_EXECUTED_TARGET);
        match run(&inst, &sandbox) {
            Outcome::Refused(e) if e == want => refused += 1,
            Outcome::Refused(e) | Outcome::Faults(e) => problems.push(format!("{}: stops with `{e}`", row.name)),
            Outcome::Runs => problems.push(format!("{}: runs", row.name)),
        }
    }
    println!("gfx950: {refused} rows of its own, each refused by both engines");
    assert!(refused > 50, "{refused} gfx950 rows");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
