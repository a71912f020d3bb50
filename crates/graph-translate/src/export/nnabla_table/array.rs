//! The rows of [`super::TABLE`] for nnabla 1.39's array manipulation
//! functions, in the order of its function list.

use super::*;

/// Array manipulation.
pub(super) static ARRAY: &[Entry<Lowering>] = &[
    // Array Manipulation
    Entry::lowered(
        "Concatenate",
        &["axis"],
        &["Concat"],
        (low!(concatenate), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Split",
        &["axis"],
        &["Split", "Squeeze"],
        (low!(split), Split),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Stack",
        &["axis"],
        &["Unsqueeze", "Concat"],
        (low!(stack), Stack),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Slice",
        &["start", "stop", "step"],
        &["Slice"],
        (low!(slice), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Pad",
        &["pad_width", "mode", "constant_value"],
        &["Pad"],
        (low!(pad), SameRank),
        O,
    )
    .cases(2),
    Entry::lowered(
        "Transpose",
        &["axes"],
        &["Transpose"],
        (low!(transpose), Transpose),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Broadcast",
        &["shape"],
        &["Expand"],
        (low!(broadcast), Custom),
        T,
    )
    .cases(1),
    Entry::lowered(
        "BroadcastTo",
        &["axis"],
        &["Shape", "Expand"],
        (low!(broadcast_to), SameRank),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Tile",
        &["reps"],
        &["Unsqueeze", "Tile"],
        (low!(tile), Custom),
        T,
    )
    .cases(3),
    Entry::lowered(
        "OneHot",
        &["shape"],
        &[
            "Less",
            "Add",
            "Where",
            "Mul",
            "ReduceSum",
            "Equal",
            "Cast",
            "Reshape",
        ],
        (low!(one_hot), Custom),
        T,
    )
    .cases(2),
    Entry::lowered("Flip", &["axes"], &["Slice"], (low!(flip), Same), T).cases(2),
    Entry::lowered(
        "Shift",
        &["shifts", "border_mode"],
        &["Gather"],
        (low!(shift), Same),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Sort",
        &["axis", "reverse", "with_index", "only_index"],
        &["TopK"],
        (low!(sort), Same),
        T,
    )
    .cases(3),
    Entry::lowered(
        "Reshape",
        &["shape"],
        &["Reshape"],
        (low!(reshape), Reshape),
        T,
    )
    .cases(2),
    Entry::lowered(
        "Shape",
        &["start", "end"],
        &["Shape", "Slice", "Cast"],
        (low!(shape_of), Custom),
        T,
    )
    .cases(3),
    Entry::lowered(
        "MatrixDiag",
        &[],
        &["Unsqueeze", "Cast", "Where"],
        (low!(matrix_diag), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "MatrixDiagPart",
        &[],
        &["Reshape", "Gather"],
        (low!(matrix_diag_part), Custom),
        T,
    )
    .cases(2),
    Entry::lowered("Trilu", &["k", "upper"], &["Mul"], (low!(trilu), Same), T).cases(3),
    Entry::lowered(
        "Meshgrid",
        &["ij_indexing"],
        &["Reshape", "Expand"],
        (low!(meshgrid), Custom),
        T,
    )
    .cases(3),
    Entry::lowered("BatchDet", &[], &["Det"], (low!(batch_det), PerMatrix), O).cases(2),
    Entry::refused(
        "BatchInv",
        "ONNX has no matrix inverse operator (an inverse unrolled for one matrix size is not \
         exported)",
    ),
    Entry::lowered(
        "BatchLogdet",
        &[],
        &["Det", "Abs", "Log"],
        (low!(batch_logdet), PerMatrix),
        O,
    )
    .cases(2),
    Entry::refused(
        "BatchCholesky",
        "ONNX has no Cholesky decomposition operator (a decomposition unrolled for one matrix \
         size is not exported)",
    ),
    Entry::refused("Assign", "training only"),
    Entry::lowered(
        "Gather",
        &["axis", "batch_dims"],
        &["Cast", "Gather"],
        (low!(gather), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "GatherNd",
        &[],
        &["Transpose", "Cast", "GatherND"],
        (low!(gather_nd), Custom),
        T,
    )
    .cases(2),
    Entry::refused(
        "BoolGather",
        "its output's first dimension is the number of true values in the mask, known only \
         when the network runs (a data-dependent shape, not exported)",
    ),
    Entry::lowered(
        "ScatterNd",
        &["shape", "add"],
        &["Expand", "Transpose", "Cast", "ScatterND"],
        (low!(scatter_nd), Custom),
        T,
    )
    .cases(2),
    Entry::lowered(
        "ScatterAdd",
        &["axis"],
        &[
            "Unsqueeze",
            "Equal",
            "Where",
            "ReduceSum",
            "Transpose",
            "Add",
        ],
        (low!(scatter_add), Same),
        T,
    )
    .cases(2),
    Entry::lowered(
        "BoolScatter",
        &[],
        &[
            "Equal", "Not", "Cast", "Reshape", "Squeeze", "CumSum", "Shape", "Slice", "Sub", "Min",
            "Gather", "Concat", "Mul", "Where",
        ],
        (low!(bool_scatter), Custom),
        O,
    )
    .cases(4),
    Entry::lowered(
        "BoolFill",
        &["value"],
        &["Where"],
        (low!(bool_fill), Same),
        T,
    )
    .cases(1),
    Entry::refused(
        "PackPaddedSequence",
        "the packed sequence's length is the sum of the values of the lengths input, known only \
         when the network runs, and no ONNX operator takes nnabla's packed layout (ONNX's RNN, \
         GRU and LSTM take padded sequences and sequence_lens)",
    ),
    Entry::refused(
        "PadPackedSequence",
        "nnabla 1.39 sets its output shape from the values of batch_sizes when a saved network \
         is set up, before data arrives: a loaded .nnp's PadPackedSequence returns an empty \
         batch (shape (T, 0, ...)), which no ONNX computation reproduces",
    ),
    Entry::refused(
        "NonZero",
        "nnabla 1.39's runtime fixes NonZero's output shape when a saved network is set \
         up, before data arrives: a loaded .nnp's NonZero returns no indices (shape \
         (rank, 0)), which no ONNX NonZero reproduces",
    ),
];
