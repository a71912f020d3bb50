//! primitiv MessagePack files by random access: [`primitiv_format::index`]
//! walks the file (header, key paths, shapes, stat keys, optimizer
//! configs) with the reader's own walk and checks, seeking past every
//! tensor's data, whose place it records. A tensor's data is always one
//! contiguous `bin` in the file (f32, column-major), so every primitiv
//! file is located, and this is the format's one reader (a
//! [`crate::Document`] borrows each tensor from the memory map). The
//! tensors are named, and their contract fields made, by
//! `crate::formats::primitiv`'s functions, a repeated name given `#2`,
//! `#3`, ... (the stored name kept).

use std::collections::HashSet;

use tensor_core::{DType, MemoryOrder};

use super::{FileIndex, IndexedTensor, ReadAt, Stream, count, overflow};
use crate::Result;
use crate::codec::free_name;
use crate::formats::primitiv::{entry, name, optimizer_metadata, shape_metadata};

impl FileIndex {
    /// A primitiv file: every tensor located, Shape and Optimizer files'
    /// fields read.
    pub(crate) fn read_primitiv<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let opts = primitiv_format::ReadOptions::default().with_limits(self.limits);
        let index = primitiv_format::index(Stream { r, pos: 0 }, &opts)?;
        self.kind = Some(index.data_type.kind());
        if let Some(s) = &index.shape {
            shape_metadata(s, &mut self.metadata);
        }
        if let Some(o) = &index.optimizer {
            optimizer_metadata(o, &mut self.metadata);
        }
        let mut taken: HashSet<String> = HashSet::new();
        for t in index.tensors {
            let stat = t.stat.as_deref();
            // the stored name kept, the name made unique (`Contents::push`)
            let mut stored = entry(
                name(index.data_type, &t.path, stat),
                &t.path,
                stat,
                &t.shape,
            );
            stored.name = free_name(stored.name, |x| taken.contains(x));
            taken.insert(stored.name.clone());
            let dims = t.shape.core_dims();
            let numel = count(&dims).ok_or_else(|| overflow(&stored.name))?;
            self.tensors.push(IndexedTensor {
                tensor_dims: (dims != stored.shape).then_some(dims),
                stored,
                dtype: DType::F32,
                order: MemoryOrder::ColumnMajor,
                offset: t.offset,
                len: t.len,
                numel,
                layout: super::Layout::Contiguous,
            });
        }
        Ok(())
    }
}
