//! `convert` between NNabla's encodings keeps the whole model, not just the
//! parameters: networks, executors and `need_grad` survive text → binary →
//! `.nnp` → text.

mod common;

use common::{inspect_json, run_str, testdata};
use serde_json::Value;

fn strip(mut v: Value) -> Value {
    // what legitimately changes with the encoding
    let o = v.as_object_mut().unwrap();
    o.remove("format");
    o.remove("file_size");
    o.remove("solver_states");
    v
}

#[test]
fn text_binary_text_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("nnabla/mlp_with_params.nntxt");
    let pb = dir.path().join("m.protobuf");
    let back = dir.path().join("m.nntxt");
    assert!(
        run_str(&["convert", src.to_str().unwrap(), pb.to_str().unwrap()])
            .status
            .success()
    );
    assert!(
        run_str(&["convert", pb.to_str().unwrap(), back.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&back).unwrap());
}

#[test]
fn every_encoding_carries_the_graph_and_need_grad() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["convnet.nnp", "train.nnp", "mlp.nntxt", "mlp.protobuf"] {
        let src = testdata().join("nnabla").join(name);
        let want = strip(inspect_json(&src));
        let mut prev = src.clone();
        for ext in ["nntxt", "protobuf", "nnp", "nntxt"] {
            let out = dir.path().join(format!("{name}.{ext}"));
            let r = run_str(&["convert", prev.to_str().unwrap(), out.to_str().unwrap()]);
            assert!(
                r.status.success(),
                "{name} -> {ext}: {}",
                String::from_utf8_lossy(&r.stderr)
            );
            let got = strip(inspect_json(&out));
            assert_eq!(got["graph"], want["graph"], "{name} -> {ext}");
            assert_eq!(got["tensors"], want["tensors"], "{name} -> {ext}");
            prev = out;
        }
    }
}

#[test]
fn nnp_to_h5_keeps_the_parameters_only() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("nnabla/convnet.nnp");
    let out = dir.path().join("p.h5");
    assert!(
        run_str(&["convert", src.to_str().unwrap(), out.to_str().unwrap()])
            .status
            .success()
    );
    let a = inspect_json(&src);
    let b = inspect_json(&out);
    assert_eq!(a["tensors"], b["tensors"]);
    assert_eq!(b["graph"], Value::Null);
}
