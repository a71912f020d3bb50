//! Why a lowering refuses one node ([`LowerError`]). The driver turns each
//! into an `Op (reason)` entry of [`super::ImportError::Unsupported`], so
//! the Display text of every variant is the reason exactly as the tests
//! and the published support notes quote it.

use onnx_format::dtype::onnx_name;

/// The symbolic batch dimension, as refusals name it.
pub(crate) const BATCH: &str = "the symbolic batch dimension (fix it with --input-shape)";

/// Why a node cannot be lowered (the reason of one refusal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LowerError {
    /// The target has no operator for ONNX operator `op`.
    #[error("no TenniS operator for {op}")]
    NoTennisOp {
        /// The ONNX operator.
        op: String,
    },
    /// The table has no lowering for ONNX operator `op`.
    #[error("no lowering for {op}")]
    NoLowering {
        /// The ONNX operator.
        op: String,
    },
    /// An attribute value the lowering does not take: `attr=value` (the
    /// value already formatted as the refusal shows it).
    #[error("{attr}={value}")]
    UnsupportedAttr {
        /// The attribute name.
        attr: &'static str,
        /// Its value, formatted.
        value: String,
    },
    /// An input the lowering needs as a constant is computed at run time.
    #[error("{what} computed at run time")]
    NotConstant {
        /// What is not constant (`axes`, `a shape`, ...).
        what: &'static str,
    },
    /// No static shape is known for a value.
    #[error("no shape known for {name:?}")]
    UnknownShape {
        /// The value's name.
        name: String,
    },
    /// Two static shapes do not broadcast.
    #[error("shapes {a} and {b} do not broadcast statically")]
    NoBroadcast {
        /// The first shape, as text.
        a: String,
        /// The second shape, as text.
        b: String,
    },
    /// An input of an element type the lowering does not take.
    #[error("a {} input", onnx_name(*elem))]
    DType {
        /// The ONNX element type.
        elem: i32,
    },
    /// An operation across the symbolic batch dimension (`what` names it,
    /// such as `reshape across`).
    #[error("{what} {BATCH}")]
    AcrossBatch {
        /// What the node does to the batch dimension.
        what: &'static str,
    },
    /// An axis outside the rank of its input.
    #[error("axis {axis} out of range for rank {rank}")]
    AxisOutOfRange {
        /// The axis as given.
        axis: i64,
        /// The input's rank.
        rank: usize,
    },
    /// Input `index` of the node is missing.
    #[error("input {index} missing")]
    MissingInput {
        /// The input's position.
        index: usize,
    },
    /// The node has no output.
    #[error("no output")]
    NoOutput,
    /// A constant fold whose result would exceed its bound
    /// ([`crate::import::fold::MAX_FOLD_ELEMENTS`] elements, or the largest
    /// input's count when that is more), or whose element counts overflow.
    #[error("{node}: too large to fold")]
    FoldTooLarge {
        /// The node, as `Op name`.
        node: String,
    },
    /// Any other reason, as text.
    #[error("{0}")]
    Other(String),
}

impl LowerError {
    /// [`LowerError::UnsupportedAttr`]: `attr=value`, the value formatted
    /// as the refusal shows it.
    #[cfg_attr(not(feature = "nnabla"), allow(dead_code))]
    pub(crate) fn attr(attr: &'static str, value: String) -> Self {
        LowerError::UnsupportedAttr { attr, value }
    }
}

impl From<String> for LowerError {
    fn from(s: String) -> Self {
        LowerError::Other(s)
    }
}

impl From<&str> for LowerError {
    fn from(s: &str) -> Self {
        LowerError::Other(s.to_string())
    }
}

impl From<LowerError> for String {
    fn from(e: LowerError) -> Self {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::onnx_graph::elem;

    #[test]
    fn display_is_the_refusal_text() {
        let cases = [
            (
                LowerError::NoTennisOp { op: "Foo".into() },
                "no TenniS operator for Foo",
            ),
            (
                LowerError::UnsupportedAttr {
                    attr: "direction",
                    value: format!("{:?}", "reverse"),
                },
                "direction=\"reverse\"",
            ),
            (
                LowerError::NotConstant { what: "axes" },
                "axes computed at run time",
            ),
            (
                LowerError::UnknownShape { name: "x".into() },
                "no shape known for \"x\"",
            ),
            (LowerError::DType { elem: elem::BOOL }, "a BOOL input"),
            (
                LowerError::AcrossBatch {
                    what: "reshape across",
                },
                "reshape across the symbolic batch dimension (fix it with --input-shape)",
            ),
            (
                LowerError::AxisOutOfRange { axis: 3, rank: 2 },
                "axis 3 out of range for rank 2",
            ),
            (LowerError::MissingInput { index: 1 }, "input 1 missing"),
            (LowerError::NoOutput, "no output"),
            (
                LowerError::FoldTooLarge {
                    node: "Expand e".into(),
                },
                "Expand e: too large to fold",
            ),
            (LowerError::from("free text"), "free text"),
        ];
        for (e, want) in cases {
            assert_eq!(String::from(e), want);
        }
    }
}
