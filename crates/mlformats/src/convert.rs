//! Conversion: selection, renames, float casts and memory order on the way
//! from any format to any other, and whole-model transcoding where a family
//! of formats shares one model (NNabla's encodings).

use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use tensor_core::half::{bf16, f16};
use tensor_core::{DType, MemoryOrder, Tensor, stats};

use crate::codec::{Item, WriteContext, codec};
use crate::{Document, Error, Format, Result};

/// What [`convert`] does besides copying tensors.
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
    /// Flush the output to the disk (file, then folder) so it survives a
    /// power loss once the conversion returns. Off by default: the output
    /// is still replaced atomically, so a killed or crashed conversion
    /// leaves the previous file, but a power loss may lose the new one
    /// (see [`tensor_core::io`]).
    pub sync: bool,
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

fn globs(patterns: &[String], flag: &str) -> Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| Error::Invalid(format!("{flag}: bad glob {p:?}: {e}")))?);
    }
    b.build()
        .map(Some)
        .map_err(|e| Error::Invalid(format!("{flag}: {e}")))
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
    /// What the user should know about the output (a kept network that
    /// uses parameters the output does not hold).
    pub warnings: Vec<String>,
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

/// Writes an opened document as `output` (replaced atomically).
///
/// To the input's own format, the whole file is re-encoded. Between
/// NNabla's encodings the whole model is kept. Otherwise the tensors are
/// copied, selected, cast and reordered as `opts` says; every target but
/// NNabla's `.nnp` and `.h5` converts one tensor at a time while writing.
pub fn convert_document(
    doc: &Document,
    output: impl AsRef<Path>,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
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
    let only = globs(&opts.only, "--only")?;
    let exclude = globs(&opts.exclude, "--exclude")?;
    if opts.is_plain() {
        if doc.format() == target {
            doc.reencode(output)?;
            return Ok(ConvertSummary {
                from: doc.format(),
                to: target,
                tensors: doc.len(),
                whole_model: true,
                skipped: Vec::new(),
                warnings: Vec::new(),
            });
        }
        #[cfg(feature = "onnx")]
        if target == Format::Onnx && crate::export::has_graph(doc) {
            let eo = crate::export::ExportOptions {
                network: opts.network.clone(),
                opset: opts.opset,
            };
            let s = crate::export::export(doc, output, &eo)?;
            return Ok(ConvertSummary {
                from: doc.format(),
                to: target,
                tensors: s.initializers,
                whole_model: true,
                skipped: Vec::new(),
                warnings: Vec::new(),
            });
        }
        #[cfg(feature = "nnp")]
        if doc.format().is_nnabla() && target.is_nnabla() {
            crate::formats::nnabla_family::transcode(doc.source(), target, output)?;
            return Ok(ConvertSummary {
                from: doc.format(),
                to: target,
                tensors: doc.len(),
                whole_model: true,
                skipped: Vec::new(),
                warnings: Vec::new(),
            });
        }
    }
    let renames = renames(&opts.renames)?;
    // (name in the input, name in the output, tensor)
    let mut selected: Vec<(&str, String, &Tensor<'static>)> = Vec::new();
    for (name, tensor) in doc.tensors() {
        let keep = only.as_ref().is_none_or(|g| g.is_match(name))
            && !exclude.as_ref().is_some_and(|g| g.is_match(name));
        if keep {
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
    for (old, new, tensor) in &selected {
        match c.refuses(target, plan.out_dtype(tensor.dtype()), tensor.dims()) {
            Some(why) => skipped.push((old.to_string(), why)),
            None => items.push(Item {
                name: new,
                tensor,
                need_grad: doc.need_grad(old).unwrap_or(true),
            }),
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
    if doc.format().is_nnabla() && target.is_nnabla() && !opts.weights_only {
        return nnabla_with_model(doc, target, output, &items, &cx, opts, skipped);
    }
    c.write(target, output, &items, &cx)?;
    Ok(ConvertSummary {
        from: doc.format(),
        to: target,
        tensors: items.len(),
        whole_model: false,
        skipped,
        warnings: Vec::new(),
    })
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
    Ok(ConvertSummary {
        from: doc.format(),
        to: target,
        tensors: items.len(),
        whole_model: with_graph,
        skipped,
        warnings,
    })
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
