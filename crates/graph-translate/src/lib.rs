//! # graph-translate
//!
//! Graph translation between NNabla networks, TenniS modules and ONNX
//! models. Each direction is one declarative operator table: an entry names
//! the source operator, the attributes it reads and its lowering; the tables
//! drive the translation, the per-operator tests and the published support
//! table ([`export::support_table`], checked in as the crate's `SUPPORT.md`).
//! Tensors the exporter adds are named with the reserved prefix
//! [`export::HELPER_PREFIX`] (`mlformats/`).
#![warn(missing_docs)]

pub mod about;
pub mod export;
pub mod import;
