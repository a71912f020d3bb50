//! ONNX → NNabla lowerings: element-wise operators (activations, math,
//! arithmetic with numpy broadcasting, comparisons, logic, `Where`).
//!
//! NNabla's two-input functions (`Add2`, `Mul2`, `Equal`, `Where`, ...)
//! broadcast only between inputs of the same rank, size-1 dimensions
//! against any: the lowerings first give both inputs the output's rank.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered, broadcast_shapes};
use super::onnx_graph::{Node, elem};
use super::table::lowerings;

/// Emits a one-input function on a float input with the input's shape.
pub(crate) fn unary(cx: &mut Cx<'_>, node: &Node, ty: &str, p: Option<P>) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    cx.emit(ty, &[&x], &[(&node.outputs[0], &s)], p);
    Ok(())
}

/// A one-input function on `x` into a fresh variable.
pub(crate) fn chain(
    cx: &mut Cx<'_>,
    x: &str,
    ty: &str,
    p: Option<P>,
) -> Result<String, LowerError> {
    let s = cx.shape(x)?;
    let y = cx.fresh(x);
    cx.emit(ty, &[x], &[(&y, &s)], p);
    Ok(y)
}

/// A one-input function on `x` into the named `out`.
pub(crate) fn chain_to(cx: &mut Cx<'_>, x: &str, out: &str, ty: &str, p: Option<P>) -> Lowered {
    let s = cx.shape(x)?;
    cx.emit(ty, &[x], &[(out, &s)], p);
    Ok(())
}

pub(crate) fn mul_scalar(v: f64) -> Option<P> {
    Some(P::MulScalarParam(MulScalarParameter {
        val: v,
        inplace: false,
    }))
}
pub(crate) fn add_scalar(v: f64) -> Option<P> {
    Some(P::AddScalarParam(AddScalarParameter {
        val: v,
        inplace: false,
    }))
}

/// A two-input NNabla function `ty` on variables `a` and `b` with numpy
/// broadcasting, into `out` (or a fresh variable), typed `e`.
pub(crate) fn binary_vars(
    cx: &mut Cx<'_>,
    ty: &str,
    a: &str,
    b: &str,
    out: Option<&str>,
    e: i32,
) -> Result<String, LowerError> {
    let (sa, sb) = (cx.shape(a)?, cx.shape(b)?);
    let so = broadcast_shapes(&sa, &sb)?;
    let a = cx.with_rank(a, so.len())?;
    let b = cx.with_rank(b, so.len())?;
    let y = match out {
        Some(o) => o.to_string(),
        None => cx.fresh(&a),
    };
    cx.emit(ty, &[&a, &b], &[(&y, &so)], None);
    cx.set_elem(&y, e);
    Ok(y)
}

/// The scalar value of a one-element constant input.
fn scalar_of(cx: &Cx<'_>, node: &Node, i: usize) -> Option<f64> {
    let c = cx.konst(node.input(i)?)?;
    let v = c.values();
    (v.len() == 1).then(|| v[0])
}

/// Whether input `i`'s shape is the output shape (the other input
/// broadcasts into it).
fn keeps_shape(cx: &Cx<'_>, node: &Node, i: usize) -> bool {
    let (Ok(a), Ok(b)) = (cx.in_shape(node, 0), cx.in_shape(node, 1)) else {
        return false;
    };
    broadcast_shapes(&a, &b).is_ok_and(|o| o == if i == 0 { a } else { b })
}

/// The arithmetic operators ([`arith`]).
#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

lowerings! { Cx<'_>;
    /// `Add` → `Add2` / `AddScalar`.
    add(cx, node) => arith(cx, node, Arith::Add);
    /// `Sub` → `Sub2` / `AddScalar` / `RSubScalar`.
    sub(cx, node) => arith(cx, node, Arith::Sub);
    /// `Mul` → `Mul2` / `MulScalar`.
    mul(cx, node) => arith(cx, node, Arith::Mul);
    /// `Div` → `Div2` / `RDivScalar`.
    div(cx, node) => arith(cx, node, Arith::Div);
    /// `Pow` → `Pow2` / `PowScalar` / `RPowScalar`.
    pow(cx, node) => arith(cx, node, Arith::Pow);
    /// `Equal` → `Equal`.
    equal(cx, node) => compare(cx, node, "Equal");
    /// `Greater` → `Greater`.
    greater(cx, node) => compare(cx, node, "Greater");
    /// `Less` → `Less`.
    less(cx, node) => compare(cx, node, "Less");
    /// `GreaterOrEqual` → `GreaterEqual`.
    greater_or_equal(cx, node) => compare(cx, node, "GreaterEqual");
    /// `LessOrEqual` → `LessEqual`.
    less_or_equal(cx, node) => compare(cx, node, "LessEqual");
    /// `And` → `LogicalAnd`.
    and(cx, node) => logical(cx, node, "LogicalAnd");
    /// `Or` → `LogicalOr`.
    or(cx, node) => logical(cx, node, "LogicalOr");
    /// `Xor` → `LogicalXor`.
    xor(cx, node) => logical(cx, node, "LogicalXor");
    /// `Sum` → `Add2`s.
    sum(cx, node) => variadic(cx, node, "Add2", false);
    /// `Mean` → `Add2`s, `MulScalar`.
    mean(cx, node) => variadic(cx, node, "Add2", true);
    /// `Max` → `Maximum2`s.
    max(cx, node) => variadic(cx, node, "Maximum2", false);
    /// `Min` → `Minimum2`s.
    min(cx, node) => variadic(cx, node, "Minimum2", false);
}

/// `Add`, `Sub`, `Mul`, `Div`, `Pow` (`op`): a scalar-constant operand
/// becomes a scalar function where that is exact; otherwise the
/// broadcasting two-input function.
fn arith(cx: &mut Cx<'_>, node: &Node, op: Arith) -> Lowered {
    let ty = match op {
        Arith::Add => "Add2",
        Arith::Sub => "Sub2",
        Arith::Mul => "Mul2",
        Arith::Div => "Div2",
        Arith::Pow => "Pow2",
    };
    let out = node.outputs[0].clone();
    if let Some(c) = scalar_of(cx, node, 1).filter(|_| keeps_shape(cx, node, 0)) {
        let p = match op {
            Arith::Add => Some(("AddScalar", add_scalar(c))),
            Arith::Sub => Some(("AddScalar", add_scalar(-c))),
            Arith::Mul => Some(("MulScalar", mul_scalar(c))),
            Arith::Pow => Some((
                "PowScalar",
                Some(P::PowScalarParam(PowScalarParameter {
                    val: c,
                    inplace: false,
                })),
            )),
            Arith::Div => None,
        };
        if let Some((ty, p)) = p {
            let x = cx.fvar(node, 0)?;
            return chain_to(cx, &x, &out, ty, p);
        }
    }
    if let Some(c) = scalar_of(cx, node, 0).filter(|_| keeps_shape(cx, node, 1)) {
        let (ty, p) = match op {
            Arith::Add => ("AddScalar", add_scalar(c)),
            Arith::Mul => ("MulScalar", mul_scalar(c)),
            Arith::Sub => (
                "RSubScalar",
                Some(P::RSubScalarParam(RSubScalarParameter { val: c })),
            ),
            Arith::Div => (
                "RDivScalar",
                Some(P::RDivScalarParam(RDivScalarParameter { val: c })),
            ),
            Arith::Pow => (
                "RPowScalar",
                Some(P::RPowScalarParam(RPowScalarParameter { val: c })),
            ),
        };
        let x = cx.fvar(node, 1)?;
        return chain_to(cx, &x, &out, ty, p);
    }
    let a = cx.fvar(node, 0)?;
    let b = cx.fvar(node, 1)?;
    binary_vars(cx, ty, &a, &b, Some(&out), elem::FLOAT)?;
    Ok(())
}

/// A comparison `ty` (inputs of any type f32 holds; output boolean 0/1).
fn compare(cx: &mut Cx<'_>, node: &Node, ty: &str) -> Lowered {
    let a = cx.avar(node, 0)?;
    let b = cx.avar(node, 1)?;
    let out = node.outputs[0].clone();
    binary_vars(cx, ty, &a, &b, Some(&out), elem::BOOL)?;
    Ok(())
}

/// A logical function `ty` on booleans.
fn logical(cx: &mut Cx<'_>, node: &Node, ty: &str) -> Lowered {
    let a = cx.avar(node, 0)?;
    let b = cx.avar(node, 1)?;
    let out = node.outputs[0].clone();
    binary_vars(cx, ty, &a, &b, Some(&out), elem::BOOL)?;
    Ok(())
}

/// `Not` on booleans.
pub(crate) fn not(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.avar(node, 0)?;
    chain_to(cx, &x, &node.outputs[0], "LogicalNot", None)?;
    cx.set_elem(&node.outputs[0], elem::BOOL);
    Ok(())
}

/// `Sum`, `Mean` (`mean`), `Max`, `Min` over any number of inputs, with
/// the two-input function `ty`.
fn variadic(cx: &mut Cx<'_>, node: &Node, ty: &str, mean: bool) -> Lowered {
    let n = node.inputs.iter().filter(|i| !i.is_empty()).count();
    if n == 0 {
        return Err(LowerError::absent("inputs"));
    }
    let out = node.outputs[0].clone();
    let mut acc = cx.fvar(node, 0)?;
    for i in 1..n {
        let b = cx.fvar(node, i)?;
        let last = i == n - 1 && !mean;
        acc = binary_vars(cx, ty, &acc, &b, last.then_some(out.as_str()), elem::FLOAT)?;
    }
    if mean && n > 1 {
        chain_to(cx, &acc, &out, "MulScalar", mul_scalar(1.0 / n as f64))?;
    } else if n == 1 {
        chain_to(cx, &acc, &out, "Identity", None)?;
    }
    Ok(())
}

/// `Where(cond, x, y)`: every input broadcast to the output's shape
/// (NNabla's `Where` takes equal shapes).
pub(crate) fn where_(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let c = cx.avar(node, 0)?;
    let x = cx.avar(node, 1)?;
    let y = cx.avar(node, 2)?;
    let so = broadcast_shapes(&cx.shape(&c)?, &cx.shape(&x)?)?;
    let so = broadcast_shapes(&so, &cx.shape(&y)?)?;
    let mut ins = Vec::new();
    for v in [c, x.clone(), y] {
        ins.push(broadcast_to(cx, &v, &so)?);
    }
    let e = cx.elem(&x);
    cx.emit(
        "Where",
        &[&ins[0], &ins[1], &ins[2]],
        &[(&node.outputs[0], &so)],
        None,
    );
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// `x` broadcast to `to` (same rank first, then `Broadcast`).
pub(crate) fn broadcast_to(cx: &mut Cx<'_>, x: &str, to: &[i64]) -> Result<String, LowerError> {
    let x = cx.with_rank(x, to.len())?;
    let s = cx.shape(&x)?;
    if s == to {
        return Ok(x);
    }
    if to.iter().any(|&d| d < 0) {
        return Err(LowerError::AcrossBatch {
            what: "broadcast over",
        });
    }
    let e = cx.elem(&x);
    let y = cx.fresh(&x);
    cx.emit(
        "Broadcast",
        &[&x],
        &[(&y, to)],
        Some(P::BroadcastParam(BroadcastParameter {
            shape: Some(Shape { dim: to.to_vec() }),
        })),
    );
    cx.set_elem(&y, e);
    Ok(y)
}

/// `Clip` with constant bounds (attributes before opset 11, inputs after).
pub(crate) fn clip(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let (lo, hi) = if cx.opset < 11 {
        (
            Some(f64::from(node.float("min", f32::MIN))),
            Some(f64::from(node.float("max", f32::MAX))),
        )
    } else {
        let known = |i: usize| node.input(i).is_none() || scalar_of(cx, node, i).is_some();
        if !known(1) || !known(2) {
            return clip_runtime(cx, node);
        }
        (
            node.input(1).and_then(|_| scalar_of(cx, node, 1)),
            node.input(2).and_then(|_| scalar_of(cx, node, 2)),
        )
    };
    let mut x = cx.fvar(node, 0)?;
    let out = node.outputs[0].clone();
    match (lo, hi) {
        (None, None) => chain_to(cx, &x, &out, "Identity", None),
        (Some(l), None) => chain_to(cx, &x, &out, "MaximumScalar", max_s(l)),
        (None, Some(h)) => chain_to(cx, &x, &out, "MinimumScalar", min_s(h)),
        (Some(l), Some(h)) => {
            x = chain(cx, &x, "MaximumScalar", max_s(l))?;
            chain_to(cx, &x, &out, "MinimumScalar", min_s(h))
        }
    }
}

/// `Clip` with a bound computed at run time: `Maximum2` / `Minimum2` with
/// the (scalar) bound broadcast, `min(max(x, lo), hi)` as ONNX defines it.
fn clip_runtime(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let mut x = cx.fvar(node, 0)?;
    let out = node.outputs[0].clone();
    let lo = node.input(1).map(|_| cx.fvar(node, 1)).transpose()?;
    let hi = node.input(2).map(|_| cx.fvar(node, 2)).transpose()?;
    for b in [&lo, &hi].into_iter().flatten() {
        if cx.shape(b)?.iter().product::<i64>() != 1 {
            return Err("a bound that is not a scalar".into());
        }
    }
    if let Some(l) = &lo {
        let o = hi.is_none().then_some(out.as_str());
        x = binary_vars(cx, "Maximum2", &x, l, o, elem::FLOAT)?;
    }
    if let Some(h) = &hi {
        binary_vars(cx, "Minimum2", &x, h, Some(&out), elem::FLOAT)?;
    }
    Ok(())
}

fn max_s(v: f64) -> Option<P> {
    Some(P::MaximumScalarParam(MaximumScalarParameter { val: v }))
}
fn min_s(v: f64) -> Option<P> {
    Some(P::MinimumScalarParam(MinimumScalarParameter { val: v }))
}

/// `PRelu`: `max(0, x) + slope * min(0, x)`, the slope broadcast.
pub(crate) fn prelu(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.fvar(node, 1)?;
    let pos = chain(cx, &x, "MaximumScalar", max_s(0.0))?;
    let neg = chain(cx, &x, "MinimumScalar", min_s(0.0))?;
    let scaled = binary_vars(cx, "Mul2", &neg, &s, None, elem::FLOAT)?;
    let out = node.outputs[0].clone();
    binary_vars(cx, "Add2", &pos, &scaled, Some(&out), elem::FLOAT)?;
    Ok(())
}

lowerings! { Cx<'_>;
    /// `Relu` → `ReLU`.
    relu(cx, node) => unary(
        cx,
        node,
        "ReLU",
        Some(P::ReluParam(ReLuParameter { inplace: false })),
    );
    /// `LeakyRelu` → `LeakyReLU`.
    leaky_relu(cx, node) => unary(
        cx,
        node,
        "LeakyReLU",
        Some(P::LeakyReluParam(LeakyReLuParameter {
            alpha: node.float("alpha", 0.01),
            inplace: false,
        })),
    );
    /// `Elu` → `ELU`.
    elu(cx, node) => unary(
        cx,
        node,
        "ELU",
        Some(P::EluParam(EluParameter {
            alpha: f64::from(node.float("alpha", 1.0)),
        })),
    );
    /// `Selu` → `SELU`.
    selu(cx, node) => unary(
        cx,
        node,
        "SELU",
        Some(P::SeluParam(SeluParameter {
            scale: f64::from(node.float("gamma", 1.050_701)),
            alpha: f64::from(node.float("alpha", 1.673_263_2)),
        })),
    );
    /// `Softplus` → `SoftPlus`.
    softplus(cx, node) => unary(
        cx,
        node,
        "SoftPlus",
        Some(P::SoftplusParam(SoftPlusParameter { beta: 1.0 })),
    );
    /// `Sign` → `Sign`.
    sign(cx, node) => unary(
        cx,
        node,
        "Sign",
        Some(P::SignParam(SignParameter { alpha: 0.0 })),
    );
    /// `Neg` → `MulScalar` by −1.
    neg(cx, node) => unary(cx, node, "MulScalar", mul_scalar(-1.0));
    /// `Reciprocal` → `RDivScalar` of 1.
    reciprocal(cx, node) => unary(
        cx,
        node,
        "RDivScalar",
        Some(P::RDivScalarParam(RDivScalarParameter { val: 1.0 })),
    );
    /// `Sqrt` → `PowScalar` by ½.
    sqrt(cx, node) => unary(
        cx,
        node,
        "PowScalar",
        Some(P::PowScalarParam(PowScalarParameter {
            val: 0.5,
            inplace: false,
        })),
    );
    /// `HardSigmoid` from scalar arithmetic.
    hard_sigmoid(cx, node) => hard_sigmoid_of(cx, node, false);
    /// `HardSwish`: x times `HardSigmoid` with alpha 1/6 and beta 0.5.
    hard_swish(cx, node) => hard_sigmoid_of(cx, node, true);
    /// `IsNaN` → `IsNaN`.
    is_nan(cx, node) => is_nan_inf(cx, node, "IsNaN");
    /// `IsInf` (both signs only) → `IsInf`.
    is_inf(cx, node) => is_nan_inf(cx, node, "IsInf");
    /// `Sigmoid` → `Sigmoid`.
    sigmoid(cx, node) => unary(cx, node, "Sigmoid", None);
    /// `Tanh` → `Tanh`.
    tanh(cx, node) => unary(cx, node, "Tanh", None);
    /// `Exp` → `Exp`.
    exp(cx, node) => unary(cx, node, "Exp", None);
    /// `Log` → `Log`.
    log(cx, node) => unary(cx, node, "Log", None);
    /// `Abs` → `Abs`.
    abs(cx, node) => unary(cx, node, "Abs", None);
    /// `Floor` → `Floor`.
    floor(cx, node) => unary(cx, node, "Floor", None);
    /// `Ceil` → `Ceil`.
    ceil(cx, node) => unary(cx, node, "Ceil", None);
    /// `Sin` → `Sin`.
    sin(cx, node) => unary(cx, node, "Sin", None);
    /// `Cos` → `Cos`.
    cos(cx, node) => unary(cx, node, "Cos", None);
    /// `Tan` → `Tan`.
    tan(cx, node) => unary(cx, node, "Tan", None);
    /// `Asin` → `ASin`.
    asin(cx, node) => unary(cx, node, "ASin", None);
    /// `Acos` → `ACos`.
    acos(cx, node) => unary(cx, node, "ACos", None);
    /// `Atan` → `ATan`.
    atan(cx, node) => unary(cx, node, "ATan", None);
    /// `Sinh` → `Sinh`.
    sinh(cx, node) => unary(cx, node, "Sinh", None);
    /// `Cosh` → `Cosh`.
    cosh(cx, node) => unary(cx, node, "Cosh", None);
    /// `Asinh` → `ASinh`.
    asinh(cx, node) => unary(cx, node, "ASinh", None);
    /// `Acosh` → `ACosh`.
    acosh(cx, node) => unary(cx, node, "ACosh", None);
    /// `Atanh` → `ATanh`.
    atanh(cx, node) => unary(cx, node, "ATanh", None);
    /// `Erf` → `Erf`.
    erf(cx, node) => unary(cx, node, "Erf", None);
    /// `Softsign` → `SoftSign`.
    softsign(cx, node) => unary(cx, node, "SoftSign", None);
    /// `Mish` → `Mish`.
    mish(cx, node) => unary(cx, node, "Mish", None);
}

/// `Celu`: alpha * ELU(x / alpha, 1).
pub(crate) fn celu(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let out = node.outputs[0].as_str();
    let a = f64::from(node.float("alpha", 1.0));
    let x = cx.fvar(node, 0)?;
    let t = chain(cx, &x, "MulScalar", mul_scalar(1.0 / a))?;
    let t = chain(
        cx,
        &t,
        "ELU",
        Some(P::EluParam(EluParameter { alpha: 1.0 })),
    )?;
    chain_to(cx, &t, out, "MulScalar", mul_scalar(a))
}

/// `HardSigmoid` (and, `swish`, `HardSwish`: x times it with alpha 1/6
/// and beta 0.5) from scalar arithmetic.
fn hard_sigmoid_of(cx: &mut Cx<'_>, node: &Node, swish: bool) -> Lowered {
    let out = node.outputs[0].as_str();
    let (a, b) = if swish {
        (1.0 / 6.0, 0.5)
    } else {
        (
            f64::from(node.float("alpha", 0.2)),
            f64::from(node.float("beta", 0.5)),
        )
    };
    let x = cx.fvar(node, 0)?;
    let t = chain(cx, &x, "MulScalar", mul_scalar(a))?;
    let t = chain(cx, &t, "AddScalar", add_scalar(b))?;
    let t = chain(cx, &t, "MaximumScalar", max_s(0.0))?;
    if !swish {
        chain_to(cx, &t, out, "MinimumScalar", min_s(1.0))
    } else {
        let t = chain(cx, &t, "MinimumScalar", min_s(1.0))?;
        binary_vars(cx, "Mul2", &x, &t, Some(out), elem::FLOAT).map(drop)
    }
}

/// `ThresholdedRelu`: x times (x > alpha).
pub(crate) fn thresholded_relu(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let out = node.outputs[0].as_str();
    let a = f64::from(node.float("alpha", 1.0));
    let x = cx.fvar(node, 0)?;
    let m = chain(
        cx,
        &x,
        "GreaterScalar",
        Some(P::GreaterScalarParam(GreaterScalarParameter { val: a })),
    )?;
    binary_vars(cx, "Mul2", &x, &m, Some(out), elem::FLOAT).map(drop)
}

/// `Gelu`: NNabla's `GELU` for the tanh approximation, the exact form from `Erf`.
pub(crate) fn gelu(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let out = node.outputs[0].as_str();
    match node.string("approximate", "none").as_str() {
        "tanh" => unary(cx, node, "GELU", None),
        "none" => {
            let x = cx.fvar(node, 0)?;
            let t = chain(
                cx,
                &x,
                "MulScalar",
                mul_scalar(std::f64::consts::FRAC_1_SQRT_2),
            )?;
            let t = chain(cx, &t, "Erf", None)?;
            let t = chain(cx, &t, "AddScalar", add_scalar(1.0))?;
            let t = chain(cx, &t, "MulScalar", mul_scalar(0.5))?;
            binary_vars(cx, "Mul2", &x, &t, Some(out), elem::FLOAT).map(drop)
        }
        other => Err(LowerError::attr("approximate", format!("{other:?}"))),
    }
}

/// `IsNaN`, `IsInf` (both signs only): booleans, by NNabla's `ty`.
fn is_nan_inf(cx: &mut Cx<'_>, node: &Node, ty: &str) -> Lowered {
    let out = node.outputs[0].as_str();
    if ty == "IsInf" && (node.int("detect_positive", 1) != 1 || node.int("detect_negative", 1) != 1)
    {
        return Err("detect_positive/detect_negative=0".into());
    }
    let x = cx.fvar(node, 0)?;
    chain_to(cx, &x, out, ty, None)?;
    cx.set_elem(out, elem::BOOL);
    Ok(())
}

/// `Swish`: `x * sigmoid(alpha * x)`.
pub(crate) fn swish(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let out = node.outputs[0].clone();
    let a = f64::from(node.float("alpha", 1.0));
    let x = cx.fvar(node, 0)?;
    let t = chain(cx, &x, "MulScalar", mul_scalar(a))?;
    let t = chain(cx, &t, "Sigmoid", None)?;
    binary_vars(cx, "Mul2", &x, &t, Some(&out), elem::FLOAT).map(drop)
}

/// `Shrink`: `x − bias` above `lambd`, `x + bias` below `−lambd`, else 0.
pub(crate) fn shrink(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let out = node.outputs[0].clone();
    let l = f64::from(node.float("lambd", 0.5));
    let b = f64::from(node.float("bias", 0.0));
    let x = cx.fvar(node, 0)?;
    let hi = chain(
        cx,
        &x,
        "GreaterScalar",
        Some(P::GreaterScalarParam(GreaterScalarParameter { val: l })),
    )?;
    let lo = chain(
        cx,
        &x,
        "LessScalar",
        Some(P::LessScalarParam(LessScalarParameter { val: -l })),
    )?;
    let xm = chain(cx, &x, "AddScalar", add_scalar(-b))?;
    let xp = chain(cx, &x, "AddScalar", add_scalar(b))?;
    let a = binary_vars(cx, "Mul2", &xm, &hi, None, elem::FLOAT)?;
    let c = binary_vars(cx, "Mul2", &xp, &lo, None, elem::FLOAT)?;
    binary_vars(cx, "Add2", &a, &c, Some(&out), elem::FLOAT).map(drop)
}

/// `Mod` → `Mod2` (C's fmod); `fmod=0` (numpy's mod) corrected from it.
pub(crate) fn modulo(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let out = node.outputs[0].clone();
    let python = node.int("fmod", 0) == 0;
    let a = cx.fvar(node, 0)?;
    let b = cx.fvar(node, 1)?;
    let (sa, sb) = (cx.shape(&a)?, cx.shape(&b)?);
    let so = broadcast_shapes(&sa, &sb)?;
    let a = cx.with_rank(&a, so.len())?;
    let b = cx.with_rank(&b, so.len())?;
    // NNabla's Mod2 on floats is C's fmod (the dividend's sign).
    let r = if python { cx.fresh(&a) } else { out.clone() };
    cx.emit(
        "Mod2",
        &[&a, &b],
        &[(&r, &so)],
        Some(P::Mod2Param(Mod2Parameter { fmod: true })),
    );
    cx.set_elem(&r, elem::FLOAT);
    if !python {
        return Ok(());
    }
    // fmod=0 (numpy.mod): r + b where r is non-zero and its sign
    // differs from the divisor's, as numpy computes it.
    let nz = chain(
        cx,
        &r,
        "NotEqualScalar",
        Some(P::NotEqualScalarParam(NotEqualScalarParameter { val: 0.0 })),
    )?;
    let less0 = |v: f64| Some(P::LessScalarParam(LessScalarParameter { val: v }));
    let rn = chain(cx, &r, "LessScalar", less0(0.0))?;
    let bn = chain(cx, &b, "LessScalar", less0(0.0))?;
    let diff = binary_vars(cx, "LogicalXor", &rn, &bn, None, elem::BOOL)?;
    let cond = binary_vars(cx, "LogicalAnd", &nz, &diff, None, elem::BOOL)?;
    let cond = broadcast_to(cx, &cond, &so)?;
    let rb = binary_vars(cx, "Add2", &r, &b, None, elem::FLOAT)?;
    let rb = broadcast_to(cx, &rb, &so)?;
    cx.emit("Where", &[&cond, &rb, &r], &[(&out, &so)], None);
    cx.set_elem(&out, elem::FLOAT);
    Ok(())
}
