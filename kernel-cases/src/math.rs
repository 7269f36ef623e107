//! Arithmetic to the bit: MFMA in every shape and in gemms, the device library's and HIP's f32, f64 and f16
//! functions within their ulp bounds, IEEE division, and 16- and 8-bit integers with SDWA selects.

use super::*;

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
