//! ONNX → TenniS lowerings of indexing operators (`GatherElements`).

use super::onnx_graph::Node;
use super::tennis_cx::{Lowered, Tx, is_int, kv, p_int};
use super::tennis_ops_basic::axis;

fn out(node: &Node) -> Result<&str, String> {
    node.outputs
        .first()
        .map(String::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "no output".to_string())
}

fn product(d: &[i64]) -> Result<i64, String> {
    d.iter().try_fold(1i64, |a, &v| {
        a.checked_mul(v)
            .ok_or_else(|| "a size that overflows".to_string())
    })
}

/// `GatherElements` → `gather_elements`. TenniS's kernel reads x as
/// `[A, X, W]` around the axis and writes one element per `(a, w)`: it
/// computes ONNX's operator only for indices of length 1 along the axis.
/// For K indices per position x is broadcast to `[A, K, X, W]` and
/// gathered as `[A·K, X, W]` with indices `[A·K, 1, W]` (negative indices
/// count from the end in both). Indices narrower than x on another axis
/// are refused.
pub(crate) fn gather_elements(cx: &mut Tx<'_>, node: &Node) -> Lowered {
    let (x, e) = cx.tin(node, 0)?;
    let (idx, ei) = cx.tin(node, 1)?;
    if !is_int(ei) {
        return Err(format!("{} indices", onnx_format::dtype::onnx_name(ei)));
    }
    let d = cx.in_shape(node, 0)?;
    let di = cx.in_shape(node, 1)?;
    if d.iter().chain(&di).any(|&v| v < 1) {
        return Err("symbolic or empty dimensions (fix them with --input-shape)".into());
    }
    let a = axis(node.int("axis", 0), d.len())?;
    if di.len() != d.len()
        || d.iter()
            .zip(&di)
            .enumerate()
            .any(|(i, (x, y))| i != a && x != y)
    {
        return Err(format!(
            "indices of shape {:?} for data of shape {:?} (TenniS needs equal sizes off the axis)",
            di, d
        ));
    }
    let o = out(node)?.to_string();
    let (aa, xx, ww, k) = (product(&d[..a])?, d[a], product(&d[a + 1..])?, di[a]);
    let ak = aa.checked_mul(k).ok_or("a size that overflows")?;
    let mut xr = x;
    if k != 1 {
        let r = cx.fresh(&o);
        let x4 = cx.reshape(&r, x, &[aa, 1, xx, ww])?;
        let sh = cx.const_i32(&o, &[4], &[aa, k, xx, ww])?;
        let b = cx.tmp_e("broadcast", &o, &[x4, sh], vec![], &[aa, k, xx, ww], e)?;
        xr = b;
    }
    let r = cx.fresh(&o);
    let x3 = cx.reshape(&r, xr, &[ak, xx, ww])?;
    let r = cx.fresh(&o);
    let i3 = cx.reshape(&r, idx, &[ak, 1, ww])?;
    let g = cx.tmp_e(
        "gather_elements",
        &o,
        &[x3, i3],
        vec![kv("axis", p_int(1))],
        &[ak, 1, ww],
        e,
    )?;
    cx.reshape(&o, g, &di)?;
    cx.set_elem(&o, e);
    Ok(())
}
