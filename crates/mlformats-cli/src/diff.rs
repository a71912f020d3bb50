//! `mlformats diff A B`: the library's comparison, as text.

use std::fmt::Write;
use std::path::Path;

use mlformats::diff::{DiffReport, TensorDiff};

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
