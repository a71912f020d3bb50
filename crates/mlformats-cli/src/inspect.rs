//! The readable `inspect` table: headers only (names, dtypes, shapes,
//! sizes, graph summary), so it is as fast on a 1 GiB file as on a small one.

use std::fmt::Write;

use mlformats::Document;
use mlformats::graph::ModelGraph;

use crate::table::{self, human_bytes};

/// The table `inspect` prints without `--json`.
pub fn table(doc: &Document, path: &str) -> String {
    let mut s = String::new();
    let kind = doc.kind().map(|k| format!(" ({k})")).unwrap_or_default();
    let rows: Vec<[String; 4]> = doc
        .stored()
        .iter()
        .map(|e| {
            let t = doc.tensor(&e.key);
            [
                e.name.clone(),
                t.map_or("?", |t| t.dtype().name()).to_string(),
                format!("{:?}", e.shape),
                human_bytes(t.map_or(0, |t| t.bytes().len() as u64)),
            ]
        })
        .collect();
    let total: u64 = doc.tensors().map(|(_, t)| t.bytes().len() as u64).sum();
    let _ = writeln!(
        s,
        "{path}: {}{kind}, {} bytes, {} tensor{}, {} of data",
        doc.format(),
        doc.file_size(),
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        human_bytes(total)
    );
    if !rows.is_empty() {
        s.push_str(&table::render(
            ["name", "dtype", "shape", "size"],
            &rows,
            [false, false, false, true],
        ));
    }
    for (k, v) in doc.metadata() {
        let _ = writeln!(s, "{k}: {v}");
    }
    if let Some(g) = doc.graph() {
        s.push_str(&graph_summary(doc.format(), g));
    }
    s
}

fn graph_summary(format: mlformats::Format, g: &ModelGraph) -> String {
    let mut s = String::new();
    if format == mlformats::Format::TennisModule {
        for n in &g.graphs {
            let _ = writeln!(
                s,
                "graph: {} nodes, inputs {:?}, outputs {:?}",
                n.nodes.len(),
                n.inputs,
                n.outputs
            );
        }
        return s;
    }
    for n in &g.graphs {
        let _ = writeln!(
            s,
            "network {}: batch_size {}, {} variables, {} functions",
            n.name,
            n.batch_size.unwrap_or(0),
            n.values.len(),
            n.nodes.len()
        );
    }
    let executors: Vec<String> = g.executors.iter().map(|e| e.name.clone()).collect();
    for (k, names) in [
        ("executors", &executors),
        ("optimizers", &g.optimizers),
        ("datasets", &g.datasets),
        ("monitors", &g.monitors),
    ] {
        if !names.is_empty() {
            let _ = writeln!(s, "{k}: {}", names.join(", "));
        }
    }
    s
}
