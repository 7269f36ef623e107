//! Matrix instructions: MFMA on VGPR or AGPR operands, and the AGPR moves (v_accvgpr_read/write/mov).

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
            let shape = inst.info.mfma.and_then(Mfma::of).ok_or_else(|| form(inst, "this MFMA shape"))?;
            // cbsz (NegHi), abid (OpSel, OpSelHi2) and blgp (Neg) broadcast and permute blocks: not modelled
            if inst.field(Field::NegHi) | inst.field(Field::OpSel) | inst.field(Field::OpSelHi2) | inst.field(Field::Neg) != 0 {
                return Err(form(inst, "MFMA cbsz/abid/blgp"));
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
            let a = read(b, Field::Src0, acc_ab & 1 == 1, shape.src_regs())?;
            let bb = read(b, Field::Src1, acc_ab >> 1 & 1 == 1, shape.src_regs())?;
            let c = read(b, Field::Src2, acc_cd, shape.acc_regs())?;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MfmaInput {
    F16,
    Bf16,
    F32,
    /// f64 inputs and an f64 accumulator.
    F64,
}

/// A single-block MFMA shape: D (m x n, f32) = A (m x k) * B (k x n) + C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mfma {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub input: MfmaInput,
}

impl Mfma {
    /// The shape of a supported MFMA from the table's `mfma` column: single-block f16, bf16, f32 and f64
    /// shapes.
    pub fn of(s: isa_amdgpu::table::MfmaShape) -> Option<Mfma> {
        use isa_amdgpu::table::DataType;
        let input = match s.input {
            DataType::F16 => MfmaInput::F16,
            DataType::Bf16 => MfmaInput::Bf16,
            DataType::F32 => MfmaInput::F32,
            DataType::F64 => MfmaInput::F64,
            _ => return None,
        };
        if s.blocks != 1 || s.sparse || (input == MfmaInput::F64 && (s.m, s.k) != (16, 4)) {
            return None;
        }
        Some(Mfma { m: s.m as usize, n: s.n as usize, k: s.k as usize, input })
    }
    fn bits(&self) -> usize {
        match self.input {
            MfmaInput::F64 => 64,
            MfmaInput::F32 => 32,
            _ => 16,
        }
    }
    /// A (and B) values each lane holds: consecutive k.
    fn per_lane(&self) -> usize {
        self.m * self.k / 64
    }
    /// Registers of the A (and B) operand.
    pub fn src_regs(&self) -> usize {
        (self.per_lane() * self.bits()).div_ceil(32)
    }
    /// Registers of C and D.
    pub fn acc_regs(&self) -> usize {
        self.m * self.n / 64 * if self.input == MfmaInput::F64 { 2 } else { 1 }
    }
}


/// D = A * B + C for one single-block MFMA, lane layouts as the CDNA2/CDNA3 ISA gives them: A[i][kk] in lane
/// i + m * (kk / p), element kk % p of the lane's registers (p = values per lane), B[kk][j] likewise with j;
/// D[i][j] in lane j + n * ((i / 4) % (64 / n)), register i % 4 + 4 * (i / (4 * 64 / n)). Each dot product is
/// summed exactly (in f64) and rounded once to f32; the hardware's internal rounding is not modelled bit for bit.
pub fn mfma_lanes(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], c: &[[u32; 64]]) -> Vec<[u32; 64]> {
    if s.input == MfmaInput::F64 {
        return mfma_f64_lanes(s, a, b, c);
    }
    let (p, bits) = (s.per_lane(), s.bits());
    let elem = |regs: &[[u32; 64]], lane: usize, e: usize| -> f64 {
        let (r, shift) = (e * bits / 32, e * bits % 32);
        let raw = regs[r][lane] >> shift;
        match s.input {
            MfmaInput::F16 => crate::lanefn::f16_to_f64(raw as u16),
            MfmaInput::Bf16 => f32::from_bits((raw & 0xffff) << 16) as f64,
            MfmaInput::F32 | MfmaInput::F64 => f32::from_bits(raw) as f64,
        }
    };
    // the matrices as f64, A row-major and B column-major, so each dot product runs over contiguous memory
    let (m, n, k) = (s.m, s.n, s.k);
    let mut am = vec![0f64; m * k];
    let mut bt = vec![0f64; n * k];
    for kk in 0..k {
        for i in 0..m {
            am[i * k + kk] = elem(a, i + m * (kk / p), kk % p);
        }
        for j in 0..n {
            bt[j * k + kk] = elem(b, j + n * (kk / p), kk % p);
        }
    }
    let groups = 64 / n;
    let mut d = c.to_vec();
    for i in 0..m {
        let row = &am[i * k..(i + 1) * k];
        for j in 0..n {
            let (lane, reg) = (j + n * ((i / 4) % groups), i % 4 + 4 * (i / (4 * groups)));
            let mut acc = f32::from_bits(c[reg][lane]) as f64;
            for (x, y) in row.iter().zip(&bt[j * k..(j + 1) * k]) {
                acc += x * y;
            }
            d[reg][lane] = (acc as f32).to_bits();
        }
    }
    d
}

/// The f64 16x16x4 MFMA: A[i][kk] in lane i + 16 kk and B[kk][j] in lane j + 16 kk (one f64 per lane, in a
/// register pair); D[i][j] in lane j + 16 (i % 4), f64 element i / 4 — rows interleave across the lane groups,
/// unlike the f32 shapes (AMD's composable_kernel describes it with group_size 1). Each dot product is
/// accumulated with fused multiply-adds in order of k.
fn mfma_f64_lanes(s: Mfma, a: &[[u32; 64]], b: &[[u32; 64]], c: &[[u32; 64]]) -> Vec<[u32; 64]> {
    let get = |regs: &[[u32; 64]], r: usize, lane: usize| f64::from_bits((regs[2 * r + 1][lane] as u64) << 32 | regs[2 * r][lane] as u64);
    let mut d = c.to_vec();
    for i in 0..s.m {
        for j in 0..s.n {
            let (lane, r) = (j + s.n * (i % 4), i / 4);
            let mut acc = get(c, r, lane);
            for kk in 0..s.k {
                acc = get(a, 0, i + s.m * kk).mul_add(get(b, 0, j + s.n * kk), acc);
            }
            d[2 * r][lane] = acc.to_bits() as u32;
            d[2 * r + 1][lane] = (acc.to_bits() >> 32) as u32;
        }
    }
    d
}
