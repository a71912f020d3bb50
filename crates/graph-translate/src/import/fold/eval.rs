//! The evaluation of the foldable operators on constant inputs (what
//! [`super::fold_with`] runs once every input is known): one function per
//! operator family.

use super::super::LowerError;
use super::super::onnx_graph::{Const, Node, elem};
use super::{MAX_FOLD_ELEMENTS, Rule, broadcast, reshape_dims, slice_spec};

/// A fold's result: its outputs, or why the node is refused.
type Folded = Result<Vec<Const>, LowerError>;

/// The node being folded, its opset and its constant inputs (`None`: an
/// optional input left out).
struct Args<'a> {
    node: &'a Node,
    opset: i64,
    ins: &'a [Option<Const>],
}

impl<'a> Args<'a> {
    /// Input `i`, refused when missing.
    fn x(&self, i: usize) -> Result<&'a Const, LowerError> {
        self.ins
            .get(i)
            .and_then(Option::as_ref)
            .ok_or_else(|| bad(self.node, &format!("input {i} missing")))
    }

    /// The element count of a result of `dims`, refused when it overflows
    /// or exceeds the larger of [`MAX_FOLD_ELEMENTS`] and the inputs'
    /// counts together: a fold may produce what its inputs already hold (a
    /// `Concat` of two large weights), but grows (broadcasting, `Expand`,
    /// `Gather`) only up to the bound.
    fn bounded(&self, dims: &[usize]) -> Result<usize, LowerError> {
        let held = self
            .ins
            .iter()
            .flatten()
            .filter_map(|c| numel(c.dims()))
            .fold(0usize, usize::saturating_add);
        numel(dims)
            .filter(|&n| n <= MAX_FOLD_ELEMENTS.max(held))
            .ok_or_else(|| too_large(self.node))
    }
}

/// Evaluates a foldable `node` of `opset` by its `rule` on its constant
/// inputs `ins`. Every input's values must match its dimensions (a
/// constant whose element type has no numeric values, such as an 8-bit
/// float, is refused), and results are bounded ([`Args::bounded`]).
pub(super) fn eval(node: &Node, opset: i64, ins: &[Option<Const>], rule: Rule) -> Folded {
    let f = Args { node, opset, ins };
    let a = f.x(0)?;
    if rule == Rule::Identity {
        return Ok(vec![a.clone()]);
    }
    for c in ins.iter().flatten() {
        if numel(c.dims()) != Some(c.values().len()) {
            return Err(bad(
                node,
                "a constant whose values do not match its dimensions",
            ));
        }
    }
    match rule {
        // (returned above, before the values are checked)
        Rule::Identity => Ok(vec![a.clone()]),
        Rule::Cast { like } => cast(&f, a, like),
        Rule::Unary(op) => unary(&f, a, op),
        Rule::Binary(op) => binary(&f, a, op),
        Rule::Mod => modulo(&f, a),
        Rule::Where => select(&f, a),
        Rule::ConstantOfShape => constant_of_shape(&f, a),
        Rule::Range => range(&f, a),
        Rule::Reshape(how) => reshape(&f, a, how),
        Rule::Expand => expand_to(&f, a),
        Rule::Concat => concat(&f, a),
        Rule::Gather => gather(&f, a),
        Rule::Slice => slice(&f, a),
        Rule::Transpose => transpose(&f, a),
        Rule::ReduceProd => reduce_prod(&f, a),
        Rule::Quant { quantize } => quant::qdq(&f, a, quantize),
        // (folded by `fold_with` before it evaluates)
        Rule::Constant | Rule::Shape { .. } => Err(bad(node, "not foldable")),
    }
}

/// The element-wise operators of one input folding evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unary {
    Neg,
    Sqrt,
    Floor,
    Ceil,
    Abs,
    Relu,
    Not,
}

impl Unary {
    /// The result on `v` (`Relu` keeps NaN, `Not` of a boolean's 0/1).
    fn apply(self, v: f64) -> f64 {
        match self {
            Unary::Neg => -v,
            Unary::Sqrt => v.sqrt(),
            Unary::Floor => v.floor(),
            Unary::Ceil => v.ceil(),
            Unary::Abs => v.abs(),
            Unary::Relu if v < 0.0 => 0.0,
            Unary::Relu => v,
            Unary::Not => f64::from(v == 0.0),
        }
    }
}

/// The broadcasting operators of two inputs folding evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Equal,
    Less,
    Greater,
    GreaterOrEqual,
    LessOrEqual,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl Binary {
    /// The result on `p` and `q` (`int`: integers, whose `Div` truncates
    /// and gives 0 for a division by zero).
    fn apply(self, p: f64, q: f64, int: bool) -> f64 {
        match self {
            Binary::Add => p + q,
            Binary::Sub => p - q,
            Binary::Mul => p * q,
            Binary::Div if int => {
                if q == 0.0 {
                    0.0
                } else {
                    (p / q).trunc()
                }
            }
            Binary::Div => p / q,
            Binary::Equal => f64::from(p == q),
            Binary::Less => f64::from(p < q),
            Binary::Greater => f64::from(p > q),
            Binary::GreaterOrEqual => f64::from(p >= q),
            Binary::LessOrEqual => f64::from(p <= q),
            Binary::Min => p.min(q),
            Binary::Max => p.max(q),
            Binary::And => f64::from(p != 0.0 && q != 0.0),
            Binary::Or => f64::from(p != 0.0 || q != 0.0),
            Binary::Xor => f64::from((p != 0.0) != (q != 0.0)),
        }
    }

    /// Whether the result is a boolean (comparisons and logic), else of
    /// the first input's type.
    fn boolean(self) -> bool {
        match self {
            Binary::Equal
            | Binary::Less
            | Binary::Greater
            | Binary::GreaterOrEqual
            | Binary::LessOrEqual
            | Binary::And
            | Binary::Or
            | Binary::Xor => true,
            Binary::Add | Binary::Sub | Binary::Mul | Binary::Div | Binary::Min | Binary::Max => {
                false
            }
        }
    }
}

/// The operators that only change dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shaping {
    Reshape,
    Flatten,
    Squeeze,
    Unsqueeze,
}

/// `Cast`, `CastLike` (`like`): integer targets truncate floats.
fn cast(f: &Args<'_>, a: &Const, like: bool) -> Folded {
    let node = f.node;
    let to = if like {
        f.x(1)?.elem
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

/// The elementwise unary ops (`Neg`, `Sqrt`, `Floor`, `Ceil`, `Abs`,
/// `Relu`, `Not`). `Relu` keeps NaN (as `max(x, 0)` does in onnxruntime
/// and numpy) and maps negative values to 0.
fn unary(f: &Args<'_>, a: &Const, op: Unary) -> Folded {
    let node = f.node;
    let v: Vec<f64> = a.values().into_iter().map(|v| op.apply(v)).collect();
    out(Const::from_f64(a.elem, a.dims().to_vec(), &v), node)
}

/// The broadcasting binary ops: arithmetic (integer `Div` truncates, by zero gives 0), comparisons and logic (booleans).
fn binary(f: &Args<'_>, a: &Const, op: Binary) -> Folded {
    let node = f.node;
    if f.ins.len() != 2 {
        return Err(bad(node, "folds two inputs only"));
    }
    let b = f.x(1)?;
    let to = broadcast(a.dims(), b.dims()).ok_or_else(|| bad(node, "shapes"))?;
    f.bounded(&to)?;
    let (va, vb) = (expand(node, a, &to)?, expand(node, b, &to)?);
    let int = is_int(a.elem);
    let v: Vec<f64> = va
        .iter()
        .zip(&vb)
        .map(|(&p, &q)| op.apply(p, q, int))
        .collect();
    let e = if op.boolean() { elem::BOOL } else { a.elem };
    out(Const::from_f64(e, to, &v), node)
}

/// Integer `Mod` (`fmod` 0: the remainder takes the divisor's sign).
fn modulo(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let b = f.x(1)?;
    let to = broadcast(a.dims(), b.dims()).ok_or_else(|| bad(node, "shapes"))?;
    f.bounded(&to)?;
    let (va, vb) = (expand(node, a, &to)?, expand(node, b, &to)?);
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
        .collect::<Result<Vec<f64>, LowerError>>()?;
    out(Const::from_f64(a.elem, to, &v), node)
}

/// `Where`.
fn select(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let (b, c) = (f.x(1)?, f.x(2)?);
    let to = broadcast(a.dims(), b.dims())
        .and_then(|t| broadcast(&t, c.dims()))
        .ok_or_else(|| bad(node, "shapes"))?;
    f.bounded(&to)?;
    let (vc, vx, vy) = (
        expand(node, a, &to)?,
        expand(node, b, &to)?,
        expand(node, c, &to)?,
    );
    let v: Vec<f64> = (0..vc.len())
        .map(|i| if vc[i] != 0.0 { vx[i] } else { vy[i] })
        .collect();
    out(Const::from_f64(b.elem, to, &v), node)
}

/// `ConstantOfShape` (at most 2^24 elements).
fn constant_of_shape(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let dims: Vec<usize> = a
        .ints()
        .ok_or_else(|| bad(node, "shape"))?
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad(node, "negative dimension")))
        .collect::<Result<_, _>>()?;
    let n = numel(&dims)
        .filter(|&n| n <= MAX_FOLD_ELEMENTS)
        .ok_or_else(|| too_large(node))?;
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
    out(Const::from_f64(e, dims, &vec![val; n]), node)
}

/// `Range` (at most 2^24 elements).
fn range(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let (s, l, d) = (a.values(), f.x(1)?.values(), f.x(2)?.values());
    let (s, l, d) = (
        s.first().copied().ok_or_else(|| bad(node, "no start"))?,
        l.first().copied().unwrap_or(0.0),
        d.first().copied().unwrap_or(1.0),
    );
    if d == 0.0 {
        return Err(bad(node, "delta 0"));
    }
    let n = ((l - s) / d).ceil().max(0.0);
    if n > MAX_FOLD_ELEMENTS as f64 {
        return Err(too_large(node));
    }
    let v: Vec<f64> = (0..n as usize).map(|i| s + i as f64 * d).collect();
    out(Const::from_f64(a.elem, vec![v.len()], &v), node)
}

/// The ops that only change dimensions: `Unsqueeze`, `Squeeze`, `Reshape`, `Flatten`.
fn reshape(f: &Args<'_>, a: &Const, how: Shaping) -> Folded {
    let node = f.node;
    let dims = a.dims();
    let r = dims.len();
    let new: Vec<usize> = match how {
        Shaping::Reshape => {
            let s = f.x(1)?.ints().ok_or_else(|| bad(node, "shape"))?;
            reshape_dims(dims, &s, node.int("allowzero", 0) != 0)
                .ok_or_else(|| bad(node, "shape does not fit"))?
        }
        Shaping::Flatten => {
            let ax = node.int("axis", 1);
            let ax = if ax < 0 { ax + r as i64 } else { ax } as usize;
            let ax = ax.min(r);
            let (outer, inner) = (numel(&dims[..ax]), numel(&dims[ax..]));
            vec![
                outer.ok_or_else(|| too_large(node))?,
                inner.ok_or_else(|| too_large(node))?,
            ]
        }
        Shaping::Squeeze | Shaping::Unsqueeze => {
            let axes = if f.opset >= 13 {
                match f.ins.get(1).and_then(Option::as_ref) {
                    Some(c) => c.ints().ok_or_else(|| bad(node, "axes"))?,
                    None => vec![],
                }
            } else {
                node.ints("axes").unwrap_or_default()
            };
            if how == Shaping::Unsqueeze {
                super::unsqueezed(dims, &axes).map_err(|_| bad(node, "axes"))?
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

/// `Expand` (at most 2^24 elements).
fn expand_to(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let s: Vec<usize> = f
        .x(1)?
        .ints()
        .ok_or_else(|| bad(node, "shape"))?
        .iter()
        .map(|&d| usize::try_from(d.max(0)).map_err(|_| too_large(node)))
        .collect::<Result<_, _>>()?;
    let to = broadcast(a.dims(), &s).ok_or_else(|| bad(node, "shapes"))?;
    f.bounded(&to)?;
    out(
        Const::from_f64(a.elem, to.clone(), &expand(node, a, &to)?),
        node,
    )
}

/// `Concat` (every part of the first's rank and outer dimensions; a part
/// that does not fit is refused, not read past its end).
fn concat(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let r = a.dims().len();
    let ax = axis(node.int("axis", 0), r).ok_or_else(|| bad(node, "axis"))?;
    let parts: Vec<&Const> = f.ins.iter().flatten().collect();
    if parts
        .iter()
        .any(|c| c.dims().len() != r || c.dims()[..ax] != a.dims()[..ax])
    {
        return Err(bad(node, "ranks differ"));
    }
    let mut dims = a.dims().to_vec();
    dims[ax] = parts
        .iter()
        .try_fold(0usize, |n, c| n.checked_add(c.dims()[ax]))
        .ok_or_else(|| too_large(node))?;
    // No more than the parts hold; none at all when a dimension is 0 (the
    // outer loop below would otherwise count through the other ones).
    if f.bounded(&dims)? == 0 {
        return out(Const::from_f64(a.elem, dims, &[]), node);
    }
    let outer = numel(&a.dims()[..ax]).ok_or_else(|| too_large(node))?;
    let vals: Vec<Vec<f64>> = parts.iter().map(|c| c.values()).collect();
    let mut v = Vec::new();
    for o in 0..outer {
        for (c, pv) in parts.iter().zip(&vals) {
            let inner = numel(&c.dims()[ax..]).ok_or_else(|| too_large(node))?;
            let part = o
                .checked_mul(inner)
                .and_then(|b| pv.get(b..b.checked_add(inner)?))
                .ok_or_else(|| bad(node, "a part shorter than its shape"))?;
            v.extend_from_slice(part);
        }
    }
    out(Const::from_f64(a.elem, dims, &v), node)
}

/// `Gather`.
fn gather(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let idx = f.x(1)?.ints().ok_or_else(|| bad(node, "indices"))?;
    let r = a.dims().len();
    let ax = axis(node.int("axis", 0), r).ok_or_else(|| bad(node, "axis"))?;
    let d = a.dims()[ax];
    let di = i64::try_from(d).map_err(|_| too_large(node))?;
    let rows: Vec<usize> = idx
        .iter()
        .map(|&i| {
            let i = if i < 0 { i.saturating_add(di) } else { i };
            usize::try_from(i)
                .ok()
                .filter(|&i| i < d)
                .ok_or_else(|| bad(node, "index out of range"))
        })
        .collect::<Result<_, _>>()?;
    let mut dims = a.dims()[..ax].to_vec();
    dims.extend_from_slice(f.x(1)?.dims());
    dims.extend_from_slice(&a.dims()[ax + 1..]);
    if f.bounded(&dims)? == 0 {
        return out(Const::from_f64(a.elem, dims, &[]), node);
    }
    // Every count below is at most the data's or the result's, both
    // bounded.
    let outer = numel(&a.dims()[..ax]).ok_or_else(|| too_large(node))?;
    let inner = numel(&a.dims()[ax + 1..]).ok_or_else(|| too_large(node))?;
    let av = a.values();
    let mut v = Vec::new();
    for o in 0..outer {
        for &i in &rows {
            let part = o
                .checked_mul(d)
                .and_then(|r| r.checked_add(i))
                .and_then(|r| r.checked_mul(inner))
                .and_then(|r| av.get(r..r.checked_add(inner)?))
                .ok_or_else(|| bad(node, "data shorter than its shape"))?;
            v.extend_from_slice(part);
        }
    }
    out(Const::from_f64(a.elem, dims, &v), node)
}

/// `Slice` (attributes before opset 10, inputs after).
fn slice(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let dims = a.dims().to_vec();
    let r = dims.len();
    let (starts, ends, axes, steps) = if f.opset < 10 {
        (
            node.ints("starts").unwrap_or_default(),
            node.ints("ends").unwrap_or_default(),
            node.ints("axes"),
            None,
        )
    } else {
        let g = |i: usize| f.ins.get(i).and_then(Option::as_ref).and_then(Const::ints);
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
    let odims: Vec<usize> = spec
        .iter()
        .map(|s| usize::try_from(s.2).map_err(|_| bad(node, "slice parameters")))
        .collect::<Result<_, _>>()?;
    let n = f.bounded(&odims)?;
    let (st, ost) = (strides(node, &dims)?, strides(node, &odims)?);
    let v: Vec<f64> = (0..n)
        .map(|i| {
            let mut src = 0i64;
            for k in 0..r {
                let j = ((i / ost[k]) % odims[k].max(1)) as i64;
                src = j
                    .checked_mul(spec[k].1)
                    .and_then(|p| p.checked_add(spec[k].0))
                    .and_then(|p| p.checked_mul(st[k] as i64))
                    .and_then(|p| p.checked_add(src))?;
            }
            usize::try_from(src).ok().and_then(|s| av.get(s)).copied()
        })
        .collect::<Option<_>>()
        .ok_or_else(|| bad(node, "slice outside the data"))?;
    out(Const::from_f64(a.elem, odims, &v), node)
}

/// `Transpose`.
fn transpose(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let dims = a.dims().to_vec();
    let r = dims.len();
    let perm: Vec<usize> = match node.ints("perm") {
        Some(p) => p
            .iter()
            .map(|&v| usize::try_from(v).ok().filter(|&v| v < r))
            .collect::<Option<_>>()
            .ok_or_else(|| bad(node, "perm"))?,
        None => (0..r).rev().collect(),
    };
    // A permutation: every axis once (a repeated axis would read past the
    // data).
    let mut seen = vec![false; r];
    if perm.len() != r || perm.iter().any(|&p| std::mem::replace(&mut seen[p], true)) {
        return Err(bad(node, "perm"));
    }
    let odims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let (st, ost) = (strides(node, &dims)?, strides(node, &odims)?);
    let av = a.values();
    let v: Vec<f64> = (0..av.len())
        .map(|i| {
            let s: usize = (0..r)
                .map(|k| ((i / ost[k]) % odims[k].max(1)) * st[perm[k]])
                .sum();
            av.get(s).copied()
        })
        .collect::<Option<_>>()
        .ok_or_else(|| bad(node, "data shorter than its shape"))?;
    out(Const::from_f64(a.elem, odims, &v), node)
}

/// `ReduceProd`.
fn reduce_prod(f: &Args<'_>, a: &Const) -> Folded {
    let node = f.node;
    let dims = a.dims().to_vec();
    let r = dims.len();
    let axes = match f.ins.get(1).and_then(Option::as_ref) {
        Some(c) => c.ints().ok_or_else(|| bad(node, "axes"))?,
        None => node.ints("axes").unwrap_or_default(),
    };
    let mut red = vec![false; r];
    if axes.is_empty() {
        // No axes: every axis, unless noop_with_empty_axes (f.opset 18).
        if node.int("noop_with_empty_axes", 0) != 0 {
            return Ok(vec![a.clone()]);
        }
        red.iter_mut().for_each(|b| *b = true);
    }
    for &ax in &axes {
        red[axis(ax, r).ok_or_else(|| bad(node, "axes"))?] = true;
    }
    let rdims: Vec<usize> = (0..r).map(|k| if red[k] { 1 } else { dims[k] }).collect();
    let (rst, st) = (strides(node, &rdims)?, strides(node, &dims)?);
    // Never more than the input holds (but 1 for an empty input).
    let mut v = vec![1.0f64; f.bounded(&rdims)?];
    for (i, x) in a.values().into_iter().enumerate() {
        let o: usize = (0..r)
            .filter(|&k| !red[k])
            .map(|k| ((i / st[k]) % dims[k].max(1)) * rst[k])
            .sum();
        *v.get_mut(o)
            .ok_or_else(|| bad(node, "data longer than its shape"))? *= x;
    }
    let odims = if node.int("keepdims", 1) != 0 {
        rdims
    } else {
        (0..r).filter(|&k| !red[k]).map(|k| dims[k]).collect()
    };
    out(Const::from_f64(a.elem, odims, &v), node)
}

/// A refusal naming the node (`Op name: what`).
pub(super) fn bad(node: &Node, what: &str) -> LowerError {
    LowerError::Other(format!("{} {}: {what}", node.op, node.name))
}

/// A refusal of a result above the bound ([`Args::bounded`]).
fn too_large(node: &Node) -> LowerError {
    LowerError::FoldTooLarge {
        node: format!("{} {}", node.op, node.name),
    }
}

/// The element count of `dims` (0 when a dimension is 0, whatever the
/// others), `None` when it overflows.
pub(super) fn numel(dims: &[usize]) -> Option<usize> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1usize, |p, &d| p.checked_mul(d))
}

/// The one output `c`, refused when the type cannot hold it.
fn out(c: Option<Const>, node: &Node) -> Folded {
    c.map(|c| vec![c])
        .ok_or_else(|| bad(node, "cannot hold the result"))
}

/// Row-major strides of `dims`, refused when they overflow (possible
/// for an empty tensor: a 0 dimension beside huge ones).
fn strides(node: &Node, dims: &[usize]) -> Result<Vec<usize>, LowerError> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1]
            .checked_mul(dims[i + 1])
            .ok_or_else(|| too_large(node))?;
    }
    Ok(s)
}

/// The values of `c` broadcast to `to` (a shape [`broadcast`] gave and
/// [`Args::bounded`] accepted); a source shorter than its dimensions is
/// refused.
fn expand(node: &Node, c: &Const, to: &[usize]) -> Result<Vec<f64>, LowerError> {
    let v = c.values();
    let d = c.dims();
    let off = to
        .len()
        .checked_sub(d.len())
        .ok_or_else(|| bad(node, "shapes"))?;
    let n = numel(to).ok_or_else(|| too_large(node))?;
    let (st, ost) = (strides(node, d)?, strides(node, to)?);
    (0..n)
        .map(|i| {
            let mut src = 0;
            for (k, &s) in ost.iter().enumerate() {
                let idx = (i / s) % to[k].max(1);
                if k >= off && d[k - off] != 1 {
                    src += idx * st[k - off];
                }
            }
            v.get(src).copied()
        })
        .collect::<Option<_>>()
        .ok_or_else(|| bad(node, "data shorter than its shape"))
}

/// Whether ONNX element type `e` is an integer type.
pub(super) fn is_int(e: i32) -> bool {
    matches!(e, 2..=7 | 12 | 13)
}

/// Axis `a` (negative from the end) of a rank-`r` tensor, if in range.
pub(super) fn axis(a: i64, r: usize) -> Option<usize> {
    let r = i64::try_from(r).ok()?;
    let a = if a < 0 { a.checked_add(r)? } else { a };
    (0..r)
        .contains(&a)
        .then(|| usize::try_from(a).ok())
        .flatten()
}

pub(super) mod quant;
#[cfg(test)]
mod tests;
