//! Incremental network quantization: `INQAffine` and `INQConvolution`. In
//! nnabla 1.39's forward pass the weights its indicator marks as fixed are
//! rounded to powers of two (the others are used as stored), then the
//! affine or convolution runs. The exporter computes that weight from the
//! parameters.

use tensor_core::Tensor;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_int, a_ints};
use crate::export::{Error, Result};

/// nnabla's quantisation threshold `log2(1.5)` as the float it computes in.
const LOG2_1_5_F32: f32 = 0.584_962_5;

/// The weight nnabla's INQ forward pass computes: where `indicators` is 1
/// (as an integer), `w` rounded to a power of two between `2^n2` and `2^n1`
/// (`n1` from the largest magnitude, `n2 = n1 + 1 - 2^(num_bits - 2)`), zero
/// below `2^(n2 - 1)`; elsewhere `w` unchanged.
fn inq_weights(w: &[f32], indicators: &[f32], num_bits: i64) -> Vec<f32> {
    let mut max_abs = w.iter().fold(0f32, |m, v| m.max(v.abs()));
    if max_abs == 0.0 {
        max_abs = 1.0;
    }
    let l = max_abs.log2();
    // the comparison is made in double (`std::log2(1.5)`)
    let n1 = l.floor() as i64 + i64::from(f64::from(l - l.floor()) >= 1.5f64.log2());
    let n2 = n1 + 1 - (1i64 << (num_bits - 2));
    let threshold = 2f64.powi((n2 - 1) as i32) as f32;
    w.iter()
        .zip(indicators)
        .map(|(&v, &ind)| {
            // nnabla reads the indicator as an int (truncated)
            if ind.trunc() != 1.0 {
                return v;
            }
            if v.abs() < threshold {
                return 0.0;
            }
            let s = if v < 0.0 { -1.0 } else { 1.0 };
            let b = v.abs().log2();
            let e = (b.floor() as i64 + i64::from(b - b.floor() >= LOG2_1_5_F32)).clamp(n2, n1);
            (s * 2f64.powi(e as i32)) as f32
        })
        .collect()
}

/// The layer an INQ function runs ([`Exporter::inq`]).
#[derive(Clone, Copy)]
enum Inq {
    /// `Affine` (`INQAffine`).
    Affine,
    /// `Convolution` (`INQConvolution`).
    Convolution,
}

impl Exporter<'_> {
    /// Lowers `INQAffine(x, W, indicator[, b])`: `Affine` with the weight
    /// computed by [`inq_weights`] as a new initializer.
    pub(crate) fn inq_affine(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.inq(n, c, Inq::Affine)
    }

    /// Lowers `INQConvolution(x, W, indicator[, b])`: `Convolution` with
    /// the weight computed by [`inq_weights`] as a new initializer.
    pub(crate) fn inq_convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.inq(n, c, Inq::Convolution)
    }

    /// `layer` with the weight computed by [`inq_weights`].
    fn inq(&mut self, n: &Node, c: &Call, layer: Inq) -> Result<()> {
        let (w, ind) = (c.input(1)?, c.input(2)?);
        let bits = a_int(n, "num_bits", 4);
        if !(2..=32).contains(&bits) {
            return Err(Error::Unsupported(format!(
                "{} {}: num_bits {bits} (exported: 2 to 32)",
                n.op, n.name
            )));
        }
        let iters = a_ints(n, "inq_iterations");
        if let Some(&it) = iters.iter().find(|&&i| i != 0) {
            return Err(Error::Unsupported(format!(
                "{} {}: inq_iterations {iters:?} fixes more weights (changing the parameters) \
                 at forward pass {it}, so what the network computes depends on how many times \
                 it ran (exported: no iteration, or only 0)",
                n.op, n.name
            )));
        }
        let tw = self.weights.weight(w).ok_or_else(|| {
            Error::Unsupported(format!("{} {}: weight {w:?} has no data", n.op, n.name))
        })?;
        let ti = self.weights.weight(ind).ok_or_else(|| {
            Error::Unsupported(format!(
                "{} {}: indicator {ind:?} has no data (it must be a parameter)",
                n.op, n.name
            ))
        })?;
        if tw.dims() != ti.dims() {
            return Err(Error::Invalid(format!(
                "{} {}: the indicator's shape {:?} is not the weight's {:?}",
                n.op,
                n.name,
                ti.dims(),
                tw.dims()
            )));
        }
        let wv = tw.to_vec::<f32>()?;
        let mut iv = ti.to_vec::<f32>()?;
        if !iters.is_empty() {
            // iteration 0 is the last: the first forward pass fixes every
            // weight before quantising
            iv.iter_mut().for_each(|v| *v = 1.0);
        }
        let q = inq_weights(&wv, &iv, bits);
        let t = Tensor::from_values(tw.dims().to_vec(), &q)?;
        let name = self.cx.helper_name(&format!("{w}/inq"));
        self.cx.b.initializer(&name, &t)?;
        let dims = tw.dims().iter().map(|&d| d as i64).collect();
        self.inferred.insert(name.clone(), dims);
        let mut ins = vec![c.ins[0], name.as_str()];
        if let Some(b) = c.ins.get(3) {
            ins.push(b);
        }
        let mut plain = n.clone();
        plain.op = match layer {
            Inq::Affine => "Affine",
            Inq::Convolution => "Convolution",
        }
        .into();
        let call = Call {
            ins,
            out: c.out,
            entry: c.entry,
            op: &n.op,
            name: c.name,
        };
        match layer {
            Inq::Affine => self.affine(&plain, &call),
            Inq::Convolution => self.convolution(&plain, &call),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_weights_become_powers_of_two() {
        // max 0.9: n1 = 0 (log2 0.9 = -0.15, fraction 0.85 >= 0.585)
        let w = [0.9, -0.3, 0.01, 0.2];
        let q = inq_weights(&w, &[1.0, 1.0, 1.0, 0.0], 4);
        // n2 = 0 + 1 - 4 = -3, threshold 2^-4
        assert_eq!(q, vec![1.0, -0.25, 0.0, 0.2]);
    }
}
