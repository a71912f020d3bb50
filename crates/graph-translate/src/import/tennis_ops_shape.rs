//! ONNX → TenniS lowerings of data movement with constant parameters:
//! `Slice` and `Split` (`strided_slice`), `Gather` (`gather` with constant
//! indices), `Tile` (`tile`), `Pad` (`pad` in constant mode, `gather` in
//! the others), `Expand`
//! (`broadcast`) and `Cast` to f32 of an f32 value.

use super::LowerError;
use super::onnx_graph::{Node, elem};
use super::table::lowerings;
use super::tennis_cx::out;
use super::tennis_cx::{Lowered, Tx, broadcast, kv, p_float, p_ints};
use super::tennis_ops_basic::axis;

/// A constant integer input `i`, or the attribute `attr` before opset
/// `since`; `None` when neither is given.
fn ints_in(
    cx: &Tx,
    node: &Node,
    i: usize,
    attr: &'static str,
    since: i64,
) -> Result<Option<Vec<i64>>, LowerError> {
    if cx.opset < since {
        return Ok(node.ints(attr));
    }
    match node.input(i) {
        None => Ok(None),
        Some(_) => cx
            .const_ints(node, i)
            .map(Some)
            .ok_or(LowerError::NotConstant { what: attr }),
    }
}

/// One `strided_slice` over every axis of `x` (shape `d`): `sl` gives,
/// per axis, `(begin, end, step)` already resolved the ONNX way (begin in
/// range, end in `[-1, dim]`), or `None` for the whole axis.
fn strided(
    cx: &mut Tx,
    o: &str,
    x: bubble_module::NodeId,
    d: &[i64],
    sl: &[Option<(i64, i64, i64)>],
    tmp: bool,
) -> Result<Vec<i64>, LowerError> {
    let mut b = Vec::new();
    let mut e = Vec::new();
    let mut s = Vec::new();
    let mut od = Vec::new();
    for (i, r) in sl.iter().enumerate() {
        match *r {
            None => {
                b.push(0);
                e.push(i64::from(i32::MAX));
                s.push(1);
                od.push(d[i]);
            }
            Some((st, en, step)) => {
                let n = if step > 0 {
                    if en > st { (en - st - 1) / step + 1 } else { 0 }
                } else if st > en {
                    (st - en - 1) / -step + 1
                } else {
                    0
                };
                if n == 0 {
                    return Err("an empty result".into());
                }
                b.push(st);
                // TenniS reads a negative end from the back; −(dim + 1)
                // is "before the first element".
                e.push(if en < 0 { -(d[i] + 1) } else { en });
                s.push(step);
                od.push(n);
            }
        }
    }
    let params = vec![
        kv("begin", p_ints(&b)),
        kv("end", p_ints(&e)),
        kv("stride", p_ints(&s)),
    ];
    if tmp {
        cx.tmp("strided_slice", o, &[x], params, &od)?;
    } else {
        cx.emit("strided_slice", o, &[x], params, &od)?;
    }
    Ok(od)
}

/// Checks that a static dimension fits TenniS's int32 parameters.
fn small(v: i64) -> Result<i64, LowerError> {
    if (0..=i64::from(i32::MAX) / 2).contains(&v) {
        Ok(v)
    } else {
        Err(LowerError::Other(format!("a dimension of {v}")))
    }
}

/// `Slice` with constant starts, ends, axes and steps → `strided_slice`.
pub(crate) fn slice(cx: &mut Tx, node: &Node) -> Lowered {
    if cx.opset >= 10 && (1..5).any(|i| node.input(i).is_some() && cx.const_ints(node, i).is_none())
    {
        return super::tennis_ops_slice::slice_dyn(cx, node);
    }
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let (starts, ends, axes, steps) = if cx.opset < 10 {
        (
            node.ints("starts").ok_or(LowerError::absent("starts"))?,
            node.ints("ends").ok_or(LowerError::absent("ends"))?,
            node.ints("axes"),
            None,
        )
    } else {
        let need = |i: usize, what: &'static str| -> Result<Option<Vec<i64>>, LowerError> {
            match node.input(i) {
                None => Ok(None),
                Some(_) => cx
                    .const_ints(node, i)
                    .map(Some)
                    .ok_or(LowerError::NotConstant { what }),
            }
        };
        (
            need(1, "starts")?.ok_or(LowerError::absent("starts"))?,
            need(2, "ends")?.ok_or(LowerError::absent("ends"))?,
            need(3, "axes")?,
            need(4, "steps")?,
        )
    };
    let n = starts.len();
    let axes = axes.unwrap_or_else(|| (0..n as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; n]);
    if ends.len() != n || axes.len() != n || steps.len() != n {
        return Err("starts, ends, axes and steps of different lengths".into());
    }
    let mut sl: Vec<Option<(i64, i64, i64)>> = vec![None; d.len()];
    for k in 0..n {
        let a = axis(axes[k], d.len())?;
        if sl[a].is_some() {
            return Err(LowerError::Other(format!("axis {} given twice", axes[k])));
        }
        let dim = d[a];
        if dim < 0 {
            return Err(LowerError::needs_shape("slicing a symbolic dimension"));
        }
        let dim = small(dim)?;
        let step = steps[k];
        if step == 0 {
            return Err("a step of 0".into());
        }
        if step.unsigned_abs() > i32::MAX as u64 {
            return Err(LowerError::Other(format!("a step of {step}")));
        }
        let norm = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
        let (st, en) = if step > 0 {
            (norm(starts[k]).clamp(0, dim), norm(ends[k]).clamp(0, dim))
        } else {
            (
                norm(starts[k]).clamp(0, dim - 1),
                norm(ends[k]).clamp(-1, dim - 1),
            )
        };
        sl[a] = Some((st, en, step));
    }
    strided(cx, &o, x, &d, &sl, false)?;
    Ok(())
}

/// `Split` with constant sizes (attribute, input, `num_outputs` or equal
/// parts) → one `strided_slice` per output.
pub(crate) fn split(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let a = axis(node.int("axis", 0), d.len())?;
    let dim = d[a];
    if dim < 0 {
        return Err(LowerError::needs_shape("splitting a symbolic dimension"));
    }
    let dim = small(dim)?;
    let outs: Vec<String> = node.outputs.clone();
    let k = outs.len() as i64;
    if k == 0 {
        return Err(LowerError::absent("outputs"));
    }
    let sizes = match ints_in(cx, node, 1, "split", 13)? {
        Some(s) => s,
        None => {
            let parts = if cx.opset >= 18 {
                node.int("num_outputs", k)
            } else {
                k
            };
            if parts != k || parts <= 0 {
                return Err(LowerError::Other(format!(
                    "num_outputs {parts} unlike its {k} outputs"
                )));
            }
            if cx.opset < 18 && dim % parts != 0 {
                return Err(LowerError::Other(format!(
                    "{dim} elements that do not split into {parts} equal parts"
                )));
            }
            let each = (dim + parts - 1) / parts;
            (0..parts)
                .map(|i| (dim - i * each).clamp(0, each))
                .collect()
        }
    };
    if sizes.len() as i64 != k || sizes.iter().any(|&s| s < 0) {
        return Err(LowerError::Other(format!(
            "split {sizes:?} for {k} outputs"
        )));
    }
    let total = sizes.iter().try_fold(0i64, |t, &s| t.checked_add(s));
    if total != Some(dim) {
        return Err(LowerError::Other(format!(
            "split {sizes:?} that does not add up to {dim}"
        )));
    }
    let mut at = 0;
    for (o, &s) in outs.iter().zip(&sizes) {
        if o.is_empty() {
            at += s;
            continue;
        }
        let mut sl = vec![None; d.len()];
        sl[a] = Some((at, at + s, 1));
        strided(cx, o, x, &d, &sl, false)?;
        at += s;
    }
    Ok(())
}

/// `Gather` → `gather` (constant indices: negative ones resolved here;
/// indices computed at run time: see [`super::tennis_ops_index::gather_dyn`]).
pub(crate) fn gather(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let a = axis(node.int("axis", 0), d.len())?;
    let dim = d[a];
    if dim < 0 {
        return Err("gathering along a symbolic dimension".into());
    }
    let name = node.input(1).ok_or(LowerError::absent("indices"))?;
    let Some(c) = cx.konst(name).cloned() else {
        return super::tennis_ops_index::gather_dyn(cx, node, x, &d, a);
    };
    let idx = c.ints().ok_or("indices that are not integers")?;
    let idx: Vec<i64> = idx
        .iter()
        .map(|&i| {
            let j = if i < 0 { i + dim } else { i };
            if (0..dim).contains(&j) {
                Ok(j)
            } else {
                Err(LowerError::IndexOutOfRange {
                    index: i,
                    of: "dimension",
                    size: dim,
                })
            }
        })
        .collect::<Result<_, _>>()?;
    let idims = c.dims().to_vec();
    let ids = cx.const_i32(&o, &idims, &idx)?;
    let mut od: Vec<i64> = d[..a].to_vec();
    od.extend(idims.iter().map(|&v| v as i64));
    od.extend_from_slice(&d[a + 1..]);
    cx.emit(
        "gather",
        &o,
        &[x, ids],
        vec![kv("axis", super::tennis_cx::p_int(a as i64))],
        &od,
    )?;
    Ok(())
}

/// `Tile` with constant repeats → `tile`.
pub(crate) fn tile(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let r = cx
        .const_ints(node, 1)
        .ok_or(LowerError::NotConstant { what: "repeats" })?;
    if r.len() != d.len() {
        return Err(LowerError::Other(format!(
            "{} repeats for rank {}",
            r.len(),
            d.len()
        )));
    }
    let mut od = Vec::new();
    for (&v, &k) in d.iter().zip(&r) {
        if k < 1 {
            return Err(LowerError::Other(format!(
                "repeats {r:?} (an empty result)"
            )));
        }
        small(k)?;
        if v < 0 && k != 1 {
            return Err("tiling a symbolic dimension".into());
        }
        od.push(if v < 0 {
            v
        } else {
            small(v.checked_mul(k).ok_or("repeats too large")?)?
        });
    }
    cx.emit("tile", &o, &[x], vec![kv("repeats", p_ints(&r))], &od)?;
    Ok(())
}

/// A `Pad`'s `axes` input (opset 18), constant, or `None` when absent.
fn pad_const_axes(cx: &Tx, node: &Node) -> Result<Option<Vec<i64>>, LowerError> {
    match node.input(3) {
        None => Ok(None),
        Some(_) => cx
            .const_ints(node, 3)
            .map(Some)
            .ok_or(LowerError::NotConstant { what: "axes" }),
    }
}

/// The axes a `Pad` of a rank-`r` input pads (every axis when `axes` is
/// `None`), checked against the number of `pads` (two per axis).
fn pad_axes(axes: Option<Vec<i64>>, r: usize, pads: &[i64]) -> Result<Vec<usize>, LowerError> {
    let axes: Vec<usize> = match axes {
        None => (0..r).collect(),
        Some(a) => a.iter().map(|&v| axis(v, r)).collect::<Result<_, _>>()?,
    };
    if pads.len() != 2 * axes.len() {
        return Err(LowerError::Other(format!(
            "{} pads for {} axes",
            pads.len(),
            axes.len()
        )));
    }
    Ok(axes)
}

/// `Pad` in constant mode with constant, non-negative pads → one `pad`
/// per padded axis; in modes `reflect`, `edge` and `wrap` (TenniS's `pad`
/// fills with a constant only) → one `gather` per padded axis, of the
/// source indices the mode picks (see [`pad_source`]).
pub(crate) fn pad(cx: &mut Tx, node: &Node) -> Lowered {
    let mode = node.string("mode", "constant");
    if mode != "constant" {
        return pad_gather(cx, node, &mode);
    }
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let r = d.len();
    let (pads, value, axes) = if cx.opset < 11 {
        let p = node.ints("pads").or_else(|| node.ints("paddings"));
        (
            p.ok_or(LowerError::absent("pads"))?,
            f64::from(node.float("value", 0.0)),
            None,
        )
    } else {
        let p = cx.const_ints(node, 1);
        let v = match node.input(2) {
            None => 0.0,
            Some(n) => {
                if cx.elem(n) != elem::FLOAT {
                    return Err("a constant_value that is not f32".into());
                }
                let v = cx.const_floats(node, 2).ok_or(LowerError::NotConstant {
                    what: "a constant_value",
                })?;
                *v.first().ok_or("an empty constant_value")?
            }
        };
        let axes = pad_const_axes(cx, node)?;
        let axes_n: Vec<usize> = match &axes {
            None => (0..r).collect(),
            Some(a) => a.iter().map(|&v| axis(v, r)).collect::<Result<_, _>>()?,
        };
        let Some(p) = p else {
            return super::tennis_ops_slice::pad_dyn(cx, node, v, &axes_n);
        };
        (p, v, axes)
    };
    let axes = pad_axes(axes, r, &pads)?;
    let mut full = vec![0i64; 2 * r];
    let mut od = d.clone();
    for (k, &a) in axes.iter().enumerate() {
        let (b, e) = (pads[k], pads[k + axes.len()]);
        if b < 0 || e < 0 {
            return Err(LowerError::Other(format!(
                "negative pads {pads:?} (cropping)"
            )));
        }
        if b > 0 || e > 0 {
            if d[a] < 0 {
                return Err("padding a symbolic dimension".into());
            }
            od[a] = small(
                d[a].checked_add(b)
                    .and_then(|v| v.checked_add(e))
                    .ok_or(LowerError::TooLarge("pads too large"))?,
            )?;
        }
        full[2 * a] = small(b)?;
        full[2 * a + 1] = small(e)?;
    }
    // TenniS's CPU pad pads one axis or two adjacent ones: one `pad` per
    // padded axis.
    let padded: Vec<usize> = (0..r)
        .filter(|&a| full[2 * a] != 0 || full[2 * a + 1] != 0)
        .collect();
    if padded.is_empty() {
        cx.emit("_copy", &o, &[x], vec![], &d)?;
        return Ok(());
    }
    let mut cur = x;
    let mut cd = d.clone();
    for (k, &a) in padded.iter().enumerate() {
        let mut one = vec![0i64; 2 * r];
        one[2 * a] = full[2 * a];
        one[2 * a + 1] = full[2 * a + 1];
        cd[a] = od[a];
        let p = cx.const_i32(&o, &[r, 2], &one)?;
        let params = vec![kv("padding_value", p_float(value as f32))];
        cur = if k + 1 == padded.len() {
            cx.emit("pad", &o, &[cur, p], params, &cd)?
        } else {
            cx.tmp("pad", &o, &[cur, p], params, &cd)?
        };
    }
    Ok(())
}

/// The source index of each position of an axis of `n` elements padded by
/// `b` before and `e` after in ONNX's `mode` (numpy's `pad` modes, which
/// the ONNX reference uses): `reflect` mirrors about the edge elements
/// (period 2(n − 1), every index 0 when n is 1), `edge` repeats them,
/// `wrap` continues periodically. `None` for another mode. The result has
/// n + b + e elements: the caller bounds them.
pub(crate) fn pad_source(mode: &str, n: i64, b: i64, e: i64) -> Option<Vec<i64>> {
    if n < 1 || b < 0 || e < 0 {
        return None;
    }
    let len = n.checked_add(b)?.checked_add(e)?;
    let src = |j: i64| -> Option<i64> {
        match mode {
            "edge" => Some(j.clamp(0, n - 1)),
            "wrap" => Some(j.rem_euclid(n)),
            "reflect" if n == 1 => Some(0),
            "reflect" => {
                let p = (n - 1).checked_mul(2)?;
                let k = j.rem_euclid(p);
                Some(if k < n { k } else { p - k })
            }
            _ => None,
        }
    };
    (0..len).map(|i| src(i - b)).collect()
}

/// The longest padded axis [`pad_gather`] writes an index table for.
const MAX_GATHER_PAD: i64 = 1 << 24;

/// `Pad` in mode `reflect`, `edge` or `wrap` with constant, non-negative
/// pads: one `gather` per padded axis with the indices of [`pad_source`]
/// (exact: it copies elements, of any element type TenniS has).
fn pad_gather(cx: &mut Tx, node: &Node, mode: &str) -> Lowered {
    let o = out(node)?.to_string();
    if !matches!(mode, "reflect" | "edge" | "wrap") {
        return Err(LowerError::value("mode", mode));
    }
    let (x, ex) = cx.tin(node, 0)?;
    let d = &cx.in_shape(node, 0)?;
    let r = d.len();
    let (pads, axes) = if cx.opset < 11 {
        let p = node.ints("pads").or_else(|| node.ints("paddings"));
        (p.ok_or(LowerError::absent("pads"))?, None)
    } else {
        let p = cx.const_ints(node, 1).ok_or(LowerError::NotConstant {
            what: "pads (in a mode other than constant)",
        })?;
        let axes = pad_const_axes(cx, node)?;
        (p, axes)
    };
    let axes = pad_axes(axes, r, &pads)?;
    let mut per_axis = vec![(0i64, 0i64); r];
    for (k, &a) in axes.iter().enumerate() {
        let (b, e) = (pads[k], pads[k + axes.len()]);
        if b < 0 || e < 0 {
            return Err(LowerError::Other(format!(
                "negative pads {pads:?} in mode {mode}"
            )));
        }
        per_axis[a] = (small(b)?, small(e)?);
    }
    let padded: Vec<usize> = (0..r).filter(|&a| per_axis[a] != (0, 0)).collect();
    if padded.is_empty() {
        cx.emit_e("_copy", &o, &[x], vec![], d, ex)?;
        return Ok(());
    }
    let mut cur = x;
    let mut cd = d.to_vec();
    for (k, &a) in padded.iter().enumerate() {
        let (b, e) = per_axis[a];
        if d[a] < 1 {
            return Err(LowerError::Other(format!(
                "padding a symbolic or empty dimension in mode {mode}"
            )));
        }
        let len = d[a]
            .checked_add(b)
            .and_then(|v| v.checked_add(e))
            .ok_or(LowerError::TooLarge("pads too large"))?;
        if len > MAX_GATHER_PAD {
            return Err(LowerError::Other(format!(
                "an axis of {len} elements after padding in mode {mode} (the gather's \
                 index table is limited to {MAX_GATHER_PAD})"
            )));
        }
        let idx = pad_source(mode, d[a], b, e).ok_or(LowerError::TooLarge("pads too large"))?;
        cd[a] = len;
        let ids = cx.const_i32(&o, &[idx.len()], &idx)?;
        let params = vec![kv("axis", super::tennis_cx::p_int(a as i64))];
        cur = if k + 1 == padded.len() {
            cx.emit_e("gather", &o, &[cur, ids], params, &cd, ex)?
        } else {
            cx.tmp_e("gather", &o, &[cur, ids], params, &cd, ex)?
        };
    }
    Ok(())
}

/// `Expand` to a constant shape → `broadcast` (x first reshaped to the
/// result's rank).
pub(crate) fn expand(cx: &mut Tx, node: &Node) -> Lowered {
    let mut x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let s = cx
        .const_ints(node, 1)
        .ok_or(LowerError::NotConstant { what: "a shape" })?;
    if d.iter().any(|&v| v < 0) {
        return Err(LowerError::needs_shape("a symbolic dimension"));
    }
    if s.iter().any(|&v| v < 1) {
        return Err(LowerError::Other(format!(
            "shape {s:?} (an empty or invalid result)"
        )));
    }
    let od = broadcast(&d, &s)?;
    for &v in &od {
        small(v)?;
    }
    if od == d {
        cx.emit("_copy", &o, &[x], vec![], &d)?;
        return Ok(());
    }
    if d.len() < od.len() {
        let mut rd = vec![1; od.len() - d.len()];
        rd.extend_from_slice(&d);
        let r = cx.fresh(&o);
        x = cx.reshape(&r, x, &rd)?;
    }
    let sh = cx.const_i32(&o, &[od.len()], &od)?;
    cx.emit("broadcast", &o, &[x, sh], vec![], &od)?;
    Ok(())
}

lowerings! { Tx;
    /// `Resize` → [`resize_of`].
    resize(cx, node) => resize_of(cx, node, false);
    /// `Upsample` → [`resize_of`] (asymmetric coordinates, floor).
    upsample(cx, node) => resize_of(cx, node, true);
}

/// `Resize` and `Upsample` in nearest mode by whole factors on H and W of
/// an NCHW input, where ONNX picks source pixel ⌊d / k⌋ (`asymmetric` with
/// `floor`, the `Upsample` and `Resize`-10 rule, or `half_pixel` with a
/// rounding `nearest_mode`, which agree for whole factors) → `resize2d`
/// type 3 (TenniS's "hard" resize: source int(d · (src/dst)) in f32, the
/// same pixel whenever f32's 1/k is not below 1/k; other factors refused).
/// Mode `linear`, and nearest where `resize2d` cannot (opset 11 on), are
/// [`super::tennis_ops_resize::interpolate`]'s gathers. `upsample` for
/// `Upsample`.
fn resize_of(cx: &mut Tx, node: &Node, upsample: bool) -> Lowered {
    let mode = node.string("mode", "nearest");
    let legacy = upsample || cx.opset < 11;
    if mode != "nearest" {
        return super::tennis_ops_resize::interpolate(cx, node, upsample);
    }
    match resize2d(cx, node, upsample) {
        Err(_) if !legacy => super::tennis_ops_resize::interpolate(cx, node, upsample),
        r => r,
    }
}

/// `Resize`/`Upsample` (`upsample`) as one `resize2d` (whole nearest
/// factors).
fn resize2d(cx: &mut Tx, node: &Node, upsample: bool) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    if d.len() != 4 || d.iter().any(|&v| v < 1) {
        return Err("an input that is not a static NCHW image".into());
    }
    let resize11 = !upsample && cx.opset >= 11;
    if resize11 {
        let ct = node.string("coordinate_transformation_mode", "half_pixel");
        let nm = node.string("nearest_mode", "round_prefer_floor");
        let ok = match ct.as_str() {
            "asymmetric" => nm == "floor",
            "half_pixel" | "pytorch_half_pixel" => {
                nm == "round_prefer_floor" || nm == "round_prefer_ceil"
            }
            _ => false,
        };
        if !ok {
            return Err(LowerError::Other(format!(
                "coordinate_transformation_mode {ct} with nearest_mode {nm} (TenniS picks ⌊d / k⌋)"
            )));
        }
        if node.ints("axes").is_some() {
            return Err("axes".into());
        }
        let kp = node.string("keep_aspect_ratio_policy", "stretch");
        if kp != "stretch" {
            return Err(LowerError::value("keep_aspect_ratio_policy", kp));
        }
    }
    let scales: Vec<f64> = if upsample && cx.opset < 9 {
        node.floats("scales")
            .ok_or(LowerError::absent("scales"))?
            .iter()
            .map(|&v| f64::from(v))
            .collect()
    } else {
        let (si, zi) = if resize11 { (2, 3) } else { (1, usize::MAX) };
        let given = |i: usize| {
            node.input(i)
                .is_some_and(|n| cx.konst(n).is_none_or(|c| !c.dims().contains(&0)))
        };
        if given(si) {
            cx.const_floats(node, si)
                .ok_or(LowerError::NotConstant { what: "scales" })?
        } else if zi != usize::MAX && given(zi) {
            let s = cx
                .const_ints(node, zi)
                .ok_or(LowerError::NotConstant { what: "sizes" })?;
            if s.len() != 4 {
                return Err(LowerError::value("sizes", format!("{s:?}")));
            }
            s.iter()
                .zip(&d)
                .map(|(&a, &b)| a as f64 / b as f64)
                .collect()
        } else {
            return Err("neither scales nor sizes".into());
        }
    };
    if scales.len() != 4 || scales[0] != 1.0 || scales[1] != 1.0 {
        return Err(LowerError::Other(format!(
            "scales {scales:?} (only H and W resized)"
        )));
    }
    let mut od = d.clone();
    for i in 2..4 {
        let k = scales[i];
        if !(1.0..=1024.0).contains(&k) || k.fract() != 0.0 {
            return Err(LowerError::Other(format!(
                "scale {k} (only whole upsampling factors)"
            )));
        }
        let f = (1.0f32 / k as f32) as f64;
        if f * k < 1.0 {
            return Err(LowerError::Other(format!(
                "scale {k} (TenniS's f32 1/{k} rounds down)"
            )));
        }
        od[i] = small(d[i].checked_mul(k as i64).ok_or("a size too large")?)?;
    }
    if od == d {
        cx.emit("_copy", &o, &[x], vec![], &d)?;
        return Ok(());
    }
    let sz = cx.const_i32(&o, &[4], &[-1, -1, od[2], od[3]])?;
    cx.emit(
        "_resize2d",
        &o,
        &[x, sz],
        vec![kv("type", super::tennis_cx::p_int(3))],
        &od,
    )?;
    Ok(())
}

/// `ConstantOfShape` with a constant shape too large to fold into a
/// `<const>` → `constant_of_shape` (the shape as an int32 input, the f32
/// value as its `value`).
pub(crate) fn constant_of_shape(cx: &mut Tx, node: &Node) -> Lowered {
    let o = out(node)?.to_string();
    let s = cx
        .const_ints(node, 0)
        .ok_or(LowerError::NotConstant { what: "a shape" })?;
    if s.iter().any(|&v| v < 1) {
        return Err(LowerError::Other(format!("shape {s:?} (an empty result)")));
    }
    for &v in &s {
        small(v)?;
    }
    let n = s.iter().try_fold(1i64, |p, &v| p.checked_mul(v));
    if n.is_none_or(|n| n > i64::from(i32::MAX)) {
        return Err(LowerError::Other(format!(
            "shape {s:?} (more than 2^31 elements)"
        )));
    }
    let value = match node.attr("value").and_then(|t| t.t.as_ref()) {
        None => 0.0,
        Some(t) => {
            let e = t.data_type.unwrap_or(elem::FLOAT);
            if e != elem::FLOAT {
                return Err(LowerError::Other(format!(
                    "a {} value (the TenniS import computes in f32)",
                    onnx_format::dtype::onnx_name(e)
                )));
            }
            let c = onnx_format::tensor_from_proto(t, None, &Default::default())
                .map_err(|e| e.to_string())?;
            let v = c.to_f64_vec().ok_or("a value that is not a number")?;
            if v.len() != 1 {
                return Err("a value that is not one element".into());
            }
            v[0]
        }
    };
    let sh = cx.const_i32(&o, &[s.len()], &s)?;
    let val = tensor_core::Tensor::from_values::<f32>([1], &[value as f32])
        .map_err(|e| e.to_string())?
        .into_static();
    cx.emit(
        "constant_of_shape",
        &o,
        &[sh],
        vec![kv("value", bubble_module::Packed::from(val))],
        &s,
    )?;
    Ok(())
}
