//! ONNX → NNabla lowerings: the recurrent layers `RNN` and `LSTM` as
//! NNabla's one-layer `RNN` / `LSTM`. The weights may be computed at run
//! time: `W` and `R` are joined into NNabla's `weight_l0` (`(D, H, I+H)`,
//! `(D, 4, H, I+H)` with the gates reordered from ONNX's i, o, f, c to
//! NNabla's i, f, c, o), the two ONNX biases summed into one.

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::*;

use super::LowerError;
use super::nnabla_cx::{Cx, Lowered};
use super::nnabla_ops_shape::transpose_vars;
use super::onnx_graph::{Node, elem};
use super::table::lowerings;

lowerings! { Cx<'_>;
    /// `RNN` → NNabla's `RNN`.
    rnn(cx, node) => recurrent(cx, node, false);
    /// `LSTM` → NNabla's `LSTM`.
    lstm(cx, node) => recurrent(cx, node, true);
}

/// NNabla's LSTM gate `k` is ONNX's gate `LSTM_GATES[k]` (i, f, c, o from
/// ONNX's i, o, f, c).
const LSTM_GATES: [f64; 4] = [0.0, 2.0, 3.0, 1.0];

fn dim(v: i64) -> Result<i64, LowerError> {
    if v <= 0 {
        return Err(LowerError::needs_shape(
            "a recurrent layer over a symbolic or empty dimension",
        ));
    }
    Ok(v)
}

/// `x` (f32 variable) reshaped, concatenated, gathered: small helpers.
fn concat(cx: &mut Cx<'_>, parts: &[&str], axis: i64, dims: &[i64]) -> String {
    let y = cx.fresh(parts[0]);
    cx.emit(
        "Concatenate",
        parts,
        &[(&y, dims)],
        Some(P::ConcatenateParam(ConcatenateParameter { axis })),
    );
    y
}

fn flip(cx: &mut Cx<'_>, x: &str, axis: i64, out: Option<&str>) -> Result<String, LowerError> {
    let d = cx.shape(x)?;
    let y = out.map_or_else(|| cx.fresh(x), str::to_string);
    cx.emit(
        "Flip",
        &[x],
        &[(&y, &d)],
        Some(P::FlipParam(FlipParameter { axes: vec![axis] })),
    );
    Ok(y)
}

/// The LSTM gates of `x` (gate axis 1, 4 entries) in NNabla's order.
fn lstm_gates(cx: &mut Cx<'_>, x: &str) -> Result<String, LowerError> {
    let d = cx.shape(x)?;
    let idx = cx.param(&format!("{x}__gates"), &[4], &LSTM_GATES)?;
    let y = cx.fresh(x);
    cx.emit(
        "Gather",
        &[x, &idx],
        &[(&y, &d)],
        Some(P::GatherParam(GatherParameter {
            axis: 1,
            batch_dims: 0,
        })),
    );
    Ok(y)
}

pub(crate) fn transpose(
    cx: &mut Cx<'_>,
    x: &str,
    perm: &[i64],
    out: Option<&str>,
) -> Result<String, LowerError> {
    let s = cx.shape(x)?;
    let d: Vec<i64> = perm.iter().map(|&a| s[a as usize]).collect();
    let y = out.map_or_else(|| cx.fresh(x), str::to_string);
    transpose_vars(cx, x, &y, perm, &d);
    Ok(y)
}

/// The refusals shared by `RNN`, `LSTM` and `GRU`: `clip`, activation
/// alpha and beta, `sequence_lens`, and (where `gates` names them, in
/// lowercase, for one direction) activations other than `gates`, `why`
/// saying what is lowered; a direction or a layout ONNX does not define.
/// Gives the count of directions and the layout.
pub(crate) fn check_attrs(
    node: &Node,
    gates: &[&str],
    why: &str,
) -> Result<(i64, i64), LowerError> {
    if node.attr("clip").is_some() {
        return Err("clip (not lowered)".into());
    }
    if node.attr("activation_alpha").is_some() || node.attr("activation_beta").is_some() {
        return Err("activation_alpha/activation_beta".into());
    }
    if node.input(4).is_some() {
        return Err("sequence_lens (every sequence is run to its full length)".into());
    }
    if let Some(a) = node.attr("activations").filter(|_| !gates.is_empty()) {
        let names: Vec<String> = a
            .strings
            .iter()
            .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
            .collect();
        if names.chunks(gates.len()).any(|c| c != gates) {
            return Err(LowerError::Other(format!("activations={names:?} ({why})")));
        }
    }
    let nd: i64 = match node.string("direction", "forward").as_str() {
        "forward" | "reverse" => 1,
        "bidirectional" => 2,
        other => {
            return Err(LowerError::attr("direction", format!("{other:?}")));
        }
    };
    let layout = node.int("layout", 0);
    if layout != 0 && layout != 1 {
        return Err(LowerError::attr("layout", format!("{layout}")));
    }
    Ok((nd, layout))
}

/// The nonlinearity of an ONNX `RNN` (`tanh` or `relu`, every direction
/// the same).
fn rnn_nonlinearity(node: &Node) -> Result<String, LowerError> {
    let Some(a) = node.attr("activations") else {
        return Ok("tanh".into());
    };
    let names: Vec<String> = a
        .strings
        .iter()
        .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
        .collect();
    match names.first().map(String::as_str) {
        Some(n @ ("tanh" | "relu")) if names.iter().all(|m| m == n) => Ok(n.to_string()),
        _ => Err(LowerError::Other(format!(
            "activations={names:?} (NNabla's RNN computes tanh or relu)"
        ))),
    }
}

/// `RNN` and `LSTM` (`lstm`; forward, reverse, bidirectional; layout 0
/// and 1).
fn recurrent(cx: &mut Cx<'_>, node: &Node, lstm: bool) -> Lowered {
    cx.dims_within_limits(node)?;
    let gates: &[&str] = if lstm {
        &["sigmoid", "tanh", "tanh"]
    } else {
        &[]
    };
    let (nd, layout) = check_attrs(node, gates, "NNabla's LSTM uses Sigmoid, Tanh, Tanh")?;
    if lstm && node.int("input_forget", 0) != 0 {
        return Err("input_forget=1 (coupled gates)".into());
    }
    if lstm && node.input(7).is_some() {
        return Err("peephole weights P (NNabla's LSTM has no peepholes)".into());
    }
    let nonlin = if lstm {
        String::new()
    } else {
        rnn_nonlinearity(node)?
    };
    let g: i64 = if lstm { 4 } else { 1 };
    // The sequence as (T, B, I).
    let mut x = cx.fvar(node, 0)?;
    let xs = cx.shape(&x)?;
    if xs.len() != 3 {
        return Err("an input of rank other than 3".into());
    }
    if layout == 1 {
        x = transpose(cx, &x, &[1, 0, 2], None)?;
    }
    let xs = cx.shape(&x)?;
    let (t, b, i) = (dim(xs[0])?, dim(xs[1])?, dim(xs[2])?);
    let w = cx.fvar(node, 1)?;
    let r = cx.fvar(node, 2)?;
    let ws = cx.shape(&w)?;
    let h = node.int("hidden_size", 0);
    let h = if h > 0 {
        h
    } else {
        ws.get(1).copied().unwrap_or(0).checked_div(g).unwrap_or(0)
    };
    let h = dim(h)?;
    let gh = g.checked_mul(h).ok_or("hidden_size")?;
    if ws != [nd, gh, i] || cx.shape(&r)? != [nd, gh, h] {
        return Err("W or R of another shape than the direction, gates and sizes give".into());
    }
    // weight_l0: (D, [4,] H, I + H).
    let wr = if lstm {
        let w4 = cx.reshape(&w, &[nd, 4, h, i])?;
        let r4 = cx.reshape(&r, &[nd, 4, h, h])?;
        let j = concat(cx, &[&w4, &r4], 3, &[nd, 4, h, i + h]);
        lstm_gates(cx, &j)?
    } else {
        concat(cx, &[&w, &r], 2, &[nd, h, i + h])
    };
    let bias = match node.input(3) {
        None => None,
        Some(_) => Some(bias(cx, node, lstm, nd, h, gh)?),
    };
    let sz = Sizes {
        t,
        b,
        nd,
        h,
        layout,
    };
    let hd = [1, nd, b, h];
    let h0 = initial_state(cx, node, 5, "initial_h", sz)?;
    let c0 = if lstm {
        Some(initial_state(cx, node, 6, "initial_c", sz)?)
    } else {
        None
    };
    let reverse = node.string("direction", "forward") == "reverse";
    if reverse {
        x = flip(cx, &x, 0, None)?;
    }
    let y = cx.fresh(&format!("{}__y", node.name));
    let hn = cx.fresh(&format!("{}__h", node.name));
    let cn = cx.fresh(&format!("{}__c", node.name));
    let mut ins: Vec<&str> = vec![&x, &h0];
    if let Some(c0) = &c0 {
        ins.push(c0);
    }
    ins.push(&wr);
    if let Some(bias) = &bias {
        ins.push(bias);
    }
    let yd = [t, b, nd * h];
    if lstm {
        cx.emit(
            "LSTM",
            &ins,
            &[(&y, &yd), (&hn, &hd), (&cn, &hd)],
            Some(P::LstmParam(LstmParameter {
                num_layers: 1,
                dropout: 0.0,
                bidirectional: nd == 2,
                training: false,
            })),
        );
    } else {
        cx.emit(
            "RNN",
            &ins,
            &[(&y, &yd), (&hn, &hd)],
            Some(P::RnnParam(RnnParameter {
                num_layers: 1,
                nonlinearity: nonlin,
                dropout: 0.0,
                bidirectional: nd == 2,
                training: false,
            })),
        );
    }
    outputs(cx, node, reverse, sz, y, [hn, cn])?;
    Ok(())
}

/// A lowered value (its variable) or a refusal reason.
type Lowered2 = Result<String, LowerError>;

/// The sizes of one recurrence: steps, batch, directions, hidden size, and
/// the ONNX layout (0: sequence first, 1: batch first).
#[derive(Clone, Copy)]
struct Sizes {
    t: i64,
    b: i64,
    nd: i64,
    h: i64,
    layout: i64,
}

/// The bias NNabla takes, (1, D, \[4,\] H): ONNX's `B` input summed as
/// Wb + Rb.
/// (`gh` is the gates times the hidden size.)
fn bias(cx: &mut Cx<'_>, node: &Node, lstm: bool, nd: i64, h: i64, gh: i64) -> Lowered2 {
    let bv = cx.fvar(node, 3)?;
    if cx.shape(&bv)? != [nd, 2 * gh] {
        return Err("B of another shape than the direction and sizes give".into());
    }
    let b2 = cx.reshape(&bv, &[nd, 2, gh])?;
    let s = cx.fresh(&b2);
    cx.emit(
        "Sum",
        &[&b2],
        &[(&s, &[nd, gh])],
        Some(P::SumParam(SumParameter {
            axes: vec![1],
            keep_dims: false,
        })),
    );
    Ok(if lstm {
        let s4 = cx.reshape(&s, &[nd, 4, h])?;
        let s4 = lstm_gates(cx, &s4)?;
        cx.reshape(&s4, &[1, nd, 4, h])?
    } else {
        cx.reshape(&s, &[1, nd, h])?
    })
}

/// The initial state of input `k` (`tag`) as (1, D, B, H), zeros when the
/// input is left out.
fn initial_state(cx: &mut Cx<'_>, node: &Node, k: usize, tag: &str, sz: Sizes) -> Lowered2 {
    let Sizes {
        b, nd, h, layout, ..
    } = sz;
    let hd = [1, nd, b, h];
    if node.input(k).is_none() {
        let nz = usize::try_from(nd * b)
            .ok()
            .and_then(|v| v.checked_mul(usize::try_from(h).ok()?))
            .ok_or("state size")?;
        return cx.param(&format!("{}__{tag}", node.name), &hd, &vec![0.0; nz]);
    }
    let v = cx.fvar(node, k)?;
    let want = if layout == 1 { [b, nd, h] } else { [nd, b, h] };
    if cx.shape(&v)? != want {
        return Err(LowerError::Other(format!(
            "{tag} of another shape than (D, B, H)"
        )));
    }
    let v = if layout == 1 {
        transpose(cx, &v, &[1, 0, 2], None)?
    } else {
        v
    };
    cx.reshape(&v, &hd)
}

/// The ONNX outputs from NNabla's: `Y` from (T, B, D*H) to (T, D, B, H)
/// (layout 0) or (B, T, D, H); `Y_h`, `Y_c` from (1, D, B, H) to
/// (D, B, H) or (B, D, H).
fn outputs(
    cx: &mut Cx<'_>,
    node: &Node,
    reverse: bool,
    sz: Sizes,
    y: String,
    states: [String; 2],
) -> Lowered {
    let Sizes {
        t,
        b,
        nd,
        h,
        layout,
    } = sz;
    // Y: (T, B, D*H) -> (T, D, B, H) (layout 0) or (B, T, D, H).
    if node.has_output(0) {
        let out = &node.outputs[0];
        let y = if reverse { flip(cx, &y, 0, None)? } else { y };
        let y4 = cx.reshape(&y, &[t, b, nd, h])?;
        let perm: &[i64] = if layout == 1 {
            &[1, 0, 2, 3]
        } else {
            &[0, 2, 1, 3]
        };
        transpose(cx, &y4, perm, Some(out))?;
        cx.set_elem(out, elem::FLOAT);
    }
    // Y_h, Y_c: (1, D, B, H) -> (D, B, H) (layout 0) or (B, D, H).
    for (k, v) in [1usize, 2].into_iter().zip(states) {
        if !node.has_output(k) {
            continue;
        }
        let out = &node.outputs[k];
        if layout == 1 {
            let s = cx.reshape(&v, &[nd, b, h])?;
            transpose(cx, &s, &[1, 0, 2], Some(out))?;
        } else {
            cx.reshape_to(&v, out, &[nd, b, h])?;
        }
        cx.set_elem(out, elem::FLOAT);
    }
    Ok(())
}

/// `CausalConvWithState` (opset 27): the past state (or zeros) before the
/// input, a depthwise `Convolution` (group = channels) over it, SiLU when
/// asked, and the last `k - 1` positions as the present state.
pub(crate) fn causal_conv(cx: &mut Cx<'_>, node: &Node) -> Lowered {
    cx.dims_within_limits(node)?;
    let act = node.string("activation", "none");
    if !matches!(act.as_str(), "none" | "silu" | "swish") {
        return Err(LowerError::attr("activation", format!("{act:?}")));
    }
    let x = cx.fvar(node, 0)?;
    let w = cx.fvar(node, 1)?;
    let (xs, ws) = (cx.shape(&x)?, cx.shape(&w)?);
    if xs.len() != 3 || xs.iter().any(|&d| d <= 0) {
        return Err("an input of rank other than 3 or with symbolic dimensions".into());
    }
    let (b, c, l) = (xs[0], xs[1], xs[2]);
    if ws.len() != 3 || ws[0] != c || ws[1] != 1 || ws[2] <= 0 {
        return Err("a weight of another shape than (C, 1, k)".into());
    }
    let k = ws[2];
    let sd = [b, c, k - 1];
    let padded = if k > 1 {
        let past = match node.input(3) {
            Some(_) => {
                let p = cx.fvar(node, 3)?;
                if cx.shape(&p)? != sd {
                    return Err("a past_state of another shape than (B, C, k - 1)".into());
                }
                p
            }
            None => {
                let n = usize::try_from(b * c)
                    .ok()
                    .and_then(|v| v.checked_mul(usize::try_from(k - 1).ok()?))
                    .ok_or("state size")?;
                cx.param(
                    &format!("{}__zero_state", node.outputs[0]),
                    &sd,
                    &vec![0.0; n],
                )?
            }
        };
        concat(cx, &[&past, &x], 2, &[b, c, l + k - 1])
    } else {
        x
    };
    let mut ins: Vec<String> = vec![padded.clone(), w];
    if node.input(2).is_some() {
        let bias = cx.fvar(node, 2)?;
        if cx.shape(&bias)? != [c] {
            return Err("a bias of another shape than (C)".into());
        }
        ins.push(bias);
    }
    let od = [b, c, l];
    let silu = act != "none";
    let conv = if silu {
        cx.fresh(&node.outputs[0])
    } else {
        node.outputs[0].clone()
    };
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    cx.emit(
        "Convolution",
        &refs,
        &[(&conv, &od)],
        Some(P::ConvolutionParam(ConvolutionParameter {
            base_axis: 1,
            pad: Some(Shape { dim: vec![0] }),
            stride: Some(Shape { dim: vec![1] }),
            dilation: Some(Shape { dim: vec![1] }),
            group: c,
            channel_last: false,
        })),
    );
    cx.set_elem(&conv, elem::FLOAT);
    if silu {
        let s = cx.fresh(&conv);
        cx.emit("Sigmoid", &[&conv], &[(&s, &od)], None);
        cx.emit("Mul2", &[&conv, &s], &[(&node.outputs[0], &od)], None);
        cx.set_elem(&node.outputs[0], elem::FLOAT);
    }
    if node.has_output(1) {
        if k == 1 {
            return Err("an empty present_state (kernel size 1)".into());
        }
        let out = &node.outputs[1];
        cx.emit(
            "Slice",
            &[&padded],
            &[(out, &sd)],
            Some(P::SliceParam(SliceParameter {
                start: vec![0, 0, l],
                stop: vec![b, c, l + k - 1],
                step: vec![1, 1, 1],
            })),
        );
        cx.set_elem(out, elem::FLOAT);
    }
    Ok(())
}
