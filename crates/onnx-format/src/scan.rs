//! A wire-level pre-scan of a `ModelProto` that bounds what decoding it
//! allocates: every embedded message (nodes, attributes, tensors, value
//! infos, ...) is counted, at every depth, before prost builds one struct
//! per message. A message costs a few hundred bytes decoded however few
//! bytes it takes on the wire, so the count (not the file size) is what a
//! hostile file would inflate. Nesting is bounded too.

use tensor_core::Limits;

use crate::{Error, Result};

/// Deepest nesting of messages accepted (prost's own decoding limit is 100).
pub const MAX_DEPTH: usize = 100;

/// The kinds of messages of the schema that hold other messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Model,
    Graph,
    Node,
    Attribute,
    ValueInfo,
    Type,
    TypeTensor,
    TypeNested,
    TypeMap,
    Shape,
    Tensor,
    Sparse,
    Training,
    Function,
    Annotation,
    NodeDevice,
    Sharding,
    ShardedDim,
    /// A message with no embedded messages (or one this scan need not enter).
    Leaf,
}

/// The kind of message in field `field` of a `kind` message, if it is a message field.
fn child(kind: Kind, field: u64) -> Option<Kind> {
    use Kind::*;
    Some(match (kind, field) {
        (Model, 7) => Graph,
        (Model, 20) => Training,
        (Model, 25) => Function,
        (Model, 8 | 14 | 26) => Leaf,
        (Graph, 1) => Node,
        (Graph, 5) => Tensor,
        (Graph, 15) => Sparse,
        (Graph, 11..=13) => ValueInfo,
        (Graph, 14) => Annotation,
        (Graph, 16) => Leaf,
        (Node, 5) => Attribute,
        (Node, 9) => Leaf,
        (Node, 10) => NodeDevice,
        (Attribute, 5 | 10) => Tensor,
        (Attribute, 6 | 11) => Graph,
        (Attribute, 22 | 23) => Sparse,
        (Attribute, 14 | 15) => Type,
        (ValueInfo, 2) => Type,
        (ValueInfo, 4) => Leaf,
        (Type, 1 | 8) => TypeTensor,
        (Type, 4 | 9) => TypeNested,
        (Type, 5) => TypeMap,
        (Type, 7) => Leaf,
        (TypeTensor, 2) => Shape,
        (TypeNested, 1) => Type,
        (TypeMap, 2) => Type,
        (Shape, 1) => Leaf,
        (Tensor, 3 | 13 | 16) => Leaf,
        (Sparse, 1 | 2) => Tensor,
        (Training, 1 | 2) => Graph,
        (Training, 3 | 4) => Leaf,
        (Function, 7) => Node,
        (Function, 11) => Attribute,
        (Function, 12) => ValueInfo,
        (Function, 9 | 14) => Leaf,
        (Annotation, 2) => Leaf,
        (NodeDevice, 2) => Sharding,
        (Sharding, 3) => Leaf,
        (Sharding, 4) => ShardedDim,
        (ShardedDim, 2) => Leaf,
        _ => return None,
    })
}

fn varint(b: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b
            .get(*pos)
            .ok_or_else(|| bad(*pos, "a varint runs past the end"))?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(bad(*pos, "a varint is longer than 10 bytes"))
}

fn bad(offset: usize, what: &str) -> Error {
    Error::Invalid(format!("not an ONNX model: {what} (byte {offset})"))
}

/// Counts the embedded messages of the `ModelProto` in `bytes`, failing when
/// they exceed `limits.max_tensors`, when its nodes (at every depth, in
/// subgraphs and functions too) exceed `limits.max_nodes`, when they nest
/// deeper than [`MAX_DEPTH`], or when the wire format is broken.
pub fn check(bytes: &[u8], limits: &Limits) -> Result<u64> {
    let mut count = Counts::default();
    walk(bytes, 0, Kind::Model, 0, limits, &mut count)?;
    Ok(count.messages)
}

/// What [`check`] counts.
#[derive(Default)]
struct Counts {
    messages: u64,
    nodes: u64,
}

fn walk(
    b: &[u8],
    base: usize,
    kind: Kind,
    depth: usize,
    limits: &Limits,
    count: &mut Counts,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(bad(base, "messages nest too deeply"));
    }
    let mut pos = 0usize;
    while pos < b.len() {
        let key = varint(b, &mut pos)?;
        let (field, wire) = (key >> 3, key & 7);
        if field == 0 {
            return Err(bad(base + pos, "field number 0"));
        }
        match wire {
            0 => {
                varint(b, &mut pos)?;
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                pos = pos
                    .checked_add(n)
                    .filter(|&p| p <= b.len())
                    .ok_or_else(|| bad(base + pos, "a fixed-size field runs past the end"))?;
            }
            2 => {
                let len = varint(b, &mut pos)?;
                let start = pos;
                let end = usize::try_from(len)
                    .ok()
                    .and_then(|l| start.checked_add(l))
                    .filter(|&e| e <= b.len())
                    .ok_or_else(|| {
                        bad(
                            base + start,
                            &format!("a field of {len} bytes runs past the end"),
                        )
                    })?;
                if let Some(k) = child(kind, field) {
                    count.messages += 1;
                    if count.messages > limits.max_tensors {
                        return Err(Error::Core(tensor_core::Error::LimitExceeded {
                            what: "ONNX message count (nodes, attributes, tensors, values)",
                            value: count.messages,
                            limit: limits.max_tensors,
                        }));
                    }
                    if k == Kind::Node {
                        count.nodes += 1;
                        limits.check_nodes(count.nodes)?;
                    }
                    if k != Kind::Leaf {
                        walk(&b[start..end], base + start, k, depth + 1, limits, count)?;
                    }
                }
                pos = end;
            }
            _ => return Err(bad(base + pos, &format!("unsupported wire type {wire}"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_bounds() {
        // ModelProto { graph { node {} node {} } }
        let b = [0x3a, 4, 0x0a, 0, 0x0a, 0];
        assert_eq!(check(&b, &Limits::default()).unwrap(), 3);
        assert!(check(&b, &Limits::default().with_max_tensors(2)).is_err());
        assert!(check(&[0x3a, 9, 0], &Limits::default()).is_err());
        assert!(check(&[0x08], &Limits::default()).is_err());
        assert!(check(&[0x0b], &Limits::default()).is_err());
        // deep nesting: graph -> node -> attribute -> graph -> ...
        let mut inner: Vec<u8> = Vec::new();
        for _ in 0..200 {
            let mut attr = vec![0x32];
            push_len(&mut attr, &inner); // attribute.g
            let mut node = vec![0x2a];
            push_len(&mut node, &attr); // node.attribute
            let mut graph = vec![0x0a];
            push_len(&mut graph, &node); // graph.node
            inner = graph;
        }
        let mut model = vec![0x3a];
        push_len(&mut model, &inner);
        assert!(check(&model, &Limits::default()).is_err());
    }

    fn push_len(out: &mut Vec<u8>, body: &[u8]) {
        let mut n = body.len() as u64;
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        out.extend_from_slice(body);
    }
}
