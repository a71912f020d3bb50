//! The published support table, generated from the operator tables.

use std::fmt::Write;

use super::table::Entry;
use super::{HELPER_PREFIX, OPSETS};

fn section<L>(out: &mut String, title: &str, table: &[Entry<L>]) {
    let lowered = table.iter().filter(|e| e.lower.is_some()).count();
    let _ = writeln!(
        out,
        "## {title}\n\n{lowered} lowered, {} refused.\n",
        table.len() - lowered
    );
    out.push_str("| Operator | Status | ONNX operators | ONNX opsets | Verified against |\n");
    out.push_str("|---|---|---|---|---|\n");
    for e in table {
        if e.lower.is_some() {
            let cases = match e.cases {
                0 => String::new(),
                1 => " (1 case)".to_string(),
                n => format!(" ({n} cases)"),
            };
            let _ = writeln!(
                out,
                "| {} | lowered | {} | {}–{} | {}{cases} |",
                e.op,
                e.onnx.join(", "),
                e.min_opset.max(*OPSETS.start()),
                OPSETS.end(),
                e.verified.describe()
            );
        } else {
            let _ = writeln!(out, "| {} | refused: {} | | | |", e.op, e.reason);
        }
    }
    out.push('\n');
}

/// The support table (markdown) of every operator table: operator, status,
/// the ONNX operators written, the operator sets, and what each lowering
/// was verified against. Checked in as `SUPPORT.md` of this crate; a test
/// fails when it is stale (`REGENERATE=1 cargo test -p graph-translate
/// --test support_table` rewrites it).
pub fn support_table() -> String {
    let mut out = String::from(
        "# graph-translate: operator support\n\n\
         Generated from the operator tables of `src/export/` by\n\
         `REGENERATE=1 cargo test -p graph-translate --test support_table`; do not edit.\n\n",
    );
    let _ = writeln!(
        out,
        "Every tensor the exporter adds (helper constants, derived weights) is named with the \
         reserved prefix `{HELPER_PREFIX}`.\n"
    );
    #[cfg(feature = "nnabla")]
    section(
        &mut out,
        "NNabla → ONNX (nnabla 1.39 function list)",
        super::nnabla_table::TABLE.as_slice(),
    );
    #[cfg(feature = "tennis")]
    section(
        &mut out,
        "TenniS → ONNX (operators of the TenniS C++ runtime for the CPU)",
        super::tennis_table::TABLE,
    );
    out
}
