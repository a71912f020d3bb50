//! primitiv in the CLI.
//!
//! Not implemented yet (issue #4): every entry point says so.

use std::path::Path;

use anyhow::{Result, bail};
#[allow(unused_imports)]
use mlformats::Format;
use tensor_core::TensorMap;

use super::Source;
use crate::report::Report;

const NOT_YET: &str = "primitiv support is not implemented yet";

pub fn inspect(_src: &Source) -> Result<Report> {
    bail!(NOT_YET)
}

pub fn tensors(_src: &Source) -> Result<TensorMap<'static>> {
    bail!(NOT_YET)
}

pub fn write(_out: &Path, _tensors: &TensorMap<'_>) -> Result<()> {
    bail!(NOT_YET)
}

pub fn reencode(_src: &Source, _out: &Path) -> Result<()> {
    bail!(NOT_YET)
}
