//! `mlformats validate`: the reader's strictest checks plus data checks.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;
use tensor_core::stats;

use crate::formats::{self, Kind};
use crate::progress;

/// The report and whether the file passed.
pub struct Outcome {
    /// What to print.
    pub text: String,
    /// No problem found.
    pub ok: bool,
}

/// Validates `path`. A file the reader rejects is an `Err` (exit 1 with
/// the reader's message); data problems are listed in the outcome.
pub fn run(path: &Path, quiet: bool) -> Result<Outcome> {
    use std::fmt::Write;
    let loaded = formats::load(path, None)?;
    let mut problems: Vec<String> = Vec::new();
    let mut text = String::new();
    // The contract's view checks the graph and every tensor of formats
    // that have one; duplicate names there were stored twice in the file.
    if let (Kind::Ml(_), Some(src)) = (loaded.kind, &loaded.source) {
        let report = formats::inspect(src)?;
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for t in &report.tensors {
            *seen.entry(t.name.as_str()).or_default() += 1;
        }
        let mut dups: Vec<(&str, usize)> = seen.into_iter().filter(|(_, n)| *n > 1).collect();
        dups.sort();
        for (name, n) in dups {
            problems.push(format!("name {name:?} is stored {n} times"));
        }
    }
    let total: u64 = loaded
        .tensors
        .iter()
        .map(|(_, t)| t.bytes().len() as u64)
        .sum();
    let pb = progress::bar(loaded.map.len() as u64, total, quiet, "validating");
    for (name, t) in loaded.tensors.iter() {
        if name.is_empty() {
            problems.push("a tensor has an empty name".to_string());
        }
        let s = stats::summarize(t);
        if s.nan > 0 {
            problems.push(format!("{name}: {} NaN of {} elements", s.nan, s.count));
        }
        if s.inf > 0 {
            problems.push(format!(
                "{name}: {} infinite of {} elements",
                s.inf, s.count
            ));
        }
        pb.inc(t.bytes().len() as u64);
    }
    pb.finish_and_clear();
    for p in &problems {
        let _ = writeln!(text, "problem: {p}");
    }
    let ok = problems.is_empty();
    let _ = writeln!(
        text,
        "{}: {} ({}, {} tensors, {} problems)",
        path.display(),
        if ok { "valid" } else { "INVALID" },
        loaded.kind.name(),
        loaded.tensors.len(),
        problems.len()
    );
    Ok(Outcome { text, ok })
}
