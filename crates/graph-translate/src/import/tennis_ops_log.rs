//! ONNX → TenniS lowerings: `Log` and `LogSoftmax`. TenniS has no
//! logarithm operator (its only one inside a kernel is `softplus`'s
//! log(exp(x) + 1)), so the natural logarithm is composed from `pow` and
//! `exp` in f64 ([`ln`]), and `LogSoftmax` is the numerically stable
//! x − max − log(Σ exp(x − max)) with that logarithm.

use bubble_module::NodeId;

use super::LowerError;
use super::onnx_graph::{Node, elem};
use super::table::lowerings;
use super::tennis_cx::{Lowered, Tx, kv, out, p_bool, p_float, p_int, p_ints, ts_code};
use super::tennis_ops_basic::axis;

lowerings! { Tx;
    /// `ReduceLogSumExp` → [`reduce_log`] of exp.
    reduce_log_sum_exp(cx, node) => reduce_log(cx, node, true);
    /// `ReduceLogSum` → [`reduce_log`].
    reduce_log_sum(cx, node) => reduce_log(cx, node, false);
}

/// The root taken first: ln x = 2^20 · ln(x^(2^-20)).
const ROOT: f64 = 1_048_576.0;

/// An f64 `<const>` 0-d.
fn c64(cx: &mut Tx, hint: &str, v: f64) -> Result<NodeId, LowerError> {
    cx.const_e(hint, elem::DOUBLE, &[], &[v])
}

/// An f64 intermediate of `op`.
fn t64(
    cx: &mut Tx,
    op: &str,
    hint: &str,
    ins: &[NodeId],
    params: Vec<(String, bubble_module::Packed<'static>)>,
    d: &[i64],
) -> Result<NodeId, LowerError> {
    cx.tmp_e(op, hint, ins, params, d, elem::DOUBLE)
}

/// ln x of the f32 node `x` (shape `d`), named `o` when `named`.
///
/// In f64: r = x^(2^-20) (`pow`), u = r − 1, y₀ = 2^20 · u·(1 − u/2)
/// (the series of ln(1 + u), |u| < 1e-4 for every finite positive f32,
/// so the truncation error is below 4e-7), then one Newton step
/// y = y₀ + x·exp(−y₀) − 1, which squares that error and leaves the
/// rounding of f64 (about 1e-16 absolute, also near x = 1 where ln x is
/// small); cast to f32. x = ±0 gives −inf and x = +inf gives +inf
/// (`equal`, `where`); negative x and NaN give NaN (`pow`'s NaN).
pub(crate) fn ln(
    cx: &mut Tx,
    o: &str,
    x: NodeId,
    d: &[i64],
    named: bool,
) -> Result<NodeId, LowerError> {
    let f64_code = ts_code(elem::DOUBLE).ok_or("no f64")?;
    let f32_code = ts_code(elem::FLOAT).ok_or("no f32")?;
    let xd = t64(
        cx,
        "_cast",
        o,
        &[x],
        vec![kv("dtype", p_int(i64::from(f64_code)))],
        d,
    )?;
    let r = t64(
        cx,
        "pow",
        o,
        &[xd],
        vec![kv("y", p_float((1.0 / ROOT) as f32))],
        d,
    )?;
    let one = c64(cx, o, 1.0)?;
    let half = c64(cx, o, -0.5)?;
    let root = c64(cx, o, ROOT)?;
    let m1 = c64(cx, o, -1.0)?;
    let u = t64(cx, "sub", o, &[r, one], vec![], d)?;
    let h = t64(cx, "mul", o, &[u, half], vec![], d)?;
    let h1 = t64(cx, "add", o, &[h, one], vec![], d)?;
    let s = t64(cx, "mul", o, &[u, h1], vec![], d)?;
    let y0 = t64(cx, "mul", o, &[s, root], vec![], d)?;
    let ny = t64(cx, "mul", o, &[y0, m1], vec![], d)?;
    let e = t64(cx, "exp", o, &[ny], vec![], d)?;
    let q = t64(cx, "mul", o, &[xd, e], vec![], d)?;
    let c = t64(cx, "sub", o, &[q, one], vec![], d)?;
    let y1 = t64(cx, "add", o, &[y0, c], vec![], d)?;
    let p32 = vec![kv("dtype", p_int(i64::from(f32_code)))];
    let y = cx.tmp_e("_cast", o, &[y1], p32, d, elem::FLOAT)?;
    // the ends: ln ±0 = −inf, ln +inf = +inf
    let ones = vec![1; d.len()];
    let mut cur = y;
    let ends = [(0.0, f64::NEG_INFINITY), (f64::INFINITY, f64::INFINITY)];
    for (k, (at, v)) in ends.into_iter().enumerate() {
        // (of x's rank: TenniS's equal and where broadcast one rank only)
        let a = cx.const_f32(o, &ones, &[at])?;
        let v = cx.const_f32(o, &ones, &[v])?;
        let eq = cx.tmp_e("equal", o, &[x, a], vec![], d, elem::BOOL)?;
        cur = if named && k == 1 {
            cx.emit("where", o, &[eq, v, cur], vec![], d)?
        } else {
            cx.tmp("where", o, &[eq, v, cur], vec![], d)?
        };
    }
    Ok(cur)
}

/// `Log` → [`ln`].
pub(crate) fn log(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    ln(cx, &o, x, &d, true)?;
    Ok(())
}

/// `LogSoftmax` → `max` along the axis (kept), `sub`, `exp`,
/// `reduce_sum` (kept), [`ln`], `sub`: x − m − ln Σ exp(x − m), which
/// never overflows and keeps the precision of x − m. Before opset 13 the
/// input is coerced to 2-D at the axis (`_reshape` around it) unless the
/// axes after it are all 1.
pub(crate) fn log_softmax(cx: &mut Tx, node: &Node) -> Lowered {
    along_axis(cx, node, stable)
}

/// A lowering `f` of a `Softmax`-like `node` along its axis (opset 13 and
/// later, or where the axes after it are all 1), else of its input
/// coerced to 2-D at the axis, reshaped back. `f` is given the value, its
/// dimensions, the axis and whether it names the output itself.
pub(crate) fn along_axis(
    cx: &mut Tx,
    node: &Node,
    f: impl FnOnce(&mut Tx, &str, NodeId, &[i64], usize, bool) -> Result<NodeId, LowerError>,
) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let def = if cx.opset >= 13 { -1 } else { 1 };
    let a = axis(node.int("axis", def), d.len())?;
    if cx.opset >= 13 || a + 1 == d.len() || d[a + 1..].iter().all(|&v| v == 1) {
        f(cx, &o, x, &d, a, true)?;
        return Ok(());
    }
    if d.iter().any(|&v| v < 0) {
        return Err(LowerError::needs_shape("a symbolic dimension"));
    }
    let rows = d[..a]
        .iter()
        .try_fold(1i64, |p, &v| p.checked_mul(v))
        .ok_or(LowerError::TooLarge("too many elements"))?;
    let cols = d[a..]
        .iter()
        .try_fold(1i64, |p, &v| p.checked_mul(v))
        .ok_or(LowerError::TooLarge("too many elements"))?;
    let r = cx.fresh(&o);
    let flat = cx.reshape(&r, x, &[rows, cols])?;
    let s = f(cx, &o, flat, &[rows, cols], 1, false)?;
    cx.reshape(&o, s, &d)?;
    Ok(())
}

/// The log-softmax of `x` (shape `d`) along axis `a`.
fn stable(
    cx: &mut Tx,
    o: &str,
    x: NodeId,
    d: &[i64],
    a: usize,
    named: bool,
) -> Result<NodeId, LowerError> {
    if d[a] == 0 {
        return Err("an empty axis".into());
    }
    let mut kd = d.to_vec();
    kd[a] = 1;
    let m = cx.tmp(
        "max",
        o,
        &[x],
        vec![kv("dim", p_int(a as i64)), kv("keep_dims", p_int(1))],
        &kd,
    )?;
    let z = cx.tmp("sub", o, &[x, m], vec![], d)?;
    let e = cx.tmp("exp", o, &[z], vec![], d)?;
    let s = cx.tmp(
        "reduce_sum",
        o,
        &[e],
        vec![
            kv("dims", p_ints(&[a as i64])),
            kv("keep_dims", p_bool(true)),
        ],
        &kd,
    )?;
    let l = ln(cx, o, s, &kd, false)?;
    if named {
        cx.emit("sub", o, &[z, l], vec![], d)
    } else {
        cx.tmp("sub", o, &[z, l], vec![], d)
    }
}

/// `x` (shape `d`) reduced along each of `axes` by TenniS operator `op`
/// (`max` or `reduce_sum`), every axis kept; `kd` becomes the result's
/// shape.
fn reduce_kept(
    cx: &mut Tx,
    o: &str,
    x: NodeId,
    op: &str,
    axes: &[usize],
    kd: &mut [i64],
) -> Result<NodeId, LowerError> {
    let mut cur = x;
    for &a in axes {
        kd[a] = 1;
        let params = if op == "max" {
            vec![kv("dim", p_int(a as i64)), kv("keep_dims", p_int(1))]
        } else {
            vec![
                kv("dims", p_ints(&[a as i64])),
                kv("keep_dims", p_bool(true)),
            ]
        };
        cur = cx.tmp(op, o, &[cur], params, kd)?;
    }
    Ok(cur)
}

/// `ReduceLogSumExp` → per axis `max` (kept), `sub`, `exp`, per axis
/// `reduce_sum` (kept), [`ln`], `add`: m + ln Σ exp(x − m), which never
/// overflows; `ReduceLogSum` → per axis `reduce_sum`, [`ln`]. A
/// `_reshape` drops the axes when `keepdims` is 0. Axes from the
/// attribute (before opset 18) or a constant input.
fn reduce_log(cx: &mut Tx, node: &Node, exp: bool) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let mut ax = super::tennis_ops_reduce::given_axes(cx, node, d.len(), 18)?;
    if ax.is_empty() {
        if cx.opset >= 18 && node.int("noop_with_empty_axes", 0) != 0 {
            return Err("noop_with_empty_axes with no axes".into());
        }
        ax = (0..d.len()).collect();
    }
    ax.sort_unstable();
    ax.dedup();
    let keep = node.int("keepdims", 1) != 0;
    if ax.iter().any(|&a| d[a] == 0) {
        return Err("reducing an empty axis".into());
    }
    if !keep && d.iter().any(|&v| v < 0) {
        return Err(LowerError::needs_shape("a symbolic dimension"));
    }
    let mut kd = d.clone();
    let r = if exp {
        let m = reduce_kept(cx, &o, x, "max", &ax, &mut kd)?;
        let z = cx.tmp("sub", &o, &[x, m], vec![], &d)?;
        let e = cx.tmp("exp", &o, &[z], vec![], &d)?;
        let s = reduce_kept(cx, &o, e, "reduce_sum", &ax, &mut kd)?;
        let l = ln(cx, &o, s, &kd, false)?;
        if keep {
            cx.emit("add", &o, &[l, m], vec![], &kd)?;
            return Ok(());
        }
        cx.tmp("add", &o, &[l, m], vec![], &kd)?
    } else {
        let s = reduce_kept(cx, &o, x, "reduce_sum", &ax, &mut kd)?;
        if keep {
            ln(cx, &o, s, &kd, true)?;
            return Ok(());
        }
        ln(cx, &o, s, &kd, false)?
    };
    super::tennis_ops_reduce::drop_axes(cx, &o, r, &d, &ax)
}
