//! Quantisation to a range: `Pow2Quantize` (powers of two) and
//! `MinMaxQuantize` (a uniform grid between a nudged minimum and maximum),
//! both kept in float as nnabla computes them.

use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_float, a_int};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `Pow2Quantize(sign, with_zero, n, m)` as nnabla 1.39's forward
    /// pass: `q = 2^round(log2|x|)` (half away from zero), at most
    /// `p_max = 2^m`; below `p_min = 2^(m - (2^k - 1))` (`k = n` less one bit
    /// for the sign and one for zero) it is `p_min`, or with `with_zero` 0
    /// when `|x| < p_min / sqrt(2)`. Then the sign: `-q` for negative `x`,
    /// or when unsigned 0 (`with_zero`) or `p_min`.
    pub(crate) fn pow2_quantize(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let sign = n.attribute("sign").and_then(Attribute::as_int) != Some(0);
        let with_zero = n.attribute("with_zero").and_then(Attribute::as_int) != Some(0);
        let bits = a_int(n, "n", 8);
        let m = a_int(n, "m", 1);
        let k = bits - i64::from(sign) - i64::from(with_zero);
        // nnabla: n > 0 after the sign and zero bits; the exponent range
        // 2^k - 1 is kept within what an f32 power of two reaches
        let span = u32::try_from(k)
            .ok()
            .filter(|&k| (1..=8).contains(&k))
            .map(|k| (1i64 << k) - 1);
        let p = span.and_then(|s| {
            let (hi, lo) = (m, m.checked_sub(s)?);
            ((-126..=127).contains(&hi) && (-126..=127).contains(&lo)).then_some((hi, lo))
        });
        let Some((hi, lo)) = p else {
            return Err(Error::Unsupported(format!(
                "Pow2Quantize {}: n = {bits}, m = {m} with sign = {sign}, with_zero = {with_zero} \
                 (exported: 1 to 8 bits of exponent after the sign and zero bits, the powers of \
                 two within float's normal range)",
                n.name
            )));
        };
        let p_max = 2f32.powi(hi as i32);
        let p_min = 2f32.powi(lo as i32);
        // nnabla stores p_min * 2^-0.5 as a float
        let threshold = (f64::from(p_min) * 2f64.powf(-0.5)) as f32;
        let a = self.cx.op("Abs", &[x], vec![]);
        let l = self.cx.op("Log", &[&a], vec![]);
        let ln2 = self.cx.scalar(std::f32::consts::LN_2);
        let l2 = self.cx.op("Div", &[&l, &ln2], vec![]);
        let r = self.round(&l2, false);
        let two = self.cx.scalar(2.0);
        let q = self.cx.op("Pow", &[&two, &r], vec![]);
        let pmax = self.cx.scalar(p_max);
        let q = self.cx.op("Min", &[&q, &pmax], vec![]);
        let pmin = self.cx.scalar(p_min);
        let q = if with_zero {
            let small = self.cx.op("Less", &[&q, &pmin], vec![]);
            let th = self.cx.scalar(threshold);
            let below = self.cx.op("Less", &[&a, &th], vec![]);
            let zero = self.cx.scalar(0.0);
            let low = self.cx.op("Where", &[&below, &zero, &pmin], vec![]);
            self.cx.op("Where", &[&small, &low, &q], vec![])
        } else {
            self.cx.op("Max", &[&q, &pmin], vec![])
        };
        let zero = self.cx.scalar(0.0);
        let neg = self.cx.op("Less", &[x, &zero], vec![]);
        let other = if sign {
            self.cx.op("Neg", &[&q], vec![])
        } else if with_zero {
            zero
        } else {
            pmin
        };
        self.cx
            .op_to("Where", &n.name, &[&neg, &other, &q], c.out, vec![]);
        Ok(())
    }

    /// Lowers `MinMaxQuantize(x, qr_min, qr_max, ql_min, ql_max)` as nnabla
    /// 1.39's forward pass: with `x_min_max` the range is `x`'s minimum and
    /// maximum over the axes where `ql_min` has size 1; `qr_max` is raised
    /// to `qr_min + eps` when closer; `scale = (qr_max - qr_min) / (ql_max -
    /// ql_min)`; the zero point `ql_min - qr_min / scale`, clamped to
    /// `[ql_min, ql_max]` or rounded, nudges the range; `x` is clipped to
    /// it and rounded to the grid (half away from zero).
    pub(crate) fn min_max_quantize(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let (qr_min, qr_max) = (c.input(1)?, c.input(2)?);
        let (ql_min, ql_max) = (c.input(3)?, c.input(4)?);
        let x_min_max = a_bool(n, "x_min_max");
        if x_min_max && a_bool(n, "ema") {
            return Err(Error::Unsupported(format!(
                "MinMaxQuantize {}: x_min_max with ema = true updates qr_min and qr_max (its \
                 parameters) at every forward pass, so what it computes depends on how many \
                 times the network ran before (not exported; export with ema = false)",
                n.name
            )));
        }
        let eps = a_float(n, "eps", 0.01) as f32;
        let (lo, hi) = if x_min_max {
            let ql = self.dims(ql_min).ok_or_else(|| {
                Error::Unsupported(format!(
                    "MinMaxQuantize {}: the shape of ql_min {ql_min:?} is not known (the axes \
                     of x's minimum and maximum follow from it)",
                    n.name
                ))
            })?;
            let axes: Vec<i64> = (0i64..)
                .zip(&ql)
                .filter(|(_, d)| **d == 1)
                .map(|(a, _)| a)
                .collect();
            if axes.is_empty() {
                (x.to_string(), x.to_string())
            } else {
                (
                    self.cx.reduce("ReduceMin", x, &axes, true),
                    self.cx.reduce("ReduceMax", x, &axes, true),
                )
            }
        } else {
            (qr_min.to_string(), qr_max.to_string())
        };
        // nudge_range: qr_max at least qr_min + eps
        let e = self.cx.scalar(eps);
        let span = self.cx.op("Sub", &[&hi, &lo], vec![]);
        let narrow = self.cx.op("Less", &[&span, &e], vec![]);
        let lo_e = self.cx.op("Add", &[&lo, &e], vec![]);
        let hi = self.cx.op("Where", &[&narrow, &lo_e, &hi], vec![]);
        let span = self.cx.op("Sub", &[&hi, &lo], vec![]);
        let levels = self.cx.op("Sub", &[ql_max, ql_min], vec![]);
        let scale = self.cx.op("Div", &[&span, &levels], vec![]);
        // the nudged zero point
        let lo_s = self.cx.op("Div", &[&lo, &scale], vec![]);
        let zp = self.cx.op("Sub", &[ql_min, &lo_s], vec![]);
        let zr = self.round(&zp, false);
        let at_max = self.cx.op("GreaterOrEqual", &[&zp, ql_max], vec![]);
        let zr = self.cx.op("Where", &[&at_max, ql_max, &zr], vec![]);
        let at_min = self.cx.op("LessOrEqual", &[&zp, ql_min], vec![]);
        let zn = self.cx.op("Where", &[&at_min, ql_min, &zr], vec![]);
        let d_lo = self.cx.op("Sub", &[ql_min, &zn], vec![]);
        let lo_n = self.cx.op("Mul", &[&d_lo, &scale], vec![]);
        let d_hi = self.cx.op("Sub", &[ql_max, &zn], vec![]);
        let hi_n = self.cx.op("Mul", &[&d_hi, &scale], vec![]);
        let v = self.cx.op("Max", &[x, &lo_n], vec![]);
        let v = self.cx.op("Min", &[&v, &hi_n], vec![]);
        let v = self.cx.op("Sub", &[&v, &lo_n], vec![]);
        let v = self.cx.op("Div", &[&v, &scale], vec![]);
        let v = self.round(&v, false);
        let v = self.cx.op("Mul", &[&v, &scale], vec![]);
        self.cx.op_to("Add", &n.name, &[&v, &lo_n], c.out, vec![]);
        Ok(())
    }
}
