//! Linear quantisation (`QuantizeLinear`, `DequantizeLinear`,
//! `FixedPointQuantize`), `Prune` and `BinaryWeightConvolution`: nnabla keeps
//! the quantised values in float arrays, so both lower to float arithmetic
//! (ONNX's own operators take and give integer tensors).

use onnx_format::builder::attr;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_float, a_int};
use crate::export::{Error, Result};

/// numpy's type numbers nnabla's `dtype` attribute uses.
const NPY_INT8: i64 = 1;
const NPY_UINT8: i64 = 2;

impl Exporter<'_> {
    /// Lowers `QuantizeLinear(x, scale, zero_point)`:
    /// `clip(round(x / scale) + clip(round(zero_point)))`, the clip to the
    /// range of `dtype` (its lowest value left out when `narrow_range`),
    /// `round` half away from zero or half to even (`round_mode`).
    pub(crate) fn quantize_linear(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, scale, zp) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let (lo, hi) = match a_int(n, "dtype", NPY_INT8) {
            NPY_INT8 => (-128.0, 127.0),
            NPY_UINT8 => (0.0, 255.0),
            other => {
                return Err(Error::Unsupported(format!(
                    "QuantizeLinear {}: dtype {other} (numpy type number) is not int8 (1) or \
                     uint8 (2), the only types nnabla quantises to",
                    n.name
                )));
            }
        };
        let lo = if a_bool(n, "narrow_range") {
            lo + 1.0
        } else {
            lo
        };
        let mode = n
            .attribute("round_mode")
            .and_then(Attribute::as_str)
            .unwrap_or("HALF_AWAY_FROM_ZERO");
        let even = match mode {
            "HALF_AWAY_FROM_ZERO" => false,
            "HALF_TO_EVEN" => true,
            other => {
                return Err(Error::Unsupported(format!(
                    "QuantizeLinear {}: round_mode {other:?} is neither HALF_AWAY_FROM_ZERO \
                     nor HALF_TO_EVEN",
                    n.name
                )));
            }
        };
        let (lo, hi) = (self.cx.scalar(lo), self.cx.scalar(hi));
        let v = self.cx.op("Div", &[x, scale], vec![]);
        let v = self.round(&v, even);
        let z = self.round(zp, even);
        let z = self.cx.op("Clip", &[&z, &lo, &hi], vec![]);
        let s = self.cx.op("Add", &[&v, &z], vec![]);
        self.cx
            .op_to("Clip", &n.name, &[&s, &lo, &hi], c.out, vec![]);
        Ok(())
    }

    /// Rounds `v` half to even (ONNX `Round`) or half away from zero
    /// (`sign(v) * floor(|v| + 0.5)`).
    pub(super) fn round(&mut self, v: &str, even: bool) -> String {
        if even {
            return self.cx.op("Round", &[v], vec![]);
        }
        let half = self.cx.scalar(0.5);
        let a = self.cx.op("Abs", &[v], vec![]);
        let a = self.cx.op("Add", &[&a, &half], vec![]);
        let f = self.cx.op("Floor", &[&a], vec![]);
        let s = self.cx.op("Sign", &[v], vec![]);
        self.cx.op("Mul", &[&s, &f], vec![])
    }

    /// Lowers `DequantizeLinear(x, scale, zero_point)`:
    /// `(x - zero_point) * scale`.
    pub(crate) fn dequantize_linear(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, scale, zp) = (c.input(0)?, c.input(1)?, c.input(2)?);
        let d = self.cx.op("Sub", &[x, zp], vec![]);
        self.cx.op_to("Mul", &n.name, &[&d, scale], c.out, vec![]);
        Ok(())
    }

    /// Lowers `FixedPointQuantize` (the forward pass):
    /// `clip(sign(x) * floor(|x| / delta + 0.5) * delta, min, max)` with
    /// `max = (2^(n-1) - 1) * delta`, `min = -max` when `sign`, else
    /// `max = (2^n - 1) * delta`, `min = 0`.
    pub(crate) fn fixed_point_quantize(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let sign = n.attribute("sign").and_then(Attribute::as_int) != Some(0);
        let bits = a_int(n, "n", 8);
        let delta = a_float(n, "delta", 0.0625);
        let levels = u32::try_from(if sign { bits - 1 } else { bits })
            .ok()
            .filter(|&b| (1..=31).contains(&b))
            .map(|b| f64::from((1u32 << b) - 1));
        let Some(levels) = levels.filter(|_| delta.is_finite() && delta > 0.0) else {
            return Err(Error::Unsupported(format!(
                "FixedPointQuantize {}: n = {bits} with delta = {delta} (exported: 1 to 31 \
                 magnitude bits, a positive delta)",
                n.name
            )));
        };
        let hi = levels * delta;
        let lo = if sign { -hi } else { 0.0 };
        let d = self.cx.scalar(delta as f32);
        let v = self.cx.op("Div", &[x, &d], vec![]);
        let r = self.round(&v, false);
        let q = self.cx.op("Mul", &[&r, &d], vec![]);
        let (lo, hi) = (self.cx.scalar(lo as f32), self.cx.scalar(hi as f32));
        self.cx
            .op_to("Clip", &n.name, &[&q, &lo, &hi], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Prune(x)`: zero where `|x|` is below the threshold
    /// `sort(|x|)[floor((size - 1) * rate)]` (the `TopK` of the smallest
    /// magnitudes over the flattened input, whose size must be declared).
    pub(crate) fn prune(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let size = self
            .dims(x)
            .filter(|d| d.iter().all(|&v| v >= 1))
            .and_then(|d| d.iter().try_fold(1i64, |a, &v| a.checked_mul(v)));
        let Some(size) = size else {
            return Err(Error::Unsupported(format!(
                "Prune {}: the size of {x:?} is not declared (the threshold's rank among the \
                 values needs it)",
                n.name
            )));
        };
        let rate = a_float(n, "rate", 0.9);
        if !(0.0..=1.0).contains(&rate) {
            return Err(Error::Unsupported(format!(
                "Prune {}: rate {rate} is outside 0..=1",
                n.name
            )));
        }
        // nnabla: int((size - 1) * rate); `as` saturates, the clamp keeps
        // it an index
        let k = (((size - 1) as f64 * rate).floor() as i64).clamp(0, size - 1);
        let a = self.cx.op("Abs", &[x], vec![]);
        let flat = self.cx.reshape(&a, &[-1]);
        let kk = self.cx.ints(&[k + 1]);
        let vals = self.cx.helper_name("prune_values");
        let idx = self.cx.helper_name("prune_indices");
        self.cx.op_outs(
            "TopK",
            &[&flat, &kk],
            &[&vals, &idx],
            vec![
                attr::int("axis", 0),
                attr::int("largest", 0),
                attr::int("sorted", 1),
            ],
        );
        let (s0, s1, ax) = (
            self.cx.ints(&[k]),
            self.cx.ints(&[k + 1]),
            self.cx.ints(&[0]),
        );
        let t = self.cx.op("Slice", &[&vals, &s0, &s1, &ax], vec![]);
        let below = self.cx.op("Less", &[&a, &t], vec![]);
        let zero = self.cx.scalar(0.0);
        self.cx
            .op_to("Where", &n.name, &[&below, &zero, x], c.out, vec![]);
        Ok(())
    }

    /// Lowers `BinaryWeightConvolution(x, W, Wb, alpha[, b])`: a `Conv` whose
    /// weight is computed here from `W`, `sign(W)` (`quantize_zero_to` for
    /// zeros) times the mean `|W|` of its output channel.
    pub(crate) fn binary_weight_convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        let w = c.input(1)?;
        let t = self.weights.weight(w).ok_or_else(|| {
            Error::Unsupported(format!(
                "BinaryWeightConvolution {}: weight {w:?} has no data",
                n.name
            ))
        })?;
        let dims = t.dims().to_vec();
        if dims.len() != 4 {
            return Err(Error::Unsupported(format!(
                "BinaryWeightConvolution {}: a {}-D weight (only 2-D convolutions are exported)",
                n.name,
                dims.len()
            )));
        }
        let v = t.to_vec::<f32>()?;
        let zero_to = a_float(n, "quantize_zero_to", 1.0) as f32;
        let per = v.len() / dims[0].max(1);
        let mut b = Vec::with_capacity(v.len());
        for row in v.chunks(per.max(1)) {
            let mean = row.iter().map(|x| x.abs()).sum::<f32>() / row.len().max(1) as f32;
            b.extend(row.iter().map(|&x| {
                let s = if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    zero_to
                };
                s * mean
            }));
        }
        let bt = tensor_core::Tensor::from_values(dims, &b)?;
        let name = self.cx.helper_name(&format!("{w}/binarized"));
        self.cx.b.initializer(&name, &bt)?;
        let mut ins = vec![c.ins[0], name.as_str()];
        if let Some(bias) = c.ins.get(4) {
            ins.push(bias);
        }
        let mut conv = n.clone();
        conv.op = "Convolution".into();
        let call = Call {
            ins,
            out: c.out,
            entry: c.entry,
            op: "Convolution",
            name: c.name,
        };
        self.convolution(&conv, &call)
    }
}
