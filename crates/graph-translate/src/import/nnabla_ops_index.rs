//! ONNX → NNabla lowerings: element-wise indexing (`GatherElements`,
//! `ScatterElements`, `Scatter`) and `ScatterND`, with NNabla's
//! `GatherNd`, `ScatterNd` and `ScatterAdd`. Indices may be computed at
//! run time; negative ones are wrapped (`i + d` where `i < 0`) first.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{binary_vars, chain, mul_scalar};
use super::onnx_graph::{Node, elem};

/// The static shape of `name`, refused when it has the symbolic batch.
fn static_shape(cx: &Cx<'_>, name: &str) -> Result<Vec<i64>, LowerError> {
    let s = cx.shape(name)?;
    if s.iter().any(|&d| d < 0) {
        return Err(LowerError::AcrossBatch {
            what: "indexing over",
        });
    }
    Ok(s)
}

fn count(dims: &[i64]) -> Result<usize, LowerError> {
    dims.iter().try_fold(1usize, |p, &d| {
        usize::try_from(d)
            .ok()
            .and_then(|d| p.checked_mul(d))
            .ok_or(LowerError::TooLarge("too many elements"))
    })
}

/// The index input `i` of `node` (shape `ishape`) with negative values
/// wrapped by `bound` (one bound per element, broadcast from `bdims`):
/// folded into a parameter when the indices are a constant, else
/// `i + bound * (i < 0)`.
fn wrapped_indices(
    cx: &mut Cx<'_>,
    node: &Node,
    i: usize,
    bound: &[f64],
    bdims: &[i64],
) -> Result<String, LowerError> {
    let name = node.input(i).ok_or(LowerError::missing("indices"))?;
    let ishape = static_shape(cx, name)?;
    if let Some(c) = cx.konst(name).cloned() {
        let v = c.ints().ok_or("indices are not integers")?;
        // The bound of element k: bdims broadcast to ishape.
        let n = count(&ishape)?;
        let bn = bound.len().max(1);
        let mut out = Vec::with_capacity(n);
        for (k, &x) in v.iter().enumerate() {
            let b = if bn == 1 { bound[0] } else { bound[k % bn] };
            let x = x as f64;
            let w = if x < 0.0 { x + b } else { x };
            if !(0.0..b).contains(&w) {
                return Err("an index out of range".into());
            }
            out.push(w);
        }
        return cx.param(&format!("{name}__wrapped"), &ishape, &out);
    }
    let e = cx.elem(name);
    if !matches!(e, 6 | 7) {
        return Err(LowerError::Other(format!(
            "{} indices",
            onnx_format::dtype::onnx_name(e)
        )));
    }
    let idx = cx.var(name)?;
    let neg = chain(
        cx,
        &idx,
        "LessScalar",
        Some(P::LessScalarParam(LessScalarParameter { val: 0.0 })),
    )?;
    let add = if bound.len() == 1 {
        chain(cx, &neg, "MulScalar", mul_scalar(bound[0]))?
    } else {
        let b = cx.param(&format!("{name}__bound"), bdims, bound)?;
        binary_vars(cx, "Mul2", &neg, &b, None, elem::FLOAT)?
    };
    binary_vars(cx, "Add2", &idx, &add, None, elem::INT64)
}

/// The `(r, *ishape)` index array of element-wise indexing along `axis`:
/// row `axis` is `idx`, every other row `j` the position along `j`.
pub(crate) fn element_index(
    cx: &mut Cx<'_>,
    idx: &str,
    r: usize,
    axis: usize,
) -> Result<String, LowerError> {
    let ishape = cx.shape(idx)?;
    let n = count(&ishape)?;
    let strides: Vec<usize> = (0..r)
        .map(|j| ishape[j + 1..].iter().map(|&d| d as usize).product())
        .collect();
    let rows = |js: std::ops::Range<usize>| -> Vec<f64> {
        let mut v = Vec::with_capacity(js.len() * n);
        for j in js {
            let d = ishape[j] as usize;
            v.extend((0..n).map(|k| ((k / strides[j]) % d.max(1)) as f64));
        }
        v
    };
    let mut parts = Vec::new();
    if axis > 0 {
        let mut d = vec![axis as i64];
        d.extend_from_slice(&ishape);
        parts.push(cx.param(&format!("{idx}__pos_lo"), &d, &rows(0..axis))?);
    }
    let mut d1 = vec![1i64];
    d1.extend_from_slice(&ishape);
    parts.push(cx.reshape(idx, &d1)?);
    if axis + 1 < r {
        let mut d = vec![(r - axis - 1) as i64];
        d.extend_from_slice(&ishape);
        parts.push(cx.param(&format!("{idx}__pos_hi"), &d, &rows(axis + 1..r))?);
    }
    let mut d = vec![r as i64];
    d.extend_from_slice(&ishape);
    let y = cx.fresh(idx);
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    cx.emit(
        "Concatenate",
        &refs,
        &[(&y, &d)],
        Some(P::ConcatenateParam(ConcatenateParameter { axis: 0 })),
    );
    cx.set_elem(&y, elem::INT64);
    Ok(y)
}

fn axis_of(node: &Node, r: usize) -> Result<usize, LowerError> {
    let a = node.int("axis", 0);
    let x = if a < 0 { a + r as i64 } else { a };
    usize::try_from(x)
        .ok()
        .filter(|&x| x < r)
        .ok_or_else(|| LowerError::attr("axis", a.to_string()))
}

/// `GatherElements`: `GatherNd` on the element index array.
pub(crate) fn gather_elements(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let x = cx.avar(node, 0)?;
    let s = static_shape(cx, &x)?;
    let r = s.len();
    let ax = axis_of(node, r)?;
    let ishape = static_shape(cx, node.input(1).ok_or(LowerError::missing("indices"))?)?;
    if ishape.len() != r || r == 0 {
        return Err("indices of another rank than the data".into());
    }
    let idx = wrapped_indices(cx, node, 1, &[s[ax] as f64], &[])?;
    let full = element_index(cx, &idx, r, ax)?;
    let e = cx.elem(&x);
    let out = &node.outputs[0];
    cx.emit("GatherNd", &[&x, &full], &[(out, &ishape)], None);
    cx.set_elem(out, e);
    Ok(())
}

/// `Gather` with indices computed at run time: NNabla's `Gather` on the
/// wrapped indices.
pub(crate) fn gather_runtime(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let x = cx.avar(node, 0)?;
    let s = static_shape(cx, &x)?;
    let ax = axis_of(node, s.len())?;
    let ishape = static_shape(cx, node.input(1).ok_or(LowerError::missing("indices"))?)?;
    let idx = wrapped_indices(cx, node, 1, &[s[ax] as f64], &[])?;
    let mut out: Vec<i64> = s[..ax].to_vec();
    out.extend_from_slice(&ishape);
    out.extend_from_slice(&s[ax + 1..]);
    let e = cx.elem(&x);
    let y = &node.outputs[0];
    cx.emit(
        "Gather",
        &[&x, &idx],
        &[(y, &out)],
        Some(P::GatherParam(GatherParameter {
            axis: ax as i64,
            batch_dims: 0,
        })),
    );
    cx.set_elem(y, e);
    Ok(())
}

/// A copy of `x` (NNabla's `ScatterNd` writes into its `out` input).
fn copy(cx: &mut Cx<'_>, x: &str) -> Result<String, LowerError> {
    let e = cx.elem(x);
    let y = chain(cx, x, "MulScalar", mul_scalar(1.0))?;
    cx.set_elem(&y, e);
    Ok(y)
}

fn reduction(node: &Node) -> Result<bool, LowerError> {
    match node.string("reduction", "none").as_str() {
        "none" => Ok(false),
        "add" => Ok(true),
        other => Err(LowerError::Other(format!(
            "reduction={other:?} (NNabla scatters by replacing or adding only)"
        ))),
    }
}

/// `ScatterElements` / `Scatter`: `ScatterAdd` (reduction add) or
/// `ScatterNd` into a copy of the data on the element index array.
pub(crate) fn scatter_elements(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let add = reduction(node)?;
    let x = cx.fvar(node, 0)?;
    let s = static_shape(cx, &x)?;
    let r = s.len();
    let ax = axis_of(node, r)?;
    let ishape = static_shape(cx, node.input(1).ok_or(LowerError::missing("indices"))?)?;
    let u = cx.fvar(node, 2)?;
    if ishape.len() != r || r == 0 || cx.shape(&u)? != ishape {
        return Err("indices and updates of other shapes".into());
    }
    let idx = wrapped_indices(cx, node, 1, &[s[ax] as f64], &[])?;
    let out = &node.outputs[0];
    if add {
        cx.emit(
            "ScatterAdd",
            &[&x, &idx, &u],
            &[(out, &s)],
            Some(P::ScatterAddParam(ScatterAddParameter { axis: ax as i64 })),
        );
        return Ok(());
    }
    let full = element_index(cx, &idx, r, ax)?;
    let base = copy(cx, &x)?;
    cx.emit(
        "ScatterNd",
        &[&u, &full, &base],
        &[(out, &s)],
        Some(P::ScatterNdParam(ScatterNdParameter {
            shape: s.clone(),
            add: false,
        })),
    );
    Ok(())
}

/// `ScatterND` (reduction none or add): `ScatterNd` into a copy of the
/// data, the index tuples moved from the last axis to the first.
pub(crate) fn scatter_nd(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let add = reduction(node)?;
    let x = cx.fvar(node, 0)?;
    let s = static_shape(cx, &x)?;
    let ishape = static_shape(cx, node.input(1).ok_or(LowerError::missing("indices"))?)?;
    let u = cx.fvar(node, 2)?;
    let ushape = cx.shape(&u)?;
    let (&k, lead) = ishape.split_last().ok_or("rank-0 indices")?;
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| (1..=s.len()).contains(&k))
        .ok_or("index tuples longer than the data's rank")?;
    let mut want = lead.to_vec();
    want.extend_from_slice(&s[k..]);
    if ushape != want {
        return Err("updates of another shape than the indices select".into());
    }
    // Bound of each index column, broadcast along the last axis.
    let bound: Vec<f64> = s[..k].iter().map(|&d| d as f64).collect();
    let mut bdims = vec![1i64; ishape.len() - 1];
    bdims.push(k as i64);
    let idx = wrapped_indices(cx, node, 1, &bound, &bdims)?;
    // (..., k) -> (k, ...); a lone tuple gets a unit axis on both sides.
    let (idx, u) = if lead.is_empty() {
        let i = cx.reshape(&idx, &[k as i64, 1])?;
        let mut ud = vec![1i64];
        ud.extend_from_slice(&ushape);
        (i, cx.reshape(&u, &ud)?)
    } else {
        let rk = ishape.len();
        let mut perm = vec![(rk - 1) as i64];
        perm.extend(0..(rk - 1) as i64);
        let mut td = vec![k as i64];
        td.extend_from_slice(lead);
        let t = cx.fresh(&idx);
        super::nnabla_ops_shape::transpose_vars(cx, &idx, &t, &perm, &td);
        (t, u)
    };
    let base = copy(cx, &x)?;
    cx.emit(
        "ScatterNd",
        &[&u, &idx, &base],
        &[(&node.outputs[0], &s)],
        Some(P::ScatterNdParam(ScatterNdParameter {
            shape: s.clone(),
            add,
        })),
    );
    Ok(())
}

/// `Hardmax`: 1 at the first largest value along the axis, 0 elsewhere
/// (`TopKData` index, `OneHot`, the axis moved last and back). Before
/// opset 13 the input is taken as the 2-D matrix split at `axis`.
pub(crate) fn hardmax(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let x0 = cx.fvar(node, 0)?;
    let s0 = static_shape(cx, &x0)?;
    if s0.contains(&0) {
        return Err("an empty input".into());
    }
    let r0 = s0.len();
    let (mut x, ax) = if cx.opset < 13 {
        let a = node.int("axis", 1);
        let a = usize::try_from(if a < 0 { a + r0 as i64 } else { a })
            .ok()
            .filter(|&a| a <= r0)
            .ok_or_else(|| LowerError::attr("axis", a.to_string()))?;
        let prod = |d: &[i64]| d.iter().try_fold(1i64, |p, &v| p.checked_mul(v));
        let outer = prod(&s0[..a]).ok_or(LowerError::TooLarge("too many elements"))?;
        let inner = prod(&s0[a..]).ok_or(LowerError::TooLarge("too many elements"))?;
        (cx.reshape(&x0, &[outer, inner])?, 1usize)
    } else {
        let a = node.int("axis", -1);
        let ax = usize::try_from(if a < 0 { a + r0 as i64 } else { a })
            .ok()
            .filter(|&a| a < r0)
            .ok_or_else(|| LowerError::attr("axis", a.to_string()))?;
        (x0.clone(), ax)
    };
    let s = cx.shape(&x)?;
    let r = s.len();
    let d = s[ax];
    let perm: Vec<i64> = (0..r as i64)
        .filter(|&i| i != ax as i64)
        .chain([ax as i64])
        .collect();
    let pd: Vec<i64> = perm.iter().map(|&i| s[i as usize]).collect();
    if ax + 1 != r {
        let t = cx.fresh(&x);
        super::nnabla_ops_shape::transpose_vars(cx, &x, &t, &perm, &pd);
        x = t;
    }
    let mut top = pd.clone();
    *top.last_mut().ok_or("rank 0")? = 1;
    let (v, idx) = (cx.fresh(&x), cx.fresh(&x));
    cx.emit(
        "TopKData",
        &[&x],
        &[(&v, &top), (&idx, &top)],
        Some(P::TopKDataParam(TopKDataParameter {
            k: 1,
            abs: false,
            reduce: true,
            base_axis: (r - 1) as i64,
            largest: true,
            with_index: true,
        })),
    );
    let oh = cx.fresh(&x);
    cx.emit(
        "OneHot",
        &[&idx],
        &[(&oh, &pd)],
        Some(P::OneHotParam(OneHotParameter {
            shape: Some(Shape { dim: vec![d] }),
        })),
    );
    let out = &node.outputs[0];
    if ax + 1 != r {
        // The inverse permutation.
        let mut inv = vec![0i64; r];
        for (i, &p) in perm.iter().enumerate() {
            inv[p as usize] = i as i64;
        }
        if s == s0 {
            super::nnabla_ops_shape::transpose_vars(cx, &oh, out, &inv, &s0);
        } else {
            let t = cx.fresh(&oh);
            super::nnabla_ops_shape::transpose_vars(cx, &oh, &t, &inv, &s);
            cx.reshape_to(&t, out, &s0)?;
        }
    } else {
        cx.reshape_to(&oh, out, &s0)?;
    }
    cx.set_elem(out, elem::FLOAT);
    Ok(())
}

/// `GridSample` (2-D and 3-D): NNabla's `WarpByGrid` (linear, with
/// zero/repeat/reflect padding), the grid's layout being ONNX's.
pub(crate) fn grid_sample(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let mode = match node.string("mode", "linear").as_str() {
        "linear" | "bilinear" => "linear",
        // nnabla 1.39's nearest picks other pixels than ONNX's (wrong on
        // all 5 nearest conformance cases, by up to 9).
        "nearest" => {
            return Err("mode=\"nearest\" (nnabla 1.39 rounds to other pixels than ONNX)".into());
        }
        other => {
            return Err(LowerError::Other(format!(
                "mode={other:?} (NNabla warps linearly only)"
            )));
        }
    };
    let padding = match node.string("padding_mode", "zeros").as_str() {
        "zeros" => "zero",
        "border" => "repeat",
        "reflection" => "reflect",
        other => {
            return Err(LowerError::attr("padding_mode", format!("{other:?}")));
        }
    };
    let x = cx.fvar(node, 0)?;
    let g = cx.fvar(node, 1)?;
    let (s, gs) = (static_shape(cx, &x)?, static_shape(cx, &g)?);
    let sp = s.len().checked_sub(2).filter(|&n| n == 2 || n == 3);
    let Some(sp) = sp else {
        return Err("an input with other than 2 or 3 spatial dimensions".into());
    };
    if gs.len() != sp + 2 || gs[0] != s[0] || gs[sp + 1] != sp as i64 {
        return Err("a grid of another shape than (N, *out, spatial rank)".into());
    }
    let mut out = s[..2].to_vec();
    out.extend_from_slice(&gs[1..=sp]);
    let y = &node.outputs[0];
    cx.emit(
        "WarpByGrid",
        &[&x, &g],
        &[(y, &out)],
        Some(P::WarpByGridParam(WarpByGridParameter {
            mode: mode.into(),
            padding_mode: padding.into(),
            align_corners: node.int("align_corners", 0) != 0,
            channel_last: false,
        })),
    );
    cx.set_elem(y, elem::FLOAT);
    Ok(())
}

/// `GatherND` (batch_dims 0): NNabla's `GatherNd` with the index tuples
/// moved from the last axis to the first, negative ones wrapped.
pub(crate) fn gather_nd(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    if node.int("batch_dims", 0) != 0 {
        return Err("batch_dims other than 0".into());
    }
    let x = cx.avar(node, 0)?;
    let s = static_shape(cx, &x)?;
    let ishape = static_shape(cx, node.input(1).ok_or(LowerError::missing("indices"))?)?;
    let (&k, lead) = ishape.split_last().ok_or("rank-0 indices")?;
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| (1..=s.len()).contains(&k))
        .ok_or("index tuples longer than the data's rank")?;
    let bound: Vec<f64> = s[..k].iter().map(|&d| d as f64).collect();
    let mut bdims = vec![1i64; ishape.len() - 1];
    bdims.push(k as i64);
    let idx = wrapped_indices(cx, node, 1, &bound, &bdims)?;
    let idx = if lead.is_empty() {
        cx.reshape(&idx, &[k as i64, 1])?
    } else {
        let rk = ishape.len();
        let mut perm = vec![(rk - 1) as i64];
        perm.extend(0..(rk - 1) as i64);
        let mut td = vec![k as i64];
        td.extend_from_slice(lead);
        let t = cx.fresh(&idx);
        super::nnabla_ops_shape::transpose_vars(cx, &idx, &t, &perm, &td);
        t
    };
    let mut out: Vec<i64> = if lead.is_empty() {
        vec![1]
    } else {
        lead.to_vec()
    };
    out.extend_from_slice(&s[k..]);
    let e = cx.elem(&x);
    let y = &node.outputs[0];
    if lead.is_empty() {
        let t = cx.fresh(&x);
        cx.emit("GatherNd", &[&x, &idx], &[(&t, &out)], None);
        cx.set_elem(&t, e);
        cx.reshape_to(&t, y, &s[k..])?;
    } else {
        cx.emit("GatherNd", &[&x, &idx], &[(y, &out)], None);
    }
    cx.set_elem(y, e);
    Ok(())
}

/// `ReverseSequence`: each batch entry's first `sequence_lens[b]` time
/// steps reversed, as a `GatherNd` whose time index is
/// `Where(t < len, len - 1 - t, t)` (computed at run time).
pub(crate) fn reverse_sequence(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let x = cx.avar(node, 0)?;
    let s = static_shape(cx, &x)?;
    let r = s.len();
    let (ba, ta) = (node.int("batch_axis", 1), node.int("time_axis", 0));
    let (ba, ta) = match (ba, ta) {
        (0, 1) => (0usize, 1usize),
        (1, 0) => (1, 0),
        _ => {
            return Err(LowerError::Other(format!(
                "batch_axis={ba}, time_axis={ta}"
            )));
        }
    };
    if r < 2 {
        return Err("an input of rank below 2".into());
    }
    let lname = node.input(1).ok_or(LowerError::Missing {
        what: "sequence_lens",
    })?;
    if !matches!(cx.elem(lname), 6 | 7) || static_shape(cx, lname)? != [s[ba]] {
        return Err("sequence_lens that are not integers of shape (batch)".into());
    }
    let lv = cx.var(lname)?;
    let mut ld = vec![1i64; r];
    ld[ba] = s[ba];
    let l = cx.reshape(&lv, &ld)?;
    let mut td = vec![1i64; r];
    td[ta] = s[ta];
    let tv: Vec<f64> = (0..s[ta]).map(|t| t as f64).collect();
    let t = cx.param(&format!("{}__time", node.outputs[0]), &td, &tv)?;
    let cond = binary_vars(cx, "Less", &t, &l, None, elem::BOOL)?;
    let lm1 = chain(
        cx,
        &l,
        "AddScalar",
        Some(P::AddScalarParam(AddScalarParameter {
            val: -1.0,
            inplace: false,
        })),
    )?;
    let rev = binary_vars(cx, "Sub2", &lm1, &t, None, elem::INT64)?;
    let parts: Vec<String> = [cond, rev, t]
        .iter()
        .map(|v| super::nnabla_ops_elementwise::broadcast_to(cx, v, &s))
        .collect::<Result<_, _>>()?;
    let idx = cx.fresh(&parts[1]);
    cx.emit(
        "Where",
        &[&parts[0], &parts[1], &parts[2]],
        &[(&idx, &s)],
        None,
    );
    cx.set_elem(&idx, elem::INT64);
    let full = element_index(cx, &idx, r, ta)?;
    let e = cx.elem(&x);
    let y = &node.outputs[0];
    cx.emit("GatherNd", &[&x, &full], &[(y, &s)], None);
    cx.set_elem(y, e);
    Ok(())
}
