//! NNabla import rows of linear quantisation (lowered in `nnabla_ops_quant`
//! and, for the integer operators and `Round`, `nnabla_ops_qint`).

use super::super::nnabla_ops_qint as qint;
use super::super::nnabla_ops_quant as quant;
use super::{Entry, e, since};

/// The quantisation rows.
pub(super) static QUANTIZATION: &[Entry] = &[
    since(
        e(
            "QuantizeLinear",
            "axis, block_size, output_dtype; y_scale, y_zero_point (constant, or computed at run \
             time per tensor or per axis)",
            "QuantizeLinear (round half to even), Reshape (run-time scale, zero point)",
            "16-bit, 4-bit, 2-bit and float8 outputs; blocked scales computed at run time",
            quant::quantize_linear,
        ),
        10,
    ),
    since(
        e(
            "DequantizeLinear",
            "axis, block_size; x_scale, x_zero_point (constant, or computed at run time per \
             tensor or per axis)",
            "DequantizeLinear, Reshape (run-time scale, zero point)",
            "float8, 4-bit and 2-bit inputs; blocked scales computed at run time",
            quant::dequantize_linear,
        ),
        10,
    ),
    since(
        e(
            "DynamicQuantizeLinear",
            "",
            "Min, Max, MinimumScalar, MaximumScalar, Sub2, Div2, EqualScalar, Add2, MulScalar, \
             QuantizeLinear (round half to even), Reshape",
            "non-f32 inputs",
            qint::dynamic_quantize_linear,
        ),
        11,
    ),
    since(
        e(
            "MatMulInteger",
            "a_zero_point, b_zero_point (per tensor, per row of A, per column of B)",
            "AddScalar or Sub2 (the zero points), Affine (constant B, shift folded) or \
             BatchMatmul, in f32",
            "16-bit inputs; exact while every partial sum stays below 2^24 (K · max|a| · \
             max|b| < 2^24, K ≤ 514 for uint8 × int8), else rounded as f32 sums",
            qint::matmul_integer,
        ),
        10,
    ),
    since(
        e(
            "ConvInteger",
            "auto_pad, dilations, group, kernel_shape, pads, strides; x_zero_point, \
             w_zero_point (per tensor or per output channel)",
            "AddScalar or Sub2 (the zero points), Convolution in f32 (constant weight shift \
             folded)",
            "16-bit inputs; exact while every partial sum stays below 2^24 (C/group · kernel \
             size · max|x| · max|w| < 2^24), else rounded as f32 sums",
            qint::conv_integer,
        ),
        10,
    ),
    since(
        e(
            "Round",
            "",
            "Round, Sub2, Abs, EqualScalar, MulScalar, Where (half to even, exact)",
            "non-f32 inputs",
            qint::round,
        ),
        11,
    ),
];
