//! ONNX → NNabla: the `Affine` weights of `Gemm` and `MatMul` keep the
//! ONNX initializers' names where they hold them as they are; a `Gemm`
//! with `transB` 1 stores the transpose as `{name}__T` (the NNabla → ONNX
//! export turns it back into `name`), shared between the Gemms reading it;
//! a weight scaled by `alpha` stays `{name}__W`.

use graph_translate::import::{ImportOptions, onnx_to_nnabla};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::Tensor;

fn parse(b: GraphBuilder) -> onnx_format::Model {
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

fn dims(d: &[i64]) -> Vec<Dim> {
    d.iter().map(|&v| Dim::Value(v)).collect()
}

fn init(b: &mut GraphBuilder, name: &str, d: &[usize]) {
    let n: usize = d.iter().product();
    let v: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 1.0).collect();
    b.initializer(name, &Tensor::from_values(d, &v).unwrap())
        .unwrap();
}

/// Parameters as (name, dims).
type Params = Vec<(String, Vec<usize>)>;

/// The parameters and, per Affine, its inputs 1 and 2.
fn imported(m: &onnx_format::Model) -> (Params, Vec<Vec<String>>) {
    let nn = onnx_to_nnabla(m, &ImportOptions::default()).unwrap();
    let params = nn
        .parameters
        .iter()
        .map(|(n, t)| (n.clone(), t.dims().to_vec()))
        .collect();
    let affine = nn.model.network[0]
        .function
        .iter()
        .filter(|f| f.r#type == "Affine")
        .map(|f| f.input[1..].to_vec())
        .collect();
    (params, affine)
}

#[test]
fn gemm_and_matmul_weights_keep_their_names() {
    let mut b = GraphBuilder::new("mlp");
    b.input("x", DataType::Float, &dims(&[2, 8]));
    init(&mut b, "fc1.weight", &[6, 8]);
    init(&mut b, "fc1.bias", &[6]);
    init(&mut b, "fc2.weight", &[6, 5]);
    init(&mut b, "/proj/W", &[5, 4]);
    let t1 = vec![attr::int("transB", 1)];
    b.node(
        "Gemm",
        "",
        &["x", "fc1.weight", "fc1.bias"],
        &["h"],
        t1.clone(),
    );
    b.node("Gemm", "", &["h", "fc2.weight"], &["h2"], vec![]);
    b.node("MatMul", "", &["h2", "/proj/W"], &["y"], vec![]);
    // a second Gemm reading fc1.weight transposed: the same parameter
    b.node("Gemm", "", &["x", "fc1.weight"], &["z"], t1);
    b.output("y", DataType::Float, &dims(&[2, 4]));
    b.output("z", DataType::Float, &dims(&[2, 6]));
    let (params, affine) = imported(&parse(b));
    let want: Vec<(String, Vec<usize>)> = vec![
        ("fc1.weight__T".into(), vec![8, 6]),
        ("fc1.bias".into(), vec![6]),
        ("fc2.weight".into(), vec![6, 5]),
        ("/proj/W".into(), vec![5, 4]),
    ];
    assert_eq!(params, want);
    assert_eq!(affine[0], ["fc1.weight__T", "fc1.bias"]);
    assert_eq!(affine[1], ["fc2.weight"]);
    assert_eq!(affine[2], ["/proj/W"]);
    assert_eq!(affine[3], ["fc1.weight__T"]);
}

#[test]
fn scaled_or_broadcast_weights_keep_the_derived_suffixes() {
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &dims(&[2, 8]));
    init(&mut b, "w", &[6, 8]);
    init(&mut b, "c", &[1, 6]);
    let a = vec![attr::int("transB", 1), attr::float("alpha", 0.5)];
    b.node("Gemm", "", &["x", "w", "c"], &["y"], a);
    b.output("y", DataType::Float, &dims(&[2, 6]));
    let (params, affine) = imported(&parse(b));
    let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["w__W", "c__b"]);
    assert_eq!(affine[0], ["w__W", "c__b"]);
}

#[test]
fn an_onnx_value_named_like_the_transpose_is_not_taken_for_it() {
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &dims(&[2, 8]));
    b.input("w__T", DataType::Float, &dims(&[2, 6]));
    init(&mut b, "w", &[6, 8]);
    b.node(
        "Gemm",
        "",
        &["x", "w"],
        &["y"],
        vec![attr::int("transB", 1)],
    );
    b.node("Add", "", &["y", "w__T"], &["z"], vec![]);
    b.output("z", DataType::Float, &dims(&[2, 6]));
    let (params, affine) = imported(&parse(b));
    assert_eq!(params[0].0, "w__W");
    assert_eq!(affine[0], ["w__W"]);
}
