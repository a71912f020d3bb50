//! ONNX → NNabla lowering of `Attention` (opset 23+) without a key/value
//! cache: scaled dot-product attention with `BatchMatmul`, grouped-query
//! heads repeated with `Broadcast`, an optional soft cap, causal and
//! boolean/additive masks, and the fully-masked rows set to 0 as ONNX
//! defines them.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{binary_vars, broadcast_to, chain, mul_scalar};
use super::nnabla_ops_reduce::extreme;
use super::nnabla_ops_shape::transpose_vars;
use super::onnx_graph::{Node, elem};

fn transpose(cx: &mut Cx<'_>, x: &str, perm: &[i64]) -> Result<String, LowerError> {
    let s = cx.shape(x)?;
    let d: Vec<i64> = perm.iter().map(|&a| s[a as usize]).collect();
    let y = cx.fresh(x);
    transpose_vars(cx, x, &y, perm, &d);
    Ok(y)
}

/// A 3-D `(B, S, H*E)` input as `(B, H, S, E)`; a 4-D one as it is.
fn heads(cx: &mut Cx<'_>, x: &str, h: Option<i64>) -> Result<String, LowerError> {
    let s = cx.shape(x)?;
    match (s.len(), h) {
        (4, _) => Ok(x.to_string()),
        (3, Some(h)) if h > 0 && s[2] % h == 0 => {
            let r = cx.reshape(x, &[s[0], s[1], h, s[2] / h])?;
            transpose(cx, &r, &[0, 2, 1, 3])
        }
        (3, _) => Err("3-D inputs without q_num_heads/kv_num_heads dividing them".into()),
        _ => Err("inputs of rank other than 3 or 4".into()),
    }
}

/// `(B, Hk, S, E)` with each head repeated `g` times (`np.repeat` on axis 1).
fn repeat_heads(cx: &mut Cx<'_>, x: &str, g: i64) -> Result<String, LowerError> {
    if g == 1 {
        return Ok(x.to_string());
    }
    let s = cx.shape(x)?;
    let r = cx.reshape(x, &[s[0], s[1], 1, s[2], s[3]])?;
    let b = broadcast_to(cx, &r, &[s[0], s[1], g, s[2], s[3]])?;
    let h = s[1].checked_mul(g).ok_or_else(super::dims::too_large)?;
    cx.reshape(&b, &[s[0], h, s[2], s[3]])
}

fn matmul(cx: &mut Cx<'_>, a: &str, b: &str, tb: bool, dims: &[i64]) -> String {
    let y = cx.fresh(a);
    cx.emit(
        "BatchMatmul",
        &[a, b],
        &[(&y, dims)],
        Some(P::BatchMatmulParam(BatchMatmulParameter {
            transpose_a: false,
            transpose_b: tb,
        })),
    );
    cx.set_elem(&y, elem::FLOAT);
    y
}

/// The additive bias of the attention mask (input 3) and the causal mask,
/// `None` when there is neither.
fn bias(
    cx: &mut Cx<'_>,
    node: &Node,
    sq: i64,
    skv: i64,
    offset: i64,
) -> Result<(Option<String>, bool), LowerError> {
    let mut b: Option<String> = None;
    if let Some(m) = node.input(3) {
        let e = cx.elem(m);
        let ms = cx.shape(m)?;
        if ms.is_empty() || ms.len() > 4 || ms.iter().any(|&d| d <= 0) {
            return Err(
                "an attention mask of rank 0 or above 4, or with symbolic dimensions".into(),
            );
        }
        let ml = *ms.last().ok_or("mask rank")?;
        if ml > skv {
            return Err("an attention mask longer than the key sequence".into());
        }
        // A mask shorter than the keys is padded: False / -inf.
        let mut mv = if e == elem::BOOL {
            cx.avar(node, 3)?
        } else {
            cx.fvar(node, 3)?
        };
        let ms = if ml < skv {
            let mut pd = ms.clone();
            *pd.last_mut().ok_or("mask rank")? = skv;
            let y = cx.fresh(&mv);
            cx.emit(
                "Pad",
                &[&mv],
                &[(&y, &pd)],
                Some(P::PadParam(PadParameter {
                    pad_width: vec![0, skv - ml],
                    mode: "constant".into(),
                    constant_value: if e == elem::BOOL {
                        0.0
                    } else {
                        f32::NEG_INFINITY
                    },
                })),
            );
            cx.set_elem(&y, e);
            mv = y;
            pd
        } else {
            ms
        };
        b = Some(if e == elem::BOOL {
            let n = ms
                .iter()
                .try_fold(1usize, |p, &d| p.checked_mul(d as usize));
            let n = n
                .filter(|&n| n <= 1 << 24)
                .ok_or(LowerError::TooLarge("too large a mask"))?;
            let z = cx.param(&format!("{m}__zero"), &ms, &vec![0.0; n])?;
            let ninf = cx.param(&format!("{m}__ninf"), &ms, &vec![f64::NEG_INFINITY; n])?;
            let y = cx.fresh(&mv);
            cx.emit("Where", &[&mv, &z, &ninf], &[(&y, &ms)], None);
            cx.set_elem(&y, elem::FLOAT);
            y
        } else {
            mv
        });
    }
    if node.input(6).is_some() {
        let nb = nonpad_bias(cx, node, sq, skv)?;
        let nb = match b {
            Some(m) => binary_vars(cx, "Add2", &m, &nb, None, elem::FLOAT)?,
            None => nb,
        };
        return Ok((Some(nb), true));
    }
    // The causal frontier (j <= i + offset) and the sliding window
    // (i + offset - left <= j <= i + offset + right), one constant.
    let causal = node.int("is_causal", 0) != 0;
    let (left, right) = (
        node.int("left_window_size", -1),
        node.int("right_window_size", -1),
    );
    let mut row_all_masked = false;
    if causal || left >= 0 || right >= 0 {
        let n = usize::try_from(sq.checked_mul(skv).ok_or("sequence lengths")?)
            .map_err(|_| "sequence lengths")?;
        let c: Vec<f64> = (0..n)
            .map(|p| {
                let (i, j) = ((p / skv as usize) as i64, (p % skv as usize) as i64);
                let diff = i + offset - j;
                let ok = (!causal || diff >= 0)
                    && (left < 0 || diff <= left)
                    && (right < 0 || -diff <= right);
                if ok { 0.0 } else { f64::NEG_INFINITY }
            })
            .collect();
        row_all_masked = c
            .chunks(skv as usize)
            .any(|r| r.iter().all(|v| v.is_infinite()));
        let cp = cx.param(&format!("{}__causal", node.outputs[0]), &[sq, skv], &c)?;
        b = Some(match b {
            Some(m) => binary_vars(cx, "Add2", &m, &cp, None, elem::FLOAT)?,
            None => cp,
        });
    }
    let runtime = node.input(3).is_some();
    Ok((b, runtime || row_all_masked))
}

/// The bias of an external cache holding `nonpad_kv_seqlen[b]` valid keys
/// (input 6): keys from there on are padding, and the causal frontier and
/// window move with the per-batch offset `nonpad[b] - sq`:
/// with `D = j - i + sq`, causal `D <= n`, left `n <= D + left`, right
/// `n >= D - right`, padding `j < n`; `(B, 1, sq, skv)`, 0 or -inf.
fn nonpad_bias(cx: &mut Cx<'_>, node: &Node, sq: i64, skv: i64) -> Result<String, LowerError> {
    let name = node.input(6).ok_or("nonpad_kv_seqlen")?;
    let e = cx.elem(name);
    if !matches!(e, 6 | 7) {
        return Err("nonpad_kv_seqlen that is not integer".into());
    }
    let ns = cx.shape(name)?;
    if ns.len() != 1 || ns[0] <= 0 {
        return Err("nonpad_kv_seqlen of another shape than (B)".into());
    }
    let b = ns[0];
    let nv = cx.var(name)?;
    let n4 = cx.reshape(&nv, &[b, 1, 1, 1])?;
    let npos = usize::try_from(sq.checked_mul(skv).ok_or("sequence lengths")?)
        .map_err(|_| "sequence lengths")?;
    let dvals = |extra: i64| -> Vec<f64> {
        (0..npos)
            .map(|p| {
                let (i, j) = ((p / skv as usize) as i64, (p % skv as usize) as i64);
                (j - i + sq + extra) as f64
            })
            .collect()
    };
    let out = node.outputs[0].clone();
    let mut conds: Vec<String> = Vec::new();
    let mut cmp = |cx: &mut Cx<'_>, ty: &str, a: &str, c: &str| -> Result<(), LowerError> {
        let y = binary_vars(cx, ty, a, c, None, elem::BOOL)?;
        conds.push(y);
        Ok(())
    };
    if node.int("is_causal", 0) != 0 {
        let d = cx.param(&format!("{out}__nonpad_d"), &[1, 1, sq, skv], &dvals(0))?;
        cmp(cx, "LessEqual", &d, &n4)?;
    }
    let left = node.int("left_window_size", -1);
    if left >= 0 {
        let d = cx.param(&format!("{out}__nonpad_l"), &[1, 1, sq, skv], &dvals(left))?;
        cmp(cx, "LessEqual", &n4, &d)?;
    }
    let right = node.int("right_window_size", -1);
    if right >= 0 {
        let d = cx.param(
            &format!("{out}__nonpad_r"),
            &[1, 1, sq, skv],
            &dvals(-right),
        )?;
        cmp(cx, "GreaterEqual", &n4, &d)?;
    }
    let jv: Vec<f64> = (0..skv).map(|j| j as f64).collect();
    let j = cx.param(&format!("{out}__nonpad_j"), &[1, 1, 1, skv], &jv)?;
    cmp(cx, "Less", &j, &n4)?;
    let mut allowed = conds[0].clone();
    for c in &conds[1..] {
        allowed = binary_vars(cx, "LogicalAnd", &allowed, c, None, elem::BOOL)?;
    }
    let sd = [b, 1, sq, skv];
    let allowed = broadcast_to(cx, &allowed, &sd)?;
    let n = usize::try_from(b)
        .ok()
        .and_then(|b| b.checked_mul(npos))
        .filter(|&n| n <= 1 << 24)
        .ok_or(LowerError::TooLarge("too large a bias"))?;
    let z = cx.param(&format!("{out}__nonpad_zero"), &sd, &vec![0.0; n])?;
    let ninf = cx.param(
        &format!("{out}__nonpad_ninf"),
        &sd,
        &vec![f64::NEG_INFINITY; n],
    )?;
    let y = cx.fresh(&allowed);
    cx.emit("Where", &[&allowed, &z, &ninf], &[(&y, &sd)], None);
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

/// `Attention` (opset 23+): Q, K, V and an optional mask; no cache.
pub(crate) fn attention(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    if node.input(6).is_some() && node.input(4).is_some() {
        return Err("nonpad_kv_seqlen with past_key (two caches)".into());
    }
    if node.input(4).is_some() != node.input(5).is_some() {
        return Err("past_key without past_value or the reverse".into());
    }
    let mode = node.int("qk_matmul_output_mode", 0);
    if !(0..=3).contains(&mode) {
        return Err(LowerError::attr("qk_matmul_output_mode", format!("{mode}")));
    }
    for w in ["left_window_size", "right_window_size"] {
        if node.int(w, -1) < -1 {
            return Err(LowerError::Other(format!("{w} below -1")));
        }
    }
    if node.int("softmax_precision", 1) != 1 {
        return Err("softmax_precision other than FLOAT".into());
    }
    let q = cx.fvar(node, 0)?;
    let k = cx.fvar(node, 1)?;
    let v = cx.fvar(node, 2)?;
    let rank = cx.shape(&q)?.len();
    if cx.shape(&k)?.len() != rank || cx.shape(&v)?.len() != rank {
        return Err("Q, K and V of different ranks".into());
    }
    if [&q, &k, &v]
        .iter()
        .any(|x| cx.shape(x).is_ok_and(|s| s.iter().any(|&d| d <= 0)))
    {
        return Err(LowerError::NeedsInputShape {
            what: "symbolic or empty dimensions",
            plural: true,
        });
    }
    let hq = node.attr("q_num_heads").and_then(|a| a.i);
    let hk = node.attr("kv_num_heads").and_then(|a| a.i);
    let q4 = heads(cx, &q, hq)?;
    let k4 = heads(cx, &k, hk)?;
    let v4 = heads(cx, &v, hk)?;
    // A cache: the past keys/values (B, Hk, P, E) before the new ones.
    let (k4, v4, offset) = if node.input(4).is_some() {
        with_cache(cx, node, &k4, &v4)?
    } else {
        (k4, v4, 0)
    };
    for (i, x) in [(1usize, &k4), (2, &v4)] {
        if node.has_output(i) {
            let d = cx.shape(x)?;
            cx.emit("Identity", &[x], &[(&node.outputs[i], &d)], None);
            cx.set_elem(&node.outputs[i], elem::FLOAT);
        }
    }
    let (qs, ks, vs) = (cx.shape(&q4)?, cx.shape(&k4)?, cx.shape(&v4)?);
    let (b, nq, sq, e) = (qs[0], qs[1], qs[2], qs[3]);
    let (nk, skv) = (ks[1], ks[2]);
    if ks[0] != b || vs[0] != b || vs[1] != nk || ks[3] != e || vs[2] != skv {
        return Err("Q, K and V shapes that do not agree".into());
    }
    if nq % nk != 0 {
        return Err("query heads not a multiple of the key/value heads".into());
    }
    let k4 = repeat_heads(cx, &k4, nq / nk)?;
    let v4 = repeat_heads(cx, &v4, nq / nk)?;
    let ev = vs[3];
    // Q and K each scaled by sqrt(scale), in f32 as ONNX's reference does.
    let scale = match node.attr("scale").and_then(|a| a.f) {
        Some(s) => f64::from(s),
        None => 1.0 / (e as f64).sqrt(),
    };
    let s = f64::from(scale.sqrt() as f32);
    let qm = chain(cx, &q4, "MulScalar", mul_scalar(s))?;
    let km = chain(cx, &k4, "MulScalar", mul_scalar(s))?;
    let sd = [b, nq, sq, skv];
    let mut qk = matmul(cx, &qm, &km, true, &sd);
    let softcap = f64::from(node.float("softcap", 0.0));
    if softcap > 0.0 {
        let t = chain(cx, &qk, "MulScalar", mul_scalar(1.0 / softcap))?;
        let t = chain(cx, &t, "Tanh", None)?;
        qk = chain(cx, &t, "MulScalar", mul_scalar(softcap))?;
    }
    let qk_out = node.has_output(3).then(|| node.outputs[3].clone());
    let emit_qk = |cx: &mut Cx<'_>, x: &str| {
        if let Some(o) = &qk_out {
            cx.emit("Identity", &[x], &[(o, &sd)], None);
            cx.set_elem(o, elem::FLOAT);
        }
    };
    if mode <= 1 {
        emit_qk(cx, &qk);
    }
    let (bias, zero_rows) = bias(cx, node, sq, skv, offset)?;
    if let Some(bv) = &bias {
        qk = binary_vars(cx, "Add2", &qk, bv, None, elem::FLOAT)?;
        qk = broadcast_to(cx, &qk, &sd)?;
    }
    if mode == 2 {
        emit_qk(cx, &qk);
    }
    let mut p = cx.fresh(&qk);
    cx.emit(
        "Softmax",
        &[&qk],
        &[(&p, &sd)],
        Some(P::SoftmaxParam(SoftmaxParameter { axis: 3 })),
    );
    cx.set_elem(&p, elem::FLOAT);
    // Rows whose bias is -inf everywhere give 0 (softmax gives NaN there).
    if let Some(bv) = &bias
        && zero_rows
    {
        p = zero_masked_rows(cx, node, bv, &p, &sd)?;
    }
    if mode == 3 {
        emit_qk(cx, &p);
    }
    let out = node.outputs[0].clone();
    if rank == 4 {
        let y = matmul(cx, &p, &v4, false, &[b, nq, sq, ev]);
        return cx.reshape_to(&y, &out, &[b, nq, sq, ev]);
    }
    let y = matmul(cx, &p, &v4, false, &[b, nq, sq, ev]);
    let t = transpose(cx, &y, &[0, 2, 1, 3])?;
    let w = nq.checked_mul(ev).ok_or_else(super::dims::too_large)?;
    cx.reshape_to(&t, &out, &[b, sq, w])?;
    cx.set_elem(&out, elem::FLOAT);
    Ok(())
}

/// The keys and values `k4`, `v4` (B, Hk, S, E) after the cache
/// `past_key`/`past_value` (B, Hk, P, E), and the cache length P.
fn with_cache(
    cx: &mut Cx<'_>,
    node: &Node,
    k4: &str,
    v4: &str,
) -> Result<(String, String, i64), LowerError> {
    let pk = cx.fvar(node, 4)?;
    let pv = cx.fvar(node, 5)?;
    let (pks, pvs) = (cx.shape(&pk)?, cx.shape(&pv)?);
    let (ks, vs) = (cx.shape(k4)?, cx.shape(v4)?);
    if pks.len() != 4
        || pvs.len() != 4
        || pks[..2] != ks[..2]
        || pks[3] != ks[3]
        || pvs[..2] != vs[..2]
        || pvs[3] != vs[3]
        || pks[2] != pvs[2]
    {
        return Err("past_key/past_value shapes that do not fit K/V".into());
    }
    let cat = |cx: &mut Cx<'_>, a: &str, b: &str, sa: &[i64], sb: &[i64]| {
        let d = [sa[0], sa[1], sa[2] + sb[2], sa[3]];
        let y = cx.fresh(b);
        cx.emit(
            "Concatenate",
            &[a, b],
            &[(&y, &d)],
            Some(P::ConcatenateParam(ConcatenateParameter { axis: 2 })),
        );
        cx.set_elem(&y, elem::FLOAT);
        y
    };
    let k = cat(cx, &pk, k4, &pks, &ks);
    let v = cat(cx, &pv, v4, &pvs, &vs);
    Ok((k, v, pks[2]))
}

/// The probabilities `p` (of shape `sd`) with 0 in the rows whose bias
/// `bv` is -inf everywhere (softmax gives NaN there).
fn zero_masked_rows(
    cx: &mut Cx<'_>,
    node: &Node,
    bv: &str,
    p: &str,
    sd: &[i64],
) -> Result<String, LowerError> {
    let bs = cx.shape(bv)?;
    let last = (bs.len() - 1) as i64;
    let mut md = bs.clone();
    *md.last_mut().ok_or("rank 0 mask")? = 1;
    let mx = cx.fresh(bv);
    extreme(cx, bv, &[last], true, &mx, &md)?;
    let masked = chain(
        cx,
        &mx,
        "LessScalar",
        Some(P::LessScalarParam(LessScalarParameter {
            val: f64::from(f32::MIN),
        })),
    )?;
    cx.set_elem(&masked, elem::BOOL);
    let masked = cx.with_rank(&masked, 4)?;
    let masked = broadcast_to(cx, &masked, sd)?;
    let z = cx.param(&format!("{}__zero", node.outputs[0]), &[1], &[0.0])?;
    let z = broadcast_to(cx, &z, sd)?;
    let y = cx.fresh(p);
    cx.emit("Where", &[&masked, &z, p], &[(&y, sd)], None);
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

fn concat_last(cx: &mut Cx<'_>, parts: &[&str], dims: &[i64]) -> String {
    let y = cx.fresh(parts[0]);
    cx.emit(
        "Concatenate",
        parts,
        &[(&y, dims)],
        Some(P::ConcatenateParam(ConcatenateParameter {
            axis: (dims.len() - 1) as i64,
        })),
    );
    cx.set_elem(&y, elem::FLOAT);
    y
}

/// The last axis of `x` (shape `s`) from `start`, every `step`, `n` long.
fn last_slice(
    cx: &mut Cx<'_>,
    x: &str,
    s: &[i64],
    start: i64,
    step: i64,
    n: i64,
) -> Result<String, LowerError> {
    let mut spec: Vec<(i64, i64, i64)> = s.iter().map(|&d| (0, 1, d)).collect();
    *spec.last_mut().ok_or("rank 0")? = (start, step, n);
    let y = cx.fresh(x);
    super::nnabla_ops_shape::slice_vars(cx, x, &y, &spec)?;
    Ok(y)
}

/// `RotaryEmbedding` (opset 23+): the rotated half (or interleaved pairs)
/// of each head, `cos * x1 - sin * x2`, `sin * x1 + cos * x2`, with the
/// caches gathered at `position_ids` (run time) when given.
pub(crate) fn rotary_embedding(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let x = cx.fvar(node, 0)?;
    let s0 = cx.shape(&x)?;
    if s0.iter().any(|&d| d <= 0) {
        return Err(LowerError::NeedsInputShape {
            what: "symbolic or empty dimensions",
            plural: true,
        });
    }
    // (B, S, H, D)
    let xh = match s0.len() {
        4 => transpose(cx, &x, &[0, 2, 1, 3])?,
        3 => {
            let h = node.int("num_heads", 0);
            if h <= 0 || s0[2] % h != 0 {
                return Err("3-D input without num_heads dividing it".into());
            }
            cx.reshape(&x, &[s0[0], s0[1], h, s0[2] / h])?
        }
        _ => return Err("an input of rank other than 3 or 4".into()),
    };
    let s = cx.shape(&xh)?;
    let (b, sq, d) = (s[0], s[1], s[3]);
    let rd = match node.int("rotary_embedding_dim", 0) {
        0 => d,
        r if r > 0 && r <= d && r % 2 == 0 => r,
        r => {
            return Err(LowerError::attr("rotary_embedding_dim", format!("{r}")));
        }
    };
    let half = rd / 2;
    let cache = |cx: &mut Cx<'_>, i: usize| -> Result<String, LowerError> {
        let c = cx.fvar(node, i)?;
        let cs = cx.shape(&c)?;
        let g = if node.input(3).is_some() {
            let pname = node.input(3).ok_or("position_ids")?;
            if cx.shape(pname)? != [b, sq] || cs.len() != 2 || cs[1] != half || cs[0] <= 0 {
                return Err("position_ids or caches of other shapes than (B, S), (P, D/2)".into());
            }
            let pe = cx.elem(pname);
            if !matches!(pe, 6 | 7) {
                return Err("position_ids that are not integers".into());
            }
            let p = cx.var(pname)?;
            let y = cx.fresh(&c);
            cx.emit(
                "Gather",
                &[&c, &p],
                &[(&y, &[b, sq, half])],
                Some(P::GatherParam(GatherParameter {
                    axis: 0,
                    batch_dims: 0,
                })),
            );
            cx.set_elem(&y, elem::FLOAT);
            y
        } else {
            if cs != [b, sq, half] {
                return Err("caches of another shape than (B, S, D/2)".into());
            }
            c
        };
        cx.reshape(&g, &[b, sq, 1, half])
    };
    let cos = cache(cx, 1)?;
    let sin = cache(cx, 2)?;
    let interleaved = node.int("interleaved", 0) != 0;
    let xr = if rd < d {
        last_slice(cx, &xh, &s, 0, 1, rd)?
    } else {
        xh.clone()
    };
    let sr = [b, sq, s[2], rd];
    let (x1, x2) = if interleaved {
        (
            last_slice(cx, &xr, &sr, 0, 2, half)?,
            last_slice(cx, &xr, &sr, 1, 2, half)?,
        )
    } else {
        (
            last_slice(cx, &xr, &sr, 0, 1, half)?,
            last_slice(cx, &xr, &sr, half, 1, half)?,
        )
    };
    let f = elem::FLOAT;
    let a = binary_vars(cx, "Mul2", &cos, &x1, None, f)?;
    let c = binary_vars(cx, "Mul2", &sin, &x2, None, f)?;
    let real = binary_vars(cx, "Sub2", &a, &c, None, f)?;
    let a = binary_vars(cx, "Mul2", &sin, &x1, None, f)?;
    let c = binary_vars(cx, "Mul2", &cos, &x2, None, f)?;
    let imag = binary_vars(cx, "Add2", &a, &c, None, f)?;
    let rot = if interleaved {
        let p5 = [b, sq, s[2], half, 1];
        let r5 = cx.reshape(&real, &p5)?;
        let i5 = cx.reshape(&imag, &p5)?;
        let st = concat_last(cx, &[&r5, &i5], &[b, sq, s[2], half, 2]);
        cx.reshape(&st, &sr)?
    } else {
        concat_last(cx, &[&real, &imag], &sr)
    };
    let full = if rd < d {
        let rest = last_slice(cx, &xh, &s, rd, 1, d - rd)?;
        concat_last(cx, &[&rot, &rest], &s)
    } else {
        rot
    };
    let out = &node.outputs[0];
    if s0.len() == 4 {
        transpose_vars(cx, &full, out, &[0, 2, 1, 3], &s0);
        cx.set_elem(out, f);
        Ok(())
    } else {
        cx.reshape_to(&full, out, &s0)
    }
}

/// Axis 2 of a 4-D `x` at position `i` (kept, length 1).
fn step(cx: &mut Cx<'_>, x: &str, i: i64) -> Result<String, LowerError> {
    let s = cx.shape(x)?;
    let y = cx.fresh(x);
    cx.emit(
        "Slice",
        &[x],
        &[(&y, &[s[0], s[1], 1, s[3]])],
        Some(P::SliceParam(SliceParameter {
            start: vec![0, 0, i, 0],
            stop: vec![s[0], s[1], i + 1, s[3]],
            step: vec![1, 1, 1, 1],
        })),
    );
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

/// The longest sequence `LinearAttention` is unrolled for.
const MAX_STEPS: i64 = 256;

/// `LinearAttention` (opset 27): the recurrence unrolled over the (static)
/// sequence, after ONNX's reference: per step the state decays by
/// `exp(decay)` (gated rules), the value is corrected by `beta` times its
/// difference with what the state retrieves for the key (delta rules), the
/// outer product key x value is added, and the query reads the state
/// (key/value heads repeated for grouped queries), scaled.
pub(crate) fn linear_attention(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let rule = node.string("update_rule", "gated_delta");
    let (gating, delta) = match rule.as_str() {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        other => {
            return Err(LowerError::attr("update_rule", format!("{other:?}")));
        }
    };
    if gating != node.input(4).is_some() || delta != node.input(5).is_some() {
        return Err(LowerError::Other(format!(
            "decay/beta inputs that do not fit update_rule={rule:?}"
        )));
    }
    let hq = node.int("q_num_heads", 0);
    let hk = node.int("kv_num_heads", 0);
    if hq <= 0 || hk <= 0 || hq % hk != 0 {
        return Err("q_num_heads not a positive multiple of kv_num_heads".into());
    }
    let q = cx.fvar(node, 0)?;
    let k = cx.fvar(node, 1)?;
    let v = cx.fvar(node, 2)?;
    for x in [&q, &k, &v] {
        let s = cx.shape(x)?;
        if s.len() != 3 || s.iter().any(|&d| d <= 0) {
            return Err("inputs of rank other than 3 or with symbolic dimensions".into());
        }
    }
    let q4 = heads(cx, &q, Some(hq))?;
    let k4 = heads(cx, &k, Some(hk))?;
    let v4 = heads(cx, &v, Some(hk))?;
    let (qs, ks, vs) = (cx.shape(&q4)?, cx.shape(&k4)?, cx.shape(&v4)?);
    let (b, t, dk, dv) = (qs[0], qs[2], qs[3], vs[3]);
    if ks[0] != b || vs[0] != b || ks[2] != t || vs[2] != t || ks[3] != dk {
        return Err("query, key and value shapes that do not agree".into());
    }
    if t > MAX_STEPS {
        return Err(LowerError::Other(format!(
            "a sequence longer than {MAX_STEPS} steps (unrolled)"
        )));
    }
    // decay as (B, Hk, T, 1 or dk), beta as (B, Hk or 1, T, 1).
    let decay = if gating {
        let d = cx.fvar(node, 4)?;
        let ds = cx.shape(&d)?;
        if ds.len() != 3 || ds[0] != b || ds[1] != t {
            return Err("a decay of another shape than (B, T, ...)".into());
        }
        Some(if ds[2] == hk {
            let r = cx.reshape(&d, &[b, t, hk, 1])?;
            transpose(cx, &r, &[0, 2, 1, 3])?
        } else if hk.checked_mul(dk) == Some(ds[2]) {
            heads(cx, &d, Some(hk))?
        } else {
            return Err(
                "a decay whose last dimension is neither kv_num_heads nor kv_num_heads*d_k".into(),
            );
        })
    } else {
        None
    };
    let beta = if delta {
        let bt = cx.fvar(node, 5)?;
        let bs = cx.shape(&bt)?;
        if bs.len() != 3 || bs[0] != b || bs[1] != t || (bs[2] != hk && bs[2] != 1) {
            return Err("a beta of another shape than (B, T, kv_num_heads or 1)".into());
        }
        let r = cx.reshape(&bt, &[b, t, bs[2], 1])?;
        Some(transpose(cx, &r, &[0, 2, 1, 3])?)
    } else {
        None
    };
    let sd = [b, hk, dk, dv];
    let mut state = match node.input(3) {
        Some(_) => {
            let p = cx.fvar(node, 3)?;
            if cx.shape(&p)? != sd {
                return Err("a past_state of another shape than (B, Hk, d_k, d_v)".into());
            }
            p
        }
        None => cx.param(
            &format!("{}__zero_state", node.outputs[0]),
            &sd,
            &super::zeros("state", &[b, hk, dk, dv])?,
        )?,
    };
    let scale = match node.attr("scale").and_then(|a| a.f) {
        Some(s) if s != 0.0 => f64::from(s),
        _ => 1.0 / (dk as f64).sqrt(),
    };
    let f = elem::FLOAT;
    let mut outs = Vec::new();
    for i in 0..t {
        let q_t = step(cx, &q4, i)?;
        let k_t = step(cx, &k4, i)?;
        let mut v_t = step(cx, &v4, i)?;
        if let Some(d) = &decay {
            let g = step(cx, d, i)?;
            let gs = cx.shape(&g)?;
            let g = chain(cx, &g, "Exp", None)?;
            let g = cx.reshape(&g, &[b, hk, gs[3], 1])?;
            state = binary_vars(cx, "Mul2", &state, &g, None, f)?;
        }
        if let Some(bt) = &beta {
            let got = matmul(cx, &k_t, &state, false, &[b, hk, 1, dv]);
            let diff = binary_vars(cx, "Sub2", &v_t, &got, None, f)?;
            let be = step(cx, bt, i)?;
            v_t = binary_vars(cx, "Mul2", &be, &diff, None, f)?;
        }
        let kc = cx.reshape(&k_t, &[b, hk, dk, 1])?;
        let outer = matmul(cx, &kc, &v_t, false, &sd);
        state = binary_vars(cx, "Add2", &state, &outer, None, f)?;
        let read = repeat_heads(cx, &state, hq / hk)?;
        let o = matmul(cx, &q_t, &read, false, &[b, hq, 1, dv]);
        outs.push(chain(cx, &o, "MulScalar", mul_scalar(scale))?);
    }
    let o4 = if outs.len() == 1 {
        outs[0].clone()
    } else {
        let y = cx.fresh(&outs[0]);
        let refs: Vec<&str> = outs.iter().map(String::as_str).collect();
        cx.emit(
            "Concatenate",
            &refs,
            &[(&y, &[b, hq, t, dv])],
            Some(P::ConcatenateParam(ConcatenateParameter { axis: 2 })),
        );
        cx.set_elem(&y, f);
        y
    };
    let tr = transpose(cx, &o4, &[0, 2, 1, 3])?;
    let w = hq.checked_mul(dv).ok_or_else(super::dims::too_large)?;
    cx.reshape_to(&tr, &node.outputs[0], &[b, t, w])?;
    if node.has_output(1) {
        let d = cx.shape(&state)?;
        cx.emit("Identity", &[&state], &[(&node.outputs[1], &d)], None);
        cx.set_elem(&node.outputs[1], f);
    }
    Ok(())
}
