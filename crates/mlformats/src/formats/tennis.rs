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

use crate::codec::{Codec, Item, Source, WriteContext, WriteSeek};
use crate::{Format, InTensor, Result};

pub(crate) struct Tennis;

/// The reader's options: strict, under `limits` (shared with the
/// random-access path, `random_access::tsm`).
pub(crate) fn module_options(limits: tensor_core::Limits) -> bubble_module::ReadOptions {
    bubble_module::ReadOptions::default().with_limits(limits)
}

impl Codec for Tennis {
    fn write_to(
        &self,
        _: Format,
        w: &mut dyn WriteSeek,
        items: &[Item<'_, '_>],
        cx: &WriteContext<'_>,
    ) -> Result<()> {
        let mut m = ConstantsWriter::new(w, items.len())?;
        for it in items {
            let got = it.tensor.get()?;
            let t = cx.plan.apply(got.tensor()).in_tensor(it.name)?;
            let t = match t.order() {
                MemoryOrder::RowMajor => t,
                MemoryOrder::ColumnMajor => t.to_row_major()?.into_static(),
            };
            m.constant(it.name, &t).in_tensor(it.name)?;
            (cx.progress)(it.tensor.byte_len());
        }
        m.finish()?;
        Ok(())
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

    fn index(
        &self,
        _: Format,
        index: &mut crate::random_access::FileIndex,
        r: &dyn crate::random_access::ReadAt,
    ) -> Result<bool> {
        index.read_tsm(r)?;
        Ok(true)
    }
}
