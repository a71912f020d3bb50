//! What this crate's conversions do with one operator, in the words of the
//! published support tables (`IMPORT_SUPPORT.md`, `SUPPORT.md`), which are
//! generated from the same operator tables: a viewer shows these lines
//! beside an operator's reference link.

/// One conversion of an operator: its direction and what the support table
/// says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Conversion {
    /// The direction, e.g. `ONNX → NNabla`.
    pub direction: &'static str,
    /// Whether the conversion lowers the operator (false: refused, or not
    /// in the table).
    pub lowered: bool,
    /// The support table's words: the operators written, the opsets, the
    /// attributes read and the limits; or why it is refused.
    pub text: String,
    /// The operators the conversion writes, as the table names them
    /// (`Convolution (+ Pad)`); empty when refused, and for ONNX control
    /// flow, which is rewritten before lowering.
    pub writes: String,
}

/// Joins the non-empty parts with `; `.
#[cfg(any(feature = "nnabla", feature = "tennis"))]
fn join(parts: &[String]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("; ")
}

/// The import of ONNX operator `op` into one target: its support row, or
/// the refusal of its table.
#[cfg(any(feature = "nnabla", feature = "tennis"))]
fn import_row(
    direction: &'static str,
    rows: Vec<crate::import::SupportRow>,
    refusal: Option<&'static str>,
    op: &str,
) -> Conversion {
    if let Some(r) = rows.into_iter().find(|r| r.op == op) {
        let mut parts = vec![
            format!("as {}", r.emits),
            format!("opsets {}–{}", r.opsets.0, r.opsets.1),
        ];
        if !r.attrs.is_empty() {
            parts.push(format!("reads {}", r.attrs));
        }
        if !r.notes.is_empty() {
            parts.push(format!("refused: {}", r.notes));
        }
        return Conversion {
            direction,
            lowered: true,
            text: join(&parts),
            writes: r.emits.to_string(),
        };
    }
    let text = match refusal.filter(|r| !r.is_empty()) {
        Some(r) => format!("refused: {r}"),
        None => "not imported".to_string(),
    };
    Conversion {
        direction,
        lowered: false,
        text,
        writes: String::new(),
    }
}

/// The import directions built in.
const TARGETS: &[&str] = &[
    #[cfg(feature = "nnabla")]
    "ONNX → NNabla",
    #[cfg(feature = "tennis")]
    "ONNX → TenniS",
];

/// What the imports do with ONNX's control flow (the words of the import
/// support table's preamble).
fn control_flow(op: &str) -> Option<&'static str> {
    Some(match op {
        "If" => {
            "the branch a constant condition takes (or one fixed with --input-value) inlined; \
             on a run-time condition, both branches and a Where when their outputs have one shape"
        }
        "Loop" => {
            "unrolled when its trip count is known at import time (constant, folded or fixed with \
             --input-value; at most 1,024 iterations), or while the condition its body computes folds to true"
        }
        "Scan" => {
            "unrolled over sequences of static length (opset 8's batch axis too, its sequence \
             lengths absent or all the full length)"
        }
        _ => return None,
    })
}

/// The export of a source operator to ONNX, from its export table entry.
#[cfg(any(feature = "nnabla", feature = "tennis"))]
fn export_row<L>(table: &[crate::export::Entry<L>], op: &str) -> Conversion {
    let direction = "→ ONNX";
    let Some(e) = table.iter().find(|e| e.op == op) else {
        return Conversion {
            direction,
            lowered: false,
            text: "not exported".to_string(),
            writes: String::new(),
        };
    };
    if e.lower.is_none() {
        return Conversion {
            direction,
            lowered: false,
            text: format!("refused: {}", e.reason),
            writes: String::new(),
        };
    }
    let mut parts = vec![
        format!("as {}", e.onnx.join(", ")),
        format!(
            "opsets {}–{}",
            e.min_opset.max(*crate::export::OPSETS.start()),
            crate::export::OPSETS.end()
        ),
    ];
    if !e.attrs.is_empty() {
        parts.push(format!("reads {}", e.attrs.join(", ")));
    }
    parts.push(format!("verified: {}", e.verified.describe()));
    Conversion {
        direction,
        lowered: true,
        text: join(&parts),
        writes: e.onnx.join(", "),
    }
}

/// What the imports do with ONNX operator `op` (default domain): one
/// [`Conversion`] per target built in (NNabla, TenniS).
///
/// ```
/// let c = graph_translate::about::onnx_operator("Relu");
/// assert_eq!(c[0].direction, "ONNX → NNabla");
/// assert!(c[0].lowered && c[0].text.starts_with("as ReLU"));
/// ```
pub fn onnx_operator(op: &str) -> Vec<Conversion> {
    #[allow(unused_mut)]
    let mut out = Vec::new();
    // control flow: rewritten before lowering, for every target alike
    if let Some(text) = control_flow(op) {
        for direction in TARGETS {
            out.push(Conversion {
                direction,
                lowered: true,
                text: text.to_string(),
                writes: String::new(),
            });
        }
        return out;
    }
    #[cfg(feature = "nnabla")]
    {
        use crate::import::nnabla_table as t;
        let refusal = t::TABLE
            .iter()
            .find(|e| e.row.op == op && !e.is_lowered())
            .map(|e| e.reason());
        out.push(import_row("ONNX → NNabla", t::support_rows(), refusal, op));
    }
    #[cfg(feature = "tennis")]
    {
        use crate::import::tennis_table as t;
        out.push(import_row(
            "ONNX → TenniS",
            t::support_rows(),
            t::refusal_reason(op),
            op,
        ));
    }
    #[cfg(not(any(feature = "nnabla", feature = "tennis")))]
    let _ = op;
    out
}

/// What the export to ONNX does with NNabla function `op`.
#[cfg(feature = "nnabla")]
pub fn nnabla_function(op: &str) -> Vec<Conversion> {
    vec![export_row(
        crate::export::nnabla_table::TABLE.as_slice(),
        op,
    )]
}

/// What the export to ONNX does with TenniS operator `op`.
#[cfg(feature = "tennis")]
pub fn tennis_operator(op: &str) -> Vec<Conversion> {
    vec![export_row(crate::export::tennis_table::TABLE, op)]
}

#[cfg(all(test, feature = "nnabla", feature = "tennis"))]
mod tests {
    use super::*;

    #[test]
    fn rows_come_from_the_tables() {
        let conv = onnx_operator("Conv");
        assert_eq!(conv.len(), 2);
        assert!(conv[0].lowered, "{conv:?}");
        assert!(conv[0].text.contains("Convolution"), "{conv:?}");
        assert!(conv[0].text.contains("reads"), "{conv:?}");
        assert!(conv[0].writes.starts_with("Convolution"), "{conv:?}");
        assert!(onnx_operator("If").iter().all(|c| c.writes.is_empty()));
        let none = onnx_operator("NoSuchOp");
        assert!(none.iter().all(|c| !c.lowered && c.text == "not imported"));
        let relu = nnabla_function("ReLU");
        assert!(relu[0].lowered && relu[0].text.contains("Relu"), "{relu:?}");
        assert_eq!(relu[0].writes, "Relu");
        assert!(!nnabla_function("NoSuchFunction")[0].lowered);
        let t = tennis_operator("conv2d");
        assert!(t[0].lowered, "{t:?}");
    }
}
