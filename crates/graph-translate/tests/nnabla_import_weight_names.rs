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

/// Linear as torch's dynamo exporter writes it, on a `[2, 3, 8]` input:
/// `y = MatMul(x, Transpose(fc.weight)) + fc.bias`, and a second
/// `Transpose` of the same weight into `z = MatMul(x, ·)`.
fn dynamo_linear() -> onnx_format::ModelProto {
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &dims(&[2, 3, 8]));
    init(&mut b, "fc.weight", &[6, 8]);
    init(&mut b, "fc.bias", &[6]);
    let perm = || vec![attr::ints("perm", &[1, 0])];
    b.node("Transpose", "", &["fc.weight"], &["val_1"], perm());
    b.node("MatMul", "", &["x", "val_1"], &["m"], vec![]);
    b.node("Add", "", &["m", "fc.bias"], &["y"], vec![]);
    b.node("Transpose", "", &["fc.weight"], &["val_2"], perm());
    b.node("MatMul", "", &["x", "val_2"], &["z"], vec![]);
    b.output("y", DataType::Float, &dims(&[2, 3, 6]));
    b.output("z", DataType::Float, &dims(&[2, 3, 6]));
    b.finish(&Default::default())
}

fn reparse(m: &onnx_format::ModelProto) -> onnx_format::Model {
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, m).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

/// The outputs of `m` in tract for input `x` (`[2, 3, 8]`).
fn run(m: &onnx_format::ModelProto, x: &[f32]) -> Vec<Vec<f32>> {
    use tract_onnx::prelude::*;
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, m).unwrap();
    let plan = tract_onnx::onnx()
        .model_for_read(&mut &bytes[..])
        .unwrap()
        .with_input_fact(0, f32::fact([2, 3, 8]).into())
        .unwrap()
        .into_optimized()
        .unwrap()
        .into_runnable()
        .unwrap();
    let x = tract_onnx::prelude::Tensor::from_shape(&[2, 3, 8], x).unwrap();
    let out = plan.run(tvec!(x.into())).unwrap();
    out.iter()
        .map(|t| t.as_slice::<f32>().unwrap().to_vec())
        .collect()
}

#[test]
fn a_folded_transpose_of_a_weight_comes_back_under_its_name() {
    let src = dynamo_linear();
    let nn = onnx_to_nnabla(&reparse(&src), &ImportOptions::default()).unwrap();
    let params: Params = nn
        .parameters
        .iter()
        .map(|(n, t)| (n.clone(), t.dims().to_vec()))
        .collect();
    // one transposed parameter for both Transposes, named after the weight
    assert_eq!(
        params,
        [
            ("fc.weight__T".to_string(), vec![8, 6]),
            ("fc.bias".to_string(), vec![6])
        ]
    );
    let weights: std::collections::BTreeMap<String, Tensor<'static>> =
        nn.parameters.into_iter().collect();
    let opts = graph_translate::export::ExportOptions::new();
    let (back, _) = graph_translate::export::nnabla::export(&nn.model, &weights, &opts).unwrap();
    let inits = reparse(&back).initializers().unwrap();
    let find = |name: &str| inits.iter().find(|(n, _)| n == name).map(|(_, t)| t);
    let w = find("fc.weight").expect("fc.weight back under its name");
    assert_eq!(w.dims(), [6, 8]);
    let orig = reparse(&src).initializers().unwrap();
    assert_eq!(
        w.to_vec::<f32>().unwrap(),
        orig[0].1.to_vec::<f32>().unwrap()
    );
    assert!(find("fc.bias").is_some());
    for gone in ["val_1", "val_2", "fc.weight__T"] {
        assert!(find(gone).is_none(), "{gone} exported");
    }
    let x: Vec<f32> = (0..48).map(|i| (i as f32 * 0.37).sin()).collect();
    let (want, got) = (run(&src, &x), run(&back, &x));
    assert_eq!(want.len(), 2);
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w.len(), 36);
        let worst = w
            .iter()
            .zip(g)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-5, "{worst}");
    }
}
