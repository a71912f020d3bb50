//! Functions without inputs, exported as constants: `Arange`, `Linspace`
//! and `Constant`.

use tensor_core::graph::Node;

use super::{Call, Exporter, a_float, a_int, a_ints};
use crate::export::{Error, Result};

/// The most elements a generated constant may have.
const MAX_ELEMENTS: f64 = (1u64 << 24) as f64;

impl Exporter<'_> {
    /// Writes `values` (of shape `dims`) as the function's output.
    fn constant_out(&mut self, n: &Node, c: &Call, values: &[f32], dims: &[i64]) {
        let k = self.cx.floats("generated", values, dims);
        self.cx.op_to("Identity", &n.name, &[&k], c.out, vec![]);
    }

    /// Lowers `Arange(start, stop, step)`: `start + i * step` while below
    /// `stop` (above it for a negative step).
    pub(crate) fn arange(&mut self, n: &Node, c: &Call) -> Result<()> {
        let start = a_float(n, "start", 0.0);
        let stop = a_float(n, "stop", 0.0);
        let step = a_float(n, "step", 1.0);
        let count = ((stop - start) / step).ceil();
        if step == 0.0 || !count.is_finite() || count > MAX_ELEMENTS {
            return Err(Error::Unsupported(format!(
                "Arange function {:?}: start {start}, stop {stop}, step {step} (a nonzero \
                 step giving at most 2^24 values is exported)",
                n.name
            )));
        }
        let count = count.max(0.0) as i64;
        let values: Vec<f32> = (0..count)
            .map(|i| (start + i as f64 * step) as f32)
            .collect();
        self.constant_out(n, c, &values, &[count]);
        Ok(())
    }

    /// Lowers `Linspace(start, stop, num)`: `num` evenly spaced values from
    /// `start` to `stop` inclusive.
    pub(crate) fn linspace(&mut self, n: &Node, c: &Call) -> Result<()> {
        let start = a_float(n, "start", 0.0);
        let stop = a_float(n, "stop", 0.0);
        let num = a_int(n, "num", 0);
        if !(0..=1 << 24).contains(&num) {
            return Err(Error::Unsupported(format!(
                "Linspace function {:?}: num {num} (0 to 2^24 values are exported)",
                n.name
            )));
        }
        let step = if num > 1 {
            (stop - start) / (num - 1) as f64
        } else {
            0.0
        };
        let values: Vec<f32> = (0..num).map(|i| (start + i as f64 * step) as f32).collect();
        self.constant_out(n, c, &values, &[num]);
        Ok(())
    }

    /// Lowers `Constant(val, shape)`: `val` everywhere.
    pub(crate) fn constant(&mut self, n: &Node, c: &Call) -> Result<()> {
        let shape = a_ints(n, "shape");
        let total = shape
            .iter()
            .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) })
            .filter(|&t| t as f64 <= MAX_ELEMENTS)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "Constant function {:?}: shape {shape:?} (at most 2^24 elements are \
                     exported)",
                    n.name
                ))
            })?;
        let v = a_float(n, "val", 0.0) as f32;
        self.constant_out(n, c, &vec![v; total as usize], &shape);
        Ok(())
    }
}
