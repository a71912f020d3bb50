//! Indexing and shape-building operators: `gatherv2`, `gather_elements`,
//! `scatter_nd`, `_dimshuffle`, `range`, `constant_of_shape`, `tile_v2` (their ranks and
//! types are in [`super::logic`]).

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// The rank of `gatherv2`: the indices' (input 1, a constant) less
    /// their last axis, plus the axes of input 0 that axis does not index.
    pub(crate) fn rank_gatherv2(&self, n: &Node) -> Option<usize> {
        let last = n
            .inputs
            .get(1)
            .and_then(|v| self.const_dims(v))
            .and_then(|d| d.last().copied());
        match (self.rank_in(n, 0), self.rank_in(n, 1), last) {
            (Some(r), Some(ri), Some(k)) if ri >= 1 && k <= r => Some(ri - 1 + r - k),
            _ => None,
        }
    }

    /// Lowers `gatherv2`: `GatherND` (the last axis of the indices indexes
    /// the leading axes of `x`).
    pub(crate) fn gatherv2(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let i = self.cx.cast(c.input(1)?, DataType::Int64);
        self.cx
            .op_to("GatherND", c.out, &[c.input(0)?, &i], c.out, vec![]);
        Ok(())
    }

    /// Lowers `gather_elements` as TenniS computes it: output element `j`
    /// (in the indices' order) is `x[n, indices[j], w]` for the `j`-th
    /// `(n, w)` of `x` with axis `axis` left out. That is ONNX's
    /// `GatherElements` on `x` as `[N, X, W]` and the indices as `[N, 1,
    /// W]`, given the indices' shape; TenniS reads past its indices (or
    /// leaves outputs unwritten) unless they hold `N * W` elements.
    pub(crate) fn gather_elements(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, idx) = (c.input(0)?, c.input(1)?);
        let r = self.rank(x)?;
        let axis = self.int(n, "axis", 0);
        let a = if axis < 0 { axis + r as i64 } else { axis };
        if !(0..r as i64).contains(&a) {
            return Err(Error::Invalid(format!("axis {axis} of a rank-{r} input")));
        }
        let shape = self.cx.op("Shape", &[x], vec![]);
        let part = |e: &mut Self, from: i64, to: i64| {
            let s = e.cx.ints(&[from]);
            let t = e.cx.ints(&[to]);
            let p = e.cx.op("Slice", &[&shape, &s, &t], vec![]);
            if from == to {
                e.cx.ints(&[1])
            } else {
                e.cx.reduce("ReduceProd", &p, &[0], true)
            }
        };
        let nn = part(self, 0, a);
        let xa = {
            let s = self.cx.ints(&[a]);
            let t = self.cx.ints(&[a + 1]);
            self.cx.op("Slice", &[&shape, &s, &t], vec![])
        };
        let w = part(self, a + 1, r as i64);
        let concat = attr::int("axis", 0);
        let s3 = self.cx.op("Concat", &[&nn, &xa, &w], vec![concat.clone()]);
        let one = self.cx.ints(&[1]);
        let i3 = self.cx.op("Concat", &[&nn, &one, &w], vec![concat]);
        let x3 = self.cx.op("Reshape", &[x, &s3], vec![]);
        let ii = self.cx.cast(idx, DataType::Int64);
        let ii = self.cx.op("Reshape", &[&ii, &i3], vec![]);
        let g = self
            .cx
            .op("GatherElements", &[&x3, &ii], vec![attr::int("axis", 1)]);
        let ishape = self.cx.op("Shape", &[idx], vec![]);
        self.cx
            .op_to("Reshape", c.out, &[&g, &ishape], c.out, vec![]);
        Ok(())
    }

    /// Lowers `_dimshuffle`: the entries `shuffle` of axis `dim`.
    pub(crate) fn dimshuffle(&mut self, n: &Node, c: &Call) -> Result<()> {
        let dim = self.int(n, "dim", -1);
        if dim < 0 {
            return Err(Error::Invalid(format!("dim {dim} (must be >= 0)")));
        }
        let shuffle = self
            .ints(n, "shuffle")
            .filter(|s| !s.is_empty() && s.iter().all(|&v| v >= 0))
            .ok_or_else(|| Error::Invalid("shuffle is missing or negative".into()))?;
        let s = self.cx.ints(&shuffle);
        self.cx.op_to(
            "Gather",
            c.out,
            &[c.input(0)?, &s],
            c.out,
            vec![attr::int("axis", dim)],
        );
        Ok(())
    }

    /// Lowers `range` as TenniS counts it: `steps = trunc((limit - start) /
    /// delta)`, one more when `start + steps * delta < limit`; the values
    /// `start + i * delta` in the type of `start`.
    pub(crate) fn range(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let (start, limit, delta) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let t = self.elem_type(start);
        for v in [limit, delta] {
            if self.elem_type(v) != t {
                return Err(Error::Unsupported(format!(
                    "range with start, limit and delta of different types (TenniS reads all three as the type of start, {t:?})"
                )));
            }
        }
        let empty = self.cx.ints(&[]);
        let scalar = |e: &mut Self, v: &str| e.cx.op("Reshape", &[v, &empty], vec![]);
        let (s, l, d) = (
            scalar(self, start),
            scalar(self, limit),
            scalar(self, delta),
        );
        let span = self.cx.op("Sub", &[&l, &s], vec![]);
        let q = self.cx.op("Div", &[&span, &d], vec![]);
        let steps = self.cx.cast(&q, DataType::Int64);
        let steps_t = self.cx.cast(&steps, t);
        let reach = self.cx.op("Mul", &[&steps_t, &d], vec![]);
        let reach = self.cx.op("Add", &[&reach, &s], vec![]);
        let short = self.cx.op("Less", &[&reach, &l], vec![]);
        let more = self.cx.cast(&short, DataType::Int64);
        let count = self.cx.op("Add", &[&steps, &more], vec![]);
        let zero = self.cx.b.const_i64("mlformats/zero", &[0]);
        let zero = self.cx.op("Reshape", &[&zero, &empty], vec![]);
        let one = self.cx.b.const_i64("mlformats/one", &[1]);
        let one = self.cx.op("Reshape", &[&one, &empty], vec![]);
        let i = self.cx.op("Range", &[&zero, &count, &one], vec![]);
        let i = self.cx.cast(&i, t);
        let id = self.cx.op("Mul", &[&i, &d], vec![]);
        self.cx.op_to("Add", c.out, &[&id, &s], c.out, vec![]);
        Ok(())
    }

    /// The `value` of a `constant_of_shape` as an ONNX type and tensor
    /// (TenniS's default: `FLOAT` 0).
    pub(super) fn fill_value(&self, n: &Node) -> Option<(DataType, tensor_core::Tensor<'static>)> {
        // the parameter's own tensor keeps its type
        let own = n
            .outputs
            .first()
            .and_then(|o| self.weights.weight(&format!("{o}/value")));
        let t = match n.attribute("value") {
            _ if own.is_some() => own?.to_owned_tensor(),
            None => tensor_core::Tensor::from_values([1], &[0f32]).ok()?,
            Some(Attribute::Tensor(name)) => self.weights.weight(name)?.to_owned_tensor(),
            Some(a) => {
                let v = a.as_float()? as f32;
                tensor_core::Tensor::from_values([1], &[v]).ok()?
            }
        };
        let ty = onnx_format::dtype::to_onnx(t.dtype()).and_then(|d| DataType::try_from(d).ok())?;
        Some((ty, t))
    }

    /// The element type of `constant_of_shape`: its fill value's.
    pub(crate) fn elem_constant_of_shape(&self, n: &Node) -> DataType {
        self.fill_value(n).map_or(DataType::Float, |(t, _)| t)
    }

    /// Lowers `constant_of_shape`: a tensor of the shape input 0 filled
    /// with the one-element `value`.
    pub(crate) fn constant_of_shape(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (_, t) = self
            .fill_value(n)
            .ok_or_else(|| Error::Invalid("a value that is not a tensor".into()))?;
        if t.numel() != 1 {
            return Err(Error::Unsupported(format!(
                "a value of {} elements (ONNX fills with one)",
                t.numel()
            )));
        }
        let t1 = tensor_core::Tensor::new(t.dtype(), [1usize], t.bytes().to_vec())
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let p = onnx_format::tensor_to_proto("value", &t1)?;
        let s = self.cx.cast(c.input(0)?, DataType::Int64);
        self.cx.op_to(
            "ConstantOfShape",
            c.out,
            &[&s],
            c.out,
            vec![attr::tensor("value", p)],
        );
        Ok(())
    }

    /// Lowers `tile_v2`: `x` repeated `repeats` times per axis, the shorter
    /// of the shape and the repeats taken with leading ones.
    pub(crate) fn tile_v2(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let (x, rep) = (c.input(0)?, c.input(1)?);
        let r = self.rank(x)?;
        let k = self.lens.get(rep).copied().ok_or_else(|| {
            Error::Unsupported("tile_v2 with repeats of a length not known at export".into())
        })?;
        if k > super::logic::MAX_RANK {
            return Err(Error::Invalid(format!("{k} repeats")));
        }
        let rep64 = self.cx.cast(rep, DataType::Int64);
        let (x, rep) = if k > r {
            let axes: Vec<i64> = (0..(k - r) as i64).collect();
            (self.cx.unsqueeze(x, &axes), rep64)
        } else if k < r {
            let ones = self.cx.ints(&vec![1; r - k]);
            let all = self
                .cx
                .op("Concat", &[&ones, &rep64], vec![attr::int("axis", 0)]);
            (x.to_string(), all)
        } else {
            (x.to_string(), rep64)
        };
        self.cx.op_to("Tile", c.out, &[&x, &rep], c.out, vec![]);
        Ok(())
    }

    /// Lowers `scatter_nd` as TenniS computes it: for each `i` below the
    /// length of the indices' first axis, row `indices.flat[i]` of `data`
    /// (taken as rows of the size of one update) becomes update `i`.
    pub(crate) fn scatter_nd(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let (data, idx, upd) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let axis0 = || attr::int("axis", 0);
        let ishape = self.cx.op("Shape", &[idx], vec![]);
        let zero = self.cx.ints(&[0]);
        let one = self.cx.ints(&[1]);
        let k = self.cx.op("Slice", &[&ishape, &zero, &one], vec![]);
        let flat = self.cx.ints(&[-1]);
        let i1 = self.cx.op("Reshape", &[idx, &flat], vec![]);
        let i1 = self.cx.op("Slice", &[&i1, &zero, &k], vec![]);
        let i1 = self.cx.cast(&i1, DataType::Int64);
        let last = self.cx.ints(&[1]);
        let i2 = self.cx.op("Unsqueeze", &[&i1, &last], vec![]);
        let u2 = self.cx.op("Flatten", &[upd], vec![attr::int("axis", 1)]);
        let u2 = self.cx.op("Slice", &[&u2, &zero, &k], vec![]);
        let ushape = self.cx.op("Shape", &[&u2], vec![]);
        let two = self.cx.ints(&[2]);
        let b = self.cx.op("Slice", &[&ushape, &one, &two], vec![]);
        let minus = self.cx.ints(&[-1]);
        let d2shape = self.cx.op("Concat", &[&minus, &b], vec![axis0()]);
        let d2 = self.cx.op("Reshape", &[data, &d2shape], vec![]);
        let sc = self.cx.op("ScatterND", &[&d2, &i2, &u2], vec![]);
        let dshape = self.cx.op("Shape", &[data], vec![]);
        self.cx
            .op_to("Reshape", c.out, &[&sc, &dshape], c.out, vec![]);
        Ok(())
    }
}

impl Exporter<'_> {
    /// Lowers `quantize` as the TenniS CPU build with SSE/AVX computes it:
    /// `x * scale` to `INT8`, clamped to -128..127, with one scale, or one
    /// per entry of axis 0. One scale: whole blocks of 8 elements (in
    /// memory order) round halves to even (the vector loop), the rest
    /// away from zero; per-entry scales round halves away from zero. (A
    /// TenniS built without SSE/AVX rounds every half away from zero.)
    pub(crate) fn quantize(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let scales: Vec<f32> = match n.attribute("quantize_scale") {
            Some(Attribute::Float(v)) => vec![*v as f32],
            Some(Attribute::Floats(v)) => v.iter().map(|&f| f as f32).collect(),
            Some(Attribute::Tensor(t)) => self
                .weights
                .weight(t)
                .and_then(|t| t.to_f64_vec())
                .map(|v| v.iter().map(|&f| f as f32).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        if scales.is_empty() || r == 0 {
            return Err(Error::Invalid(
                "no quantize_scale, or a scalar input".into(),
            ));
        }
        let g = scales.len();
        let mut sdims = vec![g as i64];
        sdims.extend(std::iter::repeat_n(1, r - 1));
        let s = self.cx.floats("quantize_scale", &scales, &sdims);
        let v = self.cx.op("Mul", &[x, &s], vec![]);
        // halves away from zero: v + sign(v) / 2 where v is a half
        let fl = self.cx.op("Floor", &[&v], vec![]);
        let frac = self.cx.op("Sub", &[&v, &fl], vec![]);
        let half = self.cx.scalar(0.5);
        let is_half = self.cx.op("Equal", &[&frac, &half], vec![]);
        let even = self.cx.op("Round", &[&v], vec![]);
        let sg = self.cx.op("Sign", &[&v], vec![]);
        let step = self.cx.op("Mul", &[&sg, &half], vec![]);
        let up = self.cx.op("Add", &[&v, &step], vec![]);
        let away = self.cx.op("Where", &[&is_half, &up, &even], vec![]);
        let rounded = if g == 1 {
            let count = self.cx.op("Size", &[x], vec![]);
            let eight = self.cx.b.const_i64("mlformats/eight", &[8]);
            let eight = self.cx.squeeze0(&eight);
            let blocks = self.cx.op("Div", &[&count, &eight], vec![]);
            let vec_end = self.cx.op("Mul", &[&blocks, &eight], vec![]);
            let zero = self.cx.b.const_i64("mlformats/zero", &[0]);
            let zero = self.cx.squeeze0(&zero);
            let one = self.cx.b.const_i64("mlformats/one", &[1]);
            let one = self.cx.squeeze0(&one);
            let idx = self.cx.op("Range", &[&zero, &count, &one], vec![]);
            let shape = self.cx.op("Shape", &[x], vec![]);
            let idx = self.cx.op("Reshape", &[&idx, &shape], vec![]);
            let in_vec = self.cx.op("Less", &[&idx, &vec_end], vec![]);
            self.cx.op("Where", &[&in_vec, &even, &away], vec![])
        } else {
            away
        };
        let lo = self.cx.scalar(-128.0);
        let hi = self.cx.scalar(127.0);
        let cl = self.cx.op("Clip", &[&rounded, &lo, &hi], vec![]);
        self.cx.op_to(
            "Cast",
            c.out,
            &[&cl],
            c.out,
            vec![attr::int("to", DataType::Int8 as i64)],
        );
        Ok(())
    }
}
