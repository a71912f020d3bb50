//! `mlformats diff A B`: its arguments, and the library's comparison, as
//! text or JSON.

use std::fmt::Write;
use std::path::Path;

use mlformats::diff::{DiffReport, TensorDiff};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::failure::{AtPath, Failure};
use crate::{FormatArg, json_text, name_filter, open_quiet, print};

/// The report as `diff` prints it.
pub fn text(r: &DiffReport, a: &Path, b: &Path) -> String {
    let mut text = String::new();
    for name in &r.only_in_a {
        let _ = writeln!(text, "only in {}: {name}", a.display());
    }
    for name in &r.only_in_b {
        let _ = writeln!(text, "only in {}: {name}", b.display());
    }
    for (file, names) in [(a, &r.helpers_in_a), (b, &r.helpers_in_b)] {
        if !names.is_empty() {
            let _ = writeln!(
                text,
                "{}: {} helper tensor{} an exporter added (not the model's, not compared): {}",
                file.display(),
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            );
        }
    }
    let dtype_line = |text: &mut String, name: &str, d: &Option<(String, String)>| {
        if let Some((x, y)) = d {
            let _ = writeln!(text, "{name}: dtype {x} vs {y}");
        }
    };
    let mut same = 0usize;
    for t in &r.tensors {
        match t {
            TensorDiff::Equal { name, dtypes } => dtype_line(&mut text, name, dtypes),
            TensorDiff::Shape { name, a, b } => {
                let _ = writeln!(text, "{name}: shape {a:?} vs {b:?}");
            }
            TensorDiff::Dtype { name, a, b } => {
                let _ = writeln!(text, "{name}: dtype {a} vs {b}");
            }
            TensorDiff::Values {
                name,
                differing,
                count,
                max_abs,
                max_rel,
                at,
                within,
                dtypes,
            } => {
                dtype_line(&mut text, name, dtypes);
                let at = at
                    .as_ref()
                    .map(|(i, idx)| format!(" at index {i} {idx:?}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    text,
                    "{name}: {differing} of {count} elements differ; max abs diff {max_abs:e}{at}, max rel diff {max_rel:e}{}",
                    if *within { " (within tolerance)" } else { "" }
                );
            }
            TensorDiff::Bytes { name, first } => {
                let _ = writeln!(text, "{name}: bytes differ (first at byte {first})");
            }
            _ => {}
        }
        if !t.is_difference() {
            same += 1;
        }
    }
    let problems = r.differences();
    let _ = writeln!(
        text,
        "{}: {same} tensors equal, {problems} differences ({} vs {})",
        if problems == 0 { "equal" } else { "different" },
        r.format_a,
        r.format_b
    );
    text
}

// The arguments of `diff`. A plain comment, not a doc comment: the
// subcommand's help is the doc comment of `Command::Diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The first file.
    a: PathBuf,
    /// The second file.
    b: PathBuf,
    /// Compare only tensors whose name matches GLOB (or equals it; repeatable).
    #[arg(long, value_name = "GLOB")]
    only: Vec<String>,
    /// Leave out tensors whose name matches GLOB (or equals it; repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Largest absolute difference still counted as equal.
    #[arg(long, default_value_t = 0.0)]
    tolerance: f64,
    /// Largest relative difference still counted as equal.
    #[arg(long, default_value_t = 0.0)]
    rtol: f64,
    /// Count a dtype difference as a difference even when values agree.
    #[arg(long)]
    strict_dtype: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Read both files as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT", value_enum)]
    from: Option<FormatArg>,
    /// Read the first file as this format (overrides --from).
    #[arg(long, value_name = "FORMAT", value_enum)]
    from_a: Option<FormatArg>,
    /// Read the second file as this format (overrides --from).
    #[arg(long, value_name = "FORMAT", value_enum)]
    from_b: Option<FormatArg>,
}

/// Runs `diff`: 0 when the files are equal within tolerance, 1 when not.
pub fn command(args: DiffArgs) -> Result<ExitCode, Failure> {
    let DiffArgs {
        a,
        b,
        only,
        exclude,
        tolerance,
        rtol,
        strict_dtype,
        json,
        from,
        from_a,
        from_b,
    } = args;
    let opts = mlformats::DiffOptions::new()
        .tolerance(tolerance)
        .rtol(rtol)
        .strict_dtype(strict_dtype)
        .filter(name_filter(&only, &exclude)?);
    let da = open_quiet(&a, from_a.or(from).map(|f| f.0), json)?;
    let db = open_quiet(&b, from_b.or(from).map(|f| f.0), json)?;
    let report = mlformats::diff::diff_documents(&da, &db, &opts)
        .map_err(anyhow::Error::new)
        .at(&a)?;
    if json {
        print(&json_text(&report.to_json()).at(&a)?);
    } else {
        print(text(&report, &a, &b).as_bytes());
    }
    Ok(if report.is_equal() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
