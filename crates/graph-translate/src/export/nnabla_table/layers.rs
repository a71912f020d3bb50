//! The rows of [`super::TABLE`] for nnabla 1.39's neural network layers
//! and activation functions, in the order of its function list.

use super::*;

/// Neural network layers and activation functions.
pub(super) static LAYERS: &[Entry<Lowering>] = &[
    // Neural Network Layer
    Entry::lowered(
        "Affine",
        &["base_axis"],
        &["Flatten", "Gemm", "Reshape"],
        (low!(affine), Affine),
        T,
    )
    .cases(2),
    Entry::lowered(
        "RNN",
        &[
            "num_layers",
            "nonlinearity",
            "dropout",
            "bidirectional",
            "training",
        ],
        &[
            "RNN",
            "Gather",
            "Reshape",
            "Slice",
            "Concat",
            "Transpose",
            "Unsqueeze",
        ],
        (low!(rnn), Custom),
        O,
    )
    .cases(9),
    Entry::lowered(
        "LSTM",
        &["num_layers", "dropout", "bidirectional", "training"],
        &[
            "LSTM",
            "Gather",
            "Reshape",
            "Slice",
            "Concat",
            "Transpose",
            "Unsqueeze",
        ],
        (low!(lstm), Custom),
        T,
    )
    .cases(13),
    Entry::lowered(
        "GRU",
        &["num_layers", "dropout", "bidirectional", "training"],
        &[
            "GRU",
            "Gather",
            "Reshape",
            "Slice",
            "Concat",
            "Transpose",
            "Unsqueeze",
        ],
        (low!(gru), Custom),
        T,
    )
    .cases(8),
    Entry::lowered(
        "Convolution",
        &[
            "base_axis",
            "pad",
            "stride",
            "dilation",
            "group",
            "channel_last",
        ],
        &["Conv"],
        (low!(convolution), Conv),
        T,
    )
    .cases(2),
    Entry::lowered(
        "FusedConvolution",
        &[
            "base_axis",
            "pad",
            "stride",
            "dilation",
            "group",
            "channel_last",
            "decay_rate",
            "eps",
            "batch_stat",
            "nonlinearity",
            "nonlinearity_args",
            "pad_mode",
            "constant_value",
        ],
        &[
            "Pad",
            "Conv",
            "BatchNormalization",
            "ReduceMean",
            "Sub",
            "Mul",
            "Add",
            "Sqrt",
            "Div",
            "Relu",
            "Sigmoid",
            "Tanh",
            "LeakyRelu",
            "Elu",
            "Clip",
            "Identity",
        ],
        (low!(fused_convolution), SameRank),
        O,
    )
    .cases(7),
    Entry::lowered(
        "DepthwiseConvolution",
        &["base_axis", "pad", "stride", "dilation", "multiplier"],
        &["Unsqueeze", "Conv"],
        (low!(depthwise_convolution), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Deconvolution",
        &[
            "base_axis",
            "pad",
            "stride",
            "dilation",
            "group",
            "channel_last",
            "output_padding",
        ],
        &["ConvTranspose"],
        (low!(deconvolution), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "DepthwiseDeconvolution",
        &["base_axis", "pad", "stride", "dilation", "divisor"],
        &["Unsqueeze", "ConvTranspose"],
        (low!(depthwise_deconvolution), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "DeformableConvolution",
        &[
            "base_axis",
            "pad",
            "stride",
            "dilation",
            "group",
            "deformable_group",
            "channel_last",
        ],
        &["Slice", "DeformConv"],
        (low!(deformable_convolution), SameRank),
        O,
    )
    .since(19)
    .cases(3),
    Entry::lowered(
        "AdaptiveSeparableConvolution",
        &[],
        &["Slice", "Unsqueeze", "Concat", "Mul", "ReduceSum", "Add"],
        (low!(adaptive_separable_convolution), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "MaxPooling",
        &["kernel", "stride", "ignore_border", "pad", "channel_last"],
        &["MaxPool"],
        (low!(max_pooling), Pool),
        T,
    )
    .cases(3),
    Entry::lowered(
        "AveragePooling",
        &[
            "kernel",
            "stride",
            "ignore_border",
            "pad",
            "channel_last",
            "including_pad",
        ],
        &["AveragePool", "Pad"],
        (low!(average_pooling), Pool),
        T,
    )
    .cases(3),
    Entry::lowered(
        "GlobalAveragePooling",
        &[],
        &["GlobalAveragePool"],
        (low!(global_average_pooling), GlobalPool),
        T,
    )
    .cases(1),
    Entry::lowered(
        "SumPooling",
        &["kernel", "stride", "ignore_border", "pad", "channel_last"],
        &["Pad", "AveragePool", "Mul"],
        (low!(sum_pooling), Pool),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Unpooling",
        &["kernel", "channel_last"],
        &["Resize"],
        (low!(unpooling), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered("Embed", &[], &["Cast", "Gather"], (low!(embed), Custom), T).cases(1),
    Entry::lowered(
        "RoiAlign",
        &[
            "output_size",
            "spatial_scale",
            "sampling_ratio",
            "channel_last",
        ],
        &["Slice", "Reshape", "Cast", "Mul", "RoiAlign"],
        (low!(roi_align), Custom),
        O,
    )
    .since(16)
    .cases(3),
    // Neural Network Activation Functions
    Entry::lowered("Sigmoid", &[], &["Sigmoid"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Swish", &[], &["Sigmoid", "Mul"], (low!(swish), Same), T).cases(1),
    Entry::lowered("Tanh", &[], &["Tanh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ReLU", &[], &["Relu"], (low!(unary), Same), T).cases(1),
    Entry::lowered(
        "LeakyReLU",
        &["alpha"],
        &["LeakyRelu"],
        (low!(leaky_relu), Same),
        T,
    )
    .cases(2),
    Entry::lowered("Softmax", &["axis"], &["Softmax"], (low!(softmax), Same), T).cases(2),
    Entry::lowered(
        "LogSoftmax",
        &["axis"],
        &["LogSoftmax"],
        (low!(log_softmax), Same),
        T,
    )
    .cases(2),
    Entry::lowered("ELU", &["alpha"], &["Elu"], (low!(elu), Same), T).cases(2),
    Entry::lowered(
        "SELU",
        &["scale", "alpha"],
        &["Selu"],
        (low!(selu), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "CReLU",
        &["axis"],
        &["Neg", "Relu", "Concat"],
        (low!(crelu), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "CELU",
        &["alpha", "axis"],
        &["Neg", "Elu", "Concat"],
        (low!(celu), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered("PReLU", &["base_axis"], &["PRelu"], (low!(prelu), Same), T).cases(2),
    Entry::lowered("GELU", &[], &["Mul", "Add", "Tanh"], (low!(gelu), Same), T).cases(1),
    Entry::lowered(
        "Mish",
        &[],
        &["Softplus", "Tanh", "Mul"],
        (low!(mish), Same),
        T,
    )
    .cases(1),
    Entry::lowered("ReLU6", &[], &["Clip"], (low!(relu6), Same), T).cases(1),
    Entry::lowered(
        "HardSigmoid",
        &[],
        &["HardSigmoid"],
        (low!(hard_sigmoid), Same),
        T,
    )
    .cases(1),
    Entry::lowered("HardTanh", &[], &["Clip"], (low!(hard_tanh), Same), T).cases(1),
    Entry::lowered(
        "LogSigmoid",
        &[],
        &["Neg", "Softplus"],
        (low!(log_sigmoid), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "SoftPlus",
        &["beta"],
        &["Softplus"],
        (low!(softplus), Same),
        T,
    )
    .cases(2),
    Entry::lowered("SoftSign", &[], &["Softsign"], (low!(unary), Same), T).cases(1),
    Entry::lowered(
        "TanhShrink",
        &[],
        &["Tanh", "Sub"],
        (low!(tanh_shrink), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Sinc",
        &[],
        &["Sin", "Div", "Equal", "Where"],
        (low!(sinc), Same),
        T,
    )
    .cases(1),
];
