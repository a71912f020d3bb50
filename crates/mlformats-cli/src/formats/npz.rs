//! `.npz` (numpy) in and out: a zip of `.npy` members, whose headers are
//! read and written by the `npyz` crate.
//!
//! Reading borrows stored members from the memory map; deflated members
//! (from `numpy.savez_compressed`) are inflated one at a time, bounded by
//! [`tensor_core::Limits`]. Writing stores one member per tensor, named
//! `<tensor name>.npy` as `numpy.savez` does, streaming each tensor's bytes.

use std::io::{Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use indicatif::ProgressBar;
use npyz::{Order, WriterBuilder};
use tensor_core::{DType, Limits, MappedFile, MemoryOrder, Tensor, TensorMap};

use crate::convert::Plan;
use zip::CompressionMethod;
use zip::write::SimpleFileOptions;

/// True when `bytes` is a zip whose first member is a `.npy` file, or any
/// zip holding `.npy` members when `named_npz` (the file is called `*.npz`).
pub fn looks_like(bytes: &[u8], named_npz: bool) -> bool {
    if !(bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06")) {
        return false;
    }
    if named_npz {
        return true;
    }
    // first local header: name length at 26, name at 30
    let Some(n) = bytes
        .get(26..28)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    else {
        return false;
    };
    bytes
        .get(30..30 + n)
        .is_some_and(|name| name.ends_with(b".npy"))
}

fn dtype_of(descr: &str) -> Result<(DType, bool)> {
    let (endian, rest) = descr.split_at(descr.len().min(1));
    let big = endian == ">";
    let d = match rest {
        "b1" => DType::Bool,
        "i1" => DType::I8,
        "i2" => DType::I16,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "u1" => DType::U8,
        "u2" => DType::U16,
        "u4" => DType::U32,
        "u8" => DType::U64,
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        "c8" => DType::C64,
        "c16" => DType::C128,
        _ => bail!("numpy dtype {descr:?} is not supported"),
    };
    Ok((d, big && d.size() > 1))
}

fn descr_of(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
        _ => return None,
    })
}

/// Parses one `.npy` member (header + data) into a tensor borrowing `bytes`.
fn parse_npy<'a>(name: &str, bytes: &'a [u8], limits: &Limits) -> Result<Tensor<'a>> {
    let mut rest = bytes;
    let header = npyz::NpyHeader::from_reader(&mut rest)
        .with_context(|| format!("{name}: bad .npy header"))?;
    let file = npyz::NpyFile::with_header(header, &[][..]);
    let descr = match file.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => bail!(
            "{name}: structured numpy dtype {} is not supported",
            other.descr()
        ),
    };
    let (dtype, big_endian) = dtype_of(&descr).with_context(|| name.to_string())?;
    limits.check_rank(file.shape().len() as u64)?;
    let dims = file
        .shape()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| anyhow!("{name}: dimension {d} too large")))
        .collect::<Result<Vec<_>>>()?;
    let order = match file.order() {
        Order::C => MemoryOrder::RowMajor,
        Order::Fortran => MemoryOrder::ColumnMajor,
    };
    let need = tensor_core::Shape::new(dims.clone()).byte_len(dtype)?;
    let data = rest.get(..need).ok_or_else(|| {
        anyhow!(
            "{name}: data is {} bytes, the header needs {need}",
            rest.len()
        )
    })?;
    if rest.len() != need {
        bail!("{name}: {} bytes after the data", rest.len() - need);
    }
    if big_endian {
        let w = dtype.size();
        let mut owned = data.to_vec();
        let lane = if matches!(dtype, DType::C64 | DType::C128) {
            w / 2
        } else {
            w
        };
        for c in owned.chunks_exact_mut(lane) {
            c.reverse();
        }
        return Ok(Tensor::with_order(dtype, dims, order, owned)?);
    }
    Ok(Tensor::with_order(dtype, dims, order, data)?)
}

/// Every array of an `.npz` file, named by member name without `.npy`.
pub fn read(map: &Arc<MappedFile>, limits: &Limits) -> Result<TensorMap<'static>> {
    let bytes = map.as_bytes();
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).context("not a readable zip archive")?;
    limits.check_tensors(zip.len() as u64)?;
    let mut out = TensorMap::new();
    let mut inflated_total = 0u64;
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).with_context(|| format!("member #{i}"))?;
        let raw_name = member
            .name()
            .with_context(|| format!("member #{i}: bad name"))?
            .into_owned();
        let Some(name) = raw_name.strip_suffix(".npy") else {
            continue;
        };
        let name = name.to_string();
        let size = member.size();
        if member.compression() == CompressionMethod::Stored {
            let start = member
                .data_start()
                .ok_or_else(|| anyhow!("{raw_name}: no data offset"))?;
            let range = usize::try_from(start)
                .ok()
                .and_then(|s| Some(s..s.checked_add(usize::try_from(size).ok()?)?))
                .filter(|r| r.end <= bytes.len())
                .ok_or_else(|| {
                    anyhow!("{raw_name}: member data runs past the end of the archive")
                })?;
            let t = parse_npy(&raw_name, &bytes[range], limits)?;
            out.insert(name, t.rebase(map));
        } else {
            inflated_total = inflated_total.saturating_add(size);
            if inflated_total > limits.max_total_inflated {
                bail!(
                    "{raw_name}: inflating over the limit of {} bytes",
                    limits.max_total_inflated
                );
            }
            limits.check_alloc("inflated member", size)?;
            let compressed = member.compressed_size().max(1);
            if size / compressed > 2048 && size > (64 << 20) {
                bail!(
                    "{raw_name}: declared size {size} is {}x its compressed size; refusing a likely deflate bomb",
                    size / compressed
                );
            }
            let mut buf = Vec::with_capacity(size as usize);
            (&mut member)
                .take(size)
                .read_to_end(&mut buf)
                .with_context(|| format!("inflating {raw_name}"))?;
            let t = parse_npy(&raw_name, &buf, limits)?.to_owned_tensor();
            out.insert(name, t);
        }
    }
    Ok(out)
}

/// Writes `tensors` as an `.npz` (stored members), atomically, converting
/// each by `plan` just before it is written. Row-major tensors are written
/// in C order and column-major ones in Fortran order.
pub fn write(out: &Path, tensors: &TensorMap<'_>, plan: &Plan, pb: &ProgressBar) -> Result<()> {
    for (name, t) in tensors.iter() {
        let d = plan.out_dtype(t.dtype());
        if descr_of(d).is_none() {
            bail!("tensor {name:?}: dtype {d} has no numpy equivalent");
        }
    }
    tensor_core::io::write_atomic(out, |w| -> Result<()> {
        let mut zip = zip::ZipWriter::new(w);
        for (name, t) in tensors.iter() {
            let t = plan.apply(t).with_context(|| format!("tensor {name:?}"))?;
            write_member(&mut zip, name, &t)?;
            pb.inc(t.bytes().len() as u64);
        }
        zip.finish()?;
        Ok(())
    })
}

fn write_member<W: Write + Seek>(
    zip: &mut zip::ZipWriter<W>,
    name: &str,
    t: &Tensor<'_>,
) -> Result<()> {
    let descr = descr_of(t.dtype()).ok_or_else(|| anyhow!("tensor {name:?}: no numpy dtype"))?;
    let opts = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(t.bytes().len() as u64 >= (1u64 << 32) - (1 << 20));
    zip.start_file(format!("{name}.npy"), opts)?;
    let shape: Vec<u64> = t.dims().iter().map(|&d| d as u64).collect();
    let order = match t.order() {
        MemoryOrder::RowMajor => Order::C,
        MemoryOrder::ColumnMajor => Order::Fortran,
    };
    let dtype = npyz::DType::Plain(descr.parse().map_err(|e| anyhow!("{descr}: {e:?}"))?);
    npyz::WriteOptions::new_header_only()
        .dtype(dtype)
        .shape(&shape)
        .order(order)
        .writer(&mut *zip)
        .write_header_only()?;
    zip.write_all(t.bytes())?;
    Ok(())
}
