//! The rows of [`super::TABLE`] for nnabla 1.39's quantization layers,
//! validation and special-use functions, in the order of its function list.

use super::*;

/// Quantization, validation and special use.
pub(super) static QUANTIZATION: &[Entry<Lowering>] = &[
    // Quantization Neural Network Layers
    Entry::lowered(
        "BinarySigmoid",
        &[],
        &["Greater", "Cast"],
        (low!(binary_sigmoid), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BinaryTanh",
        &[],
        &["Greater", "Where"],
        (low!(binary_tanh), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BinaryConnectAffine",
        &["base_axis", "quantize_zero_to"],
        &["Flatten", "Gemm", "Reshape"],
        (low!(binary_connect_affine), Affine),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BinaryConnectConvolution",
        &[
            "base_axis",
            "pad",
            "stride",
            "dilation",
            "group",
            "quantize_zero_to",
        ],
        &["Conv"],
        (low!(binary_connect_convolution), Conv),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BinaryWeightAffine",
        &["base_axis", "quantize_zero_to"],
        &["Flatten", "Gemm", "Reshape"],
        (low!(binary_weight_affine), Affine),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BinaryWeightConvolution",
        &[
            "base_axis",
            "pad",
            "stride",
            "dilation",
            "group",
            "quantize_zero_to",
        ],
        &["Conv"],
        (low!(binary_weight_convolution), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "INQAffine",
        &[
            "base_axis",
            "num_bits",
            "inq_iterations",
            "selection_algorithm",
            "seed",
        ],
        &["Flatten", "Gemm", "Reshape"],
        (low!(inq_affine), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "INQConvolution",
        &[
            "base_axis",
            "pad",
            "stride",
            "dilation",
            "group",
            "num_bits",
            "inq_iterations",
            "selection_algorithm",
            "seed",
        ],
        &["Conv"],
        (low!(inq_convolution), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "FixedPointQuantize",
        &["sign", "n", "delta", "ste_fine_grained"],
        &["Div", "Abs", "Add", "Floor", "Sign", "Mul", "Clip"],
        (low!(fixed_point_quantize), Same),
        T,
    )
    .cases(3),
    Entry::lowered(
        "MinMaxQuantize",
        &["decay", "x_min_max", "ema", "ste_fine_grained", "eps"],
        &[
            "ReduceMin",
            "ReduceMax",
            "Sub",
            "Less",
            "Add",
            "Where",
            "Div",
            "Abs",
            "Floor",
            "Sign",
            "Mul",
            "GreaterOrEqual",
            "LessOrEqual",
            "Max",
            "Min",
        ],
        (low!(min_max_quantize), Same),
        T,
    )
    .cases(5),
    Entry::lowered(
        "Pow2Quantize",
        &["sign", "with_zero", "n", "m", "ste_fine_grained"],
        &[
            "Abs", "Log", "Div", "Add", "Floor", "Sign", "Mul", "Pow", "Min", "Max", "Less",
            "Where", "Neg",
        ],
        (low!(pow2_quantize), Same),
        T,
    )
    .cases(5),
    Entry::lowered(
        "Prune",
        &["rate"],
        &["Abs", "Reshape", "TopK", "Slice", "Less", "Where"],
        (low!(prune), Same),
        T,
    )
    .cases(3),
    Entry::lowered(
        "QuantizeLinear",
        &["round_mode", "narrow_range", "dtype"],
        &["Div", "Round", "Abs", "Add", "Floor", "Sign", "Mul", "Clip"],
        (low!(quantize_linear), Same),
        T,
    )
    .cases(6),
    Entry::lowered(
        "DequantizeLinear",
        &[],
        &["Sub", "Mul"],
        (low!(dequantize_linear), Broadcast),
        T,
    )
    .cases(2),
    // Validation
    Entry::refused("TopNError", "validation only"),
    Entry::refused("BinaryError", "validation only"),
    Entry::refused("ConfusionMatrix", "validation only"),
    // Unsupported, Special Use
    Entry::refused("VATNoise", "training only"),
    Entry::lowered("Unlink", &[], &["Identity"], (low!(unary), Same), T).cases(1),
    Entry::refused("Sink", "training only"),
    Entry::lowered(
        "NmsDetection2d",
        &["thresh", "nms", "nms_per_class"],
        &[
            "Slice",
            "Less",
            "Where",
            "Mul",
            "Transpose",
            "NonMaxSuppression",
            "Shape",
            "Expand",
            "ScatterND",
            "Div",
            "Add",
            "Sub",
            "Min",
            "Max",
            "Greater",
            "And",
            "Cast",
            "ReduceMax",
            "Concat",
        ],
        (low!(nms_detection2d), Same),
        T,
    )
    .cases(4),
    Entry::refused(
        "ONNXNonMaxSuppression",
        "nnabla 1.39 selects the boxes when a saved network is set up, before data arrives (its \
         forward pass does nothing): a loaded .nnp returns the boxes chosen from zero-filled \
         inputs whatever the data, which no ONNX NonMaxSuppression reproduces",
    ),
    Entry::refused("MaxPoolingBackward", "training only"),
    Entry::lowered(
        "PatchCorrelation",
        &["patch", "shift", "patch_step", "shift_step", "padding"],
        &[
            "Pad",
            "Slice",
            "Mul",
            "ReduceSum",
            "Concat",
            "Transpose",
            "Conv",
            "Reshape",
            "Unsqueeze",
        ],
        (low!(patch_correlation), Custom),
        T,
    )
    .cases(3),
    Entry::refused(
        "Unique",
        "nnabla 1.39 runs Unique only in auto_forward (dynamic) mode and refuses it \
         in a static graph, so a saved .nnp network cannot compute it",
    ),
    Entry::lowered("EyeLike", &["k"], &["Identity"], (low!(eye_like), Same), T).cases(2),
    Entry::lowered("Mod2", &["fmod"], &["Mod"], (low!(mod2), Broadcast), T).cases(4),
    Entry::refused(
        "BitShift",
        "nnabla 1.39 runs BitShift only on integer arrays, and a saved network's \
         variables are float: no .nnp network computes it",
    ),
    Entry::lowered(
        "Einsum",
        &["equation"],
        &["Einsum"],
        (low!(einsum), Custom),
        T,
    )
    .cases(3),
];
