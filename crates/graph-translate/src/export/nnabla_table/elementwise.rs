//! The rows of [`super::TABLE`] for nnabla 1.39's elementwise functions:
//! arithmetic, logic and math, in the order of its function list.

use super::*;

/// Arithmetic, logic and math.
pub(super) static ELEMENTWISE: &[Entry<Lowering>] = &[
    // Arithmetic
    Entry::lowered("Add2", &[], &["Add"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("AddN", &[], &["Sum"], (low!(add_n), Custom), T).cases(1),
    Entry::lowered("BcAdd2", &[], &["Add"], (low!(binary), Broadcast), T).cases(1),
    Entry::lowered("Sub2", &[], &["Sub"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("Mul2", &[], &["Mul"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("MulN", &[], &["Mul"], (low!(mul_n), Custom), T).cases(1),
    Entry::lowered("Div2", &[], &["Div"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("Pow2", &[], &["Pow"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("AddScalar", &["val"], &["Add"], (low!(scalar), Same), T).cases(1),
    Entry::lowered("MulScalar", &["val"], &["Mul"], (low!(scalar), Same), T).cases(1),
    Entry::lowered("PowScalar", &["val"], &["Pow"], (low!(scalar), Same), T).cases(2),
    Entry::lowered("RSubScalar", &["val"], &["Sub"], (low!(rscalar), Same), T).cases(1),
    Entry::lowered("RDivScalar", &["val"], &["Div"], (low!(rscalar), Same), T).cases(1),
    Entry::lowered("RPowScalar", &["val"], &["Pow"], (low!(rscalar), Same), T).cases(1),
    // Logical
    Entry::lowered("Sign", &[], &["Sign"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Minimum2", &[], &["Min"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("Maximum2", &[], &["Max"], (low!(binary), Broadcast), T).cases(2),
    Entry::lowered("MinimumScalar", &["val"], &["Min"], (low!(scalar), Same), T).cases(1),
    Entry::lowered("MaximumScalar", &["val"], &["Max"], (low!(scalar), Same), T).cases(1),
    Entry::lowered(
        "LogicalAnd",
        &[],
        &["And", "Cast"],
        (low!(logical), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LogicalOr",
        &[],
        &["Or", "Cast"],
        (low!(logical), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LogicalXor",
        &[],
        &["Xor", "Cast"],
        (low!(logical), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Equal",
        &[],
        &["Equal", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "NotEqual",
        &[],
        &["Equal", "Not", "Cast"],
        (low!(not_equal), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "GreaterEqual",
        &[],
        &["GreaterOrEqual", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Greater",
        &[],
        &["Greater", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LessEqual",
        &[],
        &["LessOrEqual", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Less",
        &[],
        &["Less", "Cast"],
        (low!(compare), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered(
        "SearchSorted",
        &["right"],
        &["Unsqueeze", "Less", "Not", "Cast", "ReduceSum"],
        (low!(search_sorted), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "LogicalAndScalar",
        &["val"],
        &["And", "Cast"],
        (low!(logical_scalar), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "LogicalOrScalar",
        &["val"],
        &["Or", "Cast"],
        (low!(logical_scalar), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "LogicalXorScalar",
        &["val"],
        &["Xor", "Cast"],
        (low!(logical_scalar), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "EqualScalar",
        &["val"],
        &["Equal", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "NotEqualScalar",
        &["val"],
        &["Equal", "Not", "Cast"],
        (low!(not_equal_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "GreaterEqualScalar",
        &["val"],
        &["GreaterOrEqual", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "GreaterScalar",
        &["val"],
        &["Greater", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LessEqualScalar",
        &["val"],
        &["LessOrEqual", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LessScalar",
        &["val"],
        &["Less", "Cast"],
        (low!(compare_scalar), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "LogicalNot",
        &[],
        &["Cast", "Not"],
        (low!(logical_not), Same),
        T,
    )
    .cases(1),
    Entry::lowered("IsNaN", &[], &["IsNaN", "Cast"], (low!(is_test), Same), T).cases(1),
    Entry::lowered("IsInf", &[], &["IsInf", "Cast"], (low!(is_test), Same), T).cases(1),
    Entry::lowered(
        "ResetNaN",
        &["val"],
        &["IsNaN", "Where"],
        (low!(reset_nan), Same),
        T,
    )
    .cases(1),
    Entry::lowered(
        "ResetInf",
        &["val"],
        &["IsInf", "Where"],
        (low!(reset_inf), Same),
        T,
    )
    .cases(1),
    Entry::lowered("Where", &[], &["Cast", "Where"], (low!(where_), Custom), T).cases(1),
    // Math
    Entry::lowered(
        "Constant",
        &["val", "shape"],
        &["Identity"],
        (low!(constant), Custom),
        T,
    )
    .cases(1),
    Entry::lowered(
        "Arange",
        &["start", "stop", "step"],
        &["Identity"],
        (low!(arange), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Linspace",
        &["start", "stop", "num"],
        &["Identity"],
        (low!(linspace), Custom),
        T,
    )
    .cases(2),
    Entry::lowered("Abs", &[], &["Abs"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Exp", &[], &["Exp"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Log", &[], &["Log"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Identity", &[], &["Identity"], (low!(unary), Same), T).cases(1),
    Entry::lowered(
        "BatchMatmul",
        &["transpose_a", "transpose_b"],
        &["MatMul"],
        (low!(batch_matmul), LargerRank),
        T,
    )
    .cases(2),
    Entry::lowered("Round", &[], &["Round"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Ceil", &[], &["Ceil"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Floor", &[], &["Floor"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Sin", &[], &["Sin"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Cos", &[], &["Cos"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Tan", &[], &["Tan"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Sinh", &[], &["Sinh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Cosh", &[], &["Cosh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ASin", &[], &["Asin"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ACos", &[], &["Acos"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ATan", &[], &["Atan"], (low!(unary), Same), T).cases(1),
    Entry::lowered(
        "ATan2",
        &[],
        &["Div", "Atan", "Less", "Greater", "Add", "Where"],
        (low!(atan2), Broadcast),
        T,
    )
    .cases(1),
    Entry::lowered("ASinh", &[], &["Asinh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ACosh", &[], &["Acosh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("ATanh", &[], &["Atanh"], (low!(unary), Same), T).cases(1),
    Entry::lowered("Erf", &[], &["Erf"], (low!(unary), Same), T).cases(1),
];
