//! NNabla text (`.nntxt`, `.prototxt`) and binary (`.protobuf`) protobuf in the CLI.

use std::path::Path;

use anyhow::{Context, Result, bail};
use mlformats::Format;
use mlformats::nnabla::{
    self as nn, NNablaProtoBuf, ParamTensor, decode_binary, decode_binary_borrowed, encode_binary,
    parse_text, print_text, write_parameters_binary, write_parameters_text,
};
use serde_json::{Value, json};
use tensor_core::{Limits, TensorMap};

use super::Source;
use crate::report::{Report, TensorEntry};

fn text_of(src: &Source) -> Result<&str> {
    std::str::from_utf8(src.bytes()).map_err(|e| {
        anyhow::anyhow!(
            "not UTF-8 text at byte {}: a .nntxt/.prototxt file is protobuf text format",
            e.valid_up_to()
        )
    })
}

/// The whole file: the message without parameter data, and the parameters
/// in stored order (binary: borrowed from the map).
pub fn load_whole(src: &Source) -> Result<(NNablaProtoBuf, Vec<ParamTensor<'_>>)> {
    load(src)
}

fn load(src: &Source) -> Result<(NNablaProtoBuf, Vec<ParamTensor<'_>>)> {
    match src.format {
        Format::NnablaNntxt => {
            let mut model = parse_text(text_of(src)?)?;
            let params = nn::parameters(&model)?
                .into_iter()
                .map(ParamTensor::into_static)
                .collect();
            model.parameter.clear();
            Ok((model, params))
        }
        _ => {
            let file = decode_binary_borrowed(src.bytes(), &Limits::default())?;
            Ok((file.model, file.parameters))
        }
    }
}

/// Parameters keyed by name: first position, last value (the contract's rule).
fn dedup<'a>(params: Vec<ParamTensor<'a>>) -> (TensorMap<'a>, Vec<(String, bool)>) {
    let mut map = TensorMap::new();
    let mut grads: Vec<(String, bool)> = Vec::new();
    for p in params {
        match grads.iter_mut().find(|(n, _)| *n == p.name) {
            Some(g) => g.1 = p.need_grad,
            None => grads.push((p.name.clone(), p.need_grad)),
        }
        map.insert(p.name, p.tensor);
    }
    (map, grads)
}

pub fn inspect(src: &Source) -> Result<Report> {
    let (model, params) = load(src)?;
    let name = match src.format {
        Format::NnablaNntxt => "nnabla-nntxt",
        _ => "nnabla-protobuf",
    };
    let mut report = Report::new(name, src.file_size());
    let (map, grads) = dedup(params);
    for ((n, t), (_, need_grad)) in map.iter().zip(&grads) {
        report
            .tensors
            .push(TensorEntry::new(n, t).with("need_grad", json!(need_grad)));
    }
    report.graph = Some(graph_json(&model));
    Ok(report)
}

/// The contract's `graph` for NNabla: networks as stored (loops not expanded).
pub fn graph_json(model: &NNablaProtoBuf) -> Value {
    let networks: Vec<Value> = model
        .network
        .iter()
        .map(|n| {
            let variables: Vec<Value> = n
                .variable
                .iter()
                .map(|v| {
                    json!({
                        "name": v.name,
                        "type": v.r#type,
                        "shape": v.shape.as_ref().map(|s| s.dim.clone()).unwrap_or_default(),
                    })
                })
                .collect();
            let functions: Vec<Value> = n
                .function
                .iter()
                .map(|f| {
                    json!({
                        "name": f.name,
                        "type": f.r#type,
                        "inputs": f.input,
                        "outputs": f.output,
                    })
                })
                .collect();
            json!({
                "name": n.name,
                "batch_size": n.batch_size,
                "variables": variables,
                "functions": functions,
            })
        })
        .collect();
    json!({
        "networks": networks,
        "executors": model.executor.iter().map(|e| &e.name).collect::<Vec<_>>(),
        "optimizers": model.optimizer.iter().map(|e| &e.name).collect::<Vec<_>>(),
        "datasets": model.dataset.iter().map(|e| &e.name).collect::<Vec<_>>(),
        "monitors": model.monitor.iter().map(|e| &e.name).collect::<Vec<_>>(),
    })
}

pub fn tensors(src: &Source) -> Result<TensorMap<'static>> {
    let (_, params) = load(src)?;
    let (map, _) = dedup(params);
    Ok(map
        .into_iter()
        .map(|(n, t)| (n, t.rebase(&src.map)))
        .collect())
}

/// Tensors as a parameters-only file (what `nn.save_parameters` writes),
/// every parameter with `need_grad: true` (nnabla's default for parameters).
pub fn write(format: Format, out: &Path, tensors: &TensorMap<'_>) -> Result<()> {
    let items = || tensors.iter().map(|(n, t)| (n, t, true));
    match format {
        Format::NnablaNntxt => {
            tensor_core::io::write_atomic(out, |w| write_parameters_text(w, items()))?
        }
        Format::NnablaProtobuf => {
            tensor_core::io::write_atomic(out, |w| write_parameters_binary(w, items()))?
        }
        other => bail!("{other} is not an NNabla protobuf format"),
    }
    Ok(())
}

/// The same message written again in its own encoding: text is re-printed
/// Python-style (byte-identical for files nnabla wrote), binary re-encoded.
pub fn reencode(src: &Source, out: &Path) -> Result<()> {
    match src.format {
        Format::NnablaNntxt => {
            let model = parse_text(text_of(src)?)?;
            let text = print_text(&model)?;
            tensor_core::io::write_atomic(out, |w| {
                use std::io::Write;
                w.write_all(text.as_bytes())
                    .map_err(|e| tensor_core::Error::io(out.display().to_string(), e))
            })?;
        }
        _ => {
            let model = decode_binary(src.bytes())?;
            let bytes = encode_binary(&model);
            tensor_core::io::write_atomic(out, |w| {
                use std::io::Write;
                w.write_all(&bytes)
                    .map_err(|e| tensor_core::Error::io(out.display().to_string(), e))
            })
            .context("writing the re-encoded file")?;
        }
    }
    Ok(())
}
