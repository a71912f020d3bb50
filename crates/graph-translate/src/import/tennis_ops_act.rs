//! ONNX → TenniS lowerings: activations TenniS has as operators (`erf`,
//! `softplus`, `hard_sigmoid`, `pow`), the ones composed exactly from
//! them (`HardSwish`, `Elu`, `Selu`), and `Mish` (and `Tanh` of a
//! `Softplus`) in a form that keeps its precision for negative inputs.

use super::LowerError;
use super::onnx_graph::Node;
use super::table::lowerings;
use super::tennis_cx::out;
use super::tennis_cx::{Lowered, Tx, kv, p_float};
use bubble_module::NodeId;

lowerings! { Tx;
    /// `HardSigmoid` → `hard_sigmoid`.
    hard_sigmoid(cx, node) => hard(cx, node, false);
    /// `HardSwish` → x · `hard_sigmoid`.
    hard_swish(cx, node) => hard(cx, node, true);
    /// `Elu` → [`elu_of`].
    elu(cx, node) => elu_of(cx, node, false);
    /// `Selu` → gamma times [`elu_of`].
    selu(cx, node) => elu_of(cx, node, true);
    /// `LayerNormalization` → [`norm`].
    layer_normalization(cx, node) => norm(cx, node, false);
    /// `RMSNormalization` → [`norm`] without the mean.
    rms_normalization(cx, node) => norm(cx, node, true);
}

/// `Erf` → `erf`.
pub(crate) fn erf(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    cx.emit("erf", o, &[x], vec![], &d)?;
    Ok(())
}

/// `Softplus` → [`softplus`]; a `Softplus`'s input is remembered for a
/// `Tanh` of its output ([`tanh_softplus`]), and a `Softplus` only
/// `Tanh`s read writes nothing.
pub(crate) fn softplus_op(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    let i = node.input(0).ok_or(LowerError::MissingInput { index: 0 })?;
    cx.softplus_of.insert(o.to_string(), i.to_string());
    if cx.softplus_unread.contains(o) {
        return Ok(());
    }
    softplus(cx, o, x, &d)
}

/// softplus(x) = max(x, 0) + softplus(−|x|): TenniS's `softplus` computes
/// log(exp(x) + 1) with exp in f32, which overflows to inf above x ≈ 88.7;
/// its argument here is never positive (±inf give inf and 0).
fn softplus(cx: &mut Tx, o: &str, x: NodeId, d: &[i64]) -> Lowered {
    let zero = cx.scalar(o, 0.0)?;
    let m1 = cx.scalar(o, -1.0)?;
    let pos = cx.tmp("maximum", o, &[x, zero], vec![], d)?;
    let a = cx.tmp("abs", o, &[x], vec![], d)?;
    let na = cx.tmp("mul", o, &[a, m1], vec![], d)?;
    let sp = cx.tmp("softplus", o, &[na], vec![], d)?;
    cx.emit("add", o, &[pos, sp], vec![], d)?;
    Ok(())
}

/// tanh(softplus(x)) without TenniS's `tanh` and `softplus`: with
/// u = exp(min(x, 20)) and n = u·(u + 2), it is
/// ((1 + u)² − 1) / ((1 + u)² + 1) = n / (n + 2), which cancels nothing.
/// TenniS's `tanh` is
/// 2·sigmoid(2t) − 1, whose rounding near 1 leaves an absolute error of
/// about 1e-7: for x near −10, where softplus(x) ≈ 4.5e-5, that is a
/// relative error of some 1e-3, which Mish's product with x keeps. Above
/// x = 20 the ratio is 1 in f32 (n ≈ 2.4e17), and the clamp keeps u
/// finite. The result is named `o` when `named`, else a fresh name.
fn tanh_softplus(
    cx: &mut Tx,
    o: &str,
    x: NodeId,
    d: &[i64],
    named: bool,
) -> Result<NodeId, LowerError> {
    let m1 = cx.scalar(o, -1.0)?;
    let lim = cx.scalar(o, -20.0)?;
    let two = cx.scalar(o, 2.0)?;
    let nx = cx.tmp("mul", o, &[x, m1], vec![], d)?;
    let c = cx.tmp("maximum", o, &[nx, lim], vec![], d)?;
    let cx_ = cx.tmp("mul", o, &[c, m1], vec![], d)?;
    let u = cx.tmp("exp", o, &[cx_], vec![], d)?;
    let u2 = cx.tmp("add", o, &[u, two], vec![], d)?;
    let n = cx.tmp("mul", o, &[u, u2], vec![], d)?;
    let n2 = cx.tmp("add", o, &[n, two], vec![], d)?;
    if named {
        cx.emit("div", o, &[n, n2], vec![], d)
    } else {
        cx.tmp("div", o, &[n, n2], vec![], d)
    }
}

/// `Tanh` of a `Softplus`'s output (Mish written out, as onnx's function
/// body and exporters write it) → [`tanh_softplus`] of the `Softplus`'s
/// input; `None` for any other `Tanh`.
pub(crate) fn tanh_of_softplus(cx: &mut Tx, node: &Node) -> Option<Lowered> {
    let s = node.input(0)?;
    let x = cx.softplus_of.get(s)?.clone();
    let run = |cx: &mut Tx| -> Lowered {
        let o = out(node)?;
        let xid = cx.node_of(&x)?;
        let d = cx.shape(&x)?;
        tanh_softplus(cx, o, xid, &d, true)?;
        Ok(())
    };
    Some(run(cx))
}

/// `Mish` (opset 18): x · tanh(softplus(x)), the tanh of softplus as
/// [`tanh_softplus`] computes it.
pub(crate) fn mish(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    let t = tanh_softplus(cx, o, x, &d, false)?;
    cx.emit("mul", o, &[x, t], vec![], &d)?;
    Ok(())
}

/// `HardSigmoid` → `hard_sigmoid` (max(0, min(1, alpha·x + beta)));
/// `HardSwish` (`swish`) → x · hard_sigmoid(x) with alpha 1/6, beta 0.5.
fn hard(cx: &mut Tx, node: &Node, swish: bool) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    let (alpha, beta) = if swish {
        (1.0 / 6.0, 0.5)
    } else {
        (node.float("alpha", 0.2), node.float("beta", 0.5))
    };
    let params = vec![kv("alpha", p_float(alpha)), kv("beta", p_float(beta))];
    if swish {
        let h = cx.tmp("hard_sigmoid", o, &[x], params, &d)?;
        cx.emit("mul", o, &[x, h], vec![], &d)?;
    } else {
        cx.emit("hard_sigmoid", o, &[x], params, &d)?;
    }
    Ok(())
}

/// `Elu` (x for x ≥ 0, alpha·(exp(x) − 1) below) and `Selu` (`selu`:
/// gamma times the same): max(x, 0) + alpha·(exp(x − max(x, 0)) − 1),
/// whose negative part is exactly 0 where x ≥ 0.
fn elu_of(cx: &mut Tx, node: &Node, selu: bool) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let alpha = if selu {
        node.float("alpha", 1.673_263_2)
    } else {
        node.float("alpha", 1.0)
    };
    let zero = cx.scalar(&o, 0.0)?;
    let one = cx.scalar(&o, 1.0)?;
    let a = cx.scalar(&o, f64::from(alpha))?;
    let pos = cx.tmp("maximum", &o, &[x, zero], vec![], &d)?;
    let neg = cx.tmp("sub", &o, &[x, pos], vec![], &d)?;
    let e = cx.tmp("exp", &o, &[neg], vec![], &d)?;
    let em = cx.tmp("sub", &o, &[e, one], vec![], &d)?;
    let ae = cx.tmp("mul", &o, &[em, a], vec![], &d)?;
    if selu {
        let g = cx.scalar(&o, f64::from(node.float("gamma", 1.050_701)))?;
        let s = cx.tmp("add", &o, &[pos, ae], vec![], &d)?;
        cx.emit("mul", &o, &[s, g], vec![], &d)?;
    } else {
        cx.emit("add", &o, &[pos, ae], vec![], &d)?;
    }
    Ok(())
}

/// `Pow` with a constant single-valued exponent → `pow` (`y`).
pub(crate) fn pow(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let y = cx
        .const_floats(node, 1)
        .ok_or("an exponent computed at run time (TenniS's pow takes a constant)")?;
    if y.len() != 1 {
        return Err(LowerError::Other(format!(
            "an exponent of {} values (TenniS's pow takes one)",
            y.len()
        )));
    }
    let yd = cx.in_shape(node, 1)?;
    if yd.len() > d.len() {
        return Err("an exponent of higher rank than the base".into());
    }
    cx.emit(
        "pow",
        out(node)?,
        &[x],
        vec![kv("y", p_float(y[0] as f32))],
        &d,
    )?;
    Ok(())
}

/// `(x − mean) / sqrt(var + ε)` of `x` (of dimensions `d`) over the axes
/// from `a` on, each mean one kept `reduce_mean` per axis; without
/// `centre` (RMS) `x / sqrt(mean(x²) + ε)`. Returns the result, the mean
/// (when centred) and the standard deviation (`d` with the axes from `a`
/// on 1).
fn standardize(
    cx: &mut Tx,
    o: &str,
    x: NodeId,
    d: &[i64],
    a: usize,
    centre: bool,
    eps: f64,
) -> Result<(NodeId, Option<NodeId>, NodeId), LowerError> {
    let mut kd = d.to_vec();
    for v in kd.iter_mut().skip(a) {
        *v = 1;
    }
    let mean_of = |cx: &mut Tx, v| -> Result<_, LowerError> {
        let mut cur = v;
        let mut cd = d.to_vec();
        for ax in a..d.len() {
            cd[ax] = 1;
            cur = cx.tmp(
                "reduce_mean",
                o,
                &[cur],
                vec![
                    kv("dims", super::tennis_cx::p_ints(&[ax as i64])),
                    kv("keep_dims", super::tennis_cx::p_bool(true)),
                ],
                &cd,
            )?;
        }
        Ok(cur)
    };
    let (centred, mean) = if centre {
        let m = mean_of(cx, x)?;
        (cx.tmp("sub", o, &[x, m], vec![], d)?, Some(m))
    } else {
        (x, None)
    };
    let sq = cx.tmp("mul", o, &[centred, centred], vec![], d)?;
    let var = mean_of(cx, sq)?;
    let eps = cx.scalar(o, eps)?;
    let ve = cx.tmp("add", o, &[var, eps], vec![], &kd)?;
    let sd = cx.tmp("sqrt", o, &[ve], vec![], &kd)?;
    let n = cx.tmp("div", o, &[centred, sd], vec![], d)?;
    Ok((n, mean, sd))
}

/// `LayerNormalization` → `reduce_mean` over the axes from `axis` on (one
/// per axis, kept), `sub`, `mul`, `reduce_mean`, `add` (epsilon), `sqrt`,
/// `div`: `y = (x − mean) / sqrt(var + ε) · scale + bias`, with the Mean
/// and InvStdDev outputs when read. `RMSNormalization` the same without
/// the mean: `y = x / sqrt(mean(x²) + ε) · scale`. In f32 (`stash_type`
/// 1); the reference's rounding differs in the last bits.
fn norm(cx: &mut Tx, node: &Node, rms: bool) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    if d.iter().any(|&v| v < 1) {
        return Err(LowerError::needs_shape("a symbolic or empty dimension"));
    }
    if node.int("stash_type", 1) != 1 {
        return Err("stash_type other than 1 (f32)".into());
    }
    let r = d.len();
    let a = super::tennis_ops_basic::axis(node.int("axis", -1), r)?;
    let o = super::tennis_cx::read_out(node)?;
    let mut kd = d.clone();
    for v in &mut kd[a..] {
        *v = 1;
    }
    let eps = f64::from(node.float("epsilon", 1e-5));
    let (n, mean, sd) = standardize(cx, &o, x, &d, a, !rms, eps)?;
    let scale = cx.fin(node, 1)?;
    let bias = if rms || node.input(2).is_none() {
        None
    } else {
        Some(cx.fin(node, 2)?)
    };
    if let Some(y) = node.outputs.first().filter(|s| !s.is_empty()) {
        match bias {
            None => cx.emit("mul", y, &[n, scale], vec![], &d)?,
            Some(b) => {
                let t = cx.tmp("mul", &o, &[n, scale], vec![], &d)?;
                cx.emit("add", y, &[t, b], vec![], &d)?
            }
        };
    }
    if rms {
        return Ok(());
    }
    if let Some(mo) = node.outputs.get(1).filter(|s| !s.is_empty()) {
        let m = mean.ok_or(LowerError::absent("mean"))?;
        cx.emit("_copy", mo, &[m], vec![], &kd)?;
    }
    if let Some(io) = node.outputs.get(2).filter(|s| !s.is_empty()) {
        let one = cx.scalar(&o, 1.0)?;
        cx.emit("div", io, &[one, sd], vec![], &kd)?;
    }
    Ok(())
}

/// `InstanceNormalization` → per spatial axis `reduce_mean` (kept), `sub`,
/// `mul`, per axis `reduce_mean`, `add` (epsilon), `sqrt`, `div`, `mul`
/// (scale), `add` (B): y = scale · (x − mean) / sqrt(var + ε) + B over the
/// axes from 2 on, for each sample and channel; scale and B (of C values)
/// shaped [C, 1, …] (a `<const>` when constant, else a `_reshape`).
pub(crate) fn instance_norm(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let r = d.len();
    if r < 3 {
        return Err(LowerError::Other(format!(
            "a rank-{r} input (N, C and at least one spatial axis)"
        )));
    }
    if d[2..].contains(&0) {
        return Err("an empty spatial axis".into());
    }
    let c = d[1];
    let mut cd = vec![1; r - 1];
    cd[0] = c;
    let mut per_channel = |cx: &mut Tx, i: usize| -> Result<NodeId, LowerError> {
        if let Some(v) = cx.const_floats(node, i) {
            if c >= 0 && v.len() as i64 != c {
                return Err(LowerError::Other(format!(
                    "input {i} of {} values for {c} channels",
                    v.len()
                )));
            }
            let n = v.len() as i64;
            cd[0] = n;
            return cx.const_f32(&o, &cd, &v);
        }
        let v = cx.fin(node, i)?;
        let n = cx.fresh(&o);
        cx.reshape(&n, v, &cd)
    };
    let scale = per_channel(cx, 1)?;
    let bias = per_channel(cx, 2)?;
    let eps = f64::from(node.float("epsilon", 1e-5));
    let (n, _, _) = standardize(cx, &o, x, &d, 2, true, eps)?;
    let t = cx.tmp("mul", &o, &[n, scale], vec![], &d)?;
    cx.emit("add", &o, &[t, bias], vec![], &d)?;
    Ok(())
}
