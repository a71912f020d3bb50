//! Image operators: convolution, pooling, normalisation, patches.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Node};

use super::conv::Grouping;
use super::{Call, Exporter, format_ok};
use crate::export::{Ctx, Error, Result};

impl Exporter<'_> {
    /// Lowers `conv2d`.
    pub(crate) fn conv2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.conv2d_grouped(n, c, Grouping::Dense)
    }

    /// Lowers `depthwise_conv2d`.
    pub(crate) fn depthwise_conv2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.conv2d_grouped(n, c, Grouping::Depthwise)
    }

    /// Lowers `conv2d` and `depthwise_conv2d` (padding a parameter).
    fn conv2d_grouped(&mut self, n: &Node, c: &Call, g: Grouping) -> Result<()> {
        format_ok(n)?;
        let (x, w) = (c.input(0)?, c.input(1)?);
        let pad = self.need_ints(n, "padding", 8)?;
        let stride = self.need_ints(n, "stride", 4)?;
        let dil = self
            .ints(n, "dilation")
            .or_else(|| self.ints(n, "dialations"))
            .filter(|d| d.len() == 4)
            .unwrap_or(vec![1; 4]);
        if self.float(n, "padding_value", 0.0) != 0.0 {
            return Err(Error::Unsupported("a non-zero padding_value".into()));
        }
        self.conv_node(c, x, w, &pad, &stride, &dil, g)
    }

    /// Lowers `add_bias`.
    pub(crate) fn add_bias(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let (x, b) = (input(0)?, input(1)?);
        let dim = match n.attribute("format").and_then(Attribute::as_str) {
            Some(f) => f.find('C').map_or(1, |i| i as i64),
            None => self.int(n, "dim", 1),
        };
        let rank = self.rank(x)? as i64;
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, (rank - dim - 1).max(0) as usize));
        let b2 = self.cx.reshape(b, &shape);
        self.cx.op_to("Add", out, &[x, &b2], out, vec![]);
        Ok(())
    }

    /// Lowers `pooling2d`.
    pub(crate) fn pooling2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let input = |k: usize| c.input(k);
        format_ok(n)?;
        let pad = self.need_ints(n, "padding", 8)?;
        let k = self.need_ints(n, "ksize", 4)?;
        let s = self.need_ints(n, "stride", 4)?;
        self.pool(n, input(0)?, &pad, &k, &s, true, None)?;
        Ok(())
    }

    /// Lowers `pooling2d_v2`.
    pub(crate) fn pooling2d_v2(&mut self, n: &Node, c: &Call) -> Result<()> {
        let input = |k: usize| c.input(k);
        format_ok(n)?;
        let (x, p) = (input(0)?, input(1)?);
        let k = self
            .const_ints(input(2)?)
            .filter(|v| v.len() == 4)
            .ok_or_else(|| Error::Unsupported("ksize that is not a constant".into()))?;
        let s = self
            .const_ints(input(3)?)
            .filter(|v| v.len() == 4)
            .ok_or_else(|| Error::Unsupported("stride that is not a constant".into()))?;
        if let Some(pad) = self.const_ints(p).filter(|v| v.len() == 8) {
            self.pool(n, x, &pad, &k, &s, true, None)?;
        } else {
            // The fold of this one pair (`_onnx_pooling2d_padding` into the
            // `pooling2d_v2` reading it): the name means that operator, not
            // a property its row could carry.
            let pn = self
                .producer
                .get(p)
                .copied()
                .filter(|pn| pn.op == "_onnx_pooling2d_padding")
                .ok_or_else(|| {
                    Error::Unsupported(
                        "padding that is neither a constant nor _onnx_pooling2d_padding".into(),
                    )
                })?;
            let auto = pn
                .attribute("auto_pad")
                .and_then(Attribute::as_str)
                .unwrap_or("NOTSET")
                .to_string();
            let pad = self.ints(pn, "padding").unwrap_or(vec![0; 8]);
            if auto == "NOTSET" {
                self.pool(n, x, &pad, &k, &s, false, None)?;
            } else if pad.iter().all(|&v| v == 0) {
                self.pool(n, x, &pad, &k, &s, false, Some(&auto))?;
            } else {
                return Err(Error::Unsupported(format!(
                    "auto_pad {auto} with a static padding"
                )));
            }
        }
        Ok(())
    }

    /// Lowers `_onnx_pooling2d_padding`.
    pub(crate) fn onnx_pooling2d_padding(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        // folded into the pooling2d_v2 that reads it (that one operator, by
        // name); any other reader fails
        let readers = self
            .g
            .nodes
            .iter()
            .filter(|m| m.inputs.iter().any(|i| i == out))
            .any(|m| m.op != "pooling2d_v2");
        if readers {
            return Err(Error::Unsupported(
                "its padding read by an operator other than pooling2d_v2".into(),
            ));
        }
        Ok(())
    }

    /// Lowers `global_pooling2d`.
    pub(crate) fn global_pooling2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        format_ok(n)?;
        let o = if self.int(n, "type", 0) == 0 {
            "GlobalMaxPool"
        } else {
            "GlobalAveragePool"
        };
        self.cx.op_to(o, out, &[input(0)?], out, vec![]);
        Ok(())
    }

    /// Lowers `batch_norm`.
    pub(crate) fn batch_norm(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.batch_affine(n, c, Batch::Norm)
    }

    /// Lowers `batch_scale`.
    pub(crate) fn batch_scale(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.batch_affine(n, c, Batch::Scale)
    }

    /// Lowers `batch_norm` and `batch_scale`: inputs 1 and 2 along `dim`.
    fn batch_affine(&mut self, n: &Node, c: &Call, kind: Batch) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let x = input(0)?;
        let dim = self.int(n, "dim", 1);
        let rank = self.rank(x)? as i64;
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, (rank - dim - 1).max(0) as usize));
        let (a, b) = (
            self.cx.reshape(input(1)?, &shape),
            self.cx.reshape(input(2)?, &shape),
        );
        match kind {
            Batch::Norm => {
                // (x - mean) / sqrt(variance + epsilon)
                let eps = self.cx.scalar(self.float(n, "epsilon", 1e-5) as f32);
                let d = self.cx.op("Sub", &[x, &a], vec![]);
                let ve = self.cx.op("Add", &[&b, &eps], vec![]);
                let sd = self.cx.op("Sqrt", &[&ve], vec![]);
                self.cx.op_to("Div", out, &[&d, &sd], out, vec![]);
            }
            Batch::Scale => {
                // x * scale + bias
                let m = self.cx.op("Mul", &[x, &a], vec![]);
                self.cx.op_to("Add", out, &[&m, &b], out, vec![]);
            }
        }
        Ok(())
    }

    /// Lowers `prelu`.
    pub(crate) fn prelu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let out = c.out;
        let input = |k: usize| c.input(k);
        let (x, slope) = (input(0)?, input(1)?);
        let dim = self.int(n, "dim", 1);
        let rank = self.rank(x)? as i64;
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, (rank - dim - 1).max(0) as usize));
        let s = self.cx.reshape(slope, &shape);
        self.cx.op_to("PRelu", out, &[x, &s], out, vec![]);
        Ok(())
    }

    /// A pooling: `ceil` for TenniS's own rule (ceil_mode 1), else the
    /// floor rule; `auto`: an ONNX auto_pad instead of explicit pads.
    #[allow(clippy::too_many_arguments)]
    fn pool(
        &mut self,
        n: &Node,
        x: &str,
        pad: &[i64],
        k: &[i64],
        s: &[i64],
        ceil: bool,
        auto: Option<&str>,
    ) -> Result<()> {
        let out = n.outputs[0].as_str();
        if pad.len() != 8 || k.len() != 4 || s.len() != 4 {
            return Err(Error::Invalid(format!(
                "pooling {:?}: padding needs 8 values, ksize and stride 4 each (have {}, {}, {})",
                n.name,
                pad.len(),
                k.len(),
                s.len()
            )));
        }
        if pad[..4].iter().any(|&v| v != 0) || k[..2] != [1, 1] || s[..2] != [1, 1] {
            return Err(Error::Unsupported(
                "pooling over the batch or channel axes".into(),
            ));
        }
        let ty = self.int(n, "type", 0);
        // TenniS padding types: 0 black (averages count the valid inputs),
        // 3 white (averages divide by the window size); 1 copy, 2 loop.
        let white = match self.int(n, "padding_type", 0) {
            0 => false,
            3 => true,
            t => {
                return Err(Error::Unsupported(format!(
                    "padding_type {t} (copy or loop padding)"
                )));
            }
        };
        let mut attrs = vec![
            attr::ints("kernel_shape", &k[2..]),
            attr::ints("strides", &s[2..]),
        ];
        let mut x = x.to_string();
        match auto {
            Some(a) => attrs.push(attr::string("auto_pad", a)),
            // A white average with the ceil rule divides every window by its
            // size, the last one too where it reaches past the end padding;
            // ONNX leaves those cells out of the count. Zeros padded in
            // explicitly, s - 1 more at each end, give the same number of
            // windows with the floor rule, each inside the data.
            None if ty == 1 && white && ceil => {
                let p = self.cx.ints(&[
                    0,
                    0,
                    pad[4],
                    pad[6],
                    0,
                    0,
                    pad[5] + s[2] - 1,
                    pad[7] + s[3] - 1,
                ]);
                x = self.cx.op("Pad", &[&x, &p], vec![]);
            }
            None => {
                attrs.push(attr::ints("pads", &[pad[4], pad[6], pad[5], pad[7]]));
                attrs.push(attr::int("ceil_mode", i64::from(ceil)));
            }
        }
        let o = match ty {
            0 => "MaxPool",
            1 => {
                attrs.push(attr::int("count_include_pad", i64::from(white)));
                "AveragePool"
            }
            t => return Err(Error::Unsupported(format!("pooling type {t}"))),
        };
        self.cx.op_to(o, out, &[&x], out, attrs);
        Ok(())
    }

    /// `shape_index_patch(x [N, C, H, W], pos [N, 2L, 1, 1])`: for each of
    /// the L landmarks (x, y in [0, 1]) the patch of `PH × PW` pixels of x
    /// around it, zero outside x: out `[N, C, PH, L, PW]` with
    /// `PH = int(origin_patch.h · H / origin.h + 0.5)` (and W alike), the
    /// patch starting at `int(y · (H − 1) − (PH − 1) / 2 + 0.5)` (truncated
    /// toward zero, as TenniS's C++ does). Written with Shape, Range and
    /// GatherElements over the flattened image, sizes computed at run time.
    pub(crate) fn shape_index_patch(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, pos, out) = (c.input(0)?, c.input(1)?, c.out);
        let op = self.need_ints(n, "origin_patch", 2)?;
        let or = self.need_ints(n, "origin", 2)?;
        if or.iter().any(|&v| v <= 0) {
            return Err(Error::Invalid(format!("origin {or:?}")));
        }
        let cx = &mut self.cx;
        let f = |cx: &mut Ctx, v: &str| cx.cast(v, DataType::Float);
        let i64c = |cx: &mut Ctx, v: &str| cx.cast(v, DataType::Int64);
        let shape = cx.op("Shape", &[x], vec![]);
        let pick = |cx: &mut Ctx, i: i64| {
            let k = cx.ints(&[i]);
            let k = cx.squeeze0(&k);
            cx.op("Gather", &[&shape, &k], vec![])
        };
        let (nn, cc, hh, ww) = (pick(cx, 0), pick(cx, 1), pick(cx, 2), pick(cx, 3));
        let half = cx.scalar(0.5);
        let one_f = cx.scalar(1.0);
        let axis = |cx: &mut Ctx, size: &str, patch: i64, origin: i64, coord: i64| {
            // PH = floor(patch * H / origin + 0.5)
            let sf = f(cx, size);
            let scale = cx.scalar(patch as f32 / origin as f32);
            let p = cx.op("Mul", &[&sf, &scale], vec![]);
            let p = cx.op("Add", &[&p, &half], vec![]);
            let p = cx.op("Floor", &[&p], vec![]);
            let pi = i64c(cx, &p);
            // start = trunc(c * (H - 1) - (PH - 1) / 2 + 0.5), c: [N, L]
            let two = cx.ints(&[0, -1, 2]);
            let pr = cx.op("Reshape", &[pos, &two], vec![]);
            let ci = cx.ints(&[coord]);
            let ci = cx.squeeze0(&ci);
            let c = cx.op("Gather", &[&pr, &ci], vec![attr::int("axis", 2)]);
            let hm1 = cx.op("Sub", &[&sf, &one_f], vec![]);
            let r = cx.op("Sub", &[&p, &one_f], vec![]);
            let r = cx.op("Mul", &[&r, &half], vec![]);
            let s = cx.op("Mul", &[&c, &hm1], vec![]);
            let s = cx.op("Sub", &[&s, &r], vec![]);
            let s = cx.op("Add", &[&s, &half], vec![]);
            let start = i64c(cx, &s);
            // indices [N, L, PH], valid where 0 <= i < H
            let zero = cx.ints(&[0]);
            let zero = cx.squeeze0(&zero);
            let onei = cx.ints(&[1]);
            let onei = cx.squeeze0(&onei);
            let rng = cx.op("Range", &[&zero, &pi, &onei], vec![]);
            let st = cx.unsqueeze(&start, &[2]);
            let idx = cx.op("Add", &[&st, &rng], vec![]);
            let ge = cx.op("GreaterOrEqual", &[&idx, &zero], vec![]);
            let lt = cx.op("Less", &[&idx, size], vec![]);
            let ok = cx.op("And", &[&ge, &lt], vec![]);
            let hi = cx.op("Sub", &[size, &onei], vec![]);
            let clamped = cx.op("Max", &[&idx, &zero], vec![]);
            let clamped = cx.op("Min", &[&clamped, &hi], vec![]);
            (pi, clamped, ok)
        };
        let (ph, rows, rok) = axis(cx, &hh, op[0], or[0], 1);
        let (pw, cols, cok) = axis(cx, &ww, op[1], or[1], 0);
        // flat index rows * W + cols: [N, L, PH, PW]
        let r4 = cx.unsqueeze(&rows, &[3]);
        let c4 = cx.unsqueeze(&cols, &[2]);
        let rw = cx.op("Mul", &[&r4, &ww], vec![]);
        let flat = cx.op("Add", &[&rw, &c4], vec![]);
        let rok4 = cx.unsqueeze(&rok, &[3]);
        let cok4 = cx.unsqueeze(&cok, &[2]);
        let ok = cx.op("And", &[&rok4, &cok4], vec![]);
        let u = |cx: &mut Ctx, v: &str| cx.unsqueeze(v, &[0]);
        let (n1, c1, h1, w1, ph1, pw1) = (
            u(cx, &nn),
            u(cx, &cc),
            u(cx, &hh),
            u(cx, &ww),
            u(cx, &ph),
            u(cx, &pw),
        );
        let hw = cx.op("Mul", &[&h1, &w1], vec![]);
        let xs = cx.op("Concat", &[&n1, &c1, &hw], vec![attr::int("axis", 0)]);
        let xf = cx.op("Reshape", &[x, &xs], vec![]);
        let m1 = cx.ints(&[-1]);
        let one1 = cx.ints(&[1]);
        let is = cx.op("Concat", &[&n1, &one1, &m1], vec![attr::int("axis", 0)]);
        let idx = cx.op("Reshape", &[&flat, &is], vec![]);
        let ones = cx.op("Shape", &[&idx], vec![]);
        let k = cx.ints(&[2]);
        let k = cx.squeeze0(&k);
        let kk = cx.op("Gather", &[&ones, &k], vec![]);
        let kk = cx.unsqueeze(&kk, &[0]);
        let es = cx.op("Concat", &[&n1, &c1, &kk], vec![attr::int("axis", 0)]);
        let idx = cx.op("Expand", &[&idx, &es], vec![]);
        let g = cx.op("GatherElements", &[&xf, &idx], vec![attr::int("axis", 2)]);
        let l = cx.op("Shape", &[&rows], vec![]);
        let k1 = cx.ints(&[1]);
        let k1 = cx.squeeze0(&k1);
        let l = cx.op("Gather", &[&l, &k1], vec![]);
        let l1 = cx.unsqueeze(&l, &[0]);
        let gs = cx.op(
            "Concat",
            &[&n1, &c1, &l1, &ph1, &pw1],
            vec![attr::int("axis", 0)],
        );
        let g5 = cx.op("Reshape", &[&g, &gs], vec![]);
        let okf = f(cx, &ok);
        let ok5 = cx.unsqueeze(&okf, &[1]);
        let masked = cx.op("Mul", &[&g5, &ok5], vec![]);
        cx.op_to(
            "Transpose",
            out,
            &[&masked],
            out,
            vec![attr::ints("perm", &[0, 1, 3, 2, 4])],
        );
        Ok(())
    }

    /// `_limit`: every axis longer than its (positive) limit is cropped to
    /// the limit, centred (the start is half the excess, rounded down);
    /// shorter axes are kept. Limits align with the last axes.
    pub(crate) fn limit(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, out) = (c.input(0)?, c.out);
        let limits = self
            .ints(n, "shape")
            .ok_or_else(|| Error::Invalid("no shape".into()))?;
        let rank = self.rank(x).unwrap_or(limits.len()).max(limits.len());
        let lead = rank - limits.len();
        let axes: Vec<i64> = limits
            .iter()
            .enumerate()
            .filter(|(_, l)| **l > 0)
            .map(|(i, _)| (lead + i) as i64)
            .collect();
        if axes.is_empty() {
            self.cx.op_to("Identity", out, &[x], out, vec![]);
            return Ok(());
        }
        let lim: Vec<i64> = limits.iter().copied().filter(|&l| l > 0).collect();
        let shape = self.cx.op("Shape", &[x], vec![]);
        let ax = self.cx.ints(&axes);
        let sizes = self.cx.op("Gather", &[&shape, &ax], vec![]);
        let l = self.cx.ints(&lim);
        let zero = self.cx.ints(&[0]);
        let two = self.cx.ints(&[2]);
        let excess = self.cx.op("Sub", &[&sizes, &l], vec![]);
        let excess = self.cx.op("Max", &[&excess, &zero], vec![]);
        let start = self.cx.op("Div", &[&excess, &two], vec![]);
        let len = self.cx.op("Min", &[&sizes, &l], vec![]);
        let end = self.cx.op("Add", &[&start, &len], vec![]);
        self.cx
            .op_to("Slice", out, &[x, &start, &end, &ax], out, vec![]);
        Ok(())
    }
}

/// What `batch_norm` and `batch_scale` compute from inputs 1 and 2.
#[derive(Clone, Copy)]
enum Batch {
    /// `(x - mean) / sqrt(variance + epsilon)` (`batch_norm`).
    Norm,
    /// `x * scale + bias` (`batch_scale`).
    Scale,
}
