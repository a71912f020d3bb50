//! NNabla import rows of linear quantisation (lowered in `nnabla_ops_quant`).

use super::super::nnabla_ops_quant as quant;
use super::{Entry, e, since};

/// The quantisation rows.
pub(super) static QUANTIZATION: &[Entry] = &[
    since(
        e(
            "QuantizeLinear",
            "axis, block_size, output_dtype; y_scale, y_zero_point (constant)",
            "QuantizeLinear (round half to even)",
            "16-bit, 4-bit, 2-bit and float8 outputs; scales computed at run time",
            quant::quantize_linear,
        ),
        10,
    ),
    since(
        e(
            "DequantizeLinear",
            "axis, block_size; x_scale, x_zero_point (constant)",
            "DequantizeLinear",
            "float8, 4-bit and 2-bit inputs; scales computed at run time",
            quant::dequantize_linear,
        ),
        10,
    ),
];
