//! Every bundled-kernel test case (the kernel-cases crate) on the JIT. Each dispatch runs on the
//! interpreter and on the JIT from the same device memory, and must leave every buffer byte-identical and
//! fail (if it fails) with the same report; then the case checks the JIT's results against its CPU reference.

mod common;

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

/// The engine under test: the JIT, cross-checked against the interpreter on the same inputs; on one thread in
/// lockstep with the interpreter block by block, on all threads plainly. With an observer, the JIT alone (what
/// it reports is the JIT's own view of the run).
struct CheckedJit;

impl kernel_cases::Engine for CheckedJit {
    fn run(
        &self,
        d: &emu_core::engine::KernelDispatch<'_>,
    ) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
        let engine = if d.limits.threads == Some(1) {
            lockstep_jit()
        } else {
            jit()
        };
        common::against_interpreter(d, engine, "JIT")
    }

    fn run_observed<O: emu_core::observe::Observer>(
        &self,
        d: &emu_core::engine::KernelDispatch<'_>,
        observer: &O,
    ) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
        d.run_with(jit(), observer)
    }
}

kernel_cases::tests!(CheckedJit);
