//! The links of a group in dense storage, resolved to the object headers
//! they point at: what HDF5 1.8+ writes for a new-style group of more than
//! 8 links (`libver="latest"` in h5py), or for a group that tracks the
//! creation order of its links.
//!
//! The group's Link Info message names two structures (the format facts of
//! the HDF5 file format specification, sections III.A.2 and III.G):
//!
//! - a **fractal heap** holding one Link message per link: a header
//!   (`FRHP`), then a doubling table of blocks, each row `width` blocks of
//!   the same size (the first two rows of the starting block size, each next
//!   row twice the one before), rooted at a direct block (`FHDB`, holding
//!   objects) or an indirect block (`FHIB`, the addresses of the blocks of
//!   its rows: direct blocks up to the maximum direct block size, indirect
//!   blocks for the larger rows). An object is named by a heap ID: its
//!   offset in the heap's linear address space and its length (a managed
//!   object), or its bytes themselves (a tiny object);
//! - a **version-2 B-tree** of type 5 (`BTHD` header, `BTIN` internal and
//!   `BTLF` leaf nodes) indexing the links by the lookup3 hash of their
//!   names: each record is that hash and the heap ID of the Link message.
//!
//! Every record of the name index is read (internal nodes hold records
//! too), its heap object located and parsed as a Link message. Checked on
//! the way: every signature, version and checksum (the heap header, each
//! indirect block, each direct block when the heap says they are
//! checksummed, the B-tree header and each node), each block's heap address
//! and offset against where it was reached from, each record's hash against
//! its link's name, the record count against the header's ([`super::btree2`]).
//!
//! A Link message larger than the heap's managed objects (a name of some
//! 4 KiB or more) is a *huge* object, stored on its own: its heap ID holds
//! its address and length, or (h5py's 7-byte IDs) a key into the heap's
//! second B-tree (type 1: address, length, key), read once when the first
//! huge link is met. Heaps with I/O filters (no group's heap has them) and
//! heap IDs of other kinds are refused with an error.
//!
//! Work is bounded: each read at most [`super::links`]'s metadata read and
//! inside the file, block sizes powers of two no larger than that, each
//! B-tree node and heap block read once (a loop is an error), at most
//! `MAX_BLOCKS` indirect blocks, and every byte read charged to the walk's
//! [`Budget`] (scaled to the file's length: a well-formed file reads each of
//! its structures once) and the blocks kept to
//! [`tensor_core::Limits::max_alloc`].

use std::cell::Cell;
use std::collections::HashMap;

use hdf5_pure::Source;
use tensor_core::Limits;

use super::btree2::{HUGE_OBJECTS, NAME_INDEX, Tree};
use super::links::{self, Geometry, LinkError, R, Target, read, uint};
use super::lookup3::checksum;

/// The most indirect blocks one heap has.
const MAX_BLOCKS: usize = 1 << 16;
/// The most rows of an indirect block (a row's blocks double each row: 64
/// rows span any 64-bit heap).
const MAX_ROWS: u64 = 64;
/// The longest heap ID read (h5py's link heaps use 7 bytes).
const MAX_ID_LEN: usize = 64;

/// What the walk may still read of dense link storage, and the limits that
/// bound what it keeps.
pub(super) struct Budget<'l> {
    /// Bytes left to read.
    pub left: Cell<u64>,
    /// The read's limits ([`Limits::max_alloc`] bounds the blocks kept).
    pub limits: &'l Limits,
}

impl<'l> Budget<'l> {
    /// The budget of a walk of a file of `len` bytes: twice the file and
    /// 1 MiB, enough for a file whose groups each read their own structures
    /// once.
    pub fn for_file(len: u64, limits: &'l Limits) -> Self {
        Budget {
            left: Cell::new(len.saturating_mul(2).saturating_add(1 << 20)),
            limits,
        }
    }
}

/// The links of the group whose Link Info message names the fractal heap
/// at `heap` and the name index at `names`. The budget is charged only
/// when the whole read succeeds (a read run again from the start charges
/// once).
pub(super) fn links(
    src: &dyn Source,
    g: &Geometry,
    heap: u64,
    names: u64,
    budget: &Budget<'_>,
) -> R<Vec<(String, Target)>> {
    let mut r = Reader {
        src,
        g,
        left: budget.left.get(),
        limits: budget.limits,
        kept: 0,
    };
    let mut h = Heap::read(&mut r, heap)?;
    let tree = Tree::read(&mut r, names, NAME_INDEX, 4 + h.id_len)?;
    let mut out = Vec::new();
    tree.records(&mut r, |r, record| {
        if out.len() >= links::MAX_LINKS {
            return Err(format!("over {} links", links::MAX_LINKS).into());
        }
        let hash = uint(record, 0, 4)?;
        let object = h.object(r, record.get(4..).unwrap_or_default())?;
        let (name, target) = links::link(&object, g)?;
        if u64::from(checksum(name.as_bytes())) != hash {
            return Err(format!("the name index's hash of link {name:?} is wrong").into());
        }
        out.push((name, target));
        Ok(())
    })?;
    budget.left.set(r.left);
    Ok(out)
}

/// Reads charged to a budget.
pub(super) struct Reader<'a> {
    src: &'a dyn Source,
    /// The file's address geometry.
    pub g: &'a Geometry,
    left: u64,
    limits: &'a Limits,
    /// Bytes of heap blocks kept.
    kept: u64,
}

impl Reader<'_> {
    /// `n` bytes at `at`, charged to the budget.
    pub fn read(&mut self, at: u64, n: u64) -> R<Vec<u8>> {
        self.left = self.left.checked_sub(n).ok_or_else(|| {
            format!("dense link storage reads more than twice the file's bytes (at byte {at})")
        })?;
        read(self.src, at, n)
    }

    /// Reads a block to be kept, within [`Limits::max_alloc`] for all kept.
    fn keep(&mut self, at: u64, n: u64) -> R<Vec<u8>> {
        self.kept = self.kept.checked_add(n).ok_or("overflow")?;
        self.limits
            .check_alloc("HDF5 link heap blocks", self.kept)
            .map_err(LinkError::Limit)?;
        self.read(at, n)
    }
}

/// The checksum of `b` (its last 4 bytes) is the lookup3 hash of the rest.
pub(super) fn verify(b: &[u8], what: &str, at: u64) -> R<()> {
    let n = b.len().checked_sub(4).ok_or("a short structure")?;
    if uint(b, n, 4)? != u64::from(checksum(&b[..n])) {
        return Err(format!("the checksum of the {what} at byte {at} is wrong").into());
    }
    Ok(())
}

/// The fewest bytes that hold `v` (at least 1).
pub(super) fn bytes_for(v: u64) -> usize {
    ((64 - v.leading_zeros() as usize).div_ceil(8)).max(1)
}

/// `v` when it is a power of two.
fn power_of_two(v: u64, what: &str) -> R<u64> {
    if v.is_power_of_two() {
        Ok(v)
    } else {
        Err(format!("a fractal heap's {what} ({v}) is not a power of two").into())
    }
}

/// A fractal heap's header, and the blocks read from it.
struct Heap {
    addr: u64,
    /// Bytes of a heap ID.
    id_len: usize,
    /// Direct blocks carry a checksum.
    checksummed: bool,
    width: u64,
    start: u64,
    /// Rows of direct blocks in an indirect block.
    direct_rows: u64,
    /// Bytes of a block offset (and of a managed ID's offset).
    offset_len: usize,
    /// Bytes of a managed ID's length.
    length_len: usize,
    /// The root block and its rows (0: a direct block).
    root: Option<u64>,
    root_rows: u64,
    /// The index of huge objects, and what it maps (key to address and
    /// length) once read.
    huge_index: Option<u64>,
    huge: Option<HashMap<u64, (u64, u64)>>,
    /// Indirect blocks read: address to (rows, offset, child addresses).
    indirect: HashMap<u64, (u64, u64, Vec<Option<u64>>)>,
    /// Direct blocks read: address to (offset, bytes).
    direct: HashMap<u64, (u64, Vec<u8>)>,
}

impl Heap {
    fn read(r: &mut Reader<'_>, addr: u64) -> R<Heap> {
        let (o, l) = (r.g.offsets, r.g.lengths);
        // up to the filter information: 22 + 3 O + 12 L bytes
        let fixed = 22 + 3 * o + 12 * l;
        let b = r.read(addr, (fixed + 4) as u64)?;
        if !b.starts_with(b"FRHP") || b.get(4) != Some(&0) {
            return Err(format!("no fractal heap (version 0) at byte {addr}").into());
        }
        if uint(&b, 7, 2)? != 0 {
            return Err(
                format!("the fractal heap at byte {addr} has I/O filters (not read)").into(),
            );
        }
        verify(&b, "fractal heap header", addr)?;
        let id_len = uint(&b, 5, 2)? as usize;
        let flags = uint(&b, 9, 1)?;
        let max_managed = uint(&b, 10, 4)?;
        // after 10 lengths and 2 offsets
        let at = 14 + 2 * o + 10 * l;
        let width = power_of_two(uint(&b, at, 2)?, "table width")?;
        let start = power_of_two(r.g.len(&b, at + 2)?, "starting block size")?;
        let max_direct = power_of_two(r.g.len(&b, at + 2 + l)?, "largest direct block")?;
        let bits = uint(&b, at + 2 + 2 * l, 2)?;
        let huge_index = r.g.addr(&b, 14 + l)?;
        let root = r.g.addr(&b, at + 6 + 2 * l)?;
        let root_rows = uint(&b, at + 6 + 2 * l + o, 2)?;
        let offset_len = (bits as usize).div_ceil(8);
        if !(1..=64).contains(&bits) || max_direct < start || max_direct > links::MAX_READ {
            return Err(format!(
                "the fractal heap at byte {addr} claims a {bits}-bit heap of blocks from \
                 {start} to {max_direct} bytes"
            )
            .into());
        }
        // the smallest block holds its own prefix and checksum
        if start < (5 + o + offset_len + 4) as u64 || root_rows > MAX_ROWS {
            return Err(format!(
                "the fractal heap at byte {addr} has blocks of {start} bytes and {root_rows} rows"
            )
            .into());
        }
        if !(1..=MAX_ID_LEN).contains(&id_len) {
            return Err(
                format!("the fractal heap at byte {addr} has {id_len}-byte heap IDs").into(),
            );
        }
        let direct_rows = u64::from(max_direct.trailing_zeros() - start.trailing_zeros()) + 2;
        Ok(Heap {
            addr,
            id_len,
            checksummed: flags & 2 != 0,
            width,
            start,
            direct_rows,
            offset_len,
            length_len: bytes_for(max_direct.min(max_managed)),
            root,
            root_rows,
            huge_index,
            huge: None,
            indirect: HashMap::new(),
            direct: HashMap::new(),
        })
    }

    /// The bytes of the object that heap ID `id` names.
    fn object(&mut self, r: &mut Reader<'_>, id: &[u8]) -> R<Vec<u8>> {
        let first = *id.first().ok_or("an empty heap ID")?;
        if first >> 6 != 0 {
            return Err(format!("a heap ID of version {}", first >> 6).into());
        }
        match (first >> 4) & 3 {
            0 => {
                let off = uint(id, 1, self.offset_len)?;
                let len = uint(id, 1 + self.offset_len, self.length_len)?;
                self.managed(r, off, len)
            }
            // tiny: the object is in the ID (the extended form past 18 bytes)
            2 => {
                let (len, from) = if id.len() <= 18 {
                    (usize::from(first & 0x0f) + 1, 1)
                } else {
                    let low = *id.get(1).ok_or("a short heap ID")?;
                    ((usize::from(first & 0x0f) << 8 | usize::from(low)) + 1, 2)
                };
                Ok(id
                    .get(from..from + len)
                    .ok_or("a tiny heap object longer than its ID")?
                    .to_vec())
            }
            1 => self.huge(r, id),
            t => Err(format!("a heap ID of type {t}").into()),
        }
    }

    /// The bytes of the huge object that heap ID `id` names.
    fn huge(&mut self, r: &mut Reader<'_>, id: &[u8]) -> R<Vec<u8>> {
        let (o, l) = (r.g.offsets, r.g.lengths);
        let (at, len) = if id.len() > o + l {
            // directly accessed: the address and length are in the ID
            let at =
                r.g.addr(id, 1)?
                    .ok_or("a huge heap object at an undefined address")?;
            (at, r.g.len(id, 1 + o)?)
        } else {
            let key = uint(id, 1, (id.len() - 1).min(l))?;
            if self.huge.is_none() {
                self.huge = Some(self.huge_objects(r)?);
            }
            self.huge
                .as_ref()
                .and_then(|m| m.get(&key).copied())
                .ok_or_else(|| format!("huge heap object {key} is not in its index"))?
        };
        if len == 0 {
            return Err("an empty huge heap object".into());
        }
        r.limits
            .check_alloc("HDF5 huge link", len)
            .map_err(LinkError::Limit)?;
        r.read(at, len)
    }

    /// The heap's index of huge objects: key to address and length.
    fn huge_objects(&self, r: &mut Reader<'_>) -> R<HashMap<u64, (u64, u64)>> {
        let index = self
            .huge_index
            .ok_or("a huge heap object in a heap without their index")?;
        let (o, l) = (r.g.offsets, r.g.lengths);
        let tree = Tree::read(r, index, HUGE_OBJECTS, o + 2 * l)?;
        let mut map = HashMap::new();
        tree.records(r, |r, rec| {
            let at =
                r.g.addr(rec, 0)?
                    .ok_or("a huge heap object at an undefined address")?;
            map.insert(r.g.len(rec, o + l)?, (at, r.g.len(rec, o)?));
            Ok(())
        })?;
        Ok(map)
    }

    /// The size of the blocks of row `row` of the doubling table.
    fn row_size(&self, row: u64) -> R<u64> {
        let doubling = 1u64
            .checked_shl(row.saturating_sub(1) as u32)
            .filter(|_| row <= 64)
            .ok_or("a heap row past 64")?;
        Ok(self
            .start
            .checked_mul(doubling)
            .ok_or("a heap block size overflows")?)
    }

    /// The `len` bytes at offset `off` of the heap's managed space.
    fn managed(&mut self, r: &mut Reader<'_>, off: u64, len: u64) -> R<Vec<u8>> {
        let root = self.root.ok_or("a link in an empty fractal heap")?;
        let (block, at, size) = if self.root_rows == 0 {
            (root, 0, self.start)
        } else {
            self.find(r, root, off)?
        };
        let prefix = (5 + r.g.offsets + self.offset_len) as u64;
        let data_from = prefix + if self.checksummed { 4 } else { 0 };
        let b = self.direct_block(r, block, at, size)?;
        let from = off
            .checked_sub(at)
            .ok_or("a heap offset before its block")?;
        let end = from.checked_add(len).ok_or("overflow")?;
        if len == 0 || from < data_from || end > size {
            return Err(format!(
                "a heap object of {len} bytes at offset {off} is outside its {size}-byte block"
            )
            .into());
        }
        Ok(b.get(from as usize..end as usize)
            .ok_or("a heap object past its block")?
            .to_vec())
    }

    /// The direct block holding heap offset `off`: its address, heap
    /// offset and size, found from the root indirect block down.
    fn find(&mut self, r: &mut Reader<'_>, root: u64, off: u64) -> R<(u64, u64, u64)> {
        let (mut block, mut rows, mut base) = (root, self.root_rows, 0u64);
        // each child has fewer rows than its parent: at most MAX_ROWS steps
        for _ in 0..=MAX_ROWS {
            self.indirect_block(r, block, rows, base)?;
            let mut row_start = base;
            let mut next = None;
            for row in 0..rows {
                let size = self.row_size(row)?;
                let span = size.checked_mul(self.width).ok_or("overflow")?;
                let row_end = row_start.checked_add(span).ok_or("overflow")?;
                if off >= row_end {
                    row_start = row_end;
                    continue;
                }
                let col = (off - row_start) / size;
                let at = row_start + col * size;
                let child = self
                    .indirect
                    .get(&block)
                    .and_then(|(_, _, c)| c.get((row * self.width + col) as usize))
                    .copied()
                    .flatten()
                    .ok_or_else(|| format!("heap offset {off} is in a block never written"))?;
                if row < self.direct_rows {
                    return Ok((child, at, size));
                }
                // an indirect block for a row of `size` bytes: its rows
                // span that size
                let unit = self.start.checked_mul(self.width).ok_or("overflow")?;
                if size < unit {
                    return Err("a heap's indirect block smaller than a row".into());
                }
                let child_rows =
                    u64::from(size.trailing_zeros()) - u64::from(unit.trailing_zeros()) + 1;
                next = Some((child, child_rows, at));
                break;
            }
            match next {
                Some((b, n, at)) => (block, rows, base) = (b, n, at),
                None => return Err(format!("heap offset {off} is past the heap's blocks").into()),
            }
        }
        Err("the heap's indirect blocks nest too deep".into())
    }

    /// Reads the indirect block at `addr` (`rows` rows, at heap offset
    /// `base`) into `self.indirect`, once.
    fn indirect_block(&mut self, r: &mut Reader<'_>, addr: u64, rows: u64, base: u64) -> R<()> {
        if let Some((n, at, _)) = self.indirect.get(&addr) {
            if (*n, *at) != (rows, base) {
                return Err(
                    format!("the heap's indirect block at byte {addr} is reached twice").into(),
                );
            }
            return Ok(());
        }
        if self.indirect.len() >= MAX_BLOCKS {
            return Err(format!("a fractal heap of over {MAX_BLOCKS} indirect blocks").into());
        }
        let o = r.g.offsets;
        let entries = rows.checked_mul(self.width).ok_or("overflow")?;
        let prefix = 5 + o + self.offset_len;
        let n = entries
            .checked_mul(o as u64)
            .and_then(|e| e.checked_add(prefix as u64 + 4))
            .ok_or("overflow")?;
        let b = r.keep(addr, n)?;
        self.check_block(&b, r.g, b"FHIB", addr, base)?;
        verify(&b, "fractal heap indirect block", addr)?;
        let mut children = Vec::new();
        tensor_core::try_reserve(&mut children, "heap block addresses", entries as usize)
            .map_err(LinkError::Limit)?;
        for i in 0..entries as usize {
            children.push(r.g.addr(&b, prefix + i * o)?);
        }
        self.indirect.insert(addr, (rows, base, children));
        Ok(())
    }

    /// The direct block at `addr` (`size` bytes at heap offset `base`),
    /// read once.
    fn direct_block(&mut self, r: &mut Reader<'_>, addr: u64, base: u64, size: u64) -> R<&[u8]> {
        if !self.direct.contains_key(&addr) {
            let mut b = r.keep(addr, size)?;
            self.check_block(&b, r.g, b"FHDB", addr, base)?;
            if self.checksummed {
                // the checksum after the prefix covers the whole block,
                // read with the checksum's own bytes as zeros
                let at = 5 + r.g.offsets + self.offset_len;
                let stored = uint(&b, at, 4)?;
                b.get_mut(at..at + 4).ok_or("a short block")?.fill(0);
                if stored != u64::from(checksum(&b)) {
                    return Err(format!(
                        "the checksum of the fractal heap direct block at byte {addr} is wrong"
                    )
                    .into());
                }
            }
            self.direct.insert(addr, (base, b));
        }
        match self.direct.get(&addr) {
            Some((at, b)) if *at == base && b.len() as u64 == size => Ok(b),
            _ => Err(format!("the heap's direct block at byte {addr} is reached twice").into()),
        }
    }

    /// A heap block's signature, version, heap address and offset.
    fn check_block(&self, b: &[u8], g: &Geometry, sig: &[u8; 4], addr: u64, base: u64) -> R<()> {
        let what = String::from_utf8_lossy(sig);
        if !b.starts_with(sig) || b.get(4) != Some(&0) {
            return Err(format!("no fractal heap block {what} at byte {addr}").into());
        }
        let heap = g.addr(b, 5)?;
        let at = uint(b, 5 + g.offsets, self.offset_len)?;
        if heap != Some(self.addr) || at != base {
            return Err(format!(
                "the heap block {what} at byte {addr} belongs to another heap or place"
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in memory.
    struct Bytes(Vec<u8>);

    impl Source for Bytes {
        fn len(&self) -> u64 {
            self.0.len() as u64
        }

        fn read_at(
            &self,
            offset: u64,
            buf: &mut [u8],
        ) -> std::result::Result<(), hdf5_pure::FormatError> {
            let s = usize::try_from(offset)
                .ok()
                .and_then(|a| self.0.get(a..a.checked_add(buf.len())?))
                .ok_or(hdf5_pure::FormatError::UnexpectedEof {
                    expected: buf.len(),
                    available: 0,
                })?;
            buf.copy_from_slice(s);
            Ok(())
        }
    }

    fn at(b: &[u8], sig: &[u8]) -> u64 {
        b.windows(4).position(|w| w == sig).unwrap() as u64
    }

    #[test]
    fn each_structure_is_read_once_and_charged_on_success() {
        let file = include_bytes!("../../testdata/dense/dense20.h5").to_vec();
        let (heap, names) = (at(&file, b"FRHP"), at(&file, b"BTHD"));
        let g = Geometry {
            offsets: 8,
            lengths: 8,
            base: 0,
        };
        let src = Bytes(file);
        let limits = Limits::default();
        let budget = Budget {
            left: Cell::new(10_000),
            limits: &limits,
        };
        let links = links(&src, &g, heap, names, &budget).unwrap();
        let mut names_read: Vec<&str> = links.iter().map(|l| l.0.as_str()).collect();
        names_read.sort_unstable();
        let want: Vec<String> = (0..20).map(|i| format!("d{i:02}")).collect();
        assert_eq!(names_read, want);
        assert!(links.iter().all(|l| matches!(l.1, Target::Hard(_))));
        // the heap header, the tree's header and leaf (20 records of 11
        // bytes), the heap's one direct block: each read once
        let read = 146 + 38 + (6 + 20 * 11 + 4) + 512;
        assert_eq!(budget.left.get(), 10_000 - read);
        // a byte short: refused, and nothing charged
        budget.left.set(read - 1);
        let e = super::links(&src, &g, heap, names, &budget).unwrap_err();
        assert!(
            matches!(&e, LinkError::Format(m) if m.contains("more than twice")),
            "{e:?}"
        );
        assert_eq!(budget.left.get(), read - 1);
    }
}
