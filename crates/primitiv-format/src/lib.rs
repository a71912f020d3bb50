//! # primitiv-format
//!
//! The primitiv File Format v0.1 (MessagePack Shape, Tensor, Parameter, Model, Optimizer): read and write.
//!
//! Status: not implemented yet; this crate is an empty library for now.
#![warn(missing_docs)]
