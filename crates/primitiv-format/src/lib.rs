//! # primitiv-format
//!
//! Read and write the primitiv File Format v0.1 byte-compatibly with the
//! C++ library (primitiv 0.4): Shape, Tensor, Parameter, Model and
//! Optimizer files, each a run of top-level MessagePack objects.
#![warn(missing_docs)]

mod error;
pub mod optim;
pub mod order;
pub mod read;
mod types;
pub mod write;

pub use error::{Error, Result};
pub use optim::{AdaDelta, AdaGrad, Adam, BaseConfigs, MomentumSgd, OptimizerClass, RmsProp, Sgd};
pub use read::{ReadOptions, load, read, read_as, read_mapped, read_with};
pub use types::{
    DataType, File, KeyPath, Model, Optimizer, Parameter, Shape, Tensor, column_to_row_major_f32,
    join_key,
};
pub use write::{ModelWriter, Order, WriteOptions};
