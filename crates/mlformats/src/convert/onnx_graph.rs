//! A graph exported to ONNX (or an ONNX model's own) with the conversion's selection, renames and
//! casts applied consistently: the model's initializers are renamed where
//! every node uses them, cast with a `Cast` node that gives the graph the
//! type it computes in, and a selection that would take away a tensor the
//! graph uses is refused. The exporter's own helper constants (named
//! [`RESERVED_PREFIX`]`...`, or any initializer the source file does not
//! hold) are left as they are.

use std::collections::{HashMap, HashSet};

use onnx_format::proto::{GraphProto, NodeProto};
use tensor_core::Limits;

use super::{ConvertOptions, ConvertSummary, ExportedGraph, cast_float};
use crate::random_access::{FileIndex, ReadAt};
use crate::{Document, Error, Format, Result, WholeModelNeed};

/// The name prefix of tensors an exporter adds to a model (helper constants
/// such as reshape shapes, cast outputs): `diff` lists them apart from the
/// model's own tensors.
pub const RESERVED_PREFIX: &str = "mlformats/";

/// True when `name` is one of the exporter's helper tensors (not a tensor
/// of the source file, `index`).
fn is_helper(index: &FileIndex, name: &str) -> bool {
    name.starts_with(RESERVED_PREFIX) || index.position(name).is_none()
}

/// Every name a node or the graph's interface uses, in this graph.
fn used_names(g: &GraphProto) -> HashSet<String> {
    g.node
        .iter()
        .flat_map(|n| n.input.iter().chain(n.output.iter()).cloned())
        .chain(g.input.iter().filter_map(|v| v.name.clone()))
        .chain(g.output.iter().filter_map(|v| v.name.clone()))
        .chain(g.initializer.iter().filter_map(|t| t.name.clone()))
        .collect()
}

/// Replaces every use of a value named in `map` as a node input (and graph
/// output when `outputs`), in `g` and its subgraphs.
fn replace_uses(g: &mut GraphProto, map: &HashMap<String, String>, outputs: bool) {
    for n in &mut g.node {
        for i in &mut n.input {
            if let Some(to) = map.get(i.as_str()) {
                *i = to.clone();
            }
        }
        for a in &mut n.attribute {
            if let Some(sub) = a.g.as_mut() {
                replace_uses(sub, map, true);
            }
            for sub in &mut a.graphs {
                replace_uses(sub, map, true);
            }
        }
    }
    if outputs {
        for v in g.output.iter_mut().chain(g.value_info.iter_mut()) {
            if let Some(to) = v.name.as_ref().and_then(|n| map.get(n)) {
                v.name = Some(to.clone());
            }
        }
    }
}

/// The export options of a conversion.
fn export_options(opts: &ConvertOptions) -> crate::export::ExportOptions {
    let mut eo = crate::export::ExportOptions::new();
    eo.network = opts.network.clone();
    eo.opset = opts.opset;
    eo
}

/// `e`, with a hint to `--params` for an NNabla network of a file of
/// `format` that holds no tensor (`empty`): its parameters ship in a file
/// of their own.
fn params_hint(e: Error, format: Format, empty: bool) -> Error {
    let message = crate::chain_message(&e);
    // only where the export stopped for want of parameter data
    if empty && format.is_nnabla() && message.contains("has no data") {
        Error::Invalid(format!(
            "{message}; this {format} holds no parameters: give its parameter file with --params \
             (ConvertOptions::params, Python params=)"
        ))
    } else {
        e
    }
}

/// The graph of the file `index` describes (read through `reader`)
/// exported to ONNX, its weights deferred
/// ([`crate::export::export_index_model`]): [`written`] reads each one.
pub(super) fn exported_graph<R: ReadAt + ?Sized>(
    index: &FileIndex,
    reader: &R,
    opts: &ConvertOptions,
) -> Result<Exported> {
    let (model, s) = crate::export::export_index_model(index, reader, &export_options(opts), true)
        .map_err(|e| params_hint(e, index.format(), index.tensors().is_empty()))?;
    Ok(Exported {
        model,
        network: s.network,
        opset: s.opset,
        from: index.format(),
    })
}

/// An ONNX model's own graph, of a model with nodes opened by random access
/// (`index`, read through `reader`): its own graph from the model without
/// its initializers' `raw_data` ([`crate::random_access::FileIndex::onnx_model_without_raw`]),
/// each initializer that had one deferred (its data the index's tensor of
/// the same position, read and cast when written), those stored in typed
/// fields held as the whole path holds them. The bytes and the summary are
/// [`own_whole`]'s for the same file. What needs the whole model instead
/// (`Ok(Err(..))`): a model the index read whole, an initializer that holds
/// `raw_data` and says where its data is as well.
///
/// Memory: the model without its `raw_data` (graph, typed-field
/// initializers, subgraphs, sparse initializers), and one initializer at a
/// time as read (and cast).
pub(super) fn own_by_slices<R: ReadAt + ?Sized>(
    index: &FileIndex,
    reader: &R,
) -> Result<std::result::Result<Exported, WholeModelNeed>> {
    use onnx_format::proto::StringStringEntryProto;
    let Some((m, had_raw)) = index.onnx_model_without_raw(reader)? else {
        return Ok(Err(WholeModelNeed::ExportsGraph { from: Format::Onnx }));
    };
    let opset = m.opset().unwrap_or(0);
    let name = m.graph_proto().name.clone().unwrap_or_default();
    let mut model = m.proto;
    if let Some(g) = model.graph.as_mut() {
        for (i, (t, raw)) in g.initializer.iter_mut().zip(had_raw).enumerate() {
            if !raw {
                continue;
            }
            if !t.external_data.is_empty() || t.data_location.is_some() {
                // (the writer of a deferred tensor writes neither)
                return Ok(Err(WholeModelNeed::LocatedInitializer {
                    name: t.name.clone().unwrap_or_default(),
                }));
            }
            t.external_data.push(StringStringEntryProto {
                key: Some(graph_translate::export::DEFERRED_SOURCE.into()),
                value: Some(index.tensors()[i].name().to_string()),
            });
        }
    }
    Ok(Ok(Exported {
        model,
        network: name,
        opset,
        from: Format::Onnx,
    }))
}

/// An ONNX model's own graph, read from the whole file (`doc`).
pub(super) fn own_whole(doc: &Document) -> Result<Exported> {
    let m = onnx_format::Model::from_map(&doc.source()?.map, &onnx_format::ReadOptions::default())
        .map_err(crate::formats::onnx::onnx_err)?;
    Ok(Exported {
        opset: m.opset().unwrap_or(0),
        network: m.graph_proto().name.clone().unwrap_or_default(),
        model: m.proto,
        from: Format::Onnx,
    })
}

/// `exported` (of the file `index` describes, read through `reader`)
/// with `opts`' selection, renames and cast ([`adjust`]), written to `out`,
/// each deferred initializer read from the file when the writer gets to it.
#[allow(clippy::too_many_arguments)]
pub(super) fn written<R: ReadAt + ?Sized>(
    index: &FileIndex,
    reader: &R,
    exported: Exported,
    opts: &ConvertOptions,
    filter: &crate::NameFilter,
    renames: &[(regex::Regex, String)],
    progress: &dyn Fn(u64),
    out: &mut dyn std::io::Write,
) -> Result<ConvertSummary> {
    let (model, summary) = adjust(exported, index, opts, filter, renames)?;
    crate::export::write_deferred(index, reader, model, progress, out)?;
    Ok(summary)
}

/// A model exported from a file of format `from`, before the conversion's
/// selection, renames and cast.
pub(super) struct Exported {
    model: onnx_format::ModelProto,
    network: String,
    opset: i64,
    from: Format,
}

/// The exported model with `opts`' selection, renames and cast applied to
/// the model's initializers (those the source file, `index`, holds),
/// and the conversion's summary. A deferred initializer
/// (`graph_translate::export::deferred_source`) is cast by changing its
/// type: its writer casts the data.
fn adjust(
    exported: Exported,
    index: &FileIndex,
    opts: &ConvertOptions,
    filter: &crate::NameFilter,
    renames: &[(regex::Regex, String)],
) -> Result<(onnx_format::ModelProto, ConvertSummary)> {
    let Exported {
        mut model,
        network,
        opset,
        from: source_format,
    } = exported;
    let graph = model
        .graph
        .as_mut()
        .ok_or_else(|| Error::Internal("the model has no graph".into()))?;
    let model_names: Vec<String> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.clone())
        .filter(|n| !is_helper(index, n))
        .collect();
    check_selection(&model_names, filter)?;
    let rename_map = rename(graph, &model_names, renames)?;
    let cast = match opts.dtype {
        Some(to) => cast_initializers(graph, &model_names, &rename_map, to)?,
        None => Vec::new(),
    };
    let nodes = graph.node.len();
    let tensors = graph.initializer.len();
    let summary = ConvertSummary {
        from: source_format,
        to: Format::Onnx,
        tensors,
        whole_model: true,
        skipped: Vec::new(),
        warnings: Vec::new(),
        cast,
        // (in the order of the model's initializers)
        renamed: model_names
            .iter()
            .filter_map(|n| Some((n.clone(), rename_map.get(n)?.clone())))
            .collect(),
        graph: Some(ExportedGraph {
            network,
            nodes,
            opset,
        }),
    };
    Ok((model, summary))
}

/// Refuses a selection that leaves out any of `model_names`: every
/// initializer left is read by a node, so leaving one out would break the
/// graph.
fn check_selection(model_names: &[String], filter: &crate::NameFilter) -> Result<()> {
    let dropped: Vec<String> = model_names
        .iter()
        .filter(|n| !filter.keeps(n.as_str()))
        .map(|n| format!("{n:?}"))
        .collect();
    if dropped.is_empty() {
        return Ok(());
    }
    Err(Error::OptionDoesNotApply {
        option: "--only/--exclude",
        why: format!(
            "--only/--exclude would leave out {} of the {} tensors the exported graph reads ({}): \
             the ONNX model could not run; add --weights-only to write the selected tensors \
             alone, without the graph",
            dropped.len(),
            model_names.len(),
            dropped.join(", ")
        ),
    })
}

/// Renames the initializers `model_names` of `graph` by `renames`, where
/// every node and the graph's interface use them; checked against every
/// name the graph uses. The map of the names changed (old to new).
fn rename(
    graph: &mut GraphProto,
    model_names: &[String],
    renames: &[(regex::Regex, String)],
) -> Result<HashMap<String, String>> {
    let mut rename_map = HashMap::new();
    for n in model_names {
        let mut new = n.clone();
        for (re, to) in renames {
            new = re.replace_all(&new, to.as_str()).into_owned();
        }
        if new != *n {
            if new.starts_with(RESERVED_PREFIX) {
                return Err(Error::ReservedName {
                    tensor: n.clone(),
                    name: new,
                    prefix: RESERVED_PREFIX,
                });
            }
            rename_map.insert(n.clone(), new);
        }
    }
    if rename_map.is_empty() {
        return Ok(rename_map);
    }
    let used = used_names(graph);
    let mut taken: HashMap<&str, &str> = HashMap::new();
    for n in model_names {
        let new = rename_map.get(n).unwrap_or(n);
        if let Some(first) = taken.insert(new.as_str(), n.as_str()) {
            return Err(Error::RenameCollision {
                first: first.to_string(),
                second: n.clone(),
                name: new.clone(),
            });
        }
    }
    for old in model_names {
        if let Some(new) = rename_map.get(old)
            && used.contains(new)
            && !rename_map.contains_key(new)
        {
            return Err(Error::NameInUse {
                tensor: old.clone(),
                name: new.clone(),
            });
        }
    }
    for t in &mut graph.initializer {
        if let Some(new) = t.name.as_ref().and_then(|n| rename_map.get(n)) {
            t.name = Some(new.clone());
        }
    }
    for v in &mut graph.input {
        if let Some(new) = v.name.as_ref().and_then(|n| rename_map.get(n)) {
            v.name = Some(new.clone());
        }
    }
    replace_uses(graph, &rename_map, true);
    Ok(rename_map)
}

/// Casts the float initializers `model_names` (named in `graph` as
/// `rename_map` renamed them) to `to`: each initializer holds the cast
/// values under its name, and a Cast node gives the graph the type it
/// computes in. (name in the input, dtype read, `to`) of each cast.
fn cast_initializers(
    graph: &mut GraphProto,
    model_names: &[String],
    rename_map: &HashMap<String, String>,
    to: tensor_core::DType,
) -> Result<Vec<(String, tensor_core::DType, tensor_core::DType)>> {
    let to_onnx = onnx_format::dtype::to_onnx(to)
        .ok_or_else(|| Error::Unsupported(format!("ONNX has no {to} type")))?;
    // (name in the graph -> name in the input) of the model's initializers
    let wanted: HashMap<&str, &str> = model_names
        .iter()
        .map(|n| (rename_map.get(n).unwrap_or(n).as_str(), n.as_str()))
        .collect();
    let mut cast = Vec::new();
    let mut cast_map = HashMap::new();
    let mut nodes = Vec::new();
    for t in &mut graph.initializer {
        let Some(name) = t.name.clone() else { continue };
        let Some(&input_name) = wanted.get(name.as_str()) else {
            continue;
        };
        let Some(from) = t.data_type.and_then(onnx_format::dtype::from_onnx) else {
            continue;
        };
        if !from.is_float() || from == to {
            continue;
        }
        cast_initializer(t, &name, to, to_onnx)?;
        let value = format!("{RESERVED_PREFIX}cast/{name}");
        nodes.push(NodeProto {
            op_type: Some("Cast".into()),
            name: Some(value.clone()),
            input: vec![name.clone()],
            output: vec![value.clone()],
            attribute: vec![onnx_format::builder::attr::int(
                "to",
                i64::from(onnx_format::dtype::to_onnx(from).unwrap_or(to_onnx)),
            )],
            ..NodeProto::default()
        });
        cast_map.insert(name.clone(), value);
        // an initializer that is also a graph input (older models) is
        // the input's default: the input takes the new type
        for v in graph
            .input
            .iter_mut()
            .filter(|v| v.name.as_deref() == Some(&name))
        {
            if let Some(onnx_format::proto::type_proto::Value::TensorType(tt)) =
                v.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                tt.elem_type = Some(to_onnx);
            }
        }
        cast.push((input_name.to_string(), from, to));
    }
    if !cast_map.is_empty() {
        replace_uses(graph, &cast_map, false);
        // graph outputs that are initializers read the cast value too
        for v in &mut graph.output {
            if let Some(new) = v.name.as_ref().and_then(|n| cast_map.get(n)) {
                v.name = Some(new.clone());
            }
        }
        nodes.append(&mut graph.node);
        graph.node = nodes;
    }
    Ok(cast)
}

/// Initializer `t` (named `name`) holding its values cast to `to`
/// (`to_onnx` in ONNX's terms); a deferred one (its data read when written)
/// only changes its type: its writer casts the data as it reads it.
fn cast_initializer(
    t: &mut onnx_format::proto::TensorProto,
    name: &str,
    to: tensor_core::DType,
    to_onnx: i32,
) -> Result<()> {
    if graph_translate::export::deferred_source(t).is_some() {
        // the proto is the one `tensor_to_proto` makes of the cast tensor
        *t = onnx_format::proto::TensorProto {
            dims: std::mem::take(&mut t.dims),
            data_type: Some(to_onnx),
            name: t.name.take(),
            external_data: std::mem::take(&mut t.external_data),
            ..Default::default()
        };
    } else {
        let tensor = onnx_format::tensor_from_proto(t, None, &Limits::default())
            .map_err(crate::formats::onnx::onnx_err)?;
        let c = cast_float(&tensor, to).map_err(|e| e.in_tensor(name))?;
        *t = onnx_format::tensor_to_proto(name, &c).map_err(crate::formats::onnx::onnx_err)?;
    }
    Ok(())
}
