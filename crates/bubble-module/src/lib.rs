//! # bubble-module
//!
//! TenniS module files (.tsm): read, write, and the graph they hold.
//!
//! Status: not implemented yet; this crate is an empty library for now.
#![warn(missing_docs)]
