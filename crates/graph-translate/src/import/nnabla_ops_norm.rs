//! ONNX → NNabla lowerings: normalisations (batch, instance, layer,
//! group, RMS, Lp, mean-variance) and softmax.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{add_scalar, binary_vars, chain, chain_to};
use super::onnx_graph::{Node, elem};
use super::table::lowerings;

lowerings! { Cx<'_>;
    /// `Softmax` → `Softmax`.
    softmax(cx, node) => softmax_of(cx, node, false);
    /// `LogSoftmax` → `LogSoftmax`.
    log_softmax(cx, node) => softmax_of(cx, node, true);
}

/// A per-channel parameter input reshaped to `[1, C, 1, ...]` of rank `r`.
fn channel_param(cx: &mut Cx<'_>, node: &Node, i: usize, r: usize) -> Result<String, LowerError> {
    let v = cx.fvar(node, i)?;
    let s = cx.shape(&v)?;
    let c: i64 = s.iter().product();
    let mut d = vec![1i64; r];
    d[1] = c;
    to_dims(cx, &v, &d)
}

/// `v` (a parameter or variable) with dimensions `d` (same element count).
fn to_dims(cx: &mut Cx<'_>, v: &str, d: &[i64]) -> Result<String, LowerError> {
    if cx.shape(v)? == d {
        return Ok(v.to_string());
    }
    cx.reshape(v, d)
}

/// `BatchNormalization` at inference.
pub(crate) fn batch_norm(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    if node.outputs.iter().skip(1).any(|o| !o.is_empty()) {
        return Err("training outputs".into());
    }
    if node.int("training_mode", 0) != 0 {
        return Err("training_mode=1".into());
    }
    if cx.opset < 9 && node.int("spatial", 1) != 1 {
        return Err("spatial=0".into());
    }
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() < 2 {
        return Err("input rank below 2".into());
    }
    let r = s.len();
    let gamma = channel_param(cx, node, 1, r)?;
    let beta = channel_param(cx, node, 2, r)?;
    let mean = channel_param(cx, node, 3, r)?;
    let var = channel_param(cx, node, 4, r)?;
    cx.emit(
        "BatchNormalization",
        &[&x, &beta, &gamma, &mean, &var],
        &[(&node.outputs[0], &s)],
        Some(P::BatchNormalizationParam(BatchNormalizationParameter {
            axes: vec![1],
            decay_rate: node.float("momentum", 0.9),
            eps: node.float("epsilon", 1e-5),
            batch_stat: false,
            no_scale: false,
            no_bias: false,
        })),
    );
    Ok(())
}

/// `InstanceNormalization`.
pub(crate) fn instance_norm(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() < 3 {
        return Err("input rank below 3".into());
    }
    let gamma = channel_param(cx, node, 1, s.len())?;
    let beta = channel_param(cx, node, 2, s.len())?;
    cx.emit(
        "InstanceNormalization",
        &[&x, &beta, &gamma],
        &[(&node.outputs[0], &s)],
        Some(P::InstanceNormalizationParam(
            InstanceNormalizationParameter {
                channel_axis: 1,
                batch_axis: vec![0],
                eps: node.float("epsilon", 1e-5),
                no_scale: false,
                no_bias: false,
            },
        )),
    );
    Ok(())
}

/// `LayerNormalization` (opset 17) over the axes from `axis` on.
pub(crate) fn layer_norm(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len();
    let a = node.int("axis", -1);
    let ax = if a < 0 { a + r as i64 } else { a };
    if !(0..r as i64).contains(&ax) {
        return Err("axis".into());
    }
    let ax = ax as usize;
    if s[ax..].iter().any(|&d| d < 0) {
        return Err("symbolic normalized dimension".into());
    }
    let mut pd = vec![1i64; ax];
    pd.extend_from_slice(&s[ax..]);
    let fit = |cx: &mut Cx<'_>, i: usize| -> Result<String, LowerError> {
        let v = cx.fvar(node, i)?;
        let vs = cx.shape(&v)?;
        if vs.iter().product::<i64>() != s[ax..].iter().product::<i64>() {
            return Err("scale/bias broadcast".into());
        }
        to_dims(cx, &v, &pd)
    };
    let gamma = fit(cx, 1)?;
    let beta = match node.input(2) {
        Some(_) => fit(cx, 2)?,
        None => cx.param(
            &format!("{}__zero_bias", node.outputs[0]),
            &pd,
            &super::zeros("bias", &pd)?,
        )?,
    };
    cx.emit(
        "LayerNormalization",
        &[&x, &beta, &gamma],
        &[(&node.outputs[0], &s)],
        Some(P::LayerNormalizationParam(LayerNormalizationParameter {
            batch_axis: (0..ax as i64).collect(),
            eps: node.float("epsilon", 1e-5),
            no_scale: false,
            no_bias: false,
        })),
    );
    if node.has_output(1) || node.has_output(2) {
        layer_norm_stats(cx, node, ax)?;
    }
    Ok(())
}

/// `Softmax` / `LogSoftmax` (`log`; before opset 13 over the flattened
/// trailing axes, a reshape around a softmax on axis 1).
fn softmax_of(cx: &mut Cx<'_>, node: &Node, log: bool) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len() as i64;
    let a = node.int("axis", if cx.opset >= 13 { -1 } else { 1 });
    let ax = if a < 0 { a + r } else { a };
    if !(0..r).contains(&ax) {
        return Err("axis".into());
    }
    let ty = if log { "LogSoftmax" } else { "Softmax" };
    let param = |axis: i64| {
        Some(if log {
            P::LogSoftmaxParam(LogSoftmaxParameter { axis })
        } else {
            P::SoftmaxParam(SoftmaxParameter { axis })
        })
    };
    let out = node.outputs[0].clone();
    if cx.opset >= 13 || ax == r - 1 {
        cx.emit(ty, &[&x], &[(&out, &s)], param(ax));
        return Ok(());
    }
    let axu = ax as usize;
    if s[axu..].iter().any(|&d| d < 0) || (axu == 0 && s[0] < 0) {
        return Err("flattened softmax over the symbolic batch".into());
    }
    let outer = if s[..axu].iter().any(|&d| d < 0) {
        -1
    } else {
        s[..axu].iter().product()
    };
    let inner: i64 = s[axu..].iter().product();
    let t = cx.reshape(&x, &[outer, inner])?;
    let t2 = cx.fresh(&t);
    cx.emit(ty, &[&t], &[(&t2, &[outer, inner])], param(1));
    cx.reshape_to(&t2, &out, &s)
}

/// `x` reduced by `Mean` over `axes`, dimensions kept.
fn mean_keep(cx: &mut Cx<'_>, x: &str, axes: &[i64]) -> Result<String, LowerError> {
    let s = cx.shape(x)?;
    let d: Vec<i64> = (0..s.len() as i64)
        .map(|i| if axes.contains(&i) { 1 } else { s[i as usize] })
        .collect();
    let y = cx.fresh(x);
    cx.emit(
        "Mean",
        &[x],
        &[(&y, &d)],
        Some(P::MeanParam(MeanParameter {
            axes: axes.to_vec(),
            keep_dims: true,
        })),
    );
    Ok(y)
}

/// `1 / sqrt(v + eps)`.
fn inv_std(cx: &mut Cx<'_>, v: &str, eps: f64, out: Option<&str>) -> Result<String, LowerError> {
    let t = chain(cx, v, "AddScalar", add_scalar(eps))?;
    let t = chain(
        cx,
        &t,
        "PowScalar",
        Some(P::PowScalarParam(PowScalarParameter {
            val: -0.5,
            inplace: false,
        })),
    )?;
    match out {
        Some(o) => {
            chain_to(cx, &t, o, "Identity", None)?;
            Ok(o.to_string())
        }
        None => Ok(t),
    }
}

/// `LayerNormalization`'s optional `Mean` and `InvStdDev` outputs.
pub(crate) fn layer_norm_stats(cx: &mut Cx<'_>, node: &Node, ax: usize) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let r = cx.shape(&x)?.len() as i64;
    let axes: Vec<i64> = (ax as i64..r).collect();
    let m = mean_keep(cx, &x, &axes)?;
    if node.has_output(1) {
        chain_to(cx, &m, &node.outputs[1], "Identity", None)?;
    }
    if node.has_output(2) {
        let d = binary_vars(cx, "Sub2", &x, &m, None, elem::FLOAT)?;
        let sq = binary_vars(cx, "Mul2", &d, &d, None, elem::FLOAT)?;
        let v = mean_keep(cx, &sq, &axes)?;
        let eps = f64::from(node.float("epsilon", 1e-5));
        inv_std(cx, &v, eps, Some(&node.outputs[2]))?;
    }
    Ok(())
}

/// `RMSNormalization` (opset 23): `x / sqrt(mean(x²) + eps) * scale`.
pub(crate) fn rms_norm(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len() as i64;
    let a = node.int("axis", -1);
    let ax = if a < 0 { a + r } else { a };
    if !(0..r).contains(&ax) {
        return Err("axis".into());
    }
    let axes: Vec<i64> = (ax..r).collect();
    let sq = binary_vars(cx, "Mul2", &x, &x, None, elem::FLOAT)?;
    let m = mean_keep(cx, &sq, &axes)?;
    let inv = inv_std(cx, &m, f64::from(node.float("epsilon", 1e-5)), None)?;
    let n = binary_vars(cx, "Mul2", &x, &inv, None, elem::FLOAT)?;
    let scale = cx.fvar(node, 1)?;
    let out = node.outputs[0].clone();
    binary_vars(cx, "Mul2", &n, &scale, Some(&out), elem::FLOAT)?;
    Ok(())
}

/// `GroupNormalization` (scale and bias per channel, or per group when
/// constant).
pub(crate) fn group_norm(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() < 3 || s[1] < 0 {
        return Err("input rank below 3".into());
    }
    let g = node.int("num_groups", 0);
    let c = s[1];
    if g < 1 || c % g != 0 {
        return Err("num_groups does not divide the channels".into());
    }
    let mut d = vec![1i64; s.len()];
    d[1] = c;
    let per_channel = |cx: &mut Cx<'_>, i: usize| -> Result<String, LowerError> {
        let n = node.input(i).ok_or("scale/bias missing")?;
        let sh = cx.shape(n)?;
        let len: i64 = sh.iter().product();
        if len == c {
            let v = cx.fvar(node, i)?;
            return to_dims(cx, &v, &d);
        }
        let k = cx.konst(n).cloned().ok_or(LowerError::NotConstant {
            what: "per-group scale",
        })?;
        if len != g {
            return Err("scale/bias size".into());
        }
        let v = k.values();
        let rep: Vec<f64> = (0..c as usize).map(|j| v[j / (c / g) as usize]).collect();
        cx.param(&format!("{n}__per_channel"), &d, &rep)
    };
    let gamma = per_channel(cx, 1)?;
    let beta = per_channel(cx, 2)?;
    cx.emit(
        "GroupNormalization",
        &[&x, &beta, &gamma],
        &[(&node.outputs[0], &s)],
        Some(P::GroupNormalizationParam(GroupNormalizationParameter {
            num_groups: g,
            channel_axis: 1,
            batch_axis: vec![0],
            eps: node.float("epsilon", 1e-5),
            no_scale: false,
            no_bias: false,
        })),
    );
    Ok(())
}

/// `LpNormalization` (p = 1 or 2) along one axis.
pub(crate) fn lp_norm(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let r = s.len() as i64;
    let a = node.int("axis", -1);
    let ax = if a < 0 { a + r } else { a };
    if !(0..r).contains(&ax) {
        return Err("axis".into());
    }
    let p = node.int("p", 2);
    let t = match p {
        1 => chain(cx, &x, "Abs", None)?,
        2 => binary_vars(cx, "Mul2", &x, &x, None, elem::FLOAT)?,
        _ => {
            return Err(LowerError::attr("p", format!("{p}")));
        }
    };
    let mut d = s.clone();
    d[ax as usize] = 1;
    let sum = cx.fresh(&t);
    cx.emit(
        "Sum",
        &[&t],
        &[(&sum, &d)],
        Some(P::SumParam(SumParameter {
            axes: vec![ax],
            keep_dims: true,
        })),
    );
    let norm = if p == 2 {
        chain(
            cx,
            &sum,
            "PowScalar",
            Some(P::PowScalarParam(PowScalarParameter {
                val: 0.5,
                inplace: false,
            })),
        )?
    } else {
        sum
    };
    // A zero norm divides by 1 (the ONNX reference leaves those zeros).
    let zero = chain(
        cx,
        &norm,
        "EqualScalar",
        Some(P::EqualScalarParam(EqualScalarParameter { val: 0.0 })),
    )?;
    let norm = binary_vars(cx, "Add2", &norm, &zero, None, elem::FLOAT)?;
    let out = node.outputs[0].clone();
    binary_vars(cx, "Div2", &x, &norm, Some(&out), elem::FLOAT)?;
    Ok(())
}

/// `MeanVarianceNormalization`: `(x - mean) / sqrt(var + 1e-9)` over `axes`.
pub(crate) fn mvn(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let r = cx.shape(&x)?.len() as i64;
    let mut axes: Vec<i64> = node
        .ints("axes")
        .unwrap_or_else(|| vec![0, 2, 3])
        .iter()
        .map(|&a| if a < 0 { a + r } else { a })
        .collect();
    axes.sort_unstable();
    if axes.iter().any(|&a| !(0..r).contains(&a)) {
        return Err("axes".into());
    }
    let m = mean_keep(cx, &x, &axes)?;
    let d = binary_vars(cx, "Sub2", &x, &m, None, elem::FLOAT)?;
    let sq = binary_vars(cx, "Mul2", &d, &d, None, elem::FLOAT)?;
    let v = mean_keep(cx, &sq, &axes)?;
    let inv = inv_std(cx, &v, 1e-9, None)?;
    let out = node.outputs[0].clone();
    binary_vars(cx, "Mul2", &d, &inv, Some(&out), elem::FLOAT)?;
    Ok(())
}
