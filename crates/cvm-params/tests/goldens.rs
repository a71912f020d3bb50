//! Every golden file (written by TVM 0.27) parses with the content its
//! sidecar records, and writing the parsed content again reproduces it byte
//! for byte.

use std::path::{Path, PathBuf};

use cvm_params::{BoolEncoding, LazyParams, Params, ParamsWriter, ReadOptions, WriteOptions};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cvm")
}

fn goldens() -> Vec<(String, Vec<u8>, Value)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        let tvm_written = !p.to_string_lossy().contains("written_");
        if p.extension().is_some_and(|x| x == "params") && tvm_written {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let side: Value =
                serde_json::from_slice(&std::fs::read(dir().join(format!("{stem}.json"))).unwrap())
                    .unwrap();
            v.push((stem, std::fs::read(&p).unwrap(), side));
        }
    }
    v.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(v.len(), 12, "all 12 goldens present");
    v
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn sha256(b: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(b))
}

#[test]
fn goldens_match_their_sidecars() {
    for (stem, bytes, side) in goldens() {
        let p = Params::parse(&bytes).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(p.file_size(), side["size"].as_u64().unwrap());
        let entries = side["entries"].as_array().unwrap();
        assert_eq!(p.len(), entries.len(), "{stem}");
        for (e, s) in p.entries().iter().zip(entries) {
            let at = format!("{stem}/{}", e.name());
            match s["name_utf8_hex"].as_str() {
                Some(h) => assert_eq!(hex(e.name_bytes()), h, "{at}"),
                // the sidecar leaves out the hex of very long names
                None => assert_eq!(e.name_bytes(), s["name"].as_str().unwrap().as_bytes()),
            }
            let info = e.info();
            assert_eq!(
                info.dl_type.code as u64,
                s["code"].as_u64().unwrap(),
                "{at}"
            );
            assert_eq!(
                info.dl_type.bits as u64,
                s["bits"].as_u64().unwrap(),
                "{at}"
            );
            let shape: Vec<usize> = s["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(info.dims, shape, "{at}");
            assert_eq!(info.data_offset, s["data_offset"].as_u64().unwrap(), "{at}");
            assert_eq!(info.nbytes, s["nbytes"].as_u64().unwrap(), "{at}");
            assert_eq!(
                sha256(e.tensor().bytes()),
                s["data_sha256"].as_str().unwrap(),
                "{at}"
            );
            assert!(e.tensor().storage().is_zero_copy());
            // the payload is a view into the input at the recorded offset
            let off = info.data_offset as usize;
            assert_eq!(
                e.tensor().bytes().as_ptr(),
                bytes[off..].as_ptr(),
                "{at}: not borrowed"
            );
        }
    }
}

#[test]
fn rewriting_goldens_is_byte_identical() {
    for (stem, bytes, _) in goldens() {
        let p = Params::parse(&bytes).unwrap();
        let mut out = Vec::new();
        let mut w = ParamsWriter::new(
            &mut out,
            p.entries().iter().map(|e| e.name_bytes()),
            &WriteOptions::default(),
        )
        .unwrap();
        for e in p.entries() {
            let b = e.info().dl_type.bool_encoding().unwrap_or_default();
            w.write_tensor_as(e.tensor(), b).unwrap();
        }
        w.finish().unwrap();
        assert!(out == bytes, "{stem}: rewrite differs");
        // and through the one-call API with string names
        let mut out2 = Vec::new();
        cvm_params::write(
            &mut out2,
            p.iter().map(|(n, t)| (n.into_owned(), t)),
            &WriteOptions::default().with_bools(BoolEncoding::Dlpack),
        )
        .unwrap();
        assert!(out2 == bytes, "{stem}: write differs");
    }
}

#[test]
fn mapped_and_lazy_readers_agree_with_the_slice_reader() {
    for (stem, bytes, _) in goldens() {
        let path = dir().join(format!("{stem}.params"));
        let slice = Params::parse(&bytes).unwrap();
        let mapped = Params::open(&path).unwrap();
        let mut lazy =
            LazyParams::from_reader(std::fs::File::open(&path).unwrap(), &ReadOptions::default())
                .unwrap();
        assert_eq!(mapped.len(), slice.len());
        assert_eq!(lazy.len(), slice.len());
        assert!(mapped.map().is_some());
        for (i, e) in slice.entries().iter().enumerate() {
            let m = &mapped.entries()[i];
            assert_eq!(m.name_bytes(), e.name_bytes());
            assert_eq!(m.tensor().bytes(), e.tensor().bytes());
            assert!(matches!(
                m.tensor().storage(),
                tensor_core::Bytes::Mapped(..)
            ));
            assert_eq!(lazy.info(i).unwrap(), e.info());
            assert_eq!(lazy.name_bytes(i).unwrap(), e.name_bytes());
            let t = lazy.read(i).unwrap();
            assert_eq!(t.bytes(), e.tensor().bytes(), "{stem}[{i}]");
            assert_eq!(t.dims(), e.tensor().dims());
            // lookup by name gives the same entry
            assert_eq!(slice.position(e.name_bytes()), Some(i));
            assert_eq!(lazy.position(e.name_bytes()), Some(i));
        }
    }
}
