//! Constant folding evaluates `Relu`: the element count of `Range` written
//! out (`Relu(Ceil((limit - start) / delta))`, the body onnx gives
//! `Range` as a function) folds once `--input-value` fixes the inputs, so
//! that a shape computed from it is known when importing.

use graph_translate::import::{ImportOptions, onnx_to_nnabla, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;

/// `y = ConstantOfShape(Cast(Relu(Ceil((limit - start) / delta)) + 1))`
/// over f32 inputs `start`, `limit`, `delta` of shape `[1]`.
fn model() -> onnx_format::Model {
    let mut b = GraphBuilder::new("range_count");
    for n in ["start", "limit", "delta"] {
        b.input(n, DataType::Float, &[Dim::Value(1)]);
    }
    b.node("Sub", "", &["limit", "start"], &["d"], vec![]);
    b.node("Div", "", &["d", "delta"], &["q"], vec![]);
    b.node("Ceil", "", &["q"], &["c"], vec![]);
    b.node("Relu", "", &["c"], &["n"], vec![]);
    let one = b.const_f32("one", &[1.0], &[1]);
    b.node("Add", "", &["n", &one], &["n1"], vec![]);
    let to = attr::int("to", DataType::Int64 as i64);
    b.node("Cast", "", &["n1"], &["shape"], vec![to]);
    b.node("ConstantOfShape", "", &["shape"], &["y"], vec![]);
    b.output_unshaped("y", DataType::Float);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

fn fixed(start: f64, limit: f64, delta: f64) -> ImportOptions {
    ImportOptions::default()
        .input_value("start", vec![start])
        .input_value("limit", vec![limit])
        .input_value("delta", vec![delta])
}

/// The NNabla import's output `y`: its dimensions and functions.
fn nnabla_y(opts: &ImportOptions) -> (Vec<i64>, Vec<String>) {
    let nn = onnx_to_nnabla(&model(), opts).unwrap();
    let net = &nn.model.network[0];
    let y = net.variable.iter().find(|v| v.name == "y").unwrap();
    let dims = y.shape.as_ref().unwrap().dim.clone();
    let f = net.function.iter().map(|f| f.r#type.clone()).collect();
    (dims, f)
}

#[test]
fn relu_of_fixed_inputs_folds_into_the_shape() {
    // (5 - 1) / 2 = 2 elements, + 1
    let (dims, f) = nnabla_y(&fixed(1.0, 5.0, 2.0));
    assert_eq!(dims, [3]);
    assert!(!f.iter().any(|x| x == "ReLU"), "{f:?}");
    // a negative count is 0 after Relu, + 1
    let (dims, _) = nnabla_y(&fixed(5.0, 1.0, 2.0));
    assert_eq!(dims, [1]);
    let m = onnx_to_tennis(&model(), &fixed(1.0, 5.0, 2.0)).unwrap();
    let ops: Vec<&str> = m.nodes().iter().map(|n| n.op()).collect();
    assert!(!ops.contains(&"relu"), "{ops:?}");
}

#[test]
fn without_fixed_inputs_the_shape_is_refused() {
    let e = onnx_to_nnabla(&model(), &ImportOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("ConstantOfShape"), "{e}");
}
