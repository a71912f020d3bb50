//! TenniS → ONNX, one operator at a time: every single-operator module of
//! `testdata/translate/export/tennis/` (written by the `tennis_op_cases`
//! example; `NAME.out.npz` computed by the real TenniS C++ runtime on
//! `NAME.in.npz`, see the README there) is exported, run by
//! tract-onnx on the same inputs and compared with TenniS's outputs: the
//! largest absolute difference over the largest absolute reference value
//! must be at most 1e-4 (integer outputs: equal).

use std::path::{Path, PathBuf};

use bubble_module::Module;
use tract_onnx::prelude::*;

mod common;
use common::npz::read_npz;
use common::{export_read, full_message, run_onnx};

const TOLERANCE: f64 = 1e-4;

/// Cases tract-onnx 0.22 cannot run (onnxruntime runs them and matches
/// TenniS, checked by `tools/export_check.py`); printed, not asserted.
const TRACT_LACKS: &[&str] = &[
    // RoiAlign is not implemented in tract-onnx 0.22
    "roi_align_0",
    "roi_align_1",
    "roi_align_2",
    // a Range whose length is computed from the data
    "range_0",
    "range_1",
    "range_2",
    "range_3",
    "range_4",
    // a Pad whose amount is computed from NonMaxSuppression's output
    "non_max_suppression_v3_0",
    "non_max_suppression_v3_1",
    "non_max_suppression_v3_2",
    // a Range over the input's element count (quantize's vector blocks)
    "quantize_0",
    "quantize_1",
    // paddings and slice bounds computed from module inputs (tract needs
    // them known when it prepares the model)
    "pad_dyn_0",
    "slice_v2_dyn_0",
    "slice_v3_dyn_0",
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/export/tennis")
}

fn rel_error(got: &[f32], want: &[f32]) -> f64 {
    let mut scale = 1e-6f64;
    let mut worst = 0f64;
    for (&g, &w) in got.iter().zip(want) {
        scale = scale.max(f64::from(w).abs());
        worst = worst.max((f64::from(g) - f64::from(w)).abs());
    }
    if worst.is_nan() {
        f64::INFINITY
    } else {
        worst / scale
    }
}

/// Exports `name`, runs it in tract and returns its relative error.
fn run_one(name: &str) -> Result<f64, String> {
    let d = dir();
    let module = Module::open(d.join(format!("{name}.tsm"))).map_err(|e| full_message(&e))?;
    let (model, _) = export_read(&module)?;
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &model).map_err(|e| e.to_string())?;
    let ins = read_npz(&d.join(format!("{name}.in.npz")))?;
    let outs = read_npz(&d.join(format!("{name}.out.npz")))?;
    let got = run_onnx(&bytes, &ins)?;
    let mut worst = 0f64;
    for (k, g) in got.iter().enumerate() {
        let (dims, want) = outs
            .get(&format!("out_{k}"))
            .ok_or_else(|| format!("no TenniS output out_{k}"))?;
        if g.shape() != dims.as_slice() {
            return Err(format!(
                "output {k}: shape {:?}, TenniS has {dims:?}",
                g.shape(),
            ));
        }
        let integer = !matches!(g.datum_type(), DatumType::F32 | DatumType::F64);
        let g = g.cast_to::<f32>().map_err(|e| e.to_string())?;
        let g = g.as_slice::<f32>().map_err(|e| e.to_string())?;
        let e = rel_error(g, want);
        if integer && g != want.as_slice() {
            return Err(format!("integer output {k} differs from TenniS"));
        }
        worst = worst.max(e);
    }
    Ok(worst)
}

#[test]
fn single_operator_exports_match_tennis_with_tract() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".out.npz").map(str::to_string))
        .collect();
    names.sort();
    assert!(names.len() >= 90, "only {} cases", names.len());
    let mut failures = Vec::new();
    for name in &names {
        let r = run_one(name);
        if TRACT_LACKS.contains(&name.as_str()) {
            println!("{name} (tract lacks an operator): {r:?}");
            continue;
        }
        match r {
            Ok(e) if e <= TOLERANCE => println!("ok {name}: relative error {e:.2e}"),
            Ok(e) => failures.push(format!("{name}: relative error {e:.3e}")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}

#[test]
fn a_pooling_whose_padding_is_not_4x2_is_an_error_not_a_panic() {
    use bubble_module::{ModuleBuilder, Packed};
    use tensor_core::{DType, Tensor as T};
    let mut b = ModuleBuilder::new();
    let x = b.input_with("x0", DType::F32, &[1, 2, 7, 8]).unwrap();
    let short: Packed<'static> = T::from_values([2, 2], &[1i32, 1, 1, 1]).unwrap().into();
    let p = b
        .op_with(
            "_onnx_pooling2d_padding",
            "p",
            &[x],
            vec![("padding", short), ("auto_pad", Packed::string("NOTSET"))],
        )
        .unwrap();
    let k = b
        .constant("k", T::from_values([4], &[1i32, 1, 3, 3]).unwrap())
        .unwrap();
    let s = b
        .constant("s", T::from_values([4], &[1i32, 1, 2, 2]).unwrap())
        .unwrap();
    let ty: Packed<'static> = T::from_values([], &[0i32]).unwrap().into();
    let y = b
        .op_with(
            "pooling2d_v2",
            "y",
            &[x, p, k, s],
            vec![("format", Packed::string("NCHW")), ("type", ty)],
        )
        .unwrap();
    b.output(y).unwrap();
    let e = common::export_module(b).map(|_| ()).unwrap_err();
    assert!(e.contains("padding needs 8 values"), "{e}");
}
