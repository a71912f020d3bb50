//! Model-local functions (`ModelProto.functions`, as onnxscript and torch's
//! dynamo exporter write them) are expanded before lowering: a call becomes
//! the function's nodes, an attribute taken by reference gets the call's
//! value (or the function's default), a call inside a function is
//! expanded too.

#![cfg(all(feature = "nnabla", feature = "tennis"))]

use graph_translate::import::{ImportOptions, onnx_to_nnabla, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;
use onnx_format::proto::{AttributeProto, FunctionProto, NodeProto, OperatorSetIdProto};

fn node(
    op: &str,
    domain: &str,
    inputs: &[&str],
    outputs: &[&str],
    a: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        domain: Some(domain.into()),
        input: inputs.iter().map(|s| (*s).to_string()).collect(),
        output: outputs.iter().map(|s| (*s).to_string()).collect(),
        attribute: a,
        ..Default::default()
    }
}

/// `alpha` taken by reference from the call.
fn by_ref(name: &str, r: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        ref_attr_name: Some(r.into()),
        r#type: Some(onnx_format::proto::attribute_proto::AttributeType::Float as i32),
        ..Default::default()
    }
}

/// `y = scaled_elu(softsign2(x))` where `softsign2(t) = t / (1 + |t|)`
/// (calling `plus_one`) and `scaled_elu(t; alpha) = Elu(t, alpha) * 2`,
/// the call giving alpha 0.5 and a second call using the default 1.5.
fn model() -> onnx_format::Model {
    let opset = vec![OperatorSetIdProto {
        domain: Some(String::new()),
        version: Some(18),
    }];
    let plus_one = FunctionProto {
        name: Some("plus_one".into()),
        domain: Some("this".into()),
        input: vec!["a".into()],
        output: vec!["b".into()],
        node: vec![
            node(
                "Constant",
                "",
                &[],
                &["one"],
                vec![attr::float("value_float", 1.0)],
            ),
            node("Add", "", &["a", "one"], &["b"], vec![]),
        ],
        opset_import: opset.clone(),
        ..Default::default()
    };
    let softsign2 = FunctionProto {
        name: Some("softsign2".into()),
        domain: Some("this".into()),
        input: vec!["t".into()],
        output: vec!["u".into()],
        node: vec![
            node("Abs", "", &["t"], &["m"], vec![]),
            node("plus_one", "this", &["m"], &["d"], vec![]),
            node("Div", "", &["t", "d"], &["u"], vec![]),
        ],
        opset_import: opset.clone(),
        ..Default::default()
    };
    let scaled_elu = FunctionProto {
        name: Some("scaled_elu".into()),
        domain: Some("this".into()),
        input: vec!["t".into()],
        output: vec!["u".into()],
        attribute_proto: vec![attr::float("alpha", 1.5)],
        node: vec![
            node("Elu", "", &["t"], &["e"], vec![by_ref("alpha", "alpha")]),
            node(
                "Constant",
                "",
                &[],
                &["two"],
                vec![attr::float("value_float", 2.0)],
            ),
            node("Mul", "", &["e", "two"], &["u"], vec![]),
        ],
        opset_import: opset,
        ..Default::default()
    };
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    b.node("softsign2", "", &["x"], &["s"], vec![]);
    b.node(
        "scaled_elu",
        "",
        &["s"],
        &["y"],
        vec![attr::float("alpha", 0.5)],
    );
    b.node("scaled_elu", "", &["s"], &["z"], vec![]);
    b.output("y", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    b.output("z", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    for n in &mut b.graph.node {
        n.domain = Some("this".into());
    }
    let mut m = b.finish(&Default::default());
    m.functions = vec![plus_one, softsign2, scaled_elu];
    m.opset_import.push(OperatorSetIdProto {
        domain: Some("this".into()),
        version: Some(1),
    });
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &m).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

#[test]
fn calls_of_local_functions_become_their_nodes() {
    let nn = onnx_to_nnabla(&model(), &ImportOptions::default()).unwrap();
    let net = &nn.model.network[0];
    let types: Vec<&str> = net.function.iter().map(|f| f.r#type.as_str()).collect();
    // Abs, 1 + |x|, the division; then each call's ELU and doubling
    for want in ["Abs", "AddScalar", "Div2", "ELU", "MulScalar"] {
        assert!(types.contains(&want), "{want} not in {types:?}");
    }
    assert_eq!(
        types.iter().filter(|t| **t == "ELU").count(),
        2,
        "{types:?}"
    );
    // the call's alpha, and the function's default for the other call
    let alphas: Vec<f64> = net
        .function
        .iter()
        .filter_map(|f| match &f.parameter {
            Some(nnabla_proto::proto::function::Parameter::EluParam(p)) => Some(p.alpha),
            _ => None,
        })
        .collect();
    assert_eq!(alphas, [0.5, 1.5]);
    // outputs keep the calls' names
    let outs: Vec<&str> = nn.model.executor[0]
        .output_variable
        .iter()
        .map(|v| v.variable_name.as_str())
        .collect();
    assert_eq!(outs, ["y", "z"]);
    let t = onnx_to_tennis(&model(), &ImportOptions::default()).unwrap();
    let ops: Vec<String> = t.nodes().iter().map(|n| n.op().to_string()).collect();
    assert!(ops.iter().any(|o| o == "abs"), "{ops:?}");
    assert!(
        ops.iter().any(|o| o == "elu") || ops.iter().any(|o| o.contains("exp")),
        "{ops:?}"
    );
}

#[test]
fn a_function_calling_itself_is_refused_not_expanded_forever() {
    let mut m = model();
    // plus_one calls itself
    let f = &mut m.proto.functions[0];
    f.node
        .push(node("plus_one", "this", &["b"], &["c"], vec![]));
    let e = onnx_to_nnabla(&m, &ImportOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("nested more than"), "{e}");
}
