//! Robustness: mutated and truncated real code objects and bundles, and random bytes, never make the
//! code-object reader panic. Seeds are compiled with clang-19 at test time; without it, synthetic seeds (a bare
//! AMDGPU ELF header and a hand-built bundle around it) are used and a note is printed.

mod common;

use std::path::Path;
use std::sync::OnceLock;

use common::*;
use isa_amdgpu::codeobj::{self, bundle, metadata::Metadata, CodeObject, SharedBytes};
use proptest::prelude::*;

struct Seed {
    name: &'static str,
    bytes: Vec<u8>,
    /// Byte ranges holding structure (headers, tables, notes, descriptors) where mutations matter most.
    hot: Vec<(usize, usize)>,
}

fn build_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let header_len = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut out = Vec::new();
    out.extend_from_slice(bundle::BUNDLE_MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut off = header_len.div_ceil(8) * 8;
    let mut offsets = Vec::new();
    for (id, data) in entries {
        offsets.push(off);
        out.extend_from_slice(&(off as u64).to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
        off = (off + data.len()).div_ceil(8) * 8;
    }
    for ((_, data), at) in entries.iter().zip(offsets) {
        out.resize(at, 0);
        out.extend_from_slice(data);
    }
    out
}

/// Structure ranges of an ELF: header, section header table, and every non-code section.
fn hot_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut hot = vec![(0, 64.min(bytes.len()))];
    if bytes.len() >= 64 {
        let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().unwrap()) as usize;
        let shnum = u16::from_le_bytes(bytes[0x3c..0x3e].try_into().unwrap()) as usize;
        hot.push((shoff, shoff + shnum * 64));
    }
    if let Ok(co) = CodeObject::parse(bytes, "seed") {
        for s in co.sections.iter().filter(|s| s.has_file_data() && !s.is_executable()) {
            hot.push((s.file_offset as usize, (s.file_offset + s.size) as usize));
        }
    }
    hot.retain(|&(a, b)| a < b && b <= bytes.len());
    hot
}

fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds = Vec::new();
        let mut objects: Vec<(&'static str, Vec<u8>)> = Vec::new();
        require_tools(&["clang-19"]);
        let scratch = Scratch::new("fuzzseed");
        for (name, mcpu, v) in [
            ("gfx90a-v5", "gfx90a", 5),
            ("gfx1100-v4", "gfx1100", 4),
            ("gfx942-v6", "gfx942", 6),
        ] {
            let out = scratch.path(&format!("{name}.co"));
            let mut src = KERNELS_CL.to_string();
            if mcpu != "gfx1100" {
                src.push_str(MFMA_CL);
            }
            compile_cl(&scratch, &src, mcpu, Some(v), &out);
            objects.push((name, std::fs::read(&out).unwrap()));
        }
        let first = objects[0].1.clone();
        for (name, bytes) in objects {
            let hot = hot_ranges(&bytes);
            seeds.push(Seed { name, bytes, hot });
        }
        let b = build_bundle(&[
            ("host-x86_64-unknown-linux-gnu", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", &first),
        ]);
        let header_end = 32 + 2 * 24 + "host-x86_64-unknown-linux-gnu".len() + "hipv4-amdgcn-amd-amdhsa--gfx90a".len();
        let second = b.len().div_ceil(4096) * 4096;
        let mut two = b.clone();
        two.resize(second, 0);
        two.extend_from_slice(&b);
        seeds.push(Seed {
            name: "bundle",
            bytes: b,
            hot: vec![(0, header_end)],
        });
        seeds.push(Seed {
            name: "two-bundles",
            bytes: two,
            hot: vec![(0, header_end), (second, second + header_end)],
        });
        seeds
    })
}

/// Runs every entry point on `bytes`; any panic fails the property.
fn exercise(bytes: &[u8]) {
    if let Ok(co) = CodeObject::parse(bytes, "fuzz") {
        for f in &co.functions {
            let _ = f.code().len();
            let _ = co.symbolize(f.address.wrapping_add(f.size / 2));
        }
        for k in &co.kernels {
            let _ = co.kernel_metadata(k);
            let _ = co.kernel_function(k);
            let d = &k.descriptor;
            let _ = (
                d.vgpr_alloc_count(),
                d.sgpr_alloc_count(),
                d.agpr_alloc_count(),
                d.user_sgprs(),
                d.system_sgprs(),
            );
            let _ = co.symbolize(k.entry_address);
        }
        let _ = co.text_bytes();
        for s in &co.sections {
            let _ = co.section_bytes(s);
        }
        let _ = co.symbolize(u64::MAX);
        let _ = co.symbolize(0);
    }
    if let Ok(bundles) = bundle::parse_bundles(bytes, "fuzz") {
        for b in &bundles {
            for e in &b.entries {
                let _ = e.bytes(bytes);
                let _ = e.target();
            }
        }
    }
    let shared = SharedBytes::copy_from_slice(bytes);
    let _ = codeobj::open_bytes(&shared, Path::new("fuzz"), None);
    let sel = codeobj::parse_selector("gfx90a:xnack-").unwrap();
    let _ = codeobj::open_bytes(&shared, Path::new("fuzz"), Some(&sel));
    let _ = Metadata::from_msgpack(bytes);
}

fn mutate(seed: &Seed, edits: &[(u32, u8, bool)], truncate: Option<u32>) -> Vec<u8> {
    let mut bytes = seed.bytes.clone();
    let hot_total: usize = seed.hot.iter().map(|(a, b)| b - a).sum();
    for &(pos, val, hot) in edits {
        if bytes.is_empty() {
            break;
        }
        let at = if hot && hot_total > 0 {
            let mut k = pos as usize % hot_total;
            let mut at = 0;
            for (a, b) in &seed.hot {
                if k < b - a {
                    at = a + k;
                    break;
                }
                k -= b - a;
            }
            at
        } else {
            pos as usize % bytes.len()
        };
        if let Some(b) = bytes.get_mut(at) {
            *b = val;
        }
    }
    if let Some(t) = truncate {
        let len = t as usize % (bytes.len() + 1);
        bytes.truncate(len);
    }
    bytes
}

proptest! {
    // PROPTEST_CASES=100000 for a longer run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_real_code_objects_and_bundles_never_panic(
        seed in 0usize..16,
        edits in prop::collection::vec((any::<u32>(), any::<u8>(), any::<bool>()), 1..24),
        truncate in prop::option::weighted(0.2, any::<u32>()),
    ) {
        let seeds = seeds();
        let s = &seeds[seed % seeds.len()];
        let bytes = mutate(s, &edits, truncate);
        exercise(&bytes);
    }

    #[test]
    fn truncated_seeds_never_panic(seed in 0usize..16, cut in any::<u32>()) {
        let seeds = seeds();
        let s = &seeds[seed % seeds.len()];
        let len = cut as usize % (s.bytes.len() + 1);
        exercise(&s.bytes[..len]);
    }

    #[test]
    fn random_bytes_with_plausible_magic_never_panic(
        prefix in 0u8..4,
        body in prop::collection::vec(any::<u8>(), 0..4096),
    ) {
        let mut bytes = match prefix {
            0 => b"\x7fELF\x02\x01\x01\x40\x03".to_vec(),
            1 => bundle::BUNDLE_MAGIC.to_vec(),
            2 => bundle::COMPRESSED_BUNDLE_MAGIC.to_vec(),
            _ => Vec::new(),
        };
        bytes.extend_from_slice(&body);
        exercise(&bytes);
    }

    #[test]
    fn bundle_headers_with_extreme_counts_and_offsets_never_panic(
        count in prop_oneof![Just(u64::MAX), Just(1u64 << 40), 0u64..8],
        fields in prop::collection::vec((any::<u64>(), any::<u64>(), prop_oneof![Just(u64::MAX), 0u64..64]), 0..6),
        tail in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut bytes = bundle::BUNDLE_MAGIC.to_vec();
        bytes.extend_from_slice(&count.to_le_bytes());
        for (off, size, id_len) in fields {
            bytes.extend_from_slice(&off.to_le_bytes());
            bytes.extend_from_slice(&size.to_le_bytes());
            bytes.extend_from_slice(&id_len.to_le_bytes());
            bytes.extend_from_slice(b"hipv4-amdgcn-amd-amdhsa--gfx90a");
        }
        bytes.extend_from_slice(&tail);
        exercise(&bytes);
    }
}

#[test]
fn seeds_are_valid_before_mutation() {
    // The properties above only mean something if the unmutated seeds parse.
    for s in seeds() {
        if s.name.starts_with("synthetic") {
            continue;
        }
        if s.name.contains("bundle") {
            let bundles = bundle::parse_bundles(&s.bytes, s.name).unwrap();
            assert!(!bundles.is_empty(), "{}", s.name);
            let loaded = codeobj::open_bytes(&SharedBytes::copy_from_slice(&s.bytes), Path::new(s.name), None).unwrap();
            assert!(!loaded.is_empty(), "{}", s.name);
        } else {
            let co = CodeObject::parse(&s.bytes, s.name).unwrap();
            assert!(!co.kernels.is_empty(), "{}", s.name);
        }
    }
}
