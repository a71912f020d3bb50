//! Protobuf text format (`.nntxt`, `.prototxt`): a parser with Python
//! `text_format.Merge` semantics and a printer byte-identical to Python's
//! `text_format`.
//!
//! ```
//! use nnabla_proto::text;
//!
//! // Any style protobuf allows (NNC compact style, lists, comments) …
//! let model = text::parse("network { name: 'net' batch_size: 2  # a comment\n}")?;
//! // … prints exactly as Python's text_format does.
//! assert_eq!(text::print(&model)?, "network {\n  name: \"net\"\n  batch_size: 2\n}\n");
//! # Ok::<(), nnabla_proto::Error>(())
//! ```

mod parse;
mod print;

pub use self::parse::{MAX_DEPTH, merge, parse, parse_all};
pub use self::print::{print, write, write_parameters};
