//! # onnx-format
//!
//! ONNX `.onnx` model files: read them (initializers as `tensor-core`
//! tensors named by their ONNX names and sharing the input's bytes; the
//! graph as `tensor-core`'s typed graph), write them (named tensors as the
//! initializers of a model with an empty graph, streamed one at a time; any
//! `ModelProto`), and build graphs node by node ([`builder`]).
//!
//! The schema ([`proto`]) is our own copy of ONNX's published field names and
//! numbers (`proto/onnx.proto`), compiled to prost code by
//! `cargo xtask regen-proto` and checked in: a build needs no protoc.
//!
//! ```
//! use onnx_format::{Model, write};
//! use tensor_core::Tensor;
//!
//! let w = Tensor::from_values([2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
//! let entries = [write::TensorEntry { name: "fc/W", dtype: w.dtype(), dims: w.dims().to_vec() }];
//! let mut bytes = Vec::new();
//! write::write_tensors(&mut bytes, &entries, &Default::default(), |_, out| {
//!     out.write_all(w.bytes())?;
//!     Ok(w.bytes().len())
//! }).unwrap();
//! let model = Model::parse(&bytes).unwrap();
//! let inits = model.initializers().unwrap();
//! assert_eq!(inits[0].0, "fc/W");
//! assert_eq!(inits[0].1.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
//! assert_eq!(model.opset(), Some(13));
//! ```
//!
//! # Safety and limits
//!
//! Before decoding, a wire-level scan ([`scan`]) counts every embedded
//! message against `Limits::max_tensors` and bounds their nesting, so a small
//! hostile file cannot make the decoder build millions of structs; names,
//! ranks and allocations are checked against the other limits; tensor data
//! must match its shape exactly. Tensors stored in external files are
//! refused with [`Error::ExternalData`].
#![warn(missing_docs)]

pub mod builder;
pub mod dtype;
mod error;
pub mod index;
pub mod read;
pub mod scan;
pub mod write;

pub use error::{Error, Result};
pub use index::{IndexedTensor, ModelIndex, TensorData, TypedField};
pub use read::{
    ConstantValue, Model, ReadOptions, constant_attribute, constant_value, graph, tensor_from_proto,
};
pub use tensor_core::wire::ReadAt;
pub use write::{
    DEFAULT_OPSET, TensorEntry, TensorsWriter, WriteOptions, ir_version_for, tensor_to_proto,
    write_model, write_model_deferred, write_tensors,
};

/// The prost types of the ONNX schema (`ModelProto`, `GraphProto`, ...).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    include!("generated/onnx.rs");
}

pub use proto::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto};
