//! `mlformats convert`: tensor selection, float casts and memory order on
//! the way from any format to any other.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use globset::{Glob, GlobSet, GlobSetBuilder};
use tensor_core::half::{bf16, f16};
use tensor_core::{DType, MemoryOrder, Tensor, TensorMap, stats};

use crate::failure::{AtPath, Failure};
use crate::formats::{self, Kind};
use crate::progress;

/// The float type `--dtype` casts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CastTo {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
}

/// What `convert` does to the tensors besides copying them.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep only tensors whose name matches one of these globs.
    pub only: Vec<String>,
    /// Drop tensors whose name matches one of these globs.
    pub exclude: Vec<String>,
    /// Cast float tensors to this type.
    pub dtype: Option<CastTo>,
    /// Keep column-major data as it is where the target can say so (npz's
    /// Fortran order) instead of transposing it to row-major.
    pub keep_order: bool,
    /// No progress bar.
    pub quiet: bool,
}

impl Options {
    /// True when the tensors are copied unchanged.
    pub fn is_plain(&self) -> bool {
        self.only.is_empty() && self.exclude.is_empty() && self.dtype.is_none() && !self.keep_order
    }
}

fn globs(patterns: &[String]) -> Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).with_context(|| format!("bad glob {p:?}"))?);
    }
    Ok(Some(b.build()?))
}

/// Converts `input` into `output`.
pub fn run(
    input: &Path,
    output: &Path,
    target: Kind,
    from: Option<Kind>,
    opts: &Options,
) -> Result<(), Failure> {
    let only = globs(&opts.only).at(Path::new("--only"))?;
    let exclude = globs(&opts.exclude).at(Path::new("--exclude"))?;
    let loaded = formats::load(input, from).at(input)?;
    if let Some(src) = loaded.source.as_ref().filter(|_| opts.is_plain()) {
        if loaded.kind == target {
            return formats::reencode(src, output).at(output);
        }
        if let Some(r) = match target {
            Kind::Ml(f) => formats::transcode(src, f, output),
            _ => None,
        } {
            return r.at(output);
        }
    }
    let mut tensors = loaded.tensors;
    tensors.retain(|name, _| {
        only.as_ref().is_none_or(|g| g.is_match(name))
            && !exclude.as_ref().is_some_and(|g| g.is_match(name))
    });
    let total: u64 = tensors.iter().map(|(_, t)| t.bytes().len() as u64).sum();
    let pb = progress::bar(loaded.map.len() as u64, total, opts.quiet, "converting");
    let want_row_major = match target {
        Kind::Ml(mlformats::Format::Primitiv) => false,
        Kind::Npz => !opts.keep_order,
        _ => true,
    };
    let mut out = TensorMap::new();
    for (name, t) in tensors {
        let n = t.bytes().len() as u64;
        let t = match opts.dtype {
            Some(to) if t.dtype().is_float() => cast(&t, to)
                .with_context(|| format!("tensor {name:?}"))
                .at(input)?,
            _ => t,
        };
        let t = match target {
            Kind::Safetensors | Kind::Npz => as_exchange_dtype(t, target).at(input)?,
            _ => t,
        };
        let t = if want_row_major && t.order() == MemoryOrder::ColumnMajor {
            t.to_row_major()
                .map_err(anyhow::Error::new)
                .at(input)?
                .into_static()
        } else {
            t
        };
        out.insert(name, t);
        pb.inc(n);
    }
    pb.finish_and_clear();
    let from_name = loaded.kind.name();
    formats::write_kind(target, output, &out, (from_name, input)).at(output)
}

/// A float tensor cast to `to`, keeping shape and order.
pub fn cast(t: &Tensor<'_>, to: CastTo) -> Result<Tensor<'static>> {
    let (dtype, size) = match to {
        CastTo::F16 => (DType::F16, 2),
        CastTo::Bf16 => (DType::BF16, 2),
        CastTo::F32 => (DType::F32, 4),
    };
    if t.dtype() == dtype {
        return Ok(t.to_owned_tensor());
    }
    let mut bytes = Vec::with_capacity(
        t.numel()
            .checked_mul(size)
            .ok_or_else(|| anyhow!("tensor too large"))?,
    );
    let numeric = stats::for_each_f64_block(t, |blk| {
        for &v in blk {
            match to {
                CastTo::F16 => bytes.extend_from_slice(&f16::from_f64(v).to_le_bytes()),
                CastTo::Bf16 => bytes.extend_from_slice(&bf16::from_f64(v).to_le_bytes()),
                CastTo::F32 => bytes.extend_from_slice(&(v as f32).to_le_bytes()),
            }
        }
    });
    if !numeric {
        bail!("cannot cast {} to {}", t.dtype(), dtype);
    }
    Ok(Tensor::with_order(
        dtype,
        t.shape().clone(),
        t.order(),
        bytes,
    )?)
}

/// Tensors whose dtype safetensors or numpy lack: characters, opaque and
/// quantized bytes keep their bytes as unsigned integers of the same size;
/// floats the target cannot hold (bf16 and 8-bit floats in npz, some 8-bit
/// floats in safetensors) become f32, which holds every value exactly.
fn as_exchange_dtype(t: Tensor<'static>, target: Kind) -> Result<Tensor<'static>> {
    use tensor_core::float8::is_f8;
    let d = t.dtype();
    let to_f32 = match target {
        Kind::Npz => d == DType::BF16 || is_f8(d),
        _ => matches!(d, DType::F8E3M4 | DType::F8E4M3 | DType::F8E4M3B11Fnuz),
    };
    if to_f32 {
        let mut bytes = Vec::with_capacity(t.numel().saturating_mul(4));
        stats::for_each_f64_block(&t, |blk| {
            for &v in blk {
                bytes.extend_from_slice(&(v as f32).to_le_bytes());
            }
        });
        return Ok(Tensor::with_order(
            DType::F32,
            t.shape().clone(),
            t.order(),
            bytes,
        )?);
    }
    let to = match d {
        DType::Char8 | DType::Opaque8 | DType::Q8(_) => DType::U8,
        DType::Char16 | DType::Opaque16 => DType::U16,
        DType::Char32 | DType::Opaque32 => DType::U32,
        DType::Opaque64 => DType::U64,
        _ => return Ok(t),
    };
    let (shape, order) = (t.shape().clone(), t.order());
    Ok(Tensor::with_order(to, shape, order, t.into_storage())?)
}
