//! Normalisations.

use onnx_format::builder::attr;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_bool, a_float, a_ints};
use crate::export::{Ctx, Error, Result};

/// The axes [`Exporter::group_like_normalization`] takes statistics over
/// (besides the batch axes).
#[derive(Clone, Copy)]
enum Stats {
    /// Every other axis (`LayerNormalization`).
    Layer,
    /// Every other axis but the channel axis (`InstanceNormalization`).
    Instance,
    /// Each group of channels (`GroupNormalization`).
    Group,
}

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

    /// `(x - mean) / sqrt(var + eps)` over `axes` (biased variance).
    fn standardize(&mut self, x: &str, axes: &[i64], eps: f32) -> String {
        let m = self.cx.reduce("ReduceMean", x, axes, true);
        let d = self.cx.op("Sub", &[x, &m], vec![]);
        let d2 = self.cx.op("Mul", &[&d, &d], vec![]);
        let v = self.cx.reduce("ReduceMean", &d2, axes, true);
        let e = self.cx.scalar(eps);
        let ve = self.cx.op("Add", &[&v, &e], vec![]);
        let sd = self.cx.op("Sqrt", &[&ve], vec![]);
        self.cx.op("Div", &[&d, &sd], vec![])
    }

    /// Lowers `LayerNormalization` ([`Exporter::group_like_normalization`]).
    pub(crate) fn layer_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.group_like_normalization(n, c, Stats::Layer)
    }

    /// Lowers `InstanceNormalization`
    /// ([`Exporter::group_like_normalization`]).
    pub(crate) fn instance_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.group_like_normalization(n, c, Stats::Instance)
    }

    /// Lowers `GroupNormalization` ([`Exporter::group_like_normalization`]).
    pub(crate) fn group_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.group_like_normalization(n, c, Stats::Group)
    }

    /// `LayerNormalization`, `InstanceNormalization` and
    /// `GroupNormalization` (inputs `x, beta?, gamma?`): statistics over
    /// every axis but the batch axes (and the channel axis, or the group,
    /// as `stats` says), then `* gamma + beta`.
    fn group_like_normalization(&mut self, n: &Node, c: &Call, stats: Stats) -> Result<()> {
        let x = c.input(0)?;
        let rank = self.rank(n, x)? as i64;
        let eps = a_float(n, "eps", 1e-5) as f32;
        let norm_axis = |a: i64| if a < 0 { a + rank } else { a };
        let batch: Vec<i64> = a_ints(n, "batch_axis").into_iter().map(norm_axis).collect();
        let channel = norm_axis(super::a_int(n, "channel_axis", 1));
        let mut k = 1;
        let beta = if a_bool(n, "no_bias") {
            None
        } else {
            k += 1;
            c.ins.get(k - 1).copied()
        };
        let gamma = if a_bool(n, "no_scale") {
            None
        } else {
            c.ins.get(k).copied()
        };
        let normed = match stats {
            Stats::Layer => {
                let axes: Vec<i64> = (0..rank).filter(|a| !batch.contains(a)).collect();
                self.standardize(x, &axes, eps)
            }
            Stats::Instance => {
                let axes: Vec<i64> = (0..rank)
                    .filter(|a| !batch.contains(a) && *a != channel)
                    .collect();
                self.standardize(x, &axes, eps)
            }
            Stats::Group => {
                // (.., C, ..) as (.., G, C/G, ..): statistics per group
                let groups = super::a_int(n, "num_groups", 1);
                let dims = self.shape(x).map(<[i64]>::to_vec).unwrap_or_default();
                let cdim = dims.get(channel as usize).copied().unwrap_or(-1);
                if dims.len() != rank as usize
                    || dims.iter().skip(1).any(|&d| d < 0)
                    || cdim <= 0
                    || groups <= 0
                    || cdim % groups != 0
                {
                    return Err(Error::Unsupported(
                        "GroupNormalization needs the declared shape of its input".into(),
                    ));
                }
                let mut g = dims.clone();
                g[0] = 0;
                g[channel as usize] = cdim / groups;
                g.insert(channel as usize, groups);
                let gs: Vec<i64> = g.iter().map(|&d| if d < 0 { 0 } else { d }).collect();
                let xg = self.cx.reshape(x, &gs);
                let axes: Vec<i64> = (0..rank + 1)
                    .filter(|a| !batch.contains(a) && *a != channel)
                    .collect();
                let s = self.standardize(&xg, &axes, eps);
                let sh = self.cx.op("Shape", &[x], vec![]);
                self.cx.op("Reshape", &[&s, &sh], vec![])
            }
        };
        let scaled = match gamma {
            Some(gm) => self.cx.op("Mul", &[&normed, gm], vec![]),
            None => normed,
        };
        match beta {
            Some(b) => self.cx.op_to("Add", &n.name, &[&scaled, b], c.out, vec![]),
            None => self
                .cx
                .op_to("Identity", &n.name, &[&scaled], c.out, vec![]),
        }
        Ok(())
    }

    /// Lowers `MeanSubtraction(x, mean, t)` at inference: `x - mean`.
    pub(crate) fn mean_subtraction(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.cx
            .op_to("Sub", &n.name, &[c.input(0)?, c.input(1)?], c.out, vec![]);
        Ok(())
    }
}
