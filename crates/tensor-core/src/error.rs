//! The one error type of `tensor-core`.

use crate::DType;

/// Everything that can go wrong in `tensor-core`.
///
/// Format crates wrap it in their own error enums (`#[from]`), so a caller
/// sees what is wrong here and, from the format crate, where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The element or byte count of a shape does not fit in `usize`.
    #[error("shape {dims:?} of {dtype} overflows: its byte count does not fit in 64 bits")]
    ShapeOverflow {
        /// The dimensions that overflowed.
        dims: Vec<usize>,
        /// The element type whose size was multiplied in.
        dtype: DType,
    },
    /// A limit from [`crate::Limits`] was exceeded.
    #[error(
        "{what} is {value}, over the limit of {limit} (a file you trust: raise it with Limits, the CLI's --trust or Python's trust=True)"
    )]
    LimitExceeded {
        /// What was counted, e.g. "tensor count" or "allocation".
        what: &'static str,
        /// The value the input asked for.
        value: u64,
        /// The limit in force.
        limit: u64,
    },
    /// Inflating compressed input would pass the budget
    /// [`crate::Limits::inflate_budget`] gives the input
    /// ([`crate::InflateBudget`]).
    #[error(
        "{what}: inflating it brings the total to {total} bytes, over the {limit} bytes allowed for a {input}-byte input (a decompression bomb, or a trusted file: raise Limits::max_inflate_ratio, the CLI's --max-inflate-ratio)"
    )]
    InflateLimit {
        /// What was being inflated (a member, a dataset, a chunk).
        what: String,
        /// The total the input would reach.
        total: u64,
        /// The budget in force.
        limit: u64,
        /// The input's size in bytes.
        input: u64,
    },
    /// The allocator refused a buffer sized by the input.
    #[error("cannot allocate {bytes} bytes for {what}: out of memory")]
    OutOfMemory {
        /// What the buffer was for.
        what: String,
        /// The bytes asked for.
        bytes: u64,
    },
    /// The bytes given for a tensor do not match its shape and dtype.
    #[error("tensor data is {actual} bytes but shape {dims:?} of {dtype} needs {expected}")]
    LengthMismatch {
        /// The dimensions of the tensor.
        dims: Vec<usize>,
        /// The element type.
        dtype: DType,
        /// Bytes the shape needs.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// A typed view was asked for with the wrong element type.
    #[error("tensor holds {actual}, not {expected}")]
    DTypeMismatch {
        /// The element type asked for.
        expected: DType,
        /// The element type the tensor holds.
        actual: DType,
    },
    /// A numeric conversion ([`crate::Tensor::to_vec`]) was asked of a
    /// tensor whose elements have no numeric value (characters, complex,
    /// quantized, opaque, `ptr`, `void`).
    #[error("cannot convert {dtype} elements to {target}: {dtype} is not a numeric type")]
    NotNumeric {
        /// The element type the tensor holds.
        dtype: DType,
        /// The Rust type asked for ([`crate::CastTarget::NAME`]).
        target: &'static str,
    },
    /// A shape that a tensor can have but an `ndarray` array cannot (the
    /// product of its non-zero dimensions exceeds `isize::MAX`); only the
    /// `ndarray` feature's conversions give it.
    #[error("shape {dims:?} cannot be an ndarray array: {reason}")]
    ArrayShape {
        /// The dimensions of the tensor.
        dims: Vec<usize>,
        /// What ndarray said.
        reason: String,
    },
    /// [`crate::Tensor::try_as_slice`] cannot lend the elements without
    /// copying (the dtype is right).
    #[error("the {dtype} elements cannot be borrowed without a copy: {reason}; use to_vec or view")]
    NotZeroCopy {
        /// The element type.
        dtype: DType,
        /// Why: unaligned bytes, column-major order or a big-endian host.
        reason: &'static str,
    },
    /// An element type has no fixed byte size usable here (e.g. `ptr`).
    #[error("{0} has no portable byte size")]
    NoByteSize(DType),
    /// An I/O error, with the path it concerns where there is one.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, usually naming a path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with a short context (usually a path).
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
