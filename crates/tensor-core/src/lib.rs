//! # tensor-core
//!
//! The vocabulary every `mlformats` format crate shares:
//!
//! - [`DType`]: every element type of primitiv, NNabla, TenniS and TVM/CVM,
//!   with its size and the name the `inspect --json` contract uses;
//! - [`Shape`] with overflow-checked element and byte counts, and
//!   [`MemoryOrder`] (primitiv stores column-major);
//! - [`Tensor`]: bytes that are owned, borrowed from the input or shared
//!   from a memory map ([`Bytes`], [`MappedFile`]), with typed views that
//!   borrow when aligned on a little-endian host and copy otherwise
//!   ([`Tensor::view`]), a zero-copy slice when possible
//!   ([`Tensor::as_slice`]), and numeric conversion of any numeric dtype to
//!   any [`CastTarget`] in row-major order ([`Tensor::to_vec`]);
//! - [`Limits`]: bounds on what a hostile file can make a reader do;
//! - [`TensorMap`]: an ordered name → tensor collection, the common currency
//!   of the CLI and of conversions;
//! - [`io::write_atomic`]: replace a file through a temporary and a rename.
//!
//! With the `ndarray` feature, `Tensor::to_ndarray` converts to an
//! `ndarray::ArrayD` and `Tensor::as_array_view` views the bytes as an
//! `ndarray::ArrayViewD` without copying; the crate re-exports `ndarray`.
//!
//! ```
//! use tensor_core::{DType, MemoryOrder, Tensor, TensorMap};
//!
//! // Bytes as a file stores them: a 2x3 f32 matrix, column-major.
//! let col: Vec<u8> = [1f32, 4., 2., 5., 3., 6.].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let t = Tensor::with_order(DType::F32, [2, 3], MemoryOrder::ColumnMajor, &col[..])?;
//! assert!(t.storage().is_zero_copy());
//! let rows = t.to_row_major()?;
//! assert_eq!(&*rows.view::<f32>()?, &[1., 2., 3., 4., 5., 6.]);
//! // or, converting and transposing in one step:
//! assert_eq!(t.to_vec::<f64>()?, vec![1., 2., 3., 4., 5., 6.]);
//!
//! let mut map = TensorMap::new();
//! map.insert("w", rows);
//! assert_eq!(map.get("w").unwrap().dtype().name(), "f32");
//! # Ok::<(), tensor_core::Error>(())
//! ```

#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod alloc;
mod cast;
mod collection;
mod dtype;
mod error;
pub mod float8;
pub mod graph;
pub mod io;
mod limits;
mod shape;
pub mod stats;
mod storage;
mod tensor;
pub mod wire;

pub use alloc::{InflateBudget, try_reserve, try_with_capacity, try_zeroed};
pub use cast::CastTarget;
pub use collection::TensorMap;
pub use dtype::{ALL_DTYPES, DType, SumKind};
pub use error::{Error, Result};
pub use limits::{
    DEFAULT_INFLATE_RATIO, DEFAULT_MAX_NODES, DEFAULT_MIN_INFLATE_BUDGET, Limits, ReadOptions,
};
pub use shape::{MemoryOrder, Shape, checked_byte_len, checked_numel};
pub use storage::{Bytes, MappedFile};
pub use tensor::{Element, Tensor, cast_le, column_to_row_major};
pub use wire::ReadAt;

pub use half;
#[cfg(feature = "ndarray")]
pub use ndarray;
