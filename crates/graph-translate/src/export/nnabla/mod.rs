//! NNabla networks to ONNX: the exporter, driven by
//! [`crate::export::nnabla_table::TABLE`]. The lowerings live by family in
//! the submodules.

use std::collections::{BTreeMap, HashMap, HashSet};

use nnabla_proto::NNablaProtoBuf;
use onnx_format::ModelProto;
use onnx_format::builder::Dim;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Graph, Node, ValueKind};
use tensor_core::{Limits, Tensor};

use super::nnabla_table::{Lowering, TABLE};
use super::table::{Entry, find};
use super::{Ctx, Error, ExportOptions, ExportSummary, Result, Weights, unsupported_error};

mod activation;
mod arith;
mod conv_pool;
mod deform;
mod depthwise;
mod detect;
mod fused;
mod generate;
mod geometry;
mod grid;
mod infer;
mod inq;
mod math;
mod matrix;
mod nms;
mod norm;
mod order;
mod quant;
mod quant_range;
mod resize;
mod rnn;
mod shape;
mod spectral;
mod stats;
mod warp;

/// Exports the network `opts.network` (default: the first executor's) of
/// the NNabla `model` to ONNX, its parameters from `weights`: loops
/// expanded as nnabla's loader expands them, inputs and outputs from the
/// executor's data and output variables (else the network's own).
pub fn export(
    model: &NNablaProtoBuf,
    weights: &dyn Weights,
    opts: &ExportOptions,
) -> Result<(ModelProto, ExportSummary)> {
    let opset = opts.checked_opset()?;
    let expanded = nnabla_proto::model::expand_all_loops(model, &Limits::default())?;
    let mg = nnabla_proto::graph::model_graph(&expanded);
    let names = || {
        mg.graphs
            .iter()
            .map(|g| format!("{:?}", g.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let exec = match &opts.network {
        Some(n) => mg.executors.iter().find(|e| &e.network == n),
        None => mg.executors.first(),
    };
    let net_name = match (&opts.network, exec) {
        (Some(n), _) => n.clone(),
        (None, Some(e)) => e.network.clone(),
        (None, None) => mg
            .graphs
            .first()
            .map(|g| g.name.clone())
            .ok_or_else(|| Error::Unsupported("the file has no network to export".into()))?,
    };
    let g = mg.graph(&net_name).ok_or_else(|| {
        Error::Invalid(format!(
            "no network named {net_name:?}; the file has {}",
            names()
        ))
    })?;
    if g.nodes.is_empty() {
        return Err(Error::Unsupported(format!(
            "network {net_name:?} has no function to export"
        )));
    }
    let data: Vec<String> = exec
        .map(|e| e.data.clone())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| g.inputs.clone());
    let outputs: Vec<String> = exec
        .map(|e| e.outputs.clone())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| g.outputs.clone());
    for v in data.iter().chain(&outputs) {
        if g.value(v).is_none() {
            return Err(Error::Invalid(format!(
                "network {net_name:?} has no variable {v:?} (named by its executor)"
            )));
        }
    }
    let mut ex = Exporter::new(weights, g, opset);
    ex.opset_chosen = opts.opset.is_some();
    ex.run(&data, &outputs)
}

/// One function being lowered: its inputs, first output and table entry.
pub struct Call<'n> {
    /// The function's inputs.
    pub(crate) ins: Vec<&'n str>,
    /// The function's first output.
    pub(crate) out: &'n str,
    /// The function's table entry.
    pub(crate) entry: &'static Entry<Lowering>,
    op: &'n str,
    name: &'n str,
}

impl<'n> Call<'n> {
    /// Input `k`, or an error naming the function.
    pub(crate) fn input(&self, k: usize) -> Result<&'n str> {
        self.ins.get(k).copied().ok_or_else(|| {
            Error::Invalid(format!(
                "{} function {:?} needs input {k}",
                self.op, self.name
            ))
        })
    }

    /// The ONNX operator of a one-to-one lowering.
    pub(crate) fn onnx(&self) -> &'static str {
        self.entry.onnx.first().copied().unwrap_or("Identity")
    }
}

/// The state of one NNabla export, handed to each lowering.
pub struct Exporter<'a> {
    weights: &'a dyn Weights,
    g: &'a Graph,
    cx: Ctx,
    shapes: HashMap<&'a str, Vec<i64>>,
    /// Ranks inferred for variables whose shape is not declared.
    ranks: HashMap<String, usize>,
    /// Shapes inferred for variables whose shape is not declared (`-1`:
    /// not known).
    inferred: HashMap<String, Vec<i64>>,
    /// Whether the caller chose the operator set: when not, it rises to
    /// the lowest one the exported functions need.
    opset_chosen: bool,
}

pub(crate) fn a_ints(n: &Node, key: &str) -> Vec<i64> {
    n.attribute(key)
        .and_then(Attribute::as_ints)
        .unwrap_or_default()
}

pub(crate) fn a_int(n: &Node, key: &str, default: i64) -> i64 {
    n.attribute(key)
        .and_then(Attribute::as_int)
        .unwrap_or(default)
}

pub(crate) fn a_float(n: &Node, key: &str, default: f64) -> f64 {
    n.attribute(key)
        .and_then(Attribute::as_float)
        .unwrap_or(default)
}

/// Whether every dimension is known and small enough (at most 2^31) for
/// the lowerings' index arithmetic.
pub(crate) fn sizes_known(d: &[i64]) -> bool {
    d.iter().all(|&v| (1..=1 << 31).contains(&v))
}

pub(crate) fn a_bool(n: &Node, key: &str) -> bool {
    a_int(n, key, 0) != 0
}

fn dims_of(shape: &[i64]) -> Vec<Dim> {
    shape
        .iter()
        .map(|&d| {
            if d < 0 {
                Dim::Param("batch".into())
            } else {
                Dim::Value(d)
            }
        })
        .collect()
}
impl<'a> Exporter<'a> {
    fn new(weights: &'a dyn Weights, g: &'a Graph, opset: i64) -> Self {
        // A variable declared without dimensions has an unknown shape (old
        // files leave computed variables undeclared).
        let shapes = g
            .values
            .iter()
            .filter_map(|v| Some((v.name.as_str(), v.shape.clone().filter(|s| !s.is_empty())?)))
            .collect();
        Exporter {
            weights,
            g,
            cx: Ctx::new(&g.name, opset),
            shapes,
            ranks: HashMap::new(),
            inferred: HashMap::new(),
            opset_chosen: false,
        }
    }

    fn shape(&self, v: &str) -> Option<&[i64]> {
        self.shapes
            .get(v)
            .or_else(|| self.inferred.get(v))
            .map(Vec::as_slice)
    }

    /// The dimensions of a parameter or variable: declared, inferred, or
    /// those of the parameter's data.
    fn dims(&self, v: &str) -> Option<Vec<i64>> {
        self.shape(v).map(<[i64]>::to_vec).or_else(|| {
            self.weights
                .info(v)
                .map(|(_, d)| d.iter().map(|&d| d as i64).collect())
        })
    }

    /// The output shape of the functions whose shape follows from their
    /// inputs' (elementwise, transposes, pooling, convolution, affine).
    fn rank(&self, n: &Node, v: &str) -> Result<usize> {
        self.known_rank(v).ok_or_else(|| {
            Error::Unsupported(format!(
                "{} function {:?}: the shape of {v:?} is not declared",
                n.op, n.name
            ))
        })
    }

    fn known_rank(&self, v: &str) -> Option<usize> {
        self.shape(v)
            .map(<[i64]>::len)
            .or_else(|| self.ranks.get(v).copied())
            .or_else(|| self.weights.info(v).map(|(_, d)| d.len()))
    }

    /// The rank of each output of `n` where it can be told from its inputs'.
    fn is_weight(&self, v: &str) -> bool {
        self.g.value(v).is_some_and(|i| i.kind == ValueKind::Weight)
    }

    fn run(mut self, data: &[String], outputs: &[String]) -> Result<(ModelProto, ExportSummary)> {
        let g = self.g;
        // Which functions the outputs need, walking back from them.
        let mut producer: HashMap<&str, usize> = HashMap::new();
        for (i, n) in g.nodes.iter().enumerate() {
            for o in &n.outputs {
                producer.insert(o, i);
            }
        }
        let fed: HashSet<&str> = data.iter().map(String::as_str).collect();
        let mut needed = vec![false; g.nodes.len()];
        let mut stack: Vec<&str> = outputs.iter().map(String::as_str).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut free_inputs: Vec<String> = Vec::new();
        while let Some(v) = stack.pop() {
            if !seen.insert(v) || fed.contains(v) {
                continue;
            }
            match producer.get(v) {
                Some(&i) => {
                    if !needed[i] {
                        needed[i] = true;
                        stack.extend(g.nodes[i].inputs.iter().map(String::as_str));
                    }
                }
                None if self.is_weight(v) => {}
                None => free_inputs.push(v.to_string()),
            }
        }
        let pruned = needed.iter().filter(|n| !**n).count();
        let mut bad: BTreeMap<String, usize> = BTreeMap::new();
        for (n, _) in g.nodes.iter().zip(&needed).filter(|(_, k)| **k) {
            match find(TABLE.as_slice(), &n.op) {
                Some(e) if e.lower.is_some() => {}
                Some(e) => *bad.entry(format!("{} ({})", n.op, e.reason)).or_default() += 1,
                None => *bad.entry(n.op.clone()).or_default() += 1,
            }
        }
        if !bad.is_empty() {
            return Err(unsupported_error(
                &format!("NNabla (network {:?})", g.name),
                &bad,
            ));
        }
        self.choose_opset(
            g.nodes
                .iter()
                .zip(&needed)
                .filter(|(_, k)| **k)
                .map(|(n, _)| n),
        )?;
        for v in &g.values {
            self.cx.b.reserve(&v.name);
        }
        // Inputs: the executor's data variables, then anything else read
        // but never computed (generator variables).
        free_inputs.sort();
        free_inputs.dedup();
        for v in data.iter().chain(&free_inputs) {
            let dims = dims_of(self.shape(v).unwrap_or(&[]));
            self.cx.b.input(v, DataType::Float, &dims);
        }
        // Parameters, in first-use order.
        let mut added = HashSet::new();
        for (n, _) in g.nodes.iter().zip(&needed).filter(|(_, k)| **k) {
            for i in &n.inputs {
                if self.is_weight(i) && added.insert(i.clone()) {
                    let no_data = || {
                        Error::Unsupported(format!(
                            "parameter {i:?} has no data in this file; export a file with its parameters (.nnp, or .nntxt/.protobuf with parameters)"
                        ))
                    };
                    if self.weights.defers() {
                        // the data is written from the source later
                        let (dtype, dims) = self.weights.info(i).ok_or_else(no_data)?;
                        let p = super::deferred_proto(
                            i,
                            i,
                            tensor_core::DType::F32,
                            &dims,
                            dtype != tensor_core::DType::F32,
                        )?;
                        self.cx.b.add_initializer(p);
                        continue;
                    }
                    let t = self.weights.weight(i).ok_or_else(no_data)?;
                    // nnabla computes in f32 whatever a parameter file stores
                    let t = if t.dtype() == tensor_core::DType::F32 {
                        t
                    } else {
                        std::borrow::Cow::Owned(Tensor::from_values(
                            t.dims().to_vec(),
                            &t.to_vec::<f32>()?,
                        )?)
                    };
                    self.cx.b.initializer(i, &t)?;
                }
            }
        }
        // Functions in dependency order (stored order where it is one).
        let order = topo_order(g, &needed, &fed)?;
        for &i in &order {
            self.infer_ranks(&g.nodes[i]);
        }
        for i in order {
            let n = &g.nodes[i];
            // a message that names the function already ("<op> function
            // \"<name>\": ...") is kept; any other is prefixed so
            self.lower(n).map_err(|e| match e {
                Error::Unsupported(m) | Error::Invalid(m)
                    if !m.contains(&format!("function {:?}", n.name)) =>
                {
                    Error::Unsupported(format!("{} function {:?}: {m}", n.op, n.name))
                }
                other => other,
            })?;
        }
        for o in outputs {
            let dims = dims_of(self.shape(o).unwrap_or(&[]));
            if self.shape(o).is_some() {
                self.cx.b.output(o, DataType::Float, &dims);
            } else {
                self.cx.b.output_unshaped(o, DataType::Float);
            }
        }
        Ok(self.cx.finish(&g.name, g.name.clone(), pruned))
    }

    /// The lowest operator set `n` needs: its table entry's, or more for
    /// some inputs where the entry says so ([`Entry::min_opset_for`]).
    fn node_min_opset(&self, n: &Node) -> i64 {
        let Some(e) = find(TABLE.as_slice(), &n.op) else {
            return 13;
        };
        match e.min_opset_for {
            Some(f) => {
                let dims: Vec<Option<Vec<i64>>> = n.inputs.iter().map(|v| self.dims(v)).collect();
                e.min_opset.max(f(&dims))
            }
            None => e.min_opset,
        }
    }

    /// Raises the operator set to the lowest one every function needs
    /// (networks that need nothing newer keep the default 13), or refuses
    /// when the caller asked for an older one.
    fn choose_opset<'n>(&mut self, nodes: impl Iterator<Item = &'n Node>) -> Result<()> {
        let mut need: Option<(i64, &Node)> = None;
        for n in nodes {
            let m = self.node_min_opset(n);
            if need.is_none_or(|(v, _)| m > v) {
                need = Some((m, n));
            }
        }
        let Some((m, n)) = need else { return Ok(()) };
        if m <= self.cx.opset {
            return Ok(());
        }
        if self.opset_chosen || m > *super::OPSETS.end() {
            return Err(Error::Unsupported(format!(
                "{} function {:?} needs ONNX operator set {m} or newer, not {}",
                n.op, n.name, self.cx.opset
            )));
        }
        self.cx.opset = m;
        Ok(())
    }

    /// Lowers `n` through its table entry.
    fn lower(&mut self, n: &Node) -> Result<()> {
        let entry = find(TABLE.as_slice(), &n.op)
            .ok_or_else(|| Error::Unsupported(format!("{} has no ONNX lowering", n.op)))?;
        let Some((f, _)) = entry.lower else {
            return Err(Error::Unsupported(format!("{}: {}", n.op, entry.reason)));
        };
        let out = n.outputs.first().map(String::as_str).ok_or_else(|| {
            Error::Invalid(format!("{} function {:?} has no output", n.op, n.name))
        })?;
        let c = Call {
            ins: n.inputs.iter().map(String::as_str).collect(),
            out,
            entry,
            op: &n.op,
            name: &n.name,
        };
        f(self, n, &c)
    }
}

/// The needed functions in an order where every input is computed before
/// it is read: the stored order when it already is one.
fn topo_order(g: &Graph, needed: &[bool], fed: &HashSet<&str>) -> Result<Vec<usize>> {
    let mut available: HashSet<&str> = fed.iter().copied().collect();
    for v in &g.values {
        if v.kind == ValueKind::Weight {
            available.insert(&v.name);
        }
    }
    let produced: HashSet<&str> = g
        .nodes
        .iter()
        .zip(needed)
        .filter(|(_, k)| **k)
        .flat_map(|(n, _)| n.outputs.iter().map(String::as_str))
        .collect();
    let mut pending: Vec<usize> = (0..g.nodes.len()).filter(|&i| needed[i]).collect();
    let mut order = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|&i| {
            let n = &g.nodes[i];
            let ready = n
                .inputs
                .iter()
                .all(|v| available.contains(v.as_str()) || !produced.contains(v.as_str()));
            if ready {
                order.push(i);
                available.extend(n.outputs.iter().map(String::as_str));
            }
            !ready
        });
        if pending.len() == before {
            return Err(Error::Invalid(format!(
                "network {:?} has a cycle through function {:?}",
                g.name, g.nodes[pending[0]].name
            )));
        }
    }
    Ok(order)
}
