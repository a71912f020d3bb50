//! The TenniS → ONNX operator table: every operator the TenniS C++ runtime
//! registers for the CPU, lowered or refused with the reason. The table
//! drives the exporter ([`super::tennis`]), [`super::tennis_ops`], the
//! per-operator tests and the support table (`SUPPORT.md`).

use tensor_core::graph::Node;

use super::Result;
use super::table::{Entry, Verified};
use super::tennis::{Call, Exporter};

/// A lowering: writes the ONNX nodes of one TenniS operator.
pub type LowerFn = for<'a, 'n> fn(&mut Exporter<'a>, &Node, &Call<'n>) -> Result<()>;

/// A lowering and how the rank of its output follows from its inputs'.
pub type Lowering = (LowerFn, Rank);

/// How an output's rank follows from the inputs'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rank {
    /// The rank of input 0.
    Input0,
    /// The larger rank of inputs 0 and 1 (broadcasting).
    Broadcast,
    /// The operator's own rule (`tennis/mod.rs`).
    Own,
}

use Rank::{Broadcast, Input0, Own};

/// The table's lowering of a method of the exporter.
macro_rules! low {
    ($f:ident) => {{
        fn f(e: &mut Exporter<'_>, n: &Node, c: &Call<'_>) -> Result<()> {
            e.$f(n, c)
        }
        f as LowerFn
    }};
}

const N: Verified = Verified::Networks;
/// Checked against single-operator modules run by TenniS.
const T: Verified = Verified::TennisTract;
/// Checked against the same modules in onnxruntime (tract-onnx cannot run
/// them).
const O: Verified = Verified::TennisOnnxruntime;
const U: Verified = Verified::Unverified;
/// The framework padding helpers.
const FRAMEWORK_PADDING: &str = "computes a [4, 2] padding tensor at run time from the input's \
height and width (TensorFlow / Dragon / MXNet SAME and VALID rules) for conv2d_v2 or \
pooling2d_v2; ONNX Conv and MaxPool take their padding as attributes fixed when exporting, \
and the exporter folds only _onnx_pooling2d_padding into pooling2d_v2";
/// TenniS's affine sampler and the operators built on it.
const AFFINE_SAMPLE: &str = "samples the image at positions mapped by a 3x3 matrix \
(affine_sample2d; sample2d, sample2d_v2 and _nhwc_letterbox are built on it), computed in \
single precision, with TenniS's own border rules: with outer_value set, every position at or \
past the last row or column (x >= width - 1) takes that value, else positions are clamped to \
[0, size - 1 - 1e-5], and its cubic kernel moves positions near the border as _resize2d's \
does; ONNX GridSample (opset 16+, normalised coordinates) has neither rule, and an exact \
gather-based lowering (as for _resize2d) is not written yet";

/// `<param>`, `<const>`, then every CPU operator of the TenniS runtime.
pub static TABLE: &[Entry<Lowering>] = &[
    Entry::lowered("<param>", &[], &[], (low!(param), Own), N),
    Entry::lowered("<const>", &["value"], &[], (low!(constant), Own), N),
    // The runtime's own instruction taking a field of a packed value
    // (outputs of chunk, split, topkv2).
    Entry::lowered(
        "_field",
        &["offset"],
        &["Identity"],
        (low!(take_field), Own),
        T,
    ),
    Entry::lowered(
        "LSTM",
        &["direction", "hidden_size"],
        &["LSTM"],
        (low!(lstm), Own),
        T,
    ),
    Entry::lowered("_cast", &["dtype"], &["Cast"], (low!(cast), Input0), T),
    Entry::lowered("_copy", &[], &["Identity"], (low!(direct), Input0), T),
    Entry::lowered(
        "_dims",
        &[],
        &["Shape", "Size", "Cast"],
        (low!(dims), Own),
        T,
    ),
    Entry::lowered(
        "_dimshuffle",
        &["dim", "shuffle"],
        &["Gather"],
        (low!(dimshuffle), Own),
        T,
    ),
    Entry::refused("_dragon_conv2d_padding", FRAMEWORK_PADDING),
    Entry::refused("_dragon_pooling2d_padding", FRAMEWORK_PADDING),
    Entry::lowered(
        "_expand",
        &["front", "end", "inverse"],
        &["Unsqueeze"],
        (low!(expand_dims), Own),
        T,
    ),
    Entry::lowered(
        "_limit",
        &["shape"],
        &["Shape", "Slice"],
        (low!(limit), Input0),
        N,
    ),
    Entry::refused("_mx_pooling2d_padding", FRAMEWORK_PADDING),
    Entry::lowered(
        "_nhwc_center_crop2d",
        &["size"],
        &["Shape", "Sub", "Div", "Where", "Concat", "Slice", "Pad"],
        (low!(nhwc_center_crop2d), Input0),
        T,
    )
    .image(),
    Entry::refused("_nhwc_letterbox", AFFINE_SAMPLE),
    Entry::lowered(
        "_nhwc_scale_resize2d",
        &["size", "type"],
        &["Range", "Floor", "Where", "Gather"],
        (low!(nhwc_scale_resize2d), Input0),
        T,
    )
    .image(),
    Entry::lowered(
        "_onnx_pooling2d_padding",
        &["auto_pad", "padding"],
        &[],
        (low!(onnx_pooling2d_padding), Own),
        N,
    ),
    Entry::lowered(
        "_reshape",
        &["shape"],
        &["Reshape"],
        (low!(reshape), Own),
        T,
    ),
    Entry::lowered(
        "_reshape_v2",
        &[],
        &["Cast", "Reshape"],
        (low!(reshape_v2), Own),
        T,
    ),
    Entry::lowered(
        "_resize2d",
        &["type"],
        &["Range", "Floor", "Where", "Gather"],
        (low!(resize2d), Input0),
        T,
    )
    .image(),
    Entry::lowered("_shape", &[], &["Shape", "Cast"], (low!(shape), Own), T),
    Entry::refused("_tf_conv2d_padding", FRAMEWORK_PADDING),
    Entry::refused("_tf_pooling2d_padding", FRAMEWORK_PADDING),
    Entry::lowered(
        "_transpose",
        &["permute"],
        &["Transpose"],
        (low!(transpose), Input0),
        T,
    ),
    Entry::lowered("abs", &[], &["Abs"], (low!(direct), Input0), T),
    Entry::lowered("add", &[], &["Add"], (low!(direct), Broadcast), T),
    Entry::lowered(
        "add_bias",
        &["format", "dim"],
        &["Reshape", "Add"],
        (low!(add_bias), Input0),
        T,
    )
    .image(),
    Entry::refused("affine_sample2d", AFFINE_SAMPLE),
    Entry::lowered(
        "argmax",
        &["dim"],
        &["ArgMax", "Cast"],
        (low!(argmax), Own),
        T,
    ),
    Entry::lowered(
        "batch_norm",
        &["dim", "epsilon"],
        &["Reshape", "Sub", "Add", "Sqrt", "Div"],
        (low!(batch_norm), Input0),
        T,
    ),
    Entry::lowered(
        "batch_scale",
        &["dim"],
        &["Reshape", "Mul", "Add"],
        (low!(batch_norm), Input0),
        T,
    ),
    Entry::lowered(
        "batch_to_space4d",
        &["block_shape", "crop"],
        &[
            "Shape",
            "Slice",
            "Concat",
            "Reshape",
            "Transpose",
            "Mul",
            "Sub",
        ],
        (low!(batch_to_space4d), Input0),
        T,
    ),
    Entry::lowered(
        "broadcast",
        &[],
        &["Cast", "Expand"],
        (low!(broadcast), Own),
        T,
    ),
    Entry::lowered("ceil", &[], &["Ceil"], (low!(direct), Input0), T),
    Entry::lowered(
        "chunk",
        &["chunks", "dim"],
        &["Shape", "Slice", "Div", "Expand", "Concat", "Split"],
        (low!(chunk), Own),
        T,
    ),
    Entry::lowered("concat", &["dim"], &["Concat"], (low!(concat), Input0), T),
    Entry::lowered(
        "constant_of_shape",
        &["value"],
        &["Cast", "ConstantOfShape"],
        (low!(constant_of_shape), Own),
        T,
    ),
    Entry::lowered(
        "conv2d",
        &["format", "padding", "stride", "dilation", "padding_value"],
        &["Conv"],
        (low!(conv2d), Input0),
        T,
    )
    .image(),
    Entry::refused(
        "conv2d_quantized",
        "int8 convolution dequantized by per-channel dequantize_scales; TenniS's CPU kernel writes the dequantized channels through one output pointer shared by its OpenMP loop over channels, so its channels come out permuted (observed: output channel 0 holds channel 1 times its scale); ONNX ConvInteger, Cast and Mul compute the convolution itself, which would not match TenniS",
    ),
    Entry::lowered(
        "conv2d_v2",
        &[
            "format",
            "stride",
            "dilation",
            "padding_value",
            "kernel_packed",
        ],
        &["Conv"],
        (low!(conv2d_v2), Input0),
        T,
    ),
    Entry::lowered(
        "conv2d_winograd",
        &["format", "padding", "padding_value"],
        &["Conv"],
        (low!(conv2d_winograd), Input0),
        T,
    ),
    Entry::lowered(
        "conv2d_winograd_v2",
        &["format", "padding_value"],
        &["Conv"],
        (low!(conv2d_winograd), Input0),
        T,
    ),
    Entry::lowered(
        "crop_nd",
        &["shift"],
        &["Shape", "Sub", "Div", "Where", "Concat", "Slice", "Pad"],
        (low!(crop_nd), Input0),
        T,
    ),
    Entry::lowered(
        "crop_to",
        &["axis", "offset"],
        &["Shape", "Sub", "Concat", "Slice", "Pad"],
        (low!(crop_to), Input0),
        T,
    ),
    Entry::refused(
        "dcn_v2_forward",
        "deformable convolution v2 (learned offsets and masks): not exported; ONNX has it only as DeformConv from operator set 19, which has not been checked against TenniS's kernel",
    ),
    Entry::lowered(
        "depthwise_conv2d",
        &["format", "padding", "stride", "dilation", "padding_value"],
        &["Conv", "Reshape"],
        (low!(conv2d), Input0),
        T,
    )
    .image(),
    Entry::lowered(
        "depthwise_conv2d_v2",
        &[
            "format",
            "stride",
            "dilation",
            "padding_value",
            "kernel_packed",
        ],
        &["Conv", "Reshape"],
        (low!(conv2d_v2), Input0),
        T,
    ),
    Entry::refused(
        "detection_output",
        "SSD post-processing (prior-box decoding, per-class non-maximum suppression, keep_top_k) whose output [1, 1, N, 7] has N decided by the data: ONNX has no such operator, and NonMaxSuppression alone neither decodes the boxes nor orders and cuts the results as TenniS does",
    ),
    Entry::lowered("div", &[], &["Div"], (low!(direct), Broadcast), T),
    Entry::lowered(
        "divided",
        &["size", "padding_value"],
        &["Shape", "Slice", "Mod", "Sub", "Concat", "Pad"],
        (low!(divided), Own),
        T,
    ),
    Entry::lowered("equal", &[], &["Equal"], (low!(equal), Own), T),
    Entry::lowered("erf", &[], &["Erf"], (low!(direct), Input0), T),
    Entry::lowered("exp", &[], &["Exp"], (low!(direct), Input0), T),
    Entry::lowered("flatten", &["dim"], &["Reshape"], (low!(flatten), Own), T),
    Entry::lowered(
        "flatten2d",
        &["dim"],
        &["Flatten"],
        (low!(flatten2d), Own),
        T,
    ),
    Entry::lowered("floor", &[], &["Floor"], (low!(direct), Input0), T),
    Entry::lowered(
        "force_color",
        &[],
        &["Expand"],
        (low!(force_color), Input0),
        T,
    ),
    Entry::lowered(
        "force_gray",
        &["scale"],
        &["Mul", "ReduceSum", "Slice", "Gather", "Equal", "Where"],
        (low!(force_gray), Input0),
        T,
    ),
    Entry::lowered(
        "fused_batch_norm",
        &["dim", "epsilon"],
        &["Reshape", "Sub", "Add", "Sqrt", "Div", "Mul"],
        (low!(fused_batch_norm), Input0),
        T,
    )
    .image(),
    Entry::lowered("gather", &["axis"], &["Gather"], (low!(gather), Own), T),
    Entry::lowered(
        "gather_elements",
        &["axis"],
        &["Shape", "Slice", "ReduceProd", "Reshape", "GatherElements"],
        (low!(gather_elements), Own),
        T,
    ),
    Entry::lowered(
        "gatherv2",
        &[],
        &["Cast", "GatherND"],
        (low!(gatherv2), Own),
        T,
    ),
    Entry::lowered(
        "gemm",
        &["alpha", "beta", "transA", "transB"],
        &["Gemm"],
        (low!(gemm), Own),
        T,
    ),
    Entry::lowered(
        "global_pooling2d",
        &["format", "type"],
        &["GlobalMaxPool", "GlobalAveragePool"],
        (low!(global_pooling2d), Input0),
        T,
    )
    .image(),
    Entry::lowered(
        "hard_sigmoid",
        &["alpha", "beta"],
        &["HardSigmoid"],
        (low!(hard_sigmoid), Input0),
        T,
    ),
    Entry::lowered(
        "inner_prod",
        &["transpose"],
        &["Flatten", "Gemm"],
        (low!(inner_prod), Own),
        T,
    ),
    Entry::lowered(
        "l2_norm",
        &["dim", "epsilon"],
        &["Mul", "ReduceSum", "Add", "Sqrt", "Div"],
        (low!(l2_norm), Input0),
        T,
    ),
    Entry::lowered(
        "leaky_relu",
        &["scale"],
        &["LeakyRelu"],
        (low!(leaky_relu), Input0),
        T,
    ),
    Entry::lowered("matmul", &[], &["MatMul"], (low!(matmul), Own), T),
    Entry::lowered(
        "max",
        &["dim", "keep_dims"],
        &["ReduceMax"],
        (low!(reduce_max), Own),
        T,
    ),
    Entry::lowered("maximum", &[], &["Max"], (low!(direct), Broadcast), T),
    Entry::lowered("mod", &[], &["Mod"], (low!(modulo), Own), T),
    Entry::lowered("mul", &[], &["Mul"], (low!(direct), Broadcast), T),
    Entry::lowered(
        "non_max_suppression_v3",
        &[
            "max_output_size",
            "iou_threshold",
            "score_threshold",
            "mode",
        ],
        &[
            "Slice",
            "Add",
            "Concat",
            "Unsqueeze",
            "NonMaxSuppression",
            "Gather",
            "Cast",
            "Pad",
        ],
        (low!(non_max_suppression_v3), Own),
        O,
    ),
    Entry::lowered(
        "norm_image",
        &["epsilon"],
        &["Flatten", "ReduceMean", "Sqrt", "Add", "Div", "Reshape"],
        (low!(whiten), Input0),
        T,
    ),
    Entry::lowered(
        "pad",
        &["padding_value"],
        &["Slice", "Pad", "Transpose", "Reshape"],
        (low!(pad), Input0),
        T,
    ),
    Entry::lowered(
        "pooling2d",
        &[
            "format",
            "type",
            "padding",
            "padding_type",
            "ksize",
            "stride",
        ],
        &["MaxPool", "AveragePool", "Pad"],
        (low!(pooling2d), Input0),
        T,
    )
    .image(),
    Entry::lowered(
        "pooling2d_v2",
        &["format", "type", "padding_type"],
        &["MaxPool", "AveragePool", "Pad"],
        (low!(pooling2d_v2), Input0),
        N,
    )
    .image(),
    Entry::lowered("pow", &["y"], &["Pow"], (low!(pow), Input0), T),
    Entry::lowered(
        "prelu",
        &["dim"],
        &["Reshape", "PRelu"],
        (low!(prelu), Input0),
        T,
    ),
    Entry::lowered(
        "prewhiten",
        &[],
        &["Flatten", "ReduceMean", "Sqrt", "Max", "Div", "Reshape"],
        (low!(whiten), Input0),
        T,
    ),
    Entry::lowered(
        "prior_box",
        &[
            "min_size",
            "max_size",
            "aspect_ratio",
            "flip",
            "clip",
            "variance",
            "offset",
            "img_size",
            "img_h",
            "img_w",
            "step",
            "step_h",
            "step_w",
        ],
        &[
            "Shape", "Cast", "Slice", "Div", "Range", "Add", "Mul", "Sub", "Concat", "Clip",
            "Expand", "Reshape",
        ],
        (low!(prior_box), Own),
        T,
    ),
    Entry::refused(
        "proposal",
        "Faster R-CNN / FPN region proposals (anchor generation, box decoding, non-maximum suppression, per-level top-n) whose output size depends on the data: ONNX has no such operator",
    ),
    Entry::lowered(
        "quantize",
        &["quantize_scale"],
        &[
            "Mul", "Floor", "Sub", "Equal", "Round", "Sign", "Add", "Where", "Size", "Range",
            "Less", "Clip", "Cast",
        ],
        (low!(quantize), Own),
        O,
    ),
    Entry::lowered(
        "range",
        &[],
        &["Sub", "Div", "Cast", "Mul", "Add", "Less", "Range"],
        (low!(range), Own),
        O,
    ),
    Entry::lowered(
        "reduce_mean",
        &["dims", "keep_dims"],
        &["ReduceMean"],
        (low!(reduce), Own),
        T,
    ),
    Entry::lowered(
        "reduce_sum",
        &["dims", "keep_dims"],
        &["ReduceSum"],
        (low!(reduce), Own),
        T,
    ),
    Entry::lowered("relu", &[], &["Relu"], (low!(direct), Input0), T),
    Entry::lowered("relu_max", &["max"], &["Clip"], (low!(relu_max), Input0), T),
    Entry::lowered(
        "resize_nearest_neighbor",
        &["dim"],
        &["Range", "Floor", "Gather"],
        (low!(resize_nearest_neighbor), Input0),
        T,
    ),
    Entry::lowered(
        "roi_align",
        &["pool_h", "pool_w", "spatial_scale", "sampling_ratio"],
        &["Slice", "Reshape", "Cast", "RoiAlign"],
        (low!(roi_align), Own),
        O,
    ),
    Entry::lowered(
        "rsqrt",
        &[],
        &["Sqrt", "Reciprocal"],
        (low!(rsqrt), Input0),
        T,
    ),
    Entry::refused("sample2d", AFFINE_SAMPLE),
    Entry::refused("sample2d_v2", AFFINE_SAMPLE),
    Entry::lowered(
        "scatter_nd",
        &[],
        &[
            "Shape",
            "Slice",
            "Reshape",
            "Flatten",
            "Unsqueeze",
            "Concat",
            "ScatterND",
        ],
        (low!(scatter_nd), Own),
        T,
    ),
    Entry::lowered(
        "shape_index_patch",
        &["origin_patch", "origin"],
        &["Shape", "Range", "GatherElements"],
        (low!(shape_index_patch), Own),
        N,
    ),
    Entry::lowered("sigmoid", &[], &["Sigmoid"], (low!(direct), Input0), T),
    Entry::lowered(
        "slice",
        &["begin", "size"],
        &["Slice"],
        (low!(slice), Input0),
        T,
    ),
    Entry::lowered(
        "slice_v2",
        &[],
        &["Slice", "Add", "Where"],
        (low!(slice_v2), Input0),
        T,
    ),
    Entry::lowered("slice_v3", &[], &["Slice"], (low!(slice_v3), Input0), T),
    Entry::lowered(
        "softmax",
        &["dim"],
        &["Softmax"],
        (low!(softmax), Input0),
        T,
    ),
    Entry::lowered("softplus", &[], &["Softplus"], (low!(direct), Input0), T),
    Entry::lowered(
        "space_to_batch4d",
        &["block_shape", "padding"],
        &[
            "Pad",
            "Shape",
            "Slice",
            "Div",
            "Concat",
            "Reshape",
            "Transpose",
        ],
        (low!(space_to_batch4d), Input0),
        T,
    ),
    Entry::lowered(
        "split",
        &["axis"],
        &["Cast", "Split"],
        (low!(split), Own),
        T,
    ),
    Entry::lowered("sqrt", &[], &["Sqrt"], (low!(direct), Input0), T),
    Entry::lowered("square", &[], &["Mul"], (low!(square), Input0), T),
    Entry::lowered("squeeze", &["axes"], &["Squeeze"], (low!(squeeze), Own), T),
    Entry::lowered(
        "stack",
        &["axis"],
        &["Unsqueeze", "Concat"],
        (low!(stack), Own),
        T,
    ),
    Entry::lowered(
        "strided_slice",
        &[
            "begin",
            "end",
            "stride",
            "begin_mask",
            "end_mask",
            "ellipsis_mask",
            "new_axis_mask",
            "shrink_axis_mask",
        ],
        &["Unsqueeze", "Slice", "Squeeze"],
        (low!(strided_slice), Own),
        T,
    ),
    Entry::lowered("sub", &[], &["Sub"], (low!(direct), Broadcast), T),
    Entry::lowered("tanh", &[], &["Tanh"], (low!(direct), Input0), T),
    Entry::lowered("tile", &["repeats"], &["Tile"], (low!(tile), Input0), T),
    Entry::lowered(
        "tile_v2",
        &[],
        &["Cast", "Unsqueeze", "Concat", "Tile"],
        (low!(tile_v2), Own),
        T,
    ),
    Entry::lowered("to_float", &[], &["Cast"], (low!(cast_to_float), Input0), T),
    Entry::lowered(
        "topkv2",
        &["number"],
        &["Shape", "Slice", "Min", "TopK", "Cast"],
        (low!(topkv2), Own),
        T,
    ),
    Entry::lowered(
        "transpose_conv2d",
        &["format", "padding", "stride", "dilation", "kernel_packed"],
        &["ConvTranspose"],
        (low!(transpose_conv2d), Input0),
        T,
    ),
    Entry::lowered(
        "unsqueeze",
        &["axes"],
        &["Unsqueeze"],
        (low!(unsqueeze), Own),
        T,
    ),
    Entry::lowered("where", &[], &["Cast", "Where"], (low!(where_), Own), T),
    Entry::refused(
        "winograd_transform_kernel",
        "turns 3x3 convolution weights into TenniS's Winograd form (F(2,3) or F(6,3)), a layout only TenniS's own Winograd kernels read (ONNX Conv takes the 3x3 weights): a step of TenniS's optimizer, not of the network; export the module from before that optimization",
    ),
    Entry::lowered(
        "yolo",
        &["classes", "mask", "anchors"],
        &["Sigmoid", "Where"],
        (low!(yolo), Own),
        T,
    ),
    Entry::refused(
        "yolo_poster",
        "Darknet YOLO post-processing (box decoding, thresholds, non-maximum suppression) over packed (map, classes, mask, anchors) inputs, with an output size decided by the data: ONNX has no such operator and no packed values",
    ),
    // Not registered for the CPU by the TenniS runtime (its CPU build
    // refuses modules holding them), but written by TenniS's own frontends:
    // exported for ONNX runtimes, with no TenniS output to check against.
    Entry::lowered("log", &[], &["Log"], (low!(direct), Input0), U),
    Entry::lowered("minimum", &[], &["Min"], (low!(direct), Broadcast), U),
];
