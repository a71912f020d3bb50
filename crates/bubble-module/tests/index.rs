//! `Module::index` (the structure through `Read + Seek`, tensors located)
//! against `Module::parse_with` on the same bytes: on every golden module
//! of testdata/tennis (and its subfolders), the same tensors (names, dtypes,
//! shapes, and the bytes at the offsets given) and the same graph; on
//! truncated and byte-mutated copies, the same error message or the same
//! result, never a panic.

mod common;

use std::io::Cursor;
use std::path::{Path, PathBuf};

use bubble_module::{Module, ReadOptions};
use common::testdata;

fn modules(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            modules(&p, out);
        } else if p.extension().is_some_and(|x| x == "tsm") {
            out.push(p);
        }
    }
}

fn goldens() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    modules(&testdata(), &mut v);
    v.sort();
    v.into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

/// Both readers on `bytes` with `opts`: equal results or equal errors.
/// Returns whether the module read.
fn same(name: &str, bytes: &[u8], opts: &ReadOptions) -> bool {
    let whole = Module::parse_with(bytes, opts);
    let index = Module::index(Cursor::new(bytes), opts);
    match (whole, index) {
        (Ok(m), Ok(ix)) => {
            // as text: attributes may hold NaN
            let (a, b) = (format!("{:?}", ix.graph()), format!("{:?}", m.to_graph()));
            assert!(a == b, "{name}: the graphs differ");
            assert_eq!(ix.end_offset(), m.end_offset() as u64, "{name}");
            let stored = m.named_tensors();
            let unique = m.unique_named_tensors();
            assert_eq!(ix.tensors().len(), stored.len(), "{name}");
            for ((t, (sn, want)), (un, _)) in ix.tensors().iter().zip(stored).zip(unique) {
                assert_eq!(t.name, un, "{name}");
                assert_eq!(t.stored_name, sn, "{name}");
                assert_eq!(t.dtype, want.dtype(), "{name} {un}");
                assert_eq!(t.dims, want.dims(), "{name} {un}");
                let at = t.offset as usize;
                let data = &bytes[at..at + t.len as usize];
                assert_eq!(data, want.bytes(), "{name} {un}");
            }
            true
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{name}");
            false
        }
        (a, b) => panic!(
            "{name}: whole {:?}, index {:?}",
            a.map(|_| ()),
            b.map(|_| ())
        ),
    }
}

#[test]
fn the_index_equals_the_whole_module() {
    let mut read = 0;
    for (name, bytes) in goldens() {
        for opts in [ReadOptions::default(), ReadOptions::structural()] {
            read += same(&name, &bytes, &opts) as usize;
        }
    }
    assert!(read >= 30, "{read} goldens read");
}

#[test]
fn hostile_modules_fail_the_same_way() {
    let mut cases = 0;
    let opts = ReadOptions::default().with_reject_trailing(true);
    for (name, bytes) in goldens().into_iter().step_by(5) {
        let len = bytes.len();
        let mut cuts: Vec<usize> = (0..len.min(200)).collect();
        cuts.extend((200..len).step_by(37));
        for cut in cuts {
            same(&name, &bytes[..cut], &opts);
            cases += 1;
        }
        // each structural byte, changed three ways, and bytes further in
        let mut at: Vec<usize> = (0..len.min(300)).collect();
        at.extend((300..len).step_by(13));
        for at in at {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= x;
                same(&name, &b, &opts);
                cases += 1;
            }
        }
        // claimed sizes of 2^31 - 1 at every word
        for at in (128..len.saturating_sub(4)).step_by(4) {
            let mut b = bytes.clone();
            b[at..at + 4].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
            same(&name, &b, &opts);
            cases += 1;
        }
    }
    assert!(cases > 1000, "{cases}");
}
