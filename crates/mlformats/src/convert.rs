//! Conversion: selection, renames, float casts and memory order on the way
//! from any format to any other, and whole-model transcoding where a family
//! of formats shares one model (NNabla's encodings).

use std::path::Path;

use crate::codec::WriteSeek;
use crate::{Document, Error, Format, Result};

mod driver;
#[cfg(feature = "onnx")]
mod onnx_graph;
mod options;
mod plan;
mod run;
mod stream;
mod summary;

#[cfg(feature = "onnx")]
pub use onnx_graph::RESERVED_PREFIX;
pub use options::ConvertOptions;
pub(crate) use plan::{Exchange, Plan, cast_float};
pub use run::{SLICED_TARGETS, convert_sliced};
pub use summary::{ConvertSummary, ExportedGraph};

/// The name prefix of tensors an exporter adds to a model (helper constants
/// such as reshape shapes, cast outputs): `diff` lists them apart from the
/// model's own tensors.
#[cfg(not(feature = "onnx"))]
pub const RESERVED_PREFIX: &str = "mlformats/";

/// Converts the file `input` into `output` (replaced atomically): opens it
/// (as `opts.from`, or detected) and calls [`convert_document`].
pub fn convert(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    let doc = match opts.from {
        Some(f) => Document::open_as(input, f)?,
        None => Document::open(input)?,
    };
    convert_document(&doc, output, opts)
}

/// Refuses options that do not apply to converting an input of format
/// `from` to `target` (rather than ignoring them); `exports`: the
/// conversion exports a graph to ONNX.
fn check_applies_to(
    from: Format,
    exports: bool,
    target: Format,
    opts: &ConvertOptions,
) -> Result<()> {
    let why = if exports {
        ""
    } else if target != Format::Onnx {
        " the output is not ONNX"
    } else if opts.weights_only {
        " --weights-only writes no graph"
    } else {
        " the input has no graph to export"
    };
    if !exports {
        let flag = if opts.network.is_some() {
            Some("--network")
        } else if opts.opset.is_some() {
            Some("--opset")
        } else {
            None
        };
        if let Some(flag) = flag {
            return Err(Error::OptionDoesNotApply {
                option: flag,
                why: format!(
                    "{flag} applies to exporting a graph to ONNX, but{why} ({from} -> {target})"
                ),
            });
        }
    }
    if opts.keep_order && target != Format::Npz {
        return Err(Error::OptionDoesNotApply {
            option: "--keep-order",
            why: format!(
                "--keep-order applies to npz output only (numpy's Fortran order); {target} output \
                 is row-major{}",
                if target == Format::Primitiv {
                    " or primitiv's own column-major, as read"
                } else {
                    ""
                }
            ),
        });
    }
    Ok(())
}

/// Writes an opened document as `output` (replaced atomically), of the
/// format `opts.to` names or else `output`'s extension names.
///
/// To the input's own format, the whole file is re-encoded. Between
/// NNabla's encodings the whole model is kept. A graph (NNabla network,
/// TenniS module) going to ONNX is exported with the tensors selected,
/// renamed and cast consistently, or refused when that would break it.
/// Otherwise the tensors are copied, selected, cast and reordered as
/// `opts` says; every writer converts one tensor at a time while writing.
/// A document opened at a [`crate::random_access::ReadAt`] is converted
/// reading one tensor (or slice) at a time, as [`convert_sliced`] says, and
/// read whole only for a step that needs the whole model (refused instead
/// with [`ConvertOptions::streaming_only`]). Options
/// that do not apply to the target are refused; every step that loses
/// something is refused or said in [`ConvertSummary::warnings`]. The
/// bytes are the ones [`convert_document_to_bytes`] and
/// [`convert_document_to_writer`] give: each is the one conversion
/// writing to the file being written, to memory, or to a temporary file.
pub fn convert_document(
    doc: &Document,
    output: impl AsRef<Path>,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    let output = output.as_ref();
    let target = match opts.to {
        Some(f) => f,
        None => target_of(doc, output)?,
    };
    into_file(output, opts.sync, |w| {
        convert_document_to(doc, target, w, opts)
    })
}

/// Replaces `output` atomically (flushed to the disk when `sync`) with
/// what `convert` writes: how [`convert_document`] makes a file.
pub(crate) fn into_file(
    output: &Path,
    sync: bool,
    convert: impl FnOnce(&mut dyn WriteSeek) -> Result<ConvertSummary>,
) -> Result<ConvertSummary> {
    let wo = tensor_core::io::WriteOptions::new().sync(sync);
    let mut summary = None;
    tensor_core::io::write_atomic_with(output, &wo, |w| -> Result<()> {
        summary = Some(convert(w)?);
        Ok(())
    })?;
    summary.ok_or_else(|| Error::Internal("the conversion wrote nothing".into()))
}

/// Converts an opened document to `target` in memory: the bytes
/// [`convert_document`] would write to a file of that format with the same
/// options (`opts.to` is set to `target`), and its summary. The same
/// writers run, writing to a `Vec<u8>`; nothing is written to disk.
///
/// ```
/// # fn main() -> mlformats::Result<()> {
/// let doc = mlformats::Document::open("../../testdata/cvm/two_entry.params")?;
/// let opts = mlformats::ConvertOptions::default();
/// let (bytes, summary) =
///     mlformats::convert_document_to_bytes(&doc, mlformats::Format::Safetensors, &opts)?;
/// assert_eq!(summary.tensors, 2);
/// assert_eq!(mlformats::Document::from_bytes(bytes, None, None)?.len(), 2);
/// # Ok(()) }
/// ```
pub fn convert_document_to_bytes(
    doc: &Document,
    target: Format,
    opts: &ConvertOptions,
) -> Result<(Vec<u8>, ConvertSummary)> {
    let mut opts = opts.clone();
    opts.to = Some(target);
    let mut out = std::io::Cursor::new(Vec::new());
    let summary = convert_document_to(doc, target, &mut out, &opts)?;
    Ok((out.into_inner(), summary))
}

/// Converts an opened document to `target`, writing the bytes to `out`
/// (standard output, a pipe, a socket: any writer; it need not seek): the
/// bytes [`convert_document`] would write to a file of that format with
/// the same options (`opts.to` is set to `target`), and its summary.
///
/// Every format works, also those whose writer seeks (`.nnp`, `.h5`,
/// `.npz`): the file is made in an unnamed temporary file first and then
/// copied to `out` ([`tensor_core::io::write_spooled`]), so the bytes
/// are not held in memory. When the conversion fails, nothing is written
/// to `out`.
///
/// ```
/// # fn main() -> mlformats::Result<()> {
/// let doc = mlformats::Document::open("../../testdata/cvm/two_entry.params")?;
/// let mut out = Vec::new(); // or std::io::stdout().lock()
/// let opts = mlformats::ConvertOptions::default();
/// let summary =
///     mlformats::convert_document_to_writer(&doc, mlformats::Format::Safetensors, &mut out, &opts)?;
/// assert_eq!(summary.tensors, 2);
/// assert_eq!(mlformats::Document::from_bytes(out, None, None)?.len(), 2);
/// # Ok(()) }
/// ```
pub fn convert_document_to_writer<W: std::io::Write + ?Sized>(
    doc: &Document,
    target: Format,
    out: &mut W,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    let mut opts = opts.clone();
    opts.to = Some(target);
    tensor_core::io::write_spooled(out, |w| convert_document_to(doc, target, w, &opts))
}

/// The one conversion of `doc` to `target` with `opts`, written to `w`
/// (the file being written, memory, a temporary file): `run.rs`'s driver.
fn convert_document_to(
    doc: &Document,
    target: Format,
    w: &mut dyn WriteSeek,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    run::run(&run::Input::of(doc, opts), target, w, opts)
}

/// What a tensors-only target would not carry of a file with `graph` and
/// `metadata`: its graph, its optimizer configs, its metadata.
fn lost_of(
    graph: Option<&tensor_core::graph::ModelGraph>,
    m: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    let mut lost = Vec::new();
    if graph.is_some_and(|g| g.graphs.iter().any(|g| !g.nodes.is_empty())) {
        lost.push("the graph".to_string());
    }
    if m.contains_key("uint_configs") || m.contains_key("float_configs") {
        lost.push("the optimizer configs".to_string());
    }
    if m.contains_key("solver_states") {
        lost.push("the solver states".to_string());
    }
    (!lost.is_empty()).then(|| lost.join(" and "))
}

/// The format `output`'s extension names; an extension no format claims
/// keeps the input's format when the input has the same extension (a
/// primitiv `x.model` converted to `y.model`).
fn target_of(doc: &Document, output: &Path) -> Result<Format> {
    if let Some(f) = Format::from_extension(output) {
        return Ok(f);
    }
    let ext = |p: &Path| p.extension().map(|e| e.to_ascii_lowercase());
    match doc.path() {
        Some(input) if ext(input).is_some() && ext(input) == ext(output) => Ok(doc.format()),
        _ => Err(Error::UnknownExtension {
            name: output.display().to_string(),
        }),
    }
}

fn renames(pairs: &[(String, String)]) -> Result<Vec<(regex::Regex, String)>> {
    pairs
        .iter()
        .map(|(from, to)| {
            regex::Regex::new(from)
                .map(|re| (re, to.clone()))
                .map_err(|e| Error::BadPattern {
                    option: "--rename".into(),
                    pattern: from.clone(),
                    regex: true,
                    why: e.to_string(),
                })
        })
        .collect()
}

/// The `__metadata__` a converted file carries where the target stores
/// string metadata: the source format and file name.
fn source_metadata(format: Format, path: Option<&Path>) -> Vec<(String, String)> {
    let file = path
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    vec![
        ("mlformats.source_format".into(), format.name().into()),
        ("mlformats.source_file".into(), file),
    ]
}
