//! `--input-value` fixes an input to a constant, and an `If` on a
//! condition folded from it is replaced by the branch it takes (the
//! voice-activity models that branch on the sample rate).

use graph_translate::import::{ImportOptions, onnx_to_nnabla, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder};
use onnx_format::proto::AttributeProto;
use onnx_format::proto::attribute_proto::AttributeType;
use onnx_format::proto::tensor_proto::DataType;

/// A branch computing `op(x)` as its one output `out`.
fn branch(name: &str, op: &str, out: &str) -> AttributeProto {
    let mut b = GraphBuilder::new(name);
    b.node(op, "", &["x"], &[out], vec![]);
    b.output_unshaped(out, DataType::Float);
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(b.graph),
        ..Default::default()
    }
}

/// `y = If(Equal(sr, 16000), Relu(x), Neg(x))`, `sr` an int64 `[1]`.
fn model() -> onnx_format::Model {
    let mut b = GraphBuilder::new("vad");
    b.input("sr", DataType::Int64, &[Dim::Value(1)]);
    b.input("x", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    let k = b.const_i64("k", &[16000]);
    b.node("Equal", "", &["sr", &k], &["cond"], vec![]);
    let then_b = branch("then_branch", "Relu", "t");
    let else_b = branch("else_branch", "Neg", "e");
    b.node("If", "", &["cond"], &["y"], vec![then_b, else_b]);
    b.output("y", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

/// `sr` fixed to `v`.
fn sr(v: f64) -> ImportOptions {
    ImportOptions::default().input_value("sr", vec![v])
}

/// The NNabla import's function types and data inputs.
fn nnabla_functions(opts: &ImportOptions) -> (Vec<String>, Vec<String>) {
    let nn = onnx_to_nnabla(&model(), opts).unwrap();
    let net = &nn.model.network[0];
    let f = net.function.iter().map(|f| f.r#type.clone()).collect();
    let ins = nn.model.executor[0]
        .data_variable
        .iter()
        .map(|v| v.variable_name.clone())
        .collect();
    (f, ins)
}

/// The TenniS import's operators.
fn tennis_ops(opts: &ImportOptions) -> Vec<String> {
    let m = onnx_to_tennis(&model(), opts).unwrap();
    m.nodes().iter().map(|n| n.op().to_string()).collect()
}

/// Why the NNabla import refuses the model with `opts`.
fn nnabla_refusal(opts: &ImportOptions) -> String {
    onnx_to_nnabla(&model(), opts).err().unwrap().to_string()
}

#[test]
fn a_fixed_sample_rate_takes_the_then_branch() {
    let (f, ins) = nnabla_functions(&sr(16000.0));
    assert_eq!(f, ["ReLU"]);
    // sr is a constant now, not an input of the network.
    assert_eq!(ins, ["x"]);
    let ops = tennis_ops(&sr(16000.0));
    assert!(ops.iter().any(|o| o == "relu"), "{ops:?}");
}

#[test]
fn another_sample_rate_takes_the_else_branch() {
    let (f, ins) = nnabla_functions(&sr(8000.0));
    // Neg is NNabla's MulScalar by -1.
    assert_eq!(f, ["MulScalar"]);
    assert_eq!(ins, ["x"]);
    let ops = tennis_ops(&sr(8000.0));
    assert!(!ops.iter().any(|o| o == "relu"), "{ops:?}");
}

#[test]
fn an_if_on_an_input_is_both_branches_and_a_select() {
    // sr left free: both branches are computed, and a Where picks one
    let (f, ins) = nnabla_functions(&ImportOptions::default());
    for want in ["Equal", "ReLU", "MulScalar", "Where"] {
        assert!(f.iter().any(|x| x == want), "{want} not in {f:?}");
    }
    assert_eq!(ins, ["sr", "x"]);
    let nn = onnx_to_nnabla(&model(), &ImportOptions::default()).unwrap();
    let net = &nn.model.network[0];
    let w = net.function.iter().find(|f| f.r#type == "Where").unwrap();
    // the condition, then each branch's output (named after the If's branch)
    assert_eq!(w.output, ["y"]);
    assert!(w.input[1].contains(".then."), "{:?}", w.input);
    assert!(w.input[2].contains(".else."), "{:?}", w.input);
    let ops = tennis_ops(&ImportOptions::default());
    for want in ["relu", "mul", "where"] {
        assert!(ops.iter().any(|o| o == want), "{want} not in {ops:?}");
    }
}

/// `y = If(Equal(sr, 16000), Relu(x), ReduceSum(x))`: the branches give
/// `[2, 3]` and `[]`.
fn model_of_two_shapes() -> onnx_format::Model {
    let mut b = GraphBuilder::new("vad");
    b.input("sr", DataType::Int64, &[Dim::Value(1)]);
    b.input("x", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    let k = b.const_i64("k", &[16000]);
    b.node("Equal", "", &["sr", &k], &["cond"], vec![]);
    let then_b = branch("then_branch", "Relu", "t");
    let mut e = GraphBuilder::new("else_branch");
    e.node(
        "ReduceSum",
        "",
        &["x"],
        &["e"],
        vec![onnx_format::builder::attr::int("keepdims", 0)],
    );
    e.output_unshaped("e", DataType::Float);
    let else_b = AttributeProto {
        name: Some("else_branch".into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(e.graph),
        ..Default::default()
    };
    b.node("If", "", &["cond"], &["y"], vec![then_b, else_b]);
    b.output_unshaped("y", DataType::Float);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

#[test]
fn an_if_whose_branches_differ_in_shape_is_refused_naming_input_value() {
    let m = model_of_two_shapes();
    let t = onnx_to_tennis(&m, &ImportOptions::default());
    for e in [
        onnx_to_nnabla(&m, &ImportOptions::default())
            .err()
            .unwrap()
            .to_string(),
        t.err().unwrap().to_string(),
    ] {
        assert!(e.contains("If ("), "{e}");
        assert!(e.contains("different shapes ([2, 3] and [])"), "{e}");
        assert!(e.contains("--input-value sr=..."), "{e}");
    }
    // fixing sr imports it
    let nn = onnx_to_nnabla(&m, &sr(8000.0)).unwrap();
    let f: Vec<&str> = nn.model.network[0]
        .function
        .iter()
        .map(|f| f.r#type.as_str())
        .collect();
    assert!(!f.contains(&"Where") && !f.contains(&"ReLU"), "{f:?}");
}

#[test]
fn input_values_that_do_not_fit_are_refused_naming_the_input() {
    let two = ImportOptions::default().input_value("sr", vec![1.0, 2.0]);
    let e = nnabla_refusal(&two);
    assert!(e.contains("--input-value sr: 2 value(s)"), "{e}");
    let e = nnabla_refusal(&sr(0.5));
    assert!(e.contains("sr") && e.contains("INT64"), "{e}");
    let e = nnabla_refusal(&ImportOptions::default().input_value("nope", vec![1.0]));
    assert!(e.contains("\"nope\""), "{e}");
    let p = graph_translate::import::parse_input_value("sr=16000, 8000").unwrap();
    assert_eq!(p, ("sr".to_string(), vec![16000.0, 8000.0]));
    assert!(graph_translate::import::parse_input_value("sr=").is_err());
    assert!(graph_translate::import::parse_input_value("sr=a").is_err());
}

/// `y = If(c, Add(x, k), x)` with `k` an initializer of the then-branch and
/// the else-branch giving the outer `x` itself; `c` a bool input.
fn model_with_locals() -> onnx_format::Model {
    let mut t = GraphBuilder::new("then_branch");
    let k = t.const_f32("k", &[1.0, 2.0, 3.0], &[3]);
    t.node("Add", "", &["x", &k], &["s"], vec![]);
    t.output_unshaped("s", DataType::Float);
    let mut e = GraphBuilder::new("else_branch");
    e.output_unshaped("x", DataType::Float);
    let attr = |name: &str, g: GraphBuilder| AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(g.graph),
        ..Default::default()
    };
    let mut b = GraphBuilder::new("g");
    b.input("c", DataType::Bool, &[]);
    b.input("x", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    b.node(
        "If",
        "",
        &["c"],
        &["y"],
        vec![attr("then_branch", t), attr("else_branch", e)],
    );
    b.node("Relu", "", &["y"], &["z"], vec![]);
    b.output("z", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

/// The function types of an NNabla import.
fn types(nn: &graph_translate::import::NnablaImport) -> Vec<&str> {
    let net = &nn.model.network[0];
    net.function.iter().map(|f| f.r#type.as_str()).collect()
}

#[test]
fn branch_initializers_and_outer_outputs_are_inlined() {
    let opts = ImportOptions::default().input_value("c", vec![1.0]);
    let nn = onnx_to_nnabla(&model_with_locals(), &opts).unwrap();
    let f = types(&nn);
    // (the [3] constant reshaped to [1, 3] for NNabla's broadcast)
    assert_eq!(f, ["Reshape", "Add2", "ReLU"]);
    // The branch's initializer is a parameter, named after the If.
    let names: Vec<&str> = nn.parameters.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("If#0.")), "{names:?}");
    let opts = ImportOptions::default().input_value("c", vec![0.0]);
    let nn = onnx_to_nnabla(&model_with_locals(), &opts).unwrap();
    let f = types(&nn);
    assert_eq!(f.last(), Some(&"ReLU"));
    assert!(!f.contains(&"Add2"), "{f:?}");
    // A condition that is not one element is refused.
    let opts = ImportOptions::default().input_value("c", vec![2.0]);
    let e = onnx_to_nnabla(&model_with_locals(), &opts).err().unwrap();
    assert!(e.to_string().contains("BOOL"), "{e}");
}
