//! Transposed convolution: `transpose_conv2d`.

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter, format_ok};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `transpose_conv2d` (NCHW, weights `[C_in, C_out, kh, kw]`):
    /// `ConvTranspose` whose output is `(x - 1) * stride + dilation * (k -
    /// 1) + 1 - pad_begin - pad_end` per spatial axis, as TenniS sizes it.
    pub(crate) fn transpose_conv2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        format_ok(n)?;
        let (x, w) = (c.input(0)?, c.input(1)?);
        let pad = self.need_ints(n, "padding", 8)?;
        let stride = self.need_ints(n, "stride", 4)?;
        let dil = self
            .ints(n, "dilation")
            .or_else(|| self.ints(n, "dialations"))
            .filter(|d| d.len() == 4)
            .ok_or_else(|| Error::Invalid("no dilation of 4 values".into()))?;
        if pad[..4].iter().any(|&p| p != 0) || stride[..2] != [1, 1] || dil[..2] != [1, 1] {
            return Err(Error::Invalid(
                "padding, stride or dilation on the batch or channel axis".into(),
            ));
        }
        if pad[4..].iter().any(|&p| p < 0) || stride[2..].iter().any(|&s| s < 1) {
            return Err(Error::Invalid(format!(
                "padding {pad:?} or stride {stride:?} (negative padding, stride < 1)"
            )));
        }
        if self.int(n, "kernel_packed", 0) != 0 {
            return Err(Error::Unsupported(
                "kernel_packed weights (TenniS's own packed layout)".into(),
            ));
        }
        let attrs = vec![
            attr::ints("pads", &[pad[4], pad[6], pad[5], pad[7]]),
            attr::ints("strides", &stride[2..]),
            attr::ints("dilations", &dil[2..]),
        ];
        self.cx.op_to("ConvTranspose", c.out, &[x, w], c.out, attrs);
        Ok(())
    }
}
