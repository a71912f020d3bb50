//! ONNX → TenniS: `Resize` (and `Upsample`) in linear mode, and in
//! nearest mode where one `_resize2d` cannot, computed exactly as ONNX
//! defines it rather than by TenniS's `_resize2d` (whose bilinear kernel
//! is `half_pixel` only, mixes 1e-5 of the neighbour into the last row
//! and column, and reads past a one-pixel axis; whose nearest kernel
//! picks ⌊d · src/dst⌋ only).
//!
//! Both are separable: each resized axis is one pass of two `gather`s
//! (the left and right source index of every output position, clamped
//! to the axis as ONNX's edge padding is) and `mul`, `mul`, `add` by the
//! two weights (nearest: one `gather` of the index `nearest_mode`
//! picks), all computed at import from the static input size in f64
//! with the ONNX reference's formulas.

use bubble_module::NodeId;

use super::LowerError;
use super::onnx_graph::{Node, elem};
use super::tennis_cx::{Lowered, Tx, kv, out, p_int};
use super::tennis_ops_basic::axis as norm_axis;

/// The longest resized axis (the index tables' length).
const MAX_LEN: i64 = 1 << 24;

/// The coordinate transformation modes computed (every mode ONNX has).
const MODES: [&str; 6] = [
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "half_pixel_symmetric",
    "tf_crop_and_resize",
];

/// One resized axis: its scale, output length, and region of interest
/// (`tf_crop_and_resize`: start and end, each as the f32 ONNX gives).
struct Pass {
    axis: usize,
    scale: f64,
    out: i64,
    roi: (f32, f32),
}

/// The source coordinate of output position `y` along an axis of `inw`
/// elements resized to `outi` by `scale` (ONNX's reference formulas, in
/// its order of operations), and whether it lies outside the input
/// (`tf_crop_and_resize` only).
fn source(mode: &str, y: f64, scale: f64, inw: f64, outi: i64, roi: (f32, f32)) -> (f64, bool) {
    // the reference's output width: scale times the input, not rounded
    let outw = scale * inw;
    match mode {
        "align_corners" if outw == 1.0 => (0.0, false),
        "align_corners" => (y * (inw - 1.0) / (outw - 1.0), false),
        "asymmetric" => (y / scale, false),
        "tf_crop_and_resize" => {
            let span = f64::from(roi.1 - roi.0);
            let v = if outw == 1.0 {
                span * (inw - 1.0) / 2.0
            } else {
                y * span * (inw - 1.0) / (outw - 1.0)
            };
            let v = v + f64::from(roi.0 * (inw - 1.0) as f32);
            (v, v < 0.0 || v > inw - 1.0)
        }
        "pytorch_half_pixel" if outw == 1.0 => (-0.5, false),
        "half_pixel_symmetric" => {
            let adjustment = outi as f64 / outw;
            let offset = inw / 2.0 * (1.0 - adjustment);
            (offset + (y + 0.5) / scale - 0.5, false)
        }
        _ => ((y + 0.5) / scale - 0.5, false),
    }
}

/// `Resize` / `Upsample` with mode `linear` or `nearest`: every
/// coordinate transformation mode and `nearest_mode`, `axes`,
/// `keep_aspect_ratio_policy`, scales or sizes (constants), linear
/// `antialias` where nothing is downsampled; `Upsample` and `Resize`-10
/// use `asymmetric` coordinates (as onnxruntime); `upsample` for `Upsample`.
pub(crate) fn interpolate(cx: &mut Tx, node: &Node, upsample: bool) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let r = d.len();
    let legacy = upsample || cx.opset < 11;
    let kind = match node.string("mode", "nearest").as_str() {
        "linear" => None,
        "nearest" => Some(node.string("nearest_mode", "round_prefer_floor")),
        m => {
            return Err(LowerError::Other(format!(
                "mode {m} (linear and nearest only)"
            )));
        }
    };
    if let Some(nm) = &kind
        && !["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"].contains(&nm.as_str())
    {
        return Err(LowerError::value("nearest_mode", nm));
    }
    if kind.is_some() && node.int("antialias", 0) != 0 {
        return Err("antialias in nearest mode".into());
    }
    let mode = if legacy {
        "asymmetric".to_string()
    } else {
        node.string("coordinate_transformation_mode", "half_pixel")
    };
    if !MODES.contains(&mode.as_str()) {
        return Err(LowerError::Other(format!(
            "coordinate_transformation_mode {mode}"
        )));
    }
    let axes: Vec<usize> = match node.ints("axes").filter(|_| !legacy) {
        Some(a) => a
            .iter()
            .map(|&v| norm_axis(v, r))
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    let mut seen = axes.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != axes.len() {
        return Err("repeated axes".into());
    }
    let passes = plan(cx, node, &d, &axes, upsample, legacy, &mode)?;
    let mut cur = x;
    let mut cd = d.clone();
    let n = passes.len();
    if n == 0 {
        cx.emit("_copy", &o, &[x], vec![], &d)?;
        return Ok(());
    }
    let ev = f64::from(node.float("extrapolation_value", 0.0));
    for (k, p) in passes.iter().enumerate() {
        let how = (mode.as_str(), kind.as_deref());
        cur = one_axis(cx, &o, cur, &mut cd, p, how, ev, k + 1 == n)?;
    }
    Ok(())
}

/// The resized axes (identity axes left out), from scales or sizes.
fn plan(
    cx: &Tx,
    node: &Node,
    d: &[i64],
    axes: &[usize],
    upsample: bool,
    legacy: bool,
    mode: &str,
) -> Result<Vec<Pass>, LowerError> {
    let given = |i: usize| {
        node.input(i)
            .is_some_and(|n| cx.konst(n).is_none_or(|c| !c.dims().contains(&0)))
    };
    let (scales, sizes) = if upsample && cx.opset < 9 {
        let s = node.floats("scales").ok_or(LowerError::absent("scales"))?;
        (
            Some(s.iter().map(|&v| f64::from(v)).collect::<Vec<_>>()),
            None,
        )
    } else if legacy {
        let s = cx
            .const_floats(node, 1)
            .ok_or(LowerError::NotConstant { what: "scales" })?;
        (Some(s), None)
    } else if given(2) {
        let s = cx
            .const_floats(node, 2)
            .ok_or(LowerError::NotConstant { what: "scales" })?;
        (Some(s), None)
    } else if given(3) {
        let s = cx
            .const_ints(node, 3)
            .ok_or(LowerError::NotConstant { what: "sizes" })?;
        (None, Some(s))
    } else {
        return Err("neither scales nor sizes".into());
    };
    let count = scales
        .as_ref()
        .map_or_else(|| sizes.as_ref().map_or(0, Vec::len), Vec::len);
    if count != axes.len() {
        return Err(LowerError::Other(format!(
            "{count} scales or sizes for {} axes",
            axes.len()
        )));
    }
    for &a in axes {
        if d[a] < 1 {
            return Err(LowerError::needs_shape("a symbolic or empty resized axis"));
        }
    }
    let roi: Vec<f32> = if mode == "tf_crop_and_resize" {
        let v = cx
            .const_floats(node, 1)
            .ok_or(LowerError::NotConstant { what: "roi" })?;
        if v.len() != 2 * axes.len() {
            return Err(LowerError::Other(format!("roi of {} values", v.len())));
        }
        v.iter().map(|&f| f as f32).collect()
    } else {
        Vec::new()
    };
    // per axis (scale, output length), as the reference derives them
    let mut per: Vec<(f64, i64)> = Vec::with_capacity(axes.len());
    if let Some(s) = &scales {
        for (&a, &k) in axes.iter().zip(s) {
            let v = (k * d[a] as f64).trunc();
            if !k.is_finite() || k <= 0.0 || !(1.0..=MAX_LEN as f64).contains(&v) {
                return Err(LowerError::Other(format!(
                    "scale {k} (an empty or too long result)"
                )));
            }
            per.push((k, v as i64));
        }
    } else if let Some(s) = &sizes {
        let policy = node.string("keep_aspect_ratio_policy", "stretch");
        let ratios: Vec<f64> = axes
            .iter()
            .zip(s)
            .map(|(&a, &v)| v as f64 / d[a] as f64)
            .collect();
        let common = match policy.as_str() {
            "stretch" => None,
            "not_larger" => ratios.iter().copied().reduce(f64::min),
            "not_smaller" => ratios.iter().copied().reduce(f64::max),
            p => return Err(LowerError::value("keep_aspect_ratio_policy", p)),
        };
        for ((&a, &v), &k) in axes.iter().zip(s).zip(&ratios) {
            let (k, v) = match common {
                None => (k, v),
                // round half up, as the reference
                Some(c) => (c, (c * d[a] as f64 + 0.5).trunc() as i64),
            };
            if !(1..=MAX_LEN).contains(&v) {
                return Err(LowerError::Other(format!(
                    "size {v} (an empty or too long result)"
                )));
            }
            per.push((k, v));
        }
    }
    if node.int("antialias", 0) != 0 && per.iter().any(|&(k, _)| k < 1.0) {
        return Err("antialias when downsampling (a wider filter than two taps)".into());
    }
    let mut passes = Vec::new();
    for (i, (&a, &(scale, out))) in axes.iter().zip(&per).enumerate() {
        let roi = if roi.is_empty() {
            (0.0, 1.0)
        } else {
            (roi[i], roi[axes.len() + i])
        };
        // the reference skips an axis whose scale is (nearly) 1 and whose
        // length and region stay
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        let whole = roi.0.abs() <= 1e-9 && near(f64::from(roi.1), 1.0);
        if near(scale, 1.0) && out == d[a] && (mode != "tf_crop_and_resize" || whole) {
            continue;
        }
        passes.push(Pass {
            axis: a,
            scale,
            out,
            roi,
        });
    }
    Ok(passes)
}

/// One axis of the resize: `gather` (left), `gather` (right), `mul`,
/// `mul`, `add` (nearest, `how.1` its `nearest_mode`: the one `gather`);
/// a `where` puts `extrapolation_value` where a `tf_crop_and_resize`
/// reads outside the input. Named `o` when `last`.
#[allow(clippy::too_many_arguments)]
fn one_axis(
    cx: &mut Tx,
    o: &str,
    x: NodeId,
    cd: &mut [i64],
    p: &Pass,
    (mode, nearest): (&str, Option<&str>),
    ev: f64,
    last: bool,
) -> Result<NodeId, LowerError> {
    let a = p.axis;
    let inw = cd[a];
    let mut lo = Vec::with_capacity(p.out as usize);
    let mut hi = Vec::with_capacity(p.out as usize);
    let mut wl = Vec::with_capacity(p.out as usize);
    let mut wh = Vec::with_capacity(p.out as usize);
    let mut outside = Vec::with_capacity(p.out as usize);
    for y in 0..p.out {
        let (s, ext) = source(mode, y as f64, p.scale, inw as f64, p.out, p.roi);
        if !s.is_finite() {
            return Err("a source coordinate that is not finite".into());
        }
        let f = s.floor();
        let mut t = s - f;
        // nearest: the weight all on the pixel `nearest_mode` picks (the
        // left one at a whole coordinate)
        if let Some(nm) = nearest {
            let right = t != 0.0
                && match nm {
                    "round_prefer_floor" => t > 0.5,
                    "round_prefer_ceil" => t >= 0.5,
                    "floor" => false,
                    _ => true,
                };
            t = if right { 1.0 } else { 0.0 };
        }
        let i0 = (f as i64).clamp(0, inw - 1);
        let i1 = (f as i64).saturating_add(1).clamp(0, inw - 1);
        lo.push(i0);
        hi.push(i1);
        wl.push(1.0 - t);
        wh.push(t);
        outside.push(if ext { 1.0 } else { 0.0 });
    }
    cd[a] = p.out;
    let mut wd = vec![1i64; cd.len()];
    wd[a] = p.out;
    let gp = || vec![kv("axis", p_int(a as i64))];
    let name = |cx: &mut Tx, l: bool| if l { o.to_string() } else { cx.fresh(o) };
    let ext = outside.iter().any(|&v| v != 0.0);
    if nearest.is_some() {
        // one gather of the picked indices
        for (l, (&hv, &w)) in lo.iter_mut().zip(hi.iter().zip(&wh)) {
            if w != 0.0 {
                *l = hv;
            }
        }
        wh.iter_mut().for_each(|w| *w = 0.0);
    }
    let only_left = wh.iter().all(|&t| t == 0.0);
    let il = cx.const_i32(o, &[lo.len()], &lo)?;
    let done_at_gather = only_left && !ext;
    let hint = name(cx, last && done_at_gather);
    let left = cx.emit("gather", &hint, &[x, il], gp(), cd)?;
    if done_at_gather {
        return Ok(left);
    }
    let mut cur = left;
    if !only_left {
        let ih = cx.const_i32(o, &[hi.len()], &hi)?;
        let right = cx.tmp("gather", o, &[x, ih], gp(), cd)?;
        let cl = cx.const_f32(o, &wd, &wl)?;
        let ch = cx.const_f32(o, &wd, &wh)?;
        let pl = cx.tmp("mul", o, &[left, cl], vec![], cd)?;
        let ph = cx.tmp("mul", o, &[right, ch], vec![], cd)?;
        let hint = name(cx, last && !ext);
        cur = cx.emit("add", &hint, &[pl, ph], vec![], cd)?;
    }
    if ext {
        let m = cx.const_e(o, elem::UINT8, &to_usize(&wd), &outside)?;
        let v = cx.const_f32(o, &vec![1; cd.len()], &[ev])?;
        let hint = name(cx, last);
        cur = cx.emit("where", &hint, &[m, v, cur], vec![], cd)?;
    }
    Ok(cur)
}

fn to_usize(d: &[i64]) -> Vec<usize> {
    d.iter().map(|&v| v.max(0) as usize).collect()
}
