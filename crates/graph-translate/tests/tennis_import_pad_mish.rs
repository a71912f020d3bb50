//! ONNX → TenniS lowerings the real TenniS runtime showed to be missing or
//! imprecise, checked offline: the imported module is written and read back
//! as a `.tsm` is, exported to ONNX again and run in tract, and compared
//! with the operator's definition.
//!
//! - `Pad` in modes `reflect`, `edge` and `wrap` (TenniS's `pad` fills with a
//!   constant only) is one `gather` per padded axis.
//! - `Mish`, and `Tanh` of a `Softplus` (Mish written out), no longer use
//!   TenniS's `tanh` (2·sigmoid(2t) − 1, whose absolute error of about
//!   1e-7 is a relative error of 1e-3 where softplus(x) is small, x near
//!   −10): they keep f32's precision over the whole range.
#![cfg(feature = "tennis")]

mod common;

use bubble_module::{Module, WriteOptions};
use common::{one_node_model as model, run_in_tract};
use graph_translate::import::{ImportOptions, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;

/// The TenniS import of `m`, written and read back.
fn import(m: &onnx_format::Model) -> Vec<u8> {
    onnx_to_tennis(m, &ImportOptions::default())
        .unwrap()
        .to_bytes(&WriteOptions::default())
        .unwrap()
}

/// The operators of a `.tsm`.
fn ops(tsm: &[u8]) -> Vec<String> {
    let m = Module::parse(tsm).unwrap();
    m.nodes().iter().map(|n| n.op().to_string()).collect()
}

/// Runs a `.tsm` (exported back to ONNX) in tract on `x` of `dims`.
fn run(tsm: &[u8], dims: &[usize], x: &[f32]) -> Vec<f32> {
    run_in_tract(&Module::parse(tsm).unwrap(), dims, x)
}

/// A `Pad` of `x` (2 × 4, values 0..8) by `pads` in `mode`.
fn pad_model(mode: &str, pads: &[i64], out: &[i64]) -> onnx_format::Model {
    let p = pads.to_vec();
    model(
        "Pad",
        &[2, 4],
        out,
        13,
        move |b| vec![b.const_i64("pads", &p)],
        vec![attr::string("mode", mode)],
    )
}

fn pad_run(mode: &str, pads: &[i64], out: &[i64]) -> Vec<f32> {
    let tsm = import(&pad_model(mode, pads, out));
    let o = ops(&tsm);
    assert!(o.iter().any(|v| v == "gather"), "{mode}: {o:?}");
    assert!(!o.iter().any(|v| v == "pad"), "{mode}: {o:?}");
    let x: Vec<f32> = (0..8).map(|v| v as f32).collect();
    run(&tsm, &[2, 4], &x)
}

#[test]
fn reflect_edge_and_wrap_pad_are_gathers() {
    // rows [0 1 2 3] and [4 5 6 7]; pads: 1 row before, 2 columns before,
    // 3 columns after (more than the row has for reflect: numpy mirrors on)
    let pads = [1, 2, 0, 3];
    #[rustfmt::skip]
    let want: [(&str, [f32; 27]); 3] = [
        ("reflect", [
            6., 5., 4., 5., 6., 7., 6., 5., 4.,
            2., 1., 0., 1., 2., 3., 2., 1., 0.,
            6., 5., 4., 5., 6., 7., 6., 5., 4.,
        ]),
        ("edge", [
            0., 0., 0., 1., 2., 3., 3., 3., 3.,
            0., 0., 0., 1., 2., 3., 3., 3., 3.,
            4., 4., 4., 5., 6., 7., 7., 7., 7.,
        ]),
        ("wrap", [
            6., 7., 4., 5., 6., 7., 4., 5., 6.,
            2., 3., 0., 1., 2., 3., 0., 1., 2.,
            6., 7., 4., 5., 6., 7., 4., 5., 6.,
        ]),
    ];
    for (mode, w) in want {
        assert_eq!(pad_run(mode, &pads, &[3, 9]), w, "{mode}");
    }
}

#[test]
fn pad_modes_refuse_what_they_cannot_gather() {
    let refusal = |m: &onnx_format::Model| {
        onnx_to_tennis(m, &ImportOptions::default())
            .err()
            .unwrap()
            .to_string()
    };
    // negative pads (cropping) in a mode other than constant
    let e = refusal(&pad_model("reflect", &[0, -1, 0, 0], &[2, 3]));
    assert!(e.contains("Pad") && e.contains("negative"), "{e}");
    // an unknown mode
    let e = refusal(&pad_model("mirror", &[0, 1, 0, 0], &[2, 5]));
    assert!(e.contains("mode mirror"), "{e}");
    // an index table past the limit, refused before it is built
    let e = refusal(&pad_model("edge", &[0, 1 << 25, 0, 0], &[2, 4]));
    assert!(e.contains("index table"), "{e}");
}

/// x from −20 to 20 (the range where the naive forms lose precision).
fn xs() -> Vec<f32> {
    (0..81).map(|i| i as f32 * 0.5 - 20.0).collect()
}

fn mish64(x: f64) -> f64 {
    x * x.exp().ln_1p().tanh()
}

fn check_mish(tsm: &[u8]) {
    let o = ops(tsm);
    assert!(!o.iter().any(|v| v == "tanh"), "{o:?}");
    let x = xs();
    let got = run(tsm, &[81], &x);
    for (g, &v) in got.iter().zip(&x) {
        let w = mish64(f64::from(v));
        let err = (f64::from(*g) - w).abs();
        // a few f32 roundings of the result: 1e-6 relative, where the
        // tanh form is off by some 1e-3 near x = −10
        assert!(err <= 1e-6 * w.abs() + 1e-30, "mish({v}) = {g}, want {w}");
    }
}

#[test]
fn mish_keeps_its_precision() {
    let m = model("Mish", &[81], &[81], 18, |_| vec![], vec![]);
    check_mish(&import(&m));
}

#[test]
fn mish_written_out_keeps_its_precision() {
    // onnx's function body of Mish: Softplus, Tanh, Mul
    let mut b = GraphBuilder::new("m");
    b.input("x", DataType::Float, &[Dim::Value(81)]);
    b.node("Softplus", "", &["x"], &["s"], vec![]);
    b.node("Tanh", "", &["s"], &["t"], vec![]);
    b.node("Mul", "", &["x", "t"], &["y"], vec![]);
    b.output("y", DataType::Float, &[Dim::Value(81)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    let m = onnx_format::Model::parse(&bytes).unwrap();
    let tsm = import(&m);
    check_mish(&tsm);
    // the Softplus only the Tanh reads is not written
    assert!(
        !ops(&tsm).iter().any(|v| v == "softplus"),
        "{:?}",
        ops(&tsm)
    );
    // a Softplus read elsewhere too (here a graph output) is
    let mut b = GraphBuilder::new("m");
    b.input("x", DataType::Float, &[Dim::Value(81)]);
    b.node("Softplus", "", &["x"], &["s"], vec![]);
    b.node("Tanh", "", &["s"], &["y"], vec![]);
    b.output("s", DataType::Float, &[Dim::Value(81)]);
    b.output("y", DataType::Float, &[Dim::Value(81)]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    let o = ops(&import(&onnx_format::Model::parse(&bytes).unwrap()));
    assert!(o.iter().any(|v| v == "softplus"), "{o:?}");
    assert!(!o.iter().any(|v| v == "tanh"), "{o:?}");
    // a Tanh of anything else is still TenniS's tanh
    let m = model("Tanh", &[81], &[81], 13, |_| vec![], vec![]);
    assert_eq!(ops(&import(&m)), ["<param>", "tanh"]);
}

#[test]
fn softplus_takes_no_positive_argument_to_tenniss_softplus() {
    // TenniS's softplus is log(exp(x) + 1) with exp in f32: inf above
    // x ≈ 88.7. The import computes max(x, 0) + softplus(−|x|).
    let m = model("Softplus", &[6], &[6], 13, |_| vec![], vec![]);
    let tsm = import(&m);
    let o = ops(&tsm);
    for want in ["maximum", "abs", "softplus", "add"] {
        assert!(o.iter().any(|v| v == want), "{want} not in {o:?}");
    }
    let x = [-100.0f32, -10.0, -0.5, 0.0, 3.0, 100.0];
    let got = run(&tsm, &[6], &x);
    for (g, &v) in got.iter().zip(&x) {
        let w = f64::from(v).max(0.0) + (-f64::from(v).abs()).exp().ln_1p();
        assert!(
            // (tract's own Softplus is log(exp(x) + 1) in f32, off by 2e-8
            // at x = −10; TenniS computes the log in f64)
            (f64::from(*g) - w).abs() <= 1e-6 * w.abs() + 1e-7,
            "softplus({v}) = {g}, want {w}"
        );
    }
}
