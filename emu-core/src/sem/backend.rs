//! The `Backend` trait — what the semantics need from an execution engine — and the lane operations its
//! methods take. The interpreter implements it by computing on whole-wave arrays, the JIT by emitting Cranelift
//! IR; the semantics of every instruction are written once over it.

use crate::lanefn::LaneFn;

pub use isa_amdgpu::table::{AtomicOp, CmpPred, Compare, DataType};

pub use super::mfma::{Mfma, MfmaInput};
use super::ExecError;

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
    /// a + b, wrapping.
    AddU64,
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

/// The compares the semantics use internally (instructions' own compares come from the table's `compare`
/// column).
pub mod cmp {
    use isa_amdgpu::table::{CmpPred, Compare, DataType};

    const fn c(pred: CmpPred, ty: DataType) -> Compare {
        Compare { pred, ty }
    }
    pub const EQ_U32: Compare = c(CmpPred::Eq, DataType::U32);
    pub const NE_U32: Compare = c(CmpPred::Ne, DataType::U32);
    pub const LT_U32: Compare = c(CmpPred::Lt, DataType::U32);
    pub const LE_U32: Compare = c(CmpPred::Le, DataType::U32);
    pub const GT_U32: Compare = c(CmpPred::Gt, DataType::U32);
    pub const GE_U32: Compare = c(CmpPred::Ge, DataType::U32);
    pub const LT_I32: Compare = c(CmpPred::Lt, DataType::I32);
    pub const GE_I32: Compare = c(CmpPred::Ge, DataType::I32);
}

/// A clock a wave can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The shader clock, in cycles (`s_memtime`).
    Shader,
    /// The constant 100 MHz "real time" clock (`s_memrealtime`).
    Real,
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
    /// SGPR number `index & 127`, chosen at run time (M0-relative moves); slot 125 (null) reads 0.
    fn s_get_at(&mut self, index: Self::S) -> Self::S;
    /// Writes SGPR number `index & 127`, chosen at run time; writes to slot 125 (null) are dropped.
    fn s_set_at(&mut self, index: Self::S, v: Self::S);
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
    /// A compare of values of up to 32 bits (in the low bits of each lane; for the class test, `b` holds the
    /// class mask), as [`crate::rules::compare`] defines it.
    fn v_cmp(&mut self, c: Compare, a: Self::V, b: Self::V) -> Self::M;
    /// Per lane a + b + (carry_in lane bit); the carry out as a mask.
    fn v_add_carry(&mut self, a: Self::V, b: Self::V, carry_in: Option<Self::M>) -> (Self::V, Self::M);
    fn v_un(&mut self, op: VUn, a: Self::V) -> Self::V;
    fn v_op64(&mut self, op: VOp64, a: (Self::V, Self::V), b: (Self::V, Self::V)) -> (Self::V, Self::V);
    fn v_un64(&mut self, op: VUn64, a: (Self::V, Self::V)) -> (Self::V, Self::V);
    /// a * b + c in f64 with one rounding.
    fn v_fma_f64(&mut self, a: (Self::V, Self::V), b: (Self::V, Self::V), c: (Self::V, Self::V)) -> (Self::V, Self::V);
    /// A 32→64 or 64→32 conversion; 32-bit results come back in the first element.
    fn v_cvt(&mut self, op: VCvt, a: (Self::V, Self::V)) -> (Self::V, Self::V);
    /// A compare of 64-bit values (for the class test, `b.0` holds the class mask).
    fn v_cmp64(&mut self, c: Compare, a: (Self::V, Self::V), b: (Self::V, Self::V)) -> Self::M;
    /// Per lane: `m` set → b, clear → a.
    fn v_select(&mut self, m: Self::M, a: Self::V, b: Self::V) -> Self::V;
    /// Per lane a*b (u32 × u32) + c (u64); carry out of bit 63 as a mask.
    fn v_mad_u64_u32(
        &mut self,
        a: Self::V,
        b: Self::V,
        c: (Self::V, Self::V),
        signed: bool,
    ) -> ((Self::V, Self::V), Self::M);
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
    /// Whether bit `bit` of the uniform `s` is set, for a choice between two ways of executing the instruction.
    /// The interpreter reads it. The JIT, which knows it only at run time, answers `likely` and compiles that
    /// way, guarded: where the bit is otherwise when the code runs, the interpreter executes the instruction.
    fn uniform_bit(&mut self, s: Self::S, bit: u32, likely: bool) -> bool;
    /// The 64-bit value (lo, hi) of a clock the wave reads (`s_memtime`, `s_memrealtime`), as
    /// [`crate::wave::WaveClock`] defines it.
    fn s_clock(&mut self, clock: Clock) -> (Self::S, Self::S);
    /// Whether VGPR index mode is on ([`crate::wave::WaveState::gpr_idx`]). Compiled code never runs while it is:
    /// `s_set_gpr_idx_on` ends a block and the JIT's runner interprets instructions until the mode is off again.
    fn index_mode(&mut self) -> bool;
    /// Turns VGPR index mode on or off.
    fn set_index_mode(&mut self, on: bool);
    /// VGPR number `reg`, chosen at run time (index mode).
    fn v_get_at(&mut self, reg: Self::S) -> Self::V;
    /// Writes VGPR number `reg`, chosen at run time (index mode), in the lanes of `m`.
    fn v_set_at(&mut self, reg: Self::S, v: Self::V, m: Self::M);
    /// A hardware register the wave holds ([`crate::hwreg::HwRegs`]; MODE with the index-mode bit), whole.
    fn s_hwreg(&mut self, reg: crate::hwreg::Held) -> Self::S;
    /// Writes MODE's bits `mask` from `value` (in place), as [`crate::hwreg::mode_write`] allows: a change the
    /// engines do not model stops the wave, naming the field and value.
    fn s_set_mode(&mut self, value: Self::S, mask: u32) -> Result<(), ExecError>;
    /// Fails with `err` if any lane of `bad` is set.
    fn fail_if_any(&mut self, bad: Self::M, err: ExecError) -> Result<(), ExecError>;
    /// Raises an interrupt with context id `ctxid` ([`crate::interrupt`]).
    fn s_interrupt(&mut self, ctxid: Self::S);

    /// The value of `v` in lane `lane & 63` (v_readlane).
    fn v_lane_read(&mut self, v: Self::V, lane: Self::S) -> Self::S;
    /// The value of `v` in the first lane of `m` (lane 0 when `m` is empty).
    fn v_first_lane(&mut self, v: Self::V, m: Self::M) -> Self::S;
    /// `data` in the lanes of `v` selected per lane: result[l] = data[index[l] & 63] if that source lane is in
    /// `m`, else 0.
    fn v_permute(&mut self, data: Self::V, index: Self::V, m: Self::M) -> Self::V;
    /// `data` sent to the lanes selected per lane (ds_permute's forward permute): each lane of `m`, in lane
    /// order, puts data[l] into result[index[l] & 63], so of several lanes naming the same destination the
    /// highest wins; lanes no lane of `m` names are 0.
    fn v_permute_forward(&mut self, data: Self::V, index: Self::V, m: Self::M) -> Self::V;
    /// The lane numbers 0..63.
    fn v_lane_ids(&mut self) -> Self::V;
    /// A vector of 64 constants.
    fn v_const(&mut self, values: &[u32; 64]) -> Self::V;
    /// Accumulation register (AGPR) `reg`.
    fn a_get(&mut self, reg: u32) -> Self::V;
    /// Writes AGPR `reg` in the lanes of `m`.
    fn a_set(&mut self, reg: u32, v: Self::V, m: Self::M);
    /// One matrix fused multiply-add over whole registers: `a`, `b` and `c` hold [`Mfma::a_regs`],
    /// [`Mfma::b_regs`] and [`Mfma::c_regs`] registers (C, then a sparse shape's index register); returns D. The
    /// arithmetic is [`mfma_lanes`]'s.
    fn v_mfma(&mut self, shape: Mfma, a: &[Self::V], b: &[Self::V], c: &[Self::V]) -> Vec<Self::V>;
    /// A typed buffer access at per-lane addresses (lo, hi) in the lanes of `m`: `word3` is the buffer
    /// resource's word 3 (format and channel selects), `data` what a store writes; returns a load's registers.
    fn v_buffer_format(
        &mut self,
        op: &crate::image::FormatAccess,
        word3: Self::S,
        lo: Self::V,
        hi: Self::V,
        data: &[Self::V],
        m: Self::M,
    ) -> Result<Vec<Self::V>, ExecError>;
    /// One MIMG instruction: `t` is the image resource, `s` the sampler (for sampling forms), `addr` the
    /// address registers from VADDR on (as many as the longest form reads), `data` the registers a store writes
    /// or an atomic combines with memory; returns the registers to write from VDATA on (a load's or sample's
    /// result, an atomic's old value with GLC, none for stores). The per-lane work is [`crate::image`]'s.
    fn v_image(
        &mut self,
        op: &crate::image::ImageInst,
        t: [Self::S; 8],
        s: [Self::S; 4],
        addr: &[Self::V],
        data: &[Self::V],
        m: Self::M,
    ) -> Result<Vec<Self::V>, ExecError>;
    /// A per-lane helper function over `f.inputs()` vectors, giving `f.outputs()` vectors.
    fn v_lanefn(&mut self, f: LaneFn, args: &[Self::V]) -> Vec<Self::V>;
    /// The same helper functions on uniform values.
    fn s_lanefn(&mut self, f: LaneFn, args: &[Self::S]) -> Vec<Self::S>;
    /// Marks the wave as entering a global wave sync barrier that releases once `count` waves of the grid have
    /// arrived (the instruction then yields [`Flow::Barrier`]).
    fn gws_barrier(&mut self, count: Self::S);
    /// Marks the wave as stopped at a global wave sync semaphore instruction (or `ds_gws_init`): `op` (its
    /// value, for init and sema_br, is `value`) on the resource M0 and `offset0` name
    /// ([`crate::gws::resource_id`]), for the dispatch to carry out (the instruction then yields
    /// [`Flow::Barrier`]).
    fn gws_sema(&mut self, op: crate::gws::SemaOp, m0: Self::S, offset0: u32, value: Self::S);
    /// Population count of a 64-bit value.
    fn s_popcount64(&mut self, lo: Self::S, hi: Self::S) -> Self::S;

    /// LDS atomic per active lane (in lane order); returns the old values.
    fn lds_atomic(
        &mut self,
        op: AtomicOp,
        addr: Self::V,
        offset: u32,
        data: Self::V,
        m: Self::M,
    ) -> Result<Self::V, ExecError>;
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
    fn v_atomic(
        &mut self,
        op: AtomicOp,
        lo: Self::V,
        hi: Self::V,
        offset: i64,
        data: Self::V,
        m: Self::M,
    ) -> Result<Self::V, ExecError>;
    /// Loads of 1 or 2 bytes per active lane, zero- or sign-extended to 32 bits.
    fn v_load_narrow(
        &mut self,
        lo: Self::V,
        hi: Self::V,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: Self::M,
    ) -> Result<Self::V, ExecError>;
    /// Stores of the low 1 or 2 bytes per active lane.
    fn v_store_narrow(
        &mut self,
        lo: Self::V,
        hi: Self::V,
        offset: i64,
        bytes: u32,
        data: Self::V,
        m: Self::M,
    ) -> Result<(), ExecError>;

    /// LDS: per active lane, `dwords` dwords at byte address `addr` + `offset`.
    fn lds_read(&mut self, addr: Self::V, offset: u32, dwords: u32, m: Self::M) -> Result<Vec<Self::V>, ExecError>;
    /// LDS loads of 1 or 2 bytes, zero- or sign-extended.
    fn lds_read_narrow(
        &mut self,
        addr: Self::V,
        offset: u32,
        bytes: u32,
        signed: bool,
        m: Self::M,
    ) -> Result<Self::V, ExecError>;
    /// LDS stores of the low 1 or 2 bytes.
    fn lds_write_narrow(
        &mut self,
        addr: Self::V,
        offset: u32,
        bytes: u32,
        data: Self::V,
        m: Self::M,
    ) -> Result<(), ExecError>;
    /// 64-bit LDS atomics on (lo, hi) data; returns the old values.
    fn lds_atomic64(
        &mut self,
        op: AtomicOp,
        addr: Self::V,
        offset: u32,
        data: (Self::V, Self::V),
        m: Self::M,
    ) -> Result<(Self::V, Self::V), ExecError>;
    /// LDS atomic with two operands `a` and `b` of 1 or 2 dwords each, as [`crate::rules::atomic2`] defines it
    /// (compare-and-store: memory equal to `a` becomes `b`; masked or; wrap); returns the old values.
    fn lds_atomic2(
        &mut self,
        op: AtomicOp,
        addr: Self::V,
        offset: u32,
        a: &[Self::V],
        b: &[Self::V],
        m: Self::M,
    ) -> Result<Vec<Self::V>, ExecError>;
    /// 64-bit global atomics; returns the old values.
    fn v_atomic64(
        &mut self,
        op: AtomicOp,
        lo: Self::V,
        hi: Self::V,
        offset: i64,
        data: (Self::V, Self::V),
        m: Self::M,
    ) -> Result<(Self::V, Self::V), ExecError>;
    fn lds_write(&mut self, addr: Self::V, offset: u32, data: &[Self::V], m: Self::M) -> Result<(), ExecError>;
    /// The two reads of a read2 form, `dwords` each at `addr` + each offset: every lane's first read, then every
    /// lane's second (a backend may do both in one access where that gives the same values).
    fn lds_read2(
        &mut self,
        addr: Self::V,
        offsets: [u32; 2],
        dwords: u32,
        m: Self::M,
    ) -> Result<[Vec<Self::V>; 2], ExecError> {
        let first = self.lds_read(addr, offsets[0], dwords, m)?;
        Ok([first, self.lds_read(addr, offsets[1], dwords, m)?])
    }
    /// The two writes of a write2 form: every active lane's `data[0]` at `addr` + `offsets[0]`, then every
    /// lane's `data[1]` at `addr` + `offsets[1]`, so where lanes overlap the later write stays.
    fn lds_write2(
        &mut self,
        addr: Self::V,
        offsets: [u32; 2],
        data: [&[Self::V]; 2],
        m: Self::M,
    ) -> Result<(), ExecError> {
        self.lds_write(addr, offsets[0], data[0], m)?;
        self.lds_write(addr, offsets[1], data[1], m)
    }

    /// A FLAT load or store of `inst` (not an atomic): the lanes of `m` at addresses (lo, hi), each to the LDS,
    /// private or global memory by its aperture — loaded (a narrow load's one value, else `bytes / 4` dwords)
    /// or, with `data`, stored. [`crate::sem::flat_access`] defines it; a backend may take another way to the
    /// same result.
    fn flat_access(
        &mut self,
        inst: &isa_amdgpu::Inst,
        lo: Self::V,
        hi: Self::V,
        data: Option<&[Self::V]>,
        m: Self::M,
    ) -> Result<Vec<Self::V>, ExecError>
    where
        Self: Sized,
    {
        crate::sem::flat_access(self, inst, lo, hi, data, m)
    }
    /// A private access (SCRATCH, MUBUF through the private segment buffer, FLAT's private lanes where they are
    /// accessed apart) of the instruction `name`: `bytes` at each lane of `m`'s private offset `p` — loaded (a
    /// narrow load's one value, zero- or sign-extended, else `bytes / 4` dwords) or, with `data` (one value, or
    /// `bytes / 4` dwords), stored; a fault when a lane's bytes are not all inside its segment.
    /// [`crate::sem::private_access`] defines it; a backend may take another way to the same result.
    fn private_access(
        &mut self,
        name: &'static str,
        p: Self::V,
        bytes: u32,
        signed: bool,
        data: Option<&[Self::V]>,
        m: Self::M,
    ) -> Result<Vec<Self::V>, ExecError>
    where
        Self: Sized,
    {
        crate::sem::private_access(self, name, p, bytes, signed, data, m)
    }

    /// Scalar memory: `dwords` dwords from the 64-bit address (lo, hi) (its two low bits ignored).
    fn s_load(&mut self, lo: Self::S, hi: Self::S, dwords: u32) -> Result<Vec<Self::S>, ExecError>;
    /// Scalar memory: the first `valid` of `dwords` dwords from (lo, hi), the others 0 without being read (a
    /// buffer load's dwords out of range).
    fn s_load_part(&mut self, lo: Self::S, hi: Self::S, dwords: u32, valid: Self::S)
        -> Result<Vec<Self::S>, ExecError>;
    /// Scalar store of the first `valid` dwords of `data` at (lo, hi) (its two low bits ignored).
    fn s_store(&mut self, lo: Self::S, hi: Self::S, data: &[Self::S], valid: Self::S) -> Result<(), ExecError>;
    /// Scalar atomic at (lo, hi) (its two low bits ignored) on 32-bit (`data` one dword) or 64-bit values (two,
    /// low first); `cmp` is compare-and-swap's value compared with (memory equal to it becomes `data`). Nothing
    /// happens when `valid` is 0 (a buffer atomic out of range), and the old value reads 0. Returns the old value.
    fn s_atomic(
        &mut self,
        op: AtomicOp,
        lo: Self::S,
        hi: Self::S,
        data: &[Self::S],
        cmp: &[Self::S],
        valid: Self::S,
    ) -> Result<Vec<Self::S>, ExecError>;
    /// Vector memory: per active lane, `dwords` dwords from address (lo, hi) + offset.
    fn v_load(
        &mut self,
        lo: Self::V,
        hi: Self::V,
        offset: i64,
        dwords: u32,
        m: Self::M,
    ) -> Result<Vec<Self::V>, ExecError>;
    fn v_store(&mut self, lo: Self::V, hi: Self::V, offset: i64, data: &[Self::V], m: Self::M)
        -> Result<(), ExecError>;
}
