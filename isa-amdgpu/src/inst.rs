//! [`Inst`]: one decoded instruction, and the decoder and encoder that produce and consume it.

use thiserror::Error;

use crate::encoding::{Encoding, Field, FieldDef};
use crate::table::{Lookup, OpFlags, OpInfo, OperandKind, RegFile, Target};

/// The extra dword of a VOP1/VOP2/VOPC instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// The base encoding, possibly followed by a literal.
    Plain,
    /// Followed by an SDWA dword (src0 = 0xF9).
    Sdwa,
    /// Followed by a DPP dword (src0 = 0xFA).
    Dpp,
    /// gfx950's scaled f8f6f4 MFMA (`v_mfma_scale_*`): a `v_mfma_ld_scale_b32` (VOP3P) whose sources are the
    /// scales of A and B, then the f8f6f4 MFMA with bit 11 set, decoded as one instruction of four dwords (as
    /// LLVM does). The row is the MFMA's; its fields are read from the last two dwords.
    Scaled,
}

/// A decoded instruction: its table row and its raw dwords (base encoding, then the SDWA/DPP dword or the
/// literal; for [`Form::Scaled`] the scale prefix, then the MFMA). Field values are read through the encoding's
/// layout, so the raw dwords are the single source of truth and re-encoding is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst {
    pub info: &'static OpInfo,
    pub target: Target,
    pub form: Form,
    words: [u32; 4],
    len: u8,
    has_literal: bool,
}

/// Why bytes did not decode.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DecodeError {
    #[error("truncated instruction at {address:#x}: {need} bytes needed, {have} left")]
    Truncated { address: u64, need: usize, have: usize },
    #[error("invalid instruction at {address:#x} ({words}): {reason}", words = hex_words(.words))]
    Invalid {
        address: u64,
        words: Vec<u32>,
        reason: &'static str,
    },
}

fn hex_words(w: &[u32]) -> String {
    w.iter().map(|x| format!("{x:08X}")).collect::<Vec<_>>().join(" ")
}

impl DecodeError {
    /// Address of the offending instruction.
    pub fn address(&self) -> u64 {
        match self {
            DecodeError::Truncated { address, .. } | DecodeError::Invalid { address, .. } => *address,
        }
    }
}

/// Why an instruction could not be built.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EncodeError {
    #[error("{encoding} has no field {field:?}")]
    NoSuchField { encoding: Encoding, field: Field },
    #[error("value {value:#x} does not fit field {field:?} ({width} bits)")]
    TooWide { field: Field, value: u32, width: u8 },
    #[error("{name} does not exist on {target}")]
    WrongTarget { name: &'static str, target: &'static str },
}

/// Does a tuple of `count` (≥ 2) scalar registers starting at operand value `v` exist? SGPR tuples (aligned
/// down like LLVM does) end at s105, TTMP tuples at ttmp15; of the special registers only the even halves of
/// 64-bit pairs (flat_scratch, xnack_mask, vcc, exec) and null start a tuple; m0 never does.
fn scalar_tuple_exists(v: u32, count: u32) -> bool {
    let align = if count == 2 { 2 } else { 4 };
    match v {
        0..=101 => v / align * align + count <= 106,
        108..=123 => (v - 108) / align * align + count <= 16,
        125 => true,
        102 | 104 | 106 | 126 => true,
        _ => false,
    }
}

#[inline]
fn word(bytes: &[u8], i: usize) -> Option<u32> {
    let b = bytes.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Decodes one instruction from the start of `bytes` (`address` is used only for error reports).
pub fn decode(bytes: &[u8], address: u64, target: Target) -> Result<Inst, DecodeError> {
    let truncated = |need: usize| DecodeError::Truncated {
        address,
        need,
        have: bytes.len(),
    };
    let w0 = word(bytes, 0).ok_or_else(|| truncated(4))?;
    let invalid = |words: Vec<u32>, reason| DecodeError::Invalid { address, words, reason };
    let enc = Encoding::classify(w0).ok_or_else(|| invalid(vec![w0], "no encoding has this prefix"))?;
    let op = enc.op_field().get(&[w0]);
    let nd = enc.base_dwords();
    let mut words = [w0, 0, 0, 0];
    for (i, w) in words.iter_mut().enumerate().take(nd).skip(1) {
        *w = word(bytes, i).ok_or_else(|| truncated(nd * 4))?;
    }
    let info = Lookup::get()
        .find(target, enc, op)
        .ok_or_else(|| invalid(words[..nd].to_vec(), "opcode does not exist on this target"))?;
    if words[0] & info.fixed[0].0 != info.fixed[0].1 || words[1] & info.fixed[1].0 != info.fixed[1].1 {
        return Err(invalid(words[..nd].to_vec(), "reserved or unused bits are set"));
    }
    if info.name == "v_mfma_ld_scale_b32" {
        if let Some(inst) = scaled_mfma(bytes, [words[0], words[1]], target) {
            return Ok(inst);
        }
    }
    let mut len = nd;
    let mut form = Form::Plain;
    let mut has_literal = false;
    match enc {
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => {
            let src0 = w0 & 0x1FF;
            if src0 == 0xF9 && info.operand(Field::Src0).is_some() {
                if !info.flags.contains(OpFlags::SDWA) {
                    return Err(invalid(vec![w0], "no SDWA form of this opcode"));
                }
                form = Form::Sdwa;
                len += 1;
            } else if src0 == 0xFA && (info.operand(Field::Src0).is_some() || info.name == "v_nop") {
                // (v_nop has no src0, but LLVM still reads its src0 field as selecting the DPP form)
                if !info.flags.contains(OpFlags::DPP) {
                    return Err(invalid(vec![w0], "no DPP form of this opcode"));
                }
                form = Form::Dpp;
                len += 1;
            } else if (src0 == 255 && info.operand(Field::Src0).is_some()) || info.flags.contains(OpFlags::LITERAL) {
                has_literal = true;
                len += 1;
            }
        }
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc => {
            let uses = |f: Field, v: u32| {
                v == 255
                    && info
                        .operand(f)
                        .is_some_and(|o| matches!(o.kind, OperandKind::Src { .. }))
            };
            if uses(Field::Ssrc0, w0 & 0xFF) || uses(Field::Ssrc1, (w0 >> 8) & 0xFF) {
                has_literal = true;
                len += 1;
            }
        }
        Encoding::Sopk if info.flags.contains(OpFlags::LITERAL) => {
            has_literal = true;
            len += 1;
        }
        _ => {}
    }
    if len > nd {
        words[nd] = word(bytes, nd).ok_or_else(|| truncated(len * 4))?;
    }
    let ext_fixed = match form {
        Form::Sdwa => Some(info.ext_fixed[0]),
        Form::Dpp => Some(info.ext_fixed[1]),
        Form::Plain | Form::Scaled => None,
    };
    if let Some((m, v)) = ext_fixed {
        if words[nd] & m != v {
            return Err(invalid(
                words[..=nd].to_vec(),
                "reserved bits of the SDWA/DPP dword are set",
            ));
        }
        if form == Form::Sdwa {
            // selectors: BYTE_0..WORD_1, DWORD (0..=6); 7 does not exist
            let live = info.ext_live[0];
            if [8u32, 16, 24]
                .iter()
                .any(|&lo| (live >> lo) & 7 != 0 && (words[nd] >> lo) & 7 == 7)
            {
                return Err(invalid(words[..=nd].to_vec(), "SDWA selector 7 does not exist"));
            }
        }
    }
    let inst = Inst {
        info,
        target,
        form,
        words,
        len: len as u8,
        has_literal,
    };
    if let Some(reason) = inst.operand_error() {
        return Err(invalid(inst.words().to_vec(), reason));
    }
    Ok(inst)
}

/// The scaled MFMA that starts with the `v_mfma_ld_scale_b32` dwords `prefix`, if the next two dwords are an f8f6f4
/// MFMA with bit 11 set (what marks it as scaled; the MFMA alone has it clear) and otherwise valid.
fn scaled_mfma(bytes: &[u8], prefix: [u32; 2], target: Target) -> Option<Inst> {
    const SCALED: u32 = 1 << 11;
    let (m0, m1) = (word(bytes, 2)?, word(bytes, 3)?);
    // the prefix must be a valid v_mfma_ld_scale_b32 on its own
    if Encoding::classify(m0) != Some(Encoding::Vop3p) || m0 & SCALED == 0 || decode(&bytes[..8], 0, target).is_err() {
        return None;
    }
    let info = Lookup::get().find(target, Encoding::Vop3p, Encoding::Vop3p.op_field().get(&[m0]))?;
    if !info.name.contains("f8f6f4")
        || (m0 & !SCALED) & info.fixed[0].0 != info.fixed[0].1
        || m1 & info.fixed[1].0 != info.fixed[1].1
    {
        return None;
    }
    let inst = Inst {
        info,
        target,
        form: Form::Scaled,
        words: [prefix[0], prefix[1], m0, m1],
        len: 4,
        has_literal: false,
    };
    inst.operand_error().is_none().then_some(inst)
}

impl Inst {
    /// Operand values no register file or constant table has (LLVM refuses to decode these).
    fn operand_error(&self) -> Option<&'static str> {
        let enc = self.info.encoding;
        let wide = enc.base_dwords() == 2;
        for o in self.info.operands {
            let v = self.field(o.field);
            match o.kind {
                OperandKind::Src { count, .. } => {
                    let sdwa_dpp_src0 = o.field == Field::Src0 && self.form != Form::Plain;
                    if sdwa_dpp_src0 {
                        continue;
                    }
                    match v {
                        209..=234 => return Some("reserved source operand value"),
                        249 | 250 => return Some("SDWA/DPP marker used as an operand"),
                        255 if wide && !matches!(enc, Encoding::Mubuf | Encoding::Mtbuf) => {
                            return Some("literal constant in a 64-bit encoding")
                        }
                        255 if matches!(enc, Encoding::Mubuf | Encoding::Mtbuf) => {
                            return Some("literal constant as buffer offset")
                        }
                        256..=511 if v - 256 + count as u32 > 256 => return Some("VGPR range past v255"),
                        // (MFMA accumulators name a single SGPR when given one: LLVM has no such tuples either)
                        0..=127 if (2..=16).contains(&count) && !scalar_tuple_exists(v, count as u32) => {
                            return Some("no such scalar register tuple")
                        }
                        _ => {}
                    }
                }
                OperandKind::Reg { file: RegFile::S, .. }
                    if o.field == Field::Soffset
                        && matches!(enc, Encoding::Mubuf | Encoding::Mtbuf)
                        && matches!(v, 209..=234 | 249 | 250 | 255) =>
                {
                    return Some("buffer offset is neither a register nor an inline constant");
                }
                OperandKind::Reg {
                    file: RegFile::S,
                    count,
                } if count >= 2 => {
                    let base = match (enc, o.field) {
                        (Encoding::Smem, Field::Sbase) => v * 2,
                        (_, Field::Srsrc | Field::Ssamp) => v * 4,
                        _ => v,
                    };
                    if base <= 127 && !scalar_tuple_exists(base, count as u32) {
                        return Some("no such scalar register tuple");
                    }
                }
                OperandKind::Reg {
                    file: RegFile::V | RegFile::A,
                    ..
                } if enc == Encoding::Mimg => {}
                OperandKind::Reg {
                    file: RegFile::V | RegFile::A,
                    count,
                } if v + self.vector_regs(o.field, count as u32) > 256 => {
                    return Some("VGPR range past v255");
                }
                _ => {}
            }
        }
        if enc == Encoding::Global {
            let saddr = self.field(Field::Saddr);
            if saddr != 0x7f && !scalar_tuple_exists(saddr, 2) {
                return Some("no such scalar register pair for saddr");
            }
        }
        None
    }

    /// How many registers a vector register field spans in this instance, where the encoding decides it:
    /// a GLOBAL address is 32-bit when an SGPR base is given, a buffer's vaddr holds offset and/or index.
    pub fn vector_regs(&self, field: Field, table_count: u32) -> u32 {
        match (self.info.encoding, field) {
            (Encoding::Global, Field::Addr) if self.field(Field::Saddr) != 0x7f => 1,
            (Encoding::Mubuf | Encoding::Mtbuf, Field::Vaddr) => {
                let d = |f| {
                    self.def(f).map_or(0, |d| {
                        d.get(self.base_words()) & (self.info.live[d.dword as usize] >> d.lo)
                    })
                };
                (d(Field::Offen) + d(Field::Idxen)).max(1)
            }
            _ => table_count,
        }
    }

    /// The instruction's dwords.
    pub fn words(&self) -> &[u32] {
        &self.words[..self.len as usize]
    }

    /// The dwords the row's encoding describes, from the base encoding on: [`Inst::words`], but for a
    /// [`Form::Scaled`] MFMA its last two (the MFMA).
    pub fn base_words(&self) -> &[u32] {
        match self.form {
            Form::Scaled => &self.words[2..self.len as usize],
            _ => self.words(),
        }
    }

    /// The `v_mfma_ld_scale_b32` dwords of a [`Form::Scaled`] MFMA.
    pub fn scale_prefix(&self) -> Option<[u32; 2]> {
        (self.form == Form::Scaled).then_some([self.words[0], self.words[1]])
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.len as usize * 4
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.info.encoding
    }

    /// Little-endian bytes, exactly as decoded.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words().iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[inline]
    fn def(&self, field: Field) -> Option<&'static FieldDef> {
        self.info.encoding.field_def(field)
    }

    /// Value of a field of the base encoding (0 if the encoding has no such field).
    #[inline]
    pub fn field(&self, field: Field) -> u32 {
        self.def(field).map_or(0, |d| d.get(self.base_words()))
    }

    /// The 32-bit literal, when the instruction carries one.
    pub fn literal(&self) -> Option<u32> {
        self.has_literal.then(|| self.words[self.len as usize - 1])
    }

    /// The SDWA or DPP dword.
    pub fn ext(&self) -> Option<u32> {
        matches!(self.form, Form::Sdwa | Form::Dpp).then(|| self.words[self.info.encoding.base_dwords()])
    }

    /// An SDWA instruction's source `field` (`Src0` or `Vsrc1`): its register, src0's from the SDWA dword and
    /// vsrc1's from the base encoding, and whether it is a scalar source (the S0/S1 bit: an SGPR or constant
    /// number as SSRC encodes it, otherwise a VGPR number). `None` for other forms and fields.
    pub fn sdwa_source(&self, field: Field) -> Option<(u32, bool)> {
        let e = self.ext().filter(|_| self.form == Form::Sdwa)?;
        match field {
            Field::Src0 => Some((e & 0xff, e >> 23 & 1 == 1)),
            Field::Vsrc1 => Some((self.field(Field::Vsrc1), e >> 31 == 1)),
            _ => None,
        }
    }

    /// The first SGPR of the pair an SDWA compare writes: the one bits 8-14 name when bit 15 (SD) is set,
    /// otherwise VCC (106). `None` for other instructions.
    pub fn sdwa_sdst(&self) -> Option<u32> {
        let e = self
            .ext()
            .filter(|_| self.form == Form::Sdwa && self.info.encoding == Encoding::Vopc)?;
        Some(if e >> 15 & 1 == 1 { e >> 8 & 0x7f } else { 106 })
    }

    /// Starts building an instruction of `info` on `target`: all fields zero.
    pub fn build(info: &'static OpInfo, target: Target) -> Result<InstBuilder, EncodeError> {
        if !info.on(target) {
            return Err(EncodeError::WrongTarget {
                name: info.name,
                target: target.name(),
            });
        }
        let mut words = [0u32; 3];
        words[0] = info.encoding.base_word(info.op as u32);
        Ok(InstBuilder {
            info,
            target,
            words,
            literal: None,
            ext: None,
        })
    }
}

/// Encoder: sets fields by name, then produces an [`Inst`] (and its bytes).
#[derive(Clone, Debug)]
pub struct InstBuilder {
    info: &'static OpInfo,
    target: Target,
    words: [u32; 3],
    literal: Option<u32>,
    ext: Option<(Form, u32)>,
}

impl InstBuilder {
    /// Sets a field of the base encoding.
    pub fn set(mut self, field: Field, value: u32) -> Result<InstBuilder, EncodeError> {
        let enc = self.info.encoding;
        let d = enc
            .field_def(field)
            .ok_or(EncodeError::NoSuchField { encoding: enc, field })?;
        if d.width < 32 && value >> d.width != 0 {
            return Err(EncodeError::TooWide {
                field,
                value,
                width: d.width,
            });
        }
        d.set(&mut self.words, value);
        Ok(self)
    }

    /// Appends a literal dword.
    pub fn literal(mut self, value: u32) -> InstBuilder {
        self.literal = Some(value);
        self
    }

    /// Appends an SDWA or DPP dword.
    pub fn ext(mut self, form: Form, value: u32) -> InstBuilder {
        self.ext = Some((form, value));
        self
    }

    /// The instruction's bytes, checked by decoding them again.
    pub fn encode(self) -> Result<Vec<u8>, DecodeError> {
        let nd = self.info.encoding.base_dwords();
        let mut w: Vec<u32> = self.words[..nd].to_vec();
        if let Some((_, e)) = self.ext {
            w.push(e);
        }
        if let Some(l) = self.literal {
            w.push(l);
        }
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let inst = decode(&bytes, 0, self.target)?;
        if inst.size() != bytes.len() || !std::ptr::eq(inst.info, self.info) {
            return Err(DecodeError::Invalid {
                address: 0,
                words: w,
                reason: "fields do not form this instruction",
            });
        }
        Ok(bytes)
    }
}

/// Decodes a whole code range, one result per instruction; after an invalid dword, resumes 4 bytes later (as
/// llvm-objdump does).
pub fn decode_all(bytes: &[u8], base_address: u64, target: Target) -> Vec<(u64, Result<Inst, DecodeError>)> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < bytes.len() {
        let addr = base_address + off as u64;
        let r = decode(&bytes[off..], addr, target);
        let step = match &r {
            Ok(i) => i.size(),
            Err(_) => 4.min(bytes.len() - off),
        };
        out.push((addr, r));
        off += step;
    }
    out
}
