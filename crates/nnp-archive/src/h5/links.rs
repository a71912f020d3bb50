//! Each group's hard links resolved to the object-header addresses they
//! point at, read from the file's own structures (the format facts of the
//! HDF5 specification), because `hdf5-pure` names a child but does not say
//! where its object header is. With the addresses, the walk visits each
//! object once as h5py's `visititems` does (nnabla lists a parameter file's
//! datasets that way): a dataset behind several hard links is one
//! parameter, a group behind several links is walked once, a hard-link
//! cycle ends.
//!
//! Read here: version-1 and version-2 object headers (with their
//! continuation blocks), old-style groups (a symbol table: a version-1
//! B-tree of symbol-table nodes, names in a local heap; what h5py writes by
//! default), new-style compact groups (link messages in the header) and
//! new-style groups in dense storage (a Link Info message naming a fractal
//! heap of link messages and their name index, read by [`super::dense`]:
//! new-style groups of more than 8 links, or tracking creation order).
//!
//! Every read is bounded: a header's chunks and continuation blocks, the
//! nodes of a B-tree (each visited once), a local heap's data segment, the
//! blocks of a fractal heap; an error ([`LinkError`]) says what is wrong.

use std::collections::HashSet;

use hdf5_pure::Source;

use super::dense::{self, Budget};

/// The file's address geometry (from the superblock).
#[derive(Debug, Clone, Copy)]
pub(super) struct Geometry {
    /// Bytes of an address.
    pub offsets: usize,
    /// Bytes of a length.
    pub lengths: usize,
    /// What every stored address is relative to.
    pub base: u64,
}

/// What one link of a group points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// A hard link: the object header at this absolute address.
    Hard(u64),
    /// A soft or external link (h5py's `visititems` does not follow them).
    Other,
}

/// The most bytes one read of metadata takes (a header chunk, a heap).
pub(super) const MAX_READ: u64 = 16 << 20;
/// The most continuation blocks one object header has.
const MAX_BLOCKS: usize = 4096;
/// The most B-tree nodes one group's symbol table has.
const MAX_NODES: usize = 1 << 16;
/// The most links one group has.
pub(super) const MAX_LINKS: usize = 1 << 22;

/// Why a group's links were not read.
#[derive(Debug)]
pub(super) enum LinkError {
    /// The file's structures are wrong or not read here (what and where).
    Format(String),
    /// A limit was reached (an allocation refused or over its limit).
    Limit(tensor_core::Error),
}

impl From<String> for LinkError {
    fn from(s: String) -> Self {
        LinkError::Format(s)
    }
}

impl From<&str> for LinkError {
    fn from(s: &str) -> Self {
        LinkError::Format(s.to_string())
    }
}

/// A result of this module and [`super::dense`].
pub(super) type R<T> = std::result::Result<T, LinkError>;

/// `n` bytes at `at`, inside the file and at most [`MAX_READ`].
pub(super) fn read(src: &dyn Source, at: u64, n: u64) -> R<Vec<u8>> {
    if n > MAX_READ || at.checked_add(n).is_none_or(|e| e > src.len()) {
        return Err(format!(
            "{n} bytes of metadata at byte {at} run past the end of the {}-byte file",
            src.len()
        )
        .into());
    }
    let mut buf = tensor_core::try_zeroed("HDF5 metadata", n as usize).map_err(LinkError::Limit)?;
    src.read_at(at, &mut buf)
        .map_err(|e| LinkError::Format(e.to_string()))?;
    Ok(buf)
}

/// A little-endian integer of `n` bytes at `at` of `b`.
pub(super) fn uint(b: &[u8], at: usize, n: usize) -> R<u64> {
    let s = b
        .get(at..at.checked_add(n).ok_or("overflow")?)
        .ok_or_else(|| format!("a field at {at} of a {}-byte structure", b.len()))?;
    Ok(s.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
}

impl Geometry {
    /// The absolute address of the stored address at `at` of `b`, `None`
    /// when undefined (all ones).
    pub(super) fn addr(&self, b: &[u8], at: usize) -> R<Option<u64>> {
        let v = uint(b, at, self.offsets)?;
        let undefined = if self.offsets >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * self.offsets)) - 1
        };
        if v == undefined {
            return Ok(None);
        }
        v.checked_add(self.base)
            .map(Some)
            .ok_or_else(|| "an address overflows".into())
    }

    /// The length stored at `at` of `b`.
    pub(super) fn len(&self, b: &[u8], at: usize) -> R<u64> {
        uint(b, at, self.lengths)
    }
}

/// The messages of interest in one object header.
#[derive(Default)]
struct Header {
    /// The symbol table message: (B-tree, local heap).
    symbol_table: Option<(u64, u64)>,
    /// Link messages.
    links: Vec<(String, Target)>,
    /// A link info message with dense storage: (fractal heap, name index).
    dense: Option<(u64, u64)>,
}

/// The hard and other links of the group whose object header is at `addr`
/// (dense storage read within `budget`).
pub(super) fn links_of(
    src: &dyn Source,
    g: &Geometry,
    addr: u64,
    budget: &Budget<'_>,
) -> R<Vec<(String, Target)>> {
    let mut h = header(src, g, addr)?;
    if let Some((btree, heap)) = h.symbol_table {
        return symbol_table(src, g, btree, heap);
    }
    if let Some((heap, names)) = h.dense {
        let mut v = dense::links(src, g, heap, names, budget)?;
        // (a valid group has no link messages beside dense storage)
        v.append(&mut h.links);
        return Ok(v);
    }
    Ok(h.links)
}

/// Reads the object header at `addr` (its chunks, each once).
fn header(src: &dyn Source, g: &Geometry, addr: u64) -> R<Header> {
    let first = read(src, addr, 16.min(src.len().saturating_sub(addr)))?;
    let mut out = Header::default();
    let mut seen = HashSet::new();
    // (start, length) of the blocks of messages still to read
    let mut todo: Vec<(u64, u64)> = Vec::new();
    let v2 = first.starts_with(b"OHDR");
    if v2 {
        let flags = *first.get(5).ok_or("short header")?;
        let mut at = 6usize;
        if flags & 0x20 != 0 {
            at += 16;
        }
        if flags & 0x10 != 0 {
            at += 4;
        }
        let width = 1usize << (flags & 3);
        let prefix = read(src, addr, (at + width) as u64)?;
        let size = uint(&prefix, at, width)?;
        let start = addr.checked_add((at + width) as u64).ok_or("overflow")?;
        todo.push((start, size));
    } else if first.first() == Some(&1) {
        let size = uint(&first, 8, 4)?;
        todo.push((addr.checked_add(16).ok_or("overflow")?, size));
    } else {
        return Err(format!("no object header at byte {addr}").into());
    }
    let mut blocks = 0;
    while let Some((start, size)) = todo.pop() {
        blocks += 1;
        if blocks > MAX_BLOCKS || !seen.insert(start) {
            return Err(format!(
                "the object header at byte {addr} has a loop or over {MAX_BLOCKS} blocks"
            )
            .into());
        }
        let block = read(src, start, size)?;
        let body: &[u8] = if v2 && blocks > 1 {
            // "OCHK", messages, checksum
            if !block.starts_with(b"OCHK") || block.len() < 8 {
                return Err(format!("no continuation block at byte {start}").into());
            }
            &block[4..block.len() - 4]
        } else {
            &block
        };
        messages(
            body,
            v2,
            first.get(5).copied().unwrap_or(0),
            g,
            &mut out,
            &mut todo,
        )?;
    }
    Ok(out)
}

/// The messages of one block of a header.
fn messages(
    body: &[u8],
    v2: bool,
    flags: u8,
    g: &Geometry,
    out: &mut Header,
    todo: &mut Vec<(u64, u64)>,
) -> R<()> {
    let head = if v2 {
        4 + if flags & 0x04 != 0 { 2 } else { 0 }
    } else {
        8
    };
    let mut at = 0usize;
    while at + head <= body.len() {
        let (kind, size) = if v2 {
            (uint(body, at, 1)?, uint(body, at + 1, 2)? as usize)
        } else {
            (uint(body, at, 2)?, uint(body, at + 2, 2)? as usize)
        };
        let from = at + head;
        let data = body
            .get(from..from + size)
            .ok_or_else(|| format!("a message of {size} bytes runs past its block"))?;
        match kind {
            0x10 => {
                let Some(a) = g.addr(data, 0)? else {
                    return Err("a continuation to an undefined address".into());
                };
                todo.push((a, g.len(data, g.offsets)?));
            }
            0x11 => {
                let (b, h) = (g.addr(data, 0)?, g.addr(data, g.offsets)?);
                match (b, h) {
                    (Some(b), Some(h)) => out.symbol_table = Some((b, h)),
                    _ => return Err("a symbol table at an undefined address".into()),
                }
            }
            0x02 => {
                // version 0, flags (bit 0: a creation order field follows),
                // the fractal heap and the name index (undefined when the
                // links are compact)
                if uint(data, 0, 1)? != 0 {
                    return Err("a link info message of another version".into());
                }
                let lflags = uint(data, 1, 1)?;
                let at = if lflags & 1 != 0 { 10 } else { 2 };
                match (g.addr(data, at)?, g.addr(data, at + g.offsets)?) {
                    (Some(heap), Some(names)) => out.dense = Some((heap, names)),
                    (None, _) => {}
                    (Some(_), None) => {
                        return Err("dense links without a name index".into());
                    }
                }
            }
            0x06 => {
                if out.links.len() >= MAX_LINKS {
                    return Err(format!("over {MAX_LINKS} links").into());
                }
                out.links.push(link(data, g)?);
            }
            _ => {}
        }
        at = from + size;
    }
    Ok(())
}

/// One link message: its name and target.
pub(super) fn link(d: &[u8], g: &Geometry) -> R<(String, Target)> {
    let flags = uint(d, 1, 1)?;
    let mut at = 2usize;
    let mut kind = 0;
    if flags & 0x08 != 0 {
        kind = uint(d, at, 1)?;
        at += 1;
    }
    if flags & 0x04 != 0 {
        at += 8;
    }
    if flags & 0x10 != 0 {
        at += 1;
    }
    let width = 1usize << (flags & 3);
    let n = uint(d, at, width)? as usize;
    at += width;
    let name = d
        .get(at..at.checked_add(n).ok_or("overflow")?)
        .ok_or("a link name runs past its message")?;
    let name = String::from_utf8_lossy(name).into_owned();
    at += n;
    let target = match (kind, g.addr(d, at)?) {
        (0, Some(a)) => Target::Hard(a),
        (0, None) => {
            return Err(format!("link {name:?} points at an undefined address").into());
        }
        _ => Target::Other,
    };
    Ok((name, target))
}

/// The links of an old-style group: a version-1 B-tree of symbol-table
/// nodes, names in the local heap.
fn symbol_table(src: &dyn Source, g: &Geometry, btree: u64, heap: u64) -> R<Vec<(String, Target)>> {
    let o = g.offsets;
    let hh = read(src, heap, (8 + 2 * g.lengths + o) as u64)?;
    if !hh.starts_with(b"HEAP") {
        return Err(format!("no local heap at byte {heap}").into());
    }
    let size = g.len(&hh, 8)?;
    let data_at = g
        .addr(&hh, 8 + 2 * g.lengths)?
        .ok_or("a local heap without data")?;
    let names = read(src, data_at, size)?;
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut todo = vec![btree];
    while let Some(node) = todo.pop() {
        if !seen.insert(node) || seen.len() > MAX_NODES {
            return Err(format!(
                "the group's B-tree has a loop or over {MAX_NODES} nodes (at byte {node})"
            )
            .into());
        }
        let head = read(src, node, (8 + 2 * o) as u64)?;
        if !head.starts_with(b"TREE") || head[4] != 0 {
            return Err(format!("no group B-tree node at byte {node}").into());
        }
        let level = head[5];
        let used = uint(&head, 6, 2)? as usize;
        // keys (lengths) and children (addresses), interleaved
        let step = g.lengths + o;
        let n = (8 + 2 * o + used * step + g.lengths) as u64;
        let b = read(src, node, n)?;
        for i in 0..used {
            let at = 8 + 2 * o + i * step + g.lengths;
            let child = g
                .addr(&b, at)?
                .ok_or("a B-tree child at an undefined address")?;
            if level > 0 {
                todo.push(child);
            } else {
                snod(src, g, child, &names, &mut out)?;
            }
        }
    }
    Ok(out)
}

/// The entries of one symbol-table node.
fn snod(
    src: &dyn Source,
    g: &Geometry,
    at: u64,
    names: &[u8],
    out: &mut Vec<(String, Target)>,
) -> R<()> {
    let o = g.offsets;
    let head = read(src, at, 8)?;
    if !head.starts_with(b"SNOD") {
        return Err(format!("no symbol-table node at byte {at}").into());
    }
    let count = uint(&head, 6, 2)? as usize;
    let entry = 2 * o + 24;
    let b = read(src, at + 8, (count * entry) as u64)?;
    for i in 0..count {
        if out.len() >= MAX_LINKS {
            return Err(format!("over {MAX_LINKS} links").into());
        }
        let e = i * entry;
        let name_at = usize::try_from(uint(&b, e, o)?).map_err(|_| "a name offset")?;
        let name = names
            .get(name_at..)
            .and_then(|s| s.split(|&c| c == 0).next())
            .ok_or_else(|| format!("a link name at {name_at} is outside its heap"))?;
        // cache type 2: a soft link (its value in the scratch pad)
        let t = if uint(&b, e + 2 * o, 4)? == 2 {
            Target::Other
        } else {
            Target::Hard(
                g.addr(&b, e + o)?
                    .ok_or("a symbol-table entry at an undefined address")?,
            )
        };
        out.push((String::from_utf8_lossy(name).into_owned(), t));
    }
    Ok(())
}
