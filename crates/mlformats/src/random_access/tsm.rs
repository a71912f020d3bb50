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

use tensor_core::graph::ModelGraph;

use super::{FileIndex, IndexedTensor, ReadAt, Stream, count, overflow};
use crate::Result;
use crate::codec::{StoredTensor, free_name};

impl FileIndex {
    /// A TenniS module: every tensor located, the graph read.
    pub(crate) fn read_tsm<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let opts = crate::formats::tennis::module_options(self.limits);
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
