//! The ONNX → TenniS operator table: one entry per ONNX operator with its
//! opset range, the attributes (and constant inputs) it reads, the TenniS
//! operators it becomes, what it refuses, and its lowering. The table
//! drives dispatch ([`entry`]), the support table
//! ([`super::support_table_markdown`]) and the per-operator tests.
//!
//! Lowerings compute in f32 (TenniS's float kernels) unless their row
//! says otherwise (integer, boolean and f64 tensors keep their type in
//! the comparisons, logic, casts, integer arithmetic and the operators
//! that only move elements); the output of every verified entry was checked in the real TenniS runtime on the
//! ONNX conformance cases that use it (`IMPORT_SUPPORT.md` gives counts).

use super::SupportRow;
use super::onnx_graph::Node;
use super::table::{self, any_dtype, refused, since, until};
use super::tennis_cx::{Lowered, Tx};
use super::tennis_ops_act as act;
use super::tennis_ops_basic as basic;
use super::tennis_ops_index as idx;
use super::tennis_ops_logic as logic;
use super::tennis_ops_nn as nn;
use super::tennis_ops_range as rng;
use super::tennis_ops_reduce as red;
use super::tennis_ops_rnn as rnn;
use super::tennis_ops_shape as shp;
use super::tennis_ops_slice as slc;

/// A lowering of the TenniS import (opaque outside the crate).
#[derive(Clone, Copy)]
pub struct Lower(pub(crate) fn(&mut Tx, &Node) -> Lowered);

/// One operator of the table.
pub type Entry = table::Entry<Lower>;

/// Shorthand for a row with the full opset range.
const fn e(
    op: &'static str,
    attrs: &'static str,
    emits: &'static str,
    notes: &'static str,
    lower: fn(&mut Tx, &Node) -> Lowered,
) -> Entry {
    table::lowered(op, attrs, emits, notes, Lower(lower))
}

const F32: &str = "non-f32 inputs";
const NAN: &str = "NaN operands (not checked), BOOL operands";
const NUM: &str = "BOOL inputs (integers and f64 computed in their type)";

const UN: fn(&mut Tx, &Node) -> Lowered = basic::unary;
const BIN: fn(&mut Tx, &Node) -> Lowered = basic::binary;
const SHAPE: &str = "symbolic dimensions; shapes computed at run time";

/// The table.
pub static TABLE: &[Entry] = &[
    e("Relu", "", "relu", F32, UN),
    e("Sigmoid", "", "sigmoid", F32, UN),
    e("Tanh", "", "tanh", F32, UN),
    e("Exp", "", "exp", F32, UN),
    e("Sqrt", "", "sqrt", F32, UN),
    e("Abs", "", "abs", F32, UN),
    e("Floor", "", "floor", F32, UN),
    e("Ceil", "", "ceil", F32, UN),
    e("Neg", "", "mul (by −1 of x's type)", NUM, basic::neg_recip),
    e(
        "Reciprocal",
        "",
        "div (1 / x)",
        "integer and BOOL inputs; 1 / 0 gives the largest value in TenniS, not inf (not checked)",
        basic::neg_recip,
    ),
    e("Add", "", "add", NUM, BIN),
    e("Sub", "", "sub", NUM, BIN),
    e("Mul", "", "mul", NUM, BIN),
    e(
        "Div",
        "",
        "div (integers truncated toward zero)",
        "BOOL inputs; a division by zero gives ±the largest value in TenniS, not ±inf (not checked)",
        BIN,
    ),
    since(
        e(
            "Mod",
            "fmod",
            "mod (fmod 1); fmod 0: mod, maximum, equal, _cast, add, where",
            "float inputs (TenniS's mod takes integers)",
            logic::modulo,
        ),
        10,
    ),
    e("Sum", "", "add (chained)", NUM, BIN),
    e(
        "Mean",
        "",
        "add (chained), div",
        "integer and BOOL inputs",
        BIN,
    ),
    e("Max", "", "maximum (chained)", NUM, BIN),
    e(
        "Min",
        "",
        "mul (by −1), maximum, mul (TenniS has no CPU minimum); integers: maximum, equal, where",
        NUM,
        BIN,
    ),
    e("LeakyRelu", "alpha", "leaky_relu", F32, basic::leaky),
    e(
        "PRelu",
        "slope (broadcast)",
        "maximum, sub, mul, add",
        "a slope that widens x",
        basic::leaky,
    ),
    e(
        "Clip",
        "min, max (attributes or inputs, constant or computed at run time)",
        "maximum; mul (by −1), maximum, mul for the upper bound (integers: maximum, equal, where)",
        "f64 and BOOL inputs",
        basic::clip,
    ),
    e(
        "Softmax",
        "axis",
        "softmax (opsets < 13: _reshape around it)",
        F32,
        basic::softmax,
    ),
    any_dtype(e(
        "Identity",
        "",
        "— (the input itself; any element type)",
        "",
        basic::identity,
    )),
    e(
        "Dropout",
        "ratio (ignored), training_mode",
        "— (the input itself)",
        "a mask output that is read, training_mode",
        basic::identity,
    ),
    any_dtype(e(
        "Reshape",
        "shape (constant or computed at run time), allowzero",
        "_reshape (shape computed at run time: _reshape_v2)",
        "symbolic input dimensions; allowzero 1 with a shape computed at run time",
        basic::reshape,
    )),
    any_dtype(e("Flatten", "axis", "_reshape", SHAPE, basic::reshape)),
    any_dtype(e("Squeeze", "axes", "_reshape", SHAPE, basic::reshape)),
    any_dtype(e("Unsqueeze", "axes", "_reshape", SHAPE, basic::reshape)),
    any_dtype(e(
        "Transpose",
        "perm",
        "_transpose (any element type)",
        "",
        basic::transpose,
    )),
    any_dtype(e(
        "Concat",
        "axis",
        "concat (any element type)",
        "",
        basic::concat,
    )),
    e(
        "Conv",
        "auto_pad, dilations, group, kernel_shape, pads, strides",
        "conv2d or depthwise_conv2d, add_bias; other groups: strided_slice, conv2d per group, concat",
        "1-D/3-D",
        nn::conv,
    ),
    e(
        "MaxPool",
        "auto_pad, ceil_mode, kernel_shape, pads, strides",
        "pooling2d (type 0); strided_slice first where floor rounding leaves cells in no window",
        "1-D/3-D, dilations, Indices output",
        nn::pool,
    ),
    e(
        "AveragePool",
        "auto_pad, ceil_mode, count_include_pad, kernel_shape, pads, strides",
        "pooling2d (type 1; padding_type 0 or 3); strided_slice first where floor rounding leaves cells in no window",
        "1-D/3-D",
        nn::pool,
    ),
    e(
        "GlobalAveragePool",
        "",
        "global_pooling2d (type 1)",
        "inputs other than NCHW",
        nn::global_pool,
    ),
    e(
        "GlobalMaxPool",
        "",
        "global_pooling2d (type 0)",
        "inputs other than NCHW",
        nn::global_pool,
    ),
    e("Gemm", "alpha, beta, transA, transB", "gemm", F32, nn::gemm),
    e(
        "MatMul",
        "",
        "gemm (_reshape around it; batched B: strided_slice, gemm per batch, concat)",
        "more than 256 batches, symbolic dimensions",
        nn::matmul,
    ),
    e("Erf", "", "erf", F32, act::unary),
    e(
        "Softplus",
        "",
        "softplus (log(exp(x) + 1); inf above x ≈ 88, where f32 exp overflows)",
        F32,
        act::unary,
    ),
    since(
        e(
            "LayerNormalization",
            "axis, epsilon, stash_type 1; outputs Y, Mean, InvStdDev",
            "reduce_mean per axis, sub, mul, add, sqrt, div, mul, add",
            "stash_type 0, symbolic dimensions",
            act::norm,
        ),
        17,
    ),
    since(
        e(
            "RMSNormalization",
            "axis, epsilon, stash_type 1",
            "mul, reduce_mean per axis, add, sqrt, div, mul",
            "stash_type 0, symbolic dimensions",
            act::norm,
        ),
        23,
    ),
    e("HardSigmoid", "alpha, beta", "hard_sigmoid", F32, act::hard),
    since(e("HardSwish", "", "hard_sigmoid, mul", F32, act::hard), 14),
    e(
        "Elu",
        "alpha",
        "maximum, sub, exp, sub, mul, add",
        F32,
        act::elu,
    ),
    e(
        "Selu",
        "alpha, gamma",
        "maximum, sub, exp, sub, mul, add, mul",
        F32,
        act::elu,
    ),
    e(
        "Pow",
        "exponent (constant, one value)",
        "pow",
        "an exponent computed at run time or with several values",
        act::pow,
    ),
    e(
        "ReduceMean",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "reduce_mean per axis, _reshape",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceSum",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "reduce_sum per axis, _reshape",
        "axes computed at run time",
        red::reduce,
    ),
    e(
        "ReduceMax",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "max per axis, _reshape",
        "axes computed at run time, empty axes",
        red::reduce,
    ),
    e(
        "ReduceMin",
        "axes (attribute or constant input), keepdims, noop_with_empty_axes",
        "mul (by −1), max per axis, mul (by −1), _reshape (TenniS has no CPU min)",
        "axes computed at run time, empty axes",
        red::reduce,
    ),
    e(
        "ArgMax",
        "axis, keepdims",
        "max, sub, argmax (int32 indices where ONNX has int64), _reshape; select_last_index 1: strided_slice (step −1) first, sub from L − 1",
        "empty or symbolic axes",
        red::argmax,
    ),
    e(
        "ArgMin",
        "axis, keepdims",
        "mul (by −1), max, sub, argmax (int32 indices where ONNX has int64), _reshape; select_last_index 1: strided_slice (step −1) first, sub from L − 1",
        "empty or symbolic axes",
        red::argmax,
    ),
    since(
        e(
            "Trilu",
            "upper, k (constant or computed at run time)",
            "where with a uint8 mask constant (k computed at run time: maximum, equal)",
            "BOOL inputs, empty or symbolic last axes",
            logic::trilu,
        ),
        14,
    ),
    any_dtype(e(
        "Slice",
        "starts, ends, axes, steps (attributes, constant inputs or computed at run time)",
        "strided_slice; parameters computed at run time: slice_v3 after maximum, equal, where (ONNX's clamping), axes made positive",
        "empty results of constant parameters, axes out of increasing order (TenniS fails at run time)",
        shp::slice,
    )),
    any_dtype(e(
        "Split",
        "axis, split (attribute or constant input), num_outputs",
        "strided_slice per output",
        "sizes computed at run time, symbolic split axis",
        shp::split,
    )),
    any_dtype(e(
        "Gather",
        "axis, indices",
        "gather (indices computed at run time: negative ones wrapped with maximum, equal, add, where)",
        "symbolic dimensions",
        shp::gather,
    )),
    any_dtype(e(
        "Tile",
        "repeats (constant)",
        "tile",
        "repeats of 0",
        shp::tile,
    )),
    e(
        "Pad",
        "mode constant, pads (constant or computed at run time), constant_value (constant), axes (constant)",
        "pad per padded axis (pads computed at run time: _reshape, _transpose, strided_slice, mul, a pad per listed axis)",
        "modes reflect/edge/wrap, a constant_value computed at run time, negative constant pads",
        shp::pad,
    ),
    any_dtype(e(
        "Expand",
        "shape (constant)",
        "_reshape, broadcast",
        SHAPE,
        shp::expand,
    )),
    since(
        e(
            "Resize",
            "mode nearest, coordinate_transformation_mode, nearest_mode, scales or sizes (constants)",
            "_resize2d (type 3)",
            "linear/cubic, factors that are not whole, downsampling, other coordinate modes",
            shp::resize,
        ),
        10,
    ),
    until(
        e(
            "Upsample",
            "mode nearest, scales",
            "_resize2d (type 3)",
            "linear, factors that are not whole",
            shp::resize,
        ),
        9,
    ),
    e(
        "ConstantOfShape",
        "shape (constant), value (f32)",
        "constant_of_shape (a <const> when small)",
        "shapes computed at run time, values of other types",
        shp::constant_of_shape,
    ),
    e(
        "Cast",
        "to (f32, f64, integers, bool)",
        "_cast (to BOOL: equal with 0, then not as equal of its uint8 with 0)",
        "float16, strings and other types TenniS lacks",
        logic::cast,
    ),
    since(
        e(
            "Range",
            "— (folded when start, limit and delta are constants)",
            "sub, _cast (f64), div, ceil, _cast (int32), maximum, range (int32), _cast, mul, add",
            "BOOL and other types Range lacks, non-scalar inputs",
            rng::range,
        ),
        11,
    ),
    e(
        "Shape",
        "start, end",
        "— (folded when the sizes are known); else _shape, _cast (int64), strided_slice",
        "",
        slc::shape_dyn,
    ),
    since(
        e(
            "CastLike",
            "target_type (its element type)",
            "as Cast",
            "float16, strings and other types TenniS lacks",
            logic::cast,
        ),
        15,
    ),
    e(
        "Equal",
        "",
        "equal (BOOL operands as uint8)",
        "operands of two types",
        logic::compare,
    ),
    e(
        "Greater",
        "",
        "maximum, equal, _cast, equal (not)",
        NAN,
        logic::compare,
    ),
    e(
        "Less",
        "",
        "maximum, equal, _cast, equal (not)",
        NAN,
        logic::compare,
    ),
    since(
        e("GreaterOrEqual", "", "maximum, equal", NAN, logic::compare),
        12,
    ),
    since(
        e("LessOrEqual", "", "maximum, equal", NAN, logic::compare),
        12,
    ),
    e("Not", "", "_cast (uint8), equal with 0", "", logic::logical),
    e(
        "Sign",
        "",
        "maximum, equal, _cast, equal (not), sub: (x > 0) − (x < 0)",
        "NaN inputs (not checked), BOOL",
        logic::sign_round,
    ),
    since(
        e(
            "Round",
            "",
            "floor, sub, maximum, equal, _cast, mul, add (half to even, exact)",
            "non-float inputs",
            logic::sign_round,
        ),
        11,
    ),
    e("And", "", "_cast (uint8), mul, _cast", "", logic::logical),
    e(
        "Or",
        "",
        "_cast (uint8), maximum, _cast",
        "",
        logic::logical,
    ),
    e(
        "Xor",
        "",
        "_cast (uint8), equal, equal with 0",
        "",
        logic::logical,
    ),
    e(
        "Where",
        "",
        "where (BOOL operands as uint8)",
        "operands of two types",
        logic::where_,
    ),
    e(
        "TopK",
        "axis, k (attribute or constant input), largest, sorted",
        "_transpose (other axes), mul (by −1, largest 0), topkv2, _field; indices recomputed in ONNX's order for equal values (equal, maximum, reduce_sum, gemm), _cast",
        "sorted 0, largest 0 on integers, K computed at run time",
        idx::topk,
    ),
    e(
        "ConvTranspose",
        "dilations, kernel_shape, pads, strides, auto_pad NOTSET/VALID, output_shape",
        "transpose_conv2d, add_bias",
        "groups, output_padding, SAME auto-padding, 1-D/3-D",
        nn::conv_transpose,
    ),
    since(
        e(
            "GatherND",
            "batch_dims 0",
            "gatherv2 (negative indices wrapped: maximum, equal, add, where, _cast)",
            "batch_dims other than 0, symbolic dimensions",
            idx::gather_nd,
        ),
        11,
    ),
    since(
        e(
            "ScatterND",
            "reduction none",
            "_reshape, scatter_nd (index tuples made linear: mul, strided_slice, add)",
            "reductions, symbolic dimensions",
            idx::scatter_nd,
        ),
        11,
    ),
    since(
        e(
            "RoiAlign",
            "mode avg, coordinate_transformation_mode output_half_pixel, output_height, output_width, sampling_ratio, spatial_scale",
            "_cast, concat (rois [n, 5]), roi_align",
            "mode max, half_pixel coordinates (the default from opset 16)",
            idx::roi_align,
        ),
        10,
    ),
    e(
        "LSTM",
        "direction, hidden_size, default activations",
        "LSTM (packed Y, Y_h, Y_c), _field; reverse: strided_slice (step −1) around a forward LSTM",
        "sequence_lens, peepholes, clip, input_forget, layout 1, other activations",
        rnn::lstm,
    ),
    e(
        "GatherElements",
        "axis",
        "_reshape, broadcast, gather_elements",
        "indices narrower than the data off the axis, symbolic dimensions",
        idx::gather_elements,
    ),
    e(
        "LRN",
        "alpha, beta, bias, size",
        "mul, conv2d (channel-window sum), mul, add, pow, div",
        "inputs other than NCHW, more than 4096 channels",
        nn::lrn,
    ),
    e(
        "BatchNormalization",
        "epsilon, spatial (before opset 9)",
        "batch_norm, batch_scale",
        "training mode; spatial 0",
        nn::batch_norm,
    ),
    // ONNX operators TenniS has a near relative of that computes
    // something else: refused with the reason.
    refused(
        "NonMaxSuppression",
        "TenniS's non_max_suppression_v3 returns a fixed number of box indices padded with -1, one class of one batch; ONNX returns only the selected [batch, class, box] triples (only the exact pattern the TenniS export writes for non_max_suppression_v3 is imported back, as that operator)",
    ),
    refused("GRU", "TenniS has no GRU"),
    refused("RNN", "TenniS has no simple RNN"),
];

/// Why the import refuses `op`, where it knows more than "no operator".
pub fn refusal_reason(op: &str) -> Option<&'static str> {
    table::refusal(&[TABLE], op)
}

/// The entry for ONNX operator `op`, when the import lowers it.
pub fn entry(op: &str) -> Option<&'static Entry> {
    table::lowering(&[TABLE], op)
}

/// The support-table rows, sorted by operator.
pub fn support_rows() -> Vec<SupportRow> {
    table::support_rows(&[TABLE])
}
