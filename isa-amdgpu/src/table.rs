//! The instruction table of the gfx9 family, generated at build time from `data/gfx9.tsv`.
//!
//! `data/gfx9.tsv` is itself generated (by `gen/gen_gfx9.py` + `gen/annotate.py`) from probes of LLVM 19's
//! disassembler and checked in; every reader of instructions (decoder, disassembler, encoder, later the engine,
//! the JIT's block splitter, the timing model and the profiler) reads this table. Other families (gfx950,
//! gfx11) get their own table file and the same row type.

use std::sync::OnceLock;

use crate::encoding::{Encoding, Field};

include!(concat!(env!("OUT_DIR"), "/gfx9_table.rs"));

/// A target processor this crate knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Gfx90a,
    Gfx942,
}

impl Target {
    /// All targets with a table.
    pub const ALL: [Target; 2] = [Target::Gfx90a, Target::Gfx942];

    /// Bit of this target in [`OpInfo::targets`].
    pub const fn bit(self) -> u8 {
        match self {
            Target::Gfx90a => 1,
            Target::Gfx942 => 2,
        }
    }

    /// The processor name (`gfx90a`).
    pub const fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
        }
    }

    /// Parses a processor name or a target id (`gfx90a:xnack-` → gfx90a). gfx940/gfx941 share gfx942's table.
    pub fn from_name(name: &str) -> Option<Target> {
        let proc = name.split(':').next().unwrap_or(name);
        let proc = proc.rsplit("--").next().unwrap_or(proc);
        match proc {
            "gfx90a" => Some(Target::Gfx90a),
            "gfx940" | "gfx941" | "gfx942" => Some(Target::Gfx942),
            _ => None,
        }
    }

    /// gfx940-family cache-policy bits print as sc0/sc1/nt instead of glc/slc.
    pub const fn is_gfx940(self) -> bool {
        matches!(self, Target::Gfx942)
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

/// Which wait counter an instruction increments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitClass {
    None,
    Lgkm,
    Vm,
    VmLgkm,
    Exp,
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
