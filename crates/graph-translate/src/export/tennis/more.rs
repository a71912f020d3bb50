//! Element-wise functions with parameters, reductions and axis operators.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `square`: `x * x`.
    pub(crate) fn square(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        self.cx.op_to("Mul", c.out, &[x, x], c.out, vec![]);
        Ok(())
    }

    /// Lowers `rsqrt`: `1 / sqrt(x)`.
    pub(crate) fn rsqrt(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let s = self.cx.op("Sqrt", &[c.input(0)?], vec![]);
        self.cx.op_to("Reciprocal", c.out, &[&s], c.out, vec![]);
        Ok(())
    }

    /// Lowers `relu_max`: `min(max(x, 0), max)`.
    pub(crate) fn relu_max(&mut self, n: &Node, c: &Call) -> Result<()> {
        let lo = self.cx.scalar(0.0);
        let hi = self.cx.scalar(self.float(n, "max", 0.0) as f32);
        self.cx
            .op_to("Clip", c.out, &[c.input(0)?, &lo, &hi], c.out, vec![]);
        Ok(())
    }

    /// Lowers `hard_sigmoid`: `clip(alpha * x + beta, 0, 1)`.
    pub(crate) fn hard_sigmoid(&mut self, n: &Node, c: &Call) -> Result<()> {
        let attrs = vec![
            attr::float("alpha", self.float(n, "alpha", 0.2) as f32),
            attr::float("beta", self.float(n, "beta", 0.5) as f32),
        ];
        self.cx
            .op_to("HardSigmoid", c.out, &[c.input(0)?], c.out, attrs);
        Ok(())
    }

    /// Lowers `pow`: `x ^ y` with the scalar parameter `y`.
    pub(crate) fn pow(&mut self, n: &Node, c: &Call) -> Result<()> {
        let y = self.float(n, "y", f64::NAN);
        if y.is_nan() {
            return Err(Error::Invalid("no exponent y".into()));
        }
        let y = self.cx.scalar(y as f32);
        self.cx
            .op_to("Pow", c.out, &[c.input(0)?, &y], c.out, vec![]);
        Ok(())
    }

    /// The axes parameter `key` made non-negative for a rank-`r` input.
    fn axes(&self, n: &Node, key: &str, r: usize) -> Result<Vec<i64>> {
        let axes = self
            .ints(n, key)
            .ok_or_else(|| Error::Invalid(format!("no {key}")))?;
        axes.iter()
            .map(|&a| {
                let b = if a < 0 { a + r as i64 } else { a };
                if (0..r as i64).contains(&b) {
                    Ok(b)
                } else {
                    Err(Error::Invalid(format!("axis {a} of a rank-{r} input")))
                }
            })
            .collect()
    }

    /// The rank of `reduce_sum`, `reduce_mean`: input 0's, less `dims`
    /// when `keep_dims` is 0.
    pub(crate) fn rank_reduce(&self, n: &Node) -> Option<usize> {
        let r0 = self.rank_in(n, 0);
        if self.int(n, "keep_dims", 1) != 0 {
            return r0;
        }
        let k = self.ints(n, "dims").map_or(0, |d| d.len());
        r0.map(|r| r.saturating_sub(k))
    }

    /// The rank of `max`: input 0's, less one when `keep_dims` is 0.
    pub(crate) fn rank_max(&self, n: &Node) -> Option<usize> {
        let r0 = self.rank_in(n, 0);
        if self.int(n, "keep_dims", 1) != 0 {
            return r0;
        }
        r0.map(|r| r.saturating_sub(1))
    }

    /// The rank of `argmax`: input 0's less one.
    pub(crate) fn rank_argmax(&self, n: &Node) -> Option<usize> {
        self.rank_in(n, 0).map(|r| r.saturating_sub(1))
    }

    /// The rank of `squeeze`: input 0's less its `axes`.
    pub(crate) fn rank_squeeze(&self, n: &Node) -> Option<usize> {
        let k = self.ints(n, "axes")?.len();
        self.rank_in(n, 0).map(|r| r.saturating_sub(k))
    }

    /// The rank of `unsqueeze`: input 0's and its `axes`.
    pub(crate) fn rank_unsqueeze(&self, n: &Node) -> Option<usize> {
        let k = self.ints(n, "axes")?.len();
        self.rank_in(n, 0).map(|r| r + k)
    }

    /// Lowers `reduce_sum`.
    pub(crate) fn reduce_sum(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.reduce(n, c, "ReduceSum")
    }

    /// Lowers `reduce_mean`.
    pub(crate) fn reduce_mean(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.reduce(n, c, "ReduceMean")
    }

    /// Lowers `reduce_sum`, `reduce_mean` (ONNX's `op`): over `dims`,
    /// keeping them when `keep_dims` (TenniS's default).
    fn reduce(&mut self, n: &Node, c: &Call, op: &str) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let axes = self.axes(n, "dims", r)?;
        let keep = self.int(n, "keep_dims", 1) != 0;
        let y = self.cx.reduce(op, x, &axes, keep);
        self.cx.op_to("Identity", c.out, &[&y], c.out, vec![]);
        Ok(())
    }

    /// Lowers `max` (a reduction over `dim`, keeping it unless
    /// `keep_dims` is 0).
    pub(crate) fn reduce_max(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let axes = self.axes(n, "dim", r)?;
        let keep = self.int(n, "keep_dims", 1) != 0;
        let y = self.cx.reduce("ReduceMax", x, &axes, keep);
        self.cx.op_to("Identity", c.out, &[&y], c.out, vec![]);
        Ok(())
    }

    /// Lowers `argmax`: the first largest index along `dim`, the axis
    /// removed, as `INT32`.
    pub(crate) fn argmax(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let dim = self.int(n, "dim", 0);
        let i = self.cx.op(
            "ArgMax",
            &[x],
            vec![attr::int("axis", dim), attr::int("keepdims", 0)],
        );
        self.cx.op_to(
            "Cast",
            c.out,
            &[&i],
            c.out,
            vec![attr::int("to", DataType::Int32 as i64)],
        );
        Ok(())
    }

    /// Lowers `squeeze` (the listed `axes`).
    pub(crate) fn squeeze(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let axes = self.axes(n, "axes", r).map_err(|_| {
            Error::Unsupported("squeeze without axes (the output rank depends on the data)".into())
        })?;
        let a = self.cx.ints(&axes);
        self.cx.op_to("Squeeze", c.out, &[x, &a], c.out, vec![]);
        Ok(())
    }

    /// Lowers `unsqueeze` (`axes` of the output).
    pub(crate) fn unsqueeze(&mut self, n: &Node, c: &Call) -> Result<()> {
        let axes = self
            .ints(n, "axes")
            .ok_or_else(|| Error::Invalid("no axes".into()))?;
        let a = self.cx.ints(&axes);
        self.cx
            .op_to("Unsqueeze", c.out, &[c.input(0)?, &a], c.out, vec![]);
        Ok(())
    }

    /// Lowers `flatten2d`: `[prod(shape[..dim]), prod(shape[dim..])]`.
    pub(crate) fn flatten2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let dim = self.int(n, "dim", 1);
        self.cx.op_to(
            "Flatten",
            c.out,
            &[c.input(0)?],
            c.out,
            vec![attr::int("axis", dim)],
        );
        Ok(())
    }

    /// Lowers `tile` (`repeats` per axis).
    pub(crate) fn tile(&mut self, n: &Node, c: &Call) -> Result<()> {
        let rep = self
            .ints(n, "repeats")
            .ok_or_else(|| Error::Invalid("no repeats".into()))?;
        let x = c.input(0)?;
        if let Ok(r) = self.rank(x)
            && r != rep.len()
        {
            return Err(Error::Unsupported(format!(
                "{} repeats for a rank-{r} input",
                rep.len()
            )));
        }
        let rp = self.cx.ints(&rep);
        self.cx.op_to("Tile", c.out, &[x, &rp], c.out, vec![]);
        Ok(())
    }

    /// Lowers `l2_norm` as TenniS computes it: `x / sqrt(sum(x^2, dim) +
    /// epsilon)` (TenniS writes ones instead when axis `dim` has length 1;
    /// the lowering computes the formula there too).
    pub(crate) fn l2_norm(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let axes = self.axes(n, "dim", r)?;
        let eps = self.float(n, "epsilon", 1e-10) as f32;
        let sq = self.cx.op("Mul", &[x, x], vec![]);
        let s = self.cx.reduce("ReduceSum", &sq, &axes, true);
        let e = self.cx.scalar(eps);
        let se = self.cx.op("Add", &[&s, &e], vec![]);
        let d = self.cx.op("Sqrt", &[&se], vec![]);
        self.cx.op_to("Div", c.out, &[x, &d], c.out, vec![]);
        Ok(())
    }
}
