//! Operators with several outputs: `chunk`, `split`, `topkv2`, `yolo`,
//! `LSTM`. TenniS
//! packs their outputs into one value whose fields `_field` (the runtime's
//! own instruction, parameter `offset`) takes out; the lowering writes one
//! ONNX value per field, named after the packed value (see [`field`]), and
//! `_field` reads it.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter};
use crate::export::table::find;
use crate::export::tennis_table::{Packed, TABLE};
use crate::export::{Error, HELPER_PREFIX, Result};

/// The ONNX name of field `k` of the packed value `v`.
pub(super) fn field(v: &str, k: usize) -> String {
    format!("{HELPER_PREFIX}{v}/field{k}")
}

impl Exporter<'_> {
    /// The producer and the field offset of a `_field` node.
    fn field_source(&self, n: &Node) -> Option<(&Node, usize)> {
        let p = self.producer.get(n.inputs.first()?.as_str())?;
        let k = usize::try_from(self.int(n, "offset", -1)).ok()?;
        Some((p, k))
    }

    /// What the output of `p` packs (`None`: not a packed value), as its
    /// table row says.
    fn packed(p: &Node) -> Option<Packed> {
        find(TABLE, &p.op)
            .and_then(|e| e.lower)
            .and_then(|l| l.packed)
    }

    /// The rank of a `_field` output (`None`: not known).
    pub(crate) fn rank_field(&self, n: &Node) -> Option<usize> {
        let (p, k) = self.field_source(n)?;
        match Self::packed(p)? {
            Packed::Chunk | Packed::Split | Packed::TopKV2 => {
                self.ranks.get(p.inputs.first()?).copied()
            }
            Packed::Lstm => Some(if k == 0 { 4 } else { 3 }),
            Packed::Yolo => match k {
                0 => Some(4),
                _ => self.yolo_param(p, k).map(|t| t.dims().len()),
            },
        }
    }

    /// The element type of a `_field` output: `INT32` for the indices of
    /// `topkv2` and the integer parameters of `yolo`, else the packing
    /// operator's input's.
    pub(crate) fn elem_field(&self, n: &Node) -> DataType {
        let Some((p, k)) = self.field_source(n) else {
            return DataType::Float;
        };
        let int = match Self::packed(p) {
            Some(Packed::TopKV2) => k == 1,
            Some(Packed::Yolo) => k == 1 || k == 2,
            Some(Packed::Chunk | Packed::Split | Packed::Lstm) | None => false,
        };
        if int {
            DataType::Int32
        } else {
            self.elem_in(p, 0)
        }
    }

    /// Lowers `_field`: field `offset` of a packed value.
    pub(crate) fn take_field(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (p, k) = self
            .field_source(n)
            .ok_or_else(|| Error::Invalid("_field without a producer or an offset".into()))?;
        let count = match Self::packed(p) {
            Some(Packed::Chunk) => usize::try_from(self.int(p, "chunks", 0)).unwrap_or(0),
            Some(Packed::Split) => self.len_in(p, 1).unwrap_or(0),
            Some(Packed::TopKV2) => 2,
            Some(Packed::Yolo) => 4,
            Some(Packed::Lstm) => 3,
            None => {
                return Err(Error::Unsupported(format!(
                    "a field of {} (the export knows the fields of chunk, split, topkv2, yolo and LSTM)",
                    p.op
                )));
            }
        };
        if k >= count {
            return Err(Error::Invalid(format!(
                "field {k} of a {} with {count} fields",
                p.op
            )));
        }
        let src = field(c.input(0)?, k);
        self.cx.op_to("Identity", c.out, &[&src], c.out, vec![]);
        Ok(())
    }

    /// The positive axis `dim` of a rank-`r` input.
    fn axis_of(dim: i64, r: usize) -> Result<i64> {
        let a = if dim < 0 { dim + r as i64 } else { dim };
        if (0..r as i64).contains(&a) {
            Ok(a)
        } else {
            Err(Error::Invalid(format!("axis {dim} of a rank-{r} input")))
        }
    }

    /// The length of axis `a` of `x` as a 1-element `INT64` vector.
    fn axis_len(&mut self, x: &str, a: i64) -> String {
        let s = self.cx.op("Shape", &[x], vec![]);
        let from = self.cx.ints(&[a]);
        let to = self.cx.ints(&[a + 1]);
        self.cx.op("Slice", &[&s, &from, &to], vec![])
    }

    /// Lowers `chunk`: `chunks` parts along `dim` (default -2) of
    /// `ceil(n / chunks)` entries, the last one shorter (TenniS fails
    /// where that leaves fewer parts).
    pub(crate) fn chunk(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let k = self.int(n, "chunks", 0);
        let k_us = usize::try_from(k)
            .ok()
            .filter(|&k| (1..=4096).contains(&k))
            .ok_or_else(|| Error::Invalid(format!("chunks {k}")))?;
        let a = Self::axis_of(self.int(n, "dim", -2), r)?;
        let len = self.axis_len(x, a);
        let kk = self.cx.ints(&[k]);
        let one = self.cx.ints(&[1]);
        let km1 = self.cx.ints(&[k - 1]);
        let t = self.cx.op("Add", &[&len, &kk], vec![]);
        let t = self.cx.op("Sub", &[&t, &one], vec![]);
        let step = self.cx.op("Div", &[&t, &kk], vec![]);
        let sizes = if k_us == 1 {
            len
        } else {
            let steps = self.cx.op("Expand", &[&step, &km1], vec![]);
            let used = self.cx.op("Mul", &[&step, &km1], vec![]);
            let last = self.cx.op("Sub", &[&len, &used], vec![]);
            self.cx
                .op("Concat", &[&steps, &last], vec![attr::int("axis", 0)])
        };
        self.split_to(x, a, &sizes, k_us, c.out);
        Ok(())
    }

    /// Lowers `split`: parts of the lengths input 1 gives along `axis`.
    pub(crate) fn split(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        let a = Self::axis_of(self.int(n, "axis", 0), r)?;
        let s = c.input(1)?;
        let k = self.lens.get(s).copied().ok_or_else(|| {
            Error::Unsupported("split with a number of parts not known at export".into())
        })?;
        if k == 0 || k > 4096 {
            return Err(Error::Invalid(format!("split into {k} parts")));
        }
        let sizes = self.cx.cast(s, DataType::Int64);
        self.split_to(x, a, &sizes, k, c.out);
        Ok(())
    }

    /// `Split` of `x` along `a` by the `INT64` lengths `sizes` into the `k`
    /// fields of `out`.
    fn split_to(&mut self, x: &str, a: i64, sizes: &str, k: usize, out: &str) {
        let names: Vec<String> = (0..k).map(|i| field(out, i)).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        self.cx
            .b
            .node("Split", out, &[x, sizes], &refs, vec![attr::int("axis", a)]);
    }

    /// Lowers `topkv2`: the `min(number, n)` largest entries along the last
    /// axis, largest first, and their indices (`INT32`).
    pub(crate) fn topkv2(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let r = self.rank(x)?;
        if r == 0 {
            return Err(Error::Unsupported("topkv2 of a scalar".into()));
        }
        let number = self.int(n, "number", -1);
        if number < 0 {
            return Err(Error::Invalid(format!("number {number}")));
        }
        let len = self.axis_len(x, r as i64 - 1);
        let want = self.cx.ints(&[number]);
        let k = self.cx.op("Min", &[&len, &want], vec![]);
        let vals = field(c.out, 0);
        let idx = self.cx.helper_name("topk_indices");
        self.cx.b.node(
            "TopK",
            c.out,
            &[x, &k],
            &[&vals, &idx],
            vec![
                attr::int("axis", -1),
                attr::int("largest", 1),
                attr::int("sorted", 1),
            ],
        );
        let idx_name = field(c.out, 1);
        self.cx.op_to(
            "Cast",
            &idx_name,
            &[&idx],
            &idx_name,
            vec![attr::int("to", DataType::Int32 as i64)],
        );
        Ok(())
    }
}

impl Exporter<'_> {
    /// Field `k` (1: `classes`, 2: `mask`, 3: `anchors`) of a `yolo` node:
    /// its parameter as TenniS packs it (`INT32`, `INT32`, `FLOAT`).
    fn yolo_param(&self, p: &Node, k: usize) -> Option<tensor_core::Tensor<'static>> {
        let key = ["", "classes", "mask", "anchors"].get(k)?;
        let own = p
            .outputs
            .first()
            .and_then(|o| self.weights.weight(&format!("{o}/{key}")))?;
        let v = own.to_f64_vec()?;
        let dims = own.dims().to_vec();
        if k == 3 {
            let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            tensor_core::Tensor::from_values(dims.as_slice(), &f).ok()
        } else {
            let i: Vec<i32> = v.iter().map(|&x| x as i32).collect();
            tensor_core::Tensor::from_values(dims.as_slice(), &i).ok()
        }
    }

    /// Lowers `yolo` (Darknet's YOLO layer on `[N, n * (5 + classes), H,
    /// W]`, `n` the length of `mask`): per anchor the channels of x, y,
    /// objectness and the classes through the logistic function, w and h
    /// kept; fields 1 to 3 are its `classes`, `mask` and `anchors`.
    pub(crate) fn yolo(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let classes = self.int(n, "classes", -1);
        let mask = self
            .ints(n, "mask")
            .ok_or_else(|| Error::Invalid("no mask".into()))?;
        let per = classes
            .checked_add(5)
            .filter(|&p| p > 5 && classes <= 100_000)
            .ok_or_else(|| Error::Invalid(format!("classes {classes}")))?;
        let per = per as usize;
        let channels = mask
            .len()
            .checked_mul(per)
            .filter(|&c| c <= 1 << 24)
            .ok_or_else(|| Error::Invalid("too many channels".into()))?;
        let flags: Vec<f32> = (0..channels)
            .map(|ch| {
                if ch % per == 2 || ch % per == 3 {
                    0.0
                } else {
                    1.0
                }
            })
            .collect();
        let f = self
            .cx
            .floats("yolo_logistic", &flags, &[1, channels as i64, 1, 1]);
        let sel = self.cx.cast(&f, DataType::Bool);
        let s = self.cx.op("Sigmoid", &[x], vec![]);
        let f0 = field(c.out, 0);
        self.cx.op_to("Where", &f0, &[&sel, &s, x], &f0, vec![]);
        for k in 1..4 {
            let t = self
                .yolo_param(n, k)
                .ok_or_else(|| Error::Invalid("classes, mask or anchors is missing".into()))?;
            let name = field(c.out, k);
            self.cx.b.initializer(&name, &t)?;
        }
        Ok(())
    }
}

impl Exporter<'_> {
    /// Lowers `LSTM` (inputs x `[seq, batch, in]`, W, R, B, initial_h,
    /// initial_c in ONNX's layout and gate order i, o, f, c): ONNX `LSTM`
    /// with the default activations, `direction` `bidirectional` or else
    /// forward (TenniS runs every other value forward); an initial state of
    /// rank below 3 is zeros. Fields: Y, Y_h, Y_c.
    pub(crate) fn lstm(&mut self, n: &Node, c: &Call) -> Result<()> {
        if c.ins.len() != 6 {
            return Err(Error::Invalid(format!(
                "{} inputs (TenniS reads x, W, R, B, initial_h, initial_c)",
                c.ins.len()
            )));
        }
        let hidden = self.int(n, "hidden_size", -1);
        if hidden < 1 {
            return Err(Error::Invalid(format!("hidden_size {hidden}")));
        }
        let dir = match n
            .attribute("direction")
            .and_then(tensor_core::graph::Attribute::as_str)
        {
            Some("bidirectional") => "bidirectional",
            _ => "forward",
        };
        let mut ins: Vec<String> = c.ins[..4].iter().map(|s| s.to_string()).collect();
        ins.push(String::new());
        for k in [4, 5] {
            let v = c.input(k)?;
            let r = self.rank(v)?;
            ins.push(if r < 3 { String::new() } else { v.to_string() });
        }
        while ins.last().is_some_and(String::is_empty) {
            ins.pop();
        }
        let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
        let outs: Vec<String> = (0..3).map(|k| field(c.out, k)).collect();
        let orefs: Vec<&str> = outs.iter().map(String::as_str).collect();
        self.cx.b.node(
            "LSTM",
            c.out,
            &refs,
            &orefs,
            vec![
                attr::int("hidden_size", hidden),
                attr::string("direction", dir),
            ],
        );
        Ok(())
    }
}
