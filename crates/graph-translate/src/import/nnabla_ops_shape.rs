//! ONNX → NNabla lowerings: shape and data-movement operators (reshapes,
//! transposes, concatenation, slicing, padding, gathering, tiling).
//!
//! Data movement is exact for every value f32 holds, so these take
//! integer and boolean inputs too.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::error::BATCH;
use super::fold::{reshape_dims, slice_spec};
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{broadcast_to, chain_to};
use super::onnx_graph::{Node, elem};
use super::table::lowerings;

lowerings! { Cx<'_>;
    /// `Squeeze` → `Reshape`.
    squeeze(cx, node) => squeeze_of(cx, node, false);
    /// `Unsqueeze` → `Reshape`.
    unsqueeze(cx, node) => squeeze_of(cx, node, true);
    /// `Identity` → `Identity`.
    identity(cx, node) => identity_of(cx, node, false);
    /// `Dropout` → `Identity` (and a mask of ones).
    dropout(cx, node) => identity_of(cx, node, true);
    /// `DepthToSpace` → `Reshape`, `Transpose`, `Reshape`.
    depth_to_space(cx, node) => depth_space(cx, node, true);
    /// `SpaceToDepth` → `Reshape`, `Transpose`, `Reshape`.
    space_to_depth(cx, node) => depth_space(cx, node, false);
}

fn norm_axis(a: i64, r: usize) -> Result<usize, LowerError> {
    let v = if a < 0 { a + r as i64 } else { a };
    if (0..r as i64).contains(&v) {
        Ok(v as usize)
    } else {
        Err(LowerError::AxisOutOfRange { axis: a, rank: r })
    }
}

fn has_batch(s: &[i64]) -> bool {
    s.iter().any(|&d| d < 0)
}

/// `Reshape` with a constant shape.
pub(crate) fn reshape(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let shape = cx
        .const_ints(node, 1)
        .ok_or(LowerError::NotConstant { what: "shape" })?;
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let allowzero = node.int("allowzero", 0) != 0;
    let out = if has_batch(&s) {
        // The batch stays first: the target's first entry copies it (0) or
        // is inferred (-1); the rest must be static.
        if !matches!(shape.first(), Some(0) | Some(-1)) || allowzero {
            return Err(LowerError::AcrossBatch {
                what: "reshape across",
            });
        }
        let rest_in: Vec<usize> = s[1..].iter().map(|&d| d as usize).collect();
        let mut rest = Vec::new();
        for (i, &d) in shape.iter().enumerate().skip(1) {
            match d {
                0 => rest.push(*rest_in.get(i - 1).ok_or("shape")? as i64),
                d if d > 0 => rest.push(d),
                _ => {
                    return Err(LowerError::AcrossBatch {
                        what: "reshape across",
                    });
                }
            }
        }
        if super::dims::dims_product(&rest).ok() != Some(rest_in.iter().product::<usize>() as i64) {
            return Err(LowerError::AcrossBatch {
                what: "reshape across",
            });
        }
        let mut o = vec![-1];
        o.extend(rest);
        o
    } else {
        let d: Vec<usize> = s.iter().map(|&d| d as usize).collect();
        reshape_dims(&d, &shape, allowzero)
            .ok_or("shape does not fit the input")?
            .into_iter()
            .map(|v| v as i64)
            .collect()
    };
    cx.reshape_to(&x, &node.outputs[0], &out)
}

/// `Flatten`.
pub(crate) fn flatten(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let ax = {
        let a = node.int("axis", 1);
        let a = if a < 0 { a + s.len() as i64 } else { a };
        a.clamp(0, s.len() as i64) as usize
    };
    let p = |d: &[i64]| d.iter().product::<i64>();
    let out = if has_batch(&s) {
        if ax != 1 {
            return Err(LowerError::Other(format!(
                "flatten axis {ax} across {BATCH}"
            )));
        }
        vec![-1, p(&s[1..])]
    } else {
        vec![p(&s[..ax]), p(&s[ax..])]
    };
    cx.reshape_to(&x, &node.outputs[0], &out)
}

/// `Squeeze` and `Unsqueeze` (`unsqueeze`; axes as attribute before opset
/// 13, input after).
fn squeeze_of(cx: &mut Cx<'_>, node: &Node, unsqueeze: bool) -> Lowered {
    let axes = cx.axes(node, 13)?;
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let out: Vec<i64> = if unsqueeze {
        let rank = s.len() + axes.len();
        super::fold::unsqueezed(&s, &axes)
            .map_err(|axis| LowerError::AxisOutOfRange { axis, rank })?
    } else {
        let ax: Vec<usize> = if axes.is_empty() {
            (0..s.len()).filter(|&i| s[i] == 1).collect()
        } else {
            axes.iter()
                .map(|&a| norm_axis(a, s.len()))
                .collect::<Result<_, _>>()?
        };
        if ax.iter().any(|&a| s[a] != 1) {
            return Err("squeezes a dimension that is not 1".into());
        }
        (0..s.len())
            .filter(|i| !ax.contains(i))
            .map(|i| s[i])
            .collect()
    };
    cx.reshape_to(&x, &node.outputs[0], &out)
}

/// `Transpose`.
pub(crate) fn transpose(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let perm: Vec<i64> = node
        .ints("perm")
        .unwrap_or_else(|| (0..s.len() as i64).rev().collect());
    if perm.len() != s.len() {
        return Err("perm does not fit the rank".into());
    }
    if has_batch(&s) && perm[0] != 0 {
        return Err(LowerError::AcrossBatch { what: "moves" });
    }
    let out: Vec<i64> = perm
        .iter()
        .map(|&p| s.get(p as usize).copied().ok_or("perm"))
        .collect::<Result<_, _>>()?;
    let e = cx.elem(&x);
    transpose_vars(cx, &x, &node.outputs[0], &perm, &out);
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

pub(crate) fn transpose_vars(cx: &mut Cx<'_>, x: &str, out: &str, perm: &[i64], dims: &[i64]) {
    cx.emit(
        "Transpose",
        &[x],
        &[(out, dims)],
        Some(P::TransposeParam(TransposeParameter {
            axes: perm.to_vec(),
        })),
    );
}

/// `Concat`.
pub(crate) fn concat(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let mut ins = Vec::new();
    for i in 0..node.inputs.len() {
        if node.input(i).is_some() {
            ins.push(cx.avar(node, i)?);
        }
    }
    let Some(first) = ins.first() else {
        return Err(LowerError::absent("inputs"));
    };
    let s0 = cx.shape(first)?;
    let ax = norm_axis(node.int("axis", 0), s0.len())?;
    let mut out = s0.clone();
    out[ax] = 0;
    for v in &ins {
        let s = cx.shape(v)?;
        if s.len() != s0.len() {
            return Err("inputs of different ranks".into());
        }
        if s[ax] < 0 {
            return Err(LowerError::AcrossBatch {
                what: "concatenates along",
            });
        }
        out[ax] += s[ax];
    }
    let e = cx.elem(&ins[0]);
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    if let [one] = refs.as_slice() {
        // nnabla's Concatenate takes two inputs or more (DenseNet's first
        // layer concatenates a list of one)
        cx.emit("Identity", &[one], &[(&node.outputs[0], &out)], None);
        cx.set_elem(&node.outputs[0], e);
        return Ok(());
    }
    cx.emit(
        "Concatenate",
        &refs,
        &[(&node.outputs[0], &out)],
        Some(P::ConcatenateParam(ConcatenateParameter {
            axis: ax as i64,
        })),
    );
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// A `Slice` of `x` by resolved `(start, step, count)` per axis, into
/// `out`: axes with a negative step are flipped first.
pub(crate) fn slice_vars(cx: &mut Cx<'_>, x: &str, out: &str, spec: &[(i64, i64, i64)]) -> Lowered {
    let s = cx.shape(x)?;
    if has_batch(&s) {
        return Err(LowerError::AcrossBatch {
            what: "slices a tensor with",
        });
    }
    if spec.iter().any(|t| t.2 <= 0) {
        return Err("an empty result".into());
    }
    let e = cx.elem(x);
    let flip: Vec<i64> = (0..spec.len() as i64)
        .filter(|&i| spec[i as usize].1 < 0)
        .collect();
    let mut src = x.to_string();
    let mut spec = spec.to_vec();
    if !flip.is_empty() {
        let y = cx.fresh(x);
        cx.emit(
            "Flip",
            &[x],
            &[(&y, &s)],
            Some(P::FlipParam(FlipParameter { axes: flip.clone() })),
        );
        for &a in &flip {
            let (st, step, n) = spec[a as usize];
            spec[a as usize] = (s[a as usize] - 1 - st, -step, n);
        }
        src = y;
    }
    let dims: Vec<i64> = spec.iter().map(|t| t.2).collect();
    if dims == s {
        chain_to(cx, &src, out, "Identity", None)?;
    } else {
        cx.emit(
            "Slice",
            &[&src],
            &[(out, &dims)],
            Some(P::SliceParam(SliceParameter {
                start: spec.iter().map(|t| t.0).collect(),
                stop: spec.iter().map(|t| t.0 + (t.2 - 1) * t.1 + 1).collect(),
                step: spec.iter().map(|t| t.1).collect(),
            })),
        );
    }
    cx.set_elem(out, e);
    Ok(())
}

/// `Slice` (attributes before opset 10, constant inputs after).
pub(crate) fn slice(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let (starts, ends, axes, steps) = if cx.opset < 10 {
        (
            node.ints("starts").unwrap_or_default(),
            node.ints("ends").unwrap_or_default(),
            node.ints("axes"),
            None,
        )
    } else {
        let g = |i: usize| -> Result<Option<Vec<i64>>, LowerError> {
            match node.input(i) {
                None => Ok(None),
                Some(_) => cx
                    .const_ints(node, i)
                    .map(Some)
                    .ok_or(LowerError::NotConstant {
                        what: "slice parameters",
                    }),
            }
        };
        (
            g(1)?.unwrap_or_default(),
            g(2)?.unwrap_or_default(),
            g(3)?,
            g(4)?,
        )
    };
    let spec = slice_spec(&s, &starts, &ends, axes.as_deref(), steps.as_deref())
        .ok_or("slice parameters do not fit the input")?;
    slice_vars(cx, &x, &node.outputs[0], &spec)
}

/// `Split` into `Slice`s (NNabla's `Split` removes the axis).
pub(crate) fn split(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let ax = norm_axis(node.int("axis", 0), s.len())?;
    let d = s[ax];
    let n = node.outputs.len() as i64;
    let sizes = if cx.opset >= 13 && node.input(1).is_some() {
        cx.const_ints(node, 1).ok_or(LowerError::NotConstant {
            what: "split sizes",
        })?
    } else if let Some(v) = node.ints("split").filter(|v| !v.is_empty()) {
        v
    } else if d >= 0 {
        let k = node.int("num_outputs", n);
        if k != n {
            return Err("split sizes do not fit the input".into());
        }
        let chunk = (d + k - 1) / k.max(1);
        (0..k).map(|i| chunk.min(d - i * chunk).max(0)).collect()
    } else {
        return Err(LowerError::AcrossBatch { what: "splits" });
    };
    let total = sizes.iter().try_fold(0i64, |t, &v| t.checked_add(v));
    if sizes.len() != node.outputs.len() || sizes.iter().any(|&v| v < 0) || total != Some(d) {
        return Err("split sizes do not fit the input".into());
    }
    let mut start = 0;
    for (o, &len) in node.outputs.iter().zip(&sizes) {
        let mut spec: Vec<(i64, i64, i64)> = s.iter().map(|&v| (0, 1, v)).collect();
        spec[ax] = (start, 1, len);
        start += len;
        if !o.is_empty() {
            slice_vars(cx, &x, o, &spec)?;
        }
    }
    Ok(())
}

/// `Expand` with a constant shape: `Broadcast`.
pub(crate) fn expand(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let shape = cx
        .const_ints(node, 1)
        .ok_or(LowerError::NotConstant { what: "shape" })?;
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let to = super::nnabla_cx::broadcast_shapes(&s, &shape)?;
    let e = cx.elem(&x);
    let y = broadcast_to(cx, &x, &to)?;
    chain_to(cx, &y, &node.outputs[0], "Identity", None)?;
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// `Tile` with constant repeats.
pub(crate) fn tile(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let reps = cx
        .const_ints(node, 1)
        .ok_or(LowerError::NotConstant { what: "repeats" })?;
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    if reps.len() != s.len() || has_batch(&s) || reps.iter().any(|&r| r < 1) {
        return Err("repeats do not fit the input".into());
    }
    let out = s
        .iter()
        .zip(&reps)
        .map(|(a, b)| a.checked_mul(*b).ok_or_else(super::dims::too_large))
        .collect::<Result<Vec<i64>, _>>()?;
    let e = cx.elem(&x);
    cx.emit(
        "Tile",
        &[&x],
        &[(&node.outputs[0], &out)],
        Some(P::TileParam(TileParameter { reps })),
    );
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// `Gather` with constant indices (negative ones resolved): a scalar index
/// is a `Slice` and a `Reshape`, others NNabla's `Gather`.
pub(crate) fn gather(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let idx_name = node.input(1).ok_or(LowerError::missing("indices"))?;
    let Some(idx_c) = cx.konst(idx_name).cloned() else {
        return super::nnabla_ops_index::gather_runtime(cx, node);
    };
    let idx = idx_c.ints().ok_or("indices")?;
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let ax = norm_axis(node.int("axis", 0), s.len())?;
    let d = s[ax];
    if d < 0 {
        return Err(LowerError::AcrossBatch {
            what: "gathers along",
        });
    }
    let idx: Vec<i64> = idx.iter().map(|&i| if i < 0 { i + d } else { i }).collect();
    if idx.iter().any(|&i| !(0..d).contains(&i)) {
        return Err("an index out of range".into());
    }
    let mut out: Vec<i64> = s[..ax].to_vec();
    out.extend(idx_c.dims_i64());
    out.extend_from_slice(&s[ax + 1..]);
    let e = cx.elem(&x);
    if idx_c.dims().is_empty() {
        let mut spec: Vec<(i64, i64, i64)> = s.iter().map(|&v| (0, 1, v)).collect();
        spec[ax] = (idx[0], 1, 1);
        let t = cx.fresh(&x);
        slice_vars(cx, &x, &t, &spec)?;
        return cx.reshape_to(&t, &node.outputs[0], &out);
    }
    let vals: Vec<f64> = idx.iter().map(|&i| i as f64).collect();
    let p = cx.param(&format!("{idx_name}__indices"), &idx_c.dims_i64(), &vals)?;
    cx.emit(
        "Gather",
        &[&x, &p],
        &[(&node.outputs[0], &out)],
        Some(P::GatherParam(GatherParameter {
            axis: ax as i64,
            batch_dims: 0,
        })),
    );
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// `Pad` (constant, reflect and edge modes, edge being NNabla's `repeat`;
/// constant pads).
pub(crate) fn pad(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let mode = match node.string("mode", "constant").as_str() {
        "edge" => "repeat".to_string(),
        m @ ("constant" | "reflect") => m.to_string(),
        m => {
            return Err(LowerError::Other(format!(
                "mode={m:?} (NNabla pads constant, reflect or edge)"
            )));
        }
    };
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len();
    let (pads, value) = if cx.opset < 11 {
        (
            node.ints("pads").unwrap_or_default(),
            Some(f64::from(node.float("value", 0.0))),
        )
    } else {
        let pads = cx
            .const_ints(node, 1)
            .ok_or(LowerError::NotConstant { what: "pads" })?;
        let v = match node.input(2) {
            Some(_) => cx.const_floats(node, 2).and_then(|v| v.first().copied()),
            None => Some(0.0),
        };
        (pads, v)
    };
    // A pad value computed at run time: padded with 0, then the value
    // where a constant mask marks the padding.
    let runtime_value = value.is_none();
    let value = value.unwrap_or(0.0);
    if runtime_value && mode != "constant" {
        return Err(LowerError::NotConstant { what: "pad value" });
    }
    let axes: Vec<usize> = match node.input(3) {
        Some(_) => cx
            .const_ints(node, 3)
            .ok_or(LowerError::NotConstant { what: "axes" })?
            .iter()
            .map(|&a| norm_axis(a, r))
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err("pads do not fit the rank".into());
    }
    let mut full = vec![0i64; 2 * r];
    for (k, &a) in axes.iter().enumerate() {
        full[2 * a] = pads[k];
        full[2 * a + 1] = pads[k + axes.len()];
    }
    if full.iter().any(|&p| p < 0) {
        return Err("negative pads".into());
    }
    // Pad the trailing dimensions from the first padded one.
    let first = (0..r).find(|&a| full[2 * a] != 0 || full[2 * a + 1] != 0);
    let e = cx.elem(&x);
    let Some(first) = first else {
        return chain_to(cx, &x, &node.outputs[0], "Identity", None);
    };
    if s[first..].iter().any(|&d| d < 0) {
        return Err(LowerError::AcrossBatch { what: "pads" });
    }
    let out: Vec<i64> = (0..r)
        .map(|a| {
            if s[a] < 0 {
                Some(s[a])
            } else {
                s[a].checked_add(full[2 * a])?.checked_add(full[2 * a + 1])
            }
        })
        .collect::<Option<_>>()
        .ok_or("pads past any length")?;
    if mode == "reflect" && (first..r).any(|a| full[2 * a].max(full[2 * a + 1]) >= s[a]) {
        return Err("reflect pads as wide as the input".into());
    }
    let y = if runtime_value {
        cx.fresh(&x)
    } else {
        node.outputs[0].clone()
    };
    cx.emit(
        "Pad",
        &[&x],
        &[(&y, &out)],
        Some(P::PadParam(PadParameter {
            pad_width: full[2 * first..].to_vec(),
            mode,
            constant_value: value as f32,
        })),
    );
    cx.set_elem(&y, e);
    if runtime_value {
        return pad_runtime_value(cx, node, &y, &s, &out, &full);
    }
    Ok(())
}

/// `y` (padded with 0) with the padding set to the run-time scalar input 2:
/// `Where(inside, y, value)`, `inside` a constant mask.
fn pad_runtime_value(
    cx: &mut Cx<'_>,
    node: &Node,
    y: &str,
    s: &[i64],
    out: &[i64],
    full: &[i64],
) -> Lowered {
    if out.iter().any(|&d| d < 0) {
        return Err(LowerError::AcrossBatch {
            what: "a pad value computed at run time with pads",
        });
    }
    let n = out.iter().try_fold(1usize, |p, &d| {
        usize::try_from(d).ok().and_then(|d| p.checked_mul(d))
    });
    let n = n
        .filter(|&n| n <= 1 << 24)
        .ok_or(LowerError::TooLarge("too large a padded tensor"))?;
    let mut mask = vec![1.0; n];
    for (k, m) in mask.iter_mut().enumerate() {
        let mut rest = k;
        for a in (0..out.len()).rev() {
            let d = out[a] as usize;
            let i = (rest % d) as i64;
            rest /= d;
            if i < full[2 * a] || i >= full[2 * a] + s[a] {
                *m = 0.0;
                break;
            }
        }
    }
    let m = cx.param(&format!("{}__inside", node.outputs[0]), out, &mask)?;
    let v = cx.avar(node, 2)?;
    if cx.shape(&v)?.iter().product::<i64>() != 1 {
        return Err("a pad value that is not a scalar".into());
    }
    let v = broadcast_to(cx, &v, out)?;
    let e = cx.elem(y);
    cx.emit("Where", &[&m, y, &v], &[(&node.outputs[0], out)], None);
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// `Identity`, and `Dropout` (`dropout`) at inference (its mask all ones).
fn identity_of(cx: &mut Cx<'_>, node: &Node, dropout: bool) -> Lowered {
    if dropout && node.input(2).is_some() && cx.const_ints(node, 2) != Some(vec![0]) {
        return Err("training_mode".into());
    }
    let x = cx.avar(node, 0)?;
    let e = cx.elem(&x);
    chain_to(cx, &x, &node.outputs[0], "Identity", None)?;
    cx.set_elem(&node.outputs[0], e);
    // At inference the mask keeps every element: a constant of ones.
    if dropout && node.has_output(1) && cx.is_used(&node.outputs[1]) {
        let s = cx.shape(&x)?;
        let n = s.iter().try_fold(1usize, |p, &d| {
            usize::try_from(d).ok().and_then(|d| p.checked_mul(d))
        });
        let n = n
            .filter(|&n| n <= 1 << 24)
            .ok_or("a mask output over the symbolic batch dimension")?;
        let m = cx.param(&format!("{}__ones", node.outputs[1]), &s, &vec![1.0; n])?;
        cx.emit("Identity", &[&m], &[(&node.outputs[1], &s)], None);
        cx.set_elem(&node.outputs[1], elem::BOOL);
    }
    Ok(())
}

/// `DepthToSpace` (`to_space`) / `SpaceToDepth`: reshape, transpose,
/// reshape.
fn depth_space(cx: &mut Cx<'_>, node: &Node, to_space: bool) -> Lowered {
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() != 4 || s[1..].iter().any(|&d| d < 0) {
        return Err("needs a 4-D input with static C, H, W".into());
    }
    let b = node.int("blocksize", 0);
    if b < 1 {
        return Err("blocksize".into());
    }
    let (n, c, h, w) = (s[0], s[1], s[2], s[3]);
    // (bounds every product below: c * b * b, h * b, w * b)
    super::dims::dims_product(&[c.max(1), h.max(1), w.max(1), b, b])?;
    let (mid, perm, out): (Vec<i64>, Vec<i64>, Vec<i64>) = if to_space {
        if c % (b * b) != 0 {
            return Err("C not divisible by blocksize²".into());
        }
        let c2 = c / (b * b);
        if node.string("mode", "DCR") == "CRD" {
            (
                vec![n, c2, b, b, h, w],
                vec![0, 1, 4, 2, 5, 3],
                vec![n, c2, h * b, w * b],
            )
        } else {
            (
                vec![n, b, b, c2, h, w],
                vec![0, 3, 4, 1, 5, 2],
                vec![n, c2, h * b, w * b],
            )
        }
    } else {
        if h % b != 0 || w % b != 0 {
            return Err("H or W not divisible by blocksize".into());
        }
        let perm = if node.string("mode", "DCR") == "CRD" {
            vec![0, 1, 3, 5, 2, 4]
        } else {
            vec![0, 3, 5, 1, 2, 4]
        };
        (
            vec![n, c, h / b, b, w / b, b],
            perm,
            vec![n, c * b * b, h / b, w / b],
        )
    };
    let t = cx.reshape(&x, &mid)?;
    let tdims: Vec<i64> = perm.iter().map(|&p| mid[p as usize]).collect();
    let tt = cx.fresh(&x);
    transpose_vars(cx, &t, &tt, &perm, &tdims);
    cx.reshape_to(&tt, &node.outputs[0], &out)
}

/// `Trilu` with a constant `k`.
pub(crate) fn trilu(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let k = match node.input(1) {
        Some(_) => match cx.const_ints(node, 1).and_then(|v| v.first().copied()) {
            Some(k) => k,
            None => return trilu_runtime(cx, node),
        },
        None => 0,
    };
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() < 2 {
        return Err("rank below 2".into());
    }
    let e = cx.elem(&x);
    cx.emit(
        "Trilu",
        &[&x],
        &[(&node.outputs[0], &s)],
        Some(P::TriluParam(TriluParameter {
            k,
            upper: node.int("upper", 1) != 0,
        })),
    );
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// `Trilu` with `k` computed at run time: `Where(j - i >= k, x, 0)` (upper)
/// or `Where(j - i <= k, x, 0)` (lower) over the last two axes.
fn trilu_runtime(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len();
    if r < 2 {
        return Err("rank below 2".into());
    }
    let (rows, cols) = (s[r - 2], s[r - 1]);
    if rows < 0 || cols < 0 {
        return Err("rows or columns on the symbolic batch dimension".into());
    }
    if s.contains(&0) {
        return Err("an empty input with k computed at run time".into());
    }
    let n = usize::try_from(
        rows.checked_mul(cols)
            .ok_or(LowerError::TooLarge("too large"))?,
    )
    .map_err(|e| e.to_string())?;
    let diff: Vec<f64> = (0..n)
        .map(|p| (p % cols as usize) as f64 - (p / cols as usize) as f64)
        .collect();
    let dname = format!("{}__diagonal", node.outputs[0]);
    let d = cx.param(&dname, &[rows, cols], &diff)?;
    let k = cx.avar(node, 1)?;
    if cx.shape(&k)?.iter().product::<i64>() != 1 {
        return Err("k that is not a scalar".into());
    }
    let k = cx.reshape(&k, &[1, 1])?;
    let cmp = if node.int("upper", 1) != 0 {
        "GreaterEqual"
    } else {
        "LessEqual"
    };
    let m = cx.fresh(&d);
    cx.emit(cmp, &[&d, &k], &[(&m, &[rows, cols])], None);
    cx.set_elem(&m, elem::BOOL);
    let m = broadcast_to(cx, &m, &s)?;
    let z = cx.param(&format!("{}__zero", node.outputs[0]), &[1], &[0.0])?;
    let z = broadcast_to(cx, &z, &s)?;
    let e = cx.elem(&x);
    let y = &node.outputs[0];
    cx.emit("Where", &[&m, &x, &z], &[(y, &s)], None);
    cx.set_elem(y, e);
    Ok(())
}

/// `ConstantOfShape` too large to fold: NNabla's `Constant`.
pub(crate) fn constant_of_shape(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let dims = cx
        .const_ints(node, 0)
        .ok_or(LowerError::NotConstant { what: "shape" })?;
    if dims.iter().any(|&d| d < 0) {
        return Err("negative dimension".into());
    }
    super::dims::check_shape(&dims)?;
    let (e, val) = match node.attr("value").and_then(|t| t.t.as_ref()) {
        Some(t) => {
            let c = onnx_format::tensor_from_proto(t, None, &Default::default())
                .map_err(|e| e.to_string())?;
            let v = c
                .to_f64_vec()
                .and_then(|v| v.first().copied())
                .unwrap_or(0.0);
            (t.data_type.unwrap_or(1), v)
        }
        None => (1, 0.0),
    };
    if !matches!(e, 1..=7 | 9 | 12 | 13) || (e != 1 && val.abs() > 16_777_216.0) {
        return Err("a value f32 cannot hold".into());
    }
    cx.emit(
        "Constant",
        &[],
        &[(&node.outputs[0], &dims)],
        Some(P::ConstantParam(ConstantParameter {
            val: val as f32,
            shape: Some(Shape { dim: dims.clone() }),
        })),
    );
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}
