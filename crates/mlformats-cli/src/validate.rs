//! `mlformats validate`: the library's checks, as text.

use std::fmt::Write;
use std::path::Path;

use mlformats::Document;

use crate::progress;

/// The report and whether the file passed.
pub struct Outcome {
    /// What to print.
    pub text: String,
    /// No problem found.
    pub ok: bool,
    /// The same as JSON: file, format, tensors, valid, problems.
    pub json: serde_json::Value,
}

/// Validates an opened file (a file the reader rejects never gets here: it
/// is an error with the reader's message).
pub fn run(doc: &Document, path: &Path, quiet: bool) -> Outcome {
    let total: u64 = doc.tensors().map(|(_, t)| t.bytes().len() as u64).sum();
    let pb = progress::bar(doc.file_size(), total, quiet, "validating");
    let v = mlformats::validate(doc, &|n| pb.inc(n));
    pb.finish_and_clear();
    let mut text = String::new();
    for n in &v.notes {
        let _ = writeln!(text, "note: {n}");
    }
    for p in &v.problems {
        let _ = writeln!(text, "problem: {p}");
    }
    let _ = writeln!(
        text,
        "{}: {} ({}, {} tensors, {} problems)",
        path.display(),
        if v.is_valid() { "valid" } else { "INVALID" },
        doc.format(),
        doc.len(),
        v.problems.len()
    );
    let json = serde_json::json!({
        "file": path.display().to_string(),
        "format": doc.format().name(),
        "tensors": doc.len(),
        "valid": v.is_valid(),
        "problems": v.problems,
        "notes": v.notes,
    });
    Outcome {
        text,
        ok: v.is_valid(),
        json,
    }
}
