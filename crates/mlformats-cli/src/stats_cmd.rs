//! `mlformats stats`: per-tensor min, max, mean, std and counts of NaN, inf and zeros.

use std::path::Path;

use anyhow::Result;
use mlformats::report::float_json;
use mlformats::streamed::{TensorStats, document_stats};
use mlformats::{Format, NameFilter};
use serde_json::{Value, json};

use crate::progress;
use crate::table;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::failure::{AtPath, Failure};
use crate::{FormatArg, Input, name_filter, open_input, print};

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
    /// The width the table must fit (`None`: names in full).
    pub width: Option<usize>,
}

/// The statistics of every tensor `filter` keeps, a tensor at a time (a
/// remote file: fetched a slice at a time), with a progress bar.
fn rows(input: &mut Input, filter: &NameFilter, quiet: bool) -> Result<Vec<TensorStats>> {
    let (stats, count) = match input {
        Input::Whole(doc) => {
            let total = doc
                .tensors()
                .filter(|(n, _)| filter.keeps(n))
                .map(|(_, t)| t.bytes().len() as u64)
                .sum();
            let pb = progress::bar(doc.file_size(), total, quiet, "stats");
            let rows = document_stats(doc, filter, &mut |n| pb.inc(n));
            pb.finish_and_clear();
            (rows, doc.len())
        }
        Input::Streamed { doc, remote } => {
            let total = doc.kept_bytes(filter);
            let pb = progress::Remote::new(total, quiet, "stats");
            let bar = pb.clone();
            remote.set_progress(move |f| {
                bar.inc(f.bytes);
            });
            let rows = doc.stats(filter, &mut |_| {});
            pb.finish();
            (rows?, doc.len())
        }
    };
    if stats.is_empty() && count > 0 && !filter.is_empty() {
        anyhow::bail!(
            "--only/--exclude match none of the {count} tensors (`inspect` lists the names)"
        );
    }
    Ok(stats)
}

/// The statistics `rows` of the file at `path`, of `format`, as a table or JSON.
pub fn present(rows: &[TensorStats], path: &Path, format: Format, how: &How) -> Result<String> {
    let json_out = how.json;
    if json_out {
        let tensors: Vec<Value> = rows
            .iter()
            .map(|r| {
                let (name, dtype, shape, s) = (&r.name, r.dtype.name(), &r.dims, &r.summary);
                json!({
                    "name": name, "dtype": dtype, "shape": shape, "count": s.count,
                    "min": opt(s.min), "max": opt(s.max), "mean": opt(s.mean), "std": opt(s.std),
                    "nan": s.nan, "inf": s.inf, "zeros": s.zeros,
                })
            })
            .collect();
        let doc = json!({"file": path.display().to_string(), "format": format.name(), "tensors": tensors});
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    let mut out = format!("{}: {}, {} tensors\n", path.display(), format, rows.len());
    let header = [
        "name", "dtype", "count", "min", "max", "mean", "std", "nan", "inf", "zeros",
    ];
    let table: Vec<[String; 10]> = rows
        .iter()
        .map(|r| {
            let s = &r.summary;
            [
                r.name.clone(),
                r.dtype.name().to_string(),
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
    let mut input = open_input(&file, from.map(|f| f.0), quiet || json)?;
    let how = How {
        json,
        width: table::width(wide),
    };
    let stats = rows(&mut input, &filter, quiet || json).at(&file)?;
    let format = match &input {
        Input::Whole(doc) => doc.format(),
        Input::Streamed { doc, .. } => doc.format(),
    };
    let text = present(&stats, &file, format, &how).at(&file)?;
    print(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}
