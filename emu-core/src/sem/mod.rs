//! Instruction semantics, written once over a [`Backend`].
//!
//! The interpreter ([`crate::interp`]) implements `Backend` by computing on whole-wave arrays; the JIT implements
//! it by emitting Cranelift IR for the same calls. The meaning of every instruction lives here and nowhere
//! else, one module per instruction family, chosen from the instruction table's encoding and columns:
//!
//! | module | instructions |
//! |---|---|
//! | [`analysis`] | which registers an instruction reads and writes (for the timing model and the JIT) |
//! | [`backend`] | the `Backend` trait and its lane operations |
//! | [`calls`] | the operations compiled code hands to the interpreter, as one list |
//! | [`operand`] | sources (SGPR, special, inline constant, literal, VGPR), VOP3/SDWA/DPP modifiers, writes |
//! | [`control`] | SOPP and the PC instructions: branches, barrier, end, trap, waits |
//! | [`salu`] | SOP1/SOP2/SOPC/SOPK |
//! | [`smem`] | scalar memory |
//! | [`valu32`], [`valu64`], [`valu16`] | VOP1/VOP2/VOP3/VOP3P by lane width |
//! | [`compare`] | v_cmp, v_cmpx |
//! | [`xlane`] | readlane, writelane, readfirstlane, DS lane permutes |
//! | [`lds`] | DS |
//! | [`vmem`] | GLOBAL, FLAT, SCRATCH, MUBUF/MTBUF |
//! | [`image`] | MIMG |
//! | [`mfma`] | MFMA, SMFMAC, AGPR moves |
//! | [`index`] | VGPR index mode: its state instructions, and VALU instructions while it is on |
//! | `refused` | the instructions no compute kernel can use on wavejit, each with why |
//!
//! Control flow comes back as a [`Flow`] so that a block compiler can turn it into jumps.

use isa_amdgpu::encoding::Encoding;
use isa_amdgpu::table::{FlowControl, Implicit};
use isa_amdgpu::{Inst, Opcode};

pub mod analysis;
pub mod backend;
pub mod calls;
mod compare;
mod control;
mod image;
mod index;
mod lds;
pub mod mfma;
mod operand;
mod refused;
mod salu;
mod smem;
mod valu16;
mod valu32;
mod valu64;
mod vmem;
mod xlane;

pub use backend::*;
pub use mfma::{mfma_lanes, Mfma, MfmaInput};
use operand::*;
pub use vmem::{flat_access, private_access, SWIZZLE_ROW};

/// High 32 bits of flat addresses that reach the workgroup's LDS (`src_shared_base`); the low 32 bits are the
/// LDS offset.
pub const SHARED_APERTURE_HI: u32 = 0x0001_0000;
/// High 32 bits of flat addresses in the private (scratch) aperture (`src_private_base`).
pub const PRIVATE_APERTURE_HI: u32 = 0x0002_0000;

/// Where execution goes after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow<S> {
    Next,
    /// Unconditional jump.
    Jump(u64),
    /// Jump if `cond` (0/1) is 1.
    Branch {
        cond: S,
        target: u64,
    },
    /// Jump to the address in a register pair (s_setpc_b64, s_swappc_b64).
    Indirect {
        lo: S,
        hi: S,
    },
    Barrier,
    End,
}

/// How a wave stands after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It goes on at the next PC.
    Running,
    /// It waits at a barrier and goes on at the next PC once released.
    Barrier,
    /// It has ended; its PC stays on `s_endpgm`.
    End,
}

/// What resolving a [`Flow`] into a PC needs: the interpreter computes on values ([`PcValues`]), the JIT emits IR.
pub trait PcOps<S> {
    type P: Copy;
    /// The address `pc`.
    fn at(&mut self, pc: u64) -> Self::P;
    /// `taken` if `cond` (0/1) is 1, else `not_taken`.
    fn pick(&mut self, cond: S, taken: Self::P, not_taken: Self::P) -> Self::P;
    /// The address in a register pair.
    fn join(&mut self, lo: S, hi: S) -> Self::P;
}

impl<S> Flow<S> {
    /// The next PC of a wave after the instruction of `size` bytes at `pc` produced this flow, and how the wave
    /// stands — the one definition of where each flow goes.
    pub fn resolve<O: PcOps<S>>(self, o: &mut O, pc: u64, size: u64) -> (O::P, Stop) {
        let next = pc + size;
        match self {
            Flow::Next => (o.at(next), Stop::Running),
            Flow::Jump(t) => (o.at(t), Stop::Running),
            Flow::Branch { cond, target } => {
                let (t, n) = (o.at(target), o.at(next));
                (o.pick(cond, t, n), Stop::Running)
            }
            Flow::Indirect { lo, hi } => (o.join(lo, hi), Stop::Running),
            Flow::Barrier => (o.at(next), Stop::Barrier),
            Flow::End => (o.at(pc), Stop::End),
        }
    }
}

/// [`PcOps`] on values.
pub struct PcValues;

impl PcOps<u32> for PcValues {
    type P = u64;
    fn at(&mut self, pc: u64) -> u64 {
        pc
    }
    fn pick(&mut self, cond: u32, taken: u64, not_taken: u64) -> u64 {
        if cond & 1 == 1 {
            taken
        } else {
            not_taken
        }
    }
    fn join(&mut self, lo: u32, hi: u32) -> u64 {
        (hi as u64) << 32 | lo as u64
    }
}

impl Flow<u32> {
    /// [`Flow::resolve`] on values: the next PC and how the wave stands.
    pub fn next_pc(self, pc: u64, size: u64) -> (u64, Stop) {
        self.resolve(&mut PcValues, pc, size)
    }
}

/// Why an instruction could not execute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("{mnemonic} has no semantics in wavejit's engine")]
    Unsupported { mnemonic: &'static str },
    #[error("{mnemonic}: {what} is not supported")]
    UnsupportedForm { mnemonic: &'static str, what: &'static str },
    #[error("{mnemonic}: {lane}{fault}", lane = lane.map(|l| format!("lane {l}: ")).unwrap_or_default())]
    Memory {
        mnemonic: &'static str,
        lane: Option<u32>,
        fault: crate::memory::MemoryFault,
    },
    /// An image instruction whose resource or sampler asks for what wavejit does not emulate, or is not valid.
    #[error("{mnemonic}: {what}")]
    Image { mnemonic: &'static str, what: String },
    #[error("s_trap {0} executed")]
    Trap(u32),
    #[error("{mnemonic}: private (scratch) access past the {lane_bytes}-byte private segment of a lane")]
    Private { mnemonic: &'static str, lane_bytes: u32 },
    #[error("{mnemonic}: lane {lane}: LDS {access} of {len} bytes at {address:#x} outside the workgroup's {size}-byte LDS allocation")]
    Lds {
        mnemonic: &'static str,
        lane: u32,
        access: crate::memory::Access,
        address: u64,
        len: u64,
        size: u64,
    },
    /// An instruction the ISA guide calls illegal in the state it meets.
    #[error("{mnemonic}: {what}, which the ISA guide calls illegal")]
    Illegal { mnemonic: &'static str, what: &'static str },
    /// A write to MODE that changes a field the engines do not model ([`crate::hwreg::MODE_FIELDS`]).
    #[error("{mnemonic}: sets MODE.{field} to {value}, and {why}")]
    ModeField {
        mnemonic: &'static str,
        field: &'static str,
        value: u32,
        why: &'static str,
    },
    /// An instruction that has no meaning in a compute kernel on wavejit (privileged, trap-handler or debugger
    /// only, graphics), with why.
    #[error("{mnemonic}: {why}")]
    Refused { mnemonic: &'static str, why: &'static str },
}

fn unsupported(inst: &Inst) -> ExecError {
    ExecError::Unsupported {
        mnemonic: inst.info.name,
    }
}

fn form(inst: &Inst, what: &'static str) -> ExecError {
    ExecError::UnsupportedForm {
        mnemonic: inst.info.name,
        what,
    }
}

/// Whether `inst` reads a clock (`s_memtime`, `s_memrealtime`). The engines start a block at such an
/// instruction, so a timing model can set the wave's clock to the instruction's issue cycle before it executes.
pub fn reads_clock(inst: &Inst) -> bool {
    matches!(inst.info.opcode, Opcode::SMemtime | Opcode::SMemrealtime)
}

/// Whether `inst` loads memory that other waves' writes reach at once: a load past the wave's non-coherent
/// caches (glc; sc0 or sc1 on gfx940), how a wave reads a flag another workgroup may be writing, or an LDS load
/// (the LDS has no cache: every wave of the workgroup sees each write), how a wave reads a flag another wave of
/// its workgroup writes. Either is what a spin-wait loads.
pub fn loads_coherent(inst: &Inst) -> bool {
    use isa_amdgpu::encoding::Field;
    inst.info.mem.dir == isa_amdgpu::table::MemDir::Load
        && (inst.info.encoding == Encoding::Ds || inst.field(Field::Glc) == 1 || inst.field(Field::Sc1) == 1)
}

/// What a wave did since it last went backwards (took a branch to its own PC or before), kept in
/// [`crate::wave::WaveState::pass`]: [`PASS_LOADED`] for a coherent load ([`loads_coherent`]), [`PASS_WROTE`] for
/// a memory write, and above them how many passes in a row were polling ones. A pass that loaded coherently and
/// wrote nothing is a pass of a polling loop, as a spin-wait on memory another workgroup writes goes round:
/// after [`POLLS_PER_TURN`] of them in a row both engines end the wave's turn (with
/// [`crate::engine::Limits::poll_ends_turn`]), so that the scheduler can run other workgroups meanwhile — a
/// loop that merely reads coherently pays a turn's end once in that many passes. The interpreter notes each
/// instruction ([`pass_bits`]) and checks each backward branch ([`goes_back`]); compiled code does the same in
/// IR, in the same places.
pub const PASS_LOADED: u32 = 1;
pub const PASS_WROTE: u32 = 2;
/// Where the count of polling passes in a row starts in [`crate::wave::WaveState::pass`].
pub const PASS_COUNT_SHIFT: u32 = 2;
/// Polling passes in a row that end a wave's turn.
pub const POLLS_PER_TURN: u32 = 64;

/// The [`PASS_LOADED`] and [`PASS_WROTE`] bits `inst` adds to a pass.
pub fn pass_bits(inst: &Inst) -> u32 {
    (loads_coherent(inst) as u32 * PASS_LOADED) | (inst.info.mem.writes() as u32 * PASS_WROTE)
}

/// The wave goes backwards: the pass that ends is counted (a polling one) or ends the count, and the next starts
/// empty. Whether that makes [`POLLS_PER_TURN`] in a row (the count starts again).
pub fn goes_back(pass: &mut u32) -> bool {
    let polling = *pass & (PASS_LOADED | PASS_WROTE) == PASS_LOADED;
    let n = if polling { (*pass >> PASS_COUNT_SHIFT) + 1 } else { 0 };
    let turn = n >= POLLS_PER_TURN;
    *pass = if turn { 0 } else { n << PASS_COUNT_SHIFT };
    turn
}

pub use refused::NOT_EXECUTED_TARGET;

/// Executes one instruction at `pc`.
pub fn execute<B: Backend>(b: &mut B, inst: &Inst, pc: u64) -> Result<Flow<B::S>, ExecError> {
    refused::check_target(inst)?;
    if index::applies(inst) && b.index_mode() {
        return index::valu(b, inst);
    }
    if inst.form == isa_amdgpu::Form::Sdwa {
        return execute_sdwa(b, inst, pc);
    }
    if let Some(ty) = float_clamp(inst) {
        let flow = execute_plain(b, inst, pc)?;
        clamp_written(b, inst, ty);
        return Ok(flow);
    }
    if inst.form != isa_amdgpu::Form::Dpp {
        return execute_plain(b, inst, pc);
    }
    // DPP: the result is written to EXEC's lanes that row_mask/bank_mask/bound_ctrl allow
    if inst.info.writes.contains(Implicit::EXEC) {
        return Err(form(inst, "DPP on an instruction that writes EXEC"));
    }
    let exec = b.exec();
    let narrowed = dpp_write_lanes(b, inst, exec)?;
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
    // omod (bits 15:14) is ignored and a float result's clamp applied below ([`float_clamp`])
    let clamp = float_clamp(inst);
    if !vopc && e >> 13 & 1 == 1 && clamp.is_none() {
        return Err(form(inst, "SDWA clamp of an integer result (saturation)"));
    }
    let (sel, unused) = (e >> 8 & 7, e >> 11 & 3);
    if vopc {
        return execute_plain(b, inst, pc);
    }
    if sel == 6 {
        let flow = execute_plain(b, inst, pc)?;
        if let Some(ty) = clamp {
            clamp_written(b, inst, ty);
        }
        return Ok(flow);
    }
    let (shift, width) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => return Err(form(inst, "this SDWA dst_sel")),
    };
    let d = vdst(inst);
    let old = b.v_get(d);
    let flow = execute_plain(b, inst, pc)?;
    let mut new = b.v_get(d);
    if let Some(ty) = clamp {
        new = clamp_unit(b, ty, &[new])[0];
    }
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

/// Clamps the float result `inst` wrote ([`float_clamp`]) in its destination: an f32 register (two for
/// v_cvt_pk_f32_fp8 / _bf8), an f64 pair, or an f16 in the half op_sel[3] names (the low one without op_sel,
/// as SDWA's; both halves for v_cvt_pkrtz_f16_f32, which writes two), under EXEC.
fn clamp_written<B: Backend>(b: &mut B, inst: &Inst, ty: isa_amdgpu::table::DataType) {
    use isa_amdgpu::encoding::Field;
    use isa_amdgpu::table::DataType;
    let d = vdst(inst);
    let m = b.exec();
    match ty {
        DataType::F64 => {
            let v = [b.v_get(d), b.v_get(d + 1)];
            let c = clamp_unit(b, ty, &v);
            set64(b, d, &c);
        }
        DataType::F16 => {
            let v = b.v_get(d);
            let sh = splat(b, 16);
            let (lo, hi) = (v, b.v_op(VOp::Lshr, v, sh));
            let both = inst.info.opcode == Opcode::VCvtPkrtzF16F32;
            let high = inst.field(Field::OpSel) >> 3 & 1 == 1;
            let lo = if both || !high { clamp_unit(b, ty, &[lo])[0] } else { lo };
            let hi = if both || high { clamp_unit(b, ty, &[hi])[0] } else { hi };
            let low = splat(b, 0xffff);
            let lo = b.v_op(VOp::And, lo, low);
            let hi = b.v_op(VOp::Shl, hi, sh);
            let v = b.v_op(VOp::Or, lo, hi);
            b.v_set(d, v, m);
        }
        _ => {
            let pair = matches!(inst.info.opcode, Opcode::VCvtPkF32Fp8 | Opcode::VCvtPkF32Bf8);
            for r in d..=d + pair as u32 {
                let v = b.v_get(r);
                let c = clamp_unit(b, ty, &[v])[0];
                b.v_set(r, c, m);
            }
        }
    }
}

/// Executes `inst` (its modifiers already applied around it) in the family module its encoding and table
/// columns select.
fn execute_plain<B: Backend>(b: &mut B, inst: &Inst, pc: u64) -> Result<Flow<B::S>, ExecError> {
    refused::check(inst)?;
    let info = inst.info;
    match info.encoding {
        Encoding::Sopp => control::execute(b, inst, pc),
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc | Encoding::Sopk => {
            if info.flow != FlowControl::Next || info.opcode == Opcode::SGetpcB64 {
                control::execute(b, inst, pc)
            } else {
                salu::execute(b, inst)
            }
        }
        Encoding::Smem => smem::execute(b, inst),
        Encoding::Ds => lds::execute(b, inst),
        Encoding::Flat | Encoding::Global | Encoding::Scratch | Encoding::Mubuf | Encoding::Mtbuf => {
            vmem::execute(b, inst)
        }
        Encoding::Mimg => image::execute(b, inst),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p => valu(b, inst),
    }
}

/// The VALU families: compares and matrix instructions by their table columns, the rest by the widest value
/// type the mnemonic names (64-bit lanes, 16-bit values, else 32-bit lanes). The mixed-precision fmas name f32
/// but read f16 halves, and the packed integer forms name b32 but work on 16-bit halves: they are 16-bit work.
fn valu<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    let info = inst.info;
    if info.compare.is_some() {
        return compare::execute(b, inst);
    }
    if info.mfma.is_some()
        || matches!(
            info.opcode,
            Opcode::VAccvgprReadB32 | Opcode::VAccvgprWriteB32 | Opcode::VAccvgprMovB32
        )
    {
        return mfma::execute(b, inst);
    }
    if valu32::lane_op(info.opcode) {
        return valu32::more(b, inst);
    }
    let types = [info.dst_type, info.src_type];
    if types.iter().flatten().any(|t| t.bits() == 64) {
        valu64::execute(b, inst)
    } else if types.iter().flatten().any(|t| t.bits() == 16)
        || info.opcode == Opcode::VFmaMixF32
        || valu16::packed_integer(info.opcode)
    {
        valu16::execute(b, inst)
    } else {
        valu32::execute(b, inst)
    }
}
