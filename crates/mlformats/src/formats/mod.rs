//! One module per format, the one place for it: each implements
//! [`crate::codec::Codec`], and holds the format's one reader (its
//! `Codec::index`, an `impl FileIndex` block with a `read_<format>` method
//! walking the file through a [`crate::random_access::ReadAt`]) beside its
//! one writer (its `Codec::write`, a [`crate::sink::TensorSink`]). A
//! format is one file, `formats/<format>.rs`, or a folder when it is
//! bigger (`formats/nnp/`: `mod.rs` the codec and writers, `read.rs` the
//! `.nnp` reader, `h5.rs` the `.h5` one, `names.rs`).
//!
//! The machinery the readers share (the index, [`crate::random_access::FileIndex`],
//! and its tensors; the layouts read by slices: contiguous, held, deflated
//! zip members, chunked HDF5 datasets) is in [`crate::random_access`].
//!
//! Adding a format: a module here behind its cargo feature (the list below),
//! its row in `format::TABLE` and its arm in `codec::codec`; see
//! `docs/ADDING_A_FORMAT.md`.

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
