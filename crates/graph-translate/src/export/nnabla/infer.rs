//! Shape inference for variables whose shape a network leaves undeclared.

use tensor_core::graph::Node;

use super::super::nnabla_table::{Shape, TABLE};
use super::super::table::find;
use super::{Exporter, a_bool, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// The shape rule of `n`'s table entry.
    fn shape_rule(n: &Node) -> Option<Shape> {
        find(TABLE.as_slice(), &n.op)
            .and_then(|e| e.lower)
            .map(|(_, r)| r)
    }

    /// The output shape of the functions whose shape follows from their
    /// inputs' (elementwise, transposes, pooling, convolution, affine).
    pub(super) fn infer_shape(&self, n: &Node) -> Option<Vec<i64>> {
        let x = self.dims(n.inputs.first()?)?;
        match Self::shape_rule(n)? {
            Shape::Same => Some(x),
            Shape::Broadcast => {
                let y = self.dims(n.inputs.get(1)?)?;
                Some(broadcast(&x, &y))
            }
            Shape::Transpose => Some(
                a_ints(n, "axes")
                    .iter()
                    .map(|&a| x.get(a as usize).copied().unwrap_or(-1))
                    .collect(),
            ),
            Shape::Pool => {
                let k = a_ints(n, "kernel");
                let lead = x.len().checked_sub(k.len())?;
                let (stride, pad) = pool_stride_pad(n, &k).ok()?;
                let ib = a_bool(n, "ignore_border");
                let mut out = x[..lead].to_vec();
                for i in 0..k.len() {
                    out.push(pool_out(x[lead + i], k[i], stride[i], pad[i], ib));
                }
                Some(out)
            }
            Shape::GlobalPool => {
                let mut out = x.get(..2)?.to_vec();
                out.resize(x.len(), 1);
                Some(out)
            }
            Shape::Conv => {
                let w = self.dims(n.inputs.get(1)?)?;
                conv_shape(n, &x, &w)
            }
            Shape::Affine => {
                let w = self.dims(n.inputs.get(1)?)?;
                let base = a_int(n, "base_axis", 1) as usize;
                let mut out = x.get(..base)?.to_vec();
                out.extend_from_slice(w.get(1..)?);
                Some(out)
            }
            Shape::Reshape => Some(a_ints(n, "shape")),
            // one value per matrix
            Shape::PerMatrix => Some(x[..x.len().checked_sub(2)?].to_vec()),
            Shape::AffineGrid => match a_ints(n, "size")[..] {
                [h, w] => Some(vec![*x.first()?, h, w, 2]),
                _ => None,
            },
            Shape::SameRank
            | Shape::Reduce
            | Shape::Split
            | Shape::Stack
            | Shape::LargerRank
            | Shape::Custom => None,
        }
    }

    pub(super) fn infer_ranks(&mut self, n: &Node) {
        if let Some(out) = n.outputs.first()
            && !self.shapes.contains_key(out.as_str())
            && let Some(s) = self.infer_shape(n)
        {
            self.inferred.insert(out.clone(), s);
            return;
        }
        let r = |k: usize| n.inputs.get(k).and_then(|v| self.known_rank(v));
        let out = match Self::shape_rule(n) {
            Some(
                Shape::Same
                | Shape::SameRank
                | Shape::Transpose
                | Shape::Pool
                | Shape::GlobalPool
                | Shape::Conv,
            ) => r(0),
            Some(Shape::Broadcast | Shape::LargerRank) => r(0).max(r(1)),
            Some(Shape::Reduce) => {
                let axes = a_ints(n, "axes").len();
                if a_bool(n, "keep_dims") {
                    r(0)
                } else if axes == 0 {
                    Some(0)
                } else {
                    r(0).map(|x| x.saturating_sub(axes))
                }
            }
            Some(Shape::Affine) => {
                let w = n
                    .inputs
                    .get(1)
                    .and_then(|v| self.known_rank(v))
                    .unwrap_or(2);
                Some(a_int(n, "base_axis", 1).max(0) as usize + w.saturating_sub(1))
            }
            Some(Shape::Reshape) => Some(a_ints(n, "shape").len()),
            Some(Shape::Split) => r(0).map(|x| x.saturating_sub(1)),
            Some(Shape::Stack) => r(0).map(|x| x + 1),
            Some(Shape::PerMatrix) => r(0).and_then(|x| x.checked_sub(2)),
            Some(Shape::AffineGrid) => Some(a_ints(n, "size").len() + 2),
            Some(Shape::Custom) | None => None,
        };
        if let Some(k) = out {
            for o in &n.outputs {
                if self.shape(o).is_none() {
                    self.ranks.insert(o.clone(), k);
                }
            }
        }
    }
}

/// The numpy broadcast shape of `x` and `y` (`-1` where two dimensions
/// differ and neither is 1).
fn broadcast(x: &[i64], y: &[i64]) -> Vec<i64> {
    let r = x.len().max(y.len());
    let pad = |v: &[i64]| {
        let mut p = vec![1; r - v.len()];
        p.extend_from_slice(v);
        p
    };
    let (x, y) = (pad(x), pad(y));
    x.iter()
        .zip(&y)
        .map(|(&a, &b)| {
            if a == 1 {
                b
            } else if b == 1 || a == b {
                a
            } else {
                -1
            }
        })
        .collect()
}

/// A convolution's output shape from input `x` and weight `w` (`pad`,
/// `stride`, `dilation`; `-1` where a size is not known).
fn conv_shape(n: &Node, x: &[i64], w: &[i64]) -> Option<Vec<i64>> {
    let k = w.len().checked_sub(2)?;
    let sp = x.len().checked_sub(k)?;
    let or = |v: Vec<i64>, d: i64| if v.is_empty() { vec![d; k] } else { v };
    let (pad, stride, dil) = (
        or(a_ints(n, "pad"), 0),
        or(a_ints(n, "stride"), 1),
        or(a_ints(n, "dilation"), 1),
    );
    let mut out = x[..sp.checked_sub(1)?].to_vec();
    out.push(w[0]);
    for i in 0..k {
        let (d, kernel) = (x[sp + i], w[2 + i]);
        // a file's pad, stride or dilation may be short, or large enough
        // to overflow: the size is then unknown, not a panic
        let (p, s, dl) = (*pad.get(i)?, *stride.get(i)?, *dil.get(i)?);
        let size = || {
            let span = dl.checked_mul(kernel.checked_sub(1)?)?;
            let n = d.checked_add(p.checked_mul(2)?)?.checked_sub(span)?;
            n.checked_sub(1)?.div_euclid(s).checked_add(1)
        };
        out.push(if d < 0 || s <= 0 {
            -1
        } else {
            size().unwrap_or(-1)
        });
    }
    Some(out)
}

/// A pooling function's stride (default: the kernel) and pad (default 0).
pub(crate) fn pool_stride_pad(n: &Node, kernel: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
    let k = kernel.len();
    let stride = per_axis(n, "stride", k, |i| kernel[i])?;
    Ok((stride, per_axis(n, "pad", k, |_| 0)?))
}

/// The `key` values of `n`, one per axis of a `k`-D kernel (`default(i)`
/// on axis `i` when the file gives none); refused when the file gives
/// another count, as nnabla refuses it.
pub(crate) fn per_axis(
    n: &Node,
    key: &str,
    k: usize,
    default: impl Fn(usize) -> i64,
) -> Result<Vec<i64>> {
    let v = a_ints(n, key);
    if v.is_empty() {
        return Ok((0..k).map(default).collect());
    }
    if v.len() != k {
        let values = if v.len() == 1 { "value" } else { "values" };
        return Err(Error::Invalid(format!(
            "{key} has {} {values} for a {k}-D kernel (one per axis)",
            v.len()
        )));
    }
    Ok(v)
}

/// nnabla's pooled size of an axis of `w` (`-1`: unknown, or too large
/// for an `i64`).
pub(crate) fn pool_out(w: i64, k: i64, s: i64, p: i64, ignore_border: bool) -> i64 {
    if w < 0 || s <= 0 {
        return -1;
    }
    let size = || {
        if ignore_border {
            let n = w.checked_add(p.checked_mul(2)?)?.checked_sub(k)?;
            n.div_euclid(s).checked_add(1)
        } else {
            Some(w.checked_add(p)?.checked_add(s - 1)?.div_euclid(s))
        }
    };
    size().unwrap_or(-1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensor_core::graph::Attribute;

    fn conv(attrs: &[(&str, Vec<i64>)]) -> Node {
        let mut n = Node::new("Convolution", "c", ["x", "w"], ["y"]);
        for (k, v) in attrs {
            n.attributes
                .push((k.to_string(), Attribute::Ints(v.clone())));
        }
        n
    }

    #[test]
    fn conv_shape_follows_pad_stride_and_dilation() {
        let n = conv(&[("pad", vec![1, 0]), ("stride", vec![2, 1])]);
        let y = conv_shape(&n, &[1, 3, 8, 9], &[4, 3, 3, 3]);
        assert_eq!(y, Some(vec![1, 4, 4, 7]));
    }

    #[test]
    fn a_short_or_huge_convolution_attribute_gives_no_shape_not_a_panic() {
        // one pad value for a 2-D kernel
        let n = conv(&[("pad", vec![1])]);
        assert_eq!(conv_shape(&n, &[1, 3, 8, 8], &[4, 3, 3, 3]), None);
        // sizes that overflow i64: unknown
        let n = conv(&[("pad", vec![i64::MAX, 0]), ("dilation", vec![i64::MAX, 1])]);
        let y = conv_shape(&n, &[1, 3, 8, 8], &[4, 3, 3, 3]);
        assert_eq!(y, Some(vec![1, 4, -1, 6]));
    }
}
