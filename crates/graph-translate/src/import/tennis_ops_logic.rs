//! ONNX → TenniS lowerings of integer and boolean tensors: `Cast`,
//! comparisons, logical operators, `Where`, integer arithmetic.
//!
//! TenniS keeps a boolean as one byte (`BOOLEAN`, what its `equal`
//! returns) and casts with C++ `static_cast`, so a float 0.5 or an
//! integer 256 cast to `BOOLEAN` gives 0, not ONNX's `x != 0`; its CPU
//! `equal`, `where`, `mul` and `maximum` take no `BOOLEAN` operands. The
//! lowerings below therefore compute on booleans as `uint8` 0/1 (exact
//! casts both ways) and make booleans only with `equal`.

use bubble_module::NodeId;

use super::LowerError;
use super::onnx_graph::{Node, elem};
use super::table::lowerings;
use super::tennis_cx::out;
use super::tennis_cx::{Lowered, Tx, broadcast, is_int, kv, p_int, ts_code};

lowerings! { Tx;
    /// `Cast` → [`cast`] to its `to`.
    cast(cx, node) => cast_of(cx, node, false);
    /// `CastLike` → [`cast`] to its second input's type.
    cast_like(cx, node) => cast_of(cx, node, true);
    /// `Equal` → `equal`.
    equal(cx, node) => compare(cx, node, Cmp::Equal);
    /// `Greater` → `not (maximum(a, b) == b)`.
    greater(cx, node) => compare(cx, node, Cmp::Greater);
    /// `Less` → `not (maximum(a, b) == a)`.
    less(cx, node) => compare(cx, node, Cmp::Less);
    /// `GreaterOrEqual` → `maximum(a, b) == a`.
    greater_or_equal(cx, node) => compare(cx, node, Cmp::GreaterOrEqual);
    /// `LessOrEqual` → `maximum(a, b) == b`.
    less_or_equal(cx, node) => compare(cx, node, Cmp::LessOrEqual);
    /// `And` → `mul` on uint8 0/1.
    and(cx, node) => logical(cx, node, Logic::And);
    /// `Or` → `maximum` on uint8 0/1.
    or(cx, node) => logical(cx, node, Logic::Or);
    /// `Xor` → `not (a == b)` on uint8 0/1.
    xor(cx, node) => logical(cx, node, Logic::Xor);
}

fn name(e: i32) -> &'static str {
    onnx_format::dtype::onnx_name(e)
}

/// `_cast` of `x` to ONNX element type `to` (a TenniS type).
fn cast_to(
    cx: &mut Tx,
    hint: &str,
    x: NodeId,
    to: i32,
    dims: &[i64],
    named: bool,
) -> Result<NodeId, LowerError> {
    let code = ts_code(to).ok_or_else(|| format!("to {} (TenniS has no such type)", name(to)))?;
    let p = vec![kv("dtype", p_int(i64::from(code)))];
    if named {
        cx.emit_e("_cast", hint, &[x], p, dims, to)
    } else {
        cx.tmp_e("_cast", hint, &[x], p, dims, to)
    }
}

/// A boolean as `uint8` 0/1.
fn u8_of(cx: &mut Tx, hint: &str, x: NodeId, dims: &[i64]) -> Result<NodeId, LowerError> {
    cast_to(cx, hint, x, elem::UINT8, dims, false)
}

/// `x == 0` for `x` of type `e` (a `BOOLEAN`).
fn is_zero(
    cx: &mut Tx,
    hint: &str,
    x: NodeId,
    e: i32,
    dims: &[i64],
    named: bool,
) -> Result<NodeId, LowerError> {
    let z = cx.const_e(hint, e, &[], &[0.0])?;
    if named {
        cx.emit_e("equal", hint, &[x, z], vec![], dims, elem::BOOL)
    } else {
        cx.tmp_e("equal", hint, &[x, z], vec![], dims, elem::BOOL)
    }
}

/// `not b` for a `BOOLEAN` `b`.
fn not(
    cx: &mut Tx,
    hint: &str,
    b: NodeId,
    dims: &[i64],
    named: bool,
) -> Result<NodeId, LowerError> {
    let b8 = u8_of(cx, hint, b, dims)?;
    is_zero(cx, hint, b8, elem::UINT8, dims, named)
}

/// `Cast` (and, `like`, `CastLike`, to the type of its second input) → `_cast`
/// (C++ `static_cast`: truncation toward zero from
/// float to integer, as ONNX); to `BOOL` as `not (x == 0)`; from `BOOL`
/// its 0/1.
fn cast_of(cx: &mut Tx, node: &Node, like: bool) -> Lowered {
    let to = if like {
        cx.elem(node.input(1).ok_or(LowerError::Absent {
            what: "target_type input",
        })?)
    } else {
        i32::try_from(node.int("to", 0)).unwrap_or(0)
    };
    let (x, e) = cx.tin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    if ts_code(to).is_none() {
        return Err(LowerError::Other(format!(
            "to {} (TenniS has no such type)",
            name(to)
        )));
    }
    if to == e {
        let src = node
            .input(0)
            .ok_or(LowerError::absent("input"))?
            .to_string();
        return cx.alias(&o, &src);
    }
    if to == elem::BOOL {
        let z = is_zero(cx, &o, x, e, &d, false)?;
        not(cx, &o, z, &d, true)?;
        return Ok(());
    }
    if !(e == elem::BOOL || e == elem::FLOAT || e == elem::DOUBLE || is_int(e)) {
        return Err(LowerError::Other(format!("from {}", name(e))));
    }
    cast_to(cx, &o, x, to, &d, true)?;
    Ok(())
}

/// `x` of shape `dx` reshaped to rank `r` with leading 1s: TenniS's
/// `equal` and `where` broadcast only operands of one rank.
pub(crate) fn to_rank(
    cx: &mut Tx,
    hint: &str,
    x: NodeId,
    dx: &[i64],
    r: usize,
) -> Result<NodeId, LowerError> {
    if dx.len() >= r {
        return Ok(x);
    }
    let mut d = vec![1; r - dx.len()];
    d.extend_from_slice(dx);
    let n = cx.fresh(hint);
    cx.reshape(&n, x, &d)
}

/// Two inputs of one element type (brought to one rank), and their
/// broadcast shape.
fn two(cx: &mut Tx, node: &Node) -> Result<(NodeId, NodeId, i32, Vec<i64>), LowerError> {
    let (a, ea) = cx.tin(node, 0)?;
    let (b, eb) = cx.tin(node, 1)?;
    if ea != eb {
        return Err(LowerError::Other(format!(
            "operands of types {} and {}",
            name(ea),
            name(eb)
        )));
    }
    let (da, db) = (cx.in_shape(node, 0)?, cx.in_shape(node, 1)?);
    let d = broadcast(&da, &db)?;
    let hint = out(node)?.to_string();
    let a = to_rank(cx, &hint, a, &da, d.len())?;
    let b = to_rank(cx, &hint, b, &db, d.len())?;
    Ok((a, b, ea, d))
}

/// The comparisons ([`compare`]).
#[derive(Clone, Copy, PartialEq)]
enum Cmp {
    Equal,
    Greater,
    Less,
    GreaterOrEqual,
    LessOrEqual,
}

/// The logical operators of two inputs ([`logical`]).
#[derive(Clone, Copy, PartialEq)]
enum Logic {
    And,
    Or,
    Xor,
}

/// `Equal` → `equal` (booleans compared as uint8); `GreaterOrEqual(a, b)`
/// → `equal(maximum(a, b), a)`; `LessOrEqual(a, b)` → `equal(maximum(a,
/// b), b)`; `Greater` and `Less` their negations (TenniS has no ordered
/// comparison). Exact for numbers; NaN operands are not defined to match.
fn compare(cx: &mut Tx, node: &Node, c: Cmp) -> Lowered {
    let (mut a, mut b, e, d) = two(cx, node)?;
    let o = out(node)?.to_string();
    if e == elem::BOOL {
        if c != Cmp::Equal {
            return Err("BOOL operands (TenniS orders no booleans)".into());
        }
        // (the shapes recorded for the casts are not read again)
        a = u8_of(cx, &o, a, &d)?;
        b = u8_of(cx, &o, b, &d)?;
    }
    // (the operand `maximum(a, b)` is compared with, and whether negated)
    let (side, negate) = match c {
        Cmp::Equal => {
            cx.emit_e("equal", &o, &[a, b], vec![], &d, elem::BOOL)?;
            return Ok(());
        }
        Cmp::GreaterOrEqual => (a, false),
        Cmp::LessOrEqual => (b, false),
        Cmp::Greater => (b, true),
        Cmp::Less => (a, true),
    };
    let m = cx.tmp_e("maximum", &o, &[a, b], vec![], &d, e)?;
    if negate {
        let ge = cx.tmp_e("equal", &o, &[m, side], vec![], &d, elem::BOOL)?;
        not(cx, &o, ge, &d, true)?;
    } else {
        cx.emit_e("equal", &o, &[m, side], vec![], &d, elem::BOOL)?;
    }
    Ok(())
}

/// `Not` on uint8 0/1: `x == 0`, back to `BOOLEAN` by `_cast` (exact for
/// 0 and 1).
pub(crate) fn logical_not(cx: &mut Tx, node: &Node) -> Lowered {
    let o = out(node)?.to_string();
    let (x, e) = cx.tin(node, 0)?;
    if e != elem::BOOL {
        return Err(LowerError::DType { elem: e });
    }
    let d = cx.in_shape(node, 0)?;
    not(cx, &o, x, &d, true)?;
    Ok(())
}

/// `And`, `Or`, `Xor` on uint8 0/1: `a · b`, `maximum(a, b)`, `not (a ==
/// b)`; back to `BOOLEAN` by `_cast` (exact for 0 and 1).
fn logical(cx: &mut Tx, node: &Node, op: Logic) -> Lowered {
    let o = out(node)?.to_string();
    let (a, b, e, d) = two(cx, node)?;
    if e != elem::BOOL {
        return Err(LowerError::Other(format!("{} inputs", name(e))));
    }
    let a8 = u8_of(cx, &o, a, &d)?;
    let b8 = u8_of(cx, &o, b, &d)?;
    match op {
        Logic::Xor => {
            let eq = cx.tmp_e("equal", &o, &[a8, b8], vec![], &d, elem::BOOL)?;
            not(cx, &o, eq, &d, true)?;
        }
        Logic::And | Logic::Or => {
            let t = if op == Logic::And { "mul" } else { "maximum" };
            let r = cx.tmp_e(t, &o, &[a8, b8], vec![], &d, elem::UINT8)?;
            cast_to(cx, &o, r, elem::BOOL, &d, true)?;
        }
    }
    Ok(())
}

/// `Where` → `where` (booleans selected as uint8 0/1, then cast back).
pub(crate) fn where_(cx: &mut Tx, node: &Node) -> Lowered {
    let (c, ec) = cx.tin(node, 0)?;
    if ec != elem::BOOL {
        return Err(LowerError::Other(format!("a {} condition", name(ec))));
    }
    let (mut x, ex) = cx.tin(node, 1)?;
    let (mut y, ey) = cx.tin(node, 2)?;
    if ex != ey {
        return Err(LowerError::Other(format!(
            "operands of types {} and {}",
            name(ex),
            name(ey)
        )));
    }
    let (dc, dx, dy) = (
        cx.in_shape(node, 0)?,
        cx.in_shape(node, 1)?,
        cx.in_shape(node, 2)?,
    );
    let d = broadcast(&broadcast(&dc, &dx)?, &dy)?;
    let o = out(node)?.to_string();
    let c = to_rank(cx, &o, c, &dc, d.len())?;
    x = to_rank(cx, &o, x, &dx, d.len())?;
    y = to_rank(cx, &o, y, &dy, d.len())?;
    if ex == elem::BOOL {
        x = u8_of(cx, &o, x, &dx)?;
        y = u8_of(cx, &o, y, &dy)?;
        let r = cx.tmp_e("where", &o, &[c, x, y], vec![], &d, elem::UINT8)?;
        cast_to(cx, &o, r, elem::BOOL, &d, true)?;
    } else {
        cx.emit_e("where", &o, &[c, x, y], vec![], &d, ex)?;
    }
    Ok(())
}

/// `Neg` (x · −1 of x's type) and, for f64, `Reciprocal` (1 / x) on
/// integers and f64 (integer `Reciprocal` refused).
pub(crate) fn typed_neg_recip(cx: &mut Tx, node: &Node, e: i32, neg: bool) -> Lowered {
    let (x, _) = cx.tin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    if neg {
        if matches!(e, 2 | 4 | 12 | 13) {
            return Err(LowerError::Other(format!("a {} input (unsigned)", name(e))));
        }
        let m = cx.const_e(&o, e, &[], &[-1.0])?;
        cx.emit_e("mul", &o, &[x, m], vec![], &d, e)?;
    } else if e == elem::DOUBLE {
        let one = cx.const_e(&o, e, &[], &[1.0])?;
        cx.emit_e("div", &o, &[one, x], vec![], &d, e)?;
    } else {
        return Err(LowerError::DType { elem: e });
    }
    Ok(())
}

/// `Add`, `Sub`, `Mul`, `Max`, `Min`, `Sum` on integers (wrapping as
/// two's complement, as ONNX runtimes do) and f64: `add`, `sub`, `mul`,
/// `maximum`, `div` (integers truncated toward zero; a division by zero,
/// undefined in ONNX, gives the type's largest or lowest value in
/// TenniS); `Min(a, b)` as `where(equal(maximum(a, b), a), b, a)`.
/// `Mean` of integers is refused.
pub(crate) fn int_binary(cx: &mut Tx, node: &Node, e: i32, op: Option<&str>) -> Lowered {
    // (`div` on integers: C++ division, truncating toward zero as ONNX's)
    let Some(op) = op else {
        let o = &node.op;
        return Err(LowerError::Other(format!("{} inputs of {o}", name(e))));
    };
    let o = out(node)?.to_string();
    let n = node.inputs.iter().filter(|i| !i.is_empty()).count();
    let (mut acc, _) = cx.tin(node, 0)?;
    let mut d = cx.in_shape(node, 0)?;
    if n == 1 {
        cx.emit_e("_copy", &o, &[acc], vec![], &d, e)?;
        return Ok(());
    }
    for i in 1..n {
        let (y, ey) = cx.tin(node, i)?;
        if ey != e {
            return Err(LowerError::Other(format!(
                "operands of types {} and {}",
                name(e),
                name(ey)
            )));
        }
        let dy = cx.in_shape(node, i)?;
        let nd = broadcast(&d, &dy)?;
        acc = to_rank(cx, &o, acc, &d, nd.len())?;
        let y = to_rank(cx, &o, y, &dy, nd.len())?;
        d = nd;
        let last = i + 1 == n;
        let hint = o.clone();
        let r = if op == "min" {
            let m = cx.tmp_e("maximum", &hint, &[acc, y], vec![], &d, e)?;
            let ge = cx.tmp_e("equal", &hint, &[m, acc], vec![], &d, elem::BOOL)?;
            if last {
                cx.emit_e("where", &o, &[ge, y, acc], vec![], &d, e)?
            } else {
                cx.tmp_e("where", &hint, &[ge, y, acc], vec![], &d, e)?
            }
        } else if last {
            cx.emit_e(op, &o, &[acc, y], vec![], &d, e)?
        } else {
            cx.tmp_e(op, &hint, &[acc, y], vec![], &d, e)?
        };
        acc = r;
    }
    Ok(())
}

/// `a > b` as a `BOOLEAN`: `not (maximum(a, b) == b)`.
fn greater_bool(
    cx: &mut Tx,
    hint: &str,
    a: NodeId,
    b: NodeId,
    e: i32,
    d: &[i64],
) -> Result<NodeId, LowerError> {
    let m = cx.tmp_e("maximum", hint, &[a, b], vec![], d, e)?;
    let le = cx.tmp_e("equal", hint, &[m, b], vec![], d, elem::BOOL)?;
    not(cx, hint, le, d, false)
}

/// A `BOOLEAN` as 0/1 of type `e`.
fn as_num(cx: &mut Tx, hint: &str, b: NodeId, e: i32, d: &[i64]) -> Result<NodeId, LowerError> {
    cast_to(cx, hint, b, e, d, false)
}

/// `Sign` → `(x > 0) − (x < 0)` (comparisons as in [`compare`]; the
/// sign of NaN is not matched).
pub(crate) fn sign(cx: &mut Tx, node: &Node) -> Lowered {
    let (x, e) = cx.tin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    if !(e == elem::FLOAT || e == elem::DOUBLE || is_int(e)) {
        return Err(LowerError::DType { elem: e });
    }
    let z = cx.const_e(&o, e, &[], &[0.0])?;
    let pos = greater_bool(cx, &o, x, z, e, &d)?;
    let neg = greater_bool(cx, &o, z, x, e, &d)?;
    let (p, n) = (as_num(cx, &o, pos, e, &d)?, as_num(cx, &o, neg, e, &d)?);
    cx.emit_e("sub", &o, &[p, n], vec![], &d, e)?;
    Ok(())
}

/// `Round` (half to even) → `f + (r > ½) + (r == ½)·(f odd)` with `f =
/// floor(x)`, `r = x − f` (exact in floats: `r` is exact, and |x| ≥ 2^23
/// has `r` 0), odd as `f − 2·floor(f / 2)`.
pub(crate) fn round(cx: &mut Tx, node: &Node) -> Lowered {
    let (x, e) = cx.tin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    if e != elem::FLOAT && e != elem::DOUBLE {
        return Err(LowerError::DType { elem: e });
    }
    let f = cx.tmp_e("floor", &o, &[x], vec![], &d, e)?;
    let r = cx.tmp_e("sub", &o, &[x, f], vec![], &d, e)?;
    let half = cx.const_e(&o, e, &[], &[0.5])?;
    let gt = greater_bool(cx, &o, r, half, e, &d)?;
    let gt = as_num(cx, &o, gt, e, &d)?;
    let eq = cx.tmp_e("equal", &o, &[r, half], vec![], &d, elem::BOOL)?;
    let eq = as_num(cx, &o, eq, e, &d)?;
    let fh = cx.tmp_e("mul", &o, &[f, half], vec![], &d, e)?;
    let fh = cx.tmp_e("floor", &o, &[fh], vec![], &d, e)?;
    let two = cx.const_e(&o, e, &[], &[2.0])?;
    let f2 = cx.tmp_e("mul", &o, &[fh, two], vec![], &d, e)?;
    let odd = cx.tmp_e("sub", &o, &[f, f2], vec![], &d, e)?;
    let up = cx.tmp_e("mul", &o, &[eq, odd], vec![], &d, e)?;
    let s = cx.tmp_e("add", &o, &[f, gt], vec![], &d, e)?;
    cx.emit_e("add", &o, &[s, up], vec![], &d, e)?;
    Ok(())
}

/// `Mod` of integers → `mod` (C++ `%`: the remainder takes the dividend's
/// sign, ONNX's `fmod` 1); `fmod` 0 (the divisor's sign) adds the divisor
/// to a non-zero remainder whose sign differs from it:
/// `where(r ≠ 0 and (r < 0) ≠ (b < 0), r + b, r)`. Float `Mod` is refused
/// (TenniS's `mod` takes integers only).
pub(crate) fn modulo(cx: &mut Tx, node: &Node) -> Lowered {
    let (a, b, e, d) = two(cx, node)?;
    if !is_int(e) {
        return Err(LowerError::ElemType {
            elem: e,
            what: "inputs",
            why: "TenniS's mod takes integers",
        });
    }
    let o = out(node)?.to_string();
    let unsigned = matches!(e, 2 | 4 | 12 | 13);
    if node.int("fmod", 0) != 0 || unsigned {
        cx.emit_e("mod", &o, &[a, b], vec![], &d, e)?;
        return Ok(());
    }
    let r = cx.tmp_e("mod", &o, &[a, b], vec![], &d, e)?;
    let z = cx.const_e(&o, e, &vec![1; d.len()], &[0.0])?;
    // r < 0 and b < 0 as booleans (r < 0 ⇔ not (max(r, 0) == r))
    let neg = |cx: &mut Tx, v: NodeId| -> Result<NodeId, LowerError> {
        let m = cx.tmp_e("maximum", &o, &[v, z], vec![], &d, e)?;
        let nn = cx.tmp_e("equal", &o, &[m, v], vec![], &d, elem::BOOL)?;
        u8_of(cx, &o, nn, &d)
    };
    let rn = neg(cx, r)?;
    let bn = neg(cx, b)?;
    // signs differ: the uint8 flags differ
    let same = cx.tmp_e("equal", &o, &[rn, bn], vec![], &d, elem::BOOL)?;
    let same8 = u8_of(cx, &o, same, &d)?;
    let rz = cx.tmp_e("equal", &o, &[r, z], vec![], &d, elem::BOOL)?;
    let rz8 = u8_of(cx, &o, rz, &d)?;
    // adjust = not same and not zero = (same8 + rz8) == 0
    let any = cx.tmp_e("add", &o, &[same8, rz8], vec![], &d, elem::UINT8)?;
    let adj = is_zero(cx, &o, any, elem::UINT8, &d, false)?;
    let rb = cx.tmp_e("add", &o, &[r, b], vec![], &d, e)?;
    cx.emit_e("where", &o, &[adj, rb, r], vec![], &d, e)?;
    Ok(())
}

/// `Trilu` → `where(mask, x, 0)` (exact for every value, inf and NaN
/// included): the mask keeps `j − i ≥ k` (upper) or `j − i ≤ k` (lower)
/// of the last two axes, a uint8 constant for a constant `k`, else
/// `equal(maximum(D, k), ·)` of the constant `D = j − i` and `k`.
pub(crate) fn trilu(cx: &mut Tx, node: &Node) -> Lowered {
    let (x, e) = cx.tin(node, 0)?;
    if e == elem::BOOL {
        return Err("a BOOL input".into());
    }
    let d = cx.in_shape(node, 0)?;
    let r = d.len();
    if r < 2 || d[r - 2] < 1 || d[r - 1] < 1 {
        return Err("an input of rank below 2, or empty or symbolic last axes".into());
    }
    let (n, m) = (d[r - 2], d[r - 1]);
    if n.checked_mul(m).is_none_or(|v| v > 1 << 24) {
        return Err(LowerError::Other(format!(
            "a {n}×{m} matrix (the mask is a constant; at most 2^24)"
        )));
    }
    let upper = node.int("upper", 1) != 0;
    let o = out(node)?.to_string();
    let mut dd = vec![1i64; r];
    dd[r - 2] = n;
    dd[r - 1] = m;
    let ud: Vec<usize> = dd.iter().map(|&v| v as usize).collect();
    let diff: Vec<i64> = (0..n).flat_map(|i| (0..m).map(move |j| j - i)).collect();
    let mask = match (node.input(1), cx.const_ints(node, 1)) {
        (None, _) | (Some(_), Some(_)) => {
            let k = match cx.const_ints(node, 1).as_deref() {
                None => 0,
                Some([k]) => *k,
                Some(v) => return Err(LowerError::value("k", format!("{v:?}"))),
            };
            let keep: Vec<f64> = diff
                .iter()
                .map(|&t| f64::from(u8::from(if upper { t >= k } else { t <= k })))
                .collect();
            cx.const_e(&o, elem::UINT8, &ud, &keep)?
        }
        (Some(_), None) => {
            let (k, ek) = cx.tin(node, 1)?;
            if ek != elem::INT64 {
                return Err(LowerError::Other(format!("a {} k", name(ek))));
            }
            let dv: Vec<f64> = diff.iter().map(|&t| t as f64).collect();
            let dc = cx.const_e(&o, elem::INT64, &ud, &dv)?;
            let h = cx.fresh(&o);
            let k = cx.reshape(&h, k, &vec![1; r])?;
            let mx = cx.tmp_e("maximum", &o, &[dc, k], vec![], &dd, elem::INT64)?;
            let side = if upper { dc } else { k };
            cx.tmp_e("equal", &o, &[mx, side], vec![], &dd, elem::BOOL)?
        }
    };
    let z = cx.const_e(&o, e, &vec![1; r], &[0.0])?;
    cx.emit_e("where", &o, &[mask, x, z], vec![], &d, e)?;
    Ok(())
}
