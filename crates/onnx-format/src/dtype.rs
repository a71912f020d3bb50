//! ONNX `TensorProto.DataType` numbers and `tensor-core` element types.

use tensor_core::DType;

use crate::proto::tensor_proto::DataType;

/// The `tensor-core` type of an ONNX data type number; `None` for types it
/// has no equivalent of (strings, 4-bit, 2-bit and 6-bit types, undefined).
pub fn from_onnx(data_type: i32) -> Option<DType> {
    Some(match DataType::try_from(data_type).ok()? {
        DataType::Float => DType::F32,
        DataType::Uint8 => DType::U8,
        DataType::Int8 => DType::I8,
        DataType::Uint16 => DType::U16,
        DataType::Int16 => DType::I16,
        DataType::Int32 => DType::I32,
        DataType::Int64 => DType::I64,
        DataType::Bool => DType::Bool,
        DataType::Float16 => DType::F16,
        DataType::Double => DType::F64,
        DataType::Uint32 => DType::U32,
        DataType::Uint64 => DType::U64,
        DataType::Complex64 => DType::C64,
        DataType::Complex128 => DType::C128,
        DataType::Bfloat16 => DType::BF16,
        DataType::Float8e4m3fn => DType::F8E4M3Fn,
        DataType::Float8e4m3fnuz => DType::F8E4M3Fnuz,
        DataType::Float8e5m2 => DType::F8E5M2,
        DataType::Float8e5m2fnuz => DType::F8E5M2Fnuz,
        DataType::Float8e8m0 => DType::F8E8M0Fnu,
        _ => return None,
    })
}

/// The ONNX data type number of a `tensor-core` type, if ONNX has one.
pub fn to_onnx(dtype: DType) -> Option<i32> {
    let t = match dtype {
        DType::F32 => DataType::Float,
        DType::U8 => DataType::Uint8,
        DType::I8 => DataType::Int8,
        DType::U16 => DataType::Uint16,
        DType::I16 => DataType::Int16,
        DType::I32 => DataType::Int32,
        DType::I64 => DataType::Int64,
        DType::Bool => DataType::Bool,
        DType::F16 => DataType::Float16,
        DType::F64 => DataType::Double,
        DType::U32 => DataType::Uint32,
        DType::U64 => DataType::Uint64,
        DType::C64 => DataType::Complex64,
        DType::C128 => DataType::Complex128,
        DType::BF16 => DataType::Bfloat16,
        DType::F8E4M3Fn => DataType::Float8e4m3fn,
        DType::F8E4M3Fnuz => DataType::Float8e4m3fnuz,
        DType::F8E5M2 => DataType::Float8e5m2,
        DType::F8E5M2Fnuz => DataType::Float8e5m2fnuz,
        DType::F8E8M0Fnu => DataType::Float8e8m0,
        _ => return None,
    };
    Some(t as i32)
}

/// The ONNX name of a data type number (`FLOAT`, `INT64`, ...), or `"?"`.
pub fn onnx_name(data_type: i32) -> &'static str {
    DataType::try_from(data_type).map_or("?", |t| t.as_str_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for n in 0..40 {
            if let Some(d) = from_onnx(n) {
                assert_eq!(to_onnx(d), Some(n), "{d}");
            }
        }
        assert_eq!(from_onnx(8), None); // STRING
        assert_eq!(to_onnx(DType::Char8), None);
        assert_eq!(onnx_name(7), "INT64");
    }
}
