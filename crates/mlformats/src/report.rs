//! The `inspect --json` document (`docs/INSPECT_JSON.md`): schema 2, and
//! schema 1 kept exactly as it was for callers that ask for it.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tensor_core::graph::{Graph, ModelGraph, Node};
use tensor_core::{DType, SumKind, Tensor};

use crate::codec::StoredTensor;
use crate::format::GraphKind;
use crate::{Document, Format};

/// The schema version [`Document::inspect_json`] writes.
pub const SCHEMA: u32 = 2;

/// The schema-2 document for `doc`: every tensor under its one name (with
/// `stored_name` where the file stores another), hashed and summed, with
/// exact `bytes` and `elements`; the total `parameters`; the typed graph.
pub(crate) fn inspect_json_v2(doc: &Document) -> Value {
    let summary = doc.summary();
    let mut m = Map::new();
    m.insert("schema".into(), json!(2));
    m.insert("format".into(), json!(doc.format().name()));
    m.insert("kind".into(), json!(doc.kind()));
    m.insert("file_size".into(), json!(doc.file_size()));
    m.insert("parameters".into(), json!(summary.parameters));
    m.insert("tensor_bytes".into(), json!(summary.total_bytes));
    let tensors: Vec<Value> = doc
        .stored()
        .map(|s| tensor_json(s, doc.tensor(&s.name), 2))
        .collect();
    m.insert("tensors".into(), Value::Array(tensors));
    m.insert(
        "graph".into(),
        doc.graph().map_or(Value::Null, typed_graph_json),
    );
    for (k, v) in doc.metadata() {
        m.insert(k.clone(), v.clone());
    }
    Value::Object(m)
}

/// Schema 2's `graph`: the typed graph, the same shape for every format.
pub(crate) fn typed_graph_json(m: &ModelGraph) -> Value {
    let graphs: Vec<Value> = m
        .graphs
        .iter()
        .map(|g| {
            let values: Vec<Value> = g
                .values
                .iter()
                .map(|v| {
                    json!({
                        "name": v.name,
                        "kind": v.kind.as_str(),
                        "shape": v.shape,
                        "tensor": v.tensor,
                    })
                })
                .collect();
            let nodes: Vec<Value> = g.nodes.iter().map(node_json).collect();
            json!({
                "name": g.name,
                "batch_size": g.batch_size,
                "inputs": g.inputs,
                "outputs": g.outputs,
                "values": values,
                "nodes": nodes,
            })
        })
        .collect();
    let executors: Vec<Value> = m
        .executors
        .iter()
        .map(|e| {
            json!({
                "name": e.name,
                "network": e.network,
                "inputs": e.data,
                "outputs": e.outputs,
            })
        })
        .collect();
    json!({
        "graphs": graphs,
        "executors": executors,
        "optimizers": m.optimizers,
        "datasets": m.datasets,
        "monitors": m.monitors,
    })
}

/// One entry of `tensors` in schema `schema` (1 or 2): the tensor `s` as
/// stored, `t` its data where the document holds it. Schema 1 names it as
/// stored and has no `bytes` or `elements`.
fn tensor_json(s: &StoredTensor, t: Option<&Tensor<'_>>, schema: u32) -> Value {
    let mut e = Map::new();
    if schema == 1 {
        e.insert("name".into(), json!(s.stored_name));
    } else {
        e.insert("name".into(), json!(s.name));
        if s.stored_name != s.name {
            e.insert("stored_name".into(), json!(s.stored_name));
        }
    }
    e.insert("dtype".into(), json!(t.map(|t| t.dtype().name())));
    e.insert("shape".into(), json!(s.shape));
    if schema != 1 {
        e.insert("bytes".into(), json!(t.map_or(0, |t| t.bytes().len())));
        e.insert("elements".into(), json!(t.map_or(0, |t| t.numel())));
    }
    e.insert("sha256".into(), json!(t.map(|t| sha256_hex(t.bytes()))));
    e.insert("sum".into(), t.map_or(Value::Null, contract_sum));
    for (k, v) in &s.extras {
        e.insert(k.clone(), v.clone());
    }
    Value::Object(e)
}

/// A node of a graph object: `op`, `name`, `inputs`, `outputs` and its
/// attribute names (`attributes`), in both schemas.
pub(crate) fn node_json(n: &Node) -> Value {
    json!({
        "op": n.op,
        "name": n.name,
        "inputs": n.inputs,
        "outputs": n.outputs,
        "attributes": n.attributes.iter().map(|(k, _)| k).collect::<Vec<_>>(),
    })
}

/// The schema-1 document for `doc`, exactly as before schema 2: names as
/// stored, every tensor hashed and summed, the per-format graph objects.
pub(crate) fn inspect_json_v1(doc: &Document) -> Value {
    let mut m = Map::new();
    m.insert("schema".into(), json!(1));
    m.insert("format".into(), json!(doc.format().name()));
    m.insert("kind".into(), json!(doc.kind()));
    m.insert("file_size".into(), json!(doc.file_size()));
    let tensors: Vec<Value> = doc
        .stored()
        .map(|s| tensor_json(s, doc.tensor(&s.name), 1))
        .collect();
    m.insert("tensors".into(), Value::Array(tensors));
    m.insert(
        "graph".into(),
        doc.graph()
            .map_or(Value::Null, |g| graph_json(doc.format(), g)),
    );
    for (k, v) in doc.metadata() {
        m.insert(k.clone(), v.clone());
    }
    Value::Object(m)
}

/// The contract's `graph` object for a format's typed graph.
pub(crate) fn graph_json(format: Format, g: &ModelGraph) -> Value {
    match format.graph_kind() {
        GraphKind::Graph => onnx_graph_json(g),
        GraphKind::Module => g.graphs.first().map_or(Value::Null, tennis_graph_json),
        GraphKind::Network | GraphKind::None => networks_json(g),
    }
}

/// ONNX: the graph as `onnx-format` describes it.
#[cfg(feature = "onnx")]
fn onnx_graph_json(g: &ModelGraph) -> Value {
    crate::formats::onnx::graph_json(g)
}

/// Without the `onnx` feature no ONNX document can be opened.
#[cfg(not(feature = "onnx"))]
fn onnx_graph_json(_: &ModelGraph) -> Value {
    Value::Null
}

/// NNabla: networks of variables and functions, and the training sections.
fn networks_json(g: &ModelGraph) -> Value {
    let networks: Vec<Value> = g
        .graphs
        .iter()
        .map(|n| {
            let variables: Vec<Value> = n
                .values
                .iter()
                .map(|v| {
                    json!({
                        "name": v.name,
                        "type": v.kind.as_str(),
                        "shape": v.shape.clone().unwrap_or_default(),
                    })
                })
                .collect();
            let functions: Vec<Value> = n
                .nodes
                .iter()
                .map(|f| {
                    json!({
                        "name": f.name,
                        "type": f.op,
                        "inputs": f.inputs,
                        "outputs": f.outputs,
                    })
                })
                .collect();
            json!({
                "name": n.name,
                "batch_size": n.batch_size.unwrap_or(0),
                "variables": variables,
                "functions": functions,
            })
        })
        .collect();
    json!({
        "networks": networks,
        "executors": g.executors.iter().map(|e| &e.name).collect::<Vec<_>>(),
        "optimizers": g.optimizers,
        "datasets": g.datasets,
        "monitors": g.monitors,
    })
}

/// TenniS: nodes in file order, inputs and outputs as node indices.
fn tennis_graph_json(g: &Graph) -> Value {
    let producer: std::collections::HashMap<&str, usize> = g
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.outputs.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let index = |names: &[String]| -> Vec<usize> {
        names
            .iter()
            .filter_map(|n| producer.get(n.as_str()).copied())
            .collect()
    };
    let nodes: Vec<Value> = g
        .nodes
        .iter()
        .map(|n| {
            json!({
                "op": n.op,
                "name": n.name,
                "inputs": index(&n.inputs),
                "params": n.attributes.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "inputs": index(&g.inputs), "outputs": index(&g.outputs), "nodes": nodes })
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in d {
        use std::fmt::Write;
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The contract's `sum`: exact for integers and bool, f64 in stored order
/// for floats (`"NaN"`, `"inf"`, `"-inf"` as strings), `null` otherwise.
pub fn contract_sum(t: &Tensor<'_>) -> Value {
    match t.dtype().sum_kind() {
        SumKind::Integer => {
            let b = t.bytes();
            fn sum<const N: usize>(b: &[u8], f: impl Fn([u8; N]) -> i128) -> i128 {
                b.chunks_exact(N)
                    .map(|c| {
                        let mut a = [0u8; N];
                        a.copy_from_slice(c);
                        f(a)
                    })
                    .sum()
            }
            let s: i128 = match t.dtype() {
                DType::Bool | DType::U8 => b.iter().map(|&x| x as i128).sum(),
                DType::I8 => b.iter().map(|&x| x as i8 as i128).sum(),
                DType::I16 => sum::<2>(b, |a| i16::from_le_bytes(a) as i128),
                DType::U16 => sum::<2>(b, |a| u16::from_le_bytes(a) as i128),
                DType::I32 => sum::<4>(b, |a| i32::from_le_bytes(a) as i128),
                DType::U32 => sum::<4>(b, |a| u32::from_le_bytes(a) as i128),
                DType::I64 => sum::<8>(b, |a| i64::from_le_bytes(a) as i128),
                DType::U64 => sum::<8>(b, |a| u64::from_le_bytes(a) as i128),
                _ => return Value::Null,
            };
            if let Ok(v) = i64::try_from(s) {
                json!(v)
            } else if let Ok(v) = u64::try_from(s) {
                json!(v)
            } else {
                json!(s as f64)
            }
        }
        SumKind::Float => {
            let mut acc = 0f64;
            let numeric = tensor_core::stats::for_each_f64_block(t, |blk| {
                for v in blk {
                    acc += v;
                }
            });
            if numeric {
                float_json(acc)
            } else {
                Value::Null
            }
        }
        _ => Value::Null,
    }
}

/// A float as the contract writes it: a number, or `"NaN"`, `"inf"`, `"-inf"`.
pub fn float_json(v: f64) -> Value {
    if v.is_nan() {
        json!("NaN")
    } else if v == f64::INFINITY {
        json!("inf")
    } else if v == f64::NEG_INFINITY {
        json!("-inf")
    } else {
        json!(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_follow_the_contract() {
        let t = Tensor::from_values([3], &[1i32, -5, 7]).unwrap();
        assert_eq!(contract_sum(&t), json!(3));
        let t = Tensor::from_values([2], &[u64::MAX, 1]).unwrap();
        assert_eq!(contract_sum(&t), json!(18446744073709551616f64));
        let t = Tensor::from_values([2], &[1.5f32, f32::NAN]).unwrap();
        assert_eq!(contract_sum(&t), json!("NaN"));
        let t = Tensor::from_values([2], &[1.0f64, f64::NEG_INFINITY]).unwrap();
        assert_eq!(contract_sum(&t), json!("-inf"));
        let t = Tensor::new(DType::Bool, [3], vec![1u8, 1, 0]).unwrap();
        assert_eq!(contract_sum(&t), json!(2));
        let t = Tensor::new(DType::Char8, [2], b"hi".to_vec()).unwrap();
        assert_eq!(contract_sum(&t), Value::Null);
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
