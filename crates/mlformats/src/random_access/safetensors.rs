//! Safetensors by random access, the format's one reader: the 8-byte
//! header length and the JSON header read and checked (the `safetensors`
//! crate's checks, with its error names), every tensor's byte range
//! recorded; no tensor data is read here (a [`crate::Document`] borrows
//! each tensor from the memory map).

use serde_json::{Map, Value};

use super::{FileIndex, InTensorOf, IndexedTensor, ReadAt, count, overflow, read_vec};
use crate::codec::StoredTensor;
use crate::{Error, Result};

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
        let order = crate::formats::safetensors::names_in_file_order(&prefix, keys);
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
            let dtype = crate::formats::safetensors::to_dtype(st_dtype).in_tensor_of(&name)?;
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
