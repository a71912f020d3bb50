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

use std::collections::{BTreeMap, HashMap, HashSet};

use onnx_format::ModelProto;
use onnx_format::builder::{Dim, attr};
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Graph, Node};

use super::{Ctx, ExportSummary, unsupported_error};
use crate::{Document, Error, Result};

const UNARY: &[(&str, &str)] = &[
    ("relu", "Relu"),
    ("abs", "Abs"),
    ("sigmoid", "Sigmoid"),
    ("tanh", "Tanh"),
    ("exp", "Exp"),
    ("log", "Log"),
    ("sqrt", "Sqrt"),
    ("_copy", "Identity"),
];

const BINARY: &[(&str, &str)] = &[
    ("add", "Add"),
    ("sub", "Sub"),
    ("mul", "Mul"),
    ("div", "Div"),
    ("maximum", "Max"),
    ("minimum", "Min"),
];

const OTHER: &[&str] = &[
    "<param>",
    "<const>",
    "conv2d",
    "depthwise_conv2d",
    "add_bias",
    "pooling2d",
    "pooling2d_v2",
    "_onnx_pooling2d_padding",
    "global_pooling2d",
    "flatten",
    "inner_prod",
    "gemm",
    "batch_norm",
    "batch_scale",
    "softmax",
    "concat",
    "_transpose",
    "_reshape",
    "_reshape_v2",
    "_shape",
    "gather",
    "stack",
    "to_float",
    "_cast",
    "_limit",
    "prelu",
    "leaky_relu",
    "shape_index_patch",
];

/// True for the TenniS operators this exporter lowers.
pub(crate) fn supported(op: &str) -> bool {
    UNARY.iter().chain(BINARY).any(|(o, _)| *o == op) || OTHER.contains(&op)
}

/// Every TenniS operator this exporter lowers, sorted.
pub fn supported_ops() -> Vec<&'static str> {
    let mut v: Vec<&str> = UNARY
        .iter()
        .chain(BINARY)
        .map(|(o, _)| *o)
        .chain(OTHER.iter().copied())
        .collect();
    v.sort_unstable();
    v
}

pub(super) fn export(doc: &Document, opset: i64) -> Result<(ModelProto, ExportSummary)> {
    let g = doc
        .graph()
        .and_then(|m| m.graphs.first())
        .ok_or_else(|| Error::Unsupported("the module has no graph".into()))?;
    Exporter {
        doc,
        g,
        cx: Ctx::new("tennis", opset),
        ranks: HashMap::new(),
        lens: HashMap::new(),
        producer: HashMap::new(),
        input_rank: 4,
    }
    .run()
}

struct Exporter<'a> {
    doc: &'a Document,
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
                let t = self.doc.tensor(t)?;
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
                .doc
                .tensor(t)
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
        if n.op != "<const>" {
            return None;
        }
        let t = self.const_tensor(value)?;
        Some(t.to_f64_vec()?.iter().map(|&v| v as i64).collect())
    }

    /// The data of the `<const>` node whose value is `value`: the tensor
    /// the graph names for it.
    fn const_tensor(&self, value: &str) -> Option<&'a tensor_core::Tensor<'static>> {
        let named = self.g.value(value).and_then(|v| v.tensor.as_deref());
        named
            .and_then(|t| self.doc.tensor(t))
            .or_else(|| self.doc.tensor(value))
            .or_else(|| self.doc.tensor(&format!("{value}/value")))
    }

    fn const_dims(&self, value: &str) -> Option<Vec<usize>> {
        self.const_tensor(value).map(|t| t.dims().to_vec())
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
            if !supported(&n.op) {
                *bad.entry(n.op.clone()).or_default() += 1;
            }
        }
        if !bad.is_empty() {
            return Err(unsupported_error("TenniS", &bad));
        }
        for v in &g.values {
            self.cx.b.reserve(&v.name);
        }
        // Module inputs are images (4-D) in a module with image operators;
        // otherwise they have the rank of its largest constant.
        const IMAGE_OPS: &[&str] = &[
            "conv2d",
            "depthwise_conv2d",
            "pooling2d",
            "pooling2d_v2",
            "global_pooling2d",
            "add_bias",
        ];
        if !nodes.iter().any(|n| IMAGE_OPS.contains(&n.op.as_str())) {
            self.input_rank = nodes
                .iter()
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

    /// The element type of a value: integer where TenniS computes shapes.
    fn elem_type(&self, v: &str) -> DataType {
        match self.producer.get(v).map(|n| n.op.as_str()) {
            Some("_shape") => DataType::Int32,
            Some("<const>") => self
                .const_tensor(v)
                .and_then(|t| onnx_format::dtype::to_onnx(t.dtype()))
                .and_then(|d| DataType::try_from(d).ok())
                .unwrap_or(DataType::Float),
            Some("gather" | "concat" | "stack") => {
                let first = self.producer[v]
                    .inputs
                    .first()
                    .map(String::as_str)
                    .unwrap_or("");
                self.elem_type(first)
            }
            _ => DataType::Float,
        }
    }

    /// The length of a 1-D integer value, where it is static.
    fn infer_len(&self, n: &Node) -> Option<usize> {
        let len = |k: usize| n.inputs.get(k).and_then(|v| self.lens.get(v).copied());
        match n.op.as_str() {
            "<const>" => self
                .const_dims(&n.outputs[0])
                .filter(|d| d.len() <= 1)
                .map(|d| d.iter().product()),
            "_shape" => n.inputs.first().and_then(|v| self.ranks.get(v).copied()),
            "gather" => len(1).or_else(|| {
                n.inputs
                    .get(1)
                    .and_then(|v| self.ranks.get(v))
                    .filter(|&&r| r == 0)
                    .map(|_| 1)
            }),
            "concat" => (0..n.inputs.len()).map(len).sum(),
            "stack" => Some(n.inputs.len()),
            "_cast" | "to_float" | "_copy" => len(0),
            _ => None,
        }
    }

    fn infer_rank(&self, n: &Node) -> Option<usize> {
        let r0 = n.inputs.first().and_then(|v| self.ranks.get(v).copied());
        match n.op.as_str() {
            "<param>" => Some(self.input_rank),
            "_reshape_v2" => n.inputs.get(1).and_then(|v| self.lens.get(v).copied()),
            "<const>" => self.const_dims(&n.outputs[0]).map(|d| d.len()),
            "flatten" => Some(self.int(n, "dim", 1).max(0) as usize + 1),
            "inner_prod" | "gemm" => Some(2),
            "_reshape" => self.ints(n, "shape").map(|s| s.len()),
            "_shape" => Some(1),
            "stack" => r0.map(|r| r + 1),
            "_onnx_pooling2d_padding" => Some(2),
            "gather" => {
                let ri = n.inputs.get(1).and_then(|v| self.ranks.get(v).copied())?;
                r0.map(|r| r - 1 + ri)
            }
            op if BINARY.iter().any(|(o, _)| *o == op) => {
                let r1 = n.inputs.get(1).and_then(|v| self.ranks.get(v).copied());
                match (r0, r1) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                }
            }
            _ => r0,
        }
    }

    fn lower(&mut self, n: &Node) -> Result<()> {
        let op = n.op.as_str();
        let out = n.outputs[0].as_str();
        let ins: Vec<&str> = n.inputs.iter().map(String::as_str).collect();
        let input = |k: usize| -> Result<&str> {
            ins.get(k)
                .copied()
                .ok_or_else(|| Error::Invalid(format!("needs input {k}")))
        };
        if let Some((_, o)) = UNARY.iter().find(|(t, _)| *t == op) {
            self.cx.op_to(o, out, &[input(0)?], out, vec![]);
            return Ok(());
        }
        if let Some((_, o)) = BINARY.iter().find(|(t, _)| *t == op) {
            self.cx.op_to(o, out, &[input(0)?, input(1)?], out, vec![]);
            return Ok(());
        }
        match op {
            "<param>" => {
                let dims = vec![Dim::Unknown; self.input_rank];
                self.cx.b.input(out, DataType::Float, &dims);
            }
            "<const>" => {
                let t = self
                    .const_tensor(out)
                    .ok_or_else(|| Error::Invalid("a constant without a value".into()))?;
                self.cx
                    .b
                    .initializer(out, t)
                    .map_err(crate::formats::onnx::onnx_err)?;
            }
            "conv2d" | "depthwise_conv2d" => {
                format_ok(n)?;
                let (x, w) = (input(0)?, input(1)?);
                let pad = self.need_ints(n, "padding", 8)?;
                let stride = self.need_ints(n, "stride", 4)?;
                let dil = self
                    .ints(n, "dilation")
                    .or_else(|| self.ints(n, "dialations"))
                    .filter(|d| d.len() == 4)
                    .unwrap_or(vec![1; 4]);
                if self.float(n, "padding_value", 0.0) != 0.0 {
                    return Err(Error::Unsupported("a non-zero padding_value".into()));
                }
                let mut attrs = vec![
                    attr::ints("pads", &[pad[4], pad[6], pad[5], pad[7]]),
                    attr::ints("strides", &stride[2..]),
                    attr::ints("dilations", &dil[2..]),
                ];
                let w = if op == "depthwise_conv2d" {
                    // TenniS keeps [multiplier, C, kh, kw]; ONNX wants
                    // [C * multiplier, 1, kh, kw] with one group per channel.
                    let d = self.const_dims(w).filter(|d| d.len() == 4).ok_or_else(|| {
                        Error::Unsupported("depthwise weights that are not a 4-D constant".into())
                    })?;
                    if d[0] != 1 {
                        return Err(Error::Unsupported(
                            "a depthwise multiplier other than 1".into(),
                        ));
                    }
                    attrs.push(attr::int("group", d[1] as i64));
                    self.cx
                        .reshape(w, &[d[1] as i64, 1, d[2] as i64, d[3] as i64])
                } else {
                    w.to_string()
                };
                self.cx.op_to("Conv", out, &[x, &w], out, attrs);
            }
            "add_bias" => {
                let (x, b) = (input(0)?, input(1)?);
                let dim = match n.attribute("format").and_then(Attribute::as_str) {
                    Some(f) => f.find('C').map_or(1, |i| i as i64),
                    None => self.int(n, "dim", 1),
                };
                let rank = self.rank(x)? as i64;
                let mut shape = vec![-1i64];
                shape.extend(std::iter::repeat_n(1, (rank - dim - 1).max(0) as usize));
                let b2 = self.cx.reshape(b, &shape);
                self.cx.op_to("Add", out, &[x, &b2], out, vec![]);
            }
            "pooling2d" => {
                format_ok(n)?;
                let pad = self.need_ints(n, "padding", 8)?;
                let k = self.need_ints(n, "ksize", 4)?;
                let s = self.need_ints(n, "stride", 4)?;
                self.pool(n, input(0)?, &pad, &k, &s, true, None)?;
            }
            "pooling2d_v2" => {
                format_ok(n)?;
                let (x, p) = (input(0)?, input(1)?);
                let k = self
                    .const_ints(input(2)?)
                    .filter(|v| v.len() == 4)
                    .ok_or_else(|| Error::Unsupported("ksize that is not a constant".into()))?;
                let s = self
                    .const_ints(input(3)?)
                    .filter(|v| v.len() == 4)
                    .ok_or_else(|| Error::Unsupported("stride that is not a constant".into()))?;
                if let Some(pad) = self.const_ints(p).filter(|v| v.len() == 8) {
                    self.pool(n, x, &pad, &k, &s, true, None)?;
                } else {
                    let pn = self
                        .producer
                        .get(p)
                        .copied()
                        .filter(|pn| pn.op == "_onnx_pooling2d_padding")
                        .ok_or_else(|| {
                            Error::Unsupported(
                                "padding that is neither a constant nor _onnx_pooling2d_padding"
                                    .into(),
                            )
                        })?;
                    let auto = pn
                        .attribute("auto_pad")
                        .and_then(Attribute::as_str)
                        .unwrap_or("NOTSET")
                        .to_string();
                    let pad = self.ints(pn, "padding").unwrap_or(vec![0; 8]);
                    if auto == "NOTSET" {
                        self.pool(n, x, &pad, &k, &s, false, None)?;
                    } else if pad.iter().all(|&v| v == 0) {
                        self.pool(n, x, &pad, &k, &s, false, Some(&auto))?;
                    } else {
                        return Err(Error::Unsupported(format!(
                            "auto_pad {auto} with a static padding"
                        )));
                    }
                }
            }
            "_onnx_pooling2d_padding" => {
                // folded into the pooling2d_v2 that reads it; any other reader fails
                let readers = self
                    .g
                    .nodes
                    .iter()
                    .filter(|m| m.inputs.iter().any(|i| i == out))
                    .any(|m| m.op != "pooling2d_v2");
                if readers {
                    return Err(Error::Unsupported(
                        "its padding read by an operator other than pooling2d_v2".into(),
                    ));
                }
            }
            "global_pooling2d" => {
                format_ok(n)?;
                let o = if self.int(n, "type", 0) == 0 {
                    "GlobalMaxPool"
                } else {
                    "GlobalAveragePool"
                };
                self.cx.op_to(o, out, &[input(0)?], out, vec![]);
            }
            "flatten" => {
                let dim = self.int(n, "dim", 1).max(0) as usize;
                let mut shape = vec![0i64; dim];
                shape.push(-1);
                let s = self.cx.ints(&shape);
                self.cx.op_to("Reshape", out, &[input(0)?, &s], out, vec![]);
            }
            "inner_prod" => {
                let (x, w) = (input(0)?, input(1)?);
                let t = self.int(n, "transpose", 0);
                let xf = self.cx.op("Flatten", &[x], vec![attr::int("axis", 1)]);
                self.cx
                    .op_to("Gemm", out, &[&xf, w], out, vec![attr::int("transB", t)]);
            }
            "gemm" => {
                let attrs = vec![
                    attr::float("alpha", self.float(n, "alpha", 1.0) as f32),
                    attr::float("beta", self.float(n, "beta", 1.0) as f32),
                    attr::int("transA", self.int(n, "transA", 0)),
                    attr::int("transB", self.int(n, "transB", 0)),
                ];
                self.cx.op_to("Gemm", out, &ins, out, attrs);
            }
            "batch_norm" | "batch_scale" => {
                let x = input(0)?;
                let dim = self.int(n, "dim", 1);
                let rank = self.rank(x)? as i64;
                let mut shape = vec![-1i64];
                shape.extend(std::iter::repeat_n(1, (rank - dim - 1).max(0) as usize));
                let (a, b) = (
                    self.cx.reshape(input(1)?, &shape),
                    self.cx.reshape(input(2)?, &shape),
                );
                if op == "batch_norm" {
                    // (x - mean) / sqrt(variance + epsilon)
                    let eps = self.cx.scalar(self.float(n, "epsilon", 1e-5) as f32);
                    let d = self.cx.op("Sub", &[x, &a], vec![]);
                    let ve = self.cx.op("Add", &[&b, &eps], vec![]);
                    let sd = self.cx.op("Sqrt", &[&ve], vec![]);
                    self.cx.op_to("Div", out, &[&d, &sd], out, vec![]);
                } else {
                    // x * scale + bias
                    let m = self.cx.op("Mul", &[x, &a], vec![]);
                    self.cx.op_to("Add", out, &[&m, &b], out, vec![]);
                }
            }
            "softmax" => {
                let dim = self.int(n, "dim", -1);
                self.cx.op_to(
                    "Softmax",
                    out,
                    &[input(0)?],
                    out,
                    vec![attr::int("axis", dim)],
                );
            }
            "concat" => {
                self.cx.op_to(
                    "Concat",
                    out,
                    &ins,
                    out,
                    vec![attr::int("axis", self.int(n, "dim", 0))],
                );
            }
            "_transpose" => {
                let perm = self
                    .ints(n, "permute")
                    .ok_or_else(|| Error::Invalid("no permute".into()))?;
                self.cx.op_to(
                    "Transpose",
                    out,
                    &[input(0)?],
                    out,
                    vec![attr::ints("perm", &perm)],
                );
            }
            "_reshape" => {
                let shape = self
                    .ints(n, "shape")
                    .ok_or_else(|| Error::Invalid("no shape".into()))?;
                let s = self.cx.ints(&shape);
                self.cx.op_to("Reshape", out, &[input(0)?, &s], out, vec![]);
            }
            "_reshape_v2" => {
                let s = self.cx.cast(input(1)?, DataType::Int64);
                self.cx.op_to("Reshape", out, &[input(0)?, &s], out, vec![]);
            }
            "_shape" => {
                // TenniS shapes are int32
                let s = self.cx.op("Shape", &[input(0)?], vec![]);
                self.cx.op_to(
                    "Cast",
                    out,
                    &[&s],
                    out,
                    vec![attr::int("to", DataType::Int32 as i64)],
                );
            }
            "gather" => {
                let axis = self.int(n, "axis", 0);
                self.cx.op_to(
                    "Gather",
                    out,
                    &[input(0)?, input(1)?],
                    out,
                    vec![attr::int("axis", axis)],
                );
            }
            "stack" => {
                let axis = self.int(n, "axis", 0);
                let parts: Vec<String> =
                    ins.iter().map(|i| self.cx.unsqueeze(i, &[axis])).collect();
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                self.cx
                    .op_to("Concat", out, &refs, out, vec![attr::int("axis", axis)]);
            }
            "to_float" => {
                self.cx.op_to(
                    "Cast",
                    out,
                    &[input(0)?],
                    out,
                    vec![attr::int("to", DataType::Float as i64)],
                );
            }
            "_cast" => {
                let code = self.int(n, "dtype", 10);
                // TenniS type codes (the module format's own numbering)
                let to = match code {
                    1 => DataType::Int8,
                    2 => DataType::Uint8,
                    3 => DataType::Int16,
                    4 => DataType::Uint16,
                    5 => DataType::Int32,
                    6 => DataType::Uint32,
                    7 => DataType::Int64,
                    8 => DataType::Uint64,
                    9 => DataType::Float16,
                    10 => DataType::Float,
                    11 => DataType::Double,
                    21 => DataType::Bool,
                    _ => return Err(Error::Unsupported(format!("cast to TenniS type {code}"))),
                } as i32;
                self.cx.op_to(
                    "Cast",
                    out,
                    &[input(0)?],
                    out,
                    vec![attr::int("to", i64::from(to))],
                );
            }
            "_limit" => self.limit(n, input(0)?, out)?,
            "shape_index_patch" => self.shape_index_patch(n, input(0)?, input(1)?, out)?,
            "prelu" => {
                let (x, slope) = (input(0)?, input(1)?);
                let dim = self.int(n, "dim", 1);
                let rank = self.rank(x)? as i64;
                let mut shape = vec![-1i64];
                shape.extend(std::iter::repeat_n(1, (rank - dim - 1).max(0) as usize));
                let s = self.cx.reshape(slope, &shape);
                self.cx.op_to("PRelu", out, &[x, &s], out, vec![]);
            }
            "leaky_relu" => {
                let a = self.float(n, "scalar", 0.01) as f32;
                self.cx.op_to(
                    "LeakyRelu",
                    out,
                    &[input(0)?],
                    out,
                    vec![attr::float("alpha", a)],
                );
            }
            other => return Err(Error::Unsupported(format!("{other} has no ONNX lowering"))),
        }
        Ok(())
    }

    /// A pooling: `ceil` for TenniS's own rule (ceil_mode 1), else the
    /// floor rule; `auto`: an ONNX auto_pad instead of explicit pads.
    #[allow(clippy::too_many_arguments)]
    fn pool(
        &mut self,
        n: &Node,
        x: &str,
        pad: &[i64],
        k: &[i64],
        s: &[i64],
        ceil: bool,
        auto: Option<&str>,
    ) -> Result<()> {
        let out = n.outputs[0].as_str();
        if pad[..4].iter().any(|&v| v != 0) || k[..2] != [1, 1] || s[..2] != [1, 1] {
            return Err(Error::Unsupported(
                "pooling over the batch or channel axes".into(),
            ));
        }
        let ty = self.int(n, "type", 0);
        // TenniS padding types: 0 black (averages count the valid inputs),
        // 3 white (averages divide by the window size); 1 copy, 2 loop.
        let white = match self.int(n, "padding_type", 0) {
            0 => false,
            3 => true,
            t => {
                return Err(Error::Unsupported(format!(
                    "padding_type {t} (copy or loop padding)"
                )));
            }
        };
        let mut attrs = vec![
            attr::ints("kernel_shape", &k[2..]),
            attr::ints("strides", &s[2..]),
        ];
        match auto {
            Some(a) => attrs.push(attr::string("auto_pad", a)),
            None => {
                attrs.push(attr::ints("pads", &[pad[4], pad[6], pad[5], pad[7]]));
                attrs.push(attr::int("ceil_mode", i64::from(ceil)));
            }
        }
        let o = match ty {
            0 => "MaxPool",
            1 => {
                attrs.push(attr::int("count_include_pad", i64::from(white)));
                "AveragePool"
            }
            t => return Err(Error::Unsupported(format!("pooling type {t}"))),
        };
        self.cx.op_to(o, out, &[x], out, attrs);
        Ok(())
    }

    /// `shape_index_patch(x [N, C, H, W], pos [N, 2L, 1, 1])`: for each of
    /// the L landmarks (x, y in [0, 1]) the patch of `PH × PW` pixels of x
    /// around it, zero outside x: out `[N, C, PH, L, PW]` with
    /// `PH = int(origin_patch.h · H / origin.h + 0.5)` (and W alike), the
    /// patch starting at `int(y · (H − 1) − (PH − 1) / 2 + 0.5)` (truncated
    /// toward zero, as TenniS's C++ does). Written with Shape, Range and
    /// GatherElements over the flattened image, sizes computed at run time.
    fn shape_index_patch(&mut self, n: &Node, x: &str, pos: &str, out: &str) -> Result<()> {
        let op = self.need_ints(n, "origin_patch", 2)?;
        let or = self.need_ints(n, "origin", 2)?;
        if or.iter().any(|&v| v <= 0) {
            return Err(Error::Invalid(format!("origin {or:?}")));
        }
        let cx = &mut self.cx;
        let f = |cx: &mut Ctx, v: &str| cx.cast(v, DataType::Float);
        let i64c = |cx: &mut Ctx, v: &str| cx.cast(v, DataType::Int64);
        let shape = cx.op("Shape", &[x], vec![]);
        let pick = |cx: &mut Ctx, i: i64| {
            let k = cx.b.const_i64("k", &[i]);
            let k = cx.squeeze0(&k);
            cx.op("Gather", &[&shape, &k], vec![])
        };
        let (nn, cc, hh, ww) = (pick(cx, 0), pick(cx, 1), pick(cx, 2), pick(cx, 3));
        let half = cx.scalar(0.5);
        let one_f = cx.scalar(1.0);
        let axis = |cx: &mut Ctx, size: &str, patch: i64, origin: i64, coord: i64| {
            // PH = floor(patch * H / origin + 0.5)
            let sf = f(cx, size);
            let scale = cx.scalar(patch as f32 / origin as f32);
            let p = cx.op("Mul", &[&sf, &scale], vec![]);
            let p = cx.op("Add", &[&p, &half], vec![]);
            let p = cx.op("Floor", &[&p], vec![]);
            let pi = i64c(cx, &p);
            // start = trunc(c * (H - 1) - (PH - 1) / 2 + 0.5), c: [N, L]
            let two = cx.ints(&[0, -1, 2]);
            let pr = cx.op("Reshape", &[pos, &two], vec![]);
            let ci = cx.b.const_i64("k", &[coord]);
            let ci = cx.squeeze0(&ci);
            let c = cx.op("Gather", &[&pr, &ci], vec![attr::int("axis", 2)]);
            let hm1 = cx.op("Sub", &[&sf, &one_f], vec![]);
            let r = cx.op("Sub", &[&p, &one_f], vec![]);
            let r = cx.op("Mul", &[&r, &half], vec![]);
            let s = cx.op("Mul", &[&c, &hm1], vec![]);
            let s = cx.op("Sub", &[&s, &r], vec![]);
            let s = cx.op("Add", &[&s, &half], vec![]);
            let start = i64c(cx, &s);
            // indices [N, L, PH], valid where 0 <= i < H
            let zero = cx.b.const_i64("k", &[0]);
            let zero = cx.squeeze0(&zero);
            let onei = cx.b.const_i64("k", &[1]);
            let onei = cx.squeeze0(&onei);
            let rng = cx.op("Range", &[&zero, &pi, &onei], vec![]);
            let st = cx.unsqueeze(&start, &[2]);
            let idx = cx.op("Add", &[&st, &rng], vec![]);
            let ge = cx.op("GreaterOrEqual", &[&idx, &zero], vec![]);
            let lt = cx.op("Less", &[&idx, size], vec![]);
            let ok = cx.op("And", &[&ge, &lt], vec![]);
            let hi = cx.op("Sub", &[size, &onei], vec![]);
            let clamped = cx.op("Max", &[&idx, &zero], vec![]);
            let clamped = cx.op("Min", &[&clamped, &hi], vec![]);
            (pi, clamped, ok)
        };
        let (ph, rows, rok) = axis(cx, &hh, op[0], or[0], 1);
        let (pw, cols, cok) = axis(cx, &ww, op[1], or[1], 0);
        // flat index rows * W + cols: [N, L, PH, PW]
        let r4 = cx.unsqueeze(&rows, &[3]);
        let c4 = cx.unsqueeze(&cols, &[2]);
        let rw = cx.op("Mul", &[&r4, &ww], vec![]);
        let flat = cx.op("Add", &[&rw, &c4], vec![]);
        let rok4 = cx.unsqueeze(&rok, &[3]);
        let cok4 = cx.unsqueeze(&cok, &[2]);
        let ok = cx.op("And", &[&rok4, &cok4], vec![]);
        let u = |cx: &mut Ctx, v: &str| cx.unsqueeze(v, &[0]);
        let (n1, c1, h1, w1, ph1, pw1) = (
            u(cx, &nn),
            u(cx, &cc),
            u(cx, &hh),
            u(cx, &ww),
            u(cx, &ph),
            u(cx, &pw),
        );
        let hw = cx.op("Mul", &[&h1, &w1], vec![]);
        let xs = cx.op("Concat", &[&n1, &c1, &hw], vec![attr::int("axis", 0)]);
        let xf = cx.op("Reshape", &[x, &xs], vec![]);
        let m1 = cx.ints(&[-1]);
        let one1 = cx.ints(&[1]);
        let is = cx.op("Concat", &[&n1, &one1, &m1], vec![attr::int("axis", 0)]);
        let idx = cx.op("Reshape", &[&flat, &is], vec![]);
        let ones = cx.op("Shape", &[&idx], vec![]);
        let k = cx.b.const_i64("k", &[2]);
        let k = cx.squeeze0(&k);
        let kk = cx.op("Gather", &[&ones, &k], vec![]);
        let kk = cx.unsqueeze(&kk, &[0]);
        let es = cx.op("Concat", &[&n1, &c1, &kk], vec![attr::int("axis", 0)]);
        let idx = cx.op("Expand", &[&idx, &es], vec![]);
        let g = cx.op("GatherElements", &[&xf, &idx], vec![attr::int("axis", 2)]);
        let l = cx.op("Shape", &[&rows], vec![]);
        let k1 = cx.b.const_i64("k", &[1]);
        let k1 = cx.squeeze0(&k1);
        let l = cx.op("Gather", &[&l, &k1], vec![]);
        let l1 = cx.unsqueeze(&l, &[0]);
        let gs = cx.op(
            "Concat",
            &[&n1, &c1, &l1, &ph1, &pw1],
            vec![attr::int("axis", 0)],
        );
        let g5 = cx.op("Reshape", &[&g, &gs], vec![]);
        let okf = f(cx, &ok);
        let ok5 = cx.unsqueeze(&okf, &[1]);
        let masked = cx.op("Mul", &[&g5, &ok5], vec![]);
        cx.op_to(
            "Transpose",
            out,
            &[&masked],
            out,
            vec![attr::ints("perm", &[0, 1, 3, 2, 4])],
        );
        Ok(())
    }

    /// `_limit`: every axis longer than its (positive) limit is cropped to
    /// the limit, centred (the start is half the excess, rounded down);
    /// shorter axes are kept. Limits align with the last axes.
    fn limit(&mut self, n: &Node, x: &str, out: &str) -> Result<()> {
        let limits = self
            .ints(n, "shape")
            .ok_or_else(|| Error::Invalid("no shape".into()))?;
        let rank = self.rank(x).unwrap_or(limits.len()).max(limits.len());
        let lead = rank - limits.len();
        let axes: Vec<i64> = limits
            .iter()
            .enumerate()
            .filter(|(_, l)| **l > 0)
            .map(|(i, _)| (lead + i) as i64)
            .collect();
        if axes.is_empty() {
            self.cx.op_to("Identity", out, &[x], out, vec![]);
            return Ok(());
        }
        let lim: Vec<i64> = limits.iter().copied().filter(|&l| l > 0).collect();
        let shape = self.cx.op("Shape", &[x], vec![]);
        let ax = self.cx.ints(&axes);
        let sizes = self.cx.op("Gather", &[&shape, &ax], vec![]);
        let l = self.cx.ints(&lim);
        let zero = self.cx.ints(&[0]);
        let two = self.cx.ints(&[2]);
        let excess = self.cx.op("Sub", &[&sizes, &l], vec![]);
        let excess = self.cx.op("Max", &[&excess, &zero], vec![]);
        let start = self.cx.op("Div", &[&excess, &two], vec![]);
        let len = self.cx.op("Min", &[&sizes, &l], vec![]);
        let end = self.cx.op("Add", &[&start, &len], vec![]);
        self.cx
            .op_to("Slice", out, &[x, &start, &end, &ax], out, vec![]);
        Ok(())
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
