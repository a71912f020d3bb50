//! N-dimensional gathering, coordinate grids and shifts: `GatherNd`,
//! `Meshgrid` and `Shift`.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_int, a_ints};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `GatherNd(data, indices)`: nnabla's index tuples run along
    /// the first axis of `indices`, ONNX `GatherND`'s along the last, so the
    /// indices are rotated first.
    pub(crate) fn gather_nd(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (data, idx) = (c.input(0)?, c.input(1)?);
        let r = self.rank(n, idx)?;
        let perm: Vec<i64> = (1..r as i64).chain([0]).collect();
        let t = self
            .cx
            .op("Transpose", &[idx], vec![attr::ints("perm", &perm)]);
        let i = self.cx.cast(&t, DataType::Int64);
        self.cx
            .op_to("GatherND", &n.name, &[data, &i], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Meshgrid(ij_indexing)`: each 1-D input reshaped onto its
    /// own axis and expanded to the grid (with `xy` indexing the first two
    /// axes swap, as numpy's).
    pub(crate) fn meshgrid(&mut self, n: &Node, c: &Call) -> Result<()> {
        let ij = a_int(n, "ij_indexing", 0) != 0;
        let mut lens = Vec::with_capacity(c.ins.len());
        for x in &c.ins {
            let d = self.dims(x).unwrap_or_default();
            match d.as_slice() {
                [l] if *l >= 1 => lens.push(*l),
                _ => {
                    return Err(Error::Unsupported(format!(
                        "Meshgrid function {:?}: input {x:?} must be 1-D of known length, \
                         not {d:?}",
                        n.name
                    )));
                }
            }
        }
        let k = lens.len();
        let pos = |i: usize| {
            if !ij && k >= 2 && i < 2 { 1 - i } else { i }
        };
        let mut grid = vec![0i64; k];
        for (i, &l) in lens.iter().enumerate() {
            grid[pos(i)] = l;
        }
        let g = self.cx.ints(&grid);
        for (i, x) in c.ins.iter().enumerate() {
            let out = n.outputs.get(i).ok_or_else(|| {
                Error::Invalid(format!("Meshgrid function {:?} lacks output {i}", n.name))
            })?;
            let mut shape = vec![1i64; k];
            shape[pos(i)] = lens[i];
            let r = self.cx.reshape(x, &shape);
            // one node keeps the function's name (node names are unique)
            let name = if i == 0 { n.name.as_str() } else { "" };
            self.cx.op_to("Expand", name, &[&r, &g], out, vec![]);
        }
        Ok(())
    }
}

impl Exporter<'_> {
    /// Lowers `Shift(shifts, border_mode)`: along each of the trailing axes
    /// `shifts` names, a `Gather` of constant indices `i - shift`, clamped
    /// (`nearest`) or mirrored with the edge repeated (`reflect`, as nnabla
    /// 1.39 computes it).
    pub(crate) fn shift(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let dims = self.dims(x).unwrap_or_default();
        let shifts = a_ints(n, "shifts");
        let mode = n
            .attribute("border_mode")
            .and_then(tensor_core::graph::Attribute::as_str)
            .unwrap_or("nearest")
            .to_string();
        if mode != "nearest" && mode != "reflect" {
            return Err(Error::Unsupported(format!(
                "Shift function {:?}: border_mode {mode:?} (nearest and reflect are exported)",
                n.name
            )));
        }
        let lead = dims.len().checked_sub(shifts.len()).ok_or_else(|| {
            Error::Invalid(format!(
                "Shift function {:?}: {} shifts for a rank-{} input",
                n.name,
                shifts.len(),
                dims.len()
            ))
        })?;
        let mut cur = x.to_string();
        let mut steps = Vec::new();
        for (k, &s) in shifts.iter().enumerate() {
            let len = dims[lead + k];
            if !(1..=1 << 24).contains(&len) || s.unsigned_abs() > 1 << 24 {
                return Err(Error::Unsupported(format!(
                    "Shift function {:?}: axis {} has length {len} with shift {s} (known \
                     lengths and shifts up to 2^24 are exported)",
                    n.name,
                    lead + k
                )));
            }
            if s != 0 {
                steps.push((lead + k, len, s));
            }
        }
        for (pos, &(axis, len, s)) in steps.iter().enumerate() {
            let idx: Vec<i64> = (0..len)
                .map(|i| {
                    let j = i - s;
                    if mode == "nearest" {
                        j.clamp(0, len - 1)
                    } else {
                        let m = j.rem_euclid(2 * len);
                        if m < len { m } else { 2 * len - 1 - m }
                    }
                })
                .collect();
            let idx = self.cx.ints(&idx);
            let a = vec![attr::int("axis", axis as i64)];
            if pos + 1 == steps.len() {
                self.cx.op_to("Gather", &n.name, &[&cur, &idx], c.out, a);
                return Ok(());
            }
            cur = self.cx.op("Gather", &[&cur, &idx], a);
        }
        self.cx.op_to("Identity", &n.name, &[&cur], c.out, vec![]);
        Ok(())
    }
}

impl Exporter<'_> {
    /// Lowers `ScatterNd(data, indices, shape)`: `data` written at the index
    /// tuples (along the first axis of `indices`, as `GatherNd`'s) of zeros
    /// of `shape`, as ONNX `ScatterND` writes them (distinct tuples; where
    /// a tuple repeats, ONNX leaves unspecified which value stays).
    pub(crate) fn scatter_nd(&mut self, n: &Node, c: &Call) -> Result<()> {
        if a_int(n, "add", 0) != 0 {
            return Err(Error::Unsupported(format!(
                "ScatterNd function {:?}: add = true (ScatterND's add reduction needs \
                 operator set 16; not exported)",
                n.name
            )));
        }
        let (data, idx) = (c.input(0)?, c.input(1)?);
        let base = match c.ins.get(2) {
            Some(out) => out.to_string(),
            None => {
                let shape = a_ints(n, "shape");
                if shape.is_empty() || shape.iter().any(|&d| d < 0) {
                    return Err(Error::Invalid(format!(
                        "ScatterNd function {:?}: shape {shape:?}",
                        n.name
                    )));
                }
                let s = self.cx.ints(&shape);
                let zero = self.cx.scalar(0.0);
                self.cx.op("Expand", &[&zero, &s], vec![])
            }
        };
        let r = self.rank(n, idx)?;
        let perm: Vec<i64> = (1..r as i64).chain([0]).collect();
        let t = self
            .cx
            .op("Transpose", &[idx], vec![attr::ints("perm", &perm)]);
        let i = self.cx.cast(&t, DataType::Int64);
        self.cx
            .op_to("ScatterND", &n.name, &[&base, &i, data], c.out, vec![]);
        Ok(())
    }
}
