//! # nnp-archive
//!
//! NNabla `.nnp` archives and `.h5` parameter files: read and write,
//! loadable by the real nnabla 1.39.0.
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
