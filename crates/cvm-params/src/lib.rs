//! # cvm-params
//!
//! Read and write the parameter dictionaries (`.params`) of CVM-Runtime and
//! Apache TVM (`save_param_dict` / `load_param_dict`), zero-copy.
//!
//! - [`Params`]: a parser over a byte slice or a memory map ([`Params::open`])
//!   giving borrowed [`tensor_core::Tensor`] views in file order, with lookup
//!   by name; no payload is copied.
//! - [`LazyParams`]: indexes any `Read + Seek` (name table and tensor headers
//!   only) and reads one tensor at a time, for files too large to map.
//! - [`write()`], [`ParamsWriter`], [`save`]: a streaming writer whose
//!   output is byte-identical to TVM 0.27's `save_param_dict`, with both bool
//!   encodings ([`BoolEncoding`]).
//!
//! # Entry points
//!
//! The same names as every format crate of the workspace; options are
//! always passed by reference.
//!
//! | to | call |
//! |---|---|
//! | read bytes (tensor data borrowed) | [`Params::parse`]`(bytes)`, [`Params::parse_with`]`(bytes, &ReadOptions)` |
//! | read a memory map (`'static`, zero-copy) | [`Params::from_map`]`(&Arc<MappedFile>, &ReadOptions)` |
//! | map a file and read it | [`Params::open`]`(path)`, [`Params::open_with`]`(path, &ReadOptions)` |
//! | index any `Read + Seek`, read tensors one at a time | [`LazyParams::from_reader`]`(reader, &ReadOptions)` |
//! | write to any `io::Write` | [`write()`]`(w, items, &WriteOptions)` |
//! | write a file atomically | [`save`]`(path, items, &WriteOptions)` |
//! | stream tensors one at a time | [`ParamsWriter`] |
//! | options | [`ReadOptions`] (`limits`, `lenient_trailing`, `allow_duplicates`), [`WriteOptions`] (`bools`) |
//!
//! Validation follows the format notes (`docs/formats/cvm.md` §5): everything
//! TVM and CVM write is accepted, including zero-size tensors, 0-d scalars,
//! empty names and empty dictionaries (which they wrongly reject on load), and
//! everything they would mis-load is rejected, including truncated payloads (which they
//! silently accept). Trailing bytes and duplicate names are errors by
//! default; see [`ReadOptions`]. Every claimed count and length is checked
//! against the remaining input before anything is allocated.
//!
//! ```
//! # fn main() -> Result<(), cvm_params::Error> {
//! use cvm_params::{Params, ReadOptions, WriteOptions};
//! use tensor_core::Tensor;
//!
//! // The walk-through file of docs/formats/cvm.md §3: {"w": int8[2], "b": int32 scalar}.
//! let w = Tensor::from_values([2], &[1i8, -1])?;
//! let b = Tensor::from_values([], &[258i32])?;
//! let mut file = Vec::new();
//! cvm_params::write(&mut file, [("w", &w), ("b", &b)], &WriteOptions::default())?;
//! assert_eq!(file.len(), 144);
//! assert_eq!(&file[..8], &0xF7E5_8D4F_0504_9CB7u64.to_le_bytes());
//!
//! let params = Params::parse(&file)?;
//! let names: Vec<_> = params.iter().map(|(n, _)| n.into_owned()).collect();
//! assert_eq!(names, ["w", "b"]);
//! assert_eq!(params.get("b").unwrap().view::<i32>()?[0], 258);
//! assert_eq!(params.entries()[0].info().data_offset, 98);
//!
//! // Strict by default: a trailing byte is an error, unless asked to ignore it.
//! file.push(0);
//! let err = Params::parse(&file).unwrap_err();
//! assert!(err.to_string().contains("1 trailing bytes"), "{err}");
//! let lenient = Params::parse_with(&file, &ReadOptions::lenient())?;
//! assert_eq!(lenient.trailing_bytes(), 1);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod dtype;
mod error;
mod read;
mod write;

pub use dtype::{BoolEncoding, DlType, dl_type_of, dtype_of};
pub use error::{Error, Location, Result};
pub use read::{Entry, LazyParams, Params, ReadOptions, TensorInfo};
pub use write::{ParamsWriter, WriteOptions, save, write};

/// The first 8 bytes of every file (`kTVMNDArrayListMagic`), little-endian.
pub const LIST_MAGIC: u64 = 0xF7E5_8D4F_0504_9CB7;
/// The first 8 bytes of every tensor record (`kTVMNDArrayMagic`), little-endian.
pub const TENSOR_MAGIC: u64 = 0xDD5E_40F0_96B4_A13F;
