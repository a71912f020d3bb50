//! `non_max_suppression_v3` (TensorFlow's NonMaxSuppressionV3) and
//! `roi_align` (Dragon's, Caffe2's RoIAlign).

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `non_max_suppression_v3` (boxes `[n, 4]`, scores `[n]`): the
    /// indices of the kept boxes, highest score first, `INT32`, padded with
    /// -1 to `max_output_size`. Boxes with a score not above
    /// `score_threshold` are dropped, a box is suppressed by a kept one
    /// whose IoU with it is above `iou_threshold`. Mode `xyxy` reads boxes
    /// as two corners `[y1, x1, y2, x2]`, any other mode as `[y, x, h,
    /// w]`. Equal scores may be taken in another order than TenniS's.
    pub(crate) fn non_max_suppression_v3(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (b, s) = (c.input(0)?, c.input(1)?);
        let max = self.int(n, "max_output_size", 0);
        if !(1..=1 << 24).contains(&max) {
            return Err(Error::Invalid(format!("max_output_size {max}")));
        }
        let iou = self.float(n, "iou_threshold", f64::NAN) as f32;
        let score = self.float(n, "score_threshold", f64::NAN) as f32;
        if iou.is_nan() || score.is_nan() {
            return Err(Error::Invalid("no iou_threshold or score_threshold".into()));
        }
        let xyxy = n.attribute("mode").and_then(Attribute::as_str) == Some("xyxy");
        let axis = |a: i64| attr::int("axis", a);
        let corners = if xyxy {
            b.to_string()
        } else {
            let z = self.cx.ints(&[0]);
            let two = self.cx.ints(&[2]);
            let four = self.cx.ints(&[4]);
            let one = self.cx.ints(&[1]);
            let yx = self.cx.op("Slice", &[b, &z, &two, &one], vec![]);
            let hw = self.cx.op("Slice", &[b, &two, &four, &one], vec![]);
            let end = self.cx.op("Add", &[&yx, &hw], vec![]);
            self.cx.op("Concat", &[&yx, &end], vec![axis(1)])
        };
        let b3 = self.cx.unsqueeze(&corners, &[0]);
        let s3 = self.cx.unsqueeze(s, &[0, 1]);
        let m = self.cx.ints(&[max]);
        let t_iou = self.cx.floats("iou", &[iou], &[1]);
        let t_score = self.cx.floats("score", &[score], &[1]);
        let sel = self.cx.op(
            "NonMaxSuppression",
            &[&b3, &s3, &m, &t_iou, &t_score],
            vec![],
        );
        let col = self.cx.ints(&[2]);
        let idx = self.cx.op("Gather", &[&sel, &col], vec![axis(1)]);
        let flat = self.cx.ints(&[-1]);
        let idx = self.cx.op("Reshape", &[&idx, &flat], vec![]);
        let idx = self.cx.cast(&idx, DataType::Int32);
        let shape = self.cx.op("Shape", &[&idx], vec![]);
        let rest = self.cx.op("Sub", &[&m, &shape], vec![]);
        let zero = self.cx.ints(&[0]);
        let pads = self.cx.op("Concat", &[&zero, &rest], vec![axis(0)]);
        let name = self.cx.helper_name("minus_one");
        let t = tensor_core::Tensor::from_values([], &[-1i32])
            .map_err(|e| Error::Invalid(e.to_string()))?;
        self.cx.b.initializer(&name, &t)?;
        self.cx
            .op_to("Pad", c.out, &[&idx, &pads, &name], c.out, vec![]);
        Ok(())
    }

    /// Lowers `roi_align` (x `[N, C, H, W]`, rois `[n, 5]` as `[batch, x1,
    /// y1, x2, y2]`): ONNX `RoiAlign`, average mode, without the half-pixel
    /// offset (`output_half_pixel`, ONNX's only mode before operator set
    /// 16), `sampling_ratio` (default 2) samples per bin side. TenniS
    /// writes zeros for a roi of negative batch index, which ONNX refuses.
    pub(crate) fn roi_align(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, rois) = (c.input(0)?, c.input(1)?);
        let ph = self.int(n, "pool_h", 0);
        let pw = self.int(n, "pool_w", 0);
        if ph < 1 || pw < 1 {
            return Err(Error::Invalid(format!("pool_h {ph} or pool_w {pw}")));
        }
        let scale = self.float(n, "spatial_scale", 1.0) as f32;
        let ratio = self.int(n, "sampling_ratio", 2).max(0);
        let one = self.cx.ints(&[1]);
        let five = self.cx.ints(&[5]);
        let zero = self.cx.ints(&[0]);
        let r4 = self.cx.op("Slice", &[rois, &one, &five, &one], vec![]);
        let b = self.cx.op("Slice", &[rois, &zero, &one, &one], vec![]);
        let flat = self.cx.ints(&[-1]);
        let b = self.cx.op("Reshape", &[&b, &flat], vec![]);
        let b = self.cx.cast(&b, DataType::Int64);
        let mut attrs = vec![
            attr::string("mode", "avg"),
            attr::int("output_height", ph),
            attr::int("output_width", pw),
            attr::int("sampling_ratio", ratio),
            attr::float("spatial_scale", scale),
        ];
        if self.cx.opset >= 16 {
            attrs.push(attr::string(
                "coordinate_transformation_mode",
                "output_half_pixel",
            ));
        }
        self.cx
            .op_to("RoiAlign", c.out, &[x, &r4, &b], c.out, attrs);
        Ok(())
    }
}

/// The half widths and half heights of `prior_box`'s priors at one cell,
/// in TenniS's order: per `min_size` (taken as an integer) the square
/// prior, the `sqrt(min * max)` one when `max_size` is given, then one per
/// aspect ratio other than 1 (`aspect_ratio` without near-duplicates, each
/// followed by its inverse when `flip`).
fn prior_halves(min: &[f64], max: &[f64], ratios: &[f64], flip: bool) -> (Vec<f64>, Vec<f64>) {
    let mut ars: Vec<f32> = vec![1.0];
    for &ar in ratios {
        let ar = ar as f32;
        if ars.iter().any(|&a| (ar - a).abs() < 1e-6) {
            continue;
        }
        ars.push(ar);
        if flip {
            ars.push(1.0 / ar);
        }
    }
    let (mut hw, mut hh) = (Vec::new(), Vec::new());
    for (s, &m) in min.iter().enumerate() {
        let m = m as f32 as i32;
        hw.push(f64::from(m) / 2.0);
        hh.push(f64::from(m) / 2.0);
        if let Some(&mx) = max.get(s) {
            let mx = mx as f32 as i32;
            let side = f64::from(m.saturating_mul(mx)).sqrt() as f32;
            hw.push(f64::from(side) / 2.0);
            hh.push(f64::from(side) / 2.0);
        }
        for &ar in &ars {
            if (f64::from(ar) - 1.0).abs() < 1e-6 {
                continue;
            }
            let r = ar.sqrt();
            hw.push(f64::from(m as f32 * r) / 2.0);
            hh.push(f64::from(m as f32 / r) / 2.0);
        }
    }
    (hw, hh)
}

impl Exporter<'_> {
    /// A float list parameter (empty when missing).
    fn floats_of(&self, n: &Node, key: &str) -> Vec<f64> {
        match n.attribute(key) {
            Some(Attribute::Float(v)) => vec![*v],
            Some(Attribute::Floats(v)) => v.clone(),
            Some(Attribute::Int(v)) => vec![*v as f64],
            Some(Attribute::Ints(v)) => v.iter().map(|&i| i as f64).collect(),
            Some(Attribute::Tensor(t)) => self
                .weights
                .weight(t)
                .and_then(|t| t.to_f64_vec())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Lowers `prior_box` (Caffe's SSD PriorBox) on the feature map (input
    /// 0) and the image (input 1, for its size unless `img_size` or
    /// `img_h`/`img_w` give it): `[1, 2, H * W * priors * 4]`, the boxes
    /// `(center -+ half size) / image size` per cell and prior (clipped to
    /// 0..1 when `clip`), then the variances.
    pub(crate) fn prior_box(&mut self, n: &Node, c: &Call) -> Result<()> {
        let feat = c.input(0)?;
        let min = self.floats_of(n, "min_size");
        let max = self.floats_of(n, "max_size");
        if min.is_empty() || min.len() > 64 || (!max.is_empty() && max.len() != min.len()) {
            return Err(Error::Invalid("min_size / max_size".into()));
        }
        let ratios = self.floats_of(n, "aspect_ratio");
        if ratios.len() > 64 || ratios.iter().any(|&r| r <= 0.0) {
            return Err(Error::Invalid("aspect_ratio".into()));
        }
        let flip = self.int(n, "flip", 1) != 0;
        let clip = self.int(n, "clip", 0) != 0;
        let mut var = self.floats_of(n, "variance");
        if var.is_empty() {
            var = vec![0.1];
        }
        if var.len() != 1 && var.len() != 4 {
            return Err(Error::Invalid(format!("{} variances", var.len())));
        }
        let offset = self.float(n, "offset", 0.5) as f32;
        let (hw, hh) = prior_halves(&min, &max, &ratios, flip);
        let p = hw.len() as i64;
        let axis = |a: i64| attr::int("axis", a);
        let fs = self.cx.op("Shape", &[feat], vec![]);
        let fs = self.cx.cast(&fs, DataType::Float);
        let part = |e: &mut Self, v: &str, k: i64| {
            let a = e.cx.ints(&[k]);
            let b = e.cx.ints(&[k + 1]);
            e.cx.op("Slice", &[v, &a, &b], vec![])
        };
        let (lh, lw) = (part(self, &fs, 2), part(self, &fs, 3));
        let has = |k: &str| n.attribute(k).is_some();
        let (ih, iw) = if has("img_h") || has("img_w") {
            let h = self.int(n, "img_h", 0) as f32;
            let w = self.int(n, "img_w", 0) as f32;
            (
                self.cx.floats("img_h", &[h], &[1]),
                self.cx.floats("img_w", &[w], &[1]),
            )
        } else if has("img_size") {
            let s = self.int(n, "img_size", 0) as f32;
            (
                self.cx.floats("img", &[s], &[1]),
                self.cx.floats("img", &[s], &[1]),
            )
        } else {
            let img = c.input(1)?;
            let is = self.cx.op("Shape", &[img], vec![]);
            let is = self.cx.cast(&is, DataType::Float);
            (part(self, &is, 2), part(self, &is, 3))
        };
        let (sh, sw) = if has("step_h") || has("step_w") {
            let h = self.int(n, "step_h", 0) as f32;
            let w = self.int(n, "step_w", 0) as f32;
            (
                self.cx.floats("step_h", &[h], &[1]),
                self.cx.floats("step_w", &[w], &[1]),
            )
        } else if has("step") {
            let s = self.float(n, "step", 0.0) as f32;
            (
                self.cx.floats("step", &[s], &[1]),
                self.cx.floats("step", &[s], &[1]),
            )
        } else {
            (
                self.cx.op("Div", &[&ih, &lh], vec![]),
                self.cx.op("Div", &[&iw, &lw], vec![]),
            )
        };
        // centers: (i + offset) * step along each axis
        let zero = self.cx.scalar(0.0);
        let one = self.cx.scalar(1.0);
        let empty = self.cx.ints(&[]);
        let centers = |e: &mut Self, len: &str, step: &str, shape: &[i64]| {
            let l = e.cx.op("Reshape", &[len, &empty], vec![]);
            let i = e.cx.op("Range", &[&zero, &l, &one], vec![]);
            let off = e.cx.scalar(offset);
            let i = e.cx.op("Add", &[&i, &off], vec![]);
            let c = e.cx.op("Mul", &[&i, step], vec![]);
            e.cx.reshape(&c, shape)
        };
        let cy = centers(self, &lh, &sh, &[-1, 1, 1]);
        let cx = centers(self, &lw, &sw, &[1, -1, 1]);
        let hw32: Vec<f32> = hw.iter().map(|&v| v as f32).collect();
        let hh32: Vec<f32> = hh.iter().map(|&v| v as f32).collect();
        let hwc = self.cx.floats("prior_half_w", &hw32, &[1, 1, p]);
        let hhc = self.cx.floats("prior_half_h", &hh32, &[1, 1, p]);
        let zy = self.cx.op("Mul", &[&cy, &zero], vec![]);
        let zx = self.cx.op("Mul", &[&cx, &zero], vec![]);
        let mut coords = Vec::new();
        for (ctr, half, img, other, sub) in [
            (&cx, &hwc, &iw, &zy, true),
            (&cy, &hhc, &ih, &zx, true),
            (&cx, &hwc, &iw, &zy, false),
            (&cy, &hhc, &ih, &zx, false),
        ] {
            let e = self
                .cx
                .op(if sub { "Sub" } else { "Add" }, &[ctr, half], vec![]);
            let e = self.cx.op("Div", &[&e, img], vec![]);
            let e = self.cx.op("Add", &[&e, other], vec![]);
            coords.push(self.cx.unsqueeze(&e, &[3]));
        }
        let refs: Vec<&str> = coords.iter().map(String::as_str).collect();
        let boxes = self.cx.op("Concat", &refs, vec![axis(3)]);
        let boxes = if clip {
            self.cx.op("Clip", &[&boxes, &zero, &one], vec![])
        } else {
            boxes
        };
        let v32: Vec<f32> = var.iter().map(|&v| v as f32).collect();
        let vdims = [1, 1, 1, v32.len() as i64];
        let vc = self.cx.floats("variance", &v32, &vdims);
        let bshape = self.cx.op("Shape", &[&boxes], vec![]);
        let vars = self.cx.op("Expand", &[&vc, &bshape], vec![]);
        let flat = [1, 1, -1];
        let b1 = self.cx.reshape(&boxes, &flat);
        let v1 = self.cx.reshape(&vars, &flat);
        self.cx
            .op_to("Concat", c.out, &[&b1, &v1], c.out, vec![axis(1)]);
        Ok(())
    }
}
