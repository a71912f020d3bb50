//! NNabla text (`.nntxt`, `.prototxt`) and binary (`.protobuf`) protobuf
//! (crate `nnabla-proto`).
//!
//! Parameters are named by `variable_name`; a name stored twice is listed
//! once, at its first position, with the last stored value and `need_grad`
//! (nnabla's own rule). Packed binary parameters share the memory map (read
//! through `random_access/nnabla.rs`; others are decoded). Writing a
//! set of tensors makes a parameters-only file (what `nn.save_parameters`
//! writes); [`write_model`] writes a whole model with other parameters.
//! Both convert and write one parameter at a time.

use nnabla_proto::{self as nn, NNablaProtoBuf, ParamTensor, binary, text};
use tensor_core::Limits;

use crate::codec::{Codec, Item, Source, WriteContext, WriteSeek};
use crate::random_access::{FileIndex, ReadAt};
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

    /// The format's one reader (`random_access/nnabla.rs`): a binary
    /// `.protobuf` whose parameters are packed read by slices, any other
    /// file parsed whole.
    fn index(&self, format: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        index.read_nnabla(r, format)
    }
}
