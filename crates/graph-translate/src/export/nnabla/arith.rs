//! Arithmetic, comparisons, logic, reductions.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_float, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers an elementwise binary function with a one-to-one ONNX
    /// operator (numpy broadcasting, as nnabla's).
    pub(crate) fn binary(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (a, b) = (c.input(0)?, c.input(1)?);
        self.cx.op_to(c.onnx(), &n.name, &[a, b], c.out, vec![]);
        Ok(())
    }

    /// Lowers `XScalar(x, val)`: the ONNX operator with `val` second.
    pub(crate) fn scalar(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.scalar_op(n, c, false)
    }

    /// Lowers `RXScalar(x, val)`: the ONNX operator with `val` first.
    pub(crate) fn rscalar(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.scalar_op(n, c, true)
    }

    fn scalar_op(&mut self, n: &Node, c: &Call, first: bool) -> Result<()> {
        let k = self.cx.scalar(a_float(n, "val", 1.0) as f32);
        let x = c.input(0)?;
        let ab = if first {
            [k.as_str(), x]
        } else {
            [x, k.as_str()]
        };
        self.cx.op_to(c.onnx(), &n.name, &ab, c.out, vec![]);
        Ok(())
    }

    /// Lowers a comparison: the ONNX comparison cast to float (nnabla's
    /// 0/1 values).
    pub(crate) fn compare(&mut self, n: &Node, c: &Call) -> Result<()> {
        let b = self.cx.op(c.onnx(), &[c.input(0)?, c.input(1)?], vec![]);
        self.cx.cast_float_to(&n.name, &b, c.out);
        Ok(())
    }

    /// Lowers a logical function: inputs as booleans (non-zero is true),
    /// the result as float.
    pub(crate) fn logical(&mut self, n: &Node, c: &Call) -> Result<()> {
        let a = self.cx.cast(c.input(0)?, DataType::Bool);
        let b = self.cx.cast(c.input(1)?, DataType::Bool);
        let r = self.cx.op(c.onnx(), &[&a, &b], vec![]);
        self.cx.cast_float_to(&n.name, &r, c.out);
        Ok(())
    }

    /// Lowers a reduction over `axes` (all when empty), `keep_dims`.
    pub(crate) fn reduce(&mut self, n: &Node, c: &Call) -> Result<()> {
        if a_bool(n, "with_index") || a_bool(n, "only_index") {
            return Err(Error::Unsupported(
                "with_index/only_index is not exported".into(),
            ));
        }
        let r = self.cx.reduce(
            c.onnx(),
            c.input(0)?,
            &a_ints(n, "axes"),
            a_bool(n, "keep_dims"),
        );
        self.cx.op_to("Identity", &n.name, &[&r], c.out, vec![]);
        Ok(())
    }

    /// Lowers `NotEqual`.
    pub(crate) fn not_equal(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let e = self.cx.op("Equal", &[input(0)?, input(1)?], vec![]);
        let ne = self.cx.op("Not", &[&e], vec![]);
        self.cx.op_to(
            "Cast",
            name,
            &[&ne],
            out,
            vec![attr::int("to", DataType::Float as i64)],
        );
        Ok(())
    }

    /// Lowers `LogicalNot`.
    pub(crate) fn logical_not(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let b = self.cx.cast(input(0)?, DataType::Bool);
        let nb = self.cx.op("Not", &[&b], vec![]);
        self.cx.op_to(
            "Cast",
            name,
            &[&nb],
            out,
            vec![attr::int("to", DataType::Float as i64)],
        );
        Ok(())
    }

    /// Lowers `BoolFill`.
    pub(crate) fn bool_fill(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let (x, mask) = (input(0)?, input(1)?);
        let m = self.cx.cast(mask, DataType::Bool);
        let v = self.cx.scalar(a_float(n, "value", 0.0) as f32);
        self.cx.op_to("Where", name, &[&m, &v, x], out, vec![]);
        Ok(())
    }
}
