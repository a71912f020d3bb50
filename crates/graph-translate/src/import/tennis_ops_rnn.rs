//! ONNX → TenniS lowering of `LSTM`.

use super::LowerError;
use super::onnx_graph::Node;
use super::tennis_cx::{Lowered, Tx, kv, p_int, p_ints, p_str};

/// `LSTM` → `LSTM` (TenniS's: ONNX's layouts and gate order i, o, f, c,
/// the default activations; a packed output of Y, Y_h, Y_c read with
/// `_field`). A missing B is zeros, a missing initial state a 0-d zero
/// (TenniS starts from zeros for a state of rank below 3). TenniS runs
/// `forward` and `bidirectional` only (it reads `reverse` as forward):
/// `reverse` runs forward over the sequence reversed by `strided_slice`
/// (step −1), Y reversed back; sequence lengths, peepholes, `clip`, `input_forget`, `layout` 1 and
/// other activations are refused.
pub(crate) fn lstm(cx: &mut Tx, node: &Node) -> Lowered {
    let dir = node.string("direction", "forward");
    let nd: i64 = match dir.as_str() {
        "forward" | "reverse" => 1,
        "bidirectional" => 2,
        d => return Err(LowerError::Other(format!("direction {d}"))),
    };
    let reverse = dir == "reverse";
    if node.attr("clip").is_some() {
        return Err("clip".into());
    }
    if node.int("input_forget", 0) != 0 {
        return Err("input_forget 1".into());
    }
    if node.int("layout", 0) != 0 {
        return Err("layout 1 (batch first)".into());
    }
    if let Some(a) = node.attr("activations") {
        let want: Vec<&str> = ["Sigmoid", "Tanh", "Tanh"]
            .iter()
            .cycle()
            .take(3 * nd as usize)
            .copied()
            .collect();
        let got: Vec<String> = a
            .strings
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        if got.iter().map(String::as_str).collect::<Vec<_>>() != want {
            return Err(LowerError::Other(format!(
                "activations {got:?} (TenniS has the defaults only)"
            )));
        }
    }
    for (i, what) in [(4, "sequence_lens"), (7, "peepholes (P)")] {
        if node.input(i).is_some() {
            return Err(LowerError::Other(format!(
                "{what} (TenniS's LSTM has none)"
            )));
        }
    }
    let h = node.int("hidden_size", 0);
    let d = cx.in_shape(node, 0)?;
    if d.len() != 3 || d.iter().any(|&v| v < 1) {
        return Err("an input that is not a static [seq, batch, input]".into());
    }
    // a zero bias of nd · 8 · hidden_size may be made: bounded
    if !(1..=1 << 20).contains(&h) {
        return Err(LowerError::Other(format!("hidden_size {h}")));
    }
    let wd = cx.in_shape(node, 1)?;
    let rd = cx.in_shape(node, 2)?;
    if wd != [nd, 4 * h, d[2]] || rd != [nd, 4 * h, h] {
        return Err(LowerError::Other(format!(
            "W of shape {wd:?} or R of shape {rd:?}"
        )));
    }
    let o = node
        .outputs
        .iter()
        .find(|o| !o.is_empty())
        .ok_or(LowerError::NoOutput)?
        .clone();
    let mut x = cx.fin(node, 0)?;
    let flip = |cx: &mut Tx, v, dims: &[i64], out: Option<&str>| {
        let mut begin = vec![0; dims.len()];
        let mut end = dims.to_vec();
        let mut stride = vec![1; dims.len()];
        begin[0] = dims[0] - 1;
        end[0] = -(dims[0] + 1);
        stride[0] = -1;
        let params = vec![
            kv("begin", p_ints(&begin)),
            kv("end", p_ints(&end)),
            kv("stride", p_ints(&stride)),
        ];
        match out {
            Some(out) => cx.emit("strided_slice", out, &[v], params, dims),
            None => cx.tmp("strided_slice", &o, &[v], params, dims),
        }
    };
    if reverse {
        x = flip(cx, x, &d, None)?;
    }
    let w = cx.fin(node, 1)?;
    let r = cx.fin(node, 2)?;
    let b = if node.input(3).is_some() {
        cx.fin(node, 3)?
    } else {
        let z = vec![0.0; usize::try_from(nd * 8 * h).map_err(|_| "hidden_size")?];
        cx.const_f32(&o, &[nd, 8 * h], &z)?
    };
    let mut ins = vec![x, w, r, b];
    for i in [5, 6] {
        ins.push(if node.input(i).is_some() {
            let s = cx.in_shape(node, i)?;
            if s != [nd, d[1], h] {
                return Err(LowerError::Other(format!(
                    "an initial state of shape {s:?}"
                )));
            }
            cx.fin(node, i)?
        } else {
            cx.scalar(&o, 0.0)?
        });
    }
    let ts_dir = if reverse { "forward" } else { dir.as_str() };
    let params = vec![kv("direction", p_str(ts_dir)), kv("hidden_size", p_int(h))];
    let packed = cx.tmp("LSTM", &o, &ins, params, &[d[0], nd, d[1], h])?;
    let shapes = [
        vec![d[0], nd, d[1], h],
        vec![nd, d[1], h],
        vec![nd, d[1], h],
    ];
    for (k, out) in node.outputs.iter().enumerate().take(3) {
        if out.is_empty() {
            continue;
        }
        let field = vec![kv("offset", p_int(k as i64))];
        if reverse && k == 0 {
            let y = cx.tmp("_field", out, &[packed], field, &shapes[k])?;
            flip(cx, y, &shapes[k], Some(out))?;
        } else {
            cx.emit("_field", out, &[packed], field, &shapes[k])?;
        }
    }
    Ok(())
}
