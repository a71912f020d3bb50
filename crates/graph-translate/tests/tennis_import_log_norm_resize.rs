//! ONNX → TenniS lowerings of operators TenniS has no operator for but can
//! compute, checked offline: the imported module is written and read back
//! as a `.tsm` is, exported to ONNX again and run in tract, and compared
//! with the operator's definition (the real TenniS runtime computed the
//! same cases; the conformance suite's cases pass there too).
//!
//! - `Log`: TenniS has no logarithm; ln x is 2^20 · ln(x^(2^-20)) by a
//!   series and one Newton step in f64.
//! - `LogSoftmax`: x − max − ln Σ exp(x − max), never overflowing.
//! - `ReduceLogSumExp`: m + ln Σ exp(x − m); `ReduceLogSum`: ln Σ x.
//! - `InstanceNormalization`: means over the spatial axes, scale and B
//!   per channel.
//! - `Resize` in linear mode: per resized axis two `gather`s and the two
//!   weights, computed at import with ONNX's coordinate formulas (every
//!   coordinate transformation mode), not TenniS's `_resize2d`.
//! - `Resize` in nearest mode where one `_resize2d` cannot (fractions,
//!   downsampling, `axes`, every `nearest_mode`): one `gather` per axis.
//! - `GRU`: TenniS has no GRU operator; the steps are unrolled.
#![cfg(feature = "tennis")]

mod common;

use std::collections::BTreeMap;

use bubble_module::{Module, WriteOptions};
use common::{one_node_model, run_in_tract as run};
use graph_translate::import::{ImportOptions, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::AttributeProto;
use onnx_format::proto::tensor_proto::DataType;

/// One node `op` reading f32 `x` of `dims` and the constants `consts`
/// (name, values, dims), writing `y` of `out`, at `opset`.
fn one_node(
    op: &str,
    dims: &[i64],
    consts: &[(&str, &[f32], &[i64])],
    out: &[i64],
    opset: i64,
    attrs: Vec<AttributeProto>,
) -> onnx_format::Model {
    let more = |b: &mut GraphBuilder| {
        let c = consts.iter();
        c.map(|&(name, v, cd)| match name {
            "" => String::new(),
            _ => b.const_f32(name, v, cd),
        })
        .collect()
    };
    one_node_model(op, dims, out, opset, more, attrs)
}

/// The TenniS import of `m` as `.tsm` bytes, read back as a module.
fn tsm(m: &onnx_format::Model) -> Module<'static> {
    let bytes = onnx_to_tennis(m, &ImportOptions::default())
        .unwrap()
        .to_bytes(&WriteOptions::default())
        .unwrap();
    Module::parse(&bytes).unwrap().into_static()
}

/// Why the TenniS import refuses `m`.
fn refusal(m: &onnx_format::Model) -> String {
    onnx_to_tennis(m, &ImportOptions::default())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

/// How many nodes of each operator the module has.
fn op_counts(m: &Module<'_>) -> BTreeMap<String, usize> {
    let mut c = BTreeMap::new();
    for n in m.nodes() {
        *c.entry(n.op().to_string()).or_insert(0) += 1;
    }
    c
}

/// Seeded values in about [−scale, scale] (a small LCG: no dependency).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

#[test]
fn log_is_composed_and_correctly_rounded_here() {
    let x = [
        1.0f32,
        1.0 + f32::EPSILON,
        1.0 - f32::EPSILON / 2.0,
        0.5,
        2.0,
        1e-45,
        1e-38,
        3.4e38,
        1e10,
        7.25,
    ];
    let m = one_node("Log", &[10], &[], &[10], 13, vec![]);
    let t = tsm(&m);
    let c = op_counts(&t);
    assert!(!c.contains_key("log"), "{c:?}");
    assert_eq!(c.get("pow"), Some(&1), "{c:?}");
    assert_eq!(c.get("exp"), Some(&1), "{c:?}");
    assert_eq!(c.get("_cast"), Some(&2), "{c:?}");
    let got = run(&t, &[10], &x);
    for (g, &v) in got.iter().zip(&x) {
        let w = f64::from(v).ln();
        // within one rounding of f32 (near 1, where ln x is tiny, too)
        let ulp = f64::from(f32::EPSILON) * w.abs();
        assert!(
            (f64::from(*g) - w).abs() <= ulp,
            "ln({v:e}) = {g:e}, want {w:e}"
        );
    }
}

#[test]
fn log_of_zero_infinity_and_negatives() {
    let x = [0.0f32, -0.0, f32::INFINITY, -1.0, f32::NAN];
    let m = one_node("Log", &[5], &[], &[5], 13, vec![]);
    let got = run(&tsm(&m), &[5], &x);
    assert_eq!(got[0], f32::NEG_INFINITY);
    assert_eq!(got[1], f32::NEG_INFINITY);
    assert_eq!(got[2], f32::INFINITY);
    assert!(got[3].is_nan() && got[4].is_nan(), "{got:?}");
}

/// log-softmax of `x` (rows of `n`) in f64.
fn log_softmax_rows(x: &[f32], n: usize) -> Vec<f64> {
    x.chunks(n)
        .flat_map(|r| {
            let m = r
                .iter()
                .fold(f64::NEG_INFINITY, |a, &v| a.max(f64::from(v)));
            let s: f64 = r.iter().map(|&v| (f64::from(v) - m).exp()).sum();
            r.iter()
                .map(move |&v| f64::from(v) - m - s.ln())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn log_softmax_is_stable() {
    // values up to ±1000: exp overflows without the max taken first
    let x = values(24, 3, 1000.0);
    for (opset, axis) in [(13, -1), (11, 2), (11, 1)] {
        let m = one_node(
            "LogSoftmax",
            &[2, 3, 4],
            &[],
            &[2, 3, 4],
            opset,
            vec![attr::int("axis", axis)],
        );
        let t = tsm(&m);
        let c = op_counts(&t);
        for want in ["max", "exp", "reduce_sum", "pow"] {
            assert!(c.contains_key(want), "{want} not in {c:?}");
        }
        // opset 11 and axis 1 coerce to [2, 12]: rows of 12
        let n = if axis == 1 { 12 } else { 4 };
        assert_eq!(c.contains_key("_reshape"), axis == 1, "{c:?}");
        let got = run(&t, &[2, 3, 4], &x);
        let want = log_softmax_rows(&x, n);
        for (g, w) in got.iter().zip(&want) {
            assert!(g.is_finite(), "opset {opset} axis {axis}: {got:?}");
            assert!(
                (f64::from(*g) - w).abs() <= 1e-6 * w.abs() + 1e-6,
                "opset {opset} axis {axis}: {g} want {w}"
            );
        }
    }
}

#[test]
fn instance_normalization_normalises_each_sample_and_channel() {
    // N 2, C 3, spatial 2 × 5: 10 values per (n, c)
    let x: Vec<f32> = values(60, 11, 4.0)
        .iter()
        .enumerate()
        .map(|(i, v)| v + (i / 10) as f32)
        .collect();
    let (scale, bias) = ([0.5f32, -2.0, 3.0], [1.0f32, 0.0, -0.25]);
    let eps = 1e-3f32;
    let m = one_node(
        "InstanceNormalization",
        &[2, 3, 2, 5],
        &[("s", &scale, &[3]), ("b", &bias, &[3])],
        &[2, 3, 2, 5],
        13,
        vec![attr::float("epsilon", eps)],
    );
    let t = tsm(&m);
    let c = op_counts(&t);
    assert_eq!(c.get("reduce_mean"), Some(&4), "{c:?}");
    assert_eq!(c.get("sqrt"), Some(&1), "{c:?}");
    assert!(!c.contains_key("_reshape"), "{c:?}");
    let got = run(&t, &[2, 3, 2, 5], &x);
    for (k, (gs, xs)) in got.chunks(10).zip(x.chunks(10)).enumerate() {
        let ch = k % 3;
        let mean = xs.iter().map(|&v| f64::from(v)).sum::<f64>() / 10.0;
        let var = xs
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / 10.0;
        for (g, &v) in gs.iter().zip(xs) {
            let w = f64::from(scale[ch]) * (f64::from(v) - mean) / (var + f64::from(eps)).sqrt()
                + f64::from(bias[ch]);
            assert!((f64::from(*g) - w).abs() <= 1e-5, "{g} want {w}");
        }
    }
    // no spatial axis to normalise over
    let m = one_node(
        "InstanceNormalization",
        &[2, 3],
        &[("s", &scale, &[3]), ("b", &bias, &[3])],
        &[2, 3],
        13,
        vec![],
    );
    let e = refusal(&m);
    assert!(
        e.contains("InstanceNormalization") && e.contains("rank-2"),
        "{e}"
    );
}

/// A linear `Resize` (opset 18) of x of `dims` by constant `scales`.
fn resize(
    dims: &[i64],
    scales: &[f32],
    out: &[i64],
    attrs: Vec<AttributeProto>,
) -> onnx_format::Model {
    let mut a = vec![attr::string("mode", "linear")];
    a.extend(attrs);
    let n = [scales.len() as i64];
    one_node(
        "Resize",
        dims,
        &[("", &[], &[]), ("scales", scales, &n)],
        out,
        18,
        a,
    )
}

#[test]
fn linear_resize_follows_each_coordinate_mode() {
    // ONNX's own examples: [[1, 2], [3, 4]] upsampled by 2
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let third = 1.0 / 3.0;
    #[rustfmt::skip]
    let cases: [(&str, [f32; 16]); 3] = [
        ("half_pixel", [
            1.0, 1.25, 1.75, 2.0,
            1.5, 1.75, 2.25, 2.5,
            2.5, 2.75, 3.25, 3.5,
            3.0, 3.25, 3.75, 4.0,
        ]),
        ("align_corners", [
            1.0, 1.0 + third, 2.0 - third, 2.0,
            1.0 + 2.0 * third, 2.0, 2.0 + third, 3.0 - third,
            2.0 + third, 3.0 - third, 3.0, 3.0 + third,
            3.0, 3.0 + third, 4.0 - third, 4.0,
        ]),
        ("asymmetric", [
            1.0, 1.5, 2.0, 2.0,
            2.0, 2.5, 3.0, 3.0,
            3.0, 3.5, 4.0, 4.0,
            3.0, 3.5, 4.0, 4.0,
        ]),
    ];
    for (mode, want) in cases {
        let m = resize(
            &[1, 1, 2, 2],
            &[1.0, 1.0, 2.0, 2.0],
            &[1, 1, 4, 4],
            vec![attr::string("coordinate_transformation_mode", mode)],
        );
        let t = tsm(&m);
        let c = op_counts(&t);
        assert_eq!(c.get("gather"), Some(&4), "{mode}: {c:?}");
        assert!(!c.contains_key("_resize2d"), "{mode}: {c:?}");
        let got = run(&t, &[1, 1, 2, 2], &x);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-6, "{mode}: {got:?}");
        }
    }
}

#[test]
fn linear_resize_crops_and_extrapolates() {
    // tf_crop_and_resize of [0, 1, 2, 3] (one axis) over roi 0.5..1.5:
    // source coordinates 1.5, 2.5, 3.5 (outside: −7), 4.5 (outside)
    let x = [0.0f32, 1.0, 2.0, 3.0];
    let m = one_node(
        "Resize",
        &[4],
        &[("roi", &[0.5, 1.5], &[2]), ("scales", &[1.0], &[1])],
        &[4],
        18,
        vec![
            attr::string("mode", "linear"),
            attr::string("coordinate_transformation_mode", "tf_crop_and_resize"),
            attr::float("extrapolation_value", -7.0),
        ],
    );
    let t = tsm(&m);
    assert_eq!(op_counts(&t).get("where"), Some(&1));
    assert_eq!(run(&t, &[4], &x), [1.5, 2.5, -7.0, -7.0]);
}

#[test]
fn linear_resize_refuses_what_two_taps_cannot_compute() {
    let m = resize(
        &[1, 1, 4, 4],
        &[1.0, 1.0, 0.5, 0.5],
        &[1, 1, 2, 2],
        vec![attr::int("antialias", 1)],
    );
    let e = refusal(&m);
    assert!(e.contains("Resize") && e.contains("antialias"), "{e}");
    let m = resize(
        &[1, 1, 2, 2],
        &[1.0, 1.0, 2.0, 2.0],
        &[1, 1, 4, 4],
        vec![attr::string(
            "coordinate_transformation_mode",
            "tf_half_pixel_for_nn",
        )],
    );
    let e = refusal(&m);
    assert!(
        e.contains("coordinate_transformation_mode tf_half_pixel_for_nn"),
        "{e}"
    );
}

#[test]
fn three_d_convolution_is_refused_by_name() {
    // TenniS has no 3-D convolution operator (conv2d, depthwise_conv2d,
    // transpose_conv2d only)
    let w = vec![0.5f32; 2 * 3 * 27];
    let m = one_node(
        "Conv",
        &[1, 3, 4, 4, 4],
        &[("w", &w, &[2, 3, 3, 3, 3])],
        &[1, 2, 2, 2, 2],
        13,
        vec![],
    );
    let e = refusal(&m);
    assert!(
        e.contains("Conv (a rank-5 input (TenniS's convolutions and pools are 2-D"),
        "{e}"
    );
}

/// ONNX's GRU in f64 (one direction, `linear_before_reset` `lbr`):
/// the state after each step. `w` [3H, I], `r` [3H, H], `b` [6H], gates
/// z, r, h.
#[allow(clippy::too_many_arguments)]
fn gru_ref(
    x: &[f32],
    (t, bt, i, h): (usize, usize, usize, usize),
    w: &[f32],
    r: &[f32],
    b: &[f32],
    lbr: bool,
    backwards: bool,
) -> Vec<Vec<f64>> {
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    let dot = |m: &[f32], row: usize, v: &[f64], n: usize| -> f64 {
        (0..n).map(|k| f64::from(m[row * n + k]) * v[k]).sum()
    };
    let mut state = vec![0.0f64; bt * h];
    let mut out = Vec::new();
    for s in 0..t {
        let ts = if backwards { t - 1 - s } else { s };
        let mut next = vec![0.0; bt * h];
        for n in 0..bt {
            let xv: Vec<f64> = (0..i)
                .map(|k| f64::from(x[(ts * bt + n) * i + k]))
                .collect();
            let hv = &state[n * h..(n + 1) * h];
            for j in 0..h {
                let gate = |g: usize| {
                    dot(w, g * h + j, &xv, i)
                        + f64::from(b[g * h + j])
                        + dot(r, g * h + j, hv, h)
                        + f64::from(b[(3 + g) * h + j])
                };
                let z = sig(gate(0));
                let rr: Vec<f64> = (0..h)
                    .map(|q| {
                        sig(dot(w, h + q, &xv, i)
                            + f64::from(b[h + q])
                            + dot(r, h + q, hv, h)
                            + f64::from(b[4 * h + q]))
                    })
                    .collect();
                let xh = dot(w, 2 * h + j, &xv, i) + f64::from(b[2 * h + j]);
                let rb = f64::from(b[5 * h + j]);
                let hh = if lbr {
                    rr[j] * (dot(r, 2 * h + j, hv, h) + rb)
                } else {
                    let rh: Vec<f64> = (0..h).map(|q| rr[q] * hv[q]).collect();
                    dot(r, 2 * h + j, &rh, h) + rb
                };
                let nn = (xh + hh).tanh();
                next[n * h + j] = (1.0 - z) * nn + z * hv[j];
            }
        }
        state = next;
        out.push(state.clone());
    }
    out
}

#[test]
fn gru_is_unrolled_and_matches_its_definition() {
    let (t, bt, i, h) = (4usize, 2usize, 3usize, 5usize);
    let w = values(3 * h * i, 21, 0.8);
    let r = values(3 * h * h, 22, 0.8);
    let b = values(6 * h, 23, 0.5);
    let x = values(t * bt * i, 24, 1.5);
    for (dir, lbr) in [("forward", false), ("reverse", true), ("forward", true)] {
        let m = one_node(
            "GRU",
            &[t as i64, bt as i64, i as i64],
            &[
                ("w", &w, &[1, 3 * h as i64, i as i64]),
                ("r", &r, &[1, 3 * h as i64, h as i64]),
                ("b", &b, &[1, 6 * h as i64]),
            ],
            &[t as i64, 1, bt as i64, h as i64],
            14,
            vec![
                attr::int("hidden_size", h as i64),
                attr::string("direction", dir),
                attr::int("linear_before_reset", i64::from(lbr)),
            ],
        );
        let tm = tsm(&m);
        let c = op_counts(&tm);
        // one gemm of every step's input, two per step
        assert_eq!(c.get("gemm"), Some(&(1 + 2 * t)), "{c:?}");
        assert_eq!(c.get("tanh"), Some(&t), "{c:?}");
        let got = run(&tm, &[t, bt, i], &x);
        let steps = gru_ref(&x, (t, bt, i, h), &w, &r, &b, lbr, dir == "reverse");
        // Y at time τ is the state after the step that read x[τ]
        for tau in 0..t {
            let s = if dir == "reverse" { t - 1 - tau } else { tau };
            for (k, want) in steps[s].iter().enumerate() {
                let g = f64::from(got[tau * bt * h + k]);
                assert!(
                    (g - want).abs() <= 2e-6,
                    "{dir} lbr {lbr} t {tau}: {g} want {want}"
                );
            }
        }
    }
}

#[test]
fn gru_batch_first_transposes_in_and_out() {
    let (t, bt, i, h) = (3usize, 2usize, 2usize, 4usize);
    let w = values(3 * h * i, 31, 0.8);
    let r = values(3 * h * h, 32, 0.8);
    let b = vec![0.0f32; 6 * h];
    let x = values(t * bt * i, 33, 1.5);
    // x as layout 1 sees it: [B, T, I]
    let mut xb = vec![0.0f32; x.len()];
    for ts in 0..t {
        for n in 0..bt {
            for k in 0..i {
                xb[(n * t + ts) * i + k] = x[(ts * bt + n) * i + k];
            }
        }
    }
    let m = one_node(
        "GRU",
        &[bt as i64, t as i64, i as i64],
        &[
            ("w", &w, &[1, 3 * h as i64, i as i64]),
            ("r", &r, &[1, 3 * h as i64, h as i64]),
        ],
        &[bt as i64, t as i64, 1, h as i64],
        14,
        vec![attr::int("hidden_size", h as i64), attr::int("layout", 1)],
    );
    let tm = tsm(&m);
    assert!(op_counts(&tm).contains_key("_transpose"));
    let got = run(&tm, &[bt, t, i], &xb);
    let steps = gru_ref(&x, (t, bt, i, h), &w, &r, &b, false, false);
    // Y [B, T, 1, H]
    for n in 0..bt {
        for ts in 0..t {
            for j in 0..h {
                let g = f64::from(got[(n * t + ts) * h + j]);
                let want = steps[ts][n * h + j];
                assert!((g - want).abs() <= 2e-6, "n {n} t {ts}: {g} want {want}");
            }
        }
    }
}

#[test]
fn nearest_resize_by_fractions_is_one_gather_per_axis() {
    // ONNX's example: [[1, 2, 3, 4], [5, 6, 7, 8]] scaled by 0.6
    let x: Vec<f32> = (1..=8).map(|v| v as f32).collect();
    let m = one_node(
        "Resize",
        &[1, 1, 2, 4],
        &[("", &[], &[]), ("scales", &[1.0, 1.0, 0.6, 0.6], &[4])],
        &[1, 1, 1, 2],
        13,
        vec![attr::string("mode", "nearest")],
    );
    let t = tsm(&m);
    let c = op_counts(&t);
    assert_eq!(c.get("gather"), Some(&2), "{c:?}");
    assert!(
        !c.contains_key("mul") && !c.contains_key("_resize2d"),
        "{c:?}"
    );
    assert_eq!(run(&t, &[1, 1, 2, 4], &x), [1.0, 3.0]);
    // [0, 1, 2, 3] to 7 (asymmetric: sources 0, 4/7, 8/7, ...), each
    // nearest_mode rounding those its own way
    let x = [0.0f32, 1.0, 2.0, 3.0];
    let want: [(&str, [f32; 7]); 4] = [
        ("round_prefer_floor", [0., 1., 1., 2., 2., 3., 3.]),
        ("round_prefer_ceil", [0., 1., 1., 2., 2., 3., 3.]),
        ("floor", [0., 0., 1., 1., 2., 2., 3.]),
        ("ceil", [0., 1., 2., 2., 3., 3., 3.]),
    ];
    for (nm, w) in want {
        let mut b = GraphBuilder::new("m");
        b.input("x", DataType::Float, &[Dim::Value(4)]);
        let sz = b.const_i64("sizes", &[7]);
        b.node(
            "Resize",
            "",
            &["x", "", "", &sz],
            &["y"],
            vec![
                attr::string("mode", "nearest"),
                attr::string("nearest_mode", nm),
                attr::string("coordinate_transformation_mode", "asymmetric"),
            ],
        );
        b.output("y", DataType::Float, &[Dim::Value(7)]);
        let mut opts = onnx_format::WriteOptions::default();
        opts.opset = 13;
        let mut bytes = Vec::new();
        onnx_format::write_model(&mut bytes, &b.finish(&opts)).unwrap();
        let m = onnx_format::Model::parse(&bytes).unwrap();
        assert_eq!(run(&tsm(&m), &[4], &x), w, "{nm}");
    }
}

#[test]
fn reduce_log_sum_exp_does_not_overflow() {
    // rows of 4 values up to ±1000 (exp overflows f32 above 88)
    let x = values(12, 41, 1000.0);
    let m = one_node(
        "ReduceLogSumExp",
        &[3, 4],
        &[],
        &[3],
        13,
        vec![attr::ints("axes", &[1]), attr::int("keepdims", 0)],
    );
    let t = tsm(&m);
    let c = op_counts(&t);
    assert!(c.contains_key("max") && c.contains_key("pow"), "{c:?}");
    let got = run(&t, &[3, 4], &x);
    assert_eq!(got.len(), 3);
    for (g, row) in got.iter().zip(x.chunks(4)) {
        let mx = row
            .iter()
            .fold(f64::NEG_INFINITY, |a, &v| a.max(f64::from(v)));
        let w = mx
            + row
                .iter()
                .map(|&v| (f64::from(v) - mx).exp())
                .sum::<f64>()
                .ln();
        assert!((f64::from(*g) - w).abs() <= 1e-6 * w.abs(), "{g} want {w}");
    }
    // ReduceLogSum: ln of the sum
    let x = [1.0f32, 2.0, 3.0, 4.0, 0.5, 0.25];
    let m = one_node("ReduceLogSum", &[2, 3], &[], &[1, 1], 13, vec![]);
    let got = run(&tsm(&m), &[2, 3], &x);
    assert!((f64::from(got[0]) - 10.75f64.ln()).abs() <= 1e-6, "{got:?}");
}

#[test]
fn global_pools_of_a_signal_or_volume_reduce_each_spatial_axis() {
    // N 2, C 3, length 4 (a 1-D signal, as Keras' GlobalAveragePooling1D
    // exports), and N 1, C 2, 2 × 2 × 3 (a volume)
    for (dims, out) in [
        (vec![2usize, 3, 4], vec![2i64, 3, 1]),
        (vec![1, 2, 2, 2, 3], vec![1, 2, 1, 1, 1]),
    ] {
        let n: usize = dims.iter().product();
        let per = n / (dims[0] * dims[1]);
        let x = values(n, 5, 3.0);
        let d: Vec<i64> = dims.iter().map(|&v| v as i64).collect();
        for (op, want_op) in [
            ("GlobalAveragePool", "reduce_mean"),
            ("GlobalMaxPool", "max"),
        ] {
            let m = one_node(op, &d, &[], &out, 13, vec![]);
            let t = tsm(&m);
            let c = op_counts(&t);
            assert_eq!(c.get(want_op), Some(&(dims.len() - 2)), "{op}: {c:?}");
            let got = run(&t, &dims, &x);
            assert_eq!(got.len(), dims[0] * dims[1]);
            for (g, xs) in got.iter().zip(x.chunks(per)) {
                let w = if op == "GlobalMaxPool" {
                    xs.iter().copied().fold(f32::NEG_INFINITY, f32::max)
                } else {
                    xs.iter().sum::<f32>() / per as f32
                };
                assert!((g - w).abs() <= 1e-5, "{op} {dims:?}: {g} want {w}");
            }
        }
    }
}
