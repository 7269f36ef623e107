//! Every bundled-kernel test case (emu-core/tests/shared/kernel_cases.rs) on the JIT. Each dispatch runs on the
//! interpreter and on the JIT from the same device memory, and must leave every buffer byte-identical and
//! fail (if it fails) with the same report; then the case checks the JIT's results against its CPU reference.

use std::sync::OnceLock;

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

/// A JIT that also re-runs every block on the interpreter and compares registers, LDS and memory.
fn lockstep_jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::crosscheck().expect("a JIT for this host"))
}

/// The engine under test: the JIT, cross-checked against the interpreter on the same inputs.
fn engine_run(d: &emu_core::engine::KernelDispatch<'_>) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    let (mem, kernel, limits) = (d.mem, d.kernel, d.limits);
    let before = mem.snapshot_buffers().unwrap();
    let interp = d.run();
    let after_interp = mem.snapshot_buffers().unwrap();
    mem.restore_buffers(&before).unwrap();
    // on one thread, in lockstep with the interpreter block by block; on all threads, plainly
    let engine = if limits.threads == Some(1) { lockstep_jit() } else { jit() };
    let jitted = d.run_with(engine, &emu_core::observe::NoObserver);
    match (&interp, &jitted) {
        (Ok(i), Ok(j)) => {
            assert!(mem.snapshot_buffers().unwrap() == after_interp, "{}: the JIT's memory differs from the interpreter's", kernel.name);
            // on one thread both run the same schedule, so they execute the same instructions (on more,
            // contended atomic retry loops may spin differently)
            if limits.threads == Some(1) {
                assert_eq!(i, j, "{}: statistics differ", kernel.name);
            }
        }
        // the code is loaded at a different address for each dispatch: compare reports without addresses
        (Err(i), Err(j)) => assert_eq!(without_hex(&i.to_string()), without_hex(&j.to_string()), "{}: the engines fail differently", kernel.name),
        _ => panic!("{}: interpreter {:?}, JIT {:?}", kernel.name, interp.as_ref().err(), jitted.as_ref().err()),
    }
    jitted
}

/// The engine under test with an observer: the JIT (what it reports is the JIT's own view of the run).
fn engine_run_observed<O: emu_core::observe::Observer>(d: &emu_core::engine::KernelDispatch<'_>, observer: &O) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    d.run_with(jit(), observer)
}

/// `text` with every hexadecimal number replaced by `0x_`.
fn without_hex(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        out.push_str("0x_");
        rest = rest[i + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out + rest
}

include!("../../emu-core/tests/shared/kernel_cases.rs");
