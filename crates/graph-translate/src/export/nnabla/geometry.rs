//! Geometric layers: `AffineGrid` (2-D).

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_ints};
use crate::export::{Error, Result};

/// The largest grid exported (its points are a constant of the model).
const MAX_GRID_POINTS: i64 = 1 << 22;

impl Exporter<'_> {
    /// Lowers `AffineGrid(theta)` for a 2-D `size` (H, W): the target grid
    /// of points `(x_w, y_h, 1)`, normalised to [-1, 1] (scaled by
    /// `(n - 1) / n` unless `align_corners`), a constant `(H * W, 3)`
    /// multiplied by each `theta` transposed, reshaped to `(B, H, W, 2)`.
    pub(crate) fn affine_grid(&mut self, n: &Node, c: &Call) -> Result<()> {
        let theta = c.input(0)?;
        let size = a_ints(n, "size");
        let hwp = match size[..] {
            [h, w] if h >= 1 && w >= 1 => h
                .checked_mul(w)
                .filter(|&p| p <= MAX_GRID_POINTS)
                .map(|p| (h, w, p)),
            _ => None,
        };
        let Some((h, w, points)) = hwp else {
            return Err(Error::Unsupported(format!(
                "AffineGrid {}: size {size:?} (exported: a 2-D size of at most {MAX_GRID_POINTS} \
                 points)",
                n.name
            )));
        };
        let ac = a_bool(n, "align_corners");
        let coords = |k: i64| -> Vec<f32> {
            (0..k)
                .map(|i| {
                    let t = if k == 1 {
                        0.0
                    } else {
                        -1.0 + 2.0 * i as f64 / (k - 1) as f64
                    };
                    let t = if ac { t } else { t * (k - 1) as f64 / k as f64 };
                    t as f32
                })
                .collect()
        };
        let (xs, ys) = (coords(w), coords(h));
        let mut base = Vec::new();
        for y in &ys {
            for x in &xs {
                base.extend([*x, *y, 1.0]);
            }
        }
        let g = self.cx.floats("grid", &base, &[points, 3]);
        let tt = self
            .cx
            .op("Transpose", &[theta], vec![attr::ints("perm", &[0, 2, 1])]);
        let m = self.cx.op("MatMul", &[&g, &tt], vec![]);
        let s = self.cx.ints(&[0, h, w, 2]);
        self.cx.op_to("Reshape", &n.name, &[&m, &s], c.out, vec![]);
        Ok(())
    }
}
