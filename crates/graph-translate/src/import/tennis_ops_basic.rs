//! ONNX → TenniS lowerings: element-wise math, activations and shape
//! operators (reshapes, transposes, concatenation).

use super::LowerError;
use super::onnx_graph::Node;
use super::table::lowerings;
use super::tennis_cx::out;
use super::tennis_cx::{Lowered, Tx, broadcast, is_int, kv, p_float, p_int, p_ints};

/// A normalised axis of a rank-`r` tensor.
pub(crate) fn axis(a: i64, r: usize) -> Result<usize, LowerError> {
    let v = if a < 0 { a + r as i64 } else { a };
    if (0..r as i64).contains(&v) {
        Ok(v as usize)
    } else {
        Err(LowerError::AxisOutOfRange { axis: a, rank: r })
    }
}

lowerings! { Tx;
    /// `Relu` → `relu`.
    relu(cx, node) => unary(cx, node, "relu");
    /// `Sigmoid` → `sigmoid`.
    sigmoid(cx, node) => unary(cx, node, "sigmoid");
    /// `Tanh` → `tanh` (a `Tanh` of a `Softplus`:
    /// `tennis_ops_act::tanh_of_softplus`).
    tanh(cx, node) => match super::tennis_ops_act::tanh_of_softplus(cx, node) {
        Some(r) => r,
        None => unary(cx, node, "tanh"),
    };
    /// `Exp` → `exp`.
    exp(cx, node) => unary(cx, node, "exp");
    /// `Sqrt` → `sqrt`.
    sqrt(cx, node) => unary(cx, node, "sqrt");
    /// `Abs` → `abs`.
    abs(cx, node) => unary(cx, node, "abs");
    /// `Floor` → `floor`.
    floor(cx, node) => unary(cx, node, "floor");
    /// `Ceil` → `ceil`.
    ceil(cx, node) => unary(cx, node, "ceil");
    /// `Neg` → `mul` by −1.
    neg(cx, node) => neg_recip(cx, node, true);
    /// `Reciprocal` → `div` of 1.
    reciprocal(cx, node) => neg_recip(cx, node, false);
    /// `Add` → `add`.
    add(cx, node) => binary(cx, node, "add", Some("add"), false);
    /// `Sub` → `sub`.
    sub(cx, node) => binary(cx, node, "sub", Some("sub"), false);
    /// `Mul` → `mul`.
    mul(cx, node) => binary(cx, node, "mul", Some("mul"), false);
    /// `Div` → `div`.
    div(cx, node) => binary(cx, node, "div", Some("div"), false);
    /// `Sum` → `add` (chained).
    sum(cx, node) => binary(cx, node, "add", Some("add"), false);
    /// `Mean` → `add` (chained), `div` (integers refused).
    mean(cx, node) => binary(cx, node, "add", None, true);
    /// `Max` → `maximum` (chained).
    max(cx, node) => binary(cx, node, "maximum", Some("maximum"), false);
    /// `Min` → `minimum` (chained; integers: `min`).
    min(cx, node) => binary(cx, node, "minimum", Some("min"), false);
    /// `Identity` → the input itself.
    identity(cx, node) => pass_through(cx, node, false);
    /// `Dropout` (inference) → the input itself.
    dropout(cx, node) => pass_through(cx, node, true);
    /// `Reshape` → `_reshape` / `_reshape_v2`.
    reshape(cx, node) => reshape_of(cx, node, Shaping::Reshape);
    /// `Flatten` → `_reshape`.
    flatten(cx, node) => reshape_of(cx, node, Shaping::Flatten);
    /// `Squeeze` → `_reshape`.
    squeeze(cx, node) => reshape_of(cx, node, Shaping::Squeeze);
    /// `Unsqueeze` → `_reshape`.
    unsqueeze(cx, node) => reshape_of(cx, node, Shaping::Unsqueeze);
}

/// A unary operator TenniS has as it is (`op`).
fn unary(cx: &mut Tx, node: &Node, op: &str) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    cx.emit(op, out(node)?, &[x], vec![], &d)?;
    Ok(())
}

/// `Neg` (`neg`: x · −1) and `Reciprocal` (1 / x).
fn neg_recip(cx: &mut Tx, node: &Node, neg: bool) -> Lowered {
    if let Some(e) = node
        .input(0)
        .map(|i| cx.elem(i))
        .filter(|&e| is_int(e) || e == super::onnx_graph::elem::DOUBLE)
    {
        return super::tennis_ops_logic::typed_neg_recip(cx, node, e, neg);
    }
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    if neg {
        let m = cx.scalar(o, -1.0)?;
        cx.emit("mul", o, &[x, m], vec![], &d)?;
    } else {
        let one = cx.scalar(o, 1.0)?;
        cx.emit("div", o, &[one, x], vec![], &d)?;
    }
    Ok(())
}

/// Binary and variadic element-wise operators (numpy broadcasting): the
/// TenniS operator `op` on floats, [`super::tennis_ops_logic::int_binary`]'s
/// `int_op` on integers and f64 (`None`: refused); `mean` divides the sum
/// by the count.
fn binary(cx: &mut Tx, node: &Node, op: &str, int_op: Option<&str>, mean: bool) -> Lowered {
    if let Some(e) = node
        .input(0)
        .map(|i| cx.elem(i))
        .filter(|&e| is_int(e) || e == super::onnx_graph::elem::DOUBLE)
    {
        return super::tennis_ops_logic::int_binary(cx, node, e, int_op);
    }
    let n = node.inputs.iter().filter(|i| !i.is_empty()).count();
    if n == 0 {
        return Err(LowerError::absent("inputs"));
    }
    let o = out(node)?.to_string();
    let mean = mean && n > 1;
    let mut acc = cx.fin(node, 0)?;
    let mut d = cx.in_shape(node, 0)?;
    if n == 1 {
        cx.emit("_copy", &o, &[acc], vec![], &d)?;
        return Ok(());
    }
    for i in 1..n {
        let y = cx.fin(node, i)?;
        d = broadcast(&d, &cx.in_shape(node, i)?)?;
        if op == "minimum" {
            let last = i + 1 == n;
            acc = cx.minimum(&o, acc, y, &d, !last)?;
            continue;
        }
        acc = if i + 1 == n && !mean {
            cx.emit(op, &o, &[acc, y], vec![], &d)?
        } else {
            cx.tmp(op, &o, &[acc, y], vec![], &d)?
        };
    }
    if mean {
        let k = cx.scalar(&o, n as f64)?;
        cx.emit("div", &o, &[acc, k], vec![], &d)?;
    }
    Ok(())
}

/// `LeakyRelu` → `leaky_relu`.
pub(crate) fn leaky_relu(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    let a = node.float("alpha", 0.01);
    cx.emit("leaky_relu", o, &[x], vec![kv("scale", p_float(a))], &d)?;
    Ok(())
}

/// `PRelu`: max(x, 0) + slope · min(x, 0).
pub(crate) fn prelu(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    let s = cx.fin(node, 1)?;
    let od = broadcast(&d, &cx.in_shape(node, 1)?)?;
    if od != d {
        return Err("a slope that broadcasts x to another shape".into());
    }
    let zero = cx.scalar(o, 0.0)?;
    let pos = cx.tmp("maximum", o, &[x, zero], vec![], &d)?;
    // min(x, 0) = x − max(x, 0), exact.
    let neg = cx.tmp("sub", o, &[x, pos], vec![], &d)?;
    let sn = cx.tmp("mul", o, &[neg, s], vec![], &d)?;
    cx.emit("add", o, &[pos, sn], vec![], &d)?;
    Ok(())
}

/// `Clip`: maximum with the lower bound, minimum with the upper one
/// (constants or values computed at run time; integers: the minimum as
/// `where(maximum(a, c) == a, c, a)`).
pub(crate) fn clip(cx: &mut Tx, node: &Node) -> Lowered {
    let (x, e) = cx.tin(node, 0)?;
    let int = is_int(e);
    if !(int || e == super::onnx_graph::elem::FLOAT) {
        return Err(LowerError::DType { elem: e });
    }
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    // a bound: a constant, or a value computed at run time (a node)
    let mut bounds: Vec<(bool, bubble_module::NodeId)> = Vec::new();
    if cx.opset < 11 {
        for (upper, v) in [
            (false, f64::from(node.float("min", f32::MIN))),
            (true, f64::from(node.float("max", f32::MAX))),
        ] {
            bounds.push((upper, cx.scalar(&o, v)?));
        }
    } else {
        for (upper, i) in [(false, 1), (true, 2)] {
            let Some(name) = node.input(i) else { continue };
            if !cx.shape(name)?.iter().all(|&v| v == 1) {
                return Err("bounds that are not one value".into());
            }
            let (b, eb) = cx.tin(node, i)?;
            if eb != e {
                return Err("bounds of another type".into());
            }
            bounds.push((upper, b));
        }
    }
    if bounds.is_empty() {
        cx.emit_e("_copy", &o, &[x], vec![], &d, e)?;
        return Ok(());
    }
    let mut cur = x;
    let n = bounds.len();
    for (k, (upper, c)) in bounds.into_iter().enumerate() {
        let last = k + 1 == n;
        let hint = if last { o.clone() } else { cx.fresh(&o) };
        cur = if !upper {
            cx.emit_e("maximum", &hint, &[cur, c], vec![], &d, e)?
        } else if int {
            // min(a, c) = where(maximum(a, c) == a, c, a): exact
            // (where broadcasts operands of one rank only)
            let c = super::tennis_ops_logic::to_rank(cx, &o, c, &[], d.len())?;
            let m = cx.tmp_e("maximum", &o, &[cur, c], vec![], &d, e)?;
            let ge = cx.tmp_e(
                "equal",
                &o,
                &[m, cur],
                vec![],
                &d,
                super::onnx_graph::elem::BOOL,
            )?;
            cx.emit_e("where", &hint, &[ge, c, cur], vec![], &d, e)?
        } else {
            cx.minimum(&hint, cur, c, &d, false)?
        };
    }
    Ok(())
}

/// `Softmax` over one axis (opset 13+) or over the flattened trailing
/// axes (opsets 7–12, through a reshape).
pub(crate) fn softmax(cx: &mut Tx, node: &Node) -> Lowered {
    super::tennis_ops_log::along_axis(cx, node, |cx, o, x, d, a, named| {
        let p = vec![kv("dim", p_int(a as i64))];
        if named {
            cx.emit("softmax", o, &[x], p, d)
        } else {
            cx.tmp("softmax", o, &[x], p, d)
        }
    })
}

/// `Identity`, `Dropout` (`dropout`; inference: the input itself).
fn pass_through(cx: &mut Tx, node: &Node, dropout: bool) -> Lowered {
    if dropout {
        // The mask output (all true in inference) is not produced: a
        // node or graph output that reads it is refused as reading a value
        // that is not computed.
        if let Some(v) = cx.const_floats(node, 2)
            && v.iter().any(|&t| t != 0.0)
        {
            return Err("training_mode".into());
        } else if node.input(2).is_some() && cx.const_floats(node, 2).is_none() {
            return Err(LowerError::NotConstant {
                what: "training_mode",
            });
        }
    }
    let x = node
        .input(0)
        .ok_or(LowerError::absent("input"))?
        .to_string();
    cx.fin(node, 0)?;
    cx.alias(out(node)?, &x)
}

/// The reshaping operators ([`reshape_of`]).
#[derive(Clone, Copy)]
enum Shaping {
    Reshape,
    Flatten,
    Squeeze,
    Unsqueeze,
}

/// Reshapes with a static result: `Reshape`, `Flatten`, `Squeeze`,
/// `Unsqueeze` become `_reshape`; a `Reshape` to a shape computed at run
/// time becomes `_reshape_v2`.
fn reshape_of(cx: &mut Tx, node: &Node, op: Shaping) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    if d.iter().any(|&v| v < 0) {
        return Err(LowerError::needs_shape("a symbolic dimension"));
    }
    let ud: Vec<usize> = d.iter().map(|&v| v as usize).collect();
    let axes = |cx: &Tx| cx.axes(node, 13);
    let nd: Vec<i64> = match op {
        Shaping::Reshape if cx.const_ints(node, 1).is_none() => {
            // a shape computed at run time → `_reshape_v2` (TenniS's: 0
            // copies the input's size, −1 is inferred, as ONNX's allowzero 0)
            if node.int("allowzero", 0) != 0 {
                return Err("allowzero 1 with a shape computed at run time".into());
            }
            let (s, es) = cx.tin(node, 1)?;
            if !is_int(es) {
                return Err("a shape that is not integers".into());
            }
            let k = match cx.in_shape(node, 1)?.as_slice() {
                [k] if *k >= 0 => *k as usize,
                _ => return Err("a shape that is not 1-D".into()),
            };
            cx.emit("_reshape_v2", out(node)?, &[x, s], vec![], &vec![-1; k])?;
            return Ok(());
        }
        Shaping::Reshape => {
            let s = cx
                .const_ints(node, 1)
                .ok_or(LowerError::NotConstant { what: "a shape" })?;
            let allowzero = node.int("allowzero", 0) != 0;
            super::fold::reshape_dims(&ud, &s, allowzero)
                .ok_or("a shape that does not fit the input")?
                .into_iter()
                .map(|v| v as i64)
                .collect()
        }
        Shaping::Flatten => {
            let a = node.int("axis", 1);
            let a = if a < 0 { a + d.len() as i64 } else { a };
            if a < 0 || a > d.len() as i64 {
                return Err(LowerError::value("axis", a));
            }
            let a = a as usize;
            vec![d[..a].iter().product(), d[a..].iter().product()]
        }
        Shaping::Squeeze => {
            let ax = axes(cx)?;
            let ax: Vec<usize> = ax
                .iter()
                .map(|&a| axis(a, d.len()))
                .collect::<Result<_, _>>()?;
            if ax.iter().any(|&a| d[a] != 1) {
                return Err("squeezing an axis whose size is not 1".into());
            }
            d.iter()
                .enumerate()
                .filter(|(i, v)| {
                    if ax.is_empty() {
                        **v != 1
                    } else {
                        !ax.contains(i)
                    }
                })
                .map(|(_, &v)| v)
                .collect()
        }
        Shaping::Unsqueeze => {
            let ax = axes(cx)?;
            let r = d.len() + ax.len();
            let ax: Vec<usize> = ax.iter().map(|&a| axis(a, r)).collect::<Result<_, _>>()?;
            let mut it = d.iter();
            (0..r)
                .map(|i| {
                    if ax.contains(&i) {
                        1
                    } else {
                        *it.next().unwrap_or(&1)
                    }
                })
                .collect()
        }
    };
    cx.reshape(out(node)?, x, &nd)?;
    Ok(())
}

/// `Transpose` → `_transpose` (`permute`).
pub(crate) fn transpose(cx: &mut Tx, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let perm = node
        .ints("perm")
        .unwrap_or_else(|| (0..d.len() as i64).rev().collect());
    let mut seen = vec![false; d.len()];
    for &p in &perm {
        let p = usize::try_from(p).map_err(|_| "a negative perm entry")?;
        if p >= d.len() || std::mem::replace(&mut seen[p], true) {
            return Err(LowerError::value("perm", format!("{perm:?}")));
        }
    }
    if perm.len() != d.len() {
        return Err(LowerError::value("perm", format!("{perm:?}")));
    }
    let nd: Vec<i64> = perm.iter().map(|&p| d[p as usize]).collect();
    cx.emit(
        "_transpose",
        out(node)?,
        &[x],
        vec![kv("permute", p_ints(&perm))],
        &nd,
    )?;
    Ok(())
}

/// `Concat` → `concat` (`dim`).
pub(crate) fn concat(cx: &mut Tx, node: &Node) -> Lowered {
    let n = node.inputs.len();
    let d0 = cx.in_shape(node, 0)?;
    let a = axis(node.int("axis", 1), d0.len())?;
    let mut ids = Vec::new();
    let mut total = 0i64;
    for i in 0..n {
        let d = cx.in_shape(node, i)?;
        if d.len() != d0.len()
            || d.iter()
                .zip(&d0)
                .enumerate()
                .any(|(k, (x, y))| k != a && x != y)
        {
            return Err("inputs whose shapes do not match".into());
        }
        total += d[a];
        ids.push(cx.fin(node, i)?);
    }
    let mut nd = d0.clone();
    nd[a] = total;
    cx.emit(
        "concat",
        out(node)?,
        &ids,
        vec![kv("dim", p_int(a as i64))],
        &nd,
    )?;
    Ok(())
}
