//! Sorting, selection, cumulative products, shapes and one-hot vectors:
//! `Sort`, `TopKData`, `CumProd`, `Shape` and `OneHot`.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_int, a_ints};
use crate::export::{Error, Result};

/// `axis` (negative from the end) of a rank-`rank` tensor, or an error.
fn norm_axis(n: &Node, axis: i64, rank: usize) -> Result<usize> {
    let r = i64::try_from(rank).map_err(|_| Error::Invalid("rank too large".into()))?;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(Error::Invalid(format!(
            "{} function {:?}: axis {axis} is outside a rank-{rank} input",
            n.op, n.name
        )))
    }
}

impl Exporter<'_> {
    /// The declared dimensions of `v`, or an error naming the function.
    fn known_dims(&self, n: &Node, v: &str) -> Result<Vec<i64>> {
        self.dims(v).ok_or_else(|| {
            Error::Unsupported(format!(
                "{} function {:?}: the shape of {v:?} is not declared",
                n.op, n.name
            ))
        })
    }

    /// Lowers `Sort(axis, reverse)`: `TopK` of every element along `axis`
    /// (largest first when `reverse`). The index outputs are not exported.
    pub(crate) fn sort(&mut self, n: &Node, c: &Call) -> Result<()> {
        if a_bool(n, "with_index") || a_bool(n, "only_index") {
            return Err(Error::Unsupported(
                "Sort with_index/only_index is not exported (nnabla's indices are \
                 unsigned 64-bit integers, not a float output)"
                    .into(),
            ));
        }
        let x = c.input(0)?;
        let dims = self.known_dims(n, x)?;
        let axis = norm_axis(n, a_int(n, "axis", -1), dims.len())?;
        let len = dims[axis];
        if len < 0 {
            return Err(Error::Unsupported(format!(
                "Sort function {:?}: the length of axis {axis} is not known",
                n.name
            )));
        }
        let k = self.cx.ints(&[len]);
        let idx = self.cx.helper_name("sort_index");
        self.cx.b.node(
            "TopK",
            &n.name,
            &[x, &k],
            &[c.out, &idx],
            vec![
                attr::int("axis", axis as i64),
                attr::int("largest", i64::from(a_bool(n, "reverse"))),
                attr::int("sorted", 1),
            ],
        );
        Ok(())
    }

    /// Lowers `TopKData(k, abs, reduce, base_axis, largest)`: the `k`
    /// largest (smallest) of each sample's flattened features by value or
    /// magnitude; `reduce` keeps them alone in selection order, else they
    /// stay in place and every other element is 0.
    pub(crate) fn top_k_data(&mut self, n: &Node, c: &Call) -> Result<()> {
        if a_bool(n, "with_index") {
            return Err(Error::Unsupported(
                "TopKData with_index is not exported (nnabla's indices are unsigned \
                 64-bit integers)"
                    .into(),
            ));
        }
        let x = c.input(0)?;
        let dims = self.known_dims(n, x)?;
        let base = a_int(n, "base_axis", 1);
        let base = usize::try_from(base)
            .ok()
            .filter(|&b| b <= dims.len())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "TopKData function {:?}: base_axis {base} is outside a rank-{} input",
                    n.name,
                    dims.len()
                ))
            })?;
        let k = a_int(n, "k", 1);
        if k < 1 {
            return Err(Error::Invalid(format!(
                "TopKData function {:?}: k = {k} (at least 1)",
                n.name
            )));
        }
        let mut flat_shape = vec![0; base];
        flat_shape.push(-1);
        let xf = self.cx.reshape(x, &flat_shape);
        let key = if a_bool(n, "abs") {
            self.cx.op("Abs", &[&xf], vec![])
        } else {
            xf.clone()
        };
        let kk = self.cx.ints(&[k]);
        let vals = self.cx.helper_name("topk_values");
        let idx = self.cx.helper_name("topk_index");
        let largest = a_int(n, "largest", 1) != 0;
        self.cx.b.node(
            "TopK",
            "",
            &[&key, &kk],
            &[&vals, &idx],
            vec![
                attr::int("axis", -1),
                attr::int("largest", i64::from(largest)),
                attr::int("sorted", 1),
            ],
        );
        let picked = if a_bool(n, "abs") {
            self.cx
                .op("GatherElements", &[&xf, &idx], vec![attr::int("axis", -1)])
        } else {
            vals
        };
        let reduce = a_int(n, "reduce", 1) != 0;
        if reduce {
            self.cx
                .op_to("Identity", &n.name, &[&picked], c.out, vec![]);
            return Ok(());
        }
        let s = self.cx.op("Shape", &[&xf], vec![]);
        let zeros = self.cx.op("ConstantOfShape", &[&s], vec![]);
        let placed = self.cx.op(
            "ScatterElements",
            &[&zeros, &idx, &picked],
            vec![attr::int("axis", -1)],
        );
        let xs = self.cx.op("Shape", &[x], vec![]);
        self.cx
            .op_to("Reshape", &n.name, &[&placed, &xs], c.out, vec![]);
        Ok(())
    }

    /// Lowers `CumProd(axis, exclusive, reverse)`: running products of the
    /// slices along `axis` (ONNX has no cumulative product), concatenated.
    pub(crate) fn cumprod(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let dims = self.known_dims(n, x)?;
        let axis = norm_axis(n, a_int(n, "axis", 0), dims.len())?;
        let len = dims[axis];
        if !(1..=4096).contains(&len) {
            return Err(Error::Unsupported(format!(
                "CumProd function {:?}: axis {axis} has length {len} (a known length of \
                 1 to 4096 is exported as that many products)",
                n.name
            )));
        }
        let (exclusive, reverse) = (a_bool(n, "exclusive"), a_bool(n, "reverse"));
        let ax = self.cx.ints(&[axis as i64]);
        let n_len = len as usize;
        let order: Vec<usize> = if reverse {
            (0..n_len).rev().collect()
        } else {
            (0..n_len).collect()
        };
        let mut outs = vec![String::new(); n_len];
        let mut acc: Option<String> = None;
        for (pos, &i) in order.iter().enumerate() {
            let last = pos + 1 == n_len;
            if exclusive && last && acc.is_some() {
                // the last slice enters no exclusive product
                outs[i] = acc.take().unwrap_or_default();
                break;
            }
            let (s, e) = (self.cx.ints(&[i as i64]), self.cx.ints(&[i as i64 + 1]));
            let slice = self.cx.op("Slice", &[x, &s, &e, &ax], vec![]);
            let with = match &acc {
                Some(a) => self.cx.op("Mul", &[a, &slice], vec![]),
                None => slice.clone(),
            };
            outs[i] = if exclusive {
                match &acc {
                    Some(a) => a.clone(),
                    // ones of the slice's shape: x^0 is 1 for every x
                    None => {
                        let zero = self.cx.scalar(0.0);
                        self.cx.op("Pow", &[&slice, &zero], vec![])
                    }
                }
            } else {
                with.clone()
            };
            acc = Some(with);
        }
        let refs: Vec<&str> = outs.iter().map(String::as_str).collect();
        self.cx.op_to(
            "Concat",
            &n.name,
            &refs,
            c.out,
            vec![attr::int("axis", axis as i64)],
        );
        Ok(())
    }

    /// Lowers `Shape(start, end)`: the dimensions `start..end` of the input
    /// (`end` 0: to the last), as floats.
    pub(crate) fn shape_of(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let rank = self.rank(n, x)?;
        let r = rank as i64;
        let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r);
        let start = clamp(a_int(n, "start", 0));
        let end = match a_int(n, "end", 0) {
            0 => r,
            e => clamp(e),
        };
        let s = self.cx.op("Shape", &[x], vec![]);
        let (b, e) = (self.cx.ints(&[start]), self.cx.ints(&[end.max(start)]));
        let sl = self.cx.op("Slice", &[&s, &b, &e], vec![]);
        self.cx.cast_float_to(&n.name, &sl, c.out);
        Ok(())
    }

    /// Lowers `OneHot(shape)`: the last axis of the input holds one index per
    /// dimension of `shape` (negative from the end); each becomes a one-hot
    /// block of `shape`.
    pub(crate) fn one_hot(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let shape = a_ints(n, "shape");
        let rank = self.rank(n, x)?;
        if shape.is_empty() || shape.iter().any(|&d| d < 1) {
            return Err(Error::Invalid(format!(
                "OneHot function {:?}: shape {shape:?} (positive dimensions)",
                n.name
            )));
        }
        let total = shape
            .iter()
            .try_fold(1i64, |a, &d| a.checked_mul(d))
            .filter(|&t| t <= 1 << 24)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "OneHot function {:?}: shape {shape:?} has more than 2^24 elements",
                    n.name
                ))
            })?;
        let mut strides = vec![1f32; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1] as f32;
        }
        let d = shape.len() as i64;
        let sizes: Vec<f32> = shape.iter().map(|&s| s as f32).collect();
        let sizes = self.cx.floats("onehot_sizes", &sizes, &[d]);
        let zero = self.cx.scalar(0.0);
        let neg = self.cx.op("Less", &[x, &zero], vec![]);
        let wrapped = self.cx.op("Add", &[x, &sizes], vec![]);
        let idx = self.cx.op("Where", &[&neg, &wrapped, x], vec![]);
        let strides = self.cx.floats("onehot_strides", &strides, &[d]);
        let weighted = self.cx.op("Mul", &[&idx, &strides], vec![]);
        let flat = self.cx.reduce("ReduceSum", &weighted, &[-1], true);
        let range: Vec<f32> = (0..total).map(|v| v as f32).collect();
        let range = self.cx.floats("onehot_range", &range, &[total]);
        let hit = self.cx.op("Equal", &[&flat, &range], vec![]);
        let f = self.cx.cast(&hit, DataType::Float);
        let mut target = vec![0i64; rank.saturating_sub(1)];
        target.extend_from_slice(&shape);
        let t = self.cx.ints(&target);
        self.cx.op_to("Reshape", &n.name, &[&f, &t], c.out, vec![]);
        Ok(())
    }
}
