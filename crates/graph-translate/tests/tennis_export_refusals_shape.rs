//! TenniS → ONNX: the padding, slicing and resizing operators the exporter
//! refuses, or refuses with some parameters, say why (and malformed
//! parameters are errors, not panics). What they refuse was checked in the
//! TenniS runtime (see `testdata/translate/export/tennis/README.md`).

mod common;

use bubble_module::{ModuleBuilder, Packed};
use common::{export_module, export_refusal, int};
use tensor_core::{DType, Tensor};

/// A parameter: int32 values of a shape.
fn ints(v: &[i32]) -> Packed<'static> {
    Tensor::from_values([v.len()], v).unwrap().into()
}

/// Exports a module of one `op` on a 4-D input `x0` and int32 constants
/// `consts`, and returns the export's error message.
fn refusal(
    op: &str,
    consts: &[(&[i32], &[usize])],
    params: Vec<(&str, Packed<'static>)>,
) -> String {
    export_refusal(&[1, 2, 6, 7], |b, x| {
        let mut ids = vec![x];
        for (k, (v, d)) in consts.iter().enumerate() {
            let t = Tensor::from_values(*d, v).unwrap();
            ids.push(b.constant(&format!("c{k}"), t).unwrap());
        }
        b.op_with(op, "y", &ids, params).unwrap()
    })
}

#[test]
fn cubic_and_unknown_resizes_are_refused_with_the_reason() {
    let size: &[i32] = &[-1, -1, 9, 11];
    let e = refusal("_resize2d", &[(size, &[4])], vec![("type", int(1))]);
    assert!(e.contains("type 1 (cubic)"), "{e}");
    let e = refusal("_resize2d", &[(size, &[4])], vec![("type", int(7))]);
    assert!(e.contains("resize type 7"), "{e}");
}

#[test]
fn a_resize2d_whose_axes_depend_on_the_input_shape_is_refused() {
    let e = refusal("_resize2d", &[(&[1, -1, 9, 11], &[4])], vec![]);
    assert!(
        e.contains("only sizes with two adjacent positive entries"),
        "{e}"
    );
}

#[test]
fn slices_tennis_clamps_differently_are_refused() {
    let e = refusal(
        "strided_slice",
        &[],
        vec![
            ("begin", ints(&[-1])),
            ("end", ints(&[0])),
            ("stride", ints(&[-1])),
        ],
    );
    assert!(e.contains("negative step"), "{e}");
    let e = refusal(
        "slice_v3",
        &[(&[0], &[1]), (&[2], &[1]), (&[-1], &[1])],
        vec![],
    );
    assert!(e.contains("negative axes"), "{e}");
}

#[test]
fn malformed_parameters_are_errors_not_panics() {
    // begin, end and stride of different lengths
    let e = refusal(
        "strided_slice",
        &[],
        vec![
            ("begin", ints(&[0, 1])),
            ("end", ints(&[2])),
            ("stride", ints(&[1])),
        ],
    );
    assert!(e.contains("begin, end and stride"), "{e}");
    // more sliced axes than the input has, every mask bit set
    let e = refusal(
        "strided_slice",
        &[],
        vec![
            ("begin", ints(&[0; 6])),
            ("end", ints(&[1; 6])),
            ("stride", ints(&[1; 6])),
            ("begin_mask", int(-1)),
            ("shrink_axis_mask", int(i32::MAX)),
        ],
    );
    assert!(e.contains("sliced axes"), "{e}");
    // a step of 0
    let e = refusal(
        "slice_v3",
        &[(&[0], &[1]), (&[2], &[1]), (&[0], &[1]), (&[0], &[1])],
        vec![],
    );
    assert!(e.contains("step of 0"), "{e}");
    // an odd number of padding values
    let e = refusal("pad", &[(&[1, 1, 1], &[3])], vec![]);
    assert!(e.contains("padding values"), "{e}");
    // a normalised axis past the input's rank
    let e = refusal("fused_batch_norm", &[], vec![("dim", int(9))]);
    assert!(e.contains("dim 9"), "{e}");
}

#[test]
fn a_shape_sliced_then_reshaped_to_has_a_known_rank() {
    // x0 [1, 2, 6, 7] reshaped to concat(shape(x0)[0:2], [42]): rank 3,
    // which ONNX declares; it follows from the slice's static length.
    for (op, params, consts) in [
        (
            "strided_slice",
            vec![("begin", ints(&[0])), ("end", ints(&[2]))],
            vec![],
        ),
        ("slice_v3", vec![], vec![[0], [2]]),
    ] {
        let mut b = ModuleBuilder::new();
        let x = b.input_with("x0", DType::F32, &[1, 2, 6, 7]).unwrap();
        let none: Vec<(&str, Packed<'static>)> = vec![];
        let s = b.op_with("_shape", "s", &[x], none.clone()).unwrap();
        let mut ins = vec![s];
        for (k, c) in consts.iter().enumerate() {
            let t = Tensor::from_values([1], c).unwrap();
            ins.push(b.constant(&format!("b{k}"), t).unwrap());
        }
        let t = b.op_with(op, "t", &ins, params).unwrap();
        let c = b
            .constant("c", Tensor::from_values([1], &[42i32]).unwrap())
            .unwrap();
        let u = b
            .op_with("concat", "u", &[t, c], vec![("dim", int(0))])
            .unwrap();
        let y = b.op_with("_reshape_v2", "y", &[x, u], none).unwrap();
        b.output(y).unwrap();
        let (model, _) = export_module(b).unwrap_or_else(|e| panic!("{op}: {e}"));
        let g = model.graph.as_ref().unwrap();
        let dims = g.output[0]
            .r#type
            .as_ref()
            .and_then(|t| t.value.as_ref())
            .map(|v| format!("{v:?}"))
            .unwrap();
        assert_eq!(dims.matches("Dimension {").count(), 3, "{op}: {dims}");
    }
}

#[test]
fn a_flatten_past_the_input_rank_is_refused_not_allocated() {
    // `dim` is the number of leading axes flatten keeps: TenniS refuses
    // more than the input has, and i32::MAX of them was a 16 GiB shape.
    let e = refusal("flatten", &[], vec![("dim", int(i32::MAX))]);
    assert!(e.contains("flatten") && e.contains("2147483647"), "{e}");
}

#[test]
fn a_gather_from_a_scalar_is_an_error_not_an_overflow() {
    let mut b = ModuleBuilder::new();
    let x = b
        .constant("x0", Tensor::from_values([], &[1.5f32]).unwrap())
        .unwrap();
    let i = b
        .constant("i", Tensor::from_values([1], &[0i32]).unwrap())
        .unwrap();
    let y = b
        .op_with("gather", "y", &[x, i], vec![("axis", int(0))])
        .unwrap();
    b.output(y).unwrap();
    let e = export_module(b).map(drop).unwrap_err();
    assert!(e.contains("gather") && e.contains("scalar"), "{e}");
}
