//! Instruction semantics, written once over a [`Backend`].
//!
//! The interpreter ([`crate::interp`]) implements `Backend` by computing on whole-wave arrays right away; the
//! JIT (issue 4) will implement it by emitting Cranelift IR for the same calls. Operand decoding (SGPR,
//! special register, inline constant, literal, VGPR) and the meaning of each opcode live here and nowhere
//! else. Control flow comes back as a [`Flow`] so that a block compiler can turn it into jumps.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{Implicit, OperandKind, SrcType};
use isa_amdgpu::{Inst, Opcode};

use crate::lanefn::LaneFn;

mod helpers;
mod memory;

/// Scalar ALU operations on 32-bit values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SOp {
    Add,
    Sub,
    Mul,
    MulHiU32,
    MulHiI32,
    And,
    Or,
    Xor,
    Shl,
    Lshr,
    Ashr,
    /// 1 if a < b (unsigned), else 0.
    LtU,
    /// 1 if a < b (signed), else 0.
    LtI,
    /// 1 if a == b, else 0.
    Eq,
    /// The bits of a reversed (b is ignored).
    Brev,
    /// The index of a's lowest set bit, all ones for 0 (b is ignored).
    Ff1,
}

/// Per-lane 32-bit operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VOp {
    AddU32,
    SubU32,
    MulLoU32,
    /// High 32 bits of the unsigned 64-bit product.
    MulHiU32,
    MulHiI32,
    MulU32U24,
    MulI32I24,
    MinU32,
    MaxU32,
    MinI32,
    MaxI32,
    And,
    Or,
    Xor,
    /// a << (b & 31) (the "rev" opcodes swap their operands before calling).
    Shl,
    Lshr,
    Ashr,
    AddF32,
    SubF32,
    MulF32,
    MinF32,
    MaxF32,
    /// a * 2^(b as i32).
    LdexpF32,
}

/// Read-modify-write operations of atomics (32-bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    SMin,
    SMax,
    UMin,
    UMax,
    Swap,
    /// old >= data ? 0 : old + 1
    Inc,
    /// (old == 0 || old > data) ? data : old - 1
    Dec,
    AddF32,
    /// f64 add (64-bit atomics only).
    AddF64,
}

impl AtomicOp {
    /// The new value from the old one and the operand (the 32-bit atomics).
    pub fn apply(self, old: u32, data: u32) -> u32 {
        self.apply_width(old as u64, data as u64, false) as u32
    }

    /// The new 64-bit value from the old one and the operand (the 64-bit atomics).
    pub fn apply64(self, old: u64, data: u64) -> u64 {
        self.apply_width(old, data, true)
    }

    /// One definition for both widths: 32-bit operands arrive zero-extended and the result is truncated.
    fn apply_width(self, old: u64, data: u64, wide: bool) -> u64 {
        let mask = if wide { u64::MAX } else { u32::MAX as u64 };
        let signed = |v: u64| if wide { v as i64 } else { v as u32 as i32 as i64 };
        let r = match self {
            AtomicOp::Add => old.wrapping_add(data),
            AtomicOp::Sub => old.wrapping_sub(data),
            AtomicOp::And => old & data,
            AtomicOp::Or => old | data,
            AtomicOp::Xor => old ^ data,
            AtomicOp::SMin => signed(old).min(signed(data)) as u64,
            AtomicOp::SMax => signed(old).max(signed(data)) as u64,
            AtomicOp::UMin => old.min(data),
            AtomicOp::UMax => old.max(data),
            AtomicOp::Swap => data,
            AtomicOp::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            AtomicOp::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            // the float add of the access's width
            AtomicOp::AddF32 | AtomicOp::AddF64 if wide => (f64::from_bits(old) + f64::from_bits(data)).to_bits(),
            AtomicOp::AddF32 | AtomicOp::AddF64 => (f32::from_bits(old as u32) + f32::from_bits(data as u32)).to_bits() as u64,
        };
        r & mask
    }
}

/// Bitwise operations on lane masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskOp {
    And,
    Or,
    Xor,
    /// a & !b
    AndNot,
}

/// Per-lane unary operations on 32-bit values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VUn {
    CvtF32U32,
    CvtF32I32,
    CvtU32F32,
    CvtI32F32,
    TruncF32,
    FloorF32,
    RcpF32,
    SqrtF32,
    /// Bitwise NOT.
    Not,
    /// Population count.
    Bcnt,
    /// Bit reverse.
    Brev,
    /// 2^x (v_exp_f32).
    ExpF32,
    /// log2 x (v_log_f32).
    LogF32,
    /// Round to nearest even.
    RndneF32,
    CeilF32,
    /// x - floor(x), below 1.
    FractF32,
    /// 1 / sqrt(x).
    RsqF32,
    /// sin(2 pi x): the argument is in revolutions.
    SinF32,
    CosF32,
    /// The mantissa of frexp, in [0.5, 1) with x's sign; infinities and NaN pass through.
    FrexpMantF32,
    /// The exponent of frexp; 0 for infinities and NaN.
    FrexpExpF32,
    /// Leading zeros (v_ffbh_u32), all ones for 0.
    Ffbh,
    /// Trailing zeros (v_ffbl_b32), all ones for 0.
    Ffbl,
}

/// Per-lane operations on 64-bit values held as (lo, hi) register pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VOp64 {
    AddF64,
    MulF64,
    /// a >> (b & 63), logical (the first operand is the value).
    Lshr,
    Ashr,
    /// a * 2^(b as i32), b taken from the low half.
    LdexpF64,
}

/// Unary operations on 64-bit lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VUn64 {
    TruncF64,
    FloorF64,
    RcpF64,
    SqrtF64,
}

/// Conversions between 32- and 64-bit lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VCvt {
    F64FromU32,
    F64FromI32,
    F64FromF32,
    U32FromF64,
    I32FromF64,
    F32FromF64,
}

/// Per-lane 64-bit comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VCmp64 {
    EqU64,
    NeU64,
    LtU64,
    LeU64,
    GtU64,
    GeU64,
    LtI64,
    LeI64,
    GtI64,
    GeI64,
    EqF64,
    NeqF64,
    LtF64,
    LeF64,
    GtF64,
    GeF64,
}

/// Per-lane comparisons producing a lane mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VCmp {
    LtU32,
    EqU32,
    LeU32,
    GtU32,
    NeU32,
    GeU32,
    LtI32,
    EqI32,
    LeI32,
    GtI32,
    NeI32,
    GeI32,
    LtF32,
    EqF32,
    LeF32,
    GtF32,
    GeF32,
    /// Not equal or unordered.
    NeqF32,
    /// Less or greater (ordered, not equal).
    LgF32,
    /// Both ordered (neither NaN).
    OF32,
    /// Unordered (either NaN).
    UF32,
    NlgF32,
    NltF32,
    NgtF32,
    NleF32,
    NgeF32,
    /// a's class is one of the classes whose bits b sets (bit 0 signalling NaN, 1 quiet NaN, 2 -inf,
    /// 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf).
    ClassF32,
}

/// Where execution goes after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow<S> {
    Next,
    /// Unconditional jump.
    Jump(u64),
    /// Jump if `cond` (0/1) is 1.
    Branch { cond: S, target: u64 },
    /// Jump to the address in a register pair (s_setpc_b64, s_swappc_b64).
    Indirect { lo: S, hi: S },
    Barrier,
    End,
}

/// Why an instruction could not execute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("{mnemonic} is not supported by wavejit's engine yet")]
    Unsupported { mnemonic: &'static str },
    #[error("{mnemonic}: {what} is not supported yet")]
    UnsupportedForm { mnemonic: &'static str, what: &'static str },
    #[error("{mnemonic}: {lane}{fault}", lane = lane.map(|l| format!("lane {l}: ")).unwrap_or_default())]
    Memory { mnemonic: &'static str, lane: Option<u32>, fault: crate::memory::MemoryFault },
    /// An image instruction whose resource or sampler asks for what wavejit does not emulate, or is not valid.
    #[error("{mnemonic}: {what}")]
    Image { mnemonic: &'static str, what: String },
    #[error("s_trap {0} executed")]
    Trap(u32),
    #[error("{mnemonic}: private (scratch) access past the {lane_bytes}-byte private segment of a lane")]
    Private { mnemonic: &'static str, lane_bytes: u32 },
    #[error("{mnemonic}: lane {lane}: LDS {access} of {len} bytes at {address:#x} outside the workgroup's {size}-byte LDS allocation")]
    Lds { mnemonic: &'static str, lane: u32, access: crate::memory::Access, address: u64, len: u64, size: u64 },
}

/// What the semantics need from an execution backend.
pub trait Backend {
    /// A uniform 32-bit value.
    type S: Copy;
    /// A whole-wave vector of 32-bit values.
    type V: Copy;
    /// A 64-lane mask.
    type M: Copy;

    fn s_const(&mut self, x: u32) -> Self::S;
    fn s_get(&mut self, reg: u32) -> Self::S;
    fn s_set(&mut self, reg: u32, v: Self::S);
    fn s_op(&mut self, op: SOp, a: Self::S, b: Self::S) -> Self::S;
    /// (a + b + carry_in) and its carry out (0/1).
    fn s_add_carry(&mut self, a: Self::S, b: Self::S, carry_in: Self::S) -> (Self::S, Self::S);
    fn scc(&mut self) -> Self::S;
    /// `cond` (0/1) ? b : a
    fn s_select(&mut self, cond: Self::S, b: Self::S, a: Self::S) -> Self::S;
    fn set_scc(&mut self, v: Self::S);
    /// 1 if `v` != 0, else 0.
    fn s_nonzero(&mut self, v: Self::S) -> Self::S;

    fn mask_from(&mut self, lo: Self::S, hi: Self::S) -> Self::M;
    fn mask_parts(&mut self, m: Self::M) -> (Self::S, Self::S);
    fn exec(&mut self) -> Self::M;
    fn set_exec(&mut self, m: Self::M);

    fn v_get(&mut self, reg: u32) -> Self::V;
    /// Writes the lanes of `v` selected by `m`.
    fn v_set(&mut self, reg: u32, v: Self::V, m: Self::M);
    fn v_splat(&mut self, s: Self::S) -> Self::V;
    fn v_op(&mut self, op: VOp, a: Self::V, b: Self::V) -> Self::V;
    /// a * b + c in f32 with one rounding.
    fn v_fma_f32(&mut self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    fn v_cmp(&mut self, op: VCmp, a: Self::V, b: Self::V) -> Self::M;
    /// Per lane a + b + (carry_in lane bit); the carry out as a mask.
    fn v_add_carry(&mut self, a: Self::V, b: Self::V, carry_in: Option<Self::M>) -> (Self::V, Self::M);
    fn v_un(&mut self, op: VUn, a: Self::V) -> Self::V;
    fn v_op64(&mut self, op: VOp64, a: (Self::V, Self::V), b: (Self::V, Self::V)) -> (Self::V, Self::V);
    fn v_un64(&mut self, op: VUn64, a: (Self::V, Self::V)) -> (Self::V, Self::V);
    /// a * b + c in f64 with one rounding.
    fn v_fma_f64(&mut self, a: (Self::V, Self::V), b: (Self::V, Self::V), c: (Self::V, Self::V)) -> (Self::V, Self::V);
    /// A 32→64 or 64→32 conversion; 32-bit results come back in the first element.
    fn v_cvt(&mut self, op: VCvt, a: (Self::V, Self::V)) -> (Self::V, Self::V);
    fn v_cmp64(&mut self, op: VCmp64, a: (Self::V, Self::V), b: (Self::V, Self::V)) -> Self::M;
    /// Per lane: `m` set → b, clear → a.
    fn v_select(&mut self, m: Self::M, a: Self::V, b: Self::V) -> Self::V;
    /// Per lane a*b (u32 × u32) + c (u64); carry out of bit 63 as a mask.
    fn v_mad_u64_u32(&mut self, a: Self::V, b: Self::V, c: (Self::V, Self::V), signed: bool) -> ((Self::V, Self::V), Self::M);
    /// Per lane a - b - borrow_in; the borrow out as a mask.
    fn v_sub_borrow(&mut self, a: Self::V, b: Self::V, borrow_in: Option<Self::M>) -> (Self::V, Self::M);
    fn mask_op(&mut self, op: MaskOp, a: Self::M, b: Self::M) -> Self::M;

    /// 64-bit uniform shift left of (lo, hi) by `amount & 63`.
    fn s_shl64(&mut self, lo: Self::S, hi: Self::S, amount: Self::S) -> (Self::S, Self::S);
    /// 64-bit uniform shift right (arithmetic when `signed`) of (lo, hi) by `amount & 63`.
    fn s_shr64(&mut self, lo: Self::S, hi: Self::S, amount: Self::S, signed: bool) -> (Self::S, Self::S);
    /// 64-bit per-lane shift left of (lo, hi) by `amount & 63`.
    fn v_shl64(&mut self, lo: Self::V, hi: Self::V, amount: Self::V) -> (Self::V, Self::V);

    /// This wave's private memory: (base lo, base hi, bytes per lane).
    fn scratch(&mut self) -> (Self::S, Self::S, Self::S);
    /// The value of a uniform when the backend knows it while executing (the interpreter does); `None` when it
    /// is only known at run time (the JIT, which then leaves the instruction to the interpreter).
    fn uniform_value(&mut self, s: Self::S) -> Option<u32>;
    /// Fails with `err` if any lane of `bad` is set.
    fn fail_if_any(&mut self, bad: Self::M, err: ExecError) -> Result<(), ExecError>;

    /// The value of `v` in lane `lane & 63` (v_readlane).
    fn v_lane_read(&mut self, v: Self::V, lane: Self::S) -> Self::S;
    /// The value of `v` in the first lane of `m` (lane 0 when `m` is empty).
    fn v_first_lane(&mut self, v: Self::V, m: Self::M) -> Self::S;
    /// `data` in the lanes of `v` selected per lane: result[l] = data[index[l] & 63] if that source lane is in
    /// `m`, else 0.
    fn v_permute(&mut self, data: Self::V, index: Self::V, m: Self::M) -> Self::V;
    /// The lane numbers 0..63.
    fn v_lane_ids(&mut self) -> Self::V;
    /// A vector of 64 constants.
    fn v_const(&mut self, values: &[u32; 64]) -> Self::V;
    /// Accumulation register (AGPR) `reg`.
    fn a_get(&mut self, reg: u32) -> Self::V;
    /// Writes AGPR `reg` in the lanes of `m`.
    fn a_set(&mut self, reg: u32, v: Self::V, m: Self::M);
    /// One matrix fused multiply-add over whole registers; the arithmetic is [`mfma_lanes`]'s.
    fn v_mfma(&mut self, shape: Mfma, a: &[Self::V], b: &[Self::V], c: &[Self::V]) -> Vec<Self::V>;
    /// A typed buffer access at per-lane addresses (lo, hi) in the lanes of `m`: `word3` is the buffer
    /// resource's word 3 (format and channel selects), `data` what a store writes; returns a load's registers.
    fn v_buffer_format(&mut self, op: &crate::image::FormatAccess, word3: Self::S, lo: Self::V, hi: Self::V, data: &[Self::V], m: Self::M) -> Result<Vec<Self::V>, ExecError>;
    /// One MIMG instruction: `t` is the image resource, `s` the sampler (for sampling forms), `addr` the
    /// address registers from VADDR on (as many as the longest form reads), `data` the registers a store
    /// writes; returns the registers a load or sample gives. The per-lane work is [`crate::image`]'s.
    fn v_image(&mut self, op: &crate::image::ImageInst, t: [Self::S; 8], s: [Self::S; 4], addr: &[Self::V], data: &[Self::V], m: Self::M) -> Result<Vec<Self::V>, ExecError>;
    /// A per-lane helper function over `f.inputs()` vectors, giving `f.outputs()` vectors.
    fn v_lanefn(&mut self, f: LaneFn, args: &[Self::V]) -> Vec<Self::V>;
    /// The same helper functions on uniform values.
    fn s_lanefn(&mut self, f: LaneFn, args: &[Self::S]) -> Vec<Self::S>;
    /// Marks the wave as entering a global wave sync barrier that releases once `count` waves of the grid have
    /// arrived (the instruction then yields [`Flow::Barrier`]).
    fn gws_barrier(&mut self, count: Self::S);
    /// Population count of a 64-bit value.
    fn s_popcount64(&mut self, lo: Self::S, hi: Self::S) -> Self::S;

    /// LDS atomic per active lane (in lane order); returns the old values.
    fn lds_atomic(&mut self, op: AtomicOp, addr: Self::V, offset: u32, data: Self::V, m: Self::M) -> Result<Self::V, ExecError>;
    /// Global compare-and-swap per active lane (in lane order) at (lo, hi) + offset, on 32-bit values (`src` and
    /// `cmp` one register each) or 64-bit ones (two each, low first): memory equal to `cmp` becomes `src`.
    /// Returns the old values.
    fn v_atomic_cmpswap(
        &mut self,
        lo: Self::V,
        hi: Self::V,
        offset: i64,
        src: &[Self::V],
        cmp: &[Self::V],
        m: Self::M,
    ) -> Result<Vec<Self::V>, ExecError>;
    /// Global atomic per active lane at (lo, hi) + offset; returns the old values.
    fn v_atomic(&mut self, op: AtomicOp, lo: Self::V, hi: Self::V, offset: i64, data: Self::V, m: Self::M) -> Result<Self::V, ExecError>;
    /// Loads of 1 or 2 bytes per active lane, zero- or sign-extended to 32 bits.
    fn v_load_narrow(&mut self, lo: Self::V, hi: Self::V, offset: i64, bytes: u32, signed: bool, m: Self::M) -> Result<Self::V, ExecError>;
    /// Stores of the low 1 or 2 bytes per active lane.
    fn v_store_narrow(&mut self, lo: Self::V, hi: Self::V, offset: i64, bytes: u32, data: Self::V, m: Self::M) -> Result<(), ExecError>;

    /// LDS: per active lane, `dwords` dwords at byte address `addr` + `offset`.
    fn lds_read(&mut self, addr: Self::V, offset: u32, dwords: u32, m: Self::M) -> Result<Vec<Self::V>, ExecError>;
    /// LDS loads of 1 or 2 bytes, zero- or sign-extended.
    fn lds_read_narrow(&mut self, addr: Self::V, offset: u32, bytes: u32, signed: bool, m: Self::M) -> Result<Self::V, ExecError>;
    /// LDS stores of the low 1 or 2 bytes.
    fn lds_write_narrow(&mut self, addr: Self::V, offset: u32, bytes: u32, data: Self::V, m: Self::M) -> Result<(), ExecError>;
    /// 64-bit LDS atomics on (lo, hi) data; returns the old values.
    fn lds_atomic64(&mut self, op: AtomicOp, addr: Self::V, offset: u32, data: (Self::V, Self::V), m: Self::M) -> Result<(Self::V, Self::V), ExecError>;
    /// LDS compare-and-store of 1 or 2 dwords: memory becomes `src` where it equals `cmp`; returns the old values.
    fn lds_cmpst(&mut self, addr: Self::V, offset: u32, cmp: &[Self::V], src: &[Self::V], m: Self::M) -> Result<Vec<Self::V>, ExecError>;
    /// 64-bit global atomics; returns the old values.
    fn v_atomic64(&mut self, op: AtomicOp, lo: Self::V, hi: Self::V, offset: i64, data: (Self::V, Self::V), m: Self::M) -> Result<(Self::V, Self::V), ExecError>;
    fn lds_write(&mut self, addr: Self::V, offset: u32, data: &[Self::V], m: Self::M) -> Result<(), ExecError>;

    /// Scalar memory: `dwords` dwords from the 64-bit address (lo, hi) + offset.
    fn s_load(&mut self, lo: Self::S, hi: Self::S, dwords: u32) -> Result<Vec<Self::S>, ExecError>;
    /// Vector memory: per active lane, `dwords` dwords from address (lo, hi) + offset.
    fn v_load(&mut self, lo: Self::V, hi: Self::V, offset: i64, dwords: u32, m: Self::M) -> Result<Vec<Self::V>, ExecError>;
    fn v_store(&mut self, lo: Self::V, hi: Self::V, offset: i64, data: &[Self::V], m: Self::M) -> Result<(), ExecError>;
}

fn unsupported(inst: &Inst) -> ExecError {
    ExecError::Unsupported { mnemonic: inst.info.name }
}

fn form(inst: &Inst, what: &'static str) -> ExecError {
    ExecError::UnsupportedForm { mnemonic: inst.info.name, what }
}

/// The value of inline constant `v` (128..=208, 240..=248) as a 32-bit operand.
fn inline_const32(v: u32) -> Option<u32> {
    Some(match v {
        128..=192 => v - 128,
        193..=208 => (-((v - 192) as i32)) as u32,
        240 => 0x3f00_0000,
        241 => 0xbf00_0000,
        242 => 0x3f80_0000,
        243 => 0xbf80_0000,
        244 => 0x4000_0000,
        245 => 0xc000_0000,
        246 => 0x4080_0000,
        247 => 0xc080_0000,
        248 => 0x3e22_f983,
        _ => return None,
    })
}

/// A 32-bit scalar source (SOP ssrc, or a uniform VOP source).
fn scalar_src<B: Backend>(b: &mut B, inst: &Inst, v: u32) -> Result<B::S, ExecError> {
    match v {
        0..=127 => Ok(b.s_get(v)),
        255 => Ok(b.s_const(inst.literal().unwrap_or(0))),
        // src_shared_base/limit and src_private_base/limit: the high halves of the flat apertures
        235 | 236 => Ok(b.s_const(memory::SHARED_APERTURE_HI)),
        237 | 238 => Ok(b.s_const(memory::PRIVATE_APERTURE_HI)),
        _ => inline_const32(v).map(|c| b.s_const(c)).ok_or_else(|| form(inst, "this source operand")),
    }
}

/// The 64-bit inline float constants (240..=248) as f64 bit patterns.
const F64_INLINE: [u64; 9] = [
    0x3fe0_0000_0000_0000,
    0xbfe0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0xbff0_0000_0000_0000,
    0x4000_0000_0000_0000,
    0xc000_0000_0000_0000,
    0x4010_0000_0000_0000,
    0xc010_0000_0000_0000,
    0x3fc4_5f30_6dc9_c882,
];

/// A 64-bit scalar source as (lo, hi). Integer constants sign-extend; float constants are doubles; a literal
/// is the high half of an f64 operand and the zero-extended value of an integer one.
fn scalar_src64<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<(B::S, B::S), ExecError> {
    let v = inst.field(field);
    let is_f64 = matches!(inst.info.operand(field).map(|o| o.kind), Some(OperandKind::Src { ty: SrcType::F64, .. }));
    let pair = |b: &mut B, x: u64| (b.s_const(x as u32), b.s_const((x >> 32) as u32));
    match v {
        0..=127 => {
            let r = if v <= 101 { v & !1 } else { v };
            Ok((b.s_get(r), b.s_get(r + 1)))
        }
        128..=208 => Ok(pair(b, inline_const32(v).unwrap_or(0) as i32 as i64 as u64)),
        240..=248 => Ok(pair(b, F64_INLINE[(v - 240) as usize])),
        255 => {
            let lit = inst.literal().unwrap_or(0) as u64;
            Ok(pair(b, if is_f64 { lit << 32 } else { lit }))
        }
        _ => Err(form(inst, "this 64-bit source operand")),
    }
}

/// (neg, abs) input modifier bits of a VOP3 source (VOP3b forms have none).
fn input_mods(inst: &Inst, field: Field) -> (bool, bool) {
    let i = match field {
        Field::Src0 => 0,
        Field::Src1 => 1,
        Field::Src2 => 2,
        _ => return (false, false),
    };
    if inst.encoding() != Encoding::Vop3 {
        return (false, false);
    }
    let abs = if inst.info.operand(Field::Sdst).is_some() { 0 } else { inst.field(Field::Abs) };
    (inst.field(Field::Neg) >> i & 1 == 1, abs >> i & 1 == 1)
}

/// The sign bit of the instruction's float operands (f16 or f32/the high half of f64).
fn float_sign(inst: &Inst) -> u32 {
    if inst.info.name.contains("_f16") {
        0x8000
    } else {
        0x8000_0000
    }
}

/// The carry (borrow) input of v_addc/v_subb: VCC, or in VOP3 an SGPR pair named by src2.
fn carry_input<B: Backend>(b: &mut B, inst: &Inst) -> Result<B::M, ExecError> {
    let src = if inst.encoding() == Encoding::Vop3 { inst.field(Field::Src2) } else { 106 };
    if src > 127 {
        return Err(form(inst, "a carry or borrow input that is not an SGPR pair"));
    }
    let (lo, hi) = (b.s_get(src), b.s_get(src + 1));
    Ok(b.mask_from(lo, hi))
}

/// Applies float neg/abs to a value whose sign bit is `sign`.
fn apply_mods<B: Backend>(b: &mut B, inst: &Inst, v: B::V, neg: bool, abs: bool, sign: u32, field: Field) -> Result<B::V, ExecError> {
    if !(neg || abs) {
        return Ok(v);
    }
    use isa_amdgpu::table::OpFlags;
    let int_flag = match field {
        Field::Src0 => OpFlags::INT_SRC0,
        Field::Src1 | Field::Vsrc1 => OpFlags::INT_SRC1,
        _ => OpFlags::INT_SRC2,
    };
    if inst.info.flags.contains(int_flag) {
        return Err(form(inst, "integer input modifiers (sext)"));
    }
    let mut v = v;
    if abs {
        let m = b.s_const(!sign);
        let m = b.v_splat(m);
        v = b.v_op(VOp::And, v, m);
    }
    if neg {
        let m = b.s_const(sign);
        let m = b.v_splat(m);
        v = b.v_op(VOp::Xor, v, m);
    }
    Ok(v)
}

/// A 32-bit vector source, with VOP3 neg/abs applied; DPP's src0 comes permuted across lanes.
fn vec_src<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<B::V, ExecError> {
    if inst.form == isa_amdgpu::Form::Dpp && field == Field::Src0 {
        let e = inst.ext().unwrap_or(0);
        let data = b.v_get(e & 0xff);
        let (src, valid) = dpp_sources(inst, (e >> 8) & 0x1ff)?;
        let idx = b.v_const(&src.map(|x| x as u32));
        let all = b.s_const(u32::MAX);
        let all = b.mask_from(all, all);
        let permuted = b.v_permute(data, idx, all);
        // invalid source lanes read 0 (they are written only with bound_ctrl)
        let (vl, vh) = (b.s_const(valid as u32), b.s_const((valid >> 32) as u32));
        let vm = b.mask_from(vl, vh);
        let zero = b_zero(b);
        let v = b.v_select(vm, zero, permuted);
        let sign = float_sign(inst);
        return apply_mods(b, inst, v, e >> 20 & 1 == 1, e >> 21 & 1 == 1, sign, Field::Src0);
    }
    if inst.form == isa_amdgpu::Form::Sdwa && field == Field::Src0 {
        let e = inst.ext().unwrap_or(0);
        return sdwa_src(b, inst, e & 0xff, e >> 23 & 1 == 1, e >> 16 & 0xff, field);
    }
    let v = inst.field(field);
    let raw = if v >= 256 {
        b.v_get(v - 256)
    } else if (240..=248).contains(&v) && is_f16_operand(inst, field) {
        let c = b.s_const(F16_INLINE[(v - 240) as usize]);
        b.v_splat(c)
    } else {
        let s = scalar_src(b, inst, v)?;
        b.v_splat(s)
    };
    let (neg, abs) = input_mods(inst, field);
    let sign = float_sign(inst);
    apply_mods(b, inst, raw, neg, abs, sign, field)
}

/// The float inline constants (240..=248) of 16-bit float operands.
const F16_INLINE: [u32; 9] = [0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118];

/// Whether an operand takes 16-bit float inline constants: 16-bit operands by the table, and the sources of
/// instructions whose (last-named) source type is f16 — the table cannot tell those from f32, since LLVM prints
/// their inline constants alike.
fn is_f16_operand(inst: &Inst, field: Field) -> bool {
    let ty = inst.info.operand(field).map(|o| o.kind);
    if matches!(ty, Some(OperandKind::Src { ty: SrcType::F16 | SrcType::V216 | SrcType::I16, .. })) {
        return true;
    }
    let base = base_name(inst);
    base.ends_with("_f16") && !base.contains("_mix")
}

/// The mnemonic without its encoding suffix (_e32, _e64, _sdwa, _dpp).
fn base_name(inst: &Inst) -> &'static str {
    let name = inst.info.name;
    ["_e32", "_e64", "_sdwa", "_dpp"].iter().find_map(|s| name.strip_suffix(s)).unwrap_or(name)
}

/// An SDWA source: register `reg` (a VGPR, or with `scalar` an SGPR/constant), its byte or word `sel`
/// (bits 0-2 of `ctl`: BYTE_0..3, WORD_0/1, DWORD) zero- or (bit 3) sign-extended, then neg (bit 4) and abs
/// (bit 5).
fn sdwa_src<B: Backend>(b: &mut B, inst: &Inst, reg: u32, scalar: bool, ctl: u32, field: Field) -> Result<B::V, ExecError> {
    let raw = if scalar {
        let s = scalar_src(b, inst, reg)?;
        b.v_splat(s)
    } else {
        b.v_get(reg)
    };
    let (sel, sext) = (ctl & 7, ctl >> 3 & 1 == 1);
    let (shift, width) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        6 => (0, 32),
        _ => return Err(form(inst, "this SDWA operand select")),
    };
    let v = if width == 32 {
        raw
    } else {
        // move the field to the top, then shift it down arithmetically (sext) or logically
        let up = b.s_const(32 - shift - width);
        let up = b.v_splat(up);
        let top = b.v_op(VOp::Shl, raw, up);
        let down = b.s_const(32 - width);
        let down = b.v_splat(down);
        b.v_op(if sext { VOp::Ashr } else { VOp::Lshr }, top, down)
    };
    let sign = float_sign(inst);
    apply_mods(b, inst, v, ctl >> 4 & 1 == 1, ctl >> 5 & 1 == 1, sign, field)
}

/// A 64-bit vector source as (lo, hi), with VOP3 neg/abs applied to the sign in the high half.
fn vec_src64<B: Backend>(b: &mut B, inst: &Inst, field: Field) -> Result<(B::V, B::V), ExecError> {
    let v = inst.field(field);
    let (lo, hi) = if v >= 256 {
        (b.v_get(v - 256), b.v_get(v - 255))
    } else {
        let (lo, hi) = scalar_src64(b, inst, field)?;
        (b.v_splat(lo), b.v_splat(hi))
    };
    let (neg, abs) = input_mods(inst, field);
    let hi = apply_mods(b, inst, hi, neg, abs, 0x8000_0000, field)?;
    Ok((lo, hi))
}

/// Modifiers this engine does not implement yet (output clamp/omod, op_sel) fail loudly instead of being
/// ignored; input neg/abs are applied when sources are read.
fn no_modifiers(inst: &Inst) -> Result<(), ExecError> {
    if inst.encoding() == Encoding::Vop3 {
        let has_sdst = inst.info.operand(Field::Sdst).is_some();
        let opsel = if has_sdst { 0 } else { inst.field(Field::OpSel) };
        // clamp on f32 results is applied by `execute` afterwards
        let clamp = if clamps_f32(inst) { 0 } else { inst.field(Field::Clamp) };
        if opsel | inst.field(Field::Omod) | clamp != 0 {
            return Err(form(inst, "output modifiers (clamp/omod) or op_sel"));
        }
    }
    Ok(())
}

/// Whether `inst` is a VOP3 f32 operation with clamp set, which `execute` clamps to [0, 1] (NaN to 0).
fn clamps_f32(inst: &Inst) -> bool {
    let name = base_name(inst);
    inst.encoding() == Encoding::Vop3
        && inst.info.operand(Field::Sdst).is_none()
        && inst.field(Field::Clamp) == 1
        && name.ends_with("_f32")
        && !name.starts_with("v_cmp")
        && !name.starts_with("v_div_")
        && inst.info.operand(Field::Vdst).is_some()
}

/// The VGPR a VOP writes.
fn vdst(inst: &Inst) -> u32 {
    inst.field(Field::Vdst)
}

/// Executes one instruction at `pc`.
pub fn execute<B: Backend>(b: &mut B, inst: &Inst, pc: u64) -> Result<Flow<B::S>, ExecError> {
    if inst.form == isa_amdgpu::Form::Sdwa {
        return execute_sdwa(b, inst, pc);
    }
    if clamps_f32(inst) {
        let flow = execute_plain(b, inst, pc)?;
        let d = vdst(inst);
        let (zero, one) = (b.s_const(0), b.s_const(0x3f80_0000));
        let (zero, one) = (b.v_splat(zero), b.v_splat(one));
        let v = b.v_get(d);
        let v = b.v_op(VOp::MaxF32, v, zero);
        let v = b.v_op(VOp::MinF32, v, one);
        let m = b.exec();
        b.v_set(d, v, m);
        return Ok(flow);
    }
    if inst.form != isa_amdgpu::Form::Dpp {
        return execute_plain(b, inst, pc);
    }
    // DPP: the result is written to EXEC's lanes that row_mask/bank_mask/bound_ctrl allow
    if inst.info.writes.contains(Implicit::EXEC) {
        return Err(form(inst, "DPP on an instruction that writes EXEC"));
    }
    let allowed = dpp_write_mask(inst)?;
    let exec = b.exec();
    let (al, ah) = (b.s_const(allowed as u32), b.s_const((allowed >> 32) as u32));
    let allowed = b.mask_from(al, ah);
    let narrowed = b.mask_op(MaskOp::And, exec, allowed);
    b.set_exec(narrowed);
    let flow = execute_plain(b, inst, pc);
    b.set_exec(exec);
    flow
}

/// SDWA: sources are selected as they are read ([`sdwa_src`]); the result's low byte/word goes to the
/// byte/word dst_sel names, the other bits zeroed (UNUSED_PAD), sign-extended (UNUSED_SEXT) or kept
/// (UNUSED_PRESERVE). VOPC forms have no dst_sel.
fn execute_sdwa<B: Backend>(b: &mut B, inst: &Inst, pc: u64) -> Result<Flow<B::S>, ExecError> {
    let e = inst.ext().unwrap_or(0);
    let vopc = inst.encoding() == Encoding::Vopc;
    if !vopc && e >> 13 & 7 != 0 {
        return Err(form(inst, "SDWA clamp/omod"));
    }
    let (sel, unused) = (e >> 8 & 7, e >> 11 & 3);
    if vopc || sel == 6 {
        return execute_plain(b, inst, pc);
    }
    let (shift, width) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => return Err(form(inst, "this SDWA dst_sel")),
    };
    let d = vdst(inst);
    let old = b.v_get(d);
    let flow = execute_plain(b, inst, pc)?;
    let new = b.v_get(d);
    let splat = |b: &mut B, x: u32| {
        let s = b.s_const(x);
        b.v_splat(s)
    };
    let field_mask = ((1u64 << width) - 1) as u32;
    let (up, fm) = (splat(b, 32 - width), splat(b, field_mask));
    let placed = if unused == 1 {
        // sign-extend the field from its top bit, then drop the bits below the field
        let top = b.v_op(VOp::Shl, new, up);
        let down = splat(b, 32 - width - shift);
        let ext = b.v_op(VOp::Ashr, top, down);
        let below = splat(b, !((1u32 << shift) - 1));
        b.v_op(VOp::And, ext, below)
    } else {
        let f = b.v_op(VOp::And, new, fm);
        let sh = splat(b, shift);
        b.v_op(VOp::Shl, f, sh)
    };
    let v = if unused == 2 {
        let keep = splat(b, !(field_mask << shift));
        let kept = b.v_op(VOp::And, old, keep);
        b.v_op(VOp::Or, kept, placed)
    } else {
        placed
    };
    let m = b.exec();
    b.v_set(d, v, m);
    Ok(flow)
}

fn execute_plain<B: Backend>(b: &mut B, inst: &Inst, pc: u64) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    let next_pc = pc + inst.size() as u64;
    match inst.info.opcode {
        // ---- program control -----------------------------------------------------------------------
        O::SEndpgm => Ok(Flow::End),
        O::SNop | O::SWaitcnt | O::SSetprio | O::SSleep => Ok(Flow::Next),
        O::SBarrier => Ok(Flow::Barrier),
        O::STrap => Err(ExecError::Trap(inst.field(Field::Simm16) & 0xff)),
        O::SBranch | O::SCbranchScc0 | O::SCbranchScc1 | O::SCbranchExecz | O::SCbranchExecnz | O::SCbranchVccz | O::SCbranchVccnz => {
            let simm = inst.field(Field::Simm16) as u16 as i16 as i64;
            let target = (next_pc as i64 + simm * 4) as u64;
            let cond = match inst.info.opcode {
                O::SBranch => return Ok(Flow::Jump(target)),
                O::SCbranchScc1 => b.scc(),
                O::SCbranchScc0 => {
                    let s = b.scc();
                    let one = b.s_const(1);
                    b.s_op(SOp::Xor, s, one)
                }
                O::SCbranchExecz | O::SCbranchExecnz => {
                    let m = b.exec();
                    let (lo, hi) = b.mask_parts(m);
                    let any = b.s_op(SOp::Or, lo, hi);
                    let nz = b.s_nonzero(any);
                    if inst.info.opcode == O::SCbranchExecnz {
                        nz
                    } else {
                        let one = b.s_const(1);
                        b.s_op(SOp::Xor, nz, one)
                    }
                }
                _ => {
                    let (lo, hi) = (b.s_get(106), b.s_get(107));
                    let any = b.s_op(SOp::Or, lo, hi);
                    let nz = b.s_nonzero(any);
                    if inst.info.opcode == O::SCbranchVccnz {
                        nz
                    } else {
                        let one = b.s_const(1);
                        b.s_op(SOp::Xor, nz, one)
                    }
                }
            };
            Ok(Flow::Branch { cond, target })
        }

        // ---- scalar memory ----------------------------------------------------------------------------
        O::SLoadDword | O::SLoadDwordx2 | O::SLoadDwordx4 | O::SLoadDwordx8 | O::SLoadDwordx16 => {
            let dwords = match inst.info.opcode {
                O::SLoadDword => 1,
                O::SLoadDwordx2 => 2,
                O::SLoadDwordx4 => 4,
                O::SLoadDwordx8 => 8,
                _ => 16,
            };
            let base = inst.field(Field::Sbase) * 2;
            let (lo, hi) = (b.s_get(base), b.s_get(base + 1));
            // an immediate offset is a signed 21-bit byte count, an SGPR offset an unsigned 32-bit one
            let (offset, high) = match (inst.field(Field::Imm), inst.field(Field::Soe)) {
                (1, 0) => {
                    let o = ((inst.field(Field::Offset) << 11) as i32) >> 11;
                    (b.s_const(o as u32), b.s_const(if o < 0 { u32::MAX } else { 0 }))
                }
                (0, 0) => (b.s_get(inst.field(Field::Offset) & 0x7f), b.s_const(0)),
                _ => return Err(form(inst, "SGPR offset plus immediate")),
            };
            let zero = b.s_const(0);
            let (lo, carry) = b.s_add_carry(lo, offset, zero);
            let (hi, _) = b.s_add_carry(hi, high, carry);
            let data = b.s_load(lo, hi, dwords)?;
            let dst = inst.field(Field::Sdata);
            for (i, d) in data.into_iter().enumerate() {
                b.s_set(dst + i as u32, d);
            }
            Ok(Flow::Next)
        }

        // ---- scalar ALU -------------------------------------------------------------------------------
        O::SMinU32 | O::SMinI32 | O::SMaxU32 | O::SMaxI32 => {
            // min: D = S0 < S1 ? S0 : S1, SCC = S0 < S1; max: D = S0 > S1 ? S0 : S1, SCC = S0 > S1
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let lt = if matches!(inst.info.opcode, O::SMinU32 | O::SMaxU32) { SOp::LtU } else { SOp::LtI };
            let first = if matches!(inst.info.opcode, O::SMinU32 | O::SMinI32) { b.s_op(lt, a, c) } else { b.s_op(lt, c, a) };
            let r = b.s_select(first, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            b.set_scc(first);
            Ok(Flow::Next)
        }
        O::SNotB32 | O::SFf1I32B32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let r = if inst.info.opcode == O::SNotB32 {
                let ones = b.s_const(u32::MAX);
                let r = b.s_op(SOp::Xor, a, ones);
                let nz = b.s_nonzero(r);
                b.set_scc(nz);
                r
            } else {
                b.s_op(SOp::Ff1, a, a)
            };
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SNotB64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let ones = b.s_const(u32::MAX);
            let (rl, rh) = (b.s_op(SOp::Xor, lo, ones), b.s_op(SOp::Xor, hi, ones));
            let d = inst.field(Field::Sdst);
            b.s_set(d, rl);
            b.s_set(d + 1, rh);
            let any = b.s_op(SOp::Or, rl, rh);
            let nz = b.s_nonzero(any);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        O::SBfeU32 => {
            // D = (S0 >> S1[4:0]) & ((1 << S1[22:16]) - 1); SCC = D != 0
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let (k31, k16, k7f, one, zero) = (b.s_const(31), b.s_const(16), b.s_const(0x7f), b.s_const(1), b.s_const(0));
            let off = b.s_op(SOp::And, c, k31);
            let width = b.s_op(SOp::Lshr, c, k16);
            let width = b.s_op(SOp::And, width, k7f);
            let shifted = b.s_op(SOp::Lshr, a, off);
            let bit = b.s_op(SOp::Shl, one, width);
            let mask = b.s_op(SOp::Sub, bit, one);
            let narrow = b.s_op(SOp::And, shifted, mask);
            let k32 = b.s_const(32);
            let wide = b.s_op(SOp::LtU, width, k32);
            let r = b.s_select(wide, narrow, shifted);
            let empty = b.s_op(SOp::Eq, width, zero);
            let r = b.s_select(empty, zero, r);
            b.s_set(inst.field(Field::Sdst), r);
            let nz = b.s_nonzero(r);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        O::SCmpkLtU32 | O::SCmpkGtU32 | O::SCmpkLeU32 | O::SCmpkGeU32 | O::SCmpkLtI32 | O::SCmpkGtI32 | O::SCmpkLeI32
        | O::SCmpkGeI32 => {
            // SCC = SDST <op> the 16-bit immediate (zero-extended for u32, sign-extended for i32)
            let a = b.s_get(inst.field(Field::Sdst));
            let k = inst.field(Field::Simm16);
            let unsigned = inst.info.name.ends_with("_u32");
            let imm = b.s_const(if unsigned { k & 0xffff } else { k as u16 as i16 as i32 as u32 });
            let lt = if unsigned { SOp::LtU } else { SOp::LtI };
            let (swap, negate) = match inst.info.opcode {
                O::SCmpkLtU32 | O::SCmpkLtI32 => (false, false),
                O::SCmpkGtU32 | O::SCmpkGtI32 => (true, false),
                O::SCmpkLeU32 | O::SCmpkLeI32 => (true, true),
                _ => (false, true),
            };
            let r = if swap { b.s_op(lt, imm, a) } else { b.s_op(lt, a, imm) };
            let r = if negate {
                let one = b.s_const(1);
                b.s_op(SOp::Xor, r, one)
            } else {
                r
            };
            b.set_scc(r);
            Ok(Flow::Next)
        }
        O::SBrevB32 => {
            let v = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let r = b.s_op(SOp::Brev, v, v);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::VLdexpF32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let e = second_src(b, inst)?;
            let r = b.v_op(VOp::LdexpF32, a, e);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VAlignbitB32 => {
            // the low dword of ({src0, src1} >> (src2 & 31))
            no_modifiers(inst)?;
            let hi = vec_src(b, inst, Field::Src0)?;
            let lo = vec_src(b, inst, Field::Src1)?;
            let sh = vec_src(b, inst, Field::Src2)?;
            let k31 = b.s_const(31);
            let k31 = b.v_splat(k31);
            let sh = b.v_op(VOp::And, sh, k31);
            let k32 = b.s_const(32);
            let k32 = b.v_splat(k32);
            let up = b.v_op(VOp::SubU32, k32, sh);
            let (l, h) = (b.v_op(VOp::Lshr, lo, sh), b.v_op(VOp::Shl, hi, up));
            let joined = b.v_op(VOp::Or, l, h);
            let zero = b_zero(b);
            let none = b.v_cmp(VCmp::EqU32, sh, zero);
            let r = b.v_select(none, joined, lo);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::SMovB32 => {
            let v = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            b.s_set(inst.field(Field::Sdst), v);
            Ok(Flow::Next)
        }
        O::SMovkI32 => {
            let v = b.s_const(inst.field(Field::Simm16) as u16 as i16 as i32 as u32);
            b.s_set(inst.field(Field::Sdst), v);
            Ok(Flow::Next)
        }
        O::SMovB64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let d = inst.field(Field::Sdst);
            b.s_set(d, lo);
            b.s_set(d + 1, hi);
            Ok(Flow::Next)
        }
        O::SAndn2B32 | O::SOrn2B32 | O::SNandB32 | O::SNorB32 | O::SXnorB32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let ones = b.s_const(u32::MAX);
            let r = match inst.info.opcode {
                O::SAndn2B32 | O::SOrn2B32 => {
                    let nc = b.s_op(SOp::Xor, c, ones);
                    b.s_op(if inst.info.opcode == O::SAndn2B32 { SOp::And } else { SOp::Or }, a, nc)
                }
                op => {
                    let r = match op {
                        O::SNandB32 => b.s_op(SOp::And, a, c),
                        O::SNorB32 => b.s_op(SOp::Or, a, c),
                        _ => b.s_op(SOp::Xor, a, c),
                    };
                    b.s_op(SOp::Xor, r, ones)
                }
            };
            b.s_set(inst.field(Field::Sdst), r);
            let nz = b.s_nonzero(r);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        O::SAndB32 | O::SOrB32 | O::SXorB32 | O::SMulI32 | O::SLshlB32 | O::SLshrB32 | O::SAshrI32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let op = match inst.info.opcode {
                O::SAndB32 => SOp::And,
                O::SOrB32 => SOp::Or,
                O::SXorB32 => SOp::Xor,
                O::SMulI32 => SOp::Mul,
                O::SLshlB32 => SOp::Shl,
                O::SLshrB32 => SOp::Lshr,
                _ => SOp::Ashr,
            };
            let r = b.s_op(op, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            if inst.info.writes.contains(Implicit::SCC) {
                let nz = b.s_nonzero(r);
                b.set_scc(nz);
            }
            Ok(Flow::Next)
        }
        O::SAddU32 | O::SAddcU32 | O::SAddI32 | O::SSubI32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let sub = inst.info.opcode == O::SSubI32;
            let r = if sub { b.s_op(SOp::Sub, a, c) } else { b.s_op(SOp::Add, a, c) };
            let scc = match inst.info.opcode {
                O::SAddU32 | O::SAddcU32 => {
                    let cin = if inst.info.opcode == O::SAddcU32 { b.scc() } else { b.s_const(0) };
                    let (sum, carry) = b.s_add_carry(a, c, cin);
                    b.s_set(inst.field(Field::Sdst), sum);
                    b.set_scc(carry);
                    return Ok(Flow::Next);
                }
                _ => {
                    // signed overflow: add: a and c agree in sign, r does not; sub: a and c differ, r differs from a
                    let ar = b.s_op(SOp::Xor, a, r);
                    let other = if sub { b.s_op(SOp::Xor, a, c) } else { b.s_op(SOp::Xor, c, r) };
                    let both = b.s_op(SOp::And, ar, other);
                    let sh = b.s_const(31);
                    b.s_op(SOp::Lshr, both, sh)
                }
            };
            b.s_set(inst.field(Field::Sdst), r);
            b.set_scc(scc);
            Ok(Flow::Next)
        }
        O::SCmpEqU32 | O::SCmpLgU32 | O::SCmpLtU32 | O::SCmpGtU32 | O::SCmpLeU32 | O::SCmpGeU32 | O::SCmpEqI32
        | O::SCmpLgI32 | O::SCmpLtI32 | O::SCmpGtI32 | O::SCmpLeI32 | O::SCmpGeI32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            // every comparison is eq or lt, possibly with swapped operands and/or negated
            let (op, swap, negate) = match inst.info.opcode {
                O::SCmpEqU32 | O::SCmpEqI32 => (SOp::Eq, false, false),
                O::SCmpLgU32 | O::SCmpLgI32 => (SOp::Eq, false, true),
                O::SCmpLtU32 => (SOp::LtU, false, false),
                O::SCmpGtU32 => (SOp::LtU, true, false),
                O::SCmpLeU32 => (SOp::LtU, true, true),
                O::SCmpGeU32 => (SOp::LtU, false, true),
                O::SCmpLtI32 => (SOp::LtI, false, false),
                O::SCmpGtI32 => (SOp::LtI, true, false),
                O::SCmpLeI32 => (SOp::LtI, true, true),
                _ => (SOp::LtI, false, true),
            };
            let r = if swap { b.s_op(op, c, a) } else { b.s_op(op, a, c) };
            let r = if negate {
                let one = b.s_const(1);
                b.s_op(SOp::Xor, r, one)
            } else {
                r
            };
            b.set_scc(r);
            Ok(Flow::Next)
        }
        O::SAndB64 | O::SOrB64 | O::SXorB64 | O::SAndn2B64 => {
            let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
            let (cl, ch) = if inst.info.opcode == O::SAndn2B64 {
                let ones = b.s_const(u32::MAX);
                (b.s_op(SOp::Xor, cl, ones), b.s_op(SOp::Xor, ch, ones))
            } else {
                (cl, ch)
            };
            let op = match inst.info.opcode {
                O::SOrB64 => SOp::Or,
                O::SXorB64 => SOp::Xor,
                _ => SOp::And,
            };
            let (rl, rh) = (b.s_op(op, al, cl), b.s_op(op, ah, ch));
            let d = inst.field(Field::Sdst);
            b.s_set(d, rl);
            b.s_set(d + 1, rh);
            let any = b.s_op(SOp::Or, rl, rh);
            let nz = b.s_nonzero(any);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        O::SAndSaveexecB64 | O::SOrSaveexecB64 | O::SAndn2SaveexecB64 | O::SXorSaveexecB64 => {
            // sdst = EXEC; EXEC = ssrc0 op EXEC; SCC = EXEC != 0
            let (sl, sh) = scalar_src64(b, inst, Field::Ssrc0)?;
            let src = b.mask_from(sl, sh);
            let exec = b.exec();
            let (el, eh) = b.mask_parts(exec);
            s_set64(b, inst.field(Field::Sdst), el, eh);
            let op = match inst.info.opcode {
                O::SAndSaveexecB64 => MaskOp::And,
                O::SOrSaveexecB64 => MaskOp::Or,
                O::SAndn2SaveexecB64 => MaskOp::AndNot,
                _ => MaskOp::Xor,
            };
            let m = b.mask_op(op, src, exec);
            b.set_exec(m);
            let (nl, nh) = b.mask_parts(m);
            scc_nonzero64(b, nl, nh);
            Ok(Flow::Next)
        }

        // ---- vector ALU -------------------------------------------------------------------------------
        O::VMovB32 => {
            no_modifiers(inst)?;
            let v = vec_src(b, inst, Field::Src0)?;
            let m = b.exec();
            b.v_set(vdst(inst), v, m);
            Ok(Flow::Next)
        }
        O::VAddU32 | O::VSubU32 | O::VSubrevU32 if inst.encoding() == Encoding::Vop3 && inst.field(Field::Clamp) == 1 => {
            // clamp: unsigned saturation instead of wrapping
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let (a, c) = if inst.info.opcode == O::VSubrevU32 { (c, a) } else { (a, c) };
            let r = if inst.info.opcode == O::VAddU32 {
                let (r, carry) = b.v_add_carry(a, c, None);
                let ones = b.s_const(u32::MAX);
                let ones = b.v_splat(ones);
                b.v_select(carry, r, ones)
            } else {
                let (r, borrow) = b.v_sub_borrow(a, c, None);
                let zero = b_zero(b);
                b.v_select(borrow, r, zero)
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VAddU32 | O::VSubU32 | O::VMulLoU32 | O::VAndB32 | O::VOrB32 | O::VXorB32 | O::VAddF32 | O::VSubF32 | O::VMulF32
        | O::VMinF32 | O::VMaxF32 | O::VLshlrevB32 | O::VLshrrevB32 | O::VAshrrevI32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let (op, swap) = match inst.info.opcode {
                O::VAddU32 => (VOp::AddU32, false),
                O::VSubU32 => (VOp::SubU32, false),
                O::VMulLoU32 => (VOp::MulLoU32, false),
                O::VAndB32 => (VOp::And, false),
                O::VOrB32 => (VOp::Or, false),
                O::VXorB32 => (VOp::Xor, false),
                O::VAddF32 => (VOp::AddF32, false),
                O::VSubF32 => (VOp::SubF32, false),
                O::VMulF32 => (VOp::MulF32, false),
                O::VMinF32 => (VOp::MinF32, false),
                O::VMaxF32 => (VOp::MaxF32, false),
                O::VLshlrevB32 => (VOp::Shl, true),
                O::VLshrrevB32 => (VOp::Lshr, true),
                _ => (VOp::Ashr, true),
            };
            let r = if swap { b.v_op(op, c, a) } else { b.v_op(op, a, c) };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VFmacF32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let d = b.v_get(vdst(inst));
            let r = b.v_fma_f32(a, c, d);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VCmpGtU32 | O::VCmpLtU32 | O::VCmpEqU32 | O::VCmpGeU32 | O::VCmpLeU32 | O::VCmpNeU32 | O::VCmpGtI32 | O::VCmpLtI32
        | O::VCmpEqI32 | O::VCmpGeI32 | O::VCmpLeI32 | O::VCmpNeI32 | O::VCmpLtF32 | O::VCmpGtF32 | O::VCmpEqF32
        | O::VCmpLeF32 | O::VCmpGeF32 | O::VCmpNeqF32 | O::VCmpLgF32 | O::VCmpOF32 | O::VCmpUF32 | O::VCmpNlgF32
        | O::VCmpNltF32 | O::VCmpNgtF32 | O::VCmpNleF32 | O::VCmpNgeF32 | O::VCmpClassF32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let op = match inst.info.opcode {
                O::VCmpGtU32 => VCmp::GtU32,
                O::VCmpLtU32 => VCmp::LtU32,
                O::VCmpEqU32 => VCmp::EqU32,
                O::VCmpGeU32 => VCmp::GeU32,
                O::VCmpLeU32 => VCmp::LeU32,
                O::VCmpNeU32 => VCmp::NeU32,
                O::VCmpGtI32 => VCmp::GtI32,
                O::VCmpLtI32 => VCmp::LtI32,
                O::VCmpEqI32 => VCmp::EqI32,
                O::VCmpGeI32 => VCmp::GeI32,
                O::VCmpLeI32 => VCmp::LeI32,
                O::VCmpNeI32 => VCmp::NeI32,
                O::VCmpLtF32 => VCmp::LtF32,
                O::VCmpGtF32 => VCmp::GtF32,
                O::VCmpEqF32 => VCmp::EqF32,
                O::VCmpLeF32 => VCmp::LeF32,
                O::VCmpNeqF32 => VCmp::NeqF32,
                O::VCmpLgF32 => VCmp::LgF32,
                O::VCmpOF32 => VCmp::OF32,
                O::VCmpUF32 => VCmp::UF32,
                O::VCmpNlgF32 => VCmp::NlgF32,
                O::VCmpNltF32 => VCmp::NltF32,
                O::VCmpNgtF32 => VCmp::NgtF32,
                O::VCmpNleF32 => VCmp::NleF32,
                O::VCmpNgeF32 => VCmp::NgeF32,
                O::VCmpClassF32 => VCmp::ClassF32,
                _ => VCmp::GeF32,
            };
            let r = b.v_cmp(op, a, c);
            write_lane_mask(b, inst, Field::Vdst, r);
            Ok(Flow::Next)
        }
        O::VAddCoU32 | O::VAddcCoU32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let carry_in = if inst.info.opcode == O::VAddcCoU32 { Some(carry_input(b, inst)?) } else { None };
            let (r, carry) = b.v_add_carry(a, c, carry_in);
            let exec = b.exec();
            b.v_set(vdst(inst), r, exec);
            write_lane_mask(b, inst, Field::Sdst, carry);
            Ok(Flow::Next)
        }
        O::VLshlrevB64 => {
            no_modifiers(inst)?;
            let amount = vec_src(b, inst, Field::Src0)?;
            let (lo, hi) = vec_src64(b, inst, Field::Src1)?;
            let (rl, rh) = b.v_shl64(lo, hi, amount);
            let m = b.exec();
            b.v_set(vdst(inst), rl, m);
            b.v_set(vdst(inst) + 1, rh, m);
            Ok(Flow::Next)
        }
        O::VLshlAddU64 => {
            // gfx940: d = (src0 << src1[2:0]) + src2, 64-bit
            no_modifiers(inst)?;
            let (lo, hi) = vec_src64(b, inst, Field::Src0)?;
            let amount = vec_src(b, inst, Field::Src1)?;
            let (al, ah) = vec_src64(b, inst, Field::Src2)?;
            let seven = b.s_const(7);
            let seven = b.v_splat(seven);
            let amount = b.v_op(VOp::And, amount, seven);
            let (sl, sh) = b.v_shl64(lo, hi, amount);
            let (rl, carry) = b.v_add_carry(sl, al, None);
            let (rh, _) = b.v_add_carry(sh, ah, Some(carry));
            let m = b.exec();
            b.v_set(vdst(inst), rl, m);
            b.v_set(vdst(inst) + 1, rh, m);
            Ok(Flow::Next)
        }

        O::VLshlOrB32 | O::VLshlAddU32 | O::VAddLshlU32 | O::VAdd3U32 | O::VAndOrB32 | O::VOr3B32 | O::VXadU32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let d = vec_src(b, inst, Field::Src2)?;
            // (a op1 b) op2 c
            let (op1, op2) = match inst.info.opcode {
                O::VLshlOrB32 => (VOp::Shl, VOp::Or),
                O::VLshlAddU32 => (VOp::Shl, VOp::AddU32),
                O::VAddLshlU32 => (VOp::AddU32, VOp::Shl),
                O::VAdd3U32 => (VOp::AddU32, VOp::AddU32),
                O::VAndOrB32 => (VOp::And, VOp::Or),
                O::VXadU32 => (VOp::Xor, VOp::AddU32),
                _ => (VOp::Or, VOp::Or),
            };
            let t = b.v_op(op1, a, c);
            let r = b.v_op(op2, t, d);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBfeU32 | O::VBfeI32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let off = vec_src(b, inst, Field::Src1)?;
            let width = vec_src(b, inst, Field::Src2)?;
            let k31 = b.s_const(31);
            let k31 = b.v_splat(k31);
            let (off, width) = (b.v_op(VOp::And, off, k31), b.v_op(VOp::And, width, k31));
            // the signed form shifts arithmetically: bits above 31 are copies of the sign
            let signed = inst.info.opcode == O::VBfeI32;
            let shifted = b.v_op(if signed { VOp::Ashr } else { VOp::Lshr }, a, off);
            let k32 = b.s_const(32);
            let k32 = b.v_splat(k32);
            let up = b.v_op(VOp::SubU32, k32, width);
            let left = b.v_op(VOp::Shl, shifted, up);
            let field = if inst.info.opcode == O::VBfeI32 { b.v_op(VOp::Ashr, left, up) } else { b.v_op(VOp::Lshr, left, up) };
            // a zero width extracts nothing (the shifts above would be by 32 & 31 = 0)
            let zero = b.s_const(0);
            let zero = b.v_splat(zero);
            let empty = b.v_cmp(VCmp::EqU32, width, zero);
            let r = b.v_select(empty, field, zero);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBfiB32 | O::VMadU32U24 | O::VMadI32I24 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let d = vec_src(b, inst, Field::Src2)?;
            let r = match inst.info.opcode {
                // (a & c) | (!a & d)
                O::VBfiB32 => {
                    let x = b.v_op(VOp::And, a, c);
                    let na = b.v_un(VUn::Not, a);
                    let y = b.v_op(VOp::And, na, d);
                    b.v_op(VOp::Or, x, y)
                }
                O::VMadU32U24 => {
                    let p = b.v_op(VOp::MulU32U24, a, c);
                    b.v_op(VOp::AddU32, p, d)
                }
                _ => {
                    let p = b.v_op(VOp::MulI32I24, a, c);
                    b.v_op(VOp::AddU32, p, d)
                }
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::SLshlB64 | O::SLshrB64 | O::SAshrI64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let amount = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let (rl, rh) = match inst.info.opcode {
                O::SLshlB64 => b.s_shl64(lo, hi, amount),
                O::SLshrB64 => b.s_shr64(lo, hi, amount, false),
                _ => b.s_shr64(lo, hi, amount, true),
            };
            let d = inst.field(Field::Sdst);
            b.s_set(d, rl);
            b.s_set(d + 1, rh);
            let any = b.s_op(SOp::Or, rl, rh);
            let nz = b.s_nonzero(any);
            b.set_scc(nz);
            Ok(Flow::Next)
        }

        // ---- LDS ---------------------------------------------------------------------------------------
        O::DsWriteB32 | O::DsWriteB64 | O::DsWriteB96 | O::DsWriteB128 | O::DsWrite2B32 | O::DsWrite2st64B32
        | O::DsWrite2B64 | O::DsWrite2st64B64 | O::DsReadB32 | O::DsReadB64 | O::DsReadB96 | O::DsReadB128
        | O::DsRead2B32 | O::DsRead2st64B32 | O::DsRead2B64 | O::DsRead2st64B64 => {
            if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
                return Err(form(inst, "GDS or AGPR data"));
            }
            let addr = b.v_get(inst.field(Field::Addr));
            let m = b.exec();
            let (o0, o1) = (inst.field(Field::Offset0), inst.field(Field::Offset1));
            let single = o0 | o1 << 8;
            // (bytes per element offset unit, two addresses?, dwords per element)
            let (stride, two, dwords) = match inst.info.opcode {
                O::DsWrite2B32 | O::DsRead2B32 => (4, true, 1),
                O::DsWrite2st64B32 | O::DsRead2st64B32 => (256, true, 1),
                O::DsWrite2B64 | O::DsRead2B64 => (8, true, 2),
                O::DsWrite2st64B64 | O::DsRead2st64B64 => (512, true, 2),
                O::DsWriteB64 | O::DsReadB64 => (0, false, 2),
                O::DsWriteB96 | O::DsReadB96 => (0, false, 3),
                O::DsWriteB128 | O::DsReadB128 => (0, false, 4),
                _ => (0, false, 1),
            };
            if inst.info.name.starts_with("ds_write") {
                let d0 = inst.field(Field::Data0);
                if two {
                    let d1 = inst.field(Field::Data1);
                    let v0: Vec<B::V> = (0..dwords).map(|i| b.v_get(d0 + i)).collect();
                    let v1: Vec<B::V> = (0..dwords).map(|i| b.v_get(d1 + i)).collect();
                    b.lds_write(addr, o0 * stride, &v0, m)?;
                    b.lds_write(addr, o1 * stride, &v1, m)?;
                } else {
                    let data: Vec<B::V> = (0..dwords).map(|i| b.v_get(d0 + i)).collect();
                    b.lds_write(addr, single, &data, m)?;
                }
            } else {
                let dst = vdst(inst);
                if two {
                    let r0 = b.lds_read(addr, o0 * stride, dwords, m)?;
                    let r1 = b.lds_read(addr, o1 * stride, dwords, m)?;
                    for (i, v) in r0.into_iter().chain(r1).enumerate() {
                        b.v_set(dst + i as u32, v, m);
                    }
                } else {
                    let r = b.lds_read(addr, single, dwords, m)?;
                    for (i, v) in r.into_iter().enumerate() {
                        b.v_set(dst + i as u32, v, m);
                    }
                }
            }
            Ok(Flow::Next)
        }

        O::DsAddU32 | O::DsSubU32 | O::DsAndB32 | O::DsOrB32 | O::DsXorB32 | O::DsMinI32 | O::DsMaxI32 | O::DsMinU32
        | O::DsMaxU32 | O::DsIncU32 | O::DsDecU32 | O::DsAddF32 | O::DsAddRtnU32 | O::DsSubRtnU32 | O::DsAndRtnB32
        | O::DsOrRtnB32 | O::DsXorRtnB32 | O::DsMinRtnI32 | O::DsMaxRtnI32 | O::DsMinRtnU32 | O::DsMaxRtnU32
        | O::DsWrxchgRtnB32 | O::DsAddRtnF32 => {
            if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
                return Err(form(inst, "GDS or AGPR data"));
            }
            let op = atomic_op(inst.info.name).ok_or_else(|| unsupported(inst))?;
            let addr = b.v_get(inst.field(Field::Addr));
            let data = b.v_get(inst.field(Field::Data0));
            let m = b.exec();
            let offset = inst.field(Field::Offset0) | inst.field(Field::Offset1) << 8;
            let old = b.lds_atomic(op, addr, offset, data, m)?;
            if inst.info.operand(Field::Vdst).is_some() {
                b.v_set(vdst(inst), old, m);
            }
            Ok(Flow::Next)
        }
        O::GlobalAtomicAdd | O::GlobalAtomicSub | O::GlobalAtomicAnd | O::GlobalAtomicOr | O::GlobalAtomicXor
        | O::GlobalAtomicSmin | O::GlobalAtomicSmax | O::GlobalAtomicUmin | O::GlobalAtomicUmax | O::GlobalAtomicSwap
        | O::GlobalAtomicInc | O::GlobalAtomicDec | O::GlobalAtomicAddF32 => {
            if inst.field(Field::Acc) == 1 {
                return Err(form(inst, "AGPR data"));
            }
            let op = atomic_op(inst.info.name).ok_or_else(|| unsupported(inst))?;
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let data = b.v_get(inst.field(Field::Data));
            let m = b.exec();
            let old = b.v_atomic(op, lo, hi, offset, data, m)?;
            // glc (sc0 on gfx940) asks for the old value
            if inst.field(Field::Glc) == 1 {
                b.v_set(vdst(inst), old, m);
            }
            Ok(Flow::Next)
        }
        O::GlobalAtomicCmpswap | O::GlobalAtomicCmpswapX2 => {
            if inst.field(Field::Acc) == 1 {
                return Err(form(inst, "AGPR data"));
            }
            // data holds the new value, then the value to compare with
            let n = if inst.info.opcode == O::GlobalAtomicCmpswapX2 { 2 } else { 1 };
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let base = inst.field(Field::Data);
            let src: Vec<B::V> = (0..n).map(|i| b.v_get(base + i)).collect();
            let cmp: Vec<B::V> = (0..n).map(|i| b.v_get(base + n + i)).collect();
            let m = b.exec();
            let old = b.v_atomic_cmpswap(lo, hi, offset, &src, &cmp, m)?;
            if inst.field(Field::Glc) == 1 {
                for (i, v) in old.into_iter().enumerate() {
                    b.v_set(vdst(inst) + i as u32, v, m);
                }
            }
            Ok(Flow::Next)
        }
        O::GlobalLoadUbyte | O::GlobalLoadSbyte | O::GlobalLoadUshort | O::GlobalLoadSshort | O::GlobalStoreByte
        | O::GlobalStoreShort => {
            if inst.field(Field::Acc) == 1 || inst.field(Field::Lds) == 1 {
                return Err(form(inst, "AGPR data or LDS DMA"));
            }
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let m = b.exec();
            let (bytes, signed) = match inst.info.opcode {
                O::GlobalLoadUbyte | O::GlobalStoreByte => (1, false),
                O::GlobalLoadSbyte => (1, true),
                O::GlobalLoadUshort | O::GlobalStoreShort => (2, false),
                _ => (2, true),
            };
            if inst.info.name.starts_with("global_load") {
                let v = b.v_load_narrow(lo, hi, offset, bytes, signed, m)?;
                b.v_set(vdst(inst), v, m);
            } else {
                let data = b.v_get(inst.field(Field::Data));
                b.v_store_narrow(lo, hi, offset, bytes, data, m)?;
            }
            Ok(Flow::Next)
        }

        // ---- private (scratch) memory ------------------------------------------------------------------
        O::ScratchLoadDword | O::ScratchLoadDwordx2 | O::ScratchLoadDwordx3 | O::ScratchLoadDwordx4 | O::ScratchStoreDword
        | O::ScratchStoreDwordx2 | O::ScratchStoreDwordx3 | O::ScratchStoreDwordx4 | O::BufferLoadDword
        | O::BufferLoadDwordx2 | O::BufferLoadDwordx3 | O::BufferLoadDwordx4 | O::BufferStoreDword | O::BufferStoreDwordx2
        | O::BufferStoreDwordx3 | O::BufferStoreDwordx4 => {
            if inst.encoding() == Encoding::Mubuf && !memory::is_private_resource(b, inst)? {
                return memory::buffer(b, inst).map(|()| Flow::Next);
            }
            let dwords = match inst.info.name.trim_start_matches("scratch_").trim_start_matches("buffer_") {
                "load_dword" | "store_dword" => 1,
                "load_dwordx2" | "store_dwordx2" => 2,
                "load_dwordx3" | "store_dwordx3" => 3,
                _ => 4,
            };
            if inst.field(Field::Lds) == 1 && inst.encoding() == Encoding::Mubuf {
                return Err(form(inst, "LDS DMA"));
            }
            let acc = inst.field(Field::Acc) == 1;
            let private = private_offsets(b, inst)?;
            let (lo, hi) = private_addresses(b, inst, private, dwords)?;
            let m = b.exec();
            let load = inst.info.name.contains("_load_");
            let data_field = if inst.encoding() == Encoding::Mubuf { Field::Vdata } else { Field::Data };
            if load {
                let dst = if inst.encoding() == Encoding::Mubuf { inst.field(Field::Vdata) } else { vdst(inst) };
                let data = b.v_load(lo, hi, 0, dwords, m)?;
                for (i, d) in data.into_iter().enumerate() {
                    data_set(b, acc, dst + i as u32, d, m);
                }
            } else {
                let base = inst.field(data_field);
                let data: Vec<B::V> = (0..dwords).map(|i| data_get(b, acc, base + i)).collect();
                b.v_store(lo, hi, 0, &data, m)?;
            }
            Ok(Flow::Next)
        }

        // ---- vector memory ----------------------------------------------------------------------------
        O::GlobalLoadDword | O::GlobalLoadDwordx2 | O::GlobalLoadDwordx3 | O::GlobalLoadDwordx4 | O::GlobalStoreDword
        | O::GlobalStoreDwordx2 | O::GlobalStoreDwordx3 | O::GlobalStoreDwordx4 => {
            let dwords = match inst.info.opcode {
                O::GlobalLoadDword | O::GlobalStoreDword => 1,
                O::GlobalLoadDwordx2 | O::GlobalStoreDwordx2 => 2,
                O::GlobalLoadDwordx3 | O::GlobalStoreDwordx3 => 3,
                _ => 4,
            };
            if inst.field(Field::Lds) == 1 {
                return Err(form(inst, "LDS DMA"));
            }
            let acc = inst.field(Field::Acc) == 1;
            let (lo, hi) = global_address(b, inst)?;
            let offset = (((inst.field(Field::Offset) << 19) as i32) >> 19) as i64;
            let m = b.exec();
            if inst.info.name.starts_with("global_load") {
                let data = b.v_load(lo, hi, offset, dwords, m)?;
                for (i, d) in data.into_iter().enumerate() {
                    data_set(b, acc, vdst(inst) + i as u32, d, m);
                }
            } else {
                let base = inst.field(Field::Data);
                let data: Vec<B::V> = (0..dwords).map(|i| data_get(b, acc, base + i)).collect();
                b.v_store(lo, hi, offset, &data, m)?;
            }
            Ok(Flow::Next)
        }
        // ---- more scalar: calls, selects, 64-bit masks -----------------------------------------------
        O::SMulHiU32 | O::SMulHiI32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let op = if inst.info.opcode == O::SMulHiU32 { SOp::MulHiU32 } else { SOp::MulHiI32 };
            let r = b.s_op(op, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SOrn2B64 | O::SNandB64 | O::SNorB64 | O::SXnorB64 => {
            let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
            let ones = b.s_const(u32::MAX);
            let (rl, rh) = match inst.info.opcode {
                O::SOrn2B64 => {
                    let (nl, nh) = (b.s_op(SOp::Xor, cl, ones), b.s_op(SOp::Xor, ch, ones));
                    (b.s_op(SOp::Or, al, nl), b.s_op(SOp::Or, ah, nh))
                }
                O::SNandB64 | O::SNorB64 | O::SXnorB64 => {
                    let op = match inst.info.opcode {
                        O::SNandB64 => SOp::And,
                        O::SNorB64 => SOp::Or,
                        _ => SOp::Xor,
                    };
                    let (xl, xh) = (b.s_op(op, al, cl), b.s_op(op, ah, ch));
                    (b.s_op(SOp::Xor, xl, ones), b.s_op(SOp::Xor, xh, ones))
                }
                _ => unreachable_arm(inst)?,
            };
            s_set64(b, inst.field(Field::Sdst), rl, rh);
            scc_nonzero64(b, rl, rh);
            Ok(Flow::Next)
        }
        O::SCmpEqU64 | O::SCmpLgU64 => {
            let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
            let (el, eh) = (b.s_op(SOp::Eq, al, cl), b.s_op(SOp::Eq, ah, ch));
            let eq = b.s_op(SOp::And, el, eh);
            let r = if inst.info.opcode == O::SCmpLgU64 {
                let one = b.s_const(1);
                b.s_op(SOp::Xor, eq, one)
            } else {
                eq
            };
            b.set_scc(r);
            Ok(Flow::Next)
        }
        O::SBitcmp0B32 | O::SBitcmp1B32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let bit = b.s_op(SOp::Lshr, a, c);
            let one = b.s_const(1);
            let bit = b.s_op(SOp::And, bit, one);
            let r = if inst.info.opcode == O::SBitcmp0B32 { b.s_op(SOp::Xor, bit, one) } else { bit };
            b.set_scc(r);
            Ok(Flow::Next)
        }
        O::SAddkI32 | O::SMulkI32 | O::SCmpkEqU32 | O::SCmpkLgU32 | O::SCmpkEqI32 | O::SCmpkLgI32 => {
            let d = inst.field(Field::Sdst);
            let a = b.s_get(d);
            let k = inst.field(Field::Simm16);
            let signed = b.s_const(k as u16 as i16 as i32 as u32);
            let unsigned = b.s_const(k & 0xffff);
            let one = b.s_const(1);
            match inst.info.opcode {
                O::SAddkI32 => {
                    let r = b.s_op(SOp::Add, a, signed);
                    // SCC = signed overflow
                    let (ar, kr) = (b.s_op(SOp::Xor, a, r), b.s_op(SOp::Xor, signed, r));
                    let both = b.s_op(SOp::And, ar, kr);
                    let sh = b.s_const(31);
                    let ov = b.s_op(SOp::Lshr, both, sh);
                    b.s_set(d, r);
                    b.set_scc(ov);
                }
                O::SMulkI32 => {
                    let r = b.s_op(SOp::Mul, a, signed);
                    b.s_set(d, r);
                }
                O::SCmpkEqU32 | O::SCmpkLgU32 => {
                    let e = b.s_op(SOp::Eq, a, unsigned);
                    let r = if inst.info.opcode == O::SCmpkLgU32 { b.s_op(SOp::Xor, e, one) } else { e };
                    b.set_scc(r);
                }
                _ => {
                    let e = b.s_op(SOp::Eq, a, signed);
                    let r = if inst.info.opcode == O::SCmpkLgI32 { b.s_op(SOp::Xor, e, one) } else { e };
                    b.set_scc(r);
                }
            }
            Ok(Flow::Next)
        }
        O::BufferWbinvl1Vol | O::BufferWbinvl1 | O::SDcacheWb | O::SDcacheInv | O::BufferWbl2 | O::BufferInvl2 => {
            // caches are not modelled functionally: memory is always coherent
            Ok(Flow::Next)
        }
        O::SGetpcB64 => {
            let (lo, hi) = (b.s_const(next_pc as u32), b.s_const((next_pc >> 32) as u32));
            let d = inst.field(Field::Sdst);
            b.s_set(d, lo);
            b.s_set(d + 1, hi);
            Ok(Flow::Next)
        }
        O::SSetpcB64 | O::SSwappcB64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            if inst.info.opcode == O::SSwappcB64 {
                let (rl, rh) = (b.s_const(next_pc as u32), b.s_const((next_pc >> 32) as u32));
                let d = inst.field(Field::Sdst);
                b.s_set(d, rl);
                b.s_set(d + 1, rh);
            }
            Ok(Flow::Indirect { lo, hi })
        }
        O::SCselectB32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            // D = SCC ? S0 : S1
            let scc = b.scc();
            let r = b.s_select(scc, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SCselectB64 => {
            let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
            let scc = b.scc();
            let (rl, rh) = (b.s_select(scc, al, cl), b.s_select(scc, ah, ch));
            let d = inst.field(Field::Sdst);
            b.s_set(d, rl);
            b.s_set(d + 1, rh);
            Ok(Flow::Next)
        }
        O::SSubU32 | O::SSubbU32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            // a - c - borrow = a + !c + (1 - borrow); carry out = !borrow out
            let ones = b.s_const(u32::MAX);
            let nc = b.s_op(SOp::Xor, c, ones);
            let one = b.s_const(1);
            let cin = if inst.info.opcode == O::SSubbU32 {
                let s = b.scc();
                b.s_op(SOp::Xor, s, one)
            } else {
                one
            };
            let (r, carry) = b.s_add_carry(a, nc, cin);
            b.s_set(inst.field(Field::Sdst), r);
            let borrow = b.s_op(SOp::Xor, carry, one);
            b.set_scc(borrow);
            Ok(Flow::Next)
        }
        // ---- more vector ALU --------------------------------------------------------------------------
        O::VReadfirstlaneB32 => {
            let src = inst.field(Field::Src0);
            let v = if src >= 256 { b.v_get(src - 256) } else { vec_src(b, inst, Field::Src0)? };
            let exec = b.exec();
            let r = b.v_first_lane(v, exec);
            b.s_set(inst.field(Field::Vdst), r);
            Ok(Flow::Next)
        }
        O::VWritelaneB32 => {
            // lane (S1 & 63) of VDST = the scalar S0, whatever EXEC says
            no_modifiers(inst)?;
            let v = scalar_src(b, inst, inst.field(Field::Src0))?;
            let lane = scalar_src(b, inst, inst.field(Field::Src1))?;
            let (k63, k32, k31, one, zero) = (b.s_const(63), b.s_const(32), b.s_const(31), b.s_const(1), b.s_const(0));
            let lane = b.s_op(SOp::And, lane, k63);
            let low = b.s_op(SOp::LtU, lane, k32);
            let bit = b.s_op(SOp::And, lane, k31);
            let bit = b.s_op(SOp::Shl, one, bit);
            let (lo, hi) = (b.s_select(low, bit, zero), b.s_select(low, zero, bit));
            let m = b.mask_from(lo, hi);
            let v = b.v_splat(v);
            b.v_set(vdst(inst), v, m);
            Ok(Flow::Next)
        }
        O::VReadlaneB32 => {
            no_modifiers(inst)?;
            let v = vec_src(b, inst, Field::Src0)?;
            let lane = scalar_src(b, inst, inst.field(Field::Src1))?;
            let r = b.v_lane_read(v, lane);
            b.s_set(inst.field(Field::Vdst), r);
            Ok(Flow::Next)
        }
        O::SBcnt1I32B64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let r = b.s_popcount64(lo, hi);
            b.s_set(inst.field(Field::Sdst), r);
            let nz = b.s_nonzero(r);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        O::DsBpermuteB32 | O::DsPermuteB32 | O::DsSwizzleB32 => {
            if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
                return Err(form(inst, "GDS or AGPR data"));
            }
            let m = b.exec();
            let offset = inst.field(Field::Offset0) | inst.field(Field::Offset1) << 8;
            let (data, index) = match inst.info.opcode {
                O::DsSwizzleB32 => {
                    let data = b.v_get(inst.field(Field::Addr));
                    let ids = b.v_lane_ids();
                    (data, swizzle_sources(b, ids, offset))
                }
                O::DsBpermuteB32 => {
                    // index = (addr + offset) / 4
                    let addr = b.v_get(inst.field(Field::Addr));
                    let off = b.s_const(offset);
                    let off = b.v_splat(off);
                    let byte = b.v_op(VOp::AddU32, addr, off);
                    let two = b.s_const(2);
                    let two = b.v_splat(two);
                    (b.v_get(inst.field(Field::Data0)), b.v_op(VOp::Lshr, byte, two))
                }
                _ => return Err(form(inst, "ds_permute (forward permute)")),
            };
            let r = b.v_permute(data, index, m);
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VSwapB32 => {
            no_modifiers(inst)?;
            let src = inst.field(Field::Src0);
            if src < 256 {
                return Err(form(inst, "a non-VGPR operand"));
            }
            let (x, y) = (b.v_get(vdst(inst)), b.v_get(src - 256));
            let m = b.exec();
            b.v_set(vdst(inst), y, m);
            b.v_set(src - 256, x, m);
            Ok(Flow::Next)
        }
        O::VCndmaskB32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let sel = if inst.encoding() == Encoding::Vop3 { inst.field(Field::Src2) } else { 106 };
            if sel > 127 {
                return Err(form(inst, "a non-SGPR lane select"));
            }
            let (lo, hi) = (b.s_get(sel), b.s_get(sel + 1));
            let m = b.mask_from(lo, hi);
            let r = b.v_select(m, a, c);
            let exec = b.exec();
            b.v_set(vdst(inst), r, exec);
            Ok(Flow::Next)
        }
        O::VMbcntLoU32B32 | O::VMbcntHiU32B32 => {
            // count of set bits of src0 in the lanes below this one (low or high half of the wave) + src1
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let ids = b.v_lane_ids();
            let k31 = b.s_const(31);
            let k31 = b.v_splat(k31);
            let pos = if inst.info.opcode == O::VMbcntLoU32B32 {
                ids
            } else {
                let k32 = b.s_const(32);
                let k32 = b.v_splat(k32);
                b.v_op(VOp::SubU32, ids, k32)
            };
            // lanes beyond this half count every bit (lo: lanes 32..63 see all 32; hi: lanes 0..31 see none)
            let k32 = b.s_const(32);
            let k32v = b.v_splat(k32);
            let full = b.v_cmp(VCmp::GeI32, pos, k32v);
            let zero = b_zero(b);
            let none = b.v_cmp(VCmp::LtI32, pos, zero);
            let shift = b.v_op(VOp::And, pos, k31);
            let ones = b.s_const(1);
            let ones = b.v_splat(ones);
            let bit = b.v_op(VOp::Shl, ones, shift);
            let below = b.v_op(VOp::SubU32, bit, ones);
            let allbits = b.s_const(u32::MAX);
            let allbits = b.v_splat(allbits);
            let mask = b.v_select(full, below, allbits);
            let mask = b.v_select(none, mask, zero);
            let masked = b.v_op(VOp::And, a, mask);
            let n = b.v_un(VUn::Bcnt, masked);
            let r = b.v_op(VOp::AddU32, n, c);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBcntU32B32 | O::VMinU32 | O::VMaxU32 | O::VMinI32 | O::VMaxI32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let r = match inst.info.opcode {
                O::VBcntU32B32 => {
                    let n = b.v_un(VUn::Bcnt, a);
                    b.v_op(VOp::AddU32, n, c)
                }
                O::VMinU32 => b.v_op(VOp::MinU32, a, c),
                O::VMaxU32 => b.v_op(VOp::MaxU32, a, c),
                O::VMinI32 => b.v_op(VOp::MinI32, a, c),
                _ => b.v_op(VOp::MaxI32, a, c),
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VBfrevB32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let r = b.v_un(VUn::Brev, a);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VSubrevU32 | O::VMulHiU32 | O::VMulHiI32 | O::VMulU32U24 | O::VMulI32I24 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let r = match inst.info.opcode {
                O::VSubrevU32 => b.v_op(VOp::SubU32, c, a),
                O::VMulHiU32 => b.v_op(VOp::MulHiU32, a, c),
                O::VMulHiI32 => b.v_op(VOp::MulHiI32, a, c),
                O::VMulU32U24 => b.v_op(VOp::MulU32U24, a, c),
                _ => b.v_op(VOp::MulI32I24, a, c),
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VSubCoU32 | O::VSubrevCoU32 | O::VSubbCoU32 | O::VSubbrevCoU32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = second_src(b, inst)?;
            let (a, c) = if matches!(inst.info.opcode, O::VSubrevCoU32 | O::VSubbrevCoU32) { (c, a) } else { (a, c) };
            let borrow_in = if matches!(inst.info.opcode, O::VSubbCoU32 | O::VSubbrevCoU32) {
                Some(carry_input(b, inst)?)
            } else {
                None
            };
            let (r, borrow) = b.v_sub_borrow(a, c, borrow_in);
            let exec = b.exec();
            b.v_set(vdst(inst), r, exec);
            write_lane_mask(b, inst, Field::Sdst, borrow);
            Ok(Flow::Next)
        }
        O::VMadU64U32 | O::VMadI64I32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let c = vec_src(b, inst, Field::Src1)?;
            let acc = vec_src64(b, inst, Field::Src2)?;
            let ((lo, hi), carry) = b.v_mad_u64_u32(a, c, acc, inst.info.opcode == O::VMadI64I32);
            let exec = b.exec();
            b.v_set(vdst(inst), lo, exec);
            b.v_set(vdst(inst) + 1, hi, exec);
            let out = b.mask_op(MaskOp::And, carry, exec);
            let (cl, ch) = b.mask_parts(out);
            let d = inst.field(Field::Sdst);
            b.s_set(d, cl);
            b.s_set(d + 1, ch);
            Ok(Flow::Next)
        }
        O::VCvtF32U32 | O::VCvtF32I32 | O::VCvtU32F32 | O::VCvtI32F32 | O::VTruncF32 | O::VFloorF32 | O::VRcpF32
        | O::VRcpIflagF32 | O::VSqrtF32 | O::VNotB32 | O::VExpF32 | O::VLogF32 | O::VRndneF32 | O::VCeilF32
        | O::VFractF32 | O::VRsqF32 | O::VSinF32 | O::VCosF32 | O::VFrexpMantF32 | O::VFrexpExpI32F32 | O::VFfbhU32
        | O::VFfblB32 => {
            no_modifiers(inst)?;
            let a = vec_src(b, inst, Field::Src0)?;
            let op = match inst.info.opcode {
                O::VCvtF32U32 => VUn::CvtF32U32,
                O::VCvtF32I32 => VUn::CvtF32I32,
                O::VCvtU32F32 => VUn::CvtU32F32,
                O::VCvtI32F32 => VUn::CvtI32F32,
                O::VTruncF32 => VUn::TruncF32,
                O::VFloorF32 => VUn::FloorF32,
                O::VSqrtF32 => VUn::SqrtF32,
                O::VNotB32 => VUn::Not,
                O::VExpF32 => VUn::ExpF32,
                O::VLogF32 => VUn::LogF32,
                O::VRndneF32 => VUn::RndneF32,
                O::VCeilF32 => VUn::CeilF32,
                O::VFractF32 => VUn::FractF32,
                O::VRsqF32 => VUn::RsqF32,
                O::VSinF32 => VUn::SinF32,
                O::VCosF32 => VUn::CosF32,
                O::VFrexpMantF32 => VUn::FrexpMantF32,
                O::VFrexpExpI32F32 => VUn::FrexpExpF32,
                O::VFfbhU32 => VUn::Ffbh,
                O::VFfblB32 => VUn::Ffbl,
                _ => VUn::RcpF32,
            };
            let r = b.v_un(op, a);
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VCvtF64U32 | O::VCvtF64I32 | O::VCvtF64F32 | O::VCvtU32F64 | O::VCvtI32F64 | O::VCvtF32F64 => {
            no_modifiers(inst)?;
            let to64 = matches!(inst.info.opcode, O::VCvtF64U32 | O::VCvtF64I32 | O::VCvtF64F32);
            let a = if to64 {
                let v = vec_src(b, inst, Field::Src0)?;
                (v, v)
            } else {
                vec_src64(b, inst, Field::Src0)?
            };
            let op = match inst.info.opcode {
                O::VCvtF64U32 => VCvt::F64FromU32,
                O::VCvtF64I32 => VCvt::F64FromI32,
                O::VCvtF64F32 => VCvt::F64FromF32,
                O::VCvtU32F64 => VCvt::U32FromF64,
                O::VCvtI32F64 => VCvt::I32FromF64,
                _ => VCvt::F32FromF64,
            };
            let (lo, hi) = b.v_cvt(op, a);
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            if to64 {
                b.v_set(vdst(inst) + 1, hi, m);
            }
            Ok(Flow::Next)
        }
        O::VTruncF64 | O::VFloorF64 | O::VRcpF64 | O::VSqrtF64 | O::VMovB64 => {
            no_modifiers(inst)?;
            let a = vec_src64(b, inst, Field::Src0)?;
            let (lo, hi) = match inst.info.opcode {
                O::VMovB64 => a,
                O::VTruncF64 => b.v_un64(VUn64::TruncF64, a),
                O::VFloorF64 => b.v_un64(VUn64::FloorF64, a),
                O::VRcpF64 => b.v_un64(VUn64::RcpF64, a),
                _ => b.v_un64(VUn64::SqrtF64, a),
            };
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            b.v_set(vdst(inst) + 1, hi, m);
            Ok(Flow::Next)
        }
        O::VAddF64 | O::VMulF64 | O::VLdexpF64 | O::VLshrrevB64 | O::VAshrrevI64 | O::VFmaF64 | O::VFmacF64 => {
            no_modifiers(inst)?;
            let (lo, hi) = match inst.info.opcode {
                O::VLshrrevB64 | O::VAshrrevI64 => {
                    let amount = vec_src(b, inst, Field::Src0)?;
                    let v = vec_src64(b, inst, Field::Src1)?;
                    let op = if inst.info.opcode == O::VLshrrevB64 { VOp64::Lshr } else { VOp64::Ashr };
                    b.v_op64(op, v, (amount, amount))
                }
                O::VLdexpF64 => {
                    let v = vec_src64(b, inst, Field::Src0)?;
                    let e = vec_src(b, inst, Field::Src1)?;
                    b.v_op64(VOp64::LdexpF64, v, (e, e))
                }
                O::VFmaF64 => {
                    let (x, y, z) = (vec_src64(b, inst, Field::Src0)?, vec_src64(b, inst, Field::Src1)?, vec_src64(b, inst, Field::Src2)?);
                    b.v_fma_f64(x, y, z)
                }
                O::VFmacF64 => {
                    let x = vec_src64(b, inst, Field::Src0)?;
                    let y = if inst.encoding() == Encoding::Vop3 {
                        vec_src64(b, inst, Field::Src1)?
                    } else {
                        let r = inst.field(Field::Vsrc1);
                        (b.v_get(r), b.v_get(r + 1))
                    };
                    let d = (b.v_get(vdst(inst)), b.v_get(vdst(inst) + 1));
                    b.v_fma_f64(x, y, d)
                }
                _ => {
                    let x = vec_src64(b, inst, Field::Src0)?;
                    let y = vec_src64(b, inst, Field::Src1)?;
                    b.v_op64(if inst.info.opcode == O::VAddF64 { VOp64::AddF64 } else { VOp64::MulF64 }, x, y)
                }
            };
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            b.v_set(vdst(inst) + 1, hi, m);
            Ok(Flow::Next)
        }
        O::VMacF32 | O::VMadmkF32 | O::VMadakF32 | O::VFmamkF32 | O::VFmaakF32 | O::VMadF32 | O::VFmaF32 => {
            no_modifiers(inst)?;
            let k = || inst.literal().unwrap_or(0);
            let a = vec_src(b, inst, Field::Src0)?;
            let (x, y, z) = match inst.info.opcode {
                O::VMacF32 => {
                    let c = second_src(b, inst)?;
                    let d = b.v_get(vdst(inst));
                    (a, c, d)
                }
                O::VMadmkF32 | O::VFmamkF32 => {
                    let kk = b.s_const(k());
                    let kv = b.v_splat(kk);
                    let c = b.v_get(inst.field(Field::Vsrc1));
                    (a, kv, c)
                }
                O::VMadakF32 | O::VFmaakF32 => {
                    let c = b.v_get(inst.field(Field::Vsrc1));
                    let kk = b.s_const(k());
                    let kv = b.v_splat(kk);
                    (a, c, kv)
                }
                _ => (a, vec_src(b, inst, Field::Src1)?, vec_src(b, inst, Field::Src2)?),
            };
            let fused = matches!(inst.info.opcode, O::VFmamkF32 | O::VFmaakF32 | O::VFmaF32);
            let r = if fused {
                b.v_fma_f32(x, y, z)
            } else {
                // the legacy multiply-add rounds the product first
                let p = b.v_op(VOp::MulF32, x, y);
                b.v_op(VOp::AddF32, p, z)
            };
            let m = b.exec();
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        O::VPkFmaF32 | O::VPkAddF32 | O::VPkMulF32 => {
            // two f32 lanes per register pair: element j of source k is its low or high dword as op_sel[k]
            // (j = 0) / op_sel_hi[k] (j = 1) say; neg_lo/neg_hi negate per element
            if inst.field(Field::Clamp) != 0 {
                return Err(form(inst, "clamp"));
            }
            let nsrc = if inst.info.opcode == O::VPkFmaF32 { 3 } else { 2 };
            let opsel = inst.field(Field::OpSel);
            let opsel_hi = inst.field(Field::OpSelHi) | inst.field(Field::OpSelHi2) << 2;
            let (neg_lo, neg_hi) = (inst.field(Field::Neg), inst.field(Field::NegHi));
            let fields = [Field::Src0, Field::Src1, Field::Src2];
            let mut srcs = Vec::with_capacity(3);
            for f in fields.iter().take(nsrc) {
                // an inline constant is its 32-bit value in the low dword (compilers select it for both elements
                // with op_sel_hi), not a 64-bit constant
                let src = match inline_const32(inst.field(*f)) {
                    Some(c) if (128..=248).contains(&inst.field(*f)) => {
                        let (c, z) = (b.s_const(c), b.s_const(0));
                        (b.v_splat(c), b.v_splat(z))
                    }
                    _ => vec_src64(b, inst, *f)?,
                };
                srcs.push(src);
            }
            let sign = b.s_const(0x8000_0000);
            let sign = b.v_splat(sign);
            let mut out = Vec::with_capacity(2);
            for j in 0..2 {
                let (sel, neg) = if j == 0 { (opsel, neg_lo) } else { (opsel_hi, neg_hi) };
                let mut e = Vec::with_capacity(3);
                for (k, src) in srcs.iter().enumerate() {
                    let v = if sel >> k & 1 == 1 { src.1 } else { src.0 };
                    e.push(if neg >> k & 1 == 1 { b.v_op(VOp::Xor, v, sign) } else { v });
                }
                out.push(match inst.info.opcode {
                    O::VPkFmaF32 => b.v_fma_f32(e[0], e[1], e[2]),
                    O::VPkAddF32 => b.v_op(VOp::AddF32, e[0], e[1]),
                    _ => b.v_op(VOp::MulF32, e[0], e[1]),
                });
            }
            let m = b.exec();
            b.v_set(vdst(inst), out[0], m);
            b.v_set(vdst(inst) + 1, out[1], m);
            Ok(Flow::Next)
        }
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
        _ if inst.info.name.starts_with("v_mfma_") => {
            let shape = Mfma::from_name(inst.info.name).ok_or_else(|| form(inst, "this MFMA shape"))?;
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
        O::VPkMovB32 => {
            if inst.field(Field::Neg) | inst.field(Field::NegHi) | inst.field(Field::Clamp) != 0 {
                return Err(form(inst, "modifiers"));
            }
            let opsel = inst.field(Field::OpSel);
            let s0 = vec_src64(b, inst, Field::Src0)?;
            let s1 = vec_src64(b, inst, Field::Src1)?;
            let lo = if opsel & 1 == 0 { s0.0 } else { s0.1 };
            let hi = if opsel & 2 == 0 { s1.0 } else { s1.1 };
            let m = b.exec();
            b.v_set(vdst(inst), lo, m);
            b.v_set(vdst(inst) + 1, hi, m);
            Ok(Flow::Next)
        }
        O::VCmpEqU64 | O::VCmpNeU64 | O::VCmpLtU64 | O::VCmpLeU64 | O::VCmpGtU64 | O::VCmpGeU64 | O::VCmpLtI64
        | O::VCmpLeI64 | O::VCmpGtI64 | O::VCmpGeI64 | O::VCmpEqF64 | O::VCmpNeqF64 | O::VCmpLtF64 | O::VCmpLeF64
        | O::VCmpGtF64 | O::VCmpGeF64 => {
            no_modifiers(inst)?;
            let a = vec_src64(b, inst, Field::Src0)?;
            let c = if inst.encoding() == Encoding::Vop3 {
                vec_src64(b, inst, Field::Src1)?
            } else {
                let r = inst.field(Field::Vsrc1);
                (b.v_get(r), b.v_get(r + 1))
            };
            let op = match inst.info.opcode {
                O::VCmpEqU64 => VCmp64::EqU64,
                O::VCmpNeU64 => VCmp64::NeU64,
                O::VCmpLtU64 => VCmp64::LtU64,
                O::VCmpLeU64 => VCmp64::LeU64,
                O::VCmpGtU64 => VCmp64::GtU64,
                O::VCmpGeU64 => VCmp64::GeU64,
                O::VCmpLtI64 => VCmp64::LtI64,
                O::VCmpLeI64 => VCmp64::LeI64,
                O::VCmpGtI64 => VCmp64::GtI64,
                O::VCmpGeI64 => VCmp64::GeI64,
                O::VCmpEqF64 => VCmp64::EqF64,
                O::VCmpNeqF64 => VCmp64::NeqF64,
                O::VCmpLtF64 => VCmp64::LtF64,
                O::VCmpLeF64 => VCmp64::LeF64,
                O::VCmpGtF64 => VCmp64::GtF64,
                _ => VCmp64::GeF64,
            };
            let r = b.v_cmp64(op, a, c);
            write_lane_mask(b, inst, Field::Vdst, r);
            Ok(Flow::Next)
        }
        _ => memory::execute(b, inst)
            .or_else(|| helpers::execute(b, inst))
            .unwrap_or_else(|| Err(unsupported(inst))),
    }
}

/// The read-modify-write operation of a DS or GLOBAL atomic, from its mnemonic.
fn atomic_op(name: &str) -> Option<AtomicOp> {
    let base = name.trim_start_matches("ds_").trim_start_matches("global_atomic_").trim_start_matches("flat_atomic_");
    let base = base.replace("_rtn", "").replace("_x2", "").replace("_u64", "_u32").replace("_i64", "_i32").replace("_b64", "_b32");
    Some(match base.as_str() {
        "add_u32" | "add" => AtomicOp::Add,
        "sub_u32" | "sub" => AtomicOp::Sub,
        "and_b32" | "and" => AtomicOp::And,
        "or_b32" | "or" => AtomicOp::Or,
        "xor_b32" | "xor" => AtomicOp::Xor,
        "min_i32" | "smin" => AtomicOp::SMin,
        "max_i32" | "smax" => AtomicOp::SMax,
        "min_u32" | "umin" => AtomicOp::UMin,
        "max_u32" | "umax" => AtomicOp::UMax,
        "wrxchg_b32" | "swap" => AtomicOp::Swap,
        "inc_u32" | "inc" => AtomicOp::Inc,
        "dec_u32" | "dec" => AtomicOp::Dec,
        "add_f32" => AtomicOp::AddF32,
        "add_f64" => AtomicOp::AddF64,
        _ => return None,
    })
}

/// Source lane of every lane for a ds_swizzle pattern: QUAD_PERM (bit 15: lanes within a quad), or BITMASK
/// (((lane & and) | or) ^ xor within groups of 32).
fn swizzle_sources<B: Backend>(b: &mut B, ids: B::V, pattern: u32) -> B::V {
    let splat = |b: &mut B, x: u32| {
        let s = b.s_const(x);
        b.v_splat(s)
    };
    if pattern & 0x8000 != 0 {
        // quad base + the 2-bit selector for (lane & 3)
        let three = splat(b, 3);
        let pos = b.v_op(VOp::And, ids, three);
        let two = splat(b, 2);
        let shift = b.v_op(VOp::Shl, pos, two);
        let sel = splat(b, pattern & 0xff);
        let sel = b.v_op(VOp::Lshr, sel, shift);
        let sel = b.v_op(VOp::And, sel, three);
        let not3 = splat(b, !3);
        let base = b.v_op(VOp::And, ids, not3);
        b.v_op(VOp::Or, base, sel)
    } else {
        let (and, or, xor) = (pattern & 0x1f, (pattern >> 5) & 0x1f, (pattern >> 10) & 0x1f);
        let group = splat(b, !0x1f);
        let base = b.v_op(VOp::And, ids, group);
        let m_and = splat(b, and);
        let m_or = splat(b, or);
        let m_xor = splat(b, xor);
        let low = b.v_op(VOp::And, ids, m_and);
        let low = b.v_op(VOp::Or, low, m_or);
        let low = b.v_op(VOp::Xor, low, m_xor);
        b.v_op(VOp::Or, base, low)
    }
}

/// Per-lane offsets into the private segment of a SCRATCH instruction, or of a MUBUF instruction through the
/// private segment buffer resource (ADD_TID set); other buffer resources are not supported yet.
fn private_offsets<B: Backend>(b: &mut B, inst: &Inst) -> Result<B::V, ExecError> {
    let splat = |b: &mut B, s: B::S| b.v_splat(s);
    let (base_lo, _, _) = b.scratch();
    let mut p;
    if inst.encoding() == Encoding::Scratch {
        // address = FLAT_SCRATCH (+ SGPR offset) (+ VGPR offset) + offset; the private offset is that minus base
        let fs = b.s_get(102);
        let rel = b.s_op(SOp::Sub, fs, base_lo);
        p = splat(b, rel);
        let saddr = inst.field(Field::Saddr);
        if saddr != 0x7f {
            let so = b.s_get(saddr);
            let so = splat(b, so);
            p = b.v_op(VOp::AddU32, p, so);
        }
        let vaddr_used = if inst.target.is_gfx940() { inst.field(Field::Lds) == 1 } else { saddr == 0x7f };
        if vaddr_used {
            let va = b.v_get(inst.field(Field::Addr));
            p = b.v_op(VOp::AddU32, p, va);
        }
        let off = b.s_const((((inst.field(Field::Offset) << 19) as i32) >> 19) as u32);
        let off = splat(b, off);
        p = b.v_op(VOp::AddU32, p, off);
    } else {
        let r = inst.field(Field::Srsrc) * 4;
        let d0 = b.s_get(r);
        if inst.field(Field::Idxen) == 1 {
            return Err(form(inst, "indexed buffer addressing"));
        }
        // only the private segment buffer (ADD_TID) is supported: its base is this wave's scratch. The resource
        // base and the SGPR offset are wave-level offsets into the swizzled segment (a stack frame of n bytes per
        // lane moves the stack pointer by n * 64): one lane's share of them is a 64th
        let rel = b.s_op(SOp::Sub, d0, base_lo);
        let so = inst.field(Field::Soffset);
        let so = match so {
            0..=127 => b.s_get(so),
            _ => b.s_const(inline_const32(so).ok_or_else(|| form(inst, "this buffer offset"))?),
        };
        let wave = b.s_op(SOp::Add, rel, so);
        let six = b.s_const(6);
        let lane = b.s_op(SOp::Lshr, wave, six);
        p = splat(b, lane);
        if inst.field(Field::Offen) == 1 {
            let va = b.v_get(inst.field(Field::Vaddr));
            p = b.v_op(VOp::AddU32, p, va);
        }
        let off = b.s_const(inst.field(Field::Offset));
        let off = splat(b, off);
        p = b.v_op(VOp::AddU32, p, off);
    }
    Ok(p)
}

/// Device addresses of private offsets: lane l's segment starts at base + l * bytes-per-lane. An access past
/// the end of a lane's segment faults.
fn private_addresses<B: Backend>(b: &mut B, inst: &Inst, p: B::V, dwords: u32) -> Result<(B::V, B::V), ExecError> {
    let (base_lo, base_hi, lane_bytes) = b.scratch();
    let lane_bytes_v = b.v_splat(lane_bytes);
    let end = b.s_const(dwords * 4);
    let end = b.v_splat(end);
    let last = b.v_op(VOp::AddU32, p, end);
    let too_far = b.v_cmp(VCmp::GtU32, last, lane_bytes_v);
    let wrapped = b.v_cmp(VCmp::LtU32, last, p);
    let exec = b.exec();
    let bad = b.mask_op(MaskOp::Or, too_far, wrapped);
    let bad = b.mask_op(MaskOp::And, bad, exec);
    b.fail_if_any(bad, ExecError::Private { mnemonic: inst.info.name, lane_bytes: 0 })?;
    let ids = b.v_lane_ids();
    let lane_off = b.v_op(VOp::MulLoU32, ids, lane_bytes_v);
    let within = b.v_op(VOp::AddU32, lane_off, p);
    let (bl, bh) = (b.v_splat(base_lo), b.v_splat(base_hi));
    let (lo, carry) = b.v_add_carry(bl, within, None);
    let zero = b.s_const(0);
    let zero = b.v_splat(zero);
    let (hi, _) = b.v_add_carry(bh, zero, Some(carry));
    Ok((lo, hi))
}

/// A zero vector.
fn b_zero<B: Backend>(b: &mut B) -> B::V {
    let z = b.s_const(0);
    b.v_splat(z)
}

/// For match arms that the enclosing pattern already excludes.
fn unreachable_arm<T>(inst: &Inst) -> Result<T, ExecError> {
    Err(unsupported(inst))
}

/// Writes a 64-bit value to an SGPR pair.
fn s_set64<B: Backend>(b: &mut B, d: u32, lo: B::S, hi: B::S) {
    b.s_set(d, lo);
    b.s_set(d + 1, hi);
}

/// SCC = (hi:lo != 0).
fn scc_nonzero64<B: Backend>(b: &mut B, lo: B::S, hi: B::S) {
    let any = b.s_op(SOp::Or, lo, hi);
    let nz = b.s_nonzero(any);
    b.set_scc(nz);
}

/// Writes a per-lane result mask (inactive lanes cleared) to VCC or, in VOP3 forms, to `dst_field`.
fn write_lane_mask<B: Backend>(b: &mut B, inst: &Inst, dst_field: Field, m: B::M) {
    let exec = b.exec();
    let m = b.mask_op(MaskOp::And, m, exec);
    let (lo, hi) = b.mask_parts(m);
    let dst = if inst.encoding() == Encoding::Vop3 {
        inst.field(dst_field)
    } else {
        // SDWA VOPC names its destination (bit 15 set: SGPR pair in bits 8-14), otherwise VCC
        match inst.ext() {
            Some(e) if inst.form == isa_amdgpu::Form::Sdwa && e >> 15 & 1 == 1 => e >> 8 & 0x7f,
            _ => 106,
        }
    };
    s_set64(b, dst, lo, hi);
}

/// The second source of a VOP2 (a VGPR, with DPP's neg/abs) or VOP3 (any source).
fn second_src<B: Backend>(b: &mut B, inst: &Inst) -> Result<B::V, ExecError> {
    match inst.encoding() {
        Encoding::Vop3 => vec_src(b, inst, Field::Src1),
        _ => {
            let r = inst.field(Field::Vsrc1);
            if inst.form == isa_amdgpu::Form::Sdwa {
                let e = inst.ext().unwrap_or(0);
                return sdwa_src(b, inst, r, e >> 31 == 1, e >> 24 & 0x3f, Field::Vsrc1);
            }
            let v = b.v_get(r);
            if inst.form == isa_amdgpu::Form::Dpp {
                let e = inst.ext().unwrap_or(0);
                let sign = float_sign(inst);
                return apply_mods(b, inst, v, e >> 22 & 1 == 1, e >> 23 & 1 == 1, sign, Field::Vsrc1);
            }
            Ok(v)
        }
    }
}

/// Source lane of every lane for a DPP control, and the mask of lanes whose source is in range. A source lane
/// that is in range but disabled in EXEC is read as it stands (hardware counts it invalid): not yet modelled.
fn dpp_sources(inst: &Inst, ctrl: u32) -> Result<([i32; 64], u64), ExecError> {
    let mut src = [0i32; 64];
    let mut valid = 0u64;
    for (l, s) in src.iter_mut().enumerate() {
        let l = l as i32;
        let (row, pos) = (l & !15, l & 15);
        let c = ctrl as i32;
        let v = match ctrl {
            0x000..=0x0ff => Some((l & !3) | ((c >> (2 * (l & 3))) & 3)),
            0x101..=0x10f => Some(pos + (c & 15)).filter(|p| *p < 16).map(|p| row + p),
            0x111..=0x11f => Some(pos - (c & 15)).filter(|p| *p >= 0).map(|p| row + p),
            0x121..=0x12f => Some(row + (pos - (c & 15)).rem_euclid(16)),
            0x130 => Some(l + 1).filter(|x| *x < 64),
            0x134 => Some((l + 1) % 64),
            0x138 => Some(l - 1).filter(|x| *x >= 0),
            0x13c => Some((l + 63) % 64),
            0x140 => Some(row + 15 - pos),
            0x141 => Some((l & !7) + 7 - (l & 7)),
            0x142 => Some(row - 1).filter(|x| *x >= 0),
            0x143 => Some(31).filter(|_| l >= 32),
            0x150..=0x15f => Some(row + (c & 15)),
            _ => return Err(form(inst, "this dpp_ctrl")),
        };
        if let Some(x) = v {
            *s = x;
            valid |= 1 << l;
        }
    }
    Ok((src, valid))
}

/// Lanes a DPP instruction may write: row_mask and bank_mask, and (without bound_ctrl) valid sources only.
fn dpp_write_mask(inst: &Inst) -> Result<u64, ExecError> {
    let e = inst.ext().unwrap_or(0);
    let (_, valid) = dpp_sources(inst, (e >> 8) & 0x1ff)?;
    let (row_mask, bank_mask, bound_ctrl) = ((e >> 28) & 0xf, (e >> 24) & 0xf, (e >> 19) & 1);
    let mut m = 0u64;
    for l in 0..64u32 {
        if row_mask >> (l / 16) & 1 == 1 && bank_mask >> ((l >> 2) & 3) & 1 == 1 {
            m |= 1 << l;
        }
    }
    Ok(if bound_ctrl == 1 { m } else { m & valid })
}

/// Per-lane 64-bit address of a GLOBAL instruction: a VGPR pair, or an SGPR pair plus a 32-bit VGPR offset.
fn global_address<B: Backend>(b: &mut B, inst: &Inst) -> Result<(B::V, B::V), ExecError> {
    let saddr = inst.field(Field::Saddr);
    let addr = inst.field(Field::Addr);
    if saddr == 0x7f {
        return Ok((b.v_get(addr), b.v_get(addr + 1)));
    }
    match inst.info.operand(Field::Addr).map(|o| o.kind) {
        Some(OperandKind::Reg { .. }) => {}
        _ => return Err(form(inst, "address operands")),
    }
    let (sl, sh) = (b.s_get(saddr & !1), b.s_get((saddr & !1) + 1));
    let (bl, bh) = (b.v_splat(sl), b.v_splat(sh));
    let off = b.v_get(addr);
    let (lo, carry) = b.v_add_carry(bl, off, None);
    let zero = b.s_const(0);
    let zero = b.v_splat(zero);
    let (hi, _) = b.v_add_carry(bh, zero, Some(carry));
    Ok((lo, hi))
}

/// Reads VGPR `reg`, or AGPR `reg` when `acc`.
fn data_get<B: Backend>(b: &mut B, acc: bool, reg: u32) -> B::V {
    if acc {
        b.a_get(reg)
    } else {
        b.v_get(reg)
    }
}

/// Writes VGPR `reg`, or AGPR `reg` when `acc`, in the lanes of `m`.
fn data_set<B: Backend>(b: &mut B, acc: bool, reg: u32, v: B::V, m: B::M) {
    if acc {
        b.a_set(reg, v, m)
    } else {
        b.v_set(reg, v, m)
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
    /// The shape of a supported MFMA mnemonic (gfx90a and gfx940 spellings).
    pub fn from_name(name: &str) -> Option<Mfma> {
        use MfmaInput::*;
        if matches!(name, "v_mfma_f64_16x16x4f64" | "v_mfma_f64_16x16x4_f64") {
            return Some(Mfma { m: 16, n: 16, k: 4, input: F64 });
        }
        let key: String = name.strip_prefix("v_mfma_f32_")?.chars().filter(|c| *c != '_').collect();
        let (m, n, k, input) = match key.as_str() {
            "32x32x8f16" => (32, 32, 8, F16),
            "16x16x16f16" => (16, 16, 16, F16),
            "32x32x8bf161k" | "32x32x8bf16" => (32, 32, 8, Bf16),
            "16x16x16bf161k" | "16x16x16bf16" => (16, 16, 16, Bf16),
            "32x32x2f32" => (32, 32, 2, F32),
            "16x16x4f32" => (16, 16, 4, F32),
            _ => return None,
        };
        Some(Mfma { m, n, k, input })
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
