//! Comparing the tensors of two files of any formats.

use std::path::Path;

use tensor_core::{MemoryOrder, Tensor, stats};

use crate::{Document, Result};

/// How [`diff`] counts values as equal.
///
/// Built with the methods below (the struct is `#[non_exhaustive]`, so a
/// struct literal does not compile outside this crate):
///
/// ```
/// let opts = mlformats::DiffOptions::new()
///     .tolerance(1e-6)
///     .filter(mlformats::NameFilter::new(&["conv*".into()], &[])?);
/// assert_eq!(opts.tolerance, 1e-6);
/// # Ok::<(), mlformats::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DiffOptions {
    /// Which tensors to compare (names either file has that the filter
    /// leaves out are not compared nor reported).
    pub filter: crate::NameFilter,
    /// Largest absolute difference still counted as equal.
    pub tolerance: f64,
    /// Largest relative difference still counted as equal (0: not used).
    pub rtol: f64,
    /// Count a dtype difference as a difference even when the values agree.
    pub strict_dtype: bool,
}

impl DiffOptions {
    /// Exact comparison.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options with an absolute tolerance.
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = t;
        self
    }

    /// The same options with a relative tolerance.
    pub fn rtol(mut self, t: f64) -> Self {
        self.rtol = t;
        self
    }

    /// The same options comparing only the tensors `filter` keeps.
    pub fn filter(mut self, filter: crate::NameFilter) -> Self {
        self.filter = filter;
        self
    }

    /// The same options counting dtype differences.
    pub fn strict_dtype(mut self, yes: bool) -> Self {
        self.strict_dtype = yes;
        self
    }
}

/// How one tensor present in both files compares.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TensorDiff {
    /// Same values (and dtype, or dtypes not compared).
    Equal {
        /// The tensor.
        name: String,
        /// The dtypes, when they differ.
        dtypes: Option<(String, String)>,
    },
    /// Different shapes.
    Shape {
        /// The tensor.
        name: String,
        /// Shape in the first file.
        a: Vec<usize>,
        /// Shape in the second file.
        b: Vec<usize>,
    },
    /// Numeric values differ.
    Values {
        /// The tensor.
        name: String,
        /// Elements that differ.
        differing: u64,
        /// All elements.
        count: usize,
        /// Largest absolute difference.
        max_abs: f64,
        /// Largest relative difference.
        max_rel: f64,
        /// Where the largest absolute difference is: its row-major element
        /// number and its index along each axis.
        at: Option<(u64, Vec<u64>)>,
        /// True when within the tolerances (counted as equal).
        within: bool,
        /// The dtypes, when they differ.
        dtypes: Option<(String, String)>,
    },
    /// Non-numeric data whose bytes differ.
    Bytes {
        /// The tensor.
        name: String,
        /// Offset of the first differing byte.
        first: usize,
    },
    /// Only the dtype differs and `strict_dtype` is on.
    Dtype {
        /// The tensor.
        name: String,
        /// The dtypes.
        a: String,
        /// The dtypes.
        b: String,
    },
}

impl TensorDiff {
    /// True when this tensor counts as different.
    pub fn is_difference(&self) -> bool {
        match self {
            TensorDiff::Equal { .. } => false,
            TensorDiff::Values { within, .. } => !within,
            _ => true,
        }
    }
}

/// The outcome of [`diff`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DiffReport {
    /// The first file's format name.
    pub format_a: String,
    /// The second file's format name.
    pub format_b: String,
    /// Tensor names only the first file has.
    pub only_in_a: Vec<String>,
    /// Tensor names only the second file has.
    pub only_in_b: Vec<String>,
    /// Every tensor both have, in the first file's order.
    pub tensors: Vec<TensorDiff>,
    /// Tensors only the first file has that an exporter added (named with
    /// the reserved prefix [`crate::convert::RESERVED_PREFIX`], e.g. the
    /// shape constants of an ONNX export): listed apart, not differences.
    pub helpers_in_a: Vec<String>,
    /// The same for the second file.
    pub helpers_in_b: Vec<String>,
}

impl DiffReport {
    /// Tensors counted as different, plus names found in one file only.
    pub fn differences(&self) -> usize {
        self.only_in_a.len()
            + self.only_in_b.len()
            + self.tensors.iter().filter(|t| t.is_difference()).count()
    }

    /// True when the files hold the same tensors with equal values.
    pub fn is_equal(&self) -> bool {
        self.differences() == 0
    }

    /// The report as JSON (what `diff --json` prints and Python's
    /// `mlformats.diff` returns): `equal`, `differences`, the formats, the
    /// names found in one file only, the exporter's helper tensors found in
    /// one file only (`helpers_in_a`, `helpers_in_b`), and per tensor its `name`, `status`
    /// (`equal`, `shape`, `values`, `bytes`, `dtype`), `different` and the
    /// fields of that status.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let float = crate::report::float_json;
        let tensors: Vec<serde_json::Value> = self
            .tensors
            .iter()
            .map(|t| {
                let mut v = match t {
                    TensorDiff::Equal { name, dtypes } => {
                        json!({"name": name, "status": "equal", "dtypes": dtypes})
                    }
                    TensorDiff::Shape { name, a, b } => {
                        json!({"name": name, "status": "shape", "shape_a": a, "shape_b": b})
                    }
                    TensorDiff::Dtype { name, a, b } => {
                        json!({"name": name, "status": "dtype", "dtypes": [a, b]})
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
                    } => json!({
                        "name": name,
                        "status": "values",
                        "differing": differing,
                        "count": count,
                        "max_abs": float(*max_abs),
                        "max_rel": float(*max_rel),
                        "index": at.as_ref().map(|(i, _)| i),
                        "at": at.as_ref().map(|(_, idx)| idx),
                        "within_tolerance": within,
                        "dtypes": dtypes,
                    }),
                    TensorDiff::Bytes { name, first } => {
                        json!({"name": name, "status": "bytes", "first_byte": first})
                    }
                };
                v["different"] = json!(t.is_difference());
                v
            })
            .collect();
        json!({
            "equal": self.is_equal(),
            "differences": self.differences(),
            "format_a": self.format_a,
            "format_b": self.format_b,
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "helpers_in_a": self.helpers_in_a,
            "helpers_in_b": self.helpers_in_b,
            "tensors": tensors,
        })
    }
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

/// Opens `a` and `b` and compares them with [`diff_documents`].
pub fn diff(a: impl AsRef<Path>, b: impl AsRef<Path>, opts: &DiffOptions) -> Result<DiffReport> {
    let da = Document::open(a)?;
    let db = Document::open(b)?;
    diff_documents(&da, &db, opts)
}

/// Compares every tensor of `a` with the tensor of the same name in `b`
/// (column-major data compared in row-major order).
pub fn diff_documents(a: &Document, b: &Document, opts: &DiffOptions) -> Result<DiffReport> {
    let mut report = DiffReport {
        format_a: a.format().name().to_string(),
        format_b: b.format().name().to_string(),
        only_in_a: a
            .names()
            .filter(|n| opts.filter.keeps(n) && b.tensor(n).is_none())
            .map(String::from)
            .collect(),
        only_in_b: b
            .names()
            .filter(|n| opts.filter.keeps(n) && a.tensor(n).is_none())
            .map(String::from)
            .collect(),
        tensors: Vec::new(),
        helpers_in_a: Vec::new(),
        helpers_in_b: Vec::new(),
    };
    let helper = |n: &String| n.starts_with(crate::convert::RESERVED_PREFIX);
    let (h, rest) = std::mem::take(&mut report.only_in_a)
        .into_iter()
        .partition(helper);
    (report.helpers_in_a, report.only_in_a) = (h, rest);
    let (h, rest) = std::mem::take(&mut report.only_in_b)
        .into_iter()
        .partition(helper);
    (report.helpers_in_b, report.only_in_b) = (h, rest);
    for (name, ta) in a.tensors() {
        let Some(tb) = b.tensor(name).filter(|_| opts.filter.keeps(name)) else {
            continue;
        };
        let name = name.to_string();
        if ta.dims() != tb.dims() {
            report.tensors.push(TensorDiff::Shape {
                name,
                a: ta.dims().to_vec(),
                b: tb.dims().to_vec(),
            });
            continue;
        }
        let dtypes = (ta.dtype() != tb.dtype())
            .then(|| (ta.dtype().name().to_string(), tb.dtype().name().to_string()));
        let (ra, rb) = (row_major(ta)?, row_major(tb)?);
        let d = match stats::compare(&ra, &rb) {
            Some(d) if d.differing > 0 => TensorDiff::Values {
                within: d.max_abs <= opts.tolerance || (opts.rtol > 0.0 && d.max_rel <= opts.rtol),
                name,
                differing: d.differing,
                count: ra.numel(),
                max_abs: d.max_abs,
                max_rel: d.max_rel,
                at: d.index_of_max_abs.map(|i| (i, unravel(i, ra.dims()))),
                dtypes,
            },
            Some(_) => equal_or_dtype(name, dtypes, opts),
            None => match ra.bytes().iter().zip(rb.bytes()).position(|(x, y)| x != y) {
                Some(first) => TensorDiff::Bytes { name, first },
                None if ra.bytes().len() != rb.bytes().len() => TensorDiff::Bytes {
                    name,
                    first: ra.bytes().len().min(rb.bytes().len()),
                },
                None => equal_or_dtype(name, dtypes, opts),
            },
        };
        report.tensors.push(d);
    }
    Ok(report)
}

fn equal_or_dtype(
    name: String,
    dtypes: Option<(String, String)>,
    opts: &DiffOptions,
) -> TensorDiff {
    match dtypes {
        Some((a, b)) if opts.strict_dtype => TensorDiff::Dtype { name, a, b },
        dtypes => TensorDiff::Equal { name, dtypes },
    }
}
