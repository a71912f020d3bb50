//! Hostile `.h5` structures (made with h5py by `testdata/hostile/make_h5.py`)
//! read with bounded work: each object visited once by its object header,
//! as h5py's `visititems` visits it (the names asserted are the ones it
//! lists), chunked data charged to the input's inflation budget, a chunk
//! that inflates past its size refused.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use nnp_archive::h5::{self, Located, Storage};
use nnp_archive::{Error, Nnp, ReadOptions};
use tensor_core::{InflateBudget, Limits, MappedFile};

fn hostile(name: &str) -> Vec<u8> {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hostile");
    std::fs::read(p.join(name)).unwrap()
}

fn names(ps: &[nnp_archive::Parameter<'_>]) -> Vec<String> {
    ps.iter().map(|p| p.name.clone()).collect()
}

fn locate(file: &[u8], opts: &ReadOptions) -> nnp_archive::Result<Option<Vec<Located>>> {
    let read = |at: u64, buf: &mut [u8]| {
        let at = at as usize;
        buf.copy_from_slice(&file[at..at + buf.len()]);
        Ok(())
    };
    h5::locate(file.len() as u64, read, opts)
}

fn is_inflate_limit(e: &Error, dataset: &str) -> bool {
    matches!(e, Error::Tensor(tensor_core::Error::InflateLimit { what, .. }) if what.contains(dataset))
}

#[test]
fn a_dataset_behind_100_hard_links_is_one_parameter_read_once() {
    let file = hostile("links.h5");
    assert!(file.len() < 32 << 10, "{}", file.len());
    let budget = InflateBudget::new(&Limits::default(), file.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    let ps = h5::parse_with(&file, &opts).unwrap();
    // h5py lists it once, under the first name in name order
    assert_eq!(names(&ps), ["l00"]);
    assert_eq!(ps[0].tensor.dims(), &[1 << 18]);
    assert!(
        ps[0]
            .tensor
            .view::<f32>()
            .unwrap()
            .iter()
            .all(|&x| x == 0.0)
    );
    assert!(ps[0].need_grad);
    // its 4 chunks of 256 KiB inflated once
    assert_eq!(budget.used(), 1 << 20);
    // the same through a map, and through owned bytes
    let map = MappedFile::from_vec(file.clone());
    assert_eq!(names(&h5::from_map(&map, &opts).unwrap()), ["l00"]);
    assert_eq!(budget.used(), 2 << 20);
    assert_eq!(
        names(&h5::from_vec(file.clone(), &ReadOptions::default()).unwrap()),
        ["l00"]
    );
    // located once, by slices: its 4 chunks
    let found = locate(&file, &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].name, "l00");
    let Storage::Chunked(c) = &found[0].storage else {
        panic!("{:?}", found[0].storage)
    };
    assert_eq!(c.chunks.len(), 4);
}

#[test]
fn a_budget_smaller_than_the_data_refuses_naming_the_dataset() {
    let file = hostile("links.h5");
    let small = InflateBudget::with_limit(512 << 10, file.len() as u64);
    let opts = ReadOptions::default().with_budget(small.clone());
    let e = h5::parse_with(&file, &opts).unwrap_err();
    assert!(is_inflate_limit(&e, "l00"), "{e}");
    assert!(e.to_string().contains("l00"), "{e}");
    assert_eq!(small.used(), 0);
    // the default budget (64 MiB for a small file) holds it once, not 100 times
    let ratio = Limits::default()
        .with_min_inflate_budget(0)
        .with_max_inflate_ratio(10);
    let e = h5::parse_with(&file, &ReadOptions::default().with_limits(ratio)).unwrap_err();
    assert!(is_inflate_limit(&e, "l00"), "{e}");
}

#[test]
fn an_nnp_shares_one_budget_with_its_parameter_h5() {
    let h5 = hostile("links.h5");
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("parameter.h5", stored).unwrap();
    z.write_all(&h5).unwrap();
    let nnp = z.finish().unwrap().into_inner();
    let budget = InflateBudget::new(&Limits::default(), nnp.len() as u64);
    let opts = ReadOptions::default().with_budget(budget.clone());
    let read = Nnp::parse_with(&nnp, &opts).unwrap();
    assert_eq!(read.parameters().len(), 1);
    assert!(read.parameters().get("l00").is_some());
    assert!(budget.used() >= 1 << 20, "{}", budget.used());
    // a budget the archive's size allows, too small for the data
    let tight = Limits::default()
        .with_min_inflate_budget(0)
        .with_max_inflate_ratio(2);
    let e = Nnp::parse_with(&nnp, &ReadOptions::default().with_limits(tight)).unwrap_err();
    assert!(e.to_string().contains("l00"), "{e}");
}

#[test]
fn a_group_behind_three_links_is_walked_once() {
    let file = hostile("group_twice.h5");
    let ps = h5::parse(&file).unwrap();
    assert_eq!(names(&ps), ["a/inner/W", "a/inner/b"]);
    assert_eq!(
        &*ps[0].tensor.view::<f32>().unwrap(),
        &[0., 1., 2., 3., 4., 5.]
    );
    assert_eq!(ps[0].tensor.dims(), &[2, 3]);
    assert_eq!(&*ps[1].tensor.view::<f32>().unwrap(), &[0.5, -1.5]);
    let found = locate(&file, &ReadOptions::default()).unwrap().unwrap();
    let n: Vec<&str> = found.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(n, ["a/inner/W", "a/inner/b"]);
}

#[test]
fn a_hard_link_cycle_ends_with_each_dataset_once() {
    let file = hostile("cycle.h5");
    let ps = h5::parse(&file).unwrap();
    assert_eq!(names(&ps), ["g/x"]);
    assert_eq!(&*ps[0].tensor.view::<f32>().unwrap(), &[1., 2., 3.]);
    let found = locate(&file, &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].name, "g/x");
}

#[test]
fn links_in_version_2_object_headers_are_resolved() {
    let file = hostile("links_v2.h5");
    let budget = InflateBudget::new(&Limits::default(), file.len() as u64);
    let ps = h5::parse_with(&file, &ReadOptions::default().with_budget(budget.clone())).unwrap();
    assert_eq!(names(&ps), ["l0"]);
    assert!(
        ps[0]
            .tensor
            .view::<f32>()
            .unwrap()
            .iter()
            .all(|&x| x == 0.25)
    );
    assert_eq!(budget.used(), 1 << 18);
}

#[test]
fn a_chunk_that_inflates_past_its_size_is_an_error() {
    let file = hostile("chunk_overflow.h5");
    let e = h5::parse(&file).unwrap_err();
    assert!(matches!(e, Error::Hdf5 { .. }), "{e}");
    // located: the chunk's decoding refuses it
    let found = locate(&file, &ReadOptions::default()).unwrap().unwrap();
    let Storage::Chunked(c) = &found[0].storage else {
        panic!("{:?}", found[0].storage)
    };
    assert_eq!(c.chunk_bytes, 1024);
    let at = c.chunks[0];
    let stored = &file[at.address as usize..(at.address + at.size) as usize];
    let budget = InflateBudget::new(&Limits::default(), file.len() as u64);
    let e = c.decode_within(&at, stored, &budget, "x").unwrap_err();
    assert!(e.to_string().contains("more than"), "{e}");
    // the others decode, each charged once
    let at = c.chunks[1];
    let stored = &file[at.address as usize..(at.address + at.size) as usize];
    let v = c.decode_within(&at, stored, &budget, "x").unwrap();
    assert_eq!(v.len(), 1024);
    assert_eq!(budget.used(), 2 * 1024);
    let empty = InflateBudget::with_limit(0, 0);
    let e = c.decode_within(&at, stored, &empty, "x").unwrap_err();
    assert!(is_inflate_limit(&e, "x"), "{e}");
}

#[test]
fn links_in_a_two_level_symbol_table_are_resolved() {
    let file = hostile("links_deep.h5");
    let ps = h5::parse(&file).unwrap();
    assert_eq!(names(&ps), ["g/w"]);
    assert_eq!(&*ps[0].tensor.view::<f32>().unwrap(), &[1., 2., 3.]);
    let found = locate(&file, &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].name, "g/w");
}

#[test]
fn truncated_hostile_files_fail_cleanly() {
    // every cut of each file: an error or the same answer, never a panic
    for name in ["group_twice.h5", "cycle.h5", "links_v2.h5"] {
        let file = hostile(name);
        let whole = names(&h5::parse(&file).unwrap());
        for cut in (0..file.len()).step_by(7) {
            if let Ok(ps) = h5::parse(&file[..cut]) {
                assert_eq!(names(&ps), whole, "{name} cut at {cut}");
            }
            let _ = locate(&file[..cut], &ReadOptions::default());
        }
    }
}

#[test]
fn mutated_link_structures_fail_cleanly() {
    // a byte changed anywhere in a symbol-table file and a version-2 one:
    // an error or a result, never a panic, the walk bounded
    for name in ["group_twice.h5", "links_v2.h5"] {
        let file = hostile(name);
        for at in (0..file.len()).step_by(7) {
            for x in [0x01u8, 0xff] {
                let mut b = file.clone();
                b[at] ^= x;
                if let Ok(ps) = h5::parse(&b) {
                    assert!(ps.len() <= 6, "{name} at {at}");
                }
                let _ = locate(&b, &ReadOptions::default());
            }
        }
    }
}

#[test]
fn a_chunk_placed_outside_the_dataset_is_refused() {
    // its index puts the chunk of [4, 0] at [2**64 - 3, 0] (a fuzzer's
    // find: the whole read of `hdf5-pure` overflowed adding positions in
    // the chunk to that offset); h5py says "bad coordinate offset"
    let file = hostile("chunk_far.h5");
    let e = h5::parse(&file).unwrap_err();
    assert!(
        matches!(&e, Error::BadData { dataset, reason } if dataset == "x" && reason.contains("outside the dataset")),
        "{e}"
    );
    // by slices: not located (the whole read decides, and refuses it)
    assert!(locate(&file, &ReadOptions::default()).unwrap().is_none());
}
