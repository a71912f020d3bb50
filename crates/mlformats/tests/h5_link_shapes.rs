//! The HDF5 link shapes the `h5_shapes` fuzz target builds
//! (`fuzz/src/h5_shapes.rs`), read by the `.h5` readers: one dataset behind
//! 200 hard links is one parameter read once, link cycles and a chain of
//! groups at the depth limit end, declared sizes past the file are errors.
//! The programs are `testdata/hostile/shapes/h5_shapes/`.

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod harness;

use std::path::Path;

use harness::h5_shapes::h5_program;
use mlformats::nnp::{ReadOptions, h5};

fn program(name: &str) -> harness::h5_shapes::H5Shape {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hostile/shapes/h5_shapes")
        .join(name);
    h5_program(&std::fs::read(p).unwrap())
}

/// Each listed parameter's name and dims, or the error's message.
type Listed = Result<Vec<(String, Vec<usize>)>, String>;

fn read(name: &str) -> (usize, Listed) {
    let s = program(name);
    let r = h5::parse_with(&s.bytes, &ReadOptions::default())
        .map(|v| {
            v.iter()
                .map(|p| (p.name.clone(), p.tensor.dims().to_vec()))
                .collect()
        })
        .map_err(|e| e.to_string());
    // the fuzz target's own checks (every reader, each object once) hold too
    harness::h5_shapes(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../testdata/hostile/shapes/h5_shapes")
                .join(name),
        )
        .unwrap(),
    );
    (s.datasets, r)
}

#[test]
fn one_dataset_behind_200_hard_links_is_one_parameter() {
    let (datasets, r) = read("fan_in_200.bin");
    assert_eq!(datasets, 200);
    assert_eq!(r.unwrap(), [("d000".to_string(), vec![])]);
    // the header-only index lists it once as well
    let s = program("fan_in_200.bin");
    let doc = mlformats::Document::open_at(
        s.bytes,
        Some(Path::new("x.h5")),
        None,
        &mlformats::ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(doc.entries().len(), 1);
}

#[test]
fn link_cycles_and_a_chain_at_the_depth_limit_end() {
    // g/g links to itself and a deeper group back to the root: the chain's
    // dataset is cut off, the root's is listed once
    let (_, r) = read("deep_cycles.bin");
    assert_eq!(r.unwrap(), [("w".to_string(), vec![1])]);
    let (_, r) = read("deep_limit.bin");
    let names: Vec<String> = r.unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), 2);
    assert_eq!(names[0].matches("g/").count(), 254);
}

#[test]
fn declared_sizes_past_the_file_are_errors() {
    let (_, r) = read("huge_dims.bin");
    let e = r.unwrap_err();
    assert!(e.contains("4398046510080 bytes) runs past the end"), "{e}");
    let (_, r) = read("huge_dims_mismatch.bin");
    let e = r.unwrap_err();
    assert!(e.contains("contiguous storage is 12 bytes"), "{e}");
}
