//! Constant folding: the shape arithmetic exporters such as PyTorch emit
//! (`Shape → Gather → Concat → Reshape`, `Unsqueeze`, `ConstantOfShape`,
//! `Range`, casts and integer arithmetic on shapes) evaluated at import
//! time, so the targets see constants.
//!
//! Folding is exact: integer arithmetic in `i64`-exact `f64`, and the float
//! operations folded (`+ - * /`, `sqrt`) are correctly rounded in `f64`
//! and then in `f32`, the same result as `f32` arithmetic.

use super::onnx_graph::{Const, Node, constant_node, elem};

/// The ops [`fold`] can evaluate (when their inputs are constants, or for
/// `Shape`/`Size`, when the input's shape is static).
pub const FOLDABLE: &[&str] = &[
    "Constant",
    "Identity",
    "Shape",
    "Size",
    "Gather",
    "Concat",
    "Unsqueeze",
    "Squeeze",
    "Reshape",
    "Flatten",
    "Cast",
    "CastLike",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Neg",
    "ConstantOfShape",
    "Range",
    "Slice",
    "Equal",
    "Less",
    "Greater",
    "Not",
    "Where",
    "ReduceProd",
    "Expand",
    "Transpose",
    "Sqrt",
    "Floor",
    "Ceil",
    "Min",
    "Max",
    "Abs",
    "Mod",
    "And",
    "Or",
    "Xor",
];

/// The largest `ConstantOfShape` folded into a constant (elements).
pub const FOLD_MAX: i64 = 1 << 16;

/// The outputs of `node` as constants, when it can be evaluated now:
/// `konst` gives a constant input, `shape` the static shape of any value
/// (for `Shape`/`Size`). `None` when the node is not foldable here;
/// `Some(Err)` when it is, but is malformed.
pub fn fold(
    node: &Node,
    opset: i64,
    konst: &dyn Fn(&str) -> Option<Const>,
    shape: &dyn Fn(&str) -> Option<Vec<i64>>,
) -> Option<Result<Vec<Const>, String>> {
    fold_with(node, opset, konst, shape, &[])
}

/// Operators [`fold_with`] can also fold when a caller asks for them
/// (the TenniS import; the NNabla import's records predate them).
pub const FOLDABLE_MORE: &[&str] = &["GreaterOrEqual", "LessOrEqual"];

/// [`fold`], folding also the operators of `extra` (from
/// [`FOLDABLE_MORE`]).
pub fn fold_with(
    node: &Node,
    opset: i64,
    konst: &dyn Fn(&str) -> Option<Const>,
    shape: &dyn Fn(&str) -> Option<Vec<i64>>,
    extra: &[&str],
) -> Option<Result<Vec<Const>, String>> {
    if !node.domain.is_empty() && node.domain != "ai.onnx" {
        return None;
    }
    let op = node.op.as_str();
    let more = extra.contains(&op) && FOLDABLE_MORE.contains(&op);
    if !(FOLDABLE.contains(&op) || more) {
        return None;
    }
    if node.op == "Constant" {
        return Some(constant_node(node).and_then(|c| {
            c.map(|c| vec![c])
                .ok_or_else(|| "Constant without a value".to_string())
        }));
    }
    if node.op == "Shape" || node.op == "Size" {
        let x = node.input(0)?;
        let dims = match konst(x) {
            Some(c) => c.dims_i64(),
            None => shape(x)?,
        };
        if dims.iter().any(|&d| d < 0) {
            return None;
        }
        let out = if node.op == "Size" {
            let n: i64 = dims.iter().product();
            Const::from_f64(elem::INT64, vec![], &[n as f64])
        } else {
            let r = dims.len() as i64;
            let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let s = clampi(node.int("start", 0));
            let e = node
                .attr("end")
                .and_then(|a| a.i)
                .map_or(r as usize, clampi);
            let v: Vec<f64> = dims[s..e.max(s)].iter().map(|&d| d as f64).collect();
            Const::from_f64(elem::INT64, vec![v.len()], &v)
        };
        return Some(out.map(|c| vec![c]).ok_or_else(|| "Shape".into()));
    }
    // Every other foldable op needs all its (present) inputs constant.
    let mut ins = Vec::new();
    for i in 0..node.inputs.len() {
        match node.input(i) {
            Some(n) => ins.push(Some(konst(n)?)),
            None => ins.push(None),
        }
    }
    if node.op == "Mod" && ins.iter().flatten().any(|c| !is_int(c.elem)) {
        // Only integer remainders are folded (exact in f64); a float `Mod`
        // stays a computation for the target.
        return None;
    }
    if node.op == "ConstantOfShape" {
        // Large filled tensors stay a computation for the target (NNabla's
        // `Constant`) instead of bloating the file.
        let n = ins
            .first()
            .and_then(Option::as_ref)?
            .ints()?
            .iter()
            .try_fold(1i64, |p, &d| p.checked_mul(d.max(0)))?;
        if n > FOLD_MAX {
            return None;
        }
    }
    Some(eval(node, opset, &ins))
}

fn bad(node: &Node, what: &str) -> String {
    format!("{} {}: {what}", node.op, node.name)
}

fn out(c: Option<Const>, node: &Node) -> Result<Vec<Const>, String> {
    c.map(|c| vec![c])
        .ok_or_else(|| bad(node, "cannot hold the result"))
}

fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// numpy broadcasting of two shapes.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut o = vec![0; r];
    for i in 0..r {
        let x = if i + a.len() >= r {
            a[i + a.len() - r]
        } else {
            1
        };
        let y = if i + b.len() >= r {
            b[i + b.len() - r]
        } else {
            1
        };
        o[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(o)
}

/// The values of `c` broadcast to `to`.
fn expand(c: &Const, to: &[usize]) -> Vec<f64> {
    let v = c.values();
    let d = c.dims();
    let off = to.len() - d.len();
    let st = strides(d);
    let n: usize = to.iter().product();
    let ost = strides(to);
    (0..n)
        .map(|i| {
            let mut src = 0;
            for (k, &s) in ost.iter().enumerate() {
                let idx = (i / s) % to[k].max(1);
                if k >= off && d[k - off] != 1 {
                    src += idx * st[k - off];
                }
            }
            v[src]
        })
        .collect()
}

fn is_int(e: i32) -> bool {
    matches!(e, 2..=7 | 12 | 13)
}

fn axis(a: i64, r: usize) -> Option<usize> {
    let a = if a < 0 { a + r as i64 } else { a };
    (0..r as i64).contains(&a).then_some(a as usize)
}

fn eval(node: &Node, opset: i64, ins: &[Option<Const>]) -> Result<Vec<Const>, String> {
    let x = |i: usize| -> Result<&Const, String> {
        ins.get(i)
            .and_then(Option::as_ref)
            .ok_or_else(|| bad(node, &format!("input {i} missing")))
    };
    let a = x(0)?;
    match node.op.as_str() {
        "Identity" => Ok(vec![a.clone()]),
        "Cast" | "CastLike" => {
            let to = if node.op == "CastLike" {
                x(1)?.elem
            } else {
                node.int("to", i64::from(elem::FLOAT)) as i32
            };
            let v = a.values();
            let v: Vec<f64> = if is_int(to) && !is_int(a.elem) {
                v.iter().map(|f| f.trunc()).collect()
            } else {
                v
            };
            out(Const::from_f64(to, a.dims().to_vec(), &v), node)
        }
        "Neg" | "Sqrt" | "Floor" | "Ceil" | "Abs" | "Not" => {
            let f = |v: f64| match node.op.as_str() {
                "Neg" => -v,
                "Sqrt" => v.sqrt(),
                "Floor" => v.floor(),
                "Ceil" => v.ceil(),
                "Abs" => v.abs(),
                _ => f64::from(v == 0.0),
            };
            let v: Vec<f64> = a.values().into_iter().map(f).collect();
            out(Const::from_f64(a.elem, a.dims().to_vec(), &v), node)
        }
        "Add" | "Sub" | "Mul" | "Div" | "Equal" | "Less" | "Greater" | "GreaterOrEqual"
        | "LessOrEqual" | "Min" | "Max" | "And" | "Or" | "Xor" => {
            if ins.len() != 2 {
                return Err(bad(node, "folds two inputs only"));
            }
            let b = x(1)?;
            let to = broadcast(a.dims(), b.dims()).ok_or_else(|| bad(node, "shapes"))?;
            let (va, vb) = (expand(a, &to), expand(b, &to));
            let int = is_int(a.elem);
            let v: Vec<f64> = va
                .iter()
                .zip(&vb)
                .map(|(&p, &q)| match node.op.as_str() {
                    "Add" => p + q,
                    "Sub" => p - q,
                    "Mul" => p * q,
                    "Div" if int => {
                        if q == 0.0 {
                            0.0
                        } else {
                            (p / q).trunc()
                        }
                    }
                    "Div" => p / q,
                    "Equal" => f64::from(p == q),
                    "Less" => f64::from(p < q),
                    "Greater" => f64::from(p > q),
                    "GreaterOrEqual" => f64::from(p >= q),
                    "LessOrEqual" => f64::from(p <= q),
                    "Min" => p.min(q),
                    "And" => f64::from(p != 0.0 && q != 0.0),
                    "Or" => f64::from(p != 0.0 || q != 0.0),
                    "Xor" => f64::from((p != 0.0) != (q != 0.0)),
                    _ => p.max(q),
                })
                .collect();
            let e = if matches!(
                node.op.as_str(),
                "Equal"
                    | "Less"
                    | "Greater"
                    | "GreaterOrEqual"
                    | "LessOrEqual"
                    | "And"
                    | "Or"
                    | "Xor"
            ) {
                elem::BOOL
            } else {
                a.elem
            };
            out(Const::from_f64(e, to, &v), node)
        }
        "Mod" => {
            let b = x(1)?;
            let to = broadcast(a.dims(), b.dims()).ok_or_else(|| bad(node, "shapes"))?;
            let (va, vb) = (expand(a, &to), expand(b, &to));
            let fmod = node.int("fmod", 0) != 0;
            let v = va
                .iter()
                .zip(&vb)
                .map(|(&p, &q)| {
                    if q == 0.0 {
                        return Err(bad(node, "remainder of a division by zero"));
                    }
                    let r = p % q;
                    // fmod=0: the remainder takes the divisor's sign (Python).
                    Ok(if !fmod && r != 0.0 && (r < 0.0) != (q < 0.0) {
                        r + q
                    } else {
                        r
                    })
                })
                .collect::<Result<Vec<f64>, String>>()?;
            out(Const::from_f64(a.elem, to, &v), node)
        }
        "Where" => {
            let (b, c) = (x(1)?, x(2)?);
            let to = broadcast(a.dims(), b.dims())
                .and_then(|t| broadcast(&t, c.dims()))
                .ok_or_else(|| bad(node, "shapes"))?;
            let (vc, vx, vy) = (expand(a, &to), expand(b, &to), expand(c, &to));
            let v: Vec<f64> = (0..vc.len())
                .map(|i| if vc[i] != 0.0 { vx[i] } else { vy[i] })
                .collect();
            out(Const::from_f64(b.elem, to, &v), node)
        }
        "ConstantOfShape" => {
            let dims: Vec<usize> = a
                .ints()
                .ok_or_else(|| bad(node, "shape"))?
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| bad(node, "negative dimension")))
                .collect::<Result<_, _>>()?;
            if dims
                .iter()
                .try_fold(1usize, |p, &d| p.checked_mul(d))
                .is_none_or(|n| n > 1 << 24)
            {
                return Err(bad(node, "too large to fold"));
            }
            let (e, val) = match node.attr("value").and_then(|t| t.t.as_ref()) {
                Some(t) => {
                    let c = onnx_format::tensor_from_proto(t, None, &Default::default())
                        .map_err(|e| bad(node, &e.to_string()))?;
                    (
                        t.data_type.unwrap_or(elem::FLOAT),
                        c.to_f64_vec()
                            .and_then(|v| v.first().copied())
                            .unwrap_or(0.0),
                    )
                }
                None => (elem::FLOAT, 0.0),
            };
            let n: usize = dims.iter().product();
            out(Const::from_f64(e, dims, &vec![val; n]), node)
        }
        "Range" => {
            let (s, l, d) = (a.values(), x(1)?.values(), x(2)?.values());
            let (s, l, d) = (
                s[0],
                l.first().copied().unwrap_or(0.0),
                d.first().copied().unwrap_or(1.0),
            );
            if d == 0.0 {
                return Err(bad(node, "delta 0"));
            }
            let n = ((l - s) / d).ceil().max(0.0);
            if n > (1 << 24) as f64 {
                return Err(bad(node, "too large to fold"));
            }
            let v: Vec<f64> = (0..n as usize).map(|i| s + i as f64 * d).collect();
            out(Const::from_f64(a.elem, vec![v.len()], &v), node)
        }
        "Unsqueeze" | "Squeeze" | "Reshape" | "Flatten" => {
            let dims = a.dims();
            let r = dims.len();
            let new: Vec<usize> = match node.op.as_str() {
                "Reshape" => {
                    let s = x(1)?.ints().ok_or_else(|| bad(node, "shape"))?;
                    reshape_dims(dims, &s, node.int("allowzero", 0) != 0)
                        .ok_or_else(|| bad(node, "shape does not fit"))?
                }
                "Flatten" => {
                    let ax = node.int("axis", 1);
                    let ax = if ax < 0 { ax + r as i64 } else { ax } as usize;
                    let ax = ax.min(r);
                    vec![dims[..ax].iter().product(), dims[ax..].iter().product()]
                }
                op => {
                    let axes = if opset >= 13 {
                        match ins.get(1).and_then(Option::as_ref) {
                            Some(c) => c.ints().ok_or_else(|| bad(node, "axes"))?,
                            None => vec![],
                        }
                    } else {
                        node.ints("axes").unwrap_or_default()
                    };
                    if op == "Unsqueeze" {
                        let nr = r + axes.len();
                        let mut ax: Vec<usize> = axes
                            .iter()
                            .map(|&v| axis(v, nr).ok_or_else(|| bad(node, "axes")))
                            .collect::<Result<_, _>>()?;
                        ax.sort_unstable();
                        let mut it = dims.iter();
                        (0..nr)
                            .map(|i| {
                                if ax.contains(&i) {
                                    1
                                } else {
                                    *it.next().unwrap_or(&1)
                                }
                            })
                            .collect()
                    } else {
                        let ax: Vec<usize> = if axes.is_empty() {
                            (0..r).filter(|&i| dims[i] == 1).collect()
                        } else {
                            axes.iter()
                                .map(|&v| axis(v, r).ok_or_else(|| bad(node, "axes")))
                                .collect::<Result<_, _>>()?
                        };
                        (0..r)
                            .filter(|i| !ax.contains(i))
                            .map(|i| dims[i])
                            .collect()
                    }
                }
            };
            out(Const::from_f64(a.elem, new, &a.values()), node)
        }
        "Expand" => {
            let s: Vec<usize> = x(1)?
                .ints()
                .ok_or_else(|| bad(node, "shape"))?
                .iter()
                .map(|&d| d.max(0) as usize)
                .collect();
            let to = broadcast(a.dims(), &s).ok_or_else(|| bad(node, "shapes"))?;
            if to.iter().product::<usize>() > 1 << 24 {
                return Err(bad(node, "too large to fold"));
            }
            out(Const::from_f64(a.elem, to.clone(), &expand(a, &to)), node)
        }
        "Concat" => {
            let r = a.dims().len();
            let ax = axis(node.int("axis", 0), r).ok_or_else(|| bad(node, "axis"))?;
            let parts: Vec<&Const> = ins.iter().flatten().collect();
            let outer: usize = a.dims()[..ax].iter().product();
            let mut dims = a.dims().to_vec();
            dims[ax] = parts
                .iter()
                .map(|c| c.dims().get(ax).copied().unwrap_or(0))
                .sum();
            let vals: Vec<Vec<f64>> = parts.iter().map(|c| c.values()).collect();
            let mut v = Vec::new();
            for o in 0..outer {
                for (c, pv) in parts.iter().zip(&vals) {
                    if c.dims().len() != r {
                        return Err(bad(node, "ranks differ"));
                    }
                    let inner: usize = c.dims()[ax..].iter().product();
                    v.extend_from_slice(&pv[o * inner..(o + 1) * inner]);
                }
            }
            out(Const::from_f64(a.elem, dims, &v), node)
        }
        "Gather" => {
            let idx = x(1)?.ints().ok_or_else(|| bad(node, "indices"))?;
            let r = a.dims().len();
            let ax = axis(node.int("axis", 0), r).ok_or_else(|| bad(node, "axis"))?;
            let d = a.dims()[ax] as i64;
            let outer: usize = a.dims()[..ax].iter().product();
            let inner: usize = a.dims()[ax + 1..].iter().product();
            let av = a.values();
            let mut v = Vec::new();
            for o in 0..outer {
                for &i in &idx {
                    let i = if i < 0 { i + d } else { i };
                    if !(0..d).contains(&i) {
                        return Err(bad(node, "index out of range"));
                    }
                    let base = (o * d as usize + i as usize) * inner;
                    v.extend_from_slice(&av[base..base + inner]);
                }
            }
            let mut dims = a.dims()[..ax].to_vec();
            dims.extend_from_slice(x(1)?.dims());
            dims.extend_from_slice(&a.dims()[ax + 1..]);
            out(Const::from_f64(a.elem, dims, &v), node)
        }
        "Slice" => {
            let dims = a.dims().to_vec();
            let r = dims.len();
            let (starts, ends, axes, steps) = if opset < 10 {
                (
                    node.ints("starts").unwrap_or_default(),
                    node.ints("ends").unwrap_or_default(),
                    node.ints("axes"),
                    None,
                )
            } else {
                let g = |i: usize| ins.get(i).and_then(Option::as_ref).and_then(Const::ints);
                (
                    g(1).unwrap_or_default(),
                    g(2).unwrap_or_default(),
                    g(3),
                    g(4),
                )
            };
            let spec = slice_spec(
                &dims.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                &starts,
                &ends,
                axes.as_deref(),
                steps.as_deref(),
            )
            .ok_or_else(|| bad(node, "slice parameters"))?;
            let av = a.values();
            let st = strides(&dims);
            let odims: Vec<usize> = spec.iter().map(|s| s.2 as usize).collect();
            let n: usize = odims.iter().product();
            let ost = strides(&odims);
            let v: Vec<f64> = (0..n)
                .map(|i| {
                    let mut src = 0i64;
                    for k in 0..r {
                        let j = ((i / ost[k]) % odims[k].max(1)) as i64;
                        src += (spec[k].0 + j * spec[k].1) * st[k] as i64;
                    }
                    av[src as usize]
                })
                .collect();
            out(Const::from_f64(a.elem, odims, &v), node)
        }
        "Transpose" => {
            let dims = a.dims().to_vec();
            let r = dims.len();
            let perm: Vec<usize> = node
                .ints("perm")
                .map(|p| p.iter().map(|&v| v as usize).collect())
                .unwrap_or_else(|| (0..r).rev().collect());
            if perm.len() != r || perm.iter().any(|&p| p >= r) {
                return Err(bad(node, "perm"));
            }
            let odims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
            let st = strides(&dims);
            let ost = strides(&odims);
            let av = a.values();
            let v: Vec<f64> = (0..av.len())
                .map(|i| {
                    (0..r)
                        .map(|k| ((i / ost[k]) % odims[k].max(1)) * st[perm[k]])
                        .sum::<usize>()
                })
                .map(|s| av[s])
                .collect();
            out(Const::from_f64(a.elem, odims, &v), node)
        }
        "ReduceProd" => {
            let dims = a.dims().to_vec();
            let r = dims.len();
            let axes = match ins.get(1).and_then(Option::as_ref) {
                Some(c) => c.ints().ok_or_else(|| bad(node, "axes"))?,
                None => node.ints("axes").unwrap_or_default(),
            };
            let mut red = vec![false; r];
            if axes.is_empty() {
                // No axes: every axis, unless noop_with_empty_axes (opset 18).
                if node.int("noop_with_empty_axes", 0) != 0 {
                    return Ok(vec![a.clone()]);
                }
                red.iter_mut().for_each(|b| *b = true);
            }
            for &ax in &axes {
                red[axis(ax, r).ok_or_else(|| bad(node, "axes"))?] = true;
            }
            let rdims: Vec<usize> = (0..r).map(|k| if red[k] { 1 } else { dims[k] }).collect();
            let rst = strides(&rdims);
            let st = strides(&dims);
            let mut v = vec![1.0f64; rdims.iter().product()];
            for (i, x) in a.values().into_iter().enumerate() {
                let o: usize = (0..r)
                    .filter(|&k| !red[k])
                    .map(|k| ((i / st[k]) % dims[k].max(1)) * rst[k])
                    .sum();
                v[o] *= x;
            }
            let odims = if node.int("keepdims", 1) != 0 {
                rdims
            } else {
                (0..r).filter(|&k| !red[k]).map(|k| dims[k]).collect()
            };
            out(Const::from_f64(a.elem, odims, &v), node)
        }
        _ => Err(bad(node, "not foldable")),
    }
}

/// ONNX `Reshape` target dimensions: `0` copies the input's dimension
/// (unless `allowzero`), one `-1` is inferred.
pub fn reshape_dims(dims: &[usize], shape: &[i64], allowzero: bool) -> Option<Vec<usize>> {
    let total: usize = dims.iter().product();
    let mut out = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &s) in shape.iter().enumerate() {
        match s {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            0 if !allowzero => out.push(*dims.get(i)?),
            s if s >= 0 => out.push(s as usize),
            _ => return None,
        }
    }
    let known: usize = out.iter().product();
    if let Some(i) = infer {
        if known == 0 || !total.is_multiple_of(known) {
            return None;
        }
        out[i] = total / known;
    } else if known != total {
        return None;
    }
    Some(out)
}

/// Resolves ONNX `Slice` parameters on static `dims` to `(start, step,
/// count)` per axis (every axis, unsliced ones `(0, 1, d)`), with ONNX's
/// clamping rules. `None` when malformed.
pub fn slice_spec(
    dims: &[i64],
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
) -> Option<Vec<(i64, i64, i64)>> {
    let r = dims.len();
    let mut spec: Vec<(i64, i64, i64)> = dims.iter().map(|&d| (0, 1, d)).collect();
    if starts.len() != ends.len() {
        return None;
    }
    for k in 0..starts.len() {
        let ax = match axes {
            Some(a) => axis(*a.get(k)?, r)?,
            None => k,
        };
        let d = *dims.get(ax)?;
        if d < 0 {
            return None;
        }
        let step = steps.map_or(Some(1), |s| s.get(k).copied())?;
        if step == 0 {
            return None;
        }
        let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
        let (s, e) = (norm(starts[k]), norm(ends[k]));
        let (s, e) = if step > 0 {
            (s.clamp(0, d), e.clamp(0, d))
        } else {
            (s.clamp(-1, d - 1), e.clamp(-1, d - 1))
        };
        let n = if step > 0 {
            ((e - s).max(0) + step - 1) / step
        } else {
            ((s - e).max(0) + (-step) - 1) / (-step)
        };
        spec[ax] = (s, step, n);
    }
    Some(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str, fmod: Option<i64>) -> Node {
        let attrs = fmod
            .map(|v| onnx_format::proto::AttributeProto {
                name: Some("fmod".into()),
                i: Some(v),
                ..Default::default()
            })
            .into_iter()
            .collect();
        Node {
            op: op.into(),
            domain: String::new(),
            name: op.into(),
            inputs: vec!["a".into(), "b".into()],
            outputs: vec!["y".into()],
            attrs,
        }
    }

    fn run(n: &Node, a: (i32, &[f64]), b: (i32, &[f64])) -> Option<Result<Vec<f64>, String>> {
        let ca = Const::from_f64(a.0, vec![a.1.len()], a.1).unwrap();
        let cb = Const::from_f64(b.0, vec![b.1.len()], b.1).unwrap();
        let k = move |s: &str| Some(if s == "a" { ca.clone() } else { cb.clone() });
        fold(n, 18, &k, &|_| None).map(|r| r.map(|v| v[0].values()))
    }

    #[test]
    fn integer_mod_folds_with_the_divisor_sign_or_the_dividend_sign() {
        let a = [7.0, -7.0, 7.0, -7.0, 6.0];
        let b = [3.0, 3.0, -3.0, -3.0, 3.0];
        let py = run(&node("Mod", None), (elem::INT64, &a), (elem::INT64, &b));
        assert_eq!(py.unwrap().unwrap(), vec![1.0, 2.0, -2.0, -1.0, 0.0]);
        let c = run(&node("Mod", Some(1)), (elem::INT64, &a), (elem::INT64, &b));
        assert_eq!(c.unwrap().unwrap(), vec![1.0, -1.0, 1.0, -1.0, 0.0]);
        // A zero divisor is refused, float remainders stay a computation.
        let z = run(
            &node("Mod", None),
            (elem::INT64, &[1.0]),
            (elem::INT64, &[0.0]),
        );
        assert!(z.unwrap().is_err());
        let f = run(
            &node("Mod", Some(1)),
            (elem::FLOAT, &[1.5]),
            (elem::FLOAT, &[1.0]),
        );
        assert!(f.is_none());
    }

    #[test]
    fn logical_ops_fold_to_booleans() {
        let (a, b) = ([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]);
        for (op, want) in [
            ("And", [1.0, 0.0, 0.0, 0.0]),
            ("Or", [1.0, 1.0, 1.0, 0.0]),
            ("Xor", [0.0, 1.0, 1.0, 0.0]),
        ] {
            let got = run(&node(op, None), (elem::BOOL, &a), (elem::BOOL, &b));
            assert_eq!(got.unwrap().unwrap(), want.to_vec(), "{op}");
        }
    }
}
