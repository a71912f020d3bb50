//! Reading: a strict MessagePack cursor over the input bytes and the
//! readers of the five data types (`docs/formats/primitiv.md` §2, §3, §5).
//!
//! Every length a file claims is checked against the bytes that remain
//! before anything is sliced or allocated; tensor data is borrowed from the
//! input. Trailing bytes after the body are ignored, as the library does.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use rmp::Marker;
use rmp::decode::ValueReadError;
use tensor_core::{Bytes, Limits, MappedFile};

use crate::types::check_param_batch;
use crate::{
    DataType, Error, File, KeyPath, Model, Optimizer, Parameter, Result, Shape, Tensor, join_key,
};

/// How to read a file.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// The data type the caller wants (`None`: take whatever the header says).
    /// A different type in the header is an error, as in the library's loaders.
    pub expect: Option<DataType>,
    /// Bounds on counts (stats, parameters, configs) and key lengths.
    pub limits: Limits,
}

impl ReadOptions {
    /// Options that require `data_type` in the header.
    pub fn expecting(data_type: DataType) -> Self {
        ReadOptions {
            expect: Some(data_type),
            limits: Limits::default(),
        }
    }

    /// Sets the limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

impl<'a> File<'a> {
    /// Reads a file of any data type (auto-detected from the header); tensor
    /// data is borrowed from `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<File<'a>> {
        Self::parse_with(bytes, &ReadOptions::default())
    }

    /// Reads a file with `opts` ([`ReadOptions::expecting`] requires a data
    /// type); tensor data is borrowed from `bytes`.
    pub fn parse_with(bytes: &'a [u8], opts: &ReadOptions) -> Result<File<'a>> {
        Self::parse_prefix(bytes, opts).map(|(f, _)| f)
    }

    /// [`File::parse_with`] that also returns how many bytes the body used
    /// (anything after it is ignored, as in the library).
    pub fn parse_prefix(bytes: &'a [u8], opts: &ReadOptions) -> Result<(File<'a>, usize)> {
        let (body, len) = walk(Whole(bytes), opts)?;
        let param = |(value, stats)| Parameter { value, stats };
        let file = match body {
            Body::Shape(s) => File::Shape(s),
            Body::Tensor(t) => File::Tensor(t),
            Body::Parameter(p) => File::Parameter(param(p)),
            Body::Model(entries) => File::Model(Model {
                entries: entries.into_iter().map(|(k, p)| (k, param(p))).collect(),
            }),
            Body::Optimizer(o) => File::Optimizer(o),
        };
        // the body is inside `bytes`
        Ok((file, usize::try_from(len).unwrap_or(bytes.len())))
    }
}

impl File<'static> {
    /// Reads a memory-mapped file; the tensors share the map (no copy).
    pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<File<'static>> {
        let f = File::parse_with(map.as_bytes(), opts)?;
        Ok(f.rebase(map))
    }

    /// Memory-maps `path` and reads it with the default options; tensor data
    /// stays in the map (no copy).
    pub fn open(path: impl AsRef<Path>) -> Result<File<'static>> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Memory-maps `path` and reads it with `opts`; tensor data stays in the
    /// map (no copy).
    pub fn open_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<File<'static>> {
        let map = MappedFile::open(path.as_ref()).map_err(|e| match e {
            tensor_core::Error::Io { source, .. } => Error::io(
                format!("could not open {}", path.as_ref().display()),
                source,
            ),
            other => Error::Core(other),
        })?;
        Self::from_map(&map, opts)
    }
}

fn read_header<I: Input>(c: &mut Cursor<I>, expect: Option<DataType>) -> Result<DataType> {
    let major = c.u32("ver_major")?;
    let minor = c.u32("ver_minor")?;
    if (major, minor) != (0, 1) {
        return Err(Error::Version {
            offset: 0,
            major,
            minor,
        });
    }
    let at = c.pos;
    let code = c.u32("data_type")?;
    match (expect, DataType::from_code(code)) {
        (Some(e), _) if e.code() != code => Err(Error::DataTypeMismatch {
            offset: at,
            expected: e,
            found: code,
        }),
        (_, Some(dt)) => Ok(dt),
        (_, None) => Err(Error::UnknownDataType {
            offset: at,
            found: code,
        }),
    }
}

// `parse_as` already checked the type; this only keeps the code panic-free.
fn mismatch(expected: DataType, found: DataType) -> Error {
    Error::DataTypeMismatch {
        offset: 10,
        expected,
        found: found.code(),
    }
}

/// Reads a file that must hold `data_type`.
fn parse_as(bytes: &[u8], data_type: DataType) -> Result<File<'_>> {
    File::parse_with(bytes, &ReadOptions::expecting(data_type))
}

macro_rules! typed_parse {
    ($t:ident, $dt:ident, $doc:literal) => {
        impl<'a> $t<'a> {
            #[doc = $doc]
            pub fn parse(bytes: &'a [u8]) -> Result<$t<'a>> {
                match parse_as(bytes, DataType::$dt)? {
                    File::$dt(x) => Ok(x),
                    other => Err(mismatch(DataType::$dt, other.data_type())),
                }
            }
        }
    };
}

typed_parse!(
    Tensor,
    Tensor,
    "Reads a Tensor file (data_type 0x100); the data is borrowed from `bytes`."
);
typed_parse!(
    Parameter,
    Parameter,
    "Reads a Parameter file (data_type 0x200), as `Parameter::load` does."
);
typed_parse!(
    Model,
    Model,
    "Reads a Model file (data_type 0x300), as `Model::load` does."
);

impl Shape {
    /// Reads a Shape file (data_type 0x0).
    pub fn parse(bytes: &[u8]) -> Result<Shape> {
        match parse_as(bytes, DataType::Shape)? {
            File::Shape(s) => Ok(s),
            other => Err(mismatch(DataType::Shape, other.data_type())),
        }
    }
}

impl Optimizer {
    /// Reads an Optimizer file (data_type 0x400), as `Optimizer::load` does.
    pub fn parse(bytes: &[u8]) -> Result<Optimizer> {
        match parse_as(bytes, DataType::Optimizer)? {
            File::Optimizer(o) => Ok(o),
            other => Err(mismatch(DataType::Optimizer, other.data_type())),
        }
    }
}

/// Where a walk reads from: the whole input as a slice (tensor data
/// borrowed, [`File::parse`]) or a `Read + Seek` stream (tensor data
/// located, not read, [`index`]). The walk ([`Cursor`]) is the same.
trait Input {
    /// What a tensor becomes.
    type Tensor;
    /// The input's length in bytes.
    fn len(&self) -> u64;
    /// The bytes from `at`: at least `n` of them unless the input ends first.
    fn peek(&mut self, at: u64, n: usize) -> Result<&[u8]>;
    /// The tensor of `shape` whose `len` data bytes start at `at` (inside the input).
    fn tensor(&mut self, shape: Shape, at: u64, len: u64) -> Result<Self::Tensor>;
    /// The shape of a tensor.
    fn shape(t: &Self::Tensor) -> &Shape;
}

/// The whole input: tensor data borrowed.
struct Whole<'a>(&'a [u8]);

impl<'a> Input for Whole<'a> {
    type Tensor = Tensor<'a>;

    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn peek(&mut self, at: u64, _: usize) -> Result<&[u8]> {
        Ok(usize::try_from(at)
            .ok()
            .and_then(|at| self.0.get(at..))
            .unwrap_or(&[]))
    }

    fn tensor(&mut self, shape: Shape, at: u64, len: u64) -> Result<Tensor<'a>> {
        let data = usize::try_from(at)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(at, len)| self.0.get(at..at.checked_add(len)?))
            .unwrap_or(&[]);
        Ok(Tensor::from_parts_unchecked(shape, Bytes::Borrowed(data)))
    }

    fn shape<'t>(t: &'t Tensor<'a>) -> &'t Shape {
        t.shape()
    }
}

/// Bytes a stream is read at a time (the structure between tensors).
const WINDOW: usize = 64 << 10;

/// A stream read through a window: tensor data skipped, its place kept.
struct Streamed<R> {
    r: R,
    len: u64,
    start: u64,
    buf: Vec<u8>,
}

impl<R: Read + Seek> Input for Streamed<R> {
    type Tensor = (Shape, u64, u64);

    fn len(&self) -> u64 {
        self.len
    }

    fn peek(&mut self, at: u64, n: usize) -> Result<&[u8]> {
        let end = self.start + self.buf.len() as u64;
        let left = self.len.saturating_sub(at);
        let want = u64::try_from(n).unwrap_or(u64::MAX).min(left);
        if at < self.start || at.saturating_add(want) > end {
            let take = usize::try_from(u64::try_from(n.max(WINDOW)).unwrap_or(u64::MAX).min(left))
                .unwrap_or(n);
            self.buf.clear();
            tensor_core::try_reserve(&mut self.buf, "the read window", take)
                .map_err(|source| Error::Limit { offset: at, source })?;
            self.buf.resize(take, 0);
            self.start = at;
            let read = self
                .r
                .seek(SeekFrom::Start(at))
                .and_then(|_| self.r.read_exact(&mut self.buf));
            if let Err(e) = read {
                self.buf.clear();
                return Err(Error::io(format!("could not read at byte {at}"), e));
            }
        }
        let from = usize::try_from(at - self.start).unwrap_or(usize::MAX);
        Ok(self.buf.get(from..).unwrap_or(&[]))
    }

    fn tensor(&mut self, shape: Shape, at: u64, len: u64) -> Result<Self::Tensor> {
        Ok((shape, at, len))
    }

    fn shape(t: &Self::Tensor) -> &Shape {
        &t.0
    }
}

/// A file's body with tensors of type `T` (one walk for [`File`] and [`Index`]).
enum Body<T> {
    Shape(Shape),
    Tensor(T),
    Parameter(Param<T>),
    Model(Vec<(KeyPath, Param<T>)>),
    Optimizer(Optimizer),
}

/// A parameter's value and stats.
type Param<T> = (T, Vec<(Vec<u8>, T)>);

/// Reads the header and the body (and gives the body's length).
fn walk<I: Input>(input: I, opts: &ReadOptions) -> Result<(Body<I::Tensor>, u64)> {
    let mut c = Cursor::new(input, opts.limits);
    let dt = read_header(&mut c, opts.expect)?;
    let body = match dt {
        DataType::Shape => Body::Shape(c.shape()?),
        DataType::Tensor => Body::Tensor(c.tensor()?),
        DataType::Parameter => Body::Parameter(c.parameter()?),
        DataType::Model => Body::Model(c.model()?),
        DataType::Optimizer => Body::Optimizer(c.optimizer()?),
    };
    Ok((body, c.pos))
}

/// Where one tensor of a file is ([`index`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TensorAt {
    /// The model key path of its parameter (empty in a Tensor or Parameter file).
    pub path: KeyPath,
    /// Its stat key, for a parameter's stat (`None`: the parameter's value,
    /// or a Tensor file's tensor).
    pub stat: Option<Vec<u8>>,
    /// Its shape, dims as stored.
    pub shape: Shape,
    /// Where its data (f32, column-major) starts in the file.
    pub offset: u64,
    /// Bytes of its data (the shape's size × 4).
    pub len: u64,
}

/// A file's structure without its tensor data ([`index`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Index {
    /// The header's data type.
    pub data_type: DataType,
    /// Every tensor in file order: a Tensor file's one tensor; each
    /// parameter's value and then its stats.
    pub tensors: Vec<TensorAt>,
    /// A Shape file's shape.
    pub shape: Option<Shape>,
    /// An Optimizer file's configs.
    pub optimizer: Option<Optimizer>,
    /// Bytes of the header and body (anything after it is ignored).
    pub body_len: u64,
}

/// Reads the structure of a file from a stream, without its tensor data:
/// the walk of [`File::parse_with`] (the same checks and errors, every
/// claimed length checked against the stream's length), each tensor's data
/// located and skipped. Reads the structure a window of 64 KiB at a time
/// (whatever lies between two tensors' data).
///
/// ```
/// use primitiv_format::{Model, Parameter, Shape, Tensor, WriteOptions};
/// let value = Tensor::from_values(Shape::new([2], 1)?, &[1., 2.])?;
/// let mut model = Model::new();
/// model.insert(["w"], Parameter::new(value)?);
/// let mut bytes = Vec::new();
/// model.write(&mut bytes, &WriteOptions::default())?;
/// let ix = primitiv_format::index(std::io::Cursor::new(&bytes), &Default::default())?;
/// let t = &ix.tensors[0];
/// assert_eq!(t.path, [b"w".to_vec()]);
/// let at = t.offset as usize;
/// assert_eq!(&bytes[at..at + 4], 1f32.to_le_bytes());
/// # Ok::<(), primitiv_format::Error>(())
/// ```
pub fn index<R: Read + Seek>(mut reader: R, opts: &ReadOptions) -> Result<Index> {
    let len = reader
        .seek(SeekFrom::End(0))
        .map_err(|e| Error::io("could not find the stream's length", e))?;
    let input = Streamed {
        r: reader,
        len,
        start: 0,
        buf: Vec::new(),
    };
    let (body, body_len) = walk(input, opts)?;
    let mut ix = Index {
        data_type: DataType::Shape,
        tensors: Vec::new(),
        shape: None,
        optimizer: None,
        body_len,
    };
    let at = |path: &KeyPath, stat: Option<Vec<u8>>, (shape, offset, len)| TensorAt {
        path: path.clone(),
        stat,
        shape,
        offset,
        len,
    };
    let param = |tensors: &mut Vec<TensorAt>, path: &KeyPath, (value, stats): Param<_>| {
        tensors.push(at(path, None, value));
        for (k, t) in stats {
            tensors.push(at(path, Some(k), t));
        }
    };
    match body {
        Body::Shape(s) => ix.shape = Some(s),
        Body::Tensor(t) => {
            ix.data_type = DataType::Tensor;
            ix.tensors.push(at(&Vec::new(), None, t));
        }
        Body::Parameter(p) => {
            ix.data_type = DataType::Parameter;
            param(&mut ix.tensors, &Vec::new(), p);
        }
        Body::Model(entries) => {
            ix.data_type = DataType::Model;
            for (k, p) in entries {
                param(&mut ix.tensors, &k, p);
            }
        }
        Body::Optimizer(o) => {
            ix.data_type = DataType::Optimizer;
            ix.optimizer = Some(o);
        }
    }
    Ok(ix)
}

/// A strict MessagePack reader over an [`Input`]
/// (`docs/formats/primitiv.md` §2): uint32 only as `0xce`, float only as
/// `0xca`; str/array/map/bin in any width.
struct Cursor<I> {
    input: I,
    pos: u64,
    limits: Limits,
}

const U32: &str = "uint32 (0xce)";
const F32: &str = "float32 (0xca)";
const STR: &str = "str (fixstr, 0xd9, 0xda or 0xdb)";
const ARRAY: &str = "array (fixarray, 0xdc or 0xdd)";
const MAP: &str = "map (fixmap, 0xde or 0xdf)";
const BIN: &str = "bin (0xc4, 0xc5 or 0xc6)";

/// Bytes of the smallest encoding of each item, to bound capacity reservations.
const MIN_STAT_BYTES: u64 = 1 + 1 + 5 + 2; // key, dims, batch, bin header
const MIN_ENTRY_BYTES: u64 = 1 + 1 + 5 + 2 + 5; // + stats count
const MIN_CONFIG_BYTES: u64 = 1 + 5;

/// The longest MessagePack header or scalar the cursor decodes.
const MAX_HEADER: usize = 9;

impl<I: Input> Cursor<I> {
    fn new(input: I, limits: Limits) -> Self {
        Cursor {
            input,
            pos: 0,
            limits,
        }
    }

    /// Bytes left after the position.
    fn left(&self) -> u64 {
        self.input.len().saturating_sub(self.pos)
    }

    fn eof(&self, at: u64, what: &'static str, needed: u64) -> Error {
        Error::Eof {
            offset: at,
            what,
            needed,
            available: self.input.len().saturating_sub(at),
        }
    }

    /// Runs an rmp decoder on the input at the position and advances past what it read.
    fn decode<T>(
        &mut self,
        what: &'static str,
        expected: &'static str,
        header_len: impl Fn(Marker) -> u64,
        f: impl for<'b> FnOnce(&mut &'b [u8]) -> std::result::Result<T, ValueReadError<std::io::Error>>,
    ) -> Result<T> {
        let at = self.pos;
        let rest = self.input.peek(at, MAX_HEADER)?;
        let Some(&first) = rest.first() else {
            return Err(self.eof(at, what, 1));
        };
        let mut rd = rest;
        match f(&mut rd) {
            Ok(v) => {
                self.pos = at + (rest.len() - rd.len()) as u64;
                Ok(v)
            }
            Err(ValueReadError::TypeMismatch(_)) => Err(Error::WrongType {
                offset: at,
                what,
                expected,
                found: first,
            }),
            Err(_) => Err(self.eof(at, what, header_len(Marker::from_u8(first)))),
        }
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        self.decode(what, U32, |_| 5, |rd| rmp::decode::read_u32(rd))
    }

    fn f32(&mut self, what: &'static str) -> Result<f32> {
        self.decode(what, F32, |_| 5, |rd| rmp::decode::read_f32(rd))
    }

    fn array_len(&mut self, what: &'static str) -> Result<u32> {
        self.decode(what, ARRAY, header_len, |rd| {
            rmp::decode::read_array_len(rd)
        })
    }

    fn map_len(&mut self, what: &'static str) -> Result<u32> {
        self.decode(what, MAP, header_len, |rd| rmp::decode::read_map_len(rd))
    }

    /// Checks that a payload of `len` bytes after a header that started at
    /// `at` is in the input; gives where it starts.
    fn payload(&mut self, at: u64, what: &'static str, len: u32) -> Result<u64> {
        let len = u64::from(len);
        if len > self.left() {
            let header = self.pos - at;
            return Err(self.eof(at, what, header + len));
        }
        let start = self.pos;
        self.pos += len;
        Ok(start)
    }

    fn bytes_str(&mut self, what: &'static str) -> Result<Vec<u8>> {
        let at = self.pos;
        let len = self.decode(what, STR, header_len, |rd| rmp::decode::read_str_len(rd))?;
        self.limits
            .check_name_len(u64::from(len))
            .map_err(|source| Error::Limit { offset: at, source })?;
        let start = self.payload(at, what, len)?;
        // at most `max_name_len` bytes, all in the input
        let n = usize::try_from(len).unwrap_or(usize::MAX);
        let bytes = self.input.peek(start, n)?;
        let bytes = bytes.get(..n).unwrap_or(bytes);
        let mut out = Self::reserve(at, what, bytes.len())?;
        out.extend_from_slice(bytes);
        Ok(out)
    }

    fn bin(&mut self, what: &'static str) -> Result<(u64, u64, u64)> {
        let at = self.pos;
        let len = self.decode(what, BIN, header_len, |rd| rmp::decode::read_bin_len(rd))?;
        let start = self.payload(at, what, len)?;
        Ok((at, start, u64::from(len)))
    }

    fn count(&mut self, what: &'static str, min_item: u64) -> Result<(u32, u64, usize)> {
        let at = self.pos;
        let n = self.u32(what)?;
        self.check_count(at, n)?;
        Ok((n, at, self.capacity(n, min_item)))
    }

    /// An empty vector with room for `n` items counted at `at`, or
    /// [`Error::Limit`] carrying [`tensor_core::Error::OutOfMemory`] when
    /// the allocator refuses it (never the allocator's abort).
    fn reserve<T>(at: u64, what: &str, n: usize) -> Result<Vec<T>> {
        tensor_core::try_with_capacity(what, n)
            .map_err(|source| Error::Limit { offset: at, source })
    }

    fn check_count(&self, at: u64, n: u32) -> Result<()> {
        self.limits
            .check_tensors(u64::from(n))
            .map_err(|source| Error::Limit { offset: at, source })
    }

    /// A capacity for `n` items that the remaining bytes can actually hold.
    fn capacity(&self, n: u32, min_item: u64) -> usize {
        usize::try_from(u64::from(n).min(self.left() / min_item)).unwrap_or(0)
    }

    fn shape(&mut self) -> Result<Shape> {
        let at = self.pos;
        let n = self.array_len("shape dims")?;
        if n as usize > Shape::MAX_DEPTH {
            return Err(Error::TooManyDims {
                offset: at,
                depth: u64::from(n),
            });
        }
        let mut dims = Self::reserve(at, "shape dims", n as usize)?;
        for _ in 0..n {
            dims.push(self.u32("shape dim")?);
        }
        let batch = self.u32("shape batch")?;
        let s = Shape::from_parts_unchecked(dims, batch);
        if batch == 0 || s.stored_dims().contains(&0) {
            return Err(Error::InvalidShape {
                offset: at,
                shape: s.to_string(),
            });
        }
        Ok(s)
    }

    fn tensor(&mut self) -> Result<I::Tensor> {
        let shape = self.shape()?;
        let (at, start, len) = self.bin("tensor data")?;
        let expected = shape.byte_len();
        if expected != Some(len) {
            return Err(Error::DataLength {
                offset: at,
                shape: shape.to_string(),
                expected: expected.unwrap_or(u64::MAX),
                actual: len,
            });
        }
        self.input.tensor(shape, start, len)
    }

    fn parameter(&mut self) -> Result<Param<I::Tensor>> {
        let at = self.pos;
        let value = self.tensor().map_err(|e| e.context("parameter value"))?;
        let (n, n_at, cap) = self.count("stats count", MIN_STAT_BYTES)?;
        let mut stats = Self::reserve(n_at, "stats", cap)?;
        for i in 0..n {
            let key = self
                .bytes_str("stat key")
                .map_err(|e| e.context(format!("stat #{i}")))?;
            let t = self
                .tensor()
                .map_err(|e| e.context(format!("stat '{}'", String::from_utf8_lossy(&key))))?;
            stats.push((key, t));
        }
        // The library checks the batch after reading the stats.
        check_param_batch(I::shape(&value), at)?;
        Ok((value, stats))
    }

    fn model(&mut self) -> Result<Vec<(KeyPath, Param<I::Tensor>)>> {
        let (n, n_at, cap) = self.count("parameter count", MIN_ENTRY_BYTES)?;
        let mut entries = Self::reserve(n_at, "model entries", cap)?;
        for i in 0..n {
            let at = self.pos;
            let (k, kcap) = {
                let k = self
                    .array_len("model key")
                    .map_err(|e| e.context(format!("model entry #{i}")))?;
                self.check_count(at, k)?;
                (k, self.capacity(k, 1))
            };
            let mut key = Self::reserve(at, "model key", kcap)?;
            for _ in 0..k {
                let c = self
                    .bytes_str("model key component")
                    .map_err(|e| e.context(format!("model entry #{i}")))?;
                key.push(c);
            }
            if key.is_empty() {
                return Err(Error::EmptyKey { offset: at });
            }
            let p = self
                .parameter()
                .map_err(|e| e.context(format!("parameter '{}'", join_key(&key))))?;
            entries.push((key, p));
        }
        Ok(entries)
    }

    fn configs<T>(
        &mut self,
        what: &'static str,
        mut value: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<(Vec<u8>, T)>> {
        let at = self.pos;
        let n = self.map_len(what)?;
        self.check_count(at, n)?;
        let mut v = Self::reserve(at, what, self.capacity(n, MIN_CONFIG_BYTES))?;
        for _ in 0..n {
            let k = self.bytes_str("config key")?;
            let x = value(self)
                .map_err(|e| e.context(format!("{what} '{}'", String::from_utf8_lossy(&k))))?;
            v.push((k, x));
        }
        Ok(v)
    }

    fn optimizer(&mut self) -> Result<Optimizer> {
        let uint_configs = self.configs("uint_configs", |c| c.u32("uint config value"))?;
        let float_configs = self.configs("float_configs", |c| c.f32("float config value"))?;
        Ok(Optimizer {
            uint_configs,
            float_configs,
        })
    }
}

/// Bytes of a str/array/map/bin header with marker `m` (for EOF messages).
fn header_len(m: Marker) -> u64 {
    match m {
        Marker::Str8 | Marker::Bin8 => 2,
        Marker::Str16 | Marker::Bin16 | Marker::Array16 | Marker::Map16 => 3,
        Marker::Str32 | Marker::Bin32 | Marker::Array32 | Marker::Map32 => 5,
        _ => 1,
    }
}
