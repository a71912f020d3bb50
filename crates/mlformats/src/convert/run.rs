//! The one conversion driver, for a [`Document`] held whole or opened at a
//! [`ReadAt`] (streaming only: [`convert_sliced`]): the file's
//! index says every tensor's name, dtype, dims and where its bytes are, and
//! each format's one writer ([`crate::codec::Codec::write_to`]) gets the
//! tensors as items: held in memory (a document read at open) or read from
//! the file when the writer gets to it ([`TensorRef::Read`]: a slice at a
//! time by the safetensors, npz and cvm-params writers, whole and dropped
//! once written by the others). The steps shared with the summary
//! (selection, renames, refusals, the plan) are `driver.rs`'s.
//!
//! A step that needs the whole model (re-encoding a file into its own
//! format, keeping an NNabla model, importing an ONNX graph, `--params`,
//! ...) reads it whole through the document ([`Document::source`]), or,
//! when [`ConvertOptions::streaming_only`]
//! says so, is refused with [`Error::NeedsWholeModel`].

use std::io::{Seek, Write};
use std::path::Path;

use super::driver::{Selection, Source};
use super::stream::SLICE_BYTES;
use super::{ConvertOptions, ConvertSummary, Plan};
use crate::codec::{Item, LoadTensor, TensorRef, WriteContext, WriteSeek};
use crate::random_access::{ByRef, FileIndex, ReadAt};
use crate::{Document, Error, Format, Result, WholeModelNeed};

/// The targets [`convert_sliced`] writes: every format. Safetensors, npz and
/// cvm-params are written a slice of 4 MiB at a time, the others one whole
/// tensor at a time. What it refuses, because it needs the whole model in
/// memory, is said at [`convert_sliced`].
pub const SLICED_TARGETS: &[Format] = Format::ALL;

/// Converts `doc` (typically opened at a [`ReadAt`],
/// [`Document::open_at`]; its path goes into the metadata as
/// [`super::convert_document`] puts it) to `target` with `opts`, reading
/// it a slice or a tensor at a time and writing to `out` as it goes (no
/// temporary file): the bytes `mlformats convert` writes for the same file
/// and options, with the same summary (warnings, skipped tensors, casts,
/// renames) and the same refusals. It is the one conversion driver with
/// [`ConvertOptions::streaming_only`] set, whatever `opts` says.
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
/// let bytes = std::fs::read("../../testdata/cvm/two_entry.params").unwrap();
/// let name = std::path::Path::new("two_entry.params");
/// let opts = mlformats::ConvertOptions::default();
/// let sliced = mlformats::Document::open_at(bytes.clone(), Some(name), None, &Default::default())?;
/// let doc = mlformats::Document::from_bytes(bytes, Some(name), None)?;
/// for target in [mlformats::Format::Safetensors, mlformats::Format::Onnx] {
///     let mut out = std::io::Cursor::new(Vec::new());
///     mlformats::convert_sliced(&sliced, target, &opts, &mut out)?;
///     let (whole, _) = mlformats::convert_document_to_bytes(&doc, target, &opts)?;
///     assert_eq!(out.into_inner(), whole);
/// }
/// # Ok(()) }
/// ```
pub fn convert_sliced<W: Write + Seek>(
    doc: &Document,
    target: Format,
    opts: &ConvertOptions,
    out: &mut W,
) -> Result<ConvertSummary> {
    let input = Input {
        index: doc.index(),
        reader: doc.reader(),
        path: doc.path(),
        doc: None,
    };
    run(&input, target, out, opts)
}

/// A conversion's input: the file's index, read through `reader`, and the
/// document it belongs to when the steps that need the whole model may
/// read it whole (`None`: they are refused).
pub(super) struct Input<'a, R: ?Sized> {
    pub index: &'a FileIndex,
    pub reader: &'a R,
    pub path: Option<&'a Path>,
    pub doc: Option<&'a Document>,
}

impl<'a> Input<'a, dyn ReadAt + 'a> {
    /// `doc` as a conversion's input (its steps that need the whole model
    /// refused when `opts.streaming_only`).
    pub fn of(doc: &'a Document, opts: &ConvertOptions) -> Self {
        Input {
            index: doc.index(),
            reader: doc.reader(),
            path: doc.path(),
            doc: (!opts.streaming_only).then_some(doc),
        }
    }
}

impl<'a, R: ReadAt + ?Sized> Input<'a, R> {
    /// The document, read whole for a step that needs it (`need`), or the
    /// refusal.
    fn whole(&self, need: WholeModelNeed) -> Result<&'a Document> {
        self.doc.ok_or(Error::NeedsWholeModel { need })
    }

    /// The document, when its tensors are held in memory (read at open).
    fn held(&self) -> Option<&'a Document> {
        self.doc.filter(|d| !d.is_read_at())
    }
}

/// The one conversion of `input` to `target` with `opts`, written to `w`
/// (the file being written, memory, a temporary file, a sink).
pub(super) fn run<R: ReadAt + ?Sized>(
    input: &Input<'_, R>,
    target: Format,
    w: &mut dyn WriteSeek,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    let index = input.index;
    let from = index.format();
    if let Some(params) = &opts.params {
        return with_params(
            input.whole(WholeModelNeed::Params)?,
            params,
            target,
            w,
            opts,
        );
    }
    let graph = index.graph();
    #[cfg(feature = "onnx")]
    let exports =
        target == Format::Onnx && !opts.weights_only && crate::export::graph_to_export(from, graph);
    #[cfg(not(feature = "onnx"))]
    let exports = false;
    super::check_applies_to(from, exports, target, opts)?;
    let filter = crate::NameFilter::new(&opts.only, &opts.exclude)?;
    #[cfg(all(feature = "onnx", feature = "nnp"))]
    if from == Format::Onnx && crate::import::imports_to(target, opts) {
        let doc = input.whole(WholeModelNeed::ImportsGraph { target })?;
        return crate::import::onnx_to_nnabla(doc, target, w, opts);
    }
    if opts.is_plain() && from == target {
        return reencode(input, target, w);
    }
    // between NNabla formats the model goes along: read whole when there is
    // one besides the parameters and the target holds it (not .h5)
    let keeps_model = from.is_nnabla() && target.is_nnabla() && !opts.weights_only;
    let kept = match keeps_model && target != Format::NnablaH5 && index.has_nnabla_model() {
        true => Some(input.whole(WholeModelNeed::KeepsModel { from, target })?),
        false => None,
    };
    let networks = graph.is_some_and(|g| !g.graphs.is_empty());
    let h5_warning = (target == Format::NnablaH5 && networks).then(|| {
        format!("the networks of this {from} are not carried over: an .h5 holds parameters only")
    });
    let reader = ByRef(input.reader);
    let load = LoadTensor {
        index,
        reader: &reader,
    };
    let src = source(input, &load);
    if keeps_model && opts.is_plain() {
        let mut s = transcode(input, &src, kept, target, opts, w)?;
        s.warnings.extend(h5_warning);
        return Ok(s);
    }
    let renames = super::renames(&opts.renames)?;
    if let Some(s) = onnx_graph(input, target, exports, opts, &filter, &renames, w)? {
        return Ok(s);
    }
    let mut sel = Selection::new(&src, target, opts, &filter, &renames, keeps_model)?;
    let cx = sel.context(&src, opts);
    #[cfg(feature = "nnp")]
    if let Some(doc) = kept {
        let items = sel.items(&src);
        let (with_graph, mut warnings) = nnabla_with_model(doc, target, w, &items, &cx, opts)?;
        let mut s = sel.summary(with_graph);
        s.warnings.append(&mut warnings);
        return Ok(s);
    }
    if keeps_model {
        // (the model is empty, or the target is .h5)
        sel.warnings.extend(h5_warning);
    } else {
        sel.say_lost(&src, opts);
    }
    write_items(target, &sel.items(&src), &cx, w)?;
    Ok(sel.summary(false))
}

/// `doc` with the parameters of the file `params` merged in, converted.
fn with_params(
    doc: &Document,
    params: &Path,
    target: Format,
    w: &mut dyn WriteSeek,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    #[cfg(feature = "nnp")]
    {
        let merged = doc.with_parameters(params)?;
        let mut rest = opts.clone();
        rest.params = None;
        let mut s = run(&Input::of(&merged, &rest), target, w, &rest)?;
        s.from = doc.format();
        Ok(s)
    }
    #[cfg(not(feature = "nnp"))]
    {
        let _ = (doc, params, target, w, opts);
        Err(Error::FeatureDisabled {
            format: Format::NnablaH5,
            feature: "nnp",
        })
    }
}

/// Every tensor of the input as the conversion's shared steps see it: held
/// where the document holds it, else read through `load` when written.
fn source<'t, R: ReadAt + ?Sized>(
    input: &Input<'t, R>,
    load: &'t LoadTensor<'t>,
) -> Source<'t, 'static> {
    let index = input.index;
    let held = input.held();
    Source {
        format: index.format(),
        kind: index.kind(),
        path: input.path,
        lost: super::lost_of(index.graph(), index.metadata()),
        tensors: index
            .tensors()
            .iter()
            .enumerate()
            .map(|(i, t)| Item {
                name: t.name(),
                tensor: match held.and_then(|d| d.tensor(t.name())) {
                    Some(held) => held.into(),
                    None => TensorRef::Read {
                        dtype: t.dtype(),
                        dims: t.dims(),
                        order: t.order(),
                        byte_len: t.byte_len(),
                        at: i,
                        from: load,
                    },
                },
                need_grad: t.stored().need_grad().unwrap_or(true),
            })
            .collect(),
    }
}

/// A file re-encoded into its own format without options: a safetensors
/// file is its own canonical form, copied as it is; any other is rewritten
/// from the whole file.
fn reencode<R: ReadAt + ?Sized>(
    input: &Input<'_, R>,
    target: Format,
    w: &mut dyn WriteSeek,
) -> Result<ConvertSummary> {
    let from = input.index.format();
    if target == Format::Safetensors {
        copy(input.reader, w)?;
    } else {
        let doc = input.whole(WholeModelNeed::Reencode { from, target })?;
        crate::codec::codec(target)?.reencode(&doc.source()?, w)?;
    }
    let n = input.index.tensors().len();
    Ok(ConvertSummary::new(from, target, n, true))
}

/// Between NNabla formats without options: every parameter as read, a
/// tensor at a time, or the whole file transcoded
/// (`nnabla_family::transcode`) when its model goes along (`kept`) or it
/// stores a name more than once (every stored entry is written).
fn transcode<R: ReadAt + ?Sized>(
    input: &Input<'_, R>,
    src: &Source<'_, '_>,
    kept: Option<&Document>,
    target: Format,
    opts: &ConvertOptions,
    w: &mut dyn WriteSeek,
) -> Result<ConvertSummary> {
    let from = src.format;
    let whole = match kept {
        Some(doc) => Some(doc),
        None if input.index.has_repeated_names() => {
            Some(input.whole(WholeModelNeed::RepeatedNames { from, target })?)
        }
        None => None,
    };
    match whole {
        #[cfg(feature = "nnp")]
        Some(doc) => crate::formats::nnabla_family::transcode(&doc.source()?, target, w)?,
        #[cfg(not(feature = "nnp"))]
        Some(_) => {
            return Err(Error::FeatureDisabled {
                format: from,
                feature: "nnp",
            });
        }
        None => {
            let cx = WriteContext {
                plan: Plan::unchanged(),
                progress: super::driver::progress(opts),
                metadata: Vec::new(),
            };
            write_items(target, &src.tensors, &cx, w)?;
        }
    }
    let mut s = ConvertSummary::new(from, target, src.tensors.len(), true);
    s.warnings.extend(super::driver::widened_warning(
        target,
        src.tensors.iter().map(|t| (t.name, t.tensor.dtype())),
    )?);
    Ok(s)
}

/// An ONNX export of the file's graph (`exports`), or an ONNX model's own
/// graph rewritten, each weight read from the file as it is written (the
/// model read whole where that cannot be: a model the index read whole, an
/// initializer that says where its data is). `None` for a conversion of
/// the tensors alone.
#[cfg_attr(not(feature = "onnx"), allow(unused_variables))]
fn onnx_graph<R: ReadAt + ?Sized>(
    input: &Input<'_, R>,
    target: Format,
    exports: bool,
    opts: &ConvertOptions,
    filter: &crate::NameFilter,
    renames: &[(regex::Regex, String)],
    w: &mut dyn WriteSeek,
) -> Result<Option<ConvertSummary>> {
    #[cfg(feature = "onnx")]
    {
        use super::onnx_graph as og;
        let (index, reader) = (input.index, input.reader);
        let own_graph = target == Format::Onnx
            && !opts.weights_only
            && index.format() == Format::Onnx
            && index
                .graph()
                .is_some_and(|g| g.graphs.iter().any(|g| !g.nodes.is_empty()));
        let exported = if exports {
            og::exported_graph(index, reader, opts)?
        } else if own_graph {
            match og::own_by_slices(index, reader)? {
                Ok(e) => e,
                Err(need) => og::own_whole(input.whole(need)?)?,
            }
        } else {
            return Ok(None);
        };
        let progress = super::driver::progress(opts);
        let s = og::written(index, reader, exported, opts, filter, renames, progress, w)?;
        w.flush()?;
        Ok(Some(s))
    }
    #[cfg(not(feature = "onnx"))]
    Ok(None)
}

/// Between NNabla formats with tensors selected, cast or renamed: the
/// model (networks, executors, optimizers, ...) of `doc` goes along with
/// the parameters written (the target is not `.h5`). Renaming parameters
/// of a model with a network is refused: the network would name
/// parameters that are no longer there. Returns whether the networks went
/// along, and the warnings.
#[cfg(feature = "nnp")]
fn nnabla_with_model(
    doc: &Document,
    target: Format,
    w: &mut dyn WriteSeek,
    items: &[Item<'_, '_>],
    cx: &WriteContext<'_>,
    opts: &ConvertOptions,
) -> Result<(bool, Vec<String>)> {
    use crate::formats::nnabla_family;
    let model = nnabla_family::model(&doc.source()?)?;
    let with_graph = !model.network.is_empty();
    let mut warnings = Vec::new();
    if with_graph {
        if !opts.renames.is_empty() {
            return Err(Error::OptionDoesNotApply {
                option: "--rename",
                why: format!(
                    "--rename would leave the networks of this {} naming parameters that are no \
                     longer there; add --weights-only to write the renamed parameters alone",
                    doc.format()
                ),
            });
        }
        let missing = nnabla_family::missing_parameters(&model, items.iter().map(|it| it.name));
        if !missing.is_empty() {
            warnings.push(format!(
                "the network is kept, but {} of the parameters it uses are not in the output \
                 (they have no stored values): {}",
                missing.len(),
                missing.join(", ")
            ));
        }
    }
    nnabla_family::write_to(&model, target, w, items, cx)?;
    Ok((with_graph, warnings))
}

/// Writes `items` as `target` to `w` through its codec's one writer, each
/// tensor held or read from the index when the writer gets to it (a slice
/// at a time by the streaming writers, `TensorRef::write_planned`; whole
/// by the others).
fn write_items(
    target: Format,
    items: &[Item<'_, '_>],
    cx: &WriteContext<'_>,
    w: &mut dyn WriteSeek,
) -> Result<()> {
    crate::codec::codec(target)?.write_to(target, w, items, cx)?;
    w.flush()?;
    Ok(())
}

/// Copies all of `reader` to `out`, a slice at a time.
fn copy<R: ReadAt + ?Sized>(reader: &R, out: &mut dyn WriteSeek) -> Result<()> {
    let mut buf = Vec::new();
    let mut at = 0u64;
    while at < reader.len() {
        let n = (reader.len() - at).min(SLICE_BYTES) as usize;
        buf.resize(n, 0);
        reader.read_at(at, &mut buf)?;
        out.write_all(&buf)?;
        at += n as u64;
    }
    out.flush()?;
    Ok(())
}
