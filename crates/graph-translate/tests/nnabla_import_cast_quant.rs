//! ONNX → NNabla: float → integer `Cast` (toward zero, saturated) and
//! `QuantizeLinear` with a scale computed at run time, as emitted graphs;
//! what the real nnabla computes from them is checked in
//! `crates/mlformats/tests/onnx_cast_quant.rs`. A blocked run-time scale is
//! refused, naming the operator and what would make it importable.

use graph_translate::import::{ImportOptions, onnx_to_nnabla};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;
use onnx_format::write::WriteOptions;

fn parse(b: GraphBuilder) -> onnx_format::Model {
    let mut opts = WriteOptions::default();
    opts.opset = 21;
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&opts)).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

fn dims(d: &[i64]) -> Vec<Dim> {
    d.iter().map(|&v| Dim::Value(v)).collect()
}

/// `y = Cast(x, to)` on a `[2, 3]` f32 input.
fn cast_model(to: DataType) -> onnx_format::Model {
    let mut b = GraphBuilder::new("cast");
    b.input("x", DataType::Float, &dims(&[2, 3]));
    b.node("Cast", "", &["x"], &["y"], vec![attr::int("to", to as i64)]);
    b.output("y", to, &dims(&[2, 3]));
    parse(b)
}

/// The functions: type, parameter (debug text) per function.
fn functions(m: &onnx_format::Model) -> Vec<(String, String)> {
    let nn = onnx_to_nnabla(m, &ImportOptions::default()).unwrap();
    nn.model.network[0]
        .function
        .iter()
        .map(|f| (f.r#type.clone(), format!("{:?}", f.parameter)))
        .collect()
}

fn types(f: &[(String, String)]) -> Vec<&str> {
    f.iter().map(|(t, _)| t.as_str()).collect()
}

#[test]
fn float_to_uint8_saturates_then_floors() {
    let f = functions(&cast_model(DataType::Uint8));
    assert_eq!(types(&f), ["MaximumScalar", "MinimumScalar", "Floor"]);
    assert!(f[0].1.contains("val: 0.0"), "{f:?}");
    assert!(f[1].1.contains("val: 255.0"), "{f:?}");
}

#[test]
fn float_to_signed_integers_truncate_toward_zero() {
    let f = functions(&cast_model(DataType::Int8));
    assert_eq!(
        types(&f),
        [
            "MaximumScalar",
            "MinimumScalar",
            "Sign",
            "Abs",
            "Floor",
            "Mul2"
        ]
    );
    assert!(f[0].1.contains("val: -128.0") && f[1].1.contains("val: 127.0"));
    // Sign(0) is 0
    assert!(f[2].1.contains("alpha: 0.0"), "{f:?}");
    let f = functions(&cast_model(DataType::Int16));
    assert!(f[0].1.contains("val: -32768.0") && f[1].1.contains("val: 32767.0"));
    // 32- and 64-bit: no saturation (f32 holds the truncated value)
    for t in [DataType::Int32, DataType::Int64] {
        assert_eq!(
            types(&functions(&cast_model(t))),
            ["Sign", "Abs", "Floor", "Mul2"]
        );
    }
    assert_eq!(
        types(&functions(&cast_model(DataType::Uint32))),
        ["MaximumScalar", "Floor"]
    );
}

#[test]
fn float_to_double_is_still_refused() {
    let e = onnx_to_nnabla(&cast_model(DataType::Double), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("Cast") && e.contains("to=DOUBLE"), "{e}");
}

/// `QuantizeLinear(x, s, zp)`, `x` `[2, 4]`, `s` and `zp` graph inputs of
/// shape `sd`, with `block_size` when non-zero.
fn quantize_model(sd: &[i64], block: i64) -> onnx_format::Model {
    let mut b = GraphBuilder::new("q");
    b.input("x", DataType::Float, &dims(&[2, 4]));
    b.input("s", DataType::Float, &dims(sd));
    b.input("zp", DataType::Int8, &dims(sd));
    let mut a = vec![attr::int("axis", 1)];
    if block > 0 {
        a.push(attr::int("block_size", block));
    }
    b.node("QuantizeLinear", "", &["x", "s", "zp"], &["y"], a);
    b.output("y", DataType::Int8, &dims(&[2, 4]));
    parse(b)
}

#[test]
fn run_time_scales_are_reshaped_to_broadcast() {
    for (sd, want) in [(vec![], vec![1, 1]), (vec![4], vec![1, 4])] {
        let nn = onnx_to_nnabla(&quantize_model(&sd, 0), &ImportOptions::default()).unwrap();
        let net = &nn.model.network[0];
        let q = net
            .function
            .iter()
            .find(|f| f.r#type == "QuantizeLinear")
            .unwrap();
        assert!(format!("{:?}", q.parameter).contains("dtype: 1"), "int8");
        for i in 1..3 {
            let v = net.variable.iter().find(|v| v.name == q.input[i]).unwrap();
            assert_eq!(v.shape.as_ref().unwrap().dim, want, "{sd:?}");
            assert_eq!(v.r#type, "Buffer");
        }
        assert!(nn.parameters.is_empty());
    }
}

#[test]
fn a_blocked_run_time_scale_is_refused_with_what_would_import_it() {
    let e = onnx_to_nnabla(&quantize_model(&[2, 2], 2), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("QuantizeLinear"), "{e}");
    assert!(e.contains("computed at run time"), "{e}");
    assert!(e.contains("block_size 2"), "{e}");
    assert!(
        e.contains("a constant one (an initializer) makes it importable"),
        "{e}"
    );
}
