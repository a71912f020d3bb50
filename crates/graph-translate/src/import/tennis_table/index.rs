//! TenniS import rows of indexing, and `NonMaxSuppression`, refused (lowered in `tennis_ops_index`).

use super::super::tennis_ops_index as idx;
use super::{Entry, e, refused, since};

/// The indexing rows.
pub(super) static INDEX: &[Entry] = &[
    e(
        "TopK",
        "axis, k (attribute or constant input), largest, sorted",
        "_transpose (other axes), mul (by −1, largest 0), topkv2, _field; indices recomputed in ONNX's order for equal values (equal, maximum, reduce_sum, gemm), _cast",
        "sorted 0, largest 0 on integers, K computed at run time",
        idx::topk,
    ),
    since(
        e(
            "GatherND",
            "batch_dims 0",
            "gatherv2 (negative indices wrapped: maximum, equal, add, where, _cast)",
            "batch_dims other than 0, symbolic dimensions",
            idx::gather_nd,
        ),
        11,
    ),
    since(
        e(
            "ScatterND",
            "reduction none",
            "_reshape, scatter_nd (index tuples made linear: mul, strided_slice, add)",
            "reductions, symbolic dimensions",
            idx::scatter_nd,
        ),
        11,
    ),
    since(
        e(
            "RoiAlign",
            "mode avg, coordinate_transformation_mode output_half_pixel, output_height, output_width, sampling_ratio, spatial_scale",
            "_cast, concat (rois [n, 5]), roi_align",
            "mode max, half_pixel coordinates (the default from opset 16)",
            idx::roi_align,
        ),
        10,
    ),
    e(
        "GatherElements",
        "axis",
        "_reshape, broadcast, gather_elements",
        "indices narrower than the data off the axis, symbolic dimensions",
        idx::gather_elements,
    ),
    // ONNX operators TenniS has a near relative of that computes
    // something else: refused with the reason.
    refused(
        "NonMaxSuppression",
        "TenniS's non_max_suppression_v3 returns a fixed number of box indices padded with -1, one class of one batch; ONNX returns only the selected [batch, class, box] triples (only the exact pattern the TenniS export writes for non_max_suppression_v3 is imported back, as that operator)",
    ),
];
