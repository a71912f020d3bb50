//! # graph-translate
//!
//! Graph translation between NNabla networks, TenniS modules and ONNX
//! models. Each direction is one declarative operator table: an entry names
//! the source operator, the attributes it reads and its lowering; the tables
//! drive the translation, the per-operator tests and the published support
//! table.
#![warn(missing_docs)]

pub mod export;
pub mod import;
