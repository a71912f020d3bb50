//! The error type of `onnx-format`.

/// Everything that can go wrong reading or writing an ONNX model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a valid `ModelProto` protobuf message.
    #[error("not an ONNX model: {0}")]
    Decode(#[from] prost::DecodeError),
    /// A tensor keeps its data in a file beside the model.
    #[error(
        "tensor {tensor:?} stores its data outside the model (external data, location {location:?}); \
         external data is not supported: save the model with its data inside (onnx.save_model(..., save_as_external_data=False))"
    )]
    ExternalData {
        /// The tensor's name.
        tensor: String,
        /// The `location` entry of its `external_data`, if any.
        location: String,
    },
    /// A tensor element type this crate has no `tensor-core` type for.
    #[error("tensor {tensor:?} has ONNX data type {data_type} ({name}), which is not supported")]
    UnsupportedDataType {
        /// The tensor's name.
        tensor: String,
        /// The `TensorProto.data_type` number.
        data_type: i32,
        /// Its ONNX name.
        name: &'static str,
    },
    /// A tensor element type ONNX has no data type for.
    #[error("tensor {tensor:?}: {dtype} has no ONNX data type")]
    NoOnnxType {
        /// The tensor's name.
        tensor: String,
        /// The element type.
        dtype: tensor_core::DType,
    },
    /// A structural problem: a negative dimension, data of the wrong length, ...
    #[error("{0}")]
    Invalid(String),
    /// A shape, dtype or limit problem (crate `tensor-core`).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A tensor read by slices ([`crate::index`]) has a typed field that
    /// holds another number of values than its shape needs (the message
    /// [`crate::tensor_from_proto`] gives for it).
    #[error("{0}")]
    ValueCount(String),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<tensor_core::wire::Error> for Error {
    fn from(e: tensor_core::wire::Error) -> Self {
        match e {
            tensor_core::wire::Error::Io(e) => Error::Io(e),
            tensor_core::wire::Error::Core(e) => Error::Core(e),
            other => Error::Invalid(other.to_string()),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
