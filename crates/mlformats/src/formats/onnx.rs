//! ONNX `.onnx` models (crate `onnx-format`).
//!
//! - reading ([`onnx_format::Model::index`], the reader the random-access
//!   path uses): the initializers of the main graph as tensors named by
//!   their ONNX names (`raw_data` shares the memory map), then the tensors the
//!   main graph's `Constant` nodes hold (`value`, `value_float(s)`,
//!   `value_int(s)`: the weights of paddle2onnx's exports), each named by
//!   the node's output (a name an initializer already has gets `#2`), and
//!   the graph (nodes with
//!   op type, name, inputs, outputs and attributes; graph inputs and
//!   outputs; initializers as weights). Tensors kept in external files are
//!   refused.
//! - writing a set of tensors: the initializers of a model whose graph has
//!   no node, streamed one tensor at a time.
//! - re-encoding: the bytes again, after a full read (a model is its own
//!   canonical form; unknown fields are kept).
//! - exporting a graph of another format: see [`crate::export`].
//!
//! ## Reading
//!
//! ONNX `.onnx` models by random access: [`onnx_format::Model::index`]
//! walks the `ModelProto` field by field through [`ReadAt`] and reads the
//! model without its tensor data, each initializer's and `Constant` node
//! tensor's data located (`raw_data` and one packed run of `float_data` or
//! `double_data` as byte ranges, other typed fields decoded a slice at a
//! time by [`onnx_format::TypedField::read`]), with the checks
//! [`onnx_format::tensor_from_proto`] makes. A repeated name gets `#2`,
//! its stored name kept. A [`crate::Document`] is this index over the
//! memory map; a model with proto2 groups, which it does not walk, is
//! read whole (`decoded_whole`).

use std::collections::HashSet;

use onnx_format::{Model, TensorData};
use serde_json::{Value, json};
use tensor_core::Tensor;
use tensor_core::graph::ModelGraph;

use crate::codec::{Codec, Contents, ReadOptions, Source, StoredTensor, WriteSeek, free_name};
use crate::random_access::{FileIndex, IndexedTensor, Layout, ReadAt, layout};
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Error, Format, Result};

pub(crate) struct OnnxCodec;

/// The writer: a model of initializers alone, each streamed in turn.
struct InitializerSink<'w>(onnx_format::TensorsWriter<&'w mut dyn WriteSeek>);

impl TensorSink for InitializerSink<'_> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        let got = t.tensor().get()?;
        // (a plan's error as the writer's, as `onnx_format::write_tensors`
        // reported it from its callback)
        let p = t.plan().apply(got.tensor()).map_err(|e| {
            onnx_err(onnx_format::Error::Invalid(
                e.in_tensor(t.name()).full_message(),
            ))
        })?;
        self.0
            .tensor(|w| {
                tensor_core::io::write_prefaulted(w, p.bytes())?;
                Ok(p.bytes().len())
            })
            .map_err(onnx_err)
    }

    fn finish(self) -> Result<()> {
        self.0.finish().map_err(onnx_err)
    }
}

/// `onnx-format` errors as errors of this crate: limits and shapes keep
/// their `tensor-core` error, external data and unsupported types are
/// `Unsupported`, everything else `Onnx`.
pub(crate) fn onnx_err(e: onnx_format::Error) -> Error {
    match e {
        onnx_format::Error::Core(c) => Error::Core(c),
        onnx_format::Error::Io(io) => Error::Io(io),
        e @ (onnx_format::Error::ExternalData { .. }
        | onnx_format::Error::UnsupportedDataType { .. }
        | onnx_format::Error::NoOnnxType { .. }) => Error::Unsupported(e.to_string()),
        other => Error::Onnx(other),
    }
}

pub(crate) fn read_model(src: &Source, opts: &ReadOptions) -> Result<onnx_format::Model> {
    let o = onnx_format::ReadOptions::default().with_limits(opts.limits);
    onnx_format::Model::from_map(&src.map, &o).map_err(onnx_err)
}

/// The model's file-level fields (shared with the random-access path,
/// [`FileIndex::read_onnx`], below): `opset`, `producer`, and where the file sets
/// them `ir_version`, `producer_version`, `domain`, `model_version`,
/// `doc_string` and `metadata_props` (every key and value, in file order).
pub(crate) fn metadata(model: &onnx_format::Model) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    let p = &model.proto;
    if let Some(v) = model.opset() {
        m.insert("opset".into(), json!(v));
    }
    let text = |s: &Option<String>| s.as_deref().filter(|s| !s.is_empty()).map(str::to_string);
    if let Some(v) = text(&p.producer_name) {
        m.insert("producer".into(), json!(v));
    }
    if let Some(v) = p.ir_version {
        m.insert("ir_version".into(), json!(v));
    }
    for (key, v) in [
        ("producer_version", &p.producer_version),
        ("domain", &p.domain),
        ("doc_string", &p.doc_string),
    ] {
        if let Some(v) = text(v) {
            m.insert(key.into(), json!(v));
        }
    }
    if let Some(v) = p.model_version {
        m.insert("model_version".into(), json!(v));
    }
    if !p.metadata_props.is_empty() {
        let props: serde_json::Map<String, Value> = p
            .metadata_props
            .iter()
            .map(|e| {
                let key = e.key.clone().unwrap_or_default();
                (key, json!(e.value.clone().unwrap_or_default()))
            })
            .collect();
        m.insert("metadata_props".into(), Value::Object(props));
    }
    m
}

/// A model with proto2 groups, which the index does not walk, decoded
/// whole by prost: its initializers and `Constant` tensors, graph and
/// metadata.
fn decoded_whole(src: &Source, opts: &ReadOptions) -> Result<Contents> {
    let model = read_model(src, opts)?;
    let constants = model.constants().map_err(onnx_err)?;
    let mut c = Contents::default();
    for (name, t) in model
        .initializers()
        .map_err(onnx_err)?
        .into_iter()
        .chain(constants)
    {
        let t = t.rebase(&src.map);
        c.push(StoredTensor::new(&name, &t), t);
    }
    c.graph = Some(ModelGraph::single(model.graph()));
    c.metadata = metadata(&model);
    Ok(c)
}

impl Codec for OnnxCodec {
    fn refuses(&self, _: Format, dtype: tensor_core::DType, _dims: &[usize]) -> Option<String> {
        onnx_format::dtype::to_onnx(dtype)
            .is_none()
            .then(|| format!("ONNX has no {dtype} type"))
    }

    fn write(&self, _: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        let mut entries = Vec::with_capacity(feed.len());
        let mut seen = std::collections::HashSet::new();
        for t in feed.heads() {
            if !seen.insert(t.name()) {
                return Err(Error::DuplicateName {
                    name: t.name().to_string(),
                    format: Some(Format::Onnx),
                });
            }
            let dtype = t.dtype();
            if onnx_format::dtype::to_onnx(dtype).is_none() {
                return Err(Error::UnsupportedDType {
                    format: Format::Onnx,
                    dtype,
                }
                .in_tensor(t.name()));
            }
            entries.push(onnx_format::TensorEntry {
                name: t.name(),
                dtype,
                dims: t.dims().to_vec(),
            });
        }
        let tw = onnx_format::TensorsWriter::new(w, &entries, &Default::default());
        feed.drain(InitializerSink(tw.map_err(onnx_err)?))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        // (a file that does not read is not written again)
        FileIndex::open_map(&src.map, Format::Onnx, &Default::default())?;
        tensor_core::io::write_prefaulted(w, src.bytes())?;
        Ok(())
    }

    fn index(&self, _: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        if !index.read_onnx(r)? {
            let src = index.whole(r, Format::Onnx)?;
            let c = decoded_whole(&src, &index.read_options())?;
            index.push_contents(c)?;
        }
        Ok(())
    }
}

/// The `inspect --json` graph object of an ONNX model: `name`, `inputs`,
/// `outputs`, `initializers` (names), and `nodes` with `op`, `name`,
/// `inputs`, `outputs` and attribute names (`attributes`).
// Wired into `report::graph_json` for `Format::Onnx` by the owner of report.rs.
pub(crate) fn graph_json(g: &ModelGraph) -> Value {
    let Some(g) = g.graphs.first() else {
        return Value::Null;
    };
    let nodes: Vec<Value> = g.nodes.iter().map(crate::report::node_json).collect();
    json!({
        "name": g.name,
        "inputs": g.inputs,
        "outputs": g.outputs,
        "initializers": g.weights().collect::<Vec<_>>(),
        "nodes": nodes,
    })
}

impl FileIndex {
    /// An ONNX model (see the module); false (read it whole) for one with
    /// proto2 groups.
    pub(crate) fn read_onnx<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let o = onnx_format::ReadOptions::default().with_limits(self.limits);
        let Some(index) = Model::index(r, &o).map_err(onnx_err)? else {
            return Ok(false);
        };
        let mut taken: HashSet<String> = HashSet::new();
        for t in index.tensors {
            // a repeated name gets `#2`, ...; its stored name stays (as
            // `Contents::push` does)
            let mut stored = StoredTensor::from_parts(t.name, t.dims);
            stored.name = free_name(stored.name, |n| taken.contains(n));
            taken.insert(stored.name.clone());
            let layout = match t.data {
                TensorData::Typed(typed) => Layout::OnnxTyped(typed),
                TensorData::Held(held) => {
                    let t = Tensor::new(t.dtype, stored.shape.clone(), held.to_vec())
                        .map_err(|e| Error::from(e).in_tensor(&stored.name))?;
                    layout::held(t)?
                }
                _ => Layout::Contiguous,
            };
            let t = IndexedTensor::row_major(stored, t.dtype, t.offset, t.len, t.numel);
            self.tensors.push(t.with_layout(layout));
        }
        self.metadata = metadata(&index.model);
        self.graph = Some(ModelGraph::single(index.model.graph()));
        Ok(true)
    }

    /// The ONNX model this index describes, read through `r` without its
    /// main-graph initializers' `raw_data`
    /// ([`onnx_format::Model::without_raw_data`]), and for each initializer
    /// (in order) whether it had one (its data is then the index's tensor
    /// of the same position). `Ok(None)` for a model the index read whole
    /// (proto2 groups) or that is not ONNX.
    pub(crate) fn onnx_model_without_raw<R: ReadAt + ?Sized>(
        &self,
        r: &R,
    ) -> Result<Option<(Model, Vec<bool>)>> {
        if self.format() != crate::Format::Onnx {
            return Ok(None);
        }
        let o = onnx_format::ReadOptions::default().with_limits(self.limits);
        let Some((model, had_raw)) = Model::without_raw_data(r, &o).map_err(onnx_err)? else {
            return Ok(None);
        };
        let n = model.graph_proto().initializer.len();
        // (the index lists the initializers first, then the `Constant` nodes'
        // tensors, which stay in the model's nodes)
        if n != had_raw.len() || n > self.tensors().len() {
            return Err(Error::Malformed {
                part: "ONNX initializers",
                at: None,
                why: "the model's initializers are not those the index found".into(),
            });
        }
        Ok(Some((model, had_raw)))
    }
}

/// Elements `[start, start + count)` of the ONNX tensor `name` whose
/// values are in a typed field, into `buf`: a count that is not the
/// dims' as the whole-file path words it, anything else about `name`.
pub(crate) fn read_typed<R: ReadAt + ?Sized>(
    typed: &onnx_format::TypedField,
    r: &R,
    start: u64,
    count: u64,
    buf: &mut [u8],
    name: &str,
) -> Result<()> {
    typed.read(r, start, count, buf).map_err(|e| match e {
        e @ onnx_format::Error::ValueCount(_) => onnx_err(e),
        e => onnx_err(e).in_tensor(name),
    })
}
