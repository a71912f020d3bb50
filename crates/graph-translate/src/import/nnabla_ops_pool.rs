//! ONNX → NNabla lowerings of pooling: the pooling rows (`MaxPool` and
//! `AveragePool` in [`super::nnabla_ops_nn::pool`]), global pooling, and
//! dilated pooling: NNabla's pooling has no dilation, so an average is a depthwise `Convolution` with the dilation
//! and a constant kernel of `1 / prod(kernel_shape)`, a maximum the
//! `Maximum2` of the strided `Slice` at every kernel offset.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::onnx_graph::{Node, elem};
use super::table::lowerings;

lowerings! { Cx<'_>;
    /// `MaxPool` → `MaxPooling` (or [`dilated_max`]).
    max_pool(cx, node) => super::nnabla_ops_nn::pool(cx, node, true);
    /// `AveragePool` → `AveragePooling` (or [`dilated_average`]).
    average_pool(cx, node) => super::nnabla_ops_nn::pool(cx, node, false);
    /// `GlobalAveragePool` → `Mean`.
    global_average_pool(cx, node) => global_pool(cx, node, false);
    /// `GlobalMaxPool` → `Reshape`, `TopKData`.
    global_max_pool(cx, node) => global_pool(cx, node, true);
}

/// `GlobalAveragePool` / `GlobalMaxPool` (`max`): a mean or max over the
/// spatial axes.
fn global_pool(cx: &mut Cx<'_>, node: &Node, max: bool) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() < 3 {
        return Err("input rank below 3".into());
    }
    let axes: Vec<i64> = (2..s.len() as i64).collect();
    let mut out = s[..2].to_vec();
    out.extend(std::iter::repeat_n(1, s.len() - 2));
    if max {
        return super::nnabla_ops_reduce::extreme(cx, &x, &axes, true, &node.outputs[0], &out);
    }
    let p = P::MeanParam(MeanParameter {
        axes,
        keep_dims: true,
    });
    cx.emit("Mean", &[&x], &[(&node.outputs[0], &out)], Some(p));
    Ok(())
}

/// The output shape of an unpadded dilated pooling whose windows all lie
/// inside the input (with `ceil_mode` only where it gives the floor size).
fn geometry(
    cx: &Cx<'_>,
    node: &Node,
    x: &str,
    k: &[i64],
    st: &[i64],
    dl: &[i64],
) -> Result<Vec<i64>, LowerError> {
    let s = cx.shape(x)?;
    let n = k.len();
    if s.len() != n + 2 || s.iter().any(|&d| d <= 0) {
        return Err("dilations with symbolic dimensions".into());
    }
    let auto = node.string("auto_pad", "NOTSET");
    if node.ints("pads").is_some_and(|p| p.iter().any(|&v| v != 0))
        || (auto != "NOTSET" && auto != "VALID")
    {
        return Err("dilations with padding".into());
    }
    let ceil = node.int("ceil_mode", 0) != 0;
    let mut out = s[..2].to_vec();
    for i in 0..n {
        let eff = dl[i].checked_mul(k[i] - 1).ok_or("kernel")? + 1;
        let span = s[i + 2] - eff;
        if span < 0 || st[i] <= 0 {
            return Err("a dilated window larger than the input".into());
        }
        if ceil && span % st[i] != 0 {
            return Err("dilations with ceil_mode windows that leave the input".into());
        }
        out.push(span / st[i] + 1);
    }
    Ok(out)
}

/// Dilated `MaxPool` (no Indices output): the largest of the strided
/// slices at every kernel offset.
pub(crate) fn dilated_max(
    cx: &mut Cx<'_>,
    node: &Node,
    k: &[i64],
    st: &[i64],
    dl: &[i64],
) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let out = geometry(cx, node, &x, k, st, dl)?;
    let s = cx.shape(&x)?;
    let n = k.len();
    let kn = k
        .iter()
        .try_fold(1i64, |p, &v| p.checked_mul(v))
        .ok_or("kernel")?;
    if kn > 256 {
        return Err("a dilated max kernel of more than 256 positions".into());
    }
    let mut acc: Option<String> = None;
    for p in 0..kn {
        // The kernel offset of position p (last axis fastest).
        let mut rest = p;
        let mut off = vec![0i64; n];
        for i in (0..n).rev() {
            off[i] = rest % k[i];
            rest /= k[i];
        }
        let mut start = vec![0, 0];
        let mut stop = vec![s[0], s[1]];
        let mut step = vec![1, 1];
        for i in 0..n {
            let b = off[i] * dl[i];
            start.push(b);
            stop.push(b + (out[i + 2] - 1) * st[i] + 1);
            step.push(st[i]);
        }
        let y = cx.fresh(&x);
        cx.emit(
            "Slice",
            &[&x],
            &[(&y, &out)],
            Some(P::SliceParam(SliceParameter { start, stop, step })),
        );
        cx.set_elem(&y, elem::FLOAT);
        acc = Some(match acc {
            None => y,
            Some(a) => {
                let last = p + 1 == kn;
                let m = if last {
                    node.outputs[0].clone()
                } else {
                    cx.fresh(&a)
                };
                cx.emit("Maximum2", &[&a, &y], &[(&m, &out)], None);
                cx.set_elem(&m, elem::FLOAT);
                m
            }
        });
    }
    if kn == 1 {
        let a = acc.ok_or("empty kernel")?;
        cx.emit("Identity", &[&a], &[(&node.outputs[0], &out)], None);
        cx.set_elem(&node.outputs[0], elem::FLOAT);
    }
    Ok(())
}

/// Dilated `AveragePool` without padding whose windows all lie inside the
/// input.
pub(crate) fn dilated_average(
    cx: &mut Cx<'_>,
    node: &Node,
    k: &[i64],
    st: &[i64],
    dl: &[i64],
) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let out = geometry(cx, node, &x, k, st, dl)?;
    let s = cx.shape(&x)?;
    let n = k.len();
    let c = s[1];
    let kn = k
        .iter()
        .try_fold(1i64, |p, &v| p.checked_mul(v))
        .ok_or("kernel")?;
    let count = usize::try_from(c.checked_mul(kn).ok_or("kernel")?).map_err(|_| "kernel")?;
    let mut wd = vec![c, 1];
    wd.extend_from_slice(k);
    let w = cx.param(
        &format!("{}__average_kernel", node.outputs[0]),
        &wd,
        &vec![1.0 / kn as f64; count],
    )?;
    let y = &node.outputs[0];
    cx.emit(
        "Convolution",
        &[&x, &w],
        &[(y, &out)],
        Some(P::ConvolutionParam(ConvolutionParameter {
            base_axis: 1,
            pad: Some(Shape { dim: vec![0; n] }),
            stride: Some(Shape { dim: st.to_vec() }),
            dilation: Some(Shape { dim: dl.to_vec() }),
            group: c,
            channel_last: false,
        })),
    );
    cx.set_elem(y, elem::FLOAT);
    Ok(())
}
