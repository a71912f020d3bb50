//! Locating the parameters of an `.h5` file read by slices: the walk of
//! [`super::parse_with`] (the same function, over the same `hdf5-pure`
//! reader) over a source that holds only the pages of metadata it has been
//! asked for, never a tensor's data.
//!
//! `hdf5-pure` reads through a [`hdf5_pure::Source`] it owns (`'static`,
//! `Send + Sync`), while the file here is read by a borrowed closure (in a
//! browser, `Blob.slice`). So the source is a shared cache of pages: a read
//! of a page it does not hold fails and records the range; the call into
//! `hdf5-pure` that made it is then run again once the missing pages are
//! read ([`Fetch`]). A call's result is kept only when none of its reads
//! missed, so every result is the one the whole file gives.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tensor_core::{DType, Limits};

use super::chunks::Chunks;
use super::{Calls, Input, Mode, RawData, check_superblock_by, h5err, read_core, sort_like_nnabla};
use crate::{Error, ReadOptions, Result};

/// One parameter of an `.h5` file, located ([`locate`]): what the file says
/// of it and where its bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The dataset's path without the leading `/` (the parameter's name).
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Its dimensions.
    pub dims: Vec<usize>,
    /// Its `need_grad` attribute, as a truth value.
    pub need_grad: bool,
    /// Where its bytes (row-major) start in the file, when they are
    /// [`Storage::Contiguous`] (0 otherwise).
    pub offset: u64,
    /// How many bytes it has (its shape's size times its element size).
    pub len: u64,
    /// Its elements are stored big-endian (to be byte-swapped to
    /// little-endian, element by element).
    pub big_endian: bool,
    /// How its bytes are stored.
    pub storage: Storage,
}

/// How a located dataset's bytes are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// `len` bytes at `offset`.
    Contiguous,
    /// In the object header (HDF5's compact layout): the bytes, read (at
    /// most 64 KiB).
    Compact(Vec<u8>),
    /// In chunks, each located, none read.
    Chunked(Chunks),
}

/// Reads the structure of the `.h5` parameter file of `len` bytes that
/// `read(offset, buf)` reads (filling `buf` from `offset`), without reading
/// any tensor's data: the parameters [`super::parse_with`] gives for the
/// same bytes, in the same order, with the same names, types, shapes and
/// `need_grad`, each located instead of read. The same claims are checked
/// and the same errors given.
///
/// Contiguous data is located by its range, compact data read (it is in
/// the object header), chunked data by its chunks ([`Chunks`]: those
/// with no filter or shuffle, deflate, fletcher32, LZF, every chunk
/// allocated),
/// either byte order. `Ok(None)` when some dataset's data is stored
/// otherwise (another filter, a chunk never written, contiguous storage
/// never written): such a file is read whole. Of `opts`, only the limits
/// apply; the metadata read is held in memory (in pages of 8 KiB) and
/// bounded by [`Limits::max_alloc`]; the walk of a chunk index reads a
/// number of bytes bounded by the chunk count (a cycle is an error).
///
/// ```
/// use nnp_archive::h5;
/// use tensor_core::Tensor;
///
/// let w = Tensor::from_values([2, 2], &[1f32, 2., 3., 4.])?;
/// let mut file = Vec::new();
/// h5::write_tensors(&mut file, [("fc/W", &w, true)])?;
/// let read = |at: u64, buf: &mut [u8]| {
///     let at = at as usize;
///     buf.copy_from_slice(&file[at..at + buf.len()]);
///     Ok(())
/// };
/// let found = h5::locate(file.len() as u64, read, &Default::default())?.unwrap();
/// assert_eq!((found[0].name.as_str(), found[0].len), ("fc/W", 16));
/// let at = found[0].offset as usize;
/// assert_eq!(&file[at..at + 16], w.bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn locate<F>(len: u64, read: F, opts: &ReadOptions) -> Result<Option<Vec<Located>>>
where
    F: FnMut(u64, &mut [u8]) -> std::io::Result<()>,
{
    let limits = &opts.limits;
    let read = RefCell::new(read);
    check_superblock_by(len, |at, buf| (read.borrow_mut())(at, buf))?;
    let pages = Arc::new(Mutex::new(Pages::default()));
    let fetch = Fetch {
        len,
        read,
        pages: Arc::clone(&pages),
        limits,
    };
    let source = Paged { len, pages };
    let file = fetch
        .call(|| hdf5_pure::File::from_source(source.clone()))?
        .map_err(|e| h5err("open", e))?;
    // nothing is inflated here ([`Chunks::decode`] is the caller's)
    let budget = opts.budget_for(len);
    let input = Input {
        src: &source,
        len,
        budget: &budget,
    };
    let mut raw = read_core(&file, &input, limits, Mode::Locate, &fetch)?;
    // as `finish` does
    if let Some(r) = raw.iter().find(|r| r.need_grad.is_none()) {
        return Err(Error::MissingNeedGrad {
            dataset: r.name.clone(),
        });
    }
    sort_like_nnabla(&mut raw)?;
    let mut out = Vec::with_capacity(raw.len());
    for r in raw {
        let nbytes = || {
            let n = r.dims.iter().try_fold(r.dtype.size() as u64, |n, &d| {
                n.checked_mul(u64::try_from(d).ok()?)
            });
            n.ok_or_else(|| Error::BadData {
                dataset: r.name.clone(),
                reason: format!("shape {:?} overflows", r.dims),
            })
        };
        let (offset, len, storage) = match r.data {
            RawData::Range(range) => (range.start, range.end - range.start, Storage::Contiguous),
            RawData::Owned(v) if v.is_empty() => (0, 0, Storage::Contiguous),
            RawData::Owned(v) => (0, v.len() as u64, Storage::Compact(v)),
            RawData::Chunks(c) => (0, nbytes()?, Storage::Chunked(c)),
            RawData::Elsewhere => return Ok(None),
        };
        out.push(Located {
            name: r.name,
            dtype: r.dtype,
            dims: r.dims,
            need_grad: r.need_grad.unwrap_or(false),
            offset,
            len,
            big_endian: r.swap,
            storage,
        });
    }
    Ok(Some(out))
}

/// The size of a page of the cache.
const PAGE: u64 = 8 << 10;

/// How many bytes of pages the cache keeps between calls.
const KEEP: u64 = 4 << 20;

/// How many times one call is run again (a structure scattered over more
/// places than this is read whole).
const MAX_RETRIES: u32 = 100_000;

/// The message of the error a call over its budget of bytes gives
/// ([`Calls::call_within`]).
pub(super) const OVER_BUDGET: &str = "read more than its budget";

/// The pages read so far; the range the last read missed.
#[derive(Default)]
struct Pages {
    /// How many bytes the current call may read, and has read.
    budget: Option<u64>,
    spent: u64,
    over: bool,
    /// Page number to (bytes, the call that last used it).
    map: HashMap<u64, (Vec<u8>, u64)>,
    bytes: u64,
    missing: Option<(u64, u64)>,
    call: u64,
}

fn lock(pages: &Mutex<Pages>) -> MutexGuard<'_, Pages> {
    pages.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `hdf5-pure` source: the file's pages read so far.
#[derive(Clone)]
struct Paged {
    len: u64,
    pages: Arc<Mutex<Pages>>,
}

impl hdf5_pure::Source for Paged {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(
        &self,
        offset: u64,
        buf: &mut [u8],
    ) -> std::result::Result<(), hdf5_pure::FormatError> {
        let n = buf.len() as u64;
        let end = offset.checked_add(n).filter(|&e| e <= self.len).ok_or(
            hdf5_pure::FormatError::UnexpectedEof {
                expected: buf.len(),
                available: usize::try_from(self.len.saturating_sub(offset)).unwrap_or(usize::MAX),
            },
        )?;
        if n == 0 {
            return Ok(());
        }
        let mut p = lock(&self.pages);
        if let Some(b) = p.budget {
            p.spent = p.spent.saturating_add(n);
            if p.spent > b {
                p.over = true;
                return Err(hdf5_pure::FormatError::Source(OVER_BUDGET.into()));
            }
        }
        let call = p.call;
        let mut at = offset;
        while at < end {
            let page = at / PAGE;
            let Some((bytes, used)) = p.map.get_mut(&page) else {
                let m = p.missing.get_or_insert((offset, end));
                *m = (m.0.min(offset), m.1.max(end));
                return Err(hdf5_pure::FormatError::Source("not read yet".into()));
            };
            *used = call;
            let from = (at - page * PAGE) as usize;
            let take = ((end - at) as usize).min(bytes.len().saturating_sub(from));
            let dst = (at - offset) as usize;
            match (bytes.get(from..from + take), buf.get_mut(dst..dst + take)) {
                (Some(s), Some(d)) if take > 0 => d.copy_from_slice(s),
                _ => return Err(hdf5_pure::FormatError::Source("short page".into())),
            }
            at += take as u64;
        }
        Ok(())
    }
}

/// Runs each call until none of its reads missed, reading what they missed
/// in between.
struct Fetch<'l, F> {
    len: u64,
    read: RefCell<F>,
    pages: Arc<Mutex<Pages>>,
    limits: &'l Limits,
}

impl<F: FnMut(u64, &mut [u8]) -> std::io::Result<()>> Fetch<'_, F> {
    /// Reads the pages of `[start, end)` the cache does not hold.
    fn fetch(&self, start: u64, end: u64, call: u64) -> Result<()> {
        let mut p = lock(&self.pages);
        if p.bytes > KEEP {
            // drop what earlier calls read
            p.map.retain(|_, (_, used)| *used == call);
            p.bytes = p.map.values().map(|(b, _)| b.len() as u64).sum();
        }
        for page in start / PAGE..end.div_ceil(PAGE) {
            if p.map.contains_key(&page) {
                continue;
            }
            let at = page * PAGE;
            let n = (self.len - at).min(PAGE);
            self.limits.check_alloc("HDF5 metadata", p.bytes + n)?;
            let mut buf = vec![0u8; n as usize];
            (self.read.borrow_mut())(at, &mut buf).map_err(|e| Error::io("reading HDF5", e))?;
            p.bytes += n;
            p.map.insert(page, (buf, call));
        }
        Ok(())
    }
}

impl<F: FnMut(u64, &mut [u8]) -> std::io::Result<()>> Calls for Fetch<'_, F> {
    fn call_within<T>(&self, budget: u64, f: impl FnMut() -> T) -> Result<T> {
        lock(&self.pages).budget = Some(budget);
        let out = self.call(f);
        lock(&self.pages).budget = None;
        out
    }

    fn call<T>(&self, mut f: impl FnMut() -> T) -> Result<T> {
        let call = {
            let mut p = lock(&self.pages);
            p.call += 1;
            p.call
        };
        for _ in 0..MAX_RETRIES {
            {
                let mut p = lock(&self.pages);
                p.missing = None;
                p.spent = 0;
                p.over = false;
            }
            let out = f();
            let (missing, over) = {
                let mut p = lock(&self.pages);
                (p.missing.take(), p.over)
            };
            if over {
                return Err(Error::Hdf5 {
                    context: "open".into(),
                    message: OVER_BUDGET.into(),
                });
            }
            match missing {
                None => return Ok(out),
                Some((start, end)) => {
                    drop(out);
                    self.fetch(start, end, call)?;
                }
            }
        }
        Err(Error::Hdf5 {
            context: "open".into(),
            message: format!("its structure is read in more than {MAX_RETRIES} places"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h5::{parse, write_tensors};
    use hdf5_pure::{AttrValue, Datatype, DatatypeByteOrder, FileBuilder, FloatingPointLayout};
    use tensor_core::Tensor;

    /// `locate` over `file`, counting the reads.
    fn locate_in(file: &[u8], limits: Limits) -> (Result<Option<Vec<Located>>>, usize) {
        let mut reads = 0;
        let read = |at: u64, buf: &mut [u8]| {
            reads += 1;
            let at = usize::try_from(at).map_err(|_| std::io::ErrorKind::UnexpectedEof)?;
            let src = file
                .get(at..at + buf.len())
                .ok_or(std::io::ErrorKind::UnexpectedEof)?;
            buf.copy_from_slice(src);
            Ok(())
        };
        let r = locate(
            file.len() as u64,
            read,
            &ReadOptions::default().with_limits(limits),
        );
        (r, reads)
    }

    fn custom(build: impl FnOnce(&mut FileBuilder)) -> Vec<u8> {
        let mut fb = FileBuilder::new();
        build(&mut fb);
        fb.finish().unwrap()
    }

    #[test]
    fn located_equals_parsed_and_data_is_never_read() {
        let big: Vec<f32> = (0..100_000).map(|i| i as f32).collect();
        let w = Tensor::from_values([100, 1000], &big).unwrap();
        let s = Tensor::from_values(Vec::<usize>::new(), &[7i64]).unwrap();
        let e = Tensor::new(DType::F32, [0, 3], Vec::<u8>::new()).unwrap();
        let mut file = Vec::new();
        write_tensors(
            &mut file,
            [
                ("b/w", &w, true),
                ("a", &s, false),
                ("c/e", &e, true),
                ("d", &w, false),
            ],
        )
        .unwrap();
        let (found, reads) = locate_in(&file, Limits::default());
        let found = found.unwrap().unwrap();
        let parsed = parse(&file).unwrap();
        assert_eq!(found.len(), parsed.len());
        for (l, p) in found.iter().zip(&parsed) {
            assert_eq!(l.name, p.name);
            assert_eq!((l.dtype, &l.dims[..]), (p.tensor.dtype(), p.tensor.dims()));
            assert_eq!(l.need_grad, p.need_grad);
            let (s, n) = (l.offset as usize, l.len as usize);
            assert_eq!(&file[s..s + n], p.tensor.bytes(), "{}", l.name);
        }
        // 800 KB of data, a few pages of metadata read
        assert!(reads < 20, "{reads} reads");
    }

    /// The bytes of a located parameter, as the whole reader gives them.
    fn bytes_of(file: &[u8], l: &Located) -> Vec<u8> {
        let mut v = match &l.storage {
            Storage::Contiguous => file[l.offset as usize..(l.offset + l.len) as usize].to_vec(),
            Storage::Compact(v) => v.clone(),
            Storage::Chunked(c) => {
                // assembled chunk by chunk (rank 1 here)
                let mut out = Vec::new();
                for at in &c.chunks {
                    let s = at.address as usize;
                    out.extend(c.decode(at, &file[s..s + at.size as usize]).unwrap());
                }
                out.truncate(l.len as usize);
                out
            }
        };
        if l.big_endian {
            for e in v.chunks_exact_mut(l.dtype.size()) {
                e.reverse();
            }
        }
        v
    }

    #[test]
    fn chunked_and_big_endian_files_are_located() {
        let vals: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let chunked = custom(|fb| {
            fb.create_dataset("x")
                .with_f32_data(&vals)
                .with_chunks(&[100])
                .with_deflate(6)
                .set_attr("need_grad", AttrValue::I8(1));
        });
        let be = Datatype::FloatingPoint {
            size: 4,
            byte_order: DatatypeByteOrder::BigEndian,
            layout: FloatingPointLayout::IEEE754_BINARY32,
        };
        let big_endian = custom(|fb| {
            fb.create_dataset("x")
                .with_raw_data(be, 1.5f32.to_be_bytes().to_vec(), 1)
                .set_attr("need_grad", AttrValue::I8(1));
        });
        for f in [chunked, big_endian] {
            let p = parse(&f).unwrap();
            let (l, reads) = locate_in(&f, Limits::default());
            let l = l.unwrap().unwrap();
            assert_eq!(bytes_of(&f, &l[0]), p[0].tensor.bytes());
            assert!(reads < 10, "{reads}");
        }
    }

    #[test]
    fn every_filter_mix_decodes_as_the_whole_reader_reads() {
        // odd chunk lengths (bytes of 1-byte elements, 7 x 5 chunks) and
        // odd stored lengths (deflated or lzf'd, then checksummed)
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        type Filters = fn(&mut hdf5_pure::DatasetBuilder) -> &mut hdf5_pure::DatasetBuilder;
        let mixes: [Filters; 6] = [
            |d| d.with_fletcher32(),
            |d| d.with_deflate(4).with_fletcher32(),
            |d| d.with_shuffle().with_deflate(1).with_fletcher32(),
            |d| d.with_lzf(),
            |d| d.with_shuffle().with_lzf().with_fletcher32(),
            |d| d.with_shuffle().with_deflate(9),
        ];
        for (k, mix) in mixes.iter().enumerate() {
            let f = custom(|fb| {
                let d = fb.create_dataset("x");
                d.with_u8_data(&bytes)
                    .with_shape(&[40, 25])
                    .with_chunks(&[7, 5]);
                mix(d).set_attr("need_grad", AttrValue::I8(1));
            });
            let p = parse(&f).unwrap();
            let l = locate_in(&f, Limits::default()).0.unwrap().unwrap();
            let Storage::Chunked(c) = &l[0].storage else {
                panic!("{k}: {:?}", l[0].storage)
            };
            assert!(!c.filters.is_empty(), "{k}");
            // each chunk's rows where the whole reader has them
            let want = p[0].tensor.bytes();
            for (n, at) in c.chunks.iter().enumerate() {
                let s = at.address as usize;
                let chunk = c.decode(at, &f[s..s + at.size as usize]).unwrap();
                let (r0, c0) = ((n / 5) * 7, (n % 5) * 5);
                for r in 0..7 {
                    if r0 + r < 40 {
                        let from = (r0 + r) * 25 + c0;
                        assert_eq!(&chunk[r * 5..r * 5 + 5], &want[from..from + 5], "{k}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_broken_chunk_fails_when_decoded() {
        let vals: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let f = custom(|fb| {
            fb.create_dataset("x")
                .with_f32_data(&vals)
                .with_chunks(&[100])
                .with_deflate(6)
                .set_attr("need_grad", AttrValue::I8(1));
        });
        let l = locate_in(&f, Limits::default()).0.unwrap().unwrap();
        let Storage::Chunked(c) = &l[0].storage else {
            panic!("{:?}", l[0].storage)
        };
        let at = c.chunks[3];
        let s = at.address as usize;
        let stored = &f[s..s + at.size as usize];
        assert_eq!(c.decode(&at, stored).unwrap().len(), 400);
        let mut bad = stored.to_vec();
        let n = bad.len();
        bad[n / 2] ^= 0x55;
        assert!(c.decode(&at, &bad).is_err());
        assert!(c.decode(&at, &stored[..n - 5]).is_err());
        // the whole reader fails on it too
        let mut file = f.clone();
        file[s + n / 2] ^= 0x55;
        assert!(parse(&file).is_err());
    }

    #[test]
    fn refusals_are_the_whole_readers() {
        let missing = custom(|fb| {
            fb.create_dataset("x").with_f32_data(&[1.0]);
        });
        let e = locate_in(&missing, Limits::default()).0.unwrap_err();
        assert!(matches!(e, Error::MissingNeedGrad { .. }), "{e}");
        let mixed = custom(|fb| {
            fb.create_dataset("x")
                .with_f32_data(&[1.0])
                .set_attr("need_grad", AttrValue::I8(1))
                .set_attr("index", AttrValue::I64(0));
            fb.create_dataset("y")
                .with_f32_data(&[1.0])
                .set_attr("need_grad", AttrValue::I8(1));
        });
        let e = locate_in(&mixed, Limits::default()).0.unwrap_err();
        assert!(matches!(e, Error::MixedIndex { .. }), "{e}");
        // the cache of metadata is bounded by the limits
        let mut file = Vec::new();
        let w = Tensor::from_values([2], &[1f32, 2.]).unwrap();
        write_tensors(&mut file, [("w", &w, true)]).unwrap();
        let tiny = Limits::default().with_max_alloc(100);
        let e = locate_in(&file, tiny).0.unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
    }

    #[test]
    fn truncated_and_mutated_files_fail_where_the_whole_reader_fails() {
        let a = Tensor::from_values([3, 4], &[0.5f32; 12]).unwrap();
        let b = Tensor::from_values([5], &[1i16, 2, 3, 4, 5]).unwrap();
        let mut file = Vec::new();
        write_tensors(&mut file, [("g/a", &a, true), ("g/h/b", &b, false)]).unwrap();
        let mut cases = 0;
        let mut check = |bytes: &[u8]| {
            let whole = parse(bytes);
            let (found, _) = locate_in(bytes, Limits::default());
            match (whole, found) {
                (Ok(p), Ok(Some(l))) => {
                    assert_eq!(p.len(), l.len());
                    for (p, l) in p.iter().zip(&l) {
                        let (s, n) = (l.offset as usize, l.len as usize);
                        assert_eq!((&p.name, p.tensor.bytes()), (&l.name, &bytes[s..s + n]));
                    }
                }
                (_, Ok(None)) | (Err(_), Err(_)) => {}
                (w, l) => panic!("whole {:?}, located {:?}", w.map(|p| p.len()), l),
            }
            cases += 1;
        };
        for cut in 0..file.len() {
            check(&file[..cut]);
        }
        for at in 0..file.len() {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = file.clone();
                b[at] ^= x;
                check(&b);
            }
        }
        assert!(cases > 1000, "{cases}");
    }
}
