//! Bundled kernels run on the emulated MI210 (gfx90a) and MI300X (gfx942) and match their CPU references;
//! bad kernels fault with the documented reports and the process carries on. The cases are shared with the
//! JIT's tests (jit/tests/kernels.rs); here they run on the interpreter.

/// The engine under test: the interpreter.
fn engine_run(
    mem: &emu_core::memory::DeviceMemory,
    dev: &'static emu_core::DevicePreset,
    co: &isa_amdgpu::codeobj::CodeObject,
    kernel: &isa_amdgpu::codeobj::Kernel,
    shape: emu_core::dispatch::DispatchShape,
    args: &[emu_core::kernarg::ArgValue],
    limits: emu_core::engine::Limits,
) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    emu_core::engine::run_kernel(mem, dev, co, kernel, shape, args, limits)
}

include!("shared/kernel_cases.rs");
