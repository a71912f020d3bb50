//! The common layer of ONNX import: the model's graph read into nodes,
//! constants (initializers and `Constant` nodes, as tensors) and the
//! declared shapes of its inputs, with symbolic dimensions resolved.
//!
//! Every target walks [`OnnxGraph::nodes`] in order; before lowering a node
//! it asks [`crate::import::fold::fold`] whether the node computes a
//! constant (the shape arithmetic exporters emit), and only lowers what is
//! left.

use std::collections::HashMap;

use onnx_format::proto::{AttributeProto, attribute_proto::AttributeType};
use onnx_format::read::{value_dims, value_elem_type};
use tensor_core::{DType, Limits, Tensor};

use super::{ImportError, ImportOptions, LowerError, Unsupported};

/// `TensorProto.DataType` numbers used by the import.
pub mod elem {
    /// FLOAT
    pub const FLOAT: i32 = 1;
    /// UINT8
    pub const UINT8: i32 = 2;
    /// INT32
    pub const INT32: i32 = 6;
    /// INT64
    pub const INT64: i32 = 7;
    /// BOOL
    pub const BOOL: i32 = 9;
    /// DOUBLE
    pub const DOUBLE: i32 = 11;
}

/// A constant value: an initializer, a `Constant` node or a folded result.
#[derive(Debug, Clone)]
pub struct Const {
    /// The ONNX element type (`TensorProto.DataType`).
    pub elem: i32,
    /// The tensor (its dtype is `elem`'s equivalent).
    pub tensor: Tensor<'static>,
}

impl Const {
    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        self.tensor.dims()
    }

    /// The dimensions as `i64`.
    pub fn dims_i64(&self) -> Vec<i64> {
        // (saturating: a hostile size past i64 is refused as too large)
        self.tensor
            .dims()
            .iter()
            .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
            .collect()
    }

    /// Every value as `f64` (exact for integers up to 2^53).
    pub fn values(&self) -> Vec<f64> {
        self.tensor.to_f64_vec().unwrap_or_default()
    }

    /// Every value as `i64` (refuses non-integral values).
    pub fn ints(&self) -> Option<Vec<i64>> {
        if self.elem == elem::INT64 {
            // Exact, including the i64::MIN/MAX ends exporters write for
            // "to the end" slices.
            return self.tensor.view::<i64>().ok().map(|v| v.into_owned());
        }
        self.values()
            .into_iter()
            .map(|v| (v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i64))
            .collect()
    }

    /// A constant of `elem` with `dims` holding `vals` (converted).
    pub fn from_f64(elem: i32, dims: Vec<usize>, vals: &[f64]) -> Option<Const> {
        let t = match elem {
            elem::FLOAT => {
                Tensor::from_values(dims, &vals.iter().map(|&v| v as f32).collect::<Vec<_>>())
            }
            elem::DOUBLE => Tensor::from_values(dims, vals),
            elem::INT64 => {
                Tensor::from_values(dims, &vals.iter().map(|&v| v as i64).collect::<Vec<_>>())
            }
            elem::INT32 => {
                Tensor::from_values(dims, &vals.iter().map(|&v| v as i32).collect::<Vec<_>>())
            }
            2 => Tensor::from_values(dims, &vals.iter().map(|&v| v as u8).collect::<Vec<_>>()),
            3 => Tensor::from_values(dims, &vals.iter().map(|&v| v as i8).collect::<Vec<_>>()),
            4 => Tensor::from_values(dims, &vals.iter().map(|&v| v as u16).collect::<Vec<_>>()),
            5 => Tensor::from_values(dims, &vals.iter().map(|&v| v as i16).collect::<Vec<_>>()),
            elem::BOOL => {
                let b: Vec<u8> = vals.iter().map(|&v| u8::from(v != 0.0)).collect();
                Tensor::new(DType::Bool, dims, b)
            }
            _ => return None,
        };
        Some(Const {
            elem,
            tensor: t.ok()?.into_static(),
        })
    }
}

/// One ONNX node.
#[derive(Debug, Clone)]
pub struct Node {
    /// `op_type`.
    pub op: String,
    /// The domain (`""` for the default `ai.onnx`).
    pub domain: String,
    /// The node's name, or `op#index` when it has none.
    pub name: String,
    /// Input value names (`""` for an omitted optional input).
    pub inputs: Vec<String>,
    /// Output value names.
    pub outputs: Vec<String>,
    /// Attributes.
    pub attrs: Vec<AttributeProto>,
}

impl Node {
    /// The attribute `name`, if present.
    pub fn attr(&self, name: &str) -> Option<&AttributeProto> {
        self.attrs.iter().find(|a| a.name.as_deref() == Some(name))
    }

    /// An integer attribute, or `default`.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        self.attr(name).and_then(|a| a.i).unwrap_or(default)
    }

    /// A float attribute, or `default`.
    pub fn float(&self, name: &str, default: f32) -> f32 {
        self.attr(name).and_then(|a| a.f).unwrap_or(default)
    }

    /// An integer-list attribute, if present.
    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.attr(name).map(|a| a.ints.clone())
    }

    /// A float-list attribute, if present.
    pub fn floats(&self, name: &str) -> Option<Vec<f32>> {
        self.attr(name).map(|a| a.floats.clone())
    }

    /// A string attribute, or `default`.
    pub fn string(&self, name: &str, default: &str) -> String {
        self.attr(name)
            .and_then(|a| a.s.as_ref())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .unwrap_or_else(|| default.to_string())
    }

    /// Input `i`, or `None` when absent or empty (an omitted optional input).
    pub fn input(&self, i: usize) -> Option<&str> {
        self.inputs
            .get(i)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    /// Whether output `i` exists and is used (named).
    pub fn has_output(&self, i: usize) -> bool {
        self.outputs.get(i).is_some_and(|s| !s.is_empty())
    }
}

/// A graph input: its name, element type and dimensions (`-1` for the
/// symbolic batch dimension, the only one left symbolic).
#[derive(Debug, Clone)]
pub struct Input {
    /// The value name.
    pub name: String,
    /// The ONNX element type.
    pub elem: i32,
    /// The dimensions.
    pub dims: Vec<i64>,
}

/// An ONNX graph ready for lowering.
#[derive(Debug, Clone)]
pub struct OnnxGraph {
    /// The opset the nodes are lowered at: the model's default-domain
    /// opset, or 7 for a model of opsets 1 to 6 (whose nodes are
    /// rewritten to their opset-7 meaning as they are lowered).
    pub opset: i64,
    /// The model's own default-domain opset when it is older than 7.
    pub legacy_opset: Option<i64>,
    /// Graph inputs that are not initializers.
    pub inputs: Vec<Input>,
    /// Graph output names.
    pub outputs: Vec<String>,
    /// The nodes, in the model's (topological) order.
    pub nodes: Vec<Node>,
    /// Initializers and `Constant` nodes by value name.
    pub consts: HashMap<String, Const>,
    /// The declared element type of every value the model declares one for.
    pub elems: HashMap<String, i32>,
}

/// The lowest and highest default-domain opsets the import accepts: 1 to
/// the newest the conformance suite (onnx 1.23) covers. Opsets 1 to 6 are
/// read as their opset-7 meaning (`legacy`).
pub const OPSETS: (i64, i64) = (1, 28);

/// The opset the lowering tables start at: older models are rewritten to
/// it node by node.
pub const LOWERED_FROM: i64 = 7;

/// Reads `model` into an [`OnnxGraph`]: checks the opset, resolves the
/// inputs' symbolic dimensions (a symbolic first dimension becomes `-1`,
/// any other needs `opts.input_shapes`), and reads initializers and
/// `Constant` nodes as constants.
pub fn load(model: &onnx_format::Model, opts: &ImportOptions) -> Result<OnnxGraph, ImportError> {
    // IR versions 1 and 2 import no opsets: their operators are opset 1's
    let opset = model.opset().unwrap_or(1);
    if opset < OPSETS.0 || opset > OPSETS.1 {
        return Err(ImportError::Unsupported(Unsupported::Opset {
            opset,
            min: OPSETS.0,
            max: OPSETS.1,
        }));
    }
    let g = model.graph_proto();
    let mut consts = HashMap::new();
    for (name, t) in model.initializers()? {
        let elem = g
            .initializer
            .iter()
            .find(|i| i.name.as_deref() == Some(name.as_str()))
            .and_then(|i| i.data_type)
            .unwrap_or(elem::FLOAT);
        consts.insert(name, Const { elem, tensor: t });
    }
    let mut elems = HashMap::new();
    for v in g.input.iter().chain(&g.output).chain(&g.value_info) {
        if let (Some(n), Some(e)) = (&v.name, value_elem_type(v)) {
            elems.insert(n.clone(), e);
        }
    }
    for (n, c) in &consts {
        elems.insert(n.clone(), c.elem);
        check_const(n, c)?;
    }
    for (name, dims) in &opts.input_shapes {
        if !g
            .input
            .iter()
            .any(|v| v.name.as_deref() == Some(name.as_str()))
        {
            return Err(ImportError::Invalid(format!(
                "--input-shape names {name:?}, which is not an input of the model"
            )));
        }
        if dims.iter().any(|&d| d < 0) {
            return Err(ImportError::Invalid(format!(
                "--input-shape {name}: dimensions must not be negative"
            )));
        }
    }
    let mut inputs = Vec::new();
    for v in &g.input {
        let name = v.name.clone().unwrap_or_default();
        if consts.contains_key(&name) {
            continue;
        }
        let elem = value_elem_type(v).unwrap_or(elem::FLOAT);
        let declared = value_dims(v).ok_or_else(|| {
            ImportError::Invalid(format!("input {name:?} declares no tensor shape"))
        })?;
        let dims = match opts.input_shapes.iter().find(|(n, _)| *n == name) {
            Some((_, given)) => {
                if given.len() != declared.len()
                    || given.iter().zip(&declared).any(|(&a, &b)| b >= 0 && a != b)
                {
                    return Err(ImportError::Invalid(format!(
                        "--input-shape {name}={} does not fit the declared shape {}",
                        dims_text(given),
                        dims_text(&declared)
                    )));
                }
                given.clone()
            }
            None => {
                if let Some(i) = declared.iter().skip(1).position(|&d| d < 0) {
                    return Err(ImportError::SymbolicShape(format!(
                        "input {name:?} has the symbolic dimension {} at axis {} (shape {}); \
                         fix it with --input-shape {name}=... (ConvertOptions::input_shapes, \
                         Python input_shape=)",
                        symbol(v, i + 1),
                        i + 1,
                        dims_text(&declared)
                    )));
                }
                declared
            }
        };
        // (shape arithmetic in the lowerings multiplies dims freely; a
        // zero counts as 1, as products of the other dims are taken too)
        let count = dims
            .iter()
            .filter(|&&d| d >= 0)
            .try_fold(1i64, |n, &d| n.checked_mul(d.max(1)))
            .filter(|&n| n <= MAX_INPUT_ELEMENTS);
        if count.is_none() {
            return Err(ImportError::Invalid(format!(
                "input {name:?} declares the shape {}: more than 2^48 elements",
                dims_text(&dims)
            )));
        }
        inputs.push(Input { name, elem, dims });
    }
    fix_input_values(&opts.input_values, &mut inputs, &mut consts)?;
    let mut nodes = Vec::with_capacity(g.node.len());
    for (i, n) in g.node.iter().enumerate() {
        let op = n.op_type.clone().unwrap_or_default();
        let domain = n.domain.clone().unwrap_or_default();
        let name = n
            .name
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("{op}#{i}"));
        // every lowering writes its first output: a node without one
        // computes nothing a graph could read (the recurrent layers, whose
        // sequence output is optional, write whichever outputs are named)
        let recurrent = matches!(op.as_str(), "RNN" | "LSTM" | "GRU");
        if (recurrent && n.output.iter().all(String::is_empty))
            || (!recurrent && n.output.first().is_none_or(String::is_empty))
        {
            return Err(ImportError::Invalid(format!(
                "node {name:?} ({op}) has no first output"
            )));
        }
        nodes.push(Node {
            op,
            domain,
            name,
            inputs: n.input.clone(),
            outputs: n.output.clone(),
            attrs: n.attribute.clone(),
        });
    }
    // calls of the model's own functions become the functions' nodes
    let mut taken: std::collections::HashSet<String> = consts.keys().cloned().collect();
    taken.extend(g.input.iter().filter_map(|v| v.name.clone()));
    taken.extend(nodes.iter().flat_map(|n| n.outputs.iter().cloned()));
    let nodes = super::functions::expand(nodes, &model.proto.functions, &mut taken)?;
    Ok(OnnxGraph {
        opset: opset.max(LOWERED_FROM),
        legacy_opset: (opset < LOWERED_FROM).then_some(opset),
        inputs,
        outputs: g.output.iter().filter_map(|v| v.name.clone()).collect(),
        nodes,
        consts,
        elems,
    })
}

/// Refuses constant `c` with more than 2^48 elements, a zero dimension
/// counted as 1 (an empty constant holds no values, but the lowerings
/// multiply its other dims).
fn check_const(name: &str, c: &Const) -> Result<(), ImportError> {
    let count = c
        .dims()
        .iter()
        .try_fold(1u64, |p, &d| p.checked_mul(d.max(1) as u64))
        .filter(|&p| p <= MAX_INPUT_ELEMENTS as u64);
    if count.is_none() {
        return Err(ImportError::Invalid(format!(
            "constant {name:?} of shape {:?}: more than 2^48 elements",
            c.dims()
        )));
    }
    Ok(())
}

/// The most elements an input may declare (a shape no machine holds is
/// a hostile file's, and products of its dims would overflow).
const MAX_INPUT_ELEMENTS: i64 = 1 << 48;

/// Turns the inputs `values` names into constants (removed from
/// `inputs`): the values fill the input's shape (one symbolic dimension is
/// inferred from their count) in its element type.
fn fix_input_values(
    values: &[(String, Vec<f64>)],
    inputs: &mut Vec<Input>,
    consts: &mut HashMap<String, Const>,
) -> Result<(), ImportError> {
    for (name, vals) in values {
        let Some(k) = inputs.iter().position(|i| &i.name == name) else {
            return Err(ImportError::Invalid(format!(
                "--input-value names {name:?}, which is not an input of the model"
            )));
        };
        let input = &inputs[k];
        let known = input
            .dims
            .iter()
            .filter(|&&d| d >= 0)
            .try_fold(1usize, |p, &d| p.checked_mul(usize::try_from(d).ok()?));
        let unknown = input.dims.iter().filter(|&&d| d < 0).count();
        let dims: Option<Vec<usize>> = match (known, unknown) {
            (Some(n), 0) if n == vals.len() => {
                Some(input.dims.iter().map(|&d| d as usize).collect())
            }
            (Some(n), 1) if n > 0 && vals.len().is_multiple_of(n) => Some(
                input
                    .dims
                    .iter()
                    .map(|&d| if d < 0 { vals.len() / n } else { d as usize })
                    .collect(),
            ),
            _ => None,
        };
        let Some(dims) = dims else {
            return Err(ImportError::Invalid(format!(
                "--input-value {name}: {} value(s) do not fill its shape {}",
                vals.len(),
                dims_text(&input.dims)
            )));
        };
        let fits = |v: f64| match input.elem {
            elem::FLOAT | elem::DOUBLE => true,
            elem::INT64 => v.fract() == 0.0 && v.abs() <= 9.0e15,
            elem::INT32 => v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX),
            elem::BOOL => v == 0.0 || v == 1.0,
            _ => false,
        };
        let c = vals
            .iter()
            .all(|&v| fits(v))
            .then(|| Const::from_f64(input.elem, dims, vals))
            .flatten()
            .ok_or_else(|| {
                ImportError::Invalid(format!(
                    "--input-value {name}: the values are not all {} (the input's element type)",
                    onnx_format::dtype::onnx_name(input.elem)
                ))
            })?;
        consts.insert(name.clone(), c);
        inputs.remove(k);
    }
    Ok(())
}

/// The name of the symbolic dimension `axis` of `v` (or `?`).
fn symbol(v: &onnx_format::ValueInfoProto, axis: usize) -> String {
    use onnx_format::proto::{tensor_shape_proto::dimension::Value, type_proto};
    let Some(type_proto::Value::TensorType(t)) = v.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return "?".into();
    };
    match t
        .shape
        .as_ref()
        .and_then(|s| s.dim.get(axis))
        .and_then(|d| d.value.as_ref())
    {
        Some(Value::DimParam(p)) => format!("{p:?}"),
        _ => "?".into(),
    }
}

/// `[1, 3, -1]` as `1,3,?`.
pub fn dims_text(d: &[i64]) -> String {
    d.iter()
        .map(|&v| {
            if v < 0 {
                "?".to_string()
            } else {
                v.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The tensor of a `Constant` node (opset 9 to 21 forms), if it has one.
pub fn constant_node(node: &Node) -> Result<Option<Const>, LowerError> {
    let limits = Limits::default();
    for a in &node.attrs {
        let name = a.name.as_deref().unwrap_or("");
        let c = match name {
            "value" => {
                let Some(t) = &a.t else { continue };
                let tensor = onnx_format::tensor_from_proto(t, None, &limits).map_err(|e| {
                    LowerError::ConstantTensor {
                        error: e.to_string(),
                    }
                })?;
                Const {
                    elem: t.data_type.unwrap_or(elem::FLOAT),
                    tensor,
                }
            }
            "value_float" => Const::from_f64(elem::FLOAT, vec![], &[f64::from(a.f.unwrap_or(0.0))])
                .ok_or(LowerError::ConstantValue {
                    attr: "value_float",
                })?,
            "value_floats" => {
                let v: Vec<f64> = a.floats.iter().map(|&f| f64::from(f)).collect();
                Const::from_f64(elem::FLOAT, vec![v.len()], &v).ok_or(
                    LowerError::ConstantValue {
                        attr: "value_floats",
                    },
                )?
            }
            "value_int" => Const::from_f64(elem::INT64, vec![], &[a.i.unwrap_or(0) as f64])
                .ok_or(LowerError::ConstantValue { attr: "value_int" })?,
            "value_ints" => {
                let v: Vec<f64> = a.ints.iter().map(|&f| f as f64).collect();
                Const::from_f64(elem::INT64, vec![v.len()], &v)
                    .ok_or(LowerError::ConstantValue { attr: "value_ints" })?
            }
            "sparse_value" | "value_string" | "value_strings" => {
                return Err(LowerError::ConstantKind {
                    attr: name.to_string(),
                });
            }
            _ => continue,
        };
        return Ok(Some(c));
    }
    Ok(None)
}

/// Whether an attribute holds a graph (control flow the import refuses).
pub fn has_subgraph(node: &Node) -> bool {
    node.attrs.iter().any(|a| {
        a.g.is_some()
            || !a.graphs.is_empty()
            || a.r#type == Some(AttributeType::Graph as i32)
            || a.r#type == Some(AttributeType::Graphs as i32)
    })
}
