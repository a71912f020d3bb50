//! Every lowered NNabla function, one function at a time: the single-function
//! networks of `testdata/translate/export/nnabla/` (made by nnabla 1.39's own
//! writer, `tools/nnabla_export_cases.py`; `NAME.out.npz` computed by the
//! real nnabla from the saved `.nnp`) are exported to ONNX, run in
//! tract-onnx on `NAME.in.npz` and compared with nnabla's outputs. Every
//! function the exporter lowers must have at least one such network.
//!
//! Where tract-onnx lacks an operator of a lowering (`TRACT_LACKS`), the
//! export is only checked to succeed here; onnxruntime checks its outputs
//! against nnabla's (`tools/export_check.py`, recorded in the table's
//! verification column).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use graph_translate::export::{ExportOptions, ExportSummary, nnabla, nnabla_functions};
use nnp_archive::Nnp;
use onnx_format::ModelProto;

mod common;
use common::npz::read_npz;
use common::{full_message, run_onnx};

const TOLERANCE: f64 = 1e-4;

/// Cases whose lowering uses an ONNX operator tract-onnx 0.22 does not run
/// (or runs differently from both nnabla and onnxruntime).
/// `pad_reflect`: tract pads two axes of a 4-D tensor by reflection
/// differently from nnabla and onnxruntime (which agree); `rnn_relu_nobias`:
/// tract's `RNN` ignores `activations` (always tanh); `batch_*`: tract has
/// no `Det`; `interpolate_linear_hp`, `onnx_resize_linear`: tract's linear
/// `Resize` with `half_pixel` differs from nnabla and onnxruntime (which
/// agree); `onnx_resize_cubic_ac`, `onnx_resize_linear_pt`: tract reads no
/// `cubic` mode, no `pytorch_half_pixel`; `cumprod_excl_rev`: tract's
/// optimiser fails an assertion (`PushSliceUp`) on the concatenated slice
/// products (onnxruntime computes nnabla's values); `fused_conv_bn_batch_reflect`,
/// `fused_conv_z_elu_repeat`: tract's `reflect` and `edge` `Pad` of a 4-D
/// tensor differ from nnabla and onnxruntime (which agree); `roi_align*`:
/// tract has no `RoiAlign`; `bool_scatter`, `bool_scatter_inplace`,
/// `bool_scatter_short`: tract's optimiser fails (`ChangeAxes`) moving the
/// flattening of a 2-D mask into `CumSum` (onnxruntime computes nnabla's
/// values; the 1-D `bool_scatter_1d` runs in tract); `warp_by_*`: tract has
/// no `GridSample`; `deform_conv*`: tract has no `DeformConv`.
const TRACT_LACKS: &[&str] = &[
    "bool_scatter",
    "bool_scatter_inplace",
    "bool_scatter_short",
    "fused_conv_bn_batch_reflect",
    "fused_conv_z_elu_repeat",
    "roi_align",
    "roi_align_scaled_sr2",
    "roi_align_small_sr1",
    "pad_reflect",
    "rnn_relu_nobias",
    "batch_det_2",
    "batch_det_3",
    "batch_logdet_3",
    "batch_logdet_4",
    "interpolate_linear_hp",
    "onnx_resize_linear",
    "onnx_resize_cubic_ac",
    "onnx_resize_linear_pt",
    "cumprod_excl_rev",
    "warp_by_grid",
    "warp_by_grid_ac",
    "warp_by_grid_repeat",
    "warp_by_grid_reflect",
    "warp_by_grid_reflect_ac",
    "warp_by_grid_nearest",
    "warp_by_grid_nearest_repeat_ac",
    "warp_by_grid_3d",
    "warp_by_grid_3d_reflect_ac",
    "warp_by_grid_nearest_ties",
    "warp_by_grid_nearest_ties_reflect",
    "warp_by_grid_nearest_ties_repeat_ac",
    "warp_by_grid_3d_nearest_ties_reflect_ac",
    "warp_by_flow",
    "warp_by_flow_small",
    "deform_conv",
    "deform_conv_mask_groups",
    "deform_conv_dil_mask",
];

/// Cases nnabla computes at random, so no output can be compared:
/// nnabla's runtime applies `Dropout` (a random mask) when it runs a saved
/// network; the export is the inference identity, as nnabla's own ONNX
/// converter writes it.
const RANDOM_IN_NNABLA: &[&str] = &["dropout"];

/// Cases exported at ONNX operator set 16 (the default is older): nnabla's
/// `RoiAlign` samples with half-pixel offsets, ONNX's `RoiAlign` from 16 on.
const OPSET_16: &[&str] = &["roi_align", "roi_align_scaled_sr2", "roi_align_small_sr1"];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/export/nnabla")
}

fn cases() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "nnp"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Largest absolute difference over the largest absolute reference value
/// (NaN where nnabla has NaN counts as equal).
fn rel_error(got: &[f32], want: &[f32]) -> f64 {
    let mut scale = 1e-6f64;
    let mut worst = 0f64;
    for (&g, &w) in got.iter().zip(want) {
        if (g.is_nan() && w.is_nan()) || (g.is_infinite() && g == w) {
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

/// The case `name`'s `.nnp`.
fn open(name: &str) -> Nnp<'static> {
    Nnp::open(dir().join(format!("{name}.nnp"))).unwrap()
}

/// The functions of the case's networks.
fn functions(nnp: &Nnp<'_>) -> Vec<String> {
    let networks = nnp.networks().iter();
    networks
        .flat_map(|n| n.function.iter().map(|f| f.r#type.clone()))
        .collect()
}

/// `nnp`'s network exported with `opts`, its parameters the weights.
fn export_model(
    nnp: &Nnp<'_>,
    opts: &ExportOptions,
) -> Result<(ModelProto, ExportSummary), String> {
    let weights: BTreeMap<String, tensor_core::Tensor<'static>> = nnp
        .parameters()
        .to_tensor_map()
        .into_iter()
        .map(|(n, t)| (n, t.into_static()))
        .collect();
    nnabla::export(nnp.model(), &weights, opts).map_err(|e| full_message(&e))
}

/// Exports `name` and, unless tract lacks an operator of it, runs it in
/// tract; returns the worst relative error (0 when not run).
fn run_one(name: &str) -> Result<f64, String> {
    let d = dir();
    let nnp = Nnp::open(d.join(format!("{name}.nnp"))).map_err(|e| full_message(&e))?;
    let opts = if OPSET_16.contains(&name) {
        ExportOptions::new().opset(16)
    } else {
        ExportOptions::new()
    };
    let (model, _) = export_model(&nnp, &opts)?;
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &model).unwrap();
    // for the onnxruntime check (tools/nnabla_export_cases.py check)
    if let Some(out) = std::env::var_os("MLFORMATS_DUMP_ONNX") {
        std::fs::write(Path::new(&out).join(format!("{name}.onnx")), &bytes).unwrap();
    }
    if TRACT_LACKS.contains(&name) || RANDOM_IN_NNABLA.contains(&name) {
        return Ok(0.0);
    }
    let ins = read_npz(&d.join(format!("{name}.in.npz")))?;
    let outs = read_npz(&d.join(format!("{name}.out.npz")))?;
    let got = run_onnx(&bytes, &ins)?;
    let mut worst = 0f64;
    for (k, got) in got.iter().enumerate() {
        let n = format!("y{k}");
        let (_, want) = outs
            .get(&n)
            .ok_or_else(|| format!("no reference output {n:?}"))?;
        let got = got.cast_to::<f32>().map_err(|e| e.to_string())?;
        let got = got.as_slice::<f32>().map_err(|e| e.to_string())?;
        if got.len() != want.len() {
            return Err(format!(
                "output {n}: {} values, nnabla has {}",
                got.len(),
                want.len()
            ));
        }
        worst = worst.max(rel_error(got, want));
    }
    Ok(worst)
}

#[test]
fn every_lowered_function_matches_nnabla() {
    let all = cases();
    let mut covered: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for name in &all {
        for f in functions(&open(name)) {
            *covered.entry(f).or_default() += 1;
        }
        match run_one(name) {
            Ok(e) if e <= TOLERANCE => println!("ok {name}: relative error {e:.2e}"),
            Ok(e) => failures.push(format!("{name}: relative error {e:.3e} > {TOLERANCE}")),
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
    let missing: BTreeSet<&str> = nnabla_functions()
        .into_iter()
        .filter(|f| !covered.contains_key(*f))
        .collect();
    assert!(
        missing.is_empty(),
        "lowered functions without a single-function network: {missing:?}"
    );
}

/// nnabla's `RoiAlign` needs ONNX's `half_pixel` `RoiAlign` (operator set
/// 16): an older operator set is refused with the reason, not written with
/// ONNX's older, different sampling.
#[test]
fn roi_align_before_opset_16_is_refused_with_the_reason() {
    let nnp = open("roi_align");
    let Err(e) = export_model(&nnp, &ExportOptions::new().opset(15)) else {
        panic!("RoiAlign at opset 15 must be refused");
    };
    assert!(
        e.contains("RoiAlign") && e.contains("operator set 16") && e.contains("15"),
        "{e}"
    );
    assert!(export_model(&nnp, &ExportOptions::new().opset(16)).is_ok());
}

/// The operator set rises to the lowest one a network's functions need
/// (13 otherwise); a chosen set older than that is refused with the
/// function named.
#[test]
fn opset_rises_only_for_functions_that_need_it() {
    let opset =
        |name: &str, opts: &ExportOptions| export_model(&open(name), opts).map(|(_, s)| s.opset);
    let default = ExportOptions::new();
    assert_eq!(opset("relu", &default).unwrap(), 13);
    assert_eq!(opset("warp_by_grid", &default).unwrap(), 16);
    assert_eq!(opset("warp_by_grid_3d", &default).unwrap(), 20);
    assert_eq!(opset("fft_1d", &default).unwrap(), 17);
    assert_eq!(opset("deform_conv", &default).unwrap(), 19);
    assert_eq!(
        opset("warp_by_grid", &ExportOptions::new().opset(18)).unwrap(),
        18
    );
    let err = opset("deform_conv", &ExportOptions::new().opset(17)).unwrap_err();
    assert!(
        err.contains("DeformableConvolution") && err.contains("operator set 19"),
        "{err}"
    );
}
