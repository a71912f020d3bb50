//! Quantized ONNX models into NNabla: `testdata/translate/quant/` holds
//! models onnxruntime's quantizers wrote (`quantize_dynamic`:
//! `DynamicQuantizeLinear`, `MatMulInteger`, `ConvInteger`;
//! `quantize_static` in the QDQ format) and single-operator models, with
//! what onnxruntime, the real nnabla 1.39 and the TenniS runtime computed
//! from the `.nnp` and `.tsm` we write (`results.json`: the files' sha256,
//! the `.nnp`'s functions, per output the worst difference). Each
//! conversion must give those very bytes and functions; the recorded
//! outputs must agree; and the integer operators' results are recomputed
//! here from their definitions.
#![cfg(all(feature = "onnx", feature = "nnp", feature = "tennis"))]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, Document, convert};
use nnp_archive::nnabla_proto::proto::NNablaProtoBuf;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/quant")
}

mod common;
use common::values;

/// Converts case `name` to `.nnp`: its sha256 and its network.
fn import(name: &str, dir: &Path) -> (String, NNablaProtoBuf) {
    common::import_nnp(&data(), name, dir)
}

/// The sha256 of the file `convert` writes for case `name` as `ext`.
fn sha_of(name: &str, ext: &str, dir: &Path) -> String {
    let out = dir.join(format!("{name}.{ext}"));
    convert(
        data().join(format!("{name}.onnx")),
        &out,
        &ConvertOptions::new(),
    )
    .unwrap();
    common::sha256_file(&out)
}

/// Checks the outputs runtime `rt` recorded for case `name` (record `c`)
/// against onnxruntime's: integers equal, floats within the tolerance.
fn check_recorded(name: &str, rt: &str, c: &serde_json::Value) {
    assert_eq!(c["verdict"], "pass", "{name} {rt}");
    let io = Document::open(data().join(format!("{name}.io.npz"))).unwrap();
    let got_doc = Document::open(data().join(format!("{name}.{rt}.npz"))).unwrap();
    let tol = c["tolerance"].as_f64().unwrap();
    for (k, set) in c["sets"].as_array().unwrap().iter().enumerate() {
        for (out, rec) in set["outputs"].as_object().unwrap() {
            let want = values(&io, &format!("ort.{out}.{k}"));
            let got = values(&got_doc, &format!("{out}.{k}"));
            assert_eq!(want.len(), got.len(), "{name} {rt} {out}.{k}");
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let worst = want
                .iter()
                .zip(&got)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert_eq!(
                worst,
                rec["diff"].as_f64().unwrap(),
                "{name} {rt} {out}.{k}"
            );
            // TenniS keeps the ONNX output's element type (nnabla's arrays
            // are f32: the same values)
            if rt == "tennis" {
                assert_eq!(rec["dtype"], rec["got_dtype"], "{name} {rt} {out}.{k}");
            }
            if rec["dtype"].as_str().unwrap().contains("int") {
                assert_eq!(worst, 0.0, "{name} {rt} {out}.{k}: integers differ");
            } else {
                assert!(worst <= tol * scale, "{name} {rt} {out}.{k}: {worst}");
            }
        }
    }
}

#[test]
fn every_case_is_the_file_the_runtimes_ran_and_computed_what_onnxruntime_did() {
    let r = common::json_file(&data().join("results.json"));
    assert_eq!(r["nnabla"], "1.39.0");
    let cases = r["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 15);
    let dir = tempfile::tempdir().unwrap();
    for (name, c) in cases {
        let model = common::recorded_nnp(&data(), name, c, dir.path());
        let net = &model.network[0];
        let types: BTreeSet<&str> = net.function.iter().map(|f| f.r#type.as_str()).collect();
        let want: BTreeSet<&str> = c["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert_eq!(types, want, "{name}");
        check_recorded(name, "nnabla", c);
        let t = &c["tennis"];
        let tsm = sha_of(name, "tsm", dir.path());
        assert_eq!(
            tsm,
            t["tsm_sha256"].as_str().unwrap(),
            "{name}: not the bytes TenniS ran"
        );
        check_recorded(name, "tennis", t);
    }
}

/// The functions of the network, with the variables each reads.
fn calls(m: &NNablaProtoBuf) -> Vec<(String, Vec<String>)> {
    m.network[0]
        .function
        .iter()
        .map(|f| (f.r#type.clone(), f.input.clone()))
        .collect()
}

#[test]
fn qdq_weights_fold_into_float_parameters_and_activations_keep_their_pairs() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "convnet_qdq",
        "convnet_qdq_perchannel",
        "mlp_qdq",
        "mlp_qdq_perchannel",
    ] {
        let (_, m) = import(name, dir.path());
        let params: BTreeSet<&str> = m.network[0]
            .variable
            .iter()
            .filter(|v| v.r#type == "Parameter")
            .map(|v| v.name.as_str())
            .collect();
        let fs = calls(&m);
        let mut layers = 0;
        for (ty, ins) in &fs {
            if ty == "Convolution" || ty == "Affine" {
                layers += 1;
                // the weight is a float parameter: its DequantizeLinear was folded
                assert!(params.contains(ins[1].as_str()), "{name}: {ins:?}");
            }
            if ty == "DequantizeLinear" {
                // only activations are dequantized at run time
                assert!(!params.contains(ins[0].as_str()), "{name}: {ins:?}");
            }
        }
        assert_eq!(layers, if name.starts_with("conv") { 4 } else { 2 });
        let q = fs.iter().filter(|(t, _)| t == "QuantizeLinear").count();
        let dq = fs.iter().filter(|(t, _)| t == "DequantizeLinear").count();
        assert!(
            q > 0 && q == dq,
            "{name}: {q} QuantizeLinear, {dq} DequantizeLinear"
        );
    }
    // a float weight through QuantizeLinear and DequantizeLinear: both fold
    let (_, m) = import("qdq_float_weight", dir.path());
    let fs = calls(&m);
    assert_eq!(fs.len(), 1, "{fs:?}");
    assert_eq!(fs[0].0, "Convolution");
}

/// onnxruntime's DynamicQuantizeLinear on `x`, in f32: `(y, scale, zero point)`.
fn dynamic_quantize(x: &[f32]) -> (Vec<f64>, f64, f64) {
    let lo = x.iter().fold(0.0f32, |m, &v| m.min(v));
    let hi = x.iter().fold(0.0f32, |m, &v| m.max(v));
    let scale = if hi == lo { 1.0 } else { (hi - lo) / 255.0 };
    let zp = (-lo / scale).round_ties_even().clamp(0.0, 255.0);
    let y = x
        .iter()
        .map(|&v| f64::from(((v / scale).round_ties_even() + zp).clamp(0.0, 255.0)))
        .collect();
    (y, f64::from(scale), f64::from(zp))
}

#[test]
fn dynamic_quantize_linear_and_round_are_what_their_definitions_give() {
    for rt in ["nnabla", "tennis"] {
        dynamic_quantize_in(rt);
        round_in(rt);
    }
}

fn dynamic_quantize_in(rt: &str) {
    let io = Document::open(data().join("dql.io.npz")).unwrap();
    let nn = Document::open(data().join(format!("dql.{rt}.npz"))).unwrap();
    for k in 0..6 {
        let x: Vec<f32> = values(&io, &format!("in.x.{k}"))
            .iter()
            .map(|&v| v as f32)
            .collect();
        let (y, s, z) = dynamic_quantize(&x);
        assert_eq!(values(&nn, &format!("y.{k}")), y, "{rt} set {k}");
        assert_eq!(values(&nn, &format!("y_scale.{k}")), [s], "{rt} set {k}");
        assert_eq!(
            values(&nn, &format!("y_zero_point.{k}")),
            [z],
            "{rt} set {k}"
        );
    }
    // the all-zero input: scale 1 (onnxruntime), not 0 / 0
    assert_eq!(values(&nn, "y_scale.3"), [1.0]);
}

fn round_in(rt: &str) {
    let io = Document::open(data().join("round.io.npz")).unwrap();
    let nn = Document::open(data().join(format!("round.{rt}.npz"))).unwrap();
    for k in 0..2 {
        let x = values(&io, &format!("in.x.{k}"));
        let want: Vec<f64> = x
            .iter()
            .map(|&v| f64::from((v as f32).round_ties_even()))
            .collect();
        assert_eq!(values(&nn, &format!("y.{k}")), want, "{rt} set {k}");
    }
    // the ties: -2.5 -1.5 -0.5 0.5 1.5 2.5 3.5 -> -2 -2 -0 0 2 2 4
    assert_eq!(
        values(&nn, "y.0")[..7],
        [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0]
    );
}

#[test]
fn matmul_integer_is_the_product_of_the_shifted_integers() {
    let model = Document::open(data().join("matmulinteger_const_b.onnx")).unwrap();
    let b = values(&model, "b");
    let a_zp = values(&model, "a_zp")[0];
    let b_zp = values(&model, "b_zp");
    let io = Document::open(data().join("matmulinteger_const_b.io.npz")).unwrap();
    let nn = Document::open(data().join("matmulinteger_const_b.nnabla.npz")).unwrap();
    let ts = Document::open(data().join("matmulinteger_const_b.tennis.npz")).unwrap();
    let (m, kk, n) = (3, 6, 5);
    for set in 0..2 {
        let a = values(&io, &format!("in.a.{set}"));
        let mut want = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..kk)
                    .map(|k| (a[i * kk + k] - a_zp) * (b[k * n + j] - b_zp[j]))
                    .sum();
            }
        }
        assert_eq!(values(&nn, &format!("y.{set}")), want, "set {set}");
        assert_eq!(values(&ts, &format!("y.{set}")), want, "set {set}");
        assert_eq!(values(&io, &format!("ort.y.{set}")), want, "set {set}");
    }
}
