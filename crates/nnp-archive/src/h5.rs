//! NNabla `.h5` parameter files: read through the pure-Rust `hdf5-pure`
//! crate, written by our own streaming writer ([`StreamWriter`]).
//!
//! Reading is the only place that touches `hdf5-pure`: everything it
//! returns is in this crate's own types ([`Parameter`], [`Error`]), so the
//! HDF5 reader can be swapped without changing callers. Writing does not use
//! it: `hdf5-pure`'s builder takes every dataset's bytes as an owned buffer
//! and assembles the file in memory (a copy of all data), while a conversion
//! must stay near the size of its largest tensor.
//!
//! # Reading
//!
//! Every dataset at any depth is a parameter, named by its path without the
//! leading `/` (`fc1/affine/W`; a dataset at the root named `toplevel` is
//! `toplevel`), or by its `original_name` attribute ([`NAME_ATTRIBUTE`])
//! where the writer stored a name HDF5 cannot hold (`/model.0/w`, `a//b`)
//! under its [`h5_path`] and that path is the dataset's. Parameters come back in the order nnabla's Python loader
//! registers them: sorted by the `index` attribute, then by path; a file where
//! no dataset has `index` is sorted by path. A file where **some** datasets
//! have `index` and others do not is refused with [`Error::MixedIndex`]
//! (nnabla raises `TypeError` on it). `need_grad` is required
//! ([`Error::MissingNeedGrad`], nnabla raises `KeyError`) and read as a truth
//! value whatever its type: h5py's bool enum, or the `int32` nnabla's C++
//! writer stores, or any other integer or float.
//!
//! Element types: every integer of 1, 2, 4 or 8 bytes, f16, f32, f64 (either
//! byte order; big-endian data is converted to little-endian), and h5py's
//! bool enum as `bool`. Contiguous data is borrowed from the input without
//! copying; compact and chunked (possibly compressed) data is read into owned
//! buffers after its size has been checked against [`tensor_core::Limits::max_alloc`].
//!
//! [`locate`] walks the same structure with the same code (each call into
//! `hdf5-pure` goes through a small `Calls` trait: run once over the whole
//! file, or over a page cache filled through a read closure and run again
//! until nothing was missing) and gives each dataset's name, type, shape,
//! `need_grad` and where its data is instead of its data: a range,
//! compact bytes, or chunks (listed through `hdf5-pure`'s walk of the chunk
//! index, none read; [`Chunks::decode`] undoes one chunk's shuffle,
//! deflate, fletcher32 and LZF filters), with a flag for big-endian elements; a file with a
//! dataset stored otherwise (another filter, a chunk never written)
//! answers `None` (read it whole).
//!
//! Each object is visited once, as h5py's `visititems` (nnabla's loader)
//! visits it: depth first in name order, each object by the address of its
//! object header, so a dataset behind several hard links is one parameter
//! (named by the first path in that order) read once, a group behind two
//! links is walked once and a hard-link cycle ends; soft and external links
//! are not followed. Links are resolved in every storage a group has: a
//! symbol table, compact link messages, or dense storage (a new-style group
//! of more than 8 links written with `libver="latest"`, or one tracking
//! creation order: a fractal heap and its version-2 B-tree, read by this
//! crate with every checksum checked and every read bounded). The depth
//! limit [`MAX_DEPTH`] stays as a guard.
//!
//! Chunked data is charged to one [`tensor_core::InflateBudget`] for the
//! input before it is inflated (every chunk of the grid at its decoded
//! size): [`ReadOptions::budget`] when given (an `.nnp` shares its
//! archive's budget with its `parameter.h5`), else
//! `InflateBudget::new(&limits, input_len)`; past it the read is refused
//! with `tensor_core::Error::InflateLimit` naming the dataset. A chunk
//! larger than both its dataset and [`MAX_CHUNK_OVER`] is refused before
//! anything is inflated, and no chunk inflates to more than its size.
//!
//! # Entry points
//!
//! | to | call |
//! |---|---|
//! | read bytes (contiguous data borrowed) | [`parse`]`(bytes)`, [`parse_with`]`(bytes, &ReadOptions)`; [`from_vec`] for an owned buffer |
//! | read a memory map (`'static`, zero-copy) | [`from_map`]`(&Arc<MappedFile>, &ReadOptions)`; [`from_map_range`] for a file inside a map (an archive member) |
//! | map a file and read it | [`open`]`(path)`, [`open_with`]`(path, &ReadOptions)` |
//! | locate each parameter's data without reading it (a file read by slices) | [`locate`]`(len, read, &ReadOptions)` |
//! | write to any `io::Write` | [`write()`]`(w, &params)`, [`write_tensors`]`(w, (name, &tensor, need_grad))` |
//! | write tensor by tensor (streaming) | [`StreamWriter::new`]`(w, &[ParamSpec])` or [`StreamWriter::with_datasets`]`(w, &[DatasetSpec])`, then [`StreamWriter::write_data`]`(&tensor)` per dataset, [`StreamWriter::finish`] |
//! | write a file atomically | [`save`]`(path, &params)` |
//! | solver states | [`solver_state_from_map_range`], [`write_solver_state`], [`save_solver_state`] |
//!
//! Of the crate's [`ReadOptions`], `limits` and `budget` apply to `.h5` files; the
//! writer has no options.
//!
//! # Writing
//!
//! One contiguous little-endian dataset per parameter, in groups split on
//! `/`, with `need_grad` (h5py's numpy-bool enum `{FALSE = 0, TRUE = 1}`
//! over `int8`, a scalar) and `index` (`int64` scalar, the position) on
//! **every** dataset, exactly as nnabla's Python `save_parameters` writes
//! them through h5py (`docs/formats/nnabla.md` §8). Files use the HDF5 1.8
//! objects (superblock v2, version-2 object headers, compact groups), which
//! every HDF5 ≥ 1.8 reads; all metadata comes first, then each dataset's
//! data in order, each block at a multiple of [`DATA_ALIGN`] (64) bytes so
//! readers borrow aligned slices. The layout in detail is in the `write`
//! submodule's source; every address is known before the first data byte,
//! so the data is streamed one tensor at a time ([`StreamWriter`]): writing
//! holds no copy of the parameters (a column-major tensor is reordered into
//! one temporary buffer at a time). Element types: f16, f32, f64, every
//! integer of 1/2/4/8 bytes, bool ([`can_hold`]).
//!
//! ```
//! use nnp_archive::{h5, Parameter};
//! use tensor_core::{Limits, Tensor};
//!
//! let w = Tensor::from_values([2, 2], &[1f32, 2., 3., 4.])?;
//! let s = Tensor::from_values([], &[0.5f32])?;
//! let mut file = Vec::new();
//! h5::write_tensors(&mut file, [("fc/W", &w, true), ("scale", &s, false)])?;
//!
//! let params = h5::parse(&file)?;
//! let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
//! assert_eq!(names, ["fc/W", "scale"]);
//! assert_eq!(&*params[0].tensor.view::<f32>()?, &[1., 2., 3., 4.]);
//! assert!(params[0].tensor.storage().is_zero_copy());
//! assert!(!params[1].need_grad);
//! assert_eq!(params[1].tensor.dims(), &[] as &[usize]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use tensor_core::{Bytes, DType, MappedFile};

use crate::{Error, Parameter, ReadOptions, Result};

mod btree2;
mod chunks;
mod decode;
mod dense;
mod links;
mod locate;
mod lookup3;
mod save;
mod solver;
#[cfg(test)]
mod tests;
mod walk;
mod write;

pub use walk::MAX_CHUNK_OVER;
use walk::{Input, read_core};

pub use chunks::{ChunkAt, ChunkFilter, Chunks};
pub use locate::{Located, Storage, locate};
pub use lookup3::checksum;

pub(crate) use write::H5Stream;
pub use write::{DATA_ALIGN, DatasetSpec, StreamWriter};

use decode::{describe, finish, map_dtype, sort_like_nnabla, truthy};
pub use save::{NAME_ATTRIBUTE, can_hold, h5_path, save, write, write_tensors};
use save::{Node, insert_path, write_all_of};
pub use solver::{SolverState, save_solver_state, solver_state_from_map_range, write_solver_state};

/// The deepest group nesting the reader follows (a guard against hard-link cycles).
pub const MAX_DEPTH: usize = 256;

/// True when `bytes` start with the HDF5 signature (at offset 0; files with a
/// user block are still read, this check is only a quick sniff).
pub fn is_h5(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89HDF\r\n\x1a\n")
}

/// Checks the superblock's end-of-file address against the bytes present,
/// as libhdf5 does ("truncated file"); `hdf5-pure` tolerates a short file
/// as long as the objects it reads are present.
fn check_superblock(bytes: &[u8]) -> Result<()> {
    check_superblock_by(bytes.len() as u64, |at, buf| {
        let s = usize::try_from(at).ok();
        let src = s.and_then(|s| bytes.get(s..s.checked_add(buf.len())?));
        buf.copy_from_slice(src.ok_or(std::io::ErrorKind::UnexpectedEof)?);
        Ok(())
    })
}

/// [`check_superblock`] for a file of `len` bytes that `read` reads.
fn check_superblock_by(
    len: u64,
    mut read: impl FnMut(u64, &mut [u8]) -> std::io::Result<()>,
) -> Result<()> {
    let bad = |message: String| Error::Hdf5 {
        context: "superblock".into(),
        message,
    };
    let io = |e: std::io::Error| Error::Io {
        context: "HDF5 superblock".into(),
        source: e,
    };
    // The signature is at 0 or at a power of two from 512 (after a user block).
    let mut at = 0u64;
    loop {
        let mut sig = [0u8; 8];
        if at.checked_add(8).is_some_and(|e| e <= len) {
            read(at, &mut sig).map_err(io)?;
            if &sig == b"\x89HDF\r\n\x1a\n" {
                break;
            }
        }
        at = if at == 0 { 512 } else { at.saturating_mul(2) };
        if at >= len {
            return Err(bad("no HDF5 signature found".into()));
        }
    }
    // every field read below is in the superblock's first 64 bytes
    let mut head = vec![0u8; (len - at).min(64) as usize];
    read(at, &mut head).map_err(io)?;
    let sb = &head[..];
    let byte = |i: usize| {
        sb.get(i)
            .copied()
            .ok_or_else(|| bad(format!("the superblock at offset {at} is truncated")))
    };
    let version = byte(8)?;
    let (osize, addr_start) = match version {
        0 => (byte(13)?, 24usize),
        1 => (byte(13)?, 28),
        2 | 3 => (byte(9)?, 12),
        v => return Err(bad(format!("unknown superblock version {v}"))),
    };
    let o = usize::from(osize);
    if !matches!(o, 2 | 4 | 8) {
        return Err(bad(format!("size of offsets is {o}")));
    }
    let read = |i: usize| -> Result<u64> {
        let b = sb
            .get(i..i + o)
            .ok_or_else(|| bad(format!("the superblock at offset {at} is truncated")))?;
        let mut a = [0u8; 8];
        a[..o].copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    };
    let undefined = if o == 8 {
        u64::MAX
    } else {
        (1u64 << (o * 8)) - 1
    };
    let base = read(addr_start)?;
    let eof = read(addr_start + 2 * o)?;
    if eof != undefined {
        let end = base.checked_add(eof);
        if end.is_none_or(|e| e > len) {
            return Err(bad(format!(
                "the superblock says the file ends at byte {}, but it has {} (truncated file)",
                end.map_or_else(|| "beyond 2^64".to_string(), |e| e.to_string()),
                len
            )));
        }
    }
    Ok(())
}

fn h5err(context: impl Into<String>, e: hdf5_pure::Error) -> Error {
    Error::Hdf5 {
        context: context.into(),
        message: e.to_string(),
    }
}

/// Where one dataset's bytes are: a range of the input, or an owned buffer.
enum RawData {
    Range(Range<u64>),
    Owned(Vec<u8>),
    /// Not contiguous (compact, chunked, never written), not read
    /// ([`Mode::Locate`]).
    Elsewhere,
    /// Chunked, each chunk located ([`Mode::Locate`]).
    Chunks(chunks::Chunks),
}

/// What the walk does with a dataset's data.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Locates contiguous data, reads any other.
    Read,
    /// Locates contiguous data, reads nothing.
    Locate,
}

/// Runs one call into `hdf5-pure`: once over a source that holds the whole
/// file ([`Once`]); over a source read by slices, again until no read
/// missed its cache (`locate::Fetch`).
trait Calls {
    fn call<T>(&self, f: impl FnMut() -> T) -> Result<T>;

    /// [`Calls::call`], the call reading at most `budget` bytes (where the
    /// source counts them; `locate::OVER_BUDGET` when it reads more).
    fn call_within<T>(&self, budget: u64, f: impl FnMut() -> T) -> Result<T> {
        let _ = budget;
        self.call(f)
    }
}

/// Every call runs once.
struct Once;

impl Calls for Once {
    fn call<T>(&self, mut f: impl FnMut() -> T) -> Result<T> {
        Ok(f())
    }
}

struct RawParam {
    name: String,
    dtype: DType,
    dims: Vec<usize>,
    /// `None` when the dataset has no `need_grad` (solver states).
    need_grad: Option<bool>,
    index: Option<i64>,
    data: RawData,
    /// Big-endian elements, to be converted to little-endian.
    swap: bool,
}

/// A `hdf5-pure` source over a range of a memory map (shared, `'static`).
struct MapSource {
    map: Arc<MappedFile>,
    range: Range<usize>,
}

impl hdf5_pure::Source for MapSource {
    fn len(&self) -> u64 {
        self.range.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), hdf5_pure::FormatError> {
        let eof = || hdf5_pure::FormatError::UnexpectedEof {
            expected: buf.len(),
            available: 0,
        };
        let off = usize::try_from(offset).map_err(|_| eof())?;
        let start = self.range.start.checked_add(off).ok_or_else(eof)?;
        let end = start.checked_add(buf.len()).ok_or_else(eof)?;
        if end > self.range.end {
            return Err(hdf5_pure::FormatError::UnexpectedEof {
                expected: buf.len(),
                available: self.range.end.saturating_sub(start),
            });
        }
        let src = self.map.as_bytes().get(start..end).ok_or_else(eof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// A `hdf5-pure` source over borrowed bytes (for the link walk).
struct SliceSource<'a>(&'a [u8]);

impl hdf5_pure::Source for SliceSource<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), hdf5_pure::FormatError> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|s| self.0.get(s..s.checked_add(buf.len())?));
        buf.copy_from_slice(src.ok_or(hdf5_pure::FormatError::UnexpectedEof {
            expected: buf.len(),
            available: 0,
        })?);
        Ok(())
    }
}

/// A copy of `bytes` (a tensor's data), or an error when it does not fit
/// in memory.
fn copy_of(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut v = tensor_core::try_with_capacity("HDF5 dataset", bytes.len())?;
    v.extend_from_slice(bytes);
    Ok(v)
}

/// Reads every parameter of the `.h5` file in `bytes` with the default
/// options, borrowing contiguous data from `bytes` (see [`parse_with`]).
pub fn parse(bytes: &[u8]) -> Result<Vec<Parameter<'_>>> {
    parse_with(bytes, &ReadOptions::default())
}

/// Reads every parameter of the `.h5` file in `bytes`, borrowing contiguous
/// data from `bytes`. Of `opts`, the limits and the budget apply.
///
/// `hdf5-pure` parses from an owned buffer, so the file is copied once for
/// parsing; use [`from_map`] (or [`open`]) to avoid that copy.
pub fn parse_with<'a>(bytes: &'a [u8], opts: &ReadOptions) -> Result<Vec<Parameter<'a>>> {
    let limits = &opts.limits;
    check_superblock(bytes)?;
    limits.check_alloc("HDF5 file copy", bytes.len() as u64)?;
    let file = hdf5_pure::File::from_bytes(copy_of(bytes)?).map_err(|e| h5err("open", e))?;
    let budget = opts.budget_for(bytes.len() as u64);
    let input = Input {
        src: &SliceSource(bytes),
        len: bytes.len() as u64,
        budget: &budget,
    };
    let raw = read_core(&file, &input, limits, Mode::Read, &Once)?;
    finish(raw, |r| Ok(Bytes::Borrowed(&bytes[r])))
}

/// Reads every parameter of the `.h5` file held in `bytes` (taken by value:
/// no copy for parsing; contiguous data is copied out into each tensor).
pub fn from_vec(bytes: Vec<u8>, opts: &ReadOptions) -> Result<Vec<Parameter<'static>>> {
    let limits = &opts.limits;
    check_superblock(&bytes)?;
    let len = bytes.len();
    let file = hdf5_pure::File::from_bytes(bytes).map_err(|e| h5err("open", e))?;
    let buf = file.as_bytes();
    let budget = opts.budget_for(len as u64);
    let input = Input {
        src: &SliceSource(buf),
        len: len as u64,
        budget: &budget,
    };
    let raw = read_core(&file, &input, limits, Mode::Read, &Once)?;
    finish(raw, |r| Ok(Bytes::Owned(copy_of(&buf[r])?)))
}

/// Reads every parameter of a memory-mapped `.h5` file. Nothing is copied:
/// metadata is read on demand and contiguous tensors share the map.
pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<Vec<Parameter<'static>>> {
    from_map_range(map, 0..map.len(), opts)
}

/// Reads every parameter of the `.h5` file at `range` of a memory map
/// (e.g. a stored `parameter.h5` inside an `.nnp`). Nothing is copied:
/// metadata is read on demand and contiguous tensors share the map.
pub fn from_map_range(
    map: &Arc<MappedFile>,
    range: Range<usize>,
    opts: &ReadOptions,
) -> Result<Vec<Parameter<'static>>> {
    let (raw, base) = read_map_range(map, range, opts)?;
    finish(raw, |r| {
        Ok(Bytes::Mapped(Arc::clone(map), base + r.start..base + r.end))
    })
}

/// Every dataset of the HDF5 file at `range` of a map (contiguous data
/// located, any other read), with where the file starts in the map.
fn read_map_range(
    map: &Arc<MappedFile>,
    range: Range<usize>,
    opts: &ReadOptions,
) -> Result<(Vec<RawParam>, usize)> {
    let (file, base, len) = open_range(map, range.clone())?;
    let budget = opts.budget_for(len as u64);
    let input = Input {
        src: &MapSource {
            map: Arc::clone(map),
            range,
        },
        len: len as u64,
        budget: &budget,
    };
    Ok((
        read_core(&file, &input, &opts.limits, Mode::Read, &Once)?,
        base,
    ))
}

/// The HDF5 file at `range` of a map, with where it starts and its length.
fn open_range(
    map: &Arc<MappedFile>,
    range: Range<usize>,
) -> Result<(hdf5_pure::File, usize, usize)> {
    if range.end > map.len() || range.start > range.end {
        return Err(Error::Hdf5 {
            context: "open".into(),
            message: format!("range {range:?} is outside the {}-byte input", map.len()),
        });
    }
    check_superblock(&map[range.clone()])?;
    let (base, len) = (range.start, range.len());
    let src = MapSource {
        map: Arc::clone(map),
        range,
    };
    let file = hdf5_pure::File::from_source(src).map_err(|e| h5err("open", e))?;
    Ok((file, base, len))
}

/// Memory-maps the `.h5` file at `path` and reads every parameter without
/// copying, with the default options.
pub fn open(path: impl AsRef<Path>) -> Result<Vec<Parameter<'static>>> {
    open_with(path, &ReadOptions::default())
}

/// Memory-maps the `.h5` file at `path` and reads every parameter without
/// copying (see [`from_map`]).
pub fn open_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Vec<Parameter<'static>>> {
    let map = MappedFile::open(path)?;
    from_map(&map, opts)
}
