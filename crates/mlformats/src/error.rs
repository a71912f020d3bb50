//! The error type of the `mlformats` library.

use crate::Format;

/// Everything that can go wrong opening, saving or converting a file.
///
/// Errors of the format crates are kept whole (with their byte offsets,
/// member and tensor names); [`Error::Tensor`] says which tensor a problem
/// concerns. The file path is not part of the message: the caller knows
/// which file it opened (the `mlformats` tool prints `error: <path>: <message>`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The path names a directory, not a file.
    #[error("is a directory")]
    IsDirectory,
    /// The file has no bytes.
    #[error("is empty")]
    Empty,
    /// No format recognises the file.
    #[error(
        "not a file of any format mlformats knows (primitiv, NNabla, TenniS, TVM/CVM, safetensors, npz, ONNX)"
    )]
    UnknownFormat,
    /// The output format cannot be told from the file name.
    #[error("cannot tell the output format from the extension of {name:?}; one of: {}", crate::Format::names().join(", "))]
    UnknownExtension {
        /// The file name.
        name: String,
    },
    /// The format's feature is not enabled in this build.
    #[error(
        "{format} files need the `{feature}` feature of the mlformats crate, which this build leaves out"
    )]
    FeatureDisabled {
        /// The format.
        format: Format,
        /// The cargo feature that adds it.
        feature: &'static str,
    },
    /// The target format cannot hold what is asked of it.
    #[error("{0}")]
    Unsupported(String),
    /// A conversion [`crate::convert_index`] cannot do a slice at a time: it
    /// needs the whole model in memory (a graph exported or imported, an
    /// NNabla model kept, `--params`). The same file read whole
    /// ([`crate::Document`], `mlformats convert`) converts.
    #[error("{0}")]
    NeedsWholeModel(String),
    /// A problem with the request itself (a bad glob, an empty selection).
    #[error("{0}")]
    Invalid(String),
    /// A problem with one tensor.
    #[error("tensor {name:?}")]
    Tensor {
        /// The tensor's name.
        name: String,
        /// What is wrong with it.
        #[source]
        source: Box<Error>,
    },
    /// A shape, dtype or limit problem (crate `tensor-core`).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A TVM/CVM `.params` problem (crate `cvm-params`).
    #[cfg(feature = "cvm")]
    #[error(transparent)]
    Cvm(#[from] cvm_params::Error),
    /// A primitiv problem (crate `primitiv-format`).
    #[cfg(feature = "primitiv")]
    #[error(transparent)]
    Primitiv(#[from] primitiv_format::Error),
    /// An NNabla protobuf problem (crate `nnabla-proto`).
    #[cfg(feature = "nnabla")]
    #[error(transparent)]
    Nnabla(#[from] nnabla_proto::Error),
    /// An NNabla `.nnp` or `.h5` problem (crate `nnp-archive`).
    #[cfg(feature = "nnp")]
    #[error(transparent)]
    Nnp(#[from] nnp_archive::Error),
    /// A TenniS module problem (crate `bubble-module`).
    #[cfg(feature = "tennis")]
    #[error(transparent)]
    Tennis(#[from] bubble_module::Error),
    /// A `.safetensors` problem.
    #[cfg(feature = "safetensors")]
    #[error("{0}")]
    Safetensors(String),
    /// An `.npz` problem.
    #[cfg(feature = "npz")]
    #[error("{0}")]
    Npz(String),
}

impl Error {
    /// This error, about the tensor `name`.
    pub fn in_tensor(self, name: impl Into<String>) -> Error {
        Error::Tensor {
            name: name.into(),
            source: Box::new(self),
        }
    }

    /// True when the file could not be read at all (an I/O error, a
    /// directory, a format no reader knows, a format whose feature is off),
    /// as opposed to a file whose reader found it broken: `validate`'s
    /// "trouble" rather than "invalid".
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self,
            Error::Io(_)
                | Error::IsDirectory
                | Error::UnknownFormat
                | Error::FeatureDisabled { .. }
        )
    }

    /// The whole message: this error and its causes, joined by `: `, each
    /// said once (a cause that a message already ends with is not repeated).
    pub fn full_message(&self) -> String {
        chain_message(self)
    }
}

/// An error and its causes joined by `: `, skipping a cause whose text the
/// message so far already ends with (many errors print their cause too).
pub fn chain_message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !s.ends_with(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = c.source();
    }
    s
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds the tensor name to an error.
pub(crate) trait InTensor<T> {
    fn in_tensor(self, name: &str) -> Result<T>;
}

impl<T, E: Into<Error>> InTensor<T> for std::result::Result<T, E> {
    fn in_tensor(self, name: &str) -> Result<T> {
        self.map_err(|e| e.into().in_tensor(name))
    }
}
