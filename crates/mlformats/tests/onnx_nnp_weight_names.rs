//! Gemm/MatMul weights keep their ONNX names through `.nnp` and back:
//! `testdata/translate/weight_names/` holds a torch-style MLP (Gemm with
//! `transB` 1, one with `transB` 0, MatMul + Add with a `/`-prefixed
//! weight, a second Gemm reading the first one's weight) and a 3-D MatMul
//! and Add, with what onnxruntime computed, what the real nnabla 1.39
//! computed from the `.nnp` we write, and what onnxruntime computed from
//! the ONNX exported back (`results.json`). The conversions must give the
//! bytes nnabla ran, and the ONNX exported back must hold every weight of
//! the source under its name with its values.
#![cfg(all(feature = "onnx", feature = "nnp", feature = "nnabla"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, Document, convert};
use sha2::{Digest, Sha256};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/weight_names")
}

fn values(doc: &Document, name: &str) -> Vec<f64> {
    doc.tensor(name)
        .unwrap_or_else(|| panic!("no tensor {name}"))
        .to_f64_vec()
        .unwrap()
}

/// The model's own initializers (not the export's `mlformats/` helpers).
fn weights(m: &onnx_format::Model) -> BTreeMap<String, Vec<f64>> {
    m.initializers()
        .unwrap()
        .into_iter()
        .filter(|(n, _)| !n.starts_with("mlformats/"))
        .map(|(n, t)| (n, t.to_f64_vec().unwrap()))
        .collect()
}

#[test]
fn weights_come_back_with_their_names_and_values_and_nnabla_computes_the_same() {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("results.json")).unwrap())
            .unwrap();
    let cases = r["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    for (name, c) in cases {
        let src = data().join(format!("{name}.onnx"));
        let nnp = dir.path().join(format!("{name}.nnp"));
        convert(&src, &nnp, &ConvertOptions::new()).unwrap();
        let sha: String = Sha256::digest(std::fs::read(&nnp).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            sha,
            c["nnp_sha256"].as_str().unwrap(),
            "{name}: not what nnabla ran"
        );
        let back = dir.path().join(format!("{name}.back.onnx"));
        convert(&nnp, &back, &ConvertOptions::new()).unwrap();
        let want = weights(&onnx_format::Model::open(&src).unwrap());
        let got = weights(&onnx_format::Model::open(&back).unwrap());
        assert_eq!(
            got.keys().collect::<BTreeSet<_>>(),
            want.keys().collect::<BTreeSet<_>>(),
            "{name}"
        );
        assert_eq!(got, want, "{name}");
        let recorded: BTreeSet<&str> = c["back_initializers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .filter(|n| !n.starts_with("mlformats/"))
            .collect();
        assert_eq!(
            recorded,
            want.keys().map(String::as_str).collect(),
            "{name}"
        );
        // the recorded runs: nnabla within f32 rounding of onnxruntime, the
        // ONNX exported back exactly onnxruntime's
        let io = Document::open(data().join(format!("{name}.io.npz"))).unwrap();
        let nn = Document::open(data().join(format!("{name}.nnabla.npz"))).unwrap();
        let bk = Document::open(data().join(format!("{name}.back.npz"))).unwrap();
        for (k, set) in c["sets"].as_array().unwrap().iter().enumerate() {
            for (out, rec) in set.as_object().unwrap() {
                let ort = values(&io, &format!("ort.{out}.{k}"));
                let scale = ort.iter().fold(0f64, |m, v| m.max(v.abs()));
                let diff = |v: &[f64]| {
                    ort.iter()
                        .zip(v)
                        .fold(0f64, |m, (a, b)| m.max((a - b).abs()))
                };
                let d = diff(&values(&nn, &format!("{out}.{k}")));
                assert_eq!(d, rec["nnabla_diff"].as_f64().unwrap(), "{name} {out}.{k}");
                assert!(d <= 1e-6 * scale.max(1.0), "{name} {out}.{k}: {d}");
                assert_eq!(diff(&values(&bk, &format!("{out}.{k}"))), 0.0);
            }
        }
    }
}
