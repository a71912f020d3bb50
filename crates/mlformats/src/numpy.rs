//! numpy's names of the dtypes, in one table: the type strings of `.npy`
//! headers (`<f4`, `|u1`, …) and the names of `numpy.dtype(...).name`
//! (`float32`, `uint8`, and `ml_dtypes`' `bfloat16` and 8-bit floats).
//!
//! The `.npz` reader and writer and the Python bindings both read it.

use tensor_core::DType;

/// One dtype as numpy names it.
struct NumpyType {
    dtype: DType,
    /// The `.npy` type string, little-endian (`|` for one-byte types), for
    /// the types numpy itself has; `None` for `ml_dtypes`' types.
    descr: Option<&'static str>,
    /// `numpy.dtype(...).name`.
    name: &'static str,
}

const fn t(dtype: DType, descr: &'static str, name: &'static str) -> NumpyType {
    NumpyType {
        dtype,
        descr: Some(descr),
        name,
    }
}

const fn ml(dtype: DType, name: &'static str) -> NumpyType {
    NumpyType {
        dtype,
        descr: None,
        name,
    }
}

const TABLE: [NumpyType; 23] = [
    t(DType::Bool, "|b1", "bool"),
    t(DType::I8, "|i1", "int8"),
    t(DType::I16, "<i2", "int16"),
    t(DType::I32, "<i4", "int32"),
    t(DType::I64, "<i8", "int64"),
    t(DType::U8, "|u1", "uint8"),
    t(DType::U16, "<u2", "uint16"),
    t(DType::U32, "<u4", "uint32"),
    t(DType::U64, "<u8", "uint64"),
    t(DType::F16, "<f2", "float16"),
    t(DType::F32, "<f4", "float32"),
    t(DType::F64, "<f8", "float64"),
    t(DType::C64, "<c8", "complex64"),
    t(DType::C128, "<c16", "complex128"),
    ml(DType::BF16, "bfloat16"),
    ml(DType::F8E3M4, "float8_e3m4"),
    ml(DType::F8E4M3, "float8_e4m3"),
    ml(DType::F8E4M3B11Fnuz, "float8_e4m3b11fnuz"),
    ml(DType::F8E4M3Fn, "float8_e4m3fn"),
    ml(DType::F8E4M3Fnuz, "float8_e4m3fnuz"),
    ml(DType::F8E5M2, "float8_e5m2"),
    ml(DType::F8E5M2Fnuz, "float8_e5m2fnuz"),
    ml(DType::F8E8M0Fnu, "float8_e8m0fnu"),
];

fn row(d: DType) -> Option<&'static NumpyType> {
    TABLE.iter().find(|r| r.dtype == d)
}

/// numpy's `.npy` type string of `d`, little-endian (`|` for one-byte
/// types): `|b1`, `<i4`, `<f2`, `<c16`, …; `None` for the dtypes numpy has
/// no type of its own for (bf16 and 8-bit floats are `ml_dtypes`' types,
/// see [`name_of`]).
pub fn descr_of(d: DType) -> Option<&'static str> {
    row(d)?.descr
}

/// The dtype of a `.npy` type string (`<f4`, `>i8`, `|b1`, …), and whether
/// its data is big-endian (`>` on a type of more than one byte). `None`
/// for a type [`descr_of`] does not give.
pub fn dtype_of_descr(descr: &str) -> Option<(DType, bool)> {
    let (endian, rest) = descr.split_at_checked(1)?;
    let r = TABLE
        .iter()
        .find(|r| r.descr.and_then(|d| d.get(1..)) == Some(rest))?;
    Some((r.dtype, endian == ">" && r.dtype.size() > 1))
}

/// numpy's name of `d` (`numpy.dtype(...).name`): `bool`, `int8`, …,
/// `float32`, `complex128`, and `ml_dtypes`' `bfloat16` and `float8_*`.
pub fn name_of(d: DType) -> Option<&'static str> {
    row(d).map(|r| r.name)
}

/// The dtype numpy names `name` ([`name_of`]'s inverse).
pub fn dtype_of_name(name: &str) -> Option<DType> {
    TABLE.iter().find(|r| r.name == name).map(|r| r.dtype)
}

/// True for the dtypes numpy knows through the `ml_dtypes` package only
/// (bf16 and the 8-bit floats).
pub fn needs_ml_dtypes(d: DType) -> bool {
    row(d).is_some_and(|r| r.descr.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_reads_back() {
        for r in &TABLE {
            assert_eq!(dtype_of_name(r.name), Some(r.dtype));
            assert_eq!(name_of(r.dtype), Some(r.name));
            match r.descr {
                Some(s) => {
                    assert_eq!(dtype_of_descr(s), Some((r.dtype, false)), "{s}");
                    assert_eq!(descr_of(r.dtype), Some(s));
                    assert!(!needs_ml_dtypes(r.dtype));
                    let big = format!(">{}", &s[1..]);
                    assert_eq!(dtype_of_descr(&big), Some((r.dtype, r.dtype.size() > 1)));
                }
                None => {
                    assert_eq!(descr_of(r.dtype), None);
                    assert!(needs_ml_dtypes(r.dtype));
                }
            }
        }
    }

    #[test]
    fn known_strings() {
        assert_eq!(descr_of(DType::F32), Some("<f4"));
        assert_eq!(descr_of(DType::U8), Some("|u1"));
        assert_eq!(descr_of(DType::BF16), None);
        assert_eq!(descr_of(DType::Char8), None);
        assert_eq!(dtype_of_descr(">f8"), Some((DType::F64, true)));
        assert_eq!(dtype_of_descr("=i2"), Some((DType::I16, false)));
        assert_eq!(dtype_of_descr(">u1"), Some((DType::U8, false)));
        assert_eq!(dtype_of_descr("<c16"), Some((DType::C128, false)));
        assert_eq!(dtype_of_descr("|S1"), None);
        assert_eq!(dtype_of_descr("<f16"), None);
        assert_eq!(dtype_of_descr(""), None);
        assert_eq!(dtype_of_descr("f"), None);
        assert_eq!(dtype_of_name("bfloat16"), Some(DType::BF16));
        assert_eq!(dtype_of_name("float32"), Some(DType::F32));
        assert_eq!(dtype_of_name("f32"), None);
        assert_eq!(name_of(DType::Char32), None);
    }
}
