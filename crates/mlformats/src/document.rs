//! [`Document`]: any supported file, opened.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use tensor_core::graph::ModelGraph;
use tensor_core::{MappedFile, Tensor, TensorMap};

use crate::codec::{ReadOptions, Source, StoredTensor, codec};
use crate::random_access::{FileIndex, IndexedTensor, ReadAt};
use crate::{Error, Format, Result, detect};

/// A model or parameter file of any supported format, opened: its tensors
/// (sharing the memory map where the format allows), its graph and metadata.
///
/// A document is the format's one reader, its index
/// ([`crate::random_access`]), over the file's bytes: a memory map (or
/// bytes in memory), or any [`ReadAt`] source ([`Document::open_at`]: a
/// file read by slices, a remote location, the browser's `Blob`). The
/// index records where each tensor's bytes are. A tensor the file stores
/// as it is borrows them from the map; one stored otherwise (a deflated
/// member, big-endian data, an ONNX typed field) is decoded when it is
/// asked for. [`Document::open`] and the other whole-file openings ask for
/// every tensor at once, so that a file that does not read is refused
/// when it is opened; a document opened at a [`ReadAt`] reads nothing but
/// the file's structure until a tensor is asked for
/// ([`Document::get`], [`Document::read_elements`]). An NNabla file the
/// index does not locate (a `.nntxt`, unpacked `.protobuf` data, a nested
/// `.nnp`, an HDF5 layout it does not walk), an ONNX model with proto2
/// groups and a registered format's file are parsed whole and held.
///
/// ```
/// # fn main() -> Result<(), mlformats::Error> {
/// let doc = mlformats::open("../../testdata/cvm/two_entry.params")?;
/// assert_eq!(doc.format(), mlformats::Format::CvmParams);
/// let names: Vec<&str> = doc.names().collect();
/// assert_eq!(names, ["w", "b"]);
/// let b = doc.tensor("b").unwrap();
/// assert_eq!(b.to_vec::<i64>()?[0], 258);
/// # Ok(()) }
/// ```
pub struct Document {
    path: Option<PathBuf>,
    file: FileBytes,
    index: FileIndex,
    /// Each tensor of the index, once it has been asked for.
    loaded: Vec<OnceLock<Tensor<'static>>>,
    /// Each tensor's position in the index, by name.
    by_name: HashMap<String, usize>,
}

/// The bytes a [`Document`] reads: the whole file in memory, or a source
/// read by offset.
#[derive(Clone)]
enum FileBytes {
    Map(Arc<MappedFile>),
    At(Arc<dyn ReadAt + Send + Sync>),
}

impl ReadAt for FileBytes {
    fn len(&self) -> u64 {
        match self {
            FileBytes::Map(m) => m.as_bytes().len() as u64,
            FileBytes::At(r) => r.len(),
        }
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        match self {
            FileBytes::Map(m) => m.as_bytes().read_at(offset, buf),
            FileBytes::At(r) => r.read_at(offset, buf),
        }
    }
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("format", &self.format())
            .field("path", &self.path)
            .field("tensors", &self.len())
            .finish_non_exhaustive()
    }
}

/// Maps `path`, with messages a person understands for a directory, a
/// missing file and an empty file.
fn map_file(path: &Path) -> Result<Arc<MappedFile>> {
    if path.is_dir() {
        return Err(Error::IsDirectory);
    }
    let file = std::fs::File::open(path)?;
    MappedFile::from_file(&file).map_err(|e| match e {
        tensor_core::Error::Io { source, .. } => Error::Io(source),
        other => Error::Core(other),
    })
}

impl Document {
    /// Opens `path`, detecting its format from its first bytes and name.
    pub fn open(path: impl AsRef<Path>) -> Result<Document> {
        Self::open_with(path, None, &ReadOptions::default())
    }

    /// Opens `path` as `format`, without detection.
    pub fn open_as(path: impl AsRef<Path>, format: Format) -> Result<Document> {
        Self::open_with(path, Some(format), &ReadOptions::default())
    }

    /// Opens `path` as `format` (or detected) with reading options: with
    /// [`ReadOptions::lazy`], its structure alone (a remote location by
    /// ranges), each tensor read when it is asked for.
    ///
    /// ```
    /// # fn main() -> Result<(), mlformats::Error> {
    /// use mlformats::{Document, ReadOptions};
    /// let lazy = ReadOptions::default().with_lazy(true);
    /// let doc = Document::open_with("../../testdata/cvm/two_entry.params", None, &lazy)?;
    /// assert_eq!(doc.summary().tensors[1].name, "b");
    /// assert!(!doc.was_read_whole());
    /// # Ok(()) }
    /// ```
    pub fn open_with(
        path: impl AsRef<Path>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Document> {
        let path = path.as_ref();
        #[cfg(feature = "remote")]
        if let Some(location) = path.to_str().filter(|s| crate::remote::is_remote(s)) {
            use crate::remote::{Opened, open_streamed, read_document};
            if opts.lazy {
                // its headers by ranges, each tensor when asked for; a
                // format not read by its index is fetched whole
                return match open_streamed(location, format, opts)? {
                    Opened::Streamed { document, .. } => Ok(*document),
                    Opened::Whole(remote) => read_document(&remote, format, opts),
                };
            }
            let (bytes, name) = crate::remote::download(location, opts)?;
            let map = MappedFile::from_vec(bytes);
            return Self::from_map(map, Some(name), format, opts);
        }
        let map = map_file(path)?;
        Self::from_map(map, Some(path.to_path_buf()), format, opts)
    }

    /// Reads a file already in memory. `name` (a file name, or `None`)
    /// breaks ties where the bytes alone do not tell the format.
    pub fn from_bytes(
        bytes: Vec<u8>,
        name: Option<&Path>,
        format: Option<Format>,
    ) -> Result<Document> {
        let map = MappedFile::from_vec(bytes);
        Self::from_map(
            map,
            name.map(Path::to_path_buf),
            format,
            &ReadOptions::default(),
        )
    }

    /// Reads a file from a memory map (or bytes in memory shared the same
    /// way), every tensor read at once (see the type's description) unless
    /// `opts` is [`ReadOptions::lazy`].
    pub fn from_map(
        map: Arc<MappedFile>,
        path: Option<PathBuf>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Document> {
        let format = match format {
            Some(f) => f,
            None => {
                check_empty(map.len() as u64, path.as_deref())?;
                let input = match &path {
                    Some(p) => crate::Input::Named {
                        bytes: &map,
                        name: p,
                    },
                    None => crate::Input::Bytes(&map),
                };
                detect(input).ok_or(Error::UnknownFormat)?
            }
        };
        codec(format)?;
        let index = FileIndex::open_map(&map, format, opts)?.ok_or_else(|| unreadable(format))?;
        let doc = Document::new(path, FileBytes::Map(map), index);
        if !opts.lazy {
            doc.load()?;
        }
        Ok(doc)
    }

    /// Opens the file `reader` reads (a file read by slices, a remote
    /// location, a browser `Blob`) as `format` (or detected from its first
    /// and last bytes and `name`): its structure is read, and no tensor
    /// until one is asked for ([`Document::get`],
    /// [`Document::read_elements`]; [`Document::tensor`] reads and keeps
    /// it). `name` is also the document's [`Document::path`].
    ///
    /// ```
    /// # fn main() -> Result<(), mlformats::Error> {
    /// let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
    /// let doc = mlformats::Document::open_at(bytes, None, None, &Default::default())?;
    /// assert_eq!(doc.get("b")?.to_vec::<i64>()?, [258]);
    /// # Ok(()) }
    /// ```
    pub fn open_at(
        reader: impl ReadAt + Send + Sync + 'static,
        name: Option<&Path>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Document> {
        let format = match format {
            Some(f) => f,
            None => {
                check_empty(reader.len(), name)?;
                crate::random_access::detect(&reader, name)?.ok_or(Error::UnknownFormat)?
            }
        };
        codec(format)?;
        let index = FileIndex::open_as(&reader, format, opts)?.ok_or_else(|| unreadable(format))?;
        let file = FileBytes::At(Arc::new(reader));
        Ok(Document::new(name.map(Path::to_path_buf), file, index))
    }

    /// A document of `index` over `file`, no tensor read yet. Names the
    /// index repeats get `#2`, `#3`, ... so that each is one tensor's.
    fn new(path: Option<PathBuf>, file: FileBytes, mut index: FileIndex) -> Document {
        let by_name = index.make_names_unique();
        let loaded = (0..index.tensors().len())
            .map(|_| OnceLock::new())
            .collect();
        Document {
            path,
            file,
            index,
            loaded,
            by_name,
        }
    }

    /// Reads every tensor not read yet (see the type's description): the
    /// first that does not read is the error.
    pub fn load(&self) -> Result<()> {
        for (i, t) in self.index.tensors().iter().enumerate() {
            // the error as the zip layer words it (a wrong CRC-32, the
            // inflation budget), without the tensor's name around it
            self.check_readable(t.name()).map_err(unwrap_deflated)?;
            self.cell(i).map_err(|e| match t.is_deflated() {
                true => unwrap_deflated(e),
                false => e,
            })?;
        }
        Ok(())
    }

    /// Checks, before the tensor named `name` is read whole, what a
    /// deflated zip member it is in is refused for (its inflation budget, a
    /// damaged member), as the zip layer finds it, reading its first
    /// element only (nothing kept): so that a decompression bomb is refused
    /// before the tensor's memory is taken. `Ok` for a tensor not in a
    /// deflated member, an empty one and one already read; the error names
    /// the tensor, as [`Document::get`]'s does.
    ///
    /// ```
    /// # fn main() -> Result<(), mlformats::Error> {
    /// let doc = mlformats::open("../../testdata/cvm/two_entry.params")?;
    /// doc.check_readable("b")?;
    /// assert!(doc.check_readable("nope").is_err());
    /// # Ok(()) }
    /// ```
    pub fn check_readable(&self, name: &str) -> Result<()> {
        let i = self.position(name).ok_or_else(|| Error::NoTensorNamed {
            name: name.to_string(),
            of: self.len(),
        })?;
        let t = &self.index.tensors()[i];
        if t.is_deflated() && t.numel() > 0 && self.loaded[i].get().is_none() {
            self.read_elements(i, 0, 1, &mut Vec::new())?;
        }
        Ok(())
    }

    /// Tensor `i` of the index, read now and kept if it was not yet.
    fn cell(&self, i: usize) -> Result<&Tensor<'static>> {
        let cell = &self.loaded[i];
        if let Some(t) = cell.get() {
            return Ok(t);
        }
        // kept in shared storage, so that a copy handed out (`get`)
        // shares the bytes instead of copying them
        let t = crate::random_access::shared(self.read(i)?)?;
        Ok(cell.get_or_init(|| t))
    }

    /// Tensor `i` of the index: the one kept, else read now (not kept).
    fn read(&self, i: usize) -> Result<Tensor<'static>> {
        if let Some(t) = self.loaded[i].get() {
            return Ok(t.clone());
        }
        match &self.file {
            FileBytes::Map(m) => self.index.tensor_in(m, i),
            FileBytes::At(r) => self.index.read_tensor(&**r, i),
        }
    }

    /// True when opening parsed the whole file and holds its tensors (a
    /// layout the index does not locate: NNabla text, unpacked `.protobuf`
    /// data, a registered format); false when each tensor is read from
    /// where the file stores it, when it is asked for.
    pub fn was_read_whole(&self) -> bool {
        self.index.was_read_whole()
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        self.index.format()
    }

    /// The path it was opened from, if it came from a file (or the name
    /// it was opened under).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The file's size in bytes.
    pub fn file_size(&self) -> u64 {
        self.index.file_size()
    }

    /// The file's bytes, when it is in memory (memory-mapped); `None` for
    /// a document opened at a [`ReadAt`].
    pub fn bytes(&self) -> Option<&[u8]> {
        self.map().map(|m| m.as_bytes())
    }

    /// The memory map the tensors share; `None` for a document opened at
    /// a [`ReadAt`].
    pub fn map(&self) -> Option<&Arc<MappedFile>> {
        match &self.file {
            FileBytes::Map(m) => Some(m),
            FileBytes::At(_) => None,
        }
    }

    /// True when the document reads its file through a [`ReadAt`]
    /// ([`Document::open_at`]) rather than from memory.
    pub fn is_read_at(&self) -> bool {
        matches!(self.file, FileBytes::At(_))
    }

    /// What the document reads its file through: the memory map, or the
    /// [`ReadAt`] it was opened at.
    pub fn reader(&self) -> &dyn ReadAt {
        &self.file
    }

    /// The file's index: every tensor's name, dtype, shape and where its
    /// bytes are (the crate's own view; users have [`Document::entries`]).
    pub(crate) fn index(&self) -> &FileIndex {
        &self.index
    }

    /// What the index says of every tensor, in stored order (names unique,
    /// as [`Document::names`] gives them), nothing of them read: the
    /// entries [`Document::entry`] gives one at a time, by position as
    /// [`Document::position`] and [`Document::read_elements`] count them.
    ///
    /// ```
    /// # fn main() -> Result<(), mlformats::Error> {
    /// let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
    /// let doc = mlformats::Document::open_at(bytes, None, None, &Default::default())?;
    /// let bytes: u64 = doc.entries().iter().map(|t| t.byte_len()).sum();
    /// assert_eq!(doc.entries()[1].name(), "b");
    /// assert!(bytes > 0);
    /// # Ok(()) }
    /// ```
    pub fn entries(&self) -> &[IndexedTensor] {
        self.index.tensors()
    }

    /// The bytes of decoded HDF5 chunks the document keeps for its next
    /// reads (a chunked `.h5` dataset, or one in an `.nnp`'s stored
    /// `parameter.h5`, read by slices): at most the largest of its
    /// datasets' budgets, `max(one chunk, min(one band along the first
    /// axis, 32 MiB))`, however many datasets were read. 0 for other
    /// layouts.
    #[cfg(feature = "nnp")]
    pub fn cached_chunk_bytes(&self) -> u64 {
        self.index.cached_chunk_bytes()
    }

    /// primitiv's data type (`shape`, `tensor`, `parameter`, `model`,
    /// `optimizer`); `None` for other formats.
    pub fn kind(&self) -> Option<&'static str> {
        self.index.kind()
    }

    /// `(name, tensor)` of every tensor in stored order, names unique,
    /// each read now if it was not yet. A tensor that does not read is left
    /// out (possible only for a document opened at a [`ReadAt`]:
    /// [`Document::load`] or [`Document::get`] says why).
    pub fn tensors(&self) -> impl Iterator<Item = (&str, &Tensor<'static>)> {
        let entries = self.index.tensors().iter().enumerate();
        entries.filter_map(|(i, t)| Some((t.name(), self.cell(i).ok()?)))
    }

    /// The tensor names in stored order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.index.tensors().iter().map(IndexedTensor::name)
    }

    /// The tensor named `name`, read now if it was not yet (`None` also
    /// when it does not read: [`Document::get`] says why).
    pub fn tensor(&self, name: &str) -> Option<&Tensor<'static>> {
        self.cell(*self.by_name.get(name)?).ok()
    }

    /// The tensor named `name`, or why it cannot be had: its bytes shared
    /// with the memory map where the file stores them as they are, else
    /// read (and decoded) now, and not kept by the document (reading every
    /// tensor of a big file one after the other holds one at a time).
    pub fn get(&self, name: &str) -> Result<Tensor<'static>> {
        let i = self.position(name).ok_or_else(|| Error::NoTensorNamed {
            name: name.to_string(),
            of: self.len(),
        })?;
        self.read(i)
    }

    /// What the index says of the tensor named `name` (dtype, dims, bytes,
    /// where they are), nothing of it read.
    pub fn entry(&self, name: &str) -> Option<&IndexedTensor> {
        self.index.tensors().get(self.position(name)?)
    }

    /// The position of the tensor named `name` in stored order.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Reads `count` elements of tensor `index` (its position in stored
    /// order) from its flat (stored-order) element `start` (fewer at its
    /// end) into `buf`, as a one-dimensional tensor borrowing `buf`:
    /// a slice at a time, whatever the tensor's size.
    pub fn read_elements<'b>(
        &self,
        index: usize,
        start: u64,
        count: u64,
        buf: &'b mut Vec<u8>,
    ) -> Result<Tensor<'b>> {
        self.index
            .read_elements(&self.file, index, start, count, buf)
    }

    /// The number of tensors.
    pub fn len(&self) -> usize {
        self.index.tensors().len()
    }

    /// True when the file holds no tensor.
    pub fn is_empty(&self) -> bool {
        self.index.tensors().is_empty()
    }

    /// The tensors, taking them out of the document (those read, and the
    /// others read now; see [`Document::tensors`]).
    pub fn into_tensor_map(self) -> TensorMap<'static> {
        self.tensors()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect()
    }

    /// Every tensor as the file stores it, in the `inspect --json`
    /// contract's terms (names as the contract gives them, stored shapes,
    /// per-format fields), in stored order.
    pub fn stored(&self) -> impl ExactSizeIterator<Item = &StoredTensor> + Clone {
        self.index.tensors().iter().map(IndexedTensor::stored)
    }

    /// NNabla's `need_grad` of the tensor `name`, where the format has it.
    pub fn need_grad(&self, name: &str) -> Option<bool> {
        let t = &self.index.tensors()[*self.by_name.get(name)?];
        t.stored().need_grad()
    }

    /// The networks, for formats that store them (NNabla, TenniS).
    pub fn graph(&self) -> Option<&ModelGraph> {
        self.index.graph()
    }

    /// File-level fields: primitiv `shape` and optimizer configs, NNabla
    /// `solver_states`, safetensors `metadata` (its `__metadata__`).
    pub fn metadata(&self) -> &Map<String, Value> {
        self.index.metadata()
    }

    /// The `inspect --json` document (schema 2 of `docs/INSPECT_JSON.md`):
    /// tensors under their one name (`stored_name` beside it where the file
    /// stores another), exact sizes, the parameter count and the typed graph;
    /// hashes and sums every tensor. [`Document::summary`] is the same
    /// without JSON and without reading the data. A tensor that does not
    /// read has no hash: a document opened lazily is [`Document::load`]ed
    /// first, for the error.
    pub fn inspect_json(&self) -> Value {
        crate::report::inspect_json_v2(self)
    }

    /// The `inspect --json` document in schema `schema` (1 or 2; schema 1
    /// names tensors as stored and has a graph shape per format), or `None`
    /// for a schema that does not exist.
    pub fn inspect_json_schema(&self, schema: u32) -> Option<Value> {
        match schema {
            1 => Some(crate::report::inspect_json_v1(self)),
            2 => Some(crate::report::inspect_json_v2(self)),
            _ => None,
        }
    }

    /// Writes the file again in its own format with everything it holds
    /// (byte-identical for files the real library wrote).
    pub fn reencode(&self, out: impl AsRef<Path>) -> Result<()> {
        let c = codec(self.format())?;
        let src = self.source()?;
        tensor_core::io::write_atomic(out.as_ref(), |w| c.reencode(&src, w))
    }

    /// The documents carried inside this file: an `.nnp`'s solver states
    /// (`*.optimizer` members, each of kind `solver-state`), by member name.
    /// Empty for other formats.
    pub fn attachments(&self) -> Result<Vec<(String, Document)>> {
        let opts = ReadOptions::default();
        let parts = codec(self.format())?.attachments(&self.source()?, &opts)?;
        let mut out = Vec::with_capacity(parts.len());
        for (name, contents) in parts {
            let mut index = FileIndex::empty(Format::NnablaH5, self.file_size(), &opts);
            index.push_contents(contents)?;
            let doc = Document::new(self.path.clone(), self.file.clone(), index);
            doc.load()?;
            out.push((name, doc));
        }
        Ok(out)
    }

    /// This NNabla network (`.nntxt`, `.protobuf`, `.nnp`) with the
    /// parameters of the NNabla file `params` (`.h5`, `.protobuf`, `.nntxt`,
    /// `.nnp`) merged in, as one document that exports and converts like a
    /// file holding both: how Neural Network Console projects ship
    /// (`net.nntxt` + `parameters.h5`). A parameter in both files takes the
    /// value of `params`. The merged document is a binary `.protobuf` in
    /// memory, with this document's path.
    ///
    /// ```
    /// # fn main() -> Result<(), mlformats::Error> {
    /// let net = mlformats::open("../../testdata/nnabla/convnet.nntxt")?;
    /// assert!(net.is_empty());
    /// let full = net.with_parameters("../../testdata/nnabla/convnet_params.h5")?;
    /// assert!(full.tensor("conv1/conv/W").is_some());
    /// assert!(full.graph().is_some());
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "nnp")]
    pub fn with_parameters(&self, params: impl AsRef<Path>) -> Result<Document> {
        let params = Document::open(params)?;
        crate::formats::nnabla_family::with_parameters(self, &params)
    }

    /// [`Document::with_parameters`] with the parameter file already
    /// opened (e.g. from bytes, as the viewer has them).
    #[cfg(feature = "nnp")]
    pub fn with_parameters_of(&self, params: &Document) -> Result<Document> {
        crate::formats::nnabla_family::with_parameters(self, params)
    }

    /// The file as a whole-file source (for the readers and writers that
    /// take the whole file: re-encoding, graph export and import): the
    /// memory map, or, for a document opened at a [`ReadAt`], the file read
    /// into memory (within the allocation limit).
    pub(crate) fn source(&self) -> Result<Source> {
        let map = match &self.file {
            FileBytes::Map(m) => Arc::clone(m),
            FileBytes::At(r) => {
                let limits = self.index.read_options().limits;
                limits.check_alloc("the whole file", r.len())?;
                let n = usize::try_from(r.len()).map_err(|_| Error::TooLarge)?;
                let mut v = tensor_core::try_zeroed("the whole file", n)?;
                r.read_at(0, &mut v)?;
                MappedFile::from_vec(v)
            }
        };
        Ok(Source {
            map,
            format: self.format(),
        })
    }
}

/// A format whose reader this build does not have.
fn unreadable(format: Format) -> Error {
    Error::Unsupported(format!("reading {} files", format.name()))
}

/// A deflated member's error names the member: given as the zip layer
/// words it, without the tensor's name around it.
fn unwrap_deflated(e: Error) -> Error {
    match e {
        Error::Tensor { source, .. } => *source,
        e => e,
    }
}

/// An empty file is an error, except where the format its name gives
/// reads it as an empty message (NNabla text and binary protobuf).
fn check_empty(len: u64, name: Option<&Path>) -> Result<()> {
    let by_name = name.and_then(Format::from_extension);
    let empty_ok = matches!(by_name, Some(Format::NnablaNntxt | Format::NnablaProtobuf));
    match len == 0 && !empty_ok {
        true => Err(Error::Empty),
        false => Ok(()),
    }
}
