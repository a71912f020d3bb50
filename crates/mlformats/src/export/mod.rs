//! Exporting the graphs of other formats to ONNX: an NNabla network
//! (`.nnp`, `.nntxt`, `.protobuf` with parameters) or a TenniS module
//! (`.tsm`) becomes an ONNX model whose weights are initializers.
//!
//! ```no_run
//! # fn main() -> Result<(), mlformats::Error> {
//! let doc = mlformats::open("model.nnp")?;
//! let opts = mlformats::export::ExportOptions::new().opset(13);
//! let summary = mlformats::export::export(&doc, "model.onnx", &opts)?;
//! println!("{} nodes from network {}", summary.nodes, summary.network);
//! # Ok(()) }
//! ```
//!
//! The translation itself lives in the crate `graph-translate` (one
//! declarative operator table per source format, and the published support
//! table); this module loads the graph and the weights of a [`Document`]
//! and hands them over.
//!
//! - NNabla: the network of the first executor (or [`ExportOptions::network`]),
//!   loops expanded as nnabla's loader expands them, inputs and outputs from
//!   the executor's data and output variables (else the network's own), a
//!   stored batch dimension of `-1` as the symbolic dimension `batch`,
//!   parameters as initializers named as in the file. Functions that only
//!   feed losses are left out; a requested output that needs a loss or a
//!   random augmentation is refused. `Dropout` exports as inference (identity).
//! - TenniS: the module's `<param>` inputs (float) and outputs, `<const>`
//!   nodes as initializers named after their nodes, TenniS's own operator
//!   semantics.
//! - Every tensor the exporter adds (helper constants, derived weights) is
//!   named with the reserved prefix `mlformats/` ([`HELPER_PREFIX`]).
//! - Every operator type without an ONNX lowering is named in one error
//!   ([`crate::Error::Unsupported`]) before anything is written.
//!
//! The operator sets written are 13 (the default) to 21.
//!
//! A conversion to ONNX ([`crate::convert_document`],
//! [`crate::convert_sliced`]) builds the model with the weights' types and
//! shapes only, and each weight is read from the file as the writer gets to
//! it (`export/index.rs`); the bytes are the same.

use std::path::Path;

use graph_translate::export as gt;
use onnx_format::ModelProto;

use crate::format::GraphKind;
use crate::{Document, Error, Format, Result};

mod index;
pub(crate) use index::{export_index_model, write_deferred};

pub use gt::{ExportOptions, ExportSummary, HELPER_PREFIX, OPSETS};

/// The NNabla function types the exporter lowers, sorted.
#[cfg(feature = "nnabla")]
pub fn nnabla_functions() -> Vec<&'static str> {
    gt::nnabla_functions()
}

/// The TenniS operators the exporter lowers, sorted.
#[cfg(feature = "tennis")]
pub fn tennis_ops() -> Vec<&'static str> {
    gt::tennis_ops()
}

pub(crate) fn from_gt(e: gt::Error) -> Error {
    match e {
        gt::Error::Unsupported(m) => Error::Unsupported(m),
        gt::Error::Invalid(m) => Error::Invalid(m),
        gt::Error::Core(c) => Error::Core(c),
        gt::Error::Onnx(o) => crate::formats::onnx::onnx_err(o),
        #[cfg(feature = "nnabla")]
        gt::Error::Nnabla(n) => Error::from(n),
        other => Error::Invalid(other.to_string()),
    }
}

/// True when `doc` has a graph to export: an NNabla network with functions
/// or a TenniS module with an operator besides constants and inputs.
pub fn has_graph(doc: &Document) -> bool {
    graph_to_export(doc.format(), doc.graph())
}

/// [`has_graph`] of a file of `format` with `graph` (also for a file
/// opened by random access).
pub(crate) fn graph_to_export(
    format: Format,
    graph: Option<&tensor_core::graph::ModelGraph>,
) -> bool {
    let Some(g) = graph else {
        return false;
    };
    match format.graph_kind() {
        GraphKind::Module => g.graphs.iter().any(|g| {
            g.nodes
                .iter()
                .any(|n| n.op != "<const>" && n.op != "<param>")
        }),
        GraphKind::Network => g.graphs.iter().any(|g| !g.nodes.is_empty()),
        GraphKind::Graph | GraphKind::None => false,
    }
}

/// Builds the ONNX model of `doc`'s graph, each weight read from the file
/// as the exporter asks for it.
pub fn export_model(doc: &Document, opts: &ExportOptions) -> Result<(ModelProto, ExportSummary)> {
    index::export_index_model(doc.index(), doc.reader(), opts, false)
}

/// [`export_model`] of the file `index` describes, whose tensors `weights`
/// gives.
#[cfg_attr(
    not(any(feature = "nnabla", feature = "tennis")),
    allow(unreachable_code, unused_variables)
)]
fn export_with(
    index: &crate::random_access::FileIndex,
    weights: &dyn gt::Weights,
    opts: &ExportOptions,
) -> Result<(ModelProto, ExportSummary)> {
    let (format, graph) = (index.format(), index.graph());
    let opset = opts.checked_opset().map_err(from_gt)?;
    let (model, summary): (ModelProto, gt::ExportSummary) = match format.graph_kind() {
        #[cfg(feature = "nnabla")]
        GraphKind::Network => {
            let model = index
                .nnabla_model()
                .ok_or(Error::NoGraphToExport { format })?;
            gt::nnabla::export(model, weights, opts).map_err(from_gt)?
        }
        #[cfg(feature = "tennis")]
        GraphKind::Module => {
            if opts.network.is_some() {
                return Err(Error::OptionDoesNotApply {
                    option: "--network",
                    why: "a TenniS module has one graph: --network does not apply".into(),
                });
            }
            let g = graph
                .and_then(|m| m.graphs.first())
                .ok_or_else(|| Error::Unsupported("the module has no graph".into()))?;
            gt::tennis::export(g, weights, opset).map_err(from_gt)?
        }
        #[allow(unreachable_patterns)]
        GraphKind::Network | GraphKind::Module | GraphKind::Graph | GraphKind::None => {
            let _ = (opset, graph, weights);
            return Err(Error::Unsupported(format!(
                "{format} files have no graph to export to ONNX (NNabla networks and TenniS modules do)"
            )));
        }
    };
    Ok((model, summary))
}

/// Exports `doc`'s graph as the ONNX model `out` (replaced atomically):
/// [`export_to_writer`] on the file being written.
pub fn export(
    doc: &Document,
    out: impl AsRef<Path>,
    opts: &ExportOptions,
) -> Result<ExportSummary> {
    let (model, summary) = export_model(doc, opts)?;
    tensor_core::io::write_atomic(out.as_ref(), |w| -> Result<()> {
        onnx_format::write_model(w, &model).map_err(crate::formats::onnx::onnx_err)
    })?;
    Ok(summary)
}

/// Exports `doc`'s graph as an ONNX model written to `out` (a file, a
/// `Vec<u8>`, standard output: any writer; it need not seek).
pub fn export_to_writer<W: std::io::Write + ?Sized>(
    doc: &Document,
    out: &mut W,
    opts: &ExportOptions,
) -> Result<ExportSummary> {
    let (model, summary) = export_model(doc, opts)?;
    onnx_format::write_model(&mut *out, &model).map_err(crate::formats::onnx::onnx_err)?;
    out.flush()?;
    Ok(summary)
}
