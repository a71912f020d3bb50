//! NNabla import rows of shape and data movement (lowered in `nnabla_ops_shape`).

use super::super::nnabla_ops_qint as qint;
use super::super::nnabla_ops_shape as sh;
use super::{Entry, e, since};

/// The shape and data-movement rows.
pub(super) static SHAPE: &[Entry] = &[
    // Shape and data movement.
    e(
        "Reshape",
        "shape (constant), allowzero",
        "Reshape",
        "shape computed at run time",
        sh::reshape,
    ),
    e("Flatten", "axis", "Reshape", "", sh::flatten),
    e(
        "Squeeze",
        "axes",
        "Reshape",
        "axes computed at run time",
        sh::squeeze,
    ),
    e(
        "Unsqueeze",
        "axes",
        "Reshape",
        "axes computed at run time",
        sh::unsqueeze,
    ),
    e(
        "Transpose",
        "perm",
        "Transpose",
        "moving the symbolic batch",
        sh::transpose,
    ),
    e("Concat", "axis", "Concatenate", "", sh::concat),
    e(
        "Split",
        "axis, split, num_outputs",
        "Slice",
        "sizes computed at run time",
        sh::split,
    ),
    e(
        "Slice",
        "starts, ends, axes, steps (constant)",
        "Slice, Flip",
        "empty results",
        sh::slice,
    ),
    since(
        e(
            "Expand",
            "shape (constant)",
            "Reshape, Broadcast",
            "shape computed at run time",
            sh::expand,
        ),
        8,
    ),
    e(
        "Tile",
        "repeats (constant)",
        "Tile",
        "repeats computed at run time",
        sh::tile,
    ),
    e(
        "Gather",
        "axis, indices",
        "Gather / Slice, Reshape; LessScalar, MulScalar, Add2 (run-time indices)",
        "symbolic batch with run-time indices",
        sh::gather,
    ),
    e(
        "Pad",
        "mode (constant, reflect, edge), pads, constant_value, axes",
        "Pad (+ Where for a run-time value)",
        "wrap mode, negative pads",
        sh::pad,
    ),
    e("Identity", "", "Identity", "", sh::identity),
    e(
        "Dropout",
        "mask output (ones at inference)",
        "Identity",
        "training",
        sh::dropout,
    ),
    e(
        "Cast",
        "to",
        "Identity, NotEqualScalar (to BOOL); float → integer: MaximumScalar, MinimumScalar \
         (saturate 8- and 16-bit, and unsigned at 0), Floor (unsigned) or Sign, Abs, Floor, Mul2 \
         (toward zero)",
        "casts to double, float16 or bfloat16; out-of-range values into 32- and 64-bit \
         integers (undefined in ONNX) stay as truncated f32 values",
        qint::cast,
    ),
    e(
        "DepthToSpace",
        "blocksize, mode",
        "Reshape, Transpose",
        "",
        sh::depth_to_space,
    ),
    e(
        "SpaceToDepth",
        "blocksize",
        "Reshape, Transpose",
        "",
        sh::space_to_depth,
    ),
    since(
        e(
            "Trilu",
            "upper, k",
            "Trilu; GreaterEqual/LessEqual, Where (run-time k)",
            "empty inputs with run-time k",
            sh::trilu,
        ),
        14,
    ),
    since(
        e(
            "CastLike",
            "target_type's type",
            "as Cast",
            "as Cast",
            qint::cast_like,
        ),
        15,
    ),
    e(
        "ConstantOfShape",
        "value, shape (constant)",
        "Constant (folded when small)",
        "integer values f32 cannot hold",
        sh::constant_of_shape,
    ),
];
