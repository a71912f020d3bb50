//! # mlformats
//!
//! One crate for the model and parameter files of four ML frameworks. Each
//! format lives in its own crate, re-exported here behind a feature named
//! after it:
//!
//! | feature | module | crate | files |
//! |---|---|---|---|
//! | `cvm` | [`cvm`] | `cvm-params` | CVM-Runtime / Apache TVM `.params` |
//! | `primitiv` | [`primitiv`] | `primitiv-format` | primitiv MessagePack files |
//! | `nnabla` | [`nnabla`] | `nnabla-proto` | NNabla `.protobuf`, `.nntxt`, `.prototxt` |
//! | `nnp` | [`nnp`] | `nnp-archive` | NNabla `.nnp` archives, `.h5` parameters |
//! | `tennis` | [`tennis`] | `bubble-module` | TenniS `.tsm` modules |
//!
//! [`detect`] tells the format of a file from its first bytes and its name,
//! and works whatever features are enabled.
//!
//! ```
//! use mlformats::{detect, Format, Input};
//!
//! // The TVM parameter-dictionary magic, then an empty dictionary.
//! let mut empty = 0xF7E5_8D4F_0504_9CB7u64.to_le_bytes().to_vec();
//! empty.extend_from_slice(&[0u8; 24]);
//! assert_eq!(detect(&empty[..]), Some(Format::CvmParams));
//! assert_eq!(Format::CvmParams.name(), "cvm-params");
//!
//! // Text protobuf is recognised by name or by content.
//! let text = b"network {\n  name: \"net\"\n}\n";
//! assert_eq!(detect(Input::Named { bytes: text, name: "x.nntxt".as_ref() }), Some(Format::NnablaNntxt));
//! assert_eq!(detect(&text[..]), Some(Format::NnablaNntxt));
//! assert_eq!(detect(&b"hello"[..]), None);
//! ```
#![warn(missing_docs)]

mod detect;

pub use detect::{Format, Input, detect};
pub use tensor_core;

/// CVM-Runtime / Apache TVM `.params` (the `cvm-params` crate).
#[cfg(feature = "cvm")]
pub use cvm_params as cvm;

/// primitiv MessagePack files (the `primitiv-format` crate).
#[cfg(feature = "primitiv")]
pub use primitiv_format as primitiv;

/// NNabla binary and text protobuf (the `nnabla-proto` crate).
#[cfg(feature = "nnabla")]
pub use nnabla_proto as nnabla;

/// NNabla `.nnp` archives and `.h5` parameter files (the `nnp-archive` crate).
#[cfg(feature = "nnp")]
pub use nnp_archive as nnp;

/// TenniS `.tsm` modules (the `bubble-module` crate).
#[cfg(feature = "tennis")]
pub use bubble_module as tennis;
