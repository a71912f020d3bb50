//! NNabla import rows of reductions and the reductions' relatives (lowered in `nnabla_ops_reduce`).

use super::super::nnabla_ops_reduce as red;
use super::{Entry, F32, e, since, until};

/// The reduction rows.
pub(super) static REDUCE: &[Entry] = &[
    e(
        "LpPool",
        "auto_pad, ceil_mode, kernel_shape, p, pads, strides",
        "Abs, PowScalar, AveragePooling (+ Pad), MulScalar, PowScalar",
        "dilations",
        red::lp_pool,
    ),
    e(
        "ReduceSum",
        "axes, keepdims, noop_with_empty_axes",
        "Sum",
        "axes computed at run time",
        red::reduce_sum,
    ),
    e(
        "ReduceMean",
        "axes, keepdims",
        "Mean",
        "axes computed at run time",
        red::reduce_mean,
    ),
    e(
        "ReduceMax",
        "axes, keepdims",
        "Transpose, Reshape, TopKData",
        "axes computed at run time",
        red::reduce_max,
    ),
    e(
        "ReduceMin",
        "axes, keepdims",
        "Transpose, Reshape, TopKData",
        "axes computed at run time",
        red::reduce_min,
    ),
    e(
        "ReduceProd",
        "axes, keepdims",
        "Prod",
        "axes computed at run time",
        red::reduce_prod,
    ),
    e(
        "ReduceL1",
        "axes, keepdims",
        "Abs, Sum",
        "axes computed at run time",
        red::reduce_l1,
    ),
    e(
        "ReduceL2",
        "axes, keepdims",
        "Mul2, Sum, PowScalar",
        "axes computed at run time",
        red::reduce_l2,
    ),
    e(
        "ReduceSumSquare",
        "axes, keepdims",
        "Mul2, Sum",
        "axes computed at run time",
        red::reduce_sum_square,
    ),
    e(
        "ReduceLogSum",
        "axes, keepdims",
        "Sum, Log",
        "axes computed at run time",
        red::reduce_log_sum,
    ),
    e(
        "ReduceLogSumExp",
        "axes, keepdims",
        "Exp, Sum, Log",
        "axes computed at run time",
        red::reduce_log_sum_exp,
    ),
    e(
        "ArgMax",
        "axis, keepdims, select_last_index",
        "Transpose, TopKData (with_index); Flip, RSubScalar (last index)",
        "",
        red::arg_max,
    ),
    e(
        "ArgMin",
        "axis, keepdims, select_last_index",
        "Transpose, TopKData (with_index); Flip, RSubScalar (last index)",
        "",
        red::arg_min,
    ),
    since(
        e(
            "CumSum",
            "axis (constant), exclusive, reverse",
            "CumSum",
            "",
            red::cumsum,
        ),
        11,
    ),
    since(
        e(
            "Resize",
            "mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a, \
             exclude_outside, extrapolation_value, axes, keep_aspect_ratio_policy, \
             roi/scales/sizes (constant)",
            "ONNXResize",
            "antialias, half_pixel_symmetric; opset 10: linear mode, scales below 1",
            red::resize,
        ),
        10,
    ),
    until(
        e(
            "Upsample",
            "mode=nearest, scales",
            "ONNXResize",
            "linear mode",
            red::upsample,
        ),
        9,
    ),
    since(
        e("Einsum", "equation", "Einsum", "ellipses", red::einsum),
        12,
    ),
    since(e("Det", "", "Reshape, BatchDet", F32, red::det), 11),
    since(e("EyeLike", "dtype, k", "EyeLike", "", red::eye_like), 9),
];
