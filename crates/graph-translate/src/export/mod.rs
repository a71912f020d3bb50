//! Exporting NNabla networks and TenniS modules to ONNX.
//!
//! The input is the typed graph both formats build
//! ([`tensor_core::graph::Graph`]; for NNabla the model itself, whose loops
//! and executors the export needs) plus the weights, through [`Weights`].
//! Each source format has one declarative operator table
//! ([`nnabla_table::TABLE`], [`tennis_table::TABLE`]): an entry names the
//! source operator, the attributes it reads, the ONNX operators its lowering
//! writes and its status (lowered, or refused with the reason). The table
//! drives the dispatcher, [`nnabla_functions`]/[`tennis_ops`], the
//! per-operator tests and the published support table
//! ([`support_table`], checked in as `SUPPORT.md` of this crate).
//!
//! ## Helper constants
//!
//! Every tensor the exporter adds besides the model's own (shapes, axes,
//! scalars, pads, binarized weights, ...) is named with the reserved prefix
//! [`HELPER_PREFIX`] (`mlformats/`), e.g. `mlformats/c__3`, so that a
//! comparison of the source and the ONNX file can tell them apart from the
//! model's tensors.
//!
//! ```
//! use graph_translate::export::{HELPER_PREFIX, nnabla_functions, support_table};
//! assert_eq!(HELPER_PREFIX, "mlformats/");
//! assert!(nnabla_functions().contains(&"Convolution"));
//! assert!(support_table().contains("| Convolution |"));
//! ```

// Without a source format, only the shared pieces are built.
#![cfg_attr(
    not(any(feature = "nnabla", feature = "tennis")),
    allow(dead_code, unused_imports)
)]

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use tensor_core::{DType, Tensor};

mod ctx;
mod support;
mod table;

#[cfg(feature = "nnabla")]
pub mod nnabla;
#[cfg(feature = "nnabla")]
pub mod nnabla_table;
#[cfg(feature = "tennis")]
pub mod tennis;
#[cfg(feature = "tennis")]
pub mod tennis_table;

pub(crate) use ctx::Ctx;
pub use support::support_table;
pub use table::{Entry, MinOpsetFn, Verified};

/// The name prefix of every tensor the exporter adds (helper constants and
/// derived weights): `mlformats/`.
pub const HELPER_PREFIX: &str = "mlformats/";

/// The operator sets an export can target.
pub const OPSETS: std::ops::RangeInclusive<i64> = 13..=21;

/// What went wrong in an export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph uses something the export cannot express.
    #[error("{0}")]
    Unsupported(String),
    /// The graph is not well formed.
    #[error("{0}")]
    Invalid(String),
    /// A tensor could not be converted.
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// The ONNX model could not be built.
    #[error(transparent)]
    Onnx(#[from] onnx_format::Error),
    /// The NNabla model could not be expanded (loops).
    #[cfg(feature = "nnabla")]
    #[error(transparent)]
    Nnabla(#[from] nnabla_proto::Error),
}

/// The result of an export step.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where the export finds the weights (parameters, constants) by name.
///
/// The exporter asks [`Weights::info`] for what it needs of a tensor's
/// shape and type, and [`Weights::weight`] only where a lowering reads the
/// values (attribute tensors, weights it derives others from). A source
/// that can load a tensor on demand (a file read by slices) returns owned
/// tensors and says [`Weights::defers`]: the model's own weights then become
/// deferred initializers (see [`deferred_source`]) whose data the writer
/// reads when it gets to them, so an export holds no weight it does not
/// compute from. The weights a lowering derives (binarized, quantized, ...)
/// are computed and held in the model either way.
pub trait Weights {
    /// The tensor named `name`, if there is one.
    fn weight(&self, name: &str) -> Option<Cow<'_, Tensor<'static>>>;

    /// The element type and dimensions of the tensor named `name`, if
    /// there is one, without its data.
    fn info(&self, name: &str) -> Option<(DType, Vec<usize>)> {
        self.weight(name).map(|t| (t.dtype(), t.dims().to_vec()))
    }

    /// True when the model's weights are to be left out of the model as
    /// deferred initializers (their data written later from the source);
    /// false (the default) copies them in.
    fn defers(&self) -> bool {
        false
    }
}

impl Weights for HashMap<String, Tensor<'static>> {
    fn weight(&self, name: &str) -> Option<Cow<'_, Tensor<'static>>> {
        self.get(name).map(Cow::Borrowed)
    }
}

impl Weights for BTreeMap<String, Tensor<'static>> {
    fn weight(&self, name: &str) -> Option<Cow<'_, Tensor<'static>>> {
        self.get(name).map(Cow::Borrowed)
    }
}

/// The key of a deferred initializer's `external_data` entry naming the
/// source tensor its data comes from.
pub const DEFERRED_SOURCE: &str = "mlformats/source";
/// The key of a deferred initializer's `external_data` entry saying the
/// source tensor is first cast to f32 (the value `float32`), as NNabla
/// computes whatever a parameter file stores.
pub const DEFERRED_VIA: &str = "mlformats/via";

/// A deferred initializer (written when [`Weights::defers`]): a
/// `TensorProto` with the name, dims and type it will have and no data,
/// whose `external_data` names the source tensor ([`DEFERRED_SOURCE`]) and
/// whether it is cast to f32 first ([`DEFERRED_VIA`]). The writer of such a
/// model reads the source, casts it to f32 when told, then to the proto's
/// type when that differs, and writes it as `raw_data` (the bytes the
/// model would hold had the data been copied in). `None` for any other
/// initializer.
pub fn deferred_source(p: &onnx_format::proto::TensorProto) -> Option<(&str, bool)> {
    let source = p
        .external_data
        .iter()
        .find(|e| e.key.as_deref() == Some(DEFERRED_SOURCE))?
        .value
        .as_deref()?;
    let via_f32 = p
        .external_data
        .iter()
        .any(|e| e.key.as_deref() == Some(DEFERRED_VIA) && e.value.as_deref() == Some("float32"));
    Some((source, via_f32))
}

/// The deferred initializer `name` of `dtype` and `dims` whose data is the
/// tensor `source`, cast to f32 first when `via_f32`.
pub(crate) fn deferred_proto(
    name: &str,
    source: &str,
    dtype: DType,
    dims: &[usize],
    via_f32: bool,
) -> Result<onnx_format::proto::TensorProto> {
    use onnx_format::proto::StringStringEntryProto;
    // (the error `tensor_to_proto` gives when the data is copied in)
    let data_type =
        onnx_format::dtype::to_onnx(dtype).ok_or_else(|| onnx_format::Error::NoOnnxType {
            tensor: name.to_string(),
            dtype,
        })?;
    let entry = |k: &str, v: &str| StringStringEntryProto {
        key: Some(k.into()),
        value: Some(v.into()),
    };
    let mut external_data = vec![entry(DEFERRED_SOURCE, source)];
    if via_f32 {
        external_data.push(entry(DEFERRED_VIA, "float32"));
    }
    Ok(onnx_format::proto::TensorProto {
        dims: dims.iter().map(|&d| d as i64).collect(),
        data_type: Some(data_type),
        name: Some(name.to_string()),
        external_data,
        ..Default::default()
    })
}

/// What an export writes.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The NNabla network to export (default: the first executor's).
    pub network: Option<String>,
    /// The default-domain operator set. Default: 13, or for an NNabla
    /// network the lowest set its functions need (e.g. 16 for
    /// `WarpByGrid`'s `GridSample`); a chosen set older than a function
    /// needs is refused.
    pub opset: Option<i64>,
}

impl ExportOptions {
    /// The defaults: the first executor's network, operator set 13.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options exporting the network `name`.
    pub fn network(mut self, name: impl Into<String>) -> Self {
        self.network = Some(name.into());
        self
    }

    /// The same options writing operator set `opset`.
    pub fn opset(mut self, opset: i64) -> Self {
        self.opset = Some(opset);
        self
    }

    /// The operator set to write, checked against [`OPSETS`].
    pub fn checked_opset(&self) -> Result<i64> {
        let opset = self.opset.unwrap_or(onnx_format::DEFAULT_OPSET);
        if !OPSETS.contains(&opset) {
            return Err(Error::Unsupported(format!(
                "ONNX export writes operator sets {} to {}, not {opset}",
                OPSETS.start(),
                OPSETS.end()
            )));
        }
        Ok(opset)
    }
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportSummary {
    /// The exported network (empty for a TenniS module).
    pub network: String,
    /// ONNX nodes written.
    pub nodes: usize,
    /// Initializers written.
    pub initializers: usize,
    /// The operator set imported.
    pub opset: i64,
    /// Source nodes left out because no requested output needs them (losses, ...).
    pub pruned: usize,
}

/// The NNabla function types the exporter lowers, sorted.
#[cfg(feature = "nnabla")]
pub fn nnabla_functions() -> Vec<&'static str> {
    table::lowered(nnabla_table::TABLE.as_slice())
}

/// The TenniS operators the exporter lowers, sorted.
#[cfg(feature = "tennis")]
pub fn tennis_ops() -> Vec<&'static str> {
    table::lowered(tennis_table::TABLE)
}

/// The error for a model with operators that have no lowering: every type,
/// sorted, with how many nodes use it.
pub(crate) fn unsupported_error(source: &str, ops: &BTreeMap<String, usize>) -> Error {
    let list: Vec<String> = ops.iter().map(|(op, n)| format!("{op} ({n})")).collect();
    Error::Unsupported(format!(
        "cannot export to ONNX: {} {source} operator type{} without an ONNX lowering: {}",
        ops.len(),
        if ops.len() == 1 { "" } else { "s" },
        list.join(", ")
    ))
}
