//! TenniS → ONNX: `_resize2d` on axes other than the last two, in
//! particular an NHWC image (size `[-1, H, W, -1]`), as the SeetaFace6
//! eye-state and face-quality modules resize. `testdata/translate/resize2d_axes/`
//! holds the modules (built here; `REGENERATE=1` rewrites them and their
//! inputs), what the real TenniS runtime computed from them
//! (`NAME.out.npz`) and what onnxruntime computed from our export
//! (`NAME.ort.npz`; see the README there). Each module must be the one
//! TenniS ran; the export, run in tract-onnx, and onnxruntime's recorded
//! run must match TenniS.

use std::path::{Path, PathBuf};

use bubble_module::{Module, ModuleBuilder, Packed, WriteOptions};
use tensor_core::{DType, Tensor};

mod common;
use common::npz::{read_npz, write_npz};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate/resize2d_axes")
}

/// The cases: name, input shape, size, resize type.
const CASES: &[(&str, &[usize], &[i32], i32)] = &[
    ("nhwc_linear_up", &[1, 6, 7, 3], &[-1, 9, 11, -1], 0),
    ("nhwc_linear_down", &[2, 9, 8, 2], &[-1, 4, 5, -1], 0),
    ("nhwc_nearest_up", &[1, 6, 4, 3], &[-1, 9, 6, -1], 2),
    ("nhwc_hard_up", &[1, 5, 6, 2], &[-1, 8, 9, -1], 3),
    ("rank5_middle", &[2, 3, 5, 4, 2], &[-1, -1, 7, 6, -1], 0),
    ("rank3_first", &[5, 4, 3], &[8, 6, -1], 2),
];

/// Deterministic values in [-2, 2).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0
        })
        .collect()
}

/// The module of case `k` (one `_resize2d` of input `x0` to a constant
/// size) and its input.
fn module(k: usize) -> (Vec<u8>, Tensor<'static>) {
    let (_, shape, size, ty) = CASES[k];
    let mut b = ModuleBuilder::new();
    let s: Vec<i32> = shape.iter().map(|&v| v as i32).collect();
    let x = b.input_with("x0", DType::F32, &s).unwrap();
    let c = b
        .constant("c1", Tensor::from_values([size.len()], size).unwrap())
        .unwrap();
    let t: Packed<'static> = Tensor::from_values([], &[ty]).unwrap().into();
    let y = b
        .op_with("_resize2d", "y", &[x, c], vec![("type", t)])
        .unwrap();
    b.output(y).unwrap();
    let tsm = b
        .build()
        .unwrap()
        .to_bytes(&WriteOptions::default())
        .unwrap();
    let n = shape.iter().product();
    let input = Tensor::from_values(shape, &values(n, 31 + k as u64)).unwrap();
    (tsm, input)
}

fn rel_error(got: &[f32], want: &[f32]) -> f64 {
    let scale = want.iter().fold(1e-6f64, |m, &w| m.max(f64::from(w).abs()));
    let worst = got.iter().zip(want).fold(0f64, |m, (&g, &w)| {
        m.max((f64::from(g) - f64::from(w)).abs())
    });
    worst / scale
}

/// The export of case `name` run in tract-onnx on `x`.
fn run_in_tract(name: &str, x: &common::npz::Arrays) -> (Vec<usize>, Vec<f32>) {
    let module = Module::open(dir().join(format!("{name}.tsm"))).unwrap();
    let (model, _) = common::export_read(&module).unwrap();
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &model).unwrap();
    let got = common::run_onnx(&bytes, x).unwrap();
    let g = got[0].cast_to::<f32>().unwrap();
    (g.shape().to_vec(), g.as_slice::<f32>().unwrap().to_vec())
}

#[test]
fn resizes_on_any_two_adjacent_axes_export_and_match_the_tennis_runtime() {
    let regenerate = std::env::var_os("REGENERATE").is_some();
    for (k, &(name, shape, size, _)) in CASES.iter().enumerate() {
        let (tsm, input) = module(k);
        let p = dir().join(format!("{name}.tsm"));
        if regenerate {
            std::fs::write(&p, &tsm).unwrap();
            write_npz(
                &dir().join(format!("{name}.in.npz")),
                &[("x0".into(), input)],
            )
            .unwrap();
            continue;
        }
        assert_eq!(
            std::fs::read(&p).unwrap(),
            tsm,
            "{name}: not the module TenniS ran"
        );
        let ins = read_npz(&dir().join(format!("{name}.in.npz"))).unwrap();
        let want_dims: Vec<usize> = shape
            .iter()
            .zip(size)
            .map(|(&d, &s)| if s < 0 { d } else { s as usize })
            .collect();
        let tennis = read_npz(&dir().join(format!("{name}.out.npz"))).unwrap();
        let (dims, want) = &tennis["out_0"];
        assert_eq!(dims, &want_dims, "{name}: TenniS's output shape");
        let (dims, got) = run_in_tract(name, &ins);
        assert_eq!(dims, want_dims, "{name}");
        let e = rel_error(&got, want);
        assert!(e <= 1e-5, "{name}: tract {e}");
        let ort = read_npz(&dir().join(format!("{name}.ort.npz"))).unwrap();
        let e = rel_error(&ort["y"].1, want);
        assert!(e <= 1e-5, "{name}: onnxruntime {e}");
    }
    assert!(
        !regenerate,
        "regenerated the modules and inputs: run TenniS on them"
    );
}
