//! A file read tensor by tensor through its index: [`Streamed`] pairs a
//! [`FileIndex`] with the [`ReadAt`] it was read from and answers what
//! `stats`, `show` and `convert` need without holding the file: the
//! statistics of each tensor a slice at a time, one tensor's values, a
//! conversion one tensor (or slice) at a time ([`crate::convert_index`]).
//! This is how the command reads a remote file
//! ([`crate::remote::open_streamed`]): the bytes fetched are the tensors
//! read, and memory stays near the largest tensor (statistics: one slice
//! of 4 MiB), not the file.
//!
//! The results are the ones the whole-file path ([`crate::Document`])
//! gives for the same file: the same names, statistics (bit for bit: see
//! [`tensor_core::stats::Summarizer`]), values and converted bytes.
//!
//! ```
//! # fn main() -> mlformats::Result<()> {
//! use mlformats::random_access::FileIndex;
//! use mlformats::streamed::{Streamed, document_stats};
//! let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
//! let index = FileIndex::open(&bytes[..], None, &Default::default())?.unwrap();
//! let s = Streamed::new(index, bytes.clone(), Some("two_entry.params".into()));
//! let all = mlformats::NameFilter::default();
//! let doc = mlformats::Document::from_bytes(bytes.clone(), None, None)?;
//! assert_eq!(s.stats(&all, &mut |_| {})?, document_stats(&doc, &all, &mut |_| {}));
//! let (name, t, _) = s.tensor_of_spec("b")?;
//! assert_eq!((name, t.to_vec::<i32>()?), ("b", vec![258]));
//! # Ok(()) }
//! ```

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use tensor_core::stats::{Summarizer, Summary, summarize};
use tensor_core::{DType, Tensor};

use crate::random_access::{FileIndex, ReadAt};
use crate::slice::SliceSpec;
use crate::{ConvertOptions, ConvertSummary, Document, Error, Format, NameFilter, Result};

/// Bytes read at a time for a tensor's statistics.
const STATS_SLICE: u64 = 4 << 20;

/// One tensor's statistics, as `mlformats stats` shows them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TensorStats {
    /// Its name, as `inspect` shows it.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Its dimensions.
    pub dims: Vec<usize>,
    /// Min, max, mean, std, counts.
    pub summary: Summary,
}

/// The statistics of every tensor of `doc` that `filter` keeps, in order;
/// `progress` is called with each tensor's bytes once it is done.
pub fn document_stats(
    doc: &Document,
    filter: &NameFilter,
    progress: &mut dyn FnMut(u64),
) -> Vec<TensorStats> {
    let mut out = Vec::new();
    for (name, t) in doc.tensors().filter(|(n, _)| filter.keeps(n)) {
        out.push(TensorStats {
            name: name.to_string(),
            dtype: t.dtype(),
            dims: t.dims().to_vec(),
            summary: summarize(t),
        });
        progress(t.bytes().len() as u64);
    }
    out
}

/// A file read by its index (see the [module](self)): the index, the
/// reader and the file's name.
#[derive(Debug)]
pub struct Streamed<R> {
    index: FileIndex,
    reader: R,
    name: Option<PathBuf>,
}

impl<R: ReadAt> Streamed<R> {
    /// The file `reader` reads, whose index is `index` (read from it);
    /// `name`, its file name, goes into a conversion's metadata and breaks
    /// ties in choosing a conversion's target, as a [`Document`]'s path.
    pub fn new(index: FileIndex, reader: R, name: Option<PathBuf>) -> Self {
        Streamed {
            index,
            reader,
            name,
        }
    }

    /// The index.
    pub fn index(&self) -> &FileIndex {
        &self.index
    }

    /// The reader.
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// The reader, to change (a remote file's progress, its budget).
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The index, the reader and the name, taken apart.
    pub fn into_parts(self) -> (FileIndex, R, Option<PathBuf>) {
        (self.index, self.reader, self.name)
    }

    /// The file's name.
    pub fn name(&self) -> Option<&Path> {
        self.name.as_deref()
    }

    /// The bytes of the tensors `filter` keeps (the work of
    /// [`Streamed::stats`], for a progress bar).
    pub fn kept_bytes(&self, filter: &NameFilter) -> u64 {
        let kept = self
            .index
            .tensors()
            .iter()
            .filter(|t| filter.keeps(t.name()));
        kept.map(|t| t.byte_len()).sum()
    }

    /// The statistics of tensor `at`, read a slice of about 4 MiB at a
    /// time: bit for bit what [`summarize`] gives on the whole tensor.
    pub fn tensor_stats(&self, at: usize) -> Result<Summary> {
        let t = self
            .index
            .tensors()
            .get(at)
            .ok_or_else(|| Error::Invalid(format!("no tensor {at}")))?;
        let size = (t.dtype().size() as u64).max(1);
        // a multiple of 1024 elements: the summarizer's blocks
        let step = (STATS_SLICE / size / 1024).max(1) * 1024;
        let mut sum = Summarizer::new(t.dtype());
        let mut buf = Vec::new();
        let mut start = 0;
        while start < t.numel() {
            let part = self
                .index
                .read_elements(&self.reader, at, start, step, &mut buf)?;
            sum.push(&part);
            start = start.saturating_add(step);
        }
        Ok(sum.finish())
    }

    /// The statistics of every tensor `filter` keeps, in stored order, as
    /// [`document_stats`] gives them for the same file; `progress` is
    /// called with each tensor's bytes once it is done.
    pub fn stats(
        &self,
        filter: &NameFilter,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<TensorStats>> {
        let mut out = Vec::new();
        for (at, t) in self.index.tensors().iter().enumerate() {
            if !filter.keeps(t.name()) {
                continue;
            }
            out.push(TensorStats {
                name: t.name().to_string(),
                dtype: t.dtype(),
                dims: t.dims().to_vec(),
                summary: self.tensor_stats(at)?,
            });
            progress(t.byte_len());
        }
        Ok(out)
    }

    /// The tensor `spec` (`NAME` or `NAME[SLICE]`, as
    /// [`crate::slice::parse_spec`] reads it) names, read whole (nothing
    /// of the others), with the slice.
    pub fn tensor_of_spec(&self, spec: &str) -> Result<(&str, Tensor<'static>, SliceSpec)> {
        let (at, slice) = self.spec(spec)?;
        let t = self.index.read_tensor(&self.reader, at)?;
        let name = self.index.tensors().get(at).map_or("", |t| t.name());
        Ok((name, t, slice))
    }

    /// The position of the tensor `spec` (`NAME` or `NAME[SLICE]`) names,
    /// and the slice: nothing read.
    pub fn spec(&self, spec: &str) -> Result<(usize, SliceSpec)> {
        let tensors = self.index.tensors();
        let find = |n: &str| tensors.iter().find(|t| t.name() == n).map(|t| t.name());
        let (name, slice) = crate::slice::parse_spec_in(find, tensors.len(), spec)?;
        let at = self
            .index
            .position(name)
            .ok_or_else(|| Error::NoTensorNamed {
                name: name.to_string(),
                of: tensors.len(),
            })?;
        Ok((at, slice))
    }

    /// The format `output` is converted to: `opts.to`, else the one its
    /// extension names, else the input's when both have the same
    /// extension (as [`crate::convert_document`] chooses).
    pub fn target(&self, output: &Path, opts: &ConvertOptions) -> Result<Format> {
        if let Some(f) = opts.to.or_else(|| Format::from_extension(output)) {
            return Ok(f);
        }
        let ext = |p: &Path| p.extension().map(|e| e.to_ascii_lowercase());
        match self.name() {
            Some(input) if ext(input).is_some() && ext(input) == ext(output) => {
                Ok(self.index.format())
            }
            _ => Err(Error::UnknownExtension {
                name: output.display().to_string(),
            }),
        }
    }

    /// Converts the file into `output` (replaced atomically) as
    /// [`crate::convert_document`] does for the same file, with the same
    /// bytes and summary, one tensor (or slice) at a time
    /// ([`crate::convert_index`], which says what it refuses:
    /// [`Error::NeedsWholeModel`], then read the file whole).
    pub fn convert(&self, output: &Path, opts: &ConvertOptions) -> Result<ConvertSummary> {
        let target = self.target(output, opts)?;
        crate::convert::into_file(output, opts.sync, |mut w| {
            self.convert_to(target, &mut w, opts)
        })
    }

    /// [`Streamed::convert`] to `target`, the bytes written to `out` (any
    /// writer: made in an unnamed temporary file first, as
    /// [`crate::convert_document_to_writer`] does).
    pub fn convert_to_writer<W: Write + ?Sized>(
        &self,
        target: Format,
        out: &mut W,
        opts: &ConvertOptions,
    ) -> Result<ConvertSummary> {
        tensor_core::io::write_spooled(out, |w| self.convert_to(target, w, opts))
    }

    fn convert_to<W: Write + Seek>(
        &self,
        target: Format,
        out: &mut W,
        opts: &ConvertOptions,
    ) -> Result<ConvertSummary> {
        let mut opts = opts.clone();
        opts.to = Some(target);
        crate::convert_index(&self.index, &self.reader, self.name(), target, &opts, out)
    }
}
