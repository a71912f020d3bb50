//! Exporting the graph of a file opened by random access ([`FileIndex`])
//! without holding its weights: the exporter gets each tensor's type and
//! dimensions from the index, reads a tensor from the file only where a
//! lowering needs its values (attribute tensors, weights it derives others
//! from, dropped once used), and leaves the model's own weights out of the
//! model as deferred initializers ([`gt::deferred_source`]);
//! [`write_deferred`] then writes the model, reading each deferred weight
//! from the file when it gets to it. The bytes are those of the model
//! [`super::export_model`] builds (the same exporter, not deferring)
//! written whole.
//!
//! Memory: the model without its weights, the weights lowerings derive
//! (binarized, quantized, ...: held in the model as on the whole path),
//! and one weight at a time as read, cast to f32 (NNabla) and to the
//! conversion's `--dtype`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::Write;

use graph_translate::export as gt;
use onnx_format::ModelProto;
use tensor_core::{DType, MemoryOrder, Tensor};

use super::{ExportOptions, ExportSummary};
use crate::random_access::{FileIndex, ReadAt};
use crate::{Error, Result};

/// The tensors of an index as the exporter's weights: types and dims from
/// the index, data read on demand, the first read that failed kept.
struct IndexWeights<'a, R: ?Sized> {
    index: &'a FileIndex,
    reader: &'a R,
    failed: RefCell<Option<Error>>,
    /// The model's own weights are left out as deferred initializers.
    defers: bool,
}

impl<R: ReadAt + ?Sized> gt::Weights for IndexWeights<'_, R> {
    fn weight(&self, name: &str) -> Option<Cow<'_, Tensor<'static>>> {
        let i = self.index.position(name)?;
        match self.index.read_tensor(self.reader, i) {
            Ok(t) => Some(Cow::Owned(t)),
            Err(e) => {
                self.failed.borrow_mut().get_or_insert(e.in_tensor(name));
                None
            }
        }
    }

    fn info(&self, name: &str) -> Option<(DType, Vec<usize>)> {
        let t = &self.index.tensors()[self.index.position(name)?];
        Some((t.dtype(), t.dims().to_vec()))
    }

    fn defers(&self) -> bool {
        self.defers
    }
}

/// The ONNX model of the graph of the file `index` describes (read
/// through `reader`): with its weights ([`super::export_model`]), or, when
/// `defers`, its model's own weights deferred, their data written by
/// [`write_deferred`] (the bytes are the same).
pub(crate) fn export_index_model<R: ReadAt + ?Sized>(
    index: &FileIndex,
    reader: &R,
    opts: &ExportOptions,
    defers: bool,
) -> Result<(ModelProto, ExportSummary)> {
    let weights = IndexWeights {
        index,
        reader,
        failed: RefCell::new(None),
        defers,
    };
    let exported = super::export_with(index, &weights, opts);
    // a tensor that could not be read fails the export, even where a
    // lowering would have gone on without it
    if let Some(e) = weights.failed.into_inner() {
        return Err(e);
    }
    exported
}

/// Writes `model` ([`export_index_model`]'s, possibly renamed and cast) to
/// `out`: each deferred initializer's data read from the file when the
/// writer gets to it, cast to f32 when the exporter said so and then to the
/// initializer's type when that differs (`--dtype`), as the whole path
/// casts them; `progress` gets each one's bytes as read.
pub(crate) fn write_deferred<R: ReadAt + ?Sized>(
    index: &FileIndex,
    reader: &R,
    model: ModelProto,
    progress: &dyn Fn(u64),
    out: &mut dyn Write,
) -> Result<()> {
    let size = |p: &onnx_format::proto::TensorProto| -> Option<usize> {
        gt::deferred_source(p)?;
        let dtype = p.data_type.and_then(onnx_format::dtype::from_onnx)?;
        let dims: Option<Vec<usize>> = p.dims.iter().map(|&d| usize::try_from(d).ok()).collect();
        tensor_core::checked_byte_len(&dims?, dtype)
    };
    // a deferred initializer whose size cannot be told is refused here
    // rather than written with its data left out
    if let Some(g) = &model.graph {
        for p in &g.initializer {
            if gt::deferred_source(p).is_some() && size(p).is_none() {
                return Err(Error::Unsupported(format!(
                    "tensor {:?}: its type or shape cannot be written to ONNX",
                    p.name.as_deref().unwrap_or_default()
                )));
            }
        }
    }
    let mut failed = None;
    let data = |p: &onnx_format::proto::TensorProto, w: &mut dyn Write| {
        let t = deferred_tensor(index, reader, p, progress).map_err(|e| {
            let msg = crate::chain_message(&e);
            failed = Some(e);
            onnx_format::Error::Invalid(msg)
        })?;
        w.write_all(t.bytes())?;
        Ok(t.bytes().len())
    };
    onnx_format::write_model_deferred(out, model, size, data).map_err(|e| {
        failed
            .take()
            .unwrap_or_else(|| crate::formats::onnx::onnx_err(e))
    })
}

/// The data of the deferred initializer `p`: its source tensor read,
/// cast as said, row-major.
fn deferred_tensor<R: ReadAt + ?Sized>(
    index: &FileIndex,
    reader: &R,
    p: &onnx_format::proto::TensorProto,
    progress: &dyn Fn(u64),
) -> Result<Tensor<'static>> {
    let (source, via_f32) = gt::deferred_source(p)
        .ok_or_else(|| Error::Internal("an initializer without data".into()))?;
    let i = index
        .position(source)
        .ok_or_else(|| Error::Internal(format!("tensor {source:?} is not in the file")))?;
    let mut t = index.read_tensor(reader, i)?;
    progress(index.tensors()[i].byte_len());
    if via_f32 && t.dtype() != DType::F32 {
        // as the exporter casts a parameter (`nnabla computes in f32`)
        t = Tensor::from_values(t.dims().to_vec(), &t.to_vec::<f32>()?)?;
    }
    let to = p
        .data_type
        .and_then(onnx_format::dtype::from_onnx)
        .ok_or_else(|| Error::Internal(format!("tensor {source:?}: no type")))?;
    if t.dtype() != to {
        t = crate::convert::cast_float(&t, to).map_err(|e| e.in_tensor(source))?;
    }
    if t.order() == MemoryOrder::ColumnMajor {
        t = t.to_row_major()?.into_static();
    }
    Ok(t)
}
