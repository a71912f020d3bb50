//! Element types of all four formats, named as in the `inspect --json` contract.

use std::fmt;

/// An element type.
///
/// The set is the union of what primitiv (f32 only), NNabla (f32 and the
/// numeric types its HDF5 files may hold), TenniS (its DTYPE table) and
/// TVM/CVM (DLPack types) store. [`DType::name`] gives the contract's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DType {
    /// One byte per element, 0 or 1.
    Bool,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE 754 binary16.
    F16,
    /// bfloat16 (the top half of an f32).
    BF16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// Complex number of two f16 (TenniS COMPLEX32).
    C32,
    /// Complex number of two f32.
    C64,
    /// Complex number of two f64.
    C128,
    /// 8-bit float, 3 exponent and 4 mantissa bits.
    F8E3M4,
    /// 8-bit float, 4 exponent and 3 mantissa bits (IEEE-like).
    F8E4M3,
    /// 8-bit float e4m3 with bias 11, finite, unsigned zero.
    F8E4M3B11Fnuz,
    /// 8-bit float e4m3, finite (no infinities).
    F8E4M3Fn,
    /// 8-bit float e4m3, finite, unsigned zero.
    F8E4M3Fnuz,
    /// 8-bit float, 5 exponent and 2 mantissa bits.
    F8E5M2,
    /// 8-bit float e5m2, finite, unsigned zero.
    F8E5M2Fnuz,
    /// 8-bit exponent-only scale (e8m0), finite, unsigned.
    F8E8M0Fnu,
    /// 8-bit character (TenniS CHAR8; strings are 1-D char8 tensors).
    Char8,
    /// 16-bit character (TenniS CHAR16).
    Char16,
    /// 32-bit character (TenniS CHAR32).
    Char32,
    /// A quantized byte (TenniS SINK8Q0..SINK8Q7); the value is `n` in `q8_<n>`, 0..=7.
    Q8(u8),
    /// Opaque 1-byte element (TenniS UNKNOWN8).
    Opaque8,
    /// Opaque 2-byte element (TenniS UNKNOWN16).
    Opaque16,
    /// Opaque 4-byte element (TenniS UNKNOWN32).
    Opaque32,
    /// Opaque 8-byte element (TenniS UNKNOWN64).
    Opaque64,
    /// Opaque 16-byte element (TenniS UNKNOWN128).
    Opaque128,
    /// A pointer (TenniS PTR): 8 bytes on the 64-bit hosts that write it; never seen in files.
    Ptr,
    /// No data at all (TenniS VOID).
    Void,
}

/// Every dtype, in the contract's order (for tests and tooling).
pub const ALL_DTYPES: [DType; 42] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
    DType::F8E3M4,
    DType::F8E4M3,
    DType::F8E4M3B11Fnuz,
    DType::F8E4M3Fn,
    DType::F8E4M3Fnuz,
    DType::F8E5M2,
    DType::F8E5M2Fnuz,
    DType::F8E8M0Fnu,
    DType::Char8,
    DType::Char16,
    DType::Char32,
    DType::Q8(0),
    DType::Q8(1),
    DType::Q8(2),
    DType::Q8(3),
    DType::Q8(4),
    DType::Q8(5),
    DType::Q8(6),
    DType::Q8(7),
    DType::Opaque8,
    DType::Opaque16,
    DType::Opaque32,
    DType::Opaque64,
    DType::Opaque128,
    DType::Ptr,
    DType::Void,
    DType::C32,
];

/// How the `sum` of a tensor of this type is computed, per the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SumKind {
    /// Exact integer sum (bool counts true as 1).
    Integer,
    /// Floating-point sum in f64.
    Float,
    /// No sum: characters, complex, 8-bit floats, quantized and opaque types.
    None,
}

impl DType {
    /// Bytes per element. `Ptr` is 8 (the 64-bit hosts that write it) and `Void` is 0.
    pub const fn size(self) -> usize {
        use DType::*;
        match self {
            Void => 0,
            Bool | I8 | U8 | F8E3M4 | F8E4M3 | F8E4M3B11Fnuz | F8E4M3Fn | F8E4M3Fnuz | F8E5M2
            | F8E5M2Fnuz | F8E8M0Fnu | Char8 | Q8(_) | Opaque8 => 1,
            I16 | U16 | F16 | BF16 | Char16 | Opaque16 => 2,
            I32 | U32 | F32 | Char32 | Opaque32 | C32 => 4,
            I64 | U64 | F64 | C64 | Opaque64 | Ptr => 8,
            C128 | Opaque128 => 16,
        }
    }

    /// The contract's name (`f32`, `bf16`, `f8e4m3fn`, `char8`, `q8_3`, `opaque16`, ...).
    pub const fn name(self) -> &'static str {
        use DType::*;
        match self {
            Bool => "bool",
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
            C32 => "c32",
            C64 => "c64",
            C128 => "c128",
            F8E3M4 => "f8e3m4",
            F8E4M3 => "f8e4m3",
            F8E4M3B11Fnuz => "f8e4m3b11fnuz",
            F8E4M3Fn => "f8e4m3fn",
            F8E4M3Fnuz => "f8e4m3fnuz",
            F8E5M2 => "f8e5m2",
            F8E5M2Fnuz => "f8e5m2fnuz",
            F8E8M0Fnu => "f8e8m0fnu",
            Char8 => "char8",
            Char16 => "char16",
            Char32 => "char32",
            Q8(0) => "q8_0",
            Q8(1) => "q8_1",
            Q8(2) => "q8_2",
            Q8(3) => "q8_3",
            Q8(4) => "q8_4",
            Q8(5) => "q8_5",
            Q8(6) => "q8_6",
            Q8(_) => "q8_7",
            Opaque8 => "opaque8",
            Opaque16 => "opaque16",
            Opaque32 => "opaque32",
            Opaque64 => "opaque64",
            Opaque128 => "opaque128",
            Ptr => "ptr",
            Void => "void",
        }
    }

    /// The dtype with the contract name `name`, if there is one.
    pub fn from_name(name: &str) -> Option<DType> {
        ALL_DTYPES.iter().copied().find(|d| d.name() == name)
    }

    /// How the contract's `sum` is computed for this type.
    pub const fn sum_kind(self) -> SumKind {
        use DType::*;
        match self {
            Bool | I8 | I16 | I32 | I64 | U8 | U16 | U32 | U64 => SumKind::Integer,
            F16 | BF16 | F32 | F64 => SumKind::Float,
            _ => SumKind::None,
        }
    }

    /// True for `f16`, `bf16`, `f32`, `f64` (the types `--dtype` casts between).
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// True for the signed and unsigned integer types (not bool).
    pub const fn is_integer(self) -> bool {
        matches!(self.sum_kind(), SumKind::Integer) && !matches!(self, DType::Bool)
    }

    /// True for the types with a numeric value that
    /// [`Tensor::to_vec`](crate::Tensor::to_vec) converts: bool, the
    /// integers, `f16`, `bf16`, `f32`, `f64` and every 8-bit float.
    ///
    /// False for characters, complex numbers, pointers, opaque bytes, `void`,
    /// and TenniS's quantized `q8_*`: TenniS declares their storage as plain
    /// `uint8_t` and defines no conversion for them, so their bytes are
    /// only raw (view them with [`Tensor::view_as`](crate::Tensor::view_as)).
    pub const fn is_numeric(self) -> bool {
        use DType::*;
        matches!(
            self,
            Bool | I8
                | I16
                | I32
                | I64
                | U8
                | U16
                | U32
                | U64
                | F16
                | BF16
                | F32
                | F64
                | F8E3M4
                | F8E4M3
                | F8E4M3B11Fnuz
                | F8E4M3Fn
                | F8E4M3Fnuz
                | F8E5M2
                | F8E5M2Fnuz
                | F8E8M0Fnu
        )
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_names_of_every_dtype() {
        let expected: [(&str, usize); 42] = [
            ("bool", 1),
            ("i8", 1),
            ("i16", 2),
            ("i32", 4),
            ("i64", 8),
            ("u8", 1),
            ("u16", 2),
            ("u32", 4),
            ("u64", 8),
            ("f16", 2),
            ("bf16", 2),
            ("f32", 4),
            ("f64", 8),
            ("c64", 8),
            ("c128", 16),
            ("f8e3m4", 1),
            ("f8e4m3", 1),
            ("f8e4m3b11fnuz", 1),
            ("f8e4m3fn", 1),
            ("f8e4m3fnuz", 1),
            ("f8e5m2", 1),
            ("f8e5m2fnuz", 1),
            ("f8e8m0fnu", 1),
            ("char8", 1),
            ("char16", 2),
            ("char32", 4),
            ("q8_0", 1),
            ("q8_1", 1),
            ("q8_2", 1),
            ("q8_3", 1),
            ("q8_4", 1),
            ("q8_5", 1),
            ("q8_6", 1),
            ("q8_7", 1),
            ("opaque8", 1),
            ("opaque16", 2),
            ("opaque32", 4),
            ("opaque64", 8),
            ("opaque128", 16),
            ("ptr", 8),
            ("void", 0),
            ("c32", 4),
        ];
        for (d, (name, size)) in ALL_DTYPES.iter().zip(expected) {
            assert_eq!(d.name(), name);
            assert_eq!(d.size(), size, "{name}");
            assert_eq!(DType::from_name(name), Some(*d));
            assert_eq!(d.to_string(), name);
        }
        assert_eq!(DType::from_name("float32"), None);
    }

    #[test]
    fn sum_kinds_follow_the_contract() {
        assert_eq!(DType::Bool.sum_kind(), SumKind::Integer);
        assert_eq!(DType::U64.sum_kind(), SumKind::Integer);
        assert_eq!(DType::BF16.sum_kind(), SumKind::Float);
        for d in [
            DType::Char8,
            DType::C64,
            DType::F8E5M2,
            DType::Q8(2),
            DType::Opaque8,
            DType::Void,
        ] {
            assert_eq!(d.sum_kind(), SumKind::None, "{d}");
        }
        assert!(DType::I8.is_integer() && !DType::Bool.is_integer());
        assert!(DType::BF16.is_float() && !DType::F8E4M3Fn.is_float());
        for d in ALL_DTYPES {
            assert_eq!(
                d.is_numeric(),
                d.sum_kind() != SumKind::None || crate::float8::is_f8(d),
                "{d}"
            );
        }
    }
}
