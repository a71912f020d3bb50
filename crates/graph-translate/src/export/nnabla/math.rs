//! Elementwise math composed of several ONNX operators: `Where`, scalar
//! comparisons and logic, `ResetNaN`/`ResetInf`, `ATan2`, `Sinc`, `MulN`,
//! cumulative sums and norms.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_float, a_int, a_ints};
use crate::export::{Error, Result};

/// Whether [`Exporter::compare_scalar_as`] negates the comparison.
#[derive(Clone, Copy)]
enum Negate {
    Yes,
    No,
}

impl Exporter<'_> {
    /// Lowers `Where(condition, x_true, x_false)`: non-zero is true.
    pub(crate) fn where_(&mut self, n: &Node, c: &Call) -> Result<()> {
        let m = self.cx.cast(c.input(0)?, DataType::Bool);
        let (t, f) = (c.input(1)?, c.input(2)?);
        self.cx.op_to("Where", &n.name, &[&m, t, f], c.out, vec![]);
        Ok(())
    }

    /// Lowers `XScalar(x, val)` comparisons: the ONNX comparison with `val`
    /// second, cast to float.
    pub(crate) fn compare_scalar(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.compare_scalar_as(n, c, Negate::No)
    }

    /// Lowers `NotEqualScalar(x, val)`: the entry's `Equal` with `val`
    /// second, negated, cast to float.
    pub(crate) fn not_equal_scalar(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.compare_scalar_as(n, c, Negate::Yes)
    }

    fn compare_scalar_as(&mut self, n: &Node, c: &Call, negate: Negate) -> Result<()> {
        let k = self.cx.scalar(a_float(n, "val", 0.0) as f32);
        let b = self.cx.op(c.onnx(), &[c.input(0)?, &k], vec![]);
        let b = match negate {
            Negate::Yes => self.cx.op("Not", &[&b], vec![]),
            Negate::No => b,
        };
        self.cx.cast_float_to(&n.name, &b, c.out);
        Ok(())
    }

    /// Lowers `LogicalXScalar(x, val)`: `x` as booleans with the boolean
    /// `val`.
    pub(crate) fn logical_scalar(&mut self, n: &Node, c: &Call) -> Result<()> {
        let a = self.cx.cast(c.input(0)?, DataType::Bool);
        let v = self.cx.scalar(if a_bool(n, "val") { 1.0 } else { 0.0 });
        let b = self.cx.cast(&v, DataType::Bool);
        let r = self.cx.op(c.onnx(), &[&a, &b], vec![]);
        self.cx.cast_float_to(&n.name, &r, c.out);
        Ok(())
    }

    /// Lowers `ResetNaN`: `val` where `x` is NaN.
    pub(crate) fn reset_nan(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.reset(n, c, "IsNaN")
    }

    /// Lowers `ResetInf`: `val` where `x` is infinite.
    pub(crate) fn reset_inf(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.reset(n, c, "IsInf")
    }

    /// `val` where the ONNX `test` (`IsNaN`, `IsInf`) of `x` holds.
    fn reset(&mut self, n: &Node, c: &Call, test: &str) -> Result<()> {
        let x = c.input(0)?;
        let m = self.cx.op(test, &[x], vec![]);
        let v = self.cx.scalar(a_float(n, "val", 0.0) as f32);
        self.cx.op_to("Where", &n.name, &[&m, &v, x], c.out, vec![]);
        Ok(())
    }

    /// Lowers `MulN`: a chain of `Mul`.
    pub(crate) fn mul_n(&mut self, n: &Node, c: &Call) -> Result<()> {
        let mut acc = c.input(0)?.to_string();
        let rest = &c.ins[1..];
        for (k, x) in rest.iter().enumerate() {
            if k + 1 == rest.len() {
                self.cx.op_to("Mul", &n.name, &[&acc, x], c.out, vec![]);
                return Ok(());
            }
            acc = self.cx.op("Mul", &[&acc, x], vec![]);
        }
        self.cx.op_to("Identity", &n.name, &[&acc], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Sinc`: `sin(x) / x` (nnabla's, unnormalised), 1 at 0.
    pub(crate) fn sinc(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let s = self.cx.op("Sin", &[x], vec![]);
        let q = self.cx.op("Div", &[&s, x], vec![]);
        let zero = self.cx.scalar(0.0);
        let one = self.cx.scalar(1.0);
        let z = self.cx.op("Equal", &[x, &zero], vec![]);
        self.cx
            .op_to("Where", &n.name, &[&z, &one, &q], c.out, vec![]);
        Ok(())
    }

    /// Lowers `ATan2(y, x)`: `atan(y / x)` moved to the quadrant of
    /// `(x, y)`; `±pi/2` or 0 on the `y` axis.
    pub(crate) fn atan2(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (y, x) = (c.input(0)?, c.input(1)?);
        let cx = &mut self.cx;
        let zero = cx.scalar(0.0);
        let pi = cx.scalar(std::f32::consts::PI);
        let npi = cx.scalar(-std::f32::consts::PI);
        let hpi = cx.scalar(std::f32::consts::FRAC_PI_2);
        let nhpi = cx.scalar(-std::f32::consts::FRAC_PI_2);
        let q = cx.op("Div", &[y, x], vec![]);
        let a = cx.op("Atan", &[&q], vec![]);
        let y_neg = cx.op("Less", &[y, &zero], vec![]);
        let y_pos = cx.op("Greater", &[y, &zero], vec![]);
        let shift = cx.op("Where", &[&y_neg, &npi, &pi], vec![]);
        let left = cx.op("Add", &[&a, &shift], vec![]);
        let x_neg = cx.op("Less", &[x, &zero], vec![]);
        let x_pos = cx.op("Greater", &[x, &zero], vec![]);
        let axis_neg = cx.op("Where", &[&y_neg, &nhpi, &zero], vec![]);
        let axis = cx.op("Where", &[&y_pos, &hpi, &axis_neg], vec![]);
        let not_right = cx.op("Where", &[&x_neg, &left, &axis], vec![]);
        cx.op_to("Where", &n.name, &[&x_pos, &a, &not_right], c.out, vec![]);
        Ok(())
    }

    /// Lowers `CumSum(axis, exclusive, reverse)`.
    pub(crate) fn cumsum(&mut self, n: &Node, c: &Call) -> Result<()> {
        let axis = self.cx.ints(&[a_int(n, "axis", 0)]);
        let axis = self.cx.squeeze0(&axis);
        self.cx.op_to(
            "CumSum",
            &n.name,
            &[c.input(0)?, &axis],
            c.out,
            vec![
                attr::int("exclusive", i64::from(a_bool(n, "exclusive"))),
                attr::int("reverse", i64::from(a_bool(n, "reverse"))),
            ],
        );
        Ok(())
    }

    /// Lowers `Norm(p, axes, keep_dims)`: `ReduceL1`/`ReduceL2` for p 1
    /// and 2, else `(sum |x|^p)^(1/p)`.
    pub(crate) fn norm(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let p = a_float(n, "p", 2.0);
        let axes = a_ints(n, "axes");
        let keep = a_bool(n, "keep_dims");
        if p <= 0.0 || !p.is_finite() {
            return Err(Error::Unsupported(format!(
                "p = {p} (a positive finite p is exported)"
            )));
        }
        let r = if p == 1.0 || p == 2.0 {
            let op = if p == 1.0 { "ReduceL1" } else { "ReduceL2" };
            self.cx.reduce(op, x, &axes, keep)
        } else {
            let a = self.cx.op("Abs", &[x], vec![]);
            let pk = self.cx.scalar(p as f32);
            let ap = self.cx.op("Pow", &[&a, &pk], vec![]);
            let s = self.cx.reduce("ReduceSum", &ap, &axes, keep);
            let ip = self.cx.scalar((1.0 / p) as f32);
            self.cx.op("Pow", &[&s, &ip], vec![])
        };
        self.cx.op_to("Identity", &n.name, &[&r], c.out, vec![]);
        Ok(())
    }
}
