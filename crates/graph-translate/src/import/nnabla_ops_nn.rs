//! ONNX → NNabla lowerings: neural-network layers (convolution, pooling,
//! normalisation, matrix products, softmax, reductions, resizing).
//!
//! NNabla pads symmetrically; asymmetric ONNX pads become an explicit
//! `Pad` first. NNabla's pooling with `ignore_border` computes
//! `floor((i + 2p - k) / s) + 1`, ONNX's `ceil_mode=0`; a `ceil_mode=1`
//! that adds a window becomes extra end padding (max pooling, padded with
//! -inf) or is refused (average pooling).

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_elementwise::{binary_vars, chain, chain_to, mul_scalar};
use super::nnabla_ops_shape::transpose_vars;
use super::onnx_graph::{Const, Node, elem};
use super::{LowerError, dims};

fn sh(d: &[i64]) -> Option<Shape> {
    Some(Shape { dim: d.to_vec() })
}

/// Resolved spatial padding: begin and end per spatial axis.
struct Pads {
    begin: Vec<i64>,
    end: Vec<i64>,
}

/// ONNX `auto_pad`/`pads` resolved on static spatial sizes.
fn resolve_pads(
    node: &Node,
    spatial: &[i64],
    k: &[i64],
    s: &[i64],
    d: &[i64],
) -> Result<Pads, LowerError> {
    let n = spatial.len();
    let auto = node.string("auto_pad", "NOTSET");
    match auto.as_str() {
        "NOTSET" => {
            let p = node.ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
            if p.len() != 2 * n {
                return Err("pads do not fit the rank".into());
            }
            dims::check_pads(&p)?;
            Ok(Pads {
                begin: p[..n].to_vec(),
                end: p[n..].to_vec(),
            })
        }
        "VALID" => Ok(Pads {
            begin: vec![0; n],
            end: vec![0; n],
        }),
        "SAME_UPPER" | "SAME_LOWER" => {
            let (mut b, mut e) = (vec![0; n], vec![0; n]);
            for i in 0..n {
                if spatial[i] < 0 {
                    return Err("auto_pad on a symbolic dimension".into());
                }
                let out = (spatial[i] + s[i] - 1) / s[i];
                let total = ((out - 1) * s[i] + d[i] * (k[i] - 1) + 1 - spatial[i]).max(0);
                let small = total / 2;
                if auto == "SAME_UPPER" {
                    b[i] = small;
                    e[i] = total - small;
                } else {
                    e[i] = small;
                    b[i] = total - small;
                }
            }
            Ok(Pads { begin: b, end: e })
        }
        other => Err(LowerError::attr("auto_pad", other.to_string())),
    }
}

/// An explicit `Pad` of the spatial dimensions of `x`.
fn pad_spatial(
    cx: &mut Cx<'_>,
    x: &str,
    b: &[i64],
    e: &[i64],
    value: f32,
) -> Result<String, LowerError> {
    let s = cx.shape(x)?;
    let n = b.len();
    let r = s.len();
    let mut out = s.clone();
    let mut w = Vec::new();
    for i in 0..n {
        out[r - n + i] += b[i] + e[i];
        w.push(b[i]);
        w.push(e[i]);
    }
    let y = cx.fresh(x);
    cx.emit(
        "Pad",
        &[x],
        &[(&y, &out)],
        Some(P::PadParam(PadParameter {
            pad_width: w,
            mode: "constant".into(),
            constant_value: value,
        })),
    );
    Ok(y)
}

fn spatial_of(cx: &Cx<'_>, node: &Node) -> Result<(Vec<i64>, Vec<i64>), LowerError> {
    let s = cx.in_shape(node, 0)?;
    if s.len() < 3 {
        return Err("input rank below 3".into());
    }
    if s[1..].iter().any(|&d| d < 0) {
        return Err("symbolic non-batch dimension".into());
    }
    let sp = s[2..].to_vec();
    Ok((s, sp))
}

/// `Conv`.
pub(crate) fn conv(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let (s, sp) = spatial_of(cx, node)?;
    let n = sp.len();
    let ws = cx.in_shape(node, 1)?;
    if ws.len() != n + 2 {
        return Err("weight rank".into());
    }
    let k = ws[2..].to_vec();
    let (st, dl) = dims::strides_dilations(node, n)?;
    let group = node.int("group", 1);
    let pads = resolve_pads(node, &sp, &k, &st, &dl)?;
    let mut x = cx.fvar(node, 0)?;
    let w = cx.fvar(node, 1)?;
    let mut ins = vec![];
    let sym = pads.begin == pads.end;
    let pad = if sym {
        pads.begin.clone()
    } else {
        x = pad_spatial(cx, &x, &pads.begin, &pads.end, 0.0)?;
        vec![0; n]
    };
    let mut out = vec![s[0], ws[0]];
    for i in 0..n {
        let i_eff = sp[i] + pads.begin[i] + pads.end[i];
        out.push((i_eff - dl[i] * (k[i] - 1) - 1) / st[i] + 1);
    }
    if out.iter().skip(1).any(|&d| d < 1) {
        return Err("an empty output".into());
    }
    ins.push(x);
    ins.push(w);
    if node.input(2).is_some() {
        ins.push(cx.fvar(node, 2)?);
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    cx.emit(
        "Convolution",
        &refs,
        &[(&node.outputs[0], &out)],
        Some(P::ConvolutionParam(ConvolutionParameter {
            base_axis: 1,
            pad: sh(&pad),
            stride: sh(&st),
            dilation: sh(&dl),
            group,
            channel_last: false,
        })),
    );
    Ok(())
}

/// `ConvTranspose` with symmetric (resolved) padding.
pub(crate) fn conv_transpose(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let (s, sp) = spatial_of(cx, node)?;
    let n = sp.len();
    let ws = cx.in_shape(node, 1)?;
    if ws.len() != n + 2 {
        return Err("weight rank".into());
    }
    let k = ws[2..].to_vec();
    let (st, dl) = dims::strides_dilations(node, n)?;
    let group = node.int("group", 1);
    let mut op = dims::window_ints(node, "output_padding", n, 0, (0, dims::MAX_ELEMENTS))?;
    let auto = node.string("auto_pad", "NOTSET");
    let full = |i: usize, op: &[i64]| st[i] * (sp[i] - 1) + op[i] + (k[i] - 1) * dl[i] + 1;
    let (b, e): (Vec<i64>, Vec<i64>) = if let Some(os) = node.ints("output_shape") {
        let os = if os.len() == n {
            os
        } else {
            os[os.len().saturating_sub(n)..].to_vec()
        };
        if os.len() != n {
            return Err(LowerError::value("output_shape", format!("{os:?}")));
        }
        dims::check_shape(&os)?;
        let mut b = vec![0; n];
        let mut e = vec![0; n];
        for i in 0..n {
            let total = full(i, &op) - os[i];
            if total < 0 {
                // The extra size goes to output_padding.
                op[i] -= total;
                continue;
            }
            if auto == "SAME_UPPER" {
                b[i] = total / 2;
                e[i] = total - b[i];
            } else {
                e[i] = total / 2;
                b[i] = total - e[i];
            }
        }
        (b, e)
    } else {
        match auto.as_str() {
            "NOTSET" | "VALID" => {
                let p = node.ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
                if auto == "VALID" {
                    (vec![0; n], vec![0; n])
                } else if p.len() != 2 * n {
                    return Err("pads do not fit the rank".into());
                } else {
                    dims::check_pads(&p)?;
                    (p[..n].to_vec(), p[n..].to_vec())
                }
            }
            "SAME_UPPER" | "SAME_LOWER" => {
                let mut b = vec![0; n];
                let mut e = vec![0; n];
                for i in 0..n {
                    let total = (full(i, &op) - sp[i] * st[i]).max(0);
                    if auto == "SAME_UPPER" {
                        b[i] = total / 2;
                        e[i] = total - b[i];
                    } else {
                        e[i] = total / 2;
                        b[i] = total - e[i];
                    }
                }
                (b, e)
            }
            other => {
                return Err(LowerError::attr("auto_pad", other.to_string()));
            }
        }
    };
    if b != e {
        return Err("asymmetric pads".into());
    }
    if (0..n).any(|i| op[i] >= st[i].max(dl[i])) {
        return Err("output_padding not below stride".into());
    }
    let mut out = vec![s[0], ws[1].checked_mul(group).ok_or_else(dims::too_large)?];
    for i in 0..n {
        out.push(full(i, &op) - b[i] - e[i]);
    }
    let mut ins = vec![cx.fvar(node, 0)?, cx.fvar(node, 1)?];
    if node.input(2).is_some() {
        ins.push(cx.fvar(node, 2)?);
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    cx.emit(
        "Deconvolution",
        &refs,
        &[(&node.outputs[0], &out)],
        Some(P::DeconvolutionParam(DeconvolutionParameter {
            base_axis: 1,
            pad: sh(&b),
            stride: sh(&st),
            dilation: sh(&dl),
            group,
            channel_last: false,
            output_padding: sh(&op),
        })),
    );
    Ok(())
}

/// `MaxPool` (`max`) and `AveragePool`.
pub(crate) fn pool(cx: &mut Cx<'_>, node: &Node, max: bool) -> Lowered {
    if max && node.has_output(1) {
        return Err("Indices output".into());
    }
    let (s, sp) = spatial_of(cx, node)?;
    let n = sp.len();
    if n > 3 {
        return Err("more than 3 spatial dimensions".into());
    }
    let k = node.ints("kernel_shape").ok_or(LowerError::Missing {
        what: "kernel_shape",
    })?;
    if k.len() != n {
        return Err("kernel_shape does not fit the rank".into());
    }
    dims::check_window(&[], &[], &k)?;
    let (st, dl) = dims::strides_dilations(node, n)?;
    if dl.iter().any(|&d| d != 1) {
        if max {
            return super::nnabla_ops_pool::dilated_max(cx, node, &k, &st, &dl);
        }
        return super::nnabla_ops_pool::dilated_average(cx, node, &k, &st, &dl);
    }
    let pads = resolve_pads(node, &sp, &k, &st, &dl)?;
    let ceil = node.int("ceil_mode", 0) != 0;
    let include_pad = node.int("count_include_pad", 0) != 0;
    // ONNX's output size, and the extra end padding ceil_mode implies.
    let mut out = vec![s[0], s[1]];
    let mut extra = vec![0; n];
    for i in 0..n {
        let span = sp[i] + pads.begin[i] + pads.end[i] - k[i];
        if span < 0 {
            return Err("kernel larger than the padded input".into());
        }
        let mut o = span / st[i] + 1;
        if ceil {
            let mut oc = (span + st[i] - 1) / st[i] + 1;
            if (oc - 1) * st[i] >= sp[i] + pads.begin[i] {
                oc -= 1;
            }
            extra[i] = (oc - 1) * st[i] + k[i] - (sp[i] + pads.begin[i] + pads.end[i]);
            o = oc;
        }
        out.push(o);
    }
    let mut x = cx.fvar(node, 0)?;
    let needs_pad = pads.begin != pads.end || extra.iter().any(|&e| e > 0);
    let pad = if needs_pad {
        if !max && (extra.iter().any(|&e| e > 0) || !include_pad) {
            if n == 1 {
                return Err("1-D ceil_mode or asymmetric pads excluding padding".into());
            }
            let p = AvgPads {
                begin: &pads.begin,
                end: &pads.end,
                extra: &extra,
                include_pad,
            };
            return avg_by_counts(cx, &x, &sp, &k, &st, &p, &node.outputs[0], &out);
        }
        let end: Vec<i64> = (0..n).map(|i| pads.end[i] + extra[i].max(0)).collect();
        let v = if max { f32::NEG_INFINITY } else { 0.0 };
        x = pad_spatial(cx, &x, &pads.begin, &end, v)?;
        vec![0; n]
    } else {
        pads.begin.clone()
    };
    // NNabla pools 2-D and 3-D: a 1-D pool runs as 2-D with height 1.
    let (x, kk, ss, pp, one_d) = if n == 1 {
        let xs = cx.shape(&x)?;
        let x2 = cx.reshape(&x, &[xs[0], xs[1], 1, xs[2]])?;
        (x2, vec![1, k[0]], vec![1, st[0]], vec![0, pad[0]], true)
    } else {
        (x, k.clone(), st.clone(), pad.clone(), false)
    };
    let param = if max {
        P::MaxPoolingParam(MaxPoolingParameter {
            kernel: sh(&kk),
            stride: sh(&ss),
            ignore_border: true,
            pad: sh(&pp),
            channel_last: false,
        })
    } else {
        P::AveragePoolingParam(AveragePoolingParameter {
            kernel: sh(&kk),
            stride: sh(&ss),
            ignore_border: true,
            pad: sh(&pp),
            channel_last: false,
            including_pad: include_pad,
        })
    };
    let ty = if max { "MaxPooling" } else { "AveragePooling" };
    if one_d {
        let y = cx.fresh(&x);
        cx.emit(
            ty,
            &[&x],
            &[(&y, &[out[0], out[1], 1, out[2]])],
            Some(param),
        );
        cx.reshape_to(&y, &node.outputs[0], &out)
    } else {
        cx.emit(ty, &[&x], &[(&node.outputs[0], &out)], Some(param));
        Ok(())
    }
}

/// `Gemm`: `Affine` when B is a constant (transposes and alpha folded into
/// the weight), else `BatchMatmul`; C added (folded into the bias when it
/// is a constant vector).
pub(crate) fn gemm(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let alpha = f64::from(node.float("alpha", 1.0));
    let beta = f64::from(node.float("beta", 1.0));
    let (ta, tb) = (node.int("transA", 0) != 0, node.int("transB", 0) != 0);
    let sa = cx.in_shape(node, 0)?;
    let sb = cx.in_shape(node, 1)?;
    if sa.len() != 2 || sb.len() != 2 {
        return Err("inputs not 2-D".into());
    }
    let mut a = cx.fvar(node, 0)?;
    let m = if ta { sa[1] } else { sa[0] };
    let kk = if ta { sa[0] } else { sa[1] };
    if ta {
        let t = cx.fresh(&a);
        transpose_vars(cx, &a, &t, &[1, 0], &[m, kk]);
        a = t;
    }
    let nn = if tb { sb[0] } else { sb[1] };
    let out_name = node.outputs[0].clone();
    let c_name = node.input(2).map(str::to_string);
    let c_const = c_name.as_ref().and_then(|c| cx.konst(c).cloned());
    // A constant C that is a row vector (or scalar) becomes the bias.
    let bias: Option<Vec<f64>> = c_const.as_ref().and_then(|c| {
        let d = c.dims_i64();
        let v = c.values();
        match d.as_slice() {
            [] | [1] | [1, 1] => Some(vec![v[0] * beta; nn as usize]),
            [x] | [1, x] if *x == nn => Some(v.iter().map(|&q| q * beta).collect()),
            _ => None,
        }
    });
    let add_c = c_name.is_some() && bias.is_none() && beta != 0.0;
    let y = if add_c {
        cx.fresh(&out_name)
    } else {
        out_name.clone()
    };
    if let Some(bc) = node.input(1).and_then(|b| cx.konst(b)).cloned() {
        let wp = gemm_weight(cx, node.input(1).unwrap_or("W"), &bc, alpha, tb)?;
        let mut ins = vec![a, wp];
        if let Some(b) = &bias {
            // C itself when it is the bias as it is (f32 [N], beta 1)
            let same = beta == 1.0
                && c_const
                    .as_ref()
                    .is_some_and(|c| c.elem == elem::FLOAT && c.dims_i64() == [nn]);
            ins.push(match c_name.as_deref() {
                Some(cn) if same => cx.var(cn)?,
                cn => cx.param(&format!("{}__b", cn.unwrap_or("b")), &[nn], b)?,
            });
        }
        let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
        cx.emit(
            "Affine",
            &refs,
            &[(&y, &[m, nn])],
            Some(P::AffineParam(AffineParameter { base_axis: 1 })),
        );
    } else {
        let b = cx.fvar(node, 1)?;
        let a3 = cx.reshape(&a, &[1, m, kk])?;
        let b3 = cx.reshape(&b, &[1, sb[0], sb[1]])?;
        let t = cx.fresh(&y);
        cx.emit(
            "BatchMatmul",
            &[&a3, &b3],
            &[(&t, &[1, m, nn])],
            Some(P::BatchMatmulParam(BatchMatmulParameter {
                transpose_a: false,
                transpose_b: tb,
            })),
        );
        let mut t2 = cx.reshape(&t, &[m, nn])?;
        if alpha != 1.0 {
            t2 = chain(cx, &t2, "MulScalar", mul_scalar(alpha))?;
        }
        match &bias {
            Some(bv) => {
                let bname = format!("{}__b", c_name.as_deref().unwrap_or("b"));
                let bp = cx.param(&bname, &[1, nn], bv)?;
                binary_vars(cx, "Add2", &t2, &bp, Some(&y), elem::FLOAT)?;
            }
            None => chain_to(cx, &t2, &y, "Identity", None)?,
        }
    }
    if add_c {
        let mut c = cx.fvar(node, 2)?;
        if beta != 1.0 {
            c = chain(cx, &c, "MulScalar", mul_scalar(beta))?;
        }
        binary_vars(cx, "Add2", &y, &c, Some(&out_name), elem::FLOAT)?;
    }
    Ok(())
}

/// The `Affine` weight `[K, N]` of a `Gemm` whose B is the constant `bc`
/// (named `name`): B itself, keeping its ONNX name, when it is that weight
/// already (f32, `transB` 0, `alpha` 1); its transpose named `{name}__T`
/// (with `alpha` 1), which the NNabla → ONNX export turns back into B
/// named `name` and `Gemm` `transB` 1; else B scaled by `alpha` (and
/// transposed) as `{name}__W`.
fn gemm_weight(
    cx: &mut Cx<'_>,
    name: &str,
    bc: &Const,
    alpha: f64,
    tb: bool,
) -> Result<String, LowerError> {
    let f32_b = bc.elem == elem::FLOAT;
    if f32_b && alpha == 1.0 && !tb {
        return cx.weight_var(name);
    }
    let restorable = tb && alpha == 1.0 && f32_b;
    let tname = format!("{name}__T");
    if restorable && cx.made_param(&tname) {
        // made for an earlier Gemm reading the same B
        return cx.var(&tname);
    }
    // (an ONNX value of that name would be taken for the transpose)
    let free = !cx.names_onnx_value(&tname) && cx.shape(&tname).is_err();
    let v = bc.values();
    let d = bc.dims_i64();
    let (r, c) = match d[..] {
        [r, c] => (
            usize::try_from(r).unwrap_or(0),
            usize::try_from(c).unwrap_or(0),
        ),
        _ => return Err("B not 2-D".into()),
    };
    let mut w = vec![0.0; r * c];
    for i in 0..r {
        for j in 0..c {
            let val = v[i * c + j] * alpha;
            if tb {
                w[j * r + i] = val;
            } else {
                w[i * c + j] = val;
            }
        }
    }
    let dims = if tb { [d[1], d[0]] } else { [d[0], d[1]] };
    let wname = if restorable && free {
        tname
    } else {
        format!("{name}__W")
    };
    cx.param(&wname, &dims, &w)
}

/// `MatMul` with numpy semantics: `Affine` for a constant 2-D right side,
/// else `BatchMatmul` with the batch dimensions broadcast.
pub(crate) fn matmul(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let sa = cx.in_shape(node, 0)?;
    let sb = cx.in_shape(node, 1)?;
    if sa.is_empty() || sb.is_empty() {
        return Err("a scalar operand".into());
    }
    let out_name = node.outputs[0].clone();
    let a0 = cx.fvar(node, 0)?;
    let (a, sa2) = if sa.len() == 1 {
        (cx.reshape(&a0, &[1, sa[0]])?, vec![1, sa[0]])
    } else {
        (a0, sa.clone())
    };
    let b_const = node.input(1).and_then(|b| cx.konst(b)).is_some();
    let k = sa2[sa2.len() - 1];
    // Final output dims (numpy matmul).
    let mut out: Vec<i64>;
    if b_const && sb.len() <= 2 {
        let (kb, n) = if sb.len() == 1 {
            (sb[0], 1)
        } else {
            (sb[0], sb[1])
        };
        if kb != k {
            return Err("inner dimensions differ".into());
        }
        let bname = node.input(1).unwrap_or("B").to_string();
        let c = cx.konst(&bname).cloned().ok_or("B")?;
        // B itself (its ONNX name kept) when it is the weight as it is
        let w = if sb.len() == 2 && c.elem == elem::FLOAT {
            cx.weight_var(&bname)?
        } else {
            cx.param(&format!("{bname}__W"), &[k, n], &c.values())?
        };
        let mut aff_out = sa2[..sa2.len() - 1].to_vec();
        aff_out.push(n);
        out = sa[..sa.len() - 1].to_vec();
        if sb.len() == 2 {
            out.push(n);
        }
        let y = if aff_out == out {
            out_name.clone()
        } else {
            cx.fresh(&out_name)
        };
        cx.emit(
            "Affine",
            &[&a, &w],
            &[(&y, &aff_out)],
            Some(P::AffineParam(AffineParameter {
                base_axis: sa2.len() as i64 - 1,
            })),
        );
        if y != out_name {
            cx.reshape_to(&y, &out_name, &out)?;
        }
        return Ok(());
    }
    let b0 = cx.fvar(node, 1)?;
    let (b, sb2) = if sb.len() == 1 {
        (cx.reshape(&b0, &[sb[0], 1])?, vec![sb[0], 1])
    } else {
        (b0, sb.clone())
    };
    if sb2[sb2.len() - 2] != k {
        return Err("inner dimensions differ".into());
    }
    let r = sa2.len().max(sb2.len()).max(3);
    let a = cx.with_rank(&a, r)?;
    let b = cx.with_rank(&b, r)?;
    let (sa3, sb3) = (cx.shape(&a)?, cx.shape(&b)?);
    let batch = super::nnabla_cx::broadcast_shapes(&sa3[..r - 2], &sb3[..r - 2])?;
    let mut ta = batch.clone();
    ta.extend_from_slice(&sa3[r - 2..]);
    let mut tb = batch.clone();
    tb.extend_from_slice(&sb3[r - 2..]);
    let a = super::nnabla_ops_elementwise::broadcast_to(cx, &a, &ta)?;
    let b = super::nnabla_ops_elementwise::broadcast_to(cx, &b, &tb)?;
    let mut bm_out = batch.clone();
    bm_out.push(sa3[r - 2]);
    bm_out.push(sb3[r - 1]);
    // numpy's result: batch dims of the original ranks, 1-D sides dropped.
    let orig_r = sa.len().max(sb.len());
    out = bm_out[bm_out.len() - orig_r.max(2)..].to_vec();
    if sa.len() == 1 {
        out.remove(out.len() - 2);
    }
    if sb.len() == 1 {
        out.pop();
    }
    let y = if bm_out == out {
        out_name.clone()
    } else {
        cx.fresh(&out_name)
    };
    cx.emit(
        "BatchMatmul",
        &[&a, &b],
        &[(&y, &bm_out)],
        Some(P::BatchMatmulParam(BatchMatmulParameter {
            transpose_a: false,
            transpose_b: false,
        })),
    );
    if y != out_name {
        cx.reshape_to(&y, &out_name, &out)?;
    }
    Ok(())
}

/// `LRN`: `x / (bias + alpha / size * sum of x² over a window of
/// channels)^beta`, the channel sum a `SumPooling` over the squared input
/// padded with zeros (floor((size-1)/2) before, the rest after).
pub(crate) fn lrn(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    let x = cx.fvar(node, 0)?;
    let s = cx.shape(&x)?;
    if s.len() < 3 || s[1..].iter().any(|&d| d < 0) {
        return Err("input rank below 3 or symbolic channels".into());
    }
    let size = node.int("size", 0);
    if size < 1 {
        return Err("size".into());
    }
    let alpha = f64::from(node.float("alpha", 1e-4));
    let beta = f64::from(node.float("beta", 0.75));
    let bias = f64::from(node.float("bias", 1.0));
    let c = s[1];
    let hw: i64 = s[2..].iter().product();
    let sq = binary_vars(cx, "Mul2", &x, &x, None, elem::FLOAT)?;
    let r = cx.reshape(&sq, &[s[0], 1, c, hw])?;
    let (b, e) = ((size - 1) / 2, size - 1 - (size - 1) / 2);
    let p = pad_spatial(cx, &r, &[b, 0], &[e, 0], 0.0)?;
    let sum = cx.fresh(&p);
    cx.emit(
        "SumPooling",
        &[&p],
        &[(&sum, &[s[0], 1, c, hw])],
        Some(P::SumPoolingParam(SumPoolingParameter {
            kernel: sh(&[size, 1]),
            stride: sh(&[1, 1]),
            ignore_border: true,
            pad: sh(&[0, 0]),
            channel_last: false,
        })),
    );
    let t = cx.reshape(&sum, &s)?;
    let t = chain(cx, &t, "MulScalar", mul_scalar(alpha / size as f64))?;
    let t = chain(
        cx,
        &t,
        "AddScalar",
        Some(P::AddScalarParam(AddScalarParameter {
            val: bias,
            inplace: false,
        })),
    )?;
    let t = chain(
        cx,
        &t,
        "PowScalar",
        Some(P::PowScalarParam(PowScalarParameter {
            val: -beta,
            inplace: false,
        })),
    )?;
    let out = node.outputs[0].clone();
    binary_vars(cx, "Mul2", &x, &t, Some(&out), elem::FLOAT)?;
    Ok(())
}

/// Padding of an average pool computed as a sum over a count.
struct AvgPads<'a> {
    begin: &'a [i64],
    end: &'a [i64],
    extra: &'a [i64],
    include_pad: bool,
}

/// An average pool ONNX pads in ways NNabla's `AveragePooling` cannot
/// (asymmetric pads that do not count, or the extra window of
/// `ceil_mode`): the `SumPooling` of the zero-padded input divided by the
/// `SumPooling` of a mask of the elements ONNX counts.
#[allow(clippy::too_many_arguments)]
fn avg_by_counts(
    cx: &mut Cx<'_>,
    x: &str,
    sp: &[i64],
    k: &[i64],
    st: &[i64],
    p: &AvgPads<'_>,
    out_name: &str,
    out_dims: &[i64],
) -> Lowered {
    let n = sp.len();
    let end_full: Vec<i64> = (0..n).map(|i| p.end[i] + p.extra[i].max(0)).collect();
    let zeros = vec![0i64; n];
    let param = || {
        Some(P::SumPoolingParam(SumPoolingParameter {
            kernel: sh(k),
            stride: sh(st),
            ignore_border: true,
            pad: sh(&zeros),
            channel_last: false,
        }))
    };
    let xp = pad_spatial(cx, x, p.begin, &end_full, 0.0)?;
    let sum = cx.fresh(&xp);
    cx.emit("SumPooling", &[&xp], &[(&sum, out_dims)], param());
    let mut md = vec![1i64, 1];
    md.extend_from_slice(sp);
    let mask = cx.fresh(&format!("{out_name}__mask"));
    cx.emit(
        "Constant",
        &[],
        &[(&mask, &md)],
        Some(P::ConstantParam(ConstantParameter {
            val: 1.0,
            shape: sh(&md),
        })),
    );
    let fill = if p.include_pad { 1.0 } else { 0.0 };
    let mut m = pad_spatial(cx, &mask, p.begin, p.end, fill)?;
    if p.extra.iter().any(|&e| e > 0) {
        let extra: Vec<i64> = p.extra.iter().map(|&e| e.max(0)).collect();
        m = pad_spatial(cx, &m, &zeros, &extra, 0.0)?;
    }
    let mut cd = vec![1i64, 1];
    cd.extend_from_slice(&out_dims[2..]);
    let cnt = cx.fresh(&m);
    cx.emit("SumPooling", &[&m], &[(&cnt, &cd)], param());
    binary_vars(cx, "Div2", &sum, &cnt, Some(out_name), elem::FLOAT)?;
    Ok(())
}
