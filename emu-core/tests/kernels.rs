//! Bundled kernels run on the emulated MI210 (gfx90a) and MI300X (gfx942) and match their CPU references;
//! bad kernels fault with the documented reports and the process carries on. The cases are shared with the
//! JIT's tests (jit/tests/kernels.rs); here they run on the interpreter.

/// The engine under test: the interpreter.
fn engine_run(d: &emu_core::engine::KernelDispatch<'_>) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    d.run()
}

/// The engine under test with an observer: the interpreter.
fn engine_run_observed<O: emu_core::observe::Observer>(d: &emu_core::engine::KernelDispatch<'_>, observer: &O) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    d.run_observed(observer)
}

include!("shared/kernel_cases.rs");
