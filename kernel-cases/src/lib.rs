//! The bundled-kernel test cases, shared by the engines' test binaries: emu-core/tests/kernels.rs (the
//! interpreter) and jit/tests/{kernels,tiers,observe_kernels,timing_kernels}.rs (the JIT, checked against the
//! interpreter in each binary's own way). Each case is a function generic over the [`Engine`] under test, and
//! every dispatch in it goes through that engine; a binary implements [`Engine`] and invokes [`tests!`], which
//! makes one `#[test]` per case, named as the case. The cases live by subject: everyday kernels (`basics`),
//! faults and refusals (`faults`), observers (`observe`), arithmetic to the bit (`math`), waves that wait on each
//! other (`sync`), private memory, LDS and buffers (`memory`); the helpers they share are here.

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{EngineError, KernelDispatch, Limits, RunStats};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::Observer;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;

mod basics;
mod faults;
mod math;
mod memory;
mod observe;
mod sync;

pub use basics::*;
pub use faults::*;
pub use math::*;
pub use memory::*;
pub use observe::*;
pub use sync::*;

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
            lds_tree_reduction_with_barriers_matches_the_cpu,
            results_do_not_depend_on_the_number_of_host_threads,
            divergent_control_flow_device_calls_64_bit_division_and_f64_match_the_cpu,
            alu_loop_matches_the_cpu_and_signed_scalar_arithmetic_sets_scc,
            alu_mixed_integer_multiply_adds_beside_fmas_match_the_cpu,
            histogram_with_lds_and_global_atomics_counts_exactly_with_any_thread_count,
            index_math_over_a_3d_grid_with_partial_workgroups_in_every_dimension,
            cross_lane_permute_swizzle_readlane_and_ballot_match_the_cpu,
            dynamic_vector_element_access_in_vgpr_index_mode_matches_the_cpu,
            dpp_row_shifts_quad_permutes_mirrors_and_row_masks_match_the_cpu,
            hand_written_dpp_wave_scan_and_rare_scalar_instructions_match_the_cpu,
            an_out_of_bounds_store_faults_with_kernel_pc_lane_and_allocation_under_memcheck,
            a_store_far_past_a_small_buffer_faults_in_its_redzone_under_memcheck_and_spares_the_next_allocation,
            a_store_past_the_end_inside_the_last_page_lands_there_and_is_counted_and_described,
            reads_past_the_end_inside_the_last_page_read_zeros_and_are_counted,
            an_illegal_instruction_stops_the_dispatch_with_kernel_and_pc_and_the_process_carries_on,
            runaway_kernels_stop_at_the_instruction_limit,
            a_kernel_asking_for_denormal_flushing_or_another_rounding_mode_is_refused_clearly,
            code_for_another_target_is_refused,
            an_observer_sees_every_instruction_by_unit_without_changing_results,
            an_observer_sees_each_lanes_addresses_and_can_interleave_waves_without_changing_results,
            mfma_f16_bf16_and_f32_in_every_single_block_shape_with_agpr_accumulators_match_the_cpu,
            device_library_sin_exp_log_sqrt_pow_stay_within_their_ulp_bounds,
            hip_ieee_division_is_correctly_rounded_in_f32_and_f64_including_subnormals_and_special_cases,
            hip_f64_sqrt_rsqrt_exp_log_sin_floor_min_max_ldexp_stay_within_their_ulp_bounds,
            hip_f16_arithmetic_rounds_once_like_ieee_half_precision,
            hip_16_and_8_bit_integer_arithmetic_with_sdwa_selects_matches_the_cpu,
            f64_mfma_gemm_16x16x16_matches_the_cpu_with_its_own_output_layout,
            f16_and_bf16_mfma_gemms_over_many_tiles_and_k_steps_match_the_cpu,
            compare_and_swap_loops_on_32_and_64_bit_values_lose_no_update_with_any_thread_count,
            workgroups_spinning_on_flags_that_later_workgroups_set_complete_on_one_host_thread,
            waves_spinning_on_the_lds_while_their_workgroup_waits_on_a_later_one_complete_on_one_host_thread,
            a_lanes_64_bit_load_never_sees_half_of_another_workgroups_64_bit_store,
            gws_semaphores_hand_items_from_producers_to_consumers_across_workgroups,
            gws_consumers_no_wave_can_release_are_a_deadlock_naming_the_resource_and_its_count,
            private_arrays_in_scratch_memory_match_the_cpu,
            every_workgroup_starts_with_zeroed_private_memory_whichever_ran_before_on_its_host_thread,
            prefix_scan_in_lds_matches_the_cpu,
            tiled_sgemm_with_lds_matches_the_cpu,
            wide_lds_accesses_move_float4_and_double_tiles,
            buffer_resources_built_by_the_kernel_follow_the_out_of_range_rules,
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

#[cfg(test)]
mod tests {
    /// The cases `tests!` lists are the crate's case functions, in the order of their modules.
    #[test]
    fn the_macro_lists_every_case() {
        let src = include_str!("lib.rs");
        let modules = [
            include_str!("basics.rs"),
            include_str!("faults.rs"),
            include_str!("observe.rs"),
            include_str!("math.rs"),
            include_str!("sync.rs"),
            include_str!("memory.rs"),
        ]
        .concat();
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
        let cases: Vec<&str> = modules
            .split("\npub fn ")
            .skip(1)
            .filter(|f| f.split_once('{').is_some_and(|(sig, _)| sig.contains("E: Engine")))
            .map(|f| &f[..f.find('<').unwrap()])
            .collect();
        assert_eq!(cases.len(), 43);
        assert_eq!(listed, cases);
    }
}
