//! What code objects loaded whole into GPU memory say about their kernels.
//!
//! ROCm's loader copies a code object's loadable segments to the GPU; the first one starts at the file's first
//! byte, so the ELF header, the program headers, the metadata note and the dynamic symbol table are in memory
//! beside the code. A kernel's descriptor is the symbol `NAME.kd`; its function is the symbol `NAME`, and the
//! metadata describes its arguments. Code objects start on a page; every page of a range is looked at.

use std::collections::HashMap;

use isa_amdgpu::codeobj::metadata::{NOTE_OWNER_AMDGPU, NT_AMDGPU_METADATA};
use isa_amdgpu::codeobj::{KernelMetadata, Metadata};

const PAGE: usize = 4096;
const EM_AMDGPU: u16 = 224;
const PT_DYNAMIC: u32 = 2;
const PT_NOTE: u32 = 4;
const STT_FUNC: u8 = 2;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// What the code objects of one mapped range say: their kernels by descriptor address, and their functions
/// (name, offset from the range's start, size) for naming places in the code.
#[derive(Debug, Default)]
pub struct Symbols {
    pub kernels: HashMap<u64, KernelSymbol>,
    pub functions: Vec<(String, u64, u64)>,
}

/// A kernel of a code object in memory.
#[derive(Debug, Clone)]
pub struct KernelSymbol {
    pub name: String,
    /// Its entry in the code object's metadata, when the note is in memory and decodes.
    pub metadata: Option<KernelMetadata>,
}

/// The symbols of every code object found in `bytes` (mapped at `base`).
pub fn symbols(bytes: &[u8], base: u64) -> Symbols {
    let mut all = Symbols::default();
    for at in (0..bytes.len()).step_by(PAGE) {
        if bytes[at..].starts_with(b"\x7fELF") {
            if let Some(found) = code_object(&bytes[at..]) {
                let meta = metadata(&bytes[at..]);
                for (value, name) in found.kernels {
                    let metadata = meta
                        .as_ref()
                        .and_then(|m| m.kernel_by_symbol(&format!("{name}.kd")))
                        .cloned();
                    all.kernels
                        .insert(base + at as u64 + value, KernelSymbol { name, metadata });
                }
                all.functions.extend(
                    found
                        .functions
                        .into_iter()
                        .map(|(n, value, size)| (n, at as u64 + value, size)),
                );
            }
        }
    }
    all
}

/// The symbols of the code object at the start of `b`: kernels (descriptor address from the object's start,
/// name) and functions (name, address from the object's start, size).
struct Found {
    kernels: Vec<(u64, String)>,
    functions: Vec<(String, u64, u64)>,
}

/// The program header of type `kind` of the ELF at the start of `b`: (p_vaddr, p_filesz).
fn segment(b: &[u8], kind: u32) -> Option<(usize, usize)> {
    let (phoff, phentsize, phnum) = (
        u64_at(b, 32)? as usize,
        u16_at(b, 54)? as usize,
        u16_at(b, 56)? as usize,
    );
    (0..phnum).find_map(|i| {
        let p = phoff + i * phentsize;
        (u32_at(b, p)? == kind).then(|| Some((u64_at(b, p + 16)? as usize, u64_at(b, p + 32)? as usize)))?
    })
}

/// The metadata of the code object at the start of `b`, from its note segment.
fn metadata(b: &[u8]) -> Option<Metadata> {
    let (at, len) = segment(b, PT_NOTE)?;
    let notes = b.get(at..at.checked_add(len)?)?;
    let mut p = 0;
    while p + 12 <= notes.len() {
        let (namesz, descsz, kind) = (
            u32_at(notes, p)? as usize,
            u32_at(notes, p + 4)? as usize,
            u32_at(notes, p + 8)?,
        );
        let name_at = p + 12;
        let desc_at = name_at + namesz.div_ceil(4) * 4;
        let name = notes.get(name_at..name_at + namesz)?;
        let desc = notes.get(desc_at..desc_at + descsz)?;
        if kind == NT_AMDGPU_METADATA && name.strip_suffix(b"\0").unwrap_or(name) == NOTE_OWNER_AMDGPU {
            return Metadata::from_msgpack(desc).ok();
        }
        p = desc_at + descsz.div_ceil(4) * 4;
    }
    None
}

fn code_object(b: &[u8]) -> Option<Found> {
    // ELFCLASS64, little-endian, AMDGPU
    if b.get(4) != Some(&2) || b.get(5) != Some(&1) || u16_at(b, 18)? != EM_AMDGPU {
        return None;
    }
    let (dynamic, _) = segment(b, PT_DYNAMIC)?;
    let (mut symtab, mut strtab, mut strsz, mut hash) = (None, None, None, None);
    for i in 0..256 {
        let (tag, val) = (u64_at(b, dynamic + i * 16)?, u64_at(b, dynamic + i * 16 + 8)?);
        match tag {
            0 => break,
            DT_SYMTAB => symtab = Some(val as usize),
            DT_STRTAB => strtab = Some(val as usize),
            DT_STRSZ => strsz = Some(val as usize),
            DT_HASH => hash = Some(val as usize),
            _ => {}
        }
    }
    let (symtab, strtab) = (symtab?, strtab?);
    // the symbol count: the hash table's chain count, or the table up to the strings that follow it
    let count = match hash {
        Some(h) => u32_at(b, h + 4)? as usize,
        None if strtab > symtab => (strtab - symtab) / 24,
        None => return None,
    };
    let strings = b.get(strtab..strtab + strsz.unwrap_or(b.len() - strtab).min(b.len() - strtab))?;
    let mut found = Found {
        kernels: Vec::new(),
        functions: Vec::new(),
    };
    for i in 1..count.min(1 << 20) {
        let s = symtab + i * 24;
        let (name, info, value, size) = (
            u32_at(b, s)? as usize,
            *b.get(s + 4)?,
            u64_at(b, s + 8)?,
            u64_at(b, s + 16)?,
        );
        let Some(text) = strings
            .get(name..)
            .and_then(|t| t.split(|c| *c == 0).next())
            .and_then(|t| std::str::from_utf8(t).ok())
        else {
            continue;
        };
        if let Some(kernel) = text.strip_suffix(".kd") {
            found.kernels.push((value, kernel.to_string()));
        } else if info & 0xf == STT_FUNC {
            found.functions.push((text.to_string(), value, size));
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_of_a_code_object_in_memory_are_named_by_their_descriptors_with_metadata_and_functions() {
        let co = test_kernels::by_name("saxpy-gfx942.co").unwrap();
        let parsed = isa_amdgpu::codeobj::CodeObject::parse(co, "saxpy").unwrap();
        // as a loader lays it out: each loadable segment at its address, from the start of a page-aligned range
        let image_at = PAGE;
        let mut image = vec![0u8; 16 * PAGE];
        let (phoff, phnum) = (u64_at(co, 32).unwrap() as usize, u16_at(co, 56).unwrap() as usize);
        for i in 0..phnum {
            let p = phoff + i * 56;
            if u32_at(co, p).unwrap() == 1 {
                let (off, vaddr, filesz) = (
                    u64_at(co, p + 8).unwrap() as usize,
                    u64_at(co, p + 16).unwrap() as usize,
                    u64_at(co, p + 32).unwrap() as usize,
                );
                image[image_at + vaddr..image_at + vaddr + filesz].copy_from_slice(&co[off..off + filesz]);
            }
        }
        let found = symbols(&image, 0x7000_0000);
        let k = &parsed.kernels[0];
        let kd = parsed
            .symbols
            .iter()
            .find(|s| s.name == format!("{}.kd", k.name))
            .unwrap();
        let seen = found
            .kernels
            .get(&(0x7000_0000 + image_at as u64 + kd.address))
            .unwrap();
        assert_eq!(seen.name, k.name);
        // the metadata note is in memory too: the kernel's arguments as the file's own metadata lists them
        assert_eq!(
            seen.metadata.as_ref().map(|m| &m.args),
            parsed.kernel_metadata(k).map(|m| &m.args),
        );
        assert!(!seen.metadata.as_ref().unwrap().args.is_empty());
        // the kernel's function, at its place in the range
        let f = parsed.functions.iter().find(|f| f.name == k.name).unwrap();
        assert!(
            found
                .functions
                .contains(&(k.name.clone(), image_at as u64 + f.address, f.size)),
            "{:?}",
            found.functions
        );
        let none = symbols(&[0u8; PAGE], 0);
        assert!(none.kernels.is_empty() && none.functions.is_empty());
    }
}
