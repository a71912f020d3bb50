//! TVM/CVM `.params` (crate `cvm-params`).
//!
//! Files are read strictly: trailing bytes and duplicate names are errors.
//! Names that are not UTF-8 are shown with U+FFFD; re-encoding keeps the
//! raw name bytes and each bool tensor's encoding, so it reproduces a file
//! TVM wrote byte for byte. The writer takes column-major tensors as they
//! are (it transposes while writing).

use std::collections::HashSet;

use cvm_params::{Params, ParamsWriter, WriteOptions};
use serde_json::json;

use crate::codec::{Codec, ReadOptions, Source, StoredTensor, WriteSeek, free_name};
use crate::random_access::{FileIndex, IndexedTensor, ReadAt, Stream, count, overflow};
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Error, Format, Result};

pub(crate) struct Cvm;

/// The writer: the name table first, then each tensor streamed.
struct CvmSink<'w>(ParamsWriter<&'w mut dyn WriteSeek>);

impl TensorSink for CvmSink<'_> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        // (row-major whatever the plan: the bytes the writer would write
        // for the tensor, transposing it itself)
        let (dtype, dims) = (t.dtype(), t.dims());
        let len = tensor_core::checked_byte_len(dims, dtype)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| Error::TooLarge.in_tensor(t.name()))?;
        let mut failed = None;
        self.0
            .write_tensor_streamed(dtype, dims, len, |w| {
                t.stream(true, w).map_err(|e| {
                    let msg = crate::chain_message(&e);
                    failed = Some(e);
                    std::io::Error::other(msg)
                })
            })
            .map_err(|e| failed.take().unwrap_or_else(|| e.into()))
    }

    fn finish(self) -> Result<()> {
        self.0.finish()?;
        Ok(())
    }
}

fn parse<'s>(src: &'s Source, opts: &ReadOptions) -> Result<Params<'s>> {
    let o = cvm_params::ReadOptions::default().with_limits(opts.limits);
    Ok(Params::parse_with(src.bytes(), &o)?)
}

impl Codec for Cvm {
    fn refuses(&self, _: Format, dtype: tensor_core::DType, _dims: &[usize]) -> Option<String> {
        cvm_params::dl_type_of(dtype, cvm_params::BoolEncoding::default())
            .is_none()
            .then(|| format!("TVM/CVM has no {dtype} type"))
    }

    fn takes_column_major(&self, _format: Format) -> bool {
        true
    }

    fn write(&self, _: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        let pw = ParamsWriter::new(
            w,
            feed.heads().map(|t| t.name().as_bytes()),
            &WriteOptions::default(),
        )?;
        feed.drain(CvmSink(pw))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        let params = parse(src, &ReadOptions::default())?;
        let entries = params.entries();
        let mut pw = ParamsWriter::new(
            w,
            entries.iter().map(|e| e.name_bytes()),
            &WriteOptions::default(),
        )?;
        for e in entries {
            let bools = e.info().dl_type.bool_encoding().unwrap_or_default();
            pw.write_tensor_as(e.tensor(), bools)?;
        }
        pw.finish()?;
        Ok(())
    }

    fn index(&self, _: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        index.read_cvm(r)
    }
}

impl FileIndex {
    /// A `.params` file: every tensor located, by the crate's lazy reader.
    pub(crate) fn read_cvm<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let o = cvm_params::ReadOptions::default().with_limits(self.limits);
        let lazy = cvm_params::LazyParams::from_reader(Stream { r, pos: 0 }, &o)?;
        let mut taken = HashSet::new();
        for (i, info) in lazy.infos().iter().enumerate() {
            // names that are not UTF-8 may read the same (U+FFFD): made
            // unique as `Contents::push` makes them
            let name = lazy.name(i).unwrap_or_default().into_owned();
            let name = free_name(name, |n| taken.contains(n));
            taken.insert(name.clone());
            let numel = count(&info.dims).ok_or_else(|| overflow(&name))?;
            let mut stored = StoredTensor::from_parts(name, info.dims.clone());
            stored
                .extras
                .insert("data_offset".into(), json!(info.data_offset));
            self.tensors.push(IndexedTensor::row_major(
                stored,
                info.dtype,
                info.data_offset,
                info.nbytes,
                numel,
            ));
        }
        Ok(())
    }
}
