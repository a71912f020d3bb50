//! The ONNX → TenniS operator table: one entry per ONNX operator with its
//! opset range, the attributes (and constant inputs) it reads, the TenniS
//! operators it becomes, what it refuses, and its lowering. The table
//! drives dispatch ([`entry`]), the support table
//! ([`super::support_table_markdown`]) and the per-operator tests. Its
//! rows are grouped by operator family, one file each (`tennis_table/`).
//!
//! Lowerings compute in f32 (TenniS's float kernels) unless their row
//! says otherwise (integer, boolean and f64 tensors keep their type in
//! the comparisons, logic, casts, integer arithmetic and the operators
//! that only move elements); the output of every verified entry was checked in the real TenniS runtime on the
//! ONNX conformance cases that use it (`IMPORT_SUPPORT.md` gives counts).

use std::sync::LazyLock;

use super::SupportRow;
use super::onnx_graph::Node;
use super::table::{self, any_dtype, refused, since, until};
use super::tennis_cx::{Lowered, Tx};

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

/// The limit of the f32 rows.
const F32: &str = "non-f32 inputs";
/// The limit of the comparisons.
const NAN: &str = "NaN operands (not checked), BOOL operands";
/// The limit of the numeric rows.
const NUM: &str = "BOOL inputs (integers and f64 computed in their type)";

/// The limit of the rows that need static shapes.
const DYN_SHAPE: &str = "symbolic dimensions; shapes computed at run time";

mod activation;
mod elementwise;
mod index;
mod layers;
mod logic;
mod quant;
mod recurrent;
mod reduce;
mod shape;

/// The table: every family's rows.
pub static TABLE: LazyLock<Vec<Entry>> = LazyLock::new(|| {
    [
        elementwise::ELEMENTWISE,
        logic::LOGIC,
        layers::LAYERS,
        activation::ACTIVATION,
        reduce::REDUCE,
        shape::SHAPE,
        index::INDEX,
        recurrent::RECURRENT,
        quant::QUANT,
    ]
    .concat()
});

/// Why the import refuses `op`, where it knows more than "no operator".
pub fn refusal_reason(op: &str) -> Option<&'static str> {
    table::refusal(&[TABLE.as_slice()], op)
}

/// The entry for ONNX operator `op`, when the import lowers it.
pub fn entry(op: &str) -> Option<&'static Entry> {
    table::lowering(&[TABLE.as_slice()], op)
}

/// The support-table rows, sorted by operator.
pub fn support_rows() -> Vec<SupportRow> {
    table::support_rows(&[TABLE.as_slice()])
}
