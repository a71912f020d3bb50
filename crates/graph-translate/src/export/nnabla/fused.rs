//! Fused functions: `FusedBatchNormalization`, `FusedConvolution`.

use onnx_format::builder::attr;
use onnx_format::proto::AttributeProto;
use tensor_core::graph::{Attribute, Node};

use super::super::nnabla_table::TABLE;
use super::super::table::find;
use super::{Call, Exporter, a_float, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `FusedBatchNormalization(axes, decay_rate, eps, batch_stat,
    /// nonlinearity)`: `BatchNormalization`'s lowering, the residual `z`
    /// added, then `Relu`.
    pub(crate) fn fused_batch_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        let act = n
            .attribute("nonlinearity")
            .and_then(Attribute::as_str)
            .unwrap_or("relu");
        if act != "relu" {
            return Err(Error::Unsupported(format!(
                "FusedBatchNormalization function {:?}: nonlinearity {act:?} (relu is exported)",
                n.name
            )));
        }
        let bn_entry = find(TABLE.as_slice(), "BatchNormalization")
            .ok_or_else(|| Error::Invalid("no BatchNormalization entry".into()))?;
        let normed = self.cx.helper_name("fused_bn");
        let bn = Call {
            ins: c.ins.iter().take(5).copied().collect(),
            out: &normed,
            entry: bn_entry,
            op: "BatchNormalization",
            name: &n.name,
        };
        self.batch_normalization(n, &bn)?;
        let pre = match c.ins.get(5) {
            Some(z) => self.cx.op("Add", &[&normed, z], vec![]),
            None => normed.clone(),
        };
        self.cx.op_to("Relu", "", &[&pre], c.out, vec![]);
        Ok(())
    }

    /// Lowers `FusedConvolution(x, W[, b][, beta, gamma, mean, variance][,
    /// z])` as nnabla 1.39 composes it: `Pad` (unless `pad` is one value
    /// per axis with zero constant padding, then the convolution's own),
    /// `Convolution`, `BatchNormalization` over the channel axis, `+ z`,
    /// then `nonlinearity`.
    pub(crate) fn fused_convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        let ins = &c.ins;
        let (x, w) = (c.input(0)?, c.input(1)?);
        let rank_of = |e: &Self, v: &str| e.known_rank(v);
        // nnabla tells the optional inputs apart by their number (and a
        // 1-D third input is the bias)
        let (bias, bn, z) = match ins.len() {
            2 => (None, None, None),
            3 if rank_of(self, ins[2]) == Some(1) => (Some(ins[2]), None, None),
            3 => (None, None, Some(ins[2])),
            4 => (Some(ins[2]), None, Some(ins[3])),
            6 => (None, Some(&ins[2..6]), None),
            7 => (None, Some(&ins[2..6]), Some(ins[6])),
            k => {
                return Err(Error::Invalid(format!(
                    "FusedConvolution {}: {k} inputs (nnabla takes 2, 3, 4, 6 or 7)",
                    n.name
                )));
            }
        };
        let act_op = fused_activation(n)?;
        let rank = self.rank(n, x)?;
        let base = a_int(n, "base_axis", 1);
        let spatial = base
            .checked_add(1)
            .and_then(|b| (rank as i64).checked_sub(b))
            .filter(|&k| k >= 1);
        let Some(spatial) = spatial.map(|k| k as usize) else {
            return Err(Error::Unsupported(format!(
                "FusedConvolution {}: base_axis {base} leaves no spatial axis of a rank-{rank} input",
                n.name
            )));
        };
        let pad = a_ints(n, "pad");
        let pad = if pad.is_empty() {
            vec![0; spatial]
        } else {
            pad
        };
        let mode = n
            .attribute("pad_mode")
            .and_then(Attribute::as_str)
            .unwrap_or("constant")
            .to_string();
        let cv = a_float(n, "constant_value", 0.0);
        let own_pad = pad.len() == spatial && mode == "constant" && cv == 0.0;
        if !own_pad && pad.len() != spatial && pad.len() != 2 * spatial {
            return Err(Error::Invalid(format!(
                "FusedConvolution {}: pad {pad:?} is neither one nor two values per spatial axis",
                n.name
            )));
        }
        let mut conv = n.clone();
        conv.op = "Convolution".into();
        // the inner nodes go unnamed: the last one takes the function's name
        conv.name = String::new();
        conv.attributes.retain(|(k, _)| {
            ["base_axis", "stride", "dilation", "group", "channel_last"].contains(&k.as_str())
        });
        let xin = if own_pad {
            conv.attributes.push(("pad".into(), Attribute::Ints(pad)));
            x.to_string()
        } else {
            let width: Vec<i64> = if pad.len() == spatial {
                pad.iter().flat_map(|&p| [p, p]).collect()
            } else {
                pad
            };
            let mut p = Node::new("Pad", "", [x], Vec::<String>::new());
            p.attributes = vec![
                ("pad_width".into(), Attribute::Ints(width)),
                ("mode".into(), Attribute::String(mode)),
                ("constant_value".into(), Attribute::Float(cv)),
            ];
            let padded = self.cx.helper_name("fused_conv_pad");
            let call = self.sub_call("Pad", vec![x], &padded, c.name)?;
            self.pad(&p, &call)?;
            self.ranks.insert(padded.clone(), rank);
            padded
        };
        let mut cur = self.cx.helper_name("fused_conv");
        let mut conv_ins = vec![xin.as_str(), w];
        conv_ins.extend(bias);
        let call = self.sub_call("Convolution", conv_ins, &cur, c.name)?;
        self.convolution(&conv, &call)?;
        self.ranks.insert(cur.clone(), rank);
        if let Some(bn) = bn {
            let mut bnn = Node::new("BatchNormalization", "", [""], [""]);
            bnn.attributes = vec![
                ("axes".into(), Attribute::Ints(vec![base])),
                ("eps".into(), Attribute::Float(a_float(n, "eps", 1e-5))),
                (
                    "batch_stat".into(),
                    n.attribute("batch_stat")
                        .cloned()
                        .unwrap_or(Attribute::Bool(true)),
                ),
            ];
            let next = self.cx.helper_name("fused_conv_bn");
            let mut bn_ins = vec![cur.as_str()];
            bn_ins.extend(bn.iter().copied());
            let call = self.sub_call("BatchNormalization", bn_ins, &next, c.name)?;
            self.batch_normalization(&bnn, &call)?;
            self.ranks.insert(next.clone(), rank);
            cur = next;
        }
        if let Some(z) = z {
            cur = self.cx.op("Add", &[&cur, z], vec![]);
        }
        match act_op {
            None => self.cx.op_to("Identity", &n.name, &[&cur], c.out, vec![]),
            Some(("Clip", _)) => {
                let (lo, hi) = (self.cx.scalar(0.0), self.cx.scalar(6.0));
                self.cx
                    .op_to("Clip", &n.name, &[&cur, &lo, &hi], c.out, vec![]);
            }
            Some((op, attrs)) => self.cx.op_to(op, &n.name, &[&cur], c.out, attrs),
        }
        Ok(())
    }

    /// A call of another table entry's lowering (`op`) on `ins`, writing
    /// `out`, for a function composed of others.
    fn sub_call<'s>(
        &self,
        op: &'static str,
        ins: Vec<&'s str>,
        out: &'s str,
        name: &'s str,
    ) -> Result<Call<'s>> {
        let entry =
            find(TABLE.as_slice(), op).ok_or_else(|| Error::Invalid(format!("no {op} entry")))?;
        Ok(Call {
            ins,
            out,
            entry,
            op,
            name,
        })
    }
}

/// The ONNX operator (and attributes) of a `FusedConvolution`'s
/// `nonlinearity`, `None` for the identity; `relu6` is a `Clip` whose
/// bounds the caller adds.
fn fused_activation(n: &Node) -> Result<Option<(&'static str, Vec<AttributeProto>)>> {
    let act = n
        .attribute("nonlinearity")
        .and_then(Attribute::as_str)
        .unwrap_or("relu")
        .to_string();
    let act_args: Vec<f64> = match n.attribute("nonlinearity_args") {
        Some(Attribute::Floats(v)) => v.clone(),
        _ => Vec::new(),
    };
    let alpha = |what: &str| -> Result<f32> {
        match act_args[..] {
            [a] => Ok(a as f32),
            _ => Err(Error::Invalid(format!(
                "FusedConvolution {}: {what} needs one value in nonlinearity_args, not                      {act_args:?}",
                n.name
            ))),
        }
    };
    Ok(match act.as_str() {
        "" | "identity" => None,
        "relu" => Some(("Relu", vec![])),
        "sigmoid" => Some(("Sigmoid", vec![])),
        "tanh" => Some(("Tanh", vec![])),
        "leaky_relu" => Some((
            "LeakyRelu",
            vec![attr::float("alpha", alpha("leaky_relu")?)],
        )),
        "elu" => Some(("Elu", vec![attr::float("alpha", alpha("elu")?)])),
        "relu6" => Some(("Clip", vec![])),
        other => {
            return Err(Error::Unsupported(format!(
                "FusedConvolution {}: nonlinearity {other:?} (nnabla 1.39 has identity, relu,                      sigmoid, tanh, leaky_relu, elu and relu6)",
                n.name
            )));
        }
    })
}
