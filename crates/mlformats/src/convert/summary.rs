//! [`ConvertSummary`]: what a conversion did.

use tensor_core::DType;

use crate::Format;

/// What a conversion did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConvertSummary {
    /// The format read.
    pub from: Format,
    /// The format written.
    pub to: Format,
    /// Tensors written.
    pub tensors: usize,
    /// True when the whole file or model was carried over (re-encoding to
    /// its own format, or between NNabla encodings), not only tensors.
    pub whole_model: bool,
    /// Tensors left out because the target cannot hold them (with
    /// `skip_unsupported`): name and reason.
    pub skipped: Vec<(String, String)>,
    /// What the user should know about the output: every step that lost or
    /// changed something the user did not ask for (a type the target lacks,
    /// a graph or configs the target cannot hold, a kept network that uses
    /// parameters the output does not hold).
    pub warnings: Vec<String>,
    /// Tensors whose dtype changed (by `dtype`, or because the target has
    /// no such type): input name, dtype read, dtype written.
    pub cast: Vec<(String, DType, DType)>,
    /// Tensors renamed: input name, output name.
    pub renamed: Vec<(String, String)>,
    /// The graph exported to ONNX, when one was.
    pub graph: Option<ExportedGraph>,
}

/// The graph a conversion exported to ONNX.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportedGraph {
    /// The NNabla network exported (empty for a TenniS module).
    pub network: String,
    /// ONNX nodes written.
    pub nodes: usize,
    /// The ONNX operator set written.
    pub opset: i64,
}

impl ConvertSummary {
    pub(crate) fn new(from: Format, to: Format, tensors: usize, whole_model: bool) -> Self {
        ConvertSummary {
            from,
            to,
            tensors,
            whole_model,
            skipped: Vec::new(),
            warnings: Vec::new(),
            cast: Vec::new(),
            renamed: Vec::new(),
            graph: None,
        }
    }

    /// One line saying what the conversion did, e.g. `wrote 4 tensors
    /// (nnabla-nnp -> onnx); network "main" exported: 7 nodes, opset 13;
    /// cast 4 to f16`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "wrote {} tensor{} ({} -> {}{})",
            self.tensors,
            if self.tensors == 1 { "" } else { "s" },
            self.from,
            self.to,
            if self.whole_model && self.graph.is_none() {
                ", whole model"
            } else {
                ""
            }
        );
        if let Some(g) = &self.graph {
            if g.network.is_empty() {
                s += &format!("; graph exported: {} nodes, opset {}", g.nodes, g.opset);
            } else {
                s += &format!(
                    "; network {:?} exported: {} nodes, opset {}",
                    g.network, g.nodes, g.opset
                );
            }
        }
        if !self.cast.is_empty() {
            let mut to: Vec<String> = self.cast.iter().map(|c| c.2.to_string()).collect();
            to.dedup();
            s += &format!("; cast {} to {}", self.cast.len(), to.join("/"));
        }
        if !self.renamed.is_empty() {
            s += &format!("; renamed {}", self.renamed.len());
        }
        if !self.skipped.is_empty() {
            s += &format!("; skipped {}", self.skipped.len());
        }
        if !self.warnings.is_empty() {
            s += &format!(
                "; {} warning{}",
                self.warnings.len(),
                if self.warnings.len() == 1 { "" } else { "s" }
            );
        }
        s
    }

    /// The summary as JSON (what `convert --json` prints and Python's
    /// `convert` returns): `from`, `to`, `tensors`, `whole_model`,
    /// `graph` (`network`, `nodes`, `opset`, or null), `cast` (`name`,
    /// `from`, `to`), `renamed` (`from`, `to`), `skipped` (`name`,
    /// `reason`), `warnings`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        json!({
            "from": self.from.name(),
            "to": self.to.name(),
            "tensors": self.tensors,
            "whole_model": self.whole_model,
            "graph": self.graph.as_ref().map(|g| json!({
                "network": g.network, "nodes": g.nodes, "opset": g.opset,
            })),
            "cast": self.cast.iter().map(|(n, a, b)| json!({
                "name": n, "from": a.name(), "to": b.name(),
            })).collect::<Vec<_>>(),
            "renamed": self.renamed.iter().map(|(a, b)| json!({"from": a, "to": b}))
                .collect::<Vec<_>>(),
            "skipped": self.skipped.iter().map(|(n, why)| json!({"name": n, "reason": why}))
                .collect::<Vec<_>>(),
            "warnings": self.warnings,
        })
    }
}
