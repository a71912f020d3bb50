//! An `If` whose branches give different shapes, on a condition computed
//! from an input: refused without `--input-value`, imported with it as the
//! branch it takes. `testdata/translate/input_value_if/` holds the model and
//! what nnabla 1.39 and the TenniS runtime computed with the `.nnp` and
//! `.tsm` we write for either value (`input_value_if.json`); the
//! conversions must give those very bytes.
#![cfg(all(feature = "onnx", feature = "nnp", feature = "tennis"))]

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, convert};
use sha2::{Digest, Sha256};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/input_value_if")
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    let v = v.as_array().unwrap().iter();
    v.map(|x| x.as_f64().unwrap()).collect()
}

fn sigmoid(y: f64) -> f64 {
    1.0 / (1.0 + (-y).exp())
}

#[test]
fn each_value_imports_as_the_branch_it_takes() {
    let text = std::fs::read_to_string(data().join("input_value_if.json")).unwrap();
    let r: serde_json::Value = serde_json::from_str(&text).unwrap();
    let x: Vec<f64> = r["x"].as_array().unwrap().iter().flat_map(floats).collect();
    let dir = tempfile::tempdir().unwrap();
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for c in cases {
        let sr = c["sr"].as_f64().unwrap();
        for ext in ["nnp", "tsm"] {
            let out = dir.path().join(format!("m.{ext}"));
            let opts = ConvertOptions::new().input_value("sr", vec![sr]);
            convert(data().join("vad_if.onnx"), &out, &opts).unwrap();
            let sha: String = Sha256::digest(std::fs::read(&out).unwrap())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let key = format!("{ext}_sha256");
            assert_eq!(sha, c[&key].as_str().unwrap(), "sr {sr} to .{ext}");
        }
        // the branch it takes, by the formula: onnxruntime's numbers, and
        // the runtimes' within 1e-6 of them
        let want: Vec<f64> = if sr == 16000.0 {
            x.iter().map(|&v| sigmoid((2.0 * v).max(0.0))).collect()
        } else {
            (0..2)
                .map(|row| {
                    let s: f64 = (0..3)
                        .map(|j| {
                            let w = -1.0 + 2.0 * (row * 3 + j) as f64 / 5.0;
                            (x[row * 3 + j] + w).tanh()
                        })
                        .sum();
                    sigmoid(s)
                })
                .collect()
        };
        for key in ["onnxruntime", "nnabla", "tennis"] {
            let got = floats(&c[key]);
            assert_eq!(got.len(), want.len(), "sr {sr}: {key}'s shape");
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-6, "sr {sr}: {key} {g} against {w}");
            }
        }
    }
}

#[test]
fn without_the_value_it_is_refused_naming_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let e = convert(
        data().join("vad_if.onnx"),
        dir.path().join("m.nnp"),
        &ConvertOptions::new(),
    )
    .unwrap_err();
    let msg = mlformats::chain_message(&e);
    assert!(
        msg.contains("If") && msg.contains("--input-value sr="),
        "{msg}"
    );
}
