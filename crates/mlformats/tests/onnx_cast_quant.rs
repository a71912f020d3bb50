//! Float → integer `Cast` and `QuantizeLinear`/`DequantizeLinear` whose
//! scale and zero point are computed at run time, into NNabla:
//! `testdata/translate/cast_quant/` holds the models (and onnx's three
//! `test_dynamicquantizelinear*_expanded` node tests, whose bodies cast
//! float to uint8), what onnxruntime computed and what the real nnabla
//! 1.39 computed from the `.nnp` we write (`results.json`: its sha256, its
//! functions, the worst difference per output). Each conversion must give
//! those very bytes and functions, and nnabla's outputs must be
//! onnxruntime's exactly; out-of-range casts (undefined in ONNX) saturate.
#![cfg(all(feature = "onnx", feature = "nnp"))]

use std::path::{Path, PathBuf};

use mlformats::Document;
use nnp_archive::nnabla_proto::proto::NNablaProtoBuf;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/cast_quant")
}

mod common;
use common::values;

/// Converts case `name` to `.nnp`: its sha256 and its network.
fn import(name: &str, dir: &Path) -> (String, NNablaProtoBuf) {
    common::import_nnp(&data(), name, dir)
}

#[test]
fn every_case_is_the_file_nnabla_ran_and_computed_what_onnxruntime_did() {
    let r = common::json_file(&data().join("results.json"));
    assert_eq!(r["nnabla"], "1.39.0");
    let cases = r["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 7);
    let dir = tempfile::tempdir().unwrap();
    for (name, c) in cases {
        let model = common::recorded_nnp(&data(), name, c, dir.path());
        let types: Vec<&str> = model.network[0]
            .function
            .iter()
            .map(|f| f.r#type.as_str())
            .collect();
        let want: Vec<&str> = c["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert_eq!(types, want, "{name}");
        if name == "cast_out_of_range" {
            continue;
        }
        let io = Document::open(data().join(format!("{name}.io.npz"))).unwrap();
        let nn = Document::open(data().join(format!("{name}.nnabla.npz"))).unwrap();
        for (k, set) in c["sets"].as_array().unwrap().iter().enumerate() {
            let outs = set["outputs"].as_object().unwrap();
            assert!(!outs.is_empty(), "{name}");
            for (out, rec) in outs {
                let want = values(&io, &format!("ort.{out}.{k}"));
                let got = values(&nn, &format!("{out}.{k}"));
                assert_eq!(want, got, "{name} {out}.{k}");
                assert_eq!(rec["diff"], 0.0, "{name} {out}.{k}");
            }
        }
    }
}

/// The cast of one f32 as this import defines it: toward zero, then
/// saturated to `[lo, hi]`.
fn cast(x: f64, lo: f64, hi: f64) -> f64 {
    x.trunc().clamp(lo, hi)
}

#[test]
fn casts_truncate_toward_zero_and_saturate_out_of_range_values() {
    let io = Document::open(data().join("cast_float_to_int.io.npz")).unwrap();
    let nn = Document::open(data().join("cast_float_to_int.nnabla.npz")).unwrap();
    let ranges = [
        ("u8", 0.0, 255.0),
        ("i8", -128.0, 127.0),
        ("u16", 0.0, 65535.0),
        ("i16", -32768.0, 32767.0),
    ];
    for k in 0..2 {
        for (t, lo, hi) in ranges {
            let x = values(&io, &format!("in.x_{t}.{k}"));
            let got = values(&nn, &format!("y_{t}.{k}"));
            let want: Vec<f64> = x.iter().map(|&v| cast(v, lo, hi)).collect();
            assert_eq!(got, want, "{t}.{k}");
            // the inputs reach both ends and the fractions next to zero
            assert!(
                x.contains(&-0.5) && x.iter().any(|&v| v > 2.99 && v < 3.0),
                "{t}"
            );
            assert!(x.iter().any(|&v| v.trunc() == hi), "{t}");
        }
    }
    // Out of range (undefined in ONNX; onnxruntime wraps): saturated.
    let io = Document::open(data().join("cast_out_of_range.io.npz")).unwrap();
    let nn = Document::open(data().join("cast_out_of_range.nnabla.npz")).unwrap();
    let x = values(&io, "in.x.0");
    let y: Vec<f64> = x.iter().map(|&v| cast(v, 0.0, 255.0)).collect();
    let z: Vec<f64> = x.iter().map(|&v| cast(v, -128.0, 127.0)).collect();
    assert_eq!(values(&nn, "y.0"), y);
    assert_eq!(values(&nn, "z.0"), z);
    assert_eq!(y, [0.0, 0.0, 0.0, 127.0, 128.0, 255.0, 255.0, 255.0]);
}

#[test]
fn a_runtime_scale_is_an_input_of_quantize_linear_not_a_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = import("quantize_runtime_per_axis", dir.path());
    let net = &m.network[0];
    let q = net
        .function
        .iter()
        .find(|f| f.r#type == "QuantizeLinear")
        .unwrap();
    let var = |n: &str| net.variable.iter().find(|v| v.name == n).unwrap();
    // scale and zero point: the inputs `s` and `zp` reshaped to [1, 3, 1]
    for i in 1..3 {
        let v = var(&q.input[i]);
        assert_eq!(v.r#type, "Buffer", "{}", q.input[i]);
        assert_eq!(v.shape.as_ref().unwrap().dim, [1, 3, 1]);
    }
    assert!(m.parameter.is_empty() || net.variable.iter().all(|v| v.r#type != "Parameter"));
}
