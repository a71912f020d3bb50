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

/// What input `i` (1 or 2) of a (de)quantising node is.
fn what(i: usize) -> &'static str {
    if i == 1 { "scale" } else { "zero point" }
}

/// The `scale` (`i` = 1) or `zero_point` (2) input of `node` as a
/// variable NNabla broadcasts over `x` of shape `s`: a constant one laid
/// out by [`layout`] as a parameter named after the output, one computed
/// at run time reshaped by [`runtime_layout`]; a zero of shape `[1, ..]`
/// when the zero point is absent.
fn operand(cx: &mut Cx<'_>, node: &Node, i: usize, s: &[i64]) -> Result<String, LowerError> {
    let out = &node.outputs[0];
    let suffix = if i == 1 { "scale" } else { "zero_point" };
    match node.input(i) {
        Some(name) if cx.konst(name).is_none() => runtime_layout(cx, node, name, i, s),
        _ => {
            let (d, v) = match layout(cx, node, i, s)? {
                Some(l) => l,
                None if i == 2 => (vec![1; s.len()], vec![0.0]),
                None => return Err("the scale is missing".into()),
            };
            cx.param(&format!("{out}_{suffix}"), &d, &v)
        }
    }
}

/// A `scale` or `zero_point` computed at run time (value `name`, input
/// `i`), reshaped for NNabla's broadcasting over `x` of shape `s`: one
/// value as `[1, ..]`, a vector along `axis` as `[1, .., C, .., 1]`.
/// Blocked ones (`block_size`) are refused: NNabla would have to repeat
/// them along the axis, which only a constant does here.
fn runtime_layout(
    cx: &mut Cx<'_>,
    node: &Node,
    name: &str,
    i: usize,
    s: &[i64],
) -> Result<String, LowerError> {
    let v = cx.avar(node, i)?;
    let vs = cx.shape(&v)?;
    let r = s.len();
    let raw_axis = node.int("axis", 1);
    let axis = usize::try_from(if raw_axis < 0 {
        raw_axis.saturating_add(r as i64)
    } else {
        raw_axis
    })
    .ok()
    .filter(|&a| a < r);
    let block = node.int("block_size", 0);
    if vs.len() <= 1 && vs.iter().all(|&d| d == 1) {
        return cx.reshape(&v, &vec![1; r]);
    }
    if let Some(a) = axis
        && block == 0
        && vs.len() == 1
        && vs[0] == s[a]
        && s[a] > 0
    {
        let mut d = vec![1; r];
        d[a] = s[a];
        return cx.reshape(&v, &d);
    }
    Err(LowerError::Other(format!(
        "{} {name:?} computed at run time with shape {vs:?} (axis {raw_axis}, block_size \
         {block}) for an input of shape {s:?}: NNabla broadcasts a run-time {} per tensor or \
         along a static axis; a constant one (an initializer) makes it importable",
        what(i),
        what(i)
    )))
}

/// The constant `scale` or `zero_point` input `i` of `node` laid out for
/// NNabla's broadcasting over `x` of shape `s`: a scalar as `[1, ..]`, a
/// vector along `axis` as `[1, .., C, .., 1]`, a blocked one (`block_size`)
/// repeated to the shape of `x`. `None` when the input is absent.
fn layout(cx: &Cx<'_>, node: &Node, i: usize, s: &[i64]) -> Result<Option<Laid>, LowerError> {
    let Some(name) = node.input(i) else {
        return Ok(None);
    };
    let what = what(i);
    let c = cx.konst(name).ok_or(LowerError::NotConstant { what })?;
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
    let scale_name = node.input(1).ok_or(LowerError::missing("y_scale"))?;
    if cx.elem(scale_name) != elem::FLOAT {
        return Err("a scale that is not f32".into());
    }
    let scale = operand(cx, node, 1, &s)?;
    let zp = operand(cx, node, 2, &s)?;
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
    let xn = node.input(0).ok_or(LowerError::missing("x"))?;
    let e = cx.elem(xn);
    if !matches!(e, 2..=5) {
        return Err(LowerError::ElemType {
            elem: e,
            what: "input",
            why: "dequantised here: 8- and 16-bit integers",
        });
    }
    let x = cx.avar(node, 0)?;
    let s = cx.shape(&x)?;
    let scale_name = node.input(1).ok_or(LowerError::missing("x_scale"))?;
    if cx.elem(scale_name) != elem::FLOAT {
        return Err("a scale that is not f32".into());
    }
    if node.int("output_dtype", 0) > 1 {
        return Err("output_dtype other than f32".into());
    }
    let scale = operand(cx, node, 1, &s)?;
    let zp = operand(cx, node, 2, &s)?;
    cx.emit(
        "DequantizeLinear",
        &[&x, &scale, &zp],
        &[(&node.outputs[0], &s)],
        None,
    );
    Ok(())
}
