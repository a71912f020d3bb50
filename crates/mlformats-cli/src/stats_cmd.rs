//! `mlformats stats`: per-tensor min, max, mean, std and counts of NaN, inf and zeros.

use std::path::Path;

use anyhow::Result;
use mlformats::report::float_json;
use mlformats::{Document, NameFilter};
use serde_json::{Value, json};
use tensor_core::stats::{self, Summary};

use crate::progress;
use crate::table;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::failure::{AtPath, Failure};
use crate::{FormatArg, name_filter, open, print};

fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, float_json)
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), crate::table::number)
}

/// How to print.
pub struct How {
    /// JSON instead of a table.
    pub json: bool,
    /// No progress bar.
    pub quiet: bool,
    /// The width the table must fit (`None`: names in full).
    pub width: Option<usize>,
}

/// Prints the statistics of every tensor of an opened file that `filter` keeps.
pub fn run(doc: &Document, path: &Path, filter: &NameFilter, how: &How) -> Result<String> {
    let (json_out, quiet) = (how.json, how.quiet);
    let kept = || doc.tensors().filter(|(n, _)| filter.keeps(n));
    if kept().next().is_none() && !doc.is_empty() && !filter.is_empty() {
        anyhow::bail!(
            "--only/--exclude match none of the {} tensors (`inspect` lists the names)",
            doc.len()
        );
    }
    let total: u64 = kept().map(|(_, t)| t.bytes().len() as u64).sum();
    let pb = progress::bar(doc.file_size(), total, quiet, "stats");
    let mut rows: Vec<(String, String, Vec<usize>, Summary)> = Vec::new();
    for (name, t) in kept() {
        rows.push((
            name.to_string(),
            t.dtype().name().to_string(),
            t.dims().to_vec(),
            stats::summarize(t),
        ));
        pb.inc(t.bytes().len() as u64);
    }
    pb.finish_and_clear();
    if json_out {
        let tensors: Vec<Value> = rows
            .iter()
            .map(|(name, dtype, shape, s)| {
                json!({
                    "name": name, "dtype": dtype, "shape": shape, "count": s.count,
                    "min": opt(s.min), "max": opt(s.max), "mean": opt(s.mean), "std": opt(s.std),
                    "nan": s.nan, "inf": s.inf, "zeros": s.zeros,
                })
            })
            .collect();
        let doc = json!({"file": path.display().to_string(), "format": doc.format().name(), "tensors": tensors});
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    let mut out = format!(
        "{}: {}, {} tensors\n",
        path.display(),
        doc.format(),
        rows.len()
    );
    let header = [
        "name", "dtype", "count", "min", "max", "mean", "std", "nan", "inf", "zeros",
    ];
    let table: Vec<[String; 10]> = rows
        .iter()
        .map(|(name, dtype, _, s)| {
            [
                name.clone(),
                dtype.clone(),
                s.count.to_string(),
                fmt_opt(s.min),
                fmt_opt(s.max),
                fmt_opt(s.mean),
                fmt_opt(s.std),
                s.nan.to_string(),
                s.inf.to_string(),
                s.zeros.to_string(),
            ]
        })
        .collect();
    let mut right = [true; 10];
    right[0] = false;
    right[1] = false;
    out.push_str(&table::render(header, &table, right, how.width));
    Ok(out)
}

/// Runs `stats`: per-tensor statistics, as a table or JSON.
pub fn command(
    file: PathBuf,
    only: Vec<String>,
    exclude: Vec<String>,
    json: bool,
    wide: bool,
    quiet: bool,
    from: Option<FormatArg>,
) -> Result<ExitCode, Failure> {
    let filter = name_filter(&only, &exclude)?;
    let doc = open(&file, from.map(|f| f.0))?;
    let how = How {
        json,
        quiet,
        width: table::width(wide),
    };
    let text = run(&doc, &file, &filter, &how).at(&file)?;
    print(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}
