//! Real refusals carry their typed cause: a `Loop` whose trip count is a
//! graph input (computed at run time) and an opset-6 `Upsample` whose mode
//! the rewrite to opset 7 cannot keep. Each cause is matched on where the
//! import meets it, and the import's error quotes its text unchanged.

use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::AttributeProto;
use onnx_format::proto::attribute_proto::AttributeType;
use onnx_format::proto::tensor_proto::DataType;
use onnx_format::write::WriteOptions;

use super::driver::Values;
use super::error::{ControlFlowError, RewriteError};
use super::{ImportOptions, legacy, onnx_graph, onnx_to_nnabla, unroll};

fn parse(b: GraphBuilder, opset: i64) -> onnx_format::Model {
    let mut opts = WriteOptions::default();
    opts.opset = opset;
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&opts)).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

/// `y = Loop(n, , x)` (no condition) whose body adds 1 to `x`: `n` is a graph input.
fn loop_with_input_trip_count() -> onnx_format::Model {
    let mut body = GraphBuilder::new("body");
    body.input("i", DataType::Int64, &[]);
    body.input("c", DataType::Bool, &[]);
    body.input("v", DataType::Float, &[Dim::Value(2)]);
    let one = body.const_f32("one", &[1.0], &[1]);
    body.node("Identity", "", &["c"], &["c_out"], vec![]);
    body.node("Add", "", &["v", &one], &["v_out"], vec![]);
    body.output_unshaped("c_out", DataType::Bool);
    body.output_unshaped("v_out", DataType::Float);
    let mut b = GraphBuilder::new("g");
    b.input("n", DataType::Int64, &[]);
    b.input("x", DataType::Float, &[Dim::Value(2)]);
    let g = AttributeProto {
        name: Some("body".into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(body.graph),
        ..Default::default()
    };
    b.node("Loop", "steps", &["n", "", "x"], &["y"], vec![g]);
    b.output("y", DataType::Float, &[Dim::Value(2)]);
    parse(b, 13)
}

#[test]
fn a_loop_with_a_run_time_trip_count_says_so() {
    let m = loop_with_input_trip_count();
    let g = onnx_graph::load(&m, &ImportOptions::default()).unwrap();
    let node = g.nodes.iter().find(|n| n.op == "Loop").unwrap();
    let why = match unroll::LoopUnroll::new(&Values::new(&g), node) {
        Err(e) => e,
        Ok(_) => panic!("a Loop with a run-time trip count was unrolled"),
    };
    let ControlFlowError::TripCountAtRunTime { name } = &why else {
        panic!("{why:?}");
    };
    assert_eq!(name, "n");
    let want = "its trip count \"n\" is computed at run time; a constant one (an initializer, \
                folded shapes, or --input-value on the graph input it comes from) would \
                unroll it";
    assert_eq!(why.to_string(), want);
    let err = onnx_to_nnabla(&m, &ImportOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("Loop (node \"steps\": {want})")),
        "{text}"
    );
    // fixing the trip count unrolls it
    let fixed = ImportOptions::default().input_value("n", vec![3.0]);
    assert!(onnx_to_nnabla(&m, &fixed).is_ok());
}

/// `y = Upsample(x)` at opset 6 in `mode`.
fn old_upsample(mode: &str) -> onnx_format::Model {
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &[1, 1, 2, 2].map(Dim::Value));
    let attrs = vec![
        attr::string("mode", mode),
        attr::float("height_scale", 2.0),
        attr::float("width_scale", 2.0),
    ];
    b.node("Upsample", "up", &["x"], &["y"], attrs);
    b.output("y", DataType::Float, &[1, 1, 4, 4].map(Dim::Value));
    parse(b, 6)
}

#[test]
fn an_old_node_whose_meaning_is_not_kept_says_which_attribute() {
    let m = old_upsample("bilinear");
    let g = onnx_graph::load(&m, &ImportOptions::default()).unwrap();
    let v = Values::new(&g);
    let node = &g.nodes[0];
    let shape = |n: &str| v.shape(n).ok();
    let konst = |n: &str| v.konst(n).cloned();
    let why = legacy::rewrite(&g, node, &Default::default(), &shape, &konst).unwrap_err();
    assert!(
        matches!(&why, RewriteError::Attr { what, opset: 6, .. } if what == "mode \"bilinear\""),
        "{why:?}"
    );
    let want = "mode \"bilinear\" at opset 6 (its sampling positions are not specified)";
    assert_eq!(why.to_string(), want);
    let text = onnx_to_nnabla(&m, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(text.contains(&format!("Upsample ({want})")), "{text}");
    // nearest is kept
    assert!(onnx_to_nnabla(&old_upsample("nearest"), &ImportOptions::default()).is_ok());
}
