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
            logic::cast,
        ),
        15,
    ),
    e(
        "Equal",
        "",
        "equal (BOOL operands as uint8)",
        "operands of two types",
        logic::compare,
    ),
    e(
        "Greater",
        "",
        "maximum, equal, _cast, equal (not)",
        NAN,
        logic::compare,
    ),
    e(
        "Less",
        "",
        "maximum, equal, _cast, equal (not)",
        NAN,
        logic::compare,
    ),
    since(
        e("GreaterOrEqual", "", "maximum, equal", NAN, logic::compare),
        12,
    ),
    since(
        e("LessOrEqual", "", "maximum, equal", NAN, logic::compare),
        12,
    ),
    e("Not", "", "_cast (uint8), equal with 0", "", logic::logical),
    e(
        "Sign",
        "",
        "maximum, equal, _cast, equal (not), sub: (x > 0) − (x < 0)",
        "NaN inputs (not checked), BOOL",
        logic::sign_round,
    ),
    since(
        e(
            "Round",
            "",
            "floor, sub, maximum, equal, _cast, mul, add (half to even, exact)",
            "non-float inputs",
            logic::sign_round,
        ),
        11,
    ),
    e("And", "", "_cast (uint8), mul, _cast", "", logic::logical),
    e(
        "Or",
        "",
        "_cast (uint8), maximum, _cast",
        "",
        logic::logical,
    ),
    e(
        "Xor",
        "",
        "_cast (uint8), equal, equal with 0",
        "",
        logic::logical,
    ),
    e(
        "Where",
        "",
        "where (BOOL operands as uint8)",
        "operands of two types",
        logic::where_,
    ),
];
