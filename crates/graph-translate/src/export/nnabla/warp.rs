//! Sampling and correlation of images: `WarpByGrid` and `WarpByFlow`
//! (ONNX `GridSample`) and `PatchCorrelation` (padded, shifted products
//! summed over each patch).

use onnx_format::builder::attr;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_ints, sizes_known};
use crate::export::{Error, Result};

/// A string attribute, or `default`.
fn a_str<'n>(n: &'n Node, key: &str, default: &'n str) -> &'n str {
    n.attribute(key)
        .and_then(Attribute::as_str)
        .unwrap_or(default)
}

impl Exporter<'_> {
    /// The lowest operator set `WarpByGrid` writes for inputs of dimensions
    /// `dims`: a 3-D warp (a 5-D grid) needs `GridSample` of opset 20.
    pub(crate) fn warp_by_grid_opset(dims: &[Option<Vec<i64>>]) -> i64 {
        let grid = dims.get(1).and_then(Option::as_ref);
        if grid.is_some_and(|d| d.len() == 5) {
            20
        } else {
            13
        }
    }

    /// Lowers `WarpByGrid(mode, padding_mode, align_corners,
    /// channel_last)` to `GridSample`: nnabla samples as ONNX does
    /// (normalised grid, `x` then `y` (then `z`), the same un-normalisation
    /// with and without `align_corners`, reflection then clamping for
    /// `reflect`), so `zero`/`repeat`/`reflect` are `zeros`/`border`/
    /// `reflection`. A 3-D warp (5-D input) needs opset 20. `nearest`
    /// rounds halfway points as nnabla does (the grid is rounded first).
    pub(crate) fn warp_by_grid(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, grid) = (c.input(0)?, c.input(1)?);
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "WarpByGrid function {:?}: {what}",
                n.name
            )))
        };
        if a_bool(n, "channel_last") {
            return refuse(
                "channel_last (nnabla 1.39 itself does not compute WarpByGrid with the \
                 channels last)"
                    .into(),
            );
        }
        let rank = self.rank(n, grid)?;
        let mode = match (a_str(n, "mode", "linear"), rank) {
            ("linear", _) if self.cx.opset >= 20 => "linear",
            ("linear", 4) => "bilinear",
            ("nearest", _) => "nearest",
            (m, _) => return refuse(format!("mode {m:?} (nnabla has linear and nearest)")),
        };
        if rank == 5 && self.cx.opset < 20 {
            return refuse(format!(
                "a 3-D warp needs GridSample of ONNX operator set 20, not {}",
                self.cx.opset
            ));
        }
        if rank != 4 && rank != 5 {
            return refuse(format!("a grid of rank {rank} (nnabla warps 2-D and 3-D)"));
        }
        let padding = a_str(n, "padding_mode", "zero");
        let pad = match padding {
            "zero" => "zeros",
            "repeat" => "border",
            "reflect" => "reflection",
            p => return refuse(format!("padding_mode {p:?}")),
        };
        let ac = a_bool(n, "align_corners");
        if mode == "nearest" {
            // nnabla rounds a point halfway between two pixels away from
            // zero, GridSample to even: the pixel is chosen here
            let xd = self.dims(x).unwrap_or_default();
            let k = rank - 2;
            if xd.len() != rank || !sizes_known(&xd[2..]) {
                return refuse(format!(
                    "nearest sampling of an input {xd:?} (its spatial size must be known)"
                ));
            }
            let sizes: Vec<i64> = xd[2..].iter().rev().copied().collect();
            let g = self.nearest_grid(grid, &sizes[..k], padding, ac);
            self.cx.op_to(
                "GridSample",
                &n.name,
                &[x, &g],
                c.out,
                vec![
                    attr::string("mode", "nearest"),
                    attr::string("padding_mode", "zeros"),
                    attr::int("align_corners", 0),
                ],
            );
            return Ok(());
        }
        self.cx.op_to(
            "GridSample",
            &n.name,
            &[x, grid],
            c.out,
            vec![
                attr::string("mode", mode),
                attr::string("padding_mode", pad),
                attr::int("align_corners", i64::from(ac)),
            ],
        );
        Ok(())
    }

    /// The grid of nnabla's nearest pixels: each coordinate (sizes `x`,
    /// `y`(, `z`) first) un-normalised as nnabla does, padded (`repeat`:
    /// clamped; `reflect`: reflected at the borders, or at the outer pixel
    /// edges then clamped without `align_corners`), rounded half away from
    /// zero, and normalised back so that `GridSample` (`nearest`,
    /// `zeros`, no `align_corners`) lands on that pixel's centre.
    fn nearest_grid(&mut self, grid: &str, sizes: &[i64], padding: &str, ac: bool) -> String {
        let one = self.cx.scalar(1.0);
        let two = self.cx.scalar(2.0);
        let half = self.cx.scalar(0.5);
        let zero = self.cx.scalar(0.0);
        let last = self.cx.ints(&[-1]);
        let mut coords = Vec::with_capacity(sizes.len());
        for (a, &size) in sizes.iter().enumerate() {
            let sf = size as f32;
            let st = self.cx.ints(&[a as i64]);
            let en = self.cx.ints(&[a as i64 + 1]);
            let g = self.cx.op("Slice", &[grid, &st, &en, &last], vec![]);
            // un-normalise: (g + 1) (S - 1) / 2, or ((g + 1) S - 1) / 2
            let p = self.cx.op("Add", &[&g, &one], vec![]);
            let mut u = if ac {
                let s1 = self.cx.scalar(sf - 1.0);
                self.cx.op("Mul", &[&p, &s1], vec![])
            } else {
                let s = self.cx.scalar(sf);
                let m = self.cx.op("Mul", &[&p, &s], vec![]);
                self.cx.op("Sub", &[&m, &one], vec![])
            };
            u = self.cx.op("Div", &[&u, &two], vec![]);
            let hi = self.cx.scalar(sf - 1.0);
            u = match (padding, ac) {
                ("repeat", _) => self.cx.op("Clip", &[&u, &zero, &hi], vec![]),
                ("reflect", true) if size == 1 => self.cx.op("Clip", &[&u, &zero, &zero], vec![]),
                ("reflect", true) => self.reflect(&u, 0.0, sf - 1.0),
                ("reflect", false) => {
                    let u2 = self.cx.op("Mul", &[&u, &two], vec![]);
                    let r = self.reflect(&u2, -1.0, 2.0 * sf - 1.0);
                    let r = self.cx.op("Mul", &[&r, &half], vec![]);
                    self.cx.op("Clip", &[&r, &zero, &hi], vec![])
                }
                _ => u,
            };
            // round half away from zero: halves go up when positive
            let f = self.cx.op("Floor", &[&u], vec![]);
            let d = self.cx.op("Sub", &[&u, &f], vec![]);
            let tie = self.cx.op("Equal", &[&d, &half], vec![]);
            let pos = self.cx.op("Greater", &[&u, &zero], vec![]);
            let up = self
                .cx
                .cast(&pos, onnx_format::proto::tensor_proto::DataType::Float);
            let away = self.cx.op("Add", &[&f, &up], vec![]);
            let even = self.cx.op("Round", &[&u], vec![]);
            let r = self.cx.op("Where", &[&tie, &away, &even], vec![]);
            // back to the grid: (2 r + 1) / S - 1
            let r2 = self.cx.op("Mul", &[&r, &two], vec![]);
            let r21 = self.cx.op("Add", &[&r2, &one], vec![]);
            let s = self.cx.scalar(sf);
            let q = self.cx.op("Div", &[&r21, &s], vec![]);
            coords.push(self.cx.op("Sub", &[&q, &one], vec![]));
        }
        let refs: Vec<&str> = coords.iter().map(String::as_str).collect();
        self.cx.op("Concat", &refs, vec![attr::int("axis", -1)])
    }

    /// `s` reflected into `[lo, hi]` (a triangle wave of period
    /// `2 (hi - lo)`), as nnabla reflects sampling points.
    fn reflect(&mut self, s: &str, lo: f32, hi: f32) -> String {
        let len = hi - lo;
        let l = self.cx.scalar(lo);
        let period = self.cx.scalar(2.0 * len);
        let lenc = self.cx.scalar(len);
        let d = self.cx.op("Sub", &[s, &l], vec![]);
        let q = self.cx.op("Div", &[&d, &period], vec![]);
        let fl = self.cx.op("Floor", &[&q], vec![]);
        let m = self.cx.op("Mul", &[&fl, &period], vec![]);
        let t = self.cx.op("Sub", &[&d, &m], vec![]);
        let over = self.cx.op("Greater", &[&t, &lenc], vec![]);
        let back = self.cx.op("Sub", &[&period, &t], vec![]);
        let w = self.cx.op("Where", &[&over, &back, &t], vec![]);
        self.cx.op("Add", &[&w, &l], vec![])
    }

    /// Lowers `WarpByFlow(data, flow)`: nnabla reads each output pixel
    /// `(x, y)` bilinearly at `(x + flow_x, y + flow_y)`, neighbours
    /// clamped to the image, which is `GridSample` (`bilinear`, `border`,
    /// `align_corners`) at that point normalised: `2 p / (size - 1) - 1`.
    pub(crate) fn warp_by_flow(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, flow) = (c.input(0)?, c.input(1)?);
        let d = self.dims(x).unwrap_or_default();
        let (h, w) = match d.as_slice() {
            [_, _, h, w] if sizes_known(&[*h, *w]) => (*h, *w),
            _ => {
                return Err(Error::Unsupported(format!(
                    "WarpByFlow function {:?}: the data must be (N, C, H, W) of known size, \
                     not {d:?}",
                    n.name
                )));
            }
        };
        let cells = h.checked_mul(w).and_then(|v| v.checked_mul(2));
        let len = cells
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&v| v <= 1 << 26)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "WarpByFlow function {:?}: image {h}x{w} too large",
                    n.name
                ))
            })?;
        // the pixel grid (H, W, 2): x then y
        let mut base = Vec::with_capacity(len);
        for yy in 0..h {
            for xx in 0..w {
                base.push(xx as f32);
                base.push(yy as f32);
            }
        }
        let base = self.cx.floats("pixel_grid", &base, &[h, w, 2]);
        let scale = |s: i64| if s > 1 { 2.0 / (s - 1) as f32 } else { 0.0 };
        let sc = self.cx.floats("grid_scale", &[scale(w), scale(h)], &[2]);
        let t = self.cx.op(
            "Transpose",
            &[flow],
            vec![attr::ints("perm", &[0, 2, 3, 1])],
        );
        let p = self.cx.op("Add", &[&t, &base], vec![]);
        let s = self.cx.op("Mul", &[&p, &sc], vec![]);
        let one = self.cx.scalar(1.0);
        let g = self.cx.op("Sub", &[&s, &one], vec![]);
        self.cx.op_to(
            "GridSample",
            &n.name,
            &[x, &g],
            c.out,
            vec![
                attr::string(
                    "mode",
                    if self.cx.opset >= 20 {
                        "linear"
                    } else {
                        "bilinear"
                    },
                ),
                attr::string("padding_mode", "border"),
                attr::int("align_corners", 1),
            ],
        );
        Ok(())
    }

    /// Lowers `PatchCorrelation(patch, shift, patch_step, shift_step,
    /// padding)` (inputs `(N, H, W, C)`): `x1` zero-padded by `padding`,
    /// `x2` by `padding` plus `shift`; for each shift the slice of `x2` at
    /// that offset times `x1`, summed over the channels; the products, one
    /// channel per shift, summed over each patch by a grouped `Conv` of
    /// ones with stride `patch_step`; then `(N, Ho, Wo, Cy, Cx)`.
    pub(crate) fn patch_correlation(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x1, x2) = (c.input(0)?, c.input(1)?);
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "PatchCorrelation function {:?}: {what}",
                n.name
            )))
        };
        let d = self.dims(x1).unwrap_or_default();
        let (hh, ww) = match d.as_slice() {
            [_, h, w, _] if sizes_known(&[*h, *w]) => (*h, *w),
            _ => {
                return refuse(format!(
                    "the inputs must be (N, H, W, C) of known size, not {d:?}"
                ));
            }
        };
        let two = |k: &str, dflt: i64| {
            let v = a_ints(n, k);
            match v.as_slice() {
                [] => Some([dflt, dflt]),
                [a] => Some([*a, *a]),
                [a, b] => Some([*a, *b]),
                _ => None,
            }
        };
        let (Some(patch), Some(shift), Some(pstep), Some(sstep)) = (
            two("patch", 1),
            two("shift", 0),
            two("patch_step", 1),
            two("shift_step", 1),
        ) else {
            return refuse("patch, shift and the steps must have two values".into());
        };
        let pad = a_ints(n, "padding");
        let pad: [i64; 4] = match pad.as_slice() {
            [] => [0; 4],
            [t, b, l, r] => [*t, *b, *l, *r],
            _ => return refuse(format!("padding {pad:?} (top, bottom, left, right)")),
        };
        let small = |v: i64| (0..=4096).contains(&v);
        if !patch
            .iter()
            .chain(&pstep)
            .chain(&sstep)
            .all(|&v| v >= 1 && small(v))
            || !shift.iter().chain(&pad).all(|&v| small(v))
        {
            return refuse(format!(
                "patch {patch:?}, shift {shift:?}, steps {pstep:?} {sstep:?}, padding {pad:?}"
            ));
        }
        let (hp, wp) = (hh + pad[0] + pad[1], ww + pad[2] + pad[3]);
        if patch[0] > hp || patch[1] > wp {
            return refuse(format!("patch {patch:?} larger than the padded image"));
        }
        let step = |v: i64| usize::try_from(v).unwrap_or(1);
        let shifts_y: Vec<i64> = (-shift[0]..=shift[0]).step_by(step(sstep[0])).collect();
        let shifts_x: Vec<i64> = (-shift[1]..=shift[1]).step_by(step(sstep[1])).collect();
        let count = shifts_y.len() * shifts_x.len();
        if count > 4096 {
            return refuse(format!("{count} shifts (at most 4096 are exported)"));
        }
        let p1 = self.cx.ints(&[0, pad[0], pad[2], 0, 0, pad[1], pad[3], 0]);
        let x1p = self.cx.op("Pad", &[x1, &p1], vec![]);
        let p2 = self.cx.ints(&[
            0,
            pad[0] + shift[0],
            pad[2] + shift[1],
            0,
            0,
            pad[1] + shift[0],
            pad[3] + shift[1],
            0,
        ]);
        let x2p = self.cx.op("Pad", &[x2, &p2], vec![]);
        let axes = self.cx.ints(&[1, 2]);
        let mut prods = Vec::with_capacity(count);
        for &sy in &shifts_y {
            for &sx in &shifts_x {
                let (oy, ox) = (shift[0] + sy, shift[1] + sx);
                let st = self.cx.ints(&[oy, ox]);
                let en = self.cx.ints(&[oy + hp, ox + wp]);
                let s = self.cx.op("Slice", &[&x2p, &st, &en, &axes], vec![]);
                let m = self.cx.op("Mul", &[&x1p, &s], vec![]);
                // (N, Hp, Wp, 1)
                prods.push(self.cx.reduce("ReduceSum", &m, &[3], true));
            }
        }
        let refs: Vec<&str> = prods.iter().map(String::as_str).collect();
        let cat = if refs.len() == 1 {
            prods[0].clone()
        } else {
            self.cx.op("Concat", &refs, vec![attr::int("axis", 3)])
        };
        let nchw = self.cx.op(
            "Transpose",
            &[&cat],
            vec![attr::ints("perm", &[0, 3, 1, 2])],
        );
        let kn = usize::try_from(patch[0] * patch[1]).unwrap_or(usize::MAX);
        let kn = kn.saturating_mul(count);
        if kn > 1 << 24 {
            return refuse(format!(
                "{count} shifts of a {patch:?} patch are too many weights"
            ));
        }
        let ones = vec![1f32; kn];
        let wt = self
            .cx
            .floats("patch_ones", &ones, &[count as i64, 1, patch[0], patch[1]]);
        let conv = self.cx.op(
            "Conv",
            &[&nchw, &wt],
            vec![
                attr::ints("strides", &pstep),
                attr::int("group", count as i64),
            ],
        );
        let nhwc = self.cx.op(
            "Transpose",
            &[&conv],
            vec![attr::ints("perm", &[0, 2, 3, 1])],
        );
        if count == 1 {
            // one shift: (N, Ho, Wo, 1) gains the last axis
            let ax = self.cx.ints(&[4]);
            self.cx
                .op_to("Unsqueeze", &n.name, &[&nhwc, &ax], c.out, vec![]);
        } else {
            let shape = self
                .cx
                .ints(&[0, 0, 0, shifts_y.len() as i64, shifts_x.len() as i64]);
            self.cx
                .op_to("Reshape", &n.name, &[&nhwc, &shape], c.out, vec![]);
        }
        Ok(())
    }
}
