//! ONNX `.onnx` models by random access: [`onnx_format::Model::index`]
//! walks the `ModelProto` field by field through [`ReadAt`] and reads the
//! model without its tensor data, each initializer's and `Constant` node
//! tensor's data located (`raw_data` and one packed run of `float_data` or
//! `double_data` as byte ranges, other typed fields decoded a slice at a
//! time by [`onnx_format::TypedField::read`]), with the checks
//! [`onnx_format::tensor_from_proto`] makes. A repeated name gets `#2`,
//! its stored name kept. A [`crate::Document`] is this index over the
//! memory map; a model with proto2 groups, which it does not walk, is
//! read whole (`formats/onnx.rs`).

use std::collections::HashSet;

use onnx_format::{Model, TensorData};
use tensor_core::Tensor;
use tensor_core::graph::ModelGraph;

use super::{FileIndex, IndexedTensor, Layout, ReadAt, layout};
use crate::codec::{StoredTensor, free_name};
use crate::formats::onnx::onnx_err;
use crate::{Error, Result};

impl FileIndex {
    /// An ONNX model (see the module); false (read it whole) for one with
    /// proto2 groups.
    pub(crate) fn read_onnx<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let o = onnx_format::ReadOptions::default().with_limits(self.limits);
        let Some(index) = Model::index(r, &o).map_err(onnx_err)? else {
            return Ok(false);
        };
        let mut taken: HashSet<String> = HashSet::new();
        for t in index.tensors {
            // a repeated name gets `#2`, ...; its stored name stays (as
            // `Contents::push` does)
            let mut stored = StoredTensor::from_parts(t.name, t.dims);
            stored.name = free_name(stored.name, |n| taken.contains(n));
            taken.insert(stored.name.clone());
            let layout = match t.data {
                TensorData::Typed(typed) => Layout::OnnxTyped(typed),
                TensorData::Held(held) => {
                    let t = Tensor::new(t.dtype, stored.shape.clone(), held.to_vec())
                        .map_err(|e| Error::from(e).in_tensor(&stored.name))?;
                    layout::held(t)?
                }
                _ => Layout::Contiguous,
            };
            let t = IndexedTensor::row_major(stored, t.dtype, t.offset, t.len, t.numel);
            self.tensors.push(t.with_layout(layout));
        }
        self.metadata = crate::formats::onnx::metadata(&index.model);
        self.graph = Some(ModelGraph::single(index.model.graph()));
        Ok(true)
    }

    /// The ONNX model this index describes, read through `r` without its
    /// main-graph initializers' `raw_data`
    /// ([`onnx_format::Model::without_raw_data`]), and for each initializer
    /// (in order) whether it had one (its data is then the index's tensor
    /// of the same position). `Ok(None)` for a model the index read whole
    /// (proto2 groups) or that is not ONNX.
    pub(crate) fn onnx_model_without_raw<R: ReadAt + ?Sized>(
        &self,
        r: &R,
    ) -> Result<Option<(Model, Vec<bool>)>> {
        if self.format() != crate::Format::Onnx {
            return Ok(None);
        }
        let o = onnx_format::ReadOptions::default().with_limits(self.limits);
        let Some((model, had_raw)) = Model::without_raw_data(r, &o).map_err(onnx_err)? else {
            return Ok(None);
        };
        let n = model.graph_proto().initializer.len();
        // (the index lists the initializers first, then the `Constant` nodes'
        // tensors, which stay in the model's nodes)
        if n != had_raw.len() || n > self.tensors().len() {
            return Err(Error::Malformed {
                part: "ONNX initializers",
                at: None,
                why: "the model's initializers are not those the index found".into(),
            });
        }
        Ok(Some((model, had_raw)))
    }
}

/// Elements `[start, start + count)` of the ONNX tensor `name` whose
/// values are in a typed field, into `buf`: a count that is not the
/// dims' as the whole-file path words it, anything else about `name`.
pub(super) fn read_typed<R: ReadAt + ?Sized>(
    typed: &onnx_format::TypedField,
    r: &R,
    start: u64,
    count: u64,
    buf: &mut [u8],
    name: &str,
) -> Result<()> {
    typed.read(r, start, count, buf).map_err(|e| match e {
        e @ onnx_format::Error::ValueCount(_) => onnx_err(e),
        e => onnx_err(e).in_tensor(name),
    })
}
