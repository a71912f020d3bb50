//! `mlformats diff A B`: are two files' tensors the same, within a tolerance?

use std::path::Path;

use anyhow::Result;
use tensor_core::{MemoryOrder, Tensor, stats};

use crate::failure::{AtPath, Failure};
use crate::formats;

/// The outcome: the report text and whether the files are equal.
pub struct Outcome {
    /// What to print.
    pub text: String,
    /// Equal within tolerance.
    pub equal: bool,
}

/// Options of `diff`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Largest absolute difference still counted as equal.
    pub tolerance: f64,
    /// Largest relative difference still counted as equal (0: not used).
    pub rtol: f64,
    /// Count a dtype difference as a difference even when the values agree.
    pub strict_dtype: bool,
}

fn row_major(t: &Tensor<'static>) -> Result<Tensor<'static>> {
    Ok(if t.order() == MemoryOrder::ColumnMajor {
        t.to_row_major()?.into_static()
    } else {
        t.clone()
    })
}

/// The multi-index of row-major element `i` in `dims`.
pub fn unravel(mut i: u64, dims: &[usize]) -> Vec<u64> {
    let mut idx = vec![0u64; dims.len()];
    for k in (0..dims.len()).rev() {
        let d = dims[k].max(1) as u64;
        idx[k] = i % d;
        i /= d;
    }
    idx
}

/// Compares every tensor of `a` with the tensor of the same name in `b`.
pub fn run(a: &Path, b: &Path, opts: Options) -> Result<Outcome, Failure> {
    use std::fmt::Write;
    let la = formats::load(a, None).at(a)?;
    let lb = formats::load(b, None).at(b)?;
    let mut text = String::new();
    let mut problems = 0usize;
    let mut same = 0usize;
    for name in la.tensors.names() {
        if !lb.tensors.contains(name) {
            let _ = writeln!(text, "only in {}: {name}", a.display());
            problems += 1;
        }
    }
    for name in lb.tensors.names() {
        if !la.tensors.contains(name) {
            let _ = writeln!(text, "only in {}: {name}", b.display());
            problems += 1;
        }
    }
    for (name, ta) in la.tensors.iter() {
        let Some(tb) = lb.tensors.get(name) else {
            continue;
        };
        if ta.dims() != tb.dims() {
            let _ = writeln!(text, "{name}: shape {:?} vs {:?}", ta.dims(), tb.dims());
            problems += 1;
            continue;
        }
        let mut differs = false;
        if ta.dtype() != tb.dtype() {
            let _ = writeln!(text, "{name}: dtype {} vs {}", ta.dtype(), tb.dtype());
            differs |= opts.strict_dtype;
        }
        let (ra, rb) = (row_major(ta).at(a)?, row_major(tb).at(b)?);
        match stats::compare(&ra, &rb) {
            Some(d) if d.differing > 0 => {
                let within =
                    d.max_abs <= opts.tolerance || (opts.rtol > 0.0 && d.max_rel <= opts.rtol);
                let at = d
                    .index_of_max_abs
                    .map(|i| format!(" at index {i} {:?}", unravel(i, ra.dims())))
                    .unwrap_or_default();
                let _ = writeln!(
                    text,
                    "{name}: {} of {} elements differ; max abs diff {:e}{at}, max rel diff {:e}{}",
                    d.differing,
                    ra.numel(),
                    d.max_abs,
                    d.max_rel,
                    if within { " (within tolerance)" } else { "" }
                );
                differs |= !within;
            }
            Some(_) => {}
            None => {
                // not numeric: the bytes must be equal
                if ra.bytes() != rb.bytes() {
                    let first = ra.bytes().iter().zip(rb.bytes()).position(|(x, y)| x != y);
                    let _ = writeln!(
                        text,
                        "{name}: bytes differ (first at byte {})",
                        first.unwrap_or(0)
                    );
                    differs = true;
                }
            }
        }
        if differs {
            problems += 1;
        } else {
            same += 1;
        }
    }
    let equal = problems == 0;
    let _ = writeln!(
        text,
        "{}: {same} tensors equal, {problems} differences ({} vs {})",
        if equal { "equal" } else { "different" },
        la.kind.name(),
        lb.kind.name()
    );
    Ok(Outcome { text, equal })
}
