//! The one trait a format implements, and the one place formats are listed.
//!
//! Adding a format: a module in `formats/` with a unit struct implementing
//! [`Codec`], a variant of [`Format`] with its row in `format::TABLE` (its
//! names, extensions, feature, graph kind, how detection takes its
//! extension), and one arm in [`codec`]. A `match` on [`Format`] lists every
//! variant (no `_` arm), so a forgotten format is a compile error.
//! Formats from outside the crate implement the public
//! [`crate::FormatPlugin`] instead; `plugin.rs` adapts it to [`Codec`].

use std::sync::Arc;

use serde_json::{Map, Value};
use tensor_core::graph::ModelGraph;
use tensor_core::{DType, Limits, MappedFile, Tensor, TensorMap};

use crate::convert::{Exchange, Plan};
use crate::random_access::{FileIndex, ReadAt};
use crate::sink::Feed;
use crate::{Error, Format, Result};

/// A file to read whole: its bytes (memory-mapped or in memory) and format.
pub(crate) struct Source {
    /// The whole file.
    pub map: Arc<MappedFile>,
    /// Its format.
    pub format: Format,
}

impl Source {
    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_bytes()
    }
}

/// How readers treat a file.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Bounds on what a hostile file can make a reader allocate.
    pub limits: Limits,
    /// Read no tensor when the file is opened, only its structure (names,
    /// dtypes, shapes, metadata, graph): each tensor is read when it is
    /// first asked for, so a tensor whose bytes are damaged (or would
    /// inflate past the limits) is found then. What `inspect` needs, from
    /// a compressed or huge file as fast as from a small one. A remote
    /// location opened so is read by ranges. Off by default: opening reads
    /// every tensor, so that a file that does not read is refused at once.
    pub lazy: bool,
}

impl ReadOptions {
    /// The same options with other limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same options, reading tensors when they are asked for
    /// ([`ReadOptions::lazy`]) or at open.
    pub fn with_lazy(mut self, lazy: bool) -> Self {
        self.lazy = lazy;
        self
    }
}

/// One tensor as the file stores it, in the `inspect --json` contract's terms.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StoredTensor {
    /// Its one name: unique, the name [`crate::Document::tensor`], `inspect`,
    /// `stats`, `diff`, `show` and `--only`/`--exclude`/`--rename` take.
    pub name: String,
    /// The name as the file stores it, in the terms of schema 1 of the
    /// `inspect --json` contract (not unique in every file: TenniS node names
    /// may repeat; a TenniS constant is `<node>/value` where its one name is
    /// `<node>`). Equal to [`StoredTensor::name`] for most files.
    pub stored_name: String,
    /// Dimensions as the file states them (primitiv: without the batch).
    pub shape: Vec<usize>,
    /// Format-specific fields of the contract (primitiv `path`, `stat`,
    /// `batch`, `order`; NNabla `need_grad`; `.params` `data_offset`).
    pub extras: Map<String, Value>,
}

impl StoredTensor {
    /// A tensor whose contract name is also its key, with the tensor's own dims.
    pub(crate) fn new(name: impl Into<String>, t: &Tensor<'_>) -> Self {
        let name = name.into();
        StoredTensor {
            stored_name: name.clone(),
            name,
            shape: t.dims().to_vec(),
            extras: Map::new(),
        }
    }

    /// A tensor whose contract name is also its key, with these dims.
    pub(crate) fn from_parts(name: String, shape: Vec<usize>) -> Self {
        StoredTensor {
            stored_name: name.clone(),
            name,
            shape,
            extras: Map::new(),
        }
    }

    /// Adds a contract field.
    pub(crate) fn with(mut self, key: &str, value: Value) -> Self {
        self.extras.insert(key.to_string(), value);
        self
    }

    /// NNabla's `need_grad`, where the format has it.
    pub fn need_grad(&self) -> Option<bool> {
        self.extras.get("need_grad").and_then(Value::as_bool)
    }
}

/// What a reader makes of a file.
#[derive(Default)]
pub(crate) struct Contents {
    /// primitiv's data type name.
    pub kind: Option<&'static str>,
    /// The tensors under unique names, sharing the file's bytes where possible.
    pub tensors: TensorMap<'static>,
    /// The contract's entries, in stored order.
    pub stored: Vec<StoredTensor>,
    /// The graph, for formats that store one.
    pub graph: Option<ModelGraph>,
    /// File-level fields of the contract and format metadata.
    pub metadata: Map<String, Value>,
}

impl Contents {
    /// Adds a tensor whose contract entry is `entry`; a name already taken
    /// gets `#2`, `#3`, ... appended (the first free), so names stay unique.
    pub fn push(&mut self, mut entry: StoredTensor, tensor: Tensor<'static>) {
        entry.name = free_name(entry.name, |n| self.tensors.contains(n));
        self.tensors.insert(entry.name.clone(), tensor);
        self.stored.push(entry);
    }
}

/// `name` when `taken` does not hold it, else the first of `name#2`,
/// `name#3`, ... that it does not (how [`Contents::push`] keeps names unique).
pub(crate) fn free_name(name: String, taken: impl Fn(&str) -> bool) -> String {
    if !taken(&name) {
        return name;
    }
    let mut n = 2;
    while taken(&format!("{name}#{n}")) {
        n += 1;
    }
    format!("{name}#{n}")
}

/// A tensor on its way into a writer, with the conversion it still needs.
pub(crate) struct Item<'t, 'a> {
    /// Its name in the new file.
    pub name: &'t str,
    /// The tensor as read, or where to read it from.
    pub tensor: TensorRef<'t, 'a>,
    /// NNabla's `need_grad` for it (true when the source has none).
    pub need_grad: bool,
}

/// Reads a tensor on demand from the random-access path's file: its
/// [`crate::random_access::FileIndex`] and the file's reader.
#[derive(Clone, Copy)]
pub(crate) struct LoadTensor<'a> {
    /// Where each tensor's bytes are.
    pub index: &'a FileIndex,
    /// The file.
    pub reader: &'a dyn ReadAt,
}

impl LoadTensor<'_> {
    /// Tensor `at` of the source, whole, with its dims and order.
    pub fn load(&self, at: usize) -> Result<Tensor<'static>> {
        self.index.read_tensor(self.reader, at)
    }

    /// `count` elements of tensor `at` (fewer at its end) from its flat
    /// (stored-order) element `start`, read into `buf`, as a
    /// one-dimensional tensor borrowing it.
    pub fn read_elements<'b>(
        &self,
        at: usize,
        start: u64,
        count: u64,
        buf: &'b mut Vec<u8>,
    ) -> Result<Tensor<'b>> {
        self.index.read_elements(self.reader, at, start, count, buf)
    }

    /// True when reading tensor `at` decodes it (a deflated member): each
    /// pass over it costs that work again.
    pub fn is_decoded(&self, at: usize) -> bool {
        self.index.tensors().get(at).is_some_and(|t| t.is_decoded())
    }
}

/// An item's tensor: held in memory (the whole-file path), or read from
/// the file when the writer gets to it (the random-access path) and
/// dropped once written, so a writer holds one input tensor at a time.
/// The safetensors, npz and cvm-params writers take either a slice at a time
/// ([`TensorRef::write_planned`], in `convert/stream.rs`).
#[derive(Clone, Copy)]
pub(crate) enum TensorRef<'t, 'a> {
    /// In memory.
    Held(&'t Tensor<'a>),
    /// Tensor `at` of `from`, with the dtype, dims, order and stored byte
    /// length it has there.
    Read {
        /// Its dtype as read.
        dtype: DType,
        /// Its dims as read.
        dims: &'t [usize],
        /// Its memory order as read.
        order: tensor_core::MemoryOrder,
        /// Its bytes as stored (what progress counts).
        byte_len: u64,
        /// Its position in `from`.
        at: usize,
        /// Where it is read from.
        from: &'t LoadTensor<'t>,
    },
}

impl<'t, 'a> From<&'t Tensor<'a>> for TensorRef<'t, 'a> {
    fn from(t: &'t Tensor<'a>) -> Self {
        TensorRef::Held(t)
    }
}

/// A tensor [`TensorRef::get`] gave: borrowed, or read for the occasion.
pub(crate) enum Got<'t, 'a> {
    Held(&'t Tensor<'a>),
    Read(Tensor<'static>),
}

impl Got<'_, '_> {
    /// The tensor.
    pub fn tensor(&self) -> &Tensor<'_> {
        match self {
            Got::Held(t) => t,
            Got::Read(t) => t,
        }
    }
}

impl<'t, 'a> TensorRef<'t, 'a> {
    /// Its dtype as read.
    pub fn dtype(&self) -> DType {
        match self {
            TensorRef::Held(t) => t.dtype(),
            TensorRef::Read { dtype, .. } => *dtype,
        }
    }

    /// Its dims as read.
    pub fn dims(&self) -> &'t [usize] {
        match *self {
            TensorRef::Held(t) => t.dims(),
            TensorRef::Read { dims, .. } => dims,
        }
    }

    /// Its memory order as read.
    pub fn order(&self) -> tensor_core::MemoryOrder {
        match self {
            TensorRef::Held(t) => t.order(),
            TensorRef::Read { order, .. } => *order,
        }
    }

    /// Its bytes as read (what a writer reports as progress).
    pub fn byte_len(&self) -> u64 {
        match self {
            TensorRef::Held(t) => t.bytes().len() as u64,
            TensorRef::Read { byte_len, .. } => *byte_len,
        }
    }

    /// The tensor: borrowed when held, else read whole now.
    pub fn get(&self) -> Result<Got<'t, 'a>> {
        match *self {
            TensorRef::Held(t) => Ok(Got::Held(t)),
            TensorRef::Read { at, from, .. } => from.load(at).map(Got::Read),
        }
    }
}

/// What every writer writes to: a file being written atomically
/// ([`tensor_core::io::Sink`], through `tensor_core::io::write_atomic`), a
/// `Cursor<Vec<u8>>` (a conversion in memory), a temporary file copied to
/// a writer that cannot seek (`tensor_core::io::write_spooled`), or the
/// caller's own (the viewer's).
pub(crate) trait WriteSeek: std::io::Write + std::io::Seek {}

impl<W: std::io::Write + std::io::Seek + ?Sized> WriteSeek for W {}

/// What a writer needs besides the tensors.
pub(crate) struct WriteContext<'c> {
    /// The conversion each tensor goes through on its way in; every writer
    /// applies it one tensor at a time, while writing.
    pub plan: Plan,
    /// Called with the number of input bytes each tensor accounts for, as it
    /// is written.
    pub progress: &'c dyn Fn(u64),
    /// `__metadata__` for formats that store string metadata (safetensors).
    pub metadata: Vec<(String, String)>,
}

impl WriteContext<'static> {
    /// `plan` alone: no progress, no metadata (re-encoding a file, a model
    /// assembled in memory).
    pub fn quiet(plan: Plan) -> Self {
        WriteContext {
            plan,
            progress: &|_| {},
            metadata: Vec::new(),
        }
    }
}

/// One format's reader and writers.
pub(crate) trait Codec: Sync {
    /// Writes `feed`'s tensors as a file of `format` to `w`: the format's
    /// [`crate::sink::TensorSink`], fed by the one loop
    /// ([`Feed::drain`]), which hands each tensor over to be got
    /// ([`TensorRef::get`]), converted by the plan, written and dropped
    /// before the next, or streamed a slice at a time
    /// ([`TensorRef::write_planned`]). The format's one writer: for a file
    /// (`write_atomic`), in memory, and for a file read by slices.
    fn write(&self, format: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()>;

    /// [`Codec::write`] of `items` with `cx`.
    fn write_to(
        &self,
        format: Format,
        w: &mut dyn WriteSeek,
        items: &[Item<'_, '_>],
        cx: &WriteContext<'_>,
    ) -> Result<()> {
        self.write(format, w, &Feed { items, cx })
    }

    /// Writes the file again in its own format with everything it holds
    /// (byte-identical for files the real library wrote) to `w`.
    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()>;

    /// Files carried inside this one that are documents of their own (an
    /// `.nnp`'s solver states), by member name.
    fn attachments(&self, _src: &Source, _opts: &ReadOptions) -> Result<Vec<(String, Contents)>> {
        Ok(Vec::new())
    }

    /// Why `format` cannot hold a tensor of `dtype` and `dims` (as the plan
    /// leaves it), or `None` when it can.
    fn refuses(&self, _format: Format, _dtype: DType, _dims: &[usize]) -> Option<String> {
        None
    }

    /// How the plan must treat tensors for this target: whether the writer
    /// takes column-major tensors as they are.
    fn takes_column_major(&self, _format: Format) -> bool {
        false
    }

    /// The dtype `format` stores a tensor of `dtype` as (after the plan,
    /// when [`Codec::refuses`] lets it in): `dtype` itself unless the
    /// format widens it (NNabla's protobuf parameters are f32).
    fn written_dtype(&self, _format: Format, dtype: DType) -> DType {
        dtype
    }

    /// The exchange format (safetensors, numpy) whose dtypes the plan fits
    /// tensors to on their way to `format`, when it is one.
    fn exchange(&self, _format: Format) -> Option<Exchange> {
        None
    }

    /// Reads the file `r` of `format` into `index`: the format's one
    /// reader ([`crate::random_access`]), for a whole file (a memory map)
    /// and for one read by slices alike. It walks the file's structure and
    /// records where each tensor's bytes are; a layout it does not locate
    /// is parsed whole ([`FileIndex::whole`]) and its tensors held
    /// ([`FileIndex::push_contents`]).
    fn index(&self, format: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()>;
}

/// The codec of `format`, or the feature it needs.
pub(crate) fn codec(format: Format) -> Result<&'static dyn Codec> {
    let disabled = || Error::FeatureDisabled {
        format,
        feature: format.feature(),
    };
    match format {
        #[cfg(feature = "cvm")]
        Format::CvmParams => Ok(&crate::formats::cvm::Cvm),
        #[cfg(feature = "primitiv")]
        Format::Primitiv => Ok(&crate::formats::primitiv::Primitiv),
        #[cfg(feature = "nnabla")]
        Format::NnablaNntxt | Format::NnablaProtobuf => Ok(&crate::formats::nnabla::Nnabla),
        #[cfg(feature = "nnp")]
        Format::NnablaNnp | Format::NnablaH5 => Ok(&crate::formats::nnp::NnpCodec),
        #[cfg(feature = "tennis")]
        Format::TennisModule => Ok(&crate::formats::tennis::Tennis),
        #[cfg(feature = "safetensors")]
        Format::Safetensors => Ok(&crate::formats::safetensors::SafetensorsCodec),
        #[cfg(feature = "npz")]
        Format::Npz => Ok(&crate::formats::npz::Npz),
        #[cfg(feature = "onnx")]
        Format::Onnx => Ok(&crate::formats::onnx::OnnxCodec),
        Format::External(e) => Ok(crate::plugin::codec_of(e)),
        #[allow(unreachable_patterns)]
        Format::CvmParams
        | Format::Primitiv
        | Format::NnablaNntxt
        | Format::NnablaProtobuf
        | Format::NnablaNnp
        | Format::NnablaH5
        | Format::TennisModule
        | Format::Safetensors
        | Format::Npz
        | Format::Onnx => Err(disabled()),
    }
}
