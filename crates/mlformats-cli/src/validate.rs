//! `mlformats validate`: the library's checks, as text.

use std::fmt::Write;
use std::path::Path;

use mlformats::Document;

use crate::failure::Failure;
use crate::progress;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::failure::AtPath;
use crate::{FormatArg, json_text, open_quiet, print};

/// The report and whether the file passed.
pub struct Outcome {
    /// What to print.
    pub text: String,
    /// No problem found.
    pub ok: bool,
    /// The same as JSON: file, format, tensors, valid, problems.
    pub json: serde_json::Value,
}

/// The outcome for a file that did not open: its reader refused it
/// (invalid, with the reader's words), or it cannot be read at all (the
/// failure, given back: trouble).
pub fn refused(path: &Path, f: Failure) -> Result<Outcome, Failure> {
    let readable = f
        .error
        .downcast_ref::<mlformats::Error>()
        .is_some_and(|e| !e.is_unreadable());
    if !readable || f.usage {
        return Err(f);
    }
    let problem = format!(
        "the reader refuses the file: {}",
        mlformats::chain_message(f.error.as_ref())
    );
    let text = format!(
        "problem: {problem}\n{}: INVALID (1 problem)\n",
        path.display()
    );
    let json = serde_json::json!({
        "file": path.display().to_string(),
        "format": null,
        "tensors": null,
        "valid": false,
        "problems": [problem],
        "notes": [],
    });
    Ok(Outcome {
        text,
        ok: false,
        json,
    })
}

/// Validates an opened file (a file the reader rejects never gets here: it
/// is an error with the reader's message).
pub fn run(doc: &Document, path: &Path, quiet: bool) -> Outcome {
    let total: u64 = doc.tensors().map(|(_, t)| t.bytes().len() as u64).sum();
    let pb = progress::bar(doc.file_size(), total, quiet, "validating");
    let v = mlformats::validate_document(doc, &|n| pb.inc(n));
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

/// Runs `validate`: 0 when the file is valid, 1 when it is not.
pub fn command(
    file: PathBuf,
    json: bool,
    quiet: bool,
    from: Option<FormatArg>,
) -> Result<ExitCode, Failure> {
    let out = match open_quiet(&file, from.map(|f| f.0), quiet || json) {
        Ok(doc) => run(&doc, &file, quiet),
        // a file its reader refuses is invalid; one that cannot be read is trouble
        Err(f) => refused(&file, f)?,
    };
    if json {
        print(&json_text(&out.json).at(&file)?);
    } else {
        print(out.text.as_bytes());
    }
    Ok(if out.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
