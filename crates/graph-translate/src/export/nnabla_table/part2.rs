//! The second half of [`super::TABLE`]: logic, math, array manipulation
//! and the rest of nnabla 1.39's function list.

use super::*;

/// Logic, math, array manipulation, signal processing, stochasticity,
/// losses, geometry, quantization, validation and special functions.
pub(super) static PART2: &[Entry<Lowering>] = &[
    // Logical
    Entry::lowered("Sign", &[], &["Sign"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Minimum2", &[], &["Min"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("Maximum2", &[], &["Max"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("MinimumScalar", &["val"], &["Min"], (low!(scalar), Same), T).cases(1),
    Entry::lowered("MaximumScalar", &["val"], &["Max"], (low!(scalar), Same), T).cases(1),
    Entry::lowered(
        "LogicalAnd",
        &[],
        &["And", "Cast"],
        (low!(logical), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LogicalOr",
        &[],
        &["Or", "Cast"],
        (low!(logical), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LogicalXor",
        &[],
        &["Xor", "Cast"],
        (low!(logical), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Equal",
        &[],
        &["Equal", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "NotEqual",
        &[],
        &["Equal", "Not", "Cast"],
        (low!(not_equal), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "GreaterEqual",
        &[],
        &["GreaterOrEqual", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Greater",
        &[],
        &["Greater", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LessEqual",
        &[],
        &["LessOrEqual", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Less",
        &[],
        &["Less", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "SearchSorted",
        &["right"],
        &["Unsqueeze", "Less", "Not", "Cast", "ReduceSum"],
        (low!(search_sorted), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "LogicalAndScalar",
        &["val"],
        &["And", "Cast"],
        (low!(logical_scalar), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "LogicalOrScalar",
        &["val"],
        &["Or", "Cast"],
        (low!(logical_scalar), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "LogicalXorScalar",
        &["val"],
        &["Xor", "Cast"],
        (low!(logical_scalar), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "EqualScalar",
        &["val"],
        &["Equal", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "NotEqualScalar",
        &["val"],
        &["Equal", "Not", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "GreaterEqualScalar",
        &["val"],
        &["GreaterOrEqual", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "GreaterScalar",
        &["val"],
        &["Greater", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LessEqualScalar",
        &["val"],
        &["LessOrEqual", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LessScalar",
        &["val"],
        &["Less", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LogicalNot",
        &[],
        &["Cast", "Not"],
        (low!(logical_not), Same),
        T,
    )
    .cases(1),
    Entry::lowered("IsNaN", &[], &["IsNaN", "Cast"], (low!(is_test), Same), T).cases(1),
    Entry::lowered("IsInf", &[], &["IsInf", "Cast"], (low!(is_test), Same), T).cases(1),
    Entry::lowered(
        "ResetNaN",
        &["val"],
        &["IsNaN", "Where"],
        (low!(reset), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "ResetInf",
        &["val"],
        &["IsInf", "Where"],
        (low!(reset), Same),
        T,
    )
    .cases(1),
    Entry::lowered("Where", &[], &["Cast", "Where"], (low!(where_), Custom), T).cases(1),
    // Math
    Entry::lowered(
        "Constant",
        &["val", "shape"],
        &["Identity"],
        (low!(constant), Custom),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Arange",
        &["start", "stop", "step"],
        &["Identity"],
        (low!(arange), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Linspace",
        &["start", "stop", "num"],
        &["Identity"],
        (low!(linspace), Custom),
        T,
    )
    .cases(2),
    Entry::lowered("Abs", &[], &["Abs"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Exp", &[], &["Exp"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Log", &[], &["Log"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Identity", &[], &["Identity"], (low!(unary), Same), T).cases(1),
    Entry::lowered(
        "BatchMatmul",
        &["transpose_a", "transpose_b"],
        &["MatMul"],
        (low!(batch_matmul), Custom),
        T,
    )
    .cases(2),
    Entry::lowered("Round", &[], &["Round"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Ceil", &[], &["Ceil"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Floor", &[], &["Floor"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Sin", &[], &["Sin"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Cos", &[], &["Cos"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Tan", &[], &["Tan"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Sinh", &[], &["Sinh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Cosh", &[], &["Cosh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ASin", &[], &["Asin"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ACos", &[], &["Acos"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ATan", &[], &["Atan"], (low!(unary), Same), T).cases(1),
    Entry::lowered(
        "ATan2",
        &[],
        &["Div", "Atan", "Less", "Greater", "Add", "Where"],
        (low!(atan2), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered("ASinh", &[], &["Asinh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ACosh", &[], &["Acosh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ATanh", &[], &["Atanh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Erf", &[], &["Erf"], (low!(unary), Same), T).cases(1),
    // Array Manipulation
    Entry::lowered(
        "Concatenate",
        &["axis"],
        &["Concat"],
        (low!(concatenate), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Split",
        &["axis"],
        &["Split", "Squeeze"],
        (low!(split), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Stack",
        &["axis"],
        &["Unsqueeze", "Concat"],
        (low!(stack), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Slice",
        &["start", "stop", "step"],
        &["Slice"],
        (low!(slice), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Pad",
        &["pad_width", "mode", "constant_value"],
        &["Pad"],
        (low!(pad), SameRank),
        O,
    )
    .cases(2),
    Entry::lowered(
        "Transpose",
        &["axes"],
        &["Transpose"],
        (low!(transpose), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Broadcast",
        &["shape"],
        &["Expand"],
        (low!(broadcast), Custom),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BroadcastTo",
        &["axis"],
        &["Shape", "Expand"],
        (low!(broadcast_to), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Tile",
        &["reps"],
        &["Unsqueeze", "Tile"],
        (low!(tile), Custom),
        T,
    )
    .cases(3),
    Entry::lowered(
        "OneHot",
        &["shape"],
        &[
            "Less",
            "Add",
            "Where",
            "Mul",
            "ReduceSum",
            "Equal",
            "Cast",
            "Reshape",
        ],
        (low!(one_hot), Custom),
        T,
    )
    .cases(2),
    Entry::lowered("Flip", &["axes"], &["Slice"], (low!(flip), Same), T).cases(2),
    Entry::lowered(
        "Shift",
        &["shifts", "border_mode"],
        &["Gather"],
        (low!(shift), Same),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Sort",
        &["axis", "reverse", "with_index", "only_index"],
        &["TopK"],
        (low!(sort), Same),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Reshape",
        &["shape"],
        &["Reshape"],
        (low!(reshape), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Shape",
        &["start", "end"],
        &["Shape", "Slice", "Cast"],
        (low!(shape_of), Custom),
        T,
    )
    .cases(3),
    Entry::lowered(
        "MatrixDiag",
        &[],
        &["Unsqueeze", "Cast", "Where"],
        (low!(matrix_diag), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "MatrixDiagPart",
        &[],
        &["Reshape", "Gather"],
        (low!(matrix_diag_part), Custom),
        T,
    )
    .cases(2),
    Entry::lowered("Trilu", &["k", "upper"], &["Mul"], (low!(trilu), Same), T).cases(3),
    Entry::lowered(
        "Meshgrid",
        &["ij_indexing"],
        &["Reshape", "Expand"],
        (low!(meshgrid), Custom),
        T,
    )
    .cases(3),
    Entry::lowered("BatchDet", &[], &["Det"], (low!(batch_det), Custom), O).cases(2),
    Entry::refused(
        "BatchInv",
        "ONNX has no matrix inverse operator (an inverse unrolled for one matrix size is not \
         exported)",
    ),
    Entry::lowered(
        "BatchLogdet",
        &[],
        &["Det", "Abs", "Log"],
        (low!(batch_det), Custom),
        O,
    )
    .cases(2),
    Entry::refused(
        "BatchCholesky",
        "ONNX has no Cholesky decomposition operator (a decomposition unrolled for one matrix \
         size is not exported)",
    ),
    Entry::refused("Assign", "training only"),
    Entry::lowered(
        "Gather",
        &["axis", "batch_dims"],
        &["Cast", "Gather"],
        (low!(gather), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "GatherNd",
        &[],
        &["Transpose", "Cast", "GatherND"],
        (low!(gather_nd), Custom),
        T,
    )
    .cases(2),
    Entry::refused(
        "BoolGather",
        "its output's first dimension is the number of true values in the mask, known only \
         when the network runs (a data-dependent shape, not exported)",
    ),
    Entry::lowered(
        "ScatterNd",
        &["shape", "add"],
        &["Expand", "Transpose", "Cast", "ScatterND"],
        (low!(scatter_nd), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "ScatterAdd",
        &["axis"],
        &[
            "Unsqueeze",
            "Equal",
            "Where",
            "ReduceSum",
            "Transpose",
            "Add",
        ],
        (low!(scatter_add), Same),
        T,
    )
    .cases(2),
    Entry::refused("BoolScatter", NOT_YET),
    Entry::lowered(
        "BoolFill",
        &["value"],
        &["Where"],
        (low!(bool_fill), Same),
        T,
    )
    .cases(1),
    Entry::refused(
        "PackPaddedSequence",
        "the packed sequence's length is the sum of the values of the lengths input, known only \
         when the network runs, and no ONNX operator takes nnabla's packed layout (ONNX's RNN, \
         GRU and LSTM take padded sequences and sequence_lens)",
    ),
    Entry::refused("PadPackedSequence", NOT_YET),
    Entry::refused(
        "NonZero",
        "nnabla 1.39's runtime fixes NonZero's output shape when a saved network is set \
         up, before data arrives: a loaded .nnp's NonZero returns no indices (shape \
         (rank, 0)), which no ONNX NonZero reproduces",
    ),
    // Signal Processing
    Entry::lowered(
        "Interpolate",
        &[
            "output_size",
            "mode",
            "align_corners",
            "half_pixel",
            "half_pixel_for_nn",
            "channel_last",
        ],
        &["Shape", "Slice", "Concat", "Resize"],
        (low!(interpolate), SameRank),
        O,
    )
    .cases(6),
    Entry::lowered(
        "ONNXResize",
        &[
            "roi",
            "scales",
            "sizes",
            "mode",
            "coordinate_transformation_mode",
            "cubic_coeff_a",
            "exclude_outside",
            "extrapolation_value",
            "nearest_mode",
        ],
        &["Resize"],
        (low!(onnx_resize), SameRank),
        O,
    )
    .cases(5),
    Entry::lowered(
        "FFT",
        &["signal_ndim", "normalized"],
        &["Unsqueeze", "DFT", "Squeeze", "Mul", "Identity"],
        (low!(fft), Same),
        F,
    )
    .since(17)
    .cases(3),
    Entry::lowered(
        "IFFT",
        &["signal_ndim", "normalized"],
        &["Unsqueeze", "DFT", "Squeeze", "Mul", "Identity"],
        (low!(fft), Same),
        F,
    )
    .since(17)
    .cases(3),
    Entry::lowered(
        "STFT",
        &[
            "window_size",
            "stride",
            "fft_size",
            "window_type",
            "center",
            "pad_mode",
            "as_istft_backward",
        ],
        &["Pad", "Unsqueeze", "Conv"],
        (low!(stft), Custom),
        T,
    )
    .cases(3),
    Entry::lowered(
        "ISTFT",
        &[
            "window_size",
            "stride",
            "fft_size",
            "window_type",
            "center",
            "as_stft_backward",
        ],
        &["ConvTranspose", "Add", "Squeeze", "Slice", "Div"],
        (low!(istft), Custom),
        T,
    )
    .cases(3),
    // Stochasticity
    Entry::lowered("Dropout", &[], &["Identity"], (low!(unary), Same), U).cases(1),
    Entry::lowered(
        "TopKData",
        &["k", "abs", "reduce", "base_axis", "largest", "with_index"],
        &[
            "Reshape",
            "Abs",
            "TopK",
            "GatherElements",
            "Shape",
            "ConstantOfShape",
            "ScatterElements",
        ],
        (low!(top_k_data), Custom),
        T,
    )
    .cases(4),
    Entry::refused("TopKGrad", "training only"),
    Entry::refused("Rand", "training only"),
    Entry::refused("Randint", "training only"),
    Entry::refused("Randn", "training only"),
    Entry::refused("RandBinomial", "training only"),
    Entry::refused("RandBeta", "training only"),
    Entry::refused("RandGamma", "training only"),
    Entry::refused("RandomChoice", "training only"),
    Entry::refused("RandomCrop", "training only"),
    Entry::refused("RandomFlip", "training only"),
    Entry::refused("RandomShift", "training only"),
    Entry::refused("RandomErase", "training only"),
    Entry::refused("ImageAugmentation", "training only"),
    // Loss Functions
    Entry::refused("SigmoidCrossEntropy", "training only"),
    Entry::refused("BinaryCrossEntropy", "training only"),
    Entry::refused("SoftmaxCrossEntropy", "training only"),
    Entry::refused("CategoricalCrossEntropy", "training only"),
    Entry::refused("SquaredError", "training only"),
    Entry::refused("AbsoluteError", "training only"),
    Entry::refused("HuberLoss", "training only"),
    Entry::refused("EpsilonInsensitiveLoss", "training only"),
    Entry::refused("KLMultinomial", "training only"),
    // Geometric Neural Network Layers
    Entry::lowered(
        "AffineGrid",
        &["size", "align_corners"],
        &["Transpose", "MatMul", "Reshape"],
        (low!(affine_grid), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "WarpByGrid",
        &["mode", "padding_mode", "align_corners", "channel_last"],
        &[
            "GridSample",
            "Slice",
            "Add",
            "Mul",
            "Sub",
            "Div",
            "Clip",
            "Floor",
            "Greater",
            "Where",
            "Equal",
            "Cast",
            "Round",
            "Concat",
        ],
        (low!(warp_by_grid), Custom),
        O,
    )
    .since(16)
    .cases(13),
    Entry::lowered(
        "WarpByFlow",
        &[],
        &["Transpose", "Add", "Mul", "Sub", "GridSample"],
        (low!(warp_by_flow), Same),
        O,
    )
    .since(16)
    .cases(2),
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
        (low!(binary_sigmoid), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BinaryConnectAffine",
        &["base_axis", "quantize_zero_to"],
        &["Flatten", "Gemm", "Reshape"],
        (low!(affine), Custom),
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
        (low!(convolution), SameRank),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BinaryWeightAffine",
        &["base_axis", "quantize_zero_to"],
        &["Flatten", "Gemm", "Reshape"],
        (low!(affine), Custom),
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
    Entry::refused("INQAffine", NOT_YET),
    Entry::refused("INQConvolution", NOT_YET),
    Entry::lowered(
        "FixedPointQuantize",
        &["sign", "n", "delta", "ste_fine_grained"],
        &["Div", "Abs", "Add", "Floor", "Sign", "Mul", "Clip"],
        (low!(fixed_point_quantize), Same),
        T,
    )
    .cases(3),
    Entry::refused("MinMaxQuantize", NOT_YET),
    Entry::refused("Pow2Quantize", NOT_YET),
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
    Entry::refused("ONNXNonMaxSuppression", NOT_YET),
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
