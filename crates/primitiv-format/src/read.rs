//! Reading: a strict MessagePack cursor over the input bytes and the
//! readers of the five data types (`docs/formats/primitiv.md` §2, §3, §5).
//!
//! Every length a file claims is checked against the bytes that remain
//! before anything is sliced or allocated; tensor data is borrowed from the
//! input. Trailing bytes after the body are ignored, as the library does.

use std::path::Path;
use std::sync::Arc;

use rmp::Marker;
use rmp::decode::ValueReadError;
use tensor_core::{Bytes, Limits, MappedFile};

use crate::types::check_param_batch;
use crate::{DataType, Error, File, Model, Optimizer, Parameter, Result, Shape, Tensor, join_key};

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
        let mut c = Cursor::new(bytes, opts.limits);
        let dt = read_header(&mut c, opts.expect)?;
        let file = match dt {
            DataType::Shape => File::Shape(c.shape()?),
            DataType::Tensor => File::Tensor(c.tensor()?),
            DataType::Parameter => File::Parameter(c.parameter()?),
            DataType::Model => File::Model(c.model()?),
            DataType::Optimizer => File::Optimizer(c.optimizer()?),
        };
        Ok((file, c.pos))
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

fn read_header(c: &mut Cursor<'_>, expect: Option<DataType>) -> Result<DataType> {
    let major = c.u32("ver_major")?;
    let minor = c.u32("ver_minor")?;
    if (major, minor) != (0, 1) {
        return Err(Error::Version {
            offset: 0,
            major,
            minor,
        });
    }
    let at = c.pos as u64;
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

/// A strict MessagePack reader over a byte slice
/// (`docs/formats/primitiv.md` §2): uint32 only as `0xce`, float only as
/// `0xca`; str/array/map/bin in any width.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    limits: Limits,
}

const U32: &str = "uint32 (0xce)";
const F32: &str = "float32 (0xca)";
const STR: &str = "str (fixstr, 0xd9, 0xda or 0xdb)";
const ARRAY: &str = "array (fixarray, 0xdc or 0xdd)";
const MAP: &str = "map (fixmap, 0xde or 0xdf)";
const BIN: &str = "bin (0xc4, 0xc5 or 0xc6)";

/// Bytes of the smallest encoding of each item, to bound capacity reservations.
const MIN_STAT_BYTES: usize = 1 + 1 + 5 + 2; // key, dims, batch, bin header
const MIN_ENTRY_BYTES: usize = 1 + 1 + 5 + 2 + 5; // + stats count
const MIN_CONFIG_BYTES: usize = 1 + 5;

impl<'a> Cursor<'a> {
    fn new(buf: &'a [u8], limits: Limits) -> Self {
        Cursor {
            buf,
            pos: 0,
            limits,
        }
    }

    fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    fn eof(&self, at: usize, what: &'static str, needed: u64) -> Error {
        Error::Eof {
            offset: at as u64,
            what,
            needed,
            available: (self.buf.len().saturating_sub(at)) as u64,
        }
    }

    /// Runs an rmp decoder on the rest of the input and advances past what it read.
    fn decode<T>(
        &mut self,
        what: &'static str,
        expected: &'static str,
        header_len: impl Fn(Marker) -> u64,
        f: impl FnOnce(&mut &'a [u8]) -> std::result::Result<T, ValueReadError<std::io::Error>>,
    ) -> Result<T> {
        let at = self.pos;
        let mut rd = self.rest();
        let Some(&first) = rd.first() else {
            return Err(self.eof(at, what, 1));
        };
        match f(&mut rd) {
            Ok(v) => {
                self.pos = self.buf.len() - rd.len();
                Ok(v)
            }
            Err(ValueReadError::TypeMismatch(_)) => Err(Error::WrongType {
                offset: at as u64,
                what,
                expected,
                found: first,
            }),
            Err(_) => Err(self.eof(at, what, header_len(Marker::from_u8(first)))),
        }
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        self.decode(what, U32, |_| 5, rmp::decode::read_u32)
    }

    fn f32(&mut self, what: &'static str) -> Result<f32> {
        self.decode(what, F32, |_| 5, rmp::decode::read_f32)
    }

    fn array_len(&mut self, what: &'static str) -> Result<u32> {
        self.decode(what, ARRAY, header_len, |rd| {
            rmp::decode::read_array_len(rd)
        })
    }

    fn map_len(&mut self, what: &'static str) -> Result<u32> {
        self.decode(what, MAP, header_len, rmp::decode::read_map_len)
    }

    /// A payload of `len` bytes after a header that started at `at`.
    fn payload(&mut self, at: usize, what: &'static str, len: u32) -> Result<&'a [u8]> {
        let rest = self.rest();
        let len = len as usize;
        match rest.get(..len) {
            Some(p) => {
                self.pos += len;
                Ok(p)
            }
            None => {
                let header = (self.pos - at) as u64;
                Err(self.eof(at, what, header + len as u64))
            }
        }
    }

    fn bytes_str(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let at = self.pos;
        let len = self.decode(what, STR, header_len, rmp::decode::read_str_len)?;
        self.limits
            .check_name_len(u64::from(len))
            .map_err(|source| Error::Limit {
                offset: at as u64,
                source,
            })?;
        self.payload(at, what, len)
    }

    fn bin(&mut self, what: &'static str) -> Result<(usize, &'a [u8])> {
        let at = self.pos;
        let len = self.decode(what, BIN, header_len, rmp::decode::read_bin_len)?;
        Ok((at, self.payload(at, what, len)?))
    }

    fn count(&mut self, what: &'static str, min_item: usize) -> Result<(u32, usize)> {
        let at = self.pos;
        let n = self.u32(what)?;
        self.check_count(at, n)?;
        Ok((n, self.capacity(n, min_item)))
    }

    fn check_count(&self, at: usize, n: u32) -> Result<()> {
        self.limits
            .check_tensors(u64::from(n))
            .map_err(|source| Error::Limit {
                offset: at as u64,
                source,
            })
    }

    /// A capacity for `n` items that the remaining bytes can actually hold.
    fn capacity(&self, n: u32, min_item: usize) -> usize {
        (n as usize).min(self.rest().len() / min_item)
    }

    fn shape(&mut self) -> Result<Shape> {
        let at = self.pos;
        let n = self.array_len("shape dims")?;
        if n as usize > Shape::MAX_DEPTH {
            return Err(Error::TooManyDims {
                offset: at as u64,
                depth: u64::from(n),
            });
        }
        let mut dims = Vec::with_capacity(n as usize);
        for _ in 0..n {
            dims.push(self.u32("shape dim")?);
        }
        let batch = self.u32("shape batch")?;
        let s = Shape::from_parts_unchecked(dims, batch);
        if batch == 0 || s.stored_dims().contains(&0) {
            return Err(Error::InvalidShape {
                offset: at as u64,
                shape: s.to_string(),
            });
        }
        Ok(s)
    }

    fn tensor(&mut self) -> Result<Tensor<'a>> {
        let shape = self.shape()?;
        let (at, data) = self.bin("tensor data")?;
        let expected = shape.byte_len();
        if expected != Some(data.len() as u64) {
            return Err(Error::DataLength {
                offset: at as u64,
                shape: shape.to_string(),
                expected: expected.unwrap_or(u64::MAX),
                actual: data.len() as u64,
            });
        }
        Ok(Tensor::from_parts_unchecked(shape, Bytes::Borrowed(data)))
    }

    fn parameter(&mut self) -> Result<Parameter<'a>> {
        let at = self.pos;
        let value = self.tensor().map_err(|e| e.context("parameter value"))?;
        let (n, cap) = self.count("stats count", MIN_STAT_BYTES)?;
        let mut stats = Vec::with_capacity(cap);
        for i in 0..n {
            let key = self
                .bytes_str("stat key")
                .map_err(|e| e.context(format!("stat #{i}")))?;
            let t = self
                .tensor()
                .map_err(|e| e.context(format!("stat '{}'", String::from_utf8_lossy(key))))?;
            stats.push((key.to_vec(), t));
        }
        // The library checks the batch after reading the stats.
        check_param_batch(&value, at as u64)?;
        Ok(Parameter { value, stats })
    }

    fn model(&mut self) -> Result<Model<'a>> {
        let (n, cap) = self.count("parameter count", MIN_ENTRY_BYTES)?;
        let mut entries = Vec::with_capacity(cap);
        for i in 0..n {
            let at = self.pos;
            let (k, kcap) = {
                let k = self
                    .array_len("model key")
                    .map_err(|e| e.context(format!("model entry #{i}")))?;
                self.check_count(at, k)?;
                (k, self.capacity(k, 1))
            };
            let mut key = Vec::with_capacity(kcap);
            for _ in 0..k {
                let c = self
                    .bytes_str("model key component")
                    .map_err(|e| e.context(format!("model entry #{i}")))?;
                key.push(c.to_vec());
            }
            if key.is_empty() {
                return Err(Error::EmptyKey { offset: at as u64 });
            }
            let p = self
                .parameter()
                .map_err(|e| e.context(format!("parameter '{}'", join_key(&key))))?;
            entries.push((key, p));
        }
        Ok(Model { entries })
    }

    fn configs<T>(
        &mut self,
        what: &'static str,
        mut value: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<(Vec<u8>, T)>> {
        let at = self.pos;
        let n = self.map_len(what)?;
        self.check_count(at, n)?;
        let mut v = Vec::with_capacity(self.capacity(n, MIN_CONFIG_BYTES));
        for _ in 0..n {
            let k = self.bytes_str("config key")?;
            let x = value(self)
                .map_err(|e| e.context(format!("{what} '{}'", String::from_utf8_lossy(k))))?;
            v.push((k.to_vec(), x));
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
