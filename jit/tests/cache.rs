//! Translations are shared by all waves and dispatches of a kernel: the second dispatch of the same code object
//! (loaded at another address) translates nothing new — blocks that materialize a PC (calls) included, whose
//! `s_getpc`/`s_swappc` run on the interpreter — and both dispatches compute the right results.

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::NoObserver;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

#[test]
fn a_second_dispatch_reuses_every_position_independent_translation() {
    let jit = jit::Jit::new().unwrap();
    let dev = DevicePreset::by_name("mi300x").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("vadd-gfx942.co").unwrap(), "vadd").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 300u32;
    let a: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let (da, db, dc) = (
        mem.allocate(4 * n as u64, AllocKind::Buffer, "a").unwrap(),
        mem.allocate(4 * n as u64, AllocKind::Buffer, "b").unwrap(),
        mem.allocate(4 * n as u64, AllocKind::Buffer, "c").unwrap(),
    );
    mem.write(da, &a).unwrap();
    mem.write(db, &a).unwrap();
    let shape = DispatchShape::new([n, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(dc),
        ArgValue::U32(n),
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
    d.run_with(&jit, &NoObserver).unwrap();
    let first = jit.stats();
    // something else allocated in between: the code lands elsewhere
    mem.allocate(1 << 20, AllocKind::Buffer, "spacer").unwrap();
    mem.write(dc, &vec![0; 4 * n as usize]).unwrap();
    d.run_with(&jit, &NoObserver).unwrap();
    let second = jit.stats();
    assert!(first.blocks > 0);
    assert_eq!(second.blocks, first.blocks, "no new translations");
    let mut c = vec![0u8; 4 * n as usize];
    mem.read(dc, &mut c).unwrap();
    for i in 0..n as usize {
        assert_eq!(
            f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap()),
            2.0 * i as f32
        );
    }
}

#[test]
fn blocks_that_materialize_a_pc_serve_every_load_address_and_stay_correct() {
    let jit = jit::Jit::new().unwrap();
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("divergence-gfx90a.co").unwrap(), "divergence").unwrap();
    let kd = co.kernel("divergence").unwrap().clone();
    let m = 500u32;
    let seeds: Vec<u32> = (0..m).map(|i| i.wrapping_mul(2_654_435_761) >> (i % 23)).collect();
    let want = test_kernels::reference::divergence(&seeds);
    let mut blocks = Vec::new();
    for round in 0..2 {
        let mem = DeviceMemory::new(1 << 30).unwrap();
        mem.allocate(round << 16 | 4096, AllocKind::Buffer, "spacer").unwrap();
        let ds = mem.allocate(4 * m as u64, AllocKind::Buffer, "seeds").unwrap();
        mem.write(ds, &seeds.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
            .unwrap();
        let dout = mem.allocate(8 * m as u64, AllocKind::Buffer, "out").unwrap();
        let shape = DispatchShape::new([m, 1, 1], [128, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(dout), ArgValue::Pointer(ds), ArgValue::U32(m)];
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &kd,
            shape,
            args: &args,
            limits: Limits::default(),
        }
        .run_with(&jit, &NoObserver)
        .unwrap();
        let mut raw = vec![0u8; 8 * m as usize];
        mem.read(dout, &mut raw).unwrap();
        let out: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(out, want, "round {round}");
        blocks.push(jit.stats().blocks);
    }
    // the code moved, and nothing was translated again (the PC the call sites write is computed at run time)
    assert!(blocks[0] > 0 && blocks[1] == blocks[0], "{blocks:?}");
}

#[test]
fn the_instruction_limit_is_exact_on_the_jit_as_on_the_interpreter() {
    // one wave of the ALU loop: it needs exactly `n` instructions; a limit of n passes, n - 1 stops it
    let jit = jit::Jit::new().unwrap();
    let dev = DevicePreset::by_name("mi300x").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("alu_loop-gfx942.co").unwrap(), "alu_loop").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let out = mem.allocate(256, AllocKind::Buffer, "out").unwrap();
    let shape = DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(out), ArgValue::U32(37)];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits::default(),
    };
    let n = d.run().unwrap().wave_instructions;
    for limit in [n, n - 1, n - 5, n / 2] {
        let d = KernelDispatch {
            limits: Limits {
                max_wave_instructions: limit,
                threads: Some(1),
                slice: None,
                clock_ends_turn: false,
                poll_ends_turn: false,
                timing: false,
                watch: None,
            },
            ..d
        };
        let interp = d.run().map_err(|e| e.to_string());
        let jitted = d.run_with(&jit, &NoObserver).map_err(|e| e.to_string());
        assert_eq!(interp.is_ok(), limit >= n, "limit {limit} of {n}");
        assert_eq!(interp, jitted, "limit {limit} of {n}");
    }
}
