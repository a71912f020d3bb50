//! [`ConvertOptions`]: what a conversion does besides copying tensors.

use std::path::PathBuf;

use tensor_core::DType;

use crate::Format;

/// What [`crate::convert()`] does besides copying tensors.
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
    /// [`ConvertSummary::skipped`](crate::ConvertSummary::skipped)) instead of refusing the conversion.
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
    /// [`Document::with_parameters`](crate::Document::with_parameters)).
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
    /// ONNX import: inputs fixed to constants `(input name, values)` (the
    /// CLI's `--input-value sr=16000`): each leaves the network's inputs,
    /// and an `If` its value decides becomes the branch it takes.
    pub input_values: Vec<(String, Vec<f64>)>,
    /// Refuse, with [`Error::NeedsWholeModel`](crate::Error::NeedsWholeModel),
    /// a step that needs the whole model in memory (re-encoding, an NNabla
    /// model kept, an ONNX graph imported, `--params`, ...) instead of
    /// reading the file whole: what [`crate::convert_sliced`] does, for a
    /// caller that decides itself whether to read the file whole (the
    /// viewer).
    pub streaming_only: bool,
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
            .field("input_values", &self.input_values)
            .field("streaming_only", &self.streaming_only)
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

    /// ONNX import: fixes input `name` to the constant `values`.
    pub fn input_value(mut self, name: impl Into<String>, values: Vec<f64>) -> Self {
        self.input_values.push((name.into(), values));
        self
    }

    /// The same options refusing what needs the whole model in memory
    /// (see [`ConvertOptions::streaming_only`](#structfield.streaming_only)).
    pub fn streaming_only(mut self, yes: bool) -> Self {
        self.streaming_only = yes;
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
