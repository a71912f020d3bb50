//! A document read tensor by tensor: what `stats`, `show` and `convert`
//! need without holding the file. For a [`Document`] opened at a
//! [`crate::random_access::ReadAt`] ([`Document::open_at`]: a remote file,
//! a file read by slices), the statistics of each tensor are read a slice
//! at a time, one tensor's values alone; a conversion
//! ([`crate::convert_document`]) goes one tensor (or slice) at a time. This is how the command
//! reads a remote file ([`crate::remote::open_streamed`]): the bytes
//! fetched are the tensors read, and memory stays near the largest tensor
//! (statistics: one slice of 4 MiB), not the file.
//!
//! The results are the ones a document read whole gives for the same
//! file: the same names, statistics (bit for bit: see
//! [`tensor_core::stats::Summarizer`]), values and converted bytes.
//!
//! ```
//! # fn main() -> mlformats::Result<()> {
//! use mlformats::Document;
//! use mlformats::streamed::document_stats;
//! let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
//! let name = std::path::Path::new("two_entry.params");
//! let at = Document::open_at(bytes.clone(), Some(name), None, &Default::default())?;
//! let all = mlformats::NameFilter::default();
//! let doc = Document::from_bytes(bytes, None, None)?;
//! assert_eq!(at.stats(&all, &mut |_| {})?, document_stats(&doc, &all, &mut |_| {}));
//! let (name, t, _) = at.tensor_of_spec("b")?;
//! assert_eq!((name, t.to_vec::<i32>()?), ("b", vec![258]));
//! # Ok(()) }
//! ```

use tensor_core::stats::{Summarizer, Summary, summarize};
use tensor_core::{DType, Tensor};

use crate::slice::SliceSpec;
use crate::{Document, Error, NameFilter, Result};

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

impl Document {
    /// The bytes of the tensors `filter` keeps (the work of
    /// [`Document::stats`], for a progress bar).
    pub fn kept_bytes(&self, filter: &NameFilter) -> u64 {
        let kept = self
            .index()
            .tensors()
            .iter()
            .filter(|t| filter.keeps(t.name()));
        kept.map(|t| t.byte_len()).sum()
    }

    /// The statistics of tensor `at`, read a slice of about 4 MiB at a
    /// time: bit for bit what [`summarize`] gives on the whole tensor.
    pub fn tensor_stats(&self, at: usize) -> Result<Summary> {
        let t = self
            .index()
            .tensors()
            .get(at)
            .ok_or(Error::NoTensorAt { index: at })?;
        let size = (t.dtype().size() as u64).max(1);
        // a multiple of 1024 elements: the summarizer's blocks
        let step = (STATS_SLICE / size / 1024).max(1) * 1024;
        let mut sum = Summarizer::new(t.dtype());
        let mut buf = Vec::new();
        let mut start = 0;
        while start < t.numel() {
            let part = self.read_elements(at, start, step, &mut buf)?;
            sum.push(&part);
            start = start.saturating_add(step);
        }
        Ok(sum.finish())
    }

    /// The statistics of every tensor `filter` keeps, in stored order (a
    /// document opened at a `ReadAt`: each read a slice at a time, as
    /// [`Document::tensor_stats`] reads it; else as [`document_stats`]
    /// gives them); `progress` is called with each tensor's bytes once it
    /// is done.
    pub fn stats(
        &self,
        filter: &NameFilter,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<TensorStats>> {
        if !self.is_read_at() {
            return Ok(document_stats(self, filter, progress));
        }
        let mut out = Vec::new();
        for (at, t) in self.index().tensors().iter().enumerate() {
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
        let name = self.index().tensors().get(at).map_or("", |t| t.name());
        Ok((name, self.get(name)?, slice))
    }

    /// The position of the tensor `spec` (`NAME` or `NAME[SLICE]`) names,
    /// and the slice: nothing read.
    pub fn spec(&self, spec: &str) -> Result<(usize, SliceSpec)> {
        let tensors = self.index().tensors();
        let find = |n: &str| Some(tensors.get(self.position(n)?)?.name());
        let (name, slice) = crate::slice::parse_spec_in(find, self.len(), spec)?;
        let at = self.position(name).ok_or_else(|| Error::NoTensorNamed {
            name: name.to_string(),
            of: self.len(),
        })?;
        Ok((at, slice))
    }
}
