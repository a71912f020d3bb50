//! ONNX import of models of opsets 1 to 6, whose nodes the import rewrites
//! to their opset-7 meaning: the committed models
//! (testdata/translate/import/legacy) re-convert to byte-identical `.nnp`
//! and `.tsm` files whose results the real nnabla 1.39 and TenniS runtimes
//! verified (testdata/translate/import/legacy.json), and what the old
//! operator versions meant that the rewrite cannot keep exactly is refused,
//! naming the operator, the attribute value and the opset.

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, convert};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;
use sha2::{Digest, Sha256};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sha256(p: &Path) -> String {
    let d = Sha256::digest(std::fs::read(p).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn old_opset_models_reconvert_to_the_verified_files() {
    let p = root().join("testdata/translate/import/legacy.json");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let cases = r["cases"].as_object().unwrap();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut opsets = std::collections::BTreeSet::new();
    let dir = tempfile::tempdir().unwrap();
    for (name, case) in cases {
        opsets.insert(case["opset"].as_i64().unwrap());
        let src = root().join(format!("testdata/translate/import/legacy/{name}.onnx"));
        for ext in ["nnp", "tsm"] {
            let out = dir.path().join(format!("{name}.{ext}"));
            if case[ext]["status"] == "refused" {
                // (TenniS has no RNN, GRU or LpPool)
                let e = convert(&src, &out, &ConvertOptions::new())
                    .map(|_| panic!("{name}.{ext} converted"))
                    .unwrap_err()
                    .to_string();
                assert!(
                    e.contains(case[ext]["refusal"].as_str().unwrap()),
                    "{name}.{ext}: {e}"
                );
                continue;
            }
            assert_eq!(case[ext]["status"], "pass", "{name}.{ext}");
            convert(&src, &out, &ConvertOptions::new())
                .unwrap_or_else(|e| panic!("{name}.{ext}: {e}"));
            assert_eq!(
                sha256(&out),
                case[ext]["sha256"].as_str().unwrap(),
                "{name}.{ext}"
            );
        }
    }
    // the forms of opsets 1, 3, 4, 5 and 6 are all there
    for o in [1, 3, 4, 5, 6] {
        assert!(opsets.contains(&o), "no case of opset {o}");
    }
}

/// Converts the model `build` makes at `opset` (input `x`: f32 1x3x4x4;
/// output `y`) to both targets and returns the two refusals.
fn refused(name: &str, opset: i64, build: impl FnOnce(&mut GraphBuilder)) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut b = GraphBuilder::new("g");
    let d: Vec<Dim> = [1, 3, 4, 4].iter().map(|&v| Dim::Value(v)).collect();
    b.input("x", DataType::Float, &d);
    build(&mut b);
    b.output_unshaped("y", DataType::Float);
    let mut opts = onnx_format::WriteOptions::default();
    opts.opset = opset;
    let src = dir.path().join(format!("{name}.onnx"));
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&opts)).unwrap();
    std::fs::write(&src, bytes).unwrap();
    let mut errs = Vec::new();
    for ext in ["nnp", "tsm"] {
        let out = dir.path().join(format!("{name}.{ext}"));
        let e = convert(&src, &out, &ConvertOptions::new())
            .map(|_| panic!("{name}.{ext} converted"))
            .unwrap_err()
            .to_string();
        assert!(!out.exists(), "{name}.{ext}");
        errs.push(e);
    }
    (errs.remove(0), errs.remove(0))
}

fn both(e: &(String, String), want: &str) {
    assert!(e.0.contains(want), "nnp: {}", e.0);
    assert!(e.1.contains(want), "tsm: {}", e.1);
}

#[test]
fn old_meanings_that_cannot_be_kept_are_refused_by_name() {
    // training mode
    let e = refused("bn", 6, |b| {
        let c = b.const_f32("c", &[1.0, 1.0, 1.0], &[3]);
        let attrs = vec![attr::int("is_test", 0)];
        b.node(
            "BatchNormalization",
            "",
            &["x", &c, &c, &c, &c],
            &["y"],
            attrs,
        );
    });
    both(
        &e,
        "BatchNormalization (is_test 0 at opset 6: training mode",
    );
    let e = refused("dropout", 5, |b| {
        b.node(
            "Dropout",
            "",
            &["x"],
            &["y"],
            vec![attr::float("ratio", 0.5)],
        );
    });
    both(&e, "Dropout (is_test 0 at opset 5: training mode");
    // the mask test mode does not fill
    let e = refused("mask", 6, |b| {
        let attrs = vec![attr::int("is_test", 1)];
        b.node("Dropout", "", &["x"], &["y", "m"], attrs);
    });
    both(
        &e,
        "Dropout (is_test 1 at opset 6 with the mask as an output",
    );
    // shapes the old broadcast does not allow
    let e = refused("nobcast", 6, |b| {
        let c = b.const_f32("c", &[1.0, 2.0, 3.0, 4.0], &[4]);
        b.node("Add", "", &["x", &c], &["y"], vec![]);
    });
    both(
        &e,
        "Add (broadcast 0 at opset 6 with inputs of shapes [1, 3, 4, 4] and [4]",
    );
    let e = refused("axis", 6, |b| {
        let c = b.const_f32("c", &[1.0, 2.0, 3.0, 4.0], &[4]);
        let attrs = vec![attr::int("broadcast", 1), attr::int("axis", 1)];
        b.node("Mul", "", &["x", &c], &["y"], attrs);
    });
    both(
        &e,
        "Mul (broadcast 1 at opset 6: shape [4] is not part of [1, 3, 4, 4] at axis 1",
    );
    // an Upsample whose sampling positions opset 1 did not specify
    let e = refused("bilinear", 6, |b| {
        let attrs = vec![
            attr::string("mode", "bilinear"),
            attr::float("height_scale", 2.0),
            attr::float("width_scale", 2.0),
        ];
        b.node("Upsample", "", &["x"], &["y"], attrs);
    });
    both(&e, "Upsample (mode \"bilinear\" at opset 6");
    // one clip bound alone (it clips nothing on the other side)
    let e = refused("clip", 5, |b| {
        b.node("Clip", "", &["x"], &["y"], vec![attr::float("min", 0.0)]);
    });
    both(&e, "Clip (no max at opset 5");
    // Split's first version has no default axis
    let e = refused("split", 1, |b| {
        b.node("Split", "", &["x"], &["y"], vec![]);
    });
    both(&e, "Split (no axis at opset 1");
    // an operator of a later opset
    let e = refused("acos", 6, |b| {
        b.node("Acos", "", &["x"], &["y"], vec![]);
    });
    both(
        &e,
        "Acos (not an operator of ONNX opset 6; it appeared in a later opset)",
    );
    let e = refused("reshape5", 4, |b| {
        let s = b.const_i64("s", &[1, 48]);
        b.node("Reshape", "", &["x", &s], &["y"], vec![]);
    });
    both(&e, "Reshape (no attribute shape at opset 4");
}

#[test]
fn opset_zero_and_newer_than_28_are_refused() {
    for opset in [0, 29] {
        let e = refused(&format!("o{opset}"), opset, |b| {
            b.node("Relu", "", &["x"], &["y"], vec![]);
        });
        both(
            &e,
            &format!("the model uses ONNX opset {opset}; import reads opsets 1 to 28"),
        );
    }
}
