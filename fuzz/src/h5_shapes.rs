//! HDF5 files with hostile link shapes, built on purpose from the fuzz
//! input: many hard links naming one dataset, links from a group to itself,
//! its parent or the root (cycles), groups nested up to the walk's depth
//! limit, datasets declaring sizes far past the file, the same group reached
//! by several paths.
//!
//! The file is written by the crate's own writer
//! ([`mlformats::nnp::h5::StreamWriter`]: superblock v2, version-2 object
//! headers, compact link messages, contiguous data), then its link messages
//! are pointed at other object headers and its dataspaces given other
//! dimensions as the input chooses, and every object header's checksum is
//! made right again: the readers see a well-formed file whose *shape* is
//! hostile, not a byte flip a checksum refuses.
//!
//! Each choice takes the next byte of the input ([`Bytes`]).

use mlformats::nnp::h5::{DatasetSpec, StreamWriter, checksum};
use mlformats::tensor_core::{DType, Tensor};

use super::shapes::Bytes;

/// The deepest group path built: past the walk's depth limit (256), so the
/// limit's own error is reached too.
const MAX_BUILT_DEPTH: usize = 260;

/// A built file and what the reader may list from it.
pub struct H5Shape {
    /// The file.
    pub bytes: Vec<u8>,
    /// Dataset object headers in the file: each is read at most once
    /// whatever number of links name it, so a reader lists no more
    /// datasets than this.
    pub datasets: usize,
}

/// Where an object header's fields that the program changes are.
struct Header {
    start: usize,
    /// Where the checksum is (the header's last 4 bytes).
    sum_at: usize,
    /// The address field of each link message.
    links: Vec<usize>,
    /// The dataspace's rank and where its dimensions start.
    space: Option<(usize, usize)>,
    /// Where the contiguous layout's size is.
    layout_size: Option<usize>,
}

/// Builds an `.h5` from the fuzz input (see the module docs).
pub fn h5_program(data: &[u8]) -> H5Shape {
    let mut b = Bytes::new(data);
    let specs = datasets(&mut b);
    let Some(mut bytes) = write(&specs) else {
        return H5Shape {
            bytes: Vec::new(),
            datasets: 0,
        };
    };
    let headers = headers(&bytes);
    let datasets = headers.iter().filter(|h| h.space.is_some()).count();
    let links: Vec<usize> = headers.iter().flat_map(|h| h.links.clone()).collect();
    let targets: Vec<usize> = headers.iter().map(|h| h.start).collect();
    let first_dataset = headers.iter().find(|h| h.space.is_some()).map(|h| h.start);
    // every link to the first dataset (fan-in), or some links moved
    if b.pick(4) == 0
        && let Some(d) = first_dataset
    {
        for &at in &links {
            if b.pick(8) != 0 {
                put(&mut bytes, at, d as u64);
            }
        }
    }
    for _ in 0..b.pick(12) {
        if links.is_empty() || targets.is_empty() {
            break;
        }
        let at = links[b.pick(links.len())];
        // mostly an object header; sometimes anywhere (a stray address)
        let to = match b.pick(8) {
            0 => u64::from(b.u32()),
            _ => targets[b.pick(targets.len())] as u64,
        };
        put(&mut bytes, at, to);
    }
    // a declared size far past the file
    for _ in 0..b.pick(3) {
        let spaces: Vec<(usize, usize, Option<usize>)> = headers
            .iter()
            .filter_map(|h| h.space.map(|(rank, at)| (rank, at, h.layout_size)))
            .filter(|&(rank, _, _)| rank > 0)
            .collect();
        if spaces.is_empty() {
            break;
        }
        let (rank, at, size_at) = spaces[b.pick(spaces.len())];
        let axis = b.pick(rank);
        let dim = u64::from(b.u32()) << b.pick(40);
        put(&mut bytes, at + 8 * axis, dim);
        put(&mut bytes, at + 8 * (rank + axis), dim);
        if let Some(s) = size_at
            && b.pick(2) == 0
        {
            put(&mut bytes, s, dim.saturating_mul(4));
        }
    }
    for h in &headers {
        if let Some(sum) = bytes.get(h.start..h.sum_at).map(checksum) {
            put4(&mut bytes, h.sum_at, sum);
        }
    }
    H5Shape { bytes, datasets }
}

/// The datasets to write: a wide root, a deep chain or a small tree.
fn datasets(b: &mut Bytes<'_>) -> Vec<DatasetSpec> {
    let mut specs = Vec::new();
    match b.pick(3) {
        0 => {
            // many scalars in the root (each may become a link to one)
            for i in 0..=usize::from(b.byte()) {
                specs.push(
                    DatasetSpec::new(format!("d{i:03}"), DType::F32, []).with_need_grad(true),
                );
            }
        }
        1 => {
            let depth = b.pick(MAX_BUILT_DEPTH) + 1;
            let mut path = "g/".repeat(depth);
            path.push('w');
            specs.push(DatasetSpec::new(path, DType::F32, [2]).with_need_grad(true));
            specs.push(DatasetSpec::new("w", DType::F32, [1]).with_need_grad(true));
        }
        _ => {
            for i in 0..=b.pick(12) {
                let mut path = String::new();
                for _ in 0..b.pick(4) {
                    path.push(char::from(b'a' + b.pick(3) as u8));
                    path.push('/');
                }
                path.push_str(&format!("w{i}"));
                let dims: Vec<usize> = (0..b.pick(3)).map(|_| b.pick(5)).collect();
                specs.push(DatasetSpec::new(path, DType::F32, dims).with_need_grad(true));
            }
        }
    }
    specs
}

/// The file the writer makes of `specs` (zeros for data); `None` when it
/// refuses them (a path past its depth limit).
fn write(specs: &[DatasetSpec]) -> Option<Vec<u8>> {
    let mut w = StreamWriter::with_datasets(Vec::new(), specs).ok()?;
    for s in specs {
        let n = s.dims.iter().product::<usize>();
        let t = Tensor::new(DType::F32, s.dims.clone(), vec![0u8; 4 * n]).ok()?;
        w.write_data(&t).ok()?;
    }
    w.finish().ok()
}

/// The object headers the writer laid out one after another from the end
/// of the superblock (48 bytes), each with its fields located.
fn headers(bytes: &[u8]) -> Vec<Header> {
    let mut out = Vec::new();
    let mut pos = 48;
    while bytes.get(pos..pos + 4) == Some(b"OHDR") {
        let Some(h) = header(bytes, pos) else { break };
        pos = h.sum_at + 4;
        out.push(h);
    }
    out
}

fn header(bytes: &[u8], start: usize) -> Option<Header> {
    let flags = *bytes.get(start + 5)?;
    let width = 1usize << (flags & 3);
    let body = le(bytes, start + 6, width)? as usize;
    let mut at = start + 6 + width;
    let sum_at = at.checked_add(body)?;
    let mut h = Header {
        start,
        sum_at,
        links: Vec::new(),
        space: None,
        layout_size: None,
    };
    while at + 4 <= sum_at {
        let kind = *bytes.get(at)?;
        let size = le(bytes, at + 1, 2)? as usize;
        let d = at + 4;
        match kind {
            // Link: version, flags, [type], [creation order], [charset], name length, name, address
            0x06 => {
                let lflags = *bytes.get(d + 1)?;
                let mut i = d + 2;
                i += usize::from(lflags & 0x08 != 0) + 8 * usize::from(lflags & 0x04 != 0);
                i += usize::from(lflags & 0x10 != 0);
                let w = 1usize << (lflags & 3);
                i += w + le(bytes, i, w)? as usize;
                h.links.push(i);
            }
            // Dataspace v2: version, rank, flags, type, dims, max dims
            0x01 => h.space = Some((usize::from(*bytes.get(d + 1)?), d + 4)),
            // Data Layout v3 contiguous: version, class, address, size
            0x08 if bytes.get(d + 1) == Some(&1) => h.layout_size = Some(d + 10),
            _ => {}
        }
        at = d + size;
    }
    Some(h)
}

fn le(bytes: &[u8], at: usize, n: usize) -> Option<u64> {
    let s = bytes.get(at..at + n)?;
    Some(s.iter().rev().fold(0, |v, &x| (v << 8) | u64::from(x)))
}

fn put4(bytes: &mut [u8], at: usize, v: u32) {
    if let Some(s) = bytes.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

fn put(bytes: &mut [u8], at: usize, v: u64) {
    if let Some(s) = bytes.get_mut(at..at + 8) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}
