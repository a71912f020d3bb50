//! From walked datasets to parameters: element types, attributes, byte
//! order and the order nnabla registers parameters in.

use std::ops::Range;

use hdf5_pure::{AttrValue, Datatype, DatatypeByteOrder};
use tensor_core::{Bytes, DType, Tensor};

use crate::{Error, Parameter, Result};

use super::{RawData, RawParam, copy_of};

/// The parameters of a parameter file: every dataset must have
/// `need_grad`; sorted as nnabla registers them.
pub(super) fn finish<'a>(
    mut raw: Vec<RawParam>,
    range_bytes: impl FnMut(Range<usize>) -> Result<Bytes<'a>>,
) -> Result<Vec<Parameter<'a>>> {
    if let Some(r) = raw.iter().find(|r| r.need_grad.is_none()) {
        return Err(Error::MissingNeedGrad {
            dataset: r.name.clone(),
        });
    }
    sort_like_nnabla(&mut raw)?;
    Ok(tensors(raw, range_bytes)?
        .into_iter()
        .map(|(name, t, need_grad)| Parameter::new(name, t, need_grad))
        .collect())
}

/// Each dataset's tensor, sharing or copying its bytes.
pub(super) fn tensors<'a>(
    raw: Vec<RawParam>,
    mut range_bytes: impl FnMut(Range<usize>) -> Result<Bytes<'a>>,
) -> Result<Vec<(String, Tensor<'a>, bool)>> {
    raw.into_iter()
        .map(|r| {
            let data = match r.data {
                RawData::Range(range) => {
                    // within the input (checked by the walk), so in usize
                    let s = usize::try_from(range.start);
                    let e = usize::try_from(range.end);
                    match (s, e) {
                        (Ok(s), Ok(e)) => range_bytes(s..e)?,
                        _ => {
                            return Err(Error::BadData {
                                dataset: r.name,
                                reason: format!("data at {range:?} is not addressable"),
                            });
                        }
                    }
                }
                RawData::Owned(v) => Bytes::Owned(v),
                RawData::Elsewhere | RawData::Chunks(_) => Bytes::Owned(Vec::new()),
            };
            let data = if r.swap {
                let mut v = match data {
                    Bytes::Owned(v) => v,
                    other => copy_of(&other)?,
                };
                swap_in_place(&mut v, r.dtype.size());
                Bytes::Owned(v)
            } else {
                data
            };
            let tensor = Tensor::new(r.dtype, r.dims, data)?;
            Ok((r.name, tensor, r.need_grad.unwrap_or(false)))
        })
        .collect()
}

pub(super) fn sort_like_nnabla(v: &mut [RawParam]) -> Result<()> {
    let with = v.iter().find(|p| p.index.is_some());
    let without = v.iter().find(|p| p.index.is_none());
    if let (Some(w), Some(wo)) = (with, without) {
        return Err(Error::MixedIndex {
            with_index: w.name.clone(),
            without_index: wo.name.clone(),
        });
    }
    v.sort_by(|a, b| (a.index, &a.name).cmp(&(b.index, &b.name)));
    Ok(())
}

/// The element type of a stored datatype, and whether it is big-endian.
pub(super) fn map_dtype(dt: &Datatype) -> Option<(DType, bool)> {
    let be = |o: &DatatypeByteOrder| match o {
        DatatypeByteOrder::LittleEndian => Some(false),
        DatatypeByteOrder::BigEndian => Some(true),
        _ => None,
    };
    match dt {
        Datatype::FixedPoint {
            size,
            byte_order,
            layout,
        } => {
            if layout.bit_offset != 0
                || Some(u32::from(layout.bit_precision)) != size.checked_mul(8)
            {
                return None;
            }
            let d = match (size, layout.signed) {
                (1, true) => DType::I8,
                (2, true) => DType::I16,
                (4, true) => DType::I32,
                (8, true) => DType::I64,
                (1, false) => DType::U8,
                (2, false) => DType::U16,
                (4, false) => DType::U32,
                (8, false) => DType::U64,
                _ => return None,
            };
            Some((d, be(byte_order)?))
        }
        Datatype::FloatingPoint {
            size,
            byte_order,
            layout,
        } => {
            let d = match (size, layout.exponent_size, layout.mantissa_size) {
                (2, 5, 10) => DType::F16,
                (2, 8, 7) => DType::BF16,
                (4, 8, 23) => DType::F32,
                (8, 11, 52) => DType::F64,
                _ => return None,
            };
            Some((d, be(byte_order)?))
        }
        // h5py's numpy bool: an enum over a 1-byte integer, FALSE=0, TRUE=1.
        Datatype::Enumeration {
            size: 1,
            base_type,
            members,
        } => {
            let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
            let is_bool = matches!(**base_type, Datatype::FixedPoint { size: 1, .. })
                && names.len() == 2
                && names.contains(&"FALSE")
                && names.contains(&"TRUE");
            is_bool.then_some((DType::Bool, false))
        }
        _ => None,
    }
}

pub(super) fn describe(dt: &Datatype) -> String {
    let s = format!("{dt:?}");
    if s.len() > 160 {
        let mut cut = 160;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &s[..cut])
    } else {
        s
    }
}

/// nnabla tests `need_grad` for truth (`bool(value)`).
pub(super) fn truthy(dataset: &str, v: &AttrValue) -> Result<bool> {
    let bad = |reason: String| Error::BadAttribute {
        dataset: dataset.to_string(),
        attr: "need_grad",
        reason,
    };
    if let AttrValue::F32(_) | AttrValue::F64(_) = v
        && let Some(f) = v.as_f64()
    {
        return Ok(f != 0.0);
    }
    if let Some(i) = v.as_i64() {
        return Ok(i != 0);
    }
    if let Some(u) = v.as_u64() {
        return Ok(u != 0);
    }
    match v.to_f64s() {
        Some(vals) if vals.len() == 1 => Ok(vals[0] != 0.0),
        Some(vals) => Err(bad(format!(
            "an array of {} values has no single truth value",
            vals.len()
        ))),
        None => Err(bad(format!("a {} is not a truth value", v.type_name()))),
    }
}

pub(super) fn swap_in_place(v: &mut [u8], size: usize) {
    for c in v.chunks_exact_mut(size) {
        c.reverse();
    }
}
