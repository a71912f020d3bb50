//! ONNX → TenniS lowerings: activations TenniS has as operators (`erf`,
//! `softplus`, `hard_sigmoid`, `pow`) and the ones composed exactly from
//! them (`HardSwish`, `Elu`, `Selu`).

use super::onnx_graph::Node;
use super::tennis_cx::{Lowered, Tx, kv, p_float};

fn out(node: &Node) -> Result<&str, String> {
    node.outputs
        .first()
        .map(String::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "no output".to_string())
}

/// `Erf` → `erf`, `Softplus` → `softplus` (log(exp(x) + 1)).
pub(crate) fn unary(cx: &mut Tx<'_>, node: &Node) -> Lowered {
    let op = match node.op.as_str() {
        "Erf" => "erf",
        "Softplus" => "softplus",
        o => return Err(format!("no TenniS operator for {o}")),
    };
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    cx.emit(op, out(node)?, &[x], vec![], &d)?;
    Ok(())
}

/// `HardSigmoid` → `hard_sigmoid` (max(0, min(1, alpha·x + beta)));
/// `HardSwish` → x · hard_sigmoid(x) with alpha 1/6, beta 0.5.
pub(crate) fn hard(cx: &mut Tx<'_>, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?;
    let (alpha, beta) = if node.op == "HardSwish" {
        (1.0 / 6.0, 0.5)
    } else {
        (node.float("alpha", 0.2), node.float("beta", 0.5))
    };
    let params = vec![kv("alpha", p_float(alpha)), kv("beta", p_float(beta))];
    if node.op == "HardSwish" {
        let h = cx.tmp("hard_sigmoid", o, &[x], params, &d)?;
        cx.emit("mul", o, &[x, h], vec![], &d)?;
    } else {
        cx.emit("hard_sigmoid", o, &[x], params, &d)?;
    }
    Ok(())
}

/// `Elu` (x for x ≥ 0, alpha·(exp(x) − 1) below) and `Selu` (gamma times
/// the same): max(x, 0) + alpha·(exp(x − max(x, 0)) − 1), whose negative
/// part is exactly 0 where x ≥ 0.
pub(crate) fn elu(cx: &mut Tx<'_>, node: &Node) -> Lowered {
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let o = out(node)?.to_string();
    let selu = node.op == "Selu";
    let alpha = if selu {
        node.float("alpha", 1.673_263_2)
    } else {
        node.float("alpha", 1.0)
    };
    let zero = cx.scalar(&o, 0.0)?;
    let one = cx.scalar(&o, 1.0)?;
    let a = cx.scalar(&o, f64::from(alpha))?;
    let pos = cx.tmp("maximum", &o, &[x, zero], vec![], &d)?;
    let neg = cx.tmp("sub", &o, &[x, pos], vec![], &d)?;
    let e = cx.tmp("exp", &o, &[neg], vec![], &d)?;
    let em = cx.tmp("sub", &o, &[e, one], vec![], &d)?;
    let ae = cx.tmp("mul", &o, &[em, a], vec![], &d)?;
    if selu {
        let g = cx.scalar(&o, f64::from(node.float("gamma", 1.050_701)))?;
        let s = cx.tmp("add", &o, &[pos, ae], vec![], &d)?;
        cx.emit("mul", &o, &[s, g], vec![], &d)?;
    } else {
        cx.emit("add", &o, &[pos, ae], vec![], &d)?;
    }
    Ok(())
}

/// `Pow` with a constant single-valued exponent → `pow` (`y`).
pub(crate) fn pow(cx: &mut Tx<'_>, node: &Node) -> Lowered {
    if cx.opset < 7 {
        return Err("legacy broadcast attributes".into());
    }
    let x = cx.fin(node, 0)?;
    let d = cx.in_shape(node, 0)?;
    let y = cx
        .const_floats(node, 1)
        .ok_or("an exponent computed at run time (TenniS's pow takes a constant)")?;
    if y.len() != 1 {
        return Err(format!(
            "an exponent of {} values (TenniS's pow takes one)",
            y.len()
        ));
    }
    let yd = cx.in_shape(node, 1)?;
    if yd.len() > d.len() {
        return Err("an exponent of higher rank than the base".into());
    }
    cx.emit(
        "pow",
        out(node)?,
        &[x],
        vec![kv("y", p_float(y[0] as f32))],
        &d,
    )?;
    Ok(())
}
