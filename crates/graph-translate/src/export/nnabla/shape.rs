//! Shape functions: concatenation, slicing, reshaping, padding, broadcasting.

use onnx_format::builder::attr;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_float, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `Concatenate`.
    pub(crate) fn concatenate(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let ins = &c.ins[..];
        self.cx.op_to(
            "Concat",
            name,
            ins,
            out,
            vec![attr::int("axis", a_int(n, "axis", 0))],
        );
        Ok(())
    }

    /// Lowers `Slice`.
    pub(crate) fn slice(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let x = input(0)?;
        let rank = self.rank(n, x)? as i64;
        let start = a_ints(n, "start");
        let axes: Vec<i64> = (0..start.len() as i64)
            .map(|i| rank - start.len() as i64 + i)
            .collect();
        let mut step = a_ints(n, "step");
        step.resize(start.len(), 1);
        let (s, e, a, st) = (
            self.cx.ints(&start),
            self.cx.ints(&a_ints(n, "stop")),
            self.cx.ints(&axes),
            self.cx.ints(&step),
        );
        self.cx
            .op_to("Slice", name, &[x, &s, &e, &a, &st], out, vec![]);
        Ok(())
    }

    /// Lowers `Reshape`.
    pub(crate) fn reshape(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let mut shape = a_ints(n, "shape");
        if let Some(o) = self.shape(out)
            && o.first() == Some(&-1)
            && o.len() == shape.len()
            && !shape[1..].contains(&-1)
        {
            shape[0] = -1;
        }
        let s = self.cx.ints(&shape);
        self.cx
            .op_to("Reshape", name, &[input(0)?, &s], out, vec![]);
        Ok(())
    }

    /// Lowers `Transpose`.
    pub(crate) fn transpose(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        self.cx.op_to(
            "Transpose",
            name,
            &[input(0)?],
            out,
            vec![attr::ints("perm", &a_ints(n, "axes"))],
        );
        Ok(())
    }

    /// Lowers `Flip`.
    pub(crate) fn flip(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let axes = a_ints(n, "axes");
        let k = axes.len();
        let (s, e, a, st) = (
            self.cx.ints(&vec![-1; k]),
            self.cx.ints(&vec![i64::MIN; k]),
            self.cx.ints(&axes),
            self.cx.ints(&vec![-1; k]),
        );
        self.cx
            .op_to("Slice", name, &[input(0)?, &s, &e, &a, &st], out, vec![]);
        Ok(())
    }

    /// Lowers `Pad`.
    pub(crate) fn pad(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let x = input(0)?;
        let rank = self.rank(n, x)?;
        let pw = a_ints(n, "pad_width");
        if !pw.len().is_multiple_of(2) || pw.len() / 2 > rank {
            return Err(Error::Invalid(format!(
                "pad_width {pw:?} does not fit rank {rank}"
            )));
        }
        let lead = rank - pw.len() / 2;
        let mut pads = vec![0i64; 2 * rank];
        for (i, pair) in pw.chunks(2).enumerate() {
            pads[lead + i] = pair[0];
            pads[rank + lead + i] = pair[1];
        }
        let mode = match n
            .attribute("mode")
            .and_then(Attribute::as_str)
            .unwrap_or("constant")
        {
            "" | "constant" => "constant",
            "reflect" => "reflect",
            "repeat" | "edge" => "edge",
            m => return Err(Error::Unsupported(format!("pad mode {m:?}"))),
        };
        let p = self.cx.ints(&pads);
        let c = self.cx.scalar(a_float(n, "constant_value", 0.0) as f32);
        self.cx.op_to(
            "Pad",
            name,
            &[x, &p, &c],
            out,
            vec![attr::string("mode", mode)],
        );
        Ok(())
    }

    /// Lowers `BroadcastTo`.
    pub(crate) fn broadcast_to(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let (x, y) = (input(0)?, input(1)?);
        let rx = self.rank(n, x)? as i64;
        let ry = self.rank(n, y)? as i64;
        let axis = a_int(n, "axis", -1);
        let y2 = if axis < 0 || axis + ry == rx {
            y.to_string()
        } else {
            // y's dimensions go to axis..axis+ry: append the
            // dimensions after them (leading ones broadcast as is).
            let trailing: Vec<i64> = (ry..rx - axis).collect();
            self.cx.unsqueeze(y, &trailing)
        };
        let s = self.cx.op("Shape", &[x], vec![]);
        self.cx.op_to("Expand", name, &[&y2, &s], out, vec![]);
        Ok(())
    }

    /// Lowers `BatchMatmul`.
    pub(crate) fn batch_matmul(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let (a, b) = (input(0)?, input(1)?);
        let mut t = |v: &str, yes: bool| -> Result<String> {
            if !yes {
                return Ok(v.to_string());
            }
            let r = self.rank(n, v)?;
            let mut perm: Vec<i64> = (0..r as i64).collect();
            perm.swap(r - 2, r - 1);
            Ok(self
                .cx
                .op("Transpose", &[v], vec![attr::ints("perm", &perm)]))
        };
        let a2 = t(a, a_bool(n, "transpose_a"))?;
        let b2 = t(b, a_bool(n, "transpose_b"))?;
        self.cx.op_to("MatMul", name, &[&a2, &b2], out, vec![]);
        Ok(())
    }

    /// Lowers `Split`.
    pub(crate) fn split(&mut self, n: &Node, c: &Call) -> Result<()> {
        let input = |k: usize| c.input(k);
        let axis = a_int(n, "axis", 0);
        let parts: Vec<String> = n.outputs.iter().map(|o| self.cx.b.fresh(o)).collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        self.cx.split_equal(input(0)?, axis, parts.len(), &refs);
        for (p, o) in parts.iter().zip(&n.outputs) {
            let a = self.cx.ints(&[axis]);
            self.cx.op_to("Squeeze", "", &[p, &a], o, vec![]);
        }
        Ok(())
    }

    /// Lowers `Stack`.
    pub(crate) fn stack(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let ins = &c.ins[..];
        let axis = a_int(n, "axis", 0);
        let parts: Vec<String> = ins.iter().map(|i| self.cx.unsqueeze(i, &[axis])).collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        self.cx
            .op_to("Concat", name, &refs, out, vec![attr::int("axis", axis)]);
        Ok(())
    }

    /// Lowers `Tile(reps)`: numpy's tile (`reps` shorter than the rank
    /// repeats the last axes; longer adds leading axes).
    pub(crate) fn tile(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let rank = self.rank(n, x)?;
        let mut reps = a_ints(n, "reps");
        let mut src = x.to_string();
        if reps.len() > rank {
            let axes: Vec<i64> = (0..(reps.len() - rank) as i64).collect();
            src = self.cx.unsqueeze(x, &axes);
        } else {
            let mut r = vec![1; rank - reps.len()];
            r.extend(&reps);
            reps = r;
        }
        let r = self.cx.ints(&reps);
        self.cx.op_to("Tile", &n.name, &[&src, &r], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Broadcast(shape)`: `Expand` to `shape`.
    pub(crate) fn broadcast(&mut self, n: &Node, c: &Call) -> Result<()> {
        let mut shape = a_ints(n, "shape");
        // a batch dimension left open (-1) keeps the input's
        for d in &mut shape {
            if *d < 0 {
                *d = 1;
            }
        }
        let s = self.cx.ints(&shape);
        self.cx
            .op_to("Expand", &n.name, &[c.input(0)?, &s], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Embed(x0, w)`: rows of `w` indexed by `x0`.
    pub(crate) fn embed(&mut self, n: &Node, c: &Call) -> Result<()> {
        let i = self.cx.cast(
            c.input(0)?,
            onnx_format::proto::tensor_proto::DataType::Int64,
        );
        self.cx.op_to(
            "Gather",
            &n.name,
            &[c.input(1)?, &i],
            c.out,
            vec![attr::int("axis", 0)],
        );
        Ok(())
    }

    /// Lowers `Gather(x, indices, axis, batch_dims)` with `batch_dims` 0.
    pub(crate) fn gather(&mut self, n: &Node, c: &Call) -> Result<()> {
        if a_int(n, "batch_dims", 0) != 0 {
            return Err(Error::Unsupported(
                "batch_dims other than 0 is not exported".into(),
            ));
        }
        let i = self.cx.cast(
            c.input(1)?,
            onnx_format::proto::tensor_proto::DataType::Int64,
        );
        self.cx.op_to(
            "Gather",
            &n.name,
            &[c.input(0)?, &i],
            c.out,
            vec![attr::int("axis", a_int(n, "axis", 0))],
        );
        Ok(())
    }
}
