//! The chunk index of a chunked dataset, for a file read by slices
//! ([`super::locate`]): each chunk's place in the dataset, file address,
//! stored size and filter mask, listed through `hdf5-pure`'s own walk of
//! the index (the walk its whole-dataset read does) without reading any
//! chunk's data; and [`Chunks::decode`], which undoes the filters of one
//! chunk as the whole-dataset read does.
//!
//! Located this way: datasets whose every chunk is allocated, each at its
//! place in the chunk grid, with no filter or with shuffle, deflate,
//! fletcher32 and LZF (what h5py writes for `compression="gzip"` or
//! `"lzf"`, `shuffle=True`, `fletcher32=True`). Any other filter
//! (scale-offset, n-bit, szip, ...), a chunk missing (read as
//! the fill value), or a chunk index `hdf5-pure` does not enumerate sends
//! the file to the whole-file path.

use hdf5_pure::Dataset;
use tensor_core::{InflateBudget, Limits};

use super::{Calls, RawData};
use crate::{Error, Result};

/// One filter of a chunked dataset's pipeline that [`Chunks::decode`] undoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkFilter {
    /// HDF5 filter 1: a zlib stream.
    Deflate,
    /// HDF5 filter 2: the bytes of the elements grouped by byte position.
    Shuffle,
    /// HDF5 filter 3: a Fletcher-32 checksum after the bytes.
    Fletcher32,
    /// Filter 32000 (h5py's `compression="lzf"`): an LZF stream.
    Lzf,
}

impl ChunkFilter {
    /// The most bytes this filter makes of `n` bytes when writing.
    fn grown(self, n: usize) -> usize {
        match self {
            ChunkFilter::Deflate => n.saturating_add(n / 16).saturating_add(64),
            ChunkFilter::Shuffle => n,
            ChunkFilter::Fletcher32 => n.saturating_add(4),
            ChunkFilter::Lzf => n.saturating_mul(2),
        }
    }
}

/// One stored chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkAt {
    /// Where its stored bytes start in the file.
    pub address: u64,
    /// How many bytes are stored (compressed, when filtered).
    pub size: u64,
    /// Bit `i` set: filter `i` of the pipeline was not applied to it.
    pub filter_mask: u32,
}

/// The chunks of a chunked dataset ([`super::Storage::Chunked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunks {
    /// The chunk's dimensions, one per dataset dimension (every chunk has
    /// them, one at an edge too: its elements past the dataset's edge are
    /// stored and ignored).
    pub chunk_dims: Vec<u64>,
    /// The filters, in the order they were applied when writing.
    pub filters: Vec<ChunkFilter>,
    /// Every chunk of the grid, in row-major order of the grid: the chunk
    /// holding element `[i0, i1, ...]` is number
    /// `(i0 / c0) * g1 * g2 ... + (i1 / c1) * g2 ... + ...`, where
    /// `gk = ceil(dk / ck)`.
    pub chunks: Vec<ChunkAt>,
    /// The element size in bytes.
    pub element_size: usize,
    /// A decoded chunk's size in bytes: the product of `chunk_dims` times
    /// `element_size` (checked against the limits when located).
    pub chunk_bytes: usize,
}

impl Chunks {
    /// The bytes of `chunk` (its `size` bytes `stored`, read from its
    /// `address`), its filters undone: exactly `chunk_bytes` bytes, or an
    /// error where the whole-dataset read gives one (a corrupt or truncated
    /// zlib stream, a stream decoding to another size).
    ///
    /// Nothing is charged to an inflation budget: a reader of a hostile
    /// file uses [`Chunks::decode_within`].
    pub fn decode(&self, chunk: &ChunkAt, stored: &[u8]) -> Result<Vec<u8>> {
        let bad = |message: String| Error::Hdf5 {
            context: format!("the chunk at byte {}", chunk.address),
            message,
        };
        let expected = self.chunk_bytes;
        let mut owned: Option<Vec<u8>> = None;
        for (i, f) in self.filters.iter().enumerate().rev() {
            if i < 32 && (chunk.filter_mask >> i) & 1 == 1 {
                continue;
            }
            let input: &[u8] = owned.as_deref().unwrap_or(stored);
            // the most the filters applied before this one can make of the
            // chunk: the most this one may decode to
            let mut cap = expected;
            for (j, g) in self.filters[..i].iter().enumerate() {
                if !(j < 32 && (chunk.filter_mask >> j) & 1 == 1) {
                    cap = g.grown(cap);
                }
            }
            let next = match f {
                ChunkFilter::Shuffle => unshuffle(input, self.element_size).map_err(bad)?,
                ChunkFilter::Deflate => inflate(input, cap).map_err(bad)?,
                ChunkFilter::Fletcher32 => checked(input).map_err(bad)?,
                ChunkFilter::Lzf => unlzf(input, cap).map_err(bad)?,
            };
            owned = Some(next);
        }
        let out = match owned {
            Some(v) => v,
            None => copy(stored).map_err(bad)?,
        };
        if out.len() != expected {
            return Err(bad(format!(
                "decodes to {} bytes, a chunk has {expected}",
                out.len()
            )));
        }
        Ok(out)
    }
}

impl Chunks {
    /// [`Chunks::decode`], a chunk that is inflated (deflate or LZF
    /// applied to it) first charged to `budget` at its decoded size,
    /// [`Chunks::chunk_bytes`], for dataset `what`: refused with
    /// `tensor_core::Error::InflateLimit` past the budget, before anything
    /// is inflated. Charge each chunk once per input: a reader decoding a
    /// chunk again (evicted from a cache) may call [`Chunks::decode`].
    pub fn decode_within(
        &self,
        chunk: &ChunkAt,
        stored: &[u8],
        budget: &InflateBudget,
        what: &str,
    ) -> Result<Vec<u8>> {
        let inflated = self.filters.iter().enumerate().any(|(i, f)| {
            matches!(f, ChunkFilter::Deflate | ChunkFilter::Lzf)
                && !(i < 32 && (chunk.filter_mask >> i) & 1 == 1)
        });
        if inflated {
            budget.charge(
                &format!(
                    "HDF5 dataset {what:?} (the chunk at byte {})",
                    chunk.address
                ),
                self.chunk_bytes as u64,
            )?;
        }
        self.decode(chunk, stored)
    }
}

/// A copy of `bytes`, or why it cannot be made.
fn copy(bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut v =
        tensor_core::try_with_capacity("an HDF5 chunk", bytes.len()).map_err(|e| e.to_string())?;
    v.extend_from_slice(bytes);
    Ok(v)
}

/// A zlib stream's bytes, at most `cap` of them.
fn inflate(data: &[u8], cap: usize) -> std::result::Result<Vec<u8>, String> {
    use flate2::{Decompress, FlushDecompress, Status};
    let mut d = Decompress::new(true);
    // room for one byte past the cap, so a longer stream is seen
    let room = cap.saturating_add(1);
    let mut out = Vec::new();
    out.try_reserve_exact(room.min(data.len().saturating_mul(1032).saturating_add(64)))
        .map_err(|_| format!("{room} bytes do not fit in memory"))?;
    loop {
        let consumed = usize::try_from(d.total_in()).unwrap_or(usize::MAX);
        let input = data.get(consumed..).unwrap_or(&[]);
        let (before_in, before_out) = (d.total_in(), out.len());
        let status = d
            .decompress_vec(input, &mut out, FlushDecompress::None)
            .map_err(|e| format!("deflate: {e}"))?;
        if status == Status::StreamEnd {
            break;
        }
        if out.len() == out.capacity() {
            if out.len() >= room {
                return Err(format!(
                    "deflate: the stream decodes to more than the chunk's {cap} bytes"
                ));
            }
            let more = out.capacity().max(64 << 10).min(room - out.len());
            out.try_reserve_exact(more)
                .map_err(|_| format!("{room} bytes do not fit in memory"))?;
        } else if d.total_in() == before_in && out.len() == before_out {
            return Err("deflate: the stream ended before the chunk was complete".into());
        }
    }
    if out.len() > cap {
        return Err(format!(
            "deflate: the stream decodes to more than the chunk's {cap} bytes"
        ));
    }
    Ok(out)
}

/// The bytes before a Fletcher-32 checksum (HDF5's: over 16-bit words,
/// the first byte the high one, an odd last byte padded with zero; stored
/// little-endian after the bytes), checked.
fn checked(data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let Some(split) = data.len().checked_sub(4) else {
        return Err("fletcher32: data too short for checksum".into());
    };
    let (bytes, sum) = data.split_at(split);
    let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
    let fold = |x: u32| (x & 0xffff) + (x >> 16);
    let (mut a, mut b) = (0u32, 0u32);
    // the whole words, at most 360 between folds (so that the sums stay
    // in 32 bits), then an odd last byte as a word's high byte
    let (words, odd) = bytes.split_at(bytes.len() & !1);
    for block in words.chunks(720) {
        for w in block.chunks_exact(2) {
            a = a.wrapping_add((u32::from(w[0]) << 8) | u32::from(w[1]));
            b = b.wrapping_add(a);
        }
        a = fold(a);
        b = fold(b);
    }
    if let Some(&last) = odd.first() {
        a = a.wrapping_add(u32::from(last) << 8);
        b = b.wrapping_add(a);
        a = fold(a);
        b = fold(b);
    }
    let computed = (fold(b) << 16) | fold(a);
    if computed != stored {
        return Err(format!(
            "fletcher32: checksum {computed:#010x}, the chunk stores {stored:#010x}"
        ));
    }
    copy(bytes)
}

/// The bytes of an LZF stream (runs of literals, and back references of
/// 3 or more bytes within the last 8 KiB), at most `cap` of them.
fn unlzf(data: &[u8], cap: usize) -> std::result::Result<Vec<u8>, String> {
    let bad = |what: &str| format!("lzf: {what}");
    let mut out: Vec<u8> = Vec::new();
    out.try_reserve_exact(cap.min(data.len().saturating_mul(2)))
        .map_err(|_| format!("{cap} bytes do not fit in memory"))?;
    let mut at = 0;
    let next = |at: &mut usize| -> std::result::Result<usize, String> {
        let b = data
            .get(*at)
            .ok_or_else(|| bad("the stream is truncated"))?;
        *at += 1;
        Ok(usize::from(*b))
    };
    while at < data.len() {
        let ctrl = next(&mut at)?;
        if ctrl < 32 {
            let n = ctrl + 1;
            let run = data
                .get(at..at + n)
                .ok_or_else(|| bad("the stream is truncated"))?;
            if out.len() + n > cap {
                return Err(bad("the stream decodes to more than the chunk"));
            }
            out.extend_from_slice(run);
            at += n;
            continue;
        }
        let mut n = ctrl >> 5;
        if n == 7 {
            n += next(&mut at)?;
        }
        n += 2;
        let back = (((ctrl & 0x1f) << 8) | next(&mut at)?) + 1;
        let from = out
            .len()
            .checked_sub(back)
            .ok_or_else(|| bad("a reference before the start"))?;
        if out.len() + n > cap {
            return Err(bad("the stream decodes to more than the chunk"));
        }
        for k in from..from + n {
            let b = out[k];
            out.push(b);
        }
    }
    Ok(out)
}

/// Shuffled bytes (all first bytes of the elements, then all second
/// bytes, ...) back in element order.
fn unshuffle(data: &[u8], size: usize) -> std::result::Result<Vec<u8>, String> {
    if size <= 1 {
        return copy(data);
    }
    if !data.len().is_multiple_of(size) {
        return Err("shuffle: data length not a multiple of element size".into());
    }
    let n = data.len() / size;
    let mut out =
        tensor_core::try_zeroed("an HDF5 chunk", data.len()).map_err(|e| e.to_string())?;
    for (j, plane) in data.chunks_exact(n.max(1)).enumerate().take(size) {
        for (i, &b) in plane.iter().enumerate() {
            out[i * size + j] = b;
        }
    }
    Ok(out)
}

/// The chunks of the chunked dataset `ds` at `path` (of `dims`, elements of
/// `element_size` bytes, chunks of `chunk_shape`), listed without reading
/// their data; [`RawData::Elsewhere`] (read the file whole) for one this
/// path does not read (see the module).
#[allow(clippy::too_many_arguments)]
pub(super) fn index<C: Calls>(
    path: &str,
    ds: &Dataset,
    dims: &[usize],
    element_size: usize,
    chunk_shape: &[u64],
    data_len: u64,
    limits: &Limits,
    calls: &C,
) -> Result<RawData> {
    let rank = dims.len();
    if rank == 0 || chunk_shape.len() != rank || chunk_shape.contains(&0) {
        return Ok(RawData::Elsewhere);
    }
    // the grid, and a chunk's size
    let mut grid = Vec::with_capacity(rank);
    for (&d, &c) in dims.iter().zip(chunk_shape) {
        grid.push((d as u64).div_ceil(c));
    }
    let count = grid.iter().try_fold(1u64, |n, &g| n.checked_mul(g));
    let bytes = chunk_shape
        .iter()
        .try_fold(element_size as u64, |n, &c| n.checked_mul(c));
    let (Some(count), Some(bytes)) = (count, bytes) else {
        return Ok(RawData::Elsewhere);
    };
    // the list `hdf5-pure` makes (a record and its offsets per chunk) and
    // one decoded chunk must fit the limits; else the whole path decides
    let record = 96 + 8 * rank as u64;
    let (Ok(chunk_bytes), Some(list)) = (usize::try_from(bytes), count.checked_mul(record)) else {
        return Ok(RawData::Elsewhere);
    };
    if bytes > limits.max_alloc || list > limits.max_alloc {
        return Ok(RawData::Elsewhere);
    }
    // the whole-dataset read starts from the fill value, and fails on one
    // it cannot parse (even with every chunk allocated): so does this one,
    // by reading it whole
    if calls.call(|| ds.fill_value::<f64>())?.is_err() {
        return Ok(RawData::Elsewhere);
    }
    let mut filters = Vec::new();
    for f in calls.call(|| ds.filter_pipeline())? {
        filters.push(match f.id {
            1 => ChunkFilter::Deflate,
            2 => ChunkFilter::Shuffle,
            3 => ChunkFilter::Fletcher32,
            32000 => ChunkFilter::Lzf,
            _ => return Ok(RawData::Elsewhere),
        });
    }
    // the walk of the index reads a bounded number of bytes: a valid index
    // of `count` chunks needs fewer (each node read once); a cycle or a
    // node reached twice runs out of it
    let key = 8 + 8 * (rank as u64 + 1) + 8;
    let budget = count
        .saturating_mul(2)
        .saturating_add(130)
        .saturating_mul(64 + 2 * key)
        .saturating_add(4 << 20);
    let listed = calls.call_within(budget, || ds.chunks());
    let listed = match listed {
        Ok(Ok(l)) => l,
        // an index `hdf5-pure` does not enumerate, or a broken one: the
        // whole path says what it says
        Ok(Err(_)) => return Ok(RawData::Elsewhere),
        Err(Error::Hdf5 { message, .. }) if message == super::locate::OVER_BUDGET => {
            return Err(Error::Hdf5 {
                context: path.to_string(),
                message: format!("its chunk index is read in more than {budget} bytes (a cycle?)"),
            });
        }
        Err(e) => return Err(e),
    };
    if listed.len() as u64 != count {
        return Ok(RawData::Elsewhere);
    }
    let empty = ChunkAt {
        address: u64::MAX,
        size: 0,
        filter_mask: 0,
    };
    let n = usize::try_from(count).map_err(|_| Error::BadData {
        dataset: path.to_string(),
        reason: format!("{count} chunks"),
    })?;
    let mut chunks = tensor_core::try_with_capacity("an HDF5 chunk index", n)?;
    chunks.resize(n, empty);
    let unfiltered = |mask: u32| {
        filters
            .iter()
            .enumerate()
            .all(|(i, _)| i < 32 && (mask >> i) & 1 == 1)
    };
    for c in listed {
        if c.offset.len() != rank {
            return Ok(RawData::Elsewhere);
        }
        let mut slot = 0u64;
        for ((&o, &cd), &g) in c.offset.iter().zip(chunk_shape).zip(&grid) {
            if o % cd != 0 || o / cd >= g {
                return Ok(RawData::Elsewhere);
            }
            slot = slot * g + o / cd;
        }
        let at = &mut chunks[slot as usize];
        if at.address != u64::MAX {
            return Ok(RawData::Elsewhere); // listed twice
        }
        if unfiltered(c.filter_mask) && c.storage_size != bytes {
            return Ok(RawData::Elsewhere);
        }
        if c.address == u64::MAX
            || c.address
                .checked_add(c.storage_size)
                .is_none_or(|e| e > data_len)
        {
            return Err(Error::BadData {
                dataset: path.to_string(),
                reason: format!(
                    "a chunk at offset {} ({} bytes) runs past the end of the {data_len}-byte file",
                    c.address, c.storage_size
                ),
            });
        }
        *at = ChunkAt {
            address: c.address,
            size: c.storage_size,
            filter_mask: c.filter_mask,
        };
    }
    Ok(RawData::Chunks(Chunks {
        chunk_dims: chunk_shape.to_vec(),
        filters,
        chunks,
        element_size,
        chunk_bytes,
    }))
}

/// Refuses a chunked dataset (at `path`, of `dims`, chunks of
/// `chunk_shape`) whose index places a chunk outside the dataset, before
/// `hdf5-pure` reads it whole: its scatter of a chunk adds the chunk's
/// offset to positions inside it, and an offset near `u64::MAX` (only a
/// hostile file has one) overflows there. An index it cannot list is left
/// to the whole read, which walks the same index and says why.
pub(super) fn check_places<C: Calls>(
    path: &str,
    ds: &Dataset,
    dims: &[usize],
    chunk_shape: &[u64],
    calls: &C,
) -> Result<()> {
    let Ok(listed) = calls.call(|| ds.chunks())? else {
        return Ok(());
    };
    for c in listed {
        let outside = c
            .offset
            .iter()
            .zip(dims)
            .zip(chunk_shape)
            .any(|((&o, &d), &cd)| {
                o >= d as u64
                    || o.checked_add(cd)
                        .is_none_or(|e| usize::try_from(e).is_err())
            });
        if outside {
            return Err(Error::BadData {
                dataset: path.to_string(),
                reason: format!(
                    "its chunk index places a chunk at {:?}, outside the dataset's {dims:?}",
                    c.offset
                ),
            });
        }
    }
    Ok(())
}
