//! The error type of `nnabla-proto`.

/// Everything that can go wrong reading or writing NNabla protobuf files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The binary protobuf is malformed (truncated varint, a length beyond
    /// the buffer, a wrong wire type, invalid UTF-8, nesting too deep …).
    #[error("malformed protobuf at byte {offset}: {message}")]
    Wire {
        /// Byte offset in the input where the problem was found.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// The text format is malformed or names a field the schema does not have.
    #[error("{line}:{column}: {message}")]
    Text {
        /// 1-based line.
        line: usize,
        /// 1-based column (in bytes).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A parameter's shape and data disagree, or its shape is invalid.
    #[error("parameter {name:?}: {message}")]
    Parameter {
        /// The parameter's `variable_name`.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// Loop control (`repeat_info`, `RepeatStart` …) cannot be expanded.
    #[error("network {network:?}: {message}")]
    Loop {
        /// The network's name.
        network: String,
        /// What is wrong.
        message: String,
    },
    /// The embedded schema descriptor could not be loaded (a build problem).
    #[error("the embedded nnabla.proto descriptor is invalid: {0}")]
    Descriptor(String),
    /// A tensor or limit error from `tensor-core`.
    #[error(transparent)]
    Tensor(#[from] tensor_core::Error),
    /// Writing failed.
    #[error("write failed: {0}")]
    Io(#[from] std::io::Error),
    /// Reading the input failed (a source read by offset:
    /// [`crate::index::merge_index`]).
    #[error("read failed: {0}")]
    Read(std::io::Error),
}

impl Error {
    pub(crate) fn wire(offset: usize, message: impl Into<String>) -> Self {
        Error::Wire {
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn param(name: &str, message: impl Into<String>) -> Self {
        Error::Parameter {
            name: name.to_string(),
            message: message.into(),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
