//! Operator families and their colours: the one table that both the SVG
//! ([`super::Layout::to_svg`]) and the viewer page (through the layout
//! JSON's `family`, `fill` and `stroke`) colour boxes by.

use super::NodeKind;

/// What kind of work an operator does, for colouring its box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// Convolutions, fully connected layers, matrix products, recurrent
    /// cells, embeddings: the operators that carry most weights.
    Linear,
    /// Activation functions (ReLU, Sigmoid, Softmax, ...).
    Activation,
    /// Batch, layer, instance and local response normalization.
    Normalization,
    /// Max, average, global and other pooling.
    Pooling,
    /// Arithmetic and comparisons element by element, reductions.
    Elementwise,
    /// Reshaping, transposing, concatenating, slicing, gathering, casting.
    Shape,
    /// Graph inputs and outputs, parameters and constants drawn as boxes.
    Io,
    /// Control flow: loops, conditionals, recurrence.
    Control,
    /// Anything else.
    Other,
}

/// Every family, in the order a legend lists them.
pub const FAMILIES: [Family; 9] = [
    Family::Linear,
    Family::Activation,
    Family::Normalization,
    Family::Pooling,
    Family::Elementwise,
    Family::Shape,
    Family::Io,
    Family::Control,
    Family::Other,
];

const ACTIVATIONS: &[&str] = &[
    "relu",
    "leakyrelu",
    "prelu",
    "relu6",
    "crelu",
    "elu",
    "selu",
    "celu",
    "gelu",
    "silu",
    "swish",
    "mish",
    "sigmoid",
    "hardsigmoid",
    "tanh",
    "hardtanh",
    "softmax",
    "logsoftmax",
    "softplus",
    "softsign",
    "hardswish",
    "thresholdedrelu",
    "relumax",
    "randomizedrelu",
    "tanhshrink",
    "softshrink",
    "hardshrink",
    "logsigmoid",
    "sigmoidcrossentropy",
];

const ELEMENTWISE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "add2",
    "sub2",
    "mul2",
    "div2",
    "pow2",
    "addn",
    "muln",
    "sqrt",
    "rsqrt",
    "exp",
    "log",
    "abs",
    "neg",
    "sign",
    "reciprocal",
    "floor",
    "ceil",
    "round",
    "erf",
    "max",
    "min",
    "maximum",
    "minimum",
    "maximum2",
    "minimum2",
    "sum",
    "mean",
    "prod",
    "equal",
    "greater",
    "greaterequal",
    "greaterorequal",
    "less",
    "lessequal",
    "lessorequal",
    "and",
    "or",
    "not",
    "xor",
    "logicaland",
    "logicalor",
    "logicalnot",
    "logicalxor",
    "where",
    "clip",
    "clipgradbyvalue",
    "mod",
    "fmod",
    "sin",
    "cos",
    "tan",
    "atan",
    "asin",
    "acos",
    "sinh",
    "cosh",
    "isnan",
    "isinf",
    "biasadd",
    "addbias",
    "square",
    "identity",
    "dropout",
    "batchmatmulscalar",
    "argmax",
    "argmin",
    "cumsum",
    "einsum",
    "bitshift",
    "squaredifference",
];

const SHAPE: &[&str] = &[
    "reshape",
    "transpose",
    "concat",
    "split",
    "slice",
    "gather",
    "squeeze",
    "flatten",
    "expand",
    "tile",
    "pad",
    "shape",
    "broadcast",
    "resize",
    "upsample",
    "cast",
    "stack",
    "permute",
    "dimshuffle",
    "crop",
    "flip",
    "scatter",
    "onehot",
    "range",
    "depthtospace",
    "spacetodepth",
    "constantofshape",
    "copy",
    "size",
    "nonzero",
    "topk",
    "sort",
    "unique",
    "interpolate",
    "shift",
    "roll",
    "repeat",
    "matrixdiagpart",
    "matrixdiag",
    "reverse",
    "dim",
    "limit",
    "unpool",
    "chunk",
];

const CONTROL: &[&str] = &[
    "if",
    "loop",
    "scan",
    "repeatstart",
    "repeatend",
    "recurrentinput",
    "recurrentoutput",
    "delay",
    "breakout",
    "switch",
    "merge",
    "enter",
    "exit",
    "nextiteration",
    "loopcond",
];

/// The window of a convolution or a pooling and how it moves.
const WINDOW: &[&str] = &[
    "kernel_shape",
    "kernel",
    "ksize",
    "strides",
    "stride",
    "pads",
    "pad",
    "padding",
];

/// Convolutions, fully connected layers, recurrent cells: after the
/// window, the group (a depthwise convolution), then the rest.
const TELLING_LINEAR: &[&str] = &[
    "group",
    "dilations",
    "dilation",
    "transA",
    "transB",
    "base_axis",
    "hidden_size",
    "direction",
    "num_heads",
    "axis",
    "alpha",
    "beta",
];

/// Pooling: after the window, how the border counts.
const TELLING_POOLING: &[&str] = &[
    "ceil_mode",
    "count_include_pad",
    "including_pad",
    "ignore_border",
    "dilations",
    "p",
];

/// Normalizations: the epsilon, the axes normalized, the momentum.
const TELLING_NORMALIZATION: &[&str] = &[
    "epsilon",
    "eps",
    "axis",
    "axes",
    "momentum",
    "decay_rate",
    "batch_stat",
    "num_groups",
    "size",
    "alpha",
    "beta",
    "bias",
];

/// Activations: the axis (Softmax), then their constants.
const TELLING_ACTIVATION: &[&str] = &[
    "axis",
    "axes",
    "alpha",
    "beta",
    "gamma",
    "lambd",
    "approximate",
    "min",
    "max",
];

/// Element-wise arithmetic and reductions: the axes reduced, whether they
/// are kept, a scalar operand.
const TELLING_ELEMENTWISE: &[&str] = &[
    "axes",
    "axis",
    "keepdims",
    "keep_dims",
    "val",
    "value",
    "alpha",
    "beta",
    "fmod",
    "to",
];

/// Reshaping and friends: the permutation (Transpose), the type (Cast),
/// the mode (Pad, Resize), the axis (Concat, Gather, Split), the shape.
const TELLING_SHAPE: &[&str] = &[
    "perm", "to", "mode", "axis", "axes", "shape", "split", "starts", "ends", "repeats", "scales",
    "sizes", "keepdims", "pads", "value",
];

/// Operators of no family (and control flow): after the window, the
/// attributes that tell most about most operators.
const TELLING_OTHER: &[&str] = &[
    "group",
    "dilations",
    "dilation",
    "axis",
    "axes",
    "perm",
    "shape",
    "mode",
    "to",
    "alpha",
    "beta",
    "epsilon",
    "eps",
    "keepdims",
    "keep_dims",
];

impl Family {
    /// The family of a box: its kind (inputs and outputs are [`Family::Io`])
    /// and its operator type, matched without case, `_`, `-` or digits so
    /// that ONNX (`MaxPool`), NNabla (`MaxPooling`) and TenniS
    /// (`pooling2d`) names of one operator fall together.
    pub fn of(kind: NodeKind, op: &str) -> Family {
        match kind {
            NodeKind::Op => {}
            NodeKind::Group => return Family::Control,
            NodeKind::Input | NodeKind::Output | NodeKind::Port => return Family::Io,
        }
        let key: String = op
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        let bare: String = key.chars().filter(|c| !c.is_ascii_digit()).collect();
        let is = |list: &[&str]| list.iter().any(|w| *w == key || *w == bare);
        let has = |words: &[&str]| words.iter().any(|w| key.contains(w));
        if op == "<param>"
            || op == "<const>"
            || (has(&["constant", "placeholder"]) && !has(&["shape"]))
        {
            Family::Io
        } else if is(CONTROL) {
            Family::Control
        } else if has(&["pool"]) && !has(&["unpool"]) {
            Family::Pooling
        } else if has(&["norm", "lrn", "standardize"]) {
            Family::Normalization
        } else if has(&[
            "conv",
            "affine",
            "gemm",
            "matmul",
            "innerprod",
            "dense",
            "linear",
            "embed",
            "lstm",
            "gru",
            "rnn",
            "fullyconnected",
            "attention",
        ]) {
            Family::Linear
        } else if is(ACTIVATIONS) {
            Family::Activation
        } else if is(ELEMENTWISE) || has(&["scalar", "reduce", "elementwise"]) {
            Family::Elementwise
        } else if is(SHAPE)
            || has(&[
                "reshape",
                "transpose",
                "concat",
                "slice",
                "gather",
                "squeeze",
            ])
        {
            Family::Shape
        } else {
            Family::Other
        }
    }

    /// The family's name in the layout JSON: `linear`, `activation`,
    /// `normalization`, `pooling`, `elementwise`, `shape`, `io`,
    /// `control` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Linear => "linear",
            Family::Activation => "activation",
            Family::Normalization => "normalization",
            Family::Pooling => "pooling",
            Family::Elementwise => "elementwise",
            Family::Shape => "shape",
            Family::Io => "io",
            Family::Control => "control",
            Family::Other => "other",
        }
    }

    /// The attributes that tell most about an operator of this family,
    /// most telling first (ONNX, NNabla and TenniS spellings, matched
    /// without case): a box lists these before its other attributes, which
    /// keep their stored order ([`super::Labels::attributes`]). One table
    /// for the SVG and the page, which draws the layout's labels.
    ///
    /// ```
    /// use mlformats::layout::{Family, NodeKind};
    /// let conv: Vec<&str> = Family::of(NodeKind::Op, "Conv").telling_attributes().collect();
    /// assert_eq!(conv[..4], ["kernel_shape", "kernel", "ksize", "strides"]);
    /// assert!(conv.iter().position(|a| *a == "group") < conv.iter().position(|a| *a == "dilations"));
    /// let transpose = Family::of(NodeKind::Op, "Transpose").telling_attributes().next();
    /// assert_eq!(transpose, Some("perm"));
    /// ```
    pub fn telling_attributes(self) -> impl Iterator<Item = &'static str> + Clone {
        let (window, rest): (&[&str], &[&str]) = match self {
            Family::Linear => (WINDOW, TELLING_LINEAR),
            Family::Pooling => (WINDOW, TELLING_POOLING),
            Family::Normalization => (&[], TELLING_NORMALIZATION),
            Family::Activation => (&[], TELLING_ACTIVATION),
            Family::Elementwise => (&[], TELLING_ELEMENTWISE),
            Family::Shape => (&[], TELLING_SHAPE),
            Family::Io | Family::Control | Family::Other => (WINDOW, TELLING_OTHER),
        };
        window.iter().chain(rest).copied()
    }

    /// The fill and stroke colours of its boxes (CSS hex).
    pub fn colors(self) -> (&'static str, &'static str) {
        match self {
            Family::Linear => ("#dce8f7", "#3f6fa8"),
            Family::Activation => ("#f9dede", "#b24848"),
            Family::Normalization => ("#d9f0e8", "#3a8a6b"),
            Family::Pooling => ("#e6f0d3", "#67893a"),
            Family::Elementwise => ("#ebe3f5", "#7559a3"),
            Family::Shape => ("#f6eed8", "#a0823a"),
            Family::Io => ("#e9f3e6", "#5c8a4f"),
            Family::Control => ("#fce5cf", "#c0691a"),
            Family::Other => ("#ffffff", "#587a9c"),
        }
    }
}
