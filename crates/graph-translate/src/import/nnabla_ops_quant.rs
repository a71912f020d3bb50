//! ONNX → NNabla lowerings of linear quantisation (their rows:
//! `nnabla_table/quantization.rs`): `QuantizeLinear`
//! and `DequantizeLinear` with constant scales and zero points become
//! NNabla's functions of the same names. NNabla keeps the quantised values
//! in float arrays; the values are the same.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::onnx_graph::{Node, elem};

/// ONNX element types of 8-bit integers.
const UINT8: i32 = 2;
const INT8: i32 = 3;
/// numpy's type numbers, which NNabla's `dtype` parameter holds.
const NPY_INT8: i64 = 1;
const NPY_UINT8: i64 = 2;

/// A parameter's dimensions and values.
type Laid = (Vec<i64>, Vec<f64>);

/// The constant `scale` or `zero_point` input `i` of `node` laid out for
/// NNabla's broadcasting over `x` of shape `s`: a scalar as `[1, ..]`, a
/// vector along `axis` as `[1, .., C, .., 1]`, a blocked one (`block_size`)
/// repeated to the shape of `x`. `None` when the input is absent.
fn layout(cx: &Cx<'_>, node: &Node, i: usize, s: &[i64]) -> Result<Option<Laid>, LowerError> {
    let Some(name) = node.input(i) else {
        return Ok(None);
    };
    let what = if i == 1 { "scale" } else { "zero point" };
    let c = cx
        .konst(name)
        .ok_or_else(|| format!("{what} computed at run time (NNabla needs it constant)"))?;
    let vals = c.values();
    let dims = c.dims_i64();
    let r = s.len();
    if s.iter().any(|&d| d < 1) {
        return Err("symbolic input dimensions".into());
    }
    let raw_axis = node.int("axis", 1);
    let axis = usize::try_from(if raw_axis < 0 {
        raw_axis + r as i64
    } else {
        raw_axis
    })
    .ok()
    .filter(|&a| a < r);
    let block = node.int("block_size", 0);
    if vals.len() == 1 && dims.len() <= 1 {
        return Ok(Some((vec![1; r], vals)));
    }
    let axis = axis.ok_or_else(|| format!("axis {raw_axis} outside the rank {r}"))?;
    if block == 0 && dims.len() == 1 && dims[0] == s[axis] {
        let mut d = vec![1; r];
        d[axis] = s[axis];
        return Ok(Some((d, vals)));
    }
    if block > 0 && dims.len() == r {
        // Blocked: dims equal s except along axis, ceil(s[axis] / block).
        let fits = (0..r).all(|a| {
            if a == axis {
                s[a].checked_add(block - 1).map(|v| v / block) == Some(dims[a])
            } else {
                dims[a] == s[a]
            }
        });
        let total = s.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d));
        if fits && total.is_some_and(|t| t <= 1 << 24) {
            let us: Vec<usize> = s.iter().map(|&d| d as usize).collect();
            let ud: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            let b = block as usize;
            let n: usize = us.iter().product();
            let mut out = Vec::with_capacity(n);
            let mut idx = vec![0usize; r];
            for _ in 0..n {
                let mut off = 0usize;
                for a in 0..r {
                    let k = if a == axis { idx[a] / b } else { idx[a] };
                    off = off * ud[a] + k;
                }
                out.push(vals[off]);
                for a in (0..r).rev() {
                    idx[a] += 1;
                    if idx[a] < us[a] {
                        break;
                    }
                    idx[a] = 0;
                }
            }
            return Ok(Some((s.to_vec(), out)));
        }
    }
    Err(LowerError::Other(format!(
        "{what} of shape {dims:?} with axis {raw_axis} and block_size {block} does not fit \
         the input's shape {s:?}"
    )))
}

/// `QuantizeLinear`: NNabla's `QuantizeLinear` rounding half to even and
/// saturating to int8 or uint8 (the zero point's type, or `output_dtype`).
pub(super) fn quantize_linear(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    let zp_elem = node.input(2).map(|n| cx.elem(n));
    let out_elem = match node.int("output_dtype", 0) {
        0 => zp_elem.unwrap_or(UINT8),
        t => i32::try_from(t).unwrap_or(-1),
    };
    let dtype = match out_elem {
        UINT8 => NPY_UINT8,
        INT8 => NPY_INT8,
        t => {
            return Err(LowerError::Other(format!(
                "output type {} (NNabla quantises to int8 and uint8 only)",
                onnx_format::dtype::onnx_name(t)
            )));
        }
    };
    if node.int("precision", 0) != 0 {
        return Err("precision (NNabla divides in f32)".into());
    }
    let scale_name = node.input(1).ok_or("y_scale missing")?;
    if cx.elem(scale_name) != elem::FLOAT {
        return Err("a scale that is not f32".into());
    }
    let (sd, sv) = layout(cx, node, 1, &s)?.ok_or("y_scale missing")?;
    let (zd, zv) = layout(cx, node, 2, &s)?.unwrap_or_else(|| (vec![1; s.len()], vec![0.0]));
    let scale = cx.param(&format!("{}_scale", node.outputs[0]), &sd, &sv)?;
    let zp = cx.param(&format!("{}_zero_point", node.outputs[0]), &zd, &zv)?;
    cx.emit(
        "QuantizeLinear",
        &[&x, &scale, &zp],
        &[(&node.outputs[0], &s)],
        Some(P::QuantizeLinearParam(QuantizeLinearParameter {
            round_mode: "HALF_TO_EVEN".into(),
            narrow_range: false,
            dtype,
        })),
    );
    cx.set_elem(&node.outputs[0], out_elem);
    Ok(())
}

/// `DequantizeLinear`: NNabla's `DequantizeLinear`, `(x - zero_point) *
/// scale` on integers f32 holds exactly.
pub(super) fn dequantize_linear(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let xn = node.input(0).ok_or("x missing")?;
    let e = cx.elem(xn);
    if !matches!(e, 2..=5) {
        return Err(LowerError::Other(format!(
            "{} input (dequantised here: 8- and 16-bit integers)",
            onnx_format::dtype::onnx_name(e)
        )));
    }
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let scale_name = node.input(1).ok_or("x_scale missing")?;
    if cx.elem(scale_name) != elem::FLOAT {
        return Err("a scale that is not f32".into());
    }
    if node.int("output_dtype", 0) > 1 {
        return Err("output_dtype other than f32".into());
    }
    let (sd, sv) = layout(cx, node, 1, &s)?.ok_or("x_scale missing")?;
    let (zd, zv) = layout(cx, node, 2, &s)?.unwrap_or_else(|| (vec![1; s.len()], vec![0.0]));
    let scale = cx.param(&format!("{}_scale", node.outputs[0]), &sd, &sv)?;
    let zp = cx.param(&format!("{}_zero_point", node.outputs[0]), &zd, &zv)?;
    cx.emit(
        "DequantizeLinear",
        &[&x, &scale, &zp],
        &[(&node.outputs[0], &s)],
        None,
    );
    Ok(())
}
