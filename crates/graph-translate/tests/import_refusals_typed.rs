//! An import's refusals are typed: `ImportError::Unsupported` carries
//! each refused entry with its subject, its typed reason and its count,
//! and its text is the message as it always was.

use graph_translate::import::{
    ControlFlowError, ImportError, ImportOptions, ImportTarget, LowerError, Reason, Refusal,
    Subject, Unsupported, onnx_to_nnabla,
};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::AttributeProto;
use onnx_format::proto::attribute_proto::AttributeType;
use onnx_format::proto::tensor_proto::DataType;
use onnx_format::write::WriteOptions;

fn parse(b: GraphBuilder, opset: i64) -> onnx_format::Model {
    let mut opts = WriteOptions::default();
    opts.opset = opset;
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&opts)).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

/// A `Loop` body adding 1 to its one loop-carried value, its condition
/// passed on.
fn add_one_body() -> AttributeProto {
    let mut body = GraphBuilder::new("body");
    body.input("i", DataType::Int64, &[]);
    body.input("c", DataType::Bool, &[]);
    body.input("v", DataType::Float, &[Dim::Value(2)]);
    let one = body.const_f32("one", &[1.0], &[1]);
    body.node("Identity", "", &["c"], &["c_out"], vec![]);
    body.node("Add", "", &["v", &one], &["v_out"], vec![]);
    body.output_unshaped("c_out", DataType::Bool);
    body.output_unshaped("v_out", DataType::Float);
    AttributeProto {
        name: Some("body".into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(body.graph),
        ..Default::default()
    }
}

/// Two `Gelu`s of an `approximate` NNabla's lowering does not take, and a
/// `Loop` named `steps` whose trip count is the graph input `n`.
fn two_refusals() -> onnx_format::Model {
    let mut b = GraphBuilder::new("g");
    b.input("n", DataType::Int64, &[]);
    b.input("x", DataType::Float, &[Dim::Value(2)]);
    for out in ["a", "b"] {
        let approx = vec![attr::string("approximate", "sigmoid")];
        b.node("Gelu", "", &["x"], &[out], approx);
    }
    b.node(
        "Loop",
        "steps",
        &["n", "", "x"],
        &["y"],
        vec![add_one_body()],
    );
    for out in ["a", "b", "y"] {
        b.output(out, DataType::Float, &[Dim::Value(2)]);
    }
    parse(b, 20)
}

const TRIP_COUNT: &str = "its trip count \"n\" is computed at run time; a constant one (an \
                          initializer, folded shapes, or --input-value on the graph input it \
                          comes from) would unroll it";

#[test]
fn each_refusal_names_its_op_typed_reason_and_count() {
    let err = onnx_to_nnabla(&two_refusals(), &ImportOptions::default()).unwrap_err();
    let ImportError::Unsupported(Unsupported::Refused(refused)) = &err else {
        panic!("{err:?}");
    };
    assert_eq!(refused.target, ImportTarget::NNabla);
    assert_eq!(refused.total(), 3);
    assert_eq!(err.refusals(), refused.refusals.as_slice());
    let [gelu, lp] = err.refusals() else {
        panic!("{:?}", err.refusals());
    };
    assert_eq!(gelu.subject, Subject::Op("Gelu".into()));
    assert_eq!(gelu.node, None);
    assert_eq!(gelu.count, 2);
    let Some(Reason::Lower(LowerError::UnsupportedAttr { attr, value })) = &gelu.reason else {
        panic!("{gelu:?}");
    };
    assert_eq!((*attr, value.as_str()), ("approximate", "\"sigmoid\""));
    assert_eq!(gelu.to_string(), "Gelu (approximate=\"sigmoid\")");

    assert_eq!(lp.subject, Subject::Op("Loop".into()));
    assert_eq!(lp.node.as_deref(), Some("steps"));
    assert_eq!(lp.count, 1);
    let Some(Reason::ControlFlow(ControlFlowError::TripCountAtRunTime { name })) = &lp.reason
    else {
        panic!("{lp:?}");
    };
    assert_eq!(name, "n");
    assert_eq!(
        lp.to_string(),
        format!("Loop (node \"steps\": {TRIP_COUNT})")
    );

    assert_eq!(
        err.to_string(),
        format!(
            "NNabla cannot express 3 node(s) of this ONNX model: \
             Gelu (approximate=\"sigmoid\") ×2, Loop (node \"steps\": {TRIP_COUNT}) ×1"
        )
    );
}

#[test]
fn refusals_before_lowering_are_typed_too() {
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &[Dim::Value(2)]);
    b.node("NoSuchOp", "", &["x"], &["a"], vec![]);
    let mut custom = onnx_format::proto::NodeProto {
        op_type: Some("Custom".into()),
        domain: Some("com.example".into()),
        input: vec!["x".into()],
        output: vec!["b".into()],
        ..Default::default()
    };
    custom.name = Some("c".into());
    b.graph.node.push(custom);
    b.output("a", DataType::Float, &[Dim::Value(2)]);
    b.output("b", DataType::Float, &[Dim::Value(2)]);
    let err = onnx_to_nnabla(&parse(b, 13), &ImportOptions::default()).unwrap_err();
    let [bare, other] = err.refusals() else {
        panic!("{err:?}");
    };
    assert_eq!(bare.subject, Subject::Op("NoSuchOp".into()));
    assert_eq!(bare.reason, None);
    let Refusal {
        reason: Some(Reason::Domain(domain)),
        count: 1,
        ..
    } = other
    else {
        panic!("{other:?}");
    };
    assert_eq!(domain, "com.example");
    assert_eq!(
        err.to_string(),
        "NNabla cannot express 2 node(s) of this ONNX model: NoSuchOp ×1, \
         Custom (domain \"com.example\") ×1"
    );
}

#[test]
fn an_opset_out_of_range_is_typed_and_lists_no_refusal() {
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &[Dim::Value(2)]);
    b.node("Relu", "", &["x"], &["y"], vec![]);
    b.output("y", DataType::Float, &[Dim::Value(2)]);
    let err = onnx_to_nnabla(&parse(b, 99), &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            ImportError::Unsupported(Unsupported::Opset {
                opset: 99,
                min: 1,
                ..
            })
        ),
        "{err:?}"
    );
    assert!(err.refusals().is_empty());
    assert_eq!(
        err.to_string(),
        "the model uses ONNX opset 99; import reads opsets 1 to 28"
    );
}
