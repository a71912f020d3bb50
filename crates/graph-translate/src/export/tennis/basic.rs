//! Inputs, constants, arithmetic, shape and type operators.

use onnx_format::builder::{Dim, attr};
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers an operator with a one-to-one ONNX operator (the entry's
    /// first) on its inputs.
    pub(crate) fn direct(&mut self, _n: &Node, c: &Call) -> Result<()> {
        self.cx.op_to(c.onnx(), c.out, &c.ins, c.out, vec![]);
        Ok(())
    }

    /// The rank of `<param>` (a module input, see the module docs).
    pub(crate) fn rank_param(&self, n: &Node) -> Option<usize> {
        Some(self.param_rank(n))
    }

    /// The rank of `<const>`: its data's.
    pub(crate) fn rank_const(&self, n: &Node) -> Option<usize> {
        self.const_dims(&n.outputs[0]).map(|d| d.len())
    }

    /// The length of a `<const>` of at most one axis.
    pub(crate) fn len_const(&self, n: &Node) -> Option<usize> {
        self.const_dims(&n.outputs[0])
            .filter(|d| d.len() <= 1)
            .map(|d| d.iter().product())
    }

    /// The element type of `<const>`: its data's.
    pub(crate) fn elem_const(&self, n: &Node) -> DataType {
        self.const_info(&n.outputs[0])
            .and_then(|(t, _)| onnx_format::dtype::to_onnx(t))
            .and_then(|d| DataType::try_from(d).ok())
            .unwrap_or(DataType::Float)
    }

    /// Lowers `<param>`.
    pub(crate) fn param(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let dims = vec![Dim::Unknown; self.param_rank(n)];
        self.cx.b.input(out, DataType::Float, &dims);
        Ok(())
    }

    /// Lowers `<const>`.
    pub(crate) fn constant(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let missing = || Error::Invalid("a constant without a value".into());
        if self.weights.defers() {
            // the data is written from the source later
            let source = self.const_source(out).ok_or_else(missing)?;
            let (dtype, dims) = self.weights.info(&source).ok_or_else(missing)?;
            let p = crate::export::deferred_proto(out, &source, dtype, &dims, false)?;
            self.cx.b.add_initializer(p);
            return Ok(());
        }
        let t = self.const_tensor(out).ok_or_else(missing)?;
        self.cx.b.initializer(out, &t)?;
        Ok(())
    }

    /// The rank of `flatten`: `dim` leading axes and one more.
    /// (A `dim` the lowering refuses gives no rank.)
    pub(crate) fn rank_flatten(&self, n: &Node) -> Option<usize> {
        flatten_dim(self.int(n, "dim", 1)).map(|d| d + 1)
    }

    /// Lowers `flatten`.
    pub(crate) fn flatten(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let d = self.int(n, "dim", 1);
        let dim = flatten_dim(d).ok_or_else(|| {
            Error::Invalid(format!(
                "dim {d} (flatten keeps at most {} leading axes)",
                super::logic::MAX_RANK - 1
            ))
        })?;
        let mut shape = vec![0i64; dim];
        shape.push(-1);
        let s = self.cx.ints(&shape);
        self.cx.op_to("Reshape", out, &[input(0)?, &s], out, vec![]);
        Ok(())
    }

    /// Lowers `inner_prod`.
    pub(crate) fn inner_prod(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let (x, w) = (input(0)?, input(1)?);
        let t = self.int(n, "transpose", 0);
        let xf = self.cx.op("Flatten", &[x], vec![attr::int("axis", 1)]);
        self.cx
            .op_to("Gemm", out, &[&xf, w], out, vec![attr::int("transB", t)]);
        Ok(())
    }

    /// Lowers `gemm`.
    pub(crate) fn gemm(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let ins = &c.ins[..];
        let attrs = vec![
            attr::float("alpha", self.float(n, "alpha", 1.0) as f32),
            attr::float("beta", self.float(n, "beta", 1.0) as f32),
            attr::int("transA", self.int(n, "transA", 0)),
            attr::int("transB", self.int(n, "transB", 0)),
        ];
        self.cx.op_to("Gemm", out, ins, out, attrs);
        Ok(())
    }

    /// Lowers `softmax`.
    pub(crate) fn softmax(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let dim = self.int(n, "dim", -1);
        self.cx.op_to(
            "Softmax",
            out,
            &[input(0)?],
            out,
            vec![attr::int("axis", dim)],
        );
        Ok(())
    }

    /// The length of a `concat` of 1-D values: the sum of theirs.
    pub(crate) fn len_concat(&self, n: &Node) -> Option<usize> {
        (0..n.inputs.len()).map(|k| self.len_in(n, k)).sum()
    }

    /// Lowers `concat`.
    pub(crate) fn concat(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let ins = &c.ins[..];
        self.cx.op_to(
            "Concat",
            out,
            ins,
            out,
            vec![attr::int("axis", self.int(n, "dim", 0))],
        );
        Ok(())
    }

    /// Lowers `_transpose`.
    pub(crate) fn transpose(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let perm = self
            .ints(n, "permute")
            .ok_or_else(|| Error::Invalid("no permute".into()))?;
        self.cx.op_to(
            "Transpose",
            out,
            &[input(0)?],
            out,
            vec![attr::ints("perm", &perm)],
        );
        Ok(())
    }

    /// The rank of `_reshape`: the length of its `shape`.
    pub(crate) fn rank_reshape(&self, n: &Node) -> Option<usize> {
        self.ints(n, "shape").map(|s| s.len())
    }

    /// The rank of `_reshape_v2`: the length of its shape (input 1).
    pub(crate) fn rank_reshape_v2(&self, n: &Node) -> Option<usize> {
        self.len_in(n, 1)
    }

    /// Lowers `_reshape`.
    pub(crate) fn reshape(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let shape = self
            .ints(n, "shape")
            .ok_or_else(|| Error::Invalid("no shape".into()))?;
        let s = self.cx.ints(&shape);
        self.cx.op_to("Reshape", out, &[input(0)?, &s], out, vec![]);
        Ok(())
    }

    /// Lowers `_reshape_v2`.
    pub(crate) fn reshape_v2(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let s = self.cx.cast(input(1)?, DataType::Int64);
        self.cx.op_to("Reshape", out, &[input(0)?, &s], out, vec![]);
        Ok(())
    }

    /// The length of `_shape`: its input's rank.
    pub(crate) fn len_shape(&self, n: &Node) -> Option<usize> {
        self.rank_in(n, 0)
    }

    /// Lowers `_shape`.
    pub(crate) fn shape(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        // TenniS shapes are int32
        let s = self.cx.op("Shape", &[input(0)?], vec![]);
        self.cx.op_to(
            "Cast",
            out,
            &[&s],
            out,
            vec![attr::int("to", DataType::Int32 as i64)],
        );
        Ok(())
    }

    /// The rank of `gather`: input 0's with the gathered axis replaced by
    /// the indices' axes.
    pub(crate) fn rank_gather(&self, n: &Node) -> Option<usize> {
        let ri = self.rank_in(n, 1)?;
        self.rank_in(n, 0)?.checked_sub(1).map(|r| r + ri)
    }

    /// The length of a `gather` of a 1-D value: the indices' (one for a
    /// scalar index).
    pub(crate) fn len_gather(&self, n: &Node) -> Option<usize> {
        self.len_in(n, 1)
            .or_else(|| self.rank_in(n, 1).filter(|&r| r == 0).map(|_| 1))
    }

    /// Lowers `gather`.
    pub(crate) fn gather(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let axis = self.int(n, "axis", 0);
        if self.rank_in(n, 0) == Some(0) {
            return Err(Error::Invalid(format!(
                "axis {axis} of a scalar (gather needs an input with an axis)"
            )));
        }
        self.cx.op_to(
            "Gather",
            out,
            &[input(0)?, input(1)?],
            out,
            vec![attr::int("axis", axis)],
        );
        Ok(())
    }

    /// The rank of `stack`: one more than its inputs'.
    pub(crate) fn rank_stack(&self, n: &Node) -> Option<usize> {
        self.rank_in(n, 0).map(|r| r + 1)
    }

    /// The length of a `stack` of scalars: the number of its inputs.
    pub(crate) fn len_stack(&self, n: &Node) -> Option<usize> {
        Some(n.inputs.len())
    }

    /// Lowers `stack`.
    pub(crate) fn stack(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let ins = &c.ins[..];
        let axis = self.int(n, "axis", 0);
        let parts: Vec<String> = ins.iter().map(|i| self.cx.unsqueeze(i, &[axis])).collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        self.cx
            .op_to("Concat", out, &refs, out, vec![attr::int("axis", axis)]);
        Ok(())
    }

    /// Lowers `to_float`.
    pub(crate) fn cast_to_float(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        self.cx.op_to(
            "Cast",
            out,
            &[input(0)?],
            out,
            vec![attr::int("to", DataType::Float as i64)],
        );
        Ok(())
    }

    /// The element type of `_cast`: its `dtype`.
    pub(crate) fn elem_cast(&self, n: &Node) -> DataType {
        let code = n
            .attributes
            .iter()
            .find(|(k, _)| k == "dtype")
            .and_then(|(_, a)| a.as_int())
            .unwrap_or(10);
        cast_type(code).unwrap_or(DataType::Float)
    }

    /// Lowers `_cast`.
    pub(crate) fn cast(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let code = self.int(n, "dtype", 10);
        let to = cast_type(code)
            .ok_or_else(|| Error::Unsupported(format!("cast to TenniS type {code}")))?
            as i32;
        self.cx.op_to(
            "Cast",
            out,
            &[input(0)?],
            out,
            vec![attr::int("to", i64::from(to))],
        );
        Ok(())
    }

    /// Lowers `leaky_relu`.
    pub(crate) fn leaky_relu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let a = self.float(n, "scale", 0.0) as f32;
        self.cx.op_to(
            "LeakyRelu",
            out,
            &[input(0)?],
            out,
            vec![attr::float("alpha", a)],
        );
        Ok(())
    }
}

/// The ONNX type of a TenniS type code (the module format's own numbering).
pub(crate) fn cast_type(code: i64) -> Option<DataType> {
    Some(match code {
        1 => DataType::Int8,
        2 => DataType::Uint8,
        3 => DataType::Int16,
        4 => DataType::Uint16,
        5 => DataType::Int32,
        6 => DataType::Uint32,
        7 => DataType::Int64,
        8 => DataType::Uint64,
        9 => DataType::Float16,
        10 => DataType::Float,
        11 => DataType::Double,
        21 => DataType::Bool,
        _ => return None,
    })
}

/// The number of leading axes `flatten` keeps for its `dim` (a negative one
/// keeps none), or `None` past the ranks the exporter writes: a hostile
/// `dim` of 2^31 would be a shape of as many entries.
fn flatten_dim(dim: i64) -> Option<usize> {
    usize::try_from(dim.max(0))
        .ok()
        .filter(|&d| d < super::logic::MAX_RANK)
}
