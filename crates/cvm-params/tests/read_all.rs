//! `LazyParams::read_all`: the same tensors as one-at-a-time reads, on the
//! parallel path (a file over 16 MiB) and the sequential one, and a clean
//! error when the file shrinks after it was indexed.

use std::fs::{File, OpenOptions};

use cvm_params::{Error, LazyParams, Params, ReadOptions};
use tensor_core::{DType, Tensor};

fn file_of(
    dir: &std::path::Path,
    name: &str,
    tensors: &[(String, Tensor<'static>)],
) -> std::path::PathBuf {
    let path = dir.join(name);
    cvm_params::save(
        &path,
        tensors.iter().map(|(n, t)| (n.as_str(), t)),
        &Default::default(),
    )
    .unwrap();
    path
}

fn tensors(count: usize, elems: usize) -> Vec<(String, Tensor<'static>)> {
    (0..count)
        .map(|i| {
            let bytes: Vec<u8> = (0..elems * 4).map(|j| (i * 13 + j * 7) as u8).collect();
            // odd sizes so groups split unevenly
            let bytes = bytes[..(elems - i % 3) * 4].to_vec();
            (
                format!("t{i}"),
                Tensor::new(DType::F32, [elems - i % 3], bytes).unwrap(),
            )
        })
        .collect()
}

#[test]
fn read_all_equals_the_mapped_tensors_in_order() {
    let dir = tempfile::tempdir().unwrap();
    for (name, count, elems) in [
        ("big.params", 9, 700_000),
        ("small.params", 5, 100),
        ("empty.params", 0, 0),
    ] {
        let ts = tensors(count, elems);
        let path = file_of(dir.path(), name, &ts);
        let mapped = Params::open(&path).unwrap();
        let mut lazy =
            LazyParams::from_reader(File::open(&path).unwrap(), &ReadOptions::default()).unwrap();
        let all = lazy.read_all().unwrap();
        assert_eq!(all.len(), count, "{name}");
        for (t, e) in all.iter().zip(mapped.entries()) {
            assert_eq!(t.dims(), e.tensor().dims(), "{name}");
            assert_eq!(t.bytes(), e.tensor().bytes(), "{name}");
            assert!(!t.storage().is_zero_copy());
        }
    }
}

#[test]
fn a_file_that_shrinks_after_indexing_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_of(dir.path(), "x.params", &tensors(6, 1_000_000));
    let mut lazy =
        LazyParams::from_reader(File::open(&path).unwrap(), &ReadOptions::default()).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 100)
        .unwrap();
    match lazy.read_all() {
        Err(Error::Truncated { at, .. }) => assert!(format!("{at:?}").contains("t5"), "{at:?}"),
        other => panic!("{other:?}"),
    }
}
