//! Round trips TenniS → ONNX → TenniS, offline: every module of
//! `testdata/translate/export/tennis/` and `testdata/tennis/py_convnet.tsm`
//! is exported to ONNX and imported back by the library, and both files must
//! be byte-identical to the ones the real TenniS C++ runtime ran and found
//! equal to the original module's outputs
//! (`testdata/translate/roundtrip/tennis.json`, written by
//! `tools/graph-translate/roundtrip.py --record`). A module whose
//! round trip stopped at the import must still stop there, for the reason
//! recorded; none may differ.

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

/// The module `source` names, where this repository has it.
fn source(name: &str) -> Option<PathBuf> {
    ["testdata/translate/export/tennis", "testdata/tennis"]
        .iter()
        .map(|d| root().join(d).join(name))
        .find(|p| p.is_file())
}

/// The `--input-shape`s the recorded import was given (the shapes of the
/// inputs the round trip ran with, where the export left them symbolic).
fn options(r: &serde_json::Value) -> ConvertOptions {
    let mut opts = ConvertOptions::new();
    for s in r["input_shape"].as_array().into_iter().flatten() {
        let (n, dims) = parse_input_shape(s.as_str().unwrap()).unwrap();
        opts = opts.input_shape(n, dims);
    }
    opts
}

#[test]
fn every_testdata_module_round_trips_to_the_verified_files() {
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("testdata/translate/roundtrip/tennis.json")).unwrap(),
    )
    .unwrap();
    let files = rec["files"].as_object().unwrap();
    // every single-operator module has its record
    for e in std::fs::read_dir(root().join("testdata/translate/export/tennis")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|e| e == "tsm") {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(files.contains_key(&stem), "{stem} has no round-trip record");
        }
    }
    assert!(files.contains_key("py_convnet"));

    let dir = tempfile::tempdir().unwrap();
    let (mut passed, mut stopped) = (0, 0);
    for (name, r) in files {
        let Some(src) = source(r["source"].as_str().unwrap()) else {
            continue; // a module of the shared corpus (SeetaFace6)
        };
        let onnx = dir.path().join(format!("{name}.onnx"));
        let back = dir.path().join(format!("{name}.rt.tsm"));
        match r["result"].as_str().unwrap() {
            "pass" => {
                convert(&src, &onnx, &ConvertOptions::new())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    sha256(&onnx),
                    r["onnx_sha256"].as_str().unwrap(),
                    "{name}: the export differs from the one TenniS verified"
                );
                convert(&onnx, &back, &options(r)).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    sha256(&back),
                    r["sha256"].as_str().unwrap(),
                    "{name}: the import differs from the one TenniS verified"
                );
                passed += 1;
            }
            "stopped at import" => {
                convert(&src, &onnx, &ConvertOptions::new())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let err = convert(&onnx, &back, &options(r))
                    .expect_err(&format!("{name}: the import now succeeds: record it again"));
                let msg = mlformats::chain_message(&err as &(dyn std::error::Error + 'static));
                let recorded = r["message"].as_str().unwrap();
                // the CLI's message: "error: NAME.rt.tsm: " and the library's
                let prefix = format!("error: {name}.rt.tsm: ");
                let reason = recorded.strip_prefix(&prefix).unwrap_or(recorded);
                assert!(msg.contains(reason), "{name}: {msg:?} lacks {reason:?}");
                assert!(!back.exists(), "{name}: a refused import left a file");
                stopped += 1;
            }
            other => panic!("{name}: round trip {other}: {r}"),
        }
    }
    assert!(passed >= 71, "{passed} round trips pass");
    // once stopped at the import: outputs computed from the input shapes
    // alone (tied to the input), the export's NonMaxSuppression pattern, a
    // Range whose inputs are computed at run time
    for name in [
        "dims_0",
        "dims_1",
        "shape_0",
        "prior_box_0",
        "prior_box_1",
        "non_max_suppression_v3_0",
        "non_max_suppression_v3_1",
        "non_max_suppression_v3_2",
        "range_3",
    ] {
        assert_eq!(files[name]["result"], "pass", "{name}");
    }
    eprintln!("{passed} round trips byte-identical, {stopped} stop at the import");
}
