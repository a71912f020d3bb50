//! ONNX → NNabla lowering of dilated `AveragePool`: NNabla's pooling has
//! no dilation, so the average is a depthwise `Convolution` with the
//! dilation and a constant kernel of `1 / prod(kernel_shape)`.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::nnabla_cx::{Cx, Lowered};
use super::onnx_graph::{Node, elem};

/// Dilated `AveragePool` without padding whose windows all lie inside the
/// input (with `ceil_mode` only where it gives the same size as floor).
pub(crate) fn dilated_average(
    cx: &mut Cx<'_>,
    node: &Node,
    k: &[i64],
    st: &[i64],
    dl: &[i64],
) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let n = k.len();
    if s.len() != n + 2 || s.iter().any(|&d| d <= 0) {
        return Err("dilations with symbolic dimensions".into());
    }
    if node.ints("pads").is_some_and(|p| p.iter().any(|&v| v != 0))
        || node.string("auto_pad", "NOTSET") != "NOTSET"
            && node.string("auto_pad", "NOTSET") != "VALID"
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
    let c = s[1];
    let kn: i64 = k.iter().product();
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
