//! One module per format: each implements [`crate::codec::Codec`].

#[cfg(feature = "cvm")]
pub(crate) mod cvm;
#[cfg(feature = "nnabla")]
pub(crate) mod nnabla;
#[cfg(feature = "nnp")]
pub(crate) mod nnabla_family;
#[cfg(feature = "nnp")]
pub(crate) mod nnp;
#[cfg(feature = "npz")]
pub(crate) mod npz;
#[cfg(feature = "onnx")]
pub(crate) mod onnx;
#[cfg(feature = "primitiv")]
pub(crate) mod primitiv;
#[cfg(feature = "safetensors")]
pub(crate) mod safetensors;
#[cfg(feature = "tennis")]
pub(crate) mod tennis;
