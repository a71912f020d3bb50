//! TenniS import rows of layers: convolutions, pooling, matrix products, normalisation (lowered in `tennis_ops_nn`).

use super::super::tennis_ops_nn as nn;
use super::{Entry, F32, e};

/// The layer rows.
pub(super) static LAYERS: &[Entry] = &[
    e(
        "Conv",
        "auto_pad, dilations, group, kernel_shape, pads, strides",
        "conv2d or depthwise_conv2d, add_bias; other groups: strided_slice, conv2d per group, concat",
        "1-D/3-D",
        nn::conv,
    ),
    e(
        "MaxPool",
        "auto_pad, ceil_mode, kernel_shape, pads, strides",
        "pooling2d (type 0); strided_slice first where floor rounding leaves cells in no window",
        "1-D/3-D, dilations, Indices output",
        super::super::tennis_ops_reduce::max_pool,
    ),
    e(
        "AveragePool",
        "auto_pad, ceil_mode, count_include_pad, kernel_shape, pads, strides",
        "pooling2d (type 1; padding_type 0 or 3); strided_slice first where floor rounding leaves cells in no window",
        "1-D/3-D",
        super::super::tennis_ops_reduce::average_pool,
    ),
    e(
        "GlobalAveragePool",
        "",
        "global_pooling2d (type 1); other ranks: reduce_mean per spatial axis",
        "symbolic spatial dimensions",
        super::super::tennis_ops_reduce::global_average_pool,
    ),
    e(
        "GlobalMaxPool",
        "",
        "global_pooling2d (type 0); other ranks: max per spatial axis",
        "symbolic spatial dimensions",
        super::super::tennis_ops_reduce::global_max_pool,
    ),
    e("Gemm", "alpha, beta, transA, transB", "gemm", F32, nn::gemm),
    e(
        "MatMul",
        "",
        "gemm (_reshape around it; batched B: strided_slice, gemm per batch, concat)",
        "more than 256 batches, symbolic dimensions",
        nn::matmul,
    ),
    e(
        "ConvTranspose",
        "dilations, kernel_shape, pads, strides, auto_pad NOTSET/VALID, output_shape",
        "transpose_conv2d, add_bias",
        "groups, output_padding, SAME auto-padding, 1-D/3-D",
        nn::conv_transpose,
    ),
    e(
        "LRN",
        "alpha, beta, bias, size",
        "mul, conv2d (channel-window sum), mul, add, pow, div",
        "inputs other than NCHW, more than 4096 channels",
        nn::lrn,
    ),
    e(
        "InstanceNormalization",
        "epsilon; scale, B (constant or computed at run time)",
        "reduce_mean per spatial axis, sub, mul, reduce_mean per spatial axis, add, sqrt, div, mul, add (scale and B shaped [C, 1, …])",
        "inputs of rank below 3, empty spatial axes",
        super::super::tennis_ops_act::instance_norm,
    ),
    e(
        "BatchNormalization",
        "epsilon, spatial (before opset 9)",
        "batch_norm, batch_scale",
        "training mode; spatial 0",
        nn::batch_norm,
    ),
];
