//! The golden `.h5` files written by the real nnabla (h5py, superblock v0)
//! read back with the names, order, shapes, values and need_grad nnabla
//! reports in their `.expected.json`.

use std::path::{Path, PathBuf};

use nnp_archive::{ReadOptions, h5};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn goldens() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "h5"))
        .collect();
    v.sort();
    v
}

#[test]
fn golden_h5_match_expected() {
    let files = goldens();
    assert!(files.len() >= 4, "goldens missing: {files:?}");
    for f in files {
        let exp_path = PathBuf::from(format!("{}.expected.json", f.display()));
        let exp: Value = serde_json::from_slice(&std::fs::read(&exp_path).unwrap()).unwrap();
        let expected = exp["tensors"].as_array().unwrap();
        let bytes = std::fs::read(&f).unwrap();
        for (mapped, params) in [
            (true, h5::open(&f).unwrap()),
            (
                false,
                h5::from_vec(bytes.clone(), &ReadOptions::default()).unwrap(),
            ),
            (
                false,
                h5::parse(&bytes)
                    .unwrap()
                    .into_iter()
                    .map(|p| p.into_static())
                    .collect(),
            ),
        ] {
            assert_eq!(params.len(), expected.len(), "{}", f.display());
            for (p, e) in params.iter().zip(expected) {
                assert_eq!(p.name, e["name"].as_str().unwrap(), "{}", f.display());
                assert_eq!(p.tensor.dtype().name(), e["dtype"].as_str().unwrap());
                let shape: Vec<usize> = e["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap() as usize)
                    .collect();
                assert_eq!(p.tensor.dims(), &shape[..], "{}", p.name);
                assert_eq!(
                    hex(p.tensor.bytes()),
                    e["sha256"].as_str().unwrap(),
                    "{}",
                    p.name
                );
                assert_eq!(p.need_grad, e["need_grad"].as_bool().unwrap(), "{}", p.name);
                if mapped {
                    assert!(p.tensor.storage().is_zero_copy(), "{} copied", p.name);
                }
            }
        }
    }
}

#[test]
fn truncated_golden_h5_never_panics() {
    let bytes = std::fs::read(testdata().join("mlp_params.h5")).unwrap();
    for cut in 0..bytes.len() {
        let r = h5::parse(&bytes[..cut]);
        assert!(r.is_err(), "cut at {cut} accepted");
    }
}

#[test]
fn superblock_v0_pointing_past_the_end_is_an_error() {
    // h5py's superblock v0: end-of-file address at byte 40, the root
    // symbol-table entry's object header address at 64.
    let good = std::fs::read(testdata().join("mlp_params.h5")).unwrap();
    assert_eq!(good[8], 0, "superblock v0");
    for at in [40usize, 64] {
        for value in [1u64 << 40, good.len() as u64 + 8] {
            let mut bad = good.clone();
            bad[at..at + 8].copy_from_slice(&value.to_le_bytes());
            let e = h5::parse(&bad).unwrap_err();
            assert!(e.to_string().starts_with("HDF5"), "{e}");
        }
    }
    // and a dataset whose contiguous data address points past the end
    let ps = h5::parse(&good).unwrap();
    let first = ps[0].tensor.bytes();
    let off = first.as_ptr() as usize - good.as_ptr() as usize;
    // the layout message stores the address followed by the size
    let mut needle = (off as u64).to_le_bytes().to_vec();
    needle.extend((first.len() as u64).to_le_bytes());
    let pos = good
        .windows(16)
        .position(|w| w == needle)
        .expect("address stored");
    let mut bad = good.clone();
    bad[pos..pos + 8].copy_from_slice(&(good.len() as u64 - 4).to_le_bytes());
    let e = h5::parse(&bad).unwrap_err();
    assert!(e.to_string().contains("past the end"), "{e}");
}
