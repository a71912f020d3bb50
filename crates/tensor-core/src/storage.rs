//! Where a tensor's bytes live: owned, borrowed from the input, or shared from a memory map.

use std::fs::File;
use std::ops::{Deref, Range};
use std::path::Path;
use std::sync::Arc;

use crate::{Error, Result};

/// A read-only memory map of a whole file.
///
/// Readers parse `&map[..]` and borrow tensor bytes from it; [`Bytes::shared`]
/// turns such a borrowed slice into storage that keeps the map alive on its
/// own, so tensors can outlive the parse without copying.
#[derive(Debug)]
pub struct MappedFile {
    backing: Backing,
}

/// What holds the bytes of a [`MappedFile`].
#[derive(Debug)]
enum Backing {
    /// An empty file (mmap of length 0 is an error on Linux).
    Empty,
    /// A read-only memory map.
    Map(memmap2::Mmap),
    /// Bytes already in memory, shared the same way as a map.
    Owned(Box<[u8]>),
}

impl MappedFile {
    /// Maps the file at `path` read-only. An empty file maps to an empty slice.
    pub fn open(path: impl AsRef<Path>) -> Result<Arc<MappedFile>> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io(path.display().to_string(), e))?;
        Self::from_file(&file).map_err(|e| match e {
            Error::Io { source, .. } => Error::io(path.display().to_string(), source),
            other => other,
        })
    }

    /// Maps an open file read-only.
    pub fn from_file(file: &File) -> Result<Arc<MappedFile>> {
        let len = file.metadata().map_err(|e| Error::io("stat", e))?.len();
        if len == 0 {
            // mmap of length 0 is an error on Linux; an empty file has no bytes to share.
            return Ok(Arc::new(MappedFile {
                backing: Backing::Empty,
            }));
        }
        // SAFETY: memmap2 requires that the file is not changed or truncated
        // while it is mapped, which no Rust code can guarantee for a file that
        // other processes may write. We map read-only and only ever read
        // through `&[u8]`; a concurrent truncation can at worst raise SIGBUS,
        // which is the documented and accepted risk of every memory-mapped
        // reader (and why every format crate also offers a reader over
        // `Read + Seek`). No reference into the map outlives `self`, because
        // borrowed slices are tied to `&self` and shared storage holds an `Arc`.
        let map = unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io("mmap", e))?;
        Ok(Arc::new(MappedFile {
            backing: Backing::Map(map),
        }))
    }

    /// Bytes already in memory (read from a pipe, a network, a Python
    /// `bytes`), shared by tensors exactly as a memory map is.
    pub fn from_vec(bytes: Vec<u8>) -> Arc<MappedFile> {
        Arc::new(MappedFile {
            backing: Backing::Owned(bytes.into_boxed_slice()),
        })
    }

    /// The mapped bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.backing {
            Backing::Empty => &[],
            Backing::Map(m) => m,
            Backing::Owned(b) => b,
        }
    }

    /// True when the bytes are a memory map of a file (not in owned memory).
    pub fn is_mapped(&self) -> bool {
        matches!(self.backing, Backing::Map(_))
    }

    /// The byte range of `sub` within the map, if `sub` lies inside it.
    pub fn range_of(&self, sub: &[u8]) -> Option<Range<usize>> {
        let base = self.as_bytes().as_ptr() as usize;
        let start = (sub.as_ptr() as usize).checked_sub(base)?;
        let end = start.checked_add(sub.len())?;
        (end <= self.as_bytes().len()).then_some(start..end)
    }
}

impl Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// The bytes of one tensor.
///
/// Cheap to clone except for `Owned`, which copies.
#[derive(Debug, Clone)]
pub enum Bytes<'a> {
    /// Borrowed from the caller's input (zero-copy).
    Borrowed(&'a [u8]),
    /// Owned by the tensor (decompressed, converted, or built in memory).
    Owned(Vec<u8>),
    /// A range of a memory-mapped file, kept alive by the `Arc` (zero-copy).
    Mapped(Arc<MappedFile>, Range<usize>),
}

impl<'a> Bytes<'a> {
    /// Storage sharing `sub`, which must lie inside `map`: zero-copy and `'static`.
    /// `None` when `sub` is not inside the map.
    pub fn shared(map: &Arc<MappedFile>, sub: &[u8]) -> Option<Bytes<'static>> {
        let range = map.range_of(sub)?;
        Some(Bytes::Mapped(Arc::clone(map), range))
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b,
            Bytes::Owned(v) => v,
            Bytes::Mapped(m, r) => &m.as_bytes()[r.clone()],
        }
    }

    /// True when the bytes are not owned (borrowed or mapped).
    pub fn is_zero_copy(&self) -> bool {
        !matches!(self, Bytes::Owned(_))
    }

    /// Owned storage with no borrow, copying only `Borrowed` bytes.
    pub fn into_static(self) -> Bytes<'static> {
        match self {
            Bytes::Borrowed(b) => Bytes::Owned(b.to_vec()),
            Bytes::Owned(v) => Bytes::Owned(v),
            Bytes::Mapped(m, r) => Bytes::Mapped(m, r),
        }
    }

    /// Turns a borrowed slice that lies inside `map` into mapped storage;
    /// anything else is returned unchanged (as `'static`, copying a borrow
    /// from elsewhere).
    pub fn rebase(self, map: &Arc<MappedFile>) -> Bytes<'static> {
        match self {
            Bytes::Borrowed(b) => Bytes::shared(map, b).unwrap_or_else(|| Bytes::Owned(b.to_vec())),
            other => other.into_static(),
        }
    }

    /// The bytes as a vector (copies unless already owned).
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Bytes::Owned(v) => v,
            other => other.as_slice().to_vec(),
        }
    }
}

impl Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl<'a> From<&'a [u8]> for Bytes<'a> {
    fn from(b: &'a [u8]) -> Self {
        Bytes::Borrowed(b)
    }
}

impl From<Vec<u8>> for Bytes<'static> {
    fn from(v: Vec<u8>) -> Self {
        Bytes::Owned(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn mapped_storage_shares_without_copying() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"headerPAYLOAD").unwrap();
        f.flush().unwrap();
        let map = MappedFile::open(f.path()).unwrap();
        let sub = &map[6..13];
        let b = Bytes::shared(&map, sub).unwrap();
        assert!(b.is_zero_copy());
        assert_eq!(b.as_slice(), b"PAYLOAD");
        assert_eq!(b.as_slice().as_ptr(), map[6..].as_ptr());
        // a slice from elsewhere is not inside the map
        let other = b"PAYLOAD".to_vec();
        assert!(Bytes::shared(&map, &other).is_none());
        let rebased = Bytes::Borrowed(&other).rebase(&map);
        assert!(!rebased.is_zero_copy());
    }

    #[test]
    fn empty_file_maps_to_nothing() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let map = MappedFile::open(f.path()).unwrap();
        assert!(map.as_bytes().is_empty());
        let missing = MappedFile::open(f.path().with_extension("missing")).unwrap_err();
        assert!(missing.to_string().contains("missing"), "{missing}");
    }
}
