//! Where a tensor's bytes are when they are not one little-endian range of
//! the file ([`Layout`]): the datasets of an NNabla `.h5` (or of an
//! `.nnp`'s stored `parameter.h5`) that are big-endian, compact (in the
//! object header) or chunked (with no filter, or shuffle, deflate,
//! fletcher32, LZF),
//! as `nnp_archive::h5::locate` finds them.
//!
//! A chunked dataset is read a chunk at a time: a flat (row-major) range of
//! elements is split into the runs it makes in each chunk it touches; each
//! such chunk is read (its stored bytes) and decoded (its filters undone,
//! `nnp_archive::h5::Chunks::decode`, as the whole-file path decodes it),
//! and the runs copied out. Decoded chunks are kept for the next read, so
//! that reading a tensor front to back in slices decodes each chunk once.
//! The cache is one per HDF5 file ([`ChunkCache`], shared by all its
//! datasets, oldest chunk evicted first): a dataset's budget is one band of
//! its chunks along the first axis (every chunk whose rows start at the
//! same row: a front-to-back read goes through all of them before the next
//! band), at most 32 MiB, and at least one chunk; reading a chunk of a
//! dataset evicts down to that dataset's budget. Memory, for the whole
//! file however many datasets are read: at most the largest budget,
//! `max(one chunk, min(one band, 32 MiB))` of decoded chunks, plus, while
//! a read runs, one more decoded chunk (the one being copied from, if the
//! cache dropped it), and one chunk's stored bytes while it is decoded;
//! one decoded chunk is bounded by [`tensor_core::Limits::max_alloc`] when
//! located. (A band over 32 MiB is read front to back by decoding its
//! chunks again for each slice that crosses them: correct, slower.)
//!
//! The first decoding of each chunk is charged to the file's
//! [`tensor_core::InflateBudget`] (held by the cache, one per input:
//! `InflateBudget::new(&limits, input_len)`), before it is inflated;
//! decoding a chunk again (evicted, read again) is work the reads ask
//! for, not the file, and is not charged again.

#[cfg(feature = "nnp")]
pub(crate) use imp::{ChunkCache, H5Data};

use super::layout::Layout;

#[cfg(feature = "nnp")]
mod imp {
    use std::collections::{HashMap, HashSet, VecDeque};
    use std::sync::{Arc, Mutex};

    use nnp_archive::h5::{Chunks, Located, Storage};

    use super::super::ReadAt;
    use super::Layout;
    use crate::{Error, Result};

    /// [`Error::Malformed`] in an HDF5 dataset's data: `why`.
    fn malformed(why: impl Into<String>) -> Error {
        Error::Malformed {
            part: "HDF5 dataset",
            at: None,
            why: why.into(),
        }
    }

    /// The most decoded chunks the cache keeps, in bytes (see the module).
    const BAND_CAP: u64 = 32 << 20;

    /// A dataset's bytes that are not one little-endian range.
    #[derive(Debug)]
    pub(crate) struct H5Data {
        /// Big-endian elements: each swapped when read.
        swap: bool,
        stored: Stored,
    }

    #[derive(Debug)]
    enum Stored {
        /// At the tensor's offset (big-endian).
        Contiguous,
        /// The bytes, from the object header.
        Compact(Vec<u8>),
        /// The chunks, with the dataset's dims and the decoded ones kept.
        Chunked {
            /// The dataset's name.
            name: String,
            chunks: Chunks,
            dims: Vec<u64>,
            cache: ChunkCache,
            /// This dataset's key in the cache.
            id: usize,
            budget: u64,
        },
    }

    /// The decoded chunks of one HDF5 file's datasets (see the module):
    /// cloned, the same cache.
    #[derive(Debug, Clone)]
    pub(crate) struct ChunkCache(Arc<Mutex<Cache>>);

    impl ChunkCache {
        /// The cache of an input of `input_len` bytes (the `.h5`, or the
        /// `.nnp` holding it), its chunks charged to one budget.
        pub(crate) fn new(limits: &tensor_core::Limits, input_len: u64) -> Self {
            ChunkCache(Arc::new(Mutex::new(Cache {
                map: HashMap::new(),
                order: VecDeque::new(),
                bytes: 0,
                next_id: 0,
                charged: HashSet::new(),
                budget: tensor_core::InflateBudget::new(limits, input_len),
            })))
        }

        fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }

        /// The bytes of decoded chunks it holds.
        pub(crate) fn bytes(&self) -> u64 {
            self.lock().bytes
        }

        /// Whether `other` is this cache.
        pub(crate) fn same(&self, other: &ChunkCache) -> bool {
            Arc::ptr_eq(&self.0, &other.0)
        }
    }

    /// Decoded chunks, by (dataset, number in its grid), oldest first.
    struct Cache {
        map: HashMap<(usize, usize), Arc<Vec<u8>>>,
        order: VecDeque<(usize, usize)>,
        bytes: u64,
        /// The next dataset's key.
        next_id: usize,
        /// The chunks decoded once (charged to the budget).
        charged: HashSet<(usize, usize)>,
        budget: tensor_core::InflateBudget,
    }

    impl std::fmt::Debug for Cache {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Cache({} chunks, {} bytes)", self.map.len(), self.bytes)
        }
    }

    impl Layout {
        /// The layout of a located dataset whose addresses are `base` bytes
        /// into the file; its decoded chunks kept in `cache`, the file's.
        pub(crate) fn of(p: &mut Located, base: u64, cache: &ChunkCache) -> Result<Layout> {
            let too_far = || malformed("an HDF5 address overflows").in_tensor(&p.name);
            let stored = match std::mem::replace(&mut p.storage, Storage::Contiguous) {
                Storage::Contiguous if !p.big_endian => return Ok(Layout::Contiguous),
                Storage::Contiguous => Stored::Contiguous,
                Storage::Compact(v) => Stored::Compact(v),
                Storage::Chunked(mut chunks) => {
                    for c in &mut chunks.chunks {
                        c.address = c.address.checked_add(base).ok_or_else(too_far)?;
                    }
                    let dims: Vec<u64> = p.dims.iter().map(|&d| d as u64).collect();
                    // one band: the chunks of one grid index along the first axis
                    let first = match (dims.first(), chunks.chunk_dims.first()) {
                        (Some(&d), Some(&c)) if c > 0 => d.div_ceil(c).max(1),
                        _ => 1,
                    };
                    let one = chunks.chunk_bytes as u64;
                    let band = (chunks.chunks.len() as u64 / first).saturating_mul(one);
                    let id = {
                        let mut c = cache.lock();
                        c.next_id += 1;
                        c.next_id
                    };
                    Stored::Chunked {
                        name: p.name.clone(),
                        budget: one.max(band.min(BAND_CAP)),
                        chunks,
                        dims,
                        cache: cache.clone(),
                        id,
                    }
                }
            };
            Ok(Layout::H5(Arc::new(H5Data {
                swap: p.big_endian,
                stored,
            })))
        }
    }

    impl super::super::FileIndex {
        /// The bytes of decoded HDF5 chunks this index keeps for its next
        /// reads (a chunked `.h5` dataset, or one in an `.nnp`'s stored
        /// `parameter.h5`): at most the largest of its datasets' budgets,
        /// `max(one chunk, min(one band along the first axis, 32 MiB))`,
        /// however many datasets were read.
        pub(crate) fn cached_chunk_bytes(&self) -> u64 {
            let mut seen: Vec<&ChunkCache> = Vec::new();
            for t in &self.tensors {
                if let Layout::H5(h) = &t.layout
                    && let Stored::Chunked { cache, .. } = &h.stored
                    && !seen.iter().any(|c| c.same(cache))
                {
                    seen.push(cache);
                }
            }
            seen.iter().map(|c| c.bytes()).sum()
        }
    }

    impl H5Data {
        /// True for a chunked dataset (reading it decodes its chunks).
        pub(crate) fn is_chunked(&self) -> bool {
            matches!(self.stored, Stored::Chunked { .. })
        }

        /// Fills `out` with the elements (of `size` bytes) from flat element
        /// `start`, little-endian; `at` is where they are for a contiguous
        /// dataset.
        pub(crate) fn read<R: ReadAt + ?Sized>(
            &self,
            r: &R,
            at: u64,
            start: u64,
            size: usize,
            out: &mut [u8],
            limits: &tensor_core::Limits,
        ) -> Result<()> {
            match &self.stored {
                Stored::Contiguous => r.read_at(at, out)?,
                Stored::Compact(v) => {
                    let from = usize::try_from(start)
                        .ok()
                        .and_then(|s| s.checked_mul(size));
                    let src = from
                        .and_then(|f| v.get(f..f.checked_add(out.len())?))
                        .ok_or_else(|| malformed("compact data is short"))?;
                    out.copy_from_slice(src);
                }
                Stored::Chunked {
                    name,
                    chunks,
                    dims,
                    cache,
                    id,
                    budget,
                } => {
                    let at = Cached {
                        cache,
                        id: *id,
                        budget: *budget,
                        name,
                    };
                    read_chunked(r, chunks, dims, &at, start, size, out, limits)?
                }
            }
            if self.swap && size > 1 {
                for e in out.chunks_exact_mut(size) {
                    e.reverse();
                }
            }
            Ok(())
        }
    }

    /// A dataset's place in its file's cache.
    struct Cached<'a> {
        cache: &'a ChunkCache,
        id: usize,
        budget: u64,
        /// The dataset's name (for the inflation budget's refusal).
        name: &'a str,
    }

    /// Decoded chunk `n`, from the cache or read and decoded (and kept,
    /// older chunks of any dataset evicted down to this one's budget).
    fn chunk<R: ReadAt + ?Sized>(
        r: &R,
        chunks: &Chunks,
        at_cache: &Cached<'_>,
        n: usize,
        limits: &tensor_core::Limits,
    ) -> Result<Arc<Vec<u8>>> {
        let key = (at_cache.id, n);
        let budget = at_cache.budget;
        let mut c = at_cache.cache.lock();
        if let Some(v) = c.map.get(&key) {
            return Ok(Arc::clone(v));
        }
        let at = chunks
            .chunks
            .get(n)
            .ok_or_else(|| malformed(format!("no chunk {n}")))?;
        limits.check_alloc("HDF5 chunk", at.size)?;
        let len =
            usize::try_from(at.size).map_err(|_| Error::DoesNotFitInMemory { bytes: at.size })?;
        let mut stored = tensor_core::try_zeroed("HDF5 chunk", len)?;
        r.read_at(at.address, &mut stored)?;
        let decoded = if c.charged.contains(&key) {
            chunks.decode(at, &stored)?
        } else {
            let d = chunks.decode_within(at, &stored, &c.budget, at_cache.name)?;
            c.charged.insert(key);
            d
        };
        let decoded = Arc::new(decoded);
        drop(stored);
        c.bytes = c.bytes.saturating_add(decoded.len() as u64);
        c.map.insert(key, Arc::clone(&decoded));
        c.order.push_back(key);
        while c.bytes > budget && c.order.len() > 1 {
            if let Some(old) = c.order.pop_front()
                && let Some(v) = c.map.remove(&old)
            {
                c.bytes = c.bytes.saturating_sub(v.len() as u64);
            }
        }
        Ok(decoded)
    }

    /// The elements from flat `start` into `out`: run by run, each run the
    /// elements of one chunk along the last axis.
    #[allow(clippy::too_many_arguments)]
    fn read_chunked<R: ReadAt + ?Sized>(
        r: &R,
        chunks: &Chunks,
        dims: &[u64],
        cache: &Cached<'_>,
        start: u64,
        size: usize,
        out: &mut [u8],
        limits: &tensor_core::Limits,
    ) -> Result<()> {
        let rank = dims.len();
        let cd = &chunks.chunk_dims;
        if rank == 0 || cd.len() != rank || size == 0 || size != chunks.element_size {
            return Err(malformed("a chunked dataset's layout is broken"));
        }
        let count = (out.len() / size) as u64;
        if count == 0 {
            return Ok(());
        }
        let grid: Vec<u64> = dims.iter().zip(cd).map(|(&d, &c)| d.div_ceil(c)).collect();
        // the coordinates of `start`
        let mut coord = vec![0u64; rank];
        let mut rest = start;
        for k in (0..rank).rev() {
            coord[k] = rest % dims[k];
            rest /= dims[k];
        }
        let last = rank - 1;
        let mut held: Option<(usize, Arc<Vec<u8>>)> = None;
        let mut done = 0u64;
        while done < count {
            let mut n = 0u64;
            let mut within = 0u64;
            for k in 0..rank {
                n = n * grid[k] + coord[k] / cd[k];
                within = within * cd[k] + coord[k] % cd[k];
            }
            let run = (cd[last] - coord[last] % cd[last])
                .min(dims[last] - coord[last])
                .min(count - done);
            let n = n as usize;
            let data = match &held {
                Some((m, d)) if *m == n => Arc::clone(d),
                _ => {
                    let d = chunk(r, chunks, cache, n, limits)?;
                    held = Some((n, Arc::clone(&d)));
                    d
                }
            };
            // within a decoded chunk of `chunk_bytes` (checked when decoded)
            let (from, bytes, to) = (
                within as usize * size,
                run as usize * size,
                done as usize * size,
            );
            let src = data
                .get(from..from + bytes)
                .ok_or_else(|| malformed("a chunk is short"))?;
            out[to..to + bytes].copy_from_slice(src);
            done += run;
            coord[last] += run;
            let mut k = last;
            while k > 0 && coord[k] >= dims[k] {
                coord[k] = 0;
                coord[k - 1] += 1;
                k -= 1;
            }
        }
        Ok(())
    }
}
