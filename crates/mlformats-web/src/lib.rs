//! # mlformats-web
//!
//! The viewer page's WebAssembly module: the `mlformats` library opened on
//! a file's bytes in a browser. It only presents what the library reads:
//! a summary, the tensor table (the one name per tensor that `mlformats
//! inspect --json` gives), the typed graph, per-tensor statistics with a
//! histogram, and slices of values. Every answer is a JSON string the page
//! parses.
//!
//! The page talks to the module through a small plain C ABI (see [`abi`]):
//! no wasm-bindgen, so the page builds with cargo and the
//! `wasm32-unknown-unknown` target alone (`cargo xtask web`).
//!
//! The same functions run natively, which is how they are tested:
//!
//! ```
//! # fn main() -> Result<(), mlformats_web::ViewError> {
//! let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
//! let model = mlformats_web::Model::open_bytes(bytes, "two_entry.params")?;
//! let summary: serde_json::Value = serde_json::from_str(&model.summary()).unwrap();
//! assert_eq!(summary["format"], "cvm-params");
//! let tensors: serde_json::Value = serde_json::from_str(&model.tensors()).unwrap();
//! assert_eq!(tensors[1]["name"], "b");
//! let values: serde_json::Value = serde_json::from_str(&model.values_json("b", 0, 1)?).unwrap();
//! assert_eq!(values["values"][0], 258.0);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use mlformats::graph::{Attribute, Graph, ModelGraph};
use mlformats::layout::{Direction, Labels, Layout, LayoutOptions, OpSet};
use mlformats::random_access::ReadAt;
use mlformats::{ConvertOptions, Document, Format};
use serde_json::{Map, Value, json};

pub mod abi;
mod stats;

/// The library's version, shown in the page's footer.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// An error, as the page shows it: the library's message with its causes.
#[derive(Debug)]
pub struct ViewError(pub String);

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ViewError {}

/// What [`Model::convert_stream`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Streamed {
    /// The converted file was written: its length in bytes.
    Written(u64),
    /// Nothing was written: a file opened by slices cannot be converted so
    /// (the library's reason, which says `mlformats convert` does it); the
    /// same file read whole converts.
    NeedsWholeModel(String),
}

/// An opened file: whole in memory, or (a big file) its structure only,
/// its tensors read a slice at a time through a [`ReadAt`]: one
/// [`Document`] either way.
pub struct Model {
    doc: Document,
    name: String,
}

/// Elements of a tensor a big file's statistics read at a time: 4 MiB of
/// the widest dtype, a multiple of 1024 elements (so the statistics are
/// the whole-file path's, bit for bit).
const SLICE_BYTES: u64 = 4 << 20;

/// The largest tensor whose statistics keep a copy of its bytes, when
/// reading it decodes them ([`mlformats::random_access::IndexedTensor::is_decoded`]:
/// a deflated `.npz` member, a chunked `.h5` dataset, ONNX varints), so
/// that it is read and decoded once (the range and the histogram from one
/// pass) rather than twice: 64 MiB held at most, besides the slice.
const HOLD_BYTES: u64 = 64 << 20;

/// The summary's networks (name, batch size, node count, inputs, outputs,
/// operator counts) and executors; `file` names a network the file leaves
/// unnamed (see [`shown_name`]).
fn networks_json(g: Option<&ModelGraph>, file: &str) -> (Vec<Value>, Vec<Value>) {
    let mut networks = Vec::new();
    let mut executors = Vec::new();
    if let Some(g) = g {
        for n in &g.graphs {
            let mut ops: BTreeMap<&str, usize> = BTreeMap::new();
            for node in &n.nodes {
                *ops.entry(node.op.as_str()).or_default() += 1;
            }
            networks.push(json!({
                "name": shown_name(n, file),
                "batch_size": n.batch_size,
                "nodes": n.nodes.len(),
                "inputs": io(n, &n.inputs),
                "outputs": io(n, &n.outputs),
                "operators": ops,
            }));
        }
        for e in &g.executors {
            executors.push(json!({
                "name": e.name, "network": e.network, "data": e.data, "outputs": e.outputs,
            }));
        }
    }
    (networks, executors)
}

impl Model {
    /// The summary: format, kind, size, metadata, tensor totals, networks
    /// and executors with their inputs and outputs (and shapes), operator
    /// counts.
    pub fn summary(&self) -> String {
        let doc = &self.doc;
        let totals = doc.summary();
        let (networks, executors) = networks_json(doc.graph(), &self.name);
        json!({
            "file": self.name,
            "format": doc.format().name(),
            "kind": doc.kind(),
            "file_size": doc.file_size(),
            "tensor_count": doc.len(),
            "parameters": totals.parameters,
            "bytes": totals.total_bytes,
            "metadata": doc.metadata(),
            "networks": networks,
            "executors": executors,
            "sliced": self.is_sliced(),
        })
        .to_string()
    }

    /// The tensor table in stored order, as `inspect --json` names them: the
    /// one `name` the other calls take (`stored_name` beside it where the
    /// file stores another), dtype, stored shape, element count, bytes and
    /// the format's own fields. Nothing of the tensors' data is read.
    pub fn tensors(&self) -> String {
        let rows: Vec<Value> = self
            .doc
            .entries()
            .iter()
            .map(|t| {
                let mut e = Map::new();
                e.insert("name".into(), json!(t.name()));
                if t.stored().stored_name != t.name() {
                    e.insert("stored_name".into(), json!(t.stored().stored_name));
                }
                e.insert("dtype".into(), json!(t.dtype().name()));
                e.insert("shape".into(), json!(t.stored().shape));
                e.insert("numel".into(), json!(t.numel()));
                e.insert("bytes".into(), json!(t.byte_len()));
                e.insert("extras".into(), Value::Object(t.stored().extras.clone()));
                Value::Object(e)
            })
            .collect();
        Value::Array(rows).to_string()
    }

    /// The typed graph (`null` for files without one): every network with
    /// its values (kind, shape, tensor) and nodes (op, name, inputs,
    /// outputs, attributes with their values), and the executors.
    pub fn graph(&self) -> String {
        self.doc
            .graph()
            .map_or(Value::Null, |g| graph_json(g, &self.name))
            .to_string()
    }

    /// The drawing of the network at `network` (its index in the graph's
    /// networks) as the library lays it out: the document `mlformats graph
    /// FILE --to layout` prints (`docs/LAYOUT_JSON.md`; the same
    /// [`Layout::of_graph_with`], folded weights labelled with the shapes
    /// of the tensor table; boxes linked to their operators' documentation),
    /// its layers left to right when `left_to_right` (`--direction lr`),
    /// the groups `groups.0` names drawn closed (`--collapse`), the
    /// nodes `groups.1` names with their subgraphs open (`--expand`), the
    /// boxes showing what `labels` says (`--hide-names`, `--hide-weights`,
    /// `--attributes`).
    pub fn layout_json(
        &self,
        network: usize,
        left_to_right: bool,
        groups: (&[String], &[String]),
        labels: Labels,
    ) -> Result<String, ViewError> {
        let g = self
            .doc
            .graph()
            .and_then(|m| m.graphs.get(network))
            .ok_or_else(|| ViewError(format!("the file has no network {network}")))?;
        // by the name the file stores (a TenniS graph names `<node>/value`),
        // then by the one name, which wins
        let tensors = self.doc.entries();
        let shapes: Vec<_> = tensors
            .iter()
            .filter_map(|t| Some((t.stored(), i64_dims(t.dims())?)))
            .collect();
        let stored = shapes
            .iter()
            .map(|(s, d)| (s.stored_name.as_str(), d.clone()));
        let named = shapes.iter().map(|(s, d)| (s.name.as_str(), d.clone()));
        let dims: HashMap<&str, Vec<i64>> = stored.chain(named).collect();
        let shape_of = |name: &str| dims.get(name).cloned();
        let mut options = LayoutOptions::default();
        if left_to_right {
            options.direction = Direction::LeftToRight;
        }
        options.collapsed = groups.0.to_vec();
        options.expanded = groups.1.to_vec();
        options.labels = labels;
        options.op_set = OpSet::of_format(self.doc.format());
        Layout::of_graph_with(g, &options, &shape_of)
            .map(|l| l.to_json().to_string())
            .map_err(|e| ViewError(e.to_string()))
    }

    /// The `inspect --json` document of the file (hashes every tensor: for
    /// the tests and the "copy as JSON" button, not for the first paint).
    /// Refused for a file opened by slices.
    pub fn inspect_json(&self) -> Result<String, ViewError> {
        if self.is_sliced() {
            return Err(ViewError(
                "inspect --json hashes every tensor: not done in the page for a file read by slices"
                    .into(),
            ));
        }
        Ok(self.doc.inspect_json().to_string())
    }

    /// True when the file was opened by slices ([`Model::open_indexed`]).
    pub fn is_sliced(&self) -> bool {
        self.doc.is_read_at()
    }

    /// Opens a file from its bytes; `name` (the file's name) breaks ties
    /// where the bytes alone do not tell the format.
    pub fn open_bytes(bytes: Vec<u8>, name: &str) -> Result<Model, ViewError> {
        let path = (!name.is_empty()).then(|| Path::new(name));
        let doc = Document::from_bytes(bytes, path, None)
            .map_err(|e| ViewError(mlformats::chain_message(&e)))?;
        Ok(Model {
            doc,
            name: name.to_string(),
        })
    }

    /// Opens a big file by random access: the library reads its structure
    /// only ([`Document::open_at`]) and each tensor is read a slice at a
    /// time when asked for. `None` for a file whose format is not known.
    pub fn open_indexed(
        reader: Box<dyn ReadAt + Send + Sync>,
        name: &str,
    ) -> Result<Option<Model>, ViewError> {
        let path = (!name.is_empty()).then(|| Path::new(name));
        match Document::open_at(Boxed(reader), path, None, &Default::default()) {
            Ok(doc) => Ok(Some(Model {
                doc,
                name: name.to_string(),
            })),
            Err(mlformats::Error::UnknownFormat | mlformats::Error::Empty) => Ok(None),
            Err(e) => Err(ViewError(mlformats::chain_message(&e))),
        }
    }

    /// The file converted to the format named `to` (a name or alias
    /// `mlformats convert --to` takes, e.g. `onnx`, `nnp`, `safetensors`)
    /// with the options `opts` (`--dtype`, `--only`, `--opset`, ...; their
    /// meaning is the library's) and `params` (`--params`: a parameter file
    /// merged into the network first, see
    /// [`mlformats::Document::with_parameters_of`]): the bytes `mlformats
    /// convert FILE OUT` writes for that format with the same options (see
    /// [`mlformats::convert_document_to_bytes`]), or the library's message.
    /// A file opened by slices is converted by [`Model::convert_to`].
    pub fn convert(
        &self,
        to: &str,
        opts: &ConvertOptions,
        params: Option<&Document>,
    ) -> Result<Vec<u8>, ViewError> {
        let target = target(to)?;
        if self.is_sliced() {
            let mut out = std::io::Cursor::new(Vec::new());
            self.convert_to(to, opts, params.is_some(), &mut out)?;
            return Ok(out.into_inner());
        }
        let err = |e: mlformats::Error| ViewError(mlformats::chain_message(&e));
        let merged;
        let doc = match params {
            Some(p) => {
                merged = self.doc.with_parameters_of(p).map_err(err)?;
                &merged
            }
            None => &self.doc,
        };
        mlformats::convert_document_to_bytes(doc, target, opts)
            .map(|(bytes, _)| bytes)
            .map_err(err)
    }

    /// A file opened by slices converted to the format named `to` and
    /// written to `out` as it goes: each tensor read through the file's
    /// [`ReadAt`] a slice or one tensor at a time (see
    /// [`mlformats::convert_sliced`]), so neither the input nor the output
    /// is ever whole in memory. The bytes are `mlformats convert`'s.
    /// Conversions that need the whole model (a graph exported or imported,
    /// an NNabla model kept; and `--params`, when `params` is true) are
    /// refused with the reason (see [`Model::convert_stream`], which tells
    /// those apart); a file read whole is converted in memory and written
    /// to `out`.
    pub fn convert_to<W: std::io::Write + std::io::Seek>(
        &self,
        to: &str,
        opts: &ConvertOptions,
        params: bool,
        out: &mut W,
    ) -> Result<u64, ViewError> {
        match self.convert_stream(to, opts, params, out)? {
            Streamed::Written(n) => Ok(n),
            Streamed::NeedsWholeModel(why) => Err(ViewError(why)),
        }
    }

    /// [`Model::convert_to`], telling a conversion that needs the whole
    /// model in memory ([`Streamed::NeedsWholeModel`]: the page then reads
    /// the file whole, when it fits, and converts it with
    /// [`Model::convert`]) from any other refusal (an error).
    pub fn convert_stream<W: std::io::Write + std::io::Seek>(
        &self,
        to: &str,
        opts: &ConvertOptions,
        params: bool,
        out: &mut W,
    ) -> Result<Streamed, ViewError> {
        let target = target(to)?;
        let err = |e: mlformats::Error| ViewError(mlformats::chain_message(&e));
        if !self.is_sliced() {
            let bytes = self.convert(to, opts, None)?;
            out.write_all(&bytes)
                .map_err(|e| err(mlformats::Error::from(e)))?;
            return Ok(Streamed::Written(bytes.len() as u64));
        }
        let mut opts = opts.clone();
        if params {
            // the library says why it refuses
            opts.params = Some(std::path::PathBuf::from("params"));
        }
        let doc = &self.doc;
        match mlformats::convert_sliced(doc, target, &opts, out) {
            Ok(_) => {}
            Err(e @ mlformats::Error::NeedsWholeModel { .. }) => {
                return Ok(Streamed::NeedsWholeModel(mlformats::chain_message(&e)));
            }
            Err(e) => return Err(err(e)),
        }
        out.seek(std::io::SeekFrom::End(0))
            .map(Streamed::Written)
            .map_err(|e| err(mlformats::Error::from(e)))
    }

    /// Statistics of the tensor `key` (count, min, max, mean, std, NaN, Inf,
    /// zeros) and a histogram of `bins` bins over its finite range. A file
    /// opened by slices is read [`SLICE_BYTES`] at a time, twice (the
    /// range, then the histogram), or once when reading it decodes it and
    /// it is at most [`HOLD_BYTES`] (its bytes kept from the first pass for
    /// the histogram).
    pub fn stats_json(&self, key: &str, bins: usize) -> Result<String, ViewError> {
        let bins = bins.clamp(1, 1024);
        let missing = || ViewError(format!("no tensor named {key:?}"));
        let doc = &self.doc;
        let i = doc.position(key).ok_or_else(missing)?;
        let t = &doc.entries()[i];
        if !self.is_sliced() {
            let t = doc.tensor(key).ok_or_else(missing)?;
            let v = stats::stats(t.dtype(), t.dims(), bins, None, &mut |f| {
                f(t);
                Ok(())
            })?;
            return Ok(v.to_string());
        }
        let step = (SLICE_BYTES / t.dtype().size().max(1) as u64) / 1024 * 1024;
        let step = step.max(1024);
        let hold = if t.is_decoded() && t.byte_len() <= HOLD_BYTES {
            usize::try_from(t.byte_len()).ok()
        } else {
            None
        };
        let mut buf = Vec::new();
        let v = stats::stats(t.dtype(), t.dims(), bins, hold, &mut |f| {
            let mut at = 0;
            while at < t.numel() {
                let part = doc
                    .read_elements(i, at, step, &mut buf)
                    .map_err(|e| ViewError(mlformats::chain_message(&e)))?;
                f(&part);
                at += step;
            }
            Ok(())
        })?;
        Ok(v.to_string())
    }

    /// `count` values of the tensor `key` from the flat (row-major) index
    /// `start`, with the tensor's dims, as numbers (`null` for NaN/Inf,
    /// which JSON lacks; their text is in `text`). A file opened by slices
    /// reads those values only.
    pub fn values_json(&self, key: &str, start: usize, count: usize) -> Result<String, ViewError> {
        let count = count.min(100_000);
        let missing = || ViewError(format!("no tensor named {key:?}"));
        let doc = &self.doc;
        if !self.is_sliced() {
            let t = doc.tensor(key).ok_or_else(missing)?;
            return Ok(stats::values(t, start, count).to_string());
        }
        let i = doc.position(key).ok_or_else(missing)?;
        let t = &doc.entries()[i];
        let mut buf = Vec::new();
        let part = doc
            .read_elements(i, start as u64, count as u64, &mut buf)
            .map_err(|e| ViewError(mlformats::chain_message(&e)))?;
        Ok(stats::values_of_part(&part, t.dims(), t.order(), t.numel(), start).to_string())
    }
}

/// A boxed [`ReadAt`], as [`Document::open_at`] takes one.
struct Boxed(Box<dyn ReadAt + Send + Sync>);

impl ReadAt for Boxed {
    fn len(&self) -> u64 {
        self.0.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.read_at(offset, buf)
    }
}

fn i64_dims(dims: &[usize]) -> Option<Vec<i64>> {
    dims.iter().map(|&d| i64::try_from(d).ok()).collect()
}

/// The format named `to`, or the message listing the names.
fn target(to: &str) -> Result<Format, ViewError> {
    Format::from_name(to).ok_or_else(|| {
        ViewError(format!(
            "unknown format {to:?} (one of {})",
            Format::names().join(", ")
        ))
    })
}

/// The formats the page converts to (every format the library writes), each
/// with its name and usual extension: `[{"name": "onnx", "extension":
/// "onnx"}, ...]`.
pub fn formats() -> String {
    let list: Vec<Value> = Format::ALL
        .iter()
        .map(|f| json!({"name": f.name(), "extension": f.extension()}))
        .collect();
    Value::Array(list).to_string()
}

/// Inputs or outputs of a network with their declared shapes (and the
/// names of their open dimensions).
fn io(g: &Graph, names: &[String]) -> Vec<Value> {
    names
        .iter()
        .map(|n| {
            let v = g.values.iter().find(|v| &v.name == n);
            json!({
                "name": n,
                "shape": v.map(|v| &v.shape),
                "dim_names": v.and_then(|v| v.dim_names.as_ref()),
            })
        })
        .collect()
}

fn attribute_json(a: &Attribute) -> Value {
    match a {
        Attribute::Int(v) => json!(v),
        Attribute::Float(v) => mlformats::report::float_json(*v),
        Attribute::Bool(v) => json!(v),
        Attribute::String(v) => json!(v),
        Attribute::Ints(v) => json!(v),
        Attribute::Floats(v) => Value::Array(
            v.iter()
                .map(|x| mlformats::report::float_json(*x))
                .collect(),
        ),
        Attribute::Bools(v) => json!(v),
        Attribute::Strings(v) => json!(v),
        Attribute::Tensor(name) => json!({ "tensor": name }),
        Attribute::Tensors(names) => {
            Value::Array(names.iter().map(|n| json!({ "tensor": n })).collect())
        }
        Attribute::Message(m) => message_json(m),
        Attribute::Messages(ms) => Value::Array(ms.iter().map(|m| message_json(m)).collect()),
        _ => Value::Null,
    }
}

fn message_json(m: &[(String, Attribute)]) -> Value {
    let mut o = Map::new();
    for (k, v) in m {
        o.insert(k.clone(), attribute_json(v));
    }
    Value::Object(o)
}

/// The name the page shows for network `g`: its own, or for a network the
/// file leaves unnamed (a TenniS module has one graph and no name), the
/// stem of the file's name `file`, else `module`.
fn shown_name(g: &Graph, file: &str) -> String {
    if !g.name.is_empty() {
        return g.name.clone();
    }
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = base.rsplit_once('.').map_or(base, |(stem, _)| stem);
    if stem.is_empty() {
        "module".to_string()
    } else {
        stem.to_string()
    }
}

/// A TenniS node's internal fields the details panel shows otherwise: the
/// operator, the node's name and its number of outputs.
const HIDDEN_ATTRIBUTES: [&str; 3] = ["#op", "#name", "#output_count"];

/// The attributes the details panel lists: all but the internal fields
/// [`HIDDEN_ATTRIBUTES`] (an input's `#shape` and a constant's `#dtype`,
/// which say something the panel does not, are kept).
fn shown_attributes(attributes: &[(String, Attribute)]) -> Vec<Value> {
    attributes
        .iter()
        .filter(|(k, _)| !HIDDEN_ATTRIBUTES.contains(&k.as_str()))
        .map(|(k, v)| json!([k, attribute_json(v)]))
        .collect()
}

fn graph_json(g: &ModelGraph, file: &str) -> Value {
    let graphs: Vec<Value> = g
        .graphs
        .iter()
        .map(|n| {
            let values: Vec<Value> = n
                .values
                .iter()
                .map(|v| {
                    json!({
                        "name": v.name,
                        "kind": v.kind.as_str(),
                        "stored": v.kind.is_stored(),
                        "shape": v.shape,
                        "dim_names": v.dim_names,
                        "tensor": v.tensor,
                    })
                })
                .collect();
            let nodes: Vec<Value> = n
                .nodes
                .iter()
                .map(|f| {
                    json!({
                        "op": f.op,
                        "name": f.name,
                        "inputs": f.inputs,
                        "outputs": f.outputs,
                        "attributes": shown_attributes(&f.attributes),
                    })
                })
                .collect();
            json!({
                "name": shown_name(n, file),
                "batch_size": n.batch_size,
                "inputs": n.inputs,
                "outputs": n.outputs,
                "values": values,
                "nodes": nodes,
            })
        })
        .collect();
    let executors: Vec<Value> = g
        .executors
        .iter()
        .map(|e| json!({ "name": e.name, "network": e.network, "data": e.data, "outputs": e.outputs }))
        .collect();
    json!({ "graphs": graphs, "executors": executors })
}
