//! `space_to_batch4d` and `batch_to_space4d` (TensorFlow's operators on
//! NCHW): batch index `(ph * bw + pw) * N + n` for the cell `(ph, pw)` of
//! each `bh x bw` block.

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// `block_shape` (two values >= 1) and the `[2, 2]` parameter `key`
    /// (non-negative).
    fn block_params(&self, n: &Node, key: &str) -> Result<([i64; 2], [i64; 4])> {
        let b = self.need_ints(n, "block_shape", 2)?;
        let p = self.need_ints(n, key, 4)?;
        if b.iter().any(|&v| !(1..=1 << 16).contains(&v)) || p.iter().any(|&v| v < 0) {
            return Err(Error::Invalid(format!(
                "block_shape {b:?} or {key} {p:?} (blocks >= 1, {key} >= 0)"
            )));
        }
        Ok(([b[0], b[1]], [p[0], p[1], p[2], p[3]]))
    }

    /// Slice `[from, to)` of the 1-D `v`.
    fn part(&mut self, v: &str, from: i64, to: i64) -> String {
        let f = self.cx.ints(&[from]);
        let t = self.cx.ints(&[to]);
        self.cx.op("Slice", &[v, &f, &t], vec![])
    }

    /// Lowers `space_to_batch4d`: zero padding (`padding` `[[top, bottom],
    /// [left, right]]`), then each `block_shape` block spread over the
    /// batch.
    pub(crate) fn space_to_batch4d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let ([bh, bw], [pt, pb, pl, pr]) = self.block_params(n, "padding")?;
        let pads = self.cx.ints(&[0, 0, pt, pl, 0, 0, pb, pr]);
        let p = self.cx.op("Pad", &[c.input(0)?, &pads], vec![]);
        let s = self.cx.op("Shape", &[&p], vec![]);
        let nc = self.part(&s, 0, 2);
        let c1 = self.part(&s, 1, 2);
        let hw = self.part(&s, 2, 4);
        let blk = self.cx.ints(&[bh, bw]);
        let o = self.cx.op("Div", &[&hw, &blk], vec![]);
        let oh = self.part(&o, 0, 1);
        let ow = self.part(&o, 1, 2);
        let bh1 = self.cx.ints(&[bh]);
        let bw1 = self.cx.ints(&[bw]);
        let axis0 = || attr::int("axis", 0);
        let s6 = self
            .cx
            .op("Concat", &[&nc, &oh, &bh1, &ow, &bw1], vec![axis0()]);
        let r6 = self.cx.op("Reshape", &[&p, &s6], vec![]);
        let t = self.cx.op(
            "Transpose",
            &[&r6],
            vec![attr::ints("perm", &[3, 5, 0, 1, 2, 4])],
        );
        let m1 = self.cx.ints(&[-1]);
        let s4 = self.cx.op("Concat", &[&m1, &c1, &oh, &ow], vec![axis0()]);
        self.cx.op_to("Reshape", c.out, &[&t, &s4], c.out, vec![]);
        Ok(())
    }

    /// Lowers `batch_to_space4d`: the inverse, then `crop` `[[top,
    /// bottom], [left, right]]` cut off.
    pub(crate) fn batch_to_space4d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let ([bh, bw], [ct, cb, cl, cr]) = self.block_params(n, "crop")?;
        let x = c.input(0)?;
        let s = self.cx.op("Shape", &[x], vec![]);
        let c1 = self.part(&s, 1, 2);
        let h = self.part(&s, 2, 3);
        let w = self.part(&s, 3, 4);
        let blk = self.cx.ints(&[bh, bw, -1]);
        let axis0 = || attr::int("axis", 0);
        let s6 = self.cx.op("Concat", &[&blk, &c1, &h, &w], vec![axis0()]);
        let r6 = self.cx.op("Reshape", &[x, &s6], vec![]);
        let t = self.cx.op(
            "Transpose",
            &[&r6],
            vec![attr::ints("perm", &[2, 3, 4, 0, 5, 1])],
        );
        let hb = self.cx.ints(&[bh]);
        let wb = self.cx.ints(&[bw]);
        let oh = self.cx.op("Mul", &[&h, &hb], vec![]);
        let ow = self.cx.op("Mul", &[&w, &wb], vec![]);
        let m1 = self.cx.ints(&[-1]);
        let s4 = self.cx.op("Concat", &[&m1, &c1, &oh, &ow], vec![axis0()]);
        let full = self.cx.op("Reshape", &[&t, &s4], vec![]);
        let starts = self.cx.ints(&[ct, cl]);
        let ends_at = self.cx.op("Concat", &[&oh, &ow], vec![axis0()]);
        let cut = self.cx.ints(&[cb, cr]);
        let ends = self.cx.op("Sub", &[&ends_at, &cut], vec![]);
        let axes = self.cx.ints(&[2, 3]);
        self.cx.op_to(
            "Slice",
            c.out,
            &[&full, &starts, &ends, &axes],
            c.out,
            vec![],
        );
        Ok(())
    }
}
