//! # mlformats
//!
//! Open any model or parameter file of primitiv, NNabla, TenniS and
//! CVM-Runtime / Apache TVM (and `.safetensors` and `.npz`), read its
//! tensors without copying them, and save or convert them to any other:
//!
//! ```no_run
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let doc = mlformats::open("model.nnp")?;          // any format, memory-mapped
//!     println!("{}", doc.format());
//!     for (name, t) in doc.tensors() {
//!         println!("{name} {} {:?}", t.dtype(), t.shape());
//!     }
//!     let w: Vec<f32> = doc.tensor("conv1/W").unwrap().to_vec::<f32>()?; // any numeric dtype
//!     println!("{} values", w.len());
//!     mlformats::save("model.safetensors", doc.tensors())?; // format from the extension
//!     Ok(())
//! }
//! ```
//!
//! The same, run on a file of this repository:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let doc = mlformats::open("../../testdata/nnabla/mlp.nnp")?;
//! assert_eq!(doc.format(), mlformats::Format::NnablaNnp);
//! let (name, w) = doc.tensors().next().unwrap();
//! let values = w.to_vec::<f32>()?;
//! assert_eq!(values.len(), w.numel());
//! let dir = tempfile::tempdir()?;
//! let out = dir.path().join("mlp.safetensors");
//! mlformats::save(&out, doc.tensors())?;
//! let back = mlformats::open(&out)?;
//! assert_eq!(back.tensor(name).unwrap().to_vec::<f32>()?, values);
//! # Ok(()) }
//! ```
//!
//! Options are built with their methods (they are `#[non_exhaustive]`), and
//! results are typed, so no JSON is needed:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mlformats::{ConvertOptions, DType, DiffOptions, NameFilter};
//!
//! let doc = mlformats::open("../../testdata/nnabla/mlp.nnp")?;
//! let summary = doc.summary(); // names, sizes, parameters, graph inputs/outputs
//! assert_eq!(summary.parameters, 212);
//! let w = doc.tensor("fc1/affine/W").ok_or("no W")?;
//! // borrowed without a copy when aligned (`?` says why not), else converted
//! let values: Vec<f32> = match w.try_as_slice::<f32>() {
//!     Ok(s) => s.to_vec(),
//!     Err(_) => w.to_vec::<f32>()?,
//! };
//! assert_eq!(values.len(), 128);
//! let dir = tempfile::tempdir()?;
//! let out = dir.path().join("fc1.safetensors");
//! let opts = ConvertOptions::new().only("fc1/*").dtype(DType::F16);
//! mlformats::convert("../../testdata/nnabla/mlp.nnp", &out, &opts)?;
//! let only_fc1 = NameFilter::new(&["fc1/*".into()], &[])?;
//! let report = mlformats::diff(
//!     "../../testdata/nnabla/mlp.nnp",
//!     &out,
//!     &DiffOptions::new().tolerance(1e-2).filter(only_fc1),
//! )?;
//! assert!(report.is_equal());
//! assert!(mlformats::validate(&out)?.is_valid());
//! # Ok(()) }
//! ```
//!
//! - [`open`] detects the format ([`detect`]) and gives a [`Document`]:
//!   tensors under one name each (the name `inspect` prints and every
//!   command takes), the typed [`graph`](Document::graph) where the format
//!   has one, metadata, the typed [`summary`](Document::summary) and
//!   [`inspect_json`](Document::inspect_json).
//! - [`save`] writes named tensors to any format (from the extension, or
//!   [`save_with`] and [`SaveOptions`]), atomically and one tensor at a time
//!   where the format allows.
//! - [`convert()`] converts a file with filters, dtype casts and memory order,
//!   keeping whole models between a format's own encodings;
//!   [`convert_document_to_bytes`] gives the same bytes in memory.
//! - [`diff()`] compares two files of any formats; [`validate()`] applies
//!   the strictest read plus data checks.
//! - [`layout`] lays a graph out (layers, boxes, edges as polylines) in
//!   near-linear time, as JSON or SVG.
//!
//! Each format lives in its own crate, re-exported here behind a feature
//! named after it (all on by default):
//!
//! | feature | module | crate | files |
//! |---|---|---|---|
//! | `cvm` | [`cvm`] | `cvm-params` | CVM-Runtime / Apache TVM `.params` |
//! | `primitiv` | [`primitiv`] | `primitiv-format` | primitiv MessagePack files |
//! | `nnabla` | [`nnabla`] | `nnabla-proto` | NNabla `.protobuf`, `.nntxt`, `.prototxt` |
//! | `nnp` | [`nnp`] | `nnp-archive` | NNabla `.nnp` archives, `.h5` parameters |
//! | `tennis` | [`tennis`] | `bubble-module` | TenniS `.tsm` modules |
//! | `safetensors` | | `safetensors` | Hugging Face `.safetensors` |
//! | `npz` | | `npyz`, `zip` | numpy `.npz` |
//! | `onnx` | [`onnx`] | `onnx-format` | ONNX `.onnx` models; [`export`] of NNabla and TenniS graphs to ONNX |
//!
//! and `ndarray` adds `ndarray` views of tensors. [`detect`] works whatever
//! features are enabled; opening a format whose feature is off is
//! [`Error::FeatureDisabled`]. Formats from other crates are added at run
//! time: [`FormatPlugin`] and [`register_format`] (docs/ADDING_A_FORMAT.md).
#![warn(missing_docs)]
// With some formats left out, helpers only they use go unused.
#![cfg_attr(
    not(all(
        feature = "cvm",
        feature = "primitiv",
        feature = "nnabla",
        feature = "nnp",
        feature = "tennis",
        feature = "safetensors",
        feature = "npz",
        feature = "onnx"
    )),
    allow(dead_code, unused_imports)
)]

mod codec;
pub mod convert;
mod detect;
pub mod diff;
mod document;
mod error;
#[cfg(feature = "onnx")]
pub mod export;
mod format;
mod formats;
#[cfg(all(feature = "onnx", feature = "nnp"))]
mod import;
pub mod layout;
pub mod numpy;
mod plugin;
pub mod random_access;
#[cfg(feature = "remote")]
pub mod remote;
pub mod report;
mod save;
mod select;
mod sink;
pub mod slice;
pub mod streamed;
pub mod summary;
pub mod validate;
#[cfg(feature = "view")]
pub mod view;

pub use codec::{ReadOptions, StoredTensor};
#[doc(inline)]
pub use convert::{
    ConvertOptions, ConvertSummary, SLICED_TARGETS, convert, convert_document,
    convert_document_to_bytes, convert_document_to_writer, convert_sliced,
};
pub use detect::{Input, detect};
#[doc(inline)]
pub use diff::{DiffOptions, DiffReport, diff, diff_documents};
pub use document::Document;
pub(crate) use error::InTensor;
pub use error::{Error, Result, WholeModelNeed, chain_message};
pub use format::Format;
pub use plugin::{ExternalFormat, FormatPlugin, PluginRead, TensorsToWrite, register_format};
pub use save::{SaveOptions, save, save_to_writer, save_with};
pub use select::NameFilter;
#[doc(inline)]
pub use summary::{GraphSummary, Port, Summary, TensorSummary};
#[doc(inline)]
pub use validate::{Validation, validate, validate_document};

#[doc(inline)]
pub use tensor_core::graph;

/// The JSON library of [`Document::inspect_json`], [`Document::metadata`]
/// and [`DiffReport::to_json`], re-exported so callers need no dependency
/// of their own (the typed [`Summary`], [`DiffReport`] and [`Validation`]
/// need none at all).
pub use serde_json;
#[doc(inline)]
pub use tensor_core::{DType, MemoryOrder, Shape, Tensor, TensorMap};

/// The dtypes a conversion casts floating-point tensors to
/// ([`ConvertOptions::dtype`], the CLI's `--dtype`, Python's `dtype=` and
/// the web page's choice), by their contract names `f16`, `bf16`, `f32`,
/// `f64`: the one list every front offers.
pub const CAST_TARGETS: &[DType] = &[DType::F16, DType::BF16, DType::F32, DType::F64];

/// The ground floor every format shares (the `tensor-core` crate).
#[doc(inline)]
pub use tensor_core;

/// CVM-Runtime / Apache TVM `.params` (the `cvm-params` crate).
#[cfg(feature = "cvm")]
#[doc(inline)]
pub use cvm_params as cvm;

/// primitiv MessagePack files (the `primitiv-format` crate).
#[cfg(feature = "primitiv")]
#[doc(inline)]
pub use primitiv_format as primitiv;

/// NNabla binary and text protobuf (the `nnabla-proto` crate).
#[cfg(feature = "nnabla")]
#[doc(inline)]
pub use nnabla_proto as nnabla;

/// NNabla `.nnp` archives and `.h5` parameter files (the `nnp-archive` crate).
#[cfg(feature = "nnp")]
#[doc(inline)]
pub use nnp_archive as nnp;

/// TenniS `.tsm` modules (the `bubble-module` crate).
#[cfg(feature = "tennis")]
#[doc(inline)]
pub use bubble_module as tennis;

/// ONNX `.onnx` models (the `onnx-format` crate).
#[cfg(feature = "onnx")]
#[doc(inline)]
pub use onnx_format as onnx;

/// Graph translation between ONNX and NNabla or TenniS (the
/// `graph-translate` crate): among others the typed refusals an ONNX
/// import carries ([`Error::GraphRefused`]).
#[cfg(feature = "onnx")]
#[doc(inline)]
pub use graph_translate as translate;

/// Parses an ONNX import's fixed input shape, `NAME=1,3,224,224` (the CLI's
/// `--input-shape`; see [`ConvertOptions::input_shape`]), and fixed input
/// values, `NAME=16000` (`--input-value`; [`ConvertOptions::input_value`]).
#[cfg(feature = "onnx")]
pub use graph_translate::import::{parse_input_shape, parse_input_value};

/// Opens a file of any supported format (detected from its first bytes and
/// name), memory-mapped: see [`Document`].
pub fn open(path: impl AsRef<std::path::Path>) -> Result<Document> {
    Document::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cast_targets_are_the_float_types() {
        let floats: Vec<DType> = tensor_core::ALL_DTYPES
            .iter()
            .copied()
            .filter(|d| d.is_float())
            .collect();
        assert_eq!(CAST_TARGETS, &floats[..]);
        let names: Vec<&str> = CAST_TARGETS.iter().map(|d| d.name()).collect();
        assert_eq!(names, ["f16", "bf16", "f32", "f64"]);
    }
}
