//! ONNX → TenniS lowerings: reductions (`ReduceMean`, `ReduceSum`) and
//! `ArgMax`.

use super::LowerError;
use super::onnx_graph::{Node, elem};
use super::table::lowerings;
use super::tennis_cx::out;
use super::tennis_cx::{Lowered, Tx, kv, p_bool, p_int, p_ints};
use super::tennis_ops_basic::axis;

lowerings! { Tx;
    /// `ReduceMean` → `reduce_mean`.
    reduce_mean(cx, node) => reduce(cx, node, "reduce_mean", false, 18);
    /// `ReduceSum` → `reduce_sum` (axes an input from opset 13).
    reduce_sum(cx, node) => reduce(cx, node, "reduce_sum", false, 13);
    /// `ReduceMax` → `max`.
    reduce_max(cx, node) => reduce(cx, node, "max", false, 18);
    /// `ReduceMin` → −`max`(−x).
    reduce_min(cx, node) => reduce(cx, node, "max", true, 18);
    /// `ArgMax` → [`arg`].
    arg_max(cx, node) => arg(cx, node, false);
    /// `ArgMin` → [`arg`] of −x.
    arg_min(cx, node) => arg(cx, node, true);
    /// `MaxPool` → `pooling2d` (type 0).
    max_pool(cx, node) => super::tennis_ops_nn::pool(cx, node, true);
    /// `AveragePool` → `pooling2d` (type 1).
    average_pool(cx, node) => super::tennis_ops_nn::pool(cx, node, false);
    /// `GlobalAveragePool` → `global_pooling2d` (type 1) or `reduce_mean`s.
    global_average_pool(cx, node) => super::tennis_ops_nn::global_pool(cx, node, false);
    /// `GlobalMaxPool` → `global_pooling2d` (type 0) or `max`es.
    global_max_pool(cx, node) => super::tennis_ops_nn::global_pool(cx, node, true);
}

/// `ReduceMean` → `reduce_mean`, `ReduceSum` → `reduce_sum`, `ReduceMax`
/// → `max`, `ReduceMin` → −`max`(−x) (TenniS's CPU has no min): one
/// reduction per axis (TenniS reduces contiguous axes only), each keeping
/// its axis, then a `_reshape` when `keepdims` is 0. Axes come from the
/// attribute (before opset 13 for `ReduceSum`, 18 for the others) or a
/// constant input.
///
/// Here: the TenniS operator `op` (of −x, negated back, when `neg`), the
/// axes an input from opset `input_from`.
fn reduce(cx: &mut Tx, node: &Node, op: &str, neg: bool, input_from: i64) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let keep = node.int("keepdims", 1) != 0;
    let mut ax = given_axes(cx, node, d.len(), input_from)?;
    if ax.is_empty() {
        if cx.opset >= input_from && node.int("noop_with_empty_axes", 0) != 0 {
            cx.emit("_copy", &o, &[x], vec![], &d)?;
            return Ok(());
        }
        ax = (0..d.len()).collect();
    }
    ax.sort_unstable();
    ax.dedup();
    if ax.iter().any(|&a| d[a] == 0) {
        return Err("reducing an empty axis".into());
    }
    if ax.iter().any(|&a| d[a] < 0) && !keep {
        return Err(LowerError::needs_shape("a symbolic dimension"));
    }
    let mut kd = d.clone();
    let mut cur = x;
    if neg {
        let m = cx.scalar(&o, -1.0)?;
        cur = cx.tmp("mul", &o, &[x, m], vec![], &d)?;
    }
    for (i, &a) in ax.iter().enumerate() {
        kd[a] = 1;
        let params = if op == "max" {
            vec![kv("dim", p_int(a as i64)), kv("keep_dims", p_int(1))]
        } else {
            vec![
                kv("dims", p_ints(&[a as i64])),
                kv("keep_dims", p_bool(true)),
            ]
        };
        cur = if keep && !neg && i + 1 == ax.len() {
            cx.emit(op, &o, &[cur], params, &kd)?
        } else {
            cx.tmp(op, &o, &[cur], params, &kd)?
        };
    }
    if neg {
        let m = cx.scalar(&o, -1.0)?;
        if keep {
            cx.emit("mul", &o, &[cur, m], vec![], &kd)?;
            return Ok(());
        }
        cur = cx.tmp("mul", &o, &[cur, m], vec![], &kd)?;
    }
    if keep {
        return Ok(());
    }
    drop_axes(cx, &o, cur, &d, &ax)
}

/// `v` (of `d` with the axes `ax` reduced to 1) reshaped into `o` without
/// those axes (`keepdims` 0).
pub(crate) fn drop_axes(
    cx: &mut Tx,
    o: &str,
    v: bubble_module::NodeId,
    d: &[i64],
    ax: &[usize],
) -> Lowered {
    let nd: Vec<i64> = d
        .iter()
        .enumerate()
        .filter(|(i, _)| !ax.contains(i))
        .map(|(_, &v)| v)
        .collect();
    cx.reshape(o, v, &nd)?;
    Ok(())
}

/// The axes a reduction names (the `axes` attribute before opset
/// `input_from`, from it a constant input), made positive; empty when it
/// names none.
pub(crate) fn given_axes(
    cx: &Tx,
    node: &Node,
    rank: usize,
    input_from: i64,
) -> Result<Vec<usize>, LowerError> {
    let axes = cx.axes(node, input_from)?;
    axes.iter().map(|&a| axis(a, rank)).collect()
}

/// `ArgMax` → `max` along the axis, `sub` (x − max: +0 exactly at the
/// maxima, negative elsewhere), `argmax` (int32 indices of the first
/// maximum), then a `_reshape` when `keepdims` is 1. TenniS's CPU argmax
/// compares the bits of f32 values as int32 (it dispatches on its int32
/// output), which orders negative values backwards; after the
/// subtraction the largest bits are those of +0, the maximum. `ArgMin`
/// takes the maximum of −x; `select_last_index` 1 reverses the axis
/// first (`strided_slice`, step −1) and counts the index from the end.
fn arg(cx: &mut Tx, node: &Node, min: bool) -> Lowered {
    let mut x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    if min {
        // the first minimum of x is the first maximum of −x (exact)
        let m = cx.scalar(&o, -1.0)?;
        x = cx.tmp("mul", &o, &[x, m], vec![], &d)?;
    }
    let last = node.int("select_last_index", 0) != 0;
    let a = axis(node.int("axis", 0), d.len())?;
    if d[a] < 1 {
        return Err("an empty or symbolic axis".into());
    }
    if last {
        // the last maximum is the first of x reversed along the axis
        // (strided_slice, step −1), its index L − 1 − i
        let r = d.len();
        let mut begin = vec![0; r];
        let mut end = d.clone();
        let mut stride = vec![1; r];
        begin[a] = d[a] - 1;
        end[a] = -(d[a] + 1);
        stride[a] = -1;
        if d.iter().any(|&v| v < 0) {
            return Err(LowerError::needs_shape("a symbolic dimension"));
        }
        let params = vec![
            kv("begin", p_ints(&begin)),
            kv("end", p_ints(&end)),
            kv("stride", p_ints(&stride)),
        ];
        x = cx.tmp("strided_slice", &o, &[x], params, &d)?;
    }
    let keep = node.int("keepdims", 1) != 0;
    let mut kd = d.clone();
    kd[a] = 1;
    let m = cx.tmp(
        "max",
        &o,
        &[x],
        vec![kv("dim", p_int(a as i64)), kv("keep_dims", p_int(1))],
        &kd,
    )?;
    let y = cx.tmp("sub", &o, &[x, m], vec![], &d)?;
    let mut nd = d.clone();
    nd.remove(a);
    let params = vec![kv("dim", p_int(a as i64))];
    if keep && d.iter().filter(|&&v| v < 0).count() > 1 {
        return Err(LowerError::needs_shape("a symbolic dimension"));
    }
    if !keep && !last {
        cx.emit("argmax", &o, &[y], params, &nd)?;
    } else {
        let mut z = cx.tmp("argmax", &o, &[y], params, &nd)?;
        if last {
            let l = cx.const_i32(&o, &[], &[d[a] - 1])?;
            z = if keep {
                cx.tmp("sub", &o, &[l, z], vec![], &nd)?
            } else {
                cx.emit("sub", &o, &[l, z], vec![], &nd)?
            };
        }
        if keep {
            cx.reshape(&o, z, &kd)?;
        }
    }
    cx.set_elem(&o, elem::INT32);
    Ok(())
}

/// `GlobalAveragePool`, `GlobalMaxPool` of a rank other than 4 (a 1-D or
/// 3-D signal, which TenniS's `global_pooling2d` does not take): a
/// `reduce_mean` (or `max`) per spatial axis, each keeping its axis.
pub(crate) fn global_pool_nd(cx: &mut Tx, node: &Node, max: bool) -> Lowered {
    let d = cx.in_shape(node, 0)?;
    if d.len() < 3 {
        return Err(LowerError::Other(format!(
            "a rank-{} input (no spatial axis)",
            d.len()
        )));
    }
    if d[2..].iter().any(|&v| v <= 0) {
        return Err("a symbolic or empty spatial dimension".into());
    }
    let o = out(node)?.to_string();
    let mut kd = d.clone();
    let mut cur = cx.fin(node, 0)?;
    for a in 2..d.len() {
        kd[a] = 1;
        let (op, params) = if max {
            (
                "max",
                vec![kv("dim", p_int(a as i64)), kv("keep_dims", p_int(1))],
            )
        } else {
            (
                "reduce_mean",
                vec![
                    kv("dims", p_ints(&[a as i64])),
                    kv("keep_dims", p_bool(true)),
                ],
            )
        };
        cur = if a + 1 == d.len() {
            cx.emit(op, &o, &[cur], params, &kd)?
        } else {
            cx.tmp(op, &o, &[cur], params, &kd)?
        };
    }
    Ok(())
}
