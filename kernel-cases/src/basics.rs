//! The bundled kernels' everyday work against their CPU references: element-wise kernels, LDS reductions,
//! control flow, integer and float ALU loops, atomics in a histogram, 3-D index math, cross-lane operations, VGPR
//! indexing and DPP, and results independent of the host thread count.

use super::*;

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
