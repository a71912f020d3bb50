//! The one walk of a binary `.protobuf` ([`merge_index`]): the message read
//! field by field through [`ReadAt`] with `tensor-core`'s wire cursor
//! ([`tensor_core::wire::Cursor`]), every field but `parameter` merged into
//! a root message (prost), each `parameter`'s name, shape and `need_grad`
//! read and its packed f32 data located, not read, and handed to the
//! caller as it is found (nothing is held per parameter).
//!
//! Both readers of the format use it: the zero-copy reader
//! ([`crate::binary::parse_with`], [`crate::binary::merge_borrowed`]) over
//! the bytes it holds, borrowing each packed run as the tensor's storage,
//! and readers by offset (the by-slices path of `mlformats`) over a file
//! or an inflating zip member, reading each run a slice at a time.
//!
//! Every length is checked against the bytes left before anything is read
//! or allocated; a parameter's shape and data length are checked as the
//! tensor they make checks them.
//!
//! ```
//! use nnabla_proto::index::{ParamData, Scattered, merge_index};
//! use nnabla_proto::{NNablaProtoBuf, ReadOptions, binary, text};
//!
//! let model = text::parse("network { name: 'n' } parameter { variable_name: 'w' shape { dim: 2 } data: [0.5, 2] }")?;
//! let bytes = binary::encode(&model);
//! let mut root = NNablaProtoBuf::default();
//! let len = bytes.len() as u64;
//! let mut found = Vec::new();
//! let opts = ReadOptions::default();
//! let all = merge_index(&mut root, &bytes[..], 0, len, &opts, Scattered::Stop, |p| {
//!     found.push(p);
//!     Ok(())
//! })?;
//! assert!(all, "every parameter is one packed run");
//! let w = &found[0];
//! assert_eq!((w.name.as_str(), &w.dims[..], root.network[0].name.as_str()), ("w", &[2][..], "n"));
//! let ParamData::Packed { offset, len } = w.data else { unreachable!() };
//! assert_eq!(&bytes[offset as usize..][..len as usize], &[0, 0, 0, 0x3f, 0, 0, 0, 0x40]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use prost::Message;
use tensor_core::wire::{self as tw, Cursor, FIXED32, FIXED64, LEN, ReadAt, VARINT};
use tensor_core::{Bytes, DType, Limits, MemoryOrder, Shape, Tensor};

use crate::params::ParamTensor;
use crate::{Error, NNablaProtoBuf, ReadOptions, Result};

/// Field numbers of `NNablaProtoBuf.parameter`, of `Parameter` and of `Shape`.
const ROOT_PARAMETER: u64 = 200;
const NAME: u64 = 1;
const SHAPE: u64 = 20;
const DATA: u64 = 100;
const NEED_GRAD: u64 = 101;
const SHAPE_DIM: u64 = 1;

/// What the cursor calls the bytes (its errors are reworded as
/// [`Error::Wire`], which names the byte only).
const WHAT: &str = "the message";

/// Where a parameter's f32 values are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamData {
    /// One packed run: `len` bytes of little-endian f32 at `offset` of the
    /// source (offset 0 and length 0 when the parameter has no data).
    Packed {
        /// Where the run starts in the source.
        offset: u64,
        /// Its length in bytes (a multiple of 4).
        len: u64,
    },
    /// Values written unpacked or in several runs, collected in order
    /// (with [`Scattered::Collect`]).
    Collected(Vec<u8>),
}

impl ParamData {
    /// The length of the values in bytes.
    pub fn len(&self) -> u64 {
        match self {
            ParamData::Packed { len, .. } => *len,
            ParamData::Collected(v) => v.len() as u64,
        }
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What [`merge_index`] does with a parameter whose values are not one
/// packed run (unpacked, or split into several runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scattered {
    /// Collects the values ([`ParamData::Collected`]): what a reader that
    /// holds the input does.
    Collect,
    /// Stops the walk at the first such parameter: [`merge_index`] answers
    /// false (a reader by offset then reads the input whole).
    Stop,
}

/// One `parameter` entry: its name, shape, `need_grad`, and where its
/// values are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexedParameter {
    /// `Parameter.variable_name`.
    pub name: String,
    /// The stored shape (`[]` for a 0-d parameter), checked against the
    /// data's length.
    pub dims: Vec<usize>,
    /// `Parameter.need_grad`.
    pub need_grad: bool,
    /// Where its values are.
    pub data: ParamData,
}

impl IndexedParameter {
    /// The parameter as a row-major f32 tensor over `bytes`, the source it
    /// was indexed in: a packed run is borrowed (no copy), collected
    /// values are moved in, no data is an empty owned buffer.
    pub fn in_bytes(self, bytes: &[u8]) -> Result<ParamTensor<'_>> {
        let IndexedParameter {
            name,
            dims,
            need_grad,
            data,
        } = self;
        let data: Bytes<'_> = match data {
            ParamData::Packed { len: 0, .. } => Bytes::Owned(Vec::new()),
            ParamData::Packed { offset, len } => {
                let run = usize::try_from(offset)
                    .ok()
                    .zip(usize::try_from(len).ok())
                    .and_then(|(at, n)| bytes.get(at..at.checked_add(n)?))
                    .ok_or_else(|| Error::param(&name, "its data lies past the input"))?;
                Bytes::Borrowed(run)
            }
            ParamData::Collected(v) => Bytes::Owned(v),
        };
        let tensor = Tensor::with_order(DType::F32, dims, MemoryOrder::RowMajor, data)
            .map_err(|e| Error::param(&name, e.to_string()))?;
        Ok(ParamTensor::new(name, tensor, need_grad))
    }
}

impl From<tw::Error> for Error {
    fn from(e: tw::Error) -> Self {
        match e {
            tw::Error::At { at, what, .. } => Error::wire(offset(at), what),
            tw::Error::Io(e) => Error::Read(e),
            tw::Error::Core(e) => Error::Tensor(e),
            other => Error::wire(0, other.to_string()),
        }
    }
}

/// An offset for [`Error::Wire`].
fn offset(at: u64) -> usize {
    usize::try_from(at).unwrap_or(usize::MAX)
}

/// Reads the binary `NNablaProtoBuf` at bytes `[at, at + len)` of `r`:
/// every field but `parameter` merged into `root` (as nnabla merges every
/// file it loads into one root: repeated fields appended, singular ones
/// overwritten), and each `parameter` indexed and handed to `each`, in
/// file order (a name stored twice comes twice), under `opts`' limits.
///
/// False (with [`Scattered::Stop`]) when a parameter's values are not one
/// packed run: the walk stopped there, `root` holds the fields merged so
/// far. An error of `each` stops the walk and is returned.
pub fn merge_index<R: ReadAt + ?Sized>(
    root: &mut NNablaProtoBuf,
    r: &R,
    at: u64,
    len: u64,
    opts: &ReadOptions,
    scattered: Scattered,
    mut each: impl FnMut(IndexedParameter) -> Result<()>,
) -> Result<bool> {
    let limits = &opts.limits;
    let end = at
        .checked_add(len)
        .filter(|&e| e <= r.len())
        .ok_or_else(|| Error::wire(offset(at), "the message ends past the end of the input"))?;
    let mut c = Cursor::new(r, WHAT, at, end);
    let mut count = 0u64;
    let mut span = Span {
        start: at,
        bytes: Vec::new(),
    };
    while c.pos < c.end {
        let field_start = c.pos;
        let (num, wt) = key(&mut c)?;
        if num == ROOT_PARAMETER {
            if wt != LEN {
                return Err(Error::wire(
                    offset(field_start),
                    format!("NNablaProtoBuf.parameter has wire type {wt}, expected 2"),
                ));
            }
            span.merge(root, field_start)?;
            let (p, n) = len_delimited(&mut c)?;
            count += 1;
            limits.check_tensors(count)?;
            match within(&mut c, p, n, |c| parameter(c, limits, scattered))? {
                Some(param) => each(param)?,
                None => return Ok(false),
            }
            span.start = c.pos;
        } else {
            skip(&mut c, wt, num)?;
            span.take(&c, field_start, limits)?;
        }
    }
    span.merge(root, c.end)?;
    Ok(true)
}

/// The fields between two parameters: where they start and their bytes,
/// copied as the walk passes them (a source read as it inflates is never
/// read far back), merged when the next parameter or the end is reached.
struct Span {
    start: u64,
    bytes: Vec<u8>,
}

impl Span {
    /// Adds the field `[from, c.pos)`.
    fn take<R: ReadAt + ?Sized>(
        &mut self,
        c: &Cursor<'_, R>,
        from: u64,
        limits: &Limits,
    ) -> Result<()> {
        let n = c.pos - from;
        let total = (self.bytes.len() as u64).saturating_add(n);
        limits.check_alloc("protobuf fields", total)?;
        append(c, from, n, &mut self.bytes)
    }

    /// Merges the fields taken (they end at `end`) into `root`.
    fn merge(&mut self, root: &mut NNablaProtoBuf, end: u64) -> Result<()> {
        if self.bytes.is_empty() {
            return Ok(());
        }
        let start = self.start;
        root.merge(&self.bytes[..]).map_err(|e| {
            Error::wire(
                offset(start),
                format!("{e} (in the fields at bytes {start}..{end})"),
            )
        })?;
        self.bytes.clear();
        Ok(())
    }
}

/// Runs `f` over the bytes `[p, p + n)` (a payload `c` has just passed),
/// then puts `c` back after them.
fn within<R: ReadAt + ?Sized, T>(
    c: &mut Cursor<'_, R>,
    p: u64,
    n: u64,
    f: impl FnOnce(&mut Cursor<'_, R>) -> Result<T>,
) -> Result<T> {
    let (pos, end) = (c.pos, c.end);
    c.pos = p;
    c.end = p + n; // (within `end`: the cursor has passed it)
    let out = f(c)?;
    c.pos = pos;
    c.end = end;
    Ok(out)
}

/// Appends the bytes `[at, at + n)` of the source, which `c` has passed,
/// to `out`: from the cursor's window when it holds them.
fn append<R: ReadAt + ?Sized>(c: &Cursor<'_, R>, at: u64, n: u64, out: &mut Vec<u8>) -> Result<()> {
    let held = at
        .checked_sub(c.window_at)
        .and_then(|i| usize::try_from(i).ok())
        .zip(usize::try_from(n).ok())
        .and_then(|(i, n)| c.window.get(i..i.checked_add(n)?));
    let grow = |out: &mut Vec<u8>, n: usize| {
        out.try_reserve(n)
            .map_err(|_| tensor_core::Error::OutOfMemory {
                what: "protobuf bytes".into(),
                bytes: n as u64,
            })
    };
    match held {
        Some(s) => {
            grow(out, s.len())?;
            out.extend_from_slice(s);
        }
        None => {
            let v = tw::read_vec(c.r, at, n)?;
            grow(out, v.len())?;
            out.extend_from_slice(&v);
        }
    }
    Ok(())
}

/// The error `e` of the varint that starts at `start`, placed there (the
/// cursor names the byte it ran out at).
fn at_start(e: tw::Error, start: u64) -> Error {
    match e {
        tw::Error::At { what, .. } => Error::wire(offset(start), what),
        e => e.into(),
    }
}

/// The next varint (an error names the byte it starts at).
pub(crate) fn varint<R: ReadAt + ?Sized>(c: &mut Cursor<'_, R>) -> Result<u64> {
    let start = c.pos;
    c.varint().map_err(|e| at_start(e, start))
}

/// The next field key: (number, wire type).
fn key<R: ReadAt + ?Sized>(c: &mut Cursor<'_, R>) -> Result<(u64, u64)> {
    let start = c.pos;
    c.key().map_err(|e| at_start(e, start))
}

/// A length-delimited payload: where it starts and its length.
fn len_delimited<R: ReadAt + ?Sized>(c: &mut Cursor<'_, R>) -> Result<(u64, u64)> {
    let n = varint(c)?;
    Ok((c.advance(n)?, n))
}

/// Skips one field value of wire type `wt`, refusing groups and invalid
/// wire types.
fn skip<R: ReadAt + ?Sized>(c: &mut Cursor<'_, R>, wt: u64, num: u64) -> Result<()> {
    match wt {
        VARINT => varint(c).map(|_| ()),
        FIXED64 => Ok(c.advance(8).map(|_| ())?),
        LEN => len_delimited(c).map(|_| ()),
        FIXED32 => Ok(c.advance(4).map(|_| ())?),
        3 | 4 => Err(Error::wire(
            offset(c.pos),
            format!("field {num}: groups (wire type {wt}) are not supported in proto3"),
        )),
        _ => Err(Error::wire(
            offset(c.pos),
            format!("field {num}: invalid wire type {wt}"),
        )),
    }
}

/// The values of a parameter as the walk finds them.
enum Data {
    None,
    Run(u64, u64),
    Owned(Vec<u8>),
}

/// Reads the `Parameter` message at `[c.pos, c.end)` (fields 1 name, 20
/// shape, 100 data, 101 need_grad); `None` for values that are not one
/// packed run with [`Scattered::Stop`].
fn parameter<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    limits: &Limits,
    scattered: Scattered,
) -> Result<Option<IndexedParameter>> {
    let mut name = String::new();
    let mut dims: Vec<i64> = Vec::new();
    let mut data = Data::None;
    let mut need_grad = false;
    while c.pos < c.end {
        let at = c.pos;
        let (num, wt) = key(c)?;
        let wrong = |expected: &str| {
            Error::wire(
                offset(at),
                format!("Parameter field {num} has wire type {wt}, expected {expected}"),
            )
        };
        match num {
            NAME => {
                if wt != LEN {
                    return Err(wrong("2"));
                }
                let (p, n) = len_delimited(c)?;
                limits.check_name_len(n)?;
                let s = c.read(p, n, limits)?;
                name = String::from_utf8(s).map_err(|_| {
                    Error::wire(offset(p), "Parameter.variable_name is not valid UTF-8")
                })?;
            }
            SHAPE => {
                if wt != LEN {
                    return Err(wrong("2"));
                }
                let (p, n) = len_delimited(c)?;
                within(c, p, n, |c| shape(c, &mut dims, limits))?;
            }
            DATA => {
                let (p, n) = match wt {
                    LEN => {
                        let (p, n) = len_delimited(c)?;
                        if n % 4 != 0 {
                            return Err(Error::wire(
                                offset(p),
                                format!("packed float data of {n} bytes is not a multiple of 4"),
                            ));
                        }
                        (p, n)
                    }
                    FIXED32 if scattered == Scattered::Stop => return Ok(None),
                    FIXED32 => (c.advance(4)?, 4),
                    _ => return Err(wrong("2 or 5")),
                };
                data = match data {
                    // one packed run, located
                    Data::None if wt == LEN => Data::Run(p, n),
                    _ if scattered == Scattered::Stop => return Ok(None),
                    Data::None => {
                        let mut v = Vec::new();
                        append(c, p, n, &mut v)?;
                        Data::Owned(v)
                    }
                    Data::Run(a, m) => {
                        let mut v = Vec::new();
                        append(c, a, m, &mut v)?;
                        append(c, p, n, &mut v)?;
                        Data::Owned(v)
                    }
                    Data::Owned(mut v) => {
                        append(c, p, n, &mut v)?;
                        Data::Owned(v)
                    }
                };
            }
            NEED_GRAD => {
                if wt != VARINT {
                    return Err(wrong("0"));
                }
                need_grad = varint(c)? != 0;
            }
            _ => skip(c, wt, num)?,
        }
    }
    let mut udims = Vec::with_capacity(dims.len());
    for &d in &dims {
        let d = usize::try_from(d).map_err(|_| {
            Error::param(&name, format!("negative dimension {d} in shape {dims:?}"))
        })?;
        udims.push(d);
    }
    let data = match data {
        Data::None => ParamData::Packed { offset: 0, len: 0 },
        Data::Run(offset, len) => ParamData::Packed { offset, len },
        Data::Owned(v) => ParamData::Collected(v),
    };
    // as the tensor checks it (`Tensor::with_order`), in its words
    let shape = Shape::from(udims);
    let need = shape
        .byte_len(DType::F32)
        .map_err(|e| Error::param(&name, e.to_string()))?;
    if need as u64 != data.len() {
        let e = tensor_core::Error::LengthMismatch {
            dims: shape.into_dims(),
            dtype: DType::F32,
            expected: need,
            actual: usize::try_from(data.len()).unwrap_or(usize::MAX),
        };
        return Err(Error::param(&name, e.to_string()));
    }
    Ok(Some(IndexedParameter {
        name,
        dims: shape.into_dims(),
        need_grad,
        data,
    }))
}

/// Reads the `Shape` message at `[c.pos, c.end)`: its dims (packed or
/// not) appended to `dims`, under the rank limit.
fn shape<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    dims: &mut Vec<i64>,
    limits: &Limits,
) -> Result<()> {
    while c.pos < c.end {
        let at = c.pos;
        let (num, wt) = key(c)?;
        match (num, wt) {
            (SHAPE_DIM, LEN) => {
                let (p, n) = len_delimited(c)?;
                within(c, p, n, |c| {
                    while c.pos < c.end {
                        limits.check_rank(dims.len() as u64 + 1)?;
                        dims.push(varint(c)? as i64);
                    }
                    Ok(())
                })?;
            }
            (SHAPE_DIM, VARINT) => {
                limits.check_rank(dims.len() as u64 + 1)?;
                dims.push(varint(c)? as i64);
            }
            (SHAPE_DIM, _) => {
                return Err(Error::wire(
                    offset(at),
                    format!("Shape.dim has wire type {wt}, expected 0 or 2"),
                ));
            }
            _ => skip(c, wt, num)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{binary, text};

    fn index(bytes: &[u8], at: u64, s: Scattered) -> Result<Option<Vec<IndexedParameter>>> {
        let mut root = NNablaProtoBuf::default();
        let len = bytes.len() as u64 - at;
        let mut found = Vec::new();
        let opts = ReadOptions::default();
        let all = merge_index(&mut root, bytes, at, len, &opts, s, |p| {
            found.push(p);
            Ok(())
        })?;
        Ok(all.then_some(found))
    }

    #[test]
    fn locates_packed_runs_and_stops_or_collects_the_others() {
        let model = text::parse(
            "network { name: 'n' } parameter { variable_name: 'a' shape { dim: 1 } data: 1.5 } \
             parameter { variable_name: 'b' shape { dim: 2 } data: [2, 3] need_grad: true }",
        )
        .unwrap();
        // two bytes before the message: offsets are the source's
        let mut bytes = vec![7, 7];
        bytes.extend(binary::encode(&model));
        let found = index(&bytes, 2, Scattered::Stop).unwrap().unwrap();
        let runs: Vec<_> = found
            .iter()
            .map(|p| match p.data {
                ParamData::Packed { offset, len } => (
                    p.name.as_str(),
                    p.need_grad,
                    &bytes[offset as usize..][..len as usize],
                ),
                _ => panic!("not packed"),
            })
            .collect();
        let b: Vec<u8> = [2f32, 3.].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(runs[0], ("a", false, &1.5f32.to_le_bytes()[..]));
        assert_eq!(runs[1], ("b", true, &b[..]));
        // unpacked data (field 100, wire type 5): None when stopping,
        // the values when collecting
        let mut body = vec![0x0A, 0x01, b'u', 0xA2, 0x01, 0x02, 0x08, 0x01, 0xA5, 0x06];
        body.extend(4.5f32.to_le_bytes());
        let mut unpacked = vec![0xC2, 0x0C, body.len() as u8];
        unpacked.extend(body);
        assert!(index(&unpacked, 0, Scattered::Stop).unwrap().is_none());
        let found = index(&unpacked, 0, Scattered::Collect).unwrap().unwrap();
        let want = ParamData::Collected(4.5f32.to_le_bytes().to_vec());
        assert_eq!((found[0].name.as_str(), &found[0].data), ("u", &want));
    }

    #[test]
    fn refuses_a_message_past_the_source_and_a_failed_read() {
        let e = index(&[0x08], 0, Scattered::Stop);
        let mut root = NNablaProtoBuf::default();
        let opts = ReadOptions::default();
        let none = |_| Ok(());
        let past = merge_index(&mut root, &[0u8; 4][..], 2, 3, &opts, Scattered::Stop, none);
        assert_eq!(
            past.unwrap_err().to_string(),
            "malformed protobuf at byte 2: the message ends past the end of the input"
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "malformed protobuf at byte 1: truncated varint"
        );
        /// A source whose reads fail.
        struct Broken;
        impl ReadAt for Broken {
            fn len(&self) -> u64 {
                10
            }
            fn read_at(&self, _: u64, _: &mut [u8]) -> std::io::Result<()> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
        }
        let e = merge_index(&mut root, &Broken, 0, 10, &opts, Scattered::Stop, none).unwrap_err();
        assert!(matches!(e, Error::Read(_)), "{e}");
    }
}
