//! Hugging Face `.safetensors` (crate `safetensors`).
//!
//! Reading: one reader for the whole file and for reads by slices (the
//! header walk below, [`FileIndex::read_safetensors`], over any `ReadAt`); a
//! [`crate::Document`] then borrows every tensor from the memory map
//! (zero-copy, the codec's default `read`), in the order of their data
//! offsets; `__metadata__` becomes the document's `metadata`. Writing is our own: the header, then each tensor converted
//! and streamed in the given order into one temporary file beside the
//! target (the crate's `serialize_to_file` keeps a second temporary of its
//! own and creates files private to the user).
//!
//! ## Reading
//!
//! Safetensors by random access, the format's one reader: the 8-byte
//! header length and the JSON header read and checked (the `safetensors`
//! crate's checks, with its error names), every tensor's byte range
//! recorded; no tensor data is read here (a [`crate::Document`] borrows
//! each tensor from the memory map).

use safetensors::Dtype;
use serde_json::{Map, Value};
use tensor_core::{DType, MemoryOrder};

use crate::codec::{Codec, ReadOptions, Source, StoredTensor, WriteSeek};
use crate::random_access::{
    FileIndex, InTensorOf, IndexedTensor, ReadAt, count, overflow, read_vec,
};
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Error, Format, Result};

pub(crate) struct SafetensorsCodec;

pub(crate) fn to_dtype(d: Dtype) -> Result<DType> {
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
        other => {
            return Err(Error::Safetensors(format!(
                "safetensors dtype {other:?} (sub-byte) is not supported"
            )));
        }
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

/// Tensor names by data offset; tensors at the same offset (empty ones) in
/// the order the header lists them, which the crate's own map forgets.
pub(crate) fn names_in_file_order(bytes: &[u8], by_offset: Vec<String>) -> Vec<String> {
    let header: Option<Map<String, Value>> = bytes
        .get(..8)
        .and_then(|n| usize::try_from(u64::from_le_bytes(n.try_into().ok()?)).ok())
        .and_then(|n| bytes.get(8..8usize.checked_add(n)?))
        .and_then(|h| serde_json::from_slice(h).ok());
    let Some(header) = header else {
        return by_offset;
    };
    let start = |k: &str| {
        header
            .get(k)
            .and_then(|e| e.get("data_offsets"))
            .and_then(|o| o.get(0))
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX)
    };
    let mut names: Vec<String> = header
        .keys()
        .filter(|k| k.as_str() != "__metadata__")
        .cloned()
        .collect();
    if names.len() != by_offset.len() {
        return by_offset;
    }
    names.sort_by_key(|k| start(k));
    names
}

/// The file's header read and checked, every tensor located (the one
/// reader of the format, shared with reading by slices).
fn index(bytes: &[u8], opts: &ReadOptions) -> Result<FileIndex> {
    FileIndex::open_as(bytes, Format::Safetensors, opts)?.ok_or_else(|| {
        Error::Safetensors("the safetensors reader is not built in (feature `safetensors`)".into())
    })
}

impl Codec for SafetensorsCodec {
    fn write(&self, _: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        // The header first (names, dtypes, shapes and offsets, all known
        // before any data is converted), then each tensor converted and
        // written in turn, in the given order, a slice at a time: peak
        // memory is one slice (`TensorRef::write_planned`).
        let json = header(feed)?;
        w.write_all(&(json.len() as u64).to_le_bytes())?;
        w.write_all(&json)?;
        feed.drain(Streamed(w))
    }

    fn refuses(&self, _: Format, dtype: DType, _dims: &[usize]) -> Option<String> {
        from_dtype(dtype)
            .is_none()
            .then(|| format!("safetensors has no {dtype} type"))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        // A safetensors file is its own canonical form: copy the bytes,
        // after checking that they are a valid file.
        index(src.bytes(), &ReadOptions::default())?;
        tensor_core::io::write_prefaulted(w, src.bytes())?;
        Ok(())
    }

    fn exchange(&self, _: Format) -> Option<crate::convert::Exchange> {
        Some(crate::convert::Exchange::Safetensors)
    }

    fn index(&self, _: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        index.read_safetensors(r)
    }
}

/// The data after the header: each tensor streamed in turn.
struct Streamed<'w>(&'w mut dyn WriteSeek);

impl TensorSink for Streamed<'_> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        t.stream(false, &mut *self.0)
    }

    fn finish(self) -> Result<()> {
        Ok(())
    }
}

/// The header a safetensors file of `feed`'s tensors starts with: its
/// length (8 bytes) excluded, padded with spaces to a multiple of 8 bytes.
fn header(feed: &Feed<'_>) -> Result<Vec<u8>> {
    let mut header = Map::new();
    if !feed.metadata().is_empty() {
        let meta: Map<String, Value> = feed
            .metadata()
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        header.insert("__metadata__".into(), Value::Object(meta));
    }
    // u64: a 32-bit build (the viewer's) writes files past 4 GiB too
    let mut offset = 0u64;
    for t in feed.heads() {
        let (name, dims) = (t.name(), t.dims());
        if t.order() != MemoryOrder::RowMajor && !t.plan().row_major {
            return Err(Error::Unsupported(
                "column-major; safetensors holds row-major data".into(),
            )
            .in_tensor(name));
        }
        let out_dtype = t.dtype();
        let dtype = from_dtype(out_dtype).ok_or_else(|| {
            Error::UnsupportedDType {
                format: Format::Safetensors,
                dtype: out_dtype,
            }
            .in_tensor(name)
        })?;
        let len = tensor_core::checked_byte_len(dims, out_dtype)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| Error::TooLarge.in_tensor(name))?;
        let end = offset
            .checked_add(len)
            .ok_or_else(|| Error::TooLarge.in_tensor(name))?;
        if header.contains_key(name) || name == "__metadata__" {
            return Err(Error::DuplicateName {
                name: name.to_string(),
                format: Some(Format::Safetensors),
            });
        }
        let entry = serde_json::json!({
            "dtype": serde_json::to_value(dtype).unwrap_or(Value::Null),
            "shape": dims,
            "data_offsets": [offset, end],
        });
        header.insert(name.to_string(), entry);
        offset = end;
    }
    let mut json = serde_json::to_vec(&Value::Object(header))
        .map_err(|e| Error::Safetensors(format!("writing the header: {e}")))?;
    // pad with spaces so that the data starts 8-byte aligned
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    Ok(json)
}

impl FileIndex {
    /// A safetensors file: the header read and checked, every tensor located.
    pub(crate) fn read_safetensors<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let bad = |m: String| Error::Safetensors(format!("invalid safetensors file: {m}"));
        let file_len = r.len();
        if file_len < 8 {
            return Err(bad("HeaderTooSmall".into()));
        }
        let mut n = [0u8; 8];
        r.read_at(0, &mut n)?;
        let n = u64::from_le_bytes(n);
        // the crate's own bound on the header, and ours on allocating it
        if n > 100_000_000 || n > self.limits.max_alloc {
            return Err(bad("HeaderTooLarge".into()));
        }
        let data_start = n
            .checked_add(8)
            .filter(|&e| e <= file_len)
            .ok_or_else(|| bad("InvalidHeaderLength".into()))?;
        let prefix = read_vec(r, 0, data_start)?;
        let header = std::str::from_utf8(&prefix[8..])
            .map_err(|e| Error::Safetensors(format!("invalid safetensors header: {e}")))?;
        // parsed here rather than by the crate's `Metadata`, whose offsets
        // are `usize`: on a 32-bit target (the viewer's WebAssembly) a
        // tensor past 4 GiB would not parse
        let header: Map<String, Value> = serde_json::from_str(header)
            .map_err(|e| bad(format!("InvalidHeaderDeserialization({e})")))?;
        let mut infos: std::collections::HashMap<String, (::safetensors::Dtype, Vec<usize>)> =
            Default::default();
        let mut by_offset: Vec<(u64, u64, String)> = Vec::with_capacity(header.len());
        let mut file_meta = None;
        for (name, v) in &header {
            if name == "__metadata__" {
                let m = v
                    .as_object()
                    .filter(|m| m.values().all(Value::is_string))
                    .ok_or_else(|| {
                        bad(
                            "InvalidHeaderDeserialization(__metadata__ is not a map of strings)"
                                .into(),
                        )
                    })?;
                file_meta = Some(m.clone());
                continue;
            }
            let entry = || -> Option<(::safetensors::Dtype, Vec<usize>, u64, u64)> {
                let dtype = serde_json::from_value(v.get("dtype")?.clone()).ok()?;
                let shape = v
                    .get("shape")?
                    .as_array()?
                    .iter()
                    .map(|d| usize::try_from(d.as_u64()?).ok())
                    .collect::<Option<Vec<usize>>>()?;
                let offsets = v.get("data_offsets")?.as_array()?;
                let [s, e] = offsets.as_slice() else {
                    return None;
                };
                Some((dtype, shape, s.as_u64()?, e.as_u64()?))
            };
            let (dtype, shape, s, e) = entry().ok_or_else(|| {
                bad(format!(
                    "InvalidHeaderDeserialization({name:?} is not a tensor entry)"
                ))
            })?;
            infos.insert(name.clone(), (dtype, shape));
            by_offset.push((s, e, name.clone()));
        }
        let mut sorted = by_offset.clone();
        sorted.sort_by_key(|&(s, e, _)| (s, e));
        let keys: Vec<String> = sorted.iter().map(|(_, _, n)| n.clone()).collect();
        let order = names_in_file_order(&prefix, keys);
        drop(prefix);
        if order.len() as u64 > self.limits.max_tensors {
            return Err(bad(format!("{} tensors", order.len())));
        }
        // in the file's order
        let at: std::collections::HashMap<&str, (u64, u64)> = by_offset
            .iter()
            .map(|(s, e, n)| (n.as_str(), (*s, *e)))
            .collect();
        let by_offset: Vec<(u64, u64, String)> = order
            .iter()
            .map(|n| {
                let (s, e) = at.get(n.as_str()).copied().unwrap_or((u64::MAX, 0));
                (s, e, n.clone())
            })
            .collect();
        // the tensors cover the data exactly, one after another
        let mut end = 0u64;
        for (s, e, name) in &sorted {
            if *s != end || e < s {
                return Err(bad(format!("InvalidOffset({name:?})")));
            }
            end = *e;
        }
        if Some(file_len) != data_start.checked_add(end) {
            return Err(bad("MetadataIncompleteBuffer".into()));
        }
        for (s, e, name) in by_offset {
            let (st_dtype, shape) = infos.remove(&name).ok_or_else(|| overflow(&name))?;
            let dtype = to_dtype(st_dtype).in_tensor_of(&name)?;
            let numel = count(&shape).ok_or_else(|| overflow(&name))?;
            let size = numel
                .checked_mul(dtype.size() as u64)
                .ok_or_else(|| overflow(&name))?;
            if size != e - s {
                return Err(bad("TensorInvalidInfo".into()).in_tensor(&name));
            }
            let stored = StoredTensor::from_parts(name, shape);
            let t = IndexedTensor::row_major(stored, dtype, data_start + s, e - s, numel);
            self.tensors.push(t);
        }
        if let Some(m) = file_meta {
            // sorted by key
            let sorted: std::collections::BTreeMap<String, Value> = m.into_iter().collect();
            self.metadata.insert(
                "metadata".into(),
                Value::Object(sorted.into_iter().collect()),
            );
        }
        Ok(())
    }
}
