//! ONNX export, end to end: every network of `testdata/onnx/` (an `.nnp`
//! whose outputs the real nnabla 1.39 computed on fixed inputs, or a TenniS
//! module whose outputs the TenniS C++ runtime computed; see
//! `testdata/onnx/README.md`) is exported to ONNX by the library, run by
//! tract-onnx (a pure-Rust ONNX runtime) on the same inputs with a batch of 2
//! (the exported NNabla batch dimension is symbolic), and compared with the
//! real library's outputs: the largest absolute difference over the largest
//! absolute reference value must be at most 1e-4.

use std::path::{Path, PathBuf};

use mlformats::export::{ExportOptions, export_model};
use mlformats::{Document, Format};
use serde_json::Value;
use tract_onnx::prelude::*;

const TOLERANCE: f64 = 1e-4;

/// Outputs tract-onnx 0.22 computes differently from both nnabla and
/// onnxruntime (which agree, checked in CI by `check_exports.py`): reflect
/// padding of two axes of a 4-D tensor. Their error is printed, not asserted.
const TRACT_DEVIATIONS: &[(&str, &str)] = &[("syn_misc", "pd")];

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/onnx")
}

/// `(name, manifest)` of every reference network, sorted.
fn manifests() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            (name, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn rel_error(got: &[f32], want: &[f32]) -> f64 {
    assert_eq!(got.len(), want.len());
    let mut scale = 1e-6f64;
    let mut worst = 0f64;
    for (&g, &w) in got.iter().zip(want) {
        if g.is_nan() && w.is_nan() {
            continue;
        }
        scale = scale.max(f64::from(w).abs());
        worst = worst.max((f64::from(g) - f64::from(w)).abs());
    }
    if worst.is_nan() {
        f64::INFINITY
    } else {
        worst / scale
    }
}

/// Exports `name`, runs it with tract on the reference inputs and returns
/// the worst relative error over its outputs, and that output's name.
fn run_one(name: &str, manifest: &Value) -> Result<(f64, String), String> {
    let dir = testdata();
    // an NNabla reference is NAME.nnp; others name their model file
    let model_path = match manifest["model"].as_str() {
        Some(m) => dir.join(m),
        None => dir.join(format!("{name}.nnp")),
    };
    let doc = Document::open(&model_path).map_err(|e| e.full_message())?;
    assert!(matches!(
        doc.format(),
        Format::NnablaNnp | Format::TennisModule
    ));
    let (model, summary) =
        export_model(&doc, &ExportOptions::new()).map_err(|e| e.full_message())?;
    assert_eq!(summary.opset, 13);
    let bytes = prost_encode(&model);
    let io = Document::open(dir.join(format!("{name}.io.npz"))).map_err(|e| e.full_message())?;

    let mut m = tract_onnx::onnx()
        .model_for_read(&mut &bytes[..])
        .map_err(|e| format!("tract cannot read the export: {e:?}"))?;
    let input_names: Vec<String> = m
        .input_outlets()
        .map_err(|e| e.to_string())?
        .iter()
        .map(|o| m.node(o.node).name.clone())
        .collect();
    let mut feeds = TVec::new();
    for (i, n) in input_names.iter().enumerate() {
        let t = io
            .tensor(&format!("in/{n}"))
            .ok_or_else(|| format!("no reference input {n:?}"))?;
        let dims: Vec<usize> = t.dims().to_vec();
        let data: Vec<f32> = t.to_vec::<f32>().map_err(|e| e.to_string())?;
        m = m
            .with_input_fact(i, f32::fact(&dims).into())
            .map_err(|e| e.to_string())?;
        feeds.push(
            tract_onnx::prelude::Tensor::from_shape(&dims, &data)
                .map_err(|e| e.to_string())?
                .into(),
        );
    }
    let plan = m
        .into_optimized()
        .and_then(|m| m.into_runnable())
        .map_err(|e| format!("tract cannot prepare the export: {e:?}"))?;
    let outputs = plan
        .run(feeds)
        .map_err(|e| format!("tract cannot run the export: {e:?}"))?;
    let output_names: Vec<String> = manifest["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let mut worst = (0f64, String::new());
    for (n, got) in output_names.iter().zip(outputs.iter()) {
        let want = io
            .tensor(&format!("out/{n}"))
            .ok_or_else(|| format!("no reference output {n:?}"))?;
        let got = got.cast_to::<f32>().map_err(|e| e.to_string())?;
        let got = got.as_slice::<f32>().map_err(|e| e.to_string())?;
        let want = want.to_vec::<f32>().map_err(|e| e.to_string())?;
        if got.len() != want.len() {
            return Err(format!(
                "output {n:?}: {} values, nnabla has {}",
                got.len(),
                want.len()
            ));
        }
        let e = rel_error(got, &want);
        if TRACT_DEVIATIONS.contains(&(name, n.as_str())) {
            println!("  {name}: output {n:?} (a known tract deviation): relative error {e:.2e}");
            continue;
        }
        if e >= worst.0 {
            worst = (e, n.clone());
        }
    }
    Ok(worst)
}

fn prost_encode(m: &mlformats::onnx::ModelProto) -> Vec<u8> {
    let mut out = Vec::new();
    mlformats::onnx::write_model(&mut out, m).unwrap();
    out
}

#[test]
fn exports_match_nnabla_with_tract() {
    let all = manifests();
    assert!(all.len() >= 20, "only {} reference networks", all.len());
    let mut failures = Vec::new();
    for (name, manifest) in &all {
        match run_one(name, manifest) {
            Ok((e, _)) if e <= TOLERANCE => println!("ok {name}: relative error {e:.2e}"),
            Ok((e, out)) => failures.push(format!(
                "{name}: output {out:?}: relative error {e:.3e} > {TOLERANCE}"
            )),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
