//! `.npz` (numpy) in and out: a zip of `.npy` members, whose headers are
//! read and written by the `npyz` crate.
//!
//! Reading is the one reader below, [`FileIndex::read_npz`] (over the memory
//! map for a [`crate::Document`]): it borrows stored members from the map;
//! deflated members (from `numpy.savez_compressed`) are inflated one at a
//! time, bounded by
//! [`tensor_core::Limits`] and by the file's inflation budget
//! ([`tensor_core::InflateBudget`], a ratio of the file's size: a zip bomb
//! is refused from its declared sizes, before anything is inflated, with
//! [`tensor_core::Error::InflateLimit`] naming the member). A name the zip
//! lists twice is read as numpy reads it (its last entry; numpy lists the
//! name twice, both giving that entry, here it is listed once); central
//! entries sharing one local entry are refused (numpy fails on them too).
//! Writing stores one member per tensor, named `<tensor name>.npy` as
//! `numpy.savez` does, streaming each tensor's bytes.
//!
//! Member names are tensor names, not paths: nothing is ever extracted, so
//! every name numpy's `np.load` reads is read (a leading `/`, `..`
//! components, backslashes; the key is the member name without `.npy`),
//! and every name is written as it is but one with a NUL character, which
//! numpy would cut short (refused before anything is written).
//!
//! ## Reading
//!
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
use std::io::Write;

use nnp_archive::archive::NnpZipWriter;
use npyz::{Order, WriterBuilder};
use tensor_core::{DType, Limits, MemoryOrder};

use crate::codec::{Codec, Item, ReadOptions, Source, StoredTensor, WriteContext, WriteSeek};
use crate::numpy::descr_of;
use crate::random_access::layout::Layout;
use crate::random_access::{
    FileIndex, IndexedTensor, ReadAt, Stream, count, deflate, overflow, read_vec,
};
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Error, Format, Result};

pub(crate) struct Npz;

macro_rules! bail {
    ($($t:tt)*) => { return Err(Error::Npz(format!($($t)*))) };
}

pub(crate) fn npz_err(e: impl std::fmt::Display) -> Error {
    Error::Npz(e.to_string())
}

/// The error of the zip layer reading an `.npz`: a limit (the inflation
/// budget, a refused allocation) kept as the `tensor-core` error it is,
/// anything else said to make the file no readable zip.
pub(crate) fn zip_err(e: nnp_archive::Error) -> Error {
    match e {
        nnp_archive::Error::Tensor(e) => Error::Core(e),
        e => Error::Npz(format!("not a readable .npz (zip) archive: {e}")),
    }
}

fn dtype_of(descr: &str) -> Result<(DType, bool)> {
    match crate::numpy::dtype_of_descr(descr) {
        Some(d) => Ok(d),
        None => bail!("numpy dtype {descr:?} is not supported"),
    }
}

/// What a `.npy` header says: dtype, whether the data is big-endian,
/// dims, order, the data's byte length, and the header's length.
pub(crate) struct NpyHeader {
    pub dtype: DType,
    pub big_endian: bool,
    pub dims: Vec<usize>,
    pub order: MemoryOrder,
    pub data_len: usize,
    pub header_len: usize,
}

/// The length of the `.npy` header that `prefix` (at least its first 12
/// bytes, or the whole member if shorter) starts, when it can be told.
pub(crate) fn npy_header_len(prefix: &[u8]) -> Option<usize> {
    let major = *prefix.get(6)?;
    match major {
        1 => Some(10 + usize::from(u16::from_le_bytes(prefix.get(8..10)?.try_into().ok()?))),
        _ => usize::try_from(u32::from_le_bytes(prefix.get(8..12)?.try_into().ok()?))
            .ok()?
            .checked_add(12),
    }
}

/// Parses the header of a `.npy` member starting `bytes`.
pub(crate) fn npy_header(name: &str, bytes: &[u8], limits: &Limits) -> Result<NpyHeader> {
    let mut rest = bytes;
    let header = npyz::NpyHeader::from_reader(&mut rest)
        .map_err(|e| Error::Npz(format!("{name}: bad .npy header: {e}")))?;
    let file = npyz::NpyFile::with_header(header, &[][..]);
    let descr = match file.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => bail!(
            "{name}: structured numpy dtype {} is not supported",
            other.descr()
        ),
    };
    let (dtype, big_endian) = dtype_of(&descr).map_err(|e| Error::Npz(format!("{name}: {e}")))?;
    limits.check_rank(file.shape().len() as u64)?;
    let dims = file
        .shape()
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| Error::Npz(format!("{name}: dimension {d} too large")))
        })
        .collect::<Result<Vec<_>>>()?;
    let order = match file.order() {
        Order::C => MemoryOrder::RowMajor,
        Order::Fortran => MemoryOrder::ColumnMajor,
    };
    let need = tensor_core::Shape::new(dims.clone()).byte_len(dtype)?;
    Ok(NpyHeader {
        dtype,
        big_endian,
        dims,
        order,
        data_len: need,
        header_len: bytes.len() - rest.len(),
    })
}

impl Codec for Npz {
    /// One stored member per tensor, converted as it is written, a slice
    /// at a time (`TensorRef::write_planned`).
    /// Row-major tensors are written in C order and column-major ones in
    /// Fortran order.
    fn write(&self, _: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        for t in feed.heads() {
            check_name(t.name())?;
            let d = t.dtype();
            if descr_of(d).is_none() {
                return Err(Error::UnsupportedDType {
                    format: Format::Npz,
                    dtype: d,
                }
                .in_tensor(t.name()));
            }
        }
        feed.drain(ZipSink(NnpZipWriter::new(w)))
    }

    fn refuses(&self, _: Format, dtype: DType, _dims: &[usize]) -> Option<String> {
        descr_of(dtype)
            .is_none()
            .then(|| format!("numpy has no {dtype} type"))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        let doc = crate::Document::from_map(
            src.map.clone(),
            None,
            Some(Format::Npz),
            &ReadOptions::default(),
        )?;
        let items: Vec<Item<'_, '_>> = doc
            .tensors()
            .map(|(name, tensor)| Item {
                name,
                tensor: tensor.into(),
                need_grad: true,
            })
            .collect();
        let cx = WriteContext::quiet(crate::convert::Plan::default());
        self.write_to(Format::Npz, w, &items, &cx)
    }

    fn exchange(&self, _: Format) -> Option<crate::convert::Exchange> {
        Some(crate::convert::Exchange::Npz)
    }

    fn index(&self, _: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        index.read_npz(r)
    }
}

/// The writer: one stored member per tensor.
struct ZipSink<'w>(NnpZipWriter<&'w mut dyn WriteSeek>);

impl TensorSink for ZipSink<'_> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        let (dtype, dims) = (t.dtype(), t.dims());
        let order = if t.plan().row_major {
            MemoryOrder::RowMajor
        } else {
            t.order()
        };
        let len = tensor_core::checked_byte_len(dims, dtype)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| Error::TooLarge.in_tensor(t.name()))?;
        write_member(&mut self.0, t.name(), dtype, dims, order, len, |member| {
            t.stream(false, member)
        })
    }

    fn finish(self) -> Result<()> {
        self.0.finish().map_err(npz_err)?;
        Ok(())
    }
}

/// Refuses a tensor name numpy would not read back as it is: one with a
/// NUL character (Python's `zipfile` cuts a member name at its first NUL).
pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.contains('\0') {
        return Err(Error::Npz(format!(
            "tensor name {name:?} has a NUL character, which numpy would cut the name at; \
             rename it (--rename)"
        )));
    }
    Ok(())
}

/// Writes the member of a tensor of `dtype`, `dims` and `order` whose data
/// is `byte_len` bytes: its `.npy` header, then `data` writes the data (all
/// of it, in order).
fn write_member<W: Write + std::io::Seek>(
    zip: &mut NnpZipWriter<W>,
    name: &str,
    dtype: DType,
    dims: &[usize],
    order: MemoryOrder,
    byte_len: u64,
    data: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let descr = descr_of(dtype).ok_or_else(|| {
        Error::UnsupportedDType {
            format: Format::Npz,
            dtype,
        }
        .in_tensor(name)
    })?;
    check_name(name)?;
    let large = byte_len >= (1u64 << 32) - (1 << 20);
    let member_name = format!("{name}.npy");
    let member = zip.start(&member_name, large).map_err(npz_err)?;
    let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
    let order = match order {
        MemoryOrder::RowMajor => Order::C,
        MemoryOrder::ColumnMajor => Order::Fortran,
    };
    let dtype = npyz::DType::Plain(
        descr
            .parse()
            .map_err(|e| Error::Npz(format!("{descr}: {e:?}")))?,
    );
    npyz::WriteOptions::new_header_only()
        .dtype(dtype)
        .shape(&shape)
        .order(order)
        .writer(&mut *member)
        .write_header_only()
        .map_err(npz_err)?;
    data(member)
}

impl FileIndex {
    /// An `.npz`: each member's `.npy` header read (inflated from the
    /// member's start when it is deflated) and its data located.
    pub(crate) fn read_npz<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        use deflate::{Coding, Member, Pool};
        use nnp_archive::archive::{Compression, list};
        use {npy_header, npy_header_len};
        // one inflation budget for the file (see deflate.rs)
        let budget = tensor_core::InflateBudget::new(&self.limits, r.len());
        let opts = nnp_archive::ReadOptions::default()
            .with_limits(self.limits)
            .with_budget(budget.clone())
            // names are tensor names, never paths (see `formats/npz.rs`)
            .allow_unsafe_names(true);
        // the zip reader reads the directory a field at a time: buffered
        let stream = io::BufReader::with_capacity(16 << 10, Stream { r, pos: 0 });
        let members = list(stream, &opts).map_err(zip_err)?;
        // an archive whose declared sizes pass the budget: the data
        // reads are refused (a Document at open), the headers are listed
        let over = nnp_archive::archive::over_declared_budget(&members, &budget, r.len());
        let pool = std::sync::Arc::new(Pool::new(budget));
        let wrap = zip_err;
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
