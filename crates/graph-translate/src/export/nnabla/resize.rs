//! `Interpolate`: ONNX `Resize` to the output size, the coordinate mapping
//! chosen to match nnabla's (checked case by case against nnabla 1.39);
//! `ONNXResize`: ONNX `Resize` with the same attributes.

use onnx_format::builder::attr;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_float, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `Interpolate(x)` to `Resize` with `sizes`: the leading axes
    /// of `x` kept, the last `len(output_size)` set to `output_size`.
    /// `linear`: `align_corners` → ONNX `align_corners`, `half_pixel` →
    /// `half_pixel`, else `asymmetric`. `nearest`: `asymmetric` with
    /// `floor`, or (`half_pixel` and `half_pixel_for_nn`) `half_pixel` with
    /// `round_prefer_ceil`, i.e. `floor((i + 0.5) * in / out)`.
    pub(crate) fn interpolate(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let refuse = |what: &str| {
            Err(Error::Unsupported(format!(
                "Interpolate {}: {what} is not exported",
                n.name
            )))
        };
        if a_bool(n, "channel_last") {
            return refuse("channel_last (the channels on the last axis)");
        }
        let size = a_ints(n, "output_size");
        if size.is_empty() || size.iter().any(|&s| s < 1) {
            return refuse(&format!("output_size {size:?}"));
        }
        let rank = self.rank(n, x)?;
        let lead = match rank.checked_sub(size.len()) {
            Some(l) => l,
            None => {
                return refuse(&format!(
                    "output_size {size:?} longer than the input's rank"
                ));
            }
        };
        let mode = n
            .attribute("mode")
            .and_then(Attribute::as_str)
            .unwrap_or("linear");
        let ac = a_bool(n, "align_corners");
        let hp = a_bool(n, "half_pixel");
        let hpnn = a_bool(n, "half_pixel_for_nn");
        let mut attrs = Vec::new();
        match mode {
            "linear" => {
                let ctm = match (ac, hp) {
                    (false, false) => "asymmetric",
                    (true, false) => "align_corners",
                    (false, true) => "half_pixel",
                    (true, true) => return refuse("align_corners together with half_pixel"),
                };
                attrs.push(attr::string("mode", "linear"));
                attrs.push(attr::string("coordinate_transformation_mode", ctm));
            }
            "nearest" => {
                let (ctm, nm) = match (ac, hp, hpnn) {
                    (false, false, false) => ("asymmetric", "floor"),
                    (false, true, true) => ("half_pixel", "round_prefer_ceil"),
                    _ => {
                        return refuse(
                            "mode nearest with align_corners, or half_pixel without \
                             half_pixel_for_nn (their coordinate mapping is not verified)",
                        );
                    }
                };
                attrs.push(attr::string("mode", "nearest"));
                attrs.push(attr::string("coordinate_transformation_mode", ctm));
                attrs.push(attr::string("nearest_mode", nm));
            }
            other => return refuse(&format!("mode {other:?}")),
        }
        let lead = i64::try_from(lead).unwrap_or(i64::MAX);
        let shape = self.cx.op("Shape", &[x], vec![]);
        let (s0, s1, ax) = (
            self.cx.ints(&[0]),
            self.cx.ints(&[lead]),
            self.cx.ints(&[0]),
        );
        let kept = self.cx.op("Slice", &[&shape, &s0, &s1, &ax], vec![]);
        let tail = self.cx.ints(&size);
        let sizes = self
            .cx
            .op("Concat", &[&kept, &tail], vec![attr::int("axis", 0)]);
        self.cx
            .op_to("Resize", &n.name, &[x, "", "", &sizes], c.out, attrs);
        Ok(())
    }

    /// Lowers `ONNXResize(x)`: ONNX `Resize` with nnabla's attributes and
    /// `scales` or `sizes` as constants.
    pub(crate) fn onnx_resize(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "ONNXResize {}: {what} is not exported",
                n.name
            )))
        };
        let text = |k: &str, d: &'static str| -> String {
            n.attribute(k)
                .and_then(Attribute::as_str)
                .unwrap_or(d)
                .to_string()
        };
        let ctm = text("coordinate_transformation_mode", "half_pixel");
        if ctm == "tf_crop_and_resize" {
            return refuse("coordinate_transformation_mode tf_crop_and_resize (with roi)".into());
        }
        let scales: Vec<f32> = match n.attribute("scales") {
            Some(Attribute::Floats(v)) => v.iter().map(|&f| f as f32).collect(),
            Some(Attribute::Float(f)) => vec![*f as f32],
            _ => Vec::new(),
        };
        let sizes = a_ints(n, "sizes");
        let rank = self.rank(n, x)?;
        let (s, z) = match (scales.is_empty(), sizes.is_empty()) {
            (false, true) if scales.len() == rank => {
                let dims = [i64::try_from(rank).unwrap_or(i64::MAX)];
                (self.cx.floats("scales", &scales, &dims), String::new())
            }
            (true, false) if sizes.len() == rank && sizes.iter().all(|&v| v >= 1) => {
                (String::new(), self.cx.ints(&sizes))
            }
            _ => {
                return refuse(format!(
                    "scales {scales:?} with sizes {sizes:?} (one of them, one value per axis of \
                     the {rank}-D input)"
                ));
            }
        };
        let attrs = vec![
            attr::string("mode", &text("mode", "nearest")),
            attr::string("coordinate_transformation_mode", &ctm),
            attr::float("cubic_coeff_a", a_float(n, "cubic_coeff_a", -0.75) as f32),
            attr::int("exclude_outside", a_int(n, "exclude_outside", 0)),
            attr::float(
                "extrapolation_value",
                a_float(n, "extrapolation_value", 0.0) as f32,
            ),
            attr::string("nearest_mode", &text("nearest_mode", "round_prefer_floor")),
        ];
        if z.is_empty() {
            self.cx.op_to("Resize", &n.name, &[x, "", &s], c.out, attrs);
        } else {
            self.cx
                .op_to("Resize", &n.name, &[x, "", "", &z], c.out, attrs);
        }
        Ok(())
    }
}
