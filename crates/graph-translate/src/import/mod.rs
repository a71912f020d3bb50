//! Importing ONNX models into NNabla networks (and, later, TenniS modules).
//!
//! The common layer ([`onnx_graph`], [`fold`]) reads the model (opsets 1
//! to 28), its initializers and its inputs' shapes, rewrites the nodes of
//! opsets 1 to 6 to their opset-7 meaning (one front pass, `legacy`), and
//! folds the constant shape arithmetic exporters emit. One declarative table per target
//! ([`nnabla_table::TABLE`]) names every ONNX operator the target takes,
//! its opset range, the attributes it reads and its lowering; the table
//! drives the translation, the list of supported operators
//! ([`support_table_markdown`]) and the per-operator tests.
//!
//! What the target cannot express is refused before anything is written:
//! [`ImportError::Unsupported`] names every such operator (and attribute
//! value) with its count. It carries them typed ([`Unsupported::Refused`],
//! [`ImportError::refusals`]): each [`Refusal`] has its subject (an
//! operator, a graph input or output), the node's name where the text
//! gives it, its count and its [`Reason`], for the lowerings' refusals a
//! typed cause: [`LowerError`] (a lowering), [`RewriteError`] (a node of
//! opset 1 to 6 whose meaning the rewrite to opset 7 cannot keep) or
//! [`ControlFlowError`] (an `If` not inlined, a `Loop` or `Scan` not
//! unrolled).
//!
//! ```
//! # #[cfg(feature = "nnabla")] {
//! use graph_translate::import::{ImportOptions, onnx_to_nnabla};
//! use onnx_format::builder::{Dim, GraphBuilder, attr};
//! use onnx_format::proto::tensor_proto::DataType;
//!
//! // y = LeakyRelu(x) on a symbolic batch.
//! let mut b = GraphBuilder::new("net");
//! b.input("x", DataType::Float, &[Dim::Param("N".into()), Dim::Value(4)]);
//! b.node("LeakyRelu", "", &["x"], &["y"], vec![attr::float("alpha", 0.1)]);
//! b.output("y", DataType::Float, &[Dim::Param("N".into()), Dim::Value(4)]);
//! let mut bytes = Vec::new();
//! onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
//! let model = onnx_format::Model::parse(&bytes).unwrap();
//!
//! let nn = onnx_to_nnabla(&model, &ImportOptions::default()).unwrap();
//! let net = &nn.model.network[0];
//! assert_eq!(net.function[0].r#type, "LeakyReLU");
//! // The symbolic batch stays NNabla's -1.
//! assert_eq!(net.variable[0].shape.as_ref().unwrap().dim, [-1, 4]);
//! assert_eq!(nn.model.executor[0].output_variable[0].variable_name, "y");
//! # }
//! ```

#[cfg(any(feature = "nnabla", feature = "tennis"))]
mod dims;
#[cfg(any(feature = "nnabla", feature = "tennis"))]
mod driver;
mod error;
pub mod fold;
mod functions;
#[cfg(any(feature = "nnabla", feature = "tennis"))]
mod inline_if;
#[cfg(any(feature = "nnabla", feature = "tennis"))]
mod legacy;
pub mod onnx_graph;
#[cfg(all(test, feature = "nnabla"))]
mod refusal_tests;
mod refused;
#[cfg(any(feature = "nnabla", feature = "tennis"))]
pub mod table;
#[cfg(any(feature = "nnabla", feature = "tennis"))]
mod unroll;

#[cfg(feature = "nnabla")]
mod nnabla_cx;
#[cfg(feature = "nnabla")]
mod nnabla_ops_attention;
#[cfg(feature = "nnabla")]
mod nnabla_ops_elementwise;
#[cfg(feature = "nnabla")]
mod nnabla_ops_gru;
#[cfg(feature = "nnabla")]
mod nnabla_ops_index;
#[cfg(feature = "nnabla")]
mod nnabla_ops_loss;
#[cfg(feature = "nnabla")]
mod nnabla_ops_nn;
#[cfg(feature = "nnabla")]
mod nnabla_ops_norm;
#[cfg(feature = "nnabla")]
mod nnabla_ops_pool;
#[cfg(feature = "nnabla")]
mod nnabla_ops_qint;
#[cfg(feature = "nnabla")]
mod nnabla_ops_quant;
#[cfg(feature = "nnabla")]
mod nnabla_ops_reduce;
#[cfg(feature = "nnabla")]
mod nnabla_ops_rnn;
#[cfg(feature = "nnabla")]
mod nnabla_ops_shape;
#[cfg(feature = "nnabla")]
pub mod nnabla_table;

#[cfg(feature = "nnabla")]
pub use nnabla_cx::{NnablaImport, onnx_to_nnabla};

#[cfg(feature = "tennis")]
mod tennis_cx;
#[cfg(feature = "tennis")]
mod tennis_ops_act;
#[cfg(feature = "tennis")]
mod tennis_ops_basic;
#[cfg(feature = "tennis")]
mod tennis_ops_index;
#[cfg(feature = "tennis")]
mod tennis_ops_log;
#[cfg(feature = "tennis")]
mod tennis_ops_logic;
#[cfg(feature = "tennis")]
mod tennis_ops_nn;
#[cfg(feature = "tennis")]
mod tennis_ops_quant;
#[cfg(feature = "tennis")]
mod tennis_ops_range;
#[cfg(feature = "tennis")]
mod tennis_ops_reduce;
#[cfg(feature = "tennis")]
mod tennis_ops_resize;
#[cfg(feature = "tennis")]
mod tennis_ops_rnn;
#[cfg(feature = "tennis")]
mod tennis_ops_shape;
#[cfg(feature = "tennis")]
mod tennis_ops_slice;
#[cfg(feature = "tennis")]
pub mod tennis_table;

#[cfg(feature = "tennis")]
pub use tennis_cx::onnx_to_tennis;

pub use error::{ControlFlowError, LowerError, RewriteError};
#[cfg(any(feature = "nnabla", feature = "tennis"))]
pub(crate) use refused::Refusals;
pub use refused::{ImportTarget, Reason, Refusal, Refused, Subject, Unsupported};

/// What the import needs besides the model.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Fixed shapes for inputs with symbolic dimensions: `(input name,
    /// dimensions)`.
    pub input_shapes: Vec<(String, Vec<i64>)>,
    /// Inputs fixed to constant values: `(input name, values)`, in the
    /// input's element type and row-major order of its shape (declared, or
    /// fixed by [`input_shapes`](Self::input_shapes)). Each becomes a
    /// constant, leaves the imported network's inputs, and folding decides
    /// what depends on it (an `If` on it inlines the branch it takes).
    pub input_values: Vec<(String, Vec<f64>)>,
}

impl ImportOptions {
    /// Fixes input `name` to the constant `values` (the CLI's
    /// `--input-value NAME=V0,V1,...`).
    pub fn input_value(mut self, name: impl Into<String>, values: Vec<f64>) -> Self {
        self.input_values.push((name.into(), values));
        self
    }

    /// Fixes the shape of input `name`.
    pub fn input_shape(mut self, name: impl Into<String>, dims: Vec<i64>) -> Self {
        self.input_shapes.push((name.into(), dims));
        self
    }
}

/// The values of a constant of zeros of `dims` that a lowering makes (a
/// missing bias or initial state), refused past
/// [`fold::MAX_FOLD_ELEMENTS`] values: `dims` come from the model's
/// declared shapes, and a hostile one declares any size.
#[cfg(any(feature = "nnabla", feature = "tennis"))]
pub(crate) fn zeros(what: &str, dims: &[i64]) -> Result<Vec<f64>, LowerError> {
    let n = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
        .filter(|&n| n <= fold::MAX_FOLD_ELEMENTS)
        .ok_or_else(|| {
            LowerError::Other(format!(
                "a {what} of zeros of shape {dims:?} (more than {} values)",
                fold::MAX_FOLD_ELEMENTS
            ))
        })?;
    Ok(vec![0.0; n])
}

/// Parses `NAME=1,3,224,224` (the CLI's `--input-shape`).
pub fn parse_input_shape(s: &str) -> Result<(String, Vec<i64>), ImportError> {
    let bad = || ImportError::Invalid(format!("--input-shape {s:?}: expected NAME=D0,D1,..."));
    let (name, dims) = s.rsplit_once('=').ok_or_else(bad)?;
    if name.is_empty() {
        return Err(bad());
    }
    let dims = if dims.trim().is_empty() {
        Vec::new()
    } else {
        dims.split(',')
            .map(|d| d.trim().parse::<i64>().ok().filter(|&v| v >= 0))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?
    };
    Ok((name.to_string(), dims))
}

/// Parses `NAME=16000` or `NAME=1,0.5,2` (the CLI's `--input-value`).
pub fn parse_input_value(s: &str) -> Result<(String, Vec<f64>), ImportError> {
    let bad = || ImportError::Invalid(format!("--input-value {s:?}: expected NAME=V0,V1,..."));
    let (name, vals) = s.rsplit_once('=').ok_or_else(bad)?;
    if name.is_empty() || vals.trim().is_empty() {
        return Err(bad());
    }
    let vals = vals
        .split(',')
        .map(|v| v.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(bad)?;
    Ok((name.to_string(), vals))
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The ONNX file itself could not be read.
    #[error(transparent)]
    Onnx(#[from] onnx_format::Error),
    /// The model is malformed (or an option does not fit it).
    #[error("invalid ONNX model: {0}")]
    Invalid(String),
    /// The target cannot express parts of the model; the message names
    /// every operator (and attribute value) with its count, and
    /// [`ImportError::refusals`] gives them typed.
    #[error("{0}")]
    Unsupported(Unsupported),
    /// An input has a symbolic dimension the target cannot keep.
    #[error("{0}")]
    SymbolicShape(String),
}

impl ImportError {
    /// The refusals of an [`Unsupported::Refused`] import, each with its
    /// typed reason and count; empty for any other error.
    pub fn refusals(&self) -> &[Refusal] {
        match self {
            ImportError::Unsupported(u) => u.refusals(),
            _ => &[],
        }
    }
}

/// One row of a support table: the ONNX operator, its opsets, the
/// attributes read, and the target operators it becomes.
#[derive(Debug, Clone, Copy)]
pub struct SupportRow {
    /// ONNX operator.
    pub op: &'static str,
    /// Lowest and highest opset.
    pub opsets: (i64, i64),
    /// Attributes (and constant inputs) read.
    pub attrs: &'static str,
    /// Target operators emitted.
    pub emits: &'static str,
    /// Limits of the lowering (what is refused).
    pub notes: &'static str,
}

/// Appends a markdown row per support row to `s`, the last column the
/// count of verified cases `verified` gives (or "— (no case)").
#[cfg(any(feature = "nnabla", feature = "tennis"))]
fn push_rows(s: &mut String, rows: &[SupportRow], verified: &dyn Fn(&str) -> usize) {
    for r in rows {
        let v = verified(r.op);
        let cases = if v > 0 {
            v.to_string()
        } else {
            "— (no case)".into()
        };
        s.push_str(&format!(
            "| {} | {}–{} | {} | {} | {} | {cases} |\n",
            r.op, r.opsets.0, r.opsets.1, r.attrs, r.emits, r.notes,
        ));
    }
}

/// The published support table (markdown) of ONNX import, generated from
/// the operator tables; `verified` gives, per ONNX operator, how many
/// cases of the ONNX conformance suite using it convert and compute the
/// expected result in the real nnabla 1.39 (and none computes anything
/// else). `IMPORT_SUPPORT.md` holds its output; a test keeps it fresh.
pub fn support_table_markdown(verified: &dyn Fn(&str) -> usize) -> String {
    #[cfg(not(feature = "nnabla"))]
    let _ = verified;
    let mut s = String::from(
        "# ONNX import: supported operators\n\n\
         Generated from the import tables of `graph-translate` \
         (`support_table_markdown`, kept fresh by a test). Every operator is \
         verified on the cases of the ONNX operator conformance suite (onnx \
         1.23.2 node tests) that use it, and on the same cases with their \
         parameters as constants (`frozen_param_cases.py`, \
         `const_param_cases.py`; the node tests feed them at run time): \
         converted to `.nnp`, run in the real nnabla 1.39 and compared with \
         the case's expected outputs \
         (`testdata/translate/import/nnabla.json`). Constant shape \
         arithmetic (",
    );
    s.push_str(&fold::folded_by_all_ops().join(", "));
    s.push_str(
        ") is folded at import time whenever its inputs are constants \
         or static shapes.\n\n\
         Models of opsets 1 to 6 are read in their opset-7 meaning: each \
         node of an operator version older than opset 7's is rewritten \
         before it is lowered (limited broadcast through `broadcast`/`axis` \
         becomes numpy broadcasting, with an Unsqueeze where `axis` does not \
         align the ends; `is_test` 1 of BatchNormalization and Dropout is \
         inference; `consumed_inputs` is dropped; Reshape's `shape`, Tile's \
         `tiles`/`axis` and Split's lengths input become opset-7 inputs and \
         attributes; Pad's `paddings`, Cast's string `to`, Concat's default \
         axis 1, Upsample's `height_scale`/`width_scale` (nearest), \
         LpPool's float `p`, a per-channel PRelu slope, Selu's old defaults \
         and Clip without bounds are carried over). What the old versions \
         meant that opset 7 cannot say is refused, naming the operator, the \
         attribute value and the opset: training mode (`is_test` 0), \
         Dropout's mask in test mode, shapes the old broadcast forbids, \
         bilinear Upsample, a Clip with one bound, Split without an axis at \
         opset 1, operators of later opsets. The opsets column gives the \
         first opset an operator is read at. Verified on the onnx wheel's 79 \
         opset-6 model tests and 34 committed old-opset models \
         (`testdata/translate/import/legacy.json`) in both runtimes.\n\n\
         `If` is imported when its condition is known at import time: a \
         constant, folded shape arithmetic, or a graph input the user fixes \
         with `--input-value NAME=V,...` (Python: `input_value={...}`). The \
         branch taken is inlined in its place (its names prefixed with the \
         `If`'s, its outputs renamed to the `If`'s; nested `If`s too) and \
         lowered like the rest of the graph. An `If` on a run-time value is \
         computed as both branches and a `Where` of the condition over \
         their outputs, when each output has one shape in both branches \
         (verified in nnabla 1.39: `testdata/translate/if_select`); else it \
         is refused, and the message names the graph inputs its condition \
         depends on. A `Loop` whose trip count is known at import time (a \
         constant, folded, or fixed with `--input-value`) and whose body \
         gives its condition back unchanged is unrolled, at most 1,024 \
         iterations: its body inlined once per iteration, the loop-carried \
         values passed on, the per-iteration outputs stacked by `Unsqueeze` \
         and `Concat`; a `Scan` over sequences of static length likewise, \
         element `t` read by a `Gather` (both directions, any scan axes; \
         opset 8's form each item of its batch axis on its own, its sequence \
         lengths absent or all the full length). Verified in nnabla 1.39 and \
         TenniS: `testdata/translate/unroll` and `unroll_more`. A body that \
         computes its condition is \
         unrolled while that condition folds to true (tf2onnx's Keras while \
         loops); a condition, a trip count or a sequence length known only at \
         run time are refused, \
         saying what would make them importable. Calls of the model's own \
         functions (`ModelProto.functions`, which onnxscript and the dynamo \
         exporter write) are expanded into the functions' nodes first, \
         attributes taken by reference given the call's values.\n",
    );
    #[cfg(feature = "nnabla")]
    {
        let rows = nnabla_table::support_rows();
        let n_ver = rows.iter().filter(|r| verified(r.op) > 0).count();
        s.push_str(&format!(
            "\n## ONNX → NNabla ({} operators, {n_ver} verified in nnabla 1.39)\n\n\
             | ONNX op | opsets | attributes / inputs read | NNabla functions | refused | conformance cases passing in nnabla |\n\
             |---|---|---|---|---|---|\n",
            rows.len()
        ));
        push_rows(&mut s, &rows, verified);
    }
    s
}

/// The TenniS section of `IMPORT_SUPPORT.md`, generated from
/// [`tennis_table::TABLE`]; `verified` gives, per ONNX operator, how many
/// conformance cases using it convert to `.tsm` and compute the expected
/// result in the real TenniS runtime.
#[cfg(feature = "tennis")]
pub fn tennis_support_markdown(verified: &dyn Fn(&str) -> usize) -> String {
    let rows = tennis_table::support_rows();
    let n_ver = rows.iter().filter(|r| verified(r.op) > 0).count();
    let mut s = format!(
        "\n## ONNX → TenniS ({} operators, {n_ver} verified in TenniS)\n\n\
         Verified the same way in the real TenniS runtime (CPU, \
         `testdata/translate/import/tennis.json`); lowerings compute in f32 unless their row names integer, boolean or f64 tensors (inputs, constants, casts, comparisons, logic, integer arithmetic, and the operators that only move elements keep the element type; a boolean input is a uint8 0/1 `<param>`, as TenniS's C API builds no BOOLEAN tensors).\n\n\
         | ONNX op | opsets | attributes / inputs read | TenniS operators | refused | conformance cases passing in TenniS |\n\
         |---|---|---|---|---|---|\n",
        rows.len()
    );
    push_rows(&mut s, &rows, verified);
    s
}
