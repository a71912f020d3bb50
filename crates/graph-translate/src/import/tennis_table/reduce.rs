//! TenniS import rows of reductions (lowered in `tennis_ops_reduce`).

use super::super::tennis_ops_log as log;
use super::super::tennis_ops_reduce as red;
use super::{Entry, e};

/// The reduction rows.
pub(super) static REDUCE: &[Entry] = &[
    e(
        "ReduceMean",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "reduce_mean per axis, _reshape",
        "axes computed at run time",
        red::reduce_mean,
    ),
    e(
        "ReduceSum",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "reduce_sum per axis, _reshape",
        "axes computed at run time",
        red::reduce_sum,
    ),
    e(
        "ReduceMax",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "max per axis, _reshape",
        "axes computed at run time, empty axes",
        red::reduce_max,
    ),
    e(
        "ReduceMin",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "mul (by −1), max per axis, mul (by −1), _reshape (TenniS has no CPU min)",
        "axes computed at run time, empty axes",
        red::reduce_min,
    ),
    e(
        "ReduceLogSumExp",
        "axes (attribute or constant input), keepdims",
        "max per axis, sub, exp, reduce_sum per axis, Log's nodes, add (m + ln Σ exp(x − m)), _reshape",
        "axes computed at run time, noop_with_empty_axes, non-f32 inputs",
        log::reduce_log_sum_exp,
    ),
    e(
        "ReduceLogSum",
        "axes (attribute or constant input), keepdims",
        "reduce_sum per axis, Log's nodes, _reshape",
        "axes computed at run time, noop_with_empty_axes, non-f32 inputs",
        log::reduce_log_sum,
    ),
    e(
        "ArgMax",
        "axis, keepdims",
        "max, sub, argmax (int32 indices where ONNX has int64), _reshape; select_last_index 1: strided_slice (step −1) first, sub from L − 1",
        "empty or symbolic axes",
        red::arg_max,
    ),
    e(
        "ArgMin",
        "axis, keepdims",
        "mul (by −1), max, sub, argmax (int32 indices where ONNX has int64), _reshape; select_last_index 1: strided_slice (step −1) first, sub from L − 1",
        "empty or symbolic axes",
        red::arg_min,
    ),
];
