//! The TenniS → ONNX operator table: every operator the TenniS C++ runtime
//! registers for the CPU, lowered or refused with the reason. The table
//! drives the exporter ([`super::tennis`]), [`super::tennis_ops`], the
//! per-operator tests and the support table (`SUPPORT.md`).
//!
//! This file says what a row holds ([`Lowering`]: the lowering and what
//! the exporter knows of the value it writes); the rows are in
//! `tennis_table/rows.rs`.

use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::Result;
use super::table::Verified;
use super::tennis::{Call, Exporter};

/// A lowering: writes the ONNX nodes of one TenniS operator.
pub type LowerFn = for<'a, 'n> fn(&mut Exporter<'a>, &Node, &Call<'n>) -> Result<()>;

/// A rule reading a node (and what is known of its inputs): a rank or a
/// length, `None` when not known.
pub type RuleFn = for<'a, 'n> fn(&Exporter<'a>, &'n Node) -> Option<usize>;

/// A rule giving the element type of a node's output.
pub type ElemFn = for<'a, 'n> fn(&Exporter<'a>, &'n Node) -> DataType;

/// A lowering and what the exporter knows of the value it writes: its
/// rank, its element type, its length (1-D integer values) and whether it
/// packs several values.
#[derive(Clone, Copy)]
pub struct Lowering {
    /// Writes the ONNX nodes.
    pub lower: LowerFn,
    /// How the output's rank follows from the inputs'.
    pub rank: Rank,
    /// The output's element type.
    pub elem: Elem,
    /// The number of elements of a 1-D integer output (shapes, indices),
    /// where static.
    pub len: Len,
    /// The output packs several values that `_field` takes out.
    pub packed: Option<Packed>,
}

impl Lowering {
    /// `lower`, its output of rank `rank`, `FLOAT`, of no static length.
    pub const fn new(lower: LowerFn, rank: Rank) -> Self {
        Lowering {
            lower,
            rank,
            elem: Elem::Float,
            len: Len::Unknown,
            packed: None,
        }
    }

    /// The same lowering, its output of element type `elem`.
    pub const fn elem(mut self, elem: Elem) -> Self {
        self.elem = elem;
        self
    }

    /// The same lowering, its output's length following `len`.
    pub const fn len(mut self, len: Len) -> Self {
        self.len = len;
        self
    }

    /// The same lowering, its output packing the values `packed` says.
    pub const fn packed(mut self, packed: Packed) -> Self {
        self.packed = Some(packed);
        self
    }
}

/// How an output's rank follows from the inputs'.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum Rank {
    /// The rank of input 0.
    Input0,
    /// The larger rank of inputs 0 and 1 (broadcasting).
    Broadcast,
    /// Always this rank.
    Fixed(usize),
    /// The operator's own rule.
    Own(RuleFn),
    /// The operator's own rule, reading numbers of the file's data (shape
    /// lengths, a target rank): a rank over `MAX_RANK` is taken as not
    /// known.
    Data(RuleFn),
}

/// The element type of an output.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum Elem {
    /// `FLOAT`.
    Float,
    /// The type of input 0.
    Input0,
    /// Always this type.
    Fixed(DataType),
    /// The operator's own rule.
    Own(ElemFn),
}

/// The number of elements of a 1-D integer output.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum Len {
    /// Not known (or not a 1-D integer value).
    Unknown,
    /// The length of input 0.
    Input0,
    /// The operator's own rule.
    Own(RuleFn),
}

/// The values an operator with several outputs packs into one (`_field`
/// takes them out; see `tennis/packed.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Packed {
    /// `chunks` parts of the input.
    Chunk,
    /// As many parts as input 1 has elements.
    Split,
    /// Values and `INT32` indices.
    TopKV2,
    /// Four fields (the output, two `INT32` parameters, the anchors).
    Yolo,
    /// Three outputs of `LSTM`.
    Lstm,
}

/// The table's lowering of a method of the exporter, with the rank of its
/// output.
macro_rules! low {
    ($f:ident, $rank:expr) => {{
        fn f(e: &mut Exporter<'_>, n: &Node, c: &Call<'_>) -> Result<()> {
            e.$f(n, c)
        }
        Lowering::new(f, $rank)
    }};
}

/// A method of the exporter as a [`RuleFn`].
macro_rules! rule {
    ($f:ident) => {{
        fn f(e: &Exporter<'_>, n: &Node) -> Option<usize> {
            e.$f(n)
        }
        f as RuleFn
    }};
}

/// A method of the exporter as an element-type rule ([`Elem::Own`] of an
/// [`ElemFn`]).
macro_rules! elem {
    ($f:ident) => {{
        fn f(e: &Exporter<'_>, n: &Node) -> DataType {
            e.$f(n)
        }
        Elem::Own(f as ElemFn)
    }};
}

// What the rows say of verification and of the refused operators.

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

mod rows;

pub use rows::TABLE;
