//! The TenniS DTYPE table (`docs/formats/tennis.md` §3) mapped to [`DType`].

use tensor_core::DType;

/// The [`DType`] of a TenniS dtype code, or `None` for a code outside the
/// table (0..=32).
///
/// ```
/// use bubble_module::{dtype_from_code, code_of_dtype};
/// use tensor_core::DType;
/// assert_eq!(dtype_from_code(11), Some(DType::F64));
/// assert_eq!(dtype_from_code(13), Some(DType::Char8));
/// assert_eq!(dtype_from_code(33), None);
/// assert_eq!(code_of_dtype(DType::Bool), Some(21));
/// assert_eq!(code_of_dtype(DType::BF16), None);
/// ```
pub const fn dtype_from_code(code: u8) -> Option<DType> {
    Some(match code {
        0 => DType::Void,
        1 => DType::I8,
        2 => DType::U8,
        3 => DType::I16,
        4 => DType::U16,
        5 => DType::I32,
        6 => DType::U32,
        7 => DType::I64,
        8 => DType::U64,
        9 => DType::F16,
        10 => DType::F32,
        11 => DType::F64,
        12 => DType::Ptr,
        13 => DType::Char8,
        14 => DType::Char16,
        15 => DType::Char32,
        16 => DType::Opaque8,
        17 => DType::Opaque16,
        18 => DType::Opaque32,
        19 => DType::Opaque64,
        20 => DType::Opaque128,
        21 => DType::Bool,
        22 => DType::C32,
        23 => DType::C64,
        24 => DType::C128,
        25..=32 => DType::Q8(code - 25),
        _ => return None,
    })
}

/// The TenniS dtype code of `dtype`, or `None` when TenniS has none
/// (`bf16` and the 8-bit float types).
pub const fn code_of_dtype(dtype: DType) -> Option<u8> {
    Some(match dtype {
        DType::Void => 0,
        DType::I8 => 1,
        DType::U8 => 2,
        DType::I16 => 3,
        DType::U16 => 4,
        DType::I32 => 5,
        DType::U32 => 6,
        DType::I64 => 7,
        DType::U64 => 8,
        DType::F16 => 9,
        DType::F32 => 10,
        DType::F64 => 11,
        DType::Ptr => 12,
        DType::Char8 => 13,
        DType::Char16 => 14,
        DType::Char32 => 15,
        DType::Opaque8 => 16,
        DType::Opaque16 => 17,
        DType::Opaque32 => 18,
        DType::Opaque64 => 19,
        DType::Opaque128 => 20,
        DType::Bool => 21,
        DType::C32 => 22,
        DType::C64 => 23,
        DType::C128 => 24,
        DType::Q8(n) if n <= 7 => 25 + n,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_sizes_match_the_table() {
        // docs/formats/tennis.md §3 sizes; FLOAT64 is 8, PTR 8.
        let sizes = [
            0usize, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8, 8, 1, 2, 4, 1, 2, 4, 8, 16, 1, 4, 8, 16, 1, 1,
            1, 1, 1, 1, 1, 1,
        ];
        for code in 0u8..=32 {
            let d = dtype_from_code(code).unwrap();
            assert_eq!(code_of_dtype(d), Some(code), "{d}");
            assert_eq!(d.size(), sizes[code as usize], "{d}");
        }
        for code in 33u8..=255 {
            assert_eq!(dtype_from_code(code), None);
        }
        assert_eq!(dtype_from_code(25), Some(DType::Q8(0)));
        assert_eq!(dtype_from_code(32), Some(DType::Q8(7)));
        assert_eq!(code_of_dtype(DType::F8E4M3Fn), None);
        assert_eq!(code_of_dtype(DType::Q8(8)), None);
    }
}
