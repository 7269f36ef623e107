//! Encodings (instruction forms) of the gfx9 family and the bit layout of each: data, not code paths.
//!
//! Every bit of every encoding belongs to exactly one named [`Field`] (reserved bits included), so decoding
//! extracts fields and encoding packs them back, and the round trip is exact by construction.

use std::fmt;

/// One instruction form. `Encoding` is the form; the operation is [`crate::Opcode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    Sop2,
    Sopk,
    Sop1,
    Sopc,
    Sopp,
    Smem,
    Vop2,
    Vop1,
    Vopc,
    Vop3,
    Vop3p,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    Mtbuf,
    Mimg,
}

/// A named bit field of an encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Op,
    Sdst,
    Ssrc0,
    Ssrc1,
    Simm16,
    Sbase,
    Sdata,
    Soe,
    Nv,
    Glc,
    Imm,
    Offset,
    Soffset,
    Vdst,
    Vsrc1,
    Src0,
    Src1,
    Src2,
    Abs,
    OpSel,
    Clamp,
    Omod,
    Neg,
    NegHi,
    OpSelHi,
    OpSelHi2,
    Offset0,
    Offset1,
    Gds,
    Acc,
    Addr,
    Data0,
    Data1,
    Data,
    Lds,
    Seg,
    Slc,
    Sc1,
    Saddr,
    Offen,
    Idxen,
    Vaddr,
    Vdata,
    Srsrc,
    Tfe,
    Dfmt,
    Nfmt,
    Dmask,
    Unorm,
    Da,
    A16,
    Lwe,
    Ssamp,
    D16,
    /// The 32-bit literal dword that follows some instructions (not a bit field of the base encoding).
    Literal,
    /// Bits with no meaning in this form; LLVM may reject them when set.
    Reserved0,
    Reserved1,
}

/// Where a field lives: dword index (0 or 1), low bit, width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldDef {
    pub field: Field,
    pub dword: u8,
    pub lo: u8,
    pub width: u8,
}

const fn f(field: Field, dword: u8, lo: u8, width: u8) -> FieldDef {
    FieldDef {
        field,
        dword,
        lo,
        width,
    }
}

use Field as F;

/// Bit layouts (AMD Vega/CDNA ISA manuals). The fixed encoding prefix is not a field: see [`Encoding::prefix`].
static SOP2: &[FieldDef] = &[
    f(F::Ssrc0, 0, 0, 8),
    f(F::Ssrc1, 0, 8, 8),
    f(F::Sdst, 0, 16, 7),
    f(F::Op, 0, 23, 7),
];
static SOPK: &[FieldDef] = &[f(F::Simm16, 0, 0, 16), f(F::Sdst, 0, 16, 7), f(F::Op, 0, 23, 5)];
static SOP1: &[FieldDef] = &[f(F::Ssrc0, 0, 0, 8), f(F::Op, 0, 8, 8), f(F::Sdst, 0, 16, 7)];
static SOPC: &[FieldDef] = &[f(F::Ssrc0, 0, 0, 8), f(F::Ssrc1, 0, 8, 8), f(F::Op, 0, 16, 7)];
static SOPP: &[FieldDef] = &[f(F::Simm16, 0, 0, 16), f(F::Op, 0, 16, 7)];
static SMEM: &[FieldDef] = &[
    f(F::Sbase, 0, 0, 6),
    f(F::Sdata, 0, 6, 7),
    f(F::Reserved0, 0, 13, 1),
    f(F::Soe, 0, 14, 1),
    f(F::Nv, 0, 15, 1),
    f(F::Glc, 0, 16, 1),
    f(F::Imm, 0, 17, 1),
    f(F::Op, 0, 18, 8),
    f(F::Offset, 1, 0, 21),
    f(F::Reserved1, 1, 21, 4),
    f(F::Soffset, 1, 25, 7),
];
static VOP2: &[FieldDef] = &[
    f(F::Src0, 0, 0, 9),
    f(F::Vsrc1, 0, 9, 8),
    f(F::Vdst, 0, 17, 8),
    f(F::Op, 0, 25, 6),
];
static VOP1: &[FieldDef] = &[f(F::Src0, 0, 0, 9), f(F::Op, 0, 9, 8), f(F::Vdst, 0, 17, 8)];
static VOPC: &[FieldDef] = &[f(F::Src0, 0, 0, 9), f(F::Vsrc1, 0, 9, 8), f(F::Op, 0, 17, 8)];
/// VOP3 in its "a" form. The "b" form (carry-out SGPR) reads Abs|OpSel as `sdst`; see [`crate::Inst::sdst3`].
static VOP3: &[FieldDef] = &[
    f(F::Vdst, 0, 0, 8),
    f(F::Abs, 0, 8, 3),
    f(F::OpSel, 0, 11, 4),
    f(F::Clamp, 0, 15, 1),
    f(F::Op, 0, 16, 10),
    f(F::Src0, 1, 0, 9),
    f(F::Src1, 1, 9, 9),
    f(F::Src2, 1, 18, 9),
    f(F::Omod, 1, 27, 2),
    f(F::Neg, 1, 29, 3),
];
/// VOP3P; the MAI (MFMA) instructions read NegHi as cbsz, OpSel|OpSelHi2 as abid, Clamp as acc_cd,
/// OpSelHi as acc (A/B in AGPRs) and Neg as blgp.
static VOP3P: &[FieldDef] = &[
    f(F::Vdst, 0, 0, 8),
    f(F::NegHi, 0, 8, 3),
    f(F::OpSel, 0, 11, 3),
    f(F::OpSelHi2, 0, 14, 1),
    f(F::Clamp, 0, 15, 1),
    f(F::Op, 0, 16, 7),
    f(F::Src0, 1, 0, 9),
    f(F::Src1, 1, 9, 9),
    f(F::Src2, 1, 18, 9),
    f(F::OpSelHi, 1, 27, 2),
    f(F::Neg, 1, 29, 3),
];
static DS: &[FieldDef] = &[
    f(F::Offset0, 0, 0, 8),
    f(F::Offset1, 0, 8, 8),
    f(F::Gds, 0, 16, 1),
    f(F::Op, 0, 17, 8),
    f(F::Acc, 0, 25, 1),
    f(F::Addr, 1, 0, 8),
    f(F::Data0, 1, 8, 8),
    f(F::Data1, 1, 16, 8),
    f(F::Vdst, 1, 24, 8),
];
static FLAT: &[FieldDef] = &[
    f(F::Offset, 0, 0, 13),
    f(F::Lds, 0, 13, 1),
    f(F::Glc, 0, 16, 1),
    f(F::Slc, 0, 17, 1),
    f(F::Op, 0, 18, 7),
    f(F::Sc1, 0, 25, 1),
    f(F::Addr, 1, 0, 8),
    f(F::Data, 1, 8, 8),
    f(F::Saddr, 1, 16, 7),
    f(F::Acc, 1, 23, 1),
    f(F::Vdst, 1, 24, 8),
];
static MUBUF: &[FieldDef] = &[
    f(F::Offset, 0, 0, 12),
    f(F::Offen, 0, 12, 1),
    f(F::Idxen, 0, 13, 1),
    f(F::Glc, 0, 14, 1),
    f(F::Sc1, 0, 15, 1),
    f(F::Lds, 0, 16, 1),
    f(F::Slc, 0, 17, 1),
    f(F::Op, 0, 18, 7),
    f(F::Reserved0, 0, 25, 1),
    f(F::Vaddr, 1, 0, 8),
    f(F::Vdata, 1, 8, 8),
    f(F::Srsrc, 1, 16, 5),
    f(F::Reserved1, 1, 21, 2),
    f(F::Acc, 1, 23, 1),
    f(F::Soffset, 1, 24, 8),
];
static MTBUF: &[FieldDef] = &[
    f(F::Offset, 0, 0, 12),
    f(F::Offen, 0, 12, 1),
    f(F::Idxen, 0, 13, 1),
    f(F::Glc, 0, 14, 1),
    f(F::Op, 0, 15, 4),
    f(F::Dfmt, 0, 19, 4),
    f(F::Nfmt, 0, 23, 3),
    f(F::Vaddr, 1, 0, 8),
    f(F::Vdata, 1, 8, 8),
    f(F::Srsrc, 1, 16, 5),
    f(F::Sc1, 1, 21, 1),
    f(F::Slc, 1, 22, 1),
    f(F::Acc, 1, 23, 1),
    f(F::Soffset, 1, 24, 8),
];
static MIMG: &[FieldDef] = &[
    f(F::Reserved0, 0, 0, 7),
    f(F::Sc1, 0, 7, 1),
    f(F::Dmask, 0, 8, 4),
    f(F::Unorm, 0, 12, 1),
    f(F::Glc, 0, 13, 1),
    f(F::Da, 0, 14, 1),
    f(F::A16, 0, 15, 1),
    f(F::Acc, 0, 16, 1),
    f(F::Lwe, 0, 17, 1),
    f(F::Op, 0, 18, 7),
    f(F::Slc, 0, 25, 1),
    f(F::Vaddr, 1, 0, 8),
    f(F::Vdata, 1, 8, 8),
    f(F::Srsrc, 1, 16, 5),
    f(F::Ssamp, 1, 21, 5),
    f(F::Reserved1, 1, 26, 5),
    f(F::D16, 1, 31, 1),
];

impl Encoding {
    /// All encodings of the gfx9 family, in decode-priority order.
    pub const ALL: [Encoding; 18] = [
        Encoding::Sop2,
        Encoding::Sopk,
        Encoding::Sop1,
        Encoding::Sopc,
        Encoding::Sopp,
        Encoding::Smem,
        Encoding::Vop2,
        Encoding::Vop1,
        Encoding::Vopc,
        Encoding::Vop3,
        Encoding::Vop3p,
        Encoding::Ds,
        Encoding::Flat,
        Encoding::Global,
        Encoding::Scratch,
        Encoding::Mubuf,
        Encoding::Mtbuf,
        Encoding::Mimg,
    ];

    /// The fields of this encoding, covering every bit outside [`Encoding::prefix`].
    pub fn layout(self) -> &'static [FieldDef] {
        match self {
            Encoding::Sop2 => SOP2,
            Encoding::Sopk => SOPK,
            Encoding::Sop1 => SOP1,
            Encoding::Sopc => SOPC,
            Encoding::Sopp => SOPP,
            Encoding::Smem => SMEM,
            Encoding::Vop2 => VOP2,
            Encoding::Vop1 => VOP1,
            Encoding::Vopc => VOPC,
            Encoding::Vop3 => VOP3,
            Encoding::Vop3p => VOP3P,
            Encoding::Ds => DS,
            Encoding::Flat | Encoding::Global | Encoding::Scratch => FLAT,
            Encoding::Mubuf => MUBUF,
            Encoding::Mtbuf => MTBUF,
            Encoding::Mimg => MIMG,
        }
    }

    /// Where `field` lives in this encoding: its [`Encoding::layout`] entry, else its [`Encoding::aliases`] entry
    /// (a table lookup; decoding and the engines ask for fields of every instruction they run).
    #[inline]
    pub fn field_def(self, field: Field) -> Option<&'static FieldDef> {
        const FIELDS: usize = Field::Reserved1 as usize + 1;
        static INDEX: std::sync::LazyLock<[[Option<&'static FieldDef>; FIELDS]; Encoding::ALL.len()]> =
            std::sync::LazyLock::new(|| {
                let mut t = [[None; FIELDS]; Encoding::ALL.len()];
                for e in Encoding::ALL {
                    // the first entry for a field wins, as in a search of the layout then the aliases
                    for d in e.layout().iter().chain(e.aliases()).rev() {
                        t[e as usize][d.field as usize] = Some(d);
                    }
                }
                t
            });
        INDEX[self as usize][field as usize]
    }

    /// Fields that overlay others in some rows: VOP3's "b" form keeps its carry-out SGPR (`sdst`) where the
    /// "a" form has `abs` and `op_sel`. Decoding reads them; the layout stays a partition of the bits.
    pub fn aliases(self) -> &'static [FieldDef] {
        static VOP3B: &[FieldDef] = &[f(F::Sdst, 0, 8, 7)];
        match self {
            Encoding::Vop3 => VOP3B,
            _ => &[],
        }
    }

    /// (value, mask) of the fixed bits of dword 0 that identify this encoding.
    pub const fn prefix(self) -> (u32, u32) {
        match self {
            Encoding::Sop2 => (0x8000_0000, 0xC000_0000),
            Encoding::Sopk => (0xB000_0000, 0xF000_0000),
            Encoding::Sop1 => (0xBE80_0000, 0xFF80_0000),
            Encoding::Sopc => (0xBF00_0000, 0xFF80_0000),
            Encoding::Sopp => (0xBF80_0000, 0xFF80_0000),
            Encoding::Smem => (0xC000_0000, 0xFC00_0000),
            Encoding::Vop2 => (0x0000_0000, 0x8000_0000),
            Encoding::Vop1 => (0x7E00_0000, 0xFE00_0000),
            Encoding::Vopc => (0x7C00_0000, 0xFE00_0000),
            Encoding::Vop3 => (0xD000_0000, 0xFC00_0000),
            Encoding::Vop3p => (0xD380_0000, 0xFF80_0000),
            Encoding::Ds => (0xD800_0000, 0xFC00_0000),
            Encoding::Flat => (0xDC00_0000, 0xFC00_C000),
            Encoding::Scratch => (0xDC00_4000, 0xFC00_C000),
            Encoding::Global => (0xDC00_8000, 0xFC00_C000),
            Encoding::Mubuf => (0xE000_0000, 0xFC00_0000),
            Encoding::Mtbuf => (0xE800_0000, 0xFC00_0000),
            Encoding::Mimg => (0xF000_0000, 0xFC00_0000),
        }
    }

    /// Which encoding dword 0 belongs to, or `None`. Prefixes nest (SOP1 inside SOPK's range, VOP3P inside
    /// VOP3's, ...): the most specific matching prefix (the widest mask) wins.
    pub fn classify(w0: u32) -> Option<Encoding> {
        // All prefixes live in the top 9 bits, except FLAT/SCRATCH/GLOBAL, which also read bits 15:14: a table
        // over the top 9 bits (built from `prefix`) answers, and those three forms are told apart by matching.
        static BY_TOP9: std::sync::OnceLock<[Option<Encoding>; 512]> = std::sync::OnceLock::new();
        let table = BY_TOP9.get_or_init(|| {
            let mut t = [None; 512];
            for (i, slot) in t.iter_mut().enumerate() {
                *slot = Encoding::classify_slow((i as u32) << 23);
            }
            t
        });
        match table[(w0 >> 23) as usize] {
            Some(Encoding::Flat | Encoding::Global | Encoding::Scratch) => Encoding::classify_slow(w0),
            e => e,
        }
    }

    fn classify_slow(w0: u32) -> Option<Encoding> {
        Encoding::ALL
            .into_iter()
            .filter(|e| {
                let (v, m) = e.prefix();
                w0 & m == v
            })
            .max_by_key(|e| e.prefix().1.count_ones())
    }

    /// Base size in dwords, without literal or DPP/SDWA dword.
    pub const fn base_dwords(self) -> usize {
        match self {
            Encoding::Sop2
            | Encoding::Sopk
            | Encoding::Sop1
            | Encoding::Sopc
            | Encoding::Sopp
            | Encoding::Vop2
            | Encoding::Vop1
            | Encoding::Vopc => 1,
            _ => 2,
        }
    }

    /// Where the opcode number lives.
    pub fn op_field(self) -> FieldDef {
        *self
            .layout()
            .iter()
            .find(|d| d.field == Field::Op)
            .expect("every layout has an Op field")
    }

    /// Name as used in the table file (`SOP2`, `VOP3P`, ...).
    pub const fn table_name(self) -> &'static str {
        match self {
            Encoding::Sop2 => "SOP2",
            Encoding::Sopk => "SOPK",
            Encoding::Sop1 => "SOP1",
            Encoding::Sopc => "SOPC",
            Encoding::Sopp => "SOPP",
            Encoding::Smem => "SMEM",
            Encoding::Vop2 => "VOP2",
            Encoding::Vop1 => "VOP1",
            Encoding::Vopc => "VOPC",
            Encoding::Vop3 => "VOP3",
            Encoding::Vop3p => "VOP3P",
            Encoding::Ds => "DS",
            Encoding::Flat => "FLAT",
            Encoding::Global => "GLOBAL",
            Encoding::Scratch => "SCRATCH",
            Encoding::Mubuf => "MUBUF",
            Encoding::Mtbuf => "MTBUF",
            Encoding::Mimg => "MIMG",
        }
    }

    /// Dword 0 with only the prefix and an opcode number set.
    pub fn base_word(self, op: u32) -> u32 {
        let d = self.op_field();
        self.prefix().0 | (op << d.lo)
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.table_name())
    }
}

impl FieldDef {
    /// Mask of this field's bits within its dword.
    pub const fn mask(&self) -> u32 {
        (((1u64 << self.width) - 1) as u32) << self.lo
    }

    /// Extracts this field from instruction dwords.
    pub fn get(&self, words: &[u32]) -> u32 {
        (words[self.dword as usize] & self.mask()) >> self.lo
    }

    /// Stores `value` (truncated to the field's width) into instruction dwords.
    pub fn set(&self, words: &mut [u32], value: u32) {
        let w = &mut words[self.dword as usize];
        *w = (*w & !self.mask()) | ((value << self.lo) & self.mask());
    }
}

/// The extra dword of a VOP1/VOP2/VOPC instruction whose src0 is 0xF9 (SDWA) or 0xFA (DPP).
pub mod ext {
    /// SDWA dword fields: (name, lo, width).
    pub const SDWA: &[(&str, u8, u8)] = &[
        ("src0", 0, 8),
        ("dst_sel", 8, 3),
        ("dst_unused", 11, 2),
        ("clamp", 13, 1),
        ("omod", 14, 2),
        ("src0_sel", 16, 3),
        ("src0_sext", 19, 1),
        ("src0_neg", 20, 1),
        ("src0_abs", 21, 1),
        ("s0", 23, 1),
        ("src1_sel", 24, 3),
        ("src1_sext", 27, 1),
        ("src1_neg", 28, 1),
        ("src1_abs", 29, 1),
        ("s1", 31, 1),
    ];
    /// DPP dword fields.
    pub const DPP: &[(&str, u8, u8)] = &[
        ("src0", 0, 8),
        ("dpp_ctrl", 8, 9),
        ("bound_ctrl", 19, 1),
        ("src0_neg", 20, 1),
        ("src0_abs", 21, 1),
        ("src1_neg", 22, 1),
        ("src1_abs", 23, 1),
        ("bank_mask", 24, 4),
        ("row_mask", 28, 4),
    ];
}
