//! # bubble-module
//!
//! TenniS module files (`.tsm`): read, write, and the graph they hold.
//!
//! A module is a 128-byte header, the module input and output node indices,
//! and a list of nodes. Each node is a *bubble* of parameters (key → packed
//! tensor of zero or more fields; the reserved keys `#op` and `#name` name
//! the operator and the node) plus the indices of its input nodes.
//!
//! [`Module::parse`] reads one from bytes, borrowing every tensor's data
//! (zero-copy, as [`tensor_core::Tensor`]s of the right dtype); it checks
//! every count against the remaining bytes before allocating, rejects
//! truncation, unknown dtypes, out-of-range indices and cycles, and by
//! default also what the C++ library refuses to load.
//!
//! # Entry points
//!
//! The same names as every format crate of the workspace; options are
//! always passed by reference.
//!
//! | to | call |
//! |---|---|
//! | read bytes (tensor data borrowed) | [`Module::parse`]`(bytes)`, [`Module::parse_with`]`(bytes, &ReadOptions)` |
//! | read a memory map (`'static`, zero-copy) | [`Module::from_map`]`(&Arc<MappedFile>, &ReadOptions)` |
//! | map a file and read it | [`Module::open`]`(path)`, [`Module::open_with`]`(path, &ReadOptions)` |
//! | read the structure of a stream, tensors located, not read | [`Module::index`]`(Read + Seek, &ReadOptions)` ([`ModuleIndex`]) |
//! | write to any `io::Write` | [`Module::write`]`(w, &WriteOptions)`, [`Module::to_bytes`]`(&WriteOptions)` |
//! | write a file atomically | [`Module::save`]`(path, &WriteOptions)` |
//! | build a module | [`ModuleBuilder`] (the format needs every node before the first byte: no streaming writer) |
//! | options | [`ReadOptions`] (`limits`, `check_loadable`, `reject_trailing`), [`WriteOptions`] |
//!
//! ```
//! use bubble_module::{Module, ModuleBuilder, NodeKind, WriteOptions};
//! use tensor_core::Tensor;
//!
//! // x:<param> + c:<const f32[3]> -> y:add, as in the py_add_const golden.
//! let mut b = ModuleBuilder::new();
//! let x = b.input("x");
//! let c = b.constant("c", Tensor::from_values([3], &[1f32, 2., 3.])?)?;
//! let y = b.op("add", "y", &[x, c])?;
//! b.output(y)?;
//! let module = b.build()?;
//!
//! let mut bytes = Vec::new();
//! module.write(&mut bytes, &WriteOptions::default())?;
//!
//! let read = Module::parse(&bytes)?;
//! let y = read.node_by_name("y").unwrap();
//! assert_eq!(read.node(y).unwrap().op(), "add");
//! let c = read.node_by_name("c").unwrap();
//! assert_eq!(read.node(c).unwrap().kind(), NodeKind::Const);
//! let value = read.node(c).unwrap().value().unwrap();
//! assert!(value.storage().is_zero_copy());
//! assert_eq!(&*value.view::<f32>()?, &[1., 2., 3.]);
//! assert_eq!(read.named_tensors()[0].0, "c/value");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod dtype;
mod error;
mod graph;
mod index;
mod module;
mod read;
mod typed;
mod write;

pub use dtype::{code_of_dtype, dtype_from_code};
pub use error::{Error, Result};
pub use graph::Constant;
pub use index::{LocatedTensor, ModuleIndex};
pub use module::{
    Header, MODULE_CODE, Module, Node, NodeKind, Packed, Param, char8_str, string_tensor,
};
pub use read::ReadOptions;
pub use write::{ConstantsWriter, ModuleBuilder, NodeId, NodeOrder, ParamOrder, WriteOptions};
