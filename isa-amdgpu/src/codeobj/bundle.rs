//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`), as found in `.hip_fatbin` sections and `.hipfb` files.
//!
//! Format (all integers u64 little endian): the 24-byte magic, the entry count, then per entry its offset
//! (from the bundle's first byte), size, id length and id bytes. Entry ids are `<kind>-<triple>[-<target id>]`:
//! `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`, `host-x86_64-unknown-linux-gnu`.
//!
//! A buffer may hold many bundles back to back (librocsparse's `.hip_fatbin` has 111), each aligned (4096 in
//! practice) and separated by padding: after a bundle's last byte the next magic is searched for.
//! Compressed bundles (`CCOB`) are recognised and rejected with [`CodeObjectError::CompressedBundle`].

use serde::Serialize;

use super::target::TargetId;
use super::CodeObjectError;

/// Magic at the start of an uncompressed offload bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic at the start of a compressed offload bundle.
pub const COMPRESSED_BUNDLE_MAGIC: &[u8; 4] = b"CCOB";

/// One offload bundle in a buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bundle {
    /// Position of this bundle among the bundles of the buffer (0-based).
    pub index: usize,
    /// Offset of the bundle's magic in the buffer.
    pub offset: u64,
    /// Bytes from the magic to the end of the header or of the last entry, whichever is later.
    pub len: u64,
    /// The entries, in header order.
    pub entries: Vec<BundleEntry>,
}

/// One entry of an offload bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundleEntry {
    /// Position in the bundle's header (0-based).
    pub index: usize,
    /// The full id (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`).
    pub id: String,
    /// Offset from the bundle's start, as stored.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// Offset in the buffer passed to [`parse_bundles`] (bundle offset + entry offset); validated to lie,
    /// with `size`, inside that buffer.
    pub buffer_offset: u64,
    /// Offload kind: `hip`, `hipv4`, `openmp`, `host`, …
    pub kind: String,
    /// Target triple (`amdgcn-amd-amdhsa-`, `x86_64-unknown-linux-gnu`).
    pub triple: String,
    /// Target id (`gfx90a:xnack-`) when the id names a GPU processor.
    pub target_id: Option<String>,
}

impl BundleEntry {
    /// True if this entry holds AMDGPU device code (triple starting with `amdgcn`).
    pub fn is_amdgpu(&self) -> bool {
        self.triple.starts_with("amdgcn")
    }

    /// The parsed target id, if the id has one and it parses.
    pub fn target(&self) -> Option<TargetId> {
        TargetId::parse(self.target_id.as_deref()?).ok()
    }

    /// The entry's bytes within `buffer` (the buffer given to [`parse_bundles`]); empty if out of range.
    pub fn bytes<'a>(&self, buffer: &'a [u8]) -> &'a [u8] {
        let start = usize::try_from(self.buffer_offset).unwrap_or(usize::MAX);
        let end = usize::try_from(self.size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .unwrap_or(usize::MAX);
        buffer.get(start..end).unwrap_or(&[])
    }
}

/// Splits an entry id into (kind, triple, target id), following clang-offload-bundler: the target id starts
/// at the last `-`-separated component before the first `:` if that component names a processor (`gfx…`).
pub fn split_entry_id(id: &str) -> (String, String, Option<String>) {
    let before_features = id.split(':').next().unwrap_or("");
    let (kind, rest) = match before_features.split_once('-') {
        Some((k, r)) => (k, r),
        None => (before_features, ""),
    };
    if let Some(dash) = before_features.rfind('-') {
        let last = before_features.get(dash + 1..).unwrap_or("");
        if last.starts_with("gfx") && dash >= kind.len() {
            let triple = before_features.get(kind.len() + 1..dash).unwrap_or("");
            let target = id.get(dash + 1..).unwrap_or("");
            return (kind.to_string(), triple.to_string(), Some(target.to_string()));
        }
    }
    let triple = id.get(kind.len().saturating_add(1)..).unwrap_or(rest);
    (kind.to_string(), triple.to_string(), None)
}

fn read_u64(buf: &[u8], at: usize) -> Option<u64> {
    let b = buf.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// Returns the offset of the next bundle magic (plain or compressed) at or after `from`, if any.
fn find_next_magic(buf: &[u8], from: usize) -> Option<usize> {
    let mut pos = from;
    loop {
        let rest = buf.get(pos..)?;
        let step = rest.iter().position(|&b| b == b'_' || b == b'C')?;
        pos = pos.checked_add(step)?;
        let here = buf.get(pos..)?;
        if here.starts_with(BUNDLE_MAGIC) || here.starts_with(COMPRESSED_BUNDLE_MAGIC) {
            return Some(pos);
        }
        pos = pos.checked_add(1)?;
    }
}

/// True if `bytes` starts with an offload bundle magic (plain or compressed).
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(COMPRESSED_BUNDLE_MAGIC)
}

/// Parses one bundle whose magic is at `start`; returns it and the offset just past its last byte.
fn parse_one(buf: &[u8], start: usize, index: usize, file: &str) -> Result<(Bundle, usize), CodeObjectError> {
    let err = |offset: usize, what: String| CodeObjectError::Bundle {
        file: file.to_string(),
        bundle: index,
        offset: offset as u64,
        what,
    };
    let bundle = buf.get(start..).unwrap_or(&[]);
    if bundle.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        return Err(CodeObjectError::CompressedBundle {
            file: file.to_string(),
            offset: start as u64,
        });
    }
    if !bundle.starts_with(BUNDLE_MAGIC) {
        return Err(err(start, "missing __CLANG_OFFLOAD_BUNDLE__ magic".into()));
    }
    let blen = bundle.len();
    let count = read_u64(bundle, 24).ok_or_else(|| err(start + 24, "truncated entry count".into()))?;
    // Every entry header takes at least 24 bytes: reject absurd counts before allocating anything.
    let max_entries = (blen.saturating_sub(32) / 24) as u64;
    if count > max_entries {
        return Err(err(
            start + 24,
            format!("entry count {count} cannot fit in {blen} bytes"),
        ));
    }
    let mut entries = Vec::with_capacity(count as usize);
    let mut pos = 32usize;
    let mut end = 0usize;
    for i in 0..count as usize {
        let field = |at: usize, name: &str| {
            read_u64(bundle, at)
                .ok_or_else(|| err(start + at, format!("entry {i}: truncated {name} (bundle len {blen})")))
        };
        let offset = field(pos, "offset")?;
        let size = field(pos + 8, "size")?;
        let id_len = field(pos + 16, "id length")?;
        let id_start = pos + 24;
        let id_end = usize::try_from(id_len)
            .ok()
            .and_then(|l| id_start.checked_add(l))
            .filter(|&e| e <= blen)
            .ok_or_else(|| {
                err(
                    start + pos + 16,
                    format!("entry {i}: id length {id_len} past end of bundle (len {blen})"),
                )
            })?;
        let id_bytes = bundle.get(id_start..id_end).unwrap_or(&[]);
        let id = String::from_utf8_lossy(id_bytes).into_owned();
        let entry_end = offset.checked_add(size).filter(|&e| e <= blen as u64).ok_or_else(|| {
            err(
                start + pos,
                format!("bundle entry {i} offset {offset:#x} + size {size:#x} past end of bundle (len {blen:#x})"),
            )
        })?;
        end = end.max(entry_end as usize);
        let (kind, triple, target_id) = split_entry_id(&id);
        entries.push(BundleEntry {
            index: i,
            id,
            offset,
            size,
            buffer_offset: start as u64 + offset,
            kind,
            triple,
            target_id,
        });
        pos = id_end;
    }
    end = end.max(pos);
    Ok((
        Bundle {
            index,
            offset: start as u64,
            len: end as u64,
            entries,
        },
        start + end,
    ))
}

/// Parses every offload bundle in `bytes`, which must start with one. After each bundle the next magic is
/// searched for in the bytes following its end (padding); parsing stops when there is none.
///
/// `file_name` is used in error messages only.
pub fn parse_bundles(bytes: &[u8], file_name: &str) -> Result<Vec<Bundle>, CodeObjectError> {
    if !is_bundle(bytes) {
        return Err(CodeObjectError::Bundle {
            file: file_name.to_string(),
            bundle: 0,
            offset: 0,
            what: "not an offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)".into(),
        });
    }
    let mut bundles = Vec::new();
    let mut at = 0usize;
    loop {
        let (b, end) = parse_one(bytes, at, bundles.len(), file_name)?;
        bundles.push(b);
        match find_next_magic(bytes, end.max(at + 1)) {
            Some(next) => at = next,
            None => break,
        }
    }
    Ok(bundles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut header = Vec::new();
        header.extend_from_slice(BUNDLE_MAGIC);
        header.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        let header_len = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut off = header_len;
        for (id, data) in entries {
            header.extend_from_slice(&(off as u64).to_le_bytes());
            header.extend_from_slice(&(data.len() as u64).to_le_bytes());
            header.extend_from_slice(&(id.len() as u64).to_le_bytes());
            header.extend_from_slice(id.as_bytes());
            off += data.len();
        }
        for (_, data) in entries {
            header.extend_from_slice(data);
        }
        header
    }

    #[test]
    fn entry_ids_split_like_clang_offload_bundler() {
        let (k, t, id) = split_entry_id("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-");
        assert_eq!(
            (k.as_str(), t.as_str(), id.as_deref()),
            ("hipv4", "amdgcn-amd-amdhsa-", Some("gfx90a:xnack-"))
        );
        let (k, t, id) = split_entry_id("host-x86_64-unknown-linux-gnu");
        assert_eq!((k.as_str(), t.as_str(), id), ("host", "x86_64-unknown-linux-gnu", None));
        let (k, t, id) = split_entry_id("hip-amdgcn-amd-amdhsa-gfx906");
        assert_eq!(
            (k.as_str(), t.as_str(), id.as_deref()),
            ("hip", "amdgcn-amd-amdhsa", Some("gfx906"))
        );
    }

    #[test]
    fn back_to_back_bundles_with_padding_are_all_found() {
        let a = build(&[
            ("host-x86_64-unknown-linux-gnu", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"AAAA"),
        ]);
        let b = build(&[("hipv4-amdgcn-amd-amdhsa--gfx908", b"BB")]);
        let mut buf = a.clone();
        buf.resize(4096, 0);
        buf.extend_from_slice(&b);
        let bundles = parse_bundles(&buf, "t").unwrap();
        assert_eq!(bundles.len(), 2);
        assert_eq!(bundles[1].offset, 4096);
        assert_eq!(bundles[0].entries[1].bytes(&buf), b"AAAA");
        assert_eq!(bundles[1].entries[0].bytes(&buf), b"BB");
        assert_eq!(bundles[1].entries[0].target_id.as_deref(), Some("gfx908"));
    }

    #[test]
    fn entry_past_end_is_reported_with_context() {
        let mut a = build(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"AAAA")]);
        a.truncate(a.len() - 1);
        let e = parse_bundles(&a, "x.hipfb").unwrap_err().to_string();
        assert!(
            e.contains("x.hipfb") && e.contains("bundle entry 0 offset") && e.contains("past end"),
            "{e}"
        );
    }

    #[test]
    fn compressed_bundle_is_rejected_clearly() {
        let e = parse_bundles(b"CCOB\x02\x00\x01\x00", "c").unwrap_err().to_string();
        assert!(e.contains("compressed bundles unsupported"), "{e}");
    }
}
