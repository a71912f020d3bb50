//! `NmsDetection2d`: non-maximum suppression of a detector's boxes
//! `(B, N, 5 + C)` (`x, y, w, h`, objectness, class probabilities), the
//! output of the same shape with the suppressed scores zeroed.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_float};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `NmsDetection2d(thresh, nms, nms_per_class)`. nnabla zeroes
    /// an objectness below `thresh`, then each class score `objectness *
    /// p` below `thresh`. With `nms_per_class` it suppresses greedily per
    /// class (a box overlapping a kept higher-scoring box by an IoU above
    /// `nms` loses that class's score): ONNX `NonMaxSuppression` with
    /// centre boxes, the selected boxes' scores kept through a `ScatterND`
    /// mask. Without, a box loses its objectness and every class score
    /// when any box of higher objectness (kept or not) overlaps it by an
    /// IoU above `nms`: a pairwise comparison of all boxes. Boxes of
    /// exactly equal score are the one difference: nnabla orders them by
    /// its unstable sort, the export by onnxruntime's order (per class)
    /// or as neither higher (by objectness).
    pub(crate) fn nms_detection2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "NmsDetection2d function {:?}: {what}",
                n.name
            )))
        };
        let d = self.dims(x).unwrap_or_default();
        let (nb, classes) = match d.as_slice() {
            [_, nb, ch] if *nb >= 1 && *ch > 5 => (*nb, *ch - 5),
            _ => return refuse(format!("input {d:?} (nnabla takes (B, N, 5 + classes))")),
        };
        let thresh = a_float(n, "thresh", 0.0) as f32;
        let nms = a_float(n, "nms", 0.0) as f32;
        let per_class = a_bool(n, "nms_per_class");
        if per_class && thresh <= 0.0 {
            return refuse(format!(
                "nms_per_class with thresh {thresh}: nnabla then also suppresses with \
                 negative scores, which ONNX NonMaxSuppression drops"
            ));
        }
        let ax2 = self.cx.ints(&[2]);
        let part = |e: &mut Self, lo: i64, hi: i64| {
            let s = e.cx.ints(&[lo]);
            let t = e.cx.ints(&[hi]);
            e.cx.op("Slice", &[x, &s, &t, &ax2], vec![])
        };
        let boxes = part(self, 0, 4);
        let obj = part(self, 4, 5);
        let probs = part(self, 5, 5 + classes);
        let th = self.cx.scalar(thresh);
        let zero = self.cx.scalar(0.0);
        let below = |e: &mut Self, v: &str| {
            let l = e.cx.op("Less", &[v, &th], vec![]);
            e.cx.op("Where", &[&l, &zero, v], vec![])
        };
        let obj_t = below(self, &obj);
        let sc = self.cx.op("Mul", &[&obj_t, &probs], vec![]);
        let sc_t = below(self, &sc);
        if per_class {
            // (B, C, N) scores, (K, 3) selected [batch, class, box]
            let scores = self
                .cx
                .op("Transpose", &[&sc_t], vec![attr::ints("perm", &[0, 2, 1])]);
            let maxb = self.cx.ints(&[nb]);
            let iou = self.cx.floats("nms_iou", &[nms], &[1]);
            let sth = self.cx.floats("nms_score", &[0.0], &[1]);
            let sel = self.cx.op(
                "NonMaxSuppression",
                &[&boxes, &scores, &maxb, &iou, &sth],
                vec![attr::int("center_point_box", 1)],
            );
            let shape_sel = self.cx.op("Shape", &[&sel], vec![]);
            let s0 = self.cx.ints(&[0]);
            let s1 = self.cx.ints(&[1]);
            let k = self.cx.op("Slice", &[&shape_sel, &s0, &s1], vec![]);
            let one = self.cx.scalar(1.0);
            let ones = self.cx.op("Expand", &[&one, &k], vec![]);
            let zeros = self.cx.op("Mul", &[&scores, &zero], vec![]);
            let mask = self.cx.op("ScatterND", &[&zeros, &sel, &ones], vec![]);
            let mask = self
                .cx
                .op("Transpose", &[&mask], vec![attr::ints("perm", &[0, 2, 1])]);
            let kept = self.cx.op("Mul", &[&sc_t, &mask], vec![]);
            self.cx.op_to(
                "Concat",
                &n.name,
                &[&boxes, &obj_t, &kept],
                c.out,
                vec![attr::int("axis", 2)],
            );
            return Ok(());
        }
        // pairwise: box i (axis 2) against box j (axis 1), as nnabla
        // computes the overlap: min(x1 + w1/2, x2 + w2/2) - max(x1 - w1/2,
        // x2 - w2/2)
        let two = self.cx.scalar(2.0);
        let coord = |e: &mut Self, k: i64| {
            let s = e.cx.ints(&[k]);
            let t = e.cx.ints(&[k + 1]);
            e.cx.op("Slice", &[&boxes, &s, &t, &ax2], vec![])
        };
        let (bx, by, bw, bh) = (
            coord(self, 0),
            coord(self, 1),
            coord(self, 2),
            coord(self, 3),
        );
        // (B, N, 1) as box j, (B, 1, N) as box i
        let as_i = |e: &mut Self, v: &str| {
            e.cx.op("Transpose", &[v], vec![attr::ints("perm", &[0, 2, 1])])
        };
        let overlap = |e: &mut Self, p: &str, len: &str| {
            let hl = e.cx.op("Div", &[len, &two], vec![]);
            let hi = e.cx.op("Add", &[p, &hl], vec![]);
            let lo = e.cx.op("Sub", &[p, &hl], vec![]);
            let (hi_i, lo_i) = (as_i(e, &hi), as_i(e, &lo));
            let mn = e.cx.op("Min", &[&hi_i, &hi], vec![]);
            let mx = e.cx.op("Max", &[&lo_i, &lo], vec![]);
            e.cx.op("Sub", &[&mn, &mx], vec![])
        };
        let ow = overlap(self, &bx, &bw);
        let oh = overlap(self, &by, &bh);
        let inter = self.cx.op("Mul", &[&ow, &oh], vec![]);
        let area = self.cx.op("Mul", &[&bw, &bh], vec![]);
        let area_i = as_i(self, &area);
        let sum = self.cx.op("Add", &[&area_i, &area], vec![]);
        let union = self.cx.op("Sub", &[&sum, &inter], vec![]);
        let iou = self.cx.op("Div", &[&inter, &union], vec![]);
        let wpos = self.cx.op("Greater", &[&ow, &zero], vec![]);
        let hpos = self.cx.op("Greater", &[&oh, &zero], vec![]);
        let both = self.cx.op("And", &[&wpos, &hpos], vec![]);
        let iou = self.cx.op("Where", &[&both, &iou, &zero], vec![]);
        let nt = self.cx.scalar(nms);
        let over = self.cx.op("Greater", &[&iou, &nt], vec![]);
        // box j scores higher than box i
        let obj_i = as_i(self, &obj_t);
        let higher = self.cx.op("Greater", &[&obj_t, &obj_i], vec![]);
        let hit = self.cx.op("And", &[&over, &higher], vec![]);
        let hit = self.cx.cast(&hit, DataType::Float);
        // (B, 1, N): suppressed when any j hits; back to (B, N, 1)
        let any = self.cx.reduce("ReduceMax", &hit, &[1], true);
        let any = as_i(self, &any);
        let gone = self.cx.op("Greater", &[&any, &zero], vec![]);
        let obj_k = self.cx.op("Where", &[&gone, &zero, &obj_t], vec![]);
        let sc_k = self.cx.op("Where", &[&gone, &zero, &sc_t], vec![]);
        self.cx.op_to(
            "Concat",
            &n.name,
            &[&boxes, &obj_k, &sc_k],
            c.out,
            vec![attr::int("axis", 2)],
        );
        Ok(())
    }
}
