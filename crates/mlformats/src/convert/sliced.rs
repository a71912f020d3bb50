//! Converting a file opened by random access ([`FileIndex`]) without ever
//! holding it, or the output, whole. To safetensors, npz and cvm-params each
//! tensor is read a slice at a time through the [`ReadAt`], cast as the plan
//! says, and written to a `Write + Seek` as it goes (the viewer's sink hands
//! the pieces to the page); to every other target the format's one writer
//! (the one [`super::convert_document`] uses) gets the tensors one at a
//! time, each read whole from the file when it comes to it and dropped
//! once written. The bytes are the ones [`super::convert_document`] writes
//! for the same file and options.

use std::io::{Seek, Write};
use std::path::Path;

use tensor_core::{MemoryOrder, Tensor};

use super::driver::{Selection, Source};
use super::{ConvertOptions, ConvertSummary, Plan};
use crate::codec::{Item, LoadTensor, TensorRef, WriteContext, WriteSeek};
use crate::random_access::{FileIndex, ReadAt};
use crate::{Error, Format, InTensor, Result, WholeModelNeed};

/// The targets [`convert_index`] writes: every format. Safetensors, npz and
/// cvm-params are written a slice of 4 MiB at a time, the others one whole
/// tensor at a time. What it refuses, because it needs the whole model in
/// memory, is said at [`convert_index`].
pub const SLICED_TARGETS: &[Format] = Format::ALL;

/// Bytes of a tensor read at a time.
const SLICE_BYTES: u64 = 4 << 20;

/// Converts the file `index` describes (read through `reader`; `path`, its
/// name, goes into the metadata as [`super::convert_document`] puts it) to
/// `target` with `opts`, writing to `out`: the bytes `mlformats convert`
/// writes for the same file and options, with the same summary (warnings,
/// skipped tensors, casts, renames) and the same refusals.
///
/// Memory: to safetensors, npz and cvm-params one slice of 4 MiB; a
/// column-major tensor the target stores row-major (primitiv's, a Fortran
/// order `.npy`) is written a band at a time, about three times
/// `max(4 MiB, one index of its first axis)` held (see `Writer::bands`),
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
    write_items(target, &sel.positions(), &sel.items(&src), &load, &cx, out)?;
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
    let all: Vec<(usize, &str)> = src.tensors.iter().map(|t| t.name).enumerate().collect();
    let cx = WriteContext {
        plan: Plan::unchanged(),
        progress: super::driver::progress(opts),
        metadata: Vec::new(),
    };
    write_items(target, &all, &src.tensors, load, &cx, out)?;
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

/// Writes `items` as `target` to `out` (`positions`: each one's position
/// in the index and name in the output): safetensors, npz and cvm-params a
/// slice at a time ([`Writer`]), every other format through its codec's
/// one writer, each tensor read whole from the index when the writer gets
/// to it.
#[cfg_attr(
    not(any(feature = "safetensors", feature = "npz", feature = "cvm")),
    allow(unused_variables)
)]
fn write_items<R: ReadAt + ?Sized, W: Write + Seek>(
    target: Format,
    positions: &[(usize, &str)],
    items: &[Item<'_, '_>],
    load: &FromIndex<'_, R>,
    cx: &WriteContext<'_>,
    out: &mut W,
) -> Result<()> {
    let w = Writer {
        index: load.index,
        reader: load.reader,
        cx,
    };
    let codec = crate::codec::codec(target)?;
    match codec.sliced_writer(target) {
        #[cfg(feature = "safetensors")]
        Some(SlicedWriter::Safetensors) => w.safetensors(positions, out)?,
        #[cfg(feature = "npz")]
        Some(SlicedWriter::Npz) => w.npz(positions, out)?,
        #[cfg(feature = "cvm")]
        Some(SlicedWriter::Cvm) => w.cvm(positions, out)?,
        None => {
            let sink: &mut dyn WriteSeek = out;
            codec.write_to(target, sink, items, cx)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The formats written a slice at a time from an index (a codec names its
/// own, [`crate::codec::Codec::sliced_writer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlicedWriter {
    /// `.safetensors`: the header, then each tensor's bytes.
    #[cfg(feature = "safetensors")]
    Safetensors,
    /// `.npz`: stored `.npy` members.
    #[cfg(feature = "npz")]
    Npz,
    /// TVM/CVM `.params`.
    #[cfg(feature = "cvm")]
    Cvm,
}

/// Tensors read whole from an index, on demand.
struct FromIndex<'a, R: ?Sized> {
    index: &'a FileIndex,
    reader: &'a R,
}

impl<R: ReadAt + ?Sized> LoadTensor for FromIndex<'_, R> {
    fn load(&self, at: usize) -> Result<Tensor<'static>> {
        self.index.read_tensor(self.reader, at)
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

/// The tensors of an index written by the plan of `cx`.
struct Writer<'a, R: ?Sized> {
    index: &'a FileIndex,
    reader: &'a R,
    cx: &'a WriteContext<'a>,
}

impl<R: ReadAt + ?Sized> Writer<'_, R> {
    /// True when tensor `i` must be read whole: column-major data the plan
    /// (or the target's writer, `transposes`) turns row-major.
    fn whole(&self, i: usize, transposes: bool) -> bool {
        let t = &self.index.tensors()[i];
        t.order() == MemoryOrder::ColumnMajor
            && t.dims().iter().filter(|&&d| d > 1).count() > 1
            && (self.cx.plan.row_major || transposes)
    }

    /// Tensor `i` read whole and planned.
    fn read_whole(&self, i: usize) -> Result<Tensor<'static>> {
        let t = self.index.read_tensor(self.reader, i)?;
        let name = self.index.tensors()[i].name();
        Ok(self.cx.plan.apply(&t).in_tensor(name)?.into_static())
    }

    /// The planned bytes of tensor `i`, written to `w` a slice at a time
    /// (by bands when [`Writer::whole`]: see [`Writer::bands`]; whole when
    /// reading it decodes it, where each band would decode it again).
    /// (`transposes`: the target's writer would turn it row-major itself.)
    fn data(&self, i: usize, w: &mut dyn Write, transposes: bool) -> Result<()> {
        let t = &self.index.tensors()[i];
        if self.whole(i, transposes) && t.is_decoded() {
            let planned = self.read_whole(i)?;
            w.write_all(planned.to_row_major()?.bytes())?;
        } else if self.whole(i, transposes) {
            self.bands(i, w)?;
        } else {
            let step = (SLICE_BYTES / t.dtype().size().max(1) as u64).max(1);
            let mut buf = Vec::new();
            let mut at = 0;
            while at < t.numel() {
                let part = self
                    .index
                    .read_elements(self.reader, i, at, step, &mut buf)?;
                let planned = self.cx.plan.apply(&part).in_tensor(t.name())?;
                w.write_all(planned.bytes())?;
                at += step;
            }
        }
        (self.cx.progress)(t.byte_len());
        Ok(())
    }

    /// Column-major tensor `i` written row-major a band at a time: a band
    /// is a range of indices `a..b` of its first axis (axes of 1 left
    /// out), every element with them, which is a contiguous range of the
    /// row-major output. Its elements are the run `a..b` of each
    /// column-major "column" (all indices but the first): read in
    /// contiguous ranges of the file of at most [`SLICE_BYTES`] that
    /// cover as many runs as fit (one run at least), then transposed as
    /// a column-major tensor of dims `[b - a, ...]`. A band holds
    /// [`SLICE_BYTES`] of elements, or one index of the first axis
    /// (`numel / dims[0]` elements) when that is more. Memory: the range
    /// read, the band gathered, its transposed (and cast) copy: about
    /// three times `max(SLICE_BYTES, numel / dims[0] elements)`. The file
    /// is read about `dims[0] / (b - a)` times over when the runs are
    /// shorter than the first axis (each range also covers the gaps
    /// between runs, at most [`SLICE_BYTES`] at a time).
    fn bands(&self, i: usize, w: &mut dyn Write) -> Result<()> {
        let t = &self.index.tensors()[i];
        if t.numel() == 0 {
            // an empty axis among the others: no element to write
            return Ok(());
        }
        let too_big = || Error::TooLarge.in_tensor(t.name());
        let size = t.dtype().size().max(1);
        let dims: Vec<u64> = t
            .dims()
            .iter()
            .filter(|&&d| d > 1)
            .map(|&d| d as u64)
            .collect();
        let (d0, rest) = match dims.split_first() {
            Some((&d0, rest)) if !rest.is_empty() => (d0, rest),
            _ => return Err(Error::Invalid("not a multi-axis tensor".into()).in_tensor(t.name())),
        };
        let columns = t.numel() / d0;
        let slice = (SLICE_BYTES / size as u64).max(1);
        let rows = (slice / columns).clamp(1, d0);
        let mut buf = Vec::new();
        let mut a = 0u64;
        while a < d0 {
            let b = (a + rows).min(d0);
            let run = b - a;
            let band_len = usize::try_from(run * columns * size as u64).map_err(|_| too_big())?;
            let mut band: Vec<u8> = Vec::new();
            band.try_reserve_exact(band_len).map_err(|_| too_big())?;
            // columns k0..k1 per read: from a + d0 * k0 to b + d0 * (k1 - 1)
            let per_read = ((slice.saturating_sub(run)) / d0 + 1).min(columns);
            let mut k0 = 0u64;
            while k0 < columns {
                let k1 = (k0 + per_read).min(columns);
                let from = a + d0 * k0;
                let count = d0 * (k1 - 1 - k0) + run;
                let part = self
                    .index
                    .read_elements(self.reader, i, from, count, &mut buf)?;
                let bytes = part.bytes();
                for j in 0..(k1 - k0) as usize {
                    let at = j * d0 as usize * size;
                    band.extend_from_slice(&bytes[at..at + run as usize * size]);
                }
                k0 = k1;
            }
            let mut band_dims = vec![run as usize];
            band_dims.extend(rest.iter().map(|&d| d as usize));
            let gathered = Tensor::with_order(t.dtype(), band_dims, MemoryOrder::ColumnMajor, band)
                .map_err(|e| Error::from(e).in_tensor(t.name()))?;
            let planned = self.cx.plan.apply(&gathered).in_tensor(t.name())?;
            // (the plan keeps the order when the target's writer transposes)
            w.write_all(planned.to_row_major()?.bytes())?;
            a = b;
        }
        Ok(())
    }

    /// Tensor `i`'s dtype, dims and order in the output, and its bytes.
    fn out_layout(&self, i: usize) -> Result<(tensor_core::DType, &[usize], MemoryOrder, u64)> {
        let t = &self.index.tensors()[i];
        let dtype = self.cx.plan.out_dtype(t.dtype());
        let order = if self.cx.plan.row_major {
            MemoryOrder::RowMajor
        } else {
            t.order()
        };
        let len = t
            .numel()
            .checked_mul(dtype.size() as u64)
            .ok_or_else(|| Error::TooLarge.in_tensor(t.name()))?;
        Ok((dtype, t.dims(), order, len))
    }

    #[cfg(feature = "safetensors")]
    fn safetensors<W: Write + Seek>(&self, items: &[(usize, &str)], out: &mut W) -> Result<()> {
        let tensors = self.index.tensors();
        let json = crate::formats::safetensors::header(
            items.iter().map(|&(i, name)| {
                let t = &tensors[i];
                (name, t.dtype(), t.dims(), t.order())
            }),
            self.cx,
        )?;
        out.write_all(&(json.len() as u64).to_le_bytes())?;
        out.write_all(&json)?;
        for &(i, _) in items {
            self.data(i, out, false)?;
        }
        Ok(())
    }

    #[cfg(feature = "npz")]
    fn npz<W: Write + Seek>(&self, items: &[(usize, &str)], out: &mut W) -> Result<()> {
        // (the dtypes were checked: `refuses`)
        let mut zip = nnp_archive::archive::NnpZipWriter::new(&mut *out);
        for &(i, name) in items {
            let (dtype, dims, order, len) = self.out_layout(i)?;
            crate::formats::npz::write_member_with(&mut zip, name, dtype, dims, order, len, |w| {
                self.data(i, w, false)
            })?;
        }
        zip.finish().map_err(crate::formats::npz::npz_err)?;
        Ok(())
    }

    #[cfg(feature = "cvm")]
    fn cvm<W: Write + Seek>(&self, items: &[(usize, &str)], out: &mut W) -> Result<()> {
        let mut pw = cvm_params::ParamsWriter::new(
            &mut *out,
            items.iter().map(|(_, name)| name.as_bytes()),
            &cvm_params::WriteOptions::default(),
        )?;
        for &(i, _) in items {
            if self.whole(i, true) && self.index.tensors()[i].is_decoded() {
                let planned = self.read_whole(i)?;
                pw.write_tensor(&planned)?;
                continue;
            }
            let (dtype, dims, _, len) = self.out_layout(i)?;
            let mut failed = None;
            // (a column-major tensor, which the writer would transpose,
            // written row-major by bands)
            pw.write_tensor_streamed(dtype, dims, len, |w| {
                self.data(i, w, true).map_err(|e| {
                    let msg = crate::chain_message(&e);
                    failed = Some(e);
                    std::io::Error::other(msg)
                })
            })
            .map_err(|e| failed.take().unwrap_or_else(|| e.into()))?;
        }
        pw.finish()?;
        Ok(())
    }
}
