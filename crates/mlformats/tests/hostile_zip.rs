//! Zip bombs and central-directory tricks in `.npz` and `.nnp`, read whole
//! ([`Document`]) and by slices ([`Document::open_at`], then every tensor
//! read): inflation bounded by the file's size (one budget per file), each
//! local entry read for one member at most, names listed as numpy lists
//! them, and a member declaring 4 GiB refused before anything is
//! allocated. Small files: built here, or in `testdata/hostile/` (made by
//! its `make_zip.py` with Python's zipfile and numpy).

use std::io::{Cursor, Write};
use std::path::Path;

use mlformats::tensor_core::{self, Limits, MappedFile};
use mlformats::{Document, Error, ReadOptions};
use zip::CompressionMethod;
use zip::write::SimpleFileOptions;

fn hostile(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hostile");
    std::fs::read(p.join(name)).unwrap()
}

/// A `.npy` of `n` float32 zeros (numpy's header, version 1).
fn npy_zeros(n: usize) -> Vec<u8> {
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}");
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend((header.len() as u16).to_le_bytes());
    v.extend(header);
    v.resize(v.len() + n * 4, 0);
    v
}

/// A zip of `members`, all deflated.
fn deflated(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in members {
        let o = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        z.start_file(name.as_str(), o).unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

/// `n` deflated members `t00.npy`, ... of `floats` float32 zeros each.
fn zeros_npz(n: usize, floats: usize) -> Vec<u8> {
    let npy = npy_zeros(floats);
    let members: Vec<(String, Vec<u8>)> = (0..n)
        .map(|i| (format!("t{i:02}.npy"), npy.clone()))
        .collect();
    deflated(&members)
}

fn whole(bytes: &[u8], name: &str, limits: Limits) -> mlformats::Result<Document> {
    Document::from_map(
        MappedFile::from_vec(bytes.to_vec()),
        Some(name.into()),
        None,
        &ReadOptions::default().with_limits(limits),
    )
}

/// Opens `bytes` by slices and reads every tensor `times` times.
fn sliced(bytes: &[u8], name: &str, limits: Limits, times: usize) -> mlformats::Result<Document> {
    let opts = ReadOptions::default().with_limits(limits);
    let doc = Document::open_at(bytes.to_vec(), Some(Path::new(name)), None, &opts)?;
    assert!(!doc.was_read_whole(), "read by slices");
    for _ in 0..times {
        for t in doc.entries() {
            doc.get(t.name())?;
        }
    }
    Ok(doc)
}

/// The inflation-budget error in `e`, if it is one: what it names, the
/// total it would reach, the budget.
fn inflate_limit(e: &Error) -> Option<(String, u64, u64)> {
    let core = match e {
        Error::Core(c) => c,
        Error::Nnp(mlformats::nnp::Error::Tensor(c)) => c,
        Error::Tensor { source, .. } => return inflate_limit(source),
        _ => return None,
    };
    match core {
        tensor_core::Error::InflateLimit {
            what, total, limit, ..
        } => Some((what.clone(), *total, *limit)),
        _ => None,
    }
}

fn small_limits() -> Limits {
    Limits::default().with_min_inflate_budget(4 << 20)
}

#[test]
fn many_deflated_members_of_zeros_are_refused_whole_and_by_slices() {
    // bomb.npz in small: 16 members of 5 MiB of zeros in a file of about
    // 100 KB, over the 64 MiB floor of the default limits
    let z = zeros_npz(16, 5 << 18);
    assert!(z.len() < 200 << 10, "{}", z.len());
    let budget = Limits::default().inflate_budget(z.len() as u64);
    assert_eq!(budget, 64 << 20);
    for e in [
        whole(&z, "bomb.npz", Limits::default()).err().unwrap(),
        sliced(&z, "bomb.npz", Limits::default(), 1).err().unwrap(),
    ] {
        let (what, total, limit) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
        // the 13th member brings the total past 64 MiB: declared, on the
        // whole path (refused at open); inflated, by slices (its headers
        // listed, the data refused when read)
        assert!(what.contains("t12"), "{what}");
        assert!(total > limit && limit == budget, "{e}");
        assert!(
            mlformats::chain_message(&e).contains("max-inflate-ratio"),
            "{e}"
        );
    }
    // trusted: a higher ratio reads it
    let trusted = Limits::default().with_max_inflate_ratio(2000);
    let doc = whole(&z, "bomb.npz", trusted).unwrap();
    assert_eq!(doc.names().count(), 16);
}

#[test]
fn reading_by_slices_again_does_not_exhaust_the_budget() {
    // three members of 1 MiB under a 4 MiB budget: each is charged once
    // (up to the furthest byte inflated), however often it is read
    let z = zeros_npz(3, 1 << 18);
    assert_eq!(small_limits().inflate_budget(z.len() as u64), 4 << 20);
    let index = sliced(&z, "x.npz", small_limits(), 4).unwrap();
    assert_eq!(index.entries().len(), 3);
    assert!(index.entries().iter().all(|t| t.is_deflated()));
    let doc = whole(&z, "x.npz", small_limits()).unwrap();
    let t = doc.tensor("t01").unwrap();
    assert_eq!(t.dims(), &[1 << 18]);
    assert!(t.bytes().iter().all(|&b| b == 0));
    // four such members (4 MiB and their headers) are over it, both ways
    let z = zeros_npz(4, 1 << 18);
    for e in [
        whole(&z, "x.npz", small_limits()).err().unwrap(),
        sliced(&z, "x.npz", small_limits(), 1).err().unwrap(),
    ] {
        let (what, _, _) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
        assert!(what.contains("\"t03.npy\""), "{e}");
    }
}

#[test]
fn a_name_stored_twice_lists_as_numpy_reads_it() {
    // numpy lists ['a', 'b', 'a'], both 'a' giving the last entry, arange(5)
    let f = hostile("dup_name.npz");
    let doc = whole(&f, "dup_name.npz", Limits::default()).unwrap();
    let names: Vec<&str> = doc.names().collect();
    assert_eq!(names, ["a", "b"]);
    let a = doc.tensor("a").unwrap();
    assert_eq!(a.dims(), &[5]);
    assert_eq!(a.to_vec::<i64>().unwrap(), [0, 1, 2, 3, 4]);
    let index = sliced(&f, "dup_name.npz", Limits::default(), 1).unwrap();
    let names: Vec<&str> = index.entries().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["a", "b"]);
    let a = index.get("a").unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap(), [0, 1, 2, 3, 4]);
}

#[test]
fn central_entries_sharing_a_local_entry() {
    // a.npy, b.npy and c.npy on one local entry: zipfile refuses b and c
    // (their local header names a.npy); refused here, naming them
    let f = hostile("shared_local.npz");
    for e in [
        whole(&f, "shared_local.npz", Limits::default())
            .err()
            .unwrap(),
        sliced(&f, "shared_local.npz", Limits::default(), 1)
            .err()
            .unwrap(),
    ] {
        let s = e.to_string();
        assert!(s.contains("\"b.npy\"") && s.contains("\"a.npy\""), "{s}");
        assert!(s.contains("overlapping"), "{s}");
    }
    // one name 50 times on one local entry: numpy lists 'a' 50 times, one
    // array; here once, read once
    let f = hostile("same_name_shared.npz");
    let doc = whole(&f, "same_name_shared.npz", Limits::default()).unwrap();
    assert_eq!(doc.names().collect::<Vec<_>>(), ["a"]);
    assert_eq!(doc.tensor("a").unwrap().dims(), &[4096]);
    let index = sliced(&f, "same_name_shared.npz", Limits::default(), 2).unwrap();
    assert_eq!(index.entries().len(), 1);
}

#[test]
fn a_member_declaring_4_gib_is_refused_before_allocating() {
    let mut z = zeros_npz(1, 1 << 18);
    // the declared size, in the local header and the central entry
    z[22..26].copy_from_slice(&u32::MAX.to_le_bytes());
    let cd = z.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    z[cd + 24..cd + 28].copy_from_slice(&u32::MAX.to_le_bytes());
    for e in [
        whole(&z, "big.npz", Limits::default()).err().unwrap(),
        sliced(&z, "big.npz", Limits::default(), 1).err().unwrap(),
    ] {
        let s = e.to_string();
        assert!(
            s.contains("\"t00.npy\"") && s.contains("declares 4294967295 bytes, over the limit"),
            "{s}"
        );
    }
}

#[test]
fn an_nnp_whose_parameters_are_a_deflate_bomb_is_refused_both_ways() {
    // 70 MiB of zeros as a deflated parameter.protobuf in 70 KB
    let f = hostile("protobuf_bomb.nnp");
    let e = whole(&f, "protobuf_bomb.nnp", Limits::default())
        .err()
        .unwrap();
    let (what, _, limit) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
    assert!(what.contains("\"parameter.protobuf\""), "{e}");
    assert_eq!(limit, 64 << 20);
    // by slices the member is walked as it inflates, and zeros are no
    // protobuf: refused at its first byte, nothing more inflated
    let e = sliced(&f, "protobuf_bomb.nnp", Limits::default(), 1)
        .err()
        .unwrap();
    let msg = mlformats::chain_message(&e);
    assert!(msg.contains("parameter.protobuf"), "{msg}");
    // a deflated parameter.h5 of zeros over a small budget, built here
    let z = deflated(&[
        (
            "network.nntxt".into(),
            b"network { name: \"n\" }\n".to_vec(),
        ),
        ("parameter.h5".into(), vec![0u8; 8 << 20]),
    ]);
    for e in [
        whole(&z, "x.nnp", small_limits()).err().unwrap(),
        sliced(&z, "x.nnp", small_limits(), 1).err().unwrap(),
    ] {
        let (what, _, _) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
        assert!(what.contains("\"parameter.h5\""), "{e}");
    }
}
