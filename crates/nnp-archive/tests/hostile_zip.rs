//! Zip bombs and tricks of the central directory: inflation is bounded by
//! the archive's size (one `InflateBudget` per archive, shared with its
//! `.h5` reader), each local entry is read for one member at most, and a
//! member declaring far more than it can hold is refused before anything
//! is allocated.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use nnp_archive::{Error, Nnp, ReadOptions, archive};
use tensor_core::{InflateBudget, Limits};
use zip::CompressionMethod;
use zip::write::SimpleFileOptions;

fn hostile(name: &str) -> Vec<u8> {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hostile");
    std::fs::read(p.join(name)).unwrap()
}

fn zip_of(members: &[(&str, &[u8], CompressionMethod)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data, method) in members {
        z.start_file(
            *name,
            SimpleFileOptions::default().compression_method(*method),
        )
        .unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

/// `n` deflated members `m00.bin`, ... of `size` zero bytes each.
fn zeros_zip(n: usize, size: usize) -> Vec<u8> {
    let zeros = vec![0u8; size];
    let names: Vec<String> = (0..n).map(|i| format!("m{i:02}.bin")).collect();
    let members: Vec<(&str, &[u8], CompressionMethod)> = names
        .iter()
        .map(|n| (n.as_str(), &zeros[..], CompressionMethod::Deflated))
        .collect();
    zip_of(&members)
}

/// The central directory's entries of `z`, its offset, and the offset of
/// the end record (no comment, no ZIP64).
fn central(z: &[u8]) -> (Vec<Vec<u8>>, usize, usize) {
    let eocd = z.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    let n = u16::from_le_bytes([z[eocd + 10], z[eocd + 11]]) as usize;
    let offset = u32::from_le_bytes(z[eocd + 16..eocd + 20].try_into().unwrap()) as usize;
    let mut at = offset;
    let mut entries = Vec::new();
    for _ in 0..n {
        let len = |i: usize| u16::from_le_bytes([z[at + i], z[at + i + 1]]) as usize;
        let end = at + 46 + len(28) + len(30) + len(32);
        entries.push(z[at..end].to_vec());
        at = end;
    }
    (entries, offset, eocd)
}

/// `z` with its central directory replaced by `entries`.
fn with_central(z: &[u8], entries: &[Vec<u8>]) -> Vec<u8> {
    let (_, offset, eocd) = central(z);
    let mut out = z[..offset].to_vec();
    let cd: Vec<u8> = entries.concat();
    out.extend(&cd);
    let mut end = z[eocd..].to_vec();
    end[8..10].copy_from_slice(&(entries.len() as u16).to_le_bytes());
    end[10..12].copy_from_slice(&(entries.len() as u16).to_le_bytes());
    end[12..16].copy_from_slice(&(cd.len() as u32).to_le_bytes());
    end[16..20].copy_from_slice(&(offset as u32).to_le_bytes());
    out.extend(end);
    out
}

/// A central entry renamed (a name of the same length).
fn renamed(entry: &[u8], name: &str) -> Vec<u8> {
    let mut e = entry.to_vec();
    assert_eq!(u16::from_le_bytes([e[28], e[29]]) as usize, name.len());
    e[46..46 + name.len()].copy_from_slice(name.as_bytes());
    e
}

/// Sets the uncompressed size of the first member in its local header
/// and central entry.
fn declare(z: &mut [u8], size: u32) {
    z[22..26].copy_from_slice(&size.to_le_bytes());
    let (_, offset, _) = central(z);
    z[offset + 24..offset + 28].copy_from_slice(&size.to_le_bytes());
}

fn inflate_limit(e: &Error) -> Option<(&str, u64, u64)> {
    match e {
        Error::Tensor(tensor_core::Error::InflateLimit {
            what, total, limit, ..
        }) => Some((what, *total, *limit)),
        _ => None,
    }
}

/// A budget of 4 MiB for small archives.
fn small_limits() -> Limits {
    Limits::default()
        .with_min_inflate_budget(4 << 20)
        .with_max_inflate_ratio(100)
}

#[test]
fn many_deflated_members_of_zeros_over_the_budget_are_refused_before_inflating() {
    let z = zeros_zip(16, 1 << 20);
    assert!(z.len() < 64 << 10, "{}", z.len());
    let budget = InflateBudget::new(&small_limits(), z.len() as u64);
    assert_eq!(budget.limit(), 4 << 20);
    let opts = ReadOptions::default()
        .with_limits(small_limits())
        .with_budget(budget.clone());
    for e in [
        archive::parse_with(&z, &opts).unwrap_err(),
        Nnp::parse_with(&z, &opts).unwrap_err(),
        Nnp::from_reader(Cursor::new(&z), &opts).unwrap_err(),
        // a listing (headers only) lists; what reading would refuse is
        // asked separately, for a reader that inflates by parts
        archive::over_declared_budget(
            &archive::list(Cursor::new(&z), &opts).unwrap(),
            &budget,
            z.len() as u64,
        )
        .unwrap(),
    ] {
        let (what, total, limit) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
        // the fifth member brings the declared total past 4 MiB
        assert!(what.contains("\"m04.bin\""), "{e}");
        assert_eq!((total, limit), (5 << 20, 4 << 20), "{e}");
    }
    // refused from the sizes the archive declares: nothing was inflated
    assert_eq!(budget.used(), 0);
    // without a budget given, each call makes one from the limits
    let e = Nnp::parse_with(&z, &ReadOptions::default().with_limits(small_limits())).unwrap_err();
    assert!(inflate_limit(&e).is_some(), "{e}");
    // within the default budget (64 MiB at least) the same archive reads
    let c = archive::parse_with(&z, &ReadOptions::default()).unwrap();
    assert_eq!(c.members.len(), 16);
    assert!(
        c.data
            .iter()
            .all(|d| d.len() == 1 << 20 && d.iter().all(|&b| b == 0))
    );
}

#[test]
fn each_inflation_is_charged_and_the_budget_never_passes_its_limit() {
    let z = zeros_zip(3, 1 << 20);
    let budget = InflateBudget::with_limit(5 << 20, z.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    let c = archive::parse_with(&z, &opts).unwrap();
    assert_eq!(budget.used(), 3 << 20);
    // reading a member again is inflating it again: charged again
    let m = &c.members[1];
    let d = archive::read_member(Cursor::new(&z), 1, m, &opts).unwrap();
    assert_eq!(d.len(), 1 << 20);
    assert_eq!(budget.used(), 4 << 20);
    archive::read_member(Cursor::new(&z), 1, m, &opts).unwrap();
    let e = archive::read_member(Cursor::new(&z), 1, m, &opts).unwrap_err();
    let (what, total, limit) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
    assert!(what.contains("\"m01.bin\""), "{e}");
    assert_eq!((total, limit), (6 << 20, 5 << 20));
    assert_eq!(budget.used(), 5 << 20);
    // what is left is what the declared sizes are checked against
    let members = archive::list(Cursor::new(&z), &opts).unwrap();
    let e = archive::over_declared_budget(&members, &budget, z.len() as u64).unwrap();
    assert!(inflate_limit(&e).is_some(), "{e}");
}

#[test]
fn central_entries_sharing_one_local_entry_are_refused_naming_both() {
    let z = zeros_zip(1, 1 << 20);
    let (entries, _, _) = central(&z);
    let mut many = vec![entries[0].clone()];
    for i in 1..100 {
        many.push(renamed(&entries[0], &format!("x{i:02}.bin")));
    }
    let bomb = with_central(&z, &many);
    let budget = InflateBudget::new(&Limits::default(), bomb.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    for e in [
        archive::parse_with(&bomb, &opts).unwrap_err(),
        archive::list(Cursor::new(&bomb), &opts).unwrap_err(),
        Nnp::parse_with(&bomb, &opts).unwrap_err(),
    ] {
        let s = e.to_string();
        assert!(matches!(e, Error::Member { .. }), "{s}");
        assert!(
            s.contains("\"x01.bin\"") && s.contains("\"m00.bin\""),
            "{s}"
        );
        assert!(s.contains("overlapping"), "{s}");
    }
    assert_eq!(budget.used(), 0);
    // a member whose data runs over the next member's local header
    let z = zeros_zip(2, 1 << 16);
    let (entries, _, _) = central(&z);
    let mut over = entries[0].clone();
    let csize = u32::from_le_bytes(over[20..24].try_into().unwrap()) + 40;
    over[20..24].copy_from_slice(&csize.to_le_bytes());
    let e = archive::parse_with(&with_central(&z, &[over, entries[1].clone()]), &opts).unwrap_err();
    assert!(
        e.to_string().contains("lies inside member \"m00.bin\""),
        "{e}"
    );
}

#[test]
fn a_name_listed_many_times_for_one_local_entry_is_read_once() {
    let z = zeros_zip(1, 1 << 20);
    let (entries, _, _) = central(&z);
    let same = with_central(&z, &vec![entries[0].clone(); 200]);
    let budget = InflateBudget::new(&Limits::default(), same.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    let c = archive::parse_with(&same, &opts).unwrap();
    assert_eq!(c.members.len(), 1);
    assert_eq!(c.data[0].len(), 1 << 20);
    assert_eq!(budget.used(), 1 << 20);
    assert_eq!(archive::list(Cursor::new(&same), &opts).unwrap().len(), 1);
    // Python's zipfile writes it so (numpy lists 'a' 50 times, one array)
    let f = hostile("same_name_shared.npz");
    let c = archive::parse_with(&f, &ReadOptions::default()).unwrap();
    let names: Vec<&str> = c.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a.npy"]);
    assert_eq!(c.data[0].len(), 128 + 4096 * 4);
}

#[test]
fn a_name_stored_twice_is_its_last_entry_at_its_first_place() {
    // as Python's zipfile writes it: two local entries of one name
    let z = zip_of(&[
        ("x.bin", b"first", CompressionMethod::Deflated),
        ("y.bin", b"middle", CompressionMethod::Stored),
        ("z.bin", b"last!", CompressionMethod::Deflated),
    ]);
    let mut twice = z.clone();
    // rename z.bin to x.bin in its local header and central entry
    let mut from = 0;
    while let Some(at) = twice[from..].windows(5).position(|w| w == b"z.bin") {
        twice[from + at] = b'x';
        from += at + 5;
    }
    for c in [
        archive::parse_with(&twice, &ReadOptions::default()).unwrap(),
        archive::from_reader(Cursor::new(&twice), &ReadOptions::default()).unwrap(),
    ] {
        let names: Vec<&str> = c.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["x.bin", "y.bin"]);
        assert_eq!(&c.data[0][..], b"last!");
        assert_eq!(&c.data[1][..], b"middle");
    }
    // the last entry's local header must still agree with its central entry
    let mut bad = twice.clone();
    let second_local = bad
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x03\x04")
        .nth(2)
        .unwrap()
        .0;
    bad[second_local + 8] = 0; // method: stored, the central entry says deflated
    let e = archive::parse_with(&bad, &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("compression method"), "{e}");
    let mut bad = twice;
    bad[second_local + 30] = b'q'; // its local name
    let e = archive::parse_with(&bad, &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("\"x.bin\""), "{e}");
}

#[test]
fn a_member_declaring_4_gib_is_refused_before_allocating() {
    // a ratio deflate cannot reach
    let mut z = zeros_zip(1, 1 << 20);
    declare(&mut z, u32::MAX);
    for e in [
        archive::parse_with(&z, &ReadOptions::default()).unwrap_err(),
        archive::list(Cursor::new(&z), &ReadOptions::default()).unwrap_err(),
    ] {
        match &e {
            Error::TooLarge {
                member,
                declared,
                limit,
            } => {
                assert_eq!(
                    (member.as_str(), *declared),
                    ("m00.bin", u64::from(u32::MAX))
                );
                assert!(*limit < 2 << 20, "{e}");
            }
            other => panic!("{other}"),
        }
    }
    // a ratio deflate can reach, over the budget (and over max_alloc)
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u8> = (0..64 << 10)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let mut z = zip_of(&[("big.bin", &noise, CompressionMethod::Deflated)]);
    declare(&mut z, 60 << 20);
    let small = ReadOptions::default().with_limits(small_limits());
    let e = archive::parse_with(&z, &small).unwrap_err();
    let (what, total, limit) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
    assert!(what.contains("\"big.bin\""), "{e}");
    assert_eq!(
        (total, limit),
        (60 << 20, small_limits().inflate_budget(z.len() as u64))
    );
    let e = archive::parse_with(
        &z,
        &ReadOptions::default().with_limits(Limits::default().with_max_alloc(1 << 20)),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::TooLarge { member, limit, .. } if member == "big.bin" && *limit == 1 << 20),
        "{e}"
    );
    // within the limits: the lie is found while inflating, nothing past it
    let e = archive::parse_with(&z, &ReadOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("big.bin") && e.to_string().contains("holds"),
        "{e}"
    );
}

#[test]
fn an_nnp_whose_parameters_are_a_deflate_bomb_is_refused() {
    // committed (testdata/hostile/make_zip.py): 70 MiB of zeros as
    // parameter.protobuf in a 70 KB file, over the 64 MiB floor
    let f = hostile("protobuf_bomb.nnp");
    assert!(f.len() < 100 << 10);
    let budget = InflateBudget::new(&Limits::default(), f.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    let e = Nnp::parse_with(&f, &opts).unwrap_err();
    let (what, _, limit) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
    assert!(what.contains("\"parameter.protobuf\""), "{e}");
    assert_eq!(limit, 64 << 20);
    assert_eq!(budget.used(), 0);
    assert!(Nnp::parse(&f).is_err());
    // a deflated parameter.h5 the same way, built here
    let zeros = vec![0u8; 8 << 20];
    let z = zip_of(&[
        (
            "network.nntxt",
            b"network { name: \"n\" }\n",
            CompressionMethod::Stored,
        ),
        ("parameter.h5", &zeros, CompressionMethod::Deflated),
    ]);
    let e = Nnp::parse_with(&z, &ReadOptions::default().with_limits(small_limits())).unwrap_err();
    let (what, _, _) = inflate_limit(&e).unwrap_or_else(|| panic!("{e}"));
    assert!(what.contains("\"parameter.h5\""), "{e}");
}

#[test]
fn an_nnp_shares_one_budget_between_its_members_and_its_h5() {
    // a deflated parameter.h5: the archive charges its inflated size to the
    // budget the .h5 reader is given too
    let h5 = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla/mlp_params.h5"),
    )
    .unwrap();
    let z = zip_of(&[
        (
            "network.nntxt",
            b"network { name: \"n\" }\n",
            CompressionMethod::Deflated,
        ),
        ("parameter.h5", &h5, CompressionMethod::Deflated),
    ]);
    let budget = InflateBudget::new(&Limits::default(), z.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    let nnp = Nnp::parse_with(&z, &opts).unwrap();
    assert_eq!(nnp.parameters().len(), 4);
    let text = "network { name: \"n\" }\n".len() as u64;
    assert!(budget.used() >= h5.len() as u64 + text, "{}", budget.used());
    // a budget too small for both members refuses the second
    let tight = InflateBudget::with_limit(h5.len() as u64, z.len() as u64);
    let e = Nnp::parse_with(&z, &ReadOptions::default().with_budget(tight.clone())).unwrap_err();
    assert!(inflate_limit(&e).is_some(), "{e}");
    assert!(tight.used() <= tight.limit());
}
