//! [`Headers`]: what a file says about itself (format, tensor names,
//! dtypes, shapes, metadata, graph), read from its headers alone where the
//! format allows, without reading or inflating any tensor's data.
//!
//! `inspect` needs nothing else, so a file whose data is compressed (an
//! `.npz` written by `numpy.savez_compressed`, chunked and gzipped HDF5
//! datasets) or huge answers as fast as a small one, and a decompression
//! bomb inflates nothing. The formats [`FileIndex`] reads by slices are
//! read this way; any other file is opened whole ([`Document`]).

use std::path::Path;

use serde_json::{Map, Value};
use tensor_core::graph::ModelGraph;

use crate::random_access::FileIndex;
use crate::{Document, Format, ReadOptions, Result, Summary};

/// A file's headers: its [`Summary`], metadata and graph.
///
/// ```
/// # fn main() -> Result<(), mlformats::Error> {
/// use mlformats::Headers;
/// let h = Headers::open("../../testdata/cvm/two_entry.params", None, &Default::default())?;
/// assert_eq!(h.summary().tensors[1].name, "b");
/// assert!(h.is_headers_only());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Headers {
    summary: Summary,
    metadata: Map<String, Value>,
    graph: Option<ModelGraph>,
    /// The file's index, when it was read by slices: where each tensor is.
    index: Option<FileIndex>,
}

impl Headers {
    /// Reads the headers of the file at `path` (as `format`, or detected).
    pub fn open(
        path: impl AsRef<Path>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        #[cfg(feature = "remote")]
        if let Some(location) = path.to_str().filter(|s| crate::remote::is_remote(s)) {
            return Self::open_remote(location, format, opts);
        }
        #[cfg(unix)]
        if let Some(h) = Self::by_slices(path, format, opts)? {
            return Ok(h);
        }
        Ok(Self::of_document(Document::open_with(path, format, opts)?))
    }

    /// The headers of the file at `path` read through positioned reads,
    /// or `None` when it cannot be opened so or its format is read whole.
    #[cfg(unix)]
    fn by_slices(path: &Path, format: Option<Format>, opts: &ReadOptions) -> Result<Option<Self>> {
        if path.is_dir() {
            return Ok(None);
        }
        let Ok(file) = std::fs::File::open(path) else {
            return Ok(None);
        };
        let index = match format {
            Some(f) => FileIndex::open_as(&file, f, opts)?,
            None => FileIndex::open(&file, Some(path), opts)?,
        };
        Ok(index.map(Self::of_index))
    }

    /// Reads the headers of a remote file (`http(s)://`, `s3://`, `gs://`,
    /// `az://`; the `remote` feature) by ranges: the formats
    /// [`FileIndex`] reads by slices fetch their headers alone, at most
    /// [`crate::remote::HEADER_BUDGET`] bytes; any other is fetched whole,
    /// within the same budget.
    #[cfg(feature = "remote")]
    pub fn open_remote(location: &str, format: Option<Format>, opts: &ReadOptions) -> Result<Self> {
        use crate::remote::{HEADER_BUDGET, RemoteFile, RemoteOptions};
        let options = RemoteOptions::default().with_max_bytes(Some(HEADER_BUDGET));
        let remote = RemoteFile::open(location, &options)?;
        let name = Path::new(remote.file_name()).to_path_buf();
        let index = match format {
            Some(f) => FileIndex::open_as(&remote, f, opts)?,
            None => FileIndex::open(&remote, Some(&name), opts)?,
        };
        if let Some(index) = index {
            return Ok(Self::of_index(index));
        }
        let bytes = crate::remote::read_all(&remote)?;
        Self::from_bytes(bytes, Some(&name), format, opts)
    }

    /// Reads the headers of a file in memory (`name`, if any, breaks ties
    /// in detection as for [`Document::from_bytes`]).
    pub fn from_bytes(
        bytes: Vec<u8>,
        name: Option<&Path>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Self> {
        if let Some(h) = Self::by_slices_of(&bytes, name, format, opts)? {
            return Ok(h);
        }
        let map = tensor_core::MappedFile::from_vec(bytes);
        let doc = Document::from_map(map, name.map(Path::to_path_buf), format, opts)?;
        Ok(Self::of_document(doc))
    }

    /// The headers of a file in memory (or memory-mapped) read by slices,
    /// or `None` when its format is read whole ([`Headers::of_document`]
    /// then): reads no tensor data, so a caller can answer names, shapes
    /// and metadata and open the [`Document`] over the same bytes only when
    /// a tensor is asked for.
    pub fn by_slices_of(
        bytes: &[u8],
        name: Option<&Path>,
        format: Option<Format>,
        opts: &ReadOptions,
    ) -> Result<Option<Self>> {
        let index = match format {
            Some(f) => FileIndex::open_as(bytes, f, opts)?,
            None => FileIndex::open(bytes, name, opts)?,
        };
        Ok(index.map(Self::of_index))
    }

    /// The headers of a file opened by slices.
    pub fn of_index(index: FileIndex) -> Self {
        Headers {
            summary: index.summary(),
            metadata: index.metadata().clone(),
            graph: index.graph().cloned(),
            index: Some(index),
        }
    }

    /// The headers of a file opened whole.
    pub fn of_document(doc: Document) -> Self {
        Headers {
            summary: doc.summary(),
            metadata: doc.metadata().clone(),
            graph: doc.graph().cloned(),
            index: None,
        }
    }

    /// Format, tensors (names, dtypes, shapes, sizes), parameters, graphs.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The file's metadata, as [`Document::metadata`].
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// The graph, as [`Document::graph`].
    pub fn graph(&self) -> Option<&ModelGraph> {
        self.graph.as_ref()
    }

    /// True when no tensor data was read (the file was opened by slices);
    /// false when the file is read whole.
    pub fn is_headers_only(&self) -> bool {
        self.index.as_ref().is_some_and(|i| !i.was_read_whole())
    }

    /// Where each tensor is in the file, when it was read by slices: one
    /// tensor can then be read alone ([`FileIndex::tensor_in`],
    /// [`FileIndex::read_tensor`]), whatever the others hold.
    pub fn index(&self) -> Option<&FileIndex> {
        self.index.as_ref()
    }
}
