//! The ONNX → NNabla operator table: one entry per ONNX operator with its
//! opset range, the attributes (and constant inputs) it reads, the NNabla
//! functions it becomes, what it refuses, and its lowering. The table
//! drives dispatch ([`entry`]), the support table
//! ([`super::support_table_markdown`]) and the per-operator tests.

use super::SupportRow;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_attention as attn;
use super::nnabla_ops_elementwise as ew;
use super::nnabla_ops_gru::GRU_TABLE;
use super::nnabla_ops_index as ix;
use super::nnabla_ops_loss as loss;
use super::nnabla_ops_nn as nn;
use super::nnabla_ops_norm as norm;
use super::nnabla_ops_quant::QUANT_TABLE;
use super::nnabla_ops_reduce as red;
use super::nnabla_ops_rnn as rnn;
use super::nnabla_ops_shape as sh;
use super::onnx_graph::Node;
use super::table;
pub(super) use super::table::{since, until};

/// A lowering of the NNabla import (opaque outside the crate).
#[derive(Clone, Copy)]
pub struct Lower(pub(crate) fn(&mut Cx<'_>, &Node) -> Lowered);

/// One operator of the table.
pub type Entry = table::Entry<Lower>;

/// Shorthand for a row with the full opset range.
pub(super) const fn e(
    op: &'static str,
    attrs: &'static str,
    emits: &'static str,
    notes: &'static str,
    lower: fn(&mut Cx<'_>, &Node) -> Lowered,
) -> Entry {
    table::lowered(op, attrs, emits, notes, Lower(lower))
}

const F32: &str = "non-f32 inputs";
const ACT: fn(&mut Cx<'_>, &Node) -> Lowered = ew::activation;

/// The table.
pub static TABLE: &[Entry] = &[
    // Activations and element-wise math.
    e("Relu", "", "ReLU", F32, ACT),
    e("LeakyRelu", "alpha", "LeakyReLU", F32, ACT),
    e("Elu", "alpha", "ELU", F32, ACT),
    e("Selu", "alpha, gamma", "SELU", F32, ACT),
    since(e("Celu", "alpha", "MulScalar, ELU", F32, ACT), 12),
    e(
        "PRelu",
        "slope (broadcast)",
        "MaximumScalar, MinimumScalar, Mul2, Add2",
        F32,
        ew::prelu,
    ),
    e("ThresholdedRelu", "alpha", "GreaterScalar, Mul2", F32, ACT),
    e(
        "HardSigmoid",
        "alpha, beta",
        "MulScalar, AddScalar, MaximumScalar, MinimumScalar",
        F32,
        ACT,
    ),
    since(
        e(
            "HardSwish",
            "",
            "MulScalar, AddScalar, MaximumScalar, MinimumScalar, Mul2",
            F32,
            ACT,
        ),
        14,
    ),
    e("Sigmoid", "", "Sigmoid", F32, ACT),
    e("Tanh", "", "Tanh", F32, ACT),
    e("Softplus", "", "SoftPlus", F32, ACT),
    e("Softsign", "", "SoftSign", F32, ACT),
    since(e("Mish", "", "Mish", F32, ACT), 18),
    since(
        e(
            "Gelu",
            "approximate",
            "Erf, MulScalar, AddScalar, Mul2 (none); GELU (tanh)",
            F32,
            ACT,
        ),
        20,
    ),
    e("Exp", "", "Exp", F32, ACT),
    e("Log", "", "Log", F32, ACT),
    e("Abs", "", "Abs", F32, ACT),
    e("Neg", "", "MulScalar", F32, ACT),
    e("Reciprocal", "", "RDivScalar", F32, ACT),
    e("Sqrt", "", "PowScalar", F32, ACT),
    e("Floor", "", "Floor", F32, ACT),
    e("Ceil", "", "Ceil", F32, ACT),
    e("Sign", "", "Sign", F32, ACT),
    e("Sin", "", "Sin", F32, ACT),
    e("Cos", "", "Cos", F32, ACT),
    e("Tan", "", "Tan", F32, ACT),
    e("Asin", "", "ASin", F32, ACT),
    e("Acos", "", "ACos", F32, ACT),
    e("Atan", "", "ATan", F32, ACT),
    e("Sinh", "", "Sinh", F32, ACT),
    e("Cosh", "", "Cosh", F32, ACT),
    e("Asinh", "", "ASinh", F32, ACT),
    e("Acosh", "", "ACosh", F32, ACT),
    e("Atanh", "", "ATanh", F32, ACT),
    e("Erf", "", "Erf", F32, ACT),
    e("IsNaN", "", "IsNaN", F32, ACT),
    since(
        e(
            "IsInf",
            "detect_positive, detect_negative",
            "IsInf",
            "one-sided detection",
            ACT,
        ),
        10,
    ),
    e(
        "Clip",
        "min, max",
        "MaximumScalar, MinimumScalar; Maximum2, Minimum2 (run-time bounds)",
        "",
        ew::clip,
    ),
    // Arithmetic with numpy broadcasting.
    e("Add", "", "Add2 / AddScalar", F32, ew::arith),
    e("Sub", "", "Sub2 / AddScalar / RSubScalar", F32, ew::arith),
    e("Mul", "", "Mul2 / MulScalar", F32, ew::arith),
    e("Div", "", "Div2 / RDivScalar", F32, ew::arith),
    e("Pow", "", "Pow2 / PowScalar / RPowScalar", F32, ew::arith),
    e("Sum", "", "Add2", F32, ew::variadic),
    e("Mean", "", "Add2, MulScalar", F32, ew::variadic),
    e("Max", "", "Maximum2", F32, ew::variadic),
    e("Min", "", "Minimum2", F32, ew::variadic),
    e("Equal", "", "Equal", "double inputs", ew::compare),
    e("Greater", "", "Greater", "double inputs", ew::compare),
    e("Less", "", "Less", "double inputs", ew::compare),
    since(
        e(
            "GreaterOrEqual",
            "",
            "GreaterEqual",
            "double inputs",
            ew::compare,
        ),
        12,
    ),
    since(
        e("LessOrEqual", "", "LessEqual", "double inputs", ew::compare),
        12,
    ),
    e("And", "", "LogicalAnd", "", ew::logical),
    e("Or", "", "LogicalOr", "", ew::logical),
    e("Xor", "", "LogicalXor", "", ew::logical),
    e("Not", "", "LogicalNot", "", ew::not),
    since(
        e("Where", "", "Broadcast, Where", "double inputs", ew::where_),
        9,
    ),
    // Shape and data movement.
    e(
        "Reshape",
        "shape (constant), allowzero",
        "Reshape",
        "shape computed at run time",
        sh::reshape,
    ),
    e("Flatten", "axis", "Reshape", "", sh::flatten),
    e(
        "Squeeze",
        "axes",
        "Reshape",
        "axes computed at run time",
        sh::squeeze,
    ),
    e(
        "Unsqueeze",
        "axes",
        "Reshape",
        "axes computed at run time",
        sh::squeeze,
    ),
    e(
        "Transpose",
        "perm",
        "Transpose",
        "moving the symbolic batch",
        sh::transpose,
    ),
    e("Concat", "axis", "Concatenate", "", sh::concat),
    e(
        "Split",
        "axis, split, num_outputs",
        "Slice",
        "sizes computed at run time",
        sh::split,
    ),
    e(
        "Slice",
        "starts, ends, axes, steps (constant)",
        "Slice, Flip",
        "empty results",
        sh::slice,
    ),
    since(
        e(
            "Expand",
            "shape (constant)",
            "Reshape, Broadcast",
            "shape computed at run time",
            sh::expand,
        ),
        8,
    ),
    e(
        "Tile",
        "repeats (constant)",
        "Tile",
        "repeats computed at run time",
        sh::tile,
    ),
    e(
        "Gather",
        "axis, indices",
        "Gather / Slice, Reshape; LessScalar, MulScalar, Add2 (run-time indices)",
        "symbolic batch with run-time indices",
        sh::gather,
    ),
    since(
        e(
            "GatherElements",
            "axis",
            "Concatenate, GatherNd (+ LessScalar, MulScalar, Add2 for run-time indices)",
            "symbolic batch",
            ix::gather_elements,
        ),
        11,
    ),
    since(
        e(
            "ScatterElements",
            "axis, reduction (none, add)",
            "MulScalar, Concatenate, ScatterNd / ScatterAdd",
            "reduction mul, max, min",
            ix::scatter_elements,
        ),
        11,
    ),
    until(
        since(
            e(
                "Scatter",
                "axis",
                "MulScalar, Concatenate, ScatterNd",
                "",
                ix::scatter_elements,
            ),
            9,
        ),
        10,
    ),
    since(
        e(
            "GatherND",
            "batch_dims=0",
            "Transpose, GatherNd (+ LessScalar, Mul2, Add2 for run-time indices)",
            "batch_dims",
            ix::gather_nd,
        ),
        11,
    ),
    since(
        e(
            "ReverseSequence",
            "batch_axis, time_axis",
            "Less, AddScalar, Sub2, Where, Concatenate, GatherNd",
            "",
            ix::reverse_sequence,
        ),
        10,
    ),
    since(
        e(
            "GridSample",
            "mode (linear), padding_mode, align_corners",
            "WarpByGrid",
            "nearest and cubic modes",
            ix::grid_sample,
        ),
        16,
    ),
    e(
        "Hardmax",
        "axis",
        "Transpose, TopKData (with_index), OneHot (+ Reshape before opset 13)",
        "symbolic batch",
        ix::hardmax,
    ),
    since(
        e(
            "ScatterND",
            "reduction (none, add)",
            "MulScalar, Transpose, ScatterNd",
            "reduction mul, max, min",
            ix::scatter_nd,
        ),
        11,
    ),
    e(
        "Pad",
        "mode (constant, reflect, edge), pads, constant_value, axes",
        "Pad (+ Where for a run-time value)",
        "wrap mode, negative pads",
        sh::pad,
    ),
    e("Identity", "", "Identity", "", sh::identity),
    e(
        "Dropout",
        "mask output (ones at inference)",
        "Identity",
        "training",
        sh::identity,
    ),
    e(
        "Cast",
        "to",
        "Identity, NotEqualScalar (to BOOL)",
        "float → integer casts",
        sh::cast,
    ),
    e(
        "DepthToSpace",
        "blocksize, mode",
        "Reshape, Transpose",
        "",
        sh::depth_space,
    ),
    e(
        "SpaceToDepth",
        "blocksize",
        "Reshape, Transpose",
        "",
        sh::depth_space,
    ),
    since(
        e(
            "Trilu",
            "upper, k",
            "Trilu; GreaterEqual/LessEqual, Where (run-time k)",
            "empty inputs with run-time k",
            sh::trilu,
        ),
        14,
    ),
    // Layers.
    e(
        "Conv",
        "auto_pad, dilations, group, kernel_shape, pads, strides",
        "Convolution (+ Pad)",
        F32,
        nn::conv,
    ),
    e(
        "ConvTranspose",
        "auto_pad, dilations, group, output_padding, output_shape, pads, strides",
        "Deconvolution",
        "asymmetric pads",
        nn::conv_transpose,
    ),
    e(
        "MaxPool",
        "auto_pad, ceil_mode, dilations, kernel_shape, pads, strides",
        "MaxPooling (+ Pad -inf); Slice, Maximum2 (dilations)",
        "Indices output, dilations with padding",
        nn::pool,
    ),
    e(
        "AveragePool",
        "auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides",
        "AveragePooling (+ Pad); SumPooling, Constant, Div2 for ceil_mode and asymmetric pads; Convolution (dilations)",
        "1-D ceil_mode / asymmetric pads excluding padding, dilations with padding",
        nn::pool,
    ),
    e(
        "LpPool",
        "auto_pad, ceil_mode, kernel_shape, p, pads, strides",
        "Abs, PowScalar, AveragePooling (+ Pad), MulScalar, PowScalar",
        "dilations",
        red::lp_pool,
    ),
    e("GlobalAveragePool", "", "Mean", "", nn::global_pool),
    e(
        "GlobalMaxPool",
        "",
        "Reshape, TopKData",
        "",
        nn::global_pool,
    ),
    e(
        "BatchNormalization",
        "epsilon, momentum",
        "BatchNormalization",
        "training mode",
        norm::batch_norm,
    ),
    e(
        "InstanceNormalization",
        "epsilon",
        "InstanceNormalization",
        "",
        norm::instance_norm,
    ),
    since(
        e(
            "LayerNormalization",
            "axis, epsilon",
            "LayerNormalization",
            "",
            norm::layer_norm,
        ),
        17,
    ),
    e(
        "Gemm",
        "alpha, beta, transA, transB",
        "Affine / BatchMatmul, Add2",
        "",
        nn::gemm,
    ),
    e(
        "MatMul",
        "",
        "Affine / BatchMatmul, Broadcast",
        "",
        nn::matmul,
    ),
    e(
        "RNN",
        "activations (Tanh, Relu), direction, hidden_size, layout",
        "Concatenate, Sum, RNN, Flip (reverse), Reshape, Transpose",
        "clip, sequence_lens, other activations",
        rnn::recurrent,
    ),
    e(
        "LSTM",
        "direction, hidden_size, layout",
        "Reshape, Concatenate, Gather (gate order), Sum, LSTM, Flip (reverse), Transpose",
        "clip, sequence_lens, peepholes, input_forget, other activations",
        rnn::recurrent,
    ),
    since(
        e(
            "NegativeLogLikelihoodLoss",
            "reduction, ignore_index, weight",
            "NotEqualScalar, Mul2, Concatenate, GatherNd, Gather, MulScalar, Sum/Mean, Div2",
            "symbolic dimensions",
            loss::nll_loss,
        ),
        12,
    ),
    since(
        e(
            "SoftmaxCrossEntropyLoss",
            "reduction, ignore_index, weights, log_prob output",
            "LogSoftmax, then as NegativeLogLikelihoodLoss",
            "symbolic dimensions",
            loss::softmax_cross_entropy,
        ),
        12,
    ),
    since(
        e(
            "Attention",
            "is_causal, scale, softcap, q_num_heads, kv_num_heads, left/right_window_size, qk_matmul_output_mode, attn_mask (bool or additive, padded), past_key/past_value, nonpad_kv_seqlen",
            "Reshape, Transpose, Concatenate (cache), Broadcast (grouped heads), MulScalar, BatchMatmul, Tanh, Add2, Softmax, TopKData, LessScalar, Where",
            "softmax_precision other than FLOAT",
            attn::attention,
        ),
        23,
    ),
    since(
        e(
            "RotaryEmbedding",
            "interleaved, rotary_embedding_dim, num_heads, position_ids",
            "Transpose/Reshape, Gather (position_ids), Slice, Mul2, Sub2, Add2, Concatenate",
            "symbolic dimensions",
            attn::rotary_embedding,
        ),
        23,
    ),
    since(
        e(
            "CausalConvWithState",
            "activation (none, silu, swish), bias, past_state",
            "Concatenate, Convolution (depthwise), Sigmoid, Mul2, Slice",
            "an empty present_state (kernel size 1)",
            rnn::causal_conv,
        ),
        27,
    ),
    since(
        e(
            "LinearAttention",
            "update_rule, q_num_heads, kv_num_heads, scale, past_state, decay, beta",
            "Reshape, Transpose, Slice, Exp, Mul2, Sub2, Add2, BatchMatmul, Broadcast, MulScalar, Concatenate (unrolled over the sequence)",
            "sequences longer than 256",
            attn::linear_attention,
        ),
        27,
    ),
    e("Softmax", "axis", "Softmax", "", norm::softmax),
    e("LogSoftmax", "axis", "LogSoftmax", "", norm::softmax),
    e(
        "ReduceSum",
        "axes, keepdims, noop_with_empty_axes",
        "Sum",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceMean",
        "axes, keepdims",
        "Mean",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceMax",
        "axes, keepdims",
        "Transpose, Reshape, TopKData",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceMin",
        "axes, keepdims",
        "Transpose, Reshape, TopKData",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceProd",
        "axes, keepdims",
        "Prod",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceL1",
        "axes, keepdims",
        "Abs, Sum",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceL2",
        "axes, keepdims",
        "Mul2, Sum, PowScalar",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceSumSquare",
        "axes, keepdims",
        "Mul2, Sum",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceLogSum",
        "axes, keepdims",
        "Sum, Log",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceLogSumExp",
        "axes, keepdims",
        "Exp, Sum, Log",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ArgMax",
        "axis, keepdims, select_last_index",
        "Transpose, TopKData (with_index); Flip, RSubScalar (last index)",
        "",
        red::arg,
    ),
    e(
        "ArgMin",
        "axis, keepdims, select_last_index",
        "Transpose, TopKData (with_index); Flip, RSubScalar (last index)",
        "",
        red::arg,
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
            red::resize,
        ),
        9,
    ),
    since(
        e(
            "CastLike",
            "target_type's type",
            "Identity",
            "float → integer/bool casts",
            sh::cast,
        ),
        15,
    ),
    since(
        e("Swish", "alpha", "MulScalar, Sigmoid, Mul2", F32, ew::misc),
        24,
    ),
    since(
        e(
            "Shrink",
            "lambd, bias",
            "GreaterScalar, LessScalar, AddScalar, Mul2, Add2",
            F32,
            ew::misc,
        ),
        9,
    ),
    since(
        e(
            "Mod",
            "fmod",
            "Mod2; LessScalar, NotEqualScalar, LogicalXor, LogicalAnd, Add2, Where (fmod=0)",
            "integer inputs",
            ew::misc,
        ),
        10,
    ),
    since(
        e(
            "RMSNormalization",
            "axis, epsilon",
            "Mul2, Mean, AddScalar, PowScalar",
            F32,
            norm::rms_norm,
        ),
        23,
    ),
    since(
        e(
            "GroupNormalization",
            "num_groups, epsilon",
            "GroupNormalization",
            "per-group scale computed at run time",
            norm::group_norm,
        ),
        18,
    ),
    e(
        "LpNormalization",
        "axis, p (1 or 2)",
        "Abs/Mul2, Sum, PowScalar, Div2",
        "p other than 1, 2",
        norm::lp_norm,
    ),
    since(
        e(
            "MeanVarianceNormalization",
            "axes",
            "Mean, Sub2, Mul2, AddScalar, PowScalar",
            F32,
            norm::mvn,
        ),
        9,
    ),
    since(
        e("Einsum", "equation", "Einsum", "ellipses", red::einsum),
        12,
    ),
    since(e("Det", "", "Reshape, BatchDet", F32, red::det), 11),
    since(e("EyeLike", "dtype, k", "EyeLike", "", red::eye_like), 9),
    e(
        "ConstantOfShape",
        "value, shape (constant)",
        "Constant (folded when small)",
        "integer values f32 cannot hold",
        sh::constant_of_shape,
    ),
    e(
        "LRN",
        "alpha, beta, bias, size",
        "Mul2, Reshape, Pad, SumPooling, MulScalar, AddScalar, PowScalar",
        F32,
        nn::lrn,
    ),
];

/// The tables: [`TABLE`] and its continuations in the lowering modules.
const TABLES: &[&[Entry]] = &[TABLE, QUANT_TABLE, GRU_TABLE];

/// The entry for ONNX operator `op`.
pub fn entry(op: &str) -> Option<&'static Entry> {
    table::lowering(TABLES, op)
}

/// The support-table rows, sorted by operator.
pub fn support_rows() -> Vec<SupportRow> {
    table::support_rows(TABLES)
}
