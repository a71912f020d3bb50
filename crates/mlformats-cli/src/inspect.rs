//! The readable `inspect` table: headers only (names, dtypes, shapes,
//! sizes, graph summary), so it is as fast on a 1 GiB file as on a small one.

use std::fmt::Write;

use mlformats::Document;
use mlformats::graph::ModelGraph;

/// `1.5 KiB`, `3.0 MiB`, `12 B`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

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
        let head = ["name", "dtype", "shape", "size"];
        let mut w = head.map(str::len);
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |c: [&str; 4]| {
            format!(
                "  {:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}\n",
                c[0],
                c[1],
                c[2],
                c[3],
                w0 = w[0],
                w1 = w[1],
                w2 = w[2],
                w3 = w[3]
            )
        };
        s.push_str(&line(head));
        for r in &rows {
            s.push_str(&line([&r[0], &r[1], &r[2], &r[3]]));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
    }
}
