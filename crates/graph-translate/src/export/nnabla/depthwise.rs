//! Depthwise deconvolution: `DepthwiseDeconvolution` (nnexp-a block).

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `DepthwiseDeconvolution(base_axis, pad, stride, dilation,
    /// divisor)`: a grouped `ConvTranspose`, `divisor` input channels to
    /// each output channel, the weight given its output-channel axis of 1.
    pub(crate) fn depthwise_deconvolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, w) = (c.input(0)?, c.input(1)?);
        let base = a_int(n, "base_axis", 1);
        if base != 1 {
            return Err(Error::Unsupported(format!(
                "DepthwiseDeconvolution function {:?}: base_axis {base} (only 1 is exported)",
                n.name
            )));
        }
        let wd = self.dims(w).unwrap_or_default();
        let div = a_int(n, "divisor", 1);
        let in_ch = wd.first().copied().unwrap_or(-1);
        if wd.len() < 2 || div < 1 || in_ch < 1 || in_ch % div != 0 {
            return Err(Error::Invalid(format!(
                "DepthwiseDeconvolution function {:?}: weight shape {wd:?} with divisor {div}",
                n.name
            )));
        }
        let k = wd.len() - 1;
        let fill = |v: Vec<i64>, d: i64| if v.is_empty() { vec![d; k] } else { v };
        let pad = fill(a_ints(n, "pad"), 0);
        let mut pads = pad.clone();
        pads.extend(&pad);
        let w4 = self.cx.unsqueeze(w, &[1]);
        let mut inputs = vec![x, w4.as_str()];
        if let Some(b) = c.ins.get(2) {
            inputs.push(b);
        }
        self.cx.op_to(
            "ConvTranspose",
            &n.name,
            &inputs,
            c.out,
            vec![
                attr::ints("pads", &pads),
                attr::ints("strides", &fill(a_ints(n, "stride"), 1)),
                attr::ints("dilations", &fill(a_ints(n, "dilation"), 1)),
                attr::int("group", in_ch / div),
            ],
        );
        Ok(())
    }
}
