//! Private (scratch) memory, LDS scans, tiles and wide accesses, and buffer resources' out-of-range rules.

use super::*;

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
