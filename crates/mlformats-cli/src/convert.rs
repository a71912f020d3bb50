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
    let plan = Plan {
        cast: opts.dtype,
        exchange: matches!(target, Kind::Safetensors | Kind::Npz).then_some(target),
        row_major: match target {
            // these writers take column-major tensors and convert one at a
            // time (primitiv stores column-major; cvm-params transposes)
            Kind::Ml(mlformats::Format::Primitiv | mlformats::Format::CvmParams) => false,
            Kind::Npz => !opts.keep_order,
            _ => true,
        },
    };
    let total: u64 = tensors.iter().map(|(_, t)| t.bytes().len() as u64).sum();
    let pb = progress::bar(loaded.map.len() as u64, total, opts.quiet, "converting");
    let from_name = loaded.kind.name();
    let result = match target {
        // Exchange formats convert one tensor at a time while writing, so
        // peak memory stays near the largest tensor, not the file.
        Kind::Safetensors => formats::safetensors::write(
            output,
            &tensors,
            &plan,
            &pb,
            formats::safetensors::metadata(from_name, input),
        ),
        Kind::Npz => formats::npz::write(output, &tensors, &plan, &pb),
        Kind::Ml(format) => {
            let mut out = TensorMap::new();
            for (name, t) in tensors.iter() {
                let p = plan
                    .apply(t)
                    .with_context(|| format!("tensor {name:?}"))
                    .at(input)?;
                out.insert(name, p);
                pb.inc(t.bytes().len() as u64);
            }
            formats::write(format, output, &out)
        }
    };
    pb.finish_and_clear();
    result.at(output)
}

/// What happens to each tensor on its way to the target.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Cast floats to this type.
    pub cast: Option<CastTo>,
    /// The exchange format (safetensors, npz) whose dtypes the tensor must fit.
    pub exchange: Option<Kind>,
    /// Transpose column-major data to row-major.
    pub row_major: bool,
}

impl Plan {
    /// The dtype a tensor of `d` has after [`Plan::apply`].
    pub fn out_dtype(&self, d: DType) -> DType {
        let d = match self.cast {
            Some(to) if d.is_float() => to.dtype(),
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
            cur = cast(&cur, to)?;
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

impl CastTo {
    /// The dtype it casts to.
    pub fn dtype(self) -> DType {
        match self {
            CastTo::F16 => DType::F16,
            CastTo::Bf16 => DType::BF16,
            CastTo::F32 => DType::F32,
        }
    }
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

/// The dtype safetensors or numpy store a tensor of `d` as: characters,
/// opaque and quantized bytes keep their bytes as unsigned integers of the
/// same size; floats the target cannot hold (bf16 and 8-bit floats in npz,
/// some 8-bit floats in safetensors) become f32, which holds every value
/// exactly.
pub fn exchange_dtype(d: DType, target: Kind) -> DType {
    use tensor_core::float8::is_f8;
    let to_f32 = match target {
        Kind::Npz => d == DType::BF16 || is_f8(d),
        _ => matches!(d, DType::F8E3M4 | DType::F8E4M3 | DType::F8E4M3B11Fnuz),
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

fn as_exchange_dtype(t: Tensor<'_>, target: Kind) -> Result<Tensor<'_>> {
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
