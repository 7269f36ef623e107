//! Faults and refusals: stores and reads past a buffer (with and without memcheck), illegal instructions,
//! runaway kernels, float modes wavejit does not run, and code for another target.

use super::*;

/// vadd over 300 elements into a `c` of 256 (1024 bytes) on `mem`: (a, b, c's address, the run's outcome).
fn vadd_into_a_too_small_c<E: Engine>(
    e: &E,
    mem: &DeviceMemory,
) -> (Vec<f32>, Vec<f32>, u64, Result<emu_core::engine::RunStats, EngineError>) {
    let (dev, co) = setup("vadd", "gfx90a");
    let n = 300;
    let (a, b) = inputs(n);
    let (da, db) = (upload(mem, &a, "a"), upload(mem, &b, "b"));
    let dc = upload(mem, &vec![0.0; 256], "c (too small)");
    let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(dc),
        ArgValue::U32(n as u32),
    ];
    let result = run_kernel(
        e,
        KernelDispatch {
            mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
    );
    (a, b, dc, result)
}

pub fn an_out_of_bounds_store_faults_with_kernel_pc_lane_and_allocation_under_memcheck<E: Engine>(e: &E) {
    let mem = DeviceMemory::new(1 << 30).unwrap();
    mem.set_memcheck(true);
    let (a, b, dc, result) = vadd_into_a_too_small_c(e, &mem);
    let err = result.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EngineError::Fault { .. }), "{text}");
    assert!(
        text.contains("kernel vadd") && text.contains("global_store_dword") && text.contains("lane 0"),
        "{text}"
    );
    assert!(
        text.contains("past the end of the 1024-byte allocation") && text.contains("(c (too small))"),
        "{text}"
    );
    // the host and the device memory are intact: the earlier workgroups' results are there
    assert_eq!(download(&mem, dc, 1)[0], a[0] + b[0]);
}

pub fn a_store_far_past_a_small_buffer_faults_in_its_redzone_under_memcheck_and_spares_the_next_allocation<
    E: Engine,
>(
    e: &E,
) {
    // vadd handed a `c` 400,000 bytes past the end of a 400-byte buffer: without redzones that address lies in the
    // 4 MiB buffer allocated next, and the stores would land there unreported
    let (dev, co) = setup("vadd", "gfx90a");
    let mem = DeviceMemory::new(1 << 30).unwrap();
    mem.set_memcheck(true);
    let n = 64;
    let (a, b) = inputs(n);
    let (da, db) = (upload(&mem, &a, "a"), upload(&mem, &b, "b"));
    let small = upload(&mem, &[0.0; 100], "small");
    let next = mem.allocate(4 << 20, AllocKind::Buffer, "next").unwrap();
    let far = small + 400 + 400_000;
    let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(far),
        ArgValue::U32(n as u32),
    ];
    let err = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EngineError::Fault { .. }), "{text}");
    let place = format!("global_store_dword: lane 0: write of 4 bytes at {far:#x}: 400000 bytes past the end of the 400-byte allocation at {small:#x} (small) and {} bytes before the 4194304-byte allocation at {next:#x} (next)", next - far);
    assert!(text.contains(&place), "{text}");
    let mut neighbour = vec![0u8; 4 << 20];
    mem.read(next, &mut neighbour).unwrap();
    assert!(neighbour.iter().all(|&x| x == 0), "the next allocation was written");
}

pub fn a_store_past_the_end_inside_the_last_page_lands_there_and_is_counted_and_described<E: Engine>(e: &E) {
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let (a, b, dc, result) = vadd_into_a_too_small_c(e, &mem);
    let stats = result.unwrap();
    // lanes 0..43 of workgroup 4 write the 176 bytes after the 1024-byte allocation: on the GPU they land in its page
    assert_eq!(stats.slack, 44);
    let mut past = vec![0u8; 176];
    mem.read_guest(dc + 1024, &mut past).unwrap();
    let want: Vec<u8> = (256..300).flat_map(|i| (a[i] + b[i]).to_le_bytes()).collect();
    assert_eq!(past, want);
    let first = stats.first_slack.as_deref().unwrap();
    assert_eq!(
        (first.workgroup, first.wave, first.lane, first.mnemonic),
        ([4, 0, 0], 0, Some(0), "global_store_dword")
    );
    assert!(first.text.starts_with("global_store_dword ") && first.pc > 0, "{first}");
    let place = format!(
        "write of 4 bytes at {:#x}: 4 bytes past the end of the 1024-byte allocation at {dc:#x} (c (too small))",
        dc + 1024
    );
    assert_eq!(first.slack.to_string(), place);
    let warning = stats.slack_warning().unwrap();
    assert!(warning.starts_with("44 accesses past the end of allocations, inside their last pages; the first: kernel vadd, workgroup [4, 0, 0], wave 0, pc 0x"), "{warning}");
    assert!(warning.ends_with(&format!("global_store_dword: lane 0: {place}; the GPU writes the allocation's last page, so the dispatch went on; --memcheck stops at such accesses")), "{warning}");
}

pub fn reads_past_the_end_inside_the_last_page_read_zeros_and_are_counted<E: Engine>(e: &E) {
    let (dev, co) = setup("vadd", "gfx942");
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 300;
    let (a, b) = inputs(n);
    // a and b hold 256 elements: the last 44 lanes read the rest of their pages (zeros)
    let (da, db) = (upload(&mem, &a[..256], "a"), upload(&mem, &b[..256], "b"));
    let dc = upload(&mem, &vec![0.0; n], "c");
    let shape = DispatchShape::new([n as u32, 1, 1], [128, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(dc),
        ArgValue::U32(n as u32),
    ];
    let stats = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap();
    assert_eq!(stats.slack, 88);
    let c = download(&mem, dc, n);
    assert_eq!(&c[..256], &test_kernels::reference::vadd(&a[..256], &b[..256])[..]);
    assert!(c[256..].iter().all(|&x| x == 0.0), "{:?}", &c[256..]);
    let first = stats.first_slack.as_deref().unwrap();
    assert_eq!(
        (first.workgroup, first.lane, first.slack.access),
        ([2, 0, 0], Some(0), emu_core::memory::Access::Read)
    );
    assert!(
        first.to_string().contains("the GPU reads the allocation's last page"),
        "{first}"
    );
    // under memcheck the first of them is a fault
    mem.set_memcheck(true);
    let err = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "lane 0: read of 4 bytes at {:#x}: just past the end of the 1024-byte allocation at {da:#x} (a)",
            da + 1024
        )),
        "{err}"
    );
}

pub fn an_illegal_instruction_stops_the_dispatch_with_kernel_and_pc_and_the_process_carries_on<E: Engine>(e: &E) {
    // vadd with its first instruction replaced by 0xffffffff, which llvm-objdump-19 also cannot decode on gfx90a
    let bytes = test_kernels::by_name("vadd-gfx90a.co").unwrap();
    let co = CodeObject::parse(bytes, "vadd").unwrap();
    let f = co.kernel_function(&co.kernels[0]).unwrap();
    let (entry, head) = (f.address, f.code()[..16].to_vec());
    assert_ne!(entry % 4096, 0);
    assert!(isa_amdgpu::decode(&[0xff; 8], entry, isa_amdgpu::Target::Gfx90a).is_err());
    let at = bytes
        .windows(16)
        .position(|w| w == head.as_slice())
        .expect("kernel code in the file");
    let mut patched = bytes.to_vec();
    patched[at..at + 4].copy_from_slice(&[0xff; 4]);
    let bad = CodeObject::parse(&patched, "vadd (patched)").unwrap();
    let dev = DevicePreset::by_name("mi210").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 100;
    let (a, b) = inputs(n);
    let (da, db, dc) = (
        upload(&mem, &a, "a"),
        upload(&mem, &b, "b"),
        upload(&mem, &vec![0.0; n], "c"),
    );
    let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(dc),
        ArgValue::U32(n as u32),
    ];
    let err = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &bad,
            kernel: &bad.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap_err();
    let text = err.to_string();
    let EngineError::IllegalInstruction { pc, .. } = err else {
        panic!("{text}")
    };
    // the reported PC is the kernel's entry in the (page-aligned, since released) copy of the patched code
    let place = mem.read_u32(pc).unwrap_err().to_string();
    assert!(
        place.contains("code object") && place.contains("(vadd (patched)) freed earlier"),
        "{place}"
    );
    assert_eq!(pc % 4096, entry % 4096, "{text}");
    assert!(text.contains("kernel vadd") && text.contains("cannot decode"), "{text}");
    assert_eq!(download(&mem, dc, n), vec![0.0; n], "nothing ran");
    // the same memory and process run the intact kernel afterwards
    run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(bits(&download(&mem, dc, n)), bits(&want));
}

pub fn runaway_kernels_stop_at_the_instruction_limit<E: Engine>(e: &E) {
    let (dev, co) = setup("vadd", "gfx942");
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let (a, b) = inputs(64);
    let (da, db) = (upload(&mem, &a, "a"), upload(&mem, &b, "b"));
    let dc = upload(&mem, &[0.0; 64], "c");
    let shape = DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(dc),
        ArgValue::U32(64),
    ];
    let err = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits {
                max_wave_instructions: 5,
                ..Limits::default()
            },
        },
    )
    .unwrap_err();
    assert!(matches!(err, EngineError::Runaway { limit: 5, .. }), "{err}");
    assert!(err.to_string().contains("ran 5 instructions without ending"));
}

pub fn a_kernel_asking_for_denormal_flushing_or_another_rounding_mode_is_refused_clearly<E: Engine>(e: &E) {
    use isa_amdgpu::codeobj::kd::{FloatDenormMode, FloatRoundMode};
    let (dev, co) = setup("vadd", "gfx942");
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let d = upload(&mem, &[0.0; 64], "x");
    let args = [
        ArgValue::Pointer(d),
        ArgValue::Pointer(d),
        ArgValue::Pointer(d),
        ArgValue::U32(64),
    ];
    let shape = DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap();
    let mut flush = co.kernels[0].clone();
    flush.descriptor.rsrc1.float_denorm_mode_32 = FloatDenormMode::FlushSrcDst;
    let err = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &flush,
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("kernel vadd") && err.contains("denorm_32 = FlushSrcDst"),
        "{err}"
    );
    let mut round = co.kernels[0].clone();
    round.descriptor.rsrc1.float_round_mode_16_64 = FloatRoundMode::Zero;
    let err = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &round,
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("round_16_64 = zero"), "{err}");
    // the descriptor as compiled runs
    run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
    )
    .unwrap();
}

pub fn code_for_another_target_is_refused<E: Engine>(e: &E) {
    let (_, co) = setup("vadd", "gfx942");
    let dev = DevicePreset::by_name("mi210").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let shape = DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap();
    let err = run_kernel(
        e,
        KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &[],
            limits: Limits::default(),
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("the device runs gfx90a"), "{err}");
}
