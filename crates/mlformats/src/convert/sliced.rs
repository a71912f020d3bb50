//! Converting a file opened by random access ([`FileIndex`]) without ever
//! holding it, or the output, whole. The shared steps (selection, renames,
//! refusals, the plan) are the whole path's (`driver.rs`), and so is the
//! writer: each format's one writer ([`crate::codec::Codec::write_to`]) gets
//! the tensors as items that say where in the file to read them
//! ([`TensorRef::Read`]). The safetensors, npz and cvm-params writers read
//! each a slice at a time through the [`ReadAt`], cast as the plan says,
//! and write it to a `Write + Seek` as they go (the viewer's sink hands the
//! pieces to the page); the others read each tensor whole when they come
//! to it and drop it once written. The bytes are the ones
//! [`super::convert_document`] writes for the same file and options.

use std::io::{Seek, Write};
use std::path::Path;

use tensor_core::Tensor;

use super::driver::{Selection, Source};
use super::stream::SLICE_BYTES;
use super::{ConvertOptions, ConvertSummary, Plan};
use crate::codec::{Item, LoadTensor, TensorRef, WriteContext, WriteSeek};
use crate::random_access::{FileIndex, ReadAt};
use crate::{Error, Format, Result, WholeModelNeed};

/// The targets [`convert_index`] writes: every format. Safetensors, npz and
/// cvm-params are written a slice of 4 MiB at a time, the others one whole
/// tensor at a time. What it refuses, because it needs the whole model in
/// memory, is said at [`convert_index`].
pub const SLICED_TARGETS: &[Format] = Format::ALL;

/// Converts the file `index` describes (read through `reader`; `path`, its
/// name, goes into the metadata as [`super::convert_document`] puts it) to
/// `target` with `opts`, writing to `out`: the bytes `mlformats convert`
/// writes for the same file and options, with the same summary (warnings,
/// skipped tensors, casts, renames) and the same refusals.
///
/// Memory: to safetensors, npz and cvm-params one slice of 4 MiB; a
/// column-major tensor the target stores row-major (primitiv's, a Fortran
/// order `.npy`) is written a band at a time, about three times
/// `max(4 MiB, one index of its first axis)` held (see `TensorRef::bands`),
/// or read whole when reading it decodes it (a deflated member); to
/// primitiv, TenniS `.tsm`, ONNX and NNabla's `.h5`, `.protobuf`, `.nntxt`
/// and `.nnp`, one tensor as read plus its converted copy (when the plan
/// changes it) and the writer's own buffers.
///
/// Exporting a graph to ONNX (an NNabla `.nnp`/`.protobuf` network with
/// functions, a TenniS module with operators besides constants) builds the
/// ONNX model without the model's weights (their type and shape come from
/// the index), then writes it reading each weight from the file when the
/// writer gets to it (cast to f32 for NNabla, then to `--dtype`): memory is
/// the ONNX graph, one weight as read plus its cast copies, a tensor a
/// lowering reads the values of while it reads them (attribute tensors,
/// weights it derives others from), and the weights lowerings derive
/// (binarized, quantized, ...), which stay in memory as on the whole path.
///
/// An ONNX model with nodes converted to ONNX with options (`--dtype`,
/// `--rename`, `--only`/`--exclude`: its own graph rewritten as the whole
/// path rewrites it) is read again without its initializers' `raw_data`
/// (nodes, inputs, outputs, value_info, metadata, subgraphs, sparse
/// initializers and initializers kept in typed fields stay in memory, as on
/// the whole path), and each initializer that had `raw_data` is written
/// from the file when the writer gets to it, cast to `--dtype` as it is
/// read: memory is that model plus one initializer and its cast copy.
///
/// Refused with the reason, since each needs the whole model in memory
/// (the message says "a slice at a time"; `mlformats convert` does them):
/// - an ONNX model with nodes that the index read whole (proto2 groups) to
///   ONNX with options, and one whose initializer holds `raw_data` and says
///   where its data is (`data_location`, `external_data`) as well
///   (`--weights-only` writes the tensors alone);
/// - an ONNX model to NNabla's `.nnp`, `.nntxt`, `.protobuf` or a TenniS
///   `.tsm` without `--weights-only` (importing its graph);
/// - an NNabla `.nnp` or `.protobuf` whose model holds more than parameters
///   (networks, executors, configs, ...) to `.nnp`, `.nntxt` or
///   `.protobuf` without `--weights-only` (the model is kept; to `.h5` the
///   parameters are written alone, as the whole path writes them), and
///   without options, one that stores a parameter name more than once (the
///   whole path writes every stored entry; the index keeps the last);
/// - re-encoding a file into its own format without options (but a
///   safetensors file, copied as it is);
/// - `--params` (merging parameters into a network).
///
/// ```
/// # fn main() -> mlformats::Result<()> {
/// use mlformats::random_access::FileIndex;
/// let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
/// let index = FileIndex::open(&bytes[..], None, &Default::default())?.unwrap();
/// let opts = mlformats::ConvertOptions::default();
/// let name = std::path::Path::new("two_entry.params");
/// let doc = mlformats::Document::from_bytes(bytes.clone(), Some(name), None)?;
/// for target in [mlformats::Format::Safetensors, mlformats::Format::Onnx] {
///     let mut out = std::io::Cursor::new(Vec::new());
///     mlformats::convert_index(&index, &bytes[..], Some(name), target, &opts, &mut out)?;
///     let (whole, _) = mlformats::convert_document_to_bytes(&doc, target, &opts)?;
///     assert_eq!(out.into_inner(), whole);
/// }
/// # Ok(()) }
/// ```
pub fn convert_index<R: ReadAt + ?Sized, W: Write + Seek>(
    index: &FileIndex,
    reader: &R,
    path: Option<&Path>,
    target: Format,
    opts: &ConvertOptions,
    out: &mut W,
) -> Result<ConvertSummary> {
    let from = index.format();
    if opts.params.is_some() {
        return Err(Error::NeedsWholeModel {
            need: WholeModelNeed::Params,
        });
    }
    let graph = index.graph();
    #[cfg(feature = "onnx")]
    let exports =
        target == Format::Onnx && !opts.weights_only && crate::export::graph_to_export(from, graph);
    #[cfg(not(feature = "onnx"))]
    let exports = false;
    super::check_applies_to(from, exports, target, opts)?;
    let filter = crate::NameFilter::new(&opts.only, &opts.exclude)?;
    refuse_import(from, target, opts)?;
    if opts.is_plain() && from == target {
        return reencode(index, reader, target, out);
    }
    // between NNabla formats the model goes along (as `convert_document`
    // does it): possible here when there is none besides the parameters, or
    // the target (.h5) holds parameters only
    let keeps_model = from.is_nnabla() && target.is_nnabla() && !opts.weights_only;
    if keeps_model && target != Format::NnablaH5 && index.has_nnabla_model() {
        return Err(Error::NeedsWholeModel {
            need: WholeModelNeed::KeepsModel { from, target },
        });
    }
    let networks = graph.is_some_and(|g| !g.graphs.is_empty());
    let h5_warning = (target == Format::NnablaH5 && networks).then(|| {
        format!("the networks of this {from} are not carried over: an .h5 holds parameters only")
    });
    let load = FromIndex { index, reader };
    let src = source(index, &load, path);
    if keeps_model && opts.is_plain() {
        let mut s = transcode(&src, &load, target, opts, out)?;
        s.warnings.extend(h5_warning);
        return Ok(s);
    }
    let renames = super::renames(&opts.renames)?;
    if let Some(s) = onnx_graph(index, reader, target, exports, opts, &filter, &renames, out)? {
        return Ok(s);
    }
    let mut sel = Selection::new(&src, target, opts, &filter, &renames, keeps_model)?;
    if keeps_model {
        // (`nnabla_with_model` with no network kept: the model is empty,
        // or the target is .h5)
        sel.warnings.extend(h5_warning);
    } else {
        sel.say_lost(&src, opts);
    }
    let cx = sel.context(&src, opts);
    write_items(target, &sel.items(&src), &cx, out)?;
    Ok(sel.summary(false))
}

/// Every tensor of `index` (read through `load`; `path`, the file's
/// name) as the conversion's shared steps see it.
fn source<'t, R: ReadAt + ?Sized>(
    index: &'t FileIndex,
    load: &'t FromIndex<'t, R>,
    path: Option<&'t Path>,
) -> Source<'t, 'static> {
    Source {
        format: index.format(),
        kind: index.kind(),
        path,
        lost: super::lost_of(index.graph(), index.metadata()),
        tensors: index
            .tensors()
            .iter()
            .enumerate()
            .map(|(i, t)| Item {
                name: t.name(),
                tensor: TensorRef::Read {
                    dtype: t.dtype(),
                    dims: t.dims(),
                    order: t.order(),
                    byte_len: t.byte_len(),
                    at: i,
                    from: load,
                },
                need_grad: t.stored().need_grad().unwrap_or(true),
            })
            .collect(),
    }
}

/// Refuses importing an ONNX model's graph (to NNabla or TenniS): it needs
/// the whole model.
fn refuse_import(from: Format, target: Format, opts: &ConvertOptions) -> Result<()> {
    #[cfg(all(feature = "onnx", feature = "nnp"))]
    if from == Format::Onnx && crate::import::imports_to(target, opts) {
        return Err(Error::NeedsWholeModel {
            need: WholeModelNeed::ImportsGraph { target },
        });
    }
    #[cfg(not(all(feature = "onnx", feature = "nnp")))]
    let _ = (from, target, opts);
    Ok(())
}

/// A file re-encoded into its own format without options: a safetensors
/// file is copied as it is; any other is refused (it is rewritten from the
/// whole file).
fn reencode<R: ReadAt + ?Sized, W: Write>(
    index: &FileIndex,
    reader: &R,
    target: Format,
    out: &mut W,
) -> Result<ConvertSummary> {
    let from = index.format();
    if target == Format::Safetensors {
        // a safetensors file re-encodes as its own bytes
        copy(reader, out)?;
        return Ok(ConvertSummary::new(
            from,
            target,
            index.tensors().len(),
            true,
        ));
    }
    Err(Error::NeedsWholeModel {
        need: WholeModelNeed::Reencode { from, target },
    })
}

/// Between NNabla formats without options: every parameter as read
/// (`nnabla_family::transcode`), refused for a file that stores a name
/// more than once.
fn transcode<R: ReadAt + ?Sized, W: Write + Seek>(
    src: &Source<'_, '_>,
    load: &FromIndex<'_, R>,
    target: Format,
    opts: &ConvertOptions,
    out: &mut W,
) -> Result<ConvertSummary> {
    let from = src.format;
    if load.index.has_repeated_names() {
        return Err(Error::NeedsWholeModel {
            need: WholeModelNeed::RepeatedNames { from, target },
        });
    }
    let cx = WriteContext {
        plan: Plan::unchanged(),
        progress: super::driver::progress(opts),
        metadata: Vec::new(),
    };
    write_items(target, &src.tensors, &cx, out)?;
    let mut s = ConvertSummary::new(from, target, src.tensors.len(), true);
    s.warnings.extend(super::driver::widened_warning(
        target,
        src.tensors.iter().map(|t| (t.name, t.tensor.dtype())),
    )?);
    Ok(s)
}

/// An ONNX export of the file's graph (`exports`), or an ONNX model's own
/// graph rewritten, each weight read from the file as it is written;
/// refused for a model the index read whole. `None` for a conversion of
/// the tensors alone.
#[allow(clippy::too_many_arguments)]
fn onnx_graph<R: ReadAt + ?Sized, W: Write + Seek>(
    index: &FileIndex,
    reader: &R,
    target: Format,
    exports: bool,
    opts: &ConvertOptions,
    filter: &crate::NameFilter,
    renames: &[(regex::Regex, String)],
    out: &mut W,
) -> Result<Option<ConvertSummary>> {
    let from = index.format();
    let own_graph = target == Format::Onnx
        && !opts.weights_only
        && from == Format::Onnx
        && index
            .graph()
            .is_some_and(|g| g.graphs.iter().any(|g| !g.nodes.is_empty()));
    #[cfg(feature = "onnx")]
    {
        let progress = super::driver::progress(opts);
        let s = if exports {
            // the graph, its weights read one at a time as they are written
            Some(super::onnx_graph::export_index(
                index, reader, opts, filter, renames, progress, out,
            )?)
        } else if own_graph {
            // the model's own graph, its initializers' data read one at a
            // time as they are written
            super::onnx_graph::onnx_index(index, reader, opts, filter, renames, progress, out)?
        } else {
            None
        };
        if s.is_some() {
            out.flush()?;
            return Ok(s);
        }
    }
    #[cfg(not(feature = "onnx"))]
    let _ = (reader, exports, filter, renames, &out);
    if own_graph {
        return Err(Error::NeedsWholeModel {
            need: WholeModelNeed::ExportsGraph { from },
        });
    }
    Ok(None)
}

/// Writes `items` as `target` to `out` through its codec's one writer,
/// each tensor read from the index when the writer gets to it (a slice at
/// a time by the streaming writers, `TensorRef::write_planned`; whole by
/// the others).
fn write_items<W: Write + Seek>(
    target: Format,
    items: &[Item<'_, '_>],
    cx: &WriteContext<'_>,
    out: &mut W,
) -> Result<()> {
    let sink: &mut dyn WriteSeek = out;
    crate::codec::codec(target)?.write_to(target, sink, items, cx)?;
    out.flush()?;
    Ok(())
}

/// Tensors read from an index, whole or by slices, on demand.
struct FromIndex<'a, R: ?Sized> {
    index: &'a FileIndex,
    reader: &'a R,
}

impl<R: ReadAt + ?Sized> LoadTensor for FromIndex<'_, R> {
    fn load(&self, at: usize) -> Result<Tensor<'static>> {
        self.index.read_tensor(self.reader, at)
    }

    fn read_elements<'b>(
        &self,
        at: usize,
        start: u64,
        count: u64,
        buf: &'b mut Vec<u8>,
    ) -> Result<Tensor<'b>> {
        self.index.read_elements(self.reader, at, start, count, buf)
    }

    fn is_decoded(&self, at: usize) -> bool {
        self.index.tensors().get(at).is_some_and(|t| t.is_decoded())
    }
}

/// Copies all of `reader` to `out`, a slice at a time.
fn copy<R: ReadAt + ?Sized, W: Write>(reader: &R, out: &mut W) -> Result<()> {
    let mut buf = Vec::new();
    let mut at = 0u64;
    while at < reader.len() {
        let n = (reader.len() - at).min(SLICE_BYTES) as usize;
        buf.resize(n, 0);
        reader.read_at(at, &mut buf)?;
        out.write_all(&buf)?;
        at += n as u64;
    }
    Ok(())
}
