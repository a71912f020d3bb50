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

/// `ModelProto.graph`, `GraphProto.initializer`, `GraphProto.node`,
/// `NodeProto.attribute`, `AttributeProto.t`, `TensorProto.raw_data`.
const MODEL_GRAPH: u64 = 7;
const GRAPH_INITIALIZER: u64 = 5;
const GRAPH_NODE: u64 = 1;
const NODE_ATTRIBUTE: u64 = 5;
const ATTRIBUTE_T: u64 = 5;
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

/// What [`walk`] does with its special fields: the cursor, the field's
/// number, the payload's place and length, the message's copy.
type Each<'f, R> = dyn FnMut(&mut Cursor<'_, R>, u64, u64, u64, &mut Vec<u8>) -> Walk<()> + 'f;

/// Walks the message at `[at, at + n)`: every field copied to the result
/// but the fields `special`, which `each` handles (it gets the cursor, the
/// field's number, the payload's place and length, and the result), and
/// with `typed` (a `TensorProto`), its typed fields of numbers, checked
/// and counted there (not copied).
fn walk<R: ReadAt + ?Sized>(
    r: &R,
    at: u64,
    n: u64,
    limits: &Limits,
    special: &[u64],
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
        if special.contains(&num) {
            if wt != LEN {
                return Err(bad(
                    WHAT,
                    start,
                    format!("field {num} has wire type {wt}, expected 2"),
                ));
            }
            let (p, len) = c.len_delimited()?;
            each(&mut c, num, p, len, &mut out)?;
        } else if let Some(f) = typed.as_deref_mut().filter(|_| Fields::is_typed(num)) {
            f.take(&mut c, start, num, wt)?;
        } else {
            c.skip(wt, num)?;
            copy(&c, start, &mut out, limits)?;
        }
    }
    Ok(out)
}

/// Walks the `TensorProto` at `[at, at + n)`: its copy without `raw_data`
/// and typed fields, and where those are.
fn tensor<R: ReadAt + ?Sized>(r: &R, at: u64, n: u64, limits: &Limits) -> Walk<(Vec<u8>, Init)> {
    let mut raw: Raw = None;
    let mut typed = Fields::default();
    let copy = walk(
        r,
        at,
        n,
        limits,
        &[TENSOR_RAW_DATA],
        Some(&mut typed),
        &mut |_, _, at, n, _| {
            raw = Some((at, n)); // the last one counts, as in prost
            Ok(())
        },
    )?;
    let init = Init {
        raw,
        typed,
        at,
        end: at + n,
    };
    Ok((copy, init))
}

/// Where the tensors of one node's attributes (`AttributeProto.t`) are,
/// by attribute position; `None` for an attribute with more than one `t`
/// (prost merges them: such a value is read from the decoded model).
type NodeTensors = Vec<(usize, Option<Init>)>;

/// Walks the `NodeProto` at `[at, at + n)`: where each attribute's tensor
/// is (the node itself is copied as it is, data included).
fn node_tensors<R: ReadAt + ?Sized>(r: &R, at: u64, n: u64, limits: &Limits) -> Walk<NodeTensors> {
    let mut found: NodeTensors = Vec::new();
    let mut attr = 0usize;
    walk(
        r,
        at,
        n,
        limits,
        &[NODE_ATTRIBUTE],
        None,
        &mut |c, _, at, n, _| {
            let mut this: Option<Option<Init>> = None;
            walk(
                c.r,
                at,
                n,
                limits,
                &[ATTRIBUTE_T],
                None,
                &mut |c, _, at, n, _| {
                    let (_, init) = tensor(c.r, at, n, limits)?;
                    this = Some(match this {
                        None => Some(init),
                        Some(_) => None,
                    });
                    Ok(())
                },
            )?;
            if let Some(t) = this {
                found.push((attr, t));
            }
            attr += 1;
            Ok(())
        },
    )?;
    Ok(found)
}

/// What [`strip`] finds: the model without its initializers' data, where
/// each initializer's data is, and where each node's attribute tensors are
/// (by node position).
type Stripped = (Vec<u8>, Vec<Init>, Vec<(usize, NodeTensors)>);

/// The model without its initializers' data, where each one's is, and
/// where the nodes' attribute tensors are (nodes are copied whole).
fn strip<R: ReadAt + ?Sized>(r: &R, limits: &Limits) -> Walk<Stripped> {
    let mut inits: Vec<Init> = Vec::new();
    let mut nodes: Vec<(usize, NodeTensors)> = Vec::new();
    let mut node = 0usize;
    let model = walk(
        r,
        0,
        r.len(),
        limits,
        &[MODEL_GRAPH],
        None,
        &mut |c, _, at, n, out| {
            let graph = walk(
                c.r,
                at,
                n,
                limits,
                &[GRAPH_INITIALIZER, GRAPH_NODE],
                None,
                &mut |c, num, at, n, out| {
                    if num == GRAPH_NODE {
                        let found = node_tensors(c.r, at, n, limits)?;
                        if !found.is_empty() {
                            nodes.push((node, found));
                        }
                        node += 1;
                        limits.check_alloc(
                            "ONNX model fields",
                            (out.len() as u64).saturating_add(n),
                        )?;
                        put_message(out, GRAPH_NODE, &c.read(at, n, limits)?);
                        return Ok(());
                    }
                    let (tensor, init) = tensor(c.r, at, n, limits)?;
                    limits.check_tensors(inits.len() as u64 + 1)?;
                    inits.push(init);
                    put_message(out, GRAPH_INITIALIZER, &tensor);
                    Ok(())
                },
            )?;
            put_message(out, MODEL_GRAPH, &graph);
            Ok(())
        },
    )?;
    Ok((model, inits, nodes))
}

/// Where one tensor's data is: its dtype, dims, element count, offset,
/// byte length and layout.
struct Located {
    dtype: tensor_core::DType,
    dims: Vec<usize>,
    numel: u64,
    offset: u64,
    len: u64,
    layout: Layout,
}

/// The data of the tensor `t` (its `TensorProto` walked as `init`) as
/// [`onnx_format::tensor_from_proto`] checks it.
fn locate<R: ReadAt + ?Sized>(
    r: &R,
    t: &onnx_format::TensorProto,
    init: Init,
    limits: &Limits,
    budget: &mut u64,
) -> Result<Located> {
    let name = t.name.clone().unwrap_or_default();
    let (dtype, dims, byte_len) = onnx_format::read::tensor_layout(t, limits).map_err(onnx_err)?;
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
            init.typed.layout(r, &meta, budget)?
        }
    };
    Ok(Located {
        dtype,
        dims,
        numel,
        offset,
        len: byte_len as u64,
        layout,
    })
}

/// The tensor of a `Constant` node's value `v`: located in the file when
/// it is a `TensorProto` walked once (`found`), else held (decoded from the
/// model). `None` for a type `tensor-core` has no equivalent of (left out,
/// as the whole-file path leaves it out).
fn constant<R: ReadAt + ?Sized>(
    r: &R,
    v: onnx_format::ConstantValue<'_>,
    found: Option<Init>,
    limits: &Limits,
    budget: &mut u64,
) -> Result<Option<Located>> {
    if let onnx_format::ConstantValue::Tensor(t) = v {
        if let Err(onnx_format::Error::UnsupportedDataType { .. }) =
            onnx_format::read::tensor_layout(t, limits)
        {
            return Ok(None);
        }
        if let Some(init) = found {
            return locate(r, t, init, limits, budget).map(Some);
        }
    }
    let t = v.tensor(None, limits).map_err(onnx_err)?;
    Ok(Some(Located {
        dtype: t.dtype(),
        dims: t.dims().to_vec(),
        numel: t.numel() as u64,
        offset: 0,
        len: t.bytes().len() as u64,
        layout: Layout::Held(std::sync::Arc::from(t.bytes())),
    }))
}

impl FileIndex {
    /// An ONNX model (see the module); false (read it whole) for one with
    /// proto2 groups.
    pub(crate) fn read_onnx<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let limits = self.limits;
        let (stripped, found, mut nodes) = match strip(r, &limits) {
            Ok(x) => x,
            Err(Stop::Whole) => return Ok(false),
            Err(Stop::Err(e)) => return Err(e),
        };
        let o = onnx_format::ReadOptions::default().with_limits(limits);
        let model = onnx_format::Model::parse_with(&stripped, &o).map_err(onnx_err)?;
        drop(stripped);
        let graph = model.graph_proto();
        let inits = &graph.initializer;
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
        let mut located = Vec::with_capacity(inits.len());
        for (t, init) in inits.iter().zip(found) {
            let name = t.name.clone().unwrap_or_default();
            located.push((name, locate(r, t, init, &limits, &mut budget)?));
        }
        // then the tensors of the `Constant` nodes, as the whole path reads
        // them (`onnx_format::Model::constants`)
        for (i, n) in graph.node.iter().enumerate() {
            let Some((a, v)) = onnx_format::constant_attribute(n) else {
                continue;
            };
            // (both recorded in increasing position)
            let walked = nodes
                .binary_search_by_key(&i, |(at, _)| *at)
                .ok()
                .and_then(|k| nodes.get_mut(k))
                .and_then(|(_, attrs)| {
                    let k = attrs.binary_search_by_key(&a, |(at, _)| *at).ok()?;
                    attrs.get_mut(k)?.1.take()
                });
            if let Some(l) = constant(r, v, walked, &limits, &mut budget)? {
                located.push((n.output.first().cloned().unwrap_or_default(), l));
            }
        }
        for (name, l) in located {
            // a repeated name gets `#2`, ...; its stored name stays (as
            // `Contents::push` does)
            let mut stored = StoredTensor::from_parts(name, l.dims);
            stored.name = free_name(stored.name, |n| taken.contains(n));
            taken.insert(stored.name.clone());
            self.tensors.push(IndexedTensor {
                tensor_dims: None,
                stored,
                dtype: l.dtype,
                order: MemoryOrder::RowMajor,
                offset: l.offset,
                len: l.len,
                numel: l.numel,
                layout: l.layout,
            });
        }
        self.metadata = crate::formats::onnx::metadata(&model);
        self.graph = Some(ModelGraph::single(model.graph()));
        Ok(true)
    }
}
