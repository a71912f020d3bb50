//! TenniS modules (`.tsm`, crate `bubble-module`).
//!
//! Reading gives every tensor of the non-reserved node parameters
//! (`<node #name>/<key>`, `[i]` per field of a multi-field value) and the
//! graph. Tensors are named as [`bubble_module::Module::unique_named_tensors`]
//! names them: a `<const>` node's value by the node alone (`<node>`, as the
//! typed graph names it), and where node names repeat, the n-th node of a
//! name as `<name>#<n>`. The names as stored (`<node>/value`, repeated) are
//! kept as each entry's `stored_name` (schema 1 of the contract). Writing makes a module of `<const>` nodes, one per tensor, all
//! listed as module outputs (so the C++ library loads it), streamed one
//! converted tensor at a time; re-encoding
//! writes the module again with nodes and parameters in their stored order,
//! whatever the names.

use bubble_module::{ConstantsWriter, Module, NodeOrder, ParamOrder, WriteOptions};
use tensor_core::MemoryOrder;

use crate::codec::{Codec, Source, WriteSeek};
use crate::random_access::{FileIndex, ReadAt};
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Format, InTensor, Result};

pub(crate) struct Tennis;

/// The writer: one `<const>` node per tensor, row-major.
struct ConstantsSink<'w>(ConstantsWriter<&'w mut dyn WriteSeek>);

impl TensorSink for ConstantsSink<'_> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        t.with_planned(|p| {
            let row_major;
            let p = match p.order() {
                MemoryOrder::RowMajor => p,
                MemoryOrder::ColumnMajor => {
                    row_major = p.to_row_major()?;
                    &row_major
                }
            };
            self.0.constant(t.name(), p).in_tensor(t.name())
        })
    }

    fn finish(self) -> Result<()> {
        self.0.finish()?;
        Ok(())
    }
}

/// The reader's options: strict, under `limits` (shared with the
/// random-access path, `random_access::tsm`).
pub(crate) fn module_options(limits: tensor_core::Limits) -> bubble_module::ReadOptions {
    bubble_module::ReadOptions::default().with_limits(limits)
}

impl Codec for Tennis {
    fn write(&self, _: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        feed.drain(ConstantsSink(ConstantsWriter::new(w, feed.len())?))
    }

    fn refuses(&self, _: Format, dtype: tensor_core::DType, _dims: &[usize]) -> Option<String> {
        bubble_module::code_of_dtype(dtype)
            .is_none()
            .then(|| format!("TenniS has no {dtype} type"))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        let module = Module::parse(src.bytes())?;
        let opts = WriteOptions::default()
            .with_nodes(NodeOrder::AsGiven)
            .with_params(ParamOrder::AsGiven);
        module.write(w, &opts)?;
        Ok(())
    }

    fn index(&self, _: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        index.read_tsm(r)
    }
}
