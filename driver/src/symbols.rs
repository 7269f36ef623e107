//! Kernel names of code objects loaded whole into GPU memory.
//!
//! ROCm's loader copies a code object's loadable segments to the GPU; the first one starts at the file's first
//! byte, so the ELF header, the program headers and the dynamic symbol table are in memory beside the code. A
//! kernel's descriptor is the symbol `NAME.kd`. Code objects start on a page; every page of a range is looked at.

use std::collections::HashMap;

const PAGE: usize = 4096;
const EM_AMDGPU: u16 = 224;
const PT_DYNAMIC: u32 = 2;
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

/// Kernel names by descriptor address, for every code object found in `bytes` (mapped at `base`).
pub fn kernel_names(bytes: &[u8], base: u64) -> HashMap<u64, String> {
    let mut names = HashMap::new();
    for at in (0..bytes.len()).step_by(PAGE) {
        if bytes[at..].starts_with(b"\x7fELF") {
            if let Some(found) = code_object(&bytes[at..]) {
                names.extend(found.into_iter().map(|(v, n)| (base + at as u64 + v, n)));
            }
        }
    }
    names
}

/// (address from the object's start, kernel name) of the kernels of the code object at the start of `b`.
fn code_object(b: &[u8]) -> Option<Vec<(u64, String)>> {
    // ELFCLASS64, little-endian, AMDGPU
    if b.get(4) != Some(&2) || b.get(5) != Some(&1) || u16_at(b, 18)? != EM_AMDGPU {
        return None;
    }
    let (phoff, phentsize, phnum) = (
        u64_at(b, 32)? as usize,
        u16_at(b, 54)? as usize,
        u16_at(b, 56)? as usize,
    );
    let dynamic = (0..phnum).find_map(|i| {
        let p = phoff + i * phentsize;
        (u32_at(b, p)? == PT_DYNAMIC).then(|| u64_at(b, p + 16)) // p_vaddr
    })?? as usize;
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
    let mut out = Vec::new();
    for i in 1..count.min(1 << 20) {
        let s = symtab + i * 24;
        let (name, value) = (u32_at(b, s)? as usize, u64_at(b, s + 8)?);
        let Some(text) = strings.get(name..).and_then(|t| t.split(|c| *c == 0).next()) else {
            continue;
        };
        if let Some(kernel) = std::str::from_utf8(text).ok().and_then(|t| t.strip_suffix(".kd")) {
            out.push((value, kernel.to_string()));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_of_a_code_object_in_memory_are_named_by_their_descriptors() {
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
        let names = kernel_names(&image, 0x7000_0000);
        let k = &parsed.kernels[0];
        let kd = parsed
            .symbols
            .iter()
            .find(|s| s.name == format!("{}.kd", k.name))
            .unwrap();
        assert_eq!(
            names.get(&(0x7000_0000 + image_at as u64 + kd.address)),
            Some(&k.name),
            "{names:?}"
        );
        assert!(kernel_names(&[0u8; PAGE], 0).is_empty());
    }
}
