//! Waves and workgroups that wait on each other: compare-and-swap loops, spin-waits on flags in memory and in
//! the LDS, 64-bit values published across workgroups, and GWS semaphores.

use super::*;

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
