//! # nnp-archive
//!
//! NNabla `.nnp` archives and `.h5` parameter files: read and write,
//! loadable by the real nnabla 1.39.0.
#![warn(missing_docs)]

mod error;
pub mod h5;
mod params;

pub use error::{Error, Result};
pub use params::{Parameter, ParameterSet};
