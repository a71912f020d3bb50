//! DLPack data types as a `.params` file stores them (`docs/formats/cvm.md` §4).

use tensor_core::DType;

/// A DLPack `DLDataType` as stored in a tensor record: type code, bits per
/// element and lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DlType {
    /// `DLDataTypeCode` (0 int, 1 uint, 2 float, 4 bfloat, 6 bool, 7–14 float8 ...).
    pub code: u8,
    /// Bits per element.
    pub bits: u8,
    /// Vector lanes (always 1 in files this crate accepts).
    pub lanes: u16,
}

impl DlType {
    /// A scalar (lanes = 1) type.
    pub const fn new(code: u8, bits: u8) -> Self {
        DlType {
            code,
            bits,
            lanes: 1,
        }
    }

    /// The bool encoding this type uses, if it is a bool type.
    pub fn bool_encoding(self) -> Option<BoolEncoding> {
        match (self.code, self.bits, self.lanes) {
            (6, 8, 1) => Some(BoolEncoding::Dlpack),
            (1, 1, 1) => Some(BoolEncoding::Legacy),
            _ => None,
        }
    }
}

/// How bool tensors are written. Both use one byte (0 or 1) per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BoolEncoding {
    /// `(code 6, 8 bits, 1 lane)`: `kDLBool`, what TVM ≥ 0.27 (tvm-ffi) writes.
    #[default]
    Dlpack,
    /// `(code 1, 1 bit, 1 lane)`: `uint1`, what older TVM wrote (still one byte per element).
    Legacy,
}

/// Why a stored dtype is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DTypeProblem {
    Lanes,
    SubByte,
    Unknown,
}

/// The element type of a stored `DLDataType`, per `docs/formats/cvm.md` §4:
/// ints and uints of 8/16/32/64 bits, floats of 16/32/64, bfloat16, bool
/// `(6,8)` and legacy bool `(1,1)`, and the eight float8 types (codes 7–14).
pub(crate) fn decode(t: DlType) -> Result<DType, DTypeProblem> {
    if t.lanes != 1 {
        return Err(DTypeProblem::Lanes);
    }
    let d = match (t.code, t.bits) {
        (0, 8) => DType::I8,
        (0, 16) => DType::I16,
        (0, 32) => DType::I32,
        (0, 64) => DType::I64,
        (1, 1) => DType::Bool,
        (1, 8) => DType::U8,
        (1, 16) => DType::U16,
        (1, 32) => DType::U32,
        (1, 64) => DType::U64,
        (2, 16) => DType::F16,
        (2, 32) => DType::F32,
        (2, 64) => DType::F64,
        (4, 16) => DType::BF16,
        (6, 8) => DType::Bool,
        (7, 8) => DType::F8E3M4,
        (8, 8) => DType::F8E4M3,
        (9, 8) => DType::F8E4M3B11Fnuz,
        (10, 8) => DType::F8E4M3Fn,
        (11, 8) => DType::F8E4M3Fnuz,
        (12, 8) => DType::F8E5M2,
        (13, 8) => DType::F8E5M2Fnuz,
        (14, 8) => DType::F8E8M0Fnu,
        (15..=17, _) => return Err(DTypeProblem::SubByte),
        (_, b) if b % 8 != 0 => return Err(DTypeProblem::SubByte),
        _ => return Err(DTypeProblem::Unknown),
    };
    Ok(d)
}

/// The stored `DLDataType` of an element type, or `None` when a `.params`
/// file cannot hold it (complex, char, quantized, opaque, pointer, void).
pub fn dl_type_of(dtype: DType, bools: BoolEncoding) -> Option<DlType> {
    let (code, bits) = match dtype {
        DType::Bool => match bools {
            BoolEncoding::Dlpack => (6, 8),
            BoolEncoding::Legacy => (1, 1),
        },
        DType::I8 => (0, 8),
        DType::I16 => (0, 16),
        DType::I32 => (0, 32),
        DType::I64 => (0, 64),
        DType::U8 => (1, 8),
        DType::U16 => (1, 16),
        DType::U32 => (1, 32),
        DType::U64 => (1, 64),
        DType::F16 => (2, 16),
        DType::F32 => (2, 32),
        DType::F64 => (2, 64),
        DType::BF16 => (4, 16),
        DType::F8E3M4 => (7, 8),
        DType::F8E4M3 => (8, 8),
        DType::F8E4M3B11Fnuz => (9, 8),
        DType::F8E4M3Fn => (10, 8),
        DType::F8E4M3Fnuz => (11, 8),
        DType::F8E5M2 => (12, 8),
        DType::F8E5M2Fnuz => (13, 8),
        DType::F8E8M0Fnu => (14, 8),
        _ => return None,
    };
    Some(DlType::new(code, bits))
}

/// The element type stored as `t`, or `None` when this crate refuses it
/// (lanes ≠ 1, sub-byte, unknown code or width).
pub fn dtype_of(t: DlType) -> Option<DType> {
    decode(t).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_writable_dtype_round_trips() {
        let mut n = 0;
        for d in tensor_core::ALL_DTYPES {
            for b in [BoolEncoding::Dlpack, BoolEncoding::Legacy] {
                if let Some(t) = dl_type_of(d, b) {
                    assert_eq!(decode(t), Ok(d), "{d} {t:?}");
                    n += 1;
                }
            }
        }
        // 21 types (bool, 8 ints, 3 floats, bf16, 8 float8) × 2 bool encodings
        assert_eq!(n, 42);
        assert_eq!(
            dl_type_of(DType::Bool, BoolEncoding::Legacy),
            Some(DlType::new(1, 1))
        );
        assert_eq!(dl_type_of(DType::C64, BoolEncoding::Dlpack), None);
        assert_eq!(dl_type_of(DType::Char8, BoolEncoding::Dlpack), None);
    }

    #[test]
    fn refusals() {
        assert_eq!(decode(DlType::new(17, 4)), Err(DTypeProblem::SubByte));
        assert_eq!(decode(DlType::new(15, 6)), Err(DTypeProblem::SubByte));
        assert_eq!(decode(DlType::new(0, 12)), Err(DTypeProblem::SubByte));
        assert_eq!(decode(DlType::new(0, 4)), Err(DTypeProblem::SubByte));
        assert_eq!(decode(DlType::new(99, 32)), Err(DTypeProblem::Unknown));
        assert_eq!(decode(DlType::new(5, 64)), Err(DTypeProblem::Unknown));
        assert_eq!(decode(DlType::new(2, 8)), Err(DTypeProblem::Unknown));
        assert_eq!(decode(DlType::new(0, 0)), Err(DTypeProblem::Unknown));
        let lanes2 = DlType {
            code: 2,
            bits: 32,
            lanes: 2,
        };
        assert_eq!(decode(lanes2), Err(DTypeProblem::Lanes));
        assert_eq!(
            DlType::new(6, 8).bool_encoding(),
            Some(BoolEncoding::Dlpack)
        );
        assert_eq!(DlType::new(1, 8).bool_encoding(), None);
    }
}
