//! # nnabla-proto
//!
//! The NNabla (nnabla 1.39.0) protobuf schema with everything needed to read
//! and write its files:
//!
//! - the prost types generated from `proto/nnabla.proto` in [`proto`]
//!   (root [`NNablaProtoBuf`]; re-exported here are the common ones), checked
//!   in and regenerated with `cargo xtask regen-proto` (no protoc needed);
//! - binary `.protobuf` ([`binary`]): the zero-copy reader
//!   [`binary::parse_with`] (and [`binary::from_map`], [`binary::open`],
//!   [`binary::merge_borrowed`]) whose parameter tensors borrow the packed
//!   float data of the input, plain prost [`binary::decode`] /
//!   [`binary::merge`], [`binary::encode`] / [`binary::write`];
//! - one walk of a binary `.protobuf` through `tensor-core`'s `ReadAt`
//!   ([`index::merge_index`]): each parameter's name, shape and
//!   `need_grad` read and its packed data located, not read; what the
//!   zero-copy reader and readers by offset share;
//! - text `.nntxt` / `.prototxt` ([`text`]): [`text::parse`], [`text::merge`],
//!   [`text::parse_all`] (several files merged into one root as nnabla does),
//!   and [`text::print`] / [`text::write`], byte-identical to Python
//!   protobuf's `text_format`;
//! - parameters as `tensor-core` f32 tensors: [`ParamTensor`],
//!   [`parameters`], [`parameter_tensor`], [`parameter_from_tensor`], and the
//!   streaming writers [`binary::write_parameters`] and
//!   [`text::write_parameters`] (what `nn.save_parameters` writes);
//! - a typed view of the model, [`model::Model`], and loop-control
//!   expansion as an explicit step, [`model::expand_loops`];
//! - [`descriptor_pool`] for reflection over the schema.
//!
//! # Entry points
//!
//! The same names as every format crate of the workspace; options are
//! always passed by reference. The binary reader works on bytes, a memory
//! map or a path; text is read from a `&str`.
//!
//! | to | call |
//! |---|---|
//! | read binary bytes (parameter data borrowed) | [`binary::parse`]`(bytes)`, [`binary::parse_with`]`(bytes, &ReadOptions)` → [`binary::BinaryFile`] |
//! | read a memory map (`'static`, zero-copy) | [`binary::from_map`]`(&Arc<MappedFile>, &ReadOptions)` |
//! | map a file and read it | [`binary::open`]`(path)`, [`binary::open_with`]`(path, &ReadOptions)` |
//! | read text | [`text::parse`]`(&str)`, [`text::parse_all`], [`text::merge`] |
//! | plain prost decode / merge (data in `Vec<f32>`) | [`binary::decode`]`(bytes)`, [`binary::merge`] |
//! | write to any `io::Write` | [`binary::write`]`(w, &model)`, [`text::write`]`(w, &model)`; [`binary::encode`], [`text::print`] |
//! | stream parameters one at a time | [`binary::write_parameters`]`(w, items)`, [`text::write_parameters`]`(w, items)` |
//! | write a file atomically | — (no `save`: write through `tensor_core::io::write_atomic`) |
//! | options | [`ReadOptions`] (`limits`); no write options (the format has nothing to choose) |
//!
//! ```
//! use nnabla_proto::{ReadOptions, binary, text};
//! use tensor_core::Limits;
//!
//! // Text in any style protobuf allows (NNC compact style, lists, comments) …
//! let model = text::parse(
//!     "network { name: 'net' batch_size: 2  # a comment\n\
//!      variable { name: \"x\" type: \"Buffer\" shape: { dim:-1 dim: [3] } } }\n\
//!      parameter { variable_name: \"w\" shape { dim: 2 } data: [0.5, 1e-05] need_grad: true }",
//! )?;
//! // … prints exactly as Python's text_format does.
//! let printed = text::print(&model)?;
//! assert!(printed.starts_with("network {\n  name: \"net\"\n  batch_size: 2\n"));
//! assert!(printed.contains("  data: 0.5\n  data: 1e-05\n"));
//!
//! // Binary: parameter data is borrowed from the input, not copied.
//! let bytes = binary::encode(&model);
//! let file = binary::parse_with(&bytes, &ReadOptions::default().with_limits(Limits::default()))?;
//! assert_eq!(file.model.network[0].name, "net");
//! let w = &file.parameters[0];
//! assert_eq!((w.name.as_str(), w.tensor.dims(), w.need_grad), ("w", &[2usize][..], true));
//! assert!(w.tensor.storage().is_zero_copy());
//! assert_eq!(&*w.tensor.view::<f32>()?, &[0.5, 1e-5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod binary;
mod descriptor;
mod error;
pub mod graph;
pub mod index;
pub mod model;
mod options;
mod params;
pub mod text;
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

pub use descriptor::{DESCRIPTOR_SET, descriptor_pool, root_descriptor};
pub use error::{Error, Result};
pub use options::ReadOptions;
pub use params::{
    ParamTensor, can_hold, check_parameter_names, f32_bytes, parameter_from_tensor,
    parameter_tensor, parameters, split_around_parameters,
};
pub use proto::{
    Context, Dataset, Executor, Function, GlobalConfig, Monitor, NNablaProtoBuf, Network,
    Optimizer, Parameter, RepeatInfo, Shape, Solver, TrainingConfig, Variable,
};
