//! ONNX → NNabla lowerings: the losses `NegativeLogLikelihoodLoss` and
//! `SoftmaxCrossEntropyLoss` (`LogSoftmax` over the classes, then the
//! former), with run-time targets, class weights and `ignore_index`.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{binary_vars, chain, mul_scalar};
use super::nnabla_ops_index::element_index;
use super::onnx_graph::{Node, elem};

fn reduce_all(cx: &mut Cx<'_>, ty: &str, x: &str, out: Option<&str>) -> Result<String, LowerError> {
    let r = cx.shape(x)?.len() as i64;
    let y = out.map_or_else(|| cx.fresh(x), str::to_string);
    let axes: Vec<i64> = (0..r).collect();
    let p = if ty == "Mean" {
        P::MeanParam(MeanParameter {
            axes,
            keep_dims: false,
        })
    } else {
        P::SumParam(SumParameter {
            axes,
            keep_dims: false,
        })
    };
    cx.emit(ty, &[x], &[(&y, &[])], Some(p));
    cx.set_elem(&y, elem::FLOAT);
    Ok(y)
}

/// The negative log-likelihood of `logp` (`(N, C, d...)`, a variable) at
/// the targets of input 1, weighted by input 2, into output 0.
fn nll(cx: &mut Cx<'_>, node: &Node, logp: &str) -> Lowered {
    let reduction = node.string("reduction", "mean");
    if !matches!(reduction.as_str(), "none" | "sum" | "mean") {
        return Err(LowerError::attr("reduction", format!("{reduction:?}")));
    }
    let s = cx.shape(logp)?;
    if s.len() < 2 || s.iter().any(|&d| d <= 0) {
        return Err("scores of rank below 2 or with a symbolic dimension".into());
    }
    let tname = node.input(1).ok_or(LowerError::missing("target"))?;
    let e = cx.elem(tname);
    if !matches!(e, 6 | 7) {
        return Err(LowerError::Other(format!(
            "{} target",
            onnx_format::dtype::onnx_name(e)
        )));
    }
    let mut tshape = vec![s[0]];
    tshape.extend_from_slice(&s[2..]);
    if cx.shape(tname)? != tshape {
        return Err("a target of another shape than (N, d1, ...)".into());
    }
    let t = cx.var(tname)?;
    // Ignored targets pick class 0 and weigh 0.
    let mask = match node.attr("ignore_index").and_then(|a| a.i) {
        Some(ii) => Some(chain(
            cx,
            &t,
            "NotEqualScalar",
            Some(P::NotEqualScalarParam(NotEqualScalarParameter {
                val: ii as f64,
            })),
        )?),
        None => None,
    };
    let ts = match &mask {
        Some(m) => binary_vars(cx, "Mul2", &t, m, None, elem::INT64)?,
        None => t,
    };
    // logp[n, ts[n, d...], d...] with GatherNd on the element index array.
    let mut d1 = vec![s[0], 1];
    d1.extend_from_slice(&s[2..]);
    let t1 = cx.reshape(&ts, &d1)?;
    let full = element_index(cx, &t1, s.len(), 1)?;
    let picked = cx.fresh(logp);
    cx.emit("GatherNd", &[logp, &full], &[(&picked, &d1)], None);
    let picked = cx.reshape(&picked, &tshape)?;
    let w = match node.input(2) {
        Some(_) => {
            let w = cx.fvar(node, 2)?;
            if cx.shape(&w)? != [s[1]] {
                return Err("class weights of another shape than (C)".into());
            }
            let y = cx.fresh(&w);
            cx.emit(
                "Gather",
                &[&w, &ts],
                &[(&y, &tshape)],
                Some(P::GatherParam(GatherParameter {
                    axis: 0,
                    batch_dims: 0,
                })),
            );
            Some(match &mask {
                Some(m) => binary_vars(cx, "Mul2", &y, m, None, elem::FLOAT)?,
                None => y,
            })
        }
        None => mask,
    };
    let neg = chain(cx, &picked, "MulScalar", mul_scalar(-1.0))?;
    let out = node.outputs[0].clone();
    let last = reduction == "none";
    let loss = match &w {
        Some(w) => binary_vars(
            cx,
            "Mul2",
            &neg,
            w,
            last.then_some(out.as_str()),
            elem::FLOAT,
        )?,
        None if last => {
            cx.reshape_to(&neg, &out, &tshape)?;
            out.clone()
        }
        None => neg,
    };
    match (reduction.as_str(), &w) {
        ("none", _) => {}
        ("sum", _) => {
            reduce_all(cx, "Sum", &loss, Some(&out))?;
        }
        (_, None) => {
            reduce_all(cx, "Mean", &loss, Some(&out))?;
        }
        (_, Some(w)) => {
            let num = reduce_all(cx, "Sum", &loss, None)?;
            let den = reduce_all(cx, "Sum", w, None)?;
            cx.emit("Div2", &[&num, &den], &[(&out, &[])], None);
        }
    }
    cx.set_elem(&out, elem::FLOAT);
    Ok(())
}

/// `NegativeLogLikelihoodLoss`.
pub(crate) fn nll_loss(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let x = cx.fvar(node, 0)?;
    nll(cx, node, &x)
}

/// `SoftmaxCrossEntropyLoss`: `LogSoftmax` over axis 1 (the optional
/// `log_prob` output), then the negative log-likelihood.
pub(crate) fn softmax_cross_entropy(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() < 2 {
        return Err("scores of rank below 2".into());
    }
    let lp = if node.has_output(1) {
        node.outputs[1].clone()
    } else {
        cx.fresh(&x)
    };
    cx.emit(
        "LogSoftmax",
        &[&x],
        &[(&lp, &s)],
        Some(P::LogSoftmaxParam(LogSoftmaxParameter { axis: 1 })),
    );
    cx.set_elem(&lp, elem::FLOAT);
    nll(cx, node, &lp)
}
