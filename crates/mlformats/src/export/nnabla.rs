//! NNabla networks to ONNX.

use std::collections::{BTreeMap, HashMap, HashSet};

use nnabla_proto::NNablaProtoBuf;
use onnx_format::ModelProto;
use onnx_format::builder::{Dim, attr};
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::{Attribute, Graph, Node, ValueKind};
use tensor_core::{Limits, Tensor};

use super::{Ctx, ExportOptions, ExportSummary, unsupported_error};
use crate::{Document, Error, Format, Result};

/// Functions that only train: left out when no requested output needs
/// them, refused otherwise.
const TRAINING_ONLY: &[&str] = &[
    "BinaryCrossEntropy",
    "SigmoidCrossEntropy",
    "SoftmaxCrossEntropy",
    "CategoricalCrossEntropy",
    "SquaredError",
    "AbsoluteError",
    "HuberLoss",
    "EpsilonInsensitiveLoss",
    "KLMultinomial",
    "RandomFlip",
    "RandomShift",
    "RandomCrop",
    "RandomErase",
    "ImageAugmentation",
    "Rand",
    "Randn",
    "RandomChoice",
];

/// Elementwise functions with a one-to-one ONNX operator.
const UNARY: &[(&str, &str)] = &[
    ("ReLU", "Relu"),
    ("Sigmoid", "Sigmoid"),
    ("Tanh", "Tanh"),
    ("Exp", "Exp"),
    ("Log", "Log"),
    ("Abs", "Abs"),
    ("Identity", "Identity"),
    ("Dropout", "Identity"),
    ("SoftSign", "Softsign"),
    ("Sin", "Sin"),
    ("Cos", "Cos"),
    ("Tan", "Tan"),
    ("Sinh", "Sinh"),
    ("Cosh", "Cosh"),
    ("ASin", "Asin"),
    ("ACos", "Acos"),
    ("ATan", "Atan"),
    ("ASinh", "Asinh"),
    ("ACosh", "Acosh"),
    ("ATanh", "Atanh"),
    ("Ceil", "Ceil"),
    ("Floor", "Floor"),
    ("Round", "Round"),
    ("Sign", "Sign"),
    ("Erf", "Erf"),
];

const BINARY: &[(&str, &str)] = &[
    ("Add2", "Add"),
    ("Sub2", "Sub"),
    ("Mul2", "Mul"),
    ("Div2", "Div"),
    ("Pow2", "Pow"),
    ("Maximum2", "Max"),
    ("Minimum2", "Min"),
];

/// `(function, ONNX operator, scalar first)`.
const SCALAR: &[(&str, &str, bool)] = &[
    ("AddScalar", "Add", false),
    ("MulScalar", "Mul", false),
    ("PowScalar", "Pow", false),
    ("RSubScalar", "Sub", true),
    ("RDivScalar", "Div", true),
    ("RPowScalar", "Pow", true),
    ("MaximumScalar", "Max", false),
    ("MinimumScalar", "Min", false),
];

const COMPARE: &[(&str, &str)] = &[
    ("Equal", "Equal"),
    ("Greater", "Greater"),
    ("GreaterEqual", "GreaterOrEqual"),
    ("Less", "Less"),
    ("LessEqual", "LessOrEqual"),
];

const LOGICAL: &[(&str, &str)] = &[
    ("LogicalAnd", "And"),
    ("LogicalOr", "Or"),
    ("LogicalXor", "Xor"),
];

const REDUCE: &[(&str, &str)] = &[
    ("Mean", "ReduceMean"),
    ("Sum", "ReduceSum"),
    ("Max", "ReduceMax"),
    ("Min", "ReduceMin"),
    ("Prod", "ReduceProd"),
];

const OTHER: &[&str] = &[
    "Affine",
    "BinaryConnectAffine",
    "BinaryWeightAffine",
    "Convolution",
    "BinaryConnectConvolution",
    "Deconvolution",
    "MaxPooling",
    "AveragePooling",
    "SumPooling",
    "GlobalAveragePooling",
    "Unpooling",
    "BatchNormalization",
    "Concatenate",
    "Slice",
    "Reshape",
    "Transpose",
    "Flip",
    "Pad",
    "Softmax",
    "LogSoftmax",
    "ELU",
    "LeakyReLU",
    "SELU",
    "SoftPlus",
    "PReLU",
    "NotEqual",
    "LogicalNot",
    "BroadcastTo",
    "BatchMatmul",
    "Split",
    "Stack",
    "BinarySigmoid",
    "BinaryTanh",
    "BoolFill",
];

/// True for the function types this exporter lowers.
pub(crate) fn supported(op: &str) -> bool {
    UNARY.iter().any(|(f, _)| *f == op)
        || BINARY.iter().any(|(f, _)| *f == op)
        || SCALAR.iter().any(|(f, ..)| *f == op)
        || COMPARE.iter().any(|(f, _)| *f == op)
        || LOGICAL.iter().any(|(f, _)| *f == op)
        || REDUCE.iter().any(|(f, _)| *f == op)
        || OTHER.contains(&op)
}

/// Every function type this exporter lowers, for documentation and tests.
pub fn supported_functions() -> Vec<&'static str> {
    let mut v: Vec<&str> = UNARY
        .iter()
        .chain(BINARY)
        .chain(COMPARE)
        .chain(LOGICAL)
        .chain(REDUCE)
        .map(|(f, _)| *f)
        .chain(SCALAR.iter().map(|(f, ..)| *f))
        .chain(OTHER.iter().copied())
        .collect();
    v.sort_unstable();
    v
}

fn load_model(doc: &Document) -> Result<NNablaProtoBuf> {
    let src = doc.source();
    match src.format {
        Format::NnablaNntxt | Format::NnablaProtobuf => {
            Ok(crate::formats::nnabla::load(src, &Limits::default())?.0)
        }
        #[cfg(feature = "nnp")]
        Format::NnablaNnp => Ok(crate::formats::nnp::read_nnp(src, &Default::default())?
            .model()
            .clone()),
        other => Err(Error::Unsupported(format!(
            "{other} files hold no network to export to ONNX"
        ))),
    }
}

pub(super) fn export(
    doc: &Document,
    opts: &ExportOptions,
    opset: i64,
) -> Result<(ModelProto, ExportSummary)> {
    let model = load_model(doc)?;
    let expanded = nnabla_proto::model::expand_all_loops(&model, &Limits::default())?;
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
    Exporter::new(doc, g, opset).run(&data, &outputs)
}

struct Exporter<'a> {
    doc: &'a Document,
    g: &'a Graph,
    cx: Ctx,
    shapes: HashMap<&'a str, Vec<i64>>,
    /// Ranks inferred for variables whose shape is not declared.
    ranks: HashMap<String, usize>,
    /// Shapes inferred for variables whose shape is not declared (`-1`:
    /// not known).
    inferred: HashMap<String, Vec<i64>>,
}

fn a_ints(n: &Node, key: &str) -> Vec<i64> {
    n.attribute(key)
        .and_then(Attribute::as_ints)
        .unwrap_or_default()
}

fn a_int(n: &Node, key: &str, default: i64) -> i64 {
    n.attribute(key)
        .and_then(Attribute::as_int)
        .unwrap_or(default)
}

fn a_float(n: &Node, key: &str, default: f64) -> f64 {
    n.attribute(key)
        .and_then(Attribute::as_float)
        .unwrap_or(default)
}

fn a_bool(n: &Node, key: &str) -> bool {
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
    fn new(doc: &'a Document, g: &'a Graph, opset: i64) -> Self {
        // A variable declared without dimensions has an unknown shape (old
        // files leave computed variables undeclared).
        let shapes = g
            .values
            .iter()
            .filter_map(|v| Some((v.name.as_str(), v.shape.clone().filter(|s| !s.is_empty())?)))
            .collect();
        Exporter {
            doc,
            g,
            cx: Ctx::new(&g.name, opset),
            shapes,
            ranks: HashMap::new(),
            inferred: HashMap::new(),
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
            self.doc
                .tensor(v)
                .map(|t| t.dims().iter().map(|&d| d as i64).collect())
        })
    }

    /// The output shape of the functions whose shape follows from their
    /// inputs' (elementwise, transposes, pooling, convolution, affine).
    fn infer_shape(&self, n: &Node) -> Option<Vec<i64>> {
        let op = n.op.as_str();
        let x = self.dims(n.inputs.first()?)?;
        let same = UNARY.iter().any(|(f, _)| *f == op)
            || SCALAR.iter().any(|(f, ..)| *f == op)
            || matches!(
                op,
                "BatchNormalization"
                    | "Softmax"
                    | "LogSoftmax"
                    | "ELU"
                    | "LeakyReLU"
                    | "SELU"
                    | "SoftPlus"
                    | "PReLU"
                    | "LogicalNot"
                    | "BinarySigmoid"
                    | "BinaryTanh"
                    | "BoolFill"
                    | "Flip"
            );
        if same {
            return Some(x);
        }
        if BINARY
            .iter()
            .chain(COMPARE)
            .chain(LOGICAL)
            .any(|(f, _)| *f == op)
            || op == "NotEqual"
        {
            let y = self.dims(n.inputs.get(1)?)?;
            let r = x.len().max(y.len());
            let pad = |v: &[i64]| {
                let mut p = vec![1; r - v.len()];
                p.extend_from_slice(v);
                p
            };
            let (x, y) = (pad(&x), pad(&y));
            return Some(
                x.iter()
                    .zip(&y)
                    .map(|(&a, &b)| {
                        if a == 1 {
                            b
                        } else if b == 1 || a == b {
                            a
                        } else {
                            -1
                        }
                    })
                    .collect(),
            );
        }
        match op {
            "Transpose" => Some(
                a_ints(n, "axes")
                    .iter()
                    .map(|&a| x.get(a as usize).copied().unwrap_or(-1))
                    .collect(),
            ),
            "MaxPooling" | "AveragePooling" | "SumPooling" => {
                let k = a_ints(n, "kernel");
                let lead = x.len().checked_sub(k.len())?;
                let (stride, pad) = pool_stride_pad(n, &k);
                let ib = a_bool(n, "ignore_border");
                let mut out = x[..lead].to_vec();
                for i in 0..k.len() {
                    out.push(pool_out(x[lead + i], k[i], stride[i], pad[i], ib));
                }
                Some(out)
            }
            "GlobalAveragePooling" => {
                let mut out = x.get(..2)?.to_vec();
                out.resize(x.len(), 1);
                Some(out)
            }
            "Convolution" | "BinaryConnectConvolution" => {
                let w = self.dims(n.inputs.get(1)?)?;
                let k = w.len().checked_sub(2)?;
                let sp = x.len().checked_sub(k)?;
                let or = |v: Vec<i64>, d: i64| if v.is_empty() { vec![d; k] } else { v };
                let (pad, stride, dil) = (
                    or(a_ints(n, "pad"), 0),
                    or(a_ints(n, "stride"), 1),
                    or(a_ints(n, "dilation"), 1),
                );
                let mut out = x[..sp.checked_sub(1)?].to_vec();
                out.push(w[0]);
                for i in 0..k {
                    let d = x[sp + i];
                    out.push(if d < 0 || stride[i] <= 0 {
                        -1
                    } else {
                        (d + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1).div_euclid(stride[i]) + 1
                    });
                }
                Some(out)
            }
            "Affine" | "BinaryConnectAffine" | "BinaryWeightAffine" => {
                let w = self.dims(n.inputs.get(1)?)?;
                let base = a_int(n, "base_axis", 1) as usize;
                let mut out = x.get(..base)?.to_vec();
                out.extend_from_slice(w.get(1..)?);
                Some(out)
            }
            "Reshape" => Some(a_ints(n, "shape")),
            _ => None,
        }
    }

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
            .or_else(|| self.doc.tensor(v).map(|t| t.dims().len()))
    }

    /// The rank of each output of `n` where it can be told from its inputs'.
    fn infer_ranks(&mut self, n: &Node) {
        if let Some(out) = n.outputs.first()
            && !self.shapes.contains_key(out.as_str())
            && let Some(s) = self.infer_shape(n)
        {
            self.inferred.insert(out.clone(), s);
            return;
        }
        let r = |k: usize| n.inputs.get(k).and_then(|v| self.known_rank(v));
        let op = n.op.as_str();
        let out = if UNARY.iter().any(|(f, _)| *f == op)
            || SCALAR.iter().any(|(f, ..)| *f == op)
            || matches!(
                op,
                "Convolution"
                    | "BinaryConnectConvolution"
                    | "Deconvolution"
                    | "MaxPooling"
                    | "AveragePooling"
                    | "SumPooling"
                    | "GlobalAveragePooling"
                    | "Unpooling"
                    | "BatchNormalization"
                    | "Concatenate"
                    | "Slice"
                    | "Transpose"
                    | "Flip"
                    | "Pad"
                    | "Softmax"
                    | "LogSoftmax"
                    | "ELU"
                    | "LeakyReLU"
                    | "SELU"
                    | "SoftPlus"
                    | "PReLU"
                    | "LogicalNot"
                    | "BinarySigmoid"
                    | "BinaryTanh"
                    | "BoolFill"
            ) {
            r(0)
        } else if BINARY
            .iter()
            .chain(COMPARE)
            .chain(LOGICAL)
            .any(|(f, _)| *f == op)
            || matches!(op, "NotEqual" | "BatchMatmul")
        {
            r(0).max(r(1))
        } else if REDUCE.iter().any(|(f, _)| *f == op) {
            let axes = a_ints(n, "axes").len();
            if a_bool(n, "keep_dims") {
                r(0)
            } else if axes == 0 {
                Some(0)
            } else {
                r(0).map(|x| x.saturating_sub(axes))
            }
        } else {
            match op {
                "Affine" | "BinaryConnectAffine" | "BinaryWeightAffine" => {
                    let w = n
                        .inputs
                        .get(1)
                        .and_then(|v| self.known_rank(v))
                        .unwrap_or(2);
                    Some(a_int(n, "base_axis", 1).max(0) as usize + w.saturating_sub(1))
                }
                "Reshape" => Some(a_ints(n, "shape").len()),
                "BroadcastTo" => r(0),
                "Split" => r(0).map(|x| x.saturating_sub(1)),
                "Stack" => r(0).map(|x| x + 1),
                _ => None,
            }
        };
        if let Some(k) = out {
            for o in &n.outputs {
                if self.shape(o).is_none() {
                    self.ranks.insert(o.clone(), k);
                }
            }
        }
    }

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
            if TRAINING_ONLY.contains(&n.op.as_str()) {
                *bad.entry(format!("{} (training only)", n.op)).or_default() += 1;
            } else if !supported(&n.op) {
                *bad.entry(n.op.clone()).or_default() += 1;
            }
        }
        if !bad.is_empty() {
            return Err(unsupported_error(
                &format!("NNabla (network {:?})", g.name),
                &bad,
            ));
        }
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
                    let t = self.doc.tensor(i).ok_or_else(|| {
                        Error::Unsupported(format!(
                            "parameter {i:?} has no data in this file; export a file with its parameters (.nnp, or .nntxt/.protobuf with parameters)"
                        ))
                    })?;
                    // nnabla computes in f32 whatever a parameter file stores
                    let t = if t.dtype() == tensor_core::DType::F32 {
                        t.clone()
                    } else {
                        Tensor::from_values(t.dims().to_vec(), &t.to_vec::<f32>()?)?
                    };
                    self.cx
                        .b
                        .initializer(i, &t)
                        .map_err(crate::formats::onnx::onnx_err)?;
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
            self.lower(n).map_err(|e| match e {
                Error::Unsupported(m) | Error::Invalid(m) if !m.contains(&n.name) => {
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

    fn lower(&mut self, n: &Node) -> Result<()> {
        let op = n.op.as_str();
        let ins: Vec<&str> = n.inputs.iter().map(String::as_str).collect();
        let input = |k: usize| -> Result<&str> {
            ins.get(k).copied().ok_or_else(|| {
                Error::Invalid(format!("{op} function {:?} needs input {k}", n.name))
            })
        };
        let out =
            n.outputs.first().map(String::as_str).ok_or_else(|| {
                Error::Invalid(format!("{op} function {:?} has no output", n.name))
            })?;
        let name = n.name.as_str();
        if let Some((_, o)) = UNARY.iter().find(|(f, _)| *f == op) {
            self.cx.op_to(o, name, &[input(0)?], out, vec![]);
            if op == "Dropout"
                && let Some(mask) = n.outputs.get(1)
            {
                // at inference nothing is dropped: the mask is all ones
                let one = self.cx.scalar(1.0);
                let s = self.cx.op("Shape", &[input(0)?], vec![]);
                self.cx.op_to("Expand", "", &[&one, &s], mask, vec![]);
            }
            return Ok(());
        }
        if let Some((_, o)) = BINARY.iter().find(|(f, _)| *f == op) {
            self.cx.op_to(o, name, &[input(0)?, input(1)?], out, vec![]);
            return Ok(());
        }
        if let Some((_, o, first)) = SCALAR.iter().find(|(f, ..)| *f == op) {
            let c = self.cx.scalar(a_float(n, "val", 1.0) as f32);
            let x = input(0)?;
            let ab = if *first {
                [c.as_str(), x]
            } else {
                [x, c.as_str()]
            };
            self.cx.op_to(o, name, &ab, out, vec![]);
            return Ok(());
        }
        if let Some((_, o)) = COMPARE.iter().find(|(f, _)| *f == op) {
            let b = self.cx.op(o, &[input(0)?, input(1)?], vec![]);
            self.cx.op_to(
                "Cast",
                name,
                &[&b],
                out,
                vec![attr::int("to", DataType::Float as i64)],
            );
            return Ok(());
        }
        if let Some((_, o)) = LOGICAL.iter().find(|(f, _)| *f == op) {
            let a = self.cx.cast(input(0)?, DataType::Bool);
            let b = self.cx.cast(input(1)?, DataType::Bool);
            let r = self.cx.op(o, &[&a, &b], vec![]);
            self.cx.op_to(
                "Cast",
                name,
                &[&r],
                out,
                vec![attr::int("to", DataType::Float as i64)],
            );
            return Ok(());
        }
        if let Some((_, o)) = REDUCE.iter().find(|(f, _)| *f == op) {
            if a_bool(n, "with_index") || a_bool(n, "only_index") {
                return Err(Error::Unsupported(
                    "with_index/only_index is not exported".into(),
                ));
            }
            let r = self
                .cx
                .reduce(o, input(0)?, &a_ints(n, "axes"), a_bool(n, "keep_dims"));
            self.cx.op_to("Identity", name, &[&r], out, vec![]);
            return Ok(());
        }
        match op {
            "Affine" | "BinaryConnectAffine" | "BinaryWeightAffine" => self.affine(n, &ins, out),
            "Convolution" | "BinaryConnectConvolution" | "Deconvolution" => {
                self.convolution(n, &ins, out)
            }
            "MaxPooling" | "AveragePooling" | "SumPooling" => self.pooling(n, input(0)?, out),
            "GlobalAveragePooling" => {
                self.cx
                    .op_to("GlobalAveragePool", name, &[input(0)?], out, vec![]);
                Ok(())
            }
            "Unpooling" => {
                let x = input(0)?;
                let k = a_ints(n, "kernel");
                if a_bool(n, "channel_last") {
                    return Err(Error::Unsupported("channel_last is not exported".into()));
                }
                let rank = self.rank(n, x)?;
                let mut scales = vec![1.0f32; rank.saturating_sub(k.len())];
                scales.extend(k.iter().map(|&v| v as f32));
                let s = self
                    .cx
                    .b
                    .const_f32("scales", &scales, &[scales.len() as i64]);
                self.cx.op_to(
                    "Resize",
                    name,
                    &[x, "", &s],
                    out,
                    vec![
                        attr::string("mode", "nearest"),
                        attr::string("coordinate_transformation_mode", "asymmetric"),
                        attr::string("nearest_mode", "floor"),
                    ],
                );
                Ok(())
            }
            "BatchNormalization" => self.batch_norm(n, &ins, out),
            "Concatenate" => {
                self.cx.op_to(
                    "Concat",
                    name,
                    &ins,
                    out,
                    vec![attr::int("axis", a_int(n, "axis", 0))],
                );
                Ok(())
            }
            "Slice" => {
                let x = input(0)?;
                let rank = self.rank(n, x)? as i64;
                let start = a_ints(n, "start");
                let axes: Vec<i64> = (0..start.len() as i64)
                    .map(|i| rank - start.len() as i64 + i)
                    .collect();
                let mut step = a_ints(n, "step");
                step.resize(start.len(), 1);
                let (s, e, a, st) = (
                    self.cx.ints(&start),
                    self.cx.ints(&a_ints(n, "stop")),
                    self.cx.ints(&axes),
                    self.cx.ints(&step),
                );
                self.cx
                    .op_to("Slice", name, &[x, &s, &e, &a, &st], out, vec![]);
                Ok(())
            }
            "Reshape" => {
                let mut shape = a_ints(n, "shape");
                if let Some(o) = self.shape(out)
                    && o.first() == Some(&-1)
                    && o.len() == shape.len()
                    && !shape[1..].contains(&-1)
                {
                    shape[0] = -1;
                }
                let s = self.cx.ints(&shape);
                self.cx
                    .op_to("Reshape", name, &[input(0)?, &s], out, vec![]);
                Ok(())
            }
            "Transpose" => {
                self.cx.op_to(
                    "Transpose",
                    name,
                    &[input(0)?],
                    out,
                    vec![attr::ints("perm", &a_ints(n, "axes"))],
                );
                Ok(())
            }
            "Flip" => {
                let axes = a_ints(n, "axes");
                let k = axes.len();
                let (s, e, a, st) = (
                    self.cx.ints(&vec![-1; k]),
                    self.cx.ints(&vec![i64::MIN; k]),
                    self.cx.ints(&axes),
                    self.cx.ints(&vec![-1; k]),
                );
                self.cx
                    .op_to("Slice", name, &[input(0)?, &s, &e, &a, &st], out, vec![]);
                Ok(())
            }
            "Pad" => {
                let x = input(0)?;
                let rank = self.rank(n, x)?;
                let pw = a_ints(n, "pad_width");
                if !pw.len().is_multiple_of(2) || pw.len() / 2 > rank {
                    return Err(Error::Invalid(format!(
                        "pad_width {pw:?} does not fit rank {rank}"
                    )));
                }
                let lead = rank - pw.len() / 2;
                let mut pads = vec![0i64; 2 * rank];
                for (i, pair) in pw.chunks(2).enumerate() {
                    pads[lead + i] = pair[0];
                    pads[rank + lead + i] = pair[1];
                }
                let mode = match n
                    .attribute("mode")
                    .and_then(Attribute::as_str)
                    .unwrap_or("constant")
                {
                    "" | "constant" => "constant",
                    "reflect" => "reflect",
                    "repeat" | "edge" => "edge",
                    m => return Err(Error::Unsupported(format!("pad mode {m:?}"))),
                };
                let p = self.cx.ints(&pads);
                let c = self.cx.scalar(a_float(n, "constant_value", 0.0) as f32);
                self.cx.op_to(
                    "Pad",
                    name,
                    &[x, &p, &c],
                    out,
                    vec![attr::string("mode", mode)],
                );
                Ok(())
            }
            "Softmax" | "LogSoftmax" => {
                let x = input(0)?;
                let axis = match n.attribute("axis") {
                    Some(a) => a.as_int().unwrap_or(1),
                    None => self.rank(n, x)? as i64 - 1,
                };
                self.cx
                    .op_to(op, name, &[x], out, vec![attr::int("axis", axis)]);
                Ok(())
            }
            "ELU" => {
                let a = a_float(n, "alpha", 1.0) as f32;
                self.cx.op_to(
                    "Elu",
                    name,
                    &[input(0)?],
                    out,
                    vec![attr::float("alpha", a)],
                );
                Ok(())
            }
            "LeakyReLU" => {
                let a = a_float(n, "alpha", 0.1) as f32;
                self.cx.op_to(
                    "LeakyRelu",
                    name,
                    &[input(0)?],
                    out,
                    vec![attr::float("alpha", a)],
                );
                Ok(())
            }
            "SELU" => {
                let scale = a_float(n, "scale", 1.050_700_987_355_480_5) as f32;
                let alpha = a_float(n, "alpha", 1.673_263_242_354_377_3) as f32;
                self.cx.op_to(
                    "Selu",
                    name,
                    &[input(0)?],
                    out,
                    vec![attr::float("alpha", alpha), attr::float("gamma", scale)],
                );
                Ok(())
            }
            "SoftPlus" => {
                let beta = a_float(n, "beta", 1.0);
                let x = input(0)?;
                if beta == 0.0 || beta == 1.0 {
                    self.cx.op_to("Softplus", name, &[x], out, vec![]);
                } else {
                    let b = self.cx.scalar(beta as f32);
                    let xb = self.cx.op("Mul", &[x, &b], vec![]);
                    let s = self.cx.op("Softplus", &[&xb], vec![]);
                    self.cx.op_to("Div", name, &[&s, &b], out, vec![]);
                }
                Ok(())
            }
            "PReLU" => {
                let (x, slope) = (input(0)?, input(1)?);
                let base = a_int(n, "base_axis", 1);
                let rank = self.rank(n, x)? as i64;
                let sn: i64 = self.shape(slope).map_or(1, |s| s.iter().product());
                let s = if sn <= 1 {
                    self.cx.reshape(slope, &[1])
                } else {
                    let mut shape = vec![-1];
                    shape.extend(std::iter::repeat_n(1, (rank - base - 1).max(0) as usize));
                    self.cx.reshape(slope, &shape)
                };
                self.cx.op_to("PRelu", name, &[x, &s], out, vec![]);
                Ok(())
            }
            "NotEqual" => {
                let e = self.cx.op("Equal", &[input(0)?, input(1)?], vec![]);
                let ne = self.cx.op("Not", &[&e], vec![]);
                self.cx.op_to(
                    "Cast",
                    name,
                    &[&ne],
                    out,
                    vec![attr::int("to", DataType::Float as i64)],
                );
                Ok(())
            }
            "LogicalNot" => {
                let b = self.cx.cast(input(0)?, DataType::Bool);
                let nb = self.cx.op("Not", &[&b], vec![]);
                self.cx.op_to(
                    "Cast",
                    name,
                    &[&nb],
                    out,
                    vec![attr::int("to", DataType::Float as i64)],
                );
                Ok(())
            }
            "BroadcastTo" => {
                let (x, y) = (input(0)?, input(1)?);
                let rx = self.rank(n, x)? as i64;
                let ry = self.rank(n, y)? as i64;
                let axis = a_int(n, "axis", -1);
                let y2 = if axis < 0 || axis + ry == rx {
                    y.to_string()
                } else {
                    // y's dimensions go to axis..axis+ry: append the
                    // dimensions after them (leading ones broadcast as is).
                    let trailing: Vec<i64> = (ry..rx - axis).collect();
                    self.cx.unsqueeze(y, &trailing)
                };
                let s = self.cx.op("Shape", &[x], vec![]);
                self.cx.op_to("Expand", name, &[&y2, &s], out, vec![]);
                Ok(())
            }
            "BatchMatmul" => {
                let (a, b) = (input(0)?, input(1)?);
                let mut t = |v: &str, yes: bool| -> Result<String> {
                    if !yes {
                        return Ok(v.to_string());
                    }
                    let r = self.rank(n, v)?;
                    let mut perm: Vec<i64> = (0..r as i64).collect();
                    perm.swap(r - 2, r - 1);
                    Ok(self
                        .cx
                        .op("Transpose", &[v], vec![attr::ints("perm", &perm)]))
                };
                let a2 = t(a, a_bool(n, "transpose_a"))?;
                let b2 = t(b, a_bool(n, "transpose_b"))?;
                self.cx.op_to("MatMul", name, &[&a2, &b2], out, vec![]);
                Ok(())
            }
            "Split" => {
                let axis = a_int(n, "axis", 0);
                let parts: Vec<String> = n.outputs.iter().map(|o| self.cx.b.fresh(o)).collect();
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                self.cx.split_equal(input(0)?, axis, parts.len(), &refs);
                for (p, o) in parts.iter().zip(&n.outputs) {
                    let a = self.cx.ints(&[axis]);
                    self.cx.op_to("Squeeze", "", &[p, &a], o, vec![]);
                }
                Ok(())
            }
            "Stack" => {
                let axis = a_int(n, "axis", 0);
                let parts: Vec<String> =
                    ins.iter().map(|i| self.cx.unsqueeze(i, &[axis])).collect();
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                self.cx
                    .op_to("Concat", name, &refs, out, vec![attr::int("axis", axis)]);
                Ok(())
            }
            "BinarySigmoid" | "BinaryTanh" => {
                let z = self.cx.scalar(0.0);
                let gt = self.cx.op("Greater", &[input(0)?, &z], vec![]);
                if op == "BinarySigmoid" {
                    self.cx.op_to(
                        "Cast",
                        name,
                        &[&gt],
                        out,
                        vec![attr::int("to", DataType::Float as i64)],
                    );
                } else {
                    let (one, minus) = (self.cx.scalar(1.0), self.cx.scalar(-1.0));
                    self.cx
                        .op_to("Where", name, &[&gt, &one, &minus], out, vec![]);
                }
                Ok(())
            }
            "BoolFill" => {
                let (x, mask) = (input(0)?, input(1)?);
                let m = self.cx.cast(mask, DataType::Bool);
                let v = self.cx.scalar(a_float(n, "value", 0.0) as f32);
                self.cx.op_to("Where", name, &[&m, &v, x], out, vec![]);
                Ok(())
            }
            other => Err(Error::Unsupported(format!("{other} has no ONNX lowering"))),
        }
    }

    /// The binarized copy of a weight (`sign`, zero to `quantize_zero_to`),
    /// as a new initializer; `scaled`: each output column times the mean
    /// absolute value of its weights (a binary weight network's alpha).
    fn binarized(&mut self, w: &str, zero_to: f64, scaled: bool) -> Result<String> {
        let t = self
            .doc
            .tensor(w)
            .ok_or_else(|| Error::Unsupported(format!("parameter {w:?} has no data")))?;
        let v = t.to_vec::<f32>()?;
        let dims = t.dims().to_vec();
        let b: Vec<f32> = v
            .iter()
            .map(|&x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    zero_to as f32
                }
            })
            .collect();
        let mut b = b;
        if scaled && dims.len() >= 2 {
            let cols: usize = dims[1..].iter().product();
            let rows = dims[0].max(1);
            for j in 0..cols {
                let mean = (0..rows).map(|i| v[i * cols + j].abs()).sum::<f32>() / rows as f32;
                for i in 0..rows {
                    b[i * cols + j] *= mean;
                }
            }
        }
        let bt = Tensor::from_values(dims, &b)?;
        let name = self.cx.b.fresh(&format!("{w}/binarized"));
        self.cx
            .b
            .initializer(&name, &bt)
            .map_err(crate::formats::onnx::onnx_err)?;
        Ok(name)
    }

    fn affine(&mut self, n: &Node, ins: &[&str], out: &str) -> Result<()> {
        let x = ins[0];
        let w_src = *ins
            .get(1)
            .ok_or_else(|| Error::Invalid("no weight".into()))?;
        // inputs: x, W (, binary W (, alpha)) (, b)
        let zero_to = a_float(n, "quantize_zero_to", 1.0);
        let (w, b) = match n.op.as_str() {
            "BinaryConnectAffine" => (self.binarized(w_src, zero_to, false)?, ins.get(3)),
            "BinaryWeightAffine" => (self.binarized(w_src, zero_to, true)?, ins.get(4)),
            _ => (w_src.to_string(), ins.get(2)),
        };
        let b = b.copied();
        let base = a_int(n, "base_axis", 1);
        // A computed weight of unknown shape is taken as a matrix.
        let wshape: Vec<i64> = self
            .doc
            .tensor(w_src)
            .map(|t| t.dims().iter().map(|&d| d as i64).collect())
            .or_else(|| self.shape(w_src).map(<[i64]>::to_vec))
            .unwrap_or_default();
        // W is (inputs, outputs...): its first dimension is the product of
        // x's dimensions from base_axis on.
        let wshape = if wshape.is_empty() {
            vec![-1, -1]
        } else {
            wshape
        };
        let in_total = wshape[0];
        let out_dims = &wshape[1..];
        let out_total: i64 = out_dims.iter().product();
        if in_total < 0 && out_dims.len() != 1 {
            return Err(Error::Unsupported(format!(
                "the shape of weight {w_src:?} is unknown"
            )));
        }
        let xf = self.cx.op("Flatten", &[x], vec![attr::int("axis", base)]);
        let w2 = if wshape.len() == 2 || out_total < 0 {
            w.clone()
        } else {
            self.cx.reshape(&w, &[in_total, out_total])
        };
        let mut gin = vec![xf.clone(), w2];
        if let Some(b) = b {
            let bshape = self.doc.tensor(b).map(|t| t.dims().len()).unwrap_or(1);
            gin.push(if bshape == 1 {
                b.to_string()
            } else {
                self.cx.reshape(b, &[out_total])
            });
        }
        let refs: Vec<&str> = gin.iter().map(String::as_str).collect();
        if base == 1 && out_dims.len() == 1 {
            self.cx.op_to("Gemm", &n.name, &refs, out, vec![]);
        } else {
            let y = self.cx.op("Gemm", &refs, vec![]);
            let mut shape: Vec<i64> = match self.shape(x) {
                Some(s) if s.len() >= base as usize => s[..base as usize].to_vec(),
                _ => vec![-1],
            };
            if shape.iter().filter(|&&d| d < 0).count() > 1 {
                return Err(Error::Unsupported(
                    "more than one unknown leading dimension".into(),
                ));
            }
            shape.extend_from_slice(out_dims);
            let s = self.cx.ints(&shape);
            self.cx.op_to("Reshape", "", &[&y, &s], out, vec![]);
        }
        Ok(())
    }

    fn convolution(&mut self, n: &Node, ins: &[&str], out: &str) -> Result<()> {
        if a_bool(n, "channel_last") {
            return Err(Error::Unsupported("channel_last is not exported".into()));
        }
        let binary = n.op == "BinaryConnectConvolution";
        let x = ins[0];
        let w_src = *ins
            .get(1)
            .ok_or_else(|| Error::Invalid("no weight".into()))?;
        let b = if binary { ins.get(3) } else { ins.get(2) }.copied();
        let w = if binary {
            self.binarized(w_src, a_float(n, "quantize_zero_to", 1.0), false)?
        } else {
            w_src.to_string()
        };
        let base = a_int(n, "base_axis", 1);
        if base != 1 {
            return Err(Error::Unsupported(format!(
                "base_axis {base} (only 1 is exported)"
            )));
        }
        let wrank = self
            .doc
            .tensor(w_src)
            .map(|t| t.dims().len())
            .or_else(|| self.shape(w_src).map(<[i64]>::len))
            .unwrap_or(4);
        let k = wrank.saturating_sub(2);
        let fill = |v: Vec<i64>, d: i64| if v.is_empty() { vec![d; k] } else { v };
        let pad = fill(a_ints(n, "pad"), 0);
        let mut pads = pad.clone();
        pads.extend(&pad);
        let mut attrs = vec![
            attr::ints("pads", &pads),
            attr::ints("strides", &fill(a_ints(n, "stride"), 1)),
            attr::ints("dilations", &fill(a_ints(n, "dilation"), 1)),
            attr::int("group", a_int(n, "group", 1).max(1)),
        ];
        let onnx_op = if n.op == "Deconvolution" {
            let op = a_ints(n, "output_padding");
            if !op.is_empty() {
                attrs.push(attr::ints("output_padding", &op));
            }
            "ConvTranspose"
        } else {
            "Conv"
        };
        let mut inputs = vec![x, w.as_str()];
        if let Some(b) = b {
            inputs.push(b);
        }
        self.cx.op_to(onnx_op, &n.name, &inputs, out, attrs);
        Ok(())
    }

    /// nnabla's pooling: with `ignore_border` the usual floor rule; without
    /// it a window starts at every stride step before the input ends
    /// (`ceil((W + pad) / stride)` outputs), clipped to the input. Written
    /// as explicit begin/end pads with `ceil_mode` 0; windows clipped at
    /// the end are not counted by averages, as in nnabla.
    fn pooling(&mut self, n: &Node, x: &str, out: &str) -> Result<()> {
        if a_bool(n, "channel_last") {
            return Err(Error::Unsupported("channel_last is not exported".into()));
        }
        let kernel = a_ints(n, "kernel");
        let k = kernel.len();
        let rank = self.rank(n, x)?;
        if rank != k + 2 {
            return Err(Error::Unsupported(format!(
                "a {k}-D kernel over an input of rank {rank} (only N, C, spatial... is exported)"
            )));
        }
        let (stride, pad) = pool_stride_pad(n, &kernel);
        let ib = a_bool(n, "ignore_border");
        let xs = self.dims(x).unwrap_or_default();
        let mut end = pad.clone();
        if !ib {
            for i in 0..k {
                let w = xs.get(2 + i).copied().unwrap_or(-1);
                if w < 0 {
                    return Err(Error::Unsupported(format!(
                        "ignore_border=false pooling needs the spatial size of {x:?}, which is not known"
                    )));
                }
                let o = pool_out(w, kernel[i], stride[i], pad[i], false);
                end[i] = ((o - 1) * stride[i] + kernel[i] - w - pad[i]).max(0);
            }
        }
        let mut pads = pad.clone();
        pads.extend(&end);
        let base = |pads: &[i64]| {
            vec![
                attr::ints("kernel_shape", &kernel),
                attr::ints("strides", &stride),
                attr::ints("pads", pads),
            ]
        };
        let zero_pads = vec![0i64; 2 * k];
        // explicit zero padding of x's spatial axes: [begin..., end...]
        let zero_pad = |cx: &mut Ctx, begin: &[i64], end: &[i64]| -> String {
            let mut p = vec![0i64; 2 * rank];
            for i in 0..k {
                p[2 + i] = begin[i];
                p[rank + 2 + i] = end[i];
            }
            let p = cx.ints(&p);
            cx.op("Pad", &[x, &p], vec![])
        };
        match n.op.as_str() {
            "MaxPooling" => self.cx.op_to("MaxPool", &n.name, &[x], out, base(&pads)),
            "AveragePooling" if a_bool(n, "including_pad") && end != pad => {
                // the pad counts, the region past it does not
                let padded = zero_pad(&mut self.cx, &pad, &pad);
                let extra: Vec<i64> = end.iter().zip(&pad).map(|(e, p)| e - p).collect();
                let mut p2 = vec![0i64; k];
                p2.extend(&extra);
                let mut attrs = base(&p2);
                attrs.push(attr::int("count_include_pad", 0));
                self.cx
                    .op_to("AveragePool", &n.name, &[&padded], out, attrs);
            }
            "AveragePooling" => {
                let mut attrs = base(&pads);
                attrs.push(attr::int(
                    "count_include_pad",
                    i64::from(a_bool(n, "including_pad")),
                ));
                self.cx.op_to("AveragePool", &n.name, &[x], out, attrs);
            }
            _ => {
                // a sum: the mean of the zero-padded window times its size
                let padded = zero_pad(&mut self.cx, &pad, &end);
                let mut attrs = base(&zero_pads);
                attrs.push(attr::int("count_include_pad", 1));
                let avg = self.cx.op("AveragePool", &[&padded], attrs);
                let area = self.cx.scalar(kernel.iter().product::<i64>() as f32);
                self.cx.op_to("Mul", &n.name, &[&avg, &area], out, vec![]);
            }
        }
        Ok(())
    }

    fn batch_norm(&mut self, n: &Node, ins: &[&str], out: &str) -> Result<()> {
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
                None => cx.b.const_f32("c", &[default], &[1]),
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

/// A pooling function's stride (default: the kernel) and pad (default 0).
fn pool_stride_pad(n: &Node, kernel: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let s = a_ints(n, "stride");
    let p = a_ints(n, "pad");
    (
        if s.is_empty() { kernel.to_vec() } else { s },
        if p.is_empty() {
            vec![0; kernel.len()]
        } else {
            p
        },
    )
}

/// nnabla's pooled size of an axis of `w` (`-1`: unknown).
fn pool_out(w: i64, k: i64, s: i64, p: i64, ignore_border: bool) -> i64 {
    if w < 0 || s <= 0 {
        return -1;
    }
    if ignore_border {
        (w + 2 * p - k).div_euclid(s) + 1
    } else {
        (w + p + s - 1).div_euclid(s)
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

#[cfg(test)]
mod tests {
    #[test]
    fn tables_are_disjoint_and_sorted_output() {
        let f = super::supported_functions();
        let mut d = f.clone();
        d.dedup();
        assert_eq!(f, d);
        assert!(super::supported("Affine") && !super::supported("SquaredError"));
    }
}
