//! The instruction table of the gfx9 family, generated at build time from `data/gfx9.tsv`.
//!
//! `data/gfx9.tsv` is itself generated (by `gen/gen_gfx9.py` + `gen/annotate.py`) from probes of LLVM's
//! disassembler and checked in; every reader of instructions (decoder, disassembler, encoder, the engine's
//! semantics, the JIT's block splitter, the timing components and the profiler's counters) reads this table.
//! The table covers gfx90a and gfx942 (probed with LLVM 19) and gfx950 (probed with LLVM 22). Other families
//! (gfx11) would get their own table file and the same row type.

use std::sync::OnceLock;

use crate::encoding::{Encoding, Field};

include!(concat!(env!("OUT_DIR"), "/gfx9_table.rs"));

/// A target processor this crate knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Gfx90a,
    Gfx942,
    /// CDNA4 (MI350X, MI355X): gfx942's encodings plus new instructions. Decoded and disassembled; the engines
    /// run no gfx950 code (there is no gfx950 device).
    Gfx950,
}

impl Target {
    /// All targets with a table.
    pub const ALL: [Target; 3] = [Target::Gfx90a, Target::Gfx942, Target::Gfx950];

    /// The targets the engines execute (a device preset exists for each).
    pub const EXECUTED: [Target; 2] = [Target::Gfx90a, Target::Gfx942];

    /// Bit of this target in [`OpInfo::targets`].
    pub const fn bit(self) -> u8 {
        match self {
            Target::Gfx90a => 1,
            Target::Gfx942 => 2,
            Target::Gfx950 => 4,
        }
    }

    /// The processor name (`gfx90a`).
    pub const fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
        }
    }

    /// Parses a processor name or a target id (`gfx90a:xnack-` → gfx90a). gfx940/gfx941 share gfx942's table.
    pub fn from_name(name: &str) -> Option<Target> {
        let proc = name.split(':').next().unwrap_or(name);
        let proc = proc.rsplit("--").next().unwrap_or(proc);
        match proc {
            "gfx90a" => Some(Target::Gfx90a),
            "gfx940" | "gfx941" | "gfx942" => Some(Target::Gfx942),
            "gfx950" => Some(Target::Gfx950),
            _ => None,
        }
    }

    /// The LLVM major version whose disassembler this target's rows were probed with, and whose
    /// `llvm-objdump` the disassembler prints like: 19 for gfx90a and gfx942, 22 for gfx950 (LLVM 19 does not
    /// know it).
    pub const fn llvm_version(self) -> u32 {
        match self {
            Target::Gfx90a | Target::Gfx942 => 19,
            Target::Gfx950 => 22,
        }
    }

    /// gfx940-family cache-policy bits print as sc0/sc1/nt instead of glc/slc (gfx940, gfx941, gfx942, gfx950).
    pub const fn is_gfx940(self) -> bool {
        matches!(self, Target::Gfx942 | Target::Gfx950)
    }

    /// True if the engines execute this target's code.
    pub const fn is_executed(self) -> bool {
        matches!(self, Target::Gfx90a | Target::Gfx942)
    }
}

/// Register file of a register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegFile {
    /// Vector registers `v0..v255`.
    V,
    /// Scalar registers and the special scalar operands (vcc, exec, m0, ttmp...).
    S,
    /// Accumulation registers `a0..a255` (gfx90a, gfx942).
    A,
}

/// How a source operand's immediate values are typed, which decides how inline constants and literals print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrcType {
    /// 32-bit integer or float.
    B32,
    /// 64-bit integer.
    B64,
    /// 64-bit float (a literal is the high half).
    F64,
    /// 16-bit integer (float inline constants print as their f16 bit pattern).
    I16,
    /// 16-bit float.
    F16,
    /// Packed pair of 16-bit values (literals always print in hex).
    V216,
    /// Registers only (e.g. MFMA A/B operands: VGPRs or AGPRs).
    RegOnly,
}

/// What an operand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// A register-only field: `count` consecutive registers of `file` (the file may switch to AGPRs by an
    /// encoding's acc bit).
    Reg { file: RegFile, count: u8 },
    /// A general source (SGPR, VGPR, special register, inline constant, literal) of `count` registers.
    Src { ty: SrcType, count: u8 },
    /// An implicit operand that is printed (`vcc`, `off`, ...).
    Fixed(&'static str),
    /// A branch target (simm16, in dwords, relative to the next instruction).
    Label,
    /// `s_waitcnt` counters.
    Waitcnt,
    /// `s_sendmsg` message.
    Sendmsg,
    /// `s_set_gpr_idx_*` mode bits.
    GprIdx,
    /// `hwreg(...)` of s_getreg/s_setreg.
    Hwreg,
    /// An unsigned immediate printed in decimal.
    Imm,
    /// An immediate printed in hex.
    Hex,
}

/// An operand of a table row: which field it is encoded in and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub field: Field,
    pub kind: OperandKind,
}

/// Row flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpFlags(u8);

impl OpFlags {
    pub const NONE: OpFlags = OpFlags(0);
    /// The VOP1/VOP2/VOPC opcode also has an SDWA form.
    pub const SDWA: OpFlags = OpFlags(1);
    /// The VOP1/VOP2/VOPC opcode also has a DPP form.
    pub const DPP: OpFlags = OpFlags(2);
    /// The operands are printed only when not zero (`s_endpgm`).
    pub const OPTIONAL_OPERANDS: OpFlags = OpFlags(4);
    /// The instruction always carries a 32-bit literal (v_madak_f32, s_setreg_imm32_b32).
    pub const LITERAL: OpFlags = OpFlags(8);
    /// Source 0/1/2 is an integer: its neg modifier bit means sign extension (`sext(x)`).
    pub const INT_SRC0: OpFlags = OpFlags(16);
    pub const INT_SRC1: OpFlags = OpFlags(32);
    pub const INT_SRC2: OpFlags = OpFlags(64);

    /// The INT_SRCn flag of source `i`.
    pub const fn int_src(i: usize) -> OpFlags {
        OpFlags(16 << i)
    }

    pub const fn union(self, other: OpFlags) -> OpFlags {
        OpFlags(self.0 | other.0)
    }
    pub const fn contains(self, other: OpFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Functional unit that executes an instruction (for the timing model and the profiler).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    Salu,
    Smem,
    Branch,
    Msg,
    Valu,
    Trans,
    F64,
    Mfma,
    Lds,
    Vmem,
    Flat,
    Misc,
}

impl Unit {
    /// Every unit, in declaration order (`unit as usize` is its index here).
    pub const ALL: [Unit; 12] = [
        Unit::Salu,
        Unit::Smem,
        Unit::Branch,
        Unit::Msg,
        Unit::Valu,
        Unit::Trans,
        Unit::F64,
        Unit::Mfma,
        Unit::Lds,
        Unit::Vmem,
        Unit::Flat,
        Unit::Misc,
    ];

    /// The name as the table's `unit` column spells it (`valu`).
    pub const fn name(self) -> &'static str {
        match self {
            Unit::Salu => "salu",
            Unit::Smem => "smem",
            Unit::Branch => "branch",
            Unit::Msg => "msg",
            Unit::Valu => "valu",
            Unit::Trans => "trans",
            Unit::F64 => "f64",
            Unit::Mfma => "mfma",
            Unit::Lds => "lds",
            Unit::Vmem => "vmem",
            Unit::Flat => "flat",
            Unit::Misc => "misc",
        }
    }

    /// Whether the unit works per lane of the wave (vector ALU, LDS and vector memory), so that EXEC says how
    /// many lanes an instruction of it does work for.
    pub const fn is_vector(self) -> bool {
        matches!(
            self,
            Unit::Valu | Unit::Trans | Unit::F64 | Unit::Mfma | Unit::Lds | Unit::Vmem | Unit::Flat
        )
    }
}

/// Which wait counter an instruction increments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitClass {
    None,
    Lgkm,
    Vm,
    VmLgkm,
    Exp,
}

/// How an instruction moves the program counter (the table's `flow` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowControl {
    /// On to the next instruction.
    Next,
    /// `s_branch`: to a label.
    Branch,
    /// To a label or on, by a condition (`s_cbranch_*`).
    CondBranch,
    /// To an address in registers (`s_setpc_b64`).
    Jump,
    /// To an address or label, saving the return address (`s_swappc_b64`, `s_call_b64`).
    Call,
    /// The wave ends (`s_endpgm`).
    End,
    /// The wave waits for others (`s_barrier`, `ds_gws_barrier`).
    Barrier,
    /// Into the trap handler (`s_trap`).
    Trap,
    /// The wave halts (`s_sethalt`, `s_sendmsghalt`).
    Halt,
}

/// Direction of an instruction's memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemDir {
    None,
    Load,
    Store,
    /// Read-modify-write ([`OpInfo::atomic`] says which).
    Atomic,
}

/// Details of a memory access (the `mem` column's flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemFlags(u16);

impl MemFlags {
    pub const NONE: MemFlags = MemFlags(0);
    /// Narrow loads sign-extend.
    pub const SIGNED: MemFlags = MemFlags(1);
    /// d16: the value goes to (or, for stores, comes from) the low half of the register, the other half kept.
    pub const D16_LO: MemFlags = MemFlags(2);
    /// d16: the high half.
    pub const D16_HI: MemFlags = MemFlags(4);
    /// DS: two addresses (offset0 and offset1), each `bytes` wide.
    pub const TWO_ADDR: MemFlags = MemFlags(8);
    /// DS: the two offsets count 64-element strides.
    pub const STRIDE64: MemFlags = MemFlags(16);
    /// DS: the address comes from the lane id (`_addtid`).
    pub const LANE_ID: MemFlags = MemFlags(32);
    /// DS atomics: the old value is returned (`_rtn`); other atomics return it when their glc/sc0 bit is set.
    pub const RETURNS: MemFlags = MemFlags(64);
    /// Loads into LDS rather than registers (a store: stores from LDS rather than registers).
    pub const TO_LDS: MemFlags = MemFlags(128);
    /// Typed (format) access: element format from the buffer resource or instruction.
    pub const FORMAT: MemFlags = MemFlags(256);
    /// An image access: size set by the image resource and DMASK.
    pub const IMAGE: MemFlags = MemFlags(512);
    /// SMEM through a buffer resource.
    pub const BUFFER: MemFlags = MemFlags(1024);
    /// SMEM to the wave's scratch.
    pub const SCRATCH: MemFlags = MemFlags(2048);
    /// DS (gfx950 `ds_read_*_tr_*`): a load whose values are transposed across the lanes, in elements of the
    /// width the mnemonic names.
    pub const TRANSPOSE: MemFlags = MemFlags(4096);

    pub const fn from_bits(b: u16) -> MemFlags {
        MemFlags(b)
    }
    pub const fn bits(self) -> u16 {
        self.0
    }
    pub const fn contains(self, other: MemFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The memory an instruction reads or writes (the `mem` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemAccess {
    pub dir: MemDir,
    /// Bytes per lane (per wave for SMEM; per address for DS two-address forms; 0 for images, whose size the
    /// resource decides).
    pub bytes: u8,
    pub flags: MemFlags,
}

impl MemAccess {
    pub const NONE: MemAccess = MemAccess {
        dir: MemDir::None,
        bytes: 0,
        flags: MemFlags::NONE,
    };

    /// Whether the access writes memory (stores and atomics).
    pub const fn writes(&self) -> bool {
        matches!(self.dir, MemDir::Store | MemDir::Atomic)
    }
    pub const fn reads(&self) -> bool {
        matches!(self.dir, MemDir::Load | MemDir::Atomic)
    }
}

/// The read-modify-write operation of an atomic (the `atomic` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Sub,
    /// data - old (DS only).
    Rsub,
    And,
    Or,
    Xor,
    SMin,
    SMax,
    UMin,
    UMax,
    Swap,
    /// Compare and swap (DS `cmpst` takes its operands the other way round).
    CmpSwap,
    /// old >= data ? 0 : old + 1.
    Inc,
    /// old == 0 || old > data ? data : old - 1.
    Dec,
    AddF32,
    AddF64,
    MinF32,
    MaxF32,
    MinF64,
    MaxF64,
    /// Two packed f16 (bf16) additions.
    PkAddF16,
    PkAddBf16,
    /// (old & ~mask) | data.
    MskOr,
    /// old >= data ? 0 : old + 1 (DS `wrap`).
    Wrap,
    CondXchg,
}

/// A value type named by an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    F16,
    Bf16,
    F32,
    /// Reduced-precision f32 inputs of `_xf32` MFMAs.
    Xf32,
    F64,
    I8,
    U8,
    I16,
    U16,
    /// 16 bits with no arithmetic meaning (moves, shifts, logic).
    B16,
    I32,
    U32,
    B32,
    I64,
    U64,
    B64,
    /// 8-bit float pairs of MFMA inputs (A type, B type).
    Fp8Fp8,
    Fp8Bf8,
    Bf8Fp8,
    Bf8Bf8,
    /// gfx950's f8f6f4 MFMA inputs: fp8, bf8, fp6, bf6 or fp4 for A and for B, as CBSZ and BLGP select (8 bits:
    /// the width of the default, fp8).
    F8f6f4,
}

impl DataType {
    /// Width of one value in bits.
    pub const fn bits(self) -> u32 {
        match self {
            DataType::I8
            | DataType::U8
            | DataType::Fp8Fp8
            | DataType::Fp8Bf8
            | DataType::Bf8Fp8
            | DataType::Bf8Bf8
            | DataType::F8f6f4 => 8,
            DataType::F16 | DataType::Bf16 | DataType::I16 | DataType::U16 | DataType::B16 => 16,
            DataType::F32 | DataType::Xf32 | DataType::I32 | DataType::U32 | DataType::B32 => 32,
            DataType::F64 | DataType::I64 | DataType::U64 | DataType::B64 => 64,
        }
    }
    pub const fn is_float(self) -> bool {
        !matches!(
            self,
            DataType::I8
                | DataType::U8
                | DataType::I16
                | DataType::U16
                | DataType::B16
                | DataType::I32
                | DataType::U32
                | DataType::B32
                | DataType::I64
                | DataType::U64
                | DataType::B64
        )
    }
    pub const fn is_signed_int(self) -> bool {
        matches!(self, DataType::I8 | DataType::I16 | DataType::I32 | DataType::I64)
    }
}

/// What kind of floating-point work a VALU instruction does, as hardware counters class it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithKind {
    /// add, sub, subrev.
    Add,
    Mul,
    /// fma, mad, mac and their forms with a literal.
    Fma,
    /// Transcendentals: rcp, rsq, sqrt, log, exp, sin, cos.
    Trans,
    /// Matrix multiply-accumulate (the type is the input's).
    Mfma,
}

/// The `arith` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arith {
    pub kind: ArithKind,
    pub ty: DataType,
}

/// A compare's predicate. Float predicates starting with N are true for unordered operands; integer compares
/// use F, Lt, Eq, Le, Gt, Ne, Ge, Tru.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpPred {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    /// Ordered and not equal (floats).
    Lg,
    /// Not equal (integers).
    Ne,
    Ge,
    /// Ordered: neither is NaN.
    O,
    /// Unordered: either is NaN.
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Neq,
    Nlt,
    Tru,
    /// The class test: the first operand's class is one of those the second's bits select (bit 0 signalling
    /// NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -subnormal, 5 -0, 6 +0, 7 +subnormal, 8 +normal, 9 +inf).
    Class,
}

/// The `compare` column: v_cmp, v_cmpx, s_cmp, s_cmpk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Compare {
    pub pred: CmpPred,
    pub ty: DataType,
}

/// The `mfma` column: D (M x N per block) = A (M x K) * B (K x N) + C, for `blocks` independent blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MfmaShape {
    pub m: u8,
    pub n: u8,
    pub k: u8,
    pub blocks: u8,
    /// The type of A and B.
    pub input: DataType,
    /// SMFMAC: A is 2:4 structured-sparse.
    pub sparse: bool,
}

impl MfmaShape {
    /// Multiply-adds of one instruction (M * N * K * blocks).
    pub const fn macs(&self) -> u64 {
        self.m as u64 * self.n as u64 * self.k as u64 * self.blocks as u64
    }
}

/// A set of implicitly read or written registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Implicit(u8);

impl Implicit {
    pub const SCC: Implicit = Implicit(1);
    pub const VCC: Implicit = Implicit(2);
    pub const EXEC: Implicit = Implicit(4);
    pub const M0: Implicit = Implicit(8);

    pub const fn bits(self) -> u8 {
        self.0
    }
    pub const fn from_bits(b: u8) -> Implicit {
        Implicit(b)
    }
    pub const fn contains(self, other: Implicit) -> bool {
        self.0 & other.0 == other.0
    }
}

/// One row of the table.
#[derive(Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub encoding: Encoding,
    /// Opcode number within the encoding.
    pub op: u16,
    /// Targets on which this row holds (bit per [`Target::bit`]).
    pub targets: u8,
    pub opcode: Opcode,
    /// Mnemonic as printed for this encoding (with `_e32`/`_e64` where LLVM prints it).
    pub name: &'static str,
    pub operands: &'static [Operand],
    /// Fixed bits of dwords 0 and 1 as (mask, value): LLVM rejects the encoding when they differ.
    pub fixed: [(u32, u32); 2],
    pub flags: OpFlags,
    /// Modifiers LLVM prints for this instruction when their bits are set (comma list, e.g. `offset,gds`).
    pub mods: &'static str,
    /// Bits of dwords 0 and 1 outside the operand fields that change the instruction's meaning (and text).
    pub live: [u32; 2],
    /// Bits of the SDWA and DPP dwords that change the text.
    pub ext_live: [u32; 2],
    /// Fixed bits (mask, value) of the SDWA and of the DPP dword.
    pub ext_fixed: [(u32, u32); 2],
    pub unit: Unit,
    pub wait: WaitClass,
    pub reads: Implicit,
    pub writes: Implicit,
    pub flow: FlowControl,
    pub mem: MemAccess,
    pub atomic: Option<AtomicOp>,
    pub arith: Option<Arith>,
    pub compare: Option<Compare>,
    pub mfma: Option<MfmaShape>,
    /// The result's value type, as the mnemonic's first trailing type suffix names it.
    pub dst_type: Option<DataType>,
    /// The sources' value type: the last trailing type suffix (`v_cvt_f32_f16`: f16).
    pub src_type: Option<DataType>,
}

impl OpInfo {
    /// Does this row exist on `target`?
    pub fn on(&self, target: Target) -> bool {
        self.targets & target.bit() != 0
    }

    /// Does LLVM print modifier `name` for this instruction?
    pub fn has_mod(&self, name: &str) -> bool {
        self.mods.split(',').any(|m| m == name)
    }

    /// The operand encoded in `field`, if this row has one.
    pub fn operand(&self, field: Field) -> Option<&Operand> {
        self.operands.iter().find(|o| o.field == field)
    }
}

/// Row lookup by (target, encoding, opcode number).
pub struct Lookup {
    /// Per target, per encoding: opcode number → row index + 1 (0 = none).
    index: Vec<Vec<Vec<u16>>>,
}

impl Lookup {
    fn build() -> Lookup {
        let mut index = Vec::new();
        for t in Target::ALL {
            let mut per_enc = Vec::new();
            for e in Encoding::ALL {
                let width = e.op_field().width;
                let mut v = vec![0u16; 1 << width];
                for (i, row) in GFX9.iter().enumerate() {
                    if row.encoding == e && row.on(t) {
                        v[row.op as usize] = (i + 1) as u16;
                    }
                }
                per_enc.push(v);
            }
            index.push(per_enc);
        }
        Lookup { index }
    }

    /// The shared lookup, built on first use.
    pub fn get() -> &'static Lookup {
        static L: OnceLock<Lookup> = OnceLock::new();
        L.get_or_init(Lookup::build)
    }

    /// The row for an opcode number of an encoding on a target.
    #[inline]
    pub fn find(&self, target: Target, enc: Encoding, op: u32) -> Option<&'static OpInfo> {
        let ti = Target::ALL.iter().position(|t| *t == target)?;
        let ei = enc as usize;
        let i = *self.index[ti][ei].get(op as usize)?;
        if i == 0 {
            None
        } else {
            Some(&GFX9[i as usize - 1])
        }
    }
}

/// Rows of `opcode` on `target` (one per encoding it has).
pub fn rows_of(opcode: Opcode, target: Target) -> impl Iterator<Item = &'static OpInfo> {
    GFX9.iter().filter(move |r| r.opcode == opcode && r.on(target))
}
