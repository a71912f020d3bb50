//! # nnp-archive
//!
//! NNabla .nnp archives and .h5 parameter files: read and write.
//!
//! Status: not implemented yet; this crate is an empty library for now.
#![warn(missing_docs)]
