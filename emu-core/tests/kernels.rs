//! Bundled kernels run on the emulated MI210 (gfx90a) and MI300X (gfx942) and match their CPU references;
//! bad kernels fault with the documented reports and the process carries on. The cases (the kernel-cases
//! crate) are shared with the JIT's tests (jit/tests/kernels.rs); here they run on the interpreter.

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{EngineError, KernelDispatch, Limits, RunStats};
use emu_core::kernarg::ArgValue;
use emu_core::memory::DeviceMemory;
use kernel_cases::{setup, upload_i32};

/// The engine under test: the interpreter.
struct Interpreter;

impl kernel_cases::Engine for Interpreter {
    fn run(&self, d: &KernelDispatch<'_>) -> Result<RunStats, EngineError> {
        d.run()
    }

    fn run_observed<O: emu_core::observe::Observer>(
        &self,
        d: &KernelDispatch<'_>,
        observer: &O,
    ) -> Result<RunStats, EngineError> {
        d.run_observed(observer)
    }
}

kernel_cases::tests!(Interpreter);

#[test]
fn gws_semaphores_are_refused_by_the_timing_model_with_the_reason() {
    let (dev, co) = setup("gws_sema", "gfx942");
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let buf = upload_i32(&mem, &[0; 16], "buf");
    let shape = DispatchShape::new([7 * 64, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(buf),
        ArgValue::Pointer(buf),
        ArgValue::Pointer(buf),
        ArgValue::U32(3),
        ArgValue::U32(5),
        ArgValue::U32(7),
        ArgValue::U32(11),
    ];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits::default(),
    };
    let r = d.run_timed(&emu_core::engine::Interpreter, &emu_core::observe::NoObserver);
    let Err(EngineError::Timing { what, .. }) = r else {
        panic!("{:?}", r.err())
    };
    assert_eq!(what, "grid-wide sync (ds_gws_barrier, the ds_gws_sema_* semaphores) is not modeled; run this dispatch without timing");
}
