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
//!
//! ## Reading
//!
//! TenniS `.tsm` modules by random access: [`bubble_module::Module::index`]
//! walks the module (header, node list, every parameter's fields) with the
//! reader's own walk and checks, reading the values the graph shows
//! (reserved parameters, strings, short vectors) and seeking past every
//! other tensor's data, whose place it records (the format's one reader:
//! a [`crate::Document`] borrows each tensor from the memory map). The
//! tensors are named as [`bubble_module::Module::unique_named_tensors`]
//! names them (unique names, the stored names kept as
//! `stored_name`, a name still repeated given `#2`, `#3`, ...), and the
//! graph is the one it gives.

use std::collections::HashSet;

use bubble_module::{ConstantsWriter, Module, NodeOrder, ParamOrder, WriteOptions};
use tensor_core::MemoryOrder;
use tensor_core::graph::ModelGraph;

use crate::codec::{Codec, Source, StoredTensor, WriteSeek, free_name};
use crate::random_access::{FileIndex, IndexedTensor, ReadAt, Stream, count, overflow};
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

impl FileIndex {
    /// A TenniS module: every tensor located, the graph read.
    pub(crate) fn read_tsm<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let opts = module_options(self.limits);
        let index = bubble_module::Module::index(Stream { r, pos: 0 }, &opts)?;
        let mut taken: HashSet<String> = HashSet::new();
        for t in index.tensors() {
            let numel = count(&t.dims).ok_or_else(|| overflow(&t.name))?;
            let name = free_name(t.name.clone(), |n| taken.contains(n));
            taken.insert(name.clone());
            let mut stored = StoredTensor::from_parts(name, t.dims.clone());
            stored.stored_name = t.stored_name.clone();
            let t = IndexedTensor::row_major(stored, t.dtype, t.offset, t.len, numel);
            self.tensors.push(t);
        }
        self.graph = Some(ModelGraph::single(index.graph().clone()));
        Ok(())
    }
}
