//! Depthwise convolution and deconvolution, and additive scatter:
//! `DepthwiseConvolution`, `DepthwiseDeconvolution` and `ScatterAdd`.

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::infer::per_axis;
use super::{Call, Exporter, a_int};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `DepthwiseDeconvolution(base_axis, pad, stride, dilation,
    /// divisor)`: a grouped `ConvTranspose`, `divisor` input channels to
    /// each output channel, the weight given its output-channel axis of 1.
    pub(crate) fn depthwise_deconvolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.depthwise(n, c, ("DepthwiseDeconvolution", "divisor", "ConvTranspose"))
    }

    /// Lowers `DepthwiseConvolution(base_axis, pad, stride, dilation,
    /// multiplier)`: a grouped `Conv` with one group per input channel, the
    /// weight given its input-channel axis of 1.
    pub(crate) fn depthwise_convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.depthwise(n, c, ("DepthwiseConvolution", "multiplier", "Conv"))
    }

    /// The depthwise function `what` (its channel ratio the attribute
    /// `ratio`) as the grouped ONNX operator `op`: the weight's first axis
    /// divided by the ratio the groups, the weight given a second axis of 1.
    fn depthwise(
        &mut self,
        n: &Node,
        c: &Call,
        (what, ratio, op): (&str, &str, &str),
    ) -> Result<()> {
        let (x, w) = (c.input(0)?, c.input(1)?);
        let base = a_int(n, "base_axis", 1);
        if base != 1 {
            return Err(Error::Unsupported(format!(
                "{what} function {:?}: base_axis {base} (only 1 is exported)",
                n.name
            )));
        }
        let wd = self.dims(w).unwrap_or_default();
        let div = a_int(n, ratio, 1);
        let ch = wd.first().copied().unwrap_or(-1);
        if wd.len() < 2 || div < 1 || ch < 1 || ch % div != 0 {
            return Err(Error::Invalid(format!(
                "{what} function {:?}: weight shape {wd:?} with {ratio} {div}",
                n.name
            )));
        }
        let k = wd.len() - 1;
        let pad = per_axis(n, "pad", k, |_| 0)?;
        let mut pads = pad.clone();
        pads.extend(&pad);
        let w4 = self.cx.unsqueeze(w, &[1]);
        let mut inputs = vec![x, w4.as_str()];
        if let Some(b) = c.ins.get(2) {
            inputs.push(b);
        }
        self.cx.op_to(
            op,
            &n.name,
            &inputs,
            c.out,
            vec![
                attr::ints("pads", &pads),
                attr::ints("strides", &per_axis(n, "stride", k, |_| 1)?),
                attr::ints("dilations", &per_axis(n, "dilation", k, |_| 1)?),
                attr::int("group", ch / div),
            ],
        );
        Ok(())
    }

    /// Lowers `ScatterAdd(x0, indices, x1, axis)`: `x1` added into `x0` at
    /// `indices` along `axis`. Operator sets before 16 have no adding
    /// scatter, so each value is matched against every output position
    /// (`Equal` with a range), summed over `axis` and added to `x0`.
    pub(crate) fn scatter_add(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x0, idx, x1) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let t = self.dims(x0).unwrap_or_default();
        let s = self.dims(idx).unwrap_or_default();
        let r = t.len();
        let axis = a_int(n, "axis", 0);
        let a = if axis < 0 { axis + r as i64 } else { axis };
        let ok = r > 0
            && s.len() == r
            && (0..r as i64).contains(&a)
            && t.iter()
                .zip(&s)
                .enumerate()
                .all(|(d, (&td, &sd))| td >= 1 && sd >= 1 && (d as i64 == a || td == sd))
            && t[a as usize] <= 1 << 20;
        if !ok {
            return Err(Error::Unsupported(format!(
                "ScatterAdd function {:?}: x0 {t:?}, indices {s:?}, axis {axis} (known \
                 shapes equal off the axis are exported)",
                n.name
            )));
        }
        let a = a as usize;
        let len = t[a];
        let ri = r as i64;
        let iu = self.cx.unsqueeze(idx, &[ri]);
        let range: Vec<f32> = (0..len).map(|v| v as f32).collect();
        let range = self.cx.floats("scatter_range", &range, &[len]);
        let hit = self.cx.op("Equal", &[&iu, &range], vec![]);
        let xu = self.cx.unsqueeze(x1, &[ri]);
        let zero = self.cx.scalar(0.0);
        let placed = self.cx.op("Where", &[&hit, &xu, &zero], vec![]);
        let summed = self.cx.reduce("ReduceSum", &placed, &[a as i64], false);
        // the positions' axis is last: move it back to `axis`
        let mut perm: Vec<i64> = (0..ri - 1).collect();
        perm.insert(a, ri - 1);
        let moved = self
            .cx
            .op("Transpose", &[&summed], vec![attr::ints("perm", &perm)]);
        self.cx.op_to("Add", &n.name, &[x0, &moved], c.out, vec![]);
        Ok(())
    }
}
