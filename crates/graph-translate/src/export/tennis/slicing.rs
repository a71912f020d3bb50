//! Padding, slicing and cropping: `pad`, `slice`, `slice_v2`, `slice_v3`,
//! `strided_slice`, `crop_nd`, `crop_to`.
//!
//! TenniS clamps slice bounds as TensorFlow's `strided_slice` does; ONNX
//! `Slice` clamps the same way except for a negative step whose begin lies
//! before the first element (TenniS: nothing, ONNX: element 0) or whose end
//! is exactly minus the axis length (TenniS: through element 0, ONNX: stops
//! before it). Those two cases need the axis length, so a negative step
//! with a negative begin or end is refused.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter};
use crate::export::{Error, Result};

/// The padding of a TenniS pad or crop, in ONNX order (all befores, then
/// all afters; negative crops).
enum Pads {
    /// Known when exporting.
    Static(Vec<i64>),
    /// A 1-D `INT64` value computed at run time, for a rank-`r` input.
    Dynamic(String, usize),
}

/// The bounds ONNX `Slice` needs for one TenniS slice axis (`begin`, `end`
/// with their mask bits), or why they cannot be given.
fn onnx_bounds(begin: i64, end: i64, step: i64, bmask: bool, emask: bool) -> Result<(i64, i64)> {
    if step == 0 {
        return Err(Error::Invalid("a slice step of 0".into()));
    }
    let b = if bmask {
        if step > 0 { 0 } else { i64::MAX }
    } else {
        begin
    };
    let e = if emask {
        if step > 0 { i64::MAX } else { i64::MIN }
    } else {
        end
    };
    if step < 0 && ((!bmask && begin < 0) || (!emask && end < 0)) {
        return Err(Error::Unsupported(format!(
            "step {step} with begin {begin} and end {end}: with a negative step TenniS \
             takes nothing when begin is before the first element and runs through \
             element 0 when end equals minus the axis length, where ONNX Slice clamps \
             (keeps element 0, stops before it); the axis length is not known when \
             exporting, so negative begin/end with a negative step is not exported"
        )));
    }
    Ok((b, e))
}

/// The length TenniS's slice of one axis of length `x` keeps (its
/// `infer_output`: TensorFlow's clamping), `None` for a step of 0.
fn tennis_slice_len(
    x: i64,
    begin: i64,
    end: i64,
    step: i64,
    bmask: bool,
    emask: bool,
) -> Option<i64> {
    let (mut b, mut e) = (begin, end);
    if bmask {
        b = if step > 0 { 0 } else { x - 1 };
    } else if step > 0 {
        if b >= x {
            return Some(0);
        } else if b < -x {
            b = 0;
        } else if b < 0 {
            b += x;
        }
    } else if b < -x {
        return Some(0);
    } else if b >= x {
        b = x - 1;
    } else if b < 0 {
        b += x;
    }
    if emask {
        e = if step > 0 { x } else { -1 };
    } else if step > 0 {
        if e <= -x {
            return Some(0);
        } else if e > x {
            e = x;
        } else if e < 0 {
            e += x;
        }
    } else if e > x {
        return Some(0);
    } else if e <= -x {
        e = -1;
    } else if e < 0 {
        e += x;
    }
    match step {
        0 => None,
        s if s > 0 => Some(if b < e { (e - b - 1) / s + 1 } else { 0 }),
        s => Some(if b > e {
            (b - e - 1) / s.checked_neg()? + 1
        } else {
            0
        }),
    }
}

/// `slice_v3` axes TenniS can run: it checks negative axes against the
/// rank but then indexes its bounds with them unchanged and fails.
fn negative_axes_ok(axes: &[i64]) -> Result<()> {
    match axes.iter().find(|&&a| a < 0) {
        Some(a) => Err(Error::Unsupported(format!(
            "axis {a}: TenniS's slice_v3 accepts negative axes but then indexes its bounds \
             with them unchanged and fails (\"Can not stride slice\"), so ONNX Slice's \
             counting from the end would compute what TenniS does not"
        ))),
        None => Ok(()),
    }
}

/// One entry of a `strided_slice` specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// `...`: the axes no other entry names, untouched.
    Ellipsis,
    /// A new axis of length 1 (then sliced by the entry's bounds).
    NewAxis,
    /// An axis of the input.
    Axis,
}

/// The masks and bounds of a `strided_slice` node.
struct Strided {
    begin: Vec<i64>,
    end: Vec<i64>,
    stride: Vec<i64>,
    begin_mask: i64,
    end_mask: i64,
    shrink: i64,
    spec: Vec<Spec>,
}

impl Strided {
    fn bit(mask: i64, i: usize) -> bool {
        i < 63 && (mask >> i) & 1 == 1
    }

    /// The position of spec entry `i` in the input with the ellipsis
    /// expanded to `ell` axes and new axes inserted.
    fn pos(&self, i: usize, ell: usize) -> usize {
        match self.spec.iter().position(|s| *s == Spec::Ellipsis) {
            Some(e) if i > e => i - 1 + ell,
            _ => i,
        }
    }

    /// The number of input axes the ellipsis stands for, for a rank-`r`
    /// input.
    fn ellipsis_len(&self, r: usize) -> Result<usize> {
        let named = self.spec.iter().filter(|s| **s == Spec::Axis).count();
        let has = self.spec.contains(&Spec::Ellipsis);
        if named > r {
            return Err(Error::Invalid(format!(
                "{named} sliced axes for a rank-{r} input"
            )));
        }
        Ok(if has { r - named } else { 0 })
    }

    /// The output rank for a rank-`r` input.
    fn out_rank(&self, r: usize) -> Option<usize> {
        let new = self.spec.iter().filter(|s| **s == Spec::NewAxis).count();
        let shrunk = (0..self.spec.len())
            .filter(|&i| self.spec[i] != Spec::Ellipsis && Self::bit(self.shrink, i))
            .count();
        (r + new).checked_sub(shrunk)
    }
}

impl Exporter<'_> {
    /// Integer values of input `k`: a constant, else `None`.
    fn const_input(&self, c: &Call, k: usize) -> Option<Vec<i64>> {
        c.ins.get(k).and_then(|v| self.const_ints(v))
    }

    /// Input `k` as a 1-D `INT64` value for ONNX.
    fn int64_input(&mut self, c: &Call, k: usize) -> Result<String> {
        let v = c.input(k)?;
        Ok(self.cx.cast(v, DataType::Int64))
    }

    fn strided(&self, n: &Node) -> Result<Strided> {
        let begin = self
            .ints(n, "begin")
            .ok_or_else(|| Error::Invalid("no begin".into()))?;
        let end = self
            .ints(n, "end")
            .ok_or_else(|| Error::Invalid("no end".into()))?;
        let stride = self.ints(n, "stride").unwrap_or(vec![1; begin.len()]);
        if begin.len() != end.len() || begin.len() != stride.len() || begin.is_empty() {
            return Err(Error::Invalid(format!(
                "begin, end and stride of lengths {}, {}, {}",
                begin.len(),
                end.len(),
                stride.len()
            )));
        }
        let ellipsis = self.int(n, "ellipsis_mask", 0);
        let new_axis = self.int(n, "new_axis_mask", 0);
        let mut spec = Vec::with_capacity(begin.len());
        for i in 0..begin.len() {
            let (e, a) = (Strided::bit(ellipsis, i), Strided::bit(new_axis, i));
            spec.push(match (e, a) {
                (true, true) => {
                    return Err(Error::Unsupported(format!(
                        "entry {i} is both an ellipsis and a new axis"
                    )));
                }
                (true, false) => Spec::Ellipsis,
                (false, true) => Spec::NewAxis,
                _ => Spec::Axis,
            });
        }
        if spec.iter().filter(|s| **s == Spec::Ellipsis).count() > 1 {
            return Err(Error::Invalid("more than one ellipsis".into()));
        }
        Ok(Strided {
            begin,
            end,
            stride,
            begin_mask: self.int(n, "begin_mask", 0),
            end_mask: self.int(n, "end_mask", 0),
            shrink: self.int(n, "shrink_axis_mask", 0),
            spec,
        })
    }

    /// The length of input 0 of a slice of a 1-D value of static length
    /// (shapes), as an `i64`.
    fn sliced_len(&self, n: &Node) -> Option<i64> {
        i64::try_from(self.len_in(n, 0)?).ok()
    }

    /// One-element input `k`, a constant.
    fn const_one(&self, n: &Node, k: usize) -> Option<i64> {
        let v = n.inputs.get(k).and_then(|v| self.const_ints(v))?;
        (v.len() == 1).then(|| v[0])
    }

    /// The length of `begin`, `size` of a 1-D value of length `x` (`slice`,
    /// `slice_v2`): to its end for a negative size.
    fn begin_size_len(x: i64, b: i64, sz: i64) -> Option<usize> {
        if !(0..x).contains(&b) {
            return None;
        }
        usize::try_from(if sz < 0 { x - b } else { sz }).ok()
    }

    /// The length of a `slice` (`begin`, `size` parameters) of a 1-D value
    /// of static length, where its bounds are known.
    pub(crate) fn len_slice(&self, n: &Node) -> Option<usize> {
        let x = self.sliced_len(n)?;
        let one = |v: Vec<i64>| (v.len() == 1).then(|| v[0]);
        let (b, sz) = (one(self.ints(n, "begin")?)?, one(self.ints(n, "size")?)?);
        Self::begin_size_len(x, b, sz)
    }

    /// The length of a `slice_v2` (begin and size inputs 1, 2) of a 1-D
    /// value of static length, where its bounds are known.
    pub(crate) fn len_slice_v2(&self, n: &Node) -> Option<usize> {
        let x = self.sliced_len(n)?;
        let (b, sz) = (self.const_one(n, 1)?, self.const_one(n, 2)?);
        Self::begin_size_len(x, b, sz)
    }

    /// The length of a `slice_v3` (ONNX's `Slice` inputs) of a 1-D value of
    /// static length, where its bounds are known.
    pub(crate) fn len_slice_v3(&self, n: &Node) -> Option<usize> {
        let x = self.sliced_len(n)?;
        let axes = |k: usize| n.inputs.get(k).and_then(|v| self.const_ints(v));
        if n.inputs.get(3).is_some() && axes(3)? != [0] {
            return None;
        }
        let step = match n.inputs.get(4) {
            Some(_) => self.const_one(n, 4)?,
            None => 1,
        };
        let kept = tennis_slice_len(
            x,
            self.const_one(n, 1)?,
            self.const_one(n, 2)?,
            step,
            false,
            false,
        )?;
        usize::try_from(kept).ok()
    }

    /// The length of a `strided_slice` of a 1-D value of static length,
    /// where its bounds are known.
    pub(crate) fn len_strided_slice(&self, n: &Node) -> Option<usize> {
        let x = self.sliced_len(n)?;
        let s = self.strided(n).ok()?;
        if s.spec != [Spec::Axis] || Strided::bit(s.shrink, 0) {
            return None;
        }
        let kept = tennis_slice_len(
            x,
            s.begin[0],
            s.end[0],
            s.stride[0],
            Strided::bit(s.begin_mask, 0),
            Strided::bit(s.end_mask, 0),
        )?;
        usize::try_from(kept).ok()
    }

    /// The output rank of a `strided_slice` node.
    pub(crate) fn rank_strided_slice(&self, n: &Node) -> Option<usize> {
        self.strided(n).ok()?.out_rank(self.rank_in(n, 0)?)
    }

    /// An ONNX `Slice` of `x` writing `out` (a fresh name when `None`).
    fn slice_node(
        &mut self,
        x: &str,
        bounds: &[(i64, i64, i64, i64)],
        out: Option<&str>,
    ) -> String {
        let starts: Vec<i64> = bounds.iter().map(|b| b.1).collect();
        let ends: Vec<i64> = bounds.iter().map(|b| b.2).collect();
        let axes: Vec<i64> = bounds.iter().map(|b| b.0).collect();
        let steps: Vec<i64> = bounds.iter().map(|b| b.3).collect();
        let s = self.cx.ints(&starts);
        let e = self.cx.ints(&ends);
        let a = self.cx.ints(&axes);
        let st = self.cx.ints(&steps);
        match out {
            Some(o) => {
                self.cx.op_to("Slice", o, &[x, &s, &e, &a, &st], o, vec![]);
                o.to_string()
            }
            None => self.cx.op("Slice", &[x, &s, &e, &a, &st], vec![]),
        }
    }

    /// Lowers `strided_slice` (TensorFlow's masks: begin, end, ellipsis,
    /// new axis, shrink axis): `Unsqueeze` for new axes, `Slice`, `Squeeze`
    /// for shrunk axes.
    pub(crate) fn strided_slice(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let s = self.strided(n)?;
        let ell = s.ellipsis_len(r)?;
        let new: Vec<i64> = (0..s.spec.len())
            .filter(|&i| s.spec[i] == Spec::NewAxis)
            .map(|i| s.pos(i, ell) as i64)
            .collect();
        let mut bounds = Vec::new();
        let mut squeeze = Vec::new();
        for i in 0..s.spec.len() {
            if s.spec[i] == Spec::Ellipsis {
                continue;
            }
            let p = s.pos(i, ell) as i64;
            let (b, e) = onnx_bounds(
                s.begin[i],
                s.end[i],
                s.stride[i],
                Strided::bit(s.begin_mask, i),
                Strided::bit(s.end_mask, i),
            )?;
            bounds.push((p, b, e, s.stride[i]));
            if Strided::bit(s.shrink, i) {
                squeeze.push(p);
            }
        }
        let mut cur = x.to_string();
        if !new.is_empty() {
            cur = self.cx.unsqueeze(&cur, &new);
        }
        if squeeze.is_empty() {
            self.slice_node(&cur, &bounds, Some(c.out));
        } else {
            let y = self.slice_node(&cur, &bounds, None);
            let a = self.cx.ints(&squeeze);
            self.cx.op_to("Squeeze", c.out, &[&y, &a], c.out, vec![]);
        }
        Ok(())
    }

    /// Lowers `slice` (parameters `begin`, `size`; size -1: to the end).
    pub(crate) fn slice(&mut self, n: &Node, c: &Call) -> Result<()> {
        let begin = self
            .ints(n, "begin")
            .ok_or_else(|| Error::Invalid("no begin".into()))?;
        let size = self
            .ints(n, "size")
            .ok_or_else(|| Error::Invalid("no size".into()))?;
        self.slice_begin_size(c, &begin, &size)
    }

    fn slice_begin_size(&mut self, c: &Call, begin: &[i64], size: &[i64]) -> Result<()> {
        if begin.len() != size.len() {
            return Err(Error::Invalid(format!(
                "{} begins and {} sizes",
                begin.len(),
                size.len()
            )));
        }
        let mut bounds = Vec::new();
        for (k, (&b, &s)) in begin.iter().zip(size).enumerate() {
            if b < 0 {
                return Err(Error::Invalid(format!("begin {b} (TenniS needs >= 0)")));
            }
            let e = if s < 0 {
                i64::MAX
            } else {
                b.checked_add(s)
                    .ok_or_else(|| Error::Invalid(format!("begin {b} + size {s}")))?
            };
            bounds.push((k as i64, b, e, 1));
        }
        self.slice_node(c.input(0)?, &bounds, Some(c.out));
        Ok(())
    }

    /// Lowers `slice_v2` (inputs begin, size; size -1: to the end).
    pub(crate) fn slice_v2(&mut self, _n: &Node, c: &Call) -> Result<()> {
        if let (Some(b), Some(s)) = (self.const_input(c, 1), self.const_input(c, 2)) {
            return self.slice_begin_size(c, &b, &s);
        }
        // begin and size computed at run time: end = begin + size, or the
        // end of the axis where size is negative.
        let b = self.int64_input(c, 1)?;
        let s = self.int64_input(c, 2)?;
        let sum = self.cx.op("Add", &[&b, &s], vec![]);
        let zero = self.cx.ints(&[0]);
        let neg = self.cx.op("Less", &[&s, &zero], vec![]);
        let big = self.cx.ints(&[i64::MAX]);
        let e = self.cx.op("Where", &[&neg, &big, &sum], vec![]);
        self.cx
            .op_to("Slice", c.out, &[c.input(0)?, &b, &e], c.out, vec![]);
        Ok(())
    }

    /// Lowers `slice_v3` (inputs starts, ends, optional axes and steps, as
    /// ONNX `Slice` with TenniS's clamping).
    pub(crate) fn slice_v3(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let starts = self.const_input(c, 1);
        let ends = self.const_input(c, 2);
        let steps = match c.ins.get(4) {
            Some(_) => Some(self.const_input(c, 4).ok_or_else(|| {
                Error::Unsupported(
                    "steps computed at run time (their signs decide how TenniS clamps)".into(),
                )
            })?),
            None => None,
        };
        let count = starts
            .as_ref()
            .map(Vec::len)
            .or_else(|| steps.as_ref().map(Vec::len));
        let axes = match c.ins.get(3) {
            Some(_) => Some(
                self.const_input(c, 3)
                    .ok_or_else(|| Error::Unsupported("axes computed at run time".into()))?,
            ),
            None => None,
        };
        let count = count.or_else(|| axes.as_ref().map(Vec::len));
        if let (Some(st), Some(en), Some(k)) = (&starts, &ends, count) {
            let steps = steps.unwrap_or(vec![1; k]);
            let axes = axes.unwrap_or((0..k as i64).collect());
            negative_axes_ok(&axes)?;
            if st.len() != k || en.len() != k || steps.len() != k || axes.len() != k {
                return Err(Error::Invalid(
                    "starts, ends, axes and steps of different lengths".into(),
                ));
            }
            let mut bounds = Vec::new();
            for i in 0..k {
                let (b, e) = onnx_bounds(st[i], en[i], steps[i], false, false)?;
                bounds.push((axes[i], b, e, steps[i]));
            }
            self.slice_node(x, &bounds, Some(c.out));
            return Ok(());
        }
        // Bounds computed at run time: positive steps clamp as ONNX does.
        if steps.as_ref().is_some_and(|s| s.iter().any(|&v| v <= 0)) {
            return Err(Error::Unsupported(
                "a negative step with starts or ends computed at run time (see the \
                 negative-step clamping difference)"
                    .into(),
            ));
        }
        if let Some(a) = &axes {
            negative_axes_ok(a)?;
        }
        let s = self.int64_input(c, 1)?;
        let e = self.int64_input(c, 2)?;
        let mut ins = vec![x.to_string(), s, e];
        if let Some(a) = &axes {
            ins.push(self.cx.ints(a));
        }
        if let Some(st) = &steps {
            if axes.is_none() {
                let k = st.len() as i64;
                ins.push(self.cx.ints(&(0..k).collect::<Vec<_>>()));
            }
            ins.push(self.cx.ints(st));
        }
        let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
        self.cx.op_to("Slice", c.out, &refs, c.out, vec![]);
        Ok(())
    }

    /// TenniS's padding of the rank-`r` `x` by `pads` (ONNX order: all
    /// befores, then all afters; negative crops) with `value`, writing
    /// `c.out`: a `Slice` for the crops, then a `Pad` for the rest (ONNX
    /// `Pad` takes negative pads, but not every runtime does).
    fn pad_to(&mut self, c: &Call, x: &str, pads: &Pads, value: f32) -> Result<()> {
        let (cropped, pos) = match pads {
            Pads::Static(p) => {
                let r = p.len() / 2;
                let mut y = x.to_string();
                if p.iter().any(|&v| v < 0) {
                    let bounds: Vec<(i64, i64, i64, i64)> = (0..r)
                        .map(|k| {
                            let e = if p[r + k] < 0 { p[r + k] } else { i64::MAX };
                            (k as i64, p[k].min(0).saturating_neg(), e, 1)
                        })
                        .collect();
                    y = self.slice_node(x, &bounds, None);
                }
                if p.iter().all(|&v| v <= 0) {
                    self.cx.op_to("Identity", c.out, &[&y], c.out, vec![]);
                    return Ok(());
                }
                let pos: Vec<i64> = p.iter().map(|&v| v.max(0)).collect();
                (y, self.cx.ints(&pos))
            }
            Pads::Dynamic(p, r) => {
                let r = *r as i64;
                let zero = self.cx.ints(&[0]);
                let pos = self.cx.op("Max", &[p, &zero], vec![]);
                let neg = self.cx.op("Neg", &[p], vec![]);
                let crop = self.cx.op("Max", &[&neg, &zero], vec![]);
                let (z, rr, r2) = (
                    self.cx.ints(&[0]),
                    self.cx.ints(&[r]),
                    self.cx.ints(&[2 * r]),
                );
                let starts = self.cx.op("Slice", &[&crop, &z, &rr], vec![]);
                let back = self.cx.op("Slice", &[&crop, &rr, &r2], vec![]);
                let shape = self.cx.op("Shape", &[x], vec![]);
                let ends = self.cx.op("Sub", &[&shape, &back], vec![]);
                let y = self.cx.op("Slice", &[x, &starts, &ends], vec![]);
                (y, pos)
            }
        };
        let v = self.cx.scalar(value);
        let v = match self.elem_type(x) {
            DataType::Float => v,
            t => self.cx.cast(&v, t),
        };
        self.cx
            .op_to("Pad", c.out, &[&cropped, &pos, &v], c.out, vec![]);
        Ok(())
    }

    /// Lowers `pad`: input 1 is `[rank, 2]` (before, after per axis;
    /// negative crops), filled with `padding_value`.
    pub(crate) fn pad(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let value = self.float(n, "padding_value", 0.0) as f32;
        let pads = match self.const_input(c, 1) {
            Some(p) => {
                if p.len() % 2 != 0 {
                    return Err(Error::Invalid(format!("{} padding values", p.len())));
                }
                let r = p.len() / 2;
                let mut onnx: Vec<i64> = (0..r).map(|k| p[2 * k]).collect();
                onnx.extend((0..r).map(|k| p[2 * k + 1]));
                Pads::Static(onnx)
            }
            None => {
                let r = self.rank(x)?;
                let p = self.int64_input(c, 1)?;
                let t = self
                    .cx
                    .op("Transpose", &[&p], vec![attr::ints("perm", &[1, 0])]);
                Pads::Dynamic(self.cx.reshape(&t, &[-1]), r)
            }
        };
        self.pad_to(c, x, &pads, value)
    }

    /// The ONNX pads that crop (pad) `x` to `size` (a 1-D `INT64` value;
    /// axes where it is <= 0 kept) as TenniS's `crop_nd` does: without
    /// `shift` centred (the before part is half the difference rounded
    /// toward zero), else starting at `-shift`.
    fn crop_pads(&mut self, x: &str, size: &str, shift: Option<&[i64]>) -> Result<Pads> {
        let r = self.rank(x)?;
        let shape = self.cx.op("Shape", &[x], vec![]);
        let zero = self.cx.ints(&[0]);
        let given = self.cx.op("Greater", &[size, &zero], vec![]);
        let diff = self.cx.op("Sub", &[size, &shape], vec![]);
        let (top, bottom) = match shift {
            None => {
                // half the difference rounded toward zero
                let nd = self.cx.op("Neg", &[&diff], vec![]);
                let a = self.cx.op("Max", &[&diff, &nd], vec![]);
                let two = self.cx.ints(&[2]);
                let h = self.cx.op("Div", &[&a, &two], vec![]);
                let nh = self.cx.op("Neg", &[&h], vec![]);
                let less = self.cx.op("Less", &[&diff, &zero], vec![]);
                let top = self.cx.op("Where", &[&less, &nh, &h], vec![]);
                let bottom = self.cx.op("Sub", &[&diff, &top], vec![]);
                let top = self.cx.op("Where", &[&given, &top, &zero], vec![]);
                let bottom = self.cx.op("Where", &[&given, &bottom, &zero], vec![]);
                (top, bottom)
            }
            Some(shift) => {
                let neg: Vec<i64> = shift.iter().map(|v| v.saturating_neg()).collect();
                let top = self.cx.ints(&neg);
                let sh = self.cx.ints(shift);
                let b = self.cx.op("Add", &[&sh, &diff], vec![]);
                let bottom = self.cx.op("Where", &[&given, &b, &sh], vec![]);
                (top, bottom)
            }
        };
        let pads = self
            .cx
            .op("Concat", &[&top, &bottom], vec![attr::int("axis", 0)]);
        Ok(Pads::Dynamic(pads, r))
    }

    /// Lowers `crop_nd`: pads (crops) each axis to the size input 1 gives
    /// (see [`Self::crop_pads`]), zeros where it grows.
    pub(crate) fn crop_nd(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let size = self.int64_input(c, 1)?;
        let shift = self.ints(n, "shift");
        let pads = self.crop_pads(x, &size, shift.as_deref())?;
        self.pad_to(c, x, &pads, 0.0)
    }

    /// Lowers `_nhwc_center_crop2d`: an NHWC image cropped (padded with
    /// zeros) to `size` `[width, height]` around its centre, as `crop_nd`.
    pub(crate) fn nhwc_center_crop2d(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let size = self
            .ints(n, "size")
            .filter(|s| s.len() >= 2)
            .ok_or_else(|| Error::Invalid("size is not [width, height]".into()))?;
        if let Ok(r) = self.rank(x)
            && r != 4
        {
            return Err(Error::Invalid(format!("a rank-{r} input (NHWC needs 4)")));
        }
        let s = self.cx.ints(&[-1, size[1], size[0], -1]);
        let pads = self.crop_pads(x, &s, None)?;
        self.pad_to(c, x, &pads, 0.0)
    }

    /// Lowers `force_color`: a last axis of 1 repeated to 3 (3 kept).
    pub(crate) fn force_color(&mut self, _n: &Node, c: &Call) -> Result<()> {
        let three = self.cx.ints(&[3]);
        self.cx
            .op_to("Expand", c.out, &[c.input(0)?, &three], c.out, vec![]);
        Ok(())
    }

    /// Lowers `force_gray`: the last axis summed with the weights `scale`
    /// (default BGR `[0.114, 0.587, 0.299]`) to one; a last axis of 1 kept.
    pub(crate) fn force_gray(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        if self.elem_type(x) != DataType::Float {
            return Err(Error::Unsupported(
                "a non-float image (TenniS sums in float and truncates)".into(),
            ));
        }
        let scale: Vec<f32> = match n.attribute("scale") {
            None => vec![0.114, 0.587, 0.299],
            Some(tensor_core::graph::Attribute::Floats(v)) => v.iter().map(|&f| f as f32).collect(),
            Some(tensor_core::graph::Attribute::Float(v)) => vec![*v as f32],
            Some(tensor_core::graph::Attribute::Tensor(t)) => self
                .weights
                .weight(t)
                .and_then(|t| t.to_f64_vec())
                .map(|v| v.iter().map(|&f| f as f32).collect())
                .ok_or_else(|| Error::Invalid("scale is not a float tensor".into()))?,
            Some(a) => a
                .as_ints()
                .map(|v| v.iter().map(|&f| f as f32).collect())
                .ok_or_else(|| Error::Invalid("scale is not numbers".into()))?,
        };
        let w = self.cx.floats("gray_scale", &scale, &[scale.len() as i64]);
        let p = self.cx.op("Mul", &[x, &w], vec![]);
        let sum = self.cx.reduce("ReduceSum", &p, &[-1], true);
        let s0 = self.cx.ints(&[0]);
        let s1 = self.cx.ints(&[1]);
        let last = self.cx.ints(&[-1]);
        let first = self.cx.op("Slice", &[x, &s0, &s1, &last], vec![]);
        let shape = self.cx.op("Shape", &[x], vec![]);
        let ch = self
            .cx
            .op("Gather", &[&shape, &last], vec![attr::int("axis", 0)]);
        let one = self.cx.ints(&[1]);
        let gray = self.cx.op("Equal", &[&ch, &one], vec![]);
        self.cx
            .op_to("Where", c.out, &[&gray, &first, &sum], c.out, vec![]);
        Ok(())
    }

    /// Lowers `crop_to`: the axes from `axis` on take input 1's lengths,
    /// starting at `offset` (zeros padded past the end, as TenniS pads).
    pub(crate) fn crop_to(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (x, y) = (c.input(0)?, c.input(1)?);
        let r = self.rank(x)?;
        let axis = self.int(n, "axis", 2);
        let axis = if axis < 0 { axis + r as i64 } else { axis };
        if !(0..r as i64).contains(&axis) {
            return Err(Error::Invalid(format!("axis {axis} of a rank-{r} input")));
        }
        let axis = axis as usize;
        let tail = r - axis;
        let offset = self.ints(n, "offset").unwrap_or(vec![0; tail]);
        if offset.len() != tail {
            return Err(Error::Invalid(format!(
                "{} offsets for {tail} cropped axes",
                offset.len()
            )));
        }
        let mut before = vec![0i64; axis];
        before.extend(offset.iter().map(|v| v.saturating_neg()));
        let mut off = vec![0i64; axis];
        off.extend(&offset);
        let sx = self.cx.op("Shape", &[x], vec![]);
        let sy = self.cx.op("Shape", &[y], vec![]);
        // after = y - x - before on the cropped axes, 0 on the others.
        let d = self.cx.op("Sub", &[&sy, &sx], vec![]);
        let o = self.cx.ints(&off);
        let after = self.cx.op("Add", &[&d, &o], vec![]);
        let mut mask = vec![0i64; axis];
        mask.extend(std::iter::repeat_n(1, tail));
        let m = self.cx.ints(&mask);
        let after = self.cx.op("Mul", &[&after, &m], vec![]);
        let b = self.cx.ints(&before);
        let pads = self
            .cx
            .op("Concat", &[&b, &after], vec![attr::int("axis", 0)]);
        self.pad_to(c, x, &Pads::Dynamic(pads, r), 0.0)
    }
}
