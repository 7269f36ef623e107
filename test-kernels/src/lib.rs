//! Bundled test kernels: sources (OpenCL C, HIP and assembly) under `src/kernels/`, their code objects
//! for gfx90a and gfx942 under `prebuilt/` (rebuilt with clang-19 by `build.sh`, checked in so that building
//! wavejit needs no compiler), embedded here so tools and tests can use them with nothing installed.
//! CPU references of what each kernel computes are in [`reference`]. The timing microbenchmarks (`chase`,
//! `stream`, `lds_banks`, `chains`) measure the emulated GPU's modeled time rather than compute results.

/// A prebuilt code object: (file name, bytes).
pub type Prebuilt = (&'static str, &'static [u8]);

macro_rules! prebuilt {
    ($($name:literal),* $(,)?) => {
        /// Every prebuilt code object, gfx90a and gfx942.
        pub const ALL: &[Prebuilt] = &[$(($name, include_bytes!(concat!("../prebuilt/", $name)))),*];
    };
}

prebuilt!(
    "vadd-gfx90a.co",
    "vadd-gfx942.co",
    "saxpy-gfx90a.co",
    "saxpy-gfx942.co",
    "reduce-gfx90a.co",
    "reduce-gfx942.co",
    "divergence-gfx90a.co",
    "divergence-gfx942.co",
    "mfma-gfx90a.co",
    "mfma-gfx942.co",
    "alu_loop-gfx90a.co",
    "alu_loop-gfx942.co",
    "alu_mixed-gfx90a.co",
    "alu_mixed-gfx942.co",
    "histogram-gfx90a.co",
    "histogram-gfx942.co",
    "index3d-gfx90a.co",
    "index3d-gfx942.co",
    "shuffle-gfx90a.co",
    "shuffle-gfx942.co",
    "private_array-gfx90a.co",
    "private_array-gfx942.co",
    "private_fresh-gfx90a.co",
    "private_fresh-gfx942.co",
    "scan-gfx90a.co",
    "scan-gfx942.co",
    "sgemm-gfx90a.co",
    "sgemm-gfx942.co",
    "lds_wide-gfx90a.co",
    "lds_wide-gfx942.co",
    "dpp-gfx90a.co",
    "dpp-gfx942.co",
    "math-gfx90a.co",
    "math-gfx942.co",
    "cas-gfx90a.co",
    "cas-gfx942.co",
    "divide-gfx90a.co",
    "divide-gfx942.co",
    "half-gfx90a.co",
    "half-gfx942.co",
    "mfma_f64-gfx90a.co",
    "mfma_f64-gfx942.co",
    "dpp_scan-gfx90a.co",
    "dpp_scan-gfx942.co",
    "mfma_gemm-gfx90a.co",
    "mfma_gemm-gfx942.co",
    "buffer-gfx90a.co",
    "buffer-gfx942.co",
    "chase-gfx90a.co",
    "chase-gfx942.co",
    "stream-gfx90a.co",
    "stream-gfx942.co",
    "lds_banks-gfx90a.co",
    "lds_banks-gfx942.co",
    "chains-gfx90a.co",
    "chains-gfx942.co",
    "gpr_index-gfx90a.co",
    "gpr_index-gfx942.co",
    "hwid-gfx90a.co",
    "hwid-gfx942.co",
    "gws_sema-gfx90a.co",
    "gws_sema-gfx942.co",
    "packet-gfx90a.co",
    "packet-gfx942.co",
    "wide_publish-gfx90a.co",
    "wide_publish-gfx942.co",
    "reverse_chain-gfx90a.co",
    "reverse_chain-gfx942.co",
    "lds_handoff-gfx90a.co",
    "lds_handoff-gfx942.co",
);

/// The default sample: the LDS reduction for an MI300X (gfx942).
pub const SAMPLE: Prebuilt = ALL[5];

/// The prebuilt code object named `name` (e.g. `vadd-gfx90a.co`).
pub fn by_name(name: &str) -> Option<&'static [u8]> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// Directory of the kernel sources (for tests that rebuild or inspect them).
pub fn source_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/kernels")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prebuilt_code_object_is_an_amdgpu_elf() {
        // one code object per kernel source and target
        let sources = std::fs::read_dir(source_dir())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "cl" || x == "hip" || x == "s")
            })
            .count();
        assert_eq!(ALL.len(), 2 * sources);
        for (name, bytes) in ALL {
            assert_eq!(&bytes[..4], b"\x7fELF", "{name}");
            assert_eq!(
                u16::from_le_bytes([bytes[18], bytes[19]]),
                224,
                "{name}: e_machine must be EM_AMDGPU"
            );
        }
        assert_eq!(SAMPLE.0, "reduce-gfx942.co");
    }
}

/// CPU references of the bundled kernels: what each computes, element by element, in the kernel's own order
/// of floating-point operations (so results compare bit for bit).
pub mod reference {
    /// `vadd`: c[i] = a[i] + b[i].
    pub fn vadd(a: &[f32], b: &[f32]) -> Vec<f32> {
        a.iter().zip(b).map(|(x, y)| x + y).collect()
    }

    /// `saxpy`: y[i] = fma(alpha, x[i], y[i]).
    pub fn saxpy(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        x.iter().zip(y).map(|(x, y)| alpha.mul_add(*x, *y)).collect()
    }

    /// `reduce_sum`: per block of 256, the tree tmp[l] += tmp[l + s] for s = 128, 64, ..., 1.
    pub fn reduce_sum(input: &[f32]) -> Vec<f32> {
        input
            .chunks(256)
            .map(|block| {
                let mut tmp = [0f32; 256];
                tmp[..block.len()].copy_from_slice(block);
                let mut s = 128;
                while s > 0 {
                    for l in 0..s {
                        tmp[l] += tmp[l + s];
                    }
                    s /= 2;
                }
                tmp[0]
            })
            .collect()
    }

    fn collatz_steps(mut x: u64) -> u64 {
        let mut steps = 0;
        while x != 1 && steps < 1000 {
            x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
            steps += 1;
        }
        steps
    }

    /// `divergence`: three paths by seed % 3 (a device function with 64-bit division, f64, 64-bit multiply).
    pub fn divergence(seeds: &[u32]) -> Vec<u64> {
        seeds
            .iter()
            .map(|&s| {
                let v = s as u64 + 1;
                match v % 3 {
                    0 => collatz_steps(v) / (v % 7 + 1),
                    1 => (v as f64 * 1.5 + (v / 5) as f64) as u64,
                    _ => v.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                }
            })
            .collect()
    }

    /// `index3d`: out[(z*ny + y)*nx + x] = 7x ^ y<<10 ^ z<<20 ^ (x mod block_x) over an nx × ny × nz grid.
    pub fn index3d(n: [u32; 3], block_x: u32) -> Vec<u32> {
        let mut out = vec![0u32; (n[0] * n[1] * n[2]) as usize];
        for z in 0..n[2] {
            for y in 0..n[1] {
                for x in 0..n[0] {
                    out[((z * n[1] + y) * n[0] + x) as usize] = (x * 7) ^ (y << 10) ^ (z << 20) ^ (x % block_x);
                }
            }
        }
        out
    }

    /// `gpr_index`: per work-item i, with v its 32 inputs and d = idx[i] & 31: out[2i] = v[k & 31] and
    /// out[2i + 1] = v[d] (read before the writes); then v[(k + 3) & 31] = 42, v[(d + 5) & 31] = -1, and the 32
    /// values go to io. Returns (out, io).
    pub fn gpr_index(input: &[f32], idx: &[i32], k: i32) -> (Vec<f32>, Vec<f32>) {
        let mut out = Vec::new();
        let mut io = Vec::new();
        for (v, &d) in input.chunks(32).zip(idx) {
            let (k, d) = ((k & 31) as usize, (d & 31) as usize);
            out.extend([v[k], v[d]]);
            let mut v = v.to_vec();
            v[(k + 3) & 31] = 42.0;
            v[(d + 5) & 31] = -1.0;
            io.extend(v);
        }
        (out, io)
    }

    /// `shuffle`: per wave of 64, out = 3 rot + first - v[5] + 1000 popcount(v > 0) + 7 swap, where rot reads
    /// the next lane (ds_bpermute), first is lane 0, swap reads lane ^ 1 (ds_swizzle).
    pub fn shuffle(input: &[i32]) -> Vec<i32> {
        input
            .chunks(64)
            .flat_map(|w| {
                let cnt = w.iter().filter(|v| **v > 0).count() as i32;
                (0..w.len()).map(move |l| {
                    let rot = w[(l + 1) % 64];
                    let swz = w[l ^ 1];
                    rot.wrapping_mul(3)
                        .wrapping_add(w[0])
                        .wrapping_sub(w[5])
                        .wrapping_add(cnt * 1000)
                        .wrapping_add(swz.wrapping_mul(7))
                })
            })
            .collect()
    }

    /// `dpp`: per row of 16 lanes (and quad of 4), out = 3 a + 5 b + 7 c + 11 d with a = the lane below in the
    /// row (-1 for a row's first lane), b = the quad reversed, c = the half-row (8 lanes) reversed, d = the lane
    /// above in the row (0 for a row's last lane) in rows 0 and 2, and 7 in rows 1 and 3.
    pub fn dpp(input: &[i32]) -> Vec<i32> {
        (0..input.len())
            .map(|g| {
                let (base, l) = (g - g % 64, g % 64);
                let v = |lane: usize| input[base + lane];
                let a = if l % 16 == 0 { -1 } else { v(l - 1) };
                let b = v((l & !3) | (3 - (l & 3)));
                let c = v((l & !7) + 7 - (l & 7));
                let d = match (l / 16 % 2, l % 16) {
                    (1, _) => 7,
                    (_, 15) => 0,
                    _ => v(l + 1),
                };
                a.wrapping_mul(3)
                    .wrapping_add(b.wrapping_mul(5))
                    .wrapping_add(c.wrapping_mul(7))
                    .wrapping_add(d.wrapping_mul(11))
            })
            .collect()
    }

    /// `mfma_f16` / `mfma_bf16` / `mfma_f32`: one single-block matrix FMA, D (m x n) = A (m x k) B (k x n) + C,
    /// with each operand as the wave holds it, lane by lane (the CDNA ISA's layouts): lane l holds
    /// `p = m k / 64` values of A, A[l % m][p (l / m) + e] for e < p, and of B, B[p (l / n) + e][l % n]; and
    /// `r = m n / 64` values of C and D, value v of lane l being row 4 (l / n) + (v % 4) + 4 (64 / n) (v / 4)
    /// of column l % n. Sums are formed in f64 and rounded once.
    pub fn mfma(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
        let (p, r) = (m * k / 64, m * n / 64);
        let mut am = vec![vec![0f64; k]; m];
        let mut bm = vec![vec![0f64; n]; k];
        for l in 0..64 {
            for e in 0..p {
                am[l % m][p * (l / m) + e] = a[l * p + e] as f64;
                bm[p * (l / n) + e][l % n] = b[l * p + e] as f64;
            }
        }
        let row = |l: usize, v: usize| 4 * (l / n) + v % 4 + 4 * (64 / n) * (v / 4);
        let mut d = vec![0f32; 64 * r];
        for l in 0..64 {
            for v in 0..r {
                let (i, j) = (row(l, v), l % n);
                let dot: f64 = (0..k).map(|kk| am[i][kk] * bm[kk][j]).sum();
                d[l * r + v] = (c[l * r + v] as f64 + dot) as f32;
            }
        }
        d
    }

    /// `math`: per input, sin x, exp x, log(|x| + 1), sqrt |x|, pow(|x| + 0.5, 1.7), each computed in f64 from
    /// the f32 operands the kernel forms and rounded once to f32 (the device libraries promise a few ULP).
    pub fn math(x: &[f32]) -> Vec<f32> {
        x.iter()
            .flat_map(|&v| {
                let (d, a1, a5) = (v as f64, (v.abs() + 1.0) as f64, (v.abs() + 0.5) as f64);
                [d.sin(), d.exp(), a1.ln(), d.abs().sqrt(), a5.powf(1.7f32 as f64)].map(|r| r as f32)
            })
            .collect()
    }

    /// `cas`: bins[j] = sum of in[i] over i % 4 == j (exact for the small integers the test uses), and
    /// wide[j] = sum of (i << 33) + 1 over i % 2 == j (wrapping).
    pub fn cas(input: &[f32]) -> ([f32; 4], [u64; 2]) {
        let (mut bins, mut wide) = ([0f32; 4], [0u64; 2]);
        for (i, v) in input.iter().enumerate() {
            bins[i % 4] += v;
            wide[i % 2] = wide[i % 2].wrapping_add(((i as u64) << 33) + 1);
        }
        (bins, wide)
    }

    /// `private_array`: a[k] = i*k as f32 for k < 64; out[i] = sum over k < 16 of a[idx[(i + k) % n] & 63].
    pub fn private_array(idx: &[i32], n_items: usize) -> Vec<f32> {
        let n = idx.len();
        (0..n_items)
            .map(|i| {
                let a: Vec<f32> = (0..64u32).map(|k| (i as u32).wrapping_mul(k) as f32).collect();
                let mut s = 0f32;
                for k in 0..16 {
                    s += a[(idx[(i + k) % n] & 63) as usize];
                }
                s
            })
            .collect()
    }

    /// `scan`: inclusive prefix sums of each block of 256 (wrapping u32 additions).
    pub fn scan(input: &[u32]) -> Vec<u32> {
        input
            .chunks(256)
            .flat_map(|b| {
                b.iter().scan(0u32, |acc, &x| {
                    *acc = acc.wrapping_add(x);
                    Some(*acc)
                })
            })
            .collect()
    }

    /// `sgemm`: C = A B for row-major n x n matrices, each element accumulated with fma in increasing k.
    pub fn sgemm(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
        let mut c = vec![0f32; n * n];
        for row in 0..n {
            for col in 0..n {
                let mut acc = 0f32;
                for k in 0..n {
                    acc = a[row * n + k].mul_add(b[k * n + col], acc);
                }
                c[row * n + col] = acc;
            }
        }
        c
    }

    /// `lds_wide`: per block of 64, out[l] = in[63 - l] (float4s) and dout[l] = d[(l + 5) & 63] + (d[l] + 1).
    pub fn lds_wide(input: &[[f32; 4]], d: &[f64]) -> (Vec<[f32; 4]>, Vec<f64>) {
        let out = input
            .chunks(64)
            .flat_map(|b| (0..b.len()).map(move |l| b[63 - l]))
            .collect();
        let dout = d
            .chunks(64)
            .flat_map(|b| (0..b.len()).map(move |l| b[(l + 5) & 63] + (b[l] + 1.0)))
            .collect();
        (out, dout)
    }

    /// `gws_sema` with `pairs` producer/consumer pairs of `per` items each (and the releaser): the items the
    /// producers write (p * 1000 + j * 7 + base), what the consumers write for them (item * 2 + 1) and woke[0]
    /// (every consumer).
    pub fn gws_sema(pairs: u32, per: u32, base: u32) -> (Vec<u32>, Vec<u32>, u32) {
        let items: Vec<u32> = (0..pairs)
            .flat_map(|p| (0..per).map(move |j| p * 1000 + j * 7 + base))
            .collect();
        let out = items.iter().map(|x| x * 2 + 1).collect();
        (items, out, pairs)
    }

    /// `histogram`: counts of `byte & 63`.
    pub fn histogram(data: &[u8]) -> Vec<u32> {
        let mut bins = vec![0u32; 64];
        for &b in data {
            bins[(b & 63) as usize] += 1;
        }
        bins
    }

    /// `alu_loop`: per work-item i, `iters` rounds of x = fma(x, 0.999, y); y = fma(y, 1.0001, -0.5 x).
    pub fn alu_loop(n: usize, iters: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                let (mut x, mut y) = (i as f32 * 0.001f32, 1.0f32);
                for _ in 0..iters {
                    x = x.mul_add(0.999f32, y);
                    y = y.mul_add(1.0001f32, -0.5f32 * x);
                }
                x + y
            })
            .collect()
    }

    /// `alu_mixed`: `alu_loop`'s rounds with h = h * 1664525 + 1013904223 (32-bit, wrapping) beside them, h
    /// starting at i; the result is x + y + (h >> 16).
    pub fn alu_mixed(n: usize, iters: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                let (mut x, mut y, mut h) = (i as f32 * 0.001f32, 1.0f32, i as u32);
                for _ in 0..iters {
                    x = x.mul_add(0.999f32, y);
                    h = h.wrapping_mul(1664525).wrapping_add(1013904223);
                    y = y.mul_add(1.0001f32, -0.5f32 * x);
                }
                x + y + (h >> 16) as f32
            })
            .collect()
    }

    /// `divide` (HIP): IEEE division, correctly rounded, in f32 and f64.
    pub fn divide(a: &[f32], b: &[f32], c: &[f64], d: &[f64]) -> (Vec<f32>, Vec<f64>) {
        (
            a.iter().zip(b).map(|(x, y)| x / y).collect(),
            c.iter().zip(d).map(|(x, y)| x / y).collect(),
        )
    }

    /// `f64_math` (HIP): per input sqrt|x|, 1/sqrt|x|, exp, log|x|, sin, floor, min(x,1.5)+max(x,1.5),
    /// ldexp(x, i % 20 - 10), from the host's libm (the device library's are within a few ULP of these).
    pub fn f64_math(x: &[f64]) -> Vec<f64> {
        x.iter()
            .enumerate()
            .flat_map(|(i, &v)| {
                let k = (i % 20) as i32 - 10;
                [
                    v.abs().sqrt(),
                    1.0 / v.abs().sqrt(),
                    v.exp(),
                    v.abs().ln(),
                    v.sin(),
                    v.floor(),
                    v.min(1.5) + v.max(1.5),
                    v * 2f64.powi(k),
                ]
            })
            .collect()
    }

    /// `half_math` (HIP): per pair of f16 (as bits) x + y, x * y, fma(y, -0.5, x) (the compiler contracts
    /// x - y * 0.5), fma(x, y, 1), x > y ? x : y, x * 0.25 — each rounded once to f16.
    pub fn half_math(a: &[u16], b: &[u16]) -> Vec<u16> {
        use half::f16;
        let h = |v: u16| f16::from_bits(v).to_f64();
        let r = |v: f64| f16::from_f64(v).to_bits();
        a.iter()
            .zip(b)
            .flat_map(|(&x, &y)| {
                let (fx, fy) = (h(x), h(y));
                // the exact products and fused sums of f16 values fit in an f64, so one rounding suffices
                [
                    r(fx + fy),
                    r(fx * fy),
                    r(fy.mul_add(-0.5, fx)),
                    r(fx.mul_add(fy, 1.0)),
                    if fx > fy { x } else { y },
                    r(fx * 0.25),
                ]
            })
            .collect()
    }

    /// `short_math` (HIP): 16-bit and 8-bit integer arithmetic, wrapping as C's conversions do.
    pub fn short_math(a: &[i16], b: &[u8]) -> (Vec<i16>, Vec<u8>) {
        let s = a
            .iter()
            .zip(b)
            .flat_map(|(&x, &y)| [x.wrapping_mul(y as i16).wrapping_add(7), (x >> 3) ^ ((y as i16) << 4)])
            .collect();
        let c = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| {
                let m = y.wrapping_mul(3);
                if m > 200 {
                    m - 200
                } else {
                    m.wrapping_add(x as u8)
                }
            })
            .collect();
        (s, c)
    }

    /// `dpp_scan` (assembly): the inclusive prefix sum of 64 words, then s_flbit_i32_b32(in[0]),
    /// s_flbit_i32(in[1]), bits 8..36 of the 64-bit {in[1], in[0]} sign-extended (two words), the signed max
    /// of in[0] and in[1], and in[0] again.
    pub fn dpp_scan(input: &[u32]) -> Vec<u32> {
        let mut out: Vec<u32> = input
            .iter()
            .scan(0u32, |acc, x| {
                *acc = acc.wrapping_add(*x);
                Some(*acc)
            })
            .collect();
        let (a, b) = (input[0], input[1]);
        let clz = if a == 0 { u32::MAX } else { a.leading_zeros() };
        let v = b as i32;
        let cls = if v == 0 || v == -1 {
            u32::MAX
        } else {
            (if v < 0 { !v } else { v }).leading_zeros()
        };
        let wide = (b as u64) << 32 | a as u64;
        let field = (((wide >> 8) << 36) as i64 >> 36) as u64;
        out.extend([
            clz,
            cls,
            field as u32,
            (field >> 32) as u32,
            (a as i32).max(b as i32) as u32,
            a,
        ]);
        out
    }

    /// `hgemm`/`bgemm` (HIP, MFMA): c = a * b for row-major m x k and k x n matrices, each dot product summed
    /// exactly and rounded once to f32 (the tests use values whose sums are exact in any order).
    pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        (0..m * n)
            .map(|ij| {
                (0..k)
                    .map(|kk| a[ij / n * k + kk] as f64 * b[kk * n + ij % n] as f64)
                    .sum::<f64>() as f32
            })
            .collect()
    }

    /// `buffer_ops` (HIP, buffer resources) over `items` work-items, `out` and `bytes` starting as given:
    /// out[i] = 2 in[i] (0 past n_in) and bytes[i] = low byte of in[i] + 1 (1 past n_in), for i < n_out only.
    pub fn buffer_ops(input: &[f32], n_out: usize, out: &mut [f32], bytes: &mut [u8]) {
        for i in 0..out.len().min(n_out) {
            let v = input.get(i).copied().unwrap_or(0.0);
            out[i] = v * 2.0;
            bytes[i] = (v.to_bits() as u8).wrapping_add(1);
        }
    }

    /// `dgemm16` (HIP, f64 MFMA): c = a * b for 16x16 row-major matrices, summed in order of k.
    pub fn dgemm16(a: &[f64], b: &[f64]) -> Vec<f64> {
        (0..256)
            .map(|ij| (0..16).map(|k| a[ij / 16 * 16 + k] * b[k * 16 + ij % 16]).sum())
            .collect()
    }
}

#[cfg(test)]
mod rebuild {
    /// `build.sh` reproduces every checked-in code object byte for byte from the sources (clang-19, llvm-mc-19,
    /// ld.lld-19, the ROCm device libraries and HIP headers; scripts/setup.sh installs them).
    #[test]
    fn build_sh_reproduces_the_prebuilt_code_objects_exactly() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let have = [
            "/usr/bin/clang-19",
            "/usr/bin/llvm-mc-19",
            "/usr/bin/ld.lld-19",
            "/usr/include/hip/hip_runtime.h",
        ]
        .iter()
        .all(|p| std::path::Path::new(p).exists())
            && std::path::Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc").exists();
        assert!(have, "clang-19, llvm-mc-19, ld.lld-19, rocm-device-libs or libamdhip64-dev is missing: this test needs them (scripts/setup.sh installs them)");
        let out = std::env::temp_dir().join(format!("wavejit-rebuild-{}", std::process::id()));
        let status = std::process::Command::new("bash")
            .arg(dir.join("build.sh"))
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success(), "build.sh failed");
        let mut rebuilt: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        rebuilt.sort();
        let mut bundled: Vec<String> = super::ALL.iter().map(|(n, _)| n.to_string()).collect();
        bundled.sort();
        assert_eq!(rebuilt, bundled, "build.sh makes exactly the bundled code objects");
        for (name, bytes) in super::ALL {
            assert!(
                std::fs::read(out.join(name)).unwrap() == *bytes,
                "{name} differs from its rebuild: rerun test-kernels/build.sh"
            );
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}
