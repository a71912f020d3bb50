//! nnabla's built-in recurrent functions `RNN`, `LSTM` and `GRU` (inference)
//! as ONNX `RNN`, `LSTM` and `GRU`, one ONNX node per layer.
//!
//! nnabla's layouts (checked against nnabla 1.39 itself): `x` is
//! `(T, B, I)`, `h`/`c` `(L, D, B, H)`; `weight_l0` `(D, G, H, I + H)` and
//! `weight` `(L - 1, D, G, H, D*H + H)`, the input and the recurrent
//! weights side by side on the last axis; `bias` `(L, D, G', H)`. The gates
//! are `i, f, g, o` (LSTM, G = 4, one bias per gate) and `r, z, n` (GRU,
//! G = 3, G' = 4: `b_r, b_z` and the input and hidden biases of `n`, which
//! is ONNX's `linear_before_reset = 1`). Outputs: `y` `(T, B, D*H)`, `hn`
//! (and `cn`) `(L, D, B, H)`. Layer `l > 0` reads layer `l - 1`'s `y`, the
//! forward and backward outputs side by side (`D*H` per step); its weights
//! are `weight[l - 1]`, whose shape is checked. Dropout (between layers)
//! only acts in training: a network saved with `training` true and dropout
//! above 0 is refused, one with dropout 0 computes what inference does.

use onnx_format::builder::attr;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_int};
use crate::export::{Error, Result};

/// The most values of one layer's gate weights (`D * G * H * (In + H)`)
/// and of the helper zero biases: larger declared shapes are refused
/// rather than allocated.
const MAX_LAYER_VALUES: i64 = 1 << 26;

/// The most layers exported (one ONNX node and its helpers each).
const MAX_LAYERS: i64 = 1024;

/// How one of the three functions maps to its ONNX operator.
struct Kind {
    /// The ONNX operator of one layer.
    onnx: &'static str,
    /// Gates in the weights (`G`).
    gates: i64,
    /// nnabla's gate index of each ONNX gate, in ONNX order.
    order: &'static [i64],
    /// Inputs before `weight_l0` (`x, h` or `x, h, c`).
    states: usize,
}

const RNN: Kind = Kind {
    onnx: "RNN",
    gates: 1,
    order: &[0],
    states: 2,
};
// ONNX i, o, f, c from nnabla i, f, g, o
const LSTM: Kind = Kind {
    onnx: "LSTM",
    gates: 4,
    order: &[0, 3, 1, 2],
    states: 3,
};
// ONNX z, r, h from nnabla r, z, n
const GRU: Kind = Kind {
    onnx: "GRU",
    gates: 3,
    order: &[1, 0, 2],
    states: 2,
};

impl Exporter<'_> {
    /// Lowers `RNN`.
    pub(crate) fn rnn(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.recurrent(n, c, &RNN)
    }

    /// Lowers `LSTM`.
    pub(crate) fn lstm(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.recurrent(n, c, &LSTM)
    }

    /// Lowers `GRU`.
    pub(crate) fn gru(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.recurrent(n, c, &GRU)
    }

    /// `RNN`, `LSTM` or `GRU`, as `kind` says: one ONNX node per layer.
    fn recurrent(&mut self, n: &Node, c: &Call, kind: &Kind) -> Result<()> {
        let layers = a_int(n, "num_layers", 1);
        let dropout = n
            .attribute("dropout")
            .and_then(Attribute::as_float)
            .unwrap_or(0.0);
        if a_int(n, "training", 1) != 0 && dropout > 0.0 && layers > 1 {
            return Err(Error::Unsupported(format!(
                "dropout {dropout} in training mode (random; export a network saved with training false)"
            )));
        }
        if !(1..=MAX_LAYERS).contains(&layers) {
            return Err(Error::Invalid(format!(
                "num_layers {layers} (1 to {MAX_LAYERS} are exported)"
            )));
        }
        let dirs: i64 = if a_bool(n, "bidirectional") { 2 } else { 1 };
        let x = c.input(0)?;
        let h0 = c.input(1)?;
        let c0 = if kind.states == 3 {
            Some(c.input(2)?)
        } else {
            None
        };
        let w0 = c.input(kind.states)?;
        let (w_rest, bias) = if layers > 1 {
            (
                Some(c.input(kind.states + 1)?),
                c.ins.get(kind.states + 2).copied(),
            )
        } else {
            (None, c.ins.get(kind.states + 1).copied())
        };
        let (hidden, in0) = self.layer_sizes(kind, w0, w_rest, layers, dirs)?;
        let nonlinearity = n
            .attribute("nonlinearity")
            .and_then(Attribute::as_str)
            .unwrap_or("tanh");
        let act = match nonlinearity {
            "tanh" => "Tanh",
            "relu" => "Relu",
            other => {
                return Err(Error::Unsupported(format!(
                    "nonlinearity {other:?} is not exported"
                )));
            }
        };
        let onnx_op = kind.onnx;
        let mut input = x.to_string();
        let mut hs = Vec::new();
        let mut cs = Vec::new();
        for l in 0..layers {
            let in_size = if l == 0 { in0 } else { dirs * hidden };
            let wl = if l == 0 {
                w0.to_string()
            } else {
                let w = w_rest.unwrap_or_default();
                let k = self.cx.ints(&[l - 1]);
                let k = self.cx.squeeze0(&k);
                self.cx.op("Gather", &[w, &k], vec![attr::int("axis", 0)])
            };
            let (w, r) = self.split_weights(&wl, kind, dirs, hidden, in_size);
            let b = match bias {
                Some(b) => self.onnx_bias(b, l, dirs, hidden, kind)?,
                None => String::new(),
            };
            let li = self.cx.ints(&[l]);
            let li = self.cx.squeeze0(&li);
            let hl = self.cx.op("Gather", &[h0, &li], vec![attr::int("axis", 0)]);
            let cl = c0.map(|c0| self.cx.op("Gather", &[c0, &li], vec![attr::int("axis", 0)]));
            let mut ins: Vec<&str> = vec![&input, &w, &r, &b, "", &hl];
            if let Some(cl) = &cl {
                ins.push(cl);
            }
            let attrs = layer_attrs(onnx_op, hidden, dirs, act);
            let y = self.cx.helper_name("y");
            let yh = self.cx.helper_name("y_h");
            let yc = self.cx.helper_name("y_c");
            let outs: Vec<&str> = if onnx_op == "LSTM" {
                vec![&y, &yh, &yc]
            } else {
                vec![&y, &yh]
            };
            self.cx.b.node(onnx_op, "", &ins, &outs, attrs);
            // (T, D, B, H) -> (T, B, D*H)
            let t = self
                .cx
                .op("Transpose", &[&y], vec![attr::ints("perm", &[0, 2, 1, 3])]);
            input = self.cx.reshape(&t, &[0, 0, dirs * hidden]);
            hs.push(self.cx.unsqueeze(&yh, &[0]));
            if onnx_op == "LSTM" {
                cs.push(self.cx.unsqueeze(&yc, &[0]));
            }
        }
        self.cx.op_to("Identity", &n.name, &[&input], c.out, vec![]);
        if let Some(hn) = n.outputs.get(1) {
            let hs: Vec<&str> = hs.iter().map(String::as_str).collect();
            self.cx
                .op_to("Concat", "", &hs, hn, vec![attr::int("axis", 0)]);
        }
        if let Some(cn) = n.outputs.get(2) {
            let cs: Vec<&str> = cs.iter().map(String::as_str).collect();
            self.cx
                .op_to("Concat", "", &cs, cn, vec![attr::int("axis", 0)]);
        }
        Ok(())
    }

    /// The hidden size and the input size of layer 0 from the shapes of
    /// `weight_l0` `w0` and (more than one layer) `weight` `w_rest`, each
    /// checked against nnabla's layout; every size the lowering computes
    /// from them is bounded ([`layer_values`]).
    fn layer_sizes(
        &self,
        kind: &Kind,
        w0: &str,
        w_rest: Option<&str>,
        layers: i64,
        dirs: i64,
    ) -> Result<(i64, i64)> {
        let wd = self.dims(w0).unwrap_or_default();
        // (D, G, H, I + H), or (D, H, I + H) for RNN
        let (hidden, in0) = match (kind.gates, wd.as_slice()) {
            (1, [d, h, ih]) | (_, [d, _, h, ih])
                if *d == dirs
                    && *h > 0
                    && *ih > *h
                    && (wd.len() == 3 || wd.get(1) == Some(&kind.gates)) =>
            {
                (*h, *ih - *h)
            }
            _ => {
                return Err(Error::Unsupported(format!(
                    "weight_l0 {w0:?} has shape {wd:?}; the declared shape (D, G, H, I + H) is needed"
                )));
            }
        };
        if let Some(w) = w_rest {
            // (L - 1, D, G, H, D*H + H), or (L - 1, D, H, D*H + H) for RNN:
            // one set per upper layer, each reading both directions
            let want: Vec<i64> = [layers - 1, dirs]
                .into_iter()
                .chain((kind.gates > 1).then_some(kind.gates))
                .chain([hidden, dirs.saturating_mul(hidden).saturating_add(hidden)])
                .collect();
            let got = self.dims(w).unwrap_or_default();
            if got != want {
                return Err(Error::Unsupported(format!(
                    "weight {w:?} has shape {got:?}; {num} layers of hidden size {hidden} \
                     ({dirs} directions) need {want:?}",
                    num = layers
                )));
            }
        }
        // layer 0 reads `in0` values per step, the others `dirs * hidden`
        layer_values(kind, dirs, hidden, in0)?;
        if layers > 1 {
            layer_values(kind, dirs, hidden, dirs * hidden)?;
        }
        Ok((hidden, in0))
    }

    /// Layer weights `wl` (D, G, H, In + H) with the gates put in ONNX
    /// order, split into ONNX's W (D, G*H, In) and R (D, G*H, H).
    fn split_weights(
        &mut self,
        wl: &str,
        kind: &Kind,
        dirs: i64,
        hidden: i64,
        in_size: i64,
    ) -> (String, String) {
        let (gh, g) = (kind.gates * hidden, kind.gates);
        let wl = self.cx.reshape(wl, &[dirs, g, hidden, in_size + hidden]);
        let ord = self.cx.ints(kind.order);
        let wl = self
            .cx
            .op("Gather", &[&wl, &ord], vec![attr::int("axis", 1)]);
        let wl = self.cx.reshape(&wl, &[dirs, gh, in_size + hidden]);
        let (z, i, e, ax) = (
            self.cx.ints(&[0]),
            self.cx.ints(&[in_size]),
            self.cx.ints(&[in_size + hidden]),
            self.cx.ints(&[2]),
        );
        let w = self.cx.op("Slice", &[&wl, &z, &i, &ax], vec![]);
        let r = self.cx.op("Slice", &[&wl, &i, &e, &ax], vec![]);
        (w, r)
    }

    /// ONNX's `B` `(D, 2*G*H)` of layer `l` from nnabla's `bias`
    /// `(L, D, G', H)`: nnabla's single bias per gate as `Wb` with a zero
    /// `Rb`; GRU's hidden bias of `n` as `Rb[h]`.
    fn onnx_bias(
        &mut self,
        b: &str,
        l: i64,
        dirs: i64,
        hidden: i64,
        kind: &Kind,
    ) -> Result<String> {
        let li = self.cx.ints(&[l]);
        let li = self.cx.squeeze0(&li);
        let bl = self.cx.op("Gather", &[b, &li], vec![attr::int("axis", 0)]);
        let gb = if kind.gates == 3 { 4 } else { kind.gates };
        let bl = self.cx.reshape(&bl, &[dirs, gb, hidden]);
        let ord = self.cx.ints(kind.order);
        let wb = self
            .cx
            .op("Gather", &[&bl, &ord], vec![attr::int("axis", 1)]);
        let wb = self.cx.reshape(&wb, &[dirs, kind.gates * hidden]);
        if kind.gates == 3 {
            let zeros = vec![0.0; (dirs * 2 * hidden) as usize];
            let z = self.cx.floats("zeros", &zeros, &[dirs, 2 * hidden]);
            let k = self.cx.ints(&[3]);
            let rn = self.cx.op("Gather", &[&bl, &k], vec![attr::int("axis", 1)]);
            let rn = self.cx.reshape(&rn, &[dirs, hidden]);
            Ok(self
                .cx
                .op("Concat", &[&wb, &z, &rn], vec![attr::int("axis", 1)]))
        } else {
            let n = dirs * kind.gates * hidden;
            let zeros = vec![0.0; n as usize];
            let z = self
                .cx
                .floats("zeros", &zeros, &[dirs, kind.gates * hidden]);
            Ok(self.cx.op("Concat", &[&wb, &z], vec![attr::int("axis", 1)]))
        }
    }
}

/// Refuses a layer whose weights `(D, G, H, In + H)` hold more than
/// [`MAX_LAYER_VALUES`] values (or whose size overflows); `hidden` and
/// `in_size` are positive and `dirs` 1 or 2.
fn layer_values(kind: &Kind, dirs: i64, hidden: i64, in_size: i64) -> Result<i64> {
    let n = in_size
        .checked_add(hidden)
        .and_then(|w| w.checked_mul(hidden))
        .and_then(|w| w.checked_mul(kind.gates.max(2)))
        .and_then(|w| w.checked_mul(dirs))
        .filter(|&n| n <= MAX_LAYER_VALUES);
    n.ok_or_else(|| {
        Error::Unsupported(format!(
            "a recurrent layer of hidden size {hidden} on {in_size} inputs ({dirs} directions) \
             has more than {MAX_LAYER_VALUES} weights"
        ))
    })
}

/// The attributes of one layer's ONNX node (`onnx_op` `RNN` also names its
/// activation `act` per direction).
fn layer_attrs(
    onnx_op: &str,
    hidden: i64,
    dirs: i64,
    act: &str,
) -> Vec<onnx_format::proto::AttributeProto> {
    let mut attrs = vec![
        attr::int("hidden_size", hidden),
        attr::string(
            "direction",
            if dirs == 2 {
                "bidirectional"
            } else {
                "forward"
            },
        ),
    ];
    if onnx_op == "GRU" {
        attrs.push(attr::int("linear_before_reset", 1));
    }
    if onnx_op == "RNN" {
        let mut a = attr::string("activations", act);
        a.s = None;
        a.strings = vec![act.as_bytes().to_vec(); dirs as usize];
        a.r#type = Some(onnx_format::proto::attribute_proto::AttributeType::Strings as i32);
        attrs.push(a);
    }
    attrs
}
