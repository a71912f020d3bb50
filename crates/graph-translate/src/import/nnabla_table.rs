//! The ONNX → NNabla operator table: one entry per ONNX operator with its
//! opset range, the attributes (and constant inputs) it reads, the NNabla
//! functions it becomes, what it refuses, and its lowering. The table
//! drives dispatch ([`entry`]), the support table
//! ([`super::support_table_markdown`]) and the per-operator tests. Its
//! rows are grouped by operator family, one file each (`nnabla_table/`).

use std::sync::LazyLock;

use super::SupportRow;
use super::nnabla_cx::{Cx, Lowered};
use super::onnx_graph::Node;
use super::table;
use super::table::{since, until};

/// A lowering of the NNabla import (opaque outside the crate).
#[derive(Clone, Copy)]
pub struct Lower(pub(crate) fn(&mut Cx<'_>, &Node) -> Lowered);

/// One operator of the table.
pub type Entry = table::Entry<Lower>;

/// Shorthand for a row with the full opset range.
pub(super) const fn e(
    op: &'static str,
    attrs: &'static str,
    emits: &'static str,
    notes: &'static str,
    lower: fn(&mut Cx<'_>, &Node) -> Lowered,
) -> Entry {
    table::lowered(op, attrs, emits, notes, Lower(lower))
}

/// The limit of most rows.
const F32: &str = "non-f32 inputs";

mod attention;
mod elementwise;
mod index;
mod layers;
mod loss;
mod normalization;
mod quantization;
mod recurrent;
mod reduce;
mod shape;

/// The table: every family's rows.
pub static TABLE: LazyLock<Vec<Entry>> = LazyLock::new(|| {
    [
        elementwise::ELEMENTWISE,
        shape::SHAPE,
        index::INDEX,
        layers::LAYERS,
        reduce::REDUCE,
        normalization::NORMALIZATION,
        recurrent::RECURRENT,
        loss::LOSS,
        attention::ATTENTION,
        quantization::QUANTIZATION,
    ]
    .concat()
});

/// The entry for ONNX operator `op`.
pub fn entry(op: &str) -> Option<&'static Entry> {
    table::lowering(&[TABLE.as_slice()], op)
}

/// The support-table rows, sorted by operator.
pub fn support_rows() -> Vec<SupportRow> {
    table::support_rows(&[TABLE.as_slice()])
}
