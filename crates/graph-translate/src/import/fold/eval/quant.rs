//! Folding of `QuantizeLinear` and `DequantizeLinear` on constants: the
//! quantised weight initializers a QDQ model feeds its float operators
//! (`W_q → DequantizeLinear → Conv`, and the int32 bias) become the float
//! weights onnxruntime computes from them, so the target sees an ordinary
//! float model there.
//!
//! Both compute in f32 as onnxruntime does: `QuantizeLinear` divides by the
//! scale, rounds half to even and saturates after adding the zero point;
//! `DequantizeLinear` converts `x - zero_point` to f32 and multiplies by
//! the scale. Scales and zero points per tensor or along `axis` are
//! folded; blocked ones (`block_size`), float8 and 4-bit types, non-f32
//! scales and `precision`/`output_dtype` other than the defaults are left
//! to the target's lowering ([`folds`] says no).

use super::super::super::onnx_graph::{Const, Node, elem};
use super::{Args, Folded, axis, bad, numel, out};

/// The integer types folded, with their ranges.
fn range(e: i32) -> Option<(f32, f32)> {
    match e {
        2 => Some((0.0, 255.0)),
        3 => Some((-128.0, 127.0)),
        4 => Some((0.0, 65535.0)),
        5 => Some((-32768.0, 32767.0)),
        elem::INT32 => Some((-2_147_483_648.0, 2_147_483_647.0)),
        _ => None,
    }
}

/// The element type a `QuantizeLinear` writes: its zero point's, else
/// `output_dtype`, else uint8.
fn q_type(node: &Node, zp: Option<&Const>) -> i32 {
    match zp {
        Some(z) => z.elem,
        None => match node.int("output_dtype", 0) {
            0 => elem::UINT8,
            t => i32::try_from(t).unwrap_or(-1),
        },
    }
}

/// For each element of `x` (dimensions `d`), the index into a scale or
/// zero point `p`: 0 for a one-element parameter, the coordinate along
/// `axis` for a vector along it; `None` for any other layout.
fn param_index(node: &Node, d: &[usize], p: &Const) -> Option<Vec<usize>> {
    let n = numel(d)?;
    if p.values().len() == 1 && p.dims().len() <= 1 {
        return Some(vec![0; n]);
    }
    let ax = axis(node.int("axis", 1), d.len())?;
    if p.dims().len() != 1 || p.dims()[0] != d[ax] {
        return None;
    }
    let inner: usize = d[ax + 1..].iter().product();
    Some((0..n).map(|i| (i / inner.max(1)) % d[ax].max(1)).collect())
}

/// Whether the `QuantizeLinear` (`quantize`) or `DequantizeLinear` `node`
/// with constant inputs `ins` is one this module folds (else the target lowers it).
pub(in super::super) fn folds(node: &Node, ins: &[Option<Const>], quantize: bool) -> bool {
    let (Some(Some(x)), Some(Some(s))) = (ins.first(), ins.get(1)) else {
        return false;
    };
    let zp = ins.get(2).and_then(Option::as_ref);
    if s.elem != elem::FLOAT
        || node.int("block_size", 0) != 0
        || node.int("precision", 0) != 0
        || ins.len() > 3
    {
        return false;
    }
    let layout_ok = param_index(node, x.dims(), s).is_some()
        && zp.is_none_or(|z| param_index(node, x.dims(), z).is_some());
    if !layout_ok {
        return false;
    }
    if quantize {
        x.elem == elem::FLOAT && range(q_type(node, zp)).is_some()
    } else {
        range(x.elem).is_some()
            && zp.is_none_or(|z| z.elem == x.elem)
            && matches!(node.int("output_dtype", 0), 0 | 1)
    }
}

/// `QuantizeLinear` (`quantize`) or `DequantizeLinear` on constants
/// ([`folds`] said yes).
pub(super) fn qdq(f: &Args<'_>, x: &Const, quantize: bool) -> Folded {
    let node = f.node;
    let s = f.x(1)?;
    let zp = f.ins.get(2).and_then(Option::as_ref);
    let d = x.dims();
    let shape_err = || bad(node, "scale or zero point does not fit the input");
    let si = param_index(node, d, s).ok_or_else(shape_err)?;
    let (sv, xv) = (s.values(), x.values());
    let zv = zp.map_or_else(|| vec![0.0], Const::values);
    let zi = match zp {
        Some(z) => param_index(node, d, z).ok_or_else(shape_err)?,
        None => vec![0; si.len()],
    };
    let at = |v: &[f64], i: usize| v.get(i).copied().ok_or_else(shape_err);
    let mut res = Vec::with_capacity(xv.len());
    if quantize {
        let to = q_type(node, zp);
        let (lo, hi) = range(to).ok_or_else(|| bad(node, "output type"))?;
        for (k, &v) in xv.iter().enumerate() {
            let scale = at(&sv, si[k])? as f32;
            let z = at(&zv, zi[k])? as f32;
            let q = ((v as f32) / scale).round_ties_even() + z;
            res.push(f64::from(if q.is_nan() { 0.0 } else { q.clamp(lo, hi) }));
        }
        return out(Const::from_f64(to, d.to_vec(), &res), node);
    }
    for (k, &v) in xv.iter().enumerate() {
        let scale = at(&sv, si[k])? as f32;
        let z = at(&zv, zi[k])?;
        // (x - zp) is exact in f64; its conversion to f32 rounds as
        // onnxruntime's int32 → float does, then one f32 product.
        res.push(f64::from(((v - z) as f32) * scale));
    }
    out(Const::from_f64(elem::FLOAT, d.to_vec(), &res), node)
}
