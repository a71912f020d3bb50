//! TenniS import rows of activations (lowered in `tennis_ops_act`).

use super::super::tennis_ops_act as act;
use super::super::tennis_ops_log as log;
use super::{Entry, F32, e, since};

/// The activation rows.
pub(super) static ACTIVATION: &[Entry] = &[
    e("Erf", "", "erf", F32, act::erf),
    e(
        "Log",
        "",
        "_cast (f64), pow (2^-20), sub, mul, add, mul (the series of ln(1 + u)), mul (2^20), exp, mul, sub, add (a Newton step), _cast (f32), equal, where (ln 0 = −inf, ln inf = inf): TenniS has no log",
        F32,
        log::log,
    ),
    e(
        "LogSoftmax",
        "axis",
        "max, sub, exp, reduce_sum, Log's nodes, sub (x − max − ln Σ exp(x − max)); opsets < 13: _reshape around it",
        F32,
        log::log_softmax,
    ),
    e(
        "Softplus",
        "",
        "maximum, abs, mul, softplus, add (max(x, 0) + softplus(−|x|): TenniS's log(exp(x) + 1) overflows above x ≈ 88)",
        F32,
        act::softplus_op,
    ),
    since(
        e(
            "Mish",
            "",
            "mul, maximum, exp, add, div (x · n / (n + 2), n = u(u + 2), u = exp(min(x, 20)))",
            F32,
            act::mish,
        ),
        18,
    ),
    since(
        e(
            "LayerNormalization",
            "axis, epsilon, stash_type 1; outputs Y, Mean, InvStdDev",
            "reduce_mean per axis, sub, mul, add, sqrt, div, mul, add",
            "stash_type 0, symbolic dimensions",
            act::layer_normalization,
        ),
        17,
    ),
    since(
        e(
            "RMSNormalization",
            "axis, epsilon, stash_type 1",
            "mul, reduce_mean per axis, add, sqrt, div, mul",
            "stash_type 0, symbolic dimensions",
            act::rms_normalization,
        ),
        23,
    ),
    e(
        "HardSigmoid",
        "alpha, beta",
        "hard_sigmoid",
        F32,
        act::hard_sigmoid,
    ),
    since(
        e("HardSwish", "", "hard_sigmoid, mul", F32, act::hard_swish),
        14,
    ),
    e(
        "Elu",
        "alpha",
        "maximum, sub, exp, sub, mul, add",
        F32,
        act::elu,
    ),
    e(
        "Selu",
        "alpha, gamma",
        "maximum, sub, exp, sub, mul, add, mul",
        F32,
        act::selu,
    ),
    e(
        "Pow",
        "exponent (constant, one value)",
        "pow",
        "an exponent computed at run time or with several values",
        act::pow,
    ),
];
