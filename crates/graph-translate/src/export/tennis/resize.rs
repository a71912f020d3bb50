//! Resizing and normalisation: `_resize2d`, `_nhwc_scale_resize2d`,
//! `fused_batch_norm`, `prewhiten`, `norm_image`.
//!
//! TenniS's `_resize2d` types, each exported by computing TenniS's own
//! source positions with ONNX arithmetic of the same precision and
//! gathering (ONNX `Resize` matches none of them exactly):
//! - 0, linear: position `in / out * x + (in / out / 2 - 0.5)` in double
//!   precision, clamped to `[0, in - 1 - 1e-5]`, the two neighbours blended.
//!   This is `Resize` `linear` `half_pixel` up to TenniS's `1e-5` at the
//!   far border (an error of up to 1e-5 of the last two pixels' difference),
//!   so the exact arithmetic is exported instead. An axis of length 1
//!   resized to another length makes TenniS read past the image; the export
//!   then fails in the ONNX runtime.
//! - 2, nearest: the same position rounded half away from zero, clamped.
//!   TenniS's build computes it with a fused multiply-add, so at exactly
//!   halfway positions the rounding error of `in / out` decides (TenniS
//!   reads rows 0, 0, 1, 2, 3, 3, 4, 5, 5 for 6 -> 9: down at x = 1, up at
//!   x = 4 and 7; ONNX `Resize` `half_pixel` + `round_prefer_ceil` reads
//!   row 1 at x = 1). ONNX has no fused multiply-add: the export recovers
//!   its exact value with Dekker's product and Knuth's sum in double
//!   precision, then rounds once.
//! - 3, hard: `floor(float(in / out) * x)` in single precision, clamped.
//! - 1, cubic: refused ([`CUBIC`], checked against the TenniS runtime).

/// The first of the two axes `_resize2d` resizes whatever the input's
/// shape: `size` holds exactly two positive entries, at `d` and `d + 1`,
/// and -1 (or any negative) elsewhere. `None` otherwise.
fn resized_pair(size: &[i64]) -> Option<usize> {
    let d = size.iter().position(|&v| v >= 0)?;
    let rest = size.get(d + 2..)?;
    (size[d] > 0 && size[d + 1] > 0 && rest.iter().all(|&v| v < 0)).then_some(d)
}

/// Why TenniS's cubic resize is not exported.
pub(crate) const CUBIC: &str = "type 1 (cubic): TenniS's cubic resize moves every sample \
within one pixel of the border onto row/column 1 or size-3 (and needs at least 4 pixels), \
where ONNX Resize cubic clamps the neighbours it reads: no ONNX mode matches (max difference \
3.5 on values in [-2, 2] for 6x7 -> 9x11 in the TenniS runtime)";

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// A scalar helper constant of type `ty` (exact for small integers and
    /// halves).
    fn typed_scalar(&mut self, v: f32, ty: DataType) -> String {
        let s = self.cx.scalar(v);
        if ty == DataType::Float {
            s
        } else {
            self.cx.cast(&s, ty)
        }
    }

    /// Resamples axis `axis` of `x` to the length `dst` (a 1-element
    /// `INT64` value) as TenniS's resize `ty` does (0 linear, 2 nearest, 3
    /// hard), computing its source positions with the same arithmetic;
    /// `r` is the rank of `x`.
    fn resample_axis(&mut self, x: &str, (axis, r): (usize, usize), dst: &str, ty: i64) -> String {
        let ft = if ty == 3 {
            DataType::Float
        } else {
            DataType::Double
        };
        let shape = self.cx.op("Shape", &[x], vec![]);
        let ax = self.cx.ints(&[axis as i64]);
        let src = self
            .cx
            .op("Gather", &[&shape, &ax], vec![attr::int("axis", 0)]);
        let src = self.cx.squeeze0(&src);
        let dst = self.cx.squeeze0(dst);
        let srcf = self.cx.cast(&src, ft);
        let dstf = self.cx.cast(&dst, ft);
        let scale = self.cx.op("Div", &[&srcf, &dstf], vec![]);
        let zero = self.typed_scalar(0.0, ft);
        let one = self.typed_scalar(1.0, ft);
        let half = self.typed_scalar(0.5, ft);
        let pos = self.cx.op("Range", &[&zero, &dstf, &one], vec![]);
        let at = self.cx.op("Mul", &[&scale, &pos], vec![]);
        let last = self.cx.op("Sub", &[&srcf, &one], vec![]);
        let gather = |e: &mut Self, idx: &str| {
            let i = e.cx.cast(idx, DataType::Int64);
            e.cx.op("Gather", &[x, &i], vec![attr::int("axis", axis as i64)])
        };
        let v = if ty == 3 {
            at.clone()
        } else {
            let two = self.typed_scalar(2.0, ft);
            let h = self.cx.op("Div", &[&scale, &two], vec![]);
            let bias = self.cx.op("Sub", &[&h, &half], vec![]);
            self.cx.op("Add", &[&at, &bias], vec![])
        };
        match ty {
            0 => {
                // v clamped to [0, src - 1 - 1e-5], then the two neighbours.
                let v = self.cx.op("Max", &[&v, &zero], vec![]);
                let inside = self.cx.op("Less", &[&v, &last], vec![]);
                let eps = self.typed_scalar(1e-5, DataType::Float);
                let eps = self.cx.cast(&eps, ft);
                let top = self.cx.op("Sub", &[&last, &eps], vec![]);
                let v = self.cx.op("Where", &[&inside, &v, &top], vec![]);
                let i0 = self.cx.op("Floor", &[&v], vec![]);
                let w = self.cx.op("Sub", &[&v, &i0], vec![]);
                let i1 = self.cx.op("Add", &[&i0, &one], vec![]);
                let lo = gather(self, &i0);
                let hi = gather(self, &i1);
                let w = self.cx.cast(&w, DataType::Float);
                // the weights along `axis`: [dst, 1, ...]
                let tail: Vec<i64> = (1..r.saturating_sub(axis) as i64).collect();
                let w = if tail.is_empty() {
                    w
                } else {
                    self.cx.unsqueeze(&w, &tail)
                };
                let d = self.cx.op("Sub", &[&hi, &lo], vec![]);
                let wd = self.cx.op("Mul", &[&d, &w], vec![]);
                self.cx.op("Add", &[&lo, &wd], vec![])
            }
            2 => {
                // TenniS computes fma(scale, x, bias): its exact value is
                // recovered as u + w (Dekker's product, Knuth's sum) and
                // rounded once, then rounded half away from zero.
                let op = |e: &mut Self, o: &str, a: &str, b: &str| e.cx.op(o, &[a, b], vec![]);
                let two27 = self.typed_scalar(134_217_728.0, ft);
                let big = op(self, "Add", &two27, &one);
                let c = op(self, "Mul", &big, &scale);
                let t = op(self, "Sub", &c, &scale);
                let hi = op(self, "Sub", &c, &t);
                let lo = op(self, "Sub", &scale, &hi);
                let q = op(self, "Mul", &hi, &pos);
                let e1 = op(self, "Sub", &q, &at);
                let r2 = op(self, "Mul", &lo, &pos);
                let e = op(self, "Add", &e1, &r2);
                // v = at + bias (rounded) above; its rounding error:
                let bb = op(self, "Sub", &v, &at);
                let t2 = op(self, "Sub", &v, &bb);
                let t3 = op(self, "Sub", &at, &t2);
                let two = self.typed_scalar(2.0, ft);
                let h = op(self, "Div", &scale, &two);
                let bias = op(self, "Sub", &h, &half);
                let t4 = op(self, "Sub", &bias, &bb);
                let eu = op(self, "Add", &t3, &t4);
                let w = op(self, "Add", &eu, &e);
                let f = op(self, "Add", &v, &w);
                let fl = self.cx.op("Floor", &[&f], vec![]);
                let fr = op(self, "Sub", &f, &fl);
                let up = op(self, "GreaterOrEqual", &fr, &half);
                let up = self.cx.cast(&up, ft);
                let idx = op(self, "Add", &fl, &up);
                let idx = self.cx.op("Max", &[&idx, &zero], vec![]);
                let idx = self.cx.op("Min", &[&idx, &last], vec![]);
                gather(self, &idx)
            }
            _ => {
                let idx = self.cx.op("Floor", &[&v], vec![]);
                let idx = self.cx.op("Max", &[&idx, &zero], vec![]);
                let idx = self.cx.op("Min", &[&idx, &last], vec![]);
                gather(self, &idx)
            }
        }
    }

    /// Resizes axes `dim`, `dim + 1` of `x` to `h`, `w` (1-element `INT64`
    /// values) with TenniS's resize `ty`, writing `c.out`.
    fn resize_axes(
        &mut self,
        c: &Call,
        x: &str,
        dim: usize,
        (h, w): (&str, &str),
        ty: i64,
    ) -> Result<()> {
        match ty {
            0 | 2 | 3 => {
                let r = self.rank(x)?;
                let y = self.resample_axis(x, (dim, r), h, ty);
                let y = self.resample_axis(&y, (dim + 1, r), w, ty);
                self.cx.op_to("Identity", c.out, &[&y], c.out, vec![]);
            }
            1 => return Err(Error::Unsupported(CUBIC.into())),
            t => {
                return Err(Error::Unsupported(format!(
                    "resize type {t} (TenniS knows 0 linear, 1 cubic, 2 nearest, 3 hard)"
                )));
            }
        }
        Ok(())
    }

    /// Lowers `_resize2d`: input 1 is the output size, -1 for kept axes.
    /// TenniS resizes the two adjacent axes it finds from the sizes and the
    /// input's shape (`find_resized_height_dim`: the first positive size
    /// that differs from the input, or whose later sizes all match); with
    /// exactly two positive sizes, adjacent (`[-1, ..., H, W]`, NHWC's
    /// `[-1, H, W, -1]`, ...), those are the resized axes whatever the
    /// shape, so they are exported for any input. Other sizes depend on
    /// the shape, which the export does not know, and are refused.
    pub(crate) fn resize2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let size = c
            .ins
            .get(1)
            .and_then(|v| self.const_ints(v))
            .ok_or_else(|| {
                Error::Unsupported(
                    "a size computed at run time (which two axes TenniS resizes depends on \
                     its values and the input's shape)"
                        .into(),
                )
            })?;
        let r = size.len();
        let dim = resized_pair(&size).ok_or_else(|| {
            Error::Unsupported(format!(
                "size {size:?}: only sizes with two adjacent positive entries and -1 elsewhere \
                 ([-1, ..., H, W], [-1, H, W, -1], ...) are exported (with more, the axes \
                 TenniS resizes depend on the input's shape)"
            ))
        })?;
        if let Ok(rx) = self.rank(x)
            && rx != r
        {
            return Err(Error::Invalid(format!("{r} sizes for a rank-{rx} input")));
        }
        let ty = self.int(n, "type", 0);
        let h = self.cx.ints(&[size[dim]]);
        let w = self.cx.ints(&[size[dim + 1]]);
        self.resize_axes(c, x, dim, (&h, &w), ty)
    }

    /// Lowers `resize_nearest_neighbor`: TenniS's nearest resize of axes
    /// `dim`, `dim + 1` to the two sizes of input 1 (`align_corners` is
    /// read but ignored by TenniS).
    pub(crate) fn resize_nearest_neighbor(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let dim = self.int(n, "dim", -1);
        if dim < 0 || dim as usize + 2 > r {
            return Err(Error::Invalid(format!("dim {dim} of a rank-{r} input")));
        }
        let size = c.input(1)?;
        let size = match self.const_ints(size) {
            Some(vals) => self.cx.ints(&vals),
            None => {
                let f = self.cx.reshape(size, &[-1]);
                self.cx.cast(&f, DataType::Int64)
            }
        };
        let i0 = self.cx.ints(&[0]);
        let i1 = self.cx.ints(&[1]);
        let h = self
            .cx
            .op("Gather", &[&size, &i0], vec![attr::int("axis", 0)]);
        let w = self
            .cx
            .op("Gather", &[&size, &i1], vec![attr::int("axis", 0)]);
        self.resize_axes(c, x, dim as usize, (&h, &w), 2)
    }

    /// Lowers `_nhwc_scale_resize2d`: an NHWC image resized (TenniS resize
    /// `type`) to `size` `[width, height]`, or with one value `S` its
    /// shorter side to `S` and the other to `S * long / short` (integer
    /// division).
    pub(crate) fn nhwc_scale_resize2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        if let Ok(r) = self.rank(x)
            && r != 4
        {
            return Err(Error::Invalid(format!("a rank-{r} input (NHWC needs 4)")));
        }
        let size = self
            .ints(n, "size")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::Invalid("no size".into()))?;
        let ty = self.int(n, "type", 0);
        let (h, w) = if size.len() >= 2 {
            (self.cx.ints(&[size[1]]), self.cx.ints(&[size[0]]))
        } else {
            let shape = self.cx.op("Shape", &[x], vec![]);
            let i1 = self.cx.ints(&[1]);
            let i2 = self.cx.ints(&[2]);
            let xh = self
                .cx
                .op("Gather", &[&shape, &i1], vec![attr::int("axis", 0)]);
            let xw = self
                .cx
                .op("Gather", &[&shape, &i2], vec![attr::int("axis", 0)]);
            let s = self.cx.ints(&[size[0]]);
            let sh = self.cx.op("Mul", &[&s, &xh], vec![]);
            let sh = self.cx.op("Div", &[&sh, &xw], vec![]);
            let sw = self.cx.op("Mul", &[&s, &xw], vec![]);
            let sw = self.cx.op("Div", &[&sw, &xh], vec![]);
            let tall = self.cx.op("Greater", &[&xh, &xw], vec![]);
            let h = self.cx.op("Where", &[&tall, &sh, &s], vec![]);
            let w = self.cx.op("Where", &[&tall, &s, &sw], vec![]);
            (h, w)
        };
        self.resize_axes(c, x, 1, (&h, &w), ty)
    }

    /// Lowers `fused_batch_norm`: `(x - mean) / sqrt(var + epsilon) *
    /// scale + bias` along `dim`.
    pub(crate) fn fused_batch_norm(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let dim = self.int(n, "dim", -1);
        if dim < 0 || dim as usize >= r {
            return Err(Error::Invalid(format!("dim {dim} of a rank-{r} input")));
        }
        let eps = self.float(n, "epsilon", 1e-5) as f32;
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, r - dim as usize - 1));
        let m = self.cx.reshape(c.input(1)?, &shape);
        let v = self.cx.reshape(c.input(2)?, &shape);
        let s = self.cx.reshape(c.input(3)?, &shape);
        let b = self.cx.reshape(c.input(4)?, &shape);
        let e = self.cx.scalar(eps);
        let ve = self.cx.op("Add", &[&v, &e], vec![]);
        let sd = self.cx.op("Sqrt", &[&ve], vec![]);
        let d = self.cx.op("Sub", &[x, &m], vec![]);
        let q = self.cx.op("Div", &[&d, &sd], vec![]);
        let p = self.cx.op("Mul", &[&q, &s], vec![]);
        self.cx.op_to("Add", c.out, &[&p, &b], c.out, vec![]);
        Ok(())
    }

    /// Lowers `prewhiten`.
    pub(crate) fn prewhiten(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.whiten(n, c, Deviation::AtLeastCount)
    }

    /// Lowers `norm_image`.
    pub(crate) fn norm_image(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.whiten(n, c, Deviation::PlusEpsilon)
    }

    /// Lowers `prewhiten` and `norm_image`: per item of axis 0, `(x -
    /// mean) / std` over all its other elements (population deviation);
    /// `prewhiten` divides by `max(std, 1 / sqrt(count))`, `norm_image` by
    /// `std + epsilon`.
    fn whiten(&mut self, n: &Node, c: &Call, dev: Deviation) -> Result<()> {
        let x = c.input(0)?;
        let f = self.cx.op("Flatten", &[x], vec![attr::int("axis", 1)]);
        let m = self.cx.reduce("ReduceMean", &f, &[1], true);
        let d = self.cx.op("Sub", &[&f, &m], vec![]);
        let sq = self.cx.op("Mul", &[&d, &d], vec![]);
        let v = self.cx.reduce("ReduceMean", &sq, &[1], true);
        let sd = self.cx.op("Sqrt", &[&v], vec![]);
        let den = match dev {
            Deviation::AtLeastCount => {
                let shape = self.cx.op("Shape", &[&f], vec![]);
                let i1 = self.cx.ints(&[1]);
                let cnt = self
                    .cx
                    .op("Gather", &[&shape, &i1], vec![attr::int("axis", 0)]);
                let cnt = self.cx.cast(&cnt, DataType::Float);
                let rs = self.cx.op("Sqrt", &[&cnt], vec![]);
                let lo = self.cx.op("Reciprocal", &[&rs], vec![]);
                self.cx.op("Max", &[&sd, &lo], vec![])
            }
            Deviation::PlusEpsilon => {
                let eps = self.float(n, "epsilon", 1e-5) as f32;
                let e = self.cx.scalar(eps);
                self.cx.op("Add", &[&sd, &e], vec![])
            }
        };
        let y = self.cx.op("Div", &[&d, &den], vec![]);
        let shape = self.cx.op("Shape", &[x], vec![]);
        self.cx
            .op_to("Reshape", c.out, &[&y, &shape], c.out, vec![]);
        Ok(())
    }
}

/// What `prewhiten` and `norm_image` divide by.
#[derive(Clone, Copy)]
enum Deviation {
    /// `max(std, 1 / sqrt(count))` (`prewhiten`).
    AtLeastCount,
    /// `std + epsilon` (`norm_image`).
    PlusEpsilon,
}
