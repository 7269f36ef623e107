// The benchmark kernels and their set-up, shared by emu-core/benches/interp.rs (the interpreter alone) and
// jit/benches/engines.rs (both engines), so both measure the same dispatches.

/// One prepared dispatch of a bundled kernel.
struct Case {
    co: CodeObject,
    shape: DispatchShape,
    args: Vec<ArgValue>,
}

impl Case {
    fn kernel(&self) -> &isa_amdgpu::codeobj::Kernel {
        &self.co.kernels[0]
    }
}

/// The ALU-bound loop kernel over 64 waves of 64 lanes, `iters` iterations each, with the number of VALU
/// lane-operations one run executes (every active lane of every vector ALU instruction counts once), counted
/// on the interpreter.
fn alu_loop_case(mem: &DeviceMemory, dev: &'static DevicePreset, iters: u32, limits: Limits) -> (Case, u64) {
    let co = CodeObject::parse(test_kernels::by_name("alu_loop-gfx942.co").unwrap(), "alu_loop").unwrap();
    let n = 64 * 64u32;
    let out = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out").unwrap();
    let shape = DispatchShape::new([n, 1, 1], [256, 1, 1], dev).unwrap();
    let case = Case { co, shape, args: vec![ArgValue::Pointer(out), ArgValue::U32(iters)] };
    let counter = profiler_hooks::ClassCounter::default();
    emu_core::engine::KernelDispatch { mem, device: dev, co: &case.co, kernel: case.kernel(), shape, args: &case.args, limits }.run_observed(&counter).unwrap();
    let valu = counter.count(isa_amdgpu::table::Unit::Valu) * 64;
    (case, valu)
}

/// The tiled SGEMM kernel at n^3, with its 2 n^3 floating-point operations per run.
fn sgemm_case(mem: &DeviceMemory, dev: &'static DevicePreset, n: u32) -> (Case, u64) {
    let co = CodeObject::parse(test_kernels::by_name("sgemm-gfx942.co").unwrap(), "sgemm").unwrap();
    // filled, so that the matrices live in host memory of their own (unwritten device memory reads as the host's
    // zero page, which stays in its caches)
    let values: Vec<u8> = (0..n * n).flat_map(|i| ((i % 251) as f32 / 251.0 - 0.5).to_le_bytes()).collect();
    let matrix = |label| {
        let m = mem.allocate((n * n * 4) as u64, AllocKind::Buffer, label).unwrap();
        mem.write(m, &values).unwrap();
        m
    };
    let (a, b, c) = (matrix("A"), matrix("B"), matrix("C"));
    let shape = DispatchShape::new([n, n, 1], [16, 16, 1], dev).unwrap();
    let case = Case { co, shape, args: vec![ArgValue::Pointer(a), ArgValue::Pointer(b), ArgValue::Pointer(c), ArgValue::U32(n)] };
    (case, 2 * (n as u64).pow(3))
}
