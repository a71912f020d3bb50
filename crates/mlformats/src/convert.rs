//! Conversion: selection, renames, float casts and memory order on the way
//! from any format to any other, and whole-model transcoding where a family
//! of formats shares one model (NNabla's encodings).

use std::path::{Path, PathBuf};

use tensor_core::half::{bf16, f16};
use tensor_core::{DType, MemoryOrder, Tensor, stats};

use crate::codec::{Item, WriteContext, codec};
use crate::{Document, Error, Format, Result};

#[cfg(feature = "onnx")]
mod onnx_graph;
#[cfg(feature = "onnx")]
pub use onnx_graph::RESERVED_PREFIX;
/// The name prefix of tensors an exporter adds to a model (helper constants
/// such as reshape shapes, cast outputs): `diff` lists them apart from the
/// model's own tensors.
#[cfg(not(feature = "onnx"))]
pub const RESERVED_PREFIX: &str = "mlformats/";

/// What [`convert`] does besides copying tensors.
///
/// `#[non_exhaustive]`: build it with its methods (a struct literal, even
/// with `..Default::default()`, does not compile outside this crate):
///
/// ```
/// use mlformats::{ConvertOptions, DType, Format};
///
/// let opts = ConvertOptions::new()
///     .to(Format::Safetensors)
///     .only("fc*")
///     .exclude("*/b")
///     .dtype(DType::F16);
/// assert_eq!(opts.only, ["fc*"]);
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ConvertOptions {
    /// The output format (default: from the output file's extension).
    pub to: Option<Format>,
    /// Read the input as this format instead of detecting it.
    pub from: Option<Format>,
    /// Keep only tensors whose name matches one of these globs.
    pub only: Vec<String>,
    /// Leave out tensors whose name matches one of these globs.
    pub exclude: Vec<String>,
    /// Cast floating-point tensors to this type (`f16`, `bf16`, `f32`, `f64`).
    pub dtype: Option<DType>,
    /// Keep column-major data as it is where the target can say so (npz's
    /// Fortran order) instead of writing row-major.
    pub keep_order: bool,
    /// Renames `(pattern, replacement)`, applied in order to every selected
    /// name: a regular expression and its replacement (`$1`, `${name}`).
    pub renames: Vec<(String, String)>,
    /// Leave out the tensors the target cannot hold (and say which in
    /// [`ConvertSummary::skipped`]) instead of refusing the conversion.
    pub skip_unsupported: bool,
    /// Called with a count of input bytes as each tensor is written.
    pub progress: Option<std::sync::Arc<dyn Fn(u64) + Send + Sync>>,
    /// Write the tensors alone: no network or other model content goes
    /// along (re-encoding, NNabla model conversions and ONNX graph export
    /// are skipped).
    pub weights_only: bool,
    /// ONNX export: the NNabla network to export (default: the first executor's).
    pub network: Option<String>,
    /// ONNX export: the operator set to write (default 13).
    pub opset: Option<i64>,
    /// An NNabla parameter file (`.h5`, `.protobuf`, `.nntxt`, `.nnp`) whose
    /// parameters merge into the input network before converting (see
    /// [`Document::with_parameters`]).
    pub params: Option<PathBuf>,
    /// Flush the output to the disk (file, then folder) so it survives a
    /// power loss once the conversion returns. Off by default: the output
    /// is still replaced atomically, so a killed or crashed conversion
    /// leaves the previous file, but a power loss may lose the new one
    /// (see [`tensor_core::io`]).
    pub sync: bool,
    /// ONNX import: fixed shapes `(input name, dimensions)` for inputs with
    /// symbolic dimensions (the CLI's `--input-shape NAME=1,3,224,224`).
    pub input_shapes: Vec<(String, Vec<i64>)>,
}

impl std::fmt::Debug for ConvertOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvertOptions")
            .field("to", &self.to)
            .field("from", &self.from)
            .field("only", &self.only)
            .field("exclude", &self.exclude)
            .field("dtype", &self.dtype)
            .field("keep_order", &self.keep_order)
            .field("renames", &self.renames)
            .field("skip_unsupported", &self.skip_unsupported)
            .field("weights_only", &self.weights_only)
            .field("network", &self.network)
            .field("opset", &self.opset)
            .field("params", &self.params)
            .field("sync", &self.sync)
            .finish_non_exhaustive()
    }
}

impl ConvertOptions {
    /// Options that copy every tensor unchanged.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options writing `format`.
    pub fn to(mut self, format: Format) -> Self {
        self.to = Some(format);
        self
    }

    /// The same options reading the input as `format`.
    pub fn from(mut self, format: Format) -> Self {
        self.from = Some(format);
        self
    }

    /// The same options keeping only names matching `glob` (repeatable).
    pub fn only(mut self, glob: impl Into<String>) -> Self {
        self.only.push(glob.into());
        self
    }

    /// The same options leaving out names matching `glob` (repeatable).
    pub fn exclude(mut self, glob: impl Into<String>) -> Self {
        self.exclude.push(glob.into());
        self
    }

    /// The same options casting float tensors to `dtype`.
    pub fn dtype(mut self, dtype: DType) -> Self {
        self.dtype = Some(dtype);
        self
    }

    /// The same options keeping column-major data where the target can say so.
    pub fn keep_order(mut self, yes: bool) -> Self {
        self.keep_order = yes;
        self
    }

    /// The same options renaming names matching the regular expression
    /// `pattern` to `replacement` (repeatable; applied in order).
    pub fn rename(mut self, pattern: impl Into<String>, replacement: impl Into<String>) -> Self {
        self.renames.push((pattern.into(), replacement.into()));
        self
    }

    /// The same options leaving out tensors the target cannot hold.
    pub fn skip_unsupported(mut self, yes: bool) -> Self {
        self.skip_unsupported = yes;
        self
    }

    /// The same options writing the tensors alone, without the model's
    /// network (see [`ConvertOptions::weights_only`](#structfield.weights_only)).
    pub fn weights_only(mut self, yes: bool) -> Self {
        self.weights_only = yes;
        self
    }

    /// The same options exporting the NNabla network `name` to ONNX.
    pub fn network(mut self, name: impl Into<String>) -> Self {
        self.network = Some(name.into());
        self
    }

    /// The same options writing ONNX operator set `opset` when exporting a graph.
    pub fn opset(mut self, opset: i64) -> Self {
        self.opset = Some(opset);
        self
    }

    /// The same options merging the NNabla parameter file `path` into the
    /// input network (`net.nntxt` + `params.h5`).
    pub fn params(mut self, path: impl Into<PathBuf>) -> Self {
        self.params = Some(path.into());
        self
    }

    /// The same options reporting progress to `f`.
    pub fn progress(mut self, f: impl Fn(u64) + Send + Sync + 'static) -> Self {
        self.progress = Some(std::sync::Arc::new(f));
        self
    }

    /// Flush the output to the disk before returning (see
    /// [`ConvertOptions::sync`](struct.ConvertOptions.html#structfield.sync)).
    pub fn sync(mut self, yes: bool) -> Self {
        self.sync = yes;
        self
    }

    /// ONNX import: fixes the shape of input `name` (symbolic dimensions).
    pub fn input_shape(mut self, name: impl Into<String>, dims: Vec<i64>) -> Self {
        self.input_shapes.push((name.into(), dims));
        self
    }

    /// True when the tensors are copied unchanged, with the model.
    pub fn is_plain(&self) -> bool {
        !self.weights_only
            && self.only.is_empty()
            && self.exclude.is_empty()
            && self.dtype.is_none()
            && !self.keep_order
            && self.renames.is_empty()
    }
}

/// What a conversion did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConvertSummary {
    /// The format read.
    pub from: Format,
    /// The format written.
    pub to: Format,
    /// Tensors written.
    pub tensors: usize,
    /// True when the whole file or model was carried over (re-encoding to
    /// its own format, or between NNabla encodings), not only tensors.
    pub whole_model: bool,
    /// Tensors left out because the target cannot hold them (with
    /// `skip_unsupported`): name and reason.
    pub skipped: Vec<(String, String)>,
    /// What the user should know about the output: every step that lost or
    /// changed something the user did not ask for (a type the target lacks,
    /// a graph or configs the target cannot hold, a kept network that uses
    /// parameters the output does not hold).
    pub warnings: Vec<String>,
    /// Tensors whose dtype changed (by `dtype`, or because the target has
    /// no such type): input name, dtype read, dtype written.
    pub cast: Vec<(String, DType, DType)>,
    /// Tensors renamed: input name, output name.
    pub renamed: Vec<(String, String)>,
    /// The graph exported to ONNX, when one was.
    pub graph: Option<ExportedGraph>,
}

/// The graph a conversion exported to ONNX.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportedGraph {
    /// The NNabla network exported (empty for a TenniS module).
    pub network: String,
    /// ONNX nodes written.
    pub nodes: usize,
    /// The ONNX operator set written.
    pub opset: i64,
}

impl ConvertSummary {
    pub(crate) fn new(from: Format, to: Format, tensors: usize, whole_model: bool) -> Self {
        ConvertSummary {
            from,
            to,
            tensors,
            whole_model,
            skipped: Vec::new(),
            warnings: Vec::new(),
            cast: Vec::new(),
            renamed: Vec::new(),
            graph: None,
        }
    }

    /// One line saying what the conversion did, e.g. `wrote 4 tensors
    /// (nnabla-nnp -> onnx); network "main" exported: 7 nodes, opset 13;
    /// cast 4 to f16`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "wrote {} tensor{} ({} -> {}{})",
            self.tensors,
            if self.tensors == 1 { "" } else { "s" },
            self.from,
            self.to,
            if self.whole_model && self.graph.is_none() {
                ", whole model"
            } else {
                ""
            }
        );
        if let Some(g) = &self.graph {
            if g.network.is_empty() {
                s += &format!("; graph exported: {} nodes, opset {}", g.nodes, g.opset);
            } else {
                s += &format!(
                    "; network {:?} exported: {} nodes, opset {}",
                    g.network, g.nodes, g.opset
                );
            }
        }
        if !self.cast.is_empty() {
            let mut to: Vec<String> = self.cast.iter().map(|c| c.2.to_string()).collect();
            to.dedup();
            s += &format!("; cast {} to {}", self.cast.len(), to.join("/"));
        }
        if !self.renamed.is_empty() {
            s += &format!("; renamed {}", self.renamed.len());
        }
        if !self.skipped.is_empty() {
            s += &format!("; skipped {}", self.skipped.len());
        }
        if !self.warnings.is_empty() {
            s += &format!(
                "; {} warning{}",
                self.warnings.len(),
                if self.warnings.len() == 1 { "" } else { "s" }
            );
        }
        s
    }

    /// The summary as JSON (what `convert --json` prints and Python's
    /// `convert` returns): `from`, `to`, `tensors`, `whole_model`,
    /// `graph` (`network`, `nodes`, `opset`, or null), `cast` (`name`,
    /// `from`, `to`), `renamed` (`from`, `to`), `skipped` (`name`,
    /// `reason`), `warnings`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        json!({
            "from": self.from.name(),
            "to": self.to.name(),
            "tensors": self.tensors,
            "whole_model": self.whole_model,
            "graph": self.graph.as_ref().map(|g| json!({
                "network": g.network, "nodes": g.nodes, "opset": g.opset,
            })),
            "cast": self.cast.iter().map(|(n, a, b)| json!({
                "name": n, "from": a.name(), "to": b.name(),
            })).collect::<Vec<_>>(),
            "renamed": self.renamed.iter().map(|(a, b)| json!({"from": a, "to": b}))
                .collect::<Vec<_>>(),
            "skipped": self.skipped.iter().map(|(n, why)| json!({"name": n, "reason": why}))
                .collect::<Vec<_>>(),
            "warnings": self.warnings,
        })
    }
}

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

/// Refuses options that do not apply to converting `doc` to `target`
/// (rather than ignoring them).
fn check_applies(doc: &Document, target: Format, opts: &ConvertOptions) -> Result<()> {
    #[cfg(feature = "onnx")]
    let exports = target == Format::Onnx && !opts.weights_only && crate::export::has_graph(doc);
    #[cfg(not(feature = "onnx"))]
    let exports = false;
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
            return Err(Error::Invalid(format!(
                "{flag} applies to exporting a graph to ONNX, but{why} ({} -> {target})",
                doc.format()
            )));
        }
    }
    if opts.keep_order && target != Format::Npz {
        return Err(Error::Invalid(format!(
            "--keep-order applies to npz output only (numpy's Fortran order); {target} output \
             is row-major{}",
            if target == Format::Primitiv {
                " or primitiv's own column-major, as read"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// Writes an opened document as `output` (replaced atomically).
///
/// To the input's own format, the whole file is re-encoded. Between
/// NNabla's encodings the whole model is kept. A graph (NNabla network,
/// TenniS module) going to ONNX is exported with the tensors selected,
/// renamed and cast consistently, or refused when that would break it.
/// Otherwise the tensors are copied, selected, cast and reordered as
/// `opts` says; every target but NNabla's `.nnp` and `.h5` converts one
/// tensor at a time while writing. Options that do not apply to the target
/// are refused; every step that loses something is refused or said in
/// [`ConvertSummary::warnings`].
pub fn convert_document(
    doc: &Document,
    output: impl AsRef<Path>,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    #[cfg(feature = "nnp")]
    if let Some(params) = &opts.params {
        let merged = doc.with_parameters(params)?;
        let mut rest = opts.clone();
        rest.params = None;
        let mut s = convert_document(&merged, output.as_ref(), &rest)?;
        s.from = doc.format();
        return Ok(s);
    }
    #[cfg(not(feature = "nnp"))]
    if opts.params.is_some() {
        return Err(Error::FeatureDisabled {
            format: Format::NnablaH5,
            feature: "nnp",
        });
    }
    let wo = tensor_core::io::WriteOptions::new().sync(opts.sync);
    tensor_core::io::with_write_options(wo, || convert_document_to(doc, output.as_ref(), opts))
}

fn convert_document_to(
    doc: &Document,
    output: &Path,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    let target = match opts.to {
        Some(f) => f,
        None => target_of(doc, output)?,
    };
    check_applies(doc, target, opts)?;
    let filter = crate::NameFilter::new(&opts.only, &opts.exclude)?;
    #[cfg(all(feature = "onnx", feature = "nnp"))]
    if doc.format() == Format::Onnx && crate::import::imports_to(target, opts) {
        return crate::import::onnx_to_nnabla(doc, target, output, opts);
    }
    if opts.is_plain() {
        if doc.format() == target {
            doc.reencode(output)?;
            return Ok(ConvertSummary::new(doc.format(), target, doc.len(), true));
        }
        #[cfg(feature = "nnp")]
        if doc.format().is_nnabla() && target.is_nnabla() {
            crate::formats::nnabla_family::transcode(doc.source(), target, output)?;
            let mut s = ConvertSummary::new(doc.format(), target, doc.len(), true);
            let widened: Vec<String> = doc
                .tensors()
                .filter(|(_, t)| written_dtype(target, t.dtype()) != t.dtype())
                .map(|(n, t)| format!("{n:?} ({} -> f32)", t.dtype()))
                .collect();
            if !widened.is_empty() {
                s.warnings.push(format!(
                    "{target} has no type for {} of the tensors, written as the nearest type it \
                     has: {}",
                    widened.len(),
                    widened.join(", ")
                ));
            }
            if target == Format::NnablaH5 && doc.graph().is_some_and(|g| !g.graphs.is_empty()) {
                s.warnings.push(format!(
                    "the networks of this {} are not carried over: an .h5 holds parameters only",
                    doc.format()
                ));
            }
            return Ok(s);
        }
    }
    let renames = renames(&opts.renames)?;
    #[cfg(feature = "onnx")]
    if target == Format::Onnx
        && !opts.weights_only
        && (crate::export::has_graph(doc)
            || (doc.format() == Format::Onnx
                && doc
                    .graph()
                    .is_some_and(|g| g.graphs.iter().any(|g| !g.nodes.is_empty()))))
    {
        return onnx_graph::export(doc, output, opts, &filter, &renames);
    }
    let keeps_model = doc.format().is_nnabla() && target.is_nnabla() && !opts.weights_only;
    if doc.is_empty()
        && !keeps_model
        && !opts.weights_only
        && let Some(w) = what_is_lost(doc)
    {
        return Err(Error::Unsupported(format!(
            "nothing to write: this {}{} holds no tensor, only {w}, which {target} cannot hold",
            doc.format(),
            doc.kind().map(|k| format!(" {k}")).unwrap_or_default()
        )));
    }
    // (name in the input, name in the output, tensor)
    let mut selected: Vec<(&str, String, &Tensor<'static>)> = Vec::new();
    for (name, tensor) in doc.tensors() {
        if filter.keeps(name) {
            let mut new = name.to_string();
            for (re, to) in &renames {
                new = re.replace_all(&new, to.as_str()).into_owned();
            }
            selected.push((name, new, tensor));
        }
    }
    if selected.is_empty() && !doc.is_empty() {
        return Err(Error::Invalid(format!(
            "no tensor is left to write: --only/--exclude match none of the {} tensors",
            doc.len()
        )));
    }
    let mut seen = std::collections::HashMap::new();
    for (old, new, _) in &selected {
        if let Some(first) = seen.insert(new.as_str(), *old) {
            return Err(Error::Invalid(format!(
                "--rename gives {first:?} and {old:?} the same name {new:?}"
            )));
        }
    }
    let plan = Plan::for_target(target, opts.dtype, opts.keep_order)?;
    let c = codec(target)?;
    let mut skipped = Vec::new();
    let mut items: Vec<Item<'_, '_>> = Vec::with_capacity(selected.len());
    let mut cast = Vec::new();
    let mut changed = Vec::new();
    for (old, new, tensor) in &selected {
        let planned = plan.out_dtype(tensor.dtype());
        match c.refuses(target, planned, tensor.dims()) {
            Some(why) => skipped.push((old.to_string(), why)),
            None => {
                let out = written_dtype(target, planned);
                if out != tensor.dtype() {
                    cast.push((old.to_string(), tensor.dtype(), out));
                }
                // what the user asked for (the dtype read, or --dtype's)
                let asked = opts
                    .dtype
                    .filter(|_| tensor.dtype().is_float())
                    .unwrap_or(tensor.dtype());
                if out != asked {
                    changed.push(format!("{old:?} ({asked} -> {out})"));
                }
                items.push(Item {
                    name: new,
                    tensor,
                    need_grad: doc.need_grad(old).unwrap_or(true),
                })
            }
        }
    }
    if !skipped.is_empty() && !opts.skip_unsupported {
        let list: Vec<String> = skipped
            .iter()
            .map(|(n, why)| format!("{n:?} ({why})"))
            .collect();
        return Err(Error::Unsupported(format!(
            "{target} cannot hold {} of the tensors: {}; --skip-unsupported converts the rest",
            skipped.len(),
            list.join(", ")
        )));
    }
    let renamed: Vec<(String, String)> = selected
        .iter()
        .filter(|(old, new, _)| old != new)
        .map(|(old, new, _)| (old.to_string(), new.clone()))
        .collect();
    let mut warnings = Vec::new();
    if !changed.is_empty() {
        warnings.push(format!(
            "{target} has no type for {} of the tensors, written as the nearest type it has: {}",
            changed.len(),
            changed.join(", ")
        ));
    }
    let noop = |_: u64| {};
    let progress: &dyn Fn(u64) = match &opts.progress {
        Some(p) => p.as_ref(),
        None => &noop,
    };
    let cx = WriteContext {
        plan,
        progress,
        metadata: source_metadata(doc.format(), doc.path()),
    };
    #[cfg(feature = "nnp")]
    if keeps_model {
        let mut s = nnabla_with_model(doc, target, output, &items, &cx, opts, skipped)?;
        s.cast = cast;
        s.renamed = renamed;
        warnings.append(&mut s.warnings);
        s.warnings = warnings;
        return Ok(s);
    }
    if !opts.weights_only
        && let Some(w) = what_is_lost(doc)
    {
        warnings.push(format!(
            "{target} gets the tensors alone: {w} of this {} {} not carried over \
             (--weights-only says that is what you want)",
            doc.format(),
            if w.ends_with('s') { "are" } else { "is" }
        ));
    }
    c.write(target, output, &items, &cx)?;
    let mut s = ConvertSummary::new(doc.format(), target, items.len(), false);
    s.skipped = skipped;
    s.warnings = warnings;
    s.cast = cast;
    s.renamed = renamed;
    Ok(s)
}

/// The dtype `target` stores a tensor of `d` as (after the plan): NNabla's
/// protobuf parameters are f32, so the f16 and bf16 it accepts are widened.
fn written_dtype(target: Format, d: DType) -> DType {
    match (target, d) {
        (Format::NnablaNntxt | Format::NnablaProtobuf, DType::F16 | DType::BF16) => DType::F32,
        _ => d,
    }
}

/// What a tensors-only target would not carry of `doc`: its graph, its
/// optimizer configs, its metadata.
fn what_is_lost(doc: &Document) -> Option<String> {
    let mut lost = Vec::new();
    if doc
        .graph()
        .is_some_and(|g| g.graphs.iter().any(|g| !g.nodes.is_empty()))
    {
        lost.push("the graph".to_string());
    }
    let m = doc.metadata();
    if m.contains_key("uint_configs") || m.contains_key("float_configs") {
        lost.push("the optimizer configs".to_string());
    }
    if m.contains_key("solver_states") {
        lost.push("the solver states".to_string());
    }
    (!lost.is_empty()).then(|| lost.join(" and "))
}

/// Between NNabla formats with tensors selected, cast or renamed: the
/// model (networks, executors, optimizers, ...) goes along with the
/// parameters written, unless the target (`.h5`) holds parameters only.
/// Renaming parameters of a model with a network is refused: the network
/// would name parameters that are no longer there.
#[cfg(feature = "nnp")]
fn nnabla_with_model(
    doc: &Document,
    target: Format,
    output: &Path,
    items: &[Item<'_, '_>],
    cx: &WriteContext<'_>,
    opts: &ConvertOptions,
    skipped: Vec<(String, String)>,
) -> Result<ConvertSummary> {
    use crate::formats::nnabla_family;
    let model = nnabla_family::model(doc.source())?;
    let with_graph = target != Format::NnablaH5 && !model.network.is_empty();
    let mut warnings = Vec::new();
    if target == Format::NnablaH5 && !model.network.is_empty() {
        warnings.push(format!(
            "the networks of this {} are not carried over: an .h5 holds parameters only",
            doc.format()
        ));
    }
    if with_graph {
        if !opts.renames.is_empty() {
            return Err(Error::Unsupported(format!(
                "--rename would leave the networks of this {} naming parameters that are no \
                 longer there; add --weights-only to write the renamed parameters alone",
                doc.format()
            )));
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
    nnabla_family::write(&model, target, output, items, cx)?;
    let mut s = ConvertSummary::new(doc.format(), target, items.len(), with_graph);
    s.skipped = skipped;
    s.warnings = warnings;
    Ok(s)
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
                .map_err(|e| Error::Invalid(format!("--rename: bad pattern {from:?}: {e}")))
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

/// What happens to each tensor on its way to the target.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Plan {
    /// Cast floats to this type.
    pub cast: Option<DType>,
    /// The exchange format (safetensors, npz) whose dtypes the tensor must fit.
    pub exchange: Option<Format>,
    /// Transpose column-major data to row-major.
    pub row_major: bool,
}

impl Plan {
    /// The plan that changes nothing (row-major data stays as it is).
    pub fn unchanged() -> Plan {
        Plan {
            cast: None,
            exchange: None,
            row_major: true,
        }
    }

    /// The plan for writing `target`: floats cast to `cast`, dtypes the
    /// exchange formats cannot hold changed, and column-major data
    /// transposed unless the writer takes it as it is (or, for npz,
    /// `keep_order` asks to keep Fortran order).
    pub fn for_target(target: Format, cast: Option<DType>, keep_order: bool) -> Result<Plan> {
        let row_major = match target {
            Format::Npz => !keep_order,
            other => !codec(other)?.takes_column_major(other),
        };
        Ok(Plan {
            cast,
            exchange: matches!(target, Format::Safetensors | Format::Npz).then_some(target),
            row_major,
        })
    }

    /// The dtype a tensor of `d` has after [`Plan::apply`].
    pub fn out_dtype(&self, d: DType) -> DType {
        let d = match self.cast {
            Some(to) if d.is_float() => to,
            _ => d,
        };
        match self.exchange {
            Some(k) => exchange_dtype(d, k),
            None => d,
        }
    }

    /// The tensor as the target gets it: borrowed when nothing changes.
    pub fn apply<'t>(&self, t: &'t Tensor<'_>) -> Result<Tensor<'t>> {
        let mut cur = Tensor::with_order(t.dtype(), t.shape().clone(), t.order(), t.bytes())?;
        if let Some(to) = self.cast.filter(|_| cur.dtype().is_float()) {
            cur = cast_float(&cur, to)?;
        }
        if let Some(k) = self.exchange {
            cur = as_exchange_dtype(cur, k)?;
        }
        if self.row_major && cur.order() == MemoryOrder::ColumnMajor {
            cur = cur.to_row_major()?.into_static();
        }
        Ok(cur)
    }
}

/// A float tensor cast to the float type `to`, keeping shape and order.
pub(crate) fn cast_float(t: &Tensor<'_>, to: DType) -> Result<Tensor<'static>> {
    if t.dtype() == to {
        return Ok(t.to_owned_tensor());
    }
    if !to.is_float() {
        return Err(Error::Invalid(format!(
            "cannot cast to {to}: casts go to f16, bf16, f32 or f64"
        )));
    }
    let len = t
        .numel()
        .checked_mul(to.size())
        .ok_or_else(|| Error::Invalid("tensor too large".into()))?;
    let mut bytes = Vec::with_capacity(len);
    let numeric = stats::for_each_f64_block(t, |blk| {
        for &v in blk {
            match to {
                DType::F16 => bytes.extend_from_slice(&f16::from_f64(v).to_le_bytes()),
                DType::BF16 => bytes.extend_from_slice(&bf16::from_f64(v).to_le_bytes()),
                DType::F32 => bytes.extend_from_slice(&(v as f32).to_le_bytes()),
                _ => bytes.extend_from_slice(&v.to_le_bytes()),
            }
        }
    });
    if !numeric {
        return Err(Error::Unsupported(format!(
            "cannot cast {} to {to}",
            t.dtype()
        )));
    }
    Ok(Tensor::with_order(to, t.shape().clone(), t.order(), bytes)?)
}

/// The dtype safetensors or numpy store a tensor of `d` as: characters,
/// opaque and quantized bytes keep their bytes as unsigned integers of the
/// same size; floats the target cannot hold (bf16 and 8-bit floats in npz,
/// some 8-bit floats in safetensors) become f32, which holds every value
/// exactly.
pub(crate) fn exchange_dtype(d: DType, target: Format) -> DType {
    use tensor_core::float8::is_f8;
    let to_f32 = match target {
        Format::Npz => d == DType::BF16 || is_f8(d),
        _ => matches!(d, DType::F8E3M4 | DType::F8E4M3 | DType::F8E4M3B11Fnuz),
    };
    if to_f32 {
        return DType::F32;
    }
    match d {
        DType::Char8 | DType::Opaque8 | DType::Q8(_) => DType::U8,
        DType::Char16 | DType::Opaque16 => DType::U16,
        DType::Char32 | DType::Opaque32 => DType::U32,
        DType::Opaque64 => DType::U64,
        other => other,
    }
}

fn as_exchange_dtype(t: Tensor<'_>, target: Format) -> Result<Tensor<'_>> {
    let to = exchange_dtype(t.dtype(), target);
    if to == t.dtype() {
        return Ok(t);
    }
    let (shape, order) = (t.shape().clone(), t.order());
    if to == DType::F32 {
        let mut bytes = Vec::with_capacity(t.numel().saturating_mul(4));
        stats::for_each_f64_block(&t, |blk| {
            for &v in blk {
                bytes.extend_from_slice(&(v as f32).to_le_bytes());
            }
        });
        return Ok(Tensor::with_order(DType::F32, shape, order, bytes)?);
    }
    Ok(Tensor::with_order(to, shape, order, t.into_storage())?)
}
