//! `mlformats inspect`, and its readable table: headers only (names,
//! dtypes, shapes, element counts, sizes, graph summary), so it is as fast
//! on a 1 GiB file as on a small one, and a compressed file inflates no
//! tensor. Everything comes from the library's [`mlformats::Document`]
//! opened lazily (its structure alone); this only lays it out.

use std::fmt::Write;

use mlformats::summary::Port;
use mlformats::{Document, Summary};

use crate::table::{self, count, human_bytes};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::failure::{AtPath, Failure};
use crate::{FormatArg, json_text, open, open_structure, print};

/// The table `inspect` prints without `--json`; `width` as for
/// [`table::render`].
pub fn table(doc: &Document, path: &str, width: Option<usize>) -> String {
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
    s.push_str(&graph_summary(&sm));
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

/// Runs `inspect`: a table per file, or the JSON of the inspect contract.
pub fn command(
    files: Vec<PathBuf>,
    json: bool,
    schema: u32,
    format: Option<FormatArg>,
    wide: bool,
) -> Result<ExitCode, Failure> {
    if files.iter().filter(|f| *f == Path::new("-")).count() > 1 {
        return Err(Failure::usage(
            Path::new("-"),
            "standard input can be read once".into(),
        ));
    }
    let width = table::width(wide);
    let mut docs = Vec::new();
    let mut text = Vec::new();
    for (i, file) in files.iter().enumerate() {
        if json {
            let doc = open(file, format.map(|f| f.0))?;
            let v = doc
                .inspect_json_schema(schema)
                .ok_or_else(|| Failure::usage(file, format!("no inspect schema {schema}")))?;
            docs.push(v);
        } else {
            if i > 0 {
                text.push(b'\n');
            }
            let name = if file == Path::new("-") {
                "<stdin>".to_string()
            } else {
                file.display().to_string()
            };
            let doc = open_structure(file, format.map(|f| f.0))?;
            text.extend(table(&doc, &name, width).into_bytes());
        }
    }
    if json {
        let v = if docs.len() == 1 {
            docs.remove(0)
        } else {
            serde_json::Value::Array(docs)
        };
        text = json_text(&v).at(&files[0])?;
    }
    print(&text);
    Ok(ExitCode::SUCCESS)
}
