//! Every bundled-kernel test case (emu-core/tests/shared/kernel_cases.rs) on the tiered JIT, the default
//! engine: blocks run on the interpreter until they are hot, are translated in the background or on the thread
//! that found them hot, and run compiled after that — with a threshold of two entries, so most dispatches mix
//! both tiers, in every order the background translator's timing produces. Each dispatch must leave every
//! buffer byte-identical to the interpreter's and fail (if it fails) with the same report.

use std::sync::OnceLock;

fn tiered() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| {
        let options = jit::JitOptions { hot_after: 2, hot_after_cached: 2, background: true, disk: None };
        jit::Jit::with_options(options).expect("a JIT for this host")
    })
}

fn engine_run(d: &emu_core::engine::KernelDispatch<'_>) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    let (mem, kernel, limits) = (d.mem, d.kernel, d.limits);
    let before = mem.snapshot_buffers().unwrap();
    let interp = d.run();
    let after_interp = mem.snapshot_buffers().unwrap();
    mem.restore_buffers(&before).unwrap();
    let jitted = d.run_with(tiered(), &emu_core::observe::NoObserver);
    match (&interp, &jitted) {
        (Ok(i), Ok(j)) => {
            assert!(mem.snapshot_buffers().unwrap() == after_interp, "{}: the tiered JIT's memory differs from the interpreter's", kernel.name);
            if limits.threads == Some(1) {
                assert_eq!(i, j, "{}: statistics differ", kernel.name);
            }
        }
        (Err(i), Err(j)) => assert_eq!(without_hex(&i.to_string()), without_hex(&j.to_string()), "{}: the engines fail differently", kernel.name),
        _ => panic!("{}: interpreter {:?}, tiered JIT {:?}", kernel.name, interp.as_ref().err(), jitted.as_ref().err()),
    }
    jitted
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

/// The engine under test with an observer: the tiered JIT.
fn engine_run_observed<O: emu_core::observe::Observer>(d: &emu_core::engine::KernelDispatch<'_>, observer: &O) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    d.run_with(tiered(), observer)
}

include!("../../emu-core/tests/shared/kernel_cases.rs");

#[test]
fn the_tiered_jit_interpreted_some_block_runs_and_translated_hot_blocks() {
    // any case will do: run one, then look at the counters of the JIT every case shares
    tiled_sgemm_with_lds_matches_the_cpu();
    tiered().settle();
    let s = tiered().stats();
    assert!(s.interpreted > 0 && s.blocks > 0, "{s}");
}
