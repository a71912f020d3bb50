//! `.safetensors` in and out, through the `safetensors` crate.
//!
//! Reading borrows every tensor from the memory map (zero-copy), in the
//! order of their data offsets. Writing records the source format and file
//! in `__metadata__` (`mlformats.source_format`, `mlformats.source_file`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use indicatif::ProgressBar;
use safetensors::{Dtype, SafeTensors, View};
use tensor_core::{Bytes, DType, MappedFile, MemoryOrder, Tensor, TensorMap};

use crate::convert::Plan;

/// True when `bytes` starts like a safetensors file: a little-endian u64
/// header length that fits, then a JSON object.
pub fn looks_like(bytes: &[u8]) -> bool {
    let Some(head) = bytes.get(..8) else {
        return false;
    };
    let mut a = [0u8; 8];
    a.copy_from_slice(head);
    let n = u64::from_le_bytes(a);
    n >= 2 && n <= (bytes.len() as u64).saturating_sub(8) && bytes.get(8) == Some(&b'{')
}

fn to_dtype(d: Dtype) -> Result<DType> {
    Ok(match d {
        Dtype::BOOL => DType::Bool,
        Dtype::U8 => DType::U8,
        Dtype::I8 => DType::I8,
        Dtype::I16 => DType::I16,
        Dtype::U16 => DType::U16,
        Dtype::I32 => DType::I32,
        Dtype::U32 => DType::U32,
        Dtype::I64 => DType::I64,
        Dtype::U64 => DType::U64,
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
        Dtype::C64 => DType::C64,
        Dtype::F8_E5M2 => DType::F8E5M2,
        Dtype::F8_E4M3 => DType::F8E4M3Fn,
        Dtype::F8_E8M0 => DType::F8E8M0Fnu,
        Dtype::F8_E4M3FNUZ => DType::F8E4M3Fnuz,
        Dtype::F8_E5M2FNUZ => DType::F8E5M2Fnuz,
        other => bail!("safetensors dtype {other:?} (sub-byte) is not supported"),
    })
}

fn from_dtype(d: DType) -> Option<Dtype> {
    Some(match d {
        DType::Bool => Dtype::BOOL,
        DType::U8 => Dtype::U8,
        DType::I8 => Dtype::I8,
        DType::I16 => Dtype::I16,
        DType::U16 => Dtype::U16,
        DType::I32 => Dtype::I32,
        DType::U32 => Dtype::U32,
        DType::I64 => Dtype::I64,
        DType::U64 => Dtype::U64,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::C64 => Dtype::C64,
        DType::F8E5M2 => Dtype::F8_E5M2,
        DType::F8E4M3Fn => Dtype::F8_E4M3,
        DType::F8E8M0Fnu => Dtype::F8_E8M0,
        DType::F8E4M3Fnuz => Dtype::F8_E4M3FNUZ,
        DType::F8E5M2Fnuz => Dtype::F8_E5M2FNUZ,
        _ => return None,
    })
}

/// Every tensor of a safetensors file, in data-offset order, sharing the map.
pub fn read(map: &Arc<MappedFile>) -> Result<TensorMap<'static>> {
    let st = SafeTensors::deserialize(map.as_bytes())
        .map_err(|e| anyhow!("invalid safetensors file: {e:?}"))?;
    let (_, meta) = SafeTensors::read_metadata(map.as_bytes())
        .map_err(|e| anyhow!("invalid safetensors header: {e:?}"))?;
    let mut out = TensorMap::new();
    for name in meta.offset_keys() {
        let view = st
            .tensor(&name)
            .map_err(|e| anyhow!("tensor {name:?}: {e:?}"))?;
        let dtype = to_dtype(view.dtype()).with_context(|| format!("tensor {name:?}"))?;
        let t = Tensor::new(dtype, view.shape(), view.data())
            .with_context(|| format!("tensor {name:?}"))?;
        out.insert(name, t.rebase(map));
    }
    Ok(out)
}

/// The `__metadata__` a converted file carries.
pub fn metadata(source_format: &str, source_file: &Path) -> HashMap<String, String> {
    let file = source_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    HashMap::from([
        (
            "mlformats.source_format".to_string(),
            source_format.to_string(),
        ),
        ("mlformats.source_file".to_string(), file),
    ])
}

struct Item<'t, 'a> {
    tensor: &'t Tensor<'a>,
    dtype: Dtype,
    plan: &'t Plan,
    failed: &'t std::cell::RefCell<Option<anyhow::Error>>,
    pb: &'t ProgressBar,
    name: &'t str,
}

impl View for Item<'_, '_> {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        self.tensor.dims()
    }
    fn data(&self) -> Cow<'_, [u8]> {
        self.pb.inc(self.tensor.bytes().len() as u64);
        match self.plan.apply(self.tensor) {
            Ok(t) => match t.into_storage() {
                Bytes::Borrowed(b) => Cow::Borrowed(b),
                other => Cow::Owned(other.into_vec()),
            },
            Err(e) => {
                *self.failed.borrow_mut() = Some(e.context(format!("tensor {:?}", self.name)));
                Cow::Owned(vec![0u8; self.data_len()])
            }
        }
    }
    fn data_len(&self) -> usize {
        // checked when the plan was made: the shape's byte count fits
        tensor_core::checked_byte_len(self.tensor.dims(), self.plan.out_dtype(self.tensor.dtype()))
            .unwrap_or(0)
    }
}

/// Writes `tensors` to `out`, each converted by `plan` only when the
/// crate asks for its bytes, atomically: the crate streams to a temporary
/// file beside `out`, which is then renamed over it.
pub fn write(
    out: &Path,
    tensors: &TensorMap<'_>,
    plan: &Plan,
    pb: &ProgressBar,
    meta: HashMap<String, String>,
) -> Result<()> {
    let failed = std::cell::RefCell::new(None);
    let mut items = Vec::with_capacity(tensors.len());
    for (name, t) in tensors.iter() {
        if t.order() != MemoryOrder::RowMajor && !plan.row_major {
            bail!("tensor {name:?} is column-major; safetensors holds row-major data");
        }
        let out_dtype = plan.out_dtype(t.dtype());
        let dtype = from_dtype(out_dtype).ok_or_else(|| {
            anyhow!("tensor {name:?}: dtype {out_dtype} cannot be stored in safetensors")
        })?;
        tensor_core::checked_byte_len(t.dims(), out_dtype)
            .ok_or_else(|| anyhow!("tensor {name:?}: too large"))?;
        items.push((
            name.to_string(),
            Item {
                tensor: t,
                dtype,
                plan,
                failed: &failed,
                pb,
                name,
            },
        ));
    }
    tensor_core::io::write_atomic_path(out, |tmp| -> Result<()> {
        safetensors::serialize_to_file(items, Some(meta), tmp)
            .map_err(|e| anyhow!("writing safetensors: {e:?}"))?;
        match failed.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}
