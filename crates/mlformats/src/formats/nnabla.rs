//! NNabla text (`.nntxt`, `.prototxt`) and binary (`.protobuf`) protobuf
//! (crate `nnabla-proto`).
//!
//! Parameters are named by `variable_name`; a name stored twice is listed
//! once, at its first position, with the last stored value and `need_grad`
//! (nnabla's own rule). Packed binary parameters share the memory map (read
//! by this module's reader, below; others are decoded). Writing a
//! set of tensors makes a parameters-only file (what `nn.save_parameters`
//! writes); [`write_model`] writes a whole model with other parameters.
//! Both convert and write one parameter at a time.
//!
//! ## Reading
//!
//! NNabla text (`.nntxt`, `.prototxt`) and binary (`.protobuf`) files by
//! random access. A `.protobuf` is walked field by field through
//! [`ReadAt`] by `nnabla-proto`'s index ([`merge_index`], the walk its
//! whole-file reader makes too): its `parameter` entries' names and shapes
//! read and their packed float data located, never read; every other field
//! merged into the model (the networks, shown as the graph). The `.nnp`
//! members are walked the same way (`formats/nnp/read.rs`).
//!
//! A `.protobuf` whose parameter data is unpacked or split into several
//! runs, and every `.nntxt`, is parsed whole by `nnabla-proto`
//! ([`load`]), its parameters held in memory
//! ([`Layout::Held`]); so are the NNabla files `formats/nnp/read.rs` and `formats/nnp/h5.rs` do not
//! locate. Either way the tensors, graph and metadata are the ones the
//! whole-file parser gives: a name stored twice is listed once, at its
//! first position, with the last stored value and `need_grad`.

use std::collections::HashMap;
use std::sync::Arc;

use nnabla_proto::index::{ParamData, Scattered, merge_index};
use nnabla_proto::{self as nn, NNablaProtoBuf, ParamTensor, binary, text};
use serde_json::json;
use tensor_core::{DType, Limits, MappedFile};

use crate::codec::{Codec, Item, Source, StoredTensor, WriteContext, WriteSeek};
use crate::random_access::{FileIndex, IndexedTensor, Layout, ReadAt, count, overflow};
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Error, Format, Result};

pub(crate) struct Nnabla;

fn text_of(src: &Source) -> Result<&str> {
    std::str::from_utf8(src.bytes()).map_err(|e| Error::Malformed {
        part: "protobuf text",
        at: Some(e.valid_up_to() as u64),
        why: format!(
            "not UTF-8 text at byte {}: a .nntxt/.prototxt file is protobuf text format",
            e.valid_up_to()
        ),
    })
}

/// The whole file: the message without parameter data, and the parameters
/// in stored order (binary: borrowed from the map).
pub(crate) fn load<'s>(
    src: &'s Source,
    limits: &Limits,
) -> Result<(NNablaProtoBuf, Vec<ParamTensor<'s>>)> {
    if is_text(src.format) {
        let mut model = text::parse(text_of(src)?)?;
        let params = nn::parameters(&model)?
            .into_iter()
            .map(ParamTensor::into_static)
            .collect();
        model.parameter.clear();
        Ok((model, params))
    } else {
        let file = binary::parse_with(
            src.bytes(),
            &nn::ReadOptions::default().with_limits(*limits),
        )?;
        Ok((file.model, file.parameters))
    }
}

/// Whether `format`, one of the two this codec serves (`codec::codec`), is
/// protobuf text (`.nntxt`) rather than binary protobuf.
fn is_text(format: Format) -> bool {
    format == Format::NnablaNntxt
}

/// The typed graph of an NNabla model, its functions (in every network)
/// first counted against [`tensor_core::Limits::max_nodes`]: a function
/// takes a few bytes in a file and hundreds in the graph.
pub(crate) fn graph(
    model: &NNablaProtoBuf,
    limits: &tensor_core::Limits,
) -> Result<tensor_core::graph::ModelGraph> {
    let functions = model
        .network
        .iter()
        .fold(0u64, |n, net| n.saturating_add(net.function.len() as u64));
    limits.check_nodes(functions)?;
    Ok(nn::graph::model_graph(model))
}

/// Writes `model` as `.nntxt` or `.protobuf` to `w`, with `feed`'s
/// tensors as its parameters in place of the model's own: the fields
/// before `parameter`, then each parameter got, converted by the plan and
/// written on its own (only one tensor is held at a time), then the fields
/// after. The bytes are those of the whole message written at once.
pub(crate) fn write_model(
    model: &NNablaProtoBuf,
    format: Format,
    w: &mut dyn WriteSeek,
    feed: &Feed<'_>,
) -> Result<()> {
    nn::check_parameter_names(feed.heads().map(|t| t.name()))?;
    let (head, tail) = nn::split_around_parameters(model);
    let as_text = is_text(format);
    if as_text {
        text::write(&mut *w, &head)?;
    } else {
        binary::write(&mut *w, &head)?;
    }
    feed.drain(ParameterSink { w, as_text, tail })
}

/// The parameters of a model, then the fields after them.
struct ParameterSink<'w> {
    w: &'w mut dyn WriteSeek,
    as_text: bool,
    tail: NNablaProtoBuf,
}

impl TensorSink for ParameterSink<'_> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        t.with_planned(|p| {
            let one = std::iter::once((t.name(), p, t.need_grad()));
            if self.as_text {
                text::write_parameters(&mut *self.w, one)?;
            } else {
                binary::write_parameters(&mut *self.w, one)?;
            }
            Ok(())
        })
    }

    fn finish(self) -> Result<()> {
        if self.as_text {
            text::write(self.w, &self.tail)?;
        } else {
            binary::write(self.w, &self.tail)?;
        }
        Ok(())
    }
}

/// `model` with `items` as its parameters, as binary `.protobuf` bytes.
pub(crate) fn encode_model(model: &NNablaProtoBuf, items: &[Item<'_, '_>]) -> Result<Vec<u8>> {
    let cx = WriteContext::quiet(crate::convert::Plan::unchanged());
    let mut out = std::io::Cursor::new(Vec::new());
    write_model(
        model,
        Format::NnablaProtobuf,
        &mut out,
        &Feed { items, cx: &cx },
    )?;
    Ok(out.into_inner())
}

impl Codec for Nnabla {
    fn write(&self, format: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        write_model(&NNablaProtoBuf::default(), format, w, feed)
    }

    fn refuses(&self, _: Format, dtype: tensor_core::DType, _dims: &[usize]) -> Option<String> {
        (!nn::can_hold(dtype)).then(|| format!("NNabla parameters are float32, not {dtype}"))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        let bytes = if is_text(src.format) {
            text::print(&text::parse(text_of(src)?)?)?.into_bytes()
        } else {
            binary::encode(&binary::decode(src.bytes())?)
        };
        w.write_all(&bytes)?;
        Ok(())
    }

    fn written_dtype(&self, _: Format, dtype: tensor_core::DType) -> tensor_core::DType {
        // the f16 and bf16 `refuses` lets in are stored as f32
        match dtype {
            tensor_core::DType::F16 | tensor_core::DType::BF16 => tensor_core::DType::F32,
            other => other,
        }
    }

    /// The format's one reader ([`FileIndex::read_nnabla`], below): a binary
    /// `.protobuf` whose parameters are packed read by slices, any other
    /// file parsed whole.
    fn index(&self, format: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        index.read_nnabla(r, format)
    }
}

/// The walk stops: an error (the whole-file path has one too), or a layout
/// this path does not index (the whole-file path reads it).
pub(crate) enum Stop {
    Err(Error),
    Whole,
}

impl<E: Into<Error>> From<E> for Stop {
    fn from(e: E) -> Self {
        Stop::Err(e.into())
    }
}

pub(crate) type Walk<T> = std::result::Result<T, Stop>;

/// One `parameter` entry: name, dims, `need_grad` and its data's place.
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) dtype: DType,
    pub(crate) dims: Vec<usize>,
    pub(crate) need_grad: bool,
    pub(crate) offset: u64,
    pub(crate) len: u64,
    /// How the data is laid out from `offset` (in a deflated member).
    pub(crate) layout: Layout,
}

impl Entry {
    /// A parameter the whole-file reader gave: the tensor held, its bytes
    /// shared, not copied, where the reader's are ([`crate::random_access::layout::held`]).
    /// `map` is the file the reader read (the tensor's bytes inside it
    /// are shared with it).
    pub(crate) fn held(p: &ParamTensor<'_>, map: &Arc<MappedFile>) -> Result<Entry> {
        Ok(Entry {
            name: p.name.clone(),
            dtype: p.tensor.dtype(),
            dims: p.tensor.dims().to_vec(),
            need_grad: p.need_grad,
            offset: 0,
            len: p.tensor.bytes().len() as u64,
            layout: crate::random_access::layout::held(p.tensor.clone().rebase(map))?,
        })
    }
}

/// `e`, met in the `.protobuf` message `name`, in this path's words: a
/// wire error names the member and the byte.
pub(crate) fn in_message(name: &str, e: nnabla_proto::Error) -> Error {
    match e {
        nnabla_proto::Error::Wire { offset, message } => Error::Malformed {
            part: "protobuf message",
            at: Some(offset as u64),
            why: format!("{name}: {message} (at byte {offset} of the archive)"),
        },
        nnabla_proto::Error::Tensor(e) => Error::Core(e),
        nnabla_proto::Error::Read(e) => Error::Io(e),
        e @ nnabla_proto::Error::Parameter { .. } => Error::Malformed {
            part: "protobuf parameter",
            at: None,
            why: e.to_string(),
        },
        e => e.into(),
    }
}

/// Walks the `.protobuf` message `name` at `[at, at + size)` of `r` (a
/// member, or a whole `.protobuf` file) with `nnabla-proto`'s index: its
/// parameters in `found`, every other field merged into `model`;
/// [`Stop::Whole`] for a parameter whose data is not one packed run.
pub(crate) fn protobuf_member<R: ReadAt + ?Sized>(
    r: &R,
    (name, at, size): (&str, u64, u64),
    limits: &Limits,
    model: &mut NNablaProtoBuf,
    found: &mut Vec<Entry>,
) -> Walk<()> {
    let opts = nnabla_proto::ReadOptions::default().with_limits(*limits);
    let mut located = true;
    let all = merge_index(model, r, at, size, &opts, Scattered::Stop, |p| {
        // (with `Stop`, every parameter the walk gives is one packed run)
        let ParamData::Packed { offset, len } = p.data else {
            located = false;
            return Ok(());
        };
        found.push(Entry {
            name: p.name,
            dtype: DType::F32,
            dims: p.dims,
            need_grad: p.need_grad,
            offset,
            len,
            layout: Layout::Contiguous,
        });
        Ok(())
    })
    .map_err(|e| in_message(name, e))?;
    if all && located {
        Ok(())
    } else {
        Err(Stop::Whole)
    }
}

impl FileIndex {
    /// A `.nntxt` or `.protobuf` file (see the module): a `.protobuf`
    /// walked, its packed parameters located; anything else parsed whole.
    pub(crate) fn read_nnabla<R: ReadAt + ?Sized>(&mut self, r: &R, format: Format) -> Result<()> {
        if format == Format::NnablaProtobuf {
            let limits = self.limits;
            let mut model = NNablaProtoBuf::default();
            let mut entries = Vec::new();
            let msg = ("the file", 0, r.len());
            match protobuf_member(r, msg, &limits, &mut model, &mut entries) {
                Ok(()) => {
                    self.push_entries(entries, true)?;
                    return self.set_model(model);
                }
                Err(Stop::Whole) => {}
                Err(Stop::Err(e)) => return Err(e),
            }
        }
        let src = self.whole(r, format)?;
        let (model, params) = load(&src, &self.limits)?;
        // (the parser counted them against the limits, if it does)
        let entries = params.iter().map(|p| Entry::held(p, &src.map));
        self.push_entries(entries.collect::<Result<_>>()?, false)?;
        self.set_model(model)
    }

    /// The model read (the networks, shown as the graph).
    pub(crate) fn set_model(&mut self, model: NNablaProtoBuf) -> Result<()> {
        self.graph = Some(graph(&model, &self.limits)?);
        self.nnabla_model = model != NNablaProtoBuf::default();
        self.nnabla = Some(std::sync::Arc::new(model));
        Ok(())
    }

    /// The parameters found, as the whole-file path registers them: a name
    /// given twice keeps its first position and takes the last entry;
    /// `counted`: each counted against [`Limits::max_tensors`] (false for
    /// parameters a whole-file parser gave, which counted them as it does).
    pub(crate) fn push_entries(&mut self, entries: Vec<Entry>, counted: bool) -> Result<()> {
        let limits = self.limits;
        // a name given twice keeps its first position and takes the last entry
        let mut at: HashMap<String, usize> = HashMap::new();
        for e in entries {
            let numel = count(&e.dims).ok_or_else(|| overflow(&e.name))?;
            let stored = StoredTensor::from_parts(e.name.clone(), e.dims)
                .with("need_grad", json!(e.need_grad));
            let t = IndexedTensor::row_major(stored, e.dtype, e.offset, e.len, numel)
                .with_layout(e.layout);
            // as nnp-archive counts: before each registration
            if counted {
                limits.check_tensors(self.tensors.len() as u64 + 1)?;
            }
            match at.get(&e.name) {
                Some(&i) => {
                    self.tensors[i] = t;
                    self.repeated_names = true;
                }
                None => {
                    at.insert(e.name, self.tensors.len());
                    self.tensors.push(t);
                }
            }
        }
        Ok(())
    }
}
