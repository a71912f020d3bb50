//! TenniS import rows of comparisons, logic and selection (lowered in `tennis_ops_logic`).

use super::super::tennis_ops_logic as logic;
use super::{Entry, NAN, e, since};

/// The comparison and logic rows.
pub(super) static LOGIC: &[Entry] = &[
    since(
        e(
            "Mod",
            "fmod",
            "mod (fmod 1); fmod 0: mod, maximum, equal, _cast, add, where",
            "float inputs (TenniS's mod takes integers)",
            logic::modulo,
        ),
        10,
    ),
    since(
        e(
            "Trilu",
            "upper, k (constant or computed at run time)",
            "where with a uint8 mask constant (k computed at run time: maximum, equal)",
            "BOOL inputs, empty or symbolic last axes",
            logic::trilu,
        ),
        14,
    ),
    e(
        "Cast",
        "to (f32, f64, integers, bool)",
        "_cast (to BOOL: equal with 0, then not as equal of its uint8 with 0)",
        "float16, strings and other types TenniS lacks",
        logic::cast,
    ),
    since(
        e(
            "CastLike",
            "target_type (its element type)",
            "as Cast",
            "float16, strings and other types TenniS lacks",
            logic::cast_like,
        ),
        15,
    ),
    e(
        "Equal",
        "",
        "equal (BOOL operands as uint8)",
        "operands of two types",
        logic::equal,
    ),
    e(
        "Greater",
        "",
        "maximum, equal, _cast, equal (not)",
        NAN,
        logic::greater,
    ),
    e(
        "Less",
        "",
        "maximum, equal, _cast, equal (not)",
        NAN,
        logic::less,
    ),
    since(
        e(
            "GreaterOrEqual",
            "",
            "maximum, equal",
            NAN,
            logic::greater_or_equal,
        ),
        12,
    ),
    since(
        e(
            "LessOrEqual",
            "",
            "maximum, equal",
            NAN,
            logic::less_or_equal,
        ),
        12,
    ),
    e(
        "Not",
        "",
        "_cast (uint8), equal with 0",
        "",
        logic::logical_not,
    ),
    e(
        "Sign",
        "",
        "maximum, equal, _cast, equal (not), sub: (x > 0) − (x < 0)",
        "NaN inputs (not checked), BOOL",
        logic::sign,
    ),
    since(
        e(
            "Round",
            "",
            "floor, sub, maximum, equal, _cast, mul, add (half to even, exact)",
            "non-float inputs",
            logic::round,
        ),
        11,
    ),
    e("And", "", "_cast (uint8), mul, _cast", "", logic::and),
    e("Or", "", "_cast (uint8), maximum, _cast", "", logic::or),
    e(
        "Xor",
        "",
        "_cast (uint8), equal, equal with 0",
        "",
        logic::xor,
    ),
    e(
        "Where",
        "",
        "where (BOOL operands as uint8)",
        "operands of two types",
        logic::where_,
    ),
];
