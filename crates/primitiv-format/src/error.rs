//! The error type of `primitiv-format`.

use crate::DataType;

/// Everything that can go wrong reading or writing a primitiv file.
///
/// Reader errors carry the byte offset (from the start of the input) of the
/// MessagePack object that is wrong; [`Error::In`] adds which parameter,
/// stat or config it belongs to. Each variant documents the C++ library's
/// message for the same condition.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended inside an object (library: `MessagePack: Stream reached EOF.`).
    #[error(
        "unexpected end of file at byte {offset} reading {what}: needs {needed} bytes, {available} remain (MessagePack stream reached EOF)"
    )]
    Eof {
        /// Where the object starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes the object needs from `offset` (its header, or header plus claimed payload).
        needed: u64,
        /// Bytes left from `offset`.
        available: u64,
    },
    /// An object has the wrong MessagePack type (library: `Next object does not have a correct type. expected: ce, observed: cc`
    /// or `Next object does not have the 'bin' type.`).
    #[error(
        "{what} at byte {offset} has the wrong MessagePack type: expected {expected}, observed marker 0x{found:02x}"
    )]
    WrongType {
        /// Where the object starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// The accepted encoding(s), e.g. `uint32 (0xce)`.
        expected: &'static str,
        /// The marker byte found.
        found: u8,
    },
    /// The version header is not 0.1 (library: `File version mismatched. required: 0.1, observed: 0.2`).
    #[error("file version mismatched at byte {offset}: required 0.1, observed {major}.{minor}")]
    Version {
        /// Offset of the version (0).
        offset: u64,
        /// ver_major as stored.
        major: u32,
        /// ver_minor as stored.
        minor: u32,
    },
    /// The data_type is not the one asked for (library: `Data type mismatched. required: 300, observed: 200`).
    #[error(
        "data type mismatched at byte {offset}: required {expected} (0x{:x}), observed 0x{found:x}{}",
        *expected as u32, DataType::from_code(*found).map(|d| format!(" ({d})")).unwrap_or_default()
    )]
    DataTypeMismatch {
        /// Offset of the data_type field.
        offset: u64,
        /// The type asked for.
        expected: DataType,
        /// The code in the file.
        found: u32,
    },
    /// The data_type code is none of the five (only when auto-detecting).
    #[error(
        "unknown data type 0x{found:x} at byte {offset} (known: 0x0 Shape, 0x100 Tensor, 0x200 Parameter, 0x300 Model, 0x400 Optimizer)"
    )]
    UnknownDataType {
        /// Offset of the data_type field.
        offset: u64,
        /// The code in the file.
        found: u32,
    },
    /// More than 8 dims (library: `Exceeds dimension depth limit at Shape::Shape(). depth: 0 > MAX_DEPTH: 8`).
    #[error("shape at byte {offset} has {depth} dims, exceeding the dimension depth limit of 8")]
    TooManyDims {
        /// Offset of the dims array.
        offset: u64,
        /// The number of dims the array claims.
        depth: u64,
    },
    /// A dim or the batch is 0 (library: `Invalid shape: [2,0]x1`).
    #[error("invalid shape at byte {offset}: {shape} (dimensions and batch must be at least 1)")]
    InvalidShape {
        /// Offset of the shape.
        offset: u64,
        /// The shape in the library's `[d0,d1]xB` form.
        shape: String,
    },
    /// The data length is not shape size × 4 (library: `Shape and data length mismatched. shape.size() * sizeof(float): 24 != data.size(): 20`).
    #[error(
        "shape and data length mismatched at byte {offset}: shape {shape} needs size * sizeof(float) = {expected} bytes, data has {actual}"
    )]
    DataLength {
        /// Offset of the bin object.
        offset: u64,
        /// The shape in the library's `[d0,d1]xB` form.
        shape: String,
        /// Bytes the shape needs.
        expected: u64,
        /// Bytes the bin holds.
        actual: u64,
    },
    /// A parameter's value has batch ≠ 1 (library: `The batch size of the parameter should be 1. shape: [2,3]x2`).
    #[error("the batch size of a parameter should be 1: value at byte {offset} has shape {shape}")]
    ParameterBatch {
        /// Offset of the value tensor.
        offset: u64,
        /// The shape in the library's `[d0,d1]xB` form.
        shape: String,
    },
    /// A model entry with the key `[]` (library: `Model does not have a parameter with name: ''`).
    #[error(
        "model entry at byte {offset} has an empty key path []; no parameter can have an empty name"
    )]
    EmptyKey {
        /// Offset of the key array.
        offset: u64,
    },
    /// A count in the file is over a [`tensor_core::Limits`] bound.
    #[error("at byte {offset}: {source}")]
    Limit {
        /// Offset of the count.
        offset: u64,
        /// The limit that was exceeded.
        #[source]
        source: tensor_core::Error,
    },
    /// Context for an inner error: which parameter, stat or config it concerns.
    #[error("in {context}: {inner}")]
    In {
        /// E.g. `parameter 'enc.w'` or `stat 'Adam.m1'`.
        context: String,
        /// The error itself.
        inner: Box<Error>,
    },
    /// Something cannot be written in the primitiv format.
    #[error("cannot write {what}: {why}")]
    Unwritable {
        /// What was being written (a tensor or key name).
        what: String,
        /// Why it is not representable.
        why: String,
    },
    /// The streaming model writer was given keys out of byte-wise order, twice, or a wrong count.
    #[error("model writer: {0}")]
    ModelOrder(String),
    /// An error from `tensor-core` (shape overflow, length mismatch, dtype).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// An I/O error while writing or opening.
    #[error("{context}: {source}")]
    Io {
        /// What was being done (usually a path).
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps `self` with a context such as `parameter 'enc.w'`.
    pub fn context(self, context: impl Into<String>) -> Error {
        Error::In {
            context: context.into(),
            inner: Box::new(self),
        }
    }

    /// The innermost error, without [`Error::In`] wrappers.
    pub fn root(&self) -> &Error {
        match self {
            Error::In { inner, .. } => inner.root(),
            other => other,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
