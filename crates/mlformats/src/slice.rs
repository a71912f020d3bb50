//! Reading part of a tensor: `NAME[slice]` with numpy's slice syntax, for
//! `mlformats show` and callers who want a few values without the rest.
//!
//! ```
//! # fn main() -> Result<(), mlformats::Error> {
//! let doc = mlformats::open("../../testdata/cvm/two_entry.params")?;
//! let (name, spec) = mlformats::slice::parse_spec(&doc, "w[1:]")?;
//! assert_eq!(name, "w");
//! let part = mlformats::slice::read(doc.tensor(name).unwrap(), &spec)?;
//! assert_eq!(part.dims, [1]);
//! assert_eq!(part.values, [mlformats::slice::Number::Int(-1)]);
//! # Ok(()) }
//! ```
//!
//! Only the elements selected are decoded (one at a time, from the mapped
//! bytes), so a slice of a large tensor costs what the slice holds.

use tensor_core::{DType, MemoryOrder, SumKind, Tensor};

use crate::{Document, Error, Result};

/// One axis of a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Axis {
    /// One position (negative counts from the end); the axis goes away.
    Index(i64),
    /// `start:stop:step`, each optional as in numpy.
    Range {
        /// First position (default: the start, or the end for a negative step).
        start: Option<i64>,
        /// Position not reached (default: past the end, or before the start).
        stop: Option<i64>,
        /// Step, not 0 (default 1).
        step: i64,
    },
    /// `...`: as many whole axes as the others leave.
    Ellipsis,
}

/// The axes of a slice, as written between the brackets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SliceSpec {
    /// The axes, in order; missing trailing axes are taken whole.
    pub axes: Vec<Axis>,
}

/// A number of a slice: integers exact, floats as `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Number {
    /// A signed integer or bool element.
    Int(i64),
    /// An unsigned integer element.
    UInt(u64),
    /// A floating-point element.
    Float(f64),
}

/// The elements a slice selects, in row-major order of its shape.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Values {
    /// The slice's dimensions.
    pub dims: Vec<usize>,
    /// The elements.
    pub values: Vec<Number>,
}

fn bad(spec: &str, why: impl std::fmt::Display) -> Error {
    Error::BadSlice {
        spec: spec.to_string(),
        why: why.to_string(),
    }
}

impl std::str::FromStr for SliceSpec {
    type Err = Error;

    /// Parses what sits between the brackets: `0:2, :`, `-1`, `..., ::2`.
    fn from_str(s: &str) -> Result<SliceSpec> {
        let mut axes = Vec::new();
        if s.trim().is_empty() {
            return Ok(SliceSpec { axes });
        }
        let num = |t: &str| -> Result<Option<i64>> {
            let t = t.trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<i64>()
                .map(Some)
                .map_err(|_| bad(s, format!("{t:?} is not an integer")))
        };
        for part in s.split(',') {
            let p = part.trim();
            if p == "..." {
                if axes.contains(&Axis::Ellipsis) {
                    return Err(bad(s, "more than one `...`"));
                }
                axes.push(Axis::Ellipsis);
                continue;
            }
            let fields: Vec<&str> = p.split(':').collect();
            match fields.as_slice() {
                [i] => match num(i)? {
                    Some(i) => axes.push(Axis::Index(i)),
                    None => return Err(bad(s, "an empty axis (write `:` for all)")),
                },
                [a, b] => axes.push(Axis::Range {
                    start: num(a)?,
                    stop: num(b)?,
                    step: 1,
                }),
                [a, b, c] => {
                    let step = num(c)?.unwrap_or(1);
                    if step == 0 {
                        return Err(bad(s, "a step of 0"));
                    }
                    axes.push(Axis::Range {
                        start: num(a)?,
                        stop: num(b)?,
                        step,
                    });
                }
                _ => return Err(bad(s, format!("{p:?} has more than two `:`"))),
            }
        }
        Ok(SliceSpec { axes })
    }
}

/// Splits `NAME[slice]` into a tensor name of `doc` and its slice: a name
/// `doc` has is taken whole, even when it ends in brackets (TenniS
/// `node/key[0]`); otherwise the last `[...]` is the slice.
///
/// # Errors
///
/// [`Error::NoTensorNamed`] when `doc` has no such tensor, [`Error::BadSlice`]
/// when the slice is not numpy's syntax.
pub fn parse_spec<'d>(doc: &'d Document, spec: &str) -> Result<(&'d str, SliceSpec)> {
    parse_spec_in(|n| doc.names().find(|k| *k == n), doc.len(), spec)
}

/// [`parse_spec`] among the names of a file of `count` tensors that
/// `find` looks a name up in (a file read by its index, a
/// [`crate::Document`] opened at a [`crate::random_access::ReadAt`]).
///
/// # Errors
///
/// As [`parse_spec`].
pub fn parse_spec_in<'n>(
    find: impl Fn(&str) -> Option<&'n str>,
    count: usize,
    spec: &str,
) -> Result<(&'n str, SliceSpec)> {
    if let Some(name) = find(spec) {
        return Ok((name, SliceSpec::default()));
    }
    if let Some(inner) = spec.strip_suffix(']')
        && let Some(open) = inner.rfind('[')
    {
        let (name, s) = (&inner[..open], &inner[open + 1..]);
        if let Some(name) = find(name) {
            return Ok((name, s.parse()?));
        }
    }
    Err(Error::NoTensorNamed {
        name: spec.to_string(),
        of: count,
    })
}

/// The positions an axis of length `len` selects, numpy's way.
fn positions(axis: Axis, len: usize, at: usize) -> Result<(Vec<usize>, bool)> {
    let n = i64::try_from(len).map_err(|_| Error::Invalid("axis too long".into()))?;
    match axis {
        Axis::Index(i) => {
            let j = if i < 0 { i + n } else { i };
            if !(0..n).contains(&j) {
                return Err(Error::Invalid(format!(
                    "index {i} is out of range for axis {at} of length {len}"
                )));
            }
            Ok((vec![j as usize], false))
        }
        Axis::Range { start, stop, step } => {
            let clamp = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
            let norm = |v: i64| if v < 0 { v + n } else { v };
            let mut out = Vec::new();
            if step > 0 {
                let a = clamp(start.map_or(0, norm), 0, n);
                let b = clamp(stop.map_or(n, norm), 0, n);
                let mut i = a;
                while i < b {
                    out.push(i as usize);
                    i += step;
                }
            } else {
                let a = clamp(start.map_or(n - 1, norm), -1, n - 1);
                let b = clamp(stop.map_or(-1, norm), -1, n - 1);
                let b = if stop.is_some_and(|s| s + n < 0) {
                    -1
                } else {
                    b
                };
                let mut i = a;
                while i > b {
                    out.push(i as usize);
                    i += step;
                }
            }
            Ok((out, true))
        }
        Axis::Ellipsis => Ok(((0..len).collect(), true)),
    }
}

/// Reads the elements `spec` selects from `t`, decoding only those.
///
/// # Errors
///
/// [`Error::Invalid`] for more axes than the tensor has or an index out of
/// range; a `tensor_core` error for elements with no numeric value.
pub fn read(t: &Tensor<'_>, spec: &SliceSpec) -> Result<Values> {
    let dims = t.dims();
    let given = spec.axes.iter().filter(|a| **a != Axis::Ellipsis).count();
    if given > dims.len() {
        return Err(Error::Invalid(format!(
            "{given} axes given for a tensor of {} (shape {dims:?})",
            dims.len()
        )));
    }
    let mut axes: Vec<Axis> = Vec::with_capacity(dims.len());
    for a in &spec.axes {
        if *a == Axis::Ellipsis {
            axes.extend(std::iter::repeat_n(Axis::Ellipsis, dims.len() - given));
        } else {
            axes.push(*a);
        }
    }
    axes.resize(dims.len(), Axis::Ellipsis);
    let mut picks = Vec::with_capacity(dims.len());
    let mut out_dims = Vec::new();
    for (k, (a, &d)) in axes.iter().zip(dims).enumerate() {
        let (p, keep) = positions(*a, d, k)?;
        if keep {
            out_dims.push(p.len());
        }
        picks.push(p);
    }
    // strides of the stored order, in elements
    let mut strides = vec![0usize; dims.len()];
    let mut acc = 1usize;
    let order: Vec<usize> = match t.order() {
        MemoryOrder::RowMajor => (0..dims.len()).rev().collect(),
        MemoryOrder::ColumnMajor => (0..dims.len()).collect(),
    };
    for k in order {
        strides[k] = acc;
        acc = acc.saturating_mul(dims[k]);
    }
    let total: usize = picks.iter().map(Vec::len).product();
    let size = t.dtype().size();
    let kind = t.dtype().sum_kind();
    if kind == SumKind::None {
        // the error to_vec gives for elements without a numeric value
        Tensor::new(t.dtype(), [0usize], Vec::new())?.to_vec::<f64>()?;
    }
    let bytes = t.bytes();
    let mut values = Vec::with_capacity(total);
    let mut idx = vec![0usize; dims.len()];
    for _ in 0..total {
        let flat: usize = idx
            .iter()
            .zip(&picks)
            .zip(&strides)
            .map(|((&i, p), s)| p[i] * s)
            .sum();
        let off = flat * size;
        let one = Tensor::new(t.dtype(), [1usize], &bytes[off..off + size])?;
        values.push(number(&one)?);
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < picks[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(Values {
        dims: out_dims,
        values,
    })
}

fn number(one: &Tensor<'_>) -> Result<Number> {
    Ok(match one.dtype() {
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => Number::UInt(one.to_vec::<u64>()?[0]),
        DType::Bool | DType::I8 | DType::I16 | DType::I32 | DType::I64 => {
            Number::Int(one.to_vec::<i64>()?[0])
        }
        _ => Number::Float(one.to_vec::<f64>()?[0]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &Values) -> Vec<i64> {
        v.values
            .iter()
            .map(|n| match n {
                Number::Int(i) => *i,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn numpy_slices() {
        let t = Tensor::from_values([3, 4], &(0..12).collect::<Vec<i32>>()).unwrap();
        let r = |s: &str| read(&t, &s.parse().unwrap()).unwrap();
        assert_eq!(ints(&r("0:2, :")), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(r("0:2, :").dims, [2, 4]);
        assert_eq!(ints(&r("1")), [4, 5, 6, 7]);
        assert_eq!(r("1").dims, [4]);
        assert_eq!(ints(&r("-1, -1")), [11]);
        assert_eq!(r("-1, -1").dims, Vec::<usize>::new());
        assert_eq!(ints(&r(":, ::2")), [0, 2, 4, 6, 8, 10]);
        assert_eq!(ints(&r("..., 1")), [1, 5, 9]);
        assert_eq!(ints(&r("::-1, 0")), [8, 4, 0]);
        assert_eq!(ints(&r("1:100")), [4, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(ints(&r("")), (0..12).collect::<Vec<_>>());
        assert!(read(&t, &"3".parse().unwrap()).is_err());
        assert!(read(&t, &"0,0,0".parse().unwrap()).is_err());
        assert!("a:b".parse::<SliceSpec>().is_err());
        assert!("::0".parse::<SliceSpec>().is_err());
    }

    #[test]
    fn column_major_slices_read_logical_elements() {
        // logical [[0, 1, 2], [3, 4, 5]] stored column-major: 0 3 1 4 2 5
        let col: Vec<u8> = [0i32, 3, 1, 4, 2, 5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let t = Tensor::with_order(DType::I32, [2, 3], MemoryOrder::ColumnMajor, col).unwrap();
        let v = read(&t, &"1, :".parse().unwrap()).unwrap();
        assert_eq!(ints(&v), [3, 4, 5]);
    }
}
