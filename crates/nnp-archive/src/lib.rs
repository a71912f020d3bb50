//! # nnp-archive
//!
//! NNabla `.nnp` archives and `.h5` parameter files, read and written so
//! that the real nnabla 1.39.0 loads what this crate writes (checked with
//! the reference tools; see `tests/reference.rs`).
//!
//! - [`h5`]: `.h5` parameter files through the pure-Rust `hdf5-pure`
//!   (wrapped so it can be swapped): every dataset at any depth, in nnabla's
//!   order, `need_grad` of any type, contiguous data borrowed without copying.
//! - [`archive`]: the zip layer: member names are data (never paths; unsafe
//!   ones refused or flagged), sizes checked before inflating, total
//!   inflation capped, local headers checked against the central directory,
//!   ZIP64; stored members borrowed from the input or the memory map.
//! - [`Nnp`]: the model: members merged with nnabla's rules, networks,
//!   executors and parameters, replace parameters, save in nnabla's layout
//!   (`nnp_version.txt`, `network.nntxt`, `parameter.h5` or
//!   `parameter.protobuf`, stored, no directory entries).
//!
//! ```
//! use std::io::Cursor;
//! use nnp_archive::nnabla_proto::parse_text;
//! use nnp_archive::{Nnp, ParamFormat, Parameter, ParameterSet, ReadOptions, WriteOptions};
//! use tensor_core::Tensor;
//!
//! let model = parse_text("network { name: \"net\" batch_size: 1 }\nexecutor { name: \"runtime\" network_name: \"net\" }\n")?;
//! let w = Tensor::from_values([2, 2], &[1f32, 2., 3., 4.])?;
//! let params: ParameterSet = [Parameter::new("fc/W", w, true)].into_iter().collect();
//! let nnp = Nnp::new(model, params)?;
//!
//! for format in [ParamFormat::H5, ParamFormat::Protobuf] {
//!     let bytes = nnp
//!         .write(Cursor::new(Vec::new()), &WriteOptions::default().with_param_format(format))?
//!         .into_inner();
//!     let back = Nnp::from_slice(&bytes, &ReadOptions::default())?;
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
pub use model::{Nnp, OptimizerState, ParamFormat, WriteOptions, write_nnp};
pub use nnabla_proto;
pub use params::{Parameter, ParameterSet};
