//! Tensors whose bytes are not plainly in the file ([`Coding`]): in a
//! deflated zip member (an `.npz` member written by
//! `numpy.savez_compressed`, an `.nnp`'s deflated `.protobuf` member), or
//! big-endian (`.npz` members of `>f4`, `>i8`, ...: swapped to the
//! little-endian bytes the whole-file path gives, as they are read).
//!
//! A deflated member is read by inflating it from its start. A forward
//! cursor (the inflater's state and how many bytes it has produced) is kept
//! between reads, so reading a member front to back a slice at a time
//! inflates it once; a read behind the cursor starts again from the
//! member's start. One index keeps the cursors of the last [`CURSORS`]
//! members read: memory is bounded by [`CURSORS`] times (the inflater's
//! state and 32 KiB window, [`IN_BUF`] (1 MiB) of compressed input,
//! [`SKIP_BUF`] (64 KiB) to inflate skipped bytes into), under 5 MiB,
//! whatever the member's size.
//!
//! When a pass reaches a member's end, the member is checked as the
//! whole-file path's zip reader (`nnp-archive`) checks it: the stream holds
//! no more bytes than the archive declares, and their CRC-32 is the one it
//! states. The declared sizes were checked when the archive was listed
//! (against the file, deflate's best ratio and [`tensor_core::Limits`],
//! and their total against the file's inflation budget).
//!
//! **Inflation budget.** One [`tensor_core::InflateBudget`] per file (the
//! index's [`Pool`] holds it; the listing checked the deflated members'
//! declared sizes against it) is charged as members are inflated, with
//! this rule: a member is charged for the bytes of its inflated stream up
//! to the furthest point any read has asked for, before they are inflated,
//! and never again for bytes before that point. Reading a member again
//! (statistics after a conversion, a read behind the cursor starting over
//! from the member's start, the check of its end) costs time, as any read
//! does, but no budget: what the budget bounds is how far into its members
//! a file can make us inflate, at most their declared sizes (each read
//! stops at the declared end), so at most what the whole-file path inflates
//! and charges. Work stays proportional to what the caller reads.

use std::sync::Arc;

use super::ReadAt;
use crate::{Error, Result};

/// How a tensor's bytes are coded in the file (`Layout::Coded`).
#[derive(Debug, Clone)]
pub(crate) enum Coding {
    /// At the tensor's offset, each `lane` bytes reversed (big-endian).
    #[cfg_attr(not(feature = "npz"), allow(dead_code))]
    Swapped { lane: usize },
    /// In the inflated bytes of `member`, from `at`; each `lane` bytes
    /// reversed when `lane` > 1.
    #[cfg(any(feature = "npz", feature = "nnp"))]
    Deflated {
        member: Arc<Member>,
        at: u64,
        lane: usize,
    },
}

impl Coding {
    /// Fills `buf` with the tensor's bytes from `rel` (its offset in the
    /// file is `offset`).
    pub(crate) fn read<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        offset: u64,
        rel: u64,
        buf: &mut [u8],
    ) -> Result<()> {
        let overflows = || Error::Malformed {
            part: "tensor offset",
            at: Some(offset),
            why: "the tensor's offset overflows".into(),
        };
        let at = || offset.checked_add(rel).ok_or_else(overflows);
        match self {
            Coding::Swapped { lane } => {
                r.read_at(at()?, buf)?;
                swap(buf, *lane);
            }
            #[cfg(any(feature = "npz", feature = "nnp"))]
            Coding::Deflated { member, at, lane } => {
                let from = at.checked_add(rel).ok_or_else(overflows)?;
                member.read(r, from, buf)?;
                swap(buf, *lane);
            }
        }
        Ok(())
    }

    /// True for a tensor in a deflated member.
    pub(crate) fn is_deflated(&self) -> bool {
        !matches!(self, Coding::Swapped { .. })
    }
}

/// Reverses each `lane` bytes of `buf` (nothing when `lane` < 2).
fn swap(buf: &mut [u8], lane: usize) {
    if lane > 1 {
        for c in buf.chunks_exact_mut(lane) {
            c.reverse();
        }
    }
}

/// The lane to reverse for big-endian data of `dtype`: its size, half of
/// it for a complex type (two floats).
#[cfg(feature = "npz")]
pub(crate) fn lane_of(dtype: tensor_core::DType) -> usize {
    use tensor_core::DType;
    match dtype {
        DType::C64 | DType::C128 => dtype.size() / 2,
        _ => dtype.size(),
    }
}

#[cfg(any(feature = "npz", feature = "nnp"))]
pub(crate) use inflate::{Member, Pool, verify};
#[cfg(feature = "nnp")]
pub(crate) use inflate::{walk_inflated, walk_inflated_head};

#[cfg(any(feature = "npz", feature = "nnp"))]
mod inflate {
    use std::cell::RefCell;
    use std::sync::{Arc, Mutex, PoisonError};

    use flate2::{Crc, Decompress, FlushDecompress, Status};
    use nnp_archive::MemberInfo;
    use tensor_core::InflateBudget;

    use super::super::ReadAt;
    use crate::{Error, Result};

    /// The cursors one index keeps (the last members read).
    pub(crate) const CURSORS: usize = 4;
    /// Compressed bytes read at a time (the first read of a pass: 4 KiB,
    /// enough for an `.npy` header). 1 MiB: each read may be a call out of
    /// the module (the viewer's `FileReaderSync`), whose cost per call
    /// dominated at 64 KiB; inflating itself goes as fast with 64 KiB
    /// (measured natively: within 5% of inflating a member in one call).
    pub(crate) const IN_BUF: usize = 1 << 20;
    const FIRST_IN: usize = 4 << 10;
    /// Inflated bytes skipped at a time.
    pub(crate) const SKIP_BUF: usize = 64 << 10;
    /// Inflated bytes a walk over a member keeps behind its position.
    const HISTORY: usize = 64 << 10;

    /// The cursors of one index's deflated members, the most recent first,
    /// and the file's inflation budget (see the module).
    pub(crate) struct Pool {
        cursors: Mutex<Vec<(u64, Box<Inflate>)>>,
        budget: InflateBudget,
        /// What the whole-file path refuses the archive for (its deflated
        /// members declare more than the budget), given to every read of
        /// a member's data once the listing is done
        /// ([`Pool::refuse_reads`]): `(what, total, limit, input)`.
        refusal: Mutex<Option<(String, u64, u64, u64)>>,
    }

    impl std::fmt::Debug for Pool {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let n = self.cursors.lock().map_or(0, |c| c.len()).min(CURSORS);
            f.debug_struct("Pool").field("cursors", &n).finish()
        }
    }

    impl Pool {
        /// No cursors yet; inflation charged to `budget`.
        pub(crate) fn new(budget: InflateBudget) -> Self {
            Pool {
                cursors: Mutex::new(Vec::new()),
                budget,
                refusal: Mutex::new(None),
            }
        }

        /// From now on, every read of a member's bytes fails with `e`
        /// (`nnp_archive::archive::over_declared_budget`'s answer): the
        /// listing read the headers, the data is refused as the whole-file
        /// path refuses the archive.
        pub(crate) fn refuse_reads(&self, e: Option<nnp_archive::Error>) {
            if let Some(nnp_archive::Error::Tensor(tensor_core::Error::InflateLimit {
                what,
                total,
                limit,
                input,
            })) = e
            {
                *self.refusal.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some((what, total, limit, input));
            }
        }

        /// The cursor of the member at `key`, if kept.
        fn take(&self, key: u64) -> Option<Box<Inflate>> {
            let mut c = self.cursors.lock().unwrap_or_else(PoisonError::into_inner);
            let i = c.iter().position(|(k, _)| *k == key)?;
            Some(c.remove(i).1)
        }

        fn put(&self, key: u64, inf: Box<Inflate>) {
            let mut c = self.cursors.lock().unwrap_or_else(PoisonError::into_inner);
            c.insert(0, (key, inf));
            c.truncate(CURSORS);
        }
    }

    /// A deflated zip member: where its compressed bytes are, what they
    /// inflate to, and its index's cursors.
    pub(crate) struct Member {
        name: String,
        data_start: u64,
        compressed_size: u64,
        size: u64,
        crc32: u32,
        /// The whole-file path's error for a member error.
        wrap: fn(nnp_archive::Error) -> Error,
        pool: Arc<Pool>,
        /// How far into its inflated bytes reads have been charged.
        charged: Mutex<u64>,
        /// Its end and CRC-32 not checked yet (a member whose structure
        /// was walked up to its last header only): the first read checks
        /// them, so a damaged member fails at its first read.
        unchecked: std::sync::atomic::AtomicBool,
    }

    impl std::fmt::Debug for Member {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Member")
                .field("name", &self.name)
                .field("data_start", &self.data_start)
                .field("compressed_size", &self.compressed_size)
                .field("size", &self.size)
                .field("crc32", &self.crc32)
                .finish_non_exhaustive()
        }
    }

    impl Member {
        /// The member `m` of a listed archive (its sizes checked by the
        /// listing), its errors given as `wrap` gives them.
        pub(crate) fn new(
            m: &MemberInfo,
            wrap: fn(nnp_archive::Error) -> Error,
            pool: &Arc<Pool>,
        ) -> Self {
            Member {
                name: m.name.clone(),
                data_start: m.data_start,
                compressed_size: m.compressed_size,
                size: m.size,
                crc32: m.crc32,
                wrap,
                pool: Arc::clone(pool),
                charged: Mutex::new(0),
                unchecked: std::sync::atomic::AtomicBool::new(false),
            }
        }

        /// Charges the file's budget for its inflated bytes up to `end`
        /// (capped at its declared size) not charged before (see the
        /// module).
        fn reach(&self, end: u64) -> Result<()> {
            let end = end.min(self.size);
            let mut charged = self.charged.lock().unwrap_or_else(PoisonError::into_inner);
            if end > *charged {
                let what = format!("zip member {:?}", self.name);
                self.pool.budget.charge(&what, end - *charged)?;
                *charged = end;
            }
            Ok(())
        }

        /// Its inflated size, as the archive declares it.
        pub(crate) fn size(&self) -> u64 {
            self.size
        }

        fn err(&self, reason: impl Into<String>) -> Error {
            (self.wrap)(nnp_archive::Error::Member {
                member: self.name.clone(),
                reason: reason.into(),
            })
        }

        /// Fills `dst` with its inflated bytes from `at`, with the kept
        /// cursor when it is at or before `at` (from its start otherwise).
        pub(crate) fn read<R: ReadAt + ?Sized>(
            &self,
            r: &R,
            at: u64,
            dst: &mut [u8],
        ) -> Result<()> {
            if dst.is_empty() {
                return Ok(());
            }
            let refusal = self
                .pool
                .refusal
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Some((what, total, limit, input)) = refusal {
                return Err((self.wrap)(nnp_archive::Error::Tensor(
                    tensor_core::Error::InflateLimit {
                        what,
                        total,
                        limit,
                        input,
                    },
                )));
            }
            if self.unchecked.load(std::sync::atomic::Ordering::Relaxed) {
                // the whole member once (bounded buffers), as the
                // whole-file path checks it; a damaged member fails here
                // at every read
                verify(r, self)?;
                self.unchecked
                    .store(false, std::sync::atomic::Ordering::Relaxed);
            }
            at.checked_add(dst.len() as u64)
                .filter(|&e| e <= self.size)
                .ok_or_else(|| {
                    self.err(format!(
                        "{} bytes from {at} asked for, it has {}",
                        dst.len(),
                        self.size
                    ))
                })?;
            let mut inf = match self.pool.take(self.data_start) {
                Some(i) if i.out <= at => i,
                _ => Box::new(Inflate::new()),
            };
            inf.skip(r, self, at - inf.out)?;
            inf.fill(r, self, dst)?;
            if inf.out == self.size {
                inf.finish(r, self)?;
            }
            self.pool.put(self.data_start, inf);
            Ok(())
        }

        /// `len` of its inflated bytes from `at`, in a new buffer (`len`
        /// bounded by the caller).
        #[cfg(feature = "npz")]
        pub(crate) fn read_vec<R: ReadAt + ?Sized>(
            &self,
            r: &R,
            at: u64,
            len: u64,
        ) -> Result<Vec<u8>> {
            let n = usize::try_from(len).map_err(|_| self.err(format!("{len} bytes")))?;
            let mut v = tensor_core::try_zeroed(&format!("zip member {:?}", self.name), n)?;
            self.read(r, at, &mut v)?;
            Ok(v)
        }
    }

    /// Inflates all of `m` (bounded buffers) and checks its size and CRC-32,
    /// as the whole-file path does for every member it inflates.
    pub(crate) fn verify<R: ReadAt + ?Sized>(r: &R, m: &Member) -> Result<()> {
        let mut inf = Inflate::new();
        inf.skip(r, m, m.size)?;
        inf.finish(r, m)
    }

    /// A pass over a member: the inflater, its position and the CRC-32 of
    /// what it has produced.
    struct Inflate {
        z: Decompress,
        /// Compressed bytes read, and how many of them were consumed.
        input: Vec<u8>,
        used: usize,
        /// Compressed bytes read so far.
        read: u64,
        /// Inflated bytes produced so far.
        out: u64,
        crc: Crc,
        ended: bool,
        scratch: Vec<u8>,
    }

    impl Inflate {
        fn new() -> Self {
            Inflate {
                z: Decompress::new(false),
                input: Vec::new(),
                used: 0,
                read: 0,
                out: 0,
                crc: Crc::new(),
                ended: false,
                scratch: Vec::new(),
            }
        }

        /// Inflates into `dst` (not empty): how many bytes; 0 at the end of
        /// the stream (an error when its compressed bytes end first).
        fn step<R: ReadAt + ?Sized>(&mut self, r: &R, m: &Member, dst: &mut [u8]) -> Result<usize> {
            loop {
                if self.ended {
                    return Ok(0);
                }
                if self.used == self.input.len() && self.read < m.compressed_size {
                    let want = if self.read == 0 { FIRST_IN } else { IN_BUF };
                    let n = (m.compressed_size - self.read).min(want as u64) as usize;
                    let at = m
                        .data_start
                        .checked_add(self.read)
                        .ok_or_else(|| m.err("its data's offset overflows"))?;
                    self.input.resize(n, 0);
                    r.read_at(at, &mut self.input)?;
                    self.read += n as u64;
                    self.used = 0;
                }
                let eof = self.used == self.input.len();
                let flush = if eof {
                    FlushDecompress::Finish
                } else {
                    FlushDecompress::None
                };
                let (in0, out0) = (self.z.total_in(), self.z.total_out());
                let status = self
                    .z
                    .decompress(&self.input[self.used..], dst, flush)
                    .map_err(|_| m.err("reading failed: corrupt deflate stream"))?;
                let consumed = (self.z.total_in() - in0) as usize;
                let produced = (self.z.total_out() - out0) as usize;
                self.used += consumed;
                self.crc.update(&dst[..produced]);
                self.out += produced as u64;
                if status == Status::StreamEnd {
                    self.ended = true;
                }
                if produced > 0 || self.ended {
                    return Ok(produced);
                }
                if eof {
                    // as the whole-file path's reader (flate2) says it
                    return Err(m.err("reading failed: incomplete deflate stream"));
                }
                if consumed == 0 {
                    return Err(m.err("reading failed: corrupt deflate stream"));
                }
            }
        }

        /// Fills `dst` with the next inflated bytes (charged first).
        fn fill<R: ReadAt + ?Sized>(&mut self, r: &R, m: &Member, dst: &mut [u8]) -> Result<()> {
            m.reach(self.out.saturating_add(dst.len() as u64))?;
            let mut done = 0;
            while done < dst.len() {
                let n = self.step(r, m, &mut dst[done..])?;
                if n == 0 {
                    return Err(m.err(format!("declares {} bytes but holds {}", m.size, self.out)));
                }
                done += n;
            }
            Ok(())
        }

        /// Inflates the next `n` bytes, [`SKIP_BUF`] at a time, each piece
        /// given to `each`.
        fn through<R: ReadAt + ?Sized>(
            &mut self,
            r: &R,
            m: &Member,
            mut n: u64,
            mut each: impl FnMut(&[u8]),
        ) -> Result<()> {
            let mut scratch = std::mem::take(&mut self.scratch);
            let res = (|| {
                while n > 0 {
                    let k = n.min(SKIP_BUF as u64) as usize;
                    scratch.resize(k, 0);
                    self.fill(r, m, &mut scratch[..k])?;
                    each(&scratch[..k]);
                    n -= k as u64;
                }
                Ok(())
            })();
            self.scratch = scratch;
            res
        }

        fn skip<R: ReadAt + ?Sized>(&mut self, r: &R, m: &Member, n: u64) -> Result<()> {
            self.through(r, m, n, |_| {})
        }

        /// At the declared end: no byte more, and the CRC-32 the archive
        /// states.
        fn finish<R: ReadAt + ?Sized>(&mut self, r: &R, m: &Member) -> Result<()> {
            let mut probe = [0u8; 1];
            if self.step(r, m, &mut probe)? != 0 {
                return Err(m.err(format!(
                    "declares {} bytes but holds {} or more",
                    m.size,
                    m.size.saturating_add(1)
                )));
            }
            if self.crc.sum() != m.crc32 {
                return Err(m.err("reading failed: Invalid checksum"));
            }
            Ok(())
        }
    }

    /// A member's inflated bytes as a [`ReadAt`], for a walk that reads
    /// them (nearly) front to back: the last [`HISTORY`] bytes inflated are
    /// kept, a read further back starts again from the member's start.
    #[cfg(feature = "nnp")]
    pub(crate) struct Inflated<'a, R: ?Sized> {
        r: &'a R,
        m: &'a Member,
        state: RefCell<(Inflate, Vec<u8>)>,
        failed: RefCell<Option<Error>>,
    }

    #[cfg(feature = "nnp")]
    impl<R: ReadAt + ?Sized> Inflated<'_, R> {
        fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            let (r, m) = (self.r, self.m);
            let mut st = self.state.borrow_mut();
            offset
                .checked_add(buf.len() as u64)
                .filter(|&e| e <= m.size)
                .ok_or_else(|| m.err(format!("bytes from {offset} asked for, past its end")))?;
            if offset < st.0.out - st.1.len() as u64 {
                *st = (Inflate::new(), Vec::new());
            }
            let (inf, hist) = &mut *st;
            let keep = |hist: &mut Vec<u8>, bytes: &[u8]| {
                if bytes.len() >= HISTORY {
                    hist.clear();
                    hist.extend_from_slice(&bytes[bytes.len() - HISTORY..]);
                } else {
                    let excess = (hist.len() + bytes.len()).saturating_sub(HISTORY);
                    hist.drain(..excess);
                    hist.extend_from_slice(bytes);
                }
            };
            let mut done = 0;
            if offset < inf.out {
                let from = (offset - (inf.out - hist.len() as u64)) as usize;
                done = buf.len().min(hist.len() - from);
                buf[..done].copy_from_slice(&hist[from..from + done]);
            } else if offset > inf.out {
                inf.through(r, m, offset - inf.out, |b| keep(hist, b))?;
            }
            if done < buf.len() {
                inf.fill(r, m, &mut buf[done..])?;
                keep(hist, &buf[done..]);
            }
            Ok(())
        }
    }

    #[cfg(feature = "nnp")]
    impl<R: ReadAt + ?Sized> ReadAt for Inflated<'_, R> {
        fn len(&self) -> u64 {
            self.m.size
        }

        fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
            self.read(offset, buf).map_err(|e| {
                let msg = e.to_string();
                *self.failed.borrow_mut() = Some(e);
                std::io::Error::new(std::io::ErrorKind::InvalidData, msg)
            })
        }
    }

    /// Runs `walk` over the inflated bytes of `m` (one pass, bounded
    /// memory: see [`Inflated`]), then inflates the rest and checks the
    /// member's end and CRC-32.
    #[cfg(feature = "nnp")]
    pub(crate) fn walk_inflated<R: ReadAt + ?Sized, T>(
        r: &R,
        m: &Member,
        walk: impl FnOnce(&Inflated<'_, R>) -> crate::formats::nnabla::Walk<T>,
    ) -> crate::formats::nnabla::Walk<T> {
        let (t, mut inf) = run_walk(r, m, walk)?;
        inf.skip(r, m, m.size.saturating_sub(inf.out))?;
        inf.finish(r, m)?;
        Ok(t)
    }

    /// Runs `walk` over the inflated bytes of `m` as [`walk_inflated`]
    /// does, inflating no further than the walk reads (a header-only
    /// listing): the member's end and CRC-32 are checked at its first read
    /// instead ([`Member::read`]).
    #[cfg(feature = "nnp")]
    pub(crate) fn walk_inflated_head<R: ReadAt + ?Sized, T>(
        r: &R,
        m: &Member,
        walk: impl FnOnce(&Inflated<'_, R>) -> crate::formats::nnabla::Walk<T>,
    ) -> crate::formats::nnabla::Walk<T> {
        let (t, _) = run_walk(r, m, walk)?;
        m.unchecked
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(t)
    }

    /// `walk` over the inflated bytes of `m`; its result and the inflater
    /// where the walk left it.
    #[cfg(feature = "nnp")]
    fn run_walk<R: ReadAt + ?Sized, T>(
        r: &R,
        m: &Member,
        walk: impl FnOnce(&Inflated<'_, R>) -> crate::formats::nnabla::Walk<T>,
    ) -> crate::formats::nnabla::Walk<(T, Inflate)> {
        use crate::formats::nnabla::Stop;
        let z = Inflated {
            r,
            m,
            state: RefCell::new((Inflate::new(), Vec::new())),
            failed: RefCell::new(None),
        };
        let out = walk(&z);
        if let Some(e) = z.failed.take() {
            return Err(Stop::Err(e));
        }
        let t = out?;
        Ok((t, z.state.into_inner().0))
    }
}

#[cfg(all(test, feature = "nnp"))]
mod tests {
    use std::sync::Arc;

    use flate2::{Compress, Compression, FlushCompress};

    use tensor_core::InflateBudget;

    use super::super::ReadAt;
    use super::inflate::{Member, Pool, verify, walk_inflated};
    use crate::Error;
    use crate::formats::nnabla::Stop;

    /// `data` deflated (raw), as a zip member at offset 3 of a file (its
    /// CRC-32 xored with `wrong`).
    fn member(data: &[u8], wrong: u32) -> (Vec<u8>, Member) {
        member_with(data, wrong, tensor_core::InflateBudget::unlimited())
    }

    /// [`member`], its inflation charged to `budget`.
    fn member_with(data: &[u8], wrong: u32, budget: InflateBudget) -> (Vec<u8>, Member) {
        let mut z = Compress::new(Compression::default(), false);
        let mut out = Vec::with_capacity(data.len() + 1024);
        z.compress_vec(data, &mut out, FlushCompress::Finish)
            .unwrap();
        let mut file = vec![7u8; 3];
        file.extend(&out);
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let m = nnp_archive::MemberInfo {
            name: "x".into(),
            kind: nnp_archive::MemberKind::Other,
            compression: nnp_archive::archive::Compression::Deflated,
            size: data.len() as u64,
            compressed_size: out.len() as u64,
            unsafe_name: false,
            data_start: 3,
            crc32: crc.sum() ^ wrong,
        };
        (
            file,
            Member::new(&m, Error::Nnp, &Arc::new(Pool::new(budget))),
        )
    }

    fn data() -> Vec<u8> {
        (0..300_000u32)
            .map(|i| (i * 7919 % 251) as u8 ^ (i >> 9) as u8)
            .collect()
    }

    #[test]
    fn reads_anywhere_in_any_order() {
        let data = data();
        let (file, m) = member(&data, 0);
        let mut buf = vec![0u8; 70_000];
        for (at, n) in [
            (0, 10),
            (5, 70_000),
            (299_990, 10),
            (1, 1),
            (150_000, 3),
            (149_999, 2),
        ] {
            m.read(&file[..], at, &mut buf[..n]).unwrap();
            assert_eq!(&buf[..n], &data[at as usize..at as usize + n]);
        }
        assert!(m.read(&file[..], 299_999, &mut buf[..2]).is_err());
    }

    #[test]
    fn a_walk_reads_back_past_its_history_from_the_start() {
        let data = data();
        let (file, m) = member(&data, 0);
        let got = walk_inflated(&file[..], &m, |z| {
            let mut out = Vec::new();
            for (at, n) in [
                (0u64, 100usize),
                (200_000, 16),
                (199_000, 2_000),
                (10, 5),
                (299_000, 1_000),
            ] {
                let mut b = vec![0u8; n];
                z.read_at(at, &mut b).unwrap();
                out.push((at, b));
            }
            Ok(out)
        });
        let Ok(got) = got else {
            panic!("the walk failed")
        };
        for (at, b) in got {
            assert_eq!(b, &data[at as usize..at as usize + b.len()]);
        }
        // a wrong CRC-32 is found at the end of the walk, and of a read
        let (file, m) = member(&data, 1);
        let Err(Stop::Err(e)) = walk_inflated(&file[..], &m, |_| Ok(())) else {
            panic!("a wrong CRC-32 passes")
        };
        assert!(e.to_string().ends_with("Invalid checksum"), "{e}");
        let mut buf = vec![0u8; 10];
        m.read(&file[..], 0, &mut buf).unwrap();
        assert!(m.read(&file[..], 299_990, &mut buf).is_err());
    }

    #[test]
    fn a_member_is_charged_once_up_to_the_furthest_byte_read() {
        let data = data();
        let budget = InflateBudget::with_limit(1 << 20, 1000);
        let (file, m) = member_with(&data, 0, budget.clone());
        let mut buf = vec![0u8; 1000];
        m.read(&file[..], 5000, &mut buf).unwrap();
        assert_eq!(budget.used(), 6000);
        // behind the cursor, from the member's start again: not charged again
        m.read(&file[..], 0, &mut buf).unwrap();
        m.read(&file[..], 100, &mut buf[..10]).unwrap();
        assert_eq!(budget.used(), 6000);
        verify(&file[..], &m).unwrap();
        verify(&file[..], &m).unwrap();
        assert_eq!(budget.used(), data.len() as u64);
        // a budget smaller than the member: refused before inflating past it
        let budget = InflateBudget::with_limit(100_000, 1000);
        let (file, m) = member_with(&data, 0, budget.clone());
        m.read(&file[..], 90_000, &mut buf).unwrap();
        let e = m.read(&file[..], 99_500, &mut buf).unwrap_err();
        assert!(
            matches!(e, Error::Core(tensor_core::Error::InflateLimit { .. })),
            "{e}"
        );
        assert!(e.to_string().contains("zip member \"x\""), "{e}");
        // the bytes skipped up to the read were charged, not the read's
        assert_eq!(budget.used(), 99_500);
        assert!(verify(&file[..], &m).is_err());
        assert!(budget.used() <= budget.limit());
    }
}
