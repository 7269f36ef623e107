//! Cheaply clonable, shared, read-only byte buffers: a whole file (owned or memory-mapped) and sub-ranges of it.
//!
//! A host library such as librocsparse is over a gigabyte; every code object inside it is a [`SharedBytes`]
//! range of the one mapping, and every function's code is a range of that, so nothing is copied.

use std::fmt;
use std::ops::{Deref, Range};
use std::path::Path;
use std::sync::Arc;

use super::CodeObjectError;

enum Backing {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Backing {
    fn as_slice(&self) -> &[u8] {
        match self {
            Backing::Owned(v) => v,
            Backing::Mapped(m) => m,
        }
    }
}

/// A read-only byte range of a shared buffer (an owned `Vec<u8>` or a memory-mapped file).
///
/// Cloning is cheap (one reference count); [`SharedBytes::slice`] makes sub-ranges without copying.
/// Invariant: `start <= end <= backing.len()`.
#[derive(Clone)]
pub struct SharedBytes {
    backing: Arc<Backing>,
    start: usize,
    end: usize,
}

impl SharedBytes {
    /// Takes ownership of `bytes`.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        let end = bytes.len();
        SharedBytes {
            backing: Arc::new(Backing::Owned(bytes)),
            start: 0,
            end,
        }
    }

    /// Copies `bytes` into a new buffer.
    pub fn copy_from_slice(bytes: &[u8]) -> Self {
        Self::from_vec(bytes.to_vec())
    }

    /// Maps the file at `path` read-only (falls back to reading it for empty files, which cannot be mapped).
    ///
    /// The file must not be modified while any [`SharedBytes`] of it is alive (see the `SAFETY` note inside).
    pub fn map_file(path: &Path) -> Result<Self, CodeObjectError> {
        let io_err = |source| CodeObjectError::Io {
            file: path.display().to_string(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        if len == 0 {
            return Ok(Self::from_vec(Vec::new()));
        }
        // SAFETY: the mapping is read-only and private to this process. Memory-mapping is only unsound if another
        // process truncates or rewrites the file while it is mapped; code objects and installed libraries are
        // not modified while a tool reads them, and the documented contract of `map_file` forbids it.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        let end = map.len();
        Ok(SharedBytes {
            backing: Arc::new(Backing::Mapped(map)),
            start: 0,
            end,
        })
    }

    /// Reads the whole file at `path` into memory.
    pub fn read_file(path: &Path) -> Result<Self, CodeObjectError> {
        std::fs::read(path)
            .map(Self::from_vec)
            .map_err(|source| CodeObjectError::Io {
                file: path.display().to_string(),
                source,
            })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // `start..end` is within the backing by the type invariant; `get` keeps this panic-free regardless.
        self.backing.as_slice().get(self.start..self.end).unwrap_or(&[])
    }

    /// The sub-range `range` (relative to this range), or `None` if it is out of bounds.
    pub fn slice(&self, range: Range<usize>) -> Option<SharedBytes> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        Some(SharedBytes {
            backing: self.backing.clone(),
            start: self.start.checked_add(range.start)?,
            end: self.start.checked_add(range.end)?,
        })
    }

    /// Like [`SharedBytes::slice`] with a `u64` offset and length, as read from file headers.
    pub fn slice_u64(&self, offset: u64, len: u64) -> Option<SharedBytes> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.slice(start..end)
    }

    /// This range, or a copy of it, whose first byte is aligned to `align` bytes (a power of two). ELF
    /// structures are read in place and need their natural alignment; bundle entries are not always aligned.
    pub fn aligned(&self, align: usize) -> SharedBytes {
        let align = align.max(1).next_power_of_two();
        if self.as_slice().as_ptr().align_offset(align) == 0 {
            return self.clone();
        }
        let len = self.len();
        let mut v = vec![0u8; len.saturating_add(align - 1)];
        let pad = v.as_ptr().align_offset(align).min(align - 1);
        if let Some(dst) = v.get_mut(pad..pad + len) {
            dst.copy_from_slice(self.as_slice());
        }
        SharedBytes::from_vec(v).slice(pad..pad + len).unwrap_or_default()
    }

    /// Offset of this range's first byte within the underlying buffer (the file, for mapped files).
    pub fn offset_in_backing(&self) -> usize {
        self.start
    }
}

impl Deref for SharedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SharedBytes({} bytes at {:#x})",
            self.end.saturating_sub(self.start),
            self.start
        )
    }
}

impl Default for SharedBytes {
    fn default() -> Self {
        Self::from_vec(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_bounds_checked_and_relative() {
        let b = SharedBytes::from_vec((0u8..100).collect());
        let s = b.slice(10..20).unwrap();
        assert_eq!(&s[..], &(10u8..20).collect::<Vec<_>>()[..]);
        assert_eq!(s.offset_in_backing(), 10);
        assert_eq!(&s.slice(2..4).unwrap()[..], &[12, 13]);
        assert!(s.slice(5..11).is_none());
        assert!(b.slice_u64(u64::MAX, 1).is_none());
        assert!(b.slice_u64(99, u64::MAX).is_none());
    }

    #[test]
    fn aligned_copies_only_misaligned_ranges() {
        let b = SharedBytes::from_vec((0u8..64).collect());
        for start in 0..16 {
            let s = b.slice(start..start + 40).unwrap();
            let a = s.aligned(8);
            assert_eq!(a.as_slice().as_ptr().align_offset(8), 0);
            assert_eq!(a.as_slice(), s.as_slice());
        }
    }
}
