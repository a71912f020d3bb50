//! Determinants (`BatchDet`, `BatchLogdet`) and the parameter-free
//! normalisations `NormNormalization`, `WeightStandardization`,
//! `WeightNormalization`, `TensorNormalization`, `SpectralNorm` (test).

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_float, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `BatchDet`: ONNX `Det` over the last two axes.
    pub(crate) fn batch_det(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.cx.op_to("Det", &n.name, &[c.input(0)?], c.out, vec![]);
        Ok(())
    }

    /// Lowers `BatchLogdet`: `log |det|` over the last two axes.
    pub(crate) fn batch_logdet(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let d = self.cx.op("Det", &[x], vec![]);
        let a = self.cx.op("Abs", &[&d], vec![]);
        self.cx.op_to("Log", &n.name, &[&a], c.out, vec![]);
        Ok(())
    }

    /// Lowers `NormNormalization`: `x / (sum over axes of |x|^p)^(1/p)`
    /// (all axes when `axes` is empty). nnabla 1.39's forward pass does not
    /// use `eps` (an all-zero slice gives NaN there too), so neither does
    /// the export.
    pub(crate) fn norm_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let p = a_float(n, "p", 2.0);
        if !(p.is_finite() && p >= 1.0) {
            return Err(Error::Unsupported(format!(
                "NormNormalization {}: p = {p} (nnabla requires p >= 1)",
                n.name
            )));
        }
        let a = self.cx.op("Abs", &[x], vec![]);
        let pk = self.cx.scalar(p as f32);
        let pw = self.cx.op("Pow", &[&a, &pk], vec![]);
        let s = self.cx.reduce("ReduceSum", &pw, &a_ints(n, "axes"), true);
        let inv = self.cx.scalar((1.0 / p) as f32);
        let norm = self.cx.op("Pow", &[&s, &inv], vec![]);
        self.cx.op_to("Div", &n.name, &[x, &norm], c.out, vec![]);
        Ok(())
    }

    /// Lowers `WeightStandardization`: over every axis but `channel_axis`,
    /// `(w - mean) / sqrt(variance + eps)` (the population variance).
    pub(crate) fn weight_standardization(&mut self, n: &Node, c: &Call) -> Result<()> {
        let w = c.input(0)?;
        let rank = i64::try_from(self.rank(n, w)?).unwrap_or(i64::MAX);
        let ca = a_int(n, "channel_axis", 0);
        let ca = if ca < 0 { ca.saturating_add(rank) } else { ca };
        if !(0..rank).contains(&ca) {
            return Err(Error::Unsupported(format!(
                "WeightStandardization {}: channel_axis {} is outside the weight's {rank} axes",
                n.name,
                a_int(n, "channel_axis", 0)
            )));
        }
        let axes: Vec<i64> = (0..rank).filter(|&a| a != ca).collect();
        if axes.is_empty() {
            return Err(Error::Unsupported(format!(
                "WeightStandardization {}: a 1-D weight has no axis to standardise over",
                n.name
            )));
        }
        let m = self.cx.reduce("ReduceMean", w, &axes, true);
        let d = self.cx.op("Sub", &[w, &m], vec![]);
        let sq = self.cx.op("Mul", &[&d, &d], vec![]);
        let v = self.cx.reduce("ReduceMean", &sq, &axes, true);
        let eps = self.cx.scalar(a_float(n, "eps", 1e-5) as f32);
        let ve = self.cx.op("Add", &[&v, &eps], vec![]);
        let sd = self.cx.op("Sqrt", &[&ve], vec![]);
        self.cx.op_to("Div", &n.name, &[&d, &sd], c.out, vec![]);
        Ok(())
    }

    /// Lowers `WeightNormalization(w, g)`: `g * w / sqrt(sum of w^2 + eps)`,
    /// the sum over every axis but `dim`, `g` (one value per index of
    /// `dim`) laid along `dim`.
    pub(crate) fn weight_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (w, g) = (c.input(0)?, c.input(1)?);
        let rank = i64::try_from(self.rank(n, w)?).unwrap_or(i64::MAX);
        let dim = a_int(n, "dim", 0);
        let dim = if dim < 0 {
            dim.saturating_add(rank)
        } else {
            dim
        };
        if !(0..rank).contains(&dim) || rank < 2 {
            return Err(Error::Unsupported(format!(
                "WeightNormalization {}: dim {} does not leave an axis to normalise over in \
                 the weight's {rank} axes",
                n.name,
                a_int(n, "dim", 0)
            )));
        }
        let axes: Vec<i64> = (0..rank).filter(|&a| a != dim).collect();
        let sq = self.cx.op("Mul", &[w, w], vec![]);
        let s = self.cx.reduce("ReduceSum", &sq, &axes, true);
        let eps = self.cx.scalar(a_float(n, "eps", 1e-12) as f32);
        let se = self.cx.op("Add", &[&s, &eps], vec![]);
        let norm = self.cx.op("Sqrt", &[&se], vec![]);
        let shape: Vec<i64> = (0..rank).map(|a| if a == dim { -1 } else { 1 }).collect();
        let sh = self.cx.ints(&shape);
        let gr = self.cx.op("Reshape", &[g, &sh], vec![]);
        let gw = self.cx.op("Mul", &[&gr, w], vec![]);
        self.cx.op_to("Div", &n.name, &[&gw, &norm], c.out, vec![]);
        Ok(())
    }

    /// Lowers `TensorNormalization(x[, beta][, gamma])`: normalised by the
    /// mean and (population) variance over every axis not in `axes`,
    /// `(x - mean) / sqrt(variance + eps) * gamma + beta` (`gamma` left out
    /// when `no_scale`, `beta` when `no_bias`).
    pub(crate) fn tensor_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let rank = i64::try_from(self.rank(n, x)?).unwrap_or(i64::MAX);
        let mut keep = Vec::new();
        for a in a_ints(n, "axes") {
            let k = if a < 0 { a.saturating_add(rank) } else { a };
            if !(0..rank).contains(&k) {
                return Err(Error::Unsupported(format!(
                    "TensorNormalization {}: axis {a} is outside the input's {rank} axes",
                    n.name
                )));
            }
            keep.push(k);
        }
        let axes: Vec<i64> = (0..rank).filter(|a| !keep.contains(a)).collect();
        let mut k = 1;
        let beta = if a_bool(n, "no_bias") {
            None
        } else {
            k += 1;
            Some(c.input(k - 1)?)
        };
        let gamma = if a_bool(n, "no_scale") {
            None
        } else {
            Some(c.input(k)?)
        };
        // every axis kept: each value is its own mean
        let m = if axes.is_empty() {
            x.to_string()
        } else {
            self.cx.reduce("ReduceMean", x, &axes, true)
        };
        let d = self.cx.op("Sub", &[x, &m], vec![]);
        let dd = self.cx.op("Mul", &[&d, &d], vec![]);
        let v = if axes.is_empty() {
            dd
        } else {
            self.cx.reduce("ReduceMean", &dd, &axes, true)
        };
        let eps = self.cx.scalar(a_float(n, "eps", 1e-5) as f32);
        let ve = self.cx.op("Add", &[&v, &eps], vec![]);
        let sd = self.cx.op("Sqrt", &[&ve], vec![]);
        let mut y = self.cx.op("Div", &[&d, &sd], vec![]);
        if let Some(gm) = gamma {
            y = self.cx.op("Mul", &[&y, gm], vec![]);
        }
        if let Some(b) = beta {
            y = self.cx.op("Add", &[&y, b], vec![]);
        }
        self.cx.op_to("Identity", &n.name, &[&y], c.out, vec![]);
        Ok(())
    }

    /// Lowers `SpectralNorm(w, u)` with `test` (`u` not updated): `w` as a
    /// matrix of rows along `dim`; `itr` power iterations
    /// `v = l2n(Wᵀu)`, `u = l2n(Wv)` with `l2n(a) = a / sqrt(sum a² + eps)`;
    /// the output `w / (uᵀ W v)`.
    pub(crate) fn spectral_norm(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (w, u0) = (c.input(0)?, c.input(1)?);
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "SpectralNorm {}: {what}",
                n.name
            )))
        };
        if !a_bool(n, "test") {
            return refuse(
                "test=False updates u at every forward pass (training); a network saved with \
                 test=True is exported"
                    .into(),
            );
        }
        if a_bool(n, "output_u") || n.outputs.len() > 1 {
            return refuse("output_u (u as a second output) is not exported".into());
        }
        let rank = i64::try_from(self.rank(n, w)?).unwrap_or(i64::MAX);
        let dim = a_int(n, "dim", 0);
        let dim = if dim < 0 {
            dim.saturating_add(rank)
        } else {
            dim
        };
        if !(0..rank).contains(&dim) {
            return refuse(format!("dim {dim} is outside the weight's {rank} axes"));
        }
        let itr = a_int(n, "itr", 1);
        if !(1..=1000).contains(&itr) {
            return refuse(format!("itr {itr} (exported: 1 to 1000 iterations)"));
        }
        let mut perm = vec![dim];
        perm.extend((0..rank).filter(|&a| a != dim));
        let t = self
            .cx
            .op("Transpose", &[w], vec![attr::ints("perm", &perm)]);
        let m = self.cx.reshape(&t, &[0, -1]);
        let eps = self.cx.scalar(a_float(n, "eps", 1e-12) as f32);
        let mut u = u0.to_string();
        let mut v = String::new();
        let l2n = |e: &mut Self, a: &str| {
            let sq = e.cx.op("Mul", &[a, a], vec![]);
            let s = e.cx.reduce("ReduceSum", &sq, &[], true);
            let se = e.cx.op("Add", &[&s, &eps], vec![]);
            let r = e.cx.op("Sqrt", &[&se], vec![]);
            e.cx.op("Div", &[a, &r], vec![])
        };
        for _ in 0..itr {
            let wtu = self.cx.op("MatMul", &[&u, &m], vec![]);
            v = l2n(self, &wtu);
            let wv = self.cx.op("MatMul", &[&m, &v], vec![]);
            u = l2n(self, &wv);
        }
        let wv = self.cx.op("MatMul", &[&m, &v], vec![]);
        // the dot product uᵀ(Wv) (tract runs no MatMul of two vectors)
        let uwv = self.cx.op("Mul", &[&u, &wv], vec![]);
        let sigma = self.cx.reduce("ReduceSum", &uwv, &[], false);
        self.cx.op_to("Div", &n.name, &[w, &sigma], c.out, vec![]);
        Ok(())
    }
}
