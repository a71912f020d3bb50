//! Where a tensor's bytes are in the file: one plain range, or one of the
//! codings each format's module reads (see [`Layout`]).

/// Where a tensor's bytes are ([`super::IndexedTensor`]'s `offset` and
/// `len` say where they start and how many they are once decoded).
#[derive(Debug, Clone, Default)]
pub(crate) enum Layout {
    /// Contiguous little-endian bytes, in the tensor's dtype, at its offset.
    #[default]
    Contiguous,
    /// An ONNX typed field's values, decoded a slice at a time
    /// ([`onnx_format::TypedField`]).
    #[cfg(feature = "onnx")]
    OnnxTyped(Box<onnx_format::TypedField>),
    /// The tensor itself, held in memory (an ONNX `Constant` node's value
    /// that is not one `TensorProto` in the file: `value_float(s)`,
    /// `value_int(s)`; a tensor of a file parsed whole): its storage shared
    /// by every reader of it ([`held`]); the offset is 0.
    Held(tensor_core::Tensor<'static>),
    /// Big-endian bytes, or bytes in a deflated zip member (`deflate.rs`).
    Coded(super::deflate::Coding),
    /// An HDF5 dataset stored otherwise: big-endian, compact or chunked
    /// (`h5chunks.rs`).
    #[cfg(feature = "nnp")]
    H5(std::sync::Arc<super::h5chunks::H5Data>),
}

/// The layout of a tensor held in memory: `t`, its storage made shareable
/// (bytes it owns moved behind an `Arc`, not copied), so that each reader
/// of it clones a handle, not the data.
pub(crate) fn held(t: tensor_core::Tensor<'_>) -> crate::Result<Layout> {
    Ok(Layout::Held(shared(t)?))
}

/// `t` with its bytes in shared storage (bytes it owns moved, not copied,
/// into a buffer clones share), so that handing out a copy is cheap.
pub(crate) fn shared(t: tensor_core::Tensor<'_>) -> crate::Result<tensor_core::Tensor<'static>> {
    let t = t.into_static();
    use tensor_core::{Bytes, MappedFile, Tensor};
    if !matches!(t.storage(), Bytes::Owned(_)) {
        // (`into_static` left nothing borrowed)
        return Ok(t);
    }
    let (dtype, dims, order) = (t.dtype(), t.dims().to_vec(), t.order());
    let bytes = match t.into_storage() {
        Bytes::Owned(v) => {
            let n = v.len();
            Bytes::Mapped(MappedFile::from_vec(v), 0..n)
        }
        other => other,
    };
    Ok(Tensor::with_order(dtype, dims, order, bytes)?)
}
