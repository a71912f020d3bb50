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
