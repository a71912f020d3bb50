//! ONNX → NNabla lowerings: reductions, arg-extremes, cumulative sums,
//! resizing and matrix utilities.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{binary_vars, chain, chain_to};
use super::onnx_graph::{Node, elem};
use super::table::lowerings;

/// The reduction axes of a `Reduce*` node (attribute, or input from opset
/// `from_input`); `None` = no-op.
fn reduce_axes(
    cx: &Cx<'_>,
    node: &Node,
    r: usize,
    from_input: i64,
) -> Result<Option<Vec<i64>>, LowerError> {
    let axes = cx.axes(node, from_input)?;
    if axes.is_empty() {
        if node.int("noop_with_empty_axes", 0) != 0 {
            return Ok(None);
        }
        return Ok(Some((0..r as i64).collect()));
    }
    let mut v = Vec::new();
    for a in axes {
        let x = if a < 0 { a + r as i64 } else { a };
        if !(0..r as i64).contains(&x) {
            return Err("axis out of range".into());
        }
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v.sort_unstable();
    Ok(Some(v))
}

/// The reductions ([`reduce`]).
#[derive(Clone, Copy, PartialEq)]
enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    L1,
    L2,
    SumSquare,
    LogSum,
    LogSumExp,
}

lowerings! { Cx<'_>;
    /// `ReduceSum` → `Sum` (axes an input from opset 13).
    reduce_sum(cx, node) => reduce(cx, node, Reduce::Sum, 13);
    /// `ReduceMean` → `Mean`.
    reduce_mean(cx, node) => reduce(cx, node, Reduce::Mean, 18);
    /// `ReduceMax` → [`extreme`].
    reduce_max(cx, node) => reduce(cx, node, Reduce::Max, 18);
    /// `ReduceMin` → [`extreme`].
    reduce_min(cx, node) => reduce(cx, node, Reduce::Min, 18);
    /// `ReduceProd` → `Prod`.
    reduce_prod(cx, node) => reduce(cx, node, Reduce::Prod, 18);
    /// `ReduceL1` → `Abs`, `Sum`.
    reduce_l1(cx, node) => reduce(cx, node, Reduce::L1, 18);
    /// `ReduceL2` → `Mul2`, `Sum`, `PowScalar`.
    reduce_l2(cx, node) => reduce(cx, node, Reduce::L2, 18);
    /// `ReduceSumSquare` → `Mul2`, `Sum`.
    reduce_sum_square(cx, node) => reduce(cx, node, Reduce::SumSquare, 18);
    /// `ReduceLogSum` → `Sum`, `Log`.
    reduce_log_sum(cx, node) => reduce(cx, node, Reduce::LogSum, 18);
    /// `ReduceLogSumExp` → `Exp`, `Sum`, `Log`.
    reduce_log_sum_exp(cx, node) => reduce(cx, node, Reduce::LogSumExp, 18);
    /// `ArgMax` → [`arg`] (largest).
    arg_max(cx, node) => arg(cx, node, true);
    /// `ArgMin` → [`arg`] (smallest).
    arg_min(cx, node) => arg(cx, node, false);
    /// `Resize` → [`resize`].
    resize(cx, node) => resize_of(cx, node, false);
    /// `Upsample` → [`resize`].
    upsample(cx, node) => resize_of(cx, node, true);
}

/// The reduction `op` (`ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare`),
/// its axes an input from opset `from_input`.
fn reduce(cx: &mut Cx<'_>, node: &Node, op: Reduce, from_input: i64) -> Lowered {
    let mut x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let out = node.outputs[0].clone();
    let Some(axes) = reduce_axes(cx, node, s.len(), from_input)? else {
        return chain_to(cx, &x, &out, "Identity", None);
    };
    if axes.iter().any(|&a| s[a as usize] == 0) {
        return Err("a reduction over an empty axis".into());
    }
    let keep = node.int("keepdims", 1) != 0;
    let dims: Vec<i64> = (0..s.len())
        .filter_map(|i| {
            if axes.contains(&(i as i64)) {
                keep.then_some(1)
            } else {
                Some(s[i])
            }
        })
        .collect();
    let sum = |axes| {
        let p = SumParameter {
            axes,
            keep_dims: keep,
        };
        ("Sum", P::SumParam(p))
    };
    let (ty, p) = match op {
        Reduce::Max | Reduce::Min => {
            return extreme(cx, &x, &axes, op == Reduce::Max, &out, &dims);
        }
        Reduce::Mean => (
            "Mean",
            P::MeanParam(MeanParameter {
                axes,
                keep_dims: keep,
            }),
        ),
        Reduce::Prod => (
            "Prod",
            P::ProdParam(ProdParameter {
                axes,
                keep_dims: keep,
            }),
        ),
        Reduce::L1 => {
            x = chain(cx, &x, "Abs", None)?;
            sum(axes)
        }
        Reduce::L2 | Reduce::SumSquare => {
            x = binary_vars(cx, "Mul2", &x, &x.clone(), None, elem::FLOAT)?;
            sum(axes)
        }
        Reduce::LogSumExp => {
            x = chain(cx, &x, "Exp", None)?;
            sum(axes)
        }
        Reduce::Sum | Reduce::LogSum => sum(axes),
    };
    let post = match op {
        Reduce::L2 => Some((
            "PowScalar",
            Some(P::PowScalarParam(PowScalarParameter {
                val: 0.5,
                inplace: false,
            })),
        )),
        Reduce::LogSum | Reduce::LogSumExp => Some(("Log", None)),
        Reduce::Sum
        | Reduce::Mean
        | Reduce::Max
        | Reduce::Min
        | Reduce::Prod
        | Reduce::L1
        | Reduce::SumSquare => None,
    };
    match post {
        None => cx.emit(ty, &[&x], &[(&out, &dims)], Some(p)),
        Some((pty, pp)) => {
            let t = cx.fresh(&x);
            cx.emit(ty, &[&x], &[(&t, &dims)], Some(p));
            chain_to(cx, &t, &out, pty, pp)?;
        }
    }
    Ok(())
}

/// The largest (or smallest) value of `x` over `axes` into `out` (shape
/// `dims`, with or without the reduced axes kept) with `TopKData` (k=1)
/// over the reduced axes moved last and merged: NNabla's `Max`/`Min`
/// start from -1e8/+1e8 and return them for rows whose values all lie
/// beyond (an all -inf row gives -1e8), `TopKData` is exact.
pub(crate) fn extreme(
    cx: &mut Cx<'_>,
    x: &str,
    axes: &[i64],
    largest: bool,
    out: &str,
    dims: &[i64],
) -> Lowered {
    let s = cx.shape(x)?;
    let kept: Vec<i64> = (0..s.len() as i64).filter(|a| !axes.contains(a)).collect();
    let mut n = 1i64;
    for &a in axes {
        let d = s[a as usize];
        if d < 0 {
            return Err(LowerError::AcrossBatch {
                what: "a reduction over",
            });
        }
        n = n
            .checked_mul(d)
            .ok_or(LowerError::TooLarge("too many elements"))?;
    }
    let perm: Vec<i64> = kept.iter().chain(axes).copied().collect();
    let mut x = x.to_string();
    if perm.iter().enumerate().any(|(i, &a)| a != i as i64) {
        let pd: Vec<i64> = perm.iter().map(|&a| s[a as usize]).collect();
        let t = cx.fresh(&x);
        super::nnabla_ops_shape::transpose_vars(cx, &x, &t, &perm, &pd);
        x = t;
    }
    let mut flat: Vec<i64> = kept.iter().map(|&a| s[a as usize]).collect();
    flat.push(n);
    let x = cx.reshape(&x, &flat)?;
    let mut top = flat.clone();
    *top.last_mut().ok_or("rank 0")? = 1;
    let t = cx.fresh(&x);
    cx.emit(
        "TopKData",
        &[&x],
        &[(&t, &top)],
        Some(P::TopKDataParam(TopKDataParameter {
            k: 1,
            abs: false,
            reduce: true,
            base_axis: kept.len() as i64,
            largest,
            with_index: false,
        })),
    );
    cx.reshape_to(&t, out, dims)
}

/// `ArgMax` / `ArgMin`: the index output of `TopKData` (k=1) with the
/// axis moved last (the first index among equal extremes, as NNabla 1.39
/// computes it; its `Max`/`Min` with `only_index` miss extremes beyond
/// ±1e8); `select_last_index` flips the axis and maps `i` to `d - 1 - i`.
fn arg(cx: &mut Cx<'_>, node: &Node, largest: bool) -> Lowered {
    let last = node.int("select_last_index", 0) != 0;
    let mut x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len() as i64;
    let a = node.int("axis", 0);
    let ax = if a < 0 { a + r } else { a };
    if !(0..r).contains(&ax) {
        return Err("axis".into());
    }
    let d = s[ax as usize];
    if d <= 0 {
        return Err(LowerError::needs_shape(
            "an arg-extreme along the symbolic batch or an empty dimension",
        ));
    }
    let keep = node.int("keepdims", 1) != 0;
    let mut dims = s.clone();
    if keep {
        dims[ax as usize] = 1;
    } else {
        dims.remove(ax as usize);
    }
    if last {
        let flipped = cx.fresh(&x);
        let fp = P::FlipParam(FlipParameter { axes: vec![ax] });
        cx.emit("Flip", &[&x], &[(&flipped, &s)], Some(fp));
        x = flipped;
    }
    // The axis last: (kept..., d).
    let perm: Vec<i64> = (0..r).filter(|&i| i != ax).chain([ax]).collect();
    if ax != r - 1 {
        let pd: Vec<i64> = perm.iter().map(|&i| s[i as usize]).collect();
        let t = cx.fresh(&x);
        super::nnabla_ops_shape::transpose_vars(cx, &x, &t, &perm, &pd);
        x = t;
    }
    let mut top: Vec<i64> = perm[..perm.len() - 1]
        .iter()
        .map(|&i| s[i as usize])
        .collect();
    top.push(1);
    let (v, idx) = (cx.fresh(&x), cx.fresh(&x));
    cx.emit(
        "TopKData",
        &[&x],
        &[(&v, &top), (&idx, &top)],
        Some(P::TopKDataParam(TopKDataParameter {
            k: 1,
            abs: false,
            reduce: true,
            base_axis: r - 1,
            largest,
            with_index: true,
        })),
    );
    let out = node.outputs[0].clone();
    if last {
        let t = cx.reshape(&idx, &dims)?;
        let rp = P::RSubScalarParam(RSubScalarParameter {
            val: (d - 1) as f64,
        });
        cx.emit("RSubScalar", &[&t], &[(&out, &dims)], Some(rp));
    } else {
        cx.reshape_to(&idx, &out, &dims)?;
    }
    cx.set_elem(&out, 7);
    Ok(())
}

/// `CumSum` with a constant axis.
pub(crate) fn cumsum(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let ax = cx
        .const_ints(node, 1)
        .and_then(|v| v.first().copied())
        .ok_or(LowerError::NotConstant { what: "axis" })?;
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len() as i64;
    let ax = if ax < 0 { ax + r } else { ax };
    if !(0..r).contains(&ax) {
        return Err("axis".into());
    }
    cx.emit(
        "CumSum",
        &[&x],
        &[(&node.outputs[0], &s)],
        Some(P::CumsumParam(CumSumParameter {
            axis: ax,
            exclusive: node.int("exclusive", 0) != 0,
            reverse: node.int("reverse", 0) != 0,
        })),
    );
    Ok(())
}

/// `Resize` and `Upsample` (nearest; Resize-10 enlarging only) with
/// constant scales or sizes: NNabla's `ONNXResize`.
fn resize_of(cx: &mut Cx<'_>, node: &Node, upsample: bool) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.iter().any(|&d| d < 0) {
        return Err("symbolic input dimensions".into());
    }
    let r = s.len();
    let mode = node.string("mode", "nearest");
    let (roi, scales, sizes, ctm, nearest) = if upsample || cx.opset < 11 {
        // Upsample and Resize-10: the input's coordinate by `asymmetric`,
        // nearest by floor (onnxruntime's Resize-10 rounds up when it
        // shrinks, so scales below 1 are refused there).
        if mode != "nearest" {
            return Err(LowerError::Other(format!(
                "mode={mode:?} (nearest only before Resize-11)"
            )));
        }
        let sc: Vec<f64> = if cx.opset >= 9 {
            cx.const_floats(node, 1)
                .ok_or(LowerError::NotConstant { what: "scales" })?
        } else {
            node.floats("scales")
                .unwrap_or_default()
                .iter()
                .map(|&f| f64::from(f))
                .collect()
        };
        if !upsample && sc.iter().any(|&f| f < 1.0) {
            return Err(LowerError::Other(format!(
                "scales {sc:?} below 1 at opset 10 (onnxruntime rounds up when shrinking)"
            )));
        }
        (
            vec![],
            sc,
            vec![],
            "asymmetric".to_string(),
            "floor".to_string(),
        )
    } else {
        resize_inputs(cx, node, &s)?
    };
    let sizes: Vec<i64> = sizes.iter().map(|&v| v as i64).collect();
    let out: Vec<i64> = if !sizes.is_empty() {
        if sizes.len() != r {
            return Err("sizes do not fit the rank".into());
        }
        sizes.clone()
    } else {
        if scales.len() != r {
            return Err("scales do not fit the rank".into());
        }
        s.iter()
            .zip(&scales)
            .map(|(&d, &f)| ((d as f64) * f).floor() as i64)
            .collect()
    };
    if out.iter().any(|&d| !(1..=1 << 31).contains(&d)) {
        return Err(LowerError::Other(format!(
            "output shape {out:?} (every dimension 1 to 2^31)"
        )));
    }
    cx.emit(
        "ONNXResize",
        &[&x],
        &[(&node.outputs[0], &out)],
        Some(P::OnnxResizeParam(OnnxResizeParameter {
            roi: roi.iter().map(|&v| v as f32).collect(),
            scales: if sizes.is_empty() {
                scales.iter().map(|&v| v as f32).collect()
            } else {
                vec![]
            },
            sizes,
            mode,
            coordinate_transformation_mode: ctm,
            cubic_coeff_a: node.float("cubic_coeff_a", -0.75),
            exclude_outside: node.int("exclude_outside", 0),
            extrapolation_value: node.float("extrapolation_value", 0.0),
            nearest_mode: nearest,
        })),
    );
    Ok(())
}

/// The ONNX type of a resize's parameters: (roi, scales, sizes,
/// coordinate_transformation_mode, nearest_mode).
type ResizeInputs = (Vec<f64>, Vec<f64>, Vec<f64>, String, String);

/// `Resize`'s constant roi, scales and sizes over every axis of an input of
/// shape `s`: the `axes` attribute expanded (scale 1, the input's size, roi
/// 0 to 1 on the others), and `keep_aspect_ratio_policy` turned into the
/// one scale it picks when NNabla's output size from it (floor) is the one
/// ONNX takes (round).
fn resize_inputs(cx: &Cx<'_>, node: &Node, s: &[i64]) -> Result<ResizeInputs, LowerError> {
    let r = s.len();
    if node.int("antialias", 0) != 0 {
        return Err("antialias=1 (NNabla's ONNXResize does not antialias)".into());
    }
    let ctm = node.string("coordinate_transformation_mode", "half_pixel");
    if !matches!(
        ctm.as_str(),
        "half_pixel" | "pytorch_half_pixel" | "align_corners" | "asymmetric" | "tf_crop_and_resize"
    ) {
        return Err(LowerError::Other(format!(
            "coordinate_transformation_mode={ctm:?} (not one of NNabla's ONNXResize)"
        )));
    }
    let roi = match node.input(1) {
        Some(_) => cx
            .const_floats(node, 1)
            .ok_or(LowerError::NotConstant { what: "roi" })?,
        None => vec![],
    };
    let scales = match node.input(2) {
        Some(_) => cx
            .const_floats(node, 2)
            .ok_or(LowerError::NotConstant { what: "scales" })?,
        None => vec![],
    };
    let sizes = match node.input(3) {
        Some(_) => cx
            .const_ints(node, 3)
            .ok_or(LowerError::NotConstant { what: "sizes" })?,
        None => vec![],
    };
    let axes: Vec<usize> = match node.ints("axes") {
        Some(a) => a
            .iter()
            .map(|&v| {
                let v = if v < 0 { v + r as i64 } else { v };
                usize::try_from(v)
                    .ok()
                    .filter(|&v| v < r)
                    .ok_or_else(|| format!("axes {a:?} outside the rank {r}"))
            })
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    let n = axes.len();
    let mut seen = vec![false; r];
    for &a in &axes {
        if std::mem::replace(&mut seen[a], true) {
            return Err("repeated axes".into());
        }
    }
    let roi = if roi.is_empty() || ctm != "tf_crop_and_resize" {
        vec![]
    } else if roi.len() == 2 * n {
        let mut full: Vec<f64> = (0..2 * r).map(|i| if i < r { 0.0 } else { 1.0 }).collect();
        for (k, &a) in axes.iter().enumerate() {
            full[a] = roi[k];
            full[r + a] = roi[n + k];
        }
        full
    } else {
        return Err("roi does not fit the axes".into());
    };
    let mut scales_full = vec![];
    let mut sizes_full = vec![];
    if !sizes.is_empty() {
        if sizes.len() != n {
            return Err("sizes do not fit the axes".into());
        }
        let policy = node.string("keep_aspect_ratio_policy", "stretch");
        if policy == "stretch" {
            sizes_full = s.iter().map(|&d| d as f64).collect();
            for (k, &a) in axes.iter().enumerate() {
                sizes_full[a] = sizes[k] as f64;
            }
        } else {
            let ratios = axes
                .iter()
                .zip(&sizes)
                .map(|(&a, &z)| z as f64 / s[a] as f64);
            let scale = match policy.as_str() {
                "not_larger" => ratios.fold(f64::INFINITY, f64::min),
                "not_smaller" => ratios.fold(0.0, f64::max),
                p => {
                    return Err(LowerError::attr(
                        "keep_aspect_ratio_policy",
                        format!("{p:?}"),
                    ));
                }
            };
            // NNabla takes the scale as f32 and sizes the output by floor.
            let scale = f64::from(scale as f32);
            scales_full = vec![1.0; r];
            for &a in &axes {
                let v = s[a] as f64 * scale;
                if v.floor() != v.round_ties_even() {
                    return Err(LowerError::Other(format!(
                        "keep_aspect_ratio_policy={policy:?} giving an output size NNabla \
                         (floor of size x scale) does not (round)"
                    )));
                }
                scales_full[a] = scale;
            }
        }
    } else {
        if scales.len() != n {
            return Err("scales do not fit the axes".into());
        }
        scales_full = vec![1.0; r];
        for (k, &a) in axes.iter().enumerate() {
            scales_full[a] = scales[k];
        }
        // With scales ONNX's align_corners maps by `size x scale` unrounded,
        // NNabla by the output size.
        if ctm == "align_corners"
            && s.iter()
                .zip(&scales_full)
                .any(|(&d, &f)| (d as f64 * f).fract() != 0.0)
        {
            return Err(
                "coordinate_transformation_mode=\"align_corners\" with scales that do not \
                 give whole output sizes (ONNX maps by the unrounded size x scale, NNabla by \
                 the output size)"
                    .into(),
            );
        }
    }
    Ok((
        roi,
        scales_full,
        sizes_full,
        ctm,
        node.string("nearest_mode", "round_prefer_floor"),
    ))
}

/// `Einsum` without ellipses: NNabla's `Einsum`, the output shape read
/// from the equation.
pub(crate) fn einsum(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let eq: String = node
        .string("equation", "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if eq.contains("...") {
        return Err("ellipsis in the equation".into());
    }
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    let mut ins = Vec::new();
    let mut size = std::collections::BTreeMap::new();
    let mut count = std::collections::BTreeMap::new();
    for (i, t) in terms.iter().enumerate() {
        let v = cx.fvar(node, i)?;
        let s = cx.shape(&v)?;
        if s.len() != t.chars().count() || s.iter().any(|&d| d < 0) {
            return Err("equation does not fit the inputs".into());
        }
        for (c, &d) in t.chars().zip(&s) {
            if !c.is_ascii_alphabetic() {
                return Err("equation".into());
            }
            if let Some(&old) = size.get(&c)
                && old != d
            {
                return Err("equation sizes differ".into());
            }
            size.insert(c, d);
            *count.entry(c).or_insert(0) += 1;
        }
        ins.push(v);
    }
    if ins.len() != node.inputs.iter().filter(|i| !i.is_empty()).count() {
        return Err("equation does not fit the inputs".into());
    }
    let out_letters: String = match rhs {
        Some(r) => r,
        None => count
            .iter()
            .filter(|(_, n)| **n == 1)
            .map(|(c, _)| *c)
            .collect(),
    };
    let dims: Vec<i64> = out_letters
        .chars()
        .map(|c| size.get(&c).copied().ok_or("equation"))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    cx.emit(
        "Einsum",
        &refs,
        &[(&node.outputs[0], &dims)],
        Some(P::EinsumParam(EinsumParameter { equation: eq })),
    );
    Ok(())
}

/// `Det` on `(..., n, n)`: NNabla's `BatchDet` on `(B, n, n)`.
pub(crate) fn det(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len();
    if r < 2 || s.iter().any(|&d| d < 0) || s[r - 1] != s[r - 2] {
        return Err("input not (..., n, n) with static dimensions".into());
    }
    let b: i64 = s[..r - 2].iter().product();
    let x3 = cx.reshape(&x, &[b, s[r - 2], s[r - 1]])?;
    let y = cx.fresh(&x3);
    cx.emit("BatchDet", &[&x3], &[(&y, &[b])], None);
    cx.reshape_to(&y, &node.outputs[0], &s[..r - 2])
}

/// `EyeLike` (2-D).
pub(crate) fn eye_like(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() != 2 || s.iter().any(|&d| d < 0) {
        return Err("input not 2-D with static dimensions".into());
    }
    let e = node.int("dtype", i64::from(cx.elem(&x))) as i32;
    if !matches!(e, 1..=7 | 9 | 12 | 13) {
        return Err("dtype".into());
    }
    cx.emit(
        "EyeLike",
        &[&x],
        &[(&node.outputs[0], &s)],
        Some(P::EyeLikeParam(EyeLikeParameter {
            k: node.int("k", 0),
        })),
    );
    cx.set_elem(&node.outputs[0], e);
    Ok(())
}

/// `LpPool`: `(Σ |x|^p)^(1/p)` over each window, as an average pool of
/// `|x|^p` counting the zero padding, times the window size.
pub(crate) fn lp_pool(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    use onnx_format::proto::{AttributeProto, attribute_proto::AttributeType};
    let p = node.int("p", 2);
    if p < 1 {
        return Err(LowerError::attr("p", format!("{p}")));
    }
    let k = node.ints("kernel_shape").ok_or(LowerError::Missing {
        what: "kernel_shape",
    })?;
    let window = super::dims::dims_product(&k)?;
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let a = cx.fresh(&x);
    cx.emit("Abs", &[&x], &[(&a, &s)], None);
    let pw = cx.fresh(&x);
    let pp = P::PowScalarParam(PowScalarParameter {
        val: p as f64,
        inplace: false,
    });
    cx.emit("PowScalar", &[&a], &[(&pw, &s)], Some(pp));
    let mut avg = node.clone();
    avg.op = "AveragePool".into();
    avg.inputs = vec![pw.clone()];
    let pooled = cx.fresh(&x);
    avg.outputs = vec![pooled.clone()];
    avg.attrs.retain(|a| a.name.as_deref() != Some("p"));
    avg.attrs.push(AttributeProto {
        name: Some("count_include_pad".into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(1),
        ..Default::default()
    });
    super::nnabla_ops_nn::pool(cx, &avg, false)?;
    let ps = cx.shape(&pooled)?;
    let sum = cx.fresh(&x);
    let mp = P::MulScalarParam(MulScalarParameter {
        val: window as f64,
        inplace: false,
    });
    cx.emit("MulScalar", &[&pooled], &[(&sum, &ps)], Some(mp));
    let rp = P::PowScalarParam(PowScalarParameter {
        val: 1.0 / p as f64,
        inplace: false,
    });
    cx.emit("PowScalar", &[&sum], &[(&node.outputs[0], &ps)], Some(rp));
    Ok(())
}
