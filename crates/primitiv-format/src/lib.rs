//! # primitiv-format
//!
//! Read and write the primitiv File Format v0.1 byte-compatibly with the
//! C++ library (primitiv 0.4): Shape, Tensor, Parameter, Model and
//! Optimizer files, each a header (`ver_major`, `ver_minor`, `data_type`)
//! followed by a run of top-level MessagePack objects.
//!
//! - [`File::parse`] auto-detects the data type ([`ReadOptions::expecting`]
//!   or the typed [`Model::parse`], [`Parameter::parse`], … require one), with
//!   the library's validation: version exactly 0.1, at most 8 dims, no zero
//!   dim or batch, data length = size × 4, parameter batch 1; uint32 only as
//!   `0xce`, float only as `0xca`, any str/array/map/bin header width. Every
//!   claimed length is checked against the remaining bytes before anything
//!   is sliced or allocated, and errors name the byte offset.
//! - Tensor data is borrowed from the input ([`Tensor::data`]), column-major
//!   with the batch slowest; [`Tensor::to_core`] gives a `tensor-core`
//!   column-major tensor of dims `[d0.., batch]` (batch only when > 1) and
//!   [`Tensor::to_row_major_vec`] an owned row-major copy.
//! - Writers ([`mod@write`]: [`File::write`], [`Model::write`], …,
//!   [`ModelWriter`]) stream to any `io::Write` with fixed-width uint32,
//!   minimal-width headers and model keys sorted byte-wise; the output of a
//!   read file is byte-identical to the input. [`WriteOptions::cpp_order`]
//!   orders stats and optimizer configs as libstdc++ `unordered_map` does
//!   ([`order`]), so files built in Rust can equal C++-written ones.
//! - [`optim`] gives typed views of the configs of every optimizer class.
//!
//! Policies (those of the library's loaders): repeated stat keys and
//! config keys — the first wins ([`Parameter::stat`], [`Optimizer::float`]);
//! repeated model keys — the last wins ([`Model::get`], [`Model::dedup`]);
//! unknown config keys are kept but ignored by the typed views; trailing
//! bytes after the body are ignored. Raw entries are always kept in file
//! order, duplicates included.
//!
//! # Entry points
//!
//! The same names as every format crate of the workspace; options are
//! always passed by reference.
//!
//! | to | call |
//! |---|---|
//! | read bytes (tensor data borrowed) | [`File::parse`]`(bytes)`, [`File::parse_with`]`(bytes, &ReadOptions)`, [`File::parse_prefix`] (also gives the body length); typed: [`Model::parse`], [`Parameter::parse`], [`Tensor::parse`], [`Shape::parse`], [`Optimizer::parse`] |
//! | locate each tensor in a `Read + Seek` without reading its data (the same walk and checks) | [`index`]`(reader, &ReadOptions)` → [`Index`] ([`TensorAt`]: key path, stat, shape, offset, length) |
//! | read a memory map (`'static`, zero-copy) | [`File::from_map`]`(&Arc<MappedFile>, &ReadOptions)` |
//! | map a file and read it | [`File::open`]`(path)`, [`File::open_with`]`(path, &ReadOptions)` |
//! | write to any `io::Write` | [`File::write`]`(w, &WriteOptions)` (and [`Model::write`], [`Parameter::write`], …) |
//! | write a file atomically | [`File::save`]`(path, &WriteOptions)` (and [`Model::save`], …) |
//! | stream a model one parameter at a time | [`ModelWriter`] |
//! | options | [`ReadOptions`] (`limits`, `expect`), [`WriteOptions`] (`with_stats`, `stats_order`, `config_order`) |
//!
//! ```
//! use primitiv_format::{Adam, Model, Parameter, Shape, Tensor, WriteOptions, File};
//!
//! // A model with one 2x3 parameter holding [[1,3,5],[2,4,6]] (column-major data).
//! let value = Tensor::from_values(Shape::new([2, 3], 1)?, &[1., 2., 3., 4., 5., 6.])?;
//! let mut model = Model::new();
//! model.insert(["enc", "w"], Parameter::new(value)?);
//! let mut bytes = Vec::new();
//! model.write(&mut bytes, &WriteOptions::default())?;
//! assert_eq!(&bytes[..5], &[0xce, 0, 0, 0, 0]); // ver_major as a fixed-width uint32
//!
//! let File::Model(m) = File::parse(&bytes)? else { panic!("a model") };
//! let w = &m.get(&["enc", "w"]).unwrap().value;
//! assert_eq!(w.shape().dims(), &[2, 3]);
//! assert_eq!(w.to_row_major_vec(), vec![1., 3., 5., 2., 4., 6.]);
//! assert!(bytes.as_ptr_range().contains(&w.data().as_ptr())); // zero-copy
//!
//! // Optimizer configs, saved as the library saves them.
//! let adam = Adam { alpha: 0.002, ..Adam::default() };
//! let mut out = Vec::new();
//! adam.to_optimizer().write(&mut out, &WriteOptions::default())?;
//! assert_eq!(Adam::from_optimizer(&primitiv_format::Optimizer::parse(&out)?), adam);
//! # Ok::<(), primitiv_format::Error>(())
//! ```
#![warn(missing_docs)]

mod error;
pub mod optim;
pub mod order;
pub mod read;
mod types;
pub mod write;

pub use error::{Error, Result};
pub use optim::{AdaDelta, AdaGrad, Adam, BaseConfigs, MomentumSgd, OptimizerClass, RmsProp, Sgd};
pub use read::{Index, ReadOptions, TensorAt, index};
pub use types::{
    DataType, File, KeyPath, Model, Optimizer, Parameter, Shape, Tensor, column_to_row_major_f32,
    join_key,
};
pub use write::{ModelWriter, Order, WriteOptions};
