//! TenniS import rows of linear quantisation and the integer operators of
//! dynamic quantisation (lowered in `tennis_ops_quant`, as the ONNX
//! operators that define them).

use super::super::tennis_ops_quant as quant;
use super::{Entry, e, since};

/// The exactness limit of the integer products.
const EXACT: &str = "16-bit inputs; exact while every partial sum \
                     stays below 2^24 (K · max|a| · max|b| < 2^24, K ≤ 514 for uint8 × int8), \
                     else rounded as f32 sums";

/// The quantisation rows.
pub(super) static QUANT: &[Entry] = &[
    since(
        e(
            "QuantizeLinear",
            "axis, output_dtype; y_scale, y_zero_point (constant: per tensor or per axis; \
             computed at run time: per tensor)",
            "div, Round's nodes (half to even), add, maximum, Min's nodes (saturation), _cast",
            "block_size, 4-bit, float8 and 32-bit outputs, precision; scale vectors computed \
             at run time",
            quant::quantize_linear,
        ),
        10,
    ),
    since(
        e(
            "DequantizeLinear",
            "axis; x_scale, x_zero_point (constant: per tensor or per axis; computed at run \
             time: per tensor)",
            "_cast (to f32), sub, mul",
            "block_size, 4-bit and float8 inputs, output_dtype; scale vectors computed at run \
             time",
            quant::dequantize_linear,
        ),
        10,
    ),
    since(
        e(
            "DynamicQuantizeLinear",
            "",
            "ReduceMin's and ReduceMax's nodes, maximum, sub, div, equal, _cast, add, mul, \
             QuantizeLinear's nodes (round half to even, saturate to uint8)",
            "non-f32 inputs; a symbolic dimension",
            quant::dynamic_quantize_linear,
        ),
        11,
    ),
    since(
        e(
            "MatMulInteger",
            "a_zero_point, b_zero_point (per tensor, per row of A, per column of B)",
            "_cast, sub (the zero points; folded for a constant operand), MatMul's nodes in \
             f32, _cast (int32)",
            EXACT,
            quant::matmul_integer,
        ),
        10,
    ),
    since(
        e(
            "ConvInteger",
            "auto_pad, dilations, group, kernel_shape, pads, strides; x_zero_point, \
             w_zero_point (per tensor or per output channel)",
            "_cast, sub (the zero points; folded for a constant weight), Conv's nodes in f32, \
             _cast (int32)",
            EXACT,
            quant::conv_integer,
        ),
        10,
    ),
];
