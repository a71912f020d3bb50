//! Protobuf text format (`.nntxt`, `.prototxt`): parser and Python-identical printer.

pub(crate) mod parse;
pub(crate) mod print;
