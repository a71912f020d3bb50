//! Transposed convolution (`transpose_conv2d`) and the convolutions whose
//! padding is an input (`conv2d_v2`, `depthwise_conv2d_v2`) or that TenniS
//! computes by Winograd's method (`conv2d_winograd`, `conv2d_winograd_v2`).

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

    /// Lowers `conv2d_v2`.
    pub(crate) fn conv2d_v2(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.conv2d_v2_grouped(n, c, Grouping::Dense)
    }

    /// Lowers `depthwise_conv2d_v2`.
    pub(crate) fn depthwise_conv2d_v2(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.conv2d_v2_grouped(n, c, Grouping::Depthwise)
    }

    /// Lowers `conv2d_v2` and `depthwise_conv2d_v2` (inputs x, padding
    /// `[4, 2]`, weights): as `conv2d` and `depthwise_conv2d`, the padding
    /// a constant of the module.
    fn conv2d_v2_grouped(&mut self, n: &Node, c: &Call, g: Grouping) -> Result<()> {
        format_ok(n)?;
        let (x, p, w) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let pad = self.const_ints(p).filter(|v| v.len() == 8).ok_or_else(|| {
            Error::Unsupported(
                "a padding computed at run time (the export needs it as a constant [4, 2])".into(),
            )
        })?;
        if pad[..4].iter().any(|&v| v != 0) {
            return Err(Error::Invalid(format!(
                "padding {pad:?} on the batch or channel axis"
            )));
        }
        let stride = self.need_ints(n, "stride", 4)?;
        let dil = self
            .ints(n, "dilation")
            .or_else(|| self.ints(n, "dialations"))
            .filter(|d| d.len() == 4)
            .unwrap_or(vec![1; 4]);
        if self.float(n, "padding_value", 0.0) != 0.0 {
            return Err(Error::Unsupported("a non-zero padding_value".into()));
        }
        if self.int(n, "kernel_packed", 0) != 0 {
            return Err(Error::Unsupported(
                "kernel_packed weights (TenniS's own packed layout)".into(),
            ));
        }
        self.conv_node(c, x, w, &pad, &stride, &dil, g)
    }

    /// The ONNX `Conv` of a TenniS convolution whose padding (`[4, 2]`,
    /// flattened), stride and dilation (NCHW) are known: depthwise weights
    /// `[1, C, kh, kw]` become `[C, 1, kh, kw]`, one group per channel.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn conv_node(
        &mut self,
        c: &Call,
        x: &str,
        w: &str,
        pad: &[i64],
        stride: &[i64],
        dil: &[i64],
        g: Grouping,
    ) -> Result<()> {
        let mut attrs = vec![
            attr::ints("pads", &[pad[4], pad[6], pad[5], pad[7]]),
            attr::ints("strides", &stride[2..]),
            attr::ints("dilations", &dil[2..]),
        ];
        let w = match g {
            Grouping::Depthwise => {
                let d = self.const_dims(w).filter(|d| d.len() == 4).ok_or_else(|| {
                    Error::Unsupported("depthwise weights that are not a 4-D constant".into())
                })?;
                if d[0] != 1 {
                    return Err(Error::Unsupported(
                        "a depthwise multiplier other than 1".into(),
                    ));
                }
                let ch = i64::try_from(d[1]).map_err(|_| Error::Invalid("channels".into()))?;
                let kh = i64::try_from(d[2]).map_err(|_| Error::Invalid("kernel".into()))?;
                let kw = i64::try_from(d[3]).map_err(|_| Error::Invalid("kernel".into()))?;
                attrs.push(attr::int("group", ch));
                self.cx.reshape(w, &[ch, 1, kh, kw])
            }
            Grouping::Dense => w.to_string(),
        };
        self.cx.op_to("Conv", c.out, &[x, &w], c.out, attrs);
        Ok(())
    }

    /// Lowers `conv2d_winograd` (padding a parameter).
    pub(crate) fn conv2d_winograd(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.winograd(n, c, PaddingFrom::Parameter)
    }

    /// Lowers `conv2d_winograd_v2` (padding input 1, weights input 2).
    pub(crate) fn conv2d_winograd_v2(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.winograd(n, c, PaddingFrom::Input)
    }

    /// Lowers `conv2d_winograd` and `conv2d_winograd_v2`: a 3x3, stride-1
    /// convolution. TenniS's CPU kernel transforms the 3x3 weights itself
    /// on its first run (whatever `kernel_winograd_transformed` says);
    /// weights of another size are refused.
    fn winograd(&mut self, n: &Node, c: &Call, from: PaddingFrom) -> Result<()> {
        format_ok(n)?;
        let x = c.input(0)?;
        let (w, pad) = match from {
            PaddingFrom::Parameter => (c.input(1)?, self.need_ints(n, "padding", 8)?),
            PaddingFrom::Input => {
                let w = c.input(2)?;
                let pad = self
                    .const_ints(c.input(1)?)
                    .filter(|v| v.len() == 8)
                    .ok_or_else(|| {
                        Error::Unsupported(
                            "a padding computed at run time (the export needs it as a constant [4, 2])"
                                .into(),
                        )
                    })?;
                (w, pad)
            }
        };
        if pad[..4].iter().any(|&v| v != 0) {
            return Err(Error::Invalid(format!(
                "padding {pad:?} on the batch or channel axis"
            )));
        }
        if self.float(n, "padding_value", 0.0) != 0.0 {
            return Err(Error::Unsupported("a non-zero padding_value".into()));
        }
        let d = self
            .const_dims(w)
            .filter(|d| d.len() == 4)
            .ok_or_else(|| Error::Unsupported("weights that are not a 4-D constant".into()))?;
        if d[2..] != [3, 3] {
            return Err(Error::Unsupported(format!(
                "weights of {}x{} (TenniS's Winograd convolution takes 3x3 weights)",
                d[2], d[3]
            )));
        }
        let attrs = vec![
            attr::ints("pads", &[pad[4], pad[6], pad[5], pad[7]]),
            attr::ints("strides", &[1, 1]),
        ];
        self.cx.op_to("Conv", c.out, &[x, w], c.out, attrs);
        Ok(())
    }
}

/// The weights of a convolution: one group, or one group per channel
/// (TenniS's depthwise weights `[1, C, kh, kw]`).
#[derive(Clone, Copy)]
pub(super) enum Grouping {
    /// `conv2d`, `conv2d_v2`.
    Dense,
    /// `depthwise_conv2d`, `depthwise_conv2d_v2`.
    Depthwise,
}

/// Where a Winograd convolution takes its padding from.
#[derive(Clone, Copy)]
enum PaddingFrom {
    /// The `padding` parameter (`conv2d_winograd`).
    Parameter,
    /// Input 1, a constant (`conv2d_winograd_v2`, weights input 2).
    Input,
}
