//! A `Concat` of one input (what DenseNet's first dense layer exports:
//! `torch.cat` of a list of one) is that input: nnabla's `Concatenate`
//! needs two inputs or more, so the import writes an `Identity`. (Seen in
//! the population check: torchvision's densenet121, exported by the
//! TorchScript exporter, ran in nnabla only after this.) A `Concat` with
//! no input at all is refused, not a panic.
#![cfg(feature = "nnabla")]

use graph_translate::import::{ImportOptions, onnx_to_nnabla};
use onnx_format::builder::{Dim, GraphBuilder};
use onnx_format::proto::tensor_proto::DataType;

fn model(inputs: &[&str]) -> onnx_format::Model {
    let mut b = GraphBuilder::new("cat");
    b.input("x", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    b.node("Relu", "", &["x"], &["r"], vec![]);
    b.node(
        "Concat",
        "",
        inputs,
        &["y"],
        vec![onnx_format::builder::attr::int("axis", 1)],
    );
    b.output("y", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

#[test]
fn a_concat_of_one_input_is_an_identity() {
    let nn = onnx_to_nnabla(&model(&["r"]), &ImportOptions::default()).unwrap();
    let net = &nn.model.network[0];
    let f: Vec<&str> = net.function.iter().map(|f| f.r#type.as_str()).collect();
    assert_eq!(f, ["ReLU", "Identity"]);
    let id = &net.function[1];
    assert_eq!(
        (id.input.as_slice(), id.output.as_slice()),
        (&["r".to_string()][..], &["y".to_string()][..])
    );
    let y = net.variable.iter().find(|v| v.name == "y").unwrap();
    assert_eq!(y.shape.as_ref().unwrap().dim, [2, 3]);
    // two inputs stay a Concatenate
    let nn = onnx_to_nnabla(&model(&["r", "x"]), &ImportOptions::default()).unwrap();
    let f: Vec<&str> = nn.model.network[0]
        .function
        .iter()
        .map(|f| f.r#type.as_str())
        .collect();
    assert_eq!(f, ["ReLU", "Concatenate"]);
}

#[test]
fn a_concat_of_no_input_is_refused() {
    let e = onnx_to_nnabla(&model(&[]), &ImportOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("Concat"), "{e}");
}
