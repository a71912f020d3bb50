//! [`Plan`]: what happens to each tensor on its way to the target (float
//! casts, memory order, the exchange formats' dtypes).

use tensor_core::half::{bf16, f16};
use tensor_core::{DType, MemoryOrder, Tensor, stats};

use crate::codec::codec;
use crate::{Error, Format, Result};

/// An exchange format: one whose dtypes are few and plain (those numpy or
/// safetensors readers know), so that the plan changes a tensor's dtype to
/// fit them ([`exchange_dtype`]); [`crate::codec::Codec::exchange`] says
/// which formats are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exchange {
    /// Hugging Face safetensors.
    Safetensors,
    /// numpy's `.npz`.
    Npz,
}

/// What happens to each tensor on its way to the target.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Plan {
    /// Cast floats to this type.
    pub cast: Option<DType>,
    /// The exchange format (safetensors, npz) whose dtypes the tensor must fit.
    pub exchange: Option<Exchange>,
    /// Transpose column-major data to row-major.
    pub row_major: bool,
}

impl Plan {
    /// The plan that changes nothing (row-major data stays as it is).
    pub fn unchanged() -> Plan {
        Plan {
            cast: None,
            exchange: None,
            row_major: true,
        }
    }

    /// The plan for writing `target`: floats cast to `cast`, dtypes the
    /// exchange formats cannot hold changed, and column-major data
    /// transposed unless the writer takes it as it is (or, for npz,
    /// `keep_order` asks to keep Fortran order).
    pub fn for_target(target: Format, cast: Option<DType>, keep_order: bool) -> Result<Plan> {
        let row_major = match target {
            Format::Npz => !keep_order,
            other => !codec(other)?.takes_column_major(other),
        };
        Ok(Plan {
            cast,
            // (a format whose feature is off has no codec: its writer says so)
            exchange: codec(target).ok().and_then(|c| c.exchange(target)),
            row_major,
        })
    }

    /// The dtype a tensor of `d` has after [`Plan::apply`].
    pub fn out_dtype(&self, d: DType) -> DType {
        let d = match self.cast {
            Some(to) if d.is_float() => to,
            _ => d,
        };
        match self.exchange {
            Some(k) => exchange_dtype(d, k),
            None => d,
        }
    }

    /// The tensor as the target gets it: borrowed when nothing changes.
    pub fn apply<'t>(&self, t: &'t Tensor<'_>) -> Result<Tensor<'t>> {
        let mut cur = Tensor::with_order(t.dtype(), t.shape().clone(), t.order(), t.bytes())?;
        if let Some(to) = self.cast.filter(|_| cur.dtype().is_float()) {
            cur = cast_float(&cur, to)?;
        }
        if let Some(k) = self.exchange {
            cur = as_exchange_dtype(cur, k)?;
        }
        if self.row_major && cur.order() == MemoryOrder::ColumnMajor {
            cur = cur.to_row_major()?.into_static();
        }
        Ok(cur)
    }
}

/// A float tensor cast to the float type `to`, keeping shape and order.
pub(crate) fn cast_float(t: &Tensor<'_>, to: DType) -> Result<Tensor<'static>> {
    if t.dtype() == to {
        return Ok(t.to_owned_tensor());
    }
    if !to.is_float() {
        return Err(Error::CannotCast { from: None, to });
    }
    let len = t.numel().checked_mul(to.size()).ok_or(Error::TooLarge)?;
    let mut bytes = Vec::with_capacity(len);
    let numeric = stats::for_each_f64_block(t, |blk| {
        for &v in blk {
            match to {
                DType::F16 => bytes.extend_from_slice(&f16::from_f64(v).to_le_bytes()),
                DType::BF16 => bytes.extend_from_slice(&bf16::from_f64(v).to_le_bytes()),
                DType::F32 => bytes.extend_from_slice(&(v as f32).to_le_bytes()),
                _ => bytes.extend_from_slice(&v.to_le_bytes()),
            }
        }
    });
    if !numeric {
        return Err(Error::CannotCast {
            from: Some(t.dtype()),
            to,
        });
    }
    Ok(Tensor::with_order(to, t.shape().clone(), t.order(), bytes)?)
}

/// The dtype safetensors or numpy store a tensor of `d` as: characters,
/// opaque and quantized bytes keep their bytes as unsigned integers of the
/// same size; floats the target cannot hold (bf16 and 8-bit floats in npz,
/// some 8-bit floats in safetensors) become f32, which holds every value
/// exactly.
pub(crate) fn exchange_dtype(d: DType, target: Exchange) -> DType {
    use tensor_core::float8::is_f8;
    let to_f32 = match target {
        Exchange::Npz => d == DType::BF16 || is_f8(d),
        Exchange::Safetensors => {
            matches!(d, DType::F8E3M4 | DType::F8E4M3 | DType::F8E4M3B11Fnuz)
        }
    };
    if to_f32 {
        return DType::F32;
    }
    match d {
        DType::Char8 | DType::Opaque8 | DType::Q8(_) => DType::U8,
        DType::Char16 | DType::Opaque16 => DType::U16,
        DType::Char32 | DType::Opaque32 => DType::U32,
        DType::Opaque64 => DType::U64,
        other => other,
    }
}

fn as_exchange_dtype(t: Tensor<'_>, target: Exchange) -> Result<Tensor<'_>> {
    let to = exchange_dtype(t.dtype(), target);
    if to == t.dtype() {
        return Ok(t);
    }
    let (shape, order) = (t.shape().clone(), t.order());
    if to == DType::F32 {
        let mut bytes = Vec::with_capacity(t.numel().saturating_mul(4));
        stats::for_each_f64_block(&t, |blk| {
            for &v in blk {
                bytes.extend_from_slice(&(v as f32).to_le_bytes());
            }
        });
        return Ok(Tensor::with_order(DType::F32, shape, order, bytes)?);
    }
    Ok(Tensor::with_order(to, shape, order, t.into_storage())?)
}
