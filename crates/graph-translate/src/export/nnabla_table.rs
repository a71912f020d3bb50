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

/// How an output's shape (or else its rank) follows from the inputs' (for
/// variables a network leaves undeclared; `nnabla/infer.rs`).
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
    /// Input 0's dimensions in the order of `axes`.
    Transpose,
    /// nnabla's pooled sizes of the last `kernel` axes (`stride`, `pad`,
    /// `ignore_border`).
    Pool,
    /// Input 0's first two dimensions, then 1s.
    GlobalPool,
    /// A convolution's sizes from input 0 and the weight (input 1): `pad`,
    /// `stride`, `dilation`.
    Conv,
    /// An affine's: input 0's dimensions before `base_axis`, then the
    /// weight's (input 1) after its first.
    Affine,
    /// The `shape` attribute.
    Reshape,
    /// One value per matrix of input 0's last two axes.
    PerMatrix,
    /// `AffineGrid`'s: batch, `size`, 2.
    AffineGrid,
    /// One axis fewer than input 0.
    Split,
    /// One axis more than input 0.
    Stack,
    /// The larger rank of inputs 0 and 1 (the dimensions are the
    /// function's own).
    LargerRank,
    /// The function's own rule, not inferred: its outputs need declared
    /// shapes where a lowering reads them.
    Custom,
}

use Shape::{
    Affine, AffineGrid, Broadcast, Conv, Custom, GlobalPool, LargerRank, PerMatrix, Pool, Reduce,
    Reshape, Same, SameRank, Split, Stack, Transpose,
};

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

mod array;
mod elementwise;
mod layers;
mod normalization;
mod quantization;
mod signal;

/// Every function of nnabla 1.39, in the order of its function list.
pub static TABLE: LazyLock<Vec<Entry<Lowering>>> = LazyLock::new(|| {
    [
        layers::LAYERS,
        normalization::NORMALIZATION,
        elementwise::ELEMENTWISE,
        array::ARRAY,
        signal::SIGNAL,
        quantization::QUANTIZATION,
    ]
    .concat()
});
