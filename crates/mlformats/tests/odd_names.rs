//! Names with empty path components (torch.onnx 2.x names every value
//! `/model.22/...`): a safetensors file with the names `/a/b`, `a//b` and
//! `/x` converted to every tensor format comes back with the same names,
//! through the whole-file path and by slices; no writer writes a file our
//! reader refuses, and a format that cannot store a name refuses it before
//! anything is written.
#![cfg(all(
    feature = "cvm",
    feature = "primitiv",
    feature = "nnabla",
    feature = "nnp",
    feature = "tennis",
    feature = "safetensors",
    feature = "npz",
    feature = "onnx"
))]

use std::path::Path;

use mlformats::{ConvertOptions, Document};
use tensor_core::Tensor;

const NAMES: [&str; 3] = ["/a/b", "a//b", "/x"];

/// The source: one f32 tensor per name, each with its own values.
fn source(dir: &Path) -> std::path::PathBuf {
    let ts: Vec<Tensor<'static>> = (0..NAMES.len())
        .map(|i| Tensor::from_values([2], &[i as f32, 0.5 + i as f32]).unwrap())
        .collect();
    let src = dir.join("src.safetensors");
    mlformats::save(&src, NAMES.iter().copied().zip(ts.iter())).unwrap();
    src
}

/// The names and values `path` holds, whole and by slices (which agree).
fn read_back(path: &Path) -> Vec<(String, Vec<f64>)> {
    let doc = mlformats::open(path).unwrap();
    let whole: Vec<(String, Vec<f64>)> = doc
        .stored()
        .map(|s| {
            let t = doc.tensor(&s.name).unwrap();
            (s.name.clone(), t.to_f64_vec().unwrap())
        })
        .collect();
    let bytes = std::fs::read(path).unwrap();
    let doc = Document::open_at(bytes, Some(path), None, &Default::default()).unwrap();
    let sliced: Vec<(String, Vec<f64>)> = (doc.entries().iter())
        .map(|e| {
            let t = doc.get(e.name()).unwrap();
            (e.name().to_string(), t.to_f64_vec().unwrap())
        })
        .collect();
    assert_eq!(sliced, whole, "{}: by slices", path.display());
    whole
}

#[test]
fn names_with_empty_components_round_trip_in_every_tensor_format() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(dir.path());
    let want = read_back(&src);
    assert_eq!(want.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(), NAMES);
    let mut written = Vec::new();
    for ext in [
        "safetensors",
        "npz",
        "nnp",
        "h5",
        "nntxt",
        "protobuf",
        "params",
        "data",
        "tsm",
        "onnx",
    ] {
        let out = dir.path().join(format!("out.{ext}"));
        match mlformats::convert(&src, &out, &ConvertOptions::new()) {
            Ok(_) => {
                let mut got = read_back(&out);
                let mut w = want.clone();
                // (a format may keep its own order)
                got.sort_by(|a, b| a.0.cmp(&b.0));
                w.sort_by(|a, b| a.0.cmp(&b.0));
                assert_eq!(got, w, "{ext}");
                written.push(ext);
            }
            Err(e) => {
                assert!(!out.exists(), "{ext}: refused ({e}) but a file was written");
                panic!("{ext}: refused: {e}");
            }
        }
    }
    assert_eq!(written.len(), 10);
}

#[test]
fn npz_member_names_numpy_reads() {
    // what `np.savez` writes for such keys (members `<key>.npy`), as
    // other writers may put them: a leading `/`, `..`, a backslash, read
    // as the tensor names numpy's `np.load` gives (the member name
    // without `.npy`), never as paths
    let dir = tempfile::tempdir().unwrap();
    let names = ["/model.10/w", "../up", "a\\b", "x/../../y"];
    let ts: Vec<Tensor<'static>> = (0..names.len())
        .map(|i| Tensor::from_values([1], &[i as i32]).unwrap())
        .collect();
    let out = dir.path().join("odd.npz");
    mlformats::save(&out, names.iter().copied().zip(ts.iter())).unwrap();
    let got = read_back(&out);
    assert_eq!(got.iter().map(|g| g.0.as_str()).collect::<Vec<_>>(), names);
    // a NUL would be cut by Python's zipfile: refused before writing
    let bad = dir.path().join("nul.npz");
    let e = mlformats::save(&bad, [("a\0b", &ts[0])]).unwrap_err();
    assert!(e.to_string().contains("NUL"), "{e}");
    assert!(!bad.exists());
    // the .nnp container keeps its checks on member names
    let doc = Document::from_bytes(std::fs::read(&out).unwrap(), Some(&out), None).unwrap();
    assert_eq!(doc.len(), names.len());
}
