//! Why a lowering refuses one node ([`LowerError`]). The driver turns each
//! into an `Op (reason)` entry of [`super::ImportError::Unsupported`]
//! ([`super::Reason::Lower`] of a [`super::Refusal`]), so the Display
//! text of every variant is the reason exactly as the tests and the
//! published support notes quote it.

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
    /// An index outside the range of what it indexes (`of` names it: a
    /// `dimension`, a `size`).
    #[error("index {index} out of range for a {of} of {size}")]
    IndexOutOfRange {
        /// The index as given.
        index: i64,
        /// What it indexes.
        of: &'static str,
        /// The size indexed.
        size: i64,
    },
    /// A `Constant` node's tensor (its `value` attribute) cannot be read.
    #[error("value: {error}")]
    ConstantTensor {
        /// Why, as the ONNX reader says it.
        error: String,
    },
    /// A `Constant` node's attribute `attr` holds no value of its kind
    /// (such as a `value_floats` that does not fit a tensor).
    #[error("{attr}")]
    ConstantValue {
        /// The attribute (`value_float`, `value_ints`, ...).
        attr: &'static str,
    },
    /// A `Constant` node's attribute of a kind the import does not take
    /// (`sparse_value`, `value_string`, `value_strings`).
    #[error("attribute {attr}")]
    ConstantKind {
        /// The attribute.
        attr: String,
    },
    /// A `Constant` node with no value attribute.
    #[error("Constant without a value")]
    ConstantWithoutValue,
    /// Inputs of an element type the lowering does not take, and why
    /// (`what`: `input` or `inputs`).
    #[error("{} {what} ({why})", onnx_name(*elem))]
    ElemType {
        /// The ONNX element type.
        elem: i32,
        /// `input` or `inputs`.
        what: &'static str,
        /// Why (what the target or the lowering takes).
        why: &'static str,
    },
    /// A symbolic (or empty) dimension where the lowering needs a static
    /// one: `--input-shape` fixes it (`what` names it, `plural` when the
    /// refusal says "them").
    #[error("{what} (fix {} with --input-shape)", if *plural { "them" } else { "it" })]
    NeedsInputShape {
        /// What is symbolic.
        what: &'static str,
        /// Whether `what` is plural.
        plural: bool,
    },
    /// A size past what the lowering writes: an element count that
    /// overflows, a tensor past its bound (the text says which).
    #[error("{0}")]
    TooLarge(&'static str),
    /// An attribute or input value the lowering does not take: `name
    /// value` (the value formatted as the refusal shows it).
    #[error("{name} {value}")]
    Value {
        /// The attribute or input (`auto_pad`, `pads`, `perm`, ...).
        name: &'static str,
        /// Its value, formatted.
        value: String,
    },
    /// A named input or attribute the node needs is absent: `what missing`.
    #[error("{what} missing")]
    Missing {
        /// The input or attribute (`x`, `indices`, `kernel_shape`, ...).
        what: &'static str,
    },
    /// Something the node needs is absent: `no what`.
    #[error("no {what}")]
    Absent {
        /// What is absent (`starts`, `inputs`, `pads`, ...).
        what: &'static str,
    },
    /// Any other reason, as text.
    #[error("{0}")]
    Other(String),
}

impl LowerError {
    /// [`LowerError::NeedsInputShape`] of one thing: `what (fix it with
    /// --input-shape)`.
    /// [`LowerError::Value`]: `name value`, the value as `Display` shows it.
    #[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
    pub(crate) fn value(name: &'static str, value: impl std::fmt::Display) -> Self {
        LowerError::Value {
            name,
            value: value.to_string(),
        }
    }

    /// [`LowerError::Missing`]: `what missing`.
    #[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
    pub(crate) fn missing(what: &'static str) -> Self {
        LowerError::Missing { what }
    }

    /// [`LowerError::Absent`]: `no what`.
    #[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
    pub(crate) fn absent(what: &'static str) -> Self {
        LowerError::Absent { what }
    }

    #[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
    pub(crate) fn needs_shape(what: &'static str) -> Self {
        LowerError::NeedsInputShape {
            what,
            plural: false,
        }
    }

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

/// Why a node of an opset older than 7 is not rewritten to its opset-7
/// meaning (the `legacy` front pass): the refusal shows it as the reason
/// of `Op (reason)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// The operator does not exist at `opset`: it first appeared in
    /// opset `since` (`None`: an opset after 6).
    #[error(
        "not an operator of ONNX opset {opset}; it appeared in {}",
        since.map_or_else(|| "a later opset".to_string(), |s| format!("opset {s}"))
    )]
    NotYetAnOperator {
        /// The model's opset.
        opset: i64,
        /// The opset the operator appeared in, when it is 6 or older.
        since: Option<i64>,
    },
    /// The node lacks inputs or attributes the old version requires
    /// (`what`: `two inputs`, `an input`, `height_scale and width_scale`).
    #[error("needs {0}")]
    Needs(&'static str),
    /// A required attribute is absent (the opset is named when the
    /// refusal names it).
    #[error(
        "no attribute {attr}{}",
        opset.map_or_else(String::new, |o| format!(" at opset {o}"))
    )]
    MissingAttr {
        /// The attribute.
        attr: &'static str,
        /// The model's opset, when named.
        opset: Option<i64>,
    },
    /// The static shape of an input (`of`: `input`, `first input`,
    /// `slope`, ...) is not known, and the rewrite depends on it.
    #[error("the shape of its {0} is not known")]
    UnknownShape(&'static str),
    /// Inputs the rewrite needs as constants (`what`) are computed at run
    /// time.
    #[error("{what} computed at run time at opset {opset}")]
    NotConstant {
        /// What is not constant (`split lengths`, `tiles or axis`).
        what: &'static str,
        /// The model's opset.
        opset: i64,
    },
    /// `is_test` 0: the training behaviour (`does` says what it does).
    #[error("is_test 0 at opset {opset}: training mode, which {does}")]
    TrainingMode {
        /// The model's opset.
        opset: i64,
        /// What training mode does.
        does: &'static str,
    },
    /// An attribute value, or an absent attribute, whose old meaning opset 7
    /// cannot express: `what` names it (`broadcast 2`, `mode "linear"`,
    /// `no max`), `why` (empty, or starting with its separator) says why.
    #[error("{what} at opset {opset}{why}")]
    Attr {
        /// The attribute and its value, as the refusal shows them.
        what: String,
        /// The model's opset.
        opset: i64,
        /// Why, with its leading separator (` (...)`, `: ...`), or empty.
        why: String,
    },
    /// Input shapes the old meaning does not take (a broadcast whose shapes
    /// do not fit, a slope or an axis that does not match the input):
    /// `what` names the setting, `why` (starting with its separator) the
    /// shapes.
    #[error("{what} at opset {opset}{why}")]
    Shapes {
        /// The setting, as the refusal shows it.
        what: String,
        /// The model's opset.
        opset: i64,
        /// The shapes and why they do not fit, with the leading separator.
        why: String,
    },
}

#[cfg_attr(not(any(feature = "nnabla", feature = "tennis")), allow(dead_code))]
impl RewriteError {
    /// [`RewriteError::Attr`].
    pub(crate) fn attr(what: impl Into<String>, opset: i64, why: impl Into<String>) -> Self {
        RewriteError::Attr {
            what: what.into(),
            opset,
            why: why.into(),
        }
    }

    /// [`RewriteError::Shapes`].
    pub(crate) fn shapes(what: impl Into<String>, opset: i64, why: impl Into<String>) -> Self {
        RewriteError::Shapes {
            what: what.into(),
            opset,
            why: why.into(),
        }
    }
}

/// Why an `If` is not inlined, or a `Loop` or `Scan` not unrolled: the
/// refusal shows it as the reason of `If (reason)`, `Loop (reason)` or
/// `Scan (reason)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ControlFlowError {
    /// The node lacks its subgraph attribute (`key`: `then_branch`,
    /// `else_branch`; a `Loop` or `Scan` without `body` is
    /// [`ControlFlowError::NoBody`]).
    #[error("no {key}")]
    NoBranch {
        /// The attribute.
        key: &'static str,
    },
    /// A `Loop` or `Scan` without a body.
    #[error("it has no body")]
    NoBody,
    /// An `If` without a condition input.
    #[error("it has no condition")]
    NoCondition,
    /// An `If` whose constant condition is not one element.
    #[error("its condition has {0} elements, not 1")]
    ConditionSize(usize),
    /// A subgraph (`key`) whose outputs do not match the node's.
    #[error("its {key} has {has} outputs, the node {node}")]
    SubgraphOutputs {
        /// The subgraph (`then_branch`, `else_branch`, `body`).
        key: &'static str,
        /// Its outputs.
        has: usize,
        /// The node's outputs.
        node: usize,
    },
    /// A subgraph (`key`) with sparse initializers.
    #[error("its {key} has sparse initializers")]
    SparseInitializers {
        /// The subgraph.
        key: &'static str,
    },
    /// A subgraph's initializer that cannot be read.
    #[error("{key} initializer: {error}")]
    Initializer {
        /// The subgraph.
        key: &'static str,
        /// Why, as the ONNX reader says it.
        error: String,
    },
    /// A `Loop` body whose inputs and outputs do not match the node's
    /// loop-carried values.
    #[error("its body has {ins} inputs and {outs} outputs for {state} loop-carried values")]
    LoopArity {
        /// The body's inputs.
        ins: usize,
        /// The body's outputs.
        outs: usize,
        /// The node's loop-carried values.
        state: usize,
    },
    /// A `Loop` with neither a trip count nor a condition its body changes.
    #[error("it has no trip count and its body keeps its condition: it would never stop")]
    NeverStops,
    /// A `Loop` whose trip count (value `name`) is computed at run time
    /// (`--input-value` on the graph input it comes from would fix it).
    #[error(
        "its trip count {name:?} is computed at run time; a constant one (an initializer, \
         folded shapes, or --input-value on the graph input it comes from) would unroll it"
    )]
    TripCountAtRunTime {
        /// The trip count's value name.
        name: String,
    },
    /// A `Loop` whose initial condition (value `name`) is computed at run
    /// time.
    #[error(
        "its condition {name:?} is computed at run time; a constant true one (an \
         initializer, folded values, or --input-value on the graph input it comes from) \
         would unroll it"
    )]
    ConditionAtRunTime {
        /// The condition's value name.
        name: String,
    },
    /// A `Loop` whose body computes its condition from what it computes
    /// (it may stop early at run time).
    #[error(
        "its body computes its condition at run time (a loop that may stop early on what it \
         computes)"
    )]
    BodyConditionAtRunTime,
    /// A negative trip count.
    #[error("trip count {0}")]
    TripCount(i64),
    /// A `Loop` that runs no iteration but stacks an output over them.
    #[error(
        "it runs no iteration (a trip count of 0 or a false condition), and an output stacked \
         over the iterations would be empty"
    )]
    NoIteration,
    /// No iteration ran, yet outputs are stacked over the iterations.
    #[error("no iteration ran, and outputs are stacked over them")]
    NothingStacked,
    /// More iterations than are unrolled.
    #[error("{iterations} iterations, more than the {limit} unrolled")]
    TooManyIterations {
        /// The iterations asked for.
        iterations: usize,
        /// The most unrolled.
        limit: usize,
    },
    /// More nodes (iterations × body nodes) than an unrolled loop may become.
    #[error(
        "{iterations} iterations of a body of {body} nodes, more than the {limit} nodes unrolled"
    )]
    TooManyNodes {
        /// The iterations asked for.
        iterations: usize,
        /// The body's nodes.
        body: usize,
        /// The most nodes unrolled.
        limit: usize,
    },
    /// A `Loop` whose condition still holds after the most iterations
    /// unrolled.
    #[error("its condition still holds after {limit} iterations, the most unrolled")]
    StillRunning {
        /// The most iterations unrolled.
        limit: usize,
    },
    /// A `Scan` sequence (value `name`) whose length is not known
    /// statically (`--input-shape` would fix it).
    #[error("the length of its sequence {name:?} is not known (--input-shape would fix it)")]
    UnknownLength {
        /// The sequence's value name.
        name: String,
    },
    /// A `Scan` whose sequences have different lengths.
    #[error("its sequences have different lengths")]
    DifferentLengths,
    /// A `Scan` without sequences.
    #[error("it has no sequence")]
    NoSequence,
    /// A `Scan` whose sequences are empty.
    #[error("its sequences are empty")]
    EmptySequences,
    /// A `Scan` without `num_scan_inputs`.
    #[error("it has no num_scan_inputs")]
    NoScanInputs,
    /// A `Scan` with fewer inputs than `num_scan_inputs`.
    #[error("fewer inputs than num_scan_inputs")]
    FewerInputs,
    /// A `Scan` body whose inputs and outputs do not match the node's.
    #[error("its body's inputs and outputs do not match the node's")]
    ScanArity,
    /// An opset-8 `Scan`'s batch axis 0 (the reason for it inside).
    #[error("{0} (along the batch axis 0)")]
    AlongBatch(Box<ControlFlowError>),
    /// An opset-8 `Scan` whose constant sequence lengths (value `name`)
    /// are not all the full length `steps`.
    #[error(
        "its sequence lengths {name:?} are not all the full length {steps} (only sequences of \
         one static length are unrolled)"
    )]
    PartialLengths {
        /// The lengths' value name.
        name: String,
        /// The sequences' static length.
        steps: usize,
    },
    /// An opset-8 `Scan` whose sequence lengths (value `name`) are
    /// computed at run time.
    #[error(
        "its sequence lengths {name:?} are computed at run time; constant ones, all {steps} \
         (an initializer, or --input-value on the graph input they come from), or none would \
         unroll it"
    )]
    LengthsAtRunTime {
        /// The lengths' value name.
        name: String,
        /// The sequences' static length.
        steps: usize,
    },
    /// An `If` whose condition is computed at run time, and whose branches
    /// give output `output` different (or unknown) shapes, so that it is
    /// not computed as both branches and a select. `--input-value` on the
    /// graph inputs `inputs` (those its condition is computed from through
    /// foldable nodes; none found: the message says to fix the input it
    /// depends on) would decide it.
    #[error(
        "its condition is computed at run time, and its branches give {output} different \
         shapes ({} and {}), so it is not computed as both branches and a select; {}",
        shape_text(then_shape.as_deref()),
        shape_text(else_shape.as_deref()),
        needs_input_value(inputs)
    )]
    BranchShapes {
        /// The output whose shapes differ.
        output: String,
        /// Its shape in the `then` branch, when known.
        then_shape: Option<Vec<i64>>,
        /// Its shape in the `else` branch, when known.
        else_shape: Option<Vec<i64>>,
        /// The graph inputs the condition is computed from.
        inputs: Vec<String>,
    },
    /// A value the unrolling computes could not be made (an iteration
    /// counter's tensor, a length past this machine's `usize`), as the
    /// failing call says it.
    #[error("{0}")]
    Internal(String),
}

/// A static shape as refusals show it (`unknown` when not known).
fn shape_text(s: Option<&[i64]>) -> String {
    s.map_or_else(|| "unknown".into(), |s| format!("{s:?}"))
}

/// What would decide a condition computed from graph inputs `inputs`.
fn needs_input_value(inputs: &[String]) -> String {
    if inputs.is_empty() {
        return "its condition is computed at run time; fixing the input it depends on with \
                --input-value NAME=... would make it importable"
            .into();
    }
    let fix: Vec<String> = inputs
        .iter()
        .map(|n| format!("--input-value {n}=..."))
        .collect();
    format!(
        "its condition is computed at run time from input(s) {}; {} \
         (ConvertOptions::input_values) would make it importable",
        inputs.join(", "),
        fix.join(" ")
    )
}

#[cfg(test)]
mod tests;
