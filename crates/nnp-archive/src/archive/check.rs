//! Checks of the zip layer that bound the work a hostile archive can cause:
//! central entries sharing bytes, and the inflation budget.

use std::io::{Read, Seek};

use tensor_core::InflateBudget;

use super::zerr;
use crate::{Error, Result};

/// How a member is named in a budget's error.
pub(super) fn what(name: &str) -> String {
    format!("zip member {name:?}")
}

/// The error for a member whose declared size brings the archive's
/// deflated members to `declared` bytes in total, over what `budget` has
/// left (found before anything is inflated).
pub(super) fn over_budget(
    name: &str,
    budget: &InflateBudget,
    declared: u64,
    archive_len: u64,
) -> Error {
    Error::Tensor(tensor_core::Error::InflateLimit {
        what: format!(
            "{} (the deflated members declare {declared} bytes up to it)",
            what(name)
        ),
        total: budget.used().saturating_add(declared),
        limit: budget.limit(),
        input: archive_len,
    })
}

/// Refuses central entries whose bytes (local header and data) overlap:
/// several entries pointing at one local header, or a header inside
/// another member's data. That is how an "overlapping" zip bomb makes many
/// members of one compressed stream; Python's `zipfile` (3.12 and the
/// security releases before it) refuses them too, or fails on the local
/// header's name, so numpy and nnabla read no such archive. Each local
/// entry is thus read (and inflated) for one member only.
///
/// Said here, with the members' names, before the zip reader's own
/// consistency check (which also refuses them, without names).
pub(super) fn overlaps<R: Read + Seek>(za: &mut zip::ZipArchive<R>) -> Result<()> {
    let mut spans: Vec<(u64, u64, usize)> =
        tensor_core::try_with_capacity("the member list", za.len())?;
    for i in 0..za.len() {
        let f = za.by_index_raw(i).map_err(zerr)?;
        let name = || f.name().map(|n| n.into_owned()).unwrap_or_default();
        let start = f.header_start();
        let data = f
            .data_start()
            .ok_or_else(|| Error::member(&name(), "the local header could not be located"))?;
        let end = data
            .checked_add(f.compressed_size())
            .ok_or_else(|| Error::member(&name(), "its data's end overflows"))?;
        spans.push((start, end, i));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        let [(s0, e0, i0), (s1, _, i1)] = [w[0], w[1]];
        if s1 >= e0 {
            continue;
        }
        let mut name = |i: usize| -> Result<String> {
            let f = za.by_index_raw(i).map_err(zerr)?;
            Ok(f.name().map_err(zerr)?.into_owned())
        };
        let (first, second) = (name(i0)?, name(i1)?);
        let reason = if s0 == s1 {
            format!(
                "its central entry points at the local header of member {first:?} (offset {s1}): entries sharing bytes (an overlapping zip bomb) are refused"
            )
        } else {
            format!(
                "its local header (offset {s1}) lies inside member {first:?} (bytes {s0}..{e0}): overlapping entries (an overlapping zip bomb) are refused"
            )
        };
        return Err(Error::member(&second, reason));
    }
    Ok(())
}

/// What the central directory says of one member, to compare with its
/// local header.
struct Central {
    name: Vec<u8>,
    header_start: u64,
    method: Option<u16>,
    crc32: u32,
    compressed_size: u64,
    size: u64,
}

/// The checks Python's `zipfile` makes of a member's local header when it
/// opens the member, for an archive that lists a name twice (which the zip
/// reader's own consistency check refuses outright): its signature, its
/// name and method as the central directory says, and, unless it defers
/// them to a data descriptor or to ZIP64, its sizes and CRC-32. `za` is
/// taken apart to read the headers and made again from the same reader.
pub(super) fn local_headers<R: Read + Seek>(za: zip::ZipArchive<R>) -> Result<zip::ZipArchive<R>> {
    use zip::CompressionMethod;
    let mut za = za;
    let mut centrals: Vec<Central> = tensor_core::try_with_capacity("the member list", za.len())?;
    for i in 0..za.len() {
        let f = za.by_index_raw(i).map_err(zerr)?;
        centrals.push(Central {
            name: f.name_raw().to_vec(),
            header_start: f.header_start(),
            method: match f.compression() {
                CompressionMethod::Stored => Some(0),
                CompressionMethod::Deflated => Some(8),
                _ => None, // refused by the listing
            },
            crc32: f.crc32(),
            compressed_size: f.compressed_size(),
            size: f.size(),
        });
    }
    let mut r = za.into_inner();
    for c in &centrals {
        local_header(&mut r, c)?;
    }
    zip::ZipArchive::new(r).map_err(zerr)
}

fn local_header<R: Read + Seek>(r: &mut R, c: &Central) -> Result<()> {
    let shown = String::from_utf8_lossy(&c.name).into_owned();
    let bad = |why: &str| Error::member(&shown, format!("its local header {why}"));
    let mut h = [0u8; 30];
    r.seek(std::io::SeekFrom::Start(c.header_start))
        .and_then(|_| r.read_exact(&mut h))
        .map_err(|_| bad("runs past the end of the archive"))?;
    let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    if &h[..4] != b"PK\x03\x04" {
        return Err(bad("has no local header signature"));
    }
    let mut name = vec![0u8; usize::from(u16_at(26))];
    r.read_exact(&mut name)
        .map_err(|_| bad("runs past the end of the archive"))?;
    if name != c.name {
        return Err(bad(&format!(
            "names {:?}, the central directory another name",
            String::from_utf8_lossy(&name)
        )));
    }
    if c.method != Some(u16_at(8)) {
        return Err(bad("gives another compression method"));
    }
    // sizes and CRC-32 may be left to a data descriptor (zero here), sizes
    // to the ZIP64 extra field (all ones here)
    let deferred = u16_at(6) & 0x08 != 0;
    let size_agrees = |local: u32, central: u64| {
        u64::from(local) == central || local == u32::MAX || (deferred && local == 0)
    };
    let crc = u32_at(14);
    if !((crc == c.crc32 || (deferred && crc == 0))
        && size_agrees(u32_at(18), c.compressed_size)
        && size_agrees(u32_at(22), c.size))
    {
        return Err(bad("gives other sizes or another CRC-32"));
    }
    Ok(())
}
