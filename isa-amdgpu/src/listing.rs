//! Listings in llvm-objdump's layout: one line per instruction with address and encoding comment.

use crate::inst::{decode_all, DecodeError, Inst};
use crate::table::Target;

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
