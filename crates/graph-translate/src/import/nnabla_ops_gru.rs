//! ONNX → NNabla lowering of `GRU` (its row: `nnabla_table/recurrent.rs`): the cell unrolled
//! over the static sequence length with `BatchMatmul`, `Sigmoid`, `Tanh`
//! and element-wise arithmetic, for both `linear_before_reset` forms (ONNX's
//! default, 0, applies the reset gate before the recurrent weights, a form
//! NNabla's own `GRU` lacks). The weights may be computed at run time.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{binary_vars, chain};
use super::nnabla_ops_rnn::{check_attrs, transpose};
use super::onnx_graph::{Node, elem};

/// The most cell steps (sequence length x directions) unrolled.
const MAX_STEPS: i64 = 1024;

fn slice(cx: &mut Cx<'_>, x: &str, start: &[i64], stop: &[i64]) -> Result<String, LowerError> {
    let dims: Vec<i64> = start.iter().zip(stop).map(|(a, b)| b - a).collect();
    let y = cx.fresh(x);
    cx.emit(
        "Slice",
        &[x],
        &[(&y, &dims)],
        Some(P::SliceParam(SliceParameter {
            start: start.to_vec(),
            stop: stop.to_vec(),
            step: vec![1; start.len()],
        })),
    );
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

/// `a @ b^T` over a leading batch axis of 1.
fn matmul_t(cx: &mut Cx<'_>, a: &str, b: &str) -> Result<String, LowerError> {
    let (sa, sb) = (cx.shape(a)?, cx.shape(b)?);
    let y = cx.fresh(a);
    cx.emit(
        "BatchMatmul",
        &[a, b],
        &[(&y, &[1, sa[1], sb[1]])],
        Some(P::BatchMatmulParam(BatchMatmulParameter {
            transpose_a: false,
            transpose_b: true,
        })),
    );
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

fn concat(cx: &mut Cx<'_>, parts: &[String], axis: usize, out: Option<&str>) -> Lowered2 {
    let mut d = cx.shape(&parts[0])?;
    let mut n = 0i64;
    for p in parts {
        n = n
            .checked_add(cx.shape(p)?[axis])
            .ok_or("concatenation size")?;
    }
    d[axis] = n;
    if parts.len() == 1 && out.is_none() {
        return Ok(parts[0].clone());
    }
    let y = out.map_or_else(|| cx.fresh(&parts[0]), str::to_string);
    let ins: Vec<&str> = parts.iter().map(String::as_str).collect();
    if parts.len() == 1 {
        cx.emit("Identity", &ins, &[(&y, &d)], None);
        cx.set_elem(&y, elem::FLOAT);
        return Ok(y);
    }
    cx.emit(
        "Concatenate",
        &ins,
        &[(&y, &d)],
        Some(P::ConcatenateParam(ConcatenateParameter {
            axis: axis as i64,
        })),
    );
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

type Lowered2 = Result<String, LowerError>;

fn dim(v: i64) -> Result<i64, LowerError> {
    if v <= 0 {
        return Err(LowerError::needs_shape(
            "a GRU over a symbolic or empty dimension",
        ));
    }
    Ok(v)
}

/// `GRU` (forward, reverse, bidirectional; layout 0 and 1; both
/// `linear_before_reset` forms).
pub(super) fn gru(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let (nd, layout) = check_attrs(node, &["sigmoid", "tanh"], "lowered: Sigmoid, Tanh")?;
    let reverse = node.string("direction", "forward") == "reverse";
    let lbr = node.int("linear_before_reset", 0) != 0;
    let mut x = cx.fvar(node, 0)?;
    if cx.shape(&x)?.len() != 3 {
        return Err("an input of rank other than 3".into());
    }
    if layout == 1 {
        x = transpose(cx, &x, &[1, 0, 2], None)?;
    }
    let xs = cx.shape(&x)?;
    let (t, b, i) = (dim(xs[0])?, dim(xs[1])?, dim(xs[2])?);
    if t.checked_mul(nd).is_none_or(|s| s > MAX_STEPS) {
        return Err(LowerError::Other(format!(
            "a sequence of {t} steps (unrolled up to {MAX_STEPS} steps)"
        )));
    }
    let w = cx.fvar(node, 1)?;
    let r = cx.fvar(node, 2)?;
    let ws = cx.shape(&w)?;
    let h = node.int("hidden_size", 0);
    let h = if h > 0 {
        h
    } else {
        ws.get(1).copied().unwrap_or(0) / 3
    };
    let h = dim(h)?;
    let h3 = h.checked_mul(3).ok_or("hidden_size")?;
    if ws != [nd, h3, i] || cx.shape(&r)? != [nd, h3, h] {
        return Err("W or R of another shape than the direction, gates and sizes give".into());
    }
    let bias = match node.input(3) {
        None => None,
        Some(_) => {
            let bv = cx.fvar(node, 3)?;
            if cx.shape(&bv)? != [nd, 2 * h3] {
                return Err("B of another shape than the direction and sizes give".into());
            }
            Some(bv)
        }
    };
    let h0 = match node.input(5) {
        None => None,
        Some(_) => {
            let v = cx.fvar(node, 5)?;
            let want = if layout == 1 { [b, nd, h] } else { [nd, b, h] };
            if cx.shape(&v)? != want {
                return Err("initial_h of another shape than (D, B, H)".into());
            }
            Some(if layout == 1 {
                transpose(cx, &v, &[1, 0, 2], None)?
            } else {
                v
            })
        }
    };
    let tb = t.checked_mul(b).ok_or("sequence size")?;
    let x3 = cx.reshape(&x, &[1, tb, i])?;
    let g = Gru {
        node,
        t,
        b,
        i,
        h,
        lbr,
        layout,
        x3,
        w,
        r,
        bias,
        h0,
    };
    let mut ys = Vec::new();
    let mut hs = Vec::new();
    for d in 0..nd {
        let (y, hp) = direction(cx, &g, d, reverse || d == 1)?;
        ys.push(y);
        hs.push(hp);
    }
    outputs(cx, &g, &ys, &hs)?;
    Ok(())
}

/// One GRU, its sizes and inputs, shared by its directions: `x3` is the
/// sequence as (1, T*B, I), `w`, `r`, `bias` and `h0` ONNX's inputs (`h0`
/// in (D, B, H)).
struct Gru<'a> {
    node: &'a Node,
    t: i64,
    b: i64,
    i: i64,
    h: i64,
    lbr: bool,
    layout: i64,
    x3: String,
    w: String,
    r: String,
    bias: Option<String>,
    h0: Option<String>,
}

/// The recurrent weights and biases of one direction.
struct Cell {
    rzr: String,
    rh: String,
    brzr: Option<String>,
    brh: Option<String>,
}

/// Direction `d` (backwards when `back`) unrolled: its outputs over the
/// sequence (T, B, H) and its last state (1, B, H).
fn direction(
    cx: &mut Cx<'_>,
    g: &Gru<'_>,
    d: i64,
    back: bool,
) -> Result<(String, String), LowerError> {
    let (t, b, i, h) = (g.t, g.b, g.i, g.h);
    let h3 = 3 * h;
    let wd = slice(cx, &g.w, &[d, 0, 0], &[d + 1, h3, i])?;
    let xw = matmul_t(cx, &g.x3, &wd)?;
    let mut xw = cx.reshape(&xw, &[t, b, h3])?;
    let mut cell = Cell {
        rzr: slice(cx, &g.r, &[d, 0, 0], &[d + 1, 2 * h, h])?,
        rh: slice(cx, &g.r, &[d, 2 * h, 0], &[d + 1, h3, h])?,
        brzr: None,
        brh: None,
    };
    if let Some(bv) = &g.bias {
        let wb = slice(cx, bv, &[d, 0], &[d + 1, h3])?;
        xw = binary_vars(cx, "Add2", &xw, &wb, None, elem::FLOAT)?;
        cell.brzr = Some(slice(cx, bv, &[d, h3], &[d + 1, h3 + 2 * h])?);
        let v = slice(cx, bv, &[d, h3 + 2 * h], &[d + 1, 2 * h3])?;
        cell.brh = Some(cx.reshape(&v, &[1, 1, h])?);
    }
    let mut hp = match &g.h0 {
        Some(v) => slice(cx, v, &[d, 0, 0], &[d + 1, b, h])?,
        None => cx.param(
            &format!("{}__initial_h", g.node.name),
            &[1, b, h],
            &super::zeros("initial state", &[b, h])?,
        )?,
    };
    let mut outs = vec![String::new(); usize::try_from(t).map_err(|_| "steps")?];
    for k in 0..t {
        let step = if back { t - 1 - k } else { k };
        hp = cell_step(cx, g, &cell, &xw, step, &hp)?;
        if let Some(o) = usize::try_from(step).ok().and_then(|s| outs.get_mut(s)) {
            *o = hp.clone();
        }
    }
    Ok((concat(cx, &outs, 0, None)?, hp))
}

/// One step of the cell: the state after sequence position `step` of `xw`
/// (the input times W, biased) from the state `hp` before it.
fn cell_step(cx: &mut Cx<'_>, g: &Gru<'_>, cell: &Cell, xw: &str, step: i64, hp: &str) -> Lowered2 {
    let (b, h) = (g.b, g.h);
    let h3 = 3 * h;
    let xzr = slice(cx, xw, &[step, 0, 0], &[step + 1, b, 2 * h])?;
    let xh = slice(cx, xw, &[step, 0, 2 * h], &[step + 1, b, h3])?;
    let mut hz = matmul_t(cx, hp, &cell.rzr)?;
    if let Some(v) = &cell.brzr {
        hz = binary_vars(cx, "Add2", &hz, v, None, elem::FLOAT)?;
    }
    let zr = binary_vars(cx, "Add2", &xzr, &hz, None, elem::FLOAT)?;
    let zr = chain(cx, &zr, "Sigmoid", None)?;
    let z = slice(cx, &zr, &[0, 0, 0], &[1, b, h])?;
    let rg = slice(cx, &zr, &[0, 0, h], &[1, b, 2 * h])?;
    let hh = if g.lbr {
        let mut m = matmul_t(cx, hp, &cell.rh)?;
        if let Some(v) = &cell.brh {
            m = binary_vars(cx, "Add2", &m, v, None, elem::FLOAT)?;
        }
        binary_vars(cx, "Mul2", &rg, &m, None, elem::FLOAT)?
    } else {
        let rhp = binary_vars(cx, "Mul2", &rg, hp, None, elem::FLOAT)?;
        let mut m = matmul_t(cx, &rhp, &cell.rh)?;
        if let Some(v) = &cell.brh {
            m = binary_vars(cx, "Add2", &m, v, None, elem::FLOAT)?;
        }
        m
    };
    let pre = binary_vars(cx, "Add2", &xh, &hh, None, elem::FLOAT)?;
    let cand = chain(cx, &pre, "Tanh", None)?;
    // h' = (1 - z) * cand + z * h
    let omz = chain(
        cx,
        &z,
        "RSubScalar",
        Some(P::RSubScalarParam(RSubScalarParameter { val: 1.0 })),
    )?;
    let a = binary_vars(cx, "Mul2", &omz, &cand, None, elem::FLOAT)?;
    let c = binary_vars(cx, "Mul2", &z, hp, None, elem::FLOAT)?;
    binary_vars(cx, "Add2", &a, &c, None, elem::FLOAT)
}

/// `Y` as (T, D, B, H) (layout 0) or (B, T, D, H) and `Y_h` as (D, B, H)
/// or (B, D, H), from the directions' outputs `ys` and last states `hs`.
fn outputs(cx: &mut Cx<'_>, g: &Gru<'_>, ys: &[String], hs: &[String]) -> Lowered {
    let (node, t, b, h, layout) = (g.node, g.t, g.b, g.h, g.layout);
    // Y: (T, D, B, H) (layout 0) or (B, T, D, H).
    if node.has_output(0) {
        let out = &node.outputs[0];
        let parts: Vec<String> = ys
            .iter()
            .map(|y| cx.reshape(y, &[t, 1, b, h]))
            .collect::<Result<_, _>>()?;
        if layout == 1 {
            let y = concat(cx, &parts, 1, None)?;
            transpose(cx, &y, &[2, 0, 1, 3], Some(out))?;
        } else {
            concat(cx, &parts, 1, Some(out))?;
        }
        cx.set_elem(out, elem::FLOAT);
    }
    // Y_h: (D, B, H) (layout 0) or (B, D, H).
    if node.has_output(1) {
        let out = &node.outputs[1];
        if layout == 1 {
            let y = concat(cx, hs, 0, None)?;
            transpose(cx, &y, &[1, 0, 2], Some(out))?;
        } else {
            concat(cx, hs, 0, Some(out))?;
        }
        cx.set_elem(out, elem::FLOAT);
    }
    Ok(())
}
