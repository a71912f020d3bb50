//! The zero-copy reader over a slice or a memory map.

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use tensor_core::{Bytes, MappedFile, Tensor, TensorMap};

use crate::error::{Error, Location, Result};

use super::input::SliceInput;
use super::parser::{Parser, index_stream, lookup, name_index, parse_names_offsets, reserve};
use super::{ReadOptions, TensorInfo};

/// One entry of a [`Params`]: name, record and tensor.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    name: Cow<'a, [u8]>,
    info: TensorInfo,
    tensor: Tensor<'a>,
}

impl<'a> Entry<'a> {
    /// The stored name bytes (any bytes; UTF-8 by convention).
    pub fn name_bytes(&self) -> &[u8] {
        &self.name
    }

    /// The name as text, invalid UTF-8 replaced with U+FFFD.
    pub fn name(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }

    /// The tensor: its bytes are borrowed from the input (or shared from the map).
    pub fn tensor(&self) -> &Tensor<'a> {
        &self.tensor
    }

    /// What the record says (offsets, stored dtype, device id).
    pub fn info(&self) -> &TensorInfo {
        &self.info
    }

    /// Consumes the entry, giving its tensor.
    pub fn into_tensor(self) -> Tensor<'a> {
        self.tensor
    }
}

/// A parsed parameter dictionary whose tensors borrow the input bytes.
///
/// Entries are in file order; [`Params::get`] looks names up (the last one
/// stored, if duplicates were allowed).
///
/// ```
/// # fn main() -> Result<(), cvm_params::Error> {
/// use cvm_params::{Params, WriteOptions};
/// use tensor_core::Tensor;
///
/// let w = Tensor::from_values([2], &[1i8, -1])?;
/// let mut file = Vec::new();
/// cvm_params::write(&mut file, [("w", &w)], &WriteOptions::default())?;
///
/// let params = Params::parse(&file)?;
/// let t = params.get("w").unwrap();
/// assert_eq!(t.bytes(), &[1, 0xff]);
/// assert!(t.storage().is_zero_copy());
/// assert_eq!(params.entries()[0].info().data_offset, file.len() as u64 - 2);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Params<'a> {
    entries: Vec<Entry<'a>>,
    by_name: Vec<usize>,
    size: u64,
    trailing: u64,
    map: Option<Arc<MappedFile>>,
}

impl<'a> Params<'a> {
    /// Parses `bytes` strictly (see [`ReadOptions::strict`]).
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        Self::parse_with(bytes, &ReadOptions::default())
    }

    /// Parses `bytes` with `opts`.
    pub fn parse_with(bytes: &'a [u8], opts: &ReadOptions) -> Result<Self> {
        let mut input = SliceInput {
            data: bytes,
            pos: 0,
        };
        let parsed = Parser { input: &mut input }.run(opts)?;
        let offsets = parse_names_offsets(&parsed.entries);
        let by_name = name_index(&parsed.entries, &offsets, opts.allow_duplicates)?;
        let mut entries = reserve("the entries", parsed.entries.len(), || Location::at(0))?;
        for raw in parsed.entries {
            let tensor = Tensor::new(raw.info.dtype, raw.info.dims.clone(), raw.payload)?;
            entries.push(Entry {
                name: Cow::Borrowed(raw.name),
                info: raw.info,
                tensor,
            });
        }
        Ok(Params {
            entries,
            by_name,
            size: bytes.len() as u64,
            trailing: parsed.trailing,
            map: None,
        })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True for an empty dictionary.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in file order.
    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }

    /// `(name, tensor)` in file order, names with invalid UTF-8 replaced.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Cow<'_, str>, &Tensor<'a>)> {
        self.entries.iter().map(|e| (e.name(), &e.tensor))
    }

    /// The tensor named `name` (the last one, if duplicates were allowed).
    pub fn get(&self, name: &str) -> Option<&Tensor<'a>> {
        self.get_bytes(name.as_bytes())
    }

    /// The tensor whose stored name is exactly `name` (any bytes).
    pub fn get_bytes(&self, name: &[u8]) -> Option<&Tensor<'a>> {
        self.position(name).map(|i| &self.entries[i].tensor)
    }

    /// The file index of the entry named `name` (the last one, if duplicates were allowed).
    pub fn position(&self, name: &[u8]) -> Option<usize> {
        lookup(&self.by_name, |i| &self.entries[i].name, name)
    }

    /// Size of the input in bytes.
    pub fn file_size(&self) -> u64 {
        self.size
    }

    /// Bytes after the last tensor (0 unless read with `lenient_trailing`).
    pub fn trailing_bytes(&self) -> u64 {
        self.trailing
    }

    /// The memory map the tensors share, for a [`Params::open`]ed file.
    pub fn map(&self) -> Option<&Arc<MappedFile>> {
        self.map.as_ref()
    }

    /// The tensors as a [`TensorMap`] (names with invalid UTF-8 replaced;
    /// a name stored twice keeps its first position and its last tensor).
    pub fn into_tensor_map(self) -> TensorMap<'a> {
        self.entries
            .into_iter()
            .map(|e| (String::from_utf8_lossy(&e.name).into_owned(), e.tensor))
            .collect()
    }

    /// Consumes the dictionary, giving its entries in file order.
    pub fn into_entries(self) -> Vec<Entry<'a>> {
        self.entries
    }
}

impl Params<'static> {
    /// Memory-maps `path` and parses it strictly. The tensors share the map
    /// (no payload is copied) and outlive this call.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Memory-maps `path` and parses it with `opts`.
    ///
    /// The headers are read through a small buffer from the file (about one
    /// read and one seek per tensor) rather than through the map, so opening
    /// touches no payload page and costs the same for a 1 MiB and a 1 GiB
    /// file with the same entries; the payloads are then views of the map.
    pub fn open_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let io = |e| Error::Core(tensor_core::Error::io(path.display().to_string(), e));
        let mut file = File::open(path).map_err(io)?;
        let (_, len, parsed) = index_stream(&mut file, opts)?;
        let offsets = parse_names_offsets(&parsed.entries);
        let by_name = name_index(&parsed.entries, &offsets, opts.allow_duplicates)?;
        let map = MappedFile::from_file(&file).map_err(|e| match e {
            tensor_core::Error::Io { source, .. } => io(source),
            other => Error::Core(other),
        })?;
        if map.len() as u64 != len {
            return Err(Error::Truncated {
                at: Location::at(map.len() as u64),
                what: "the file (it changed size while it was opened)",
                needed: len,
                available: map.len() as u64,
            });
        }
        let mut entries = reserve("the entries", parsed.entries.len(), || Location::at(0))?;
        for raw in parsed.entries {
            let info = raw.info;
            let range = usize::try_from(info.data_offset)
                .ok()
                .and_then(|o| Some(o..o.checked_add(usize::try_from(info.nbytes).ok()?)?));
            let bytes = range
                .and_then(|r| map.get(r))
                .and_then(|b| Bytes::shared(&map, b));
            let Some(bytes) = bytes else {
                return Err(Error::Truncated {
                    at: Location::tensor(info.data_offset, info.index, &raw.name),
                    what: "the payload (the file changed while it was opened)",
                    needed: info.nbytes,
                    available: 0,
                });
            };
            let tensor = Tensor::new(info.dtype, info.dims.clone(), bytes)?;
            entries.push(Entry {
                name: Cow::Owned(raw.name),
                info,
                tensor,
            });
        }
        Ok(Params {
            entries,
            by_name,
            size: len,
            trailing: parsed.trailing,
            map: Some(map),
        })
    }

    /// Parses a mapped file; the tensors share `map`.
    pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<Self> {
        let borrowed = Params::parse_with(map.as_bytes(), opts)?;
        let entries = borrowed
            .entries
            .into_iter()
            .map(|e| Entry {
                name: Cow::Owned(e.name.into_owned()),
                info: e.info,
                tensor: e.tensor.rebase(map),
            })
            .collect();
        Ok(Params {
            entries,
            by_name: borrowed.by_name,
            size: borrowed.size,
            trailing: borrowed.trailing,
            map: Some(Arc::clone(map)),
        })
    }
}
