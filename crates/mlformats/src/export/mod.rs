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
//! - NNabla: the network of the first executor (or [`ExportOptions::network`]),
//!   loops expanded as nnabla's loader expands them, inputs and outputs from
//!   the executor's data and output variables (else the network's own), a
//!   stored batch dimension of `-1` as the symbolic dimension `batch`,
//!   parameters as initializers named as in the file. Functions that only
//!   feed losses are left out; a requested output that needs a loss or a
//!   random augmentation is refused. `Dropout` exports as inference (identity).
//! - TenniS: the module's `<param>` inputs (float) and outputs, `<const>`
//!   nodes as initializers named after their nodes, TenniS's own operator
//!   semantics (see the `tennis` module of this directory).
//! - Every operator type without an ONNX lowering is named in one error
//!   ([`crate::Error::Unsupported`]) before anything is written.
//!
//! The operator sets written are 13 (the default) to 21.

use std::path::Path;

use onnx_format::ModelProto;
use onnx_format::builder::GraphBuilder;
use onnx_format::proto::AttributeProto;
use onnx_format::proto::tensor_proto::DataType;

use crate::{Document, Error, Format, Result};

#[cfg(feature = "nnabla")]
mod nnabla;
#[cfg(feature = "tennis")]
mod tennis;

/// The NNabla function types the exporter lowers, sorted.
#[cfg(feature = "nnabla")]
pub fn nnabla_functions() -> Vec<&'static str> {
    nnabla::supported_functions()
}

/// The TenniS operators the exporter lowers, sorted.
#[cfg(feature = "tennis")]
pub fn tennis_ops() -> Vec<&'static str> {
    tennis::supported_ops()
}

/// The operator sets an export can target.
pub const OPSETS: std::ops::RangeInclusive<i64> = 13..=21;

/// What [`export`] writes.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The NNabla network to export (default: the first executor's).
    pub network: Option<String>,
    /// The default-domain operator set (default 13).
    pub opset: Option<i64>,
}

impl ExportOptions {
    /// The defaults: the first executor's network, operator set 13.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options exporting the network `name`.
    pub fn network(mut self, name: impl Into<String>) -> Self {
        self.network = Some(name.into());
        self
    }

    /// The same options writing operator set `opset`.
    pub fn opset(mut self, opset: i64) -> Self {
        self.opset = Some(opset);
        self
    }
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportSummary {
    /// The exported network (empty for a TenniS module).
    pub network: String,
    /// ONNX nodes written.
    pub nodes: usize,
    /// Initializers written.
    pub initializers: usize,
    /// The operator set imported.
    pub opset: i64,
    /// Source nodes left out because no requested output needs them (losses, ...).
    pub pruned: usize,
}

/// True when `doc` has a graph to export: an NNabla network with functions
/// or a TenniS module with an operator besides constants and inputs.
pub fn has_graph(doc: &Document) -> bool {
    let Some(g) = doc.graph() else {
        return false;
    };
    match doc.format() {
        Format::TennisModule => g.graphs.iter().any(|g| {
            g.nodes
                .iter()
                .any(|n| n.op != "<const>" && n.op != "<param>")
        }),
        f if f.is_nnabla() => g.graphs.iter().any(|g| !g.nodes.is_empty()),
        _ => false,
    }
}

/// Builds the ONNX model of `doc`'s graph.
pub fn export_model(doc: &Document, opts: &ExportOptions) -> Result<(ModelProto, ExportSummary)> {
    let opset = opts.opset.unwrap_or(onnx_format::DEFAULT_OPSET);
    if !OPSETS.contains(&opset) {
        return Err(Error::Unsupported(format!(
            "ONNX export writes operator sets {} to {}, not {opset}",
            OPSETS.start(),
            OPSETS.end()
        )));
    }
    match doc.format() {
        #[cfg(feature = "nnabla")]
        f if f.is_nnabla() => nnabla::export(doc, opts, opset),
        #[cfg(feature = "tennis")]
        Format::TennisModule => {
            if opts.network.is_some() {
                return Err(Error::Invalid(
                    "a TenniS module has one graph: --network does not apply".into(),
                ));
            }
            tennis::export(doc, opset)
        }
        other => Err(Error::Unsupported(format!(
            "{other} files have no graph to export to ONNX (NNabla networks and TenniS modules do)"
        ))),
    }
}

/// Exports `doc`'s graph as the ONNX model `out` (replaced atomically).
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

/// The error for a model with operators that have no lowering: every type,
/// sorted, with how many nodes use it.
pub(crate) fn unsupported_error(
    source: &str,
    ops: &std::collections::BTreeMap<String, usize>,
) -> Error {
    let list: Vec<String> = ops.iter().map(|(op, n)| format!("{op} ({n})")).collect();
    Error::Unsupported(format!(
        "cannot export to ONNX: {} {source} operator type{} without an ONNX lowering: {}",
        ops.len(),
        if ops.len() == 1 { "" } else { "s" },
        list.join(", ")
    ))
}

/// What both exporters share: the graph builder and operator-set-aware
/// helpers.
pub(crate) struct Ctx {
    pub b: GraphBuilder,
    pub opset: i64,
}

impl Ctx {
    pub fn new(name: &str, opset: i64) -> Self {
        Ctx {
            b: GraphBuilder::new(name),
            opset,
        }
    }

    /// A node with one fresh output.
    pub fn op(&mut self, op: &str, inputs: &[&str], attrs: Vec<AttributeProto>) -> String {
        self.b.op(op, inputs, attrs)
    }

    /// A node writing `out`.
    pub fn op_to(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[&str],
        out: &str,
        attrs: Vec<AttributeProto>,
    ) {
        self.b.node(op, name, inputs, &[out], attrs);
    }

    pub fn ints(&mut self, values: &[i64]) -> String {
        self.b.const_i64("c", values)
    }

    pub fn scalar(&mut self, v: f32) -> String {
        self.b.scalar_f32("c", v)
    }

    /// `op` (`ReduceMean`, `ReduceSum`, ...) over `axes` (all when empty),
    /// axes as an attribute or an input as the operator set wants.
    pub fn reduce(&mut self, op: &str, x: &str, axes: &[i64], keepdims: bool) -> String {
        use onnx_format::builder::attr;
        let keep = attr::int("keepdims", i64::from(keepdims));
        let axes_as_input = op == "ReduceSum" || self.opset >= 18;
        if axes.is_empty() {
            return self.op(op, &[x], vec![keep]);
        }
        if axes_as_input {
            let a = self.ints(axes);
            self.op(op, &[x, &a], vec![keep])
        } else {
            self.op(op, &[x], vec![keep, attr::ints("axes", axes)])
        }
    }

    pub fn unsqueeze(&mut self, x: &str, axes: &[i64]) -> String {
        let a = self.ints(axes);
        self.op("Unsqueeze", &[x, &a], vec![])
    }

    /// A 1-element vector as a scalar.
    pub fn squeeze0(&mut self, x: &str) -> String {
        let a = self.ints(&[0]);
        self.op("Squeeze", &[x, &a], vec![])
    }

    pub fn reshape(&mut self, x: &str, shape: &[i64]) -> String {
        let s = self.ints(shape);
        self.op("Reshape", &[x, &s], vec![])
    }

    pub fn cast(&mut self, x: &str, to: DataType) -> String {
        self.op(
            "Cast",
            &[x],
            vec![onnx_format::builder::attr::int("to", to as i64)],
        )
    }

    /// `Split` of `x` along `axis` into `n` equal parts, written to `outs`.
    pub fn split_equal(&mut self, x: &str, axis: i64, n: usize, outs: &[&str]) {
        use onnx_format::builder::attr;
        if self.opset >= 18 {
            self.b.node(
                "Split",
                "",
                &[x],
                outs,
                vec![attr::int("axis", axis), attr::int("num_outputs", n as i64)],
            );
        } else {
            // opset 13..17: equal parts when `split` is left out
            self.b
                .node("Split", "", &[x], outs, vec![attr::int("axis", axis)]);
        }
    }

    /// The model, without initializers that no node reads (weights only
    /// used to derive others, e.g. binarized ones), and what it holds:
    /// `network` and `pruned` as the exporter says.
    pub fn finish(
        mut self,
        graph_name: &str,
        network: String,
        pruned: usize,
    ) -> (ModelProto, ExportSummary) {
        let opset = self.opset;
        let read: std::collections::HashSet<String> = self
            .b
            .graph
            .node
            .iter()
            .flat_map(|n| n.input.iter().cloned())
            .chain(self.b.graph.output.iter().filter_map(|o| o.name.clone()))
            .collect();
        self.b
            .graph
            .initializer
            .retain(|t| t.name.as_ref().is_some_and(|n| read.contains(n)));
        let opts = onnx_format::WriteOptions::default()
            .with_opset(opset)
            .with_graph_name(graph_name);
        let model = self.b.finish(&opts);
        let (nodes, initializers) = model
            .graph
            .as_ref()
            .map_or((0, 0), |g| (g.node.len(), g.initializer.len()));
        let summary = ExportSummary {
            network,
            nodes,
            initializers,
            opset,
            pruned,
        };
        (model, summary)
    }
}
