//! Reading `.onnx` models: the checked decode, tensors from `TensorProto`s,
//! and the graph as `tensor-core`'s typed graph.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use prost::Message as _;
use prost::bytes::Bytes as ProtoBytes;
use tensor_core::graph::{Attribute, Graph, Node, ValueInfo, ValueKind};
use tensor_core::{Bytes, DType, Limits, MappedFile, Tensor};

use crate::dtype::{from_onnx, onnx_name};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::tensor_proto::{DataLocation, DataType};
use crate::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto, ValueInfoProto,
    type_proto,
};
use crate::{Error, Result};

/// How a model is read: its limits (`tensor-core`'s options of a reader
/// whose one option is its limits).
pub use tensor_core::ReadOptions;

/// A decoded model whose tensor data (`raw_data`) shares the bytes it was
/// read from.
#[derive(Debug, Clone)]
pub struct Model {
    /// The whole message.
    pub proto: ModelProto,
    map: Arc<MappedFile>,
    limits: Limits,
}

/// Lets prost's `Bytes` share a memory map.
struct Shared(Arc<MappedFile>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl Model {
    /// Reads a model from bytes (copied once; tensors share the copy).
    pub fn parse(bytes: &[u8]) -> Result<Model> {
        Self::parse_with(bytes, &ReadOptions::default())
    }

    /// [`Model::parse`] with options.
    pub fn parse_with(bytes: &[u8], opts: &ReadOptions) -> Result<Model> {
        Self::from_map(&MappedFile::from_vec(bytes.to_vec()), opts)
    }

    /// Maps the file at `path` and reads it.
    pub fn open(path: impl AsRef<Path>) -> Result<Model> {
        Self::from_map(&MappedFile::open(path)?, &ReadOptions::default())
    }

    /// Reads a model from a memory map: `raw_data` is not copied, and the
    /// tensors of [`Model::initializers`] share the map.
    ///
    /// Checks, before anything is built: the wire format, the number of
    /// embedded messages against `limits.max_tensors` and their nesting
    /// (see [`crate::scan`]). After decoding: an `ir_version` and a graph
    /// are present, names fit `limits.max_name_len`, and no initializer
    /// keeps its data in an external file.
    pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<Model> {
        let limits = opts.limits;
        crate::scan::check(map.as_bytes(), &limits)?;
        let buf = ProtoBytes::from_owner(Shared(Arc::clone(map)));
        let proto = ModelProto::decode(buf)?;
        if proto.ir_version.unwrap_or(0) <= 0 {
            return Err(Error::Invalid(
                "not an ONNX model: no ir_version (field 1 of ModelProto)".into(),
            ));
        }
        let Some(graph) = &proto.graph else {
            return Err(Error::Invalid(
                "not an ONNX model: no graph (field 7 of ModelProto)".into(),
            ));
        };
        check_graph(graph, &limits)?;
        Ok(Model {
            proto,
            map: Arc::clone(map),
            limits,
        })
    }

    /// The main graph.
    pub fn graph_proto(&self) -> &GraphProto {
        // Reading refuses a model without a graph; `proto` is public, so a
        // caller may have removed it since: an empty graph then, not a panic.
        static EMPTY: std::sync::OnceLock<GraphProto> = std::sync::OnceLock::new();
        self.proto
            .graph
            .as_ref()
            .unwrap_or_else(|| EMPTY.get_or_init(GraphProto::default))
    }

    /// The version of the default (`ai.onnx`) operator set the model imports.
    pub fn opset(&self) -> Option<i64> {
        self.proto
            .opset_import
            .iter()
            .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
            .and_then(|o| o.version)
    }

    /// Every initializer of the main graph as `(name, tensor)` in stored
    /// order; `raw_data` is shared with the map, typed fields are converted.
    pub fn initializers(&self) -> Result<Vec<(String, Tensor<'static>)>> {
        self.graph_proto()
            .initializer
            .iter()
            .map(|t| {
                let name = t.name.clone().unwrap_or_default();
                let tensor = tensor_from_proto(t, Some(&self.map), &self.limits)?;
                Ok((name, tensor))
            })
            .collect()
    }

    /// Every tensor a `Constant` node of the main graph holds (see
    /// [`constant_value`]) as `(output name, tensor)`, in node order:
    /// the weights of models that keep them in nodes rather than in
    /// initializers (paddle2onnx's exports). `raw_data` is shared with the
    /// map. Constants of a type `tensor-core` has no equivalent of
    /// (strings, sub-byte types), and those without an output, are left
    /// out; any other error is the one [`tensor_from_proto`] gives.
    pub fn constants(&self) -> Result<Vec<(String, Tensor<'static>)>> {
        let mut out = Vec::new();
        for n in &self.graph_proto().node {
            let Some(v) = constant_value(n) else { continue };
            let name = n.output.first().cloned().unwrap_or_default();
            match v.tensor(Some(&self.map), &self.limits) {
                Ok(t) => out.push((name, t)),
                Err(Error::UnsupportedDataType { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The main graph as a typed graph (see [`graph`]).
    pub fn graph(&self) -> Graph {
        graph(self.graph_proto())
    }
}

/// The value of a `Constant` node that holds a tensor of numbers.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum ConstantValue<'a> {
    /// `value`: a `TensorProto`.
    Tensor(&'a TensorProto),
    /// `value_float`: an f32 scalar.
    Float(f32),
    /// `value_floats`: an f32 vector.
    Floats(&'a [f32]),
    /// `value_int`: an i64 scalar.
    Int(i64),
    /// `value_ints`: an i64 vector.
    Ints(&'a [i64]),
}

impl ConstantValue<'_> {
    /// The value as a tensor (a `TensorProto` as [`tensor_from_proto`]
    /// reads it; the others as an f32 or i64 scalar or vector).
    pub fn tensor(
        &self,
        map: Option<&Arc<MappedFile>>,
        limits: &Limits,
    ) -> Result<Tensor<'static>> {
        let t = match *self {
            ConstantValue::Tensor(t) => return tensor_from_proto(t, map, limits),
            ConstantValue::Float(v) => Tensor::from_values(Vec::<usize>::new(), &[v]),
            ConstantValue::Int(v) => Tensor::from_values(Vec::<usize>::new(), &[v]),
            ConstantValue::Floats(v) => {
                limits.check_alloc("tensor data", (v.len() as u64).saturating_mul(4))?;
                Tensor::from_values([v.len()], v)
            }
            ConstantValue::Ints(v) => {
                limits.check_alloc("tensor data", (v.len() as u64).saturating_mul(8))?;
                Tensor::from_values([v.len()], v)
            }
        };
        Ok(t?)
    }
}

/// The tensor a `Constant` node of the default domain holds: its first
/// attribute named `value`, `value_float`, `value_floats`, `value_int` or
/// `value_ints` (with its index among the node's attributes). `None` for
/// any other node, and for a `Constant` holding strings or a sparse tensor.
pub fn constant_attribute(n: &NodeProto) -> Option<(usize, ConstantValue<'_>)> {
    if n.op_type.as_deref() != Some("Constant")
        || !matches!(n.domain.as_deref(), None | Some("") | Some("ai.onnx"))
    {
        return None;
    }
    n.attribute.iter().enumerate().find_map(|(i, a)| {
        let v = match a.name.as_deref()? {
            "value" => ConstantValue::Tensor(a.t.as_ref()?),
            "value_float" => ConstantValue::Float(a.f?),
            "value_floats" => ConstantValue::Floats(&a.floats),
            "value_int" => ConstantValue::Int(a.i?),
            "value_ints" => ConstantValue::Ints(&a.ints),
            _ => return None,
        };
        Some((i, v))
    })
}

/// [`constant_attribute`]'s value alone.
pub fn constant_value(n: &NodeProto) -> Option<ConstantValue<'_>> {
    constant_attribute(n).map(|(_, v)| v)
}

fn check_graph(g: &GraphProto, limits: &Limits) -> Result<()> {
    let name_ok =
        |n: &Option<String>| limits.check_name_len(n.as_deref().map_or(0, str::len) as u64);
    for t in &g.initializer {
        name_ok(&t.name)?;
        external(t)?;
        limits.check_rank(t.dims.len() as u64)?;
    }
    for n in &g.node {
        name_ok(&n.name)?;
        for s in n.input.iter().chain(&n.output) {
            limits.check_name_len(s.len() as u64)?;
        }
    }
    Ok(())
}

fn external(t: &TensorProto) -> Result<()> {
    if t.data_location == Some(DataLocation::External as i32) {
        let location = t
            .external_data
            .iter()
            .find(|e| e.key.as_deref() == Some("location"))
            .and_then(|e| e.value.clone())
            .unwrap_or_default();
        return Err(Error::ExternalData {
            tensor: t.name.clone().unwrap_or_default(),
            location,
        });
    }
    Ok(())
}

/// A `TensorProto` as a tensor: `raw_data` shared with `map` when it lies
/// inside it (else copied), typed fields (`float_data`, `int32_data`, ...)
/// converted. Checks dimensions, the element count and byte length against
/// the shape, `limits` (rank, allocation), and refuses external data and
/// types `tensor-core` has no equivalent of (strings, sub-byte types).
pub fn tensor_from_proto(
    t: &TensorProto,
    map: Option<&Arc<MappedFile>>,
    limits: &Limits,
) -> Result<Tensor<'static>> {
    let name = t.name.clone().unwrap_or_default();
    let (dtype, dims, byte_len) = tensor_layout(t, limits)?;
    let numel = dims.iter().product::<usize>();
    if let Some(raw) = &t.raw_data {
        check_raw_len(&name, dtype, &dims, byte_len, raw.len() as u64)?;
        let data = match map.and_then(|m| Bytes::shared(m, raw)) {
            Some(shared) => shared,
            None => {
                limits.check_alloc("tensor data", byte_len as u64)?;
                let mut owned =
                    tensor_core::try_with_capacity(&format!("tensor {name:?}"), raw.len())?;
                owned.extend_from_slice(raw);
                Bytes::Owned(owned)
            }
        };
        return Ok(Tensor::new(dtype, dims, data)?);
    }
    typed_fields(t, &name, dtype, dims, numel, byte_len, limits)
}

/// The element type, dimensions and byte length of the tensor `t`
/// describes, checked as [`tensor_from_proto`] checks them (no external
/// data, rank under `limits`, a type `tensor-core` has, no negative
/// dimension, no overflow), without its data.
pub fn tensor_layout(t: &TensorProto, limits: &Limits) -> Result<(DType, Vec<usize>, usize)> {
    let name = t.name.clone().unwrap_or_default();
    external(t)?;
    limits.check_rank(t.dims.len() as u64)?;
    let data_type = t.data_type.unwrap_or(0);
    let dtype = from_onnx(data_type).ok_or_else(|| Error::UnsupportedDataType {
        tensor: name.clone(),
        data_type,
        name: onnx_name(data_type),
    })?;
    let mut dims =
        tensor_core::try_with_capacity(&format!("the shape of tensor {name:?}"), t.dims.len())?;
    for &d in &t.dims {
        let d = usize::try_from(d)
            .map_err(|_| Error::Invalid(format!("tensor {name:?} has a negative dimension {d}")))?;
        dims.push(d);
    }
    let byte_len = tensor_core::checked_byte_len(&dims, dtype).ok_or_else(|| {
        Error::Invalid(format!(
            "tensor {name:?}: shape {dims:?} of {dtype} overflows"
        ))
    })?;
    Ok((dtype, dims, byte_len))
}

/// Checks that `raw_len` bytes of `raw_data` are the `byte_len` that the
/// tensor `name` of `dtype` and `dims` needs (see [`tensor_layout`]).
pub fn check_raw_len(
    name: &str,
    dtype: DType,
    dims: &[usize],
    byte_len: usize,
    raw_len: u64,
) -> Result<()> {
    if raw_len != byte_len as u64 {
        return Err(Error::Invalid(format!(
            "tensor {name:?}: raw_data is {raw_len} bytes but shape {dims:?} of {dtype} needs {byte_len}"
        )));
    }
    Ok(())
}

/// A tensor kept in the typed fields (`float_data`, `int32_data`, ...).
fn typed_fields(
    t: &TensorProto,
    name: &str,
    dtype: DType,
    dims: Vec<usize>,
    numel: usize,
    byte_len: usize,
    limits: &Limits,
) -> Result<Tensor<'static>> {
    limits.check_alloc("tensor data", byte_len as u64)?;
    let mismatch = |field: &str, n: usize, want: usize| {
        Error::Invalid(format!(
            "tensor {name:?}: {field} holds {n} values but shape {dims:?} of {dtype} needs {want}"
        ))
    };
    let kind = DataType::try_from(t.data_type.unwrap_or(0)).unwrap_or(DataType::Undefined);
    let complex = matches!(kind, DataType::Complex64 | DataType::Complex128);
    let want = if complex {
        numel.saturating_mul(2)
    } else {
        numel
    };
    // The values the field holds are counted before the buffer is
    // allocated: a shape that claims gigabytes over an empty field is a
    // mismatch, never an allocation.
    let (field, have) = match kind {
        DataType::Float | DataType::Complex64 => ("float_data", t.float_data.len()),
        DataType::Double | DataType::Complex128 => ("double_data", t.double_data.len()),
        DataType::Int64 => ("int64_data", t.int64_data.len()),
        DataType::Uint32 | DataType::Uint64 => ("uint64_data", t.uint64_data.len()),
        // INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16 and
        // the 8-bit floats keep one value (or bit pattern) per int32.
        _ => ("int32_data", t.int32_data.len()),
    };
    if have != want {
        return Err(mismatch(field, have, want));
    }
    let mut out: Vec<u8> = tensor_core::try_with_capacity(&format!("tensor {name:?}"), byte_len)?;
    match kind {
        DataType::Float | DataType::Complex64 => t
            .float_data
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        DataType::Double | DataType::Complex128 => t
            .double_data
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        DataType::Int64 => t
            .int64_data
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        DataType::Uint32 => t
            .uint64_data
            .iter()
            .for_each(|&v| out.extend_from_slice(&(v as u32).to_le_bytes())),
        DataType::Uint64 => t
            .uint64_data
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        _ => {
            let size = dtype.size();
            for &v in &t.int32_data {
                out.extend_from_slice(&v.to_le_bytes()[..size]);
            }
        }
    }
    Ok(Tensor::new(dtype, dims, out)?)
}

/// The declared dimensions of a value: `dim_value`, or `-1` for a symbolic
/// or unknown dimension. `None` when the value declares no tensor shape.
pub fn value_dims(v: &ValueInfoProto) -> Option<Vec<i64>> {
    let TypeProto {
        value: Some(type_proto::Value::TensorType(t)),
        ..
    } = v.r#type.as_ref()?
    else {
        return None;
    };
    let shape = t.shape.as_ref()?;
    Some(
        shape
            .dim
            .iter()
            .map(|d| match d.value {
                Some(crate::proto::tensor_shape_proto::dimension::Value::DimValue(v)) => v,
                _ => -1,
            })
            .collect(),
    )
}

/// The names of a value's symbolic dimensions (`dim_param`), one entry per
/// dimension of [`value_dims`], `None` where a dimension has no name.
pub fn value_dim_names(v: &ValueInfoProto) -> Option<Vec<Option<String>>> {
    let TypeProto {
        value: Some(type_proto::Value::TensorType(t)),
        ..
    } = v.r#type.as_ref()?
    else {
        return None;
    };
    Some(
        t.shape
            .as_ref()?
            .dim
            .iter()
            .map(|d| match &d.value {
                Some(crate::proto::tensor_shape_proto::dimension::Value::DimParam(p))
                    if !p.is_empty() =>
                {
                    Some(p.clone())
                }
                _ => None,
            })
            .collect(),
    )
}

/// The element type of a value (`TensorProto.DataType` number), if declared.
pub fn value_elem_type(v: &ValueInfoProto) -> Option<i32> {
    match v.r#type.as_ref()?.value.as_ref()? {
        type_proto::Value::TensorType(t) => t.elem_type,
        _ => None,
    }
}

/// A graph as `tensor-core`'s typed graph: inputs (those that are not
/// initializers), outputs, values (inputs, initializers as weights named by
/// their ONNX names, `value_info`, outputs; each name once), and the nodes
/// with their op type, name, inputs, outputs and attributes. Attribute
/// tensors of up to 64 numbers are inlined as lists; larger ones, graphs and
/// types are summarised as messages. A node of a domain other than the
/// default gets a `domain` attribute.
pub fn graph(g: &GraphProto) -> Graph {
    let mut out = Graph::new(g.name.clone().unwrap_or_default());
    let inits: HashSet<&str> = g
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    let mut seen = HashSet::new();
    let mut push = |out: &mut Graph, v: ValueInfo| {
        if seen.insert(v.name.clone()) {
            out.values.push(v);
        }
    };
    for v in &g.input {
        let name = v.name.clone().unwrap_or_default();
        if inits.contains(name.as_str()) {
            continue;
        }
        out.inputs.push(name.clone());
        let mut info = ValueInfo::new(name, ValueKind::Buffer);
        if let Some(d) = value_dims(v) {
            info = info.with_shape(d);
        }
        if let Some(n) = value_dim_names(v) {
            info = info.with_dim_names(n);
        }
        push(&mut out, info);
    }
    for t in &g.initializer {
        let name = t.name.clone().unwrap_or_default();
        let info = ValueInfo::new(name.clone(), ValueKind::Weight)
            .with_shape(t.dims.clone())
            .with_tensor(name);
        push(&mut out, info);
    }
    for v in g.value_info.iter().chain(&g.output) {
        let mut info = ValueInfo::new(v.name.clone().unwrap_or_default(), ValueKind::Buffer);
        if let Some(d) = value_dims(v) {
            info = info.with_shape(d);
        }
        if let Some(n) = value_dim_names(v) {
            info = info.with_dim_names(n);
        }
        push(&mut out, info);
    }
    out.outputs = g
        .output
        .iter()
        .map(|v| v.name.clone().unwrap_or_default())
        .collect();
    for n in &g.node {
        let mut node = Node::new(
            n.op_type.clone().unwrap_or_default(),
            n.name.clone().unwrap_or_default(),
            n.input.iter().cloned(),
            n.output.iter().cloned(),
        );
        if let Some(d) = n
            .domain
            .as_deref()
            .filter(|d| !d.is_empty() && *d != "ai.onnx")
        {
            node.attributes
                .push(("domain".into(), Attribute::String(d.to_string())));
        }
        for a in &n.attribute {
            node.attributes
                .push((a.name.clone().unwrap_or_default(), attribute(a)));
        }
        out.nodes.push(node);
    }
    out
}

/// An attribute's value.
pub fn attribute(a: &AttributeProto) -> Attribute {
    let ty = a
        .r#type
        .and_then(|t| AttributeType::try_from(t).ok())
        .unwrap_or(AttributeType::Undefined);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match ty {
        AttributeType::Float => Attribute::Float(f64::from(a.f.unwrap_or(0.0))),
        AttributeType::Int => Attribute::Int(a.i.unwrap_or(0)),
        AttributeType::String => Attribute::String(text(a.s.as_deref().unwrap_or_default())),
        AttributeType::Floats => {
            Attribute::Floats(a.floats.iter().map(|&f| f64::from(f)).collect())
        }
        AttributeType::Ints => Attribute::Ints(a.ints.clone()),
        AttributeType::Strings => Attribute::Strings(a.strings.iter().map(|s| text(s)).collect()),
        AttributeType::Tensor => {
            a.t.as_ref()
                .map_or(Attribute::Messages(Vec::new()), tensor_attribute)
        }
        AttributeType::Graph => Attribute::Message(graph_summary(a.g.as_ref())),
        AttributeType::Graphs => {
            Attribute::Messages(a.graphs.iter().map(|g| graph_summary(Some(g))).collect())
        }
        AttributeType::Tensors => Attribute::Messages(
            a.tensors
                .iter()
                .map(|t| vec![("tensor".into(), tensor_attribute(t))])
                .collect(),
        ),
        _ => Attribute::Message(vec![(
            "type".into(),
            Attribute::String(ty.as_str_name().to_string()),
        )]),
    }
}

/// Nodes of a subgraph listed in its summary; the count says how many more.
const BODY_LIST_MAX: usize = 1000;

/// A subgraph attribute (an `If`, `Loop` or `Scan` body): its name, its
/// node count, its first nodes as `op name` (the viewer lists them), and
/// the graph itself for drawing it: `inputs` and `outputs` (value names)
/// and `graph_nodes`, its first nodes each as `op`, `name`, `inputs`,
/// `outputs` and `attributes` (a node's own bodies among them, in turn).
fn graph_summary(g: Option<&GraphProto>) -> Vec<(String, Attribute)> {
    let body = g.map_or_else(Vec::new, |g| {
        g.node
            .iter()
            .take(BODY_LIST_MAX)
            .map(|n| {
                let op = n.op_type.as_deref().unwrap_or_default();
                match n.name.as_deref().filter(|s| !s.is_empty()) {
                    Some(name) => format!("{op} {name}"),
                    None => op.to_string(),
                }
            })
            .collect()
    });
    vec![
        (
            "name".into(),
            Attribute::String(g.and_then(|g| g.name.clone()).unwrap_or_default()),
        ),
        (
            "nodes".into(),
            Attribute::Int(g.map_or(0, |g| g.node.len() as i64)),
        ),
        ("body".into(), Attribute::Strings(body)),
        (
            "inputs".into(),
            Attribute::Strings(g.map_or_else(Vec::new, |g| value_names(&g.input))),
        ),
        (
            "outputs".into(),
            Attribute::Strings(g.map_or_else(Vec::new, |g| value_names(&g.output))),
        ),
        (
            "graph_nodes".into(),
            Attribute::Messages(g.map_or_else(Vec::new, |g| {
                g.node.iter().take(BODY_LIST_MAX).map(body_node).collect()
            })),
        ),
    ]
}

fn value_names(values: &[crate::proto::ValueInfoProto]) -> Vec<String> {
    values
        .iter()
        .map(|v| v.name.clone().unwrap_or_default())
        .collect()
}

/// A node of a subgraph, for [`graph_summary`]'s `graph_nodes`.
fn body_node(n: &crate::proto::NodeProto) -> Vec<(String, Attribute)> {
    vec![
        (
            "op".into(),
            Attribute::String(n.op_type.clone().unwrap_or_default()),
        ),
        (
            "name".into(),
            Attribute::String(n.name.clone().unwrap_or_default()),
        ),
        ("inputs".into(), Attribute::Strings(n.input.clone())),
        ("outputs".into(), Attribute::Strings(n.output.clone())),
        (
            "attributes".into(),
            Attribute::Message(
                n.attribute
                    .iter()
                    .map(|a| (a.name.clone().unwrap_or_default(), attribute(a)))
                    .collect(),
            ),
        ),
    ]
}

/// Up to 64 numbers inline (as `Ints` or `Floats`, a scalar as `Int` or
/// `Float`); otherwise the tensor's dims and data type.
fn tensor_attribute(t: &TensorProto) -> Attribute {
    const INLINE: usize = 64;
    let small = t
        .dims
        .iter()
        .try_fold(1i64, |a, &d| a.checked_mul(d))
        .is_some_and(|n| (0..=INLINE as i64).contains(&n));
    if small
        && let Ok(tensor) = tensor_from_proto(t, None, &Limits::default())
        && let Some(values) = tensor.to_f64_vec()
    {
        let scalar = t.dims.is_empty();
        return if tensor.dtype().is_float() {
            match (scalar, values.as_slice()) {
                (true, [v]) => Attribute::Float(*v),
                _ => Attribute::Floats(values),
            }
        } else {
            let ints: Vec<i64> = values.iter().map(|&v| v as i64).collect();
            match (scalar, ints.as_slice()) {
                (true, [v]) => Attribute::Int(*v),
                _ => Attribute::Ints(ints),
            }
        };
    }
    Attribute::Message(vec![
        ("dims".into(), Attribute::Ints(t.dims.clone())),
        (
            "data_type".into(),
            Attribute::String(onnx_name(t.data_type.unwrap_or(0)).to_string()),
        ),
    ])
}

/// The dtype of a tensor type number, for messages.
pub fn dtype_name(data_type: i32) -> String {
    from_onnx(data_type).map_or_else(
        || onnx_name(data_type).to_string(),
        |d: DType| d.to_string(),
    )
}
