//! NNabla `.h5` parameter files by random access, and the stored
//! `parameter.h5` of an `.nnp`: the HDF5 structure (superblock, object
//! headers, groups, attributes, dataspace, datatype, layout) walked through
//! [`ReadAt`] by `nnp-archive`'s reader ([`nnp_archive::h5::locate`], the
//! walk its whole-file reader does), each dataset's data located, never
//! read.
//!
//! Read this way: datasets stored contiguously (what nnabla's
//! `save_parameters` writes through h5py, and this workspace's writer),
//! compact (the bytes, in the object header, read), or chunked with no
//! filter or shuffle, deflate, fletcher32, LZF (each chunk located, the chunks read
//! and decompressed when a slice needs them: [`crate::random_access::h5chunks`]), either
//! byte order (big-endian elements swapped when read). A dataset filtered
//! otherwise, with a chunk never written, or never written at all is not
//! located (`None`), nor is a dataset without `need_grad` (a solver
//! state): such a file is parsed whole by `nnp-archive`, its tensors held
//! in memory (a solver state's as contents of kind `solver-state`).

use std::collections::HashMap;

use nnp_archive::h5::{Located, Storage, locate};
use serde_json::json;

use crate::codec::StoredTensor;
use crate::random_access::h5chunks::ChunkCache;
use crate::random_access::{FileIndex, IndexedTensor, Layout, ReadAt, count, overflow};
use crate::{Error, Result};

/// The parameters of the `.h5` file at `[base, base + len)` of `r`, each
/// located in `r`; `None` when it is read whole (see the module).
pub(super) fn located<R: ReadAt + ?Sized>(
    r: &R,
    base: u64,
    len: u64,
    limits: &tensor_core::Limits,
) -> Result<Option<Vec<Located>>> {
    let end = base.checked_add(len).filter(|&e| e <= r.len());
    if end.is_none() {
        return Err(Error::Malformed {
            part: "HDF5 file",
            at: Some(base),
            why: format!(
                "an HDF5 file of {len} bytes at byte {base} runs past the end of the file"
            ),
        });
    }
    let opts = nnp_archive::ReadOptions::default().with_limits(*limits);
    let read = |at: u64, buf: &mut [u8]| {
        let at = at
            .checked_add(base)
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        r.read_at(at, buf)
    };
    match locate(len, read, &opts) {
        Ok(Some(mut found)) => {
            for p in &mut found {
                if p.storage == Storage::Contiguous {
                    p.offset = p
                        .offset
                        .checked_add(base)
                        .ok_or_else(|| overflow(&p.name))?;
                }
            }
            Ok(Some(found))
        }
        Ok(None) => Ok(None),
        // a solver state: the whole-file path reads it as one
        Err(e) if nnp_archive::h5::SolverState::may_be(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The tensor of a located parameter; its chunks (if chunked) kept in
/// `cache`, the file's.
pub(super) fn tensor(mut p: Located, cache: &ChunkCache) -> Result<IndexedTensor> {
    let layout = Layout::of(&mut p, 0, cache)?;
    let numel = count(&p.dims).ok_or_else(|| overflow(&p.name))?;
    let stored = StoredTensor::from_parts(p.name, p.dims).with("need_grad", json!(p.need_grad));
    Ok(IndexedTensor::row_major(stored, p.dtype, p.offset, p.len, numel).with_layout(layout))
}

impl FileIndex {
    /// A standalone `.h5` parameter file: its datasets located, or, for
    /// one this path does not locate, parsed whole (see the module).
    pub(crate) fn read_h5<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let Some(found) = located(r, 0, r.len(), &self.limits)? else {
            return self.whole_h5(r);
        };
        // a name given twice (a group behind two hard links) keeps its
        // first position and takes the last entry, as the whole path does
        let mut at: HashMap<String, usize> = HashMap::new();
        let cache = ChunkCache::new(&self.limits, r.len());
        for p in found {
            let name = p.name.clone();
            let t = tensor(p, &cache)?;
            match at.get(&name) {
                Some(&i) => {
                    self.tensors[i] = t;
                    self.repeated_names = true;
                }
                None => {
                    at.insert(name, self.tensors.len());
                    self.tensors.push(t);
                }
            }
        }
        Ok(())
    }

    /// An `.h5` parsed whole by `nnp-archive`: its parameters held, or a
    /// solver state's tensors (`Solver.save_states`, kind `solver-state`,
    /// no `need_grad`).
    fn whole_h5<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let src = self.whole(r, crate::Format::NnablaH5)?;
        let opts = crate::codec::ReadOptions::default().with_limits(self.limits);
        let e = match super::read_h5(&src, &opts) {
            Ok(params) => {
                // (nnp-archive counted them against the limits)
                let params = params
                    .iter()
                    .map(|p| crate::formats::nnabla::Entry::held(p, &src.map));
                return self.push_entries(params.collect::<Result<_>>()?, false);
            }
            Err(Error::Nnp(e)) if nnp_archive::h5::SolverState::may_be(&e) => e,
            Err(e) => return Err(e),
        };
        let state =
            super::solver_state(&src.map, 0..src.map.len(), &opts).map_err(|_| Error::Nnp(e))?;
        self.push_contents(state)
    }
}
