//! Matrix instructions: MFMA and gfx942's sparse SMFMAC on VGPR or AGPR operands, and the AGPR moves
//! (v_accvgpr_read/write/mov).

use isa_amdgpu::encoding::Field;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};

/// Executes an MFMA or AGPR move.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::VAccvgprReadB32 | O::VAccvgprWriteB32 | O::VAccvgprMovB32 => {
            let m = b.exec();
            let acc_src = || match inst.field(Field::Src0) {
                r @ 256..=511 => Ok(r - 256),
                _ => Err(form(inst, "a source that is not an AGPR")),
            };
            match inst.info.opcode {
                O::VAccvgprReadB32 => {
                    let v = b.a_get(acc_src()?);
                    b.v_set(vdst(inst), v, m);
                }
                O::VAccvgprWriteB32 => {
                    let v = vec_src(b, inst, Field::Src0)?;
                    b.a_set(vdst(inst), v, m);
                }
                _ => {
                    let v = b.a_get(acc_src()?);
                    b.a_set(vdst(inst), v, m);
                }
            }
            Ok(Flow::Next)
        }
        _ if inst.info.mfma.is_some() => {
            let mut shape = inst
                .info
                .mfma
                .and_then(Mfma::of)
                .ok_or_else(|| form(inst, "this MFMA shape"))?;
            // CBSZ (bits 8..10), ABID (bits 11..14) and BLGP (bits 61..63, which gfx942's f64 MFMAs read as
            // neg for A, B and C)
            let (cbsz, abid, blgp) = (
                inst.field(Field::NegHi),
                inst.field(Field::OpSel) | inst.field(Field::OpSelHi2) << 3,
                inst.field(Field::Neg),
            );
            if shape.input == MfmaInput::F64 && inst.info.on(isa_amdgpu::Target::Gfx942) {
                shape.neg = blgp as u8;
            } else {
                shape.blgp = blgp as u8;
            }
            if shape.sparse {
                // SMFMAC: CBSZ 0 lets ABID choose the set of index bits, any other CBSZ the first set
                if blgp != 0 {
                    return Err(form(inst, "BLGP on a sparse MFMA"));
                }
                if cbsz == 0 && abid as usize >= shape.index_sets() {
                    return Err(form(inst, "an ABID beyond the sparse MFMA's index sets"));
                }
                (shape.cbsz, shape.abid) = (cbsz as u8, abid as u8);
            } else if cbsz != 0 || abid != 0 {
                if shape.blocks == 1 || 1 << cbsz > shape.blocks || abid >> cbsz != 0 {
                    return Err(form(inst, "a CBSZ/ABID broadcast outside the instruction's blocks"));
                }
                (shape.cbsz, shape.abid) = (cbsz as u8, abid as u8);
            }
            let acc_ab = inst.field(Field::OpSelHi);
            let acc_cd = inst.field(Field::Clamp) == 1;
            let read = |b: &mut B, field: Field, acc: bool, n: usize| -> Result<Vec<B::V>, ExecError> {
                let r = inst.field(field);
                if r < 256 && shape.input == MfmaInput::F64 {
                    let (lo, hi) = vec_src64(b, inst, field)?;
                    return Ok((0..n).map(|i| if i % 2 == 0 { lo } else { hi }).collect());
                }
                if r < 256 {
                    // an inline constant or SGPR, the same in every register
                    let v = vec_src(b, inst, field)?;
                    return Ok(vec![v; n]);
                }
                Ok((0..n as u32).map(|i| data_get(b, acc, r - 256 + i)).collect())
            };
            let a = read(b, Field::Src0, acc_ab & 1 == 1, shape.a_regs())?;
            let bb = read(b, Field::Src1, acc_ab >> 1 & 1 == 1, shape.b_regs())?;
            let c = if shape.sparse {
                // SMFMAC accumulates in place: C is the destination, src2 the index register (a VGPR)
                let mut c: Vec<B::V> = (0..shape.acc_regs() as u32)
                    .map(|i| data_get(b, acc_cd, vdst(inst) + i))
                    .collect();
                c.extend(read(b, Field::Src2, false, 1)?);
                c
            } else {
                read(b, Field::Src2, acc_cd, shape.acc_regs())?
            };
            let d = b.v_mfma(shape, &a, &bb, &c);
            let m = b.exec();
            for (i, v) in d.into_iter().enumerate() {
                data_set(b, acc_cd, vdst(inst) + i as u32, v, m);
            }
            Ok(Flow::Next)
        }
        _ => Err(unsupported(inst)),
    }
}

/// Element type of an MFMA's A and B matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MfmaInput {
    F16,
    Bf16,
    F32,
    /// f64 inputs and an f64 accumulator.
    F64,
    /// Signed 8-bit integers into an i32 accumulator.
    I8,
    /// gfx942's reduced-precision f32 inputs (`_xf32`): taken as f32 here, the hardware's narrower internal
    /// precision is not modelled.
    Xf32,
    /// 8-bit floats of gfx942 (E4M3 with bias 8, 0x80 the only NaN, no infinities).
    Fp8,
    /// 8-bit "brain" floats of gfx942 (E5M2 with bias 16, 0x80 the only NaN, no infinities).
    Bf8,
}

impl MfmaInput {
    fn bits(self) -> usize {
        match self {
            MfmaInput::F64 => 64,
            MfmaInput::F32 | MfmaInput::Xf32 => 32,
            MfmaInput::F16 | MfmaInput::Bf16 => 16,
            MfmaInput::I8 | MfmaInput::Fp8 | MfmaInput::Bf8 => 8,
        }
    }
}

/// An MFMA: `blocks` independent products D (m x n) = A (m x k) * B (k x n) + C, with the instruction's
/// broadcast and lane-pattern modifiers (CBSZ/ABID: block b reads A from block `(b >> cbsz << cbsz) + abid`;
/// BLGP: B is read from other lanes; `neg`: gfx942's f64 MFMAs negate A, B, C by bits 0, 1, 2).
///
/// `sparse` (SMFMAC, one block): A is 4:2 structured-sparse. Of every four consecutive k of a row, two values
/// are stored, in the lane and k group the dense layout gives them ([`Mfma::sparse_at`]); an index register
/// (after C in [`Mfma::c_regs`]) holds, per lane, two bits per stored value saying which of the four k it is.
/// CBSZ 0 lets ABID pick the set of index bits ([`Mfma::index_sets`]), another CBSZ the first set; D = A * B
/// + D (C is the destination).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mfma {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub blocks: usize,
    /// The type of A.
    pub input: MfmaInput,
    /// The type of B (differs from A's only in the mixed fp8/bf8 MFMAs).
    pub input_b: MfmaInput,
    pub cbsz: u8,
    pub abid: u8,
    pub blgp: u8,
    pub neg: u8,
    pub sparse: bool,
}

impl Mfma {
    /// The shape of an MFMA or SMFMAC from the table's `mfma` column, without modifiers; `None` for shapes
    /// whose layout does not fill the wave.
    pub fn of(s: isa_amdgpu::table::MfmaShape) -> Option<Mfma> {
        use isa_amdgpu::table::DataType;
        let (input, input_b) = match s.input {
            DataType::F16 => (MfmaInput::F16, MfmaInput::F16),
            DataType::Bf16 => (MfmaInput::Bf16, MfmaInput::Bf16),
            DataType::F32 => (MfmaInput::F32, MfmaInput::F32),
            DataType::Xf32 => (MfmaInput::Xf32, MfmaInput::Xf32),
            DataType::F64 => (MfmaInput::F64, MfmaInput::F64),
            DataType::I8 => (MfmaInput::I8, MfmaInput::I8),
            DataType::Fp8Fp8 => (MfmaInput::Fp8, MfmaInput::Fp8),
            DataType::Fp8Bf8 => (MfmaInput::Fp8, MfmaInput::Bf8),
            DataType::Bf8Fp8 => (MfmaInput::Bf8, MfmaInput::Fp8),
            DataType::Bf8Bf8 => (MfmaInput::Bf8, MfmaInput::Bf8),
            _ => return None,
        };
        let (m, n, k, blocks) = (s.m as usize, s.n as usize, s.k as usize, s.blocks as usize);
        let shape = Mfma {
            m,
            n,
            k,
            blocks,
            input,
            input_b,
            cbsz: 0,
            abid: 0,
            blgp: 0,
            neg: 0,
            sparse: s.sparse,
        };
        let fits =
            |outer: usize| 64 % (outer * shape.blocks) == 0 && (shape.k * outer * shape.blocks).is_multiple_of(64);
        (fits(shape.m) && fits(shape.n)).then_some(shape)
    }
    /// A plain single-block f16/bf16/f32 product: what the SIMD routine computes.
    fn simd(&self) -> bool {
        matches!(self.input, MfmaInput::F16 | MfmaInput::Bf16 | MfmaInput::F32)
            && !self.sparse
            && self.blocks == 1
            && (self.cbsz, self.abid, self.blgp) == (0, 0, 0)
            && self.m * self.k <= MAX_ELEMS
            && self.n * self.k <= MAX_ELEMS
            && self.k <= MAX_ELEMS / 16
    }
    fn bits(&self) -> usize {
        self.input.bits()
    }
    /// A (and B) values each lane holds: consecutive k.
    fn per_lane(&self) -> usize {
        self.m * self.k * self.blocks / 64
    }
    /// Registers of the B operand, and of a dense A.
    pub fn b_regs(&self) -> usize {
        (self.per_lane() * self.bits()).div_ceil(32)
    }
    /// Registers of the A operand: half of a dense one's when sparse.
    pub fn a_regs(&self) -> usize {
        if self.sparse {
            self.b_regs() / 2
        } else {
            self.b_regs()
        }
    }
    /// Registers of C and D.
    pub fn acc_regs(&self) -> usize {
        self.m * self.n * self.blocks / 64 * if self.input == MfmaInput::F64 { 2 } else { 1 }
    }
    /// The registers the C operand of [`Backend::v_mfma`] holds: C, then for a sparse shape the index register.
    pub fn c_regs(&self) -> usize {
        self.acc_regs() + self.sparse as usize
    }
    /// How many sets of index bits a sparse shape's index register holds: a lane's stored A values take 2 bits
    /// each.
    pub fn index_sets(&self) -> usize {
        32 / self.per_lane()
    }
    /// The first index bit of the set a sparse shape reads.
    fn index_base(&self) -> usize {
        if self.cbsz == 0 {
            self.abid as usize * self.per_lane()
        } else {
            0
        }
    }
    /// Where the stored value `slot` (0, 1) of the k group of four holding A[i][kk] of a sparse shape lies:
    /// (lane, element of the lane's A registers, first index bit in the index register). The lane is the dense
    /// layout's; a lane's groups of four k are stored as two consecutive elements each, and the two index bits
    /// of each element follow in the same order.
    pub fn sparse_at(&self, i: usize, kk: usize, slot: usize) -> (usize, usize, usize) {
        let p = self.per_lane();
        let (lane, _) = self.input_at(self.m, i, kk, 0);
        let e = kk % p / 4 * 2 + slot;
        (lane, e, self.index_base() + 2 * e)
    }
    /// Where A[i][kk] of block `b` lies (for B: B[kk][i], with n for m): (lane, element of the lane). Block b
    /// takes lanes b*m.., each lane holds `per_lane` consecutive k values, and the next k values follow
    /// after every block's.
    pub fn input_at(&self, outer: usize, i: usize, kk: usize, b: usize) -> (usize, usize) {
        let p = self.per_lane();
        (b * outer + kk / p * outer * self.blocks + i, kk % p)
    }
    /// Where C[i][j] and D[i][j] of block `b` lie: (lane, register). A 32-bit result fills groups of four
    /// registers n lanes wide (a 64-bit one register pairs one row tall, the register here counting pairs),
    /// blocks that fit side by side in a register's 64 lanes sharing it.
    pub fn output_at(&self, i: usize, j: usize, b: usize) -> (usize, usize) {
        let (m, n) = (self.m, self.n);
        let h = if self.input == MfmaInput::F64 { 1 } else { 4 };
        let rows_per_reg = 64 / n;
        let blocks_per_reg = 64usize.div_ceil(n * m / h);
        let reg = b * (m * n / 64) + i / (h * rows_per_reg) * h + i % h;
        let lane = b % blocks_per_reg * n + i / h % rows_per_reg * blocks_per_reg * n + j;
        (lane, reg)
    }
    /// The lane BLGP reads B from for lane `lane`: 0 as is, 1 and 2 the lower or upper 32 lanes in both
    /// halves, 3 rotated down by 16, 4..7 the first, second, third or fourth 16 lanes in every quarter.
    pub fn blgp_lane(&self, lane: usize) -> usize {
        match self.blgp {
            1 => lane % 32,
            2 => lane % 32 + 32,
            3 => (lane + 16) % 64,
            g @ 4..=7 => lane % 16 + 16 * (g as usize - 4),
            _ => lane,
        }
    }
}

/// Element `e` of an A or B lane value of type `t` (register `regs[e * bits / 32]`), as f64 (exact); an i8
/// as its integer value.
fn element(t: MfmaInput, regs: &[[u32; 64]], lane: usize, e: usize) -> f64 {
    let bits = t.bits();
    if t == MfmaInput::F64 {
        return f64::from_bits((regs[2 * e + 1][lane] as u64) << 32 | regs[2 * e][lane] as u64);
    }
    let raw = regs[e * bits / 32][lane] >> (e * bits % 32);
    match t {
        MfmaInput::F16 => f16_to_f32(raw & 0xffff) as f64,
        MfmaInput::Bf16 => f32::from_bits((raw & 0xffff) << 16) as f64,
        MfmaInput::F32 | MfmaInput::Xf32 => f32::from_bits(raw) as f64,
        MfmaInput::I8 => raw as u8 as i8 as f64,
        MfmaInput::Fp8 => f8_to_f64(raw as u8, 3, 8),
        MfmaInput::Bf8 => f8_to_f64(raw as u8, 2, 16),
        MfmaInput::F64 => unreachable!("handled above"),
    }
}

/// An 8-bit float of gfx942 with `mant` mantissa bits and exponent `bias`: 0x80 is NaN, there are no
/// infinities and no negative zero; exponent field 0 holds subnormals.
pub(crate) fn f8_to_f64(x: u8, mant: u32, bias: i32) -> f64 {
    if x == 0x80 {
        return f64::NAN;
    }
    let e = (x & 0x7f) as i32 >> mant;
    let m = (x as u32 & ((1 << mant) - 1)) as f64 / (1u32 << mant) as f64;
    let v = if e == 0 {
        m * 2f64.powi(1 - bias)
    } else {
        (1.0 + m) * 2f64.powi(e - bias)
    };
    if x & 0x80 != 0 {
        -v
    } else {
        v
    }
}

/// Any MFMA, one dot product at a time from the lane layouts ([`Mfma::input_at`], [`Mfma::output_at`]) with
/// the modifiers: f32 results accumulate from C in f64 in order of k (products of the inputs are exact there)
/// and round once to f32, a NaN becoming 0x7fc00000, as the SIMD routine does; i32 results wrap; f64
/// results fuse each multiply-add in order of k.
fn mfma_general(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], c: &[[u32; 64]]) -> Vec<[u32; 64]> {
    if s.sparse {
        return smfmac(s, a, b, c);
    }
    let mut d = c[..s.acc_regs()].to_vec();
    let sign = |bit: u8| if s.neg >> bit & 1 == 1 { -1.0 } else { 1.0 };
    for blk in 0..s.blocks {
        let a_blk = blk >> s.cbsz << s.cbsz | s.abid as usize;
        for i in 0..s.m {
            for j in 0..s.n {
                let (lane, r) = s.output_at(i, j, blk);
                let ab = |kk: usize| {
                    let (la, ea) = s.input_at(s.m, i, kk, a_blk);
                    let (lb, eb) = s.input_at(s.n, j, kk, blk);
                    (element(s.input, a, la, ea), element(s.input_b, b, s.blgp_lane(lb), eb))
                };
                match s.input {
                    MfmaInput::I8 => {
                        let mut acc = c[r][lane] as i32;
                        for kk in 0..s.k {
                            let (x, y) = ab(kk);
                            acc = acc.wrapping_add(x as i32 * y as i32);
                        }
                        d[r][lane] = acc as u32;
                    }
                    MfmaInput::F64 => {
                        let mut acc =
                            sign(2) * f64::from_bits((c[2 * r + 1][lane] as u64) << 32 | c[2 * r][lane] as u64);
                        for kk in 0..s.k {
                            let (x, y) = ab(kk);
                            acc = (sign(0) * x).mul_add(sign(1) * y, acc);
                        }
                        (d[2 * r][lane], d[2 * r + 1][lane]) = (acc.to_bits() as u32, (acc.to_bits() >> 32) as u32);
                    }
                    _ => {
                        let mut acc = f32::from_bits(c[r][lane]) as f64;
                        for kk in 0..s.k {
                            let (x, y) = ab(kk);
                            acc += x * y;
                        }
                        d[r][lane] = round_f32(acc);
                    }
                }
            }
        }
    }
    d
}

/// A sparse MFMA ([`Mfma`]'s `sparse`): each dot product adds, in order of k group, the two stored A values of
/// the group times the B values at the k their index bits name, rounding as [`mfma_general`] does (a
/// repeated index adds both products).
fn smfmac(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], c: &[[u32; 64]]) -> Vec<[u32; 64]> {
    let mut d = c[..s.acc_regs()].to_vec();
    let index = &c[s.acc_regs()];
    for i in 0..s.m {
        for j in 0..s.n {
            let (lane, r) = s.output_at(i, j, 0);
            let terms = (0..s.k)
                .step_by(4)
                .flat_map(|group| (0..2).map(move |slot| (group, slot)))
                .map(|(group, slot)| {
                    let (la, ea, bit) = s.sparse_at(i, group, slot);
                    let kk = group + (index[la] >> bit & 3) as usize;
                    let (lb, eb) = s.input_at(s.n, j, kk, 0);
                    (element(s.input, a, la, ea), element(s.input_b, b, lb, eb))
                });
            d[r][lane] = if s.input == MfmaInput::I8 {
                terms.fold(c[r][lane] as i32, |acc, (x, y)| acc.wrapping_add(x as i32 * y as i32)) as u32
            } else {
                round_f32(terms.fold(f32::from_bits(c[r][lane]) as f64, |acc, (x, y)| acc + x * y))
            };
        }
    }
    d
}

/// D = A * B + C for any MFMA, lane layouts as the CDNA2/CDNA3 ISA and AMD's matrix instruction calculator
/// give them ([`Mfma::input_at`], [`Mfma::output_at`]; for one block: A[i][kk] in lane i + m * (kk / p),
/// element kk % p of the lane's registers (p = values per lane), B[kk][j] likewise with j; D[i][j] in lane
/// j + n * ((i / 4) % (64 / n)), register i % 4 + 4 * (i / (4 * 64 / n))). Each f32 dot product starts from C
/// and adds the products in order of k, in f64: f16, bf16, f32 and 8-bit float products are exact there, so
/// only the sums round, and the result rounds once more to f32. A NaN result is the default NaN 0x7fc00000.
/// The hardware's internal rounding is not modelled bit for bit; i8 products sum exactly into a wrapping i32.
///
/// Both engines call this. A plain single-block f16, bf16 or f32 product runs in host SIMD code, AVX-512 or
/// AVX2 with fused multiply-adds when the host has them (found at run time): a product of two such values is
/// exact in f64, so fusing the add rounds the same; every other MFMA (blocks, modifiers, i8, 8-bit floats,
/// xf32, f64) runs [`mfma_general`].
pub fn mfma_lanes(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], c: &[[u32; 64]]) -> Vec<[u32; 64]> {
    if !s.simd() {
        return mfma_general(s, a, b, c);
    }
    let mut d = c[..s.acc_regs()].to_vec();
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the host has AVX-512F and FMA, checked just above.
            unsafe { mfma_avx512(s, a, b, &mut d) };
            return d;
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the host has AVX2 and FMA, checked just above.
            unsafe { mfma_avx2(s, a, b, &mut d) };
            return d;
        }
    }
    mfma_block::<false>(s, a, b, &mut d);
    d
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn mfma_avx512(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], d: &mut [[u32; 64]]) {
    mfma_block::<true>(s, a, b, d)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn mfma_avx2(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], d: &mut [[u32; 64]]) {
    mfma_block::<true>(s, a, b, d)
}

/// The most A (or B) elements of a single-block shape: 64 lanes of at most four values.
const MAX_ELEMS: usize = 256;

/// The f32, f16 or bf16 element `e` of every lane, as f64 (exact).
#[inline(always)]
fn elements(s: Mfma, regs: &[[u32; 64]], e: usize, out: &mut [f64; 64]) {
    let bits = s.bits();
    let (r, shift) = (e * bits / 32, e * bits % 32);
    let reg = &regs[r];
    for (o, &raw) in out.iter_mut().zip(reg.iter()) {
        let raw = raw >> shift;
        *o = match s.input {
            MfmaInput::F16 => f16_to_f32(raw & 0xffff) as f64,
            MfmaInput::Bf16 => f32::from_bits((raw & 0xffff) << 16) as f64,
            _ => f32::from_bits(raw) as f64,
        };
    }
}

/// f16 bits to f32, exactly and without branches (so it vectorizes): the magnitude shifted into an f32's
/// exponent and mantissa and scaled by 2^112 (exact for normals and subnormals alike); infinities and NaNs
/// (payload kept) by their bit pattern.
#[inline(always)]
fn f16_to_f32(h: u32) -> f32 {
    let mag = (h & 0x7fff) << 13;
    let scaled = (f32::from_bits(mag) * f32::from_bits(0x7780_0000)).to_bits();
    let special = 0x7f80_0000 | (h & 0x3ff) << 13;
    let bits = if h & 0x7c00 == 0x7c00 { special } else { scaled };
    f32::from_bits(bits | (h & 0x8000) << 16)
}

/// With `FUSED`, each product is added by a fused multiply-add (the host has one in hardware).
#[inline(always)]
fn mfma_block<const FUSED: bool>(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], d: &mut [[u32; 64]]) {
    let (m, n, k, p) = (s.m, s.n, s.k, s.per_lane());
    assert!(
        m * k <= MAX_ELEMS && n * k <= MAX_ELEMS && k <= MAX_ELEMS / 16 && 64 % n == 0 && 64 % m == 0,
        "a single-block MFMA shape"
    );
    // A and B by k (ak[kk m + i], bk[kk n + j]), as f64: lanes q m .. (q + 1) m of element e hold k index
    // q p + e of A (and likewise for B with n)
    let (mut ak, mut bk) = ([0f64; MAX_ELEMS], [0f64; MAX_ELEMS]);
    let mut lanes = [0f64; 64];
    for e in 0..p {
        elements(s, a, e, &mut lanes);
        for (q, part) in lanes.chunks_exact(m).enumerate() {
            let kk = q * p + e;
            ak[kk * m..(kk + 1) * m].copy_from_slice(part);
        }
        elements(s, b, e, &mut lanes);
        for (q, part) in lanes.chunks_exact(n).enumerate() {
            let kk = q * p + e;
            bk[kk * n..(kk + 1) * n].copy_from_slice(part);
        }
    }
    let groups = 64 / n;
    let mut row = [0f64; MAX_ELEMS / 16];
    for (r, reg) in d.iter_mut().enumerate() {
        for g in 0..groups {
            let i = r % 4 + 4 * g + 4 * groups * (r / 4);
            for (kk, x) in row[..k].iter_mut().enumerate() {
                *x = ak[kk * m + i];
            }
            let out = &mut reg[g * n..(g + 1) * n];
            match n {
                32 => dot::<32, FUSED>(&row[..k], &bk, out),
                16 => dot::<16, FUSED>(&row[..k], &bk, out),
                _ => dot_any(&row[..k], &bk, n, out),
            }
        }
    }
}

/// out[j] = out[j] + sum over kk of row[kk] * bk[kk N + j], in order of kk, rounded to f32 at the end.
#[inline(always)]
fn dot<const N: usize, const FUSED: bool>(row: &[f64], bk: &[f64], out: &mut [u32]) {
    let mut acc = [0f64; N];
    for (x, &c) in acc.iter_mut().zip(out.iter()) {
        *x = f32::from_bits(c) as f64;
    }
    for (kk, &x) in row.iter().enumerate() {
        let col: &[f64; N] = bk[kk * N..(kk + 1) * N].try_into().expect("N values");
        for j in 0..N {
            acc[j] = if FUSED {
                x.mul_add(col[j], acc[j])
            } else {
                acc[j] + x * col[j]
            };
        }
    }
    for (o, x) in out.iter_mut().zip(acc) {
        *o = round_f32(x);
    }
}

fn dot_any(row: &[f64], bk: &[f64], n: usize, out: &mut [u32]) {
    for (j, o) in out.iter_mut().enumerate() {
        let mut acc = f32::from_bits(*o) as f64;
        for (kk, &x) in row.iter().enumerate() {
            acc += x * bk[kk * n + j];
        }
        *o = round_f32(acc);
    }
}

#[inline(always)]
fn round_f32(x: f64) -> u32 {
    let y = x as f32;
    if y.is_nan() {
        0x7fc0_0000
    } else {
        y.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition written plainly: one dot product at a time from the lane layouts, f16 converted by
    /// [`crate::lanefn::f16_to_f64`].
    fn plain(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], c: &[[u32; 64]]) -> Vec<[u32; 64]> {
        let (p, bits) = (s.per_lane(), s.bits());
        let elem = |regs: &[[u32; 64]], lane: usize, e: usize| -> f64 {
            let raw = regs[e * bits / 32][lane] >> (e * bits % 32);
            match s.input {
                MfmaInput::F16 => crate::lanefn::f16_to_f64(raw as u16),
                MfmaInput::Bf16 => f32::from_bits((raw & 0xffff) << 16) as f64,
                _ => f32::from_bits(raw) as f64,
            }
        };
        let groups = 64 / s.n;
        let mut d = c.to_vec();
        for i in 0..s.m {
            for j in 0..s.n {
                let (lane, reg) = (j + s.n * ((i / 4) % groups), i % 4 + 4 * (i / (4 * groups)));
                let mut acc = f32::from_bits(c[reg][lane]) as f64;
                for kk in 0..s.k {
                    acc += elem(a, i + s.m * (kk / p), kk % p) * elem(b, j + s.n * (kk / p), kk % p);
                }
                let r = acc as f32;
                d[reg][lane] = if r.is_nan() { 0x7fc0_0000 } else { r.to_bits() };
            }
        }
        d
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    // specials: zeros of both signs, infinities, NaNs, subnormals, the largest finite values
    const F16_SPECIAL: [u32; 10] = [
        0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e01, 0x7d00, 0x0001, 0x83ff, 0x7bff, 0x3c00,
    ];
    const F32_SPECIAL: [u32; 7] = [
        0,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0001,
        0x0000_0001,
        0x7f7f_ffff,
    ];

    /// A random 16-bit A or B element: a finite f16 or bf16 of either sign, now and then a special.
    fn half(rng: &mut Rng, input: MfmaInput, specials: bool) -> u32 {
        let r = rng.next();
        if specials && r.is_multiple_of(16) {
            F16_SPECIAL[(r >> 8) as usize % F16_SPECIAL.len()]
        } else if input == MfmaInput::Bf16 {
            (0x3f80_0000 ^ (r as u32 & 0x807f_ffff)) >> 16
        } else {
            r as u32 & 0xbfff
        }
    }

    fn word(rng: &mut Rng, input: MfmaInput, is_c: bool, specials: bool) -> u32 {
        if input == MfmaInput::F32 || is_c {
            let r = rng.next();
            if specials && r.is_multiple_of(16) {
                F32_SPECIAL[(r >> 8) as usize % F32_SPECIAL.len()]
            } else {
                (0x3f80_0000 | (r as u32 & 0x007f_ffff)) ^ (r as u32 & 0x8000_0000)
            }
        } else {
            half(rng, input, specials) | half(rng, input, specials) << 16
        }
    }

    #[test]
    fn simd_blocks_equal_the_plain_definition() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for (m, n, k, input) in [
            (32, 32, 8, MfmaInput::F16),
            (16, 16, 16, MfmaInput::F16),
            (32, 32, 8, MfmaInput::Bf16),
            (16, 16, 16, MfmaInput::Bf16),
            (32, 32, 4, MfmaInput::Bf16),
            (32, 32, 2, MfmaInput::F32),
            (16, 16, 4, MfmaInput::F32),
        ] {
            let s = Mfma {
                m,
                n,
                k,
                blocks: 1,
                input,
                input_b: input,
                cbsz: 0,
                abid: 0,
                blgp: 0,
                neg: 0,
                sparse: false,
            };
            for round in 0..20 {
                let specials = round % 4 == 3;
                let mut regs = |count: usize, is_c: bool| -> Vec<[u32; 64]> {
                    (0..count)
                        .map(|_| std::array::from_fn(|_| word(&mut rng, input, is_c, specials)))
                        .collect()
                };
                let (a, b, c) = (
                    regs(s.a_regs(), false),
                    regs(s.b_regs(), false),
                    regs(s.acc_regs(), true),
                );
                let want = plain(s, &a, &b, &c);
                assert_eq!(mfma_lanes(s, &a, &b, &c), want, "{s:?} round {round}");
                for fused in [false, true] {
                    let mut d = c.clone();
                    if fused {
                        mfma_block::<true>(s, &a, &b, &mut d);
                    } else {
                        mfma_block::<false>(s, &a, &b, &mut d);
                    }
                    assert_eq!(d, want, "{s:?} round {round}, portable code, fused {fused}");
                }
            }
        }
    }
}
