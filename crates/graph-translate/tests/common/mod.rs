//! Helpers shared by the export refusal tests: a TenniS module built,
//! written and read back as a `.tsm` is, exported to ONNX; the export's
//! full error message.

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
    let m = Module::parse(&bytes).unwrap();
    let weights: BTreeMap<String, Tensor<'static>> = m
        .unique_named_tensors()
        .into_iter()
        .map(|(n, t)| (n, t.clone().into_static()))
        .collect();
    let opset = ExportOptions::new().checked_opset().unwrap();
    tennis::export(&m.to_graph(), &weights, opset).map_err(|e| full_message(&e))
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
