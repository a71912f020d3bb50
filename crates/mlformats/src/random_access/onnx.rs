//! ONNX `.onnx` models by random access: the `ModelProto` walked field by
//! field through [`ReadAt`] (the cursor of `wire.rs`), every field copied
//! except each main-graph initializer's `raw_data`, whose place is
//! recorded; the copy (the model without its tensor bytes: nodes,
//! attributes, inputs, outputs, initializers' names, types and shapes) is
//! then read by `onnx-format`'s own reader, with its checks, and each
//! initializer's layout checked as [`onnx_format::tensor_from_proto`]
//! checks it.
//!
//! Read this way: models whose initializers all keep their bytes in
//! `raw_data` (contiguous little-endian bytes, what exporters write).
//! Initializers in the typed fields (`float_data`, `int32_data`, ...) are
//! read whole (`None`); external data is refused, as the whole-file path
//! refuses it.

use std::collections::HashSet;

use tensor_core::graph::ModelGraph;
use tensor_core::{Limits, MemoryOrder};

use super::wire::{Cursor, LEN, Stop, Walk, bad};
use super::{FileIndex, IndexedTensor, Layout, ReadAt, count, overflow};
use crate::Result;
use crate::codec::{StoredTensor, free_name};
use crate::formats::onnx::onnx_err;

/// `ModelProto.graph`, `GraphProto.initializer`, `TensorProto.raw_data`.
const MODEL_GRAPH: u64 = 7;
const GRAPH_INITIALIZER: u64 = 5;
const TENSOR_RAW_DATA: u64 = 9;

const WHAT: &str = "the model";

/// Where a `raw_data` is: offset and length.
type Raw = Option<(u64, u64)>;

/// Appends the bytes `[from, to)` of the file to `out`, under `limits`.
fn copy<R: ReadAt + ?Sized>(
    c: &Cursor<'_, R>,
    from: u64,
    out: &mut Vec<u8>,
    limits: &Limits,
) -> Walk<()> {
    let n = c.pos - from;
    limits.check_alloc("ONNX model fields", (out.len() as u64).saturating_add(n))?;
    out.extend(c.read(from, n, limits)?);
    Ok(())
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends field `num` holding the message `payload`.
fn put_message(out: &mut Vec<u8>, num: u64, payload: &[u8]) {
    put_varint(out, (num << 3) | LEN);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// The groups of proto2 (wire types 3 and 4): prost skips them, this walk
/// does not; such a file is read whole.
fn group(wt: u64) -> Walk<()> {
    if wt == 3 || wt == 4 {
        return Err(Stop::Whole);
    }
    Ok(())
}

/// What [`walk`] does with its special field: the cursor, the payload's
/// place and length, the message's copy.
type Each<'f, R> = dyn FnMut(&mut Cursor<'_, R>, u64, u64, &mut Vec<u8>) -> Walk<()> + 'f;

/// `TensorProto`'s typed data fields (`float_data`, `int32_data`,
/// `string_data`, `int64_data`, `double_data`, `uint64_data`).
const TYPED: [u64; 6] = [4, 5, 6, 7, 10, 11];

/// Walks the message at `[at, at + n)`: every field copied to the result
/// but field `special`, which `each` handles (it gets the cursor, the
/// payload's place and length, and the result). With `tensor`, a typed
/// data field stops the walk: the file is read whole (before its values
/// are copied).
fn walk<R: ReadAt + ?Sized>(
    r: &R,
    at: u64,
    n: u64,
    limits: &Limits,
    special: u64,
    each: &mut Each<'_, R>,
) -> Walk<Vec<u8>> {
    let tensor = special == TENSOR_RAW_DATA;
    let end = at
        .checked_add(n)
        .ok_or_else(|| bad(WHAT, at, "a length past the file"))?;
    let mut c = Cursor::new(r, WHAT, at, end);
    let mut out = Vec::new();
    while c.pos < c.end {
        let start = c.pos;
        let (num, wt) = c.key()?;
        group(wt)?;
        if num == special {
            if wt != LEN {
                return Err(bad(
                    WHAT,
                    start,
                    format!("field {num} has wire type {wt}, expected 2"),
                ));
            }
            let (p, len) = c.len_delimited()?;
            each(&mut c, p, len, &mut out)?;
        } else if tensor && TYPED.contains(&num) {
            return Err(Stop::Whole);
        } else {
            c.skip(wt, num)?;
            copy(&c, start, &mut out, limits)?;
        }
    }
    Ok(out)
}

/// The model without its initializers' `raw_data`, and where each is.
fn strip<R: ReadAt + ?Sized>(r: &R, limits: &Limits) -> Walk<(Vec<u8>, Vec<Raw>)> {
    let mut raws: Vec<Raw> = Vec::new();
    let model = walk(r, 0, r.len(), limits, MODEL_GRAPH, &mut |c, at, n, out| {
        let graph = walk(
            c.r,
            at,
            n,
            limits,
            GRAPH_INITIALIZER,
            &mut |c, at, n, out| {
                let mut raw: Raw = None;
                let tensor = walk(c.r, at, n, limits, TENSOR_RAW_DATA, &mut |_, at, n, _| {
                    raw = Some((at, n)); // the last one counts, as in prost
                    Ok(())
                })?;
                limits.check_tensors(raws.len() as u64 + 1)?;
                raws.push(raw);
                put_message(out, GRAPH_INITIALIZER, &tensor);
                Ok(())
            },
        )?;
        put_message(out, MODEL_GRAPH, &graph);
        Ok(())
    })?;
    Ok((model, raws))
}

impl FileIndex {
    /// An ONNX model whose initializers all keep their bytes in
    /// `raw_data`; false (read it whole) for anything else (see the module).
    pub(super) fn read_onnx<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let limits = self.limits;
        let (stripped, raws) = match strip(r, &limits) {
            Ok(x) => x,
            Err(Stop::Whole) => return Ok(false),
            Err(Stop::Err(e)) => return Err(e),
        };
        let o = onnx_format::ReadOptions::default().with_limits(limits);
        let model = onnx_format::Model::parse_with(&stripped, &o).map_err(onnx_err)?;
        drop(stripped);
        let inits = &model.graph_proto().initializer;
        if inits.len() != raws.len() || raws.iter().any(Option::is_none) {
            return Ok(false); // typed fields: read whole
        }
        let mut taken: HashSet<String> = HashSet::new();
        for (t, raw) in inits.iter().zip(raws) {
            let (offset, len) = raw.unwrap_or_default();
            let name = t.name.clone().unwrap_or_default();
            let (dtype, dims, byte_len) = onnx_format::read::tensor_layout(t, &limits)
                .and_then(|(d, dims, b)| {
                    onnx_format::read::check_raw_len(&name, d, &dims, b, len)?;
                    Ok((d, dims, b))
                })
                .map_err(onnx_err)?;
            let numel = count(&dims).ok_or_else(|| overflow(&name))?;
            let name = free_name(name, |n| taken.contains(n));
            taken.insert(name.clone());
            self.tensors.push(IndexedTensor {
                tensor_dims: None,
                stored: StoredTensor::from_parts(name, dims),
                dtype,
                order: MemoryOrder::RowMajor,
                offset,
                len: byte_len as u64,
                numel,
                layout: Layout::Range,
            });
        }
        self.metadata = crate::formats::onnx::metadata(&model);
        self.graph = Some(ModelGraph::single(model.graph()));
        Ok(true)
    }
}
