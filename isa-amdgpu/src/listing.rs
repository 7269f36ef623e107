//! Listings in llvm-objdump's layout: one line per instruction with address and encoding comment.

use crate::codeobj::{CodeObject, Function};
use crate::disasm;
use crate::inst::{decode_all, DecodeError, Inst};
use crate::table::{OperandKind, Target};

/// Width to which llvm-objdump pads the instruction text (after the leading tab) before the `//` comment.
const COMMENT_COLUMN: usize = 59;

/// The encoding as llvm-objdump prints it: dwords in upper-case hex, separated by spaces.
pub fn encoding_hex(words: &[u32]) -> String {
    words.iter().map(|w| format!("{w:08X}")).collect::<Vec<_>>().join(" ")
}

/// One listing line: `\t<text><pad>// <addr>: <encoding>`.
pub fn line(text: &str, address: u64, words: &[u32]) -> String {
    let used = text.len();
    let pad = COMMENT_COLUMN.saturating_sub(used);
    format!(
        "\t{text}{:pad$}// {address:012X}: {}",
        "",
        encoding_hex(words),
        pad = pad
    )
}

/// A decoded function body: per instruction its address, decode result and raw dwords.
pub struct Listed {
    pub address: u64,
    pub inst: Result<Inst, DecodeError>,
    pub words: Vec<u32>,
}

/// Decodes `code` (starting at `address`) into listing entries.
pub fn list(code: &[u8], address: u64, target: Target) -> Vec<Listed> {
    decode_all(code, address, target)
        .into_iter()
        .map(|(a, r)| {
            let words = match &r {
                Ok(i) => i.words().to_vec(),
                Err(_) => {
                    let off = (a - address) as usize;
                    let b = &code[off..(off + 4).min(code.len())];
                    let mut w = [0u8; 4];
                    w[..b.len()].copy_from_slice(b);
                    vec![u32::from_le_bytes(w)]
                }
            };
            Listed {
                address: a,
                inst: r,
                words,
            }
        })
        .collect()
}

/// The lines llvm-objdump lists for function `f` of `co` (after its `name:` line): the function, then the
/// padding up to the next symbol (see [`code`]).
pub fn function(co: &CodeObject, f: &Function, target: Target) -> Vec<String> {
    code(co, &[f.code(), f.padding()].concat(), f.address, target)
}

/// The lines llvm-objdump lists for the code section's bytes before its first symbol, which it prints under
/// the section's name (`<.text>:`); `None` when a symbol starts the section.
pub fn before_first_symbol(co: &CodeObject, target: Target) -> Option<(String, Vec<String>)> {
    let (address, bytes) = co.text_before_first_symbol();
    if bytes.is_empty() {
        return None;
    }
    let section = &co.sections[co.text?.section_index].name;
    Some((section.clone(), code(co, bytes, address, target)))
}

/// The lines llvm-objdump lists for `bytes` at `address`: a run of 8 or more zero bytes prints as `...` and is
/// skipped in whole dwords (llvm-objdump's rule without `--disassemble-zeroes`), bytes that do not decode
/// print as `.long`, and a direct branch names its target as `<symbol+offset>`.
pub fn code(co: &CodeObject, bytes: &[u8], address: u64, target: Target) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_to = address;
    for item in list(bytes, address, target) {
        if item.address < skip_to {
            continue;
        }
        let zeros = bytes[(item.address - address) as usize..]
            .iter()
            .take_while(|b| **b == 0)
            .count();
        if zeros >= 8 {
            out.push("\t\t...".to_string());
            skip_to = item.address + (zeros & !3) as u64;
            continue;
        }
        out.push(match &item.inst {
            Ok(inst) => {
                let mut l = line(&disasm::text(inst), item.address, &item.words);
                if let Some(t) = branch_target(inst, item.address) {
                    if let Some(s) = co.symbolize(t) {
                        l.push_str(&format!(" <{s}>"));
                    }
                }
                l
            }
            Err(_) => line(&format!(".long 0x{:08x}", item.words[0]), item.address, &item.words),
        });
    }
    out
}

/// The target address of a direct branch.
fn branch_target(inst: &Inst, address: u64) -> Option<u64> {
    let o = inst.info.operands.iter().find(|o| o.kind == OperandKind::Label)?;
    let simm = inst.field(o.field) as u16 as i16 as i64;
    Some((address as i64 + 4 + simm * 4) as u64)
}
