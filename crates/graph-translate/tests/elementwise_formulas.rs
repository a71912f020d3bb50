//! The elementwise NNabla lowerings without reference outputs from nnabla
//! yet (marked "not verified" in SUPPORT.md): each single-function network
//! is exported, run in tract-onnx and compared with nnabla's documented
//! formula, so a wrong lowering fails here at least.

use std::collections::BTreeMap;

use graph_translate::export::{ExportOptions, nnabla};
use tract_onnx::prelude::*;

fn net(func: &str, inputs: usize) -> String {
    let mut vars = String::new();
    let mut ins = String::new();
    let mut data = String::new();
    for i in 0..inputs {
        vars +=
            &format!("variable {{ name: \"x{i}\" type: \"Buffer\" shape {{ dim: 2 dim: 5 }} }}\n");
        ins += &format!("input: \"x{i}\" ");
        data += &format!("data_variable {{ variable_name: \"x{i}\" data_name: \"x{i}\" }}\n");
    }
    format!(
        "network {{ name: \"n\" batch_size: 1\n{vars}variable {{ name: \"y\" type: \"Buffer\" shape {{ dim: 2 dim: 5 }} }}\n\
         function {{ name: \"f\" type: \"{func}\" {ins}output: \"y\" }} }}\n\
         executor {{ name: \"e\" network_name: \"n\" {data}output_variable {{ variable_name: \"y\" data_name: \"y\" }} }}\n"
    )
}

fn run(func: &str, inputs: &[Vec<f32>]) -> Vec<f32> {
    let model = nnabla_proto::text::parse(&net(func, inputs.len())).unwrap();
    let weights: BTreeMap<String, tensor_core::Tensor<'static>> = BTreeMap::new();
    let (m, _) = nnabla::export(&model, &weights, &ExportOptions::new()).unwrap();
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &m).unwrap();
    let mut tm = tract_onnx::onnx().model_for_read(&mut &bytes[..]).unwrap();
    let mut feeds = TVec::new();
    for (i, x) in inputs.iter().enumerate() {
        tm = tm.with_input_fact(i, f32::fact([2, 5]).into()).unwrap();
        feeds.push(
            tract_onnx::prelude::Tensor::from_shape(&[2, 5], x)
                .unwrap()
                .into(),
        );
    }
    let out = tm
        .into_optimized()
        .unwrap()
        .into_runnable()
        .unwrap()
        .run(feeds)
        .unwrap();
    out[0]
        .cast_to::<f32>()
        .unwrap()
        .as_slice::<f32>()
        .unwrap()
        .to_vec()
}

fn xs() -> Vec<f32> {
    (0..10).map(|i| i as f32 * 0.9 - 4.1).collect()
}

fn check(func: &str, f: impl Fn(f32) -> f32) {
    let x = xs();
    let got = run(func, std::slice::from_ref(&x));
    for (g, v) in got.iter().zip(&x) {
        let w = f(*v);
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "{func}({v}) = {g}, want {w}"
        );
    }
}

fn softplus(x: f32) -> f32 {
    (1.0 + x.exp()).ln()
}

#[test]
fn unary_formulas() {
    check("Swish", |x| x / (1.0 + (-x).exp()));
    check("Mish", |x| x * softplus(x).tanh());
    check("TanhShrink", |x| x - x.tanh());
    check("LogSigmoid", |x| -softplus(-x));
    check("ReLU6", |x| x.clamp(0.0, 6.0));
    check("HardTanh", |x| x.clamp(-1.0, 1.0));
    check("HardSigmoid", |x| (0.2 * x + 0.5).clamp(0.0, 1.0));
    check("IsNaN", |_| 0.0);
    check("IsInf", |_| 0.0);
    check("Unlink", |x| x);
}

#[test]
fn sums() {
    let a = xs();
    let b: Vec<f32> = a.iter().map(|v| v * 2.0 + 1.0).collect();
    let c: Vec<f32> = a.iter().map(|v| -v).collect();
    let got = run("AddN", &[a.clone(), b.clone(), c.clone()]);
    for i in 0..10 {
        assert!((got[i] - (a[i] + b[i] + c[i])).abs() < 1e-5);
    }
    let got = run("BcAdd2", &[a.clone(), b.clone()]);
    for i in 0..10 {
        assert!((got[i] - (a[i] + b[i])).abs() < 1e-5);
    }
}
