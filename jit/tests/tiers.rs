//! Every bundled-kernel test case (the kernel-cases crate) on the tiered JIT, the default
//! engine: blocks run on the interpreter until they are hot, are translated in the background or on the thread
//! that found them hot, and run compiled after that — with a threshold of two entries, so most dispatches mix
//! both tiers, in every order the background translator's timing produces. Each dispatch must leave every
//! buffer byte-identical to the interpreter's and fail (if it fails) with the same report.

mod common;

use std::sync::OnceLock;

fn tiered() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| {
        let options = jit::JitOptions {
            hot_after: 2,
            hot_after_cached: 2,
            background: true,
            disk: None,
        };
        jit::Jit::with_options(options).expect("a JIT for this host")
    })
}

/// The engine under test: the tiered JIT, cross-checked against the interpreter; with an observer, the tiered
/// JIT alone.
struct Tiered;

impl kernel_cases::Engine for Tiered {
    fn run(
        &self,
        d: &emu_core::engine::KernelDispatch<'_>,
    ) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
        common::against_interpreter(d, tiered(), "tiered JIT")
    }

    fn run_observed<O: emu_core::observe::Observer>(
        &self,
        d: &emu_core::engine::KernelDispatch<'_>,
        observer: &O,
    ) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
        d.run_with(tiered(), observer)
    }
}

kernel_cases::tests!(Tiered);
