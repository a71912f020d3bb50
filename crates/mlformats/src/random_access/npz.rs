//! NumPy `.npz` by random access: the zip directory read, each member's
//! `.npy` header parsed (inflated from the member's start when the member
//! is deflated), its data located as a byte range or as a deflated or
//! big-endian stream (`deflate.rs`).
//!
//! The one reader of the format: a [`crate::Document`] is this index over
//! the memory map (`FileIndex::into_contents`).
//!
//! The file has one inflation budget: the listing
//! refuses deflated members whose declared sizes together pass it, and
//! each member is charged as far as it is inflated, once (the rule is in
//! `deflate.rs`), so reading the tensors again costs no budget.

use std::io;

use super::layout::Layout;
use super::{FileIndex, IndexedTensor, ReadAt, Stream, count, deflate, overflow, read_vec};
use crate::codec::StoredTensor;
use crate::{Error, Result};

impl FileIndex {
    /// An `.npz`: each member's `.npy` header read (inflated from the
    /// member's start when it is deflated) and its data located.
    pub(crate) fn read_npz<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        use crate::formats::npz::{npy_header, npy_header_len};
        use deflate::{Coding, Member, Pool};
        use nnp_archive::archive::{Compression, list};
        // one inflation budget for the file (see deflate.rs)
        let budget = tensor_core::InflateBudget::new(&self.limits, r.len());
        let opts = nnp_archive::ReadOptions::default()
            .with_limits(self.limits)
            .with_budget(budget.clone())
            // names are tensor names, never paths (see `formats/npz.rs`)
            .allow_unsafe_names(true);
        // the zip reader reads the directory a field at a time: buffered
        let stream = io::BufReader::with_capacity(16 << 10, Stream { r, pos: 0 });
        let members = list(stream, &opts).map_err(crate::formats::npz::zip_err)?;
        // an archive whose declared sizes pass the budget: the data
        // reads are refused (a Document at open), the headers are listed
        let over = nnp_archive::archive::over_declared_budget(&members, &budget, r.len());
        let pool = std::sync::Arc::new(Pool::new(budget));
        let wrap = crate::formats::npz::zip_err;
        for m in &members {
            let member = match m.compression {
                Compression::Stored => None,
                _ => Some(std::sync::Arc::new(Member::new(m, wrap, &pool))),
            };
            let Some(name) = m.name.strip_suffix(".npy") else {
                // every member is inflated (and checked), .npy or not
                if let Some(z) = &member {
                    deflate::verify(r, z)?;
                }
                continue;
            };
            let head = |len: u64| match &member {
                None => read_vec(r, m.data_start, len),
                Some(z) => z.read_vec(r, 0, len),
            };
            let prefix = head(m.size.min(12))?;
            let header_len = npy_header_len(&prefix).map_or(m.size, |n| (n as u64).min(m.size));
            // (no numpy writes a header over a few kilobytes; a longer one
            // is read within the limits)
            self.limits
                .check_alloc(".npy header", header_len)
                .map_err(|e| Error::from(e).in_tensor(name))?;
            let h = npy_header(&m.name, &head(header_len)?, &self.limits)?;
            // the data fills the rest of the member exactly
            let rest = m.size - h.header_len as u64;
            let need = h.data_len as u64;
            if rest < need {
                return Err(Error::Npz(format!(
                    "{}: data is {rest} bytes, the header needs {need}",
                    m.name
                )));
            }
            if rest != need {
                return Err(Error::Npz(format!(
                    "{}: {} bytes after the data",
                    m.name,
                    rest - need
                )));
            }
            let numel = count(&h.dims).ok_or_else(|| overflow(name))?;
            if need == 0
                && let Some(z) = &member
            {
                // no read will reach its end: checked now
                deflate::verify(r, z)?;
            }
            // big-endian data is swapped to little-endian as it is read
            let lane = if h.big_endian {
                deflate::lane_of(h.dtype)
            } else {
                0
            };
            let (offset, layout) = match member {
                None if lane == 0 => (m.data_start + h.header_len as u64, Layout::Contiguous),
                None => (
                    m.data_start + h.header_len as u64,
                    Layout::Coded(Coding::Swapped { lane }),
                ),
                Some(member) => (
                    m.data_start,
                    Layout::Coded(Coding::Deflated {
                        member,
                        at: h.header_len as u64,
                        lane,
                    }),
                ),
            };
            let stored = StoredTensor::from_parts(name.to_string(), h.dims);
            let t = IndexedTensor::row_major(stored, h.dtype, offset, need, numel);
            self.tensors.push(t.with_order(h.order).with_layout(layout));
        }
        pool.refuse_reads(over);
        Ok(())
    }
}
