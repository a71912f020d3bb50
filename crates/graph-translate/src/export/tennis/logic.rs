//! Comparison, selection, integer arithmetic, broadcasting and rank
//! operators: `equal`, `where`, `mod`, `broadcast`, `_expand`, `_dims`,
//! `matmul`, `divided`.
//!
//! TenniS broadcasts two or three operands as numpy does (shapes aligned
//! at the end, axes of length 1 repeated), as ONNX does. Two operands of
//! different types are first brought to a common type (`equal`, `mod`);
//! the lowering writes the casts where the common type is plain (one of
//! them `FLOAT`, the other a narrower integer or `BOOL`) and refuses the
//! other mixes.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter};
use crate::export::{Error, Result};

/// The largest rank the export takes from a module's data (a longer shape
/// is refused rather than declared).
pub(super) const MAX_RANK: usize = 1024;

/// Whether `t` is an integer type.
pub(super) fn is_integer(t: DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Uint8
            | DataType::Int16
            | DataType::Uint16
            | DataType::Int32
            | DataType::Uint32
            | DataType::Int64
            | DataType::Uint64
    )
}

impl Exporter<'_> {
    /// The larger rank of the inputs `ks` (`equal`, `mod`, `where`).
    fn rank_broadcast(&self, n: &Node, ks: &[usize]) -> Option<usize> {
        ks.iter()
            .map(|&k| self.rank_in(n, k))
            .try_fold(0usize, |m, r| r.map(|r| m.max(r)))
    }

    /// The rank of `equal`, `mod`: inputs 0 and 1 broadcast.
    pub(crate) fn rank_broadcast2(&self, n: &Node) -> Option<usize> {
        self.rank_broadcast(n, &[0, 1])
    }

    /// The rank of `where`: its three inputs broadcast.
    pub(crate) fn rank_where(&self, n: &Node) -> Option<usize> {
        self.rank_broadcast(n, &[0, 1, 2])
    }

    /// The rank of `broadcast`, `tile_v2`: input 0's, or the length of the
    /// shape (input 1) when larger.
    pub(crate) fn rank_by_len1(&self, n: &Node) -> Option<usize> {
        match (self.rank_in(n, 0), self.len_in(n, 1)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        }
    }

    /// The rank of `_expand`: its constant target rank (input 1), at least
    /// input 0's.
    pub(crate) fn rank_expand(&self, n: &Node) -> Option<usize> {
        self.const_ints(n.inputs.get(1)?).and_then(|d| {
            d.first()
                .copied()
                .and_then(|v| usize::try_from(v).ok())
                .filter(|&d| self.rank_in(n, 0).is_some_and(|r| r <= d))
        })
    }

    /// The rank of `matmul`: 4 with a 4-D input 1, else input 0's.
    pub(crate) fn rank_matmul(&self, n: &Node) -> Option<usize> {
        match self.rank_in(n, 1) {
            Some(4) => Some(4),
            _ => self.rank_in(n, 0),
        }
    }

    /// The rank of input 0 (`divided`, `_dimshuffle`, `scatter_nd`,
    /// `quantize`, under `Rank::Data`).
    pub(crate) fn rank_input0(&self, n: &Node) -> Option<usize> {
        self.rank_in(n, 0)
    }

    /// The rank of input 1 (`gather_elements`).
    pub(crate) fn rank_input1(&self, n: &Node) -> Option<usize> {
        self.rank_in(n, 1)
    }

    /// The rank of `constant_of_shape`: the length of its shape.
    pub(crate) fn rank_constant_of_shape(&self, n: &Node) -> Option<usize> {
        self.len_in(n, 0)
    }

    /// The element type of `mod`: its operands' common type.
    pub(crate) fn elem_mod(&self, n: &Node) -> DataType {
        common_type(self.elem_in(n, 0), self.elem_in(n, 1)).unwrap_or(DataType::Float)
    }

    /// The element type of `where`: that of its values (input 1).
    pub(crate) fn elem_where(&self, n: &Node) -> DataType {
        self.elem_in(n, 1)
    }

    /// Inputs `a` and `b` cast to their common type, and that type.
    fn common(&mut self, a: &str, b: &str) -> Result<(String, String, DataType)> {
        let (ta, tb) = (self.elem_type(a), self.elem_type(b));
        let t = common_type(ta, tb).ok_or_else(|| {
            Error::Unsupported(format!(
                "operands of types {ta:?} and {tb:?} (TenniS's promotion of this pair is not exported)"
            ))
        })?;
        let mut to = |v: &str, tv: DataType| {
            if tv == t {
                v.to_string()
            } else {
                self.cx.cast(v, t)
            }
        };
        Ok((to(a, ta), to(b, tb), t))
    }

    /// Lowers `equal`: element-wise `a == b` as `BOOL`, broadcast between
    /// operands of one rank. TenniS's CPU `equal` does not align operands
    /// of different ranks (it reads elements past the shorter shape), so
    /// those are refused.
    pub(crate) fn equal(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let (ra, rb) = (self.rank(c.input(0)?)?, self.rank(c.input(1)?)?);
        if ra != rb {
            return Err(Error::Unsupported(format!(
                "equal of a rank-{ra} and a rank-{rb} operand (TenniS's CPU equal does not \
                 broadcast across ranks: it compares the wrong elements)"
            )));
        }
        let (a, b, _) = self.common(c.input(0)?, c.input(1)?)?;
        self.cx.op_to("Equal", c.out, &[&a, &b], c.out, vec![]);
        Ok(())
    }

    /// Lowers `mod`: the C remainder of integers (the sign of the
    /// dividend), broadcast. TenniS computes it on integers only.
    pub(crate) fn modulo(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let (a, b, t) = self.common(c.input(0)?, c.input(1)?)?;
        if !is_integer(t) {
            return Err(Error::Unsupported(format!(
                "mod of {t:?} values (TenniS computes mod on integers only; module inputs are float)"
            )));
        }
        self.cx
            .op_to("Mod", c.out, &[&a, &b], c.out, vec![attr::int("fmod", 1)]);
        Ok(())
    }

    /// Lowers `where`: `cond ? a : b` (a non-zero `cond` is true),
    /// broadcast over the three.
    pub(crate) fn where_(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let (cond, a, b) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let (ta, tb) = (self.elem_type(a), self.elem_type(b));
        if ta != tb {
            return Err(Error::Unsupported(format!(
                "where of {ta:?} and {tb:?} values (TenniS needs both of one type)"
            )));
        }
        let cond = if self.elem_type(cond) == DataType::Bool {
            cond.to_string()
        } else {
            self.cx.cast(cond, DataType::Bool)
        };
        self.cx.op_to("Where", c.out, &[&cond, a, b], c.out, vec![]);
        Ok(())
    }

    /// Lowers `broadcast`: `x` repeated to the shape of input 1 (numpy
    /// broadcasting of the two shapes).
    pub(crate) fn broadcast(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let s = self.cx.cast(c.input(1)?, DataType::Int64);
        self.cx
            .op_to("Expand", c.out, &[c.input(0)?, &s], c.out, vec![]);
        Ok(())
    }

    /// Lowers `_expand`: axes of length 1 added in front (up to `front`)
    /// and at the end (up to `end`; the end first when `inverse`) until the
    /// rank is input 1, which must be a constant.
    pub(crate) fn expand_dims(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let dims = self
            .const_ints(c.input(1)?)
            .and_then(|d| d.first().copied())
            .ok_or_else(|| Error::Unsupported("_expand to a rank that is not a constant".into()))?;
        if !(0..=MAX_RANK as i64).contains(&dims) {
            return Err(Error::Invalid(format!("_expand to rank {dims}")));
        }
        let front = self.int(n, "front", -1);
        let end = self.int(n, "end", -1);
        let inverse = self.int(n, "inverse", 0) != 0;
        let (nf, ne) = expand_counts(r, dims, front, end, inverse).ok_or_else(|| {
            Error::Invalid(format!(
                "a rank-{r} input cannot be expanded to rank {dims} with front={front}, end={end}"
            ))
        })?;
        let mut axes: Vec<i64> = (0..nf as i64).collect();
        axes.extend((dims - ne as i64)..dims);
        if axes.is_empty() {
            self.cx.op_to("Identity", c.out, &[x], c.out, vec![]);
        } else {
            let a = self.cx.ints(&axes);
            self.cx.op_to("Unsqueeze", c.out, &[x, &a], c.out, vec![]);
        }
        Ok(())
    }

    /// Lowers `_dims`: the rank of the input as an `INT32` scalar,
    /// computed from the input (`Size` of its `Shape`) rather than folded,
    /// so that the graph still takes the input (a module whose outputs
    /// use no input does not run in TenniS once imported back).
    pub(crate) fn dims(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let shape = self.cx.op("Shape", &[x], vec![]);
        let size = self.cx.op("Size", &[&shape], vec![]);
        self.cx.op_to(
            "Cast",
            c.out,
            &[&size],
            c.out,
            vec![attr::int("to", DataType::Int32 as i64)],
        );
        Ok(())
    }

    /// Lowers `matmul`: `[..., k] x [k, n]`, or `[1, 1, m, k] x [1, 1, k,
    /// n]`.
    pub(crate) fn matmul(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let (a, b) = (c.input(0)?, c.input(1)?);
        let rb = self.rank(b)?;
        if rb != 2 && rb != 4 {
            return Err(Error::Unsupported(format!(
                "matmul with a rank-{rb} second operand (TenniS takes [k, n] or [1, 1, k, n])"
            )));
        }
        if rb == 4 && self.rank(a)? != 4 {
            return Err(Error::Unsupported(
                "matmul of a [1, 1, k, n] operand with an operand that is not 4-D".into(),
            ));
        }
        self.cx.op_to("MatMul", c.out, &[a, b], c.out, vec![]);
        Ok(())
    }

    /// Lowers `divided`: the last `size.len()` axes padded at the end
    /// (with `padding_value`, default 0) to the next multiple of `size`.
    pub(crate) fn divided(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let size = self
            .ints(n, "size")
            .ok_or_else(|| Error::Invalid("no size".into()))?;
        if size.len() > r {
            return Err(Error::Invalid(format!(
                "{} sizes for a rank-{r} input",
                size.len()
            )));
        }
        if size.iter().any(|&s| s <= 0) {
            return Err(Error::Invalid(format!("size {size:?} (must be positive)")));
        }
        let k = size.len();
        let value = self.float(n, "padding_value", 0.0) as f32;
        let shape = self.cx.op("Shape", &[x], vec![]);
        let start = self.cx.ints(&[(r - k) as i64]);
        let stop = self.cx.ints(&[r as i64]);
        let tail = self.cx.op("Slice", &[&shape, &start, &stop], vec![]);
        let s = self.cx.ints(&size);
        let m = self.cx.op("Mod", &[&tail, &s], vec![]);
        let d = self.cx.op("Sub", &[&s, &m], vec![]);
        let ends = self.cx.op("Mod", &[&d, &s], vec![]);
        let zeros = self.cx.ints(&vec![0; 2 * r - k]);
        let pads = self
            .cx
            .op("Concat", &[&zeros, &ends], vec![attr::int("axis", 0)]);
        let v = self.cx.scalar(value);
        self.cx.op_to("Pad", c.out, &[x, &pads, &v], c.out, vec![]);
        Ok(())
    }
}

/// The type TenniS brings `a` and `b` to, where the export writes it.
fn common_type(a: DataType, b: DataType) -> Option<DataType> {
    if a == b {
        return Some(a);
    }
    let narrow = |t: DataType| {
        matches!(
            t,
            DataType::Bool
                | DataType::Int8
                | DataType::Uint8
                | DataType::Int16
                | DataType::Uint16
                | DataType::Int32
                | DataType::Uint32
        )
    };
    match (a, b) {
        (DataType::Float, t) | (t, DataType::Float) if narrow(t) => Some(DataType::Float),
        _ => None,
    }
}

/// How many axes `_expand` adds in front and at the end to bring rank `r`
/// to `dims` (TenniS's rule), `None` where TenniS fails.
fn expand_counts(
    r: usize,
    dims: i64,
    front: i64,
    end: i64,
    inverse: bool,
) -> Option<(usize, usize)> {
    let dims = usize::try_from(dims).ok()?;
    if r > dims {
        return None;
    }
    let need = dims - r;
    if need == 0 {
        return Some((0, 0));
    }
    if front > 0 && end > 0 {
        let room = (front as u64).saturating_add(end as u64);
        if (need as u64) > room {
            return None;
        }
    }
    // One side takes what it may; the other the rest if it may.
    let take = |limit: i64, left: usize| -> usize {
        if limit < 0 {
            left
        } else {
            left.min(usize::try_from(limit).unwrap_or(usize::MAX))
        }
    };
    let (first, second) = if inverse { (end, front) } else { (front, end) };
    let a = take(first, need);
    let b = if a == need { 0 } else { take(second, need - a) };
    if a + b != need {
        return None;
    }
    Some(if inverse { (b, a) } else { (a, b) })
}

#[cfg(test)]
mod tests {
    use super::expand_counts;

    #[test]
    fn expand_follows_tennis_rule() {
        assert_eq!(expand_counts(2, 4, -1, -1, false), Some((2, 0)));
        assert_eq!(expand_counts(2, 4, -1, -1, true), Some((0, 2)));
        assert_eq!(expand_counts(2, 4, 1, -1, false), Some((1, 1)));
        assert_eq!(expand_counts(2, 5, 1, 1, false), None);
        assert_eq!(expand_counts(3, 2, -1, -1, false), None);
        assert_eq!(expand_counts(2, 2, 0, 0, false), Some((0, 0)));
        assert_eq!(expand_counts(1, 3, 0, 1, false), None);
    }
}
