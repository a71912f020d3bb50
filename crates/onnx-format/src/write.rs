//! Writing `.onnx` models: a whole `ModelProto`, or named tensors as the
//! initializers of a model with an empty graph, streamed one tensor at a
//! time.

use std::borrow::Cow;
use std::io::Write;

use prost::Message as _;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint};
use tensor_core::{DType, MemoryOrder, Tensor};

use crate::dtype::to_onnx;
use crate::proto::{GraphProto, ModelProto, OperatorSetIdProto, TensorProto};
use crate::{Error, Result};

/// The ONNX operator set written by default.
pub const DEFAULT_OPSET: i64 = 13;

/// The producer name written into models.
pub const PRODUCER: &str = "mlformats";

/// The IR version that goes with an operator set version (the smallest
/// that allows it, so older runtimes load the model).
pub fn ir_version_for(opset: i64) -> i64 {
    match opset {
        ..=8 => 3,
        9 => 4,
        10 => 5,
        11 => 6,
        12..=14 => 7,
        15..=18 => 8,
        19..=20 => 9,
        21 => 10,
        _ => 11,
    }
}

/// What goes into a written model besides its tensors.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WriteOptions {
    /// The default-domain operator set version imported.
    pub opset: i64,
    /// `producer_name`.
    pub producer: String,
    /// The graph's name.
    pub graph_name: String,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            opset: DEFAULT_OPSET,
            producer: PRODUCER.into(),
            graph_name: "tensors".into(),
        }
    }
}

impl WriteOptions {
    /// The same options importing operator set `opset`.
    pub fn with_opset(mut self, opset: i64) -> Self {
        self.opset = opset;
        self
    }

    /// The same options naming the graph `name`.
    pub fn with_graph_name(mut self, name: impl Into<String>) -> Self {
        self.graph_name = name.into();
        self
    }
}

/// A `ModelProto` around `graph`, importing the default operator set
/// `opts.opset`, with the matching IR version.
pub fn model(graph: GraphProto, opts: &WriteOptions) -> ModelProto {
    ModelProto {
        ir_version: Some(ir_version_for(opts.opset)),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opts.opset),
        }],
        producer_name: Some(opts.producer.clone()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        graph: Some(graph),
        ..ModelProto::default()
    }
}

/// Writes a whole model.
pub fn write_model<W: Write>(mut w: W, model: &ModelProto) -> Result<()> {
    w.write_all(&model.encode_to_vec())?;
    Ok(())
}

/// A tensor as a `TensorProto` named `name` (row-major, little-endian
/// `raw_data`; column-major data is transposed).
pub fn tensor_to_proto(name: &str, t: &Tensor<'_>) -> Result<TensorProto> {
    let mut p = tensor_header(name, t.dtype(), t.dims())?;
    let data = match t.order() {
        MemoryOrder::RowMajor => Cow::Borrowed(t.bytes()),
        MemoryOrder::ColumnMajor => Cow::Owned(t.to_row_major()?.bytes().to_vec()),
    };
    p.raw_data = Some(prost::bytes::Bytes::copy_from_slice(&data));
    Ok(p)
}

/// The `TensorProto` of a tensor without its data.
fn tensor_header(name: &str, dtype: DType, dims: &[usize]) -> Result<TensorProto> {
    let data_type = to_onnx(dtype).ok_or_else(|| Error::NoOnnxType {
        tensor: name.to_string(),
        dtype,
    })?;
    Ok(TensorProto {
        dims: dims.iter().map(|&d| d as i64).collect(),
        data_type: Some(data_type),
        name: Some(name.to_string()),
        ..TensorProto::default()
    })
}

/// One tensor of [`write_tensors`]: its name, the dtype and dims it will
/// have, and the row-major little-endian bytes, asked for only when it is
/// written.
pub struct TensorEntry<'n> {
    /// The initializer's name.
    pub name: &'n str,
    /// Its element type.
    pub dtype: DType,
    /// Its dimensions.
    pub dims: Vec<usize>,
}

/// Writes `entries` as the initializers of a model whose graph has no node,
/// input or output, one tensor at a time: the message lengths are computed
/// from the names, dtypes and shapes first, then `data(i, w)` is called to
/// write the bytes of entry `i` (row-major, little-endian: exactly
/// `dims × dtype size` of them) and return how many it wrote, so memory
/// stays near the largest tensor.
pub fn write_tensors<W, F>(
    w: W,
    entries: &[TensorEntry<'_>],
    opts: &WriteOptions,
    mut data: F,
) -> Result<()>
where
    W: Write,
    F: FnMut(usize, &mut dyn Write) -> Result<usize>,
{
    let mut tw = TensorsWriter::new(w, entries, opts)?;
    for i in 0..entries.len() {
        tw.tensor(|w| data(i, w))?;
    }
    tw.finish()
}

/// [`write_tensors`] with the caller feeding the tensors: made from the
/// entries (the model up to the first initializer written), then given
/// each entry's bytes in turn ([`TensorsWriter::tensor`]), then finished
/// ([`TensorsWriter::finish`]). The bytes are [`write_tensors`]'s.
pub struct TensorsWriter<W: Write> {
    w: W,
    /// Per entry not yet written: its header, data length and message length.
    headers: std::vec::IntoIter<(TensorProto, usize, usize)>,
    opset: Vec<OperatorSetIdProto>,
}

impl<W: Write> TensorsWriter<W> {
    /// Computes the message lengths from the names, dtypes and shapes of
    /// `entries`, and writes the model up to the first initializer.
    pub fn new(mut w: W, entries: &[TensorEntry<'_>], opts: &WriteOptions) -> Result<Self> {
        let mut headers = Vec::with_capacity(entries.len());
        let mut graph_len = 0usize;
        let graph_name = GraphProto {
            name: Some(opts.graph_name.clone()),
            ..GraphProto::default()
        };
        graph_len += graph_name.encoded_len();
        for e in entries {
            let h = tensor_header(e.name, e.dtype, &e.dims)?;
            let n = tensor_core::checked_byte_len(&e.dims, e.dtype).ok_or_else(|| {
                Error::Invalid(format!("tensor {:?}: shape {:?} overflows", e.name, e.dims))
            })?;
            let raw = 1 + encoded_len_varint(n as u64) + n;
            let len = h.encoded_len() + raw;
            graph_len += 1 + encoded_len_varint(len as u64) + len;
            headers.push((h, n, len));
        }
        // ModelProto fields 1, 2, 3, then 7 (graph, streamed), then 8.
        let mut head = model(GraphProto::default(), opts);
        head.graph = None;
        let opset = std::mem::take(&mut head.opset_import);
        let mut buf = head.encode_to_vec();
        encode_key(7, WireType::LengthDelimited, &mut buf);
        encode_varint(graph_len as u64, &mut buf);
        graph_name
            .encode(&mut buf)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        w.write_all(&buf)?;
        Ok(TensorsWriter {
            w,
            headers: headers.into_iter(),
            opset,
        })
    }

    /// Writes the next entry: its header, then `data(w)` writes its bytes
    /// (row-major, little-endian: exactly `dims × dtype size` of them) and
    /// returns how many it wrote.
    pub fn tensor(&mut self, data: impl FnOnce(&mut dyn Write) -> Result<usize>) -> Result<()> {
        let (h, n, len) = self
            .headers
            .next()
            .ok_or_else(|| Error::Invalid("more tensors than entries".into()))?;
        write_streamed(&mut self.w, &h, len, n, data)
    }

    /// Writes the rest of the model, once every entry is written.
    pub fn finish(mut self) -> Result<()> {
        let left = self.headers.len();
        if left > 0 {
            return Err(Error::Invalid(format!("{left} tensors not written")));
        }
        let tail = ModelProto {
            opset_import: self.opset,
            ..ModelProto::default()
        };
        self.w.write_all(&tail.encode_to_vec())?;
        Ok(())
    }
}

/// Writes `model` as [`write_model`] writes it, except that the graph's
/// initializers for which `deferred(p)` gives a byte length `n` are written
/// without their `external_data` and `data_location` and with `raw_data`
/// of `n` bytes that `data(p, w)` (`p` as given) writes to `w` when the writer gets there
/// (returning how many it wrote, which must be `n`). The message lengths
/// are computed first, so memory stays near the model's other fields plus
/// the one tensor `data` holds: the way to write a model whose weights are
/// read from elsewhere one at a time. With no initializer deferred, the
/// bytes are [`write_model`]'s.
pub fn write_model_deferred<W, D, F>(
    mut w: W,
    model: ModelProto,
    mut deferred: D,
    mut data: F,
) -> Result<()>
where
    W: Write,
    D: FnMut(&TensorProto) -> Option<usize>,
    F: FnMut(&TensorProto, &mut dyn Write) -> Result<usize>,
{
    // Fields are encoded in tag order: the model's before the graph (7)
    // and after; the graph's before the initializers (5) and after; a
    // deferred tensor's before `raw_data` (9) and after.
    let ModelProto {
        ir_version,
        opset_import,
        producer_name,
        producer_version,
        domain,
        model_version,
        doc_string,
        graph,
        metadata_props,
        training_info,
        functions,
        configuration,
    } = model;
    let m_head = ModelProto {
        ir_version,
        producer_name,
        producer_version,
        domain,
        model_version,
        doc_string,
        ..ModelProto::default()
    };
    let m_tail = ModelProto {
        opset_import,
        metadata_props,
        training_info,
        functions,
        configuration,
        ..ModelProto::default()
    };
    w.write_all(&m_head.encode_to_vec())?;
    if let Some(graph) = graph {
        let GraphProto {
            node,
            name,
            initializer,
            sparse_initializer,
            doc_string,
            input,
            output,
            value_info,
            quantization_annotation,
            metadata_props,
        } = graph;
        let g_head = GraphProto {
            node,
            name,
            ..GraphProto::default()
        };
        let g_tail = GraphProto {
            sparse_initializer,
            doc_string,
            input,
            output,
            value_info,
            quantization_annotation,
            metadata_props,
            ..GraphProto::default()
        };
        // each initializer: as it is, or (head, raw bytes, tail, length)
        enum Init {
            Whole(TensorProto),
            Deferred(Box<(TensorProto, TensorProto)>, usize, TensorProto, usize),
        }
        let mut inits = Vec::with_capacity(initializer.len());
        let mut graph_len = g_head.encoded_len() + g_tail.encoded_len();
        for mut p in initializer {
            let init = match deferred(&p) {
                None => Init::Whole(p),
                Some(n) => {
                    // (as it was, for `data`: a deferred tensor has no data)
                    let original = p.clone();
                    let t_tail = TensorProto {
                        double_data: std::mem::take(&mut p.double_data),
                        uint64_data: std::mem::take(&mut p.uint64_data),
                        doc_string: p.doc_string.take(),
                        metadata_props: std::mem::take(&mut p.metadata_props),
                        ..TensorProto::default()
                    };
                    p.external_data.clear();
                    p.data_location = None;
                    p.raw_data = None;
                    let len = p.encoded_len()
                        + 1
                        + encoded_len_varint(n as u64)
                        + n
                        + t_tail.encoded_len();
                    Init::Deferred(Box::new((p, original)), n, t_tail, len)
                }
            };
            let len = match &init {
                Init::Whole(p) => p.encoded_len(),
                Init::Deferred(.., len) => *len,
            };
            graph_len = graph_len
                .checked_add(1 + encoded_len_varint(len as u64) + len)
                .ok_or_else(|| Error::Invalid("the model is too large".into()))?;
            inits.push(init);
        }
        let mut buf = Vec::new();
        encode_key(7, WireType::LengthDelimited, &mut buf);
        encode_varint(graph_len as u64, &mut buf);
        g_head
            .encode(&mut buf)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        w.write_all(&buf)?;
        for init in &inits {
            let mut buf = Vec::new();
            match init {
                Init::Whole(p) => {
                    encode_key(5, WireType::LengthDelimited, &mut buf);
                    encode_varint(p.encoded_len() as u64, &mut buf);
                    p.encode(&mut buf)
                        .map_err(|e| Error::Invalid(e.to_string()))?;
                    w.write_all(&buf)?;
                }
                Init::Deferred(pair, n, t_tail, len) => {
                    let (p, original) = &**pair;
                    write_streamed(&mut w, p, *len, *n, |w| data(original, w))?;
                    w.write_all(&t_tail.encode_to_vec())?;
                }
            }
        }
        w.write_all(&g_tail.encode_to_vec())?;
    }
    w.write_all(&m_tail.encode_to_vec())?;
    Ok(())
}

/// Writes an initializer (graph field 5) of `len` bytes in all whose
/// `raw_data` is streamed: the field's key and length, `head` (the
/// tensor's fields before `raw_data`), `raw_data`'s key and length `n`,
/// then the bytes `data` writes, which must be `n` of them. Whatever the
/// tensor has after `raw_data` is the caller's to write.
fn write_streamed(
    w: &mut dyn Write,
    head: &TensorProto,
    len: usize,
    n: usize,
    data: impl FnOnce(&mut dyn Write) -> Result<usize>,
) -> Result<()> {
    let mut buf = Vec::with_capacity(32 + head.encoded_len());
    encode_key(5, WireType::LengthDelimited, &mut buf);
    encode_varint(len as u64, &mut buf);
    head.encode(&mut buf)
        .map_err(|e| Error::Invalid(e.to_string()))?;
    encode_key(9, WireType::LengthDelimited, &mut buf);
    encode_varint(n as u64, &mut buf);
    w.write_all(&buf)?;
    let written = data(w)?;
    if written != n {
        return Err(Error::Invalid(format!(
            "tensor {:?}: {written} bytes written where its shape needs {n}",
            head.name.as_deref().unwrap_or_default()
        )));
    }
    Ok(())
}
