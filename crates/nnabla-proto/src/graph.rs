//! NNabla networks as the shared typed graph ([`tensor_core::graph`]).
//!
//! Each network becomes a [`Graph`]: its variables are the values (type
//! `Parameter` marks a weight, stored as the parameter of the same name),
//! its functions the nodes in stored order, and each function's parameter
//! message (`affine_param`, `convolution_param`, ...) its attributes, every
//! field of the message in schema order with its default where the file
//! leaves it unset, as nnabla reads it. `Shape` fields become lists of
//! integers. Networks are as stored: loops are not expanded (see
//! [`crate::model::expand_all_loops`] for that step).

use prost::Message as _;
use prost_reflect::{DynamicMessage, MessageDescriptor, ReflectMessage, Value};
use tensor_core::graph::{Attribute, Executor, Graph, ModelGraph, Node, ValueInfo, ValueKind};

use crate::{NNablaProtoBuf, Network, descriptor_pool};

/// Every network of `model` as a typed graph, with its executors,
/// optimizers, datasets and monitors.
pub fn model_graph(model: &NNablaProtoBuf) -> ModelGraph {
    let mut m = ModelGraph::default();
    m.graphs = model.network.iter().map(network_graph).collect();
    m.executors = model
        .executor
        .iter()
        .map(|e| {
            let mut x = Executor::new(&e.name, &e.network_name);
            x.data = e
                .data_variable
                .iter()
                .map(|v| v.variable_name.clone())
                .collect();
            x.outputs = e
                .output_variable
                .iter()
                .map(|v| v.variable_name.clone())
                .collect();
            x
        })
        .collect();
    m.optimizers = model.optimizer.iter().map(|o| o.name.clone()).collect();
    m.datasets = model.dataset.iter().map(|d| d.name.clone()).collect();
    m.monitors = model.monitor.iter().map(|d| d.name.clone()).collect();
    m
}

/// One network as a typed graph: variables as values, functions as nodes
/// with their parameter message as attributes.
pub fn network_graph(net: &Network) -> Graph {
    let mut g = Graph::new(&net.name);
    g.batch_size = Some(net.batch_size);
    for v in &net.variable {
        let kind = ValueKind::from_nnabla(&v.r#type);
        let mut info = ValueInfo::new(&v.name, kind.clone())
            .with_shape(v.shape.as_ref().map(|s| s.dim.clone()).unwrap_or_default());
        if kind == ValueKind::Weight {
            info = info.with_tensor(&v.name);
        }
        g.values.push(info);
    }
    let function_descriptor = descriptor_pool()
        .ok()
        .and_then(|p| p.get_message_by_name("Function"));
    for f in &net.function {
        let mut node = Node::new(&f.r#type, &f.name, &f.input, &f.output);
        if let Some(desc) = &function_descriptor {
            node.attributes = function_attributes(desc, &f.encode_to_vec());
        }
        if !f.repeat_id.is_empty() {
            node.attributes
                .push(("repeat_id".into(), Attribute::Strings(f.repeat_id.clone())));
        }
        // RepeatStart/RepeatEnd's and Recurrent*'s own fields (numbered
        // below the parameter oneof)
        if let Some(p) = &f.repeat_param {
            node.attributes.push((
                "repeat_param".into(),
                Attribute::Message(vec![
                    ("repeat_id".into(), Attribute::String(p.repeat_id.clone())),
                    ("times".into(), Attribute::Int(p.times)),
                ]),
            ));
        }
        if let Some(p) = &f.recurrent_param {
            node.attributes.push((
                "recurrent_param".into(),
                Attribute::Message(vec![
                    ("repeat_id".into(), Attribute::String(p.repeat_id.clone())),
                    ("length".into(), Attribute::Int(p.length)),
                    ("axis".into(), Attribute::Int(p.axis)),
                ]),
            ));
        }
        g.nodes.push(node);
    }
    g.infer_inputs_outputs();
    g
}

/// The fields of the function's parameter oneof (the one message field
/// numbered from 1000 up that is set), every field with its value or default.
fn function_attributes(desc: &MessageDescriptor, encoded: &[u8]) -> Vec<(String, Attribute)> {
    let Ok(msg) = DynamicMessage::decode(desc.clone(), encoded) else {
        return Vec::new();
    };
    for field in desc.fields().filter(|f| f.number() >= 1000) {
        if msg.has_field(&field)
            && let Value::Message(param) = &*msg.get_field(&field)
        {
            return message_attributes(param);
        }
    }
    Vec::new()
}

fn message_attributes(msg: &DynamicMessage) -> Vec<(String, Attribute)> {
    msg.descriptor()
        .fields()
        .map(|f| (f.name().to_string(), to_attribute(&msg.get_field(&f))))
        .collect()
}

fn to_attribute(v: &Value) -> Attribute {
    match v {
        Value::Bool(b) => Attribute::Bool(*b),
        Value::I32(x) | Value::EnumNumber(x) => Attribute::Int(i64::from(*x)),
        Value::I64(x) => Attribute::Int(*x),
        Value::U32(x) => Attribute::Int(i64::from(*x)),
        Value::U64(x) => Attribute::Int(i64::try_from(*x).unwrap_or(i64::MAX)),
        Value::F32(x) => Attribute::Float(f64::from(*x)),
        Value::F64(x) => Attribute::Float(*x),
        Value::String(s) => Attribute::String(s.clone()),
        Value::Bytes(b) => Attribute::String(String::from_utf8_lossy(b).into_owned()),
        Value::Message(m) if m.descriptor().name() == "Shape" => Attribute::Ints(shape_dims(m)),
        Value::Message(m) => Attribute::Message(message_attributes(m)),
        Value::List(items) => list_attribute(items),
        Value::Map(_) => Attribute::Messages(Vec::new()),
    }
}

fn shape_dims(m: &DynamicMessage) -> Vec<i64> {
    m.get_field_by_name("dim")
        .and_then(|v| {
            v.as_list()
                .map(|l| l.iter().filter_map(|d| d.as_i64()).collect::<Vec<i64>>())
        })
        .unwrap_or_default()
}

fn list_attribute(items: &[Value]) -> Attribute {
    let all = |f: fn(&Value) -> bool| items.iter().all(f);
    if all(|v| {
        matches!(
            v,
            Value::I32(_) | Value::I64(_) | Value::U32(_) | Value::U64(_)
        )
    }) {
        return Attribute::Ints(
            items
                .iter()
                .filter_map(|v| to_attribute(v).as_int())
                .collect(),
        );
    }
    if all(|v| matches!(v, Value::F32(_) | Value::F64(_))) {
        return Attribute::Floats(
            items
                .iter()
                .filter_map(|v| to_attribute(v).as_float())
                .collect(),
        );
    }
    if all(|v| matches!(v, Value::Bool(_))) {
        return Attribute::Bools(items.iter().filter_map(Value::as_bool).collect());
    }
    if all(|v| matches!(v, Value::String(_))) {
        return Attribute::Strings(
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        );
    }
    Attribute::Messages(
        items
            .iter()
            .filter_map(|v| v.as_message().map(message_attributes))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_with_parameters_as_attributes() {
        let text = r#"
network {
  name: "net"
  batch_size: 1
  variable { name: "x" type: "Buffer" shape { dim: -1 dim: 3 dim: 8 dim: 8 } }
  variable { name: "c/W" type: "Parameter" shape { dim: 4 dim: 3 dim: 3 dim: 3 } }
  variable { name: "y" type: "Buffer" shape { dim: -1 dim: 4 dim: 8 dim: 8 } }
  function {
    name: "c" type: "Convolution" input: "x" input: "c/W" output: "y"
    convolution_param { base_axis: 1 pad { dim: 1 dim: 1 } stride { dim: 1 dim: 1 } group: 1 }
  }
}
executor { name: "runtime" network_name: "net" data_variable { variable_name: "x" } output_variable { variable_name: "y" } }
"#;
        let model = crate::text::parse(text).unwrap();
        let m = model_graph(&model);
        let g = m.inference_graph().unwrap();
        assert_eq!(g.inputs, ["x"]);
        assert_eq!(g.outputs, ["y"]);
        assert_eq!(g.weights().collect::<Vec<_>>(), ["c/W"]);
        assert_eq!(g.value("x").unwrap().shape, Some(vec![-1, 3, 8, 8]));
        let n = &g.nodes[0];
        assert_eq!((n.op.as_str(), n.name.as_str()), ("Convolution", "c"));
        assert_eq!(n.attribute("pad"), Some(&Attribute::Ints(vec![1, 1])));
        assert_eq!(n.attribute("group"), Some(&Attribute::Int(1)));
        // unset fields read as their defaults, as nnabla reads them
        assert_eq!(n.attribute("dilation"), Some(&Attribute::Ints(vec![])));
        assert_eq!(n.attribute("channel_last"), Some(&Attribute::Bool(false)));
        assert_eq!(m.executors[0].data, ["x"]);
        assert_eq!(m.executors[0].outputs, ["y"]);
    }
}
