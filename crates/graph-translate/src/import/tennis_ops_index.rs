//! ONNX → TenniS lowerings of indexing operators (`GatherElements`,
//! `TopK`).

use bubble_module::NodeId;

use super::LowerError;
use super::onnx_graph::{Node, elem};
use super::tennis_cx::out;
use super::tennis_cx::{Lowered, Tx, is_int, kv, p_bool, p_float, p_int, p_ints};
use super::tennis_ops_basic::axis;

fn product(d: &[i64]) -> Result<i64, LowerError> {
    d.iter().try_fold(1i64, |a, &v| {
        a.checked_mul(v)
            .ok_or(LowerError::TooLarge("a size that overflows"))
    })
}

/// `GatherElements` → `gather_elements`. TenniS's kernel reads x as
/// `[A, X, W]` around the axis and writes one element per `(a, w)`: it
/// computes ONNX's operator only for indices of length 1 along the axis.
/// For K indices per position x is broadcast to `[A, K, X, W]` and
/// gathered as `[A·K, X, W]` with indices `[A·K, 1, W]` (negative indices
/// count from the end in both). Indices narrower than x on another axis
/// are refused.
pub(crate) fn gather_elements(cx: &mut Tx, node: &Node) -> Lowered {
    let (x, e) = cx.tin(node, 0)?;
    let (idx, ei) = cx.tin(node, 1)?;
    if !is_int(ei) {
        return Err(LowerError::Other(format!(
            "{} indices",
            onnx_format::dtype::onnx_name(ei)
        )));
    }
    let d = cx.in_shape(node, 0)?;
    let di = cx.in_shape(node, 1)?;
    if d.iter().chain(&di).any(|&v| v < 1) {
        return Err(LowerError::NeedsInputShape {
            what: "symbolic or empty dimensions",
            plural: true,
        });
    }
    let a = axis(node.int("axis", 0), d.len())?;
    if di.len() != d.len()
        || d.iter()
            .zip(&di)
            .enumerate()
            .any(|(i, (x, y))| i != a && x != y)
    {
        return Err(LowerError::Other(format!(
            "indices of shape {:?} for data of shape {:?} (TenniS needs equal sizes off the axis)",
            di, d
        )));
    }
    let o = out(node)?.to_string();
    let (aa, xx, ww, k) = (product(&d[..a])?, d[a], product(&d[a + 1..])?, di[a]);
    let ak = aa
        .checked_mul(k)
        .ok_or(LowerError::TooLarge("a size that overflows"))?;
    let mut xr = x;
    if k != 1 {
        let r = cx.fresh(&o);
        let x4 = cx.reshape(&r, x, &[aa, 1, xx, ww])?;
        let sh = cx.const_i32(&o, &[4], &[aa, k, xx, ww])?;
        let b = cx.tmp_e("broadcast", &o, &[x4, sh], vec![], &[aa, k, xx, ww], e)?;
        xr = b;
    }
    let r = cx.fresh(&o);
    let x3 = cx.reshape(&r, xr, &[ak, xx, ww])?;
    let r = cx.fresh(&o);
    let i3 = cx.reshape(&r, idx, &[ak, 1, ww])?;
    let g = cx.tmp_e(
        "gather_elements",
        &o,
        &[x3, i3],
        vec![kv("axis", p_int(1))],
        &[ak, 1, ww],
        e,
    )?;
    cx.reshape(&o, g, &di)?;
    cx.set_elem(&o, e);
    Ok(())
}

/// `_transpose` of `x` (shape `d`) by `perm`.
fn permute(
    cx: &mut Tx,
    hint: &str,
    x: NodeId,
    d: &[i64],
    perm: &[i64],
    e: i32,
) -> Result<(NodeId, Vec<i64>), LowerError> {
    let nd: Vec<i64> = perm.iter().map(|&p| d[p as usize]).collect();
    let id = cx.tmp_e(
        "_transpose",
        hint,
        &[x],
        vec![kv("permute", p_ints(perm))],
        &nd,
        e,
    )?;
    Ok((id, nd))
}

/// `TopK` → `topkv2` (the K largest along the last axis, sorted; a packed
/// output read with `_field`). Its indices order equal values as
/// `std::partial_sort` leaves them, ONNX lowest index first: the indices
/// are recomputed from the values (see [`onnx_indices`]) and cast to int64. Another axis
/// is moved last and back with `_transpose`; `largest` 0 on floats takes
/// the K largest of −x and negates them back (exact). Integer inputs with
/// `largest` 0 and `sorted` 0 are refused (TenniS always sorts; ONNX
/// leaves the order open).
pub(crate) fn topk(cx: &mut Tx, node: &Node) -> Lowered {
    let (x, e) = cx.tin(node, 0)?;
    if e == elem::BOOL {
        return Err("a BOOL input".into());
    }
    let d = cx.in_shape(node, 0)?;
    if d.is_empty() || d.iter().any(|&v| v < 1) {
        return Err(LowerError::needs_shape("a scalar, empty or symbolic input"));
    }
    let a = axis(node.int("axis", -1), d.len())?;
    let k = if cx.opset >= 10 {
        match cx.const_ints(node, 1).as_deref() {
            Some([k]) => *k,
            Some(v) => return Err(LowerError::Other(format!("K {v:?}"))),
            None => return Err(LowerError::NotConstant { what: "K" }),
        }
    } else {
        node.int("k", 0)
    };
    if k < 1 || k > d[a] {
        return Err(LowerError::Other(format!("K {k} for an axis of {}", d[a])));
    }
    if node.int("sorted", 1) == 0 {
        return Err("sorted 0 (TenniS sorts; ONNX's order is open)".into());
    }
    let largest = node.int("largest", 1) != 0;
    let fl = e == elem::FLOAT || e == elem::DOUBLE;
    if !largest && !fl {
        return Err(LowerError::Other(format!(
            "largest 0 on {} (only float inputs negate exactly)",
            onnx_format::dtype::onnx_name(e)
        )));
    }
    let hint = super::tennis_cx::read_out(node)?;
    let last = d.len() - 1;
    let mut perm: Vec<i64> = (0..d.len() as i64).collect();
    perm.swap(a, last);
    let (mut xi, mut xd) = (x, d.clone());
    if a != last {
        (xi, xd) = permute(cx, &hint, x, &d, &perm, e)?;
    }
    if !largest {
        let m = cx.const_e(&hint, e, &[], &[-1.0])?;
        xi = cx.tmp_e("mul", &hint, &[xi, m], vec![], &xd, e)?;
    }
    let mut kd = xd.clone();
    kd[last] = k;
    let params = vec![kv("number", p_int(k)), kv("sorted", p_int(1))];
    let packed = cx.tmp_e("topkv2", &hint, &[xi], params, &kd, e)?;
    let vals = cx.tmp_e(
        "_field",
        &hint,
        &[packed],
        vec![kv("offset", p_int(0))],
        &kd,
        e,
    )?;
    let mut od = d.clone();
    od[a] = k;
    for (i, o) in node.outputs.iter().enumerate().take(2) {
        if o.is_empty() {
            continue;
        }
        let ei = if i == 0 { e } else { elem::FLOAT };
        let mut v = if i == 0 {
            vals
        } else {
            onnx_indices(cx, &hint, xi, vals, &xd, k, e)?
        };
        if i == 0 && !largest {
            let m = cx.const_e(&hint, e, &[], &[-1.0])?;
            v = cx.tmp_e("mul", &hint, &[v, m], vec![], &kd, e)?;
        }
        if a != last {
            v = permute(cx, &hint, v, &kd, &perm, ei)?.0;
        }
        if i == 0 {
            cx.emit_e("_copy", o, &[v], vec![], &od, e)?;
        } else {
            cx.emit_e(
                "_cast",
                o,
                &[v],
                vec![kv("dtype", p_int(7))],
                &od,
                elem::INT64,
            )?;
        }
    }
    Ok(())
}

/// The ONNX indices of the sorted top values `v` (`[.., K]`) of `x`
/// (`[.., W]`, last axis): the j-th value `v_j` is the `(j − G_j)`-th
/// occurrence (0-based), in index order, of `v_j` in x, where `G_j` counts
/// the elements greater than `v_j`. With `eq[j, i] = (x_i == v_j)` and its
/// running count `R` along i (`gemm` with an upper-triangular matrix of
/// ones), the index is `Σ_i i · eq[j, i] · (R[j, i] == j − G_j + 1)`. All
/// in f32 on counts below 2^24, exact; the result is f32.
fn onnx_indices(
    cx: &mut Tx,
    hint: &str,
    x: NodeId,
    v: NodeId,
    xd: &[i64],
    k: i64,
    e: i32,
) -> Result<NodeId, LowerError> {
    let last = xd.len() - 1;
    let w = xd[last];
    // the running count takes a [W, W] constant: bounded
    if w > 4096 {
        return Err(LowerError::Other(format!(
            "an axis of {w} with its indices read (the import orders equal values with a {w}×{w} matrix; at most 4096)"
        )));
    }
    let outer = product(&xd[..last])?;
    let p = outer
        .checked_mul(k)
        .ok_or(LowerError::TooLarge("a size that overflows"))?;
    let mut de: Vec<i64> = xd[..last].to_vec();
    let mut dv = de.clone();
    let mut dkw = de.clone();
    let mut dk1 = de.clone();
    de.extend([1, w]);
    dv.extend([k, 1]);
    dkw.extend([k, w]);
    dk1.extend([k, 1]);
    let r = cx.fresh(hint);
    let xe = cx.reshape(&r, x, &de)?;
    let r = cx.fresh(hint);
    let ve = cx.reshape(&r, v, &dv)?;
    let f = |cx: &mut Tx, b: NodeId| {
        cx.tmp_e(
            "_cast",
            hint,
            &[b],
            vec![kv("dtype", p_int(10))],
            &dkw,
            elem::FLOAT,
        )
    };
    let eq = cx.tmp_e("equal", hint, &[xe, ve], vec![], &dkw, elem::BOOL)?;
    let eqf = f(cx, eq)?;
    let m = cx.tmp_e("maximum", hint, &[xe, ve], vec![], &dkw, e)?;
    let ge = cx.tmp_e("equal", hint, &[m, xe], vec![], &dkw, elem::BOOL)?;
    let gef = f(cx, ge)?;
    let gt = cx.tmp("sub", hint, &[gef, eqf], vec![], &dkw)?;
    let sum = |cx: &mut Tx, t: NodeId| {
        cx.tmp(
            "reduce_sum",
            hint,
            &[t],
            vec![
                kv("dims", p_ints(&[last as i64 + 1])),
                kv("keep_dims", p_bool(true)),
            ],
            &dk1,
        )
    };
    let g = sum(cx, gt)?;
    // the wanted occurrence, 1-based: j + 1 − G_j
    let js: Vec<f64> = (1..=k).map(|j| j as f64).collect();
    let jc = cx.const_f32(hint, &[k, 1], &js)?;
    let t = cx.tmp("sub", hint, &[jc, g], vec![], &dk1)?;
    // running count of equal elements along the axis
    let mut tri = vec![0.0; (w * w) as usize];
    for a in 0..w {
        for b in a..w {
            tri[(a * w + b) as usize] = 1.0;
        }
    }
    let tri = cx.const_f32(hint, &[w, w], &tri)?;
    let r = cx.fresh(hint);
    let e2 = cx.reshape(&r, eqf, &[p, w])?;
    let zero = cx.scalar(hint, 0.0)?;
    let params = vec![
        kv("alpha", p_float(1.0)),
        kv("beta", p_float(0.0)),
        kv("transA", p_bool(false)),
        kv("transB", p_bool(false)),
    ];
    let run = cx.tmp("gemm", hint, &[e2, tri, zero], params, &[p, w])?;
    let r = cx.fresh(hint);
    let run = cx.reshape(&r, run, &dkw)?;
    let hit = cx.tmp_e("equal", hint, &[run, t], vec![], &dkw, elem::BOOL)?;
    let hitf = f(cx, hit)?;
    let sel = cx.tmp("mul", hint, &[hitf, eqf], vec![], &dkw)?;
    let pos: Vec<f64> = (0..w).map(|i| i as f64).collect();
    let pos = cx.const_f32(hint, &[w], &pos)?;
    let wsel = cx.tmp("mul", hint, &[sel, pos], vec![], &dkw)?;
    let idx = sum(cx, wsel)?;
    let mut kd = xd.to_vec();
    kd[last] = k;
    let r = cx.fresh(hint);
    cx.reshape(&r, idx, &kd)
}

/// Index tuples `idx` (`[.., q]`, integer type `e`) with negative entries
/// wrapped by the sizes `bounds` (`q` of them): `where(maximum(i, 0) == i,
/// i, i + size)` (TenniS's `gatherv2` and `scatter_nd` read negative
/// indices out of bounds), then cast to int32.
fn wrap_indices(
    cx: &mut Tx,
    hint: &str,
    idx: NodeId,
    di: &[i64],
    bounds: &[i64],
    e: i32,
) -> Result<NodeId, LowerError> {
    let r = di.len();
    let q = bounds.len();
    let mut bd = vec![1usize; r];
    bd[r - 1] = q;
    let bv: Vec<f64> = bounds.iter().map(|&b| b as f64).collect();
    let b = cx.const_e(hint, e, &bd, &bv)?;
    let zero = cx.const_e(hint, e, &vec![1usize; r], &[0.0])?;
    let added = cx.tmp_e("add", hint, &[idx, b], vec![], di, e)?;
    let m = cx.tmp_e("maximum", hint, &[idx, zero], vec![], di, e)?;
    let nonneg = cx.tmp_e("equal", hint, &[m, idx], vec![], di, elem::BOOL)?;
    let w = cx.tmp_e("where", hint, &[nonneg, idx, added], vec![], di, e)?;
    cx.tmp_e(
        "_cast",
        hint,
        &[w],
        vec![kv("dtype", p_int(5))],
        di,
        elem::INT32,
    )
}

/// Constant index tuples (`[.., q]`) wrapped by `bounds` and checked to
/// be in range, as an int32 `<const>`.
fn const_indices(
    cx: &mut Tx,
    hint: &str,
    v: &[i64],
    di: &[i64],
    bounds: &[i64],
) -> Result<NodeId, LowerError> {
    let q = bounds.len();
    let w: Vec<i64> = v
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let b = bounds[i % q];
            let y = if x < 0 { x + b } else { x };
            if (0..b).contains(&y) {
                Ok(y)
            } else {
                Err(LowerError::IndexOutOfRange {
                    index: x,
                    of: "size",
                    size: b,
                })
            }
        })
        .collect::<Result<_, _>>()?;
    let ud: Vec<usize> = di.iter().map(|&d| d as usize).collect();
    cx.const_i32(hint, &ud, &w)
}

/// The indices input `i` of `node` as TenniS int32 index tuples over the
/// sizes `bounds`.
fn indices(
    cx: &mut Tx,
    node: &Node,
    i: usize,
    hint: &str,
    bounds: &[i64],
) -> Result<NodeId, LowerError> {
    let di = cx.in_shape(node, i)?;
    if let Some(v) = cx.const_ints(node, i) {
        return const_indices(cx, hint, &v, &di, bounds);
    }
    let (idx, ei) = cx.tin(node, i)?;
    if !is_int(ei) {
        return Err(LowerError::Other(format!(
            "{} indices",
            onnx_format::dtype::onnx_name(ei)
        )));
    }
    wrap_indices(cx, hint, idx, &di, bounds, ei)
}

fn static_dims(cx: &Tx, node: &Node, i: usize) -> Result<Vec<i64>, LowerError> {
    let d = cx.in_shape(node, i)?;
    if d.iter().any(|&v| v < 1) {
        return Err(LowerError::NeedsInputShape {
            what: "symbolic or empty dimensions",
            plural: true,
        });
    }
    Ok(d)
}

/// `GatherND` (`batch_dims` 0) → `gatherv2` (the same operation; negative
/// indices wrapped first, see [`wrap_indices`]).
pub(crate) fn gather_nd(cx: &mut Tx, node: &Node) -> Lowered {
    let bd = node.int("batch_dims", 0);
    if bd != 0 {
        return Err(LowerError::Other(format!(
            "batch_dims {bd} (TenniS's gatherv2 has none)"
        )));
    }
    let (x, e) = cx.tin(node, 0)?;
    let d = static_dims(cx, node, 0)?;
    let di = static_dims(cx, node, 1)?;
    let q = *di.last().ok_or("scalar indices")?;
    let q = usize::try_from(q).map_err(|_| "indices' last size")?;
    if q > d.len() {
        return Err(LowerError::Other(format!(
            "index tuples of {q} for a rank-{} input",
            d.len()
        )));
    }
    let o = out(node)?.to_string();
    let idx = indices(cx, node, 1, &o, &d[..q])?;
    let mut od = di[..di.len() - 1].to_vec();
    od.extend_from_slice(&d[q..]);
    cx.emit_e("gatherv2", &o, &[x, idx], vec![], &od, e)?;
    Ok(())
}

/// `ScatterND` (`reduction` none) → `scatter_nd`, which copies slice `i`
/// of the updates to slice `indices[i]` of axis 0: x is viewed as `[X,
/// rest]` with `X` the product of the `q` indexed sizes, the index tuples
/// made linear (`Σ_k i_k · stride_k`, in the indices' type; negative
/// entries wrapped first) and the updates viewed as `[n, rest]`.
/// Duplicate indices: the last update wins in both.
pub(crate) fn scatter_nd(cx: &mut Tx, node: &Node) -> Lowered {
    let red = node.string("reduction", "none");
    if red != "none" {
        return Err(LowerError::Other(format!(
            "reduction {red} (TenniS's scatter_nd copies)"
        )));
    }
    let (x, e) = cx.tin(node, 0)?;
    let (u, eu) = cx.tin(node, 2)?;
    if e != eu {
        return Err("updates of another type".into());
    }
    let d = static_dims(cx, node, 0)?;
    let di = static_dims(cx, node, 1)?;
    let du = static_dims(cx, node, 2)?;
    let q = usize::try_from(*di.last().ok_or("scalar indices")?).map_err(|_| "indices")?;
    if q > d.len() || q == 0 {
        return Err(LowerError::Other(format!(
            "index tuples of {q} for a rank-{} input",
            d.len()
        )));
    }
    let o = out(node)?.to_string();
    let n = product(&di[..di.len() - 1])?;
    let xx = product(&d[..q])?;
    let mut rest = d[q..].to_vec();
    let mut want = di[..di.len() - 1].to_vec();
    want.extend_from_slice(&rest);
    if du != want {
        return Err(LowerError::Other(format!(
            "updates of shape {du:?}, not {want:?}"
        )));
    }
    // strides of the q indexed axes
    let mut strides = vec![1i64; q];
    for k in (0..q.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1]
            .checked_mul(d[k + 1])
            .ok_or(LowerError::TooLarge("a size that overflows"))?;
    }
    let lin = if let Some(v) = cx.const_ints(node, 1) {
        let mut l = Vec::new();
        for t in v.chunks(q) {
            let mut s = 0i64;
            for (k, &i) in t.iter().enumerate() {
                let i = if i < 0 { i + d[k] } else { i };
                if !(0..d[k]).contains(&i) {
                    return Err(LowerError::Other(format!(
                        "index {i} out of range for a size of {}",
                        d[k]
                    )));
                }
                s += i * strides[k];
            }
            l.push(s);
        }
        cx.const_i32(&o, &[n as usize], &l)?
    } else {
        let w = indices(cx, node, 1, &o, &d[..q])?;
        let r = cx.fresh(&o);
        let w = cx.reshape(&r, w, &[n, q as i64])?;
        cx.set_elem(&r, elem::INT32);
        let sv: Vec<f64> = strides.iter().map(|&s| s as f64).collect();
        let sc = cx.const_e(&o, elem::INT32, &[1, q], &sv)?;
        let m = cx.tmp_e("mul", &o, &[w, sc], vec![], &[n, q as i64], elem::INT32)?;
        let mut acc = None;
        for k in 0..q as i64 {
            let col = cx.tmp_e(
                "strided_slice",
                &o,
                &[m],
                vec![
                    kv("begin", p_ints(&[0, k])),
                    kv("end", p_ints(&[n, k + 1])),
                    kv("stride", p_ints(&[1, 1])),
                ],
                &[n, 1],
                elem::INT32,
            )?;
            acc = Some(match acc {
                None => col,
                Some(a) => cx.tmp_e("add", &o, &[a, col], vec![], &[n, 1], elem::INT32)?,
            });
        }
        let r = cx.fresh(&o);
        let l = acc.ok_or(LowerError::absent("index"))?;
        cx.reshape(&r, l, &[n])?
    };
    let mut xd = vec![xx];
    xd.append(&mut rest.clone());
    let r = cx.fresh(&o);
    let x2 = cx.reshape(&r, x, &xd)?;
    let mut ud = vec![n];
    ud.append(&mut rest);
    let r = cx.fresh(&o);
    let u2 = cx.reshape(&r, u, &ud)?;
    let s = cx.tmp_e("scatter_nd", &o, &[x2, lin, u2], vec![], &xd, e)?;
    cx.reshape(&o, s, &d)?;
    cx.set_elem(&o, e);
    Ok(())
}

/// `RoiAlign` (average mode, `output_half_pixel` coordinates, ONNX's only
/// mode before operator set 16) → `roi_align` (`pool_h`, `pool_w`,
/// `spatial_scale`, `sampling_ratio`; 0 adapts to the roi as ONNX's) on
/// rois `[n, 5]` = the batch index (as f32) before the four corners.
/// Max mode and `half_pixel` coordinates are refused (TenniS has neither).
pub(crate) fn roi_align(cx: &mut Tx, node: &Node) -> Lowered {
    let mode = node.string("mode", "avg");
    if mode != "avg" {
        return Err(LowerError::Other(format!(
            "mode {mode} (TenniS's roi_align averages)"
        )));
    }
    let ctm = node.string(
        "coordinate_transformation_mode",
        if cx.opset >= 16 {
            "half_pixel"
        } else {
            "output_half_pixel"
        },
    );
    if ctm != "output_half_pixel" {
        return Err(LowerError::Other(format!(
            "coordinate_transformation_mode {ctm} (TenniS's roi_align has no half-pixel offset)"
        )));
    }
    let x = cx.fin(node, 0)?;
    let rois = cx.fin(node, 1)?;
    let d = static_dims(cx, node, 0)?;
    let dr = static_dims(cx, node, 1)?;
    let db = static_dims(cx, node, 2)?;
    if d.len() != 4 || dr.len() != 2 || dr[1] != 4 || db != [dr[0]] {
        return Err("inputs that are not [N, C, H, W], [n, 4] and [n]".into());
    }
    if d[0] >= 1 << 24 {
        return Err("a batch beyond f32's exact integers".into());
    }
    let (bi, eb) = cx.tin(node, 2)?;
    if !is_int(eb) {
        return Err("batch indices that are not integers".into());
    }
    let (ph, pw) = (node.int("output_height", 1), node.int("output_width", 1));
    let ratio = node.int("sampling_ratio", 0);
    if ph < 1 || pw < 1 || ratio < 0 {
        return Err(LowerError::Other(format!(
            "output_height {ph}, output_width {pw}, sampling_ratio {ratio}"
        )));
    }
    let o = out(node)?.to_string();
    let n = dr[0];
    let r = cx.fresh(&o);
    let b2 = cx.reshape(&r, bi, &[n, 1])?;
    let bf = cx.tmp_e(
        "_cast",
        &o,
        &[b2],
        vec![kv("dtype", p_int(10))],
        &[n, 1],
        elem::FLOAT,
    )?;
    let r5 = cx.tmp(
        "concat",
        &o,
        &[bf, rois],
        vec![kv("dim", p_int(1))],
        &[n, 5],
    )?;
    let params = vec![
        kv("pool_h", p_int(ph)),
        kv("pool_w", p_int(pw)),
        kv("spatial_scale", p_float(node.float("spatial_scale", 1.0))),
        kv("sampling_ratio", p_int(ratio)),
    ];
    cx.emit("roi_align", &o, &[x, r5], params, &[n, d[1], ph, pw])?;
    Ok(())
}

/// `Gather` with indices computed at run time → `gather` (TenniS's reads
/// an index below 0 out of bounds: negative indices wrapped first by the
/// axis length, see [`wrap_indices`]).
pub(crate) fn gather_dyn(cx: &mut Tx, node: &Node, x: NodeId, d: &[i64], a: usize) -> Lowered {
    let (idx, ei) = cx.tin(node, 1)?;
    if !is_int(ei) {
        return Err(LowerError::Other(format!(
            "{} indices",
            onnx_format::dtype::onnx_name(ei)
        )));
    }
    let di = static_dims(cx, node, 1).or_else(|e| {
        // 0-d indices: a scalar
        if cx.in_shape(node, 1)?.is_empty() {
            Ok(Vec::new())
        } else {
            Err(e)
        }
    })?;
    let o = out(node)?.to_string();
    let e = node.input(0).map_or(elem::FLOAT, |n| cx.elem(n));
    // wrap as index tuples of one entry: [.., 1]
    let mut d1 = di.clone();
    d1.push(1);
    let r = cx.fresh(&o);
    let i1 = cx.reshape(&r, idx, &d1)?;
    cx.set_elem(&r, ei);
    let w = wrap_indices(cx, &o, i1, &d1, &[d[a]], ei)?;
    let r = cx.fresh(&o);
    let w = cx.reshape(&r, w, &di)?;
    let mut od: Vec<i64> = d[..a].to_vec();
    od.extend_from_slice(&di);
    od.extend_from_slice(&d[a + 1..]);
    cx.emit_e(
        "gather",
        &o,
        &[x, w],
        vec![kv("axis", p_int(a as i64))],
        &od,
        e,
    )?;
    Ok(())
}
