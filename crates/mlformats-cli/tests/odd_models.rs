//! Models from the field, through the CLI: an ONNX model whose weights are
//! `Constant` nodes (paddle2onnx's exports) lists them in `inspect --json`,
//! `stats` and `show` take their names, `convert` writes them to
//! safetensors and `diff` pairs them; tensors named as torch.onnx 2.x names
//! them (`/model.10/w`) go to `.npz` and `.h5` and come back by name.

mod common;

use std::path::Path;

use common::{inspect_json2, run_str};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::Tensor;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `Y = MatMul(X, /model.0/W) + B`, `/model.0/W` and `B` `Constant` nodes.
fn constant_model(path: &Path) {
    let mut g = GraphBuilder::new("paddle_like");
    let w = Tensor::from_values([3, 4], &(0..12).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let value = attr::tensor("value", onnx_format::tensor_to_proto("", &w).unwrap());
    g.node("Constant", "w", &[], &["/model.0/W"], vec![value]);
    let b = attr::floats("value_floats", &[0.5, 1.5, 2.5, 3.5]);
    g.node("Constant", "b", &[], &["B"], vec![b]);
    g.input("X", DataType::Float, &[Dim::Value(1), Dim::Value(3)]);
    g.node("MatMul", "mm", &["X", "/model.0/W"], &["XW"], vec![]);
    g.node("Add", "add", &["XW", "B"], &["Y"], vec![]);
    g.output("Y", DataType::Float, &[Dim::Value(1), Dim::Value(4)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &g.finish(&Default::default())).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn ok(args: &[&str]) -> String {
    let out = run_str(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn constant_node_weights_are_tensors_to_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.onnx");
    constant_model(&m);
    let json = inspect_json2(&m);
    let names: Vec<&str> = json["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["/model.0/W", "B"]);
    assert_eq!(json["parameters"], 16, "{json}");
    let stats = ok(&["stats", s(&m), "--only", "/model.0/W"]);
    assert!(stats.contains("/model.0/W"), "{stats}");
    let shown = ok(&["show", s(&m), "B"]);
    assert!(shown.contains("2.5"), "{shown}");
    let st = dir.path().join("m.safetensors");
    ok(&["convert", s(&m), s(&st)]);
    let back = inspect_json2(&st);
    assert_eq!(back["tensors"].as_array().unwrap().len(), 2);
    ok(&["diff", s(&m), s(&st)]);
}

#[test]
fn torch_style_names_go_to_npz_and_h5_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.onnx");
    constant_model(&m);
    for ext in ["npz", "h5", "nnp"] {
        let out = dir.path().join(format!("w.{ext}"));
        if ext == "nnp" {
            // (without, the graph is imported)
            ok(&["convert", s(&m), s(&out), "--weights-only"]);
        } else {
            ok(&["convert", s(&m), s(&out)]);
        }
        let json = inspect_json2(&out);
        let mut names: Vec<&str> = json["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        names.sort_unstable();
        assert_eq!(names, ["/model.0/W", "B"], "{ext}");
        ok(&["show", s(&out), "/model.0/W"]);
        ok(&["diff", s(&m), s(&out)]);
    }
}

#[test]
fn an_imported_network_naming_a_parameter_hdf5_cannot_hold_goes_in_and_back() {
    // nnabla registers parameter.h5's datasets by path: the network names
    // the parameter stored at `_/model.0/W` by that path, and our reader
    // gives `/model.0/W` back (the real nnabla's check: the library's test
    // nnp_torch_names)
    let dir = tempfile::tempdir().unwrap();
    let mut g = GraphBuilder::new("torch_like");
    let w = Tensor::from_values([3, 4], &[0.25f32; 12]).unwrap();
    g.initializer("/model.0/W", &w).unwrap();
    g.input("X", DataType::Float, &[Dim::Value(1), Dim::Value(3)]);
    g.node(
        "MatMul",
        "/model.0/MatMul",
        &["X", "/model.0/W"],
        &["/model.0/Y"],
        vec![],
    );
    g.output(
        "/model.0/Y",
        DataType::Float,
        &[Dim::Value(1), Dim::Value(4)],
    );
    let m = dir.path().join("t.onnx");
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &g.finish(&Default::default())).unwrap();
    std::fs::write(&m, bytes).unwrap();
    let nnp = dir.path().join("t.nnp");
    ok(&["convert", s(&m), s(&nnp)]);
    let names = |p: &Path| -> Vec<String> {
        inspect_json2(p)["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    // (the MatMul's B is the Affine weight as it is: it keeps its name)
    assert_eq!(names(&nnp), ["/model.0/W"]);
    ok(&["show", s(&nnp), "/model.0/W"]);
    let back = dir.path().join("back.onnx");
    ok(&["convert", s(&nnp), s(&back)]);
    assert_eq!(names(&back), ["/model.0/W"]);
}
