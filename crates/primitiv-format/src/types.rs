//! The five data types of the format: Shape, Tensor, Parameter, Model, Optimizer.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use tensor_core::{Bytes, DType, MappedFile, MemoryOrder};

use crate::{Error, Result};

/// The `data_type` header field: which of the five types a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum DataType {
    /// `0x0`: a stand-alone Shape.
    Shape = 0x0,
    /// `0x100`: a stand-alone Tensor.
    Tensor = 0x100,
    /// `0x200`: `Parameter::save`.
    Parameter = 0x200,
    /// `0x300`: `Model::save`.
    Model = 0x300,
    /// `0x400`: `Optimizer::save`.
    Optimizer = 0x400,
}

impl DataType {
    /// The type with header code `code`, if it is one of the five.
    pub fn from_code(code: u32) -> Option<DataType> {
        Some(match code {
            0x0 => DataType::Shape,
            0x100 => DataType::Tensor,
            0x200 => DataType::Parameter,
            0x300 => DataType::Model,
            0x400 => DataType::Optimizer,
            _ => return None,
        })
    }

    /// The header code.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// `shape`, `tensor`, `parameter`, `model` or `optimizer` (the inspect contract's `kind`).
    pub fn kind(self) -> &'static str {
        match self {
            DataType::Shape => "shape",
            DataType::Tensor => "tensor",
            DataType::Parameter => "parameter",
            DataType::Model => "model",
            DataType::Optimizer => "optimizer",
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DataType::Shape => "Shape",
            DataType::Tensor => "Tensor",
            DataType::Parameter => "Parameter",
            DataType::Model => "Model",
            DataType::Optimizer => "Optimizer",
        })
    }
}

/// A primitiv shape: up to 8 dims and a batch size, all at least 1.
///
/// The library drops trailing 1-dims (`[3,1,1]` is `[3]`, a scalar is
/// `[]`). A shape read from a file keeps the dims exactly as stored
/// ([`Shape::stored_dims`], what `inspect` reports) and gives the library's
/// normalised dims through [`Shape::dims`], which is also what the writer
/// emits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: Vec<u32>,
    batch: u32,
}

impl Shape {
    /// The most dims a shape can have (`MAX_DEPTH`).
    pub const MAX_DEPTH: usize = 8;

    /// A shape of `dims` and `batch`; fails for more than 8 dims or a 0 dim
    /// or batch (as the library's `Shape` constructor does).
    pub fn new(dims: impl Into<Vec<u32>>, batch: u32) -> Result<Shape> {
        let dims = dims.into();
        if dims.len() > Self::MAX_DEPTH {
            return Err(Error::TooManyDims {
                offset: 0,
                depth: dims.len() as u64,
            });
        }
        let s = Shape { dims, batch };
        if s.batch == 0 || s.dims.contains(&0) {
            return Err(Error::InvalidShape {
                offset: 0,
                shape: s.to_string(),
            });
        }
        Ok(s)
    }

    /// A shape with batch 1 from `usize` dims, for tensors of other formats.
    pub fn from_dims(dims: &[usize]) -> Result<Shape> {
        let mut v = Vec::with_capacity(dims.len().min(Self::MAX_DEPTH + 1));
        for &d in dims.iter().take(Self::MAX_DEPTH + 1) {
            v.push(u32::try_from(d).map_err(|_| Error::Unwritable {
                what: format!("shape {dims:?}"),
                why: format!("dimension {d} does not fit in uint32"),
            })?);
        }
        if dims.len() > Self::MAX_DEPTH {
            return Err(Error::TooManyDims {
                offset: 0,
                depth: dims.len() as u64,
            });
        }
        Shape::new(v, 1)
    }

    /// The dims without trailing 1s (the library's `Shape::dims()`).
    pub fn dims(&self) -> &[u32] {
        let depth = self.dims.iter().rposition(|&d| d != 1).map_or(0, |i| i + 1);
        &self.dims[..depth]
    }

    /// The dims as the file stored them (trailing 1s kept).
    pub fn stored_dims(&self) -> &[u32] {
        &self.dims
    }

    /// The batch size.
    pub fn batch(&self) -> u32 {
        self.batch
    }

    /// Elements per sample (the product of the dims), `None` if it overflows u64.
    pub fn volume(&self) -> Option<u64> {
        self.dims
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(u64::from(d)))
    }

    /// Elements in all samples (`volume × batch`), `None` on overflow.
    pub fn size(&self) -> Option<u64> {
        self.volume()?.checked_mul(u64::from(self.batch))
    }

    /// Bytes of f32 data a tensor of this shape holds, `None` on overflow.
    pub fn byte_len(&self) -> Option<u64> {
        self.size()?.checked_mul(4)
    }

    /// The dims of the column-major `tensor-core` array: the stored dims,
    /// plus the batch as a last (slowest) axis when it is more than 1.
    pub fn core_dims(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.dims.iter().map(|&d| d as usize).collect();
        if self.batch != 1 {
            v.push(self.batch as usize);
        }
        v
    }

    pub(crate) fn from_parts_unchecked(dims: Vec<u32>, batch: u32) -> Shape {
        Shape { dims, batch }
    }
}

impl fmt::Display for Shape {
    /// The library's form: `[2,3]x1`, trailing 1s dropped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.dims().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        write!(f, "]x{}", self.batch)
    }
}

/// A tensor: a [`Shape`] and its f32 data, column-major with the batch
/// slowest, little-endian, exactly as the file stores it.
///
/// The data is borrowed from the input when read ([`Tensor::data`] points
/// into the file's bytes). Element `(i0, i1, …)` of sample `b` is float
/// number `i0 + d0·(i1 + d1·(…)) + volume·b`.
#[derive(Debug, Clone)]
pub struct Tensor<'a> {
    shape: Shape,
    data: Bytes<'a>,
}

impl<'a> Tensor<'a> {
    /// A tensor over `data` (column-major little-endian f32); fails unless
    /// `data` has exactly `shape.size() × 4` bytes.
    pub fn new(shape: Shape, data: impl Into<Bytes<'a>>) -> Result<Tensor<'a>> {
        let data = data.into();
        let expected = shape.byte_len();
        if expected != Some(data.len() as u64) {
            return Err(Error::DataLength {
                offset: 0,
                shape: shape.to_string(),
                expected: expected.unwrap_or(u64::MAX),
                actual: data.len() as u64,
            });
        }
        Ok(Tensor { shape, data })
    }

    /// A tensor owning `values` (column-major, batch slowest).
    pub fn from_values(shape: Shape, values: &[f32]) -> Result<Tensor<'static>> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Tensor::new(shape, bytes)
    }

    /// A primitiv tensor from a `tensor-core` tensor: f32 only; a
    /// column-major tensor is borrowed as it is, a row-major one is
    /// transposed into column-major. The dims are the tensor's dims and the
    /// batch is 1 (at most 8 dims, none of them 0).
    pub fn from_core<'b>(t: &'b tensor_core::Tensor<'_>) -> Result<Tensor<'b>> {
        if t.dtype() != DType::F32 {
            return Err(Error::Unwritable {
                what: format!("a tensor of {}", t.dtype()),
                why: "primitiv stores only f32".into(),
            });
        }
        let shape = Shape::from_dims(t.dims())?;
        let data = match t.order() {
            MemoryOrder::ColumnMajor => Bytes::Borrowed(t.bytes()),
            _ => Bytes::Owned(row_to_column_major_f32(t.bytes(), t.dims())),
        };
        Tensor::new(shape, data)
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The raw data: little-endian f32, column-major, batch slowest.
    pub fn data(&self) -> &[u8] {
        self.data.as_slice()
    }

    /// The storage (borrowed, owned or mapped).
    pub fn storage(&self) -> &Bytes<'a> {
        &self.data
    }

    /// The values in stored order (borrowed when aligned on a little-endian host).
    pub fn values(&self) -> Cow<'_, [f32]> {
        tensor_core::cast_le::<f32>(self.data())
    }

    /// The values in stored (column-major) order as an owned vector (one memcpy on little-endian hosts).
    pub fn to_vec(&self) -> Vec<f32> {
        let data = self.data();
        let mut v = vec![0f32; data.len() / 4];
        if cfg!(target_endian = "little") {
            bytemuck::cast_slice_mut::<f32, u8>(&mut v).copy_from_slice(data);
        } else {
            for (x, b) in v.iter_mut().zip(data.chunks_exact(4)) {
                *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        v
    }

    /// A column-major `tensor-core` view of the data, with dims
    /// [`Shape::core_dims`] (the batch is a last axis when it is not 1).
    pub fn to_core(&self) -> Result<tensor_core::Tensor<'_>> {
        Ok(tensor_core::Tensor::with_order(
            DType::F32,
            self.shape.core_dims(),
            MemoryOrder::ColumnMajor,
            self.data(),
        )?)
    }

    /// Like [`Tensor::to_core`], keeping the storage (no copy).
    pub fn into_core(self) -> Result<tensor_core::Tensor<'a>> {
        let dims = self.shape.core_dims();
        Ok(tensor_core::Tensor::with_order(
            DType::F32,
            dims,
            MemoryOrder::ColumnMajor,
            self.data,
        )?)
    }

    /// The values in row-major (C) order of [`Shape::core_dims`], as an owned vector.
    pub fn to_row_major_vec(&self) -> Vec<f32> {
        column_to_row_major_f32(self.data(), &self.shape.core_dims())
    }

    /// A tensor that no longer borrows the input (copies borrowed data only).
    pub fn into_static(self) -> Tensor<'static> {
        Tensor {
            shape: self.shape,
            data: self.data.into_static(),
        }
    }

    /// A `'static` tensor sharing data that lies inside `map` without copying.
    pub fn rebase(self, map: &Arc<MappedFile>) -> Tensor<'static> {
        Tensor {
            shape: self.shape,
            data: self.data.rebase(map),
        }
    }

    pub(crate) fn from_parts_unchecked(shape: Shape, data: Bytes<'a>) -> Tensor<'a> {
        Tensor { shape, data }
    }
}

/// A trainable parameter: its value and named optimizer stats.
///
/// `stats` is in file order and keeps every entry, duplicates included;
/// [`Parameter::stat`] follows the library (the first entry of a key wins).
/// Keys are raw bytes (the format does not require UTF-8).
#[derive(Debug, Clone)]
pub struct Parameter<'a> {
    /// The value; its batch must be 1.
    pub value: Tensor<'a>,
    /// `(key, tensor)` pairs in file order (not validated against the value, as in the library).
    pub stats: Vec<(Vec<u8>, Tensor<'a>)>,
}

impl<'a> Parameter<'a> {
    /// A parameter with no stats; fails unless the value's batch is 1.
    pub fn new(value: Tensor<'a>) -> Result<Parameter<'a>> {
        check_param_batch(value.shape(), 0)?;
        Ok(Parameter {
            value,
            stats: Vec::new(),
        })
    }

    /// Adds a stat (kept in insertion order).
    pub fn with_stat(mut self, key: impl Into<Vec<u8>>, t: Tensor<'a>) -> Self {
        self.stats.push((key.into(), t));
        self
    }

    /// The stat named `key` (the first one when the file repeats a key, as in the library).
    pub fn stat(&self, key: impl AsRef<[u8]>) -> Option<&Tensor<'a>> {
        let key = key.as_ref();
        self.stats.iter().find(|(k, _)| k == key).map(|(_, t)| t)
    }

    /// Drops repeated stat keys, keeping the first of each (the library's `emplace`).
    pub fn dedup_stats(&mut self) {
        let mut seen = std::collections::HashSet::new();
        self.stats.retain(|(k, _)| seen.insert(k.clone()));
    }

    /// A parameter that no longer borrows the input.
    pub fn into_static(self) -> Parameter<'static> {
        Parameter {
            value: self.value.into_static(),
            stats: self
                .stats
                .into_iter()
                .map(|(k, t)| (k, t.into_static()))
                .collect(),
        }
    }

    /// A `'static` parameter sharing data inside `map`.
    pub fn rebase(self, map: &Arc<MappedFile>) -> Parameter<'static> {
        Parameter {
            value: self.value.rebase(map),
            stats: self
                .stats
                .into_iter()
                .map(|(k, t)| (k, t.rebase(map)))
                .collect(),
        }
    }
}

pub(crate) fn check_param_batch(shape: &Shape, offset: u64) -> Result<()> {
    if shape.batch() != 1 {
        return Err(Error::ParameterBatch {
            offset,
            shape: shape.to_string(),
        });
    }
    Ok(())
}

/// A key path: one component per nested model, e.g. `["enc", "rnn", "u"]`.
pub type KeyPath = Vec<Vec<u8>>;

/// Joins a key path with `.` as the library prints it (`enc.rnn.u`), invalid UTF-8 replaced.
pub fn join_key(path: &[Vec<u8>]) -> String {
    let parts: Vec<Cow<'_, str>> = path.iter().map(|c| String::from_utf8_lossy(c)).collect();
    parts.join(".")
}

/// A model: parameters by key path.
///
/// `entries` is in file order and keeps every entry. Lookups follow the
/// library's `Model::load`: when a key occurs twice the **last** entry wins
/// ([`Model::get`]); [`Model::dedup`] applies that. The writer sorts keys
/// byte-wise (the library's `std::map` order) and refuses duplicates. A key
/// path must have at least one component (the reader rejects `[]`, which no
/// library model can load); components may be any bytes, `""` and names
/// with `.` included.
#[derive(Debug, Clone, Default)]
pub struct Model<'a> {
    /// `(key path, parameter)` in file order.
    pub entries: Vec<(KeyPath, Parameter<'a>)>,
}

impl<'a> Model<'a> {
    /// An empty model.
    pub fn new() -> Self {
        Model::default()
    }

    /// Adds a parameter under `path` (any iterable of byte strings).
    pub fn insert<P, C>(&mut self, path: P, param: Parameter<'a>)
    where
        P: IntoIterator<Item = C>,
        C: Into<Vec<u8>>,
    {
        let key: KeyPath = path.into_iter().map(Into::into).collect();
        self.entries.push((key, param));
    }

    /// The parameter at exactly `path` (the last one if the file repeats it).
    pub fn get<C: AsRef<[u8]>>(&self, path: &[C]) -> Option<&Parameter<'a>> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| key_eq(k, path))
            .map(|(_, p)| p)
    }

    /// The parameter whose `.`-joined name is `name` (ambiguous when
    /// components contain `.`; prefer [`Model::get`]).
    pub fn get_by_name(&self, name: &str) -> Option<&Parameter<'a>> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| join_key(k) == name)
            .map(|(_, p)| p)
    }

    /// The parameters of the sub-model at `prefix`, with their path relative to it, in file order.
    ///
    /// `model.submodel(&["enc"])` yields `(["rnn","u"], …)`, `(["w"], …)`.
    pub fn submodel<'s, C: AsRef<[u8]>>(
        &'s self,
        prefix: &'s [C],
    ) -> impl Iterator<Item = (&'s [Vec<u8>], &'s Parameter<'a>)> + 's {
        self.entries
            .iter()
            .filter(move |(k, _)| k.len() > prefix.len() && key_eq(&k[..prefix.len()], prefix))
            .map(move |(k, p)| (&k[prefix.len()..], p))
    }

    /// Drops all but the last entry of each repeated key (the library's load semantics), keeping file order otherwise.
    pub fn dedup(&mut self) {
        let mut seen = std::collections::HashSet::new();
        let mut keep = vec![false; self.entries.len()];
        for (flag, (k, _)) in keep.iter_mut().zip(&self.entries).rev() {
            *flag = seen.insert(k.clone());
        }
        let mut it = keep.into_iter();
        self.entries.retain(|_| it.next().unwrap_or(true));
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A model that no longer borrows the input.
    pub fn into_static(self) -> Model<'static> {
        Model {
            entries: self
                .entries
                .into_iter()
                .map(|(k, p)| (k, p.into_static()))
                .collect(),
        }
    }

    /// A `'static` model sharing data inside `map`.
    pub fn rebase(self, map: &Arc<MappedFile>) -> Model<'static> {
        Model {
            entries: self
                .entries
                .into_iter()
                .map(|(k, p)| (k, p.rebase(map)))
                .collect(),
        }
    }
}

fn key_eq<C: AsRef<[u8]>>(k: &[Vec<u8>], path: &[C]) -> bool {
    k.len() == path.len() && k.iter().zip(path).all(|(a, b)| a.as_slice() == b.as_ref())
}

/// An optimizer's configs: a uint map and a float map, in file order.
///
/// The file does not say which class wrote it; [`Optimizer::guess_class`]
/// looks at the keys, and the typed views in [`crate::optim`] apply the
/// configs the way the library's `set_configs` does. Lookups by key give
/// the first entry of a repeated key (the library reads the maps with
/// `emplace`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Optimizer {
    /// `(key, value)` of the uint map, in file order.
    pub uint_configs: Vec<(Vec<u8>, u32)>,
    /// `(key, value)` of the float map, in file order.
    pub float_configs: Vec<(Vec<u8>, f32)>,
}

impl Optimizer {
    /// The uint config `key` (first one wins).
    pub fn uint(&self, key: &str) -> Option<u32> {
        self.uint_configs
            .iter()
            .find(|(k, _)| k == key.as_bytes())
            .map(|(_, v)| *v)
    }

    /// The float config `key` (first one wins).
    pub fn float(&self, key: &str) -> Option<f32> {
        self.float_configs
            .iter()
            .find(|(k, _)| k == key.as_bytes())
            .map(|(_, v)| *v)
    }
}

/// A whole file: one of the five data types.
#[derive(Debug, Clone)]
pub enum File<'a> {
    /// A Shape file.
    Shape(Shape),
    /// A Tensor file.
    Tensor(Tensor<'a>),
    /// A Parameter file.
    Parameter(Parameter<'a>),
    /// A Model file.
    Model(Model<'a>),
    /// An Optimizer file.
    Optimizer(Optimizer),
}

impl<'a> File<'a> {
    /// Which data type this is.
    pub fn data_type(&self) -> DataType {
        match self {
            File::Shape(_) => DataType::Shape,
            File::Tensor(_) => DataType::Tensor,
            File::Parameter(_) => DataType::Parameter,
            File::Model(_) => DataType::Model,
            File::Optimizer(_) => DataType::Optimizer,
        }
    }

    /// A `'static` file sharing tensor data inside `map` (no copy for data read from `map`).
    pub fn rebase(self, map: &Arc<MappedFile>) -> File<'static> {
        match self {
            File::Shape(s) => File::Shape(s),
            File::Tensor(t) => File::Tensor(t.rebase(map)),
            File::Parameter(p) => File::Parameter(p.rebase(map)),
            File::Model(m) => File::Model(m.rebase(map)),
            File::Optimizer(o) => File::Optimizer(o),
        }
    }

    /// A file that no longer borrows the input.
    pub fn into_static(self) -> File<'static> {
        match self {
            File::Shape(s) => File::Shape(s),
            File::Tensor(t) => File::Tensor(t.into_static()),
            File::Parameter(p) => File::Parameter(p.into_static()),
            File::Model(m) => File::Model(m.into_static()),
            File::Optimizer(o) => File::Optimizer(o),
        }
    }
}

/// Column-major little-endian f32 bytes of `dims` → row-major values.
///
/// Rank-2 data (after dropping 1-dims) uses a cache-blocked transpose; other ranks walk an odometer.
pub fn column_to_row_major_f32(src: &[u8], dims: &[usize]) -> Vec<f32> {
    let n = src.len() / 4;
    let eff: Vec<usize> = dims.iter().copied().filter(|&d| d != 1).collect();
    let get = |i: usize| -> f32 {
        let b = &src[i * 4..i * 4 + 4];
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    };
    if eff.len() <= 1 {
        return (0..n).map(get).collect();
    }
    let total: usize = eff.iter().product();
    if total != n {
        return (0..n).map(get).collect();
    }
    if eff.len() == 2 {
        // column-major [r, c]: element (i, j) at i + r*j; row-major at i*c + j.
        let (r, c) = (eff[0], eff[1]);
        let mut out = vec![0f32; n];
        const B: usize = 64;
        let mut j0 = 0;
        while j0 < c {
            let j1 = (j0 + B).min(c);
            let mut i0 = 0;
            while i0 < r {
                let i1 = (i0 + B).min(r);
                for j in j0..j1 {
                    let col = &src[(j * r + i0) * 4..(j * r + i1) * 4];
                    for (di, b) in col.chunks_exact(4).enumerate() {
                        out[(i0 + di) * c + j] = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    }
                }
                i0 = i1;
            }
            j0 = j1;
        }
        return out;
    }
    let bytes = tensor_core::column_to_row_major(src, &eff, 4);
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Row-major little-endian f32 bytes of `dims` → column-major bytes.
pub(crate) fn row_to_column_major_f32(src: &[u8], dims: &[usize]) -> Vec<u8> {
    // Row-major [d0..dn] is column-major [dn..d0]; transposing gives column-major [d0..dn].
    let rev: Vec<usize> = dims.iter().rev().copied().collect();
    tensor_core::column_to_row_major(src, &rev, 4)
}
