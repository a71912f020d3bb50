//! ONNX → TenniS lowerings of `Slice` and `Pad` with parameters computed
//! at run time.

use bubble_module::NodeId;

use super::LowerError;
use super::onnx_graph::{Node, elem};
use super::tennis_cx::{Lowered, Tx, is_int, kv, p_float, p_int, p_ints};

/// `Slice` whose starts, ends, axes or steps are computed at run time →
/// `slice_v3` (inputs x, starts, ends, axes, steps; TensorFlow's bounds
/// clamping). It differs from ONNX's clamping in two places, both fixed
/// before it with the axis lengths `L`: a start below `−L` (ONNX: the
/// first element for a negative step; TenniS: nothing) becomes
/// `maximum(start, −L)`, and an end of exactly `−L` (ONNX: stop before
/// the first element; TenniS: through it for a negative step) becomes
/// 0, which both read alike for either sign of step. Negative axes are
/// made positive (TenniS fails on them); axes out of increasing order
/// fail in TenniS at run time. The result's lengths are not known here.
pub(crate) fn slice_dyn(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let e = node.input(0).map_or(elem::FLOAT, |n| cx.elem(n));
    let d = cx.in_shape(node, 0)?;
    if d.iter().any(|&v| v < 0) {
        return Err(LowerError::needs_shape("a symbolic dimension"));
    }
    let o = super::tennis_cx::out(node)?.to_string();
    let r = d.len() as i64;
    let n = match cx.in_shape(node, 1)?.as_slice() {
        [n] if *n >= 1 => *n,
        s => return Err(LowerError::Other(format!("starts of shape {s:?}"))),
    };
    let nu = n as usize;
    let e64 = elem::INT64;
    // a parameter as an int64 node
    let param = |cx: &mut Tx, i: usize| -> Result<Option<NodeId>, LowerError> {
        if node.input(i).is_none() {
            return Ok(None);
        }
        if cx.in_shape(node, i)? != [n] {
            return Err("starts, ends, axes and steps of different lengths".into());
        }
        if let Some(v) = cx.const_ints(node, i) {
            let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            return cx.const_e(&o, e64, &[nu], &f).map(Some);
        }
        let (id, ei) = cx.tin(node, i)?;
        if !is_int(ei) {
            return Err("parameters that are not integers".into());
        }
        if ei == e64 {
            return Ok(Some(id));
        }
        cx.tmp_e("_cast", &o, &[id], vec![kv("dtype", p_int(7))], &[n], e64)
            .map(Some)
    };
    let starts = param(cx, 1)?.ok_or(LowerError::absent("starts"))?;
    let ends = param(cx, 2)?.ok_or(LowerError::absent("ends"))?;
    let steps = param(cx, 4)?;
    // axes, made positive, and −L per entry
    let (axes, negl) = match (node.input(3), cx.const_ints(node, 3)) {
        (None, _) | (Some(_), Some(_)) => {
            let v = cx
                .const_ints(node, 3)
                .unwrap_or_else(|| (0..n).collect::<Vec<_>>());
            let mut prev = -1;
            let mut ax = Vec::new();
            for &a in &v {
                let p = if a < 0 { a + r } else { a };
                if !(0..r).contains(&p) || p <= prev {
                    return Err(LowerError::Other(format!(
                        "axes {v:?} (TenniS's slice_v3 takes increasing axes)"
                    )));
                }
                prev = p;
                ax.push(p);
            }
            let f: Vec<f64> = ax.iter().map(|&a| a as f64).collect();
            let l: Vec<f64> = ax.iter().map(|&a| -(d[a as usize] as f64)).collect();
            (
                cx.const_e(&o, e64, &[nu], &f)?,
                cx.const_e(&o, e64, &[nu], &l)?,
            )
        }
        (Some(_), None) => {
            let a = param(cx, 3)?.ok_or(LowerError::absent("axes"))?;
            let rc = cx.const_e(&o, e64, &[1], &[r as f64])?;
            let zero = cx.const_e(&o, e64, &[1], &[0.0])?;
            let plus = cx.tmp_e("add", &o, &[a, rc], vec![], &[n], e64)?;
            let m = cx.tmp_e("maximum", &o, &[a, zero], vec![], &[n], e64)?;
            let nonneg = cx.tmp_e("equal", &o, &[m, a], vec![], &[n], elem::BOOL)?;
            let a = cx.tmp_e("where", &o, &[nonneg, a, plus], vec![], &[n], e64)?;
            let lv: Vec<f64> = d.iter().map(|&v| -(v as f64)).collect();
            let lc = cx.const_e(&o, e64, &[d.len()], &lv)?;
            let l = cx.tmp_e(
                "gather",
                &o,
                &[lc, a],
                vec![kv("axis", p_int(0))],
                &[n],
                e64,
            )?;
            (a, l)
        }
    };
    let starts = cx.tmp_e("maximum", &o, &[starts, negl], vec![], &[n], e64)?;
    let at_l = cx.tmp_e("equal", &o, &[ends, negl], vec![], &[n], elem::BOOL)?;
    let zero = cx.const_e(&o, e64, &[1], &[0.0])?;
    let ends = cx.tmp_e("where", &o, &[at_l, zero, ends], vec![], &[n], e64)?;
    let mut ins = vec![x, starts, ends, axes];
    ins.extend(steps);
    let od = vec![-1; d.len()];
    cx.emit_e("slice_v3", &o, &ins, vec![], &od, e)?;
    Ok(())
}

/// `Pad` (constant mode, a constant value) whose pads are computed at run
/// time → one `pad` per listed axis (TenniS's CPU `pad` pads one axis or
/// two adjacent ones), its `[rank, 2]` padding the pads' row of that axis
/// (`strided_slice` of the pads as `[2, k]` transposed, times a one-hot
/// column); negative pads crop, as TenniS's `pad` does. The result's
/// lengths are not known here.
pub(crate) fn pad_dyn(cx: &mut Tx, node: &Node, value: f64, axes: &[usize]) -> Lowered {
    let x = cx.fin(node, 0)?;
    let e = node.input(0).map_or(elem::FLOAT, |n| cx.elem(n));
    let d = cx.in_shape(node, 0)?;
    let r = d.len();
    let k = axes.len();
    let o = super::tennis_cx::out(node)?.to_string();
    if cx.in_shape(node, 1)? != [2 * k as i64] {
        return Err(LowerError::Other(format!(
            "pads that are not {} values",
            2 * k
        )));
    }
    let (p, ep) = cx.tin(node, 1)?;
    if !is_int(ep) {
        return Err("pads that are not integers".into());
    }
    let ki = k as i64;
    let h = cx.fresh(&o);
    let p2 = cx.reshape(&h, p, &[2, ki])?;
    let pt = cx.tmp_e(
        "_transpose",
        &o,
        &[p2],
        vec![kv("permute", p_ints(&[1, 0]))],
        &[ki, 2],
        ep,
    )?;
    let mut cur = x;
    let mut od = d.clone();
    for (j, &a) in axes.iter().enumerate() {
        let row = cx.tmp_e(
            "strided_slice",
            &o,
            &[pt],
            vec![
                kv("begin", p_ints(&[j as i64, 0])),
                kv("end", p_ints(&[j as i64 + 1, 2])),
                kv("stride", p_ints(&[1, 1])),
            ],
            &[1, 2],
            ep,
        )?;
        let hot: Vec<f64> = (0..r).map(|i| f64::from(u8::from(i == a))).collect();
        let hc = cx.const_e(&o, ep, &[r, 1], &hot)?;
        let pad = cx.tmp_e("mul", &o, &[hc, row], vec![], &[r as i64, 2], ep)?;
        od[a] = -1;
        let params = vec![kv("padding_value", p_float(value as f32))];
        cur = if j + 1 == k {
            cx.emit_e("pad", &o, &[cur, pad], params, &od, e)?
        } else {
            cx.tmp_e("pad", &o, &[cur, pad], params, &od, e)?
        };
    }
    Ok(())
}

/// `Shape` of a value whose sizes are known only at run time → `_shape`
/// (int32), `_cast` to int64, and a `strided_slice` for `start`/`end`
/// (opset 15; clamped to the rank as ONNX's).
pub(crate) fn shape_dyn(cx: &mut Tx, node: &Node) -> Lowered {
    let (x, _) = cx.tin(node, 0)?;
    let r = cx.in_shape(node, 0)?.len() as i64;
    let o = super::tennis_cx::out(node)?.to_string();
    let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r);
    let (s, e) = (clamp(node.int("start", 0)), clamp(node.int("end", r)));
    let n = (e - s).max(0);
    if n == 0 {
        return Err("an empty start..end".into());
    }
    let sh = cx.tmp_e("_shape", &o, &[x], vec![], &[r], elem::INT32)?;
    if n == r {
        cx.emit_e(
            "_cast",
            &o,
            &[sh],
            vec![kv("dtype", p_int(7))],
            &[r],
            elem::INT64,
        )?;
        return Ok(());
    }
    let c = cx.tmp_e(
        "_cast",
        &o,
        &[sh],
        vec![kv("dtype", p_int(7))],
        &[r],
        elem::INT64,
    )?;
    let params = vec![
        kv("begin", p_ints(&[s])),
        kv("end", p_ints(&[e])),
        kv("stride", p_ints(&[1])),
    ];
    cx.emit_e("strided_slice", &o, &[c], params, &[n], elem::INT64)?;
    Ok(())
}
