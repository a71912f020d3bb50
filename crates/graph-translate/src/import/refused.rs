//! What [`super::ImportError::Unsupported`] carries: the typed reason a
//! model is not imported ([`Unsupported`]); for the nodes a target cannot
//! express, every refusal ([`Refusal`]) with its typed cause ([`Reason`])
//! and count. The `Display` of each is the message's text exactly.

use std::fmt;

use onnx_format::dtype::onnx_name;

use super::{ControlFlowError, LowerError, RewriteError};

/// Why a model is not imported (the payload of
/// [`super::ImportError::Unsupported`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// The target cannot express nodes of the model: every refusal, with
    /// its count.
    #[error("{0}")]
    Refused(Refused),
    /// The model's opset is outside the range import reads.
    #[error("the model uses ONNX opset {opset}; import reads opsets {min} to {max}")]
    Opset {
        /// The model's opset.
        opset: i64,
        /// The lowest opset read.
        min: i64,
        /// The highest opset read.
        max: i64,
    },
    /// A call of the model's own functions nests past the expansion's
    /// depth limit.
    #[error("node {node:?} calls function {function} nested more than {limit} deep")]
    NestedCalls {
        /// The calling node's name.
        node: String,
        /// The function called.
        function: String,
        /// The deepest nesting expanded.
        limit: usize,
    },
    /// The model's function calls expand to more nodes than the expansion
    /// takes.
    #[error("the model's function calls expand to more than {limit} nodes")]
    TooManyNodes {
        /// The most nodes expanded.
        limit: usize,
    },
}

impl Unsupported {
    /// The refusals of [`Unsupported::Refused`], each with its typed reason
    /// and count; empty for the other causes.
    pub fn refusals(&self) -> &[Refusal] {
        match self {
            Unsupported::Refused(r) => &r.refusals,
            _ => &[],
        }
    }
}

/// The target an import writes, as refusals name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportTarget {
    /// NNabla (`.nnp`, `.nntxt`, `.protobuf`).
    NNabla,
    /// TenniS (`.tsm`).
    TenniS,
}

impl fmt::Display for ImportTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ImportTarget::NNabla => "NNabla",
            ImportTarget::TenniS => "TenniS",
        })
    }
}

/// Every refusal of one import: `Display` is `"{target} cannot express
/// {total} node(s) of this ONNX model: A (why) ×2, B (why) ×1"`, in
/// first-seen order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refused {
    /// The target refusing.
    pub target: ImportTarget,
    /// The refusals, each once with its count, in first-seen order.
    pub refusals: Vec<Refusal>,
}

impl Refused {
    /// The number of refused nodes (the sum of the counts).
    pub fn total(&self) -> usize {
        self.refusals.iter().map(|r| r.count).sum()
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cannot express {} node(s) of this ONNX model: ",
            self.target,
            self.total()
        )?;
        for (k, r) in self.refusals.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{r} ×{}", r.count)?;
        }
        Ok(())
    }
}

/// What a refusal is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Subject {
    /// A node of this ONNX operator (`Display`: the operator).
    Op(String),
    /// The graph input of this name (`Display`: `input "x"`).
    Input(String),
    /// The graph output of this name (`Display`: `output "y"`).
    Output(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Op(op) => f.write_str(op),
            Subject::Input(name) => write!(f, "input {name:?}"),
            Subject::Output(name) => write!(f, "output {name:?}"),
        }
    }
}

/// One refusal and how many times it was met. `Display` is its entry in
/// the message without the count: `Op`, `Op (why)`, or
/// `Op (node "name": why)` for a named `Loop` or `Scan`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusal {
    /// What is refused.
    pub subject: Subject,
    /// The refused node's name, when the entry names it (a `Loop` or
    /// `Scan` with a name).
    pub node: Option<String>,
    /// Why; `None` for an operator the target has no entry for and
    /// folding does not compute (the entry is the bare operator).
    pub reason: Option<Reason>,
    /// How many times this entry (by its text) was met.
    pub count: usize,
}

#[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
impl Refusal {
    /// A refusal of operator `op`, met once.
    pub(crate) fn op(op: &str, reason: impl Into<Reason>) -> Self {
        Refusal {
            subject: Subject::Op(op.to_string()),
            node: None,
            reason: Some(reason.into()),
            count: 1,
        }
    }

    /// A refusal of operator `op` with no reason (neither in the target's
    /// table nor folded), met once.
    pub(crate) fn bare(op: &str) -> Self {
        Refusal {
            reason: None,
            ..Refusal::op(op, Reason::Subgraphs)
        }
    }

    /// A refusal of graph input `name`, met once.
    #[cfg_attr(not(feature = "tennis"), allow(dead_code))]
    pub(crate) fn input(name: &str, reason: impl Into<Reason>) -> Self {
        Refusal {
            subject: Subject::Input(name.to_string()),
            ..Refusal::op("", reason)
        }
    }

    /// A refusal of graph output `name`, met once.
    pub(crate) fn output(name: &str, reason: impl Into<Reason>) -> Self {
        Refusal {
            subject: Subject::Output(name.to_string()),
            ..Refusal::op("", reason)
        }
    }

    /// This refusal naming node `name` (nothing for an empty name).
    pub(crate) fn named(self, name: &str) -> Self {
        Refusal {
            node: (!name.is_empty()).then(|| name.to_string()),
            ..self
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.subject)?;
        if let Some(why) = &self.reason {
            f.write_str(" (")?;
            if let Some(node) = &self.node {
                write!(f, "node {node:?}: ")?;
            }
            write!(f, "{why})")?;
        }
        Ok(())
    }
}

/// Why one thing is refused; `Display` is the reason as the message
/// quotes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Reason {
    /// A lowering (or folding) refuses the node.
    #[error("{0}")]
    Lower(LowerError),
    /// A node of opset 1 to 6 whose meaning the rewrite to opset 7 cannot
    /// keep, or an operator that does not exist at the model's opset.
    #[error("{0}")]
    Rewrite(RewriteError),
    /// An `If` not inlined, a `Loop` or `Scan` not unrolled.
    #[error("{0}")]
    ControlFlow(ControlFlowError),
    /// A node of another domain than ONNX's: `domain "name"`.
    #[error("domain {0:?}")]
    Domain(String),
    /// A node (not `If`, `Loop` or `Scan`) with subgraph attributes.
    #[error("subgraphs")]
    Subgraphs,
    /// The model's opset is outside the target's range for the operator:
    /// `opset N`.
    #[error("opset {0}")]
    Opset(i64),
    /// The target's own reason for refusing the operator outright.
    #[error("{0}")]
    Target(&'static str),
    /// A node without its first output (without any output, for `RNN`,
    /// `LSTM` and `GRU`).
    #[error("no first output")]
    NoFirstOutput,
    /// A graph input of an element type (the ONNX `TensorProto` data type
    /// code) TenniS has none of.
    #[error("{}; TenniS has no such element type", onnx_name(*.0))]
    TennisElemType(i32),
    /// No graph output depends on any graph input, which the TenniS
    /// runtime cannot run.
    #[error("no output depends on any input; the TenniS runtime cannot run such a module")]
    NoOutputUsesAnInput,
}

impl From<LowerError> for Reason {
    fn from(e: LowerError) -> Self {
        Reason::Lower(e)
    }
}

impl From<RewriteError> for Reason {
    fn from(e: RewriteError) -> Self {
        Reason::Rewrite(e)
    }
}

impl From<ControlFlowError> for Reason {
    fn from(e: ControlFlowError) -> Self {
        Reason::ControlFlow(e)
    }
}

/// Collects refusals, each entry once (by its text) with its count, in
/// first-seen order.
#[derive(Debug, Default)]
#[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
pub(crate) struct Refusals(Vec<(String, Refusal)>);

#[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
impl Refusals {
    /// Counts `r` (met once) under its entry's text.
    pub(crate) fn add(&mut self, r: Refusal) {
        let text = r.to_string();
        match self.0.iter_mut().find(|(t, _)| *t == text) {
            Some((_, seen)) => seen.count += 1,
            None => self.0.push((text, r)),
        }
    }

    /// Counts a refusal of operator `op` for `reason`.
    pub(crate) fn op(&mut self, op: &str, reason: impl Into<Reason>) {
        self.add(Refusal::op(op, reason));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn into_error(self, target: ImportTarget) -> super::ImportError {
        super::ImportError::Unsupported(Unsupported::Refused(Refused {
            target,
            refusals: self.0.into_iter().map(|(_, r)| r).collect(),
        }))
    }
}

#[cfg(all(test, any(feature = "nnabla", feature = "tennis")))]
mod tests {
    use super::*;

    #[test]
    fn entries_count_by_their_text_in_first_seen_order() {
        let mut r = Refusals::default();
        r.op("Pad", LowerError::Other("mode wrap".into()));
        r.add(Refusal::input("x", Reason::TennisElemType(10)));
        // another cause with the same text counts under the first
        r.op("Pad", LowerError::value("mode", "wrap"));
        r.add(Refusal::op("Loop", ControlFlowError::NoBody).named("l"));
        r.add(Refusal::op("Loop", ControlFlowError::NoBody).named(""));
        r.add(Refusal::output("y", LowerError::absent("shape")));
        r.add(Refusal::bare("Foo"));
        let err = r.into_error(ImportTarget::TenniS);
        let got: Vec<(String, usize)> = err
            .refusals()
            .iter()
            .map(|r| (r.to_string(), r.count))
            .collect();
        let want = [
            ("Pad (mode wrap)", 2),
            ("input \"x\" (FLOAT16; TenniS has no such element type)", 1),
            ("Loop (node \"l\": it has no body)", 1),
            ("Loop (it has no body)", 1),
            ("output \"y\" (no shape)", 1),
            ("Foo", 1),
        ];
        assert_eq!(got, want.map(|(t, n)| (t.to_string(), n)));
        assert_eq!(
            err.refusals()[0].reason,
            Some(Reason::Lower(LowerError::Other("mode wrap".into())))
        );
        assert_eq!(
            err.to_string(),
            "TenniS cannot express 7 node(s) of this ONNX model: Pad (mode wrap) ×2, \
             input \"x\" (FLOAT16; TenniS has no such element type) ×1, \
             Loop (node \"l\": it has no body) ×1, Loop (it has no body) ×1, \
             output \"y\" (no shape) ×1, Foo ×1"
        );
    }
}
