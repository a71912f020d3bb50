//! A typed report of a file: what `inspect` prints, without JSON.
//!
//! [`Document::summary`] gives every tensor under its one name (with the
//! name the file stores where that differs), exact sizes and element counts,
//! the total parameter count, and for files with a graph each entry point:
//! its inputs and outputs with their declared shapes and its operator counts,
//! described in the format's own words.
//!
//! ```
//! # fn main() -> Result<(), mlformats::Error> {
//! let doc = mlformats::open("../../testdata/cvm/two_entry.params")?;
//! let s = doc.summary();
//! assert_eq!(s.tensors[1].name, "b");
//! assert_eq!(s.parameters, s.tensors.iter().map(|t| t.elements).sum::<u64>());
//! assert!(s.graphs.is_empty());
//! # Ok(()) }
//! ```

use std::collections::HashMap;

use tensor_core::DType;
use tensor_core::graph::{Graph, ModelGraph};

use crate::format::GraphKind;
use crate::{Document, Format};

/// The typed report of one file (see the [module](self)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// The file's format.
    pub format: Format,
    /// primitiv's data type (`model`, ...), `solver-state` for an NNabla
    /// solver-state `.h5`; `None` elsewhere.
    pub kind: Option<&'static str>,
    /// Bytes of the file.
    pub file_size: u64,
    /// Every tensor, in stored order.
    pub tensors: Vec<TensorSummary>,
    /// Bytes of tensor data, all tensors together.
    pub total_bytes: u64,
    /// Elements of all tensors together (the parameter count).
    pub parameters: u64,
    /// The graphs, for formats that store one (NNabla networks, a TenniS
    /// module, an ONNX graph), in stored order.
    pub graphs: Vec<GraphSummary>,
}

/// One tensor of a [`Summary`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TensorSummary {
    /// Its one name (what [`Document::tensor`] takes).
    pub name: String,
    /// The name the file stores, when it is not [`TensorSummary::name`]
    /// (TenniS `<node>/value`, a repeated name).
    pub stored_name: Option<String>,
    /// Its element type.
    pub dtype: DType,
    /// Its dimensions as the file states them.
    pub shape: Vec<usize>,
    /// Bytes of its data.
    pub bytes: u64,
    /// Its element count.
    pub elements: u64,
}

/// A name of a graph's interface with its declared shape.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Port {
    /// The value's name.
    pub name: String,
    /// Its declared dimensions (`-1` for a dimension fixed at run time),
    /// `None` when the format declares none.
    pub shape: Option<Vec<i64>>,
}

/// One graph of a [`Summary`], described in the format's own words.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GraphSummary {
    /// What the format calls it, with its name: `network "runtime"`
    /// (NNabla), `module` (TenniS), `graph "main"` (ONNX).
    pub title: String,
    /// The graph's name (empty where the format has none).
    pub name: String,
    /// NNabla's stored `batch_size`.
    pub batch_size: Option<i64>,
    /// NNabla: the executors that run this network.
    pub executors: Vec<String>,
    /// What the format calls an operation: `functions` (NNabla), `nodes`
    /// (TenniS, ONNX).
    pub op_word: &'static str,
    /// The number of operations.
    pub ops: usize,
    /// What the format calls a value: `variables` (NNabla), `values`.
    pub value_word: &'static str,
    /// The number of declared values.
    pub values: usize,
    /// What is fed in: an NNabla executor's data variables (the network's
    /// own inputs when no executor runs it), a TenniS module's inputs, an
    /// ONNX graph's inputs that are not initializers.
    pub inputs: Vec<Port>,
    /// What comes out, likewise.
    pub outputs: Vec<Port>,
    /// Each operator type with its count, most frequent first (ties by name).
    pub operators: Vec<(String, usize)>,
}

impl Document {
    /// The typed report of this file: tensors by their one name, sizes,
    /// parameter count and graph entry points. Reads headers only (the
    /// file's index).
    pub fn summary(&self) -> Summary {
        self.index().summary()
    }
}

fn port(g: &Graph, name: &str) -> Port {
    Port {
        name: name.to_string(),
        shape: g.value(name).and_then(|v| v.shape.clone()),
    }
}

fn operators(g: &Graph) -> Vec<(String, usize)> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for n in &g.nodes {
        *counts.entry(n.op.as_str()).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = counts
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

pub(crate) fn graphs(format: Format, m: &ModelGraph) -> Vec<GraphSummary> {
    m.graphs
        .iter()
        .map(|g| {
            let ports = |names: &[String]| names.iter().map(|n| port(g, n)).collect::<Vec<_>>();
            let mut s = GraphSummary {
                title: String::new(),
                name: g.name.clone(),
                batch_size: g.batch_size,
                executors: Vec::new(),
                op_word: "nodes",
                ops: g.nodes.len(),
                value_word: "values",
                values: g.values.len(),
                inputs: ports(&g.inputs),
                outputs: ports(&g.outputs),
                operators: operators(g),
            };
            match format.graph_kind() {
                GraphKind::Module => s.title = "module".to_string(),
                // ONNX's graphs, and any graph of a format said to hold none
                GraphKind::Graph | GraphKind::None => s.title = format!("graph {:?}", g.name),
                GraphKind::Network => {
                    s.title = format!("network {:?}", g.name);
                    s.op_word = "functions";
                    s.value_word = "variables";
                    let runs: Vec<_> = m.executors.iter().filter(|e| e.network == g.name).collect();
                    s.executors = runs.iter().map(|e| e.name.clone()).collect();
                    if let Some(e) = runs.first() {
                        s.inputs = ports(&e.data);
                        s.outputs = ports(&e.outputs);
                    }
                }
            }
            if format.graph_kind() == GraphKind::Graph {
                // initializers are graph inputs in older ONNX files: list what is fed
                let weights: std::collections::HashSet<&str> = g.weights().collect();
                s.inputs.retain(|p| !weights.contains(p.name.as_str()));
            }
            s
        })
        .collect()
}
