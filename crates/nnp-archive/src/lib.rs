//! # nnp-archive
//!
//! NNabla `.nnp` archives and `.h5` parameter files, read and written so
//! that the real nnabla 1.39.0 loads what this crate writes (checked with
//! the reference tools; see `tests/reference.rs`).
//!
//! - [`h5`]: `.h5` parameter files, read through the pure-Rust `hdf5-pure`
//!   (wrapped so it can be swapped): every dataset at any depth, in nnabla's
//!   order, `need_grad` of any type, contiguous data borrowed without
//!   copying; written by our own streaming writer ([`h5::StreamWriter`]:
//!   metadata first, then one tensor at a time, 64-byte aligned data,
//!   `need_grad`/`index` as h5py writes them).
//! - [`archive`]: the zip layer: member names are data (never paths; unsafe
//!   ones refused or flagged), sizes checked before inflating, inflation
//!   bounded by the archive's size (one [`tensor_core::InflateBudget`] per
//!   archive, shared with its `.h5` reader), local headers checked against
//!   the central directory, entries sharing bytes refused, ZIP64; stored
//!   members borrowed from the input or the memory map.
//! - [`Nnp`]: the model: members merged with nnabla's rules, networks,
//!   executors and parameters, replace parameters, save in nnabla's layout
//!   (`nnp_version.txt`, `network.nntxt`, `parameter.h5` or
//!   `parameter.protobuf`, stored, no directory entries).
//! - [`NnpStreamWriter`]: the same layout from a model and parameter specs
//!   ([`ParamSpec`]: name, dtype, dims, `need_grad`), each parameter's tensor
//!   given one at a time (make it, write it, drop it).
//!
//! # Entry points
//!
//! The same names as every format crate of the workspace; options are
//! always passed by reference.
//!
//! | to | `.nnp` ([`Nnp`]) | `.h5` ([`h5`]) |
//! |---|---|---|
//! | read bytes (data borrowed) | [`Nnp::parse`]`(bytes)`, [`Nnp::parse_with`]`(bytes, &ReadOptions)` | [`h5::parse`]`(bytes)`, [`h5::parse_with`]`(bytes, &ReadOptions)`, [`h5::from_vec`] |
//! | read a memory map (`'static`, zero-copy) | [`Nnp::from_map`]`(&Arc<MappedFile>, &ReadOptions)` | [`h5::from_map`]`(&map, &ReadOptions)`, [`h5::from_map_range`]`(&map, range, &ReadOptions)` (a member of an archive) |
//! | map a file and read it | [`Nnp::open`]`(path)`, [`Nnp::open_with`]`(path, &ReadOptions)` | [`h5::open`]`(path)`, [`h5::open_with`]`(path, &ReadOptions)` |
//! | read any `Read + Seek` | [`Nnp::from_reader`]`(reader, &ReadOptions)` | — |
//! | locate each dataset's data, not read (a file read by slices) | — | [`h5::locate`]`(len, read, &ReadOptions)` |
//! | write to any `io::Write` | [`Nnp::write`]`(w, &WriteOptions)`, [`write()`]`(w, model, params, optimizers, &WriteOptions)` | [`h5::write`]`(w, params)`, [`h5::write_tensors`] |
//! | write tensor by tensor | [`NnpStreamWriter::new`]`(w, &model, &[ParamSpec], &WriteOptions)`, `.write_param(&tensor)`, `.finish(&optimizers)` | [`h5::StreamWriter::new`]`(w, &[ParamSpec])`, `.write_data(&tensor)`, `.finish()` |
//! | write a file atomically | [`Nnp::save`]`(path, &WriteOptions)` | [`h5::save`]`(path, params)` |
//! | options | [`ReadOptions`] (`limits`, `allow_unsafe_names`, `verify_crc`, `budget`: one [`tensor_core::InflateBudget`] for the archive and its `parameter.h5`), [`WriteOptions`] (`param_format`, `drop_optimizer_states`) | [`ReadOptions`] (`limits`, `budget`); no write options |
//!
//! The zip layer has the same names: [`archive::parse`],
//! [`archive::parse_with`], [`archive::from_map`], [`archive::from_reader`].
//!
//! ```
//! use std::io::Cursor;
//! use nnp_archive::nnabla_proto::text;
//! use nnp_archive::{Nnp, ParamFormat, Parameter, ParameterSet, ReadOptions, WriteOptions};
//! use tensor_core::Tensor;
//!
//! let model = text::parse("network { name: \"net\" batch_size: 1 }\nexecutor { name: \"runtime\" network_name: \"net\" }\n")?;
//! let w = Tensor::from_values([2, 2], &[1f32, 2., 3., 4.])?;
//! let params: ParameterSet = [Parameter::new("fc/W", w, true)].into_iter().collect();
//! let nnp = Nnp::new(model, params)?;
//!
//! for format in [ParamFormat::H5, ParamFormat::Protobuf] {
//!     let bytes = nnp
//!         .write(Cursor::new(Vec::new()), &WriteOptions::default().with_param_format(format))?
//!         .into_inner();
//!     let back = Nnp::parse_with(&bytes, &ReadOptions::default())?;
//!     assert_eq!(back.networks()[0].name, "net");
//!     assert_eq!(back.executors()[0].name, "runtime");
//!     let p = back.parameters().get("fc/W").unwrap();
//!     assert_eq!(&*p.tensor.view::<f32>()?, &[1., 2., 3., 4.]);
//!     assert!(p.need_grad && p.tensor.storage().is_zero_copy());
//!     let names: Vec<&str> = back.members().iter().map(|m| m.name.as_str()).collect();
//!     assert_eq!(names[..2], ["nnp_version.txt", "network.nntxt"]);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod archive;
mod error;
pub mod h5;
mod model;
mod params;

pub use archive::{MemberInfo, MemberKind, ReadOptions};
pub use error::{Error, Result};
pub use model::{Nnp, NnpStreamWriter, OptimizerState, ParamFormat, WriteOptions, write};
pub use nnabla_proto;
pub use params::{ParamSpec, Parameter, ParameterSet};
