//! TenniS import rows of shape and data movement (lowered in `tennis_ops_shape`, `tennis_ops_range` and `tennis_ops_slice`).

use super::super::tennis_ops_range as rng;
use super::super::tennis_ops_shape as shp;
use super::super::tennis_ops_slice as slc;
use super::{DYN_SHAPE, Entry, any_dtype, e, since, until};

/// The shape and data-movement rows.
pub(super) static SHAPE: &[Entry] = &[
    any_dtype(e(
        "Slice",
        "starts, ends, axes, steps (attributes, constant inputs or computed at run time)",
        "strided_slice; parameters computed at run time: slice_v3 after maximum, equal, where (ONNX's clamping), axes made positive",
        "empty results of constant parameters, axes out of increasing order (TenniS fails at run time)",
        shp::slice,
    )),
    any_dtype(e(
        "Split",
        "axis, split (attribute or constant input), num_outputs",
        "strided_slice per output",
        "sizes computed at run time, symbolic split axis",
        shp::split,
    )),
    any_dtype(e(
        "Gather",
        "axis, indices",
        "gather (indices computed at run time: negative ones wrapped with maximum, equal, add, where)",
        "symbolic dimensions",
        shp::gather,
    )),
    any_dtype(e(
        "Tile",
        "repeats (constant)",
        "tile",
        "repeats of 0",
        shp::tile,
    )),
    e(
        "Pad",
        "mode constant, pads (constant or computed at run time), constant_value (constant), axes (constant); modes reflect, edge, wrap with constant pads",
        "pad per padded axis (pads computed at run time: _reshape, _transpose, strided_slice, mul, a pad per listed axis); reflect/edge/wrap: gather per padded axis of the source indices, any element type",
        "a constant_value computed at run time, negative constant pads, reflect/edge/wrap pads computed at run time",
        shp::pad,
    ),
    any_dtype(e(
        "Expand",
        "shape (constant)",
        "_reshape, broadcast",
        DYN_SHAPE,
        shp::expand,
    )),
    since(
        e(
            "Resize",
            "modes nearest and linear: every coordinate_transformation_mode and nearest_mode, scales or sizes (constants), roi, extrapolation_value, axes, keep_aspect_ratio_policy, antialias (linear, upsampling)",
            "nearest by whole factors (⌊d / k⌋): _resize2d (type 3); other nearest: a gather per resized axis; linear: per resized axis gather, gather, mul, mul, add (indices and weights computed at import), where (tf_crop_and_resize outside the input)",
            "cubic, antialias when downsampling, symbolic resized axes, scales or sizes computed at run time",
            shp::resize,
        ),
        10,
    ),
    until(
        e(
            "Upsample",
            "mode nearest or linear (asymmetric coordinates), scales",
            "_resize2d (type 3); linear: as Resize",
            "nearest: factors that are not whole",
            shp::upsample,
        ),
        9,
    ),
    e(
        "ConstantOfShape",
        "shape (constant), value (f32)",
        "constant_of_shape (a <const> when small)",
        "shapes computed at run time, values of other types",
        shp::constant_of_shape,
    ),
    since(
        e(
            "Range",
            "— (folded when start, limit and delta are constants)",
            "sub, _cast (f64), div, ceil, _cast (int32), maximum, range (int32), _cast, mul, add",
            "BOOL and other types Range lacks, non-scalar inputs",
            rng::range,
        ),
        11,
    ),
    e(
        "Shape",
        "start, end",
        "— (folded when the sizes are known); else _shape, _cast (int64), strided_slice",
        "",
        slc::shape_dyn,
    ),
];
