//! # cvm-params
//!
//! CVM-Runtime / Apache TVM NDArray parameter dictionaries (.params): read and write, zero-copy.
//!
//! Status: not implemented yet; this crate is an empty library for now.
#![warn(missing_docs)]
