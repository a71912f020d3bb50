//! NNabla import rows of normalisations (lowered in `nnabla_ops_norm`).

use super::super::nnabla_ops_norm as norm;
use super::{Entry, F32, e, since};

/// The normalisation rows.
pub(super) static NORMALIZATION: &[Entry] = &[
    e(
        "BatchNormalization",
        "epsilon, momentum",
        "BatchNormalization",
        "training mode",
        norm::batch_norm,
    ),
    e(
        "InstanceNormalization",
        "epsilon",
        "InstanceNormalization",
        "",
        norm::instance_norm,
    ),
    since(
        e(
            "LayerNormalization",
            "axis, epsilon",
            "LayerNormalization",
            "",
            norm::layer_norm,
        ),
        17,
    ),
    e("Softmax", "axis", "Softmax", "", norm::softmax),
    e("LogSoftmax", "axis", "LogSoftmax", "", norm::log_softmax),
    since(
        e(
            "RMSNormalization",
            "axis, epsilon",
            "Mul2, Mean, AddScalar, PowScalar",
            F32,
            norm::rms_norm,
        ),
        23,
    ),
    since(
        e(
            "GroupNormalization",
            "num_groups, epsilon",
            "GroupNormalization",
            "per-group scale computed at run time",
            norm::group_norm,
        ),
        18,
    ),
    e(
        "LpNormalization",
        "axis, p (1 or 2)",
        "Abs/Mul2, Sum, PowScalar, Div2",
        "p other than 1, 2",
        norm::lp_norm,
    ),
    since(
        e(
            "MeanVarianceNormalization",
            "axes",
            "Mean, Sub2, Mul2, AddScalar, PowScalar",
            F32,
            norm::mvn,
        ),
        9,
    ),
];
