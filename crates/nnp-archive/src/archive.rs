//! The zip layer of `.nnp` files: safe member listing and extraction into
//! memory, and the writer of nnabla's own layout.
//!
//! Member names are data. Nothing here ever creates a file from a member
//! name; names that would be dangerous as paths (`../x`, `/abs`, `C:\x`,
//! `\\server\x`) are flagged in [`MemberInfo::unsafe_name`] and refused
//! unless [`ReadOptions::allow_unsafe_names`] is set.
//!
//! Before a byte is inflated, every member's declared size is checked: a
//! stored member must lie inside the archive; a deflated member may not
//! declare more than deflate can produce from its compressed size (1032:1),
//! nor more than [`Limits::max_alloc`]; the declared sizes of all deflated
//! members together must fit in the archive's inflation budget
//! ([`tensor_core::InflateBudget`], [`Limits::inflate_budget`]: a ratio of
//! the archive's size, at most [`Limits::max_total_inflated`]), else
//! [`tensor_core::Error::InflateLimit`] naming the member. Each deflated
//! member is charged to that budget for its declared size when it is
//! inflated (before), and no more is inflated: output beyond the declared
//! size is an error, and the CRC is checked. The budget is
//! [`ReadOptions::budget`] when set (a `.nnp` shares it with its
//! `parameter.h5`), else one per call. Buffers sized by headers are
//! allocated fallibly ([`tensor_core::Error::OutOfMemory`], never an abort).
//!
//! Local headers must agree with the central directory (names, sizes, CRC,
//! method), and members may not overlap: central entries pointing at one
//! local header, or into another member's bytes (an "overlapping" zip
//! bomb), are refused, naming both members. So each local entry is read
//! and inflated once, for one member. A name listed twice is read as
//! Python's `zipfile` (so numpy and nnabla) reads it: the last entry is the
//! member, listed once at the name's first place; the earlier entries are
//! not read. ZIP64 archives are read.

use std::io::{Cursor, Read, Seek, Write};
use std::sync::Arc;

use tensor_core::{Bytes, InflateBudget, Limits, MappedFile};
use zip::CompressionMethod;
use zip::write::SimpleFileOptions;

use crate::{Error, Result};

/// Deflate's best possible ratio is about 1032:1; declared sizes beyond it
/// cannot be true.
const DEFLATE_MAX_RATIO: u64 = 1032;

mod check;

/// How to read an archive (and the `.h5` parameters in it).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Bounds on counts, allocations and inflated bytes.
    pub limits: Limits,
    /// Accept members whose names are unsafe as paths (they are still only
    /// data and are listed with [`MemberInfo::unsafe_name`]).
    pub allow_unsafe_names: bool,
    /// Check the CRC-32 of stored members too (deflated members are always
    /// checked). Off by default: it reads every byte, which the zero-copy
    /// path otherwise avoids.
    pub verify_crc: bool,
    /// The count of bytes inflated from the input being read, shared by
    /// every reader of that input (the zip members, then the `.h5`
    /// datasets of a `parameter.h5` member): see
    /// [`tensor_core::InflateBudget`]. `None` (the default): each entry
    /// point makes one from [`ReadOptions::limits`] and the input's length
    /// ([`ReadOptions::budget_for`]), so a `.nnp` read by [`crate::Nnp`]
    /// shares one budget between its zip members and its `parameter.h5`.
    pub budget: Option<InflateBudget>,
}

impl ReadOptions {
    /// Sets the limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Check the CRC-32 of stored members.
    pub fn verify_crc(mut self, yes: bool) -> Self {
        self.verify_crc = yes;
        self
    }

    /// Accept (but still flag) unsafe member names.
    pub fn allow_unsafe_names(mut self, yes: bool) -> Self {
        self.allow_unsafe_names = yes;
        self
    }

    /// Charges what is inflated to `budget` (shared with its clones): for a
    /// caller that reads one input with several readers, or that wants to
    /// see [`InflateBudget::used`] after.
    pub fn with_budget(mut self, budget: InflateBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The budget of an input of `input_len` bytes: the one set by
    /// [`ReadOptions::with_budget`], else a new one from
    /// [`ReadOptions::limits`] ([`InflateBudget::new`]).
    pub fn budget_for(&self, input_len: u64) -> InflateBudget {
        self.budget
            .clone()
            .unwrap_or_else(|| InflateBudget::new(&self.limits, input_len))
    }
}

/// What nnabla does with a member, decided by its extension (as
/// `os.path.splitext` gives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberKind {
    /// `.nntxt` / `.prototxt`: text protobuf merged into the model.
    Text,
    /// `.protobuf`: binary protobuf (its parameters, and its networks in Python).
    Protobuf,
    /// `.h5`: HDF5 parameters.
    H5,
    /// `.optimizer`: solver state, kept as raw bytes.
    Optimizer,
    /// `.nnp`: a nested archive, which nnabla refuses.
    NestedNnp,
    /// A directory entry (nnabla's Python loader crashes on these; skipped here).
    Directory,
    /// Anything else (`nnp_version.txt`, `README.md`): ignored, as nnabla does.
    Other,
}

impl MemberKind {
    /// The kind of a member named `name`.
    pub fn of(name: &str) -> MemberKind {
        if name.ends_with('/') {
            return MemberKind::Directory;
        }
        let base = name.rsplit('/').next().unwrap_or(name);
        // splitext ignores leading dots of the base name
        let trimmed = base.trim_start_matches('.');
        let ext = match trimmed.rfind('.') {
            Some(i) => &trimmed[i..],
            None => "",
        };
        match ext {
            ".nntxt" | ".prototxt" => MemberKind::Text,
            ".protobuf" => MemberKind::Protobuf,
            ".h5" => MemberKind::H5,
            ".optimizer" => MemberKind::Optimizer,
            ".nnp" => MemberKind::NestedNnp,
            _ => MemberKind::Other,
        }
    }
}

/// True when `name` would escape a directory if used as a path: absolute,
/// with a drive letter or UNC prefix, or with a `..` component.
pub fn is_unsafe_name(name: &str) -> bool {
    let b = name.as_bytes();
    name.starts_with('/')
        || name.starts_with('\\')
        || (b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic())
        || name.contains('\0')
        || name.split(['/', '\\']).any(|c| c == "..")
}

/// How a member is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// Stored (no compression): readable without copying.
    Stored,
    /// Deflate.
    Deflated,
}

/// One member of the archive, in archive (central directory) order.
#[derive(Debug, Clone)]
pub struct MemberInfo {
    /// The name as stored (decoded as UTF-8 or CP437, as the zip flags say).
    pub name: String,
    /// What nnabla does with it.
    pub kind: MemberKind,
    /// How it is stored.
    pub compression: Compression,
    /// Uncompressed size.
    pub size: u64,
    /// Stored size.
    pub compressed_size: u64,
    /// True when the name is unsafe as a path (see [`is_unsafe_name`]).
    pub unsafe_name: bool,
    /// Where its data starts in the archive (after the local header).
    pub data_start: u64,
    /// The CRC-32 of its uncompressed bytes, as the central directory states
    /// it (for a reader that inflates the member itself).
    pub crc32: u32,
}

/// An archive's member list with the bytes of every member: borrowed (stored
/// members of a slice), shared (stored members of a memory map) or owned
/// (inflated members, and everything read from a `Read + Seek`).
#[derive(Debug)]
pub struct ZipContents<'a> {
    /// The members in archive order.
    pub members: Vec<MemberInfo>,
    /// The bytes of each member, parallel to `members` (directories are empty).
    pub data: Vec<Bytes<'a>>,
}

fn zerr(e: zip::result::ZipError) -> Error {
    Error::Zip(e.to_string())
}

/// Lists and checks every member (no data read except local headers): the
/// declared sizes of its deflated members together must fit in what
/// `budget` has left (nothing is charged yet: each member is charged when
/// it is inflated).
///
/// A name the central directory lists twice is read as Python's `zipfile`
/// reads it, so as numpy and nnabla do: its last entry is the member (numpy
/// lists the name twice, both giving the last entry's array; nnabla reads
/// the last entry twice); here it is listed once, at its first place, and
/// the earlier entries are never read. Such an archive gets the checks
/// `zipfile` makes (each local header's signature, name and method, and
/// its sizes and CRC-32), not the zip reader's, which refuses it.
fn scan<R: Read + Seek>(
    za: zip::ZipArchive<R>,
    archive_len: u64,
    opts: &ReadOptions,
    budget: &InflateBudget,
) -> Result<(zip::ZipArchive<R>, Vec<MemberInfo>)> {
    let limits = &opts.limits;
    let mut za = za;
    limits.check_tensors(za.len() as u64)?;
    check::overlaps(&mut za)?;
    if za.has_duplicate_names() {
        za = check::local_headers(za)?;
    } else {
        za.validate_header_consistency().map_err(zerr)?;
    }
    let mut members = tensor_core::try_with_capacity("the member list", za.len())?;
    for i in 0..za.len() {
        let f = za.by_index_raw(i).map_err(zerr)?;
        let name = f.name().map_err(zerr)?.into_owned();
        limits.check_name_len(name.len() as u64)?;
        let unsafe_name = is_unsafe_name(&name);
        if unsafe_name && !opts.allow_unsafe_names {
            return Err(Error::UnsafeMemberName { name });
        }
        if f.encrypted() {
            return Err(Error::member(&name, "encrypted members are not supported"));
        }
        let compression = match f.compression() {
            CompressionMethod::Stored => Compression::Stored,
            CompressionMethod::Deflated => Compression::Deflated,
            other => {
                return Err(Error::member(
                    &name,
                    format!(
                        "compression method {other} is not supported (only stored and deflate)"
                    ),
                ));
            }
        };
        let size = f.size();
        let csize = f.compressed_size();
        let crc32 = f.crc32();
        let data_start = f
            .data_start()
            .ok_or_else(|| Error::member(&name, "the local header could not be located"))?;
        let end = data_start.checked_add(csize);
        if end.is_none_or(|e| e > archive_len) {
            return Err(Error::member(
                &name,
                format!(
                    "its {csize} stored bytes at offset {data_start} run past the end of the {archive_len}-byte archive"
                ),
            ));
        }
        match compression {
            Compression::Stored if size != csize => {
                return Err(Error::member(
                    &name,
                    format!("stored member declares {size} bytes but stores {csize}"),
                ));
            }
            Compression::Stored => {}
            Compression::Deflated => {
                let possible = csize.saturating_mul(DEFLATE_MAX_RATIO).saturating_add(64);
                if size > possible {
                    return Err(Error::TooLarge {
                        member: name,
                        declared: size,
                        limit: possible,
                    });
                }
                if size > limits.max_alloc {
                    return Err(Error::TooLarge {
                        member: name,
                        declared: size,
                        limit: limits.max_alloc,
                    });
                }
            }
        }
        let kind = MemberKind::of(&name);
        members.push(MemberInfo {
            name,
            kind,
            compression,
            size,
            compressed_size: csize,
            unsafe_name,
            data_start,
            crc32,
        });
    }
    if let Some(e) = over_declared_budget(&members, budget, archive_len) {
        return Err(e);
    }
    Ok((za, members))
}

/// The first allocation for a member's bytes; the buffer then grows with
/// what the stream actually yields, never past the declared size.
const FIRST_CHUNK: usize = 64 << 10;

/// Inflates (or copies) member `i` into a new buffer of exactly its declared size.
///
/// A deflated member is charged to `budget` for its declared size before a
/// byte is inflated, and no more than that is inflated (one byte more
/// reveals a lying header and is an error).
///
/// The buffer follows the stream: it starts at [`FIRST_CHUNK`] (or the
/// declared size if smaller) and at most doubles, capped at the declared
/// size, so a header declaring 1 GiB in front of a 1 MiB stream costs about
/// 2 MiB, not 1 GiB, and an honest member is never over-allocated. A
/// refused allocation is an error ([`tensor_core::Error::OutOfMemory`]).
fn read_owned<R: Read + Seek>(
    za: &mut zip::ZipArchive<R>,
    i: usize,
    m: &MemberInfo,
    limits: &Limits,
    budget: &InflateBudget,
) -> Result<Vec<u8>> {
    limits.check_alloc("zip member", m.size)?;
    let n = usize::try_from(m.size).map_err(|_| Error::TooLarge {
        member: m.name.clone(),
        declared: m.size,
        limit: usize::MAX as u64,
    })?;
    if m.compression == Compression::Deflated {
        budget.charge(&check::what(&m.name), m.size)?;
    }
    let mut f = za.by_index(i).map_err(zerr)?;
    let failed = |e: std::io::Error| Error::member(&m.name, format!("reading failed: {e}"));
    let what = check::what(&m.name);
    let mut out: Vec<u8> = tensor_core::try_with_capacity(&what, n.min(FIRST_CHUNK))?;
    while out.len() < n {
        if out.len() == out.capacity() {
            let more = (n - out.len()).min(out.len().max(FIRST_CHUNK));
            tensor_core::try_reserve(&mut out, &what, more)?;
        }
        let len = out.len();
        let end = out.capacity().min(n);
        out.resize(end, 0);
        match f.read(&mut out[len..end]) {
            Ok(0) => {
                out.truncate(len);
                break;
            }
            Ok(k) => out.truncate(len + k),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => out.truncate(len),
            Err(e) => return Err(failed(e)),
        }
    }
    if out.len() < n {
        return Err(Error::member(
            &m.name,
            format!("declares {} bytes but holds {}", m.size, out.len()),
        ));
    }
    // One byte more than declared reveals a lying header; reading to the end
    // also makes the zip reader check the CRC.
    let mut probe = [0u8; 1];
    let extra = loop {
        match f.read(&mut probe) {
            Ok(k) => break k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(failed(e)),
        }
    };
    if extra != 0 {
        return Err(Error::member(
            &m.name,
            format!("declares {} bytes but holds {} or more", m.size, n + 1),
        ));
    }
    Ok(out)
}

/// Reads every member of an archive held in `bytes` with the default
/// options; stored members are borrowed from `bytes`.
pub fn parse(bytes: &[u8]) -> Result<ZipContents<'_>> {
    parse_with(bytes, &ReadOptions::default())
}

/// Reads every member of an archive held in `bytes`; stored members are
/// borrowed from `bytes`.
pub fn parse_with<'a>(bytes: &'a [u8], opts: &ReadOptions) -> Result<ZipContents<'a>> {
    read_members(bytes, opts, |range| Bytes::Borrowed(&bytes[range]))
}

/// Reads every member of an archive in a memory map; stored members share the map.
pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<ZipContents<'static>> {
    read_members(map.as_bytes(), opts, |range| {
        Bytes::Mapped(Arc::clone(map), range)
    })
}

fn read_members<'a>(
    bytes: &[u8],
    opts: &ReadOptions,
    stored: impl Fn(std::ops::Range<usize>) -> Bytes<'a>,
) -> Result<ZipContents<'a>> {
    let budget = opts.budget_for(bytes.len() as u64);
    let za = zip::ZipArchive::new(Cursor::new(bytes)).map_err(zerr)?;
    let (mut za, members) = scan(za, bytes.len() as u64, opts, &budget)?;
    let mut data = tensor_core::try_with_capacity("the member list", members.len())?;
    for (i, m) in members.iter().enumerate() {
        data.push(match m.compression {
            Compression::Stored => {
                // scan() proved data_start + size <= bytes.len()
                let s = m.data_start as usize;
                let e = s + m.size as usize;
                let d = stored(s..e);
                if opts.verify_crc {
                    check_crc(m, &d, &mut za, i)?;
                }
                d
            }
            Compression::Deflated => {
                Bytes::Owned(read_owned(&mut za, i, m, &opts.limits, &budget)?)
            }
        });
    }
    Ok(ZipContents { members, data })
}

fn check_crc<R: Read + Seek>(
    m: &MemberInfo,
    d: &[u8],
    za: &mut zip::ZipArchive<R>,
    i: usize,
) -> Result<()> {
    let want = za.by_index_raw(i).map_err(zerr)?.crc32();
    let got = crc32(d);
    if want != got {
        return Err(Error::member(
            &m.name,
            format!("CRC-32 is {got:08x}, the archive says {want:08x}"),
        ));
    }
    Ok(())
}

/// Lists and checks every member of an archive from any `Read + Seek`
/// without reading their data: the central directory and the local
/// headers only (for a file read by offset, whose stored members are then
/// read at [`MemberInfo::data_start`]). The checks are those of
/// [`from_reader`] before it reads the data, but one: the deflated
/// members' declared sizes together need not fit the inflation budget, as
/// a caller that lists reads members a part at a time and charges each
/// part to the budget as it inflates it (a header-only listing of a
/// decompression bomb succeeds; reading its data is refused).
pub fn list<R: Read + Seek>(reader: R, opts: &ReadOptions) -> Result<Vec<MemberInfo>> {
    let mut reader = reader;
    let len = length(&mut reader)?;
    let za = zip::ZipArchive::new(reader).map_err(zerr)?;
    Ok(scan(za, len, opts, &InflateBudget::unlimited())?.1)
}

/// What reading the whole archive would refuse for its budget: the first
/// deflated member (in `members`' order, as [`list`] gives them) at which
/// the declared sizes together pass what `budget` has left, or `None`.
/// A reader that [`list`]s and inflates a part at a time refuses its first
/// read with it, so that it refuses what [`parse_with`] refuses.
pub fn over_declared_budget(
    members: &[MemberInfo],
    budget: &InflateBudget,
    archive_len: u64,
) -> Option<Error> {
    let mut total = 0u64;
    for m in members {
        if m.compression == Compression::Deflated {
            total = total.saturating_add(m.size);
            if total > budget.remaining() {
                return Some(check::over_budget(&m.name, budget, total, archive_len));
            }
        }
    }
    None
}

/// The length of `reader`, which is left at its start.
fn length<R: Seek>(reader: &mut R) -> Result<u64> {
    let len = reader
        .seek(std::io::SeekFrom::End(0))
        .map_err(|e| Error::io("seeking the archive", e))?;
    reader
        .rewind()
        .map_err(|e| Error::io("seeking the archive", e))?;
    Ok(len)
}

/// Reads member `i` of an archive from any `Read + Seek`, as [`list`]
/// gave it (`m`), into a new buffer: inflated when deflated, with the checks
/// [`from_reader`] makes (declared size, CRC-32 of deflated members,
/// [`tensor_core::Limits::max_alloc`]). For reading one small member of a
/// file read by offset. A deflated member is charged to the options'
/// budget ([`ReadOptions::budget_for`]) each time it is read: pass the
/// budget of the whole archive with [`ReadOptions::with_budget`].
pub fn read_member<R: Read + Seek>(
    reader: R,
    i: usize,
    m: &MemberInfo,
    opts: &ReadOptions,
) -> Result<Vec<u8>> {
    let mut reader = reader;
    let len = length(&mut reader)?;
    let mut za = zip::ZipArchive::new(reader).map_err(zerr)?;
    read_owned(&mut za, i, m, &opts.limits, &opts.budget_for(len))
}

/// Reads every member of an archive from any `Read + Seek` (members are
/// read into owned buffers).
pub fn from_reader<R: Read + Seek>(reader: R, opts: &ReadOptions) -> Result<ZipContents<'static>> {
    let mut reader = reader;
    let len = length(&mut reader)?;
    let budget = opts.budget_for(len);
    let za = zip::ZipArchive::new(reader).map_err(zerr)?;
    let (mut za, members) = scan(za, len, opts, &budget)?;
    let mut total: u64 = 0;
    let mut data = tensor_core::try_with_capacity("the member list", members.len())?;
    for (i, m) in members.iter().enumerate() {
        total = total.saturating_add(m.size);
        if total > opts.limits.max_total_inflated.max(opts.limits.max_alloc) {
            return Err(Error::TooLarge {
                member: m.name.clone(),
                declared: total,
                limit: opts.limits.max_total_inflated.max(opts.limits.max_alloc),
            });
        }
        data.push(Bytes::Owned(read_owned(
            &mut za,
            i,
            m,
            &opts.limits,
            &budget,
        )?));
    }
    Ok(ZipContents { members, data })
}

/// CRC-32 (IEEE), as zip uses.
fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[[u32; 256]; 8]> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = [[0u32; 256]; 8];
        for i in 0..256u32 {
            let mut c = i;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            t[0][i as usize] = c;
        }
        for i in 0..256 {
            for k in 1..8 {
                let prev = t[k - 1][i];
                t[k][i] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            }
        }
        t
    });
    let mut crc = !0u32;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let lo = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        let hi = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
        crc = t[7][(lo & 0xFF) as usize]
            ^ t[6][((lo >> 8) & 0xFF) as usize]
            ^ t[5][((lo >> 16) & 0xFF) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][(hi & 0xFF) as usize]
            ^ t[2][((hi >> 8) & 0xFF) as usize]
            ^ t[1][((hi >> 16) & 0xFF) as usize]
            ^ t[0][(hi >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = t[0][((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

// ---------------------------------------------------------------- writing

/// Writes zip members the way Python's `zipfile` does for nnabla: stored,
/// no directory entries, Unix permissions `0600`.
pub struct NnpZipWriter<W: Write + Seek> {
    zip: zip::ZipWriter<W>,
}

impl<W: Write + Seek> NnpZipWriter<W> {
    /// A writer over `w`.
    pub fn new(w: W) -> Self {
        NnpZipWriter {
            zip: zip::ZipWriter::new(w),
        }
    }

    /// Starts a stored member `name`; write its bytes to the returned writer.
    /// `large` must be true when the member may reach 4 GiB (ZIP64).
    pub fn start(&mut self, name: &str, large: bool) -> Result<&mut impl Write> {
        self.begin(name, large, 1)?;
        Ok(&mut self.zip)
    }

    /// Like [`NnpZipWriter::start`], with the member's data starting at a
    /// multiple of `align` bytes in the archive (the local header's extra
    /// field is padded, as zipalign does; readers skip it). A stored `.h5`
    /// member aligned to [`crate::h5::DATA_ALIGN`] keeps its data blocks
    /// aligned in the archive too.
    pub fn start_aligned(
        &mut self,
        name: &str,
        large: bool,
        align: u16,
    ) -> Result<&mut impl Write> {
        self.begin(name, large, align)?;
        Ok(&mut self.zip)
    }

    fn begin(&mut self, name: &str, large: bool, align: u16) -> Result<()> {
        let opts = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .unix_permissions(0o600)
            .large_file(large)
            .with_alignment(align);
        self.zip
            .start_file(name, opts)
            .map_err(|e| Error::member(name, format!("writing failed: {e}")))
    }

    /// The member being written (after [`NnpZipWriter::start`]).
    pub(crate) fn out(&mut self) -> &mut impl Write {
        &mut self.zip
    }

    /// Writes a whole stored member.
    pub fn member(&mut self, name: &str, data: &[u8]) -> Result<()> {
        let large = data.len() as u64 >= 0xFFFF_FFFF;
        self.start(name, large)?
            .write_all(data)
            .map_err(|e| Error::io(format!("writing member {name}"), e))
    }

    /// Writes the central directory and returns the inner writer.
    pub fn finish(self) -> Result<W> {
        self.zip
            .finish()
            .map_err(|e| Error::Zip(format!("finishing the archive: {e}")))
    }
}

/// The content nnabla writes as `nnp_version.txt`.
pub const NNP_VERSION: &[u8] = b"0.1\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_splitext() {
        assert_eq!(MemberKind::of("network.nntxt"), MemberKind::Text);
        assert_eq!(MemberKind::of("a/b.prototxt"), MemberKind::Text);
        assert_eq!(MemberKind::of("parameter.h5"), MemberKind::H5);
        assert_eq!(MemberKind::of("x.protobuf"), MemberKind::Protobuf);
        assert_eq!(
            MemberKind::of("optimizer_Adam_optimizer.h5.optimizer"),
            MemberKind::Optimizer
        );
        assert_eq!(MemberKind::of("nnp_version.txt"), MemberKind::Other);
        assert_eq!(MemberKind::of(".h5"), MemberKind::Other);
        assert_eq!(MemberKind::of("dir.h5/x"), MemberKind::Other);
        assert_eq!(MemberKind::of("sub/"), MemberKind::Directory);
        assert_eq!(MemberKind::of("inner.nnp"), MemberKind::NestedNnp);
    }

    #[test]
    fn unsafe_names() {
        for n in [
            "../x.h5",
            "a/../../x",
            "/etc/x.h5",
            "C:\\x.h5",
            "c:x",
            "\\\\srv\\x",
            "a\\..\\b",
        ] {
            assert!(is_unsafe_name(n), "{n}");
        }
        for n in ["parameter.h5", "a/b.nntxt", "..x", "x..h5", "sub/"] {
            assert!(!is_unsafe_name(n), "{n}");
        }
    }

    #[test]
    fn crc_matches_known_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        let long: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let mut slow = !0u32;
        for &b in &long {
            slow ^= u32::from(b);
            for _ in 0..8 {
                slow = if slow & 1 != 0 {
                    0xEDB8_8320 ^ (slow >> 1)
                } else {
                    slow >> 1
                };
            }
        }
        assert_eq!(crc32(&long), !slow);
    }
}
