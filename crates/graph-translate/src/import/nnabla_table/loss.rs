//! NNabla import rows of losses (lowered in `nnabla_ops_loss`).

use super::super::nnabla_ops_loss as loss;
use super::{Entry, e, since};

/// The loss rows.
pub(super) static LOSS: &[Entry] = &[
    since(
        e(
            "NegativeLogLikelihoodLoss",
            "reduction, ignore_index, weight",
            "NotEqualScalar, Mul2, Concatenate, GatherNd, Gather, MulScalar, Sum/Mean, Div2",
            "symbolic dimensions",
            loss::nll_loss,
        ),
        12,
    ),
    since(
        e(
            "SoftmaxCrossEntropyLoss",
            "reduction, ignore_index, weights, log_prob output",
            "LogSoftmax, then as NegativeLogLikelihoodLoss",
            "symbolic dimensions",
            loss::softmax_cross_entropy,
        ),
        12,
    ),
];
