//! ONNX `.onnx` models by random access: the `ModelProto` walked field by
//! field through [`ReadAt`] (the cursor of `wire.rs`), every field copied
//! except each main-graph initializer's `raw_data` and typed fields of
//! numbers (`float_data`, `int32_data`, `int64_data`, `double_data`,
//! `uint64_data`), whose places are recorded (the typed fields checked
//! where that is cheap; a packed varint run passed over by its length, its
//! values counted at open or at the tensor's first read: see
//! `onnx_typed.rs`); the copy (the model without
//! its tensor data: nodes, attributes, inputs, outputs, initializers'
//! names, types and shapes) is then read by `onnx-format`'s own reader,
//! with its checks, and each initializer's layout checked as
//! [`onnx_format::tensor_from_proto`] checks it.
//!
//! Read this way: every model the whole-file path reads but for proto2
//! groups (read whole). An initializer's `raw_data` (contiguous
//! little-endian bytes, what exporters write) and one packed run of
//! `float_data` or `double_data` are byte ranges; other typed fields are
//! decoded a slice at a time (`onnx_typed.rs`). `string_data` is copied and
//! refused as the whole-file path refuses it (no string type), as is
//! external data.

use std::collections::HashSet;

use tensor_core::graph::ModelGraph;
use tensor_core::{Limits, MemoryOrder};

use super::onnx_typed::{Fields, Meta, OPEN_COUNT};
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

/// What the walk found of one initializer: its `raw_data`, its typed
/// fields, where its `TensorProto` is (start, end).
struct Init {
    raw: Raw,
    typed: Fields,
    at: u64,
    end: u64,
}

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

/// Walks the message at `[at, at + n)`: every field copied to the result
/// but field `special`, which `each` handles (it gets the cursor, the
/// payload's place and length, and the result), and with `typed` (a
/// `TensorProto`), its typed fields of numbers, checked and counted there
/// (not copied).
fn walk<R: ReadAt + ?Sized>(
    r: &R,
    at: u64,
    n: u64,
    limits: &Limits,
    special: u64,
    mut typed: Option<&mut Fields>,
    each: &mut Each<'_, R>,
) -> Walk<Vec<u8>> {
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
        } else if let Some(f) = typed.as_deref_mut().filter(|_| Fields::is_typed(num)) {
            f.take(&mut c, start, num, wt)?;
        } else {
            c.skip(wt, num)?;
            copy(&c, start, &mut out, limits)?;
        }
    }
    Ok(out)
}

/// The model without its initializers' data, and where each one's is.
fn strip<R: ReadAt + ?Sized>(r: &R, limits: &Limits) -> Walk<(Vec<u8>, Vec<Init>)> {
    let mut inits: Vec<Init> = Vec::new();
    let model = walk(
        r,
        0,
        r.len(),
        limits,
        MODEL_GRAPH,
        None,
        &mut |c, at, n, out| {
            let graph = walk(
                c.r,
                at,
                n,
                limits,
                GRAPH_INITIALIZER,
                None,
                &mut |c, at, n, out| {
                    let mut raw: Raw = None;
                    let mut typed = Fields::default();
                    let tensor = walk(
                        c.r,
                        at,
                        n,
                        limits,
                        TENSOR_RAW_DATA,
                        Some(&mut typed),
                        &mut |_, at, n, _| {
                            raw = Some((at, n)); // the last one counts, as in prost
                            Ok(())
                        },
                    )?;
                    limits.check_tensors(inits.len() as u64 + 1)?;
                    inits.push(Init {
                        raw,
                        typed,
                        at,
                        end: at + n,
                    });
                    put_message(out, GRAPH_INITIALIZER, &tensor);
                    Ok(())
                },
            )?;
            put_message(out, MODEL_GRAPH, &graph);
            Ok(())
        },
    )?;
    Ok((model, inits))
}

impl FileIndex {
    /// An ONNX model (see the module); false (read it whole) for one with
    /// proto2 groups.
    pub(crate) fn read_onnx<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let limits = self.limits;
        let (stripped, found) = match strip(r, &limits) {
            Ok(x) => x,
            Err(Stop::Whole) => return Ok(false),
            Err(Stop::Err(e)) => return Err(e),
        };
        let o = onnx_format::ReadOptions::default().with_limits(limits);
        let model = onnx_format::Model::parse_with(&stripped, &o).map_err(onnx_err)?;
        drop(stripped);
        let inits = &model.graph_proto().initializer;
        if inits.len() != found.len() {
            return Ok(false);
        }
        // the typed fields the values are not read from, checked first (as
        // prost checks every field before any tensor is looked at)
        for (t, init) in inits.iter().zip(&found) {
            let source = match init.raw {
                Some(_) => None,
                None => onnx_format::read::tensor_layout(t, &limits)
                    .ok()
                    .map(|(dtype, _, _)| dtype),
            };
            init.typed.check_others(r, source, init.end)?;
        }
        let mut budget = OPEN_COUNT;
        let mut taken: HashSet<String> = HashSet::new();
        for (t, init) in inits.iter().zip(found) {
            let name = t.name.clone().unwrap_or_default();
            let (dtype, dims, byte_len) =
                onnx_format::read::tensor_layout(t, &limits).map_err(onnx_err)?;
            let numel = count(&dims).ok_or_else(|| overflow(&name))?;
            let (offset, layout) = match init.raw {
                Some((offset, len)) => {
                    onnx_format::read::check_raw_len(&name, dtype, &dims, byte_len, len)
                        .map_err(onnx_err)?;
                    (offset, Layout::Contiguous)
                }
                None => {
                    // as `onnx_format::read::tensor_from_proto` checks them
                    // (the count maybe at the first read: see `onnx_typed.rs`)
                    limits.check_alloc("tensor data", byte_len as u64)?;
                    let meta = Meta {
                        name: &name,
                        dtype,
                        dims: &dims,
                        numel,
                        at: init.at,
                        end: init.end,
                    };
                    init.typed.layout(r, &meta, &mut budget)?
                }
            };
            // a repeated name gets `#2`, ...; its stored name stays (as
            // `Contents::push` does)
            let mut stored = StoredTensor::from_parts(name, dims);
            stored.name = free_name(stored.name, |n| taken.contains(n));
            taken.insert(stored.name.clone());
            self.tensors.push(IndexedTensor {
                tensor_dims: None,
                stored,
                dtype,
                order: MemoryOrder::RowMajor,
                offset,
                len: byte_len as u64,
                numel,
                layout,
            });
        }
        self.metadata = crate::formats::onnx::metadata(&model);
        self.graph = Some(ModelGraph::single(model.graph()));
        Ok(true)
    }
}
