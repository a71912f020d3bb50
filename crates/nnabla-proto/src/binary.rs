//! Binary `.protobuf`: the zero-copy reader (parameter data borrowed from
//! the input or shared with a memory map), plain prost decoding and
//! encoding, and the streaming parameter writer.
//!
//! ```
//! use nnabla_proto::{ReadOptions, binary, text};
//!
//! let model = text::parse("parameter { variable_name: 'w' shape { dim: 2 } data: [0.5, 2] }")?;
//! let bytes = binary::encode(&model);
//! let file = binary::parse_with(&bytes, &ReadOptions::default())?;
//! let w = &file.parameters[0];
//! assert!(w.tensor.storage().is_zero_copy());
//! assert_eq!(&*w.tensor.view::<f32>()?, &[0.5, 2.0]);
//! assert_eq!(binary::decode(&bytes)?, model); // plain prost: data in `Vec<f32>`
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use prost::Message;
use tensor_core::{MappedFile, Tensor};

use crate::index::{Scattered, merge_index};
use crate::params::{ParamTensor, f32_bytes};
use crate::wire::{self, LEN, VARINT};
use crate::{Error, NNablaProtoBuf, ReadOptions, Result};

/// Field number of `NNablaProtoBuf.parameter`.
const ROOT_PARAMETER: u32 = 200;

/// Reads a binary `.protobuf` with the default options; parameter data is
/// borrowed from `bytes` (see [`parse_with`]).
pub fn parse(bytes: &[u8]) -> Result<BinaryFile<'_>> {
    parse_with(bytes, &ReadOptions::default())
}

/// Reads a binary `.protobuf`, reading the `parameter` entries by hand: a
/// packed `data` run (the normal case) is borrowed from `bytes` as the
/// tensor's storage without copying; unpacked or split data is collected.
/// All other fields go through prost. See [`decode`] for the plain path.
pub fn parse_with<'a>(bytes: &'a [u8], opts: &ReadOptions) -> Result<BinaryFile<'a>> {
    let mut model = NNablaProtoBuf::default();
    let parameters = merge_borrowed(&mut model, bytes, opts)?;
    Ok(BinaryFile { model, parameters })
}

/// Reads a memory-mapped binary `.protobuf`; parameter data stays in the
/// map (shared, zero-copy).
pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<BinaryFile<'static>> {
    let BinaryFile { model, parameters } = parse_with(map.as_bytes(), opts)?;
    let parameters = parameters
        .into_iter()
        .map(|p| ParamTensor::new(p.name, p.tensor.rebase(map), p.need_grad))
        .collect();
    Ok(BinaryFile { model, parameters })
}

/// Memory-maps the file at `path` and reads it with the default options.
pub fn open(path: impl AsRef<Path>) -> Result<BinaryFile<'static>> {
    open_with(path, &ReadOptions::default())
}

/// Memory-maps the file at `path` and reads it with `opts` (see [`from_map`]).
pub fn open_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<BinaryFile<'static>> {
    let map = MappedFile::open(path)?;
    from_map(&map, opts)
}

/// Decodes a whole binary `.protobuf` with prost (parameter data becomes
/// `Vec<f32>`). Accepts packed and unpacked repeated scalars; unknown fields
/// are skipped. Nesting deeper than prost's recursion limit (100) is an error.
pub fn decode(bytes: &[u8]) -> Result<NNablaProtoBuf> {
    NNablaProtoBuf::decode(bytes).map_err(|e| prost_error(bytes.len(), e))
}

/// Merges a binary `.protobuf` into `root` with prost, the way nnabla does
/// when it loads several files into one root message: repeated fields are
/// appended, singular fields overwritten, sub-messages merged.
pub fn merge(root: &mut NNablaProtoBuf, bytes: &[u8]) -> Result<()> {
    root.merge(bytes).map_err(|e| prost_error(bytes.len(), e))
}

/// Encodes `model` as a binary `.protobuf` (what Python's `SerializeToString` gives).
pub fn encode(model: &NNablaProtoBuf) -> Vec<u8> {
    model.encode_to_vec()
}

/// Writes `model` as a binary `.protobuf` to `out`.
pub fn write(mut out: impl Write, model: &NNablaProtoBuf) -> Result<()> {
    out.write_all(&model.encode_to_vec())?;
    Ok(())
}

pub(crate) fn prost_error(len: usize, e: prost::DecodeError) -> Error {
    // prost does not report offsets; say how big the input was instead.
    Error::wire(0, format!("{e} (in {len} bytes of input)"))
}

/// A binary `.protobuf` decoded with its parameter data borrowed from the input.
///
/// `model` holds every field except `parameter` (field 200), which is in
/// `parameters`, in file order (a name stored twice appears twice).
#[derive(Debug, Clone)]
pub struct BinaryFile<'a> {
    /// Everything but the parameters (`model.parameter` is empty).
    pub model: NNablaProtoBuf,
    /// The `parameter` entries as f32 tensors, in file order.
    pub parameters: Vec<ParamTensor<'a>>,
}

/// Like [`parse_with`], but merges the non-parameter fields into an
/// existing root message (nnabla's loader merges every file into one root)
/// and returns the parameters, borrowed from `bytes`: the walk of
/// [`crate::index::merge_index`] over `bytes`, each packed run borrowed,
/// unpacked or split data collected.
pub fn merge_borrowed<'a>(
    root: &mut NNablaProtoBuf,
    bytes: &'a [u8],
    opts: &ReadOptions,
) -> Result<Vec<ParamTensor<'a>>> {
    let len = bytes.len() as u64;
    let mut params = Vec::new();
    merge_index(root, bytes, 0, len, opts, Scattered::Collect, |p| {
        params.push(p.in_bytes(bytes)?);
        Ok(())
    })?;
    Ok(params)
}

/// Writes one parameter as a root-level `parameter` entry (field 200), in
/// the byte layout nnabla and prost use: `variable_name`, `shape` (packed
/// dims, present when the rank is above 0), packed `data`, `need_grad` when
/// true. Streams the tensor bytes; nothing is converted per element for f32.
pub(crate) fn write_parameter_entry(
    out: &mut impl Write,
    name: &str,
    dims: &[usize],
    data_le: &[u8],
    need_grad: bool,
) -> Result<()> {
    let mut head = Vec::with_capacity(name.len() + 64);
    // variable_name (skipped when empty, as proto3 does)
    let mut shape = Vec::new();
    for &d in dims {
        wire::put_varint(&mut shape, d as u64);
    }
    let mut body_len = 0usize;
    if !name.is_empty() {
        body_len += 1 + wire::varint_len(name.len() as u64) + name.len();
    }
    let shape_msg_len = if shape.is_empty() {
        0
    } else {
        1 + wire::varint_len(shape.len() as u64) + shape.len()
    };
    if !dims.is_empty() {
        body_len += 2 + wire::varint_len(shape_msg_len as u64) + shape_msg_len;
    }
    if !data_le.is_empty() {
        body_len += 2 + wire::varint_len(data_le.len() as u64) + data_le.len();
    }
    if need_grad {
        body_len += 3;
    }
    wire::put_key(&mut head, ROOT_PARAMETER, LEN);
    wire::put_varint(&mut head, body_len as u64);
    if !name.is_empty() {
        wire::put_len_delimited(&mut head, 1, name.as_bytes());
    }
    if !dims.is_empty() {
        wire::put_key(&mut head, 20, LEN);
        wire::put_varint(&mut head, shape_msg_len as u64);
        if !shape.is_empty() {
            wire::put_len_delimited(&mut head, 1, &shape);
        }
    }
    if !data_le.is_empty() {
        wire::put_key(&mut head, 100, LEN);
        wire::put_varint(&mut head, data_le.len() as u64);
    }
    out.write_all(&head)?;
    out.write_all(data_le)?;
    if need_grad {
        let mut tail = Vec::with_capacity(3);
        wire::put_key(&mut tail, 101, VARINT);
        tail.push(1);
        out.write_all(&tail)?;
    }
    Ok(())
}

/// Streams a parameters-only binary `.protobuf` (what `nn.save_parameters`
/// writes) to `out`: one `parameter` entry per item, tensor bytes written
/// directly (f32 tensors are not converted element by element).
pub fn write_parameters<'t, W: Write>(
    mut out: W,
    params: impl IntoIterator<Item = (&'t str, &'t Tensor<'t>, bool)>,
) -> Result<()> {
    for (name, tensor, need_grad) in params {
        let data = f32_bytes(name, tensor)?;
        write_parameter_entry(&mut out, name, tensor.dims(), &data, need_grad)?;
    }
    out.flush()?;
    Ok(())
}
