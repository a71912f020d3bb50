//! Version-2 B-trees (HDF5 file format specification, section III.A.2), as
//! far as [`super::dense`] needs them: every record of a tree read once, in
//! no particular order. A header (`BTHD`) gives the tree's type, node
//! size, record size, depth, root and record counts; internal nodes
//! (`BTIN`) hold records and a pointer to each child (its address, its
//! record count, and below the first level its subtree's record count, in
//! fields as wide as the largest such count the node size allows); leaf
//! nodes (`BTLF`) hold records. Every structure ends with a lookup3
//! checksum, checked; a node is read once (a loop is an error), at most
//! `MAX_NODES` of them, and the records found must be the header's count.

use std::collections::HashSet;

use super::dense::{Reader, bytes_for, verify};
use super::links::{self, R, uint};

/// The most nodes one tree has.
const MAX_NODES: usize = 1 << 16;
/// The deepest tree read (a tree of depth `d` has at least `2^d` nodes,
/// so a real one is far shallower).
const MAX_DEPTH: u64 = 32;

/// Which tree: its type and what an error calls it.
#[derive(Clone, Copy)]
pub(super) struct Kind {
    /// The type in the header and every node.
    pub ty: u8,
    /// What the tree is, for errors ("link name index").
    pub what: &'static str,
}

/// A group's link name index (type 5: name hash, heap ID).
pub(super) const NAME_INDEX: Kind = Kind {
    ty: 5,
    what: "link name index",
};

/// A fractal heap's index of huge objects, indirectly accessed and not
/// filtered (type 1: address, length, ID).
pub(super) const HUGE_OBJECTS: Kind = Kind {
    ty: 1,
    what: "huge object index",
};

/// A tree's shape, read from its header.
pub(super) struct Tree {
    kind: Kind,
    root: Option<u64>,
    root_records: u64,
    depth: u64,
    total: u64,
    node_size: u64,
    record: usize,
    /// Per depth: the most records of a node, and the bytes of the fields
    /// counting a child's records and its subtree's.
    max: Vec<u64>,
    count_len: Vec<usize>,
    total_len: Vec<usize>,
}

impl Tree {
    /// Reads the header at `addr` of a tree of `kind` whose records are
    /// `record_len` bytes.
    pub fn read(r: &mut Reader<'_>, addr: u64, kind: Kind, record_len: usize) -> R<Tree> {
        let (o, l) = (r.g.offsets, r.g.lengths);
        let Kind { ty, what } = kind;
        let b = r.read(addr, (16 + o + 2 + l + 4) as u64)?;
        if !b.starts_with(b"BTHD") || b.get(4) != Some(&0) || b.get(5) != Some(&ty) {
            return Err(format!("no {what} (B-tree v2 of type {ty}) at byte {addr}").into());
        }
        verify(&b, &format!("{what} header"), addr)?;
        let node_size = uint(&b, 6, 4)?;
        let record = uint(&b, 10, 2)? as usize;
        let depth = uint(&b, 12, 2)?;
        let root = r.g.addr(&b, 16)?;
        let root_records = uint(&b, 16 + o, 2)?;
        let total = r.g.len(&b, 18 + o)?;
        if record != record_len || node_size < 10 + record as u64 || node_size > links::MAX_READ {
            return Err(format!(
                "the {what} at byte {addr} has {node_size}-byte nodes of {record}-byte records"
            )
            .into());
        }
        if depth > MAX_DEPTH || total > links::MAX_LINKS as u64 {
            return Err(format!(
                "the {what} at byte {addr} claims depth {depth} and {total} records"
            )
            .into());
        }
        let mut t = Tree {
            kind,
            root,
            root_records,
            depth,
            total,
            node_size,
            record,
            max: vec![(node_size - 10) / record as u64],
            count_len: vec![0],
            total_len: vec![0],
        };
        // each depth's most records, from the leaves up; `cum` is the most
        // records under a node of the depth below
        let mut cum = t.max[0];
        for d in 1..=depth as usize {
            let count_len = bytes_for(t.max[d - 1]);
            let total_len = if d > 1 { bytes_for(cum) } else { 0 };
            let pointer = (o + count_len + total_len) as u64;
            let room = (node_size - 10).saturating_sub(pointer);
            let max = room / (record as u64 + pointer);
            if max == 0 {
                return Err(format!("the {what} at byte {addr} has nodes too small").into());
            }
            cum = max
                .checked_add(1)
                .and_then(|m| m.checked_mul(cum))
                .and_then(|c| c.checked_add(max))
                .unwrap_or(u64::MAX);
            t.max.push(max);
            t.count_len.push(count_len);
            t.total_len.push(total_len);
        }
        Ok(t)
    }

    /// Calls `each` with every record, checking every node.
    pub fn records(
        &self,
        r: &mut Reader<'_>,
        mut each: impl FnMut(&mut Reader<'_>, &[u8]) -> R<()>,
    ) -> R<()> {
        let Kind { ty, what } = self.kind;
        let Some(root) = self.root else {
            return if self.total == 0 {
                Ok(())
            } else {
                Err(format!("a {what} without a root claims records").into())
            };
        };
        let o = r.g.offsets;
        let mut seen = HashSet::new();
        let mut todo = vec![(root, self.depth, self.root_records)];
        let mut count = 0u64;
        while let Some((node, depth, n)) = todo.pop() {
            if !seen.insert(node) || seen.len() > MAX_NODES {
                return Err(format!(
                    "the {what} has a loop or over {MAX_NODES} nodes (at byte {node})"
                )
                .into());
            }
            let d = depth as usize;
            let max = self.max.get(d).copied().unwrap_or(0);
            if n > max {
                return Err(
                    format!("a {what} node at byte {node} claims {n} records, over {max}").into(),
                );
            }
            let n = n as usize;
            let count_len = self.count_len.get(d).copied().unwrap_or(0);
            let pointer = if d > 0 {
                o + count_len + self.total_len.get(d).copied().unwrap_or(0)
            } else {
                0
            };
            // records, a pointer more than records, the checksum
            let used = 6 + n * self.record + if d > 0 { (n + 1) * pointer } else { 0 } + 4;
            if used as u64 > self.node_size {
                return Err(format!("a {what} node at byte {node} overflows").into());
            }
            let b = r.read(node, used as u64)?;
            let sig: &[u8] = if d > 0 { b"BTIN" } else { b"BTLF" };
            if !b.starts_with(sig) || b.get(4) != Some(&0) || b.get(5) != Some(&ty) {
                return Err(format!("no {what} node at byte {node}").into());
            }
            verify(&b, &format!("{what} node"), node)?;
            for i in 0..n {
                let at = 6 + i * self.record;
                each(r, b.get(at..at + self.record).ok_or("a short node")?)?;
            }
            count += n as u64;
            if d > 0 {
                for i in 0..=n {
                    let at = 6 + n * self.record + i * pointer;
                    let child =
                        r.g.addr(&b, at)?
                            .ok_or_else(|| format!("a {what} child at an undefined address"))?;
                    let records = uint(&b, at + o, count_len)?;
                    todo.push((child, depth - 1, records));
                }
            }
        }
        if count != self.total {
            return Err(format!(
                "the {what} holds {count} records, its header says {}",
                self.total
            )
            .into());
        }
        Ok(())
    }
}
