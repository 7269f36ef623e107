//! One AMDGPU ELF code object: header checks, sections, symbols, functions, kernels, metadata note, and
//! address → `symbol+offset` lookup.

use std::collections::HashMap;
use std::fmt;

use object::elf::{self as E, FileHeader32, FileHeader64};
use object::read::elf::{FileHeader, ProgramHeader, Rela, SectionHeader, SectionTable, Sym};
use object::{Endianness, LittleEndian as LE};
use serde::Serialize;

use super::kd::{KernelDescriptor, KERNEL_DESCRIPTOR_SIZE};
use super::metadata::{Metadata, NOTE_OWNER_AMDGPU, NT_AMDGPU_METADATA};
use super::target::TargetId;
use super::{CodeObjectError, SharedBytes};

/// `ELFOSABI_AMDGPU_HSA`.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `ELFOSABI_AMDGPU_PAL`.
pub const ELFOSABI_AMDGPU_PAL: u8 = 65;
/// `ELFOSABI_AMDGPU_MESA3D`.
pub const ELFOSABI_AMDGPU_MESA3D: u8 = 66;
/// `R_AMDGPU_REL64`: the relocation that fills `kernel_code_entry_byte_offset` in relocatable objects.
const R_AMDGPU_REL64: u32 = 5;
/// Offset of `kernel_code_entry_byte_offset` in a kernel descriptor.
const KD_ENTRY_OFFSET: u64 = 16;
/// Size of an ELF64 file header.
const ELF64_EHDR_SIZE: usize = 64;

/// True if `bytes` starts like an ELF file for `EM_AMDGPU` (either endianness/class is read for the check).
pub(super) fn is_amdgpu_elf(bytes: &[u8]) -> bool {
    let ident_ok = bytes.starts_with(b"\x7fELF");
    let machine = match bytes.get(5) {
        Some(2) => bytes.get(18..20).map(|b| u16::from_be_bytes([b[0], b[1]])),
        _ => bytes.get(18..20).map(|b| u16::from_le_bytes([b[0], b[1]])),
    };
    ident_ok && machine == Some(E::EM_AMDGPU)
}

/// For a host ELF: the file range (offset, size) of its `.hip_fatbin` section, if it has one with file data.
pub(super) fn host_fatbin_range(bytes: &[u8], file: &str) -> Result<Option<(u64, u64)>, CodeObjectError> {
    fn find<H: FileHeader<Endian = Endianness>>(
        bytes: &[u8],
        file: &str,
    ) -> Result<Option<(u64, u64)>, CodeObjectError> {
        let elf_err = |what, source| CodeObjectError::Elf {
            file: file.to_string(),
            what,
            source,
        };
        let header = H::parse(bytes).map_err(|e| elf_err("header", e))?;
        let endian = header.endian().map_err(|e| elf_err("header", e))?;
        let sections = header
            .sections(endian, bytes)
            .map_err(|e| elf_err("section headers", e))?;
        for sh in sections.iter() {
            if sections.section_name(endian, sh).ok() == Some(&b".hip_fatbin"[..]) {
                return Ok(sh.file_range(endian));
            }
        }
        Ok(None)
    }
    match bytes.get(4) {
        Some(1) => find::<FileHeader32<Endianness>>(bytes, file),
        Some(2) => find::<FileHeader64<Endianness>>(bytes, file),
        _ => Err(CodeObjectError::Malformed {
            file: file.to_string(),
            offset: 4,
            what: "ELF class is neither ELFCLASS32 nor ELFCLASS64".into(),
        }),
    }
}

/// One section header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    /// Section header index.
    pub index: usize,
    /// Name (lossy UTF-8).
    pub name: String,
    /// `sh_type` (`SHT_PROGBITS` = 1, `SHT_NOBITS` = 8, `SHT_NOTE` = 7, …).
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr` (0 in relocatable objects).
    pub address: u64,
    /// `sh_offset`.
    pub file_offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_addralign`.
    pub align: u64,
}

impl Section {
    /// True for `SHF_EXECINSTR` sections.
    pub fn is_executable(&self) -> bool {
        self.flags & u64::from(E::SHF_EXECINSTR) != 0
    }
    /// True for `SHF_ALLOC` sections.
    pub fn is_alloc(&self) -> bool {
        self.flags & u64::from(E::SHF_ALLOC) != 0
    }
    /// True if the section occupies bytes in the file (not `SHT_NOBITS`/`SHT_NULL`).
    pub fn has_file_data(&self) -> bool {
        self.sh_type != E::SHT_NOBITS && self.sh_type != E::SHT_NULL
    }
}

/// The code section (`.text`, or the first executable section if there is no `.text`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TextSection {
    /// Section header index.
    pub section_index: usize,
    /// Start address.
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
    /// Offset in the code object.
    pub file_offset: u64,
}

/// Symbol type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// `STT_FUNC`.
    Func,
    /// `STT_OBJECT`.
    Object,
    /// `STT_NOTYPE`.
    NoType,
    /// Any other `st_type` (section, file, TLS, …).
    Other(u8),
}

/// A named, defined symbol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    /// Name.
    pub name: String,
    /// Type.
    pub kind: SymbolKind,
    /// `st_bind` (0 local, 1 global, 2 weak).
    pub binding: u8,
    /// Section header index.
    pub section_index: usize,
    /// `st_value`: address (section offset in relocatable objects).
    pub address: u64,
    /// `st_size`.
    pub size: u64,
}

/// A function (`STT_FUNC` symbol) and its code.
#[derive(Debug, Clone, Serialize)]
pub struct Function {
    /// Name.
    pub name: String,
    /// Section header index.
    pub section_index: usize,
    /// Address of the first instruction (section offset in relocatable objects).
    pub address: u64,
    /// Size in bytes (`st_size`).
    pub size: u64,
    /// Offset of the first byte in the code object.
    pub file_offset: u64,
    /// True if the symbol is local (`STB_LOCAL`): helper functions; kernels are global.
    pub is_local: bool,
    #[serde(skip)]
    code: SharedBytes,
    /// The bytes after the function up to the next symbol of its section (or the section's end): alignment
    /// padding, which listings show as instructions the way llvm-objdump does.
    #[serde(skip)]
    padding: SharedBytes,
}

impl Function {
    /// The function's machine code (`size` bytes from `address`).
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// The padding after the function ([`Function::code`] ends where it starts).
    pub fn padding(&self) -> &[u8] {
        &self.padding
    }
    /// The code as a shared range (cheap to clone, keeps the file alive).
    pub fn code_shared(&self) -> &SharedBytes {
        &self.code
    }
}

/// A kernel: its descriptor (`NAME.kd`) and where its code starts.
#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    /// Kernel name (the descriptor symbol without `.kd`).
    pub name: String,
    /// The descriptor symbol (`NAME.kd`).
    pub descriptor_symbol: String,
    /// Address of the descriptor.
    pub descriptor_address: u64,
    /// Section header index of the descriptor.
    pub descriptor_section: usize,
    /// The parsed descriptor.
    pub descriptor: KernelDescriptor,
    /// Address of the first instruction: descriptor address + `kernel_code_entry_byte_offset` (in relocatable
    /// objects, resolved through the `R_AMDGPU_REL64` relocation; a section offset in the code section).
    pub entry_address: u64,
    /// Index into [`CodeObject::functions`] of the function starting at `entry_address`.
    pub function_index: Option<usize>,
    /// Index into the metadata's `kernels` of the entry whose `.symbol` is `descriptor_symbol`.
    pub metadata_index: Option<usize>,
}

/// An address expressed as `symbol+offset`; displays as `name` or `name+0x84` (llvm-objdump style).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolRef<'a> {
    /// Symbol name.
    pub name: &'a str,
    /// Bytes past the symbol's address.
    pub offset: u64,
}

impl fmt::Display for SymbolRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0 {
            f.write_str(self.name)
        } else {
            write!(f, "{}+{:#x}", self.name, self.offset)
        }
    }
}

/// A parsed AMDGPU code object.
#[derive(Debug, Clone, Serialize)]
pub struct CodeObject {
    /// Name used in messages (file name, or `file[bundle N entry M id]`).
    pub name: String,
    /// `e_type` (`ET_REL` = 1, `ET_DYN` = 3).
    pub elf_type: u16,
    /// `EI_OSABI` (64 = AMDGPU_HSA).
    pub os_abi: u8,
    /// `EI_ABIVERSION` (2 = v4, 3 = v5, 4 = v6).
    pub abi_version: u8,
    /// Code object version (3, 4, 5, 6).
    pub code_object_version: u32,
    /// `e_flags`.
    pub e_flags: u32,
    /// Target from `e_flags`.
    pub target: TargetId,
    /// All section headers.
    pub sections: Vec<Section>,
    /// The code section.
    pub text: Option<TextSection>,
    /// Named defined symbols (from `.symtab`, or `.dynsym` if there is no `.symtab`), in table order.
    pub symbols: Vec<Symbol>,
    /// `STT_FUNC` symbols with their code, in table order.
    pub functions: Vec<Function>,
    /// Kernels (`*.kd` `STT_OBJECT` symbols), in table order.
    pub kernels: Vec<Kernel>,
    /// The decoded `NT_AMDGPU_METADATA` note, if present.
    pub metadata: Option<Metadata>,
    #[serde(skip)]
    image: SharedBytes,
    /// Indices into `symbols` usable for `symbol+offset` lookup, sorted by (section, address).
    #[serde(skip)]
    by_address: Vec<usize>,
}

/// Read helpers that carry the code object's name for errors.
struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn malformed(&self, offset: u64, what: impl Into<String>) -> CodeObjectError {
        CodeObjectError::Malformed {
            file: self.file.to_string(),
            offset,
            what: what.into(),
        }
    }
    fn elf(&self, what: &'static str) -> impl Fn(object::read::Error) -> CodeObjectError + '_ {
        move |source| CodeObjectError::Elf {
            file: self.file.to_string(),
            what,
            source,
        }
    }
    fn kernel(&self, kernel: &str, what: impl Into<String>) -> CodeObjectError {
        CodeObjectError::Kernel {
            file: self.file.to_string(),
            kernel: kernel.to_string(),
            what: what.into(),
        }
    }
}

impl CodeObject {
    /// Parses one AMDGPU code object from `bytes` (copied). `name` is used in error messages.
    pub fn parse(bytes: &[u8], name: &str) -> Result<CodeObject, CodeObjectError> {
        Self::parse_shared(SharedBytes::copy_from_slice(bytes), name)
    }

    /// Parses one AMDGPU code object held in a shared buffer (no copy; functions' code are ranges of it).
    /// If the bytes are not 8-byte aligned (possible inside bundles), they are copied to an aligned buffer.
    pub fn parse_shared(image: SharedBytes, name: &str) -> Result<CodeObject, CodeObjectError> {
        let image = image.aligned(8);
        let cx = Ctx { file: name };
        let data: &[u8] = &image;
        let ident: [u8; 16] = data
            .get(..16)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| cx.malformed(0, format!("truncated ELF header ({} of 64 bytes)", data.len())))?;
        if !ident.starts_with(b"\x7fELF") {
            return Err(CodeObjectError::NotAmdgpu {
                file: name.into(),
                why: "no ELF magic".into(),
            });
        }
        if ident[4] != E::ELFCLASS64 {
            return Err(CodeObjectError::NotAmdgpu {
                file: name.into(),
                why: format!("ELF class {} (expected ELFCLASS64)", ident[4]),
            });
        }
        if ident[5] != E::ELFDATA2LSB {
            return Err(CodeObjectError::NotAmdgpu {
                file: name.into(),
                why: format!("ELF data encoding {} (expected little endian)", ident[5]),
            });
        }
        if data.len() < ELF64_EHDR_SIZE {
            return Err(cx.malformed(0, format!("truncated ELF header ({} of 64 bytes)", data.len())));
        }
        let header = FileHeader64::<LE>::parse(data).map_err(cx.elf("header"))?;
        let machine = header.e_machine(LE);
        if machine != E::EM_AMDGPU {
            return Err(CodeObjectError::NotAmdgpu {
                file: name.into(),
                why: format!("e_machine {machine} (expected EM_AMDGPU = 224)"),
            });
        }
        let os_abi = ident[7];
        let abi_version = ident[8];
        if os_abi != ELFOSABI_AMDGPU_HSA {
            let what = match os_abi {
                ELFOSABI_AMDGPU_PAL => "AMDGPU_PAL".to_string(),
                ELFOSABI_AMDGPU_MESA3D => "AMDGPU_MESA3D".to_string(),
                other => other.to_string(),
            };
            return Err(CodeObjectError::Unsupported {
                file: name.into(),
                why: format!("OS ABI {what} (only AMDGPU_HSA = 64 is supported)"),
            });
        }
        let code_object_version = match abi_version {
            0 => {
                return Err(CodeObjectError::Unsupported {
                    file: name.into(),
                    why: "code object v2 (ABI version 0) is not supported".into(),
                })
            }
            v @ 1..=4 => u32::from(v) + 2,
            v => {
                return Err(CodeObjectError::Unsupported {
                    file: name.into(),
                    why: format!("unknown AMDGPU_HSA ABI version {v} (known: 1..4 = code object v3..v6)"),
                })
            }
        };
        let e_flags = header.e_flags(LE);
        let elf_type = header.e_type(LE);
        let target = TargetId::from_e_flags(e_flags, code_object_version);
        if (e_flags & 0xff) < 0x20 {
            return Err(CodeObjectError::Unsupported {
                file: name.into(),
                why: format!(
                    "e_flags {e_flags:#x}: mach {:#x} is not an AMDGCN processor",
                    e_flags & 0xff
                ),
            });
        }

        let table = header.sections(LE, data).map_err(cx.elf("section headers"))?;
        let sections = read_sections(&table);
        let text = sections
            .iter()
            .find(|s| s.name == ".text" && s.has_file_data())
            .or_else(|| sections.iter().find(|s| s.is_executable() && s.has_file_data()))
            .map(|s| TextSection {
                section_index: s.index,
                address: s.address,
                size: s.size,
                file_offset: s.file_offset,
            });

        let is_rel = elf_type == E::ET_REL;
        let symtab = {
            let st = table.symbols(LE, data, E::SHT_SYMTAB).map_err(cx.elf("symbol table"))?;
            if st.is_empty() {
                table
                    .symbols(LE, data, E::SHT_DYNSYM)
                    .map_err(cx.elf("dynamic symbol table"))?
            } else {
                st
            }
        };
        let mut symbols = Vec::new();
        // Symbol table index → index in `symbols`, for relocations.
        let mut by_table_index: HashMap<usize, usize> = HashMap::new();
        for (idx, sym) in symtab.enumerate() {
            let Ok(Some(section)) = symtab.symbol_section(LE, sym, idx) else {
                continue;
            };
            let raw_name = symtab.symbol_name(LE, sym).map_err(cx.elf("symbol name"))?;
            if raw_name.is_empty() {
                continue;
            }
            let kind = match sym.st_type() {
                E::STT_FUNC => SymbolKind::Func,
                E::STT_OBJECT => SymbolKind::Object,
                E::STT_NOTYPE => SymbolKind::NoType,
                other => SymbolKind::Other(other),
            };
            by_table_index.insert(idx.0, symbols.len());
            symbols.push(Symbol {
                name: String::from_utf8_lossy(raw_name).into_owned(),
                kind,
                binding: sym.st_bind(),
                section_index: section.0,
                address: sym.st_value(LE),
                size: sym.st_size(LE),
            });
        }

        // Where a symbol's bytes are in the file.
        let locate = |s: &Symbol| -> Result<u64, String> {
            let sec = sections
                .get(s.section_index)
                .ok_or_else(|| format!("section index {} out of range", s.section_index))?;
            if !sec.has_file_data() {
                return Err(format!("in section {} which has no file data", sec.name));
            }
            let rel = if is_rel {
                Some(s.address)
            } else {
                s.address.checked_sub(sec.address)
            };
            let rel = rel
                .filter(|r| r.checked_add(s.size).is_some_and(|end| end <= sec.size))
                .ok_or_else(|| {
                    format!(
                        "address {:#x} size {:#x} outside section {} ({:#x}..{:#x})",
                        s.address,
                        s.size,
                        sec.name,
                        sec.address,
                        sec.address.saturating_add(sec.size)
                    )
                })?;
            let off = sec
                .file_offset
                .checked_add(rel)
                .ok_or_else(|| "file offset overflows".to_string())?;
            let in_file = off.checked_add(s.size).is_some_and(|end| end <= image.len() as u64);
            if !in_file {
                return Err(format!(
                    "bytes {off:#x}+{:#x} past end of file (len {:#x})",
                    s.size,
                    image.len()
                ));
            }
            Ok(off)
        };

        // where each section's symbols start, sorted: a function's padding runs to the next one
        let mut starts: Vec<(usize, u64)> = symbols
            .iter()
            .filter(|o| matches!(o.kind, SymbolKind::Func | SymbolKind::Object | SymbolKind::NoType))
            .map(|o| (o.section_index, o.address))
            .collect();
        starts.sort_unstable();
        let mut functions = Vec::new();
        for s in symbols.iter().filter(|s| s.kind == SymbolKind::Func) {
            let off = locate(s).map_err(|w| cx.malformed(0, format!("function {}: {w}", s.name)))?;
            let code = image.slice_u64(off, s.size).unwrap_or_default();
            // padding: up to the next symbol placed after the function's end in its section, else the section end
            let sec = &sections[s.section_index];
            let base = if is_rel { 0 } else { sec.address };
            let end = s.address.saturating_add(s.size);
            let from = (s.section_index, end.max(s.address.saturating_add(1)));
            let next = starts
                .get(starts.partition_point(|k| *k < from))
                .filter(|(section, _)| *section == s.section_index)
                .map_or(u64::MAX, |&(_, a)| a)
                .min(base.saturating_add(sec.size));
            let padding = image
                .slice_u64(off.saturating_add(s.size), next.saturating_sub(end))
                .unwrap_or_default();
            functions.push(Function {
                name: s.name.clone(),
                section_index: s.section_index,
                address: s.address,
                size: s.size,
                file_offset: off,
                is_local: s.binding == E::STB_LOCAL,
                code,
                padding,
            });
        }

        let metadata = read_metadata(header, &table, data, &cx)?;
        let meta_by_symbol: HashMap<&str, usize> = match &metadata {
            Some(m) => m
                .kernels
                .iter()
                .enumerate()
                .map(|(i, k)| (k.symbol.as_str(), i))
                .collect(),
            None => HashMap::new(),
        };
        let func_by_addr: HashMap<(usize, u64), usize> = functions
            .iter()
            .enumerate()
            .map(|(i, f)| ((f.section_index, f.address), i))
            .collect();
        let rel64 = if is_rel {
            kd_relocations(&table, data, &cx)?
        } else {
            HashMap::new()
        };
        let family = target.family();

        let mut kernels = Vec::new();
        for s in &symbols {
            let Some(kname) = s.name.strip_suffix(".kd") else {
                continue;
            };
            if s.kind != SymbolKind::Object {
                continue;
            }
            if s.size < KERNEL_DESCRIPTOR_SIZE as u64 {
                return Err(cx.kernel(&s.name, format!("descriptor symbol size {} (expected 64)", s.size)));
            }
            let desc_sym = Symbol {
                size: KERNEL_DESCRIPTOR_SIZE as u64,
                ..s.clone()
            };
            let off = locate(&desc_sym).map_err(|w| cx.kernel(&s.name, format!("descriptor {w}")))?;
            let bytes = image.slice_u64(off, KERNEL_DESCRIPTOR_SIZE as u64).unwrap_or_default();
            let descriptor = KernelDescriptor::parse(&bytes, family)
                .ok_or_else(|| cx.kernel(&s.name, format!("truncated descriptor at {off:#x}")))?;
            let (entry_section, entry_address) = if is_rel {
                match rel64.get(&(s.section_index, s.address.wrapping_add(KD_ENTRY_OFFSET))) {
                    Some(&(target_sym, addend)) => {
                        let t = by_table_index
                            .get(&target_sym)
                            .and_then(|&i| symbols.get(i))
                            .ok_or_else(|| cx.kernel(&s.name, "entry relocation names an undefined symbol"))?;
                        // S + A - P with P = kd + 16 and the kd at "address" kd: entry = S + A - 16.
                        let e = i128::from(t.address) + i128::from(addend) - i128::from(KD_ENTRY_OFFSET);
                        let e = u64::try_from(e)
                            .map_err(|_| cx.kernel(&s.name, format!("entry relocation resolves to {e}")))?;
                        (t.section_index, e)
                    }
                    None => (
                        text.map_or(0, |t| t.section_index),
                        descriptor.kernel_code_entry_byte_offset as u64,
                    ),
                }
            } else {
                let e = i128::from(s.address) + i128::from(descriptor.kernel_code_entry_byte_offset);
                let e = u64::try_from(e).map_err(|_| {
                    cx.kernel(
                        &s.name,
                        format!(
                            "entry {:#x} + {} is not a valid address",
                            s.address, descriptor.kernel_code_entry_byte_offset
                        ),
                    )
                })?;
                let sec = sections
                    .iter()
                    .find(|x| x.is_executable() && e >= x.address && e - x.address < x.size)
                    .map_or(text.map_or(0, |t| t.section_index), |x| x.index);
                (sec, e)
            };
            kernels.push(Kernel {
                name: kname.to_string(),
                descriptor_symbol: s.name.clone(),
                descriptor_address: s.address,
                descriptor_section: s.section_index,
                descriptor,
                entry_address,
                function_index: func_by_addr.get(&(entry_section, entry_address)).copied(),
                metadata_index: meta_by_symbol.get(s.name.as_str()).copied(),
            });
        }

        let mut by_address: Vec<usize> = (0..symbols.len())
            .filter(|&i| {
                matches!(
                    symbols[i].kind,
                    SymbolKind::Func | SymbolKind::Object | SymbolKind::NoType
                )
            })
            .collect();
        // Sort by (section, address); among equal addresses functions first, then table order.
        by_address.sort_by_key(|&i| {
            let s = &symbols[i];
            (s.section_index, s.address, s.kind != SymbolKind::Func, i)
        });

        Ok(CodeObject {
            name: name.to_string(),
            elf_type,
            os_abi,
            abi_version,
            code_object_version,
            e_flags,
            target,
            sections,
            text,
            symbols,
            functions,
            kernels,
            metadata,
            image,
            by_address,
        })
    }

    /// The whole code object's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.image
    }

    /// The whole code object as a shared range.
    pub fn bytes_shared(&self) -> &SharedBytes {
        &self.image
    }

    /// The bytes of the code section, if any.
    pub fn text_bytes(&self) -> &[u8] {
        self.text
            .and_then(|t| {
                let start = usize::try_from(t.file_offset).ok()?;
                let end = start.checked_add(usize::try_from(t.size).ok()?)?;
                self.image.get(start..end)
            })
            .unwrap_or(&[])
    }

    /// The code section's bytes before its first symbol, with their address: llvm-objdump lists them as
    /// instructions under the section's name (`<.text>:`). Empty when a symbol starts the section.
    pub fn text_before_first_symbol(&self) -> (u64, &[u8]) {
        let Some(t) = self.text else { return (0, &[]) };
        let base = if self.elf_type == E::ET_REL { 0 } else { t.address };
        let first = self
            .symbols
            .iter()
            .filter(|s| s.section_index == t.section_index)
            .filter(|s| matches!(s.kind, SymbolKind::Func | SymbolKind::Object | SymbolKind::NoType))
            .map(|s| s.address)
            .min()
            .unwrap_or(base.saturating_add(t.size));
        let len = first.saturating_sub(base).min(t.size) as usize;
        (base, &self.text_bytes()[..len])
    }

    /// The section's file bytes (empty for `SHT_NOBITS` or out-of-range headers).
    pub fn section_bytes(&self, section: &Section) -> &[u8] {
        if !section.has_file_data() {
            return &[];
        }
        usize::try_from(section.file_offset)
            .ok()
            .zip(usize::try_from(section.size).ok())
            .and_then(|(s, n)| self.image.get(s..s.checked_add(n)?))
            .unwrap_or(&[])
    }

    /// The kernel's metadata entry, if the note has one for its descriptor symbol.
    pub fn kernel_metadata(&self, kernel: &Kernel) -> Option<&super::KernelMetadata> {
        self.metadata.as_ref()?.kernels.get(kernel.metadata_index?)
    }

    /// The function at the kernel's entry, if there is a symbol for it.
    pub fn kernel_function(&self, kernel: &Kernel) -> Option<&Function> {
        self.functions.get(kernel.function_index?)
    }

    /// Looks a kernel up by name (without `.kd`).
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Looks a function up by name.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// Index of the section an address belongs to: the allocated section containing it (in relocatable
    /// objects, where every section starts at 0, the code section).
    fn section_of(&self, addr: u64) -> Option<usize> {
        if self.elf_type == E::ET_REL {
            return self.text.map(|t| t.section_index);
        }
        self.sections
            .iter()
            .find(|s| s.is_alloc() && s.size > 0 && addr >= s.address && addr - s.address < s.size)
            .map(|s| s.index)
            .or_else(|| self.text.map(|t| t.section_index))
    }

    /// Expresses `addr` as `symbol+offset` using the nearest symbol at or below it in the same section
    /// (functions preferred over other symbols at the same address), like llvm-objdump's `<vadd+0x84>`.
    pub fn symbolize(&self, addr: u64) -> Option<SymbolRef<'_>> {
        let section = self.section_of(addr)?;
        // First entry with (section, address) > (section, addr), then step back.
        let pos = self.by_address.partition_point(|&i| {
            let s = &self.symbols[i];
            (s.section_index, s.address) <= (section, addr)
        });
        let mut best: Option<&Symbol> = None;
        for &i in self.by_address[..pos].iter().rev() {
            let s = &self.symbols[i];
            if s.section_index != section {
                break;
            }
            match best {
                Some(b) if b.address != s.address => break,
                // Sorted with functions first among equal addresses: keep the earliest seen in that order.
                _ => best = Some(s),
            }
        }
        let s = best?;
        Some(SymbolRef {
            name: &s.name,
            offset: addr - s.address,
        })
    }
}

fn read_sections(table: &SectionTable<'_, FileHeader64<LE>>) -> Vec<Section> {
    table
        .enumerate()
        .map(|(idx, sh)| Section {
            index: idx.0,
            name: table
                .section_name(LE, sh)
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default(),
            sh_type: sh.sh_type(LE),
            flags: sh.sh_flags(LE),
            address: sh.sh_addr(LE),
            file_offset: sh.sh_offset(LE),
            size: sh.sh_size(LE),
            align: sh.sh_addralign(LE),
        })
        .collect()
}

/// Finds and decodes the `NT_AMDGPU_METADATA` note (note sections, or `PT_NOTE` segments if the object has
/// no section headers).
fn read_metadata(
    header: &FileHeader64<LE>,
    table: &SectionTable<'_, FileHeader64<LE>>,
    data: &[u8],
    cx: &Ctx<'_>,
) -> Result<Option<Metadata>, CodeObjectError> {
    let decode = |desc: &[u8]| {
        Metadata::from_msgpack(desc)
            .map(Some)
            .map_err(|what| CodeObjectError::Metadata {
                file: cx.file.to_string(),
                what,
            })
    };
    let is_md = |name: &[u8], ty: u32| name == NOTE_OWNER_AMDGPU && ty == NT_AMDGPU_METADATA;
    if !table.is_empty() {
        for sh in table.iter() {
            let Some(mut notes) = sh.notes(LE, data).map_err(cx.elf("note section"))? else {
                continue;
            };
            while let Some(note) = notes.next().map_err(cx.elf("note"))? {
                if is_md(note.name(), note.n_type(LE)) {
                    return decode(note.desc());
                }
            }
        }
        return Ok(None);
    }
    for ph in header.program_headers(LE, data).map_err(cx.elf("program headers"))? {
        let Some(mut notes) = ph.notes(LE, data).map_err(cx.elf("note segment"))? else {
            continue;
        };
        while let Some(note) = notes.next().map_err(cx.elf("note"))? {
            if is_md(note.name(), note.n_type(LE)) {
                return decode(note.desc());
            }
        }
    }
    Ok(None)
}

/// (target section, offset) → (symbol table index, addend).
type RelocMap = HashMap<(usize, u64), (usize, i64)>;

/// In a relocatable object: `R_AMDGPU_REL64` relocations, keyed by (target section, offset), giving
/// (symbol table index, addend).
fn kd_relocations(
    table: &SectionTable<'_, FileHeader64<LE>>,
    data: &[u8],
    cx: &Ctx<'_>,
) -> Result<RelocMap, CodeObjectError> {
    let mut map = HashMap::new();
    for sh in table.iter() {
        let Some((relas, _symtab)) = sh.rela(LE, data).map_err(cx.elf("relocation section"))? else {
            continue;
        };
        let target = sh.sh_info(LE) as usize;
        for r in relas {
            if r.r_type(LE, false) == R_AMDGPU_REL64 {
                map.insert((target, r.r_offset(LE)), (r.r_sym(LE, false) as usize, r.r_addend(LE)));
            }
        }
    }
    Ok(map)
}
