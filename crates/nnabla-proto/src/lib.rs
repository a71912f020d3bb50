//! # nnabla-proto
//!
//! The NNabla (nnabla 1.39.0) protobuf schema with everything needed to read
//! and write its files:
//!
//! - the prost types generated from `proto/nnabla.proto` in [`proto`]
//!   (root [`NNablaProtoBuf`]; re-exported here are the common ones), checked
//!   in and regenerated with `cargo xtask regen-proto` (no protoc needed);
//! - binary `.protobuf`: [`decode_binary`], [`merge_binary`],
//!   [`encode_binary`], [`write_binary`], and the fast path
//!   [`decode_binary_borrowed`] / [`merge_binary_borrowed`] whose parameter
//!   tensors borrow the packed float data of the input;
//! - text `.nntxt` / `.prototxt`: [`parse_text`], [`merge_text`],
//!   [`parse_texts`] (several files merged into one root as nnabla does),
//!   and [`print_text`] / [`write_text`], byte-identical to Python
//!   protobuf's `text_format`;
//! - parameters as `tensor-core` f32 tensors: [`ParamTensor`],
//!   [`parameters`], [`parameter_tensor`], [`parameter_from_tensor`], and the
//!   streaming writers [`write_parameters_binary`] and
//!   [`write_parameters_text`] (what `nn.save_parameters` writes);
//! - a typed view of the model, [`model::Model`], and loop-control
//!   expansion as an explicit step, [`model::expand_loops`];
//! - [`descriptor_pool`] for reflection over the schema.
//!
//! ```
//! use nnabla_proto::{decode_binary_borrowed, encode_binary, parse_text, print_text};
//! use tensor_core::{Limits, Tensor};
//!
//! // Text in any style protobuf allows (NNC compact style, lists, comments) …
//! let model = parse_text(
//!     "network { name: 'net' batch_size: 2  # a comment\n\
//!      variable { name: \"x\" type: \"Buffer\" shape: { dim:-1 dim: [3] } } }\n\
//!      parameter { variable_name: \"w\" shape { dim: 2 } data: [0.5, 1e-05] need_grad: true }",
//! )?;
//! // … prints exactly as Python's text_format does.
//! let text = print_text(&model)?;
//! assert!(text.starts_with("network {\n  name: \"net\"\n  batch_size: 2\n"));
//! assert!(text.contains("  data: 0.5\n  data: 1e-05\n"));
//!
//! // Binary: parameter data is borrowed from the input, not copied.
//! let bytes = encode_binary(&model);
//! let file = decode_binary_borrowed(&bytes, &Limits::default())?;
//! assert_eq!(file.model.network[0].name, "net");
//! let w = &file.parameters[0];
//! assert_eq!((w.name.as_str(), w.tensor.dims(), w.need_grad), ("w", &[2usize][..], true));
//! assert!(w.tensor.storage().is_zero_copy());
//! assert_eq!(&*w.tensor.view::<f32>()?, &[0.5, 1e-5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod binary;
mod descriptor;
mod error;
pub mod graph;
pub mod model;
mod params;
mod text;
mod wire;

/// The prost types generated from `proto/nnabla.proto` (207 messages, no
/// package). Regenerate with `cargo xtask regen-proto`; never edit by hand.
///
/// `Function.parameter` and `Solver.parameter` are oneofs:
/// [`proto::function::Parameter`] (`AffineParam(..)`, …) and
/// [`proto::solver::Parameter`] (`SgdParam(..)`, …). prost keeps the schema's
/// casing except where Rust naming changes it (`ReLUParameter` becomes
/// `ReLuParameter`).
#[allow(missing_docs, clippy::all)]
pub mod proto {
    include!("generated/nnabla.rs");
}

pub use binary::{
    BinaryFile, decode_binary, decode_binary_borrowed, encode_binary, merge_binary,
    merge_binary_borrowed, write_binary,
};
pub use descriptor::{DESCRIPTOR_SET, descriptor_pool, root_descriptor};
pub use error::{Error, Result};
pub use params::{
    ParamTensor, f32_bytes, parameter_from_tensor, parameter_tensor, parameters,
    write_parameters_binary, write_parameters_text,
};
pub use proto::{
    Context, Dataset, Executor, Function, GlobalConfig, Monitor, NNablaProtoBuf, Network,
    Optimizer, Parameter, RepeatInfo, Shape, Solver, TrainingConfig, Variable,
};
pub use text::parse::{MAX_TEXT_DEPTH, merge_text, parse_text, parse_texts};
pub use text::print::{print_text, write_text};
