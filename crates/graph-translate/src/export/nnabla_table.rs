//! The NNabla → ONNX operator table: every function of nnabla 1.39's
//! function list, lowered or refused with the reason. The table drives the
//! exporter ([`super::nnabla`]), [`super::nnabla_functions`], the
//! per-function tests and the support table (`SUPPORT.md`).

use std::sync::LazyLock;

use tensor_core::graph::Node;

use super::Result;
use super::nnabla::{Call, Exporter};
use super::table::{Entry, Verified};

/// A lowering: writes the ONNX nodes of one NNabla function.
pub type LowerFn = for<'a, 'n> fn(&mut Exporter<'a>, &Node, &Call<'n>) -> Result<()>;

/// A lowering and how the shape of its output follows from its inputs'.
pub type Lowering = (LowerFn, Shape);

/// How an output's shape follows from the inputs' (for variables a network
/// leaves undeclared).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// The shape of input 0.
    Same,
    /// The broadcast shape of inputs 0 and 1.
    Broadcast,
    /// The rank of input 0 (the dimensions are the function's own).
    SameRank,
    /// A reduction over `axes` (`keep_dims`).
    Reduce,
    /// The function's own rule (`nnabla/infer.rs`).
    Custom,
}

use Shape::{Broadcast, Custom, Reduce, Same, SameRank};

/// The table's lowering of a method of the exporter.
macro_rules! low {
    ($f:ident) => {{
        fn f(e: &mut Exporter<'_>, n: &Node, c: &Call<'_>) -> Result<()> {
            e.$f(n, c)
        }
        f as LowerFn
    }};
}

const U: Verified = Verified::Unverified;
const T: Verified = Verified::NnablaTract;
const O: Verified = Verified::NnablaOnnxruntime;
const F: Verified = Verified::FormulaOnnxruntime;

mod part2;
mod part3;

/// Every function of nnabla 1.39, in the order of its function list.
pub static TABLE: LazyLock<Vec<Entry<Lowering>>> = LazyLock::new(|| {
    PART1
        .iter()
        .chain(part2::PART2)
        .chain(part3::PART3)
        .cloned()
        .collect()
});

/// The layers, activations, normalisations, reductions and arithmetic.
static PART1: &[Entry<Lowering>] = &[
    // Neural Network Layer
    Entry::lowered(
        "Affine",
        &["base_axis"],
        &["Flatten", "Gemm", "Reshape"],
        (low!(affine), Custom),
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
        (low!(recurrent), Custom),
        O,
    )
    .cases(5),
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
        (low!(recurrent), Custom),
        T,
    )
    .cases(5),
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
        (low!(recurrent), Custom),
        T,
    )
    .cases(4),
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
        (low!(convolution), SameRank),
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
        (low!(convolution), SameRank),
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
        (low!(pooling), SameRank),
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
        (low!(pooling), SameRank),
        T,
    )
    .cases(3),
    Entry::lowered(
        "GlobalAveragePooling",
        &[],
        &["GlobalAveragePool"],
        (low!(global_average_pooling), SameRank),
        T,
    )
    .cases(1),
    Entry::lowered(
        "SumPooling",
        &["kernel", "stride", "ignore_border", "pad", "channel_last"],
        &["Pad", "AveragePool", "Mul"],
        (low!(pooling), SameRank),
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
        (low!(softmax), Same),
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
        (low!(concat_pair), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "CELU",
        &["alpha", "axis"],
        &["Neg", "Elu", "Concat"],
        (low!(concat_pair), SameRank),
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
    Entry::lowered("ReLU6", &[], &["Clip"], (low!(clip), Same), T).cases(1),
    Entry::lowered(
        "HardSigmoid",
        &[],
        &["HardSigmoid"],
        (low!(hard_sigmoid), Same),
        T,
    )
    .cases(1),
    Entry::lowered("HardTanh", &[], &["Clip"], (low!(clip), Same), T).cases(1),
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
        (low!(group_like_normalization), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "InstanceNormalization",
        &["channel_axis", "batch_axis", "eps", "no_scale", "no_bias"],
        &["ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"],
        (low!(group_like_normalization), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LayerNormalization",
        &["batch_axis", "eps", "no_scale", "no_bias"],
        &["ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"],
        (low!(group_like_normalization), Same),
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
    // Arithmetic
    Entry::lowered("Add2", &[], &["Add"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("AddN", &[], &["Sum"], (low!(add_n), Custom), T).cases(1),
    Entry::lowered("BcAdd2", &[], &["Add"], (low!(binary), Broadcast), T).cases(1),
    Entry::lowered("Sub2", &[], &["Sub"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("Mul2", &[], &["Mul"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("MulN", &[], &["Mul"], (low!(mul_n), Custom), T).cases(1),
    Entry::lowered("Div2", &[], &["Div"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("Pow2", &[], &["Pow"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("AddScalar", &["val"], &["Add"], (low!(scalar), Same), T).cases(1),
    Entry::lowered("MulScalar", &["val"], &["Mul"], (low!(scalar), Same), T).cases(1),
    Entry::lowered("PowScalar", &["val"], &["Pow"], (low!(scalar), Same), T).cases(2),
    Entry::lowered("RSubScalar", &["val"], &["Sub"], (low!(rscalar), Same), T).cases(1),
    Entry::lowered("RDivScalar", &["val"], &["Div"], (low!(rscalar), Same), T).cases(1),
    Entry::lowered("RPowScalar", &["val"], &["Pow"], (low!(rscalar), Same), T).cases(1),
];
