//! The `ModelProto` of an ONNX model opened by random access, each
//! main-graph initializer's `raw_data` left out (the rest of the model,
//! typed fields of numbers included, read into memory): what a conversion
//! that rewrites the model's graph (`convert_index` of an ONNX model to
//! ONNX with options) starts from, writing those initializers' data from
//! the index when it gets to them.

use onnx_format::Model;
use tensor_core::Limits;

use super::wire::{Cursor, LEN, Stop, Walk, bad};
use super::{FileIndex, ReadAt};
use crate::formats::onnx::onnx_err;
use crate::{Error, Result};

/// `ModelProto.graph`, `GraphProto.initializer`, `TensorProto.raw_data`.
const MODEL_GRAPH: u64 = 7;
const GRAPH_INITIALIZER: u64 = 5;
const TENSOR_RAW_DATA: u64 = 9;

const WHAT: &str = "the model";

/// What [`walk`] does with its special field: the reader, the payload's
/// place and length, the message's copy so far.
type Each<'f, R> = dyn FnMut(&R, u64, u64, &mut Vec<u8>) -> Walk<()> + 'f;

/// Walks the message at `[at, at + n)`: every field copied into the result
/// but field `special`, which `each` gets (the cursor, the payload's place
/// and length, the result so far).
fn walk<R: ReadAt + ?Sized>(
    r: &R,
    at: u64,
    n: u64,
    limits: &Limits,
    special: u64,
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
        if wt == 3 || wt == 4 {
            // proto2 groups: the index reads such a model whole
            return Err(Stop::Whole);
        }
        if num == special && wt == LEN {
            let (p, len) = c.len_delimited()?;
            each(r, p, len, &mut out)?;
        } else {
            c.skip(wt, num)?;
            let n = c.pos - start;
            limits.check_alloc("ONNX model fields", (out.len() as u64).saturating_add(n))?;
            out.extend(c.read(start, n, limits)?);
        }
    }
    Ok(out)
}

/// Appends field `num` holding the message `payload`.
fn put_message(out: &mut Vec<u8>, num: u64, payload: &[u8]) {
    let mut put = |mut v: u64| {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    };
    put((num << 3) | LEN);
    put(payload.len() as u64);
    out.extend_from_slice(payload);
}

impl FileIndex {
    /// The ONNX model this index describes, read through `r` without its
    /// main-graph initializers' `raw_data`, and for each initializer (in
    /// order) whether it had one (its data is then the index's tensor of
    /// the same position). `Ok(None)` for a model the index read whole
    /// (proto2 groups) or that is not ONNX.
    pub(crate) fn onnx_model_without_raw<R: ReadAt + ?Sized>(
        &self,
        r: &R,
    ) -> Result<Option<(Model, Vec<bool>)>> {
        if self.format() != crate::Format::Onnx {
            return Ok(None);
        }
        let limits = self.limits;
        let mut had_raw = Vec::new();
        let walked = walk(r, 0, r.len(), &limits, MODEL_GRAPH, &mut |r, at, n, out| {
            let graph = walk(
                r,
                at,
                n,
                &limits,
                GRAPH_INITIALIZER,
                &mut |r, at, n, out| {
                    let mut raw = false;
                    let tensor = walk(r, at, n, &limits, TENSOR_RAW_DATA, &mut |_, _, _, _| {
                        raw = true;
                        Ok(())
                    })?;
                    had_raw.push(raw);
                    put_message(out, GRAPH_INITIALIZER, &tensor);
                    Ok(())
                },
            )?;
            put_message(out, MODEL_GRAPH, &graph);
            Ok(())
        });
        let bytes = match walked {
            Ok(b) => b,
            Err(Stop::Whole) => return Ok(None),
            Err(Stop::Err(e)) => return Err(e),
        };
        let o = onnx_format::ReadOptions::default().with_limits(limits);
        let model = onnx_format::Model::parse_with(&bytes, &o).map_err(onnx_err)?;
        let n = model.graph_proto().initializer.len();
        // (the index lists the initializers first, then the `Constant` nodes'
        // tensors, which stay in the model's nodes)
        if n != had_raw.len() || n > self.tensors().len() {
            return Err(Error::Invalid(
                "the model's initializers are not those the index found".into(),
            ));
        }
        Ok(Some((model, had_raw)))
    }
}
