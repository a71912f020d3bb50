//! TenniS modules (`.tsm`) in the CLI, through the `bubble-module` crate.
//!
//! `inspect` reports every tensor of the non-reserved node parameters
//! (`<node #name>/<key>`, `[i]` per field of a multi-field value) and the
//! graph; `tensors` gives the same tensors sharing the memory map; `write`
//! makes a module of `<const>` nodes, one per tensor, all listed as module
//! outputs (so the C++ library loads it); `reencode` writes the module again
//! with nodes and parameters in their stored order.

use std::path::Path;

use anyhow::{Result, bail};
use mlformats::tennis::{Module, ModuleBuilder, NodeOrder, ParamOrder, WriteOptions};
use serde_json::{Value, json};
use tensor_core::{MemoryOrder, TensorMap};

use super::Source;
use crate::report::{Report, TensorEntry};

pub fn inspect(src: &Source) -> Result<Report> {
    let module = Module::parse(src.bytes())?;
    let mut report = Report::new("tennis-module", src.file_size());
    for (name, t) in module.named_tensors() {
        report.tensors.push(TensorEntry::new(name, t));
    }
    report.graph = Some(graph_json(&module));
    Ok(report)
}

fn graph_json(m: &Module<'_>) -> Value {
    let nodes: Vec<Value> = m
        .nodes()
        .iter()
        .map(|n| {
            json!({
                "op": n.op(),
                "name": n.name(),
                "inputs": n.inputs(),
                "params": n.params().iter().map(|p| p.key().into_owned()).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "inputs": m.inputs(), "outputs": m.outputs(), "nodes": nodes })
}

pub fn tensors(src: &Source) -> Result<TensorMap<'static>> {
    let module = Module::parse(src.bytes())?;
    let mut map = TensorMap::new();
    for (name, t) in module.named_tensors() {
        if map.contains(&name) {
            bail!(
                "tensor name {name:?} occurs twice (node names repeat); converting would lose one"
            );
        }
        map.insert(name, t.clone().rebase(&src.map));
    }
    Ok(map)
}

pub fn write(out: &Path, tensors: &TensorMap<'_>) -> Result<()> {
    let mut b = ModuleBuilder::new();
    for (name, t) in tensors.iter() {
        let t = match t.order() {
            MemoryOrder::RowMajor => t.clone(),
            MemoryOrder::ColumnMajor => t.to_row_major()?.into_static(),
        };
        let id = b.constant(name, t)?;
        b.output(id)?;
    }
    let module = b.build()?;
    module.save(out, WriteOptions::default())?;
    Ok(())
}

pub fn reencode(src: &Source, out: &Path) -> Result<()> {
    let module = Module::parse(src.bytes())?;
    let opts = WriteOptions::default()
        .with_nodes(NodeOrder::AsGiven)
        .with_params(ParamOrder::AsGiven);
    module.save(out, opts)?;
    Ok(())
}
