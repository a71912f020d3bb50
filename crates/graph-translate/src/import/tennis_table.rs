//! The ONNX → TenniS operator table: one entry per ONNX operator with its
//! opset range, the attributes (and constant inputs) it reads, the TenniS
//! operators it becomes, what it refuses, and its lowering. The table
//! drives dispatch ([`entry`]), the support table
//! ([`super::support_table_markdown`]) and the per-operator tests.
//!
//! Every lowering computes in f32 (TenniS's float kernels); the output of
//! every verified entry was checked in the real TenniS runtime on the
//! ONNX conformance cases that use it (`IMPORT_SUPPORT.md` gives counts).

use super::SupportRow;
use super::onnx_graph::{Node, OPSETS};
use super::tennis_cx::{Lowered, Tx};
use super::tennis_ops_basic as basic;
use super::tennis_ops_nn as nn;

/// One operator of the table.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The support-table row (operator, opsets, attributes, operators, limits).
    pub row: SupportRow,
    pub(crate) lower: fn(&mut Tx<'_>, &Node) -> Lowered,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.row.fmt(f)
    }
}

const fn e(
    op: &'static str,
    attrs: &'static str,
    emits: &'static str,
    notes: &'static str,
    lower: fn(&mut Tx<'_>, &Node) -> Lowered,
) -> Entry {
    Entry {
        row: SupportRow {
            op,
            opsets: OPSETS,
            attrs,
            emits,
            notes,
        },
        lower,
    }
}

const fn since(mut x: Entry, since: i64) -> Entry {
    x.row.opsets.0 = since;
    x
}

const F32: &str = "non-f32 inputs";
const UN: fn(&mut Tx<'_>, &Node) -> Lowered = basic::unary;
const BIN: fn(&mut Tx<'_>, &Node) -> Lowered = basic::binary;
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
    e("Neg", "", "mul (by −1)", F32, basic::neg_recip),
    e("Reciprocal", "", "div (1 / x)", F32, basic::neg_recip),
    e("Add", "", "add", F32, BIN),
    e("Sub", "", "sub", F32, BIN),
    e("Mul", "", "mul", F32, BIN),
    e("Div", "", "div", F32, BIN),
    e("Sum", "", "add (chained)", F32, BIN),
    e("Mean", "", "add (chained), div", F32, BIN),
    e("Max", "", "maximum (chained)", F32, BIN),
    e(
        "Min",
        "",
        "mul (by −1), maximum, mul (TenniS has no CPU minimum)",
        F32,
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
        "min, max (attributes or constant inputs)",
        "maximum; mul (by −1), maximum, mul for the upper bound",
        "bounds computed at run time",
        basic::clip,
    ),
    e(
        "Softmax",
        "axis",
        "softmax (opsets < 13: _reshape around it)",
        F32,
        basic::softmax,
    ),
    e("Identity", "", "— (the input itself)", F32, basic::identity),
    e(
        "Dropout",
        "ratio (ignored), training_mode",
        "— (the input itself)",
        "mask output, training_mode",
        basic::identity,
    ),
    e(
        "Reshape",
        "shape (constant), allowzero",
        "_reshape",
        SHAPE,
        basic::reshape,
    ),
    e("Flatten", "axis", "_reshape", SHAPE, basic::reshape),
    e("Squeeze", "axes", "_reshape", SHAPE, basic::reshape),
    e("Unsqueeze", "axes", "_reshape", SHAPE, basic::reshape),
    e("Transpose", "perm", "_transpose", F32, basic::transpose),
    e("Concat", "axis", "concat", F32, basic::concat),
    e(
        "Conv",
        "auto_pad, dilations, group, kernel_shape, pads, strides",
        "conv2d or depthwise_conv2d, add_bias",
        "1-D/3-D, groups other than 1 and depthwise",
        nn::conv,
    ),
    e(
        "MaxPool",
        "auto_pad, ceil_mode, kernel_shape, pads, strides",
        "pooling2d (type 0)",
        "1-D/3-D, dilations, Indices output, floor rounding without enough end padding",
        nn::pool,
    ),
    e(
        "AveragePool",
        "auto_pad, ceil_mode, count_include_pad, kernel_shape, pads, strides",
        "pooling2d (type 1; padding_type 0 or 3)",
        "1-D/3-D, floor rounding without enough end padding",
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
        "gemm (_reshape around it for A of rank > 2)",
        "B that is not a matrix",
        nn::matmul,
    ),
    since(
        e(
            "BatchNormalization",
            "epsilon",
            "batch_norm, batch_scale",
            "training mode",
            nn::batch_norm,
        ),
        9,
    ),
];

/// The entry for ONNX operator `op`.
pub fn entry(op: &str) -> Option<&'static Entry> {
    TABLE.iter().find(|e| e.row.op == op)
}

/// The support-table rows, sorted by operator.
pub fn support_rows() -> Vec<SupportRow> {
    let mut v: Vec<SupportRow> = TABLE.iter().map(|e| e.row).collect();
    v.sort_by_key(|r| r.op);
    v
}
