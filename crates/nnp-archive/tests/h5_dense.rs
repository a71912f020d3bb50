//! Groups whose links are in dense storage (a fractal heap of link messages
//! and a version-2 B-tree indexing their names), in files h5py wrote with
//! `libver="latest"` (`testdata/dense/make_dense.py`): each lists exactly
//! what h5py's `visititems` lists (the names and values below are the ones
//! h5py read), links to one dataset are one tensor read once, a cycle
//! ends; corrupt heaps and trees are errors, never panics.

use std::path::Path;

use nnp_archive::h5::{self, Storage};
use nnp_archive::{Error, ReadOptions};
use tensor_core::{DType, InflateBudget, Limits, MappedFile};

fn dense(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/dense");
    std::fs::read(p.join(name)).unwrap()
}

/// Each parameter's name, type, dims and values.
type Listing = Vec<(String, DType, Vec<usize>, Vec<f64>)>;

fn listing(ps: &[nnp_archive::Parameter<'_>]) -> Listing {
    ps.iter()
        .map(|p| {
            let t = &p.tensor;
            let v = t.to_f64_vec().unwrap();
            (p.name.clone(), t.dtype(), t.dims().to_vec(), v)
        })
        .collect()
}

fn read(file: &[u8]) -> nnp_archive::Result<Listing> {
    h5::parse_with(file, &ReadOptions::default()).map(|ps| listing(&ps))
}

fn locate(file: &[u8], opts: &ReadOptions) -> nnp_archive::Result<Option<Vec<h5::Located>>> {
    let read = |at: u64, buf: &mut [u8]| {
        let at = usize::try_from(at).map_err(|_| std::io::ErrorKind::UnexpectedEof)?;
        let s = file
            .get(at..at + buf.len())
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(s);
        Ok(())
    };
    h5::locate(file.len() as u64, read, opts)
}

/// One-element datasets `{prefix}{i}` (names from `names`) of `dtype`.
fn scalars(names: &[String], dtype: DType, value: impl Fn(usize) -> f64) -> Listing {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), dtype, vec![1], vec![value(i)]))
        .collect()
}

fn numbered(prefix: &str, n: usize, width: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:0width$}")).collect()
}

/// What h5py's `visititems` lists in each file (make_dense.py prints it).
fn expected(file: &str) -> Listing {
    match file {
        "dense20.h5" => {
            let mut v: Listing = (0..20)
                .map(|i| {
                    let x = i as f64;
                    (format!("g/d{i:02}"), DType::F32, vec![2], vec![x, x + 0.5])
                })
                .collect();
            v.push(("top".into(), DType::F32, vec![3], vec![1.0, 2.0, 3.0]));
            v
        }
        "track_order.h5" => scalars(&numbered("t/k", 12, 2), DType::I32, |i| i as f64),
        "links50.h5" => vec![
            (
                "g/l00".into(),
                DType::F32,
                vec![4096],
                (0..4096).map(|j| j as f64 / 8.0).collect(),
            ),
            ("g/z".into(), DType::F32, vec![1], vec![-1.0]),
        ],
        "cycle.h5" => scalars(&numbered("g/x", 10, 1), DType::F64, |i| i as f64),
        "nested.h5" => {
            let mut v = vec![("a/b/again/r".into(), DType::F32, vec![1], vec![0.25])];
            v.extend(scalars(&numbered("a/b/q", 10, 1), DType::I64, |i| {
                (i * 10) as f64
            }));
            v.extend(scalars(&numbered("a/p", 9, 1), DType::U8, |i| i as f64));
            v
        }
        "wide.h5" => vec![("g/n0000".into(), DType::I16, vec![1], vec![7.0])],
        "long.h5" => {
            let mut v = vec![
                (
                    format!("g/{}", "h".repeat(5000)),
                    DType::F32,
                    vec![1],
                    vec![2.5],
                ),
                (
                    format!("g/{}", "m".repeat(1000)),
                    DType::F32,
                    vec![1],
                    vec![1.5],
                ),
            ];
            v.extend(scalars(&numbered("g/s", 9, 1), DType::F32, |i| i as f64));
            v
        }
        _ => unreachable!("{file}"),
    }
}

const FILES: [&str; 7] = [
    "dense20.h5",
    "track_order.h5",
    "links50.h5",
    "cycle.h5",
    "nested.h5",
    "wide.h5",
    "long.h5",
];

#[test]
fn dense_groups_list_what_h5py_lists() {
    for f in FILES {
        let file = dense(f);
        assert!(file.len() < 48 << 10, "{f}: {} bytes", file.len());
        // every file has dense storage: a fractal heap and a name index
        assert!(find(&file, b"FRHP").is_some() && find(&file, b"BTHD").is_some());
        let want = expected(f);
        assert_eq!(read(&file).unwrap(), want, "{f}");
        // the same from a map (no copy), and located by slices
        let map = MappedFile::from_vec(file.clone());
        let mapped = h5::from_map(&map, &ReadOptions::default()).unwrap();
        assert_eq!(listing(&mapped), want, "{f}");
        let found = locate(&file, &ReadOptions::default()).unwrap().unwrap();
        let names: Vec<&str> = found.iter().map(|l| l.name.as_str()).collect();
        let want_names: Vec<&str> = want.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(names, want_names, "{f}");
    }
}

#[test]
fn fifty_links_to_a_gzip_dataset_are_one_tensor_inflated_once() {
    let file = dense("links50.h5");
    let budget = InflateBudget::new(&Limits::default(), file.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    let ps = h5::parse_with(&file, &opts).unwrap();
    assert_eq!(ps.len(), 2);
    // its 4 chunks of 1024 f4, inflated once (not 51 times)
    assert_eq!(budget.used(), 4 * 1024 * 4);
    let found = locate(&file, &ReadOptions::default()).unwrap().unwrap();
    let Storage::Chunked(c) = &found[0].storage else {
        panic!("{:?}", found[0].storage)
    };
    assert_eq!((found[0].name.as_str(), c.chunks.len()), ("g/l00", 4));
}

#[test]
fn a_dense_cycle_and_a_second_link_to_a_group_end() {
    // g/self and g/up lead back to groups being walked: passed over
    let names: Vec<String> = read(&dense("cycle.h5"))
        .unwrap()
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(names, numbered("g/x", 10, 1));
    // a/b/c is reached first as a/b/again: its dataset is listed once
    let names: Vec<String> = read(&dense("nested.h5"))
        .unwrap()
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert!(names.iter().all(|n| !n.starts_with("a/b/c/")), "{names:?}");
}

#[test]
fn deep_name_indexes_heap_rows_and_huge_links_are_read() {
    // wide.h5: 1200 links, a name index of depth 2, a root indirect block
    // of 8 rows
    let wide = dense("wide.h5");
    let bthd = find(&wide, b"BTHD").unwrap();
    assert_eq!(u16_at(&wide, bthd + 12), 2);
    let frhp = find(&wide, b"FRHP").unwrap();
    assert_eq!(u16_at(&wide, frhp + 140), 8);
    assert_eq!(read(&wide).unwrap().len(), 1);
    // long.h5: names of 5000 and 6000 bytes are huge heap objects, indexed
    // by a B-tree of type 1; the 6000-byte link names the 5000-byte one's
    // dataset
    let long = dense("long.h5");
    let types: Vec<u8> = all(&long, b"BTHD").iter().map(|&at| long[at + 5]).collect();
    assert!(types.contains(&1) && types.contains(&5), "{types:?}");
    assert_eq!(read(&long).unwrap().len(), 11);
    // a huge object's key changed in that index: its link is not found
    let leaf = all(&long, b"BTLF")
        .into_iter()
        .find(|&at| long[at + 5] == 1)
        .unwrap();
    let mut b = long.clone();
    put(&mut b, leaf + 6 + 16, 99, 8);
    fix(&mut b, leaf, 6 + 2 * 24 + 4);
    let m = hdf5_message(read(&b));
    assert!(m.contains("is not in its index"), "{m}");
}

// ---- corrupt files ----

fn find(b: &[u8], sig: &[u8]) -> Option<usize> {
    b.windows(sig.len()).position(|w| w == sig)
}

fn all(b: &[u8], sig: &[u8]) -> Vec<usize> {
    (0..b.len().saturating_sub(sig.len()))
        .filter(|&i| &b[i..i + sig.len()] == sig)
        .collect()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn put(b: &mut [u8], at: usize, v: u64, n: usize) {
    b[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// Makes the checksum ending the `len`-byte structure at `at` right.
fn fix(b: &mut [u8], at: usize, len: usize) {
    let sum = h5::checksum(&b[at..at + len - 4]);
    put(b, at + len - 4, u64::from(sum), 4);
}

/// Makes a direct block's checksum right (over the block, its own field
/// read as zeros; 4-byte block offsets, 8-byte addresses).
fn fix_direct(b: &mut [u8], at: usize, size: usize) {
    let field = at + 17;
    put(b, field, 0, 4);
    let sum = h5::checksum(&b[at..at + size]);
    put(b, field, u64::from(sum), 4);
}

/// The sizes of the structures h5py wrote (8-byte addresses and lengths).
const HEAP_HEADER: usize = 146;
const TREE_HEADER: usize = 38;

/// The message of an `Error::Hdf5`, or panics.
fn hdf5_message(r: nnp_archive::Result<Listing>) -> String {
    match r {
        Err(Error::Hdf5 { message, .. }) => message,
        other => panic!("{:?}", other.map(|l| l.len())),
    }
}

#[test]
fn broken_checksums_are_errors() {
    let file = dense("dense20.h5");
    let frhp = find(&file, b"FRHP").unwrap();
    let fhdb = find(&file, b"FHDB").unwrap();
    let btlf = find(&file, b"BTLF").unwrap();
    let bthd = find(&file, b"BTHD").unwrap();
    for (at, what) in [
        (frhp + 20, "fractal heap header"),
        // a byte of a link message
        (fhdb + 40, "fractal heap direct block"),
        (btlf + 10, "link name index node"),
        (bthd + 30, "link name index header"),
    ] {
        let mut b = file.clone();
        b[at] ^= 0x10;
        let m = hdf5_message(read(&b));
        assert!(
            m.contains(&format!("checksum of the {what}")),
            "{what}: {m}"
        );
    }
    // a link renamed, its block's checksum made right: the name index's
    // hash of the name no longer matches
    let mut b = file.clone();
    let at = fhdb + find(&file[fhdb..], b"d07").unwrap();
    b[at + 2] = b'9';
    fix_direct(&mut b, fhdb, 512);
    let m = hdf5_message(read(&b));
    assert!(m.contains("hash of link \"d09\""), "{m}");
}

#[test]
fn huge_claimed_sizes_are_errors_before_any_read() {
    let file = dense("links50.h5");
    let frhp = find(&file, b"FRHP").unwrap();
    let bthd = find(&file, b"BTHD").unwrap();
    // (structure, its size, field, width, value, what the error says)
    let cases: [(usize, usize, usize, usize, u64, &str); 7] = [
        (
            frhp,
            HEAP_HEADER,
            120,
            8,
            1 << 40,
            "blocks from 512 to 1099511627776 bytes",
        ),
        (
            frhp,
            HEAP_HEADER,
            112,
            8,
            1 << 40,
            "blocks from 1099511627776 to 65536",
        ),
        (
            frhp,
            HEAP_HEADER,
            110,
            2,
            3,
            "table width (3) is not a power of two",
        ),
        (frhp, HEAP_HEADER, 140, 2, 1000, "1000 rows"),
        (bthd, TREE_HEADER, 26, 8, 1 << 40, "1099511627776 records"),
        (
            bthd,
            TREE_HEADER,
            6,
            4,
            u32::MAX.into(),
            "4294967295-byte nodes",
        ),
        (bthd, TREE_HEADER, 12, 2, 1000, "depth 1000"),
    ];
    for (at, len, field, n, v, says) in cases {
        let mut b = file.clone();
        put(&mut b, at + field, v, n);
        fix(&mut b, at, len);
        let m = hdf5_message(read(&b));
        assert!(m.contains(says), "{says}: {m}");
    }
    // a table 2^15 blocks wide: its root indirect block would be 256 KiB,
    // past the end of the file
    let mut b = file.clone();
    put(&mut b, frhp + 110, 1 << 15, 2);
    fix(&mut b, frhp, HEAP_HEADER);
    let m = hdf5_message(read(&b));
    assert!(m.contains("run past the end"), "{m}");
    // a B-tree root claiming more records than its node holds
    let mut b = file.clone();
    put(&mut b, bthd + 24, 60_000, 2);
    fix(&mut b, bthd, TREE_HEADER);
    let m = hdf5_message(read(&b));
    assert!(m.contains("claims 60000 records"), "{m}");
}

#[test]
fn a_truncated_heap_is_an_error() {
    // dense20.h5 ends with the heap's direct block
    let file = dense("dense20.h5");
    let fhdb = find(&file, b"FHDB").unwrap();
    assert_eq!(fhdb + 512, file.len());
    for cut in fhdb..file.len() {
        assert!(read(&file[..cut]).is_err(), "{cut}");
    }
    // the root block moved to the file's last bytes: read past the end
    let mut b = file.clone();
    let frhp = find(&file, b"FRHP").unwrap();
    put(&mut b, frhp + 132, file.len() as u64 - 100, 8);
    fix(&mut b, frhp, HEAP_HEADER);
    let m = hdf5_message(read(&b));
    assert!(m.contains("512 bytes of metadata at byte"), "{m}");
    assert!(m.contains("run past the end"), "{m}");
}

#[test]
fn blocks_kept_are_within_max_alloc() {
    // read from a map (no copy of the file): the heap's blocks (20 KiB)
    // are over a 4 KiB limit
    let map = MappedFile::from_vec(dense("wide.h5"));
    let opts = ReadOptions::default().with_limits(Limits::default().with_max_alloc(4096));
    let e = h5::from_map(&map, &opts).unwrap_err();
    assert!(matches!(e, Error::Tensor(_)), "{e}");
    assert!(e.to_string().contains("HDF5 link heap blocks"), "{e}");
}

/// Flips each byte of each `(start, length, direct block)` structure of
/// `file` (but its checksum) three ways, makes the checksum right so the
/// flip is read, and reads the file whole and by slices: an error or a
/// listing of at most `most` datasets, never a panic. Counts (listed,
/// refused).
fn sweep(file: &[u8], structures: &[(usize, usize, bool)], most: usize) -> [usize; 2] {
    let mut outcomes = [0usize; 2];
    for &(at, len, direct) in structures {
        for i in 0..len - 4 {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = file.to_vec();
                b[at + i] ^= x;
                if direct {
                    fix_direct(&mut b, at, len);
                } else {
                    fix(&mut b, at, len);
                }
                match read(&b) {
                    Ok(l) => {
                        assert!(l.len() <= most, "{at}+{i}: {} listed", l.len());
                        outcomes[0] += 1;
                    }
                    Err(_) => outcomes[1] += 1,
                }
                if let Ok(Some(l)) = locate(&b, &ReadOptions::default()) {
                    assert!(l.len() <= most);
                }
            }
        }
    }
    outcomes
}

#[test]
fn every_byte_of_the_link_structures_mutated_never_panics() {
    // the heap header, the name index's header and leaf, the heap's block
    let file = dense("dense20.h5");
    let structures = [
        (find(&file, b"FRHP").unwrap(), HEAP_HEADER, false),
        (find(&file, b"BTHD").unwrap(), TREE_HEADER, false),
        (find(&file, b"BTLF").unwrap(), 6 + 20 * 11 + 4, false),
        (find(&file, b"FHDB").unwrap(), 512, true),
    ];
    let outcomes = sweep(&file, &structures, 21);
    // both happen: fields read only for checks, and fields that matter
    assert!(outcomes[0] > 100 && outcomes[1] > 100, "{outcomes:?}");
    // long.h5's index of huge objects (type 1): its header and its leaf of
    // 2 records (address, length, key)
    let file = dense("long.h5");
    let huge = |sig: &[u8]| {
        all(&file, sig)
            .into_iter()
            .find(|&at| file[at + 5] == 1)
            .unwrap()
    };
    let structures = [
        (huge(b"BTHD"), TREE_HEADER, false),
        (huge(b"BTLF"), 6 + 2 * 24 + 4, false),
    ];
    let outcomes = sweep(&file, &structures, 11);
    assert!(outcomes[0] > 10 && outcomes[1] > 10, "{outcomes:?}");
}
