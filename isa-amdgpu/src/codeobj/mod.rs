//! AMDGPU code objects: reading what the loader and the disassembler need from them.
//!
//! - [`CodeObject::parse`]: one AMDGPU ELF (`EM_AMDGPU`, ELFCLASS64, OS ABI `AMDGPU_HSA`, code object v3–v6):
//!   target id from `e_flags`, sections, functions with their code bytes, kernels with their parsed
//!   [`KernelDescriptor`], the `NT_AMDGPU_METADATA` note as typed
//!   [`Metadata`], and `symbol+offset` lookup for addresses.
//! - [`bundle::parse_bundles`]: clang offload bundles, one or many back to back.
//! - [`open_any`]: a file that is a code object, a host ELF with a `.hip_fatbin` section, or a raw bundle file;
//!   optionally filtered by a target selector (`gfx90a`, `gfx90a:xnack-`). Files are memory-mapped and code
//!   objects inside them are ranges of the mapping ([`SharedBytes`]), so a 1.2 GB library is not copied.
//!
//! Invariant: no input, however malformed, panics; every failure is a [`CodeObjectError`] naming the file
//! (or `file[bundle N entry M id]`), the offset where known, and what is wrong.

pub mod bundle;
mod bytes;
mod elf;
pub mod kd;
pub mod metadata;
pub mod names;
pub mod target;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use bytes::SharedBytes;
pub use elf::{CodeObject, Function, Kernel, Section, Symbol, SymbolKind, SymbolRef, TextSection};
pub use kd::KernelDescriptor;
pub use metadata::{KernelArg, KernelMetadata, Metadata};
pub use target::{FeatureSetting, GfxFamily, TargetId};

/// Everything that can go wrong reading code objects and bundles.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodeObjectError {
    /// The file could not be opened, mapped or read.
    #[error("{file}: {source}")]
    Io {
        /// File name.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A structure is truncated or points outside the data.
    #[error("{file}: {what} (at offset {offset:#x})")]
    Malformed {
        /// File or code object name.
        file: String,
        /// Byte offset (in the code object) of the offending structure.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// The bytes are not an AMDGPU ELF (wrong magic, class, endianness or machine).
    #[error("{file}: not an AMDGPU code object: {why}")]
    NotAmdgpu {
        /// File or code object name.
        file: String,
        /// Why.
        why: String,
    },
    /// An AMDGPU ELF this reader does not support (OS ABI other than HSA, code object v2, …).
    #[error("{file}: unsupported code object: {why}")]
    Unsupported {
        /// File or code object name.
        file: String,
        /// Why.
        why: String,
    },
    /// The ELF parser rejected a structure.
    #[error("{file}: bad ELF {what}: {source}")]
    Elf {
        /// File or code object name.
        file: String,
        /// Which structure (`section headers`, `symbol table`, `notes`).
        what: &'static str,
        /// The parser's error.
        #[source]
        source: object::read::Error,
    },
    /// The `NT_AMDGPU_METADATA` note is not valid MessagePack or not the expected shape.
    #[error("{file}: metadata note: {what}")]
    Metadata {
        /// File or code object name.
        file: String,
        /// What is wrong (`expected map, found array`, `amdhsa.kernels[2] (k) .args[0] missing .size`).
        what: String,
    },
    /// A kernel's descriptor is missing, truncated or points outside the code object.
    #[error("{file}: kernel {kernel}: {what}")]
    Kernel {
        /// File or code object name.
        file: String,
        /// Kernel (descriptor symbol) name.
        kernel: String,
        /// What is wrong.
        what: String,
    },
    /// An offload bundle header is malformed.
    #[error("{file}: offload bundle {bundle} at offset {offset:#x}: {what}")]
    Bundle {
        /// File name.
        file: String,
        /// Index of the bundle in the buffer.
        bundle: usize,
        /// Offset of the offending field in the buffer.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// A compressed (`CCOB`) offload bundle.
    #[error("{file}: offload bundle at offset {offset:#x} is compressed (CCOB): compressed bundles unsupported")]
    CompressedBundle {
        /// File name.
        file: String,
        /// Offset of the `CCOB` magic.
        offset: u64,
    },
    /// The file holds no AMDGPU code: a host ELF without `.hip_fatbin`, or an unknown format.
    #[error("{file}: {what}")]
    NoDeviceCode {
        /// File name.
        file: String,
        /// What was found instead.
        what: String,
    },
    /// The target selector does not parse.
    #[error("invalid target selector {selector:?}: {why}")]
    BadSelector {
        /// The selector as given.
        selector: String,
        /// Why.
        why: String,
    },
}

/// What kind of file a code object came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Container {
    /// The file is the code object.
    CodeObject,
    /// A host ELF (executable, shared library, object) with a `.hip_fatbin` section.
    HostElf,
    /// A raw offload bundle file (`.hipfb`, output of clang-offload-bundler).
    BundleFile,
}

/// Where a loaded code object came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeObjectSource {
    /// The file opened.
    pub path: PathBuf,
    /// What kind of file it is.
    pub container: Container,
    /// Index of the offload bundle in the file (or section), for bundled code objects.
    pub bundle_index: Option<usize>,
    /// Index of the entry within its bundle.
    pub entry_index: Option<usize>,
    /// The bundle entry id (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`).
    pub entry_id: Option<String>,
    /// Offset of the code object's first byte in the file.
    pub file_offset: u64,
    /// Size of the code object in bytes.
    pub size: u64,
}

/// A code object and where it came from.
#[derive(Debug, Clone)]
pub struct LoadedCodeObject {
    /// Where it came from.
    pub source: CodeObjectSource,
    /// The parsed code object.
    pub code_object: CodeObject,
}

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Parses a target selector (`gfx90a`, `gfx90a:xnack-`, `gfx90a:sramecc+:xnack-`).
pub fn parse_selector(selector: &str) -> Result<TargetId, CodeObjectError> {
    TargetId::parse(selector).map_err(|why| CodeObjectError::BadSelector {
        selector: selector.to_string(),
        why,
    })
}

/// Opens `path` (memory-mapped) and returns every AMDGPU code object in it, in file order: the file itself if it
/// is a code object, every AMDGPU entry of every bundle of its `.hip_fatbin` section if it is a host ELF, or of
/// every bundle if it is a bundle file.
///
/// With `target`, only code objects whose target satisfies the selector are parsed and returned (same
/// processor; every feature the selector names equal, or absent from the code object). For bundle entries the
/// entry id's target is used. An empty result means nothing matched.
pub fn open_any(path: &Path, target: Option<&str>) -> Result<Vec<LoadedCodeObject>, CodeObjectError> {
    let selector = target.map(parse_selector).transpose()?;
    let bytes = SharedBytes::map_file(path)?;
    open_bytes(&bytes, path, selector.as_ref())
}

/// Like [`open_any`] on bytes already in memory; `path` is used for naming only.
pub fn open_bytes(
    bytes: &SharedBytes,
    path: &Path,
    selector: Option<&TargetId>,
) -> Result<Vec<LoadedCodeObject>, CodeObjectError> {
    let file = path.display().to_string();
    if bytes.starts_with(ELF_MAGIC) {
        if elf::is_amdgpu_elf(bytes) {
            let co = CodeObject::parse_shared(bytes.clone(), &file)?;
            if selector.is_some_and(|s| !co.target.matches(s)) {
                return Ok(Vec::new());
            }
            let source = CodeObjectSource {
                path: path.to_path_buf(),
                container: Container::CodeObject,
                bundle_index: None,
                entry_index: None,
                entry_id: None,
                file_offset: 0,
                size: bytes.len() as u64,
            };
            return Ok(vec![LoadedCodeObject {
                source,
                code_object: co,
            }]);
        }
        let (offset, size) = elf::host_fatbin_range(bytes, &file)?.ok_or_else(|| CodeObjectError::NoDeviceCode {
            file: file.clone(),
            what: "host ELF without a .hip_fatbin section".into(),
        })?;
        let fatbin = bytes
            .slice_u64(offset, size)
            .ok_or_else(|| CodeObjectError::Malformed {
                file: file.clone(),
                offset,
                what: format!(
                    ".hip_fatbin section (size {size:#x}) extends past end of file (len {:#x})",
                    bytes.len()
                ),
            })?;
        return open_bundles(&fatbin, path, Container::HostElf, selector);
    }
    if bundle::is_bundle(bytes) {
        return open_bundles(bytes, path, Container::BundleFile, selector);
    }
    Err(CodeObjectError::NoDeviceCode {
        file,
        what: "neither an ELF file nor a clang offload bundle".into(),
    })
}

fn open_bundles(
    region: &SharedBytes,
    path: &Path,
    container: Container,
    selector: Option<&TargetId>,
) -> Result<Vec<LoadedCodeObject>, CodeObjectError> {
    let file = path.display().to_string();
    let bundles = bundle::parse_bundles(region, &file)?;
    let base = region.offset_in_backing() as u64;
    let mut out = Vec::new();
    for b in &bundles {
        for e in &b.entries {
            if !e.is_amdgpu() || e.size == 0 {
                continue;
            }
            if let Some(sel) = selector {
                match e.target() {
                    Some(t) if t.matches(sel) => {}
                    _ => continue,
                }
            }
            let name = format!("{file}[bundle {} entry {} {}]", b.index, e.index, e.id);
            let data = region
                .slice_u64(e.buffer_offset, e.size)
                .ok_or_else(|| CodeObjectError::Bundle {
                    file: file.clone(),
                    bundle: b.index,
                    offset: e.buffer_offset,
                    what: format!("entry {} out of range", e.index),
                })?;
            let co = CodeObject::parse_shared(data, &name)?;
            out.push(LoadedCodeObject {
                source: CodeObjectSource {
                    path: path.to_path_buf(),
                    container,
                    bundle_index: Some(b.index),
                    entry_index: Some(e.index),
                    entry_id: Some(e.id.clone()),
                    file_offset: base + e.buffer_offset,
                    size: e.size,
                },
                code_object: co,
            });
        }
    }
    Ok(out)
}

/// Lists the offload bundles of `path` without parsing any code object: the bundles of a host ELF's
/// `.hip_fatbin` section or of a bundle file; empty for a bare code object.
pub fn list_bundles(path: &Path) -> Result<Vec<bundle::Bundle>, CodeObjectError> {
    let bytes = SharedBytes::map_file(path)?;
    let file = path.display().to_string();
    if bytes.starts_with(ELF_MAGIC) {
        if elf::is_amdgpu_elf(&bytes) {
            return Ok(Vec::new());
        }
        return match elf::host_fatbin_range(&bytes, &file)? {
            Some((offset, size)) => {
                let fatbin = bytes
                    .slice_u64(offset, size)
                    .ok_or_else(|| CodeObjectError::Malformed {
                        file: file.clone(),
                        offset,
                        what: ".hip_fatbin section extends past end of file".into(),
                    })?;
                bundle::parse_bundles(&fatbin, &file)
            }
            None => Ok(Vec::new()),
        };
    }
    bundle::parse_bundles(&bytes, &file)
}
