//! The NNabla → ONNX operator table: every function of nnabla 1.39's
//! function list, lowered or refused with the reason. The table drives the
//! exporter ([`super::nnabla`]), [`super::nnabla_functions`], the
//! per-function tests and the support table (`SUPPORT.md`).

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
const NOT_YET: &str = "no ONNX lowering yet";

/// Every function of nnabla 1.39, in the order of its function list.
pub static TABLE: &[Entry<Lowering>] = &[
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
    Entry::refused("FusedConvolution", NOT_YET),
    Entry::refused("DepthwiseConvolution", NOT_YET),
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
    Entry::refused("DepthwiseDeconvolution", NOT_YET),
    Entry::refused("DeformableConvolution", NOT_YET),
    Entry::refused("AdaptiveSeparableConvolution", NOT_YET),
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
    Entry::refused("RoiAlign", NOT_YET),
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
    Entry::refused("FusedBatchNormalization", NOT_YET),
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
    Entry::refused("NormNormalization", NOT_YET),
    Entry::refused("SyncBatchNormalization", NOT_YET),
    Entry::refused("TensorNormalization", NOT_YET),
    Entry::refused("WeightNormalization", NOT_YET),
    Entry::refused("WeightStandardization", NOT_YET),
    Entry::refused("SpectralNorm", NOT_YET),
    Entry::lowered(
        "MeanSubtraction",
        &["base_axis"],
        &["Sub"],
        (low!(mean_subtraction), Same),
        T,
    )
    .cases(1),
    Entry::refused("ClipGradByValue", NOT_YET),
    Entry::refused("ClipGradByNorm", NOT_YET),
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
    Entry::refused("CumProd", NOT_YET),
    Entry::refused("ReduceSum", NOT_YET),
    Entry::refused("ReduceMean", NOT_YET),
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
    Entry::refused("SearchSorted", NOT_YET),
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
    Entry::refused("Constant", NOT_YET),
    Entry::refused("Arange", NOT_YET),
    Entry::refused("Linspace", NOT_YET),
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
    Entry::refused("OneHot", NOT_YET),
    Entry::lowered("Flip", &["axes"], &["Slice"], (low!(flip), Same), T).cases(2),
    Entry::refused("Shift", NOT_YET),
    Entry::refused("Sort", NOT_YET),
    Entry::lowered(
        "Reshape",
        &["shape"],
        &["Reshape"],
        (low!(reshape), Custom),
        T,
    )
    .cases(2),
    Entry::refused("Shape", NOT_YET),
    Entry::refused("MatrixDiag", NOT_YET),
    Entry::refused("MatrixDiagPart", NOT_YET),
    Entry::refused("Trilu", NOT_YET),
    Entry::refused("Meshgrid", NOT_YET),
    Entry::refused("BatchDet", NOT_YET),
    Entry::refused("BatchInv", NOT_YET),
    Entry::refused("BatchLogdet", NOT_YET),
    Entry::refused("BatchCholesky", NOT_YET),
    Entry::refused("Assign", "training only"),
    Entry::lowered(
        "Gather",
        &["axis", "batch_dims"],
        &["Cast", "Gather"],
        (low!(gather), Custom),
        T,
    )
    .cases(2),
    Entry::refused("GatherNd", NOT_YET),
    Entry::refused("BoolGather", NOT_YET),
    Entry::refused("ScatterNd", NOT_YET),
    Entry::refused("ScatterAdd", NOT_YET),
    Entry::refused("BoolScatter", NOT_YET),
    Entry::lowered(
        "BoolFill",
        &["value"],
        &["Where"],
        (low!(bool_fill), Same),
        T,
    )
    .cases(1),
    Entry::refused("PackPaddedSequence", NOT_YET),
    Entry::refused("PadPackedSequence", NOT_YET),
    Entry::refused("NonZero", NOT_YET),
    // Signal Processing
    Entry::refused("Interpolate", NOT_YET),
    Entry::refused("ONNXResize", NOT_YET),
    Entry::refused("FFT", NOT_YET),
    Entry::refused("IFFT", NOT_YET),
    Entry::refused("STFT", NOT_YET),
    Entry::refused("ISTFT", NOT_YET),
    // Stochasticity
    Entry::lowered("Dropout", &[], &["Identity"], (low!(unary), Same), U).cases(1),
    Entry::refused("TopKData", NOT_YET),
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
    Entry::refused("AffineGrid", NOT_YET),
    Entry::refused("WarpByGrid", NOT_YET),
    Entry::refused("WarpByFlow", NOT_YET),
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
    Entry::refused("BinaryWeightConvolution", NOT_YET),
    Entry::refused("INQAffine", NOT_YET),
    Entry::refused("INQConvolution", NOT_YET),
    Entry::refused("FixedPointQuantize", NOT_YET),
    Entry::refused("MinMaxQuantize", NOT_YET),
    Entry::refused("Pow2Quantize", NOT_YET),
    Entry::refused("Prune", NOT_YET),
    Entry::refused("QuantizeLinear", NOT_YET),
    Entry::refused("DequantizeLinear", NOT_YET),
    // Validation
    Entry::refused("TopNError", "validation only"),
    Entry::refused("BinaryError", "validation only"),
    Entry::refused("ConfusionMatrix", "validation only"),
    // Unsupported, Special Use
    Entry::refused("VATNoise", "training only"),
    Entry::lowered("Unlink", &[], &["Identity"], (low!(unary), Same), T).cases(1),
    Entry::refused("Sink", "training only"),
    Entry::refused("NmsDetection2d", NOT_YET),
    Entry::refused("ONNXNonMaxSuppression", NOT_YET),
    Entry::refused("MaxPoolingBackward", "training only"),
    Entry::refused("PatchCorrelation", NOT_YET),
    Entry::refused("Unique", NOT_YET),
    Entry::refused("EyeLike", NOT_YET),
    Entry::refused("Mod2", NOT_YET),
    Entry::refused("BitShift", NOT_YET),
    Entry::refused("Einsum", NOT_YET),
];
