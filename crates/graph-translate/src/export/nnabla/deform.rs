//! Convolutions with sampling positions or kernels given per pixel:
//! `DeformableConvolution` (ONNX `DeformConv`, opset 19) and
//! `AdaptiveSeparableConvolution` (slices, products and sums).

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_int, a_ints, sizes_known};
use crate::export::{Error, Result};

/// The most kernel rows an `AdaptiveSeparableConvolution` is unrolled to.
const MAX_TAPS: i64 = 1024;

impl Exporter<'_> {
    /// Lowers `DeformableConvolution(base_axis, pad, stride, dilation,
    /// group, deformable_group)` of `(x, weight, offset[, mask][, bias])`
    /// to `DeformConv`. nnabla samples as ONNX does (bilinear, zero outside
    /// the image, offsets `(dy, dx)` per kernel tap, `mask` multiplied),
    /// but reads the offsets and the mask of output pixel `(h, w)` at
    /// `(h * stride_h, w * stride_w)` of maps as large as the input, where
    /// ONNX reads maps as large as the output at `(h, w)`: the maps are
    /// sliced with the stride to the output size first.
    pub(crate) fn deformable_convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "DeformableConvolution function {:?}: {what}",
                n.name
            )))
        };
        let (x, w, off) = (c.input(0)?, c.input(1)?, c.input(2)?);
        if a_bool(n, "channel_last") {
            return refuse(
                "channel_last (nnabla 1.39 itself computes DeformableConvolution only with \
                 the channels first)"
                    .into(),
            );
        }
        let base = a_int(n, "base_axis", 1);
        if base != 1 {
            return refuse(format!("base_axis {base} (only 1 is exported)"));
        }
        let xd = self.dims(x).unwrap_or_default();
        let wd = self.dims(w).unwrap_or_default();
        let (hh, ww, kh, kw) = match (xd.as_slice(), wd.as_slice()) {
            ([_, _, h, w], [_, _, kh, kw]) if sizes_known(&[*h, *w, *kh, *kw]) => {
                (*h, *w, *kh, *kw)
            }
            _ => {
                return refuse(format!(
                    "input {xd:?} and weight {wd:?} (nnabla computes only 2-D deformable \
                     convolutions of known size)"
                ));
            }
        };
        let two = |k: &str, d: i64| {
            let v = a_ints(n, k);
            if v.is_empty() { vec![d, d] } else { v }
        };
        let (pad, stride, dil) = (two("pad", 0), two("stride", 1), two("dilation", 1));
        if pad.len() != 2 || stride.len() != 2 || dil.len() != 2 {
            return refuse(format!(
                "pad {pad:?}, stride {stride:?}, dilation {dil:?} (two values each)"
            ));
        }
        if stride.iter().chain(&dil).any(|&v| !(1..=4096).contains(&v))
            || pad.iter().any(|&v| !(0..=4096).contains(&v))
        {
            return refuse(format!("pad {pad:?}, stride {stride:?}, dilation {dil:?}"));
        }
        let out =
            |len: i64, k: i64, p: i64, s: i64, d: i64| (len + 2 * p - d * (k - 1) - 1) / s + 1;
        let (oh, ow) = (
            out(hh, kh, pad[0], stride[0], dil[0]),
            out(ww, kw, pad[1], stride[1], dil[1]),
        );
        if oh < 1 || ow < 1 {
            return refuse(format!("no output pixel (input {xd:?}, weight {wd:?})"));
        }
        // nnabla reads the maps at (h * stride, w * stride): past their end
        // when padding makes the output larger than the input
        let (eh, ew) = ((oh - 1) * stride[0] + 1, (ow - 1) * stride[1] + 1);
        if eh > hh || ew > ww {
            return refuse(format!(
                "the padding {pad:?} makes nnabla read its offsets past the end of the \
                 {hh}x{ww} offset map (its result there is undefined)"
            ));
        }
        let (mask, bias) = match c.ins.len() {
            3 => (None, None),
            4 => {
                let is_bias = self.rank(n, c.ins[3])? == 1;
                if is_bias {
                    (None, Some(c.ins[3]))
                } else {
                    (Some(c.ins[3]), None)
                }
            }
            5 => (Some(c.ins[3]), Some(c.ins[4])),
            k => return refuse(format!("{k} inputs")),
        };
        let starts = self.cx.ints(&[0, 0]);
        let ends = self.cx.ints(&[eh, ew]);
        let axes = self.cx.ints(&[2, 3]);
        let steps = self.cx.ints(&stride);
        let mut slice = |v: &str| {
            self.cx
                .op("Slice", &[v, &starts, &ends, &axes, &steps], vec![])
        };
        let off_s = slice(off);
        let mask_s = mask.map(&mut slice);
        let mut ins: Vec<&str> = vec![x, w, &off_s];
        if let Some(b) = bias {
            ins.push(b);
        } else if mask_s.is_some() {
            ins.push("");
        }
        if let Some(m) = &mask_s {
            ins.push(m);
        }
        let mut pads = pad.clone();
        pads.extend(&pad);
        self.cx.op_to(
            "DeformConv",
            &n.name,
            &ins,
            c.out,
            vec![
                attr::ints("kernel_shape", &[kh, kw]),
                attr::ints("pads", &pads),
                attr::ints("strides", &stride),
                attr::ints("dilations", &dil),
                attr::int("group", a_int(n, "group", 1)),
                attr::int("offset_group", a_int(n, "deformable_group", 1)),
            ],
        );
        Ok(())
    }

    /// Lowers `AdaptiveSeparableConvolution(x, kv, kh)`: nnabla computes
    /// `y[b, c, h, w] = sum_{j, i} kv[b, j, h, w] kh[b, i, h, w] x[b, c,
    /// h + j, w + i]`. The `Kh` column shifts of `x` are stacked on a new
    /// axis; for each row shift `j` those rows are weighted by `kh` and
    /// summed over the column shifts, then weighted by `kv[:, j]` and
    /// added up.
    pub(crate) fn adaptive_separable_convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, kv, kh) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "AdaptiveSeparableConvolution function {:?}: {what}",
                n.name
            )))
        };
        let xd = self.dims(x).unwrap_or_default();
        let vd = self.dims(kv).unwrap_or_default();
        let hd = self.dims(kh).unwrap_or_default();
        let (h, w, nv, nh) = match (xd.as_slice(), vd.as_slice(), hd.as_slice()) {
            ([_, _, h, w], [_, nv, _, _], [_, nh, _, _])
                if sizes_known(&[*h, *w, vd[2], vd[3], hd[2], hd[3]]) =>
            {
                (*h, *w, *nv, *nh)
            }
            _ => {
                return refuse(format!(
                    "inputs {xd:?}, {vd:?}, {hd:?} (nnabla needs 4-D inputs of known size)"
                ));
            }
        };
        if !(1..=MAX_TAPS).contains(&nv) || !(1..=MAX_TAPS).contains(&nh) {
            return refuse(format!(
                "{nv}x{nh} kernel taps (at most {MAX_TAPS} each are exported)"
            ));
        }
        let (oh, ow) = (h - nv + 1, w - nh + 1);
        if oh < 1 || ow < 1 || vd[2] < oh || vd[3] < ow || hd[2] < oh || hd[3] < ow {
            return refuse(format!(
                "inputs {xd:?}, {vd:?}, {hd:?} give no consistent output size"
            ));
        }
        let hw = self.cx.ints(&[2, 3]);
        let zero2 = self.cx.ints(&[0, 0]);
        let ohw = self.cx.ints(&[oh, ow]);
        // the kernels at the output pixels
        let kv_s = self.cx.op("Slice", &[kv, &zero2, &ohw, &hw], vec![]);
        let kh_s = self.cx.op("Slice", &[kh, &zero2, &ohw, &hw], vec![]);
        // (B, 1, Kh, oH, oW)
        let kh5 = self.cx.unsqueeze(&kh_s, &[1]);
        // the column shifts: (B, C, Kh, H, oW)
        let ax3 = self.cx.ints(&[3]);
        let mut cols = Vec::new();
        for i in 0..nh {
            let s = self.cx.ints(&[i]);
            let e = self.cx.ints(&[i + ow]);
            let sl = self.cx.op("Slice", &[x, &s, &e, &ax3], vec![]);
            cols.push(self.cx.unsqueeze(&sl, &[2]));
        }
        let stacked = if cols.len() == 1 {
            cols.remove(0)
        } else {
            let r: Vec<&str> = cols.iter().map(String::as_str).collect();
            self.cx.op("Concat", &r, vec![attr::int("axis", 2)])
        };
        let ax1 = self.cx.ints(&[1]);
        let ax_rows = self.cx.ints(&[3]);
        let mut acc: Option<String> = None;
        for j in 0..nv {
            let s = self.cx.ints(&[j]);
            let e = self.cx.ints(&[j + oh]);
            let rows = self.cx.op("Slice", &[&stacked, &s, &e, &ax_rows], vec![]);
            let m = self.cx.op("Mul", &[&rows, &kh5], vec![]);
            // (B, C, oH, oW)
            let t = self.cx.reduce("ReduceSum", &m, &[2], false);
            let e1 = self.cx.ints(&[j + 1]);
            let kvj = self.cx.op("Slice", &[&kv_s, &s, &e1, &ax1], vec![]);
            let last = j + 1 == nv;
            match acc.take() {
                None if last => {
                    self.cx.op_to("Mul", &n.name, &[&t, &kvj], c.out, vec![]);
                }
                None => acc = Some(self.cx.op("Mul", &[&t, &kvj], vec![])),
                Some(a) => {
                    let p = self.cx.op("Mul", &[&t, &kvj], vec![]);
                    if last {
                        self.cx.op_to("Add", &n.name, &[&a, &p], c.out, vec![]);
                    } else {
                        acc = Some(self.cx.op("Add", &[&a, &p], vec![]));
                    }
                }
            }
        }
        Ok(())
    }
}
