//! Opening a file by random access: a [`crate::Document`] opened at a
//! [`ReadAt`] ([`crate::Document::open_at`]) walks only the file's
//! structure (headers, name tables) and records where each tensor's bytes
//! are, without reading them (its index, this module's `FileIndex`, which
//! is not public: the document is the one opened-file type); the bytes are
//! read later, a slice at a time ([`crate::Document::read_elements`]), and
//! [`crate::Document::entry`] says what the index holds of one tensor
//! ([`IndexedTensor`]).
//!
//! This is how a file too big to hold in memory is shown (the viewer reads
//! a browser `File` through `Blob.slice`). The formats whose layout allows
//! it: TVM/CVM `.params`, `.safetensors`, `.npz` archives (a stored
//! member, as `numpy.savez` writes it: its tensor at an offset its headers
//! state; a deflated one, as `numpy.savez_compressed` writes it: its
//! `.npy` header inflated, its data inflated as it is read, see below; a
//! big-endian one, `>f4`, `>i8`, ...: swapped to little-endian as it is
//! read, the bytes the whole-file path gives), NNabla `.nnp`
//! archives whose parameters are in stored or deflated `.protobuf` members
//! (the reader's own walk, `nnabla_proto::index::merge_index`: the
//! networks read whole, each parameter's packed data located, not read; a
//! deflated member walked once as it inflates, in bounded memory);
//! standalone NNabla `.protobuf` files whose parameters are packed (the
//! same walk over the whole file), TenniS `.tsm`
//! modules (the reader's own walk, `bubble_module::Module::index`: the
//! graph read, each tensor's data located, not read), ONNX `.onnx`
//! models (the model read without its initializers' data, each located:
//! `raw_data` and one packed run of `float_data` or `double_data` are byte
//! ranges; initializers in the varint fields `int32_data`, `int64_data`,
//! `uint64_data`, or written unpacked or in several runs, are decoded a
//! slice at a time, narrowed as the whole-file path narrows them, with a
//! forward cursor so that reading front to back is one pass, checkpoints
//! recorded as reads go forward (one every 65,536 values, at most 4,096
//! per tensor), and at most 256 KiB of the file held besides the slice;
//! a packed varint run is passed over by its length at open, its values
//! counted there only within 4 MiB of such runs per file, else at the
//! tensor's first read, which fails, for a count that is not the dims',
//! with the message the whole-file path gives at open (such a file opens
//! here, its table shown: see `onnx-format`'s `index`); external
//! data refused as the whole-file path refuses it), and
//! NNabla `.h5` parameter files and `.nnp` archives
//! whose parameters are in a stored `parameter.h5` (nnabla's default
//! layout; its HDF5 structure walked through [`ReadAt`] by `nnp-archive`'s
//! reader, each dataset's data located, not read: contiguous, or compact
//! (the bytes read from the object header), or chunked with no filter or
//! shuffle, deflate, fletcher32, LZF (each chunk located, read and decompressed when
//! a slice needs it, one band of chunks kept per file: see `random_access/h5chunks.rs`),
//! either byte order) or a deflated one (walked as it inflates: contiguous
//! and compact datasets), and primitiv MessagePack files (the
//! reader's own walk, `primitiv_format::index`: key paths, shapes, stat
//! keys and optimizer configs read, each tensor's data, always one
//! contiguous `bin`, located, not read; every primitiv file the whole-file
//! path reads is read this way). An NNabla file these walks do not locate
//! (a `.nntxt`, unpacked or split `.protobuf` data, a nested `.nnp`,
//! parameters in a text member, an HDF5 dataset filtered otherwise or with
//! a chunk never written, chunked data in a deflated `parameter.h5`, a
//! solver-state `.h5`) is parsed whole by its crate's parser and its
//! tensors held in memory (`formats/nnabla.rs`).
//! Formats without an index (registered plugins) are opened whole
//! ([`crate::Document::from_bytes`]).
//!
//! Where the code is: each format's reader is in its format module, beside
//! its writer (`formats/<format>.rs`, an `impl FileIndex` block with its
//! `read_<format>`; the `.nnp` and `.h5` readers in `formats/nnp/read.rs`
//! and `formats/nnp/h5.rs`), called by its codec's `index`. This module
//! keeps what they share: `FileIndex`, [`IndexedTensor`], [`ReadAt`],
//! detection, and the layouts a tensor is read by slices through
//! (`random_access/layout.rs`; deflated zip members, `deflate.rs`; chunked
//! HDF5 datasets, `h5chunks.rs`).
//!
//! A tensor in a deflated member ([`IndexedTensor::is_deflated`]) is read
//! by inflating the member from its start; the index keeps the place of
//! the last members read, so reading a tensor front to back a slice at a
//! time (the viewer's statistics, [`crate::convert_sliced`]) inflates it
//! once, and a read behind that place inflates again from the member's
//! start. Memory stays bounded (1 MiB of compressed input, a 64 KiB
//! buffer and the inflater's 32 KiB window per kept place, whatever the
//! member's size). The whole
//! member is checked as the whole-file path checks it (no byte more than
//! declared, its CRC-32) when a pass reaches its end: a damaged `.npz`
//! member opens and fails at that read (an `.nnp`'s `.protobuf` member is
//! inflated to its end at opening, walked, never held, so it fails there,
//! as the whole path does).
//!
//! The tensors are the ones [`crate::Document`] reads from the same bytes:
//! same names, dtypes, shapes, stored fields and bytes (and primitiv's
//! kind, [`crate::Document::kind`]); the same claims are
//! checked (every claimed size against the file's length, with checked
//! arithmetic, under [`crate::ReadOptions::limits`]).
//!
//! ```
//! # fn main() -> Result<(), mlformats::Error> {
//! use mlformats::Document;
//! let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
//! let doc = Document::open_at(bytes, None, None, &Default::default())?;
//! assert_eq!(doc.entry("b").unwrap().numel(), 1);
//! let mut buf = Vec::new();
//! let b = doc.read_elements(doc.position("b").unwrap(), 0, 1, &mut buf)?;
//! assert_eq!(b.to_vec::<i32>()?, [258]);
//! # Ok(()) }
//! ```

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use tensor_core::{Bytes, DType, MappedFile, MemoryOrder, Tensor};

use crate::codec::{Contents, ReadOptions, StoredTensor};
use crate::summary::{Summary, TensorSummary};
use crate::{Error, Format, Result};
pub(crate) use layout::Layout;

pub(crate) mod deflate;
#[cfg(feature = "nnp")]
pub(crate) mod h5chunks;
pub(crate) mod layout;
pub(crate) use layout::shared;

/// A file read by offset: its length and any range of its bytes
/// (`tensor-core`'s, which the format crates read through).
pub use tensor_core::wire::ReadAt;

/// A borrowed [`ReadAt`], sized: how a source of any type (a slice, a
/// file) is handed to a codec as `&dyn ReadAt`.
pub(crate) struct ByRef<'r, R: ?Sized>(pub &'r R);

impl<R: ReadAt + ?Sized> ReadAt for ByRef<'_, R> {
    fn len(&self) -> u64 {
        self.0.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_at(offset, buf)
    }
}

/// A [`ReadAt`] as `Read + Seek`, for the readers that take a stream.
pub(crate) struct Stream<'r, R: ?Sized> {
    pub(crate) r: &'r R,
    pub(crate) pos: u64,
}

impl<R: ReadAt + ?Sized> Read for Stream<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.r.len().saturating_sub(self.pos);
        let n = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
        self.r.read_at(self.pos, &mut buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: ReadAt + ?Sized> Seek for Stream<'_, R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let bad = || io::Error::from(io::ErrorKind::InvalidInput);
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.r.len().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(bad)?;
        Ok(self.pos)
    }
}

/// One tensor of an opened file's index ([`crate::Document::entry`]): what
/// the file says of it and where its bytes are.
#[derive(Debug, Clone)]
pub struct IndexedTensor {
    pub(crate) stored: StoredTensor,
    /// The tensor's dims where they are not the stored shape (primitiv:
    /// the batch as a last axis).
    pub(crate) tensor_dims: Option<Vec<usize>>,
    pub(crate) dtype: DType,
    pub(crate) order: MemoryOrder,
    pub(crate) offset: u64,
    pub(crate) len: u64,
    pub(crate) numel: u64,
    /// How its bytes are laid out from `offset`.
    pub(crate) layout: Layout,
}

impl IndexedTensor {
    /// A tensor of `numel` elements of `dtype`, row-major, whose `len`
    /// bytes are one range of the file from `offset` (other layouts:
    /// [`IndexedTensor::with_layout`]), its dims the stored shape.
    pub(crate) fn row_major(
        stored: StoredTensor,
        dtype: DType,
        offset: u64,
        len: u64,
        numel: u64,
    ) -> Self {
        IndexedTensor {
            stored,
            tensor_dims: None,
            dtype,
            order: MemoryOrder::RowMajor,
            offset,
            len,
            numel,
            layout: Layout::Contiguous,
        }
    }

    /// The same tensor with its bytes laid out as `layout` from its offset.
    pub(crate) fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// The same tensor with its elements in `order`.
    pub(crate) fn with_order(mut self, order: MemoryOrder) -> Self {
        self.order = order;
        self
    }

    /// Its one name (the name `inspect` shows).
    pub fn name(&self) -> &str {
        &self.stored.name
    }

    /// The tensor as the file stores it, in the `inspect --json` terms.
    pub fn stored(&self) -> &StoredTensor {
        &self.stored
    }

    /// Its element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Its dimensions, as [`crate::Document::tensor`] gives them (the
    /// stored shape, [`IndexedTensor::stored`], but for a primitiv tensor
    /// whose batch is not 1: the batch a last axis).
    pub fn dims(&self) -> &[usize] {
        self.tensor_dims.as_deref().unwrap_or(&self.stored.shape)
    }

    /// The order of its elements in the file.
    pub fn order(&self) -> MemoryOrder {
        self.order
    }

    /// Where its bytes start in the file (for an ONNX initializer whose
    /// values are decoded from a typed field, such as `int64_data`: where
    /// that field starts; for a tensor in a deflated zip member,
    /// [`IndexedTensor::is_deflated`]: where the member's compressed bytes
    /// start; 0 for a chunked or compact HDF5 dataset, which is not one
    /// range of the file).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How many bytes it has (inflated, for a tensor in a deflated member).
    pub fn byte_len(&self) -> u64 {
        self.len
    }

    /// True when its bytes are in a deflated zip member: reading them
    /// inflates the member from its start, or from where the last read of
    /// it stopped (see [`crate::Document::read_elements`]).
    pub fn is_deflated(&self) -> bool {
        matches!(&self.layout, Layout::Coded(c) if c.is_deflated())
    }

    /// True when reading its bytes decodes them (a deflated member
    /// inflated, a chunked HDF5 dataset's chunks decoded, an ONNX typed
    /// field's values decoded): each pass over the tensor costs that work
    /// again, where other layouts only read the file.
    pub fn is_decoded(&self) -> bool {
        match &self.layout {
            Layout::Contiguous => false,
            #[cfg(feature = "onnx")]
            Layout::OnnxTyped(_) => true,
            Layout::Held(_) => false,
            Layout::Coded(c) => c.is_deflated(),
            #[cfg(feature = "nnp")]
            Layout::H5(h) => h.is_chunked(),
        }
    }

    /// How many elements it has.
    pub fn numel(&self) -> u64 {
        self.numel
    }
}

/// A file's structure, read by random access: format, size, metadata and
/// every tensor's name, dtype, shape and byte range (see the
/// [module](self)).
#[derive(Debug, Clone)]
pub(crate) struct FileIndex {
    pub(crate) format: Format,
    pub(crate) kind: Option<&'static str>,
    pub(crate) file_size: u64,
    pub(crate) tensors: Vec<IndexedTensor>,
    pub(crate) metadata: Map<String, Value>,
    pub(crate) graph: Option<tensor_core::graph::ModelGraph>,
    pub(crate) limits: tensor_core::Limits,
    /// An NNabla file's model holds more than parameters (networks,
    /// executors, configs, ...): converting to another NNabla model format
    /// would need it (`convert/sliced.rs`).
    pub(crate) nnabla_model: bool,
    /// An NNabla file's model without its parameters (networks,
    /// executors, ...), for exporting its graph to ONNX (`export/index.rs`).
    #[cfg(feature = "nnabla")]
    pub(crate) nnabla: Option<std::sync::Arc<nnabla_proto::NNablaProtoBuf>>,
    /// An NNabla file stores a parameter name more than once (the tensor
    /// listed is the last one stored).
    pub(crate) repeated_names: bool,
    /// The file was parsed whole, its tensors' bytes held in memory (an
    /// NNabla file this path does not locate: see `formats/nnabla.rs`).
    pub(crate) read_whole: bool,
    /// The whole file, when it is in memory already (a memory map): what a
    /// layout parsed whole parses, instead of a copy read from the file.
    pub(crate) map: Option<Arc<MappedFile>>,
}

/// How much of the file's start and end detection looks at.
const HEAD: u64 = 4096;
const TAIL: u64 = 66 * 1024;

/// The format of the file `r` named `name`, detected from its first and
/// (for a zip archive) last bytes and its name ([`crate::detect`]'s rules), reading no more.
pub(crate) fn detect<R: ReadAt + ?Sized>(r: &R, name: Option<&Path>) -> Result<Option<Format>> {
    let len = r.len();
    let head = read_vec(r, 0, len.min(HEAD))?;
    // the end only for a zip archive: a file read by ranges is asked for
    // nothing far from its headers
    let tail = if crate::detect::starts_a_zip(&head) {
        let tail_at = len.saturating_sub(TAIL).max(len.min(HEAD));
        read_vec(r, tail_at, len - tail_at)?
    } else {
        Vec::new()
    };
    Ok(crate::detect::detect_bytes(&head, &tail, name, len))
}

pub(crate) fn read_vec<R: ReadAt + ?Sized>(r: &R, offset: u64, len: u64) -> Result<Vec<u8>> {
    let n = usize::try_from(len).map_err(|_| Error::DoesNotFitInMemory { bytes: len })?;
    let mut v = tensor_core::try_zeroed("bytes read from the file", n)?;
    r.read_at(offset, &mut v)?;
    Ok(v)
}

impl FileIndex {
    /// Reads the structure of the file `r` (its format detected from its
    /// first and last bytes and `name`, as [`crate::detect`] does): `None`
    /// when its format is not one this path reads (see the [module](self)).
    /// (The viewer's walk of a file's headers, `view.rs`.)
    #[cfg(any(feature = "view", test))]
    pub(crate) fn open<R: ReadAt + ?Sized>(
        r: &R,
        name: Option<&Path>,
        opts: &ReadOptions,
    ) -> Result<Option<Self>> {
        if r.len() == 0 {
            return Ok(None);
        }
        let Some(format) = detect(r, name)? else {
            return Ok(None);
        };
        Self::open_as(r, format, opts)
    }

    /// Reads the structure of the file `r` as `format`: `None` when this
    /// path does not read that format.
    pub(crate) fn open_as<R: ReadAt + ?Sized>(
        r: &R,
        format: Format,
        opts: &ReadOptions,
    ) -> Result<Option<Self>> {
        Self::open_in(r, None, format, opts)
    }

    /// [`FileIndex::open_as`] of a file in memory (`map`), which a layout
    /// read whole then parses where it is.
    pub(crate) fn open_map(
        map: &Arc<MappedFile>,
        format: Format,
        opts: &ReadOptions,
    ) -> Result<Option<Self>> {
        Self::open_in(map.as_bytes(), Some(map), format, opts)
    }

    fn open_in<R: ReadAt + ?Sized>(
        r: &R,
        map: Option<&Arc<MappedFile>>,
        format: Format,
        opts: &ReadOptions,
    ) -> Result<Option<Self>> {
        let mut index = Self::empty(format, r.len(), opts);
        index.map = map.cloned();
        // the format's codec reads it (none: its feature is off)
        let read = match crate::codec::codec(format) {
            Ok(codec) => {
                codec.index(format, &mut index, &ByRef(r))?;
                true
            }
            Err(_) => false,
        };
        index.map = None;
        Ok(read.then_some(index))
    }

    /// The whole file `r` as a `format` source for a parser that reads a
    /// file whole (the index then holds its tensors): the memory map the
    /// index is opened over, else read into memory.
    pub(crate) fn whole<R: ReadAt + ?Sized>(
        &mut self,
        r: &R,
        format: Format,
    ) -> Result<crate::codec::Source> {
        self.read_whole = true;
        let map = match &self.map {
            Some(map) if map.len() as u64 == r.len() => Arc::clone(map),
            _ => MappedFile::from_vec(read_vec(r, 0, r.len())?),
        };
        Ok(crate::codec::Source { map, format })
    }

    /// Gives each tensor a name of its own (a name the index repeats gets
    /// `#2`, `#3`, ..., the first free, as [`Contents::push`] does), and
    /// each tensor's position by name.
    pub(crate) fn make_names_unique(&mut self) -> std::collections::HashMap<String, usize> {
        let mut by_name = std::collections::HashMap::with_capacity(self.tensors.len());
        for (i, t) in self.tensors.iter_mut().enumerate() {
            if by_name.contains_key(&t.stored.name) {
                let name = std::mem::take(&mut t.stored.name);
                t.stored.name = crate::codec::free_name(name, |n| by_name.contains_key(n));
            }
            by_name.insert(t.stored.name.clone(), i);
        }
        by_name
    }

    /// The reading options the index was opened with.
    pub(crate) fn read_options(&self) -> ReadOptions {
        ReadOptions::default().with_limits(self.limits)
    }

    /// An index of no tensor, for a file of `format` of `file_size` bytes.
    pub(crate) fn empty(format: Format, file_size: u64, opts: &ReadOptions) -> Self {
        FileIndex {
            format,
            kind: None,
            file_size,
            tensors: Vec::new(),
            metadata: Map::new(),
            graph: None,
            limits: opts.limits,
            nnabla_model: false,
            #[cfg(feature = "nnabla")]
            nnabla: None,
            repeated_names: false,
            read_whole: false,
            map: None,
        }
    }

    /// Adds what a reader that reads a file whole made of it (a
    /// registered format's reader, an ONNX model with proto2 groups, an
    /// NNabla solver state): each tensor held ([`Layout::Held`]), with
    /// the kind, graph and metadata.
    pub(crate) fn push_contents(&mut self, c: Contents) -> Result<()> {
        self.read_whole = true;
        let Contents {
            kind,
            tensors,
            stored,
            graph,
            metadata,
        } = c;
        // (`Contents::push` keeps the two in the same order)
        for (stored, (name, t)) in stored.into_iter().zip(tensors) {
            if name != stored.name {
                return Err(Error::Malformed {
                    part: "tensor list",
                    at: None,
                    why: format!("no tensor {}", stored.name),
                });
            }
            let dims = t.dims().to_vec();
            let len = t.bytes().len() as u64;
            self.tensors.push(IndexedTensor {
                tensor_dims: (dims != stored.shape).then(|| dims.clone()),
                dtype: t.dtype(),
                order: t.order(),
                offset: 0,
                len,
                numel: count(&dims).ok_or_else(|| overflow(&stored.name))?,
                layout: layout::held(t)?,
                stored,
            });
        }
        self.kind = self.kind.or(kind);
        self.graph = self.graph.take().or(graph);
        self.metadata.extend(metadata);
        Ok(())
    }

    /// The file's format.
    pub(crate) fn format(&self) -> Format {
        self.format
    }

    /// primitiv's data type (`model`, ...), as [`crate::Document::kind`]
    /// gives it; `None` elsewhere.
    pub(crate) fn kind(&self) -> Option<&'static str> {
        self.kind
    }

    /// The file's size in bytes.
    pub(crate) fn file_size(&self) -> u64 {
        self.file_size
    }

    /// Every tensor, in stored order.
    pub(crate) fn tensors(&self) -> &[IndexedTensor] {
        &self.tensors
    }

    /// The index of the tensor named `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.tensors.iter().position(|t| t.name() == name)
    }

    /// File-level fields, as [`crate::Document::metadata`] gives them.
    pub(crate) fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// The summary [`crate::Document::summary`] gives for the same file.
    pub(crate) fn summary(&self) -> Summary {
        let tensors: Vec<TensorSummary> = self
            .tensors
            .iter()
            .map(|t| TensorSummary {
                name: t.stored.name.clone(),
                stored_name: (t.stored.stored_name != t.stored.name)
                    .then(|| t.stored.stored_name.clone()),
                dtype: t.dtype,
                shape: t.stored.shape.clone(),
                bytes: t.len,
                elements: t.numel,
            })
            .collect();
        Summary {
            format: self.format,
            kind: self.kind,
            file_size: self.file_size,
            total_bytes: tensors.iter().map(|t| t.bytes).sum(),
            parameters: tensors.iter().map(|t| t.elements).sum(),
            tensors,
            graphs: self
                .graph
                .as_ref()
                .map(|g| crate::summary::graphs(self.format, g))
                .unwrap_or_default(),
        }
    }

    /// The graph, for formats that store one (an `.nnp`'s or a
    /// `.protobuf`'s networks, a `.tsm` module's nodes, an `.onnx` graph), as
    /// [`crate::Document::graph`] gives it.
    pub(crate) fn graph(&self) -> Option<&tensor_core::graph::ModelGraph> {
        self.graph.as_ref()
    }

    /// True when the file is an NNabla model with more than parameters
    /// (networks, executors, configs, ...), which converting to another
    /// NNabla model format keeps from the whole file (the index keeps the
    /// model without its parameters for exporting its graph only).
    pub(crate) fn has_nnabla_model(&self) -> bool {
        self.nnabla_model
    }

    /// An NNabla file's model without its parameters, as read.
    #[cfg(feature = "nnabla")]
    pub(crate) fn nnabla_model(&self) -> Option<&nnabla_proto::NNablaProtoBuf> {
        self.nnabla.as_deref()
    }

    /// True when the file (NNabla) stores a parameter name more than once.
    pub(crate) fn has_repeated_names(&self) -> bool {
        self.repeated_names
    }

    /// True when the file was parsed whole, its tensors held in memory,
    /// rather than located in it (an NNabla file whose layout this path
    /// does not locate: `.nntxt`, unpacked `.protobuf` data, ...).
    pub(crate) fn was_read_whole(&self) -> bool {
        self.read_whole
    }

    /// Reads `count` elements of tensor `index` from its flat (stored-order)
    /// element `start` (fewer at its end) into `buf`, as a one-dimensional
    /// tensor borrowing `buf`. The bytes read are checked against
    /// [`tensor_core::Limits::max_alloc`].
    pub(crate) fn read_elements<'b, R: ReadAt + ?Sized>(
        &self,
        r: &R,
        index: usize,
        start: u64,
        count: u64,
        buf: &'b mut Vec<u8>,
    ) -> Result<Tensor<'b>> {
        let t = self.tensors.get(index).ok_or(Error::NoTensorAt { index })?;
        let size = t.dtype.size() as u64;
        let start = start.min(t.numel);
        let count = count.min(t.numel - start);
        let too_big = || overflow(t.name());
        let bytes = count.checked_mul(size).ok_or_else(too_big)?;
        self.limits
            .check_alloc("tensor slice", bytes)
            .map_err(|e| Error::from(e).in_tensor(t.name()))?;
        let n = usize::try_from(bytes).map_err(|_| too_big())?;
        let elems = usize::try_from(count).map_err(|_| too_big())?;
        buf.clear();
        buf.try_reserve_exact(n)
            .map_err(|_| Error::DoesNotFitInMemory { bytes: n as u64 })?;
        buf.resize(n, 0);
        match &t.layout {
            Layout::Contiguous => {
                let at = start
                    .checked_mul(size)
                    .and_then(|o| o.checked_add(t.offset))
                    .ok_or_else(too_big)?;
                r.read_at(at, buf)
                    .map_err(|e| Error::from(e).in_tensor(t.name()))?;
            }
            #[cfg(feature = "onnx")]
            Layout::OnnxTyped(typed) => {
                crate::formats::onnx::read_typed(typed, r, start, count, buf, t.name())?
            }
            Layout::Held(held) => {
                let from = usize::try_from(start.checked_mul(size).ok_or_else(too_big)?)
                    .map_err(|_| too_big())?;
                let src = from
                    .checked_add(n)
                    .and_then(|to| held.bytes().get(from..to))
                    .ok_or_else(too_big)?;
                buf.copy_from_slice(src);
            }
            Layout::Coded(coded) => {
                let rel = start.checked_mul(size).ok_or_else(too_big)?;
                coded
                    .read(r, t.offset, rel, buf)
                    .map_err(|e| e.in_tensor(t.name()))?
            }
            #[cfg(feature = "nnp")]
            Layout::H5(h) => {
                let at = start
                    .checked_mul(size)
                    .and_then(|o| o.checked_add(t.offset))
                    .ok_or_else(too_big)?;
                h.read(r, at, start, t.dtype.size(), buf, &self.limits)
                    .map_err(|e| e.in_tensor(t.name()))?
            }
        }
        Tensor::new(t.dtype, [elems], &buf[..]).map_err(|e| Error::from(e).in_tensor(t.name()))
    }

    /// Reads all of tensor `index` (for tests and small tensors), with its
    /// dimensions and order.
    pub(crate) fn read_tensor<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        index: usize,
    ) -> Result<Tensor<'static>> {
        let t = self.tensors.get(index).ok_or(Error::NoTensorAt { index })?;
        if let Layout::Held(held) = &t.layout {
            return Ok(held.clone());
        }
        let mut buf = Vec::new();
        self.read_elements(r, index, 0, t.numel, &mut buf)?;
        Tensor::with_order(t.dtype, t.dims().to_vec(), t.order, buf)
            .map_err(|e| Error::from(e).in_tensor(t.name()))
    }

    /// Tensor `index` of the file `map` holds (the file this index was
    /// read from): its bytes in place, shared with the map, where the file
    /// stores them as they are (no copy); else read and decoded as
    /// [`FileIndex::read_tensor`] does. Reads nothing of the other tensors.
    pub(crate) fn tensor_in(&self, map: &Arc<MappedFile>, index: usize) -> Result<Tensor<'static>> {
        let t = self.tensors.get(index).ok_or(Error::NoTensorAt { index })?;
        match &t.layout {
            Layout::Contiguous => {}
            Layout::Held(held) => return Ok(held.clone()),
            _ => return self.read_tensor(map.as_bytes(), index),
        }
        let bytes = usize::try_from(t.offset)
            .ok()
            .zip(usize::try_from(t.len).ok())
            .and_then(|(at, n)| map.as_bytes().get(at..at.checked_add(n)?))
            .and_then(|sub| Bytes::shared(map, sub))
            .ok_or_else(|| {
                let (offset, len) = (t.offset, t.len);
                Error::PastEnd { offset, len }.in_tensor(t.name())
            })?;
        Tensor::with_order(t.dtype, t.dims().to_vec(), t.order, bytes)
            .map_err(|e| Error::from(e).in_tensor(t.name()))
    }
}

pub(crate) fn count(dims: &[usize]) -> Option<u64> {
    dims.iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
}

pub(crate) fn overflow(name: &str) -> Error {
    Error::Malformed {
        part: "tensor shape",
        at: None,
        why: "the tensor's size overflows".into(),
    }
    .in_tensor(name)
}

pub(crate) trait InTensorOf<T> {
    fn in_tensor_of(self, name: &str) -> Result<T>;
}

impl<T> InTensorOf<T> for Result<T> {
    fn in_tensor_of(self, name: &str) -> Result<T> {
        self.map_err(|e| e.in_tensor(name))
    }
}

#[cfg(all(test, feature = "cvm"))]
mod tests {
    use super::*;

    /// An index read over a file, then asked for a tensor of a map cut one
    /// byte short: the tensor's bytes are past its end, said as such.
    #[test]
    fn a_tensor_past_the_end_of_the_file_is_past_end() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cvm/two_entry.params");
        let bytes = std::fs::read(p).unwrap();
        let index = FileIndex::open(&bytes[..], None, &Default::default())
            .unwrap()
            .unwrap();
        let last = index.tensors().len() - 1;
        let entry = &index.tensors()[last];
        let (offset, len) = (entry.offset(), entry.byte_len());
        assert!(len > 0);
        let cut = MappedFile::from_vec(bytes[..bytes.len() - 1].to_vec());
        let e = index.tensor_in(&cut, last).unwrap_err();
        let Error::Tensor { name, source } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(name, entry.name());
        let Error::PastEnd { offset: o, len: n } = **source else {
            panic!("{e:?}")
        };
        assert_eq!((o, n), (offset, len));
        assert_eq!(
            e.full_message(),
            format!(
                "tensor {:?}: its {len} bytes at offset {offset} are past the end of the file",
                entry.name()
            )
        );
        // the whole file reads
        assert!(index.tensor_in(&MappedFile::from_vec(bytes), last).is_ok());
    }
}
