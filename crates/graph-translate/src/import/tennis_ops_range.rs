//! ONNX → TenniS: `Range` whose inputs are computed at run time (a
//! constant `Range` is folded at import), and the `NonMaxSuppression`
//! pattern the TenniS export writes for `non_max_suppression_v3`.

use std::collections::{HashMap, HashSet};

use super::LowerError;
use super::onnx_graph::{Node, OnnxGraph, elem};
use super::tennis_cx::{Lowered, Tx, kv, p_float, p_int, p_str, ts_code};

/// Lowers `Range(start, limit, delta)` with run-time inputs. TenniS's
/// `range` counts `trunc((limit - start) / delta)`, one more when
/// `start + steps * delta < limit`, which is not ONNX's count for a
/// negative `delta` (5, 0, -2: TenniS 2, ONNX 3); so the count is computed
/// as ONNX's `max(ceil((limit - start) / delta), 0)` (the difference in
/// the inputs' type, the quotient in f64 as onnxruntime does), TenniS
/// counts `range(0, count, 1)` in int32, and the values are ONNX's
/// `start + i * delta` in the inputs' type.
pub(crate) fn range(cx: &mut Tx, node: &Node) -> Lowered {
    let o = super::tennis_cx::out(node)?.to_string();
    let (s, e) = cx.tin(node, 0)?;
    let (l, el) = cx.tin(node, 1)?;
    let (d, ed) = cx.tin(node, 2)?;
    if el != e || ed != e {
        return Err("start, limit and delta of different element types".into());
    }
    if !matches!(
        e,
        elem::FLOAT | elem::DOUBLE | elem::INT32 | elem::INT64 | 5 /* INT16 */
    ) {
        return Err(LowerError::ElemType {
            elem: e,
            what: "inputs",
            why: "ONNX Range takes f32, f64, int16, int32, int64",
        });
    }
    for i in 0..3 {
        if !cx.in_shape(node, i)?.iter().all(|&d| d == 1) {
            return Err(LowerError::Other(format!("input {i} is not a scalar")));
        }
    }
    let code = ts_code(e).ok_or("no TenniS type")?;
    let cast = |cx: &mut Tx, x, to: i32, e_to: i32| {
        cx.tmp_e(
            "_cast",
            &o,
            &[x],
            vec![kv("dtype", p_int(i64::from(to)))],
            &[],
            e_to,
        )
    };
    let span = cx.tmp_e("sub", &o, &[l, s], vec![], &[], e)?;
    let (span, dd) = if e == elem::DOUBLE {
        (span, d)
    } else {
        (
            cast(cx, span, 11, elem::DOUBLE)?,
            cast(cx, d, 11, elem::DOUBLE)?,
        )
    };
    let q = cx.tmp_e("div", &o, &[span, dd], vec![], &[], elem::DOUBLE)?;
    let q = cx.tmp_e("ceil", &o, &[q], vec![], &[], elem::DOUBLE)?;
    let n = cast(cx, q, 5, elem::INT32)?;
    let zero = cx.const_i32(&o, &[], &[0])?;
    let one = cx.const_i32(&o, &[], &[1])?;
    let n = cx.tmp_e("maximum", &o, &[n, zero], vec![], &[], elem::INT32)?;
    let i = cx.tmp_e("range", &o, &[zero, n, one], vec![], &[-1], elem::INT32)?;
    let i = if e == elem::INT32 {
        i
    } else {
        cast(cx, i, code, e)?
    };
    let id = cx.tmp_e("mul", &o, &[i, d], vec![], &[-1], e)?;
    cx.emit_e("add", &o, &[id, s], vec![], &[-1], e)?;
    Ok(())
}

/// The `NonMaxSuppression` of the TenniS export's `non_max_suppression_v3`
/// pattern, imported back as that operator.
pub(crate) struct NmsV3 {
    /// The boxes `[n, 4]` (two corners) and the scores `[n]`.
    pub boxes: String,
    /// The scores.
    pub scores: String,
    /// The value the pattern computes (the padded int32 indices).
    pub out: String,
    max: i64,
    iou: f32,
    score: f32,
    /// Indices (in `g.nodes`) of the pattern's nodes.
    pub nodes: Vec<usize>,
}

/// Finds, for every `NonMaxSuppression` of `g` (by node index), the
/// export's pattern around it: `Unsqueeze(boxes [n, 4], [0])`,
/// `Unsqueeze(scores [n], [0, 1])`, `NonMaxSuppression` (corners,
/// constant `max_output_size` `[m]`, `iou_threshold`, `score_threshold`),
/// `Gather(axis 1, [2])`, `Reshape([-1])`, `Cast(INT32)`, and `Pad` with
/// `-1` by `Concat([0], Sub([m], Shape(·)))`: the box indices of one
/// class of one batch, highest score first, padded with -1 to `m`, which
/// is TenniS's `non_max_suppression_v3` (`xyxy`). Every intermediate
/// value must be used by the pattern alone; anything else is no match.
pub(crate) fn nms_v3_patterns(g: &OnnxGraph) -> HashMap<usize, NmsV3> {
    let mut users: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (k, n) in g.nodes.iter().enumerate() {
        for i in n.inputs.iter().filter(|s| !s.is_empty()) {
            users.entry(i.as_str()).or_default().push(k);
        }
        for o in &n.outputs {
            producer.insert(o.as_str(), k);
        }
    }
    let outputs: HashSet<&str> = g.outputs.iter().map(String::as_str).collect();
    let mut found = HashMap::new();
    for (k, n) in g.nodes.iter().enumerate() {
        if n.op != "NonMaxSuppression" {
            continue;
        }
        if let Some(m) = nms_v3_at(g, k, &users, &producer, &outputs) {
            found.insert(k, m);
        }
    }
    found
}

fn nms_v3_at(
    g: &OnnxGraph,
    k: usize,
    users: &HashMap<&str, Vec<usize>>,
    producer: &HashMap<&str, usize>,
    outputs: &HashSet<&str>,
) -> Option<NmsV3> {
    let n = &g.nodes[k];
    let konst = |v: &str| g.consts.get(v);
    // the one node that uses value `v` (not a graph output), with op `op`
    // and one output
    let only_user = |v: &str, op: &str| -> Option<usize> {
        let u = users.get(v)?;
        let n = g.nodes.get(*u.first()?)?;
        (u.len() == 1 && n.op == op && n.outputs.len() == 1 && !outputs.contains(v)).then_some(u[0])
    };
    let ints_of = |v: &str| konst(v).filter(|c| c.elem == elem::INT64)?.ints();
    let plain = |n: &Node| n.domain.is_empty() || n.domain == "ai.onnx";
    if n.inputs.len() != 5 || n.outputs.len() != 1 || n.int("center_point_box", 0) != 0 {
        return None;
    }
    // the unsqueezed boxes and scores, each used by this node alone
    let unsq = |v: &str, axes: &[i64]| -> Option<(usize, String)> {
        let p = *producer.get(v)?;
        let u = &g.nodes[p];
        if u.op != "Unsqueeze"
            || u.inputs.is_empty()
            || only_user(v, "NonMaxSuppression")? != k
            || !plain(u)
        {
            return None;
        }
        let a = if g.opset >= 13 {
            (u.inputs.len() == 2).then(|| ints_of(&u.inputs[1]))??
        } else {
            u.ints("axes")?
        };
        (a == axes).then(|| (p, u.inputs[0].clone()))
    };
    let (ub, boxes) = unsq(&n.inputs[0], &[0])?;
    let (us, scores) = unsq(&n.inputs[1], &[0, 1])?;
    if boxes == scores {
        return None;
    }
    let m = ints_of(&n.inputs[2])?;
    let max = *m.first().filter(|_| m.len() == 1)?;
    if !(1..=1 << 24).contains(&max) {
        return None;
    }
    let f1 = |v: &str| -> Option<f32> {
        let c = konst(v)
            .filter(|c| c.elem == elem::FLOAT && c.dims().iter().product::<usize>() == 1)?;
        c.values().first().map(|&x| x as f32)
    };
    // (onnxruntime refuses an iou_threshold outside [0, 1]; TenniS would run it)
    let iou = f1(&n.inputs[3]).filter(|v| (0.0..=1.0).contains(v))?;
    let score = f1(&n.inputs[4])?;
    let sel = &n.outputs[0];
    let kg = only_user(sel, "Gather")?;
    let ga = &g.nodes[kg];
    if ga.int("axis", 0) != 1 || ga.inputs.len() != 2 || ga.inputs[0] != *sel {
        return None;
    }
    let col = konst(&ga.inputs[1]).filter(|c| c.dims() == [1])?.ints()?;
    if col != [2] {
        return None;
    }
    let kr = only_user(&ga.outputs[0], "Reshape")?;
    let re = &g.nodes[kr];
    if re.inputs.len() != 2 || re.inputs[0] != ga.outputs[0] || ints_of(&re.inputs[1])? != [-1] {
        return None;
    }
    let kc = only_user(&re.outputs[0], "Cast")?;
    let ca = &g.nodes[kc];
    if ca.int("to", 0) != i64::from(elem::INT32) {
        return None;
    }
    let idx = ca.outputs[0].as_str();
    let u = users.get(idx)?;
    if u.len() != 2 || outputs.contains(idx) {
        return None;
    }
    let (ks, kp) = if g.nodes[u[0]].op == "Shape" {
        (u[0], u[1])
    } else {
        (u[1], u[0])
    };
    let (sh, pad) = (&g.nodes[ks], &g.nodes[kp]);
    if sh.op != "Shape"
        || !sh.attrs.is_empty()
        || sh.outputs.len() != 1
        || pad.op != "Pad"
        || pad.outputs.len() != 1
    {
        return None;
    }
    let ksub = only_user(&sh.outputs[0], "Sub")?;
    let sub = &g.nodes[ksub];
    if sub.inputs.len() != 2 || sub.inputs[1] != sh.outputs[0] || ints_of(&sub.inputs[0])? != [max]
    {
        return None;
    }
    let kcat = only_user(&sub.outputs[0], "Concat")?;
    let cat = &g.nodes[kcat];
    if cat.int("axis", i64::MIN) != 0
        || cat.inputs.len() != 2
        || ints_of(&cat.inputs[0])? != [0]
        || cat.inputs[1] != sub.outputs[0]
        || only_user(&cat.outputs[0], "Pad")? != kp
    {
        return None;
    }
    if g.opset < 11
        || pad.inputs.len() != 3
        || pad.inputs[0] != idx
        || pad.inputs[1] != cat.outputs[0]
        || pad.string("mode", "constant") != "constant"
    {
        return None;
    }
    let v = konst(&pad.inputs[2]).filter(|c| c.elem == elem::INT32 && c.dims().is_empty())?;
    if v.ints()? != [-1] {
        return None;
    }
    let all = [ub, us, k, kg, kr, kc, ks, ksub, kcat, kp];
    if all.iter().any(|&i| !plain(&g.nodes[i])) {
        return None;
    }
    Some(NmsV3 {
        boxes,
        scores,
        out: pad.outputs.first()?.clone(),
        max,
        iou,
        score,
        nodes: all.to_vec(),
    })
}

impl NmsV3 {
    /// Emits TenniS's `non_max_suppression_v3` (`xyxy`) computing the
    /// pattern's output.
    pub(crate) fn lower(&self, cx: &mut Tx) -> Lowered {
        let (nb, ns) = (cx.shape(&self.boxes)?, cx.shape(&self.scores)?);
        if nb.len() != 2 || nb[1] != 4 || nb[0] < 0 || ns != [nb[0]] {
            return Err(LowerError::Other(format!(
                "boxes {nb:?} and scores {ns:?} (the import takes boxes [n, 4] and scores [n])"
            )));
        }
        if cx.elem(&self.boxes) != elem::FLOAT || cx.elem(&self.scores) != elem::FLOAT {
            return Err("boxes or scores that are not f32".into());
        }
        let b = cx.node_of(&self.boxes)?;
        let s = cx.node_of(&self.scores)?;
        let params = vec![
            kv("max_output_size", p_int(self.max)),
            kv("iou_threshold", p_float(self.iou)),
            kv("score_threshold", p_float(self.score)),
            kv("mode", p_str("xyxy")),
        ];
        cx.emit_e(
            "non_max_suppression_v3",
            &self.out,
            &[b, s],
            params,
            &[self.max],
            elem::INT32,
        )?;
        Ok(())
    }
}
