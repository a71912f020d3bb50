//! ONNX → NNabla lowerings of the integer operators of dynamic quantisation
//! (their rows: `nnabla_table/quantization.rs`), what onnxruntime's
//! `quantize_dynamic` writes: `DynamicQuantizeLinear`, `MatMulInteger`,
//! `ConvInteger`.
//!
//! NNabla has no integer convolution or product: the integer operands
//! become f32 arrays holding `x - zero_point` exactly, and the f32
//! `Affine`/`BatchMatmul`/`Convolution` sums products of integers. Every
//! product and partial sum is an integer, exact in f32 while its magnitude
//! stays below 2^24; `K · max|a| · max|b| < 2^24` (K the inner length:
//! columns of A, or input channels / group × kernel size) guarantees it,
//! e.g. K ≤ 514 for uint8 activations against int8 weights. Beyond, a
//! sum is rounded as f32 sums are (relative error about K · 2^-24), which
//! the float rescaling that follows these operators keeps within f32
//! tolerance.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::fold;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{add_scalar, binary_vars, chain_to, mul_scalar};
use super::onnx_graph::{Const, Node, elem};
use super::table::lowerings;

/// numpy's type number of uint8 (NNabla's `QuantizeLinear` `dtype`).
const NPY_UINT8: i64 = 2;

/// Operand `i` of `node` (an 8-bit integer tensor) minus its zero point
/// (input `zi`) as an f32 value: folded to a constant when both are
/// constants, else `AddScalar` (a constant scalar zero point), `Sub2`
/// (any other) or `Identity` (no zero point).
fn shifted(
    cx: &mut Cx<'_>,
    node: &Node,
    i: usize,
    zi: usize,
    lead: Option<usize>,
) -> Result<String, LowerError> {
    let x = node.input(i).ok_or(LowerError::MissingInput { index: i })?;
    let e = cx.elem(x);
    fold::int8_operand(e, i)?;
    let zp = node.input(zi);
    if let Some(z) = zp
        && cx.elem(z) != e
    {
        return Err("a zero point of another type than its operand".into());
    }
    let zc = zp.and_then(|z| cx.konst(z).cloned());
    if let Some(xc) = cx.konst(x).cloned()
        && (zp.is_none() || zc.is_some())
    {
        let name = cx.fresh(x);
        let folded = fold::shift_by_zero_point(&xc, zc.as_ref(), lead)?;
        cx.set_const(&name, folded);
        return Ok(name);
    }
    let xv = cx.avar(node, i)?;
    let s = cx.shape(&xv)?;
    let y = match (zp, zc.as_ref().map(Const::values)) {
        (None, _) => {
            let y = cx.fresh(x);
            cx.emit("Identity", &[&xv], &[(&y, &s)], None);
            y
        }
        (Some(_), Some(v)) if v.len() == 1 => {
            let y = cx.fresh(x);
            cx.emit("AddScalar", &[&xv], &[(&y, &s)], add_scalar(-v[0]));
            y
        }
        (Some(z), _) => {
            let zv = cx.var(z)?;
            let zs = cx.shape(&zv)?;
            let zv = cx.reshape(&zv, &fold::zero_point_dims(&zs, lead))?;
            binary_vars(cx, "Sub2", &xv, &zv, None, elem::FLOAT)?
        }
    };
    if cx.shape(&y)? != s {
        return Err("a zero point that does not fit its operand".into());
    }
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

/// `node` as the float operator `op` on inputs `ins` (its attributes kept),
/// lowered by `lower`; its output is int32 (integers held exactly in f32).
fn as_float_op(
    cx: &mut Cx<'_>,
    node: &Node,
    op: &str,
    ins: Vec<String>,
    lower: fn(&mut Cx<'_>, &Node) -> Lowered,
) -> Lowered {
    let f = Node {
        op: op.into(),
        inputs: ins,
        ..node.clone()
    };
    lower(cx, &f)?;
    cx.set_elem(&node.outputs[0], elem::INT32);
    Ok(())
}

/// `MatMulInteger`: `(A - a_zero_point) @ (B - b_zero_point)` with the
/// float `MatMul` lowering (`Affine` for a constant B, whose shift is
/// folded into the weight). `a_zero_point` per row (`[M]`) is laid out as
/// `[M, 1]`.
pub(super) fn matmul_integer(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let a = shifted(cx, node, 0, 2, Some(2))?;
    let b = shifted(cx, node, 1, 3, None)?;
    as_float_op(cx, node, "MatMul", vec![a, b], super::nnabla_ops_nn::matmul)
}

/// `ConvInteger`: `Convolution` of `x - x_zero_point` with `w -
/// w_zero_point` (a per-output-channel zero point `[M]` laid out as
/// `[M, 1, .., 1]`), padded with zeros after the shift (the padding holds
/// the real zero, as onnxruntime pads with the zero point).
pub(super) fn conv_integer(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let r = cx.in_shape(node, 1)?.len();
    let x = shifted(cx, node, 0, 2, None)?;
    let w = shifted(cx, node, 1, 3, Some(r))?;
    as_float_op(cx, node, "Conv", vec![x, w], super::nnabla_ops_nn::conv)
}

/// `DynamicQuantizeLinear`, as onnxruntime computes it: the range
/// `[min(0, min x), max(0, max x)]` (NNabla's `Min`/`Max` over every axis;
/// their ±1e8 start values never reach past the clamp at 0), the scale
/// `range / 255` (`Div2`; 1 for an all-zero input, as onnxruntime), the
/// zero point `-min / scale` and `y` both NNabla `QuantizeLinear` to uint8
/// (divide, round half to even, saturate).
pub(super) fn dynamic_quantize_linear(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len();
    let one = vec![1i64; r];
    let axes: Vec<i64> = (0..r as i64).collect();
    let (lo, hi) = (cx.fresh(&x), cx.fresh(&x));
    let min = MinParameter {
        axes: axes.clone(),
        keep_dims: true,
        with_index: false,
        only_index: false,
    };
    let max = MaxParameter {
        axes,
        keep_dims: true,
        with_index: false,
        only_index: false,
    };
    cx.emit("Min", &[&x], &[(&lo, &one)], Some(P::MinParam(min)));
    cx.emit("Max", &[&x], &[(&hi, &one)], Some(P::MaxParam(max)));
    let (lo0, hi0) = (cx.fresh(&x), cx.fresh(&x));
    let min_s = P::MinimumScalarParam(MinimumScalarParameter { val: 0.0 });
    let max_s = P::MaximumScalarParam(MaximumScalarParameter { val: 0.0 });
    cx.emit("MinimumScalar", &[&lo], &[(&lo0, &one)], Some(min_s));
    cx.emit("MaximumScalar", &[&hi], &[(&hi0, &one)], Some(max_s));
    let span = binary_vars(cx, "Sub2", &hi0, &lo0, None, elem::FLOAT)?;
    let q = cx.param(&format!("{}_qrange", node.outputs[0]), &one, &[255.0])?;
    let raw = binary_vars(cx, "Div2", &span, &q, None, elem::FLOAT)?;
    let zero_span = cx.fresh(&x);
    cx.emit(
        "EqualScalar",
        &[&span],
        &[(&zero_span, &one)],
        Some(P::EqualScalarParam(EqualScalarParameter { val: 0.0 })),
    );
    let scale = binary_vars(cx, "Add2", &raw, &zero_span, None, elem::FLOAT)?;
    let neg_lo = cx.fresh(&x);
    cx.emit("MulScalar", &[&lo0], &[(&neg_lo, &one)], mul_scalar(-1.0));
    let zero = cx.param(&format!("{}_zero", node.outputs[0]), &one, &[0.0])?;
    let zp = cx.fresh(&x);
    let qp = || {
        Some(P::QuantizeLinearParam(QuantizeLinearParameter {
            round_mode: "HALF_TO_EVEN".into(),
            narrow_range: false,
            dtype: NPY_UINT8,
        }))
    };
    cx.emit(
        "QuantizeLinear",
        &[&neg_lo, &scale, &zero],
        &[(&zp, &one)],
        qp(),
    );
    cx.emit(
        "QuantizeLinear",
        &[&x, &scale, &zp],
        &[(&node.outputs[0], &s)],
        qp(),
    );
    cx.set_elem(&node.outputs[0], elem::UINT8);
    if node.has_output(1) {
        cx.reshape_to(&scale, &node.outputs[1], &[])?;
    }
    if node.has_output(2) {
        cx.reshape_to(&zp, &node.outputs[2], &[])?;
        cx.set_elem(&node.outputs[2], elem::UINT8);
    }
    Ok(())
}

/// `Round` (half to even): NNabla's `Round` rounds half away from zero,
/// so where `|x - Round(x)|` is exactly 0.5 (a tie; the difference is
/// exact in f32) the result is `2 · Round(x / 2)` instead (`x / 2` is
/// then no tie), chosen by `Where`.
pub(super) fn round(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let chain = |cx: &mut Cx<'_>, ty: &str, ins: &[&str], p: Option<P>| {
        let y = cx.fresh(&x);
        cx.emit(ty, ins, &[(&y, &s)], p);
        y
    };
    let t = chain(cx, "Round", &[&x], None);
    let d = chain(cx, "Sub2", &[&x, &t], None);
    let a = chain(cx, "Abs", &[&d], None);
    let tie = chain(
        cx,
        "EqualScalar",
        &[&a],
        Some(P::EqualScalarParam(EqualScalarParameter { val: 0.5 })),
    );
    let h = chain(cx, "MulScalar", &[&x], mul_scalar(0.5));
    let hr = chain(cx, "Round", &[&h], None);
    let even = chain(cx, "MulScalar", &[&hr], mul_scalar(2.0));
    cx.emit("Where", &[&tie, &even, &t], &[(&node.outputs[0], &s)], None);
    Ok(())
}

/// Whether ONNX element type `e` is an integer type (8 to 64 bits).
fn is_int(e: i32) -> bool {
    matches!(e, 2..=7 | 12 | 13)
}

/// The range an integer type saturates to here, as (lowest, highest):
/// 8- and 16-bit types both ends (exact in f32), unsigned 32- and 64-bit
/// types at 0 only, signed ones not at all (ONNX leaves out-of-range
/// values undefined; f32 holds the truncated value).
fn int_range(e: i32) -> (Option<f64>, Option<f64>) {
    match e {
        elem::UINT8 => (Some(0.0), Some(255.0)),
        3 => (Some(-128.0), Some(127.0)),
        4 => (Some(0.0), Some(65_535.0)),
        5 => (Some(-32_768.0), Some(32_767.0)),
        12 | 13 => (Some(0.0), None),
        _ => (None, None),
    }
}

lowerings! { Cx<'_>;
    /// `Cast` → [`cast_of`] to its `to`.
    cast(cx, node) => cast_of(cx, node, false);
    /// `CastLike` → [`cast_of`] to its second input's type.
    cast_like(cx, node) => cast_of(cx, node, true);
}

/// `Cast` (and `CastLike`, `like`: to its second input's type): to float from anything and between integer
/// types and booleans, `Identity` (NNabla holds them all in f32 with the
/// same values); to BOOL from a number, `x != 0`; from f32 to an integer
/// type, toward zero as C's conversion (onnxruntime's) does on in-range
/// values, saturated to the type's range where f32 holds its bounds
/// (out-of-range values are undefined in ONNX). Casts to double, float16
/// and bfloat16 are refused.
fn cast_of(cx: &mut Cx<'_>, node: &Node, like: bool) -> Lowered {
    let to = if like {
        cx.elem(node.input(1).ok_or(LowerError::Missing {
            what: "target_type",
        })?)
    } else {
        i32::try_from(node.int("to", 1)).unwrap_or(-1)
    };
    let x = cx.avar(node, 0)?;
    let from = cx.elem(&x);
    let out = &node.outputs[0];
    if to == elem::BOOL && from != elem::BOOL && (from == elem::FLOAT || is_int(from)) {
        let p = P::NotEqualScalarParam(NotEqualScalarParameter { val: 0.0 });
        chain_to(cx, &x, out, "NotEqualScalar", Some(p))?;
    } else if to == elem::FLOAT
        || (is_int(to) && (is_int(from) || from == elem::BOOL))
        || (to == elem::BOOL && from == elem::BOOL)
    {
        chain_to(cx, &x, out, "Identity", None)?;
    } else if is_int(to) && from == elem::FLOAT {
        float_to_int(cx, &x, out, to)?;
    } else {
        return Err(LowerError::Other(format!(
            "to={} from {} (NNabla holds f32; casts to double, float16 and bfloat16 would \
             round it)",
            onnx_format::dtype::onnx_name(to),
            onnx_format::dtype::onnx_name(from)
        )));
    }
    cx.set_elem(out, to);
    Ok(())
}

/// f32 `x` into `out` as integer type `to`: clamped to the type's range
/// (`MaximumScalar`, `MinimumScalar`; clamping to integer bounds commutes
/// with truncation), then truncated toward zero: `Floor` where the value
/// cannot be negative, else `Sign(x) · Floor(|x|)`. Every step is exact.
fn float_to_int(cx: &mut Cx<'_>, x: &str, out: &str, to: i32) -> Lowered {
    let s = cx.shape(x)?;
    let (lo, hi) = int_range(to);
    let step = |cx: &mut Cx<'_>, ins: &[&str], ty: &str, p: Option<P>| {
        let y = cx.fresh(x);
        cx.emit(ty, ins, &[(&y, &s)], p);
        cx.set_elem(&y, elem::FLOAT);
        y
    };
    let mut v = x.to_string();
    if let Some(lo) = lo {
        let p = P::MaximumScalarParam(MaximumScalarParameter { val: lo });
        v = step(cx, &[&v], "MaximumScalar", Some(p));
    }
    if let Some(hi) = hi {
        let p = P::MinimumScalarParam(MinimumScalarParameter { val: hi });
        v = step(cx, &[&v], "MinimumScalar", Some(p));
    }
    if lo == Some(0.0) {
        cx.emit("Floor", &[&v], &[(out, &s)], None);
        return Ok(());
    }
    let sign = P::SignParam(SignParameter { alpha: 0.0 });
    let sg = step(cx, &[&v], "Sign", Some(sign));
    let a = step(cx, &[&v], "Abs", None);
    let f = step(cx, &[&a], "Floor", None);
    cx.emit("Mul2", &[&sg, &f], &[(out, &s)], None);
    Ok(())
}
