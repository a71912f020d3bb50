//! The readable `inspect` table: headers only (names, dtypes, shapes,
//! element counts, sizes, graph summary), so it is as fast on a 1 GiB file
//! as on a small one, and a compressed file inflates no tensor. Everything
//! comes from the library's [`mlformats::Headers`]; this only lays it out.

use std::fmt::Write;

use mlformats::summary::Port;
use mlformats::{Headers, Summary};

use crate::table::{self, count, human_bytes};

/// The table `inspect` prints without `--json`; `width` as for
/// [`table::render`].
pub fn table(doc: &Headers, path: &str, width: Option<usize>) -> String {
    let sm = doc.summary();
    let mut s = String::new();
    let kind = sm.kind.map(|k| format!(" ({k})")).unwrap_or_default();
    let n = sm.tensors.len();
    let _ = writeln!(
        s,
        "{path}: {}{kind}, {} bytes, {} tensor{}, {} parameters, {} of data",
        sm.format,
        sm.file_size,
        n,
        if n == 1 { "" } else { "s" },
        count(sm.parameters),
        human_bytes(sm.total_bytes)
    );
    let rows: Vec<[String; 5]> = sm
        .tensors
        .iter()
        .map(|t| {
            [
                t.name.clone(),
                t.dtype.name().to_string(),
                format!("{:?}", t.shape),
                count(t.elements),
                human_bytes(t.bytes),
            ]
        })
        .collect();
    if !rows.is_empty() {
        s.push_str(&table::render(
            ["name", "dtype", "shape", "params", "size"],
            &rows,
            [false, false, false, true, true],
            width,
        ));
    }
    let renamed = sm
        .tensors
        .iter()
        .filter(|t| t.stored_name.is_some())
        .count();
    if renamed > 0 {
        let _ = writeln!(
            s,
            "({renamed} of the names differ from the stored ones, which `inspect --json` gives as stored_name)"
        );
    }
    for (k, v) in doc.metadata() {
        let _ = writeln!(s, "{k}: {v}");
    }
    s.push_str(&graph_summary(sm));
    if let Some(g) = doc.graph() {
        for (k, names) in [
            ("optimizers", &g.optimizers),
            ("datasets", &g.datasets),
            ("monitors", &g.monitors),
        ] {
            if !names.is_empty() {
                let _ = writeln!(s, "{k}: {}", names.join(", "));
            }
        }
    }
    s
}

fn ports(p: &[Port]) -> String {
    if p.is_empty() {
        return "(none)".to_string();
    }
    p.iter()
        .map(|p| match &p.shape {
            Some(d) => format!("{} {d:?}", p.name),
            None => p.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each graph in the format's own words: its size, what goes in and out
/// (with shapes), and its operators with their counts.
fn graph_summary(sm: &Summary) -> String {
    let mut s = String::new();
    for g in &sm.graphs {
        let batch = g
            .batch_size
            .map(|b| format!(" (batch_size {b})"))
            .unwrap_or_default();
        let run_by = if g.executors.is_empty() {
            String::new()
        } else {
            format!(", run by executor {}", g.executors.join(", "))
        };
        let _ = writeln!(
            s,
            "{}{batch}: {} {}, {} {}{run_by}",
            g.title, g.ops, g.op_word, g.values, g.value_word
        );
        let _ = writeln!(s, "  inputs: {}", ports(&g.inputs));
        let _ = writeln!(s, "  outputs: {}", ports(&g.outputs));
        if !g.operators.is_empty() {
            let ops: Vec<String> = g
                .operators
                .iter()
                .map(|(op, n)| format!("{op} {n}"))
                .collect();
            let _ = writeln!(s, "  {}: {}", g.op_word, ops.join(", "));
        }
    }
    s
}
