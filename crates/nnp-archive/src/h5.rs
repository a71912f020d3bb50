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
//! `toplevel`). Parameters come back in the order nnabla's Python loader
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
//! are not followed. Known gap: the links of a group in dense storage (a
//! new-style group of more than 8 links, written with
//! `libver="latest"`) are not resolved to addresses; its children are
//! visited through every link, bounded by the depth limit [`MAX_DEPTH`],
//! [`tensor_core::Limits::max_tensors`] and the inflation budget.
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

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use hdf5_pure::{AttrValue, Datatype, DatatypeByteOrder};
use tensor_core::{Bytes, DType, MappedFile, Tensor};

use crate::{Error, ParamSpec, Parameter, ReadOptions, Result};

mod chunks;
mod links;
mod locate;
mod lookup3;
mod walk;
mod write;

pub use walk::MAX_CHUNK_OVER;
use walk::{Input, read_core};

pub use chunks::{ChunkAt, ChunkFilter, Chunks};
pub use locate::{Located, Storage, locate};

pub(crate) use write::H5Stream;
pub use write::{DATA_ALIGN, DatasetSpec, StreamWriter};

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

/// A solver state as `Solver.save_states` writes it: per-parameter state
/// datasets (`<param>/m`, `<param>/v`, a scalar int64 `<param>/t`, ...)
/// without `need_grad`, which nnabla reads with `Solver.load_states` (its
/// parameter loaders refuse such a file). The tensors are in path order,
/// as h5py lists them.
#[derive(Debug, Clone)]
pub struct SolverState<'a> {
    /// `(dataset path without the leading '/', tensor)`, in path order.
    pub tensors: Vec<(String, Tensor<'a>)>,
    /// Each dataset's `index` attribute (nnabla writes the state's position
    /// in the solver for all but `t`), in the order of `tensors`.
    pub index: Vec<Option<i64>>,
}

impl SolverState<'_> {
    /// True when `e` is what reading a solver state as parameters gives
    /// (some dataset has no `need_grad`): try [`solver_state_from_map_range`].
    pub fn may_be(e: &Error) -> bool {
        matches!(e, Error::MissingNeedGrad { .. })
    }
}

/// Reads the solver state at `range` of a memory map (a standalone `.h5`
/// or an `.optimizer` member of an `.nnp`). Nothing is copied. Refused when
/// no dataset path has a state name after the parameter's
/// (`<param>/<state>`), or when datasets carry `need_grad` (a parameter
/// file).
pub fn solver_state_from_map_range(
    map: &Arc<MappedFile>,
    range: Range<usize>,
    opts: &ReadOptions,
) -> Result<SolverState<'static>> {
    let (mut raw, base) = read_map_range(map, range, opts)?;
    if let Some(r) = raw.iter().find(|r| r.need_grad.is_some()) {
        return Err(Error::BadData {
            dataset: r.name.clone(),
            reason: "has need_grad: a parameter file, not a solver state".into(),
        });
    }
    if let Some(r) = raw.iter().find(|r| !r.name.contains('/')) {
        return Err(Error::BadData {
            dataset: r.name.clone(),
            reason: "a solver state names its datasets <parameter>/<state>".into(),
        });
    }
    raw.sort_by(|a, b| a.name.cmp(&b.name));
    let index = raw.iter().map(|r| r.index).collect();
    let tensors = tensors(raw, |r| {
        Ok(Bytes::Mapped(Arc::clone(map), base + r.start..base + r.end))
    })?;
    Ok(SolverState {
        tensors: tensors.into_iter().map(|(n, t, _)| (n, t)).collect(),
        index,
    })
}

/// Writes a solver state as `Solver.save_states` does: one dataset per
/// tensor, with its `index` attribute where it has one and no `need_grad`.
/// Streams through [`StreamWriter`].
pub fn write_solver_state<W: Write>(w: W, state: &SolverState<'_>) -> Result<()> {
    let specs: Vec<DatasetSpec> = state
        .tensors
        .iter()
        .zip(state.index.iter().chain(std::iter::repeat(&None)))
        .map(|((name, t), index)| {
            let s = DatasetSpec::new(name.clone(), t.dtype(), t.dims());
            match index {
                Some(i) => s.with_index(*i),
                None => s,
            }
        })
        .collect();
    write_all_of(w, &specs, state.tensors.iter().map(|(_, t)| t))
}

/// Saves a solver state at `path`, atomically (see [`write_solver_state`]).
pub fn save_solver_state(path: impl AsRef<Path>, state: &SolverState<'_>) -> Result<()> {
    tensor_core::io::write_atomic(path, |w| write_solver_state(w, state))
}

/// The parameters of a parameter file: every dataset must have
/// `need_grad`; sorted as nnabla registers them.
fn finish<'a>(
    mut raw: Vec<RawParam>,
    range_bytes: impl FnMut(Range<usize>) -> Result<Bytes<'a>>,
) -> Result<Vec<Parameter<'a>>> {
    if let Some(r) = raw.iter().find(|r| r.need_grad.is_none()) {
        return Err(Error::MissingNeedGrad {
            dataset: r.name.clone(),
        });
    }
    sort_like_nnabla(&mut raw)?;
    Ok(tensors(raw, range_bytes)?
        .into_iter()
        .map(|(name, t, need_grad)| Parameter::new(name, t, need_grad))
        .collect())
}

/// Each dataset's tensor, sharing or copying its bytes.
fn tensors<'a>(
    raw: Vec<RawParam>,
    mut range_bytes: impl FnMut(Range<usize>) -> Result<Bytes<'a>>,
) -> Result<Vec<(String, Tensor<'a>, bool)>> {
    raw.into_iter()
        .map(|r| {
            let data = match r.data {
                RawData::Range(range) => {
                    // within the input (checked by the walk), so in usize
                    let s = usize::try_from(range.start);
                    let e = usize::try_from(range.end);
                    match (s, e) {
                        (Ok(s), Ok(e)) => range_bytes(s..e)?,
                        _ => {
                            return Err(Error::BadData {
                                dataset: r.name,
                                reason: format!("data at {range:?} is not addressable"),
                            });
                        }
                    }
                }
                RawData::Owned(v) => Bytes::Owned(v),
                RawData::Elsewhere | RawData::Chunks(_) => Bytes::Owned(Vec::new()),
            };
            let data = if r.swap {
                let mut v = match data {
                    Bytes::Owned(v) => v,
                    other => copy_of(&other)?,
                };
                swap_in_place(&mut v, r.dtype.size());
                Bytes::Owned(v)
            } else {
                data
            };
            let tensor = Tensor::new(r.dtype, r.dims, data)?;
            Ok((r.name, tensor, r.need_grad.unwrap_or(false)))
        })
        .collect()
}

fn sort_like_nnabla(v: &mut [RawParam]) -> Result<()> {
    let with = v.iter().find(|p| p.index.is_some());
    let without = v.iter().find(|p| p.index.is_none());
    if let (Some(w), Some(wo)) = (with, without) {
        return Err(Error::MixedIndex {
            with_index: w.name.clone(),
            without_index: wo.name.clone(),
        });
    }
    v.sort_by(|a, b| (a.index, &a.name).cmp(&(b.index, &b.name)));
    Ok(())
}

/// The element type of a stored datatype, and whether it is big-endian.
fn map_dtype(dt: &Datatype) -> Option<(DType, bool)> {
    let be = |o: &DatatypeByteOrder| match o {
        DatatypeByteOrder::LittleEndian => Some(false),
        DatatypeByteOrder::BigEndian => Some(true),
        _ => None,
    };
    match dt {
        Datatype::FixedPoint {
            size,
            byte_order,
            layout,
        } => {
            if layout.bit_offset != 0
                || Some(u32::from(layout.bit_precision)) != size.checked_mul(8)
            {
                return None;
            }
            let d = match (size, layout.signed) {
                (1, true) => DType::I8,
                (2, true) => DType::I16,
                (4, true) => DType::I32,
                (8, true) => DType::I64,
                (1, false) => DType::U8,
                (2, false) => DType::U16,
                (4, false) => DType::U32,
                (8, false) => DType::U64,
                _ => return None,
            };
            Some((d, be(byte_order)?))
        }
        Datatype::FloatingPoint {
            size,
            byte_order,
            layout,
        } => {
            let d = match (size, layout.exponent_size, layout.mantissa_size) {
                (2, 5, 10) => DType::F16,
                (2, 8, 7) => DType::BF16,
                (4, 8, 23) => DType::F32,
                (8, 11, 52) => DType::F64,
                _ => return None,
            };
            Some((d, be(byte_order)?))
        }
        // h5py's numpy bool: an enum over a 1-byte integer, FALSE=0, TRUE=1.
        Datatype::Enumeration {
            size: 1,
            base_type,
            members,
        } => {
            let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
            let is_bool = matches!(**base_type, Datatype::FixedPoint { size: 1, .. })
                && names.len() == 2
                && names.contains(&"FALSE")
                && names.contains(&"TRUE");
            is_bool.then_some((DType::Bool, false))
        }
        _ => None,
    }
}

fn describe(dt: &Datatype) -> String {
    let s = format!("{dt:?}");
    if s.len() > 160 {
        let mut cut = 160;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &s[..cut])
    } else {
        s
    }
}

/// nnabla tests `need_grad` for truth (`bool(value)`).
fn truthy(dataset: &str, v: &AttrValue) -> Result<bool> {
    let bad = |reason: String| Error::BadAttribute {
        dataset: dataset.to_string(),
        attr: "need_grad",
        reason,
    };
    if let AttrValue::F32(_) | AttrValue::F64(_) = v
        && let Some(f) = v.as_f64()
    {
        return Ok(f != 0.0);
    }
    if let Some(i) = v.as_i64() {
        return Ok(i != 0);
    }
    if let Some(u) = v.as_u64() {
        return Ok(u != 0);
    }
    match v.to_f64s() {
        Some(vals) if vals.len() == 1 => Ok(vals[0] != 0.0),
        Some(vals) => Err(bad(format!(
            "an array of {} values has no single truth value",
            vals.len()
        ))),
        None => Err(bad(format!("a {} is not a truth value", v.type_name()))),
    }
}

fn swap_in_place(v: &mut [u8], size: usize) {
    for c in v.chunks_exact_mut(size) {
        c.reverse();
    }
}

// ---------------------------------------------------------------- writing

/// True for the element types the `.h5` writer stores (f16, f32, f64, the
/// integers and bool).
pub fn can_hold(dtype: DType) -> bool {
    write::can_hold(dtype)
}

enum Node {
    Group(BTreeMap<String, Node>),
    Dataset(usize),
}

fn insert_path(root: &mut BTreeMap<String, Node>, name: &str, idx: usize) -> Result<()> {
    let invalid = |reason| Error::InvalidName {
        name: name.to_string(),
        reason,
    };
    let parts: Vec<&str> = name.split('/').collect();
    for p in &parts {
        if p.is_empty() {
            return Err(invalid("it has an empty path component"));
        }
        if *p == "." {
            return Err(invalid("`.` is not a link name"));
        }
        if p.contains('\0') {
            return Err(invalid("it contains NUL"));
        }
    }
    let (leaf, groups) = match parts.split_last() {
        Some(x) => x,
        None => return Err(invalid("it is empty")),
    };
    let mut cur = root;
    for g in groups {
        let node = cur
            .entry((*g).to_string())
            .or_insert_with(|| Node::Group(BTreeMap::new()));
        cur = match node {
            Node::Group(m) => m,
            Node::Dataset(_) => return Err(invalid("a prefix of it is another parameter")),
        };
    }
    match cur.get(*leaf) {
        Some(Node::Dataset(_)) => Err(invalid("it is given twice")),
        Some(Node::Group(_)) => Err(invalid("it is also a prefix of another parameter")),
        None => {
            cur.insert((*leaf).to_string(), Node::Dataset(idx));
            Ok(())
        }
    }
}

/// Writes the datasets of `specs` with the data of `tensors` (same order).
fn write_all_of<'t, 'b: 't, W: Write>(
    w: W,
    specs: &[DatasetSpec],
    tensors: impl IntoIterator<Item = &'t Tensor<'b>>,
) -> Result<()> {
    let mut sw = StreamWriter::with_datasets(w, specs)?;
    for t in tensors {
        sw.write_data(t)?;
    }
    sw.finish().map(|_| ())
}

/// Writes an nnabla `.h5` parameter file to `w`: one dataset per
/// `(name, tensor, need_grad)`, `index` = position in the iteration (the
/// same as [`write()`], from borrowed tensors).
///
/// Streams through [`StreamWriter`]: metadata first, then each tensor's
/// bytes straight from the tensor (a column-major tensor is reordered into
/// one temporary buffer at a time).
pub fn write_tensors<'t, 'b: 't, W: Write>(
    w: W,
    params: impl IntoIterator<Item = (&'t str, &'t Tensor<'b>, bool)>,
) -> Result<()> {
    let items: Vec<(&str, &Tensor<'b>, bool)> = params.into_iter().collect();
    let specs = items
        .iter()
        .enumerate()
        .map(|(i, (name, t, need_grad))| {
            DatasetSpec::parameter(&ParamSpec::new(*name, t.dtype(), t.dims(), *need_grad), i)
        })
        .collect::<Result<Vec<_>>>()?;
    write_all_of(w, &specs, items.iter().map(|(_, t, _)| *t))
}

/// Writes an nnabla `.h5` parameter file to `w`: one dataset per parameter,
/// in their order (see [`write_tensors`]).
pub fn write<'t, 'b: 't, W: Write>(
    w: W,
    params: impl IntoIterator<Item = &'t Parameter<'b>>,
) -> Result<()> {
    write_tensors(
        w,
        params
            .into_iter()
            .map(|p| (p.name.as_str(), &p.tensor, p.need_grad)),
    )
}

/// Saves parameters as an `.h5` file at `path`, atomically (temporary file, then rename).
pub fn save<'t, 'b: 't>(
    path: impl AsRef<Path>,
    params: impl IntoIterator<Item = &'t Parameter<'b>>,
) -> Result<()> {
    tensor_core::io::write_atomic(path, |w| write(w, params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdf5_pure::{FileBuilder, FloatingPointLayout, Layout};
    use tensor_core::Limits;

    fn t32(dims: &[usize], v: &[f32]) -> Tensor<'static> {
        Tensor::from_values(dims.to_vec(), v).unwrap()
    }

    #[test]
    fn round_trip_dtypes_shapes_and_need_grad() {
        let a = t32(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        let b = Tensor::from_values(Vec::<usize>::new(), &[7.5f64]).unwrap();
        let c = Tensor::from_values([1, 2, 1, 2], &[1i32, -2, 3, -4]).unwrap();
        let d = Tensor::from_values([3], &[half::f16::from_f32(1.5); 3]).unwrap();
        let e = Tensor::new(DType::Bool, [2], vec![1u8, 0]).unwrap();
        let mut buf = Vec::new();
        write_tensors(
            &mut buf,
            [
                ("z/W", &a, true),
                ("a/scalar", &b, false),
                ("top", &c, true),
                ("z/y/half", &d, false),
                ("mask", &e, false),
            ],
        )
        .unwrap();
        let ps = parse(&buf).unwrap();
        let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["z/W", "a/scalar", "top", "z/y/half", "mask"]);
        assert_eq!(ps[0].tensor.bytes(), a.bytes());
        assert!(ps[0].need_grad && !ps[1].need_grad && ps[2].need_grad);
        assert_eq!(ps[1].tensor.dtype(), DType::F64);
        assert!(ps[1].tensor.dims().is_empty());
        assert_eq!(ps[2].tensor.dims(), &[1, 2, 1, 2]);
        assert_eq!(ps[2].tensor.bytes(), c.bytes());
        assert_eq!(ps[3].tensor.dtype(), DType::F16);
        assert_eq!(ps[3].tensor.bytes(), d.bytes());
        assert_eq!(ps[4].tensor.dtype(), DType::Bool);
        assert_eq!(ps[4].tensor.bytes(), &[1, 0]);
        // owned reader agrees
        let owned = from_vec(buf.clone(), &ReadOptions::default()).unwrap();
        assert_eq!(owned.len(), 5);
        assert_eq!(owned[0].tensor.bytes(), a.bytes());
    }

    /// Every object header after the superblock, checked: signature,
    /// version 2, checksum; returns where the metadata ends.
    fn check_headers(file: &[u8]) -> usize {
        assert_eq!(&file[..8], b"\x89HDF\r\n\x1a\n");
        assert_eq!(file[8], 2);
        let sum = lookup3::checksum(&file[..44]);
        assert_eq!(&file[44..48], &sum.to_le_bytes());
        let eof = u64::from_le_bytes(file[28..36].try_into().unwrap());
        assert_eq!(eof, file.len() as u64);
        let mut at = 48;
        while file.get(at..at + 4) == Some(b"OHDR") {
            assert_eq!(file[at + 4], 2);
            let width = 1usize << (file[at + 5] & 3);
            let mut size = [0u8; 8];
            size[..width].copy_from_slice(&file[at + 6..at + 6 + width]);
            let end = at + 6 + width + u64::from_le_bytes(size) as usize;
            let sum = lookup3::checksum(&file[at..end]);
            assert_eq!(&file[end..end + 4], &sum.to_le_bytes(), "header at {at}");
            at = end + 4;
        }
        at
    }

    fn le<T: Copy>(v: &[T], f: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }

    #[test]
    fn every_dtype_round_trips_aligned_and_borrowed() {
        let f16s: Vec<half::f16> = [1.5f32, -0.25, 65504.0]
            .iter()
            .map(|&x| half::f16::from_f32(x))
            .collect();
        let ts = vec![
            ("f16", Tensor::from_values([3], &f16s).unwrap()),
            ("f32", t32(&[2, 2], &[1., -2., 3.5, f32::MAX])),
            ("f64", Tensor::from_values([2], &[1e-300f64, -7.0]).unwrap()),
            (
                "i8",
                Tensor::from_values([3], &[i8::MIN, 0, i8::MAX]).unwrap(),
            ),
            (
                "i16",
                Tensor::from_values([2], &[i16::MIN, i16::MAX]).unwrap(),
            ),
            (
                "i32",
                Tensor::from_values([2], &[i32::MIN, i32::MAX]).unwrap(),
            ),
            (
                "i64",
                Tensor::from_values([2], &[i64::MIN, i64::MAX]).unwrap(),
            ),
            ("u8", Tensor::from_values([2], &[0u8, u8::MAX]).unwrap()),
            ("u16", Tensor::from_values([2], &[1u16, u16::MAX]).unwrap()),
            ("u32", Tensor::from_values([2], &[1u32, u32::MAX]).unwrap()),
            ("u64", Tensor::from_values([2], &[1u64, u64::MAX]).unwrap()),
            (
                "bool",
                Tensor::new(DType::Bool, [4], vec![1u8, 0, 0, 1]).unwrap(),
            ),
        ];
        let mut file = Vec::new();
        write_tensors(
            &mut file,
            ts.iter().enumerate().map(|(i, (n, t))| (*n, t, i % 3 == 0)),
        )
        .unwrap();
        let meta_end = check_headers(&file);
        let back = parse(&file).unwrap();
        assert_eq!(back.len(), ts.len());
        for (i, ((name, t), p)) in ts.iter().zip(&back).enumerate() {
            assert_eq!(p.name, *name);
            assert_eq!(p.tensor.dtype(), t.dtype(), "{name}");
            assert_eq!(p.tensor.dims(), t.dims(), "{name}");
            assert_eq!(p.tensor.bytes(), t.bytes(), "{name}");
            assert_eq!(p.need_grad, i % 3 == 0, "{name}");
            assert!(p.tensor.storage().is_zero_copy(), "{name}");
            let off = p.tensor.bytes().as_ptr() as usize - file.as_ptr() as usize;
            assert_eq!(off % DATA_ALIGN as usize, 0, "{name} at {off}");
            assert!(
                off >= meta_end,
                "{name}: data before the end of the metadata"
            );
        }
        // the attributes have h5py's types: need_grad the bool enum, index int64
        let h = hdf5_pure::File::from_bytes(file.clone()).unwrap();
        let ds = h.dataset("f32").unwrap();
        let attrs = ds.attrs().unwrap();
        assert!(
            matches!(attrs.get("index"), Some(AttrValue::I64(1))),
            "{attrs:?}"
        );
        let ng = attrs.get("need_grad").unwrap();
        assert_eq!(ng.as_i64(), Some(0), "{ng:?}");
    }

    #[test]
    fn scalars_empty_deep_wide_and_non_ascii() {
        let scalar = Tensor::from_values(Vec::<usize>::new(), &[2.5f32]).unwrap();
        let empty = Tensor::new(DType::F32, [0, 3], Vec::<u8>::new()).unwrap();
        let empty_i = Tensor::new(DType::I64, [4, 0], Vec::<u8>::new()).unwrap();
        let deep_name = (0..40)
            .map(|i| format!("g{i}"))
            .collect::<Vec<_>>()
            .join("/");
        let small = t32(&[1], &[9.]);
        let mut items: Vec<(String, &Tensor<'_>, bool)> = vec![
            ("s".into(), &scalar, false),
            ("e".into(), &empty, true),
            ("z/ei".into(), &empty_i, true),
            (deep_name.clone(), &small, true),
            ("日本/重み".into(), &small, false),
            ("ü".into(), &scalar, true),
        ];
        for i in 0..100 {
            items.push((format!("wide/p{i:03}"), &small, i % 2 == 1));
        }
        items.push((format!("long/{}", "n".repeat(300)), &small, true));
        let mut file = Vec::new();
        write_tensors(
            &mut file,
            items.iter().map(|(n, t, g)| (n.as_str(), *t, *g)),
        )
        .unwrap();
        check_headers(&file);
        let back = parse(&file).unwrap();
        let got: Vec<(&str, &[usize], &[u8], bool)> = back
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.tensor.dims(),
                    p.tensor.bytes(),
                    p.need_grad,
                )
            })
            .collect();
        let want: Vec<(&str, &[usize], &[u8], bool)> = items
            .iter()
            .map(|(n, t, g)| (n.as_str(), t.dims(), t.bytes(), *g))
            .collect();
        assert_eq!(got, want);
        // the zero-size datasets have an undefined address and no bytes
        let h = hdf5_pure::File::from_bytes(file.clone()).unwrap();
        match h.dataset("e").unwrap().layout().unwrap() {
            Layout::Contiguous { address, size } => assert_eq!((address, size), (None, 0)),
            other => panic!("{other:?}"),
        }
        // also through the memory map
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.h5");
        std::fs::write(&path, &file).unwrap();
        let mapped = open(&path).unwrap();
        assert_eq!(mapped.len(), items.len());
        assert!(mapped[3].tensor.storage().is_zero_copy());
    }

    #[test]
    fn a_file_without_datasets() {
        let mut file = Vec::new();
        write_tensors(&mut file, std::iter::empty()).unwrap();
        assert_eq!(check_headers(&file), file.len());
        assert!(parse(&file).unwrap().is_empty());
    }

    #[test]
    fn column_major_tensors_are_written_row_major() {
        use tensor_core::MemoryOrder;
        // [[1, 2, 3], [4, 5, 6]] stored column-major
        let cm = Tensor::with_order(
            DType::F32,
            [2, 3],
            MemoryOrder::ColumnMajor,
            le(&[1f32, 4., 2., 5., 3., 6.], |x| x.to_le_bytes().to_vec()),
        )
        .unwrap();
        let mut file = Vec::new();
        write_tensors(&mut file, [("w", &cm, true)]).unwrap();
        let back = parse(&file).unwrap();
        assert_eq!(
            &*back[0].tensor.view::<f32>().unwrap(),
            &[1., 2., 3., 4., 5., 6.]
        );
    }

    #[test]
    fn stream_writer_checks_what_it_is_given() {
        let specs = [
            ParamSpec::new("a", DType::F32, [2], true),
            ParamSpec::new("b/c", DType::I32, [], false),
        ];
        let a = t32(&[2], &[1., 2.]);
        let c = Tensor::from_values(Vec::<usize>::new(), &[5i32]).unwrap();
        let mut w = StreamWriter::new(Vec::new(), &specs).unwrap();
        assert_eq!(w.next_dataset().unwrap().name, "a");
        // wrong dtype, wrong dims: refused, nothing written, still usable
        let len = w.get_ref().len();
        for bad in [
            Tensor::from_values([2], &[1f64, 2.]).unwrap(),
            t32(&[1, 2], &[1., 2.]),
        ] {
            let e = w.write_data(&bad).unwrap_err();
            assert!(matches!(e, Error::Stream { .. }), "{e}");
        }
        assert_eq!(w.get_ref().len(), len);
        w.write_data(&a).unwrap();
        let file_len = w.file_len();
        // finishing early is an error
        let mut early = StreamWriter::new(Vec::new(), &specs).unwrap();
        early.write_data(&a).unwrap();
        assert!(matches!(early.finish(), Err(Error::Stream { .. })));
        w.write_data(&c).unwrap();
        assert!(w.next_dataset().is_none());
        assert!(matches!(w.write_data(&c), Err(Error::Stream { .. })));
        let file = w.finish().unwrap();
        assert_eq!(file.len() as u64, file_len);
        let back = parse(&file).unwrap();
        assert_eq!(back[1].name, "b/c");
        assert!(back[0].need_grad && !back[1].need_grad);
        // names and types are refused before anything is written
        let mut out = Vec::new();
        let bad = [ParamSpec::new("a//b", DType::F32, [1], true)];
        assert!(matches!(
            StreamWriter::new(&mut out, &bad),
            Err(Error::InvalidName { .. })
        ));
        let bad = [ParamSpec::new("c", DType::C64, [1], true)];
        assert!(matches!(
            StreamWriter::new(&mut out, &bad),
            Err(Error::UnsupportedDtype { .. })
        ));
        let deep = vec!["g"; MAX_DEPTH + 1].join("/");
        let bad = [ParamSpec::new(deep, DType::F32, [1], true)];
        assert!(matches!(
            StreamWriter::new(&mut out, &bad),
            Err(Error::InvalidName { .. })
        ));
        let bad = [ParamSpec::new("r", DType::F32, vec![1; 33], true)];
        assert!(StreamWriter::new(&mut out, &bad).is_err());
        let bad = [ParamSpec::new("huge", DType::F64, [usize::MAX, 2], true)];
        assert!(StreamWriter::new(&mut out, &bad).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn io_errors_poison_the_writer() {
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::other("disk full"));
                }
                let n = b.len().min(self.0);
                self.0 -= n;
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let specs = [ParamSpec::new("a", DType::F32, [1000], true)];
        let a = t32(&[1000], &[0.5; 1000]);
        let mut w = StreamWriter::new(Full(1000), &specs).unwrap();
        assert!(matches!(w.write_data(&a), Err(Error::Io { .. })));
        assert!(matches!(w.write_data(&a), Err(Error::Stream { .. })));
        assert!(StreamWriter::new(Full(10), &specs).is_err());
    }

    #[test]
    fn solver_state_round_trips_with_its_index_attributes() {
        let m = t32(&[2], &[0.1, 0.2]);
        let v = t32(&[2], &[0.3, 0.4]);
        let t = Tensor::from_values(Vec::<usize>::new(), &[7i64]).unwrap();
        let state = SolverState {
            tensors: vec![
                ("fc/W/m".into(), m.clone()),
                ("fc/W/t".into(), t.clone()),
                ("fc/W/v".into(), v.clone()),
            ],
            index: vec![Some(0), None, Some(1)],
        };
        let mut file = Vec::new();
        write_solver_state(&mut file, &state).unwrap();
        check_headers(&file);
        assert!(matches!(parse(&file), Err(Error::MissingNeedGrad { .. })));
        let map = MappedFile::from_vec(file.clone());
        let back =
            solver_state_from_map_range(&map, 0..file.len(), &ReadOptions::default()).unwrap();
        assert_eq!(back.index, state.index);
        for ((n1, t1), (n2, t2)) in back.tensors.iter().zip(&state.tensors) {
            assert_eq!((n1, t1.dims(), t1.bytes()), (n2, t2.dims(), t2.bytes()));
        }
    }

    #[test]
    fn names_that_cannot_be_stored() {
        let a = t32(&[1], &[1.]);
        for bad in [
            ["a//b", "x"],
            ["/a", "x"],
            ["a", "a/b"],
            ["a/b", "a"],
            ["a", "a"],
            ["", "x"],
        ] {
            let mut buf = Vec::new();
            let e = write_tensors(&mut buf, [(bad[0], &a, true), (bad[1], &a, true)]).unwrap_err();
            assert!(matches!(e, Error::InvalidName { .. }), "{bad:?}: {e}");
        }
        let c = Tensor::new(DType::C64, [1], vec![0u8; 8]).unwrap();
        let e = write_tensors(Vec::new(), [("c", &c, true)]).unwrap_err();
        assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    }

    #[test]
    fn sort_rules() {
        let mk = |n: &str, i: Option<i64>| RawParam {
            name: n.into(),
            dtype: DType::F32,
            dims: vec![],
            need_grad: Some(true),
            index: i,
            data: RawData::Owned(vec![0; 4]),
            swap: false,
        };
        let mut v = vec![mk("b", Some(0)), mk("a", Some(1)), mk("c", Some(0))];
        sort_like_nnabla(&mut v).unwrap();
        let n: Vec<_> = v.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(n, ["b", "c", "a"]);
        let mut v = vec![mk("b", None), mk("a", None)];
        sort_like_nnabla(&mut v).unwrap();
        assert_eq!(v[0].name, "a");
        let mut v = vec![mk("b", None), mk("a", Some(0))];
        assert!(matches!(
            sort_like_nnabla(&mut v),
            Err(Error::MixedIndex { .. })
        ));
    }

    /// Files shaped like nnabla's C++ writer (int32 need_grad/index), with
    /// other attribute types, missing need_grad and big-endian data.
    fn custom(build: impl FnOnce(&mut FileBuilder)) -> Vec<u8> {
        let mut fb = FileBuilder::new();
        build(&mut fb);
        fb.finish().unwrap()
    }

    #[test]
    fn cpp_writer_int32_attributes_and_other_truth_values() {
        let f = custom(|fb| {
            let mut g = fb.create_group("fc");
            g.create_dataset("W")
                .with_f32_data(&[1.0, 2.0])
                .set_attr("need_grad", AttrValue::I32(1))
                .set_attr("index", AttrValue::I32(1));
            g.create_dataset("b")
                .with_f64_data(&[3.0])
                .set_attr("need_grad", AttrValue::I32(0))
                .set_attr("index", AttrValue::I32(0));
            g.create_dataset("u")
                .with_u16_data(&[7, 8])
                .set_attr("need_grad", AttrValue::F32(0.5))
                .set_attr("index", AttrValue::I64(2));
            fb.add_group(g.finish());
        });
        let ps = parse(&f).unwrap();
        let n: Vec<_> = ps.iter().map(|p| (p.name.as_str(), p.need_grad)).collect();
        assert_eq!(n, [("fc/b", false), ("fc/W", true), ("fc/u", true)]);
        assert_eq!(ps[2].tensor.dtype(), DType::U16);
    }

    #[test]
    fn refusals_nnabla_also_refuses() {
        let missing = custom(|fb| {
            fb.create_dataset("x").with_f32_data(&[1.0]);
        });
        assert!(matches!(
            parse(&missing),
            Err(Error::MissingNeedGrad { .. })
        ));
        let mixed = custom(|fb| {
            fb.create_dataset("x")
                .with_f32_data(&[1.0])
                .set_attr("need_grad", AttrValue::I8(1))
                .set_attr("index", AttrValue::I64(0));
            fb.create_dataset("y")
                .with_f32_data(&[1.0])
                .set_attr("need_grad", AttrValue::I8(1));
        });
        let e = parse(&mixed).unwrap_err();
        assert!(matches!(e, Error::MixedIndex { .. }), "{e}");
        let none = custom(|fb| {
            for n in ["y", "x"] {
                fb.create_dataset(n)
                    .with_f32_data(&[1.0])
                    .set_attr("need_grad", AttrValue::I8(1));
            }
        });
        let ps = parse(&none).unwrap();
        assert_eq!(ps[0].name, "x");
        let stringy = custom(|fb| {
            fb.create_dataset("x")
                .with_f32_data(&[1.0])
                .set_attr("need_grad", AttrValue::String("yes".into()));
        });
        assert!(matches!(parse(&stringy), Err(Error::BadAttribute { .. })));
    }

    #[test]
    fn big_endian_data_becomes_little_endian() {
        let be_f32 = Datatype::FloatingPoint {
            size: 4,
            byte_order: DatatypeByteOrder::BigEndian,
            layout: FloatingPointLayout::IEEE754_BINARY32,
        };
        let f = custom(|fb| {
            fb.create_dataset("x")
                .with_raw_data(be_f32, 1.5f32.to_be_bytes().to_vec(), 1)
                .set_attr("need_grad", AttrValue::I8(1));
        });
        let ps = parse(&f).unwrap();
        assert_eq!(&*ps[0].tensor.view::<f32>().unwrap(), &[1.5]);
    }

    #[test]
    fn chunked_compressed_data_is_read_and_bounded() {
        let vals: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let f = custom(|fb| {
            fb.create_dataset("x")
                .with_f32_data(&vals)
                .with_chunks(&[100])
                .with_deflate(6)
                .set_attr("need_grad", AttrValue::I8(1));
        });
        let ps = parse(&f).unwrap();
        assert_eq!(&*ps[0].tensor.view::<f32>().unwrap(), &vals[..]);
        let e = parse_with(
            &f,
            &ReadOptions::default().with_limits(Limits::default().with_max_alloc(100)),
        )
        .unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
    }

    #[test]
    fn superblock_v2_pointing_past_the_end_is_an_error() {
        // Our writer's superblock v2: end-of-file address at 28, root object
        // header address at 36 (then the checksum, which also stops a reader).
        let mut good = Vec::new();
        write_tensors(&mut good, [("w", &t32(&[2], &[1., 2.]), true)]).unwrap();
        assert_eq!(good[8], 2);
        for at in [28usize, 36] {
            let mut bad = good.clone();
            bad[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
            assert!(parse(&bad).is_err());
        }
    }
}
