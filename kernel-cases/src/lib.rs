//! The bundled-kernel test cases, shared by the engines' test binaries: emu-core/tests/kernels.rs (the
//! interpreter) and jit/tests/{kernels,tiers,observe_kernels,timing_kernels}.rs (the JIT, checked against the
//! interpreter in each binary's own way). Each case is a function generic over the [`Engine`] under test, and
//! every dispatch in it goes through that engine; a binary implements [`Engine`] and invokes [`tests!`], which
//! makes one `#[test]` per case, named as the case.

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{EngineError, KernelDispatch, Limits, RunStats};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::Observer;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

/// How a test binary runs a dispatch: the engine under test and the checks it makes on each run.
pub trait Engine {
    /// Runs the dispatch `d`.
    fn run(&self, d: &KernelDispatch<'_>) -> Result<RunStats, EngineError>;

    /// Runs the dispatch `d` with `observer` (the observer cases' own).
    fn run_observed<O: Observer>(&self, d: &KernelDispatch<'_>, observer: &O) -> Result<RunStats, EngineError>;
}

/// One `#[test]` per case of this crate, each running the case on the engine `$engine` (an expression of a type
/// that implements [`Engine`], evaluated in each test). A new case is listed here as well (a test
/// below checks that every case is).
#[macro_export]
macro_rules! tests {
    ($engine:expr) => {
        $crate::tests!(@cases $engine;
            vadd_matches_the_cpu_on_both_targets_with_a_partial_workgroup,
            saxpy_matches_a_fused_multiply_add_reference,
            an_out_of_bounds_store_faults_with_kernel_pc_lane_and_allocation_under_memcheck,
            a_store_far_past_a_small_buffer_faults_in_its_redzone_under_memcheck_and_spares_the_next_allocation,
            a_store_past_the_end_inside_the_last_page_lands_there_and_is_counted_and_described,
            reads_past_the_end_inside_the_last_page_read_zeros_and_are_counted,
            an_illegal_instruction_stops_the_dispatch_with_kernel_and_pc_and_the_process_carries_on,
            runaway_kernels_stop_at_the_instruction_limit,
            a_kernel_asking_for_denormal_flushing_or_another_rounding_mode_is_refused_clearly,
            code_for_another_target_is_refused,
            lds_tree_reduction_with_barriers_matches_the_cpu,
            results_do_not_depend_on_the_number_of_host_threads,
            an_observer_sees_every_instruction_by_unit_without_changing_results,
            an_observer_sees_each_lanes_addresses_and_can_interleave_waves_without_changing_results,
            divergent_control_flow_device_calls_64_bit_division_and_f64_match_the_cpu,
            alu_loop_matches_the_cpu_and_signed_scalar_arithmetic_sets_scc,
            alu_mixed_integer_multiply_adds_beside_fmas_match_the_cpu,
            histogram_with_lds_and_global_atomics_counts_exactly_with_any_thread_count,
            index_math_over_a_3d_grid_with_partial_workgroups_in_every_dimension,
            cross_lane_permute_swizzle_readlane_and_ballot_match_the_cpu,
            dynamic_vector_element_access_in_vgpr_index_mode_matches_the_cpu,
            dpp_row_shifts_quad_permutes_mirrors_and_row_masks_match_the_cpu,
            mfma_f16_bf16_and_f32_in_every_single_block_shape_with_agpr_accumulators_match_the_cpu,
            device_library_sin_exp_log_sqrt_pow_stay_within_their_ulp_bounds,
            compare_and_swap_loops_on_32_and_64_bit_values_lose_no_update_with_any_thread_count,
            workgroups_spinning_on_flags_that_later_workgroups_set_complete_on_one_host_thread,
            waves_spinning_on_the_lds_while_their_workgroup_waits_on_a_later_one_complete_on_one_host_thread,
            a_lanes_64_bit_load_never_sees_half_of_another_workgroups_64_bit_store,
            private_arrays_in_scratch_memory_match_the_cpu,
            every_workgroup_starts_with_zeroed_private_memory_whichever_ran_before_on_its_host_thread,
            prefix_scan_in_lds_matches_the_cpu,
            tiled_sgemm_with_lds_matches_the_cpu,
            wide_lds_accesses_move_float4_and_double_tiles,
            hip_ieee_division_is_correctly_rounded_in_f32_and_f64_including_subnormals_and_special_cases,
            hip_f64_sqrt_rsqrt_exp_log_sin_floor_min_max_ldexp_stay_within_their_ulp_bounds,
            hip_f16_arithmetic_rounds_once_like_ieee_half_precision,
            hip_16_and_8_bit_integer_arithmetic_with_sdwa_selects_matches_the_cpu,
            f64_mfma_gemm_16x16x16_matches_the_cpu_with_its_own_output_layout,
            hand_written_dpp_wave_scan_and_rare_scalar_instructions_match_the_cpu,
            f16_and_bf16_mfma_gemms_over_many_tiles_and_k_steps_match_the_cpu,
            buffer_resources_built_by_the_kernel_follow_the_out_of_range_rules,
            gws_semaphores_hand_items_from_producers_to_consumers_across_workgroups,
            gws_consumers_no_wave_can_release_are_a_deadlock_naming_the_resource_and_its_count,
        );
    };
    (@cases $engine:expr; $($case:ident,)*) => {
        $(
            #[test]
            fn $case() {
                $crate::$case(&$engine)
            }
        )*
    };
}

/// The bundled kernel `kernel` built for `target` (gfx90a or gfx942) and the device preset that runs it.
pub fn setup(kernel: &str, target: &str) -> (&'static DevicePreset, CodeObject) {
    let dev = DevicePreset::by_name(if target == "gfx942" { "mi300x" } else { "mi210" }).unwrap();
    let name = format!("{kernel}-{target}.co");
    let co = CodeObject::parse(test_kernels::by_name(&name).unwrap(), &name).unwrap();
    (dev, co)
}

/// Runs a dispatch at the host thread count its limits ask for (all threads when unset) and, from the same
/// buffer contents, on one host thread, and checks that both leave every buffer byte-identical and fail alike;
/// returns the statistics of the run at the asked count. Every kernel test goes through here, so each proves its
/// results independent of the thread count (and, under the JIT, equal to the interpreter's: see
/// jit/tests/kernels.rs).
fn run_kernel<E: Engine>(e: &E, d: KernelDispatch<'_>) -> Result<emu_core::engine::RunStats, EngineError> {
    let (mem, kernel) = (d.mem, d.kernel);
    let before = mem.snapshot_buffers().unwrap();
    let one = e.run(&KernelDispatch {
        limits: Limits {
            threads: Some(1),
            ..d.limits
        },
        ..d
    });
    if d.limits.threads == Some(1) {
        return one;
    }
    let after_one = mem.snapshot_buffers().unwrap();
    mem.restore_buffers(&before).unwrap();
    let asked = e.run(&d);
    let threads = d.limits.threads.map_or("all".to_string(), |t| t.to_string());
    if one.is_ok() && asked.is_ok() {
        assert!(
            mem.snapshot_buffers().unwrap() == after_one,
            "{}: results differ between 1 and {threads} host threads",
            kernel.name
        );
    }
    assert_eq!(
        one.is_ok(),
        asked.is_ok(),
        "{}: 1 and {threads} host threads disagree on failing",
        kernel.name
    );
    asked
}

fn upload(mem: &DeviceMemory, data: &[f32], label: &str) -> u64 {
    let a = mem.allocate(data.len() as u64 * 4, AllocKind::Buffer, label).unwrap();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    mem.write(a, &bytes).unwrap();
    a
}

fn download(mem: &DeviceMemory, addr: u64, n: usize) -> Vec<f32> {
    let mut b = vec![0u8; n * 4];
    mem.read(addr, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A new buffer on `mem` labelled `label`, holding `data`; its address.
pub fn upload_i32(mem: &DeviceMemory, data: &[i32], label: &str) -> u64 {
    let a = mem.allocate(data.len() as u64 * 4, AllocKind::Buffer, label).unwrap();
    mem.write(a, &data.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
        .unwrap();
    a
}

fn download_i32(mem: &DeviceMemory, addr: u64, n: usize) -> Vec<i32> {
    let mut b = vec![0u8; n * 4];
    mem.read(addr, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a: Vec<f32> = (0..n).map(|i| (i as f32) * 0.5 - 100.0).collect();
    let b: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 3.0).collect();
    (a, b)
}

pub fn vadd_matches_the_cpu_on_both_targets_with_a_partial_workgroup<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("vadd", target);
        let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
        let n = 1000;
        let (a, b) = inputs(n);
        let (da, db) = (upload(&mem, &a, "a"), upload(&mem, &b, "b"));
        let dc = upload(&mem, &vec![0.0; n], "c");
        let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
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
        let c = download(&mem, dc, n);
        assert_eq!(bits(&c), bits(&test_kernels::reference::vadd(&a, &b)), "{target}");
        assert_eq!(stats.workgroups, 4);
        assert_eq!(
            stats.waves,
            3 * 4 + 4,
            "232 work-items in the last workgroup need 4 waves"
        );
        assert!(stats.wave_instructions > stats.waves * 10);
    }
}

pub fn saxpy_matches_a_fused_multiply_add_reference<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("saxpy", target);
        let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
        let n = 777;
        let (x, y) = inputs(n);
        let (dx, dy) = (upload(&mem, &x, "x"), upload(&mem, &y, "y"));
        let alpha = 1.75f32;
        let shape = DispatchShape::new([n as u32, 1, 1], [128, 1, 1], dev).unwrap();
        let args = [
            ArgValue::F32(alpha),
            ArgValue::Pointer(dx),
            ArgValue::Pointer(dy),
            ArgValue::U32(n as u32),
        ];
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
        let out = download(&mem, dy, n);
        assert_eq!(
            bits(&out),
            bits(&test_kernels::reference::saxpy(alpha, &x, &y)),
            "{target}"
        );
    }
}

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

pub fn lds_tree_reduction_with_barriers_matches_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("reduce", target);
        let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
        let n = 1000;
        let (input, _) = inputs(n);
        let din = upload(&mem, &input, "in");
        let groups = n.div_ceil(256);
        let dout = upload(&mem, &vec![0.0; groups], "out");
        let shape = DispatchShape::new([(groups * 256) as u32, 1, 1], [256, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(din), ArgValue::Pointer(dout), ArgValue::U32(n as u32)];
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
        let got = download(&mem, dout, groups);
        assert_eq!(
            bits(&got),
            bits(&test_kernels::reference::reduce_sum(&input)),
            "{target}"
        );
        assert_eq!(stats.waves, groups as u64 * 4);
    }
}

pub fn results_do_not_depend_on_the_number_of_host_threads<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("reduce", target);
        let n = 64 * 256;
        let (input, _) = inputs(n);
        let mut outs = Vec::new();
        for threads in [1, 2, 4] {
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let din = upload(&mem, &input, "in");
            let dout = upload(&mem, &vec![0.0; 64], "out");
            let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
            let args = [ArgValue::Pointer(din), ArgValue::Pointer(dout), ArgValue::U32(n as u32)];
            let limits = Limits {
                threads: Some(threads),
                ..Limits::default()
            };
            let stats = run_kernel(
                e,
                KernelDispatch {
                    mem: &mem,
                    device: dev,
                    co: &co,
                    kernel: &co.kernels[0],
                    shape,
                    args: &args,
                    limits,
                },
            )
            .unwrap();
            outs.push((
                download(&mem, dout, 64).iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                stats,
            ));
        }
        assert!(
            outs.windows(2).all(|w| w[0] == w[1]),
            "{target}: 1, 2 and 4 threads must agree"
        );
    }
}

pub fn an_observer_sees_every_instruction_by_unit_without_changing_results<E: Engine>(e: &E) {
    use isa_amdgpu::table::Unit;
    use profiler_hooks::ClassCounter;
    let (dev, co) = setup("reduce", "gfx942");
    let n = 512;
    let (input, _) = inputs(n);
    let run = |counter: Option<&ClassCounter>| {
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let din = upload(&mem, &input, "in");
        let dout = upload(&mem, &[0.0; 2], "out");
        let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(din), ArgValue::Pointer(dout), ArgValue::U32(n as u32)];
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        };
        let stats = match counter {
            Some(c) => e.run_observed(&d, c),
            None => run_kernel(e, d),
        }
        .unwrap();
        (download(&mem, dout, 2), stats)
    };
    let counter = ClassCounter::default();
    let (observed, stats) = run(Some(&counter));
    let (plain, _) = run(None);
    assert_eq!(observed, plain);
    let counts = counter.counts();
    assert_eq!(
        counts.iter().map(|(_, n)| n).sum::<u64>(),
        stats.wave_instructions,
        "every instruction is seen once"
    );
    for unit in [Unit::Salu, Unit::Smem, Unit::Valu, Unit::Lds, Unit::Vmem, Unit::Branch] {
        assert!(counter.count(unit) > 0, "{unit:?} missing from {counts:?}");
    }
    assert!(counter.vector_lanes() > 0);
}

/// Records every lane access and the order in which waves issue; asks to switch waves after every instruction.
#[derive(Default)]
struct Recorder {
    accesses: std::sync::Mutex<Vec<(u32, emu_core::observe::LaneAccess)>>,
    order: std::sync::Mutex<Vec<u32>>,
}

impl emu_core::observe::Observer for Recorder {
    const WANTS_ACCESSES: bool = true;
    fn instruction(&self, ev: &emu_core::observe::InstEvent<'_>) {
        self.order.lock().unwrap().push(ev.wave);
        self.accesses
            .lock()
            .unwrap()
            .extend(ev.accesses.iter().map(|a| (ev.wave, a)));
    }
    fn switch_wave(&self, _ev: &emu_core::observe::InstEvent<'_>) -> bool {
        true
    }
}

pub fn an_observer_sees_each_lanes_addresses_and_can_interleave_waves_without_changing_results<E: Engine>(e: &E) {
    use emu_core::observe::{Dir, Space};
    let (dev, co) = setup("vadd", "gfx90a");
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 200; // one workgroup of 256: four waves, the last with 8 active lanes
    let (a, b) = inputs(n);
    let (da, db, dc) = (
        upload(&mem, &a, "a"),
        upload(&mem, &b, "b"),
        upload(&mem, &vec![0.0; n], "c"),
    );
    let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(dc),
        ArgValue::U32(n as u32),
    ];
    let rec = Recorder::default();
    e.run_observed(
        &KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
        &rec,
    )
    .unwrap();
    assert_eq!(
        bits(&download(&mem, dc, n)),
        bits(&test_kernels::reference::vadd(&a, &b))
    );
    let acc = rec.accesses.into_inner().unwrap();
    // each work-item i reads a[i] and b[i] and writes c[i], as lane i % 64 of wave i / 64
    for (base, dir) in [(da, Dir::Read), (db, Dir::Read), (dc, Dir::Write)] {
        let mut seen: Vec<u64> = acc
            .iter()
            .filter(|(_, x)| {
                x.space == Space::Global && x.dir == dir && (base..base + 4 * n as u64).contains(&x.address)
            })
            .map(|(w, x)| {
                assert_eq!(
                    (x.address - base) / 4,
                    *w as u64 * 64 + x.lane as u64,
                    "lane and address agree"
                );
                assert_eq!(x.bytes, 4);
                x.address
            })
            .collect();
        seen.sort();
        assert_eq!(seen, (0..n as u64).map(|i| base + 4 * i).collect::<Vec<_>>());
    }
    assert!(
        acc.iter().any(|(_, x)| x.space == Space::Scalar && x.dir == Dir::Read),
        "scalar kernarg loads are recorded too"
    );
    // with a switch after every instruction, consecutive instructions come from different waves
    let order = rec.order.into_inner().unwrap();
    let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        switches * 10 > order.len() * 7,
        "{switches} switches in {} instructions",
        order.len()
    );
}

pub fn divergent_control_flow_device_calls_64_bit_division_and_f64_match_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("divergence", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 700usize;
        let seeds: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761) >> (i % 23))
            .collect();
        let dseed = mem.allocate(n as u64 * 4, AllocKind::Buffer, "seed").unwrap();
        mem.write(dseed, &seeds.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
            .unwrap();
        let dout = mem.allocate(n as u64 * 8, AllocKind::Buffer, "out").unwrap();
        let shape = DispatchShape::new([n as u32, 1, 1], [128, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(dout),
            ArgValue::Pointer(dseed),
            ArgValue::U32(n as u32),
        ];
        let kernel = co.kernel("divergence").unwrap();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel,
                shape,
                args: &args,
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut raw = vec![0u8; n * 8];
        mem.read(dout, &mut raw).unwrap();
        let want = test_kernels::reference::divergence(&seeds);
        let bad: Vec<_> = (0..n)
            .filter_map(|i| {
                let got = u64::from_le_bytes(raw[8 * i..8 * i + 8].try_into().unwrap());
                (got != want[i]).then_some((i, seeds[i], got, want[i]))
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{target}: {} wrong, first (i, seed, got, want): {:?}",
            bad.len(),
            &bad[..bad.len().min(8)]
        );
    }
}

pub fn alu_loop_matches_the_cpu_and_signed_scalar_arithmetic_sets_scc<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("alu_loop", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 256usize;
        let iters = 37u32;
        let dout = upload(&mem, &vec![0.0; n], "out");
        let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &[ArgValue::Pointer(dout), ArgValue::U32(iters)],
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = download(&mem, dout, n);
        assert_eq!(
            bits(&got),
            bits(&test_kernels::reference::alu_loop(n, iters)),
            "{target}"
        );
    }
}

pub fn alu_mixed_integer_multiply_adds_beside_fmas_match_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("alu_mixed", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 256usize;
        let iters = 41u32;
        let dout = upload(&mem, &vec![0.0; n], "out");
        let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &[ArgValue::Pointer(dout), ArgValue::U32(iters)],
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = download(&mem, dout, n);
        assert_eq!(
            bits(&got),
            bits(&test_kernels::reference::alu_mixed(n, iters)),
            "{target}"
        );
    }
}

pub fn histogram_with_lds_and_global_atomics_counts_exactly_with_any_thread_count<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("histogram", target);
        let n = 100_003usize;
        let data: Vec<u8> = (0..n as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for threads in [1, 2] {
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let dd = mem.allocate(n as u64, AllocKind::Buffer, "data").unwrap();
            mem.write(dd, &data).unwrap();
            let dbins = mem.allocate(64 * 4, AllocKind::Buffer, "bins").unwrap();
            let grid = 16 * 256u32;
            let shape = DispatchShape::new([grid, 1, 1], [256, 1, 1], dev).unwrap();
            let args = [
                ArgValue::Pointer(dd),
                ArgValue::U32(n as u32),
                ArgValue::U32(grid),
                ArgValue::Pointer(dbins),
            ];
            let limits = Limits {
                threads: Some(threads),
                ..Limits::default()
            };
            run_kernel(
                e,
                KernelDispatch {
                    mem: &mem,
                    device: dev,
                    co: &co,
                    kernel: &co.kernels[0],
                    shape,
                    args: &args,
                    limits,
                },
            )
            .unwrap_or_else(|e| panic!("{target}: {e}"));
            let mut raw = [0u8; 256];
            mem.read(dbins, &mut raw).unwrap();
            let bins: Vec<u32> = raw
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            assert_eq!(
                bins,
                test_kernels::reference::histogram(&data),
                "{target}, {threads} threads"
            );
        }
    }
}

pub fn index_math_over_a_3d_grid_with_partial_workgroups_in_every_dimension<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("index3d", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = [37u32, 11, 5];
        let block = [16u32, 4, 2];
        let len = (n[0] * n[1] * n[2]) as usize;
        let dout = mem.allocate(len as u64 * 4, AllocKind::Buffer, "out").unwrap();
        let shape = DispatchShape::new(n, block, dev).unwrap();
        let args = [
            ArgValue::Pointer(dout),
            ArgValue::U32(n[0]),
            ArgValue::U32(n[1]),
            ArgValue::U32(n[2]),
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
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut raw = vec![0u8; len * 4];
        mem.read(dout, &mut raw).unwrap();
        let got: Vec<u32> = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(got, test_kernels::reference::index3d(n, block[0]), "{target}");
        assert_eq!(stats.workgroups, 3 * 3 * 3);
    }
}

pub fn cross_lane_permute_swizzle_readlane_and_ballot_match_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("shuffle", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 64 * 7usize;
        let input: Vec<i32> = (0..n as i32).map(|i| (i * 37 % 101) - 50).collect();
        let din = upload_i32(&mem, &input, "in");
        let dout = upload_i32(&mem, &vec![0; n], "out");
        let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &[ArgValue::Pointer(dout), ArgValue::Pointer(din)],
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = download_i32(&mem, dout, n);
        assert_eq!(got, test_kernels::reference::shuffle(&input), "{target}");
    }
}

pub fn dynamic_vector_element_access_in_vgpr_index_mode_matches_the_cpu<E: Engine>(e: &E) {
    // a uniform index (s_set_gpr_idx_on around v_mov_b32, reading and writing) and a per-lane one, several k
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("gpr_index", target);
        let f = co.kernel_function(&co.kernels[0]).unwrap();
        let t = isa_amdgpu::Target::from_name(target).unwrap();
        let uses = isa_amdgpu::listing::list(f.code(), f.address, t).iter().any(|l| {
            l.inst
                .as_ref()
                .is_ok_and(|i| i.info.opcode == isa_amdgpu::Opcode::SSetGprIdxOn)
        });
        assert!(uses, "{target}: the kernel uses VGPR index mode");
        for k in [0, 7, 30, 31 + 32] {
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let n = 64 * 3usize;
            let input: Vec<f32> = (0..32 * n).map(|i| i as f32 * 0.25 - 50.0).collect();
            let idx: Vec<i32> = (0..n as i32).map(|i| i * 13 % 97 - 40).collect();
            let din = upload(&mem, &input, "in");
            let didx = upload_i32(&mem, &idx, "idx");
            let dout = upload(&mem, &vec![0.0; 2 * n], "out");
            let dio = upload(&mem, &vec![0.0; 32 * n], "io");
            let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
            let args = [
                ArgValue::Pointer(din),
                ArgValue::Pointer(didx),
                ArgValue::Pointer(dout),
                ArgValue::Pointer(dio),
                ArgValue::I32(k),
            ];
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
            .unwrap_or_else(|e| panic!("{target}: {e}"));
            let (out, io) = test_kernels::reference::gpr_index(&input, &idx, k);
            assert_eq!(bits(&download(&mem, dout, 2 * n)), bits(&out), "{target} k={k}: out");
            assert_eq!(bits(&download(&mem, dio, 32 * n)), bits(&io), "{target} k={k}: io");
        }
    }
}

pub fn dpp_row_shifts_quad_permutes_mirrors_and_row_masks_match_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("dpp", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 64 * 3usize;
        let input: Vec<i32> = (0..n as i32).map(|i| (i * 53 % 97) - 40).collect();
        let din = upload_i32(&mem, &input, "in");
        let dout = upload_i32(&mem, &vec![0; n], "out");
        let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &[ArgValue::Pointer(din), ArgValue::Pointer(dout)],
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = download_i32(&mem, dout, n);
        assert_eq!(got, test_kernels::reference::dpp(&input), "{target}");
    }
}

/// f16 bits of a value that f16 holds exactly (small multiples of 1/4 here).
fn f16_bits(x: f32) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let b = x.to_bits();
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    assert!(
        (1..31).contains(&exp) && b & 0x1fff == 0,
        "{x} is not an exact normal f16"
    );
    ((b >> 16) & 0x8000 | (exp as u32) << 10 | (b >> 13) & 0x3ff) as u16
}

pub fn mfma_f16_bf16_and_f32_in_every_single_block_shape_with_agpr_accumulators_match_the_cpu<E: Engine>(e: &E) {
    // (kernel, m, n, k, element bytes); values are small multiples of 1/4 so every sum is exact
    for target in ["gfx90a", "gfx942"] {
        for (kernel, m, n, k, elem) in [
            ("mfma_f16", 32, 32, 8, 2),
            ("mfma_f16_16", 16, 16, 16, 2),
            ("mfma_bf16", 16, 16, 16, 2),
            ("mfma_bf16_32", 32, 32, 8, 2),
            ("mfma_f32", 32, 32, 2, 4),
            ("mfma_f32_16", 16, 16, 4, 4),
        ] {
            let (dev, co) = setup("mfma", target);
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let (p, r) = (m * k / 64, m * n / 64);
            let a: Vec<f32> = (0..64 * p).map(|i| ((i * 37 % 29) as f32 - 14.0) * 0.25).collect();
            let b: Vec<f32> = (0..64 * p).map(|i| ((i * 11 % 23) as f32 - 11.0) * 0.5).collect();
            let c: Vec<f32> = (0..64 * r).map(|i| (i % 13) as f32 - 6.0).collect();
            let pack = |v: &[f32]| -> Vec<u8> {
                match (kernel, elem) {
                    ("mfma_f16" | "mfma_f16_16", _) => v.iter().flat_map(|x| f16_bits(*x).to_le_bytes()).collect(),
                    (_, 2) => v
                        .iter()
                        .flat_map(|x| ((x.to_bits() >> 16) as u16).to_le_bytes())
                        .collect(),
                    _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                }
            };
            let (pa, pb) = (pack(&a), pack(&b));
            let da = mem.allocate(pa.len() as u64, AllocKind::Buffer, "a").unwrap();
            mem.write(da, &pa).unwrap();
            let db = mem.allocate(pb.len() as u64, AllocKind::Buffer, "b").unwrap();
            mem.write(db, &pb).unwrap();
            let dc = upload(&mem, &c, "c");
            let kd = co.kernel(kernel).unwrap().clone();
            let shape = DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap();
            let args = [ArgValue::Pointer(da), ArgValue::Pointer(db), ArgValue::Pointer(dc)];
            run_kernel(
                e,
                KernelDispatch {
                    mem: &mem,
                    device: dev,
                    co: &co,
                    kernel: &kd,
                    shape,
                    args: &args,
                    limits: Limits::default(),
                },
            )
            .unwrap_or_else(|e| panic!("{target} {kernel}: {e}"));
            let want = test_kernels::reference::mfma(m, n, k, &a, &b, &c);
            assert_eq!(bits(&download(&mem, dc, 64 * r)), bits(&want), "{target} {kernel}");
        }
    }
}

/// Distance in units in the last place between two finite f32 of the same sign (or ±0).
fn ulps(a: f32, b: f32) -> u32 {
    let key = |x: f32| {
        if x.to_bits() >> 31 == 1 {
            -((x.to_bits() & 0x7fff_ffff) as i64)
        } else {
            x.to_bits() as i64
        }
    };
    (key(a) - key(b)).unsigned_abs().min(u32::MAX as u64) as u32
}

pub fn device_library_sin_exp_log_sqrt_pow_stay_within_their_ulp_bounds<E: Engine>(e: &E) {
    // OCML's f32 functions over the ISA's v_exp/v_log/v_sqrt/v_rcp: bounds per function, in ULP
    let bounds = [("sin", 2), ("exp", 2), ("log", 2), ("sqrt", 1), ("pow", 2)];
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("math", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 1000usize;
        // wide ranges: large arguments for sin's reduction, exp toward overflow and underflow, tiny values
        let x: Vec<f32> = (0..n).map(|i| ((i as f32 - 500.0) * 0.173).powi(3) / 97.0).collect();
        let dx = upload(&mem, &x, "x");
        let dout = upload(&mem, &vec![0.0; 5 * n], "out");
        let shape = DispatchShape::new([n as u32, 1, 1], [128, 1, 1], dev).unwrap();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &[ArgValue::Pointer(dx), ArgValue::Pointer(dout)],
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = download(&mem, dout, 5 * n);
        let want = test_kernels::reference::math(&x);
        for (j, (name, bound)) in bounds.iter().enumerate() {
            let worst = (0..n)
                .map(|i| (ulps(got[5 * i + j], want[5 * i + j]), i))
                .max()
                .unwrap();
            let i = worst.1;
            assert!(
                worst.0 <= *bound,
                "{target} {name}({}) = {} want {} ({} ulp)",
                x[i],
                got[5 * i + j],
                want[5 * i + j],
                worst.0
            );
        }
        // infinities and zero where the functions give them
        assert!(
            got.iter().any(|v| v.is_infinite()) && got.contains(&0.0),
            "{target}: exp over- and underflow"
        );
    }
}

pub fn compare_and_swap_loops_on_32_and_64_bit_values_lose_no_update_with_any_thread_count<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        for threads in [1, 2] {
            let (dev, co) = setup("cas", target);
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let n = 64 * 20 + 17;
            let input: Vec<f32> = (0..n).map(|i| ((i * 7) % 19) as f32 - 9.0).collect();
            let din = upload(&mem, &input, "in");
            let bins = upload(&mem, &[0.0; 4], "bins");
            let wide = mem.allocate(16, AllocKind::Buffer, "wide").unwrap();
            mem.write(wide, &[0u8; 16]).unwrap();
            let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
            let args = [
                ArgValue::Pointer(din),
                ArgValue::Pointer(bins),
                ArgValue::Pointer(wide),
                ArgValue::U32(n as u32),
            ];
            let limits = Limits {
                threads: Some(threads),
                ..Limits::default()
            };
            run_kernel(
                e,
                KernelDispatch {
                    mem: &mem,
                    device: dev,
                    co: &co,
                    kernel: &co.kernels[0],
                    shape,
                    args: &args,
                    limits,
                },
            )
            .unwrap_or_else(|e| panic!("{target}: {e}"));
            let (want_bins, want_wide) = test_kernels::reference::cas(&input);
            assert_eq!(download(&mem, bins, 4), want_bins, "{target}, {threads} threads");
            let mut raw = [0u8; 16];
            mem.read(wide, &mut raw).unwrap();
            let got = [
                u64::from_le_bytes(raw[..8].try_into().unwrap()),
                u64::from_le_bytes(raw[8..].try_into().unwrap()),
            ];
            assert_eq!(got, want_wide, "{target}, {threads} threads");
        }
    }
}

/// Workgroups that spin on flags later workgroups set (reverse_chain) complete on one host thread as on all: a
/// wave going round a polling loop leaves its host thread to other workgroups, as a GPU holds every workgroup of
/// so small a grid at once. Run one workgroup at a time to its end, the first would spin to the limit.
pub fn workgroups_spinning_on_flags_that_later_workgroups_set_complete_on_one_host_thread<E: Engine>(e: &E) {
    chain_of_flags(e, "reverse_chain", 64);
}

/// A wave that spins on an LDS word another wave of its workgroup writes (lds_handoff) is polling too: the
/// writer waits on a later workgroup, so the reader's turn must end for that workgroup to run. On one host thread,
/// a reader that kept its turn would spin to the limit; rocSPARSE's triangular-solve analysis waits this way.
pub fn waves_spinning_on_the_lds_while_their_workgroup_waits_on_a_later_one_complete_on_one_host_thread<E: Engine>(
    e: &E,
) {
    chain_of_flags(e, "lds_handoff", 128);
}

/// Runs `kernel` (flags, n), whose workgroup g waits for workgroup g + 1's flag, over four workgroups of `block`
/// work-items on both targets: each flag must end as the number of workgroups from its own to the last.
fn chain_of_flags<E: Engine>(e: &E, kernel: &str, block: u32) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup(kernel, target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 4u32;
        let flags = upload_i32(&mem, &vec![0; n as usize], "flags");
        let shape = DispatchShape::new([n * block, 1, 1], [block, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(flags), ArgValue::U32(n)];
        let limits = Limits {
            max_wave_instructions: 1_000_000,
            ..Limits::default()
        };
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &args,
                limits,
            },
        )
        .unwrap_or_else(|e| panic!("{kernel}, {target}: {e}"));
        assert_eq!(
            download_i32(&mem, flags, n as usize),
            vec![4, 3, 2, 1],
            "{kernel}, {target}"
        );
    }
}

/// A 64-bit value one workgroup publishes while three others read it, on one and on two host threads: no read
/// sees the halves of two different stores (wavejit's JIT once loaded and stored a lane's two dwords apart, and
/// on two host threads about one read in ten of rocPRIM's look-back flags came back torn).
pub fn a_lanes_64_bit_load_never_sees_half_of_another_workgroups_64_bit_store<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("wide_publish", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let (rounds, readers) = (50_000u32, 3u32);
        let cell = upload_bytes(&mem, &[0u8; 8], "cell");
        let torn = upload_bytes(&mem, &vec![0xffu8; readers as usize * 64 * 4], "torn");
        let shape = DispatchShape::new([(readers + 1) * 64, 1, 1], [64, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(cell), ArgValue::Pointer(torn), ArgValue::U32(rounds)];
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &args,
                limits: Limits {
                    threads: Some(2),
                    ..Limits::default()
                },
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let raw = download_bytes(&mem, torn, readers as usize * 64 * 4);
        let counts: Vec<u32> = raw
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert!(
            counts.iter().all(|&c| c == 0),
            "{target}: torn reads per lane {:?}",
            counts.iter().filter(|&&c| c != 0).collect::<Vec<_>>()
        );
        let last = download_bytes(&mem, cell, 8);
        assert_eq!(
            u64::from_le_bytes(last.try_into().unwrap()),
            (rounds as u64) << 32 | rounds as u64,
            "{target}: the last value published"
        );
    }
}

pub fn private_arrays_in_scratch_memory_match_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("private_array", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let items = 64 * 5usize;
        let idx: Vec<i32> = (0..97).map(|i| (i * 29 + 3) % 200).collect();
        let didx = mem.allocate(idx.len() as u64 * 4, AllocKind::Buffer, "idx").unwrap();
        mem.write(didx, &idx.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
            .unwrap();
        let dout = upload(&mem, &vec![0.0; items], "out");
        let shape = DispatchShape::new([items as u32, 1, 1], [64, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(dout),
            ArgValue::Pointer(didx),
            ArgValue::U32(idx.len() as u32),
        ];
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
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(
            bits(&download(&mem, dout, items)),
            bits(&test_kernels::reference::private_array(&idx, items)),
            "{target}"
        );
    }
}

pub fn every_workgroup_starts_with_zeroed_private_memory_whichever_ran_before_on_its_host_thread<E: Engine>(e: &E) {
    // each work-item reads a word of its private array before writing, then fills the array with its id + 1:
    // every read must be 0 (as the first workgroup's), though later workgroups run on private memory an
    // earlier one on the same host thread left full; 64 words (stores clear it) and 1,100 (pages given back)
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("private_fresh", target);
        for (kernel, k) in [
            ("private_fresh_small", 5u32),
            ("private_fresh_small", 63),
            ("private_fresh_large", 1099),
            ("private_fresh_large", 321),
        ] {
            let kernel = co.kernels.iter().find(|x| x.name == kernel).unwrap();
            // 128-item workgroups (two waves) and a last one of 64 (one)
            let items = 128 * 6 + 64;
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let out = mem.allocate(items as u64 * 4, AllocKind::Buffer, "out").unwrap();
            mem.write(out, &vec![0xa5; items * 4]).unwrap();
            let shape = DispatchShape::new([items as u32, 1, 1], [128, 1, 1], dev).unwrap();
            let args = [ArgValue::Pointer(out), ArgValue::U32(k)];
            for threads in [1, 2] {
                let limits = Limits {
                    threads: Some(threads),
                    ..Limits::default()
                };
                run_kernel(
                    e,
                    KernelDispatch {
                        mem: &mem,
                        device: dev,
                        co: &co,
                        kernel,
                        shape,
                        args: &args,
                        limits,
                    },
                )
                .unwrap_or_else(|e| panic!("{target}: {e}"));
                let raw = download_bytes(&mem, out, items * 4);
                let seen: Vec<(usize, u32)> = raw
                    .chunks(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .enumerate()
                    .filter(|&(_, v)| v != 0)
                    .collect();
                assert!(
                    seen.is_empty(),
                    "{target} {} k={k}, {threads} threads: items that read another's private word: {:?}",
                    kernel.name,
                    &seen[..seen.len().min(8)]
                );
            }
        }
    }
}

pub fn prefix_scan_in_lds_matches_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("scan", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 256 * 3usize;
        let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
        let din = mem.allocate(n as u64 * 4, AllocKind::Buffer, "in").unwrap();
        mem.write(din, &input.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
            .unwrap();
        let dout = mem.allocate(n as u64 * 4, AllocKind::Buffer, "out").unwrap();
        let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape,
                args: &[ArgValue::Pointer(din), ArgValue::Pointer(dout)],
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut raw = vec![0u8; n * 4];
        mem.read(dout, &mut raw).unwrap();
        let got: Vec<u32> = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(got, test_kernels::reference::scan(&input), "{target}");
    }
}

pub fn tiled_sgemm_with_lds_matches_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("sgemm", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 48usize;
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 37 % 101) as f32 - 50.0) / 16.0).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 53 % 97) as f32 - 48.0) / 8.0).collect();
        let (da, db) = (upload(&mem, &a, "A"), upload(&mem, &b, "B"));
        let dc = upload(&mem, &vec![0.0; n * n], "C");
        let shape = DispatchShape::new([n as u32, n as u32, 1], [16, 16, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(da),
            ArgValue::Pointer(db),
            ArgValue::Pointer(dc),
            ArgValue::U32(n as u32),
        ];
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
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(
            bits(&download(&mem, dc, n * n)),
            bits(&test_kernels::reference::sgemm(&a, &b, n)),
            "{target}"
        );
    }
}

pub fn wide_lds_accesses_move_float4_and_double_tiles<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("lds_wide", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let n = 64 * 3usize;
        let input: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, -(i as f32), i as f32 * 0.5, 7.0]).collect();
        let d: Vec<f64> = (0..n).map(|i| i as f64 * 1.25 - 3.0).collect();
        let flat: Vec<f32> = input.iter().flatten().copied().collect();
        let din4 = upload(&mem, &flat, "in");
        let dout4 = upload(&mem, &vec![0.0; n * 4], "out");
        let dd = mem.allocate(n as u64 * 8, AllocKind::Buffer, "din").unwrap();
        mem.write(dd, &d.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
            .unwrap();
        let ddo = mem.allocate(n as u64 * 8, AllocKind::Buffer, "dout").unwrap();
        let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(din4),
            ArgValue::Pointer(dout4),
            ArgValue::Pointer(dd),
            ArgValue::Pointer(ddo),
        ];
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
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let (want4, wantd) = test_kernels::reference::lds_wide(&input, &d);
        let want_flat: Vec<f32> = want4.iter().flatten().copied().collect();
        assert_eq!(
            bits(&download(&mem, dout4, n * 4)),
            bits(&want_flat),
            "{target}: float4"
        );
        let mut raw = vec![0u8; n * 8];
        mem.read(ddo, &mut raw).unwrap();
        let got: Vec<f64> = raw
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, wantd, "{target}: double");
    }
}

fn upload_bytes(mem: &DeviceMemory, bytes: &[u8], label: &str) -> u64 {
    let a = mem
        .allocate(bytes.len().max(1) as u64, AllocKind::Buffer, label)
        .unwrap();
    mem.write(a, bytes).unwrap();
    a
}

fn download_bytes(mem: &DeviceMemory, addr: u64, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    mem.read(addr, &mut b).unwrap();
    b
}

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A pseudo-random bit pattern stream (xorshift), to reach every exponent and sign.
fn bit_patterns(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}

pub fn hip_ieee_division_is_correctly_rounded_in_f32_and_f64_including_subnormals_and_special_cases<E: Engine>(e: &E) {
    // v_div_scale / v_rcp / v_div_fmas / v_div_fixup: the compiler's sequence must give exactly a / b
    let specials32 = [
        0.0f32,
        -0.0,
        1.0,
        -3.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-45,
        f32::MAX,
        7e-39,
    ];
    let specials64 = [
        0.0f64,
        -0.0,
        1.0,
        -3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        1e-310,
    ];
    let mut a: Vec<f32> = specials32.iter().flat_map(|&x| specials32.map(|_| x)).collect();
    let mut b: Vec<f32> = specials32.iter().flat_map(|_| specials32).collect();
    let mut c: Vec<f64> = specials64.iter().flat_map(|&x| specials64.map(|_| x)).collect();
    let mut d: Vec<f64> = specials64.iter().flat_map(|_| specials64).collect();
    let bits = bit_patterns(0x9e37_79b9_7f4a_7c15, 8000);
    for w in bits.chunks(2) {
        a.push(f32::from_bits(w[0] as u32));
        b.push(f32::from_bits((w[1] >> 32) as u32));
        // f64 operands with exponents within 2^±900 of each other: normal quotients (subnormal f64
        // quotients are rounded twice by the model's v_div_fmas_f64, see lanefn)
        let e = |x: u64| (x & 0x800f_ffff_ffff_ffff) | ((x >> 52 & 0x3ff) + 0x200) << 52;
        c.push(f64::from_bits(e(w[0])));
        d.push(f64::from_bits(e(w[1].rotate_left(17))));
    }
    let n = a.len();
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("divide", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let (da, db, dq) = (
            upload(&mem, &a, "a"),
            upload(&mem, &b, "b"),
            upload(&mem, &vec![0.0; n], "q"),
        );
        let (dc, dd) = (
            upload_bytes(&mem, &f64_bytes(&c), "c"),
            upload_bytes(&mem, &f64_bytes(&d), "d"),
        );
        let dr = upload_bytes(&mem, &vec![0; 8 * n], "r");
        let kd = co.kernel("divide").unwrap().clone();
        let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
        let args = [da, db, dq, dc, dd, dr].map(ArgValue::Pointer);
        let args = [&args[..], &[ArgValue::U32(n as u32)]].concat();
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &kd,
                shape,
                args: &args,
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let (q, r) = (download(&mem, dq, n), f64s(&download_bytes(&mem, dr, 8 * n)));
        let (wq, wr) = test_kernels::reference::divide(&a, &b, &c, &d);
        for i in 0..n {
            let same32 = q[i].to_bits() == wq[i].to_bits() || (q[i].is_nan() && wq[i].is_nan());
            assert!(
                same32,
                "{target}: {:e} / {:e} = {:e}, want {:e}",
                a[i], b[i], q[i], wq[i]
            );
            let same64 = r[i].to_bits() == wr[i].to_bits() || (r[i].is_nan() && wr[i].is_nan());
            assert!(
                same64,
                "{target}: {:e} / {:e} = {:e}, want {:e}",
                c[i], d[i], r[i], wr[i]
            );
        }
        assert!(
            q.iter().any(|x| x.is_subnormal()),
            "subnormal f32 quotients are covered"
        );
    }
}

/// Distance in units in the last place between two f64 of the same sign.
fn ulps64(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        if x.to_bits() >> 63 == 1 {
            -((x.to_bits() & !(1 << 63)) as i128)
        } else {
            x.to_bits() as i128
        }
    };
    (key(a) - key(b)).unsigned_abs().min(u64::MAX as u128) as u64
}

pub fn hip_f64_sqrt_rsqrt_exp_log_sin_floor_min_max_ldexp_stay_within_their_ulp_bounds<E: Engine>(e: &E) {
    // sqrt, exp, log, sin through OCML (v_rsq_f64, v_trig_preop_f64, v_frexp_*, v_ldexp, v_cmp_class...)
    let bounds = [
        ("sqrt", 1),
        ("rsqrt", 2),
        ("exp", 1),
        ("log", 1),
        ("sin", 1),
        ("floor", 0),
        ("min+max", 0),
        ("ldexp", 0),
    ];
    let n = 1200usize;
    let mut x: Vec<f64> = (0..n).map(|i| ((i as f64 - 600.0) * 0.0917).powi(3) / 13.0).collect();
    // large arguments for sin's Payne-Hanek reduction, tiny and huge magnitudes for the rest
    x[..6].copy_from_slice(&[1e15, -3.5e22, 6.0e100, 1e-300, 2.5e-310, 7e300]);
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("divide", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let dx = upload_bytes(&mem, &f64_bytes(&x), "x");
        let dout = upload_bytes(&mem, &vec![0; 64 * n], "out");
        let kd = co.kernel("f64_math").unwrap().clone();
        let shape = DispatchShape::new([n as u32, 1, 1], [128, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(dx), ArgValue::Pointer(dout), ArgValue::U32(n as u32)];
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &kd,
                shape,
                args: &args,
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = f64s(&download_bytes(&mem, dout, 64 * n));
        let want = test_kernels::reference::f64_math(&x);
        for (j, (name, bound)) in bounds.iter().enumerate() {
            for i in 0..n {
                let (g, w) = (got[8 * i + j], want[8 * i + j]);
                let ok = (g.is_nan() && w.is_nan()) || g == w || ulps64(g, w) <= *bound;
                assert!(
                    ok,
                    "{target} {name}({:e}) = {g:e}, want {w:e} ({} ulp)",
                    x[i],
                    ulps64(g, w)
                );
            }
        }
    }
}

pub fn hip_f16_arithmetic_rounds_once_like_ieee_half_precision<E: Engine>(e: &E) {
    let n = 3000usize;
    let bits = bit_patterns(0x2545_f491_4f6c_dd1d, n);
    // all f16 bit patterns but NaN-heavy exponents thinned out; f16 and i16 arrays from the same stream
    let a: Vec<u16> = bits.iter().map(|w| *w as u16).collect();
    let b: Vec<u16> = bits.iter().map(|w| (*w >> 16) as u16).collect();
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("half", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let le = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (da, db) = (upload_bytes(&mem, &le(&a), "a"), upload_bytes(&mem, &le(&b), "b"));
        let dout = upload_bytes(&mem, &vec![0; 12 * n], "out");
        let kd = co.kernel("half_math").unwrap().clone();
        let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(da),
            ArgValue::Pointer(db),
            ArgValue::Pointer(dout),
            ArgValue::U32(n as u32),
        ];
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &kd,
                shape,
                args: &args,
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let raw = download_bytes(&mem, dout, 12 * n);
        let got: Vec<u16> = raw.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        let want = test_kernels::reference::half_math(&a, &b);
        let nan = |h: u16| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
        for i in 0..6 * n {
            assert!(
                got[i] == want[i] || (nan(got[i]) && nan(want[i])),
                "{target}: item {i} (x {:#x}, y {:#x}): {:#x} want {:#x}",
                a[i / 6],
                b[i / 6],
                got[i],
                want[i]
            );
        }
    }
}

pub fn hip_16_and_8_bit_integer_arithmetic_with_sdwa_selects_matches_the_cpu<E: Engine>(e: &E) {
    let n = 2000usize;
    let bits = bit_patterns(0x1234_5678_9abc_def1, n);
    let a: Vec<i16> = bits.iter().map(|w| *w as i16).collect();
    let b: Vec<u8> = bits.iter().map(|w| (*w >> 20) as u8).collect();
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("half", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let da = upload_bytes(&mem, &a.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(), "a");
        let db = upload_bytes(&mem, &b, "b");
        let (ds, dc) = (
            upload_bytes(&mem, &vec![0; 4 * n], "s"),
            upload_bytes(&mem, &vec![0; n], "c"),
        );
        let kd = co.kernel("short_math").unwrap().clone();
        let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(da),
            ArgValue::Pointer(db),
            ArgValue::Pointer(ds),
            ArgValue::Pointer(dc),
            ArgValue::U32(n as u32),
        ];
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &kd,
                shape,
                args: &args,
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let s: Vec<i16> = download_bytes(&mem, ds, 4 * n)
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        let c = download_bytes(&mem, dc, n);
        let (ws, wc) = test_kernels::reference::short_math(&a, &b);
        assert_eq!(s, ws, "{target}");
        assert_eq!(c, wc, "{target}");
    }
}

pub fn f64_mfma_gemm_16x16x16_matches_the_cpu_with_its_own_output_layout<E: Engine>(e: &E) {
    let a: Vec<f64> = (0..256).map(|i| ((i * 37 % 29) as f64 - 14.0) * 0.25).collect();
    let b: Vec<f64> = (0..256).map(|i| ((i * 11 % 23) as f64 - 11.0) * 0.5).collect();
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("mfma_f64", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let (da, db) = (
            upload_bytes(&mem, &f64_bytes(&a), "a"),
            upload_bytes(&mem, &f64_bytes(&b), "b"),
        );
        let dc = upload_bytes(&mem, &[0; 2048], "c");
        let kd = co.kernel("dgemm16").unwrap().clone();
        let shape = DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(da), ArgValue::Pointer(db), ArgValue::Pointer(dc)];
        run_kernel(
            e,
            KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &kd,
                shape,
                args: &args,
                limits: Limits::default(),
            },
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(
            f64s(&download_bytes(&mem, dc, 2048)),
            test_kernels::reference::dgemm16(&a, &b),
            "{target}"
        );
    }
}

pub fn hand_written_dpp_wave_scan_and_rare_scalar_instructions_match_the_cpu<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        for first in [0x0000_1234u32, 0x8000_0000, 0, 0xffff_ffff] {
            let (dev, co) = setup("dpp_scan", target);
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let mut input: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(0x9e37_79b9) >> 7).collect();
            (input[0], input[1]) = (first, first.rotate_left(13) ^ 0xf000_0001);
            // (an SGPR offset read as signed would send the SMEM load 4 GiB below `in`, into unmapped memory)
            let din = upload_i32(&mem, &input.iter().map(|x| *x as i32).collect::<Vec<_>>(), "in");
            let dout = upload_i32(&mem, &[0; 70], "out");
            let shape = DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap();
            run_kernel(
                e,
                KernelDispatch {
                    mem: &mem,
                    device: dev,
                    co: &co,
                    kernel: &co.kernels[0],
                    shape,
                    args: &[ArgValue::Pointer(din), ArgValue::Pointer(dout)],
                    limits: Limits::default(),
                },
            )
            .unwrap_or_else(|e| panic!("{target}: {e}"));
            let got: Vec<u32> = download_i32(&mem, dout, 70).into_iter().map(|x| x as u32).collect();
            assert_eq!(
                got,
                test_kernels::reference::dpp_scan(&input),
                "{target} in[0] = {first:#x}"
            );
        }
    }
}

pub fn f16_and_bf16_mfma_gemms_over_many_tiles_and_k_steps_match_the_cpu<E: Engine>(e: &E) {
    let (m, n, k) = (96usize, 64usize, 48usize);
    // multiples of 1/4 in [-4, 4): every product and partial sum is exact in f32, whatever the order
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 37 % 32) as f32 - 16.0) * 0.25).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 11 % 29) as f32 - 14.0) * 0.25).collect();
    let want = test_kernels::reference::matmul(&a, &b, m, n, k);
    for target in ["gfx90a", "gfx942"] {
        for (kernel, bf16) in [("hgemm", false), ("bgemm", true)] {
            let (dev, co) = setup("mfma_gemm", target);
            let mem = DeviceMemory::new(1 << 30).unwrap();
            let pack = |v: &[f32]| -> Vec<u8> {
                v.iter()
                    .flat_map(|x| {
                        if bf16 {
                            ((x.to_bits() >> 16) as u16).to_le_bytes()
                        } else {
                            f16_bits(*x).to_le_bytes()
                        }
                    })
                    .collect()
            };
            let (da, db) = (upload_bytes(&mem, &pack(&a), "a"), upload_bytes(&mem, &pack(&b), "b"));
            let dc = upload(&mem, &vec![0.0; m * n], "c");
            let kd = co.kernel(kernel).unwrap().clone();
            let tiles = (m / 32 * (n / 32)) as u32;
            let shape = DispatchShape::new([64 * tiles, 1, 1], [64, 1, 1], dev).unwrap();
            let args = [
                ArgValue::Pointer(da),
                ArgValue::Pointer(db),
                ArgValue::Pointer(dc),
                ArgValue::U32(n as u32),
                ArgValue::U32(k as u32),
            ];
            run_kernel(
                e,
                KernelDispatch {
                    mem: &mem,
                    device: dev,
                    co: &co,
                    kernel: &kd,
                    shape,
                    args: &args,
                    limits: Limits::default(),
                },
            )
            .unwrap_or_else(|e| panic!("{target} {kernel}: {e}"));
            assert_eq!(bits(&download(&mem, dc, m * n)), bits(&want), "{target} {kernel}");
        }
    }
}

pub fn buffer_resources_built_by_the_kernel_follow_the_out_of_range_rules<E: Engine>(e: &E) {
    // 256 work-items; the input resource covers 150 floats (the allocation too: reading past it would fault),
    // the output resources 200 elements of 256-element buffers
    let (items, n_in, n_out) = (256usize, 150usize, 200usize);
    let input: Vec<f32> = (0..n_in).map(|i| i as f32 * 1.25 - 40.0).collect();
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("buffer", target);
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let din = upload(&mem, &input, "in");
        let mut out = vec![-7.0f32; items];
        let mut bytes = vec![0xeeu8; items];
        let (dout, dbytes) = (upload(&mem, &out, "out"), upload_bytes(&mem, &bytes, "bytes"));
        let shape = DispatchShape::new([items as u32, 1, 1], [128, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(din),
            ArgValue::Pointer(dout),
            ArgValue::Pointer(dbytes),
            ArgValue::U32(n_in as u32),
            ArgValue::U32(n_out as u32),
        ];
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
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        test_kernels::reference::buffer_ops(&input, n_out, &mut out, &mut bytes);
        assert_eq!(bits(&download(&mem, dout, items)), bits(&out), "{target}");
        assert_eq!(download_bytes(&mem, dbytes, items), bytes, "{target}");
    }
}

/// Runs `gws_sema` (test-kernels/src/kernels/gws_sema.cl) with 3 producer/consumer pairs of 5 items each (base 11) on
/// `target`, with the releaser workgroup or without it; returns the outcome and (items, out, woke[0]).
fn gws_sema<E: Engine>(
    e: &E,
    target: &str,
    releaser: bool,
) -> (Result<emu_core::engine::RunStats, EngineError>, Vec<u32>, Vec<u32>, u32) {
    let (dev, co) = setup("gws_sema", target);
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let (pairs, per) = (3u32, 5u32);
    let n = (pairs * per) as usize;
    let items = upload_i32(&mem, &vec![0; n], "items");
    let out = upload_i32(&mem, &vec![0; n], "out");
    let woke = upload_i32(&mem, &[0], "woke");
    let groups = 2 * pairs + releaser as u32;
    let shape = DispatchShape::new([groups * 64, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(items),
        ArgValue::Pointer(out),
        ArgValue::Pointer(woke),
        ArgValue::U32(pairs),
        ArgValue::U32(per),
        ArgValue::U32(groups),
        ArgValue::U32(11),
    ];
    let r = run_kernel(
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
    );
    let u = |v: Vec<i32>| v.into_iter().map(|x| x as u32).collect::<Vec<u32>>();
    (
        r,
        u(download_i32(&mem, items, n)),
        u(download_i32(&mem, out, n)),
        download_i32(&mem, woke, 1)[0] as u32,
    )
}

pub fn gws_semaphores_hand_items_from_producers_to_consumers_across_workgroups<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (r, items, out, woke) = gws_sema(e, target, true);
        let stats = r.unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(stats.workgroups, 7);
        let (want_items, want_out, want_woke) = test_kernels::reference::gws_sema(3, 5, 11);
        assert_eq!(items, want_items, "{target}");
        assert_eq!(
            out, want_out,
            "{target}: every consumer read its items after their producer's sema_v/sema_br"
        );
        assert_eq!(woke, want_woke, "{target}: ds_gws_sema_release_all woke every consumer");
    }
}

pub fn gws_consumers_no_wave_can_release_are_a_deadlock_naming_the_resource_and_its_count<E: Engine>(e: &E) {
    for target in ["gfx90a", "gfx942"] {
        let (r, items, out, woke) = gws_sema(e, target, false);
        let Err(EngineError::GridSync { kernel, what }) = r else {
            panic!("{target}: {r:?}")
        };
        assert_eq!(kernel, "gws_sema");
        assert!(
            what.starts_with("grid-wide sync never completes: resource 63: 3 wave(s) wait at ds_gws_sema_p with its count at 0 (workgroup [0, 0, 0] wave 0, workgroup [1, 0, 0] wave 0, workgroup [2, 0, 0] wave 0)"),
            "{target}: {what}"
        );
        assert!(
            what.ends_with("of the rest, 3 wave(s) have ended and 0 wait at s_barrier"),
            "{target}: {what}"
        );
        // the items went through before the consumers got stuck
        let (want_items, want_out, _) = test_kernels::reference::gws_sema(3, 5, 11);
        assert_eq!((items, out, woke), (want_items, want_out, 0), "{target}");
    }
}

#[cfg(test)]
mod tests {
    /// The cases `tests!` lists are the crate's case functions, in the same order.
    #[test]
    fn the_macro_lists_every_case() {
        let src = include_str!("lib.rs");
        let listed: Vec<&str> = src
            .split_once("@cases $engine;")
            .and_then(|(_, rest)| rest.split_once(");"))
            .expect("the list in tests!")
            .0
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        // a case is a public function generic over the engine (rustfmt may break its signature over lines)
        let cases: Vec<&str> = src
            .split("\npub fn ")
            .skip(1)
            .filter(|f| f.split_once('{').is_some_and(|(sig, _)| sig.contains("E: Engine")))
            .map(|f| &f[..f.find('<').unwrap()])
            .collect();
        assert_eq!(cases.len(), 43);
        assert_eq!(listed, cases);
    }
}
