//! ONNX → TenniS lowerings of linear quantisation (their rows:
//! `tennis_table/quant.rs`): `QuantizeLinear`, `DequantizeLinear`,
//! `DynamicQuantizeLinear`, `MatMulInteger`, `ConvInteger`.
//!
//! TenniS has no quantisation operator an ONNX model can use (its
//! `conv2d_quantized` computes another thing), so each is written as the
//! ONNX operators that define it, lowered by this import's own rows: the
//! float ops in f32 (`Div`, `Round` half to even, `Add`, `Max`/`Min` to
//! saturate), `Cast` to and from the integer types (exact: the values are
//! integers in range). The integer products and convolutions are f32 sums
//! of exact integers `x - zero_point`, exact while every partial sum stays
//! below 2^24 (as in the NNabla import, `nnabla_ops_qint`).

use onnx_format::builder::attr;
use onnx_format::proto::AttributeProto;

use super::LowerError;
use super::driver::Target;
use super::onnx_graph::{Const, Node, elem};
use super::tennis_cx::{Lowered, Tx, out};

/// Lowers the ONNX node `op(ins) -> out` through the TenniS table.
fn step(cx: &mut Tx, op: &str, ins: &[&str], out: &str, attrs: Vec<AttributeProto>) -> Lowered {
    let n = Node {
        op: op.into(),
        domain: String::new(),
        name: format!("{op}:{out}"),
        inputs: ins.iter().map(|s| s.to_string()).collect(),
        outputs: vec![out.into()],
        attrs,
    };
    Target::lower(cx, &n).unwrap_or_else(|| Err(LowerError::NoTennisOp { op: op.into() }))
}

/// [`step`] into a fresh value named after `hint`.
fn tmp(cx: &mut Tx, op: &str, ins: &[&str], hint: &str) -> Result<String, LowerError> {
    let o = cx.fresh(hint);
    step(cx, op, ins, &o, vec![])?;
    Ok(o)
}

/// A constant value (f32 unless `e` says otherwise) named after `hint`.
fn konst(cx: &mut Tx, hint: &str, e: i32, dims: &[usize], v: &[f64]) -> Result<String, LowerError> {
    let c = Const::from_f64(e, dims.to_vec(), v).ok_or("a constant of that type")?;
    let name = cx.fresh(hint);
    cx.set_const(&name, c);
    Ok(name)
}

/// `x` cast to ONNX type `to`.
fn cast(cx: &mut Tx, x: &str, to: i32, out: Option<&str>) -> Result<String, LowerError> {
    let o = out.map_or_else(|| cx.fresh(x), str::to_string);
    step(cx, "Cast", &[x], &o, vec![attr::int("to", i64::from(to))])?;
    Ok(o)
}

/// The range of the integer types quantised to.
fn range(e: i32) -> Option<(f64, f64)> {
    match e {
        2 => Some((0.0, 255.0)),
        3 => Some((-128.0, 127.0)),
        4 => Some((0.0, 65535.0)),
        5 => Some((-32768.0, 32767.0)),
        _ => None,
    }
}

/// The constant scale or zero point input `i` of `node` as an f32
/// constant that broadcasts against `x` of shape `s`: a scalar as it is,
/// a vector along `axis` as `[1, .., C, .., 1]`. `None` when absent.
fn laid_out(cx: &mut Tx, node: &Node, i: usize, s: &[i64]) -> Result<Option<String>, LowerError> {
    let Some(name) = node.input(i) else {
        return Ok(None);
    };
    let what = if i == 1 { "scale" } else { "zero point" };
    let Some(c) = cx.konst(name).cloned() else {
        // computed at run time: one value (per tensor) is used as it is
        if cx.shape(name)?.iter().product::<i64>() != 1 {
            return Err(LowerError::Other(format!(
                "a {what} vector computed at run time"
            )));
        }
        return match cx.elem(name) {
            elem::FLOAT => Ok(Some(name.to_string())),
            _ if i == 1 => Err("a scale that is not f32".into()),
            _ => cast(cx, name, elem::FLOAT, None).map(Some),
        };
    };
    if node.int("block_size", 0) != 0 {
        return Err("blocked quantisation (block_size)".into());
    }
    let v = c.values();
    if v.len() == 1 && c.dims().len() <= 1 {
        return konst(cx, name, elem::FLOAT, &[], &v).map(Some);
    }
    let r = s.len();
    let raw = node.int("axis", 1);
    let ax = usize::try_from(if raw < 0 { raw + r as i64 } else { raw })
        .ok()
        .filter(|&a| a < r)
        .ok_or_else(|| format!("axis {raw} outside the rank {r}"))?;
    if c.dims().len() != 1 || c.dims()[0] as i64 != s[ax] {
        return Err(LowerError::Other(format!(
            "{what} of shape {:?} does not fit the input's axis {raw}",
            c.dims()
        )));
    }
    let mut d = vec![1usize; r];
    d[ax] = c.dims()[0];
    konst(cx, name, elem::FLOAT, &d, &v).map(Some)
}

/// `saturate(round(x / scale) + zero_point)` as f32 values, into `o`
/// (the scale and zero point are value names).
fn quantize_f32(
    cx: &mut Tx,
    x: &str,
    scale: &str,
    zp: Option<&str>,
    (lo, hi): (f64, f64),
    o: &str,
) -> Lowered {
    let q = tmp(cx, "Div", &[x, scale], o)?;
    let mut r = tmp(cx, "Round", &[&q], o)?;
    if let Some(z) = zp {
        r = tmp(cx, "Add", &[&r, z], o)?;
    }
    let lo = konst(cx, o, elem::FLOAT, &[], &[lo])?;
    let hi = konst(cx, o, elem::FLOAT, &[], &[hi])?;
    let m = tmp(cx, "Max", &[&r, &lo], o)?;
    step(cx, "Min", &[&m, &hi], o, vec![])
}

/// `QuantizeLinear` with constant scale and zero point (per tensor or
/// per axis): `Div`, `Round`, `Add`, `Max`, `Min`, `Cast` to the integer
/// type.
pub(crate) fn quantize_linear(cx: &mut Tx, node: &Node) -> Lowered {
    let x = node.input(0).ok_or(LowerError::missing("x"))?;
    if cx.elem(x) != elem::FLOAT {
        return Err("a non-f32 input".into());
    }
    if node.int("precision", 0) != 0 {
        return Err("precision (computed in f32)".into());
    }
    let s = cx.shape(x)?;
    let to = match (node.input(2), node.int("output_dtype", 0)) {
        (Some(z), _) => cx.elem(z),
        (None, 0) => elem::UINT8,
        (None, t) => i32::try_from(t).unwrap_or(-1),
    };
    let bounds = range(to).ok_or_else(|| {
        format!(
            "output type {} (8- and 16-bit integers here)",
            onnx_format::dtype::onnx_name(to)
        )
    })?;
    let scale = laid_out(cx, node, 1, &s)?.ok_or(LowerError::missing("y_scale"))?;
    let zp = laid_out(cx, node, 2, &s)?;
    let o = out(node)?.to_string();
    let f = cx.fresh(&o);
    quantize_f32(cx, x, &scale, zp.as_deref(), bounds, &f)?;
    cast(cx, &f, to, Some(&o)).map(|_| ())
}

/// `DequantizeLinear` with constant scale and zero point: `Cast` to f32,
/// `Sub`, `Mul`.
pub(crate) fn dequantize_linear(cx: &mut Tx, node: &Node) -> Lowered {
    let x = node.input(0).ok_or(LowerError::missing("x"))?;
    let e = cx.elem(x);
    if !matches!(e, 2..=6) {
        return Err(LowerError::ElemType {
            elem: e,
            what: "input",
            why: "8-, 16- and 32-bit integers here",
        });
    }
    if node.int("output_dtype", 0) > 1 {
        return Err("output_dtype other than f32".into());
    }
    let s = cx.shape(x)?;
    let scale = laid_out(cx, node, 1, &s)?.ok_or(LowerError::missing("x_scale"))?;
    let zp = laid_out(cx, node, 2, &s)?;
    let o = out(node)?.to_string();
    let mut v = cast(cx, x, elem::FLOAT, None)?;
    if let Some(z) = zp {
        v = tmp(cx, "Sub", &[&v, &z], &o)?;
    }
    step(cx, "Mul", &[&v, &scale], &o, vec![])
}

/// `DynamicQuantizeLinear` as onnxruntime computes it: the range
/// `[min(0, min x), max(0, max x)]` (`ReduceMin`/`ReduceMax` over every
/// axis), the scale `range / 255` (1 for an all-zero input), the zero
/// point `saturate(round(-min / scale))`, `y` quantised to uint8.
pub(crate) fn dynamic_quantize_linear(cx: &mut Tx, node: &Node) -> Lowered {
    let x = node.input(0).ok_or(LowerError::missing("x"))?;
    if cx.elem(x) != elem::FLOAT {
        return Err("a non-f32 input".into());
    }
    let r = cx.shape(x)?.len();
    let o = out(node)?.to_string();
    let axes: Vec<i64> = (0..r as i64).collect();
    let reduce = |cx: &mut Tx, op: &str| -> Result<String, LowerError> {
        let m = cx.fresh(&o);
        let mut attrs = vec![attr::int("keepdims", 0)];
        if cx.opset >= 18 {
            let a = konst(
                cx,
                &o,
                elem::INT64,
                &[r],
                &axes.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            )?;
            step(cx, op, &[x, &a], &m, attrs)?;
        } else {
            attrs.push(attr::ints("axes", &axes));
            step(cx, op, &[x], &m, attrs)?;
        }
        Ok(m)
    };
    let (lo, hi) = (reduce(cx, "ReduceMin")?, reduce(cx, "ReduceMax")?);
    let zero = konst(cx, &o, elem::FLOAT, &[], &[0.0])?;
    let lo0 = tmp(cx, "Min", &[&lo, &zero], &o)?;
    let hi0 = tmp(cx, "Max", &[&hi, &zero], &o)?;
    let span = tmp(cx, "Sub", &[&hi0, &lo0], &o)?;
    let q = konst(cx, &o, elem::FLOAT, &[], &[255.0])?;
    let raw = tmp(cx, "Div", &[&span, &q], &o)?;
    let flat = tmp(cx, "Equal", &[&span, &zero], &o)?;
    let flat = cast(cx, &flat, elem::FLOAT, None)?;
    let scale_o = node.outputs.get(1).filter(|s| !s.is_empty()).cloned();
    let scale = scale_o.clone().unwrap_or_else(|| cx.fresh(&o));
    step(cx, "Add", &[&raw, &flat], &scale, vec![])?;
    let neg = tmp(cx, "Neg", &[&lo0], &o)?;
    let zp = cx.fresh(&o);
    quantize_f32(cx, &neg, &scale, None, (0.0, 255.0), &zp)?;
    let y = cx.fresh(&o);
    quantize_f32(cx, x, &scale, Some(&zp), (0.0, 255.0), &y)?;
    cast(cx, &y, elem::UINT8, Some(&o))?;
    if let Some(z) = node.outputs.get(2).filter(|s| !s.is_empty()) {
        cast(cx, &zp, elem::UINT8, Some(z))?;
    }
    Ok(())
}

/// Operand `i` of `node` (8-bit integers) minus its zero point (input
/// `zi`) as f32; a zero point vector of more than one element becomes
/// `[n, 1, .., 1]` of rank `lead` when that is given.
fn shifted(
    cx: &mut Tx,
    node: &Node,
    i: usize,
    zi: usize,
    lead: Option<usize>,
) -> Result<String, LowerError> {
    let x = node.input(i).ok_or(LowerError::MissingInput { index: i })?;
    super::fold::int8_operand(cx.elem(x), i)?;
    let zc = node.input(zi).map(|z| cx.konst(z).cloned());
    if let Some(xc) = cx.konst(x).cloned()
        && !matches!(zc, Some(None))
    {
        let c = super::fold::shift_by_zero_point(&xc, zc.flatten().as_ref(), lead)?;
        let name = cx.fresh(x);
        cx.set_const(&name, c);
        return Ok(name);
    }
    let v = cast(cx, x, elem::FLOAT, None)?;
    let Some(z) = node.input(zi) else {
        return Ok(v);
    };
    let zd = cx.shape(z)?;
    let zf = match cx.konst(z).cloned() {
        Some(c) => {
            let d = super::fold::zero_point_dims(c.dims(), lead);
            konst(cx, z, elem::FLOAT, &d, &c.values())?
        }
        None => {
            let f = cast(cx, z, elem::FLOAT, None)?;
            let d = super::fold::zero_point_dims(&zd, lead);
            if d == zd {
                f
            } else {
                let dv: Vec<f64> = d.iter().map(|&v| v as f64).collect();
                let shape = konst(cx, z, elem::INT64, &[d.len()], &dv)?;
                tmp(cx, "Reshape", &[&f, &shape], z)?
            }
        }
    };
    tmp(cx, "Sub", &[&v, &zf], x)
}

/// `MatMulInteger`: `MatMul` of the shifted operands, `Cast` to int32.
pub(crate) fn matmul_integer(cx: &mut Tx, node: &Node) -> Lowered {
    let a = shifted(cx, node, 0, 2, Some(2))?;
    let b = shifted(cx, node, 1, 3, None)?;
    let o = out(node)?.to_string();
    let y = cx.fresh(&o);
    step(cx, "MatMul", &[&a, &b], &y, vec![])?;
    cast(cx, &y, elem::INT32, Some(&o)).map(|_| ())
}

/// `ConvInteger`: `Conv` (the node's attributes) of the shifted operands,
/// padded with zeros after the shift, `Cast` to int32.
pub(crate) fn conv_integer(cx: &mut Tx, node: &Node) -> Lowered {
    let r = cx.in_shape(node, 1)?.len();
    let x = shifted(cx, node, 0, 2, None)?;
    let w = shifted(cx, node, 1, 3, Some(r))?;
    let o = out(node)?.to_string();
    let y = cx.fresh(&o);
    step(cx, "Conv", &[&x, &w], &y, node.attrs.clone())?;
    cast(cx, &y, elem::INT32, Some(&o)).map(|_| ())
}
