//! # nnabla-proto
//!
//! The NNabla protobuf schema: binary .protobuf and text .nntxt/.prototxt, read and write.
//!
//! Status: not implemented yet; this crate is an empty library for now.
#![warn(missing_docs)]
