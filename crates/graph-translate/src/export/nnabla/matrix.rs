//! Triangles, diagonals, identity-like matrices, remainders and sorted
//! search: `Trilu`, `MatrixDiag`, `MatrixDiagPart`, `EyeLike`, `Mod2`,
//! `SearchSorted` and `Einsum`.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_int};
use crate::export::{Error, Result};

/// Matrices larger than this many elements are not written as constants.
const MAX_MASK: i64 = 1 << 22;

impl Exporter<'_> {
    /// The last two dimensions of `v` (known, positive, and at most
    /// [`MAX_MASK`] elements together), or an error naming the function.
    fn matrix_dims(&self, n: &Node, v: &str) -> Result<(i64, i64)> {
        let dims = self.dims(v).unwrap_or_default();
        let r = dims.len();
        let (rows, cols) = match r {
            0 | 1 => (-1, -1),
            _ => (dims[r - 2], dims[r - 1]),
        };
        if rows < 1 || cols < 1 || rows.saturating_mul(cols) > MAX_MASK {
            return Err(Error::Unsupported(format!(
                "{} function {:?}: the last two dimensions of {v:?} must be known \
                 (at most 2^22 elements), not {dims:?}",
                n.op, n.name
            )));
        }
        Ok((rows, cols))
    }

    /// A `rows x cols` float constant, 1 where `keep(i, j)`.
    fn mask(&mut self, rows: i64, cols: i64, keep: impl Fn(i64, i64) -> bool) -> String {
        let mut v = Vec::new();
        for i in 0..rows {
            for j in 0..cols {
                v.push(if keep(i, j) { 1.0 } else { 0.0 });
            }
        }
        self.cx.floats("mask", &v, &[rows, cols])
    }

    /// Lowers `Trilu(k, upper)`: the input times the triangle's mask
    /// (nnabla multiplies too: `-0` where a negative value is cleared).
    pub(crate) fn trilu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let (rows, cols) = self.matrix_dims(n, x)?;
        let k = a_int(n, "k", 0);
        let upper = a_int(n, "upper", 1) != 0;
        let m = self.mask(
            rows,
            cols,
            |i, j| {
                if upper { j - i >= k } else { j - i <= k }
            },
        );
        self.cx.op_to("Mul", &n.name, &[x, &m], c.out, vec![]);
        Ok(())
    }

    /// Lowers `MatrixDiag`: the last axis spread on the diagonal of a new
    /// square matrix, zero elsewhere.
    pub(crate) fn matrix_diag(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let len = self
            .dims(x)
            .and_then(|d| d.last().copied())
            .filter(|&l| l >= 1 && l.saturating_mul(l) <= MAX_MASK)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "MatrixDiag function {:?}: the last dimension of {x:?} must be known \
                     (at most 2048)",
                    n.name
                ))
            })?;
        let eye = self.mask(len, len, |i, j| i == j);
        let eye = self.cx.cast(&eye, DataType::Bool);
        let col = self.cx.unsqueeze(x, &[-2]);
        let zero = self.cx.scalar(0.0);
        self.cx
            .op_to("Where", &n.name, &[&eye, &col, &zero], c.out, vec![]);
        Ok(())
    }

    /// Lowers `MatrixDiagPart`: the diagonal of each square matrix of the
    /// last two axes (non-square matrices are refused: nnabla reads past
    /// their rows).
    pub(crate) fn matrix_diag_part(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let (rows, cols) = self.matrix_dims(n, x)?;
        if rows != cols {
            return Err(Error::Unsupported(format!(
                "MatrixDiagPart function {:?}: {rows}x{cols} matrices (nnabla 1.39 reads \
                 a non-square matrix's diagonal past its last row; square ones are exported)",
                n.name
            )));
        }
        let rank = self.rank(n, x)?;
        let mut flat = vec![0i64; rank - 2];
        flat.push(-1);
        let f = self.cx.reshape(x, &flat);
        let idx: Vec<i64> = (0..rows).map(|i| i * (rows + 1)).collect();
        let idx = self.cx.ints(&idx);
        self.cx.op_to(
            "Gather",
            &n.name,
            &[&f, &idx],
            c.out,
            vec![attr::int("axis", -1)],
        );
        Ok(())
    }

    /// Lowers `EyeLike(k)`: a constant of the input's (2-D) shape, 1 on
    /// diagonal `k`.
    pub(crate) fn eye_like(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        if self.rank(n, x)? != 2 {
            return Err(Error::Invalid(format!(
                "EyeLike function {:?}: the input must be 2-D",
                n.name
            )));
        }
        let (rows, cols) = self.matrix_dims(n, x)?;
        let k = a_int(n, "k", 0);
        let m = self.mask(rows, cols, |i, j| j - i == k);
        self.cx.op_to("Identity", &n.name, &[&m], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Mod2(fmod)`: on float data nnabla 1.39 computes C's `fmod`
    /// (the sign of the dividend) whatever `fmod` says, as ONNX `Mod` with
    /// `fmod = 1` does.
    pub(crate) fn mod2(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.cx.op_to(
            "Mod",
            &n.name,
            &[c.input(0)?, c.input(1)?],
            c.out,
            vec![attr::int("fmod", 1)],
        );
        Ok(())
    }

    /// Lowers `SearchSorted(sorted_sequence, values, right)`: how many
    /// elements of each sorted row lie below each value (at or below with
    /// `right`), counted from a `values x sequence` comparison.
    pub(crate) fn search_sorted(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (seq, vals) = (c.input(0)?, c.input(1)?);
        let su = self.cx.unsqueeze(seq, &[-2]);
        let vu = self.cx.unsqueeze(vals, &[-1]);
        let hit = if a_int(n, "right", 0) != 0 {
            let above = self.cx.op("Less", &[&vu, &su], vec![]);
            self.cx.op("Not", &[&above], vec![])
        } else {
            self.cx.op("Less", &[&su, &vu], vec![])
        };
        let f = self.cx.cast(&hit, DataType::Float);
        let r = self.cx.reduce("ReduceSum", &f, &[-1], false);
        self.cx.op_to("Identity", &n.name, &[&r], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Einsum(equation)`: ONNX `Einsum` with the same equation.
    pub(crate) fn einsum(&mut self, n: &Node, c: &Call) -> Result<()> {
        let eq = n
            .attribute("equation")
            .and_then(tensor_core::graph::Attribute::as_str)
            .ok_or_else(|| {
                Error::Invalid(format!("Einsum function {:?} has no equation", n.name))
            })?;
        if !eq
            .chars()
            .all(|ch| ch.is_ascii_alphabetic() || ",->. ".contains(ch))
        {
            return Err(Error::Invalid(format!(
                "Einsum function {:?}: equation {eq:?}",
                n.name
            )));
        }
        let eq = eq.to_string();
        self.cx.op_to(
            "Einsum",
            &n.name,
            &c.ins,
            c.out,
            vec![attr::string("equation", &eq)],
        );
        Ok(())
    }
}
