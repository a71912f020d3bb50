//! Normalisations.

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_float, a_ints};
use crate::export::{Ctx, Error, Result};

impl Exporter<'_> {
    /// Lowers `BatchNormalization`.
    pub(crate) fn batch_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (ins, out) = (&c.ins[..], c.out);
        let x = ins[0];
        let axes = a_ints(n, "axes");
        if !(axes.is_empty() || axes == [1]) {
            return Err(Error::Unsupported(format!(
                "axes {axes:?} (only [1] is exported)"
            )));
        }
        let eps = a_float(n, "eps", 1e-5) as f32;
        let no_scale = a_bool(n, "no_scale");
        let no_bias = a_bool(n, "no_bias");
        // inputs: x, beta?, gamma?, mean, variance
        let mut k = 1;
        let beta = if no_bias {
            None
        } else {
            k += 1;
            ins.get(k - 1).copied()
        };
        let gamma = if no_scale {
            None
        } else {
            k += 1;
            ins.get(k - 1).copied()
        };
        let (mean, var) = (ins.get(k).copied(), ins.get(k + 1).copied());
        let rank = self.rank(n, x)?;
        let flat = |cx: &mut Ctx, v: Option<&str>, default: f32| -> String {
            match v {
                Some(v) => cx.reshape(v, &[-1]),
                None => cx.floats("c", &[default], &[1]),
            }
        };
        let beta = flat(&mut self.cx, beta, 0.0);
        let gamma = flat(&mut self.cx, gamma, 1.0);
        if !a_bool(n, "batch_stat") {
            let (Some(mean), Some(var)) = (mean, var) else {
                return Err(Error::Invalid(
                    "BatchNormalization needs mean and variance".into(),
                ));
            };
            let mean = self.cx.reshape(mean, &[-1]);
            let var = self.cx.reshape(var, &[-1]);
            self.cx.op_to(
                "BatchNormalization",
                &n.name,
                &[x, &gamma, &beta, &mean, &var],
                out,
                vec![attr::float("epsilon", eps)],
            );
            return Ok(());
        }
        // Statistics of the batch itself: over every axis but the channels.
        let red: Vec<i64> = (0..rank as i64).filter(|&a| a != 1).collect();
        let bshape: Vec<i64> = (0..rank).map(|a| if a == 1 { -1 } else { 1 }).collect();
        let m = self.cx.reduce("ReduceMean", x, &red, true);
        let d = self.cx.op("Sub", &[x, &m], vec![]);
        let d2 = self.cx.op("Mul", &[&d, &d], vec![]);
        let v = self.cx.reduce("ReduceMean", &d2, &red, true);
        let e = self.cx.scalar(eps);
        let ve = self.cx.op("Add", &[&v, &e], vec![]);
        let sd = self.cx.op("Sqrt", &[&ve], vec![]);
        let norm = self.cx.op("Div", &[&d, &sd], vec![]);
        let g = self.cx.reshape(&gamma, &bshape);
        let b = self.cx.reshape(&beta, &bshape);
        let scaled = self.cx.op("Mul", &[&norm, &g], vec![]);
        self.cx.op_to("Add", &n.name, &[&scaled, &b], out, vec![]);
        Ok(())
    }
}
