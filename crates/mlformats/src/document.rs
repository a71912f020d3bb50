//! [`Document`]: any supported file, opened.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use tensor_core::graph::ModelGraph;
use tensor_core::{MappedFile, Tensor, TensorMap};

use crate::codec::{Contents, ReadOptions, Source, StoredTensor, codec};
use crate::{Error, Format, Result, detect};

/// A model or parameter file of any supported format, opened: its tensors
/// (sharing the memory map where the format allows), its graph and metadata.
///
/// For every built-in format (ONNX but one with proto2 groups) this is the
/// format's [`crate::random_access::FileIndex`] over the memory map: each
/// tensor whose bytes the file stores as they are borrows them, one stored
/// otherwise (a deflated member, big-endian data, an ONNX typed field) is
/// decoded at open, and an NNabla file the index does not locate (a
/// `.nntxt`, unpacked `.protobuf` data, a nested `.nnp`, an HDF5 layout it
/// does not walk) is parsed whole by the format's crate and held.
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
    source: Source,
    contents: Contents,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("format", &self.source.format)
            .field("path", &self.source.path)
            .field("tensors", &self.contents.tensors.len())
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

    /// Opens `path` as `format` (or detected) with reading options.
    pub fn open_with(
        path: impl AsRef<Path>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Document> {
        let path = path.as_ref();
        #[cfg(feature = "remote")]
        if let Some(location) = path.to_str().filter(|s| crate::remote::is_remote(s)) {
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

    /// Reads a file from a memory map (or bytes in memory shared the same way).
    pub fn from_map(
        map: Arc<MappedFile>,
        path: Option<PathBuf>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Document> {
        let format = match format {
            Some(f) => f,
            None => {
                // an empty file is an error, except where the format reads it
                // as an empty message (NNabla text and binary protobuf)
                let by_name = path.as_deref().and_then(Format::from_extension);
                let empty_ok =
                    matches!(by_name, Some(Format::NnablaNntxt | Format::NnablaProtobuf));
                if map.is_empty() && !empty_ok {
                    return Err(Error::Empty);
                }
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
        let source = Source { path, map, format };
        let contents = codec(format)?.read(&source, opts)?;
        Ok(Document { source, contents })
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        self.source.format
    }

    /// The path it was opened from, if it came from a file.
    pub fn path(&self) -> Option<&Path> {
        self.source.path.as_deref()
    }

    /// The file's size in bytes.
    pub fn file_size(&self) -> u64 {
        self.source.map.len() as u64
    }

    /// The file's bytes (memory-mapped).
    pub fn bytes(&self) -> &[u8] {
        self.source.map.as_bytes()
    }

    /// The memory map the tensors share.
    pub fn map(&self) -> &Arc<MappedFile> {
        &self.source.map
    }

    /// primitiv's data type (`shape`, `tensor`, `parameter`, `model`,
    /// `optimizer`); `None` for other formats.
    pub fn kind(&self) -> Option<&'static str> {
        self.contents.kind
    }

    /// `(name, tensor)` of every tensor in stored order, names unique.
    pub fn tensors(&self) -> impl ExactSizeIterator<Item = (&str, &Tensor<'static>)> {
        self.contents.tensors.iter()
    }

    /// The tensor names in stored order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.contents.tensors.names()
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&Tensor<'static>> {
        self.contents.tensors.get(name)
    }

    /// The number of tensors.
    pub fn len(&self) -> usize {
        self.contents.tensors.len()
    }

    /// True when the file holds no tensor.
    pub fn is_empty(&self) -> bool {
        self.contents.tensors.is_empty()
    }

    /// The tensors as a map (cheap to clone: data is shared, not copied).
    pub fn tensor_map(&self) -> &TensorMap<'static> {
        &self.contents.tensors
    }

    /// The tensors, taking them out of the document.
    pub fn into_tensor_map(self) -> TensorMap<'static> {
        self.contents.tensors
    }

    /// Every tensor as the file stores it, in the `inspect --json`
    /// contract's terms (names as the contract gives them, stored shapes,
    /// per-format fields).
    pub fn stored(&self) -> &[StoredTensor] {
        &self.contents.stored
    }

    /// NNabla's `need_grad` of the tensor `name`, where the format has it.
    pub fn need_grad(&self, name: &str) -> Option<bool> {
        self.contents
            .stored
            .iter()
            .rev()
            .find(|s| s.name == name)
            .and_then(StoredTensor::need_grad)
    }

    /// The networks, for formats that store them (NNabla, TenniS).
    pub fn graph(&self) -> Option<&ModelGraph> {
        self.contents.graph.as_ref()
    }

    /// File-level fields: primitiv `shape` and optimizer configs, NNabla
    /// `solver_states`, safetensors `metadata` (its `__metadata__`).
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.contents.metadata
    }

    /// The `inspect --json` document (schema 2 of `docs/INSPECT_JSON.md`):
    /// tensors under their one name (`stored_name` beside it where the file
    /// stores another), exact sizes, the parameter count and the typed graph;
    /// hashes and sums every tensor. [`Document::summary`] is the same
    /// without JSON and without reading the data.
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
        tensor_core::io::write_atomic(out.as_ref(), |w| c.reencode(&self.source, w))
    }

    /// The documents carried inside this file: an `.nnp`'s solver states
    /// (`*.optimizer` members, each of kind `solver-state`), by member name.
    /// Empty for other formats.
    pub fn attachments(&self) -> Result<Vec<(String, Document)>> {
        let parts = codec(self.format())?.attachments(&self.source, &ReadOptions::default())?;
        Ok(parts
            .into_iter()
            .map(|(name, contents)| {
                let source = Source {
                    path: self.source.path.clone(),
                    map: Arc::clone(&self.source.map),
                    format: Format::NnablaH5,
                };
                (name, Document { source, contents })
            })
            .collect())
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

    pub(crate) fn source(&self) -> &Source {
        &self.source
    }
}
