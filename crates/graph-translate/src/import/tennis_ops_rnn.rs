//! ONNX → TenniS lowering of `LSTM` (TenniS's operator) and `GRU`
//! (unrolled: TenniS has none).

use bubble_module::NodeId;

use super::LowerError;
use super::onnx_graph::Node;
use super::tennis_cx::{Lowered, Tx, kv, p_bool, p_float, p_int, p_ints, p_str};

/// The checks `LSTM` and `GRU` share: the direction (`forward`,
/// `reverse` or `bidirectional`), its count of directions, `hidden_size`
/// (1 to 2²⁰) and the static input dimensions (three, each at least 1);
/// refused are `clip`, `sequence_lens` and activations other than
/// `defaults` for every direction.
fn recurrence(
    cx: &Tx,
    node: &Node,
    defaults: &[&str],
) -> Result<(String, i64, i64, Vec<i64>), LowerError> {
    let dir = node.string("direction", "forward");
    let nd: i64 = match dir.as_str() {
        "forward" | "reverse" => 1,
        "bidirectional" => 2,
        d => return Err(LowerError::value("direction", d)),
    };
    if node.attr("clip").is_some() {
        return Err("clip".into());
    }
    if let Some(a) = node.attr("activations") {
        let got: Vec<String> = a
            .strings
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        let ok = got.len() == defaults.len() * nd as usize
            && got.iter().zip(defaults.iter().cycle()).all(|(g, w)| g == w);
        if !ok {
            return Err(LowerError::Other(format!(
                "activations {got:?} (TenniS has the defaults only)"
            )));
        }
    }
    if node.input(4).is_some() {
        return Err("sequence_lens (TenniS has none)".into());
    }
    let h = node.int("hidden_size", 0);
    let d = cx.in_shape(node, 0)?;
    if d.len() != 3 || d.iter().any(|&v| v < 1) {
        return Err("an input that is not a static [seq, batch, input]".into());
    }
    // a zero bias of nd · 8 · hidden_size may be made: bounded
    if !(1..=1 << 20).contains(&h) {
        return Err(LowerError::value("hidden_size", h));
    }
    Ok((dir, nd, h, d))
}

/// `LSTM` → `LSTM` (TenniS's: ONNX's layouts and gate order i, o, f, c,
/// the default activations; a packed output of Y, Y_h, Y_c read with
/// `_field`). A missing B is zeros, a missing initial state a 0-d zero
/// (TenniS starts from zeros for a state of rank below 3). TenniS runs
/// `forward` and `bidirectional` only (it reads `reverse` as forward):
/// `reverse` runs forward over the sequence reversed by `strided_slice`
/// (step −1), Y reversed back; sequence lengths, peepholes, `clip`, `input_forget`, `layout` 1 and
/// other activations are refused.
pub(crate) fn lstm(cx: &mut Tx, node: &Node) -> Lowered {
    let (dir, nd, h, d) = recurrence(cx, node, &["Sigmoid", "Tanh", "Tanh"])?;
    let reverse = dir == "reverse";
    if node.int("input_forget", 0) != 0 {
        return Err("input_forget 1".into());
    }
    if node.int("layout", 0) != 0 {
        return Err("layout 1 (batch first)".into());
    }
    if node.input(7).is_some() {
        return Err("peepholes (P) (TenniS's LSTM has none)".into());
    }
    let wd = cx.in_shape(node, 1)?;
    let rd = cx.in_shape(node, 2)?;
    if wd != [nd, 4 * h, d[2]] || rd != [nd, 4 * h, h] {
        return Err(LowerError::Other(format!(
            "W of shape {wd:?} or R of shape {rd:?}"
        )));
    }
    let o = super::tennis_cx::read_out(node)?;
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
        let dims = [nd, h.checked_mul(8).ok_or("hidden_size")?];
        let z = super::zeros("bias", &dims)?;
        cx.const_f32(&o, &dims, &z)?
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

/// The most time steps × directions a `GRU` is unrolled into.
const GRU_STEPS: i64 = 1024;

/// `v` of shape `dims` cut to `[begin, end)` along `axis`
/// (`strided_slice`).
fn cut(
    cx: &mut Tx,
    o: &str,
    v: NodeId,
    dims: &[i64],
    axis: usize,
    begin: i64,
    end: i64,
) -> Result<NodeId, LowerError> {
    let mut b = vec![0; dims.len()];
    let mut e = dims.to_vec();
    b[axis] = begin;
    e[axis] = end;
    let mut od = dims.to_vec();
    od[axis] = end - begin;
    let params = vec![
        kv("begin", p_ints(&b)),
        kv("end", p_ints(&e)),
        kv("stride", p_ints(&vec![1; dims.len()])),
    ];
    cx.tmp("strided_slice", o, &[v], params, &od)
}

/// `a · b + c` (`gemm`, no transposes: TenniS's CPU gemm mishandles them).
fn matmul(
    cx: &mut Tx,
    o: &str,
    a: NodeId,
    b: NodeId,
    c: NodeId,
    dims: [i64; 2],
) -> Result<NodeId, LowerError> {
    let params = vec![
        kv("alpha", p_float(1.0)),
        kv("beta", p_float(1.0)),
        kv("transA", p_bool(false)),
        kv("transB", p_bool(false)),
    ];
    cx.tmp("gemm", o, &[a, b, c], params, &dims)
}

/// `v` transposed (2-D).
fn t2(cx: &mut Tx, o: &str, v: NodeId, dims: [i64; 2]) -> Result<NodeId, LowerError> {
    let p = vec![kv("permute", p_ints(&[1, 0]))];
    cx.tmp("_transpose", o, &[v], p, &[dims[1], dims[0]])
}

/// The shapes of a `GRU`: sequence, batch, input, hidden, directions.
struct GruDims {
    t: i64,
    b: i64,
    i: i64,
    h: i64,
    nd: i64,
}

/// `GRU` unrolled over its (static) time steps, TenniS having no GRU
/// operator: per direction one `gemm` of every step's input by Wᵀ (+ Wb),
/// then per step `gemm` of the state by R_zᵣᵀ (+ Rb_zr), `add`,
/// `sigmoid`, `strided_slice` (z, r), the candidate
/// n = tanh(x·W_hᵀ + Wb_h + (r ⊙ H)·R_hᵀ + Rb_h), or with
/// `linear_before_reset` tanh(x·W_hᵀ + Wb_h + r ⊙ (H·R_hᵀ + Rb_h)), and
/// H = n + z ⊙ (H − n); `concat` gathers Y and Y_h. `reverse`
/// (and the second direction of `bidirectional`) walks the steps
/// backwards; `layout` 1 transposes X and initial_h in, Y and Y_h out.
/// Refused: `sequence_lens`, `clip`, activations other than the
/// defaults, symbolic shapes.
pub(crate) fn gru(cx: &mut Tx, node: &Node) -> Lowered {
    let (dir, nd, h, mut d) = recurrence(cx, node, &["Sigmoid", "Tanh"])?;
    let batch_first = node.int("layout", 0) != 0;
    if batch_first {
        d.swap(0, 1);
    }
    if d[0].checked_mul(nd).is_none_or(|s| s > GRU_STEPS) {
        return Err(LowerError::Other(format!(
            "{} time steps (unrolled: at most {GRU_STEPS})",
            d[0]
        )));
    }
    let g = GruDims {
        t: d[0],
        b: d[1],
        i: d[2],
        h,
        nd,
    };
    let (wd, rd) = (cx.in_shape(node, 1)?, cx.in_shape(node, 2)?);
    if wd != [nd, 3 * h, g.i] || rd != [nd, 3 * h, h] {
        return Err(LowerError::Other(format!(
            "W of shape {wd:?} or R of shape {rd:?}"
        )));
    }
    if node.input(3).is_some() && cx.in_shape(node, 3)? != [nd, 6 * h] {
        return Err("B of another shape than [directions, 6 · hidden_size]".into());
    }
    let h0d = if batch_first {
        [g.b, nd, h]
    } else {
        [nd, g.b, h]
    };
    if node.input(5).is_some() && cx.in_shape(node, 5)? != h0d {
        return Err(LowerError::Other(format!(
            "initial_h of another shape than {h0d:?}"
        )));
    }
    let o = super::tennis_cx::read_out(node)?;
    // layout 1 (batch first): X [B, T, I] and initial_h [B, nd, H]
    // transposed to the layout 0 the steps read, Y and Y_h back
    let swap = |cx: &mut Tx, v, dims: [i64; 3]| {
        let p = vec![kv("permute", p_ints(&[1, 0, 2]))];
        cx.tmp("_transpose", &o, &[v], p, &[dims[1], dims[0], dims[2]])
    };
    let mut x = cx.fin(node, 0)?;
    if batch_first {
        x = swap(cx, x, [g.b, g.t, g.i])?;
    }
    let h0 = match node.input(5) {
        None => None,
        Some(_) => {
            let v = cx.fin(node, 5)?;
            Some(if batch_first {
                swap(cx, v, [g.b, nd, h])?
            } else {
                v
            })
        }
    };
    let xs = cx.fresh(&o);
    let x2 = cx.reshape(&xs, x, &[g.t * g.b, g.i])?;
    let mut steps: Vec<Vec<NodeId>> = Vec::new();
    let mut last = Vec::new();
    for k in 0..nd {
        let backwards = dir == "reverse" || k == 1;
        let hs = gru_direction(cx, node, &o, (x2, h0), &g, k, backwards)?;
        last.push(*hs.last().ok_or(LowerError::absent("step"))?);
        steps.push(hs);
    }
    // Y [T, nd, B, H]: step s of direction k is time s (backwards: T−1−s)
    if let Some(y) = node.outputs.first().filter(|s| !s.is_empty()) {
        let mut per_t = Vec::new();
        for t in 0..g.t {
            let mut parts = Vec::new();
            for (k, hs) in steps.iter().enumerate() {
                let s = if dir == "reverse" || k == 1 {
                    g.t - 1 - t
                } else {
                    t
                };
                let v = hs[s as usize];
                let n = cx.fresh(&o);
                parts.push(cx.reshape(&n, v, &[1, 1, g.b, h])?);
            }
            per_t.push(join(cx, &o, &parts, 1, &[1, nd, g.b, h], None)?);
        }
        if batch_first {
            let v = join(cx, &o, &per_t, 0, &[g.t, nd, g.b, h], None)?;
            let p = vec![kv("permute", p_ints(&[2, 0, 1, 3]))];
            cx.emit("_transpose", y, &[v], p, &[g.b, g.t, nd, h])?;
        } else {
            join(cx, &o, &per_t, 0, &[g.t, nd, g.b, h], Some(y))?;
        }
    }
    if let Some(yh) = node.outputs.get(1).filter(|s| !s.is_empty()) {
        let mut parts = Vec::new();
        for v in last {
            let n = cx.fresh(&o);
            parts.push(cx.reshape(&n, v, &[1, g.b, h])?);
        }
        if batch_first {
            let v = join(cx, &o, &parts, 0, &[nd, g.b, h], None)?;
            let p = vec![kv("permute", p_ints(&[1, 0, 2]))];
            cx.emit("_transpose", yh, &[v], p, &[g.b, nd, h])?;
        } else {
            join(cx, &o, &parts, 0, &[nd, g.b, h], Some(yh))?;
        }
    }
    Ok(())
}

/// `parts` concatenated along `dim` (one part: itself), named `name`
/// when given.
fn join(
    cx: &mut Tx,
    o: &str,
    parts: &[NodeId],
    dim: i64,
    dims: &[i64],
    name: Option<&str>,
) -> Result<NodeId, LowerError> {
    let p = || vec![kv("dim", p_int(dim))];
    match (parts, name) {
        ([one], None) => Ok(*one),
        ([one], Some(n)) => cx.emit("_copy", n, &[*one], vec![], dims),
        (_, None) => cx.tmp("concat", o, parts, p(), dims),
        (_, Some(n)) => cx.emit("concat", n, parts, p(), dims),
    }
}

/// One direction `k` of a `GRU`: the state after each step, in step
/// order.
fn gru_direction(
    cx: &mut Tx,
    node: &Node,
    o: &str,
    (x2, h0): (NodeId, Option<NodeId>),
    g: &GruDims,
    k: i64,
    backwards: bool,
) -> Result<Vec<NodeId>, LowerError> {
    let (h, b) = (g.h, g.b);
    let lbr = node.int("linear_before_reset", 0) != 0;
    // this direction's W [3H, I], R [3H, H], B [6H]
    let w = cx.fin(node, 1)?;
    let w = cut(cx, o, w, &[g.nd, 3 * h, g.i], 0, k, k + 1)?;
    let n = cx.fresh(o);
    let w = cx.reshape(&n, w, &[3 * h, g.i])?;
    let wt = t2(cx, o, w, [3 * h, g.i])?;
    let r = cx.fin(node, 2)?;
    let r = cut(cx, o, r, &[g.nd, 3 * h, h], 0, k, k + 1)?;
    let n = cx.fresh(o);
    let r = cx.reshape(&n, r, &[3 * h, h])?;
    let rzr = cut(cx, o, r, &[3 * h, h], 0, 0, 2 * h)?;
    let rzr_t = t2(cx, o, rzr, [2 * h, h])?;
    let rh = cut(cx, o, r, &[3 * h, h], 0, 2 * h, 3 * h)?;
    let rh_t = t2(cx, o, rh, [h, h])?;
    let (wb, rbzr, rbh) = if node.input(3).is_some() {
        let bb = cx.fin(node, 3)?;
        let bk = cut(cx, o, bb, &[g.nd, 6 * h], 0, k, k + 1)?;
        let wb = cut(cx, o, bk, &[1, 6 * h], 1, 0, 3 * h)?;
        let rbzr = cut(cx, o, bk, &[1, 6 * h], 1, 3 * h, 5 * h)?;
        let rbh = cut(cx, o, bk, &[1, 6 * h], 1, 5 * h, 6 * h)?;
        (wb, rbzr, rbh)
    } else {
        let z = cx.scalar(o, 0.0)?;
        (z, z, z)
    };
    // every step's x · Wᵀ + Wb at once: [T·B, 3H]
    let gx = matmul(cx, o, x2, wt, wb, [g.t * b, 3 * h])?;
    let mut state = if let Some(h0) = h0 {
        let h0 = cut(cx, o, h0, &[g.nd, b, h], 0, k, k + 1)?;
        let n = cx.fresh(o);
        cx.reshape(&n, h0, &[b, h])?
    } else {
        let z = super::zeros("initial state", &[b, h])?;
        cx.const_f32(o, &[b, h], &z)?
    };
    let mut out = Vec::new();
    for s in 0..g.t {
        let t = if backwards { g.t - 1 - s } else { s };
        let gxt = cut(cx, o, gx, &[g.t * b, 3 * h], 0, t * b, (t + 1) * b)?;
        let gx_zr = cut(cx, o, gxt, &[b, 3 * h], 1, 0, 2 * h)?;
        let gx_h = cut(cx, o, gxt, &[b, 3 * h], 1, 2 * h, 3 * h)?;
        let gh = matmul(cx, o, state, rzr_t, rbzr, [b, 2 * h])?;
        let pre = cx.tmp("add", o, &[gx_zr, gh], vec![], &[b, 2 * h])?;
        let zr = cx.tmp("sigmoid", o, &[pre], vec![], &[b, 2 * h])?;
        let z = cut(cx, o, zr, &[b, 2 * h], 1, 0, h)?;
        let rr = cut(cx, o, zr, &[b, 2 * h], 1, h, 2 * h)?;
        let hh = if lbr {
            let m = matmul(cx, o, state, rh_t, rbh, [b, h])?;
            cx.tmp("mul", o, &[rr, m], vec![], &[b, h])?
        } else {
            let rs = cx.tmp("mul", o, &[rr, state], vec![], &[b, h])?;
            matmul(cx, o, rs, rh_t, rbh, [b, h])?
        };
        let pn = cx.tmp("add", o, &[gx_h, hh], vec![], &[b, h])?;
        let nn = cx.tmp("tanh", o, &[pn], vec![], &[b, h])?;
        let diff = cx.tmp("sub", o, &[state, nn], vec![], &[b, h])?;
        let zd = cx.tmp("mul", o, &[z, diff], vec![], &[b, h])?;
        state = cx.tmp("add", o, &[nn, zd], vec![], &[b, h])?;
        out.push(state);
    }
    Ok(out)
}
