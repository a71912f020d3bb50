//! Shape inference for variables whose shape a network leaves undeclared.

use tensor_core::graph::Node;

use super::super::nnabla_table::{Shape, TABLE};
use super::super::table::find;
use super::{Exporter, a_bool, a_int, a_ints};

impl Exporter<'_> {
    /// The output shape of the functions whose shape follows from their
    /// inputs' (elementwise, transposes, pooling, convolution, affine).
    pub(super) fn infer_shape(&self, n: &Node) -> Option<Vec<i64>> {
        let op = n.op.as_str();
        let x = self.dims(n.inputs.first()?)?;
        let rule = find(TABLE.as_slice(), op)
            .and_then(|e| e.lower)
            .map(|(_, r)| r);
        let same = rule == Some(Shape::Same);
        if same {
            return Some(x);
        }
        if rule == Some(Shape::Broadcast) {
            let y = self.dims(n.inputs.get(1)?)?;
            let r = x.len().max(y.len());
            let pad = |v: &[i64]| {
                let mut p = vec![1; r - v.len()];
                p.extend_from_slice(v);
                p
            };
            let (x, y) = (pad(&x), pad(&y));
            return Some(
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
                    .collect(),
            );
        }
        match op {
            "Transpose" => Some(
                a_ints(n, "axes")
                    .iter()
                    .map(|&a| x.get(a as usize).copied().unwrap_or(-1))
                    .collect(),
            ),
            "MaxPooling" | "AveragePooling" | "SumPooling" => {
                let k = a_ints(n, "kernel");
                let lead = x.len().checked_sub(k.len())?;
                let (stride, pad) = pool_stride_pad(n, &k);
                let ib = a_bool(n, "ignore_border");
                let mut out = x[..lead].to_vec();
                for i in 0..k.len() {
                    out.push(pool_out(x[lead + i], k[i], stride[i], pad[i], ib));
                }
                Some(out)
            }
            "GlobalAveragePooling" => {
                let mut out = x.get(..2)?.to_vec();
                out.resize(x.len(), 1);
                Some(out)
            }
            "Convolution" | "BinaryConnectConvolution" => {
                let w = self.dims(n.inputs.get(1)?)?;
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
                    let d = x[sp + i];
                    out.push(if d < 0 || stride[i] <= 0 {
                        -1
                    } else {
                        (d + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1).div_euclid(stride[i]) + 1
                    });
                }
                Some(out)
            }
            "Affine" | "BinaryConnectAffine" | "BinaryWeightAffine" => {
                let w = self.dims(n.inputs.get(1)?)?;
                let base = a_int(n, "base_axis", 1) as usize;
                let mut out = x.get(..base)?.to_vec();
                out.extend_from_slice(w.get(1..)?);
                Some(out)
            }
            "Reshape" => Some(a_ints(n, "shape")),
            // one value per matrix
            "BatchDet" | "BatchLogdet" => Some(x[..x.len().checked_sub(2)?].to_vec()),
            "AffineGrid" => match a_ints(n, "size")[..] {
                [h, w] => Some(vec![*x.first()?, h, w, 2]),
                _ => None,
            },
            _ => None,
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
        let op = n.op.as_str();
        let rule = find(TABLE.as_slice(), op)
            .and_then(|e| e.lower)
            .map(|(_, r)| r);
        let out = if matches!(rule, Some(Shape::Same | Shape::SameRank)) {
            r(0)
        } else if rule == Some(Shape::Broadcast) || op == "BatchMatmul" {
            r(0).max(r(1))
        } else if rule == Some(Shape::Reduce) {
            let axes = a_ints(n, "axes").len();
            if a_bool(n, "keep_dims") {
                r(0)
            } else if axes == 0 {
                Some(0)
            } else {
                r(0).map(|x| x.saturating_sub(axes))
            }
        } else {
            match op {
                "Affine" | "BinaryConnectAffine" | "BinaryWeightAffine" => {
                    let w = n
                        .inputs
                        .get(1)
                        .and_then(|v| self.known_rank(v))
                        .unwrap_or(2);
                    Some(a_int(n, "base_axis", 1).max(0) as usize + w.saturating_sub(1))
                }
                "Reshape" => Some(a_ints(n, "shape").len()),
                "BroadcastTo" => r(0),
                "Split" => r(0).map(|x| x.saturating_sub(1)),
                "Stack" => r(0).map(|x| x + 1),
                "BatchDet" | "BatchLogdet" => r(0).and_then(|x| x.checked_sub(2)),
                "AffineGrid" => Some(a_ints(n, "size").len() + 2),
                _ => None,
            }
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

/// A pooling function's stride (default: the kernel) and pad (default 0).
pub(crate) fn pool_stride_pad(n: &Node, kernel: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let s = a_ints(n, "stride");
    let p = a_ints(n, "pad");
    (
        if s.is_empty() { kernel.to_vec() } else { s },
        if p.is_empty() {
            vec![0; kernel.len()]
        } else {
            p
        },
    )
}

/// nnabla's pooled size of an axis of `w` (`-1`: unknown).
pub(crate) fn pool_out(w: i64, k: i64, s: i64, p: i64, ignore_border: bool) -> i64 {
    if w < 0 || s <= 0 {
        return -1;
    }
    if ignore_border {
        (w + 2 * p - k).div_euclid(s) + 1
    } else {
        (w + p + s - 1).div_euclid(s)
    }
}
