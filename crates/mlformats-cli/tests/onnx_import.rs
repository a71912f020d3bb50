//! `mlformats convert model.onnx out.nnp|.nntxt|.protobuf` imports the
//! graph; `--input-shape` and `--input-value` reach the import; a `.tsm` target is refused
//! rather than written without its graph.

mod common;

use common::{run_str, testdata};

fn case(name: &str) -> String {
    testdata()
        .join(format!("translate/import/cases/{name}.onnx"))
        .to_str()
        .unwrap()
        .to_string()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_onnx_model_becomes_an_nnabla_network() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.nntxt");
    let o = run_str(&[
        "convert",
        &case("test_convtranspose_1d"),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("type: \"Deconvolution\""), "{text}");
    assert!(text.contains("executor {"), "{text}");
    let o = run_str(&["inspect", out.to_str().unwrap()]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("1 functions"), "{s}");
}

#[test]
fn input_shape_is_checked_against_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.nnp");
    let src = case("test_convtranspose_1d");
    let o = run_str(&[
        "convert",
        &src,
        out.to_str().unwrap(),
        "--input-shape",
        "nope=1,2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not an input of the model"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    let o = run_str(&["convert", &src, out.to_str().unwrap(), "--input-shape", "X"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("NAME=D0,D1"), "{}", stderr(&o));
}

#[test]
fn a_tennis_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.tsm");
    let o = run_str(&[
        "convert",
        &case("test_convtranspose_1d"),
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("TenniS"), "{}", stderr(&o));
    assert!(!out.exists());
}

/// `y = If(Equal(sr, 16000), Relu(x), Neg(x))` written to `path`.
fn write_if_model(path: &std::path::Path) {
    use mlformats::onnx::builder::{Dim, GraphBuilder};
    use mlformats::onnx::proto::AttributeProto;
    use mlformats::onnx::proto::attribute_proto::AttributeType;
    use mlformats::onnx::proto::tensor_proto::DataType;
    let branch = |name: &str, op: &str, out: &str| {
        let mut b = GraphBuilder::new(name);
        b.node(op, "", &["x"], &[out], vec![]);
        b.output_unshaped(out, DataType::Float);
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(AttributeType::Graph as i32),
            g: Some(b.graph),
            ..Default::default()
        }
    };
    let mut b = GraphBuilder::new("vad");
    b.input("sr", DataType::Int64, &[Dim::Value(1)]);
    b.input("x", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    let k = b.const_i64("k", &[16000]);
    b.node("Equal", "", &["sr", &k], &["cond"], vec![]);
    let (t, e) = (
        branch("then_branch", "Relu", "t"),
        branch("else_branch", "Neg", "e"),
    );
    b.node("If", "", &["cond"], &["y"], vec![t, e]);
    b.output("y", DataType::Float, &[Dim::Value(2), Dim::Value(3)]);
    let mut bytes = Vec::new();
    mlformats::onnx::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// An `If`'s branches are listed with their nodes (`op name`), which the
/// viewer's details panel expands.
#[test]
fn an_if_lists_the_nodes_of_its_branches() {
    use mlformats::graph::Attribute;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("vad.onnx");
    write_if_model(&src);
    let doc = mlformats::open(&src).unwrap();
    let g = &doc.graph().unwrap().graphs[0];
    let node = g.nodes.iter().find(|n| n.op == "If").unwrap();
    for (branch, op) in [("then_branch", "Relu"), ("else_branch", "Neg")] {
        let Some(Attribute::Message(m)) = node.attribute(branch) else {
            panic!("{branch}: {:?}", node.attribute(branch));
        };
        let field = |k: &str| m.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(field("name"), Some(Attribute::String(branch.into())));
        assert_eq!(field("nodes"), Some(Attribute::Int(1)));
        assert_eq!(field("body"), Some(Attribute::Strings(vec![op.into()])));
    }
}

#[test]
fn input_value_imports_the_branch_an_if_takes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("vad.onnx");
    write_if_model(&src);
    let (src, out) = (
        src.to_str().unwrap().to_string(),
        dir.path().join("m.nntxt"),
    );
    // sr free: both branches computed, and a Where picks one
    let o = run_str(&["convert", &src, out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    for f in ["ReLU", "MulScalar", "Where"] {
        assert!(text.contains(&format!("type: \"{f}\"")), "{f}: {text}");
    }
    let o = run_str(&[
        "convert",
        &src,
        out.to_str().unwrap(),
        "--input-value",
        "sr=16000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("type: \"ReLU\""), "{text}");
    assert!(!text.contains("MulScalar"), "{text}");
    let o = run_str(&[
        "convert",
        &src,
        out.to_str().unwrap(),
        "--input-value",
        "sr=1,2",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--input-value sr"), "{}", stderr(&o));
}
