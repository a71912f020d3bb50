//! Loops written against the specification are refused with a reason,
//! never a panic: a `Loop` with only its trip count (no condition, no
//! loop-carried value) whose body declares the two inputs every body has.
#![cfg(all(feature = "nnabla", feature = "tennis"))]

use graph_translate::import::{ImportOptions, onnx_to_nnabla, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder};
use onnx_format::proto::AttributeProto;
use onnx_format::proto::attribute_proto::AttributeType;
use onnx_format::proto::tensor_proto::DataType;

fn model(with_scan_output: bool) -> onnx_format::Model {
    let mut body = GraphBuilder::new("body");
    body.input("i", DataType::Int64, &[]);
    body.input("c", DataType::Bool, &[]);
    body.node("Identity", "", &["c"], &["c_out"], vec![]);
    body.output_unshaped("c_out", DataType::Bool);
    if with_scan_output {
        body.node("Identity", "", &["i"], &["each"], vec![]);
        body.output_unshaped("each", DataType::Int64);
    }
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &[Dim::Value(2)]);
    let m = b.const_i64("m", &[3]);
    let outs: &[&str] = if with_scan_output { &["ys"] } else { &[] };
    b.node(
        "Loop",
        "",
        &[&m],
        outs,
        vec![AttributeProto {
            name: Some("body".into()),
            r#type: Some(AttributeType::Graph as i32),
            g: Some(body.graph),
            ..Default::default()
        }],
    );
    b.node("Relu", "", &["x"], &["y"], vec![]);
    b.output("y", DataType::Float, &[Dim::Value(2)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

#[test]
fn a_loop_with_only_a_trip_count_does_not_panic() {
    for scan in [false, true] {
        let m = model(scan);
        // either imported (its outputs unused) or refused with words
        if let Err(e) = onnx_to_nnabla(&m, &ImportOptions::default()) {
            assert!(!e.to_string().is_empty());
        }
        if let Err(e) = onnx_to_tennis(&m, &ImportOptions::default()) {
            assert!(!e.to_string().is_empty());
        }
    }
}
