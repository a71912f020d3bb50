//! An `If` whose condition is computed at run time becomes both branches
//! and a `Where`: `testdata/translate/if_select/` holds such a model and
//! what the real nnabla 1.39 computed with the `.nnp` we write for it
//! (`if_select.json`: its sha256, and nnabla's and onnxruntime's outputs for
//! either branch), and what the real TenniS runtime computed with the `.tsm`
//! we write for it (`tsm_sha256`, `tennis`). The conversions must give those
//! very bytes.
#![cfg(all(feature = "onnx", feature = "nnp"))]

use std::io::Read;
use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, convert};
use sha2::{Digest, Sha256};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/if_select")
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn record() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(data().join("if_select.json")).unwrap()).unwrap()
}

/// The bytes `if_select.onnx` converts to as `file` (its extension names the
/// target), checked to be those whose sha256 `if_select.json` records at `key`.
fn converted(file: &str, key: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(file);
    let s = convert(data().join("if_select.onnx"), &out, &ConvertOptions::new()).unwrap();
    assert!(s.whole_model);
    let bytes = std::fs::read(&out).unwrap();
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        sha,
        record()[key].as_str().unwrap(),
        "{file}: not the bytes the runtime ran"
    );
    bytes
}

/// Checks the recorded outputs of `runtime` (and onnxruntime's) for either
/// branch against the model's formula.
fn check_outputs(r: &serde_json::Value, runtime: &str) {
    let x = floats(
        &r["x"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().clone())
            .collect(),
    );
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    let flags: Vec<f64> = cases.iter().map(|c| c["flag"].as_f64().unwrap()).collect();
    assert_eq!(flags, [1.0, -1.0], "either branch once");
    for c in cases {
        let flag = c["flag"].as_f64().unwrap();
        let (ort, got) = (floats(&c["onnxruntime"]), floats(&c[runtime]));
        assert_eq!((ort.len(), got.len()), (6, 6));
        for i in 0..6 {
            let w = -1.0 + 2.0 * i as f64 / 5.0;
            let y = if flag > 0.0 {
                (2.0 * x[i]).max(0.0)
            } else {
                (x[i] + w).tanh()
            };
            let want = 1.0 / (1.0 + (-y).exp());
            assert!(
                (ort[i] - want).abs() < 1e-6,
                "onnxruntime, flag {flag}, {i}"
            );
            assert!((got[i] - want).abs() < 1e-6, "{runtime}, flag {flag}, {i}");
        }
    }
}

#[test]
fn a_run_time_if_is_the_nnp_nnabla_ran() {
    let r = record();
    let bytes = converted("m.nnp", "nnp_sha256");

    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut text = String::new();
    z.by_name("network.nntxt")
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let model = nnp_archive::nnabla_proto::text::parse(&text).unwrap();
    let net = &model.network[0];
    let types: Vec<&str> = net.function.iter().map(|f| f.r#type.as_str()).collect();
    for want in [
        "Greater",
        "MulScalar",
        "ReLU",
        "Add2",
        "Tanh",
        "Where",
        "Sigmoid",
    ] {
        assert!(types.contains(&want), "{want} not in {types:?}");
    }
    // flag stays an input: the condition is computed at run time
    let inputs: Vec<&str> = model.executor[0]
        .data_variable
        .iter()
        .map(|v| v.variable_name.as_str())
        .collect();
    assert_eq!(inputs, ["x", "flag"]);

    // what the runtimes computed: each branch's result, the two runtimes agreeing
    check_outputs(&r, "nnabla");
}

#[cfg(feature = "tennis")]
#[test]
fn a_run_time_if_is_the_tsm_tennis_ran() {
    let r = record();
    let bytes = converted("m.tsm", "tsm_sha256");
    let m = bubble_module::Module::parse(&bytes).unwrap();
    let ops: Vec<&str> = m.nodes().iter().map(|n| n.op()).collect();
    for want in ["mul", "relu", "add", "tanh", "where", "sigmoid"] {
        assert!(ops.contains(&want), "{want} not in {ops:?}");
    }
    assert_eq!(ops.iter().filter(|o| **o == "where").count(), 1);
    // flag stays an input: the condition is computed at run time
    let inputs: Vec<&str> = m.inputs().iter().map(|&i| m.nodes()[i].name()).collect();
    assert_eq!(inputs, ["x", "flag"]);
    check_outputs(&r, "tennis");
}
