//! Where a tensor's bytes are in the file: one plain range, or one of the
//! codings each format's module reads (see [`Layout`]).

/// Where a tensor's bytes are ([`super::IndexedTensor`]'s `offset` and
/// `len` say where they start and how many they are once decoded).
#[derive(Debug, Clone, Default)]
pub(super) enum Layout {
    /// Contiguous little-endian bytes, in the tensor's dtype, at its offset.
    #[default]
    Contiguous,
    /// An ONNX typed field's values, decoded a slice at a time
    /// ([`onnx_format::TypedField`]).
    #[cfg(feature = "onnx")]
    OnnxTyped(Box<onnx_format::TypedField>),
    /// The bytes themselves, held (an ONNX `Constant` node's value that
    /// is not one `TensorProto` in the file: `value_float(s)`,
    /// `value_int(s)`); the offset is 0.
    Held(std::sync::Arc<[u8]>),
    /// Big-endian bytes, or bytes in a deflated zip member (`deflate.rs`).
    Coded(super::deflate::Coding),
    /// An HDF5 dataset stored otherwise: big-endian, compact or chunked
    /// (`h5chunks.rs`).
    #[cfg(feature = "nnp")]
    H5(std::sync::Arc<super::h5chunks::H5Data>),
}
