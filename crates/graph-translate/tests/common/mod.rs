//! Helpers shared by the graph-translate tests: a TenniS module built,
//! written and read back as a `.tsm` is, exported to ONNX (and run in
//! tract); the export's full error message; a model of one ONNX node.

// Each test crate uses some of these.
#![allow(dead_code)]

#[cfg(feature = "tennis")]
use std::collections::BTreeMap;

#[cfg(feature = "tennis")]
use bubble_module::{Module, ModuleBuilder, NodeId, Packed, WriteOptions};
#[cfg(feature = "tennis")]
use graph_translate::export::{ExportOptions, ExportSummary, tennis};
#[cfg(feature = "tennis")]
use onnx_format::ModelProto;
#[cfg(feature = "tennis")]
use onnx_format::builder::{Dim, GraphBuilder};
#[cfg(feature = "tennis")]
use onnx_format::proto::AttributeProto;
#[cfg(feature = "tennis")]
use onnx_format::proto::tensor_proto::DataType;
#[cfg(feature = "tennis")]
use tensor_core::{DType, Tensor};

#[cfg(feature = "tennis")]
/// An int32 scalar parameter.
pub fn int(v: i32) -> Packed<'static> {
    Tensor::from_values([], &[v]).unwrap().into()
}

/// The message of `e` and of every error under it, joined by `: `.
pub fn full_message(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}

#[cfg(feature = "tennis")]
/// Writes the module `b` builds, reads it back and exports it (its
/// constants the weights, the default opset); the full error message
/// when the export refuses it.
pub fn export_module(b: ModuleBuilder<'_>) -> Result<(ModelProto, ExportSummary), String> {
    let bytes = b
        .build()
        .unwrap()
        .to_bytes(&WriteOptions::default())
        .unwrap();
    export_read(&Module::parse(&bytes).unwrap())
}

#[cfg(feature = "tennis")]
/// Exports the module `m` (its constants the weights, the default
/// opset); the full error message when the export refuses it.
pub fn export_read(m: &Module<'_>) -> Result<(ModelProto, ExportSummary), String> {
    let weights: BTreeMap<String, Tensor<'static>> = m
        .unique_named_tensors()
        .into_iter()
        .map(|(n, t)| (n, t.clone().into_static()))
        .collect();
    let opset = ExportOptions::new().checked_opset().unwrap();
    tennis::export(&m.to_graph(), &weights, opset).map_err(|e| full_message(&e))
}

#[cfg(feature = "tennis")]
/// The module `m` exported to ONNX and run in tract on the f32 input `x`
/// of `dims`: its first output.
pub fn run_in_tract(m: &Module<'_>, dims: &[usize], x: &[f32]) -> Vec<f32> {
    use tract_onnx::prelude::*;
    let (onnx, _) = export_read(m).unwrap();
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &onnx).unwrap();
    let plan = tract_onnx::onnx()
        .model_for_read(&mut &bytes[..])
        .unwrap()
        .with_input_fact(0, f32::fact(dims).into())
        .unwrap()
        .into_optimized()
        .unwrap()
        .into_runnable()
        .unwrap();
    let feed = tract_onnx::prelude::Tensor::from_shape(dims, x).unwrap();
    let got = plan.run(tvec!(feed.into())).unwrap();
    got[0].as_slice::<f32>().unwrap().to_vec()
}

#[cfg(feature = "tennis")]
/// A model of one node `op` on an f32 input `x` of `dims` (and the inputs
/// `more` adds), writing `y` of `out`, at `opset`, written and parsed.
pub fn one_node_model(
    op: &str,
    dims: &[i64],
    out: &[i64],
    opset: i64,
    more: impl FnOnce(&mut GraphBuilder) -> Vec<String>,
    attrs: Vec<AttributeProto>,
) -> onnx_format::Model {
    let mut b = GraphBuilder::new("m");
    let d: Vec<Dim> = dims.iter().map(|&v| Dim::Value(v)).collect();
    b.input("x", DataType::Float, &d);
    let mut ins = vec!["x".to_string()];
    ins.extend(more(&mut b));
    let ins: Vec<&str> = ins.iter().map(String::as_str).collect();
    b.node(op, "", &ins, &["y"], attrs);
    let o: Vec<Dim> = out.iter().map(|&v| Dim::Value(v)).collect();
    b.output("y", DataType::Float, &o);
    let mut opts = onnx_format::WriteOptions::default();
    opts.opset = opset;
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&opts)).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

#[cfg(feature = "tennis")]
/// Exports a module built by `f` (given the builder and a float input `x0`
/// of shape `dims`) and returns the export's full error message; panics
/// when the export succeeds.
pub fn export_refusal(
    dims: &[i32],
    f: impl FnOnce(&mut ModuleBuilder, NodeId) -> NodeId,
) -> String {
    let mut b = ModuleBuilder::new();
    let x = b.input_with("x0", DType::F32, dims).unwrap();
    let y = f(&mut b, x);
    b.output(y).unwrap();
    match export_module(b) {
        Ok(_) => panic!("the module was exported"),
        Err(e) => e,
    }
}

/// The ONNX model `bytes` run in tract-onnx on the `f32` inputs `ins`
/// (by input name): its outputs.
pub fn run_onnx(
    bytes: &[u8],
    ins: &npz::Arrays,
) -> Result<tract_onnx::prelude::TVec<tract_onnx::prelude::TValue>, String> {
    use tract_onnx::prelude::*;
    let mut m = tract_onnx::onnx()
        .model_for_read(&mut &bytes[..])
        .map_err(|e| format!("tract cannot read the export: {e:?}"))?;
    let names: Vec<String> = m
        .input_outlets()
        .map_err(|e| e.to_string())?
        .iter()
        .map(|o| m.node(o.node).name.clone())
        .collect();
    let mut feeds = TVec::new();
    for (k, n) in names.iter().enumerate() {
        let (dims, data) = ins
            .get(n)
            .ok_or_else(|| format!("no input {n:?} in the .in.npz"))?;
        m = m
            .with_input_fact(k, f32::fact(dims).into())
            .map_err(|e| e.to_string())?;
        let feed = Tensor::from_shape(dims, data).map_err(|e| e.to_string())?;
        feeds.push(feed.into());
    }
    let plan = m
        .into_optimized()
        .and_then(|m| m.into_runnable())
        .map_err(|e| format!("tract cannot prepare the export: {e:?}"))?;
    plan.run(feeds)
        .map_err(|e| format!("tract cannot run the export: {e:?}"))
}

/// `.npz` files of test cases, read and written.
pub mod npz;
