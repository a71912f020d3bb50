//! NNabla import rows of layers: convolutions, pooling, matrix products, LRN (lowered in `nnabla_ops_nn`; pooling rows in `nnabla_ops_pool`).

use super::super::nnabla_ops_nn as nn;
use super::super::nnabla_ops_pool as pool;
use super::{Entry, F32, e};

/// The layer rows.
pub(super) static LAYERS: &[Entry] = &[
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
        pool::max_pool,
    ),
    e(
        "AveragePool",
        "auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides",
        "AveragePooling (+ Pad); SumPooling, Constant, Div2 for ceil_mode and asymmetric pads; Convolution (dilations)",
        "1-D ceil_mode / asymmetric pads excluding padding, dilations with padding",
        pool::average_pool,
    ),
    e(
        "GlobalAveragePool",
        "",
        "Mean",
        "",
        pool::global_average_pool,
    ),
    e(
        "GlobalMaxPool",
        "",
        "Reshape, TopKData",
        "",
        pool::global_max_pool,
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
        "LRN",
        "alpha, beta, bias, size",
        "Mul2, Reshape, Pad, SumPooling, MulScalar, AddScalar, PowScalar",
        F32,
        nn::lrn,
    ),
];
