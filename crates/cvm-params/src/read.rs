//! Reading `.params` files: over a byte slice or memory map (zero-copy), or
//! lazily over any `Read + Seek`.
//!
//! All three readers share one parser, which checks every claimed count and
//! length against the bytes that remain *before* allocating anything, and
//! validates per `docs/formats/cvm.md` §5:
//!
//! - rejected: wrong list or tensor magic, EOF anywhere (a short payload
//!   included), tensor count ≠ name count, negative ndim or dimension,
//!   byte-count overflow or mismatch, unknown dtype, sub-byte dtypes other
//!   than the legacy bool `(1,1,1)`, lanes ≠ 1, device type ≠ CPU;
//! - accepted: zero-size tensors (any dimension 0), 0-d scalars, empty
//!   names, names that are not UTF-8 (kept as raw bytes), empty dictionaries,
//!   nonzero reserved words and device ids (ignored);
//! - policy ([`ReadOptions`]): trailing bytes after the last tensor and
//!   duplicate names are errors by default; `lenient_trailing` ignores the
//!   former (as TVM and CVM do), `allow_duplicates` keeps all entries in file
//!   order and makes lookups give the *last* one (as TVM's `Map` does).

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use tensor_core::{Bytes, DType, Limits, MappedFile, Tensor, TensorMap};

use crate::dtype::{DTypeProblem, DlType, decode};
use crate::error::{Error, Location, Result};
use crate::{LIST_MAGIC, TENSOR_MAGIC};

/// How strictly to read, and the allocation limits for untrusted input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Ignore bytes after the last tensor instead of failing (TVM and CVM ignore them).
    pub lenient_trailing: bool,
    /// Accept a name stored more than once; lookups give the last entry (as TVM does).
    pub allow_duplicates: bool,
    /// Bounds on counts, ranks, name lengths and (lazy reader) allocations.
    pub limits: Limits,
}

impl ReadOptions {
    /// The default: strict (trailing bytes and duplicate names are errors), default limits.
    pub fn strict() -> Self {
        Self::default()
    }

    /// Accepts whatever TVM 0.27 accepts and loads correctly: trailing bytes
    /// ignored, duplicate names allowed (last one wins on lookup).
    pub fn lenient() -> Self {
        ReadOptions {
            lenient_trailing: true,
            allow_duplicates: true,
            limits: Limits::default(),
        }
    }

    /// Sets [`ReadOptions::lenient_trailing`].
    pub fn with_lenient_trailing(mut self, yes: bool) -> Self {
        self.lenient_trailing = yes;
        self
    }

    /// Sets [`ReadOptions::allow_duplicates`].
    pub fn with_allow_duplicates(mut self, yes: bool) -> Self {
        self.allow_duplicates = yes;
        self
    }

    /// Sets [`ReadOptions::limits`].
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// What the record of one tensor says, besides its name and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TensorInfo {
    /// Position in the file (0-based).
    pub index: usize,
    /// Byte offset of the record (its tensor magic).
    pub record_offset: u64,
    /// Byte offset of the payload.
    pub data_offset: u64,
    /// Element type.
    pub dtype: DType,
    /// The stored DLPack type (tells the two bool encodings apart).
    pub dl_type: DlType,
    /// Dimensions (`[]` for a 0-d scalar).
    pub dims: Vec<usize>,
    /// Payload bytes.
    pub nbytes: u64,
    /// The stored device id (ignored by every loader; writers store 0).
    pub device_id: i32,
}

// ---------------------------------------------------------------------------
// The shared parser.

/// A source of bytes the parser reads from, front to back.
trait Input {
    /// Bytes of a name or shape: borrowed from a slice, owned from a stream.
    type Bytes: AsRef<[u8]>;
    /// A payload: borrowed from a slice, skipped in a stream.
    type Payload;
    fn pos(&self) -> u64;
    fn remaining(&self) -> u64;
    /// Reads `N` bytes; the caller has checked that they remain.
    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]>;
    /// Reads `len` bytes; the caller has checked that they remain.
    fn take(&mut self, len: usize) -> io::Result<Self::Bytes>;
    /// Passes over a payload of `len` bytes; the caller has checked that they remain.
    fn payload(&mut self, len: u64) -> io::Result<Self::Payload>;
}

struct SliceInput<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> SliceInput<'a> {
    fn split(&mut self, len: usize) -> io::Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let s = self.data.get(self.pos..end).unwrap_or_default();
        self.pos = end;
        Ok(s)
    }
}

impl<'a> Input for SliceInput<'a> {
    type Bytes = &'a [u8];
    type Payload = &'a [u8];
    fn pos(&self) -> u64 {
        self.pos as u64
    }
    fn remaining(&self) -> u64 {
        self.data.len().saturating_sub(self.pos) as u64
    }
    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let s = self.split(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn take(&mut self, len: usize) -> io::Result<&'a [u8]> {
        self.split(len)
    }
    fn payload(&mut self, len: u64) -> io::Result<&'a [u8]> {
        let len =
            usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        self.split(len)
    }
}

/// A stream read through a small internal buffer: headers and names come
/// from the buffer, payloads are skipped inside it when small and seeked
/// over when large, so indexing costs about one read and one seek per tensor
/// whatever the payload sizes.
struct StreamInput<'r, R> {
    r: &'r mut R,
    /// Logical position (relative to the start of the dictionary).
    pos: u64,
    len: u64,
    buf: Box<[u8]>,
    head: usize,
    tail: usize,
}

impl<'r, R: Read + Seek> StreamInput<'r, R> {
    const BUF: usize = 8 << 10;

    fn new(r: &'r mut R, len: u64) -> Self {
        StreamInput {
            r,
            pos: 0,
            len,
            buf: vec![0u8; Self::BUF].into_boxed_slice(),
            head: 0,
            tail: 0,
        }
    }

    fn buffered(&self) -> usize {
        self.tail - self.head
    }

    /// Copies `out.len()` bytes out, refilling the buffer as needed.
    fn read_exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        let mut done = 0;
        while done < out.len() {
            if self.head == self.tail {
                let want = out.len() - done;
                if want >= self.buf.len() {
                    // large: straight into the destination
                    self.r.read_exact(&mut out[done..])?;
                    break;
                }
                self.head = 0;
                self.tail = 0;
                let n = loop {
                    match self.r.read(&mut self.buf) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    }
                };
                if n == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                self.tail = n;
            }
            let k = (out.len() - done).min(self.buffered());
            out[done..done + k].copy_from_slice(&self.buf[self.head..self.head + k]);
            self.head += k;
            done += k;
        }
        self.pos += out.len() as u64;
        Ok(())
    }
}

impl<R: Read + Seek> Input for StreamInput<'_, R> {
    type Bytes = Vec<u8>;
    type Payload = ();
    fn pos(&self) -> u64 {
        self.pos
    }
    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }
    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut a = [0u8; N];
        self.read_exact(&mut a)?;
        Ok(a)
    }
    fn take(&mut self, len: usize) -> io::Result<Vec<u8>> {
        let mut v = vec![0u8; len];
        self.read_exact(&mut v)?;
        Ok(v)
    }
    fn payload(&mut self, len: u64) -> io::Result<()> {
        let buffered = self.buffered() as u64;
        if len <= buffered {
            self.head += len as usize;
        } else {
            let step = i64::try_from(len - buffered)
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            self.head = 0;
            self.tail = 0;
            self.r.seek(SeekFrom::Current(step))?;
        }
        self.pos += len;
        Ok(())
    }
}

/// Indexes a stream: its start, the parse, and the stream length.
fn index_stream<R: Read + Seek>(
    reader: &mut R,
    opts: &ReadOptions,
) -> Result<(u64, u64, Parsed<Vec<u8>, ()>)> {
    let io_at = |error| Error::Io {
        at: Location::at(0),
        error,
    };
    let start = reader.stream_position().map_err(io_at)?;
    let end = reader.seek(SeekFrom::End(0)).map_err(io_at)?;
    reader.seek(SeekFrom::Start(start)).map_err(io_at)?;
    let len = end.saturating_sub(start);
    let mut input = StreamInput::new(reader, len);
    let parsed = Parser { input: &mut input }.run(opts)?;
    Ok((start, len, parsed))
}

/// One parsed entry before it becomes public: name, record, payload.
struct Raw<B, P> {
    name: B,
    info: TensorInfo,
    payload: P,
}

/// The parser's result: entries in file order, trailing byte count.
struct Parsed<B, P> {
    entries: Vec<Raw<B, P>>,
    trailing: u64,
}

struct Parser<'i, I: Input> {
    input: &'i mut I,
}

impl<I: Input> Parser<'_, I> {
    /// Fails with `Truncated` unless `needed` bytes remain.
    fn need(&self, needed: u64, what: &'static str, at: impl FnOnce() -> Location) -> Result<()> {
        let available = self.input.remaining();
        if needed > available {
            return Err(Error::Truncated {
                at: at(),
                what,
                needed,
                available,
            });
        }
        Ok(())
    }

    fn io(&self, error: io::Error, at: Location) -> Error {
        Error::Io { at, error }
    }

    fn u64(&mut self, what: &'static str, at: &dyn Fn(u64) -> Location) -> Result<u64> {
        let pos = self.input.pos();
        self.need(8, what, || at(pos))?;
        let a = self.input.array::<8>().map_err(|e| self.io(e, at(pos)))?;
        Ok(u64::from_le_bytes(a))
    }

    fn i32(&mut self, what: &'static str, at: &dyn Fn(u64) -> Location) -> Result<i32> {
        let pos = self.input.pos();
        self.need(4, what, || at(pos))?;
        let a = self.input.array::<4>().map_err(|e| self.io(e, at(pos)))?;
        Ok(i32::from_le_bytes(a))
    }

    fn run(mut self, opts: &ReadOptions) -> Result<Parsed<I::Bytes, I::Payload>> {
        let plain = |o: u64| Location::at(o);
        let magic = self.u64("the list magic", &plain)?;
        if magic != LIST_MAGIC {
            return Err(Error::BadListMagic { found: magic });
        }
        self.u64("the list header's reserved word", &plain)?;
        let count_at = self.input.pos();
        let n = self.u64("the name count", &plain)?;
        // Every name takes at least its 8-byte length and every tensor at
        // least 40 bytes, so a count the remaining bytes cannot hold is a
        // truncation; refuse it before allocating anything.
        let min = n.checked_mul(48);
        let remaining = self.input.remaining();
        if min.is_none_or(|m| m > remaining) {
            return Err(Error::Truncated {
                at: Location {
                    offset: count_at,
                    context: Some(format!("name count {n}")),
                },
                what: "the name table and tensors (at least 48 bytes per entry)",
                needed: min.unwrap_or(u64::MAX),
                available: remaining,
            });
        }
        opts.limits.check_tensors(n).map_err(|error| Error::Limit {
            at: Location::at(count_at),
            error,
        })?;
        // n ≤ remaining / 48, so this allocation is bounded by the input size.
        let n_usize = usize::try_from(n).map_err(|_| Error::Truncated {
            at: Location::at(count_at),
            what: "the name table",
            needed: n,
            available: remaining,
        })?;
        let mut names: Vec<(I::Bytes, u64)> = Vec::with_capacity(n_usize);
        for i in 0..n_usize {
            let at_name = |o: u64| Location::name(o, i);
            let len_at = self.input.pos();
            let len = self.u64("a name length", &at_name)?;
            self.need(len, "a name", || at_name(len_at + 8))?;
            opts.limits
                .check_name_len(len)
                .map_err(|error| Error::Limit {
                    at: at_name(len_at),
                    error,
                })?;
            let pos = self.input.pos();
            let len = usize::try_from(len).map_err(|_| Error::Truncated {
                at: at_name(pos),
                what: "a name",
                needed: len,
                available: self.input.remaining(),
            })?;
            let name = self.input.take(len).map_err(|e| self.io(e, at_name(pos)))?;
            names.push((name, len_at));
        }
        let m_at = self.input.pos();
        let m = self.u64("the tensor count", &plain)?;
        if m != n {
            return Err(Error::CountMismatch {
                at: Location::at(m_at),
                names: n,
                tensors: m,
            });
        }
        let mut entries = Vec::with_capacity(n_usize);
        for (index, (name, _)) in names.into_iter().enumerate() {
            let (info, payload) = self.tensor(index, name.as_ref(), opts)?;
            entries.push(Raw {
                name,
                info,
                payload,
            });
        }
        let trailing = self.input.remaining();
        if trailing > 0 && !opts.lenient_trailing {
            return Err(Error::TrailingBytes {
                offset: self.input.pos(),
                len: trailing,
            });
        }
        Ok(Parsed { entries, trailing })
    }

    fn tensor(
        &mut self,
        index: usize,
        name: &[u8],
        opts: &ReadOptions,
    ) -> Result<(TensorInfo, I::Payload)> {
        let at = |o: u64| Location::tensor(o, index, name);
        let record_offset = self.input.pos();
        let magic = self.u64("the tensor magic", &at)?;
        if magic != TENSOR_MAGIC {
            return Err(Error::BadTensorMagic {
                at: at(record_offset),
                found: magic,
            });
        }
        self.u64("the tensor's reserved word", &at)?;
        let dev_at = self.input.pos();
        let device_type = self.i32("the device type", &at)?;
        if device_type != 1 {
            return Err(Error::NonCpuDevice {
                at: at(dev_at),
                device_type,
            });
        }
        let device_id = self.i32("the device id", &at)?;
        let ndim_at = self.input.pos();
        let ndim = self.i32("ndim", &at)?;
        if ndim < 0 {
            return Err(Error::NegativeNdim {
                at: at(ndim_at),
                ndim,
            });
        }
        opts.limits
            .check_rank(ndim as u64)
            .map_err(|error| Error::Limit {
                at: at(ndim_at),
                error,
            })?;
        let dt_at = self.input.pos();
        self.need(4, "the dtype", || at(dt_at))?;
        let [code, bits, l0, l1] = self.input.array::<4>().map_err(|e| self.io(e, at(dt_at)))?;
        let dl_type = DlType {
            code,
            bits,
            lanes: u16::from_le_bytes([l0, l1]),
        };
        let dtype = decode(dl_type).map_err(|p| match p {
            DTypeProblem::Lanes => Error::Lanes {
                at: at(dt_at),
                lanes: dl_type.lanes,
            },
            DTypeProblem::SubByte => Error::SubByteDType {
                at: at(dt_at),
                code,
                bits,
            },
            DTypeProblem::Unknown => Error::UnknownDType {
                at: at(dt_at),
                code,
                bits,
            },
        })?;
        // Shape: ndim ≤ max_rank and the bytes are checked to remain.
        let shape_at = self.input.pos();
        let shape_len = 8 * ndim as u64;
        self.need(shape_len, "the shape", || at(shape_at))?;
        let raw = self
            .input
            .take(shape_len as usize)
            .map_err(|e| self.io(e, at(shape_at)))?;
        let mut dims = Vec::with_capacity(ndim as usize);
        let mut numel: Option<u64> = Some(1);
        for (axis, c) in raw.as_ref().chunks_exact(8).enumerate() {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            let value = i64::from_le_bytes(a);
            let Ok(d) = u64::try_from(value) else {
                return Err(Error::NegativeDim {
                    at: at(shape_at + 8 * axis as u64),
                    axis,
                    value,
                });
            };
            numel = numel.and_then(|n| n.checked_mul(d));
            dims.push(d);
        }
        let elem = dtype.size() as u64;
        let expected = numel
            .and_then(|n| n.checked_mul(elem))
            .filter(|&b| b <= i64::MAX as u64);
        let Some(expected) = expected else {
            return Err(Error::ByteCountOverflow {
                at: at(record_offset),
                dims,
                dtype,
            });
        };
        let Ok(dims) = dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<Vec<usize>, _>>()
        else {
            return Err(Error::ByteCountOverflow {
                at: at(record_offset),
                dims,
                dtype,
            });
        };
        let nb_at = self.input.pos();
        let stated = self.u64("the byte count", &at)? as i64;
        if u64::try_from(stated) != Ok(expected) {
            return Err(Error::ByteCountMismatch {
                at: at(nb_at),
                stated,
                expected,
                dims,
                dtype,
            });
        }
        let data_offset = self.input.pos();
        self.need(expected, "the payload", || at(data_offset))?;
        let payload = self
            .input
            .payload(expected)
            .map_err(|e| self.io(e, at(data_offset)))?;
        Ok((
            TensorInfo {
                index,
                record_offset,
                data_offset,
                dtype,
                dl_type,
                dims,
                nbytes: expected,
                device_id,
            },
            payload,
        ))
    }
}

/// Indices of `names` sorted by name, ties in file order; in strict mode a
/// name stored twice is an error.
fn name_index<B: AsRef<[u8]>>(
    entries: &[Raw<B, impl Sized>],
    name_offsets: &[u64],
    allow_duplicates: bool,
) -> Result<Vec<usize>> {
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by(|&a, &b| entries[a].name.as_ref().cmp(entries[b].name.as_ref()));
    if !allow_duplicates {
        // Report the earliest second occurrence in file order; runs of equal
        // names are sorted in file order, so a run's head is the first one.
        let mut found: Option<(usize, usize)> = None;
        let mut head = 0usize;
        for k in 1..idx.len() {
            let (prev, cur) = (idx[k - 1], idx[k]);
            if entries[prev].name.as_ref() == entries[cur].name.as_ref() {
                let first = idx[head];
                if found.is_none_or(|(_, s)| cur < s) {
                    found = Some((first, cur));
                }
            } else {
                head = k;
            }
        }
        if let Some((first, second)) = found {
            let name = entries[second].name.as_ref();
            return Err(Error::DuplicateName {
                at: Location {
                    offset: name_offsets.get(second).copied().unwrap_or(0),
                    context: Some(format!("name {second} {:?}", String::from_utf8_lossy(name))),
                },
                first,
            });
        }
    }
    Ok(idx)
}

/// Binary search of `idx` (sorted by name) for `name`; the last entry with
/// that name in file order.
fn lookup<'n>(idx: &[usize], name_of: impl Fn(usize) -> &'n [u8], name: &[u8]) -> Option<usize> {
    // First position whose name is > `name`; the one before it, if equal, is
    // the last occurrence (ties are sorted by file order).
    let end = idx.partition_point(|&i| name_of(i) <= name);
    let i = *idx.get(end.checked_sub(1)?)?;
    (name_of(i) == name).then_some(i)
}

fn parse_names_offsets<B: AsRef<[u8]>, P>(entries: &[Raw<B, P>]) -> Vec<u64> {
    // Name-table offsets are implied by the lengths: 24 + Σ(8 + len).
    let mut off = 24u64;
    entries
        .iter()
        .map(|e| {
            let here = off;
            off = off.saturating_add(8 + e.name.as_ref().len() as u64);
            here
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Zero-copy reader over a slice or a memory map.

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
        let mut entries = Vec::with_capacity(parsed.entries.len());
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
        let mut entries = Vec::with_capacity(parsed.entries.len());
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

// ---------------------------------------------------------------------------
// Lazy reader over Read + Seek.

/// A reader over any `Read + Seek` that indexes the file on open (reading
/// only the name table and the tensor headers, seeking over payloads) and
/// then reads one tensor at a time, for files too large to map or load.
///
/// The dictionary may start at the stream's current position; offsets are
/// relative to it. Every payload read is checked against
/// [`Limits::max_alloc`] before its buffer is allocated.
///
/// ```
/// # fn main() -> Result<(), cvm_params::Error> {
/// use std::io::Cursor;
/// use cvm_params::{LazyParams, ReadOptions, WriteOptions};
/// use tensor_core::Tensor;
///
/// let a = Tensor::from_values([3], &[1.0f32, 2.0, 3.0])?;
/// let b = Tensor::from_values([], &[7i64])?;
/// let mut file = Vec::new();
/// cvm_params::write(&mut file, [("a", &a), ("b", &b)], &Default::default())?;
///
/// let mut lazy = LazyParams::from_reader(Cursor::new(file), &ReadOptions::default())?;
/// assert_eq!(lazy.len(), 2);
/// assert_eq!(lazy.info(1).unwrap().dims, Vec::<usize>::new());
/// let b2 = lazy.read_by_name("b")?.unwrap();
/// assert_eq!(b2.view::<i64>()?[0], 7);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LazyParams<R> {
    reader: R,
    start: u64,
    names: Vec<Vec<u8>>,
    infos: Vec<TensorInfo>,
    by_name: Vec<usize>,
    trailing: u64,
    limits: Limits,
}

impl<R: Read + Seek> LazyParams<R> {
    /// Indexes the dictionary starting at the stream's position, with `opts`
    /// ([`ReadOptions::default`] is strict).
    pub fn from_reader(mut reader: R, opts: &ReadOptions) -> Result<Self> {
        let (start, _, parsed) = index_stream(&mut reader, opts)?;
        let offsets = parse_names_offsets(&parsed.entries);
        let by_name = name_index(&parsed.entries, &offsets, opts.allow_duplicates)?;
        let (names, infos) = parsed.entries.into_iter().map(|r| (r.name, r.info)).unzip();
        Ok(LazyParams {
            reader,
            start,
            names,
            infos,
            by_name,
            trailing: parsed.trailing,
            limits: opts.limits,
        })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// True for an empty dictionary.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// The stored name of entry `index`.
    pub fn name_bytes(&self, index: usize) -> Option<&[u8]> {
        self.names.get(index).map(Vec::as_slice)
    }

    /// The name of entry `index`, invalid UTF-8 replaced with U+FFFD.
    pub fn name(&self, index: usize) -> Option<Cow<'_, str>> {
        self.names.get(index).map(|n| String::from_utf8_lossy(n))
    }

    /// The record of entry `index` (dtype, dims, offsets).
    pub fn info(&self, index: usize) -> Option<&TensorInfo> {
        self.infos.get(index)
    }

    /// All records in file order.
    pub fn infos(&self) -> &[TensorInfo] {
        &self.infos
    }

    /// The index of the entry named `name` (the last one, if duplicates were allowed).
    pub fn position(&self, name: &[u8]) -> Option<usize> {
        lookup(&self.by_name, |i| &self.names[i], name)
    }

    /// Bytes after the last tensor (0 unless read with `lenient_trailing`).
    pub fn trailing_bytes(&self) -> u64 {
        self.trailing
    }

    /// Where entry `index`'s payload is (for errors) and its length, once
    /// the limits allow allocating it.
    fn payload_len(&self, index: usize) -> Result<(Location, usize)> {
        let info = &self.infos[index];
        let at = Location::tensor(info.data_offset, index, &self.names[index]);
        self.limits
            .check_alloc("tensor payload", info.nbytes)
            .map_err(|error| Error::Limit {
                at: at.clone(),
                error,
            })?;
        let n = usize::try_from(info.nbytes).map_err(|_| Error::Limit {
            at: at.clone(),
            error: tensor_core::Error::LimitExceeded {
                what: "tensor payload",
                value: info.nbytes,
                limit: usize::MAX as u64,
            },
        })?;
        Ok((at, n))
    }

    /// Reads the tensor of entry `index` into a new owned buffer.
    pub fn read(&mut self, index: usize) -> Result<Tensor<'static>> {
        let mut buf = Vec::new();
        self.read_into(index, &mut buf)?;
        let info = &self.infos[index];
        Ok(Tensor::new(info.dtype, info.dims.clone(), buf)?)
    }

    /// Reads the payload of entry `index` into `buf` (replacing its
    /// contents; reuse one buffer to avoid reallocating).
    pub fn read_into(&mut self, index: usize, buf: &mut Vec<u8>) -> Result<()> {
        let Some(info) = self.infos.get(index) else {
            return Err(Error::NoSuchEntry {
                index,
                len: self.infos.len(),
            });
        };
        let (at, n) = self.payload_len(index)?;
        let io_err = |error| Error::Io {
            at: at.clone(),
            error,
        };
        self.reader
            .seek(SeekFrom::Start(self.start + info.data_offset))
            .map_err(io_err)?;
        buf.clear();
        buf.try_reserve_exact(n).map_err(|e| Error::Io {
            at: at.clone(),
            error: io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()),
        })?;
        (&mut self.reader)
            .take(info.nbytes)
            .read_to_end(buf)
            .map_err(io_err)?;
        if buf.len() != n {
            return Err(Error::Truncated {
                at,
                what: "the payload (the stream shrank after it was indexed)",
                needed: info.nbytes,
                available: buf.len() as u64,
            });
        }
        Ok(())
    }

    /// Reads the tensor named `name` (the last one, if duplicates were allowed).
    pub fn read_by_name(&mut self, name: &str) -> Result<Option<Tensor<'static>>> {
        match self.position(name.as_bytes()) {
            Some(i) => self.read(i).map(Some),
            None => Ok(None),
        }
    }

    /// Gives the stream back.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

/// Files at least this large are read by several threads in
/// [`LazyParams::read_all`].
const PARALLEL_FROM: u64 = 16 << 20;

/// The most threads [`LazyParams::read_all`] uses.
const MAX_THREADS: usize = 4;

impl LazyParams<File> {
    /// Reads every tensor into new owned buffers, in file order: what
    /// loading a whole `.params` into memory means (TVM's
    /// `load_param_dict_from_file`).
    ///
    /// Each payload is checked against [`Limits::max_alloc`] before its
    /// buffer is allocated. On Unix, files of 16 MiB and more are read by
    /// up to four threads at once (positional reads of disjoint tensors,
    /// in groups of about equal bytes): the cost of loading is mostly the
    /// kernel filling fresh pages, which then happens on every core.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use cvm_params::{LazyParams, ReadOptions};
    /// use tensor_core::Tensor;
    ///
    /// let a = Tensor::from_values([3], &[1.0f32, 2.0, 3.0])?;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("x.params");
    /// cvm_params::save(&path, [("a", &a)], &Default::default())?;
    /// let mut lazy = LazyParams::from_reader(std::fs::File::open(&path)?, &ReadOptions::default())?;
    /// let all = lazy.read_all()?;
    /// assert_eq!(&*all[0].view::<f32>()?, &[1.0, 2.0, 3.0]);
    /// assert!(!all[0].storage().is_zero_copy());
    /// # Ok(()) }
    /// ```
    pub fn read_all(&mut self) -> Result<Vec<Tensor<'static>>> {
        let total: u64 = self.infos.iter().map(|i| i.nbytes).sum();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)
            .min(self.infos.len());
        if !cfg!(unix) || threads < 2 || total < PARALLEL_FROM {
            return (0..self.len()).map(|i| self.read(i)).collect();
        }
        // contiguous groups of entries of about total / threads bytes each
        let per = total.div_ceil(threads as u64);
        let mut groups: Vec<std::ops::Range<usize>> = Vec::with_capacity(threads);
        let (mut first, mut acc) = (0usize, 0u64);
        for (i, info) in self.infos.iter().enumerate() {
            acc += info.nbytes;
            if acc >= per && groups.len() + 1 < threads {
                groups.push(first..i + 1);
                first = i + 1;
                acc = 0;
            }
        }
        groups.push(first..self.infos.len());
        let this = &*self;
        let parts: Vec<Result<Vec<Tensor<'static>>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .into_iter()
                .map(|range| {
                    scope.spawn(move || range.map(|i| this.read_at(i)).collect::<Result<Vec<_>>>())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::Io {
                            at: Location::tensor(0, 0, b""),
                            error: io::Error::other("a reading thread panicked"),
                        })
                    })
                })
                .collect()
        });
        let mut out = Vec::with_capacity(self.infos.len());
        for p in parts {
            out.extend(p?);
        }
        Ok(out)
    }

    /// Reads entry `index` with a positional read (no shared file offset).
    #[cfg(unix)]
    fn read_at(&self, index: usize) -> Result<Tensor<'static>> {
        use std::os::unix::fs::FileExt;
        let info = &self.infos[index];
        let (at, n) = self.payload_len(index)?;
        // Zeroed memory comes fresh from the system untouched, so the read
        // below is the first write to each page. The size is the indexed
        // payload's, which the file holds and the limits allow.
        let mut buf = vec![0u8; n];
        match self
            .reader
            .read_exact_at(&mut buf, self.start + info.data_offset)
        {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(Error::Truncated {
                    at,
                    what: "the payload (the file shrank after it was indexed)",
                    needed: info.nbytes,
                    available: 0,
                });
            }
            Err(error) => return Err(Error::Io { at, error }),
        }
        Ok(Tensor::new(info.dtype, info.dims.clone(), buf)?)
    }

    #[cfg(not(unix))]
    fn read_at(&self, index: usize) -> Result<Tensor<'static>> {
        // read_all reads sequentially where positional reads are not available
        let info = &self.infos[index];
        Err(Error::Io {
            at: Location::tensor(info.data_offset, index, &self.names[index]),
            error: io::Error::other("positional reads are not available here"),
        })
    }
}
