//! The rows of [`super::TABLE`] for nnabla 1.39's normalization
//! functions (with the parameter-free normalisations and gradient clipping)
//! and reductions, in the order of its function list.

use super::*;

/// Normalization and reduction.
pub(super) static NORMALIZATION: &[Entry<Lowering>] = &[
    // Normalization
    Entry::lowered(
        "FusedBatchNormalization",
        &["axes", "decay_rate", "eps", "batch_stat", "nonlinearity"],
        &[
            "BatchNormalization",
            "ReduceMean",
            "Sub",
            "Mul",
            "Add",
            "Sqrt",
            "Div",
            "Relu",
        ],
        (low!(fused_batch_normalization), Same),
        T,
    )
    .cases(3),
    Entry::lowered(
        "BatchNormalization",
        &[
            "axes",
            "decay_rate",
            "eps",
            "batch_stat",
            "no_scale",
            "no_bias",
        ],
        &["BatchNormalization"],
        (low!(batch_normalization), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "GroupNormalization",
        &[
            "num_groups",
            "channel_axis",
            "batch_axis",
            "eps",
            "no_scale",
            "no_bias",
        ],
        &[
            "Reshape",
            "ReduceMean",
            "Sub",
            "Mul",
            "Add",
            "Sqrt",
            "Div",
            "Shape",
        ],
        (low!(group_normalization), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "InstanceNormalization",
        &["channel_axis", "batch_axis", "eps", "no_scale", "no_bias"],
        &["ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"],
        (low!(instance_normalization), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LayerNormalization",
        &["batch_axis", "eps", "no_scale", "no_bias"],
        &["ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"],
        (low!(layer_normalization), Same),
        T,
    )
    .cases(2),
    // parameter-free normalisations (nnabla/stats.rs)
    Entry::lowered(
        "NormNormalization",
        &["p", "axes", "eps"],
        &["Abs", "Pow", "ReduceSum", "Div"],
        (low!(norm_normalization), Same),
        T,
    )
    .cases(3),
    Entry::refused(
        "SyncBatchNormalization",
        "it needs a multi-process communicator (nnabla's GPU extension), which a saved file \
         cannot hold: nnabla 1.39 neither builds it without one nor runs it from a loaded \
         .nnp (export the network with BatchNormalization)",
    ),
    Entry::lowered(
        "TensorNormalization",
        &["axes", "eps", "no_scale", "no_bias"],
        &["ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Identity"],
        (low!(tensor_normalization), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "WeightNormalization",
        &["dim", "eps"],
        &["Mul", "ReduceSum", "Add", "Sqrt", "Reshape", "Div"],
        (low!(weight_normalization), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "WeightStandardization",
        &["channel_axis", "eps"],
        &["ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"],
        (low!(weight_standardization), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "SpectralNorm",
        &["dim", "itr", "eps", "test", "output_u"],
        &[
            "Transpose",
            "Reshape",
            "MatMul",
            "Mul",
            "ReduceSum",
            "Add",
            "Sqrt",
            "Div",
        ],
        (low!(spectral_norm), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "MeanSubtraction",
        &["base_axis"],
        &["Sub"],
        (low!(mean_subtraction), Same),
        T,
    )
    .cases(1),
    // gradient clipping is the identity in the forward pass
    Entry::lowered(
        "ClipGradByValue",
        &[],
        &["Identity"],
        (low!(unary), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "ClipGradByNorm",
        &["clip_norm", "axes"],
        &["Identity"],
        (low!(unary), Same),
        T,
    )
    .cases(2),
    // Reduction
    Entry::lowered(
        "Sum",
        &["axes", "keep_dims"],
        &["ReduceSum"],
        (low!(reduce), Reduce),
        T,
    )
    .cases(3),
    Entry::lowered(
        "CumSum",
        &["axis", "exclusive", "reverse"],
        &["CumSum"],
        (low!(cumsum), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Mean",
        &["axes", "keep_dims"],
        &["ReduceMean"],
        (low!(reduce), Reduce),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Max",
        &["axes", "keep_dims"],
        &["ReduceMax"],
        (low!(reduce), Reduce),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Min",
        &["axes", "keep_dims"],
        &["ReduceMin"],
        (low!(reduce), Reduce),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Norm",
        &["p", "axes", "keep_dims"],
        &["ReduceL1", "ReduceL2", "Abs", "Pow", "ReduceSum"],
        (low!(norm), Reduce),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Prod",
        &["axes", "keep_dims"],
        &["ReduceProd"],
        (low!(reduce), Reduce),
        T,
    )
    .cases(3),
    // cumulative product and whole-tensor reductions
    Entry::lowered(
        "CumProd",
        &["axis", "exclusive", "reverse"],
        &["Slice", "Mul", "Pow", "Concat"],
        (low!(cumprod), Same),
        O,
    )
    .cases(3),
    Entry::lowered("ReduceSum", &[], &["ReduceSum"], (low!(reduce), Reduce), T).cases(2),
    Entry::lowered(
        "ReduceMean",
        &[],
        &["ReduceMean"],
        (low!(reduce), Reduce),
        T,
    )
    .cases(2),
];
