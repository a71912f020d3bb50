//! The shape of an import table entry, shared by the NNabla and TenniS
//! import tables: one generic [`Entry`] parameterised by the target's
//! lowering (as [`crate::export`]'s entries are by theirs), and the
//! shorthands the tables' rows are written with.

use super::SupportRow;
use super::onnx_graph::{LOWERED_FROM, OPSETS};

/// One ONNX operator of an import table: its support-table row, and its
/// lowering `L` (the target's), or the reason the target refuses it.
#[derive(Clone, Copy)]
pub struct Entry<L: 'static> {
    /// The support-table row (operator, opsets, attributes, emitted
    /// operators, limits).
    pub row: SupportRow,
    /// The lowering; `None` for an operator refused with [`Entry::reason`].
    pub(crate) lower: Option<L>,
    /// Why the import refuses the operator (an entry without a lowering):
    /// the target has a near relative of it that computes something else.
    pub(crate) reason: &'static str,
    /// The lowering only moves elements: it takes every element type the
    /// target has and its outputs keep the type of its first input.
    pub(crate) any_dtype: bool,
}

impl<L> Entry<L> {
    /// Lowest opset.
    pub fn since(&self) -> i64 {
        self.row.opsets.0
    }

    /// Highest opset.
    pub fn until(&self) -> i64 {
        self.row.opsets.1
    }

    /// Whether the import lowers the operator (rather than refusing it).
    pub fn is_lowered(&self) -> bool {
        self.lower.is_some()
    }

    /// Why the import refuses the operator (empty when it is lowered).
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

impl<L> std::fmt::Debug for Entry<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.row.fmt(f)
    }
}

/// A row with the full opset range, lowered by `lower`.
pub(crate) const fn lowered<L>(
    op: &'static str,
    attrs: &'static str,
    emits: &'static str,
    notes: &'static str,
    lower: L,
) -> Entry<L> {
    Entry {
        row: SupportRow {
            op,
            opsets: (LOWERED_FROM, OPSETS.1),
            attrs,
            emits,
            notes,
        },
        lower: Some(lower),
        reason: "",
        any_dtype: false,
    }
}

/// An operator the import refuses, with the reason (no support row).
#[cfg_attr(not(feature = "tennis"), allow(dead_code))]
pub(crate) const fn refused<L>(op: &'static str, reason: &'static str) -> Entry<L> {
    Entry {
        row: SupportRow {
            op,
            opsets: (LOWERED_FROM, OPSETS.1),
            attrs: "",
            emits: "",
            notes: "",
        },
        lower: None,
        reason,
        any_dtype: false,
    }
}

/// A row from opset `since` on.
pub(crate) const fn since<L>(mut x: Entry<L>, since: i64) -> Entry<L> {
    x.row.opsets.0 = since;
    x
}

/// A row up to opset `until`.
pub(crate) const fn until<L>(mut x: Entry<L>, until: i64) -> Entry<L> {
    x.row.opsets.1 = until;
    x
}

/// An entry whose lowering only moves elements ([`Entry::any_dtype`]).
#[cfg_attr(not(feature = "tennis"), allow(dead_code))]
pub(crate) const fn any_dtype<L>(mut x: Entry<L>) -> Entry<L> {
    x.any_dtype = true;
    x
}

/// The first entry of `tables` that lowers ONNX operator `op`.
pub(crate) fn lowering<L>(tables: &[&'static [Entry<L>]], op: &str) -> Option<&'static Entry<L>> {
    tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|e| e.row.op == op && e.lower.is_some())
}

/// Why `tables` refuse ONNX operator `op`, where they name a reason.
#[cfg_attr(not(feature = "tennis"), allow(dead_code))]
pub(crate) fn refusal<L>(tables: &[&'static [Entry<L>]], op: &str) -> Option<&'static str> {
    tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|e| e.row.op == op && e.lower.is_none())
        .map(|e| e.reason)
}

/// The support-table rows of the lowered entries of `tables` (old opsets
/// widened), sorted by operator.
pub(crate) fn support_rows<L>(tables: &[&'static [Entry<L>]]) -> Vec<SupportRow> {
    let mut v: Vec<SupportRow> = tables
        .iter()
        .flat_map(|t| t.iter())
        .filter(|e| e.lower.is_some())
        .map(|e| super::legacy::widen(e.row))
        .collect();
    v.sort_by_key(|r| r.op);
    v
}

/// Defines one table-row lowering per ONNX operator, each a call of a
/// shared lowering with that operator's explicit parameters, so that a
/// row names exactly what it does: `lowerings!(Ctx; /// doc
/// name(cx, node) => body; ...)` gives `pub(crate) fn name(cx: &mut Ctx,
/// node: &Node) -> Lowered { body }`.
macro_rules! lowerings {
    ($cx_ty:ty; $($(#[$m:meta])* $name:ident($cx:ident, $node:ident) => $body:expr;)*) => {
        $(
            $(#[$m])*
            pub(crate) fn $name($cx: &mut $cx_ty, $node: &Node) -> Lowered {
                $body
            }
        )*
    };
}
pub(crate) use lowerings;
