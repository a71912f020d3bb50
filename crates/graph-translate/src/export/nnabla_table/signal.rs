//! The rows of [`super::TABLE`] for nnabla 1.39's signal processing,
//! stochasticity, loss functions and geometric layers, in the order of its
//! function list.

use super::*;

/// Signal processing, stochasticity, losses and geometry.
pub(super) static SIGNAL: &[Entry<Lowering>] = &[
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
        (low!(ifft), Same),
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
    Entry::lowered("Dropout", &[], &["Identity"], (low!(dropout), Same), U).cases(1),
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
        (low!(affine_grid), AffineGrid),
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
    .since_for(Exporter::warp_by_grid_opset)
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
];
