//! Every MFMA and SMFMAC of gfx90a and gfx942 against AMD's matrix instruction calculator: the register layouts
//! `tests/data/mfma_layouts.txt` holds (sampled from the calculator, run locally as an oracle; with CBSZ/ABID
//! broadcasts and every BLGP lane pattern) must equal where `emu_core::sem::Mfma` puts A, B, C and D, exactly;
//! then each instruction runs on both engines, on every modifier setting the file names, with small integer
//! inputs (exact in every input type, i8, fp8 and bf8 included) placed at those positions, and must leave
//! D = A * B + C of the plain matrix product, block by block. gfx942's f64 MFMAs run with every neg:[a,b,c].
//! SMFMACs run on random 4:2-sparse A matrices, compressed to their two stored values per group of four k with
//! the index bits in the index set each CBSZ/ABID setting selects (the other sets random), and must leave
//! D = A * B + D of the dense product.

use std::sync::OnceLock;

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::{execute, Mfma, MfmaInput};
use emu_core::wave::WaveState;
use isa_amdgpu::{decode, Field, Inst, OpInfo, Target, GFX9};

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

/// One sampled entry: (x, y, block) -> (register, lane, bit).
type Sample = ((usize, usize, usize), (usize, usize, usize));

struct Layout {
    matrix: char,
    cbsz: u8,
    abid: u8,
    blgp: u8,
    samples: Vec<Sample>,
}

struct Oracle {
    target: Target,
    name: String,
    dims: [usize; 4],
    /// An SMFMAC: sparse A, with `K` layouts of the index register.
    sparse: bool,
    layouts: Vec<Layout>,
}

fn oracle() -> Vec<Oracle> {
    let text = include_str!("data/mfma_layouts.txt");
    let mut out: Vec<Oracle> = Vec::new();
    let num = |kv: &str| -> usize { kv.split_once('=').expect("key=value").1.parse().expect("a number") };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w[0] == "inst" {
            let target = if w[1] == "gfx942" {
                Target::Gfx942
            } else {
                Target::Gfx90a
            };
            let sparse = w.contains(&"sparse");
            out.push(Oracle {
                target,
                name: w[2].to_string(),
                dims: [num(w[3]), num(w[4]), num(w[5]), num(w[6])],
                sparse,
                layouts: Vec::new(),
            });
            continue;
        }
        let samples = w[4..]
            .iter()
            .map(|s| {
                let (coord, at) = s.split_once('=').expect("coord=place");
                let c: Vec<usize> = coord.split(',').map(|x| x.parse().unwrap()).collect();
                let p: Vec<usize> = at.split('.').map(|x| x.parse().unwrap()).collect();
                ((c[0], c[1], c[2]), (p[0], p[1], p[2]))
            })
            .collect();
        let layout = Layout {
            matrix: w[0].chars().next().unwrap(),
            cbsz: num(w[1]) as u8,
            abid: num(w[2]) as u8,
            blgp: num(w[3]) as u8,
            samples,
        };
        out.last_mut().expect("an inst line first").layouts.push(layout);
    }
    out
}

fn row(target: Target, name: &str) -> &'static OpInfo {
    GFX9.iter()
        .find(|r| r.on(target) && r.name == name)
        .unwrap_or_else(|| panic!("{name} is in the {} table", target.name()))
}

fn bits(t: MfmaInput) -> usize {
    match t {
        MfmaInput::F64 => 64,
        MfmaInput::F32 | MfmaInput::Xf32 => 32,
        MfmaInput::F16 | MfmaInput::Bf16 => 16,
        _ => 8,
    }
}

/// (register, lane, bit) of an input element at (lane, element) in our layout.
fn input_place(t: MfmaInput, (lane, e): (usize, usize)) -> (usize, usize, usize) {
    let b = bits(t);
    if b == 64 {
        (2 * e, lane, 0)
    } else {
        (e * b / 32, lane, e * b % 32)
    }
}

#[test]
fn mfma_layouts_equal_amds_matrix_instruction_calculator() {
    let mut checked = 0;
    let oracle = oracle();
    assert!(oracle.len() >= 59, "{} instructions in the oracle file", oracle.len());
    for o in &oracle {
        let r = row(o.target, &o.name);
        let mut s =
            Mfma::of(r.mfma.expect("an MFMA row")).unwrap_or_else(|| panic!("{}: the engines model it", o.name));
        assert_eq!([s.m, s.n, s.k, s.blocks], o.dims, "{}: table shape", o.name);
        for l in &o.layouts {
            (s.cbsz, s.abid, s.blgp) = (l.cbsz, l.abid, l.blgp);
            for &((x, y, b), want) in &l.samples {
                let got = match l.matrix {
                    // a sparse A entry: where its group's two stored values lie
                    'A' if o.sparse => {
                        let (lane, e, _) = s.sparse_at(x, y, 0);
                        input_place(s.input, (lane, e))
                    }
                    // the first index bit of its group
                    'K' => {
                        let (lane, _, bit) = s.sparse_at(x, y, 0);
                        (0, lane, bit)
                    }
                    'A' => input_place(s.input, s.input_at(s.m, x, y, b >> s.cbsz << s.cbsz | s.abid as usize)),
                    'B' => {
                        let (lane, e) = s.input_at(s.n, y, x, b);
                        input_place(s.input_b, (s.blgp_lane(lane), e))
                    }
                    _ => {
                        let (lane, reg) = s.output_at(x, y, b);
                        (if s.input == MfmaInput::F64 { 2 * reg } else { reg }, lane, 0)
                    }
                };
                assert_eq!(
                    got,
                    want,
                    "{} {} {}[{x}][{y}] block {b} cbsz {} abid {} blgp {}: (register, lane, bit)",
                    o.target.name(),
                    o.name,
                    l.matrix,
                    l.cbsz,
                    l.abid,
                    l.blgp
                );
                checked += 1;
            }
        }
    }
    println!("{checked} sampled entries agree");
}

/// A small integer (|v| <= 4) as an element of type `t`: exact in every type.
fn encode(t: MfmaInput, v: i64) -> u64 {
    let (sign, a) = ((v < 0) as u64, v.unsigned_abs());
    let e = 63 - a.max(1).leading_zeros() as u64; // floor(log2 a)
    let float = |mant: u64, bias: u64, width: u64| {
        if a == 0 {
            0
        } else {
            sign << (width - 1) | (e + bias) << mant | (a << mant >> e) & ((1 << mant) - 1)
        }
    };
    match t {
        MfmaInput::F32 | MfmaInput::Xf32 => (v as f32).to_bits() as u64,
        MfmaInput::F64 => (v as f64).to_bits(),
        MfmaInput::Bf16 => ((v as f32).to_bits() >> 16) as u64,
        MfmaInput::F16 => float(10, 15, 16),
        MfmaInput::I8 => v as u8 as u64,
        MfmaInput::Fp8 => float(3, 8, 8),
        MfmaInput::Bf8 => float(2, 16, 8),
    }
}

fn put(regs: &mut [[u32; 64]], (r, lane, bit): (usize, usize, usize), width: usize, value: u64) {
    if width == 64 {
        regs[r][lane] = value as u32;
        regs[r + 1][lane] = (value >> 32) as u32;
    } else {
        let mask = ((1u64 << width) - 1) as u32;
        regs[r][lane] = regs[r][lane] & !(mask << bit) | (value as u32 & mask) << bit;
    }
}

struct Rng(u64);
impl Rng {
    fn small(&mut self) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 9) as i64 - 4
    }
}

const A_REG: u32 = 80;
const B_REG: u32 = 88;
const C_REG: u32 = 0;
const D_REG: u32 = 40;
const INDEX_REG: u32 = 70;

/// Runs `row` with the modifiers of `s` on both engines from `wave`; returns both D register runs.
fn run_both(r: &'static OpInfo, target: Target, s: Mfma, wave: &WaveState, neg: u8) -> [Vec<[u32; 64]>; 2] {
    let blgp_or_neg = if s.input == MfmaInput::F64 { neg } else { s.blgp };
    // an SMFMAC accumulates into its destination and reads the index register as src2
    let c = if s.sparse { INDEX_REG } else { C_REG };
    let fields = [
        (Field::Vdst, D_REG),
        (Field::Src0, 256 + A_REG),
        (Field::Src1, 256 + B_REG),
        (Field::Src2, 256 + c),
        (Field::NegHi, s.cbsz as u32),
        (Field::OpSel, s.abid as u32 & 7),
        (Field::OpSelHi2, s.abid as u32 >> 3),
        (Field::Neg, blgp_or_neg as u32),
    ];
    let b = fields.iter().fold(Inst::build(r, target).unwrap(), |b, &(f, v)| {
        b.set(f, v).unwrap_or_else(|e| panic!("{}: {f:?}={v}: {e}", r.name))
    });
    let inst = decode(
        &b.encode().unwrap_or_else(|e| panic!("{}: {e}", r.name)),
        0x1000,
        target,
    )
    .unwrap();
    let text = isa_amdgpu::disasm::text(&inst);
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let (mut a, mut j) = (wave.clone(), wave.clone());
    let (mut lds_a, mut lds_j) = (vec![0u8; 64], vec![0u8; 64]);
    let mut b = Interp {
        wave: &mut a,
        mem: &mem,
        lds: &mut lds_a,
        mnemonic: inst.info.name,
        accesses: None,
    };
    execute(&mut b, &inst, 0x1000).unwrap_or_else(|e| panic!("{text}: {e}"));
    let exit = jit()
        .run_block_once(vec![inst], 0x1000, &mut j, &mem, &mut lds_j)
        .unwrap();
    assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{text}: {exit:?}");
    let d = D_REG as usize..D_REG as usize + s.acc_regs();
    [a.vgprs[d.clone()].to_vec(), j.vgprs[d].to_vec()]
}

#[test]
// the loops walk A, B, C and D by the same matrix coordinates
#[allow(clippy::needless_range_loop)]
fn every_dense_mfma_computes_the_matrix_product_on_both_engines_at_the_calculators_positions() {
    let mut runs = 0;
    for o in oracle().into_iter().filter(|o| !o.sparse) {
        let r = row(o.target, &o.name);
        let base = Mfma::of(r.mfma.unwrap()).unwrap();
        let mut settings: Vec<(u8, u8, u8)> = o.layouts.iter().map(|l| (l.cbsz, l.abid, l.blgp)).collect();
        settings.dedup();
        let negs: &[u8] = if base.input == MfmaInput::F64 && o.target == Target::Gfx942 {
            &[0, 1, 2, 3, 4, 5, 6, 7]
        } else {
            &[0]
        };
        for (cbsz, abid, blgp) in settings {
            for &neg in negs {
                let s = Mfma {
                    cbsz,
                    abid,
                    blgp,
                    neg,
                    ..base
                };
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((runs as u64 + 1) * 0x2545_f491));
                // the logical matrices, by block
                let a: Vec<Vec<Vec<i64>>> = (0..s.blocks)
                    .map(|_| (0..s.m).map(|_| (0..s.k).map(|_| rng.small()).collect()).collect())
                    .collect();
                let bm: Vec<Vec<Vec<i64>>> = (0..s.blocks)
                    .map(|_| (0..s.k).map(|_| (0..s.n).map(|_| rng.small()).collect()).collect())
                    .collect();
                let c: Vec<Vec<Vec<i64>>> = (0..s.blocks)
                    .map(|_| {
                        (0..s.m)
                            .map(|_| (0..s.n).map(|_| rng.small() * 2 + 1).collect())
                            .collect()
                    })
                    .collect();
                let mut w = WaveState::new(0x1000, 96, 0);
                w.set_exec(u64::MAX);
                let (ab, bb) = (bits(s.input), bits(s.input_b));
                let plain = Mfma {
                    cbsz: 0,
                    abid: 0,
                    blgp: 0,
                    ..s
                };
                for blk in 0..s.blocks {
                    for kk in 0..s.k {
                        for i in 0..s.m {
                            let (r, lane, bit) = input_place(s.input, plain.input_at(s.m, i, kk, blk));
                            put(
                                &mut w.vgprs[A_REG as usize..],
                                (r, lane, bit),
                                ab,
                                encode(s.input, a[blk][i][kk]),
                            );
                        }
                        for j in 0..s.n {
                            let (r, lane, bit) = input_place(s.input_b, plain.input_at(s.n, j, kk, blk));
                            put(
                                &mut w.vgprs[B_REG as usize..],
                                (r, lane, bit),
                                bb,
                                encode(s.input_b, bm[blk][kk][j]),
                            );
                        }
                    }
                }
                let (cw, out) = match s.input {
                    MfmaInput::F64 => (64, MfmaInput::F64),
                    MfmaInput::I8 => (32, MfmaInput::I8),
                    _ => (32, MfmaInput::F32),
                };
                let out_bits = |v: i64| {
                    if out == MfmaInput::I8 {
                        v as i32 as u32 as u64
                    } else {
                        encode(out, v)
                    }
                };
                for blk in 0..s.blocks {
                    for i in 0..s.m {
                        for j in 0..s.n {
                            let (lane, reg) = s.output_at(i, j, blk);
                            let reg = if cw == 64 { 2 * reg } else { reg };
                            put(
                                &mut w.vgprs[C_REG as usize..],
                                (reg, lane, 0),
                                cw,
                                out_bits(c[blk][i][j]),
                            );
                        }
                    }
                }
                // B as the instruction reads it under BLGP: the value stored at the lane the pattern names
                let mut at_lane = vec![vec![0i64; s.k * s.n * s.blocks / 64]; 64];
                for (b2, k2, j2) in
                    (0..s.blocks).flat_map(|b2| (0..s.k).flat_map(move |k2| (0..s.n).map(move |j2| (b2, k2, j2))))
                {
                    let (lane, e) = plain.input_at(s.n, j2, k2, b2);
                    at_lane[lane][e] = bm[b2][k2][j2];
                }
                let stored_b = |blk: usize, kk: usize, j: usize| -> i64 {
                    let (lane, e) = s.input_at(s.n, j, kk, blk);
                    at_lane[s.blgp_lane(lane)][e]
                };
                let sign = |bit: u8| if neg >> bit & 1 == 1 { -1 } else { 1 };
                let [interp, jitted] = run_both(r, o.target, s, &w, neg);
                for blk in 0..s.blocks {
                    let a_blk = blk >> s.cbsz << s.cbsz | s.abid as usize;
                    for i in 0..s.m {
                        for j in 0..s.n {
                            let want = sign(2) * c[blk][i][j]
                                + (0..s.k)
                                    .map(|kk| sign(0) * a[a_blk][i][kk] * sign(1) * stored_b(blk, kk, j))
                                    .sum::<i64>();
                            let (lane, reg) = s.output_at(i, j, blk);
                            for (engine, d) in [("interpreter", &interp), ("JIT", &jitted)] {
                                let got = if cw == 64 {
                                    (d[2 * reg + 1][lane] as u64) << 32 | d[2 * reg][lane] as u64
                                } else {
                                    d[reg][lane] as u64
                                };
                                assert_eq!(got, out_bits(want), "{} {} cbsz {cbsz} abid {abid} blgp {blgp} neg {neg}: D[{i}][{j}] block {blk} on the {engine}", o.target.name(), o.name);
                            }
                        }
                    }
                }
                runs += 1;
            }
        }
    }
    println!("{runs} MFMA runs");
    assert!(runs > 100, "{runs} runs");
}

#[test]
// the loops walk A, B and D by the same matrix coordinates
#[allow(clippy::needless_range_loop)]
fn every_smfmac_computes_the_sparse_product_on_both_engines_for_each_index_set() {
    let mut runs = 0;
    for o in oracle().into_iter().filter(|o| o.sparse) {
        let r = row(o.target, &o.name);
        let base = Mfma::of(r.mfma.unwrap()).unwrap();
        assert!(base.sparse, "{}: a sparse shape", o.name);
        // CBSZ 0 with every ABID, and a nonzero CBSZ (which reads the first set whatever ABID says)
        let mut settings: Vec<(u8, u8)> = (0..base.index_sets() as u8).map(|a| (0, a)).collect();
        settings.push((1, base.index_sets() as u8 - 1));
        for (cbsz, abid) in settings {
            let s = Mfma { cbsz, abid, ..base };
            let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ ((runs as u64 + 1) * 0x9e37_79b9));
            let mut w = WaveState::new(0x1000, 96, 0);
            w.set_exec(u64::MAX);
            // random bits everywhere in the index register, the selected set written below
            for lane in 0..64 {
                w.vgprs[INDEX_REG as usize][lane] =
                    (rng.small() as u32).wrapping_mul(0x9e37_79b9) ^ (lane as u32 * 0x0101_0101);
            }
            // A: in each group of four k of a row, two values at two distinct random positions
            let mut a = vec![vec![0i64; s.k]; s.m];
            for i in 0..s.m {
                for group in (0..s.k).step_by(4) {
                    let first = (rng.small() + 4) as usize % 4;
                    let second = (first + 1 + (rng.small() + 4) as usize % 3) % 4;
                    for (slot, pos) in [first, second].into_iter().enumerate() {
                        let v = rng.small();
                        a[i][group + pos] = v;
                        let (lane, e, bit) = s.sparse_at(i, group, slot);
                        put(
                            &mut w.vgprs[A_REG as usize..],
                            input_place(s.input, (lane, e)),
                            bits(s.input),
                            encode(s.input, v),
                        );
                        let idx = &mut w.vgprs[INDEX_REG as usize][lane];
                        *idx = *idx & !(3 << bit) | (pos as u32) << bit;
                    }
                }
            }
            let bm: Vec<Vec<i64>> = (0..s.k).map(|_| (0..s.n).map(|_| rng.small()).collect()).collect();
            for kk in 0..s.k {
                for j in 0..s.n {
                    put(
                        &mut w.vgprs[B_REG as usize..],
                        input_place(s.input_b, s.input_at(s.n, j, kk, 0)),
                        bits(s.input_b),
                        encode(s.input_b, bm[kk][j]),
                    );
                }
            }
            let int = s.input == MfmaInput::I8;
            let out_bits = |v: i64| {
                if int {
                    v as i32 as u32 as u64
                } else {
                    encode(MfmaInput::F32, v)
                }
            };
            let c: Vec<Vec<i64>> = (0..s.m)
                .map(|_| (0..s.n).map(|_| rng.small() * 2 + 1).collect())
                .collect();
            for i in 0..s.m {
                for j in 0..s.n {
                    let (lane, reg) = s.output_at(i, j, 0);
                    put(&mut w.vgprs[D_REG as usize..], (reg, lane, 0), 32, out_bits(c[i][j]));
                }
            }
            let [interp, jitted] = run_both(r, o.target, s, &w, 0);
            for i in 0..s.m {
                for j in 0..s.n {
                    let want = c[i][j] + (0..s.k).map(|kk| a[i][kk] * bm[kk][j]).sum::<i64>();
                    let (lane, reg) = s.output_at(i, j, 0);
                    for (engine, d) in [("interpreter", &interp), ("JIT", &jitted)] {
                        assert_eq!(
                            d[reg][lane] as u64,
                            out_bits(want),
                            "{} cbsz {cbsz} abid {abid}: D[{i}][{j}] on the {engine}",
                            o.name
                        );
                    }
                }
            }
            runs += 1;
        }
    }
    println!("{runs} SMFMAC runs");
    assert!(runs >= 12 * 3, "{runs} runs");
}
