//! Round trips NNabla → ONNX → NNabla, offline: every network of
//! `testdata/onnx/` is exported to ONNX and imported back by the library
//! (with the `--input-shape`s the recorded run gave), and both files must be
//! byte-identical to the ones the real nnabla 1.39 ran and found equal to the
//! original network's outputs (`testdata/translate/roundtrip/nnabla.json`,
//! written by `tools/graph-translate/roundtrip.py --record`).

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, convert, parse_input_shape};
use sha2::{Digest, Sha256};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sha256(p: &Path) -> String {
    let d = Sha256::digest(std::fs::read(p).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_testdata_network_round_trips_to_the_verified_files() {
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("testdata/translate/roundtrip/nnabla.json")).unwrap(),
    )
    .unwrap();
    let files = rec["files"].as_object().unwrap();
    // Every network of testdata/onnx has its record, and every record passed.
    let mut nets: Vec<String> = std::fs::read_dir(root().join("testdata/onnx"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "nnp"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    nets.sort();
    assert!(nets.len() >= 87, "{} networks", nets.len());
    let mut recorded: Vec<&String> = files.keys().collect();
    recorded.sort();
    assert_eq!(recorded, nets.iter().collect::<Vec<_>>());

    let dir = tempfile::tempdir().unwrap();
    for name in &nets {
        let r = &files[name.as_str()];
        assert_eq!(r["result"], "pass", "{name}: {r}");
        let src = root().join(format!("testdata/onnx/{name}.nnp"));
        let onnx = dir.path().join(format!("{name}.onnx"));
        convert(&src, &onnx, &ConvertOptions::new()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            sha256(&onnx),
            r["onnx_sha256"].as_str().unwrap(),
            "{name}: the export differs from the one nnabla verified"
        );
        let mut opts = ConvertOptions::new();
        for s in r["input_shape"].as_array().unwrap() {
            let (n, dims) = parse_input_shape(s.as_str().unwrap()).unwrap();
            opts = opts.input_shape(n, dims);
        }
        let back = dir.path().join(format!("{name}.rt.nnp"));
        convert(&onnx, &back, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            sha256(&back),
            r["sha256"].as_str().unwrap(),
            "{name}: the import differs from the one nnabla verified"
        );
    }
}
