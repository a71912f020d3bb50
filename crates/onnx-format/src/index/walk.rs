//! The field walk of [`super`]: a message copied field by field through a
//! [`Cursor`], some fields handed to a callback instead (the initializers'
//! data, the nodes' attribute tensors).

use tensor_core::Limits;
use tensor_core::wire::{Cursor, LEN, ReadAt};

use super::typed::Fields;
use crate::Error;

/// `ModelProto.graph`, `GraphProto.initializer`, `GraphProto.node`,
/// `NodeProto.attribute`, `AttributeProto.t`, `TensorProto.raw_data`.
pub(super) const MODEL_GRAPH: u64 = 7;
pub(super) const GRAPH_INITIALIZER: u64 = 5;
const GRAPH_NODE: u64 = 1;
const NODE_ATTRIBUTE: u64 = 5;
const ATTRIBUTE_T: u64 = 5;
pub(super) const TENSOR_RAW_DATA: u64 = 9;

/// What the messages of the walk call the bytes.
pub(super) const WHAT: &str = "the model";

/// The walk stops: an error, or a layout it does not index (proto2
/// groups: the model is read whole).
pub(super) enum Stop {
    Err(Error),
    Whole,
}

impl<E: Into<Error>> From<E> for Stop {
    fn from(e: E) -> Self {
        Stop::Err(e.into())
    }
}

pub(super) type Walk<T> = std::result::Result<T, Stop>;

/// Where a `raw_data` is: offset and length.
type Raw = Option<(u64, u64)>;

/// What the walk found of one `TensorProto`: its `raw_data`, its typed
/// fields, where it is (start, end).
pub(super) struct Init {
    pub raw: Raw,
    pub typed: Fields,
    pub at: u64,
    pub end: u64,
}

/// Appends the bytes `[from, c.pos)` of the file to `out`, under `limits`.
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
pub(super) fn put_message(out: &mut Vec<u8>, num: u64, payload: &[u8]) {
    put_varint(out, (num << 3) | LEN);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// What [`walk`] does with its special fields: the cursor, the field's
/// number, the payload's place and length, the message's copy.
pub(super) type Each<'f, R> =
    dyn FnMut(&mut Cursor<'_, R>, u64, u64, u64, &mut Vec<u8>) -> Walk<()> + 'f;

/// Walks the message at `[at, at + n)`: every field copied to the result
/// but the fields `special`, which `each` handles, and with `typed` (a
/// `TensorProto`), its typed fields of numbers, checked and counted there
/// (not copied).
pub(super) fn walk<R: ReadAt + ?Sized>(
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
        .ok_or_else(|| tensor_core::wire::bad(WHAT, at, "a length past the file"))?;
    let mut c = Cursor::new(r, WHAT, at, end);
    let mut out = Vec::new();
    while c.pos < c.end {
        let start = c.pos;
        let (num, wt) = c.key()?;
        if wt == 3 || wt == 4 {
            // proto2 groups: prost skips them, this walk does not
            return Err(Stop::Whole);
        }
        if special.contains(&num) {
            if wt != LEN {
                let what = format!("field {num} has wire type {wt}, expected 2");
                return Err(tensor_core::wire::bad(WHAT, start, what).into());
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
pub(super) type NodeTensors = Vec<(usize, Option<Init>)>;

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
pub(super) type Stripped = (Vec<u8>, Vec<Init>, Vec<(usize, NodeTensors)>);

/// The model without its initializers' data, where each one's is, and
/// where the nodes' attribute tensors are (nodes are copied whole).
pub(super) fn strip<R: ReadAt + ?Sized>(r: &R, limits: &Limits) -> Walk<Stripped> {
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
