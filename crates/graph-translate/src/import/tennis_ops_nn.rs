//! ONNX → TenniS lowerings: convolution, pooling, matrix products and
//! batch normalisation (NCHW, 2-D spatial).

use super::onnx_graph::Node;
use super::tennis_cx::out;
use super::tennis_cx::{Lowered, Tx, kv, p_bool, p_float, p_int, p_ints, p_pad, p_str};
use super::{LowerError, dims};

/// The window of a 2-D convolution or pooling: pads `[top, left, bottom,
/// right]` resolved from `auto_pad`, strides, dilations, kernel.
pub(crate) struct Window {
    pub(crate) pads: [i64; 4],
    pub(crate) strides: [i64; 2],
    pub(crate) dil: [i64; 2],
}

fn two(v: Option<Vec<i64>>, def: i64, what: &str) -> Result<[i64; 2], LowerError> {
    match v {
        None => Ok([def, def]),
        Some(v) if v.len() == 2 => Ok([v[0], v[1]]),
        Some(v) => Err(LowerError::Other(format!(
            "{what} {v:?} (only 2-D windows)"
        ))),
    }
}

pub(crate) fn window(node: &Node, hw: [i64; 2], k: [i64; 2]) -> Result<Window, LowerError> {
    let strides = two(node.ints("strides"), 1, "strides")?;
    let dil = two(node.ints("dilations"), 1, "dilations")?;
    if strides.iter().chain(&dil).chain(&k).any(|&v| v < 1) {
        return Err("non-positive strides, dilations or kernel".into());
    }
    dims::check_window(&strides, &dil, &k)?;
    let auto = node.string("auto_pad", "NOTSET");
    let pads = match auto.as_str() {
        "NOTSET" | "" => match node.ints("pads") {
            None => [0; 4],
            Some(p) if p.len() == 4 && p.iter().all(|&v| v >= 0) => [p[0], p[1], p[2], p[3]],
            Some(p) => return Err(LowerError::value("pads", format!("{p:?}"))),
        },
        "VALID" => [0; 4],
        "SAME_UPPER" | "SAME_LOWER" => {
            let mut p = [0; 4];
            for i in 0..2 {
                let o = (hw[i] + strides[i] - 1) / strides[i];
                let need = ((o - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - hw[i]).max(0);
                let small = need / 2;
                let (b, e) = if auto == "SAME_UPPER" {
                    (small, need - small)
                } else {
                    (need - small, small)
                };
                p[i] = b;
                p[i + 2] = e;
            }
            p
        }
        a => return Err(LowerError::value("auto_pad", a)),
    };
    dims::check_pads(&pads)?;
    Ok(Window { pads, strides, dil })
}

/// TenniS's `[4, 2]` padding of an NCHW tensor.
pub(crate) fn padding(p: &[i64; 4]) -> Vec<i64> {
    vec![0, 0, 0, 0, p[0], p[2], p[1], p[3]]
}

pub(crate) fn nchw(cx: &Tx, node: &Node) -> Result<Vec<i64>, LowerError> {
    let d = cx.in_shape(node, 0)?;
    if d.len() != 4 {
        return Err(LowerError::Other(format!(
            "a rank-{} input (TenniS's convolutions and pools are 2-D: NCHW images only)",
            d.len()
        )));
    }
    if d[2] < 0 || d[3] < 0 {
        return Err("a symbolic spatial dimension".into());
    }
    Ok(d)
}

/// The NCHW input dimensions of a 2-D convolution `node`, its 4-D
/// weights' (each at least 1 when `positive`); `kernel_shape` must
/// repeat the weights' last two.
fn nchw_kernel(cx: &Tx, node: &Node, positive: bool) -> Result<(Vec<i64>, Vec<i64>), LowerError> {
    let d = nchw(cx, node)?;
    let wd = cx.in_shape(node, 1)?;
    if wd.len() != 4 || (positive && wd.iter().any(|&v| v < 1)) {
        return Err("weights that are not 4-D".into());
    }
    let k = [wd[2], wd[3]];
    if let Some(ks) = node.ints("kernel_shape")
        && ks != k
    {
        return Err(LowerError::Other(format!(
            "kernel_shape {ks:?} unlike the weights"
        )));
    }
    Ok((d, wd))
}

/// `Conv` (2-D) → `conv2d` or `depthwise_conv2d`, then `add_bias`.
pub(crate) fn conv(cx: &mut Tx, node: &Node) -> Lowered {
    let (d, wd) = nchw_kernel(cx, node, false)?;
    let k = [wd[2], wd[3]];
    let w = window(node, [d[2], d[3]], k)?;
    let group = node.int("group", 1);
    let o = out(node)?.to_string();
    let x = cx.fin(node, 0)?;
    let mut hw = [0i64; 2];
    for i in 0..2 {
        let span = d[2 + i] + w.pads[i] + w.pads[i + 2] - (k[i] - 1) * w.dil[i] - 1;
        if span < 0 {
            return Err("a window larger than the padded input".into());
        }
        hw[i] = span / w.strides[i] + 1;
    }
    let od = vec![d[0], wd[0], hw[0], hw[1]];
    let params = vec![
        kv("format", p_str("NCHW")),
        kv("padding", p_pad(&padding(&w.pads))),
        kv("stride", p_ints(&[1, 1, w.strides[0], w.strides[1]])),
        kv("dilation", p_ints(&[1, 1, w.dil[0], w.dil[1]])),
    ];
    let (op, wid) = if group == 1 {
        if wd[1] != d[1] {
            return Err("weights whose channels differ from the input's".into());
        }
        ("conv2d", cx.fin(node, 1)?)
    } else if group == d[1] && wd[1] == 1 && wd[0] == d[1] {
        // TenniS keeps depthwise weights as [1, C, kh, kw]: the same bytes.
        let c = cx.const_floats(node, 1).ok_or(LowerError::NotConstant {
            what: "depthwise weights",
        })?;
        (
            "depthwise_conv2d",
            cx.const_f32(&o, &[1, d[1], k[0], k[1]], &c)?,
        )
    } else {
        return grouped(cx, node, &o, x, &d, &wd, group, params, &od);
    };
    if node.input(2).is_some() {
        let y = cx.tmp(op, &o, &[x, wid], params, &od)?;
        let b = cx.fin(node, 2)?;
        cx.emit("add_bias", &o, &[y, b], vec![kv("dim", p_int(1))], &od)?;
    } else {
        cx.emit(op, &o, &[x, wid], params, &od)?;
    }
    Ok(())
}

/// A grouped `Conv` (neither 1 group nor depthwise): the input split
/// into its groups along the channels (`strided_slice`), one `conv2d` per
/// group with its slice of the (constant) weights, `concat` along the
/// channels, then `add_bias`.
#[allow(clippy::too_many_arguments)]
fn grouped(
    cx: &mut Tx,
    node: &Node,
    o: &str,
    x: bubble_module::NodeId,
    d: &[i64],
    wd: &[i64],
    group: i64,
    params: Vec<(String, bubble_module::Packed<'static>)>,
    od: &[i64],
) -> Lowered {
    if group < 1 || d[1] < 0 || d[1] % group != 0 || wd[0] % group != 0 {
        return Err(LowerError::Other(format!(
            "group {group} that does not divide {} input and {} output channels",
            d[1], wd[0]
        )));
    }
    let (cg, mg) = (d[1] / group, wd[0] / group);
    if wd[1] != cg {
        return Err("weights whose channels differ from the input's per group".into());
    }
    if group > 4096 {
        return Err(LowerError::Other(format!(
            "group {group} (more than 4096 convolutions)"
        )));
    }
    // Constant weights are cut into one `<const>` per group; weights
    // computed at run time are sliced like the input.
    let wconst = cx.const_floats(node, 1);
    let wnode = if wconst.is_none() {
        Some(cx.fin(node, 1)?)
    } else {
        None
    };
    let per = [mg, cg, wd[2], wd[3]]
        .iter()
        .try_fold(1i64, |p, &v| p.checked_mul(v))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(LowerError::TooLarge("weights whose size overflows"))?;
    if let Some(w) = &wconst
        && w.len() != per * group as usize
    {
        return Err("weights whose size does not match their shape".into());
    }
    let big = i64::from(i32::MAX);
    let mut parts = Vec::new();
    for g in 0..group {
        let gi = g as usize;
        let xs = cx.tmp(
            "strided_slice",
            o,
            &[x],
            vec![
                kv("begin", p_ints(&[0, g * cg, 0, 0])),
                kv(
                    "end",
                    p_ints(&[
                        i64::from(i32::MAX),
                        (g + 1) * cg,
                        i64::from(i32::MAX),
                        i64::from(i32::MAX),
                    ]),
                ),
                kv("stride", p_ints(&[1, 1, 1, 1])),
            ],
            &[d[0], cg, d[2], d[3]],
        )?;
        let wdims = [mg, cg, wd[2], wd[3]];
        let wg = match (&wconst, wnode) {
            (Some(w), _) => cx.const_f32(o, &wdims, &w[gi * per..(gi + 1) * per])?,
            (None, Some(wn)) => cx.tmp(
                "strided_slice",
                o,
                &[wn],
                vec![
                    kv("begin", p_ints(&[g * mg, 0, 0, 0])),
                    kv("end", p_ints(&[(g + 1) * mg, big, big, big])),
                    kv("stride", p_ints(&[1, 1, 1, 1])),
                ],
                &wdims,
            )?,
            (None, None) => return Err(LowerError::absent("weights")),
        };
        let gd = [od[0], mg, od[2], od[3]];
        parts.push(cx.tmp("conv2d", o, &[xs, wg], params.clone(), &gd)?);
    }
    if node.input(2).is_some() {
        let y = cx.tmp("concat", o, &parts, vec![kv("dim", p_int(1))], od)?;
        let b = cx.fin(node, 2)?;
        cx.emit("add_bias", o, &[y, b], vec![kv("dim", p_int(1))], od)?;
    } else {
        cx.emit("concat", o, &parts, vec![kv("dim", p_int(1))], od)?;
    }
    Ok(())
}

/// `MaxPool` (`max`), `AveragePool` (2-D) → `pooling2d`. TenniS rounds the
/// output size up; a floor-rounded ONNX pooling is written with its
/// bottom/right padding reduced so that both agree, and refused when it
/// cannot be.
pub(crate) fn pool(cx: &mut Tx, node: &Node, max: bool) -> Lowered {
    let d = nchw(cx, node)?;
    if node.has_output(1) {
        return Err("its Indices output".into());
    }
    let k = two(node.ints("kernel_shape"), 0, "kernel_shape")?;
    let mut w = window(node, [d[2], d[3]], k)?;
    if w.dil != [1, 1] {
        return Err("dilations".into());
    }
    let ceil = node.int("ceil_mode", 0) != 0;
    let avg = !max;
    let include = avg && node.int("count_include_pad", 0) != 0;
    let mut hw = [0i64; 2];
    // rows (columns) cut from the input's end: floor rounding ignores them
    let mut crop = [0i64; 2];
    for i in 0..2 {
        let span = d[2 + i] + w.pads[i] + w.pads[i + 2] - k[i];
        if span < 0 {
            return Err("a window larger than the padded input".into());
        }
        let s = w.strides[i];
        let r = span % s;
        if ceil {
            let mut o = (span + s - 1) / s + 1;
            // ONNX drops a last window that starts in the end padding.
            if (o - 1) * s >= d[2 + i] + w.pads[i] {
                o -= 1;
            }
            if o != (span + s - 1) / s + 1 {
                return Err("ceil_mode with a last window in the padding".into());
            }
            if include && r != 0 {
                return Err("ceil_mode with count_include_pad past the padding".into());
            }
            hw[i] = o;
        } else {
            // Floor rounding leaves the last `r` cells (end padding first,
            // then input) in no window: without them TenniS's ceiling
            // rounding gives the same windows.
            let cut_pad = r.min(w.pads[i + 2]);
            w.pads[i + 2] -= cut_pad;
            crop[i] = r - cut_pad;
            hw[i] = span / s + 1;
        }
    }
    let mut x = cx.fin(node, 0)?;
    if crop != [0, 0] {
        let big = i64::from(i32::MAX);
        x = cx.tmp(
            "strided_slice",
            out(node)?,
            &[x],
            vec![
                kv("begin", p_ints(&[0, 0, 0, 0])),
                kv("end", p_ints(&[big, big, d[2] - crop[0], d[3] - crop[1]])),
                kv("stride", p_ints(&[1, 1, 1, 1])),
            ],
            &[d[0], d[1], d[2] - crop[0], d[3] - crop[1]],
        )?;
    }
    let od = vec![d[0], d[1], hw[0], hw[1]];
    cx.emit(
        "pooling2d",
        out(node)?,
        &[x],
        vec![
            kv("format", p_str("NCHW")),
            kv("type", p_int(i64::from(avg))),
            kv("padding", p_pad(&padding(&w.pads))),
            kv("padding_type", p_int(if include { 3 } else { 0 })),
            kv("ksize", p_ints(&[1, 1, k[0], k[1]])),
            kv("stride", p_ints(&[1, 1, w.strides[0], w.strides[1]])),
        ],
        &od,
    )?;
    Ok(())
}

/// `GlobalMaxPool` (`max`), `GlobalAveragePool` (2-D) → `global_pooling2d`
/// (other ranks: [`super::tennis_ops_reduce::global_pool_nd`]).
pub(crate) fn global_pool(cx: &mut Tx, node: &Node, max: bool) -> Lowered {
    if cx.in_shape(node, 0)?.len() != 4 {
        return super::tennis_ops_reduce::global_pool_nd(cx, node, max);
    }
    let d = nchw(cx, node)?;
    let x = cx.fin(node, 0)?;
    let ty = i64::from(!max);
    cx.emit(
        "global_pooling2d",
        out(node)?,
        &[x],
        vec![kv("format", p_str("NCHW")), kv("type", p_int(ty))],
        &[d[0], d[1], 1, 1],
    )?;
    Ok(())
}

/// `Gemm` → `gemm` (a missing C is a zero with beta 0).
pub(crate) fn gemm(cx: &mut Tx, node: &Node) -> Lowered {
    let (ad, bd) = (cx.in_shape(node, 0)?, cx.in_shape(node, 1)?);
    if ad.len() != 2 || bd.len() != 2 {
        return Err("inputs that are not matrices".into());
    }
    let ta = node.int("transA", 0) != 0;
    let tb = node.int("transB", 0) != 0;
    let (m, ka) = if ta { (ad[1], ad[0]) } else { (ad[0], ad[1]) };
    let (kb, n) = if tb { (bd[1], bd[0]) } else { (bd[0], bd[1]) };
    if ka != kb {
        return Err("inner dimensions that differ".into());
    }
    let o = out(node)?.to_string();
    let mut a = cx.fin(node, 0)?;
    let mut b = cx.fin(node, 1)?;
    // TenniS's CPU gemm mishandles transB; transposes are explicit.
    if ta {
        a = cx.tmp(
            "_transpose",
            &o,
            &[a],
            vec![kv("permute", p_ints(&[1, 0]))],
            &[m, ka],
        )?;
    }
    if tb {
        b = cx.tmp(
            "_transpose",
            &o,
            &[b],
            vec![kv("permute", p_ints(&[1, 0]))],
            &[kb, n],
        )?;
    }
    let mut beta = node.float("beta", 1.0);
    let c = if node.input(2).is_some() {
        let cd = cx.in_shape(node, 2)?;
        if cd.len() > 2 {
            return Err("a C of rank above 2".into());
        }
        cx.fin(node, 2)?
    } else {
        beta = 0.0;
        cx.scalar(&o, 0.0)?
    };
    cx.emit(
        "gemm",
        &o,
        &[a, b, c],
        vec![
            kv("alpha", p_float(node.float("alpha", 1.0))),
            kv("beta", p_float(beta)),
            kv("transA", p_bool(false)),
            kv("transB", p_bool(false)),
        ],
        &[m, n],
    )?;
    Ok(())
}

/// The most 2-D products a batched `MatMul` is unrolled into.
const MATMUL_BATCHES: i64 = 256;

/// `MatMul` (numpy semantics) → `gemm`: a vector A or B is a one-row or
/// one-column matrix; with B a matrix (or batches of one), A's leading
/// axes are flattened into rows, `gemm`, reshaped back; with batched B,
/// the batches (numpy-broadcast) are cut with `strided_slice`, multiplied
/// one by one and joined with `concat` (up to 256 of them).
pub(crate) fn matmul(cx: &mut Tx, node: &Node) -> Lowered {
    let (mut ad, mut bd) = (cx.in_shape(node, 0)?, cx.in_shape(node, 1)?);
    if ad.is_empty() || bd.is_empty() {
        return Err("a scalar operand".into());
    }
    if ad.iter().chain(&bd).any(|&v| v < 1) {
        return Err(LowerError::needs_shape("a symbolic or empty dimension"));
    }
    let o = out(node)?.to_string();
    let mut a = cx.fin(node, 0)?;
    let mut b = cx.fin(node, 1)?;
    // result shape, numpy's
    let (va, vb) = (ad.len() == 1, bd.len() == 1);
    if va {
        ad = vec![1, ad[0]];
        let r = cx.fresh(&o);
        a = cx.reshape(&r, a, &ad)?;
    }
    if vb {
        bd = vec![bd[0], 1];
        let r = cx.fresh(&o);
        b = cx.reshape(&r, b, &bd)?;
    }
    let (ra, rb) = (ad.len(), bd.len());
    let k = ad[ra - 1];
    if k != bd[rb - 2] {
        return Err("inner dimensions that differ".into());
    }
    let (m, n) = (ad[ra - 2], bd[rb - 1]);
    let batch = super::tennis_cx::broadcast(&ad[..ra - 2], &bd[..rb - 2])?;
    let mut od = batch.clone();
    if !va {
        od.push(m);
    }
    if !vb {
        od.push(n);
    }
    let params = || {
        vec![
            kv("alpha", p_float(1.0)),
            kv("beta", p_float(0.0)),
            kv("transA", p_bool(false)),
            kv("transB", p_bool(false)),
        ]
    };
    let rows_of = |d: &[i64]| {
        d.iter()
            .try_fold(1i64, |p, &v| p.checked_mul(v))
            .filter(|&r| r <= i64::from(i32::MAX))
            .ok_or_else(|| {
                format!(
                    "a shape {} whose size overflows TenniS's int32 sizes",
                    super::onnx_graph::dims_text(d)
                )
            })
    };
    let zero = cx.scalar(&o, 0.0)?;
    if rows_of(&bd[..rb - 2])? == 1 {
        // B is one matrix: A's leading axes become rows.
        let rows = rows_of(&ad[..ra - 1])?;
        if rb != 2 {
            let r = cx.fresh(&o);
            b = cx.reshape(&r, b, &[k, n])?;
        }
        if ra != 2 {
            let r = cx.fresh(&o);
            a = cx.reshape(&r, a, &[rows, k])?;
        }
        let mut full = ad[..ra - 1].to_vec();
        full.push(n);
        if full == od && ra == 2 {
            cx.emit("gemm", &o, &[a, b, zero], params(), &od)?;
        } else {
            let y = cx.tmp("gemm", &o, &[a, b, zero], params(), &[rows, n])?;
            // batches of B broadcast A's: numpy's result has them
            if rows_of(&od)? != rows * n {
                return Err("B's batch axes widening A's".into());
            }
            cx.reshape(&o, y, &od)?;
        }
        return Ok(());
    }
    let nb = rows_of(&batch)?;
    if nb > MATMUL_BATCHES {
        return Err(LowerError::Other(format!(
            "{nb} batches (at most {MATMUL_BATCHES} products are unrolled)"
        )));
    }
    // A and B as [batches..., M, K] / [batches..., K, N] of the full rank
    let r = batch.len() + 2;
    let full = |cx: &mut Tx, x, d: &[i64]| -> Result<_, LowerError> {
        if d.len() == r {
            return Ok((x, d.to_vec()));
        }
        let mut nd = vec![1; r - d.len()];
        nd.extend_from_slice(d);
        let h = cx.fresh(&o);
        Ok((cx.reshape(&h, x, &nd)?, nd))
    };
    let (a, ad) = full(cx, a, &ad)?;
    let (b, bd) = full(cx, b, &bd)?;
    let cut = |cx: &mut Tx, x, d: &[i64], idx: &[i64], rows: i64, cols: i64| {
        let mut begin = Vec::new();
        let mut end = Vec::new();
        for (ax, &i) in idx.iter().enumerate() {
            let j = if d[ax] == 1 { 0 } else { i };
            begin.push(j);
            end.push(j + 1);
        }
        begin.extend([0, 0]);
        end.extend([rows, cols]);
        let mut sd = vec![1; idx.len()];
        sd.extend([rows, cols]);
        let s = cx.tmp(
            "strided_slice",
            &o,
            &[x],
            vec![
                kv("begin", p_ints(&begin)),
                kv("end", p_ints(&end)),
                kv("stride", p_ints(&vec![1; r])),
            ],
            &sd,
        )?;
        let h = cx.fresh(&o);
        cx.reshape(&h, s, &[rows, cols])
    };
    let mut parts = Vec::new();
    for t in 0..nb {
        let mut idx = vec![0i64; batch.len()];
        let mut rem = t;
        for ax in (0..batch.len()).rev() {
            idx[ax] = rem % batch[ax];
            rem /= batch[ax];
        }
        let at = cut(cx, a, &ad, &idx, m, k)?;
        let bt = cut(cx, b, &bd, &idx, k, n)?;
        let y = cx.tmp("gemm", &o, &[at, bt, zero], params(), &[m, n])?;
        let h = cx.fresh(&o);
        parts.push(cx.reshape(&h, y, &[1, m, n])?);
    }
    let cat = if parts.len() == 1 {
        parts[0]
    } else {
        cx.tmp("concat", &o, &parts, vec![kv("dim", p_int(0))], &[nb, m, n])?
    };
    cx.reshape(&o, cat, &od)?;
    Ok(())
}

/// `BatchNormalization` (inference) → `batch_norm` then `batch_scale`.
pub(crate) fn batch_norm(cx: &mut Tx, node: &Node) -> Lowered {
    let d = cx.in_shape(node, 0)?;
    if d.len() < 2 {
        return Err("an input without a channel axis".into());
    }
    if node.outputs.iter().skip(1).any(|o| !o.is_empty()) {
        return Err("training outputs".into());
    }
    if cx.opset >= 14 && node.int("training_mode", 0) != 0 {
        return Err("training_mode".into());
    }
    // before opset 9, spatial 0 normalises every activation on its own
    if cx.opset < 9 && node.int("spatial", 1) != 1 {
        return Err("spatial 0".into());
    }
    for i in 1..5 {
        if cx.in_shape(node, i)? != [d[1]] {
            return Err("parameters whose shape is not [C]".into());
        }
    }
    let o = out(node)?.to_string();
    let x = cx.fin(node, 0)?;
    let (s, b, m, v) = (
        cx.fin(node, 1)?,
        cx.fin(node, 2)?,
        cx.fin(node, 3)?,
        cx.fin(node, 4)?,
    );
    let eps = node.float("epsilon", 1e-5);
    let n = cx.tmp(
        "batch_norm",
        &o,
        &[x, m, v],
        vec![kv("dim", p_int(1)), kv("epsilon", p_float(eps))],
        &d,
    )?;
    cx.emit("batch_scale", &o, &[n, s, b], vec![kv("dim", p_int(1))], &d)?;
    Ok(())
}

/// `LRN` over the channels of an NCHW input: the squares summed over each
/// channel window by a `conv2d` with a constant 0/1 band of `[C, C, 1, 1]`
/// weights, then x / (bias + alpha / size · sum)^beta (`mul`, `add`,
/// `pow`, `div`).
pub(crate) fn lrn(cx: &mut Tx, node: &Node) -> Lowered {
    let d = nchw(cx, node)?;
    let c = d[1];
    if !(1..=4096).contains(&c) {
        return Err(LowerError::Other(format!(
            "{c} channels (the window sum is a C×C convolution; at most 4096)"
        )));
    }
    let size = node.int("size", 0);
    if size < 1 {
        return Err(LowerError::value("size", size));
    }
    let alpha = f64::from(node.float("alpha", 1e-4));
    let beta = node.float("beta", 0.75);
    let bias = f64::from(node.float("bias", 1.0));
    let o = out(node)?.to_string();
    let x = cx.fin(node, 0)?;
    let (lo, hi) = ((size - 1) / 2, size - 1 - (size - 1) / 2);
    let cu = c as usize;
    let mut w = vec![0.0f64; cu * cu];
    for oc in 0..c {
        let from = (oc - lo).max(0);
        let to = (oc + hi).min(c - 1);
        for ic in from..=to {
            w[oc as usize * cu + ic as usize] = 1.0;
        }
    }
    let wid = cx.const_f32(&o, &[c, c, 1, 1], &w)?;
    let sq = cx.tmp("mul", &o, &[x, x], vec![], &d)?;
    let sum = cx.tmp(
        "conv2d",
        &o,
        &[sq, wid],
        vec![
            kv("format", p_str("NCHW")),
            kv("padding", p_pad(&[0; 8])),
            kv("stride", p_ints(&[1, 1, 1, 1])),
            kv("dilation", p_ints(&[1, 1, 1, 1])),
        ],
        &d,
    )?;
    let k = cx.scalar(&o, alpha / size as f64)?;
    let scaled = cx.tmp("mul", &o, &[sum, k], vec![], &d)?;
    let b = cx.scalar(&o, bias)?;
    let base = cx.tmp("add", &o, &[scaled, b], vec![], &d)?;
    let den = cx.tmp("pow", &o, &[base], vec![kv("y", p_float(beta))], &d)?;
    cx.emit("div", &o, &[x, den], vec![], &d)?;
    Ok(())
}

/// `ConvTranspose` (2-D, one group) → `transpose_conv2d` (weights `[C_in,
/// C_out, kh, kw]` as ONNX's; output `(H − 1)·s + d·(k − 1) + 1 − pads`,
/// the full result cropped by the pads), then `add_bias`. The pads come
/// from `pads`, or, as ONNX's reference computes them, from `output_shape`
/// or SAME auto-padding; `output_padding` takes from the end padding, and
/// where that goes negative zeros are appended with `pad` before the bias.
/// Groups are refused.
pub(crate) fn conv_transpose(cx: &mut Tx, node: &Node) -> Lowered {
    let (d, wd) = nchw_kernel(cx, node, true)?;
    let k = [wd[2], wd[3]];
    let group = node.int("group", 1);
    if group != 1 {
        return Err(LowerError::Other(format!(
            "group {group} (TenniS's transpose_conv2d has one)"
        )));
    }
    if wd[0] != d[1] {
        return Err("weights whose channels differ from the input's".into());
    }
    let auto = node.string("auto_pad", "NOTSET");
    let strides = two(node.ints("strides"), 1, "strides")?;
    let dil = two(node.ints("dilations"), 1, "dilations")?;
    if strides.iter().chain(&dil).any(|&v| v < 1) {
        return Err("non-positive strides or dilations".into());
    }
    let opad = two(node.ints("output_padding"), 0, "output_padding")?;
    if opad.iter().any(|&v| v < 0) {
        return Err(LowerError::value("output_padding", format!("{opad:?}")));
    }
    let oshape = match node.ints("output_shape") {
        None => None,
        Some(v) if v.len() >= 2 => Some([v[v.len() - 2], v[v.len() - 1]]),
        Some(v) => return Err(LowerError::value("output_shape", format!("{v:?}"))),
    };
    let big = |v: i64| v > 1 << 24;
    if strides
        .iter()
        .chain(&dil)
        .chain(&opad)
        .chain(&k)
        .chain(&d[2..])
        .any(|&v| big(v))
    {
        return Err("strides, dilations, kernel or image sizes beyond 2^24".into());
    }
    let mut pads = [0i64; 4];
    for i in 0..2 {
        // each factor is at most 2^24: no overflow
        let full = (d[2 + i] - 1) * strides[i] + dil[i] * (k[i] - 1) + 1 + opad[i];
        let target = match (oshape, auto.as_str()) {
            (Some(os), _) if (1..=1 << 24).contains(&os[i]) => Some(os[i]),
            (Some(os), _) => return Err(LowerError::value("output_shape", format!("{os:?}"))),
            (None, "SAME_UPPER" | "SAME_LOWER") => Some(d[2 + i] * strides[i]),
            (None, "NOTSET" | "" | "VALID") => None,
            (None, a) => return Err(LowerError::value("auto_pad", a)),
        };
        let (b, e) = match target {
            Some(t) => {
                // (output_padding is in `full`: the result is `t` wide)
                let total = full - t;
                let half = total.div_euclid(2);
                if auto == "SAME_UPPER" {
                    (half, total - half)
                } else {
                    (total - half, half)
                }
            }
            None if auto == "VALID" => (0, 0),
            None => match node.ints("pads") {
                None => (0, 0),
                Some(p) if p.len() == 4 && p.iter().all(|&v| (0..=1 << 24).contains(&v)) => {
                    (p[i], p[i + 2])
                }
                Some(p) => return Err(LowerError::value("pads", format!("{p:?}"))),
            },
        };
        pads[i] = b;
        // output_padding: the crop at the end shrinks by it
        pads[i + 2] = e - opad[i];
    }
    if pads[0] < 0 || pads[1] < 0 {
        return Err(LowerError::Other(format!(
            "a negative begin padding {:?}",
            &pads[..2]
        )));
    }
    // negative end pads: crop nothing, append zeros
    let extra = [(-pads[2]).max(0), (-pads[3]).max(0)];
    let crop = [pads[0], pads[1], pads[2].max(0), pads[3].max(0)];
    let mut hw = [0i64; 2];
    for i in 0..2 {
        hw[i] = (d[2 + i] - 1) * strides[i] + dil[i] * (k[i] - 1) + 1 - crop[i] - crop[i + 2];
        if hw[i] < 1 {
            return Err("pads that leave no output".into());
        }
    }
    let od = vec![d[0], wd[1], hw[0], hw[1]];
    let fd = vec![d[0], wd[1], hw[0] + extra[0], hw[1] + extra[1]];
    let params = vec![
        kv("format", p_str("NCHW")),
        kv("padding", p_pad(&padding(&crop))),
        kv("stride", p_ints(&[1, 1, strides[0], strides[1]])),
        kv("dilation", p_ints(&[1, 1, dil[0], dil[1]])),
    ];
    let o = out(node)?.to_string();
    let x = cx.fin(node, 0)?;
    let wid = cx.fin(node, 1)?;
    let bias = node.input(2).is_some();
    let last_conv = !bias && extra == [0, 0];
    let mut y = if last_conv {
        cx.emit("transpose_conv2d", &o, &[x, wid], params, &od)?
    } else {
        cx.tmp("transpose_conv2d", &o, &[x, wid], params, &od)?
    };
    if extra != [0, 0] {
        let pv = [0, 0, 0, 0, 0, extra[0], 0, extra[1]];
        let p = cx.const_i32(&o, &[4, 2], &pv)?;
        let params = vec![kv("padding_value", p_float(0.0))];
        y = if bias {
            cx.tmp("pad", &o, &[y, p], params, &fd)?
        } else {
            cx.emit("pad", &o, &[y, p], params, &fd)?
        };
    }
    if bias {
        let b = cx.fin(node, 2)?;
        cx.emit("add_bias", &o, &[y, b], vec![kv("dim", p_int(1))], &fd)?;
    }
    Ok(())
}
