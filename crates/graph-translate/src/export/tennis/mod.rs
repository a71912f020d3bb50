//! TenniS modules to ONNX, following TenniS's own operator semantics (as
//! its C++ runtime implements them).
//!
//! - `<param>` nodes are the graph inputs (float, dimensions left open), the
//!   module outputs the graph outputs, `<const>` nodes initializers named
//!   after their nodes (every value is named after its node, made unique).
//! - Layout: `format` must be `NCHW`; `padding` is `[4, 2]` (begin, end per
//!   axis), `stride`, `dilation` and `ksize` are given for all four axes.
//! - Pooling: `pooling2d` counts outputs with ceil (`ceil_mode` 1) and
//!   windows clipped to the input; average pooling divides by the valid
//!   count (`padding_type` 0, black) or the window size (3, white).
//!   `pooling2d_v2` whose padding comes from `_onnx_pooling2d_padding` is the
//!   floor rule with the static padding (`auto_pad` `NOTSET`: TenniS shrinks
//!   the end padding by the remainder) or ONNX's own `auto_pad`.
//! - `shape_index_patch` gathers a patch around each landmark at run time.
//! - `_limit` crops each axis longer than its limit to the centre (TenniS
//!   pads by a negative amount); `flatten` keeps `dim` leading axes;
//!   `inner_prod` flattens its input to two axes.
//! - Where an operator needs its input's rank (biases and scales along
//!   `dim`), ranks follow from the operators; a module input is taken as
//!   4-D (N, C, H, W) in a module with image operators, else with the rank
//!   of its largest constant.
//!
//! Checked against the TenniS C++ runtime on the SeetaFace6 modules and
//! `testdata/tennis/py_convnet.tsm` (see `testdata/onnx/README.md`).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use onnx_format::ModelProto;
use onnx_format::builder::Dim;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Graph, Node};

use super::table::{Entry, find};
use super::tennis_table::{Elem, Len, Lowering, Rank, TABLE};
use super::{Ctx, Error, ExportSummary, Result, Weights, unsupported_error};

mod basic;
mod conv;
mod detect;
mod image;
mod indexing;
mod logic;
mod more;
mod packed;
mod resize;
mod slicing;
mod space;

/// Exports the TenniS module graph `g` (its first graph), constants from
/// `weights` (by the tensor a value names, its own name or `NAME/value`),
/// writing operator set `opset` (see [`super::ExportOptions::checked_opset`]).
pub fn export(g: &Graph, weights: &dyn Weights, opset: i64) -> Result<(ModelProto, ExportSummary)> {
    Exporter {
        weights,
        g,
        cx: Ctx::new("tennis", opset),
        ranks: HashMap::new(),
        lens: HashMap::new(),
        producer: HashMap::new(),
        input_rank: 4,
    }
    .run()
}

/// One operator being lowered: its inputs, output and table entry.
pub struct Call<'n> {
    pub(crate) ins: Vec<&'n str>,
    pub(crate) out: &'n str,
    pub(crate) entry: &'static Entry<Lowering>,
}

impl<'n> Call<'n> {
    /// Input `k`.
    pub(crate) fn input(&self, k: usize) -> Result<&'n str> {
        self.ins
            .get(k)
            .copied()
            .ok_or_else(|| Error::Invalid(format!("needs input {k}")))
    }

    /// The ONNX operator of a one-to-one lowering.
    pub(crate) fn onnx(&self) -> &'static str {
        self.entry.onnx.first().copied().unwrap_or("Identity")
    }
}

/// The state of one TenniS export, handed to each lowering.
pub struct Exporter<'a> {
    weights: &'a dyn Weights,
    g: &'a Graph,
    cx: Ctx,
    ranks: HashMap<String, usize>,
    /// The number of elements of 1-D integer values (shapes, indices).
    lens: HashMap<String, usize>,
    producer: HashMap<&'a str, &'a Node>,
    /// The rank module inputs are given (see the module docs).
    input_rank: usize,
}

fn format_ok(n: &Node) -> Result<()> {
    match n.attribute("format").and_then(Attribute::as_str) {
        None | Some("NCHW") => Ok(()),
        Some(f) => Err(Error::Unsupported(format!(
            "format {f:?} (only NCHW is exported)"
        ))),
    }
}

impl<'a> Exporter<'a> {
    /// A parameter as integers: inline, or the module's tensor it names.
    fn ints(&self, n: &Node, key: &str) -> Option<Vec<i64>> {
        match n.attribute(key)? {
            Attribute::Tensor(t) => {
                let t = self.weights.weight(t)?;
                Some(t.to_f64_vec()?.iter().map(|&v| v as i64).collect())
            }
            Attribute::Floats(v) => Some(v.iter().map(|&x| x as i64).collect()),
            Attribute::Float(v) => Some(vec![*v as i64]),
            Attribute::Bools(v) => Some(v.iter().map(|&b| i64::from(b)).collect()),
            Attribute::Bool(b) => Some(vec![i64::from(*b)]),
            a => a.as_ints(),
        }
    }

    fn int(&self, n: &Node, key: &str, default: i64) -> i64 {
        self.ints(n, key)
            .and_then(|v| v.first().copied())
            .unwrap_or(default)
    }

    fn float(&self, n: &Node, key: &str, default: f64) -> f64 {
        match n.attribute(key) {
            Some(Attribute::Tensor(t)) => self
                .weights
                .weight(t)
                .and_then(|t| t.to_f64_vec())
                .and_then(|v| v.first().copied())
                .unwrap_or(default),
            Some(a) => a.as_float().unwrap_or(default),
            None => default,
        }
    }

    fn need_ints(&self, n: &Node, key: &str, len: usize) -> Result<Vec<i64>> {
        self.ints(n, key).filter(|v| v.len() == len).ok_or_else(|| {
            Error::Invalid(format!(
                "parameter {key:?} is missing or not {len} integers"
            ))
        })
    }

    /// The values of a `<const>` input.
    fn const_ints(&self, value: &str) -> Option<Vec<i64>> {
        let n = self.producer.get(value)?;
        // `<const>` is the module's own data, not a computed value: the
        // driver asks for it by name.
        if n.op != "<const>" {
            return None;
        }
        let t = self.const_tensor(value)?;
        Some(t.to_f64_vec()?.iter().map(|&v| v as i64).collect())
    }

    /// The name of the tensor holding the data of the `<const>` node whose
    /// value is `value`: the tensor the graph names for it, else the value's
    /// own name, else `VALUE/value`.
    fn const_source(&self, value: &str) -> Option<String> {
        let named = self.g.value(value).and_then(|v| v.tensor.as_deref());
        [
            named.map(str::to_string),
            Some(value.to_string()),
            Some(format!("{value}/value")),
        ]
        .into_iter()
        .flatten()
        .find(|n| self.weights.info(n).is_some())
    }

    /// The data of the `<const>` node whose value is `value`
    /// ([`Exporter::const_source`]).
    fn const_tensor(&self, value: &str) -> Option<Cow<'a, tensor_core::Tensor<'static>>> {
        self.weights.weight(&self.const_source(value)?)
    }

    /// The type and dimensions of the `<const>` node whose value is
    /// `value`, without its data.
    fn const_info(&self, value: &str) -> Option<(tensor_core::DType, Vec<usize>)> {
        self.weights.info(&self.const_source(value)?)
    }

    fn const_dims(&self, value: &str) -> Option<Vec<usize>> {
        self.const_info(value).map(|(_, d)| d)
    }

    /// The rank of a module input: the shape it declares (`#shape`), else
    /// the rule of the module docs.
    fn param_rank(&self, n: &Node) -> usize {
        self.ints(n, "#shape")
            .filter(|s| !s.is_empty())
            .map_or(self.input_rank, |s| s.len())
    }

    fn rank(&self, v: &str) -> Result<usize> {
        self.ranks
            .get(v)
            .copied()
            .ok_or_else(|| Error::Unsupported(format!("the rank of {v:?} is not known")))
    }

    fn run(mut self) -> Result<(ModelProto, ExportSummary)> {
        let g = self.g;
        for n in &g.nodes {
            if let Some(o) = n.outputs.first() {
                self.producer.insert(o, n);
            }
        }
        // What the outputs need.
        let mut needed: HashSet<&str> = HashSet::new();
        let mut stack: Vec<&str> = g.outputs.iter().map(String::as_str).collect();
        while let Some(v) = stack.pop() {
            if !needed.insert(v) {
                continue;
            }
            if let Some(n) = self.producer.get(v) {
                stack.extend(n.inputs.iter().map(String::as_str));
            }
        }
        let nodes: Vec<&Node> = g
            .nodes
            .iter()
            .filter(|n| {
                n.outputs
                    .first()
                    .is_some_and(|o| needed.contains(o.as_str()))
            })
            .collect();
        let mut bad: BTreeMap<String, usize> = BTreeMap::new();
        for n in &nodes {
            match find(TABLE, &n.op) {
                Some(e) if e.lower.is_some() => {}
                Some(e) => *bad.entry(format!("{} ({})", n.op, e.reason)).or_default() += 1,
                None => *bad.entry(n.op.clone()).or_default() += 1,
            }
        }
        if !bad.is_empty() {
            return Err(unsupported_error("TenniS", &bad));
        }
        for v in &g.values {
            self.cx.b.reserve(&v.name);
        }
        // Module inputs are images (4-D) in a module with image operators;
        // otherwise they have the rank of its largest constant
        // (`Entry::image`).
        if !nodes
            .iter()
            .any(|n| find(TABLE, &n.op).is_some_and(|e| e.image))
        {
            self.input_rank = nodes
                .iter()
                // the module's data (`<const>`), by name as in `const_ints`
                .filter(|n| n.op == "<const>")
                .filter_map(|n| self.const_dims(&n.outputs[0]).map(|d| d.len()))
                .max()
                .unwrap_or(1)
                .max(1);
        }
        let order = topo_order(&nodes)?;
        for n in &order {
            let out = &n.outputs[0];
            self.lower(n).map_err(|e| match e {
                Error::Unsupported(m) | Error::Invalid(m) => {
                    Error::Unsupported(format!("TenniS {} node {:?}: {m}", n.op, n.name))
                }
                other => other,
            })?;
            if let Some(r) = self.infer_rank(n) {
                self.ranks.insert(out.clone(), r);
            }
            if let Some(l) = self.infer_len(n) {
                self.lens.insert(out.clone(), l);
            }
        }
        for o in &g.outputs {
            let r = self.rank(o).map_err(|_| {
                Error::Unsupported(format!(
                    "the rank of module output {o:?} cannot be told (ONNX declares it)"
                ))
            })?;
            let ty = self.elem_type(o);
            self.cx.b.output(o, ty, &vec![Dim::Unknown; r]);
        }
        Ok(self
            .cx
            .finish("tennis", String::new(), g.nodes.len() - order.len()))
    }

    /// The rank of input `k` of `n`, where known.
    fn rank_in(&self, n: &Node, k: usize) -> Option<usize> {
        n.inputs.get(k).and_then(|v| self.ranks.get(v).copied())
    }

    /// The length of input `k` of `n` (a 1-D integer value), where known.
    fn len_in(&self, n: &Node, k: usize) -> Option<usize> {
        n.inputs.get(k).and_then(|v| self.lens.get(v).copied())
    }

    /// The element type of input `k` of `n`.
    fn elem_in(&self, n: &Node, k: usize) -> DataType {
        self.elem_type(n.inputs.get(k).map_or("", String::as_str))
    }

    /// What the table row of `n`'s operator knows of its output (`None`:
    /// no lowered row).
    fn row(n: &Node) -> Option<Lowering> {
        find(TABLE, &n.op).and_then(|e| e.lower)
    }

    /// The element type of a value: its producer's rule ([`Elem`]),
    /// `FLOAT` for a value no node produces.
    fn elem_type(&self, v: &str) -> DataType {
        let Some(n) = self.producer.get(v) else {
            return DataType::Float;
        };
        match Self::row(n).map(|l| l.elem) {
            Some(Elem::Input0) => self.elem_in(n, 0),
            Some(Elem::Fixed(t)) => t,
            Some(Elem::Own(f)) => f(self, n),
            Some(Elem::Float) | None => DataType::Float,
        }
    }

    /// The length of a 1-D integer value, where it is static ([`Len`]).
    fn infer_len(&self, n: &Node) -> Option<usize> {
        match Self::row(n)?.len {
            Len::Unknown => None,
            Len::Input0 => self.len_in(n, 0),
            Len::Own(f) => f(self, n),
        }
    }

    /// The rank of `n`'s output ([`Rank`]).
    fn infer_rank(&self, n: &Node) -> Option<usize> {
        let r0 = self.rank_in(n, 0);
        let Some(l) = Self::row(n) else {
            return r0;
        };
        match l.rank {
            Rank::Input0 => r0,
            Rank::Broadcast => match (r0, self.rank_in(n, 1)) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            },
            Rank::Fixed(r) => Some(r),
            Rank::Own(f) => f(self, n),
            // a rank from the file's data (shape lengths, `_expand`'s target)
            Rank::Data(f) => f(self, n).filter(|&r| r <= logic::MAX_RANK),
        }
    }

    /// Lowers `n` through its table entry.
    fn lower(&mut self, n: &Node) -> Result<()> {
        let entry = find(TABLE, &n.op)
            .ok_or_else(|| Error::Unsupported(format!("{} has no ONNX lowering", n.op)))?;
        let Some(Lowering { lower: f, .. }) = entry.lower else {
            return Err(Error::Unsupported(format!("{}: {}", n.op, entry.reason)));
        };
        let c = Call {
            ins: n.inputs.iter().map(String::as_str).collect(),
            out: n.outputs[0].as_str(),
            entry,
        };
        f(self, n, &c)
    }
}

fn topo_order<'n>(nodes: &[&'n Node]) -> Result<Vec<&'n Node>> {
    let produced: HashSet<&str> = nodes.iter().map(|n| n.outputs[0].as_str()).collect();
    let mut done: HashSet<&str> = HashSet::new();
    let mut pending: Vec<&Node> = nodes.to_vec();
    let mut order = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|n| {
            let ready = n
                .inputs
                .iter()
                .all(|i| done.contains(i.as_str()) || !produced.contains(i.as_str()));
            if ready {
                order.push(*n);
                done.insert(n.outputs[0].as_str());
            }
            !ready
        });
        if pending.len() == before {
            return Err(Error::Invalid(format!(
                "the module has a cycle through node {:?}",
                pending[0].name
            )));
        }
    }
    Ok(order)
}
