//! The backend operations compiled code may hand to the interpreter, as one list: each entry names an
//! operation (with its static arguments) and how the interpreter runs it, reading its operands in order from
//! [`Inputs`]. [`calls!`] turns the list into the [`CallOp`] enum and [`run_call`], so a new primitive that the
//! JIT leaves to the interpreter is one entry here; the JIT (`jit::call`) spills operands, runs the operation
//! through [`run_call`] and reloads what [`Store`] wrote.

use std::cell::Cell;

use isa_amdgpu::Inst;

use crate::interp::Interp;
use crate::lanefn::LaneFn;
use crate::wave::Lanes;

use super::backend::*;
use super::ExecError;

/// The operands of a call, read in the order the operation takes them.
pub struct Inputs<'a> {
    pub v: &'a [Lanes],
    pub s: &'a [u32],
    pub m: &'a [u64],
    /// The instruction the call belongs to and its PC.
    pub inst: &'a Inst,
    pub pc: u64,
    at: Cell<(usize, usize, usize)>,
}

impl<'a> Inputs<'a> {
    pub fn new(v: &'a [Lanes], s: &'a [u32], m: &'a [u64], inst: &'a Inst, pc: u64) -> Inputs<'a> {
        Inputs {
            v,
            s,
            m,
            inst,
            pc,
            at: Cell::new((0, 0, 0)),
        }
    }
    /// The next vector.
    pub fn v(&self) -> Lanes {
        self.vs(1)[0]
    }
    /// The next two vectors, as a 64-bit (lo, hi) pair.
    pub fn pair(&self) -> (Lanes, Lanes) {
        let p = self.vs(2);
        (p[0], p[1])
    }
    /// The next `n` vectors.
    pub fn vs(&self, n: usize) -> &'a [Lanes] {
        let (v, s, m) = self.at.get();
        self.at.set((v + n, s, m));
        &self.v[v..v + n]
    }
    /// The next scalar.
    pub fn s(&self) -> u32 {
        self.ss(1)[0]
    }
    /// The next `n` scalars.
    pub fn ss(&self, n: usize) -> &'a [u32] {
        let (v, s, m) = self.at.get();
        self.at.set((v, s + n, m));
        &self.s[s..s + n]
    }
    /// The next lane mask.
    pub fn m(&self) -> u64 {
        let (v, s, m) = self.at.get();
        self.at.set((v, s, m + 1));
        self.m[m]
    }
}

/// Where a call's results go: vectors, scalars and masks, each from slot 0.
pub struct Outputs<'a> {
    pub v: &'a mut [Lanes],
    pub s: &'a mut [u32],
    pub m: &'a mut [u64],
}

/// A result of an operation, written to [`Outputs`].
pub trait Store {
    fn store(self, out: &mut Outputs<'_>);
}

impl Store for () {
    fn store(self, _: &mut Outputs<'_>) {}
}
impl Store for Lanes {
    fn store(self, out: &mut Outputs<'_>) {
        out.v[0] = self;
    }
}
impl Store for (Lanes, Lanes) {
    fn store(self, out: &mut Outputs<'_>) {
        (out.v[0], out.v[1]) = self;
    }
}
impl Store for Vec<Lanes> {
    fn store(self, out: &mut Outputs<'_>) {
        out.v[..self.len()].copy_from_slice(&self);
    }
}
impl Store for u32 {
    fn store(self, out: &mut Outputs<'_>) {
        out.s[0] = self;
    }
}
impl Store for (u32, u32, u32) {
    fn store(self, out: &mut Outputs<'_>) {
        (out.s[0], out.s[1], out.s[2]) = self;
    }
}
impl Store for Vec<u32> {
    fn store(self, out: &mut Outputs<'_>) {
        out.s[..self.len()].copy_from_slice(&self);
    }
}
impl Store for u64 {
    fn store(self, out: &mut Outputs<'_>) {
        out.m[0] = self;
    }
}

/// Defines [`CallOp`] and [`run_call`] from the list below.
macro_rules! calls {
    ($( $(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* } => |$b:ident, $i:ident| $run:expr; )*) => {
        /// An operation compiled code leaves to the interpreter, with its static arguments.
        #[derive(Debug, Clone)]
        pub enum CallOp {
            $( $(#[$doc])* $name { $($field: $ty),* }, )*
        }

        /// Runs `op` on the interpreter's backend, operands from `i`, results to `out`.
        pub fn run_call(b: &mut Interp<'_>, op: &CallOp, i: &Inputs<'_>, out: &mut Outputs<'_>) -> Result<(), ExecError> {
            match op {
                $( CallOp::$name { $($field),* } => {
                    $( let $field = $field.clone(); )*
                    let ($b, $i) = (&mut *b, i);
                    Store::store($run, out);
                } )*
            }
            Ok(())
        }
    };
}

calls! {
    VOp { op: VOp } => |b, i| b.v_op(op, i.v(), i.v());
    VUn { op: VUn } => |b, i| b.v_un(op, i.v());
    VCmp { c: Compare } => |b, i| b.v_cmp(c, i.v(), i.v());
    VOp64 { op: VOp64 } => |b, i| b.v_op64(op, i.pair(), i.pair());
    VUn64 { op: VUn64 } => |b, i| b.v_un64(op, i.pair());
    FmaF64 {} => |b, i| b.v_fma_f64(i.pair(), i.pair(), i.pair());
    /// The f64 NaN rule ([`crate::rules::nan64`]) over f64 results: the `sources` operand pairs, then the
    /// result pair.
    Nan64 { sources: u8 } => |_b, i| nan64_lanes(i.vs(2 * sources as usize), i.pair());
    Cvt { op: VCvt } => |b, i| b.v_cvt(op, i.pair());
    Cmp64 { c: Compare } => |b, i| b.v_cmp64(c, i.pair(), i.pair());
    Shl64 {} => |b, i| b.v_shl64(i.v(), i.v(), i.v());
    LaneFn { f: LaneFn } => |b, i| b.v_lanefn(f, i.vs(f.inputs()));
    SLaneFn { f: LaneFn } => |b, i| b.s_lanefn(f, i.ss(f.inputs()));
    Permute {} => |b, i| b.v_permute(i.v(), i.v(), i.m());
    PermuteForward {} => |b, i| b.v_permute_forward(i.v(), i.v(), i.m());
    LaneRead {} => |b, i| b.v_lane_read(i.v(), i.s());
    FirstLane {} => |b, i| b.v_first_lane(i.v(), i.m());
    Mfma { shape: Mfma } => |b, i| b.v_mfma(shape, i.vs(shape.a_regs()), i.vs(shape.b_regs()), i.vs(shape.c_regs()));
    HwReg { reg: crate::hwreg::Held } => |b, _i| b.s_hwreg(reg);
    SetMode { mask: u32 } => |b, i| b.s_set_mode(i.s(), mask)?;
    Interrupt {} => |b, i| b.s_interrupt(i.s());
    FailIfAny { err: ExecError } => |b, i| b.fail_if_any(i.m(), err)?;
    VLoad { offset: i64, dwords: u32 } => |b, i| b.v_load(i.v(), i.v(), offset, dwords, i.m())?;
    VStore { offset: i64, n: u32 } => |b, i| b.v_store(i.v(), i.v(), offset, i.vs(n as usize), i.m())?;
    VLoadNarrow { offset: i64, bytes: u32, signed: bool } => |b, i| b.v_load_narrow(i.v(), i.v(), offset, bytes, signed, i.m())?;
    VStoreNarrow { offset: i64, bytes: u32 } => |b, i| b.v_store_narrow(i.v(), i.v(), offset, bytes, i.v(), i.m())?;
    VAtomic { op: AtomicOp, offset: i64 } => |b, i| b.v_atomic(op, i.v(), i.v(), offset, i.v(), i.m())?;
    VAtomic64 { op: AtomicOp, offset: i64 } => |b, i| b.v_atomic64(op, i.v(), i.v(), offset, i.pair(), i.m())?;
    CmpSwap { offset: i64, n: u32 } => |b, i| b.v_atomic_cmpswap(i.v(), i.v(), offset, i.vs(n as usize), i.vs(n as usize), i.m())?;
    LdsRead { offset: u32, dwords: u32 } => |b, i| b.lds_read(i.v(), offset, dwords, i.m())?;
    LdsWrite { offset: u32, n: u32 } => |b, i| b.lds_write(i.v(), offset, i.vs(n as usize), i.m())?;
    LdsReadNarrow { offset: u32, bytes: u32, signed: bool } => |b, i| b.lds_read_narrow(i.v(), offset, bytes, signed, i.m())?;
    LdsWriteNarrow { offset: u32, bytes: u32 } => |b, i| b.lds_write_narrow(i.v(), offset, bytes, i.v(), i.m())?;
    LdsAtomic { op: AtomicOp, offset: u32 } => |b, i| b.lds_atomic(op, i.v(), offset, i.v(), i.m())?;
    LdsAtomic64 { op: AtomicOp, offset: u32 } => |b, i| b.lds_atomic64(op, i.v(), offset, i.pair(), i.m())?;
    LdsAtomic2 { op: AtomicOp, offset: u32, n: u32 } => |b, i| b.lds_atomic2(op, i.v(), offset, i.vs(n as usize), i.vs(n as usize), i.m())?;
    SLoad { dwords: u32 } => |b, i| b.s_load(i.s(), i.s(), dwords)?;
    SLoadPart { dwords: u32 } => |b, i| b.s_load_part(i.s(), i.s(), dwords, i.s())?;
    SStore { n: u32 } => |b, i| b.s_store(i.s(), i.s(), i.ss(n as usize), i.s())?;
    SAtomic { op: AtomicOp, n: u32 } => |b, i| b.s_atomic(op, i.s(), i.s(), i.ss(n as usize), i.ss(n as usize), i.s())?;
    /// The whole instruction, on the interpreter (a compiled write that met a NaN redoes it this way).
    Instruction {} => |b, i| {
        super::execute(b, i.inst, i.pc)?;
    };
}

/// [`crate::rules::nan64`] over every lane: `srcs` the source pairs, `r` the result pair.
fn nan64_lanes(srcs: &[Lanes], r: (Lanes, Lanes)) -> (Lanes, Lanes) {
    let n = srcs.len() / 2;
    let (mut lo, mut hi) = r;
    let mut v = [0u64; 3];
    for l in 0..64 {
        for (k, x) in v.iter_mut().enumerate().take(n) {
            *x = (srcs[2 * k + 1][l] as u64) << 32 | srcs[2 * k][l] as u64;
        }
        let out = crate::rules::nan64(&v[..n], (hi[l] as u64) << 32 | lo[l] as u64);
        (lo[l], hi[l]) = (out as u32, (out >> 32) as u32);
    }
    (lo, hi)
}
