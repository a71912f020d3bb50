//! `Loop`s and `Scan`s unrolled on import, checked against what the real
//! runtimes computed (`testdata/translate/unroll_more`: `cases.py` writes
//! the models, `check.py` converted them with `mlformats convert`, ran the
//! `.nnp` in nnabla 1.39 and the `.tsm` in the TenniS runtime, and recorded
//! their outputs in `results.json`): the opset-8 `Scan` (a batch axis, two
//! sequences read in opposite directions; its sequence lengths absent,
//! constant, or an input fixed by `--input-value`), a `Loop` with a
//! constant trip count and no condition reading a value of the outer
//! graph, one whose trip count and condition are inputs fixed by
//! `--input-value`, one whose constant false condition runs no
//! iteration, and a `Loop` in a `Loop`'s body.
//!
//! The TenniS import must give the `.tsm` the runtime ran, byte for byte;
//! both imports are exported back to ONNX and run in tract, which must
//! compute what each runtime computed.
#![cfg(all(feature = "nnabla", feature = "tennis"))]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bubble_module::{Module, WriteOptions};
use graph_translate::export::{ExportOptions, nnabla};
use graph_translate::import::{ImportOptions, onnx_to_nnabla, onnx_to_tennis};
use onnx_format::ModelProto;
use serde_json::Value;
use tract_onnx::prelude::*;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/unroll_more")
}

fn results() -> Value {
    let text = std::fs::read_to_string(data().join("results.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn model(name: &str) -> onnx_format::Model {
    let bytes = std::fs::read(data().join(format!("{name}.onnx"))).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

/// A recorded array: its shape and values.
fn array(v: &Value) -> (Vec<usize>, Vec<f32>) {
    let shape = v["shape"].as_array().unwrap();
    let shape = shape.iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data = v["data"].as_array().unwrap();
    let data = data.iter().map(|x| x.as_f64().unwrap() as f32).collect();
    (shape, data)
}

/// The import options of a case: its inputs fixed by `--input-value`.
fn options(case: &Value) -> ImportOptions {
    let fixed = case["input_values"].as_object().unwrap();
    fixed.iter().fold(ImportOptions::default(), |o, (k, v)| {
        let v = v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap());
        o.input_value(k.clone(), v.collect())
    })
}

/// `m` run in tract on the case's inputs (by name): its outputs.
fn run(m: &ModelProto, inputs: &serde_json::Map<String, Value>) -> Vec<(Vec<usize>, Vec<f32>)> {
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, m).unwrap();
    let mut tm = tract_onnx::onnx().model_for_read(&mut &bytes[..]).unwrap();
    let graph = m.graph.as_ref().unwrap();
    let inits: Vec<_> = graph.initializer.iter().map(|t| t.name.clone()).collect();
    let mut feeds = TVec::new();
    let names = graph.input.iter().map(|i| i.name.clone());
    for (i, name) in names.filter(|n| !inits.contains(n)).enumerate() {
        let (shape, x) = array(&inputs[name.as_deref().unwrap()]);
        tm = tm.with_input_fact(i, f32::fact(&shape).into()).unwrap();
        feeds.push(
            tract_onnx::prelude::Tensor::from_shape(&shape, &x)
                .unwrap()
                .into(),
        );
    }
    let plan = tm.into_optimized().unwrap().into_runnable().unwrap();
    let out = plan.run(feeds).unwrap();
    out.iter()
        .map(|t| {
            let t = t.cast_to::<f32>().unwrap();
            (t.shape().to_vec(), t.as_slice::<f32>().unwrap().to_vec())
        })
        .collect()
}

/// `got` is what `runtime` recorded for `name`, within 1e-5 (the element
/// counts must agree; TenniS gives a scalar as `[1]`).
fn check(name: &str, runtime: &str, got: &[(Vec<usize>, Vec<f32>)], case: &Value) {
    let want = case[runtime]["outputs"].as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{name} {runtime}");
    for (k, ((_, g), w)) in got.iter().zip(want).enumerate() {
        let (_, w) = array(w);
        assert_eq!(g.len(), w.len(), "{name} {runtime} output {k}");
        for (a, b) in g.iter().zip(&w) {
            assert!(
                (a - b).abs() <= 1e-5,
                "{name} {runtime} output {k}: {a} vs {b}"
            );
        }
    }
    for d in case[runtime]["max_abs_diff"].as_array().unwrap() {
        assert!(d.as_f64().unwrap() < 1e-6, "{name} {runtime}: {d}");
    }
}

#[test]
fn the_tennis_import_is_the_module_the_runtime_ran_and_computes_its_outputs() {
    let r = results();
    let cases = r["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 7);
    for (name, case) in cases {
        let bytes = onnx_to_tennis(&model(name), &options(case))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .to_bytes(&WriteOptions::default())
            .unwrap();
        let ran = std::fs::read(data().join(format!("{name}.tsm"))).unwrap();
        assert!(bytes == ran, "{name}: not the .tsm the TenniS runtime ran");
        let module = Module::parse(&bytes).unwrap();
        let (onnx, _) = common::export_read(&module).unwrap();
        let got = run(&onnx, case["inputs"].as_object().unwrap());
        check(name, "tennis", &got, case);
    }
}

#[test]
fn the_nnabla_import_computes_what_nnabla_computed() {
    let r = results();
    for (name, case) in r["cases"].as_object().unwrap() {
        let nn =
            onnx_to_nnabla(&model(name), &options(case)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let weights: BTreeMap<String, tensor_core::Tensor<'static>> =
            nn.parameters.into_iter().collect();
        let (onnx, _) = nnabla::export(&nn.model, &weights, &ExportOptions::new()).unwrap();
        let got = run(&onnx, case["inputs"].as_object().unwrap());
        check(name, "nnabla", &got, case);
    }
}

/// Without the values `--input-value` gives, the `Loop` and the `Scan`
/// are refused, naming the node and `--input-value`.
#[test]
fn inputs_that_decide_the_unrolling_are_refused_until_fixed() {
    for (name, node, what) in [
        (
            "loop_inputs_fixed_op11",
            "\"loop11\"",
            "trip count \"trip\"",
        ),
        (
            "scan8_lens_input_op8",
            "\"Scan#0\"",
            "sequence lengths \"lens\"",
        ),
    ] {
        let m = model(name);
        let o = ImportOptions::default();
        let errs = [
            onnx_to_nnabla(&m, &o).err().unwrap().to_string(),
            onnx_to_tennis(&m, &o).err().unwrap().to_string(),
        ];
        for e in errs {
            assert!(e.contains(node) && e.contains(what), "{name}: {e}");
            assert!(e.contains("--input-value"), "{name}: {e}");
        }
    }
    // the trip count fixed, the condition still an input
    let o = ImportOptions::default().input_value("trip", vec![5.0]);
    let e = onnx_to_tennis(&model("loop_inputs_fixed_op11"), &o)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("condition \"cond\"") && e.contains("--input-value"),
        "{e}"
    );
}
