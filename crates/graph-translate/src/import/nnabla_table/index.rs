//! NNabla import rows of indexing: gathers, scatters, selection (lowered in `nnabla_ops_index`).

use super::super::nnabla_ops_index as ix;
use super::{Entry, e, since, until};

/// The indexing rows.
pub(super) static INDEX: &[Entry] = &[
    since(
        e(
            "GatherElements",
            "axis",
            "Concatenate, GatherNd (+ LessScalar, MulScalar, Add2 for run-time indices)",
            "symbolic batch",
            ix::gather_elements,
        ),
        11,
    ),
    since(
        e(
            "ScatterElements",
            "axis, reduction (none, add)",
            "MulScalar, Concatenate, ScatterNd / ScatterAdd",
            "reduction mul, max, min",
            ix::scatter_elements,
        ),
        11,
    ),
    until(
        since(
            e(
                "Scatter",
                "axis",
                "MulScalar, Concatenate, ScatterNd",
                "",
                ix::scatter_elements,
            ),
            9,
        ),
        10,
    ),
    since(
        e(
            "GatherND",
            "batch_dims=0",
            "Transpose, GatherNd (+ LessScalar, Mul2, Add2 for run-time indices)",
            "batch_dims",
            ix::gather_nd,
        ),
        11,
    ),
    since(
        e(
            "ReverseSequence",
            "batch_axis, time_axis",
            "Less, AddScalar, Sub2, Where, Concatenate, GatherNd",
            "",
            ix::reverse_sequence,
        ),
        10,
    ),
    since(
        e(
            "GridSample",
            "mode (linear), padding_mode, align_corners",
            "WarpByGrid",
            "nearest and cubic modes",
            ix::grid_sample,
        ),
        16,
    ),
    e(
        "Hardmax",
        "axis",
        "Transpose, TopKData (with_index), OneHot (+ Reshape before opset 13)",
        "symbolic batch",
        ix::hardmax,
    ),
    since(
        e(
            "ScatterND",
            "reduction (none, add)",
            "MulScalar, Transpose, ScatterNd",
            "reduction mul, max, min",
            ix::scatter_nd,
        ),
        11,
    ),
];
