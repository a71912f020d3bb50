//! Region and mask functions: `RoiAlign` (ONNX `RoiAlign`) and
//! `BoolScatter` (the masked positions filled in order from the packed
//! values).

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `RoiAlign(input, boxes)`: boxes `(K, 5)` are `(batch index,
    /// x1, y1, x2, y2)`, scaled by `spatial_scale` `(y, x)` and shifted by
    /// half a pixel (ONNX's `half_pixel`, operator set 16 on); `sampling_ratio`
    /// below 1 is ONNX's adaptive 0.
    pub(crate) fn roi_align(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, boxes) = (c.input(0)?, c.input(1)?);
        if a_bool(n, "channel_last") {
            return Err(Error::Unsupported(format!(
                "RoiAlign {}: channel_last = true (nnabla 1.39's CPU runtime refuses it, so no \
                 export of it is verified)",
                n.name
            )));
        }
        if self.cx.opset < 16 {
            return Err(Error::Unsupported(format!(
                "RoiAlign {}: nnabla samples boxes with half-pixel offsets, which ONNX's RoiAlign \
                 takes from operator set 16 on (export with --opset 16 or later; this export \
                 writes {})",
                n.name, self.cx.opset
            )));
        }
        let size = a_ints(n, "output_size");
        let [oh, ow] = size[..] else {
            return Err(Error::Invalid(format!(
                "RoiAlign {}: output_size {size:?} is not (height, width)",
                n.name
            )));
        };
        if oh < 1 || ow < 1 {
            return Err(Error::Invalid(format!(
                "RoiAlign {}: output_size {size:?} is not positive",
                n.name
            )));
        }
        let scale = match n.attribute("spatial_scale") {
            Some(Attribute::Floats(v)) => v.clone(),
            _ => vec![1.0, 1.0],
        };
        let [sy, sx] = scale[..] else {
            return Err(Error::Invalid(format!(
                "RoiAlign {}: spatial_scale {scale:?} is not (y, x)",
                n.name
            )));
        };
        let ratio = a_int(n, "sampling_ratio", -1).max(0);
        let (s0, s1, s5, ax) = (
            self.cx.ints(&[0]),
            self.cx.ints(&[1]),
            self.cx.ints(&[5]),
            self.cx.ints(&[1]),
        );
        let bi = self.cx.op("Slice", &[boxes, &s0, &s1, &ax], vec![]);
        let bi = self.cx.reshape(&bi, &[-1]);
        let bi = self.cx.cast(&bi, DataType::Int64);
        let rois = self.cx.op("Slice", &[boxes, &s1, &s5, &ax], vec![]);
        let (sx, sy) = (sx as f32, sy as f32);
        let k = self.cx.floats("roi_scale", &[sx, sy, sx, sy], &[1, 4]);
        let rois = self.cx.op("Mul", &[&rois, &k], vec![]);
        self.cx.op_to(
            "RoiAlign",
            &n.name,
            &[x, &rois, &bi],
            c.out,
            vec![
                attr::string("coordinate_transformation_mode", "half_pixel"),
                attr::string("mode", "avg"),
                attr::int("output_height", oh),
                attr::int("output_width", ow),
                attr::int("sampling_ratio", ratio),
                attr::float("spatial_scale", 1.0),
            ],
        );
        Ok(())
    }

    /// Lowers `BoolScatter(sdata, mask[, gdata])`: output `mask.shape +
    /// sdata.shape[1:]`; at the `k`-th nonzero of `mask` (in order) row `k`
    /// of `sdata`; elsewhere 0 times the row after the last one written
    /// (nnabla's arithmetic, NaN for an infinite value), or `gdata`'s value
    /// when it is given.
    pub(crate) fn bool_scatter(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (s, mask) = (c.input(0)?, c.input(1)?);
        let rs = self.rank(n, s)? as i64;
        let total = self
            .dims(mask)
            .filter(|d| d.iter().all(|&v| v >= 1))
            .and_then(|d| d.iter().try_fold(1i64, |a, &v| a.checked_mul(v)))
            .unwrap_or(-1);
        // the mask's entries in order
        let mflat = self.cx.reshape(mask, &[total]);
        let zero = self.cx.scalar(0.0);
        let eq = self.cx.op("Equal", &[&mflat, &zero], vec![]);
        let on = self.cx.op("Not", &[&eq], vec![]);
        let flat = self.cx.cast(&on, DataType::Float);
        let ax0 = self.cx.ints(&[0]);
        let ax0 = self.cx.squeeze0(&ax0);
        let before = self
            .cx
            .op("CumSum", &[&flat, &ax0], vec![attr::int("exclusive", 1)]);
        // nnabla stops at the last row of sdata; the output shape is
        // mask.shape + sdata.shape[1:] (constant when both are declared)
        let known = |d: Option<Vec<i64>>| d.filter(|d| d.iter().all(|&v| v >= 1));
        let (ds, dm) = (known(self.dims(s)), known(self.dims(mask)));
        let (last, shape_o) = match (ds, dm) {
            (Some(ds), Some(dm)) if !ds.is_empty() => {
                let last = self.cx.scalar((ds[0] - 1) as f32);
                let mut o = dm;
                o.extend_from_slice(&ds[1..]);
                (last, self.cx.ints(&o))
            }
            _ => {
                let shape_s = self.cx.op("Shape", &[s], vec![]);
                let (i0, i1) = (self.cx.ints(&[0]), self.cx.ints(&[1]));
                let rows = self.cx.op("Slice", &[&shape_s, &i0, &i1], vec![]);
                let last = self.cx.op("Sub", &[&rows, &i1], vec![]);
                let last = self.cx.cast(&last, DataType::Float);
                let shape_m = self.cx.op("Shape", &[mask], vec![]);
                let big = self.cx.ints(&[i64::MAX]);
                let tail = self.cx.op("Slice", &[&shape_s, &i1, &big], vec![]);
                let o = self
                    .cx
                    .op("Concat", &[&shape_m, &tail], vec![attr::int("axis", 0)]);
                (last, o)
            }
        };
        let idx = self.cx.op("Min", &[&before, &last], vec![]);
        let idx = self.cx.cast(&idx, DataType::Int64);
        let g = self.cx.op("Gather", &[s, &idx], vec![attr::int("axis", 0)]);
        // the mask as a column over g's rows (mask entries, then sdata's
        // trailing axes)
        let col: Vec<i64> = std::iter::once(-1)
            .chain(std::iter::repeat_n(1, rs.saturating_sub(1) as usize))
            .collect();
        let mcol = self.cx.reshape(&flat, &col);
        let y = match c.ins.get(2) {
            Some(gdata) => {
                let on = self.cx.cast(&mcol, DataType::Bool);
                let gs = self.cx.op("Shape", &[&g], vec![]);
                let old = self.cx.op("Reshape", &[gdata, &gs], vec![]);
                self.cx.op("Where", &[&on, &g, &old], vec![])
            }
            None => self.cx.op("Mul", &[&mcol, &g], vec![]),
        };
        self.cx
            .op_to("Reshape", &n.name, &[&y, &shape_o], c.out, vec![]);
        Ok(())
    }
}
