//! The rewrites of opsets 1 to 6, and their refusals.

use super::*;

fn node(op: &str, inputs: &[&str], attrs: Vec<onnx_format::proto::AttributeProto>) -> Node {
    Node {
        op: op.into(),
        domain: String::new(),
        name: op.into(),
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        outputs: vec!["y".into()],
        attrs,
    }
}

fn run(n: &Node, opset: i64) -> Result<Vec<Node>, RewriteError> {
    let shape = |v: &str| match v {
        "a" => Some(vec![-1, 3, 4, 5]),
        "b" => Some(vec![3]),
        "c" => Some(vec![4, 5]),
        _ => None,
    };
    let konst = |_: &str| None;
    let k = Known {
        shape: &shape,
        konst: &konst,
    };
    normalise(n, opset, &k).map(|c| c.into_owned())
}

#[test]
fn limited_broadcast_becomes_numpy_broadcast() {
    // B aligned at axis 1 of A: B gains two trailing 1s
    let n = node(
        "Add",
        &["a", "b"],
        vec![attr::int("broadcast", 1), attr::int("axis", 1)],
    );
    let v = run(&n, 6).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].op, "Unsqueeze");
    assert_eq!(v[0].ints("axes").unwrap(), [1, 2]);
    assert_eq!(v[1].inputs[1], v[0].outputs[0]);
    assert!(v[1].attrs.is_empty());
    // suffix-aligned: only the attributes go
    let n = node("Mul", &["a", "c"], vec![attr::int("broadcast", 1)]);
    let v = run(&n, 1).unwrap();
    assert_eq!(v.len(), 1);
    assert!(v[0].attrs.is_empty());
    // without broadcast the shapes must be equal
    let n = node("Sub", &["a", "c"], vec![]);
    let e = run(&n, 6).unwrap_err();
    assert!(
        matches!(&e, RewriteError::Shapes { what, opset: 6, .. } if what == "broadcast 0"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "broadcast 0 at opset 6 with inputs of shapes [-1, 3, 4, 5] and [4, 5] (without \
         broadcast the shapes must be equal)"
    );
    // a B that does not fit at axis 2
    let n = node(
        "Div",
        &["a", "b"],
        vec![attr::int("broadcast", 1), attr::int("axis", 2)],
    );
    assert!(run(&n, 6).is_err());
    // from opset 7 on nothing is rewritten (the caller only asks below 7),
    // and an opset-6 node of a version opset 7 shares is kept as is
    let n = node("Relu", &["a"], vec![]);
    assert!(matches!(
        normalise(
            &n,
            6,
            &Known {
                shape: &|_| None,
                konst: &|_| None
            }
        ),
        Ok(Cow::Borrowed(_))
    ));
}

#[test]
fn attribute_forms_are_carried_over() {
    let n = node("Reshape", &["a"], vec![attr::ints("shape", &[0, -1])]);
    let v = run(&n, 4).unwrap();
    assert_eq!(v[0].op, "Constant");
    assert_eq!(v[0].ints("value_ints").unwrap(), [0, -1]);
    assert_eq!(v[1].inputs, ["a".to_string(), v[0].outputs[0].clone()]);
    let n = node("Cast", &["a"], vec![attr::string("to", "DOUBLE")]);
    assert_eq!(run(&n, 5).unwrap()[0].int("to", 0), 11);
    let n = node("Concat", &["a", "a"], vec![]);
    assert_eq!(run(&n, 3).unwrap()[0].int("axis", 0), 1);
    let n = node("Selu", &["a"], vec![attr::ints("consumed_inputs", &[0])]);
    let v = run(&n, 5).unwrap();
    assert_eq!(v[0].float("alpha", 0.0), 1.6732);
    assert!(v[0].attr("consumed_inputs").is_none());
    let n = node("Acos", &["a"], vec![]);
    let e = run(&n, 6).unwrap_err();
    assert_eq!(
        e,
        RewriteError::NotYetAnOperator {
            opset: 6,
            since: None
        }
    );
    assert_eq!(
        e.to_string(),
        "not an operator of ONNX opset 6; it appeared in a later opset"
    );
    let n = node("Concat", &["a"], vec![]);
    assert!(run(&n, 3).is_ok());
    let n = node("Reshape", &["a", "s"], vec![]);
    assert_eq!(
        run(&n, 4).unwrap_err().to_string(),
        "no attribute shape at opset 4"
    );
}

#[test]
fn rules_are_sorted_and_old() {
    for w in RULES.windows(2) {
        assert!(w[0].op < w[1].op, "{} before {}", w[0].op, w[1].op);
    }
    for r in RULES {
        assert!(r.versions[0] <= 6, "{}", r.op);
        assert!(r.versions.windows(2).all(|w| w[0] < w[1]), "{}", r.op);
    }
}
